"""The input kinds (those of the foreign workload formats in `foreign.py`). Each
`gen_<kind>(rng, seed, index)` returns a Case: input files, the `bulksim` command that reads
them, and an oracle that checks an accepted input's results against an independent reading
of it (`oracle.py`). About a quarter of the cases are valid inputs left unmutated, so the
oracle is exercised on inputs that must be accepted."""

from __future__ import annotations

import csv
import functools
import gzip
import itertools
import json
import random
import sqlite3
import tempfile
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import foreign, mutate, oracle, tomlgen
from .runner import HANG, RUNAWAY, TRACEBACK, Case, CaseContext, Limits, run_cli

REPO = Path(__file__).resolve().parents[2]
PRESETS = ["DDR4_8Gb_x8_2400", "DDR3_2Gb_x8_1066", "DDR3_4Gb_x8_1600"]
VALID_SHARE = 0.25


# --- small helpers -------------------------------------------------------------------------


def _stats(ctx: CaseContext, name: str = "out.json") -> dict[str, Any]:
    return json.loads((ctx.dir / name).read_text())


def _compare(pairs: list[tuple[str, Any, Any]]) -> str | None:
    """The first (name, got, expected) that differs, as a message."""
    for name, got, expected in pairs:
        if got != expected:
            return f"{name} = {got}, but the input asks for {expected}"
    return None


@functools.cache
def config_defaults() -> dict[str, Any]:
    """The documented defaults: the TOML block of docs/config.md."""
    text = (REPO / "docs" / "config.md").read_text()
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    return tomllib.loads(block)


@functools.cache
def config_keys() -> list[str]:
    """Every documented config key (`cache.level[].size_kb` form)."""
    text = (REPO / "docs" / "config.md").read_text()
    keys = []
    for line in text.splitlines():
        if line.startswith("| `") and "." in line.split("`")[1]:
            keys.append(line.split("`")[1])
    return keys


#: Held while a cached seed (capacity, results database) is made, so threads make it once.
_SEED_LOCK = threading.Lock()


def capacity_bytes(preset: str) -> int:
    with _SEED_LOCK:
        return _capacity_bytes(preset)


