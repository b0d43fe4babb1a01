"""`bulksim reproduce copy-engines`: the copy-engine paper's TCP/IP study (seed 001, Sec. 3,
Figures 3-5; digest /work/shared/papers/copy_engines.md, section 4) on its preset
(``configs/copy_engines.toml``), beside the paper's prose. Owns the runs (the ``network``
stand-in, docs/copy_engines_workloads.md, with 500, 1000 and 1500-byte payloads, each with the
software memcpy, the software memcpy with non-temporal stores (``software_nt``, the alternative
Sec. 3 names) and with movblk under CE-L1, DCE and DCE-NT), the rows derived from their
stats (time and L1-L2 traffic reductions over software, the share of copies the L2 engine
ran, L2-memory bytes, the copy's share of the software run's time, from a run of the same
trace without its copies), the paper's bound for each cell and a check of each value against
it; and DCE-NT without each of the two choices of bulksim's its agreement rests on (a cold
receive ring, unpipelined engines), beside the default.
The paper's benchmark is not public, so the numbers are the stand-in's, reported as they are.

Also bulksim's DDR3 preset (``configs/copy_engines_ddr3.toml``: the same core and caches over
forkbench's DDR3-1066, RowClone as the DRAM's bulk engine; the paper has no such system, so
its rows carry no paper bound): the four mechanisms and ``dce_rowclone`` (whole 4 KB
destination chunks of a copy handed to the memory controller as RowClone when no cache holds
their source) on the network stand-in, ``bulkcopy`` (hot and cold sources) and forkbench's
copy-on-write copies, with the share of copied blocks run in DRAM and the DRAM channel bytes.
Its choices: the network runs are the paper preset's traces; each bulkcopy run copies 16 MB in
all (4,096 copies of 4 KB, 256 of 64 KB, 16 of 1 MB); forkbench has S = 16 MB and N = 4,096
pages (--quick: 1,024), and its payload is the 4 KB page each copy-on-write copy copies."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bulksim import api, provenance
from bulksim.paths import REPO
from bulksim.reproduce.figures import Panel, draw
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction
from bulksim.workloads.copy_workloads import write_bulkcopy, write_network

#: The paper's system (Table 1 and Sec. 3).
CONFIG = REPO / "configs" / "copy_engines.toml"
PRESET = "paper"
#: The rows of DCE-NT with and without bulksim's two choices (CHOICES), on the paper preset.
CHOICES_PRESET = "paper_choices"
PAYLOADS = (500, 1000, 1500)
#: Packets per run: the paper's traces have 50,000 (Sec. 3); --quick runs a tenth.
FULL_PACKETS = 50_000
QUICK_PACKETS = 5_000
MECHANISMS = {
    "software": ('system.memcpy="software"', 'copy_engine.policy="none"'),
    # The software copy with non-temporal stores through write-combining buffers that Sec. 3
    # sets beside the engines (same traffic saving as CE-L1, it says).
    "software_nt": ('system.memcpy="software_nt"', 'copy_engine.policy="none"'),
    "ce_l1": ('system.memcpy="movblk"', 'copy_engine.policy="ce_l1"'),
    "dce": ('system.memcpy="movblk"', 'copy_engine.policy="dce"'),
    "dce_nt": ('system.memcpy="movblk"', 'copy_engine.policy="dce_nt"'),
}
BASELINE = "software"

#: bulksim's DRAM system for the same core and caches (no paper numbers exist for it).
DDR3_CONFIG = REPO / "configs" / "copy_engines_ddr3.toml"
DDR3_PRESET = "ddr3"
DDR3_MECHANISMS = {
    **MECHANISMS,
    "dce_rowclone": ('system.memcpy="movblk"', 'copy_engine.policy="dce_rowclone"'),
}
CONFIGS = {PRESET: CONFIG, DDR3_PRESET: DDR3_CONFIG}
PRESET_MECHANISMS = {PRESET: MECHANISMS, DDR3_PRESET: DDR3_MECHANISMS}
#: bulkcopy copy sizes (a row's payload); --quick leaves out 1 MB.
BULKCOPY_SIZES = (4096, 65536, 1 << 20)
QUICK_BULKCOPY_SIZES = (4096, 65536)
#: Bytes each bulkcopy run copies in all (copies = this / size, at least 1).
BULKCOPY_BYTES = 16 << 20
#: bulkcopy's hot fraction per workload name: every source read just before its copy, or none.
BULKCOPY_HOT = {"bulkcopy-hot": 1.0, "bulkcopy-cold": 0.0}
#: forkbench (docs/system.md): S, the array the parent initializes, and N, the pages the
#: child updates (each one copy-on-write copy of a 4 KB page, the rows' payload). S is 16 MB
#: (the RowClone paper's are 64 and 128 MB), 16 times the 1 MB L2, so that most pages the
#: child copies are no longer cached, and small enough for --quick.
FORKBENCH_ARRAY_BYTES = 16 << 20
FORKBENCH_PAGES = 4096
QUICK_FORKBENCH_PAGES = 1024
FORKBENCH_PAYLOAD = 4096
#: The two choices of bulksim's on which DCE-NT's agreement with the paper rests (docs:
#: copy_engines.md), each run without: the receive ring cold instead of warm (NETWORK_COLD:
#: a ring of 4,096 slots, 8 MB, eight times the L2, not loaded first, so every payload comes
#: from memory, as a NIC's DMA leaves it) and the engines one movblk at a time instead of
#: pipelined. Per choice: (its label, the network trace's variant, the DCE-NT mechanism).
CHOICES = {
    "default": ("warm ring, pipelined engines (bulksim's choices)", "network", "dce_nt"),
    "cold_ring": ("receive ring cold (8 MB, payloads from memory)", "network_cold", "dce_nt"),
    "no_pipeline": ("copy_engine.pipeline = false", "network", "dce_nt_serial"),
}
#: The mechanisms only the choices run (paper preset).
CHOICE_MECHANISMS = {
    "dce_nt_serial": (*MECHANISMS["dce_nt"], "copy_engine.pipeline=false"),
}
NETWORK_COLD = {"ring": 4096, "warm_ring": False}
#: The network traces of the paper preset: the default, the cold ring, and each without its
#: copies (the copy's share of run time: 1 - cycles without the copies / software's cycles).
NETWORK_VARIANTS = {
    "network": {},
    "network_no_copy": {"copy": False},
    "network_cold": NETWORK_COLD,
    "network_cold_no_copy": {**NETWORK_COLD, "copy": False},
}
#: Which mechanisms run on each variant beside the default's MECHANISMS (paper preset).
VARIANT_MECHANISMS = {
    "network": (*MECHANISMS, *CHOICE_MECHANISMS),
    "network_no_copy": (BASELINE,),
    "network_cold": (BASELINE, "dce_nt"),
    "network_cold_no_copy": (BASELINE,),
}
#: Line bytes per memory request (DRAM channel bytes = (reads + writes) x this).
CHANNEL_LINE_BYTES = 64
#: Row keys the paper's prose bounds, and the word the bound's text uses for each.
METRICS = {"time_reduction_pct": "time", "traffic_reduction_pct": "traffic", "pct_copies_in_l2": "in L2"}
#: *choice*: "around 20%" or a bare "42%" allows this many percentage points either way.
ABOUT_POINTS = 5.0


@dataclass(frozen=True)
class Bound:
    """What the paper's prose says of one value: its words and the range they allow, in
    percent; ``relative_to`` names the mechanism (same payload) the range is an offset from."""

    text: str
    low: float | None = None
    high: float | None = None
    relative_to: str | None = None

    def allows(self, value: float, reference: float = 0.0) -> bool:
        """Whether ``value`` is in the range, both it and ``reference`` to the whole percent
        the paper prints."""
        value, reference = round(value), round(reference)
        low = None if self.low is None else self.low + reference
        high = None if self.high is None else self.high + reference
        return (low is None or value >= low) and (high is None or value <= high)


def _about(value: float, tilde: bool = False) -> Bound:
    return Bound(f"{'~' if tilde else ''}{value:g}%", value - ABOUT_POINTS, value + ABOUT_POINTS)


#: "Slightly above CE-L1" (DCE: "a small improvement", "small additional reduction").
SLIGHTLY_ABOVE_CE_L1 = Bound("slightly above CE-L1", 0.0, ABOUT_POINTS, relative_to="ce_l1")

#: The paper's bounds per (mechanism, payload) and metric (Sec. 3). CE-L1's and DCE's hold for
#: every payload; DCE-NT's "smaller payloads" are 500 B and "larger" 1500 B (the text does
#: not say where 1000 B falls, so it has none).
PAPER: dict[tuple[str, int], dict[str, Bound]] = {}
for _payload in PAYLOADS:
    PAPER[("ce_l1", _payload)] = {
        "time_reduction_pct": Bound("11-13%", 11.0, 13.0),
        "traffic_reduction_pct": _about(20, tilde=True),
        "pct_copies_in_l2": Bound("0%", 0.0, 0.0),
    }
    PAPER[("dce", _payload)] = {
        "time_reduction_pct": SLIGHTLY_ABOVE_CE_L1,
        "traffic_reduction_pct": SLIGHTLY_ABOVE_CE_L1,
        "pct_copies_in_l2": _about(6),
    }
PAPER[("dce_nt", 500)] = {
    "time_reduction_pct": Bound(">17%", 17.0),
    "traffic_reduction_pct": _about(42),
    "pct_copies_in_l2": Bound(">86%", 86.0, 100.0),
}
PAPER[("dce_nt", 1500)] = {
    "time_reduction_pct": Bound(">21%", 21.0),
    "traffic_reduction_pct": Bound(">54%", 54.0),
    "pct_copies_in_l2": Bound("up to 94%", 86.0, 94.0),
}


def paper_text(mechanism: str, payload: int) -> str | None:
    """The paper's words for a cell, e.g. "time >17%, traffic 42%, in L2 >86%"; None when it
    says nothing of it (the software baseline, DCE-NT at 1000 B)."""
    bounds = PAPER.get((mechanism, payload))
    if bounds is None:
        return None
    return ", ".join(f"{METRICS[k]} {b.text}" for k, b in bounds.items())


def measure(workload: str, mechanism: str, preset: str = PRESET) -> dict:
    """One run of `workload` with `mechanism` on `preset`'s system: the stats the rows need."""
    return measurement(_run(workload, mechanism, preset))


