"""Running an experiment's points: on a local process pool (default: one worker per core) or
on an existing Dask cluster (``scheduler="tcp://host:port"``). Each finished run is written to
the results store as it arrives; a failing point records its error and the sweep goes on;
points this engine (``provenance.engine_id``) already finished are skipped unless ``force``,
and rows of other engines are kept but never reused (``SweepSummary`` counts both). A progress
bar shows done/total, failures and time left.

Points are claimed in the results file before they run, so two sweeps on one file share the
points. SIGINT and SIGTERM stop the workers and keep every finished row; pool workers die with
the sweep even when it is killed with SIGKILL (``die_with_parent``), so nothing is left running.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bulksim import api, provenance
from bulksim.experiment.results import HEARTBEAT_SECONDS, Owner, ResultsError, ResultsStore
from bulksim.experiment.spec import Experiment, Point, materialise


@dataclass
class SweepSummary:
    total: int
    skipped: int
    ok: int
    failed: int
    failures: list[tuple[str, str]]
    seconds: float
    elsewhere: int = 0  # points another sweep on the same results file was running
    engine: str = ""  # the engine that ran this sweep (provenance.engine_id)
    #: Points this sweep ran that other engines had finished (their rows kept, not reused),
    #: and how many of them each of those engines had finished.
    rerun_other_engines: int = 0
    other_engines: dict[str, int] = field(default_factory=dict)


def _point_columns(point: Point) -> tuple[str, str]:
    """The columns that name a point whatever engine ran it: params_json and workload_json."""
    return json.dumps(dict(point.params), sort_keys=True), json.dumps(dict(point.workload), sort_keys=True)


def _row(point: Point, key: str, config_toml: str, engine: str) -> dict[str, Any]:
    """A results row for `point` (`key` and `config_toml` as the sweep resolved them, for
    `engine`) with everything but the outcome filled in."""
    params_json, workload_json = _point_columns(point)
    return {
        "key": key,
        "experiment": point.experiment,
        "workload": point.workload_name,
        "params_json": params_json,
        "config_toml": config_toml,
        "workload_json": workload_json,
        "version": engine,
        "status": "ok",
        "stats_json": None,
        "error": None,
        "wall_seconds": 0.0,
        "host": socket.gethostname(),
        "finished_at": time.time(),
    }


def run_point(point: Point, row: dict[str, Any], cache_dir: str) -> dict[str, Any]:
    """Runs one point (in a worker) and returns its results row, `row` (``_row``) with the
    outcome filled in; never raises. A worker whose engine is not the sweep's (``row``'s
    ``version``: a Dask worker built from other sources) records an error instead of results
    under a key that names another engine."""
    started = time.time()
    row = dict(row, host=socket.gethostname())
    try:
        if provenance.engine_id() != row["version"]:
            raise RuntimeError(
                f"this worker runs engine {provenance.engine_id()}, the sweep engine {row['version']}: "
                "install the same bulksim build on every worker"
            )
        cache = Path(cache_dir)
        if not os.access(cache.parent if not cache.exists() else cache, os.W_OK):
            cache = Path(tempfile.gettempdir()) / "bulksim-traces"
        workload = dict(point.workload)
        if "workload" in workload:  # full system: anything `bulksim run --workload` takes
            stats = api.run_workload(
                point.config_path,
                workload=workload["workload"],
                fmt=workload["format"],
                copies=workload["copies"],
                preset=point.preset,
                overrides=point.overrides,
            )
        else:
            trace, fmt = materialise(workload, cache)
            stats = api.run(
                point.config_path,
                trace=trace,
                trace_format=fmt,
                preset=point.preset,
                overrides=point.overrides,
            )
        row["stats_json"] = stats.to_json(indent=None)
    except Exception as e:  # a failing point is recorded, never fatal to the sweep
        row["status"] = "error"
        row["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"
    row["wall_seconds"] = time.time() - started
    row["finished_at"] = time.time()
    return row


def _error_row(row: dict[str, Any], error: BaseException) -> dict[str, Any]:
    """The row of a point whose worker died before returning one."""
    return dict(
        row,
        status="error",
        error=f"worker failed: {type(error).__name__}: {error}",
        host="?",
        finished_at=time.time(),
    )


class SchedulerError(ValueError):
    """The Dask scheduler given cannot be reached; the message names its address."""


class Interrupted(KeyboardInterrupt):
    """The sweep was stopped by a signal (SIGINT or SIGTERM); finished rows are kept. A
    KeyboardInterrupt, so that no ``except Exception`` on the way swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def sweep(
    experiment: Experiment,
    results: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    force: bool = False,
    progress: bool = True,
) -> SweepSummary:
    """Runs every point of `experiment` not yet in `results`; see the module doc. Points another
    sweep on the same results file is running are skipped (``SweepSummary.elsewhere``). SIGINT and
    SIGTERM stop the workers and raise Interrupted (a KeyboardInterrupt)."""
    started = time.time()
    store = ResultsStore(results)
    owner = Owner.current()
    engine = provenance.engine_id()
    keyed: list[tuple[str, Point]] = []
    rows: dict[str, dict[str, Any]] = {}
    for point in experiment.points():
        config_toml = point.resolved_config()
        key = point.key(config_toml)
        keyed.append((key, point))
        rows[key] = _row(point, key, config_toml, engine)
    cache = str(Path(results).resolve().parent / "traces")
    summary = SweepSummary(len(keyed), 0, 0, 0, [], 0.0, engine=engine)
    other_engines = store.other_engines(experiment.name, engine)
    bar = _progress_bar(len(keyed), experiment.name, progress)

    def claim(batch: list[tuple[str, Point]]) -> list[tuple[str, Point]]:
        mine, done, busy = store.claim([k for k, _ in batch], owner, force)
        summary.skipped += done
        summary.elsewhere += busy
        if bar is not None and done + busy:
            bar.update(done + busy)
        claimed = set(mine)
        chosen = [(k, p) for k, p in batch if k in claimed]
        for _, point in chosen:
            engines = other_engines.get(_point_columns(point), [])
            summary.rerun_other_engines += bool(engines)
            for other in engines:
                summary.other_engines[other] = summary.other_engines.get(other, 0) + 1
        return chosen

    def record(row: dict[str, Any], point: Point) -> None:
        store.put(row, owner)
        if row["status"] == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
            summary.failures.append((point.label(), row["error"].splitlines()[0]))
        if bar is not None:
            bar.update(1)
            bar.set_postfix(failed=summary.failed)

    previous = _stop_on_signals()
    try:
        if scheduler:
            _run_dask(scheduler, claim(keyed), rows, cache, record, lambda: store.heartbeat(owner))
        else:
            _run_pool(
                workers or os.cpu_count() or 1,
                keyed,
                rows,
                cache,
                claim,
                record,
                lambda: store.heartbeat(owner),
            )
    finally:
        _restore_signals(previous)
        if bar is not None:
            bar.close()
        try:
            # Claims left behind are taken over anyway once this process is gone.
            with contextlib.suppress(ResultsError):
                store.release(owner)
        finally:
            store.close()
    summary.seconds = time.time() - started
    return summary


