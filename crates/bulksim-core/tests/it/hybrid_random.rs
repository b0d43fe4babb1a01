//! Issue 17 item 10: randomized correctness of the hybrid DRAM+PCM memory under every
//! built mechanism. Four cores, each its own process, load and store over 4x a 64-frame
//! DRAM worth of pages (64 pages a process) with hot sets that move, under a 32-entry ART
//! and a 10 us period, so pages are promoted and demoted while the programs run. Checked:
//!
//! - every process's final image equals, page by page, that of the same workload without
//!   the hybrid memory, and that of a model replaying the program's stores in order (a
//!   program store writes `(thread + 1) << 48 | its store count`);
//! - "each load returns its address's latest store": the system has no per-load check
//!   hook (a load's value is never observed), so this is checked through the final image
//!   only, where every word must hold its latest store;
//! - DRAM frames and ART entries balance at the end: free + in use = total, with no frame
//!   both; ART entries = migrations in flight = started - completed; inserts - removals =
//!   entries left.
//!
//! Seeds 1..=20, every mechanism and option, in four tests of five seeds.

use crate::common;

use bulksim_core::rng::SplitMix64;
use bulksim_core::system::{run_workload, System};
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::{config, dir, write_thread};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

const BASE: u64 = 0x4000_0000;
/// Pages per process: four processes over 4x a 64-frame DRAM.
const PAGES: u64 = 64;
const CORES: u32 = 4;
/// Hot-set phases per process, page visits (64 accesses each) per phase, pages in a hot
/// set (four processes' hot sets overflow the 64 DRAM frames). These accesses are what the
/// test costs, and the checks need all of them: with 3 phases, seeds 4 and 13 of `cpm` with
/// `elide_clean` elide nothing; with 15 visits, seed 1's does not either (issue 35 item 7).
const PHASES: u64 = 4;
const VISITS: u64 = 30;
const HOT: u64 = 20;
/// Compute instructions at the end of every program: 10 M cycles at 4 wide, about 3 ms
/// (300 periods) at 3.2 GHz, several times the loads' and stores' part (about 65 periods).
/// Nearly free: the engine skips the idle cycles (10 M instead costs the same host time).
const TAIL_INSTRUCTIONS: u64 = 40_000_000;

/// The mechanisms and options built: (name, extra overrides).
const MECHANISMS: &[(&str, &[&str])] = &[
    // CPM's hand-off (about 3 us a migration) is a third of this test's 10 us period: the
    // period's list, rebuilt each period, would rarely reach its demotions; the test is about
    // the bytes, so the hand-off is off.
    (
        "cpm",
        &[
            "hybrid.mechanism=cpm",
            "hybrid.cpm_setup_ns=0",
            "hybrid.cpm_flush_dram_line_ns=0",
            "hybrid.cpm_flush_pcm_line_ns=0",
            "hybrid.remap_shootdown_ns=0",
        ],
    ),
    ("cm", &["hybrid.mechanism=cm"]),
    ("cm_obm", &["hybrid.mechanism=cm_obm"]),
    (
        "cm_obm_after",
        &["hybrid.mechanism=cm_obm", "hybrid.obm_complete_after=8"],
    ),
    ("cm_obm_pd", &["hybrid.mechanism=cm_obm_pd"]),
    (
        "cm_obm_pd_elide_dram_first",
        &[
            "hybrid.mechanism=cm_obm_pd",
            "hybrid.elide_clean=true",
            "hybrid.placement=dram_first",
        ],
    ),
    (
        "cm_elide_dram_first",
        &[
            "hybrid.mechanism=cm",
            "hybrid.elide_clean=true",
            "hybrid.placement=dram_first",
        ],
    ),
    (
        "cpm_elide_dram_first",
        &[
            "hybrid.mechanism=cpm",
            "hybrid.cpm_setup_ns=0",
            "hybrid.cpm_flush_dram_line_ns=0",
            "hybrid.cpm_flush_pcm_line_ns=0",
            "hybrid.remap_shootdown_ns=0",
            "hybrid.elide_clean=true",
            "hybrid.placement=dram_first",
        ],
    ),
    (
        "cm_equal_priority",
        &["hybrid.mechanism=cm", "hybrid.copy_priority=equal"],
    ),
    // The retag combinations add a small second level of 128 sets, whose set index takes a
    // bit of the frame number: retagged lines move to other sets, push lines out of them,
    // and the levels' order matters (the first level's 32 sets lie within a page). Small,
    // so that the hot sets still miss and fill DRAM (demotions).
    (
        "cm_obm_pd_retag",
        &[
            "hybrid.mechanism=cm_obm_pd",
            "hybrid.remap_lines=retag",
            "cache.level.1.size_kb=16",
            "cache.level.1.ways=2",
        ],
    ),
    (
        "cpm_retag_dram_first",
        &[
            "hybrid.mechanism=cpm",
            "hybrid.cpm_setup_ns=0",
            "hybrid.cpm_flush_dram_line_ns=0",
            "hybrid.cpm_flush_pcm_line_ns=0",
            "hybrid.remap_shootdown_ns=0",
            "hybrid.remap_lines=retag",
            "hybrid.placement=dram_first",
            "cache.level.1.size_kb=16",
            "cache.level.1.ways=2",
        ],
    ),
];

