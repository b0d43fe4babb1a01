//! The full system end to end: copy-on-write semantics, coherence of every mechanism with
//! dirty lines in flight, allocator policies, the traffic split, and forkbench's trends.

use crate::common;
use bulksim_core::config::{InitMechanism, LineStores};
use bulksim_core::system::run_workload;
use bulksim_core::workload::forkbench::Forkbench;
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::write_thread;
use std::path::PathBuf;

fn dir(name: &str) -> PathBuf {
    common::dir("bulksim-sys", name)
}

/// The RowClone paper's system: DDR3-1066, 4 KB rows, 2 channels, pages row-interleaved so a
/// 4 KB page is one row of one channel.
fn paper(mechanism: &str, allocator: &str) -> Config {
    paper_with(mechanism, allocator, &[])
}

/// `paper` with further overrides.
fn paper_with(mechanism: &str, allocator: &str, more: &[&str]) -> Config {
    let mechanism = format!("system.bulk_mechanism=\"{mechanism}\"");
    let allocator = format!("os.allocator=\"{allocator}\"");
    let mut sets = vec![mechanism.as_str(), allocator.as_str()];
    sets.extend_from_slice(more);
    common::paper_system(&sets)
}

const MECHANISMS: [&str; 4] = ["cpu", "mc_dma", "rowclone", "rowclone_zi"];

#[test]
fn forkbench_runs_and_its_traffic_adds_up() {
    let d = dir("fb-small");
    Forkbench::new(1 << 20, 64, 3, false).write(&d).unwrap();
    for mech in MECHANISMS {
        let (s, _) = run_workload(&paper(mech, "subarray_aware"), &d).unwrap();
        let m = &s.memory;
        assert_eq!(
            s.traffic_bytes,
            (m.reads + m.writes) * 64,
            "{mech}: the split covers every request"
        );
        assert_eq!(s.os.forks, 1);
        assert_eq!(s.os.zero_fills, 256, "{mech}");
        assert_eq!(s.os.cow_copies, 64, "{mech}");
        assert!(s.instructions > 5 * 16384, "{mech}: {}", s.instructions);
        // The core waits for every copy and zeroing, at least as long as memory works on it.
        let w = &s.bulk_wait;
        assert_eq!((w.copies, w.inits), (64, 256), "{mech}");
        let in_memory = m.bulk.copy_latency.mean_ns;
        assert!(
            w.copy_ns_per_op >= in_memory,
            "{mech}: {w:?} vs {in_memory}"
        );
        assert!((w.copy_ns - w.copy_ns_per_op * 64.0).abs() < 1e-6, "{mech}");
        if mech.starts_with("rowclone") {
            assert_eq!(
                m.bulk.fpm_bytes,
                (256 + 64) * 4096,
                "{mech}: zeroing and copies by FPM"
            );
            assert_eq!(s.traffic.copy_bytes + s.traffic.init_bytes, 0, "{mech}");
        } else if mech == "mc_dma" {
            assert!(
                s.traffic.copy_bytes >= 64 * 8192,
                "{mech}: read and write each page"
            );
        } else {
            assert!(s.traffic.copy_bytes > 0, "{mech}: copies through the cache");
        }
    }
}

/// Store values are (thread + 1) << 48 | the thread's store count, little-endian.
fn value(thread: u64, nth: u64) -> Vec<u8> {
    ((thread + 1) << 48 | nth).to_le_bytes().to_vec()
}

