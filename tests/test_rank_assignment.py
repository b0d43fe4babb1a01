"""`bulksim reproduce rank-assignment` (issue #15): the experiments' rows on a reduced run (one
8-copy stand-in and the 8-thread sharing one, 40,000 DRAM accesses), checked against what must
hold from the model: normalised times of the baseline are 1, Rank Assignment never loses to
the staggered baseline when each thread's pages sit on its own rank, a wrong-rank share of
pages gives back part of the gain, and the sharing stand-in's threads make ~60% of their
accesses off their rank. The CLI's --quick run (two workloads) runs as a user runs it, in its own
process, with its 200,000 DRAM accesses cut to 20,000."""

import json
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import pytest

from bulksim import reproduce
from bulksim.reproduce import rank_assignment, runner
from bulksim.reproduce.shape import Options

# The rows are kept in a module global, not a fixture: under pytest-xdist (`make test`) the
# module's tests go to one worker, so that the reduced reproduction runs once.
pytestmark = pytest.mark.xdist_group("tests/test_rank_assignment.py")

ROWS = None
#: The rows' runs, kept for the command line's test, which then runs nothing.
RESULTS = Path(tempfile.mkdtemp(prefix="bulksim-test-ra-")) / "ra.db"
WORKLOADS = ["synth-mcf", "synth-share60"]
ACCESSES = 40_000


def rows():
    global ROWS
    if ROWS is None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(rank_assignment, "QUICK_WORKLOADS", WORKLOADS)
            mp.setattr(rank_assignment, "QUICK_ACCESSES", ACCESSES)
            outcome = runner.reproduce(
                reproduce.get("rank-assignment"), Options(quick=True), RESULTS, workers=2
            )
        ROWS = [rank_assignment.Row(**r) for r in outcome.rows]
    return ROWS


def pick(experiment, system, workload):
    (r,) = [r for r in rows() if (r.experiment, r.system, r.workload) == (experiment, system, workload)]
    return r


def test_fig7_rows_hold_all_four_systems_normalised_to_no_refresh():
    for w in ("synth-mcf", "synth-share60"):
        systems = {r.system for r in rows() if r.experiment == "fig7" and r.workload == w}
        assert systems == {"no_refresh", "simultaneous", "staggered", "rank_assignment"}
        assert pick("fig7", "no_refresh", w).exec_time_norm == 1.0
        for s in ("simultaneous", "staggered", "rank_assignment"):
            r = pick("fig7", s, w)
            assert r.exec_time_norm > 1.0, "refresh costs time"
            assert (r.baseline, r.source) == ("no_refresh", "synthetic")
    assert pick("fig7", "rank_assignment", "synth-mcf").paper == 1.114


def test_rank_assignment_gains_over_staggered_and_loses_it_with_wrong_ranks():
    stag = pick("fig7", "staggered", "synth-mcf").exec_time_norm
    ra = pick("fig7", "rank_assignment", "synth-mcf").exec_time_norm
    assert ra < stag
    gain0 = pick("fig8", "error0", "synth-mcf").value
    gain50 = pick("fig8", "error50", "synth-mcf").value
    assert gain0 == pytest.approx(1 - ra / stag)
    assert 0 < gain50 < gain0
    # Per refresh, a rank stalls only its own threads under RA: fewer threads stalled.
    assert pick("fig3", "rank_assignment", "synth-mcf").value < pick("fig3", "staggered", "synth-mcf").value


def test_the_sharing_stand_in_makes_most_accesses_off_its_rank():
    off = pick("tab3", "max_off_preferred", "synth-share60").value
    assert 0.55 < off < 0.8
    assert pick("tab3", "max_off_preferred", "synth-share60").paper == 0.6259


def test_rows_render_and_write_as_json(tmp_path):
    text = rank_assignment.render(rows())
    assert "Figure 7" in text and "paper" in text and "mean (arith)" in text
    geo = rank_assignment.render(rows(), mean="geo")
    assert "mean (geo)" in geo
    path = tmp_path / "rows.json"
    rank_assignment.write_json(rows(), path)
    data = json.loads(path.read_text())
    keys = {"experiment", "system", "workload", "source", "exec_time_norm", "baseline", "paper"}
    assert all(keys <= set(d) for d in data)


