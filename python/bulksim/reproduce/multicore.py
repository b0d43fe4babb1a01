"""RowClone Table 7: multi-programmed mixes on 2, 4 and 8 cores, half copy/initialization-
intensive and half memory-intensive programs, baseline vs RowClone vs RowClone-ZI on the paper's
system (``configs/rowclone_paper.toml``), by weighted speedup, instruction throughput, harmonic
speedup, maximum slowdown, and memory bandwidth and energy per instruction.

The paper's programs are its full-system traces (bootup, compile, forkbench, memcached, mysql,
shell; SPEC CPU2006). bulksim uses, where present: captured programs of the workload suite
(``make workloads``, see ``apps.py``) as the copy-intensive half, and the SPEC CPU2006 traces
of ``../shared/traces/ramulator-cpu/`` (post-LLC, each copy in its own address space) as the
memory-intensive half; the report says which it used. Where they are absent it falls back to
synthetic stand-ins: forkbench instances (the paper's S = 64 MB, N = 1k scaled to S = 16 MB
with N/S kept, halved and doubled) and random-access programs over populated 16-64 MB regions
(10-40% stores; no faults or zeroing, like SPEC traces of a running program). Magnitudes
differ from the paper's; the metric definitions are the paper's. Each program's alone IPC is
measured alone on the baseline system; its shared IPC is its instructions over the cycles
until it exited in the mix. ``--quick`` runs the SPEC traces' first ``QUICK_TRACE_RECORDS``
records and, for the copy-intensive half, the small forkbench capture committed as test data."""

from __future__ import annotations

import gzip
import itertools
import random
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bulksim import api, provenance
from bulksim.analysis import metrics
from bulksim.reproduce.figures import Panel, draw
from bulksim.reproduce.forkbench import CONFIG
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction, fingerprint

MECHANISMS = {
    "baseline": ["system.bulk_mechanism=cpu", "os.allocator=scatter"],
    "rowclone": ["system.bulk_mechanism=rowclone", "os.allocator=subarray_aware"],
    "rowclone_zi": ["system.bulk_mechanism=rowclone_zi", "os.allocator=subarray_aware"],
}
COPY_PROGRAMS = [("fork", 16 << 20, n) for n in (128, 256, 512)]
MEMORY_PROGRAMS = [("rand", region << 20, w) for region, w in ((16, 10), (32, 25), (64, 40))]
ACCESSES = 100_000
#: Use captured programs and the shared SPEC traces where present (tests turn this off to run
#: the synthetic stand-ins).
USE_REAL_PROGRAMS = True
SPEC_TRACES = ["403.gcc", "435.gromacs", "445.gobmk", "456.hmmer", "458.sjeng", "464.h264ref"]
#: Records of each SPEC trace --quick runs (their first part).
QUICK_TRACE_RECORDS = 50_000
# Table 7 of the paper: RowClone's improvement over the baseline, percent, for 2 / 4 / 8 cores.
PAPER = {
    "weighted_speedup": (15, 20, 27),
    "instruction_throughput": (14, 15, 25),
    "harmonic_speedup": (13, 16, 29),
    "maximum_slowdown": (6, 12, 23),
    "bandwidth_per_instruction": (29, 27, 28),
    "energy_per_instruction": (19, 17, 17),
}
LOWER_IS_BETTER = {"maximum_slowdown", "bandwidth_per_instruction", "energy_per_instruction"}


def _write_program(directory: Path, program: tuple, thread: int, child: int, seed: int) -> None:
    kind, size, param = program
    if kind == "fork":
        api.generate_forkbench(
            directory,
            array_bytes=size,
            pages_updated=param,
            seed=seed,
            parent_thread=thread,
            child_thread=child,
        )
    else:
        api.generate_random_access(
            directory, region_bytes=size, accesses=ACCESSES, write_percent=param, seed=seed, thread=thread
        )


def _workload(directory: Path, programs: list[tuple]) -> Path:
    """Synthetic programs as threads 0..k-1 (one core each); forkbench children after them."""
    k = len(programs)
    for i, program in enumerate(programs):
        _write_program(directory, program, i, k + i, seed=1 + i)
    return directory


