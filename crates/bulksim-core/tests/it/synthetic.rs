//! The Rank Assignment study's workloads and run length (issue #15 items 9 and 7): the
//! dependent read below the caches (`D`, pointer chasing), the end of a run at
//! `sim.stop_after_dram_accesses` with looped workloads, and the synthetic stand-ins of the
//! paper's programs, measured from the events of the files they write.

use crate::common;
use bulksim_core::system::{run_opened_workload, run_workload};
use bulksim_core::workload::program::Event;
use bulksim_core::workload::source::{Workload, WorkloadFormat};
use common::*;
use std::path::Path;

const PAGE: u64 = 4096;
/// The region every test thread reads (resident: no faults).
const HEAP: u64 = 0x1000_0000;

/// One channel, one rank of the paper's 32 Gb DDR4-1600, bank-interleaved (a page's 16 runs
/// of four lines lie in its rank's 16 banks), no refresh (nothing but the reads' own timing).
fn one_rank(more: &[&str]) -> bulksim_core::Config {
    let mut sets = vec![
        "dram.preset=\"DDR4_32Gb_x8_1600\"",
        "dram.channels=1",
        "dram.ranks=1",
        "controller.address_mapping=\"bank_interleaved\"",
        "controller.refresh=\"none\"",
    ];
    sets.extend_from_slice(more);
    config(&sets)
}

/// A thread that reads one line in each of the first `k` banks of one page (bank b holds
/// the lines at 256 b ..), dependent (`D`) or not (`R`); the time it takes (ns).
fn read_banks(k: u64, dependent: bool) -> f64 {
    let d = dir("synthetic", &format!("banks-{k}-{dependent}"));
    let mut events = vec![Event::MapResident {
        vaddr: HEAP,
        bytes: PAGE,
    }];
    for b in 0..k {
        let va = HEAP + 256 * b;
        events.push(if dependent {
            Event::MemReadDependent(va)
        } else {
            Event::MemRead(va)
        });
    }
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    let (stats, _) = run_workload(&one_rank(&[]), &d).unwrap();
    assert_eq!(stats.memory.reads, k);
    stats.threads[0].end_ns
}

/// Pointer chasing: k dependent reads, each to a closed row of its own bank (no bank
/// conflict, no tRC between them), take k times the unloaded read latency; the same reads
/// issued independently overlap and take far less.
#[test]
fn dependent_reads_serialise_at_the_unloaded_latency() {
    let base = read_banks(0, true);
    let latency = read_banks(1, true) - base;
    // The unloaded latency is at least ACT -> RD -> data: (nRCD + nCL + nBL) x 1.25 ns.
    assert!(latency >= (11.0 + 11.0 + 4.0) * 1.25, "{latency}");
    let k = 16;
    let chased = read_banks(k, true) - base;
    // Each read starts on a core cycle and is taken on a memory cycle: at most one memory
    // clock (1.25 ns) of alignment per read either way.
    let expected = k as f64 * latency;
    assert!(
        (chased - expected).abs() <= k as f64 * 1.25,
        "{k} dependent reads took {chased} ns, {k} x {latency} = {expected}"
    );
    let overlapped = read_banks(k, false) - base;
    // Independent: sixteen ACTs within tFAW/tRRD (four per 20 cycles) and one latency.
    assert!(
        overlapped < 0.3 * expected,
        "{k} independent reads took {overlapped} ns, dependent {chased}"
    );
}

/// A post-LLC thread: `records` records of 20 instructions then a read (three in four) or a
/// write-back, over 1 MB of resident memory with a scrambled line order.
fn post_llc_events(records: u64, salt: u64) -> (Vec<Event>, u64, u64) {
    let mut events = vec![Event::MapResident {
        vaddr: HEAP,
        bytes: 1 << 20,
    }];
    let (mut reads, mut writes) = (0, 0);
    for i in 0..records {
        let line = (i * 7919 + salt * 104_729) % (1 << 14);
        let va = HEAP + line * 64;
        events.push(Event::Compute(20));
        if i % 4 == 3 {
            events.push(Event::MemWrite(va));
            writes += 1;
        } else {
            events.push(Event::MemRead(va));
            reads += 1;
        }
    }
    events.push(Event::Exit);
    (events, reads, writes)
}

