"""Other tools' workload formats through the front end: the shared real traces (MSC, Ramulator
CPU, RowClone forkset) streamed with the counts their READMEs give (a visible skip for each one
absent) and run through the full system with their format detected, copies on their own cores,
and ``bulksim convert``. Every expected number follows from the traces' READMEs: reads and
write-backs below the caches are one 64-byte line each over the channel; the system counts
each record's events as instructions, plus one for the resident map that opens every foreign
trace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import bulksim
from bulksim import api
from bulksim.paths import shared_traces_dir
from bulksim.workloads.convert import convert

ROOT = Path(__file__).resolve().parents[1]
LINE = 64


def trace(sub: str, name: str) -> Path:
    path = shared_traces_dir() / sub / name
    if not path.exists():
        pytest.skip(f"{path} is absent (set BULKSIM_SHARED_TRACES to the shared traces folder)")
    return path


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )


def run_json(tmp_path: Path, *args) -> tuple[dict, str]:
    out = tmp_path / "stats.json"
    r = cli("run", *args, "--json", out)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


def test_comm1_runs_below_the_caches_with_its_format_detected(tmp_path):
    stats, out = run_json(tmp_path, "--workload", trace("msc", "comm1"))
    assert "(format msc, detected from the content; 1 copy)" in out
    assert stats["traffic"]["read_bytes"] == LINE * 76_890
    assert stats["traffic"]["write_bytes"] == LINE * 23_110
    assert stats["traffic"]["copy_bytes"] == stats["traffic"]["init_bytes"] == 0
    # The README's 11,938,296 counts each record as an instruction already.
    assert stats["instructions"] == 11_938_296 + 1
    assert stats["os"]["page_faults"] == 0


def test_two_copies_of_comm1_each_run_as_one_does(tmp_path):
    one, _ = run_json(tmp_path, "--workload", trace("msc", "comm1"))
    two = api.run_workload(workload=trace("msc", "comm1"), fmt="msc", copies=2)
    assert len(two["cores"]) == 2
    assert [t["instructions"] for t in two["threads"]] == [one["instructions"]] * 2
    assert two["traffic"]["read_bytes"] == 2 * one["traffic"]["read_bytes"]
    # Own address spaces: the same addresses, each page made present once per copy.
    assert one["os"]["populated"] > 0
    assert two["os"]["populated"] == 2 * one["os"]["populated"]


def test_a_ramulator_cpu_trace_runs_with_its_write_backs(tmp_path):
    stats, out = run_json(tmp_path, "--workload", trace("ramulator-cpu", "403.gcc.gz"))
    assert "format ramulator-cpu, detected" in out
    assert stats["traffic"]["read_bytes"] == LINE * 45_675
    assert stats["traffic"]["write_bytes"] == LINE * 4_349
    # README instructions count a line as one; its write-back is one more event here.
    assert stats["instructions"] == 203_728_525 + 4_349 + 1


FORKSET_COPIED = 21_787 * 4096


@pytest.fixture(scope="module")
def forkset_runs(tmp_path_factory):
    path = trace("rowclone", "trace.forkset-rc.gz")
    runs = {}
    for mechanism in ("cpu", "rowclone"):
        runs[mechanism], out = run_json(
            tmp_path_factory.mktemp(mechanism),
            "--workload",
            path,
            "--set",
            f'system.bulk_mechanism="{mechanism}"',
        )
        assert "format rowclone, detected" in out
    return runs


def test_forkset_copies_move_no_channel_data_under_rowclone(forkset_runs):
    cpu, rowclone = forkset_runs["cpu"], forkset_runs["rowclone"]
    for stats in (cpu, rowclone):
        # Reads of lines the CPU copy loop left in the cache are hits (none under RowClone,
        # which copies in DRAM); every write-back reaches memory.
        hits = stats["cache"]["l1"]["trace_hits"]
        assert stats["traffic"]["read_bytes"] == LINE * (145_129 - hits)
        assert stats["traffic"]["write_bytes"] == LINE * 136_937
        # Gaps of R (53,136,484) and C/S records (29,417,215), one per read, write-back,
        # copy and initialization, one for the resident map.
        assert stats["instructions"] == 53_136_484 + 29_417_215 + 145_129 + 136_937 + 21_787 + 185 + 1
        assert stats["memcpy_ops"] == 21_787
        assert stats["meminit_ops"] == 185
    # RowClone copies and zeroes inside the DRAM chips: nothing crosses the channel.
    assert rowclone["traffic"]["copy_bytes"] == 0
    assert rowclone["traffic"]["init_bytes"] == 0
    # A CPU copy loop reads every source line and fetches every destination line, and writes
    # destinations back as they leave the cache: between 2 and 3 times the bytes copied.
    assert 2 * FORKSET_COPIED <= cpu["traffic"]["copy_bytes"] <= 3 * FORKSET_COPIED
    assert cpu["core_cycles"] > rowclone["core_cycles"]
    assert rowclone["cache"]["l1"]["trace_hits"] == 0
    assert cpu["cache"]["l1"]["trace_hits"] > 0


#: Each shared trace's counts as its README gives them: (folder, file, format, reads,
#: writes or write-backs, copies, initializations, instructions as the README counts them).
README_COUNTS = [
    ("msc", "comm1", "msc", 76_890, 23_110, 0, 0, 11_938_296),
    ("msc", "comm2", "msc", 66_606, 33_394, 0, 0, 7_628_165),
    ("ramulator-cpu", "403.gcc.gz", "ramulator-cpu", 45_675, 4_349, 0, 0, 203_728_525),
    ("ramulator-cpu", "435.gromacs.gz", "ramulator-cpu", 218_625, 63_260, 0, 0, 200_071_768),
    ("ramulator-cpu", "445.gobmk.gz", "ramulator-cpu", 107_852, 70_252, 0, 0, 201_705_959),
    ("ramulator-cpu", "456.hmmer.gz", "ramulator-cpu", 565_407, 540_737, 0, 0, 199_984_232),
    ("ramulator-cpu", "458.sjeng.gz", "ramulator-cpu", 71_977, 50_246, 0, 0, 201_109_763),
    ("ramulator-cpu", "464.h264ref.gz", "ramulator-cpu", 252_571, 122_735, 0, 0, 202_454_812),
    # Instructions: the R records' gaps (53,136,484) plus the C and S records' fifth fields
    # (29,417,215), which the README presumes are gaps too; it counts no record as one.
    ("rowclone", "trace.forkset-rc.gz", "rowclone", 145_129, 136_937, 21_787, 185, 53_136_484 + 29_417_215),
]


@pytest.mark.parametrize(
    "sub, name, fmt, reads, writes, copies, inits, instructions",
    README_COUNTS,
    ids=[name for _, name, *_ in README_COUNTS],
)
def test_shared_traces_stream_with_the_counts_their_readmes_give(
    tmp_path, sub, name, fmt, reads, writes, copies, inits, instructions
):
    # One streaming pass of the reader, into a native request trace: every read, write-back,
    # copy and initialization is one request there, counting one instruction on top of the
    # gaps before it.
    out = tmp_path / "out.csv"
    done = convert(trace(sub, name), out, "native")
    assert done.input_format == fmt  # detected from the content
    assert (done.reads, done.writes, done.copies, done.inits) == (reads, writes, copies, inits)
    records = reads + writes + copies + inits
    if fmt == "msc":
        # The README counts each record as one instruction already.
        assert done.instructions == instructions
    elif fmt == "ramulator-cpu":
        # The README counts a line (a read) as one instruction; its write-back rides along.
        assert done.instructions == instructions + writes
    else:
        assert done.instructions == instructions + records
        # Every copy is one 4 KB page (the README's 89 MB).
        copied = [int(line.rsplit(",", 1)[1]) for line in out.open() if ",C," in line]
        assert copied == [4096] * copies


def test_malformed_foreign_traces_end_in_one_line_naming_file_and_record(tmp_path):
    bad = tmp_path / "bad.msc"
    bad.write_text("1 R 0x40 0x1\n2 R 0x80\n")
    r = cli("run", "--workload", bad, "--workload-format", "msc")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"error: {bad}:2: a read takes 4 fields; expected `<instructions> R <hex address> <hex pc>` or "
        "`<instructions> W <hex address>` (msc format), got '2 R 0x80'"
    ]
    prose = tmp_path / "prose.txt"
    prose.write_text("hello world\n")
    r = cli("run", "--workload", prose)
    assert r.returncode == 1
    assert "cannot tell the workload format from the content" in r.stderr
    assert "--workload-format" in r.stderr
    with pytest.raises(bulksim.TraceError, match=r"bad\.msc:2: a read takes 4 fields"):
        api.run_workload(workload=bad, fmt="msc")


def test_convert_round_trips_and_reports(tmp_path):
    src = tmp_path / "small.msc"
    src.write_text("2 R 0x88b38078 0x3067fd11\n0 W 0x310a47b8\n7 R 0x40 0x1\n")
    mid, back = tmp_path / "mid.trace", tmp_path / "back.msc"
    r = cli("convert", src, mid, "--to", "bulksim")
    assert r.returncode == 0, r.stderr
    assert "(msc) ->" in r.stdout and "2 reads, 1 writes" in r.stdout
    done = convert(mid, back, "msc")
    assert (done.reads, done.writes, done.instructions) == (2, 1, 12)
    assert back.read_text() == "2 R 0x88b38078 0x0\n0 W 0x310a47b8\n7 R 0x40 0x0\n"


def test_convert_through_a_configured_cache_and_bad_arguments(tmp_path):
    program = tmp_path / "p.trace"
    # Four lines 1 KiB apart in a 1 KiB direct-mapped cache share a set: every load misses.
    program.write_text(
        "bulksim-workload 2\n" + "".join(f"L {i * 1024 % 4096:#x}\n" for i in range(8)) + "X\n"
    )
    out = tmp_path / "o.csv"
    r = cli(
        "convert",
        program,
        out,
        "--to",
        "native",
        "--set",
        "cache.level.0.size_kb=1",
        "--set",
        "cache.level.0.ways=1",
    )
    assert r.returncode == 0, r.stderr
    assert "through the cache filter" in r.stdout
    assert out.read_text().splitlines() == [f"{i},R,{i * 1024 % 4096:#x}" for i in range(8)]
    # Four ways hold all four lines: four misses, then hits.
    r = cli(
        "convert",
        program,
        out,
        "--to",
        "native",
        "--set",
        "cache.level.0.size_kb=4",
        "--set",
        "cache.level.0.ways=4",
    )
    assert r.returncode == 0, r.stderr
    assert out.read_text().splitlines() == [f"{i},R,{i * 1024:#x}" for i in range(4)]
    for args, message in [
        (
            ("--to", "rowclone"),
            "--to rowclone: expected one of bulksim, msc, ramulator-cpu, native, dramsim3",
        ),
        (("--to", "msc", "--from", "foo"), "--from foo: expected one of bulksim, msc,"),
        (("--to", "bulksim", "--set", "cache.level.0.ways=1"), "a cache configuration applies only from"),
    ]:
        r = cli("convert", program, out, *args)
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], r.stderr


def test_workload_options_and_mix_arguments_are_checked(tmp_path):
    # Small files the test writes: they run without the shared traces.
    t = tmp_path / "t.msc"
    t.write_text("2 R 0x1000 0x1\n0 W 0x2000\n")
    out = tmp_path / "s.json"
    r = cli("run", "--workload", t, "--workload-format", "msc", "--copies", "2", "--json", out)
    assert r.returncode == 0, r.stderr
    assert "(format msc, given; 2 copies)" in r.stdout
    stats = json.loads(out.read_text())
    assert [c["instructions"] for c in stats["cores"]] == [2 + 2 + 1] * 2
    r = cli("run", "--trace", t, "--copies", "2")
    assert r.returncode != 0 and "--workload-format and --copies go with --workload" in r.stderr
    r = cli("run", "--workload", t, "--copies", "0")
    assert r.returncode != 0 and "--copies" in r.stderr
    with pytest.raises(api.ArgumentError, match=r"programs: expected 1 to 1024 \(path, format\) pairs"):
        api.run_mix(programs=[])
    with pytest.raises(api.ArgumentError, match=r"fmt='usimm': expected one of bulksim, msc"):
        api.run_mix(programs=[(t, "usimm")])
    two = api.run_mix(programs=[(t, "msc"), (t, None)])
    assert [th["copy"] for th in two["threads"]] == [0, 1]
