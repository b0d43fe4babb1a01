//! LPDDR5 and HBM3 (issue 36, second part): the presets' key numbers from first principles
//! (clock, peak bandwidth per channel, an isolated read's latency, capacity), the rules each
//! standard adds in the device (LPDDR5: the two-cycle ACT, tRPab after PREA, tPPD, a bank
//! group's BL32 halves; HBM3: ACT holding only the row bus, two BL8 bursts per line), all-bank
//! refresh, the settings refused on them, and a trace and a full-system workload on each.
//! Expected values are written here from the standards' definitions and the values listed in
//! docs/standards.md, not read from the rule tables.

use crate::common;
use bulksim_core::device::Device;
use bulksim_core::mapping::{AddressMapper, DramAddr};
use bulksim_core::spec::presets::preset;
use bulksim_core::spec::{Command, Command::*, Spec, Standard};
use bulksim_core::workload::generate::Pattern;
use bulksim_core::workload::program::Event;
use common::*;

const LPDDR5: &str = "LPDDR5_16Gb_x16_6400";
const HBM3: &str = "HBM3_8Gb_6400";

/// The preset's settings for runs of generated traces (1 GB footprint): HBM3 as a whole
/// channel, its two pseudo-channels (512 MB each).
fn preset_sets(name: &str) -> Vec<String> {
    let mut sets = vec![format!("dram.preset=\"{name}\"")];
    if name == HBM3 {
        sets.push("dram.channels=2".into());
    }
    sets
}

/// A two-rank device of `name` and an address maker (rank, bank group, bank, row).
fn device(name: &str) -> (Spec, Device, impl Fn(u32, u32, u32, u32) -> DramAddr) {
    let mut spec = preset(name).unwrap();
    spec.organisation.ranks = 2;
    let mapper = AddressMapper::new(&spec.organisation, "RoBaRaCoCh", false).unwrap();
    let dev = Device::new(&spec, 0);
    let at = move |rank, group, bank, row| mapper.locate(0, rank, group, bank, row, 0);
    (spec, dev, at)
}

fn assert_gate(dev: &Device, what: &str, cmd: Command, a: &DramAddr, expected: u64) {
    assert_eq!(dev.earliest(cmd, a), expected, "{what}: {cmd:?}");
}

#[test]
fn lpddr5_preset_is_a_x16_channel_in_bank_group_mode_at_wck_ck_4_to_1() {
    let s = preset(LPDDR5).unwrap();
    assert_eq!(s.standard, Standard::Lpddr5);
    // CK = 6400 / 8 = 800 MHz: 8 data beats per clock (WCK four times CK, double rate).
    assert!((s.tck_ns - 1.25).abs() < 1e-12);
    let (o, t) = (&s.organisation, &s.timing);
    assert_eq!(
        (o.bus_width_bits, o.burst_length, o.data_beats_per_clock),
        (16, 32, 8)
    );
    // BL32 = 32 beats / 8 per clock = 4 cycles of data, as two BL16 halves tCCD_L (4) apart:
    // the line's data spans 2 + 2 + 2 cycles.
    assert_eq!(t.n_bl, 6);
    assert_eq!(o.line_bytes(), 64);
    assert_eq!((o.bankgroups, o.banks_per_group, o.rows), (4, 4, 65536));
    assert_eq!(o.row_bytes(), 2048, "2 KB page");
    assert_eq!(o.channel_bytes(), 16 << 30 >> 3, "16 Gb");
    // 16 bits x 6400 MT/s = 12.8 GB/s.
    assert!((s.peak_channel_gbps() - 12.8).abs() < 1e-9);
    // tRCD 18 ns, tRPpb 18 ns, tRPab 21 ns, tRAS 42 ns, tRFCab 280 ns, tREFI 3.906 us.
    assert_eq!((t.n_rcd, t.n_rp, t.n_rpab, t.n_ras), (15, 15, 17, 34));
    assert_eq!((t.n_rfc, t.n_refi), (224, 3124));
    assert_eq!((t.n_ccd_s, t.n_ccd_l), (2, 8));
    assert!(bulksim_core::spec::is_stand_in_power(&s.power.source));
}

