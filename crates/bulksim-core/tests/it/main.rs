//! The engine's integration tests, built as one test binary (`cargo test -p bulksim-core
//! --test it`): one binary links the engine and the test harness once instead of once per
//! file, which was most of the cost of building the tests (docs/performance.md, "`make test`
//! on a fresh clone"). Each file is a module, so a test's path names its group:
//! `cargo test -p bulksim-core --test it hybrid::` runs one file's tests, and
//! `... --test it hybrid::promote` one test. Helpers shared by the files are in `common`.
//! Every test runs in this one process, so the files a test writes go under a
//! `common::dir` prefix no other file uses, and no test changes process-wide state (the
//! environment, the current directory).

mod bulk;
mod closed_forms;
mod cmmp_presets;
mod common;
mod components;
mod config_limits;
mod controller;
mod copy_engines;
mod copy_engines_dram;
mod ddr5;
mod ddr5_refresh;
mod determinism;
mod device_timing;
mod endless;
mod energy;
mod frame_reuse;
mod hostile_inputs;
mod hybrid;
mod hybrid_random;
mod idle_skip;
mod interruptions;
mod layering;
mod lpddr5_hbm3;
mod mappings;
mod measurement;
mod memcpy_software_nt;
mod presets;
mod rank_allocators;
mod refresh_closed_forms;
mod refresh_policies;
mod rowclone_traces;
mod standin;
mod startup;
mod synthetic;
mod system;
mod thread_stats;
mod workload_events;
mod workload_formats;
mod write_drains;

/// Every `.rs` file beside this one is declared above: a file added here without its `mod`
/// line would compile into nothing and its tests would silently never run.
#[test]
fn every_file_in_this_folder_is_a_module() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = std::fs::read_to_string(here.join("main.rs")).expect("read tests/it/main.rs");
    let mut missing: Vec<String> = std::fs::read_dir(&here)
        .expect("read tests/it")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|m| m != "main" && !main.lines().any(|l| l == format!("mod {m};")))
        .collect();
    missing.sort();
    assert!(
        missing.is_empty(),
        "tests/it/main.rs declares no `mod` for: {}",
        missing.join(", ")
    );
}
