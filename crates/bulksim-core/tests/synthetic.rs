//! The Rank Assignment study's workloads and run length (issue #15 items 9 and 7): the
//! dependent read below the caches (`D`, pointer chasing), the end of a run at
//! `sim.stop_after_dram_accesses` with looped workloads, and the synthetic stand-ins of the
//! paper's programs, measured from the events of the files they write.

mod common;
use bulksim_core::system::run_workload;
use bulksim_core::workload::program::Event;
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
