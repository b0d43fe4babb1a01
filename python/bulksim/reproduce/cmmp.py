"""`bulksim reproduce cmmp`: concurrent multi-page migration in a hybrid DRAM+PCM memory (seed
004; digest /work/shared/papers/cmmp.md, sections 3-6) beside the paper's prose. Owns the runs
(4 copies of each workload, one per core in its own address space, under cpm, cm, cm_obm and
cm_obm_pd), the ``cmmp_scaled`` preset derived from ``configs/cmmp_table1.toml`` for small
footprints, the rows taken from each run's stats (item 11's metrics, speedup against CPM) and
the means. The paper's SPEC traces are not public: the shared Ramulator and MSC traces run
below the caches on ``cmmp_scaled``, and documented stand-ins (docs/hybrid_workloads.md) run
through the caches; the numbers are theirs, reported as they are (docs/hybrid.md says why
they differ from the paper's)."""

from __future__ import annotations

import glob
import gzip
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from bulksim import api, provenance
from bulksim.analysis import cmmp_metrics
from bulksim.experiment.sweep import die_with_parent
from bulksim.paths import REPO, shared_traces_dir
from bulksim.reproduce.figures import Panel, draw
from bulksim.reproduce.shape import Case, Options, Plan, Reproduction, ReproductionError

#: Table I's system (item 1).
TABLE1 = REPO / "configs" / "cmmp_table1.toml"
MECHANISMS = ("cpm", "cm", "cm_obm", "cm_obm_pd")
BASELINE = "cpm"
#: One copy per core (the paper's rate mode).
COPIES = 4
#: Table I's DRAM (128 MB), what cmmp_scaled scales by.
TABLE1_DRAM_BYTES = 128 << 20
#: Table I's DRAM rows per bank (8 ranks x 8 banks of 4 KB rows: 128 MB).
TABLE1_DRAM_ROWS = 512
#: Table I's PACT and ART entries and ways, and its L2 (8 MB, 16 ways, 64 B lines).
TABLE1_PACT = (8192, 32)
TABLE1_ART = (512, 32)
TABLE1_L2_KB = 8192
L2_WAYS = 16
L2_LINE = 64
#: Instructions per core: warm-up (no stats), then measured (the paper: 5 B + 1 B).
FULL_INSTRUCTIONS = (100_000_000, 100_000_000)
QUICK_INSTRUCTIONS = (10_000_000, 10_000_000)
#: The shared traces run below the caches, by format: (file under shared traces, format,
#: whether the paper has the program).
TRACES = {
    "403.gcc": ("ramulator-cpu/403.gcc.gz", "ramulator-cpu", True),
    "458.sjeng": ("ramulator-cpu/458.sjeng.gz", "ramulator-cpu", True),
    "435.gromacs": ("ramulator-cpu/435.gromacs.gz", "ramulator-cpu", False),
    "445.gobmk": ("ramulator-cpu/445.gobmk.gz", "ramulator-cpu", False),
    "456.hmmer": ("ramulator-cpu/456.hmmer.gz", "ramulator-cpu", False),
    "464.h264ref": ("ramulator-cpu/464.h264ref.gz", "ramulator-cpu", False),
    "comm1": ("msc/comm1", "msc", False),
    "comm2": ("msc/comm2", "msc", False),
}
QUICK_TRACES = ("403.gcc", "458.sjeng")
#: The stand-ins (kind -> the paper's programs it stands for), through the caches.
STANDINS = {
    "fp_stream": "410.bwaves, 434.zeusmp, 436.cactusADM, 437.leslie3d, 459.GemsFDTD",
    "stream_rw": "470.lbm, 433.milc",
    "pointer_chase": "429.mcf, 473.astar",
    "zipf_drift": "450.soplex",
}
QUICK_STANDINS = ("fp_stream", "pointer_chase")
#: A stand-in copy's footprint: 256 MB on cmmp_table1, 16 MB on cmmp_scaled (--quick).
STANDIN_BYTES = 256 << 20
QUICK_STANDIN_BYTES = 16 << 20
#: Table I's core clock (4 GHz): core cycles per ms.
CORE_CYCLES_PER_MS = 4_000_000
#: The per-core IPC each stand-in is measured to run at under CPM, 4 copies (issue 33 item 3;
#: docs/hybrid_workloads.md, "Times become instruction counts", has the measurement): its
#: periods (fp_stream's 10 ms, zipf_drift's 5 ms) become instructions at this IPC, so that they
#: last their time in simulated time, not at IPC 1. On cmmp_table1 (256 MB a copy) and on
#: cmmp_scaled at --quick's 16 MB.
STANDIN_IPC = {"fp_stream": 0.12, "stream_rw": 0.32, "pointer_chase": 0.017, "zipf_drift": 0.038}
QUICK_STANDIN_IPC = {"fp_stream": 0.13, "stream_rw": 0.10, "pointer_chase": 0.036, "zipf_drift": 0.040}


