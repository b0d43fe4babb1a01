"""RowClone section 7.3 (Figures 10-11, Table 5) on real programs: each captured workload of the
suite under ``workloads/`` (and the forkset trace of ``../shared/traces/rowclone/``) runs on the
paper's system (``configs/rowclone_paper.toml``) under the baseline (copies and zeroing by the
CPU), RowClone and RowClone-ZI, and the report prints, beside the paper's numbers:

- Figure 10: the baseline's channel traffic split into read, write, copy and initialization;
- Figure 11: IPC of the three mechanisms, and RowClone-ZI's improvement over the baseline;
- Table 5: DRAM energy and memory bandwidth (bytes over the channel) reduction of RowClone and
  RowClone-ZI against the baseline.

The paper's programs are its own full-system traces (bootup, compile, forkbench, mcached, mysql,
shell); bulksim's are captures of the same kinds of programs made on the user's machine
(``make workloads``), so inputs and magnitudes differ; the quantities are the paper's. Captures
that are missing are named with the command that makes them. ``--quick`` runs what CI can: the
small forkbench capture committed as test data and the forkset trace (a few seconds each)."""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from bulksim import api
from bulksim.paths import REPO, captures_dir, shared_traces_dir
from bulksim.reproduce.figures import Panel, draw
from bulksim.reproduce.forkbench import CONFIG
from bulksim.reproduce.multicore import MECHANISMS
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction, fingerprint


@dataclass(frozen=True)
class App:
    """A workload of the suite: the paper's name, its capture's folder under the captures
    directory, and the script that makes it."""

    paper_name: str
    capture: str
    script: str


#: The paper's six programs (Table 4) and the captures that stand for them, then extras.
APPS = [
    App("bootup", "bootup", "workloads/bootup/capture.sh"),
    App("compile", "gcc", "workloads/gcc/capture.sh"),
    App("forkbench", "forkbench", "workloads/forkbench/capture.sh"),
    App("mcached", "memcached", "workloads/memcached/capture.sh"),
    App("mysql", "mariadb", "workloads/mariadb/capture.sh"),
    App("shell", "shell", "workloads/shell/capture.sh"),
    App("", "redis", "workloads/redis/capture.sh"),
    App("", "sqlite", "workloads/sqlite/capture.sh"),
]
#: The committed small forkbench capture (test data), used by --quick and when the full
#: capture is missing.
SMALL_FORKBENCH = REPO / "tests" / "data" / "captures" / "forkbench-small"
FORKSET = "rowclone/trace.forkset-rc.gz"

#: Table 5: DRAM energy and bandwidth reduction (percent) of RowClone and RowClone-ZI.
PAPER_TABLE5 = {
    "bootup": (39, 40, 49, 52),
    "compile": (-2, 32, 2, 47),
    "forkbench": (69, 69, 60, 60),
    "mcached": (0, 15, 0, 16),
    "mysql": (-1, 17, 0, 21),
    "shell": (68, 67, 81, 81),
}
#: Figure 11's values the text gives: RowClone-ZI's IPC improvement over the baseline (%).
PAPER_ZI_IPC = {"forkbench": 66, "shell": 40}
PAPER_FIGURE10 = "copy and initialization are 10% to 80% of the memory traffic of the six programs"


@dataclass
class Row:
    workload: str
    paper_name: str
    source: str
    mechanism: str
    instructions: int
    ipc: float
    read_bytes: int
    write_bytes: int
    copy_bytes: int
    init_bytes: int
    dram_energy_nj: float


def run_case(args: dict, inputs: Path) -> dict:
    """One program with one mechanism as a reproduction's case: its stats."""
    stats = api.run_workload(
        CONFIG, workload=args["path"], fmt=args["fmt"], overrides=MECHANISMS[args["mechanism"]]
    )
    return stats.to_dict()


def row_of(name: str, paper_name: str, path: str, mechanism: str, stats) -> Row:
    """A program's row from its run's stats."""
    traffic = stats["traffic"]
    return Row(
        workload=name,
        paper_name=paper_name,
        source=path,
        mechanism=mechanism,
        instructions=stats["instructions"],
        ipc=stats["ipc"],
        read_bytes=traffic["read_bytes"],
        write_bytes=traffic["write_bytes"],
        copy_bytes=traffic["copy_bytes"],
        init_bytes=traffic["init_bytes"],
        dram_energy_nj=stats["memory"]["energy"]["total_nj"],
    )