def test_cli_entry_prints_the_tables_writes_json_and_exits_0(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from bulksim import cli

    computed = rows()
    monkeypatch.setattr(rank_assignment, "QUICK_WORKLOADS", WORKLOADS)
    monkeypatch.setattr(rank_assignment, "QUICK_ACCESSES", ACCESSES)
    out = tmp_path / "ra.json"
    args = ["reproduce", "rank-assignment", "--quick", "--mean", "geo", "--json", str(out)]
    result = CliRunner().invoke(cli.main, [*args, "--results", str(RESULTS)])
    assert result.exit_code == 0, result.output
    # Every run was kept by rows(): nothing runs again.
    assert "rank-assignment: 0 run," in result.output
    assert json.loads(out.read_text())["rows"] == [asdict(r) for r in computed]
    assert "Figure 7" in result.output and "mean (geo)" in result.output
    assert "no experiment" not in result.output
    assert len(json.loads(out.read_text())["rows"]) == len(rows())


def test_quick_reproduction_from_the_cli(tmp_path):
    # The real command, with --quick's workloads and pool; only its accesses are fewer (the
    # whole --quick run takes about a minute on two cores).
    out = tmp_path / "ra.json"
    fewer = (
        "from bulksim import cli; from bulksim.reproduce import rank_assignment as ra; "
        "ra.QUICK_ACCESSES = 20_000; cli.main()"
    )
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            fewer,
            "reproduce",
            "rank-assignment",
            "--quick",
            "--json",
            str(out),
            "--results",
            tmp_path / "r.db",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    for title in ("Figure 2:", "Figure 3:", "Figure 7:", "Figure 8:", "Table III:", "VI-B:", "VI-J:"):
        assert title in r.stdout
    rows = json.loads(out.read_text())["rows"]
    # --quick's two workloads: comm1 when the shared traces are here, else a stand-in.
    workloads = {row["workload"] for row in rows}
    assert len(workloads) == 2 and "synth-share60" in workloads
    fig7 = {(r["system"], r["workload"]): r["exec_time_norm"] for r in rows if r["experiment"] == "fig7"}
    assert all(fig7[("no_refresh", w)] == 1.0 for w in workloads)
    assert all(fig7[("staggered", w)] > 1.0 for w in workloads)


def test_fig3_reports_the_per_thread_share_beside_the_any_thread_share():
    for w in ("synth-mcf", "synth-share60"):
        for system in ("staggered", "rank_assignment"):
            any_thread = pick("fig3", f"{system}:any_thread", w)
            per_thread = pick("fig3", f"{system}:per_thread", w)
            # The paper's ~50% is a mean over threads; the any-thread share has no paper value.
            assert (per_thread.paper, any_thread.paper) == (0.5, None)
            # A thread stalled by a refresh makes that refresh stall at least one thread.
            assert 0 < per_thread.value <= any_thread.value <= 1
    # 8 copies of mcf, two per rank under RA: a refresh stalls at most its rank's two threads,
    # so a thread is stalled by at most about a quarter of the refreshes.
    assert pick("fig3", "rank_assignment:per_thread", "synth-mcf").value < 0.3
    assert pick("fig3", "staggered:per_thread", "synth-mcf").value > 0.5


def test_ra_against_staggered_and_against_simultaneous():
    for w in ("synth-mcf", "synth-share60"):
        vs_stag = pick("ra_vs", "staggered", w)
        vs_simul = pick("ra_vs", "simultaneous", w)
        assert (vs_stag.paper, vs_simul.paper) == (0.186, 0.041)
        ra = pick("fig7", "rank_assignment", w).exec_time_norm
        assert vs_stag.value == pytest.approx(1 - ra / pick("fig7", "staggered", w).exec_time_norm)
        assert vs_simul.value == pytest.approx(1 - ra / pick("fig7", "simultaneous", w).exec_time_norm)
    assert "against simultaneous refresh" in rank_assignment.render(rows())


def test_table_iii_keeps_each_workloads_paper_value():
    # Two sharing workloads in one table: each line's paper value is its own program's (MG for
    # synth-share15, canneal for synth-share60), not the last workload's for both.
    def row(system, workload, paper, value):
        return rank_assignment.Row("tab3", system, workload, "synthetic", None, "", paper, value)

    table = [
        row("max_off_preferred", "synth-share15", 0.1586, 0.16),
        row("rank_assignment", "synth-share15", 0.09, 0.2),
        row("max_off_preferred", "synth-share60", 0.6259, 0.7),
        row("rank_assignment", "synth-share60", -0.01, 0.01),
    ]
    lines = rank_assignment.render(table).splitlines()
    share15 = lines.index(next(x for x in lines if x.startswith("synth-share15")))
    share60 = lines.index(next(x for x in lines if x.startswith("synth-share60")))
    assert lines[share15 + 1].split() == ["paper", "0.159", "0.090"]
    assert lines[share60 + 1].split() == ["paper", "0.626", "-0.010"]
    assert not any(x.startswith("paper") for x in lines), "no common paper line for per-workload values"
    # A paper value shared by every workload still goes on one common line.
    fig8 = [rank_assignment.Row("fig8", "error50", w, "synthetic", None, "", 0.094, 0.05) for w in ("a", "b")]
    assert [x.split() for x in rank_assignment.render(fig8).splitlines() if x.startswith("paper")] == [
        ["paper", "0.094"]
    ]


def test_synth_share15_shares_what_its_name_says():
    # Its threads place their own partitions as they start (MG's threads initialise their own
    # grids), so under RA only the halo reads, 15% of each thread's accesses, leave its rank;
    # a neighbour's halo read no longer places the page on the neighbour's rank (72% before).
    from bulksim.analysis import metrics
    from bulksim.reproduce import rank_study as rs

    s = rs.run_one(rs.Run("synth-share15", tuple(rank_assignment.RA), 40_000))
    counts = [t["dram_accesses_by_rank"] for t in s["interruptions"]["threads"]]
    assert len(counts) == 8
    preferred = [i % len(counts[0]) for i in range(len(counts))]
    assert 0.13 <= metrics.max_off_preferred_share(counts, preferred) <= 0.18