/// Two channels, two ranks, refresh on: the accepted count, not any one queue, ends the run.
fn stopping(n: u64, more: &[&str]) -> bulksim_core::Config {
    let stop = format!("sim.stop_after_dram_accesses={n}");
    let mut sets = vec![
        "dram.preset=\"DDR4_32Gb_x8_1600\"",
        "dram.channels=2",
        "dram.ranks=2",
        "controller.address_mapping=\"bank_xor\"",
        stop.as_str(),
    ];
    sets.extend_from_slice(more);
    config(&sets)
}

/// Two threads of 1000 records each (1500 reads, 500 write-backs in all) stopped at 300
/// accepted requests: exactly 300 reached the controllers, every thread ends at the stop,
/// earlier than the whole run, and idle skipping changes nothing.
#[test]
fn a_run_stops_at_exactly_n_accepted_requests() {
    let d = dir("synthetic", "stop");
    for t in 0..2 {
        write_thread(&d, t, false, &post_llc_events(1000, t as u64).0);
    }
    let (full, _) = run_workload(&stopping(0, &[]), &d).unwrap();
    assert_eq!((full.memory.reads, full.memory.writes), (1500, 500));
    let (stopped, _) = run_workload(&stopping(300, &[]), &d).unwrap();
    assert_eq!(stopped.memory.reads + stopped.memory.writes, 300);
    assert!(stopped.simulated_ns < full.simulated_ns / 2.0);
    for t in &stopped.threads {
        assert_eq!(
            t.end_ns, stopped.simulated_ns,
            "every thread ends at the stop"
        );
    }
    let (stepped, _) = run_workload(&stopping(300, &["sim.skip_idle=false"]), &d).unwrap();
    assert_eq!(
        serde_json::to_value(&stepped.memory).unwrap()["reads"],
        serde_json::to_value(&stopped.memory).unwrap()["reads"]
    );
    assert_eq!(stepped.simulated_ns, stopped.simulated_ns);
    assert_eq!(stepped.instructions, stopped.instructions);
}

/// A workload that ends before N accesses just ends: all its requests, its own end time.
#[test]
fn a_workload_shorter_than_n_just_ends() {
    let d = dir("synthetic", "short");
    let (events, reads, writes) = post_llc_events(10, 0);
    write_thread(&d, 0, false, &events);
    let (free, _) = run_workload(&stopping(0, &[]), &d).unwrap();
    let (capped, _) = run_workload(&stopping(1000, &[]), &d).unwrap();
    assert_eq!((capped.memory.reads, capped.memory.writes), (reads, writes));
    assert_eq!(capped.simulated_ns, free.simulated_ns);
    assert_eq!(capped.instructions, free.instructions);
}

/// Looping a 10-record trace: every pass issues the same 7 reads and 3 write-backs, so a run
/// stopped after k passes' worth of requests holds k times each, in bulksim's format and in
/// the MSC format (whose reader puts a resident map first: skipped on later passes).
#[test]
fn looped_traces_repeat_the_same_counts_per_pass() {
    let d = dir("synthetic", "loop");
    let (events, reads, writes) = post_llc_events(10, 3);
    assert_eq!((reads, writes), (8, 2));
    write_thread(&d, 0, false, &events);
    let msc = d.join("ten.msc");
    let mut text = String::new();
    for e in &events {
        match *e {
            Event::MemRead(a) => text += &format!("20 R {a:#x} 0x400000\n"),
            Event::MemWrite(a) => text += &format!("20 W {a:#x}\n"),
            _ => {}
        }
    }
    std::fs::write(&msc, text).unwrap();
    for passes in [1, 3, 7] {
        let n = passes * (reads + writes);
        let looped = stopping(n, &["system.loop_workloads=true"]);
        let (bulksim, _) = run_workload(&looped, &d.join("thread-0.trace")).unwrap();
        let workload = Workload::open(&msc, Some(WorkloadFormat::Msc), 1).unwrap();
        let (foreign, _) = run_opened_workload(&looped, workload, &msc, None, None).unwrap();
        for stats in [&bulksim, &foreign] {
            assert_eq!(
                (stats.memory.reads, stats.memory.writes),
                (passes * reads, passes * writes),
                "{passes} passes"
            );
            // Each pass's 10 records are 200 compute instructions and 10 accesses; all but
            // the last pass's are retired when the last pass's requests are accepted.
            assert!(stats.instructions >= (passes - 1) * 210);
        }
    }
}

