"""The command line: runs, outputs, and one clear error line with a non-zero status for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from timing_checker import check_log

ROOT = Path(__file__).resolve().parents[1]


def bulksim(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
    )


def test_run_writes_json_and_command_log_and_prints_summary(tmp_path):
    trace = tmp_path / "t.trace"
    assert (
        bulksim(
            "trace", "gen", trace, "--pattern", "random", "--requests", "800", "--write-fraction", "0.3"
        ).returncode
        == 0
    )
    out, log = tmp_path / "s.json", tmp_path / "cmds.csv"
    r = bulksim(
        "run",
        "--preset",
        "DDR4_8Gb_x8_2400",
        "--trace",
        trace,
        "--json",
        out,
        "--command-log",
        log,
        "--set",
        "dram.ranks=2",
    )
    assert r.returncode == 0, r.stderr
    assert "read latency" in r.stdout and "GB/s" in r.stdout
    stats = json.loads(out.read_text())
    assert stats["reads"] + stats["writes"] == 800
    spec = json.loads(bulksim("spec", "show", "DDR4_8Gb_x8_2400", "--json", "--set", "dram.ranks=2").stdout)
    assert check_log(spec, str(log)) == []


def test_bad_input_gives_one_error_line_and_nonzero_status(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("0,R,0x0\nzzz\n")
    r = bulksim("run", "--trace", trace)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"error: {trace}:2: wrong number of fields; expected `cycle,R|W,address`, "
        "`cycle,C,src,dst,bytes` or `cycle,I,dst,bytes,value` (native format), got 'zzz'"
    ]
    # A bulk operation the mechanism cannot take names the trace line and the reason.
    trace.write_text("0,R,0x0\n5,C,0x1000,0x3fe0000,64\n")
    r = bulksim("run", "--trace", trace, "--set", "bulk.mechanism=rowclone")
    assert r.returncode == 1 and f"{trace}:2:" in r.stderr and "reserves" in r.stderr
    r = bulksim("run", "--trace", trace, "--set", "bulk.mechanism=gpu")
    assert r.returncode == 1 and "`auto`, `channel`, `mc_dma`, `rowclone`" in r.stderr
    r = bulksim("run", "--trace", trace, "--set", "controller.schedular=fcfs")
    assert r.returncode == 1 and "did you mean 'controller.scheduler'" in r.stderr
    r = bulksim("run", "--trace", trace, "--trace-format", "csv")
    assert r.returncode == 2 and "csv" in r.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[dram]\nchanels = 2\n")
    r = bulksim("config", "check", bad)
    assert r.returncode == 1 and "bad.toml" in r.stderr and "dram.channels" in r.stderr
    assert "Traceback" not in r.stderr


def test_config_show_has_units_and_check_accepts_good_files(tmp_path):
    r = bulksim("config", "show", "--set", "controller.scheduler=fcfs")
    assert r.returncode == 0
    assert 'scheduler = "fcfs"' in r.stdout and "[requests] read queue entries per channel" in r.stdout
    good = tmp_path / "good.toml"
    good.write_text('[dram]\npreset = "DDR3_4Gb_x8_1600"\nranks = 2\n[dram.timing]\nnCL = 12\n')
    assert bulksim("config", "check", good).returncode == 0


def test_spec_list_and_show():
    r = bulksim("spec", "list")
    assert r.returncode == 0 and all(
        p in r.stdout for p in ["DDR3_2Gb_x8_1066", "DDR3_4Gb_x8_1600", "DDR4_8Gb_x8_2400"]
    )
    r = bulksim("spec", "show", "DDR3_2Gb_x8_1066")
    assert "nRAS" in r.stdout and "cycles" in r.stdout


def test_reference_docs_are_current():
    r = bulksim("docs", "--check")
    assert r.returncode == 0, r.stderr


def test_readme_shows_what_the_demo_prints(tmp_path):
    r = bulksim("demo", "--out", tmp_path / "demo")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "demo" / "random.json").exists()
    printed = [line for line in r.stdout.splitlines() if not line.startswith(("host ", "traces and stats"))]
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```\n== streaming reads", 1)[1].split("```", 1)[0]
    shown = [
        line
        for line in ("== streaming reads" + block).splitlines()
        if not line.startswith("traces and stats")
    ]
    assert printed == shown


def test_reproduce_rowclone_table3(tmp_path):
    """Latencies from the command sequences (docs/rowclone.md): FPM = 2 tRAS + tRP = 48 cycles,
    PSM between banks 290 cycles, within a bank 561, the channel copy 550 and zeroing 270
    cycles of 1.875 ns; energies ordered as the paper's, FPM with no I/O."""
    out = tmp_path / "t3.json"
    r = bulksim("reproduce", "rowclone-4kb", "--json", out, "--results", tmp_path / "r.db")
    assert r.returncode == 0, r.stderr
    assert "psm_intra_bank" in r.stdout and "(  1050)" in r.stdout
    rows = {(x["operation"], x["mechanism"]): x for x in json.loads(out.read_text())["rows"]}
    assert set(rows) == {
        ("copy", "baseline"),
        ("copy", "fpm"),
        ("copy", "psm_inter_bank"),
        ("copy", "psm_intra_bank"),
        ("zero", "baseline"),
        ("zero", "fpm"),
    }
    cycles = {k: round(v["latency_ns"] / 1.875) for k, v in rows.items()}
    assert cycles == {
        ("copy", "baseline"): 550,
        ("copy", "fpm"): 48,
        ("copy", "psm_inter_bank"): 290,
        ("copy", "psm_intra_bank"): 561,
        ("zero", "baseline"): 270,
        ("zero", "fpm"): 48,
    }
    energy = {k: v["energy_with_io_nj"] for k, v in rows.items()}
    assert energy[("copy", "fpm")] < energy[("copy", "psm_inter_bank")] < energy[("copy", "psm_intra_bank")]
    assert energy[("copy", "psm_intra_bank")] < energy[("copy", "baseline")]
    assert energy[("zero", "fpm")] < energy[("zero", "baseline")]
    fpm = rows[("copy", "fpm")]
    assert fpm["energy_nj"] == fpm["energy_with_io_nj"] and fpm["latency_reduction"] > 10
    base = rows[("copy", "baseline")]
    assert base["energy_with_io_nj"] > base["energy_nj"], "the baseline pays channel I/O"
    r = bulksim("reproduce", "ddr4_policies", "--json", out)
    assert r.returncode == 1 and "--json applies" in r.stderr


