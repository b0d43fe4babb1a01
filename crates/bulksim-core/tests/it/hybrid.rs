//! The hybrid DRAM+PCM memory end to end (`[hybrid]`, docs/hybrid.md): pages placed in PCM
//! are promoted while the program runs, DRAM serves a growing share of its LLC misses and
//! write-backs, demotions make way for hotter pages when DRAM is full, and every byte the
//! program stored is where a run without migration leaves it.

use crate::common;

use bulksim_core::system::run_workload;
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::{config, dir, write_thread};
use std::path::Path;

const BASE: u64 = 0x4000_0000;
const PAGES: u64 = 96;

/// A DRAM and a PCM device, one small cache level (so the hot pages miss), and with
/// `hybrid` the `cm` mechanism: 32-entry ART, 10 us period.
fn system(hybrid: bool, more: &[&str]) -> Config {
    let mut sets = vec![
        "memory.device.0.name=dram",
        "memory.device.0.preset=DDR4_8Gb_x8_1600",
        "memory.device.1.name=pcm",
        "memory.device.1.preset=PCM_x8_1600",
        "controller.refresh=none",
        "cache.level.0.size_kb=8",
        "cache.level.0.ways=4",
    ];
    if hybrid {
        sets.extend_from_slice(&[
            "hybrid.mechanism=cm",
            "hybrid.placement=pcm_only",
            "hybrid.period_ns=10000",
            "hybrid.art_entries=32",
            "hybrid.art_ways=32",
            "hybrid.pact_entries=256",
            "hybrid.pact_ways=16",
        ]);
    }
    sets.extend_from_slice(more);
    config(&sets)
}

/// One thread: touches all `PAGES` pages once, then `rounds` sweeps over each hot set
/// (stores to every line with a load of the line before), `hot` pages from `first`.
fn program(d: &Path, phases: &[(u64, u64, u64)]) {
    program_of(d, 0, phases);
}

/// `program` as thread `thread` (its own process).
fn program_of(d: &Path, thread: u32, phases: &[(u64, u64, u64)]) {
    program_lines(d, thread, phases, 64);
}

/// `program_of`, the sweeps touching only the first `lines` lines of each hot page.
fn program_lines(d: &Path, thread: u32, phases: &[(u64, u64, u64)], lines: u64) {
    let mut ev = vec![Event::Map {
        vaddr: BASE,
        bytes: PAGES * 4096,
    }];
    for p in 0..PAGES {
        ev.push(Event::Store(BASE + p * 4096 + 8 * (p % 64)));
    }
    let mut k = 0u64;
    for &(first, hot, rounds) in phases {
        for r in 0..rounds {
            for p in first..first + hot {
                for line in 0..lines {
                    let a = BASE + p * 4096 + line * 64 + 8 * ((r + line) % 8);
                    ev.push(Event::Load(a));
                    if (line + k) % 3 == 0 {
                        ev.push(Event::Store(a));
                    }
                    k += 1;
                }
                ev.push(Event::Compute(20));
            }
        }
    }
    ev.push(Event::Exit);
    write_thread(d, thread, false, &ev);
}

/// The program's pages as it sees them after the run.
fn image(sys: &bulksim_core::system::System) -> Vec<u8> {
    image_of(sys, 0)
}

/// Panics naming the first page and offset where two images differ.
fn same(a: &[u8], b: &[u8]) {
    assert_eq!(a.len(), b.len());
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!(
            "images differ first at page {} offset {}: {:?} vs {:?}",
            i / 4096,
            i % 4096,
            &a[i - i % 8..i - i % 8 + 8],
            &b[i - i % 8..i - i % 8 + 8]
        );
    }
}

fn image_of(sys: &bulksim_core::system::System, thread: usize) -> Vec<u8> {
    let pid = sys.pid_of(thread).unwrap();
    sys.read_virtual(pid, BASE, (PAGES * 4096) as usize)
        .unwrap()
}