def standin_instructions_per_ms(kind: str, quick_scale: bool) -> int:
    """Instructions a core of stand-in `kind` runs per ms of simulated time: its measured IPC
    (``STANDIN_IPC``, or ``QUICK_STANDIN_IPC`` on cmmp_scaled) x 4 M cycles/ms."""
    ipc = (QUICK_STANDIN_IPC if quick_scale else STANDIN_IPC)[kind]
    return round(ipc * CORE_CYCLES_PER_MS)


#: The paper's prose (Sec. IV), printed beside bulksim's means; nothing is asserted on it.
PAPER = [
    (
        "CM speedup over CPM (mean)",
        "about 1.00 (big losers: 429.mcf, 433.milc, 458.sjeng, 470.lbm, 473.astar > 15% slower)",
    ),
    ("CM+OBM speedup (mean)", "+10%"),
    ("CM+OBM+PD speedup (mean)", "+14%"),
    ("energy, CMMP vs CPM", "-29% (higher for 403.gcc, 450.soplex, 458.sjeng, 473.astar)"),
    ("PCM accesses, CMMP vs CPM", "-25%"),
    ("PCM service time, CM -> CM+OBM", "180 -> 96 ns (OBM winners), 83 -> 79 ns (others)"),
    ("PD effect", "PCM service 70 -> 66 ns; DRAM reads 18% -> 26%"),
]


def footprint_bytes(path: Path, fmt: str) -> int:
    """Distinct 4 KB pages a post-LLC trace touches, in bytes (one copy's footprint)."""
    pages: set[int] = set()
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        for line in f:
            fields = line.split()
            if fmt == "ramulator-cpu":
                addrs = fields[1:3]
            else:  # msc: `<n> R|W <hex address> [<hex pc>]`
                addrs = fields[2:3]
            for a in addrs:
                pages.add(int(a, 0 if a.startswith("0x") else (16 if fmt == "msc" else 10)) >> 12)
    return len(pages) << 12


