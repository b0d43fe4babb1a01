//! The generated stand-ins of issue 17 (`workload::standin`, docs/hybrid_workloads.md): each
//! kind's access mix and rate, footprint and alignment, determinism, fp_stream's hot quarter
//! and its moves, the Zipf kinds' skew against the closed form, pointer_chase's dependent
//! loads, and short full-system runs of each through the spec file. Expected values come
//! from the kinds' definitions, not from runs.

use crate::common;
use bulksim_core::system::{run_opened_workload, run_workload};
use bulksim_core::workload::program::{Event, ProgramReader};
use bulksim_core::workload::source::{EventSource, Workload, WorkloadFormat};
use bulksim_core::workload::standin::generator::{write_prefix, StandinSource};
use bulksim_core::workload::standin::spec::{Kind, Spec, BASE, KINDS};
use common::*;

const MB: u64 = 1 << 20;

fn spec(kind: Kind, instructions: u64, seed: u64) -> Spec {
    Spec {
        kind,
        size_mb: 1,
        instructions,
        seed,
        instructions_per_ms: 4_000_000,
    }
}

/// Calls `f` with every event of a spec's stream and the instructions given out before it.
fn each_event(spec: &Spec, mut f: impl FnMut(u64, Event)) {
    let mut s = StandinSource::new(spec.clone(), "t.toml");
    let mut at = 0;
    while let Some(e) = s.next_event().unwrap() {
        f(at, e);
        at += match e {
            Event::Compute(n) => n,
            _ => 1,
        };
    }
}

/// Every event of a spec's stream, each with the instructions given out before it.
fn events(spec: &Spec) -> Vec<(u64, Event)> {
    let mut out = Vec::new();
    each_event(spec, |at, e| out.push((at, e)));
    out
}

fn address(e: &Event) -> Option<(u64, bool)> {
    match *e {
        Event::Load(a) | Event::LoadDependent(a) => Some((a, false)),
        Event::Store(a) => Some((a, true)),
        _ => None,
    }
}

/// 1 map + 4 per access + a remainder of 3: each kind gives the accesses and instructions
/// that implies, alternating `C 3` and an access, with its store share exact, every address
/// in the footprint, streams on 8-byte elements and the Zipf kinds on lines.
#[test]
fn each_kind_gives_one_access_per_four_instructions_and_its_mix() {
    let accesses = 20_000u64;
    let instructions = 1 + 4 * accesses + 3;
    for info in KINDS {
        let evs = events(&spec(info.kind, instructions, 7));
        let name = info.name;
        assert_eq!(
            evs[0].1,
            Event::MapResident {
                vaddr: BASE,
                bytes: MB
            },
            "{name}"
        );
        assert_eq!(evs.last().unwrap().1, Event::Compute(3), "{name}");
        let body = &evs[1..evs.len() - 1];
        assert_eq!(body.len() as u64, 2 * accesses, "{name}");
        let (mut loads, mut stores) = (0u64, 0u64);
        for pair in body.chunks(2) {
            assert_eq!(pair[0].1, Event::Compute(3), "{name}");
            let (a, store) = address(&pair[1].1).expect("an access");
            assert!((BASE..BASE + MB).contains(&a), "{name}: {a:#x}");
            let align = if matches!(info.kind, Kind::FpStream | Kind::StreamRw) {
                8
            } else {
                64
            };
            assert_eq!(a % align, 0, "{name}: {a:#x}");
            if store {
                stores += 1
            } else {
                loads += 1
            }
        }
        let total = evs.last().unwrap().0 + 3;
        assert_eq!(total, instructions, "{name}");
        // fp_stream 3 loads : 1 store; stream_rw 1 : 1; pointer_chase 10%; zipf_drift 20%.
        let want_stores = match info.kind {
            Kind::FpStream => accesses / 4,
            Kind::StreamRw => accesses / 2,
            Kind::PointerChase => accesses / 10,
            Kind::ZipfDrift => accesses / 5,
        };
        assert_eq!((loads + stores, stores), (accesses, want_stores), "{name}");
    }
}

#[test]
fn instruction_counts_below_one_access_are_exact() {
    for n in 1..=6 {
        let evs = events(&spec(Kind::ZipfDrift, n, 1));
        let total: u64 = evs
            .iter()
            .map(|(_, e)| match e {
                Event::Compute(k) => *k,
                _ => 1,
            })
            .sum();
        assert_eq!(total, n);
    }
}

