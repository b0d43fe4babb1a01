"""Figures and reports of an experiment's results: grouped bar charts (PNG and SVG, labelled
axes with units, legend, the paper's value as a dashed line where one is given) and a
`report.md` with the experiment's tables, figures and failures."""

from __future__ import annotations

from pathlib import Path

from bulksim import api, provenance
from bulksim.experiment.spec import Experiment


def _units() -> dict[str, str]:
    return {d["name"]: d["unit"] for d in api.stat_docs()}


def figures(experiment: Experiment, df, outdir: Path) -> list[Path]:
    """Draws every [[figures]] entry; returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    units = _units()
    paths = []
    for i, spec in enumerate(experiment.figures):
        metric, x = spec["metric"], spec["x"]
        hue = spec.get("hue")
        facet = spec.get("facet", "workload")
        facets = sorted(df[facet].unique()) if len(df) else []
        fig, axes = plt.subplots(1, max(len(facets), 1), figsize=(5 * max(len(facets), 1), 4), squeeze=False)
        for ax, value in zip(axes[0], facets, strict=False):
            sub = df[df[facet] == value]
            table = (
                sub.pivot_table(index=x, columns=hue, values=metric, aggfunc="mean")
                if hue
                else (sub.groupby(x)[metric].mean().to_frame(metric))
            )
            table.plot.bar(ax=ax, rot=20)
            ax.set_title(f"{facet} = {value}")
            ax.set_xlabel(x)
            ax.set_ylabel(f"{metric} [{units.get(metric, '')}]")
            ref = spec.get("reference")
            if ref:
                ax.axhline(ref["value"], linestyle="--", color="black", label=ref.get("label", "paper"))
            ax.legend(title=hue, fontsize="small")
            ax.grid(axis="y", alpha=0.3)
        fig.suptitle(spec.get("title", f"{experiment.name}: {metric}"))
        fig.tight_layout()
        stem = outdir / f"{experiment.name}-{i + 1}-{metric.replace('.', '_')}"
        for ext in ("png", "svg"):
            fig.savefig(stem.with_suffix(f".{ext}"), dpi=120)
        plt.close(fig)
        paths.append(stem.with_suffix(".png"))
    return paths


def _markdown_table(df, columns: list[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    for _, row in df[columns].iterrows():
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(experiment: Experiment, df, failed, outdir: Path, figure_paths: list[Path], others=None) -> Path:
    """Writes `report.md` in `outdir`: description, tables, figures, failures. `others` counts
    the rows of other engines left out (engine -> rows)."""
    outdir.mkdir(parents=True, exist_ok=True)
    units = _units()
    params = sorted({k for p in experiment.grid for k in p})
    parts = [
        f"# {experiment.name}\n",
        experiment.description.strip() + "\n" if experiment.description else "",
    ]
    parts.append(f"{len(df)} finished runs, {len(failed)} failed. Source: `{experiment.path}`.\n")
    parts.append(f"Engine: `{provenance.engine_id()}`.\n")
    if others:
        left_out = ", ".join(f"{n} by `{engine}`" for engine, n in others.items())
        parts.append(f"Left out: rows made by other engines ({left_out}), kept in the results file.\n")
    for spec in experiment.tables or [{"metrics": ["mem_cycles", "bandwidth_gbps", "read_latency.mean_ns"]}]:
        metrics = [m for m in spec["metrics"] if m in df.columns]
        if len(df) and metrics:
            parts.append("## " + spec.get("title", "Results") + "\n")
            parts.append(", ".join(f"`{m}` in {units.get(m, '?')}" for m in metrics) + "\n")
            ordered = df.sort_values(params + ["workload"]) if params else df
            parts.append(_markdown_table(ordered, params + ["workload"] + metrics) + "\n")
    for path in figure_paths:
        parts.append(f"![{path.stem}]({path.name})\n")
    if len(failed):
        parts.append("## Failures\n")
        for _, row in failed.iterrows():
            first = str(row.get("error", "")).splitlines()[0] if row.get("error") else "?"
            parts.append(f"- `{row['workload']}` {row['key']}: {first}")
    path = outdir / "report.md"
    path.write_text("\n".join(parts) + "\n")
    return path


def write_all(experiment: Experiment, results: Path, outdir: Path) -> Path:
    """Figures and report from a results file, from the rows this engine made (rows of other
    engines stay in the file; the report counts them); returns the report path."""
    from bulksim.experiment.results import load

    everything = load(results, include_failed=True)
    others = {}
    if len(everything):
        everything = everything[everything["experiment"] == experiment.name]
        other = everything["version"] != provenance.engine_id()
        others = everything[other]["version"].value_counts().sort_index().to_dict()
        everything = everything[~other]
    ok = everything[everything["status"] == "ok"] if len(everything) else everything
    failed = everything[everything["status"] == "error"] if len(everything) else everything
    paths = figures(experiment, ok, outdir) if len(ok) else []
    return report(experiment, ok, failed, outdir, paths, others)
