"""`bulksim reproduce address-mapping` (Rank Assignment Figure 5) on its --quick workloads with
shorter runs: every mapping x page policy x refresh per workload, normalized to bank-XOR, open
page, no refresh; refresh never makes a run faster; the summary's spread is computed from the
better page policy of each mapping."""

from __future__ import annotations

import pytest

from bulksim.reproduce import address_mapping

ACCESSES = 20_000


@pytest.fixture(scope="module")
def rows():
    return address_mapping.run(quick=True, workers=2, accesses=ACCESSES)


def test_sixteen_systems_per_workload_normalized_to_bank_xor_open(rows):
    fig = [r for r in rows if r["experiment"] == "fig5"]
    workloads = {r["workload"] for r in fig}
    assert len(workloads) == 3  # two workloads and the mean
    for w in workloads:
        mine = [r for r in fig if r["workload"] == w]
        assert len(mine) == 16
        assert {(r["mapping"], r["page_policy"], r["refresh"]) for r in mine} == {
            (m, p, f)
            for m in address_mapping.MAPPINGS
            for p in address_mapping.PAGE_POLICIES
            for f in address_mapping.REFRESH
        }
        base = next(r for r in mine if r["system"] == address_mapping.BASELINE)
        assert base["exec_time_norm"] == 1.0
        assert all(r["baseline"] == address_mapping.BASELINE for r in mine)


def test_refresh_never_makes_a_mapping_faster(rows):
    norm = {(r["system"], r["workload"]): r["exec_time_norm"] for r in rows if r["experiment"] == "fig5"}
    for (system, w), v in norm.items():
        m, p, refresh = system.split("/")
        if refresh == "staggered":
            assert v > norm[(f"{m}/{p}/no_refresh", w)]


def test_spread_is_from_each_mappings_better_page_policy(rows):
    best = address_mapping.best_of_page_policies(rows)
    assert set(best) == {(m, f) for m in address_mapping.MAPPINGS for f in address_mapping.REFRESH}
    norm = {
        r["system"]: r["exec_time_norm"]
        for r in rows
        if r["experiment"] == "fig5" and r["workload"] == "mean"
    }
    for (m, f), (v, policy) in best.items():
        assert v == min(norm[f"{m}/open/{f}"], norm[f"{m}/closed/{f}"])
        assert norm[f"{m}/{policy}/{f}"] == v
    times = [best[(m, "no_refresh")][0] for m in address_mapping.MAPPINGS]
    assert address_mapping.spread_pct(best, "no_refresh") == pytest.approx(
        100 * (max(times) / min(times) - 1)
    )
    text = address_mapping.render(rows)
    assert "spread without refresh" in text and "paper ~25%" in text
