"""The ``bulksim`` command line: run traces, show presets and configs, generate traces, run the
demo and regenerate the reference docs. Bad input ends with one line naming the problem and a
non-zero exit status."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import click

import bulksim
from bulksim import _core, api, copy_workloads, provenance

TRACE_FORMATS = list(api.TRACE_FORMATS)
PATTERNS = list(api.TRACE_PATTERNS)
U64 = click.IntRange(0, api.U64_MAX)
#: More local workers than this is surely a typo (each is a process with its own engine).
MAX_WORKERS = 1024


class PathType(click.Path):
    """A path argument or option: ``click.Path`` that also refuses an empty string, which the
    OS would answer with ': No such file or directory', naming neither the path nor the option."""

    def convert(self, value, param, ctx):
        if isinstance(value, str | bytes) and not value:
            self.fail("an empty path; expected a file or directory name", param, ctx)
        return super().convert(value, param, ctx)


class UserError(click.ClickException):
    """A bad config, trace or argument: printed as ``error: message``, exit status 1."""

    def format_message(self) -> str:
        return self.message

    def show(self, file=None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def _guard(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except (bulksim.ConfigError, bulksim.TraceError, OSError) as e:
        raise UserError(_message(e)) from e


def _message(error: BaseException) -> str:
    """One line for an error; an OSError names its file first."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return " ".join(str(error).split())


def _input_errors() -> tuple[type[BaseException], ...]:
    """Exception classes that mean bad input (printed as one line), as opposed to bugs (which
    keep their traceback)."""
    from bulksim.experiment import ExperimentError
    from bulksim.reproduce.shape import ReproductionError
    from bulksim.results import ResultsError
    from bulksim.sweep import SchedulerError

    classes: list[type[BaseException]] = [
        ReproductionError,
        bulksim.ConfigError,
        bulksim.TraceError,
        api.ArgumentError,
        ExperimentError,
        ResultsError,
        SchedulerError,
    ]
    engine_base = getattr(_core, "BulksimError", None)
    if isinstance(engine_base, type) and issubclass(engine_base, BaseException):
        classes.append(engine_base)
    return tuple(classes)


class OneLineUsageError(click.UsageError):
    """A bad command line, printed as one ``error:`` line naming the command (exit status 2)."""

    def __init__(self, error: click.UsageError):
        super().__init__(error.format_message(), error.ctx)

    def show(self, file=None) -> None:
        where = f"{self.ctx.command_path}: " if self.ctx is not None else ""
        hint = f" (see {self.ctx.command_path} --help)" if self.ctx is not None else ""
        message = " ".join(self.format_message().split())  # click may wrap long messages
        click.echo(f"error: {where}{message}{hint}", err=True)


class Cli(click.Group):
    """The top-level group: every bad-input error of any command becomes one line."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except OneLineUsageError:
            raise
        except click.UsageError as e:
            raise OneLineUsageError(e) from e

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OneLineUsageError:
            raise
        except click.UsageError as e:
            raise OneLineUsageError(e) from e
        except (*_input_errors(), OSError) as e:  # OSError: a path given that cannot be used
            raise UserError(_message(e)) from e


def _progress():
    """A progress callback printing requests done and rate to stderr, when it is a terminal."""
    if not sys.stderr.isatty():
        return None
    start = time.monotonic()

    def report(done: int) -> None:
        rate = done / max(time.monotonic() - start, 1e-9)
        click.echo(f"\r  {done:,} requests, {rate:,.0f}/s", err=True, nl=False)

    return report


def _workload_progress():
    """A progress callback printing instructions retired, simulated time and rate to stderr,
    when it is a terminal (the engine calls it about twice a second)."""
    if not sys.stderr.isatty():
        return None
    start = time.monotonic()

    def report(instructions: int, simulated_ns: float) -> None:
        rate = instructions / max(time.monotonic() - start, 1e-9)
        click.echo(
            f"\r  {instructions:,} instructions, {simulated_ns / 1e6:,.3f} ms simulated, {rate:,.0f}/s",
            err=True,
            nl=False,
        )

    return report


config_option = click.option("--config", "config", type=PathType(dir_okay=False), help="TOML config file.")
preset_option = click.option("--preset", help="Memory part preset (see `bulksim spec list`).")
set_option = click.option(
    "--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a config key (repeatable)."
)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: the package version and the engine's build identity (what results are
    keyed on, docs/experiments.md)."""
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"bulksim {bulksim.__version__} (engine {provenance.engine_id()})")
    ctx.exit()