def plan(quick: bool) -> tuple[list[tuple[str, str, str | None, str]], list[str]]:
    """The workloads to run as (name, paper name, format, path), and a line for each missing
    one saying how to make it."""
    found, missing = [], []
    root = captures_dir()
    for app in APPS:
        path = root / app.capture
        if app.capture == "forkbench" and (quick or not path.is_dir()):
            if SMALL_FORKBENCH.is_dir():
                found.append(("forkbench-small", app.paper_name, "bulksim", str(SMALL_FORKBENCH)))
            if not quick and not path.is_dir():
                missing.append(f"{app.capture}: not captured (run `{app.script}` or `make workloads`)")
            continue
        if quick:
            continue
        if path.is_dir():
            found.append((app.capture, app.paper_name, "bulksim", str(path)))
        else:
            missing.append(f"{app.capture}: not captured (run `{app.script}` or `make workloads`)")
    forkset = shared_traces_dir() / FORKSET
    if forkset.is_file():
        found.append(("forkset", "", "rowclone", str(forkset)))
    else:
        missing.append(f"forkset: {forkset} is absent (the shared real traces)")
    return found, missing


def run(quick: bool = False, workers: int | None = None) -> tuple[list[Row], list[str]]:
    """Every row and the missing programs, the runs on a local process pool without a results
    store (tests)."""
    from bulksim.reproduce.runner import run_cases

    chosen = REPRODUCTION.plan(Options(quick=quick))
    with tempfile.TemporaryDirectory(prefix="bulksim-apps-") as tmp:
        stats = run_cases(chosen.cases, workers, Path(tmp))
    return [Row(**r) for r in REPRODUCTION.rows(chosen, stats, Options(quick=quick))], chosen.missing


class RowCloneApps(Reproduction):
    name = "rowclone-apps"
    title = "RowClone Figures 10-11, Table 5: captured programs and the forkset trace"
    paper = "Seshadri et al., RowClone, MICRO 2013, Figures 10-11 and Table 5"

    def paper_values(self) -> dict:
        return {"figure10": PAPER_FIGURE10}

    def plan(self, options: Options) -> Plan:
        """Each program found with each mechanism; the missing ones named."""
        found, missing = plan(options.quick)
        cases = [
            Case(
                f"{n}-{mech}",
                run_case,
                {
                    "name": n,
                    "paper_name": p,
                    "fmt": fmt,
                    "path": path,
                    "input": fingerprint(path),
                    "mechanism": mech,
                },
            )
            for n, p, fmt, path in found
            for mech in MECHANISMS
        ]
        return Plan(cases, missing=missing)

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        return [
            asdict(row_of(a["name"], a["paper_name"], a["path"], a["mechanism"], stats[c.key]))
            for c in plan.cases
            for a in (c.args,)
        ]

    def summary(self, rows: list[dict], options: Options) -> list[dict]:
        return summarize([Row(**r) for r in rows])

    def render(self, rows: list[dict], summary, plan: Plan, options: Options) -> str:
        return render([Row(**r) for r in rows], plan.missing)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """Figure 10 (the baseline's channel traffic by cause), Figure 11 (IPC, and RowClone-ZI's
        gain beside the paper's where its text gives one) and Table 5 (energy and bandwidth
        reductions beside the paper's), x = each program run."""
        if not rows:
            return []  # nothing ran (every input missing): no empty figure
        summary = summarize([Row(**r) for r in rows])
        groups = [s["workload"] + (f"\n(as {s['paper_name']})" if s["paper_name"] else "") for s in summary]
        mechanisms = ("rowclone", "rowclone_zi")

        def paper5(column: int, mechanism_index: int) -> list[float | None]:
            values = []
            for s in summary:
                paper = PAPER_TABLE5.get(s["paper_name"])
                values.append(paper[column + mechanism_index] if paper else None)
            return values

        fractions = Panel(
            "baseline channel traffic by cause",
            groups,
            {k: [100 * s["fractions"][k] for s in summary] for k in ("read", "write", "copy", "init")},
            "share of the baseline's channel bytes (%)",
        )
        ipc = Panel(
            "IPC",
            groups,
            {m: [s["ipc"][m] for s in summary] for m in ("baseline", *mechanisms)},
            "IPC (instructions per cycle)",
        )
        zi_gain = Panel(
            "RowClone-ZI's IPC gain",
            groups,
            {"rowclone_zi": [s["zi_ipc_improvement"] for s in summary]},
            "IPC improvement over the baseline (%)",
            paper={"rowclone_zi": [PAPER_ZI_IPC.get(s["paper_name"]) for s in summary]},
        )
        energy, bandwidth = (
            Panel(
                f"DRAM {what} reduction",
                groups,
                {m: [s[key][m] for s in summary] for m in mechanisms},
                f"{what} reduction over the baseline (%)",
                paper={m: paper5(column, i) for i, m in enumerate(mechanisms)},
            )
            for what, key, column in (
                ("energy", "energy_reduction", 0),
                ("bandwidth", "bandwidth_reduction", 2),
            )
        )
        return [
            draw(
                out / f"{self.name}-fig10.png",
                f"RowClone Figure 10 (the paper gives a range only: {PAPER_FIGURE10})",
                [fractions],
            ),
            draw(
                out / f"{self.name}-fig11.png",
                "RowClone Figure 11: IPC of the captured programs",
                [ipc, zi_gain],
            ),
            draw(out / f"{self.name}-table5.png", "RowClone Table 5", [energy, bandwidth]),
        ]


