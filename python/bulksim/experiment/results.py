"""The results store: one SQLite file (WAL mode) per experiment, one row per run keyed by a
stable hash of the resolved config, the workload and the identity of the engine that ran it
(``provenance.engine_id``, kept in the ``version`` column; rows from before engine identities
hold the bare package version). Each row holds the stats JSON, timings, the host, and the error
of a failed run. Rows are written as runs finish, so an interrupted sweep loses nothing finished
and a rerun skips what this engine has done; rows of other engines are kept, never reused.

``load(path)`` returns a pandas DataFrame, one row per finished run, with the experiment's
parameters, every resolved config field (dotted names) and every stat (dotted names) as columns.
A file that is not bulksim's, of another schema version, corrupt or truncated, and a row that
does not hold together (bad JSON or TOML, a key that does not match, two values for one
column) raise ResultsError naming the file and the row. A ``claims`` table records the points
running sweeps have taken (``ResultsStore.claim``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import socket
import sqlite3
import time
import tomllib
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "bulksim-results"
SCHEMA_VERSION = 1
#: A run's status: finished with stats, or failed with an error.
STATUSES = ("ok", "error")

RUN_COLUMNS = (
    "key",
    "experiment",
    "workload",
    "params_json",
    "config_toml",
    "workload_json",
    "version",
    "status",
    "stats_json",
    "error",
    "wall_seconds",
    "host",
    "finished_at",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    experiment TEXT NOT NULL,
    workload TEXT NOT NULL,
    params_json TEXT NOT NULL,
    config_toml TEXT NOT NULL,
    workload_json TEXT NOT NULL,
    version TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    stats_json TEXT,
    error TEXT,
    wall_seconds REAL NOT NULL,
    host TEXT NOT NULL,
    finished_at REAL NOT NULL
);
"""

#: Points a running sweep has taken, so that a second sweep on the same file skips them. Not
#: part of the results: older files get the table on first use, the schema version is unchanged.
CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started TEXT NOT NULL,
    heartbeat REAL NOT NULL
);
"""

#: A claim whose sweep has not shown a sign of life (a finished point, or every
#: HEARTBEAT_SECONDS while it waits) for this long is taken over; on the same host a claim
#: whose process is gone is taken over at once.
CLAIM_TTL_SECONDS = 300.0
HEARTBEAT_SECONDS = 30.0


class ResultsError(ValueError):
    """A results file that cannot be used: corrupt, foreign, edited, or from a newer bulksim.
    The message names the file and, for a bad row, the row."""


def run_key(config_toml: str, workload: dict[str, Any], version: str) -> str:
    """The key of a run: a stable hash of the resolved config, the workload (a trace file by its
    content, ``trace_sha256``) and the engine's identity (`version`: ``provenance.engine_id``
    for new rows; the hash is unchanged from when it was the package version, so old rows still
    check)."""
    blob = json.dumps({"config": config_toml, "workload": workload, "version": version}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Owner:
    """The sweep that claims points: a unique token, its host, process id and the process's
    start time (so that a reused process id is not taken for the sweep)."""

    token: str
    host: str
    pid: int
    started: str = ""

    @classmethod
    def current(cls) -> Owner:
        host, pid = socket.gethostname(), os.getpid()
        return cls(f"{host}:{pid}:{uuid.uuid4().hex[:12]}", host, pid, _process_started(pid))


def _process_started(pid: int) -> str:
    """The start time of process `pid` (Linux: clock ticks after boot), or "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()  # field 22, counted after the command name
    except (OSError, IndexError, ValueError):
        return ""


def _process_alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    except (OverflowError, ValueError):  # a hand-edited pid
        return False
    now = _process_started(pid)
    return not (started and now and now != started)


# How long opening waits for another sweep creating the same file.
OPEN_WAIT_SECONDS = 30


