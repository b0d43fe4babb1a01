//! Rank-aware page allocation (docs/rank_assignment.md, "Page allocation"): `rank_static`
//! puts thread i's pages on rank i mod R (or `os.thread_ranks`), `os.mapping_error` sends a
//! share of pages elsewhere, and a mapping that splits pages over ranks is refused; `clock`
//! and `rank_clock` replace pages when a capacity-limited memory is full.

use crate::common;
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
            &["os.allocator=\"rank_static\"", "os.mapping_error=1.5"],
            "os.mapping_error: 1.5 is out of range",
        ),
        (
            &["os.allocator=\"rank_static\"", "os.thread_ranks=[0, 4]"],
            "os.thread_ranks: entry 1 is rank 4, out of range",
        ),
        (
            &["os.allocator=\"rank_clock\"", "os.thread_ranks=[0, 1]"],
            "os.thread_ranks: set, but os.allocator is rank_clock",
        ),
        (
            &["os.mapping_error=0.5"],
            "os.mapping_error: 0.5, but os.allocator is scatter",
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
        // The choice's own error lists its names (`config::choice`).
        assert!(e.starts_with(key) && e.contains("unknown variant"), "{e}");
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

// ---- Page replacement (clock, rank_clock) on tiny memories, through the OS itself ----

use bulksim_core::config::{AllocatorPolicy, PreferredRank};
use bulksim_core::os::allocator::ranks::RankLayout;
use bulksim_core::os::allocator::{FrameAllocator, FrameSite, RankSetup};
use bulksim_core::os::{Os, Pid};
use std::sync::Arc;

/// An OS over `frames` frames in one channel of `ranks` ranks, frame f on rank
/// `rank_of(f)`, keeping `tlb_pages` pages per core at a rollover; every thread its own
/// process with `pages` pages mapped at 0.
fn tiny_os(
    policy: AllocatorPolicy,
    frames: u32,
    ranks: u32,
    rank_of: fn(u32) -> u32,
    tlb_pages: u32,
) -> Os {
    tiny_os_by(
        policy,
        frames,
        ranks,
        rank_of,
        tlb_pages,
        PreferredRank::MostFree,
    )
}

fn tiny_os_by(
    policy: AllocatorPolicy,
    frames: u32,
    ranks: u32,
    rank_of: fn(u32) -> u32,
    tlb_pages: u32,
    preferred: PreferredRank,
) -> Os {
    let site = move |f: u32| {
        Some(FrameSite {
            channel: 0,
            rank: rank_of(f),
            bank_index: 0,
            subarray: 0,
        })
    };
    let setup = RankSetup {
        layout: RankLayout::new(&[ranks]),
        thread_ranks: Vec::new(),
        mapping_error: 0.0,
        preferred,
    };
    let alloc = FrameAllocator::with_ranks(policy, frames as usize, site, 1, setup);
    let mut os = Os::with_tlb_pages(alloc, 0, tlb_pages);
    os.count_ranks(ranks, Arc::new(rank_of));
    os
}

/// Thread `t` (on core `t`, process `pid`) touches page `page`: the frame it lands in.
fn touch(os: &mut Os, pid: Pid, t: u32, page: u64) -> u32 {
    let (pa, _) = os.translate_on(t, pid, t, page * PAGE, true).unwrap();
    // The access is retried after the fault, as the system does: a hit now, and counted
    // once it goes ahead.
    assert_eq!(
        os.translate_on(t, pid, t, page * PAGE, true).unwrap(),
        (pa, None)
    );
    os.count_access(t);
    (pa / PAGE) as u32
}

fn process(os: &mut Os, t: u32) -> Pid {
    let pid = os.new_process();
    os.map(pid, 0, 1 << 30);
    os.start_thread(t);
    pid
}

#[test]
fn the_paper_aggressor_example_evicts_the_aggressors_own_pages_after_rollover() {
    // Two ranks of four frames: frames 0-3 on R0, 4-7 on R1. One TLB page per core.
    let mut os = tiny_os(AllocatorPolicy::RankClock, 8, 2, |f| f / 4, 1);
    let aggressor = process(&mut os, 0);
    let submissive = process(&mut os, 1);
    // Most free frames, ties by fewest threads then lowest index: T1 on R0, T2 on R1.
    assert_eq!(os.stats.threads[0].preferred_rank, 0);
    assert_eq!(os.stats.threads[0].second_rank, 1);
    assert_eq!(os.stats.threads[1].preferred_rank, 1);
    assert_eq!(touch(&mut os, submissive, 1, 100), 4);
    // T1 fills its own rank, its pointer reaches the end ...
    let own: Vec<u32> = (0..4).map(|p| touch(&mut os, aggressor, 0, p)).collect();
    assert_eq!(own, [0, 1, 2, 3]);
    // ... then takes R2's free frames (its second rank) until R2's pointer ends too.
    let taken: Vec<u32> = (4..7).map(|p| touch(&mut os, aggressor, 0, p)).collect();
    assert_eq!(taken, [5, 6, 7]);
    assert_eq!(os.stats.placement.second_rank_pages, 3);
    assert_eq!((os.stats.evictions, os.stats.placement.rollovers), (0, 0));
    // Every pointer is at the end: the next request rolls over (bits cleared except each
    // core's last page: T1's page 6 in frame 7, T2's page 100 in frame 4), and T1 evicts
    // its own oldest pages first.
    assert_eq!(touch(&mut os, aggressor, 0, 7), 0);
    assert_eq!(os.stats.placement.rollovers, 1);
    assert_eq!(os.lookup(aggressor, 0), None, "page 0 evicted");
    assert_eq!(touch(&mut os, aggressor, 0, 8), 1);
    assert_eq!(os.lookup(aggressor, PAGE), None, "page 1 evicted");
    assert_eq!(os.stats.evictions, 2);
    assert_eq!(os.stats.threads[0].evictions, 2);
    // T2's pointer restarts at frame 4, referenced (its TLB page): passed without clearing
    // its bit, and T1's page 4 in frame 5 is evicted instead of T2's own page.
    assert!(os.frame_table().referenced(4));
    assert_eq!(touch(&mut os, submissive, 1, 101), 5);
    assert!(os.frame_table().referenced(4), "a rank walk clears no bits");
    assert_eq!(os.lookup(submissive, 100 * PAGE), Some(4 * PAGE));
    assert_eq!(os.lookup(aggressor, 4 * PAGE), None);
    // A page evicted and touched again faults again.
    let faults = os.stats.page_faults;
    touch(&mut os, aggressor, 0, 0);
    assert_eq!((os.stats.page_faults, os.stats.refaults), (faults + 1, 1));
}

#[test]
fn rank_clock_falls_back_preferred_then_second_then_clock_from_the_trailing_pointer() {
    // Three ranks interleaved frame by frame: R0 = 0, 3, 6; R1 = 1, 4, 7; R2 = 2, 5, 8.
    let mut os = tiny_os(AllocatorPolicy::RankClock, 9, 3, |f| f % 3, 0);
    let t0 = process(&mut os, 0);
    let t1 = process(&mut os, 1);
    let ranks = |os: &Os, t: usize| {
        let s = &os.stats.threads[t];
        (s.preferred_rank, s.second_rank)
    };
    // T0: R0 (all tie, lowest), second R1; T1: R1 (fewest threads), second R2.
    assert_eq!((ranks(&os, 0), ranks(&os, 1)), ((0, 1), (1, 2)));
    let t1_frames: Vec<u32> = (0..2).map(|p| touch(&mut os, t1, 1, p)).collect();
    assert_eq!(t1_frames, [1, 4]);
    let t0_frames: Vec<u32> = (0..4).map(|p| touch(&mut os, t0, 0, p)).collect();
    // Preferred R0 (0, 3, 6), then second R1's remaining frame 7.
    assert_eq!(t0_frames, [0, 3, 6, 7]);
    // R0 and R1 at the end; R2's pointer (frame 2) trails: CLOCK from there.
    assert_eq!(touch(&mut os, t0, 0, 4), 2);
    assert_eq!(os.stats.placement.clock_pages, 1);
    // The trailing pointer went on past frame 2: next CLOCK from frame 5.
    assert_eq!(touch(&mut os, t0, 0, 5), 5);
    assert_eq!(os.stats.evictions, 0, "free frames were left");
    assert_eq!(
        os.stats.threads[0].off_preferred, 3,
        "7, 2 and 5 are off R0"
    );
    assert_eq!(
        os.stats.threads[0].off_first_two, 2,
        "2 and 5 are off R0 and R1"
    );
}

#[test]
fn clock_clears_the_bits_it_passes_and_a_rollover_keeps_each_cores_tlb_pages() {
    // Six frames, one rank; two TLB pages per core.
    let mut os = tiny_os(AllocatorPolicy::Clock, 6, 1, |_| 0, 2);
    let a = process(&mut os, 0);
    let b = process(&mut os, 1);
    for p in 0..3 {
        assert_eq!(touch(&mut os, a, 0, p), p as u32);
    }
    for p in 0..3 {
        assert_eq!(touch(&mut os, b, 1, p), 3 + p as u32);
    }
    // Full: rollover keeps core 0's last two pages (frames 1, 2) and core 1's (4, 5).
    assert_eq!(touch(&mut os, a, 0, 3), 0);
    assert_eq!(os.stats.placement.rollovers, 1);
    let referenced: Vec<u32> = (0..6).filter(|&f| os.frame_table().referenced(f)).collect();
    assert_eq!(
        referenced,
        [0, 1, 2, 4, 5],
        "frame 0 is referenced as the new page's"
    );
    // The hand passes 1 and 2 clearing their bits, then takes frame 3 (b's page 0).
    assert_eq!(touch(&mut os, a, 0, 4), 3);
    assert!(!os.frame_table().referenced(1) && !os.frame_table().referenced(2));
    assert_eq!(os.lookup(b, 0), None);
    assert_eq!(os.stats.evictions, 2);
}

#[test]
fn no_frame_is_given_twice_under_pressure() {
    for policy in [AllocatorPolicy::Clock, AllocatorPolicy::RankClock] {
        let mut os = tiny_os(policy, 24, 4, |f| (f / 2) % 4, 4);
        let pids: Vec<Pid> = (0..3).map(|t| process(&mut os, t)).collect();
        let mut rng = 12345u64;
        for _ in 0..3000 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = (rng >> 33) as u32 % 3;
            // Thread 0 roams over 40 pages, the others reuse 8.
            let pages = if t == 0 { 40 } else { 8 };
            let page = (rng >> 40) % pages;
            touch(&mut os, pids[t as usize], t, page);
            let mut frames: Vec<u64> = Vec::new();
            for (i, &pid) in pids.iter().enumerate() {
                let n = if i == 0 { 40 } else { 8 };
                frames.extend((0..n).filter_map(|p| os.lookup(pid, p * PAGE)));
            }
            let count = frames.len();
            frames.sort();
            frames.dedup();
            assert_eq!(frames.len(), count, "{policy:?}: a frame mapped twice");
            assert_eq!(count as u64, os.frames().in_use());
            assert!(count <= 24);
        }
        assert!(
            os.stats.evictions > 100,
            "{policy:?}: {}",
            os.stats.evictions
        );
        assert_eq!(os.stats.page_faults, os.stats.evictions + 24);
    }
}

