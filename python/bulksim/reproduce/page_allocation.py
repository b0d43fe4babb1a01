"""`bulksim reproduce page-allocation`: the Rank Assignment paper's capacity study (Shevgoor et
al., ISPASS 2016, §V-E, §VI-C; docs/rank_assignment.md, "Reproduction: page-allocation"):
4 programs on 4 cores, functional mode (cores and OS only), 0.125 GB ranks, the baseline CLOCK
allocator (``clock``) against the paper's modified CLOCK (``rank_clock``): page faults, and the
share of each thread's accesses on neither its first nor its second rank (paper: 30%).

The paper's mixes are SPEC CPU2006 programs that are not available; each is stood in for by a
``bulksim synth`` stand-in with a working set that plays its part (*choice*, docs):
lbm-libquantum-astar-milc and astar-milc-soplex-xalancbmk. Each program runs a fixed number of
instructions (2.5 B in the paper; --quick 50 M): its stand-in is generated with as many
accesses as its MPKI gives in that many instructions, once, into ``build/rank_study/`` (keyed
by its generator's parameters and the engine)."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bulksim import api, provenance
from bulksim.reproduce.figures import Panel, column, draw
from bulksim.reproduce.rank_study import CONFIG, SYNTH_DIR
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction


@dataclass(frozen=True)
class Program:
    """A paper program and the stand-in that plays it: generator, working set, seed."""

    paper: str
    synth: str
    working_set: str
    seed: int = 1


#: Accesses per 1000 instructions of each generator (docs/rank_assignment.md, stand-ins).
MPKI = {"synth-gems": 30, "synth-lbm": 40, "synth-mcf": 25}
#: The two mixes (*choice*: streaming programs by the streaming stand-ins, large sets where
#: the program's is large; astar by small-set pointer chasing, milc and soplex by large-set
#: random reads, xalancbmk by a small-set stencil).
MIXES = {
    "lbm-libquantum-astar-milc": [
        Program("lbm", "synth-lbm", "large"),
        Program("libquantum", "synth-gems", "large"),
        Program("astar", "synth-mcf", "small"),
        Program("milc", "synth-mcf", "large"),
    ],
    "astar-milc-soplex-xalancbmk": [
        Program("astar", "synth-mcf", "small"),
        Program("milc", "synth-mcf", "large"),
        Program("soplex", "synth-mcf", "large", seed=2),
        Program("xalancbmk", "synth-gems", "small"),
    ],
}
ALLOCATORS = ["clock", "rank_clock"]
#: Instructions per program: the paper's 2.5 B, --quick 50 M.
FULL_INSTRUCTIONS = 2_500_000_000
QUICK_INSTRUCTIONS = 50_000_000
#: The study's system (§V-E): functional, 4 cores, 4 ranks of 128 MiB (1 channel x 4 ranks,
#: *choice*: the paper does not give the organisation), no looping, no DRAM-access stop.
SYSTEM = (
    'sim.mode="functional"',
    "system.cores=4",
    "system.loop_workloads=false",
    "sim.stop_after_dram_accesses=0",
    "dram.channels=1",
    "dram.ranks=4",
    "dram.rank_capacity_mb=128",
)
PAPER_OFF_FIRST_TWO = 0.30  # §VI-C: 30% of a thread's accesses on neither of its two ranks


def program_path(p: Program, instructions: int) -> Path:
    """The stand-in's directory for `instructions` instructions (generated on first use, keyed
    by its generator's parameters and the engine: ``provenance.cached_input``)."""
    params = {
        "name": p.synth,
        "threads": 1,
        "accesses": math.ceil(instructions * MPKI[p.synth] / 1000),
        "working_set": p.working_set,
        "seed": p.seed,
        "demand_paged": True,
    }

    def make(out: Path) -> None:
        from bulksim import _core

        out.mkdir(parents=True)
        _core.generate_synthetic(p.synth, os.fspath(out), 1, params["accesses"], p.working_set, p.seed)
        demand_paged(out / "thread-0.trace")

    return provenance.cached_input(SYNTH_DIR, f"{p.synth}-{p.working_set}", "synthetic", params, make)