#[test]
fn the_same_seed_gives_the_same_events_and_another_seed_others() {
    for info in KINDS {
        // Long enough for several fp_stream sweeps (a hot one is 131,072 instructions).
        let n = 2_000_001;
        let a = events(&spec(info.kind, n, 11));
        assert!(a == events(&spec(info.kind, n, 11)), "{}", info.name);
        let b = events(&spec(info.kind, n, 12));
        // stream_rw draws nothing at random: the seed is recorded only.
        assert_eq!(a == b, info.kind == Kind::StreamRw, "{}", info.name);
    }
}

/// fp_stream over 1 MiB: 4 arrays of 32,768 elements, quarters of Q = 8,192. Array 0's
/// loads, cut where the element does not follow the one before, are sweeps: a hot sweep is Q
/// elements in quarter (t / period) mod 4 at its start t, a full sweep 4Q from element 0 (a
/// period many hot sweeps long, so two hot sweeps join only across one move). About 70% of
/// the sweeps are hot (within 4 standard deviations of a binomial count).
#[test]
fn fp_stream_sweeps_a_hot_quarter_seventy_percent_of_the_time_and_moves_it_each_period() {
    let q = 8192u64;
    // A hot sweep is 4Q accesses, 16Q instructions; the period is 20 of them.
    let period = 20 * 16 * q;
    let s = Spec {
        instructions_per_ms: period / 10,
        ..spec(Kind::FpStream, 60_000_000, 5)
    };
    assert_eq!(s.period_instructions(), period);
    let array0 = BASE + 4 * q * 8;
    let mut runs: Vec<(u64, u64, Vec<u64>)> = Vec::new(); // (first element, length, times)
    let mut prev: Option<u64> = None;
    each_event(&s, |at, e| {
        let Event::Load(a) = e else { return };
        if a >= array0 {
            return;
        }
        let el = (a - BASE) / 8;
        if prev != Some(el.wrapping_sub(1)) {
            runs.push((el, 0, Vec::new()));
        }
        let run = runs.last_mut().unwrap();
        run.1 += 1;
        // The time of each quarter's first access (a hot sweep's start).
        if el % q == 0 {
            run.2.push(at);
        }
        prev = Some(el);
    });
    runs.pop(); // the last may be cut by the end of the stream
    let (mut hot, mut full) = (0u64, 0u64);
    let mut quarters = std::collections::BTreeSet::new();
    for (first, len, starts) in runs {
        // 4Q from 0 is a full sweep: four hot ones in a row would need three moves.
        if first == 0 && len == 4 * q {
            full += 1;
            continue;
        }
        assert!(
            len % q == 0 && first % q == 0,
            "a sweep of {len} from {first}"
        );
        assert_eq!(starts.len() as u64, len / q);
        for (k, &t) in starts.iter().enumerate() {
            let quarter = first / q + k as u64;
            assert_eq!(quarter % 4, t / period % 4, "hot sweep at {t}");
            quarters.insert(quarter % 4);
            hot += 1;
        }
    }
    let sweeps = hot + full;
    let sd = (sweeps as f64 * 0.7 * 0.3).sqrt();
    assert!(sweeps > 200, "{sweeps} sweeps");
    assert!(
        (hot as f64 - 0.7 * sweeps as f64).abs() < 4.0 * sd,
        "{hot} hot of {sweeps}"
    );
    assert_eq!(quarters.len(), 4, "the hot quarter visited {quarters:?}");
}

/// H(n, s) = sum of k^-s for k = 1..n.
fn harmonic(n: u64, s: f64) -> f64 {
    (1..=n).map(|k| (k as f64).powf(-s)).sum()
}

/// Page counts of the loads (and stores) of `evs`, per page index in the footprint.
fn page_counts(evs: &[(u64, Event)], stores: bool) -> Vec<u64> {
    let mut counts = vec![0u64; 256];
    for (_, e) in evs {
        if let Some((a, store)) = address(e) {
            if !store || stores {
                counts[((a - BASE) / 4096) as usize] += 1;
            }
        }
    }
    counts
}

/// The hottest page of 256 takes 1 / H(256, s) of the draws: pointer_chase's loads
/// (s = 0.8), zipf_drift's accesses within one period (s = 1.0). Four standard deviations.
#[test]
fn the_hottest_page_takes_its_zipf_share() {
    for (kind, s) in [(Kind::PointerChase, 0.8), (Kind::ZipfDrift, 1.0)] {
        let evs = events(&spec(kind, 1 + 4 * 200_000, 3));
        let stores = kind == Kind::ZipfDrift;
        let counts = page_counts(&evs, stores);
        let n: u64 = counts.iter().sum();
        let top = *counts.iter().max().unwrap();
        let p = 1.0 / harmonic(256, s);
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (top as f64 - n as f64 * p).abs() < 4.0 * sd,
            "{kind:?}: the hottest page has {top} of {n}, Zipf says {:.0}",
            n as f64 * p
        );
    }
}

