"""The fuzz suite in the tests: a fixed-seed campaign over every input kind (tests/fuzz/),
failing on any traceback, panic, abort, hang or silently wrong result, with the table of
outcomes printed; plus checks that the oracle accepts valid inputs and reads the formats the
way the documentation describes. `make fuzz` runs the long campaign."""

from __future__ import annotations

import gzip
import lzma
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz import FAILURES, KINDS, Limits, kinds, oracle, run_campaign  # noqa: E402
from tests.fuzz.campaign import reproduce_line  # noqa: E402
from tests.fuzz.runner import CLEAN_ERROR, OK, Result, _limit_resources, classify  # noqa: E402

#: Cases per kind in the test suite (about two minutes on two cores); `make fuzz` runs 300.
CASES_PER_KIND = 25
SEED = 13


def _report(campaign) -> str:
    lines = [campaign.table()]
    if campaign.failures:
        lines.append("failing cases (kind, seed, case, reproduce):")
        for o in sorted(campaign.failures, key=lambda o: o.case.name):
            lines.append(
                f"  {o.case.kind} seed {o.case.seed} case {o.case.index}: {o.category}: {o.signature}"
            )
            lines.append(f"      {o.case.what[:100]}")
            lines.append(f"      {reproduce_line(o)}")
    return "\n".join(lines)


def test_fuzz_campaign_has_no_tracebacks_panics_aborts_hangs_or_wrong_results(capsys):
    campaign = run_campaign(KINDS, CASES_PER_KIND, SEED, Limits(timeout_s=15.0), jobs=2)
    report = _report(campaign)
    with capsys.disabled():
        print(f"\nfuzz: {len(campaign.outcomes)} cases, seed {SEED}, {campaign.seconds:.0f} s\n{report}")
    assert len(campaign.outcomes) == CASES_PER_KIND * len(KINDS)
    if campaign.failures:
        pytest.fail(f"{len(campaign.failures)} failing fuzz cases\n{report}", pytrace=False)


def test_oracle_accepts_every_valid_input(monkeypatch):
    """Unmutated inputs: bulksim must accept them and agree with the independent reading, so
    the oracle raises no false alarms (argument errors of the CLI kinds aside)."""
    monkeypatch.setattr(kinds, "VALID_SHARE", 1.0)
    data_kinds = [k for k in KINDS if k not in ("cli_args", "results_db")]
    campaign = run_campaign(data_kinds, 4, SEED, Limits(timeout_s=60.0), jobs=2)
    bad = [o for o in campaign.outcomes if o.category != OK]
    if bad:
        lines = [f"{o.case.name}: {o.category}: {o.signature} {o.detail[:200]}" for o in bad]
        pytest.fail("valid inputs not accepted as read:\n" + "\n".join(lines), pytrace=False)


def test_request_trace_reader_counts_what_the_docs_define():
    text = b"# c\n10,R,0x40\n\n 12 , W , 128 \n5,C,0x1000,0x9000,4096\n6,I,0x2000,100,0xff\r\n"
    work = oracle.read_request_trace(text, "native")
    assert (work.reads, work.writes, work.copies, work.inits) == (1, 1, 1, 1)
    assert (work.bytes_copied, work.bytes_initialized) == (4096, 100)
    # 4096 bytes from 0x9000 are 64 lines; 100 bytes from 0x2000 are 2.
    assert work.bulk_dst_lines == 66
    assert work.max_cycle == 12 and work.addresses == [0x40, 128]
    assert oracle.read_request_trace(b"0x40 READ 10\n0x80 WRITE 3\n", "dramsim3").max_cycle == 10
    assert oracle.read_request_trace(b"LD 0x40\nST 0x80\nST 0\n", "ramulator").writes == 2
    for bad in [
        b"1,R\n",
        b"1,R,0x\n",
        b"1,R,18446744073709551616\n",
        b"1,C,0,64,128\n",
        b"1,I,0,64,256\n",
        b"1,C,0xffffffffffffffff,0,2\n",
        b"1,R,+5\n",
        b"1,r,0\n",
    ]:
        with pytest.raises(oracle.Malformed):
            oracle.read_request_trace(bad, "native")


