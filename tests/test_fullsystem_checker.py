"""The independent timing checker (tests/timing_checker.py) sees the full system: the DRAM
command log of a full-system run (cores, caches, OS, bulk coordination) replays against the
preset's timing with zero violations, under every bulk mechanism and on a 4-core mix.

Each log must also be complete: it holds the commands its mechanism has to issue (ACT2 under
FPM, TRANSFER halves under PSM, REF, RD/WR) in exactly the numbers the run's stats count, and
its RD and WR bursts are all the traffic the system accounted for (demand misses, write-backs
and bulk line traffic), so an empty or truncated log fails."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

import bulksim
from bulksim import api
from bulksim.reproduce import cmmp, multicore
from bulksim.reproduce.forkbench import CONFIG as PAPER_SYSTEM
from bulksim.reproduce.forkbench import MECHANISMS as FORKBENCH_MECHANISMS
from timing_checker import check_log

ROOT = Path(__file__).resolve().parents[1]
LINE = 64
ARRAY_BYTES = 2 << 20
PAGES_UPDATED = 128

# Every system.bulk_mechanism, plus forkbench's PSM configuration (RowClone without FPM).
MECHANISMS = {
    "cpu": FORKBENCH_MECHANISMS["baseline"],
    "mc_dma": ["system.bulk_mechanism=mc_dma", "os.allocator=scatter"],
    "rowclone": FORKBENCH_MECHANISMS["fpm"],
    "rowclone_zi": ["system.bulk_mechanism=rowclone_zi", "os.allocator=subarray_aware"],
    "psm": FORKBENCH_MECHANISMS["psm"],
}


@pytest.fixture(scope="module")
def forkbench(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fullsys") / "forkbench"
    return api.generate_forkbench(path, array_bytes=ARRAY_BYTES, pages_updated=PAGES_UPDATED)


def _run_checked(workload: Path, overrides: list[str], log: Path) -> tuple[dict, Counter]:
    """Runs the workload on the RowClone paper's system with a command log; asserts the checker
    finds nothing and the log matches the stats. Returns the stats and the log's command counts."""
    stats = dict(api.run_workload(PAPER_SYSTEM, workload=workload, overrides=overrides, command_log=log))
    spec = bulksim.spec(config=PAPER_SYSTEM, overrides=overrides)
    violations = check_log(spec, str(log))
    assert violations == [], "\n".join(map(str, violations[:10]))

    with open(log, newline="") as f:
        logged = Counter(row["command"] for row in csv.DictReader(f))
    mem = stats["memory"]
    # Every command the memory system counted is in the log, and nothing else.
    assert logged == Counter({k: v for k, v in mem["commands"].items() if v}), (logged, mem["commands"])
    bursts = sum(logged[c] for c in ("RD", "RDA", "WR", "WRA"))
    # Channel bursts: every request the controllers took that was not answered from (or
    # folded into) a queued write, including the bulk line jobs of cpu/mc_dma copies ...
    served = mem["reads"] + mem["writes"] - mem["reads_forwarded"] - mem["writes_merged"]
    assert bursts == served > 0, (bursts, mem["reads"], mem["writes"])
    # ... which are all the line requests the system accounted for (misses, write-backs,
    # bulk line traffic) less those the controllers' write queues absorbed.
    assert (mem["reads"] + mem["writes"]) * LINE == stats["traffic_bytes"], (mem, stats["traffic"])
    # Refresh ran throughout (the checker also bounds the gaps between REFs).
    assert logged["REF"] > 0 and logged["REF"] == mem["refreshes"]
    return stats, logged


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_forkbench_zero_violations(forkbench, tmp_path, mechanism):
    overrides = MECHANISMS[mechanism]
    stats, logged = _run_checked(forkbench, overrides, tmp_path / "cmds.csv")
    bulk = stats["memory"]["bulk"]
    os_stats = stats["os"]
    assert os_stats["cow_copies"] == PAGES_UPDATED and os_stats["zero_fills"] > 0
    assert logged["ACT"] > 0 and logged["PRE"] + logged["PREA"] > 0
    assert logged["RD"] > 0 and logged["WR"] > 0
    if mechanism in ("rowclone", "rowclone_zi"):
        # Copy-on-write copies and zeroing in FPM: one ACT2 per destination row.
        assert bulk["fpm_bytes"] > 0 and bulk["psm_bytes"] == 0 and bulk["channel_bytes"] == 0
        assert logged["ACT2"] * stats["memory"]["mcgr_bytes"] >= bulk["fpm_bytes"]
        assert logged["TRR"] == logged["TRW"] == 0
    elif mechanism == "psm":
        # Copies in PSM (TRR then TRW, one per line, through another bank's temporary row),
        # zeroing by the core's stores.
        assert bulk["psm_bytes"] > 0 and bulk["fpm_bytes"] == 0
        assert logged["TRR"] == logged["TRW"] >= bulk["psm_bytes"] // LINE
        assert logged["ACT2"] == 0
    else:
        assert bulk["in_dram_bytes"] == 0
        assert logged["ACT2"] == logged["TRR"] == logged["TRW"] == 0
    if mechanism == "mc_dma":
        # The DMA engine's line reads and writes are channel bursts in the log.
        assert bulk["dma_bytes"] > 0
        assert bulk["channel_bytes"] == stats["traffic"]["copy_bytes"] + stats["traffic"]["init_bytes"]
        assert bulk["channel_bytes"] // LINE <= logged["RD"] + logged["WR"]


