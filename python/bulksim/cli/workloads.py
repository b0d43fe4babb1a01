"""``bulksim workload ...``, ``bulksim synth`` and ``bulksim capture``: the commands that write
workloads (forkbench, the network and bulkcopy stand-ins, CMMP's stand-ins, the Rank
Assignment stand-ins, and captures of real programs)."""

from __future__ import annotations

import click

from bulksim import _core, api
from bulksim.cli.common import (
    U64,
    PathType,
    UserError,
    _guard,
    main,
)
from bulksim.workloads import copy_workloads


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
    from bulksim.workloads import capture as capture_mod

    try:
        result = capture_mod.capture(list(command), out, max_instructions, keep_raw)
    except capture_mod.CaptureError as e:
        raise UserError(str(e)) from e
    click.echo(result.summary(), nl=False)
