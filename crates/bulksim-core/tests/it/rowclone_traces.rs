//! Post-LLC traces with the kernel's page copies and initializations (the rowclone format's
//! `C` and `S` records) in the full system: each record's destination page is allocated when
//! the record happens, a copy's from the source's subarray under `subarray_aware` (the
//! RowClone paper's Section 4.3.1), so FPM applies; and a trace read of a line that bulk work
//! put in the caches (a `cpu` copy's destination, RowClone-ZI's zero lines) is a hit, while a
//! trace write-back takes the line out of them.

use crate::common;
use bulksim_core::system::run_opened_workload;
use bulksim_core::system::stats::SystemStats;
use bulksim_core::workload::source::Workload;
use common::*;
use std::path::Path;

const PAGE: u64 = 4096;

fn run(path: &Path, more: &[&str]) -> SystemStats {
    let config = paper_system(more);
    let w = Workload::open(path, None, 1).unwrap();
    run_opened_workload(&config, w, path, None, None).unwrap().0
}

fn trace(name: &str, text: &str) -> std::path::PathBuf {
    let d = dir("rowclone-traces", name);
    let path = d.join("trace");
    std::fs::write(&path, text).unwrap();
    path
}

const RC: &[&str] = &[
    "system.bulk_mechanism=\"rowclone\"",
    "os.allocator=\"subarray_aware\"",
];

/// Eight pages copied into one destination page from eight sources, as forkset's recycled
/// frames do (21,787 copies into 2,672 pages): each copy writes a page allocated then, in its
/// source's subarray, so every one is FPM; with `keep` only the first copy (the page's first
/// touch) is placed there and the rest land wherever that was.
#[test]
fn a_recycled_destination_is_allocated_anew_in_each_sources_subarray() {
    let dst = 0x4000_0000u64;
    let mut text = String::new();
    for k in 0..8u64 {
        let src = 0x1000_0000 + k * 0x10_0000;
        text += &format!("R {src:x} 0 10\nC {dst:x} {src:x} 4096 100\n");
    }
    let path = trace("recycled", &text);
    let fresh = run(&path, RC);
    assert_eq!(fresh.os.copy_placements, 8);
    assert_eq!(fresh.os.copy_placements_same_subarray, 8);
    // The first copy's page was never present: nothing to give back.
    assert_eq!(fresh.os.renewed_pages, 7);
    assert_eq!(fresh.memory.bulk.fpm_bytes, 8 * PAGE);
    assert_eq!(fresh.memory.bulk.channel_bytes, 0);
    // Each renewal frees the old frame before the new one is taken: the 8 sources and one
    // destination at most (16 if the old frames leaked); the page counts once as populated.
    assert_eq!(fresh.os.frames_used, 9);
    assert_eq!(fresh.os.populated, 9);
    // The functional mode places the pages alike.
    let mut functional = RC.to_vec();
    functional.push("sim.mode=\"functional\"");
    let f = run(&path, &functional);
    assert_eq!(f.os.copy_placements, 8);
    assert_eq!(f.os.copy_placements_same_subarray, 8);
    assert_eq!(f.os.renewed_pages, 7);
    assert_eq!(f.os.frames_used, 9);

    let mut keep = RC.to_vec();
    keep.push("os.trace_bulk_destinations=\"keep\"");
    let kept = run(&path, &keep);
    assert_eq!(kept.os.copy_placements, 1);
    assert_eq!(kept.os.copy_placements_same_subarray, 1);
    assert_eq!(kept.os.renewed_pages, 0);
    assert!(
        kept.memory.bulk.fpm_bytes < 8 * PAGE,
        "the sources sit in eight different subarrays"
    );
    assert!(fresh.core_cycles < kept.core_cycles);
}