def _label(program: tuple) -> str:
    """A program's name in the report: `fork-16MB-128`, `rand-32MB-25`, `capture:gcc`,
    `spec:403.gcc`."""
    kind = program[0]
    if kind in ("fork", "rand"):
        return f"{kind}-{program[1] >> 20}MB-{program[2]}"
    return f"{kind}:{program[1]}"


def real_programs(
    quick: bool, scratch: Path, cut_heads: bool = True
) -> tuple[list[tuple], list[tuple], list[str]]:
    """The captured copy-intensive programs and SPEC traces present, as (kind, name, path,
    format) programs, and lines saying what was used instead of what is missing."""
    from bulksim.paths import captures_dir, shared_traces_dir
    from bulksim.reproduce import apps

    notes = []
    copy = []
    if quick:
        # The committed small capture: a full suite's programs run for minutes each.
        if apps.SMALL_FORKBENCH.is_dir():
            copy.append(("capture", "forkbench-small", str(apps.SMALL_FORKBENCH), "bulksim"))
    else:
        for app in apps.APPS[:6]:
            path = captures_dir() / app.capture
            if path.is_dir():
                copy.append(("capture", app.capture, str(path), "bulksim"))
    if not copy:
        notes.append("copy-intensive: synthetic forkbench (no captures; `make workloads` makes them)")
    spec_dir = shared_traces_dir() / "ramulator-cpu"
    memory = []
    for name in SPEC_TRACES:
        path = spec_dir / f"{name}.gz"
        if not path.is_file():
            continue
        if quick and cut_heads:
            head = scratch / f"head-{name}.gz"
            with gzip.open(path, "rt") as src, gzip.open(head, "wt") as dst:
                dst.writelines(itertools.islice(src, QUICK_TRACE_RECORDS))
            path = head
        memory.append(("spec", name, str(path), "ramulator-cpu"))
    if not memory:
        notes.append(f"memory-intensive: synthetic random access ({spec_dir} is absent)")
    return copy, memory, notes


def _describe(program: tuple, seed: int, quick: bool) -> dict:
    """A program as a case's argument (JSON): what makes it, so that its run is keyed by it."""
    if program[0] in ("fork", "rand"):
        extra = {"accesses": ACCESSES} if program[0] == "rand" else {}
        return {"program": list(program), "seed": seed, **extra}
    head = QUICK_TRACE_RECORDS if quick and program[0] == "spec" else None
    return {"program": list(program), "input": fingerprint(program[2]), "head_records": head}


def _program_input(described: dict, inputs: Path) -> tuple[str, str | None]:
    """(path, format) of a described program, generating it once into `inputs` (keyed by its
    description and the engine); a SPEC trace's --quick head is cut there too."""
    program = tuple(described["program"])
    kind = program[0]
    if kind in ("fork", "rand"):
        path = provenance.cached_input(
            inputs,
            f"multicore-{_label(program)}",
            "multicore-program",
            described,
            lambda out: _write_program(out, program, 0, 1, described["seed"]),
        )
        return str(path), "bulksim"
    if described.get("head_records"):
        records = described["head_records"]

        def cut(out: Path) -> None:
            with gzip.open(program[2], "rt") as src, gzip.open(out, "wt") as dst:
                dst.writelines(itertools.islice(src, records))

        path = provenance.cached_input(
            inputs, f"head-{program[1]}", "trace-head", described, cut, suffix=".gz"
        )
        return str(path), program[3]
    return program[2], program[3]


def run_case(args: dict, inputs: Path) -> dict:
    """One mix (or one program alone) with one mechanism as a reproduction's case: its stats."""
    programs = [_program_input(p, inputs) for p in args["programs"]]
    return api.run_mix(CONFIG, programs=programs, overrides=MECHANISMS[args["mechanism"]]).to_dict()