/// A looped multi-threaded process on two cores (`system.cores`: the spawned thread takes the
/// spare one): the spawn and the map run once, the wait never (it would wait for ever); both
/// threads loop until the run stops. A later pass that unmaps is one error naming the file
/// and record.
#[test]
fn looped_processes_start_their_threads_once_and_refuse_unmaps() {
    let d = dir("synthetic", "loop-spawn");
    let (mut main, _, _) = post_llc_events(10, 1);
    main.insert(1, Event::Spawn(1));
    main.insert(main.len() - 1, Event::Wait);
    write_thread(&d, 0, false, &main);
    let (child, _, _) = post_llc_events(10, 2);
    write_thread(&d, 1, true, &child[1..]);
    let sets = ["system.loop_workloads=true", "system.cores=2"];
    let (stats, _) = run_workload(&stopping(500, &sets), &d).unwrap();
    assert_eq!(stats.memory.reads + stats.memory.writes, 500);
    assert_eq!(stats.os.spawns, 1);
    assert_eq!(stats.cores.len(), 2);
    // Side by side, each thread on its core: about half the requests each.
    for (t, core) in stats.threads.iter().zip(&stats.cores) {
        assert_eq!(t.instructions, core.instructions);
        assert!(t.instructions > 10 * 210, "{}", t.instructions);
    }

    let u = dir("synthetic", "loop-unmap");
    let (mut events, _, _) = post_llc_events(10, 1);
    events.insert(
        events.len() - 1,
        Event::Unmap {
            vaddr: HEAP,
            bytes: 1 << 20,
        },
    );
    events.insert(
        events.len() - 1,
        Event::MapResident {
            vaddr: HEAP,
            bytes: 1 << 20,
        },
    );
    write_thread(&u, 0, false, &events);
    let err = run_workload(&stopping(500, &["system.loop_workloads=true"]), &u)
        .err()
        .expect("a looped unmap is refused")
        .to_string();
    let file = u.join("thread-0.trace").display().to_string();
    assert!(
        err.starts_with(&format!("{file}:23: system.loop_workloads: pass 2")),
        "{err}"
    );
}

/// A thread that makes no memory access is not looped (it would loop for ever without
/// bringing the run nearer its stop): it ends after its one pass, the other thread loops.
#[test]
fn a_thread_without_memory_accesses_is_not_looped() {
    let d = dir("synthetic", "loop-compute");
    write_thread(&d, 0, false, &post_llc_events(10, 0).0);
    write_thread(&d, 1, false, &[Event::Compute(500), Event::Exit]);
    let (stats, _) = run_workload(&stopping(100, &["system.loop_workloads=true"]), &d).unwrap();
    assert_eq!(stats.memory.reads + stats.memory.writes, 100);
    assert_eq!(stats.threads[1].instructions, 500);
    assert!(stats.threads[1].end_ns < stats.simulated_ns);
}

#[test]
fn looping_without_a_stop_is_a_config_error() {
    let err = bulksim_core::Config::default()
        .apply_sets(&["system.loop_workloads=true"])
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("system.loop_workloads: true needs sim.stop_after_dram_accesses above 0"),
        "{err}"
    );
}

/// Fewer cores than threads that start the workload: one error naming the key.
#[test]
fn fewer_cores_than_starting_threads_is_an_error() {
    let d = dir("synthetic", "cores");
    for t in 0..3 {
        write_thread(&d, t, false, &post_llc_events(4, t as u64).0);
    }
    let err = run_workload(&stopping(0, &["system.cores=2"]), &d)
        .err()
        .expect("too few cores")
        .to_string();
    assert!(
        err.starts_with("system.cores: 2, but ") && err.contains("starts 3 threads"),
        "{err}"
    );
    let (stats, _) = run_workload(&stopping(0, &["system.cores=3"]), &d).unwrap();
    assert_eq!(stats.cores.len(), 3);
}

