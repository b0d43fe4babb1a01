"""The fuzz suite in the tests: a fixed-seed campaign over the ten input kinds (tests/fuzz/),
failing on any traceback, panic, abort, hang or silently wrong result, with the table of
outcomes printed; plus checks that the oracle accepts valid inputs and reads the formats the
way the documentation describes. `make fuzz` runs the long campaign."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz import FAILURES, KINDS, Limits, kinds, oracle, run_campaign  # noqa: E402
from tests.fuzz.campaign import reproduce_line  # noqa: E402
from tests.fuzz.runner import CLEAN_ERROR, OK, Result, classify  # noqa: E402

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
    with pytest.raises(oracle.Malformed, match="forks"):
        oracle.workload_work({0: oracle.read_workload_text(b"bulksim-workload 1\nF 3\n")})


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
