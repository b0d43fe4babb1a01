"""Workload generators for the copy-engine study (issue #16, docs/copy_engines_workloads.md):
``network``, a stand-in for the paper's non-public TCP/IP receive benchmark (per packet,
protocol work on a header whose line also holds the payload's first bytes, then a ``memcpy``
of the payload to a user buffer), and ``bulkcopy``, page-sized and larger copies from cached
("hot") or uncached ("cold") sources. Each writes a one-thread bulksim text workload,
``OUT/thread-0.trace``, the directory layout ``bulksim.run_workload`` reads; every address the
trace uses is mapped resident first (``N``: present without a fault or zeroing), so the
measurement holds the copies and the work around them and nothing else."""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from bulksim.api import U64_MAX, ArgumentError, _check_int

TEXT_HEADER = "bulksim-workload 2"
#: The file a one-thread workload directory holds (``thread_files`` in program.rs).
THREAD_FILE = "thread-0.trace"
PAGE = 4096
#: The most non-memory instructions one ``C`` record may carry (program.rs, MAX_COMPUTE).
MAX_COMPUTE = 1 << 32

# --- network -------------------------------------------------------------------------------

#: Bytes of one receive-ring slot and of one user buffer: a FreeBSD mbuf cluster (MCLBYTES),
#: the buffer a NIC receives a standard Ethernet frame into.
SLOT_BYTES = 2048
#: Where the receive ring starts (virtual); the ring takes ``ring`` slots from here.
RING_BASE = 0x1000_0000
#: Where the user buffers start; the ``i``-th packet's payload goes to buffer ``i % buffers``.
USER_BASE = 0x2000_0000
#: The per-connection control block (TCP's tcpcb/inpcb state the receive path reads and updates).
TCB_BASE = 0x3000_0000
TCB_BYTES = 256
#: Offsets in the control block the protocol work loads (connection lookup, sequence numbers,
#: window, socket-buffer state) and stores (next expected sequence number, window, ACK state).
TCB_LOAD_OFFSETS = (0, 24, 96, 160)
TCB_STORE_OFFSETS = (24, 96, 168)
#: The most ring slots or user buffers (each region then takes 256 MiB and stays below the
#: next region's base).
MAX_SLOTS = (USER_BASE - RING_BASE) // SLOT_BYTES

NETWORK_DEFAULTS = {
    "header_bytes": 52,
    "ring": 256,
    "buffers": 16,
    "dst_offset": 0,
    "protocol_instructions": 400,
    "seed": 1,
}

# --- bulkcopy ------------------------------------------------------------------------------

#: The largest bulkcopy buffer.
MAX_COPY_BYTES = 1 << 30
#: The hot source, read in full just before each hot copy.
HOT_BASE = 0x1_0000_0000
#: The cold sources (rotating) and the destinations (rotating); each region takes at most
#: COLD_SET_BYTES + one buffer, far below the next base.
COLD_BASE = 0x2_0000_0000
DST_BASE = 0x4_0000_0000
#: The rotating sets exceed this many bytes (8 MiB, eight times the copy-engine preset's 1 MB
#: L2), so a buffer is long evicted when the rotation comes back to it.
COLD_SET_BYTES = 8 << 20

# The shortest text a packet or copy writes: used to refuse, before writing, a trace that
# cannot fit on the disk.
MIN_PACKET_TEXT_BYTES = 60
MIN_COPY_TEXT_BYTES = 30


def _check_room(out: Path, needed: int) -> None:
    """ArgumentError when ``needed`` bytes will not fit on the file system holding ``out``."""
    folder = out
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return  # writing reports the problem with the path itself
    if needed > free:
        raise ArgumentError(
            f"{out}: the trace needs at least {needed:,} bytes, {free:,} free on its file system"
        )


