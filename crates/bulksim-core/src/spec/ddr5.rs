//! DDR5 (JESD79-5B): the rule table and the presets' data. A DDR5 DIMM has two independent
//! 32-bit sub-channels, each with its own command/address (CA) bus; bulksim's channel is one
//! sub-channel, so a DIMM is two channels (`dram.channels` counts sub-channels). A burst is
//! BL16: 64 bytes on 32 data bits, 8 clock cycles on the bus. The table is DDR4's (rank and
//! bank rules from DDR3, the `_L` forms within a bank group) with two DDR5 additions:
//! writes within a bank group are spaced by tCCD_L_WR (which the standard sets far above
//! tCCD_L), and the two-cycle commands (ACT, RD, RDA, WR, WRA) hold the CA bus for a second
//! cycle, so the channel's next command waits two cycles instead of one. Timings are referenced to a command's first cycle and
//! assume AL = 0 (DDR5 has none), write CRC off, and 1-tCK preambles as in DDR4 (bulksim's
//! choice). Same-bank refresh (REFsb) refreshes one bank index in all 8 bank groups: its banks
//! wait tRFCsb, the rank's other banks only tREFSBRD before their next ACT. Every value, with
//! its source, is listed in docs/standards.md.

use super::presets::ddr4_8gb_x8_power;
use super::{ddr3, Organisation, PowerSpec, Rule, Spec, Standard, Timing};

/// Cycles a two-cycle command holds the CA bus: the next command of the channel waits this
/// long after its first cycle (JESD79-5B command truth table: ACT, RD, WR, MRR, MRW and WRP
/// take two cycles; PRE, REF and the other commands one).
pub const TWO_CYCLE_COMMAND_SPACING: u32 = 2;

pub fn rules(t: &Timing) -> Vec<Rule> {
    let wr_end = t.n_cwl + t.n_bl; // last write data beat, from the WR command
    let mut rules = ddr3::rules(t);
    rules.extend([
        // ACT2 (RowClone) is an ACT on the bus; TRANSFER's halves are single-cycle.
        rule!(
            Channel,
            [Act, Act2, Rd, RdA, Wr, WrA]
                -> [Act, Pre, PreA, Rd, Wr, RdA, WrA, Ref, Act2, Trr, Trw, RefSb],
            TWO_CYCLE_COMMAND_SPACING
        ),
        rule!(BankGroup, [Rd, RdA] -> [Rd, RdA], t.n_ccd_l),
        rule!(BankGroup, [Wr, WrA] -> [Wr, WrA], t.n_ccd_l_wr),
        rule!(BankGroup, [Wr, WrA] -> [Rd, RdA], wr_end + t.n_wtr_l),
        rule!(BankGroup, [Act, Act2] -> [Act, Act2], t.n_rrd_l),
    ]);
    rules.extend(same_bank_refresh_rules(t));
    rules
}

/// REFsb's rules. Bank-level rules apply to every bank of the REFsb's bank set (the device
/// widens them): its banks must have been precharged for tRP (after an auto-precharge, its
/// read or write recovery too) and wait tRFCsb for their next ACT or REFsb. Rank-level: the
/// rank's other banks wait tREFSBRD for an ACT, and a REF (or PREA) waits for the refreshing
/// banks. REFsb to REFsb of another bank index waits tREFSBRD and ACT to REFsb waits tRRD_L
/// (a REFsb opens a row in the ACT's bank group too): bulksim's choices, docs/standards.md.
fn same_bank_refresh_rules(t: &Timing) -> Vec<Rule> {
    let wr_end = t.n_cwl + t.n_bl;
    vec![
        rule!(Rank, [Ref] -> [RefSb], t.n_rfc),
        rule!(Rank, [RefSb] -> [Ref, PreA], t.n_rfcsb),
        rule!(Rank, [RefSb] -> [Act, RefSb], t.n_refsbrd),
        rule!(Rank, [Act, Act2] -> [RefSb], t.n_rrd_l),
        rule!(Rank, [PreA] -> [RefSb], t.n_rp),
        rule!(Bank, [RefSb] -> [Act, RefSb], t.n_rfcsb),
        rule!(Bank, [Act] -> [RefSb], t.n_rc),
        rule!(Bank, [Pre] -> [RefSb], t.n_rp),
        rule!(Bank, [RdA] -> [RefSb], t.n_rtp + t.n_rp),
        rule!(Bank, [WrA] -> [RefSb], wr_end + t.n_wr + t.n_rp),
    ]
}

