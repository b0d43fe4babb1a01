//! The interruption metrics (`sim.interruption_metrics`): which threads each refresh and
//! write drain stalled, the weighted core stall time per refresh, and every thread's DRAM
//! accesses per rank, checked against hand-built workloads whose answers follow from how
//! they run: one read at a time (`core.window = 1`) below the caches, so the thread waits on
//! DRAM almost all the time, on pages whose rank the run itself reports.

use crate::common;
use bulksim_core::system::interruptions::InterruptionStats;
use bulksim_core::system::run_workload;
use bulksim_core::system::stats::SystemStats;
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::*;
use std::path::Path;

const PAGE: u64 = 4096;
const LINE: u64 = 64;

/// DDR4-2400 (tREFI 7.8 us, tRFC 350 ns), one line in flight per core, with `more`.
fn system(more: &[&str]) -> Config {
    let mut sets = vec![
        "core.window=1",
        "sim.interruption_metrics=true",
        "sim.record_intervals=true",
    ];
    sets.extend_from_slice(more);
    config(&sets)
}

/// A thread that reads `reads` lines of its one page below the caches, one after another.
fn reader(base: u64, reads: u64) -> Vec<Event> {
    let mut ev = vec![Event::MapPopulated {
        vaddr: base,
        bytes: PAGE,
    }];
    ev.extend((0..reads).map(|i| Event::MemRead(base + i % (PAGE / LINE) * LINE)));
    ev.push(Event::Exit);
    ev
}

fn run(c: &Config, d: &Path) -> (SystemStats, InterruptionStats) {
    let (s, _) = run_workload(c, d).unwrap();
    let m = s.interruptions.clone().expect("interruption stats");
    (s, m)
}

/// The one rank a thread's accesses went to.
fn only_rank(by_rank: &[u64]) -> u32 {
    let used: Vec<usize> = (0..by_rank.len()).filter(|&r| by_rank[r] > 0).collect();
    assert_eq!(used.len(), 1, "one page, one rank: {by_rank:?}");
    used[0] as u32
}

/// Time (ns) `stalls` overlap [a, b).
fn overlap(stalls: &[(f64, f64)], a: f64, b: f64) -> f64 {
    stalls
        .iter()
        .map(|&(x, y)| (y.min(b) - x.max(a)).max(0.0))
        .sum()
}

