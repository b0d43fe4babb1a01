"""``bulksim reproduce rank-assignment``: the Rank Assignment paper's main results (Shevgoor et
al., ISPASS 2016; docs/rank_assignment.md) on the Table II system, each workload run until the
same number of DRAM accesses, execution time normalised to a named baseline:

- Figure 2: staggered and simultaneous refresh over no refresh (paper: 1.369; simultaneous
  12.6% below staggered);
- Figure 3: weighted core stall time per refresh (paper: 1.63 staggered, 1.32 with RA), and
  the share of refreshes that stall a given thread, averaged over the threads (paper: ~50%),
  beside the share of refreshes that stall at least one thread (no paper value);
- Figure 7: no refresh, simultaneous, staggered and Rank Assignment (RA) over no refresh
  (paper: RA 18.6% below staggered, 1.114), and RA's reduction against staggered and against
  simultaneous refresh (paper: 18.6%; 4.1%, §VI-B);
- §VI-B: RA's gain without refresh (tRFC 0: 5.9%) and without writes too (2.4%);
- §VI-A: 6 threads on 3 ranks, the 4th idle: the two threads alone on their channel's busy
  rank run 4.8% faster than the four sharing the other channel;
- Table III: the most accesses any thread makes off its preferred rank under RA, for the
  sharing stand-ins (paper: 15.86% MG, 62.59% canneal);
- Figure 8: RA's gain with 50% of pages on a wrong rank (paper: 9.4%), 4 and 8 MB L2;
- §VI-J: one channel of 4 ranks (18.6%) and normal temperature at 32/16/8 Gb (10.8/8.8/7.9%).

The paper's programs are unavailable: bulksim runs the real MSC and SPEC heads and synthetic
stand-ins (``rank_study``); magnitudes differ where the stand-ins' memory intensity differs
(docs/rank_assignment.md says how much). ``--quick``: two workloads, 200,000 DRAM accesses."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from bulksim.analysis import metrics
from bulksim.reproduce import rank_study as rs

#: DRAM accesses per run (the paper's 2 million) and --quick's.
ACCESSES, QUICK_ACCESSES = 2_000_000, 200_000
RA = rs.SYSTEMS["rank_assignment"]
NO_REFRESH = rs.SYSTEMS["no_refresh"]
NO_WRITES = ['controller.write_drain.policy="ideal"']

#: Paper values: normalised times (Figures 2 and 7) and reductions (fractions).
PAPER = {
    ("fig2", "staggered"): 1.369,
    ("fig2", "simultaneous"): 1.369 * (1 - 0.126),
    ("fig7", "staggered"): 1.369,
    ("fig7", "simultaneous"): 1.369 * (1 - 0.126),
    ("fig7", "rank_assignment"): 1.114,
    # Fig. 3 is the share of refreshes that stall a given thread, a mean over threads.
    ("fig3", "per_thread"): 0.50,
    ("fig3", "staggered"): 1.63,
    ("fig3", "rank_assignment"): 1.32,
    ("vi_b", "trfc0"): 0.059,
    ("vi_b", "no_writes"): 0.024,
    ("six_threads", "alone_vs_shared"): 0.048,
    ("tab3", "synth-share15"): 0.1586,
    ("tab3", "synth-share60"): 0.6259,
    # Table III's execution-time decrease by RA: MG 9.0%, canneal -1%.
    ("tab3_ra", "synth-share15"): 0.090,
    ("tab3_ra", "synth-share60"): -0.01,
    ("ra_vs", "staggered"): 0.186,
    ("ra_vs", "simultaneous"): 0.041,
    ("fig8", "error0"): 0.186,
    ("fig8", "error50"): 0.094,
    ("one_channel", "rank_assignment"): 0.186,
    ("normal_temperature", "32"): 0.108,
    ("normal_temperature", "16"): 0.088,
    ("normal_temperature", "8"): 0.079,
}


@dataclass
class Row:
    """One result: an experiment's system on a workload. `exec_time_norm` is the time to the
    N-th DRAM access over `baseline`'s; other experiments put their quantity in `value`."""

    experiment: str
    system: str
    workload: str
    source: str
    exec_time_norm: float | None
    baseline: str
    paper: float | None
    value: float | None = None


def _copies(w: rs.Workload) -> bool:
    return w.copies > 1


