//! Bulk operations end to end: latencies against closed forms from the command sequences
//! (the RowClone paper's Table 3 set-up: DDR3-1066 8-8-8, 4 KB rank rows), bytes really moved
//! in the memory image by every mechanism, and mixing with ordinary traffic.

use crate::common;
use bulksim_core::bulk::{BulkKind, BulkOp};
use bulksim_core::memory::MemoryRouter;
use bulksim_core::sim;
use bulksim_core::workload::trace::TraceRecord;
use bulksim_core::{Config, Stats};
use common::*;

/// DDR3-1066, 512 columns per chip row: 4 KB rows; RoBaRaCoCh, 1 channel, 1 rank: an address
/// is (row << 3 | bank) << 12 | offset.
fn table3(mechanism: &str) -> Config {
    config(&[
        "dram.preset=\"DDR3_2Gb_x8_1066\"",
        "dram.columns=512",
        &format!("bulk.mechanism=\"{mechanism}\""),
    ])
}

fn at(bank: u64, row: u64) -> u64 {
    ((row << 3) | bank) << 12
}

fn copy(src: u64, dst: u64, bytes: u64) -> BulkOp {
    BulkOp {
        kind: BulkKind::Copy { src },
        dst,
        bytes,
    }
}

fn init(dst: u64, bytes: u64, value: u8) -> BulkOp {
    BulkOp {
        kind: BulkKind::Init { value },
        dst,
        bytes,
    }
}

fn run(c: &Config, records: Vec<TraceRecord>) -> (Stats, MemoryRouter) {
    sim::run_keeping_memory(c, &mut records.into_iter(), None, None).unwrap()
}

fn bytes(m: &MemoryRouter, addr: u64, len: usize) -> Vec<u8> {
    let mut b = vec![0; len];
    m.image().read(addr, &mut b);
    b
}

fn only(op: BulkOp, mechanism: &str) -> (Stats, MemoryRouter) {
    run(&table3(mechanism), vec![TraceRecord::bulk(0, op)])
}

/// The original (untouched) bytes at `addr`.
fn original(addr: u64, len: usize) -> Vec<u8> {
    let (_, m) = only(init(at(7, 3000), 64, 1), "channel");
    bytes(&m, addr, len)
}

/// Baseline 4 KB copy over the channel with the 64-line copy buffer: ACT the source, 64 RDs
/// one tCCD apart, data back CL + BL after the last; then PRE, ACT the destination row of the
/// same bank, 64 WRs, the last write's data done CWL + BL later. On DDR3-1066: 550 cycles =
/// 1031 ns (the paper's Table 3: 1046 ns).
#[test]
fn baseline_copy_reads_a_row_then_writes_one() {
    let c = table3("channel");
    let t = c.spec().unwrap().timing;
    let (s, _) = only(copy(at(0, 1), at(0, 2), 4096), "channel");
    let burst = 63 * t.n_ccd_s.max(t.n_bl) as u64;
    let reads_back = (t.n_rcd + t.n_cl + t.n_bl) as u64 + burst;
    let expected = reads_back + (t.n_rp + t.n_rcd + t.n_cwl + t.n_bl) as u64 + burst;
    assert_eq!(s.bulk.copy_latency.max_mem_cycles, expected);
    assert_eq!(expected, 550);
    assert_eq!(
        (s.commands["RD"], s.commands["WR"], s.commands["ACT"]),
        (64, 64, 2)
    );
    assert_eq!(
        (
            s.bulk.channel_copy_bytes,
            s.bulk.channel_bytes,
            s.bulk.in_dram_bytes
        ),
        (4096, 8192, 0)
    );
    assert_eq!(s.bulk.copies, 1);
}

