//! The workload events real programs and foreign traces need (format version 2): ranged
//! loads and stores, kernel copies, resident maps, unmap, exec, accesses below the caches,
//! and several copies of one workload. Every expected count is derived from the events.

use crate::common;
use bulksim_core::system::{run_opened_workload, run_workload};
use bulksim_core::workload::program::Event;
use bulksim_core::workload::source::{Workload, WorkloadFormat};
use common::*;

const PAGE: u64 = 4096;

#[test]
fn version_two_events_run_with_the_counts_they_imply() {
    let d = dir("workload-events", "v2");
    let heap = 0x1000_0000;
    let events = [
        Event::MapResident {
            vaddr: 0x40_0000,
            bytes: 1 << 20,
        },
        Event::Map {
            vaddr: heap,
            bytes: 16 * PAGE,
        },
        // One line, then a load straddling two lines (the first one cached by now).
        Event::LoadRange {
            vaddr: 0x40_0000,
            bytes: 8,
        },
        Event::LoadRange {
            vaddr: 0x40_003c,
            bytes: 8,
        },
        // 64 line stores (a first-touch zero fill), a kernel copy into two more pages (128
        // line stores, two zero fills), a kernel copy out of 100 bytes (2 line loads).
        Event::StoreRange {
            vaddr: heap,
            bytes: PAGE,
        },
        Event::KernelToUser {
            vaddr: heap + 2 * PAGE,
            bytes: 2 * PAGE,
        },
        Event::KernelFromUser {
            vaddr: heap,
            bytes: 100,
        },
        // Below the caches: a read of a line the program cached still goes to memory (only
        // lines bulk work put in the caches serve post-LLC records); a
        // write-back; a read of a new resident page.
        Event::MemRead(0x40_0040),
        Event::MemWrite(0x40_0080),
        Event::MemRead(0x4f_f000),
        Event::Unmap {
            vaddr: heap,
            bytes: 16 * PAGE,
        },
        Event::Exec,
        Event::MapResident {
            vaddr: 0x40_0000,
            bytes: PAGE,
        },
        Event::Load(0x40_0000),
        Event::Exit,
    ];
    write_thread(&d, 0, false, &events);
    let (stats, _) = run_workload(&paper_system(&[]), &d).unwrap();
    let os = &stats.os;
    // Resident pages: 0x400000 (and 0x400040 in it), 0x4ff000, 0x400000 again after exec.
    assert_eq!(os.populated, 3);
    assert_eq!(os.zero_fills, 3, "heap pages 0, 2 and 3");
    assert_eq!(os.page_faults, 3, "resident pages take no fault");
    assert_eq!(
        os.unmapped_pages,
        3 + 2,
        "three heap pages, then two resident ones at exec"
    );
    assert_eq!(os.execs, 1);
    assert_eq!(os.frames_used, 5);
    let t = &stats.threads[0];
    assert_eq!(t.kernel_copy_bytes, 2 * PAGE + 100);
    // 2 maps, 1 + 2 loads, 64 + 128 stores, 2 loads, 3 below the caches, unmap, exec, map,
    // load.
    assert_eq!(t.instructions, 2 + 3 + 64 + 128 + 2 + 3 + 3 + 1);
    let line = 64;
    // Memory reads for the program: 0x400000 and 0x400040 once each, the two reads below
    // the caches, the load after exec (a new frame): 5 lines; one write-back below the caches.
    assert_eq!(stats.traffic.read_bytes, 5 * line);
    assert_eq!(stats.traffic.write_bytes, line);
    assert_eq!(stats.traffic.init_bytes, 3 * PAGE);
}

#[test]
/// The record number counts the header line of the text trace.
fn an_access_after_unmap_is_an_error_naming_the_record() {
    let d = dir("workload-events", "unmapped");
    write_thread(
        &d,
        0,
        false,
        &[
            Event::Map {
                vaddr: 0x10000,
                bytes: 2 * PAGE,
            },
            Event::Store(0x10000),
            Event::Unmap {
                vaddr: 0x11000,
                bytes: PAGE,
            },
            Event::Load(0x10000),
            Event::Load(0x11000),
            Event::Exit,
        ],
    );
    let err = run_workload(&paper_system(&[]), &d)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.ends_with(
            "thread-0.trace:6: access to unmapped address 0x11000 (map it first with an `A` event)"
        ),
        "{err}"
    );
}

