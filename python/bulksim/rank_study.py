"""What the Rank Assignment reproductions share (docs/rank_assignment.md): the paper's system
(``configs/rank_assignment.toml``), its workloads as bulksim runs them, the named systems
(refresh and allocation policies) as config overrides, and one run of a workload on a system
until a number of DRAM accesses, on a process pool.

Workloads: the real MSC ``comm1`` and ``comm2`` heads and the six SPEC CPU2006 heads of
``../shared/traces`` (post-LLC, looped until the access count), 8 copies each in their own
address spaces; and the synthetic stand-ins of ``bulksim synth`` (the paper's programs are
unavailable): ``synth-gems``, ``synth-lbm``, ``synth-mcf`` (8 copies each), and the 8-thread
``synth-share15`` / ``synth-share60`` (one process whose threads share 15% / 60% of their
accesses). Stand-ins are generated once into ``build/rank_study/`` (not committed)."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bulksim import api
from bulksim.paths import REPO, shared_traces_dir
from bulksim.sweep import die_with_parent

#: The paper's Table II system.
CONFIG = REPO / "configs" / "rank_assignment.toml"
#: Where generated stand-ins are kept between runs.
SYNTH_DIR = REPO / "build" / "rank_study"
#: Accesses per thread of a generated stand-in: more than a full run needs (looped anyway).
SYNTH_ACCESSES = 100_000


@dataclass(frozen=True)
class Workload:
    """A workload of the study: its name, whether it is real or a stand-in, and how it runs."""

    name: str
    source: str  # "real" | "synthetic"
    #: A trace under the shared traces (real), or a `bulksim synth` name (synthetic).
    origin: str
    #: Copies (each its own process); 1 for the 8-thread stand-ins.
    copies: int = 8
    fmt: str | None = None


WORKLOADS = [
    Workload("comm1", "real", "msc/comm1", fmt="msc"),
    Workload("comm2", "real", "msc/comm2", fmt="msc"),
    *(
        Workload(spec, "real", f"ramulator-cpu/{spec}.gz", fmt="ramulator-cpu")
        for spec in ("403.gcc", "435.gromacs", "445.gobmk", "456.hmmer", "458.sjeng", "464.h264ref")
    ),
    Workload("synth-gems", "synthetic", "synth-gems"),
    Workload("synth-lbm", "synthetic", "synth-lbm"),
    Workload("synth-mcf", "synthetic", "synth-mcf"),
    Workload("synth-share15", "synthetic", "synth-share15", copies=1),
    Workload("synth-share60", "synthetic", "synth-share60", copies=1),
]
BY_NAME = {w.name: w for w in WORKLOADS}

#: The named systems of Figure 2 and Figure 7 as overrides of the Table II config.
SYSTEMS = {
    "no_refresh": ['controller.refresh.policy="none"'],
    "simultaneous": ['controller.refresh.policy="simultaneous"'],
    "staggered": [],
    "rank_assignment": ['os.allocator="rank_static"'],
}


def available(w: Workload) -> bool:
    """Whether the workload can run here (a real trace needs ``../shared/traces``)."""
    return w.source == "synthetic" or (shared_traces_dir() / w.origin).exists()


def workload_path(w: Workload) -> Path:
    """The workload's files: the shared trace, or the stand-in (generated on first use)."""
    if w.source == "real":
        return shared_traces_dir() / w.origin
    out = SYNTH_DIR / f"{w.origin}-{SYNTH_ACCESSES}"
    if not (out / ".done").exists():
        from bulksim import _core

        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("thread-*"):
            old.unlink()
        threads = 8 if w.copies == 1 else 1
        _core.generate_synthetic(w.origin, os.fspath(out), threads, SYNTH_ACCESSES, "small", 1)
        (out / ".done").write_text("")
    return out


@dataclass(frozen=True)
class Run:
    """One run: a workload on a system (overrides of the Table II config) until `accesses`."""

    workload: str
    overrides: tuple[str, ...]
    accesses: int
    #: Copies of the workload, when not its usual number.
    copies: int | None = None


def run_one(run: Run) -> dict:
    """The stats of one run (as a dict), with its time to the N-th DRAM access in ns."""
    w = BY_NAME[run.workload]
    sets = [
        f"sim.stop_after_dram_accesses={run.accesses}",
        "sim.interruption_metrics=true",
        *run.overrides,
    ]
    copies = run.copies or w.copies
    stats = api.run_workload(CONFIG, workload=workload_path(w), overrides=sets, fmt=w.fmt, copies=copies)
    return stats.to_dict()


def run_all(runs: list[Run], workers: int | None = None) -> list[dict]:
    """Every run's stats in the order given, on a process pool (one worker per core)."""
    for r in runs:  # generate stand-ins once, before the workers need them
        workload_path(BY_NAME[r.workload])
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(runs) <= 1:
        return [run_one(r) for r in runs]
    with ProcessPoolExecutor(
        max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)
    ) as pool:
        return list(pool.map(run_one, runs))


def time_ns(stats: dict) -> float:
    """Time to the N-th DRAM access (the run's end: every thread stops there)."""
    return float(stats["simulated_ns"])
