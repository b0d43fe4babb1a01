//! Presets named after real parts. Each gives organisation and timing in cycles, rounded up
//! from the datasheet's nanosecond values as JEDEC specifies (nCK = ceil(t / tCK)), and names
//! its source. `Spec::organisation.channels/ranks` are 1 here; the config sets them.

use super::{Organisation, PowerSpec, Spec, Standard, Timing};

/// Names of every preset, in display order.
pub const PRESET_NAMES: &[&str] = &[
    "DDR3_2Gb_x8_1066",
    "DDR3_4Gb_x8_1600",
    "DDR4_8Gb_x8_2400",
    "DDR4_8Gb_x8_1600",
    "DDR4_16Gb_x8_1600",
    "DDR4_32Gb_x8_1600",
    "DDR5_16Gb_x8_4800",
    "DDR5_16Gb_x8_5600",
    "DDR5_16Gb_x8_6400",
    "DDR5_32Gb_x8_4800",
    "DDR5_32Gb_x8_5600",
    "DDR5_32Gb_x8_6400",
    "DDR5_16Gb_x4_4800",
    "DDR5_16Gb_x4_5600",
    "DDR5_16Gb_x4_6400",
    "DDR5_32Gb_x4_4800",
    "DDR5_32Gb_x4_5600",
    "DDR5_32Gb_x4_6400",
    "LPDDR5_16Gb_x16_6400",
    "HBM3_8Gb_6400",
    "PCM_x8_1600",
    "DRAM_CMMP_1000",
    "PCM_CMMP_400",
];

pub fn preset(name: &str) -> Option<Spec> {
    match name {
        "DDR3_2Gb_x8_1066" => Some(ddr3_2gb_x8_1066()),
        "DDR3_4Gb_x8_1600" => Some(ddr3_4gb_x8_1600()),
        "DDR4_8Gb_x8_2400" => Some(ddr4_8gb_x8_2400()),
        "DDR4_8Gb_x8_1600" | "DDR4_16Gb_x8_1600" | "DDR4_32Gb_x8_1600" | "PCM_x8_1600" => {
            Some(super::rank_assignment::preset(name))
        }
        "DRAM_CMMP_1000" | "PCM_CMMP_400" => Some(super::cmmp::preset(name)),
        super::lpddr5::PRESET => super::lpddr5::preset(name),
        super::hbm3::PRESET => super::hbm3::preset(name),
        _ => super::ddr5::preset(name),
    }
}

/// A timing with every parameter 0: the base of struct updates, so presets without
/// fine-granularity or same-bank refresh data leave nRFC2/nRFC4/nREFI2/nREFI4 and
/// nRFCsb/nREFSBRD at 0 (not given).
pub(crate) fn no_fine_granularity() -> Timing {
    Timing {
        n_bl: 0,
        n_cl: 0,
        n_cwl: 0,
        n_rcd: 0,
        n_rp: 0,
        n_rpab: 0,
        n_ras: 0,
        n_rc: 0,
        n_rtp: 0,
        n_wr: 0,
        n_ccd_s: 0,
        n_ccd_l: 0,
        n_ccd_l_wr: 0,
        n_rrd_s: 0,
        n_rrd_l: 0,
        n_wtr_s: 0,
        n_wtr_l: 0,
        n_faw: 0,
        n_rtrs: 0,
        n_rfc: 0,
        n_refi: 0,
        n_rfc2: 0,
        n_refi2: 0,
        n_rfc4: 0,
        n_refi4: 0,
        n_rfcsb: 0,
        n_refsbrd: 0,
    }
}

pub(crate) fn org(
    density_mbit: u32,
    bankgroups: u32,
    banks_per_group: u32,
    rows: u32,
) -> Organisation {
    Organisation {
        density_mbit,
        dq: 8,
        bus_width_bits: 64,
        burst_length: 8,
        data_beats_per_clock: 2,
        channels: 1,
        ranks: 1,
        bankgroups,
        banks_per_group,
        rows,
        columns: 1024,
        rows_per_subarray: 512,
    }
}