@pytest.mark.parametrize("mechanism", ["cpu", "rowclone"])
def test_four_core_mix_zero_violations(tmp_path, monkeypatch, mechanism):
    # Two forkbench instances and two random-access programs, one core each (multicore.py's
    # layout: threads 0-3, forkbench children as threads 4 and 5).
    programs = [
        ("fork", 2 << 20, 64),
        ("fork", 2 << 20, 128),
        ("rand", 4 << 20, 10),
        ("rand", 4 << 20, 40),
    ]
    monkeypatch.setattr(multicore, "ACCESSES", 4000)
    workload = multicore._workload(tmp_path / "mix", programs)
    overrides = MECHANISMS[mechanism]
    stats, logged = _run_checked(workload, overrides, tmp_path / "cmds.csv")
    assert len(stats["cores"]) == 4
    assert all(c["instructions"] > 0 for c in stats["cores"])
    assert stats["os"]["cow_copies"] == 64 + 128
    if mechanism == "rowclone":
        assert logged["ACT2"] > 0
    else:
        assert logged["ACT2"] == 0


def test_cli_run_workload_writes_the_command_log(forkbench, tmp_path):
    log, out = tmp_path / "cmds.csv", tmp_path / "stats.json"
    sets = ["--config", PAPER_SYSTEM, *[a for s in MECHANISMS["rowclone"] for a in ("--set", s)]]
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "run", "--workload", forkbench, "--command-log", log]
        + ["--json", out, "--quiet", *sets],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    stats = json.loads(out.read_text())
    with open(log, newline="") as f:
        logged = Counter(row["command"] for row in csv.DictReader(f))
    assert logged["ACT2"] > 0
    assert sum(logged.values()) == sum(stats["memory"]["commands"].values())
    assert check_log(bulksim.spec(config=PAPER_SYSTEM, overrides=MECHANISMS["rowclone"]), str(log)) == []


# The Rank Assignment paper's system (configs/rank_assignment.toml: 2 channels x 2 ranks of
# 32 Gb DDR4-1600 at extended temperature, system-wide stagger, per-rank write drains) and
# its refresh variants, on 8 copies of synth-mcf stopped at 40 000 DRAM accesses (about
# 500 us, 130 x tREFI at 3.9 us).
TABLE_II = ROOT / "configs" / "rank_assignment.toml"
REFRESH_VARIANTS = {
    "table-ii": [],
    "simultaneous": ["controller.refresh.policy=simultaneous"],
    "fgr2x": ["controller.refresh.granularity=2"],
    "fgr4x-no-overhead": ["controller.refresh.granularity=4", "controller.refresh.fgr_overhead=false"],
    "channel-stagger-normal-equal-priority": [
        "controller.refresh.stagger=channel",
        "dram.temperature=normal",
        "controller.write_drain.policy=equal_priority",
    ],
    "none": ["controller.refresh=none"],
    "pcm": ["dram.preset=PCM_x8_1600", "controller.refresh=none"],
}