def plan(workloads: list[rs.Workload], accesses: int) -> list[rs.Run]:
    """Every run the experiments need, each once (experiments share runs)."""
    runs: dict[tuple[str, tuple[str, ...]], rs.Run] = {}

    def add(w: rs.Workload, overrides: list[str]) -> None:
        key = (w.name, tuple(overrides))
        runs.setdefault(key, rs.Run(w.name, tuple(overrides), accesses))

    for w in workloads:
        for overrides in rs.SYSTEMS.values():
            add(w, overrides)
        add(w, NO_REFRESH + RA)
        add(w, NO_REFRESH + NO_WRITES)
        add(w, NO_REFRESH + NO_WRITES + RA)
        add(w, RA + ["os.mapping_error=0.5"])
        for l2 in (["cache.level.1.size_kb=8192"],):
            add(w, l2)
            add(w, l2 + RA)
            add(w, l2 + RA + ["os.mapping_error=0.5"])
        one_channel = ["dram.channels=1", "dram.ranks=4"]
        add(w, one_channel)
        add(w, one_channel + RA)
        for density in (32, 16, 8):
            normal = [f'dram.preset="DDR4_{density}Gb_x8_1600"', 'dram.temperature="normal"']
            add(w, normal)
            add(w, normal + RA)
        if _copies(w):
            runs[(w.name, tuple(RA + SIX_THREADS))] = rs.Run(
                w.name, tuple(RA + SIX_THREADS), accesses, copies=6
            )
    return list(runs.values())


#: §VI-A: six copies, threads 1-2 on rank 0 and 3-4 on rank 1 (channel 0), 5-6 on rank 2 with
#: rank 3 idle (channel 1).
SIX_THREADS = ["os.thread_ranks=[0, 0, 1, 1, 2, 2]"]


def run(
    quick: bool = False,
    workers: int | None = None,
    workloads: list[str] | None = None,
    accesses: int | None = None,
) -> list[Row]:
    """Runs the experiments on every available workload (two with ``quick``); ``workloads``
    and ``accesses`` narrow a run further (tests)."""
    chosen, runs = plan_runs(quick, workloads, accesses)
    stats = dict(zip([(r.workload, r.overrides) for r in runs], rs.run_all(runs, workers), strict=True))
    return rows_from(chosen, stats)


def plan_runs(
    quick: bool, workloads: list[str] | None = None, accesses: int | None = None
) -> tuple[list[rs.Workload], list[rs.Run]]:
    """The workloads the experiments run on (see ``run``) and every run they need."""
    names = workloads or (QUICK_WORKLOADS if quick else [w.name for w in rs.WORKLOADS])
    chosen = [rs.BY_NAME[n] for n in names if rs.available(rs.BY_NAME[n])]
    if quick and len(chosen) < 2:
        chosen = [rs.BY_NAME[n] for n in QUICK_FALLBACK]
    accesses = accesses or (QUICK_ACCESSES if quick else ACCESSES)
    return chosen, plan(chosen, accesses)


#: --quick's workloads: one real, one 8-thread stand-in (Table III); without the shared traces
#: two stand-ins.
QUICK_WORKLOADS = ["comm1", "synth-share60"]
QUICK_FALLBACK = ["synth-mcf", "synth-share60"]


