//! DDR5 (issue 36, first part): the presets' key values from first principles (the speed
//! bins' clocks, a read's latency, peak bandwidth, capacity), the DDR5 rules in the device
//! (two-cycle commands on the CA bus, tCCD_L_WR, tFAW at 6400, tRFC1/tRFC2 after a REF), and
//! all-bank refresh under every refresh setting that applies, with a clear error for those
//! that do not. Expected values are written here from JESD79-5B's definitions, not read from
//! the rule table.

use crate::common;
use bulksim_core::device::Device;
use bulksim_core::mapping::{AddressMapper, DramAddr};
use bulksim_core::spec::presets::preset;
use bulksim_core::spec::{Command, Command::*, Spec, Standard};
use common::*;

const X8_4800: &str = "DDR5_16Gb_x8_4800";

/// A two-rank device of `name` and an address maker (rank, bank group, bank, row).
fn device(name: &str) -> (Spec, Device, impl Fn(u32, u32, u32, u32) -> DramAddr) {
    let mut spec = preset(name).unwrap();
    spec.organisation.ranks = 2;
    let mapper = AddressMapper::new(&spec.organisation, "RoBaRaCoCh", false).unwrap();
    let dev = Device::new(&spec, 0);
    let at = move |rank, group, bank, row| mapper.locate(0, rank, group, bank, row, 0);
    (spec, dev, at)
}

/// Asserts `cmd` at `a` is first legal exactly at `expected` (not a cycle before).
fn assert_gate(dev: &Device, what: &str, cmd: Command, a: &DramAddr, expected: u64) {
    assert_eq!(dev.earliest(cmd, a), expected, "{what}: {cmd:?}");
}

#[test]
fn presets_follow_the_jedec_speed_bins_and_organisation() {
    // (preset, tCK in ns, CL, tRCD, tRP, tRAS = ceil(32 ns / tCK), tRFC1 ns, rows)
    for (name, tck, cl, rcd, rp, ras, rfc1_ns, rows) in [
        (
            "DDR5_16Gb_x8_4800",
            2000.0 / 4800.0,
            40,
            39,
            39,
            77,
            295.0,
            65536,
        ),
        (
            "DDR5_16Gb_x8_5600",
            2000.0 / 5600.0,
            46,
            45,
            45,
            90,
            295.0,
            65536,
        ),
        (
            "DDR5_16Gb_x8_6400",
            2000.0 / 6400.0,
            52,
            52,
            52,
            103,
            295.0,
            65536,
        ),
        (
            "DDR5_32Gb_x8_4800",
            2000.0 / 4800.0,
            40,
            39,
            39,
            77,
            410.0,
            131072,
        ),
        (
            "DDR5_32Gb_x4_6400",
            2000.0 / 6400.0,
            52,
            52,
            52,
            103,
            410.0,
            131072,
        ),
    ] {
        let s = preset(name).unwrap();
        let t = &s.timing;
        assert_eq!(s.standard, Standard::Ddr5, "{name}");
        assert!((s.tck_ns - tck).abs() < 1e-12, "{name}");
        assert_eq!(
            (t.n_cl, t.n_cwl, t.n_rcd, t.n_rp),
            (cl, cl - 2, rcd, rp),
            "{name}"
        );
        assert_eq!((t.n_ras, t.n_rc), (ras, ras + rp), "{name}");
        // tRFC1 and tREFI (3.9 us) in whole cycles; FGR 2x: tREFI 1.95 us.
        let cycles = |ns: f64| (ns / tck - 1e-9).ceil() as u32;
        assert_eq!(t.n_rfc, cycles(rfc1_ns), "{name}");
        assert_eq!(t.n_refi, (3900.0 / tck + 1e-9) as u32, "{name}");
        assert_eq!(t.n_refi2 * 2, t.n_refi, "{name}");
        assert_eq!(t.n_rfc4, 0, "{name}: DDR5 has no 4x refresh");
        // BL16 on a 32-bit sub-channel: 64 bytes in 8 cycles.
        let o = &s.organisation;
        assert_eq!(
            (o.bus_width_bits, o.burst_length, t.n_bl),
            (32, 16, 8),
            "{name}"
        );
        assert_eq!(o.line_bytes(), 64);
        assert_eq!(
            (o.bankgroups, o.banks_per_group, o.rows),
            (8, 4, rows),
            "{name}"
        );
        // 1 KB page per chip on x4 and x8 alike.
        assert_eq!(o.columns as u64 * o.dq as u64 / 8, 1024, "{name}");
        // One rank of a sub-channel: 32 / dq chips of the density.
        let chips = 32 / o.dq as u64;
        assert_eq!(
            o.channel_bytes(),
            chips * o.density_mbit as u64 * (1 << 20) / 8
        );
        // No DDR5 currents yet: the energy is a stand-in and says so.
        assert!(
            bulksim_core::spec::is_stand_in_power(&s.power.source),
            "{name}"
        );
        // Peak: two 4-byte transfers per clock (19.2 GB/s at 4800).
        assert!((s.peak_channel_gbps() - 8.0 / tck).abs() < 1e-9, "{name}");
    }
    // The write-to-write gap within a bank group is the standard's, max(32 nCK, 20 ns).
    let t = preset("DDR5_16Gb_x8_6400").unwrap().timing;
    assert_eq!((t.n_ccd_l, t.n_ccd_l_wr, t.n_faw), (16, 64, 43));
}

