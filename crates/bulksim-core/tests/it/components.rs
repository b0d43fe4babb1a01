//! The full system as components: the scheduler's idle skipping changes no stat, cache
//! hierarchies of any depth (with different line sizes per level) keep bytes right and count
//! traffic on every port, and several memory devices with their own clocks share the physical
//! address space.

use crate::common;
use bulksim_core::system::{run_workload, System};
use bulksim_core::workload::forkbench::{Forkbench, RandomAccess};
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::{config, write_thread};
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    common::dir("bulksim-comp", name)
}

/// The RowClone paper's system with further overrides.
fn paper(more: &[&str]) -> Config {
    common::paper_system(more)
}

/// Stats as JSON without host figures (wall time) and trace file names.
fn comparable(config: &Config, d: &Path) -> serde_json::Value {
    let (s, _) = run_workload(config, d).unwrap();
    let mut v = serde_json::to_value(&s).unwrap();
    v["memory"].as_object_mut().unwrap().remove("host");
    v
}

fn flat(v: &serde_json::Value) -> Vec<(String, String)> {
    fn walk(v: &serde_json::Value, p: &str, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    walk(x, &format!("{p}.{k}"), out);
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{p}[{i}]"), out);
                }
            }
            x => out.push((p.to_string(), x.to_string())),
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out
}

/// Every bulk mechanism, the PSM configuration and a two-level hierarchy.
const SETUPS: [&[&str]; 6] = [
    &["system.bulk_mechanism=\"cpu\""],
    &["system.bulk_mechanism=\"mc_dma\""],
    &[
        "system.bulk_mechanism=\"rowclone\"",
        "os.allocator=\"subarray_aware\"",
    ],
    &[
        "system.bulk_mechanism=\"rowclone_zi\"",
        "os.allocator=\"subarray_aware\"",
    ],
    &[
        "system.bulk_mechanism=\"rowclone\"",
        "os.allocator=\"subarray_aware\"",
        "bulk.fpm=false",
        "system.init_mechanism=\"cpu\"",
    ],
    &[
        "system.bulk_mechanism=\"rowclone\"",
        "cache.level.0.size_kb=32",
        "cache.level.0.ways=8",
        "cache.level.0.line_bytes=32",
        "cache.level.0.hit_cycles=3",
        "cache.level.1.size_kb=256",
        "cache.level.1.hit_cycles=12",
    ],
];

#[test]
fn skipping_idle_time_changes_no_full_system_stat() {
    let fork = dir("skip-fork");
    Forkbench::new(1 << 20, 96, 5, true).write(&fork).unwrap();
    // A 3-core mix: forkbench (parent and child) beside two random-access programs.
    let mix = dir("skip-mix");
    Forkbench {
        parent_thread: 0,
        child_thread: 3,
        ..Forkbench::new(1 << 20, 64, 6, true)
    }
    .write(&mix)
    .unwrap();
    for thread in [1, 2] {
        RandomAccess {
            region_bytes: 1 << 20,
            accesses: 3000,
            write_percent: 30,
            work: 20,
            seed: thread as u64,
            thread,
            binary: true,
        }
        .write(&mix)
        .unwrap();
    }
    for workload in [&fork, &mix] {
        for setup in SETUPS {
            let mut skip = paper(setup);
            skip.sim.record_intervals = true;
            let mut every = skip.clone();
            every.sim.skip_idle = false;
            let (a, b) = (comparable(&skip, workload), comparable(&every, workload));
            if a != b {
                let (fa, fb) = (flat(&a), flat(&b));
                let diff: Vec<_> = fa.iter().zip(&fb).filter(|(x, y)| x != y).take(8).collect();
                panic!(
                    "{setup:?} on {}: stats differ: {diff:?}",
                    workload.display()
                );
            }
            assert!(a["instructions"].as_u64().unwrap() > 10_000);
        }
    }
}

