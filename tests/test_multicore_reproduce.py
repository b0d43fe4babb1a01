"""`bulksim reproduce rowclone-multicore` (RowClone Table 7) end to end, on reduced programs so
that it runs in seconds: the CLI writes its table and rows, two runs (one and two worker
processes) agree exactly, and the metrics keep the relations their definitions imply and the
paper predicts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bulksim import cli
from bulksim.reproduce import multicore

# The mixes' shape is the full run's (forkbench and random-access programs, one core each);
# only the sizes shrink.
REDUCED = {
    "COPY_PROGRAMS": [("fork", 1 << 20, 32), ("fork", 1 << 20, 64)],
    "MEMORY_PROGRAMS": [("rand", 2 << 20, 10), ("rand", 2 << 20, 40)],
    "ACCESSES": 2000,
    "USE_REAL_PROGRAMS": False,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The reduced reproduction run twice through the CLI, with 1 and 2 workers: (stdout, rows)."""
    out = []
    with pytest.MonkeyPatch.context() as mp:
        for name, value in REDUCED.items():
            mp.setattr(multicore, name, value)
        for workers in (1, 2):
            path = tmp_path_factory.mktemp("multicore") / "rows.json"
            args = [
                "reproduce",
                "rowclone-multicore",
                "--quick",
                "--workers",
                str(workers),
                "--json",
                str(path),
                "--results",
                str(path.parent / "r.db"),
            ]
            r = CliRunner().invoke(cli.main, args, catch_exceptions=False)
            assert r.exit_code == 0, r.output
            out.append((r.stdout, json.loads(path.read_text())["rows"]))
    return out


def test_reproduction_is_deterministic_across_runs_and_workers(runs):
    (text_a, rows_a), (text_b, rows_b) = runs
    assert rows_a == rows_b
    assert text_a == text_b
    assert text_a.startswith("RowClone Table 7")
    for metric in multicore.PAPER:
        assert metric.replace("_", " ") in text_a


def test_one_mix_per_size_with_every_mechanism(runs):
    rows = runs[0][1]
    assert sorted((r["cores"], r["mechanism"]) for r in rows) == sorted(
        (cores, mech) for cores in (2, 4, 8) for mech in multicore.MECHANISMS
    )
    for r in rows:
        # Half copy-intensive (forkbench), half memory-intensive programs.
        assert len(r["programs"]) == r["cores"]
        assert sum(p.startswith("fork") for p in r["programs"]) == r["cores"] // 2


def test_metrics_keep_the_relations_their_definitions_imply(runs):
    for r in runs[0][1]:
        n = r["cores"]
        assert r["weighted_speedup"] > 0 and r["instruction_throughput"] > 0
        # Harmonic speedup is the harmonic mean of shared/alone, weighted speedup / n the
        # arithmetic mean: HM <= AM. The maximum slowdown is at least the mean slowdown.
        assert r["harmonic_speedup"] <= r["weighted_speedup"] / n * (1 + 1e-12)
        assert r["maximum_slowdown"] * r["harmonic_speedup"] >= 1 - 1e-12
        assert r["bandwidth_per_instruction"] > 0 and r["energy_per_instruction"] > 0


def test_mechanisms_rank_as_the_paper_predicts(runs):
    # Copies (RowClone) and also zeroing (RowClone-ZI) in DRAM take their bytes off the channel
    # and their loops off the cores: in every mix each step moves fewer bytes and spends less
    # DRAM energy per instruction and gets more work done (weighted speedup), as in Table 7.
    by = {(r["cores"], r["mechanism"]): r for r in runs[0][1]}
    for cores in (2, 4, 8):
        base, rc, zi = (by[(cores, m)] for m in ("baseline", "rowclone", "rowclone_zi"))
        for metric in ("bandwidth_per_instruction", "energy_per_instruction"):
            assert base[metric] > rc[metric] > zi[metric], (cores, metric)
        assert base["weighted_speedup"] < rc["weighted_speedup"] < zi["weighted_speedup"], cores
