//! Refresh policies (`[controller.refresh]`): the unavailable share of a rank is tRFC/tREFI of
//! the density, temperature and granularity in use (the Rank Assignment paper's Table I and
//! §II-E/F), staggered refreshes never overlap while N x tRFC <= tREFI, simultaneous ones
//! coincide, and bad settings are one error naming the key.

use crate::common;
use bulksim_core::config::Config;
use bulksim_core::controller::unavailability::{Cause, Unavailability};
use bulksim_core::sim;
use bulksim_core::stats::Stats;
use bulksim_core::workload::generate::{GenOptions, Generator, Pattern};
use common::*;

const TCK_NS: f64 = 1.25;

fn ddr4_1600(density: u32, more: &[&str]) -> Config {
    let preset = format!("dram.preset=\"DDR4_{density}Gb_x8_1600\"");
    let mut sets = vec![preset.as_str(), "sim.record_intervals=true"];
    sets.extend_from_slice(more);
    config(&sets)
}

/// An idle memory for `cycles` memory cycles: a read at 0 and one at the end.
fn idle(c: &Config, cycles: u64) -> (Stats, Vec<Unavailability>) {
    let records = vec![read(0, 0), read(cycles, 64)];
    let (stats, router) = sim::run_keeping_memory(c, &mut records.into_iter(), None, None).unwrap();
    let u = router.devices[0].channels.unavailability();
    (stats, u)
}

/// Unavailable memory cycles of rank 0 of channel 0 per `window` cycles.
fn unavailable_per(u: &[Unavailability], window: u64, cycles: u64) -> f64 {
    u[0].ranks[0].refresh_mem_cycles as f64 * window as f64 / cycles as f64
}

#[test]
fn the_unavailable_share_is_trfc_over_trefi() {
    // Table I: tRFC 350/480/640 ns for 8/16/32 Gb; tREFI 7.8 us (3.9 us extended).
    for (density, trfc_ns) in [(8, 350.0), (16, 480.0), (32, 640.0)] {
        for (temperature, trefi_ns) in [("normal", 7800.0), ("extended", 3900.0)] {
            let t = format!("dram.temperature=\"{temperature}\"");
            let c = ddr4_1600(density, &[&t]);
            let cycles = 200 * (trefi_ns / TCK_NS) as u64;
            let (_, u) = idle(&c, cycles);
            let share = u[0].ranks[0].refresh_mem_cycles as f64 / cycles as f64;
            let expected = trfc_ns / trefi_ns;
            assert!(
                (share - expected).abs() < 0.01 * expected,
                "{density} Gb {temperature}: {share} vs {expected}"
            );
        }
    }
}

#[test]
fn fine_granularity_costs_its_recovery_per_ref() {
    // 32 Gb, per 7.8 us: 1 x 640 ns, 2 x 480 = 960 ns (+50%), 4 x 350 = 1400 ns; without the
    // DDR4 overhead 2 x 320 and 4 x 160 ns, i.e. 640 ns at every granularity.
    let window = (7800.0 / TCK_NS) as u64;
    let cycles = 100 * window;
    for (granularity, overhead, busy_ns) in [
        (1, true, 640.0),
        (2, true, 960.0),
        (4, true, 1400.0),
        (2, false, 640.0),
        (4, false, 640.0),
    ] {
        let g = format!("controller.refresh.granularity={granularity}");
        let o = format!("controller.refresh.fgr_overhead={overhead}");
        let c = ddr4_1600(32, &[&g, &o]);
        let (s, u) = idle(&c, cycles);
        let per_window_ns = unavailable_per(&u, window, cycles) * TCK_NS;
        assert!(
            (per_window_ns - busy_ns).abs() < 0.01 * busy_ns,
            "FGR-{granularity}x overhead {overhead}: {per_window_ns} ns per 7.8 us, expected {busy_ns}"
        );
        assert_eq!(
            s.refreshes, u[0].ranks[0].refreshes,
            "one rank, one channel"
        );
    }
    // Extended temperature halves the FGR intervals too: 4x REFs every 0.975 us.
    let c = ddr4_1600(
        32,
        &[
            "dram.temperature=\"extended\"",
            "controller.refresh.granularity=4",
        ],
    );
    assert_eq!(c.spec().unwrap().timing.n_refi, 780);
    assert_eq!(c.spec().unwrap().timing.n_rfc, 280);
}

