"""Peak power of refresh (the Rank Assignment paper, Shevgoor et al., ISPASS 2016, §III-A).

This module owns the paper's peak-power argument for staggering refreshes: a rank that is
refreshing draws more than a busy one, so the peak of the memory system is set by how many
ranks refresh at once. It gives the closed form for simultaneous against staggered refresh,
and the same peak measured from a run, either from its recorded unavailability intervals
(stats ``unavailable[].intervals``, ``sim.record_intervals = true``) or from its command log
(each REF keeps its rank refreshing for tRFC). Per-rank powers are the paper's Micron power
calculator figures for a rank of x4 4 Gb DDR4 chips (8 ranks make 64 GB).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Mapping
from typing import Any

# The paper's per-rank powers (Micron DDR4 power calculator), in W.
REFRESHING_W = 6.34  # a rank during a refresh (tRFC)
ACTIVE_W = 3.83  # a rank serving 30% of its bandwidth

# One rank's refresh: (rank, start, end), the rank refreshing in [start, end) memory cycles.
# A rank is any hashable name, e.g. (channel, rank).
Interval = tuple[Any, int, int]


def peak_power_difference(
    ranks: int, refreshing_w: float = REFRESHING_W, active_w: float = ACTIVE_W
) -> float:
    """Peak power of simultaneous refresh (all `ranks` refreshing) minus that of a stagger
    that refreshes one rank at a time (one refreshing, the others active), in W:
    (R - 1) x (refreshing - active); 17.57 W for 8 ranks."""
    if ranks < 1:
        raise ValueError(f"ranks: {ranks}; expected at least 1")
    return (ranks - 1) * (refreshing_w - active_w)


def peak_power(
    ranks: int, refreshing_at_once: int, refreshing_w: float = REFRESHING_W, active_w: float = ACTIVE_W
) -> float:
    """Power (W) of `ranks` ranks when `refreshing_at_once` of them refresh and the others are
    active."""
    if not 0 <= refreshing_at_once <= ranks:
        raise ValueError(f"refreshing_at_once: {refreshing_at_once}; expected 0 to {ranks} ranks")
    return refreshing_at_once * refreshing_w + (ranks - refreshing_at_once) * active_w


def most_refreshing_at_once(intervals: Iterable[Interval]) -> int:
    """The largest number of ranks refreshing at the same memory cycle. Intervals are
    half-open: one ending at cycle c and another starting at c do not overlap."""
    events = []
    for _, start, end in intervals:
        if end < start:
            raise ValueError(f"refresh interval [{start}, {end}): ends before it starts")
        if end > start:
            events += [(start, 1), (end, -1)]
    # At equal cycles the ends (-1) come first.
    most = now = 0
    for _, step in sorted(events):
        now += step
        most = max(most, now)
    return most


def peak_refresh_power(
    intervals: Iterable[Interval], ranks: int, refreshing_w: float = REFRESHING_W, active_w: float = ACTIVE_W
) -> float:
    """Peak power (W) of `ranks` ranks over a run whose refreshes are `intervals`: the most
    ranks refreshing at once at `refreshing_w`, the others at `active_w`."""
    return peak_power(ranks, most_refreshing_at_once(intervals), refreshing_w, active_w)


def refresh_intervals_from_stats(stats: Mapping[str, Any]) -> list[Interval]:
    """The refresh intervals of a full-system run's stats (``unavailable``, one entry per
    channel), each rank named (channel, rank). An interval runs from the cycle its REF fell
    due to the end of its tRFC, so it includes the wait for the rank's precharge-all: it can
    only overstate overlaps (`refresh_intervals_from_log` has the REFs alone)."""
    channels = stats.get("unavailable")
    if channels is None:
        raise ValueError("stats: no `unavailable` section; expected a full-system run's stats")
    out = []
    for channel, u in enumerate(channels):
        refreshes = sum(r["refreshes"] for r in u["ranks"])
        recorded = [i for i in u.get("intervals", []) if i["cause"] == "refresh"]
        if refreshes and not recorded:
            raise ValueError(
                "stats: refresh intervals were not recorded; run with sim.record_intervals = true"
            )
        out += [((channel, i["rank"]), i["start_mem_cycles"], i["end_mem_cycles"]) for i in recorded]
    return out


def refresh_intervals_from_log(command_log: str | os.PathLike[str], nrfc: int) -> list[Interval]:
    """The refresh intervals of a command log (CSV as ``--command-log`` writes it): each REF
    keeps its rank, named (channel, rank), refreshing for `nrfc` cycles (the resolved spec's
    nRFC: ``bulksim.spec(...)["timing"]["nRFC"]``)."""
    out = []
    with open(command_log, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if row.get("command") != "REF":
                continue
            try:
                cycle = int(row["cycle"])
                rank = (int(row["channel"]), int(row["rank"]))
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{command_log}:{line}: expected cycle, channel and rank numbers") from None
            out.append((rank, cycle, cycle + nrfc))
    return out
