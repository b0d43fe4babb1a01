"""The independent timing checker finds zero violations in bulksim's command logs for every
traffic pattern, preset and controller setting, and does find violations that are planted."""

from __future__ import annotations

import csv

import pytest

from timing_checker import check_log

PRESETS = ["DDR3_2Gb_x8_1066", "DDR3_4Gb_x8_1600", "DDR4_8Gb_x8_2400"]

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
    if "refresh-heavy" in name:
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


def test_planted_violations_are_found(tmp_path, ddr4):
    t = ddr4["timing"]
    rcd, ras, rp, faw = t["nRCD"], t["nRAS"], t["nRP"], t["nFAW"]
    cases = {
        "tRCD": [(0, "ACT", 0, 0, 0, 5, -1), (rcd - 1, "RD", 0, 0, 0, 5, 0)],
        "tRAS": [(0, "ACT", 0, 0, 0, 5, -1), (ras - 1, "PRE", 0, 0, 0, -1, -1)],
        "tRP": [
            (0, "ACT", 0, 0, 0, 5, -1),
            (ras, "PRE", 0, 0, 0, -1, -1),
            (ras + rp - 1, "ACT", 0, 0, 0, 6, -1),
        ],
        "tRRD": [(0, "ACT", 0, 0, 0, 5, -1), (t["nRRD_L"] - 1, "ACT", 0, 0, 1, 5, -1)],
        "tFAW": [(i * 6, "ACT", 0, i % 4, i // 4, 1, -1) for i in range(5)],
        "tCCD": [
            (0, "ACT", 0, 0, 0, 1, -1),
            (100, "RD", 0, 0, 0, 1, 0),
            (100 + t["nCCD_L"] - 1, "RD", 0, 0, 0, 1, 8),
        ],
        "tWTR": [(0, "ACT", 0, 0, 0, 1, -1), (100, "WR", 0, 0, 0, 1, 0), (110, "RD", 0, 0, 0, 1, 8)],
        "data bus": [
            (0, "ACT", 0, 0, 0, 1, -1),
            (1, "ACT", 1, 0, 0, 1, -1),
            (100, "RD", 0, 0, 0, 1, 0),
            (100 + t["nBL"], "RD", 1, 0, 0, 1, 0),
        ],
        "tRFC": [(0, "REF", 0, -1, -1, -1, -1), (t["nRFC"] - 1, "ACT", 0, 0, 0, 1, -1)],
        "state": [(0, "RD", 0, 0, 0, 1, 0)],
        "command bus": [(0, "ACT", 0, 0, 0, 1, -1), (0, "ACT", 1, 0, 0, 1, -1)],
    }
    assert faw > 4 * 6
    for rule, rows in cases.items():
        found = _violations(tmp_path, ddr4, rows)
        assert any(v.startswith(rule) for v in found), f"{rule} not caught: {found}"
    legal = [
        (0, "ACT", 0, 0, 0, 5, -1),
        (rcd, "RD", 0, 0, 0, 5, 0),
        (ras, "PRE", 0, 0, 0, -1, -1),
        (ras + rp, "ACT", 0, 0, 0, 6, -1),
    ]
    assert _violations(tmp_path, ddr4, legal) == []


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
