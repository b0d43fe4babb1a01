"""Bulk copies keep memory coherent with dirty cache lines (RowClone section 4.2.2): a copy
issued while the source's newest bytes sit dirty in the caches must still deliver them to the
destination, under every mechanism. The expected bytes are computed here from the workload
format's store rule, not read from the simulator's source region."""

from __future__ import annotations

import pytest

from bulksim import api
from bulksim.reproduce.forkbench import CONFIG as PAPER_SYSTEM

PAGE = 4096
LINE = 64
SRC, DST = 0x2000_0000, 0x3000_0000
MISALIGNED = (SRC + 2 * PAGE + 40, DST + 2 * PAGE + 8, 3000)  # src, dst, bytes

# Sub-page pieces (the misaligned copy) go to the memory-side mechanisms only when
# system.bulk_offload_min_bytes lets them; 1 sends every piece, so their coherence is tested too.
EVERY_PIECE = "system.bulk_offload_min_bytes=1"
MECHANISMS = {
    "cpu": ["system.bulk_mechanism=cpu", "os.allocator=scatter"],
    "mc_dma": ["system.bulk_mechanism=mc_dma", "os.allocator=scatter"],
    "mc_dma_every_piece": ["system.bulk_mechanism=mc_dma", "os.allocator=scatter", EVERY_PIECE],
    "rowclone": ["system.bulk_mechanism=rowclone", "os.allocator=subarray_aware"],
    "rowclone_every_piece": ["system.bulk_mechanism=rowclone", "os.allocator=subarray_aware", EVERY_PIECE],
    "rowclone_psm": [
        "system.bulk_mechanism=rowclone",
        "os.allocator=subarray_aware",
        "bulk.fpm=false",
        EVERY_PIECE,
    ],
}


def _stored(nth: int) -> bytes:
    """The 8 bytes of thread 0's nth store (from 1): (thread + 1) << 48 | nth, little-endian."""
    return ((1 << 48) | nth).to_bytes(8, "little")


def _workload(tmp_path):
    """Thread 0 maps two 4-page regions, stores to every line of the source's first three pages
    (so they are dirty in the caches), copies two whole pages and then a misaligned range,
    and exits. Returns the workload directory and the expected source image."""
    src_image = bytearray(3 * PAGE)  # pages appear zeroed on first touch
    events = [f"A {SRC:#x} {4 * PAGE}", f"A {DST:#x} {4 * PAGE}"]
    for i in range(3 * PAGE // LINE):
        events.append(f"S {SRC + i * LINE:#x}")
        src_image[i * LINE : i * LINE + 8] = _stored(i + 1)
    events.append(f"M {SRC:#x} {DST:#x} {2 * PAGE}")
    events.append(f"M {MISALIGNED[0]:#x} {MISALIGNED[1]:#x} {MISALIGNED[2]}")
    events.append("X")
    d = tmp_path / "coherence"
    d.mkdir()
    (d / "thread-0.trace").write_text("bulksim-workload 1\n" + "\n".join(events) + "\n")
    return d, bytes(src_image)


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_copies_carry_dirty_source_lines(tmp_path, mechanism):
    workload, src_image = _workload(tmp_path)
    src, dst, n = MISALIGNED
    stats, (aligned, misaligned, source) = api.run_workload_read(
        PAPER_SYSTEM,
        workload=workload,
        overrides=MECHANISMS[mechanism],
        regions=[(0, DST, 2 * PAGE), (0, dst, n), (0, SRC, 3 * PAGE)],
    )
    assert source == src_image, "the source kept its stores (its fourth page was never touched)"
    assert aligned == src_image[: 2 * PAGE], "the page-aligned copy has the dirty source bytes"
    assert misaligned == src_image[src - SRC : src - SRC + n], "the misaligned copy too"


def _stored_by(thread: int, nth: int) -> bytes:
    return (((thread + 1) << 48) | nth).to_bytes(8, "little")


def _fork_workload(tmp_path, pages: int = 3):
    """Thread 0 stores to every line of `pages` pages (dirty in the caches), forks thread 1 and
    waits; the child stores once into each page (bytes 8-15), so each page is copied on write
    while the parent's lines are still dirty. Returns the directory and the child's expected
    image of the region."""
    parent = [f"A {SRC:#x} {pages * PAGE}"]
    image = bytearray(pages * PAGE)
    for i in range(pages * PAGE // LINE):
        parent.append(f"S {SRC + i * LINE:#x}")
        image[i * LINE : i * LINE + 8] = _stored_by(0, i + 1)
    parent += ["F 1", "W", "X"]
    child = []
    for p in range(pages):
        child.append(f"S {SRC + p * PAGE + 8:#x}")
        image[p * PAGE + 8 : p * PAGE + 16] = _stored_by(1, p + 1)
    child.append("X")
    d = tmp_path / "cow"
    d.mkdir()
    (d / "thread-0.trace").write_text("bulksim-workload 1\n" + "\n".join(parent) + "\n")
    (d / "thread-1.trace").write_text("bulksim-workload 1 child\n" + "\n".join(child) + "\n")
    return d, bytes(image)


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_copy_on_write_of_dirty_pages(tmp_path, mechanism):
    pages = 3
    workload, child_image = _fork_workload(tmp_path, pages)
    stats, (child,) = api.run_workload_read(
        PAPER_SYSTEM,
        workload=workload,
        overrides=MECHANISMS[mechanism],
        regions=[(1, SRC, pages * PAGE)],
    )
    assert stats["os"]["cow_copies"] == pages
    assert child == child_image, "the child's copies hold the parent's dirty bytes and its own"
    if mechanism.startswith("rowclone"):
        # The copies ran in DRAM, so the parent's dirty lines reached them only through the
        # memory controller's coherence work (RowClone section 4.2.2).
        in_dram = "psm_bytes" if mechanism == "rowclone_psm" else "fpm_bytes"
        assert stats["memory"]["bulk"][in_dram] >= pages * PAGE, stats["memory"]["bulk"]


def test_read_back_rejects_bad_regions(tmp_path):
    workload, _ = _workload(tmp_path)
    with pytest.raises(ValueError, match=r"regions\[0\]: length 1048577 above the limit"):
        api.run_workload_read(workload=workload, regions=[(0, SRC, (1 << 20) + 1)])
    with pytest.raises(ValueError, match=r"regions\[1\]: .*expected \(thread, vaddr, length\)"):
        api.run_workload_read(workload=workload, regions=[(0, SRC, 8), (0, -1, 8)])


def test_read_back_of_unmapped_memory_or_a_missing_thread_is_none(tmp_path):
    workload, src_image = _workload(tmp_path)
    _, read = api.run_workload_read(
        PAPER_SYSTEM,
        workload=workload,
        regions=[(0, SRC, 8), (0, 0x10, 8), (5, SRC, 8), (0, SRC + 3 * PAGE - 4, 8)],
    )
    # The source's fourth page was mapped but never touched: no frame, so no bytes.
    assert read == [src_image[:8], None, None, None]
