"""``bulksim reproduce``: a paper's table looked up in ``bulksim.reproduce.REGISTRY`` and run by
the one runner (``bulksim/reproduce/runner.py``), or a bundled experiment file run as a sweep."""

from __future__ import annotations

import os
from pathlib import Path

import click

from bulksim.cli.common import (
    PathType,
    UserError,
    _check_output_path,
    _guard,
    _guard_exp,
    _with,
    main,
    sweep_options,
)
from bulksim.cli.experiments import _run_experiment


@main.command()
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the bundled experiments.")
@click.option(
    "--json",
    "json_out",
    type=PathType(dir_okay=False),
    help="Table reproductions: write {reproduction, engine, cases, rows, summary, missing, paper} here.",
)
@click.option(
    "--plot",
    "plot_dir",
    type=PathType(file_okay=False),
    help="Table reproductions: draw each paper figure or table the reproduction covers into this "
    "directory (one PNG each, bulksim's bars beside the paper's values) and list the files.",
)
@click.option(
    "--quick",
    is_flag=True,
    help="forkbench: 9 runs (S = 64 MB, N = 16, 1k, 16k); rowclone-multicore: one mix per size; "
    "rowclone-apps: the committed small forkbench capture and the forkset trace's first part; "
    "rank-assignment, refresh-policies, address-mapping, pcm-writes: 2 workloads, 200 k DRAM accesses; "
    "page-allocation: 50 M instructions per program; copy-engines: 5,000 packets per network run, "
    "DDR3 bulkcopy of 4 and 64 KB only, forkbench N = 1k; cmmp: 403.gcc, 458.sjeng, fp_stream and "
    "pointer_chase (16 MB a copy) on cmmp_scaled, 10 M + 10 M instructions per core.",
)
@click.option(
    "--mean",
    "mean_kind",
    type=click.Choice(["arith", "geo"]),
    default="arith",
    show_default=True,
    help="Rank Assignment reproductions: the mean over workloads (the paper does not say).",
)
@click.option(
    "--workload",
    "workloads",
    multiple=True,
    metavar="NAME",
    help="cmmp: run only this workload (a shared trace such as 403.gcc, or a stand-in such as "
    "zipf_drift); repeat for more. The table and its means then cover only these.",
)
@click.option(
    "--sensitivity",
    is_flag=True,
    help="cmmp: instead of the reproduction, the sensitivity table (docs/hybrid.md): CPM's hand-off "
    "0/2/5/10 us against CM's copies at low/equal priority, 8/64 in flight, on pointer_chase, fp_stream, "
    "comm1 and 403.gcc at a reduced length (--quick: shorter still).",
)
@_with(sweep_options)
def reproduce(
    name,
    list_,
    json_out,
    plot_dir,
    quick,
    mean_kind,
    workloads,
    sensitivity,
    results,
    out,
    scheduler,
    workers,
    force,
) -> None:
    """Reproduce a paper's table (the `table` lines of --list) or run a bundled experiment.
    Runs are kept in results/NAME.db (--results) as they finish; a second run takes them from
    there and runs only the rest (--force runs all again). An experiment's report goes to
    results/NAME/."""
    from bulksim import experiment
    from bulksim import reproduce as reproduce_package

    if workloads and name != "cmmp":
        raise UserError(f"--workload applies to cmmp only, not to '{name or '--list'}'")
    if sensitivity and name != "cmmp":
        raise UserError(f"--sensitivity applies to cmmp only, not to '{name or '--list'}'")

    if list_ or not name:
        for table_name in reproduce_package.REGISTRY:
            what = reproduce_package.get(table_name).title
            click.echo(f"{table_name:24} {'table':>11}  {what}")
        for exp_name, path in experiment.bundled().items():
            exp = _guard_exp(experiment.load, path)
            first = exp.description.strip().splitlines()[0] if exp.description.strip() else ""
            click.echo(f"{exp_name:24} {len(exp.points()):4} points  {first}")
        return
    if name in reproduce_package.REGISTRY:
        from bulksim.reproduce import runner

        if json_out is not None:
            _check_output_path("--json", json_out)  # before the runs, not after
        if plot_dir is not None:
            _make_plot_dir(plot_dir)  # before the runs, not after

        results = Path(results) if results else Path("results") / f"{name}.db"
        options = reproduce_package.Options(quick, mean_kind, tuple(workloads), sensitivity)
        outcome = _guard_exp(
            runner.reproduce,
            reproduce_package.get(name),
            options,
            results,
            scheduler=scheduler,
            workers=workers,
            force=force,
            figures=plot_dir,
        )
        click.echo(outcome.text)
        if plot_dir is not None:
            click.echo(f"figures ({len(outcome.figures)}) in {plot_dir}:")
            for path in outcome.figures:
                click.echo(f"  {path}")
        if outcome.cases:
            click.echo(
                f"{name}: {outcome.ran} run, {outcome.reused} reused from {results} "
                f"(engine {outcome.engine}; --force runs them again)",
                err=True,
            )
        if json_out:
            _guard(runner.write_json, outcome, json_out)
        return
    for option, given in (("--json", json_out), ("--plot", plot_dir)):
        if given:
            tables = ", ".join(reproduce_package.REGISTRY)
            raise UserError(f"{option} applies to the table reproductions ({tables}), not to '{name}'")
    path = _guard_exp(experiment.find, name)
    results = results or Path("results") / f"{path.stem}.db"
    _run_experiment(path, results, out or Path("results") / path.stem, scheduler, workers, force)


def _make_plot_dir(path: str) -> None:
    """Creates ``--plot``'s directory, or one UserError naming it (a reproduction may run for
    hours: a directory that cannot be made must fail before the runs, not after)."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--plot {path}: cannot create the directory: {e.strerror or e}") from e
    if not os.access(path, os.W_OK):
        raise UserError(f"--plot {path}: cannot be written: Permission denied")
