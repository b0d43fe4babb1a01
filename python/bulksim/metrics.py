"""Multi-programmed performance metrics (RowClone Table 7; Eyerman & Eeckhout, Snavely &
Tullsen). Each takes the IPC of every program in the mix when run together (``shared``) and
alone on the same system (``alone``), in the same order.

- weighted speedup: sum of shared / alone (system throughput);
- instruction throughput: sum of shared IPCs;
- harmonic speedup: n / sum of alone / shared (balances throughput and fairness);
- maximum slowdown: max of alone / shared (unfairness);
- per instruction: memory bytes or energy over instructions, from a run's stats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


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