def test_a_multi_core_summary_labels_the_ipc_of_all_cores_and_gives_each(tmp_path):
    """The summary of a --copies 2 run once printed the cores' IPCs summed as "IPC"."""
    workload = tmp_path / "w.msc"
    workload.write_text("".join(f"{i % 7} R {0x1000 + 4160 * i:#x} 0x1\n" for i in range(300)))
    out = tmp_path / "s.json"
    r = bulksim("run", "--workload", workload, "--copies", "2", "--json", out)
    assert r.returncode == 0, r.stderr
    stats = json.loads(out.read_text())
    assert f"IPC {stats['ipc']:.3f} of all 2 cores together\n" in r.stdout, r.stdout
    each = ", ".join(f"core {i} {c['ipc']:.3f}" for i, c in enumerate(stats["cores"]))
    assert f"\nper-core IPC        {each}\n" in r.stdout, r.stdout
    assert 0 < stats["cores"][0]["ipc"] < stats["ipc"]
    one = bulksim("run", "--workload", workload)
    assert one.returncode == 0 and "per-core" not in one.stdout and "together" not in one.stdout


def test_stand_in_currents_are_named_in_the_run_summary_and_spec_show(tmp_path):
    trace = tmp_path / "t.trace"
    assert bulksim("trace", "gen", trace, "--pattern", "stream", "--requests", "50").returncode == 0
    note = "note                the energy uses stand-in currents, not this part's own: stand-in: Micron 2Gb"
    r = bulksim("run", "--trace", trace, "--preset", "DDR3_4Gb_x8_1600")
    assert r.returncode == 0 and note in r.stdout, r.stdout
    r = bulksim("run", "--trace", trace, "--preset", "DDR3_2Gb_x8_1066")
    assert r.returncode == 0 and "stand-in" not in r.stdout
    shown = bulksim("spec", "show", "DDR3_4Gb_x8_1600").stdout
    assert "energy currents: stand-in: Micron 2Gb x8 DDR3-1066 currents" in shown
    assert "note: these currents are a stand-in, not this part's own" in shown
    shown = bulksim("spec", "show", "DDR4_8Gb_x8_2400").stdout
    assert "energy currents: Micron MT40A1G8 die B" in shown and "stand-in" not in shown
