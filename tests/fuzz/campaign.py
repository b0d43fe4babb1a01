"""A fuzz campaign: cases per kind run on a few threads (each case is its own subprocess), the
table of categories x kinds, the failure signatures deduplicated per kind, and a line to
reproduce each."""

from __future__ import annotations

import concurrent.futures as cf
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .kinds import KINDS, make_case
from .runner import CATEGORIES, FAILURES, Limits, Outcome, execute


@dataclass
class Campaign:
    seed: int
    kinds: list[str]
    cases: int
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.category in FAILURES]

    def table(self) -> str:
        counts = Counter((o.case.kind, o.category) for o in self.outcomes)
        width = max(len(k) for k in self.kinds + ["kind"])
        head = f"{'kind':{width}} " + " ".join(f"{c:>11}" for c in CATEGORIES)
        lines = [head, "-" * len(head)]
        for kind in self.kinds + ["total"]:
            row = [
                sum(n for (k, c), n in counts.items() if c == cat and (kind == "total" or k == kind))
                for cat in CATEGORIES
            ]
            lines.append(f"{kind:{width}} " + " ".join(f"{n:>11}" for n in row))
        return "\n".join(lines)

    def signatures(self, categories: set[str] = FAILURES) -> str:
        """Distinct (kind, category, signature) with their count and the first case of each."""
        groups: dict[tuple[str, str, str], list[Outcome]] = defaultdict(list)
        for o in self.outcomes:
            if o.category in categories:
                groups[(o.case.kind, o.category, o.signature)].append(o)
        lines = []
        for (kind, category, signature), members in sorted(groups.items()):
            first = members[0]
            lines.append(f"[{kind}] {category} x{len(members)}: {signature}")
            lines.append(f"    e.g. {first.case.name} ({first.case.what[:120]})")
            lines.append(f"    reproduce: {reproduce_line(first)}")
        return "\n".join(lines)


def reproduce_line(o: Outcome) -> str:
    kinds = o.case.kind
    return f".venv/bin/python -m tests.fuzz --kinds {kinds} --seed {o.case.seed} --case {o.case.index}"


def run_campaign(
    kinds: list[str],
    cases: int,
    seed: int,
    limits: Limits,
    jobs: int = 2,
    keep_dir: Path | None = None,
    only_index: int | None = None,
    progress: Callable[[Outcome], None] | None = None,
) -> Campaign:
    """Runs `cases` cases of each kind (or only case `only_index`)."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown input kinds {', '.join(unknown)}; known: {', '.join(KINDS)}")
    campaign = Campaign(seed, kinds, cases)
    indices = [only_index] if only_index is not None else list(range(cases))
    started = time.monotonic()
    # Interleave kinds so a slow kind does not hold one worker for the whole run.
    work = [(kind, i) for i in indices for kind in kinds]
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_one, kind, seed, i, limits, keep_dir) for kind, i in work]
        for fut in futures:
            outcome = fut.result()
            campaign.outcomes.append(outcome)
            if progress is not None:
                progress(outcome)
    campaign.seconds = time.monotonic() - started
    return campaign


def _one(kind: str, seed: int, index: int, limits: Limits, keep_dir: Path | None) -> Outcome:
    return execute(make_case(kind, seed, index), limits, keep_dir)
