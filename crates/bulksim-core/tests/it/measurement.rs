//! Warm-up and measured instructions per core (`sim.warmup_instructions`,
//! `sim.measure_instructions`; docs/hybrid.md, "Measurement"), and the hybrid memory's
//! service-time metrics (issue 17 item 11): milestones from first principles, memory-side
//! stats that cover only the measured interval, the errors.

use crate::common;

use bulksim_core::system::run_workload;
use bulksim_core::workload::program::Event;
use common::{config, config_error, dir, write_thread};
use std::path::Path;

const BASE: u64 = 0x4000_0000;

/// A thread that maps `pages` resident pages, then runs `body` (and exits).
fn thread(d: &Path, id: u32, pages: u64, body: &[Event]) {
    let mut ev = vec![Event::MapResident {
        vaddr: BASE,
        bytes: pages * 4096,
    }];
    ev.extend_from_slice(body);
    ev.push(Event::Exit);
    write_thread(d, id, false, &ev);
}

/// Loads of `n` distinct lines from line `first` on (each misses every cache level), each
/// followed by `gap` instructions of compute.
fn loads(first: u64, n: u64, gap: u64) -> Vec<Event> {
    let mut ev = Vec::new();
    for i in first..first + n {
        ev.push(Event::Load(BASE + i * 64));
        if gap > 0 {
            ev.push(Event::Compute(gap));
        }
    }
    ev
}

/// Two cores: core 0 computes (a window of pure compute retires `core.width` instructions
/// every core cycle), core 1 waits on memory. Core 0's measured window lies in its compute,
/// so it lasts measure / width cycles exactly; each core's window is the difference of its
/// two milestones; the run ends at the slower core's second milestone, the faster core
/// having run on (its trace wrapping).
#[test]
fn two_cores_at_different_speeds_each_measure_their_own_window() {
    let d = dir("measure", "two-cores");
    thread(&d, 0, 1, &[Event::Compute(100_000), Event::Load(BASE)]);
    thread(&d, 1, 64, &loads(0, 4096, 2));
    let (warmup, measure) = (3_000u64, 6_000u64);
    let sets = [
        "system.loop_workloads=true",
        "sim.warmup_instructions=3000",
        "sim.measure_instructions=6000",
    ];
    let c = config(&sets);
    let width = c.core.width as u64;
    let (s, _) = run_workload(&c, &d).unwrap();
    let m = s.measurement.as_ref().expect("measurement stats");
    assert_eq!(
        (m.warmup_instructions, m.measure_instructions),
        (warmup, measure)
    );
    assert_eq!(m.cores, 2);
    let (fast, slow) = (&s.cores[0], &s.cores[1]);
    for core in [fast, slow] {
        assert_eq!(
            core.measured_cycles,
            core.measure_end_cycle - core.warmup_end_cycle
        );
        assert!(
            core.measured_instructions.abs_diff(measure) < width,
            "{core:?}"
        );
    }
    assert_eq!(fast.measured_cycles, measure / width, "{fast:?}");
    assert_eq!(fast.measured_instructions, measure);
    assert!(slow.measured_cycles > 2 * fast.measured_cycles, "{slow:?}");
    // The run ends in the slower core's last milestone; the faster one ran on meanwhile.
    assert_eq!(s.core_cycles, slow.measure_end_cycle);
    assert!(fast.instructions > warmup + measure + 1000, "{fast:?}");
    assert_eq!(m.slowest_core, 1);
    assert_eq!(m.cycles_max, slow.measured_cycles);
    assert!(s.summary().contains(&format!(
        "measured            2 cores x 6000 instructions after 3000 of warm-up: mean {:.0} cycles, slowest core 1 {} cycles",
        m.cycles_mean, m.cycles_max
    )));
    let mean = (fast.measured_cycles + slow.measured_cycles) as f64 / 2.0;
    assert!((m.cycles_mean - mean).abs() < 1e-9);
    // Memory-side stats from the last warm-up on: the slow core's, which came later.
    assert_eq!(
        m.stats_from_cycle,
        fast.warmup_end_cycle.max(slow.warmup_end_cycle)
    );
    // Stepping every cycle gives the same windows (fast-forwarded compute stops short of a
    // milestone).
    let sets: Vec<&str> = sets
        .iter()
        .copied()
        .chain(["sim.skip_idle=false"])
        .collect();
    let (t, _) = run_workload(&config(&sets), &d).unwrap();
    assert_eq!(t.cores, s.cores);
    assert_eq!(t.measurement, s.measurement);
    // And the same memory-side stats over the interval (refreshes included).
    let memory = |s: &bulksim_core::system::stats::SystemStats| bulksim_core::Stats {
        host: Default::default(),
        ..s.memory.clone()
    };
    assert!(s.memory.refreshes > 0);
    assert_eq!(memory(&t), memory(&s));
}