@dataclass
class Row:
    cores: int
    mix: int
    mechanism: str
    programs: list[str]
    weighted_speedup: float
    instruction_throughput: float
    harmonic_speedup: float
    maximum_slowdown: float
    bandwidth_per_instruction: float
    energy_per_instruction: float
    #: What the copy- and memory-intensive halves were (captures, SPEC traces, synthetic).
    sources: list[str] = field(default_factory=list)


def plan(quick: bool = False, seed: int = 7) -> Plan:
    """The cases: each distinct program alone on the baseline, then each mix with each
    mechanism; the mixes drawn with `seed` from the programs present."""
    rng = random.Random(seed)
    copy_programs, memory_programs = list(COPY_PROGRAMS), list(MEMORY_PROGRAMS)
    notes = ["copy-intensive: synthetic forkbench", "memory-intensive: synthetic random access"]
    if USE_REAL_PROGRAMS:
        with tempfile.TemporaryDirectory(prefix="bulksim-multicore-") as tmp:
            # Heads cut here are not used: the cases cut their own (``_program_input``).
            real_copy, real_memory, notes = real_programs(quick, Path(tmp), cut_heads=False)
        copy_programs = real_copy or copy_programs
        memory_programs = real_memory or memory_programs
        if real_copy:
            notes.append("copy-intensive: captures " + ", ".join(p[1] for p in real_copy))
        if real_memory:
            notes.append("memory-intensive: SPEC CPU2006 traces " + ", ".join(p[1] for p in real_memory))
    mixes = []
    for cores in (2, 4, 8):
        for m in range(1 if quick else 2):
            half = cores // 2
            programs = [rng.choice(copy_programs) for _ in range(half)]
            programs += [rng.choice(memory_programs) for _ in range(half)]
            mixes.append((cores, m, programs))
    distinct = sorted({p for _, _, ps in mixes for p in ps})
    described = {p: _describe(p, 1 + i, quick) for i, p in enumerate(distinct)}
    cases = [
        Case(f"alone-{_label(p)}", run_case, {"programs": [described[p]], "mechanism": "baseline"})
        for p in distinct
    ]
    for cores, m, programs in mixes:
        for mech in MECHANISMS:
            args = {"programs": [described[p] for p in programs], "mechanism": mech}
            cases.append(Case(f"mix-{cores}-{m}-{mech}", run_case, args))
    return Plan(cases, context={"mixes": mixes, "distinct": distinct, "notes": notes})


def rows_of(plan: Plan, stats: dict[str, dict]) -> list[Row]:
    """The rows from each case's stats: each mix's metrics against its programs alone."""
    mixes, notes = plan.context["mixes"], plan.context["notes"]
    alone = {p: stats[f"alone-{_label(p)}"]["cores"][0]["ipc"] for p in plan.context["distinct"]}
    rows = []
    for cores, m, programs in mixes:
        for mech in MECHANISMS:
            s = stats[f"mix-{cores}-{m}-{mech}"]
            shared = [c["ipc"] for c in s["cores"]]
            solo = [alone[p] for p in programs]
            rows.append(
                Row(
                    cores=cores,
                    mix=m,
                    mechanism=mech,
                    programs=[_label(p) for p in programs],
                    weighted_speedup=metrics.weighted_speedup(shared, solo),
                    instruction_throughput=metrics.instruction_throughput(shared),
                    harmonic_speedup=metrics.harmonic_speedup(shared, solo),
                    maximum_slowdown=metrics.maximum_slowdown(shared, solo),
                    bandwidth_per_instruction=metrics.bandwidth_per_instruction(s),
                    energy_per_instruction=metrics.energy_per_instruction(s),
                    sources=notes,
                )
            )
    return rows


def run(quick: bool = False, workers: int | None = None, seed: int = 7) -> list[Row]:
    """Every row, the runs on a local process pool without a results store (tests)."""
    from bulksim.reproduce.runner import run_cases

    chosen = plan(quick, seed)
    with tempfile.TemporaryDirectory(prefix="bulksim-multicore-") as tmp:
        return rows_of(chosen, run_cases(chosen.cases, workers, Path(tmp)))


