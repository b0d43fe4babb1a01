"""The one runner of every reproduction: it plans the cases, takes those this engine already
ran from the results store (unless ``force``), runs the rest on one local process pool (or in
this process with one worker) or on a Dask scheduler, stores each run's stats as it finishes,
then derives the rows, the summary and the table. A progress bar (tqdm) counts the runs when
stderr is a terminal, and otherwise a line every ``PROGRESS_SECONDS`` does.

Runs are rows of the results store (``experiment/results.py``): experiment = the reproduction's name,
workload = ``NAME:CASE``, the key a hash of the case's call and arguments and the engine's
identity (``provenance.engine_id``), so a rebuilt engine runs every case again and an
interrupted reproduction loses no finished run. ``Outcome.to_json`` is the schema ``--json``
writes: ``{reproduction, engine, cases, rows, summary, missing, paper}``."""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bulksim import provenance
from bulksim.experiment.results import ResultsStore, run_key
from bulksim.reproduce.shape import Case, Options, Reproduction

#: Seconds between two progress lines when stderr is not a terminal.
PROGRESS_SECONDS = 10.0


@dataclass
class Outcome:
    """What a reproduction produced: its rows, summary and table, which cases ran and which
    were reused from the store (``ran`` and ``reused`` count them)."""

    reproduction: str
    engine: str
    cases: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    missing: list[str]
    paper: dict[str, Any]
    text: str
    ran: int = 0
    reused: int = 0
    figures: list[Path] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (docs/experiments.md, "The JSON of a reproduction")."""
        return {
            "reproduction": self.reproduction,
            "engine": self.engine,
            "cases": self.cases,
            "rows": self.rows,
            "summary": self.summary,
            "missing": self.missing,
            "paper": self.paper,
        }


def _workload(reproduction: str, case: Case) -> dict[str, Any]:
    """The store's description of a case's run (its ``workload_json``)."""
    return {"name": f"{reproduction}:{case.key}", **case.identity()}


def run_case(
    call: Callable[[dict[str, Any], Path], dict[str, Any]],
    args: dict[str, Any],
    inputs: str,
    engine: str | None = None,
):
    """One case (in a worker): its stats and the seconds it took. A worker whose engine is not
    `engine` (a Dask worker built from other sources) fails instead of returning stats that
    would be stored under another engine's key."""
    if engine is not None and provenance.engine_id() != engine:
        raise RuntimeError(
            f"this worker runs engine {provenance.engine_id()}, the reproduction engine {engine}: "
            "install the same bulksim build on every worker"
        )
    started = time.time()
    stats = call(args, Path(inputs))
    return stats, time.time() - started


