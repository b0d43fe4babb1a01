"""Independent readers of bulksim's input formats, written from the documentation
(`docs/traces.md`, `docs/system.md`, `docs/workloads.md`, `docs/errors.md`) and not from
bulksim's parsers: they say how much work an input asks for (requests, bytes, instructions),
so an accepted input whose simulated work differs is caught as a silently wrong result. Each
reader raises Malformed for input the documentation calls malformed (the harness then
expects bulksim to reject it) and, for the foreign workload formats, Unspecified where the
documentation does not decide."""

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


#: docs/traces.md, docs/workloads.md: fields are separated by spaces or tabs.
_FIELD_BLANKS = " \t"


def _content(line: str) -> str:
    """A line without its ending (the newline already split off, and a CR before it) and the
    blanks around it."""
    return line.removesuffix("\r").strip(_FIELD_BLANKS)


def _check_no_control(no: int, content: str) -> None:
    """Any control character but a tab, or other whitespace than blanks, inside a line is
    malformed: it is neither a separator nor part of a number or keyword."""
    for c in content:
        if c not in _FIELD_BLANKS and (ord(c) < 0x20 or ord(c) == 0x7F or c.isspace()):
            raise Malformed(f"line {no}: character {c!r} inside the line")


def _blank_split(content: str) -> list[str]:
    return [f for f in content.replace("\t", " ").split(" ") if f]


def _text_lines(data: bytes) -> list[tuple[int, str]]:
    """(line number, content) of the lines that are not blank or `#` comments."""
    # Request traces are bytes: a comment may hold anything; other bytes outside UTF-8 can
    # only sit in fields that must be numbers or keywords, where they fail to parse.
    text = data.decode("utf-8", errors="surrogateescape")
    out = []
    for no, line in enumerate(text.split("\n"), start=1):
        stripped = _content(line)
        if stripped and not stripped.startswith("#"):
            _check_no_control(no, stripped)
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
        fields = [f.strip(_FIELD_BLANKS) for f in line.split(",")]
    else:
        fields = _blank_split(line)
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
    "N": 2, "U": 2, "K": 2, "G": 2, "R": 1, "B": 1, "D": 1, "E": 0, "T": 1, "l": 2, "s": 2,
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
    header = _content(lines[0])
    rest = next((header[len(h) :].strip(_FIELD_BLANKS) for h in HEADERS if header.startswith(h)), None)
    if rest not in ("", "child"):
        raise Malformed(f"line 1: bad header {header!r}")
    child = rest == "child"
    events = []
    for no, line in enumerate(lines[1:], start=2):
        if line is None:
            raise Malformed(f"line {no}: not UTF-8 text")
        content = _content(line)
        if not content or content.startswith("#"):
            continue
        _check_no_control(no, content)
        words = _blank_split(content)
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


# Foreign workload formats (docs/workloads.md) -----------------------------------------------


class Unspecified(ValueError):
    """Input on which docs/workloads.md does not decide (trailing zero bytes
    after a gzip member, a byte value readable in two bases): bulksim may accept or reject it,
    but an acceptance is not checked against a reading."""


#: The largest gap one record may give (docs/workloads.md, "Large gaps").
MAX_RECORD_GAP = 1 << 40
#: Virtual addresses must lie below the page table's reach (docs/workloads.md).
VADDR_LIMIT = 1 << 48
#: Bytes of one ChampSim `input_instr` record.
CHAMPSIM_RECORD = 64
#: Formats whose records are post-LLC text lines.
POST_LLC_FORMATS = ("msc", "ramulator-cpu", "rowclone")
FOREIGN_FORMATS = (*POST_LLC_FORMATS, "champsim")
GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"


@dataclass
class ForeignWork:
    """What a foreign trace asks the core model for. `events` are the records' events the
    core counts as instructions (reads, write-backs, copies, initializations, loads, stores);
    `gaps` the non-memory instructions (for champsim the records without memory operands)."""

    fmt: str
    records: int = 0
    gaps: int = 0
    events: int = 0
    reads: int = 0
    writebacks: int = 0
    copies: int = 0
    inits: int = 0
    loads: int = 0
    stores: int = 0

    @property
    def instructions(self) -> int:
        """docs/workloads.md: the gaps plus the records' events plus one (the opening
        resident map)."""
        return self.gaps + self.events + 1


def decompress_foreign(data: bytes, allowed: tuple[str, ...]) -> bytes:
    """The content of a foreign trace: gzip and xz recognised by their magic bytes (never by
    the name); a compression the format does not list, or a stream failing its checks, is
    malformed."""
    if data.startswith(GZIP_MAGIC):
        if "gzip" not in allowed:
            raise Unspecified("gzip is not listed for this format")
        return _gunzip_members(data)
    if data.startswith(XZ_MAGIC):
        if "xz" not in allowed:
            raise Unspecified("xz is not listed for this format")
        return _unxz_streams(data)
    return data