/// A JEDEC speed bin: its data rate and the CL-tRCD-tRP it fixes in clock cycles.
#[derive(Clone, Copy, Debug)]
pub struct SpeedBin {
    pub name: &'static str,
    pub data_rate_mts: u32,
    pub cl: u32,
    pub rcd: u32,
    pub rp: u32,
}

/// The bins of the presets (JESD79-5B speed-bin tables): 4800B 40-39-39, 5600B 46-45-45,
/// 6400B 52-52-52.
pub const SPEED_BINS: [SpeedBin; 3] = [
    SpeedBin {
        name: "DDR5-4800B",
        data_rate_mts: 4800,
        cl: 40,
        rcd: 39,
        rp: 39,
    },
    SpeedBin {
        name: "DDR5-5600B",
        data_rate_mts: 5600,
        cl: 46,
        rcd: 45,
        rp: 45,
    },
    SpeedBin {
        name: "DDR5-6400B",
        data_rate_mts: 6400,
        cl: 52,
        rcd: 52,
        rp: 52,
    },
];

/// Refresh timings and row count of one die density (JESD79-5B refresh parameters table).
#[derive(Clone, Copy, Debug)]
pub struct Density {
    pub gbit: u32,
    /// Rows per bank (x4 and x8 alike).
    pub rows: u32,
    /// tRFC1 (all-bank REF, normal refresh), ns.
    pub rfc1_ns: u32,
    /// tRFC2 (all-bank REF, fine granularity refresh), ns.
    pub rfc2_ns: u32,
    /// tRFCsb (same-bank REF), ns.
    pub rfcsb_ns: u32,
}

pub const DENSITIES: [Density; 2] = [
    Density {
        gbit: 16,
        rows: 65536,
        rfc1_ns: 295,
        rfc2_ns: 160,
        rfcsb_ns: 130,
    },
    Density {
        gbit: 32,
        rows: 131072,
        rfc1_ns: 410,
        rfc2_ns: 220,
        rfcsb_ns: 190,
    },
];

/// tREFI in normal (1x) refresh mode and in fine granularity (2x) mode, ns (0-85 C).
pub const REFI_NS: u32 = 3900;
pub const REFI2_NS: u32 = 1950;

/// tREFSBRD, ns: REFsb to an ACT of another bank (JESD79-5 refresh parameters; 8 Gb and 16 Gb
/// alike; bulksim takes it for 32 Gb too, docs/standards.md).
pub const REFSBRD_NS: u32 = 30;

/// Every DDR5 preset: (name, density in Gbit, data pins per chip, data rate).
pub const PRESETS: [(&str, u32, u32, u32); 12] = [
    ("DDR5_16Gb_x8_4800", 16, 8, 4800),
    ("DDR5_16Gb_x8_5600", 16, 8, 5600),
    ("DDR5_16Gb_x8_6400", 16, 8, 6400),
    ("DDR5_32Gb_x8_4800", 32, 8, 4800),
    ("DDR5_32Gb_x8_5600", 32, 8, 5600),
    ("DDR5_32Gb_x8_6400", 32, 8, 6400),
    ("DDR5_16Gb_x4_4800", 16, 4, 4800),
    ("DDR5_16Gb_x4_5600", 16, 4, 5600),
    ("DDR5_16Gb_x4_6400", 16, 4, 6400),
    ("DDR5_32Gb_x4_4800", 32, 4, 4800),
    ("DDR5_32Gb_x4_5600", 32, 4, 5600),
    ("DDR5_32Gb_x4_6400", 32, 4, 6400),
];

/// Cycles of at least `ps` picoseconds at `rate` MT/s (tCK = 2,000,000 / rate ps exactly):
/// ceil(t / tCK), as JEDEC rounds a minimum time to clocks.
pub fn at_least_ps(ps: u32, rate: u32) -> u32 {
    (ps as u64 * rate as u64).div_ceil(2_000_000) as u32
}

/// JEDEC's "max(n nCK, t)": the larger of `nck` clocks and `ps` rounded up to clocks.
fn max_nck(nck: u32, ps: u32, rate: u32) -> u32 {
    nck.max(at_least_ps(ps, rate))
}

/// An average interval (tREFI) in whole cycles: rounded down, so the REFs are never late.
fn interval_ps(ps: u32, rate: u32) -> u32 {
    (ps as u64 * rate as u64 / 2_000_000) as u32
}