/// Baseline zeroing: 64 WRs to one row: tRCD + 63 tCCD + CWL + BL = 270 cycles = 506 ns.
#[test]
fn baseline_zeroing_writes_a_row() {
    let t = table3("channel").spec().unwrap().timing;
    let (s, m) = only(init(at(0, 2), 4096, 0), "channel");
    let expected = (t.n_rcd + 63 * t.n_ccd_s + t.n_cwl + t.n_bl) as u64;
    assert_eq!(s.bulk.init_latency.max_mem_cycles, expected);
    assert_eq!(s.commands["WR"], 64);
    assert!(bytes(&m, at(0, 2), 4096).iter().all(|&b| b == 0));
}

/// FPM: ACT, ACT2 after tRAS, PRE after another tRAS, done tRP later: 48 cycles = 90 ns,
/// for a copy and for zeroing (from the subarray's zero row).
#[test]
fn fpm_copy_and_zero_take_two_tras_plus_trp() {
    let t = table3("rowclone").spec().unwrap().timing;
    let expected = (2 * t.n_ras + t.n_rp) as u64;
    let (s, m) = only(copy(at(0, 1), at(0, 2), 4096), "rowclone");
    assert_eq!(s.bulk.copy_latency.max_mem_cycles, expected);
    assert_eq!(s.bulk.copy_latency.max_ns, 90.0);
    assert_eq!(
        (s.commands["ACT"], s.commands["ACT2"], s.commands["PRE"]),
        (1, 1, 1)
    );
    assert_eq!((s.bulk.fpm_bytes, s.bulk.channel_bytes), (4096, 0));
    assert_eq!(bytes(&m, at(0, 2), 4096), original(at(0, 1), 4096));

    let (s, m) = only(init(at(0, 2), 4096, 0), "rowclone");
    assert_eq!(s.bulk.init_latency.max_mem_cycles, expected);
    assert_eq!(s.bulk.fpm_bytes, 4096);
    assert!(bytes(&m, at(0, 2), 4096).iter().all(|&b| b == 0));
    // Energy: one ACT, one ACT2, one PRE; no bursts, no I/O.
    assert_eq!(s.bulk.energy_nj, s.bulk.energy_with_io_nj);
    let e = &s.energy.components;
    assert!(e.act_nj > 0.0 && (s.bulk.energy_nj - (e.act_nj + e.pre_nj)).abs() < 1e-9);
}

/// PSM between banks: ACT both rows (tRRD apart), TRR once the destination's TRW can follow
/// (tRRD + tRCD - 1), 64 TRANSFERs one tCCD apart, then write recovery and tRP on the
/// destination: 290 cycles = 543.75 ns (paper: 540 ns).
#[test]
fn psm_inter_bank_copy_pipelines_transfers() {
    let t = table3("rowclone").spec().unwrap().timing;
    let (s, m) = only(copy(at(0, 1), at(1, 2), 4096), "rowclone");
    let first_trr = (t.n_rcd as u64).max((t.n_rrd_s + t.n_rcd - 1) as u64);
    let last_trw = first_trr + 63 * t.n_ccd_s as u64 + 1;
    let expected = last_trw + (t.n_cwl + t.n_bl + t.n_wr + t.n_rp) as u64;
    assert_eq!(s.bulk.copy_latency.max_mem_cycles, expected);
    assert_eq!(expected, 290);
    assert_eq!(
        (s.commands["TRR"], s.commands["TRW"], s.commands["PRE"]),
        (64, 64, 2)
    );
    assert_eq!((s.bulk.psm_bytes, s.bulk.channel_bytes), (4096, 0));
    assert_eq!(bytes(&m, at(1, 2), 4096), original(at(0, 1), 4096));
    assert_eq!(
        s.energy.components.io_nj, 0.0,
        "TRANSFER uses no channel I/O"
    );
}

