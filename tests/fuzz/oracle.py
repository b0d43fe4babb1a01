"""Independent readers of bulksim's input formats, written from the documentation
(`docs/traces.md`, `docs/system.md`) and not from bulksim's parsers: they say how much work an
input asks for (requests, bytes, instructions), so an accepted input whose simulated work
differs is caught as a silently wrong result. Each reader returns `None` for input the
documentation calls malformed; the harness then expects bulksim to reject it."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field


class Malformed(ValueError):
    """Input the documented format does not allow; the message says where and why."""


def parse_number(text: str) -> int:
    """A documented number: decimal, or hexadecimal with a 0x prefix; unsigned, fits 64 bits."""
    digits, radix = text, 10
    if text[:2] in ("0x", "0X"):
        digits, radix = text[2:], 16
    if not digits or not all(c in "0123456789abcdefABCDEF"[: 10 if radix == 10 else 22] for c in digits):
        raise Malformed(f"bad number {text!r}")
    value = int(digits, radix)
    if value >= 1 << 64:
        raise Malformed(f"number {text!r} does not fit 64 bits")
    return value


@dataclass
class TraceWork:
    """What a request trace asks for."""

    reads: int = 0
    writes: int = 0
    copies: int = 0
    inits: int = 0
    bytes_copied: int = 0
    bytes_initialized: int = 0
    max_cycle: int = 0
    addresses: list[int] = field(default_factory=list)
    #: 64-byte lines the bulk operations write (their destination ranges).
    bulk_dst_lines: int = 0


def _text_lines(data: bytes) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that are not blank or `#` comments."""
    # Request traces are bytes: a comment may hold anything; other bytes outside UTF-8 can
    # only sit in fields that must be numbers or keywords, where they fail to parse.
    text = data.decode("utf-8", errors="surrogateescape")
    out = []
    for no, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(" \t\r\f\v")
        if stripped and not stripped.startswith("#"):
            out.append((no, stripped))
    return out


def read_request_trace(data: bytes, fmt: str) -> TraceWork:
    """The work of a request trace in format `fmt` (native, dramsim3, ramulator); raises
    Malformed naming the line for anything `docs/traces.md` does not allow."""
    work = TraceWork()
    for no, line in _text_lines(data):
        try:
            _read_request_line(line, fmt, work)
        except Malformed as e:
            raise Malformed(f"line {no}: {e}") from None
    return work


def _read_request_line(line: str, fmt: str, work: TraceWork) -> None:
    if fmt == "native":
        fields = [f.strip(" \t\r\f\v") for f in line.split(",")]
    else:
        fields = line.split()
    if fmt == "native" and len(fields) >= 2 and fields[1] in ("C", "I"):
        if len(fields) != 5:
            raise Malformed("a bulk line has five fields")
        cycle = parse_number(fields[0])
        if fields[1] == "C":
            src, dst, size = (parse_number(f) for f in fields[2:])
            _check_bulk_size(size)
            _check_range(src, size)
            _check_range(dst, size)
            if src < dst + size and dst < src + size:
                raise Malformed("copy source and destination overlap")
            work.copies += 1
            work.bytes_copied += size
            work.bulk_dst_lines += (dst + size - 1) // 64 - dst // 64 + 1
        else:
            dst, size, value = (parse_number(f) for f in fields[2:])
            _check_bulk_size(size)
            _check_range(dst, size)
            if value > 255:
                raise Malformed("init value above 255")
            work.inits += 1
            work.bytes_initialized += size
            work.bulk_dst_lines += (dst + size - 1) // 64 - dst // 64 + 1
        work.max_cycle = max(work.max_cycle, cycle)
        return
    if fmt == "native":
        if len(fields) != 3:
            raise Malformed("a request line has three fields")
        cycle, kind, addr = parse_number(fields[0]), fields[1], parse_number(fields[2])
        words = ("R", "W")
    elif fmt == "dramsim3":
        if len(fields) != 3:
            raise Malformed("a request line has three fields")
        addr, kind, cycle = parse_number(fields[0]), fields[1], parse_number(fields[2])
        words = ("READ", "WRITE")
    else:
        if len(fields) != 2:
            raise Malformed("a request line has two fields")
        kind, addr, cycle = fields[0], parse_number(fields[1]), 0
        words = ("LD", "ST")
    if kind == words[0]:
        work.reads += 1
    elif kind == words[1]:
        work.writes += 1
    else:
        raise Malformed(f"bad request type {kind!r}")
    work.max_cycle = max(work.max_cycle, cycle)
    work.addresses.append(addr)


