//! HBM3 (JESD238): the rule table and the preset's data. An HBM3 channel is two independent
//! 32-bit pseudo-channels that share the channel's command pins; **bulksim's channel is one
//! pseudo-channel** (as a DDR5 channel is one sub-channel), so an HBM3 channel is two bulksim
//! channels and a 16-channel stack is 32. The command clock CK runs at a quarter of the pin
//! data rate (1.6 GHz at 6.4 Gb/s), so a clock carries 4 data beats. HBM3's burst is BL8
//! (32 bytes); bulksim's 64-byte line is two BL8 bursts to one bank, modelled as one column
//! command. The two bursts, each 2 cycles, are tCCD_L (4 cycles) apart, so a line's data
//! spans 6 cycles with a gap another bank group's burst may fill; as on LPDDR5 (see
//! `lpddr5`), the rule table books the whole span (nBL = 6) and spaces two lines of one bank
//! group 2 x tCCD_L = 8 cycles.
//! Row commands (ACT, PRE, PREA, REF) and column commands (RD, WR) have separate buses; the
//! table says so by spacing only row commands after an ACT, which takes two cycles of the row
//! bus. The controller still issues at most one command per cycle per channel, so a row and
//! a column command ready in the same cycle go one after the other (docs/standards.md).
//! Otherwise the table is DDR4's. Every value, with its source, is in docs/standards.md.

use super::presets::ddr4_8gb_x8_power;
use super::{ddr4, Organisation, PowerSpec, Rule, Spec, Standard, Timing};

/// Cycles an ACT holds the row command bus: the next row command of the pseudo-channel waits
/// this long; column commands, on their own bus, do not.
pub const ACT_ROW_BUS_CYCLES: u32 = 2;

pub fn rules(t: &Timing) -> Vec<Rule> {
    let mut rules = ddr4::rules(t);
    rules.push(
        // ACT2 (RowClone) is an ACT on the row bus.
        rule!(Channel, [Act, Act2] -> [Act, Act2, Pre, PreA, Ref], ACT_ROW_BUS_CYCLES),
    );
    rules
}

/// The pin data rate of the preset (Mb/s) and its clock: CK = rate / 4 MHz.
pub const DATA_RATE_MTS: u32 = 6400;
/// tCK in ps at 6.4 Gb/s: 625 ps (CK 1.6 GHz).
pub const TCK_PS: u32 = 625;

/// tREFI (all-bank refresh interval), ns.
pub const REFI_NS: u32 = 3_900;
/// tRFCab of an 8 Gb channel, ns.
pub const RFCAB_NS: u32 = 350;

/// Per-bank refresh (REFpb) timings, ns. Data only: bulksim issues no REFpb yet (the
/// controller's bank-subset refresh will read them).
pub mod per_bank_refresh {
    /// tRFCpb: REFpb to ACT of the refreshed bank.
    pub const RFCPB_NS: u32 = 200;
    /// tRREFD: REFpb to REFpb or ACT of another bank.
    pub const RREFD_NS: u32 = 8;
    /// REFpbs per tREFI: one per bank of the pseudo-channel (16), so tREFIpb = tREFI / 16.
    pub const REFPB_PER_REFI: u32 = 16;
}

/// Cycles of at least `ps` picoseconds: ceil(t / tCK).
pub fn cycles(ps: u32) -> u32 {
    ps.div_ceil(TCK_PS)
}

/// The preset's timing in cycles of 0.625 ns.
pub fn timing() -> Timing {
    let (n_ras, n_rp) = (55, 23);
    Timing {
        // The two BL8 bursts of a line and the gap between them (module doc).
        n_bl: 6,
        n_cl: 23,
        n_cwl: 7,
        n_rcd: 23,
        n_rp,
        n_rpab: 0,
        n_ras,
        // tRC = tRAS + tRP: the bank's own ACT-PRE-ACT sequence.
        n_rc: n_ras + n_rp,
        // tRTP_L: RD to PRE of the same bank (so of the same bank group).
        n_rtp: 10,
        n_wr: 26,
        // tCCD_S of BL8 bursts of other bank groups; the data bus (nBL) binds first.
        n_ccd_s: 2,
        // The next line of a bank group: its first burst tCCD_L after this one's second.
        n_ccd_l: 8,
        n_ccd_l_wr: 0,
        n_rrd_s: 2,
        n_rrd_l: 4,
        n_wtr_s: 10,
        n_wtr_l: 13,
        n_faw: 48,
        n_rtrs: 2,
        n_rfc: cycles(RFCAB_NS * 1000),
        // An average interval: rounded down, so REFs are never late.
        n_refi: REFI_NS * 1000 / TCK_PS,
        // HBM3 has no DDR4-style fine granularity refresh.
        n_rfc2: 0,
        n_refi2: 0,
        n_rfc4: 0,
        // No same-bank refresh (REFsb is DDR5's; per-bank refresh is not modelled yet).
        n_rfcsb: 0,
        n_refsbrd: 0,
        n_refi4: 0,
    }
}

/// One pseudo-channel of an 8 Gb HBM3 channel: 32 data bits, 4 bank groups x 4 banks, 32K
/// rows, 1 KB pages (256 columns of 32 bits), a 64-byte line as two BL8 bursts.
fn organisation() -> Organisation {
    Organisation {
        density_mbit: 4 * 1024,
        dq: 32,
        bus_width_bits: 32,
        burst_length: 16,
        data_beats_per_clock: 4,
        channels: 1,
        ranks: 1,
        bankgroups: 4,
        banks_per_group: 4,
        rows: 32768,
        columns: 256,
        rows_per_subarray: 512,
    }
}

pub const PRESET: &str = "HBM3_8Gb_6400";

/// The HBM3 preset `name`, or `None` when it is not one.
pub fn preset(name: &str) -> Option<Spec> {
    (name == PRESET).then(|| Spec {
        name: PRESET.into(),
        standard: Standard::Hbm3,
        data_rate_mts: DATA_RATE_MTS,
        tck_ns: TCK_PS as f64 / 1000.0,
        organisation: organisation(),
        timing: timing(),
        has_refresh: true,
        precharge_per_dirty_block: false,
        power: PowerSpec {
            source: "stand-in: Micron 8Gb x8 DDR4-2400 currents (no HBM3 currents entered yet)"
                .into(),
            ..ddr4_8gb_x8_power()
        },
        bit_energy: None,
        source: "JEDEC JESD238 HBM3 at 6.4 Gb/s, one 32-bit pseudo-channel of an 8 Gb channel (4 BG x 4 banks); timings HBM2-derived (no public JESD238 values): docs/standards.md".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_counts_at_6400() {
        let t = timing();
        assert_eq!((t.n_rfc, t.n_refi, t.n_rc), (560, 6240, 78));
        assert_eq!(cycles(per_bank_refresh::RFCPB_NS * 1000), 320);
        assert_eq!(cycles(per_bank_refresh::RREFD_NS * 1000), 13);
    }
}