def _unxz_streams(data: bytes) -> bytes:
    """The .xz file format (tukaani.org/xz/xz-file-format.txt, 2): one or more streams, each
    checked, with stream padding (zero bytes, a multiple of four) between or after them;
    anything else after a stream is corrupt, as `xz -d` says."""
    import lzma

    out = []
    rest = data
    while rest:
        padding = len(rest) - len(rest.lstrip(b"\x00"))
        if padding:
            if padding % 4:
                raise Malformed(f"xz stream padding of {padding} bytes, not a multiple of four")
            rest = rest[padding:]
            continue
        if not rest.startswith(XZ_MAGIC):
            raise Malformed("data after the last xz stream is not an xz stream")
        d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        try:
            out.append(d.decompress(rest))
        except lzma.LZMAError as e:
            raise Malformed(f"corrupt xz stream ({e})") from e
        if not d.eof:
            raise Malformed("xz stream cut short")
        rest = d.unused_data
    return b"".join(out)


def _gunzip_members(data: bytes) -> bytes:
    """RFC 1952: a gzip file is one or more members, each with its CRC-32 and length checked
    (zlib's gzip mode checks both). Zero bytes after the last member are a convention of the
    gzip tool, not of the RFC: undecided."""
    out = []
    rest = data
    while rest:
        if not rest.startswith(GZIP_MAGIC):
            if not rest.strip(b"\x00"):
                raise Unspecified("zero bytes after the last gzip member")
            raise Malformed("data after the last gzip member is not a gzip member")
        d = zlib.decompressobj(wbits=31)
        try:
            out.append(d.decompress(rest))
        except zlib.error as e:
            raise Malformed(f"corrupt gzip member ({e})") from e
        if not d.eof:
            raise Malformed("gzip member cut short")
        rest = d.unused_data
    return b"".join(out)


#: Blanks between fields; any other whitespace inside a line is not described by the docs.
#: docs/errors.md: any text line of a trace or text workload is at most 4,096 bytes. Whether
#: a CR or the newline counts is not said: lines within a byte or two of it are undecided.
MAX_LINE_BYTES = 4096


def foreign_text_records(content: bytes) -> list[tuple[int, list[str]]]:
    """(line number, fields) of a post-LLC text trace's records. Blank lines and `#` comments
    are skipped, as in every other text trace of bulksim (docs/traces.md); a CR before the
    newline is a line ending. Text must be UTF-8."""
    for no, raw in enumerate(content.split(b"\n"), start=1):
        if len(raw) > MAX_LINE_BYTES + 1:
            raise Malformed(f"line {no}: longer than {MAX_LINE_BYTES} bytes")
        if len(raw) >= MAX_LINE_BYTES - 1:
            raise Unspecified(f"line {no}: {len(raw)} bytes, at the line limit")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Malformed(f"not UTF-8 text ({e.reason})") from e
    out = []
    for no, line in enumerate(text.split("\n"), start=1):
        stripped = _content(line)
        if not stripped or stripped.startswith("#"):
            continue
        _check_no_control(no, stripped)
        out.append((no, _blank_split(stripped)))
    return out


def _decimal(text: str, what: str) -> int:
    if not text or not all(c in "0123456789" for c in text):
        raise Malformed(f"{what} {text!r} is not a decimal number")
    value = int(text)
    if value >= 1 << 64:
        raise Malformed(f"{what} {text!r} does not fit 64 bits")
    return value


def _hex(text: str, what: str) -> int:
    """Hexadecimal, with or without a 0x prefix."""
    digits = text[2:] if text[:2] in ("0x", "0X") else text
    if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits):
        raise Malformed(f"{what} {text!r} is not a hexadecimal number")
    value = int(digits, 16)
    if value >= 1 << 64:
        raise Malformed(f"{what} {text!r} does not fit 64 bits")
    return value


def _gap(text: str) -> int:
    n = _decimal(text, "instruction count")
    if n > MAX_RECORD_GAP:
        raise Malformed(f"instruction count {n} above 2^40")
    return n


def _address(value: int, what: str) -> int:
    if value >= VADDR_LIMIT:
        raise Malformed(f"{what} {value:#x} at or above 2^48")
    return value


def _range(start: int, size: int, what: str) -> None:
    if start + size > VADDR_LIMIT:
        raise Malformed(f"{what} range of {size} bytes at {start:#x} reaches past 2^48")


def _msc_record(f: list[str], work: ForeignWork) -> None:
    """`<n> R <hex address> <hex pc>` or `<n> W <hex address>`."""
    if len(f) == 4 and f[1] == "R":
        _address(_hex(f[2], "address"), "address")
        _hex(f[3], "pc")
        work.reads += 1
    elif len(f) == 3 and f[1] == "W":
        _address(_hex(f[2], "address"), "address")
        work.writebacks += 1
    else:
        raise Malformed("not `<n> R <addr> <pc>` or `<n> W <addr>`")
    work.gaps += _gap(f[0])
    work.events += 1


