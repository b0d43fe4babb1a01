//! Rank-aware page allocation (docs/rank_assignment.md, "Page allocation"): `rank_static`
//! puts thread i's pages on rank i mod R (or `os.thread_ranks`), `os.mapping_error` sends a
//! share of pages elsewhere, and a mapping that splits pages over ranks is refused; `clock`
//! and `rank_clock` replace pages when a capacity-limited memory is full.

mod common;
use bulksim_core::system::run_workload;
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::*;
use std::path::PathBuf;

const PAGE: u64 = 4096;

/// DDR3 with 2 channels x 2 ranks (4 global ranks), bank_xor (a page in one rank), each
/// rank limited to 1 MiB (256 frames) so that start-up stays small.
fn ranked(more: &[&str]) -> Config {
    let mut sets = vec![
        "dram.preset=\"DDR3_2Gb_x8_1066\"",
        "dram.channels=2",
        "dram.ranks=2",
        "controller.address_mapping=\"bank_xor\"",
        "dram.rank_capacity_mb=1",
    ];
    sets.extend_from_slice(more);
    config(&sets)
}

/// A workload of `threads` threads, each touching (storing to) `pages` pages of its own.
fn touching(name: &str, threads: u32, pages: u64) -> PathBuf {
    let d = dir("rank-alloc", name);
    for t in 0..threads {
        let mut events = vec![Event::Map {
            vaddr: 0x100000,
            bytes: pages * PAGE,
        }];
        events.extend((0..pages).map(|p| Event::Store(0x100000 + p * PAGE)));
        events.push(Event::Exit);
        write_thread(&d, t, false, &events);
    }
    d
}

#[test]
fn rank_static_puts_thread_i_on_rank_i_mod_r() {
    let d = touching("static", 6, 40);
    let (stats, _) = run_workload(&ranked(&["os.allocator=\"rank_static\""]), &d).unwrap();
    assert_eq!(stats.os.threads.len(), 6);
    for (i, t) in stats.os.threads.iter().enumerate() {
        let mut expect = vec![0; 4];
        expect[i % 4] = 40;
        assert_eq!(t.accesses_by_rank, expect, "thread {i}");
        assert_eq!((t.preferred_rank, t.off_preferred), (i as u32 % 4, 0));
        assert_eq!(t.page_faults, 40);
    }
    assert_eq!(stats.os.placement.rank_full_fallbacks, 0);
    // Scatter spreads every thread over all ranks.
    let (scattered, _) = run_workload(&ranked(&[]), &d).unwrap();
    for t in &scattered.os.threads {
        assert!(t.accesses_by_rank.iter().all(|&n| n > 0), "{t:?}");
    }
}

#[test]
fn thread_ranks_override_the_default_and_a_full_rank_passes_pages_up() {
    let d = touching("override", 2, 200);
    let c = ranked(&["os.allocator=\"rank_static\"", "os.thread_ranks=[3, 3]"]);
    let (stats, _) = run_workload(&c, &d).unwrap();
    // Rank 3 holds 256 frames: the 144 pages the two threads touch beyond that go to the
    // next rank up, cyclically rank 0.
    let (a, b) = (
        &stats.os.threads[0].accesses_by_rank,
        &stats.os.threads[1].accesses_by_rank,
    );
    assert_eq!((a[3] + b[3], a[0] + b[0]), (256, 144), "{a:?} {b:?}");
    assert_eq!(a[1] + a[2] + b[1] + b[2], 0);
    assert_eq!(stats.os.placement.rank_full_fallbacks, 144);
    assert_eq!(stats.os.threads[1].preferred_rank, 3);
}

#[test]
fn mapping_error_sends_the_given_share_of_pages_to_other_ranks() {
    let pages = 200;
    let d = touching("error", 4, pages);
    let c = ranked(&["os.allocator=\"rank_static\"", "os.mapping_error=0.5"]);
    let (stats, _) = run_workload(&c, &d).unwrap();
    let n = 4 * pages;
    let off: u64 = stats.os.threads.iter().map(|t| t.off_preferred).sum();
    assert_eq!(off, stats.os.placement.mapping_errors);
    // Binomial(800, 0.5): mean 400, sd 14.1; 5 sd either side.
    assert!((330..=470).contains(&off), "{off} of {n} off their rank");
    // Uniform over the three other ranks: each gets about a third.
    for t in &stats.os.threads {
        let others: Vec<u64> = (0..4)
            .filter(|&r| r != t.preferred_rank)
            .map(|r| t.accesses_by_rank[r as usize])
            .collect();
        assert!(others.iter().all(|&k| k > 10), "{others:?}");
    }
    // Seeded: the same seed gives the same placement.
    let (again, _) = run_workload(&c, &d).unwrap();
    assert_eq!(again.os.threads, stats.os.threads);
}

#[test]
fn a_mapping_that_splits_pages_over_ranks_is_refused_by_name() {
    for mapping in ["channel_interleaved", "RoBaRaCoCh"] {
        let e = Config::default()
            .apply_sets(&[
                "dram.channels=2",
                &format!("controller.address_mapping=\"{mapping}\""),
                "os.allocator=\"rank_static\"",
            ])
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("os.allocator: rank_static"), "{e}");
        assert!(e.contains("controller.address_mapping"), "{e}");
        assert!(
            e.contains("bank_xor") && e.contains("non_interleaved"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // Scatter does not care; bank_xor is fine for RA.
    for sets in [
        [
            "os.allocator=\"scatter\"",
            "controller.address_mapping=\"channel_interleaved\"",
        ],
        [
            "os.allocator=\"rank_clock\"",
            "controller.address_mapping=\"bank_xor\"",
        ],
    ] {
        let mut all = vec!["dram.channels=2"];
        all.extend(sets);
        Config::default()
            .apply_sets(&all)
            .unwrap()
            .validate()
            .unwrap();
    }
}

#[test]
fn bad_allocator_keys_give_one_error_naming_the_key() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["os.mapping_error=1.5"],
            "os.mapping_error: 1.5 is out of range",
        ),
        (
            &["os.thread_ranks=[0, 4]"],
            "os.thread_ranks: entry 1 is rank 4, out of range",
        ),
        (
            &["dram.rank_capacity_mb=5000"],
            "dram.rank_capacity_mb: 5000 is out of range",
        ),
        (
            &["os.tlb_pages=2000000"],
            "os.tlb_pages: 2000000 is out of range",
        ),
    ];
    for (sets, expect) in cases {
        let mut all = vec![
            "dram.preset=\"DDR3_2Gb_x8_1066\"",
            "dram.channels=2",
            "dram.ranks=2",
            "controller.address_mapping=\"bank_xor\"",
        ];
        all.extend_from_slice(sets);
        let e = Config::default()
            .apply_sets(&all)
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(expect), "{e}");
    }
    for (set, key) in [
        ("os.allocator=\"ranks\"", "os.allocator"),
        ("os.preferred_rank=\"busiest\"", "os.preferred_rank"),
        ("sim.mode=\"fast\"", "sim.mode"),
    ] {
        let e = Config::default()
            .apply_sets(&[set])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(key) && e.contains("valid values"), "{e}");
    }
    // One entry per thread: the workload decides.
    let d = touching("length", 3, 1);
    let c = ranked(&["os.allocator=\"rank_static\"", "os.thread_ranks=[0, 1]"]);
    let e = run_workload(&c, &d).err().expect("an error").to_string();
    assert!(
        e.starts_with("os.thread_ranks: 2 entries for 3 threads"),
        "{e}"
    );
}
