"""`python -m tests.fuzz [--cases N] [--seed S] [--kinds a,b] [--case I]`: run a fuzz
campaign against the installed CLI, print the table and the failure signatures, write failing
inputs (with a repro.sh) under --failures-dir, and exit 1 if any case failed."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from . import kinds as kinds_module
from .campaign import run_campaign
from .kinds import KINDS
from .runner import FAILURES, MESSY_ERROR, Limits


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--cases", type=int, default=300, help="cases per input kind (default 300)")
    p.add_argument("--seed", type=int, default=1, help="campaign seed (default 1)")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, from: {', '.join(KINDS)}")
    p.add_argument("--case", type=int, help="run only this case index (reproduce one failure)")
    p.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per command before it is a hang")
    p.add_argument("--memory-mb", type=int, default=2048, help="address-space limit per command (MiB)")
    p.add_argument("--failures-dir", type=Path, default=Path("target/fuzz-failures"))
    p.add_argument("--no-keep", action="store_true", help="do not write failing inputs")
    p.add_argument("--show-messy", action="store_true", help="also list messy-error signatures")
    p.add_argument(
        "--valid-only", action="store_true", help="only unmutated valid inputs (checks the oracle)"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print every case's outcome")
    args = p.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    keep = None if args.no_keep else args.failures_dir
    if keep is not None and args.case is None:
        _clear_old_failures(keep, kinds)
    if args.valid_only:
        kinds_module.VALID_SHARE = 1.0

    def progress(o) -> None:
        if args.verbose or o.category in FAILURES:
            print(f"{o.case.name:32} {o.category:12} {o.signature[:100]}", file=sys.stderr, flush=True)

    try:
        campaign = run_campaign(
            kinds,
            args.cases,
            args.seed,
            Limits(args.timeout, args.memory_mb),
            jobs=args.jobs,
            keep_dir=keep,
            only_index=args.case,
            progress=progress,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"\nfuzz: seed {args.seed}, {len(campaign.outcomes)} cases in {campaign.seconds:.0f} s\n")
    print(campaign.table())
    if campaign.failures:
        print("\nfailure signatures (deduplicated per kind):")
        print(campaign.signatures())
        if keep is not None:
            print(f"\nfailing inputs and repro.sh: {keep}/<case>/")
    if args.show_messy:
        print("\nmessy errors (not one `error:` line):")
        print(campaign.signatures({MESSY_ERROR}))
    return 1 if campaign.failures else 0


def _clear_old_failures(directory: Path, kinds: list[str]) -> None:
    """Removes failing inputs an earlier campaign of these kinds left (only case directories)."""
    if not directory.is_dir():
        return
    for entry in directory.iterdir():
        if entry.is_dir() and any(entry.name.startswith(f"{k}-s") for k in kinds):
            shutil.rmtree(entry)


if __name__ == "__main__":
    sys.exit(main())