#[test]
fn hot_pcm_pages_are_promoted_and_every_store_survives() {
    let d = dir("hybrid", "promote");
    program(&d, &[(0, 8, 40)]);
    let (plain, plain_sys) = run_workload(&system(false, &[]), &d).unwrap();
    assert!(plain.hybrid.is_none());
    let (s, sys) = run_workload(&system(true, &[]), &d).unwrap();
    let h = s.hybrid.as_ref().expect("hybrid stats");
    assert!(h.periods > 5, "{h:?}");
    assert_eq!(h.promotions_started, 8, "{h:?}");
    assert_eq!(h.promotions_completed, 8, "{h:?}");
    // Every block once: by the background copier unless a write-back or a program read's
    // copy got there first.
    assert_eq!(
        h.blocks_copied - h.blocks_copied_on_demand,
        8 * 64 - h.copies_dropped,
        "{h:?}"
    );
    assert_eq!(h.art.bit_updates, 8 * 64);
    // The race of item 7: write-backs reached blocks before their queued copies.
    assert!(h.copies_dropped > 0, "{h:?}");
    assert!(h.dram_accesses > 0 && h.pcm_accesses > 0, "{h:?}");
    // All pages start in PCM; once the hot ones are in DRAM it serves most of the misses.
    assert!(h.dram_fraction > 0.5, "{h:?}");
    assert_eq!(h.art.inserts, 8);
    assert_eq!(h.art.removals, 8);
    assert!(h.art.lookups >= h.dram_accesses + h.pcm_accesses);
    assert!(h.pages_flushed_lines > 0, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
}

#[test]
fn a_longer_run_has_dram_serve_a_larger_fraction() {
    let d = dir("hybrid", "growing");
    program(&d, &[(0, 8, 10)]);
    let (short, _) = run_workload(&system(true, &[]), &d).unwrap();
    program(&d, &[(0, 8, 40)]);
    let (long, _) = run_workload(&system(true, &[]), &d).unwrap();
    let (a, b) = (short.hybrid.unwrap(), long.hybrid.unwrap());
    assert!(b.dram_fraction > a.dram_fraction, "{a:?}\n{b:?}");
}

#[test]
fn colder_dram_pages_are_demoted_for_hotter_ones_and_the_image_stays_right() {
    let d = dir("hybrid", "demote");
    // 40 hot pages, then 40 others, over a DRAM of 64 frames: the second set pushes the
    // first, cold by then, back to PCM.
    program(&d, &[(0, 40, 12), (40, 40, 12)]);
    let small = ["memory.device.0.rows=2", "dram.rows_per_subarray=2"];
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let mut more = small.to_vec();
    more.push("hybrid.free_min=0.1");
    let (s, sys) = run_workload(&system(true, &more), &d).unwrap();
    assert_eq!(s.memory_devices[0].bytes, 64 * 4096);
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.demotions_completed > 0, "{h:?}");
    assert!(h.promotions_completed > 64, "{h:?}");
    assert!(h.art.inserts_refused == 0, "{h:?}");
    assert_eq!(
        h.art.inserts,
        h.promotions_started + h.demotions_started,
        "{h:?}"
    );
    same(&image(&sys), &image(&plain_sys));
}

#[test]
fn a_process_exiting_mid_run_returns_its_frames_and_the_other_keeps_its_bytes() {
    let d = dir("hybrid", "exit");
    // Thread 0's process promotes pages and exits while thread 1's keeps faulting in
    // pages and promoting its own over the 64-frame DRAM.
    program_of(&d, 0, &[(0, 8, 10)]);
    program_of(&d, 1, &[(0, 20, 10), (40, 30, 10)]);
    let small = ["memory.device.0.rows=2", "dram.rows_per_subarray=2"];
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let (s, sys) = run_workload(&system(true, &small), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.promotions_completed > 8, "{h:?}");
    same(&image_of(&sys, 1), &image_of(&plain_sys, 1));
}

