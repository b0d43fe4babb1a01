"""RowClone Table 7: multi-programmed mixes on 2, 4 and 8 cores, half copy/initialization-
intensive and half memory-intensive programs, baseline vs RowClone vs RowClone-ZI, by weighted
speedup, instruction throughput, harmonic speedup, maximum slowdown, and memory bandwidth and
energy per instruction.

The paper's programs are full-system traces (bootup, compile, forkbench, memcached, mysql,
shell; SPEC CPU2006) that bulksim does not have. Here the copy-intensive programs are
forkbench instances (the paper's S = 64 MB, N = 1k scaled to S = 16 MB with N/S kept, halved
and doubled) and the memory-intensive ones are random-access programs over populated 16-64 MB
regions (10-40% stores; no faults or zeroing, like SPEC traces of a running program), so
magnitudes differ; the metric definitions are the paper's. Each program's alone IPC is
measured alone on the baseline system; its shared IPC is its instructions over the cycles
until it exited in the mix."""

from __future__ import annotations

import json
import os
import random
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from bulksim import api, metrics
from bulksim.forkbench import SYSTEM
from bulksim.sweep import die_with_parent

MECHANISMS = {
    "baseline": ["system.bulk_mechanism=cpu", "os.allocator=scatter"],
    "rowclone": ["system.bulk_mechanism=rowclone", "os.allocator=subarray_aware"],
    "rowclone_zi": ["system.bulk_mechanism=rowclone_zi", "os.allocator=subarray_aware"],
}
COPY_PROGRAMS = [("fork", 16 << 20, n) for n in (128, 256, 512)]
MEMORY_PROGRAMS = [("rand", region << 20, w) for region, w in ((16, 10), (32, 25), (64, 40))]
ACCESSES = 100_000
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
    """Programs as threads 0..k-1 (one core each); forkbench children after them."""
    k = len(programs)
    for i, program in enumerate(programs):
        _write_program(directory, program, i, k + i, seed=1 + i)
    return directory


def _run(args: tuple[str, list[str]]) -> dict:
    workload, overrides = args
    return dict(api.run_workload(workload=workload, overrides=overrides))


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


def run(quick: bool = False, workers: int | None = None, seed: int = 7) -> list[Row]:
    rng = random.Random(seed)
    mixes = []
    for cores in (2, 4, 8):
        for m in range(1 if quick else 2):
            half = cores // 2
            programs = [rng.choice(COPY_PROGRAMS) for _ in range(half)]
            programs += [rng.choice(MEMORY_PROGRAMS) for _ in range(half)]
            mixes.append((cores, m, programs))
    distinct = sorted({p for _, _, ps in mixes for p in ps})
    with tempfile.TemporaryDirectory(prefix="bulksim-multicore-") as tmp:
        jobs, keys = [], []
        for i, program in enumerate(distinct):
            d = _workload(Path(tmp) / f"alone-{i}", [program])
            jobs.append((str(d), [*SYSTEM, *MECHANISMS["baseline"]]))
            keys.append(("alone", program))
        for cores, m, programs in mixes:
            d = _workload(Path(tmp) / f"mix-{cores}-{m}", programs)
            for mech, overrides in MECHANISMS.items():
                jobs.append((str(d), [*SYSTEM, *overrides]))
                keys.append(("mix", cores, m, mech))
        with ProcessPoolExecutor(
            max_workers=workers or os.cpu_count(), initializer=die_with_parent, initargs=(os.getpid(),)
        ) as pool:
            results = dict(zip(keys, pool.map(_run, jobs), strict=True))
    alone = {p: results[("alone", p)]["cores"][0]["ipc"] for p in distinct}
    rows = []
    for cores, m, programs in mixes:
        for mech in MECHANISMS:
            stats = results[("mix", cores, m, mech)]
            shared = [c["ipc"] for c in stats["cores"]]
            solo = [alone[p] for p in programs]
            rows.append(
                Row(
                    cores=cores,
                    mix=m,
                    mechanism=mech,
                    programs=[f"{k}-{s >> 20}MB-{p}" for k, s, p in programs],
                    weighted_speedup=metrics.weighted_speedup(shared, solo),
                    instruction_throughput=metrics.instruction_throughput(shared),
                    harmonic_speedup=metrics.harmonic_speedup(shared, solo),
                    maximum_slowdown=metrics.maximum_slowdown(shared, solo),
                    bandwidth_per_instruction=metrics.bandwidth_per_instruction(stats),
                    energy_per_instruction=metrics.energy_per_instruction(stats),
                )
            )
    return rows


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
    return "\n".join(lines)


def write_json(rows: list[Row], path: str | Path) -> None:
    Path(path).write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