#[test]
fn copies_run_on_their_own_cores_and_address_spaces_with_forks_kept_within_each_copy() {
    let d = dir("workload-events", "copies");
    let parent = [
        Event::Map {
            vaddr: 0x10000,
            bytes: 4 * PAGE,
        },
        Event::Store(0x10000),
        Event::Store(0x11000),
        Event::Fork(1),
        Event::Wait,
        Event::Exit,
    ];
    let child = [Event::Store(0x10008), Event::Exit];
    write_thread(&d, 0, false, &parent);
    write_thread(&d, 1, true, &child);
    let config = paper_system(&[]);
    let one = run_workload(&config, &d).unwrap().0;
    let workload = Workload::open(&d, Some(WorkloadFormat::Bulksim), 3).unwrap();
    let three = run_opened_workload(&config, workload, &d, None, None)
        .unwrap()
        .0;
    assert_eq!(three.cores.len(), 3);
    assert_eq!(three.threads.len(), 6);
    let copies: Vec<u64> = three.threads.iter().map(|t| t.copy).collect();
    assert_eq!(copies, [0, 0, 1, 1, 2, 2]);
    // Each copy: two processes, one fork, two zero fills, one copy-on-write copy; the same
    // virtual addresses land in different frames per copy, so everything triples.
    assert_eq!(three.os.processes, 3 * one.os.processes);
    assert_eq!(three.os.forks, 3);
    assert_eq!(three.os.zero_fills, 3 * one.os.zero_fills);
    assert_eq!(three.os.cow_copies, 3 * one.os.cow_copies);
    assert_eq!(one.os.cow_copies, 1);
    for (a, b) in three.threads.iter().zip(one.threads.iter().cycle()) {
        assert_eq!(a.instructions, b.instructions);
    }
    let err = Workload::open(&d, None, 0).err().unwrap().to_string();
    assert!(err.contains("expected 1 to 1024 copies"), "{err}");
}

/// A spawned thread shares its process's memory: its store to a page the parent touched
/// takes no copy-on-write copy (a forked child's would), and the frames stay in use until
/// the last thread exits.
#[test]
fn a_spawned_thread_shares_the_address_space() {
    let run = |start: Event| {
        let d = dir(
            "workload-events",
            if matches!(start, Event::Fork(_)) {
                "fork"
            } else {
                "spawn"
            },
        );
        let parent = [
            Event::Map {
                vaddr: 0x10000,
                bytes: 2 * PAGE,
            },
            Event::Store(0x10000),
            start,
            Event::Wait,
            Event::Load(0x11000),
            Event::Exit,
        ];
        let child = [Event::Store(0x10008), Event::Store(0x11000), Event::Exit];
        write_thread(&d, 0, false, &parent);
        write_thread(&d, 1, true, &child);
        run_workload(&paper_system(&[]), &d).unwrap().0
    };
    let forked = run(Event::Fork(1));
    let spawned = run(Event::Spawn(1));
    // Forked: the child's store to page 0 copies it; page 1 is first touched in each
    // address space apart (two zero fills besides the parent's page 0).
    assert_eq!((forked.os.cow_copies, forked.os.zero_fills), (1, 3));
    assert_eq!(forked.os.processes, 2);
    // Spawned: no copy; the child's first touch of page 1 is a zero fill the parent's later
    // load finds present (no third fill).
    assert_eq!((spawned.os.cow_copies, spawned.os.zero_fills), (0, 2));
    assert_eq!((spawned.os.processes, spawned.os.spawns), (1, 1));
    assert_eq!(spawned.os.page_faults, 2);
}