def _thread_file(out: str | os.PathLike[str]) -> Path:
    """``OUT/thread-0.trace``, creating OUT; refuses a directory holding another workload's
    thread files, which would be read as part of this one."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ArgumentError(f"{out}: exists and is not a directory; give a new or empty directory")
    out.mkdir(parents=True, exist_ok=True)
    strays = sorted(
        p.name
        for p in out.iterdir()
        if p.name.startswith("thread-") and p.suffix in (".trace", ".btrace") and p.name != THREAD_FILE
    )
    if strays:
        raise ArgumentError(f"{out}: holds {strays[0]} of another workload; give a new or empty directory")
    return out / THREAD_FILE


def _write(path: Path, lines: Iterator[str]) -> None:
    """Writes the trace through a temporary file, so an interrupted run leaves no half trace."""
    partial = path.with_name(path.name + ".partial")
    try:
        with open(partial, "w", encoding="ascii", buffering=1 << 20) as f:
            f.write(TEXT_HEADER + "\n")
            for line in lines:
                f.write(line)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def ring_slot(packet: int, ring: int) -> int:
    """Virtual address of the ring slot holding packet ``packet`` (its header starts there)."""
    return RING_BASE + (packet % ring) * SLOT_BYTES


def user_buffer(packet: int, buffers: int, dst_offset: int) -> int:
    """Virtual address the payload of packet ``packet`` is copied to."""
    return USER_BASE + (packet % buffers) * SLOT_BYTES + dst_offset


def _pages(nbytes: int) -> int:
    """``nbytes`` rounded up to whole pages."""
    return -(-nbytes // PAGE) * PAGE


def network_records(
    *,
    payload: int,
    packets: int,
    header_bytes: int,
    ring: int,
    buffers: int,
    dst_offset: int,
    protocol_instructions: int,
    seed: int,
    warm_ring: bool = True,
    copy: bool = True,
) -> Iterator[str]:
    """The records of the network workload after its header line (arguments already checked)."""
    yield (
        f"# bulksim workload network: payload {payload} B, {packets} packets, header {header_bytes} B, "
        f"ring {ring} x {SLOT_BYTES} B at {RING_BASE:#x}, {buffers} user buffers x {SLOT_BYTES} B at "
        f"{USER_BASE:#x} + {dst_offset}, control block {TCB_BYTES} B at {TCB_BASE:#x}, "
        f"{protocol_instructions} protocol instructions, seed {seed} (no random choice)"
        f"{'' if copy else ', payloads not copied'}\n"
    )
    yield f"N {RING_BASE:#x} {_pages(ring * SLOT_BYTES)}\n"
    yield f"N {USER_BASE:#x} {_pages(buffers * SLOT_BYTES)}\n"
    yield f"N {TCB_BASE:#x} {_pages(TCB_BYTES)}\n"
    if warm_ring:
        # The packets are in the cache hierarchy when the stack reads them (written into the
        # last level as they arrive, or received earlier): one load of every ring line.
        yield f"L {RING_BASE:#x} {ring * SLOT_BYTES}\n"
    tcb_loads = "".join(f"L {TCB_BASE + o:#x}\n" for o in TCB_LOAD_OFFSETS)
    tcb_stores = "".join(f"S {TCB_BASE + o:#x}\n" for o in TCB_STORE_OFFSETS)
    compute = f"C {protocol_instructions}\n" if protocol_instructions else ""
    for i in range(packets):
        slot = ring_slot(i, ring)
        header = f"L {slot:#x} {header_bytes}\n" if header_bytes else ""
        copy_record = f"M {slot + header_bytes:#x} {user_buffer(i, buffers, dst_offset):#x} {payload}\n"
        yield header + tcb_loads + compute + tcb_stores + (copy_record if copy else "")
    yield "X\n"


def write_network(
    out: str | os.PathLike[str],
    *,
    payload: int,
    packets: int,
    header_bytes: int = NETWORK_DEFAULTS["header_bytes"],
    ring: int = NETWORK_DEFAULTS["ring"],
    buffers: int = NETWORK_DEFAULTS["buffers"],
    dst_offset: int = NETWORK_DEFAULTS["dst_offset"],
    protocol_instructions: int = NETWORK_DEFAULTS["protocol_instructions"],
    seed: int = NETWORK_DEFAULTS["seed"],
    warm_ring: bool = True,
    copy: bool = True,
) -> Path:
    """Writes the network stand-in to ``OUT/thread-0.trace`` and returns that path.

    With ``warm_ring`` the trace first loads the whole ring (one ``L RING_BASE ring*2048``
    record), so payloads start out cached as far as the caches hold the ring; without it
    they start in memory, as a NIC's DMA would leave them.

    Per packet ``i``: the header (``header_bytes`` at ``ring_slot(i, ring)``) is read (one
    ``L vaddr bytes`` record: a load of every line it touches), the control block is loaded
    and updated around ``protocol_instructions`` of compute, and the payload, right after the
    header in the slot, is copied (``M``) to ``user_buffer(i, buffers, dst_offset)``. The
    payload is not read again afterwards. Without ``copy`` the ``M`` records are left out
    (everything else is the same): the run without the copy, whose time against the
    software memcpy's gives the copy's share of run time (``bulksim reproduce
    copy-engines``).
    """
    header_bytes = _check_int("--header-bytes", header_bytes, maximum=SLOT_BYTES - 1)
    payload = _check_int("--payload", payload, minimum=1)
    if header_bytes + payload > SLOT_BYTES:
        raise ArgumentError(
            f"--payload {payload}: header ({header_bytes} B) and payload must fit one {SLOT_BYTES}-byte "
            f"ring slot; at most {SLOT_BYTES - header_bytes}"
        )
    packets = _check_int("--packets", packets, minimum=1)
    ring = _check_int("--ring", ring, minimum=1, maximum=MAX_SLOTS)
    buffers = _check_int("--buffers", buffers, minimum=1, maximum=MAX_SLOTS)
    dst_offset = _check_int("--dst-offset", dst_offset)
    if dst_offset + payload > SLOT_BYTES:
        raise ArgumentError(
            f"--dst-offset {dst_offset}: the payload ({payload} B) must fit its {SLOT_BYTES}-byte user "
            f"buffer after the offset; at most {SLOT_BYTES - payload}"
        )
    protocol_instructions = _check_int("--protocol-instructions", protocol_instructions, maximum=MAX_COMPUTE)
    seed = _check_int("--seed", seed)
    if not isinstance(warm_ring, bool):
        raise ArgumentError(f"warm_ring: {warm_ring!r}; expected True or False")
    if not isinstance(copy, bool):
        raise ArgumentError(f"copy: {copy!r}; expected True or False")
    path = _thread_file(out)
    _check_room(path, packets * MIN_PACKET_TEXT_BYTES)
    _write(
        path,
        network_records(
            payload=payload,
            packets=packets,
            header_bytes=header_bytes,
            ring=ring,
            buffers=buffers,
            dst_offset=dst_offset,
            protocol_instructions=protocol_instructions,
            seed=seed,
            warm_ring=warm_ring,
            copy=copy,
        ),
    )
    return path


class SplitMix64:
    """The project's seeded generator (workload/rng.rs), so a seed picks the same copies in
    Python as it would in the engine, on every machine and Python version."""

    GAMMA = 0x9E37_79B9_7F4A_7C15
    MASK = (1 << 64) - 1

    def __init__(self, seed: int):
        self.state = seed & self.MASK

    def next_u64(self) -> int:
        self.state = (self.state + self.GAMMA) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & self.MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in ``0..n`` (n > 0), by 128-bit multiply."""
        return (self.next_u64() * n) >> 64