def _check_range(start: int, size: int) -> None:
    if start + size > 1 << 64:
        raise Malformed("range runs past the end of the 64-bit address space")


def _check_bulk_size(size: int) -> None:
    # docs/traces.md: "`bytes` is at least 1"; its end must still be an address.
    if size < 1:
        raise Malformed("bulk operation of 0 bytes")
    if size >= 1 << 48:
        raise Malformed("bulk operation larger than the 48-bit address space")


# Full-system workloads ---------------------------------------------------------------------

HEADER = "bulksim-workload 1"
#: The text headers read: version 2 adds events to version 1's.
HEADERS = ("bulksim-workload 1", "bulksim-workload 2")
#: Operand counts of the documented events (docs/system.md); `L` and `S` also take a size (a
#: ranged access, binary letters `l` and `s`).
OPERANDS = {
    "C": 1, "L": 1, "S": 1, "M": 3, "I": 3, "A": 2, "P": 2, "F": 1, "W": 0, "X": 0,
    "N": 2, "U": 2, "K": 2, "G": 2, "R": 1, "B": 1, "E": 0, "T": 1, "l": 2, "s": 2,
}  # fmt: skip
#: Events over a byte range of the address space, counted as one instruction per line.
RANGED = "lsKG"
#: The first cache level's line size under the default configuration (bytes).
LINE = 64


@dataclass
class Thread:
    """One thread's events up to its exit, as (letter, operands)."""

    child: bool
    events: list[tuple[str, tuple[int, ...]]]


def _check_event(letter: str, ops: tuple[int, ...]) -> None:
    if letter == "M":
        src, dst, size = ops
        if size == 0:
            raise Malformed("memcpy of 0 bytes")
        if src < dst + size and dst < src + size:
            raise Malformed("memcpy source and destination overlap")
    elif letter == "I":
        if ops[1] == 0:
            raise Malformed("meminit of 0 bytes")
        if ops[2] > 255:
            raise Malformed("meminit value above 255")
    elif letter in "APN" and ops[1] == 0:
        raise Malformed("map of 0 bytes")
    elif letter == "U" and ops[1] == 0:
        raise Malformed("unmap of 0 bytes")
    elif letter in RANGED and ops[1] == 0:
        raise Malformed("access of 0 bytes")
    elif letter in "FT" and ops[0] >= 1 << 32:
        raise Malformed("thread id above 32 bits")


def read_workload_text(data: bytes) -> Thread:
    raw_lines = data.split(b"\n")
    lines = []
    for raw in raw_lines:
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(None)  # an error only if reached before the thread's exit
    if lines[0] is None:
        raise Malformed("line 1: not UTF-8 text")
    header = lines[0].strip()
    rest = next((header[len(h) :].strip() for h in HEADERS if header.startswith(h)), None)
    if rest not in ("", "child"):
        raise Malformed(f"line 1: bad header {header!r}")
    child = rest == "child"
    events = []
    for no, line in enumerate(lines[1:], start=2):
        if line is None:
            raise Malformed(f"line {no}: not UTF-8 text")
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        letter = words[0]
        if letter not in OPERANDS or letter in "ls":
            raise Malformed(f"line {no}: unknown event {letter!r}")
        if letter in "LS" and len(words) == 3:
            letter = letter.lower()  # the ranged form
        if len(words) - 1 != OPERANDS[letter]:
            raise Malformed(f"line {no}: {letter} takes {OPERANDS[letter]} operands")
        try:
            # A leading `+` on a decimal is tolerated: it cannot change the value.
            ops = tuple(parse_number(w[1:] if w[:1] == "+" and w[1:2].isdigit() else w) for w in words[1:])
            _check_event(letter, ops)
        except Malformed as e:
            raise Malformed(f"line {no}: {e}") from None
        events.append((letter, ops))
        if letter == "X":
            break  # the thread ends here: what follows is never read
    return Thread(child, events)


