"""Experiments as files. An experiment TOML names a base config, a grid (or list) of parameter
points, the workloads, and the figures and tables to produce; this module loads it, expands it
into points (config overrides x workload), and materialises generated workloads as traces.

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

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bulksim import _core, api

EXPERIMENTS_DIR = Path(__file__).parent / "experiments"
GENERATED_KEYS = {"name", "pattern", "requests", "interval", "write_fraction", "footprint", "seed"}
TRACE_KEYS = {"name", "trace", "format"}


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

    def key(self) -> str:
        """Stable hash of the resolved config, the workload and the bulksim version."""
        resolved = api.resolve_config(self.config_path, preset=self.preset, overrides=self.overrides)
        workload = dict(self.workload)
        if "trace" in workload:
            workload["trace_sha256"] = _file_sha256(Path(workload["trace"]))
            workload.pop("trace")
        blob = json.dumps(
            {"config": resolved, "workload": workload, "version": _core.__version__}, sort_keys=True
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

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


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _err(path: Path, msg: str) -> ExperimentError:
    return ExperimentError(f"{path}: {msg}")


def load(path: str | Path) -> Experiment:
    """Loads and checks an experiment file (every config point is validated up front)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise _err(path, f"cannot read experiment: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise _err(path, str(e)) from e
    known = {"name", "description", "base", "grid", "points", "workloads", "figures", "tables"}
    for key in data:
        if key not in known:
            raise _err(path, f"unknown key '{key}'; valid: {', '.join(sorted(known))}")
    base = data.get("base", {})
    for key in base:
        if key not in {"config", "preset", "set"}:
            raise _err(path, f"unknown key 'base.{key}'; valid: base.config, base.preset, base.set")
    config_path = str((path.parent / base["config"]).resolve()) if "config" in base else None
    exp = Experiment(
        name=data.get("name", path.stem),
        path=path,
        description=data.get("description", ""),
        config_path=config_path,
        preset=base.get("preset"),
        base_sets=list(base.get("set", [])),
        figures=list(data.get("figures", [])),
        tables=list(data.get("tables", [])),
    )
    if "grid" in data and "points" in data:
        raise _err(path, "give either [grid] or [[points]], not both")
    if "grid" in data:
        keys = list(data["grid"])
        for k in keys:
            if not isinstance(data["grid"][k], list) or not data["grid"][k]:
                raise _err(path, f"grid.'{k}' must be a non-empty list of values")
        exp.grid = [
            dict(zip(keys, combo, strict=True)) for combo in itertools.product(*data["grid"].values())
        ]
    else:
        exp.grid = [dict(p) for p in data.get("points", [{}])]
    for i, w in enumerate(data.get("workloads", [])):
        if "name" not in w:
            raise _err(path, f"workloads[{i}] needs a name")
        allowed = TRACE_KEYS if "trace" in w else GENERATED_KEYS
        for key in w:
            if key not in allowed:
                raise _err(
                    path,
                    f"workloads[{i}] ({w['name']}): unknown key '{key}'; valid: {', '.join(sorted(allowed))}",
                )
        w = dict(w)
        if "trace" in w:
            w["trace"] = str((path.parent / w["trace"]).resolve())
            w.setdefault("format", "native")
        elif "pattern" not in w or "requests" not in w:
            raise _err(path, f"workloads[{i}] ({w['name']}): needs pattern and requests, or a trace")
        exp.workloads.append(w)
    if not exp.workloads:
        raise _err(path, "no [[workloads]]")
    for params in exp.grid:
        sets = exp.base_sets + [f"{k}={api._toml_literal(v)}" for k, v in params.items()]
        try:
            api.resolve_config(exp.config_path, preset=exp.preset, overrides=sets)
        except _core.ConfigError as e:
            raise _err(path, f"point {params}: {e}") from e
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


def materialise(workload: dict[str, Any], cache: Path) -> tuple[Path, str]:
    """The trace file and format of a workload, generating it into `cache` if needed."""
    if "trace" in workload:
        return Path(workload["trace"]), workload.get("format", "native")
    params = {k: workload[k] for k in sorted(workload) if k != "name"}
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]
    path = cache / f"{workload['name']}-{digest}.trace"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{id(params)}")
        api.generate_trace(
            tmp,
            workload["pattern"],
            workload["requests"],
            interval=workload.get("interval", 0),
            write_fraction=workload.get("write_fraction", 0.0),
            footprint=workload.get("footprint", 1 << 30),
            seed=workload.get("seed", 0),
        )
        tmp.replace(path)  # atomic: concurrent workers never see a partial trace
    return path, "native"
