"""`bulksim reproduce page-allocation` (Rank Assignment §VI-C) with a shorter instruction count:
each program runs its instructions, under rank_clock a thread whose memory fits its own rank
never leaves it, and when memory suffices both allocators fault exactly once per page touched
(no extra faults)."""

from __future__ import annotations

import pytest

from bulksim.reproduce import page_allocation

INSTRUCTIONS = 2_000_000
#: A small working set: 4 MiB = 1024 pages, all touched by mcf's random reads in 50 k accesses.
SMALL_PAGES = 1024


@pytest.fixture(scope="module")
def rows():
    return page_allocation.run(quick=True, workers=2, instructions=INSTRUCTIONS)


def test_one_row_per_thread_mix_and_allocator(rows):
    assert len(rows) == sum(len(p) for p in page_allocation.MIXES.values()) * len(page_allocation.ALLOCATORS)
    for r in rows:
        # Instructions are accesses x 1000 / MPKI; the gaps between accesses are drawn.
        assert r["instructions"] == pytest.approx(INSTRUCTIONS, rel=0.05)
        assert 0.0 <= r["off_first_two_share"] <= r["off_preferred_share"] <= 1.0
        assert r["preferred_rank"] != r["second_rank"]
        assert r["paper"] == 0.30
        assert r["exec_time_norm"] is None and r["baseline"] == "clock"


def test_memory_that_fits_gives_no_extra_faults_and_stays_on_its_rank(rows):
    # 2 M instructions touch far less than the 4 x 128 MiB: every fault is a first touch.
    for mix in page_allocation.MIXES:
        clock = [r for r in rows if r["workload"] == mix and r["system"] == "clock"]
        ranked = [r for r in rows if r["workload"] == mix and r["system"] == "rank_clock"]
        for c, k in zip(clock, ranked, strict=True):
            assert c["page_faults"] == k["page_faults"]
            assert c["evictions"] == k["evictions"] == 0
            assert k["off_preferred_share"] == 0.0
            if c["stand_in"].startswith("synth-mcf (small"):
                assert c["page_faults"] == SMALL_PAGES
        # The baseline spreads every thread over the ranks.
        assert all(c["off_first_two_share"] > 0.25 for c in clock)


def test_summary_and_render(rows):
    summary = page_allocation.summary(rows)
    assert len(summary) == 4
    for s in summary:
        mine = [r for r in rows if r["workload"] == s["workload"] and r["system"] == s["system"]]
        assert s["max_off_first_two"] == max(r["off_first_two_share"] for r in mine)
    text = page_allocation.render(rows)
    assert "30%" in text and "rank_clock" in text


def test_stand_ins_are_demand_paged(tmp_path):
    trace = tmp_path / "thread-0.trace"
    trace.write_text("bulksim-workload 2\nN 0x10000000 4096\nC 3\nR 0x10000000\nN 0x20000000 64\n")
    page_allocation.demand_paged(trace)
    # Only the header's resident map becomes a plain map; later lines are untouched.
    assert trace.read_text() == "bulksim-workload 2\nA 0x10000000 4096\nC 3\nR 0x10000000\nN 0x20000000 64\n"