/// DDR3-1066G (8-8-8), 2Gb x8 (Micron MT41J256M8, speed grade -187; JESD79-3F tables).
/// tCK 1.875 ns; tRCD = tRP = 15 ns, tRAS 37.5 ns, tRC 52.5 ns, tFAW 37.5 ns (1 KB page),
/// tRRD max(4nCK, 7.5 ns), tWTR/tRTP max(4nCK, 7.5 ns), tWR 15 ns, tRFC 160 ns, tREFI 7.8 us.
/// This is the system of the RowClone paper (FPM copy = tRAS + tRAS + tRP = 90 ns).
fn ddr3_2gb_x8_1066() -> Spec {
    Spec {
        name: "DDR3_2Gb_x8_1066".into(),
        standard: Standard::Ddr3,
        data_rate_mts: 1066,
        tck_ns: 1.875,
        organisation: org(2048, 1, 8, 32768),
        timing: Timing {
            n_bl: 4,
            n_cl: 8,
            n_cwl: 6,
            n_rcd: 8,
            n_rp: 8,
            n_ras: 20,
            n_rc: 28,
            n_rtp: 4,
            n_wr: 8,
            n_ccd_s: 4,
            n_ccd_l: 4,
            n_rrd_s: 4,
            n_rrd_l: 4,
            n_wtr_s: 4,
            n_wtr_l: 4,
            n_faw: 20,
            n_rtrs: 2,
            n_rfc: 86,
            n_refi: 4160,
            ..no_fine_granularity()
        },
        has_refresh: true,
        precharge_per_dirty_block: false,
        power: ddr3_2gb_x8_power(),
        bit_energy: None,
        source: "JEDEC JESD79-3F DDR3-1066G; Micron MT41J256M8 (2Gb x8) -187".into(),
    }
}

/// Micron 2Gb x8 DDR3 (MT41J256M8, die rev. D) at DDR3-1066: IDD values of the component
/// data sheet (as DRAMPower's MICRON_2Gb_DDR3-1066_8bit_D memspec also records them), and the
/// per-DQ I/O and termination powers of Micron TN-41-01 (DDR3 system power calculation).
pub(crate) fn ddr3_2gb_x8_power() -> PowerSpec {
    PowerSpec {
        vdd: 1.5,
        idd0: 75.0,
        idd2n: 32.0,
        idd3n: 35.0,
        idd4r: 140.0,
        idd4w: 145.0,
        idd5b: 190.0,
        vpp: 0.0,
        ipp0: 0.0,
        ipp3n: 0.0,
        ipp5b: 0.0,
        read_io_mw: 4.6,
        read_termination_mw: 15.5,
        write_odt_mw: 21.2,
        write_termination_mw: 15.4,
        source: "Micron MT41J256M8 die D data sheet, DDR3-1066 IDD; Micron TN-41-01 I/O powers"
            .into(),
    }
}

/// DDR3-1600K (11-11-11), 4Gb x8 (Micron MT41J512M8, speed grade -125). tCK 1.25 ns;
/// tRCD = tRP = 13.75 ns, tRAS 35 ns, tRC 48.75 ns, tFAW 30 ns, tRRD max(4nCK, 6 ns),
/// tWTR/tRTP max(4nCK, 7.5 ns), tWR 15 ns, tRFC 260 ns, tREFI 7.8 us.
fn ddr3_4gb_x8_1600() -> Spec {
    Spec {
        name: "DDR3_4Gb_x8_1600".into(),
        standard: Standard::Ddr3,
        data_rate_mts: 1600,
        tck_ns: 1.25,
        organisation: org(4096, 1, 8, 65536),
        timing: Timing {
            n_bl: 4,
            n_cl: 11,
            n_cwl: 8,
            n_rcd: 11,
            n_rp: 11,
            n_ras: 28,
            n_rc: 39,
            n_rtp: 6,
            n_wr: 12,
            n_ccd_s: 4,
            n_ccd_l: 4,
            n_rrd_s: 5,
            n_rrd_l: 5,
            n_wtr_s: 6,
            n_wtr_l: 6,
            n_faw: 24,
            n_rtrs: 2,
            n_rfc: 208,
            n_refi: 6240,
            ..no_fine_granularity()
        },
        has_refresh: true,
        precharge_per_dirty_block: false,
        // Same die family as the 2Gb part; its DDR3-1066 currents stand in until the 4Gb
        // DDR3-1600 values are entered (documented in docs/energy.md).
        power: PowerSpec {
            source:
                "stand-in: Micron 2Gb x8 DDR3-1066 currents (no 4Gb DDR3-1600 values entered yet)"
                    .into(),
            ..ddr3_2gb_x8_power()
        },
        bit_energy: None,
        source: "JEDEC JESD79-3F DDR3-1600K; Micron MT41J512M8 (4Gb x8) -125".into(),
    }
}