/// A page first touched as a copy's destination is placed as a copy-on-write destination is,
/// also in a bulksim program's resident region (`keep` changes nothing here).
#[test]
fn a_destination_first_touched_by_its_copy_is_placed_in_the_sources_subarray() {
    let path = trace("first-touch", "R 10000 0 5\nC 200000 10000 8192 5\n");
    let mut keep = RC.to_vec();
    keep.push("os.trace_bulk_destinations=\"keep\"");
    let s = run(&path, &keep);
    assert_eq!(s.os.copy_placements, 2);
    assert_eq!(s.os.copy_placements_same_subarray, 2);
    assert_eq!(s.memory.bulk.fpm_bytes, 2 * PAGE);
}

/// Reads of a zeroed page: RowClone zeroes in DRAM and the reads miss (the paper's "phase 2"
/// misses); RowClone-ZI put the zero lines in the cache, so they hit and never reach memory;
/// the baseline's zeroing stores leave them cached too. A trace write-back of a line takes it
/// out, so a later read of it misses again.
#[test]
fn trace_reads_of_zeroed_lines_hit_what_zero_insert_left_in_the_cache() {
    let page = 0x300000u64;
    let mut text = format!("S {page:x} 0 4096 50\n");
    for i in 0..16u64 {
        text += &format!("R {:x} 0 20\n", page + i * 64);
    }
    // Write back line 0, then read it again.
    text += &format!("R 500000 {page:x} 20\nR {page:x} 0 20\n");
    let path = trace("zero-insert", &text);
    let rc = run(&path, RC);
    let mut zi_sets = RC.to_vec();
    zi_sets[0] = "system.bulk_mechanism=\"rowclone_zi\"";
    let zi = run(&path, &zi_sets);
    let cpu = run(&path, &["system.bulk_mechanism=\"cpu\""]);

    let line = 64;
    // RowClone: every trace read reaches memory (16 + 2).
    assert_eq!(rc.cache["l1"].trace_hits, 0);
    assert_eq!(rc.traffic.read_bytes, 18 * line);
    // RowClone-ZI: 16 reads hit, the write-back takes line 0 out, the last read of line 0
    // and the read of 0x500000 miss.
    assert_eq!(zi.cache["l1"].trace_hits, 16);
    assert_eq!(zi.cache["l1"].trace_takeouts, 1);
    assert_eq!(zi.traffic.read_bytes, 2 * line);
    assert_eq!(zi.traffic.write_bytes, line);
    assert!(zi.core_cycles < rc.core_cycles);
    // The baseline's zeroing stores left the page's lines in the cache as well.
    assert_eq!(cpu.cache["l1"].trace_hits, 16);
    assert_eq!(cpu.cache["l1"].trace_takeouts, 1);
    assert_eq!(cpu.traffic.read_bytes, 2 * line);
}

/// The baseline's copy loop leaves the destination's lines in the cache: a trace read of them
/// hits; after RowClone's copy in DRAM the same read misses.
#[test]
fn trace_reads_of_a_cpu_copys_destination_hit_the_cache() {
    let text = "R 10000 0 5\nC 200000 10000 4096 5\nR 200040 0 5\nR 200080 0 5\n";
    let path = trace("cpu-copy", text);
    let cpu = run(&path, &["system.bulk_mechanism=\"cpu\""]);
    assert_eq!(cpu.cache["l1"].trace_hits, 2);
    let rc = run(&path, RC);
    assert_eq!(rc.cache["l1"].trace_hits, 0);
    assert_eq!(rc.traffic.read_bytes, 3 * 64);
}

/// A zeroing record renews a page the trace touched before: a new frame, counted once as
/// populated, the old one freed.
#[test]
fn a_zeroing_record_renews_a_page_touched_before() {
    let text = "R 300000 0 5\nR 300040 0 5\nS 300000 0 4096 5\nR 300080 0 5\n";
    let path = trace("zeroing", text);
    let s = run(&path, RC);
    assert_eq!(s.os.renewed_pages, 1);
    assert_eq!(s.os.populated, 1);
    assert_eq!(s.os.frames_used, 1);
    assert_eq!(s.os.copy_placements, 0);
    let mut keep = RC.to_vec();
    keep.push("os.trace_bulk_destinations=\"keep\"");
    assert_eq!(run(&path, &keep).os.renewed_pages, 0);
}