fn refresh_starts(u: &[Unavailability]) -> Vec<Vec<u64>> {
    u.iter()
        .flat_map(|ch| {
            (0..ch.ranks.len() as u32).map(move |r| {
                ch.intervals
                    .iter()
                    .filter(|i| i.cause == Cause::Refresh && i.rank == Some(r))
                    .map(|i| i.start_mem_cycles)
                    .collect()
            })
        })
        .collect()
}

#[test]
fn staggered_refreshes_never_overlap_and_simultaneous_ones_coincide() {
    // 2 channels x 2 ranks of 32 Gb at extended temperature: 4 x 640 ns < 3.9 us, so a
    // system-wide stagger keeps one rank refreshing at a time.
    let base = [
        "dram.channels=2",
        "dram.ranks=2",
        "dram.temperature=\"extended\"",
    ];
    let with = |more: &[&str]| {
        let mut sets = base.to_vec();
        sets.extend_from_slice(more);
        ddr4_1600(32, &sets)
    };
    let cycles = 50 * 3120;
    let (s, u) = idle(&with(&["controller.refresh.stagger=\"system\""]), cycles);
    assert_eq!(s.refresh.overlap_ns, 0.0);
    // Ranks due a quarter of tREFI apart: 780 cycles.
    let starts = refresh_starts(&u);
    assert_eq!(
        starts.iter().map(|s| s[0]).collect::<Vec<_>>(),
        [780, 1560, 2340, 3120]
    );
    // The channel stagger offsets each channel's two ranks by half of tREFI; the two channels'
    // rank r refresh together, which a channel's overlap does not count.
    let (s, u) = idle(&with(&[]), cycles);
    assert_eq!(s.refresh.overlap_ns, 0.0);
    let starts = refresh_starts(&u);
    assert_eq!((starts[0][0], starts[2][0]), (1560, 1560));
    // Simultaneous: all four ranks are due at once; a channel's second REF follows its first
    // on the next command cycle, so its tRFC overlaps the first's by tRFC - 1 cycles.
    let (s, u) = idle(
        &with(&["controller.refresh.policy=\"simultaneous\""]),
        cycles,
    );
    let starts = refresh_starts(&u);
    assert!(starts.iter().all(|s| s[0] == 3120), "{starts:?}");
    let refs_per_rank = starts[0].len() as f64;
    let expected = 2.0 * refs_per_rank * (512.0 - 1.0) * TCK_NS;
    assert!(
        (s.refresh.overlap_ns - expected).abs() <= 2.0 * 512.0 * TCK_NS,
        "{} vs {expected}",
        s.refresh.overlap_ns
    );
    // FGR-4x at extended temperature: 4 x 350 ns > 975 ns, so even the system stagger overlaps.
    let (s, _) = idle(
        &with(&[
            "controller.refresh.stagger=\"system\"",
            "controller.refresh.granularity=4",
        ]),
        cycles,
    );
    assert!(s.refresh.overlap_ns > 0.0);
}

