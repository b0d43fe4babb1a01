//! DDR5 same-bank refresh (issue 36, item 2): REFsb's gates in the device (tRFCsb for its
//! banks, tREFSBRD for the others, its banks closed for tRP first), its rate in a run (one
//! REFsb per bank index per tREFI2, counted from the log), the other banks serving while a
//! REFsb runs, the stats that name it, and the settings it refuses. Expected values are
//! worked out here from JESD79-5's definitions (docs/standards.md), not read from the table.

use crate::common;
use bulksim_core::device::Device;
use bulksim_core::mapping::{AddressMapper, DramAddr};
use bulksim_core::spec::presets::preset;
use bulksim_core::spec::Command::*;
use bulksim_core::workload::generate::Pattern;
use bulksim_core::{sim, Config};
use common::*;

const X8_4800: &str = "DDR5_16Gb_x8_4800";
/// DDR5-4800 16 Gb in cycles of 0.41667 ns: tRFCsb 130 ns, tREFSBRD 30 ns, tRP, tRRD_L
/// max(8 nCK, 5 ns), tREFI2 1.95 us.
const RFCSB: u64 = 312;
const REFSBRD: u64 = 72;
const RP: u64 = 39;
const RRD_L: u64 = 12;
const REFI2: u64 = 4680;

fn same_bank(more: &[&str]) -> Config {
    let preset = format!("dram.preset=\"{X8_4800}\"");
    let mut sets = vec![
        preset.as_str(),
        "controller.refresh.granularity=2",
        "controller.refresh.bank_scope=\"same_bank\"",
    ];
    sets.extend_from_slice(more);
    config(&sets)
}

/// A one-rank device and an address maker (bank group, bank, row).
fn device() -> (Device, impl Fn(u32, u32, u32) -> DramAddr) {
    let spec = preset(X8_4800).unwrap();
    let mapper = AddressMapper::new(&spec.organisation, "RoBaRaCoCh", false).unwrap();
    let at = move |group, bank, row| mapper.locate(0, 0, group, bank, row, 0);
    (Device::new(&spec, 0), at)
}

#[test]
fn refsb_holds_its_banks_for_trfcsb_and_the_others_for_trefsbrd() {
    let (mut dev, at) = device();
    let t0 = 1000;
    dev.issue(RefSb, &at(0, 2, 0), t0);
    // Bank 2 of every bank group is refreshing; the REFsb was addressed through group 0.
    for group in [0, 5, 7] {
        assert_eq!(
            dev.earliest(Act, &at(group, 2, 9)),
            t0 + RFCSB,
            "group {group}"
        );
    }
    assert_eq!(
        dev.earliest(Act, &at(5, 1, 9)),
        t0 + REFSBRD,
        "another bank"
    );
    assert_eq!(
        dev.earliest(RefSb, &at(0, 3, 0)),
        t0 + REFSBRD,
        "REFsb of bank 3"
    );
    assert_eq!(
        dev.earliest(RefSb, &at(0, 2, 0)),
        t0 + RFCSB,
        "bank 2 again"
    );
    assert_eq!(
        dev.earliest(Ref, &at(0, 0, 0)),
        t0 + RFCSB,
        "REFab waits for bank 2"
    );
    // A row of bank 1 opened meanwhile: a REFsb of bank 1 needs it closed for tRP first,
    // and one of bank 3 waits tRRD_L after the ACT (the REFsb opens rows in its group too).
    let act = t0 + REFSBRD;
    dev.issue(Act, &at(6, 1, 9), act);
    assert!(
        !dev.is_legal(RefSb, &at(0, 1, 0)),
        "bank 1 of group 6 is open"
    );
    assert_eq!(dev.earliest(RefSb, &at(0, 3, 0)), act + RRD_L);
    let pre = dev.earliest(Pre, &at(6, 1, 9));
    dev.issue(Pre, &at(6, 1, 9), pre);
    assert!(dev.is_legal(RefSb, &at(0, 1, 0)));
    assert_eq!(dev.earliest(RefSb, &at(0, 1, 0)), pre + RP);
}