def rows_from(workloads: list[rs.Workload], stats: dict) -> list[Row]:
    """The table's rows from the runs' stats (keyed by workload and overrides)."""
    rows: list[Row] = []

    def t(w: rs.Workload, overrides: list[str]) -> float:
        return rs.time_ns(stats[(w.name, tuple(overrides))])

    def gain(w: rs.Workload, base: list[str], new: list[str]) -> float:
        """Execution-time reduction of `new` against `base` (the paper's "X% lower")."""
        return 1 - t(w, new) / t(w, base)

    for w in workloads:
        none = t(w, NO_REFRESH)
        for experiment, systems in (
            ("fig2", ["no_refresh", "simultaneous", "staggered"]),
            ("fig7", list(rs.SYSTEMS)),
        ):
            for system in systems:
                rows.append(
                    Row(
                        experiment,
                        system,
                        w.name,
                        w.source,
                        metrics.exec_time_norm(t(w, rs.SYSTEMS[system]), none),
                        "no_refresh",
                        PAPER.get((experiment, system), 1.0 if system == "no_refresh" else None),
                    )
                )
        for system in ("staggered", "rank_assignment"):
            i = stats[(w.name, tuple(rs.SYSTEMS[system]))]["interruptions"]
            rows.append(
                Row(
                    "fig3",
                    system,
                    w.name,
                    w.source,
                    None,
                    "",
                    PAPER[("fig3", system)],
                    i["weighted_stall_per_refresh"],
                )
            )
            # Refreshes that stalled at least one thread: near 1 whenever busy threads share
            # every rank; not the paper's Fig. 3, which is per thread.
            rows.append(
                Row(
                    "fig3",
                    f"{system}:any_thread",
                    w.name,
                    w.source,
                    None,
                    "",
                    None,
                    i["refreshes_stalling_share"],
                )
            )
            shares = [th["refresh_stall_share"] for th in i["threads"]]
            rows.append(
                Row(
                    "fig3",
                    f"{system}:per_thread",
                    w.name,
                    w.source,
                    None,
                    "",
                    PAPER[("fig3", "per_thread")],
                    sum(shares) / len(shares) if shares else None,
                )
            )
        rows.append(
            Row(
                "vi_b",
                "trfc0",
                w.name,
                w.source,
                None,
                "",
                PAPER[("vi_b", "trfc0")],
                gain(w, NO_REFRESH, NO_REFRESH + RA),
            )
        )
        rows.append(
            Row(
                "vi_b",
                "no_writes",
                w.name,
                w.source,
                None,
                "",
                PAPER[("vi_b", "no_writes")],
                gain(w, NO_REFRESH + NO_WRITES, NO_REFRESH + NO_WRITES + RA),
            )
        )
        for against in ("staggered", "simultaneous"):
            rows.append(
                Row(
                    "ra_vs",
                    against,
                    w.name,
                    w.source,
                    None,
                    "",
                    PAPER[("ra_vs", against)],
                    gain(w, rs.SYSTEMS[against], RA),
                )
            )
        rows.append(
            Row("fig8", "error0", w.name, w.source, None, "", PAPER[("fig8", "error0")], gain(w, [], RA))
        )
        rows.append(
            Row(
                "fig8",
                "error50",
                w.name,
                w.source,
                None,
                "",
                PAPER[("fig8", "error50")],
                gain(w, [], RA + ["os.mapping_error=0.5"]),
            )
        )
        l2 = ["cache.level.1.size_kb=8192"]
        rows.append(Row("fig8", "error0_8MB", w.name, w.source, None, "", None, gain(w, l2, l2 + RA)))
        rows.append(
            Row(
                "fig8",
                "error50_8MB",
                w.name,
                w.source,
                None,
                "",
                None,
                gain(w, l2, l2 + RA + ["os.mapping_error=0.5"]),
            )
        )
        one = ["dram.channels=1", "dram.ranks=4"]
        rows.append(
            Row(
                "one_channel",
                "rank_assignment",
                w.name,
                w.source,
                None,
                "",
                PAPER[("one_channel", "rank_assignment")],
                gain(w, one, one + RA),
            )
        )
        for density in (32, 16, 8):
            normal = [f'dram.preset="DDR4_{density}Gb_x8_1600"', 'dram.temperature="normal"']
            rows.append(
                Row(
                    "normal_temperature",
                    str(density),
                    w.name,
                    w.source,
                    None,
                    "",
                    PAPER[("normal_temperature", str(density))],
                    gain(w, normal, normal + RA),
                )
            )
        s = stats[(w.name, tuple(RA))]
        ranks = len(s["interruptions"]["threads"][0]["dram_accesses_by_rank"])
        if not _copies(w):
            counts = [th["dram_accesses_by_rank"] for th in s["interruptions"]["threads"]]
            preferred = [i % ranks for i in range(len(counts))]
            rows.append(
                Row(
                    "tab3",
                    "max_off_preferred",
                    w.name,
                    w.source,
                    None,
                    "",
                    PAPER.get(("tab3", w.name)),
                    metrics.max_off_preferred_share(counts, preferred),
                )
            )
            rows.append(
                Row(
                    "tab3",
                    "rank_assignment",
                    w.name,
                    w.source,
                    None,
                    "",
                    PAPER.get(("tab3_ra", w.name)),
                    gain(w, [], RA),
                )
            )
        key = (w.name, tuple(RA + SIX_THREADS))
        if key in stats:
            th = stats[key]["threads"]
            ipc = [x["instructions"] for x in th]
            shared, alone = sum(ipc[:4]) / 4, sum(ipc[4:6]) / 2
            rows.append(
                Row(
                    "six_threads",
                    "alone_vs_shared",
                    w.name,
                    w.source,
                    None,
                    "",
                    PAPER[("six_threads", "alone_vs_shared")],
                    alone / shared - 1,
                )
            )
    return rows