@click.group(cls=Cli)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and the engine's identity, then exit.",
)
def main() -> None:
    """bulksim: cycle-accurate memory-system simulation."""


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
            from bulksim.fpm_note import run_note

            note = _guard(run_note, config, preset, overrides, stats)
            if note:
                click.echo(note)


def _check_output_path(option: str, path: str) -> None:
    """UserError naming ``option`` unless ``path`` can be written (a file that can be created
    or appended to; its content is left as it is, and a file created to find out is removed)."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{option} {path}: is a directory; expected a file name")
    if target.exists() and not target.is_file():
        # A device or a pipe (/dev/null, a FIFO read by another program): opening it to try
        # could block or consume it.
        if not os.access(target, os.W_OK):
            raise UserError(f"{option} {path}: cannot be written: Permission denied")
        return
    existed = target.exists()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    except OSError as e:
        raise UserError(f"{option} {path}: cannot be written: {e.strerror}") from e
    os.close(fd)
    if not existed:
        target.unlink(missing_ok=True)


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
    from bulksim import convert as conversion

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


@main.group()
def workload() -> None:
    """Generate full-system workloads."""


@workload.command("forkbench")
@click.argument("out", type=PathType(file_okay=False))
@click.option(
    "--size-mb",
    type=click.IntRange(1, api.U64_MAX >> 20),
    default=64,
    show_default=True,
    help="Array size S (MiB).",
)
@click.option("--pages", type=U64, default=1024, show_default=True, help="Pages N the child updates.")
@click.option("--seed", type=U64, default=1, show_default=True)
@click.option(
    "--text", is_flag=True, help="Write text traces (.trace) instead of compressed binary (.btrace)."
)
def workload_forkbench(out, size_mb, pages, seed, text) -> None:
    """Write forkbench (RowClone section 7.2): the parent initializes S MiB, forks, waits; the
    child updates one line in each of N random pages."""
    _guard(
        api.generate_forkbench,
        out,
        array_bytes=size_mb << 20,
        pages_updated=pages,
        seed=seed,
        binary=not text,
    )
    click.echo(out)


NET = copy_workloads.NETWORK_DEFAULTS
SLOT = copy_workloads.SLOT_BYTES


@workload.command("network")
@click.argument("out", type=PathType(file_okay=False))
@click.option(
    "--payload",
    type=click.IntRange(1, SLOT),
    required=True,
    help=f"Payload bytes B per packet, copied to the user buffer (header + payload fit a {SLOT}-byte slot).",
)
@click.option(
    "--packets", type=click.IntRange(1, api.U64_MAX), required=True, help="Packets N received (count)."
)
@click.option(
    "--header-bytes",
    type=click.IntRange(0, SLOT - 1),
    default=NET["header_bytes"],
    show_default=True,
    help="Header bytes at the start of each ring slot, read by the protocol work "
    "(default: 20 B IP + 20 B TCP + 12 B timestamp option).",
)
@click.option(
    "--ring",
    type=click.IntRange(1, copy_workloads.MAX_SLOTS),
    default=NET["ring"],
    show_default=True,
    help=f"Receive-ring slots ({SLOT} bytes each); packet i uses slot i % ring.",
)
@click.option(
    "--buffers",
    type=click.IntRange(1, copy_workloads.MAX_SLOTS),
    default=NET["buffers"],
    show_default=True,
    help=f"User buffers ({SLOT} bytes each); packet i's payload goes to buffer i % buffers.",
)
@click.option(
    "--dst-offset",
    type=click.IntRange(0, SLOT - 1),
    default=NET["dst_offset"],
    show_default=True,
    help="Bytes from the start of a user buffer to where the payload is copied (0: line-aligned).",
)
@click.option(
    "--protocol-instructions",
    type=click.IntRange(0, copy_workloads.MAX_COMPUTE),
    default=NET["protocol_instructions"],
    show_default=True,
    help="Non-memory instructions of protocol work per packet (instructions).",
)
@click.option(
    "--seed",
    type=U64,
    default=1,
    show_default=True,
    help="Seed (recorded; this stand-in draws nothing at random).",
)
@click.option(
    "--cold-ring",
    is_flag=True,
    help="Do not load the ring before the first packet, so payloads start in memory "
    "(with a --ring larger than the last cache, every payload comes from memory).",
)
def workload_network(
    out, payload, packets, header_bytes, ring, buffers, dst_offset, protocol_instructions, seed, cold_ring
):
    """Write the TCP/IP receive stand-in for the copy-engine study (docs/copy_engines_workloads.md)
    to OUT/thread-0.trace: one load of the whole receive ring (unless --cold-ring), then per
    packet, read the header in its ring slot, update the connection's control block, run the
    protocol work, copy the payload (which follows the header) to a user buffer."""
    path = copy_workloads.write_network(
        out,
        payload=payload,
        packets=packets,
        header_bytes=header_bytes,
        ring=ring,
        buffers=buffers,
        dst_offset=dst_offset,
        protocol_instructions=protocol_instructions,
        seed=seed,
        warm_ring=not cold_ring,
    )
    click.echo(path)


@workload.command("bulkcopy")
@click.argument("out", type=PathType(file_okay=False))
@click.option(
    "--size",
    type=click.IntRange(1, copy_workloads.MAX_COPY_BYTES),
    required=True,
    help="Bytes B per copy (at most 1 GiB).",
)
@click.option("--copies", type=click.IntRange(1, api.U64_MAX), required=True, help="Copies N (count).")
@click.option(
    "--hot",
    type=click.FloatRange(0, 1),
    required=True,
    help="Fraction F (0 to 1) of copies whose source is read in full just before (cached); "
    "the others copy an uncached source.",
)
@click.option("--seed", type=U64, default=1, show_default=True, help="Seed choosing which copies are hot.")
def workload_bulkcopy(out, size, copies, hot, seed):
    """Write N copies of B bytes to OUT/thread-0.trace (docs/copy_engines_workloads.md): page-aligned
    sources and destinations from rotating sets larger than 8 MiB; a fraction F of the copies
    read a hot source first."""
    path = copy_workloads.write_bulkcopy(out, size=size, copies=copies, hot=hot, seed=seed)
    click.echo(path)


STANDIN = _core.standin_info()


@workload.command("cmmp")
@click.argument("out", type=PathType(dir_okay=False))
@click.option(
    "--kind",
    type=click.Choice(list(STANDIN["kinds"])),
    required=True,
    help="The stand-in: "
    + "; ".join(f"{name} for {programs}" for name, programs in STANDIN["kinds"].items())
    + ".",
)
@click.option(
    "--size-mb",
    type=click.IntRange(1, STANDIN["max_size_mb"]),
    default=STANDIN["size_mb"],
    show_default=True,
    help="Footprint of one copy (MiB).",
)
@click.option(
    "--instructions",
    type=click.IntRange(1, STANDIN["max_instructions"]),
    default=STANDIN["instructions"],
    show_default=True,
    help="Instructions of the stream, the opening map included (count); loop with "
    "system.loop_workloads for longer runs.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    default=STANDIN["seed"],
    show_default=True,
    help="Seed of the random draws (stream_rw draws nothing at random).",
)
@click.option(
    "--instructions-per-ms",
    type=click.IntRange(1, 2**40),
    default=STANDIN["instructions_per_ms"],
    show_default=True,
    help="Instructions per millisecond of program time, turning the kinds' periods (fp_stream's "
    "10 ms, zipf_drift's 5 ms) into instruction counts (instructions/ms; default: 4 GHz at IPC 1).",
)
@click.option(
    "--dump",
    type=PathType(dir_okay=False),
    help="Also write the stream's first --dump-instructions instructions here as a bulksim "
    "trace (text; .btrace for binary), for inspection.",
)
@click.option(
    "--dump-instructions",
    type=click.IntRange(1, STANDIN["max_instructions"]),
    default=10_000,
    show_default=True,
    help="Instructions of the --dump prefix (count).",
)
def workload_cmmp(out, kind, size_mb, instructions, seed, instructions_per_ms, dump, dump_instructions):
    """Write the spec of a CMMP stand-in (docs/hybrid_workloads.md) to OUT, a small TOML file: a
    run whose --workload is OUT generates the events as it reads them (one access per 4
    instructions, the footprint mapped resident first); run copies with --copies."""
    path = _guard(
        api.write_standin,
        out,
        kind=kind,
        size_mb=size_mb,
        instructions=instructions,
        seed=seed,
        instructions_per_ms=instructions_per_ms,
    )
    click.echo(
        f"{kind} (stands for {STANDIN['kinds'][kind]}): {size_mb} MiB, {instructions} instructions -> {path}"
    )
    if dump is not None:
        events = _guard(api.dump_standin, path, dump, instructions=dump_instructions)
        click.echo(f"first {min(dump_instructions, instructions)} instructions ({events} events) -> {dump}")


@main.command()
@click.argument("name")
@click.option("--out", type=PathType(file_okay=False), required=True, help="New or empty directory to write.")
@click.option(
    "--threads",
    type=click.IntRange(1, 2**32 - 1),
    help="Threads (sharing stand-ins; default 8). Single-threaded ones take 1: run copies with --copies.",
)
@click.option("--accesses", type=U64, default=250_000, show_default=True, help="DRAM accesses per thread.")
@click.option(
    "--working-set", default="small", show_default=True, help="small (4 MiB per thread) or large (256 MiB)."
)
@click.option("--seed", type=U64, default=1, show_default=True)
def synth(name, out, threads, accesses, working_set, seed) -> None:
    """Write the synthetic stand-in NAME of a Rank Assignment program as a post-LLC workload
    directory (docs/rank_assignment.md, Workloads): synth-gems, synth-lbm, synth-mcf (run as
    copies), synth-share15, synth-share60 (one 8-thread process; run with system.cores = 8)."""
    s = _guard(_core.generate_synthetic, name, out, threads or 0, accesses, working_set, seed)
    accesses_all = s["reads"] + s["writes"]
    click.echo(
        f"{s['name']} ({s['stands_for']}): {s['threads']} thread(s), {accesses_all} DRAM accesses, "
        f"{1000 * accesses_all / s['instructions']:.1f} per 1000 instructions, "
        f"{100 * s['writes'] / accesses_all:.1f}% write-backs, "
        f"{100 * s['shared_accesses'] / accesses_all:.1f}% to other threads' pages, "
        f"footprint {s['footprint_bytes'] / 2**20:.1f} MiB -> {out}"
    )


@main.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--out", type=click.Path(file_okay=False), help="Workload directory to write [capture-<program>]."
)
@click.option(
    "--max-instructions",
    type=click.IntRange(1, api.U64_MAX),
    help="Stop every process once all threads together ran this many instructions.",
)
@click.option("--keep-raw", is_flag=True, help="Keep the tool's raw streams in OUT/raw.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def capture(out, max_instructions, keep_raw, command) -> None:
    """Run COMMAND under the bulkcap Valgrind tool and write it as a workload (docs/capture.md):
    bulksim capture --out DIR -- ./prog args."""
    from bulksim import capture as capture_mod

    try:
        result = capture_mod.capture(list(command), out, max_instructions, keep_raw)
    except capture_mod.CaptureError as e:
        raise UserError(str(e)) from e
    click.echo(result.summary(), nl=False)


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


@main.group()
def spec() -> None:
    """Memory part presets."""


@spec.command("list")
def spec_list() -> None:
    """List the presets."""
    for name in api.presets():
        s = api.spec(name)
        o = s["organisation"]
        click.echo(
            f"{name:20} {s['standard']}-{s['data_rate_mts']}, "
            f"{o['bankgroups'] * o['banks_per_group']} banks, "
            f"{o['rows']} rows x {o['columns']} columns  ({s['source']})"
        )


#: How a preset's `power.source` starts when its currents are borrowed from another part
#: (the engine's `spec::STAND_IN_SOURCE`).
STAND_IN_CURRENTS = "stand-in"


@spec.command("show")
@click.argument("preset")
@set_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (organisation, timing in cycles).")
def spec_show(preset, overrides, as_json) -> None:
    """Show a preset's organisation and timing (after any --set overrides)."""
    s = _guard(api.spec, preset, None, overrides)
    if as_json:
        click.echo(json.dumps(s, indent=2))
        return
    click.echo(f"{s['name']}: {s['standard']}-{s['data_rate_mts']} (tCK {s['tck_ns']:.4g} ns)")
    click.echo(f"source: {s['source']}")
    currents = s["power"]["source"]
    click.echo(f"energy currents: {currents}")
    if currents.startswith(STAND_IN_CURRENTS):
        click.echo(
            "note: these currents are a stand-in, not this part's own: its energy figures are "
            "estimates (docs/energy.md)"
        )
    for key, value in s["organisation"].items():
        click.echo(f"  {key:20} {value}")
    descriptions = dict(_core.timing_params())
    for key, value in s["timing"].items():
        click.echo(f"  {key:8} {value:6} cycles  {descriptions.get(key, '')}")
    if s.get("precharge_per_dirty_block"):
        click.echo(
            "  precharge: nRP per dirty 64-B block written since the ACT (a row only read closes at once)"
        )
    energy = s.get("bit_energy")
    if energy:
        click.echo(
            f"  energy (pJ/bit): array read {energy['array_read_pj']} write {energy['array_write_pj']}, "
            f"buffer read {energy['buffer_read_pj']} write {energy['buffer_write_pj']} ({energy['source']})"
        )


