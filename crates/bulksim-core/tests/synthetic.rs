//! The Rank Assignment study's workloads and run length (issue #15 items 9 and 7): the
//! dependent read below the caches (`D`, pointer chasing), the end of a run at
//! `sim.stop_after_dram_accesses` with looped workloads, and the synthetic stand-ins of the
//! paper's programs, measured from the events of the files they write.

mod common;
use bulksim_core::system::{run_opened_workload, run_workload};
use bulksim_core::workload::program::Event;
use bulksim_core::workload::source::{Workload, WorkloadFormat};
use common::*;

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
