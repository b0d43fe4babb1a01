"""The reproductions' one shape and runner (python/bulksim/reproduce/): every name --list shows
is in the registry, a second run with the same results file runs nothing, --force runs every
case again, a run stopped by a failing case keeps the cases it finished, and --json writes the
one schema."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from bulksim import cli, experiment, provenance
from bulksim import reproduce as reproduce_package
from bulksim.experiment.results import load
from bulksim.reproduce import runner
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction

SCHEMA = {"reproduction", "engine", "cases", "rows", "summary", "missing", "paper"}
#: Calls of `counted_case` in this process (the tiny reproduction runs with one worker, here).
CALLS: list[str] = []
#: Case keys `counted_case` fails on.
FAILING: set[str] = set()


def counted_case(args: dict, inputs: Path) -> dict:
    CALLS.append(args["name"])
    if args["name"] in FAILING:
        raise RuntimeError(f"case {args['name']} failed")
    return {"value": args["x"] * 2, "inputs_folder": inputs.name}


class Tiny(Reproduction):
    name = "tiny"
    title = "two cases that double a number"
    paper = "none"
    columns = ("name", "value")

    def paper_values(self):
        return {"a": 2, "b": 6}

    def plan(self, options: Options) -> Plan:
        cases = [
            Case("a", counted_case, {"name": "a", "x": 1}),
            Case("b", counted_case, {"name": "b", "x": 3}),
        ]
        return Plan(cases, missing=["c: not here"])

    def rows(self, plan, stats, options):
        return [{"name": c.key, "value": stats[c.key]["value"]} for c in plan.cases]

    def summary(self, rows, options):
        return {"total": sum(r["value"] for r in rows)}

    def render(self, rows, summary, plan, options):
        return "\n".join(f"{r['name']} {r['value']}" for r in rows)


@pytest.fixture(autouse=True)
def fresh_counters():
    CALLS.clear()
    FAILING.clear()


def test_the_registry_covers_every_table_name_list_shows():
    r = CliRunner().invoke(cli.main, ["reproduce", "--list"])
    assert r.exit_code == 0, r.output
    tables = [line.split()[0] for line in r.output.splitlines() if line.split()[1] == "table"]
    assert tables == list(reproduce_package.REGISTRY)
    assert len(tables) == 11
    for name in tables:
        assert reproduce_package.get(name).name == name
    # The bundled experiments are listed after them, by their point counts.
    assert set(experiment.bundled()) <= {line.split()[0] for line in r.output.splitlines()}


def test_a_second_run_with_the_same_results_runs_nothing_and_force_runs_all(tmp_path):
    db = tmp_path / "r.db"
    first = runner.reproduce(Tiny(), Options(), db, workers=1)
    assert (first.ran, first.reused, CALLS) == (2, 0, ["a", "b"])
    assert first.rows == [{"name": "a", "value": 2}, {"name": "b", "value": 6}]
    assert first.text == "a 2\nb 6"
    second = runner.reproduce(Tiny(), Options(), db, workers=1)
    assert (second.ran, second.reused, CALLS) == (0, 2, ["a", "b"])
    assert second.rows == first.rows and second.summary == {"total": 8}
    assert [c["reused"] for c in second.cases] == [True, True]
    forced = runner.reproduce(Tiny(), Options(), db, workers=1, force=True)
    assert (forced.ran, forced.reused, CALLS) == (2, 0, ["a", "b", "a", "b"])
    assert forced.rows == first.rows
    # The inputs folder sits beside the results file.
    assert runner.reproduce(Tiny(), Options(), tmp_path / "s.db", workers=1).rows == first.rows
    stats = load(db)
    assert sorted(stats["workload"]) == ["tiny:a", "tiny:b"] and set(stats["experiment"]) == {"tiny"}
    assert set(stats["inputs_folder"]) == {"inputs"}


def test_a_run_stopped_by_a_failing_case_keeps_the_cases_it_finished(tmp_path):
    db = tmp_path / "r.db"
    FAILING.add("b")
    with pytest.raises(RuntimeError, match="case b failed"):
        runner.reproduce(Tiny(), Options(), db, workers=1)
    FAILING.clear()
    again = runner.reproduce(Tiny(), Options(), db, workers=1)
    assert (again.ran, again.reused, CALLS) == (1, 1, ["a", "b", "b"])


def test_another_engine_s_runs_are_not_reused(tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    runner.reproduce(Tiny(), Options(), db, workers=1)
    monkeypatch.setattr(provenance, "engine_id", lambda: "0.0.0+another")
    other = runner.reproduce(Tiny(), Options(), db, workers=1)
    assert (other.ran, other.reused, other.engine) == (2, 0, "0.0.0+another")


def test_json_has_the_one_schema(tmp_path):
    out = tmp_path / "t.json"
    outcome = runner.reproduce(Tiny(), Options(), tmp_path / "r.db", workers=1)
    runner.write_json(outcome, out)
    data = json.loads(out.read_text())
    assert set(data) == SCHEMA
    assert data["reproduction"] == "tiny" and data["engine"] == provenance.engine_id()
    assert data["rows"] == [{"name": "a", "value": 2}, {"name": "b", "value": 6}]
    assert data["summary"] == {"total": 8} and data["missing"] == ["c: not here"]
    assert data["paper"] == {"reference": "none", "values": {"a": 2, "b": 6}}
    assert data["cases"][0] == {
        "key": "a",
        "call": "test_reproduce:counted_case",
        "args": {"name": "a", "x": 1},
        "reused": False,
    }


def test_the_cli_resumes_a_real_reproduction_and_force_reruns_it(tmp_path):
    """rowclone-4kb (six runs of a fraction of a second) through the command line."""
    db, out = tmp_path / "r.db", tmp_path / "t.json"
    args = ["reproduce", "rowclone-4kb", "--results", str(db), "--json", str(out)]
    first = CliRunner().invoke(cli.main, args)
    assert first.exit_code == 0, first.output
    assert "rowclone-4kb: 6 run, 0 reused" in first.output
    rows = json.loads(out.read_text())["rows"]
    second = CliRunner().invoke(cli.main, args)
    assert "rowclone-4kb: 0 run, 6 reused" in second.stderr
    assert json.loads(out.read_text())["rows"] == rows
    # The table on stdout is the same, reused or run.
    assert first.stdout.startswith("RowClone Table 3") and second.stdout == first.stdout
    forced = CliRunner().invoke(cli.main, [*args, "--force"])
    assert "rowclone-4kb: 6 run, 0 reused" in forced.output
    data = json.loads(out.read_text())
    assert set(data) == SCHEMA and data["rows"] == rows and len(data["cases"]) == 6
    assert data["paper"]["values"][1] == {
        "operation": "copy",
        "mechanism": "fpm",
        "latency_ns": 90.0,
        "energy_uj": 0.04,
        "latency_reduction": 11.62,
        "energy_reduction": 74.4,
    }


def test_without_a_terminal_progress_is_a_line_every_few_seconds_even_inside_a_long_run(capsys):
    progress = runner.Progress("long", 2, 0, seconds=0.05)
    time.sleep(0.3)  # one long case: the timer still reports
    progress.step()
    progress.step()
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert sum(line.startswith("long: 0/2 runs (") for line in lines) >= 2, lines
    assert lines[-1].startswith("long: 2/2 runs (")


def test_a_worker_with_another_engine_refuses_to_run_a_case(tmp_path):
    with pytest.raises(RuntimeError, match="install the same bulksim build"):
        runner.run_case(counted_case, {"name": "a", "x": 1}, str(tmp_path), engine="0.0.0+another")
    assert CALLS == []
    stats, _ = runner.run_case(
        counted_case, {"name": "a", "x": 1}, str(tmp_path), engine=provenance.engine_id()
    )
    assert stats["value"] == 2


def test_a_reproduction_on_a_dask_scheduler_stores_and_resumes_like_the_pool(tmp_path):
    from distributed import LocalCluster

    db = tmp_path / "r.db"
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        on_dask = runner.reproduce(Tiny(), Options(), db, scheduler=cluster.scheduler_address)
    assert (on_dask.ran, on_dask.rows) == (2, [{"name": "a", "value": 2}, {"name": "b", "value": 6}])
    local = runner.reproduce(Tiny(), Options(), db, workers=1)
    assert (local.ran, local.reused, local.rows) == (0, 2, on_dask.rows)
