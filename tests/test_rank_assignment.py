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

import pytest

from bulksim import rank_assignment

ROWS = None


def rows():
    global ROWS
    if ROWS is None:
        ROWS = rank_assignment.run(workloads=["synth-mcf", "synth-share60"], accesses=40_000, workers=2)
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

    calls, computed = [], rows()

    def fake_run(quick=False, workers=None):
        calls.append(quick)
        return computed

    monkeypatch.setattr(rank_assignment, "run", fake_run)
    out = tmp_path / "ra.json"
    result = CliRunner().invoke(
        cli.main, ["reproduce", "rank-assignment", "--quick", "--mean", "geo", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert calls == [True]
    assert "Figure 7" in result.output and "mean (geo)" in result.output
    assert "no experiment" not in result.output
    assert len(json.loads(out.read_text())) == len(rows())


def test_quick_reproduction_from_the_cli(tmp_path):
    # The real command, with --quick's workloads and pool; only its accesses are fewer (the
    # whole --quick run takes about a minute on two cores).
    out = tmp_path / "ra.json"
    fewer = "from bulksim import cli, rank_assignment as ra; ra.QUICK_ACCESSES = 20_000; cli.main()"
    r = subprocess.run(
        [sys.executable, "-c", fewer, "reproduce", "rank-assignment", "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    for title in ("Figure 2:", "Figure 3:", "Figure 7:", "Figure 8:", "Table III:", "VI-B:", "VI-J:"):
        assert title in r.stdout
    rows = json.loads(out.read_text())
    # --quick's two workloads: comm1 when the shared traces are here, else a stand-in.
    workloads = {row["workload"] for row in rows}
    assert len(workloads) == 2 and "synth-share60" in workloads
    fig7 = {(r["system"], r["workload"]): r["exec_time_norm"] for r in rows if r["experiment"] == "fig7"}
    assert all(fig7[("no_refresh", w)] == 1.0 for w in workloads)
    assert all(fig7[("staggered", w)] > 1.0 for w in workloads)
