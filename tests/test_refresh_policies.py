"""`bulksim reproduce refresh-policies` (Rank Assignment Figures 10, 11 and peak power) on its
--quick workloads with shorter runs: the table's structure and the relations that hold from
first principles (no refresh is 1.0, removing FGR's overhead never slows a run, simultaneous
refresh puts every rank in refresh at once and staggered only one), and the CLI entry."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bulksim import cli
from bulksim.reproduce import rank_study, refresh_policies

ACCESSES = 20_000


@pytest.fixture(scope="module")
def rows():
    return refresh_policies.run(quick=True, workers=2, accesses=ACCESSES)


def _norm(rows, exp):
    return {(r["system"], r["workload"]): r["exec_time_norm"] for r in rows if r["experiment"] == exp}


def test_every_row_has_the_shared_fields(rows):
    workloads = [w.name for w in rank_study.study_workloads(True)[0]]
    assert len(workloads) == 2
    for r in rows:
        if r["experiment"] == "skipped":
            continue
        assert {
            "experiment",
            "system",
            "workload",
            "source",
            "exec_time_norm",
            "baseline",
            "paper",
        } <= r.keys()
    for exp, systems in (("fig10", refresh_policies.FIG10), ("fig11", refresh_policies.FIG11)):
        norm = _norm(rows, exp)
        assert set(norm) == {(s, w) for s in systems for w in [*workloads, "mean"]}


def test_no_refresh_is_the_baseline_and_refresh_costs_time(rows):
    for exp in ("fig10", "fig11"):
        norm = _norm(rows, exp)
        for (system, _), v in norm.items():
            if system == "no_refresh":
                assert v == 1.0
        for w in {w for _, w in norm}:
            assert norm[("staggered", w)] > 1.0


def test_fgr_without_overhead_is_never_slower(rows):
    # Same REF count, shorter tRFC (320/160 ns against Table I's 480/350 ns).
    norm = _norm(rows, "fig10")
    for w in {w for _, w in norm}:
        assert norm[("fgr4_optimistic", w)] <= norm[("fgr4_realistic", w)]
        assert norm[("fgr2_optimistic", w)] <= norm[("fgr2_realistic", w)]


def test_adaptive_refresh_is_run_and_costs_refresh_time(rows):
    ar = [r for r in rows if r["system"] == "adaptive" and r["experiment"] == "fig11"]
    assert ar and all(r["exec_time_norm"] is not None and r["exec_time_norm"] > 1.0 for r in ar)
    assert "adaptive" in refresh_policies.render(rows)


def test_means_are_the_workloads_arithmetic_means(rows):
    norm = _norm(rows, "fig11")
    workloads = {w for _, w in norm} - {"mean"}
    for s in ("staggered", "elastic", "rank_assignment"):
        assert norm[(s, "mean")] == pytest.approx(sum(norm[(s, w)] for w in workloads) / len(workloads))


def test_peak_power_staggered_one_rank_simultaneous_all(rows):
    # 4 ranks at extended temperature: 4 x 640 ns < 3.9 us, so the system stagger never overlaps.
    peaks = [r for r in rows if r["experiment"] == "peak_power"]
    assert peaks
    for r in peaks:
        assert r["ranks"] == 4
        assert r["most_refreshing_at_once"] == (1 if r["system"] == "staggered" else 4)
        assert r["closed_form_w"] == pytest.approx(3 * (6.34 - 3.83))
        assert r["paper_closed_form_w"] == pytest.approx(17.57)
    for w in {r["workload"] for r in peaks}:
        st, si = (
            next(r for r in peaks if r["workload"] == w and r["system"] == s)
            for s in ("staggered", "simultaneous")
        )
        assert si["peak_w"] - st["peak_w"] == pytest.approx(st["closed_form_w"])


def test_every_scheme_reports_ranks_refreshing_at_once(rows):
    # From the engine's stats, per run: the most ranks refreshing at once and the share of the
    # refresh time with 2, 3 or all 4 ranks at once.
    fig = [r for r in rows if r["experiment"] in ("fig10", "fig11") and r["workload"] != "mean"]
    by = {(r["system"], r["workload"]): r for r in fig}
    for r in fig:
        if r["system"] == "no_refresh":
            assert r["most_ranks_refreshing"] == 0
            continue
        assert 1 <= r["most_ranks_refreshing"] <= 4
        assert 1 >= r["refresh_share_2plus"] >= r["refresh_share_3plus"] >= r["refresh_share_all"] >= 0
        assert (r["refresh_share_2plus"] > 0) == (r["most_ranks_refreshing"] >= 2)
    for w in {w for _, w in by}:
        # On demand the system stagger refreshes one rank at a time, and elastic refresh keeps
        # it; elastic refresh whose ranks refresh on their own puts several ranks at once.
        for s in ("staggered", "elastic", "rank_assignment", "pcd"):
            assert by[(s, w)]["most_ranks_refreshing"] == 1, (s, w)
        assert by[("elastic_free", w)]["most_ranks_refreshing"] >= 2, w
    text = refresh_policies.render(rows)
    assert "Ranks refreshing at once" in text and ">=3 ranks" in text
    assert "RA below ER (elastic)" in text and "RA below ER (elastic_free)" in text


def test_paper_values_are_its_changes_against_staggered():
    assert refresh_policies.paper_norm("no_refresh") == 1.0
    assert refresh_policies.paper_norm("staggered") == 1.369
    assert refresh_policies.paper_norm("elastic") == pytest.approx(1.369 * 0.958, abs=1e-4)
    # RA 15% below ER (abstract): 1.114 / 1.3115.
    assert 1 - refresh_policies.paper_norm("rank_assignment") / refresh_policies.paper_norm(
        "elastic"
    ) == pytest.approx(0.15, abs=0.005)


def test_quick_falls_back_to_a_stand_in_without_the_shared_traces(monkeypatch, tmp_path):
    monkeypatch.setenv("BULKSIM_SHARED_TRACES", str(tmp_path))
    chosen, skipped = rank_study.study_workloads(True)
    assert [w.name for w in chosen] == ["synth-gems", "synth-mcf"]
    assert len(skipped) == 1 and "comm1: skipped" in skipped[0] and str(tmp_path) in skipped[0]


def test_cli_entry_prints_the_tables_and_writes_json(monkeypatch, tmp_path):
    monkeypatch.setattr(refresh_policies, "QUICK_ACCESSES", 5_000)
    out = tmp_path / "rp.json"
    args = ["reproduce", "refresh-policies", "--quick", "--mean", "geo", "--json", str(out)]
    result = CliRunner().invoke(cli.main, [*args, "--workers", "2", "--results", str(tmp_path / "r.db")])
    assert result.exit_code == 0, result.output
    assert {r["time_ns"] for r in json.loads(out.read_text())["rows"] if "time_ns" in r} != set()
    assert "Figure 10" in result.output and "Figure 11" in result.output and "17.57 W" in result.output
    data = json.loads(out.read_text())["rows"]
    assert any(r["workload"] == "mean" and r["source"] == "mean:geo" for r in data)
    listed = CliRunner().invoke(cli.main, ["reproduce", "--list"])
    for name in ("refresh-policies", "address-mapping", "pcm-writes", "page-allocation"):
        assert name in listed.output
