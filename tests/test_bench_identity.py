"""The stats-identity check's comparison (`bulksim.bench_identity`): two directories of run
outputs compare equal only when every file is byte-identical, and a difference names the keys
that differ."""

import json

from bulksim import bench_identity


def write(directory, name, value):
    directory.mkdir(exist_ok=True)
    (directory / f"{name}.json").write_text(json.dumps(value, indent=1, sort_keys=True) + "\n")


def test_identical_directories_compare_equal(tmp_path, capsys):
    for side in ("a", "b"):
        write(tmp_path / side, "run1", {"stats": {"reads": 3, "refresh": {"count": [1, 2]}}})
        write(tmp_path / side, "run2", {"error": "bad key"})
    assert bench_identity.compare(tmp_path / "a", tmp_path / "b") == 0
    assert capsys.readouterr().out.strip().endswith("2 files, 0 differ")


def test_a_difference_or_a_missing_run_fails_and_names_the_keys(tmp_path, capsys):
    write(tmp_path / "a", "run1", {"stats": {"reads": 3, "refresh": {"count": [1, 2]}}})
    write(tmp_path / "b", "run1", {"stats": {"reads": 3, "refresh": {"count": [1, 5]}}})
    write(tmp_path / "a", "run2", {"stats": {}})
    assert bench_identity.compare(tmp_path / "a", tmp_path / "b") == 1
    out = capsys.readouterr().out
    assert "run1.json: .stats.refresh.count[1]" in out
    assert "run2.json: only in" in out
    assert out.strip().endswith("2 files, 2 differ")


def test_host_figures_are_left_out():
    stats = {"reads": 1, "host": {"wall_seconds": 0.3}, "devices": [{"host": 1, "x": 2}]}
    assert bench_identity.strip_host(stats) == {"reads": 1, "devices": [{"x": 2}]}


def test_every_run_has_a_unique_name_and_the_matrix_covers_the_brief():
    runs = bench_identity.runs(list(bench_identity.GENERATED) + ["bulk"])
    names = [r[0] for r in runs]
    assert len(names) == len(set(names))
    settings = [r[2] for r in runs]
    assert {s["dram.preset"] for s in settings} >= set(bench_identity.PRESETS)
    assert {(s.get("dram.ranks"), s.get("dram.channels")) for s in settings} >= {
        ("1", "1"),
        ("2", "1"),
        ("1", "2"),
        ("2", "2"),
    }
    for key, value in [
        ("controller.scheduler", "fcfs"),
        ("controller.page_policy", "closed"),
        ("controller.refresh.policy", "none"),
        ("controller.refresh.scheme", "elastic"),
        ("controller.refresh.scheme", "pausing"),
        ("controller.write_drain.policy", "equal_priority"),
        ("controller.write_drain.policy", "ideal"),
        ("controller.write_drain.scope", "rank"),
    ]:
        assert any(s.get(key) == value for s in settings), (key, value)
