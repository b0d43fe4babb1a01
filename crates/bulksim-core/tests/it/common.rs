//! Helpers shared by the integration tests: configs by override, runs over in-memory request
//! lists or generated traces, and full-system workload directories written event by event.
#![allow(dead_code)]

use bulksim_core::controller::RequestKind;
use bulksim_core::workload::generate::{GenOptions, Generator, Pattern};
use bulksim_core::workload::program::{Event, ProgramWriter};
use bulksim_core::workload::trace::TraceRecord;
use bulksim_core::{sim, Config, Stats};
use std::path::{Path, PathBuf};

/// The RowClone paper's system as forkbench's reproduction sets it up (DDR3-1066, 4 KB rows,
/// 2 channels, pages row-interleaved so a 4 KB page is one row of one channel), with
/// further overrides.
pub fn paper_system(more: &[&str]) -> Config {
    let mut sets = vec![
        "dram.preset=\"DDR3_2Gb_x8_1066\"",
        "dram.columns=512",
        "dram.channels=2",
        "controller.address_mapping=\"RoRaBaChCo\"",
        "controller.read_queue_size=64",
        "controller.write_queue_size=64",
    ];
    sets.extend_from_slice(more);
    config(&sets)
}

/// A fresh, empty temporary directory for this test process, named `prefix-name`.
pub fn dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes thread `id`'s program (a text trace) into workload directory `d`.
pub fn write_thread(d: &Path, id: u32, child: bool, events: &[Event]) {
    let mut w = ProgramWriter::create(&d.join(format!("thread-{id}.trace")), child).unwrap();
    for e in events {
        w.write(e).unwrap();
    }
    w.finish().unwrap();
}

/// Runs one thread: [base, base + bytes) mapped resident, then `body`, then an exit (a
/// workload directory named after `prefix` and `name`).
pub fn run_resident(
    prefix: &str,
    name: &str,
    config: &Config,
    (base, bytes): (u64, u64),
    body: &[Event],
) -> (
    bulksim_core::system::stats::SystemStats,
    bulksim_core::system::System,
) {
    let d = dir(prefix, name);
    let mut events = vec![Event::MapResident { vaddr: base, bytes }];
    events.extend_from_slice(body);
    events.push(Event::Exit);
    write_thread(&d, 0, false, &events);
    bulksim_core::system::run_workload(config, &d).unwrap()
}

/// `configs/<file>` with the overrides, validated.
pub fn config_file(file: &str, sets: &[&str]) -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../configs")
        .join(file);
    let c = Config::from_file(&path).unwrap().apply_sets(sets).unwrap();
    c.validate().unwrap();
    c
}

/// Whether core 0's array at cache `level` holds the line of thread 0's `va`.
pub fn holds(sys: &bulksim_core::system::System, level: usize, va: u64) -> bool {
    let pid = sys.pid_of(0).unwrap();
    let pa = sys.os().lookup(pid, va).unwrap();
    sys.cache_holds(level, 0, pa)
}

/// The memory image's bytes at thread 0's `vaddr` (not the caches').
pub fn image_virtual(sys: &bulksim_core::system::System, vaddr: u64, len: usize) -> Vec<u8> {
    let pid = sys.pid_of(0).unwrap();
    (0..len as u64)
        .map(|i| {
            let mut b = [0u8];
            sys.image()
                .read(sys.os().lookup(pid, vaddr + i).unwrap(), &mut b);
            b[0]
        })
        .collect()
}

pub fn config(sets: &[&str]) -> Config {
    let c = Config::default().apply_sets(sets).unwrap();
    c.validate().unwrap();
    c
}

/// The one error a config with these overrides gives (from the override or from validation).
pub fn config_error(sets: &[&str]) -> String {
    Config::default()
        .apply_sets(sets)
        .and_then(|c| c.validate().map(|_| c))
        .expect_err("the config should be refused")
        .to_string()
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
