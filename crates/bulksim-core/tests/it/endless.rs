//! No endless runs by accident: idle gaps in trace replay are skipped in closed form, refreshes
//! included, with the same refreshes, energy and unavailability as visiting every cycle; a
//! record beyond `sim.max_cycles` stops with an error naming it and the key; the full system
//! stops on a compute record or a run past `sim.max_cycles`, and reports progress.

use crate::common;
use bulksim_core::system::{run_workload, System};
use bulksim_core::workload::program::Event;
use bulksim_core::workload::trace::{TraceFormat, TraceReader};
use bulksim_core::{sim, Error};
use common::*;
use std::sync::mpsc;
use std::time::Duration;

/// Requests, a gap of `gap_refis` refresh intervals (plus half of one), requests again, and a
/// second gap, so that both gaps start with rows open and refreshes pending or not.
fn gappy_records(refi: u64, gap_refis: u64) -> Vec<bulksim_core::workload::trace::TraceRecord> {
    let mut recs = Vec::new();
    let mut cycle = 0;
    for burst in 0..3u64 {
        for i in 0..40u64 {
            let addr = (burst * 977 + i * 7919) * 64 % (1 << 30);
            recs.push(if i % 3 == 0 {
                write(cycle, addr)
            } else {
                read(cycle, addr)
            });
            cycle += 3;
        }
        cycle += gap_refis * refi + refi / 2 + burst * 17;
    }
    recs
}

#[test]
fn idle_refreshes_in_closed_form_equal_visiting_every_cycle() {
    let cases: &[(&str, &[&str])] = &[
        ("one rank", &[]),
        ("four ranks", &["dram.ranks=4"]),
        ("two channels", &["dram.channels=2", "dram.ranks=2"]),
        ("closed page", &["controller.page_policy=closed"]),
        ("short tREFI", &["dram.timing.nREFI=900", "dram.ranks=2"]),
        // REFs due 112 cycles apart, closer than tRFC: stepped, not booked.
        (
            "REFs closer than tRFC",
            &["dram.timing.nREFI=900", "dram.ranks=8"],
        ),
        ("ddr3", &["dram.preset=\"DDR3_2Gb_x8_1066\""]),
    ];
    for (name, sets) in cases {
        let mut on = sets.to_vec();
        on.push("sim.skip_idle=true");
        let mut off = sets.to_vec();
        off.push("sim.skip_idle=false");
        let (on, off) = (config(&on), config(&off));
        let refi = on.spec().unwrap().timing.n_refi as u64;
        let records = gappy_records(refi, 60);
        let run = |c, recs: Vec<_>| {
            let (stats, router) =
                sim::run_keeping_memory(c, &mut recs.into_iter(), None, None).unwrap();
            (stats, router.devices[0].channels.unavailability())
        };
        let (a, a_unavailable) = run(&on, records.clone());
        let (b, b_unavailable) = run(&off, records);
        assert_eq!(
            deterministic_json(&a),
            deterministic_json(&b),
            "{name}: closed-form refreshes differ from stepping"
        );
        assert_eq!(a_unavailable, b_unavailable, "{name}");
        // Two gaps of 60.5 intervals between the bursts: at least 120 rounds of refreshes in them.
        let ranks = on.dram.ranks as u64 * on.dram.channels as u64;
        assert!(a.refreshes >= 120 * ranks, "{name}: {}", a.refreshes);
        assert!(a.energy.components.refresh_nj > 0.0, "{name}");
    }
}

#[test]
fn a_gap_of_a_billion_refresh_intervals_runs_fast_with_exact_refreshes() {
    // Stepping would visit 4e11 refreshes here (hours); in closed form it takes milliseconds.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let c = config(&["dram.ranks=4", "sim.max_cycles=20000000000000"]);
        let refi = c.spec().unwrap().timing.n_refi as u64;
        let gap = 1_000_000_000 * refi + refi / 8;
        let stats = run_records(&c, vec![read(0, 0), read(gap, 64)]);
        tx.send((stats, refi, gap)).unwrap();
    });
    let (stats, refi, gap) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("a long idle gap must not be stepped refresh by refresh");
    // Rank r's REFs fall due at (r + 1) * tREFI / 4 + k * tREFI; all due by the last
    // request's arrival issue, none after it falls due (it is served in under a tREFI/8).
    let expected: u64 = (0..4u64)
        .map(|r| {
            let first = (r + 1) * refi / 4;
            (gap - first) / refi + 1
        })
        .sum();
    assert_eq!(stats.refreshes, expected);
    assert_eq!(stats.reads, 2);
    assert!(stats.mem_cycles > gap);
}