/// A 64-frame DRAM beside a PCM, one small cache level; with `hybrid`, a 32-entry ART and
/// a 10 us period, and `more`.
fn system(hybrid: bool, more: &[&str]) -> Config {
    let mut sets = vec![
        "memory.device.0.name=dram",
        "memory.device.0.preset=DDR4_8Gb_x8_1600",
        "memory.device.0.rows=2",
        "dram.rows_per_subarray=2",
        "memory.device.1.name=pcm",
        "memory.device.1.preset=PCM_x8_1600",
        "controller.refresh=none",
        "cache.level.0.size_kb=8",
        "cache.level.0.ways=4",
    ];
    if hybrid {
        sets.extend_from_slice(&[
            "hybrid.placement=pcm_only",
            "hybrid.period_ns=10000",
            "hybrid.art_entries=32",
            "hybrid.art_ways=32",
            "hybrid.pact_entries=256",
            "hybrid.pact_ways=16",
            "hybrid.free_min=0.1",
        ]);
    }
    sets.extend_from_slice(more);
    config(&sets)
}

/// Writes the four processes' programs for `seed` and returns each process's expected
/// words (offset in its region -> the value its latest store there wrote).
fn programs(d: &Path, seed: u64) -> Vec<BTreeMap<u64, u64>> {
    let mut rng = SplitMix64::new(seed);
    let mut expected = Vec::new();
    for t in 0..CORES {
        let mut words = BTreeMap::new();
        let mut stores = 0u64;
        let mut ev = vec![Event::Map {
            vaddr: BASE,
            bytes: PAGES * 4096,
        }];
        let mut store = |ev: &mut Vec<Event>, off: u64| {
            stores += 1;
            ev.push(Event::Store(BASE + off));
            words.insert(off & !7, (u64::from(t) + 1) << 48 | stores);
        };
        // Every page faulted in first (all in PCM under `pcm_only`).
        for p in 0..PAGES {
            store(&mut ev, p * 4096 + 8 * (rng.next_u64() % 512));
        }
        for _ in 0..PHASES {
            // A hot set at a random place: 90% of accesses go there, the rest anywhere.
            let first = rng.next_u64() % (PAGES - HOT + 1);
            for _ in 0..VISITS {
                // A visit: one page, all its lines in order, a random word of each, 30%
                // stores (a visit copies every block of an on-demand promotion).
                let r = rng.next_u64();
                let page = if r % 10 < 9 {
                    first + (r >> 8) % HOT
                } else {
                    (r >> 8) % PAGES
                };
                for line in 0..64 {
                    let r = rng.next_u64();
                    let off = page * 4096 + line * 64 + 8 * (r % 8);
                    if (r >> 8) % 10 < 3 {
                        store(&mut ev, off);
                    } else {
                        ev.push(Event::Load(BASE + off));
                    }
                }
                ev.push(Event::Compute(20));
            }
        }
        // An exit frees the process's frames, which later promotions of other processes
        // may take while the exited page table still names them: every process idles
        // (no accesses: its pages' scores decay below `promote_min`, migrations finish)
        // long enough that none exits before all have stopped migrating.
        ev.push(Event::Compute(TAIL_INSTRUCTIONS));
        ev.push(Event::Exit);
        write_thread(d, t, false, &ev);
        expected.push(words);
    }
    expected
}

