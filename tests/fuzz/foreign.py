"""The fuzz kinds of the foreign workload formats (`workload_msc`, `workload_ramulator_cpu`,
`workload_rowclone`, `workload_champsim`): small valid traces (plain or compressed), their
mutations (text: the shared line, field and byte mutations plus each format's own edge
values; ChampSim: cut records, flipped bytes, odd flags and operands; compressed files:
broken checks, cuts, extra members), run with `--workload-format` (sometimes another format
than the file's) or with detection, and the oracle's check of an accepted run against
`oracle.read_foreign`. A valid input the documentation says must run is marked `must_accept`,
so a rejection of it is a wrong result too."""

from __future__ import annotations

import gzip
import json
import lzma
import random
import re
import struct
from collections.abc import Callable
from typing import Any

from . import mutate, oracle
from .runner import Case, CaseContext

#: Kind name -> the format its valid inputs are written in.
KIND_FORMATS = {
    "workload_msc": "msc",
    "workload_ramulator_cpu": "ramulator-cpu",
    "workload_rowclone": "rowclone",
    "workload_champsim": "champsim",
}
KEYWORDS = {"msc": ["R", "W"], "ramulator-cpu": ["R", "0x40"], "rowclone": ["R", "C", "S"]}
#: Total gap instructions a run surely finishes within the default sim.max_cycles (10^11 core
#: cycles at 3 instructions a cycle): above it a run may stop with that documented error.
SURELY_WITHIN_MAX_CYCLES = 1 << 37
#: Detection reads this much of the decompressed start of a file (docs/workloads.md).
DETECTION_PREFIX = 64 * 1024
LINE = 64
_DETECTED = re.compile(r"\(format ([\w-]+), detected from the content")


def _gap(rng: random.Random) -> int:
    return rng.choice([0, 0, 1, 2, 5, 17, 100, 1349, rng.randrange(1 << 20)])


def _addr(rng: random.Random) -> int:
    """A line or byte address in a few hundred MiB (or now and then near the 2^48 limit)."""
    if rng.random() < 0.03:
        return oracle.VADDR_LIMIT - rng.choice([1, 64, 4096])
    return rng.randrange(1 << 28) & rng.choice([~0, ~63])


def _hex(value: int, rng: random.Random, prefix: float) -> str:
    text = f"{value:x}" if rng.random() < 0.9 else f"{value:X}"
    return ("0x" + text) if rng.random() < prefix else text


