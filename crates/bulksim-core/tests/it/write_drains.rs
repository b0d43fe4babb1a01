//! Write drains (`[controller.write_drain]`): per-rank drains let the other ranks keep serving
//! reads, coordination starts a channel's ranks together, each drain counts the banks it
//! wrote and whether the high watermark started it, `equal_priority` has no drains and
//! `ideal` never issues a write.

use crate::common;
use bulksim_core::config::Config;
use bulksim_core::controller::unavailability::{Cause, Unavailability};
use bulksim_core::mapping::AddressMapper;
use bulksim_core::sim;
use bulksim_core::stats::Stats;
use bulksim_core::workload::trace::TraceRecord;
use common::*;

fn two_ranks(more: &[&str]) -> Config {
    let mut sets = vec![
        "dram.ranks=2",
        "controller.refresh=\"none\"",
        "sim.record_intervals=true",
    ];
    sets.extend_from_slice(more);
    config(&sets)
}

fn mapper(c: &Config) -> AddressMapper {
    AddressMapper::new(&c.spec().unwrap().organisation, "RoBaRaCoCh", false).unwrap()
}

/// Byte address of (rank, bank within the rank as group-major index, row, column).
fn at(m: &AddressMapper, rank: u32, bank: u32, row: u32, column: u32) -> u64 {
    m.encode(&m.locate(0, rank, bank % 4, bank / 4, row, column))
}

fn run(c: &Config, records: Vec<TraceRecord>) -> (Stats, Unavailability) {
    let (stats, router) = sim::run_keeping_memory(c, &mut records.into_iter(), None, None).unwrap();
    let mut u = router.devices[0].channels.unavailability();
    (stats, u.remove(0))
}

/// Ten writes to ten banks of rank 0 (its high watermark under the paper's 10/5), two writes
/// to rank 1, then reads of rank 1's open rows, all at cycle 0.
fn drain_and_reads(m: &AddressMapper) -> Vec<TraceRecord> {
    let mut r: Vec<_> = (0..10).map(|b| write(0, at(m, 0, b, 0, 0))).collect();
    r.extend((0..2).map(|b| write(0, at(m, 1, b, 5, 0))));
    r.extend((0..16).map(|i| read(0, at(m, 1, 8 + i % 4, 1, 8 * (i / 4)))));
    r
}

#[test]
fn a_draining_rank_leaves_the_other_rank_serving_reads() {
    let rank = two_ranks(&["controller.write_drain.scope=\"rank\""]);
    let channel = two_ranks(&[
        "controller.write_drain.high=10",
        "controller.write_drain.low=5",
    ]);
    let m = mapper(&rank);
    let (rs, ru) = run(&rank, drain_and_reads(&m));
    let (cs, cu) = run(&channel, drain_and_reads(&m));
    assert_eq!((rs.commands["WR"], cs.commands["WR"]), (12, 12));
    // Rank scope: rank 0's drain is its own interval, and it wrote its ten banks.
    let drains: Vec<_> = ru
        .intervals
        .iter()
        .filter(|i| i.cause == Cause::WriteDrain)
        .collect();
    assert_eq!(drains[0].rank, Some(0));
    assert_eq!(drains[0].banks_written, Some(10));
    assert_eq!(
        ru.ranks[0].write_drains,
        ru.write_drains - ru.ranks[1].write_drains
    );
    assert!(ru.write_drain_banks_written >= 10);
    // Rank 0's ten writes reached its high watermark: the paper's kind of drain. Rank 1's two
    // drained only once no read waited: a write-serving period, not a watermark drain.
    assert_eq!(drains[0].by_watermark, Some(true));
    let rank1: Vec<_> = drains.iter().filter(|i| i.rank == Some(1)).collect();
    assert!(!rank1.is_empty() && rank1.iter().all(|i| i.by_watermark == Some(false)));
    assert_eq!(
        (ru.watermark_drains, ru.watermark_drain_banks_written),
        (1, 10)
    );
    assert!(ru.write_drains > ru.watermark_drains);
    // Channel scope: the drain is the whole channel's.
    assert!(cu
        .intervals
        .iter()
        .filter(|i| i.cause == Cause::WriteDrain)
        .all(|i| i.rank.is_none()));
    // Rank 1's reads go on during rank 0's drain, so they finish sooner than when the whole
    // channel drains first.
    assert!(
        rs.read_latency.mean_ns < cs.read_latency.mean_ns,
        "rank scope {} ns, channel scope {} ns",
        rs.read_latency.mean_ns,
        cs.read_latency.mean_ns
    );
}

#[test]
fn coordinated_ranks_start_their_drains_together() {
    let m = mapper(&two_ranks(&[]));
    let starts = |coordinate: bool| {
        let c = two_ranks(&[
            "controller.write_drain.scope=\"rank\"",
            if coordinate {
                "controller.write_drain.coordinate=true"
            } else {
                "controller.write_drain.coordinate=false"
            },
        ]);
        let (_, u) = run(&c, drain_and_reads(&m));
        let first = |rank| {
            u.intervals
                .iter()
                .find(|i| i.cause == Cause::WriteDrain && i.rank == Some(rank))
                .map(|i| i.start_mem_cycles)
        };
        (first(0).unwrap(), first(1).unwrap())
    };
    let (r0, r1) = starts(true);
    assert_eq!(r0, r1, "rank 1's two writes drain with rank 0's ten");
    let (r0, r1) = starts(false);
    assert!(r1 > r0, "alone, rank 1 drains once no read waits");
}

#[test]
fn equal_priority_has_no_drains_and_ideal_issues_no_writes() {
    let m = mapper(&two_ranks(&[]));
    let (s, u) = run(
        &two_ranks(&["controller.write_drain.policy=\"equal_priority\""]),
        drain_and_reads(&m),
    );
    assert_eq!((s.commands["WR"], s.commands["RD"]), (12, 16));
    assert_eq!(u.write_drains, 0);
    let (s, u) = run(
        &two_ranks(&["controller.write_drain.policy=\"ideal\""]),
        drain_and_reads(&m),
    );
    assert_eq!((s.writes, s.writes_absorbed, s.commands["WR"]), (12, 12, 0));
    assert_eq!((s.commands["RD"], u.write_drains), (16, 0));
}

#[test]
fn bad_write_drain_keys_name_the_key() {
    for (sets, key) in [
        (
            &[
                "controller.write_drain.high=5",
                "controller.write_drain.low=5",
            ][..],
            "controller.write_drain.low",
        ),
        (
            &["controller.write_drain.low=3"],
            "controller.write_drain.low",
        ),
        (
            &["controller.write_drain.coordinate=true"],
            "controller.write_drain.coordinate",
        ),
        (
            &["controller.write_drain.high=64"],
            "controller.write_drain.high",
        ),
        (
            &["controller.write_drain.scope=\"bank\""],
            "controller.write_drain.scope",
        ),
    ] {
        let err = config_error(sets);
        assert!(err.contains(key), "{sets:?}: {err}");
    }
}