@main.group()
def config() -> None:
    """Inspect and check configurations."""


@config.command("show")
@preset_option
@config_option
@set_option
def config_show(preset, config, overrides) -> None:
    """Print the fully resolved config, each field with its unit and description."""
    text = _guard(api.resolve_config, config, preset=preset, overrides=overrides)
    docs = {f["key"]: f for f in api.config_fields()}
    section = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]")
            click.echo(line)
            continue
        key = stripped.split("=", 1)[0].strip()
        doc = docs.get(f"{section}.{key}")
        if doc and stripped:
            click.echo(f"{line:45} # [{doc['unit']}] {doc['description']}")
        else:
            click.echo(line)


@config.command("check")
@click.argument("file", type=PathType(dir_okay=False))
def config_check(file) -> None:
    """Validate a config file (and the files it includes); name every problem."""
    problems = api.check_config(file)
    if problems:
        for problem in problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(1)
    click.echo(f"{file}: ok")


@main.group()
def trace() -> None:
    """Request traces."""


@trace.command("gen")
@click.argument("out", type=PathType(dir_okay=False))
@click.option(
    "--pattern", type=click.Choice(PATTERNS), required=True, help="Access pattern (docs/traces.md)."
)
@click.option("--requests", type=click.IntRange(1, api.U64_MAX), required=True, help="Number of requests.")
@click.option("--interval", type=U64, default=0, show_default=True, help="Cycles between requests.")
@click.option(
    "--write-fraction",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Probability a request is a write.",
)
@click.option(
    "--footprint",
    type=click.IntRange(api.MIN_FOOTPRINT, api.U64_MAX),
    default=1 << 30,
    show_default=True,
    help="Bytes.",
)
@click.option(
    "--seed", type=U64, default=0, show_default=True, help="Generator seed (same seed, same trace)."
)
def trace_gen(out, pattern, requests, interval, write_fraction, footprint, seed) -> None:
    """Write a synthetic trace in the native format."""
    _guard(
        api.generate_trace,
        out,
        pattern,
        requests,
        interval=interval,
        write_fraction=write_fraction,
        footprint=footprint,
        seed=seed,
    )
    click.echo(f"wrote {requests:,} requests to {out}")


