"""The rank-assignment presets from the command line and under the independent timing checker:
PCM runs with no REF and a legal log, a refresh policy on it is one error line, and the new
presets are listed and shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from timing_checker import check_log

ROOT = Path(__file__).resolve().parents[1]
NEW_PRESETS = ["DDR4_8Gb_x8_1600", "DDR4_16Gb_x8_1600", "DDR4_32Gb_x8_1600", "PCM_x8_1600"]


def bulksim(*args):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_spec_list_shows_the_new_presets_and_show_prints_pcm():
    listed = bulksim("spec", "list")
    assert listed.returncode == 0, listed.stderr
    for name in NEW_PRESETS:
        assert name in listed.stdout
    shown = bulksim("spec", "show", "PCM_x8_1600")
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[0]: line.split()[1] for line in shown.stdout.splitlines()[2:]}
    assert (lines["nWR"], lines["nRAS"], lines["nRC"], lines["nREFI"]) == ("100", "45", "55", "0")
    assert (lines["bankgroups"], lines["banks_per_group"]) == ("2", "4")


def test_spec_show_prints_the_cmmp_parts_precharge_and_energy():
    """CMMP's Table I parts (issue 17): listed; `spec show` says PCM's tRP is per dirty block
    and prints both parts' pJ/bit energies."""
    listed = bulksim("spec", "list")
    assert "DRAM_CMMP_1000" in listed.stdout and "PCM_CMMP_400" in listed.stdout
    pcm = bulksim("spec", "show", "PCM_CMMP_400").stdout
    assert "nRP per dirty 64-B block" in pcm
    assert "array read 2.47 write 16.82, buffer read 0.93 write 1.02" in pcm
    dram = bulksim("spec", "show", "DRAM_CMMP_1000").stdout
    assert "per dirty" not in dram and "array read 1.17 write 0.39" in dram


def test_refresh_on_pcm_is_one_error_line_naming_the_key(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("0,W,0x0\n")
    r = bulksim("run", "--preset", "PCM_x8_1600", "--trace", trace)
    assert r.returncode != 0
    assert r.stderr.count("\n") == 1 and "controller.refresh" in r.stderr, r.stderr


@pytest.mark.parametrize("preset", NEW_PRESETS)
def test_checker_accepts_the_new_presets(preset, make_trace, run_logged):
    trace = make_trace(requests=3000, seed=5, pattern="random", write_fraction=0.5, interval=2)
    overrides = ["controller.refresh=none"] if preset.startswith("PCM") else []
    stats, spec, log = run_logged(trace, preset, overrides)
    assert stats["reads"] + stats["writes"] == 3000
    assert check_log(spec, str(log)) == []
    if preset.startswith("PCM"):
        assert stats["refreshes"] == 0 and not spec["has_refresh"]
    else:
        # A run past one tREFI (6240 cycles) refreshes.
        assert stats["refreshes"] >= stats["mem_cycles"] // 6240 > 0


def test_checker_owes_refs_only_on_parts_with_refresh(tmp_path, make_trace, run_logged):
    # 3000 requests 30 cycles apart: past 9 x tREFI, beyond what JEDEC lets a rank postpone.
    trace = make_trace(requests=3000, seed=5, pattern="random", interval=30)
    _, spec, log = run_logged(trace, "DDR4_8Gb_x8_1600", ["controller.refresh=none"])
    assert spec["has_refresh"]
    assert any("refresh postponed" in str(v) for v in check_log(spec, str(log)))