#[test]
fn hbm3_preset_is_a_pseudo_channel_at_a_quarter_rate_clock() {
    let s = preset(HBM3).unwrap();
    assert_eq!(s.standard, Standard::Hbm3);
    // CK = 6.4 Gb/s / 4 = 1.6 GHz: 4 beats per clock.
    assert!((s.tck_ns - 0.625).abs() < 1e-12);
    let (o, t) = (&s.organisation, &s.timing);
    assert_eq!(
        (o.bus_width_bits, o.burst_length, o.data_beats_per_clock),
        (32, 16, 4)
    );
    // Two BL8 bursts of 2 cycles, tCCD_L (4) apart.
    assert_eq!(t.n_bl, 6);
    assert_eq!((o.bankgroups, o.banks_per_group, o.rows), (4, 4, 32768));
    assert_eq!(o.row_bytes(), 1024, "1 KB page per pseudo-channel");
    assert_eq!(
        o.channel_bytes(),
        4 << 30 >> 3,
        "4 Gb: half an 8 Gb channel"
    );
    // 32 bits x 6.4 Gb/s = 25.6 GB/s per pseudo-channel.
    assert!((s.peak_channel_gbps() - 25.6).abs() < 1e-9);
    // tRFCab 350 ns, tREFI 3.9 us.
    assert_eq!((t.n_rfc, t.n_refi), (560, 6240));
    assert!(bulksim_core::spec::is_stand_in_power(&s.power.source));
}

/// A read to a closed bank takes tRCD + CL + the burst's span: LPDDR5 15 + 20 + 6 = 41
/// cycles (51.25 ns), HBM3 23 + 23 + 6 = 52 cycles (32.5 ns); a row hit CL + the span.
#[test]
fn an_isolated_read_takes_trcd_plus_cl_plus_the_burst() {
    for (name, miss, hit, tck, peak) in [(LPDDR5, 41, 26, 1.25, 12.8), (HBM3, 52, 29, 0.625, 25.6)]
    {
        let c = config(&[
            &format!("dram.preset=\"{name}\""),
            "controller.refresh=none",
        ]);
        let s = run_records(&c, vec![read(100, 0)]);
        assert_eq!(s.read_latency.max_mem_cycles, miss, "{name}");
        assert!(
            (s.read_latency.mean_ns - miss as f64 * tck).abs() < 1e-9,
            "{name}"
        );
        let s = run_records(&c, vec![read(100, 0), read(1000, 64)]);
        assert_eq!(s.read_latency.p50_mem_cycles, hit, "{name}: row hit");
        assert!((s.peak_bandwidth_gbps - peak).abs() < 1e-9, "{name}");
    }
}

/// LPDDR5's ACT is two command cycles (ACT-1, ACT-2): nothing else on the channel in the
/// next cycle. A PREA closes every bank in tRPab (17 cycles), a PRE its bank in tRPpb (15);
/// two precharges of a rank are tPPD (2) apart.
#[test]
fn lpddr5_act_takes_two_cycles_prea_waits_trpab_and_precharges_are_tppd_apart() {
    let (spec, mut dev, at) = device(LPDDR5);
    let t = spec.timing.clone();
    let (a, b, other_rank) = (at(0, 0, 0, 1), at(0, 1, 0, 1), at(1, 0, 0, 1));
    dev.issue(Act, &a, 100);
    assert_gate(&dev, "ACT-2", Act, &other_rank, 102);
    assert_gate(&dev, "ACT-2", PreA, &other_rank, 102);
    dev.issue(Act, &b, 100 + t.n_rrd_s as u64);
    let pre = 100 + t.n_ras as u64 + 10;
    dev.issue(Pre, &a, pre);
    assert_gate(&dev, "tPPD", Pre, &b, pre + 2);
    assert_gate(&dev, "tRPpb", Act, &a, pre + 15);
    dev.issue(Pre, &b, pre + 2);

    let (_, mut dev, at) = device(LPDDR5);
    let a = at(0, 0, 0, 1);
    dev.issue(Act, &a, 0);
    dev.issue(PreA, &a, 100);
    assert_gate(&dev, "tRPab", Act, &a, 117);
    assert_gate(&dev, "tRPab before REF", Ref, &a, 117);
}