#[test]
fn a_policy_name_alone_still_works_and_bad_keys_are_named() {
    let c = config(&["controller.refresh=\"none\""]);
    let (s, _) = idle(&c, 100_000);
    assert_eq!(s.refreshes, 0);
    let c = config(&["controller.refresh=\"all_bank\""]);
    let (s, _) = idle(&c, 100_000);
    assert!(s.refreshes > 0);
    for (sets, key) in [
        (
            &["controller.refresh.granularity=3"][..],
            "controller.refresh.granularity",
        ),
        (
            &["controller.refresh.policy=\"sometimes\""],
            "controller.refresh.policy",
        ),
        (
            &["controller.refresh.stagger=\"bank\""],
            "controller.refresh.stagger",
        ),
        (
            // DDR3 gives no FGR tRFC.
            &[
                "dram.preset=\"DDR3_4Gb_x8_1600\"",
                "controller.refresh.granularity=2",
            ],
            "controller.refresh.granularity",
        ),
        (
            &["controller.refresh.polcy=\"none\""],
            "controller.refresh.policy",
        ),
        (
            &["controller.refresh.idle_ns=-5"],
            "controller.refresh.idle_ns",
        ),
        (
            &["controller.refresh.pcd_window_ns=1e12"],
            "controller.refresh.pcd_window_ns",
        ),
        (
            &[
                "controller.refresh.scheme=\"pausing\"",
                "controller.refresh.pause_granularity=3",
            ],
            "controller.refresh.pause_granularity",
        ),
        (
            &["controller.refresh.scheme=\"sometimes\""],
            "controller.refresh.scheme",
        ),
    ] {
        let err = config_error(sets);
        assert!(err.contains(key), "{sets:?}: {err}");
    }
}

/// First refresh interval of rank 0, channel 0: (start, end).
fn first_refresh(u: &[Unavailability]) -> (u64, u64) {
    let i = u[0]
        .intervals
        .iter()
        .find(|i| i.cause == Cause::Refresh)
        .expect("a refresh");
    (i.start_mem_cycles, i.end_mem_cycles)
}

/// Reads of one open row every 50 cycles until `busy_until` (the rank never idles for 160
/// cycles), then one read at `end`.
fn busy_then_idle(busy_until: u64, end: u64) -> Vec<bulksim_core::workload::trace::TraceRecord> {
    let mut r: Vec<_> = (0..busy_until / 50)
        .map(|i| read(i * 50, (i % 64) * 64))
        .collect();
    r.push(read(end, 64));
    r
}

#[test]
fn elastic_refresh_waits_for_the_rank_to_idle_and_demand_does_not() {
    // 32 Gb at normal temperature: tREFI 6240 cycles, tRFC 512; idle_ns 200 = 160 cycles.
    let busy = 3 * 6240 + 100;
    let records = busy_then_idle(busy, 20 * 6240);
    let run = |c: &Config| {
        let (stats, router) =
            sim::run_keeping_memory(c, &mut records.clone().into_iter(), None, None).unwrap();
        (stats, router.devices[0].channels.unavailability())
    };
    let (demand, du) = run(&ddr4_1600(32, &[]));
    assert_eq!(first_refresh(&du).0, 6240, "on demand: blocked when due");
    let (elastic, eu) = run(&ddr4_1600(32, &["controller.refresh.scheme=\"elastic\""]));
    let (start, end) = first_refresh(&eu);
    // The last busy read arrives at `last` and is served a few cycles later (a row hit); the
    // rank then idles 160 cycles.
    let last = (busy / 50 - 1) * 50;
    assert!(
        start >= last + 160 && start <= last + 160 + 30,
        "elastic REF blocked from {start}, the rank idled from about {last}"
    );
    assert_eq!(
        end - start,
        11 + 512,
        "an idle rank's REF waits only for its PREA (tRP) and lasts tRFC"
    );
    // The REFs owed while busy are all paid in the idle time: as many as on demand, but the
    // one due at the last read (at 20 tREFI), still owed when the run ends.
    assert_eq!(elastic.refreshes, demand.refreshes - 1);
    // Forced when the rank never idles (busy through 9 tREFI): by default (`per_ref`) once
    // 8 are owed, 7 tREFI after the first fell due; under `window` at the first window's end.
    for (deadline, first) in [("per_ref", 6240 + 7 * 6240), ("window", 6240 + 8 * 6240)] {
        let records = busy_then_idle(9 * 6240 + 6240 / 2, 20 * 6240);
        let d = format!("controller.refresh.elastic_deadline=\"{deadline}\"");
        let (stats, router) = sim::run_keeping_memory(
            &ddr4_1600(32, &["controller.refresh.scheme=\"elastic\"", &d]),
            &mut records.into_iter(),
            None,
            None,
        )
        .unwrap();
        let u = router.devices[0].channels.unavailability();
        let (start, _) = first_refresh(&u);
        assert_eq!(start, first, "{deadline}: the first REF forced");
        assert!(stats.refreshes >= 19);
    }
}

