//! Latency and bandwidth against closed forms derived from the timing parameters.

use crate::common;
use bulksim_core::spec::presets::PRESET_NAMES;
use bulksim_core::workload::generate::Pattern;
use common::*;

/// One read to a closed bank: tRCD + tCL + tBL. A second read to the open row: tCL + tBL.
/// A read to another row of that bank once tRAS has passed: tRP + tRCD + tCL + tBL.
#[test]
fn unloaded_read_latency() {
    for name in PRESET_NAMES {
        let c = config(&[
            &format!("dram.preset=\"{name}\""),
            "controller.refresh=none",
        ]);
        let t = c.spec().unwrap().timing;
        let row_stride = 1u64 << 40 >> 40 << (6 + 7 + 4 + 3); // well above column and bank bits
        let s = run_records(&c, vec![read(100, 0)]);
        let closed = (t.n_rcd + t.n_cl + t.n_bl) as u64;
        assert_eq!(s.read_latency.max_mem_cycles, closed, "{name}");
        assert_eq!(s.mem_cycles, 100 + closed, "{name}");
        assert_eq!((s.row_misses, s.row_hits, s.row_conflicts), (1, 0, 0));

        let s = run_records(&c, vec![read(100, 0), read(1000, 64)]);
        assert_eq!(
            s.read_latency.p50_mem_cycles,
            (t.n_cl + t.n_bl) as u64,
            "{name}: row hit"
        );
        assert_eq!(s.row_hits, 1);

        let s = run_records(&c, vec![read(100, 0), read(1000, row_stride)]);
        // A precharge of a row that was only read takes no time on a part whose precharge
        // takes nRP per dirty block (PCM_CMMP_400): the ACT follows the PRE in the next
        // command cycle.
        let precharge = if c.spec().unwrap().precharge_per_dirty_block {
            1
        } else {
            t.n_rp
        };
        assert_eq!(
            s.read_latency.max_mem_cycles,
            (precharge + t.n_rcd + t.n_cl + t.n_bl) as u64,
            "{name}: conflict"
        );
        assert_eq!(s.row_conflicts, 1);
        assert!((s.read_latency.mean_ns - s.read_latency.mean_mem_cycles * s.tck_ns).abs() < 1e-9);
    }
}

/// Streaming reads to open rows use at least 90% of the channel's peak bandwidth when
/// consecutive lines can issue every nBL cycles: on DDR3 with the default mapping, and on DDR4
/// with bank groups interleaved below the column bits (RoCoBaRaCh).
#[test]
fn streaming_reads_reach_ninety_percent_of_peak() {
    for (name, mapping) in [
        ("DDR3_2Gb_x8_1066", "RoBaRaCoCh"),
        ("DDR3_4Gb_x8_1600", "RoBaRaCoCh"),
        ("DDR4_8Gb_x8_2400", "RoCoBaRaCh"),
    ] {
        let c = config(&[
            &format!("dram.preset=\"{name}\""),
            &format!("controller.address_mapping=\"{mapping}\""),
        ]);
        let s = run_generated(&c, Pattern::Stream, 100_000, 0, 0.0);
        let spec = c.spec().unwrap();
        assert!((s.peak_bandwidth_gbps - spec.peak_channel_gbps()).abs() < 1e-9);
        let fraction = s.bandwidth_gbps / s.peak_bandwidth_gbps;
        assert!(fraction >= 0.90, "{name}: {:.3} of peak", fraction);
        // Refresh is the main loss: at most tRFC per tREFI plus the row switches.
        let refresh_loss = spec.timing.n_rfc as f64 / spec.timing.n_refi as f64;
        assert!(
            fraction <= 1.0 - refresh_loss + 0.01,
            "{name}: {fraction:.3} beats the refresh bound"
        );
    }
}