def _ramulator_number(text: str, what: str) -> int:
    """docs/workloads.md: addresses decimal or 0x-hex."""
    if text[:2] in ("0x", "0X"):
        return _hex(text, what)
    return _decimal(text, what)


def _ramulator_cpu_record(f: list[str], work: ForeignWork) -> None:
    """`<n> <read address> [<write-back address>]`."""
    if len(f) not in (2, 3):
        raise Malformed(f"{len(f)} fields; 2 or 3 expected")
    _address(_ramulator_number(f[1], "read address"), "read address")
    work.reads += 1
    work.events += 1
    if len(f) == 3:
        _address(_ramulator_number(f[2], "write-back address"), "write-back address")
        work.writebacks += 1
        work.events += 1
    work.gaps += _gap(f[0])


def _rowclone_value(text: str) -> int:
    """An S record's byte value. docs/workloads.md says it must fit a byte but not in which
    base; only a value that fits (or does not) read either way decides."""
    as_hex = _hex(text, "value")
    as_decimal = int(text) if text and all(c in "0123456789" for c in text) else None
    fits = as_hex <= 255
    if as_decimal is not None and (as_decimal <= 255) != fits:
        raise Unspecified(f"value {text!r} fits a byte in one base only")
    if not fits:
        raise Malformed(f"value {text!r} does not fit a byte")
    return as_hex


def _byte_count(text: str) -> int:
    n = _decimal(text, "byte count")
    if n == 0:
        # A memcpy/meminit of 0 bytes is an error in every bulksim workload (docs/system.md).
        raise Malformed("a byte count of 0")
    return n


def _rowclone_record(f: list[str], work: ForeignWork) -> None:
    """`R <read> <wb or 0> <n>`, `C <dst> <src> <bytes> <n>`, `S <dst> <value> <bytes> <n>`;
    addresses hexadecimal, byte counts and gaps decimal."""
    if f[0] == "R" and len(f) == 4:
        _address(_hex(f[1], "read address"), "read address")
        wb = _hex(f[2], "write-back address")
        work.reads += 1
        work.events += 1
        if wb != 0:
            _address(wb, "write-back address")
            work.writebacks += 1
            work.events += 1
    elif f[0] == "C" and len(f) == 5:
        dst, src, size = _hex(f[1], "destination"), _hex(f[2], "source"), _byte_count(f[3])
        _range(src, size, "source")
        _range(dst, size, "destination")
        if src < dst + size and dst < src + size:
            raise Malformed("copy source and destination overlap")
        work.copies += 1
        work.events += 1
    elif f[0] == "S" and len(f) == 5:
        dst = _hex(f[1], "destination")
        _rowclone_value(f[2])
        size = _byte_count(f[3])
        _range(dst, size, "destination")
        work.inits += 1
        work.events += 1
    else:
        raise Malformed("not an R record of 4 fields or a C/S record of 5")
    work.gaps += _gap(f[-1])


_RECORD_READERS = {"msc": _msc_record, "ramulator-cpu": _ramulator_cpu_record, "rowclone": _rowclone_record}


def read_post_llc(data: bytes, fmt: str) -> ForeignWork:
    """The work of a post-LLC trace (`msc`, `ramulator-cpu`, `rowclone`; plain or gzip)."""
    work = ForeignWork(fmt)
    for no, fields in foreign_text_records(decompress_foreign(data, ("gzip",))):
        try:
            _RECORD_READERS[fmt](fields, work)
        except Malformed as e:
            raise Malformed(f"line {no}: {e}") from None
        work.records += 1
    return work


def read_champsim(data: bytes) -> ForeignWork:
    """ChampSim `input_instr` records (xz, gzip or plain): one instruction each when it has no
    memory operand, else one per nonzero operand (loads, then stores)."""
    content = decompress_foreign(data, ("gzip", "xz"))
    if len(content) % CHAMPSIM_RECORD:
        raise Malformed(f"{len(content)} bytes are not whole 64-byte records")
    work = ForeignWork("champsim")
    for no in range(len(content) // CHAMPSIM_RECORD):
        rec = content[no * CHAMPSIM_RECORD : (no + 1) * CHAMPSIM_RECORD]
        if not any(rec):
            # docs/workloads.md: 64 zero bytes have no instruction address; not a record.
            raise Malformed(f"record {no + 1}: 64 zero bytes")
        words = [int.from_bytes(rec[at : at + 8], "little") for at in range(16, 64, 8)]
        stores = [a for a in words[:2] if a]
        loads = [a for a in words[2:] if a]
        for a in loads + stores:
            if a >= VADDR_LIMIT:
                raise Malformed(f"record {no + 1}: memory operand {a:#x} at or above 2^48")
        if loads or stores:
            work.loads += len(loads)
            work.stores += len(stores)
            work.events += len(loads) + len(stores)
        else:
            work.gaps += 1
        work.records += 1
    return work


def read_foreign(data: bytes, fmt: str) -> ForeignWork:
    return read_champsim(data) if fmt == "champsim" else read_post_llc(data, fmt)