/// In bank-group mode a 64-byte line (BL32) comes from one bank group in two BL16 halves
/// 4 cycles apart: the next line of that bank group 8 cycles later, another bank group's
/// once the second half has left the bus (6).
#[test]
fn lpddr5_bl32_lines_of_one_bank_group_are_eight_cycles_apart() {
    let (spec, mut dev, at) = device(LPDDR5);
    let t = spec.timing.clone();
    let (a, same_group, other_group) = (at(0, 0, 0, 1), at(0, 0, 1, 1), at(0, 1, 0, 1));
    dev.issue(Act, &a, 0);
    dev.issue(Act, &other_group, 10);
    dev.issue(Act, &same_group, 20);
    dev.issue(Rd, &a, 100);
    assert_gate(&dev, "tCCD_L", Rd, &same_group, 108);
    assert_gate(&dev, "data bus", Rd, &other_group, 106);
    dev.issue(Wr, &a, 300);
    assert_gate(
        &dev,
        "tWTR_L",
        Rd,
        &same_group,
        300 + (t.n_cwl + 6 + 10) as u64,
    );
}

/// HBM3's ACT holds the row command bus for two cycles: another row command waits, a column
/// command (on its own bus) does not. Two lines of one bank group are 2 x tCCD_L (8) apart.
#[test]
fn hbm3_act_holds_only_the_row_bus() {
    let (spec, mut dev, at) = device(HBM3);
    let t = spec.timing.clone();
    let (a, other_group, other_rank) = (at(0, 0, 0, 1), at(0, 1, 0, 1), at(1, 0, 0, 1));
    dev.issue(Act, &a, 0);
    dev.issue(Act, &other_rank, 2);
    dev.issue(Act, &other_group, 2 + t.n_rrd_s as u64);
    let act = 100;
    dev.issue(Act, &at(0, 2, 0, 1), act);
    assert_gate(&dev, "row bus", Pre, &a, act + 2);
    assert_gate(&dev, "row bus", PreA, &other_rank, act + 2);
    // Column commands are not held (their earliest cycle is not pushed past the ACT).
    assert!(dev.earliest(Rd, &a) <= act + 1);
    assert!(dev.earliest(Wr, &other_group) <= act + 1);
    dev.issue(Rd, &a, 200);
    assert_gate(&dev, "tCCD_L x 2", Rd, &at(0, 0, 1, 1), 208);
    assert_gate(&dev, "data bus", Rd, &other_group, 206);
}

/// All-bank refresh every tREFI, each taking tRFCab: a read just after the REF falls due
/// waits for it.
#[test]
fn all_bank_refresh_every_trefi_takes_trfcab() {
    for (name, refi, rfc, miss) in [(LPDDR5, 3124, 224, 41), (HBM3, 6240, 560, 52)] {
        let c = config(&[&format!("dram.preset=\"{name}\"")]);
        let s = run_records(&c, vec![read(refi + 1, 0)]);
        assert_eq!(s.refreshes, 1, "{name}");
        assert_eq!(
            s.read_latency.max_mem_cycles,
            refi + rfc + miss - (refi + 1),
            "{name}"
        );
        let s = run_records(&c, vec![read(10 * refi + 100, 0)]);
        assert_eq!(s.refreshes, 10, "{name}");
    }
}

