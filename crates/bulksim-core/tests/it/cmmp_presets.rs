//! CMMP's Table I system (`configs/cmmp_table1.toml`, issue 17 item 1): it loads, its devices
//! have Table I's sizes and controller settings, and unloaded reads take the latencies the
//! parts' timings give (DRAM_CMMP_1000: 1 ns cycles; PCM_CMMP_400: 2.5 ns cycles).

use crate::common;

use bulksim_core::config::PagePolicy;
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::{dir, read, run_records, write, write_thread};
use std::path::Path;

fn table1() -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/cmmp_table1.toml");
    Config::from_file(&path).unwrap()
}

#[test]
fn table1_loads_with_table_one_devices_and_caches() {
    let c = table1();
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    assert_eq!((c.system.cores, c.core.width, c.core.window), (4, 4, 128));
    assert_eq!(c.system.core_ghz, 4.0);
    let l: Vec<_> = c
        .cache
        .level
        .iter()
        .map(|l| (l.size_kb, l.ways, l.hit_cycles, l.mshrs, l.shared))
        .collect();
    assert_eq!(l, [(64, 4, 3, 16, false), (8192, 16, 32, 32, true)]);
    let devices = c.device_configs().unwrap();
    let names: Vec<_> = devices.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["dram", "pcm"]);
    let (dram, pcm) = (&devices[0].1, &devices[1].1);
    let (ds, ps) = (dram.spec().unwrap(), pcm.spec().unwrap());
    // 8 ranks x 8 banks x 512 rows x 4 KB; 16 ranks x 8 banks x 8192 rows x 4 KB.
    assert_eq!(ds.organisation.total_bytes(), 128 << 20);
    assert_eq!(ps.organisation.total_bytes(), 4 << 30);
    assert_eq!(
        (ds.organisation.ranks * ds.organisation.banks_per_rank()),
        64
    );
    assert_eq!(
        (ps.organisation.ranks * ps.organisation.banks_per_rank()),
        128
    );
    assert_eq!(dram.controller.page_policy, PagePolicy::Open);
    assert_eq!(pcm.controller.page_policy, PagePolicy::Closed);
    assert_eq!(dram.controller.address_mapping, "RoRaBaCoCh");
    assert_eq!(pcm.controller.address_mapping, "RoCoRaBaCh");
    // Table I's per-bank queues as channel-wide ones: banks x entries per bank.
    assert_eq!(dram.controller.read_queue_size, 64 * 32);
    assert_eq!(pcm.controller.read_queue_size, 128 * 8);
    let h = c.hybrid.as_ref().unwrap();
    assert_eq!(
        (h.pact_entries, h.pact_ways, h.art_entries, h.art_ways),
        (8192, 32, 512, 32)
    );
    assert_eq!(h.period_ns, 1_000_000);
}

/// One read to a closed bank: tRCD + tCAS + burst. DRAM: 12 + 12 + 4 cycles of 1 ns = 28 ns.
/// PCM: 22 + 5 + 4 cycles of 2.5 ns = 77.5 ns (55 ns, 12 ns rounded up to 12.5, 10 ns).
/// Under PCM's closed page a second read of the same row activates it again (no row hit),
/// and a precharge of a row that was only read costs nothing: 31 cycles again.
#[test]
fn unloaded_reads_take_the_timings_latency() {
    let c = table1();
    let devices = c.device_configs().unwrap();
    let (dram, pcm) = (&devices[0].1, &devices[1].1);
    let s = run_records(dram, vec![read(100, 0)]);
    assert_eq!(s.read_latency.max_mem_cycles, 28);
    assert_eq!(s.read_latency.max_ns, 28.0);
    let s = run_records(pcm, vec![read(100, 0), read(1000, 64)]);
    assert_eq!(s.read_latency.max_mem_cycles, 31);
    assert_eq!(s.read_latency.p50_mem_cycles, 31);
    assert_eq!(s.read_latency.max_ns, 77.5);
    assert_eq!(
        (s.row_hits, s.commands["ACT"], s.commands["RDA"]),
        (0, 2, 2)
    );
}

