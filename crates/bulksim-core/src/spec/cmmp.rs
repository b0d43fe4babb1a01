//! The two memory parts of CMMP's Table I (seed 004, digest ../shared/papers/cmmp.md section
//! 3; issue 17 item 1): a 1000 MHz DRAM and a 400 MHz PCM, each on its own 64-bit channel with
//! 8-beat bursts and 4 KB rows. Table I gives capacity, clock, bank count, tCAS-tRCD-tRP and the
//! pJ/bit energies; everything else is bulksim's choice, listed in docs/hybrid.md ("Devices and
//! energy"). Both use the DDR3 rule table (no bank groups); PCM differs as data only: its own
//! values and `precharge_per_dirty_block`.
//!
//! Ranks are the config's (`memory.device[].ranks`: 8 for the DRAM, 16 for the PCM), as for
//! every preset; the organisation here is one rank's.

use super::presets::{ddr3_2gb_x8_power, no_fine_granularity};
use super::{BitEnergy, Organisation, PowerSpec, Spec, Standard, Timing};

/// Cycles covering `ps` picoseconds at a clock of `tck_ps` (nCK = ceil(t / tCK), in integers
/// so that exact multiples do not round up through floating point).
fn cycles(ps: u32, tck_ps: u32) -> u32 {
    ps.div_ceil(tck_ps)
}

/// `max(n nCK, t)`: JEDEC's form for tRRD, tRTP and tWTR.
fn at_least(n: u32, ps: u32, tck_ps: u32) -> u32 {
    n.max(cycles(ps, tck_ps))
}

/// One rank of 4 KB rows: 8 banks (no bank groups), `rows` rows of 512 columns of 8 x8 chips
/// (64-bit channel, 8 bytes a column), 8-beat bursts: 64 bursts (64-B blocks) a row.
fn organisation(rows: u32) -> Organisation {
    let (banks, columns, dq) = (8u64, 512u64, 8u64);
    Organisation {
        density_mbit: (banks * rows as u64 * columns * dq / (1024 * 1024)) as u32,
        dq: 8,
        bus_width_bits: 64,
        burst_length: 8,
        data_beats_per_clock: 2,
        channels: 1,
        ranks: 1,
        bankgroups: 1,
        banks_per_group: 8,
        rows,
        columns: 512,
        rows_per_subarray: 512,
    }
}

/// The timings of DDR3_4Gb_x8_1600 (Micron MT41J512M8 -125) not given by Table I, converted by
/// time to a clock of `tck_ps` (bulksim's choice): CWL 10 ns, tRAS 35 ns, tRTP max(4 nCK,
/// 7.5 ns), tWR 15 ns, tCCD 4 nCK, tRRD max(4 nCK, 6 ns), tWTR max(4 nCK, 7.5 ns), tFAW 30 ns,
/// tRTRS 2 nCK; tRFC 260 ns and tREFI 7.8 us (unused when refresh is off, as Table I runs).
fn ddr3_1600_by_time(tck_ps: u32) -> Timing {
    let c = |ps| cycles(ps, tck_ps);
    Timing {
        n_bl: 4,
        n_cwl: c(10_000),
        n_ras: c(35_000),
        n_rtp: at_least(4, 7_500, tck_ps),
        n_wr: c(15_000),
        n_ccd_s: 4,
        n_ccd_l: 4,
        n_rrd_s: at_least(4, 6_000, tck_ps),
        n_rrd_l: at_least(4, 6_000, tck_ps),
        n_wtr_s: at_least(4, 7_500, tck_ps),
        n_wtr_l: at_least(4, 7_500, tck_ps),
        n_faw: c(30_000),
        n_rtrs: 2,
        ..no_fine_granularity()
    }
}

/// The current-based model (energy.rs) needs currents Table I does not give: the DDR3 ones
/// stand in, as for DDR3_4Gb_x8_1600; CMMP's own energy is `bit_energy`.
fn stand_in_power(part: &str) -> PowerSpec {
    PowerSpec {
        source: format!(
            "stand-in (bulksim's choice): Micron 2Gb x8 DDR3-1066 currents; CMMP's Table I gives pJ/bit energies only for {part} (see the bit-energy stats)"
        ),
        ..ddr3_2gb_x8_power()
    }
}

const ENERGY_SOURCE: &str = "CMMP Table I (from Lee et al., ISCA 2009)";

