"""``bulksim run``, ``bulksim convert`` and ``bulksim demo``: a trace or a full-system workload
run once and its stats printed, a workload converted to another format, and the demo's two
traces replayed on DDR4-2400."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bulksim import api
from bulksim.cli.common import (
    TRACE_FORMATS,
    PathType,
    _check_output_path,
    _guard,
    _progress,
    _workload_progress,
    config_option,
    main,
    preset_option,
    set_option,
)


@main.command()
@preset_option
@config_option
@set_option
@click.option("--trace", type=PathType(dir_okay=False), help="Request trace to replay.")
@click.option(
    "--trace-format",
    type=click.Choice(TRACE_FORMATS),
    default="native",
    show_default=True,
    help="native: cycle,R|W,addr; dramsim3: 0xADDR READ|WRITE cycle; ramulator: LD|ST 0xADDR.",
)
@click.option(
    "--workload",
    type=PathType(exists=True),
    help="Full-system workload: a trace file or a directory of thread-N.trace/.btrace files "
    "(bulksim format), or a trace in another --workload-format.",
)
@click.option(
    "--workload-format",
    type=click.Choice(api.workload_formats()),
    help="Format of --workload (docs/workloads.md); detected from the content when omitted.",
)
@click.option(
    "--copies",
    type=click.IntRange(1, api.MAX_COPIES),
    default=1,
    show_default=True,
    help="Run N copies of --workload on N cores, each in its own address space.",
)
@click.option("--json", "json_out", type=PathType(dir_okay=False), help="Write the stats as JSON here.")
@click.option(
    "--command-log",
    type=PathType(dir_okay=False),
    help="Write every DRAM command (CSV) here (--trace and --workload runs).",
)
@click.option("--quiet", is_flag=True, help="Do not print the summary.")
def run(
    preset,
    config,
    overrides,
    trace,
    trace_format,
    workload,
    workload_format,
    copies,
    json_out,
    command_log,
    quiet,
) -> None:
    """Replay a memory request trace (--trace) or run a full-system workload (--workload), and
    print a summary of the stats."""
    if (trace is None) == (workload is None):
        raise click.UsageError("give exactly one of --trace (request trace) and --workload (full system)")
    if workload is None and (workload_format is not None or copies != 1):
        raise click.UsageError("--workload-format and --copies go with --workload")
    # Before simulating: a path found unwritable only at the end would lose the run.
    for option, path in (("--json", json_out), ("--command-log", command_log)):
        if path is not None:
            _check_output_path(option, path)
    if workload is not None:
        how = "given"
        if workload_format is None:
            workload_format = _guard(api.detect_workload_format, workload)
            how = "detected from the content"
        if not quiet:
            plural = "copy" if copies == 1 else "copies"
            click.echo(f"workload: {workload} (format {workload_format}, {how}; {copies} {plural})")
        stats = _guard(
            api.run_workload,
            config,
            workload=workload,
            preset=preset,
            overrides=overrides,
            command_log=command_log,
            progress=_workload_progress(),
            fmt=workload_format,
            copies=copies,
        )
    else:
        stats = _guard(
            api.run,
            config,
            trace=trace,
            trace_format=trace_format,
            preset=preset,
            overrides=overrides,
            command_log=command_log,
            progress=_progress(),
        )
    if sys.stderr.isatty():
        click.echo("\r", err=True, nl=False)
    if json_out:
        _guard(Path(json_out).write_text, stats.to_json() + "\n")
    if not quiet:
        click.echo(stats.summary(), nl=False)
        if workload is not None:
            from bulksim.analysis.fpm_note import run_note

            note = _guard(run_note, config, preset, overrides, stats)
            if note:
                click.echo(note)


@main.command("convert")
@click.argument("src", type=PathType(exists=True))
@click.argument("dst", type=PathType(dir_okay=False))
@click.option("--from", "from_", help="Format of SRC (a workload or request format); detected when omitted.")
@click.option(
    "--to",
    "to",
    required=True,
    help="Format of DST: bulksim, msc, ramulator-cpu, native, dramsim3, ramulator.",
)
@config_option
@set_option
@click.option(
    "--no-cache", is_flag=True, help="Do not filter an instruction-level input through the cache levels."
)
@click.option(
    "--max-instructions",
    type=click.IntRange(1, api.U64_MAX),
    help="Stop with an error once the output stands for more than this many instructions "
    "(default 10^11, as many as trace replay's default sim.max_cycles): an endless input ends.",
)
def convert_cmd(src, dst, from_, to, config, overrides, no_cache, max_instructions) -> None:
    """Convert SRC into DST in another format (docs/workloads.md). From an instruction-level
    format (bulksim, champsim) to a post-LLC or request format, accesses go through the
    config's [[cache.level]] (misses become reads, dirty evictions write-backs)."""
    from bulksim.workloads import convert as conversion

    for option, value, known in (
        ("--from", from_, conversion.input_formats()),
        ("--to", to, conversion.output_formats()),
    ):
        if value is not None and value not in known:
            raise click.UsageError(f"{option} {value}: expected one of {', '.join(known)}")
    done = _guard(
        conversion.convert,
        src,
        dst,
        to,
        from_=from_,
        cache=not no_cache,
        config=config,
        overrides=overrides,
        max_instructions=max_instructions,
    )
    click.echo(f"{src} ({done.input_format}) -> {dst} ({to}): {done.summary()}")


@main.command()
@click.option(
    "--requests",
    type=click.IntRange(1, api.U64_MAX),
    default=200_000,
    show_default=True,
    help="Requests per demo trace.",
)
@click.option(
    "--out",
    default="build/demo",
    show_default=True,
    type=PathType(file_okay=False),
    help="Directory for traces and JSON.",
)
def demo(requests: int, out: str) -> None:
    """Generate streaming and random traces and replay them on DDR4-2400."""
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    runs = [
        (
            "streaming reads",
            "stream",
            0.0,
            "note: RoBaRaCoCh keeps a stream in one DDR4 bank group, so reads go every tCCD_L "
            "(6 cycles), not every burst (4);\n      --set controller.address_mapping=RoCoBaRaCh "
            "interleaves bank groups and streams at over 90% of peak.",
        ),
        (
            "random reads and writes (30% writes)",
            "random",
            0.3,
            "note: nearly every random access opens a row; ACTs are limited to four per tFAW.",
        ),
    ]
    for title, pattern, writes, note in runs:
        trace = outdir / f"{pattern}.trace"
        api.generate_trace(trace, pattern, requests, write_fraction=writes, seed=1)
        stats = _guard(api.run, trace=trace, preset="DDR4_8Gb_x8_2400")
        (outdir / f"{pattern}.json").write_text(stats.to_json() + "\n")
        click.echo(f"== {title}: {requests:,} requests, DDR4-2400, 1 channel, 1 rank, FR-FCFS, open page")
        click.echo(stats.summary(), nl=False)
        click.echo(note + "\n")
    click.echo(f"traces and stats JSON are in {outdir}/")