// ---- Functional mode and whole runs with page replacement ----

/// `threads` threads, each storing to `pages` pages of its own `rounds` times over, with 10
/// non-memory instructions before each store.
fn looping(name: &str, threads: u32, pages: u64, rounds: u64) -> PathBuf {
    let d = dir("rank-alloc", name);
    for t in 0..threads {
        let mut events = vec![Event::Map {
            vaddr: 0x100000,
            bytes: pages * PAGE,
        }];
        for _ in 0..rounds {
            for p in 0..pages {
                events.push(Event::Compute(10));
                events.push(Event::Store(0x100000 + p * PAGE + 8 * (t as u64)));
            }
        }
        events.push(Event::Exit);
        write_thread(&d, t, false, &events);
    }
    d
}

#[test]
fn functional_mode_translates_every_access_at_one_instruction_per_cycle() {
    let d = looping("functional", 2, 50, 3);
    let sets = ["os.allocator=\"rank_static\"", "os.fault_instructions=100"];
    let functional = ranked(&[sets[0], sets[1], "sim.mode=\"functional\""]);
    let (f, _) = run_workload(&functional, &d).unwrap();
    // Per thread: map (1) + 150 x (10 + 1) + 50 faults x 100 kernel instructions.
    let per_thread = 1 + 150 * 11 + 50 * 100;
    assert_eq!(f.threads[0].instructions, per_thread);
    assert_eq!(f.instructions, 2 * per_thread);
    // Exit is at cycle `per_thread` on each core: one instruction per cycle.
    assert_eq!(f.core_cycles, per_thread);
    assert_eq!(
        f.memory.reads + f.memory.writes,
        0,
        "no DRAM in functional mode"
    );
    assert_eq!(f.os.page_faults, 100);
    assert_eq!(f.os.threads[1].accesses_by_rank, [0, 150, 0, 0]);
    // The timing run translates the same accesses to the same ranks.
    let (timed, _) = run_workload(&ranked(&sets), &d).unwrap();
    assert_eq!(timed.os.threads, f.os.threads);
    assert_eq!(timed.instructions, f.instructions);
    assert!(timed.memory.writes + timed.memory.reads > 0);
}

