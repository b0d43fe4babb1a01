"""What made a stored result (docs/experiments.md, "Which engine made a row"). ``engine_id`` is
the one place that says which engine this process runs: the extension's build identity, the
package version and a hash of the engine's sources and build profile, computed when the
extension is built (crates/bulksim-py/build.rs). Every store of results keys on it: the sweep
results store (its ``version`` column), ``reproduce cmmp``'s kept runs, and the generated
inputs cached between runs (``cached_input``, keyed by their generator, its parameters and the
engine). So a changed engine never reuses what an older one made, and what an older one made is
kept, not deleted. ``reuse_line`` is the one sentence a rerun prints about what it reused."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: Hex digits of a cached input's key in its file name (64 bits).
INPUT_KEY_DIGITS = 16


def engine_id() -> str:
    """The identity of the engine this process runs, ``<version>+<16 hex digits>`` (for
    example ``0.1.0+3f9c2a6b1d0e4f58``); rows and kept runs made before engine identities
    carry the bare version (``0.1.0``)."""
    from bulksim import _core

    ident = getattr(_core, "ENGINE_ID", None)
    if not isinstance(ident, str):
        raise RuntimeError(
            f"{_core.__file__}: this extension was built without an engine identity; "
            "rebuild it (`make build`)"
        )
    return ident


def input_key(generator: str, params: Mapping[str, Any]) -> str:
    """The key of a generated input: a hash of the generator's name, every parameter it was
    given (defaults included, so a changed default is another input) and the engine."""
    blob = json.dumps({"generator": generator, "params": dict(params), "engine": engine_id()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:INPUT_KEY_DIGITS]


def cached_input(
    folder: Path,
    name: str,
    generator: str,
    params: Mapping[str, Any],
    make: Callable[[Path], None],
    suffix: str = "",
) -> Path:
    """The generated input `name` in `folder`, made by ``make(path)`` on first use: its file
    (or directory) is ``NAME-KEY`` + `suffix` with KEY from ``input_key``, so another parameter
    or another engine makes a new one beside the old. ``make`` writes into a temporary name that
    is then renamed, so a concurrent reader never sees a partial input and an interrupted one is
    never taken for finished."""
    path = folder / f"{name}-{input_key(generator, params)}{suffix}"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{path.name}.tmp{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        make(tmp)
        try:
            os.replace(tmp, path)
        except OSError:
            if not path.is_dir():  # a directory another process finished first stays
                raise
    finally:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()
    return path


def reuse_line(engine: str, reused: int, other_engines: Mapping[str, int], rerun: int) -> str:
    """What a rerun reused: `reused` results stored by `engine` (this one); and `rerun` of the
    points it runs now had results stored by other engines (`other_engines`: engine -> how many
    of those points it had stored), which are kept and not reused."""
    line = f"engine {engine}: {reused} reused (stored by this engine)"
    if rerun:
        by = ", ".join(
            f"{n} by {e}" for e, n in sorted(other_engines.items(), key=lambda item: (-item[1], item[0]))
        )
        line += f"; {rerun} run again had results from other engines ({by}): kept, not reused"
    return line