def render(rows: list[Row], mean: str = "arith") -> str:
    """The report: one table per experiment, a column per system, the mean over workloads and
    the paper's value."""
    out = []
    by_exp: dict[str, list[Row]] = {}
    for r in rows:
        by_exp.setdefault(r.experiment, []).append(r)
    titles = {
        "fig2": "Figure 2: execution time over no refresh",
        "fig7": "Figure 7: execution time over no refresh (RA = rank assignment)",
        "fig3": (
            "Figure 3: weighted core stall time per refresh (staggered, rank_assignment); "
            "share of refreshes that stall at least one thread (:any_thread, no paper value); "
            "share of refreshes that stall a given thread, mean over threads "
            "(:per_thread, the paper's Fig. 3)"
        ),
        "ra_vs": "VI-A/B: RA's execution-time reduction against staggered and against simultaneous refresh",
        "vi_b": "VI-B: RA's execution-time reduction without refresh (trfc0) and also without writes",
        "six_threads": "VI-A: 6 threads on 3 ranks: the two alone on their channel over the four sharing one",
        "tab3": (
            "Table III: most accesses off a thread's preferred rank under RA, and RA's reduction "
            "(paper: MG 15.86% / 9.0% for synth-share15, canneal 62.59% / -1% for synth-share60)"
        ),
        "fig8": "Figure 8: RA's reduction with 0% / 50% of pages on a wrong rank, 4 MB and 8 MB L2",
        "one_channel": "VI-J: RA's reduction on one channel of 4 ranks",
        "normal_temperature": "VI-J: RA's reduction at normal temperature (32 / 16 / 8 Gb)",
    }
    for exp, rs_ in by_exp.items():
        out.append(titles.get(exp, exp))
        systems = list(dict.fromkeys(r.system for r in rs_))
        workloads = list(dict.fromkeys(r.workload for r in rs_))
        widths = [max(24, len(s) + 2) for s in systems]
        out.append(f"{'workload':18}" + "".join(f"{s:>{n}}" for s, n in zip(systems, widths, strict=True)))
        cell: dict[tuple[str, str], float | None] = {}
        paper: dict[tuple[str, str], float | None] = {}
        for r in rs_:
            v = r.exec_time_norm if r.exec_time_norm is not None else r.value
            cell[(r.workload, r.system)] = v
            paper[(r.workload, r.system)] = r.paper
        # A paper value that differs by workload (Table III: MG's, canneal's) goes on the
        # workload's own paper line; one value for all goes on the common paper line.
        per_workload = {s for s in systems if len({paper.get((w, s)) for w in workloads}) > 1}

        for w in workloads:
            out.append(_line(w, [cell.get((w, s)) for s in systems], widths))
            if per_workload:
                out.append(_line("  paper", [paper.get((w, s)) for s in systems], widths))
        means = []
        for s in systems:
            vals = [v for w in workloads if (v := cell.get((w, s))) is not None]
            means.append(_mean(vals, mean))
        out.append(_line(f"mean ({mean})", means, widths))
        common = [None if s in per_workload else paper.get((workloads[0], s)) for s in systems]
        if any(v is not None for v in common):
            out.append(_line("paper", common, widths))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _mean(vals: list[float], kind: str) -> float | None:
    if not vals:
        return None
    # The geometric mean needs positive values; reductions may be negative: then arithmetic.
    return metrics.mean(vals, "geo" if kind == "geo" and all(v > 0 for v in vals) else "arith")


def _line(label: str, values: list[float | None], widths: list[int]) -> str:
    return f"{label:18}" + "".join(_fmt(v, n) for v, n in zip(values, widths, strict=True))


def _fmt(v: float | None, width: int = 24) -> str:
    return f"{'-':>{width}}" if v is None else f"{v:>{width}.3f}"


def write_json(rows: list[Row], path: str) -> None:
    with open(path, "w") as f:
        json.dump([asdict(r) for r in rows], f, indent=1)
        f.write("\n")