/// Bytes each thread reads back after a run (stores, copies, inits and fork).
fn scenario(d: &Path) -> u64 {
    let base = 0x2000_0000u64;
    let mut events = vec![Event::Map {
        vaddr: base,
        bytes: 64 * 4096,
    }];
    // Stores over 8 pages (every 40 bytes: lines of both sizes see partial writes).
    for i in 0..800u64 {
        events.push(Event::Store(base + i * 40));
        events.push(Event::Compute(3));
    }
    events.push(Event::Memcpy {
        src: base + 8,
        dst: base + 20 * 4096 + 8,
        bytes: 3 * 4096,
    });
    events.push(Event::Meminit {
        dst: base + 30 * 4096 + 100,
        bytes: 5000,
        value: 0xab,
    });
    events.push(Event::Fork(1));
    events.push(Event::Store(base + 64));
    events.push(Event::Wait);
    events.push(Event::Exit);
    write_thread(d, 0, false, &events);
    write_thread(
        d,
        1,
        true,
        &[Event::Store(base + 4096), Event::Load(base), Event::Exit],
    );
    base
}

fn image_of(sys: &System, t: usize, base: u64) -> Vec<u8> {
    let pid = sys.pid_of(t).unwrap();
    let mut out = Vec::new();
    for page in 0..40u64 {
        out.extend(
            sys.read_virtual(pid, base + page * 4096, 4096)
                .unwrap_or_default(),
        );
    }
    out
}

#[test]
fn deeper_hierarchies_keep_every_byte_and_count_every_port() {
    let d = dir("levels");
    let base = scenario(&d);
    let two_levels = [
        "cache.level.0.size_kb=16",
        "cache.level.0.ways=4",
        "cache.level.0.line_bytes=32",
        "cache.level.0.hit_cycles=3",
        "cache.level.1.size_kb=64",
        "cache.level.1.ways=8",
        "cache.level.1.hit_cycles=10",
    ];
    let three_levels = [
        "cache.level.0.size_kb=8",
        "cache.level.0.ways=2",
        "cache.level.0.line_bytes=32",
        "cache.level.1.size_kb=32",
        "cache.level.1.line_bytes=64",
        "cache.level.2.size_kb=128",
        "cache.level.2.shared=true",
    ];
    let mut l2_hits = 0;
    for mech in ["cpu", "mc_dma", "rowclone", "rowclone_zi"] {
        let m = format!("system.bulk_mechanism=\"{mech}\"");
        let (one, sys1) = run_workload(&paper(&[&m]), &d).unwrap();
        let expect = (image_of(&sys1, 0, base), image_of(&sys1, 1, base));
        for levels in [&two_levels[..], &three_levels[..]] {
            let mut sets = vec![m.as_str()];
            sets.extend_from_slice(levels);
            let (s, sys) = run_workload(&paper(&sets), &d).unwrap();
            let got = (image_of(&sys, 0, base), image_of(&sys, 1, base));
            for t in 0..2 {
                let (g, e) = if t == 0 {
                    (&got.0, &expect.0)
                } else {
                    (&got.1, &expect.1)
                };
                if let Some(i) = (0..e.len()).find(|&i| g.get(i) != e.get(i)) {
                    panic!(
                        "{mech} {levels:?}: thread {t}'s bytes differ from one level's at offset {i}: {:?} vs {:?}",
                        &g[i..(i + 8).min(g.len())],
                        &e[i..(i + 8).min(e.len())]
                    );
                }
            }
            assert_eq!(s.instructions, one.instructions, "{mech}");
            let names: Vec<&String> = s.cache.keys().collect();
            assert_eq!(
                names.len(),
                levels.iter().filter(|k| k.contains("size_kb")).count()
            );
            let l1 = &s.cache["l1"];
            // The first level sees every program load and store.
            assert_eq!(
                l1.hits + l1.misses,
                one.cache["l1"].hits + one.cache["l1"].misses
            );
            // Every fill the first level asked for crossed its port below in 32-byte lines.
            let l1_reads = &l1.below.read_bytes;
            assert_eq!(l1_reads.program % 32, 0);
            assert!(l1_reads.program >= 32 * l1.misses, "{mech}: {l1_reads:?}");
            // What reaches memory is what the last level sent below, 64 bytes a line.
            let last = s.cache.values().last().unwrap();
            let mem = &s.memory;
            let below = &last.below;
            let sent = below.read_bytes.program
                + below.read_bytes.copy
                + below.read_bytes.init
                + below.write_bytes.program
                + below.write_bytes.copy
                + below.write_bytes.init
                + below.write_bytes.coherence;
            if mech == "cpu" {
                assert_eq!(sent, (mem.reads + mem.writes) * 64, "{mech} {levels:?}");
            }
            // Every request at the controllers is booked once in the channel traffic,
            // write-backs of partial lines included (no RowClone seed rows here).
            if mech == "cpu" || mech == "mc_dma" {
                assert_eq!(
                    s.traffic_bytes,
                    (mem.reads + mem.writes) * 64,
                    "{mech} {levels:?}"
                );
            }
            l2_hits += s.cache["l2"].hits;
        }
    }
    // The second level answers some of the first level's misses.
    assert!(l2_hits > 0);
}