def _run(workload: str | os.PathLike[str], mechanism: str, preset: str) -> dict:
    """The stats of one run of `workload` with `mechanism` on `preset`'s system."""
    overrides = {**PRESET_MECHANISMS[preset], **CHOICE_MECHANISMS}[mechanism]
    return api.run_workload(CONFIGS[preset], workload=workload, overrides=list(overrides)).to_dict()


def measurement(stats: dict) -> dict:
    """What the rows need from a run's stats."""
    below = stats["cache"]["l2"]["below"]
    engine = stats.get("copy_engine")  # absent when no engine is configured
    dram = (engine or {}).get("dram") or {}  # chunks handed to the memory controller
    return {
        "cycles": stats["core_cycles"],
        "offchip_bytes": stats["cache"]["l1"]["below_bytes_with_addresses"],
        # L2-memory bytes, summed over origins (program, copy, ...).
        "memory_bytes": sum(below["read_bytes"].values()) + sum(below["write_bytes"].values()),
        # Requests at the memory controllers: what crossed the DRAM channels.
        "channel_bytes": (stats["memory"]["reads"] + stats["memory"]["writes"]) * CHANNEL_LINE_BYTES,
        "l1_copies": engine["l1"]["copies"] if engine else 0,
        "l2_copies": engine["l2"]["copies"] if engine else 0,
        # The movblks the chunks run in DRAM stand for.
        "dram_blocks": dram.get("blocks", 0),
    }


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def _shares(m: dict) -> tuple[float, float]:
    """(% in L2, % in DRAM) of the blocks copied: movblks run in L1 or L2 plus those the DRAM
    chunks stand for (none on the paper's preset)."""
    dram = m.get("dram_blocks", 0)
    whole = m["l1_copies"] + m["l2_copies"] + dram
    return _pct(m["l2_copies"], whole), _pct(dram, whole)