/// Parent and child see their own writes after fork, and neither sees the other's.
#[test]
fn copy_on_write_keeps_parent_and_child_apart() {
    let d = dir("cow");
    let base = 0x1000_0000u64;
    write_thread(
        &d,
        0,
        false,
        &[
            Event::Map {
                vaddr: base,
                bytes: 3 * 4096,
            },
            Event::Store(base),        // parent store 1, before the fork
            Event::Store(base + 4096), // 2
            Event::Fork(1),
            Event::Store(base + 4096 + 64), // 3, while the child shares page 1: a copy
            Event::Wait,
            Event::Store(base + 128), // 4, after the child exited: page 0 is the parent's alone
            Event::Exit,
        ],
    );
    write_thread(
        &d,
        1,
        true,
        &[
            Event::Store(base),        // child store 1: copies page 0
            Event::Load(base + 4096),  // reads page 1 as it was at the fork
            Event::Store(base + 8192), // 2: page 2 was never touched: zero-filled
            Event::Exit,
        ],
    );
    for mech in MECHANISMS {
        let (s, sys) = run_workload(&paper(mech, "scatter"), &d).unwrap();
        let (p, c) = (sys.pid_of(0).unwrap(), sys.pid_of(1).unwrap());
        let at = |pid, a: u64| sys.read_virtual(pid, a, 8).unwrap();
        assert_eq!(at(p, base), value(0, 1), "{mech}: parent keeps its value");
        assert_eq!(at(c, base), value(1, 1), "{mech}: child sees its own");
        assert_eq!(
            at(c, base + 4096),
            value(0, 2),
            "{mech}: child inherited page 1"
        );
        assert_eq!(at(p, base + 4096 + 64), value(0, 3), "{mech}");
        assert_eq!(
            at(c, base + 4096 + 64),
            vec![0; 8],
            "{mech}: not the parent's later write"
        );
        assert_eq!(at(c, base + 8192), value(1, 2), "{mech}");
        assert!(
            sys.read_virtual(p, base + 8192, 8).is_none(),
            "{mech}: parent never touched page 2"
        );
        assert!(
            sys.read_virtual(c, base + 136, 3900) == sys.read_virtual(p, base + 136, 3900),
            "{mech}: the rest of page 0 was copied"
        );
        assert_eq!(at(p, base + 128), value(0, 4), "{mech}");
        // Copies: page 1 for the parent, page 0 for the child; the parent's last write finds
        // page 0 no longer shared.
        assert_eq!(
            (s.os.cow_copies, s.os.cow_reuses, s.os.zero_fills),
            (2, 1, 3),
            "{mech}"
        );
    }
}

/// memcpy and meminit through every mechanism with dirty lines in the cache on both sides,
/// aligned and not: afterwards memory holds exactly what a plain byte copy would.
#[test]
fn bulk_operations_stay_coherent_with_dirty_lines() {
    let d = dir("coherence");
    let (src, dst, other) = (0x2000_0000u64, 0x3000_0000u64, 0x3800_0000u64);
    let mut events = vec![
        Event::Map {
            vaddr: src,
            bytes: 4 * 4096,
        },
        Event::Map {
            vaddr: dst,
            bytes: 4 * 4096,
        },
        Event::Map {
            vaddr: other,
            bytes: 4096,
        },
    ];
    for i in 0..4 * 64 {
        events.push(Event::Store(src + i * 64)); // dirty source lines
    }
    for i in (0..4 * 64).step_by(3) {
        events.push(Event::Store(dst + i * 64 + 8)); // dirty destination lines, to be overwritten
    }
    events.push(Event::Memcpy {
        src,
        dst,
        bytes: 2 * 4096,
    }); // page-aligned
    events.push(Event::Memcpy {
        src: src + 8192 + 40,
        dst: dst + 8192 + 8,
        bytes: 3000,
    }); // misaligned
    events.push(Event::Store(dst + 8192)); // a dirty line partly overwritten next
    events.push(Event::Meminit {
        dst: dst + 8192 + 4,
        bytes: 20,
        value: 0xee,
    });
    events.push(Event::Meminit {
        dst: other,
        bytes: 4096,
        value: 0,
    });
    // Zeroing that starts inside line 195 of the destination, after its dirty store at +8.
    let zero_from = dst + 195 * 64 + 16;
    events.push(Event::Meminit {
        dst: zero_from,
        bytes: 200,
        value: 0,
    });
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    let mut results = Vec::new();
    let mut configs: Vec<(String, Config)> = MECHANISMS
        .iter()
        .map(|m| (m.to_string(), paper(m, "subarray_aware")))
        .collect();
    let mut allocate = paper("cpu", "subarray_aware");
    allocate.system.cpu_full_line_stores = LineStores::Allocate;
    configs.push(("cpu with allocate".into(), allocate));
    for (mech, cfg) in &configs {
        let (_, sys) = run_workload(cfg, &d).unwrap();
        let p = sys.pid_of(0).unwrap();
        let v = |a, n| sys.read_virtual(p, a, n).unwrap();
        assert!(v(dst, 8192) == v(src, 8192), "{mech}: aligned copy");
        assert!(
            v(dst + 8192 + 24, 2984) == v(src + 8192 + 56, 2984),
            "{mech}: misaligned copy"
        );
        assert_eq!(v(dst + 8192 + 4, 20), vec![0xee; 20], "{mech}: meminit");
        assert_eq!(
            v(dst + 8192, 4),
            value(0, 4 * 64 + 86 + 1)[..4].to_vec(),
            "{mech}: bytes before the meminit"
        );
        assert!(v(other, 4096).iter().all(|&b| b == 0), "{mech}");
        assert!(v(zero_from, 200).iter().all(|&b| b == 0), "{mech}");
        assert_eq!(
            v(zero_from - 8, 8),
            value(0, 4 * 64 + 66)[..8].to_vec(),
            "{mech}: the store before a partial-line zeroing survives it"
        );
        results.push((v(dst, 4 * 4096), v(src, 4 * 4096)));
    }
    for r in &results[1..] {
        assert!(r == &results[0], "every mechanism leaves the same memory");
    }
}

