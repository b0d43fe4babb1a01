//! The energy model against hand-computed values from the presets' datasheet currents.

use crate::common;
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

/// CMMP's pJ/bit model (Table I) for a known command sequence on one bank, by hand. 4 KB rows
/// are 32,768 bits, a burst 512 bits.
///
/// DRAM_CMMP_1000 (array 1.17 / 0.39, buffer 0.93 / 1.02 pJ/bit): ACT, RD, WR, WR, PRE, ACT,
/// RDA: 2 ACTs sense 2 x 32,768 x 1.17 = 76.67712 nJ; 2 precharges (PRE and the RDA's) restore
/// 2 x 32,768 x 0.39 = 25.55904 nJ; 2 RD bursts 2 x 512 x 0.93 = 0.95232 nJ; 2 WR bursts
/// 2 x 512 x 1.02 = 1.04448 nJ.
///
/// PCM_CMMP_400 (array 2.47 / 16.82): the same commands write back only the dirty blocks: the
/// two WRs to blocks 1 and 2 dirty 2 blocks at the PRE, the RDA none: 2 x 512 x 16.82 =
/// 17.22368 nJ; 2 ACTs 2 x 32,768 x 2.47 = 161.87392 nJ; buffers as DRAM's.
#[test]
fn per_bit_energy_of_a_known_command_sequence() {
    use bulksim_core::device::Device;
    use bulksim_core::energy::per_bit_energy;
    use bulksim_core::mapping::{AddressMapper, DramAddr};
    use bulksim_core::spec::presets::preset;
    use bulksim_core::spec::Command::*;
    for (name, act, written, rd, wr) in [
        ("DRAM_CMMP_1000", 76.67712, 25.55904, 0.95232, 1.04448),
        ("PCM_CMMP_400", 161.87392, 17.22368, 0.95232, 1.04448),
    ] {
        let spec = preset(name).unwrap();
        let mut dev = Device::new(&spec, 0);
        let m = AddressMapper::new(&spec.organisation, "RoBaRaCoCh", false).unwrap();
        let row = m.locate(0, 0, 0, 0, 7, 0);
        let block = |b: u32| DramAddr {
            column: b * 8,
            ..row
        };
        let mut at = 0;
        for (cmd, a) in [
            (Act, row),
            (Rd, block(0)),
            (Wr, block(1)),
            (Wr, block(2)),
            (Pre, row),
            (Act, row),
            (RdA, block(3)),
        ] {
            at = dev.earliest(cmd, &a).max(at + 1);
            dev.issue(cmd, &a, at);
        }
        let activity = &dev.activity(at + 1_000)[0];
        let e = per_bit_energy(&spec, activity);
        for (what, got, want) in [
            ("array read", e.array_read_nj, act),
            ("array write", e.array_write_nj, written),
            ("buffer read", e.buffer_read_nj, rd),
            ("buffer write", e.buffer_write_nj, wr),
            ("total", e.total_nj, act + written + rd + wr),
        ] {
            assert!(close(got, want), "{name} {what}: {got} vs {want}");
        }
    }
    // A part that declares no pJ/bit energies reports none.
    let spec = preset("DDR3_4Gb_x8_1600").unwrap();
    let mut a = bulksim_core::device::RankActivity::default();
    (a.acts, a.reads) = (3, 2);
    assert_eq!(per_bit_energy(&spec, &a).total_nj, 0.0);
}

/// One write to a closed-page PCM_CMMP_400 through the controller: ACT, WRA; the WRA's
/// precharge writes back its one dirty block. per_bit: 32,768 x 2.47 + 512 x 16.82 + 512 x
/// 1.02 pJ = 80.93696 + 8.61184 + 0.52224 nJ, reported with its source.
#[test]
fn a_pcm_write_reports_its_per_bit_energy() {
    let c = config(&[
        "dram.preset=\"PCM_CMMP_400\"",
        "controller.refresh=none",
        "controller.page_policy=closed",
    ]);
    let s = run_records(&c, vec![write(100, 0)]);
    assert_eq!((s.commands["ACT"], s.commands["WRA"]), (1, 1));
    let e = &s.energy.per_bit;
    assert!(close(e.array_read_nj, 80.93696), "{e:?}");
    assert!(close(e.array_write_nj, 8.61184), "{e:?}");
    assert!(close(e.buffer_write_nj, 0.52224), "{e:?}");
    assert_eq!(e.buffer_read_nj, 0.0);
    assert!(close(e.total_nj, 80.93696 + 8.61184 + 0.52224));
    assert!(s.energy.per_bit_source.contains("Table I"));
}

/// `dram.activation_bits` replaces the row's 32,768 bits sensed per ACT: 4,096 x 2.47 pJ =
/// 10.11712 nJ for the one ACT of a PCM_CMMP_400 write.
#[test]
fn activation_bits_set_the_bits_an_act_senses() {
    let c = config(&[
        "dram.preset=\"PCM_CMMP_400\"",
        "controller.refresh=none",
        "controller.page_policy=closed",
        "dram.activation_bits=4096",
    ]);
    let s = run_records(&c, vec![write(100, 0)]);
    assert!(close(s.energy.per_bit.array_read_nj, 10.11712));
}