#[test]
fn a_second_level_hit_costs_its_latency_not_a_memory_access() {
    // One thread loads 64 lines, then loads them again after evicting them from a tiny
    // first level: the second pass hits the second level, every load one L2 hit apart.
    let d = dir("l2-hit");
    let base = 0x1000_0000u64;
    let mut events = vec![Event::MapPopulated {
        vaddr: base,
        bytes: 64 * 64,
    }];
    for pass in 0..2 {
        for i in 0..64u64 {
            events.push(Event::Load(base + i * 64));
            let _ = pass;
        }
    }
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    let sets = [
        "cache.level.0.size_kb=1",
        "cache.level.0.ways=2",
        "cache.level.0.hit_cycles=2",
        "cache.level.1.size_kb=64",
        "cache.level.1.hit_cycles=12",
    ];
    let (s, _) = run_workload(&paper(&sets), &d).unwrap();
    // 1 KiB first level holds 16 lines: the second pass misses it on every line, then hits
    // the second level; memory sees each line once.
    // (A few second-pass loads may dispatch before the fills that evict their line.)
    let l1 = &s.cache["l1"];
    assert_eq!(s.memory.reads, 64);
    assert_eq!(l1.hits + l1.misses, 128);
    assert!(l1.misses >= 120, "{l1:?}");
    assert_eq!(s.cache["l2"].misses, 64);
    assert_eq!(s.cache["l2"].hits, l1.misses - 64);
    assert_eq!(l1.below.read_bytes.program, l1.misses * 64);
    assert_eq!(s.cache["l2"].below.read_bytes.program, 64 * 64);
}

#[test]
fn two_devices_of_different_speed_hold_their_own_ranges() {
    // Two 2 GB DDR3 devices (a 1066 and a 1600 part, different clocks) under the forkbench
    // workload: pages land in both, bytes are right, and each device reports its own stats.
    let d = dir("devices");
    let base = scenario(&d);
    let one = paper(&["system.bulk_mechanism=\"rowclone\""]);
    let (_, sys1) = run_workload(&one, &d).unwrap();
    let two = paper(&[
        "system.bulk_mechanism=\"rowclone\"",
        "memory.device.0.name=\"slow\"",
        "memory.device.0.preset=\"DDR3_2Gb_x8_1066\"",
        "memory.device.1.name=\"fast\"",
        "memory.device.1.preset=\"DDR3_4Gb_x8_1600\"",
    ]);
    let (s, sys) = run_workload(&two, &d).unwrap();
    assert_eq!(image_of(&sys, 0, base), image_of(&sys1, 0, base));
    assert_eq!(image_of(&sys, 1, base), image_of(&sys1, 1, base));
    assert_eq!(s.memory_devices.len(), 2);
    let (slow, fast) = (&s.memory_devices[0], &s.memory_devices[1]);
    assert_eq!((slow.name.as_str(), fast.name.as_str()), ("slow", "fast"));
    assert_eq!(fast.base, slow.bytes, "the second device follows the first");
    assert!(slow.stats.tck_ns > fast.stats.tck_ns);
    // The scattered allocator spreads pages over both devices.
    for dev in [slow, fast] {
        assert!(dev.stats.reads > 0, "{}: no reads", dev.name);
    }
    assert_eq!(s.memory, slow.stats, "`memory` is the first device's");
}