def reduction(base: float, other: float) -> float:
    """Percent less than the baseline (negative: more)."""
    return 100.0 * (1.0 - other / base) if base else 0.0


def summarize(rows: list[Row]) -> list[dict]:
    """Per workload: Figure 10's baseline traffic fractions, Figure 11's IPCs and RowClone-ZI's
    improvement, Table 5's reductions."""
    out = []
    for name in dict.fromkeys(r.workload for r in rows):
        by = {r.mechanism: r for r in rows if r.workload == name}
        base, rc, zi = by["baseline"], by["rowclone"], by["rowclone_zi"]
        total = base.read_bytes + base.write_bytes + base.copy_bytes + base.init_bytes

        def channel(r: Row) -> int:
            return r.read_bytes + r.write_bytes + r.copy_bytes + r.init_bytes

        out.append(
            {
                "workload": name,
                "paper_name": base.paper_name,
                "fractions": {
                    k: (getattr(base, f"{k}_bytes") / total if total else 0.0)
                    for k in ("read", "write", "copy", "init")
                },
                "ipc": {"baseline": base.ipc, "rowclone": rc.ipc, "rowclone_zi": zi.ipc},
                "zi_ipc_improvement": 100.0 * (zi.ipc / base.ipc - 1.0) if base.ipc else 0.0,
                "energy_reduction": {
                    "rowclone": reduction(base.dram_energy_nj, rc.dram_energy_nj),
                    "rowclone_zi": reduction(base.dram_energy_nj, zi.dram_energy_nj),
                },
                "bandwidth_reduction": {
                    "rowclone": reduction(channel(base), channel(rc)),
                    "rowclone_zi": reduction(channel(base), channel(zi)),
                },
            }
        )
    return out


def render(rows: list[Row], missing: list[str]) -> str:
    summary = summarize(rows)
    lines = ["RowClone Figure 10: baseline channel traffic by cause (%); paper: " + PAPER_FIGURE10]
    lines.append(f"{'workload':18} {'read':>6} {'write':>6} {'copy':>6} {'init':>6}")
    for s in summary:
        f = s["fractions"]
        lines.append(
            f"{s['workload']:18} " + " ".join(f"{100 * f[k]:6.1f}" for k in ("read", "write", "copy", "init"))
        )
    lines.append("")
    lines.append("RowClone Figure 11: IPC; RowClone-ZI over the baseline (%), paper's in ()")
    lines.append(f"{'workload':18} {'baseline':>9} {'RowClone':>9} {'+ZI':>9} {'ZI gain':>9}")
    for s in summary:
        paper = PAPER_ZI_IPC.get(s["paper_name"])
        ipc = s["ipc"]
        lines.append(
            f"{s['workload']:18} {ipc['baseline']:9.3f} {ipc['rowclone']:9.3f} {ipc['rowclone_zi']:9.3f} "
            f"{s['zi_ipc_improvement']:8.0f}%" + (f" ({paper}%)" if paper is not None else "")
        )
    lines.append("")
    lines.append("RowClone Table 5: DRAM energy and bandwidth reduction (%); paper's (as <name>) in ()")
    lines.append(f"{'workload':30} {'energy RC':>12} {'energy +ZI':>12} {'bw RC':>12} {'bw +ZI':>12}")
    for s in summary:
        paper = PAPER_TABLE5.get(s["paper_name"])
        vals = (
            s["energy_reduction"]["rowclone"],
            s["energy_reduction"]["rowclone_zi"],
            s["bandwidth_reduction"]["rowclone"],
            s["bandwidth_reduction"]["rowclone_zi"],
        )
        cells = [
            f"{v:5.0f}" + (f" ({p:3d})" if paper else "      ")
            for v, p in zip(vals, paper or (0,) * 4, strict=True)
        ]
        label = s["workload"] + (f" as {s['paper_name']}" if s["paper_name"] else "")
        lines.append(f"{label:30} " + " ".join(f"{c:>12}" for c in cells))
    for m in missing:
        lines.append(f"missing: {m}")
    return "\n".join(lines)


REPRODUCTION = RowCloneApps()