#[test]
fn replacement_adds_no_faults_while_memory_suffices_and_evicts_when_it_does_not() {
    // 4 ranks x 256 frames; 4 threads x 200 pages fit.
    let d = looping("suffices", 4, 200, 3);
    for policy in ["clock", "rank_clock"] {
        for mode in ["timing", "functional"] {
            let allocator = format!("os.allocator=\"{policy}\"");
            let sim_mode = format!("sim.mode=\"{mode}\"");
            let (s, _) = run_workload(&ranked(&[&allocator, &sim_mode]), &d).unwrap();
            assert_eq!(
                (s.os.page_faults, s.os.evictions),
                (800, 0),
                "{policy} {mode}"
            );
            let accesses: u64 = s.os.threads.iter().flat_map(|t| &t.accesses_by_rank).sum();
            assert_eq!(accesses, 4 * 600);
        }
    }
    // 4 x 300 pages in 1024 frames: pages are evicted and fault again.
    let d = looping("pressure", 4, 300, 3);
    for policy in ["clock", "rank_clock"] {
        let allocator = format!("os.allocator=\"{policy}\"");
        let c = ranked(&[&allocator, "sim.mode=\"functional\""]);
        let (s, _) = run_workload(&c, &d).unwrap();
        assert!(
            s.os.evictions >= 1200 - 1024,
            "{policy}: {}",
            s.os.evictions
        );
        assert_eq!(s.os.page_faults, 1200 + s.os.refaults, "{policy}");
        assert!(
            s.os.refaults > 0 && s.os.refaults <= s.os.evictions,
            "{policy}"
        );
        let by_thread: u64 = s.os.threads.iter().map(|t| t.evictions).sum();
        assert_eq!(by_thread, s.os.evictions);
        assert!(s.os.frames_used <= 1024);
    }
    // Without replacement the same run is out of memory, by name.
    let c = ranked(&["os.allocator=\"rank_static\"", "sim.mode=\"functional\""]);
    let e = run_workload(&c, &d)
        .err()
        .expect("out of memory")
        .to_string();
    assert!(e.contains("out of physical memory"), "{e}");
}

