"""`bulksim reproduce pcm-writes`: the Rank Assignment paper's PCM write-drain study (Shevgoor
et al., ISPASS 2016, §III-D, §VI-D; docs/rank_assignment.md, "Reproduction: pcm-writes") on the
Table II system with ``PCM_x8_1600`` and no refresh, beside the paper's numbers:

- Figure 4: PCM_NoWr (writes absorbed, ``write_drain.policy = "ideal"``), PCM_EqPriority
  (reads and writes in one FCFS order), PCM_WrDrain (watermark drains 40 / 20) per rank and per
  channel, and per rank with a channel's ranks draining together (coordinated); with the
  banks written and threads stalled per drain, over every period in which the controller
  served writes and over the drains the write queue's high watermark started (the paper's
  drains; its 8.6 of 16 banks are a channel's, so the channel-scope system is the one to set
  beside them);
- Figure 9: Rank Assignment (``rank_static``) against the per-rank WrDrain baseline, and with
  writes absorbed (NoWrites_RA against NoWrites).

Every time is the time to the N-th DRAM access over PCM_NoWr's of the same workload."""

from __future__ import annotations

from bulksim.reproduce.rank_study import (
    FULL_ACCESSES,
    QUICK_ACCESSES,
    Run,
    mean_rows,
    normalized_rows,
    run_deduplicated,
    study_workloads,
)

# The rows are written as every Rank Assignment reproduction writes them (`--json FILE`).
from bulksim.reproduce.rank_study import write_json as write_json

#: Every PCM system: the preset, no refresh (PCM has none), watermarks 40 / 20 (§III-D).
PCM = (
    'dram.preset="PCM_x8_1600"',
    'controller.refresh.policy="none"',
    "controller.write_drain.high=40",
    "controller.write_drain.low=20",
)
RA = ('os.allocator="rank_static"',)
SYSTEMS = {
    "pcm_no_writes": PCM + ('controller.write_drain.policy="ideal"',),
    "pcm_eq_priority": PCM + ('controller.write_drain.policy="equal_priority"',),
    "pcm_wr_drain_rank": PCM + ('controller.write_drain.scope="rank"',),
    # *choice*: the channel variant keeps 40 / 20 per channel and a queue of 2 x high.
    "pcm_wr_drain_channel": PCM
    + ('controller.write_drain.scope="channel"', "controller.write_queue_size=80"),
    "pcm_wr_drain_coordinated": PCM
    + ('controller.write_drain.scope="rank"', "controller.write_drain.coordinate=true"),
    "pcm_rank_assignment": PCM + ('controller.write_drain.scope="rank"',) + RA,
    "pcm_no_writes_ra": PCM + ('controller.write_drain.policy="ideal"',) + RA,
}
FIG4 = [
    "pcm_no_writes",
    "pcm_eq_priority",
    "pcm_wr_drain_rank",
    "pcm_wr_drain_channel",
    "pcm_wr_drain_coordinated",
]
FIG9 = ["pcm_no_writes", "pcm_no_writes_ra", "pcm_wr_drain_rank", "pcm_rank_assignment"]
BASELINE = "pcm_no_writes"

#: The paper's times over PCM_NoWr (§III-D: best baseline +21%; §VI-D: RA -13.3% of it,
#: NoWrites_RA -6.6% of NoWrites); coordination changes WrDrain by <1% (§III-D).
PAPER = {
    "pcm_no_writes": 1.0,
    "pcm_wr_drain_rank": 1.21,
    "pcm_wr_drain_coordinated": 1.21,
    "pcm_rank_assignment": round(1.21 * (1 - 0.133), 4),
    "pcm_no_writes_ra": round(1 - 0.066, 4),
}
PAPER_BANKS_PER_DRAIN = 8.6  # of 16 per channel (§III-D)
PAPER_THREADS_PER_DRAIN = 5.7  # of 8 (§III-D)
#: The system at the paper's drain scope: "8.6 banks (out of 16 banks in a channel)" is more
#: than one PCM rank's 8, so its drains span a channel (one write queue, Hi/Lo 40/20).
PAPER_SCOPE = "pcm_wr_drain_channel"
#: Per-drain stats: every write-serving period, and those the high watermark started.
DRAIN_KEYS = (
    "write_drains",
    "banks_written_per_drain",
    "threads_stalled_per_drain",
    "watermark_drains",
    "banks_written_per_watermark_drain",
    "threads_stalled_per_watermark_drain",
)


def plan(quick: bool, accesses: int | None = None) -> tuple[list[Run], list[str]]:
    """The runs (tagged with experiment and system) and the skipped workloads' lines;
    `accesses` replaces the run length (tests use shorter runs)."""
    workloads, skipped = study_workloads(quick)
    accesses = accesses or (QUICK_ACCESSES if quick else FULL_ACCESSES)
    runs = [
        Run(w.name, SYSTEMS[s], accesses, (("experiment", exp), ("system", s)))
        for w in workloads
        for exp, systems in (("fig4", FIG4), ("fig9", FIG9))
        for s in systems
    ]
    return runs, skipped


#: The count each per-drain mean is over.
DRAIN_COUNT = {
    "banks_written_per_drain": "write_drains",
    "threads_stalled_per_drain": "write_drains",
    "banks_written_per_watermark_drain": "watermark_drains",
    "threads_stalled_per_watermark_drain": "watermark_drains",
}


def _drains(stats: dict) -> dict:
    i = stats.get("interruptions", {})
    return {key: i.get(key) for key in DRAIN_KEYS}


