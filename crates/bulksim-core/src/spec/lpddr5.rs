//! LPDDR5 (JESD209-5): the rule table and the preset's data. bulksim's channel is one x16
//! LPDDR5 channel in bank-group mode (4 bank groups x 4 banks, the mode for data rates above
//! 3200 MT/s). The command clock CK is bulksim's clock; data moves on WCK, which runs at four
//! times CK (WCK:CK 4:1) at double rate, so a clock carries 8 data beats. A 64-byte line is a
//! BL32 burst on 16 data bits, which bank-group mode sends as two BL16 halves from one bank
//! group, each 2 cycles, tCCD_L (4 cycles) apart: the line's data spans 6 cycles with a
//! 2-cycle gap that another bank group's half may fill. A table of earliest-time rules cannot
//! say "this gap, or after the burst" (the legal gaps are not an interval), so bulksim books
//! the whole span: nBL = 6, the bus free again after the second half, and the next line of
//! the bank group 2 x tCCD_L = 8 cycles after (nCCD_L). Every log is then legal; what is
//! lost is the interleaving of two bank groups' halves (docs/standards.md). The table is
//! DDR4's with three LPDDR5 additions: ACT takes two command cycles (ACT-1, ACT-2), a PREA
//! needs the longer all-bank precharge time tRPab before the next ACT or REF, and precharges
//! are tPPD apart. WCK runs free (WCK always-on), so no CAS (WCK2CK sync) command precedes a
//! read or write. Every value, with its source, is listed in docs/standards.md.

use super::presets::ddr4_8gb_x8_power;
use super::{ddr4, Organisation, PowerSpec, Rule, Spec, Standard, Timing};

/// Cycles an ACT holds the command bus: ACT-1 then ACT-2, so the channel's next command waits
/// this long after ACT-1, the cycle bulksim counts every timing from.
pub const ACT_COMMAND_CYCLES: u32 = 2;

/// tPPD: precharge (PRE or PREA) to precharge of the same rank, in cycles.
pub const PRECHARGE_TO_PRECHARGE: u32 = 2;

pub fn rules(t: &Timing) -> Vec<Rule> {
    let mut rules = ddr4::rules(t);
    rules.extend([
        // ACT2 (RowClone) is an ACT on the bus.
        rule!(
            Channel,
            [Act, Act2] -> [Act, Pre, PreA, Rd, Wr, RdA, WrA, Ref, Act2, Trr, Trw],
            ACT_COMMAND_CYCLES
        ),
        // DDR4's table closes all banks in nRP (tRPpb here); the rule taking the larger
        // latency binds, so these make PREA's wait tRPab.
        rule!(Rank, [PreA] -> [Act, Ref], t.n_rpab),
        rule!(Rank, [Pre, PreA] -> [Pre, PreA], PRECHARGE_TO_PRECHARGE),
    ]);
    rules
}

/// The data rate of the preset (MT/s) and its clock: CK = rate / 8 MHz at WCK:CK 4:1.
pub const DATA_RATE_MTS: u32 = 6400;
/// tCK in ps at 6400 MT/s: 1,250 ps (CK 800 MHz).
pub const TCK_PS: u32 = 1_250;

/// tREFI (all-bank refresh interval, 0-85 C), ns: 32 ms / 8192 REFs.
pub const REFI_NS: u32 = 3_906;
/// tRFCab for a 16 Gb channel, ns.
pub const RFCAB_NS: u32 = 280;

/// Per-bank refresh (REFpb) timings of a 16 Gb channel, ns. Data only: bulksim issues no
/// REFpb yet (the controller's bank-subset refresh will read them).
pub mod per_bank_refresh {
    /// tRFCpb: REFpb to ACT of the refreshed banks.
    pub const RFCPB_NS: u32 = 140;
    /// tpbR2pbR: REFpb to REFpb of other banks.
    pub const PBR2PBR_NS: u32 = 90;
    /// tpbR2act: REFpb to ACT of another bank.
    pub const PBR2ACT_NS: u32 = 8;
    /// REFpbs per tREFI: each refreshes a pair of banks (bank b and b + 8), so 8 cover 16.
    pub const REFPB_PER_REFI: u32 = 8;
}

