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

from pathlib import Path
from types import SimpleNamespace

from bulksim import api, provenance
from bulksim.paths import REPO
from bulksim.reproduce.figures import Panel, draw
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction

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


def _workload(inputs: Path, s_mb: int, n: int) -> Path:
    """forkbench with S = `s_mb` MiB and N = `n`, generated once into `inputs` (keyed by its
    parameters and the engine)."""
    params = {"array_bytes": s_mb << 20, "pages_updated": n}
    return provenance.cached_input(
        inputs, "forkbench", "forkbench", params, lambda out: api.generate_forkbench(out, **params)
    )


def run_case(args: dict, inputs: Path) -> dict:
    """Stats of forkbench (S, N) run with one mechanism."""
    workload = _workload(inputs, args["S_mb"], args["N"])
    return api.run_workload(CONFIG, workload=workload, overrides=MECHANISMS[args["mechanism"]]).to_dict()


class Forkbench(Reproduction):
    name = "forkbench"
    title = "RowClone Figures 7-9: forkbench FMTC, IPC and energy of FPM and PSM (--quick: 9 runs)"
    paper = "Seshadri et al., RowClone, MICRO 2013, section 7.2, Figures 7-9"
    columns = ("S_mb", "N", "fmtc", "ipc", "dram_energy_nj")

    def paper_values(self) -> dict:
        return PAPER

    def plan(self, options: Options) -> Plan:
        """Every (S, N, mechanism) point."""
        grid = QUICK if options.quick else FULL
        return Plan(
            [
                Case(f"{s}-{n}-{m}", run_case, {"S_mb": s, "N": n, "mechanism": m})
                for s in grid["S_mb"]
                for n in grid["N"]
                for m in MECHANISMS
            ]
        )

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        """One row per point: IPC, FMTC and DRAM energy of its run."""
        rows = []
        for case in plan.cases:
            s = stats[case.key]
            rows.append(
                {
                    **case.args,
                    "ipc": s["ipc"],
                    "fmtc": s["fmtc"],
                    "dram_energy_nj": s["memory"]["energy"]["total_nj"],
                }
            )
        return rows

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        return render(rows)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """Figures 7 (FMTC), 8 (IPC) and 9 (DRAM energy), a panel per S, x = N; the paper states
        these in words only (printed under the table), so there are no paper bars."""
        if not rows:
            return []  # nothing ran (every input missing): no empty figure
        by = {(r["S_mb"], r["N"], r["mechanism"]): r for r in rows}
        sizes = sorted({r["S_mb"] for r in rows})
        ns = sorted({r["N"] for r in rows})

        def ratio(s_mb: int, mechanism: str, key: str) -> list[float | None]:
            values = []
            for n in ns:
                base, other = by.get((s_mb, n, "baseline")), by.get((s_mb, n, mechanism))
                values.append(other[key] / base[key] if base and other and base[key] else None)
            return values

        def panels(series, ylabel: str) -> list[Panel]:
            return [Panel(f"S = {s} MB", [f"N = {n}" for n in ns], series(s), ylabel) for s in sizes]

        words = "\n(the paper gives no numbers for these points: its words are under the table)"

        def fmtc_percent(s_mb: int) -> dict[str, list[float | None]]:
            return {
                "baseline": [
                    100 * by[(s_mb, n, "baseline")]["fmtc"] if (s_mb, n, "baseline") in by else None
                    for n in ns
                ]
            }

        fmtc = panels(fmtc_percent, "FMTC (copy bytes, % of all memory traffic)")
        ipc = panels(lambda s: {m: ratio(s, m, "ipc") for m in ("fpm", "psm")}, "IPC / baseline's (ratio)")
        energy = panels(
            lambda s: {m: ratio(s, m, "dram_energy_nj") for m in ("fpm", "psm")},
            "DRAM energy / baseline's (ratio)",
        )
        return [
            draw(out / f"{self.name}-fig7.png", "RowClone Figure 7: forkbench's FMTC" + words, fmtc),
            draw(
                out / f"{self.name}-fig8.png",
                "RowClone Figure 8: forkbench IPC over the baseline" + words,
                ipc,
            ),
            draw(out / f"{self.name}-fig9.png", "RowClone Figure 9: forkbench DRAM energy" + words, energy),
        ]


def render(rows: list[dict]) -> str:
    by = {(r["S_mb"], r["N"], r["mechanism"]): SimpleNamespace(**r) for r in rows}
    head = (
        f"{'S MB':>5} {'N':>6} {'FMTC':>6} {'IPC base':>9} {'FPM IPC x':>10} {'PSM IPC x':>10} "
        f"{'FPM energy':>11} {'PSM energy':>11}"
    )
    lines = ["forkbench (RowClone Figures 7-9): normalized to the baseline", head, "-" * len(head)]
    for s_mb, n in sorted({(r["S_mb"], r["N"]) for r in rows}):
        b, f, p = (by[(s_mb, n, m)] for m in ("baseline", "fpm", "psm"))
        lines.append(
            f"{s_mb:5d} {n:6d} {b.fmtc:6.1%} {b.ipc:9.3f} {f.ipc / b.ipc:10.2f} {p.ipc / b.ipc:10.2f} "
            f"{f.dram_energy_nj / b.dram_energy_nj:11.2f} {p.dram_energy_nj / b.dram_energy_nj:11.2f}"
        )
    lines.append("paper: FMTC " + PAPER["fmtc"])
    lines.append("       FPM IPC " + PAPER["fpm_ipc"] + "; PSM IPC " + PAPER["psm_ipc"])
    lines.append("       energy " + PAPER["energy"])
    return "\n".join(lines)


REPRODUCTION = Forkbench()