#[test]
fn pausing_refreshes_in_fragments_of_the_chosen_granularity() {
    // Optimistic: 8 fragments of tRFC/8 = 64 cycles per 1x tREFI; realistic 4: FGR-4x REFs
    // (280 cycles each, 4 per tREFI: 1400 ns per 7.8 us).
    let window = 6240;
    let cycles = 50 * window;
    for (granularity, refs_per_window, busy_ns) in [(8, 8, 640.0), (4, 4, 1400.0), (2, 2, 960.0)] {
        let g = format!("controller.refresh.pause_granularity={granularity}");
        let c = ddr4_1600(32, &["controller.refresh.scheme=\"pausing\"", &g]);
        let (s, u) = idle(&c, cycles);
        let per_window = s.refreshes as f64 / 50.0;
        assert!(
            (per_window - refs_per_window as f64).abs() <= 0.1 * refs_per_window as f64,
            "granularity {granularity}: {per_window} REFs per tREFI"
        );
        let ns = unavailable_per(&u, window, cycles) * TCK_NS;
        assert!(
            (ns - busy_ns).abs() < 0.02 * busy_ns,
            "granularity {granularity}: {ns} ns per 7.8 us, expected {busy_ns}"
        );
    }
    // A busy rank takes its fragments in its idle gaps, so its REFs keep up.
    let records = busy_then_idle(4 * window, 6 * window);
    let c = ddr4_1600(32, &["controller.refresh.scheme=\"pausing\""]);
    let (s, _) = sim::run_keeping_memory(&c, &mut records.into_iter(), None, None).unwrap();
    assert!(s.refreshes >= 6 * 8 - 8, "{} fragments", s.refreshes);
    let err = config_error(&[
        "controller.refresh.scheme=\"pausing\"",
        "controller.refresh.granularity=2",
    ]);
    assert!(err.contains("controller.refresh.granularity"), "{err}");
}

#[test]
fn pcd_serves_a_rank_before_its_refresh_and_keeps_the_act_balance() {
    // Two ranks, random reads and writes: the rank due next gets its requests served first,
    // so fewer rows opened for requests are closed by its precharge-all.
    let base = ["dram.ranks=2", "sim.record_intervals=false"];
    let demand = run_generated(
        &ddr4_1600(32, &base),
        bulksim_core::workload::generate::Pattern::Random,
        40_000,
        0,
        1.0 / 3.0,
    );
    let mut sets = base.to_vec();
    sets.push("controller.refresh.scheme=\"pcd\"");
    let pcd = run_generated(
        &ddr4_1600(32, &sets),
        bulksim_core::workload::generate::Pattern::Random,
        40_000,
        0,
        1.0 / 3.0,
    );
    assert!(pcd.wasted_acts.refresh < demand.wasted_acts.refresh);
    for s in [&demand, &pcd] {
        assert_eq!(
            s.commands["ACT"],
            s.row_misses + s.row_conflicts + s.wasted_acts.refresh
        );
    }
}