def test_workload_readers_count_instructions_and_read_every_gzip_member():
    text = b"bulksim-workload 1\nA 0x1000 4096\nC 10\nL 0x1000\nS 0x1008\nF 1\nW\nX\nC 99\n"
    child = b"bulksim-workload 1 child\nM 0x1000 0x1800 64\nI 0x1000 8 0\n"
    work = oracle.workload_work({0: oracle.read_workload_text(text), 1: oracle.read_workload_text(child)})
    # Parent: A, 10 compute, L, S, F = 14 (nothing after X); child: M, I = 2.
    assert (work.instructions, work.forks, work.processes) == (16, 1, 2)
    first = gzip.compress(b"BSWL\x01\x00C\x05", mtime=0)
    second = gzip.compress(b"L\x80\x20", mtime=0)
    thread = oracle.read_workload_binary(first + second)
    assert thread.events == [("C", (5,)), ("L", (0x1000,))]
    crc_broken = first[:-8] + bytes(4) + first[-4:]
    with pytest.raises(oracle.Malformed, match="gzip"):
        oracle.read_workload_binary(crc_broken)
    with pytest.raises(oracle.Malformed, match="64 bits"):
        oracle.read_workload_binary(gzip.compress(b"BSWL\x01\x00L" + b"\xff" * 9 + b"\x7f"))
    with pytest.raises(oracle.Malformed, match="not an unstarted child"):
        oracle.workload_work({0: oracle.read_workload_text(b"bulksim-workload 1\nF 3\n")})


def test_foreign_readers_count_what_docs_workloads_md_defines():
    # The examples of docs/workloads.md. msc: gaps 2 + 5 + 0, three events, the resident map.
    msc = oracle.read_foreign(
        b"2 R 0x88b38078 0x3067fd11\n5 R 0x310a47b8 0x3067eac9\n0 W 0x88b38084\n", "msc"
    )
    assert (msc.reads, msc.writebacks, msc.instructions) == (2, 1, 7 + 3 + 1)
    # ramulator-cpu: gaps 0 + 9 + 3; the third line is a read and a write-back (two events).
    ram = oracle.read_foreign(b"0 9618752\n9 89618496\n3 89619008 4096\n", "ramulator-cpu")
    assert (ram.reads, ram.writebacks, ram.instructions) == (3, 1, 12 + 4 + 1)
    # rowclone: gaps 0 + 5 + 1349 + 711; R, R with a write-back (2), C, S.
    rc = oracle.read_foreign(
        gzip.compress(
            b"R 7c025cc0 0 0\nR 7c025d00 7f0aafc0 5\nC 79e9d000 1fcff000 4096 1349\nS 7a556000 0 4096 711\n"
        ),
        "rowclone",
    )
    assert (rc.reads, rc.writebacks, rc.copies, rc.inits, rc.instructions) == (2, 1, 1, 1, 2065 + 5 + 1)
    assert oracle.read_foreign(b"# c\n\n1 W 40\r\n", "msc").instructions == 3
    for fmt, bad in [
        ("msc", b"2 R 0x80\n"),  # the docs' own example of an error
        ("msc", b"1 R 0x1000000000000 0x0\n"),  # at 2^48
        ("msc", b"1099511627777 W 0x40\n"),  # gap above 2^40
        ("msc", b"+1 W 0x40\n"),
        ("msc", b"1 w 0x40\n"),
        ("ramulator-cpu", b"1 40 50 60\n"),
        ("ramulator-cpu", b"1 0xg\n"),
        ("rowclone", b"C 1000 1800 4096 0\n"),  # overlapping copy
        ("rowclone", b"C 1000 9000 0 0\n"),  # a copy of 0 bytes
        ("rowclone", b"S 1000 1ff 64 0\n"),  # above a byte in either base
        ("rowclone", b"S ffffffffffc0 0 128 0\n"),  # reaches past 2^48
        ("rowclone", b"R 40 0 1 2\n"),
        ("msc", b"1 W " + b"0" * 5000 + b"\n"),  # a line above 4,096 bytes (docs/errors.md)
        ("msc", gzip.compress(b"1 W 40\n")[:-1]),
        ("msc", b"1\vW 40\n"),  # fields are separated by spaces or tabs only
        ("ramulator-cpu", b"31 472988046\r41088\n"),  # a CR inside the line is no separator
    ]:
        with pytest.raises(oracle.Malformed):
            oracle.read_foreign(bad, fmt)
    assert oracle.read_foreign(b"31 472988046 41088\r\n", "ramulator-cpu").records == 1
    for fmt, undecided in [
        ("rowclone", b"S 1000 100 64 0\n"),  # 0x100 does not fit a byte, decimal 100 does
        ("msc", gzip.compress(b"1 W 40\n") + bytes(4)),
    ]:
        with pytest.raises(oracle.Unspecified):
            oracle.read_foreign(undecided, fmt)


