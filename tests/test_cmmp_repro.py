"""`bulksim reproduce cmmp` (python/bulksim/reproduce/cmmp.py) on a reduced experiment: 403.gcc (when the
shared traces are there) and the fp_stream stand-in at 2 MB a copy, 20 k + 50 k instructions
per core, under the four mechanisms: the rows' schema and the relations between them, the
``cmmp_scaled`` preset derived from a footprint, a trace's footprint, missing traces named,
``--json`` and the CLI's list. The full and --quick runs are the reproduction's, not the
tests'."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bulksim import cli
from bulksim.paths import shared_traces_dir
from bulksim.reproduce import cmmp
from bulksim.reproduce.shape import Options

INSTRUCTIONS = (20_000, 50_000)
STANDIN_BYTES = 2 << 20
ROW_TYPES = {
    "workload": str,
    "mechanism": str,
    "cycles": int,
    "energy_nj": float,
    "dram_fraction": float,
    "source": str,
    "preset": str,
    "scale": float,
    "speedup": float,
    "speedup_last": float,
    "dram_read_fraction": float,
    "pcm_avg_ns": float,
    "dram_avg_ns": float,
    "pcm_accesses": int,
    "migrations_started": int,
    "migrations_completed": int,
    "migrations_partial": int,
    "blocks_copied": int,
    "pcm_writes_elided": int,
    "periods": int,
}


def test_cmmp_scaled_follows_a_copys_footprint():
    # 5.1 MB (403.gcc's): DRAM 4 MB, s = 1/32: 16 rows a bank, PACT 256, ART one set of 32
    # ways (512 / 32 = 16 is less than a set), L2 8 MB / 32 = 256 KB.
    s, sets = cmmp.scaled(int(5.1 * 2**20))
    assert s == 1 / 32
    assert sets == [
        "memory.device.0.rows=16",
        "dram.rows_per_subarray=16",
        "hybrid.pact_entries=256",
        "hybrid.art_entries=32",
        "cache.level.1.size_kb=256",
    ]
    # A footprint of 128 MB or more keeps Table I.
    s, sets = cmmp.scaled(103 << 20)
    assert s == 64 / 128 and "memory.device.0.rows=256" in sets
    assert cmmp.scaled(1 << 30)[0] == 1.0
    with pytest.raises(ValueError):
        cmmp.scaled(100)


def test_a_traces_footprint_is_its_distinct_pages(tmp_path):
    t = tmp_path / "t"
    # Pages 0, 1 (read twice), 2 (a write-back) and 0x10 (hexadecimal).
    t.write_text("3 0\n1 4100 8192\n0 4096\n5 0x10000\n")
    assert cmmp.footprint_bytes(t, "ramulator-cpu") == 4 * 4096
    m = tmp_path / "m"
    m.write_text("2 R 0x1000 0x30\n5 W 0x1040\n0 R 0x3000 0x30\n")
    assert cmmp.footprint_bytes(m, "msc") == 2 * 4096


def test_missing_traces_are_named_and_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("BULKSIM_SHARED_TRACES", str(tmp_path / "none"))
    cases = cmmp.cases(True, tmp_path, (1000, 1000), traces=("403.gcc",), standins=())
    assert cases == [{"workload": "403.gcc", "missing": str(tmp_path / "none" / "ramulator-cpu/403.gcc.gz")}]


@pytest.fixture(scope="module")
def reduced():
    traces = ("403.gcc",) if (shared_traces_dir() / cmmp.TRACES["403.gcc"][0]).exists() else ()
    rows, missing = cmmp.run(
        instructions=INSTRUCTIONS,
        traces=traces,
        standins=("fp_stream",),
        standin_bytes=STANDIN_BYTES,
        workers=2,
    )
    return rows, missing, traces


def test_reduced_experiment_rows(reduced):
    rows, missing, traces = reduced
    assert missing == []
    workloads = [*traces, "fp_stream"]
    assert [(r["workload"], r["mechanism"]) for r in rows] == [
        (w, m) for w in workloads for m in cmmp.MECHANISMS
    ]
    for r in rows:
        for key, kind in ROW_TYPES.items():
            assert isinstance(r[key], kind), (key, r[key])
        assert r["preset"] == "cmmp_scaled"
        assert 0 <= r["dram_fraction"] <= 1 and 0 <= r["dram_read_fraction"] <= 1
        assert r["cycles"] > 0 and r["energy_nj"] > 0
        # Item 2's model: the total is the sum of its parts; the ART costs only off cpm.
        assert r["energy_nj"] == pytest.approx(sum(r["energy_nj_by_component"].values()))
        assert (r["energy_nj_by_component"]["art"] == 0) == (r["mechanism"] == "cpm")
        # The slowest core's window is at least the mean's.
        assert r["cycles"] >= r["mean_core_cycles"]
    by = {(r["workload"], r["mechanism"]): r for r in rows}
    for w in workloads:
        cpm = by[(w, "cpm")]
        assert cpm["speedup"] == 1.0 and cpm["speedup_last"] == 1.0
        for m in cmmp.MECHANISMS:
            r = by[(w, m)]
            assert r["speedup"] == pytest.approx(cpm["mean_core_cycles"] / r["mean_core_cycles"])
            assert r["speedup_last"] == pytest.approx(cpm["cycles"] / r["cycles"])
    fp = by[("fp_stream", "cm")]
    assert fp["scale"] == STANDIN_BYTES / cmmp.TABLE1_DRAM_BYTES
    assert fp["stands_for"] == cmmp.STANDINS["fp_stream"]


def test_reduced_experiment_summary_render_and_json(reduced, tmp_path):
    rows, missing, _ = reduced
    s = cmmp.summary(rows)
    assert s["speedup"]["cpm"] == {"arith": 1.0, "geo": 1.0, "n": len(rows) // 4}
    for m in cmmp.MECHANISMS[1:]:
        assert math.isfinite(s["energy_nj_change_pct"][m])
    text = cmmp.render(rows, ["/x/missing.gz"])
    assert "CM+OBM+PD speedup (mean): +14%" in text
    assert "missing trace, skipped: /x/missing.gz" in text
    out = tmp_path / "cmmp.json"
    cmmp.write_json(rows, missing, out)
    data = json.loads(out.read_text())
    assert data["rows"] == json.loads(json.dumps(rows))
    assert data["missing"] == [] and set(data["summary"]) == set(s)


def test_the_cli_lists_the_reproduction():
    result = CliRunner().invoke(cli.main, ["reproduce", "--list"])
    assert result.exit_code == 0, result.output
    assert "cmmp" in result.output


def test_finished_runs_are_kept_and_taken_on_the_next_call(tmp_path, monkeypatch):
    keep = tmp_path / "runs"
    args = dict(
        instructions=INSTRUCTIONS,
        traces=(),
        standins=("fp_stream",),
        standin_bytes=STANDIN_BYTES,
        workers=2,
        keep=keep,
    )
    first, _ = cmmp.run(**args)
    kept = sorted(p.name for p in keep.iterdir())
    assert len(kept) == 4 and all(n.startswith("fp_stream-") for n in kept), kept
    # A second call runs nothing: every run is taken from what was kept.
    monkeypatch.setattr(cmmp, "ProcessPoolExecutor", None)
    seen = []
    again, _ = cmmp.run(**args, progress=lambda done, total: seen.append((done, total)))
    assert again == first and seen == [(4, 4)]
    monkeypatch.undo()
    # --force runs them again (and keeps the new stats).
    before = {p.name: p.stat().st_mtime_ns for p in keep.iterdir()}
    forced, _ = cmmp.run(**args, force=True)
    assert forced == first
    assert all(p.stat().st_mtime_ns > before[p.name] for p in keep.iterdir())
    # Another instruction count, mechanism or workload spec is another run.
    case = cmmp.cases(
        False, tmp_path, INSTRUCTIONS, traces=(), standins=("fp_stream",), standin_bytes=STANDIN_BYTES
    )[0]
    key = cmmp.run_key(case, "cm", INSTRUCTIONS)
    assert key in kept
    assert cmmp.run_key(case, "cm", (20_000, 60_000)) != key
    assert cmmp.run_key(case, "cm_obm", INSTRUCTIONS) != key
    Path(case["path"]).write_text(Path(case["path"]).read_text() + "\n# changed\n")
    assert cmmp.run_key(case, "cm", INSTRUCTIONS) != key


def test_a_trace_run_is_keyed_on_the_trace_bytes_not_its_file(tmp_path):
    # A trace copied to another place (or re-extracted: a new modification time) is the same
    # run; a trace whose bytes changed is another.
    trace = tmp_path / "a" / "t"
    trace.parent.mkdir()
    trace.write_text("0 0x1000\n0 0x2040\n")
    case = {
        "workload": "t",
        "path": os.fspath(trace),
        "format": "ramulator-cpu",
        "preset": "cmmp_scaled",
        "scale": 1.0,
        "overrides": [],
    }
    key = cmmp.run_key(case, "cm", INSTRUCTIONS)
    copy = tmp_path / "b" / "t"
    copy.parent.mkdir()
    copy.write_bytes(trace.read_bytes())
    os.utime(copy, ns=(1, 1))
    assert cmmp.run_key({**case, "path": os.fspath(copy)}, "cm", INSTRUCTIONS) == key
    copy.write_text("0 0x1000\n0 0x2080\n")
    assert cmmp.run_key({**case, "path": os.fspath(copy)}, "cm", INSTRUCTIONS) != key


def test_workloads_are_selected_by_name():
    assert cmmp.select((), False) == (tuple(cmmp.TRACES), tuple(cmmp.STANDINS))
    assert cmmp.select((), True) == (cmmp.QUICK_TRACES, cmmp.QUICK_STANDINS)
    # Named workloads keep the table's order, whatever the order asked.
    assert cmmp.select(("zipf_drift", "comm1", "403.gcc"), False) == (("403.gcc", "comm1"), ("zipf_drift",))
    with pytest.raises(
        ValueError, match=r"unknown cmmp workload 'mcf': expected one of 403\.gcc, .*zipf_drift"
    ):
        cmmp.select(("fp_stream", "mcf"), False)


def test_the_cli_runs_only_the_named_workloads(tmp_path, monkeypatch):
    plan = cmmp.REPRODUCTION.plan(Options(workloads=("zipf_drift", "456.hmmer")))
    named = list(dict.fromkeys(c.args["workload"] for c in plan.cases))
    # The table's order (traces, then stand-ins), whatever the order asked.
    assert named == ["456.hmmer", "zipf_drift"] or (named == ["zipf_drift"] and len(plan.missing) == 1)
    assert [c.args["mechanism"] for c in plan.cases] == list(cmmp.MECHANISMS) * len(named)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(cli.main, ["reproduce", "cmmp", "--workload", "soplex"])
    assert result.exit_code != 0
    assert "unknown cmmp workload 'soplex'" in result.output and "Traceback" not in result.output
    result = runner.invoke(cli.main, ["reproduce", "forkbench", "--workload", "zipf_drift"])
    assert result.exit_code != 0 and "--workload applies to cmmp only" in result.output


def _row(workload: str, mechanism: str, speedup: float, dram: float = 0.2, pcm: float = 100.0) -> dict:
    return {
        "workload": workload,
        "mechanism": mechanism,
        "speedup": speedup,
        "dram_fraction": dram,
        "pcm_avg_ns": pcm,
    }


def test_the_papers_groups_and_a_cancelling_mean_are_reported(tmp_path):
    # a: CM loses 20% (a loser), b: CM gains 10% (a gainer), c: CM loses 5% (neither);
    # d: CM takes 1/0.86 = 1.163 times CPM's time, more than 15% longer (a loser); e: CM
    # gains 2%, within the noise threshold (no gainer).
    speed = {"a": 0.8, "b": 1.1, "c": 0.95, "d": 0.86, "e": 1.02}
    rows = []
    for w, cm in speed.items():
        rows.append(_row(w, "cpm", 1.0, dram=0.14, pcm=180.0))
        rows.append(_row(w, "cm", cm, dram=0.26 if cm > 1 else 0.1, pcm=200.0))
        rows.append(_row(w, "cm_obm", 1.0, pcm=96.0))
        rows.append(_row(w, "cm_obm_pd", 1.0, pcm=90.0))
    g = cmmp.groups(rows)
    assert g["cm_losers"]["workloads"] == ["a", "d"]
    assert g["cm_gainers"]["workloads"] == ["b"]
    gain = g["cm_gainers"]["by_mechanism"]
    assert list(gain) == list(cmmp.MECHANISMS)
    assert gain["cpm"]["dram_fraction"] == 0.14 and gain["cm"]["dram_fraction"] == 0.26
    assert gain["cm_obm"]["pcm_avg_ns"] == 96.0
    c = cmmp.cancellations(rows)
    # CM: b gains > 5%, a loses > 5% (c's 5% is not more than 5%): the mean hides both.
    assert c["cm"] == {"gain": 1, "lose": 2, "hides": True}
    assert c["cm_obm"]["hides"] is False
    extra = {
        "cycles": 1,
        "energy_nj": 1.0,
        "preset": "p",
        "scale": 1.0,
        "dram_avg_ns": 1.0,
        "migrations_started": 0,
        "blocks_copied": 0,
        "pcm_accesses": 1,
        "dram_read_fraction": 0.1,
    }
    rows = [{**r, **extra} for r in rows]
    text = cmmp.render(rows, [])
    assert "mean hides: 1 programs gain > 5%, 2 lose > 5%" in text
    assert "CM loses: a, d" in text and "CM gains: b" in text
    assert "cpm       : speedup 1.000, DRAM share 14.0%, PCM service 180.0 ns" in text
    out = tmp_path / "cmmp.json"
    cmmp.write_json(rows, [], out)
    data = json.loads(out.read_text())
    assert data["summary"]["groups"]["cm_gainers"]["workloads"] == ["b"]
    assert data["summary"]["cancellations"]["cm"]["hides"] is True


def test_standin_periods_convert_at_the_measured_ipc(tmp_path):
    # Issue 33 item 3: fp_stream's hot set moves every 10 ms of simulated time, so its spec's
    # instructions per ms is the measured IPC x 4 M cycles, not IPC 1's 4 M.
    for quick in (True, False):
        table = cmmp.QUICK_STANDIN_IPC if quick else cmmp.STANDIN_IPC
        for kind in cmmp.STANDINS:
            assert cmmp.standin_instructions_per_ms(kind, quick) == round(table[kind] * 4_000_000)
    case = cmmp.cases(True, tmp_path, (10, 10), traces=(), standins=("fp_stream",))[0]
    text = Path(case["path"]).read_text()
    assert f"instructions_per_ms = {cmmp.standin_instructions_per_ms('fp_stream', True)}" in text


def test_fp_streams_hot_set_moves_about_every_10_ms_of_simulated_time(tmp_path):
    # A run at --quick's scale past its first touches (about 5 M instructions): the simulated
    # time per instruction of a core times the instructions between moves (10 ms x
    # instructions_per_ms) is within a factor of 2 of 10 ms (at IPC 1 it was about 8 times).
    instructions = (5_000_000, 1_000_000)
    case = cmmp.cases(True, tmp_path, instructions, traces=(), standins=("fp_stream",))[0]
    stats = cmmp.measure(case, "cpm", instructions)
    cycles_per_instruction = stats["measurement"]["cycles_mean"] / instructions[1]
    between_moves_instructions = 10 * cmmp.standin_instructions_per_ms("fp_stream", True)
    ms = between_moves_instructions * cycles_per_instruction / cmmp.CORE_CYCLES_PER_MS
    assert 10 / 2 <= ms <= 10 * 2, ms


def test_the_sensitivity_points_and_hand_offs():
    assert cmmp.hand_off_overrides(0) == (
        "hybrid.cpm_setup_ns=0",
        "hybrid.cpm_flush_dram_line_ns=0",
        "hybrid.cpm_flush_pcm_line_ns=0",
    )
    # The shootdown stalls every mechanism alike: never swept for CPM alone.
    assert cmmp.hand_off_overrides(5) == ("hybrid.cpm_setup_ns=5000",)
    points = cmmp.sensitivity_points()
    assert [p[0] for p in points] == [
        "cpm 0 us",
        "cpm 2 us",
        "cpm 5 us",
        "cpm 10 us",
        "cm low 8",
        "cm low 64",
        "cm equal 8",
        "cm equal 64",
    ]
    assert points[6][1] == ("hybrid.copy_priority=equal", "hybrid.copies_in_flight=8")


def test_the_sensitivity_table_runs_and_renders(tmp_path):
    rows, missing = cmmp.sensitivity(instructions=(5_000, 10_000), workloads=("fp_stream",), workers=2)
    assert missing == []
    assert [r["label"] for r in rows] == [p[0] for p in cmmp.sensitivity_points()]
    by = {r["label"]: r for r in rows}
    for us in cmmp.SENSITIVITY_HAND_OFF_US:
        assert by[f"cpm {us} us"]["speedup_vs"][f"cpm {us} us"] == 1.0
    text = cmmp.render_sensitivity(rows, missing, (5_000, 10_000))
    assert "fp_stream      cm equal 64" in text
    result = CliRunner().invoke(cli.main, ["reproduce", "rowclone-4kb", "--sensitivity"])
    assert result.exit_code != 0 and "--sensitivity applies to cmmp only" in result.output