/// Cycles of at least `ps` picoseconds: ceil(t / tCK), JEDEC's rounding of a minimum time.
pub fn cycles(ps: u32) -> u32 {
    ps.div_ceil(TCK_PS)
}

/// The preset's timing in cycles of 1.25 ns.
pub fn timing() -> Timing {
    let n_ras = cycles(42_000);
    let n_rp = cycles(18_000);
    Timing {
        // The two BL16 halves of a BL32 and the gap between them (module doc).
        n_bl: 6,
        n_cl: 20,
        n_cwl: 11,
        n_rcd: cycles(18_000),
        n_rp,
        n_rpab: cycles(21_000),
        n_ras,
        // tRC = tRAS + tRPpb: the bank's own ACT-PRE-ACT sequence.
        n_rc: n_ras + n_rp,
        n_rtp: cycles(7_500),
        n_wr: cycles(34_000),
        // tCCD_S of BL16 halves of other bank groups; the data bus (nBL) binds first.
        n_ccd_s: 2,
        // The next BL32 of a bank group: its first half tCCD_L after this one's second.
        n_ccd_l: 8,
        n_ccd_l_wr: 0,
        n_rrd_s: cycles(5_000),
        n_rrd_l: cycles(5_000),
        n_wtr_s: cycles(6_250),
        n_wtr_l: cycles(12_000),
        n_faw: cycles(20_000),
        n_rtrs: 2,
        n_rfc: cycles(RFCAB_NS * 1000),
        // An average interval: rounded down, so REFs are never late.
        n_refi: REFI_NS * 1000 / TCK_PS,
        // LPDDR5 has no DDR4-style fine granularity refresh.
        n_rfc2: 0,
        n_refi2: 0,
        n_rfc4: 0,
        // No same-bank refresh (REFsb is DDR5's; per-bank refresh is not modelled yet).
        n_rfcsb: 0,
        n_refsbrd: 0,
        n_refi4: 0,
    }
}

/// One x16 channel of a 16 Gb LPDDR5 channel in bank-group mode: 4 bank groups x 4 banks,
/// 64K rows, 1K columns of 16 bits (2 KB pages), BL32.
fn organisation() -> Organisation {
    Organisation {
        density_mbit: 16 * 1024,
        dq: 16,
        bus_width_bits: 16,
        burst_length: 32,
        data_beats_per_clock: 8,
        channels: 1,
        ranks: 1,
        bankgroups: 4,
        banks_per_group: 4,
        rows: 65536,
        columns: 1024,
        rows_per_subarray: 512,
    }
}

pub const PRESET: &str = "LPDDR5_16Gb_x16_6400";

/// The LPDDR5 preset `name`, or `None` when it is not one.
pub fn preset(name: &str) -> Option<Spec> {
    (name == PRESET).then(|| Spec {
        name: PRESET.into(),
        standard: Standard::Lpddr5,
        data_rate_mts: DATA_RATE_MTS,
        tck_ns: TCK_PS as f64 / 1000.0,
        organisation: organisation(),
        timing: timing(),
        has_refresh: true,
        precharge_per_dirty_block: false,
        power: PowerSpec {
            source: "stand-in: Micron 8Gb x8 DDR4-2400 currents (no LPDDR5 currents entered yet)"
                .into(),
            ..ddr4_8gb_x8_power()
        },
        bit_energy: None,
        source: "JEDEC JESD209-5 LPDDR5-6400, 16 Gb x16 channel in bank-group mode (4 BG x 4 banks), WCK:CK 4:1, BL32; values and sources in docs/standards.md".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JEDEC rounding of the nanosecond values at tCK 1.25 ns.
    #[test]
    fn clock_counts_at_6400() {
        let t = timing();
        assert_eq!(
            (t.n_rcd, t.n_rp, t.n_rpab, t.n_ras, t.n_rc),
            (15, 15, 17, 34, 49)
        );
        assert_eq!((t.n_wr, t.n_rtp, t.n_rrd_s, t.n_faw), (28, 6, 4, 16));
        assert_eq!((t.n_wtr_s, t.n_wtr_l), (5, 10));
        assert_eq!((t.n_rfc, t.n_refi), (224, 3124));
        assert_eq!(cycles(per_bank_refresh::RFCPB_NS * 1000), 112);
        assert_eq!(cycles(per_bank_refresh::PBR2PBR_NS * 1000), 72);
    }
}
