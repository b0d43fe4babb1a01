"""The results store: one SQLite file (WAL mode) per experiment, one row per run keyed by a
stable hash of the resolved config, the workload and the bulksim version. Each row holds the
stats JSON, timings, the host, and the error of a failed run. Rows are written as runs finish,
so an interrupted sweep loses nothing finished and a rerun skips what is done.

``load(path)`` returns a pandas DataFrame, one row per finished run, with the experiment's
parameters, every resolved config field (dotted names) and every stat (dotted names) as columns.
"""

from __future__ import annotations

import json
import sqlite3
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FORMAT = "bulksim-results"
SCHEMA_VERSION = 1

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


class ResultsError(ValueError):
    """A results file that cannot be used: corrupt, foreign, or from a newer bulksim."""


class ResultsStore:
    def __init__(self, path: str | Path, create: bool = True):
        self.path = Path(path)
        if not self.path.exists() and not create:
            raise ResultsError(f"{self.path}: no such results file")
        if self.path.exists() and self.path.stat().st_size > 0:
            with open(self.path, "rb") as f:
                if f.read(16) != b"SQLite format 3\x00":
                    raise ResultsError(
                        f"{self.path}: not a SQLite database (corrupt, or another kind of file)"
                    )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self._check_or_init()
        except sqlite3.DatabaseError as e:
            raise ResultsError(f"{self.path}: not a usable SQLite database ({e})") from e

    def _check_or_init(self) -> None:
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "meta" not in tables:
            raise ResultsError(
                f"{self.path}: not a bulksim results database (it has tables {', '.join(sorted(tables))})"
            )
        with self.db:
            self.db.executescript(SCHEMA)
            meta = dict(self.db.execute("SELECT key, value FROM meta"))
            if not meta:
                self.db.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("format", FORMAT), ("schema_version", str(SCHEMA_VERSION))],
                )
                return
        if meta.get("format") != FORMAT:
            raise ResultsError(f"{self.path}: not a bulksim results database (format {meta.get('format')!r})")
        if int(meta.get("schema_version", "0")) > SCHEMA_VERSION:
            raise ResultsError(f"{self.path}: written by a newer bulksim (schema {meta['schema_version']})")

    def done_keys(self) -> set[str]:
        """Keys of runs that finished successfully."""
        return {r[0] for r in self.db.execute("SELECT key FROM runs WHERE status = 'ok'")}

    def put(self, row: dict[str, Any]) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO runs VALUES (:key, :experiment, :workload, :params_json,"
                " :config_toml, :workload_json, :version, :status, :stats_json, :error, :wall_seconds,"
                " :host, :finished_at)",
                row,
            )

    def rows(self, status: str | None = None) -> Iterator[sqlite3.Row]:
        self.db.row_factory = sqlite3.Row
        query = "SELECT * FROM runs" + (" WHERE status = ?" if status else "") + " ORDER BY experiment, key"
        yield from self.db.execute(query, (status,) if status else ())
        self.db.row_factory = None

    def close(self) -> None:
        self.db.close()


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = value


def frame(store: ResultsStore, include_failed: bool = False):
    """Rows of `store` as a DataFrame (see module doc)."""
    import pandas as pd

    records = []
    for row in store.rows(None if include_failed else "ok"):
        rec: dict[str, Any] = {
            "key": row["key"],
            "experiment": row["experiment"],
            "workload": row["workload"],
            "status": row["status"],
            "wall_seconds": row["wall_seconds"],
            "host": row["host"],
            "version": row["version"],
        }
        config: dict[str, Any] = {}
        _flatten("", tomllib.loads(row["config_toml"]), config)
        rec.update(config)
        rec.update(json.loads(row["params_json"]))
        if row["stats_json"]:
            stats: dict[str, Any] = {}
            _flatten("", json.loads(row["stats_json"]), stats)
            rec.update(stats)
        if include_failed:
            rec["error"] = row["error"]
        records.append(rec)
    return pd.DataFrame.from_records(records)


def load(path: str | Path, include_failed: bool = False):
    """A results file as a pandas DataFrame, one row per finished run."""
    store = ResultsStore(path, create=False)
    try:
        return frame(store, include_failed)
    finally:
        store.close()
