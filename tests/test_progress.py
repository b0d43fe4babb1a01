"""No endless runs by accident (issue #13, item 4): full-system runs report progress, on stderr
from the command line; a corrupt cycle or instruction count stops with one error line naming
the record and `sim.max_cycles`; a long idle gap in a trace replays fast."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import bulksim
from bulksim import api, cli

ROOT = Path(__file__).resolve().parents[1]


def bulksim_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_run_workload_reports_progress_ending_with_the_final_count(tmp_path):
    workload = api.generate_random_access(
        tmp_path / "w", region_bytes=1 << 20, accesses=2000, work=2, binary=False
    )
    seen: list[tuple[int, float]] = []
    stats = bulksim.run_workload(workload=workload, progress=lambda n, ns: seen.append((n, ns)))
    assert seen, "at least the final report"
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(seen, seen[1:], strict=False))
    instructions, simulated_ns = seen[-1]
    assert instructions == stats["instructions"]
    assert simulated_ns >= stats["simulated_ns"] > 0


def test_cli_workload_progress_prints_to_a_terminal_only(monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert cli._workload_progress() is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    report = cli._workload_progress()
    report(1_234_567, 2_500_000.0)
    err = capsys.readouterr().err
    assert "1,234,567 instructions" in err and "2.500 ms simulated" in err


def test_corrupt_trace_cycle_is_one_error_line_naming_record_and_key(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("0,R,0x40\n1000000000000000,R,0x80\n")
    r = bulksim_cli("run", "--trace", trace)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ") and f"{trace}:2: cycle 1000000000000000" in lines[0]
    assert "sim.max_cycles" in lines[0]


def test_long_idle_gap_replays_fast_with_every_refresh(tmp_path):
    # 10^12 cycles of idle time: ~10^8 refreshes if stepped one by one.
    trace = tmp_path / "gap.trace"
    gap = 10**12
    trace.write_text(f"0,R,0x40\n{gap},R,0x80\n")
    start = time.monotonic()
    stats = bulksim.run(trace=trace, overrides=["sim.max_cycles=1000000000000"])
    assert time.monotonic() - start < 30
    refi = bulksim.spec("DDR4_8Gb_x8_2400")["timing"]["nREFI"]
    # One rank: REFs due at k * tREFI, k >= 1, up to the second read's arrival.
    assert stats["refreshes"] == gap // refi
    assert stats["reads"] == 2


def test_corrupt_compute_count_is_one_error_line(tmp_path):
    d = tmp_path / "w"
    d.mkdir()
    # Above 2^32 the reader refuses the count itself; below it, a count whose cycles pass a
    # lowered sim.max_cycles stops the run naming the record and the key.
    (d / "thread-0.trace").write_text("bulksim-workload 1\nC 1000000000000000\nX\n")
    r = bulksim_cli("run", "--workload", d)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "thread-0.trace:2:" in lines[0] and "at most 2^32" in lines[0]
    (d / "thread-0.trace").write_text("bulksim-workload 1\nC 4000000000\nX\n")
    r = bulksim_cli("run", "--workload", d, "--set", "sim.max_cycles=1000000")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "thread-0.trace:2:" in lines[0] and "sim.max_cycles" in lines[0]
