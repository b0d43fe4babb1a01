"""Every ``bulksim reproduce`` table, one module each, in one shape (``shape.Reproduction``)
and run by one runner (``runner.reproduce``: a process pool or Dask, a progress bar, resume
from the results store, the JSON of docs/experiments.md). ``REGISTRY`` maps each name
``--list`` shows to where its reproduction is defined, imported only when it runs."""

from __future__ import annotations

import importlib

from bulksim.reproduce.shape import Options, Reproduction
from bulksim.reproduce.whole_run import WholeRun

#: NAME -> "module:ATTRIBUTE" of a ported reproduction, or a WholeRun of one still to port.
REGISTRY: dict[str, str | WholeRun] = {
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
    "cmmp": WholeRun(
        "cmmp",
        "CMMP Sec. IV: CPM, CM, CM+OBM, CM+OBM+PD on a hybrid DRAM+PCM memory, 4 copies per workload"
        " (shared traces on cmmp_scaled, stand-ins on cmmp_table1)",
        "CMMP, Sec. IV",
        "cmmp",
    ),
}


def get(name: str) -> Reproduction:
    """The reproduction called `name` (a key of REGISTRY)."""
    entry = REGISTRY[name]
    if isinstance(entry, Reproduction):
        return entry
    module, attribute = entry.split(":")
    return getattr(importlib.import_module(module), attribute)


__all__ = ["REGISTRY", "Options", "Reproduction", "get"]
