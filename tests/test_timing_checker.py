"""The independent timing checker finds zero violations in bulksim's command logs for every
traffic pattern, preset and controller setting, and does find violations that are planted."""

from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from timing_checker import Violation, check_log

PRESETS = [
    "DDR3_2Gb_x8_1066",
    "DDR3_4Gb_x8_1600",
    "DDR4_8Gb_x8_2400",
    "DDR5_16Gb_x8_4800",
    "DDR5_16Gb_x4_6400",
]

# (name, generator options, config overrides)
PATTERNS = [
    ("stream", dict(pattern="stream"), []),
    ("random", dict(pattern="random"), []),
    ("mixed-read-write", dict(pattern="random", write_fraction=0.4, interval=2), []),
    ("page-copy", dict(pattern="pagecopy", interval=1), []),
    ("refresh-heavy", dict(pattern="random", write_fraction=0.3, interval=3), ["dram.timing.nREFI=1200"]),
    ("multi-rank", dict(pattern="random", write_fraction=0.3), ["dram.ranks=4"]),
    ("multi-channel", dict(pattern="random", write_fraction=0.3), ["dram.channels=2", "dram.ranks=2"]),
    (
        "closed-page",
        dict(pattern="random", write_fraction=0.3, interval=1),
        ["controller.page_policy=closed"],
    ),
    # Closed page with frequent refresh: many PREAs (before each REF) soon after RDA/WRA.
    (
        "closed-page-write-heavy-refresh",
        dict(pattern="random", write_fraction=0.8, interval=1),
        ["controller.page_policy=closed", "dram.timing.nREFI=1200"],
    ),
    (
        "closed-page-stream-refresh",
        dict(pattern="stream", write_fraction=0.5, interval=1),
        ["controller.page_policy=closed", "dram.timing.nREFI=1200"],
    ),
    ("fcfs", dict(pattern="pagecopy"), ["controller.scheduler=fcfs", "dram.ranks=2"]),
    ("short-rows", dict(pattern="pagecopy", interval=1), ["dram.columns=512"]),
    (
        "row-hit-cap-xor",
        dict(pattern="stream", write_fraction=0.5),
        ["controller.row_hit_cap=4", "controller.xor_bank=true"],
    ),
]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("name,gen,overrides", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_zero_violations(preset, name, gen, overrides, make_trace, run_logged):
    trace = make_trace(requests=3000, seed=3, **gen)
    stats, spec, log = run_logged(trace, preset, overrides)
    assert stats["reads"] + stats["writes"] == 3000
    violations = check_log(spec, str(log))
    assert violations == [], "\n".join(map(str, violations[:10]))
    with open(log) as f:
        commands = sum(1 for _ in f) - 1
    assert commands == sum(stats["commands"].values())
    if "refresh" in name:
        assert stats["refreshes"] > 0


def _write_log(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["cycle", "command", "channel", "rank", "bankgroup", "bank", "subarray", "row", "column"])
        for cycle, cmd, rank, bg, bank, row, col in rows:
            w.writerow([cycle, cmd, 0, rank, bg, bank, 0, row, col])


@pytest.fixture
def ddr4():
    import bulksim

    return bulksim.spec("DDR4_8Gb_x8_2400", overrides=["dram.ranks=2"])


def _violations(tmp_path, spec, rows):
    path = tmp_path / "planted.csv"
    _write_log(path, rows)
    return [v.rule for v in check_log(spec, str(path))]


def _tweaked(spec, **timing):
    """A copy of `spec` with some timing parameters changed (to make one gate the binding one)."""
    out = copy.deepcopy(spec)
    out["timing"].update(timing)
    return out


def _gates(t):
    """Planted cases, one per constraint family: (rule, timing tweaks, rows, gate). The last row
    is the probe; `gate` is its earliest legal cycle by the JEDEC definition, written here from
    the parameters. Rows are (cycle, command, rank, bankgroup, bank, row, column)."""
    rcd, ras, rp, cl, cwl, bl = t["nRCD"], t["nRAS"], t["nRP"], t["nCL"], t["nCWL"], t["nBL"]
    wr_end = cwl + bl  # last write data beat, from the WR command
    act_a = (0, "ACT", 0, 0, 0, 1, -1)
    act_other_group = (4, "ACT", 0, 1, 0, 1, -1)
    act_same_group = (10, "ACT", 0, 0, 1, 1, -1)
    opened = [act_a, act_other_group, act_same_group]
    return [
        ("tRCD", {}, [act_a, (None, "RD", 0, 0, 0, 1, 0)], rcd),
        ("tRAS", {}, [act_a, (None, "PRE", 0, 0, 0, -1, -1)], ras),
        ("tRAS", {}, [act_a, (None, "PREA", 0, -1, -1, -1, -1)], ras),
        ("tRP", {}, [act_a, (ras, "PRE", 0, 0, 0, -1, -1), (None, "ACT", 0, 0, 0, 2, -1)], ras + rp),
        # tRC made longer than tRAS + tRP so that it alone binds.
        (
            "tRC",
            {"nRC": ras + rp + 7},
            [act_a, (ras, "PRE", 0, 0, 0, -1, -1), (None, "ACT", 0, 0, 0, 2, -1)],
            ras + rp + 7,
        ),
        ("tRRD", {}, [act_a, (None, "ACT", 0, 1, 0, 1, -1)], t["nRRD_S"]),
        ("tRRD", {}, [act_a, (None, "ACT", 0, 0, 1, 1, -1)], t["nRRD_L"]),
        (
            "tFAW",
            {},
            [(i * t["nRRD_S"], "ACT", 0, i, 0, 1, -1) for i in range(4)] + [(None, "ACT", 0, 0, 1, 1, -1)],
            t["nFAW"],
        ),
        ("tCCD", {}, [*opened, (100, "RD", 0, 0, 0, 1, 0), (None, "RD", 0, 0, 1, 1, 0)], 100 + t["nCCD_L"]),
        ("tCCD", {}, [*opened, (100, "WR", 0, 0, 0, 1, 0), (None, "WR", 0, 0, 1, 1, 0)], 100 + t["nCCD_L"]),
        (
            "tWTR",
            {},
            [*opened, (100, "WR", 0, 0, 0, 1, 0), (None, "RD", 0, 1, 0, 1, 0)],
            100 + wr_end + t["nWTR_S"],
        ),
        (
            "tWTR",
            {},
            [*opened, (100, "WR", 0, 0, 0, 1, 0), (None, "RD", 0, 0, 1, 1, 0)],
            100 + wr_end + t["nWTR_L"],
        ),
        # Read data leaves the bus, two cycles of turnaround, then the write's data.
        (
            "read-to-write turnaround",
            {},
            [*opened, (100, "RD", 0, 0, 0, 1, 0), (None, "WR", 0, 1, 0, 1, 0)],
            100 + cl + bl + 2 - cwl,
        ),
        ("tRTP", {}, [act_a, (100, "RD", 0, 0, 0, 1, 0), (None, "PRE", 0, 0, 0, -1, -1)], 100 + t["nRTP"]),
        ("tRTP", {}, [act_a, (100, "RD", 0, 0, 0, 1, 0), (None, "PREA", 0, -1, -1, -1, -1)], 100 + t["nRTP"]),
        # A PREA may not cut an auto-precharge's read-to-precharge or write recovery short.
        (
            "tRTP",
            {},
            [act_a, (100, "RDA", 0, 0, 0, 1, 0), (None, "PREA", 0, -1, -1, -1, -1)],
            100 + t["nRTP"],
        ),
        (
            "tWR",
            {},
            [act_a, (100, "WR", 0, 0, 0, 1, 0), (None, "PRE", 0, 0, 0, -1, -1)],
            100 + wr_end + t["nWR"],
        ),
        (
            "tWR",
            {},
            [act_a, (100, "WRA", 0, 0, 0, 1, 0), (None, "PREA", 0, -1, -1, -1, -1)],
            100 + wr_end + t["nWR"],
        ),
        # Auto-precharge then ACT: the recovery, then tRP.
        (
            "tRP",
            {},
            [act_a, (100, "RDA", 0, 0, 0, 1, 0), (None, "ACT", 0, 0, 0, 2, -1)],
            100 + t["nRTP"] + rp,
        ),
        (
            "tRP",
            {},
            [act_a, (100, "WRA", 0, 0, 0, 1, 0), (None, "ACT", 0, 0, 0, 2, -1)],
            100 + wr_end + t["nWR"] + rp,
        ),
        # The data bus: a burst on another rank waits for this one plus the rank switch.
        (
            "data bus",
            {},
            [act_a, (1, "ACT", 1, 0, 0, 1, -1), (100, "RD", 0, 0, 0, 1, 0), (None, "RD", 1, 0, 0, 1, 0)],
            100 + bl + t["nRTRS"],
        ),
        ("tRFC", {}, [(0, "REF", 0, -1, -1, -1, -1), (None, "ACT", 0, 0, 0, 1, -1)], t["nRFC"]),
        ("tRFC", {}, [(0, "REF", 0, -1, -1, -1, -1), (None, "REF", 0, -1, -1, -1, -1)], t["nRFC"]),
        (
            "tRP before REF",
            {"nRC": ras},  # so that tRP, not tRC, binds
            [act_a, (ras, "PRE", 0, 0, 0, -1, -1), (None, "REF", 0, -1, -1, -1, -1)],
            ras + rp,
        ),
        (
            "tRC before REF",
            {},
            [act_a, (ras, "PRE", 0, 0, 0, -1, -1), (None, "REF", 0, -1, -1, -1, -1)],
            t["nRC"],
        ),
    ]


def _gate_ids():
    import bulksim

    t = bulksim.spec("DDR4_8Gb_x8_2400")["timing"]
    return [f"{i}-{rule}-{rows[-1][1]}" for i, (rule, _, rows, _) in enumerate(_gates(t))]


@pytest.mark.parametrize("case", range(len(_gate_ids())), ids=_gate_ids())
def test_planted_violation_is_caught_one_cycle_early_and_not_at_the_gate(tmp_path, ddr4, case):
    rule, tweaks, rows, gate = _gates(ddr4["timing"])[case]
    spec = _tweaked(ddr4, **tweaks)
    probe = rows[-1]
    early = _violations(tmp_path, spec, [*rows[:-1], (gate - 1, *probe[1:])])
    assert any(v.startswith(rule) for v in early), f"{rule} not caught: {early}"
    assert _violations(tmp_path, spec, [*rows[:-1], (gate, *probe[1:])]) == []


def test_planted_state_and_command_bus_violations(tmp_path, ddr4):
    cases = {
        "state: RD": [(0, "RD", 0, 0, 0, 1, 0)],
        "state: ACT to an open bank": [(0, "ACT", 0, 0, 0, 1, -1), (100, "ACT", 0, 0, 0, 2, -1)],
        "state: PRE to a closed bank": [(0, "PRE", 0, 0, 0, -1, -1)],
        "state: REF with a bank open": [(0, "ACT", 0, 0, 0, 1, -1), (100, "REF", 0, -1, -1, -1, -1)],
        "command bus": [(0, "ACT", 0, 0, 0, 1, -1), (0, "ACT", 1, 0, 0, 1, -1)],
    }
    for rule, rows in cases.items():
        found = _violations(tmp_path, ddr4, rows)
        assert any(v.startswith(rule) for v in found), f"{rule} not caught: {found}"


def _refresh_log(tmp_path, spec, ref_cycles, end=None):
    """A one-rank log holding only REFs at `ref_cycles` and an ACT/PRE pair whose PRE, at `end`,
    is the log's last command. Returns the refresh violations (cycle, rule)."""
    rows = [(c, "REF", 0, -1, -1, -1, -1) for c in ref_cycles]
    if end is not None:
        rows += [(end - spec["timing"]["nRAS"], "ACT", 0, 0, 0, 1, -1), (end, "PRE", 0, 0, 0, -1, -1)]
    path = tmp_path / "refresh.csv"
    _write_log(path, rows)
    return [(v.cycle, v.rule) for v in check_log(spec, str(path)) if v.rule.startswith("refresh")]


@pytest.fixture
def one_rank():
    import bulksim

    return bulksim.spec("DDR4_8Gb_x8_2400")


def test_refresh_at_the_jedec_rate_passes_and_at_half_the_rate_fails(tmp_path, one_rank):
    refi = one_rank["timing"]["nREFI"]
    assert _refresh_log(tmp_path, one_rank, [k * refi + 5 for k in range(1, 41)], end=41 * refi) == []
    # One REF per 2 x tREFI: no gap exceeds 9 x tREFI, but by the 16th due point only 7 REFs
    # (5 cycles after 2, 4, ..., 14 x tREFI) have issued: 9 owed.
    half = _refresh_log(tmp_path, one_rank, [2 * k * refi + 5 for k in range(1, 21)], end=41 * refi)
    assert half and half[0][0] == 16 * refi, half
    assert all(rule.startswith("refresh postponed") for _, rule in half)


def test_refresh_owed_from_the_start_and_at_the_end_of_the_log(tmp_path, one_rank):
    refi = one_rank["timing"]["nREFI"]
    # No REF at all over 20 x tREFI: 9 owed at the 9th due point.
    none = _refresh_log(tmp_path, one_rank, [], end=20 * refi)
    assert [(c, rule.split(":")[0]) for c, rule in none] == [(9 * refi, "refresh postponed")], none
    # The first REF may come as late as 9 x tREFI (8 postponed), not a cycle later.
    on_time = [k * refi for k in range(10, 20)]
    assert _refresh_log(tmp_path, one_rank, [9 * refi, *on_time], end=20 * refi) == []
    late = _refresh_log(tmp_path, one_rank, [9 * refi + 1, *on_time], end=20 * refi)
    assert [c for c, _ in late] == [9 * refi], late
    # At the end: REFs stop after 10 x tREFI; a log ending 9 x tREFI after the last is legal,
    # one cycle more is not (the gap) and, from the 19th due point, 9 are owed.
    regular = [k * refi for k in range(1, 11)]
    assert _refresh_log(tmp_path, one_rank, regular, end=19 * refi) == []
    ended = _refresh_log(tmp_path, one_rank, regular, end=19 * refi + 1)
    assert sorted(rule.split(":")[0] for _, rule in ended) == ["refresh gap", "refresh postponed"], ended


def test_pulled_in_refreshes_earn_at_most_eight_credits_and_keep_the_gap(tmp_path, one_rank):
    t = one_rank["timing"]
    refi, rfc = t["nREFI"], t["nRFC"]
    # Twelve REFs pulled in at the start count as 8; then one per 2 x tREFI. The balance after
    # due point j is 8 + floor((j - 1) / 2) - j, below -8 first at j = 32 (uncapped: 40).
    burst = [100 + i * rfc for i in range(12)]
    half = [2 * k * refi + 5 for k in range(1, 25)]
    found = _refresh_log(tmp_path, one_rank, burst + half, end=49 * refi)
    assert found and found[0][0] == 32 * refi and found[0][1].startswith("refresh postponed"), found
    # Eight pulled in cover the next 8 due points, yet the next REF is still due within
    # 9 x tREFI of the last.
    eight = [100 + i * rfc for i in range(8)]
    assert _refresh_log(tmp_path, one_rank, [*eight, eight[-1] + 9 * refi]) == []
    gap = _refresh_log(tmp_path, one_rank, [*eight, eight[-1] + 9 * refi + 1])
    assert [rule.split(":")[0] for _, rule in gap] == ["refresh gap"], gap
    # At most 16 REFs within 2 x tREFI.
    assert _refresh_log(tmp_path, one_rank, [100 + i * rfc for i in range(16)]) == []
    seventeen = _refresh_log(tmp_path, one_rank, [100 + i * rfc for i in range(17)])
    assert [rule.split(":")[0] for _, rule in seventeen] == ["refresh pulled in"], seventeen


def test_rowclone_fpm_sequences(tmp_path, ddr4):
    t = ddr4["timing"]
    ras, rp = t["nRAS"], t["nRP"]
    fpm = [
        (0, "ACT", 0, 0, 0, 1024, -1),
        (ras, "ACT2", 0, 0, 0, 1030, -1),
        (2 * ras, "PRE", 0, 0, 0, -1, -1),
        (2 * ras + rp, "ACT", 0, 0, 0, 1030, -1),
    ]
    assert _violations(tmp_path, ddr4, fpm) == []
    early = [(0, "ACT", 0, 0, 0, 1024, -1), (ras - 1, "ACT2", 0, 0, 0, 1030, -1)]
    assert any(v.startswith("tRAS: ACT2") for v in _violations(tmp_path, ddr4, early))
    other_subarray = [(0, "ACT", 0, 0, 0, 1024, -1), (ras, "ACT2", 0, 0, 0, 1536, -1)]
    assert any(v.startswith("state: ACT2") for v in _violations(tmp_path, ddr4, other_subarray))
    closed = [(0, "ACT2", 0, 0, 0, 1030, -1)]
    assert any(v.startswith("state: ACT2") for v in _violations(tmp_path, ddr4, closed))
    early_pre = [
        (0, "ACT", 0, 0, 0, 1024, -1),
        (ras, "ACT2", 0, 0, 0, 1030, -1),
        (2 * ras - 1, "PRE", 0, 0, 0, -1, -1),
    ]
    assert any(v.startswith("tRAS") for v in _violations(tmp_path, ddr4, early_pre))
    act2_rrd = [
        (0, "ACT", 0, 0, 0, 1024, -1),
        (ras, "ACT", 0, 1, 0, 7, -1),
        (ras + 1, "ACT2", 0, 0, 0, 1030, -1),
    ]
    assert any(v.startswith("tRRD") for v in _violations(tmp_path, ddr4, act2_rrd))


def _psm_log(t, lines=8, dst=(1, 0)):
    """A PSM copy (ACT both rows, TRR/TRW pairs one burst apart, PRE both) built from the
    paper's description and the timing values."""
    bg, bank = dst
    act_dst = t["nRRD_S"]
    rows = [(0, "ACT", 0, 0, 0, 7, -1), (act_dst, "ACT", 0, bg, bank, 9, -1)]
    trr = max(t["nRCD"], act_dst + t["nRCD"] - 1)
    spacing = max(t["nCCD_L"], t["nBL"])
    for i in range(lines):
        rows += [(trr, "TRR", 0, 0, 0, 7, 8 * i), (trr + 1, "TRW", 0, bg, bank, 9, 8 * i)]
        trr += spacing
    last = trr - spacing
    pre_src = max(t["nRAS"], last + t["nRTP"])
    pre_dst = max(act_dst + t["nRAS"], last + 1 + t["nCWL"] + t["nBL"] + t["nWR"])
    rows += sorted([(pre_src, "PRE", 0, 0, 0, -1, -1), (pre_dst, "PRE", 0, bg, bank, -1, -1)])
    return rows


def test_rowclone_psm_sequences(tmp_path, ddr4):
    t = ddr4["timing"]
    legal = _psm_log(t)
    assert _violations(tmp_path, ddr4, legal) == []
    # A TRR one cycle early (with its TRW) breaks the internal-bus spacing.
    early = [r if i not in (4, 5) else (r[0] - 1, *r[1:]) for i, r in enumerate(legal)]
    assert any(v.startswith("tCCD") for v in _violations(tmp_path, ddr4, early))
    # A TRW must follow its TRR in the next cycle, to another bank.
    split = [r if i != 3 else (r[0] + 1, *r[1:]) for i, r in enumerate(legal)]
    assert any(v.startswith("TRANSFER") for v in _violations(tmp_path, ddr4, split))
    same_bank = [(r[0], r[1], r[2], 0, 0, 7, r[6]) if r[1] == "TRW" else r for r in legal]
    assert any(v.startswith("TRANSFER") for v in _violations(tmp_path, ddr4, same_bank))
    # Precharging the destination before write recovery ends.
    early_pre = legal[:-1] + [(legal[-1][0] - 1, *legal[-1][1:])]
    assert any(v.startswith("tWR: TRW") for v in _violations(tmp_path, ddr4, early_pre))


def _bulk_trace(path, records: int = 1500, seed: int = 5):
    """Ordinary reads and writes with copies and initializations mixed in: whole rows in one
    subarray (FPM), rows and lines across banks (PSM), within a bank across subarrays (PSM via
    the temporary row), partial and misaligned ranges (channel), zero and non-zero inits."""
    import random

    rng = random.Random(seed)
    row = 8192  # DDR4 rank row; 16 banks under RoBaRaCoCh: address = (row * 16 + bank) * 8192
    lines = []
    for i in range(records):
        cycle = i * 4
        if i % 50 == 25:
            bank, r = rng.randrange(16), rng.randrange(1, 400)
            src = (r * 16 + bank) * row
            kind = (i // 50) % 6
            if kind == 0:
                dst, size = ((r + 1) * 16 + bank) * row, row
            elif kind == 1:
                dst, size = ((r + 2) * 16 + (bank + 5) % 16) * row + 128, row - 256
            elif kind == 2:
                dst, size = ((r + 700) * 16 + bank) * row, 2 * row
            elif kind == 3:
                dst, size = ((r + 3) * 16 + bank) * row + 13, 3000
            if kind <= 3:
                lines.append(f"{cycle},C,{src:#x},{dst:#x},{size}")
            else:
                lines.append(f"{cycle},I,{src:#x},{row * (kind - 2)},{0 if kind == 4 else 0x5A}")
        else:
            addr = rng.randrange(1 << 26) // 64 * 64
            lines.append(f"{cycle},{'W' if rng.random() < 0.3 else 'R'},{addr:#x}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("mechanism", ["channel", "rowclone"])
@pytest.mark.parametrize(
    "extra", [[], ["dram.ranks=2", "dram.timing.nREFI=1500"]], ids=["one-rank", "refresh"]
)
def test_zero_violations_with_bulk_operations(tmp_path, run_logged, mechanism, extra):
    trace = _bulk_trace(tmp_path / "bulk.trace")
    overrides = [f"bulk.mechanism={mechanism}", *extra]
    stats, spec, log = run_logged(trace, "DDR4_8Gb_x8_2400", overrides)
    bulk = stats["bulk"]
    assert bulk["copies"] + bulk["inits"] == 30
    if mechanism == "rowclone":
        assert bulk["fpm_bytes"] > 0 and bulk["psm_bytes"] > 0 and stats["commands"]["ACT2"] > 0
        assert stats["commands"]["TRR"] == stats["commands"]["TRW"] > 0
    else:
        assert bulk["in_dram_bytes"] == 0 and stats["commands"]["TRR"] == 0
    if extra:
        assert stats["refreshes"] > 0
    violations = check_log(spec, str(log))
    assert violations == [], "\n".join(map(str, violations[:10]))


# Refresh policies (issue #15): every policy, granularity and temperature, PCM without refresh,
# and the write drains, each replayed by the CLI on a random mix spanning many tREFI.
REFRESH_CASES = [
    ("staggered-channel", "DDR4_8Gb_x8_1600", ["dram.ranks=4"]),
    (
        "staggered-system",
        "DDR4_32Gb_x8_1600",
        ["dram.channels=2", "dram.ranks=2", "controller.refresh.stagger=system"],
    ),
    ("simultaneous", "DDR4_16Gb_x8_1600", ["dram.ranks=4", "controller.refresh.policy=simultaneous"]),
    ("fgr2x", "DDR4_32Gb_x8_1600", ["dram.ranks=2", "controller.refresh.granularity=2"]),
    (
        "fgr2x-no-overhead",
        "DDR4_32Gb_x8_1600",
        ["dram.ranks=2", "controller.refresh.granularity=2", "controller.refresh.fgr_overhead=false"],
    ),
    ("fgr4x", "DDR4_8Gb_x8_1600", ["dram.ranks=2", "controller.refresh.granularity=4"]),
    (
        "fgr4x-no-overhead-simultaneous",
        "DDR4_16Gb_x8_1600",
        [
            "dram.ranks=2",
            "controller.refresh.policy=simultaneous",
            "controller.refresh.granularity=4",
            "controller.refresh.fgr_overhead=false",
        ],
    ),
    ("extended", "DDR4_32Gb_x8_1600", ["dram.ranks=2", "dram.temperature=extended"]),
    (
        "extended-fgr4x",
        "DDR4_16Gb_x8_1600",
        ["dram.ranks=2", "dram.temperature=extended", "controller.refresh.granularity=4"],
    ),
    ("none", "DDR4_8Gb_x8_1600", ["dram.ranks=2", "controller.refresh=none"]),
    ("pcm-none", "PCM_x8_1600", ["dram.ranks=2", "controller.refresh=none"]),
    (
        "rank-drains",
        "DDR4_32Gb_x8_1600",
        ["dram.ranks=4", "controller.write_drain.scope=rank", "controller.write_drain.coordinate=true"],
    ),
    (
        "rank-drains-system-stagger",
        "DDR4_32Gb_x8_1600",
        [
            "dram.channels=2",
            "dram.ranks=4",
            "controller.refresh.stagger=system",
            "controller.write_drain.scope=rank",
        ],
    ),
    (
        "equal-priority",
        "DDR4_16Gb_x8_1600",
        ["dram.ranks=2", "controller.write_drain.policy=equal_priority"],
    ),
]


def _resolved(preset: str, overrides: list[str]) -> tuple[dict, dict]:
    """The run's resolved part and config (what the checker takes)."""
    import tomllib

    import bulksim
    from bulksim import api

    spec = bulksim.spec(preset, overrides=overrides)
    config = tomllib.loads(api.resolve_config(preset=preset, overrides=overrides))
    return spec, config


def _cli_run(tmp_path, trace, preset: str, overrides: list[str]) -> tuple[dict, Path]:
    """`bulksim run --trace ... --command-log ...`: the stats and the log."""
    log, out = tmp_path / "cmds.csv", tmp_path / "stats.json"
    sets = [a for s in overrides for a in ("--set", s)]
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "run", "--trace", trace, "--preset", preset]
        + ["--command-log", log, "--json", out, "--quiet", *sets],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), log


def _refs_by_rank(log) -> dict[tuple[int, int], list[int]]:
    refs: dict[tuple[int, int], list[int]] = {}
    with open(log, newline="") as f:
        for row in csv.DictReader(f):
            if row["command"] == "REF":
                refs.setdefault((int(row["channel"]), int(row["rank"])), []).append(int(row["cycle"]))
    return refs


@pytest.mark.parametrize("name,preset,overrides", REFRESH_CASES, ids=[c[0] for c in REFRESH_CASES])
def test_zero_violations_under_every_refresh_policy(tmp_path, make_trace, name, preset, overrides):
    # 3000 requests 40 cycles apart: about 20 x tREFI (6240 cycles at DDR4-1600, normal).
    trace = make_trace(requests=3000, seed=7, pattern="random", write_fraction=0.3, interval=40)
    stats, log = _cli_run(tmp_path, trace, preset, overrides)
    spec, config = _resolved(preset, overrides)
    assert stats["reads"] + stats["writes"] == 3000
    violations = check_log(spec, str(log), config)
    assert violations == [], "\n".join(map(str, violations[:10]))

    o, t = spec["organisation"], spec["timing"]
    refs = _refs_by_rank(log)
    assert sum(map(len, refs.values())) == stats["refreshes"]
    if "none" in name:
        assert refs == {} and stats["refreshes"] == 0
        return
    # Every rank refreshed at the resolved interval (FGR, temperature): one REF per tREFI
    # from the first due point (at most tREFI) to the end of the run.
    end = stats["mem_cycles"]
    refi = t["nREFI"]
    granularity = config["controller"]["refresh"]["granularity"]
    one_x = _one_x_refi(preset, overrides)
    assert refi * granularity in range(one_x - granularity, one_x + 1), (refi, granularity, one_x)
    assert len(refs) == o["channels"] * o["ranks"]
    for rank, cycles in refs.items():
        assert abs(len(cycles) - end // refi) <= 1, (rank, len(cycles), end // refi)
    # Simultaneous REFs coincide (consecutive command cycles of a channel); staggered ones
    # never overlap while N x tRFC <= tREFI over the ranks the stagger spreads.
    firsts = sorted((cycles[0], rank) for rank, cycles in refs.items())
    if "simultaneous" in name:
        assert firsts[-1][0] - firsts[0][0] < 2 * o["ranks"], firsts
    else:
        spread = o["ranks"] * (o["channels"] if "system" in name else 1)
        assert spread * t["nRFC"] <= refi
        starts = sorted(
            c for rank, cycles in refs.items() for c in cycles if "system" in name or rank[0] == 0
        )
        assert all(b - a >= t["nRFC"] for a, b in zip(starts, starts[1:], strict=False)), (
            "staggered REFs overlap"
        )


REFRESH_SCHEMES = {
    "elastic": ["controller.refresh.scheme=elastic"],
    "pausing-8": ["controller.refresh.scheme=pausing"],
    "pausing-4": ["controller.refresh.scheme=pausing", "controller.refresh.pause_granularity=4"],
    "pcd": ["controller.refresh.scheme=pcd"],
    "adaptive": ["controller.refresh.scheme=adaptive", "controller.refresh.ar_reads=0"],
}


@pytest.mark.parametrize("scheme", list(REFRESH_SCHEMES))
def test_zero_violations_under_every_refresh_scheme(tmp_path, make_trace, scheme):
    # A busier mix than above (20 cycles apart) on two ranks at extended temperature: REFs
    # are postponed, fragmented and, for adaptive (any waiting read switches it), at 4x.
    trace = make_trace(requests=4000, seed=7, pattern="random", write_fraction=0.3, interval=20)
    preset = "DDR4_32Gb_x8_1600"
    overrides = ["dram.ranks=2", "dram.temperature=extended", *REFRESH_SCHEMES[scheme]]
    stats, log = _cli_run(tmp_path, trace, preset, overrides)
    spec, config = _resolved(preset, overrides)
    violations = check_log(spec, str(log), config)
    assert violations == [], "\n".join(map(str, violations[:10]))
    assert stats["refreshes"] > 0
    if scheme == "adaptive":
        assert stats["refresh"]["adaptive_fine_windows"] > 0
        # The device really switched: some rank's ACT follows its REF by the 4x tRFC, sooner
        # than a 1x REF allows.
        last_ref, gaps = {}, []
        with open(log, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["channel"], row["rank"])
                if row["command"] == "REF":
                    last_ref[key] = int(row["cycle"])
                elif row["command"] == "ACT" and key in last_ref:
                    gaps.append(int(row["cycle"]) - last_ref.pop(key))
        assert min(gaps) == spec["timing"]["nRFC4"] < spec["timing"]["nRFC"]


def _one_x_refi(preset: str, overrides: list[str]) -> int:
    """tREFI of the part at the run's temperature, at 1x (granularity overrides removed)."""
    import bulksim

    kept = [s for s in overrides if not s.startswith("controller.refresh")]
    return bulksim.spec(preset, overrides=kept)["timing"]["nREFI"]


def _rows(log) -> tuple[list[str], list[list[str]]]:
    with open(log, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        return header, list(reader)


def _write_rows(path, header, rows) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


PLANTED_TRFC = [
    ("1x", "DDR4_8Gb_x8_1600", []),
    ("fgr2x", "DDR4_32Gb_x8_1600", ["controller.refresh.granularity=2"]),
    (
        "fgr2x-no-overhead",
        "DDR4_32Gb_x8_1600",
        ["controller.refresh.granularity=2", "controller.refresh.fgr_overhead=false"],
    ),
    ("fgr4x", "DDR4_16Gb_x8_1600", ["controller.refresh.granularity=4"]),
    ("extended-fgr4x", "DDR4_8Gb_x8_1600", ["dram.temperature=extended", "controller.refresh.granularity=4"]),
]


@pytest.mark.parametrize("name,preset,overrides", PLANTED_TRFC, ids=[c[0] for c in PLANTED_TRFC])
def test_a_planted_short_trfc_is_named(tmp_path, make_trace, name, preset, overrides):
    """A real log of one rank: its first REF followed by an ACT (the next command of the
    channel) gets that ACT moved to 1 cycle short of the tRFC in use; the checker names it,
    and nothing else, and accepts the ACT moved to exactly tRFC."""
    trace = make_trace(requests=1500, seed=11, pattern="random", write_fraction=0.3, interval=40)
    _, log = _cli_run(tmp_path, trace, preset, overrides)
    spec, config = _resolved(preset, overrides)
    rfc = spec["timing"]["nRFC"]
    header, rows = _rows(log)
    col = {k: i for i, k in enumerate(header)}
    i = next(
        i
        for i, r in enumerate(rows[:-1])
        if r[col["command"]] == "REF" and rows[i + 1][col["command"]] == "ACT"
    )
    ref_cycle = int(rows[i][col["cycle"]])
    assert int(rows[i + 1][col["cycle"]]) >= ref_cycle + rfc

    def moved_to(cycle: int) -> list[Violation]:
        edited = [list(r) for r in rows]
        edited[i + 1][col["cycle"]] = str(cycle)
        path = tmp_path / f"planted-{cycle}.csv"
        _write_rows(path, header, edited)
        return check_log(spec, str(path), config)

    assert moved_to(ref_cycle + rfc) == []
    short = moved_to(ref_cycle + rfc - 1)
    line = i + 3  # the header is line 1, rows[0] line 2
    assert [(v.line, v.command, v.rule) for v in short] == [
        (line, "ACT", f"tRFC: REF at {ref_cycle} (nRFC = {rfc} cycles)")
    ], short


def test_the_checker_takes_the_trfc_of_the_granularity_in_use(tmp_path, make_trace):
    """A 4x log replayed against the 1x part breaks the 1x tRFC (350 ns) after its REFs, which
    take the 4x one (160 ns, 8 Gb): the checker must be given the run's resolved spec."""
    preset, overrides = "DDR4_8Gb_x8_1600", ["controller.refresh.granularity=4"]
    trace = make_trace(requests=1500, seed=11, pattern="random", write_fraction=0.3, interval=10)
    _, log = _cli_run(tmp_path, trace, preset, overrides)
    spec, config = _resolved(preset, overrides)
    assert check_log(spec, str(log), config) == []
    one_x, _ = _resolved(preset, [])
    assert (one_x["timing"]["nRFC"], spec["timing"]["nRFC"]) == (280, 128)
    wrong = [v.rule for v in check_log(one_x, str(log))]
    assert wrong and any(r.startswith("tRFC") for r in wrong), wrong


def test_ref_on_a_part_without_refresh_or_with_refresh_off_is_caught(tmp_path):
    rows = [(0, "ACT", 0, 0, 0, 1, -1), (100, "PRE", 0, 0, 0, -1, -1), (200, "REF", 0, -1, -1, -1, -1)]
    pcm, pcm_config = _resolved("PCM_x8_1600", ["controller.refresh=none"])
    assert _violations(tmp_path, pcm, rows[:2]) == []
    found = _violations(tmp_path, pcm, rows)
    assert found == ["state: REF to PCM_x8_1600, which has no refresh command"], found
    ddr4, off = _resolved("DDR4_8Gb_x8_1600", ["controller.refresh=none"])
    path = tmp_path / "off.csv"
    _write_log(path, rows)
    assert [v.rule for v in check_log(ddr4, str(path), off)] == [
        'refresh off: REF issued under controller.refresh = "none"'
    ]
    # With refresh off nothing is owed, however long the log; with it on, 9 are owed by 9 x tREFI.
    refi = ddr4["timing"]["nREFI"]
    long = [(0, "ACT", 0, 0, 0, 1, -1), (20 * refi, "PRE", 0, 0, 0, -1, -1)]
    _write_log(path, long)
    assert check_log(ddr4, str(path), off) == []
    assert [v.cycle for v in check_log(ddr4, str(path))] == [9 * refi]


@pytest.mark.parametrize("granularity", [2, 4])
def test_fgr_refresh_rate_limits_scale_with_the_granularity(tmp_path, granularity):
    """Under FGR g x, 8g REFs may be postponed (tREFI is the FGR interval), two surrounding
    REFs may be (8g + 1) x tREFI apart, and 16g may issue within 2 x the 1x tREFI."""
    g = granularity
    spec, config = _resolved("DDR4_8Gb_x8_1600", [f"controller.refresh.granularity={g}"])
    refi, rfc = spec["timing"]["nREFI"], spec["timing"]["nRFC"]

    def found(ref_cycles, end=None):
        rows = [(c, "REF", 0, -1, -1, -1, -1) for c in ref_cycles]
        if end is not None:
            rows += [(end - spec["timing"]["nRAS"], "ACT", 0, 0, 0, 1, -1), (end, "PRE", 0, 0, 0, -1, -1)]
        path = tmp_path / "fgr.csv"
        _write_log(path, rows)
        return [(v.cycle, v.rule.split(":")[0]) for v in check_log(spec, str(path), config)]

    # No REF: 8g + 1 owed first at the (8g + 1)-th due point.
    assert found([], end=40 * g * refi) == [((8 * g + 1) * refi, "refresh postponed")]
    # The first REF as late as (8g + 1) x tREFI (8g owed), then one per tREFI, is legal; a
    # cycle later, 8g + 1 are owed.
    first = (8 * g + 1) * refi
    regular = [k * refi for k in range(8 * g + 2, 12 * g)]
    assert found([first, *regular], end=12 * g * refi) == []
    assert found([first + 1, *regular], end=12 * g * refi) == [(first, "refresh postponed")]
    # The gap: (8g + 1) x tREFI after the last REF, not a cycle more.
    eight = [100 + i * rfc for i in range(8 * g)]
    last = eight[-1] + (8 * g + 1) * refi
    assert found([*eight, last]) == []
    assert found([*eight, last + 1]) == [(last + 1, "refresh gap")]
    # The burst: 16g within 2 x the 1x tREFI, not one more.
    assert found([100 + i * rfc for i in range(16 * g)]) == []
    assert [rule for _, rule in found([100 + i * rfc for i in range(16 * g + 1)])] == ["refresh pulled in"]


def test_checker_cli_takes_the_resolved_config(tmp_path, make_trace):
    """`timing_checker.py SPEC LOG [CONFIG]`: a run with refresh off owes no REFs when the
    checker is given the run's config (`bulksim config show`), and owes them without it."""
    preset, overrides = "DDR4_8Gb_x8_1600", ["controller.refresh=none"]
    trace = make_trace(requests=3000, seed=7, pattern="random", write_fraction=0.3, interval=40)
    _, log = _cli_run(tmp_path, trace, preset, overrides)
    sets = [a for s in overrides for a in ("--set", s)]
    spec_path, config_path = tmp_path / "spec.json", tmp_path / "config.toml"
    for args, path in [
        (["spec", "show", preset, "--json"], spec_path),
        (["config", "show", "--preset", preset], config_path),
    ]:
        r = subprocess.run(
            [sys.executable, "-m", "bulksim.cli", *args, *sets], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr
        path.write_text(r.stdout)
    checker = str(Path(__file__).parent / "timing_checker.py")
    with_config = subprocess.run(
        [sys.executable, checker, spec_path, log, config_path], capture_output=True, text=True
    )
    assert (with_config.returncode, with_config.stdout) == (0, "0 violations\n"), with_config.stderr
    without = subprocess.run([sys.executable, checker, spec_path, log], capture_output=True, text=True)
    assert without.returncode == 1 and "refresh postponed" in without.stdout, without.stdout


# CMMP's Table I parts (issue 17 item 1): no refresh; PCM closes a row by writing back its dirty
# blocks, tRP each, and runs closed page in Table I.
CMMP_RUNS = [
    ("dram-open", "DRAM_CMMP_1000", ["dram.ranks=8"]),
    ("pcm-open", "PCM_CMMP_400", ["dram.ranks=16"]),
    ("pcm-closed", "PCM_CMMP_400", ["dram.ranks=16", "controller.page_policy=closed"]),
]


@pytest.mark.parametrize("preset,overrides", [r[1:] for r in CMMP_RUNS], ids=[r[0] for r in CMMP_RUNS])
@pytest.mark.parametrize("pattern", ["stream", "random"])
def test_cmmp_parts_zero_violations(preset, overrides, pattern, make_trace, run_logged):
    overrides = [*overrides, "controller.refresh=none"]
    trace = make_trace(requests=3000, seed=3, pattern=pattern, write_fraction=0.4, interval=2)
    stats, spec, log = run_logged(trace, preset, overrides)
    spec_, config = _resolved(preset, overrides)
    assert spec_ == spec and spec["precharge_per_dirty_block"] == preset.startswith("PCM")
    violations = check_log(spec, str(log), config)
    assert violations == [], "\n".join(map(str, violations[:10]))
    with open(log) as f:
        assert sum(1 for _ in f) - 1 == sum(stats["commands"].values())
    assert stats["writes"] > 0


@pytest.fixture
def pcm():
    import bulksim

    return bulksim.spec("PCM_CMMP_400", overrides=["controller.refresh=none"])


def test_pcm_precharge_waits_trp_per_dirty_block(tmp_path, pcm):
    """ACT, three WRs to two blocks (block 0 twice), PRE: the next ACT waits 2 x tRP (150 ns
    = 60 cycles each) after the PRE; one cycle earlier is a tRP violation. A row only read
    closes at once: its ACT may follow the PRE in the next cycle."""
    t = pcm["timing"]
    assert pcm["precharge_per_dirty_block"] and t["nRP"] == 60
    rcd, ccd, recovery = t["nRCD"], max(t["nCCD_S"], t["nBL"]), t["nCWL"] + t["nBL"] + t["nWR"]
    writes = [rcd, rcd + ccd, rcd + 2 * ccd]
    pre = writes[-1] + recovery
    rows = [(0, "ACT", 0, 0, 0, 5, -1)]
    rows += [(c, "WR", 0, 0, 0, 5, col) for c, col in zip(writes, [0, 8, 0], strict=True)]
    rows.append((pre, "PRE", 0, 0, 0, -1, -1))
    gate = pre + 2 * 60
    assert _violations(tmp_path, pcm, rows + [(gate, "ACT", 0, 0, 0, 6, -1)]) == []
    early = _violations(tmp_path, pcm, rows + [(gate - 1, "ACT", 0, 0, 0, 6, -1)])
    assert early == [f"tRP: precharge started at {pre}, 2 dirty blocks"], early
    # The same on DRAM_CMMP_1000 waits one tRP whatever was written.
    import bulksim

    dram = bulksim.spec("DRAM_CMMP_1000", overrides=["controller.refresh=none"])
    assert not dram["precharge_per_dirty_block"]
    # Clean: ACT, RD, PRE (after tRTP), ACT in the next cycle (tRC = tRAS long past).
    read_pre = max(t["nRAS"], rcd + t["nRTP"])
    clean = [
        (0, "ACT", 0, 0, 0, 5, -1),
        (rcd, "RD", 0, 0, 0, 5, 0),
        (read_pre, "PRE", 0, 0, 0, -1, -1),
        (read_pre + 1, "ACT", 0, 0, 0, 6, -1),
    ]
    assert _violations(tmp_path, pcm, clean) == []
    # A WRA's own block is dirty: its bank's next ACT waits one tRP after the auto-precharge.
    wra = [(0, "ACT", 0, 0, 1, 5, -1), (rcd, "WRA", 0, 0, 1, 5, 16)]
    start = rcd + recovery
    assert _violations(tmp_path, pcm, wra + [(start + 60, "ACT", 0, 0, 1, 7, -1)]) == []
    assert _violations(tmp_path, pcm, wra + [(start + 59, "ACT", 0, 0, 1, 7, -1)]) == [
        f"tRP: precharge started at {start}, 1 dirty blocks"
    ]


def test_closed_page_logs_may_not_leave_rows_open(tmp_path, pcm):
    """Under a closed page policy every access auto-precharges: a RD is a violation."""
    rows = [(0, "ACT", 0, 0, 0, 5, -1), (pcm["timing"]["nRCD"], "RD", 0, 0, 0, 5, 0)]
    path = tmp_path / "closed.csv"
    _write_log(path, rows)
    closed = {"controller": {"page_policy": "closed", "refresh": "none"}}
    assert [v.rule for v in check_log(pcm, str(path), closed)] == [
        "closed page: RD leaves the row open (expected RDA)"
    ]
    assert check_log(pcm, str(path), {"controller": {"refresh": "none"}}) == []
    # A device's own policy wins over the controller's.
    per_device = {
        "controller": {"page_policy": "open", "refresh": "none"},
        "memory": {"device": [{"name": "dram"}, {"name": "pcm", "page_policy": "closed"}]},
    }
    assert len(check_log(pcm, str(path), per_device, device="pcm")) == 1
    assert check_log(pcm, str(path), per_device, device="dram") == []


# DDR5 (issue 36): a preset's logs under every refresh setting that applies to it, and one
# planted violation per rule DDR5 adds. Elastic and pausing postpone REFs up to DDR3/DDR4's
# limit and are refused on DDR5 until its own limit is modelled (tests/it/ddr5.rs).
DDR5 = "DDR5_16Gb_x8_4800"
DDR5_REFRESH = {
    "staggered-2-ranks": ["dram.ranks=2"],
    "simultaneous-2-ranks": ["dram.ranks=2", "controller.refresh.policy=simultaneous"],
    "fgr-2x": ["controller.refresh.granularity=2"],
    "extended-temperature": ["dram.temperature=extended"],
    "pcd": ["dram.ranks=2", "controller.refresh.scheme=pcd"],
    "closed-page": ["dram.ranks=2", "controller.page_policy=closed"],
}


@pytest.mark.parametrize("name", list(DDR5_REFRESH))
def test_ddr5_zero_violations_under_each_refresh_setting(tmp_path, make_trace, name):
    # 4000 requests 20 cycles apart at 4800: about 8 x tREFI (9360 cycles).
    trace = make_trace(requests=4000, seed=7, pattern="random", write_fraction=0.3, interval=20)
    overrides = DDR5_REFRESH[name]
    stats, log = _cli_run(tmp_path, trace, DDR5, overrides)
    spec, config = _resolved(DDR5, overrides)
    assert spec["standard"] == "DDR5"
    violations = check_log(spec, str(log), config)
    assert violations == [], "\n".join(map(str, violations[:10]))
    assert stats["reads"] + stats["writes"] == 4000
    assert stats["refreshes"] > 0
    # The log holds two-cycle commands one cycle apart nowhere, and some exactly two apart
    # (the bus is really held, and really reused at the first free cycle).
    rows = _rows(log)[1]
    gaps = {
        int(b[0]) - int(a[0])
        for a, b in zip(rows, rows[1:], strict=False)
        if a[1] in ("ACT", "RD", "WR", "RDA", "WRA")
    }
    assert 1 not in gaps and 2 in gaps


@pytest.fixture
def ddr5():
    import bulksim

    return bulksim.spec(DDR5, overrides=["dram.ranks=2"])


def _ddr5_gates(t):
    """Planted cases for DDR5's own rules: (rule, rows, gate), as in `_gates`."""
    act_a, act_same_group = (0, "ACT", 0, 0, 0, 1, -1), (20, "ACT", 0, 0, 1, 1, -1)
    return [
        # Two-cycle commands: another rank's command (no other rule) waits a cycle more.
        ("command bus", [act_a, (None, "ACT", 1, 0, 0, 1, -1)], 2),
        ("command bus", [act_a, (None, "PREA", 1, -1, -1, -1, -1)], 2),
        ("command bus", [act_a, (100, "RD", 0, 0, 0, 1, 0), (None, "REF", 1, -1, -1, -1, -1)], 102),
        ("command bus", [act_a, (100, "WR", 0, 0, 0, 1, 0), (None, "ACT", 1, 0, 0, 1, -1)], 102),
        ("command bus", [act_a, (100, "RDA", 0, 0, 0, 1, 0), (None, "ACT", 1, 0, 0, 1, -1)], 102),
        # Writes within a bank group: tCCD_L_WR (48 at 4800), not tCCD_L (12).
        (
            "tCCD_L_WR",
            [act_a, act_same_group, (100, "WR", 0, 0, 0, 1, 0), (None, "WR", 0, 0, 1, 1, 0)],
            100 + t["nCCD_L_WR"],
        ),
        (
            "tCCD_L_WR",
            [act_a, act_same_group, (100, "WRA", 0, 0, 0, 1, 0), (None, "WR", 0, 0, 1, 1, 0)],
            100 + t["nCCD_L_WR"],
        ),
    ]


@pytest.mark.parametrize("case", range(7))
def test_ddr5_planted_violation_is_caught_one_cycle_early_and_not_at_the_gate(tmp_path, ddr5, case):
    rule, rows, gate = _ddr5_gates(ddr5["timing"])[case]
    assert len(_ddr5_gates(ddr5["timing"])) == 7
    probe = rows[-1]
    early = _violations(tmp_path, ddr5, [*rows[:-1], (gate - 1, *probe[1:])])
    assert any(v.startswith(rule) for v in early), f"{rule} not caught: {early}"
    assert _violations(tmp_path, ddr5, [*rows[:-1], (gate, *probe[1:])]) == []


def test_ddr5_rules_do_not_apply_to_ddr4(tmp_path, ddr4):
    """The same sequences are legal on DDR4 (one-cycle commands, tCCD_L between writes)."""
    t = ddr4["timing"]
    act_a, act_same_group = (0, "ACT", 0, 0, 0, 1, -1), (20, "ACT", 0, 0, 1, 1, -1)
    assert _violations(tmp_path, ddr4, [act_a, (1, "ACT", 1, 0, 0, 1, -1)]) == []
    wr, wr2 = (100, "WR", 0, 0, 0, 1, 0), (100 + t["nCCD_L"], "WR", 0, 0, 1, 1, 0)
    assert _violations(tmp_path, ddr4, [act_a, act_same_group, wr, wr2]) == []


@pytest.mark.parametrize("mechanism", ["channel", "rowclone"])
def test_ddr5_zero_violations_with_bulk_operations(tmp_path, run_logged, mechanism):
    """RowClone on DDR5: FPM, PSM (TRR then TRW in the next cycle, after two-cycle commands)
    and channel copies leave a legal log."""
    trace = _bulk_trace(tmp_path / "bulk.trace")
    stats, spec, log = run_logged(trace, DDR5, [f"bulk.mechanism={mechanism}"])
    assert stats["bulk"]["copies"] + stats["bulk"]["inits"] == 30
    if mechanism == "rowclone":
        assert stats["bulk"]["fpm_bytes"] > 0 and stats["commands"]["ACT2"] > 0
        assert stats["commands"]["TRR"] == stats["commands"]["TRW"] > 0
    violations = check_log(spec, str(log))
    assert violations == [], "\n".join(map(str, violations[:10]))


# DDR5 same-bank refresh (REFsb, issue 36 items 2 and 4): the logs of same-bank runs pass;
# one planted violation per REFsb gate fails one cycle early and passes at the gate; the
# rounds and the rate of REFsb per bank index are checked.
SAME_BANK = ["controller.refresh.granularity=2", "controller.refresh.bank_scope=same_bank"]
SAME_BANK_RUNS = {
    "round-robin-2-ranks": ["dram.ranks=2"],
    "bank-idle-aware": ["controller.refresh.same_bank_order=bank_idle_aware"],
    "simultaneous-2-ranks": ["dram.ranks=2", "controller.refresh.policy=simultaneous"],
    "closed-page": ["controller.page_policy=closed"],
    "system-stagger-2-channels": ["dram.channels=2", "dram.ranks=2", "controller.refresh.stagger=system"],
}


@pytest.mark.parametrize("name", list(SAME_BANK_RUNS))
def test_ddr5_same_bank_refresh_logs_pass_and_refresh_every_bank_index(tmp_path, make_trace, name):
    trace = make_trace(requests=4000, seed=7, pattern="random", write_fraction=0.3, interval=20)
    overrides = SAME_BANK + SAME_BANK_RUNS[name]
    stats, log = _cli_run(tmp_path, trace, DDR5, overrides)
    spec, config = _resolved(DDR5, overrides)
    violations = check_log(spec, str(log), config)
    assert violations == [], "\n".join(map(str, violations[:10]))
    assert stats["refreshes"] == 0
    rows = _rows(log)[1]
    refsb = [r for r in rows if r[1] == "REFsb"]
    assert stats["commands"]["REFsb"] == len(refsb)
    # One REFsb per tREFI2 / 4 = 1170 cycles per rank (tREFI2 = 1.95 us at 0.4167 ns), so
    # over the log each rank has end / 1170 of them, give or take the one in progress.
    assert spec["timing"]["nREFI"] == 4680
    end = max(int(r[0]) for r in rows)
    o = spec["organisation"]
    for channel, rank in [(c, r) for c in range(o["channels"]) for r in range(o["ranks"])]:
        mine = [int(r[5]) for r in refsb if (r[2], r[3]) == (str(channel), str(rank))]
        assert abs(len(mine) - end // 1170) <= 1, (channel, rank, len(mine), end)
        assert max(mine.count(b) for b in range(4)) - min(mine.count(b) for b in range(4)) <= 1


SAME_BANK_CONFIG = {"controller": {"refresh": {"granularity": 2, "bank_scope": "same_bank"}}}


def _same_bank_violations(tmp_path, spec, rows):
    path = tmp_path / "planted.csv"
    _write_log(path, rows)
    return [v.rule for v in check_log(spec, str(path), SAME_BANK_CONFIG)]


def _refsb(cycle, bank, rank=0):
    return (cycle, "REFsb", rank, -1, bank, -1, -1)


def _same_bank_gates(t):
    """Planted cases for REFsb's gates: (rule, rows, gate), the last row probed at gate - 1."""
    act_set, pre_set = (0, "ACT", 0, 3, 2, 1, -1), (100, "PRE", 0, 3, 2, -1, -1)
    return [
        # ACT to a refreshing bank (bank 2 of any group) before tRFCsb.
        ("tRFCsb", [_refsb(100, 2), (None, "ACT", 0, 5, 2, 1, -1)], 100 + t["nRFCsb"]),
        # ACT to another bank before tREFSBRD.
        ("tREFSBRD", [_refsb(100, 2), (None, "ACT", 0, 5, 1, 1, -1)], 100 + t["nREFSBRD"]),
        # REFsb to REFsb (another bank) too close.
        ("tREFSBRD", [_refsb(100, 2), _refsb(None, 3)], 100 + t["nREFSBRD"]),
        # A REF waits for the refreshing banks; a REFsb for a REF's tRFC.
        ("tRFCsb", [_refsb(100, 2), (None, "REF", 0, -1, -1, -1, -1)], 100 + t["nRFCsb"]),
        ("tRFC", [(100, "REF", 0, -1, -1, -1, -1), _refsb(None, 0)], 100 + t["nRFC"]),
        # Its banks precharged for tRP; an ACT of the rank tRRD_L before it.
        ("tRP before REFsb", [act_set, pre_set, _refsb(None, 2)], 100 + t["nRP"]),
        ("tRRD_L before REFsb", [(0, "ACT", 0, 3, 1, 1, -1), _refsb(None, 2)], t["nRRD_L"]),
    ]


@pytest.mark.parametrize("case", range(7))
def test_same_bank_planted_violation_is_caught_one_cycle_early_and_not_at_the_gate(tmp_path, ddr5, case):
    gates = _same_bank_gates(ddr5["timing"])
    assert len(gates) == 7
    rule, rows, gate = gates[case]
    probe = rows[-1]
    early = _same_bank_violations(tmp_path, ddr5, [*rows[:-1], (gate - 1, *probe[1:])])
    assert any(v.startswith(rule) for v in early), f"{rule} not caught: {early}"
    assert _same_bank_violations(tmp_path, ddr5, [*rows[:-1], (gate, *probe[1:])]) == []


def test_same_bank_state_and_round_violations(tmp_path, ddr5):
    t = ddr5["timing"]
    # A REFsb to an open bank of its set (bank 2 of group 3).
    found = _same_bank_violations(tmp_path, ddr5, [(0, "ACT", 0, 3, 2, 1, -1), _refsb(500, 2)])
    assert any(v.startswith("state: REFsb with bank 2 of group 3 open") for v in found), found
    # The same bank again before the others (and before tRFCsb): both named.
    found = _same_bank_violations(tmp_path, ddr5, [_refsb(100, 2), _refsb(100 + t["nRFCsb"] - 1, 2)])
    assert any(v.startswith("tRFCsb: REFsb of bank 2") for v in found), found
    assert any(v.startswith("same-bank rounds") for v in found), found
    # A REFsb under all-bank refresh, or on DDR4, is named.
    path = tmp_path / "one.csv"
    _write_log(path, [_refsb(100, 0)])
    assert any("all_bank" in v.rule for v in check_log(ddr5, str(path)))


def test_same_bank_rate_each_bank_index_once_per_trefi2(tmp_path):
    import bulksim

    spec = bulksim.spec(DDR5, overrides=SAME_BANK)
    refi = spec["timing"]["nREFI"]
    assert refi == 4680
    step = refi // 4
    # 12 tREFI2 of REFsb every tREFI2 / 4, bank 0, 1, 2, 3 in turn: legal.
    legal = [_refsb(step * (k + 1), k % 4) for k in range(48)]
    assert _same_bank_violations(tmp_path, spec, legal) == []
    # Bank 3 never refreshed: at FGR 2x at most 8 x 2 REFs may be postponed, so bank 3 owes
    # one too many at 17 x tREFI2; this log runs 20.
    skipped = [_refsb(step * (k + 1), k % 3) for k in range(80)]
    found = _same_bank_violations(tmp_path, spec, skipped)
    assert any("bank 3" in v and "refresh" in v for v in found), found


# LPDDR5 and HBM3 (issue 36): each preset's logs under every refresh setting that applies to
# it, and one planted violation per rule the two standards add. Elastic and pausing are
# refused on them, as on DDR5 (tests/it/lpddr5_hbm3.rs). HBM3 runs as a whole channel (two
# pseudo-channels, 1 GB) so that the generated traces' footprint fits.
NEW_PARTS = {"LPDDR5_16Gb_x16_6400": [], "HBM3_8Gb_6400": ["dram.channels=2"]}
NEW_PARTS_REFRESH = {
    "staggered-2-ranks": ["dram.ranks=2"],
    "simultaneous-2-ranks": ["dram.ranks=2", "controller.refresh.policy=simultaneous"],
    "extended-temperature": ["dram.temperature=extended"],
    "pcd": ["dram.ranks=2", "controller.refresh.scheme=pcd"],
    "closed-page": ["dram.ranks=2", "controller.page_policy=closed"],
}


@pytest.mark.parametrize("preset", list(NEW_PARTS))
@pytest.mark.parametrize("name,gen,overrides", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_lpddr5_hbm3_zero_violations(preset, name, gen, overrides, make_trace, run_logged):
    trace = make_trace(requests=3000, seed=3, **gen)
    stats, spec, log = run_logged(trace, preset, [*NEW_PARTS[preset], *overrides])
    assert stats["reads"] + stats["writes"] == 3000
    violations = check_log(spec, str(log))
    assert violations == [], "\n".join(map(str, violations[:10]))


@pytest.mark.parametrize("preset", list(NEW_PARTS))
@pytest.mark.parametrize("name", list(NEW_PARTS_REFRESH))
def test_lpddr5_hbm3_zero_violations_under_each_refresh_setting(tmp_path, make_trace, preset, name):
    # 4000 requests 10 cycles apart: over 10 x tREFI on LPDDR5 (3124), 6 on HBM3 (6240).
    trace = make_trace(requests=4000, seed=7, pattern="random", write_fraction=0.3, interval=10)
    overrides = [*NEW_PARTS[preset], *NEW_PARTS_REFRESH[name]]
    stats, log = _cli_run(tmp_path, trace, preset, overrides)
    spec, config = _resolved(preset, overrides)
    assert spec["standard"] == preset.split("_")[0]
    violations = check_log(spec, str(log), config)
    assert violations == [], "\n".join(map(str, violations[:10]))
    assert stats["reads"] + stats["writes"] == 4000
    assert stats["refreshes"] > 0
    # An ACT holds its command bus for two cycles: no command follows an ACT one cycle later
    # on LPDDR5, and only column commands do on HBM3.
    rows = _rows(log)[1]
    after_act = {
        (int(b[0]) - int(a[0]), b[1])
        for a, b in zip(rows, rows[1:], strict=False)
        if a[1] == "ACT" and a[2] == b[2]
    }
    next_cycle = {cmd for gap, cmd in after_act if gap == 1}
    if spec["standard"] == "LPDDR5":
        assert next_cycle == set()
    else:
        assert next_cycle <= {"RD", "WR", "RDA", "WRA"}


@pytest.fixture
def lpddr5():
    import bulksim

    return bulksim.spec("LPDDR5_16Gb_x16_6400", overrides=["dram.ranks=2"])


@pytest.fixture
def hbm3():
    import bulksim

    return bulksim.spec("HBM3_8Gb_6400", overrides=["dram.ranks=2"])


def _lpddr5_gates(t):
    """Planted cases for LPDDR5's own rules: (rule, rows, gate), as in `_gates`."""
    act_a, act_other_group = (0, "ACT", 0, 0, 0, 1, -1), (4, "ACT", 0, 1, 0, 1, -1)
    act_same_group = (8, "ACT", 0, 0, 1, 1, -1)
    ras = t["nRAS"]
    return [
        # ACT-1, ACT-2: another rank's command (no other rule) waits a cycle more.
        ("command bus", [act_a, (None, "ACT", 1, 0, 0, 1, -1)], 2),
        ("command bus", [act_a, (None, "PREA", 1, -1, -1, -1, -1)], 2),
        # A PREA closes the banks in tRPab (17), not tRPpb (15).
        ("tRPab", [act_a, (ras, "PREA", 0, -1, -1, -1, -1), (None, "ACT", 0, 0, 0, 2, -1)], ras + t["nRPab"]),
        (
            "tRPab",
            [act_a, (ras, "PREA", 0, -1, -1, -1, -1), (None, "REF", 0, -1, -1, -1, -1)],
            ras + t["nRPab"],
        ),
        # Precharges of a rank are tPPD (2) apart.
        (
            "tPPD",
            [act_a, act_other_group, (100, "PRE", 0, 0, 0, -1, -1), (None, "PRE", 0, 1, 0, -1, -1)],
            102,
        ),
        # BL32's second half (4 cycles after the first) holds the bus for 2 more cycles.
        (
            "data bus",
            [act_a, act_other_group, (100, "RD", 0, 0, 0, 1, 0), (None, "RD", 0, 1, 0, 1, 0)],
            106,
        ),
        # The next BL32 of the bank group: two BL16 tCCD_L after.
        (
            "tCCD",
            [act_a, act_other_group, act_same_group, (100, "RD", 0, 0, 0, 1, 0), (None, "RD", 0, 0, 1, 1, 0)],
            100 + t["nCCD_L"],
        ),
    ]


def _hbm3_gates(t):
    """Planted cases for HBM3's own rules: (rule, rows, gate), as in `_gates`."""
    act_a, act_other_group = (0, "ACT", 0, 0, 0, 1, -1), (4, "ACT", 0, 1, 0, 1, -1)
    return [
        # An ACT holds the row bus two cycles: the next row command waits.
        ("command bus", [act_a, (None, "ACT", 1, 0, 0, 1, -1)], 2),
        ("command bus", [act_a, (None, "REF", 1, -1, -1, -1, -1)], 2),
        (
            "command bus",
            [act_a, act_other_group, (100, "ACT", 1, 0, 0, 1, -1), (None, "PRE", 0, 0, 0, -1, -1)],
            102,
        ),
        # A line's second BL8 (4 cycles after the first) holds the bus for 2 more cycles.
        (
            "data bus",
            [act_a, act_other_group, (100, "RD", 0, 0, 0, 1, 0), (None, "RD", 0, 1, 0, 1, 0)],
            106,
        ),
    ]


@pytest.mark.parametrize("case", range(7))
def test_lpddr5_planted_violation_is_caught_one_cycle_early_and_not_at_the_gate(tmp_path, lpddr5, case):
    rule, rows, gate = _lpddr5_gates(lpddr5["timing"])[case]
    assert len(_lpddr5_gates(lpddr5["timing"])) == 7
    probe = rows[-1]
    early = _violations(tmp_path, lpddr5, [*rows[:-1], (gate - 1, *probe[1:])])
    assert any(v.startswith(rule) for v in early), f"{rule} not caught: {early}"
    assert _violations(tmp_path, lpddr5, [*rows[:-1], (gate, *probe[1:])]) == []


@pytest.mark.parametrize("case", range(4))
def test_hbm3_planted_violation_is_caught_one_cycle_early_and_not_at_the_gate(tmp_path, hbm3, case):
    rule, rows, gate = _hbm3_gates(hbm3["timing"])[case]
    assert len(_hbm3_gates(hbm3["timing"])) == 4
    probe = rows[-1]
    early = _violations(tmp_path, hbm3, [*rows[:-1], (gate - 1, *probe[1:])])
    assert any(v.startswith(rule) for v in early), f"{rule} not caught: {early}"
    assert _violations(tmp_path, hbm3, [*rows[:-1], (gate, *probe[1:])]) == []


def test_the_halves_gap_and_the_column_bus_are_free(tmp_path, lpddr5, hbm3, ddr4):
    """What the standards allow and bulksim's booking does not use: another bank group's half
    in the gap between a line's halves (2 cycles after), and on HBM3 a column command in the
    cycle after an ACT; on LPDDR5 that RD is a command-bus violation, on DDR4 the same
    sequence's first RD pair a data-bus one."""
    act_a, act_other_group = (0, "ACT", 0, 0, 0, 1, -1), (4, "ACT", 0, 1, 0, 1, -1)
    interleaved = [act_a, act_other_group, (100, "RD", 0, 0, 0, 1, 0), (102, "RD", 0, 1, 0, 1, 0)]
    assert _violations(tmp_path, lpddr5, interleaved) == []
    assert _violations(tmp_path, hbm3, interleaved) == []
    assert any(v.startswith("data bus") for v in _violations(tmp_path, ddr4, interleaved))
    rd_after_act = [act_a, (100, "ACT", 1, 0, 0, 1, -1), (101, "RD", 0, 0, 0, 1, 0)]
    assert _violations(tmp_path, hbm3, rd_after_act) == []
    assert any(v.startswith("command bus") for v in _violations(tmp_path, lpddr5, rd_after_act))


def test_spec_list_and_show_name_the_new_standards():
    """`bulksim spec list` lists both presets; `spec show` prints their standard, clock and the
    WCK:CK ratio's beats per clock, and says their currents are a stand-in."""

    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "bulksim.cli", *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout

    listed = cli("spec", "list")
    for name in NEW_PARTS:
        assert name in listed
    for name, head, beats, rpab in [
        ("LPDDR5_16Gb_x16_6400", "LPDDR5-6400 (tCK 1.25 ns)", "8", "17"),
        ("HBM3_8Gb_6400", "HBM3-6400 (tCK 0.625 ns)", "4", "0"),
    ]:
        shown = cli("spec", "show", name)
        assert shown.splitlines()[0] == f"{name}: {head}"
        assert "stand-in" in shown
        lines = {line.split()[0]: line.split()[1] for line in shown.splitlines() if line.startswith("  ")}
        assert (lines["data_beats_per_clock"], lines["nBL"], lines["nRPab"]) == (beats, "6", rpab)


@pytest.mark.parametrize("mechanism", ["cpu", "mc_dma"])
@pytest.mark.parametrize("preset", list(NEW_PARTS))
def test_lpddr5_hbm3_full_system_logs_pass(tmp_path, preset, mechanism):
    """Forkbench in the full system (cores, caches, OS, copies over the channel) on each new
    part: its command log is legal and holds every command the run counted."""
    import bulksim
    from bulksim import api

    workload = api.generate_forkbench(tmp_path / "fb", array_bytes=1 << 20, pages_updated=64)
    overrides = [*NEW_PARTS[preset], f"system.bulk_mechanism={mechanism}"]
    log = tmp_path / "cmds.csv"
    stats = dict(api.run_workload(workload=workload, preset=preset, overrides=overrides, command_log=log))
    spec = bulksim.spec(preset, overrides=overrides)
    violations = check_log(spec, str(log))
    assert violations == [], "\n".join(map(str, violations[:10]))
    rows = _rows(log)[1]
    mem = stats["memory"]
    assert len(rows) == sum(mem["commands"].values()) > 0
    assert mem["refreshes"] > 0 and mem["preset"] == preset
