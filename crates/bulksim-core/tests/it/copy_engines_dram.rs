//! Copy engines over DRAM (issue 16; docs/copy_engines.md), on
//! `configs/copy_engines_ddr3.toml`: copy-on-write copies run by the memcpy routines
//! (`system.memcpy` software and movblk), and `copy_engine.policy = "dce_rowclone"`, which
//! hands whole destination chunks of the movblk memcpy to RowClone when no cache holds their
//! source: where each copy runs, what crosses the L1-L2 port and the channel, the bytes it
//! leaves, and the config errors.

use crate::common;

use bulksim_core::system::{run_workload, stats::SystemStats, System};
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use std::path::Path;

const BASE: u64 = 0x100_0000;
const REGION: u64 = 4 << 20;
const PAGE: u64 = 4096;

fn preset(sets: &[&str]) -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/copy_engines_ddr3.toml");
    let c = Config::from_file(&path).unwrap().apply_sets(sets).unwrap();
    c.validate().unwrap();
    c
}

/// `system.memcpy` and `copy_engine.policy` of a mechanism.
fn mechanism(memcpy: &str, policy: &str, more: &[&str]) -> Config {
    let mut sets = vec![
        format!("system.memcpy=\"{memcpy}\""),
        format!("copy_engine.policy=\"{policy}\""),
    ];
    sets.extend(more.iter().map(|s| s.to_string()));
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    preset(&sets)
}

fn run_one(name: &str, config: &Config, body: &[Event]) -> (SystemStats, System) {
    common::run_resident("copy-engines-dram", name, config, (BASE, REGION), body)
}

/// A parent whose two resident pages the child writes after a fork; `before` runs in the
/// parent before the fork.
fn run_fork(name: &str, config: &Config, before: &[Event]) -> (SystemStats, System) {
    let d = common::dir("copy-engines-dram", name);
    // Populated: the frames exist (zero) before the fork, in no cache.
    let mut parent = vec![Event::MapPopulated {
        vaddr: BASE,
        bytes: 2 * PAGE,
    }];
    parent.extend_from_slice(before);
    parent.extend([
        Event::Compute(4000),
        Event::Fork(1),
        Event::Wait,
        Event::Exit,
    ]);
    common::write_thread(&d, 0, false, &parent);
    common::write_thread(&d, 1, true, &[Event::Store(BASE + 8), Event::Exit]);
    run_workload(config, &d).unwrap()
}

/// Thread 0's bytes of [BASE, BASE + bytes), page by page (None: never mapped).
fn image(sys: &System, bytes: u64) -> Vec<Option<Vec<u8>>> {
    let pid = sys.pid_of(0).unwrap();
    (0..bytes / PAGE)
        .map(|p| sys.read_virtual(pid, BASE + p * PAGE, PAGE as usize))
        .collect()
}

fn copy_bytes_over_l1_port(s: &SystemStats) -> u64 {
    let below = &s.cache["l1"].below;
    below.read_bytes.copy + below.write_bytes.copy
}

#[test]
fn a_cold_copy_on_write_copy_runs_in_dram_by_fpm_and_moves_nothing_over_the_port() {
    let (s, _) = run_fork("cow-cold", &mechanism("movblk", "dce_rowclone", &[]), &[]);
    assert_eq!(s.os.cow_copies, 1);
    let ce = s.copy_engine.as_ref().unwrap();
    assert_eq!(
        (ce.dram.chunks, ce.dram.copies, ce.dram.blocks, ce.movblks),
        (1, 1, PAGE / 32, 0),
        "one page handed down whole: {ce:?}"
    );
    // subarray_aware puts the child's frame in the source's subarray: FPM.
    assert_eq!(s.memory.bulk.fpm_bytes, PAGE);
    assert_eq!(copy_bytes_over_l1_port(&s), 0);
    // dce_nt copies the same page by 128 movblks over the caches.
    let (s, _) = run_fork("cow-cold-nt", &mechanism("movblk", "dce_nt", &[]), &[]);
    let ce = s.copy_engine.as_ref().unwrap();
    assert_eq!((ce.dram.chunks, ce.movblks), (0, PAGE / 32));
    assert_eq!(s.memory.bulk.fpm_bytes, 0);
}