def read_workload_binary(data: bytes) -> Thread:
    """`.btrace`: gzip of `BSWL`, version 1 or 2, a child flag, then per event its letter and LEB128
    operands. A corrupt gzip stream (bad CRC, cut short, trailing garbage) is malformed even
    after an `X`: the file is damaged, and nothing tells intact bytes from damaged ones. Several
    concatenated gzip members are one stream (RFC 1952), as `gzip -d` reads them."""
    try:
        raw = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise Malformed(f"not a valid gzip stream ({e})") from e
    if len(raw) < 6 or raw[:4] != b"BSWL" or raw[4] not in (1, 2):
        raise Malformed("bad magic or version")
    child = raw[5] != 0
    pos, events = 6, []
    while pos < len(raw):
        letter = chr(raw[pos])
        record = len(events) + 1
        pos += 1
        if letter not in OPERANDS:
            raise Malformed(f"record {record}: unknown event code {ord(letter):#04x}")
        ops = []
        for _ in range(OPERANDS[letter]):
            value, shift = 0, 0
            while True:
                if pos >= len(raw):
                    raise Malformed(f"record {record}: cut short")
                b = raw[pos]
                pos += 1
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
                if shift >= 70:
                    raise Malformed(f"record {record}: varint longer than ten bytes")
            if value >= 1 << 64:
                raise Malformed(f"record {record}: operand above 64 bits")
            ops.append(value)
        try:
            _check_event(letter, tuple(ops))
        except Malformed as e:
            raise Malformed(f"record {record}: {e}") from None
        events.append((letter, tuple(ops)))
        if letter == "X":
            break  # the thread ends here: later records are never read
    return Thread(child, events)


@dataclass
class WorkloadWork:
    """What a workload asks for, executing forks the way docs/system.md describes."""

    instructions: int = 0
    forks: int = 0
    processes: int = 0
    memcpys: int = 0
    meminits: int = 0
    spawns: int = 0


def workload_work(threads: dict[int, Thread]) -> WorkloadWork:
    """Instructions retired by the threads that run: `C n` is n; a ranged access (`L`/`S` with
    a size, `K`, `G`) one per line it touches; every other event but W and X one; nothing after
    a thread's first X. A `child` thread runs once forked (a new process) or spawned (in its
    parent's process). Raises Malformed for a fork or spawn of a thread that is not an unstarted
    child (documented as an error) so the harness expects rejection."""
    work = WorkloadWork()
    started: set[int] = set()
    pending = [(tid, True) for tid in sorted(threads) if not threads[tid].child]
    if not pending:
        raise Malformed("no thread starts (every thread is a child)")
    while pending:
        tid, new_process = pending.pop(0)
        started.add(tid)
        work.processes += new_process
        for letter, ops in threads[tid].events:
            if letter == "X":
                break
            if letter == "C":
                work.instructions += ops[0]
            elif letter in RANGED:
                start, size = ops
                work.instructions += (start + size - 1) // LINE - start // LINE + 1
            elif letter != "W":
                work.instructions += 1
            if letter == "M":
                work.memcpys += 1
            elif letter == "I":
                work.meminits += 1
            elif letter in "FT":
                child = ops[0]
                if child not in threads or not threads[child].child or child in started:
                    raise Malformed(f"thread {tid} starts {child}, not an unstarted child thread")
                started.add(child)
                work.forks += letter == "F"
                work.spawns += letter == "T"
                pending.append((child, letter == "F"))
    return work
