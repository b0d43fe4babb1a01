"""Running an experiment's points: on a local process pool (default: one worker per core) or
on an existing Dask cluster (``scheduler="tcp://host:port"``). Each finished run is written to
the results store as it arrives; a failing point records its error and the sweep goes on;
points already in the store are skipped unless ``force``. A progress bar shows done/total,
failures and time left.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import socket
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bulksim import _core, api
from bulksim.experiment import Experiment, Point, materialise
from bulksim.results import ResultsStore


@dataclass
class SweepSummary:
    total: int
    skipped: int
    ok: int
    failed: int
    failures: list[tuple[str, str]]
    seconds: float


def _row(point: Point, key: str) -> dict[str, Any]:
    """A results row for `point` with everything but the outcome filled in."""
    return {
        "key": key,
        "experiment": point.experiment,
        "workload": point.workload_name,
        "params_json": json.dumps(dict(point.params), sort_keys=True),
        "config_toml": "",
        "workload_json": json.dumps(dict(point.workload), sort_keys=True),
        "version": _core.__version__,
        "status": "ok",
        "stats_json": None,
        "error": None,
        "wall_seconds": 0.0,
        "host": socket.gethostname(),
        "finished_at": time.time(),
    }


def run_point(point: Point, cache_dir: str) -> dict[str, Any]:
    """Runs one point (in a worker) and returns its results row; never raises."""
    started = time.time()
    row = _row(point, point.key())
    try:
        row["config_toml"] = api.resolve_config(
            point.config_path, preset=point.preset, overrides=point.overrides
        )
        cache = Path(cache_dir)
        if not os.access(cache.parent if not cache.exists() else cache, os.W_OK):
            cache = Path(tempfile.gettempdir()) / "bulksim-traces"
        trace, fmt = materialise(dict(point.workload), cache)
        stats = api.run(
            point.config_path, trace=trace, trace_format=fmt, preset=point.preset, overrides=point.overrides
        )
        row["stats_json"] = stats.to_json(indent=None)
    except Exception as e:  # a failing point is recorded, never fatal to the sweep
        row["status"] = "error"
        row["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"
    row["wall_seconds"] = time.time() - started
    row["finished_at"] = time.time()
    return row


def _error_row(point: Point, key: str, error: BaseException) -> dict[str, Any]:
    """The row of a point whose worker died before returning one."""
    row = _row(point, key)
    row.update(status="error", error=f"worker failed: {type(error).__name__}: {error}", host="?")
    return row


def sweep(
    experiment: Experiment,
    results: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    force: bool = False,
    progress: bool = True,
) -> SweepSummary:
    """Runs every point of `experiment` not yet in `results`; see the module doc."""
    started = time.time()
    store = ResultsStore(results)
    keyed = [(p.key(), p) for p in experiment.points()]
    done = set() if force else store.done_keys()
    todo = [(k, p) for k, p in keyed if k not in done]
    cache = str(Path(results).resolve().parent / "traces")
    summary = SweepSummary(len(keyed), len(keyed) - len(todo), 0, 0, [], 0.0)
    bar = _progress_bar(len(keyed), summary.skipped, experiment.name, progress)

    def record(row: dict[str, Any], point: Point) -> None:
        store.put(row)
        if row["status"] == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
            summary.failures.append((point.label(), row["error"].splitlines()[0]))
        if bar is not None:
            bar.update(1)
            bar.set_postfix(failed=summary.failed)

    try:
        if not todo:
            pass
        elif scheduler:
            _run_dask(scheduler, todo, cache, record)
        else:
            _run_pool(workers or os.cpu_count() or 1, todo, cache, record)
    finally:
        if bar is not None:
            bar.close()
        store.close()
    summary.seconds = time.time() - started
    return summary


def _run_pool(workers: int, todo: list[tuple[str, Point]], cache: str, record) -> None:
    context = multiprocessing.get_context("spawn")  # no fork of a process holding threads
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(run_point, p, cache): (k, p) for k, p in todo}
        try:
            for fut in cf.as_completed(futures):
                key, point = futures[fut]
                try:
                    row = fut.result()
                except Exception as e:  # the worker process died
                    row = _error_row(point, key, e)
                record(row, point)
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _run_dask(scheduler: str, todo: list[tuple[str, Point]], cache: str, record) -> None:
    from distributed import Client, as_completed

    with Client(scheduler, timeout="20s") as client:
        futures = {
            client.submit(run_point, p, cache, pure=False, key=f"bulksim-{k}"): (k, p) for k, p in todo
        }
        for fut in as_completed(futures):
            key, point = futures[fut]
            try:
                row = fut.result()
            except Exception as e:
                row = _error_row(point, key, e)
            record(row, point)


def _progress_bar(total: int, already: int, name: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=already, desc=name, unit="run", dynamic_ncols=True)