#[test]
fn cm_obm_copies_promoted_blocks_on_access_only() {
    let d = dir("hybrid", "obm");
    // Half of each hot page is used: under cm_obm its promotion copies that half and never
    // completes; obm_complete_after copies the rest after 8 blocks.
    program_lines(&d, 0, &[(0, 8, 30)], 32);
    let (_, plain_sys) = run_workload(&system(false, &[]), &d).unwrap();
    let (s, sys) = run_workload(&system(true, &["hybrid.mechanism=cm_obm"]), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.mechanism, "cm_obm");
    assert_eq!(
        (h.promotions_started, h.promotions_completed),
        (8, 0),
        "{h:?}"
    );
    assert_eq!(h.blocks_copied, h.blocks_copied_on_demand, "{h:?}");
    assert!(h.blocks_copied <= 8 * 32, "{h:?}");
    assert_eq!(h.art.bit_updates, 8 * 32, "{h:?}");
    assert!(h.dram_fraction > 0.5, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
    let more = ["hybrid.mechanism=cm_obm", "hybrid.obm_complete_after=8"];
    let (s, sys) = run_workload(&system(true, &more), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.promotions_completed, 8, "{h:?}");
    assert!(h.blocks_copied > h.blocks_copied_on_demand, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
}

#[test]
fn cm_obm_completes_a_partly_promoted_page_chosen_for_demotion() {
    let d = dir("hybrid", "obm-demote");
    // 48 half-used pages are partly promoted into a 64-frame DRAM; 48 others then need
    // frames, and the first set, cold, is completed and demoted.
    program_lines(&d, 0, &[(0, 48, 8), (48, 48, 8)], 32);
    let small = ["memory.device.0.rows=2", "dram.rows_per_subarray=2"];
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let mut more = small.to_vec();
    // An ART larger than DRAM: frames, not entries, run out.
    more.extend([
        "hybrid.mechanism=cm_obm",
        "hybrid.free_min=0.1",
        "hybrid.art_entries=128",
    ]);
    let (s, sys) = run_workload(&system(true, &more), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.partial_completions > 0, "{h:?}");
    assert!(h.demotions_completed > 0, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
}

#[test]
fn skipping_idle_time_changes_nothing_under_hybrid() {
    let d = dir("hybrid", "skip");
    program(&d, &[(0, 4, 6)]);
    let (a, _) = run_workload(&system(true, &[]), &d).unwrap();
    let (b, _) = run_workload(&system(true, &["sim.skip_idle=false"]), &d).unwrap();
    assert!(a.hybrid.as_ref().unwrap().promotions_completed > 0);
    assert_eq!(a.hybrid, b.hybrid);
    assert_eq!(a.core_cycles, b.core_cycles);
    for (x, y) in a.memory_devices.iter().zip(&b.memory_devices) {
        assert_eq!(
            common::deterministic_json(&x.stats),
            common::deterministic_json(&y.stats)
        );
    }
}

#[test]
fn cpm_migrates_one_page_at_a_time_with_its_lines_pinned() {
    let d = dir("hybrid", "cpm");
    program(&d, &[(0, 8, 40)]);
    let (_, plain_sys) = run_workload(&system(false, &[]), &d).unwrap();
    let (s, sys) = run_workload(&system(true, &["hybrid.mechanism=cpm"]), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.mechanism, "cpm");
    assert_eq!(
        (h.promotions_started, h.promotions_completed),
        (8, 8),
        "{h:?}"
    );
    // No ART on the access path: every block copied in the background, none dropped (the
    // page's write-backs stayed in the pinned cache), no ART counters.
    assert_eq!((h.blocks_copied, h.copies_dropped), (8 * 64, 0), "{h:?}");
    assert_eq!(h.art, Default::default());
    assert!(h.dram_fraction > 0.5, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
    // Demotions too, over a 64-frame DRAM.
    let d = dir("hybrid", "cpm-demote");
    program(&d, &[(0, 40, 12), (40, 40, 12)]);
    let small = ["memory.device.0.rows=2", "dram.rows_per_subarray=2"];
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let mut more = small.to_vec();
    more.extend(["hybrid.mechanism=cpm", "hybrid.free_min=0.1"]);
    let (s, sys) = run_workload(&system(true, &more), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.demotions_completed > 0, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
}

#[test]
fn cm_obm_pd_flips_a_partly_promoted_page_back_to_pcm() {
    let d = dir("hybrid", "pd");
    // As the cm_obm test: the first set, partly promoted and cold, must make way; under
    // partial demotion its entries flip and only its promoted blocks are copied back.
    program_lines(&d, 0, &[(0, 48, 8), (48, 48, 8)], 32);
    let small = ["memory.device.0.rows=2", "dram.rows_per_subarray=2"];
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let mut more = small.to_vec();
    more.extend([
        "hybrid.mechanism=cm_obm_pd",
        "hybrid.free_min=0.1",
        "hybrid.art_entries=128",
    ]);
    let (s, sys) = run_workload(&system(true, &more), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.mechanism, "cm_obm_pd");
    assert!(h.art.flips > 0, "{h:?}");
    assert_eq!(h.partial_demotions, h.art.flips, "{h:?}");
    assert_eq!(h.partial_completions, 0, "{h:?}");
    assert!(h.demotions_completed >= h.art.flips, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
}

#[test]
fn hybrid_configs_are_checked() {
    let e = common::config_error(&[
        "memory.device.0.preset=DDR4_8Gb_x8_1600",
        "memory.device.1.preset=DDR4_8Gb_x8_1600",
        "memory.device.1.name=b",
        "controller.refresh=none",
        "hybrid.mechanism=cm",
        "hybrid.placement=pcm_only",
    ]);
    assert!(e.contains("[hybrid] needs exactly two devices"), "{e}");
}

/// docs/stats.md is generated by `bulksim docs` (Python); this checks, without it, that
/// both of its tables are the stats' declarations as the generator writes them (the
/// `hybrid.*` stats among them).
#[test]
fn the_stats_reference_lists_every_stat() {
    let md = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/stats.md"))
        .unwrap();
    let table = |docs: &[bulksim_core::stat_struct::FieldDoc]| {
        docs.iter()
            .map(|d| format!("| `{}` | {} | {} |", d.name, d.unit, d.description))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let system = table(&bulksim_core::system::stats::SYSTEM_STAT_DOCS);
    assert!(system.contains("| `hybrid.dram_fraction` | fraction |"));
    assert!(
        md.contains(&system),
        "docs/stats.md's full-system stats differ from:\n{system}"
    );
    let memory = table(&bulksim_core::stats::STAT_DOCS);
    assert!(
        md.contains(&memory),
        "docs/stats.md's memory stats differ from:\n{memory}"
    );
}

/// docs/config.md is generated by `bulksim docs` (Python); this checks, without it, that the
/// page holds the defaults block and a row for every config field as the generator writes
/// them (the new `hybrid.*`, `dram.rows` and `memory.device[].rows` among them).
#[test]
fn the_config_reference_lists_every_field_and_the_defaults() {
    let md = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/config.md"))
        .unwrap();
    let defaults = format!("```toml\n{}\n```", Config::default().to_toml().trim());
    assert!(
        md.contains(&defaults),
        "docs/config.md's defaults differ:\n{defaults}"
    );
    let rows: Vec<String> = bulksim_core::config::CONFIG_FIELDS
        .iter()
        .map(|f| format!("| `{}` | {} | {} |", f.key, f.unit, f.description))
        .collect();
    let table = rows.join("\n");
    assert!(
        md.contains(&table),
        "docs/config.md's fields differ from:\n{table}"
    );
}

/// `placement = "dram_first"` (the default): a process's first pages take the free DRAM
/// frames, lowest first, but for the policy's watermark (ceil(1% x 64) = 1 frame), the rest
/// go to PCM; a page placed in DRAM that is demoted gets a PCM frame then, and the hot PCM
/// pages take its DRAM frame.
#[test]
fn dram_first_places_the_first_pages_in_dram_and_demotes_them_for_hotter_ones() {
    let small = ["memory.device.0.rows=2", "dram.rows_per_subarray=2"];
    let first_touch = |sets: &[&str]| {
        let mut all = small.to_vec();
        all.extend_from_slice(sets);
        system(true, &all)
    };
    // Touching every page once makes nothing hot: the placement is what stays.
    let d = dir("hybrid", "dram_first_touch");
    program(&d, &[]);
    let (s, sys) = run_workload(&first_touch(&["hybrid.placement=dram_first"]), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.promotions_started + h.demotions_started, 0, "{h:?}");
    let pid = sys.pid_of(0).unwrap();
    let dram_bytes = s.memory_devices[0].bytes;
    assert_eq!(dram_bytes, 64 * 4096);
    for p in 0..PAGES {
        let pa = sys.os().lookup(pid, BASE + p * 4096).unwrap();
        // The first page touched takes frame 0 (the DRAM's lowest), and so on in order;
        // frame 63 stays free for promotions.
        if p < 63 {
            assert_eq!(pa, p * 4096, "page {p}");
        } else {
            assert!(pa >= dram_bytes, "page {p} at {pa:#x}");
        }
    }
    // The program's stores in the touch phase: DRAM serves the first 63 pages' misses.
    assert!(h.dram_fraction > 0.6 && h.dram_fraction < 0.7, "{h:?}");

    // Pages 64.. (in PCM) get hot: cold DRAM-placed pages make way for them.
    let d = dir("hybrid", "dram_first_hot");
    program(&d, &[(64, 30, 12)]);
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let (s, sys) = run_workload(
        &first_touch(&["hybrid.placement=dram_first", "hybrid.free_min=0.1"]),
        &d,
    )
    .unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.demotions_completed > 0, "{h:?}");
    assert!(h.promotions_completed >= 30, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
    let (free, used, total) = sys.hybrid().unwrap().dram_frame_balance(sys.os());
    assert_eq!((free + used, total), (64, 64));
}

/// Item 12: a workload larger than DRAM and PCM together stops with one error naming the
/// PCM and the key that makes it larger.
#[test]
fn an_exhausted_pcm_is_one_clear_error() {
    let d = dir("hybrid", "exhausted");
    program(&d, &[]);
    // 2 rows of 8 banks in one rank: 32 PCM frames, all PCM has for the program's 96 pages
    // (`pcm_only`; `dram_first` fits them exactly beside 64 DRAM frames).
    let c = system(
        true,
        &[
            "memory.device.0.rows=2",
            "dram.rows_per_subarray=2",
            "memory.device.1.rows=2",
            "memory.device.1.ranks=1",
        ],
    );
    let e = run_workload(&c, &d)
        .err()
        .expect("too little memory")
        .to_string();
    assert!(e.contains("out of PCM"), "{e}");
    assert!(e.contains("memory.device[].rows"), "{e}");
}

/// Item 8 for post-LLC traces: under `cpm` a migrating page's write-backs stay in "an L2 of
/// pinned lines only" (a read of one is a last-level hit) and go to the new frame when the
/// copy is done, so no write-back races a copy (none dropped) and the flush moves them.
#[test]
fn cpm_holds_a_post_llc_trace_write_backs_to_the_migrating_page() {
    use bulksim_core::system::run_opened_workload;
    use bulksim_core::workload::source::{Workload, WorkloadFormat};
    let d = dir("hybrid", "cpm_post_llc");
    // 4 hot pages, each line read and written back in turn, many rounds.
    let mut text = String::new();
    for round in 0..100u64 {
        for page in 0..4u64 {
            for line in 0..64u64 {
                let a = page * 4096 + line * 64;
                let wb = page * 4096 + ((line + 32 + round) % 64) * 64;
                text.push_str(&format!("4 {a} {wb}\n"));
            }
        }
    }
    let path = d.join("hot.trace");
    std::fs::write(&path, text).unwrap();
    let run = |mechanism: &str| {
        let c = system(true, &[&format!("hybrid.mechanism={mechanism}")]);
        let w = Workload::open(&path, Some(WorkloadFormat::RamulatorCpu), 1).unwrap();
        run_opened_workload(&c, w, &path, None, None).unwrap().0
    };
    let s = run("cpm");
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.promotions_completed, 4, "{h:?}");
    assert_eq!(h.copies_dropped, 0, "{h:?}");
    assert_eq!(h.blocks_copied, 4 * 64, "{h:?}");
    assert!(h.pages_flushed_lines > 0, "held write-backs flushed: {h:?}");
    // Under cm nothing is held: write-backs reach the destination and beat some copies.
    let s = run("cm");
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.pages_flushed_lines, 0, "{h:?}");
    assert!(h.copies_dropped > 0, "{h:?}");
}

/// `hybrid.remap_lines = "retag"` (item 9): a completed migration's cached lines are renamed
/// to the new frame instead of written there and invalidated, in both levels, so a hot set
/// that fits in L2 stays there across its promotions (fewer L2 misses than under `flush`),
/// and every store survives, dirty lines reaching memory later under their new names.
#[test]
fn retag_keeps_a_migrated_pages_lines_cached_and_every_store_survives() {
    let d = dir("hybrid", "retag");
    // 8 hot pages (32 KB): more than L1 holds, less than L2.
    program(&d, &[(0, 8, 40), (16, 8, 40)]);
    // The copy settings the test was written for (issue 33 made cm's `equal`, 64).
    let two_levels = [
        "cache.level.1.size_kb=64",
        "cache.level.1.ways=8",
        "cache.level.1.hit_cycles=12",
        "hybrid.copy_priority=low",
        "hybrid.copies_in_flight=8",
    ];
    let (_, plain_sys) = run_workload(&system(false, &two_levels), &d).unwrap();
    let run = |remap: &str| {
        let mut more = two_levels.to_vec();
        let remap = format!("hybrid.remap_lines={remap}");
        more.push(&remap);
        run_workload(&system(true, &more), &d).unwrap()
    };
    let (flush, flush_sys) = run("flush");
    let (retag, retag_sys) = run("retag");
    let (hf, hr) = (
        flush.hybrid.as_ref().unwrap(),
        retag.hybrid.as_ref().unwrap(),
    );
    assert_eq!(hr.promotions_completed, 16, "{hr:?}");
    assert!(
        hr.pages_retagged_lines > 0 && hr.pages_flushed_lines == 0,
        "{hr:?}"
    );
    assert!(
        hf.pages_flushed_lines > 0 && hf.pages_retagged_lines == 0,
        "{hf:?}"
    );
    // Under flush each completion empties L2 of the page: its next sweep misses again.
    let misses = |s: &bulksim_core::system::stats::SystemStats| s.cache["l2"].misses;
    assert!(
        misses(&retag) + 8 * 64 < misses(&flush),
        "retag {} vs flush {} L2 misses",
        misses(&retag),
        misses(&flush)
    );
    same(&image(&retag_sys), &image(&plain_sys));
    same(&image(&flush_sys), &image(&plain_sys));
}

/// `hybrid.os_period_ns`, `hybrid.os_remap_ns` (item 5, bulksim's model): each period and
/// each remap takes the front end of a core (here core 0, which runs the only process) for
/// that long. The time is counted exactly, the program is slowed by most of it (a drained
/// window hides at most a miss or two of each stretch), and skipping idle time leaves every
/// stat as stepping each cycle does.
#[test]
fn os_time_takes_the_core_for_each_period_and_remap() {
    let d = dir("hybrid", "os_time");
    program(&d, &[(0, 8, 10)]);
    let (free, _) = run_workload(&system(true, &[]), &d).unwrap();
    let os = [
        "hybrid.os_period_ns=2000",
        "hybrid.os_remap_ns=5000",
        "sim.record_intervals=true",
    ];
    let (s, _) = run_workload(&system(true, &os), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    let remaps = h.promotions_completed + h.demotions_completed;
    assert!(remaps >= 8, "{h:?}");
    assert_eq!(h.os_time_ns, h.periods * 2000 + remaps * 5000, "{h:?}");
    let slower = s.simulated_ns - free.simulated_ns;
    assert!(
        slower > 0.9 * h.os_time_ns as f64 - 200.0 * (h.periods + remaps) as f64,
        "{slower} ns slower for {} ns of OS time",
        h.os_time_ns
    );
    let mut every = system(true, &os);
    every.sim.skip_idle = false;
    let (e, _) = run_workload(&every, &d).unwrap();
    assert_same_stats(&s, &e);
    // os_period_ns must leave the core some of each period.
    let mut c = system(true, &[]);
    c.hybrid.as_mut().unwrap().os_period_ns = 10_000;
    let p = c.problems();
    assert_eq!(
        p,
        ["hybrid.os_period_ns: 10000; expected less than hybrid.period_ns (10000)"]
    );
}

/// Panics, naming the differing top-level keys, unless `a` and `b` are the same stats (host
/// time aside): idle skipping must leave every stat as stepping each cycle does.
fn assert_same_stats(
    a: &bulksim_core::system::stats::SystemStats,
    b: &bulksim_core::system::stats::SystemStats,
) {
    let json = |s: &bulksim_core::system::stats::SystemStats| {
        let mut v = serde_json::to_value(s).unwrap();
        v["memory"].as_object_mut().unwrap().remove("host");
        for d in v["memory_devices"].as_array_mut().unwrap() {
            d["stats"].as_object_mut().unwrap().remove("host");
        }
        v
    };
    let (a, b) = (json(a), json(b));
    if a != b {
        let diff: Vec<String> = a
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, v)| b[k.as_str()] != **v)
            .map(|(k, v)| format!("{k}: {v} vs {}", b[k.as_str()]))
            .collect();
        panic!("skip_idle changed stats: {diff:?}");
    }
}

/// The copier at its limit (`hybrid.copies_in_flight`): while every copy it may have in a
/// device's queues is there, the device is stepped at its own next event, not at every
/// cycle; it looks again when it serves one of its copies (`may_offer_copies`). A copy that
/// could enter sooner would make the run differ from stepping every cycle.
#[test]
fn a_copier_at_its_limit_loses_no_cycle_to_idle_skipping() {
    let d = dir("hybrid", "copier_limit");
    program(&d, &[(0, 8, 10), (16, 8, 10)]);
    for limit in ["hybrid.copies_in_flight=1", "hybrid.copies_in_flight=3"] {
        let (skipping, _) = run_workload(&system(true, &[limit]), &d).unwrap();
        let h = skipping.hybrid.as_ref().unwrap();
        assert!(
            h.promotions_completed >= 8 && h.blocks_copied >= 8 * 64,
            "{h:?}"
        );
        let mut every = system(true, &[limit]);
        every.sim.skip_idle = false;
        let (stepping, _) = run_workload(&every, &d).unwrap();
        assert_same_stats(&skipping, &stepping);
    }
}

/// `hybrid.os_remap_ns` goes to the core running the migrated page's process: with a
/// compute-only process on core 0 that outlasts the migrating one on core 1, core 1 is slowed
/// by about the remaps' time and core 0 by none of it (core 0 is only the fallback).
#[test]
fn os_remap_time_goes_to_the_core_running_the_pages_process() {
    let d = dir("hybrid", "os_remap_core");
    program_of(&d, 1, &[(0, 8, 10)]);
    // Thread 1 alone first: how long thread 0 must compute to outlast it.
    write_thread(&d, 0, false, &[Event::Exit]);
    let (alone, _) = run_workload(&system(true, &[]), &d).unwrap();
    let width = system(true, &[]).core.width as u64;
    let cycles = alone.cores[1].core_cycles;
    let mut ev = vec![Event::Compute(1000); (4 * cycles * width / 1000) as usize];
    ev.push(Event::Exit);
    write_thread(&d, 0, false, &ev);
    let (free, _) = run_workload(&system(true, &[]), &d).unwrap();
    let cfg = system(true, &["hybrid.os_remap_ns=5000"]);
    let (s, _) = run_workload(&cfg, &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    let remaps = h.promotions_completed + h.demotions_completed;
    assert!(remaps >= 8, "{h:?}");
    assert_eq!(h.os_time_ns, remaps * 5000, "{h:?}");
    let ghz = cfg.system.core_ghz;
    let slowed =
        |c: usize| (s.cores[c].core_cycles as f64 - free.cores[c].core_cycles as f64) / ghz;
    assert!(free.cores[0].core_cycles > 2 * free.cores[1].core_cycles);
    assert!(
        slowed(1) > 0.9 * h.os_time_ns as f64 - 200.0 * remaps as f64,
        "core 1 {} ns slower for {} ns of remaps",
        slowed(1),
        h.os_time_ns
    );
    assert!(
        slowed(0) < 0.1 * h.os_time_ns as f64,
        "core 0 {} ns slower for {} ns of remaps",
        slowed(0),
        h.os_time_ns
    );
}

/// `hybrid.elide_clean`: a promoted page demoted without having been written since copies
/// nothing back (its PCM home still holds every block), and the image stays right.
#[test]
fn elide_clean_skips_demotion_copies_of_blocks_not_written_since_promotion() {
    let d = dir("hybrid", "elide");
    // Every page stored once (first touch), then read-only sweeps of 40 pages, then of 40
    // others: the second set pushes the first, clean since its promotion, back to PCM.
    let mut ev = vec![Event::Map {
        vaddr: BASE,
        bytes: PAGES * 4096,
    }];
    for p in 0..PAGES {
        ev.push(Event::Store(BASE + p * 4096));
    }
    for (first, hot) in [(0u64, 40u64), (40, 40)] {
        for _ in 0..6 {
            for p in first..first + hot {
                for line in 0..64 {
                    ev.push(Event::Load(BASE + p * 4096 + line * 64));
                }
                ev.push(Event::Compute(20));
            }
        }
    }
    ev.push(Event::Exit);
    write_thread(&d, 0, false, &ev);
    let small = [
        "memory.device.0.rows=2",
        "dram.rows_per_subarray=2",
        "hybrid.free_min=0.1",
    ];
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let run = |elide: &str| {
        let mut sets = small.to_vec();
        sets.push(elide);
        run_workload(&system(true, &sets), &d).unwrap()
    };
    let (s, sys) = run("hybrid.elide_clean=true");
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.demotions_completed > 0, "{h:?}");
    // At most the first touch's one dirty line per page was written back after its
    // promotion started: nearly every block of each demotion is elided.
    assert!(
        h.pcm_writes_elided >= 63 * h.demotions_started,
        "{} elided for {} demotions",
        h.pcm_writes_elided,
        h.demotions_started
    );
    same(&image(&sys), &image(&plain_sys));
    let (s, _) = run("hybrid.elide_clean=false");
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.demotions_completed > 0, "{h:?}");
    assert_eq!(h.pcm_writes_elided, 0);
}

/// The PACT's inputs: by default (`hybrid.pact_origins = "program"`, `count_copies` off)
/// the program's own LLC misses and write-backs only; `pact_origins = "all"` adds those of
/// first-touch zeroing (and copies); `count_copies` adds every request the migration copier
/// issues.
#[test]
fn the_pact_counts_what_pact_origins_and_count_copies_say() {
    let d = dir("hybrid", "count_copies");
    program(&d, &[(0, 8, 20)]);
    let run = |more: &[&str]| run_workload(&system(true, more), &d).unwrap().0;
    let s = run(&[]);
    let h = s.hybrid.as_ref().unwrap();
    // The 32 pages' zeroing reaches memory as write-backs that are not the program's.
    assert!(h.copy_and_init_accesses > 0, "{h:?}");
    assert_eq!(h.pact.updates, h.dram_accesses + h.pcm_accesses, "{h:?}");
    let s = run(&["hybrid.pact_origins=all"]);
    let h = s.hybrid.as_ref().unwrap();
    let seen = h.dram_accesses + h.pcm_accesses + h.copy_and_init_accesses;
    assert_eq!(h.pact.updates, seen, "{h:?}");
    let s = run(&["hybrid.count_copies=true"]);
    let h = s.hybrid.as_ref().unwrap();
    assert!(h.blocks_copied > 0, "{h:?}");
    // Each copy write issued, and each read before a background copy write, is counted:
    // more than the writes alone.
    assert!(
        h.pact.updates > h.dram_accesses + h.pcm_accesses + h.blocks_copied,
        "{h:?}"
    );
}

#[test]
fn a_full_art_completes_partly_promoted_pages_and_cold_dram_pages_make_way() {
    let d = dir("hybrid", "art-full");
    // The first 64 pages fill DRAM (dram_first) and go cold; pages 64..96, in PCM, are then
    // swept half-used, so their promotions never complete on their own. An 8-entry ART
    // fills with them: the cold DRAM pages' demotions are refused a way. The policy must
    // not demote (flip back) the hot pages just promoted in their place; it completes
    // partly promoted pages so that ways come free.
    program_lines(&d, 0, &[(64, 32, 40)], 32);
    let small = ["memory.device.0.rows=2", "dram.rows_per_subarray=2"];
    let (_, plain_sys) = run_workload(&system(false, &small), &d).unwrap();
    let mut more = small.to_vec();
    more.extend([
        "hybrid.mechanism=cm_obm_pd",
        "hybrid.placement=dram_first",
        "hybrid.free_min=0.1",
        "hybrid.art_entries=8",
        "hybrid.art_ways=8",
        // The copy settings the test was written for (issue 33 made the CM variants'
        // `equal`, 64).
        "hybrid.copy_priority=low",
        "hybrid.copies_in_flight=8",
        // Nor did its remaps stall the cores (a 2 us stall per remap moves the sweeps
        // against the periods, and this test counts blocks a sweep reads within one).
        "hybrid.remap_shootdown_ns=0",
    ]);
    let (s, sys) = run_workload(&system(true, &more), &d).unwrap();
    let h = s.hybrid.as_ref().unwrap();
    assert_eq!(h.partial_demotions, 0, "{h:?}");
    assert!(h.art_full_completions > 0, "{h:?}");
    assert!(h.promotions_completed >= 24, "{h:?}");
    assert!(h.demotions_completed >= 24, "{h:?}");
    assert!(h.dram_fraction > 0.5, "{h:?}");
    same(&image(&sys), &image(&plain_sys));
    // A page is completed for room only after a whole period promoting
    // (`art_full_min_periods` = 1): a sweep, shorter than a period, has by then read its 32
    // used lines, each read of a block not yet copied copying it on demand.
    assert!(
        h.blocks_copied_on_demand >= 32 * h.art_full_completions,
        "{h:?}"
    );
    // With 0, pages are completed the period they start, before most of their lines are
    // read: the copies are background ones.
    let mut young = more.clone();
    young.push("hybrid.art_full_min_periods=0");
    let (s, sys) = run_workload(&system(true, &young), &d).unwrap();
    let h0 = s.hybrid.as_ref().unwrap();
    assert!(h0.art_full_completions > 0, "{h0:?}");
    assert!(
        h0.blocks_copied_on_demand < 32 * h0.art_full_completions,
        "{h0:?}"
    );
    same(&image(&sys), &image(&plain_sys));
    // Without completions the partly promoted pages keep the ART's 8 ways for ever: no
    // promotion after the first 8 (each also needs a way) and the run ends mostly in PCM.
    more.push("hybrid.art_full_completes=false");
    let (s, sys) = run_workload(&system(true, &more), &d).unwrap();
    let h2 = s.hybrid.as_ref().unwrap();
    assert_eq!(h2.art_full_completions, 0, "{h2:?}");
    assert!(h2.promotions_started <= 8, "{h2:?}");
    assert!(h2.dram_fraction < h.dram_fraction, "{h2:?}");
    same(&image(&sys), &image(&plain_sys));
}

/// Migrations started per period (promotions and demotions).
fn starts_per_period(h: &bulksim_core::memory::hybrid::HybridStats) -> f64 {
    (h.promotions_started + h.demotions_started) as f64 / h.periods as f64
}

/// CPM's hand-off zeroed (set-up, flush, remap).
const NO_HAND_OFF: [&str; 4] = [
    "hybrid.cpm_setup_ns=0",
    "hybrid.cpm_flush_dram_line_ns=0",
    "hybrid.cpm_flush_pcm_line_ns=0",
    "hybrid.remap_shootdown_ns=0",
];

/// Issue 33 item 1: CPM's serial hand-off. Each completion's flush, remap and the next
/// set-up run before the next migration starts: fewer migrations start per period than
/// without the hand-off and than CM starts (the paper's premise: one migration at a time
/// is the bottleneck CM relieves), every remap stalls the cores for `remap_shootdown_ns`, and
/// the time is accounted part by part.
#[test]
fn cpm_hand_off_serialises_migrations_below_cm() {
    let d = dir("hybrid", "cpm_hand_off");
    program(&d, &[(0, 40, 4)]);
    let run = |more: &[&str]| {
        let (s, _) = run_workload(&system(true, more), &d).unwrap();
        (s.simulated_ns, s.hybrid.unwrap())
    };
    let mut free_args = vec!["hybrid.mechanism=cpm"];
    free_args.extend(NO_HAND_OFF);
    let (free_ns, free) = run(&free_args);
    let (ns, cpm) = run(&["hybrid.mechanism=cpm"]);
    let (_, cm) = run(&["hybrid.mechanism=cm"]);
    assert_eq!((free.cpm_handoff_ns, free.remap_stall_ns), (0, 0));
    // Every migration that ended was handed off (one whose process had exited is not
    // remapped, but its hand-off still ran).
    let ended = cpm.cpm_handoffs;
    assert!(ended >= cpm.promotions_completed && ended > 0, "{cpm:?}");
    // A remap stalls the cores once; a page whose process had gone is not remapped.
    assert!(
        cpm.remap_stall_ns > 0
            && cpm.remap_stall_ns <= ended * 2_000
            && cpm.remap_stall_ns % 2_000 == 0,
        "{cpm:?}"
    );
    // CM's remaps stall the cores as CPM's do (a TLB shootdown is every mechanism's); only
    // CPM's next migration waits for it.
    assert!(
        cm.promotions_completed > 0 && cm.remap_stall_ns >= cm.promotions_completed * 2_000,
        "{cm:?}"
    );
    // One set-up (1 us) per migration started, the remaps (2 us each) and the flush, at
    // most 227 ns a line.
    let fixed = (cpm.promotions_started + cpm.demotions_started) * 1_000 + ended * 2_000;
    assert!(
        cpm.cpm_handoff_ns >= fixed && cpm.cpm_handoff_ns <= fixed + cpm.cpm_flushed_lines * 227,
        "{cpm:?}"
    );
    assert!(ns > free_ns, "{ns} vs {free_ns} ns");
    assert!(
        starts_per_period(&cpm) < starts_per_period(&free),
        "with the hand-off {} vs without {}",
        starts_per_period(&cpm),
        starts_per_period(&free)
    );
    assert!(
        starts_per_period(&cpm) < starts_per_period(&cm),
        "cpm {} vs cm {}",
        starts_per_period(&cpm),
        starts_per_period(&cm)
    );
    // A page the program keeps writing while it migrates has dirty pinned lines: they are
    // flushed one by one (28 ns each to DRAM), on the chain.
    let d = dir("hybrid", "cpm_flush");
    program(&d, &[(0, 8, 40)]);
    let (s, _) = run_workload(&system(true, &["hybrid.mechanism=cpm"]), &d).unwrap();
    let h = s.hybrid.unwrap();
    assert!(h.cpm_flushed_lines > 0, "{h:?}");
    assert!(
        h.cpm_handoff_ns
            >= h.promotions_started * 1_000 + h.cpm_flushed_lines * 28 + h.cpm_handoffs * 2_000,
        "{h:?}"
    );
}

/// Issue 33 items 2 and 6: with copies at equal priority (CM's default, `auto`), CM's
/// copies, many pages at once, raise the program's PCM service time above CPM's, whose
/// single copy goes after the program's requests; with CM's copies at low priority the
/// rise is smaller.
#[test]
fn cm_copies_at_equal_priority_slow_program_reads_more_than_cpm() {
    let d = dir("hybrid", "copy_priority");
    program(&d, &[(0, 40, 4)]);
    let run = |more: &[&str]| {
        let (s, _) = run_workload(&system(true, more), &d).unwrap();
        s.hybrid.unwrap()
    };
    let cpm = run(&["hybrid.mechanism=cpm"]);
    let cm = run(&["hybrid.mechanism=cm"]);
    let cm_low = run(&["hybrid.mechanism=cm", "hybrid.copy_priority=low"]);
    assert!(cm.pcm_avg_ns > cpm.pcm_avg_ns, "cm {cm:?}\ncpm {cpm:?}");
    assert!(
        cm.pcm_avg_ns > cm_low.pcm_avg_ns,
        "equal {} vs low {}",
        cm.pcm_avg_ns,
        cm_low.pcm_avg_ns
    );
}

/// `software_nt`'s line writes would go around the caches, past CPM's pinned lines and the
/// hand-off that counts their flush: refused with `[hybrid]`, naming the key.
#[test]
fn software_nt_is_refused_with_hybrid() {
    let mut c = system(true, &[]);
    c.system.memcpy = bulksim_core::config::MemcpyMode::SoftwareNt;
    let p = c.problems();
    assert!(
        p.iter()
            .any(|m| m.starts_with("system.memcpy: software_nt is not combined with [hybrid]")),
        "{p:?}"
    );
}