def drain_means(rows: list[dict], means: list[dict]) -> None:
    """Adds the per-drain stats' means over workloads to the `means` rows. A per-drain mean
    covers the workloads that had such drains: a run without any reports 0, which is no
    drain's value."""
    for m in means:
        members = [r for r in rows if (r["experiment"], r["system"]) == (m["experiment"], m["system"])]
        for key in DRAIN_KEYS:
            count = DRAIN_COUNT.get(key)
            values = [r[key] for r in members if r[key] is not None and (count is None or r[count])]
            m[key] = sum(values) / len(values) if values else None


def run(
    quick: bool = False, workers: int | None = None, mean: str = "arith", accesses: int | None = None
) -> list[dict]:
    """Per workload and mean: Figure 4's and Figure 9's systems over PCM_NoWr, with the
    per-drain stats."""
    runs, skipped = plan(quick, accesses)
    return rows_from_stats(runs, run_deduplicated(runs, workers), skipped, mean)


def rows_from_stats(
    runs: list[Run], stats: list[dict], skipped: list[str], mean: str = "arith"
) -> list[dict]:
    """The rows from each run's stats (in `runs`' order) and the skipped workloads' lines."""
    paper = {(exp, s): PAPER.get(s) for exp in ("fig4", "fig9") for s in SYSTEMS}
    rows = normalized_rows(runs, stats, {"fig4": BASELINE, "fig9": BASELINE}, paper, _drains)
    means = mean_rows(rows, mean)
    drain_means(rows, means)
    rows += means
    rows += [{"experiment": "skipped", "system": "", "workload": line, "source": "real"} for line in skipped]
    return rows


def _fmt(v: float | None, width: int, digits: int = 3) -> str:
    return f"{'-':>{width}}" if v is None else f"{v:{width}.{digits}f}"


def render(rows: list[dict]) -> str:
    timed = [r for r in rows if r["experiment"] in ("fig4", "fig9")]
    workloads = list(dict.fromkeys(r["workload"] for r in timed if r["workload"] != "mean"))
    kind = next((r["source"] for r in timed if r["workload"] == "mean"), "mean:arith").split(":")[1]
    by = {(r["experiment"], r["system"], r["workload"]): r for r in timed}
    lines = []
    for exp, systems, title in (
        ("fig4", FIG4, "Rank Assignment Figure 4: PCM write handling"),
        ("fig9", FIG9, "Rank Assignment Figure 9: PCM with Rank Assignment"),
    ):
        lines.append(f"{title}, time to the N-th DRAM access over PCM_NoWr ({kind} mean)")
        lines.append(
            f"{'system':26}"
            + "".join(f" {w:>13}" for w in workloads)
            + f"{'mean':>9}{'paper':>8}{'drains':>9}{'banks/drain':>12}{'stalled/drain':>14}"
            + f"{'wm drains':>10}{'banks/wm':>9}{'stalled/wm':>11}"
        )
        for s in systems:
            m = by[(exp, s, "mean")]
            lines.append(
                f"{s:26}"
                + "".join(" " + _fmt(by[(exp, s, w)]["exec_time_norm"], 13) for w in workloads)
                + _fmt(m["exec_time_norm"], 9)
                + _fmt(m["paper"], 8)
                + _fmt(m["write_drains"], 9, 0)
                + _fmt(m["banks_written_per_drain"], 12, 2)
                + _fmt(m["threads_stalled_per_drain"], 14, 2)
                + _fmt(m.get("watermark_drains"), 10, 0)
                + _fmt(m.get("banks_written_per_watermark_drain"), 9, 2)
                + _fmt(m.get("threads_stalled_per_watermark_drain"), 11, 2)
            )
        lines.append(
            "drains: every period the controller served writes (mean count per run); wm: those "
            "the write queue's high watermark started (the paper's drains)"
        )
        lines.append("")
    t = {s: by[("fig4", s, "mean")]["exec_time_norm"] for s in FIG4}
    best = min(("pcm_eq_priority", "pcm_wr_drain_rank", "pcm_wr_drain_channel"), key=t.get)
    coord = 100 * (t["pcm_wr_drain_coordinated"] / t["pcm_wr_drain_rank"] - 1)
    ra = {s: by[("fig9", s, "mean")]["exec_time_norm"] for s in FIG9}
    lines.append(f"best baseline ({best}) over PCM_NoWr: {100 * (t[best] - 1):+.1f}% (paper +21%)")
    m = by[("fig4", PAPER_SCOPE, "mean")]
    lines.append(
        f"per watermark drain at the paper's scope ({PAPER_SCOPE}: one write queue per channel, "
        f"Hi/Lo 40/20, 16 banks): {m.get('banks_written_per_watermark_drain') or 0:.2f} banks written "
        f"(paper {PAPER_BANKS_PER_DRAIN} of 16), "
        f"{m.get('threads_stalled_per_watermark_drain') or 0:.2f} threads stalled "
        f"(paper {PAPER_THREADS_PER_DRAIN} of 8); every write-serving period: "
        f"{m['banks_written_per_drain'] or 0:.2f} banks, {m['threads_stalled_per_drain'] or 0:.2f} threads"
    )
    lines.append(f"coordinated drains vs per-rank drains: {coord:+.1f}% (paper <1%)")
    ra_change = 100 * (ra["pcm_rank_assignment"] / ra["pcm_wr_drain_rank"] - 1)
    no_writes_change = 100 * (ra["pcm_no_writes_ra"] / ra["pcm_no_writes"] - 1)
    lines.append(
        f"RA vs WrDrain: {ra_change:+.1f}% (paper -13.3%); "
        f"NoWrites_RA vs NoWrites: {no_writes_change:+.1f}% (paper -6.6%)"
    )
    lines += [r["workload"] for r in rows if r["experiment"] == "skipped"]
    return "\n".join(lines)