/// On DDR4 with the default RoBaRaCoCh mapping, consecutive lines share a bank group, so
/// streaming is bound by tCCD_L (6 cycles per 4-cycle burst) except where FR-FCFS overlaps two
/// rows at a row boundary.
#[test]
fn ddr4_default_mapping_stream_is_bound_by_tccd_l() {
    let c = config(&["controller.refresh=none"]);
    let t = c.spec().unwrap().timing;
    let s = run_generated(&c, Pattern::Stream, 50_000, 0, 0.0);
    let per_read = s.mem_cycles as f64 / s.reads as f64;
    assert!(
        per_read > t.n_ccd_s as f64 * 1.1 && per_read <= t.n_ccd_l as f64,
        "{per_read:.2} cycles per read"
    );
}

/// Random reads on one rank open a row per read; ACTs are limited to four per tFAW, one per
/// tRRD and one per bank per row cycle, so bandwidth cannot exceed the tightest of these. The stats show one ACT per read.
#[test]
fn random_reads_are_bounded_by_tfaw_and_trrd() {
    for name in PRESET_NAMES {
        let c = config(&[
            &format!("dram.preset=\"{name}\""),
            "controller.refresh=none",
        ]);
        let t = c.spec().unwrap().timing;
        let s = run_generated(&c, Pattern::Random, 20_000, 0, 0.0);
        let acts = s.commands["ACT"];
        assert!(
            acts as f64 >= 0.99 * s.reads as f64,
            "{name}: nearly every random read activates"
        );
        let faw_bound_cycles = (acts - 4) as f64 / 4.0 * t.n_faw as f64;
        let rrd_bound_cycles = (acts - 1) as f64 * t.n_rrd_s as f64;
        assert!(
            s.mem_cycles as f64 >= faw_bound_cycles.max(rrd_bound_cycles),
            "{name}: faster than tFAW allows"
        );
        let per_act = s.mem_cycles as f64 / acts as f64;
        // Each bank activates at most once per max(tRC, tRAS + tRP); with few banks and long
        // rows cycles (PCM: 8 banks, 45 + 11) that binds before tFAW does.
        let banks = c.spec().unwrap().organisation.banks_per_rank() as f64;
        // A part whose precharge takes nRP per dirty block (PCM_CMMP_400) closes a row that
        // was only read at once.
        let spec = c.spec().unwrap();
        let n_rp = if spec.precharge_per_dirty_block {
            0
        } else {
            t.n_rp
        };
        let bank_cycle = t.n_rc.max(t.n_ras + n_rp) as f64;
        // The data bus takes one read per nBL: it binds on LPDDR5, whose nBL (6) books a
        // line's two halves and the gap between them.
        let bound = (t.n_faw as f64 / 4.0)
            .max(t.n_rrd_s as f64)
            .max(bank_cycle / banks)
            .max(t.n_bl as f64);
        // Within a third of the bound: the scheduler keeps the ACT pipeline busy.
        assert!(
            per_act < bound * 1.35,
            "{name}: {per_act:.2} cycles per ACT vs bound {bound:.2}"
        );
        // 64 bytes per read, and a read per ACT but for the few row hits.
        let gbps_bound = 64.0 * s.reads as f64 / acts as f64 / (bound * s.tck_ns);
        assert!(s.bandwidth_gbps <= gbps_bound * 1.001, "{name}");
    }
}

/// Refresh: one REF per rank per tREFI, the peak bandwidth figure scales with channels, and
/// `cycles` ends with the last data beat.
#[test]
fn refresh_count_matches_elapsed_time() {
    for ranks in [1u32, 2, 4] {
        let c = config(&[&format!("dram.ranks={ranks}")]);
        let t = c.spec().unwrap().timing;
        let s = run_generated(&c, Pattern::Random, 20_000, 10, 0.2);
        let expected = ranks as u64 * s.mem_cycles / t.n_refi as u64;
        assert!(
            s.refreshes.abs_diff(expected) <= ranks as u64,
            "ranks={ranks}: {} vs {expected}",
            s.refreshes
        );
    }
    let c = config(&["dram.channels=2"]);
    let s = run_generated(&c, Pattern::Stream, 1000, 0, 0.0);
    assert!((s.peak_bandwidth_gbps - 2.0 * 19.2).abs() < 1e-9);
}