class ResultsStore:
    """One results file. ``create=False`` opens an existing file for reading and never writes."""

    def __init__(self, path: str | Path, create: bool = True):
        self.path = Path(path)
        if self.path.is_dir():
            raise ResultsError(f"{self.path}: is a directory, not a results file")
        exists = self.path.exists()
        if not exists and not create:
            raise ResultsError(f"{self.path}: no such results file")
        if exists and self.path.stat().st_size > 0:
            try:
                with open(self.path, "rb") as f:
                    header = f.read(16)
            except OSError as e:
                raise ResultsError(f"{self.path}: cannot read: {e.strerror}") from e
            if header != b"SQLite format 3\x00":
                raise ResultsError(f"{self.path}: not a SQLite database (corrupt, or another kind of file)")
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ResultsError(f"{self.path}: cannot create its folder: {e.strerror}") from e
        # Autocommit; writes take explicit BEGIN IMMEDIATE transactions (see _write).
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as e:
            raise ResultsError(f"{self.path}: cannot open: {e}") from e
        try:
            with self._errors("opening"):
                self._open(create)
        except BaseException:
            self.db.close()
            raise

    def _open(self, create: bool) -> None:
        """Switches a new file to WAL and checks (or creates) the schema. Switching the journal
        mode answers "database is locked" at once, without SQLite's busy wait, while another
        sweep is creating the same file: that is retried for up to OPEN_WAIT_SECONDS."""
        deadline = time.monotonic() + OPEN_WAIT_SECONDS
        while True:
            try:
                if create:
                    self.db.execute("PRAGMA journal_mode=WAL")
                self._check_or_init(create)
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turns SQLite's errors (corrupt or truncated file, locked too long) into ResultsError."""
        try:
            yield
        except sqlite3.Error as e:
            raise ResultsError(f"{self.path}: {doing}: {e} (corrupt, truncated or locked file?)") from e

    @contextlib.contextmanager
    def _write(self, doing: str) -> Iterator[None]:
        with self._errors(doing):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _tables(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _check_or_init(self, create: bool) -> None:
        tables = self._tables()
        if not tables:
            if not create:
                raise ResultsError(f"{self.path}: not a bulksim results database (it has no tables)")
            with self._write("creating"):
                # Looked at again inside the write lock: two sweeps starting on one new file
                # at once must not both create it (the second would find the tables there).
                tables = self._tables()
                if not tables:
                    for statement in (SCHEMA + CLAIMS_SCHEMA).split(";"):
                        if statement.strip():
                            self.db.execute(statement)
                    self.db.executemany(
                        "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                        [("format", FORMAT), ("schema_version", str(SCHEMA_VERSION))],
                    )
            if not tables:
                return
        if "meta" not in tables or "runs" not in tables:
            raise ResultsError(
                f"{self.path}: not a bulksim results database (it has tables {', '.join(sorted(tables))})"
            )
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        if meta.get("format") != FORMAT:
            raise ResultsError(f"{self.path}: not a bulksim results database (format {meta.get('format')!r})")
        version = meta.get("schema_version")
        if version != str(SCHEMA_VERSION):
            newer = isinstance(version, str) and version.isdigit() and int(version) > SCHEMA_VERSION
            raise ResultsError(
                f"{self.path}: results schema version {version!r}"
                + (" is from a newer bulksim" if newer else "")
                + f"; this bulksim reads version {SCHEMA_VERSION}"
            )
        columns = [r[1] for r in self.db.execute("PRAGMA table_info(runs)")]
        if sorted(columns) != sorted(RUN_COLUMNS):
            missing = [c for c in RUN_COLUMNS if c not in columns]
            extra = [c for c in columns if c not in RUN_COLUMNS]
            raise ResultsError(
                f"{self.path}: table runs does not have bulksim's columns"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unexpected {', '.join(extra)}" if extra else "")
            )
        self._check_statuses()
        if create and "claims" not in tables:
            with self._write("adding the claims table"):
                self.db.execute(CLAIMS_SCHEMA)

    def _check_statuses(self) -> None:
        """Refuses a file with a row whose status is neither 'ok' nor 'error' (made without the
        CHECK constraint, or edited with it off): such a row is neither a finished run to list
        nor a failed one to leave out, so every open checks all rows, not only those listed."""
        cursor = self.db.cursor()
        cursor.row_factory = sqlite3.Row
        bad = cursor.execute(
            "SELECT rowid, key, status FROM runs WHERE status IS NULL OR status NOT IN ('ok', 'error')"
            " ORDER BY rowid LIMIT 1"
        ).fetchone()
        if bad is not None:
            raise ResultsError(
                f"{self.path}: row {bad['rowid']} (key {bad['key']!r}): status {bad['status']!r}; "
                f"expected one of {', '.join(repr(s) for s in STATUSES)}"
            )

    def done_keys(self) -> set[str]:
        """Keys of runs that finished successfully."""
        with self._errors("reading"):
            return {r[0] for r in self.db.execute("SELECT key FROM runs WHERE status = 'ok'")}

    def stats_by_key(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stats of the successful runs among `keys` (a reproduction's resume)."""
        wanted = set(keys)
        out: dict[str, dict[str, Any]] = {}
        with self._errors("reading"):
            for key, text in self.db.execute("SELECT key, stats_json FROM runs WHERE status = 'ok'"):
                if key in wanted and text is not None:
                    try:
                        out[key] = json.loads(text)
                    except json.JSONDecodeError as e:
                        raise ResultsError(
                            f"{self.path}: run {key!r}: stats_json is not valid JSON ({e})"
                        ) from e
        return out

    def put(self, row: dict[str, Any], owner: Owner | None = None) -> None:
        """Stores a finished run and, in the same transaction, drops `owner`'s claim on it."""
        with self._write("writing a run"):
            self.db.execute(
                "INSERT OR REPLACE INTO runs VALUES (:key, :experiment, :workload, :params_json,"
                " :config_toml, :workload_json, :version, :status, :stats_json, :error, :wall_seconds,"
                " :host, :finished_at)",
                row,
            )
            if owner is not None:
                self.db.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (row["key"], owner.token))

    def claim(self, keys: Iterable[str], owner: Owner, force: bool = False) -> tuple[list[str], int, int]:
        """Claims, for `owner`, those of `keys` that have no successful run (any run, with
        `force`) and no live claim of another sweep. Returns (claimed keys, number already
        done, number claimed by another sweep). Finishing a run and dropping its claim happen in
        one transaction (``put``), so two sweeps never both run a point."""
        keys = list(keys)
        now = time.time()
        with self._write("claiming points"):
            for other, host, pid, started, heartbeat in self.db.execute(
                "SELECT owner, host, pid, started, max(heartbeat) FROM claims GROUP BY owner"
            ).fetchall():
                stale = now - heartbeat > CLAIM_TTL_SECONDS or (
                    host == owner.host and not _process_alive(pid, started)
                )
                if stale and other != owner.token:
                    self.db.execute("DELETE FROM claims WHERE owner = ?", (other,))
            claimed_by = dict(self.db.execute("SELECT key, owner FROM claims"))
            done = (
                set()
                if force
                else {r[0] for r in self.db.execute("SELECT key FROM runs WHERE status = 'ok'")}
            )
            mine, n_done, n_busy = [], 0, 0
            for key in keys:
                if key in done:
                    n_done += 1
                elif claimed_by.get(key, owner.token) != owner.token:
                    n_busy += 1
                else:
                    mine.append(key)
            self.db.executemany(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?)",
                [(k, owner.token, owner.host, owner.pid, owner.started, now) for k in mine],
            )
        return mine, n_done, n_busy

    def heartbeat(self, owner: Owner) -> None:
        """Shows that `owner` is alive, so its claims are not taken over."""
        with self._write("updating claims"):
            self.db.execute("UPDATE claims SET heartbeat = ? WHERE owner = ?", (time.time(), owner.token))

    def release(self, owner: Owner) -> None:
        """Drops `owner`'s remaining claims (points it did not finish)."""
        with self._write("releasing claims"):
            self.db.execute("DELETE FROM claims WHERE owner = ?", (owner.token,))

    def other_engines(self, experiment: str, engine: str) -> dict[tuple[str, str], list[str]]:
        """The points of `experiment` (by ``params_json`` and ``workload_json``) that engines
        other than `engine` finished, each with those engines' identities in sorted order."""
        with self._errors("reading"):
            found = self.db.execute(
                "SELECT DISTINCT params_json, workload_json, version FROM runs"
                " WHERE status = 'ok' AND experiment = ? AND version != ?"
                " ORDER BY params_json, workload_json, version",
                (experiment, engine),
            ).fetchall()
        out: dict[tuple[str, str], list[str]] = {}
        for params_json, workload_json, version in found:
            out.setdefault((params_json, workload_json), []).append(str(version))
        return out

    def rows(self, status: str | None = None) -> list[sqlite3.Row]:
        """The runs (with their rowid), all or those with `status`, in a stable order."""
        query = "SELECT rowid, * FROM runs" + (" WHERE status = ?" if status else "")
        with self._errors("reading"):
            cursor = self.db.cursor()
            cursor.row_factory = sqlite3.Row
            return cursor.execute(query + " ORDER BY experiment, key", (status,) if status else ()).fetchall()

    def close(self) -> None:
        self.db.close()


def flatten_columns(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """Nested tables as dotted column names (`controller.scheduler`) in `out`."""
    if isinstance(value, dict):
        for k, v in value.items():
            flatten_columns(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = value


def _json_object(store: ResultsStore, where: str, column: str, text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        raise ResultsError(f"{store.path}: {where}: {column} is {type(text).__name__}, expected JSON text")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsError(f"{store.path}: {where}: {column} is not valid JSON ({e})") from e
    if not isinstance(value, dict):
        raise ResultsError(f"{store.path}: {where}: {column} is not a JSON object")
    return value


def _set(store: ResultsStore, where: str, rec: dict[str, Any], column: str, value: Any, source: str) -> None:
    """Adds a column to a record; the same column from two sources must agree, never overwrite."""
    if column in rec and not _same(rec[column], value):
        raise ResultsError(
            f"{store.path}: {where}: column '{column}' is {rec[column]!r} in one place and {value!r} in "
            f"{source} (edited by hand?)"
        )
    rec[column] = value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return (
        type(a) is type(b)
        and a == b
        or (isinstance(a, int | float) and isinstance(b, int | float) and a == b)
    )


def _is_number_or_numbers(value: Any) -> bool:
    """A number, or a list of numbers (per-rank stats)."""
    values = value if isinstance(value, list) else [value]
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


@functools.cache
def _numeric_stats() -> dict[str, str]:
    """Documented stats that hold numbers, with their units (names and text excluded)."""
    from bulksim import api

    return {d["name"]: d["unit"] for d in api.stat_docs() if d["unit"] not in ("name", "text")}


def _record(store: ResultsStore, row: sqlite3.Row, include_failed: bool) -> dict[str, Any]:
    """One checked row as a flat record; a row that does not hold together is an error naming it."""
    where = f"row {row['rowid']} (key {row['key']!r})"
    for column, kinds in (
        ("key", str),
        ("experiment", str),
        ("workload", str),
        ("version", str),
        ("host", str),
        ("config_toml", str),
        ("wall_seconds", (int, float)),
        ("finished_at", (int, float)),
    ):
        if not isinstance(row[column], kinds):
            raise ResultsError(
                f"{store.path}: {where}: {column} has the wrong type ({type(row[column]).__name__})"
            )
    if row["status"] not in STATUSES:
        raise ResultsError(
            f"{store.path}: {where}: status {row['status']!r}; expected one of "
            f"{', '.join(repr(s) for s in STATUSES)}"
        )
    rec: dict[str, Any] = {
        "key": row["key"],
        "experiment": row["experiment"],
        "workload": row["workload"],
        "status": row["status"],
        "wall_seconds": row["wall_seconds"],
        "host": row["host"],
        "version": row["version"],
    }
    try:
        config_tree = tomllib.loads(row["config_toml"])
    except tomllib.TOMLDecodeError as e:
        raise ResultsError(f"{store.path}: {where}: config_toml is not valid TOML ({e})") from e
    workload = _json_object(store, where, "workload_json", row["workload_json"])
    if workload.get("name") != row["workload"]:
        raise ResultsError(
            f"{store.path}: {where}: workload {row['workload']!r} but workload_json names "
            f"{workload.get('name')!r}"
        )
    # The key is a hash of the config, the workload and the version: a row edited by hand no
    # longer matches it. (A trace's or a full-system workload's key hashes the file's content,
    # not checked here.)
    keyed_by_bytes = "trace" in workload or "workload" in workload
    if not keyed_by_bytes and run_key(row["config_toml"], workload, row["version"]) != row["key"]:
        raise ResultsError(
            f"{store.path}: {where}: the key does not match the row's config, workload and version "
            "(edited by hand?)"
        )
    config: dict[str, Any] = {}
    flatten_columns("", config_tree, config)
    for column, value in config.items():
        _set(store, where, rec, column, value, "config_toml")
    for column, value in _json_object(store, where, "params_json", row["params_json"]).items():
        _set(store, where, rec, column, value, "params_json")
    if row["status"] == "ok" or row["stats_json"] is not None:
        stats: dict[str, Any] = {}
        flatten_columns("", _json_object(store, where, "stats_json", row["stats_json"]), stats)
        numeric = _numeric_stats()
        for column, value in stats.items():
            if column in numeric and not _is_number_or_numbers(value):
                raise ResultsError(
                    f"{store.path}: {where}: stat {column!r} is {value!r}; expected a number "
                    f"({numeric[column]}) (edited by hand?)"
                )
            if config.get(column) == "auto":
                # A setting the run resolves (`bulk.mechanism = "auto"`): the stat of the
                # same name says what it resolved to, and that is the column.
                rec[column] = value
                continue
            _set(store, where, rec, column, value, "stats_json")
    if include_failed:
        if row["error"] is not None and not isinstance(row["error"], str):
            raise ResultsError(
                f"{store.path}: {where}: error has the wrong type ({type(row['error']).__name__})"
            )
        _set(store, where, rec, "error", row["error"], "error")
    return rec


def frame(store: ResultsStore, include_failed: bool = False):
    """Rows of `store` as a DataFrame (see module doc); a malformed row raises ResultsError."""
    import pandas as pd

    records = []
    for row in store.rows(None if include_failed else "ok"):
        try:
            records.append(_record(store, row, include_failed))
        except RecursionError as e:  # JSON or TOML nested deeper than Python's parsers recurse
            raise ResultsError(
                f"{store.path}: row {row['rowid']} (key {row['key']!r}): a value is nested too deeply"
            ) from e
    return pd.DataFrame.from_records(records)


def load(path: str | Path, include_failed: bool = False):
    """A results file as a pandas DataFrame, one row per finished run."""
    store = ResultsStore(path, create=False)
    try:
        return frame(store, include_failed)
    finally:
        store.close()
