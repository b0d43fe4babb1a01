"""Peak power of refresh (python/bulksim/analysis/refresh_power.py, the Rank Assignment paper §III-A):
the closed form (R - 1)(6.34 - 3.83) W, and the same peak measured from runs: simultaneous
refresh puts every rank in refresh at once, a system-wide stagger with N x tRFC <= tREFI one
rank at a time, and a per-channel stagger one rank per channel."""

from __future__ import annotations

from pathlib import Path

import pytest

import bulksim
from bulksim import api
from bulksim.analysis.refresh_power import (
    ACTIVE_W,
    REFRESHING_W,
    most_refreshing_at_once,
    peak_power,
    peak_power_difference,
    peak_refresh_power,
    refresh_intervals_from_log,
    refresh_intervals_from_stats,
)

ROOT = Path(__file__).resolve().parents[1]


def test_closed_form_for_eight_ranks_is_17_57_watts():
    # 64 GB of x4 4 Gb chips: 8 ranks; 7 more ranks refreshing at 6.34 W instead of 3.83 W.
    assert peak_power_difference(8) == pytest.approx(7 * 2.51) == pytest.approx(17.57)
    assert peak_power_difference(1) == 0
    assert peak_power_difference(4) == pytest.approx(3 * (REFRESHING_W - ACTIVE_W))
    # The difference is that of the two peaks.
    assert peak_power(8, 8) - peak_power(8, 1) == pytest.approx(peak_power_difference(8))
    assert peak_power(8, 8) == pytest.approx(8 * 6.34) and peak_power(8, 0) == pytest.approx(8 * 3.83)
    with pytest.raises(ValueError, match="ranks: 0"):
        peak_power_difference(0)
    with pytest.raises(ValueError, match="refreshing_at_once: 9"):
        peak_power(8, 9)


def test_most_refreshing_at_once_counts_half_open_overlaps():
    assert most_refreshing_at_once([]) == 0
    # Back to back: [0, 10) then [10, 20) never overlap.
    assert most_refreshing_at_once([("a", 0, 10), ("b", 10, 20)]) == 1
    assert most_refreshing_at_once([("a", 0, 10), ("b", 9, 20)]) == 2
    assert most_refreshing_at_once([("a", 0, 10), ("b", 2, 4), ("c", 3, 12), ("d", 11, 15)]) == 3
    with pytest.raises(ValueError, match="ends before it starts"):
        most_refreshing_at_once([("a", 5, 4)])


# 2 channels x 4 ranks of 32 Gb DDR4-1600 at normal temperature: 8 x tRFC (8 x 512 cycles)
# <= tREFI (6240), so a system-wide stagger can refresh one rank at a time.
EIGHT_RANKS = [
    "dram.channels=2",
    "dram.ranks=4",
    "dram.temperature=normal",
    "sim.stop_after_dram_accesses=20000",
    "sim.record_intervals=true",
]
STAGGERS = {
    "simultaneous": (["controller.refresh.policy=simultaneous"], 8),
    "system": (["controller.refresh.stagger=system"], 1),
    # Each channel spreads its own 4 ranks over tREFI at the same offsets: two at once.
    "channel": (["controller.refresh.stagger=channel"], 2),
}


@pytest.mark.parametrize("stagger", list(STAGGERS))
def test_peak_from_a_run(synth_mcf, tmp_path, stagger):
    config = ROOT / "configs" / "rank_assignment.toml"
    overrides, at_once = STAGGERS[stagger]
    overrides = [*EIGHT_RANKS, *overrides]
    log = tmp_path / "cmds.csv"
    stats = api.run_workload(config, workload=synth_mcf, overrides=overrides, command_log=log, copies=8)
    spec = bulksim.spec(config=config, overrides=overrides)
    t = spec["timing"]
    assert 8 * t["nRFC"] <= t["nREFI"]
    from_stats = refresh_intervals_from_stats(stats)
    from_log = refresh_intervals_from_log(log, t["nRFC"])
    # Many rounds of refresh, every one of the 8 ranks in each.
    assert len(from_log) == len(from_stats) == stats["memory"]["refreshes"] >= 8 * 10
    assert {rank for rank, _, _ in from_log} == {(c, r) for c in range(2) for r in range(4)}
    for intervals in (from_stats, from_log):
        assert most_refreshing_at_once(intervals) == at_once
        assert peak_refresh_power(intervals, 8) == pytest.approx(at_once * 6.34 + (8 - at_once) * 3.83)
    if stagger == "simultaneous":
        staggered = peak_power(8, 1)
        assert peak_refresh_power(from_log, 8) - staggered == pytest.approx(peak_power_difference(8))


def test_intervals_need_recording_and_a_well_formed_log(synth_mcf, tmp_path):
    config = ROOT / "configs" / "rank_assignment.toml"
    overrides = ["sim.stop_after_dram_accesses=3000"]
    stats = api.run_workload(config, workload=synth_mcf, overrides=overrides, copies=8)
    assert stats["memory"]["refreshes"] > 0
    with pytest.raises(ValueError, match="sim.record_intervals = true"):
        refresh_intervals_from_stats(stats)
    with pytest.raises(ValueError, match="full-system"):
        refresh_intervals_from_stats({"memory": {}})
    bad = tmp_path / "bad.csv"
    bad.write_text("cycle,command,channel,rank\n10,REF,0,0\nx,REF,0,1\n")
    with pytest.raises(ValueError, match=r"bad.csv:3: expected cycle, channel and rank numbers"):
        refresh_intervals_from_log(bad, 100)
