//! The energy model against hand-computed values from the presets' datasheet currents.

mod common;
use common::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.abs().max(1.0)
}

/// DDR3-1066 (tCK 1.875 ns), 8 x8 chips per rank, VDD 1.5 V, IDD0 75, IDD2N 32, IDD3N 35,
/// IDD4R 140 mA; TN-41-01 read I/O 4.6 + 15.5 mW per DQ. One read at cycle 100 to a closed
/// bank; the run ends at its last data beat, 100 + tRCD 8 + CL 8 + BL 4 = 120.
#[test]
fn one_read_on_ddr3_1066() {
    let c = config(&[
        "dram.preset=\"DDR3_2Gb_x8_1066\"",
        "controller.refresh=none",
    ]);
    let s = run_records(&c, vec![read(100, 0)]);
    assert_eq!(s.mem_cycles, 120);
    let e = &s.energy;
    // ACT: 8 x 1.5 V x (75 - 35) mA x tRAS (20 x 1.875 = 37.5 ns) = 18 nJ.
    assert!(close(e.components.act_nj, 18.0), "{}", e.components.act_nj);
    // RD: 8 x 1.5 x (140 - 35) x 7.5 ns = 9.45 nJ.
    assert!(
        close(e.components.read_nj, 9.45),
        "{}",
        e.components.read_nj
    );
    assert_eq!(
        (
            e.components.pre_nj,
            e.components.write_nj,
            e.components.refresh_nj
        ),
        (0.0, 0.0, 0.0)
    );
    // Background: precharged for 100 cycles (187.5 ns) at IDD2N, then active 20 cycles
    // (37.5 ns) at IDD3N: 8 x 1.5 x (32 x 187.5 + 35 x 37.5) / 1000 = 87.75 nJ.
    assert!(
        close(e.components.background_nj, 87.75),
        "{}",
        e.components.background_nj
    );
    // I/O: (4.6 + 15.5) mW x 64 DQ x 7.5 ns = 9.648 nJ.
    assert!(close(e.components.io_nj, 9.648), "{}", e.components.io_nj);
    assert!(close(e.core_nj, 18.0 + 9.45 + 87.75));
    assert!(close(e.total_nj, e.core_nj + e.components.io_nj));
    assert_eq!(e.by_rank_nj.len(), 1);
    assert!(close(e.by_rank_nj[0], e.total_nj));
}

/// Refresh: (IDD5B 190 - IDD3N 35) mA x 1.5 V x tRFC (86 x 1.875 = 161.25 ns) x 8 chips =
/// 299.925 nJ per REF; a read at cycle 10,000 follows two refresh intervals (tREFI 4160).
#[test]
fn refresh_energy_per_ref() {
    let c = config(&["dram.preset=\"DDR3_2Gb_x8_1066\""]);
    let s = run_records(&c, vec![read(10_000, 0)]);
    assert_eq!(s.refreshes, 2);
    assert!(
        close(s.energy.components.refresh_nj, 2.0 * 299.925),
        "{}",
        s.energy.components.refresh_nj
    );
}

/// Every bank a PREA closes is one precharge: three open banks then a refresh. Per bank:
/// 8 x 1.5 x (75 - 32) mA x tRP (8 x 1.875 = 15 ns) = 7.74 nJ.
#[test]
fn prea_precharges_each_open_bank() {
    let c = config(&["dram.preset=\"DDR3_2Gb_x8_1066\"", "dram.timing.nREFI=2000"]);
    let bank = 1u64 << (6 + 7); // RoBaRaCoCh: bank bits above 7 column bits (1 rank, 1 channel)
    let s = run_records(&c, vec![read(10, 0), read(10, bank), read(10, 2 * bank)]);
    assert_eq!(s.refreshes, 0, "the reads finish before the first refresh");
    let s = run_records(
        &c,
        vec![
            read(10, 0),
            read(10, bank),
            read(10, 2 * bank),
            read(2100, 3 * bank),
        ],
    );
    assert_eq!((s.refreshes, s.commands["PREA"]), (1, 1));
    assert!(
        close(s.energy.components.pre_nj, 3.0 * 7.74),
        "{}",
        s.energy.components.pre_nj
    );
}

/// DDR4-2400: VDD 1.2 V, IDD0 48, IDD3N 43 mA, VPP 2.5 V with IPP0 = IPP3N = 3 mA, so an ACT
/// costs 8 x 1.2 x (48 - 43) x tRAS (39 x 0.8333 ns) and nothing on VPP beyond standby.
#[test]
fn ddr4_activate_and_vpp_standby() {
    let c = config(&["controller.refresh=none"]);
    let s = run_records(&c, vec![read(100, 0)]);
    let tck = 2000.0 / 2400.0;
    assert!(
        close(
            s.energy.components.act_nj,
            8.0 * 1.2 * 5.0 * 39.0 * tck / 1000.0
        ),
        "{}",
        s.energy.components.act_nj
    );
    let cycles = s.mem_cycles as f64;
    let expected_background =
        8.0 * (1.2 * (34.0 * 100.0 + 43.0 * (cycles - 100.0)) + 2.5 * 3.0 * cycles) * tck / 1000.0;
    assert!(
        close(s.energy.components.background_nj, expected_background),
        "{} vs {expected_background}",
        s.energy.components.background_nj
    );
}

/// Energy is booked to the rank that did the work; ranks sum to the total.
#[test]
fn energy_by_rank() {
    let c = config(&[
        "dram.preset=\"DDR3_2Gb_x8_1066\"",
        "dram.ranks=2",
        "controller.refresh=none",
    ]);
    let rank1 = 1u64 << (6 + 7); // RoBaRaCoCh: the Ra bit sits right above the 7 column bits
    let s = run_records(&c, vec![read(0, rank1), read(0, rank1 + 64)]);
    let e = &s.energy;
    assert_eq!(e.by_rank_nj.len(), 2);
    assert!(close(e.by_rank_nj.iter().sum::<f64>(), e.total_nj));
    // Rank 0 only idles in precharge standby: 8 x 1.5 x 32 mA x the whole run.
    let idle = 8.0 * 1.5 * 32.0 * s.mem_cycles as f64 * 1.875 / 1000.0;
    assert!(
        close(e.by_rank_nj[0], idle),
        "{} vs {idle}",
        e.by_rank_nj[0]
    );
    assert!(e.by_rank_nj[1] > idle);
}
