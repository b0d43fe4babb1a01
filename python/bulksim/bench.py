"""`make bench`: replays 1M-request random and streaming traces on DDR4-2400 (1 channel,
1 rank, FR-FCFS, open page) with the native driver `bulksim-replay`, printing simulated
requests per wall second and, when valgrind is installed, machine instructions per request
(callgrind's instruction count of the whole run, trace parsing included, divided by requests).

Traces are generated into build/bench/ (not committed). Requests are all due at cycle 0, so the
controller's queues stay full: the most expensive case for the scheduler.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import bulksim
from bulksim import provenance

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "build" / "bench"
DRIVER = ROOT / "target" / "release" / "bulksim-replay"
FOOTPRINT = 8 << 30  # the whole 8 GiB of one DDR4 8Gb x8 rank
REFERENCE_INSTRUCTIONS = 75_000  # Ramulator 2.0 / DRAMsim3 on the same work: the design brief's figure
# Issue 35's goal per trace (docs/performance.md): not reached yet; printed beside each figure.
TARGET_INSTRUCTIONS = {"random": 2_500, "stream": 1_500}


def build_driver() -> None:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "bulksim-replay"], cwd=ROOT, check=True
    )


def trace(pattern: str, requests: int) -> Path:
    """The benchmark's trace, generated on first use (keyed by its parameters and the engine)."""
    params = {"pattern": pattern, "requests": requests, "footprint": FOOTPRINT, "seed": 1}
    name = f"{pattern}_{requests}"
    return provenance.cached_input(
        BENCH, name, "trace", params, lambda out: bulksim.generate_trace(out, **params), ".trace"
    )


def wall(path: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    out = subprocess.run(
        [str(DRIVER), str(path), "native"], capture_output=True, text=True, check=True
    ).stdout
    return time.perf_counter() - start, json.loads(out)


def instructions(path: Path) -> int | None:
    if shutil.which("valgrind") is None:
        return None
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(DRIVER), str(path), "native"],
        capture_output=True,
        text=True,
        check=True,
    )
    m = re.search(r"Collected\s*:\s*(\d+)", r.stderr)
    return int(m.group(1)) if m else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--no-valgrind", action="store_true", help="skip the instruction count")
    args = parser.parse_args(argv)
    build_driver()
    rows = []
    for pattern in ["random", "stream"]:
        path = trace(pattern, args.requests)
        seconds, stats = wall(path)
        instr = None if args.no_valgrind else instructions(path)
        row = {
            "pattern": pattern,
            "requests": args.requests,
            "simulated_cycles": stats["mem_cycles"],
            "wall_seconds": round(seconds, 3),
            "requests_per_second": round(args.requests / seconds),
            "instructions_per_request": None if instr is None else round(instr / args.requests),
            "target_instructions_per_request": TARGET_INSTRUCTIONS[pattern],
        }
        rows.append(row)
        ipr = "n/a (no valgrind)" if instr is None else f"{row['instructions_per_request']:,}"
        print(
            f"{pattern:7} {args.requests:>9,} requests  {seconds:6.2f} s  "
            f"{row['requests_per_second']:>10,} requests/s  instructions/request {ipr}"
            f" (target {TARGET_INSTRUCTIONS[pattern]:,})"
        )
    print(f"reference simulators: ~{REFERENCE_INSTRUCTIONS:,} instructions/request")
    (BENCH / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
