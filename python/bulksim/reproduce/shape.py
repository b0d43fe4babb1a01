"""The one shape of a reproduction (docs/experiments.md, "Reproductions"): a name, the paper it
reproduces and the paper's values, the cases it runs (full and ``--quick``), the rows it derives
from the cases' stats, a summary of the rows, the table's columns and the text of the table.
A case is one engine run: a module-level function (so that a pool worker or a Dask worker can
import it) and its arguments as JSON, which together with the engine's identity key the run's
stored stats (``runner``). The runner, not the reproduction, decides where and whether a case
runs, so every reproduction runs on a pool or a Dask cluster and resumes the same way."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ReproductionError(ValueError):
    """Bad input to a reproduction (an unknown workload name): one line, naming the option."""


@dataclass(frozen=True)
class Options:
    """What the command line chose for a reproduction: ``quick`` (the short run), ``mean``
    (Rank Assignment reproductions: the mean over workloads, "arith" or "geo"), ``workloads``
    (cmmp: only these) and ``sensitivity`` (cmmp: the sensitivity table instead)."""

    quick: bool = False
    mean: str = "arith"
    workloads: tuple[str, ...] = ()
    sensitivity: bool = False


@dataclass(frozen=True)
class Case:
    """One engine run of a reproduction: ``call(args, inputs)`` returns the run's stats (a JSON
    object); ``inputs`` is a folder where the call may keep inputs it generates
    (``provenance.cached_input``) between runs. ``key`` names the case within its reproduction;
    ``args`` must be JSON (they are part of the stored run's key)."""

    key: str
    call: Callable[[dict[str, Any], Path], dict[str, Any]]
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def call_name(self) -> str:
        """``module:function`` of the call, as stored with the run."""
        return f"{self.call.__module__}:{self.call.__qualname__}"

    def identity(self) -> dict[str, Any]:
        """What names the run whatever engine runs it (the store adds the engine)."""
        return {"call": self.call_name, "args": json.loads(json.dumps(self.args, sort_keys=True))}


def fingerprint(path: str | os.PathLike[str]) -> str:
    """A cheap identity of an input file or directory the engine reads (each file's relative
    name, size and modification time, hashed): a case's arguments include it, so that a
    re-captured program or a replaced trace is run again, not taken from the store."""
    root = Path(path)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    entries = []
    for f in files:
        st = f.stat()
        entries.append(
            [os.fspath(f.relative_to(root)) if root.is_dir() else f.name, st.st_size, st.st_mtime_ns]
        )
    return hashlib.sha256(json.dumps(entries).encode()).hexdigest()[:16]


@dataclass
class Plan:
    """A reproduction's cases for some options, and ``missing``: a line for each part it
    cannot run here (an absent shared trace or capture), printed and kept in the JSON."""

    cases: list[Case]
    missing: list[str] = field(default_factory=list)
    #: Anything the rows need that is decided with the cases (a mix's programs, notes).
    context: dict[str, Any] = field(default_factory=dict)


class Reproduction:
    """Base of every reproduction; a subclass sets the class attributes and overrides
    ``plan``, ``rows`` and ``render`` (``summary`` and ``figures`` are optional)."""

    #: The name ``bulksim reproduce NAME`` takes.
    name: str = ""
    #: One line for ``--list``: the paper's figures or tables it reproduces.
    title: str = ""
    #: The paper (authors, venue, year).
    paper: str = ""
    #: The rows' fields the table shows, in its order.
    columns: tuple[str, ...] = ()

    def paper_values(self) -> Any:
        """The paper's values as JSON (numbers where the paper gives them, its words where not)."""
        return None

    def plan(self, options: Options) -> Plan:
        """The cases to run for `options`."""
        raise NotImplementedError

    def rows(self, plan: Plan, stats: dict[str, dict[str, Any]], options: Options) -> list[dict[str, Any]]:
        """The table's rows from each case's stats (``stats[case.key]``)."""
        raise NotImplementedError

    def summary(self, rows: list[dict[str, Any]], options: Options) -> dict[str, Any]:
        """Values derived from all rows (means, improvements), as JSON."""
        return {}

    def render(
        self, rows: list[dict[str, Any]], summary: dict[str, Any], plan: Plan, options: Options
    ) -> str:
        """The printed table."""
        raise NotImplementedError

    def figures(self, rows: list[dict[str, Any]], out: Path) -> list[Path]:
        """Draws the reproduction's figures into `out`; none by default."""
        return []