#[test]
fn one_cached_source_line_keeps_the_copy_in_the_caches() {
    let config = mechanism("movblk", "dce_rowclone", &[]);
    let (s, _) = run_fork("cow-one-line", &config, &[Event::Load(BASE + 1000)]);
    let ce = s.copy_engine.as_ref().unwrap();
    assert_eq!(
        (ce.dram.chunks, ce.dram.declined_cached, ce.dram.copies),
        (1, 1, 0)
    );
    assert_eq!(ce.movblks, PAGE / 32, "the chunk ran as movblks");
    assert_eq!(s.memory.bulk.fpm_bytes + s.memory.bulk.psm_bytes, 0);
    // dram_rule = "always" hands it down anyway, the line copied in the cache by the
    // controller's coherence work.
    let always = mechanism(
        "movblk",
        "dce_rowclone",
        &["copy_engine.dram_rule=\"always\""],
    );
    let (s, _) = run_fork("cow-one-line-always", &always, &[Event::Load(BASE + 1000)]);
    let ce = s.copy_engine.as_ref().unwrap();
    assert_eq!((ce.dram.copies, ce.movblks), (1, 0));
}

/// Parent and child keep their own bytes after copy-on-write copies run by every memcpy
/// routine and dce_rowclone's hand-off, with dirty and clean lines on both pages.
#[test]
fn copy_on_write_copies_by_routines_keep_parent_and_child_apart() {
    let d = common::dir("copy-engines-dram", "cow-bytes");
    let base = 0x1000_0000u64;
    let mut parent = vec![Event::Map {
        vaddr: base,
        bytes: 3 * PAGE,
    }];
    // Parent stores across pages 0 and 1, then pushes page 0's lines out of the caches
    // (a 2 MB sweep over the 1 MB L2), so page 0 is cold and page 1 cached at the fork.
    for k in 0..48 {
        parent.push(Event::Store(base + k * 168));
    }
    parent.push(Event::LoadRange {
        vaddr: BASE,
        bytes: 2 << 20,
    });
    for k in 0..16 {
        parent.push(Event::Store(base + PAGE + k * 200));
    }
    parent.extend([
        Event::Fork(1),
        Event::Store(base + PAGE + 64), // a copy of page 1 for the parent
        Event::Wait,
        Event::Store(base + 128),
        Event::Exit,
    ]);
    let mut events = vec![Event::MapResident {
        vaddr: BASE,
        bytes: REGION,
    }];
    events.extend(parent);
    common::write_thread(&d, 0, false, &events);
    common::write_thread(
        &d,
        1,
        true,
        &[
            Event::Store(base), // copies page 0 (cold)
            Event::Load(base + PAGE),
            Event::Store(base + 2 * PAGE),
            Event::Exit,
        ],
    );
    let reference = run_workload(&mechanism("bulk", "none", &[]), &d).unwrap().1;
    let (rp, rc) = (reference.pid_of(0).unwrap(), reference.pid_of(1).unwrap());
    let page = |sys: &System, pid, p: u64| sys.read_virtual(pid, base + p * PAGE, PAGE as usize);
    assert!(page(&reference, rp, 0).unwrap().iter().any(|&b| b != 0));
    for (memcpy, policy) in [
        ("software", "none"),
        ("movblk", "ce_l1"),
        ("movblk", "dce_nt"),
        ("movblk", "dce_rowclone"),
    ] {
        let (s, sys) = run_workload(&mechanism(memcpy, policy, &[]), &d).unwrap();
        let (p, c) = (sys.pid_of(0).unwrap(), sys.pid_of(1).unwrap());
        for pg in 0..3 {
            assert_eq!(
                page(&sys, p, pg),
                page(&reference, rp, pg),
                "{policy}: parent page {pg}"
            );
            assert_eq!(
                page(&sys, c, pg),
                page(&reference, rc, pg),
                "{policy}: child page {pg}"
            );
        }
        assert_eq!(s.os.cow_copies, 2, "{policy}");
        if policy == "dce_rowclone" {
            let ce = s.copy_engine.as_ref().unwrap();
            assert_eq!(
                (ce.dram.copies, ce.dram.declined_cached),
                (1, 1),
                "{policy}"
            );
        }
    }
}