def scaled(footprint: int) -> tuple[float, list[str]]:
    """``cmmp_scaled`` (item 3) for a copy of `footprint` bytes: DRAM is the largest power of
    two not above it (so each copy overflows DRAM, as the paper's do), and the PACT, ART and
    L2 scale by s = DRAM / 128 MB (ways kept, at least one set). Returns (s, overrides)."""
    if footprint < 4096:
        raise ValueError(f"footprint {footprint} B: below one page")
    dram = min(1 << (footprint.bit_length() - 1), TABLE1_DRAM_BYTES)
    s = dram / TABLE1_DRAM_BYTES
    rows = max(1, round(TABLE1_DRAM_ROWS * s))

    def entries(n: int, ways: int) -> int:
        return max(ways, int(n * s) // ways * ways)

    l2_sets = max(1, int(TABLE1_L2_KB * 1024 * s) // (L2_WAYS * L2_LINE))
    return s, [
        f"memory.device.0.rows={rows}",
        f"dram.rows_per_subarray={min(rows, 512)}",
        f"hybrid.pact_entries={entries(*TABLE1_PACT)}",
        f"hybrid.art_entries={entries(*TABLE1_ART)}",
        f"cache.level.1.size_kb={max(1, l2_sets * L2_WAYS * L2_LINE // 1024)}",
    ]


def select(names, quick: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The traces and stand-ins to run: all of the full or --quick set when `names` is empty,
    else the named workloads (each a shared trace or a stand-in, in the table's order).
    Raises ValueError naming an unknown workload and the known ones."""
    if not names:
        return (QUICK_TRACES, QUICK_STANDINS) if quick else (tuple(TRACES), tuple(STANDINS))
    unknown = [n for n in names if n not in TRACES and n not in STANDINS]
    if unknown:
        raise ValueError(
            f"unknown cmmp workload {unknown[0]!r}: expected one of {', '.join([*TRACES, *STANDINS])}"
        )
    return tuple(t for t in TRACES if t in names), tuple(k for k in STANDINS if k in names)


def _standin_spec(tmp: Path, kind: str, size_bytes: int, instructions: int, quick_scale: bool) -> Path:
    """A stand-in spec for one copy (its instructions cover warm-up and measurement; the
    run wraps it if a core needs more), its periods converted at its measured IPC."""
    return api.write_standin(
        tmp / f"{kind}.toml",
        kind=kind,
        size_mb=size_bytes >> 20,
        instructions=instructions,
        instructions_per_ms=standin_instructions_per_ms(kind, quick_scale),
    )


def cases(
    quick: bool,
    tmp: Path,
    instructions: tuple[int, int],
    traces=None,
    standins=None,
    standin_bytes: int | None = None,
) -> list[dict]:
    """The workloads to run: name, path, format, preset, scale and the overrides the preset
    needs. Missing shared traces are left out and named in ``missing``."""
    out = []
    default_traces, default_standins = select((), quick)
    traces = traces if traces is not None else default_traces
    standins = standins if standins is not None else default_standins
    base = shared_traces_dir()
    for name in traces:
        rel, fmt, in_paper = TRACES[name]
        path = base / rel
        if not path.exists():
            out.append({"workload": name, "missing": os.fspath(path)})
            continue
        s, sets = scaled(footprint_bytes(path, fmt))
        out.append(
            {
                "workload": name,
                "path": os.fspath(path),
                "format": fmt,
                "preset": "cmmp_scaled",
                "scale": s,
                "overrides": sets,
                "source": f"shared trace {rel} (post-LLC, below the caches)",
                "stands_for": name if in_paper else None,
            }
        )
    total = sum(instructions)
    for kind in standins:
        size = standin_bytes or (QUICK_STANDIN_BYTES if quick else STANDIN_BYTES)
        quick_scale = bool(quick or standin_bytes)
        path = _standin_spec(tmp, kind, size, total, quick_scale)
        if quick or standin_bytes:
            s, sets = scaled(size)
            preset = "cmmp_scaled"
        else:
            s, sets, preset = 1.0, [], "cmmp_table1"
        out.append(
            {
                "workload": kind,
                "path": os.fspath(path),
                "format": "standin",
                "preset": preset,
                "scale": s,
                "overrides": sets,
                "source": f"stand-in {kind}, {size >> 20} MB a copy (docs/hybrid_workloads.md)",
                "stands_for": STANDINS[kind],
                # What writes its spec again (a reproduction's case regenerates it in the worker).
                "standin": {
                    "kind": kind,
                    "size_mb": size >> 20,
                    "instructions": total,
                    "instructions_per_ms": standin_instructions_per_ms(kind, quick_scale),
                },
            }
        )
    return out


def measure(case: dict, mechanism: str, instructions: tuple[int, int], extra: tuple[str, ...] = ()) -> dict:
    """One run (in a pool worker): 4 copies of the case's workload under `mechanism`, with
    `extra` overrides last."""
    warmup, measured = instructions
    sets = [
        *case["overrides"],
        *extra,
        f"hybrid.mechanism={mechanism}",
        f"sim.warmup_instructions={warmup}",
        f"sim.measure_instructions={measured}",
        "system.loop_workloads=true",
    ]
    return api.run_workload(TABLE1, workload=case["path"], overrides=sets, copies=COPIES, fmt=case["format"])


def _point_digest(case: dict, mechanism: str, instructions: tuple[int, int]) -> str:
    """A hash of everything one run depends on but the engine: the case (workload, preset,
    scale, overrides; the bytes of its stand-in spec or trace, so a trace copied elsewhere or
    touched is the same run), the mechanism, the instructions, the copies and Table I's file."""
    h = hashlib.sha256()
    ident = {k: case[k] for k in ("workload", "format", "preset", "scale", "overrides")}
    h.update(
        json.dumps(
            {"case": ident, "mechanism": mechanism, "instructions": list(instructions), "copies": COPIES},
            sort_keys=True,
        ).encode()
    )
    with open(case["path"], "rb") as f:
        h.update(hashlib.file_digest(f, "sha256").digest())
    h.update(TABLE1.read_bytes())
    return h.hexdigest()[:16]


def _kept_prefix(case: dict, mechanism: str, instructions: tuple[int, int]) -> str:
    return f"{case['workload']}-{mechanism}-{_point_digest(case, mechanism, instructions)}-"


def run_key(case: dict, mechanism: str, instructions: tuple[int, int]) -> str:
    """A file name for one run's kept stats: the workload, the mechanism, a hash of all else
    the run depends on (``_point_digest``) and the engine that ran it (``engine_id``), so
    another engine's kept run of the same point sits beside it and is never taken."""
    return f"{_kept_prefix(case, mechanism, instructions)}{provenance.engine_id()}.json"


#: A run kept before engine identities: ``WORKLOAD-MECHANISM-<20 hex digits>.json``, keyed on the
#: extension file's bytes; never taken now.
LEGACY_KEPT = re.compile(r".+-[0-9a-f]{20}\.json")


def _other_engines(keep: Path, case: dict, mechanism: str, instructions: tuple[int, int]) -> list[str]:
    """The engines other than this one that kept a run of this point in `keep`, sorted."""
    prefix = _kept_prefix(case, mechanism, instructions)
    engine = provenance.engine_id()
    found = (p.name[len(prefix) : -len(".json")] for p in keep.glob(f"{glob.escape(prefix)}*.json"))
    return sorted(e for e in found if e != engine)


def _keep_run(keep: Path, name: str, stats: api.Stats) -> None:
    """Writes one finished run's stats into `keep` (whole or not at all)."""
    keep.mkdir(parents=True, exist_ok=True)
    tmp = keep / f".{name}.tmp"
    tmp.write_text(
        json.dumps({"engine": provenance.engine_id(), "stats": stats.to_dict(), "summary": stats.summary()})
    )
    tmp.replace(keep / name)


def _kept_run(path: Path) -> api.Stats:
    """A run's stats as `_keep_run` wrote them."""
    kept = json.loads(path.read_text())
    return api.Stats(kept["stats"], kept["summary"])


def run(
    quick: bool = False,
    workers: int | None = None,
    progress=None,
    *,
    instructions: tuple[int, int] | None = None,
    traces=None,
    standins=None,
    standin_bytes: int | None = None,
    keep: Path | None = None,
    force: bool = False,
    on_reuse: Callable[[str], None] | None = None,
) -> tuple[list[dict], list[str]]:
    """Every run on a local process pool; `progress(done, total)` after each. Returns the
    rows and the missing traces. `instructions` (warm-up, measured per core), `traces`,
    `standins` and `standin_bytes` (a copy's footprint, then on cmmp_scaled) replace the
    defaults (tests run less). With `keep`, each finished run's stats are written there as
    it finishes and a later call takes them instead of running again (`run_key`), unless
    `force`: an interrupted reproduction resumes where it stopped. Only runs this engine kept
    are taken; `on_reuse` gets the line saying how many, and how many of the runs made now
    other engines had kept (``provenance.reuse_line``)."""
    instructions = instructions or (QUICK_INSTRUCTIONS if quick else FULL_INSTRUCTIONS)
    with tempfile.TemporaryDirectory(prefix="bulksim-cmmp-") as tmp:
        all_cases = cases(quick, Path(tmp), instructions, traces, standins, standin_bytes)
        missing = [c["missing"] for c in all_cases if "missing" in c]
        runnable = [c for c in all_cases if "missing" not in c]
        points = [(i, m) for i in range(len(runnable)) for m in MECHANISMS]
        names = {(i, m): run_key(runnable[i], m, instructions) for i, m in points} if keep else {}
        stats: dict[tuple[int, str], api.Stats] = {}
        if keep and not force:
            for point, name in names.items():
                if (keep / name).exists():
                    stats[point] = _kept_run(keep / name)
        todo = [p for p in points if p not in stats]
        if keep and on_reuse:
            on_reuse(_reuse(keep, runnable, todo, len(stats), instructions))
        if stats and progress:
            progress(len(stats), len(points))
        if todo:
            _run_points(runnable, todo, instructions, workers, stats, keep, names, progress, len(points))
    rows = []
    for i, case in enumerate(runnable):
        cpm = stats[(i, BASELINE)]
        for m in MECHANISMS:
            rows.append(row(case, stats[(i, m)], cpm))
    return rows, missing


def _reuse(keep: Path, runnable: list[dict], todo, reused: int, instructions: tuple[int, int]) -> str:
    """The line saying what a call took from `keep` and which other engines' runs it does not."""
    others: dict[str, int] = {}
    rerun = 0
    for i, mechanism in todo:
        engines = _other_engines(keep, runnable[i], mechanism, instructions) if keep.is_dir() else []
        rerun += bool(engines)
        for engine in engines:
            others[engine] = others.get(engine, 0) + 1
    line = provenance.reuse_line(provenance.engine_id(), reused, others, rerun)
    legacy = sum(1 for p in keep.glob("*.json") if LEGACY_KEPT.fullmatch(p.name)) if keep.is_dir() else 0
    if legacy:
        line += f"; {keep}: {legacy} kept before engine identities (never taken)"
    return line


def _run_points(runnable, todo, instructions, workers, stats, keep, names, progress, total) -> None:
    """Runs the points `todo` on a local process pool into `stats` (and `keep`)."""
    with ProcessPoolExecutor(
        max_workers=workers or os.cpu_count(), initializer=die_with_parent, initargs=(os.getpid(),)
    ) as pool:
        futures = {pool.submit(measure, runnable[i], m, instructions): (i, m) for i, m in todo}
        try:
            for future in as_completed(futures):
                point = futures[future]
                stats[point] = future.result()
                if keep:
                    _keep_run(keep, names[point], stats[point])
                if progress:
                    progress(len(stats), total)
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def row(case: dict, stats: dict, cpm: dict) -> dict:
    """The issue's row for one run: its fields, then item 11's."""
    r = cmmp_metrics.row(stats, cpm)
    return {
        "workload": case["workload"],
        "mechanism": r.pop("mechanism"),
        "cycles": r.pop("cycles"),
        "energy_nj": r.pop("energy_nj"),
        "dram_fraction": r.pop("dram_fraction"),
        "source": case["source"],
        "stands_for": case["stands_for"],
        "preset": case["preset"],
        "scale": case["scale"],
        **r,
    }


def _ratio_pct(rows: list[dict], key: str, mechanism: str) -> float | None:
    """Mean over workloads of (this mechanism's `key` / CPM's - 1), in percent."""
    by = {(r["workload"], r["mechanism"]): r for r in rows}
    changes = [
        by[(w, mechanism)][key] / by[(w, BASELINE)][key] - 1
        for w in dict.fromkeys(r["workload"] for r in rows)
        if (w, mechanism) in by and by[(w, BASELINE)][key]
    ]
    return 100 * sum(changes) / len(changes) if changes else None


#: The paper's grouping (Sec. IV-B): programs CM slows by more than this against CPM ...
CM_LOSS = 0.15
#: ... and programs CM speeds up (speedup above 1).
#: A mean is flagged as hiding gains and losses when programs on both sides move by more than
#: this fraction (bulksim's threshold).
CANCEL = 0.05


def groups(rows: list[dict]) -> dict:
    """The paper's groups (Sec. IV-B): ``cm_losers`` (CM more than 15% slower than CPM: its
    time above 1.15 times CPM's, speedup below 1 / 1.15) and ``cm_gainers`` (CM faster by
    more than ``CANCEL``, so that noise of a few tenths of a percent is no gain), each with its
    workloads and, per mechanism in the order CPM -> CM -> CM+OBM -> CM+OBM+PD, the group's
    mean speedup, DRAM share of program requests and PCM service time."""
    by = {(r["workload"], r["mechanism"]): r for r in rows}
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    cm = {w: by[(w, "cm")]["speedup"] for w in workloads if (w, "cm") in by}
    members = {
        "cm_losers": [w for w, x in cm.items() if x < 1 / (1 + CM_LOSS)],
        "cm_gainers": [w for w, x in cm.items() if x > 1 + CANCEL],
    }
    out = {}
    for name, ws in members.items():
        per = {}
        for m in MECHANISMS:
            got = [by[(w, m)] for w in ws if (w, m) in by]
            if not got:
                continue
            per[m] = {
                key: sum(r[key] for r in got) / len(got) for key in ("speedup", "dram_fraction", "pcm_avg_ns")
            }
        out[name] = {"workloads": ws, "by_mechanism": per}
    return out


def cancellations(rows: list[dict], threshold: float = CANCEL) -> dict:
    """Per mechanism against CPM: how many workloads gain and lose more than `threshold`, and
    whether the mean speedup is a cancellation of both (``hides``)."""
    out = {}
    for m in MECHANISMS[1:]:
        sp = [r["speedup"] for r in rows if r["mechanism"] == m]
        gain = sum(x > 1 + threshold for x in sp)
        lose = sum(x < 1 - threshold for x in sp)
        out[m] = {"gain": gain, "lose": lose, "hides": gain > 0 and lose > 0}
    return out


def summary(rows: list[dict]) -> dict:
    """bulksim's means beside the paper's prose, the paper's groups and the cancellations."""
    speed = cmmp_metrics.summarize(rows, "speedup")
    out = {"speedup": speed, "groups": groups(rows), "cancellations": cancellations(rows)}
    for key in ("energy_nj", "pcm_accesses"):
        out[f"{key}_change_pct"] = {m: _ratio_pct(rows, key, m) for m in MECHANISMS[1:]}
    for key in ("pcm_avg_ns", "dram_read_fraction"):
        out[f"{key}_mean"] = {
            m: sum(r[key] for r in rows if r["mechanism"] == m)
            / max(1, sum(r["mechanism"] == m for r in rows))
            for m in MECHANISMS
        }
    return out


def render(rows: list[dict], missing: list[str]) -> str:
    """The rows as a table, then bulksim's means beside the paper's prose."""
    lines = [
        f"{'workload':14} {'preset':12} {'s':>7} {'mechanism':10} {'cycles':>12} {'speedup':>8} "
        f"{'energy nJ':>12} {'DRAM frac':>9} {'PCM ns':>7} {'DRAM ns':>7} {'migr.':>6} {'blocks':>8}"
    ]
    for r in rows:
        lines.append(
            f"{r['workload']:14} {r['preset']:12} {r['scale']:7.4f} {r['mechanism']:10} {r['cycles']:12,} "
            f"{r['speedup']:8.3f} {r['energy_nj']:12,.0f} {r['dram_fraction']:9.3f} {r['pcm_avg_ns']:7.1f} "
            f"{r['dram_avg_ns']:7.1f} {r['migrations_started']:6} {r['blocks_copied']:8,}"
        )
    s = summary(rows)
    lines.append("")
    lines.append(
        "bulksim's means over the workloads above (stand-ins and other traces, not the paper's programs):"
    )
    for m, v in s["speedup"].items():
        line = f"  speedup over CPM, {m:10}: arithmetic {v['arith']:.3f}, geometric {v['geo']:.3f}"
        c = s["cancellations"].get(m)
        if c and c["hides"]:
            pct = round(100 * CANCEL)
            line += f"; mean hides: {c['gain']} programs gain > {pct}%, {c['lose']} lose > {pct}%"
        lines.append(line)
    for m in MECHANISMS[1:]:
        e, p = s["energy_nj_change_pct"][m], s["pcm_accesses_change_pct"][m]
        if e is not None and p is not None:
            lines.append(f"  vs CPM, {m:10}: energy {e:+.1f}%, PCM accesses {p:+.1f}%")
    for m in MECHANISMS:
        lines.append(
            f"  {m:10}: mean PCM service {s['pcm_avg_ns_mean'][m]:.1f} ns, "
            f"DRAM share of reads {100 * s['dram_read_fraction_mean'][m]:.1f}%"
        )
    lines.append("")
    lines.append(
        f"The paper's groups (Sec. IV-B): CM more than {round(100 * CM_LOSS)}% slower than CPM "
        f"(time), and CM more than {round(100 * CANCEL)}% faster; group means"
    )
    for name, label in (("cm_losers", "CM loses"), ("cm_gainers", "CM gains")):
        g = s["groups"][name]
        lines.append(f"  {label}: {', '.join(g['workloads']) or 'none'}")
        for m, v in g["by_mechanism"].items():
            lines.append(
                f"    {m:10}: speedup {v['speedup']:.3f}, DRAM share {100 * v['dram_fraction']:.1f}%, "
                f"PCM service {v['pcm_avg_ns']:.1f} ns"
            )
    lines.append("")
    lines.append("The paper's prose (Sec. IV; its programs, not these):")
    for what, value in PAPER:
        lines.append(f"  {what}: {value}")
    for m in missing:
        lines.append(f"missing trace, skipped: {m}")
    return "\n".join(lines)


def write_json(rows: list[dict], missing: list[str], path: str | os.PathLike[str]) -> None:
    """The rows as indented JSON (`--json FILE`), with the missing traces."""
    Path(path).write_text(
        json.dumps({"rows": rows, "missing": missing, "summary": summary(rows)}, indent=2) + "\n"
    )


#: The sensitivity table (issue 33 item 4): CPM's hand-off in us ...
SENSITIVITY_HAND_OFF_US = (0, 2, 5, 10)
#: ... and CM's copy priority and copies in flight per device.
SENSITIVITY_CM = (("low", 8), ("low", 64), ("equal", 8), ("equal", 64))
SENSITIVITY_WORKLOADS = ("pointer_chase", "fp_stream", "comm1", "403.gcc")
#: Its reduced length (warm-up, measured instructions per core; stand-ins at --quick's 16 MB
#: on cmmp_scaled) so that the 32 runs end within about 30 minutes on a loaded 2-core host; and
#: --quick's, for a look in a few minutes.
SENSITIVITY_INSTRUCTIONS = (2_000_000, 8_000_000)
QUICK_SENSITIVITY_INSTRUCTIONS = (500_000, 1_000_000)


def hand_off_overrides(us: float) -> tuple[str, ...]:
    """CPM's serial hand-off of `us` microseconds on its chain: the set-up `us`, the flush at
    Table I's per-line times; at 0 the flush too is free. The remap's TLB shootdown is left
    at its default for every run: it stalls every mechanism's cores alike, so sweeping it for
    CPM alone would make the comparison lopsided."""
    sets = [f"hybrid.cpm_setup_ns={round(us * 1000)}"]
    if us == 0:
        sets += ["hybrid.cpm_flush_dram_line_ns=0", "hybrid.cpm_flush_pcm_line_ns=0"]
    return tuple(sets)


def sensitivity_points() -> list[tuple[str, tuple[str, ...], str]]:
    """(label, overrides, mechanism) of every run of one workload: CPM at each hand-off, CM at
    each copy priority and bound."""
    points = [(f"cpm {us} us", hand_off_overrides(us), "cpm") for us in SENSITIVITY_HAND_OFF_US]
    for priority, bound in SENSITIVITY_CM:
        points.append(
            (
                f"cm {priority} {bound}",
                (f"hybrid.copy_priority={priority}", f"hybrid.copies_in_flight={bound}"),
                "cm",
            )
        )
    return points


def sensitivity(
    quick: bool = False,
    workers: int | None = None,
    progress=None,
    *,
    instructions: tuple[int, int] | None = None,
    workloads=SENSITIVITY_WORKLOADS,
) -> tuple[list[dict], list[str]]:
    """Runs the sensitivity table (every workload x ``sensitivity_points``) on a local pool.
    Returns one row per run (workload, label, mechanism, speedups against each CPM hand-off,
    migrations started per period, PCM service time, DRAM share) and the missing traces."""
    instructions = instructions or (QUICK_SENSITIVITY_INSTRUCTIONS if quick else SENSITIVITY_INSTRUCTIONS)
    traces, standins = select(workloads, quick=True)
    with tempfile.TemporaryDirectory(prefix="bulksim-cmmp-sens-") as tmp:
        all_cases = cases(True, Path(tmp), instructions, traces, standins)
        missing = [c["missing"] for c in all_cases if "missing" in c]
        runnable = [c for c in all_cases if "missing" not in c]
        points = sensitivity_points()
        todo = [(i, j) for i in range(len(runnable)) for j in range(len(points))]
        stats: dict[tuple[int, int], api.Stats] = {}
        with ProcessPoolExecutor(
            max_workers=workers or os.cpu_count(), initializer=die_with_parent, initargs=(os.getpid(),)
        ) as pool:
            futures = {
                pool.submit(measure, runnable[i], points[j][2], instructions, points[j][1]): (i, j)
                for i, j in todo
            }
            for future in as_completed(futures):
                stats[futures[future]] = future.result()
                if progress:
                    progress(len(stats), len(todo))
    return sensitivity_rows(runnable, stats), missing


def sensitivity_rows(runnable: list[dict], stats: dict[tuple[int, int], dict]) -> list[dict]:
    """The sensitivity table's rows from each run's stats, keyed (workload index, point index)."""
    points = sensitivity_points()
    rows = []
    cpm_labels = [p[0] for p in points if p[2] == "cpm"]
    for i, case in enumerate(runnable):
        cpm_stats = {points[j][0]: stats[(i, j)] for j in range(len(points)) if points[j][2] == "cpm"}
        for j, (label, _, mechanism) in enumerate(points):
            r = cmmp_metrics.row(stats[(i, j)])
            rows.append(
                {
                    "workload": case["workload"],
                    "label": label,
                    "mechanism": mechanism,
                    "speedup_vs": {c: cmmp_metrics.speedup(stats[(i, j)], cpm_stats[c]) for c in cpm_labels},
                    "migrations_per_period": r["migrations_started"] / max(1, r["periods"]),
                    "pcm_avg_ns": r["pcm_avg_ns"],
                    "dram_fraction": r["dram_fraction"],
                }
            )
    return rows


def render_sensitivity(rows: list[dict], missing: list[str], instructions: tuple[int, int]) -> str:
    """The sensitivity table: per workload and run, its speedup against CPM at each hand-off,
    migrations started per period, PCM service time and DRAM share."""
    cpm_labels = [f"cpm {us} us" for us in SENSITIVITY_HAND_OFF_US]
    head = " ".join(f"{'vs ' + c[4:]:>9}" for c in cpm_labels)
    lines = [
        f"CMMP sensitivity ({instructions[0]:,} + {instructions[1]:,} instructions per core, "
        "stand-ins 16 MB a copy on cmmp_scaled); speedup against CPM at each hand-off",
        f"{'workload':14} {'run':14} {head} {'migr/period':>11} {'PCM ns':>7} {'DRAM share':>10}",
    ]
    for r in rows:
        sp = " ".join(f"{r['speedup_vs'][c]:9.3f}" for c in cpm_labels)
        lines.append(
            f"{r['workload']:14} {r['label']:14} {sp} {r['migrations_per_period']:11.1f} "
            f"{r['pcm_avg_ns']:7.1f} {100 * r['dram_fraction']:9.1f}%"
        )
    for m in missing:
        lines.append(f"missing trace, skipped: {m}")
    return "\n".join(lines)


# The reproduction in the one shape (bulksim/reproduce/shape.py): each (workload, mechanism)
# run one case, stored in the results store and resumed by the runner.

#: A case's fields that name its workload (the rows take them back from the arguments).
CASE_FIELDS = ("workload", "format", "preset", "scale", "overrides", "source", "stands_for")


def _case_args(
    case: dict, mechanism: str, instructions: tuple[int, int], extra: tuple[str, ...] = ()
) -> dict:
    """A run as a case's JSON arguments: the workload's fields, a trace by its path and the
    hash of its bytes, a stand-in by the parameters of its spec, the mechanism, the
    instructions, the extra overrides and Table I's file (by its bytes)."""
    args = {k: case[k] for k in CASE_FIELDS}
    if "standin" in case:
        args["standin"] = case["standin"]
    else:
        with open(case["path"], "rb") as f:
            args["trace"] = {"path": case["path"], "sha256": hashlib.file_digest(f, "sha256").hexdigest()}
    table1 = hashlib.sha256(TABLE1.read_bytes()).hexdigest()
    return {
        **args,
        "mechanism": mechanism,
        "instructions": list(instructions),
        "extra": list(extra),
        "table1": table1,
    }


def run_case(args: dict, inputs: Path) -> dict:
    """One case (in a worker): the stand-in's spec written again (a small file), or the trace,
    run with the case's mechanism; its stats."""
    case = {k: args[k] for k in CASE_FIELDS}
    extra, instructions = tuple(args["extra"]), (args["instructions"][0], args["instructions"][1])
    if "standin" not in args:
        case["path"] = args["trace"]["path"]
        return measure(case, args["mechanism"], instructions, extra).to_dict()
    with tempfile.TemporaryDirectory(prefix="bulksim-cmmp-") as tmp:
        spec = args["standin"]
        case["path"] = os.fspath(api.write_standin(Path(tmp) / f"{spec['kind']}.toml", **spec))
        return measure(case, args["mechanism"], instructions, extra).to_dict()


class Cmmp(Reproduction):
    name = "cmmp"
    title = (
        "CMMP Sec. IV: CPM, CM, CM+OBM, CM+OBM+PD on a hybrid DRAM+PCM memory, 4 copies per workload"
        " (shared traces on cmmp_scaled, stand-ins on cmmp_table1)"
    )
    paper = "CMMP (seed 004), Sec. IV; digest /work/shared/papers/cmmp.md"

    def plan(self, options: Options) -> Plan:
        """The main table's runs (each workload under each mechanism), or with
        ``options.sensitivity`` the sensitivity table's (``sensitivity_points``)."""
        if options.sensitivity:
            chosen = options.workloads or SENSITIVITY_WORKLOADS
            traces, standins = _select(chosen, True)
            instructions = QUICK_SENSITIVITY_INSTRUCTIONS if options.quick else SENSITIVITY_INSTRUCTIONS
            quick = True
        else:
            traces, standins = _select(options.workloads, options.quick)
            instructions = QUICK_INSTRUCTIONS if options.quick else FULL_INSTRUCTIONS
            quick = options.quick
        with tempfile.TemporaryDirectory(prefix="bulksim-cmmp-") as tmp:
            all_cases = cases(quick, Path(tmp), instructions, traces, standins)
        missing = [c["missing"] for c in all_cases if "missing" in c]
        runnable = [c for c in all_cases if "missing" not in c]
        if options.sensitivity:
            points = sensitivity_points()
            found = [
                Case(f"{c['workload']}-{label}", run_case, _case_args(c, mechanism, instructions, extra))
                for c in runnable
                for label, extra, mechanism in points
            ]
        else:
            found = [
                Case(f"{c['workload']}-{m}", run_case, _case_args(c, m, instructions))
                for c in runnable
                for m in MECHANISMS
            ]
        context = {"runnable": runnable, "instructions": instructions}
        return Plan(found, missing=missing, context=context)

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        runnable = plan.context["runnable"]
        if options.sensitivity:
            return sensitivity_rows(
                runnable,
                {
                    (i, j): stats[f"{c['workload']}-{p[0]}"]
                    for i, c in enumerate(runnable)
                    for j, p in enumerate(sensitivity_points())
                },
            )
        out = []
        for case in runnable:
            cpm = stats[f"{case['workload']}-{BASELINE}"]
            out.extend(row(case, stats[f"{case['workload']}-{m}"], cpm) for m in MECHANISMS)
        return out

    def summary(self, rows: list[dict], options: Options) -> dict:
        return {} if options.sensitivity else summary(rows)

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        if options.sensitivity:
            return render_sensitivity(rows, plan.missing, plan.context["instructions"])
        return render(rows, plan.missing)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """Section IV as bars, per workload (no mean over workloads): each mechanism's speedup over
        CPM (of the mean cycles per core, as the title says), its energy over CPM's and its mean
        PCM access time. The paper states its results in prose (printed under the table), so
        there are no paper bars. The sensitivity table
        (``--sensitivity``, rows without a mechanism) has no figure."""
        if not rows or any("mechanism" not in r for r in rows):
            return []
        workloads = list(dict.fromkeys(r["workload"] for r in rows))
        at = {(r["workload"], r["mechanism"]): r for r in rows}
        mechanisms = [m for m in MECHANISMS if any(r["mechanism"] == m for r in rows)]

        def column(mechanism: str, value) -> list[float | None]:
            return [
                value(at[(w, mechanism)], at.get((w, BASELINE))) if (w, mechanism) in at else None
                for w in workloads
            ]

        def energy_ratio(r: dict, cpm: dict | None) -> float | None:
            return r["energy_nj"] / cpm["energy_nj"] if cpm and cpm["energy_nj"] else None

        panels = [
            Panel(
                "speedup",
                workloads,
                {m: column(m, lambda r, _: r["speedup"]) for m in mechanisms},
                "speedup over CPM (ratio)",
            ),
            Panel(
                "energy",
                workloads,
                {m: column(m, energy_ratio) for m in mechanisms},
                "energy / CPM's (ratio)",
            ),
            Panel(
                "PCM access time",
                workloads,
                {m: column(m, lambda r, _: r["pcm_avg_ns"]) for m in mechanisms},
                "mean PCM access time (ns)",
            ),
        ]
        title = (
            "CMMP Section IV: 4 copies per workload; speedup = CPM's mean cycles per core over the"
            " mechanism's (the mean over the copies' cores)"
            "\n(the paper states its results in prose: see the table)"
        )
        return [draw(out / f"{self.name}-sec4.png", title, panels)]


def _select(workloads, quick: bool):
    """``select``, an unknown name being bad input (one line naming it)."""
    try:
        return select(workloads, quick)
    except ValueError as e:
        raise ReproductionError(str(e)) from e


REPRODUCTION = Cmmp()