/// Memory-side stats count only the measured interval: a warm-up of `N1` loads to distinct
/// lines ending in a long compute (the milestone falls in it, every warm-up load served),
/// then `N2` more loads within the measured window: the memory counts `N2` reads, where the
/// whole run counts `N1 + N2`.
#[test]
fn memory_stats_cover_only_the_measured_interval() {
    let (n1, n2) = (300u64, 200u64);
    let d = dir("measure", "interval");
    let mut body = loads(0, n1, 0);
    body.push(Event::Compute(20_000));
    body.extend(loads(n1, n2, 0));
    body.push(Event::Compute(20_000));
    thread(&d, 0, 8, &body);
    let (whole, _) = run_workload(&config(&["controller.refresh=none"]), &d).unwrap();
    assert_eq!(whole.memory.reads, n1 + n2);
    assert_eq!(whole.memory.writes, 0);
    // Warm-up ends in the first compute, the window in the second.
    let warmup = format!("sim.warmup_instructions={}", n1 + 10_000);
    let c = config(&[
        "controller.refresh=none",
        &warmup,
        "sim.measure_instructions=20000",
    ]);
    let (s, _) = run_workload(&c, &d).unwrap();
    let m = &s.memory;
    assert_eq!(m.reads, n2, "{m:?}");
    assert_eq!(m.row_hits + m.row_misses + m.row_conflicts, n2);
    let rd = |s: &bulksim_core::Stats| s.commands["RD"] + s.commands["RDA"];
    assert_eq!(rd(m), n2);
    assert_eq!(rd(&whole.memory), n1 + n2);
    // Capacities are not counted over time.
    assert_eq!(m.peak_bandwidth_gbps, whole.memory.peak_bandwidth_gbps);
    assert_eq!(m.bulk.usable_bytes, whole.memory.bulk.usable_bytes);
    assert!(m.bulk.usable_bytes > 0);
    // Energy of the interval only: less than the whole run's, its READ part in proportion.
    assert!(m.energy.total_nj < whole.memory.energy.total_nj);
    let per_read = whole.memory.energy.components.read_nj / (n1 + n2) as f64;
    assert!((m.energy.components.read_nj - per_read * n2 as f64).abs() < 1e-6 * per_read);
}

/// The read latency distribution covers the measured interval too: a warm-up of reads sent
/// back to back (they queue), then lone reads to closed banks (closed page), each taking
/// tRCD + tCL + tBL: the window's distribution is that value alone, the whole run's reaches
/// above it.
#[test]
fn read_latencies_cover_only_the_measured_interval() {
    let d = dir("measure", "latency");
    let mut body = loads(0, 64, 0);
    body.push(Event::Compute(20_000));
    body.extend(loads(64, 20, 5_000));
    body.push(Event::Compute(20_000));
    thread(&d, 0, 4, &body);
    let base = ["controller.refresh=none", "controller.page_policy=closed"];
    let c = config(&base);
    let t = c.spec().unwrap().timing;
    let closed = (t.n_rcd + t.n_cl + t.n_bl) as u64;
    let (whole, _) = run_workload(&c, &d).unwrap();
    assert!(whole.memory.read_latency.max_mem_cycles > closed);
    let warmup = format!("sim.warmup_instructions={}", 64 + 10_000);
    let measure = format!("sim.measure_instructions={}", 20 * 5_001 + 10_000);
    let sets: Vec<&str> = base
        .iter()
        .copied()
        .chain([warmup.as_str(), measure.as_str()])
        .collect();
    let (s, _) = run_workload(&config(&sets), &d).unwrap();
    let l = &s.memory.read_latency;
    assert_eq!(s.memory.reads, 20);
    assert_eq!(
        (l.p50_mem_cycles, l.max_mem_cycles),
        (closed, closed),
        "{l:?}"
    );
    assert!((l.mean_mem_cycles - closed as f64).abs() < 1e-9, "{l:?}");
    assert!((l.max_ns - closed as f64 * s.memory.tck_ns).abs() < 1e-9);
}

