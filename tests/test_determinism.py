"""Determinism across OS processes: the same workload, run in two separate Python interpreters
(so every per-process hash seed differs), gives byte-identical stats. The workload has one
process exit while another still allocates, so the order in which the exit frees frames
decides every later allocation (tests/it/determinism.rs checks that order within one process)."""

from __future__ import annotations

import json
import subprocess
import sys

PAGE = 4096
A, B = 0x1000_0000, 0x2000_0000

RUN = """
import json, sys
import bulksim
stats = bulksim.run_workload(workload=sys.argv[1], overrides=sys.argv[2:]).to_dict()
del stats["memory"]["host"]  # wall-clock figures
print(json.dumps(stats, sort_keys=True))
"""


def write_workload(d, first=150, second=300, compute=2_000_000):
    """Thread 0 touches `first` pages and exits; thread 1 computes, then touches `second`."""
    d.mkdir()
    t0 = [f"A {A:#x} {first * PAGE}"] + [f"S {A + i * PAGE:#x}" for i in range(first)] + ["X"]
    t1 = [f"C {compute}", f"A {B:#x} {second * PAGE}"]
    t1 += [f"S {B + i * PAGE:#x}" for i in range(second)] + ["X"]
    for i, events in enumerate([t0, t1]):
        (d / f"thread-{i}.trace").write_text("\n".join(["bulksim-workload 1", *events]) + "\n")
    return d


def run_in_new_interpreter(workload, overrides):
    out = subprocess.run(
        [sys.executable, "-c", RUN, str(workload), *overrides],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout


def test_an_exit_while_another_process_allocates_is_deterministic_across_processes(tmp_path):
    workload = write_workload(tmp_path / "exit-then-allocate")
    overrides = ["os.allocator=subarray_aware"]
    first = run_in_new_interpreter(workload, overrides)
    second = run_in_new_interpreter(workload, overrides)
    stats = json.loads(first)
    assert stats["os"]["processes"] == 2 and stats["os"]["zero_fills"] == 450
    threads = stats["threads"]
    assert threads[0]["end_ns"] < threads[1]["end_ns"]
    assert first == second
