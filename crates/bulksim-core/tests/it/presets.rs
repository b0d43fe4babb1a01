//! The rank-assignment presets (issue #15 item 1): Table II in cycles, Table I's refresh
//! timings at every granularity, extended temperature, and PCM as data (no REF, tWR 100).

use crate::common;

use bulksim_core::spec::presets::preset;
use bulksim_core::spec::Timing;
use bulksim_core::workload::generate::{GenOptions, Generator, Pattern};
use bulksim_core::workload::trace::TraceRecord;
use bulksim_core::{sim, Config};
use common::{config, dir, write};

/// Table II at tCK 1.25 ns, with CWL 9 (bulksim's choice) and the given refresh timings.
fn table_ii(n_rfc: [u32; 3], n_refi: [u32; 3]) -> Timing {
    Timing {
        n_bl: 4,
        n_cl: 11,
        n_cwl: 9,
        n_rcd: 11,
        n_rp: 11,
        n_rpab: 0,
        n_ras: 28,
        n_rc: 39,
        n_rtp: 6,
        n_wr: 12,
        n_ccd_s: 4,
        n_ccd_l: 5,
        n_ccd_l_wr: 0,
        n_rrd_s: 4,
        n_rrd_l: 5,
        n_wtr_s: 2,
        n_wtr_l: 6,
        n_faw: 20,
        n_rtrs: 2,
        n_rfc: n_rfc[0],
        n_rfc2: n_rfc[1],
        n_rfc4: n_rfc[2],
        n_refi: n_refi[0],
        n_refi2: n_refi[1],
        n_refi4: n_refi[2],
        // DDR4 has no same-bank refresh.
        n_rfcsb: 0,
        n_refsbrd: 0,
    }
}

/// tREFI 7.8 / 3.9 / 1.95 us at 1.25 ns.
const REFI: [u32; 3] = [6240, 3120, 1560];

#[test]
fn ddr4_presets_hold_table_ii_and_table_i_in_cycles() {
    // Table I's ns / 1.25, each exact: (8 Gb) 350/240/160, (16 Gb) 480/350/240,
    // (32 Gb) 640/480/350.
    for (name, density_mbit, rows, rfc) in [
        ("DDR4_8Gb_x8_1600", 8192, 65536, [280, 192, 128]),
        ("DDR4_16Gb_x8_1600", 16384, 131072, [384, 280, 192]),
        ("DDR4_32Gb_x8_1600", 32768, 262144, [512, 384, 280]),
    ] {
        let spec = preset(name).unwrap();
        assert_eq!(spec.timing, table_ii(rfc, REFI), "{name}");
        assert_eq!(spec.tck_ns, 1.25);
        assert_eq!(spec.data_rate_mts, 1600);
        assert!(spec.has_refresh);
        let o = &spec.organisation;
        assert_eq!((o.bankgroups, o.banks_per_group), (4, 4), "{name}");
        assert_eq!(
            (o.density_mbit, o.rows, o.columns, o.dq),
            (density_mbit, rows, 1024, 8)
        );
        // 8 x8 chips per rank: a rank holds density x 8 bits = density bytes.
        assert_eq!(
            o.channel_bytes(),
            density_mbit as u64 * 1024 * 1024,
            "{name}"
        );
    }
}

#[test]
fn pcm_is_ddr4_with_pcm_array_timings_eight_banks_and_no_refresh() {
    let spec = preset("PCM_x8_1600").unwrap();
    let expected = Timing {
        n_ras: 45,
        n_rc: 55,
        n_wr: 100,
        ..table_ii([0; 3], [0; 3])
    };
    assert_eq!(spec.timing, expected);
    assert!(!spec.has_refresh);
    assert_eq!(spec.organisation.banks_per_rank(), 8);
    // Same rule table as DDR4 (no PCM branch anywhere): only the values differ.
    assert_eq!(spec.standard, preset("DDR4_8Gb_x8_1600").unwrap().standard);
}

#[test]
fn extended_temperature_halves_every_refresh_interval() {
    let hot = config(&[
        "dram.preset=\"DDR4_32Gb_x8_1600\"",
        "dram.temperature=\"extended\"",
    ])
    .spec()
    .unwrap();
    let t = &hot.timing;
    // 3.9 us, 1.95 us and 0.975 us at 1.25 ns; tRFC unchanged.
    assert_eq!((t.n_refi, t.n_refi2, t.n_refi4), (3120, 1560, 780));
    assert_eq!((t.n_rfc, t.n_rfc2, t.n_rfc4), (512, 384, 280));
    let normal = config(&["dram.preset=\"DDR4_32Gb_x8_1600\""])
        .spec()
        .unwrap();
    assert_eq!(normal.timing.n_refi, 6240);
    // An explicit override is taken as given, after the halving.
    let set = config(&[
        "dram.preset=\"DDR4_32Gb_x8_1600\"",
        "dram.temperature=\"extended\"",
        "dram.timing.nREFI=5000",
    ]);
    assert_eq!(set.spec().unwrap().timing.n_refi, 5000);
}

