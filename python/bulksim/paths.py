"""Where bulksim finds data it does not ship: the shared real traces (read at run time, never
copied into the repository) and the captured workloads of the suite under ``workloads/``."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository when bulksim runs from a checkout (an editable install).
REPO = Path(__file__).resolve().parents[2]


def shared_traces_dir() -> Path:
    """``$BULKSIM_SHARED_TRACES``, else ``shared/traces`` beside the repository or beside a
    folder above it (a git worktree lives deeper than its main checkout)."""
    if "BULKSIM_SHARED_TRACES" in os.environ:
        return Path(os.environ["BULKSIM_SHARED_TRACES"])
    for folder in REPO.parents:
        if (folder / "shared" / "traces").is_dir():
            return folder / "shared" / "traces"
    return REPO.parent / "shared" / "traces"


def captures_dir() -> Path:
    """Where captured workloads live: ``$BULKSIM_CAPTURES``, else ``workloads/captures`` in the
    repository."""
    return Path(os.environ.get("BULKSIM_CAPTURES", REPO / "workloads" / "captures"))
