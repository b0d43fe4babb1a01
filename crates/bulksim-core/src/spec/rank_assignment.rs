//! The parts of the refresh / rank-assignment study (Table I and II of the paper digested in
//! ../shared/papers/rank_assignment.md): DDR4-1600 x8 chips of 8, 16 and 32 Gb, and a PCM
//! part with the same interface and PCM's array timings. This module owns their values; each
//! value the paper does not give is bulksim's choice, listed in docs/rank_assignment.md.
//! PCM is data only: the DDR4 rule table, its own timings, and `has_refresh: false`.

use super::presets::{ddr4_8gb_x8_power, no_fine_granularity, org};
use super::{PowerSpec, Spec, Standard, Timing};

/// Clock period of 1600 MT/s: 2000 / 1600 ns.
const TCK_NS: f64 = 1.25;

/// Cycles covering `ns` nanoseconds at 1.25 ns (nCK = ceil(t / tCK), in integer picoseconds
/// so that exact multiples do not round up through floating point).
pub fn cycles(ns: u32) -> u32 {
    (ns * 1000).div_ceil(1250)
}

/// Table II of the paper in cycles (tCK 1.25 ns), shared by the DDR4 presets; CWL 9 is
/// bulksim's choice (the paper gives none; 9 is the JEDEC DDR4-1600 CWL for CL 11).
fn table_ii() -> Timing {
    Timing {
        n_bl: 4,
        n_cl: 11,
        n_cwl: 9,
        n_rcd: 11,
        n_rp: 11,
        n_ras: 28,
        n_rc: 39,
        n_rtp: 6,
        n_wr: 12,
        n_ccd_s: 4,
        n_ccd_l: 5,
        n_rrd_s: 4,
        n_rrd_l: 5,
        n_wtr_s: 2,
        n_wtr_l: 6,
        n_faw: 20,
        n_rtrs: 2,
        ..no_fine_granularity()
    }
}

/// Refresh timings of Table I: tRFC in ns at 1x, 2x, 4x granularity; tREFI 7.8 / 3.9 /
/// 1.95 us.
fn with_refresh(t: Timing, rfc_ns: [u32; 3]) -> Timing {
    Timing {
        n_rfc: cycles(rfc_ns[0]),
        n_rfc2: cycles(rfc_ns[1]),
        n_rfc4: cycles(rfc_ns[2]),
        n_refi: cycles(7800),
        n_refi2: cycles(3900),
        n_refi4: cycles(1950),
        ..t
    }
}

/// The DDR4 energy currents stand in (bulksim's choice): the paper gives none for these parts.
fn stand_in_power(part: &str) -> PowerSpec {
    PowerSpec {
        source: format!(
            "stand-in (bulksim's choice): Micron 8Gb x8 DDR4-2400 currents; the paper gives no currents for {part}"
        ),
        ..ddr4_8gb_x8_power()
    }
}

const SOURCE: &str =
    "rank-assignment paper, Tables I-II at 1600 MT/s; bulksim's choices in docs/rank_assignment.md";

fn ddr4(name: &str, density_gbit: u32, rows: u32, rfc_ns: [u32; 3]) -> Spec {
    Spec {
        name: name.into(),
        standard: Standard::Ddr4,
        data_rate_mts: 1600,
        tck_ns: TCK_NS,
        organisation: org(density_gbit * 1024, 4, 4, rows),
        timing: with_refresh(table_ii(), rfc_ns),
        has_refresh: true,
        precharge_per_dirty_block: false,
        power: stand_in_power(name),
        bit_energy: None,
        source: SOURCE.into(),
    }
}

/// PCM as the paper models it: DDR4's interface and Table II, with tRC 55, tRAS 45 and
/// tWR 100, 8 banks per rank (2 bank groups x 4 banks: bulksim's choice) and no refresh.
/// 8 Gb per chip (128K rows of 1K columns) is bulksim's choice; the paper gives no capacity.
fn pcm() -> Spec {
    Spec {
        name: "PCM_x8_1600".into(),
        standard: Standard::Ddr4,
        data_rate_mts: 1600,
        tck_ns: TCK_NS,
        organisation: org(8192, 2, 4, 131072),
        timing: Timing {
            n_ras: 45,
            n_rc: 55,
            n_wr: 100,
            ..table_ii()
        },
        has_refresh: false,
        precharge_per_dirty_block: false,
        power: stand_in_power("PCM"),
        bit_energy: None,
        source: SOURCE.into(),
    }
}

/// The preset `name` (one of this module's four).
pub(super) fn preset(name: &str) -> Spec {
    match name {
        "DDR4_8Gb_x8_1600" => ddr4(name, 8, 65536, [350, 240, 160]),
        "DDR4_16Gb_x8_1600" => ddr4(name, 16, 131072, [480, 350, 240]),
        "DDR4_32Gb_x8_1600" => ddr4(name, 32, 262144, [640, 480, 350]),
        "PCM_x8_1600" => pcm(),
        _ => unreachable!("not a rank-assignment preset: {name}"),
    }
}
