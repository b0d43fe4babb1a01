"""The Python API over the engine: config resolution, running traces, specs and docs tables.

Defaults live in the Rust config structs; nothing here restates them. A config is given as a
TOML file path (which may ``include`` others), a nested dict, or None (defaults), then a preset
name, then ``key=value`` overrides, applied in that order.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bulksim import _core

ConfigLike = str | os.PathLike[str] | Mapping[str, Any] | None

U64_MAX = 2**64 - 1
U32_MAX = 2**32 - 1
#: What ``generate_trace`` and experiment workloads accept (docs/traces.md).
TRACE_PATTERNS = ("stream", "random", "pagecopy")
TRACE_FORMATS = ("native", "dramsim3", "ramulator")
MIN_FOOTPRINT = 4096


class ArgumentError(ValueError):
    """An argument the engine cannot take (a negative seed, a count beyond 64 bits); the message
    names the argument, its value and the range expected."""


def _check_int(name: str, value: Any, minimum: int = 0, maximum: int = U64_MAX) -> int:
    """`value` as an int in [minimum, maximum], or ArgumentError naming `name`: the engine's
    integers are unsigned, and a value that does not fit must not wrap or raise OverflowError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(f"{name}: expected an integer, got {type(value).__name__} ({value!r})")
    if not minimum <= value <= maximum:
        raise ArgumentError(f"{name}: {value} is out of range; expected {minimum} to {maximum}")
    return value


# The shortest native trace record, "0,R,0x0\n": a trace of n requests takes at least n times this.
MIN_TRACE_RECORD_BYTES = 8


def _check_room_for_trace(path: Path, requests: int) -> None:
    """ArgumentError when `requests` records cannot fit where the trace goes (free space on its
    file system, or the process's file-size limit): a huge count is refused before writing
    rather than filling the disk."""
    needed = requests * MIN_TRACE_RECORD_BYTES
    folder = path.parent if str(path.parent) else Path(".")
    try:
        room, where = shutil.disk_usage(folder).free, f"free on the file system of {folder}"
        if path.is_file():
            room += path.stat().st_size  # overwritten: its space is freed
    except OSError:
        return  # the folder is missing: writing the file reports it
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY and soft < room:
        room, where = soft, "the process's file-size limit (ulimit -f)"
    if needed > room:
        raise ArgumentError(
            f"requests: {requests} requests need at least {needed} bytes of trace in {path}, "
            f"more than the {room} bytes {where}"
        )


def _toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    raise _core.ConfigError(f"config value {value!r} has unsupported type {type(value).__name__}")


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> list[str]:
    sets = []
    for key, value in mapping.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            sets.extend(_flatten(value, dotted + "."))
        else:
            sets.append(f"{dotted}={_toml_literal(value)}")
    return sets


def _config_args(config: ConfigLike, overrides: Iterable[str]) -> tuple[str | None, list[str]]:
    """(config file path, overrides) for the engine; a dict becomes overrides."""
    sets = list(overrides)
    if config is None:
        return None, sets
    if isinstance(config, Mapping):
        return None, _flatten(config) + sets
    return os.fspath(config), sets


class Stats(Mapping[str, Any]):
    """Results of one run: a read-only mapping of the stats JSON, plus ``summary()``.

    ``stats["read_latency.p99_ns"]`` reaches nested values by dotted name.
    """

    def __init__(self, data: dict[str, Any], summary: str):
        self._data = data
        self._summary = summary

    def __getitem__(self, key: str) -> Any:
        node: Any = self._data
        for part in key.split("."):
            node = node[part]
        return node

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(self._data))

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self._data, indent=indent, sort_keys=True)

    def summary(self) -> str:
        return self._summary

    def __repr__(self) -> str:
        d = self._data
        return f"Stats(mem_cycles={d.get('mem_cycles')}, reads={d.get('reads')}, writes={d.get('writes')})"