#[test]
fn a_record_beyond_max_cycles_names_the_record_and_the_key() {
    let d = dir("endless", "replay");
    let path = d.join("corrupt.trace");
    std::fs::write(&path, "0,R,0x40\n# a comment\n1000000000000000,R,0x80\n").unwrap();
    let mut reader = TraceReader::open(&path, TraceFormat::Native).unwrap();
    let err = sim::run(&config(&[]), &mut reader, None, None).unwrap_err();
    let Error::Trace(msg) = err else {
        panic!("expected a trace error, got {err:?}")
    };
    assert!(msg.contains("corrupt.trace:3:"), "{msg}");
    assert!(msg.contains("cycle 1000000000000000"), "{msg}");
    assert!(msg.contains("sim.max_cycles (100000000000 "), "{msg}");
    // Raised, the same trace replays (fast: the gap is skipped).
    let c = config(&["sim.max_cycles=1000000000000000"]);
    let mut reader = TraceReader::open(&path, TraceFormat::Native).unwrap();
    let stats = sim::run(&c, &mut reader, None, None).unwrap();
    assert_eq!(stats.reads, 2);
}

#[test]
fn max_cycles_zero_is_a_config_error() {
    let err = bulksim_core::Config::default()
        .apply_sets(&["sim.max_cycles=0"])
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(
        err,
        Error::Config("sim.max_cycles: 0 is out of range; expected at least 1 cycle".into())
    );
}

#[test]
fn a_compute_record_past_max_cycles_stops_naming_it() {
    let d = dir("endless", "compute");
    write_thread(
        &d,
        0,
        false,
        &[
            Event::Compute(10),
            Event::Compute(4_000_000_000),
            Event::Exit,
        ],
    );
    // A count the reader takes (at most 2^32) but that alone runs past a lowered limit.
    let c = paper_system(&["sim.max_cycles=100000000"]);
    let err = run_workload(&c, &d).err().expect("an error");
    let Error::Trace(msg) = err else {
        panic!("expected a trace error, got {err:?}")
    };
    // Line 1 is the header; the corrupt count is on line 3, and takes n / width cycles.
    assert!(msg.contains("thread-0.trace:3:"), "{msg}");
    let cycles = 4_000_000_000u64.div_ceil(c.core.width as u64);
    assert!(msg.contains(&format!("take {cycles} core cycles")), "{msg}");
    assert!(
        msg.contains("sim.max_cycles (100000000 core cycles)"),
        "{msg}"
    );
}

#[test]
fn a_full_system_run_reaching_max_cycles_names_the_running_threads() {
    let d = dir("endless", "long");
    let mut events = vec![Event::Map {
        vaddr: 0x10000,
        bytes: 1 << 20,
    }];
    // Loads to distinct lines: each misses to DRAM, so 2,000 of them take far more than
    // 20,000 core cycles (while no single record does).
    for i in 0..2000u64 {
        events.push(Event::Load(0x10000 + i * 512));
    }
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    let err = run_workload(&paper_system(&["sim.max_cycles=20000"]), &d)
        .err()
        .expect("an error");
    let Error::Trace(msg) = err else {
        panic!("expected a trace error, got {err:?}")
    };
    assert!(msg.contains("thread-0.trace:"), "{msg}");
    assert!(
        msg.contains("reached sim.max_cycles (20000 core cycles)"),
        "{msg}"
    );
    // Without the limit it completes, in more cycles than the limit was.
    let (stats, _) = run_workload(&paper_system(&[]), &d).unwrap();
    assert!(stats.core_cycles > 20_000, "{}", stats.core_cycles);
}

