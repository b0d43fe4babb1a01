"""The full system from Python and the CLI: workload runs, forkbench, metric formulas, and
the quick forkbench reproduction's trends."""

from __future__ import annotations

import json

import pytest

import bulksim as bs
from bulksim.analysis import metrics
from bulksim.reproduce.forkbench import CONFIG as PAPER_SYSTEM
from test_cli import bulksim


def test_run_workload_from_the_api_and_the_cli(tmp_path):
    fb = bs.generate_forkbench(tmp_path / "fb", array_bytes=1 << 20, pages_updated=32, binary=False)
    assert (fb / "thread-0.trace").read_text().startswith("bulksim-workload 2\n")
    assert (fb / "thread-1.trace").read_text().startswith("bulksim-workload 2 child\n")
    rowclone = ["system.bulk_mechanism=rowclone", "os.allocator=subarray_aware"]
    stats = bs.run_workload(PAPER_SYSTEM, workload=fb, overrides=rowclone)
    assert stats["os"]["forks"] == 1 and stats["os"]["cow_copies"] == 32
    assert stats["memory"]["bulk"]["fpm_bytes"] + stats["memory"]["bulk"]["psm_bytes"] > 0
    assert 0 < stats["ipc"] < 3 and stats["fmtc"] == 0
    assert stats["traffic_bytes"] == 64 * (stats["memory"]["reads"] + stats["memory"]["writes"])
    out = tmp_path / "s.json"
    r = bulksim("run", "--workload", fb, "--json", out, "--config", PAPER_SYSTEM)
    assert r.returncode == 0, r.stderr
    assert "IPC" in r.stdout and "FMTC" in r.stdout
    cpu = json.loads(out.read_text())
    assert cpu["mechanism"] == "cpu" and cpu["fmtc"] > 0
    assert cpu["instructions"] == stats["instructions"], "same program, same instruction count"


def test_bad_workloads_give_one_error_line(tmp_path):
    bad = tmp_path / "w.trace"
    bad.write_text("bulksim-workload 1\nA 0x1000 4096\nS 0x1000\nL 0x9000\n")
    r = bulksim("run", "--workload", bad)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"error: {bad}:4: access to unmapped address 0x9000 (map it first with an `A` event)"
    ]
    bad.write_text("bulksim-workload 1\nF 1\n")
    r = bulksim("run", "--workload", bad)
    assert r.returncode == 1 and "fork of thread 1" in r.stderr
    r = bulksim("run", "--trace", bad, "--workload", bad)
    assert r.returncode == 2 and "exactly one" in r.stderr
    r = bulksim("run", "--workload", bad, "--set", "os.allocator=buddy")
    assert r.returncode == 1 and "subarray_aware" in r.stderr


def test_metric_formulas_on_a_hand_made_mix():
    shared, alone = [0.5, 1.0], [1.0, 2.0]
    assert metrics.weighted_speedup(shared, alone) == pytest.approx(1.0)
    assert metrics.instruction_throughput(shared) == pytest.approx(1.5)
    assert metrics.harmonic_speedup(shared, alone) == pytest.approx(2 / (2 + 2))
    assert metrics.maximum_slowdown([0.5, 1.5], alone) == pytest.approx(2.0)
    stats = {"traffic_bytes": 6400, "instructions": 100, "memory": {"energy": {"total_nj": 50.0}}}
    assert metrics.bandwidth_per_instruction(stats) == 64
    assert metrics.energy_per_instruction(stats) == 0.5
    with pytest.raises(ValueError):
        metrics.weighted_speedup([1.0], [1.0, 2.0])


def test_reproduce_forkbench_quick_shows_the_papers_trends(tmp_path):
    out = tmp_path / "fb.json"
    r = bulksim("reproduce", "forkbench", "--quick", "--json", out, "--results", tmp_path / "r.db")
    assert r.returncode == 0, r.stderr
    assert "FMTC" in r.stdout and "paper:" in r.stdout
    rows = json.loads(out.read_text())["rows"]
    assert {tuple(sorted(x)) for x in rows} == {("N", "S_mb", "dram_energy_nj", "fmtc", "ipc", "mechanism")}
    by = {(x["N"], x["mechanism"]): x for x in rows}
    ns = sorted({x["N"] for x in rows})
    fmtc = [by[(n, "baseline")]["fmtc"] for n in ns]
    fpm_gain = [by[(n, "fpm")]["ipc"] / by[(n, "baseline")]["ipc"] for n in ns]
    assert fmtc == sorted(fmtc) and fmtc[-1] > 0.4, fmtc
    assert fpm_gain == sorted(fpm_gain) and fpm_gain[-1] > 1.5, fpm_gain
    psm_gain = [by[(n, "psm")]["ipc"] / by[(n, "baseline")]["ipc"] for n in ns]
    assert all(0.9 < g < 1.15 for g in psm_gain), psm_gain  # "no considerable improvement"
    n = ns[-1]
    assert (
        by[(n, "fpm")]["dram_energy_nj"]
        < by[(n, "psm")]["dram_energy_nj"]
        < by[(n, "baseline")]["dram_energy_nj"]
    )


def test_table7_improvements_are_means_of_per_mix_ratios():
    from bulksim.reproduce.multicore import Row, improvements

    def row(cores, mix, mech, ws, ms, bpi):
        return Row(cores, mix, mech, [], ws, ws, ws, ms, bpi, bpi)

    rows = []
    for cores in (2, 4, 8):
        rows += [row(cores, 0, "baseline", 1.0, 2.0, 10.0), row(cores, 0, "rowclone", 1.2, 1.5, 8.0)]
        rows += [row(cores, 1, "baseline", 2.0, 4.0, 20.0), row(cores, 1, "rowclone", 2.0, 4.0, 20.0)]
    imp = improvements(rows, "rowclone")
    assert imp["weighted_speedup"] == pytest.approx((10.0, 10.0, 10.0))  # (20% + 0%) / 2
    assert imp["maximum_slowdown"] == pytest.approx((12.5, 12.5, 12.5))  # reduction (25% + 0%) / 2
    assert imp["bandwidth_per_instruction"] == pytest.approx((10.0, 10.0, 10.0))
