"""Stats-identity check for trace replay: replays a fixed set of traces under many controller
configurations with the native driver `target/release/bulksim-replay` and writes each run's
full stats JSON (the `host` figures, wall time and the like, removed) to a directory; a second
command compares two such directories file by file. An engine change that must not change
results (a faster scheduler, say) saves the outputs of the engine before it and compares:

    .venv/bin/python -m bulksim.bench_identity run build/identity/before   # old engine
    # ... change the engine, then:
    .venv/bin/python -m bulksim.bench_identity run build/identity/after
    .venv/bin/python -m bulksim.bench_identity compare build/identity/before build/identity/after

`compare` prints "N files, K differ" (and the first differing keys of each) and exits 1 when
any file differs or is missing on either side. The traces (random and streaming with a third
writes, all due at once and spaced out so that idle time and refreshes are crossed, a page
copy pattern and a hand-written one with bulk copies and initializations) are generated into
build/identity/traces/ on first use. The configurations vary one setting at a time from a
DDR4 base and cross the presets with ranks and channels: presets DDR3, DDR4 and PCM (PCM_CMMP
with its per-dirty-block precharge), 1 and 2 ranks, 1 and 2 channels, FR-FCFS (with and without
a row-hit cap) and FCFS, open and closed pages, refresh policies and schemes, write-drain
policies and scopes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "target" / "release" / "bulksim-replay"
TRACES = ROOT / "build" / "identity" / "traces"

# name -> generate_trace arguments (pattern, requests, keywords)
GENERATED = {
    "random_w": ("random", 30_000, {"write_fraction": 1 / 3, "footprint": 1 << 30, "seed": 3}),
    "stream_w": ("stream", 30_000, {"write_fraction": 1 / 3, "footprint": 1 << 30, "seed": 3}),
    "random_gap": (
        "random",
        4_000,
        {"write_fraction": 0.3, "interval": 97, "footprint": 1 << 30, "seed": 5},
    ),
    "stream_gap": (
        "stream",
        4_000,
        {"write_fraction": 0.5, "interval": 13, "footprint": 1 << 28, "seed": 7},
    ),
    "pagecopy": ("pagecopy", 6_000, {"footprint": 1 << 28, "seed": 9}),
}


def bulk_trace_text() -> str:
    """A small native trace mixing accesses with copies and initializations (bulk work)."""
    lines = []
    cycle = 0
    for i in range(60):
        base = (i * 7919 % 512) << 12
        lines.append(f"{cycle},R,{base + 64 * (i % 64):#x}")
        lines.append(f"{cycle},W,{base + 4096 * 3 + 64 * (i % 7):#x}")
        if i % 3 == 0:
            lines.append(f"{cycle},C,{base:#x},{base + (1 << 22):#x},4096")
        if i % 5 == 0:
            lines.append(f"{cycle},I,{base + (1 << 23):#x},8192,0")
        cycle += 40 if i % 4 else 3000
    return "\n".join(lines) + "\n"


def traces() -> dict[str, Path]:
    """Every trace of the check, generated on first use."""
    import bulksim

    TRACES.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, (pattern, requests, kw) in GENERATED.items():
        path = TRACES / f"{name}.trace"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            bulksim.generate_trace(tmp, pattern, requests, **kw)
            tmp.replace(path)
        out[name] = path
    path = TRACES / "bulk.trace"
    if not path.exists():
        path.write_text(bulk_trace_text())
    out["bulk"] = path
    return out


BASE = {"dram.preset": "DDR4_8Gb_x8_2400"}

# One setting (or a few that go together) at a time, applied over BASE.
VARIATIONS: dict[str, dict[str, str]] = {
    "base": {},
    "fcfs": {"controller.scheduler": "fcfs"},
    "hitcap4": {"controller.row_hit_cap": "4"},
    "closed": {"controller.page_policy": "closed"},
    "fcfs_closed": {"controller.scheduler": "fcfs", "controller.page_policy": "closed"},
    "ref_none": {"controller.refresh.policy": "none"},
    "ref_simultaneous": {"controller.refresh.policy": "simultaneous"},
    "ref_system": {"controller.refresh.stagger": "system"},
    "ref_fgr4": {"dram.preset": "DDR4_8Gb_x8_1600", "controller.refresh.granularity": "4"},
    "elastic": {"controller.refresh.scheme": "elastic"},
    "elastic_window": {
        "controller.refresh.scheme": "elastic",
        "controller.refresh.elastic_deadline": "window",
    },
    "pausing": {"controller.refresh.scheme": "pausing"},
    "pcd": {"controller.refresh.scheme": "pcd"},
    "adaptive": {"dram.preset": "DDR4_8Gb_x8_1600", "controller.refresh.scheme": "adaptive"},
    "equal_priority": {"controller.write_drain.policy": "equal_priority"},
    "ideal": {"controller.write_drain.policy": "ideal"},
    "rank_scope": {"controller.write_drain.scope": "rank"},
    "rank_scope_coord": {
        "controller.write_drain.scope": "rank",
        "controller.write_drain.coordinate": "true",
    },
    "eq_rank_scope": {
        "controller.write_drain.policy": "equal_priority",
        "controller.write_drain.scope": "rank",
    },
    "small_queues": {"controller.read_queue_size": "8", "controller.write_queue_size": "8"},
    "no_skip": {"sim.skip_idle": "false"},
    "xor_bank": {"controller.xor_bank": "true"},
    "rowclone": {"dram.preset": "DDR3_2Gb_x8_1066", "bulk.mechanism": "rowclone"},
    "rowclone_psm": {
        "dram.preset": "DDR3_2Gb_x8_1066",
        "bulk.mechanism": "rowclone",
        "bulk.fpm": "false",
    },
    "mc_dma": {"bulk.mechanism": "mc_dma"},
}

PRESETS = ["DDR3_2Gb_x8_1066", "DDR4_8Gb_x8_2400", "PCM_x8_1600", "PCM_CMMP_400"]
ORGANISATIONS = [(1, 1), (2, 1), (1, 2), (2, 2)]  # (ranks, channels)

# Per preset and organisation, these variations as well (the rest run on the base only).
CROSSED = ["base", "fcfs", "closed", "rank_scope", "elastic", "equal_priority"]
# Variations run on every trace; the others on the two large traces and the bulk one.
ALL_TRACES_VARIATIONS = ["base", "fcfs", "closed", "no_skip"]


def runs(trace_names: list[str]) -> list[tuple[str, str, dict[str, str]]]:
    """(run name, trace name, settings) of every run of the check."""
    out = []
    big = [t for t in trace_names if t in ("random_w", "stream_w", "bulk")]
    for var, sets in VARIATIONS.items():
        names = trace_names if var in ALL_TRACES_VARIATIONS else big
        for t in names:
            out.append((f"{t}__{var}", t, {**BASE, **sets}))
    for preset in PRESETS:
        for ranks, channels in ORGANISATIONS:
            for var in CROSSED:
                if (preset, ranks, channels) == (BASE["dram.preset"], 1, 1):
                    continue  # the variations above
                sets = {
                    "dram.preset": preset,
                    "dram.ranks": str(ranks),
                    "dram.channels": str(channels),
                    **VARIATIONS[var],
                }
                if preset.startswith("PCM"):
                    sets["controller.refresh.policy"] = "none"  # no REF command
                    if var == "elastic":
                        continue
                for t in ("random_w", "stream_w", "bulk"):
                    if t not in trace_names:
                        continue
                    if preset.startswith("PCM_CMMP") and t == "bulk":
                        continue  # its bulk work is the hybrid memory's, not trace replay's
                    out.append((f"{t}__{preset}_r{ranks}c{channels}_{var}", t, sets))
    return out


def strip_host(value):
    """The stats without host figures (wall time, host memory), which vary run to run."""
    if isinstance(value, dict):
        return {k: strip_host(v) for k, v in value.items() if k != "host"}
    if isinstance(value, list):
        return [strip_host(v) for v in value]
    return value


def run_one(out: Path, name: str, trace: Path, sets: dict[str, str]) -> str | None:
    args = [str(DRIVER), str(trace), "native", *(f"{k}={v}" for k, v in sets.items())]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        # An error is a result too: the same error before and after compares equal.
        result = {"error": r.stderr.strip(), "args": args[3:]}
    else:
        result = {"stats": strip_host(json.loads(r.stdout)), "args": args[3:]}
    (out / f"{name}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return None if r.returncode == 0 else name


def run_all(out: Path, jobs: int, only: str | None) -> int:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "bulksim-replay"], cwd=ROOT, check=True
    )
    paths = traces()
    todo = [r for r in runs(list(paths)) if only is None or only in r[0]]
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        failed = [f for f in pool.map(lambda r: run_one(out, r[0], paths[r[1]], r[2]), todo) if f is not None]
    print(f"{len(todo)} runs written to {out}; {len(failed)} ended in an error (kept as results)")
    for f in failed[:10]:
        print(f"  error: {f}")
    return 0


def differing_keys(a, b, prefix: str = "") -> list[str]:
    """Paths of the leaves that differ between two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(set(a) | set(b))
        return [p for k in keys for p in differing_keys(a.get(k), b.get(k), f"{prefix}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            p
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for p in differing_keys(x, y, f"{prefix}[{i}]")
        ]
    return [] if a == b else [prefix or "."]


def compare(before: Path, after: Path) -> int:
    names = sorted({p.name for p in before.glob("*.json")} | {p.name for p in after.glob("*.json")})
    differ = 0
    for name in names:
        a, b = before / name, after / name
        if not a.exists() or not b.exists():
            differ += 1
            print(f"{name}: only in {before if a.exists() else after}")
            continue
        if a.read_bytes() == b.read_bytes():
            continue
        differ += 1
        keys = differing_keys(json.loads(a.read_text()), json.loads(b.read_text()))
        print(f"{name}: {', '.join(keys[:5])}{' ...' if len(keys) > 5 else ''}")
    print(f"{len(names)} files, {differ} differ")
    return 1 if differ or not names else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="replay every trace and configuration into DIR")
    r.add_argument("dir", type=Path)
    r.add_argument("--jobs", type=int, default=2, help="runs at once")
    r.add_argument("--only", help="only the runs whose name contains this")
    c = sub.add_parser("compare", help="compare two directories written by run")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        return run_all(args.dir, args.jobs, args.only)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