const HYBRID: [&str; 9] = [
    "memory.device.0.name=dram",
    "memory.device.0.preset=DDR4_8Gb_x8_1600",
    "memory.device.1.name=pcm",
    "memory.device.1.preset=PCM_x8_1600",
    "controller.refresh=none",
    "controller.page_policy=closed",
    "hybrid.mechanism=cm",
    "hybrid.placement=pcm_only",
    "hybrid.promote_min=1000000",
];

/// The hybrid memory's program requests served by PCM, when each is alone in the memory
/// (closed page, a long compute between them): every one takes tRCD + tCL + tBL from its
/// arrival at the controller to its last data beat; the DRAM serves none.
#[test]
fn pcm_service_time_of_lone_reads_is_the_closed_form() {
    let n = 40u64;
    let d = dir("measure", "pcm-avg");
    thread(&d, 0, 4, &loads(0, n, 5_000));
    let (s, _) = run_workload(&config(&HYBRID), &d).unwrap();
    let h = s.hybrid.as_ref().expect("hybrid stats");
    let pcm = &s.memory_devices[1].stats;
    let t = config(&["dram.preset=PCM_x8_1600", "controller.refresh=none"])
        .spec()
        .unwrap()
        .timing;
    let closed = (t.n_rcd + t.n_cl + t.n_bl) as f64 * pcm.tck_ns;
    assert_eq!((h.pcm_served, h.dram_served), (n, 0), "{h:?}");
    assert_eq!(h.pcm_accesses, n);
    assert_eq!(h.pcm_accesses_all, n);
    assert!(
        (h.pcm_avg_ns - closed).abs() < 1e-9,
        "{} vs {closed}",
        h.pcm_avg_ns
    );
    assert!((h.pcm_service_ns - closed * n as f64).abs() < 1e-6);
    assert_eq!(h.dram_avg_ns, 0.0);
    assert_eq!(h.partial_demotions, 0);

    // Measured: each load and its compute are 5,001 instructions; the warm-up ends halfway
    // through the 10th load's compute (that load retired, so served; the 11th not yet
    // dispatched: the window holds 128), the window 20 loads later. The hybrid memory's
    // counters and the PCM device's count the 20 loads of the window alone.
    let per = 5_001u64;
    let warmup = format!("sim.warmup_instructions={}", 10 * per + 2_500);
    let measure = format!("sim.measure_instructions={}", 20 * per);
    let sets: Vec<&str> = HYBRID
        .iter()
        .copied()
        .chain([warmup.as_str(), measure.as_str()])
        .collect();
    let (s, _) = run_workload(&config(&sets), &d).unwrap();
    let h = s.hybrid.as_ref().expect("hybrid stats");
    assert_eq!(
        (h.pcm_served, h.pcm_accesses, h.pcm_reads),
        (20, 20, 20),
        "{h:?}"
    );
    assert_eq!(h.pcm_accesses_all, 20);
    assert_eq!(s.memory_devices[1].stats.reads, 20);
    assert!(
        (h.pcm_avg_ns - closed).abs() < 1e-9,
        "{} vs {closed}",
        h.pcm_avg_ns
    );
    assert_eq!(s.cores[0].measured_instructions, 20 * per);
}

#[test]
fn a_measured_core_whose_workload_ends_first_is_an_error_naming_the_key() {
    let d = dir("measure", "short");
    thread(&d, 0, 1, &[Event::Compute(5_000)]);
    let c = config(&[
        "sim.warmup_instructions=1000",
        "sim.measure_instructions=10000",
    ]);
    let err = run_workload(&c, &d).err().expect("an error").to_string();
    assert!(err.contains("sim.measure_instructions"), "{err}");
    assert!(err.contains("core 0"), "{err}");
    assert!(err.contains("system.loop_workloads"), "{err}");
    assert!(err.contains("11000"), "{err}");
}

#[test]
fn measurement_keys_are_checked() {
    let e = config_error(&["sim.warmup_instructions=10"]);
    assert!(
        e.starts_with("sim.warmup_instructions: 10 needs sim.measure_instructions"),
        "{e}"
    );
    let e = config_error(&["sim.measure_instructions=10", "sim.mode=\"functional\""]);
    assert!(
        e.contains("sim.measure_instructions: needs sim.mode"),
        "{e}"
    );
    let e = config_error(&[
        "sim.measure_instructions=10",
        "sim.stop_after_dram_accesses=100",
    ]);
    assert!(
        e.contains("sim.measure_instructions: 10 with sim.stop_after_dram_accesses 100"),
        "{e}"
    );
    // Looping ends at the measured windows' end.
    config(&["system.loop_workloads=true", "sim.measure_instructions=10"]);
}