def _run_experiment(exp_path: Path, results, out, scheduler, workers, force) -> None:
    from bulksim import experiment, plots, sweep

    exp = _guard_exp(experiment.load, exp_path)
    results = Path(results) if results else exp_path.parent / "results.db"
    out = Path(out) if out else results.parent / exp.name
    from bulksim.results import ResultsStore

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


def _guard_exp(fn, *args, **kwargs):
    from bulksim.experiment import ExperimentError
    from bulksim.results import ResultsError

    try:
        return _guard(fn, *args, **kwargs)
    except (ExperimentError, ResultsError) as e:
        raise UserError(str(e)) from e


sweep_options = [
    click.option("--results", type=PathType(dir_okay=False), help="SQLite results file."),
    click.option("--out", type=PathType(file_okay=False), help="Directory for report.md and figures."),
    click.option("--scheduler", help="Address of an existing Dask scheduler, e.g. tcp://host:8786."),
    click.option(
        "--workers", type=click.IntRange(1, MAX_WORKERS), help="Local worker processes (default: cores)."
    ),
    click.option(
        "--force",
        is_flag=True,
        help="Rerun points that are already in the results (cmmp: the runs kept in results/cmmp-runs/).",
    ),
]


def _with(options):
    def decorate(fn):
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


@main.command()
@click.argument("file", type=PathType(dir_okay=False, exists=True))
@_with(sweep_options)
def sweep(file, results, out, scheduler, workers, force) -> None:
    """Run an experiment file's points; resume where a previous run stopped."""
    _run_experiment(Path(file), results, out, scheduler, workers, force)