/// Table I's DRAM: 128 MB (8 ranks x 8 banks x 512 rows of 4 KB) at 1000 MHz (tCK 1 ns, a
/// burst 4 ns), tCAS-tRCD-tRP 12-12-12 ns, tRC = tRAS + tRP.
fn dram() -> Spec {
    const TCK_PS: u32 = 1000;
    let base = ddr3_1600_by_time(TCK_PS);
    let n_rp = cycles(12_000, TCK_PS);
    Spec {
        name: "DRAM_CMMP_1000".into(),
        standard: Standard::Ddr3,
        data_rate_mts: 2000,
        tck_ns: 1.0,
        organisation: organisation(512),
        timing: Timing {
            n_cl: cycles(12_000, TCK_PS),
            n_rcd: cycles(12_000, TCK_PS),
            n_rp,
            n_rc: base.n_ras + n_rp,
            n_rfc: cycles(260_000, TCK_PS),
            n_refi: cycles(7_800_000, TCK_PS),
            ..base
        },
        has_refresh: true,
        precharge_per_dirty_block: false,
        power: stand_in_power("DRAM_CMMP_1000"),
        bit_energy: Some(BitEnergy {
            array_read_pj: 1.17,
            array_write_pj: 0.39,
            buffer_read_pj: 0.93,
            buffer_write_pj: 1.02,
            activation_bits: 0,
            source: ENERGY_SOURCE.into(),
        }),
        source: "CMMP (Bock et al., ICCD 2016) Table I DRAM; other timings DDR3_4Gb_x8_1600's by time (docs/hybrid.md)".into(),
    }
}

/// Table I's PCM: 4 GB (16 ranks x 8 banks x 8192 rows of 4 KB) at 400 MHz (tCK 2.5 ns, a
/// burst 10 ns), tCAS 12 ns (5 cycles, 12.5 ns), tRCD 55 ns, tRP 150 ns per dirty 64-B block at
/// precharge (HMMSim's `pcm_long_latency`; a clean precharge takes no time, as HMMSim's
/// non-destructive reads leave nothing to write). tRAS = tRCD (a row may close once sensed:
/// PCM reads do not destroy the cells, so there is no restore) and tRC = tRAS (the precharge's
/// part is per dirty block). No refresh.
fn pcm() -> Spec {
    const TCK_PS: u32 = 2500;
    let n_rcd = cycles(55_000, TCK_PS);
    Spec {
        name: "PCM_CMMP_400".into(),
        standard: Standard::Ddr3,
        data_rate_mts: 800,
        tck_ns: 2.5,
        organisation: organisation(8192),
        timing: Timing {
            n_cl: cycles(12_000, TCK_PS),
            n_rcd,
            n_rp: cycles(150_000, TCK_PS),
            n_ras: n_rcd,
            n_rc: n_rcd,
            ..ddr3_1600_by_time(TCK_PS)
        },
        has_refresh: false,
        precharge_per_dirty_block: true,
        power: stand_in_power("PCM_CMMP_400"),
        bit_energy: Some(BitEnergy {
            array_read_pj: 2.47,
            array_write_pj: 16.82,
            buffer_read_pj: 0.93,
            buffer_write_pj: 1.02,
            activation_bits: 0,
            source: ENERGY_SOURCE.into(),
        }),
        source: "CMMP (Bock et al., ICCD 2016) Table I PCM; tRP per dirty block as HMMSim; other timings DDR3_4Gb_x8_1600's by time (docs/hybrid.md)".into(),
    }
}

/// The preset `name` (one of this module's two).
pub(super) fn preset(name: &str) -> Spec {
    match name {
        "DRAM_CMMP_1000" => dram(),
        "PCM_CMMP_400" => pcm(),
        _ => unreachable!("not a CMMP preset: {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table I's numbers, in cycles of each part's clock.
    #[test]
    fn table_one_in_cycles() {
        let d = dram();
        let o = &d.organisation;
        assert_eq!(o.row_bytes(), 4096);
        assert_eq!(o.line_bytes(), 64);
        // 8 ranks x 8 banks x 512 rows x 4 KB = 128 MiB.
        assert_eq!(o.channel_bytes() * 8, 128 << 20);
        let t = &d.timing;
        assert_eq!((t.n_cl, t.n_rcd, t.n_rp, t.n_bl), (12, 12, 12, 4));
        assert_eq!((t.n_ras, t.n_rc, t.n_faw, t.n_rrd_s), (35, 47, 30, 6));
        let p = pcm();
        // 16 ranks x 8 banks x 8192 rows x 4 KB = 4 GiB.
        assert_eq!(p.organisation.channel_bytes() * 16, 4 << 30);
        let t = &p.timing;
        // 12 ns rounds up to 5 cycles of 2.5 ns; 55 and 150 ns are exact.
        assert_eq!((t.n_cl, t.n_rcd, t.n_rp, t.n_bl), (5, 22, 60, 4));
        assert_eq!((t.n_ras, t.n_rc, t.n_rtp, t.n_rrd_s), (22, 22, 4, 4));
        assert!(p.precharge_per_dirty_block && !d.precharge_per_dirty_block);
    }
}