/// A read to a closed bank takes tRCD + CL + the burst at the preset's clock: 87 cycles
/// (36.25 ns) on DDR5-4800B; a row hit CL + burst.
#[test]
fn unloaded_read_latency_is_trcd_plus_cl_plus_the_burst() {
    let c = config(&[
        &format!("dram.preset=\"{X8_4800}\""),
        "controller.refresh=none",
    ]);
    let s = run_records(&c, vec![read(100, 0)]);
    assert_eq!(s.read_latency.max_mem_cycles, 39 + 40 + 8);
    assert!((s.read_latency.mean_ns - 87.0 * 2000.0 / 4800.0).abs() < 1e-9);
    let s = run_records(&c, vec![read(100, 0), read(1000, 64)]);
    assert_eq!(s.read_latency.p50_mem_cycles, 40 + 8, "row hit");
    assert!((s.peak_bandwidth_gbps - 19.2).abs() < 1e-9);
}

/// ACT, RD and WR hold the CA bus for two cycles: nothing else on the channel (here: another
/// rank, which no other rule constrains) in the next cycle. PRE is a one-cycle command. On
/// DDR4 the same ACT leaves the next cycle free.
#[test]
fn two_cycle_commands_hold_the_channel_for_a_second_cycle() {
    let (spec, mut dev, at) = device(X8_4800);
    let t = spec.timing.clone();
    let (a, other_rank) = (at(0, 0, 0, 1), at(1, 0, 0, 1));
    dev.issue(Act, &a, 100);
    assert_gate(&dev, "ACT", Act, &other_rank, 102);
    assert_gate(&dev, "ACT", PreA, &other_rank, 102);
    assert_gate(&dev, "ACT", Ref, &other_rank, 102);
    let rd = 100 + t.n_rcd as u64;
    dev.issue(Rd, &a, rd);
    assert_gate(&dev, "RD", Act, &other_rank, rd + 2);
    // PRE is one cycle: it adds no channel constraint (the controller's one command per
    // cycle is the only spacing after it).
    let pre = 100 + t.n_ras as u64;
    dev.issue(Pre, &a, pre);
    assert!(dev.earliest(PreA, &other_rank) <= pre);

    let mut ddr4 = preset("DDR4_8Gb_x8_2400").unwrap();
    ddr4.organisation.ranks = 2;
    let m = AddressMapper::new(&ddr4.organisation, "RoBaRaCoCh", false).unwrap();
    let mut dev4 = Device::new(&ddr4, 0);
    dev4.issue(Act, &m.locate(0, 0, 0, 0, 1, 0), 100);
    assert!(dev4.earliest(Act, &m.locate(0, 1, 0, 0, 1, 0)) <= 100);
}

/// Writes to one bank group are tCCD_L_WR apart (48 cycles at 4800), reads tCCD_L (12);
/// another bank group's write tCCD_S (8); a read after a write in the group CWL + burst +
/// tWTR_L.
#[test]
fn writes_in_one_bank_group_wait_tccd_l_wr() {
    let (spec, mut dev, at) = device(X8_4800);
    let t = spec.timing.clone();
    let (a, same_group, other_group) = (at(0, 0, 0, 1), at(0, 0, 1, 1), at(0, 1, 0, 1));
    dev.issue(Act, &a, 0);
    dev.issue(Act, &other_group, t.n_rrd_s as u64);
    dev.issue(Act, &same_group, t.n_rrd_s as u64 + t.n_rrd_l as u64);
    let w = 200;
    dev.issue(Wr, &a, w);
    assert_eq!(t.n_ccd_l_wr, 48);
    assert_gate(&dev, "tCCD_L_WR", Wr, &same_group, w + 48);
    assert_gate(&dev, "tCCD_S", Wr, &other_group, w + 8);
    assert_gate(&dev, "tWTR_L", Rd, &same_group, w + 38 + 8 + 24);
    let r = 400;
    dev.issue(Rd, &a, r);
    assert_gate(&dev, "tCCD_L", Rd, &same_group, r + 12);
}