def _msc_line(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return f"{_gap(rng)} R {_hex(_addr(rng), rng, 0.95)} {_hex(rng.randrange(1 << 32), rng, 0.95)}"
    return f"{_gap(rng)} W {_hex(_addr(rng), rng, 0.95)}"


def _ramulator_cpu_line(rng: random.Random) -> str:
    def number(v: int) -> str:
        return _hex(v, rng, 1.0) if rng.random() < 0.4 else str(v)

    line = f"{_gap(rng)} {number(_addr(rng))}"
    if rng.random() < 0.3:
        line += f" {number(_addr(rng))}"
    return line


def _rowclone_line(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.7:
        wb = _addr(rng) if rng.random() < 0.3 else 0
        return f"R {_hex(_addr(rng), rng, 0.1)} {_hex(wb, rng, 0.1)} {_gap(rng)}"
    size = rng.choice([1, 64, 100, 4096, 4096, 8192])
    dst = rng.randrange(1 << 28) & rng.choice([~0, ~4095])
    if r < 0.85:
        src = dst + size + rng.randrange(1 << 20) if rng.random() < 0.5 else max(0, dst - size - 4096)
        if src < dst + size and dst < src + size:
            src = dst + size
        return f"C {_hex(dst, rng, 0.1)} {_hex(src, rng, 0.1)} {size} {_gap(rng)}"
    value = rng.choice([0, 0, 0, 0xFF, 0xA, 0x7F])
    return f"S {_hex(dst, rng, 0.1)} {value:x} {size} {_gap(rng)}"


_LINE_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "msc": _msc_line,
    "ramulator-cpu": _ramulator_cpu_line,
    "rowclone": _rowclone_line,
}


def _valid_text(rng: random.Random, fmt: str) -> bytes:
    lines = ["# fuzz seed trace"] if rng.random() < 0.2 else []
    for _ in range(rng.randint(1, rng.choice([5, 30, 200]))):
        lines.append(_LINE_MAKERS[fmt](rng))
        if rng.random() < 0.02:
            lines.append("")
    return ("\n".join(lines) + "\n").encode()


#: Values the formats' own mutations put into a field: limits of the documentation.
EDGE_VALUES = [
    "0x1000000000000",  # 2^48: beyond the page table
    "0xffffffffffff",  # 2^48 - 1
    "1000000000000",  # hex: 2^48 beyond; decimal: below
    "1099511627776",  # 2^40: the largest gap
    "1099511627777",
    "ffffffffffffffff",
    "10000000000000000",
    "100",
    "ff",
    "0",
    "0x0",
    "00",
]


def _mutate_text_format(data: bytes, rng: random.Random, fmt: str) -> bytes:
    """The shared text mutations, or a field of one record set to one of the EDGE_VALUES."""
    if rng.random() < 0.3:
        lines = data.decode().split("\n")
        body = [i for i, line in enumerate(lines) if line and not line.startswith("#")]
        i = rng.choice(body)
        fields = lines[i].split(" ")
        fields[rng.randrange(len(fields))] = rng.choice(EDGE_VALUES)
        lines[i] = " ".join(fields)
        return "\n".join(lines).encode()
    return mutate.mutate_text(data, rng, None, KEYWORDS[fmt])


def _champsim_record(rng: random.Random) -> bytes:
    memory = [0] * 6  # destination_memory[2], source_memory[4]
    if rng.random() < 0.5:
        for slot in rng.sample(range(6), rng.randint(1, 3)):
            memory[slot] = rng.choice([_addr(rng) or 64, rng.randrange(1, 1 << 16)])
    branch = rng.random() < 0.15
    return struct.pack(
        "<QBB2s4s6Q",
        rng.randrange(0x400000, 0x800000),
        int(branch),
        int(branch and rng.random() < 0.5),
        bytes(rng.randrange(64) for _ in range(2)),
        bytes(rng.randrange(64) for _ in range(4)),
        *memory,
    )


def _valid_champsim(rng: random.Random) -> bytes:
    return b"".join(_champsim_record(rng) for _ in range(rng.randint(0, rng.choice([5, 40, 200]))))


def _mutate_champsim(raw: bytes, rng: random.Random) -> bytes:
    """Mutations of the uncompressed records."""
    op = rng.choice(["cut", "cut_whole", "flip", "flag", "operand", "partial", "garbage", "empty"])
    n = len(raw) // oracle.CHAMPSIM_RECORD
    if op == "cut":
        return mutate.truncate(raw, rng)
    if op == "cut_whole":
        return raw[: rng.randint(0, n) * oracle.CHAMPSIM_RECORD]
    if op == "flip":
        return mutate.bit_flip(raw, rng, rng.choice([1, 4, 16]))
    if n and op == "flag":
        at = rng.randrange(n) * oracle.CHAMPSIM_RECORD + rng.choice([8, 9])
        return raw[:at] + bytes([rng.choice([2, 0x80, 0xFF])]) + raw[at + 1 :]
    if n and op == "operand":
        at = rng.randrange(n) * oracle.CHAMPSIM_RECORD + 16 + 8 * rng.randrange(6)
        value = rng.choice([1 << 48, (1 << 48) - 1, (1 << 64) - 1, 1 << 63, 1])
        return raw[:at] + value.to_bytes(8, "little") + raw[at + 8 :]
    if op == "partial":
        return raw + _champsim_record(rng)[: rng.randrange(1, oracle.CHAMPSIM_RECORD)]
    if op == "empty":
        return b""
    return mutate.trailing_garbage(raw, rng)


def _mutate_compressed(blob: bytes, rng: random.Random, more: bytes, xz: bool) -> bytes:
    """Mutations of the compressed file: its checks, a cut, trailing data, another member."""
    op = rng.choice(["check", "flip", "truncate", "garbage", "member", "zeros"])
    if op == "check":  # the gzip CRC, or the xz stream footer
        return blob[:-8] + bytes(b ^ 0xFF for b in blob[-8:-4]) + blob[-4:]
    if op == "flip":
        return blob[:12] + mutate.bit_flip(blob[12:], rng)
    if op == "truncate":
        return blob[: rng.randrange(len(blob))]
    if op == "garbage":
        return mutate.trailing_garbage(blob, rng)
    if op == "zeros":
        return blob + bytes(rng.choice([1, 4, 8]))
    # A second member or stream: gzip (RFC 1952) and xz both allow concatenation.
    return blob + (lzma.compress(more, format=lzma.FORMAT_XZ) if xz else gzip.compress(more, mtime=0))


def _compress(raw: bytes, how: str) -> bytes:
    if how == "gzip":
        return gzip.compress(raw, mtime=0)
    if how == "xz":
        return lzma.compress(raw, format=lzma.FORMAT_XZ)
    return raw


def _read(data: bytes, fmt: str) -> tuple[oracle.ForeignWork | None, str | None, bool]:
    """(work, why malformed, decided): the oracle's reading of `data` as `fmt`."""
    try:
        return oracle.read_foreign(data, fmt), None, True
    except oracle.Malformed as e:
        return None, str(e), True
    except oracle.Unspecified:
        return None, None, False


def _content(data: bytes) -> bytes | None:
    try:
        return oracle.decompress_foreign(data, ("gzip", "xz"))
    except (oracle.Malformed, oracle.Unspecified):
        return None


def _detectable(work: oracle.ForeignWork, data: bytes) -> bool:
    """Whether detection must choose `work.fmt` for this valid input (docs/workloads.md): a
    text trace with a record (its records fit no other format's forms), a ChampSim trace of
    at least one record whose flag bytes are 0 or 1, when it is whole records (always, when
    valid), xz or named `*.champsimtrace*`."""
    if work.records == 0:
        return False
    if work.fmt != "champsim":
        return True
    content = _content(data) or b""
    head = content[:DETECTION_PREFIX]
    return all(
        head[i + 8] <= 1 and head[i + 9] <= 1 for i in range(0, len(head) - 63, oracle.CHAMPSIM_RECORD)
    )


def _stats(ctx: CaseContext) -> dict[str, Any]:
    return json.loads((ctx.dir / "out.json").read_text())


def _check(readings: dict[str, oracle.ForeignWork], given: str | None):
    """The check of an accepted run: the format it used is one the input is valid in, and the
    run's instructions, memory traffic and bulk operations are that format's reading."""

    def check(ctx: CaseContext) -> str | None:
        if given is None:
            m = _DETECTED.search(ctx.results[0].stdout)
            if not m:
                return "the run does not say which format it detected"
            fmt = m.group(1)
            if fmt not in readings:
                return f"detected format {fmt}, which the input is not valid in (valid: {sorted(readings)})"
        else:
            fmt = given
        work = readings[fmt]
        s = _stats(ctx)
        lookups = sum(level["hits"] + level["misses"] for level in s["cache"].values() if level)
        l1 = s["cache"]["l1"]
        pairs = [
            ("instructions", s["instructions"], work.instructions),
            ("os.page_faults", s["os"]["page_faults"], 0),
            ("os.processes", s["os"]["processes"], 1),
        ]
        if fmt == "champsim":
            # Before the caches: each load and store is one lookup in the first level.
            pairs.append(("cache.l1 hits + misses", l1["hits"] + l1["misses"], work.loads + work.stores))
        elif work.copies == 0 and work.inits == 0:
            # Below the caches: no lookups; each read and write-back is one line over the channel.
            pairs += [
                ("cache lookups of all levels", lookups, 0),
                ("traffic.read_bytes", s["traffic"]["read_bytes"], LINE * work.reads),
                ("traffic.write_bytes", s["traffic"]["write_bytes"], LINE * work.writebacks),
            ]
        for name, got, expected in pairs:
            if got != expected:
                return f"{fmt}: {name} = {got}, but the input asks for {expected}"
        if s["memcpy_ops"] < work.copies:
            return f"memcpy_ops = {s['memcpy_ops']}, fewer than the {work.copies} C records"
        if s["meminit_ops"] < work.inits:
            return f"meminit_ops = {s['meminit_ops']}, fewer than the {work.inits} S records"
        return None

    return check


def gen_foreign(kind: str, rng: random.Random, seed: int, index: int, valid_share: float) -> Case:
    fmt = KIND_FORMATS[kind]
    mutated = rng.random() > valid_share
    name = "t.trace"
    content_mutated = False
    if fmt == "champsim":
        raw = _valid_champsim(rng)
        how = rng.choice(["plain", "plain", "gzip", "xz"])
        more = _champsim_record(rng)
        if mutated and (how == "plain" or rng.random() < 0.6):
            raw, content_mutated = _mutate_champsim(raw, rng), True
        name = rng.choice(["t.trace", "t.champsimtrace"]) + {"plain": "", "gzip": ".gz", "xz": ".xz"}[how]
    else:
        raw = _valid_text(rng, fmt)
        how = "gzip" if rng.random() < 0.3 else "plain"
        more = _valid_text(rng, fmt)
        if mutated and (how == "plain" or rng.random() < 0.6):
            raw, content_mutated = _mutate_text_format(raw, rng, fmt), True
    data = _compress(raw, how)
    if mutated and not content_mutated:
        data = _mutate_compressed(data, rng, more, how == "xz")
    what = f"{'mutated' if mutated else 'valid'} {fmt} trace ({how}, {len(raw)} bytes)"

    r = rng.random()
    given: str | None
    if r < 0.35:
        given = None  # detection
    elif r < 0.9 or not mutated:
        given = fmt
    else:
        given = rng.choice([f for f in oracle.FOREIGN_FORMATS if f != fmt])
    argv = ["run", "--workload", name, "--json", "out.json"]
    if given is not None:
        argv += ["--workload-format", given, "--quiet"]  # detection: stdout says what it chose
    mechanism = "cpu"
    if fmt == "rowclone" and rng.random() < 0.3:
        mechanism = rng.choice(["mc_dma", "rowclone", "rowclone_zi"])
        argv += ["--set", f"system.bulk_mechanism={mechanism}"]
    case = Case(kind, seed, index, {name: data}, argv, what + f", format {given or 'detected'}")

    candidates = [given] if given is not None else list(oracle.FOREIGN_FORMATS)
    readings: dict[str, oracle.ForeignWork] = {}
    malformed: list[str] = []
    undecided = False
    for f in candidates:
        work, why, decided = _read(data, f)
        if work is not None:
            readings[f] = work
        elif why is not None:
            malformed.append(f"as {f}: {why}")
        undecided |= not decided
    if not readings and not undecided:
        case.malformed = "; ".join(malformed)
    elif readings:
        case.check = _check(readings, given)
        within = all(w.gaps <= SURELY_WITHIN_MAX_CYCLES for w in readings.values())
        if within and given is not None:
            case.must_accept = f"valid {given} input ({readings[given].records} records)"
        elif within and len(readings) == 1 and not undecided:
            (work,) = readings.values()
            if _detectable(work, data):
                case.must_accept = f"valid {work.fmt} input, detectable ({work.records} records)"
    return case