def copy_share_pct(no_copy_cycles: int, software_cycles: int) -> float:
    """The copy's share of the software run's time, in percent: 1 - cycles without the copies
    / cycles with the software memcpy. No mechanism can save more time than this."""
    return 100.0 * (1.0 - no_copy_cycles / software_cycles) if software_cycles else 0.0


def rows_from(
    measured: dict[tuple[int, str], dict], copy_shares: dict[int, float] | None = None
) -> list[dict]:
    """The paper preset's rows (payload x mechanism, in PAYLOADS x MECHANISMS order) from each
    run's measurements; reductions are against software at the same payload; ``copy_share_pct``
    is the payload's copy share of the software run's time (``copy_shares``; None without)."""
    copy_shares = copy_shares or {}
    rows = []
    for payload in sorted({p for p, _ in measured}):
        base = measured[(payload, BASELINE)]
        for mechanism in MECHANISMS:
            m = measured[(payload, mechanism)]
            rows.append(
                {
                    "preset": PRESET,
                    "workload": "network",
                    "payload": payload,
                    "mechanism": mechanism,
                    "cycles": m["cycles"],
                    "offchip_bytes": m["offchip_bytes"],
                    "pct_copies_in_l2": _pct(m["l2_copies"], m["l1_copies"] + m["l2_copies"]),
                    # The preset has no memory-side engine.
                    "pct_copies_in_dram": 0.0,
                    "memory_bytes": m["memory_bytes"],
                    "time_reduction_pct": 100.0 * (1.0 - m["cycles"] / base["cycles"]),
                    "traffic_reduction_pct": 100.0 * (1.0 - m["offchip_bytes"] / base["offchip_bytes"]),
                    "copy_share_pct": copy_shares.get(payload),
                    "paper": paper_text(mechanism, payload),
                }
            )
    return rows