/// At DDR5-6400 tFAW (max(32 nCK, 13.333 ns) = 43) binds before four tRRD_S (32): the fifth
/// ACT of a rank waits for the first plus tFAW.
#[test]
fn the_fifth_activate_waits_for_tfaw() {
    let (spec, mut dev, at) = device("DDR5_16Gb_x8_6400");
    let t = spec.timing.clone();
    assert!(t.n_faw > 4 * t.n_rrd_s);
    for g in 0..4u32 {
        let cycle = g as u64 * t.n_rrd_s as u64;
        assert_gate(&dev, "tRRD_S", Act, &at(0, g, 0, 1), cycle);
        dev.issue(Act, &at(0, g, 0, 1), cycle);
    }
    assert_gate(&dev, "tFAW", Act, &at(0, 4, 0, 1), t.n_faw as u64);
}

/// After an all-bank REF the rank's next ACT waits tRFC1 (295 ns = 708 cycles at 4800), or
/// tRFC2 (160 ns = 384) in fine granularity mode, where REFs come every 1.95 us.
#[test]
fn a_ref_occupies_trfc1_or_trfc2_at_fine_granularity() {
    let (_, mut dev, at) = device(X8_4800);
    dev.issue(Ref, &at(0, 0, 0, 0), 1000);
    assert_gate(&dev, "tRFC1", Act, &at(0, 3, 2, 1), 1000 + 708);
    let fine = config(&[
        &format!("dram.preset=\"{X8_4800}\""),
        "controller.refresh.granularity=2",
    ])
    .spec()
    .unwrap();
    assert_eq!((fine.timing.n_rfc, fine.timing.n_refi), (384, 4680));
}

/// A read arriving just after a rank falls due for refresh waits for the REF (issued at
/// tREFI on an idle rank) and tRFC1, then opens its row: one REF per tREFI of the run.
#[test]
fn refresh_every_trefi_occupies_trfc1() {
    let c = config(&[&format!("dram.preset=\"{X8_4800}\"")]);
    let refi = 9360;
    let s = run_records(&c, vec![read(refi + 1, 0)]);
    assert_eq!(s.refreshes, 1);
    assert_eq!(
        s.read_latency.max_mem_cycles,
        refi + 708 + 87 - (refi + 1),
        "the read waits for tRFC1 after the REF at tREFI"
    );
    let s = run_records(&c, vec![read(10 * refi + 100, 0)]);
    assert_eq!(s.refreshes, 10);
}

/// Every refresh scheme that a DDR5 part can run runs, with the REF duration the setting
/// takes; those that need DDR4's 4x refresh are refused naming the key.
#[test]
fn refresh_settings_run_or_are_refused_by_name() {
    let preset = format!("dram.preset=\"{X8_4800}\"");
    for sets in [
        vec!["controller.refresh.policy=\"staggered\""],
        vec!["controller.refresh.policy=\"simultaneous\"", "dram.ranks=2"],
        vec!["controller.refresh.policy=\"staggered\"", "dram.ranks=2"],
        vec!["controller.refresh.scheme=\"pcd\""],
        vec!["controller.refresh.granularity=2"],
        vec!["dram.temperature=\"extended\""],
    ] {
        let mut all = vec![preset.as_str()];
        all.extend(sets.iter().copied());
        let c = config(&all);
        let s = run_generated(
            &c,
            bulksim_core::workload::generate::Pattern::Random,
            4000,
            20,
            0.3,
        );
        assert_eq!(s.reads + s.writes, 4000, "{sets:?}");
        assert!(s.refreshes > 0, "{sets:?}");
    }
    for (sets, key) in [
        (
            vec!["controller.refresh.granularity=4"],
            "controller.refresh.granularity",
        ),
        (
            vec!["controller.refresh.scheme=\"adaptive\""],
            "controller.refresh.scheme",
        ),
        (
            vec![
                "controller.refresh.scheme=\"pausing\"",
                "controller.refresh.pause_granularity=4",
            ],
            "controller.refresh.pause_granularity",
        ),
    ] {
        let mut all = vec![preset.as_str()];
        all.extend(sets.iter().copied());
        let e = config_error(&all);
        assert!(
            e.contains(key) && e.contains("nRFC4") && e.contains(X8_4800),
            "{e}"
        );
    }
    // The schemes that postpone REFs are refused: bulksim knows only DDR3/DDR4's limit of 8.
    for scheme in ["elastic", "pausing"] {
        let set = format!("controller.refresh.scheme=\"{scheme}\"");
        let e = config_error(&[preset.as_str(), set.as_str()]);
        assert!(
            e.contains("controller.refresh.scheme") && e.contains("postponement limit"),
            "{e}"
        );
    }
}