def test_champsim_reader_counts_operands_and_reads_every_xz_stream():
    def record(sources=(0, 0, 0, 0), destinations=(0, 0), flags=(0, 0)) -> bytes:
        return struct.pack("<QBB2s4s6Q", 0x400000, *flags, bytes(2), bytes(4), *destinations, *sources)

    # No operand: one instruction; 2 loads + 1 store: three; plus the resident map.
    raw = record() + record(sources=(0x1000, 0, 0x1000, 0), destinations=(0, 0x2000), flags=(1, 1))
    work = oracle.read_foreign(raw, "champsim")
    assert (work.gaps, work.loads, work.stores, work.instructions) == (1, 2, 1, 1 + 3 + 1)
    more = record(sources=(0x40, 0, 0, 0))
    two_streams = lzma.compress(raw) + bytes(4) + lzma.compress(more)  # padding between streams
    assert oracle.read_foreign(two_streams, "champsim").loads == 3
    for bad in [raw[:-1], record(sources=(1 << 48, 0, 0, 0)), lzma.compress(raw) + b"garbage", bytes(64)]:
        with pytest.raises(oracle.Malformed):
            oracle.read_foreign(bad, "champsim")


def test_classification_of_outcomes():
    limits = Limits()

    def category(code, err):
        return classify(Result([], code, "", err, 0.0), limits)[0]

    assert category(0, "") == OK
    assert category(1, "error: t.trace:3: bad request type\n") == CLEAN_ERROR
    assert category(
        2, "Usage: bulksim run [OPTIONS]\nTry 'bulksim run --help'\n\nError: No such option\n"
    ) == (CLEAN_ERROR)
    assert category(1, 'Traceback (most recent call last):\n  File "x.py", line 1, in f\nKeyError: 1\n') == (
        "traceback"
    )
    assert category(101, "thread 'main' panicked at src/a.rs:3:5:\nboom\n") == "panic"
    assert category(-6, "") == "abort"
    assert category(134, "memory allocation of 99999 bytes failed\n") == "abort"
    assert category(None, "") == "hang"
    assert category(0, "  failed: point: OSError: [Errno 27] File too large\n") == "hang"
    assert category(1, "") == "messy-error"
    assert FAILURES == {"traceback", "panic", "abort", "hang", "wrong"}
    # Killed at the CPU-time limit: a hang, not an abort (a signal below the limit is one).
    cpu_killed = Result([], -signal.SIGXCPU, "", "", limits.timeout_s + 0.5)
    assert classify(cpu_killed, limits)[0] == "hang"
    assert classify(Result([], -signal.SIGXCPU, "", "", 0.1), limits)[0] == "abort"


def test_a_command_is_stopped_by_its_cpu_time_not_its_wall_time():
    # A busy loop under a 1 CPU-second limit dies of SIGXCPU within a few seconds; the
    # machine's load can stretch that wall time, never the CPU time the limit counts.
    proc = subprocess.run(
        [sys.executable, "-c", "while True: pass"],
        preexec_fn=_limit_resources(Limits(timeout_s=1.0)),
        timeout=60,
        check=False,
    )
    assert proc.returncode == -signal.SIGXCPU
