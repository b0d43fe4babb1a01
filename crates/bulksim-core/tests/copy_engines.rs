//! Copy engines (issue 16; docs/copy_engines.md) on the copy-engines preset
//! (`configs/copy_engines.toml`): where each policy runs a movblk, and in how many cycles,
//! from the paper's costs (L1 hit 2, port 10 each way, L2 hit 15, memory 100, realign 2);
//! what reaches the L1-L2 port; the bytes a copy leaves; the errors.

mod common;

use bulksim_core::system::{run_workload, stats::SystemStats};
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use std::path::Path;

/// A resident region for the tests' buffers.
const BASE: u64 = 0x100_0000;
const REGION: u64 = 4 << 20;
/// L1: 32 KB, 4 ways of 32-byte lines: lines 8 KB apart share a set.
const L1_SET_STRIDE: u64 = 8 << 10;

fn preset(sets: &[&str]) -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/copy_engines.toml");
    let c = Config::from_file(&path).unwrap().apply_sets(sets).unwrap();
    c.validate().unwrap();
    c
}

fn run(name: &str, config: &Config, body: &[Event]) -> SystemStats {
    let d = common::dir("copy-engines", name);
    let mut events = vec![Event::MapResident {
        vaddr: BASE,
        bytes: REGION,
    }];
    events.extend_from_slice(body);
    events.push(Event::Exit);
    common::write_thread(&d, 0, false, &events);
    let (stats, _) = run_workload(config, &d).unwrap();
    stats
}

/// Loads `addr`'s line into L1 (and L2), then pushes it out of L1: 24 loads at the same
/// page offset in other pages fill both L1 sets its page offset can map to (the L1 set index
/// has one bit above the 4 KB page offset), and spread over many L2 sets.
fn in_l2_only(addr: u64) -> Vec<Event> {
    let mut e = vec![Event::Load(addr), settle()];
    for k in 1..=24 {
        e.push(Event::Load(addr + k * L1_SET_STRIDE + (2 << 20)));
    }
    e
}

/// Waits long enough for every miss in flight to complete.
fn settle() -> Event {
    Event::Compute(4000)
}

struct Case {
    policy: &'static str,
    /// L1 engine busy cycles, L2 engine busy cycles, copies in L1, copies in L2.
    l1_busy: u64,
    l2_busy: u64,
    in_l1: u64,
    in_l2: u64,
}

fn check(name: &str, setup: &[Event], src: u64, dst: u64, cases: &[Case]) {
    for case in cases {
        let config = preset(&[&format!("copy_engine.policy=\"{}\"", case.policy)]);
        let mut body = setup.to_vec();
        body.push(settle());
        body.push(Event::Movblk { src, dst });
        let s = run(&format!("{name}-{}", case.policy), &config, &body);
        let ce = s.copy_engine.expect("engine stats");
        assert_eq!(
            (
                ce.l1.busy_cycles,
                ce.l2.busy_cycles,
                ce.l1.copies,
                ce.l2.copies
            ),
            (case.l1_busy, case.l2_busy, case.in_l1, case.in_l2),
            "{name}, {}: (L1 busy, L2 busy, copies in L1, in L2)",
            case.policy
        );
    }
}

