//! Copy engines (issue 16; docs/copy_engines.md) on the copy-engines preset
//! (`configs/copy_engines.toml`): where each policy runs a movblk, and in how many cycles,
//! from the paper's costs (L1 hit 2, port 10 each way, L2 hit 15, memory 100, realign 2);
//! what reaches the L1-L2 port; the bytes a copy leaves; the errors.

use crate::common;
use common::{config_file, holds, image_virtual};

use bulksim_core::system::{run_workload, stats::SystemStats};
use bulksim_core::workload::program::Event;
use bulksim_core::Config;

/// A resident region for the tests' buffers.
const BASE: u64 = 0x100_0000;
const REGION: u64 = 4 << 20;
/// L1: 32 KB, 4 ways of 32-byte lines: lines 8 KB apart share a set.
const L1_SET_STRIDE: u64 = 8 << 10;

fn preset(sets: &[&str]) -> Config {
    config_file("copy_engines.toml", sets)
}

fn run(name: &str, config: &Config, body: &[Event]) -> SystemStats {
    run_system(name, config, body).0
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

/// Runs `body` and returns the stats with the system, for checks of cache contents and
/// bytes.
fn run_system(
    name: &str,
    config: &Config,
    body: &[Event],
) -> (SystemStats, bulksim_core::system::System) {
    common::run_resident("copy-engines", name, config, (BASE, REGION), body)
}

/// First-level port bytes (addresses included) the copy adds to the set-up's.
fn l1_l2_bytes(name: &str, config: &Config, setup: &[Event], copy: Event) -> u64 {
    let mut body = setup.to_vec();
    body.push(settle());
    let before =
        run(&format!("{name}-setup"), config, &body).cache["l1"].below_bytes_with_addresses;
    body.push(copy);
    let after = run(name, config, &body).cache["l1"].below_bytes_with_addresses;
    after - before
}

#[test]
fn a_96_byte_copy_moves_the_bytes_each_mechanism_implies_over_the_l1_l2_port() {
    // src = aligned + 8: source lines A (clean in L1), A+32, A+64, A+96 (in L2 only); the
    // destination is uncached. A line crossing the port is 32 + 4 address bytes, a message 8.
    let a = BASE;
    let mut setup = in_l2_only(a + 32);
    setup.extend(in_l2_only(a + 64));
    setup.extend(in_l2_only(a + 96));
    setup.push(settle());
    setup.push(Event::Load(a));
    let copy = Event::Memcpy {
        src: a + 8,
        dst: BASE + 0x10_0000,
        bytes: 96,
    };
    let cases = [
        // Three source fills and three destination fills (write-allocate).
        ("software", "none", 6 * 36),
        // Three source fills; destinations allocated without a fetch.
        ("movblk", "ce_l1", 3 * 36),
        // Each movblk finds the line the previous one allocated: all in L1, three fills.
        ("movblk", "dce", 3 * 36),
        // The first runs in L1 (one fill to the engine only); two go down as messages.
        ("movblk", "dce_nt", 36 + 2 * 8),
        // No whole 4 KB chunk: as dce_nt (over DRAM: the DDR3 preset).
        ("movblk", "dce_rowclone", 36 + 2 * 8),
    ];
    for (memcpy, policy, bytes) in cases {
        let sets = [
            format!("system.memcpy=\"{memcpy}\""),
            format!("copy_engine.policy=\"{policy}\""),
        ];
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let config = if policy == "dce_rowclone" {
            config_file("copy_engines_ddr3.toml", &sets)
        } else {
            preset(&sets)
        };
        assert_eq!(
            l1_l2_bytes(&format!("96-{policy}"), &config, &setup, copy),
            bytes,
            "{memcpy} / {policy}"
        );
    }
}

/// The network stand-in's copy: a 1500-byte payload right after a 52-byte header whose line
/// the protocol work read (in L1); the rest of the slot in L2 only; an aligned destination.
fn chain_setup() -> (Vec<Event>, Event) {
    let slot = BASE;
    let setup = vec![
        Event::LoadRange {
            vaddr: slot,
            bytes: 2048,
        },
        settle(),
        // 64 KB of other lines push the slot out of the 32 KB L1.
        Event::LoadRange {
            vaddr: BASE + (2 << 20),
            bytes: 64 << 10,
        },
        settle(),
        // The protocol work reads the header: its 52 bytes end in the payload's first line.
        Event::LoadRange {
            vaddr: slot,
            bytes: 52,
        },
    ];
    let copy = Event::Memcpy {
        src: slot + 52,
        dst: BASE + 0x10_0000,
        bytes: 1500,
    };
    (setup, copy)
}

#[test]
fn chain_effect_dce_runs_every_movblk_in_l1_dce_nt_all_but_the_first_in_l2() {
    let (mut body, copy) = chain_setup();
    body.push(settle());
    body.push(copy);
    for (policy, in_l1, in_l2) in [("ce_l1", 46, 0), ("dce", 46, 0), ("dce_nt", 1, 45)] {
        let config = preset(&[
            "system.memcpy=\"movblk\"",
            &format!("copy_engine.policy=\"{policy}\""),
        ]);
        let s = run(&format!("chain-{policy}"), &config, &body);
        let ce = s.copy_engine.unwrap();
        assert_eq!(
            ce.movblks, 46,
            "1500 B from an aligned dst: 46 blocks and a tail"
        );
        assert_eq!((ce.l1.copies, ce.l2.copies), (in_l1, in_l2), "{policy}");
    }
}

#[test]
fn dce_nt_leaves_fetched_source_lines_in_no_cache_dce_allocates_them() {
    // Both source lines (one 64-byte L2 line) in memory: the copy runs in L2.
    let (src, dst) = (BASE + 0x2_0008, BASE + 0x10_0000);
    for (policy, allocated) in [("dce", true), ("dce_nt", false)] {
        let config = preset(&[&format!("copy_engine.policy=\"{policy}\"")]);
        let (s, sys) = run_system(
            &format!("alloc-l2-{policy}"),
            &config,
            &[Event::Movblk { src, dst }],
        );
        assert_eq!(s.copy_engine.unwrap().l2.copies, 1);
        assert_eq!(holds(&sys, 1, src), allocated, "{policy}: source in L2");
        assert!(
            !holds(&sys, 0, src),
            "{policy}: an L2 copy brings nothing into L1"
        );
        assert!(
            holds(&sys, 1, dst),
            "{policy}: the destination is written in L2"
        );
    }
    // First line in L1, second in memory: the copy runs in L1; DCE fills the second line
    // into L1 (and L2 on its way), DCE-NT into neither.
    let src = BASE + 0x3_0028;
    for (policy, allocated) in [("dce", true), ("dce_nt", false)] {
        let config = preset(&[&format!("copy_engine.policy=\"{policy}\"")]);
        let body = [
            Event::Load(BASE + 0x3_0020),
            settle(),
            Event::Movblk { src, dst },
        ];
        let (s, sys) = run_system(&format!("alloc-l1-{policy}"), &config, &body);
        assert_eq!(s.copy_engine.unwrap().l1.copies, 1);
        assert_eq!(
            holds(&sys, 0, BASE + 0x3_0040),
            allocated,
            "{policy}: in L1"
        );
        assert_eq!(
            holds(&sys, 1, BASE + 0x3_0040),
            allocated,
            "{policy}: in L2"
        );
        assert!(
            holds(&sys, 0, dst),
            "{policy}: the destination is written in L1"
        );
        assert!(
            !holds(&sys, 1, dst),
            "an L1 copy leaves the destination's L2 line alone"
        );
    }
}

#[test]
fn an_l2_copy_discards_a_dirty_l1_destination_and_a_younger_load_sees_the_copy() {
    let (src, dst) = (BASE + 0x4_0000, BASE + 0x10_0000);
    // Source words written by the program, then pushed out of L1 into L2.
    let mut body: Vec<Event> = (0..4).map(|k| Event::Store(src + 8 * k)).collect();
    body.push(settle());
    body.push(Event::LoadRange {
        vaddr: BASE + (2 << 20),
        bytes: 64 << 10,
    });
    body.push(settle());
    // The destination dirty in L1.
    body.push(Event::Store(dst));
    body.push(settle());
    let config = preset(&["copy_engine.policy=\"dce_nt\""]);
    let written_before = run("dirty-dst-setup", &config, &body).cache["l1"]
        .below
        .write_bytes
        .program;
    body.push(Event::Movblk { src, dst });
    body.push(Event::Load(dst));
    let (s, sys) = run_system("dirty-dst", &config, &body);
    let ce = s.copy_engine.unwrap();
    assert_eq!(
        (ce.l2.copies, ce.l1.dst_discards, ce.l1.dst_discards_dirty),
        (1, 1, 1)
    );
    let l1 = &s.cache["l1"];
    assert_eq!(
        l1.below.write_bytes.program, written_before,
        "the dirty destination is not written back"
    );
    let pid = sys.pid_of(0).unwrap();
    let copied = sys.read_virtual(pid, dst, 32).unwrap();
    assert_eq!(copied, sys.read_virtual(pid, src, 32).unwrap());
    assert!(copied.iter().any(|&b| b != 0), "the program's words");
    assert!(
        holds(&sys, 0, dst),
        "the load brought the copied line into L1"
    );
}

/// A random program over a 256 KB area: stores that give its words distinct values, loads
/// and sweeps that leave lines clean or dirty in L1, in L2 or in memory, and copies of random
/// sizes and alignments (sources and destinations never overlapping within a copy).
fn random_copies(seed: u64) -> Vec<Event> {
    use bulksim_core::rng::SplitMix64;
    let mut rng = SplitMix64::new(seed);
    let area = 256 << 10;
    let mut body = Vec::new();
    for _ in 0..600 {
        body.push(Event::Store(BASE + rng.below(area / 8) * 8));
    }
    for _ in 0..60 {
        match rng.below(6) {
            0 => body.push(Event::LoadRange {
                vaddr: BASE + (2 << 20),
                bytes: 64 << 10,
            }),
            1 => body.push(Event::Load(BASE + rng.below(area))),
            2 => body.push(Event::Store(BASE + rng.below(area / 8) * 8)),
            _ => {}
        }
        let long = rng.below(4) == 0;
        let bytes = 1 + rng.below(if long { 2000 } else { 200 });
        let (src, dst) = loop {
            let s = BASE + rng.below(area - bytes);
            let d = BASE + rng.below(area - bytes);
            if s + bytes <= d || d + bytes <= s {
                break (s, d);
            }
        };
        body.push(Event::Memcpy { src, dst, bytes });
        if rng.below(3) == 0 {
            body.push(Event::Load(dst + rng.below(bytes)));
        }
    }
    body
}

#[test]
fn random_copies_leave_the_same_bytes_under_every_mechanism() {
    let area = 256 << 10;
    // Dirty cached destination lines the non-temporal stores wrote back and dropped.
    let mut nt_dropped_dirty = 0;
    for seed in [1, 2, 3] {
        let body = random_copies(seed);
        // The reference: each memcpy as one bulk operation through the core's copy loop.
        let reference = preset(&["system.memcpy=\"bulk\""]);
        let (_, sys) = run_system(&format!("random-{seed}-bulk"), &reference, &body);
        let pid = sys.pid_of(0).unwrap();
        let expected = sys.read_virtual(pid, BASE, area).unwrap();
        assert!(expected.iter().filter(|&&b| b != 0).count() > 1000);
        // (memcpy, policy, partial line, L2 KB: a 64 KB L2 also evicts partially valid
        // lines during the run; pipelined engines or one movblk at a time)
        let variants = [
            ("software", "none", "merge", 1024, true),
            ("movblk", "ce_l1", "merge", 1024, true),
            ("movblk", "dce", "merge", 1024, true),
            ("movblk", "dce_nt", "merge", 1024, true),
            ("movblk", "dce", "fetch", 1024, true),
            ("movblk", "dce_nt", "fetch", 1024, true),
            ("movblk", "dce", "sector", 1024, true),
            ("movblk", "dce_nt", "sector", 1024, true),
            ("movblk", "dce_nt", "sector", 64, true),
            ("movblk", "ce_l1", "merge", 1024, false),
            ("movblk", "dce_nt", "sector", 64, false),
            ("software_nt", "none", "merge", 1024, true),
            // One write-combining buffer: the head's ordinary stores and cached copies of
            // the destination's lines meet the non-temporal ones.
            ("software_nt", "none", "merge", 64, false),
        ];
        for (memcpy, policy, partial, l2_kb, pipeline) in variants {
            let buffers = if l2_kb == 64 { 1 } else { 4 };
            let config = preset(&[
                &format!("memcpy.wc_buffers={buffers}"),
                &format!("system.memcpy=\"{memcpy}\""),
                &format!("copy_engine.policy=\"{policy}\""),
                &format!("copy_engine.partial_line=\"{partial}\""),
                &format!("cache.level.1.size_kb={l2_kb}"),
                &format!("copy_engine.pipeline={pipeline}"),
            ]);
            let name = format!("random-{seed}-{policy}-{partial}-{l2_kb}kb-pipeline-{pipeline}");
            let (s, mut sys) = run_system(&name, &config, &body);
            let pid = sys.pid_of(0).unwrap();
            let got = sys.read_virtual(pid, BASE, area).unwrap();
            let first = got.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(first, None, "{name}: first differing byte offset");
            // Flushed, memory holds the same bytes (write-backs of partially valid lines
            // write only their valid sectors).
            sys.flush_caches();
            let flushed = image_virtual(&sys, BASE, area);
            let first = flushed.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(first, None, "{name}: flushed, first differing byte offset");
            if partial == "sector" && policy == "dce_nt" {
                // (DCE runs every copy of this program in L1: no line is partially valid.)
                let l2 = &s.cache["l2"];
                assert!(
                    l2.sector_misses > 0,
                    "{name}: some lookups found a partially valid line"
                );
            }
            if memcpy == "software_nt" {
                let wc = s.write_combining.as_ref().expect("write-combining stats");
                assert!(wc.full_writes > 100, "{name}: {wc:?}");
                nt_dropped_dirty += wc.dirty_write_backs;
            }
            if let Some(ce) = s.copy_engine {
                assert!(ce.movblks > 100, "{name}: the copies used movblks");
                if policy == "dce_nt" {
                    assert!(
                        ce.l2.copies > 0 && ce.l1.copies > 0,
                        "{name}: both levels copied"
                    );
                }
            }
        }
    }
    assert!(
        nt_dropped_dirty > 0,
        "software_nt met no dirty destination line"
    );
}

/// The valid-sector bits of the line holding `va` in core 0's array at `level`, if there.
fn sectors(sys: &bulksim_core::system::System, level: usize, va: u64) -> Option<u32> {
    let pid = sys.pid_of(0).unwrap();
    let pa = sys.os().lookup(pid, va).unwrap();
    let l = &sys.caches().levels[level];
    let a = &l.arrays[l.array_of[0]];
    a.probe(pa / l.line_bytes).map(|w| a.sectors(w).mask)
}

/// An L2 copy (DCE-NT; the source in memory only) into the second 32-byte half of a 64-byte
/// line no level holds.
const SECTOR_SRC: u64 = BASE + 0x2_0000;
const SECTOR_DST: u64 = BASE + 0x10_0020;
/// The other half of the destination's L2 line.
const SECTOR_OTHER: u64 = BASE + 0x10_0000;

/// The preset with a 64 KB L2 (128 sets of 8 ways), DCE-NT and `partial_line`.
fn sector_preset(partial: &str) -> Config {
    preset(&[
        "copy_engine.policy=\"dce_nt\"",
        &format!("copy_engine.partial_line=\"{partial}\""),
        "cache.level.1.size_kb=64",
    ])
}

/// A 256 KB sweep of clean lines: pushes every line out of L1 and the 64 KB L2.
fn sweep() -> Vec<Event> {
    vec![
        Event::LoadRange {
            vaddr: BASE + (2 << 20),
            bytes: 256 << 10,
        },
        settle(),
    ]
}

/// Memory gets the program's words in the source and in the destination line's other half
/// (pages start zeroed), and no cache holds either.
fn sector_setup() -> Vec<Event> {
    let mut e: Vec<Event> = (0..4)
        .flat_map(|k| {
            [
                Event::Store(SECTOR_SRC + 8 * k),
                Event::Store(SECTOR_OTHER + 8 * k),
            ]
        })
        .collect();
    e.push(settle());
    e.extend(sweep());
    e.push(Event::Movblk {
        src: SECTOR_SRC,
        dst: SECTOR_DST,
    });
    e.push(settle());
    e
}

/// The bytes at [SECTOR_OTHER, SECTOR_OTHER + 32) after the set-up's stores.
fn sector_other_bytes() -> Vec<u8> {
    let mut body = sector_setup();
    body.pop();
    body.pop(); // no copy
    let (_, sys) = run_system("sector-other", &sector_preset("merge"), &body);
    let pid = sys.pid_of(0).unwrap();
    let other = sys.read_virtual(pid, SECTOR_OTHER, 32).unwrap();
    assert_eq!(image_virtual(&sys, SECTOR_OTHER, 32), other, "in memory");
    assert!(other.iter().any(|&b| b != 0), "the program's words");
    other
}

#[test]
fn sector_an_l2_copy_into_a_line_l2_lacks_allocates_one_valid_sector_without_a_fetch() {
    let body = sector_setup();
    // (mode, L2 busy cycles, valid sectors of the destination's line)
    let mut read = Vec::new();
    for (partial, busy, valid) in [
        // 15 source read + 100 memory + 2 realign + 15 write.
        ("sector", 132, 0b10),
        ("merge", 132, 0b11),
        // The destination's line is read from memory first.
        ("fetch", 232, 0b11),
    ] {
        let (s, sys) = run_system(
            &format!("sector-write-{partial}"),
            &sector_preset(partial),
            &body,
        );
        let ce = s.copy_engine.unwrap();
        assert_eq!(
            (ce.l2.copies, ce.l2.source_fetches, ce.l2.busy_cycles),
            (1, 1, busy),
            "{partial}: (L2 copies, source fetches, busy cycles)"
        );
        read.push(s.cache["l2"].below.read_bytes.total());
        assert_eq!(
            sectors(&sys, 1, SECTOR_DST),
            Some(valid),
            "{partial}: valid sectors"
        );
        assert_eq!(s.cache["l2"].sector_misses, 0);
        let pid = sys.pid_of(0).unwrap();
        let copied = sys.read_virtual(pid, SECTOR_DST, 32).unwrap();
        assert_eq!(
            copied,
            sys.read_virtual(pid, SECTOR_SRC, 32).unwrap(),
            "{partial}"
        );
        assert!(copied.iter().any(|&b| b != 0), "the program's words");
    }
    // Sector reads no more below L2 than merge (the source line only); fetch one line more.
    assert_eq!(
        (read[0], read[2]),
        (read[1], read[1] + 64),
        "bytes read below L2"
    );
}

#[test]
fn sector_a_load_of_the_invalid_half_misses_in_l2_fetches_and_merges() {
    let other = sector_other_bytes();
    let mut body = sector_setup();
    body.push(Event::Load(SECTOR_OTHER));
    body.push(settle());
    let (mut misses, mut read) = (Vec::new(), Vec::new());
    for (partial, sector_misses) in [("sector", 1), ("merge", 0)] {
        let (s, mut sys) = run_system(
            &format!("sector-load-{partial}"),
            &sector_preset(partial),
            &body,
        );
        let l2 = &s.cache["l2"];
        assert_eq!(l2.sector_misses, sector_misses, "{partial}: sector misses");
        misses.push(l2.misses);
        read.push(l2.below.read_bytes.total());
        assert_eq!(
            sectors(&sys, 1, SECTOR_DST),
            Some(0b11),
            "{partial}: now whole"
        );
        let pid = sys.pid_of(0).unwrap();
        assert_eq!(
            sys.read_virtual(pid, SECTOR_OTHER, 32).unwrap(),
            other,
            "{partial}: the load got memory's bytes"
        );
        let copied = sys.read_virtual(pid, SECTOR_SRC, 32).unwrap();
        assert_eq!(sys.read_virtual(pid, SECTOR_DST, 32).unwrap(), copied);
        // Flushed, L2's merged (dirty, whole) line leaves memory's half and the copy.
        sys.flush_caches();
        assert_eq!(image_virtual(&sys, SECTOR_OTHER, 32), other, "{partial}");
        assert_eq!(image_virtual(&sys, SECTOR_DST, 32), copied, "{partial}");
    }
    // Under sector the load's fill missed in L2 and fetched the line; under merge it hit.
    assert_eq!(misses[0], misses[1] + 1, "the sector miss is an L2 miss");
    assert_eq!(read[0], read[1] + 64, "the line was fetched from memory");
}

#[test]
fn sector_an_engine_read_of_the_invalid_half_misses_in_l2_fetches_and_merges() {
    let other = sector_other_bytes();
    // A second L2 copy whose source is the invalid half (not in L1: it goes down).
    let dst = BASE + 0x10_0040;
    let mut body = sector_setup();
    body.push(Event::Movblk {
        src: SECTOR_OTHER,
        dst,
    });
    body.push(settle());
    // (mode, sector misses, L2 source fetches, L2 busy cycles: 132 for the first copy, then
    // 132 with a source fetch or 32 with a hit)
    for (partial, sector_misses, fetches, busy) in
        [("sector", 1, 2, 132 + 132), ("merge", 0, 1, 132 + 32)]
    {
        let (s, sys) = run_system(
            &format!("sector-engine-read-{partial}"),
            &sector_preset(partial),
            &body,
        );
        let ce = s.copy_engine.unwrap();
        assert_eq!(
            (
                s.cache["l2"].sector_misses,
                ce.l2.copies,
                ce.l2.source_fetches,
                ce.l2.busy_cycles
            ),
            (sector_misses, 2, fetches, busy),
            "{partial}: (sector misses, L2 copies, source fetches, busy cycles)"
        );
        let pid = sys.pid_of(0).unwrap();
        assert_eq!(sys.read_virtual(pid, dst, 32).unwrap(), other, "{partial}");
        assert_eq!(
            sectors(&sys, 1, SECTOR_DST),
            Some(0b11),
            "{partial}: merged by the fetch"
        );
    }
}

#[test]
fn sector_an_evicted_partial_line_writes_back_only_its_valid_half() {
    let other = sector_other_bytes();
    let mut body = sector_setup();
    body.extend(sweep());
    // (mode, bytes L2 wrote below for copies: the destination line's valid part)
    for (partial, written) in [("sector", 32), ("merge", 64)] {
        let (s, mut sys) = run_system(
            &format!("sector-evict-{partial}"),
            &sector_preset(partial),
            &body,
        );
        assert!(sectors(&sys, 1, SECTOR_DST).is_none(), "{partial}: evicted");
        assert_eq!(
            s.cache["l2"].below.write_bytes.copy, written,
            "{partial}: bytes written below L2"
        );
        let pid = sys.pid_of(0).unwrap();
        let copied = sys.read_virtual(pid, SECTOR_SRC, 32).unwrap();
        // Memory has the copy and kept its own other half.
        assert_eq!(image_virtual(&sys, SECTOR_DST, 32), copied, "{partial}");
        assert_eq!(image_virtual(&sys, SECTOR_OTHER, 32), other, "{partial}");
        sys.flush_caches();
        assert_eq!(
            image_virtual(&sys, SECTOR_OTHER, 32),
            other,
            "{partial}: flushed"
        );
    }
}

#[test]
fn movblk_and_config_errors_name_the_record_or_key() {
    let config = preset(&["copy_engine.policy=\"dce\""]);
    let try_run = |name: &str, config: &Config, ev: Event| {
        let d = common::dir("copy-engines", name);
        let events = [
            Event::MapResident {
                vaddr: BASE,
                bytes: REGION,
            },
            ev,
            Event::Exit,
        ];
        common::write_thread(&d, 0, false, &events);
        run_workload(config, &d)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = try_run(
        "unaligned",
        &config,
        Event::Movblk {
            src: BASE,
            dst: BASE + 0x1008,
        },
    );
    assert!(
        e.contains("thread-0.trace:3: movblk dst 0x1001008 not aligned to the 32-byte L1 line"),
        "{e}"
    );
    let e = try_run(
        "overlap",
        &config,
        Event::Movblk {
            src: BASE + 16,
            dst: BASE + 32,
        },
    );
    assert!(
        e.contains("thread-0.trace:3: movblk source 0x1000010 and destination 0x1000020 overlap"),
        "{e}"
    );
    let e = try_run(
        "unmapped",
        &config,
        Event::Movblk {
            src: 0x7000_0000,
            dst: BASE,
        },
    );
    assert!(e.contains("thread-0.trace:3:"), "{e}");
    let none = preset(&[]);
    let e = try_run(
        "no-engine",
        &none,
        Event::Movblk {
            src: BASE,
            dst: BASE + 64,
        },
    );
    assert!(
        e.contains("thread-0.trace:3: movblk needs a copy engine: set copy_engine.policy"),
        "{e}"
    );
    for (sets, key) in [
        (
            vec!["system.memcpy=\"movblk\""],
            "system.memcpy: movblk needs a copy engine",
        ),
        (
            vec!["copy_engine.policy=\"dce\""],
            "copy_engine.policy: dce puts engines beside 2 cache levels; the hierarchy has 1",
        ),
        (
            vec!["copy_engine.fifo_depth=0"],
            "copy_engine.fifo_depth: 0 is out of range",
        ),
        (
            vec!["memcpy.word_bytes=3"],
            "memcpy.word_bytes: 3; expected 1, 2, 4 or 8",
        ),
        (vec!["copy_engine.policy=\"fast\""], "copy_engine.policy"),
        (
            vec!["cache.address_bytes=0"],
            "cache.address_bytes: 0 is out of range",
        ),
    ] {
        let e = common::config_error(&sets);
        assert!(e.contains(key), "{sets:?}: {e}");
    }
}

#[test]
fn accesses_wait_while_an_engine_holds_its_cache() {
    let (src, dst) = (BASE, BASE + 0x10_0000);
    let other = BASE + 0x8_0000;
    // An L1 copy (6 cycles) locks L1: a load of another line right after waits for it.
    let config = preset(&["copy_engine.policy=\"dce\""]);
    let body = [
        Event::Load(src),
        Event::Load(other),
        settle(),
        Event::Movblk { src, dst },
        Event::Load(other),
    ];
    let ce = run("lock-l1", &config, &body).copy_engine.unwrap();
    assert_eq!(ce.l1.copies, 1);
    assert!(ce.l1.lock_stall_cycles >= 1, "{ce:?}");
    assert_eq!(ce.l2.lock_stall_cycles, 0);
    // An L2 copy of memory-resident lines (32 + 100 cycles in L2) locks L2 once its message
    // arrives: an L1 miss to another line in L2 waits at the port.
    let mut body = in_l2_only(other);
    body.push(settle());
    body.push(Event::Movblk {
        src: BASE + 0x2_0000,
        dst,
    });
    body.push(Event::Compute(80));
    body.push(Event::Load(other));
    let ce = run("lock-l2", &config, &body).copy_engine.unwrap();
    assert_eq!(ce.l2.copies, 1);
    assert!(ce.l2.lock_stall_cycles >= 1, "{ce:?}");
}

/// L1 engine busy cycles and copies for `movblks` after loading `sources` into L1, with
/// `copy_engine.pipeline` on or off.
fn l1_busy(name: &str, sources: &[u64], movblks: &[(u64, u64)], pipeline: bool) -> (u64, u64) {
    let config = preset(&[
        "copy_engine.policy=\"ce_l1\"",
        &format!("copy_engine.pipeline={pipeline}"),
    ]);
    let mut body: Vec<Event> = sources.iter().map(|&a| Event::Load(a)).collect();
    body.push(settle());
    body.extend(movblks.iter().map(|&(src, dst)| Event::Movblk { src, dst }));
    let ce = run(&format!("{name}-{pipeline}"), &config, &body)
        .copy_engine
        .unwrap();
    (ce.l1.busy_cycles, ce.l1.copies)
}

#[test]
fn a_pipelined_engine_reads_the_next_sources_while_it_writes() {
    // Four aligned copies of lines in L1 (6 cycles each: lookup 2, realign 2, write 2). One
    // at a time: 24 cycles. Pipelined, each next lookup overlaps the realignment and write
    // before it: 2 + 4 x 4 = 18.
    let sources: Vec<u64> = (0..4).map(|k| BASE + 32 * k).collect();
    let movblks: Vec<(u64, u64)> = sources
        .iter()
        .enumerate()
        .map(|(k, &src)| (src, BASE + 0x10_0000 + 32 * k as u64))
        .collect();
    assert_eq!(l1_busy("pipe", &sources, &movblks, false), (24, 4));
    assert_eq!(l1_busy("pipe", &sources, &movblks, true), (18, 4));
}

#[test]
fn a_movblk_reading_the_line_the_one_before_writes_waits_for_it() {
    // The second copy's source is the first's destination: it starts once that line is
    // written (6 cycles) and finds it in L1 (6 more), pipelined or not; starting earlier it
    // would miss the line and fetch it from L2.
    let (src, mid, dst) = (BASE, BASE + 0x10_0000, BASE + 0x20_0000);
    let movblks = [(src, mid), (mid, dst)];
    for pipeline in [false, true] {
        assert_eq!(l1_busy("hazard", &[src], &movblks, pipeline), (12, 2));
    }
    let config = preset(&["copy_engine.policy=\"ce_l1\""]);
    let mut body: Vec<Event> = (0..4).map(|k| Event::Store(src + 8 * k)).collect();
    body.push(settle());
    body.extend(movblks.iter().map(|&(src, dst)| Event::Movblk { src, dst }));
    let (_, sys) = run_system("hazard-bytes", &config, &body);
    let pid = sys.pid_of(0).unwrap();
    let copied = sys.read_virtual(pid, dst, 32).unwrap();
    assert_eq!(copied, sys.read_virtual(pid, src, 32).unwrap());
    assert!(copied.iter().any(|&b| b != 0), "the program's words");
}

#[test]
fn a_dirty_victim_is_written_back_first_when_the_level_waits_for_it() {
    // The destination's L1 sets (page offset 0) full of dirty lines; the source elsewhere.
    let (src, dst) = (BASE + 0x40, BASE + 0x10_0000);
    let mut setup: Vec<Event> = (1..=24)
        .map(|k| Event::Store(BASE + (2 << 20) + k * L1_SET_STRIDE))
        .collect();
    setup.push(settle());
    setup.push(Event::Load(src));
    for (wait, busy) in [("true", 6 + 10 + 15), ("false", 6)] {
        let config = preset(&[
            "copy_engine.policy=\"ce_l1\"",
            &format!("cache.level.0.writeback_delays_miss={wait}"),
        ]);
        let mut body = setup.clone();
        body.push(settle());
        body.push(Event::Movblk { src, dst });
        let ce = run(&format!("victim-{wait}"), &config, &body)
            .copy_engine
            .unwrap();
        assert_eq!(ce.l1.busy_cycles, busy, "writeback_delays_miss = {wait}");
    }
    // A load miss into those sets waits 10 + 15 cycles longer for the same reason: the
    // cycles the load adds to the run (the set-up's own misses also push out dirty lines).
    let mut cycles = Vec::new();
    for wait in ["true", "false"] {
        // No store queue: the set-up's stores never hold up dispatch, so only the last
        // load's latency differs.
        let config = preset(&[
            &format!("cache.level.0.writeback_delays_miss={wait}"),
            "core.store_queue=0",
        ]);
        let mut body = setup.clone();
        body.push(settle());
        let before = run(&format!("victim-noload-{wait}"), &config, &body).core_cycles;
        body.push(Event::Load(dst));
        let after = run(&format!("victim-load-{wait}"), &config, &body).core_cycles;
        cycles.push(after - before);
    }
    assert_eq!(cycles[0] - cycles[1], 10 + 15);
}

/// `core.lsq`: loads, stores and movblks hold a queue entry from dispatch until they retire.
/// Eight loads of lines in memory (137 cycles each: L1 2, port 10, L2 15, memory 100, port
/// 10) overlap in the MSHRs with no limit, and go one at a time with one entry.
#[test]
fn the_load_store_queue_bounds_the_misses_in_flight() {
    let loads: Vec<Event> = (0..8)
        .map(|k| Event::Load(BASE + 0x4_0000 + k * 4096))
        .collect();
    let cycles = |lsq: u32| {
        let config = preset(&[&format!("core.lsq={lsq}")]);
        run(&format!("lsq-{lsq}"), &config, &loads).core_cycles
    };
    let (free, one, two) = (cycles(0), cycles(1), cycles(2));
    // One entry: each load dispatches when the one before retires, a cycle after its data.
    assert!((8 * 137..=8 * 139 + 4).contains(&one), "{one}");
    assert!(free < 137 + 12, "{free}");
    // Two entries: four rounds of two overlapping misses.
    assert!((4 * 137..=4 * 139 + 4).contains(&two), "{two}");
}