fn image(sys: &System, thread: usize) -> Vec<u8> {
    let pid = sys.pid_of(thread).unwrap();
    sys.read_virtual(pid, BASE, (PAGES * 4096) as usize)
        .unwrap()
}

/// Panics naming the first page and offset where two images differ.
fn same(what: &str, a: &[u8], b: &[u8]) {
    assert_eq!(a.len(), b.len());
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        let w = i - i % 8;
        panic!(
            "{what}: images differ first at page {} offset {}: {:?} vs {:?}",
            i / 4096,
            i % 4096,
            &a[w..w + 8],
            &b[w..w + 8]
        );
    }
}

/// The image the stores in program order leave (untouched bytes zero).
fn model(words: &BTreeMap<u64, u64>) -> Vec<u8> {
    let mut m = vec![0u8; (PAGES * 4096) as usize];
    for (&off, &v) in words {
        m[off as usize..off as usize + 8].copy_from_slice(&v.to_le_bytes());
    }
    m
}

/// A seed's workload directory (written once, then only read) and each process's image
/// after the run without the hybrid memory, checked against the model of its stores.
struct Baseline {
    dir: PathBuf,
    images: Vec<Vec<u8>>,
}

/// The baseline of `seed`, run once per test binary whichever test asks first.
fn baseline(seed: u64) -> Arc<Baseline> {
    static DONE: OnceLock<Mutex<BTreeMap<u64, Arc<Baseline>>>> = OnceLock::new();
    let mut done = DONE.get_or_init(Default::default).lock().unwrap();
    if let Some(b) = done.get(&seed) {
        return b.clone();
    }
    let d = dir("hybrid-random", &format!("seed{seed}"));
    let expected = programs(&d, seed);
    let (plain, plain_sys) = run_workload(&system(false, &[]), &d).unwrap();
    assert!(plain.hybrid.is_none());
    let images: Vec<Vec<u8>> = (0..CORES as usize).map(|t| image(&plain_sys, t)).collect();
    for (t, words) in expected.iter().enumerate() {
        same(
            &format!("seed {seed} no migration, process {t} vs model"),
            &images[t],
            &model(words),
        );
    }
    let b = Arc::new(Baseline { dir: d, images });
    done.insert(seed, b.clone());
    b
}

/// A combination's settings over the ones every mechanism runs with. The paths each
/// mechanism's checks below expect were found with the remap's stall off and 8 low-priority
/// copies in flight (the settings before issue 33); the bytes are what this test is about, so
/// every mechanism runs with them, unless the combination sets one itself (later sets win).
fn settings_of<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut sets = vec![
        "hybrid.remap_shootdown_ns=0",
        "hybrid.copies_in_flight=8",
        "hybrid.copy_priority=low",
    ];
    sets.extend_from_slice(more);
    sets
}

/// A combination's own settings are the ones it runs with: `cm_equal_priority` really runs
/// equal priority (the common settings once came last and overrode it, so it ran `cm`).
#[test]
fn each_combination_runs_its_own_settings() {
    let (_, more) = MECHANISMS
        .iter()
        .find(|m| m.0 == "cm_equal_priority")
        .expect("the equal-priority combination");
    let c = system(true, &settings_of(more));
    assert_eq!(
        c.hybrid.as_ref().expect("[hybrid]").copy_priority,
        bulksim_core::config::hybrid::CopyPriority::Equal
    );
}