class RowCloneMulticore(Reproduction):
    name = "rowclone-multicore"
    title = "RowClone Table 7: 2/4/8-core mixes, RowClone and RowClone-ZI vs baseline"
    paper = "Seshadri et al., RowClone, MICRO 2013, Table 7"

    def paper_values(self) -> dict:
        return {metric: list(values) for metric, values in PAPER.items()}

    def plan(self, options: Options) -> Plan:
        return plan(options.quick)

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        return [asdict(r) for r in rows_of(plan, stats)]

    def summary(self, rows: list[dict], options: Options) -> dict:
        typed = [Row(**r) for r in rows]
        return {
            m: {k: list(v) for k, v in improvements(typed, m).items()} for m in ("rowclone", "rowclone_zi")
        }

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        return render([Row(**r) for r in rows])

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """Table 7 as bars: a panel per metric, x = the core count, RowClone and RowClone-ZI's
        mean improvement over the mixes of that count, the paper's RowClone value beside."""
        if not rows:
            return []  # nothing ran (every input missing): no empty figure
        typed = [Row(**r) for r in rows]
        by_mechanism = {m: improvements(typed, m) for m in ("rowclone", "rowclone_zi")}
        mixes = {c: len({r.mix for r in typed if r.cores == c}) for c in (2, 4, 8)}
        groups = [f"{c} cores" for c in (2, 4, 8)]
        panels = [
            Panel(
                metric.replace("_", " "),
                groups,
                {m: list(by_mechanism[m][metric]) for m in by_mechanism},
                ("reduction" if metric in LOWER_IS_BETTER else "improvement") + " over the baseline (%)",
                paper={"rowclone": list(PAPER[metric])},
            )
            for metric in PAPER
        ]
        counted = ", ".join(f"{n} at {c} cores" for c, n in mixes.items())
        title = f"RowClone Table 7: each bar the arithmetic mean over the mixes of its core count ({counted})"
        return [draw(out / f"{self.name}-table7.png", title, panels)]


def improvements(rows: list[Row], mechanism: str) -> dict[str, tuple[float, ...]]:
    """Mean improvement (percent) of `mechanism` over the baseline per metric and core count;
    reductions for the lower-is-better metrics, as Table 7 states them."""
    out = {}
    for metric in PAPER:
        per_cores = []
        for cores in (2, 4, 8):
            pairs = [
                (getattr(b, metric), getattr(r, metric))
                for b in rows
                if b.cores == cores and b.mechanism == "baseline"
                for r in rows
                if r.cores == cores and r.mix == b.mix and r.mechanism == mechanism
            ]
            if metric in LOWER_IS_BETTER:
                vals = [100 * (1 - r / b) for b, r in pairs]
            else:
                vals = [100 * (r / b - 1) for b, r in pairs]
            per_cores.append(sum(vals) / len(vals))
        out[metric] = tuple(per_cores)
    return out


def render(rows: list[Row]) -> str:
    lines = ["RowClone Table 7: improvement over the baseline (%), 2 / 4 / 8 cores; paper's RowClone in ()"]
    rc, zi = improvements(rows, "rowclone"), improvements(rows, "rowclone_zi")
    lines.append(f"{'metric':28} {'RowClone':>24} {'RowClone-ZI':>22}")
    for metric, paper in PAPER.items():
        name = metric.replace("_", " ") + (" (reduction)" if metric in LOWER_IS_BETTER else "")
        a = " / ".join(f"{v:4.0f}" for v in rc[metric])
        z = " / ".join(f"{v:4.0f}" for v in zi[metric])
        p = "/".join(str(v) for v in paper)
        lines.append(f"{name:28} {a} ({p:>8}) {z:>20}")
    mixes = sorted({(r.cores, r.mix, tuple(r.programs)) for r in rows})
    lines.append(
        f"mixes: {len(mixes)} (" + "; ".join(f"{c} cores: {', '.join(p)}" for c, _, p in mixes) + ")"
    )
    if rows:
        lines.append("programs: " + "; ".join(rows[0].sources))
    return "\n".join(lines)


REPRODUCTION = RowCloneMulticore()