/// Copies of any size and alignment, from cold and cached sources: dce_rowclone leaves the
/// bytes a plain copy would, handing some chunks down and declining others.
#[test]
fn random_copies_with_chunks_leave_the_reference_bytes() {
    use bulksim_core::rng::SplitMix64;
    let area = 512 << 10;
    let mut rng = SplitMix64::new(7);
    let mut body = Vec::new();
    for _ in 0..400 {
        body.push(Event::Store(BASE + rng.below(area / 8) * 8));
    }
    for i in 0..30 {
        if i % 10 == 0 {
            // Pushes most lines out of the caches: sources go cold.
            body.push(Event::LoadRange {
                vaddr: BASE + (2 << 20),
                bytes: 5 << 18,
            });
        }
        let bytes = 1 + rng.below(3 * PAGE);
        // Any source offset; the destination's offset within a 64-byte line (RowClone
        // could move the lines, but the chunk's source spans two frames); or within a page
        // (chunks can go down).
        let align = [1, 64, PAGE][rng.below(3) as usize];
        let (src, dst) = loop {
            let mut s = BASE + rng.below(area - bytes);
            let d = BASE + rng.below(area - bytes);
            s = s - s % align + d % align;
            if s + bytes <= d || d + bytes <= s {
                break (s, d);
            }
        };
        body.push(Event::Memcpy { src, dst, bytes });
        body.push(Event::Store(BASE + rng.below(area / 8) * 8));
        if rng.below(2) == 0 {
            body.push(Event::Store(src + rng.below(bytes) / 8 * 8));
        }
    }
    // The reference: each memcpy as one bulk operation through the core's copy loop.
    let cpu = [
        "system.bulk_mechanism=\"cpu\"",
        "system.init_mechanism=\"same\"",
    ];
    let (_, reference) = run_one("random-bulk", &mechanism("bulk", "none", &cpu), &body);
    let expected = image(&reference, area);
    assert!(expected.iter().flatten().count() > 64);
    for (policy, rule, partial) in [
        ("bulk", "probe", "merge"),
        ("dce_nt", "probe", "merge"),
        ("dce_rowclone", "probe", "merge"),
        ("dce_rowclone", "always", "merge"),
        ("dce_rowclone", "always", "sector"),
    ] {
        let config = if policy == "bulk" {
            mechanism("bulk", "none", &[])
        } else {
            mechanism(
                "movblk",
                policy,
                &[
                    &format!("copy_engine.dram_rule=\"{rule}\""),
                    &format!("copy_engine.partial_line=\"{partial}\""),
                ],
            )
        };
        let name = format!("random-{policy}-{rule}-{partial}");
        let (s, sys) = run_one(&name, &config, &body);
        let got = image(&sys, area);
        let first = got.iter().zip(&expected).position(|(a, b)| a != b);
        if let Some(p) = first {
            let (g, e) = (&got[p], &expected[p]);
            let byte = match (g, e) {
                (Some(g), Some(e)) => g.iter().zip(e).position(|(x, y)| x != y),
                _ => None,
            };
            panic!(
                "{name}: page {p} differs: mapped {} / {} (got / expected), first byte {byte:?}",
                g.is_some(),
                e.is_some()
            );
        }
        let Some(ce) = s.copy_engine.as_ref() else {
            continue;
        };
        let dram = &ce.dram;
        if policy == "dce_rowclone" {
            assert!(dram.copies > 0, "{name}: {dram:?}");
            assert!(dram.declined_layout > 0, "{name}: {dram:?}");
            if rule == "probe" {
                assert!(dram.declined_cached > 0, "{name}: {dram:?}");
            }
        } else {
            assert_eq!(dram.chunks, 0);
        }
    }
}

#[test]
fn copies_below_a_chunk_run_exactly_as_under_dce_nt() {
    // 1500-byte payloads to line-aligned buffers, as the network stand-in's: no whole chunk.
    let mut body = Vec::new();
    for k in 0..20 {
        body.push(Event::LoadRange {
            vaddr: BASE + k * 2048,
            bytes: 64,
        });
        body.push(Event::Memcpy {
            src: BASE + k * 2048 + 52,
            dst: BASE + (1 << 20) + k * 2048,
            bytes: 1500,
        });
    }
    let (nt, _) = run_one("small-nt", &mechanism("movblk", "dce_nt", &[]), &body);
    let (rc, _) = run_one("small-rc", &mechanism("movblk", "dce_rowclone", &[]), &body);
    assert_eq!(rc.core_cycles, nt.core_cycles);
    assert_eq!(
        rc.cache["l1"].below_bytes_with_addresses,
        nt.cache["l1"].below_bytes_with_addresses
    );
    let (a, b) = (rc.copy_engine.unwrap(), nt.copy_engine.unwrap());
    assert_eq!((a.l1, a.l2, a.movblks), (b.l1, b.l2, b.movblks));
    assert_eq!(a.dram.chunks, 0);
}

