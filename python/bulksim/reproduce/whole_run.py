"""The reproduction not yet split into cases (issue 34, item 8, still to port): ``cmmp`` runs
whole through ``python/bulksim/reproduce/cmmp.py``'s own ``run`` (or ``sensitivity``) and ``render``, with
the runner's options, JSON schema and registry entry, but not the results store: it keeps each
finished run in ``results/cmmp-runs/`` and resumes from them itself (docs/hybrid.md)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from bulksim.reproduce.shape import Options, Plan, Reproduction, ReproductionError


class WholeRun(Reproduction):
    """cmmp, run whole by ``run_whole`` (no cases for the runner to resume)."""

    def __init__(self, name: str, title: str, paper: str, module: str):
        self.name, self.title, self.paper, self.module_name = name, title, paper, module

    @property
    def module(self):
        return importlib.import_module(f"bulksim.reproduce.{self.module_name}")

    def paper_values(self) -> Any:
        return None

    def plan(self, options: Options) -> Plan:
        return Plan([])

    def run_whole(
        self, options: Options, workers: int | None, force: bool, progress
    ) -> tuple[list, Any, list, str]:
        """(rows, summary, missing, table text) of one whole run; ``progress(done, total)``."""
        cmmp = self.module
        if options.sensitivity:
            chosen = options.workloads or cmmp.SENSITIVITY_WORKLOADS
            _select(cmmp, chosen, options.quick)
            length = cmmp.QUICK_SENSITIVITY_INSTRUCTIONS if options.quick else cmmp.SENSITIVITY_INSTRUCTIONS
            rows, missing = cmmp.sensitivity(
                quick=options.quick, workers=workers, progress=progress, workloads=chosen
            )
            return rows, {}, missing, cmmp.render_sensitivity(rows, missing, length)
        traces, standins = _select(cmmp, options.workloads, options.quick)
        rows, missing = cmmp.run(
            quick=options.quick,
            workers=workers,
            progress=progress,
            traces=traces,
            standins=standins,
            keep=Path("results") / "cmmp-runs",
            force=force,
            on_reuse=lambda line: print(line, file=sys.stderr),
        )
        return rows, cmmp.summary(rows), missing, cmmp.render(rows, missing)


def _select(cmmp, workloads, quick: bool):
    """cmmp's traces and stand-ins for --workload; an unknown name is bad input."""
    try:
        return cmmp.select(workloads, quick)
    except ValueError as e:
        raise ReproductionError(str(e)) from e
