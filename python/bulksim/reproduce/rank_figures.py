"""The Rank Assignment reproductions (Shevgoor et al., ISPASS 2016; docs/rank_assignment.md) in
the one shape: each runs workloads of ``rank_study`` on named systems until a number of DRAM
accesses, every distinct run one case (``rank_study.cases_of``), and its module derives the rows
from the runs' stats and draws the table. ``rank-assignment`` (Figures 2, 3, 7, 8, Table III)
keys its runs by workload and overrides; the per-figure ones (``refresh-policies``,
``address-mapping``, ``pcm-writes``) tag each run with its experiment and system."""

from __future__ import annotations

import importlib
from dataclasses import asdict
from pathlib import Path

from bulksim.reproduce import rank_study as rs
from bulksim.reproduce.figures import rank_study_figures
from bulksim.reproduce.shape import Options, Plan, Reproduction

#: The figures' titles name the paper thus.
PAPER_SHORT = "Rank Assignment (ISPASS 2016)"


class RankFigure(Reproduction):
    """refresh-policies, address-mapping or pcm-writes: its module's ``plan`` and
    ``rows_from_stats``, rendered by its ``render``."""

    def __init__(self, name: str, title: str, paper: str, module: str):
        self.name, self.title, self.paper, self.module_name = name, title, paper, module

    @property
    def module(self):
        return importlib.import_module(f"bulksim.reproduce.{self.module_name}")

    def paper_values(self):
        values = getattr(self.module, "PAPER", None)
        return values if isinstance(values, dict) and all(isinstance(k, str) for k in values) else None

    def plan(self, options: Options) -> Plan:
        runs, skipped = self.module.plan(options.quick)
        return Plan(rs.cases_of(runs), missing=skipped, context={"runs": runs, "skipped": skipped})

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        runs = plan.context["runs"]
        ordered = [stats[rs.case_key(r)] for r in runs]
        return self.module.rows_from_stats(runs, ordered, plan.context["skipped"], options.mean)

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        return self.module.render(rows)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """One PNG per experiment (figure) of the rows (``figures.rank_study_figures``)."""
        return rank_study_figures(self.name, PAPER_SHORT, rows, out)


class RankAssignment(Reproduction):
    name = "rank-assignment"
    title = "Rank Assignment Figs 2, 3, 7, 8, Table III, VI-B/J: refresh vs rank-aware allocation"
    paper = "Shevgoor et al., Rank Assignment, ISPASS 2016, Figures 2, 3, 7, 8 and Table III"

    def plan(self, options: Options) -> Plan:
        from bulksim.reproduce import rank_assignment

        chosen, runs = rank_assignment.plan_runs(options.quick)
        return Plan(rs.cases_of(runs), context={"workloads": chosen, "runs": runs})

    def rows(self, plan: Plan, stats: dict[str, dict], options: Options) -> list[dict]:
        from bulksim.reproduce import rank_assignment

        by_overrides = {(r.workload, r.overrides): stats[rs.case_key(r)] for r in plan.context["runs"]}
        return [asdict(r) for r in rank_assignment.rows_from(plan.context["workloads"], by_overrides)]

    def render(self, rows: list[dict], summary: dict, plan: Plan, options: Options) -> str:
        from bulksim.reproduce import rank_assignment

        return rank_assignment.render([rank_assignment.Row(**r) for r in rows], mean=options.mean)

    def figures(self, rows: list[dict], out: Path) -> list[Path]:
        """One PNG per experiment (figure, table or section) of the rows, per workload."""
        return rank_study_figures(self.name, PAPER_SHORT, rows, out)


RANK_ASSIGNMENT = RankAssignment()
REFRESH_POLICIES = RankFigure(
    "refresh-policies",
    "Rank Assignment Figures 10-11 and peak power: FGR, PCD, RP, ER, RA vs no refresh",
    "Shevgoor et al., Rank Assignment, ISPASS 2016, Figures 10-11",
    "refresh_policies",
)
ADDRESS_MAPPING = RankFigure(
    "address-mapping",
    "Rank Assignment Figure 5: four mappings x open/closed page, no refresh and staggered",
    "Shevgoor et al., Rank Assignment, ISPASS 2016, Figure 5",
    "address_mapping",
)
PCM_WRITES = RankFigure(
    "pcm-writes",
    "Rank Assignment Figures 4 and 9: PCM write drains (rank/channel scope, coordination), RA",
    "Shevgoor et al., Rank Assignment, ISPASS 2016, Figures 4 and 9",
    "pcm_writes",
)