#[test]
fn adaptive_refresh_stays_at_1x_when_idle_and_goes_to_4x_when_reads_wait() {
    // Idle: no read ever waits for a refreshing rank, so every window stays at 1x and the
    // refreshes are demand's exactly.
    let cycles = 40 * 6240;
    let (demand, du) = idle(&ddr4_1600(32, &[]), cycles);
    let (adaptive, au) = idle(
        &ddr4_1600(32, &["controller.refresh.scheme=\"adaptive\""]),
        cycles,
    );
    assert_eq!(adaptive.refreshes, demand.refreshes);
    assert_eq!(
        au[0].ranks[0].refresh_mem_cycles,
        du[0].ranks[0].refresh_mem_cycles
    );
    assert_eq!(adaptive.refresh.adaptive_fine_windows, 0);
    assert!(adaptive.refresh.adaptive_windows >= 4);
    assert_eq!(
        adaptive.energy.components.refresh_nj,
        demand.energy.components.refresh_nj
    );
    // A flood of random requests keeps the read queue full: after the first window (1x),
    // every window refreshes at 4x: four REFs of 280 cycles per tREFI.
    let flood = |sets: &[&str]| {
        run_generated(
            &ddr4_1600(32, sets),
            bulksim_core::workload::generate::Pattern::Random,
            60_000,
            0,
            1.0 / 3.0,
        )
    };
    let a = flood(&["controller.refresh.scheme=\"adaptive\""]);
    let r = &a.refresh;
    assert!(r.adaptive_windows >= 3, "{r:?}");
    assert_eq!(r.adaptive_fine_windows, r.adaptive_windows - 1, "{r:?}");
    let windows_cycles = 8 * 6240;
    let fine_refs_expected = 4 * 8 * r.adaptive_fine_windows;
    assert!(
        a.refreshes >= 8 + fine_refs_expected - 4 && a.refreshes <= a.mem_cycles / 1560 + 1,
        "{} REFs in {} cycles ({} windows of {windows_cycles})",
        a.refreshes,
        a.mem_cycles,
        r.adaptive_windows
    );
    // Energy: each 4x REF is charged its own (shorter) tRFC, so the refresh energy lies
    // between the same count of 4x REFs and of 1x REFs.
    let demand = flood(&[]);
    let per_ref_1x = demand.energy.components.refresh_nj / demand.refreshes as f64;
    assert!(a.energy.components.refresh_nj < per_ref_1x * a.refreshes as f64);
    assert!(a.energy.components.refresh_nj > per_ref_1x * 280.0 / 512.0 * a.refreshes as f64);
    assert_eq!(
        a.commands["ACT"],
        a.row_misses + a.row_conflicts + a.wasted_acts.refresh
    );
    assert!(config_error(&[
        "controller.refresh.scheme=\"adaptive\"",
        "controller.refresh.granularity=2"
    ])
    .contains("controller.refresh.granularity"));
}

/// A busy random trace (reads and 30% writes as fast as the memory takes them) on 2 channels
/// x 2 ranks of 32 Gb at extended temperature under the system stagger: every rank is almost
/// never idle for 200 ns, so elastic refresh mostly forces its REFs at its windows' ends.
fn busy_random(scheme: &str) -> Stats {
    busy_random_with(scheme, &[])
}

fn busy_random_with(scheme: &str, extra: &[&str]) -> Stats {
    let scheme = format!("controller.refresh.scheme=\"{scheme}\"");
    let mut sets = vec![
        "dram.preset=\"DDR4_32Gb_x8_1600\"",
        "dram.channels=2",
        "dram.ranks=2",
        "dram.temperature=\"extended\"",
        "controller.refresh.stagger=\"system\"",
        "controller.address_mapping=\"bank_xor\"",
        &scheme,
    ];
    sets.extend_from_slice(extra);
    let c = config(&sets);
    let opts = GenOptions {
        pattern: Pattern::Random,
        requests: 120_000,
        interval: 0,
        write_fraction: 0.3,
        footprint: 1 << 30,
        seed: 7,
    };
    sim::run(&c, &mut Generator::new(opts).unwrap(), None, None).unwrap()
}