#[test]
fn full_system_progress_reports_rising_counts_and_the_final_one() {
    let d = dir("endless", "progress");
    let mut events = vec![Event::Map {
        vaddr: 0x10000,
        bytes: 1 << 20,
    }];
    for i in 0..3000u64 {
        events.push(Event::Load(0x10000 + i * 64 * 5 % (1 << 20)));
        events.push(Event::Compute(3));
    }
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    let c = paper_system(&[]);
    let mut system = System::new(&c, &d).unwrap();
    let mut seen: Vec<(u64, f64)> = Vec::new();
    let mut report = |n: u64, ns: f64| seen.push((n, ns));
    // A zero period: a report at every look at the host clock.
    let stats = system
        .run_with_progress(Some(&mut report), Duration::ZERO)
        .unwrap();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(seen
        .windows(2)
        .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    let last = *seen.last().unwrap();
    // 3000 loads, 9000 compute instructions, the map and the exit's retirement.
    assert_eq!(last.0, stats.instructions);
    assert!(last.0 >= 12_000);
    assert!(last.1 >= stats.simulated_ns);
    // The default period reports once at the end of a run this short.
    let mut count = 0;
    let mut counting = |_: u64, _: f64| count += 1;
    let mut system = System::new(&c, &d).unwrap();
    system
        .run_with_progress(Some(&mut counting), bulksim_core::system::PROGRESS_PERIOD)
        .unwrap();
    assert!(count >= 1);
}

/// A thread's program: memory work around long compute runs.
fn compute_heavy(base: u64, runs: &[u64]) -> Vec<Event> {
    let mut events = vec![Event::Map {
        vaddr: base,
        bytes: 64 * 4096,
    }];
    for (k, &n) in runs.iter().enumerate() {
        for i in 0..40u64 {
            let addr = base + (k as u64 * 40 + i) * 320 % (64 * 4096);
            events.push(if i % 4 == 0 {
                Event::Store(addr)
            } else {
                Event::Load(addr)
            });
        }
        events.push(Event::Compute(n));
    }
    events.push(Event::Exit);
    events
}

#[test]
fn long_compute_runs_jump_ahead_with_the_stats_stepping_gives() {
    let d = dir("endless", "compute-ff");
    write_thread(
        &d,
        0,
        false,
        &compute_heavy(0x100000, &[300_000, 7, 123_457, 90_001]),
    );
    write_thread(
        &d,
        1,
        false,
        &compute_heavy(0x900000, &[50_000, 250_003, 11]),
    );
    for sets in [
        &[][..],
        &["core.width=1"],
        &["core.window=4", "core.width=4"],
    ] {
        let mut jump = paper_system(sets);
        jump.sim.record_intervals = true;
        let mut step = jump.clone();
        step.sim.skip_idle = false;
        let comparable = |c| {
            let (s, _) = run_workload(c, &d).unwrap();
            let mut v = serde_json::to_value(&s).unwrap();
            v["memory"].as_object_mut().unwrap().remove("host");
            v
        };
        let (a, b) = (comparable(&jump), comparable(&step));
        assert_eq!(
            a, b,
            "{sets:?}: jumping over compute cycles changed the stats"
        );
        // Own instructions: 1 map + 40 accesses per run + the compute runs.
        let threads = a["threads"].as_array().unwrap();
        assert_eq!(
            threads[0]["instructions"],
            1 + 4 * 40 + 300_000 + 7 + 123_457 + 90_001
        );
        assert_eq!(
            threads[1]["instructions"],
            1 + 3 * 40 + 50_000 + 250_003 + 11
        );
    }
}

#[test]
fn a_billion_cycle_compute_run_takes_seconds() {
    let d = dir("endless", "compute-long");
    let n = 3_000_000_000u64;
    write_thread(&d, 0, false, &compute_heavy(0x100000, &[n]));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let c = paper_system(&[]);
        tx.send((run_workload(&c, &d).unwrap().0, c.core.width as u64))
            .unwrap();
    });
    let (stats, width) = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("a long compute run must not be stepped cycle by cycle");
    assert_eq!(stats.instructions, 1 + 40 + n);
    assert!(stats.core_cycles >= n / width, "{}", stats.core_cycles);
    // Refreshes went on meanwhile: one per tREFI (7.8 us) per rank and channel.
    assert!(stats.memory.refreshes as f64 >= stats.simulated_ns / 7_800.0 * 2.0 * 0.99);
}

#[test]
fn memory_refreshes_on_time_before_the_first_request() {
    // 2 million compute cycles (about 625 us at 3.2 GHz, some 80 tREFI) before the first
    // access: the devices must refresh all along, as they do when every cycle is visited,
    // not catch up in a burst when the access comes.
    let d = dir("endless", "late-first-access");
    let mut events = vec![Event::Compute(6_000_000)];
    events.extend(compute_heavy(0x100000, &[10]));
    write_thread(&d, 0, false, &events);
    let jump = paper_system(&[]);
    let mut step = jump.clone();
    step.sim.skip_idle = false;
    let comparable = |c| {
        let (s, _) = run_workload(c, &d).unwrap();
        let mut v = serde_json::to_value(&s).unwrap();
        v["memory"].as_object_mut().unwrap().remove("host");
        v
    };
    let (a, b) = (comparable(&jump), comparable(&step));
    assert_eq!(a, b, "skipping idle cycles changed the stats");
    // Two channels of one rank, one REF per tREFI (7.8 us) each.
    let refreshes = a["memory"]["refreshes"].as_u64().unwrap() as f64;
    let expected = a["simulated_ns"].as_f64().unwrap() / 7_800.0 * 2.0;
    assert!(
        (refreshes - expected).abs() <= 4.0,
        "{refreshes} vs {expected}"
    );
    // No rank waited for a refresh much longer than tRFC (no overdue burst).
    for channel in a["unavailable"].as_array().unwrap() {
        let rank = &channel["ranks"][0];
        let (n, cycles) = (
            rank["refreshes"].as_u64().unwrap(),
            rank["refresh_mem_cycles"].as_u64().unwrap(),
        );
        assert!(
            cycles <= n * 200,
            "{cycles} memory cycles over {n} refreshes"
        );
    }
}

