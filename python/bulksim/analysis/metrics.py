"""Multi-programmed performance metrics (RowClone Table 7; Eyerman & Eeckhout, Snavely &
Tullsen). Each takes the IPC of every program in the mix when run together (``shared``) and
alone on the same system (``alone``), in the same order.

- weighted speedup: sum of shared / alone (system throughput);
- instruction throughput: sum of shared IPCs;
- harmonic speedup: n / sum of alone / shared (balances throughput and fairness);
- maximum slowdown: max of alone / shared (unfairness);
- per instruction: memory bytes or energy over instructions, from a run's stats.

Service interruptions (Rank Assignment; docs/rank_assignment.md, Metrics):

- normalized execution time: a run's time over its baseline's (the no-refresh run, or for
  PCM the ``ideal``-writes run), and its mean over workloads, arithmetic (bulksim's *choice*,
  the paper does not say) or geometric;
- off-preferred share: of a thread's DRAM accesses (``interruptions.threads[].
  dram_accesses_by_rank``), the share not on its preferred rank (Table III: the maximum over
  threads), or not on its first two ranks (the page-allocation study).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: The means ``mean`` takes (``--mean`` of the reproductions): arithmetic is the default.
MEANS = ("arith", "geo")


def _pairs(shared: Sequence[float], alone: Sequence[float]) -> list[tuple[float, float]]:
    if len(shared) != len(alone) or not shared:
        raise ValueError(f"need one alone IPC per program: {len(shared)} shared, {len(alone)} alone")
    if any(a <= 0 or s <= 0 for s, a in zip(shared, alone, strict=True)):
        raise ValueError("IPCs must be positive")
    return list(zip(shared, alone, strict=True))


def weighted_speedup(shared: Sequence[float], alone: Sequence[float]) -> float:
    return sum(s / a for s, a in _pairs(shared, alone))


def instruction_throughput(shared: Sequence[float]) -> float:
    return float(sum(shared))


def harmonic_speedup(shared: Sequence[float], alone: Sequence[float]) -> float:
    pairs = _pairs(shared, alone)
    return len(pairs) / sum(a / s for s, a in pairs)


def maximum_slowdown(shared: Sequence[float], alone: Sequence[float]) -> float:
    return max(a / s for s, a in _pairs(shared, alone))


def bandwidth_per_instruction(stats: Mapping[str, Any]) -> float:
    """Memory traffic (bytes) per instruction of a full-system run."""
    return stats["traffic_bytes"] / stats["instructions"]


def energy_per_instruction(stats: Mapping[str, Any]) -> float:
    """DRAM energy (nJ, with I/O) per instruction of a full-system run."""
    return stats["memory"]["energy"]["total_nj"] / stats["instructions"]


def _positive_time(name: str, value: float) -> float:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive, finite time, not {value!r}")
    return float(value)


def exec_time_norm(t: float, t_baseline: float) -> float:
    """Execution time ``t`` over the baseline run's ``t_baseline`` (same unit): the time to
    the N-th DRAM access over the no-refresh run's (PCM: the ``ideal``-writes run's). Below 1
    is faster than the baseline; "X% lower" is 1 minus the ratio of two such values."""
    return _positive_time("t", t) / _positive_time("t_baseline", t_baseline)


def mean(values: Sequence[float], kind: str = "arith") -> float:
    """The arithmetic (``arith``, the default) or geometric (``geo``) mean of normalized
    times; the geometric mean needs positive values."""
    if kind not in MEANS:
        raise ValueError(f"mean: kind must be one of {', '.join(MEANS)}, not {kind!r}")
    values = [float(v) for v in values]
    if not values:
        raise ValueError("mean: no values")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"mean: values must be finite: {values}")
    if kind == "arith":
        return math.fsum(values) / len(values)
    if any(v <= 0 for v in values):
        raise ValueError(f"mean: a geometric mean needs positive values: {values}")
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def _accesses(accesses_by_rank: Sequence[int]) -> list[int]:
    counts = list(accesses_by_rank)
    if not counts:
        raise ValueError("accesses_by_rank: no ranks")
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in counts):
        raise ValueError(f"accesses_by_rank: counts must be non-negative integers: {counts}")
    return counts


def _rank(name: str, rank: int, ranks: int) -> int:
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < ranks:
        raise ValueError(f"{name} must be a rank from 0 to {ranks - 1}, not {rank!r}")
    return rank


def off_preferred_share(accesses_by_rank: Sequence[int], preferred: int) -> float:
    """Share of a thread's DRAM accesses not on rank ``preferred`` (global rank numbers, as in
    ``dram_accesses_by_rank``); 0 for a thread with no DRAM access (*choice*)."""
    counts = _accesses(accesses_by_rank)
    preferred = _rank("preferred", preferred, len(counts))
    total = sum(counts)
    return 0.0 if total == 0 else (total - counts[preferred]) / total


def off_first_two_share(accesses_by_rank: Sequence[int], first: int, second: int) -> float:
    """Share of a thread's DRAM accesses on neither its first nor its second rank (the page
    study's "off the first two"); 0 for a thread with no DRAM access (*choice*)."""
    counts = _accesses(accesses_by_rank)
    first = _rank("first", first, len(counts))
    second = _rank("second", second, len(counts))
    if first == second:
        raise ValueError(f"first and second must be different ranks, both are {first}")
    total = sum(counts)
    return 0.0 if total == 0 else (total - counts[first] - counts[second]) / total


def max_off_preferred_share(accesses_by_thread: Sequence[Sequence[int]], preferred: Sequence[int]) -> float:
    """Table III's figure: the largest ``off_preferred_share`` over threads, each with its own
    preferred rank."""
    if len(accesses_by_thread) != len(preferred) or not preferred:
        raise ValueError(
            f"need one preferred rank per thread: {len(accesses_by_thread)} threads, {len(preferred)} ranks"
        )
    return max(off_preferred_share(a, p) for a, p in zip(accesses_by_thread, preferred, strict=True))