#[test]
fn refreshes_and_stalls_are_recorded_where_they_happen() {
    // forkbench (stores only: no stalls) beside a random-access program (loads: stalls).
    let d = dir("intervals");
    Forkbench::new(1 << 20, 128, 9, true).write(&d).unwrap();
    RandomAccess {
        region_bytes: 4 << 20,
        accesses: 2000,
        write_percent: 0,
        work: 10,
        seed: 3,
        thread: 2,
        binary: true,
    }
    .write(&d)
    .unwrap();
    let c = paper(&["system.bulk_mechanism=\"cpu\"", "sim.record_intervals=true"]);
    let (s, _) = run_workload(&c, &d).unwrap();
    // DDR3-1066 2 Gb: nRFC = 86 cycles; two channels, one rank each.
    let n_rfc = c.spec().unwrap().timing.n_rfc as u64;
    assert_eq!(s.unavailable.len(), 2);
    let refreshes: u64 = s.unavailable.iter().map(|u| u.ranks[0].refreshes).sum();
    assert_eq!(refreshes, s.memory.refreshes);
    let mut intervals = 0;
    for u in &s.unavailable {
        let r = &u.ranks[0];
        assert!(r.refresh_mem_cycles >= r.refreshes * n_rfc, "{r:?}");
        intervals += u.intervals.len() as u64;
        for i in &u.intervals {
            assert!(i.end_mem_cycles > i.start_mem_cycles);
        }
    }
    let drains: u64 = s.unavailable.iter().map(|u| u.write_drains).sum();
    assert_eq!(intervals, refreshes + drains);
    assert_eq!(
        s.threads[0].memory_stalls, 0,
        "forkbench's parent only stores"
    );
    // Random loads miss; the window overlaps several, so the head waits for hundreds, and
    // a memory-bound program spends most of its time waiting.
    let t = &s.threads[2];
    assert!(t.memory_stalls > 300, "{}", t.memory_stalls);
    assert!(
        t.memory_stall_ns > 0.5 * t.end_ns,
        "{} of {}",
        t.memory_stall_ns,
        t.end_ns
    );
    for t in &s.threads {
        assert_eq!(t.stall_intervals_ns.len() as u64, t.memory_stalls);
        let sum: f64 = t.stall_intervals_ns.iter().map(|(a, b)| b - a).sum();
        assert!((sum - t.memory_stall_ns).abs() < 1e-6 * t.memory_stall_ns.max(1.0));
        assert!(t.memory_stall_ns <= t.end_ns);
        for (a, b) in &t.stall_intervals_ns {
            assert!(a < b && *b <= t.end_ns + 1.0, "{a} {b} {t:?}");
        }
    }
}

#[test]
fn a_populated_gigabyte_costs_no_host_memory_for_its_bytes() {
    // 1 GiB present from the start (zero pages), a few hundred loads and stores into it: the
    // image stores only the pages the stores' write-backs and fills really changed.
    let d = dir("populated");
    let base = 0x4000_0000u64;
    let mut events = vec![Event::MapPopulated {
        vaddr: base,
        bytes: 1 << 30,
    }];
    for i in 0..300u64 {
        events.push(Event::Load(base + i * 3_579_137 % (1 << 30) / 64 * 64));
        events.push(Event::Store(base + i * 7_919_011 % (1 << 30) / 64 * 64));
    }
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    // 8 GiB of DDR4 by default: 2 GiB fit twice over.
    let started = std::time::Instant::now();
    let (s, sys) = run_workload(&config(&["cache.level.0.size_kb=16"]), &d).unwrap();
    assert_eq!(s.os.populated, 1 << 18);
    // Each store's line is written back at most once (16 KiB cache): at most 300 pages hold
    // data, none for the zeroed gigabyte itself.
    let stored = sys.image().pages_stored();
    assert!(stored <= 300, "{stored} pages stored");
    assert!(
        sys.image().host_bytes() < 64 << 20,
        "{}",
        sys.image().host_bytes()
    );
    // Populating is bookkeeping, not 256k page writes.
    assert!(started.elapsed().as_secs() < 60);
    let pid = sys.pid_of(0).unwrap();
    assert_eq!(
        sys.read_virtual(pid, base + 4096 * 1000, 16).unwrap(),
        vec![0; 16]
    );
}