/// PSM within a bank, between subarrays: 64 TRANSFERs to the temporary row of another bank;
/// PRE the source (tRTP after the last TRR), ACT the destination; 64 TRANSFERs back, then
/// write recovery and tRP: 561 cycles = 1051.9 ns (paper: 1050 ns).
#[test]
fn psm_intra_bank_copy_goes_through_a_temporary_row() {
    let t = table3("rowclone").spec().unwrap().timing;
    let (s, m) = only(copy(at(0, 1), at(0, 600), 4096), "rowclone");
    let first_trr = (t.n_rcd as u64).max((t.n_rrd_s + t.n_rcd - 1) as u64);
    let last_trr = first_trr + 63 * t.n_ccd_s as u64;
    let act_dst = last_trr + (t.n_rtp + t.n_rp) as u64;
    let last_trw = act_dst + t.n_rcd as u64 - 1 + 63 * t.n_ccd_s as u64 + 1;
    let expected = last_trw + (t.n_cwl + t.n_bl + t.n_wr + t.n_rp) as u64;
    assert_eq!(s.bulk.copy_latency.max_mem_cycles, expected);
    assert_eq!(expected, 561);
    assert_eq!((s.commands["TRR"], s.commands["TRW"]), (128, 128));
    assert_eq!(s.bulk.psm_bytes, 4096, "bytes count once");
    assert_eq!(bytes(&m, at(0, 600), 4096), original(at(0, 1), 4096));
}

#[test]
fn a_transfer_moves_exactly_one_line() {
    let (s, m) = only(copy(at(0, 1) + 128, at(1, 2) + 128, 64), "rowclone");
    assert_eq!((s.commands["TRR"], s.commands["TRW"]), (1, 1));
    assert_eq!((s.bulk.psm_bytes, s.bulk.channel_copy_bytes), (64, 0));
    let before = original(at(1, 2), 4096);
    let after = bytes(&m, at(1, 2), 4096);
    assert_eq!(&after[128..192], &original(at(0, 1) + 128, 64)[..]);
    assert_eq!(&after[..128], &before[..128]);
    assert_eq!(&after[192..], &before[192..]);
}

/// Every mechanism moves the same bytes: whole rows, partial lines, misaligned copies.
#[test]
fn every_mechanism_leaves_the_same_bytes() {
    let ops = [
        copy(at(2, 5), at(2, 9), 4096),                 // FPM
        copy(at(3, 5) + 64, at(4, 9) + 64, 4096 - 128), // PSM lines
        copy(at(5, 5) + 10, at(5, 700) + 10, 300),      // partial lines, aligned delta
        copy(at(6, 5) + 3, at(6, 9) + 17, 5000),        // misaligned: channel
        init(at(7, 40), 3 * 4096, 0xab),                // seed row and copies
        init(at(1, 20) + 100, 8000, 0),                 // zero rows and lines
    ];
    let records: Vec<_> = ops.iter().map(|&op| TraceRecord::bulk(0, op)).collect();
    let mut images = Vec::new();
    for mech in ["channel", "mc_dma", "rowclone"] {
        let (s, m) = run(&table3(mech), records.clone());
        assert_eq!(s.bulk.copies + s.bulk.inits, 6, "{mech}");
        let moved =
            s.bulk.fpm_bytes + s.bulk.psm_bytes + s.bulk.channel_copy_bytes + s.bulk.dma_bytes;
        assert_eq!(moved, ops.iter().map(|o| o.bytes).sum::<u64>(), "{mech}");
        let regions: Vec<Vec<u8>> = ops
            .iter()
            .map(|o| bytes(&m, o.dst - 256, o.bytes as usize + 512))
            .collect();
        images.push(regions);
        if mech == "rowclone" {
            // Whole rows: the FPM copy; the seed row (channel) and its two copies (PSM, other banks).
            assert_eq!(s.bulk.fpm_bytes, 4096, "{:?}", s.bulk);
            assert!(s.bulk.psm_bytes > 0 && s.bulk.channel_copy_bytes > 0);
        }
        if mech == "mc_dma" {
            assert_eq!(s.bulk.channel_copy_bytes, 0);
        }
    }
    assert!(images[0] == images[1], "cpu and mc_dma differ");
    assert!(images[0] == images[2], "cpu and rowclone differ");
    // And they are right: copies hold their source, inits their value.
    let fresh = |addr, len| original(addr, len);
    let r = &images[2];
    assert!(r[0][256..256 + 4096] == fresh(at(2, 5), 4096)[..]);
    assert!(r[3][256..256 + 5000] == fresh(at(6, 5) + 3, 5000)[..]);
    assert!(r[3][..256] == fresh(at(6, 9) + 17 - 256, 256)[..]);
    assert!(r[4][256..256 + 3 * 4096].iter().all(|&b| b == 0xab));
    assert!(r[5][256..256 + 8000].iter().all(|&b| b == 0));
    assert!(r[5][..256] == fresh(at(1, 20) + 100 - 256, 256)[..]);
}

