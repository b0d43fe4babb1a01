//! Idle skipping changes nothing: every pattern gives byte-identical stats with it on and off.

use crate::common;
use bulksim_core::workload::generate::Pattern;
use common::*;

#[test]
fn skipping_idle_cycles_gives_identical_stats() {
    let cases: &[(&str, Pattern, u64, f64, &[&str])] = &[
        ("stream", Pattern::Stream, 0, 0.0, &[]),
        ("random", Pattern::Random, 7, 0.0, &[]),
        ("mixed", Pattern::Random, 3, 0.4, &[]),
        ("pagecopy", Pattern::PageCopy, 2, 0.0, &[]),
        (
            "refresh-heavy",
            Pattern::Random,
            5,
            0.3,
            &["dram.timing.nREFI=900"],
        ),
        ("multi-rank", Pattern::Random, 1, 0.3, &["dram.ranks=4"]),
        (
            "multi-channel",
            Pattern::Random,
            0,
            0.3,
            &["dram.channels=2", "dram.ranks=2"],
        ),
        (
            "closed-fcfs",
            Pattern::Random,
            4,
            0.3,
            &["controller.page_policy=closed", "controller.scheduler=fcfs"],
        ),
        (
            "ddr3-cap",
            Pattern::Stream,
            1,
            0.5,
            &[
                "dram.preset=\"DDR3_2Gb_x8_1066\"",
                "controller.row_hit_cap=4",
            ],
        ),
    ];
    for (name, pattern, interval, writes, sets) in cases {
        let mut on: Vec<&str> = sets.to_vec();
        on.push("sim.skip_idle=true");
        let mut off: Vec<&str> = sets.to_vec();
        off.push("sim.skip_idle=false");
        let a = run_generated(&config(&on), *pattern, 4000, *interval, *writes);
        let b = run_generated(&config(&off), *pattern, 4000, *interval, *writes);
        assert!(a.mem_cycles > 0 && a.reads + a.writes == 4000, "{name}");
        assert_eq!(
            deterministic_json(&a),
            deterministic_json(&b),
            "{name}: skip_idle changed the stats"
        );
    }
}

#[test]
fn same_config_and_input_give_byte_identical_stats() {
    let c = config(&["dram.ranks=2"]);
    let a = run_generated(&c, Pattern::Random, 5000, 1, 0.3);
    let b = run_generated(&c, Pattern::Random, 5000, 1, 0.3);
    assert_eq!(deterministic_json(&a), deterministic_json(&b));
}