/// nCCD_L_WR is DDR5's: setting it on a DDR4 preset is an error naming the key, not a
/// silent no-op.
#[test]
fn nccd_l_wr_on_ddr4_is_refused() {
    let e = config_error(&[
        "dram.preset=\"DDR4_8Gb_x8_2400\"",
        "dram.timing.nCCD_L_WR=40",
    ]);
    assert!(
        e.contains("dram.timing.nCCD_L_WR") && e.contains("DDR4_8Gb_x8_2400") && e.contains("DDR4"),
        "{e}"
    );
}

/// The DDR5 forms of the gates tests/device_timing.rs checks on DDR3/DDR4 in ways DDR5
/// changes, on every DDR5 preset: tRRD_S/tRRD_L (another rank only two cycles later, the
/// ACT's second cycle), the rank-to-rank data bus gaps, and REF entry and tRFC (REF is a
/// one-cycle command: another rank is not held back at all).
#[test]
fn every_ddr5_preset_keeps_the_shared_gates_with_two_cycle_commands() {
    for (name, ..) in bulksim_core::spec::ddr5::PRESETS {
        let (spec, mut dev, at) = device(name);
        let t = spec.timing.clone();
        let (rrd_s, rrd_l) = (t.n_rrd_s as u64, t.n_rrd_l as u64);
        dev.issue(Act, &at(0, 0, 0, 1), 50);
        assert_gate(&dev, "tRRD_S", Act, &at(0, 1, 0, 1), 50 + rrd_s);
        assert_gate(&dev, "tRRD_L", Act, &at(0, 0, 1, 1), 50 + rrd_l);
        assert_gate(&dev, "other rank", Act, &at(1, 0, 0, 1), 52);

        // Rank to rank: only the data bus (and the CA bus) links them.
        let (a, b) = (at(0, 0, 0, 1), at(1, 0, 0, 1));
        dev.issue(Act, &b, 52);
        let (bl, rtrs, cl, cwl) = (t.n_bl, t.n_rtrs, t.n_cl, t.n_cwl);
        dev.issue(Rd, &a, 200);
        assert_gate(
            &dev,
            "RD to RD other rank",
            Rd,
            &b,
            200 + (bl + rtrs) as u64,
        );
        let rd_wr = 200 + (cl + bl + rtrs - cwl) as u64;
        assert_gate(&dev, "RD to WR other rank", Wr, &b, rd_wr);
        dev.issue(Wr, &a, 400);
        assert_gate(
            &dev,
            "WR to WR other rank",
            Wr,
            &b,
            400 + (bl + rtrs) as u64,
        );
        let wr_rd = 400 + (cwl + bl + rtrs).saturating_sub(cl) as u64;
        assert_gate(&dev, "WR to RD other rank", Rd, &b, wr_rd.max(402));

        // REF entry and tRFC on a fresh device.
        let (spec, mut dev, at) = device(name);
        let t = spec.timing.clone();
        let a = at(0, 0, 0, 1);
        dev.issue(Act, &a, 0);
        assert_gate(&dev, "ACT to REF (tRC)", Ref, &a, t.n_rc as u64);
        dev.issue(PreA, &a, t.n_ras as u64);
        assert_gate(
            &dev,
            "PREA to REF (tRP)",
            Ref,
            &a,
            (t.n_ras + t.n_rp) as u64,
        );
        let ref_at = 1000;
        dev.issue(Ref, &a, ref_at);
        assert_gate(&dev, "tRFC (ACT)", Act, &a, ref_at + t.n_rfc as u64);
        assert_gate(&dev, "tRFC (REF)", Ref, &a, ref_at + t.n_rfc as u64);
        assert!(
            dev.earliest(Act, &at(1, 0, 0, 1)) <= ref_at,
            "{name}: other rank held"
        );
    }
}