fn run_seed(seed: u64, mechanisms: &[&str]) {
    let base = baseline(seed);
    let (d, plain_images) = (&base.dir, &base.images);
    for &(name, more) in MECHANISMS.iter().filter(|m| mechanisms.contains(&m.0)) {
        let what = format!("seed {seed} {name}");
        let (s, sys) = run_workload(&system(true, &settings_of(more)), d).unwrap();
        let h = s.hybrid.as_ref().expect("hybrid stats");
        // Migrations both ways really happened.
        assert!(h.promotions_completed > 0, "{what}: {h:?}");
        assert!(h.demotions_started > 0, "{what}: {h:?}");
        assert!(h.demotions_completed > 0, "{what}: {h:?}");
        if name.contains("elide") {
            // Pages whose visits stored to some lines only: their other blocks are not
            // copied back.
            assert!(h.pcm_writes_elided > 0, "{what}: {h:?}");
        }
        if name.contains("retag") {
            assert!(h.pages_retagged_lines > 0, "{what}: {h:?}");
        }
        if name.starts_with("cm_obm") {
            // The 32-entry ART fills with partly promoted pages: some are completed to
            // free ways (art_full_completes), their copies racing the program's accesses.
            assert!(h.art_full_completions > 0, "{what}: {h:?}");
        }
        if name.starts_with("cm_obm_pd") && name.contains("dram_first") {
            // Here (pages placed in DRAM first, hot sets moving) partly promoted pages
            // become the coldest DRAM pages and are flipped back: the flip path runs.
            assert!(h.art.flips > 0, "{what}: {h:?}");
        }
        // (1), (2): every process's bytes, page by page.
        for (t, plain_image) in plain_images.iter().enumerate() {
            same(
                &format!("{what} process {t} vs no migration"),
                &image(&sys, t),
                plain_image,
            );
        }
        // (3): frames and ART entries balance.
        let hm = sys.hybrid().expect("the hybrid memory");
        let (free, used, total) = hm.dram_frame_balance(sys.os());
        assert_eq!(total, 64, "{what}");
        assert_eq!(free + used, total, "{what}: free {free} used {used}: {h:?}");
        let in_flight = hm.migrations_in_flight() as u64;
        let started = h.promotions_started + h.demotions_started;
        // A flipped entry (cm_obm_pd) is one migration that started as a promotion and
        // completes as a demotion: its promotion never completes.
        let completed = h.promotions_completed + h.demotions_completed + h.art.flips;
        assert_eq!(started, completed + in_flight, "{what}: {h:?}");
        if name.starts_with("cpm") {
            assert_eq!(h.art, Default::default(), "{what}");
            assert!(in_flight <= 1, "{what}: {in_flight} in flight");
        } else {
            assert_eq!(hm.art.len() as u64, in_flight, "{what}: {h:?}");
            assert_eq!(h.art.inserts - h.art.removals, in_flight, "{what}: {h:?}");
            assert_eq!(h.art.inserts + h.art.flips, started, "{what}: {h:?}");
        }
    }
}

/// Every mechanism and option (`MECHANISMS`) under seeds `first..=last`, each seed printed as
/// it passes (`--nocapture`). Four tests of five seeds each make item 10's twenty, so that
/// the test harness spreads them over the cores (about 15 s a seed in the test profile).
fn run_seeds(first: u64, last: u64) {
    let all: Vec<&str> = MECHANISMS.iter().map(|m| m.0).collect();
    for seed in first..=last {
        run_seed(seed, &all);
        println!("seed {seed}: every mechanism and option passed");
    }
}

#[test]
fn seeds_01_to_05() {
    run_seeds(1, 5);
}

#[test]
fn seeds_06_to_10() {
    run_seeds(6, 10);
}

#[test]
fn seeds_11_to_15() {
    run_seeds(11, 15);
}

#[test]
fn seeds_16_to_20() {
    run_seeds(16, 20);
}
