"""Experiments as files. An experiment TOML names a base config, a grid (or list) of parameter
points, the workloads, and the figures and tables to produce; this module loads it, expands it
into points (config overrides x workload), and materialises generated workloads as traces. A
full-system workload (``workload = PATH``) runs through ``api.run_workload``, keyed by its bytes.

```toml
name = "ddr4_policies"
description = "..."
[base]
config = "base.toml"            # optional, relative to this file
preset = "DDR4_8Gb_x8_2400"     # optional
set = ["controller.refresh=all_bank"]
[grid]                          # cartesian product (or [[points]] tables for a list)
"controller.scheduler" = ["fcfs", "frfcfs"]
[[workloads]]
name = "mixed"
pattern = "random"              # generated (stream, random, pagecopy) ...
requests = 20000
write_fraction = 0.3
# trace = "t.trace"             # ... or a trace file (relative), with format = "native"
# workload = "w.msc"            # ... or any workload `bulksim run --workload` takes (relative),
# format = "msc"                #     format detected when omitted, with copies = N (default 1)
[[figures]]
metric = "bandwidth_gbps"
x = "controller.page_policy"
hue = "controller.scheduler"
reference = { value = 19.2, label = "peak" }   # optional dashed line
[[tables]]
metrics = ["bandwidth_gbps", "read_latency.mean_ns"]
```
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bulksim import _core, api, provenance
from bulksim.experiment.results import flatten_columns, run_key

EXPERIMENTS_DIR = Path(__file__).parent / "bundled"
GENERATED_KEYS = {"name", "pattern", "requests", "interval", "write_fraction", "footprint", "seed"}
TRACE_KEYS = {"name", "trace", "format"}
#: A full-system workload: anything `bulksim run --workload` takes, with its copies.
FULL_SYSTEM_KEYS = {"name", "workload", "format", "copies"}
TOP_KEYS = {"name", "description", "base", "grid", "points", "workloads", "figures", "tables"}
FIGURE_KEYS = {"metric", "x", "hue", "facet", "title", "reference"}
TABLE_KEYS = {"metrics", "title"}
U64_MAX = api.U64_MAX
#: A generated workload's footprint when it gives none (bytes).
DEFAULT_FOOTPRINT = 1 << 30
#: Limits that keep a hostile file from exhausting memory or time before anything runs.
MAX_EXPERIMENT_BYTES = 1 << 20
MAX_LINE_BYTES = 4096
MAX_POINTS = 10_000
#: Experiment and workload names become parts of file names.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")
#: Stat units of values a figure cannot plot.
NON_NUMERIC_UNITS = {"name", "text"}


class ExperimentError(ValueError):
    """A malformed experiment file; the message names the file and the key."""


@dataclass(frozen=True)
class Point:
    """One simulation: config overrides on the experiment's base, and one workload."""

    experiment: str
    config_path: str | None
    preset: str | None
    overrides: tuple[str, ...]
    params: tuple[tuple[str, Any], ...]
    workload: tuple[tuple[str, Any], ...]

    @property
    def workload_name(self) -> str:
        return dict(self.workload)["name"]

    def resolved_config(self) -> str:
        """The point's fully resolved config, as TOML."""
        return api.resolve_config(self.config_path, preset=self.preset, overrides=self.overrides)

    def key(self, resolved: str | None = None) -> str:
        """Stable hash of the resolved config (`resolved`, when the caller has it), the workload
        (a trace by its bytes) and the engine's identity (``provenance.engine_id``)."""
        if resolved is None:
            resolved = self.resolved_config()
        workload = dict(self.workload)
        if "trace" in workload:
            workload["trace_sha256"] = _file_sha256(Path(workload["trace"]))
            workload.pop("trace")
        if "workload" in workload:
            # By its bytes, wherever it lies: a re-captured program is another run.
            workload["workload_sha256"] = content_sha256(Path(workload.pop("workload")))
        return run_key(resolved, workload, provenance.engine_id())

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.params] + [f"workload={self.workload_name}"]
        return ", ".join(parts)


@dataclass
class Experiment:
    name: str
    path: Path
    description: str = ""
    config_path: str | None = None
    preset: str | None = None
    base_sets: list[str] = field(default_factory=list)
    grid: list[dict[str, Any]] = field(default_factory=list)
    workloads: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)

    def points(self) -> list[Point]:
        out = []
        for params in self.grid:
            sets = list(self.base_sets) + [f"{k}={api._toml_literal(v)}" for k, v in params.items()]
            for w in self.workloads:
                out.append(
                    Point(
                        experiment=self.name,
                        config_path=self.config_path,
                        preset=self.preset,
                        overrides=tuple(sets),
                        params=tuple(params.items()),
                        workload=tuple(sorted(w.items())),
                    )
                )
        return out