#[test]
fn elastic_refresh_keeps_the_stagger_on_a_busy_trace() {
    // On demand the system stagger refreshes one rank at a time: any-rank refresh time is
    // every REF's tRFC (512 cycles), with nothing at two ranks.
    let demand = busy_random("demand");
    assert_eq!(demand.refresh.most_ranks_refreshing, 1);
    let any = demand.refreshes as f64 * 512.0 * TCK_NS;
    assert_eq!(demand.refresh.ranks_refreshing_ns.len(), 1);
    assert!((demand.refresh.ranks_refreshing_ns[0] - any).abs() < 1e-6);
    // Elastic (default `per_ref`): each rank's REFs are forced as they fell due, 8 tREFI
    // later, so forced REFs of the ranks keep the stagger's spacing (with `window` each
    // rank's windows end 8 tREFI / 4 = 6240 cycles after the previous rank's, so a forced
    // burst of at most 8 REFs, under 4,300 cycles, ends before the next rank's window does);
    // and a REF issued early, in an idle moment of its rank, waits while another rank
    // refreshes. So one rank at a time, as on
    // demand. (Windows counted from each rank's first REF, 780 cycles apart, and early REFs
    // free to start, had all 4 ranks refreshing at once: a refreshing rank stalls the trace,
    // which idles the other ranks, which then refresh.)
    let elastic = busy_random("elastic");
    assert_eq!(
        elastic.refresh.most_ranks_refreshing, 1,
        "{:?}",
        elastic.refresh
    );
    let at = &elastic.refresh.ranks_refreshing_ns;
    assert_eq!(at.len(), 1);
    assert!((at[0] - elastic.refreshes as f64 * 512.0 * TCK_NS).abs() < 1e-6);
    assert_eq!(elastic.refresh.overlap_ns, 0.0);
}

/// Elastic refresh that keeps the stagger gains over demand only when a forced REF comes
/// one at a time (`per_ref`, the postponement limit): forcing every owed REF at a window's
/// end stalls a busy rank for a whole burst, and with one rank at a time the next rank's
/// burst waits for it, so it loses to demand. Free of the stagger, either deadline lets
/// ranks refresh together and gains, approaching simultaneous refresh.
#[test]
fn elastic_gains_over_demand_when_it_forces_one_ref_at_a_time() {
    let demand = busy_random("demand").mem_cycles;
    let per_ref = busy_random_with(
        "elastic",
        &["controller.refresh.elastic_deadline=\"per_ref\""],
    );
    let window = busy_random_with(
        "elastic",
        &["controller.refresh.elastic_deadline=\"window\""],
    );
    assert_eq!(per_ref.refresh.most_ranks_refreshing, 1);
    assert_eq!(window.refresh.most_ranks_refreshing, 1);
    assert!(
        per_ref.mem_cycles < demand,
        "{} vs {demand}",
        per_ref.mem_cycles
    );
    assert!(
        window.mem_cycles > demand,
        "{} vs {demand}",
        window.mem_cycles
    );
    let free = busy_random_with(
        "elastic",
        &[
            "controller.refresh.elastic_deadline=\"per_ref\"",
            "controller.refresh.elastic_keeps_stagger=false",
        ],
    );
    assert!(free.mem_cycles < per_ref.mem_cycles);
    assert!(free.refresh.most_ranks_refreshing > 1);
    assert!(
        config_error(&["controller.refresh.elastic_deadline=\"late\""])
            .contains("controller.refresh.elastic_deadline")
    );
}

#[test]
fn ranks_refreshing_at_once_counts_idle_rounds_booked_in_closed_form() {
    // The channel stagger puts rank r of both channels at the same cycles: two at once for
    // every refresh. Without recorded intervals an idle controller books its refreshes in
    // closed form; the count must be the one stepping gives.
    let sets = |record: &'static str| {
        config(&[
            "dram.preset=\"DDR4_32Gb_x8_1600\"",
            "dram.channels=2",
            "dram.ranks=2",
            // No row left open: every REF issues when due, without a PREA first.
            "controller.page_policy=\"closed\"",
            record,
        ])
    };
    let cycles = 40 * 6240;
    let run = |c: &Config| run_records(c, vec![read(0, 0), read(cycles, 64)]);
    let booked = run(&sets("sim.record_intervals=false"));
    let stepped = run(&sets("sim.record_intervals=true"));
    assert_eq!(booked.refresh, stepped.refresh);
    assert_eq!(booked.refresh.most_ranks_refreshing, 2);
    let any = booked.refreshes as f64 / 2.0 * 512.0 * TCK_NS;
    let at = &booked.refresh.ranks_refreshing_ns;
    assert!(
        at.len() == 2 && (at[0] - any).abs() < 1e-6 && (at[1] - any).abs() < 1e-6,
        "{at:?}"
    );
}
