"""What the Rank Assignment reproductions share (docs/rank_assignment.md): the paper's system
(``configs/rank_assignment.toml``), its workloads as bulksim runs them, the named systems
(refresh and allocation policies) as config overrides, and one run of a workload on a system
until a number of DRAM accesses, on a process pool.

Workloads: the real MSC ``comm1`` and ``comm2`` heads and the six SPEC CPU2006 heads of
``../shared/traces`` (post-LLC, looped until the access count), 8 copies each in their own
address spaces; and the synthetic stand-ins of ``bulksim synth`` (the paper's programs are
unavailable): ``synth-gems``, ``synth-lbm``, ``synth-mcf`` (8 copies each), and the 8-thread
``synth-share15`` / ``synth-share60`` (one process whose threads share 15% / 60% of their
accesses). Stand-ins are generated once into ``build/rank_study/`` (not committed), keyed by
their generator's parameters and the engine."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bulksim import api, provenance
from bulksim.paths import REPO, shared_traces_dir

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
    """The workload's files: the shared trace, or the stand-in (generated on first use, keyed
    by its generator's parameters and the engine: ``provenance.cached_input``)."""
    if w.source == "real":
        return shared_traces_dir() / w.origin
    params = {
        "name": w.origin,
        "threads": 8 if w.copies == 1 else 1,
        "accesses": SYNTH_ACCESSES,
        "working_set": "small",
        "seed": 1,
    }
    return provenance.cached_input(
        SYNTH_DIR, w.origin, "synthetic", params, lambda out: _synthesize(out, params)
    )


def _synthesize(out: Path, params: dict) -> None:
    """Writes a `bulksim synth` stand-in with `params` into the new directory `out`."""
    from bulksim import _core

    out.mkdir(parents=True)
    _core.generate_synthetic(
        params["name"],
        os.fspath(out),
        params["threads"],
        params["accesses"],
        params["working_set"],
        params["seed"],
    )


@dataclass(frozen=True)
class Run:
    """One run: a workload on a system (overrides of the Table II config) until `accesses`."""

    workload: str
    overrides: tuple[str, ...]
    accesses: int
    #: The experiment and system names this run is for (carried to the results).
    tags: tuple[tuple[str, str], ...] = ()
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
    """Every run's stats in the order given, each distinct run once, on the reproductions'
    local pool (``reproduce.runner.run_cases``; no results store)."""
    from bulksim.reproduce.runner import run_cases

    for r in runs:  # generate stand-ins once, before the workers need them
        workload_path(BY_NAME[r.workload])
    with tempfile.TemporaryDirectory(prefix="bulksim-rank-study-") as tmp:
        stats = run_cases(cases_of(runs), workers, tmp)
    return [stats[case_key(r)] for r in runs]


def case_key(run: Run) -> str:
    """A run's name as a reproduction's case: its workload, a hash of its overrides, its
    accesses and copies (runs that differ only in their tags are one case)."""
    digest = hashlib.sha256(json.dumps(list(run.overrides)).encode()).hexdigest()[:12]
    return f"{run.workload}-{digest}-{run.accesses}-{run.copies or BY_NAME[run.workload].copies}"


def run_case(args: dict, inputs: Path) -> dict:
    """One run as a reproduction's case (``reproduce/rank_figures.py``): its stats."""
    return run_one(Run(args["workload"], tuple(args["overrides"]), args["accesses"], copies=args["copies"]))


def cases_of(runs: list[Run]):
    """Each distinct run of `runs` once, as a reproduction's case."""
    from bulksim.reproduce.shape import Case

    cases = {}
    for r in runs:
        key = case_key(r)
        if key not in cases:
            args = {
                "workload": r.workload,
                "overrides": list(r.overrides),
                "accesses": r.accesses,
                "copies": r.copies,
            }
            cases[key] = Case(key, run_case, args)
    return list(cases.values())


def time_ns(stats: dict) -> float:
    """Time to the N-th DRAM access (the run's end: every thread stops there)."""
    return float(stats["simulated_ns"])


# Helpers of the per-figure reproductions (refresh-policies, address-mapping, pcm-writes):
# which workloads a run takes, and its rows normalized to a named baseline system.

#: DRAM accesses of a --quick run (the paper's full runs take 2 M).
QUICK_ACCESSES = 200_000
#: DRAM accesses of a full run (§V-D).
FULL_ACCESSES = 2_000_000
#: --quick's workloads: one real (when the shared traces are here) and one stand-in.
QUICK_REAL, QUICK_SYNTHETIC, QUICK_FALLBACK = "comm1", "synth-mcf", "synth-gems"


