"""Table 3 of the RowClone paper (Seshadri et al., MICRO 2013): a 4 KB copy and a 4 KB zeroing
through each mechanism, alone in the memory system, on DDR3-1066 8-8-8 with 512-column
(4 KB per rank) rows. Each case is one bulk request replayed by the engine; latency is the
operation's, energy that of the DRAM commands it issued (core, and with channel I/O), as the
paper's table counts it. See docs/rowclone.md for the differences from the paper."""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from bulksim import api

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


@dataclass
class Row:
    operation: str
    mechanism: str
    latency_ns: float
    energy_nj: float
    energy_with_io_nj: float
    latency_reduction: float
    energy_reduction: float
    paper_latency_ns: float
    paper_energy_uj: float
    paper_latency_reduction: float
    paper_energy_reduction: float


def run_case(operation: str, bulk_mechanism: str, line: str, workdir: Path) -> dict:
    """Stats of one bulk request replayed alone."""
    trace = workdir / f"{operation}-{bulk_mechanism}-{abs(hash(line))}.trace"
    trace.write_text(line + "\n")
    overrides = [*OVERRIDES, f"bulk.mechanism={bulk_mechanism}"]
    return api.run(trace=trace, preset=PRESET, overrides=overrides).to_dict()


def table() -> list[Row]:
    """Runs every case; reductions are against the baseline of the same operation."""
    measured = {}
    with tempfile.TemporaryDirectory(prefix="bulksim-rowclone-") as tmp:
        for operation, label, mechanism, line in CASES:
            stats = run_case(operation, mechanism, line, Path(tmp))
            bulk = stats["bulk"]
            latency = bulk["copy_latency" if operation == "copy" else "init_latency"]["max_ns"]
            measured[(operation, label)] = (latency, bulk["energy_nj"], bulk["energy_with_io_nj"])
    rows = []
    for operation, label, _, _ in CASES:
        latency, core, with_io = measured[(operation, label)]
        base_latency, _, base_energy = measured[(operation, "baseline")]
        paper_latency, paper_energy, paper_latency_x, paper_energy_x = PAPER[(operation, label)]
        rows.append(
            Row(
                operation=operation,
                mechanism=label,
                latency_ns=latency,
                energy_nj=core,
                energy_with_io_nj=with_io,
                latency_reduction=base_latency / latency,
                energy_reduction=base_energy / with_io,
                paper_latency_ns=paper_latency,
                paper_energy_uj=paper_energy,
                paper_latency_reduction=paper_latency_x,
                paper_energy_reduction=paper_energy_x,
            )
        )
    return rows


def render(rows: list[Row]) -> str:
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
            f"{r.operation:9} {r.mechanism:15} "
            f"{r.latency_ns:8.1f} ({r.paper_latency_ns:6.0f}) "
            f"{r.energy_with_io_nj / 1000:8.3f} ({r.paper_energy_uj:5.2f}) "
            f"{r.energy_nj / 1000:8.3f} "
            f"{r.latency_reduction:6.2f} ({r.paper_latency_reduction:5.2f}) "
            f"{r.energy_reduction:6.1f} ({r.paper_energy_reduction:5.1f})"
        )
    lines.append("energy: DRAM commands of the operation (ACT, ACT2, PRE, bursts, TRANSFER) + channel I/O;")
    lines.append("        'core' excludes I/O; standby background is not the operation's (docs/rowclone.md)")
    return "\n".join(lines)


def write_json(rows: list[Row], path: str | Path) -> None:
    Path(path).write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