/// DDR4-2400R (16-16-16), 8Gb x8: 4 bank groups x 4 banks, 64K rows, 1K columns (Micron
/// MT40A1G8, speed grade -083E; JESD79-4B). tCK 0.833 ns; tRCD = tRP = 13.32 ns, tRAS 32 ns,
/// tRC 45.32 ns, CWL 12, tCCD_L max(5nCK, 5 ns), tRRD_S/L max(4nCK, 3.3/4.9 ns), tFAW 21 ns
/// (1 KB page), tWTR_S/L max(2nCK, 2.5 ns)/max(4nCK, 7.5 ns), tRTP max(4nCK, 7.5 ns), tWR 15 ns,
/// tRFC1 350 ns, tREFI 7.8 us. The JEDEC 2400R bin, not 2400T (17-17-17).
fn ddr4_8gb_x8_2400() -> Spec {
    Spec {
        name: "DDR4_8Gb_x8_2400".into(),
        standard: Standard::Ddr4,
        data_rate_mts: 2400,
        tck_ns: 2000.0 / 2400.0,
        organisation: org(8192, 4, 4, 65536),
        timing: Timing {
            n_bl: 4,
            n_cl: 16,
            n_cwl: 12,
            n_rcd: 16,
            n_rp: 16,
            n_ras: 39,
            n_rc: 55,
            n_rtp: 9,
            n_wr: 18,
            n_ccd_s: 4,
            n_ccd_l: 6,
            n_rrd_s: 4,
            n_rrd_l: 6,
            n_wtr_s: 3,
            n_wtr_l: 9,
            n_faw: 26,
            n_rtrs: 2,
            n_rfc: 420,
            n_refi: 9360,
            ..no_fine_granularity()
        },
        has_refresh: true,
        precharge_per_dirty_block: false,
        power: ddr4_8gb_x8_power(),
        bit_energy: None,
        source: "JEDEC JESD79-4B DDR4-2400R; Micron MT40A1G8 (8Gb x8) -083E".into(),
    }
}

/// Micron 8Gb x8 DDR4 (MT40A1G8, die rev. B) at DDR4-2400, per chip, derived from the IDD
/// table of Micron's MTA18ASF2G72HZ 16GB dual-rank SODIMM data sheet (Table 15, "computed from
/// values specified in the 8Gb (1 Gig x 8) component data sheet"; 18 chips, one rank active
/// and the other in IDD2P/IPP3N where noted): IDD2N = 612/18, IDD3N = 774/18, IDD2P = 450/18,
/// IPP3N = 54/18, IDD0 = (657 - 9 x IDD2P)/9, IDD4R = (1440 - 225)/9, IDD4W = (1332 - 225)/9,
/// IDD5B = (2475 - 225)/9, IPP0 = (54 - 27)/9, IPP5B = (279 - 27)/9. The data sheets give no
/// I/O powers for DDR4; the DDR3 values of TN-41-01 are scaled by (1.2 V / 1.5 V)^2 as an
/// estimate (docs/energy.md).
pub(crate) fn ddr4_8gb_x8_power() -> PowerSpec {
    let io_scale = (1.2f64 / 1.5).powi(2);
    PowerSpec {
        vdd: 1.2,
        idd0: 48.0,
        idd2n: 34.0,
        idd3n: 43.0,
        idd4r: 135.0,
        idd4w: 123.0,
        idd5b: 250.0,
        vpp: 2.5,
        ipp0: 3.0,
        ipp3n: 3.0,
        ipp5b: 28.0,
        read_io_mw: 4.6 * io_scale,
        read_termination_mw: 15.5 * io_scale,
        write_odt_mw: 21.2 * io_scale,
        write_termination_mw: 15.4 * io_scale,
        source: "Micron MT40A1G8 die B via MTA18ASF2G72HZ data sheet Table 15 (per chip derived); I/O estimated".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::validate_rules;

    #[test]
    fn every_preset_has_a_well_formed_rule_table() {
        for name in PRESET_NAMES {
            let spec = preset(name).unwrap();
            validate_rules(&spec.rules()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(spec.name, *name);
        }
    }

    #[test]
    fn every_ddr5_preset_is_listed() {
        for (name, ..) in crate::spec::ddr5::PRESETS {
            assert!(PRESET_NAMES.contains(&name), "{name}");
        }
    }

    #[test]
    fn capacities_match_chip_density() {
        for name in PRESET_NAMES {
            let spec = preset(name).unwrap();
            let o = &spec.organisation;
            let chip_bits =
                o.banks_per_rank() as u64 * o.rows as u64 * o.columns as u64 * o.dq as u64;
            assert_eq!(chip_bits, o.density_mbit as u64 * 1024 * 1024, "{name}");
            assert_eq!(o.line_bytes(), 64);
            // A burst's data lasts nBL cycles at the part's beats per clock (more where its
            // halves have a gap: LPDDR5's BL32 and HBM3's pair of BL8s).
            let data_cycles = o.burst_length / o.data_beats_per_clock;
            assert!(spec.timing.n_bl >= data_cycles, "{name}");
            assert!(spec.timing.n_bl <= data_cycles + 2, "{name}");
        }
    }

    #[test]
    fn validation_rejects_a_rule_above_its_commands_level() {
        let bad = vec![rule!(Bank, [Act] -> [PreA], 1)];
        assert!(validate_rules(&bad).unwrap_err().contains("PREA"));
        let bad = vec![rule!(Channel, [Act] -> [Act], 1, sibling)];
        assert!(validate_rules(&bad).is_err());
    }
}