#: Content hashes of full-system workloads already hashed, by path and (size, mtime) of each file.
_CONTENT_HASHES: dict[tuple, str] = {}


def content_sha256(path: Path) -> str:
    """SHA-256 of a workload's bytes: a file's, or a directory's files (relative names and
    contents, in sorted order). Cached per process by the files' sizes and modification times,
    so that the points of a sweep hash a large capture once."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    stamp = (str(path), tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files))
    if stamp not in _CONTENT_HASHES:
        h = hashlib.sha256()
        for f in files:
            h.update((str(f.relative_to(path)) if path.is_dir() else "").encode() + b"\0")
            h.update(_file_sha256(f).encode())
        _CONTENT_HASHES[stamp] = h.hexdigest()
    return _CONTENT_HASHES[stamp]


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _err(path: Path, msg: str) -> ExperimentError:
    return ExperimentError(f"{path}: {msg}")


def _read_text(path: Path) -> str:
    """The experiment file's text; refuses huge files, lines over MAX_LINE_BYTES and non-UTF-8."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_EXPERIMENT_BYTES + 1)
    except OSError as e:
        raise _err(path, f"cannot read experiment: {e.strerror}") from e
    if len(data) > MAX_EXPERIMENT_BYTES:
        raise _err(path, f"experiment file larger than {MAX_EXPERIMENT_BYTES} bytes")
    for number, line in enumerate(data.split(b"\n"), start=1):
        if len(line) > MAX_LINE_BYTES:
            raise ExperimentError(f"{path}:{number}: line longer than {MAX_LINE_BYTES} bytes")
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ExperimentError(f"{path}:{number}: not UTF-8 text (byte {e.start + 1})") from e
    return data.decode("utf-8")


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


