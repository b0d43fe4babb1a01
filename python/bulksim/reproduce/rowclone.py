"""Table 3 of the RowClone paper (Seshadri et al., MICRO 2013): a 4 KB copy and a 4 KB zeroing
through each mechanism, alone in the memory system, on DDR3-1066 8-8-8 with 512-column
(4 KB per rank) rows. Each case is one bulk request replayed by the engine; latency is the
operation's, energy that of the DRAM commands it issued (core, and with channel I/O), as the
paper's table counts it. See docs/rowclone.md for the differences from the paper."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bulksim import api
from bulksim.reproduce.figures import Panel, draw
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction

PRESET = "DDR3_2Gb_x8_1066"
OVERRIDES = ["dram.columns=512", "dram.rows_per_subarray=512"]
ROW_BYTES = 4096
BANKS = 8

# Table 3 of the paper: latency ns, memory energy uJ, and the reductions it states (computed
# by the authors from unrounded values, so not always the ratio of the rounded columns).
PAPER = {
    ("copy", "baseline"): (1046.0, 3.6, 1.00, 1.0),
    ("copy", "fpm"): (90.0, 0.04, 11.62, 74.4),
    ("copy", "psm_inter_bank"): (540.0, 1.1, 1.93, 3.2),
    ("copy", "psm_intra_bank"): (1050.0, 2.5, 0.99, 1.5),
    ("zero", "baseline"): (546.0, 2.0, 1.00, 1.0),
    ("zero", "fpm"): (90.0, 0.05, 6.06, 41.5),
}


def _at(bank: int, row: int) -> int:
    """Byte address of (bank, row) under RoBaRaCoCh with one channel and rank, 4 KB rows."""
    return ((row * BANKS) + bank) * ROW_BYTES


# operation, mechanism row label, bulk.mechanism, trace line
CASES = [
    ("copy", "baseline", "channel", f"0,C,{_at(0, 1):#x},{_at(0, 2):#x},{ROW_BYTES}"),
    ("copy", "fpm", "rowclone", f"0,C,{_at(0, 1):#x},{_at(0, 2):#x},{ROW_BYTES}"),
    ("copy", "psm_inter_bank", "rowclone", f"0,C,{_at(0, 1):#x},{_at(1, 2):#x},{ROW_BYTES}"),
    # Row 600 is in the second 512-row subarray of bank 0.
    ("copy", "psm_intra_bank", "rowclone", f"0,C,{_at(0, 1):#x},{_at(0, 600):#x},{ROW_BYTES}"),
    ("zero", "baseline", "channel", f"0,I,{_at(0, 2):#x},{ROW_BYTES},0"),
    ("zero", "fpm", "rowclone", f"0,I,{_at(0, 2):#x},{ROW_BYTES},0"),
]


def run_case(args: dict, inputs: Path) -> dict:
    """Stats of one bulk request (``args["line"]``) replayed alone with ``args["mechanism"]``."""
    with tempfile.TemporaryDirectory(prefix="bulksim-rowclone-") as tmp:
        trace = Path(tmp) / "case.trace"
        trace.write_text(args["line"] + "\n")
        overrides = [*OVERRIDES, f"bulk.mechanism={args['mechanism']}"]
        return api.run(trace=trace, preset=PRESET, overrides=overrides).to_dict()


def measured(stats: dict, operation: str) -> tuple[float, float, float]:
    """(latency ns, core energy nJ, energy with I/O nJ) of the operation from its run's stats."""
    bulk = stats["bulk"]
    latency = bulk["copy_latency" if operation == "copy" else "init_latency"]["max_ns"]
    return latency, bulk["energy_nj"], bulk["energy_with_io_nj"]


