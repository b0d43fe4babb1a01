"""CMMP's metrics (issue 17 item 11; docs/hybrid.md, Measurement) from the stats of full-system
runs with ``sim.measure_instructions``:

- speedup against the CPM run of the same workload: CPM's mean per-core measured cycles over
  this run's (``measurement.cycles_mean``), and ``speedup_last``: the same for the slowest
  core (``measurement.cycles_max``);
- their arithmetic and geometric means over workloads (``summarize``);
- the hybrid memory's figures as one flat row (``row``): the fraction of program requests
  (and of reads) DRAM served, the mean PCM and DRAM service times, every PCM access,
  migrations started, completed and partial, blocks copied, PCM writes elided, periods, and
  the energy: ``hybrid_energy``'s total and its parts (DRAM, PCM, PACT, ART) when the run
  has it, and each device's own (current-based unless its part declares pJ/bit energies).

Every function reads a run's stats as the engine serializes them (``bulksim.run``'s dict, or
the JSON of ``bulksim run``) and raises ``ValueError`` naming what is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bulksim.analysis.metrics import mean

#: The mechanisms, the baseline first.
MECHANISMS = ("cpm", "cm", "cm_obm", "cm_obm_pd")


def _measurement(stats: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    m = stats.get("measurement")
    if not m:
        raise ValueError(
            f"{what}: the stats have no `measurement` (run with sim.measure_instructions above 0)"
        )
    return m


def _cycles(stats: Mapping[str, Any], key: str, what: str) -> float:
    v = float(_measurement(stats, what)[key])
    if not v > 0:
        raise ValueError(f"{what}: measurement.{key} is {v}; expected a positive number of cycles")
    return v


def mean_core_cycles(stats: Mapping[str, Any]) -> float:
    """The mean over measured cores of their measured cycles."""
    return _cycles(stats, "cycles_mean", "mean_core_cycles")


def slowest_core_cycles(stats: Mapping[str, Any]) -> float:
    """The slowest measured core's measured cycles."""
    return _cycles(stats, "cycles_max", "slowest_core_cycles")


def speedup(stats: Mapping[str, Any], cpm: Mapping[str, Any]) -> float:
    """CPM's mean per-core measured cycles over this run's (above 1: faster than CPM)."""
    return mean_core_cycles(cpm) / mean_core_cycles(stats)


def speedup_last(stats: Mapping[str, Any], cpm: Mapping[str, Any]) -> float:
    """CPM's slowest core's measured cycles over this run's slowest core's."""
    return slowest_core_cycles(cpm) / slowest_core_cycles(stats)


def row(stats: Mapping[str, Any], cpm: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Item 11's figures of one run as a flat dict (with ``cpm``, its speedups against it)."""
    h = stats.get("hybrid")
    if not h:
        raise ValueError("row: the stats have no `hybrid` (run with a [hybrid] config)")
    out: dict[str, Any] = {
        "mechanism": h["mechanism"],
        "cycles": int(slowest_core_cycles(stats)),
        "mean_core_cycles": mean_core_cycles(stats),
        "dram_fraction": h["dram_fraction"],
        "dram_read_fraction": h["dram_read_fraction"],
        "pcm_avg_ns": h["pcm_avg_ns"],
        "dram_avg_ns": h["dram_avg_ns"],
        "pcm_accesses": h["pcm_accesses_all"],
        "migrations_started": h["promotions_started"] + h["demotions_started"],
        "migrations_completed": h["promotions_completed"] + h["demotions_completed"],
        "migrations_partial": h["partial_demotions"],
        "blocks_copied": h["blocks_copied"],
        "periods": h["periods"],
    }
    out["pcm_writes_elided"] = h.get("pcm_writes_elided", 0)
    devices = stats.get("memory_devices") or [{"name": "memory", "stats": stats["memory"]}]
    energy = {d["name"]: d["stats"]["energy"]["total_nj"] for d in devices}
    out["energy_nj_by_device"] = energy
    he = stats.get("hybrid_energy")
    if he:
        # Item 2's model: the parts' pJ/bit energies and the PACT's and ART's accesses.
        out["energy_nj_by_component"] = {k: he[f"{k}_nj"] for k in ("dram", "pcm", "pact", "art")}
        out["energy_nj"] = he["total_nj"]
    else:
        out["energy_nj"] = sum(energy.values())
    if cpm is not None:
        out["speedup"] = speedup(stats, cpm)
        out["speedup_last"] = speedup_last(stats, cpm)
    return out


def summarize(rows: Iterable[Mapping[str, Any]], key: str = "speedup") -> dict[str, dict[str, float]]:
    """Per mechanism, the arithmetic and geometric means of ``key`` over its rows (one per
    workload, each with ``mechanism`` and ``key``), mechanisms in ``MECHANISMS`` order."""
    by: dict[str, list[float]] = {}
    for r in rows:
        if key not in r:
            raise ValueError(f"summarize: a row of {r.get('mechanism')!r} has no {key!r}")
        by.setdefault(r["mechanism"], []).append(float(r[key]))
    order = [m for m in MECHANISMS if m in by] + sorted(m for m in by if m not in MECHANISMS)
    return {m: {"arith": mean(by[m], "arith"), "geo": mean(by[m], "geo"), "n": len(by[m])} for m in order}