/// `Y` replays a capture's schedule: the spawned thread maps a region and the parent touches
/// it after the switch, in order (no unordered touch). Without the switch the parent's access
/// comes first: a multi-threaded process's access outside its mappings is taken as a first
/// touch of memory another thread maps (counted), where a single thread's is an error.
#[test]
fn yield_passes_the_core_in_the_recorded_order() {
    let run = |with_yield: bool| {
        let d = dir(
            "workload-events",
            if with_yield { "yield" } else { "noyield" },
        );
        let mut parent = vec![Event::Spawn(1)];
        if with_yield {
            parent.push(Event::Yield(1));
        }
        parent.extend([Event::Load(0x20_0000), Event::Wait, Event::Exit]);
        let child = [
            Event::Map {
                vaddr: 0x20_0000,
                bytes: PAGE,
            },
            Event::Store(0x20_0000),
            Event::Exit,
        ];
        write_thread(&d, 0, false, &parent);
        write_thread(&d, 1, true, &child);
        run_workload(&paper_system(&[]), &d).unwrap().0
    };
    let ordered = run(true);
    assert_eq!(ordered.cores[0].yields, 1);
    assert_eq!(ordered.os.unordered_touches, 0);
    assert_eq!(
        ordered.os.zero_fills, 1,
        "the child's store; the parent's load finds the page"
    );
    assert!(ordered.threads[1].end_ns <= ordered.threads[0].end_ns);
    let unordered = run(false);
    assert_eq!(unordered.cores[0].yields, 0);
    assert_eq!(unordered.os.unordered_touches, 1);
}

/// With `system.time_slice_instructions`, a parent that keeps running after a fork shares
/// its core with the child; with 0 the child waits until the parent exits.
#[test]
fn time_slices_share_a_core_between_a_parent_and_its_child() {
    let d = dir("workload-events", "slices");
    let parent = [
        Event::Fork(1),
        Event::Compute(100_000),
        Event::Compute(100_000),
        Event::Exit,
    ];
    let child = [Event::Compute(10_000), Event::Exit];
    write_thread(&d, 0, false, &parent);
    write_thread(&d, 1, true, &child);
    let run = |slice: &str| {
        let set = format!("system.time_slice_instructions={slice}");
        run_workload(&paper_system(&[&set]), &d).unwrap().0
    };
    let whole = run("0");
    assert_eq!(whole.cores[0].preemptions, 0);
    // The child started only when the parent exited.
    assert!(whole.threads[1].start_ns >= whole.threads[0].end_ns);
    let sliced = run("50000");
    assert!(sliced.cores[0].preemptions >= 1);
    assert!(sliced.threads[1].end_ns < sliced.threads[0].end_ns);
    // The same work either way.
    assert_eq!(sliced.instructions, whole.instructions);
    assert_eq!(sliced.threads[1].instructions, 10_000);
}

/// `system.bulk_offload_min_bytes`: by default (one page) a 100-byte memcpy runs as the
/// core's copy loop and only the whole-page one reaches the memory controller; at 1 both do.
#[test]
fn only_pieces_of_the_offload_granularity_go_to_the_bulk_mechanism() {
    let d = dir("workload-events", "offload");
    let events = [
        Event::Map {
            vaddr: 0x10_0000,
            bytes: 4 * PAGE,
        },
        Event::Memcpy {
            src: 0x10_0000,
            dst: 0x10_2000,
            bytes: 100,
        },
        Event::Memcpy {
            src: 0x10_1000,
            dst: 0x10_3000,
            bytes: PAGE,
        },
        Event::Exit,
    ];
    write_thread(&d, 0, false, &events);
    let run = |min: &str| {
        let sets = [
            "system.bulk_mechanism=\"rowclone\"",
            "os.allocator=\"subarray_aware\"",
            min,
        ];
        run_workload(&paper_system(&sets), &d).unwrap().0
    };
    // Four first-touch zero fills (whole pages) reach the controller either way.
    let default = run("system.bulk_offload_min_bytes=4096");
    assert_eq!(default.memory.bulk.bytes_copied, PAGE);
    assert_eq!(default.memory.bulk.bytes_initialized, 4 * PAGE);
    assert_eq!(
        default.memcpy_ops, 2,
        "both pieces are counted, whoever does them"
    );
    let every = run("system.bulk_offload_min_bytes=1");
    assert_eq!(every.memory.bulk.bytes_copied, PAGE + 100);
    let mut bad = bulksim_core::config::Config::default();
    bad.system.bulk_offload_min_bytes = 0;
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("system.bulk_offload_min_bytes: 0 is out of range; expected 1 to 4096 bytes"));
}