class RowClone4kb(Reproduction):
    name = "rowclone-4kb"
    title = "RowClone Table 3: 4 KB copy and zeroing by each mechanism (latency, energy)"
    paper = "Seshadri et al., RowClone, MICRO 2013, Table 3"
    columns = (
        "operation",
        "mechanism",
        "latency_ns",
        "energy_with_io_nj",
        "energy_nj",
        "latency_reduction",
        "energy_reduction",
    )

    def paper_values(self) -> list[dict]:
        return [
            {
                "operation": operation,
                "mechanism": label,
                "latency_ns": values[0],
                "energy_uj": values[1],
                "latency_reduction": values[2],
                "energy_reduction": values[3],
            }
            for (operation, label), values in PAPER.items()
        ]

    def plan(self, options: Options) -> Plan:
        """The six cases of Table 3 (--quick is the same: they take a fraction of a second)."""
        return Plan(
            [
                Case(f"{operation}-{label}", run_case, {"mechanism": mechanism, "line": line})
                for operation, label, mechanism, line in CASES
            ]
        )

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        """One row per case; reductions are against the baseline of the same operation."""
        got = {(op, label): measured(stats[f"{op}-{label}"], op) for op, label, _, _ in CASES}
        rows = []
        for operation, label, _, _ in CASES:
            latency, core, with_io = got[(operation, label)]
            base_latency, _, base_energy = got[(operation, "baseline")]
            paper_latency, paper_energy, paper_latency_x, paper_energy_x = PAPER[(operation, label)]
            rows.append(
                {
                    "operation": operation,
                    "mechanism": label,
                    "latency_ns": latency,
                    "energy_nj": core,
                    "energy_with_io_nj": with_io,
                    "latency_reduction": base_latency / latency,
                    "energy_reduction": base_energy / with_io,
                    "paper_latency_ns": paper_latency,
                    "paper_energy_uj": paper_energy,
                    "paper_latency_reduction": paper_latency_x,
                    "paper_energy_reduction": paper_energy_x,
                }
            )
        return rows

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        return render(rows)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """Table 3 as bars: latency and energy (with I/O, as the paper counts it) of each
        operation and mechanism, the paper's value beside bulksim's."""
        if not rows:
            return []  # nothing ran (every input missing): no empty figure
        groups = [f"{r['operation']} {r['mechanism']}" for r in rows]
        panels = [
            Panel(
                "latency",
                groups,
                {"": [r["latency_ns"] for r in rows]},
                "latency (ns)",
                paper={"": [r["paper_latency_ns"] for r in rows]},
            ),
            Panel(
                "energy (DRAM commands + channel I/O)",
                groups,
                {"": [r["energy_with_io_nj"] for r in rows]},
                "energy (nJ, log scale)",
                paper={"": [r["paper_energy_uj"] * 1000 for r in rows]},
                log=True,
            ),
        ]
        title = "RowClone Table 3: a 4 KB copy and zeroing, DDR3-1066, alone in memory"
        return [draw(out / f"{self.name}-table3.png", title, panels)]


def render(rows: list[dict]) -> str:
    """The table as text, bulksim's value first and the paper's in parentheses."""
    head = (
        f"{'operation':9} {'mechanism':15} {'latency ns':>18} {'energy uJ (+I/O)':>18} "
        f"{'core uJ':>8} {'latency x':>14} {'energy x':>14}"
    )
    lines = [
        "RowClone Table 3: 4 KB copy and zeroing, DDR3-1066 8-8-8, 4 KB rows, alone in memory",
        "bulksim (paper)",
        head,
        "-" * len(head),
    ]
    for r in rows:
        lines.append(
            f"{r['operation']:9} {r['mechanism']:15} "
            f"{r['latency_ns']:8.1f} ({r['paper_latency_ns']:6.0f}) "
            f"{r['energy_with_io_nj'] / 1000:8.3f} ({r['paper_energy_uj']:5.2f}) "
            f"{r['energy_nj'] / 1000:8.3f} "
            f"{r['latency_reduction']:6.2f} ({r['paper_latency_reduction']:5.2f}) "
            f"{r['energy_reduction']:6.1f} ({r['paper_energy_reduction']:5.1f})"
        )
    lines.append("energy: DRAM commands of the operation (ACT, ACT2, PRE, bursts, TRANSFER) + channel I/O;")
    lines.append("        'core' excludes I/O; standby background is not the operation's (docs/rowclone.md)")
    return "\n".join(lines)


REPRODUCTION = RowClone4kb()