#[test]
fn preferred_ranks_follow_most_free_frames_or_least_delay() {
    // most_free: after T0 fills three of R0's four frames, later threads prefer R1 (4 free
    // beats 1 even with more threads on it); second ranks are the best of the rest.
    let mut os = tiny_os(AllocatorPolicy::RankClock, 8, 2, |f| f / 4, 0);
    let t0 = process(&mut os, 0);
    for p in 0..3 {
        touch(&mut os, t0, 0, p);
    }
    process(&mut os, 1);
    process(&mut os, 2);
    let ranks: Vec<(u32, u32)> = os
        .stats
        .threads
        .iter()
        .map(|t| (t.preferred_rank, t.second_rank))
        .collect();
    assert_eq!(ranks, [(0, 1), (1, 0), (1, 0)]);
    // least_delay: the rank with the lowest mean read latency, then the next lowest.
    let mut os = tiny_os_by(
        AllocatorPolicy::RankClock,
        9,
        3,
        |f| f / 3,
        0,
        PreferredRank::LeastDelay,
    );
    os.set_rank_delays(&[50.0, 10.0, 30.0]);
    process(&mut os, 0);
    process(&mut os, 1);
    os.set_rank_delays(&[0.0, 0.0, 0.0]);
    // All equal: fewest threads, then the lowest index.
    process(&mut os, 2);
    let ranks: Vec<(u32, u32)> = os
        .stats
        .threads
        .iter()
        .map(|t| (t.preferred_rank, t.second_rank))
        .collect();
    assert_eq!(ranks, [(1, 2), (1, 2), (0, 2)]);
}

#[test]
fn trace_replay_refuses_functional_mode_by_name() {
    let c = config(&["sim.mode=\"functional\""]);
    let e = bulksim_core::sim::run(&c, &mut vec![read(0, 0)].into_iter(), None, None)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("sim.mode: functional"), "{e}");
}

#[test]
fn replacing_allocators_refuse_memories_beyond_their_start_up_limit() {
    // 8 channels x 8 ranks of 32 GB: 2 TiB, above the 1 TiB the frame list supports.
    let c = config(&[
        "dram.preset=\"DDR4_32Gb_x8_1600\"",
        "dram.channels=8",
        "dram.ranks=8",
        "controller.address_mapping=\"bank_xor\"",
        "os.allocator=\"clock\"",
        "sim.memory_limit_mb=100000000",
    ]);
    let d = touching("huge", 1, 1);
    let e = run_workload(&c, &d).err().expect("refused").to_string();
    assert!(
        e.starts_with("os.allocator: clock")
            && e.contains("at most 1024 GiB")
            && e.contains("2048 GiB"),
        "{e}"
    );
}