def demand_paged(trace: Path) -> None:
    """Turns the stand-in's resident maps (``N``: frames without faults) into plain maps
    (``A``: a fault on each page's first touch), so the study counts every fault: the paper's
    programs start from nothing in functional mode. Only the header's lines change."""
    tmp = trace.with_suffix(".tmp")
    with trace.open() as src, tmp.open("w") as dst:
        for line in src:
            if line.startswith("N "):
                line = "A " + line[2:]
            elif not line.startswith(("bulksim-workload", "#")):
                dst.write(line)
                break
            dst.write(line)
        shutil.copyfileobj(src, dst)
    tmp.replace(trace)


def run_stats(mix: str, allocator: str, instructions: int) -> dict:
    """The stats of `mix` under `allocator`, each program `instructions` long."""
    return api.run_mix(
        CONFIG,
        programs=[(program_path(p, instructions), "bulksim") for p in MIXES[mix]],
        overrides=[*SYSTEM, f'os.allocator="{allocator}"'],
    ).to_dict()


def run_case(args: dict, inputs: Path) -> dict:
    """One mix under one allocator as a reproduction's case: its stats."""
    return run_stats(args["mix"], args["allocator"], args["instructions"])


def rows_of(mix: str, allocator: str, stats: dict) -> list[dict]:
    """One row per thread of a mix's run under `allocator`."""
    programs = MIXES[mix]
    rows = []
    for i, (p, t) in enumerate(zip(programs, stats["os"]["threads"], strict=True)):
        total = sum(t["accesses_by_rank"])
        rows.append(
            {
                "experiment": "page_allocation",
                "system": allocator,
                "workload": mix,
                "source": "synthetic",
                # Functional mode has no time: the shared row fields stay, without a value.
                "exec_time_norm": None,
                "baseline": "clock",
                "thread": i,
                "program": p.paper,
                "stand_in": f"{p.synth} ({p.working_set}, seed {p.seed})",
                "instructions": stats["threads"][i]["instructions"],
                "preferred_rank": t["preferred_rank"],
                "second_rank": t["second_rank"],
                "accesses_by_rank": t["accesses_by_rank"],
                "off_first_two_share": t["off_first_two"] / total if total else 0.0,
                "off_preferred_share": t["off_preferred"] / total if total else 0.0,
                "page_faults": t["page_faults"],
                "evictions": t["evictions"],
                "run_page_faults": stats["os"]["page_faults"],
                "paper": PAPER_OFF_FIRST_TWO,
            }
        )
    return rows


def run(
    quick: bool = False, workers: int | None = None, mean: str = "arith", instructions: int | None = None
) -> list[dict]:
    """One row per thread of each mix under each allocator; `instructions` replaces the
    per-program instruction count (tests use fewer). `mean` is unused (no normalized times)."""
    instructions = instructions or (QUICK_INSTRUCTIONS if quick else FULL_INSTRUCTIONS)
    jobs = [(mix, a, instructions) for mix in MIXES for a in ALLOCATORS]
    from bulksim.reproduce.runner import run_cases

    for mix in MIXES:  # generate the stand-ins once, before the workers need them
        for p in MIXES[mix]:
            program_path(p, instructions)
    cases = [Case(f"{m}-{a}", run_case, {"mix": m, "allocator": a, "instructions": n}) for m, a, n in jobs]
    with tempfile.TemporaryDirectory(prefix="bulksim-page-allocation-") as tmp:
        stats = run_cases(cases, workers, tmp)
    return [row for c in cases for row in rows_of(c.args["mix"], c.args["allocator"], stats[c.key])]