def run(
    config: ConfigLike = None,
    *,
    trace: str | os.PathLike[str],
    trace_format: str = "native",
    preset: str | None = None,
    overrides: Iterable[str] = (),
    command_log: str | os.PathLike[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Stats:
    """Replays a request trace and returns its stats.

    ``progress`` is called with the number of requests offered so far, every 65,536 requests.
    Raises ConfigError for a bad config and TraceError for a bad trace.
    """
    path, sets = _config_args(config, overrides)
    log = os.fspath(command_log) if command_log is not None else None
    data, summary = _core.run_trace(path, preset, sets, os.fspath(trace), trace_format, log, progress)
    return Stats(json.loads(data), summary)


def workload_formats() -> list[str]:
    """The workload formats ``run_workload`` reads (docs/workloads.md)."""
    return list(_core.workload_formats())


def detect_workload_format(workload: str | os.PathLike[str]) -> str:
    """The format of the workload at ``workload``, judged from its content."""
    return _core.detect_workload_format(os.fspath(workload))


def run_workload(
    config: ConfigLike = None,
    *,
    workload: str | os.PathLike[str],
    preset: str | None = None,
    overrides: Iterable[str] = (),
    command_log: str | os.PathLike[str] | None = None,
    progress: Callable[[int, float], None] | None = None,
    fmt: str | None = None,
    copies: int = 1,
) -> Stats:
    """Runs a full-system workload (a trace file, or a directory of per-thread traces) and
    returns its stats: ``ipc``, ``fmtc``, ``traffic``, ``os``, ... and ``memory`` (the memory
    system's stats). The mechanism is ``system.bulk_mechanism``, the allocator ``os.allocator``.
    ``fmt`` is the workload's format (one of ``workload_formats()``; detected from the content
    when None); ``copies`` runs that many copies of it, each on its own core and in its own
    address space. ``command_log`` names a CSV file to receive every DRAM command the run
    issues (demand traffic, bulk copies and initializations, refresh), in the format ``run``
    writes. ``progress`` is called with the instructions retired and the simulated time (ns)
    so far, at most twice a second of host time, and once at the end.
    """
    if fmt is not None and fmt not in workload_formats():
        raise ArgumentError(f"fmt={fmt!r}: expected one of {', '.join(workload_formats())}")
    copies = _check_int("copies", copies, minimum=1, maximum=MAX_COPIES)
    path, sets = _config_args(config, overrides)
    log = os.fspath(command_log) if command_log is not None else None
    data, summary = _core.run_workload(
        path, preset, sets, os.fspath(workload), log, progress, fmt=fmt, copies=copies
    )
    return Stats(json.loads(data), summary)


def run_mix(
    config: ConfigLike = None,
    *,
    programs: Sequence[tuple[str | os.PathLike[str], str | None]],
    preset: str | None = None,
    overrides: Iterable[str] = (),
    progress: Callable[[int, float], None] | None = None,
) -> Stats:
    """Runs several programs side by side (a multi-programmed mix): each ``(path, fmt)`` (its
    format detected when ``fmt`` is None) on its own cores and in its own address spaces, in
    the order given; ``threads[i].copy`` in the stats is the program's index."""
    if not programs or len(programs) > MAX_COPIES:
        raise ArgumentError(f"programs: expected 1 to {MAX_COPIES} (path, format) pairs, got {len(programs)}")
    for _, fmt in programs:
        if fmt is not None and fmt not in workload_formats():
            raise ArgumentError(f"fmt={fmt!r}: expected one of {', '.join(workload_formats())}")
    path, sets = _config_args(config, overrides)
    wanted = [(os.fspath(p), fmt) for p, fmt in programs]
    data, summary = _core.run_workload_mix(path, preset, sets, wanted, progress)
    return Stats(json.loads(data), summary)


def convert(src: str | os.PathLike[str], dst: str | os.PathLike[str], to: str, **options: Any) -> Any:
    """Converts a workload or request trace into another format; see ``bulksim.workloads.convert``."""
    from bulksim.workloads.convert import convert as _convert

    return _convert(src, dst, to, **options)


#: The most copies of a workload one run takes (each needs a core).
MAX_COPIES = 1024


#: The most bytes `run_workload_read` reads back per region.
MAX_READ_BACK_BYTES = 1 << 20


def run_workload_read(
    config: ConfigLike = None,
    *,
    workload: str | os.PathLike[str],
    regions: Iterable[tuple[int, int, int]],
    preset: str | None = None,
    overrides: Iterable[str] = (),
) -> tuple[Stats, list[bytes | None]]:
    """Runs a full-system workload like ``run_workload``, then reads memory as its threads see
    it at the end: for each ``(thread, vaddr, length)`` in ``regions``, the bytes at ``vaddr``
    in the address space ``thread`` ran as, or None where a byte is unmapped or the thread
    never ran. For checking what copies and initializations left in memory.
    """
    wanted = [tuple(r) for r in regions]
    for i, r in enumerate(wanted):
        if len(r) != 3 or any(not isinstance(v, int) or v < 0 for v in r):
            raise ValueError(f"regions[{i}]: {r!r}; expected (thread, vaddr, length), non-negative integers")
        if r[1] + r[2] > 1 << 64:
            raise ValueError(f"regions[{i}]: vaddr {r[1]:#x} + length {r[2]} beyond the 64-bit address space")
        if r[2] > MAX_READ_BACK_BYTES:
            raise ValueError(f"regions[{i}]: length {r[2]} above the limit of {MAX_READ_BACK_BYTES} bytes")
    path, sets = _config_args(config, overrides)
    data, summary, read = _core.run_workload_read(path, preset, sets, os.fspath(workload), wanted)
    return Stats(json.loads(data), summary), [None if b is None else bytes(b) for b in read]


def generate_forkbench(
    path: str | os.PathLike[str],
    *,
    array_bytes: int,
    pages_updated: int,
    seed: int = 1,
    binary: bool = True,
    parent_thread: int = 0,
    child_thread: int = 1,
) -> Path:
    """Writes forkbench (RowClone section 7.2) as a workload directory and returns its path."""
    _check_int("array_bytes", array_bytes)
    _check_int("pages_updated", pages_updated)
    _check_int("seed", seed)
    _check_int("parent_thread", parent_thread, maximum=U32_MAX)
    _check_int("child_thread", child_thread, maximum=U32_MAX)
    _core.generate_forkbench(
        os.fspath(path), array_bytes, pages_updated, seed, binary, parent_thread, child_thread
    )
    return Path(path)


def standin_info() -> dict[str, Any]:
    """The generated stand-ins (docs/hybrid_workloads.md): ``kinds`` (name -> the programs it
    stands for), ``keys`` (spec key -> meaning) and the engine's defaults of the optional keys."""
    return _core.standin_info()


def write_standin(
    path: str | os.PathLike[str],
    *,
    kind: str,
    size_mb: int | None = None,
    instructions: int | None = None,
    seed: int | None = None,
    instructions_per_ms: int | None = None,
) -> Path:
    """Writes a stand-in spec (docs/hybrid_workloads.md) to ``path`` and returns the path; a run
    whose workload is that path generates the events as it reads them. Keys left as None take
    the engine's defaults."""
    info = _core.standin_info()
    given = {
        "size_mb": size_mb,
        "instructions": instructions,
        "seed": seed,
        "instructions_per_ms": instructions_per_ms,
    }
    values = {name: _check_int(name, info[name] if v is None else v) for name, v in given.items()}
    _core.write_standin(os.fspath(path), kind, **values)
    return Path(path)


def dump_standin(spec: str | os.PathLike[str], out: str | os.PathLike[str], *, instructions: int) -> int:
    """Writes the first ``instructions`` instructions of the stand-in at ``spec`` as a bulksim
    trace at ``out`` (text, or binary for ``.btrace``); returns the events written."""
    _check_int("instructions", instructions, minimum=1)
    return _core.dump_standin(os.fspath(spec), os.fspath(out), instructions)


def generate_random_access(
    path: str | os.PathLike[str],
    *,
    region_bytes: int,
    accesses: int,
    write_percent: int = 25,
    work: int = 2,
    seed: int = 1,
    thread: int = 0,
    binary: bool = True,
) -> Path:
    """Writes a memory-intensive random-access program as thread ``thread`` of a workload dir."""
    for name, value in (
        ("region_bytes", region_bytes),
        ("accesses", accesses),
        ("write_percent", write_percent),
        ("work", work),
        ("seed", seed),
    ):
        _check_int(name, value)
    _check_int("thread", thread, maximum=U32_MAX)
    _core.generate_random_access(
        os.fspath(path), region_bytes, accesses, write_percent, work, seed, thread, binary
    )
    return Path(path)


def system_stat_docs() -> list[dict[str, str]]:
    """Every full-system stat (outside ``memory``) with its unit and description."""
    return json.loads(_core.system_stat_docs())


def resolve_config(
    config: ConfigLike = None, *, preset: str | None = None, overrides: Iterable[str] = ()
) -> str:
    """The fully resolved config as TOML text."""
    path, sets = _config_args(config, overrides)
    return _core.resolve_config(path, preset, sets)


def spec(
    preset: str | None = None, config: ConfigLike = None, overrides: Iterable[str] = ()
) -> dict[str, Any]:
    """Organisation, timing (cycles), data rate and source of the resolved memory part."""
    path, sets = _config_args(config, overrides)
    return json.loads(_core.spec_json(path, preset, sets))


def check_config(path: str | os.PathLike[str]) -> list[str]:
    """Every problem in a config file and the files it includes; empty when it is good."""
    return list(_core.check_config(os.fspath(path)))


def presets() -> list[str]:
    return list(_core.preset_names())


def config_fields() -> list[dict[str, Any]]:
    """Every config key with its unit and description; a choice key (a mechanism, policy or
    mode) also has ``choices``, the names it takes."""
    return json.loads(_core.config_fields())


def stat_docs() -> list[dict[str, str]]:
    """Every stat (dotted name) with its unit and description."""
    return json.loads(_core.stat_docs())


def generate_trace(
    path: str | os.PathLike[str],
    pattern: str,
    requests: int,
    *,
    interval: int = 0,
    write_fraction: float = 0.0,
    footprint: int = 1 << 30,
    seed: int = 0,
) -> Path:
    """Writes a synthetic native-format trace (stream, random or pagecopy) and returns its path."""
    _check_int("requests", requests)
    _check_int("interval", interval)
    _check_int("footprint", footprint)
    _check_int("seed", seed)
    _check_room_for_trace(Path(path), requests)
    _core.generate_trace(os.fspath(path), pattern, requests, interval, write_fraction, footprint, seed)
    return Path(path)
