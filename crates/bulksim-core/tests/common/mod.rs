//! Helpers shared by the integration tests: configs by override and runs over in-memory
//! request lists or generated traces.
#![allow(dead_code)]

use bulksim_core::controller::RequestKind;
use bulksim_core::workload::generate::{GenOptions, Generator, Pattern};
use bulksim_core::workload::trace::TraceRecord;
use bulksim_core::{sim, Config, Stats};

pub fn config(sets: &[&str]) -> Config {
    let c = Config::default().apply_sets(sets).unwrap();
    c.validate().unwrap();
    c
}

pub fn run_records(config: &Config, records: Vec<TraceRecord>) -> Stats {
    sim::run(config, &mut records.into_iter(), None, None).unwrap()
}

pub fn run_generated(
    config: &Config,
    pattern: Pattern,
    requests: u64,
    interval: u64,
    write_fraction: f64,
) -> Stats {
    let opts = GenOptions {
        pattern,
        requests,
        interval,
        write_fraction,
        footprint: 1 << 30,
        seed: 42,
    };
    sim::run(config, &mut Generator::new(opts).unwrap(), None, None).unwrap()
}

pub fn read(cycle: u64, addr: u64) -> TraceRecord {
    TraceRecord::access(cycle, RequestKind::Read, addr)
}

pub fn write(cycle: u64, addr: u64) -> TraceRecord {
    TraceRecord::access(cycle, RequestKind::Write, addr)
}

/// Stats without the wall-clock section, as JSON text, for byte-identical comparisons.
pub fn deterministic_json(s: &Stats) -> String {
    let mut v = serde_json::to_value(s).unwrap();
    v.as_object_mut().unwrap().remove("host");
    serde_json::to_string(&v).unwrap()
}