/// An operation that reads what an earlier one writes waits for it.
#[test]
fn dependent_operations_stay_in_order() {
    for mech in ["channel", "rowclone"] {
        let (_, m) = run(
            &table3(mech),
            vec![
                TraceRecord::bulk(0, copy(at(0, 1), at(3, 2), 4096)),
                TraceRecord::bulk(0, copy(at(3, 2), at(0, 7), 4096)),
                TraceRecord::bulk(0, init(at(0, 1), 4096, 0)),
            ],
        );
        assert_eq!(
            bytes(&m, at(0, 7), 4096),
            original(at(0, 1), 4096),
            "{mech}"
        );
        assert!(bytes(&m, at(0, 1), 4096).iter().all(|&b| b == 0), "{mech}");
    }
}

/// With two channels under RoBaRaCoCh a row spans both: the minimum copy granularity is 8 KB,
/// and an aligned 8 KB copy is one FPM per channel.
#[test]
fn rows_interleaved_over_channels_copy_by_fpm_in_each() {
    let c = config(&[
        "dram.preset=\"DDR3_2Gb_x8_1066\"",
        "dram.columns=512",
        "dram.channels=2",
        "bulk.mechanism=\"rowclone\"",
    ]);
    let row = |bank: u64, r: u64| ((r << 3) | bank) << 13;
    let (s, m) = run(
        &c,
        vec![TraceRecord::bulk(0, copy(row(0, 1), row(0, 2), 8192))],
    );
    assert_eq!(s.mcgr_bytes, 8192);
    assert_eq!((s.commands["ACT2"], s.bulk.fpm_bytes), (2, 8192));
    assert_eq!(
        s.bulk.copy_latency.max_ns, 90.0,
        "the channels work in parallel"
    );
    let (_, fresh) = run(&c, vec![]);
    assert_eq!(bytes(&m, row(0, 2), 8192), bytes(&fresh, row(0, 1), 8192));
}

#[test]
fn reserved_rows_are_refused_and_reported() {
    let c = table3("rowclone");
    let o = c.spec().unwrap().organisation;
    let zero_row = at(0, 511);
    let e = sim::run(
        &c,
        &mut vec![TraceRecord::bulk(5, copy(at(0, 1), zero_row, 64))].into_iter(),
        None,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("reserves") && e.contains("row 511"), "{e}");
    let (s, _) = run(&c, vec![]);
    let subarrays = (o.rows / 512) as u64;
    let expected = (subarrays + 1) * 8 * 4096;
    assert_eq!(s.bulk.reserved_bytes, expected);
    assert_eq!(s.bulk.usable_bytes, o.total_bytes() - expected);
    let (s, _) = run(&table3("channel"), vec![]);
    assert_eq!(s.bulk.reserved_bytes, 0);
}

