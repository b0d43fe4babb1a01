//! Unit tests of the controller: FR-FCFS order across the two queues, the owner rule, equal
//! priority and low-priority requests (kept apart from `mod.rs` so that it holds the controller).

use super::*;
use crate::config::{ControllerConfig, DrainPolicy, DrainScope};
use crate::spec::presets::preset;

const LOW: u32 = 1 << 30;

/// Queues a program read (tag 2) of row 1 of bank 0 at cycle `now`, sent at `issued` (fs).
fn read_of_another_row(c: &mut Controller, now: u64, issued: u64) {
    let row1 = DramAddr {
        row: 1,
        ..DramAddr::default()
    };
    c.enqueue(
        RequestKind::Read,
        1 << 20,
        row1,
        now,
        CLIENT_TAG | 2,
        true,
        issued,
    );
}

/// Serves a low-priority read queued first and an ordinary read queued a cycle later,
/// both to rows of one closed bank; the tags in the order they were served.
fn served_order(low_priority: bool) -> Vec<u32> {
    let spec = preset("DDR4_8Gb_x8_1600").unwrap();
    // (The first refresh is tREFI, thousands of cycles, away.)
    let cfg = ControllerConfig::default();
    let mut c = Controller::new(&spec, &cfg, 0);
    if low_priority {
        c.set_low_priority_tag(LOW);
    }
    let bank0 = DramAddr::default();
    c.enqueue(RequestKind::Read, 0, bank0, 0, LOW | 1, false, 0);
    read_of_another_row(&mut c, 1, 0);
    let mut now = 1;
    while c.served.len() < 2 && now < 10_000 {
        now = c.tick(now).max(now + 1);
    }
    c.served.iter().map(|&(tag, _, _)| tag).collect()
}

/// Under `equal_priority`, a write and a read to two rows of one closed bank that arrive
/// in the same cycle: the order they left their senders in (`issued`) decides, whatever
/// the write queue's scope (a rank scope only sizes the queue: no drains hold writes).
fn equal_priority_first(write_issued: u64, read_issued: u64) -> RequestKind {
    let orders = [DrainScope::Channel, DrainScope::Rank]
        .map(|scope| equal_priority_first_in(scope, write_issued, read_issued));
    assert_eq!(orders[0], orders[1], "channel and rank scope");
    orders[0]
}

fn equal_priority_first_in(scope: DrainScope, write_issued: u64, read_issued: u64) -> RequestKind {
    let spec = preset("DDR4_8Gb_x8_1600").unwrap();
    let mut cfg = ControllerConfig::default();
    cfg.write_drain.policy = DrainPolicy::EqualPriority;
    cfg.write_drain.scope = scope;
    let mut c = Controller::new(&spec, &cfg, 0);
    let bank0 = DramAddr::default();
    c.enqueue(
        RequestKind::Write,
        0,
        bank0,
        5,
        CLIENT_TAG | 1,
        true,
        write_issued,
    );
    read_of_another_row(&mut c, 5, read_issued);
    let mut now = 5;
    while c.served.is_empty() && now < 10_000 {
        now = c.tick(now).max(now + 1);
    }
    c.served[0].1
}

/// A lone write under `equal_priority` with per-rank write queues is served at once: the
/// rank scope once held it for a drain that this policy never starts, so a run's writes
/// were never issued and the caches' writebacks piled up (issue 35 item 4).
#[test]
fn equal_priority_serves_writes_under_a_rank_scope() {
    let spec = preset("DDR4_8Gb_x8_1600").unwrap();
    let mut cfg = ControllerConfig::default();
    cfg.write_drain.policy = DrainPolicy::EqualPriority;
    cfg.write_drain.scope = DrainScope::Rank;
    let mut c = Controller::new(&spec, &cfg, 0);
    c.enqueue(
        RequestKind::Write,
        0,
        DramAddr::default(),
        5,
        CLIENT_TAG | 1,
        true,
        5,
    );
    let mut now = 5;
    while c.served.is_empty() && now < 10_000 {
        now = c.tick(now).max(now + 1);
    }
    assert_eq!(c.served.len(), 1, "the write was not served by cycle {now}");
    let t = &spec.timing;
    // ACT, then WR tRCD later: nothing else waits.
    assert_eq!(
        now,
        5 + t.n_rcd as u64 + 1,
        "served at the first cycle it could be"
    );
}

#[test]
fn one_order_of_reads_and_writes_within_a_cycle() {
    assert_eq!(
        equal_priority_first(100, 107),
        RequestKind::Write,
        "the write left first"
    );
    assert_eq!(
        equal_priority_first(107, 100),
        RequestKind::Read,
        "the read left first"
    );
    assert_eq!(
        equal_priority_first(100, 100),
        RequestKind::Read,
        "a tie: the read"
    );
    assert_eq!(
        equal_priority_first(0, 107),
        RequestKind::Read,
        "unknown: the read"
    );
}

#[test]
fn a_low_priority_request_waits_while_another_can_go() {
    assert_eq!(
        served_order(false),
        [LOW | 1, CLIENT_TAG | 2],
        "oldest first"
    );
    assert_eq!(
        served_order(true),
        [CLIENT_TAG | 2, LOW | 1],
        "the copy after"
    );
}