#: DCE-NT's time bound in the paper per payload (the choices' rows print it beside them).
DCE_NT_PAPER_TIME = {p: b["time_reduction_pct"].text for (m, p), b in PAPER.items() if m == "dce_nt"}


def choice_rows_from(measured: dict[tuple[str, int, str], dict]) -> list[dict]:
    """Per payload and choice (CHOICES order), DCE-NT against software with bulksim's choice
    and without it, from the paper preset's runs keyed (trace variant, payload, mechanism):
    both runs' cycles, DCE-NT's time and traffic reductions, its share of copies in L2 and the
    copy's share of the software run's time on that trace."""
    rows = []
    for payload in sorted({p for _, p, _ in measured}):
        for choice, (label, trace, mechanism) in CHOICES.items():
            base = measured[(trace, payload, BASELINE)]
            m = measured[(trace, payload, mechanism)]
            no_copy = measured[(f"{trace}_no_copy", payload, BASELINE)]
            rows.append(
                {
                    "preset": CHOICES_PRESET,
                    "workload": trace,
                    "payload": payload,
                    "choice": choice,
                    "label": label,
                    "software_cycles": base["cycles"],
                    "dce_nt_cycles": m["cycles"],
                    "copy_share_pct": copy_share_pct(no_copy["cycles"], base["cycles"]),
                    "time_reduction_pct": 100.0 * (1.0 - m["cycles"] / base["cycles"]),
                    "traffic_reduction_pct": 100.0 * (1.0 - m["offchip_bytes"] / base["offchip_bytes"]),
                    "pct_copies_in_l2": _pct(m["l2_copies"], m["l1_copies"] + m["l2_copies"]),
                    "paper": DCE_NT_PAPER_TIME.get(payload),
                }
            )
    return rows


#: The DDR3 rows' workloads, in the order they are listed.
DDR3_WORKLOADS = ("network", "bulkcopy-hot", "bulkcopy-cold", "forkbench")


def ddr3_rows_from(measured: dict[tuple[str, int, str], dict]) -> list[dict]:
    """The DDR3 preset's rows ((workload, payload) x mechanism, workloads in DDR3_WORKLOADS
    order, payloads ascending, mechanisms in DDR3_MECHANISMS order) from each run's
    measurements keyed (workload, payload, mechanism); reductions are against software on the
    same workload and payload. The paper has no such system: ``paper`` is None."""
    rows = []
    cases = sorted({(w, p) for w, p, _ in measured}, key=lambda c: (DDR3_WORKLOADS.index(c[0]), c[1]))
    for workload, payload in cases:
        base = measured[(workload, payload, BASELINE)]
        for mechanism in DDR3_MECHANISMS:
            m = measured[(workload, payload, mechanism)]
            in_l2, in_dram = _shares(m)
            rows.append(
                {
                    "preset": DDR3_PRESET,
                    "workload": workload,
                    "payload": payload,
                    "mechanism": mechanism,
                    "cycles": m["cycles"],
                    "offchip_bytes": m["offchip_bytes"],
                    "pct_copies_in_l2": in_l2,
                    "pct_copies_in_dram": in_dram,
                    "memory_bytes": m["memory_bytes"],
                    "channel_bytes": m["channel_bytes"],
                    "time_reduction_pct": 100.0 * (1.0 - m["cycles"] / base["cycles"]),
                    "traffic_reduction_pct": 100.0 * (1.0 - m["offchip_bytes"] / base["offchip_bytes"]),
                    "paper": None,
                }
            )
    return rows