/// Bulk operations among ordinary traffic over many refresh intervals: everything completes,
/// refresh keeps its rate, the bytes are right, and idle skipping changes nothing.
#[test]
fn bulk_operations_mix_with_traffic_and_refresh() {
    let mut records = Vec::new();
    let mut ops = Vec::new();
    for i in 0..40u64 {
        let cycle = i * 1000;
        for j in 0..20u64 {
            let addr = ((i * 7919 + j * 104729) % 4096) * 4096 + (j % 64) * 64;
            let rec = if j % 3 == 0 {
                write(cycle + j, addr)
            } else {
                read(cycle + j, addr)
            };
            records.push(rec);
        }
        let bank = i % 8;
        let op = if i % 4 == 3 {
            init(at(bank, 5000 + i), 4096, 0)
        } else {
            copy(at(bank, 6000 + i), at((bank + i % 2) % 8, 7000 + i), 4096)
        };
        ops.push(op);
        records.push(TraceRecord::bulk(cycle + 10, op));
    }
    for mech in ["channel", "rowclone"] {
        let mut stats = Vec::new();
        for skip in ["true", "false"] {
            let c = config(&[
                "dram.preset=\"DDR3_2Gb_x8_1066\"",
                "dram.columns=512",
                &format!("bulk.mechanism=\"{mech}\""),
                &format!("sim.skip_idle={skip}"),
            ]);
            let t = c.spec().unwrap().timing;
            let (s, m) = run(&c, records.clone());
            assert_eq!(s.bulk.copies + s.bulk.inits, 40, "{mech}");
            assert_eq!(
                s.reads + s.writes - s.bulk.channel_bytes / 64,
                800,
                "{mech}"
            );
            let due = s.mem_cycles / t.n_refi as u64;
            assert!(
                s.refreshes + 1 >= due && s.refreshes <= due,
                "{mech}: {} refreshes in {} cycles",
                s.refreshes,
                s.mem_cycles
            );
            for op in &ops {
                if let BulkKind::Init { .. } = op.kind {
                    assert!(bytes(&m, op.dst, 4096).iter().all(|&b| b == 0), "{mech}");
                }
            }
            stats.push(deterministic_json(&s));
        }
        assert_eq!(stats[0], stats[1], "{mech}: idle skipping changes nothing");
    }
}

/// Part of a row within one bank: all lines to the temporary row, then all back — three row
/// activations, not two per line.
#[test]
fn partial_rows_within_a_bank_go_through_the_temporary_row_together() {
    let (s, m) = only(copy(at(0, 1) + 1024, at(0, 2) + 1024, 2048), "rowclone");
    assert_eq!((s.commands["TRR"], s.commands["ACT"]), (64, 3));
    assert_eq!((s.bulk.psm_bytes, s.bulk.fpm_bytes), (2048, 0));
    assert!(bytes(&m, at(0, 2) + 1024, 2048) == original(at(0, 1) + 1024, 2048));
    assert!(bytes(&m, at(0, 2), 1024) == original(at(0, 2), 1024));
}

#[test]
fn without_fpm_copies_use_psm_and_zeroing_keeps_fpm() {
    let c = config(&[
        "dram.preset=\"DDR3_2Gb_x8_1066\"",
        "dram.columns=512",
        "bulk.mechanism=\"rowclone\"",
        "bulk.fpm=false",
    ]);
    let (s, m) = run(
        &c,
        vec![
            TraceRecord::bulk(0, copy(at(0, 1), at(0, 2), 4096)),
            TraceRecord::bulk(0, init(at(3, 2), 4096, 0)),
        ],
    );
    assert_eq!(
        (s.bulk.fpm_bytes, s.bulk.psm_bytes, s.commands["ACT2"]),
        (4096, 4096, 1)
    );
    assert_eq!(
        s.commands["TRR"], 128,
        "the copy goes through the temporary row"
    );
    assert!(bytes(&m, at(0, 2), 4096) == original(at(0, 1), 4096));
    assert!(bytes(&m, at(3, 2), 4096).iter().all(|&b| b == 0));
}