class PageAllocation(Reproduction):
    name = "page-allocation"
    title = "Rank Assignment §VI-C: clock vs rank_clock, functional, 128 MB ranks"
    paper = "Shevgoor et al., Rank Assignment, ISPASS 2016, §V-E and §VI-C"

    def paper_values(self) -> dict:
        return {"off_first_two_share": PAPER_OFF_FIRST_TWO}

    def plan(self, options: Options) -> Plan:
        """Each mix under each allocator (the mean option does not apply: no normalized times)."""
        instructions = QUICK_INSTRUCTIONS if options.quick else FULL_INSTRUCTIONS
        return Plan(
            [
                Case(f"{mix}-{a}", run_case, {"mix": mix, "allocator": a, "instructions": instructions})
                for mix in MIXES
                for a in ALLOCATORS
            ]
        )

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        return [row for c in plan.cases for row in rows_of(c.args["mix"], c.args["allocator"], stats[c.key])]

    def summary(self, rows: list[dict], options: Options) -> list[dict]:
        return summary(rows)

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        return render(rows)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """§VI-C as bars: a panel per mix, x = each thread's program, a bar per allocator of the
        share of its accesses off its first two ranks, the paper's 30% beside rank_clock's."""
        if not rows:
            return []  # nothing ran (every input missing): no empty figure
        panels = []
        for mix in dict.fromkeys(r["workload"] for r in rows):
            mine = [r for r in rows if r["workload"] == mix]
            threads = list(dict.fromkeys((r["thread"], r["program"]) for r in mine))
            at = {(r["system"], r["thread"]): r for r in mine}
            ids = [t for t, _ in threads]

            def percent(values: list) -> list[float | None]:
                return [None if v is None else 100 * v for v in values]

            allocators = list(dict.fromkeys(r["system"] for r in mine))
            panels.append(
                Panel(
                    mix,
                    [f"{t}: {p}" for t, p in threads],
                    {a: percent(column(at, a, ids, "off_first_two_share")) for a in allocators},
                    "accesses off the first two ranks (%)",
                    # The paper's 30% is its modified CLOCK's (every row carries it).
                    paper={"rank_clock": percent(column(at, "rank_clock", ids, "paper"))},
                )
            )
        title = "Rank Assignment §VI-C: per thread, each mix in its own panel"
        return [draw(out / f"{self.name}-vi-c.png", title, panels)]


def summary(rows: list[dict]) -> list[dict]:
    """Per mix and allocator: the run's page faults, the mean and largest off-first-two share
    over its threads."""
    out = []
    for mix in dict.fromkeys(r["workload"] for r in rows):
        for a in ALLOCATORS:
            mine = [r for r in rows if r["workload"] == mix and r["system"] == a]
            if not mine:
                continue
            shares = [r["off_first_two_share"] for r in mine]
            out.append(
                {
                    "workload": mix,
                    "system": a,
                    "page_faults": mine[0]["run_page_faults"],
                    "mean_off_first_two": sum(shares) / len(shares),
                    "max_off_first_two": max(shares),
                }
            )
    return out


def render(rows: list[dict]) -> str:
    lines = [
        "Rank Assignment §VI-C: page allocation, functional, 4 ranks of 128 MiB; paper: rank_clock has "
        "fewer page faults than clock, 30% of accesses off a thread's first two ranks",
        f"{'mix':30}{'allocator':>11}{'program':>11}{'stand-in':>28}{'instr (M)':>10}{'faults':>9}"
        f"{'ranks 1st/2nd':>14}{'off 1st two':>12}",
    ]
    for r in rows:
        ranks = f"{r['preferred_rank']}/{r['second_rank']}"
        lines.append(
            f"{r['workload']:30}{r['system']:>11}{r['program']:>11}{r['stand_in']:>28}"
            f"{r['instructions'] / 1e6:10.1f}{r['page_faults']:9}"
            f"{ranks:>14}{100 * r['off_first_two_share']:11.1f}%"
        )
    lines.append("")
    lines.append(f"{'mix':30}{'allocator':>11}{'page faults':>12}{'mean off 1st two':>18}{'max':>8}")
    for s in summary(rows):
        lines.append(
            f"{s['workload']:30}{s['system']:>11}{s['page_faults']:12}"
            f"{100 * s['mean_off_first_two']:17.1f}%{100 * s['max_off_first_two']:7.1f}%"
        )
    return "\n".join(lines)


def write_json(rows: list[dict], path: str | Path) -> None:
    Path(path).write_text(json.dumps({"rows": rows, "summary": summary(rows)}, indent=2) + "\n")


REPRODUCTION = PageAllocation()