def hot_copies(copies: int, hot: float, seed: int) -> Iterator[bool]:
    """For each copy in order, whether it is hot: exactly ``round(hot * copies)`` of them
    (halves up), every such set equally likely, chosen one copy at a time (selection
    sampling: copy ``i`` is hot with probability needed / left), so no list of all copies is
    built."""
    needed = math.floor(hot * copies + 0.5)
    rng = SplitMix64(seed)
    for left in range(copies, 0, -1):
        take = rng.below(left) < needed
        needed -= take
        yield take


def bulkcopy_layout(size: int) -> tuple[int, int]:
    """(bytes between buffers, buffers in each rotating set) for copies of ``size`` bytes:
    buffers start on pages, and a set holds one buffer more than fits in COLD_SET_BYTES."""
    stride = _pages(size)
    return stride, COLD_SET_BYTES // stride + 1


def bulkcopy_records(*, size: int, copies: int, hot: float, seed: int) -> Iterator[str]:
    """The records of the bulkcopy workload after its header line (arguments already checked)."""
    stride, rotating = bulkcopy_layout(size)
    yield (
        f"# bulksim workload bulkcopy: {copies} copies of {size} B, hot fraction {hot}, seed {seed}; "
        f"hot source at {HOT_BASE:#x}, {rotating} cold sources at {COLD_BASE:#x} and {rotating} "
        f"destinations at {DST_BASE:#x}, {stride} B apart\n"
    )
    yield f"N {HOT_BASE:#x} {stride}\n"
    yield f"N {COLD_BASE:#x} {rotating * stride}\n"
    yield f"N {DST_BASE:#x} {rotating * stride}\n"
    cold = 0
    for i, is_hot in enumerate(hot_copies(copies, hot, seed)):
        dst = DST_BASE + (i % rotating) * stride
        if is_hot:
            yield f"L {HOT_BASE:#x} {size}\nM {HOT_BASE:#x} {dst:#x} {size}\n"
        else:
            yield f"M {COLD_BASE + (cold % rotating) * stride:#x} {dst:#x} {size}\n"
            cold += 1
    yield "X\n"


def write_bulkcopy(out: str | os.PathLike[str], *, size: int, copies: int, hot: float, seed: int = 1) -> Path:
    """Writes the bulkcopy workload to ``OUT/thread-0.trace`` and returns that path.

    ``copies`` copies of ``size`` bytes, each to the next destination of a rotating set; a
    fraction ``hot`` of them (chosen by ``seed``) copy the hot source right after reading all
    of it, the others the next cold source of a rotating set. Both sets exceed 8 MiB, so their
    buffers are not cached when their turn comes.
    """
    size = _check_int("--size", size, minimum=1, maximum=MAX_COPY_BYTES)
    copies = _check_int("--copies", copies, minimum=1)
    if isinstance(hot, bool) or not isinstance(hot, int | float) or not 0 <= hot <= 1:
        raise ArgumentError(f"--hot: {hot!r} is not a fraction; expected a number from 0 to 1")
    seed = _check_int("--seed", seed, maximum=U64_MAX)
    path = _thread_file(out)
    _check_room(path, copies * MIN_COPY_TEXT_BYTES)
    _write(path, bulkcopy_records(size=size, copies=copies, hot=float(hot), seed=seed))
    return path
