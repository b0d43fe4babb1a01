"""Drawing a reproduction's figures (``bulksim reproduce NAME --plot DIR``): grouped bars in the
house style of ``bulksim.experiment.plots`` (labelled axes with units, a light grid), bulksim's bar solid
and the paper's value, where the paper gives a number, as a hatched bar of the same colour
right beside it, each labelled "bulksim" or "paper" in the legend. The legend sits below the
axes so that it never covers a bar, and a figure that shows a mean over a dimension it does
not draw says so in its title (issue 37, item 5). One PNG per paper figure or table, named
``NAME-FIGURE.png``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: A value per x group; None where there is no bar (a point not run, or no paper number).
Values = Sequence[float | None]


@dataclass
class Panel:
    """One axes of a figure: x ``groups``, bulksim's ``series`` (label -> a value per group)
    and the paper's values for some of those labels (``paper``), the y label with its unit,
    and ``log`` for a log y axis (values spanning orders of magnitude)."""

    title: str
    groups: list[str]
    series: dict[str, Values]
    ylabel: str
    paper: dict[str, Values] = field(default_factory=dict)
    log: bool = False


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw(path: Path, title: str, panels: list[Panel], columns: int = 3) -> Path:
    """Draws `panels` side by side (at most `columns` a row) under `title` into `path` (PNG, the
    title also in its ``Title`` text chunk, for tests and file browsers)."""
    plt = _pyplot()
    fig = build(title, panels, columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Title": title})
    plt.close(fig)
    return path


def build(title: str, panels: list[Panel], columns: int = 3):
    """The matplotlib figure `draw` saves."""
    plt = _pyplot()
    labels = list(dict.fromkeys(label for p in panels for label in p.series))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if len(labels) > len(colors):
        colors = list(plt.get_cmap("tab20").colors)  # no two labels share a colour
    color_of = {label: colors[i % len(colors)] for i, label in enumerate(labels)}
    ncols = min(columns, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.5 * ncols, 4 * nrows), squeeze=False)
    handles: dict[str, object] = {}
    for ax, panel in zip(axes.flat, panels, strict=False):
        # Each label's bulksim bar, then its paper bar if the paper gives any value for it.
        bars = []
        for label, values in panel.series.items():
            bars.append((label, "bulksim", values))
            paper = panel.paper.get(label)
            if paper is not None and any(_number(v) for v in paper):
                bars.append((label, "paper", paper))
        width = 0.8 / max(len(bars), 1)
        for i, (label, source, values) in enumerate(bars):
            xs = [g + (i - (len(bars) - 1) / 2) * width for g in range(len(panel.groups))]
            kept = [(x, v) for x, v in zip(xs, values, strict=True) if _number(v)]
            if not kept:
                continue
            name = f"{label} ({source})" if label else source
            style = {"color": color_of[label], "edgecolor": "black", "linewidth": 0.5}
            if source == "paper":
                style.update(hatch="//", alpha=0.45)
            drawn = ax.bar([x for x, _ in kept], [v for _, v in kept], width, label=name, **style)
            handles.setdefault(name, drawn)
        ax.set_xticks(range(len(panel.groups)))
        ax.set_xticklabels(panel.groups, rotation=20, ha="right")
        ax.set_title(panel.title, fontsize="medium")
        ax.set_ylabel(panel.ylabel)
        if panel.log:
            ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    # Below every axes, so that it covers no bar; bbox_inches keeps it inside the image.
    fig.legend(
        list(handles.values()),
        list(handles),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(4, max(len(handles), 1)),
        fontsize="small",
    )
    return fig


def mean_note(kind: str, averaged: Sequence[str], over: str) -> str:
    """The title's words for a bar that is a mean over `averaged` (the `over` it does not draw)."""
    names = ", ".join(averaged)
    return f"'mean' = {kind} mean over the {len(averaged)} {over} ({names})"