/// zipf_drift reshuffles every 5 ms: with 1,000 instructions per ms, every 5,000
/// instructions (1,250 accesses) the hottest page is another.
#[test]
fn zipf_drift_reshuffles_the_pages_every_period() {
    let period = 200_000u64;
    let s = Spec {
        instructions_per_ms: period / 5,
        ..spec(Kind::ZipfDrift, 4 * period, 9)
    };
    let evs = events(&s);
    let hottest: Vec<usize> = (0..4)
        .map(|epoch| {
            let part: Vec<_> = evs
                .iter()
                .filter(|(at, _)| at / period == epoch)
                .copied()
                .collect();
            let counts = page_counts(&part, true);
            let top = *counts.iter().max().unwrap();
            // 50,000 draws: the top page (16%) far above the second (8%).
            assert!(top > 6_000, "epoch {epoch}: {top}");
            counts.iter().position(|&c| c == top).unwrap()
        })
        .collect();
    for w in hottest.windows(2) {
        assert_ne!(w[0], w[1], "hottest pages by period {hottest:?}");
    }
}

/// pointer_chase: loads alternate one dependent (`Q`) and three independent ones, four
/// chains in rounds; each store writes the node just loaded.
#[test]
fn pointer_chase_loads_are_chained_in_rounds_of_four() {
    let evs = events(&spec(Kind::PointerChase, 1 + 4 * 10_000, 2));
    let mut loads = 0u64;
    let mut last = None;
    for (_, e) in evs {
        match e {
            Event::LoadDependent(a) => {
                assert_eq!(loads % 4, 0);
                loads += 1;
                last = Some(a);
            }
            Event::Load(a) => {
                assert_ne!(loads % 4, 0);
                loads += 1;
                last = Some(a);
            }
            Event::Store(a) => assert_eq!(Some(a), last),
            _ => {}
        }
    }
    assert_eq!(loads, 9_000);
}

/// Each kind through the spec file on an ordinary single-device system (the RowClone
/// paper's DDR3): 1 MiB, 20,001 instructions, the format detected; every instruction
/// retires.
#[test]
fn a_short_full_system_run_of_each_kind_retires_its_instructions() {
    let d = dir("standin", "runs");
    let config = paper_system(&[]);
    for info in KINDS {
        let path = d.join(format!("{}.toml", info.name));
        spec(info.kind, 20_001, 1).write(&path).unwrap();
        assert_eq!(
            WorkloadFormat::detect(&path).unwrap(),
            WorkloadFormat::Standin
        );
        let (stats, _) = run_workload(&config, &path).unwrap();
        assert_eq!(stats.instructions, 20_001, "{}", info.name);
        assert_eq!(stats.threads[0].instructions, 20_001, "{}", info.name);
        assert!(stats.traffic.read_bytes > 0, "{}", info.name);
    }
}

/// Copies run the same stream each in its own address space; a thread reopened (for
/// `system.loop_workloads`) starts the same stream again.
#[test]
fn copies_and_reopening_give_the_same_stream() {
    let d = dir("standin", "copies");
    let path = d.join("pc.toml");
    spec(Kind::PointerChase, 8_001, 4).write(&path).unwrap();
    let mut w = Workload::open(&path, None, 2).unwrap();
    assert_eq!(w.format, WorkloadFormat::Standin);
    assert_eq!(w.threads.len(), 2);
    let mut again = (w.threads[1].reopen)().unwrap();
    let first: Vec<Event> = events(&spec(Kind::PointerChase, 8_001, 4))
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    for (k, want) in first.iter().enumerate() {
        assert_eq!(
            w.threads[0].source.next_event().unwrap().as_ref(),
            Some(want),
            "{k}"
        );
        assert_eq!(again.next_event().unwrap().as_ref(), Some(want), "{k}");
    }
    let w = Workload::open(&path, None, 2).unwrap();
    let (stats, _) = run_opened_workload(&config(&[]), w, &path, None, None).unwrap();
    assert_eq!(stats.instructions, 2 * 8_001);
    assert_eq!(stats.threads.len(), 2);
}

