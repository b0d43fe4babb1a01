//! The DRAM energy model, from datasheet currents as JEDEC's IDD definitions and DRAMPower use
//! them, per rank (all chips of the rank together), in nJ:
//!
//! - ACT: VDD (IDD0 - IDD3N) tRAS + VPP (IPP0 - IPP3N) tRC, per activate;
//! - PRE: VDD (IDD0 - IDD2N) tRP, per bank precharged (PRE, each open bank of a PREA, RDA/WRA);
//! - RD / WR: VDD (IDD4R - IDD3N) and VDD (IDD4W - IDD3N) over one burst (nBL tCK); a
//!   TRANSFER (RowClone PSM) is one internal read plus one internal write, with no I/O;
//! - REF: VDD (IDD5B - IDD3N) tRFC + VPP (IPP5B - IPP3N) tRFC, per all-bank refresh (an
//!   adaptive refresh run's 4x REFs over nRFC4);
//! - background: VDD IDD3N while any bank of the rank is open, VDD IDD2N while all are
//!   precharged, plus VPP IPP3N throughout (power-down is not modelled);
//!
//! each times the chips of a rank; and, as a separate component, the channel's I/O and
//! termination: per burst, (driver + termination) power per DQ times the bus width times the
//! burst time. mA x V x ns = pJ.
//!
//! Beside it, for parts that declare pJ/bit energies (`Spec::bit_energy`: CMMP's Table I, after
//! Lee et al., ISCA 2009), a dynamic model counted from the same activity (`per_bit_energy`):
//! array read per bit sensed at each ACT (`activation_bits`, default the whole row), array
//! write per bit written to the array at precharge (a DRAM restores the whole row at each
//! precharge of an open row: PRE, each open bank of a PREA, RDA/WRA; a part whose precharge
//! writes back only dirty blocks, PCM, writes 512 bits per dirty 64-B block), and buffer
//! read/write per bit of each RD/WR burst (512 bits). No background or refresh energy: the
//! paper's model is dynamic only (bulksim's choice, issue 17 item 2).

use crate::device::RankActivity;
use crate::spec::Spec;
use crate::stat_struct::stat_struct;

stat_struct! {
    /// The dynamic pJ/bit model of parts that declare it (`Spec::bit_energy`), in nJ; all 0
    /// for parts that do not (`per_bit_source` is then empty).
    pub struct BitEnergyStats {
        pub array_read_nj: f64 = sum("nJ", "array reads: the part's array-read pJ/bit x the bits each ACT senses (activation_bits; default the whole row: 32,768 bits of a 4 KB row)"),
        pub array_write_nj: f64 = sum("nJ", "array writes: the part's array-write pJ/bit x the bits written to the array at precharge: the whole row at each precharge of an open row (DRAM: PRE, each open bank of a PREA, RDA/WRA), 512 bits per dirty 64-B block on parts whose precharge writes back only dirty blocks (PCM)"),
        pub buffer_read_nj: f64 = sum("nJ", "row-buffer reads: the part's buffer-read pJ/bit x 512 bits per RD/RDA burst"),
        pub buffer_write_nj: f64 = sum("nJ", "row-buffer writes: the part's buffer-write pJ/bit x 512 bits per WR/WRA burst"),
        pub total_nj: f64 = sum("nJ", "array_read_nj + array_write_nj + buffer_read_nj + buffer_write_nj"),
    }
}

/// The pJ/bit model's energy of one rank's (or several ranks') activity; zero for a part that
/// declares no pJ/bit energies. RowClone's ACT2 counts as an ACT (it senses a row) and
/// TRANSFER halves are not charged (no CMMP part runs RowClone).
pub fn per_bit_energy(spec: &Spec, a: &RankActivity) -> BitEnergyStats {
    let Some(e) = &spec.bit_energy else {
        return BitEnergyStats::default();
    };
    let o = &spec.organisation;
    let row_bits = o.row_bytes() * 8;
    let burst_bits = o.line_bytes() * 8;
    let sensed = if e.activation_bits == 0 {
        row_bits
    } else {
        e.activation_bits
    };
    let written_bits = if spec.precharge_per_dirty_block {
        a.dirty_blocks_written * burst_bits
    } else {
        a.precharges * row_bits
    };
    // pJ / 1000 = nJ.
    let nj = |pj_per_bit: f64, bits: u64| pj_per_bit * bits as f64 / 1000.0;
    let mut s = BitEnergyStats {
        array_read_nj: nj(e.array_read_pj, a.acts * sensed),
        array_write_nj: nj(e.array_write_pj, written_bits),
        buffer_read_nj: nj(e.buffer_read_pj, a.reads * burst_bits),
        buffer_write_nj: nj(e.buffer_write_pj, a.writes * burst_bits),
        total_nj: 0.0,
    };
    s.total_nj = s.array_read_nj + s.array_write_nj + s.buffer_read_nj + s.buffer_write_nj;
    s
}