/// `system.cpu_full_line_stores`: zeroing and initializing whole lines reads each line first
/// under `fetch` (write-allocate) and not at all under `allocate`; the bytes are the same.
#[test]
fn whole_line_stores_allocate_without_reading() {
    let d = dir("allocate");
    let base = 0x4000_0000u64;
    let bytes = 16 * 4096;
    write_thread(
        &d,
        0,
        false,
        &[
            Event::Map { vaddr: base, bytes },
            // First touch: the OS zeroes each page, then the program's meminit overwrites it.
            Event::Meminit {
                dst: base,
                bytes,
                value: 0x5a,
            },
            Event::Exit,
        ],
    );
    for (stores, lines_read) in [(LineStores::Fetch, bytes / 64), (LineStores::Allocate, 0)] {
        let mut cfg = paper("cpu", "scatter");
        cfg.system.cpu_full_line_stores = stores;
        let (s, sys) = run_workload(&cfg, &d).unwrap();
        assert_eq!(s.os.zero_fills, 16, "{stores:?}");
        assert_eq!(
            s.memory.reads, lines_read,
            "{stores:?}: one read per line zeroed, or none"
        );
        assert_eq!(s.traffic.init_bytes, s.traffic_bytes, "{stores:?}");
        let p = sys.pid_of(0).unwrap();
        assert!(
            sys.read_virtual(p, base, bytes as usize)
                .unwrap()
                .iter()
                .all(|&b| b == 0x5a),
            "{stores:?}"
        );
    }
}

/// forkbench's trends (RowClone Figures 7-8): the fraction of traffic due to copies grows with
/// N; FPM's speed-up over the baseline grows with N; PSM — the same system with FPM disabled,
/// so each copy-on-write copy (source and destination in one subarray) goes through the
/// temporary row in two PSM passes, zeroing by the CPU — gains little: Table 3 puts that copy
/// at 1,050 ns, the baseline's at 1,046 ns.
#[test]
fn forkbench_trends() {
    let runs = |n: u64| {
        let d = dir(&format!("fb-{n}"));
        Forkbench::new(1 << 20, n, 5, true).write(&d).unwrap();
        let base = run_workload(&paper("cpu", "scatter"), &d).unwrap().0;
        let fpm = run_workload(&paper("rowclone", "subarray_aware"), &d)
            .unwrap()
            .0;
        let mut psm_cfg = paper("rowclone", "subarray_aware");
        psm_cfg.bulk.fpm = false;
        psm_cfg.system.init_mechanism = InitMechanism::Cpu;
        let psm = run_workload(&psm_cfg, &d).unwrap().0;
        assert_eq!(fpm.memory.bulk.psm_bytes, 0, "FPM copies and zeroes");
        assert_eq!(
            (psm.memory.bulk.fpm_bytes, psm.memory.bulk.psm_bytes),
            (0, psm.os.cow_copies * 4096),
            "PSM copies; the CPU zeroes"
        );
        assert_eq!(
            psm.memory.bulk.channel_copy_bytes, 0,
            "every copy stays in DRAM"
        );
        assert!(psm.traffic.init_bytes >= psm.os.zero_fills * 4096);
        // Two PSM passes take at least the 1,051.9 ns of tests/it/bulk.rs.
        assert!(
            psm.bulk_wait.copy_ns_per_op >= 1051.0,
            "{:?}",
            psm.bulk_wait
        );
        (
            base.fmtc,
            base.core_cycles as f64 / fpm.core_cycles as f64,
            base.core_cycles as f64 / psm.core_cycles as f64,
        )
    };
    let points: Vec<_> = [8, 64, 256].into_iter().map(runs).collect();
    println!("{points:?}");
    for w in points.windows(2) {
        assert!(w[1].0 > w[0].0, "FMTC grows with N: {points:?}");
        assert!(w[1].1 > w[0].1, "FPM's gain grows with N: {points:?}");
    }
    for p in &points {
        assert!(
            p.1 > 1.0 && p.1 > p.2,
            "FPM beats the baseline and PSM: {points:?}"
        );
        assert!(
            p.2 > 0.9 && p.2 < 1.15,
            "PSM gains or loses little: {points:?}"
        );
    }
}