class _Checker:
    """Type and value checks of one experiment file's fields; every error names the file and key."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, msg: str) -> ExperimentError:
        return _err(self.path, f"{where}: {msg}")

    def string(self, where: str, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {_type_name(value)} ({value!r})")
        return value

    def file_name(self, where: str, value: Any) -> str:
        """A name that also becomes part of file names (reports, figures, cached traces)."""
        value = self.string(where, value)
        if not NAME_PATTERN.fullmatch(value):
            raise self.fail(
                where,
                f"'{value}' is not a usable name; expected 1 to 100 letters, digits, '_', '-', '.' or '+', "
                "starting with a letter or digit",
            )
        return value

    def table(self, where: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a table, got {_type_name(value)} ({value!r})")
        return value

    def tables(self, where: str, value: Any) -> list[dict[str, Any]]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected an array of tables ([[{where}]]), got {_type_name(value)}")
        return [self.table(f"{where}[{i}]", v) for i, v in enumerate(value)]

    def keys(self, where: str, value: dict[str, Any], allowed: set[str]) -> None:
        for key in value:
            if key not in allowed:
                raise self.fail(where, f"unknown key '{key}'; valid: {', '.join(sorted(allowed))}")

    def choice(self, where: str, value: Any, valid: list[str]) -> str:
        value = self.string(where, value)
        if value not in valid:
            hint = _did_you_mean(value, valid)
            raise self.fail(where, f"unknown value '{value}'{hint}; valid: {', '.join(valid)}")
        return value

    def integer(self, where: str, value: Any, minimum: int, maximum: int = U64_MAX) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected an integer, got {_type_name(value)} ({value!r})")
        if not minimum <= value <= maximum:
            raise self.fail(where, f"{value} is out of range; expected {minimum} to {maximum}")
        return value

    def fraction(self, where: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, f"expected a number from 0 to 1, got {_type_name(value)} ({value!r})")
        if not 0.0 <= value <= 1.0:  # also refuses nan
            raise self.fail(where, f"{value} is out of range; expected a number from 0 to 1")
        return float(value) if isinstance(value, float) else value

    def number(self, where: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(where, f"expected a finite number, got {_type_name(value)} ({value!r})")
        return value

    def scalar(self, where: str, value: Any) -> Any:
        """A config value: a string, integer, number or boolean."""
        if not isinstance(value, str | int | float | bool):
            raise self.fail(
                where, f"expected a string, integer, number or boolean, got {_type_name(value)} ({value!r})"
            )
        return value

    def strings(self, where: str, value: Any) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected an array of strings, got {_type_name(value)} ({value!r})")
        return [self.string(f"{where}[{i}]", v) for i, v in enumerate(value)]


def _did_you_mean(value: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(value, valid, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _stat_kinds() -> tuple[list[str], list[str], list[str]]:
    """(every documented stat, the numeric ones a figure can plot, those with one value per
    run: not a list such as energy.by_rank_nj, unit "nJ per rank")."""
    docs = api.stat_docs()
    names = [d["name"] for d in docs]
    scalar = [d["name"] for d in docs if " per " not in d["unit"]]
    numeric = [
        n for n, d in zip(names, docs, strict=True) if n in scalar and d["unit"] not in NON_NUMERIC_UNITS
    ]
    return names, numeric, scalar


def _stat_groups() -> dict[str, list[str]]:
    """The stats that are groups of named entries (``commands``), each with its entries."""
    return dict(_core.stat_groups())


def _is_stat(metric: str, names: list[str]) -> bool:
    """Whether ``metric`` is a results column of one of ``names``: a stat with one value, or an
    entry of a group (``commands.ACT``), which results hold one column each."""
    groups = _stat_groups()
    group, _, entry = metric.rpartition(".")
    if group in groups and group in names:
        return entry in groups[group]
    return metric in names and metric not in groups


def _group_problem(metric: str) -> str | None:
    """What is wrong with ``metric`` when it names a stat group (``commands``) or an entry the
    group does not have (``commands.ACTT``); None when it names neither."""
    groups = _stat_groups()
    group = metric if metric in groups else metric.rpartition(".")[0]
    if group not in groups:
        return None
    entries = [f"{group}.{e}" for e in groups[group]]
    if metric == group:
        return (
            f"'{group}' is a group of stats with one column per entry, not one metric; "
            f"name an entry: {', '.join(entries)}"
        )
    return f"'{group}' has no entry '{metric}'{_did_you_mean(metric, entries)}; valid: {', '.join(entries)}"


def _check_workload(check: _Checker, i: int, w: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    where = f"workloads[{i}]"
    if "name" not in w:
        raise check.fail(where, "needs a name")
    name = check.file_name(f"{where}.name", w["name"])
    where = f"workloads[{i}] ({name})"
    if "trace" in w and "workload" in w:
        raise check.fail(where, "give trace (a request trace) or workload (full system), not both")
    allowed = TRACE_KEYS if "trace" in w else FULL_SYSTEM_KEYS if "workload" in w else GENERATED_KEYS
    check.keys(where, w, allowed)
    w = dict(w)
    if "workload" in w:
        return _check_full_system(check, where, w, base_dir)
    if "trace" in w:
        trace = base_dir / check.string(f"{where}.trace", w["trace"])
        if not trace.is_file():
            raise check.fail(f"{where}.trace", f"no such trace file {trace}")
        w["trace"] = str(trace.resolve())
        fmt = w.get("format", "native")
        if isinstance(fmt, str) and fmt in api.workload_formats() and fmt not in api.TRACE_FORMATS:
            raise check.fail(
                f"{where}.format",
                f"'{fmt}' is a full-system workload format; write workload = \"...\" instead of trace",
            )
        w["format"] = check.choice(f"{where}.format", fmt, list(api.TRACE_FORMATS))
        return w
    if "pattern" not in w or "requests" not in w:
        raise check.fail(where, "needs pattern and requests, or a trace")
    check.choice(f"{where}.pattern", w["pattern"], list(api.TRACE_PATTERNS))
    check.integer(f"{where}.requests", w["requests"], 1)
    for key, minimum in (("interval", 0), ("footprint", api.MIN_FOOTPRINT), ("seed", 0)):
        if key in w:
            check.integer(f"{where}.{key}", w[key], minimum)
    if "write_fraction" in w:
        check.fraction(f"{where}.write_fraction", w["write_fraction"])
    return w


def _check_full_system(check: _Checker, where: str, w: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """A ``workload = PATH`` entry: the path exists (a file or a directory), the format is one
    ``bulksim run --workload`` reads (detected from the content when omitted, and recorded, so
    that the point's key names it), ``copies`` from 1 to ``api.MAX_COPIES``."""
    path = base_dir / check.string(f"{where}.workload", w["workload"])
    if not path.exists():
        raise check.fail(f"{where}.workload", f"no such workload file or directory {path}")
    w["workload"] = str(path.resolve())
    if "format" in w:
        w["format"] = check.choice(f"{where}.format", w["format"], api.workload_formats())
    else:
        try:
            w["format"] = api.detect_workload_format(path)
        except (ValueError, OSError) as e:  # TraceError and ArgumentError are ValueErrors
            message = " ".join(str(e).split()).replace("with --workload-format", "as format = ...")
            raise check.fail(f"{where}.workload", message) from e
    w["copies"] = check.integer(f"{where}.copies", w.get("copies", 1), 1, api.MAX_COPIES)
    return w


def _grid(check: _Checker, data: dict[str, Any]) -> list[dict[str, Any]]:
    if "grid" in data and "points" in data:
        raise check.fail("grid", "give either [grid] or [[points]], not both")
    if "grid" in data:
        grid = check.table("grid", data["grid"])
        size = 1
        for k, values in grid.items():
            if not isinstance(values, list) or not values:
                raise check.fail(f"grid.'{k}'", "must be a non-empty list of values")
            for j, v in enumerate(values):
                check.scalar(f"grid.'{k}'[{j}]", v)
            size *= len(values)
        if size > MAX_POINTS:
            raise check.fail("grid", f"{size} combinations; at most {MAX_POINTS} points per experiment")
        return [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]
    points = check.tables("points", data.get("points", [{}]))
    if not points:
        raise check.fail("points", "is empty; give at least one [[points]] table (it may be empty)")
    if len(points) > MAX_POINTS:
        raise check.fail("points", f"{len(points)} points; at most {MAX_POINTS} per experiment")
    for i, p in enumerate(points):
        for k, v in p.items():
            check.scalar(f"points[{i}].'{k}'", v)
    return [dict(p) for p in points]


def _check_outputs(check: _Checker, exp: Experiment, resolved_base: str) -> None:
    """Figures and tables name stats and columns that will exist, so a typo fails before the sweep."""
    names, numeric, scalar = _stat_kinds()
    config_columns: dict[str, Any] = {}
    flatten_columns("", tomllib.loads(resolved_base), config_columns)
    params = sorted({k for p in exp.grid for k in p})
    # Columns a figure can group by hold one value per run (not `cache.level`, a list).
    columns = ["workload", "experiment", *params]
    columns += [c for c, v in sorted(config_columns.items()) if c not in columns and not isinstance(v, list)]
    for i, spec in enumerate(exp.figures):
        where = f"figures[{i}]"
        check.keys(where, spec, FIGURE_KEYS)
        for key in ("metric", "x"):
            if key not in spec:
                raise check.fail(where, f"needs '{key}'")
        metric = check.string(f"{where}.metric", spec["metric"])
        if not _is_stat(metric, numeric):
            if problem := _group_problem(metric):
                raise check.fail(f"{where}.metric", problem)
            raise check.fail(
                f"{where}.metric",
                f"unknown or non-numeric metric '{metric}'{_did_you_mean(metric, numeric)}; "
                f"valid: {', '.join(numeric)}",
            )
        for key in ("x", "hue", "facet"):
            if key in spec:
                column = check.string(f"{where}.{key}", spec[key])
                if column not in columns and not _is_stat(column, scalar):
                    raise check.fail(
                        f"{where}.{key}",
                        f"unknown column '{column}'{_did_you_mean(column, columns)}; valid: workload, "
                        f"experiment, the grid's keys ({', '.join(params) or 'none'}), any config key "
                        "(`bulksim config show`) or stat (docs/stats.md) with one value per run",
                    )
        if "title" in spec:
            check.string(f"{where}.title", spec["title"])
        if "reference" in spec:
            ref = check.table(f"{where}.reference", spec["reference"])
            check.keys(f"{where}.reference", ref, {"value", "label"})
            if "value" not in ref:
                raise check.fail(f"{where}.reference", "needs 'value'")
            check.number(f"{where}.reference.value", ref["value"])
            if "label" in ref:
                check.string(f"{where}.reference.label", ref["label"])
    for i, spec in enumerate(exp.tables):
        where = f"tables[{i}]"
        check.keys(where, spec, TABLE_KEYS)
        if "metrics" not in spec:
            raise check.fail(where, "needs 'metrics'")
        metrics = check.strings(f"{where}.metrics", spec["metrics"])
        if not metrics:
            raise check.fail(f"{where}.metrics", "is empty")
        for j, metric in enumerate(metrics):
            if not _is_stat(metric, names):
                if problem := _group_problem(metric):
                    raise check.fail(f"{where}.metrics[{j}]", problem)
                raise check.fail(
                    f"{where}.metrics[{j}]",
                    f"unknown metric '{metric}'{_did_you_mean(metric, names)}; valid: {', '.join(names)}",
                )
        if "title" in spec:
            check.string(f"{where}.title", spec["title"])


def load(path: str | Path) -> Experiment:
    """Loads and checks an experiment file: the type of every field, the names of patterns,
    formats, presets, metrics and figure columns, and every point's config, so that a mistake
    fails before anything runs."""
    path = Path(path)
    text = _read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _err(path, str(e)) from e
    except RecursionError as e:  # tomllib parses nested arrays and tables recursively
        raise _err(path, "arrays or tables nested too deeply") from e
    check = _Checker(path)
    check.keys("top level", data, TOP_KEYS)
    base = check.table("base", data.get("base", {}))
    check.keys("base", base, {"config", "preset", "set"})
    config_path = None
    if "config" in base:
        config = path.parent / check.string("base.config", base["config"])
        if not config.is_file():
            raise check.fail("base.config", f"no such config file {config}")
        config_path = str(config.resolve())
    preset = None
    if "preset" in base:
        preset = check.choice("base.preset", base["preset"], api.presets())
    exp = Experiment(
        name=check.file_name("name", data.get("name", path.stem)),
        path=path,
        description=check.string("description", data.get("description", "")),
        config_path=config_path,
        preset=preset,
        base_sets=check.strings("base.set", base.get("set", [])),
        figures=check.tables("figures", data.get("figures", [])),
        tables=check.tables("tables", data.get("tables", [])),
    )
    exp.grid = _grid(check, data)
    names: set[str] = set()
    for i, w in enumerate(check.tables("workloads", data.get("workloads", []))):
        w = _check_workload(check, i, w, path.parent)
        if w["name"] in names:
            raise check.fail(f"workloads[{i}].name", f"'{w['name']}' names two workloads")
        names.add(w["name"])
        exp.workloads.append(w)
    if not exp.workloads:
        raise _err(path, "no [[workloads]]")
    if len(exp.grid) * len(exp.workloads) > MAX_POINTS:
        raise _err(
            path,
            f"{len(exp.grid)} points x {len(exp.workloads)} workloads = "
            f"{len(exp.grid) * len(exp.workloads)} runs; at most {MAX_POINTS} per experiment",
        )
    try:
        resolved_base = api.resolve_config(exp.config_path, preset=exp.preset, overrides=exp.base_sets)
    except _core.ConfigError as e:
        raise _err(path, f"base: {e}") from e
    for params in exp.grid:
        try:
            sets = exp.base_sets + [f"{k}={api._toml_literal(v)}" for k, v in params.items()]
            api.resolve_config(exp.config_path, preset=exp.preset, overrides=sets)
        except _core.ConfigError as e:
            raise _err(path, f"point {params}: {e}") from e
    _check_outputs(check, exp, resolved_base)
    return exp


def bundled() -> dict[str, Path]:
    """Experiments shipped with bulksim, by name."""
    return {p.stem: p for p in sorted(EXPERIMENTS_DIR.glob("*.toml"))}


def find(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml" and p.exists():
        return p
    experiments = bundled()
    if name_or_path in experiments:
        return experiments[name_or_path]
    raise ExperimentError(f"no experiment '{name_or_path}'; bundled: {', '.join(experiments) or 'none'}")


def generator_params(workload: dict[str, Any]) -> dict[str, Any]:
    """Every parameter a generated workload's trace is made with, its defaults filled in."""
    return {
        "pattern": workload["pattern"],
        "requests": workload["requests"],
        "interval": workload.get("interval", 0),
        "write_fraction": workload.get("write_fraction", 0.0),
        "footprint": workload.get("footprint", DEFAULT_FOOTPRINT),
        "seed": workload.get("seed", 0),
    }


def materialise(workload: dict[str, Any], cache: Path) -> tuple[Path, str]:
    """The trace file and format of a workload, generating it into `cache` if needed (keyed by
    its parameters and the engine: ``provenance.cached_input``)."""
    if "trace" in workload:
        return Path(workload["trace"]), workload.get("format", "native")
    params = generator_params(workload)
    path = provenance.cached_input(
        cache, workload["name"], "trace", params, lambda out: api.generate_trace(out, **params), ".trace"
    )
    return path, "native"