@functools.cache
def _capacity_bytes(preset: str) -> int:
    """A preset's capacity with one channel and rank, from `bulksim spec show --json` (the
    organisation, not the simulator's own capacity figure)."""
    with tempfile.TemporaryDirectory() as tmp:
        r = run_cli(["spec", "show", preset, "--json"], Path(tmp), Limits())
    org = json.loads(r.stdout)["organisation"]
    banks = org["bankgroups"] * org["banks_per_group"]
    chip_bits = banks * org["rows"] * org["columns"] * org["dq"]
    # A rank is as many chips as fill the 64-bit bus.
    return chip_bits * (64 // org["dq"]) // 8


# --- request traces ------------------------------------------------------------------------

TRACE_KEYWORDS = {
    "native": ["R", "W", "C", "I"],
    "dramsim3": ["READ", "WRITE"],
    "ramulator": ["LD", "ST"],
}


def _valid_request_trace(rng: random.Random, fmt: str, capacity: int) -> bytes:
    lines = ["# fuzz seed trace"] if rng.random() < 0.5 else []
    cycle = 0
    for _ in range(rng.randint(1, 30)):
        cycle += rng.choice([0, 1, 3, 10, 100, 5000])
        if rng.random() < 0.1:
            addr = rng.randrange(capacity, capacity * 4)  # above capacity: counted, not an error
        else:
            addr = rng.randrange(0, min(capacity, 1 << 26)) & ~7
        a = hex(addr) if rng.random() < 0.7 else str(addr)
        write = rng.random() < 0.3
        if fmt == "native" and rng.random() < 0.15:
            size = rng.choice([1, 64, 100, 4096, 8192])
            src = rng.randrange(0, 1 << 24)
            dst = src + size + rng.randrange(0, 1 << 20)
            if rng.random() < 0.5:
                lines.append(f"{cycle},C,{hex(src)},{hex(dst)},{size}")
            else:
                lines.append(f"{cycle},I,{hex(dst)},{size},{rng.randrange(256)}")
        elif fmt == "native":
            lines.append(f"{cycle},{'W' if write else 'R'},{a}")
        elif fmt == "dramsim3":
            lines.append(f"{hex(addr)} {'WRITE' if write else 'READ'} {cycle}")
        else:
            lines.append(f"{'ST' if write else 'LD'} {hex(addr)}")
        if rng.random() < 0.05:
            lines.append("")
    return ("\n".join(lines) + "\n").encode()


def _check_request_trace(
    work: oracle.TraceWork, capacity: int, mechanism: str
) -> Callable[[CaseContext], str | None]:
    def check(ctx: CaseContext) -> str | None:
        s = _stats(ctx)
        bulk = s.get("bulk", {})
        problem = _compare(
            [
                ("bulk.copies", bulk.get("copies", 0), work.copies),
                ("bulk.inits", bulk.get("inits", 0), work.inits),
                ("bulk.bytes_copied", bulk.get("bytes_copied", 0), work.bytes_copied),
                ("bulk.bytes_initialized", bulk.get("bytes_initialized", 0), work.bytes_initialized),
            ]
        )
        if problem:
            return problem
        if work.copies == 0 and work.inits == 0:
            problem = _compare([("reads", s["reads"], work.reads), ("writes", s["writes"], work.writes)])
        elif mechanism in ("channel", "mc_dma"):
            # docs/rowclone.md: the channel copier's requests count in reads and writes; it
            # writes each destination line once with WR.
            problem = _compare([("writes", s["writes"], work.writes + work.bulk_dst_lines)])
            if s["reads"] < work.reads:
                problem = f"reads = {s['reads']}, fewer than the trace's {work.reads} reads"
        elif s["reads"] < work.reads or s["writes"] < work.writes:
            got = f"reads, writes = {s['reads']}, {s['writes']}"
            problem = f"{got}: fewer than the trace's {work.reads}, {work.writes}"
        if problem:
            return problem
        if s["mem_cycles"] < work.max_cycle:
            return f"mem_cycles = {s['mem_cycles']} ends before the last request's cycle {work.max_cycle}"
        if work.copies == 0 and work.inits == 0:
            c = s["commands"]
            # Without bulk operations every DRAM burst is a request's: reads the write queue
            # did not answer, writes not merged into a queued one (all are served by the end).
            problem = _compare(
                [
                    (
                        "RD+RDA commands",
                        c.get("RD", 0) + c.get("RDA", 0),
                        s["reads"] - s["reads_forwarded"],
                    ),
                    (
                        "WR+WRA commands",
                        c.get("WR", 0) + c.get("WRA", 0),
                        s["writes"] - s["writes_merged"],
                    ),
                    (
                        "out_of_range_requests",
                        s["out_of_range_requests"],
                        sum(a >= capacity for a in work.addresses),
                    ),
                ]
            )
            if problem:
                return problem
        return None

    return check


def _gen_request_trace(fmt: str, rng: random.Random, seed: int, index: int) -> Case:
    preset = PRESETS[0]
    capacity = capacity_bytes(preset)
    data = _valid_request_trace(rng, fmt, capacity)
    what = f"valid {fmt} trace"
    if rng.random() > VALID_SHARE:
        data = mutate.mutate_text(data, rng, "," if fmt == "native" else None, TRACE_KEYWORDS[fmt])
        what = f"mutated {fmt} trace"
    argv = ["run", "--trace", "t.trace", "--trace-format", fmt, "--json", "out.json", "--quiet"]
    mechanism = "channel"
    if fmt == "native" and rng.random() < 0.3:
        mechanism = rng.choice(["mc_dma", "rowclone"])
        argv += ["--set", f"bulk.mechanism={mechanism}"]
    case = Case(f"trace_{fmt}", seed, index, {"t.trace": data}, argv, what)
    try:
        work = oracle.read_request_trace(data, fmt)
    except oracle.Malformed as e:
        case.malformed = str(e)
    else:
        case.check = _check_request_trace(work, capacity, mechanism)
    return case


def gen_trace_native(rng, seed, index):
    return _gen_request_trace("native", rng, seed, index)


def gen_trace_dramsim3(rng, seed, index):
    return _gen_request_trace("dramsim3", rng, seed, index)


def gen_trace_ramulator(rng, seed, index):
    return _gen_request_trace("ramulator", rng, seed, index)


# --- full-system workloads -----------------------------------------------------------------

REGION = 0x10000000


def _valid_events(rng: random.Random, fork_child: int | None) -> list[tuple[str, tuple[int, ...]]]:
    """A small program: map a region, then compute, loads, stores, copies and inits in it."""
    size = rng.choice([4096, 16384, 65536])
    events: list[tuple[str, tuple[int, ...]]] = [(rng.choice("AP"), (REGION, size))]
    for _ in range(rng.randint(1, 25)):
        r = rng.random()
        addr = REGION + rng.randrange(size)
        if r < 0.3:
            events.append(("C", (rng.choice([0, 1, 5, 100]),)))
        elif r < 0.55:
            events.append(("L", (addr,)))
        elif r < 0.8:
            events.append(("S", (addr,)))
        elif r < 0.9:
            n = rng.choice([1, 64, 1000])
            half = size // 2
            src = REGION + rng.randrange(half - n)
            dst = REGION + half + rng.randrange(half - n)
            events.append(("M", (src, dst, n)))
        elif r < 0.95:
            n = rng.choice([1, 64, 4096])
            events.append(("I", (REGION + rng.randrange(size - n + 1), n, rng.randrange(256))))
        else:
            events.append(_version_two_event(rng, size))
    if fork_child is not None:
        events.append((rng.choice("FFT"), (fork_child,)))
        events.append(("W", ()))
    if rng.random() < 0.1:
        events += [("U", (REGION, size)), ("E", ()), ("N", (REGION, 4096)), ("L", (REGION + 8,))]
    if rng.random() < 0.5:
        events.append(("X", ()))
    return events


def _version_two_event(rng: random.Random, size: int) -> tuple[str, tuple[int, ...]]:
    """A version 2 event within the mapped region: a ranged load or store, a kernel copy, an
    access below the caches, or a resident map elsewhere."""
    n = rng.choice([1, 8, 100, 4096])
    start = REGION + rng.randrange(size - n + 1)
    letter = rng.choice("lsKGRBDN")
    if letter in "RBD":
        return (letter, (start,))
    if letter == "N":
        return (letter, (2 * REGION + rng.randrange(16) * 4096, n))
    return (letter, (start, n))


def _is_version_two(events) -> bool:
    return any(letter in "NUKGRBDETls" for letter, _ in events)


def _text(events, child: bool) -> bytes:
    header = oracle.HEADERS[1] if _is_version_two(events) else oracle.HEADER
    lines = [header + (" child" if child else "")]
    for letter, ops in events:
        letter = letter.upper() if letter in "ls" else letter  # the ranged L/S: two operands
        lines.append(" ".join([letter] + [hex(o) if o > 4096 else str(o) for o in ops]))
    return ("\n".join(lines) + "\n").encode()


def _leb128(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _raw_binary(events, child: bool) -> bytes:
    raw = bytearray(b"BSWL" + bytes([2 if _is_version_two(events) else 1, child]))
    for letter, ops in events:
        raw += letter.encode()
        for o in ops:
            raw += _leb128(o)
    return bytes(raw)


def _mutate_raw_binary(raw: bytes, rng: random.Random) -> bytes:
    """Mutations of the decompressed stream."""
    op = rng.choice(["flip", "truncate", "garbage", "long_varint", "big_operand", "opcode", "header"])
    if op == "flip":
        return mutate.bit_flip(raw, rng, rng.choice([1, 2, 4]))
    if op == "truncate":
        return mutate.truncate(raw, rng)
    if op == "garbage":
        return mutate.trailing_garbage(raw, rng)
    if op == "long_varint":  # an 11-byte varint, or one of ten bytes whose last overflows 64 bits
        return raw + rng.choice([b"L" + b"\xff" * 10 + b"\x01", b"L" + b"\xff" * 9 + b"\x7f", b"C" + b"\x80"])
    if op == "big_operand":
        letter = rng.choice("CLSMIAPFNUKGRBTls")
        n = oracle.OPERANDS[letter]
        ops = [rng.choice([0, 1, 255, 256, 2**32, 2**63, 2**64 - 1, 2**48]) for _ in range(n)]
        return raw + letter.encode() + b"".join(_leb128(o) for o in ops)
    if op == "opcode":
        i = rng.randrange(6, len(raw) + 1)
        return raw[:i] + bytes([rng.choice([0, ord("Z"), ord("c"), 0xFF])]) + raw[i:]
    return rng.choice([b"BSWL\x02", b"BSW", b"bswl\x01", b"BSWL\x01\x07"]) + raw[6:]


def _mutate_gzip(gz: bytes, rng: random.Random) -> bytes:
    """Mutations of the compressed file: CRC, length, cut, trailing data, concatenated members."""
    op = rng.choice(["crc", "isize", "flip", "truncate", "garbage", "member", "header"])
    if op == "crc":
        return gz[:-8] + bytes(b ^ 0xFF for b in gz[-8:-4]) + gz[-4:]
    if op == "isize":
        return gz[:-4] + b"\x00\x00\x00\x00"
    if op == "flip":
        return gz[:10] + mutate.bit_flip(gz[10:], rng)
    if op == "truncate":
        return gz[: rng.randrange(len(gz))]
    if op == "garbage":
        return mutate.trailing_garbage(gz, rng)
    if op == "member":  # a second gzip member: more events (RFC 1952 allows concatenation)
        more = gzip.compress(_raw_binary([("C", (7,)), ("L", (REGION,))], False)[6:], mtime=0)
        return gz + more
    return b"\x1f\x8c" + gz[2:]


def _workload_files(
    rng: random.Random, binary: bool, mutated: bool
) -> tuple[dict[str, bytes], str, dict[int, bytes]]:
    """(files, --workload argument, per-thread file bytes) of a small workload."""
    threaded = rng.random() < 0.35
    ext = ".btrace" if binary else ".trace"
    threads: dict[int, tuple[list, bool]] = {}
    if threaded:
        threads[0] = (_valid_events(rng, fork_child=1), False)
        threads[1] = (_valid_events(rng, fork_child=None), True)
        if rng.random() < 0.3:
            threads[2] = (_valid_events(rng, fork_child=None), False)
    else:
        threads[0] = (_valid_events(rng, fork_child=None), False)
    blobs = {}
    for tid, (events, child) in threads.items():
        blobs[tid] = gzip.compress(_raw_binary(events, child), mtime=0) if binary else _text(events, child)
    if mutated:
        tid = rng.choice(sorted(blobs))
        if binary:
            events, child = threads[tid]
            if rng.random() < 0.6:
                blobs[tid] = gzip.compress(_mutate_raw_binary(_raw_binary(events, child), rng), mtime=0)
            else:
                blobs[tid] = _mutate_gzip(blobs[tid], rng)
        else:
            blobs[tid] = mutate.mutate_text(blobs[tid], rng, None, list(oracle.OPERANDS))
    if threaded:
        files = {f"wl/thread-{tid}{ext}": data for tid, data in blobs.items()}
        return files, "wl", blobs
    return {f"w{ext}": blobs[0]}, f"w{ext}", blobs


def _check_workload(work: oracle.WorkloadWork) -> Callable[[CaseContext], str | None]:
    def check(ctx: CaseContext) -> str | None:
        s = _stats(ctx)
        problem = _compare(
            [
                ("instructions", s["instructions"] - s["os"]["fault_instructions"], work.instructions),
                ("os.forks", s["os"]["forks"], work.forks),
                ("os.processes", s["os"]["processes"], work.processes),
            ]
        )
        if problem:
            return problem
        if s["memcpy_ops"] - s["os"]["cow_copies"] < work.memcpys:
            return f"memcpy_ops = {s['memcpy_ops']} is fewer than the {work.memcpys} memcpy events"
        if s["meminit_ops"] - s["os"]["zero_fills"] < work.meminits:
            return f"meminit_ops = {s['meminit_ops']} is fewer than the {work.meminits} meminit events"
        return None

    return check


def _gen_workload(binary: bool, rng: random.Random, seed: int, index: int) -> Case:
    mutated = rng.random() > VALID_SHARE
    files, target, blobs = _workload_files(rng, binary, mutated)
    kind = "workload_binary" if binary else "workload_text"
    form = "binary" if binary else "text"
    what = f"{'mutated' if mutated else 'valid'} {form} workload ({len(blobs)} threads)"
    argv = ["run", "--workload", target, "--json", "out.json", "--quiet"]
    if rng.random() < 0.3:
        argv += ["--set", f"system.bulk_mechanism={rng.choice(['mc_dma', 'rowclone', 'rowclone_zi'])}"]
    case = Case(kind, seed, index, files, argv, what)
    try:
        read = oracle.read_workload_binary if binary else oracle.read_workload_text
        work = oracle.workload_work({tid: read(data) for tid, data in blobs.items()})
    except oracle.Malformed as e:
        case.malformed = str(e)
    else:
        case.check = _check_workload(work)
    return case


def gen_workload_text(rng, seed, index):
    return _gen_workload(False, rng, seed, index)


def gen_workload_binary(rng, seed, index):
    return _gen_workload(True, rng, seed, index)


def _gen_foreign(kind: str) -> Callable[[random.Random, int, int], Case]:
    def gen(rng: random.Random, seed: int, index: int) -> Case:
        return foreign.gen_foreign(kind, rng, seed, index, VALID_SHARE)

    return gen


# --- configs and overrides -----------------------------------------------------------------

#: A fixed small trace for config cases: 6 reads, 3 writes.
CONFIG_TRACE = (
    b"0,R,0x0\n0,W,0x40\n5,R,0x1000\n9,R,0x2000\n9,W,0x2040\n20,R,0x40\n30,R,0x100000\n31,W,0x8\n40,R,0x0\n"
)
CONFIG_TRACE_WORK = oracle.read_request_trace(CONFIG_TRACE, "native")


def _valid_config(rng: random.Random, devices: bool = False) -> dict[str, Any]:
    defaults = config_defaults()
    doc: dict[str, Any] = {}
    sections = [s for s in defaults if isinstance(defaults[s], dict) and defaults[s]]
    for section in rng.sample(sections, rng.randint(1, 4)):
        keys = list(defaults[section])
        picked = rng.sample(keys, rng.randint(1, len(keys)))
        doc[section] = {k: defaults[section][k] for k in picked if not isinstance(defaults[section][k], dict)}
    if rng.random() < 0.3:
        doc.setdefault("dram", {})["preset"] = rng.choice(PRESETS)
    if rng.random() < 0.2:
        doc.setdefault("dram", {})["timing"] = {"nCL": 17, "nRCD": 17}
    if rng.random() < 0.2:
        doc["cache"] = {"level": [{"size_kb": 32, "ways": 8, "line_bytes": 32}, {"size_kb": 256, "ways": 8}]}
    if devices and rng.random() < 0.15:  # only full-system runs take several devices
        doc["memory"] = {"device": [{"name": "a", "preset": "DDR3_2Gb_x8_1066"}, {"name": "b"}]}
    return doc


def _resolved_mismatch(resolved: dict[str, Any], expected: list[tuple[tuple, Any]]) -> str | None:
    """Whether every (path, value) the input set is what the resolved config holds."""
    for path, value in expected:
        try:
            got = tomlgen.get(resolved, path)
        except (KeyError, IndexError, TypeError):
            return f"key {'.'.join(map(str, path))} was accepted but is not in the resolved config"
        if isinstance(value, float) and isinstance(got, int | float) and not isinstance(got, bool):
            if value != value and got != got:  # NaN: a NaN config value accepted
                return f"{'.'.join(map(str, path))} = nan was accepted"
            if abs(got - value) > 1e-9 * max(1.0, abs(value)):
                return f"{'.'.join(map(str, path))} = {got} in the resolved config, but the input set {value}"
        elif (
            got != value
            or type(got) is not type(value)
            and not (
                isinstance(got, int | float)
                and isinstance(value, int | float)
                and not isinstance(value, bool)
            )
        ):
            return f"{'.'.join(map(str, path))} = {got!r} in the resolved config, but the input set {value!r}"
    return None


#: A fixed small workload for config cases run as a full system.
CONFIG_WORKLOAD = (
    b"bulksim-workload 1\nA 0x10000000 65536\nC 10\nL 0x10000000\nS 0x10000040\n"
    b"M 0x10000000 0x10008000 4096\nI 0x10004000 100 7\nL 0x10008000\nC 3\nX\n"
)
CONFIG_WORKLOAD_WORK = oracle.workload_work({0: oracle.read_workload_text(CONFIG_WORKLOAD)})


def _config_run_argv(rng: random.Random, config_args: list[str]) -> tuple[list[str], bool]:
    """`run` with the fixed trace, or (sometimes) the fixed workload so the full-system keys
    (core, cache, os, system, memory devices) are read too; and whether it is the workload."""
    if rng.random() < 0.35:
        return ["run", "--workload", "w.trace", *config_args, "--json", "out.json", "--quiet"], True
    return ["run", "--trace", "t.trace", *config_args, "--json", "out.json", "--quiet"], False


def _check_config_run(
    show_argv: list[str], expected: list[tuple[tuple, Any]], workload: bool
) -> Callable[[CaseContext], str | None]:
    def check(ctx: CaseContext) -> str | None:
        s = _stats(ctx)
        shown = ctx.run(show_argv)
        if shown.returncode != 0:
            return f"run accepted the config but `config show` refused it: {shown.stderr.strip()[:200]}"
        resolved = tomllib.loads(shown.stdout)
        if workload:
            kernel = s["os"]["fault_instructions"]
            # A run the config stops early (sim.stop_after_dram_accesses, a measured window)
            # retires fewer instructions than the workload holds, by design.
            stops_early = any(
                tomlgen.get(resolved, ("sim", key)) > 0
                for key in ("stop_after_dram_accesses", "measure_instructions")
            )
            pairs = [("os.processes", s["os"]["processes"], 1)]
            if not stops_early:
                pairs.append(("instructions", s["instructions"] - kernel, CONFIG_WORKLOAD_WORK.instructions))
            problem = _compare(pairs)
        else:
            problem = _compare(
                [
                    ("reads", s["reads"], CONFIG_TRACE_WORK.reads),
                    ("writes", s["writes"], CONFIG_TRACE_WORK.writes),
                ]
            )
        if problem:
            return problem
        if workload:
            per_fault = tomlgen.get(resolved, ("os", "fault_instructions"))
            faults, kernel = s["os"]["page_faults"], s["os"]["fault_instructions"]
            if kernel != per_fault * faults:
                return f"os.fault_instructions = {kernel}, not {faults} faults x {per_fault}"
        elif s["preset"] != tomlgen.get(resolved, ("dram", "preset")):
            return f"stats preset {s['preset']} differs from the resolved dram.preset"
        return _resolved_mismatch(resolved, expected)

    return check


def gen_config_toml(rng: random.Random, seed: int, index: int) -> Case:
    mutated = rng.random() > VALID_SHARE
    argv, workload = _config_run_argv(rng, ["--config", "c.toml"])
    doc = _valid_config(rng, devices=mutated or workload)
    files: dict[str, bytes] = {"t.trace": CONFIG_TRACE, "w.trace": CONFIG_WORKLOAD}
    include = None
    if rng.random() < 0.2:
        bad = ["missing.toml", "c.toml", "../c.toml"] if mutated else []
        include = rng.choice(["base.toml", "base.toml"] + bad)
        base = _valid_config(rng)
        if mutated and include == "base.toml" and rng.random() < 0.3:
            base["include"] = "c.toml"  # a cycle
        files["base.toml"] = tomlgen.dumps(base).encode()
    if mutated:
        doc = tomlgen.mutate_doc(doc, rng, config_keys())
    if include:
        doc = {"include": include, **doc}
    text = tomlgen.dumps(doc).encode()
    if mutated and rng.random() < 0.25:
        text = mutate.mutate_text(text, rng, "=", ["true", "false", "[dram]", "[[cache.level]]"])
    files["c.toml"] = text
    what = f"{'mutated' if mutated else 'valid'} config{' with include' if include else ''}"
    form = rng.random()
    if form < 0.15:
        argv = ["config", "check", "c.toml"]
    elif form < 0.25:
        argv = ["config", "show", "--config", "c.toml"]
    case = Case("config_toml", seed, index, files, argv, what)
    if argv[0] == "run":
        try:
            # A leading BOM is tolerated (tomllib alone refuses it).
            parsed = tomllib.loads(text.decode("utf-8").removeprefix("\ufeff"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            case.malformed = f"not TOML: {e}"
        else:
            expected = [(p, tomlgen.get(parsed, p)) for p in tomlgen.leaves(parsed) if p != ("include",)]
            expected = [(p, v) for p, v in expected if not isinstance(v, list | dict)]
            case.check = _check_config_run(["config", "show", "--config", "c.toml"], expected, workload)
    return case


SET_VALUES = ["", "=", "1=2", "[1,", "{", "'unterminated", '"x"', "yes", "1e999", "0b101", "0o7", "-0x10"]


def _set_value(rng: random.Random, default: Any) -> str:
    if rng.random() < 0.35:
        return rng.choice(SET_VALUES)
    value = tomlgen.nasty_value(rng, default) if default is not None else rng.choice(tomlgen.NASTY_VALUES)
    if isinstance(value, str) and rng.random() < 0.5 and value and value.isidentifier():
        return value  # a bare word is taken as a string
    return tomlgen.literal(value)


def gen_set_override(rng: random.Random, seed: int, index: int) -> Case:
    defaults = config_defaults()
    keys = config_keys()
    sets: list[str] = []
    mutated = rng.random() > VALID_SHARE
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(keys)
        index_ = rng.choice([0, 0, 1, 2, 5, 1000, 2**64])
        dotted = key.replace("[]", f".{index_}")
        # The documented default of the key (of a list's first entry), for same-type edits.
        parts = tuple(int(p) if p.isdigit() else p for p in key.replace("[]", ".0").split("."))
        try:
            default = tomlgen.get(defaults, parts)
        except (KeyError, IndexError, TypeError):
            default = None
        if not mutated:
            if default is None or isinstance(default, dict | list) or "[]" in key:
                dotted, value = "controller.scheduler", rng.choice(["fcfs", "frfcfs"])
            else:
                value = tomlgen.literal(default)
            sets.append(f"{dotted}={value}")
            continue
        form = rng.random()
        if form < 0.1:
            dotted = rng.choice(
                [dotted.upper(), dotted + "x", "bogus." + dotted, dotted.replace(".", "..", 1)]
            )
        elif form < 0.15:
            sets.append(rng.choice([dotted, "=" + _set_value(rng, default), "", "dram.timing.nCL"]))
            continue
        elif form < 0.25:
            dotted = "dram.timing." + rng.choice(["nCL", "nRCD", "nFAW", "nREFI", "nRFC", "bogus", "ncl"])
        sets.append(f"{dotted}={_set_value(rng, default)}")
    argv, workload = _config_run_argv(rng, [a for s in sets for a in ("--set", s)])
    files = {"t.trace": CONFIG_TRACE, "w.trace": CONFIG_WORKLOAD}
    case = Case("set_override", seed, index, files, argv, f"--set {' '.join(sets)}")
    expected = []
    for s in sets:
        key, eq, value = s.partition("=")
        if not eq:
            continue
        try:
            parsed = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            parsed = value  # documented: a bare word is taken as a string
        path = tuple(int(p) if p.isdigit() else p for p in key.split("."))
        if isinstance(parsed, list | dict):
            continue
        expected = [(p, v) for p, v in expected if p != path] + [(path, parsed)]
    show = ["config", "show"] + [a for s in sets for a in ("--set", s)]
    case.check = _check_config_run(show, expected, workload)
    return case


# --- experiments and results databases -----------------------------------------------------


def _valid_experiment(rng: random.Random) -> dict[str, Any]:
    grid_keys = {
        "controller.scheduler": ["fcfs", "frfcfs"],
        "controller.page_policy": ["open", "closed"],
        "dram.ranks": [1, 2],
    }
    key = rng.choice(list(grid_keys))
    doc: dict[str, Any] = {"name": "fz", "description": "fuzz experiment"}
    if rng.random() < 0.5:
        doc["base"] = {"preset": rng.choice(PRESETS), "set": ["controller.refresh=none"]}
    if rng.random() < 0.7:
        doc["grid"] = {key: grid_keys[key][: rng.randint(1, 2)]}
    else:
        doc["points"] = [{key: v} for v in grid_keys[key]]
    doc["workloads"] = [
        {
            "name": "gen",
            "pattern": rng.choice(["stream", "random", "pagecopy"]),
            "requests": rng.choice([1, 20, 64, 200]),
            "write_fraction": rng.choice([0.0, 0.5]),
            "seed": rng.randrange(10),
        }
    ]
    if rng.random() < 0.5:
        doc["workloads"].append({"name": "file", "trace": "t.trace", "format": "native"})
    doc["figures"] = [{"metric": "bandwidth_gbps", "x": key}]
    doc["tables"] = [{"title": "t", "metrics": ["bandwidth_gbps", "reads"]}]
    return doc


def _check_sweep(ctx: CaseContext) -> str | tuple[str, str] | None:
    db = ctx.dir / "r.db"
    if not db.exists():
        return "sweep finished but wrote no results file"
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT workload_json, status, stats_json, error FROM runs").fetchall()
    finally:
        con.close()
    exp = tomllib.loads((ctx.dir / "e.toml").read_text())
    if "grid" in exp:
        combos = itertools.product(*exp["grid"].values())
        points = [dict(zip(exp["grid"], c, strict=True)) for c in combos]
    else:
        points = exp.get("points", [{}])
    distinct_points = {json.dumps(p, sort_keys=True) for p in points}
    distinct_workloads = {json.dumps(w, sort_keys=True) for w in exp["workloads"]}
    expected_rows = len(distinct_points) * len(distinct_workloads)
    if len(rows) != expected_rows:
        return f"results hold {len(rows)} runs, but the experiment has {expected_rows} points x workloads"
    for workload_json, status, stats_json, error in rows:
        workload = json.loads(workload_json)
        if status != "ok":
            first = (error or "").splitlines()[0] if error else ""
            if RUNAWAY in first:
                return (HANG, f"runaway output: a sweep point reached the file-size limit ({first[:100]})")
            # bulksim's input errors (api.ArgumentError: an argument out of range for the
            # engine or for the disk) are clean; any other exception class is not.
            if not first.startswith(("ConfigError", "TraceError", "OSError", "ArgumentError")):
                # A Python exception the sweep caught and stored: a traceback in disguise.
                return (TRACEBACK, f"sweep point failed with {first[:160]} (stored in the results row)")
            continue
        stats = json.loads(stats_json)
        if "trace" in workload:
            got = (stats["reads"], stats["writes"])
            expected = (CONFIG_TRACE_WORK.reads, CONFIG_TRACE_WORK.writes)
            if got != expected:
                return f"workload {workload['name']}: reads, writes = {got}, the trace has {expected}"
        elif stats["reads"] + stats["writes"] != workload["requests"]:
            return (
                f"workload {workload['name']}: {stats['reads'] + stats['writes']} requests simulated, "
                f"{workload['requests']} asked for"
            )
    return None


def gen_experiment_toml(rng: random.Random, seed: int, index: int) -> Case:
    doc = _valid_experiment(rng)
    mutated = rng.random() > VALID_SHARE
    keys = [
        "name",
        "base.preset",
        "base.set",
        "grid",
        "workloads[].requests",
        "workloads[].pattern",
        "workloads[].trace",
        "workloads[].format",
        "figures[].metric",
        "tables[].metrics",
    ]
    if mutated:
        doc = tomlgen.mutate_doc(doc, rng, keys)
    text = tomlgen.dumps(doc).encode()
    if mutated and rng.random() < 0.2:
        text = mutate.mutate_text(text, rng, "=", ["[grid]", "[[workloads]]", "[[points]]"])
    files = {"e.toml": text, "t.trace": CONFIG_TRACE}
    argv = ["sweep", "e.toml", "--results", "r.db", "--out", "report", "--workers", "1"]
    case = Case(
        "experiment_toml", seed, index, files, argv, f"{'mutated' if mutated else 'valid'} experiment"
    )
    if not mutated:
        case.check = _check_sweep
    else:
        # Accepted mutants are checked too when they are still a well-formed experiment.
        try:
            parsed = tomllib.loads(text.decode())
            if all(
                isinstance(w, dict) and isinstance(w.get("requests", 1), int) for w in parsed["workloads"]
            ):
                case.check = _check_sweep
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
            pass
    return case


def seed_results_db() -> bytes:
    """A results database written by a real sweep of a two-point experiment."""
    with _SEED_LOCK:
        return _seed_results_db()


@functools.cache
def _seed_results_db() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "t.trace").write_bytes(CONFIG_TRACE)
        exp = {
            "name": "seeddb",
            "grid": {"controller.scheduler": ["fcfs", "frfcfs"]},
            "workloads": [{"name": "file", "trace": "t.trace"}],
        }
        (d / "e.toml").write_text(tomlgen.dumps(exp))
        r = run_cli(
            ["sweep", "e.toml", "--results", "r.db", "--out", "rep", "--workers", "1"], d, Limits(120)
        )
        if r.returncode != 0:
            raise RuntimeError(f"cannot make the seed results database: {r.stderr}")
        con = sqlite3.connect(d / "r.db")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("PRAGMA journal_mode=DELETE")
        con.close()
        return (d / "r.db").read_bytes()


ROW_EDITS = [
    "UPDATE runs SET stats_json = 'not json'",
    "UPDATE runs SET stats_json = '[]'",
    "UPDATE runs SET stats_json = 'null'",
    'UPDATE runs SET stats_json = \'{"reads": "many", "mem_cycles": -1}\'',
    "UPDATE runs SET stats_json = '" + "[" * 5000 + "]" * 5000 + "'",
    "UPDATE runs SET config_toml = 'garbage = = ='",
    "UPDATE runs SET config_toml = '[dram]\nchannels = \"x\"'",
    "UPDATE runs SET params_json = '{bad'",
    "UPDATE runs SET params_json = '[1]'",
    "UPDATE runs SET workload_json = ''",
    "UPDATE runs SET wall_seconds = 'slow'",
    "UPDATE runs SET status = 'error', error = NULL",
    "PRAGMA ignore_check_constraints = ON; UPDATE runs SET status = 'maybe'",
    "UPDATE runs SET experiment = ''",
    "UPDATE runs SET stats_json = NULL",
    "UPDATE meta SET value = 'abc' WHERE key = 'schema_version'",
    "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
    "UPDATE meta SET value = '-1' WHERE key = 'schema_version'",
    "UPDATE meta SET value = 'other' WHERE key = 'format'",
    "DELETE FROM meta",
    "DELETE FROM meta WHERE key = 'schema_version'",
    "DROP TABLE runs",
    "DROP TABLE meta",
    "ALTER TABLE runs ADD COLUMN extra TEXT",
    "ALTER TABLE runs RENAME COLUMN stats_json TO stats",
    "DELETE FROM runs",
    "INSERT INTO runs SELECT key || 'b', experiment, workload, params_json, config_toml, workload_json,"
    " version, status, stats_json, error, wall_seconds, host, finished_at FROM runs",
    "UPDATE runs SET stats_json = json_set(stats_json, '$.reads', 1e400)",
    "CREATE TABLE extra (x)",
]


def _mutate_db(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    if rng.random() < 0.6:
        edits = rng.sample(ROW_EDITS, rng.choice([1, 1, 2]))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "r.db"
            path.write_bytes(data)
            con = sqlite3.connect(path)
            for edit in edits:
                try:
                    con.executescript(edit)
                except sqlite3.Error:
                    pass
            con.commit()
            con.close()
            return path.read_bytes(), "; ".join(e[:60] for e in edits)
    op = rng.choice(["flip", "truncate", "garbage", "zero_page", "empty", "header"])
    if op == "flip":
        return mutate.bit_flip(data, rng, rng.choice([1, 8, 64])), "bit flips"
    if op == "truncate":
        return data[: rng.randrange(len(data))], "truncated"
    if op == "garbage":
        return mutate.trailing_garbage(data, rng), "trailing garbage"
    if op == "zero_page":
        page = rng.randrange(max(1, len(data) // 4096))
        return data[: page * 4096] + bytes(4096) + data[(page + 1) * 4096 :], f"page {page} zeroed"
    if op == "empty":
        return b"", "empty file"
    return b"SQLite format 3\x00" + bytes(84), "header only"


def _check_results(failed: bool, csv_out: bool) -> Callable[[CaseContext], str | None]:
    def check(ctx: CaseContext) -> str | None:
        con = sqlite3.connect(ctx.dir / "r.db")
        try:
            query = "SELECT key, stats_json FROM runs" + ("" if failed else " WHERE status = 'ok'")
            rows = con.execute(query).fetchall()
        except sqlite3.Error as e:
            return f"`results` accepted a database sqlite3 cannot query ({e})"
        finally:
            con.close()
        last = ctx.results[0].stdout.strip().splitlines()[-1] if ctx.results[0].stdout.strip() else ""
        if last != f"{len(rows)} rows":
            return f"`results` printed {last!r}, the database holds {len(rows)} matching rows"
        if csv_out:
            with open(ctx.dir / "out.csv", newline="") as f:
                table = list(csv.DictReader(f))
            if len(table) != len(rows):
                return f"CSV has {len(table)} rows, the database {len(rows)}"
            by_key = {r["key"]: r for r in table}
            for key, stats_json in rows:
                if key not in by_key:
                    return f"run {key} is missing from the CSV"
                stats = json.loads(stats_json) if stats_json else {}
                if isinstance(stats, dict) and "mem_cycles" in stats:
                    if float(by_key[key]["mem_cycles"]) != float(stats["mem_cycles"]):
                        return (
                            f"run {key}: CSV mem_cycles {by_key[key]['mem_cycles']} != {stats['mem_cycles']}"
                        )
        return None

    return check


def gen_results_db(rng: random.Random, seed: int, index: int) -> Case:
    data = seed_results_db()
    mutated = rng.random() > VALID_SHARE
    what = "valid results database"
    if mutated:
        data, what = _mutate_db(data, rng)
    argv = ["results", "r.db"]
    failed = rng.random() < 0.4
    csv_out = rng.random() < 0.5
    if failed:
        argv.append("--failed")
    if csv_out:
        argv += ["--csv", "out.csv"]
    if rng.random() < 0.15:
        argv += ["--where", rng.choice(["controller.scheduler=fcfs", "nosuch=1", "=", "reads"])]
    elif rng.random() < 0.15:
        argv += ["--columns", rng.choice(["mem_cycles,reads", "nosuch", ",", ""])]
    elif rng.random() < 0.1:
        argv = ["plot", "e.toml", "--results", "r.db", "--out", "rep"]
    files = {
        "r.db": data,
        "e.toml": tomlgen.dumps(
            {
                "name": "seeddb",
                "grid": {"controller.scheduler": ["fcfs", "frfcfs"]},
                "workloads": [{"name": "file", "trace": "t.trace"}],
                "figures": [{"metric": "reads", "x": "controller.scheduler"}],
            }
        ).encode(),
        "t.trace": CONFIG_TRACE,
    }
    case = Case("results_db", seed, index, files, argv, what)
    if argv[0] == "results" and "--where" not in argv and "--columns" not in argv:
        case.check = _check_results(failed, csv_out)
    return case


# --- CLI arguments -------------------------------------------------------------------------

HUGE = [
    "18446744073709551616",
    "18446744073709551615",
    "-1",
    "0",
    "1e3",
    "abc",
    "",
    "99999999999999999999999",
]


def _arg(rng: random.Random, valid: list[str]) -> str:
    return rng.choice(valid) if rng.random() < 0.6 else rng.choice(HUGE + ["--", "-x", "é" * 3, "x" * 5000])


def _check_trace_gen(requests: str, pattern: str, interval: str, footprint: str):
    def check(ctx: CaseContext) -> str | None:
        work = oracle.read_request_trace((ctx.dir / "g.trace").read_bytes(), "native")
        n, step, foot = int(requests), int(interval), int(footprint)
        if work.reads + work.writes != n:
            return f"trace gen --requests {n} wrote {work.reads + work.writes} requests"
        if any(a >= foot for a in work.addresses):
            return f"trace gen --footprint {foot} wrote an address at or above it"
        if pattern != "pagecopy" and work.max_cycle != (n - 1) * step:
            return f"trace gen --interval {step}: last cycle {work.max_cycle}, expected {(n - 1) * step}"
        return None

    return check


def gen_cli_args(rng: random.Random, seed: int, index: int) -> Case:
    files = {"t.trace": CONFIG_TRACE}
    check = None
    form = rng.choice(["trace_gen", "trace_gen", "forkbench", "spec", "config", "run", "reproduce", "misc"])
    if form == "trace_gen":
        pattern = rng.choice(["stream", "random", "pagecopy"]) if rng.random() < 0.9 else "zigzag"
        requests = _arg(rng, ["1", "10", "64", "500"])
        interval = _arg(rng, ["0", "1", "7"])
        footprint = _arg(rng, ["4096", "65536", "1000000", "1073741824"])
        wf = _arg(rng, ["0", "0.5", "1", "1.5", "nan", "-0.1"])
        argv = [
            "trace",
            "gen",
            "g.trace",
            "--pattern",
            pattern,
            "--requests",
            requests,
            "--interval",
            interval,
            "--footprint",
            footprint,
            "--write-fraction",
            wf,
            "--seed",
            _arg(rng, ["0", "7"]),
        ]
        try:
            if int(requests) > 10**6 and int(requests) < 2**64:
                argv[argv.index("--requests") + 1] = "100"  # keep files small: huge-but-legal is not fuzzing
                requests = "100"
            if int(interval) >= 0 and int(requests) >= 1 and int(footprint) >= 4096:
                check = _check_trace_gen(requests, pattern, interval, footprint)
        except ValueError:
            pass
    elif form == "forkbench":
        size = _arg(rng, ["1", "2"])
        try:
            if int(size) > 4:
                size = "18446744073709551616"  # overflow only: a legal huge size writes gigabytes
        except ValueError:
            pass
        argv = [
            "workload",
            "forkbench",
            "fb",
            "--size-mb",
            size,
            "--pages",
            _arg(rng, ["0", "16", "256", "257"]),
            "--seed",
            _arg(rng, ["1", "2"]),
        ]
        if rng.random() < 0.5:
            argv.append("--text")
    elif form == "spec":
        argv = ["spec", "show", _arg(rng, PRESETS + ["ddr4", "DDR5_16Gb"])]
        if rng.random() < 0.5:
            argv.append("--json")
        if rng.random() < 0.4:
            argv += ["--set", _arg(rng, ["dram.columns=512", "dram.timing.nCL=20", "dram.channels=2"])]
    elif form == "config":
        argv = ["config", rng.choice(["show", "check", "bogus"])]
        argv += rng.choice(
            [["--preset", _arg(rng, PRESETS)], ["nosuch.toml"], ["t.trace"], ["--config", "t.trace"], []]
        )
    elif form == "run":
        argv = ["run"]
        argv += rng.choice(
            [
                ["--trace", "t.trace"],
                ["--trace", "nosuch"],
                ["--trace", "."],
                ["--workload", "t.trace"],
                ["--trace", "t.trace", "--workload", "."],
                [],
                ["--trace", "/dev/null"],
            ]
        )
        argv += rng.choice(
            [
                [],
                ["--json", "."],
                ["--json", "nodir/x.json"],
                ["--command-log", "nodir/c.csv"],
                ["--preset", _arg(rng, PRESETS)],
                ["--trace-format", _arg(rng, ["native", "csv"])],
                ["--json", "/dev/full"],
            ]
        )
    elif form == "reproduce":
        argv = ["reproduce"] + rng.choice(
            [
                ["--list"],
                ["nosuch"],
                ["ddr4_policies", "--json", "x.json"],
                ["rowclone-4kb", "--json", "nodir/x.json"],
                ["--workers", "0"],
            ]
        )
    else:
        argv = rng.choice(
            [
                ["--version"],
                ["--help"],
                ["nosuch"],
                ["results"],
                ["results", "nosuch.db"],
                ["plot", "nosuch"],
                ["sweep", "nosuch.toml"],
                ["sweep", "t.trace"],
                ["docs", "--check"],
                ["trace"],
                ["results", "t.trace"],
                ["\x00"],
            ]
        )
    argv = [a.replace("\x00", "") for a in argv]  # argv cannot carry NUL bytes
    return Case("cli_args", seed, index, files, argv, "bulksim " + " ".join(argv)[:200], check=check)


GENERATORS: dict[str, Callable[[random.Random, int, int], Case]] = {
    "trace_native": gen_trace_native,
    "trace_dramsim3": gen_trace_dramsim3,
    "trace_ramulator": gen_trace_ramulator,
    "workload_text": gen_workload_text,
    "workload_binary": gen_workload_binary,
    **{kind: _gen_foreign(kind) for kind in foreign.KIND_FORMATS},
    "config_toml": gen_config_toml,
    "set_override": gen_set_override,
    "experiment_toml": gen_experiment_toml,
    "results_db": gen_results_db,
    "cli_args": gen_cli_args,
}
KINDS = list(GENERATORS)


def make_case(kind: str, seed: int, index: int) -> Case:
    """The case `index` of `kind` under `seed`: the same on every machine and in every run."""
    rng = random.Random(f"{seed}:{kind}:{index}")
    return GENERATORS[kind](rng, seed, index)
