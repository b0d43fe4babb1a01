"""`bulksim reproduce rowclone-apps` (RowClone Figures 10-11, Table 5) end to end on what CI
has: the committed small forkbench capture and the shared forkset trace. The rows keep the
relations the mechanisms imply, runs with one and two workers agree exactly, missing captures
are named with the command that makes them, and rowclone-multicore picks up captures and the
SPEC traces when present and says so."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bulksim import cli
from bulksim.paths import shared_traces_dir
from bulksim.reproduce import apps, multicore


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    out = []
    empty = tmp_path_factory.mktemp("no-captures")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BULKSIM_CAPTURES", str(empty))
        for workers in (1, 2):
            path = tmp_path_factory.mktemp("apps") / "apps.json"
            args = ["reproduce", "rowclone-apps", "--quick", "--workers", str(workers), "--json", str(path)]
            args += ["--results", str(path.parent / "r.db")]
            r = CliRunner().invoke(cli.main, args, catch_exceptions=False)
            assert r.exit_code == 0, r.output
            out.append((r.stdout, json.loads(path.read_text())))
    return out


def test_runs_agree_across_workers_and_print_the_papers_numbers(quick_runs):
    (text_a, data_a), (text_b, data_b) = quick_runs
    assert data_a == data_b and text_a == text_b
    assert "RowClone Figure 10" in text_a and "RowClone Table 5" in text_a
    # Table 5's forkbench row (69, 69, 60, 60) and Figure 11's forkbench ZI gain (66%) beside ours.
    assert "( 69)" in text_a and "( 60)" in text_a and "(66%)" in text_a
    names = {r["workload"] for r in data_a["rows"]}
    assert "forkbench-small" in names
    if (shared_traces_dir() / apps.FORKSET).is_file():
        assert "forkset" in names
    assert sorted(r["mechanism"] for r in data_a["rows"] if r["workload"] == "forkbench-small") == sorted(
        multicore.MECHANISMS
    )


def test_rows_keep_the_relations_the_mechanisms_imply(quick_runs):
    rows = quick_runs[0][1]["rows"]
    for name in {r["workload"] for r in rows}:
        by = {r["mechanism"]: r for r in rows if r["workload"] == name}
        base, rc, zi = by["baseline"], by["rowclone"], by["rowclone_zi"]
        # The same program: the same instructions under every mechanism.
        assert base["instructions"] == rc["instructions"] == zi["instructions"]
        # Copies and zeroing in DRAM take bytes off the channel and cycles off the core.
        assert rc["copy_bytes"] + rc["init_bytes"] < base["copy_bytes"] + base["init_bytes"], name
        assert rc["dram_energy_nj"] < base["dram_energy_nj"], name
        assert rc["ipc"] > base["ipc"], name
        # ZI only adds zero lines to the cache: never more channel bytes, never lower IPC.
        assert zi["read_bytes"] <= rc["read_bytes"] and zi["ipc"] >= rc["ipc"], name
    for s in quick_runs[0][1]["summary"]:
        assert sum(s["fractions"].values()) == pytest.approx(1.0)
        assert s["bandwidth_reduction"]["rowclone"] > 0


def test_missing_captures_are_named_with_the_command_that_makes_them(quick_runs, tmp_path, monkeypatch):
    monkeypatch.setenv("BULKSIM_CAPTURES", str(tmp_path))
    found, missing = apps.plan(quick=False)
    for app in apps.APPS:
        if app.capture != "forkbench":
            assert f"{app.capture}: not captured (run `{app.script}` or `make workloads`)" in missing
    # Without the full forkbench capture, the committed small one stands in.
    assert [f[0] for f in found][0] == "forkbench-small"
    (tmp_path / "gcc").mkdir()
    found, missing = apps.plan(quick=False)
    assert ("gcc", "compile", "bulksim", str(tmp_path / "gcc")) in found
    assert not any(m.startswith("gcc:") for m in missing)


def test_multicore_uses_captures_and_spec_traces_when_present(tmp_path, monkeypatch):
    spec = shared_traces_dir() / "ramulator-cpu"
    if not spec.is_dir():
        pytest.skip(f"{spec} is absent (set BULKSIM_SHARED_TRACES to the shared traces folder)")
    monkeypatch.setattr(multicore, "QUICK_TRACE_RECORDS", 2000)
    rows = multicore.run(quick=True, workers=2)
    assert len(rows) == 3 * len(multicore.MECHANISMS)
    for r in rows:
        assert sum(p == "capture:forkbench-small" for p in r.programs) == r.cores // 2
        assert sum(p.startswith("spec:") for p in r.programs) == r.cores // 2
    sources = "; ".join(rows[0].sources)
    assert "captures forkbench-small" in sources and "SPEC CPU2006 traces 403.gcc" in sources
    # Without --quick, the suite's captures present stand for the copy-intensive half.
    captures = tmp_path / "captures"
    (captures / "gcc").mkdir(parents=True)
    monkeypatch.setenv("BULKSIM_CAPTURES", str(captures))
    copy, memory, notes = multicore.real_programs(quick=False, scratch=tmp_path)
    assert copy == [("capture", "gcc", str(captures / "gcc"), "bulksim")]
    assert len(memory) == len(multicore.SPEC_TRACES) and notes == []


def test_a_broken_capture_is_one_error_line_from_the_worker_pool(tmp_path, monkeypatch):
    # The error crosses the process pool (bulksim's exceptions pickle) and the CLI prints it
    # as one line naming the file and record.
    bad = tmp_path / "gcc"
    bad.mkdir()
    (bad / "thread-0.trace").write_text("bulksim-workload 2\nL 0x9000\nX\n")
    monkeypatch.setenv("BULKSIM_CAPTURES", str(tmp_path))
    args = ["reproduce", "rowclone-apps", "--workers", "2", "--results", str(tmp_path / "r.db")]
    r = CliRunner().invoke(cli.main, args)
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert lines[-1].startswith("error: ")
    assert "thread-0.trace:2: access to unmapped address 0x9000" in lines[-1]
    assert "Traceback" not in r.output