class Progress:
    """Runs done out of the total: a tqdm bar on a terminal, else a line every PROGRESS_SECONDS
    (from a timer thread, so that a log shows the reproduction alive during a long run)."""

    def __init__(self, name: str, total: int, reused: int, seconds: float = PROGRESS_SECONDS):
        self.name, self.total, self.done = name, total, reused
        self.started = time.monotonic()
        self.bar = None
        self.stop = threading.Event()
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=reused, desc=name, unit="run", dynamic_ncols=True)
        elif self.done < total:
            threading.Thread(target=self._lines, args=(seconds,), daemon=True).start()

    def _lines(self, seconds: float) -> None:
        while not self.stop.wait(seconds):
            self.line()

    def line(self) -> None:
        elapsed = time.monotonic() - self.started
        print(f"{self.name}: {self.done}/{self.total} runs ({elapsed:.0f} s)", file=sys.stderr, flush=True)

    def step(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        self.stop.set()
        if self.bar is not None:
            self.bar.close()
        elif self.done == self.total and self.total:
            self.line()


def reproduce(
    reproduction: Reproduction,
    options: Options,
    results: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    force: bool = False,
    figures: str | Path | None = None,
) -> Outcome:
    """Runs `reproduction` for `options`, resuming from the store `results` (see module doc),
    and draws its figures into the directory `figures` if one is given (``--plot``)."""
    engine = provenance.engine_id()
    store = ResultsStore(results)
    inputs = str(Path(results).resolve().parent / "inputs")
    try:
        plan = reproduction.plan(options)
        keys = [c.key for c in plan.cases]
        if len(set(keys)) != len(keys):
            raise RuntimeError(f"{reproduction.name}: two cases share a key")  # a bug, not bad input
        run_keys = {c.key: run_key("", _workload(reproduction.name, c), engine) for c in plan.cases}
        stored = {} if force else store.stats_by_key(run_keys.values())
        stats = {c.key: stored[run_keys[c.key]] for c in plan.cases if run_keys[c.key] in stored}
        todo = [c for c in plan.cases if c.key not in stats]
        progress = Progress(reproduction.name, len(plan.cases), len(stats))
        reused = len(stats)

        def record(case: Case, result: dict[str, Any], seconds: float) -> None:
            store.put(_row(reproduction.name, case, run_keys[case.key], engine, result, seconds))
            stats[case.key] = result
            progress.step()

        try:
            if scheduler:
                _run_dask(scheduler, todo, inputs, record, engine)
            else:
                _run_local(workers or os.cpu_count() or 1, todo, inputs, record)
        finally:
            progress.close()
    finally:
        store.close()
    ran = {c.key for c in todo}
    rows = reproduction.rows(plan, stats, options)
    summary = reproduction.summary(rows, options)
    drawn = reproduction.figures(rows, Path(figures)) if figures is not None else []
    return Outcome(
        reproduction=reproduction.name,
        engine=engine,
        cases=[{"key": c.key, **c.identity(), "reused": c.key not in ran} for c in plan.cases],
        rows=rows,
        summary=summary,
        missing=plan.missing,
        paper={"reference": reproduction.paper, "values": reproduction.paper_values()},
        text=reproduction.render(rows, summary, plan, options),
        ran=len(todo),
        reused=reused,
        figures=drawn,
    )


def _row(name: str, case: Case, key: str, engine: str, stats: dict[str, Any], seconds: float) -> dict:
    """A results-store row for a finished case (``results.RUN_COLUMNS``)."""
    return {
        "key": key,
        "experiment": name,
        "workload": f"{name}:{case.key}",
        # Only the case's name: its arguments are in workload_json, and as columns they could
        # clash with a stat of the same name when the file is loaded.
        "params_json": json.dumps({"case": case.key}),
        "config_toml": "",
        "workload_json": json.dumps(_workload(name, case), sort_keys=True),
        "version": engine,
        "status": "ok",
        "stats_json": json.dumps(stats),
        "error": None,
        "wall_seconds": seconds,
        "host": socket.gethostname(),
        "finished_at": time.time(),
    }


def _run_local(workers: int, todo: list[Case], inputs: str, record) -> None:
    """The cases in this process (one worker) or on a process pool whose workers die with it."""
    if workers <= 1 or len(todo) <= 1:
        for case in todo:
            record(case, *run_case(case.call, case.args, inputs))
        return
    from bulksim.experiment.sweep import _stop_workers, die_with_parent

    pool = cf.ProcessPoolExecutor(
        max_workers=min(workers, len(todo)), initializer=die_with_parent, initargs=(os.getpid(),)
    )
    try:
        futures = {pool.submit(run_case, c.call, c.args, inputs): c for c in todo}
        for future in cf.as_completed(futures):
            record(futures[future], *future.result())
    except BaseException:
        _stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _run_dask(scheduler: str, todo: list[Case], inputs: str, record, engine: str) -> None:
    """The cases on the Dask scheduler at `scheduler` (its workers must run this engine)."""
    if not todo:
        return
    from distributed import Client, as_completed

    from bulksim.experiment.sweep import SchedulerError

    try:
        client = Client(scheduler, timeout="20s")
    except (ValueError, OSError, TimeoutError) as e:
        raise SchedulerError(f"--scheduler {scheduler}: cannot connect to a Dask scheduler ({e})") from e
    with client:
        futures = {client.submit(run_case, c.call, c.args, inputs, engine, pure=False): c for c in todo}
        for future in as_completed(futures):
            record(futures[future], *future.result())


def run_cases(cases: list[Case], workers: int | None, inputs: str | Path) -> dict[str, dict[str, Any]]:
    """Every case's stats by key, on the local pool, with no results store (a module's own
    ``run`` for tests and scripts)."""
    stats: dict[str, dict[str, Any]] = {}

    def record(case: Case, result: dict[str, Any], seconds: float) -> None:
        stats[case.key] = result

    _run_local(workers or os.cpu_count() or 1, cases, str(inputs), record)
    return stats


def write_json(outcome: Outcome, path: str | Path) -> None:
    """``--json FILE``: the outcome's document, indented."""
    Path(path).write_text(json.dumps(outcome.to_json(), indent=2) + "\n")