/// Every refresh interval in the stats as (global rank, start ns, end ns), from the
/// controllers' own record (one device: global rank = channel x ranks + rank) in memory
/// cycles of the system's time line (femtoseconds: tCK rounded to a whole fs).
fn refreshes(s: &SystemStats, c: &Config, ranks: u32) -> Vec<(u32, f64, f64)> {
    let period_fs = (c.spec().unwrap().tck_ns() * 1e6).round() as u64;
    let ns = |cycles: u64| (cycles * period_fs) as f64 / 1e6;
    let mut out = Vec::new();
    for (ch, u) in s.unavailable.iter().enumerate() {
        for i in &u.intervals {
            if let Some(r) = i.rank {
                if i.cause == bulksim_core::controller::unavailability::Cause::Refresh {
                    out.push((
                        ch as u32 * ranks + r,
                        ns(i.start_mem_cycles),
                        ns(i.end_mem_cycles),
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn a_dependent_reader_is_stalled_by_every_refresh_of_its_rank_for_the_overlap() {
    let d = dir("interruptions", "one-rank");
    write_thread(&d, 0, false, &reader(0x10000, 10000));
    let c = system(&[]);
    let (s, m) = run(&c, &d);
    let t = &s.threads[0];
    let refs = refreshes(&s, &c, 1);
    // 10000 reads of ~20 ns (row hits, one at a time): about 200 us, some 25 refreshes.
    assert!(refs.len() >= 10, "{} refreshes", refs.len());
    assert_eq!(m.refreshes, refs.len() as u64);
    assert_eq!(m.refreshes, s.memory.refreshes);
    assert_eq!(m.per_refresh.len(), refs.len());
    let mut during = 0;
    for (p, &(rank, a, b)) in m.per_refresh.iter().zip(&refs) {
        assert_eq!((p.rank, p.start_ns, p.end_ns), (rank, a, b));
        // Independently: the recorded stalls (all on DRAM, all on this rank) within it.
        let expected = overlap(&t.stall_intervals_ns, a, b) / (b - a);
        assert!(
            (p.weighted_stall - expected).abs() < 1e-9,
            "{p:?} vs {expected}"
        );
        assert!(p.weighted_stall <= 1.0);
        if b <= t.end_ns {
            // While a refresh runs no read of the rank completes: the thread waits on its
            // read throughout, but for the core cycles in which one read ends and the
            // next begins.
            during += 1;
            assert_eq!(p.threads_stalled, 1, "{p:?}");
            assert!(p.weighted_stall > 0.9, "{p:?}");
        }
    }
    assert!(during >= 10);
    let stalled = m
        .per_refresh
        .iter()
        .filter(|p| p.threads_stalled > 0)
        .count() as u64;
    assert_eq!(m.threads[0].refreshes_stalled, stalled);
    assert_eq!(
        m.threads[0].refresh_stall_share,
        stalled as f64 / m.refreshes as f64
    );
    assert_eq!(
        m.refreshes_stalling_share,
        stalled as f64 / m.refreshes as f64
    );
    let weighted: f64 = m.per_refresh.iter().map(|p| p.weighted_stall).sum();
    assert!((m.weighted_stall_per_refresh - weighted / m.refreshes as f64).abs() < 1e-12);
    assert_eq!(
        m.threads_stalled_per_refresh,
        stalled as f64 / m.refreshes as f64
    );
    // Every read went to memory, for this thread, on rank 0.
    assert_eq!(m.threads[0].dram_reads_by_rank, vec![10000]);
    assert_eq!(m.threads[0].dram_writes_by_rank, vec![0]);
    assert_eq!(m.threads[0].dram_accesses_by_rank, vec![10000]);
    assert_eq!(s.memory.reads, 10000);
    let line = format!(
        "interruptions       {} refreshes: 1.00 threads stalled and {:.2} weighted stall per refresh, 100.0% stall a thread",
        m.refreshes, m.weighted_stall_per_refresh
    );
    assert!(s.summary().contains(&line), "{}", s.summary());
}

#[test]
fn a_refresh_of_one_rank_stalls_only_the_thread_on_that_rank() {
    // Two single-page readers on a two-rank channel; the scatter allocator places pages at
    // random, so take the first seed that puts them on different ranks.
    let d = dir("interruptions", "two-ranks");
    write_thread(&d, 0, false, &reader(0x10000, 6000));
    write_thread(&d, 1, false, &reader(0x80000, 6000));
    let (c, s, m) = (1..40)
        .find_map(|seed| {
            let c = system(&["dram.ranks=2", &format!("os.seed={seed}")]);
            let (s, m) = run(&c, &d);
            let ranks: Vec<u32> = m
                .threads
                .iter()
                .map(|t| only_rank(&t.dram_accesses_by_rank))
                .collect();
            (ranks[0] != ranks[1]).then_some((c, s, m))
        })
        .expect("a seed placing the pages on different ranks");
    let refs = refreshes(&s, &c, 2);
    assert_eq!(m.refreshes, refs.len() as u64);
    for (i, t) in m.threads.iter().enumerate() {
        let rank = only_rank(&t.dram_accesses_by_rank);
        let thread = &s.threads[i];
        // Its rank's refreshes while it ran, each stalling it; the other rank's never.
        let own: Vec<_> = refs
            .iter()
            .filter(|&&(r, _, b)| r == rank && b <= thread.end_ns)
            .collect();
        assert!(own.len() >= 5, "{} refreshes of rank {rank}", own.len());
        let stalled_by_own = refs
            .iter()
            .zip(&m.per_refresh)
            .filter(|((r, _, _), p)| *r == rank && p.threads_stalled > 0)
            .count() as u64;
        assert_eq!(t.refreshes_stalled, stalled_by_own);
        for &&(r, a, b) in &own {
            let p = &m.per_refresh[refs.iter().position(|x| *x == (r, a, b)).unwrap()];
            assert_eq!(p.threads_stalled, 1, "{p:?}");
            let expected = overlap(&thread.stall_intervals_ns, a, b) / (b - a);
            assert!((p.weighted_stall - expected).abs() < 1e-9);
        }
    }
    // No refresh stalled both: each thread waits only on its own rank.
    assert!(m.per_refresh.iter().all(|p| p.threads_stalled <= 1));
    let total: u64 = m.threads.iter().map(|t| t.refreshes_stalled).sum();
    let counted: u64 = m.per_refresh.iter().map(|p| p.threads_stalled as u64).sum();
    assert_eq!(total, counted);
}

#[test]
fn without_refresh_every_refresh_stat_is_zero() {
    let d = dir("interruptions", "no-refresh");
    write_thread(&d, 0, false, &reader(0x10000, 2000));
    let (s, m) = run(&system(&["controller.refresh=\"none\""]), &d);
    assert_eq!(s.memory.refreshes, 0);
    assert_eq!(m.refreshes, 0);
    assert!(m.per_refresh.is_empty());
    assert_eq!(m.threads_stalled_per_refresh, 0.0);
    assert_eq!(m.weighted_stall_per_refresh, 0.0);
    assert_eq!(m.refreshes_stalling_share, 0.0);
    assert_eq!(m.threads[0].refreshes_stalled, 0);
    assert_eq!(m.threads[0].refresh_stall_share, 0.0);
    assert_eq!(m.threads[0].dram_reads_by_rank, vec![2000]);
}

/// A program that loads and stores lines across `bytes` of its own memory, more than its
/// caches hold, so that memory sees fills and write-backs.
fn sweeper(base: u64, bytes: u64, store: bool, passes: u64) -> Vec<Event> {
    let mut ev = vec![Event::MapPopulated { vaddr: base, bytes }];
    for _ in 0..passes {
        for line in 0..bytes / LINE {
            let a = base + line * LINE;
            ev.push(if store {
                Event::Store(a)
            } else {
                Event::Load(a)
            });
        }
    }
    ev.push(Event::Exit);
    ev
}

#[test]
fn dram_accesses_by_rank_add_up_to_the_controllers_requests_and_write_backs_are_the_evictors() {
    let d = dir("interruptions", "by-rank");
    // 256 KB per thread through a private 64 KB cache: every pass misses; the storer's
    // evictions are dirty, the loader's clean.
    write_thread(&d, 0, false, &sweeper(0x100000, 256 << 10, true, 2));
    write_thread(&d, 1, false, &sweeper(0x800000, 256 << 10, false, 2));
    let c = config(&[
        "dram.channels=2",
        "dram.ranks=2",
        "cache.level.0.size_kb=64",
        "sim.interruption_metrics=true",
    ]);
    let (s, m) = run(&c, &d);
    assert_eq!(m.threads.len(), 2);
    for t in &m.threads {
        assert_eq!(t.dram_accesses_by_rank.len(), 4, "2 channels x 2 ranks");
    }
    let sum = |f: fn(&bulksim_core::system::interruptions::ThreadInterruptions) -> &Vec<u64>| {
        m.threads.iter().flat_map(f).sum::<u64>()
    };
    assert_eq!(sum(|t| &t.dram_reads_by_rank), s.memory.reads);
    assert_eq!(sum(|t| &t.dram_writes_by_rank), s.memory.writes);
    assert!(s.memory.writes > 0);
    // 4096 lines a pass, two passes, nothing cached across them: 8192 fills each.
    for t in &m.threads {
        assert_eq!(t.dram_reads_by_rank.iter().sum::<u64>(), 8192);
    }
    // Private caches: only the storer's accesses evict dirty lines.
    assert_eq!(m.threads[1].dram_writes_by_rank.iter().sum::<u64>(), 0);
    assert_eq!(
        m.threads[0].dram_writes_by_rank.iter().sum::<u64>(),
        s.memory.writes
    );
    // Without sim.record_intervals the intervals the metrics used are not listed.
    assert!(m.per_refresh.is_empty());
    assert!(s.unavailable.iter().all(|u| u.intervals.is_empty()));
    assert!(s.threads.iter().all(|t| t.stall_intervals_ns.is_empty()));
}

#[test]
fn a_stall_the_caches_serve_is_no_stall_on_a_rank() {
    // One pass that misses (48 KB), then passes that miss a 16 KB first level and hit a
    // 256 KB second one after 20 cycles: those waits overlap refreshes but are not waits
    // on the rank.
    let d = dir("interruptions", "cache-hits");
    write_thread(&d, 0, false, &sweeper(0x100000, 48 << 10, false, 60));
    let c = system(&[
        "cache.level.0.size_kb=16",
        "cache.level.0.hit_cycles=2",
        "cache.level.1.size_kb=256",
        "cache.level.1.hit_cycles=20",
    ]);
    let (s, m) = run(&c, &d);
    let t = &s.threads[0];
    assert_eq!(m.threads[0].dram_reads_by_rank, vec![768]);
    let refs = refreshes(&s, &c, 1);
    let mut hit_only = 0;
    for (p, &(_, a, b)) in m.per_refresh.iter().zip(&refs) {
        let waits = overlap(&t.stall_intervals_ns, a, b);
        let long = t
            .stall_intervals_ns
            .iter()
            .any(|&(x, y)| y - x > 20.0 && x < b && y > a);
        if !long {
            // Only second-level hits (about 7 ns each at 3.2 GHz) during this refresh.
            assert!(waits > 0.0, "the thread waits on hits all the time");
            assert_eq!(p.threads_stalled, 0, "{p:?}");
            assert_eq!(p.weighted_stall, 0.0);
            hit_only += 1;
        }
    }
    assert!(hit_only >= 5, "{hit_only} refreshes during the hits alone");
}

#[test]
fn the_metrics_change_no_other_stat() {
    let d = dir("interruptions", "identical");
    write_thread(&d, 0, false, &sweeper(0x100000, 256 << 10, true, 2));
    write_thread(&d, 1, false, &reader(0x800000, 3000));
    for intervals in [false, true] {
        let base = [
            "dram.ranks=2",
            "cache.level.0.size_kb=64",
            if intervals {
                "sim.record_intervals=true"
            } else {
                "sim.record_intervals=false"
            },
        ];
        let json = |metrics: bool| {
            let mut sets = base.to_vec();
            let m = format!("sim.interruption_metrics={metrics}");
            sets.push(&m);
            let (s, _) = run_workload(&config(&sets), &d).unwrap();
            assert_eq!(s.interruptions.is_some(), metrics);
            let mut v = serde_json::to_value(&s).unwrap();
            v.as_object_mut().unwrap().remove("interruptions");
            v["memory"].as_object_mut().unwrap().remove("host");
            v.to_string()
        };
        assert_eq!(json(false), json(true), "sim.record_intervals={intervals}");
    }
}

#[test]
fn a_write_drain_stalls_the_readers_waiting_on_its_channel() {
    // A writer posting a below-cache write every 150 core cycles or so (it never waits: no
    // stalls) fills the write queue again and again; a dependent reader on the same channel
    // waits through the drains.
    let d = dir("interruptions", "drains");
    let mut writer = vec![Event::MapPopulated {
        vaddr: 0x100000,
        bytes: 64 * PAGE,
    }];
    for i in 0..1600 {
        writer.extend([Event::MemWrite(0x100000 + i * LINE), Event::Compute(450)]);
    }
    writer.push(Event::Exit);
    write_thread(&d, 0, false, &writer);
    write_thread(&d, 1, false, &reader(0x800000, 4000));
    let c = system(&["controller.refresh=\"none\""]);
    let (s, m) = run(&c, &d);
    let period_fs = (c.spec().unwrap().tck_ns() * 1e6).round() as u64;
    let ns = |cycles: u64| (cycles * period_fs) as f64 / 1e6;
    let drains: Vec<_> = s.unavailable[0]
        .intervals
        .iter()
        .filter(|i| i.cause == bulksim_core::controller::unavailability::Cause::WriteDrain)
        .collect();
    assert!(drains.len() >= 10, "{} drains", drains.len());
    assert_eq!(m.write_drains, drains.len() as u64);
    assert_eq!(m.write_drains, s.unavailable[0].write_drains);
    assert_eq!(m.per_drain.len(), drains.len());
    assert_eq!(s.threads[0].memory_stalls, 0, "posted writes never wait");
    let mut stalled_drains = 0;
    for (p, i) in m.per_drain.iter().zip(&drains) {
        let (a, b) = (ns(i.start_mem_cycles), ns(i.end_mem_cycles));
        assert_eq!((p.channel, p.start_ns, p.end_ns), (0, a, b));
        assert_eq!(p.rank, i.rank, "one channel, one rank: global = local");
        let waits = overlap(&s.threads[1].stall_intervals_ns, a, b);
        assert_eq!(p.threads_stalled, (waits > 0.0) as u32, "{p:?}");
        assert_eq!(Some(p.banks_written), i.banks_written, "{p:?}");
        assert!(p.banks_written <= 16, "one rank of 16 banks");
        stalled_drains += p.threads_stalled as u64;
    }
    let banks: u32 = m.per_drain.iter().map(|p| p.banks_written).sum();
    assert!(banks > 0);
    assert_eq!(
        m.banks_written_per_drain,
        banks as f64 / m.write_drains as f64
    );
    // While the reader runs, reads wait behind the drains: most drains stall it.
    assert!(
        stalled_drains * 2 > m.write_drains,
        "{stalled_drains} of {}",
        m.write_drains
    );
    assert_eq!(
        m.threads_stalled_per_drain,
        stalled_drains as f64 / m.write_drains as f64
    );
    // Writes for the writer, reads for the reader, nothing else.
    assert_eq!(m.threads[0].dram_writes_by_rank, vec![1600]);
    assert_eq!(m.threads[0].dram_reads_by_rank, vec![0]);
    assert_eq!(m.threads[1].dram_reads_by_rank, vec![4000]);
    assert_eq!(m.threads[1].dram_writes_by_rank, vec![0]);
}

#[test]
fn ranks_are_numbered_on_across_devices() {
    // A one-rank device, then a two-rank one: global ranks 0 | 1, 2. The scatter allocator
    // spreads the sweeper's pages over both.
    let d = dir("interruptions", "devices");
    write_thread(&d, 0, false, &sweeper(0x100000, 1 << 20, true, 1));
    let c = config(&[
        "cache.level.0.size_kb=64",
        "memory.device.0.name=\"one\"",
        "memory.device.0.preset=\"DDR3_2Gb_x8_1066\"",
        "memory.device.0.ranks=1",
        "memory.device.1.name=\"two\"",
        "memory.device.1.preset=\"DDR3_4Gb_x8_1600\"",
        "memory.device.1.ranks=2",
        "sim.interruption_metrics=true",
        "sim.record_intervals=true",
    ]);
    let (s, m) = run(&c, &d);
    let (one, two) = (&s.memory_devices[0].stats, &s.memory_devices[1].stats);
    let t = &m.threads[0];
    assert_eq!(t.dram_accesses_by_rank.len(), 3);
    assert_eq!(t.dram_reads_by_rank[0], one.reads);
    assert_eq!(t.dram_writes_by_rank[0], one.writes);
    assert_eq!(t.dram_reads_by_rank[1] + t.dram_reads_by_rank[2], two.reads);
    assert_eq!(
        t.dram_writes_by_rank[1] + t.dram_writes_by_rank[2],
        two.writes
    );
    assert!(t.dram_accesses_by_rank.iter().all(|&n| n > 0), "{t:?}");
    // Refreshes of both devices, each under its own device's global ranks and clock.
    assert_eq!(s.unavailable.len(), 2);
    assert_eq!(m.refreshes, one.refreshes + two.refreshes);
    assert!(one.refreshes > 0 && two.refreshes > 0);
    let mut refreshes = m.per_refresh.iter();
    for (channel, first_rank, tck_ns) in [(0, 0, one.tck_ns), (1, 1, two.tck_ns)] {
        let period_fs = (tck_ns * 1e6).round() as u64;
        for i in &s.unavailable[channel].intervals {
            if i.cause != bulksim_core::controller::unavailability::Cause::Refresh {
                continue;
            }
            let p = refreshes.next().expect("one entry per refresh");
            assert_eq!(p.rank, first_rank + i.rank.unwrap());
            assert_eq!(p.start_ns, (i.start_mem_cycles * period_fs) as f64 / 1e6);
        }
    }
    assert!(refreshes.next().is_none());
}