#[test]
fn extended_temperature_doubles_the_refreshes_of_a_run() {
    let refreshes = |temperature: &str| {
        let c = config(&[
            "dram.preset=\"DDR4_8Gb_x8_1600\"",
            &format!("dram.temperature=\"{temperature}\""),
        ]);
        // One read at cycle 100 000: refreshes due by then are 100 000 / tREFI.
        common::run_records(&c, vec![common::read(100_000, 0)]).refreshes
    };
    assert_eq!(refreshes("normal"), 100_000 / 6240);
    assert_eq!(refreshes("extended"), 100_000 / 3120);
}

#[test]
fn a_bad_temperature_names_the_key_and_the_values() {
    let e = Config::default()
        .apply_sets(&["dram.temperature=\"hot\""])
        .unwrap_err()
        .to_string();
    assert!(e.contains("dram.temperature"), "{e}");
    assert!(e.contains("extended"), "{e}");
}

#[test]
fn refreshing_a_part_without_ref_is_an_error_naming_the_key() {
    let c = Config::default()
        .apply_sets(&["dram.preset=\"PCM_x8_1600\""])
        .unwrap();
    let e = c.validate().unwrap_err().to_string();
    assert!(
        e.contains("controller.refresh") && e.contains("PCM_x8_1600") && e.contains("\"none\""),
        "{e}"
    );
    // The part alone (what `spec show` prints) resolves.
    assert!(!c.dram_spec().unwrap().has_refresh);
    // A memory device of PCM is checked the same way, named by its index.
    let e = Config::default()
        .apply_sets(&[
            "memory.device.0.preset=\"DDR4_8Gb_x8_1600\"",
            "memory.device.1.preset=\"PCM_x8_1600\"",
        ])
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("memory.device.1") && e.contains("controller.refresh"),
        "{e}"
    );
}

/// (cycle, command, bank group, bank, row) of every command of a command log.
fn read_log(path: &std::path::Path) -> Vec<(u64, String, i64, i64, i64)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].to_string(),
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
                f[7].parse().unwrap(),
            )
        })
        .collect()
}

/// The cycles from the first WR to the PRE that closes its bank, after two writes to two
/// rows of one bank (the second forces the precharge), and the log.
fn write_to_precharge(preset_name: &str) -> u64 {
    let c = config(&[
        &format!("dram.preset=\"{preset_name}\""),
        "controller.refresh=\"none\"",
    ]);
    let o = c.spec().unwrap().organisation;
    // RoBaRaCoCh with one rank and channel: the next row of the same bank lies one row of
    // every bank further on.
    let next_row_same_bank = o.banks_per_rank() as u64 * o.row_bytes();
    let d = dir("presets", preset_name);
    let log = d.join("commands.csv");
    let records: Vec<TraceRecord> = vec![write(0, 0), write(1, next_row_same_bank)];
    sim::run(&c, &mut records.into_iter(), Some(&log), None).unwrap();
    let cmds = read_log(&log);
    let acts: Vec<_> = cmds.iter().filter(|c| c.1 == "ACT").collect();
    assert_eq!(acts.len(), 2, "{cmds:?}");
    assert_eq!((acts[0].2, acts[0].3), (acts[1].2, acts[1].3), "same bank");
    assert_ne!(acts[0].4, acts[1].4, "different rows");
    let wr = cmds.iter().find(|c| c.1 == "WR").unwrap().0;
    let pre = cmds.iter().find(|c| c.1 == "PRE").unwrap().0;
    pre - wr
}

#[test]
fn pcm_write_recovery_is_visible_in_the_command_log() {
    // WR to PRE = CWL + burst + tWR: 9 + 4 + 100 on PCM, 9 + 4 + 12 on DDR4 (tRAS, from the
    // earlier ACT, is shorter on both).
    assert_eq!(write_to_precharge("PCM_x8_1600"), 113);
    assert_eq!(write_to_precharge("DDR4_8Gb_x8_1600"), 25);
}