def bulkcopy_copies(size: int, total_bytes: int | None = None) -> int:
    """Copies a bulkcopy run of `size`-byte copies makes: `total_bytes` (BULKCOPY_BYTES) in
    all, at least one."""
    return max(1, (total_bytes or BULKCOPY_BYTES) // size)


def _make_input(out: Path, kind: str, params: dict) -> None:
    """Writes the workload `kind` (network, bulkcopy or forkbench) with `params` into `out`."""
    if kind == "network":
        write_network(out, **params)
    elif kind == "bulkcopy":
        write_bulkcopy(out, **params)
    else:
        api.generate_forkbench(out, **params)


def run_case(args: dict, inputs: Path) -> dict:
    """One case: its workload (generated once into `inputs`, keyed by its parameters and the
    engine) run with its mechanism on its preset's system; the run's stats."""
    kind, params = args["input"]["kind"], args["input"]["params"]
    path = provenance.cached_input(
        inputs, f"copy-engines-{kind}", kind, params, lambda out: _make_input(out, kind, params)
    )
    return _run(path, args["mechanism"], args["preset"])


def plan_cases(
    quick: bool = False,
    packets: int | None = None,
    payloads: tuple[int, ...] | None = None,
    *,
    ddr3_workloads: tuple[str, ...] = DDR3_WORKLOADS,
    bulkcopy_sizes: tuple[int, ...] | None = None,
    bulkcopy_bytes: int | None = None,
    forkbench_array_bytes: int | None = None,
    forkbench_pages: int | None = None,
) -> list[Case]:
    """Every run, the longest first (about the bytes copied, software the slowest), so that no
    long run starts last and keeps one worker busy alone. The paper preset's runs, then the
    DDR3 preset's (its workloads `ddr3_workloads`, none with ``()``). `packets` replaces the
    network run length and `payloads` its sizes (both presets), `bulkcopy_sizes`,
    `bulkcopy_bytes`, `forkbench_array_bytes` and `forkbench_pages` the other DDR3 workloads'
    (tests use less)."""
    packets = packets or (QUICK_PACKETS if quick else FULL_PACKETS)
    payloads = payloads or PAYLOADS
    bulkcopy_sizes = bulkcopy_sizes or (QUICK_BULKCOPY_SIZES if quick else BULKCOPY_SIZES)
    bulkcopy_bytes = bulkcopy_bytes or BULKCOPY_BYTES
    forkbench_array_bytes = forkbench_array_bytes or FORKBENCH_ARRAY_BYTES
    forkbench_pages = forkbench_pages or (QUICK_FORKBENCH_PAGES if quick else FORKBENCH_PAGES)
    unknown = set(ddr3_workloads) - set(DDR3_WORKLOADS)
    if unknown:
        raise ValueError(f"ddr3_workloads: {sorted(unknown)}; expected some of {', '.join(DDR3_WORKLOADS)}")
    # (preset, workload, payload) -> (the input's kind and parameters, bytes the run copies)
    inputs: dict[tuple[str, str, int], tuple[dict, int]] = {}
    for payload in payloads:
        for variant, options in NETWORK_VARIANTS.items():
            made = {"kind": "network", "params": {"payload": payload, "packets": packets, **options}}
            copied = packets * payload if options.get("copy", True) else packets * 100
            inputs[(PRESET, variant, payload)] = (made, copied)
        if "network" in ddr3_workloads:
            inputs[(DDR3_PRESET, "network", payload)] = inputs[(PRESET, "network", payload)]
    for workload, hot in BULKCOPY_HOT.items():
        if workload not in ddr3_workloads:
            continue
        for size in bulkcopy_sizes:
            copies = bulkcopy_copies(size, bulkcopy_bytes)
            made = {"kind": "bulkcopy", "params": {"size": size, "copies": copies, "hot": hot}}
            inputs[(DDR3_PRESET, workload, size)] = (made, copies * size)
    if "forkbench" in ddr3_workloads:
        made = {
            "kind": "forkbench",
            "params": {"array_bytes": forkbench_array_bytes, "pages_updated": forkbench_pages},
        }
        inputs[(DDR3_PRESET, "forkbench", FORKBENCH_PAYLOAD)] = (
            made,
            forkbench_pages * FORKBENCH_PAYLOAD + forkbench_array_bytes // 16,
        )
    points = [
        (case, m)
        for case in inputs
        for m in (VARIANT_MECHANISMS[case[1]] if case[0] == PRESET else PRESET_MECHANISMS[case[0]])
    ]
    points.sort(key=lambda p: (-inputs[p[0]][1], p[1] != BASELINE))
    return [
        Case(
            f"{preset}-{workload}-{payload}-{m}",
            run_case,
            {
                "preset": preset,
                "workload": workload,
                "payload": payload,
                "mechanism": m,
                "input": inputs[(preset, workload, payload)][0],
            },
        )
        for (preset, workload, payload), m in points
    ]


def rows_of(cases: list[Case], stats: dict[str, dict]) -> list[dict]:
    """The paper preset's rows, DCE-NT's choices' rows and the DDR3 preset's rows from each
    case's stats."""
    measured = {
        ((c.args["preset"], c.args["workload"], c.args["payload"]), c.args["mechanism"]): measurement(
            stats[c.key]
        )
        for c in cases
    }
    payloads = sorted({p for (preset, _, p), _ in measured if preset == PRESET})
    variants = {(w, p, m): r for ((preset, w, p), m), r in measured.items() if preset == PRESET}
    paper = {(p, m): r for (w, p, m), r in variants.items() if w == "network" and m in MECHANISMS}
    shares = {
        p: copy_share_pct(
            variants[("network_no_copy", p, BASELINE)]["cycles"], paper[(p, BASELINE)]["cycles"]
        )
        for p in payloads
    }
    ddr3 = {(w, p, m): r for ((preset, w, p), m), r in measured.items() if preset == DDR3_PRESET}
    return rows_from(paper, shares) + choice_rows_from(variants) + ddr3_rows_from(ddr3)


def run(quick: bool = False, workers: int | None = None, **narrower) -> list[dict]:
    """Every row, the runs on a local process pool without a results store (tests; `narrower`
    are ``plan_cases``'s keywords)."""
    from bulksim.reproduce.runner import run_cases

    with tempfile.TemporaryDirectory(prefix="bulksim-copy-engines-") as tmp:
        cases = plan_cases(quick, **narrower)
        return rows_of(cases, run_cases(cases, workers, Path(tmp)))


class CopyEngines(Reproduction):
    name = "copy-engines"
    title = (
        "Copy engines Figs. 3-5: network stand-in, software and software_nt (non-temporal stores)"
        " vs CE-L1, DCE, DCE-NT with each payload's copy share, DCE-NT without the warm ring or the pipeline"
        " (paper preset); DDR3 preset with DCE-RowClone: network, bulkcopy, forkbench"
    )
    paper = "Copy engines paper (seed 001), Sec. 3, Figures 3-5"
    columns = (
        "preset",
        "workload",
        "payload",
        "mechanism",
        "time_reduction_pct",
        "traffic_reduction_pct",
        "pct_copies_in_l2",
        "memory_bytes",
        "copy_share_pct",
    )

    def paper_values(self) -> list[dict]:
        return [{"mechanism": m, "payload": p, "text": paper_text(m, p)} for (m, p) in PAPER]

    def plan(self, options: Options) -> Plan:
        return Plan(plan_cases(options.quick))

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        return rows_of(plan.cases, stats)

    def summary(self, rows: list[dict], options: Options) -> dict:
        return {"differences": differences(rows), "slower_than_software": slower_than_software(rows)}

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        return render(rows)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """Time and off-chip traffic reduction over software copies, a panel per preset and
        workload, x = payload, a bar per mechanism. The paper states its results in words and
        bounds (printed beside the table), so there are no paper bars. The rows of the
        paper-choice ablations (no mechanism) are the table's only."""
        if not rows:
            return []  # nothing ran (every input missing): no empty figure
        runs = [r for r in rows if "mechanism" in r]
        if not runs:
            return []
        facets = list(dict.fromkeys((r["preset"], r["workload"]) for r in runs))
        drawn = []
        for key, what in (("time_reduction_pct", "time"), ("traffic_reduction_pct", "off-chip traffic")):
            panels = []
            for preset, workload in facets:
                mine = [r for r in runs if (r["preset"], r["workload"]) == (preset, workload)]
                payloads = list(dict.fromkeys(r["payload"] for r in mine))
                at = {(r["mechanism"], r["payload"]): r[key] for r in mine}
                mechanisms = list(dict.fromkeys(r["mechanism"] for r in mine))
                panels.append(
                    Panel(
                        f"{preset} preset: {workload}",
                        [f"{p} B" for p in payloads],
                        {m: [at.get((m, p)) for p in payloads] for m in mechanisms},
                        f"{what} reduction over software (%)",
                    )
                )
            title = (
                f"Copy engines Figures 3-5: {what} reduction per payload"
                "\n(the paper gives words and bounds, not numbers: see the table)"
            )
            name = "time" if key.startswith("time") else "traffic"
            drawn.append(draw(out / f"{self.name}-fig3-5-{name}.png", title, panels))
        return drawn


def paper_rows(rows: list[dict]) -> list[dict]:
    """The rows of the paper's preset."""
    return [r for r in rows if r["preset"] == PRESET]


def choice_rows(rows: list[dict]) -> list[dict]:
    """The rows of DCE-NT with and without bulksim's choices (paper preset)."""
    return [r for r in rows if r["preset"] == CHOICES_PRESET]


def ddr3_rows(rows: list[dict]) -> list[dict]:
    """The rows of the DDR3 preset."""
    return [r for r in rows if r["preset"] == DDR3_PRESET]


def differences(rows: list[dict]) -> list[str]:
    """Each value of the paper preset's rows outside the range the paper's words allow, e.g.
    "ce_l1 500 B: time -9.8% (paper 11-13%)", in the rows' order."""
    rows = paper_rows(rows)
    by = {(r["mechanism"], r["payload"]): r for r in rows}
    out = []
    for r in rows:
        for key, bound in PAPER.get((r["mechanism"], r["payload"]), {}).items():
            reference = by[(bound.relative_to, r["payload"])][key] if bound.relative_to else 0.0
            if not bound.allows(r[key], reference):
                paper = bound.text
                if bound.relative_to:
                    paper += f", i.e. {reference:.1f}% to {reference + (bound.high or 0):.1f}%"
                out.append(f"{r['mechanism']} {r['payload']} B: {METRICS[key]} {r[key]:.1f}% (paper {paper})")
    return out


def slower_than_software(rows: list[dict]) -> dict[str, list[int]]:
    """Per engine mechanism, the payloads at which it took more cycles than software (paper
    preset; software_nt, which the paper does not measure, is left out)."""
    out: dict[str, list[int]] = {}
    for r in paper_rows(rows):
        if r["time_reduction_pct"] < 0 and r["mechanism"] not in (BASELINE, "software_nt"):
            out.setdefault(r["mechanism"], []).append(r["payload"])
    return out


def render(rows: list[dict]) -> str:
    """The paper preset's table, then DCE-NT without bulksim's choices and the DDR3 preset's
    table when the rows have them."""
    text = render_paper(paper_rows(rows))
    choices = choice_rows(rows)
    if choices:
        text += "\n\n" + render_choices(choices)
    ddr3 = ddr3_rows(rows)
    return text + "\n\n" + render_ddr3(ddr3) if ddr3 else text


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def render_choices(rows: list[dict]) -> str:
    head = (
        f"{'payload':>7} {'run':50} {'software cycles':>15} {'DCE-NT cycles':>13} {'copy share':>10} "
        f"{'time red.':>9} {'traffic red.':>12} {'in L2':>6}  paper (time)"
    )
    lines = [
        "DCE-NT with and without the two choices its agreement with the paper rests on (bulksim's "
        "choices, not the paper's): the receive ring warm, the engines pipelined",
        head,
        "-" * len(head),
    ]
    for r in rows:
        lines.append(
            f"{r['payload']:7d} {r['label']:50} {r['software_cycles']:15,d} {r['dce_nt_cycles']:13,d} "
            f"{_share(r['copy_share_pct']):>10} {r['time_reduction_pct']:8.1f}% "
            f"{r['traffic_reduction_pct']:11.1f}% "
            f"{r['pct_copies_in_l2']:5.1f}%  {r['paper'] or '-'}"
        )
    lines.append(
        "each row against software on the same trace; copy share: 1 - cycles of that trace without its "
        "copies / software's cycles"
    )
    return "\n".join(lines)


def render_paper(rows: list[dict]) -> str:
    head = (
        f"{'payload':>7} {'mechanism':11} {'cycles':>12} {'copy share':>10} {'time red.':>9} "
        f"{'off-chip B':>12} "
        f"{'traffic red.':>12} {'in L2':>6} {'memory B':>11}  paper"
    )
    lines = [
        "Copy engines (Sec. 3, Figs. 3-5): network stand-in on the paper's system, "
        "reductions against the software memcpy",
        head,
        "-" * len(head),
    ]
    for r in rows:
        lines.append(
            f"{r['payload']:7d} {r['mechanism']:11} {r['cycles']:12,d} {_share(r.get('copy_share_pct')):>10} "
            f"{r['time_reduction_pct']:8.1f}% "
            f"{r['offchip_bytes']:12,d} {r['traffic_reduction_pct']:11.1f}% {r['pct_copies_in_l2']:5.1f}% "
            f"{r['memory_bytes']:11,d}  {r['paper'] or '-'}"
        )
    lines.append(
        "off-chip B: L1-L2 bytes with addresses (the paper's traffic); memory B: L2-memory bytes "
        "(the paper does not report them); in L2: movblks the L2 engine ran"
    )
    lines.append(
        "copy share: the payload's copy share of the software run's time (1 - cycles without the copies / "
        "software's cycles), the most time any mechanism can save; software_nt: the software memcpy with "
        "non-temporal stores (Sec. 3 names it, with CE-L1's traffic saving, and gives no numbers)"
    )
    slower = slower_than_software(rows)
    if slower:
        lines.append(
            "slower than the software memcpy (the paper has every mechanism faster): "
            + "; ".join(f"{m} at {', '.join(map(str, p))} B" for m, p in slower.items())
        )
    diff = differences(rows)
    if diff:
        lines.append(f"where bulksim differs from the paper's prose ({len(diff)} values):")
        lines += [f"  {d}" for d in diff]
    else:
        lines.append("bulksim is within every bound the paper's prose gives")
    return "\n".join(lines)


def render_ddr3(rows: list[dict]) -> str:
    head = (
        f"{'workload':13} {'payload':>7} {'mechanism':12} {'cycles':>12} {'time red.':>9} "
        f"{'off-chip B':>12} {'traffic red.':>12} {'in L2':>6} {'in DRAM':>7} {'memory B':>12} "
        f"{'channel B':>12}"
    )
    lines = [
        "Copy engines on bulksim's DDR3 preset (configs/copy_engines_ddr3.toml; no paper numbers), "
        "reductions against the software memcpy",
        head,
        "-" * len(head),
    ]
    for r in rows:
        lines.append(
            f"{r['workload']:13} {r['payload']:7d} {r['mechanism']:12} {r['cycles']:12,d} "
            f"{r['time_reduction_pct']:8.1f}% {r['offchip_bytes']:12,d} {r['traffic_reduction_pct']:11.1f}% "
            f"{r['pct_copies_in_l2']:5.1f}% {r['pct_copies_in_dram']:6.1f}% {r['memory_bytes']:12,d} "
            f"{r['channel_bytes']:12,d}"
        )
    lines += [
        "payload: the network packet's payload, the bulkcopy copy's size, forkbench's 4 KB page (each "
        "copy-on-write copy copies one)",
        "in L2 / in DRAM: share of the copied 32-B blocks the L2 engine ran / the memory controller ran "
        "as whole 4 KB chunks (dce_rowclone)",
        "memory B: L2-memory bytes; channel B: DRAM channel bytes (requests at the controllers x 64; "
        "RowClone's in-DRAM copies move none)",
    ]
    return "\n".join(lines)


REPRODUCTION = CopyEngines()
