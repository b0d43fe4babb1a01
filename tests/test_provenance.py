"""No stale results (issue 32, item 1): the engine's build identity is a hash of its sources and
build profile (crates/bulksim-py/build.rs), shown by `bulksim --version`; the results store
keys rows on it, so a row another engine stored (an older build, or one from before engine
identities) is kept, listed with its engine and never reused; `reproduce cmmp` takes only the
runs this engine kept; cached generated inputs are keyed by their generator's parameters and
the engine, so a changed parameter or engine regenerates them."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from bulksim import _core, cli, experiment, provenance
from bulksim.experiment import results, sweep
from bulksim.reproduce import cmmp, page_allocation, rank_study

ROOT = Path(__file__).resolve().parents[1]
OTHER_ENGINE = "0.1.0+0123456789abcdef"
BEFORE_IDENTITIES = "0.1.0"

EXPERIMENT = """
name = "tiny"
[base]
preset = "DDR4_8Gb_x8_2400"
[grid]
"controller.scheduler" = ["fcfs", "frfcfs"]
[[workloads]]
name = "stream"
pattern = "stream"
requests = 300
[[workloads]]
name = "random"
pattern = "random"
requests = 300
seed = 3
"""


def _engine_sources_id(profile: str) -> str:
    """The identity build.rs computes, recomputed here from the sources as documented
    (docs/experiments.md, "Which engine made a row")."""
    core, py = ROOT / "crates" / "bulksim-core", ROOT / "crates" / "bulksim-py"
    files = [
        ROOT / "Cargo.toml",
        ROOT / "Cargo.lock",
        core / "Cargo.toml",
        py / "Cargo.toml",
        py / "build.rs",
        *(core / "src").rglob("*.rs"),
        *(py / "src").rglob("*.rs"),
    ]
    h = hashlib.sha256()
    for name, path in sorted((f.relative_to(ROOT).as_posix(), f) for f in files):
        text = path.read_bytes().replace(b"\r\n", b"\n")
        h.update(name.encode() + b"\0" + len(text).to_bytes(8, "little") + text)
    h.update(profile.encode())
    return f"{_core.__version__}+{h.hexdigest()[:16]}"


def test_the_engine_identity_is_a_hash_of_the_sources_and_the_build_profile():
    # maturin develop --release (make build): cargo's release profile at opt-level 3.
    release = _engine_sources_id("profile=release;opt-level=3;debug-assertions=false")
    debug = _engine_sources_id("profile=debug;opt-level=1;debug-assertions=true")
    assert _core.ENGINE_ID in (release, debug), "the extension is not built from these sources"
    assert provenance.engine_id() == _core.ENGINE_ID
    result = CliRunner().invoke(cli.main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"bulksim {_core.__version__} (engine {_core.ENGINE_ID})\n"


def _restamp(db: Path, engine_of_row) -> None:
    """Rewrites every row of `db` as if the engine `engine_of_row(rowid)` had stored it: its
    `version` and its key (the same hash a sweep of that engine computes)."""
    with sqlite3.connect(db) as c:
        for rowid, config_toml, workload_json in c.execute(
            "SELECT rowid, config_toml, workload_json FROM runs"
        ).fetchall():
            engine = engine_of_row(rowid)
            key = results.run_key(config_toml, json.loads(workload_json), engine)
            c.execute("UPDATE runs SET version = ?, key = ? WHERE rowid = ?", (engine, key, rowid))


def test_a_row_stored_under_another_engine_identity_is_kept_and_not_reused(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(EXPERIMENT)
    db = tmp_path / "r.db"
    first = sweep.sweep(experiment.load(path), db, workers=1, progress=False)
    assert (first.ok, first.skipped, first.engine) == (4, 0, _core.ENGINE_ID)
    assert set(results.load(db)["version"]) == {_core.ENGINE_ID}

    # The same four points as an older build and a file from before engine identities stored
    # them (rows 1-2 and 3-4).
    _restamp(db, lambda rowid: OTHER_ENGINE if rowid <= 2 else BEFORE_IDENTITIES)
    with sqlite3.connect(db) as c:
        old_rows = sorted(c.execute("SELECT * FROM runs").fetchall())

    runner = CliRunner()
    result = runner.invoke(cli.main, ["sweep", str(path), "--results", str(db), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "4 run, 0 already done, 0 failed" in result.output
    assert (
        f"engine {_core.ENGINE_ID}: 0 reused (stored by this engine); 4 run again had results from "
        f"other engines (2 by {BEFORE_IDENTITIES}, 2 by {OTHER_ENGINE}): kept, not reused"
    ) in result.output
    # Nothing deleted or overwritten: the old rows are all there, beside the new ones.
    with sqlite3.connect(db) as c:
        stored = c.execute("SELECT * FROM runs").fetchall()
    assert len(stored) == 8 and set(old_rows) <= set(stored)
    df = results.load(db)
    assert sorted(df["version"]) == sorted(
        [BEFORE_IDENTITIES] * 2 + [OTHER_ENGINE] * 2 + [_core.ENGINE_ID] * 4
    )
    # The report shows this engine's rows only and says what it left out.
    report = (tmp_path / "tiny" / "report.md").read_text()
    assert "4 finished runs, 0 failed" in report and f"Engine: `{_core.ENGINE_ID}`" in report
    assert f"other engines (2 by `{BEFORE_IDENTITIES}`, 2 by `{OTHER_ENGINE}`)" in report

    # Now this engine's rows are reused, and nothing runs again.
    result = runner.invoke(cli.main, ["sweep", str(path), "--results", str(db), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "0 run, 4 already done, 0 failed" in result.output
    assert f"engine {_core.ENGINE_ID}: 4 reused (stored by this engine)\n" in result.output

    # `bulksim results` shows each row's engine.
    result = runner.invoke(cli.main, ["results", str(db)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[-1] == "version" and lines[-1] == "8 rows"
    assert sorted(line.split()[-1] for line in lines[1:-1]) == sorted(df["version"])


def test_a_worker_running_another_engine_records_an_error_not_results(tmp_path, monkeypatch):
    path = tmp_path / "tiny.toml"
    path.write_text(EXPERIMENT)
    point = experiment.load(path).points()[0]
    config = point.resolved_config()
    row = sweep._row(point, point.key(config), config, OTHER_ENGINE)
    done = sweep.run_point(point, row, str(tmp_path / "traces"))
    assert done["status"] == "error" and done["stats_json"] is None
    assert f"this worker runs engine {_core.ENGINE_ID}, the sweep engine {OTHER_ENGINE}" in done["error"]
    assert not (tmp_path / "traces").exists(), "nothing ran"


def test_a_changed_generator_parameter_or_engine_regenerates_its_input(tmp_path, monkeypatch):
    workload = {"name": "w", "pattern": "random", "requests": 200, "seed": 1}
    first, fmt = experiment.materialise(workload, tmp_path)
    assert fmt == "native" and first.parent == tmp_path and first.name.startswith("w-")
    content = first.read_bytes()
    mtime = first.stat().st_mtime_ns
    # The same parameters (a default spelled out is the same) reuse it, untouched.
    assert experiment.materialise({**workload, "interval": 0}, tmp_path)[0] == first
    assert first.stat().st_mtime_ns == mtime
    # Another seed is another input, generated beside the first, which is kept.
    other, _ = experiment.materialise({**workload, "seed": 2}, tmp_path)
    assert other != first and other.read_bytes() != content and first.read_bytes() == content
    # The same name and parameters under another engine are generated again.
    monkeypatch.setattr(provenance, "engine_id", lambda: OTHER_ENGINE)
    again, _ = experiment.materialise(workload, tmp_path)
    assert again not in (first, other) and again.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (first, other, again))


def test_cached_stand_ins_are_keyed_by_their_generator_parameters(tmp_path, monkeypatch):
    monkeypatch.setattr(rank_study, "SYNTH_DIR", tmp_path)
    monkeypatch.setattr(rank_study, "SYNTH_ACCESSES", 500)
    mcf = rank_study.BY_NAME["synth-mcf"]
    first = rank_study.workload_path(mcf)
    assert first.parent == tmp_path and (first / "thread-0.trace").is_file()
    assert rank_study.workload_path(mcf) == first
    monkeypatch.setattr(rank_study, "SYNTH_ACCESSES", 600)
    longer = rank_study.workload_path(mcf)
    assert longer != first and (first / "thread-0.trace").is_file(), "the old stand-in is kept"
    assert (longer / "thread-0.trace").read_bytes() != (first / "thread-0.trace").read_bytes()

    monkeypatch.setattr(page_allocation, "SYNTH_DIR", tmp_path)
    program = page_allocation.Program("astar", "synth-mcf", "small")
    a = page_allocation.program_path(program, 20_000)
    assert page_allocation.program_path(program, 20_000) == a
    assert page_allocation.program_path(program, 24_000) != a
    assert (
        page_allocation.program_path(page_allocation.Program("x", "synth-mcf", "small", seed=2), 20_000) != a
    )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary left behind"


def test_an_interrupted_generation_leaves_nothing_to_reuse(tmp_path):
    def fails(out: Path) -> None:
        out.write_text("half a trace")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        provenance.cached_input(tmp_path, "w", "trace", {"requests": 1}, fails)
    assert list(tmp_path.iterdir()) == []
    made = provenance.cached_input(
        tmp_path, "w", "trace", {"requests": 1}, lambda out: out.write_text("whole")
    )
    assert made.read_text() == "whole"


def test_cmmp_takes_only_the_runs_this_engine_kept(tmp_path, monkeypatch):
    """Kept runs of another engine (and from before engine identities) sit beside this engine's
    and are never taken; the runs are faked, only the keeping is under test."""
    keep = tmp_path / "runs"
    ran: list[tuple[int, str]] = []

    def fake_run_points(runnable, todo, instructions, workers, stats, keep_dir, names, progress, total):
        for point in todo:
            ran.append(point)
            i, mechanism = point
            stats[point] = _fake_stats(mechanism, 1000 + i)
            cmmp._keep_run(keep_dir, names[point], stats[point])

    def fake_rows(monkeypatch) -> None:
        monkeypatch.setattr(cmmp, "_run_points", fake_run_points)
        monkeypatch.setattr(cmmp, "row", lambda case, stats, cpm: stats.to_dict())

    fake_rows(monkeypatch)
    lines: list[str] = []
    args = dict(
        instructions=(1000, 1000),
        traces=(),
        standins=("fp_stream",),
        standin_bytes=2 << 20,
        keep=keep,
        on_reuse=lines.append,
    )
    monkeypatch.setattr(provenance, "engine_id", lambda: OTHER_ENGINE)
    cmmp.run(**args)
    assert len(ran) == 4 and len(list(keep.iterdir())) == 4
    (keep / "fp_stream-cm-0123456789abcdef0123.json").write_text("{}")  # kept before identities
    before = {p.name: p.stat().st_mtime_ns for p in keep.iterdir()}

    monkeypatch.undo()
    fake_rows(monkeypatch)
    ran.clear()
    cmmp.run(**args)
    assert len(ran) == 4, "another engine's kept runs are not taken"
    assert lines[-1] == (
        f"engine {_core.ENGINE_ID}: 0 reused (stored by this engine); 4 run again had results from "
        f"other engines (4 by {OTHER_ENGINE}): kept, not reused; {keep}: 1 kept before engine "
        "identities (never taken)"
    )
    kept = {p.name: p for p in keep.iterdir()}
    assert len(kept) == 9 and all(kept[name].stat().st_mtime_ns == t for name, t in before.items())
    mine = [n for n in kept if n.endswith(f"-{_core.ENGINE_ID}.json")]
    assert len(mine) == 4 and all(json.loads(kept[n].read_text())["engine"] == _core.ENGINE_ID for n in mine)

    ran.clear()
    cmmp.run(**args)
    assert ran == [] and lines[-1].startswith(f"engine {_core.ENGINE_ID}: 4 reused (stored by this engine); ")


def _fake_stats(mechanism: str, cycles: int):
    """Just enough of a run's stats to keep it (cmmp's rows are faked too)."""
    from bulksim import api

    return api.Stats({"mechanism": mechanism, "cycles": cycles}, "")