/// Two programs on two cores sharing one cache: each sees only its own memory, the shared
/// cache holds both programs' lines, and copy-on-write still works under every mechanism.
#[test]
fn a_shared_cache_serves_several_cores() {
    let d = dir("shared");
    let base = 0x1000_0000u64;
    for t in 0..2u32 {
        let mut events = vec![Event::Map {
            vaddr: base,
            bytes: 8 * 4096,
        }];
        for i in 0..8 * 64 {
            events.push(Event::Store(base + i * 64));
        }
        events.push(Event::Fork(2 + t));
        events.push(Event::Wait);
        events.push(Event::Exit);
        write_thread(&d, t, false, &events);
        write_thread(&d, 2 + t, true, &[Event::Store(base + 4096), Event::Exit]);
    }
    for mech in MECHANISMS {
        let mut shared = paper(mech, "subarray_aware");
        shared.cache.level[0].shared = true;
        shared.cache.level[0].size_kb = 2048;
        let (s, sys) = run_workload(&shared, &d).unwrap();
        assert_eq!(
            (s.cores.len(), s.os.cow_copies, s.os.forks),
            (2, 2, 2),
            "{mech}"
        );
        for t in 0..2usize {
            let p = sys.pid_of(t).unwrap();
            let c = sys.pid_of(2 + t).unwrap();
            // The last store of thread t to line 0 of page 1 was its 65th.
            assert_eq!(
                sys.read_virtual(p, base + 4096, 8).unwrap(),
                value(t as u64, 65),
                "{mech}"
            );
            assert_eq!(
                sys.read_virtual(c, base + 4096, 8).unwrap(),
                value(2 + t as u64, 1),
                "{mech}"
            );
            assert!(
                sys.read_virtual(c, base + 64, 8) == sys.read_virtual(p, base + 64, 8),
                "{mech}"
            );
        }
    }
}

/// RowClone section 7.2's reason PSM gains little: with destination lines allocated in the
/// cache and write-backs buffered, a CPU copy costs about its 64 source reads, which is about
/// what PSM's 64 pipelined TRANSFERs cost (Table 3: 540 ns; bulksim's inter-bank PSM copy
/// takes 543.75 ns, tests/it/bulk.rs). Here the victims are clean, so no write-back competes
/// with the copy; the destination is read only under `fetch`.
#[test]
fn a_cpu_copy_with_clean_victims_costs_about_its_source_reads() {
    let d = dir("clean-victims");
    let base = 0x4000_0000u64;
    let page = 4096;
    let mut events = vec![Event::Map {
        vaddr: base,
        bytes: 48 * page,
    }];
    // Allocate (zero) 48 pages, then load 16 of them back clean over the 64 KB cache, with
    // pauses long enough for the channel to drain every write-back.
    events.extend((0..48).map(|p| Event::Store(base + p * page)));
    events.push(Event::Compute(300_000));
    events.extend((16 * 64..32 * 64).map(|l| Event::Load(base + l * 64)));
    events.push(Event::Compute(300_000));
    for p in 0..4 {
        events.push(Event::Memcpy {
            src: base + p * page,
            dst: base + (8 + p) * page,
            bytes: page,
        });
        events.push(Event::Compute(30_000));
    }
    write_thread(&d, 0, false, &events);
    let run = |stores: &str| {
        let stores = format!("system.cpu_full_line_stores=\"{stores}\"");
        let mut cfg = paper_with("cpu", "scatter", &["cache.level.0.size_kb=64", &stores]);
        cfg.system.init_mechanism = InitMechanism::Cpu;
        let (s, _) = run_workload(&cfg, &d).unwrap();
        assert_eq!(s.bulk_wait.copies, 4, "{stores}");
        // Every zeroed line is written back once; the copies' lines stay in the cache.
        assert_eq!(s.cache["l1"].writebacks, 48 * 64, "{stores}");
        s.bulk_wait.copy_ns_per_op
    };
    let (allocate, fetch) = (run("allocate"), run("fetch"));
    const PSM_NS: f64 = 543.75;
    // 64 source lines cannot arrive faster than one burst (4 cycles of 1.875 ns) each.
    assert!(allocate >= 64.0 * 7.5, "{allocate}");
    assert!(allocate <= 1.1 * PSM_NS, "about PSM's cost: {allocate} ns");
    assert!(
        fetch > allocate + 100.0,
        "fetching the destination costs more: {fetch}"
    );
}