#[test]
fn a_cold_bulk_copy_moves_fewer_channel_bytes_than_dce_nt() {
    let body = [Event::Memcpy {
        src: BASE,
        dst: BASE + (2 << 20),
        bytes: 64 << 10,
    }];
    let channel = |s: &SystemStats| (s.memory.reads + s.memory.writes) * 64;
    let (nt, _) = run_one("bulk-nt", &mechanism("movblk", "dce_nt", &[]), &body);
    let (rc, _) = run_one("bulk-rc", &mechanism("movblk", "dce_rowclone", &[]), &body);
    let ce = rc.copy_engine.as_ref().unwrap();
    assert_eq!(ce.dram.copies, 16, "sixteen 4 KB chunks handed down");
    // dce_nt reads every source line over the channel: at least 64 KB.
    assert!(channel(&nt) >= 64 << 10, "{}", channel(&nt));
    // RowClone moves a chunk inside DRAM unless its frames lie in different channels; then
    // the controller reads and writes each line over the channel, and nothing else crosses.
    let b = &rc.memory.bulk;
    assert_eq!(b.fpm_bytes + b.psm_bytes + b.channel_copy_bytes, 64 << 10);
    assert!(b.fpm_bytes + b.psm_bytes > 0);
    assert_eq!(channel(&rc), 2 * b.channel_copy_bytes);
    assert!(channel(&rc) < channel(&nt));
}

#[test]
fn dce_rowclone_config_errors_name_the_key() {
    let err = |sets: &[&str]| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/copy_engines_ddr3.toml");
        let c = Config::from_file(&path).unwrap().apply_sets(sets).unwrap();
        c.validate().unwrap_err().to_string()
    };
    let e = err(&[
        "copy_engine.policy=\"dce_rowclone\"",
        "system.bulk_mechanism=\"cpu\"",
    ]);
    assert!(
        e.contains("copy_engine.policy") && e.contains("system.bulk_mechanism"),
        "{e}"
    );
    let e = err(&[
        "copy_engine.policy=\"dce_rowclone\"",
        "memory.fixed_latency_cycles=100",
    ]);
    assert!(
        e.contains("copy_engine.policy") && e.contains("fixed_latency_cycles"),
        "{e}"
    );
    for bad in ["3000", "32", "8192"] {
        let e = err(&[
            "copy_engine.policy=\"dce_rowclone\"",
            &format!("copy_engine.dram_chunk_bytes={bad}"),
        ]);
        assert!(e.contains("copy_engine.dram_chunk_bytes"), "{e}");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/copy_engines_ddr3.toml");
    let e = Config::from_file(&path)
        .unwrap()
        .apply_sets(&["copy_engine.dram_rule=\"sometimes\""])
        .unwrap_err()
        .to_string();
    assert!(e.contains("copy_engine.dram_rule"), "{e}");
}

/// The DDR3 preset's memory answers an unloaded read in 75 core cycles (the paper's memory:
/// 100): a DDR3-1066 8-8-8 read of a closed row is tRCD + tCL + the 4-clock burst,
/// 15 + 15 + 7.5 ns, at the preset's 2 GHz core.
#[test]
fn an_unloaded_dram_read_takes_trcd_plus_tcl_plus_the_burst() {
    let config = preset(&[]);
    let (idle, _) = run_one("unloaded-idle", &config, &[Event::Compute(400)]);
    let load = [Event::Compute(400), Event::Load(BASE + 0x8000)];
    let (one, _) = run_one("unloaded-load", &config, &load);
    // The load's miss path: L1 lookup 2, port 10, L2 lookup 15, memory, port 10.
    let memory = one.core_cycles - idle.core_cycles - (2 + 10 + 15 + 10);
    assert_eq!(memory, (15 + 15) * 2 + 15);
}

/// `copy_engine.probe_cycles`: the tag probe holds the routine's next instruction that long.
/// A declined chunk's movblks wait for it in full (a movblk needs every older instruction
/// retired); behind a chunk handed down it overlaps the in-DRAM copy the exit waits for.
#[test]
fn the_tag_probe_costs_probe_cycles() {
    for (name, before) in [
        ("cold", vec![]),
        ("one-line", vec![Event::Load(BASE + 1000)]),
    ] {
        let cycles = |probe: u32| {
            let config = mechanism(
                "movblk",
                "dce_rowclone",
                &[&format!("copy_engine.probe_cycles={probe}")],
            );
            run_fork(&format!("probe-{name}-{probe}"), &config, &before)
                .0
                .core_cycles
        };
        let extra = cycles(300) - cycles(0);
        if name == "cold" {
            assert!((1..300).contains(&extra), "{name}: {extra}");
        } else {
            assert!((300..=310).contains(&extra), "{name}: {extra}");
        }
    }
}