/// The refresh settings that need only REFab run on both; those that need a refresh mode
/// the standard lacks (FGR's nRFC2/nRFC4) or a postponement limit bulksim does not model
/// for it (elastic, pausing) are refused naming the key and the part. nRPab is LPDDR5's.
#[test]
fn refresh_settings_run_or_are_refused_by_name() {
    for name in [LPDDR5, HBM3] {
        let p = preset_sets(name);
        let p: Vec<&str> = p.iter().map(String::as_str).collect();
        for sets in [
            vec!["dram.ranks=2"],
            vec!["dram.ranks=2", "controller.refresh.policy=\"simultaneous\""],
            vec!["dram.ranks=2", "controller.refresh.scheme=\"pcd\""],
            vec!["dram.temperature=\"extended\""],
            vec!["controller.page_policy=\"closed\""],
        ] {
            let mut all = p.clone();
            all.extend(sets.iter().copied());
            let s = run_generated(&config(&all), Pattern::Random, 3000, 10, 0.3);
            assert_eq!(s.reads + s.writes, 3000, "{name} {sets:?}");
            assert!(s.refreshes > 0, "{name} {sets:?}");
        }
        for scheme in ["elastic", "pausing"] {
            let set = format!("controller.refresh.scheme=\"{scheme}\"");
            let e = config_error(&[p[0], set.as_str()]);
            assert!(
                e.contains("controller.refresh.scheme")
                    && e.contains("postponement limit")
                    && e.contains(name),
                "{e}"
            );
        }
        let e = config_error(&[p[0], "controller.refresh.granularity=2"]);
        assert!(
            e.contains("controller.refresh.granularity") && e.contains("nRFC2"),
            "{e}"
        );
        let e = config_error(&[p[0], "controller.refresh.scheme=\"adaptive\""]);
        assert!(e.contains("nRFC4") && e.contains(name), "{e}");
    }
    let e = config_error(&[&format!("dram.preset=\"{HBM3}\""), "dram.timing.nRPab=20"]);
    assert!(e.contains("dram.timing.nRPab") && e.contains("HBM3"), "{e}");
    let e = config_error(&["dram.preset=\"DDR4_8Gb_x8_2400\"", "dram.timing.nRPab=20"]);
    assert!(e.contains("dram.timing.nRPab") && e.contains("DDR4"), "{e}");
    let c = config(&[&format!("dram.preset=\"{LPDDR5}\""), "dram.timing.nRPab=30"]);
    assert_eq!(c.spec().unwrap().timing.n_rpab, 30);
}

/// A random trace runs on each part, and a stream interleaved over bank groups (RoCoBaRaCh)
/// approaches what bulksim's model of a line allows: 4 cycles of data per 6 booked on the
/// bus (the halves' gap is not lent to another bank group), 2/3 of the pins' peak.
#[test]
fn traces_run_on_both() {
    for name in [LPDDR5, HBM3] {
        let p = preset_sets(name);
        let mut sets: Vec<&str> = p.iter().map(String::as_str).collect();
        let s = run_generated(&config(&sets), Pattern::Random, 20_000, 1, 0.3);
        assert_eq!(s.reads + s.writes, 20_000, "{name}");
        assert!(
            s.bandwidth_gbps > 0.0 && s.bandwidth_gbps < s.peak_bandwidth_gbps,
            "{name}"
        );
        sets.push("controller.address_mapping=\"RoCoBaRaCh\"");
        let stream = config(&sets);
        let s = run_generated(&stream, Pattern::Stream, 20_000, 1, 0.0);
        let booked = s.peak_bandwidth_gbps * 4.0 / 6.0;
        assert!(
            s.bandwidth_gbps > 0.8 * booked && s.bandwidth_gbps <= booked + 1e-9,
            "{name}: {} of {}",
            s.bandwidth_gbps,
            s.peak_bandwidth_gbps
        );
    }
}

/// A full-system program (loads over 1 MiB, then stores) runs to its end on each part.
#[test]
fn a_full_system_workload_runs_on_both() {
    for name in [LPDDR5, HBM3] {
        let c = config(&[&format!("dram.preset=\"{name}\"")]);
        let base = 1 << 30;
        let mut body = Vec::new();
        for i in 0..4096u64 {
            body.push(Event::Load(base + i * 256));
            body.push(Event::Compute(3));
        }
        for i in 0..1024u64 {
            body.push(Event::Store(base + i * 64));
        }
        let (stats, _) = run_resident("lphbm", name, &c, (base, 1 << 20), &body);
        assert_eq!(stats.memory.preset, name);
        assert!(stats.instructions >= 4096 * 4 + 1024, "{name}");
        assert!(stats.memory.reads >= 4096, "{name}: {}", stats.memory.reads);
    }
}
