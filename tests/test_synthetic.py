"""The Rank Assignment study's workloads end to end (issue #15 items 9 and 7): `bulksim synth`
writes the synthetic stand-ins (checked here by counting the events of the files it writes),
`configs/rank_assignment.toml` loads and runs 8 copies of synth-mcf and one 8-thread sharing
process to an exact DRAM-access count, and the MSC heads loop until that count."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import bulksim
from bulksim.paths import shared_traces_dir

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "rank_assignment.toml"


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )


def count(directory: Path) -> dict[str, int]:
    """Instructions (C n is n; every other event but X one), reads (R, D), dependent reads,
    write-backs (B) and spawns (T), over every thread file."""
    c = {"instructions": 0, "reads": 0, "dependent": 0, "writes": 0, "spawns": 0}
    for path in sorted(directory.glob("thread-*.trace")):
        for line in path.read_text().splitlines()[1:]:
            letter, *ops = line.split()
            c["instructions"] += int(ops[0]) if letter == "C" else letter != "X"
            c["reads"] += letter in "RD"
            c["dependent"] += letter == "D"
            c["writes"] += letter == "B"
            c["spawns"] += letter == "T"
    return c


def test_synth_writes_the_stand_in_and_prints_what_it_wrote(tmp_path):
    out = tmp_path / "share60"
    done = cli("synth", "synth-share60", "--out", out, "--threads", 4, "--accesses", 3000, "--seed", 9)
    assert done.returncode == 0, done.stderr
    heads = [(out / f"thread-{t}.trace").read_text().splitlines()[0] for t in range(4)]
    assert heads == ["bulksim-workload 2"] + ["bulksim-workload 2 child"] * 3
    assert not (out / "thread-4.trace").exists()
    c = count(out)
    accesses = c["reads"] + c["writes"]
    assert accesses == 4 * 3000
    assert c["spawns"] == 3 and c["dependent"] == 0
    mpki = 1000 * accesses / c["instructions"]
    assert 29 < mpki < 31  # documented: 30
    assert c["writes"] == 0.15 * accesses
    line = done.stdout.strip()
    assert "\n" not in line
    assert f"{accesses} DRAM accesses, {mpki:.1f} per 1000 instructions, 15.0% write-backs, 60.0%" in line


def test_synth_mcf_reads_are_dependent(tmp_path):
    out = tmp_path / "mcf"
    assert cli("synth", "synth-mcf", "--out", out, "--accesses", 1000).returncode == 0
    c = count(out)
    assert c["dependent"] == c["reads"] == 900 and c["writes"] == 100


@pytest.mark.parametrize(
    "args, message",
    [
        (["synth-nope"], "error: unknown synthetic workload 'synth-nope'; expected one of synth-gems"),
        (["synth-gems", "--threads", "8"], "error: threads = 8: synth-gems is single-threaded"),
        (["synth-share15", "--threads", "1"], "error: threads = 1: synth-share15 shares pages"),
        (["synth-lbm", "--working-set", "medium"], "error: working set 'medium': expected small"),
        (["synth-lbm", "--accesses", "0"], "error: accesses = 0: expected 1 to 100000000"),
    ],
)
def test_bad_synth_arguments_are_one_line_errors(tmp_path, args, message):
    done = cli("synth", *args, "--out", tmp_path / "w")
    assert done.returncode != 0
    assert done.stderr.strip().startswith(message), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_synth_refuses_a_directory_that_is_not_empty(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    done = cli("synth", "synth-gems", "--out", tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip() == f"error: {tmp_path}: exists and is not empty; give a new or empty directory"
    assert (tmp_path / "keep.txt").read_text() == "x"


def test_rank_assignment_config_loads_with_table_two_values():
    done = cli("config", "check", CONFIG)
    assert done.returncode == 0, done.stderr
    config = tomllib.loads(bulksim.resolve_config(CONFIG))
    assert (config["core"]["window"], config["core"]["width"], config["system"]["core_ghz"]) == (64, 4, 3.2)
    l1, l2 = config["cache"]["level"]
    assert (l1["size_kb"], l1["ways"], l1["hit_cycles"], l1["shared"]) == (32, 2, 1, False)
    assert (l2["size_kb"], l2["ways"], l2["line_bytes"], l2["hit_cycles"], l2["shared"]) == (
        4096,
        8,
        64,
        10,
        True,
    )
    dram, ctl = config["dram"], config["controller"]
    assert (dram["preset"], dram["channels"], dram["ranks"], dram["temperature"]) == (
        "DDR4_32Gb_x8_1600",
        2,
        2,
        "extended",
    )
    assert (ctl["scheduler"], ctl["page_policy"], ctl["address_mapping"], ctl["read_queue_size"]) == (
        "frfcfs",
        "open",
        "bank_xor",
        32,
    )
    drain = ctl["write_drain"]
    assert (drain["scope"], drain["high"], drain["low"]) == ("rank", 10, 5)
    assert (ctl["refresh"]["policy"], ctl["refresh"]["stagger"]) == ("staggered", "system")
    assert config["sim"]["stop_after_dram_accesses"] == 2_000_000
    assert config["os"]["allocator"] == "scatter"


def test_eight_copies_of_synth_mcf_run_to_exactly_20k_dram_accesses(tmp_path):
    out = tmp_path / "mcf"
    assert cli("synth", "synth-mcf", "--out", out, "--accesses", 5000).returncode == 0
    stats = bulksim.run_workload(
        CONFIG, workload=out, copies=8, overrides=["sim.stop_after_dram_accesses=20000"]
    )
    memory = stats["memory"]
    assert memory["reads"] + memory["writes"] == 20_000
    # Each copy gives a write-back after nine reads: the first 20k accesses hold about 10%.
    assert abs(memory["writes"] / 20_000 - 0.1) < 0.01
    assert len(stats["cores"]) == 8
    ends = {t["end_ns"] for t in stats["threads"]}
    assert ends == {stats["simulated_ns"]}
    # All eight make progress side by side (none finished: 8 x 5000 > 20000).
    assert all(c["instructions"] > 1000 for c in stats["cores"])


def test_one_eight_thread_sharing_process_runs_on_eight_cores(tmp_path):
    out = tmp_path / "share15"
    assert cli("synth", "synth-share15", "--out", out, "--accesses", 2000).returncode == 0
    stats = bulksim.run_workload(CONFIG, workload=out, overrides=["sim.stop_after_dram_accesses=8000"])
    assert stats["memory"]["reads"] + stats["memory"]["writes"] == 8000
    assert stats["os"]["spawns"] == 7
    assert len(stats["cores"]) == 8
    for core, thread in zip(stats["cores"], stats["threads"], strict=True):
        assert core["instructions"] == thread["instructions"] > 0


def test_msc_head_loops_until_the_dram_access_count():
    trace = shared_traces_dir() / "msc" / "comm1"
    if not trace.exists():
        pytest.skip(f"{trace} is absent (set BULKSIM_SHARED_TRACES to the shared traces folder)")
    lines = trace.read_text().splitlines()
    per_pass = (sum(" R " in f" {x} " for x in lines), sum(x.split()[1] == "W" for x in lines))
    assert sum(per_pass) == len(lines)
    once = bulksim.run_workload(
        CONFIG,
        workload=trace,
        overrides=["system.loop_workloads=false", "sim.stop_after_dram_accesses=250000"],
    )
    assert (once["memory"]["reads"], once["memory"]["writes"]) == per_pass, "unlooped: ends after one pass"
    looped = bulksim.run_workload(CONFIG, workload=trace, overrides=["sim.stop_after_dram_accesses=250000"])
    memory = looped["memory"]
    assert memory["reads"] + memory["writes"] == 250_000
    # Two whole passes and the first 50,000 records of a third (give or take the requests in
    # flight between the read and write queues: at most a 64-entry window).
    third = lines[: 250_000 - 2 * len(lines)]
    reads = 2 * per_pass[0] + sum(x.split()[1] == "R" for x in third)
    assert abs(memory["reads"] - reads) <= 64
