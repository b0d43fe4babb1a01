"""The service-interruption metrics: normalized execution time and its means, the shares of a
thread's DRAM accesses off its preferred rank or off its first two, and the engine's
``interruptions`` stats they read, from a real run."""

from __future__ import annotations

import math

import pytest

import bulksim as bs
from bulksim import api
from bulksim.analysis import metrics


def test_exec_time_norm_is_the_ratio_to_the_baseline():
    # Fig 2's staggered refresh: 1.369 x the no-refresh time.
    assert metrics.exec_time_norm(13.69, 10.0) == pytest.approx(1.369)
    assert metrics.exec_time_norm(5, 5) == 1.0
    # "X% lower" from two normalized times: RA 1.114 against staggered 1.369 is 18.6% lower.
    assert 1 - 1.114 / 1.369 == pytest.approx(0.186, abs=5e-4)
    for bad in (0, -1.0, math.nan, math.inf, True, "3"):
        with pytest.raises(ValueError, match="positive, finite time"):
            metrics.exec_time_norm(bad, 1.0)
        with pytest.raises(ValueError, match="t_baseline"):
            metrics.exec_time_norm(1.0, bad)


def test_means_are_arithmetic_by_default_or_geometric():
    assert metrics.MEANS == ("arith", "geo")
    assert metrics.mean([1.0, 1.5]) == 1.25
    assert metrics.mean([1.0, 4.0], "geo") == pytest.approx(2.0)
    assert metrics.mean([1.2, 1.2, 1.2], "geo") == pytest.approx(1.2)
    # Arithmetic >= geometric, equal only when every value is the same.
    assert metrics.mean([1.1, 1.9]) > metrics.mean([1.1, 1.9], "geo")
    with pytest.raises(ValueError, match="arith, geo"):
        metrics.mean([1.0], "harmonic")
    with pytest.raises(ValueError, match="no values"):
        metrics.mean([])
    with pytest.raises(ValueError, match="positive"):
        metrics.mean([1.0, 0.0], "geo")
    with pytest.raises(ValueError, match="finite"):
        metrics.mean([1.0, math.nan])


def test_off_preferred_and_off_first_two_shares():
    accesses = [60, 20, 15, 5]
    assert metrics.off_preferred_share(accesses, 0) == pytest.approx(0.4)
    assert metrics.off_preferred_share(accesses, 3) == pytest.approx(0.95)
    assert metrics.off_first_two_share(accesses, 0, 1) == pytest.approx(0.2)
    assert metrics.off_first_two_share(accesses, 1, 0) == pytest.approx(0.2)
    assert metrics.off_first_two_share(accesses, 2, 3) == pytest.approx(0.8)
    # All on the preferred rank, or no access at all: nothing off it.
    assert metrics.off_preferred_share([0, 7], 1) == 0.0
    assert metrics.off_preferred_share([0, 0], 0) == 0.0
    assert metrics.off_first_two_share([0, 0, 0], 0, 2) == 0.0
    # Table III: the largest over threads, each against its own preferred rank.
    threads = [[90, 10], [30, 70], [50, 50]]
    assert metrics.max_off_preferred_share(threads, [0, 1, 1]) == pytest.approx(0.5)
    assert metrics.max_off_preferred_share(threads, [0, 0, 0]) == pytest.approx(0.7)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: metrics.off_preferred_share([1, 2], 2), "preferred must be a rank from 0 to 1"),
        (lambda: metrics.off_preferred_share([1, 2], -1), "preferred must be a rank"),
        (lambda: metrics.off_preferred_share([], 0), "no ranks"),
        (lambda: metrics.off_preferred_share([1, -2], 0), "non-negative integers"),
        (lambda: metrics.off_preferred_share([1.5, 2], 0), "non-negative integers"),
        (lambda: metrics.off_first_two_share([1, 2, 3], 1, 1), "different ranks"),
        (lambda: metrics.off_first_two_share([1, 2, 3], 0, 3), "second must be a rank"),
        (lambda: metrics.max_off_preferred_share([[1, 2]], [0, 1]), "one preferred rank per thread"),
    ],
)
def test_bad_arguments_give_one_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_run_reports_interruptions_the_shares_can_read(tmp_path):
    # Two random-access programs, each over 4 MB of its own pages, on 2 channels x 2 ranks:
    # the scatter allocator spreads every thread's pages over all four ranks; a 64 KB cache
    # makes their stores come back as write-backs.
    for thread, seed in ((0, 3), (1, 4)):
        api.generate_random_access(
            tmp_path, region_bytes=4 << 20, accesses=4000, write_percent=30, seed=seed, thread=thread
        )
    sets = ["dram.channels=2", "dram.ranks=2", "cache.level.0.size_kb=64", "sim.interruption_metrics=true"]
    stats = bs.run_workload(workload=tmp_path, overrides=sets)
    m = stats["interruptions"]
    assert m["refreshes"] == stats["memory"]["refreshes"] > 0
    assert 0 <= m["refreshes_stalling_share"] <= 1
    assert 0 <= m["weighted_stall_per_refresh"] <= m["threads_stalled_per_refresh"] <= 2
    assert "per_refresh" not in m, "listed only with sim.record_intervals"
    threads = m["threads"]
    assert len(threads) == 2
    total_reads = sum(sum(t["dram_reads_by_rank"]) for t in threads)
    total_writes = sum(sum(t["dram_writes_by_rank"]) for t in threads)
    assert (total_reads, total_writes) == (stats["memory"]["reads"], stats["memory"]["writes"])
    assert total_writes > 0
    for t in threads:
        by_rank = t["dram_accesses_by_rank"]
        assert len(by_rank) == 4
        assert by_rank == [
            r + w for r, w in zip(t["dram_reads_by_rank"], t["dram_writes_by_rank"], strict=True)
        ]
        assert t["refresh_stall_share"] == pytest.approx(t["refreshes_stalled"] / m["refreshes"])
        preferred = max(range(4), key=by_rank.__getitem__)
        share = metrics.off_preferred_share(by_rank, preferred)
        assert share == pytest.approx(1 - by_rank[preferred] / sum(by_rank))
        # Pages over all four ranks: most accesses are off any one of them.
        assert share > 0.5
    # Without the key the section is absent and nothing else changes.
    plain = bs.run_workload(workload=tmp_path, overrides=sets[:3])
    assert "interruptions" not in plain.to_dict()
    assert plain["memory"]["reads"] == stats["memory"]["reads"]
    assert plain["core_cycles"] == stats["core_cycles"]


def test_a_bad_value_for_the_key_names_it(tmp_path):
    api.generate_random_access(tmp_path, region_bytes=1 << 20, accesses=10)
    with pytest.raises(Exception, match="sim.interruption_metrics"):
        bs.run_workload(workload=tmp_path, overrides=["sim.interruption_metrics=3"])
