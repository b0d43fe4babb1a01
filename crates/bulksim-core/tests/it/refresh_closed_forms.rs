//! Closed forms of the Rank Assignment paper (§II-E, §III) checked through the full system
//! (cores, caches, OS, controller): a dependent-load thread alone on one rank loses the
//! fraction tRFC/tREFI of its time to refresh at every density and temperature, and eight
//! threads with k misses per 64 instructions in a 64-entry window never queue more than 8k
//! reads in a channel, so a 32-entry read queue fills only above 62.5 MPKI.

use crate::common;
use bulksim_core::system::{run_opened_workload, run_workload};
use bulksim_core::workload::program::Event;
use bulksim_core::workload::source::{Workload, WorkloadFormat};
use bulksim_core::Config;
use common::*;

/// The region the dependent reads chase through (resident: no faults), far larger than the
/// caches so that nearly every read goes to DRAM.
const HEAP: u64 = 0x1000_0000;
const HEAP_BYTES: u64 = 256 << 20;

/// Table I of the paper (DDR4-1600, per density): tRFC in ns; tREFI is 7.8 us below 85 C
/// and 3.9 us above (extended temperature).
const TRFC_NS: [(u32, f64); 3] = [(8, 350.0), (16, 480.0), (32, 640.0)];
const TEMPERATURES: [(&str, f64); 2] = [("normal", 7800.0), ("extended", 3900.0)];

/// One channel, one rank of `DDR4_{density}Gb_x8_1600` at `temperature`, refresh `policy`.
/// Closed page: every read is ACT + RDA to a closed bank, so a REF's precharge-all changes
/// nothing else (under open page it turns the next reads' row conflicts into misses, giving
/// back tRP per bank: random reads then lose only about half of tRFC per REF).
fn one_rank(density: u32, temperature: &str, policy: &str) -> Config {
    let preset = format!("dram.preset=\"DDR4_{density}Gb_x8_1600\"");
    let temperature = format!("dram.temperature=\"{temperature}\"");
    let refresh = format!("controller.refresh=\"{policy}\"");
    config(&[
        &preset,
        "dram.channels=1",
        "dram.ranks=1",
        "controller.page_policy=\"closed\"",
        &temperature,
        &refresh,
    ])
}

/// A thread of `reads` dependent reads (`D`, pointer chasing: each waits for the one before)
/// to pseudo-random lines of the heap; a fixed sequence, so runs differ only in refresh.
fn chase(reads: u64) -> std::path::PathBuf {
    let d = dir("refresh_closed_forms", "chase");
    let mut events = vec![Event::MapResident {
        vaddr: HEAP,
        bytes: HEAP_BYTES,
    }];
    let lines = HEAP_BYTES / 64;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..reads {
        // xorshift64: a fixed, well-spread sequence of lines.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        events.push(Event::MemReadDependent(HEAP + (x % lines) * 64));
    }
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    d
}

/// The thread's run time (ns) and the DRAM reads of a run.
fn run_time(c: &Config, workload: &std::path::Path) -> (f64, u64, u64) {
    let (stats, _) = run_workload(c, workload).unwrap();
    (
        stats.threads[0].end_ns,
        stats.memory.reads,
        stats.memory.refreshes,
    )
}