#: The y label of an experiment (and system PART) whose rows carry ``value``, not a time.
VALUE_LABELS = {
    ("fig3", ""): "weighted core stall time per refresh",
    ("fig3", "any_thread"): "share of refreshes stalling any thread",
    ("fig3", "per_thread"): "share of refreshes stalling a given thread",
    ("fig8", ""): "RA's time reduction (fraction)",
    ("ra_vs", ""): "RA's time reduction against each (fraction)",
    ("vi_b", ""): "RA's time reduction (fraction)",
    ("one_channel", ""): "RA's time reduction (fraction)",
    ("normal_temperature", ""): "RA's time reduction per chip Gb (fraction)",
    ("six_threads", ""): "time change, 2 threads alone vs 4 sharing (fraction)",
    ("tab3", ""): "off-rank share / RA's reduction (fraction)",
}
#: What a panel's bars average over that the figure does not draw, said in its titles.
AVERAGED = {("fig3", "per_thread"): "per_thread: the mean over the threads"}


def column(at: dict, series: object, groups: Sequence[object], key: str) -> list[float | None]:
    """``at[(series, group)][key]`` for each group, None where there is no such row."""
    return [at[(series, g)].get(key) if (series, g) in at else None for g in groups]


def split_system(system: str) -> tuple[str, str]:
    """(the bar's label, the panel) of a system: ``S:PART`` (quantities of different units) and
    ``MAPPING/PAGE/REFRESH`` (address-mapping: a panel per refresh) have a panel per last part."""
    if ":" in system:
        label, _, part = system.partition(":")
        return label, part
    if "/" in system:
        label, _, part = system.rpartition("/")
        return label, part
    return system, ""


def rank_study_figures(name: str, paper: str, rows: list[dict], out: Path) -> list[Path]:
    """The Rank Assignment reproductions' figures (``rank_study_panels``), one PNG each."""
    return [
        draw(out / f"{name}-{experiment.replace('_', '-')}.png", title, panels)
        for experiment, title, panels in rank_study_panels(paper, rows)
    ]


def rank_study_panels(paper: str, rows: list[dict]) -> list[tuple[str, str, list[Panel]]]:
    """(experiment, title, panels) of each experiment of Rank Assignment rows (``experiment,
    system, workload, exec_time_norm, baseline, paper, value``) with a number to draw: x = the
    workloads (and their mean, named in the title), a bar per system, the paper's value beside
    each where the row has one; a panel per system PART (``split_system``)."""
    figures = []
    for experiment in dict.fromkeys(r["experiment"] for r in rows):
        mine = [r for r in rows if r["experiment"] == experiment]
        metric = "exec_time_norm" if any(_number(r.get("exec_time_norm")) for r in mine) else "value"
        if not any(_number(r.get(metric)) for r in mine):
            continue
        workloads = list(dict.fromkeys(r["workload"] for r in mine))
        parts = list(dict.fromkeys(split_system(r["system"])[1] for r in mine))
        panels = []
        for part in parts:
            systems = list(dict.fromkeys(r["system"] for r in mine if split_system(r["system"])[1] == part))
            at = {(r["system"], r["workload"]): r for r in mine}
            if metric == "exec_time_norm":
                ylabel = "execution time / the baseline's (ratio)"
            else:
                ylabel = VALUE_LABELS.get((experiment, part), "the row's value (docs/rank_assignment.md)")
            panels.append(
                Panel(
                    title=f"{experiment}: {part}" if part else experiment,
                    groups=workloads,
                    series={split_system(s)[0]: column(at, s, workloads, metric) for s in systems},
                    paper={split_system(s)[0]: column(at, s, workloads, "paper") for s in systems},
                    ylabel=ylabel,
                )
            )
        title = f"{paper}: {experiment}"
        baselines = list(dict.fromkeys(r["baseline"] for r in mine if r.get("baseline")))
        if metric == "exec_time_norm" and baselines:
            title += f" (baseline: {', '.join(baselines)})"
        for part in parts:
            if (experiment, part) in AVERAGED:
                title += "\n" + AVERAGED[(experiment, part)]
        if "mean" in workloads:
            kinds = {r["source"].partition(":")[2] for r in mine if r["workload"] == "mean"}
            kind = {"arith": "arithmetic", "geo": "geometric"}.get(next(iter(kinds), ""), "the")
            title += "\n" + mean_note(kind, [w for w in workloads if w != "mean"], "workloads")
        figures.append((experiment, title, panels))
    return figures