def study_workloads(quick: bool) -> tuple[list[Workload], list[str]]:
    """The workloads a reproduction runs, and a line for each real one it skips because the
    shared traces are absent. --quick: ``comm1`` (``synth-gems`` without the shared traces)
    and ``synth-mcf``; full: every workload that can run here."""
    if quick:
        names = [QUICK_REAL, QUICK_SYNTHETIC]
    else:
        names = [w.name for w in WORKLOADS]
    chosen = [BY_NAME[n] for n in names if available(BY_NAME[n])]
    skipped = [
        f"{n}: skipped, {shared_traces_dir() / BY_NAME[n].origin} is absent (set BULKSIM_SHARED_TRACES)"
        for n in names
        if not available(BY_NAME[n])
    ]
    if quick and len(chosen) < 2:
        chosen.insert(0, BY_NAME[QUICK_FALLBACK])
    return chosen, skipped


def normalized_rows(
    runs: list[Run],
    stats: list[dict],
    baselines: dict[str, str],
    paper: dict[tuple[str, str], float | None],
    extra=None,
) -> list[dict]:
    """One row per run: ``{"experiment", "system", "workload", "source", "exec_time_norm",
    "baseline", "paper", "time_ns"}`` (plus ``extra(stats)``'s fields), its time over that of
    the run of the same workload and experiment on the experiment's baseline system
    (``baselines[experiment]``). Runs carry ``experiment`` and ``system`` tags."""
    from bulksim.analysis.metrics import exec_time_norm

    tagged = [(dict(r.tags), r, s) for r, s in zip(runs, stats, strict=True)]
    base_time = {
        (t["experiment"], r.workload): time_ns(s)
        for t, r, s in tagged
        if t["system"] == baselines[t["experiment"]]
    }
    rows = []
    for t, r, s in tagged:
        exp, system = t["experiment"], t["system"]
        row = {
            "experiment": exp,
            "system": system,
            "workload": r.workload,
            "source": BY_NAME[r.workload].source,
            "exec_time_norm": exec_time_norm(time_ns(s), base_time[(exp, r.workload)]),
            "baseline": baselines[exp],
            "paper": paper.get((exp, system)),
            "time_ns": time_ns(s),
        }
        if extra is not None:
            row.update(extra(s))
        rows.append(row)
    return rows


def mean_rows(rows: list[dict], kind: str = "arith") -> list[dict]:
    """Per experiment and system, the mean of its rows' ``exec_time_norm`` over workloads
    (``workload`` = "mean", ``source`` = "mean:<kind>"), in the rows' order."""
    from bulksim.analysis.metrics import mean

    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["experiment"], row["system"]), []).append(row)
    out = []
    for (exp, system), members in groups.items():
        out.append(
            {
                "experiment": exp,
                "system": system,
                "workload": "mean",
                "source": f"mean:{kind}",
                "exec_time_norm": mean([m["exec_time_norm"] for m in members], kind),
                "baseline": members[0]["baseline"],
                "paper": members[0]["paper"],
            }
        )
    return out


def change_pct(
    rows: list[dict], experiment: str, system: str, reference: str, workload: str = "mean"
) -> float:
    """Percent change of `system`'s normalized time against `reference`'s (negative: faster),
    in `experiment` for `workload` (default: the mean row)."""
    by = {(r["system"], r["workload"]): r["exec_time_norm"] for r in rows if r["experiment"] == experiment}
    return 100.0 * (by[(system, workload)] / by[(reference, workload)] - 1.0)


def run_deduplicated(runs: list[Run], workers: int | None = None) -> list[dict]:
    """``run_all`` over `runs`, running each distinct (workload, overrides, accesses) once (a
    system shared by two figures, e.g. the no-refresh baseline): stats in the order given."""
    distinct = list(dict.fromkeys(Run(r.workload, r.overrides, r.accesses) for r in runs))
    stats = dict(zip(distinct, run_all(distinct, workers), strict=True))
    return [stats[Run(r.workload, r.overrides, r.accesses)] for r in runs]


def write_json(rows: list[dict], path: str | os.PathLike[str]) -> None:
    """A reproduction's rows as indented JSON (their `--json FILE`)."""
    Path(path).write_text(json.dumps(rows, indent=2) + "\n")