#[test]
fn aligned_source_hit_in_l1_copies_in_l1_in_6_cycles() {
    let (src, dst) = (BASE, BASE + 0x10_0000);
    let cases = [
        Case {
            policy: "ce_l1",
            l1_busy: 6,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
        Case {
            policy: "dce",
            l1_busy: 6,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
        Case {
            policy: "dce_nt",
            l1_busy: 6,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
    ];
    check("aligned-hit", &[Event::Load(src)], src, dst, &cases);
}

#[test]
fn unaligned_source_both_lines_in_l1_copies_in_8_cycles() {
    let (src, dst) = (BASE + 8, BASE + 0x10_0000);
    let cases = [
        Case {
            policy: "ce_l1",
            l1_busy: 8,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
        Case {
            policy: "dce_nt",
            l1_busy: 8,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
    ];
    check(
        "two-hits",
        &[Event::Load(BASE), Event::Load(BASE + 32)],
        src,
        dst,
        &cases,
    );
}

#[test]
fn second_source_line_in_l2_costs_a_miss_of_35_cycles() {
    let (src, dst) = (BASE + 8, BASE + 0x10_0000);
    let mut setup = in_l2_only(BASE + 32);
    setup.push(Event::Load(BASE));
    // 2 + 2 lookups, 10 + 15 + 10 for the miss, 2 realign, 2 write.
    let cases = [
        Case {
            policy: "ce_l1",
            l1_busy: 43,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
        Case {
            policy: "dce",
            l1_busy: 43,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
        Case {
            policy: "dce_nt",
            l1_busy: 43,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
    ];
    check("l2-second", &setup, src, dst, &cases);
}

#[test]
fn second_source_line_in_memory_adds_the_l2_lookup_and_100_cycles() {
    // Source lines BASE + 32 (loaded) and BASE + 64 (another 64-byte L2 line, never loaded).
    let (src, dst) = (BASE + 40, BASE + 0x10_0000);
    // 43 + 100: the miss leaves L2 after its 15-cycle lookup.
    let cases = [
        Case {
            policy: "ce_l1",
            l1_busy: 143,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
        Case {
            policy: "dce_nt",
            l1_busy: 143,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
    ];
    check("memory-second", &[Event::Load(BASE + 32)], src, dst, &cases);
}

#[test]
fn no_source_line_in_l1_goes_down_to_the_l2_engine() {
    let (src, dst) = (BASE + 8, BASE + 0x10_0000);
    // Both source lines in one 64-byte L2 line, in L2 only.
    let mut setup = in_l2_only(BASE);
    setup.extend(in_l2_only(BASE + 32));
    // CE-L1: two L1 misses served by L2: 2 + 35 + 2 + 35 + 2 + 2.
    // DCE: 2 + 2 lookups + 2 dst check + 10 message; L2: one 64-byte line 15 + 2 + 15.
    let cases = [
        Case {
            policy: "ce_l1",
            l1_busy: 78,
            l2_busy: 0,
            in_l1: 1,
            in_l2: 0,
        },
        Case {
            policy: "dce",
            l1_busy: 16,
            l2_busy: 32,
            in_l1: 0,
            in_l2: 1,
        },
        Case {
            policy: "dce_nt",
            l1_busy: 16,
            l2_busy: 32,
            in_l1: 0,
            in_l2: 1,
        },
    ];
    check("l2-both", &setup, src, dst, &cases);
}

#[test]
fn an_l2_copy_across_two_l2_lines_reads_both_and_misses_cost_100_each() {
    // Source 8 bytes before a 64-byte boundary: two L2 lines; aligned: one.
    let src = BASE + 64 - 8;
    let dst = BASE + 0x10_0000;
    let mut setup = in_l2_only(BASE + 32);
    setup.extend(in_l2_only(BASE + 64));
    let cases = [Case {
        policy: "dce_nt",
        l1_busy: 16,
        l2_busy: 47,
        in_l1: 0,
        in_l2: 1,
    }];
    check("l2-two-lines", &setup, src, dst, &cases);
    // Aligned source: 2 + 2 + 10 before the core goes on.
    let cases = [Case {
        policy: "dce_nt",
        l1_busy: 14,
        l2_busy: 32,
        in_l1: 0,
        in_l2: 1,
    }];
    check("l2-aligned", &in_l2_only(BASE + 64), BASE + 64, dst, &cases);
    // Neither line anywhere: 47 + 2 x 100.
    let cases = [
        Case {
            policy: "dce",
            l1_busy: 16,
            l2_busy: 247,
            in_l1: 0,
            in_l2: 1,
        },
        Case {
            policy: "dce_nt",
            l1_busy: 16,
            l2_busy: 247,
            in_l1: 0,
            in_l2: 1,
        },
    ];
    check("l2-cold", &[], src, dst, &cases);
}
