"""Every ``bulksim reproduce`` table, one module each, in one shape (``shape.Reproduction``)
and run by one runner (``runner.reproduce``: a process pool or Dask, a progress bar, resume
from the results store, the JSON of docs/experiments.md). ``REGISTRY`` maps each name
``--list`` shows to where its reproduction is defined, imported only when it runs."""

from __future__ import annotations

import importlib

from bulksim.reproduce.shape import Options, Reproduction

#: NAME -> "module:ATTRIBUTE" of its Reproduction.
REGISTRY: dict[str, str] = {
    "rowclone-4kb": "bulksim.reproduce.rowclone:REPRODUCTION",
    "forkbench": "bulksim.reproduce.forkbench:REPRODUCTION",
    "rowclone-multicore": "bulksim.reproduce.multicore:REPRODUCTION",
    "rowclone-apps": "bulksim.reproduce.apps:REPRODUCTION",
    "rank-assignment": "bulksim.reproduce.rank_figures:RANK_ASSIGNMENT",
    "refresh-policies": "bulksim.reproduce.rank_figures:REFRESH_POLICIES",
    "address-mapping": "bulksim.reproduce.rank_figures:ADDRESS_MAPPING",
    "pcm-writes": "bulksim.reproduce.rank_figures:PCM_WRITES",
    "page-allocation": "bulksim.reproduce.page_allocation:REPRODUCTION",
    "copy-engines": "bulksim.reproduce.copy_engines:REPRODUCTION",
    "cmmp": "bulksim.reproduce.cmmp:REPRODUCTION",
}


def get(name: str) -> Reproduction:
    """The reproduction called `name` (a key of REGISTRY)."""
    module, attribute = REGISTRY[name].split(":")
    return getattr(importlib.import_module(module), attribute)


__all__ = ["REGISTRY", "Options", "Reproduction", "get"]
