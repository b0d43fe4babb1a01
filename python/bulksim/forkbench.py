"""forkbench (RowClone paper, section 7.2; Figures 7-9): FMTC of the baseline, IPC of FPM and
PSM normalized to the baseline, and DRAM energy, for array sizes S and updated pages N.

Configurations, on the paper's system (``configs/rowclone_paper.toml``, Table 2: DDR3-1066
8-8-8, 2 channels, 1 rank, 4 KB rows, 64-entry queues; 1 MB 16-way private cache):
``baseline`` copies and zeroes with the CPU through the cache (scatter allocation); ``fpm`` is
RowClone with subarray-aware allocation, so copies and zeroing use FPM; ``psm`` is the same
system with FPM disabled, so every copy-on-write copy (source and destination in one subarray)
takes two PSM passes through another bank's temporary row (Table 3's intra-bank PSM, 1,050 ns),
while zeroing stays with the CPU as in the baseline (the paper's PSM energy saving starts near
zero at small N and grows with N, so its PSM configuration accelerates copies only).
docs/system.md also shows PSM with destinations in a neighbouring bank (inter-bank PSM, 540
ns). Pages are row-interleaved across channels (``RoRaBaChCo``) so that a 4 KB page is one DRAM
row, as the paper's 4 KB minimum copy granularity assumes. The system is the config file; the
mechanisms are overrides of it."""

from __future__ import annotations

import json
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from bulksim import api
from bulksim.paths import REPO
from bulksim.sweep import die_with_parent

#: The paper's system (Table 2, 4 KB rows), shared with rowclone-apps and rowclone-multicore.
CONFIG = REPO / "configs" / "rowclone_paper.toml"
MECHANISMS = {
    "baseline": ["system.bulk_mechanism=cpu", "os.allocator=scatter"],
    "fpm": ["system.bulk_mechanism=rowclone", "os.allocator=subarray_aware"],
    "psm": [
        "system.bulk_mechanism=rowclone",
        "os.allocator=subarray_aware",
        "bulk.fpm=false",
        "system.init_mechanism=cpu",
    ],
}
FULL = {"S_mb": [64, 128], "N": [2**k for k in range(1, 15)]}
QUICK = {"S_mb": [64], "N": [16, 1024, 16384]}
# What the paper reports in its text (the figures' exact values are not tabulated).
PAPER = {
    "fmtc": "14% to 66% over all S and N, growing with N, larger for S = 64 MB",
    "fpm_ipc": "up to 2.2x at N = 16k, +30% on average over all points",
    "psm_ipc": "no considerable improvement",
    "energy": "FPM up to 80% lower (50% average); PSM up to 9% lower at N = 16k (S = 64 MB)",
}


@dataclass
class Row:
    S_mb: int
    N: int
    mechanism: str
    ipc: float
    fmtc: float
    dram_energy_nj: float
    core_cycles: int


def _run(args: tuple[int, int, str, str]) -> Row:
    s_mb, n, mechanism, workdir = args
    workload = Path(workdir) / f"fb-{s_mb}-{n}"
    stats = api.run_workload(CONFIG, workload=workload, overrides=MECHANISMS[mechanism])
    return Row(
        S_mb=s_mb,
        N=n,
        mechanism=mechanism,
        ipc=stats["ipc"],
        fmtc=stats["fmtc"],
        dram_energy_nj=stats["memory"]["energy"]["total_nj"],
        core_cycles=stats["core_cycles"],
    )


def run(quick: bool = False, workers: int | None = None, progress=None) -> list[Row]:
    """Every (S, N, mechanism) point, on a local process pool."""
    grid = QUICK if quick else FULL
    with tempfile.TemporaryDirectory(prefix="bulksim-forkbench-") as tmp:
        for s_mb in grid["S_mb"]:
            for n in grid["N"]:
                api.generate_forkbench(Path(tmp) / f"fb-{s_mb}-{n}", array_bytes=s_mb << 20, pages_updated=n)
        points = [(s, n, m, tmp) for s in grid["S_mb"] for n in grid["N"] for m in MECHANISMS]
        rows = []
        with ProcessPoolExecutor(
            max_workers=workers or os.cpu_count(), initializer=die_with_parent, initargs=(os.getpid(),)
        ) as pool:
            for row in pool.map(_run, points):
                rows.append(row)
                if progress:
                    progress(len(rows), len(points))
    return rows


def render(rows: list[Row]) -> str:
    by = {(r.S_mb, r.N, r.mechanism): r for r in rows}
    head = (
        f"{'S MB':>5} {'N':>6} {'FMTC':>6} {'IPC base':>9} {'FPM IPC x':>10} {'PSM IPC x':>10} "
        f"{'FPM energy':>11} {'PSM energy':>11}"
    )
    lines = ["forkbench (RowClone Figures 7-9): normalized to the baseline", head, "-" * len(head)]
    for s_mb, n in sorted({(r.S_mb, r.N) for r in rows}):
        b, f, p = (by[(s_mb, n, m)] for m in ("baseline", "fpm", "psm"))
        lines.append(
            f"{s_mb:5d} {n:6d} {b.fmtc:6.1%} {b.ipc:9.3f} {f.ipc / b.ipc:10.2f} {p.ipc / b.ipc:10.2f} "
            f"{f.dram_energy_nj / b.dram_energy_nj:11.2f} {p.dram_energy_nj / b.dram_energy_nj:11.2f}"
        )
    lines.append("paper: FMTC " + PAPER["fmtc"])
    lines.append("       FPM IPC " + PAPER["fpm_ipc"] + "; PSM IPC " + PAPER["psm_ipc"])
    lines.append("       energy " + PAPER["energy"])
    return "\n".join(lines)


def write_json(rows: list[Row], path: str | Path) -> None:
    keep = ("S_mb", "N", "mechanism", "ipc", "fmtc", "dram_energy_nj")
    Path(path).write_text(json.dumps([{k: asdict(r)[k] for k in keep} for r in rows], indent=2) + "\n")