stat_struct! {
    /// Energy of one rank (or a sum of ranks) by component, in nJ.
    pub struct EnergyBreakdown {
        pub act_nj: f64 = sum("nJ", "activate energy: VDD (IDD0 - IDD3N) tRAS + VPP (IPP0 - IPP3N) tRC per ACT, all chips of the rank"),
        pub pre_nj: f64 = sum("nJ", "precharge energy: VDD (IDD0 - IDD2N) tRP per bank precharged (PRE, PREA, auto-precharge)"),
        pub read_nj: f64 = sum("nJ", "read burst energy in the DRAM: VDD (IDD4R - IDD3N) per burst time, RD and the read half of TRANSFER (TRR)"),
        pub write_nj: f64 = sum("nJ", "write burst energy in the DRAM: VDD (IDD4W - IDD3N) per burst time, WR and the write half of TRANSFER (TRW)"),
        pub refresh_nj: f64 = sum("nJ", "refresh energy: (IDD5B - IDD3N) and (IPP5B - IPP3N) over tRFC per REF; a same-bank REFsb costs 1 / banks_per_group of a REF at the run's (fine) granularity, bulksim's choice"),
        pub background_nj: f64 = sum("nJ", "standby energy: IDD3N while a bank of the rank is open, IDD2N while all are precharged, IPP3N throughout"),
        pub io_nj: f64 = sum("nJ", "channel I/O and termination energy of every RD and WR burst"),
    }
}

impl EnergyBreakdown {
    /// DRAM core energy: everything but the channel I/O.
    pub fn core_nj(&self) -> f64 {
        self.act_nj
            + self.pre_nj
            + self.read_nj
            + self.write_nj
            + self.refresh_nj
            + self.background_nj
    }

    pub fn total_nj(&self) -> f64 {
        self.core_nj() + self.io_nj
    }
}

/// Energy of one rank's activity under `spec`.
pub fn rank_energy(spec: &Spec, a: &RankActivity) -> EnergyBreakdown {
    let p = &spec.power;
    let t = &spec.timing;
    let tck = spec.tck_ns();
    let chips = spec.organisation.chips_per_rank() as f64;
    let ns = |cycles: u32| cycles as f64 * tck;
    let burst_ns = ns(t.n_bl);
    // mA x V x ns = pJ; / 1000 -> nJ.
    let nj =
        |milliamps: f64, volts: f64, nanoseconds: f64| milliamps * volts * nanoseconds / 1000.0;
    let per_act =
        nj(p.idd0 - p.idd3n, p.vdd, ns(t.n_ras)) + nj(p.ipp0 - p.ipp3n, p.vpp, ns(t.n_rc));
    let per_pre = nj(p.idd0 - p.idd2n, p.vdd, ns(t.n_rp));
    let per_read = nj(p.idd4r - p.idd3n, p.vdd, burst_ns);
    let per_write = nj(p.idd4w - p.idd3n, p.vdd, burst_ns);
    let per_ref =
        nj(p.idd5b - p.idd3n, p.vdd, ns(t.n_rfc)) + nj(p.ipp5b - p.ipp3n, p.vpp, ns(t.n_rfc));
    // An adaptive refresh run's 4x REFs last nRFC4 (0 of them otherwise).
    let per_fine_ref =
        nj(p.idd5b - p.idd3n, p.vdd, ns(t.n_rfc4)) + nj(p.ipp5b - p.ipp3n, p.vpp, ns(t.n_rfc4));
    // A REFsb refreshes one bank of each bank group, the share of the rank's rows that one
    // of the banks_per_group REFsb standing for a fine-granularity REF refreshes (same-bank
    // refresh runs in FGR mode, so nRFC is tRFC2): bulksim's choice, with no IDD of REFsb's own.
    let per_same_bank_ref = per_ref / spec.organisation.banks_per_group as f64;
    let active_ns = a.active_cycles as f64 * tck;
    let precharged_ns = a.precharged_cycles as f64 * tck;
    let background = nj(p.idd3n, p.vdd, active_ns)
        + nj(p.idd2n, p.vdd, precharged_ns)
        + nj(p.ipp3n, p.vpp, active_ns + precharged_ns);
    let dq = spec.organisation.bus_width_bits as f64;
    // mW x ns = pJ.
    let io_read = (p.read_io_mw + p.read_termination_mw) * dq * burst_ns / 1000.0;
    let io_write = (p.write_odt_mw + p.write_termination_mw) * dq * burst_ns / 1000.0;
    EnergyBreakdown {
        act_nj: chips * per_act * a.acts as f64,
        pre_nj: chips * per_pre * a.precharges as f64,
        read_nj: chips * per_read * (a.reads + a.transfer_reads) as f64,
        write_nj: chips * per_write * (a.writes + a.transfer_writes) as f64,
        refresh_nj: chips * per_ref * (a.refreshes - a.fine_refreshes) as f64
            + chips * per_fine_ref * a.fine_refreshes as f64
            + chips * per_same_bank_ref * a.same_bank_refreshes as f64,
        background_nj: chips * background,
        io_nj: io_read * a.reads as f64 + io_write * a.writes as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::presets::preset;

    /// A TRANSFER costs one internal read and one internal write burst and no channel I/O:
    /// on DDR3-1066, 8 x 1.5 V x (140 - 35) mA x 7.5 ns = 9.45 nJ and 8 x 1.5 x (145 - 35) x 7.5
    /// = 9.9 nJ.
    #[test]
    fn transfer_is_an_internal_read_and_write_without_io() {
        let spec = preset("DDR3_2Gb_x8_1066").unwrap();
        let transfer = RankActivity {
            transfer_reads: 1,
            transfer_writes: 1,
            ..Default::default()
        };
        let e = rank_energy(&spec, &transfer);
        assert!(
            (e.read_nj - 9.45).abs() < 1e-9 && (e.write_nj - 9.9).abs() < 1e-9,
            "{e:?}"
        );
        assert_eq!(e.io_nj, 0.0);
        let channel = RankActivity {
            reads: 1,
            writes: 1,
            ..Default::default()
        };
        let c = rank_energy(&spec, &channel);
        assert_eq!((c.read_nj, c.write_nj), (e.read_nj, e.write_nj));
        assert!(c.io_nj > 0.0);
    }
}
