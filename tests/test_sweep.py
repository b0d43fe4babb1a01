"""Experiments at scale: sweeps on the process pool and on a local Dask cluster agree, an
interrupted sweep resumes without recomputing or losing finished points, failing points are
recorded, results load as DataFrames and export, bad results files give clear errors, and
plots and reports are written."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bulksim
from bulksim import experiment
from bulksim.experiment import results, sweep

ROOT = Path(__file__).resolve().parents[1]

SMALL = """
name = "small"
description = "scheduler x page policy on two tiny workloads"
[base]
preset = "DDR4_8Gb_x8_2400"
set = ["dram.ranks=2"]
[grid]
"controller.scheduler" = ["fcfs", "frfcfs"]
"controller.page_policy" = ["open", "closed"]
[[workloads]]
name = "random"
pattern = "random"
requests = {requests}
write_fraction = 0.3
seed = 4
[[workloads]]
name = "stream"
pattern = "stream"
requests = {requests}
[[figures]]
metric = "bandwidth_gbps"
x = "controller.page_policy"
hue = "controller.scheduler"
[[tables]]
metrics = ["bandwidth_gbps", "read_latency.mean_ns"]
"""


def write_experiment(tmp_path: Path, requests: int = 2000, extra: str = "") -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL.format(requests=requests) + extra)
    return path


def deterministic(df):
    drop = [c for c in df.columns if c.startswith("host") or c in ("wall_seconds",)]
    return df.drop(columns=drop).sort_values("key").reset_index(drop=True)


def test_pool_and_dask_give_the_same_results(tmp_path):
    from distributed import LocalCluster

    exp = experiment.load(write_experiment(tmp_path))
    assert len(exp.points()) == 8
    pool = sweep.sweep(exp, tmp_path / "pool.db", workers=2, progress=False)
    assert (pool.ok, pool.failed) == (8, 0)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        dask = sweep.sweep(exp, tmp_path / "dask.db", scheduler=cluster.scheduler_address, progress=False)
    assert (dask.ok, dask.failed) == (8, 0)
    a, b = (
        deterministic(results.load(tmp_path / "pool.db")),
        deterministic(results.load(tmp_path / "dask.db")),
    )
    assert len(a) == 8 and a.equals(b)
    assert {
        "controller.scheduler",
        "dram.ranks",
        "bandwidth_gbps",
        "read_latency.p99_ns",
        "commands.ACT",
    } <= set(a)
    assert set(a["dram.ranks"]) == {2}
    # `bulk.mechanism = "auto"` (config) is the column the run resolved it to (stat).
    assert set(a["bulk.mechanism"]) == {"channel"}


def test_interrupted_sweep_resumes_without_recomputing(tmp_path):
    path = write_experiment(tmp_path, requests=400_000)
    db = tmp_path / "results.db"
    cmd = [sys.executable, "-m", "bulksim.cli", "sweep", str(path), "--workers", "1", "--results", str(db)]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.time() + 120
    finished = 0
    while time.time() < deadline and finished < 2:
        time.sleep(0.2)
        if db.exists():
            try:
                with sqlite3.connect(db) as c:
                    finished = c.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0]
            except sqlite3.OperationalError:
                pass
    assert proc.poll() is None, "the sweep finished before it could be interrupted"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(db) as c:
        before = dict(c.execute("SELECT key, finished_at FROM runs WHERE status = 'ok'"))
    assert 2 <= len(before) < 8
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"{8 - len(before)} run, {len(before)} already done, 0 failed" in r.stdout
    with sqlite3.connect(db) as c:
        after = dict(c.execute("SELECT key, finished_at FROM runs WHERE status = 'ok'"))
    assert len(after) == 8
    assert all(after[k] == t for k, t in before.items()), "finished points were recomputed"
    r = subprocess.run(cmd + ["--force"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "8 run, 0 already done" in r.stdout


def test_failing_points_are_recorded_and_the_sweep_goes_on(tmp_path):
    bad = tmp_path / "bad.trace"
    bad.write_text("0,R,0x40\nnot a request\n")
    path = write_experiment(tmp_path, extra='[[workloads]]\nname = "broken"\ntrace = "bad.trace"\n')
    summary = sweep.sweep(experiment.load(path), tmp_path / "r.db", workers=2, progress=False)
    assert (summary.ok, summary.failed) == (8, 4)
    assert "bad.trace:2" in summary.failures[0][1]
    df = results.load(tmp_path / "r.db", include_failed=True)
    assert set(df["status"]) == {"ok", "error"}
    assert df[df["status"] == "error"]["error"].str.contains("TraceError").all()
    # The failed points are retried on the next run; the finished ones are not.
    again = sweep.sweep(experiment.load(path), tmp_path / "r.db", workers=2, progress=False)
    assert (again.skipped, again.failed) == (8, 4)


def test_results_cli_lists_filters_and_exports(tmp_path):
    path = write_experiment(tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "sweep", str(path), "--workers", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    assert db.exists() and (tmp_path / "small" / "report.md").exists()
    report = (tmp_path / "small" / "report.md").read_text()
    assert "| controller.page_policy |" in report and "small-1-bandwidth_gbps.png" in report
    assert (tmp_path / "small" / "small-1-bandwidth_gbps.svg").exists()
    csv, parquet = tmp_path / "out.csv", tmp_path / "out.parquet"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "bulksim.cli",
            "results",
            str(db),
            "--where",
            "controller.scheduler=fcfs",
            "--csv",
            str(csv),
            "--parquet",
            str(parquet),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "4 rows" in r.stdout
    import pandas as pd

    assert len(pd.read_csv(csv)) == 4 and len(pd.read_parquet(parquet)) == 4
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "plot", str(path)], capture_output=True, text=True
    )
    assert r.returncode == 0 and "report.md" in r.stdout


def test_bad_results_files_give_clear_errors(tmp_path):
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(results.ResultsError, match="not a SQLite database"):
        results.load(corrupt)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(results.ResultsError, match="not a bulksim results database"):
        results.ResultsStore(foreign)
    with pytest.raises(results.ResultsError, match="no such results file"):
        results.load(tmp_path / "missing.db")
    path = write_experiment(tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "sweep", str(path), "--results", str(corrupt)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and r.stderr.strip().startswith("error:") and "not a SQLite database" in r.stderr


def test_bad_experiment_files_name_the_problem(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(
        '[grid]\n"controller.schedular" = ["fcfs"]\n[[workloads]]\nname="w"\npattern="stream"\nrequests=5\n'
    )
    with pytest.raises(experiment.ExperimentError, match=r"e\.toml.*did you mean 'controller\.scheduler'"):
        experiment.load(path)
    path.write_text('[[workloads]]\nname = "w"\npatern = "stream"\n')
    with pytest.raises(experiment.ExperimentError, match="unknown key 'patern'"):
        experiment.load(path)


def test_bundled_experiment_is_a_twenty_point_sweep():
    exp = experiment.load(experiment.find("ddr4_policies"))
    points = exp.points()
    assert len(points) == 20
    assert len({p.key() for p in points}) == 20, "every point has its own key"
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "reproduce", "--list"], capture_output=True, text=True
    )
    assert "ddr4_policies" in r.stdout and "20 points" in r.stdout


def test_point_keys_are_stable_and_follow_the_resolved_config(tmp_path):
    exp = experiment.load(write_experiment(tmp_path))
    a = [p.key() for p in exp.points()]
    assert a == [p.key() for p in experiment.load(write_experiment(tmp_path)).points()]
    # The same system spelled differently (default made explicit) is the same point.
    p = exp.points()[0]
    explicit = experiment.Point(
        p.experiment, p.config_path, p.preset, p.overrides + ("dram.channels=1",), p.params, p.workload
    )
    assert explicit.key() == p.key()


def test_config_include_and_check_every_problem(tmp_path):
    (tmp_path / "base.toml").write_text('[dram]\npreset = "DDR3_4Gb_x8_1600"\nranks = 2\n')
    (tmp_path / "top.toml").write_text('include = "base.toml"\n[dram]\nranks = 4\n')
    resolved = bulksim.resolve_config(tmp_path / "top.toml")
    assert 'preset = "DDR3_4Gb_x8_1600"' in resolved and "ranks = 4" in resolved
    (tmp_path / "bad.toml").write_text(
        'include = "base.toml"\n[dram]\nrank = 1\n[controller]\nschedular = "x"\n'
    )
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "config", "check", str(tmp_path / "bad.toml")],
        capture_output=True,
        text=True,
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 2
    assert any("'dram.rank'" in x and "did you mean 'dram.ranks'" in x for x in lines)
    assert any("'controller.schedular'" in x for x in lines)


def test_dask_sweep_keeps_its_claims_fresh_while_a_long_point_runs(monkeypatch):
    """On Dask every point is claimed at once: the sweep must refresh its claims while a point
    runs longer than the heartbeat period, not only when one finishes, or another sweep would
    take them over after CLAIM_TTL_SECONDS and run them again."""
    import time

    from distributed import LocalCluster

    def slow_point(point, row, cache):
        time.sleep(1.0)
        return {"key": point, **row}

    monkeypatch.setattr(sweep, "run_point", slow_point)
    monkeypatch.setattr(sweep, "HEARTBEAT_SECONDS", 0.1)
    beats, rows = [], []
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        sweep._run_dask(
            cluster.scheduler_address,
            [("k", "p")],
            {"k": {"version": "e"}},
            "",
            lambda row, point: rows.append(row),
            lambda: beats.append(time.monotonic()),
        )
    assert rows == [{"key": "p", "version": "e"}]
    assert len(beats) >= 5, f"{len(beats)} heartbeats during a 1 s point with a 0.1 s period"