/// A prefix written as a bulksim trace reads back as the stream's first events.
#[test]
fn a_prefix_dumps_as_a_readable_bulksim_trace() {
    let d = dir("standin", "dump");
    let path = d.join("fp.toml");
    spec(Kind::FpStream, 1_000_000, 4).write(&path).unwrap();
    let out = d.join("fp.trace");
    let n = write_prefix(&path, &out, 4_001).unwrap();
    let want: Vec<Event> = events(&spec(Kind::FpStream, 4_001, 4))
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    assert_eq!(n, want.len() as u64);
    let mut r = ProgramReader::open(&out).unwrap();
    let mut got = Vec::new();
    while let Some(e) = r.next_event().unwrap() {
        got.push(e);
    }
    assert_eq!(got, want);
}

/// A bad spec is one error naming the file and the key, from a run too.
#[test]
fn a_bad_spec_names_the_file_and_key() {
    let d = dir("standin", "bad");
    for (body, what) in [
        (
            "kind = \"fp_strem\"\n",
            "key 'kind': unknown stand-in kind 'fp_strem'",
        ),
        (
            "kind = \"fp_stream\"\nsize_mb = 0\n",
            "key 'size_mb': 0 MiB",
        ),
        ("kind = \"fp_stream\"\nseeds = 3\n", "unknown key 'seeds'"),
    ] {
        let path = d.join("bad.toml");
        std::fs::write(&path, format!("bulksim_standin = 1\n{body}")).unwrap();
        let err = run_workload(&config(&[]), &path).err().unwrap().to_string();
        let want = format!("{}: {what}", path.display());
        assert!(err.starts_with(&want), "{err}");
    }
}

/// pointer_chase's four chains on the full system: its loads (one `Q` then three `L` per
/// round) take longer than the same loads all independent and less than the same loads all
/// dependent (one chain): between one and many misses in flight. 64 MiB, so nearly every
/// load misses the caches.
#[test]
fn pointer_chase_keeps_between_one_and_many_misses_in_flight() {
    let d = dir("standin", "chains");
    let s = Spec {
        size_mb: 64,
        ..spec(Kind::PointerChase, 1 + 4 * 4_000, 8)
    };
    let stream: Vec<Event> = events(&s).into_iter().map(|(_, e)| e).collect();
    let config = paper_system(&[]);
    let time = |name: &str, map: fn(Event) -> Event| {
        let w = d.join(name);
        std::fs::create_dir_all(&w).unwrap();
        let evs: Vec<Event> = stream.iter().map(|&e| map(e)).collect();
        write_thread(&w, 0, false, &evs);
        let (stats, _) = run_workload(&config, &w).unwrap();
        assert_eq!(stats.instructions, s.instructions, "{name}");
        stats.threads[0].end_ns
    };
    let independent = time("independent", |e| match e {
        Event::LoadDependent(a) => Event::Load(a),
        e => e,
    });
    let chains = time("chains", |e| e);
    let one_chain = time("one-chain", |e| match e {
        Event::Load(a) => Event::LoadDependent(a),
        e => e,
    });
    assert!(
        independent < chains && chains < one_chain,
        "independent {independent} ns, four chains {chains} ns, one chain {one_chain} ns"
    );
    // Four chains overlap four misses where one chain has one: well under half its time.
    assert!(
        chains < 0.5 * one_chain,
        "{chains} ns vs one chain {one_chain} ns"
    );
}

/// A stand-in looped (`system.loop_workloads`) until the memory has accepted N requests:
/// the stream is reopened pass after pass (its map runs once), so the run reaches N with
/// more instructions retired than one pass holds. stream_rw's pass of 4,000 elements reads
/// 500 lines of each array, 64 KB, four times a 16 KB cache, so every pass misses anew.
#[test]
fn a_looped_stand_in_runs_until_the_stop() {
    let d = dir("standin", "loop");
    let path = d.join("rw.toml");
    let pass = 1 + 4 * 4_000;
    spec(Kind::StreamRw, pass, 6).write(&path).unwrap();
    let n = 3_000;
    let stop = format!("sim.stop_after_dram_accesses={n}");
    let config = paper_system(&[
        &stop,
        "system.loop_workloads=true",
        "cache.level.0.size_kb=16",
    ]);
    let (stats, _) = run_workload(&config, &path).unwrap();
    assert_eq!(stats.memory.reads + stats.memory.writes, n);
    assert!(
        stats.instructions > 2 * pass,
        "{} instructions",
        stats.instructions
    );
}
