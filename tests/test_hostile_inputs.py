"""Hostile inputs through the CLI (issue #13): each is exit status 1 and one error line that
names the file and the line or record, never a traceback, an abort or a silently wrong run."""

from __future__ import annotations

import gzip
import re

import pytest

import bulksim as bs
from test_cli import bulksim

TOO_LONG = "line longer than 4096 bytes (not a text file?)"


def one_error(r) -> str:
    """The single stderr line of a failed run, without its `error: ` prefix."""
    assert r.returncode == 1, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0].removeprefix("error: ")


def test_bulk_ranges_that_wrap_past_2_pow_64_name_the_line(tmp_path):
    trace = tmp_path / "t.trace"
    for line in ["0,I,0xffffffffffffff00,4096,0", "0,C,0xfffffffffffff000,0x100000,4096"]:
        trace.write_text(f"0,R,0x40\n{line}\n")
        err = one_error(bulksim("run", "--trace", trace))
        assert err.startswith(f"{trace}:2: range runs past the top of the address space (2^64)"), err


def test_a_bulk_range_past_capacity_names_the_line(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("0,R,0\n")
    capacity = bs.run(trace=trace)["bulk"]["usable_bytes"]
    trace.write_text(f"0,R,0\n0,I,{capacity - 4095},4096,1\n")
    err = one_error(bulksim("run", "--trace", trace))
    assert err == (
        f"{trace}:2: init of 4096 bytes at {capacity - 4095:#x} to 1: "
        f"reaches beyond the memory's {capacity} bytes ({capacity:#x})"
    )


@pytest.mark.parametrize("fmt", ["native", "dramsim3", "ramulator"])
def test_a_trace_without_newlines_stops_at_the_line_limit(fmt):
    err = one_error(bulksim("run", "--trace", "/dev/zero", "--trace-format", fmt))
    assert err == f"/dev/zero:1: {TOO_LONG}"


def test_long_lines_in_traces_and_workloads_name_the_line(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("0,R,0x40\n#" + "x" * 4096 + "\n")
    assert one_error(bulksim("run", "--trace", trace)) == f"{trace}:2: {TOO_LONG}"
    work = tmp_path / "w.trace"
    work.write_text("bulksim-workload 1\nC 1\nC " + "1" * 5000 + "\n")
    assert one_error(bulksim("run", "--workload", work)) == f"{work}:3: {TOO_LONG}"


def forkbench_thread0(tmp_path) -> tuple[bytes, object]:
    fb = bs.generate_forkbench(tmp_path / "fb", array_bytes=1 << 16, pages_updated=4, binary=True)
    path = fb / "thread-0.btrace"
    return path.read_bytes(), path


def test_a_binary_workload_with_a_bad_crc_is_refused(tmp_path):
    good, path = forkbench_thread0(tmp_path)
    body = gzip.decompress(good)
    bad = bytearray(good)
    bad[-8] ^= 0xFF  # the CRC-32 of the gzip trailer
    path.write_bytes(bytes(bad))
    run = ("run", "--workload", path.parent)
    err = one_error(bulksim(*run))
    corrupt = "the gzip trailer's CRC-32 or length does not match the data (corrupt file)"
    assert re.fullmatch(rf"{re.escape(str(path))}:\d+: {re.escape(corrupt)}", err), err
    # Cut short, or with bytes after the stream: refused as well.
    path.write_bytes(good[: len(good) // 2])
    assert "the gzip stream is cut short (truncated file)" in one_error(bulksim(*run))
    path.write_bytes(good + b"\0")
    assert one_error(bulksim(*run)).endswith("trailing bytes after the gzip stream")
    # Restored, it runs (the body really is a bulksim workload).
    assert body.startswith(b"BSWL\x02\x00")
    path.write_bytes(good)
    assert bulksim("run", "--workload", path.parent, "--quiet").returncode == 0


def test_a_workload_directory_with_a_gap_is_refused(tmp_path):
    d = tmp_path / "w"
    d.mkdir()
    for i in (0, 2):
        (d / f"thread-{i}.trace").write_text("bulksim-workload 1\nC 5\nX\n")
    err = one_error(bulksim("run", "--workload", d))
    assert err.startswith(f"{d}: thread-2.trace is not part of the workload") and err.endswith("no thread-1")
    with pytest.raises(bs.TraceError, match="no thread-1"):
        bs.run_workload(workload=d)


def test_an_endless_config_file_is_refused(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("0,R,0x40\n")
    limit = "/dev/zero: cannot read config: larger than 1048576 bytes (not a config file?)"
    assert one_error(bulksim("run", "--config", "/dev/zero", "--trace", trace)) == limit
    r = bulksim("config", "check", "/dev/zero")
    assert r.returncode == 1 and limit in r.stdout + r.stderr, (r.stdout, r.stderr)


@pytest.mark.parametrize(
    ("fmt", "text", "line", "byte"),
    [
        ("ramulator-cpu", "5 64\n31 472988046\r41088\n", 2, 13),
        ("msc", "1 R 0x40\x0c0x1\n", 1, 9),
        ("rowclone", "R 40 0 1\r\nR 40\r80 2\n", 2, 5),
    ],
)
def test_a_carriage_return_inside_a_line_is_no_field_separator(tmp_path, fmt, text, line, byte):
    trace = tmp_path / "t.trace"
    trace.write_bytes(text.encode())
    err = one_error(bulksim("run", "--workload", trace, "--workload-format", fmt))
    assert err.startswith(f"{trace}:{line}: a "), err
    assert f") at byte {byte} of the line; fields are separated by spaces or tabs" in err, err
    err = one_error(bulksim("convert", trace, tmp_path / "o.native", "--from", fmt, "--to", "native"))
    assert err.startswith(f"{trace}:{line}: a "), err