/// One log line of a REFsb: (cycle, rank, bank); the bank group is -1 (all of them).
fn refsb_lines(log: &std::path::Path) -> Vec<(u64, u32, u32)> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1] == "REFsb").then(|| {
                assert_eq!(f[4], "-1", "a REFsb addresses every bank group: {l}");
                (
                    f[0].parse().unwrap(),
                    f[3].parse().unwrap(),
                    f[5].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// Two idle ranks over 40 tREFI2: each rank's REFsb come every tREFI2 / 4 = 1170 cycles
/// (staggered: rank 0 first at 585, rank 1 at 1170), bank index 0, 1, 2, 3 in turn, so every
/// index of every rank is refreshed once per tREFI2: 4 REFsb per tREFI2 stand for the FGR
/// REF they replace. No REF is issued.
#[test]
fn an_idle_run_refreshes_each_bank_index_once_per_trefi2() {
    let c = same_bank(&["dram.ranks=2"]);
    let log = dir("ddr5_refresh", "idle").join("commands.csv");
    let end = 40 * REFI2 + 100;
    let mut trace = vec![read(10, 0), read(end, 0)].into_iter();
    let s = sim::run(&c, &mut trace, Some(&log), None).unwrap();
    let refsb = refsb_lines(&log);
    let interval = REFI2 / 4;
    for rank in 0..2u32 {
        let first = (rank as u64 + 1) * interval / 2;
        let mine: Vec<(u64, u32)> = refsb
            .iter()
            .filter(|r| r.1 == rank)
            .map(|r| (r.0, r.2))
            .collect();
        assert!(
            mine.len() as u64 >= 4 * 40,
            "rank {rank}: {} REFsb",
            mine.len()
        );
        for (k, &(cycle, bank)) in mine.iter().enumerate() {
            // Away from the two reads (the first leaves bank 0 open, so the first REFsb of
            // index 0 precharges it first), each REFsb issues when due.
            let due = first + k as u64 * interval;
            if due > 1000 && due + 1000 < end {
                assert_eq!(cycle, due, "rank {rank}, REFsb {k}");
            }
            assert_eq!(bank, k as u32 % 4, "rank {rank}, REFsb {k}");
        }
    }
    assert_eq!(s.refreshes, 0, "no all-bank REF");
    assert_eq!(s.commands["REFsb"], refsb.len() as u64);
    assert!(!s.commands.contains_key("REF") || s.commands["REF"] == 0);
}

/// While one bank index refreshes, requests to the other banks are served. On random reads
/// and writes arriving every 16 cycles (the channel busy, 9.6 GB/s of 19.2, but not
/// saturated) same-bank refresh gives a lower mean read latency than all-bank refresh at the
/// same (FGR) granularity: an all-bank REF closes the whole rank for tRFC2 (384 cycles)
/// every tREFI2, a REFsb holds its rank only for the last tRRD_L before it issues, then one
/// bank in four for tRFCsb (312). Measured: 126.2 ns against 135.3 ns, the bandwidth equal
/// (the arrivals set it). Saturated (requests back to back) the order flips, measured
/// 230.8 ns and 13.79 GB/s against 228.2 ns and 13.99 GB/s: every REFsb stops the rank's
/// ACTs for tREFSBRD (72 cycles), four per tREFI2 (288) against tRFC2's 384 once, and an
/// ACT-bound random stream loses about as much either way; that case is asserted to stay
/// within 3% so that a regression in the REFsb path shows.
#[test]
fn other_banks_serve_during_a_refsb() {
    let preset = format!("dram.preset=\"{X8_4800}\"");
    let all_bank = config(&[preset.as_str(), "controller.refresh.granularity=2"]);
    let run = |c: &Config, interval| run_generated(c, Pattern::Random, 20_000, interval, 0.3);
    let (a, sb) = (run(&all_bank, 16), run(&same_bank(&[]), 16));
    assert!(a.refreshes > 0 && sb.commands["REFsb"] > 3 * a.refreshes);
    assert!(
        sb.read_latency.mean_ns < 0.95 * a.read_latency.mean_ns,
        "mean read latency: same-bank {} ns, all-bank {} ns",
        sb.read_latency.mean_ns,
        a.read_latency.mean_ns
    );
    let (a, sb) = (run(&all_bank, 0), run(&same_bank(&[]), 0));
    assert!(
        (sb.bandwidth_gbps / a.bandwidth_gbps - 1.0).abs() < 0.03,
        "saturated bandwidth: same-bank {}, all-bank {}",
        sb.bandwidth_gbps,
        a.bandwidth_gbps
    );
}

/// Stats name the refreshes: REFsb in `commands` (absent from all-bank runs), no REF, and
/// each REFsb's energy a quarter of an FGR REF's (it refreshes one bank in four).
#[test]
fn stats_name_same_bank_refreshes_and_their_energy() {
    let end = 20 * REFI2;
    let trace = || vec![read(10, 0), read(end, 0)];
    let sb = run_records(&same_bank(&[]), trace());
    let preset = format!("dram.preset=\"{X8_4800}\"");
    let ab = run_records(
        &config(&[preset.as_str(), "controller.refresh.granularity=2"]),
        trace(),
    );
    assert!(!ab.commands.contains_key("REFsb"));
    let (n_sb, n_ab) = (sb.commands["REFsb"], ab.refreshes);
    assert_eq!((sb.refreshes, n_sb / 4), (0, n_ab), "4 REFsb per FGR REF");
    let per = |nj: f64, n: u64| nj / n as f64;
    let (e_sb, e_ab) = (
        per(sb.energy.components.refresh_nj, n_sb),
        per(ab.energy.components.refresh_nj, n_ab),
    );
    assert!(
        e_sb > 0.0 && (4.0 * e_sb - e_ab).abs() < 1e-9 * e_ab,
        "{e_sb} {e_ab}"
    );
}

/// Bank-idle-aware order: every round of 4 REFsb still covers the 4 bank indexes, under
/// traffic that keeps some banks busy.
#[test]
fn bank_idle_aware_rounds_cover_every_index() {
    let c = same_bank(&["controller.refresh.same_bank_order=\"bank_idle_aware\""]);
    let log = dir("ddr5_refresh", "idle_aware").join("commands.csv");
    let opts = bulksim_core::workload::generate::GenOptions {
        pattern: Pattern::Random,
        requests: 8_000,
        interval: 0,
        write_fraction: 0.3,
        footprint: 1 << 30,
        seed: 42,
    };
    let mut source = bulksim_core::workload::generate::Generator::new(opts).unwrap();
    sim::run(&c, &mut source, Some(&log), None).unwrap();
    let banks: Vec<u32> = refsb_lines(&log).iter().map(|r| r.2).collect();
    assert!(banks.len() >= 8);
    for round in banks.chunks_exact(4) {
        let mut sorted = round.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3], "rounds: {banks:?}");
    }
}

/// Same-bank refresh where it does not apply is refused, naming the key and the reason.
#[test]
fn same_bank_refresh_is_refused_where_it_does_not_apply() {
    let sb = "controller.refresh.bank_scope=\"same_bank\"";
    let preset = format!("dram.preset=\"{X8_4800}\"");
    for (sets, key, reason) in [
        (
            vec!["dram.preset=\"DDR4_8Gb_x8_2400\"", sb],
            "controller.refresh.bank_scope",
            "DDR4",
        ),
        (
            vec![preset.as_str(), sb],
            "controller.refresh.bank_scope",
            "granularity = 2",
        ),
        (
            vec![
                preset.as_str(),
                sb,
                "controller.refresh.granularity=2",
                "controller.refresh.scheme=\"pcd\"",
            ],
            "controller.refresh.scheme",
            "pcd",
        ),
        (
            vec![
                preset.as_str(),
                sb,
                "controller.refresh.granularity=2",
                "dram.timing.nRFCsb=0",
            ],
            "controller.refresh.bank_scope",
            "nRFCsb",
        ),
        (
            vec![
                preset.as_str(),
                sb,
                "controller.refresh.granularity=2",
                "dram.timing.nREFSBRD=1170",
            ],
            "dram.timing.nREFI2",
            "could not keep up",
        ),
        (
            vec!["dram.preset=\"LPDDR5_16Gb_x16_6400\"", sb],
            "controller.refresh.bank_scope",
            "LPDDR5",
        ),
        (
            vec!["dram.preset=\"HBM3_8Gb_6400\"", sb],
            "controller.refresh.bank_scope",
            "HBM3",
        ),
        (
            vec!["dram.preset=\"HBM3_8Gb_6400\"", "dram.timing.nRFCsb=100"],
            "dram.timing.nRFCsb",
            "DDR5",
        ),
        (
            vec!["dram.preset=\"DDR4_8Gb_x8_2400\"", "dram.timing.nRFCsb=100"],
            "dram.timing.nRFCsb",
            "DDR5",
        ),
    ] {
        let e = config_error(&sets);
        assert!(e.contains(key) && e.contains(reason), "{sets:?}: {e}");
    }
}

/// Bank-idle-aware order sees the queues: under reads that only ever go to bank index 0
/// (of every bank group, always queued), each round refreshes 1, 2, 3 (idle) and then 0;
/// round robin keeps 0, 1, 2, 3.
#[test]
fn bank_idle_aware_refreshes_the_busy_bank_index_last() {
    let spec = preset(X8_4800).unwrap();
    let mapper = AddressMapper::new(&spec.organisation, "RoBaRaCoCh", false).unwrap();
    let trace = || -> Vec<_> {
        (0..3000u64)
            .map(|i| {
                let a = mapper.locate(0, 0, (i % 8) as u32, 0, (i * 7919 % 4096) as u32, 0);
                read(4 * i, mapper.encode(&a))
            })
            .collect()
    };
    let order = |name: &str| -> Vec<u32> {
        let set = format!("controller.refresh.same_bank_order=\"{name}\"");
        let c = same_bank(&["controller.address_mapping=\"RoBaRaCoCh\"", set.as_str()]);
        let log = dir("ddr5_refresh", name).join("commands.csv");
        sim::run(&c, &mut trace().into_iter(), Some(&log), None).unwrap();
        refsb_lines(&log).iter().map(|r| r.2).collect()
    };
    let aware = order("bank_idle_aware");
    let robin = order("round_robin");
    assert!(aware.len() >= 8 && robin.len() >= 8, "{aware:?} {robin:?}");
    for round in aware.chunks_exact(4) {
        assert_eq!(round, [1, 2, 3, 0], "bank-idle-aware: {aware:?}");
    }
    for round in robin.chunks_exact(4) {
        assert_eq!(round, [0, 1, 2, 3], "round robin: {robin:?}");
    }
}

/// Under saturating random traffic every REFsb still issues soon after it falls due (every
/// tREFI2 / 4 from 1170): its set closes (a PRE waits at most for a write's recovery, about
/// 120 cycles, then tRP 39) and the rank is held for the last tRRD_L so that a stream of ACTs
/// to the other banks cannot keep pushing it back (each ACT moves it tRRD_L on).
#[test]
fn refsb_is_not_starved_by_a_stream_of_acts() {
    let c = same_bank(&[]);
    let log = dir("ddr5_refresh", "saturated").join("commands.csv");
    let opts = bulksim_core::workload::generate::GenOptions {
        pattern: Pattern::Random,
        requests: 20_000,
        interval: 0,
        write_fraction: 0.3,
        footprint: 1 << 30,
        seed: 42,
    };
    let mut source = bulksim_core::workload::generate::Generator::new(opts).unwrap();
    sim::run(&c, &mut source, Some(&log), None).unwrap();
    let interval = REFI2 / 4;
    let late: Vec<u64> = refsb_lines(&log)
        .iter()
        .enumerate()
        .map(|(k, r)| r.0 - (k as u64 + 1) * interval)
        .collect();
    // Measured: at most 212 cycles late; 420 without the hold.
    assert!(late.len() >= 40);
    assert!(late.iter().all(|&l| l < 300), "lateness: {late:?}");
}