/// A PCM write then a read of another row of the same bank: the WRA's precharge writes back
/// its dirty block (150 ns = 60 cycles) before the read's ACT. The write's ACT at 100, WRA at
/// 100 + tRCD 22 = 122, the bank closed after write recovery (CWL 4 + burst 4 + tWR 6 = 14)
/// and the write-back: ACT at 122 + 14 + 60 = 196, RDA at 218, data done at 218 + 5 + 4 = 227:
/// 126 cycles after the read arrived at 101 (315 ns).
#[test]
fn a_pcm_read_waits_for_the_dirty_write_back() {
    let c = table1();
    let devices = c.device_configs().unwrap();
    let pcm = &devices[1].1;
    // RoCoRaBaCh with one channel: row bits above column, rank and bank bits (6 + 4 + 3
    // above the 6-bit line offset).
    let next_row = 1u64 << (6 + 6 + 4 + 3);
    let s = run_records(pcm, vec![write(100, 0), read(101, next_row)]);
    assert_eq!(s.commands["WRA"], 1);
    assert_eq!(s.read_latency.max_mem_cycles, 126);
    assert_eq!(s.read_latency.max_ns, 315.0);
}

/// The Table I system runs a hybrid workload end to end (small caches and a 10 us period so a
/// short run misses and migrates): four threads storing over 64 pages each, placed in PCM,
/// get hot pages promoted; the PCM device ran closed page and wrote dirty blocks back (its
/// array-write energy at 512 bits x 16.82 pJ per block); `hybrid_energy` adds the devices'
/// pJ/bit energies and 0.01 nJ per PACT and ART access.
#[test]
fn table1_runs_a_hybrid_workload() {
    let c = table1()
        .apply_sets(&[
            "cache.level.0.size_kb=16",
            "cache.level.1.size_kb=64",
            "hybrid.period_ns=10000",
            "hybrid.mechanism=cm",
            // 4 x 256 KB would all fit the 128 MB DRAM first: start in PCM to migrate.
            "hybrid.placement=pcm_only",
        ])
        .unwrap();
    let d = dir("cmmp", "table1");
    const BASE: u64 = 0x4000_0000;
    for thread in 0..4u32 {
        let mut ev = vec![Event::Map {
            vaddr: BASE,
            bytes: 64 * 4096,
        }];
        for round in 0..4u64 {
            for p in 0..64u64 {
                for line in (0..64u64).step_by(4) {
                    let a = BASE + p * 4096 + line * 64 + 8 * (round % 8);
                    ev.push(Event::Load(a));
                    if (p + line + round) % 3 == 0 {
                        ev.push(Event::Store(a));
                    }
                }
            }
        }
        ev.push(Event::Exit);
        write_thread(&d, thread, false, &ev);
    }
    let (s, _) = bulksim_core::system::run_workload(&c, &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.promotions_started > 0 && h.dram_accesses > 0, "{h:?}");
    let pcm = &s.memory_devices[1].stats;
    assert_eq!(s.memory_devices[1].name, "pcm");
    assert_eq!((pcm.commands["RD"], pcm.commands["WR"]), (0, 0));
    assert!(pcm.commands["WRA"] > 0);
    // Closed page: each WRA closes a row with its one dirty block (the copier's writes too).
    let per_block = 512.0 * 16.82 / 1000.0;
    let expected = pcm.commands["WRA"] as f64 * per_block;
    assert!((pcm.energy.per_bit.array_write_nj - expected).abs() < 1e-6 * expected);
    let e = s.hybrid_energy.as_ref().unwrap();
    assert_eq!(e.pcm_nj, pcm.energy.per_bit.total_nj);
    assert_eq!(e.dram_nj, s.memory_devices[0].stats.energy.per_bit.total_nj);
    assert!((e.pact_nj - h.pact.updates as f64 * 0.01).abs() < 1e-9);
    let art = h.art.lookups + h.art.inserts + h.art.bit_updates + h.art.flips;
    assert!(art > 0 && (e.art_nj - art as f64 * 0.01).abs() < 1e-9);
    assert!((e.total_nj - (e.dram_nj + e.pcm_nj + e.pact_nj + e.art_nj)).abs() < 1e-9);
}
