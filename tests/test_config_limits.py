"""Config values beyond what the model simulates: one error line naming key, value and range,
from the CLI and the API; `config check` names every bad key (issue #13, items 2 and 12)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import bulksim

ROOT = Path(__file__).resolve().parents[1]


def bulksim_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )


@pytest.fixture
def one_read(tmp_path):
    trace = tmp_path / "one.trace"
    trace.write_text("0,R,0x0\n")
    return trace


def test_a_wrapping_timing_is_one_error_line_naming_key_value_and_range(one_read):
    r = bulksim_cli("run", "--trace", one_read, "--set", "dram.timing.nCL=4294967295")
    assert r.returncode == 1
    assert r.stderr == (
        "error: dram.timing.nCL: 4294967295 is out of range; expected 0..=1073741823 cycles "
        "(rule latencies add up to four parameters in 32 bits)\n"
    )


def test_ranks_beyond_the_frame_numbers_are_rejected_not_allocated(one_read):
    # 2^30 ranks of 8 GiB aborted at 38 GB; 16 TiB / 8 GiB per rank = 2048 ranks at most.
    with pytest.raises(bulksim.ConfigError, match=r"^dram\.ranks: 1073741824 is out of range.*at most 2048"):
        bulksim.run(trace=one_read, overrides=["dram.ranks=1073741824"])


def test_a_workload_needing_more_host_memory_than_allowed_says_how_much(tmp_path):
    workload = tmp_path / "w.trace"
    workload.write_text("bulksim-workload 1\nA 0x1000 4096\nS 0x1000\n")
    r = bulksim_cli(
        "run", "--workload", workload, "--set", "dram.ranks=1024", "--set", "sim.memory_limit_mb=1024"
    )
    assert r.returncode == 1
    # 8 TiB is 2^31 frames of 7 bytes (frame table; above 16 GiB the allocator's order is drawn
    # lazily): 14 GiB of OS tables besides the rest.
    assert r.stderr.startswith("error: the configuration needs about 14.")
    assert "more than the 1.0 GiB sim.memory_limit_mb" in r.stderr
    assert r.stderr.count("\n") == 1


def test_config_check_names_every_bad_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[dram]\nranks = "two"\nchannels = 3\n[dram.timing]\nnCL = 4294967295\n'
        "[controller]\nschedular = 1\nread_queue_size = 0\n"
    )
    r = bulksim_cli("config", "check", bad)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    for expected in [
        "line 2: dram.ranks: invalid type",
        "'controller.schedular'",
        "dram.channels: 3 is not a power of two",
        "dram.timing.nCL: 4294967295 is out of range",
        "controller.read_queue_size: 0 is out of range",
    ]:
        assert sum(expected in line for line in lines) == 1, (expected, lines)
    assert len(lines) == 5, lines