/// A thread that always has exactly one read outstanding is stalled for a whole refresh
/// whenever one falls due (a REF waits at most for the read in flight, then the next read
/// waits for tRFC), so over many tREFI it loses 1 - T_none/T_ref = tRFC/tREFI; the bound
/// 0.9-1.3 x leaves room for the read in flight, the PREA and the rows a REF closes.
#[test]
fn a_dependent_load_thread_loses_trfc_over_trefi_to_refresh() {
    // About 36 ns per read: 16 000 reads span about 75 normal tREFIs (150 extended).
    let reads = 16_000;
    let workload = chase(reads);
    for (density, trfc_ns) in TRFC_NS {
        for (temperature, trefi_ns) in TEMPERATURES {
            let case = format!("{density} Gb, {temperature} temperature");
            let (t_none, reads_none, refs_none) =
                run_time(&one_rank(density, temperature, "none"), &workload);
            let (t_ref, reads_ref, refs) =
                run_time(&one_rank(density, temperature, "staggered"), &workload);
            assert_eq!(refs_none, 0, "{case}");
            // The same reads reach DRAM either way (a few hit the caches, the same ones).
            assert_eq!(reads_none, reads_ref, "{case}");
            assert!(reads_ref > reads * 9 / 10, "{case}: {reads_ref} DRAM reads");
            assert!(t_ref > 50.0 * trefi_ns, "{case}: only {t_ref} ns");
            // One REF per tREFI of the run (the first falls due at tREFI).
            let due = (t_ref / trefi_ns).floor() as u64;
            assert!(refs.abs_diff(due) <= 1, "{case}: {refs} REFs in {t_ref} ns");
            let loss = 1.0 - t_none / t_ref;
            let share = trfc_ns / trefi_ns;
            assert!(
                (0.9 * share..=1.3 * share).contains(&loss),
                "{case}: loses {loss:.4} of its time, tRFC/tREFI = {share:.4} (T_none {t_none} ns, T_ref {t_ref} ns)"
            );
        }
    }
}

/// An MSC (post-LLC) trace of `records` reads, `k` in every 64 instructions (the 64 - k
/// other instructions spread as evenly as integers allow), each to its own line.
fn misses_per_64(k: u64, records: u64) -> std::path::PathBuf {
    let d = dir("refresh_closed_forms", &format!("mpki-{k}"));
    let path = d.join("reads.msc");
    let mut text = String::new();
    let others = 64 - k;
    for i in 0..records {
        // Of each group of k reads, the first (others % k) carry one more instruction.
        let j = i % k;
        let gap = others / k + u64::from(j < others % k);
        // Lines spread over many rows and banks (a large odd stride).
        let addr = HEAP + (i * 104_729 % (1 << 20)) * 64;
        text += &format!("{gap} R {addr:#x} 0x400000\n");
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// Eight copies of the k-per-64 trace on eight cores with 64-entry windows, one channel with
/// a 32-entry read queue: the peak read-queue occupancy.
fn peak_queue(k: u64) -> (u64, u64) {
    let trace = misses_per_64(k, 1500);
    let c = config(&[
        "dram.preset=\"DDR4_32Gb_x8_1600\"",
        "dram.channels=1",
        "dram.ranks=2",
        "core.window=64",
        "controller.read_queue_size=32",
    ]);
    let workload = Workload::open(&trace, Some(WorkloadFormat::Msc), 8).unwrap();
    let (stats, _) = run_opened_workload(&c, workload, &trace, None, None).unwrap();
    assert_eq!(stats.cores.len(), 8);
    (stats.memory.read_queue_peak, stats.memory.reads)
}

/// A window of 64 instructions holds at most k of a thread's reads, so eight threads keep at
/// most 8k reads outstanding: the read queue never holds more. 62.5 MPKI is 4 per 64
/// instructions (32 reads from eight threads); at 5 per 64 (78 MPKI) the 32 entries fill.
#[test]
fn eight_threads_queue_at_most_eight_k_reads() {
    for k in 1..=4 {
        let (peak, reads) = peak_queue(k);
        assert_eq!(reads, 8 * 1500, "k = {k}");
        assert!(peak <= 8 * k, "k = {k}: {peak} reads queued at once");
        // The bound is (nearly) reached: the threads do keep their reads in flight together.
        assert!(peak >= 7 * k, "k = {k}: only {peak} reads queued at once");
    }
    let (peak, _) = peak_queue(5);
    assert_eq!(peak, 32, "k = 5 (78 MPKI) fills the 32-entry read queue");
}
