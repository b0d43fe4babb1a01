"""``bulksim sweep``, ``bulksim results``, ``bulksim plot`` and ``bulksim docs``: an experiment
file's points run into the results store and reported, the store listed and exported,
figures redrawn, and the generated reference docs written."""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter
from pathlib import Path

import click

from bulksim import provenance
from bulksim.cli.common import (
    PathType,
    UserError,
    _guard_exp,
    _with,
    main,
    sweep_options,
)


def _run_experiment(exp_path: Path, results, out, scheduler, workers, force) -> None:
    from bulksim import experiment
    from bulksim.experiment import plots, sweep

    exp = _guard_exp(experiment.load, exp_path)
    results = Path(results) if results else exp_path.parent / "results.db"
    out = Path(out) if out else results.parent / exp.name
    from bulksim.experiment.results import ResultsStore

    _guard_exp(ResultsStore, results).close()  # a bad results file fails before any work
    points = exp.points()
    where = f"Dask cluster at {scheduler}" if scheduler else f"{workers or os.cpu_count()} local workers"
    click.echo(f"{exp.name}: {len(points)} points on {where}; results in {results}", err=True)
    try:
        summary = _guard_exp(
            sweep.sweep,
            exp,
            results,
            scheduler=scheduler,
            workers=workers,
            force=force,
            progress=sys.stderr.isatty(),
        )
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", signal.SIGINT)
        click.echo(
            f"\ninterrupted ({signal.Signals(signum).name}): finished runs are kept in {results}; "
            "run the same command again to resume",
            err=True,
        )
        raise SystemExit(128 + signum) from None
    done = f"{summary.ok} run, {summary.skipped} already done, {summary.failed} failed"
    if summary.elsewhere:
        done += f", {summary.elsewhere} left to another sweep running on {results}"
    click.echo(f"{done} ({summary.seconds:.1f} s)")
    click.echo(
        provenance.reuse_line(
            summary.engine, summary.skipped, summary.other_engines, summary.rerun_other_engines
        )
    )
    report = _guard_exp(plots.write_all, exp, results, out)
    click.echo(f"report: {report}")
    if summary.failed:
        _report_failures(summary, results, report)


#: Failures listed one by one after a sweep; the rest are counted.
MAX_LISTED_FAILURES = 10


def _report_failures(summary, results: Path, report: Path) -> None:
    """Lists a sweep's failures; when every point it ran failed, exits with status 1."""
    where = f"the errors are in {report} and `bulksim results {results} --failed`"
    if summary.ok == 0:
        counts = Counter(error for _, error in summary.failures)
        click.echo(f"error: all {summary.failed} points failed; {where}:", err=True)
        for error, n in counts.most_common(MAX_LISTED_FAILURES):
            click.echo(f"  {n} x {error}", err=True)
        if len(counts) > MAX_LISTED_FAILURES:
            click.echo(f"  ... and {len(counts) - MAX_LISTED_FAILURES} other errors", err=True)
        raise SystemExit(1)
    click.echo(f"{summary.failed} of {summary.failed + summary.ok} points failed; {where}", err=True)
    for label, error in summary.failures[:MAX_LISTED_FAILURES]:
        click.echo(f"  failed: {label}: {error}", err=True)
    if summary.failed > MAX_LISTED_FAILURES:
        click.echo(f"  ... and {summary.failed - MAX_LISTED_FAILURES} more", err=True)


@main.command()
@click.argument("file", type=PathType(dir_okay=False, exists=True))
@_with(sweep_options)
def sweep(file, results, out, scheduler, workers, force) -> None:
    """Run an experiment file's points; resume where a previous run stopped."""
    _run_experiment(Path(file), results, out, scheduler, workers, force)


@main.command("results")
@click.argument("db", type=PathType(dir_okay=False))
@click.option("--where", "filters", multiple=True, metavar="COLUMN=VALUE", help="Keep matching rows.")
@click.option("--failed", is_flag=True, help="Include failed runs (with their errors).")
@click.option("--columns", help="Comma-separated columns to print.")
@click.option("--csv", "csv_out", type=PathType(dir_okay=False), help="Export the rows as CSV.")
@click.option("--parquet", "parquet_out", type=PathType(dir_okay=False), help="Export the rows as Parquet.")
def results_cmd(db, filters, failed, columns, csv_out, parquet_out) -> None:
    """List, filter and export a results file."""
    from bulksim.experiment.results import load

    df = _guard_exp(load, db, include_failed=failed)
    for f in filters:
        column, equals, value = f.partition("=")
        if not equals:
            raise UserError(f"--where {f}: expected COLUMN=VALUE")
        if column not in df.columns:
            raise UserError(f"--where {f}: no column '{column}'")
        df = df[df[column].astype(str) == value]
    if csv_out:
        df.to_csv(csv_out, index=False)
    if parquet_out:
        df.to_parquet(parquet_out, index=False)
    # `version` is the engine that made the row (docs/experiments.md).
    default = [
        "experiment",
        "workload",
        "status",
        "mem_cycles",
        "bandwidth_gbps",
        "read_latency.mean_ns",
        "version",
    ]
    wanted = columns.split(",") if columns else [c for c in default if c in df.columns]
    missing = [c for c in wanted if c not in df.columns]
    if missing:
        raise UserError(f"--columns: no column {', '.join(missing)}")
    params = [c for c in df.columns if c.startswith(("controller.", "dram.")) and df[c].nunique() > 1]
    click.echo(df[params + wanted].to_string(index=False) if len(df) else "no rows")
    click.echo(f"{len(df)} rows")


@main.command()
@click.argument("experiment_file")
@click.option(
    "--results", type=PathType(dir_okay=False), help="Results file (default: next to the experiment)."
)
@click.option("--out", type=PathType(file_okay=False), help="Directory for figures and report.md.")
def plot(experiment_file, results, out) -> None:
    """Draw an experiment's figures and report from its results."""
    from bulksim import experiment
    from bulksim.experiment import plots

    path = _guard_exp(experiment.find, experiment_file)
    exp = _guard_exp(experiment.load, path)
    results = Path(results) if results else path.parent / "results.db"
    report = _guard_exp(plots.write_all, exp, results, Path(out) if out else results.parent / exp.name)
    click.echo(f"report: {report}")


@main.command()
@click.option("--check", is_flag=True, help="Fail if the generated docs are out of date.")
def docs(check: bool) -> None:
    """Regenerate docs/config.md and docs/stats.md from the engine's field tables."""
    from bulksim import docgen

    stale = docgen.write_all(Path("docs"), check=check)
    if check and stale:
        raise UserError(f"out of date: {', '.join(stale)}; run `make docs`")