/// `Q` (a dependent load through the caches) issues only once every older load has its
/// data: n dependent misses take at least n times one miss's latency, while n independent
/// loads overlap in the window and take far less. Each load goes to its own page, 1 MiB
/// apart, so every one misses every cache.
#[test]
fn dependent_loads_through_the_caches_wait_for_each_other() {
    let (base, bytes) = (0x1000_0000u64, 64u64 << 20);
    let n = 32u64;
    let config = paper_system(&[]);
    let loads = |dependent: bool| -> Vec<Event> {
        (0..n)
            .map(|i| {
                let va = base + i * (1 << 20) + (i % 64) * 64;
                if dependent {
                    Event::LoadDependent(va)
                } else {
                    Event::Load(va)
                }
            })
            .collect()
    };
    let time = |name: &str, body: &[Event]| {
        let (stats, _) = run_resident("workload-events", name, &config, (base, bytes), body);
        assert_eq!(stats.traffic.read_bytes, body.len() as u64 * 64, "{name}");
        stats.threads[0].end_ns
    };
    let one = time("one-miss", &loads(true)[..1]);
    let chained = time("chained", &loads(true));
    let independent = time("independent", &loads(false));
    assert!(
        chained >= 0.95 * n as f64 * one,
        "{n} dependent misses in {chained} ns, one in {one} ns"
    );
    assert!(
        independent < chained / 4.0,
        "{n} independent misses in {independent} ns, dependent {chained} ns"
    );
}

/// `memcpy_ops` and `meminit_ops` count what docs/stats.md says: with `system.memcpy = bulk`
/// one operation per piece of a copy within one 4 KiB page of both source and destination,
/// one per piece of an initialization within one page, and one per first-touch zero fill;
/// with a memcpy routine one per memcpy event.
#[test]
fn memcpy_and_meminit_ops_count_one_per_page_piece() {
    let d = dir("workload-events", "ops-per-page");
    let base = 0x10_0000;
    let events = [
        Event::Map {
            vaddr: base,
            bytes: 16 * PAGE,
        },
        // Two whole pages, aligned: two pieces.
        Event::Memcpy {
            src: base,
            dst: base + 4 * PAGE,
            bytes: 2 * PAGE,
        },
        // One page from half a page in: its source spans two pages, so two pieces.
        Event::Memcpy {
            src: base + PAGE / 2,
            dst: base + 8 * PAGE,
            bytes: PAGE,
        },
        // Three whole pages: three pieces.
        Event::Meminit {
            dst: base + 10 * PAGE,
            bytes: 3 * PAGE,
            value: 7,
        },
        Event::Exit,
    ];
    write_thread(&d, 0, false, &events);
    // Pages touched, each zero-filled on its first touch: 0-1, 4-5, 8, 10-12.
    let touched = 8;
    let bulk = run_workload(&paper_system(&[]), &d).unwrap().0;
    assert_eq!(bulk.os.zero_fills, touched);
    assert_eq!(bulk.memcpy_ops, 2 + 2);
    assert_eq!(bulk.meminit_ops, 3 + touched);
    let software = run_workload(&paper_system(&["system.memcpy=\"software\""]), &d)
        .unwrap()
        .0;
    assert_eq!(software.memcpy_ops, 2, "one per memcpy event");
    assert_eq!(software.meminit_ops, 3 + touched);
    let functional = run_workload(&paper_system(&["sim.mode=\"functional\""]), &d)
        .unwrap()
        .0;
    assert_eq!((functional.memcpy_ops, functional.meminit_ops), (0, 0));
}
