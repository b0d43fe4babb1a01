//! Freed frames and the cache: every allocator hands a copy-on-write destination the frame
//! freed last (whose lines may still be cached), and RowClone-ZI's zeroing of a reused frame
//! writes back only the lines the program dirtied afterwards. Counts are exact, derived line
//! by line on tiny workloads.

use crate::common;
use bulksim_core::system::run_workload;
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::write_thread;

const PAGE: u64 = 4096;
const LINES_PER_PAGE: u64 = PAGE / 64;
const BASE: u64 = 0x4000_0000;

fn paper(mechanism: &str, allocator: &str, more: &[&str]) -> Config {
    let mechanism = format!("system.bulk_mechanism=\"{mechanism}\"");
    let allocator = format!("os.allocator=\"{allocator}\"");
    let mut sets = vec![mechanism.as_str(), allocator.as_str()];
    sets.extend_from_slice(more);
    common::paper_system(&sets)
}

/// A shell-like pattern: the parent touches one page, then forks `children` children one
/// after another; each writes one line of the page (a copy-on-write copy) and exits, freeing
/// its copy. Under `cpu` (lines fetched before they are overwritten) with a 1 MB cache:
/// the parent's zeroing reads its page's 64 lines; the first copy reads its fresh
/// destination's 64 lines (the source's are cached); every later copy's destination is the
/// frame the previous child freed, whose 64 lines are still cached, so it reads nothing.
/// Total: 128 line reads whatever the number of children. (`subarray_aware` and `inter_bank`
/// used to take each copy's destination from their pool's never-used frames: 64 reads per
/// child, and on a captured shell script 1,402 frames in circulation instead of 570, crowded
/// into the few cache sets of the parent's subarrays: 459k write-backs instead of 11k.)
#[test]
fn copy_on_write_destinations_reuse_the_frame_freed_last_under_every_allocator() {
    let d = common::dir("bulksim-reuse", "cow");
    let children = 4u32;
    let mut parent = vec![
        Event::Map {
            vaddr: BASE,
            bytes: PAGE,
        },
        Event::Store(BASE),
    ];
    for child in 1..=children {
        parent.extend([Event::Fork(child), Event::Wait]);
        write_thread(&d, child, true, &[Event::Store(BASE + 64), Event::Exit]);
    }
    parent.push(Event::Exit);
    write_thread(&d, 0, false, &parent);
    for allocator in ["scatter", "subarray_aware", "inter_bank"] {
        let (s, _) = run_workload(&paper("cpu", allocator, &[]), &d).unwrap();
        assert_eq!(
            (s.os.zero_fills, s.os.cow_copies),
            (1, children as u64),
            "{allocator}"
        );
        assert_eq!(
            s.memory.reads,
            2 * LINES_PER_PAGE,
            "{allocator}: the parent's page, then the first copy's destination, once"
        );
        assert_eq!(s.memory.writes, 0, "{allocator}: nothing evicted");
        if allocator == "subarray_aware" {
            assert_eq!(
                s.os.cow_same_subarray, children as u64,
                "every copy still stays in its source's subarray"
            );
        }
        if allocator == "inter_bank" {
            assert_eq!(s.os.cow_same_subarray, 0, "copies go to the partner bank");
        }
    }
}

/// A page is dirtied whole and unmapped; the next page's zero fill reuses its frame (the
/// most recently freed) and the program stores one line; a third page's zero fill then
/// evicts everything, in a 4 KB cache that holds exactly one page (16 sets x 4 ways).
/// `cpu` zeroing (fetch): the first and third zero fills read 64 lines each; the second
/// finds the reused frame's 64 lines cached and zeroes them in place, leaving all 64 dirty,
/// so the third evicts 64 dirty lines. `rowclone_zi`: zeroing is in DRAM (no line reads);
/// the second zero fill invalidates the reused frame's 64 dirty lines (wholly overwritten:
/// no write-back) and inserts 64 clean zero lines, of which the store dirties one: the third
/// evicts one dirty line.
#[test]
fn zero_insert_writes_back_only_what_the_program_dirtied() {
    let d = common::dir("bulksim-reuse", "zi");
    let (a, b, c) = (BASE, BASE + 16 * PAGE, BASE + 32 * PAGE);
    let mut events = vec![Event::Map {
        vaddr: a,
        bytes: PAGE,
    }];
    events.push(Event::StoreRange {
        vaddr: a,
        bytes: PAGE,
    });
    events.extend([
        Event::Unmap {
            vaddr: a,
            bytes: PAGE,
        },
        Event::Map {
            vaddr: b,
            bytes: PAGE,
        },
        Event::Store(b),
        Event::Map {
            vaddr: c,
            bytes: PAGE,
        },
        Event::Load(c),
        Event::Exit,
    ]);
    write_thread(&d, 0, false, &events);
    let tiny = [
        "cache.level.0.size_kb=4",
        "cache.level.0.ways=4",
        "os.allocator=\"subarray_aware\"",
    ];
    for (mechanism, reads, writes, init_writes) in [
        (
            "cpu",
            2 * LINES_PER_PAGE,
            LINES_PER_PAGE,
            LINES_PER_PAGE - 1,
        ),
        ("rowclone_zi", 0, 1, 0),
    ] {
        let (s, _) = run_workload(&paper(mechanism, "subarray_aware", &tiny), &d).unwrap();
        assert_eq!(s.os.zero_fills, 3, "{mechanism}");
        assert_eq!(s.memory.reads, reads, "{mechanism}");
        assert_eq!(s.memory.writes, writes, "{mechanism}");
        // The line b's store wrote is program traffic; the rest were last written by zeroing.
        assert_eq!(s.traffic.write_bytes, 64, "{mechanism}");
        let l1 = &s.cache["l1"].below.write_bytes;
        assert_eq!(l1.init, init_writes * 64, "{mechanism}");
    }
}