#[test]
fn with_copies_every_copys_thread_counts_as_its_own_thread() {
    use bulksim_core::system::System;
    use bulksim_core::workload::source::Workload;
    // Two threads a copy, three copies: global threads 0..6 on ranks 0, 1, 2, 3, 0, 1.
    let d = touching("copies", 2, 5);
    let c = ranked(&["os.allocator=\"rank_static\"", "sim.mode=\"functional\""]);
    let workload = Workload::open(&d, None, 3).unwrap();
    let stats = System::with_workload(&c, workload, &d)
        .unwrap()
        .run()
        .unwrap();
    let on: Vec<usize> = stats
        .os
        .threads
        .iter()
        .map(|t| t.accesses_by_rank.iter().position(|&n| n == 5).unwrap())
        .collect();
    assert_eq!(on, [0, 1, 2, 3, 0, 1]);
}

#[test]
fn least_delay_gives_a_forked_thread_the_rank_with_the_lowest_read_latency_so_far() {
    // One channel, two ranks of 1024 frames. T0 (rank 0) touches 400 pages and loads them
    // again past the 1 MiB cache (DRAM reads on rank 0), computes (long enough for T1 to
    // finish), then forks; T1 (rank 1)
    // stores to 500 pages (zeroed by full-line stores: no DRAM reads).
    let d = dir("rank-alloc", "least-delay");
    let base = 0x100000;
    let mut t0 = vec![Event::Map {
        vaddr: base,
        bytes: 400 * PAGE,
    }];
    t0.extend((0..400).map(|p| Event::Store(base + p * PAGE)));
    t0.extend((0..400).map(|p| Event::Load(base + p * PAGE + 64)));
    t0.extend([
        Event::Compute(4_000_000),
        Event::Fork(2),
        Event::Wait,
        Event::Exit,
    ]);
    let mut t1 = vec![Event::Map {
        vaddr: base,
        bytes: 500 * PAGE,
    }];
    t1.extend((0..500).map(|p| Event::Store(base + p * PAGE)));
    // Holding its pages past the fork.
    t1.extend([Event::Compute(8_000_000), Event::Exit]);
    write_thread(&d, 0, false, &t0);
    write_thread(&d, 1, false, &t1);
    write_thread(&d, 2, true, &[Event::Compute(1), Event::Exit]);
    let child_rank = |rule: &str| {
        let c = config(&[
            "dram.preset=\"DDR3_2Gb_x8_1066\"",
            "dram.ranks=2",
            "controller.address_mapping=\"bank_xor\"",
            "dram.rank_capacity_mb=4",
            "os.allocator=\"rank_clock\"",
            &format!("os.preferred_rank=\"{rule}\""),
            "system.cpu_full_line_stores=\"allocate\"",
        ]);
        let (s, _) = run_workload(&c, &d).unwrap();
        assert_eq!(
            (
                s.os.threads[0].preferred_rank,
                s.os.threads[1].preferred_rank
            ),
            (0, 1)
        );
        s.os.threads[2].preferred_rank
    };
    // Rank 0 has more free frames (and, one thread each, the lower index: what equal
    // delays would give); rank 1 has served no read.
    assert_eq!(child_rank("most_free"), 0);
    assert_eq!(child_rank("least_delay"), 1);
}

#[test]
fn no_page_is_evicted_while_a_frame_is_free() {
    for policy in [AllocatorPolicy::Clock, AllocatorPolicy::RankClock] {
        // Four frames, no TLB pages kept: a rollover clears every bit.
        let mut os = tiny_os(policy, 4, 1, |_| 0, 0);
        let a = process(&mut os, 0);
        let c = process(&mut os, 1);
        assert_eq!(touch(&mut os, a, 0, 0), 0);
        assert_eq!(touch(&mut os, a, 0, 1), 1);
        assert_eq!(touch(&mut os, c, 1, 0), 2);
        assert_eq!(touch(&mut os, c, 1, 1), 3);
        os.exit(c);
        // The pointer is at the end: rollover, then past A's unreferenced pages (in use) to
        // the first free frame.
        assert_eq!(touch(&mut os, a, 0, 2), 2, "{policy:?}");
        assert_eq!(touch(&mut os, a, 0, 3), 3, "{policy:?}");
        assert_eq!(os.stats.evictions, 0, "{policy:?}");
        // Full now: the next page evicts.
        touch(&mut os, a, 0, 4);
        assert_eq!(os.stats.evictions, 1, "{policy:?}");
    }
}