/// Endless ChampSim records without memory operands (one instruction at 0x401000 over and
/// over: what a long register-only loop, or an endless pipe, gives).
struct EndlessInstructions {
    record: [u8; 64],
    at: usize,
}

impl std::io::Read for EndlessInstructions {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for b in buf.iter_mut() {
            *b = self.record[self.at];
            self.at = (self.at + 1) % 64;
        }
        Ok(buf.len())
    }
}

fn endless_champsim() -> Box<dyn bulksim_core::workload::source::EventSource> {
    use bulksim_core::workload::formats::champsim::{ChampsimReader, Instr};
    let record = Instr {
        ip: 0x401000,
        ..Default::default()
    }
    .encode();
    let input = std::io::BufReader::new(EndlessInstructions { record, at: 0 });
    Box::new(ChampsimReader::new(
        Box::new(input),
        "endless.champsimtrace",
    ))
}

/// Records without memory operands advance the run as they are read, so `sim.max_cycles`
/// stops an endless ChampSim input (it once read on for 2^40 records before the core saw one).
#[test]
fn an_endless_champsim_input_without_memory_operands_stops_at_max_cycles() {
    use bulksim_core::system::run_opened_workload;
    use bulksim_core::workload::source::{Workload, WorkloadFormat, WorkloadThread};
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let workload = Workload {
            format: WorkloadFormat::Champsim,
            threads: vec![WorkloadThread {
                source: endless_champsim(),
                reopen: Box::new(|| Err(Error::Trace("not reopened".into()))),
                copy: 0,
                base: 0,
            }],
        };
        let c = paper_system(&["sim.max_cycles=1000000"]);
        let path = std::path::Path::new("endless.champsimtrace");
        tx.send(run_opened_workload(&c, workload, path, None, None).map(|(s, _)| s.instructions))
            .unwrap();
    });
    let got = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("an endless ChampSim input must stop at sim.max_cycles");
    let err = got.expect_err("an endless input cannot finish");
    let Error::Trace(msg) = err else {
        panic!("expected a trace error, got {err:?}")
    };
    assert!(msg.starts_with("endless.champsimtrace:"), "{msg}");
    assert!(
        msg.contains("sim.max_cycles (1000000 core cycles)"),
        "{msg}"
    );
}

/// The reader gives a run of instructions without memory operands out in pieces of
/// `COMPUTE_CHUNK`, and the core takes the pieces as it takes the whole run.
#[test]
fn long_compute_runs_in_pieces_time_as_one_run() {
    use bulksim_core::workload::formats::champsim::COMPUTE_CHUNK;
    let mut source = endless_champsim();
    let first: Vec<Event> = (0..3)
        .map(|_| source.next_event().unwrap().unwrap())
        .collect();
    assert!(matches!(first[0], Event::MapResident { .. }));
    assert_eq!(first[1..], [Event::Compute(COMPUTE_CHUNK); 2]);
    assert_eq!(source.location(), "endless.champsimtrace:131072");

    // A load, the compute run (whole or in pieces), a load, as a bulksim workload.
    let run = |name: &str, compute: &[u64]| {
        let d = dir("endless", name);
        let mut events = vec![
            Event::Map {
                vaddr: 0x10000,
                bytes: 1 << 20,
            },
            Event::Load(0x10000),
        ];
        events.extend(compute.iter().map(|&n| Event::Compute(n)));
        events.extend([Event::Load(0x80000), Event::Exit]);
        write_thread(&d, 0, false, &events);
        run_workload(&paper_system(&[]), &d).unwrap().0
    };
    let whole = run("compute-whole", &[3 * COMPUTE_CHUNK + 7]);
    let pieces = run(
        "compute-pieces",
        &[COMPUTE_CHUNK, COMPUTE_CHUNK, COMPUTE_CHUNK, 7],
    );
    assert!(whole.core_cycles > COMPUTE_CHUNK, "{}", whole.core_cycles);
    assert_eq!(whole.core_cycles, pieces.core_cycles);
    assert_eq!(whole.instructions, pieces.instructions);
}