/// The kernel's fault path: each page fault retires `os.fault_instructions` more instructions
/// on the faulting thread, and they take time.
#[test]
fn each_page_fault_runs_the_kernel_fault_path() {
    let d = dir("fault-path");
    Forkbench::new(1 << 20, 64, 3, false).write(&d).unwrap();
    let run = |n: u32| {
        let mut cfg = paper("cpu", "scatter");
        cfg.os.fault_instructions = n;
        run_workload(&cfg, &d).unwrap().0
    };
    let (free, costly) = (run(0), run(500));
    assert_eq!(costly.os.page_faults, 256 + 64, "zero fills and copies");
    assert_eq!(free.os.fault_instructions, 0);
    assert_eq!(costly.os.fault_instructions, 320 * 500);
    assert_eq!(costly.instructions - free.instructions, 320 * 500);
    // They take time (some of it overlaps other work in the window), never less than their
    // retirement at 3 per cycle allows.
    assert!(
        costly.core_cycles > free.core_cycles,
        "{} {}",
        costly.core_cycles,
        free.core_cycles
    );
    assert!(costly.core_cycles >= costly.instructions / 3);
}

/// A populated mapping (`P`) is present from the start: touching it neither faults nor
/// zeroes, and it reads as zeros; a plain mapping (`A`) beside it faults on first touch.
#[test]
fn populated_mappings_are_present_without_faults() {
    let d = dir("populated");
    let (base, plain) = (0x1000_0000u64, 0x2000_0000u64);
    write_thread(
        &d,
        0,
        false,
        &[
            Event::MapPopulated {
                vaddr: base,
                bytes: 8 * 4096,
            },
            Event::Map {
                vaddr: plain,
                bytes: 4096,
            },
            Event::Load(base + 3 * 4096 + 64),
            Event::Store(base + 5 * 4096),
            Event::Store(plain),
            Event::Exit,
        ],
    );
    for mech in MECHANISMS {
        let (s, sys) = run_workload(&paper(mech, "scatter"), &d).unwrap();
        assert_eq!(s.os.populated, 8, "{mech}");
        assert_eq!(
            (s.os.page_faults, s.os.zero_fills),
            (1, 1),
            "{mech}: only `A` faults"
        );
        let p = sys.pid_of(0).unwrap();
        let page3 = sys.read_virtual(p, base + 3 * 4096, 4096).unwrap();
        assert!(page3.iter().all(|&b| b == 0), "{mech}");
        assert_eq!(
            sys.read_virtual(p, base + 5 * 4096, 8).unwrap(),
            value(0, 1)[..8].to_vec(),
            "{mech}"
        );
    }
}

/// The user's `bulk.mechanism` is never overwritten: `auto` (the default) or the value
/// `system.bulk_mechanism` implies runs; any other is one error naming both keys.
#[test]
fn bulk_mechanism_agrees_with_the_system_or_is_refused() {
    let d = dir("fb-bulk-mech");
    Forkbench::new(1 << 20, 16, 3, false).write(&d).unwrap();
    let below = [
        ("cpu", "channel"),
        ("mc_dma", "mc_dma"),
        ("rowclone", "rowclone"),
        ("rowclone_zi", "rowclone"),
    ];
    for (system, implied) in below {
        let (s, _) = run_workload(&paper(system, "subarray_aware"), &d).unwrap();
        assert_eq!(s.memory.bulk.mechanism, implied, "auto under {system}");
        let agree = format!("bulk.mechanism=\"{implied}\"");
        let (t, _) = run_workload(&paper_with(system, "subarray_aware", &[&agree]), &d).unwrap();
        assert_eq!(t.memory.bulk.mechanism, implied, "{agree} under {system}");
        for other in ["channel", "mc_dma", "rowclone"] {
            if other == implied {
                continue;
            }
            let set = format!("bulk.mechanism=\"{other}\"");
            let e = run_workload(&paper_with(system, "subarray_aware", &[&set]), &d)
                .err()
                .unwrap_or_else(|| panic!("{set} under {system} ran"))
                .to_string();
            assert!(
                e.starts_with(&format!(
                    "bulk.mechanism = \"{other}\" disagrees with system.bulk_mechanism = \"{system}\""
                )) && e.contains(&format!("set it to \"{implied}\"")),
                "{e}"
            );
        }
    }
}