/// The timing of `bin` on a die of `density`, in cycles (JESD79-5B core timing table; the
/// pairs are "max(n nCK, t ns)").
pub fn timing(bin: &SpeedBin, density: &Density) -> Timing {
    let r = bin.data_rate_mts;
    let n_ras = at_least_ps(32_000, r);
    Timing {
        n_bl: 8,
        n_cl: bin.cl,
        n_cwl: bin.cl - 2,
        n_rcd: bin.rcd,
        n_rp: bin.rp,
        n_rpab: 0,
        n_ras,
        n_rc: n_ras + bin.rp,
        n_rtp: max_nck(12, 7_500, r),
        n_wr: at_least_ps(30_000, r),
        n_ccd_s: 8,
        n_ccd_l: max_nck(8, 5_000, r),
        n_ccd_l_wr: max_nck(32, 20_000, r),
        n_rrd_s: max_nck(8, 2_500, r),
        n_rrd_l: max_nck(8, 5_000, r),
        n_wtr_s: max_nck(4, 2_500, r),
        n_wtr_l: max_nck(16, 10_000, r),
        n_faw: max_nck(32, 13_333, r),
        n_rtrs: 2,
        n_rfc: at_least_ps(density.rfc1_ns * 1000, r),
        n_refi: interval_ps(REFI_NS * 1000, r),
        n_rfc2: at_least_ps(density.rfc2_ns * 1000, r),
        n_refi2: interval_ps(REFI2_NS * 1000, r),
        // DDR5 has no 4x fine granularity refresh.
        n_rfc4: 0,
        n_refi4: 0,
        n_rfcsb: at_least_ps(density.rfcsb_ns * 1000, r),
        n_refsbrd: at_least_ps(REFSBRD_NS * 1000, r),
    }
}

/// One sub-channel's organisation for a die of `density` with `dq` data pins: 8 bank groups
/// of 4 banks (x4 and x8), 1 KB pages (1K columns on x8, 2K on x4).
fn organisation(density: &Density, dq: u32) -> Organisation {
    Organisation {
        density_mbit: density.gbit * 1024,
        dq,
        bus_width_bits: 32,
        burst_length: 16,
        data_beats_per_clock: 2,
        channels: 1,
        ranks: 1,
        bankgroups: 8,
        banks_per_group: 4,
        rows: density.rows,
        columns: 8192 / dq,
        rows_per_subarray: 512,
    }
}

/// The DDR5 preset `name`, or `None` when it is not one.
pub fn preset(name: &str) -> Option<Spec> {
    let &(name, gbit, dq, rate) = PRESETS.iter().find(|p| p.0 == name)?;
    let bin = SPEED_BINS.iter().find(|b| b.data_rate_mts == rate)?;
    let density = DENSITIES.iter().find(|d| d.gbit == gbit)?;
    Some(Spec {
        name: name.into(),
        standard: Standard::Ddr5,
        data_rate_mts: rate,
        tck_ns: 2000.0 / rate as f64,
        organisation: organisation(density, dq),
        timing: timing(bin, density),
        has_refresh: true,
        precharge_per_dirty_block: false,
        power: PowerSpec {
            source: "stand-in: Micron 8Gb x8 DDR4-2400 currents (no DDR5 currents entered yet; DDR5 energy is a later part of issue 36)".into(),
            ..ddr4_8gb_x8_power()
        },
        bit_energy: None,
        source: format!(
            "JEDEC JESD79-5B {} ({}-{}-{}), {gbit} Gb x{dq}: 8 bank groups x 4 banks, one 32-bit sub-channel",
            bin.name, bin.cl, bin.rcd, bin.rp
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JEDEC rounding on the values the standard's tables print for DDR5-4800.
    #[test]
    fn rounding_matches_the_jedec_clock_counts_at_4800() {
        let t = timing(&SPEED_BINS[0], &DENSITIES[0]);
        assert_eq!((t.n_ras, t.n_rc, t.n_wr, t.n_rtp), (77, 116, 72, 18));
        assert_eq!(
            (t.n_ccd_l, t.n_ccd_l_wr, t.n_rrd_l, t.n_faw),
            (12, 48, 12, 32)
        );
        assert_eq!((t.n_wtr_s, t.n_wtr_l), (6, 24));
        assert_eq!(
            (t.n_rfc, t.n_rfc2, t.n_refi, t.n_refi2),
            (708, 384, 9360, 4680)
        );
        assert_eq!((t.n_rfcsb, t.n_refsbrd), (312, 72));
    }
}
