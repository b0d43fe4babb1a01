"""Hostile inputs through the CLI (issue #13): each is exit status 1 and one error line that
names the file and the line or record, never a traceback, an abort or a silently wrong run."""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import resource
import struct
import subprocess
import sys
import threading

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


#: Address space a bounded run may take: an input read without end fails here, not the machine.
BOUNDED_ADDRESS_SPACE = 2 << 30


def _bounded_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (BOUNDED_ADDRESS_SPACE, BOUNDED_ADDRESS_SPACE))


def bulksim_within(seconds: float, *args) -> subprocess.CompletedProcess:
    """`bulksim args`, failing the test (not hanging it, nor exhausting the machine's memory)
    when it runs longer than `seconds` or reaches for more than 2 GiB."""
    command = [sys.executable, "-m", "bulksim.cli", *map(str, args)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=seconds, preexec_fn=_bounded_memory
    )


def _memoryless_record() -> bytes:
    """A ChampSim `input_instr` record of an instruction at 0x401000 without memory operands."""
    return struct.pack("<QBB2s4s6Q", 0x401000, 0, 0, bytes(2), bytes(4), *([0] * 6))


@contextlib.contextmanager
def endless_fifo(path):
    """A named pipe at `path` fed memory-less ChampSim records until its reader goes away."""
    os.mkfifo(path)
    chunk = _memoryless_record() * 4096

    def feed():
        try:
            with open(path, "wb") as f:
                while True:
                    f.write(chunk)
        except OSError:  # the reader closed the pipe: done
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        yield path
    finally:
        if feeder.is_alive():  # nobody opened the pipe: let the feeder's open return
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        feeder.join(timeout=10)


def test_zeros_are_not_a_champsim_trace(tmp_path):
    """`/dev/zero` once ran for ever as ChampSim; now detection refuses it and, read as
    ChampSim, its first record is refused."""
    not_detected = "/dev/zero: cannot tell the workload format from the content"
    assert one_error(bulksim_within(60, "run", "--workload", "/dev/zero")).startswith(not_detected)
    out = tmp_path / "o.native"
    err = one_error(bulksim_within(60, "convert", "/dev/zero", out, "--to", "native"))
    assert err.startswith(not_detected), err
    zero_record = "/dev/zero:1: 64 zero bytes, not a ChampSim `input_instr` record"
    err = one_error(bulksim_within(60, "run", "--workload", "/dev/zero", "--workload-format", "champsim"))
    assert err.startswith(zero_record), err
    err = one_error(bulksim_within(60, "convert", "/dev/zero", out, "--from", "champsim", "--to", "native"))
    assert err.startswith(zero_record), err


def test_an_endless_champsim_input_stops_at_the_run_and_conversion_limits(tmp_path):
    """Records without memory operands advance the run as they are read, so an endless input
    stops at sim.max_cycles; a conversion stops at --max-instructions."""
    with endless_fifo(tmp_path / "endless.champsimtrace") as fifo:
        r = bulksim_within(
            60, "run", "--workload", fifo, "--workload-format", "champsim", "--set", "sim.max_cycles=100000"
        )
    err = one_error(r)
    assert err.startswith(f"{fifo}:") and "past sim.max_cycles (100000 core cycles)" in err, err
    with endless_fifo(tmp_path / "endless2.champsimtrace") as fifo:
        r = bulksim_within(
            60, "convert", fifo, tmp_path / "o.native", "--from", "champsim", "--to", "native",
            "--max-instructions", "100000",
        )  # fmt: skip
    err = one_error(r)
    assert err.startswith(f"{fifo}:"), err
    assert "the input stands for more than 100000 instructions, the conversion's limit" in err, err


def test_a_conversion_within_the_instruction_limit_completes(tmp_path):
    trace = tmp_path / "t.champsimtrace"
    trace.write_bytes(_memoryless_record() * 100)
    out = tmp_path / "o.msc"
    args = ("convert", trace, out, "--from", "champsim", "--to", "msc")
    assert bulksim(*args, "--max-instructions", "100").returncode == 0
    err = one_error(bulksim(*args, "--max-instructions", "99"))
    assert err.startswith(f"{trace}:100: the input stands for more than 99 instructions"), err
    with pytest.raises(bs.api.ArgumentError, match="^max_instructions: 0 is out of range"):
        bs.api.convert(trace, out, "msc", from_="champsim", max_instructions=0)


def test_a_stand_in_spec_is_read_up_to_the_config_size_limit(tmp_path):
    spec = tmp_path / "big.toml"
    spec.write_bytes(b"bulksim_standin = 1\n" + b"#" * (1 << 20) + b"\n")
    limit = "larger than 1048576 bytes (not a stand-in spec?)"
    run = ("run", "--workload-format", "standin", "--workload")
    assert one_error(bulksim(*run, spec)) == f"{spec}: {limit}"
    assert one_error(bulksim_within(60, *run, "/dev/zero")) == f"/dev/zero: {limit}"


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