@main.command()
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the bundled experiments.")
@click.option(
    "--json", "json_out", type=PathType(dir_okay=False), help="Table reproductions: write the rows here."
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
    name, list_, json_out, quick, mean_kind, workloads, sensitivity, results, out, scheduler, workers, force
) -> None:
    """Run a bundled experiment (results in results/NAME.db, report in results/NAME/) or
    reproduce a paper's table (rowclone-4kb)."""
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

        results_given = results is not None
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
            figures=out,
            results_given=results_given,
        )
        click.echo(outcome.text)
        if outcome.cases:
            click.echo(
                f"{name}: {outcome.ran} run, {outcome.reused} reused from {results} "
                f"(engine {outcome.engine}; --force runs them again)",
                err=True,
            )
        if json_out:
            _guard(runner.write_json, outcome, json_out)
        return
    if json_out:
        tables = ", ".join(reproduce_package.REGISTRY)
        raise UserError(f"--json applies to the table reproductions ({tables}), not to '{name}'")
    path = _guard_exp(experiment.find, name)
    results = results or Path("results") / f"{path.stem}.db"
    _run_experiment(path, results, out or Path("results") / path.stem, scheduler, workers, force)


@main.command("results")
@click.argument("db", type=PathType(dir_okay=False))
@click.option("--where", "filters", multiple=True, metavar="COLUMN=VALUE", help="Keep matching rows.")
@click.option("--failed", is_flag=True, help="Include failed runs (with their errors).")
@click.option("--columns", help="Comma-separated columns to print.")
@click.option("--csv", "csv_out", type=PathType(dir_okay=False), help="Export the rows as CSV.")
@click.option("--parquet", "parquet_out", type=PathType(dir_okay=False), help="Export the rows as Parquet.")
def results_cmd(db, filters, failed, columns, csv_out, parquet_out) -> None:
    """List, filter and export a results file."""
    from bulksim.results import load

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
    from bulksim import experiment, plots

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


if __name__ == "__main__":
    main()