/// What a stand-in's files hold, counted from their events alone.
#[derive(Default, Debug)]
struct Counted {
    instructions: u64,
    reads: u64,
    dependent: u64,
    writes: u64,
    /// Per thread, the accesses outside the page range it writes (its own pages).
    shared: u64,
    pages: std::collections::BTreeSet<u64>,
    spawns: u64,
}

/// Counts the workload in `d`. Thread t's own pages are the t-th of as many equal parts of
/// the region thread 0 maps as there are threads; every write-back must lie in them (a
/// stand-in writes only its own pages, so it needs no coherence).
fn count_workload(d: &Path) -> Counted {
    use bulksim_core::workload::program::{thread_files, ProgramReader};
    let files = thread_files(d).unwrap();
    let all: Vec<Vec<Event>> = files
        .iter()
        .map(|f| {
            let mut r = ProgramReader::open(f).unwrap();
            std::iter::from_fn(|| r.next_event().unwrap()).collect()
        })
        .collect();
    let Event::MapResident { vaddr, bytes } = all[0][0] else {
        panic!("thread 0 starts with its resident map: {:?}", all[0][0]);
    };
    let part = bytes / files.len() as u64;
    let mut c = Counted::default();
    for (t, events) in all.iter().enumerate() {
        let own = vaddr + t as u64 * part..vaddr + (t as u64 + 1) * part;
        for e in events {
            match *e {
                Event::Compute(n) => c.instructions += n,
                Event::Exit => {}
                _ => c.instructions += 1,
            }
            let a = match *e {
                Event::MemRead(a) => {
                    c.reads += 1;
                    a
                }
                Event::MemReadDependent(a) => {
                    c.reads += 1;
                    c.dependent += 1;
                    a
                }
                Event::MemWrite(a) => {
                    c.writes += 1;
                    assert!(
                        own.contains(&a),
                        "thread {t} writes {a:#x} outside {own:x?}"
                    );
                    a
                }
                Event::Spawn(_) => {
                    c.spawns += 1;
                    continue;
                }
                _ => continue,
            };
            assert!((vaddr..vaddr + bytes).contains(&a), "{a:#x} is not mapped");
            c.pages.insert(a / PAGE);
            if !own.contains(&a) {
                c.shared += 1;
            }
        }
    }
    c
}

fn synth(
    name: &str,
    threads: u32,
    accesses: u64,
    working_set: &str,
    seed: u64,
) -> (
    std::path::PathBuf,
    bulksim_core::workload::synthetic::Summary,
) {
    use bulksim_core::workload::synthetic::Synthetic;
    let d = dir(
        "synthetic",
        &format!("{name}-{threads}-{accesses}-{working_set}-{seed}"),
    );
    std::fs::remove_dir(&d).unwrap();
    let s = Synthetic::new(name, threads, accesses, working_set, seed).unwrap();
    let summary = s.write(&d).unwrap();
    (d, summary)
}