@pytest.mark.parametrize("variant", list(REFRESH_VARIANTS))
def test_table_ii_refresh_variants_zero_violations(synth_mcf, tmp_path, variant):
    overrides = ["sim.stop_after_dram_accesses=40000", *REFRESH_VARIANTS[variant]]
    log = tmp_path / "cmds.csv"
    stats = dict(
        api.run_workload(TABLE_II, workload=synth_mcf, overrides=overrides, command_log=log, copies=8)
    )
    spec = bulksim.spec(config=TABLE_II, overrides=overrides)
    config = tomllib.loads(api.resolve_config(TABLE_II, overrides=overrides))
    violations = check_log(spec, str(log), config)
    assert violations == [], "\n".join(map(str, violations[:10]))
    mem = stats["memory"]
    assert mem["reads"] + mem["writes"] == 40000
    with open(log, newline="") as f:
        refs = Counter((row["channel"], row["rank"]) for row in csv.DictReader(f) if row["command"] == "REF")
    assert sum(refs.values()) == mem["refreshes"]
    if variant in ("none", "pcm"):
        assert mem["refreshes"] == 0
        return
    # Each of the 4 ranks: one REF per tREFI in use (3.9 us / granularity at extended).
    refi = spec["timing"]["nREFI"]
    assert len(refs) == 4
    assert all(abs(n - mem["mem_cycles"] // refi) <= 1 for n in refs.values()), (
        refs,
        mem["mem_cycles"] // refi,
    )


# The copy-engines DRAM preset (configs/copy_engines_ddr3.toml): forkbench's copy-on-write
# copies run by the movblk memcpy, through the engines (dce_nt) or handed to RowClone as
# whole pages (dce_rowclone).
COPY_ENGINES_DDR3 = ROOT / "configs" / "copy_engines_ddr3.toml"


def _run_copy_engines_ddr3_checked(forkbench, tmp_path, overrides: list[str]) -> tuple[dict, Path]:
    """Forkbench on the copy-engines DRAM preset with `overrides`, its command log replayed
    by the independent checker (no violation allowed): the stats and the log."""
    log = tmp_path / "cmds.csv"
    stats = dict(
        api.run_workload(COPY_ENGINES_DDR3, workload=forkbench, overrides=overrides, command_log=log)
    )
    spec = bulksim.spec(config=COPY_ENGINES_DDR3, overrides=overrides)
    violations = check_log(spec, str(log))
    assert violations == [], "\n".join(map(str, violations[:10]))
    return stats, log


@pytest.mark.parametrize("policy", ["dce_nt", "dce_rowclone"])
def test_copy_engine_forkbench_zero_violations(forkbench, tmp_path, policy):
    overrides = ["system.memcpy=movblk", f"copy_engine.policy={policy}"]
    stats, log = _run_copy_engines_ddr3_checked(forkbench, tmp_path, overrides)
    with open(log, newline="") as f:
        logged = Counter(row["command"] for row in csv.DictReader(f))
    mem = stats["memory"]
    assert logged == Counter({k: v for k, v in mem["commands"].items() if v})
    assert stats["os"]["cow_copies"] == PAGES_UPDATED
    dram = stats["copy_engine"]["dram"]
    if policy == "dce_rowclone":
        # Cold pages go down whole: FPM in the parent's subarray, one ACT2 per page.
        assert dram["copies"] > 0 and logged["ACT2"] >= dram["copies"]
        assert mem["bulk"]["fpm_bytes"] == dram["copies"] * 4096
    else:
        assert dram["chunks"] == 0 and logged["ACT2"] == 0


def test_software_nt_forkbench_zero_violations_one_line_write_per_copied_line(forkbench, tmp_path):
    # The copy-on-write copies by the software memcpy with non-temporal stores: each 4 KB page
    # goes to DRAM as 64 full-line writes through the write-combining buffers.
    overrides = ["system.memcpy=software_nt", "copy_engine.policy=none"]
    stats, _ = _run_copy_engines_ddr3_checked(forkbench, tmp_path, overrides)
    assert stats["os"]["cow_copies"] == PAGES_UPDATED
    wc = stats["write_combining"]
    assert (wc["full_writes"], wc["partial_writes"]) == (PAGES_UPDATED * 64, 0)
    assert wc["stores"] == PAGES_UPDATED * 4096 // 4


# CMMP's Table I system (configs/cmmp_table1.toml): a hybrid run's two command logs, one per
# device, replay with zero violations, the PCM one under its closed page and tRP per dirty
# block, under every mechanism. Smaller caches and a 10 us period so that a short run misses,
# writes back and migrates pages (every migration copy a DRAM write or read); pages start in
# PCM (4 x 1 MB would all fit the 128 MB DRAM under the preset's dram_first).
CMMP_TABLE1 = ROOT / "configs" / "cmmp_table1.toml"
CMMP_SMALL = [
    "cache.level.0.size_kb=16",
    "cache.level.1.size_kb=64",
    "hybrid.period_ns=10000",
    "hybrid.placement=pcm_only",
]
CMMP_MECHANISMS = ["cpm", "cm", "cm_obm", "cm_obm_pd"]
#: The presets: Table I, and cmmp_scaled for a 1 MB copy (a 1 MB DRAM: 4 rows a bank).
CMMP_PRESETS = {"cmmp_table1": [], "cmmp_scaled": cmmp.scaled(1 << 20)[1]}
_cmmp_runs: dict[tuple[str, str], tuple[dict, Path, dict]] = {}


def _cmmp_run(tmp_path_factory, mechanism: str, preset: str = "cmmp_table1") -> tuple[dict, Path, dict]:
    """One run per mechanism and preset (the stats, the log path the two device logs are
    named after, the resolved config), shared by the tests of this module."""
    if (mechanism, preset) not in _cmmp_runs:
        d = tmp_path_factory.mktemp(f"cmmp-{mechanism}-{preset}")
        workload = d / "rand"
        for thread in range(4):
            api.generate_random_access(
                workload,
                region_bytes=1 << 20,
                accesses=8_000,
                write_percent=30,
                seed=1 + thread,
                thread=thread,
            )
        log = d / "cmds.csv"
        overrides = [*CMMP_PRESETS[preset], *CMMP_SMALL, f"hybrid.mechanism={mechanism}"]
        stats = dict(api.run_workload(CMMP_TABLE1, workload=workload, overrides=overrides, command_log=log))
        config = tomllib.loads(api.resolve_config(CMMP_TABLE1, overrides=overrides))
        _cmmp_runs[(mechanism, preset)] = (stats, log, config)
    return _cmmp_runs[(mechanism, preset)]


@pytest.fixture(
    scope="module",
    params=[(m, p) for p in CMMP_PRESETS for m in CMMP_MECHANISMS],
    ids=lambda mp: "-".join(mp),
)
def cmmp_logs(tmp_path_factory, request) -> tuple[dict, Path, dict]:
    return _cmmp_run(tmp_path_factory, *request.param)


def _device_spec(preset: str, ranks: int, rows: int | None = None) -> dict:
    sets = [f"dram.ranks={ranks}", "controller.refresh=none"]
    if rows:
        sets += [f"dram.rows={rows}", f"dram.rows_per_subarray={rows}"]
    return bulksim.spec(preset, overrides=sets)


def test_cmmp_hybrid_logs_zero_violations(cmmp_logs):
    stats, log, config = cmmp_logs
    assert stats["hybrid"]["promotions_started"] > 0
    devices = {d["name"]: d["stats"] for d in stats["memory_devices"]}
    dram_rows = config["memory"]["device"][0].get("rows") or None
    for name, preset, ranks, rows in [
        ("dram", "DRAM_CMMP_1000", 8, dram_rows),
        ("pcm", "PCM_CMMP_400", 16, None),
    ]:
        path = log.with_suffix(f".{name}.csv")
        violations = check_log(_device_spec(preset, ranks, rows), str(path), config, device=name)
        assert violations == [], (name, "\n".join(map(str, violations[:10])))
        with open(path, newline="") as f:
            logged = Counter(row["command"] for row in csv.DictReader(f))
        assert logged == Counter({k: v for k, v in devices[name]["commands"].items() if v}), name
    # The PCM ran closed page (only auto-precharging accesses) and wrote dirty blocks back.
    pcm = devices["pcm"]["commands"]
    assert pcm["RD"] == pcm["WR"] == 0 and pcm["RDA"] > 0 and pcm["WRA"] > 0
    assert devices["pcm"]["energy"]["per_bit"]["array_write_nj"] > 0
    energy = stats["hybrid_energy"]
    assert energy["pcm_nj"] == devices["pcm"]["energy"]["per_bit"]["total_nj"]
    assert energy["pact_nj"] > 0
    # CPM has no ART on the access path.
    assert (energy["art_nj"] > 0) == (stats["hybrid"]["mechanism"] != "cpm")


def test_cmmp_pcm_log_with_an_early_act_after_a_dirty_precharge_is_rejected(tmp_path_factory, tmp_path):
    """The real PCM log (`cm`) with one ACT moved to one cycle before its bank's write-back of
    a WRA's dirty block ends (recovery CWL + BL + tWR, then tRP = 60 cycles) is rejected."""
    _, log, config = _cmmp_run(tmp_path_factory, "cm")
    spec = _device_spec("PCM_CMMP_400", 16)
    t = spec["timing"]
    with open(log.with_suffix(".pcm.csv"), newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    col = {name: i for i, name in enumerate(header)}
    last_wra: dict[tuple, int] = {}
    for i, row in enumerate(rows):
        bank = (row[col["channel"]], row[col["rank"]], row[col["bankgroup"]], row[col["bank"]])
        name = row[col["command"]]
        if name == "WRA":
            last_wra[bank] = int(row[col["cycle"]])
        elif name == "RDA":
            last_wra.pop(bank, None)  # the bank's last precharge was clean
        elif name == "ACT" and bank in last_wra:
            # tRAS from the WRA's ACT (22 cycles) is met: the WRA came tRCD (22) after it.
            gate = last_wra[bank] + t["nCWL"] + t["nBL"] + t["nWR"] + t["nRP"]
            assert int(row[col["cycle"]]) >= gate
            row[col["cycle"]] = str(gate - 1)
            moved = i + 2  # the log's line: the header is line 1
            break
    else:
        pytest.fail("no ACT after a WRA on the same bank")
    bad = tmp_path / "early.csv"
    with open(bad, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    violations = check_log(spec, str(bad), config, device="pcm")
    caught = [v for v in violations if v.line == moved and v.rule.startswith("tRP:")]
    assert caught and "1 dirty blocks" in caught[0].rule, violations