#[test]
fn pcm_runs_a_random_trace_without_ref_and_keeps_write_recovery() {
    let c = config(&["dram.preset=\"PCM_x8_1600\"", "controller.refresh=\"none\""]);
    let d = dir("presets", "pcm-random");
    let log = d.join("commands.csv");
    let opts = GenOptions {
        pattern: Pattern::Random,
        requests: 3000,
        interval: 2,
        write_fraction: 0.5,
        footprint: 1 << 30,
        seed: 7,
    };
    let stats = sim::run(&c, &mut Generator::new(opts).unwrap(), Some(&log), None).unwrap();
    assert_eq!(stats.reads + stats.writes, 3000);
    assert_eq!(stats.refreshes, 0);
    let cmds = read_log(&log);
    assert!(cmds.iter().all(|c| c.1 != "REF" && c.1 != "PREA"));
    // Every PRE after a WR to its bank waits CWL + burst + tWR = 113 cycles; some wait
    // exactly that (the run is write-bound enough to precharge at the earliest).
    let mut last_write = std::collections::BTreeMap::new();
    let mut gaps = Vec::new();
    for (cycle, cmd, bg, bank, _) in &cmds {
        match cmd.as_str() {
            "WR" => {
                last_write.insert((*bg, *bank), *cycle);
            }
            "PRE" => {
                if let Some(w) = last_write.remove(&(*bg, *bank)) {
                    gaps.push(cycle - w);
                }
            }
            "ACT" => {
                last_write.remove(&(*bg, *bank));
            }
            _ => {}
        }
    }
    assert!(!gaps.is_empty());
    assert_eq!(*gaps.iter().min().unwrap(), 113, "{gaps:?}");
}

#[test]
fn pcm_runs_idle_gaps_without_a_refresh_interval() {
    // No command log: idle gaps take the refresh-skipping path, which must not divide by
    // PCM's nREFI of 0. Two reads far apart to two rows of bank 0 (1 GiB is row 16384 of
    // bank 0 under RoBaRaCoCh: 8 banks x 8 KiB rows per row index): the second is a row
    // conflict, tRP + tRCD + tCL + tBL.
    let c = config(&["dram.preset=\"PCM_x8_1600\"", "controller.refresh=\"none\""]);
    let s = common::run_records(
        &c,
        vec![common::read(0, 0), common::read(1_000_000, 1 << 30)],
    );
    assert_eq!(s.refreshes, 0);
    assert_eq!(s.reads, 2);
    assert_eq!(s.row_conflicts, 1);
    assert_eq!(s.read_latency.max_mem_cycles, 11 + 11 + 11 + 4);
}

/// A preset whose currents are borrowed from another part says so in every run's summary, not
/// only in `energy.power_source`; a part with its own currents does not.
#[test]
fn a_run_on_stand_in_currents_says_so_in_its_summary() {
    use bulksim_core::spec::is_stand_in_power;
    use bulksim_core::spec::presets::PRESET_NAMES;
    let stand_ins: Vec<&str> = PRESET_NAMES
        .iter()
        .copied()
        // DDR5's, LPDDR5's and HBM3's presets all borrow DDR4 currents until their own
        // energy (tests/it/ddr5.rs, tests/it/lpddr5_hbm3.rs).
        .filter(|n| {
            !["DDR5", "LPDDR5", "HBM3"].iter().any(|s| n.starts_with(s))
                && is_stand_in_power(&preset(n).unwrap().power.source)
        })
        .collect();
    assert_eq!(
        stand_ins,
        [
            "DDR3_4Gb_x8_1600",
            "DDR4_8Gb_x8_1600",
            "DDR4_16Gb_x8_1600",
            "DDR4_32Gb_x8_1600",
            "PCM_x8_1600",
            "DRAM_CMMP_1000",
            "PCM_CMMP_400"
        ]
    );
    let summary = |name: &str| {
        let c = config(&[&format!("dram.preset=\"{name}\"")]);
        sim::run(&c, &mut vec![write(0, 0)].into_iter(), None, None)
            .unwrap()
            .summary()
    };
    let s = summary("DDR3_4Gb_x8_1600");
    assert!(
        s.contains(
            "\nnote                the energy uses stand-in currents, not this part's own: \
             stand-in: Micron 2Gb x8 DDR3-1066 currents (no 4Gb DDR3-1600 values entered yet)\n"
        ),
        "{s}"
    );
    assert!(!summary("DDR3_2Gb_x8_1066").contains("stand-in"));
    assert!(!summary("DDR4_8Gb_x8_2400").contains("stand-in"));
}