/// Every stand-in as its files count: above 20 DRAM accesses per 1000 instructions, the
/// write-back and sharing fractions docs/rank_assignment.md gives, reads dependent only in
/// synth-mcf, one process of 8 threads for the sharing ones, and the summary the command
/// prints equal to the count.
#[test]
fn stand_ins_have_the_documented_mpki_write_and_sharing_fractions() {
    // (name, accesses per 1000 instructions, write-backs, to other threads' pages)
    let table = [
        ("synth-gems", 30.0, 0.25, 0.0),
        ("synth-lbm", 40.0, 0.5, 0.0),
        ("synth-mcf", 25.0, 0.1, 0.0),
        ("synth-share15", 25.0, 0.25, 0.15),
        ("synth-share60", 30.0, 0.15, 0.6),
    ];
    for (name, mpki, writes, shared) in table {
        let (d, summary) = synth(name, 0, 20_000, "small", 7);
        let c = count_workload(&d);
        let threads = if shared > 0.0 { 8 } else { 1 };
        let accesses = c.reads + c.writes;
        assert_eq!(accesses, threads * 20_000, "{name}");
        let measured = 1000.0 * accesses as f64 / c.instructions as f64;
        assert!(measured > 20.0, "{name}: {measured} MPKI");
        assert!(
            (measured / mpki - 1.0).abs() < 0.02,
            "{name}: {measured} MPKI"
        );
        let w = c.writes as f64 / accesses as f64;
        assert!((w - writes).abs() < 0.001, "{name}: write fraction {w}");
        let s = c.shared as f64 / accesses as f64;
        assert!((s - shared).abs() < 0.005, "{name}: sharing fraction {s}");
        assert_eq!(c.spawns, threads - 1, "{name}");
        let expected_dependent = if name == "synth-mcf" { c.reads } else { 0 };
        assert_eq!(c.dependent, expected_dependent, "{name}");
        assert_eq!(
            (
                summary.instructions,
                summary.reads,
                summary.writes,
                summary.shared_accesses
            ),
            (c.instructions, c.reads, c.writes, c.shared),
            "{name}: the printed summary"
        );
        assert_eq!(summary.footprint_pages, c.pages.len() as u64, "{name}");
        // A small working set is 4 MiB per thread, all of it touched by a random stand-in.
        assert!(c.pages.len() as u64 <= threads * 1024, "{name}");
    }
}

/// The large working set spreads mcf's random reads over 256 MiB: about as many distinct
/// pages as reads (65,536 pages), against at most 1024 in the small one.
#[test]
fn the_large_working_set_spreads_over_256_mib() {
    let (d, _) = synth("synth-mcf", 1, 20_000, "large", 1);
    let c = count_workload(&d);
    let span = c.pages.iter().max().unwrap() - c.pages.iter().min().unwrap() + 1;
    assert!(span > 65_000 && span <= 65_536, "{span} pages");
    assert!(c.pages.len() > 15_000, "{} pages", c.pages.len());
}

/// Same (name, threads, accesses, working set, seed), same bytes; another seed, other files.
#[test]
fn stand_ins_are_deterministic_in_their_seed() {
    let read = |d: &Path| std::fs::read(d.join("thread-3.trace")).unwrap();
    let (a, _) = synth("synth-share60", 4, 2000, "small", 5);
    let b = dir("synthetic", "again");
    std::fs::remove_dir(&b).unwrap();
    bulksim_core::workload::synthetic::Synthetic::new("synth-share60", 4, 2000, "small", 5)
        .unwrap()
        .write(&b)
        .unwrap();
    assert_eq!(read(&a), read(&b));
    let (c, _) = synth("synth-share60", 4, 2000, "small", 6);
    assert_ne!(read(&a), read(&c));
}

/// Bad requests: one error naming the argument, the value and what was expected.
#[test]
fn bad_stand_in_requests_are_one_line_errors() {
    use bulksim_core::workload::synthetic::Synthetic;
    let cases = [
        (
            "synth-xyz",
            0,
            10,
            "small",
            "unknown synthetic workload 'synth-xyz'; expected one of synth-gems",
        ),
        (
            "synth-lbm",
            2,
            10,
            "small",
            "threads = 2: synth-lbm is single-threaded",
        ),
        (
            "synth-share15",
            1,
            10,
            "small",
            "threads = 1: synth-share15 shares pages between threads; expected 2 to 64",
        ),
        (
            "synth-share15",
            65,
            10,
            "small",
            "threads = 65: synth-share15 shares pages between threads; expected 2 to 64",
        ),
        (
            "synth-gems",
            1,
            0,
            "small",
            "accesses = 0: expected 1 to 100000000",
        ),
        (
            "synth-gems",
            1,
            10,
            "huge",
            "working set 'huge': expected small (4 MiB per thread) or large",
        ),
    ];
    for (name, threads, accesses, ws, what) in cases {
        let err = Synthetic::new(name, threads, accesses, ws, 1)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(what), "{err}");
        assert!(!err.contains('\n'));
    }
    let (d, _) = synth("synth-gems", 1, 10, "small", 1);
    let err = Synthetic::new("synth-gems", 1, 10, "small", 1)
        .unwrap()
        .write(&d)
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("exists and is not empty; give a new or empty directory"),
        "{err}"
    );
}