def _stop_on_signals() -> dict[int, Any]:
    """SIGINT and SIGTERM raise Interrupted in the main thread, so that the workers are stopped
    and the claims released; returns the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def stop(signum, frame):
        raise Interrupted(signum)

    return {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_signals(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def die_with_parent(parent_pid: int) -> None:
    """Pool worker initializer: the worker gets SIGKILL when its parent dies (Linux
    PR_SET_PDEATHSIG, which even a SIGKILL of the parent triggers), so no worker outlives a
    killed sweep. Elsewhere the worker only checks that its parent is still there."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(1)


def _worker_init(parent_pid: int) -> None:
    """Runs first in every sweep worker: it dies with the sweep, and it ignores SIGINT, so a
    Ctrl-C reaches the sweep, which stops the workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent_pid)


def _stop_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Terminates the pool's worker processes now (running points are abandoned, not recorded)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    deadline = time.monotonic() + 5
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(max(deadline - time.monotonic(), 0))
            if process.is_alive():
                process.kill()
                process.join(1)


def _run_pool(
    workers: int, keyed: list[tuple[str, Point]], rows: dict[str, dict], cache: str, claim, record, heartbeat
) -> None:
    """Runs the points on a local process pool, claiming a few at a time as workers free up, so
    that two sweeps on one results file share the points instead of both running them. `rows`
    holds each key's row as ``run_point`` takes it."""
    queue = list(reversed(keyed))
    in_flight: dict[cf.Future, tuple[str, Point]] = {}
    slots = 2 * workers  # a point waiting for each worker keeps the workers busy
    pool: cf.ProcessPoolExecutor | None = None
    try:
        while queue or in_flight:
            while queue and len(in_flight) < slots:
                batch = [queue.pop() for _ in range(min(slots - len(in_flight), len(queue)))]
                for key, point in claim(batch):
                    if pool is None:
                        pool = cf.ProcessPoolExecutor(
                            max_workers=min(workers, len(keyed)),
                            mp_context=multiprocessing.get_context("spawn"),  # no fork of a threaded process
                            initializer=_worker_init,
                            initargs=(os.getpid(),),
                        )
                    in_flight[pool.submit(run_point, point, rows[key], cache)] = (key, point)
            if not in_flight:
                continue
            finished, _ = cf.wait(in_flight, timeout=HEARTBEAT_SECONDS, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                key, point = in_flight.pop(fut)
                try:
                    row = fut.result()
                except Exception as e:  # the worker process died
                    row = _error_row(rows[key], e)
                record(row, point)
            heartbeat()
    except BaseException:
        if pool is not None:
            with _signals_ignored():  # a second Ctrl-C must not leave workers running
                _stop_workers(pool)
                pool.shutdown(wait=True, cancel_futures=True)
        raise
    if pool is not None:
        pool.shutdown(wait=True)


@contextlib.contextmanager
def _signals_ignored():
    """SIGINT and SIGTERM are ignored inside (main thread only), so cleanup runs to the end."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        _restore_signals(previous)


def _run_dask(
    scheduler: str, todo: list[tuple[str, Point]], rows: dict[str, dict], cache: str, record, heartbeat
) -> None:
    if not todo:
        return
    from distributed import Client
    from distributed import wait as dask_wait

    try:
        client = Client(scheduler, timeout="20s")
    except (ValueError, OSError, TimeoutError) as e:  # a bad address, nothing listening, a timeout
        raise SchedulerError(f"--scheduler {scheduler}: cannot connect to a Dask scheduler ({e})") from e
    with client:
        futures = {
            client.submit(run_point, p, rows[k], cache, pure=False, key=f"bulksim-{k}"): (k, p)
            for k, p in todo
        }
        # Waits at most HEARTBEAT_SECONDS at a time, so the claims stay fresh while long points
        # run (all of them are claimed at once here) and another sweep does not take them over.
        pending = set(futures)
        while pending:
            try:
                done, pending = dask_wait(pending, timeout=HEARTBEAT_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:
                heartbeat()
                continue
            for fut in done:
                key, point = futures[fut]
                try:
                    row = fut.result()
                except Exception as e:
                    row = _error_row(rows[key], e)
                record(row, point)
            heartbeat()


def _progress_bar(total: int, name: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit="run", dynamic_ncols=True)
