//! Config values beyond what the model can simulate are errors naming the key, the value and
//! the allowed range (issue #13, item 2); the host memory a run allocates up front is checked
//! before anything is allocated; `config check` names every bad key of a file.

use crate::common;

use bulksim_core::host_memory::{self, RunKind};
use bulksim_core::limits::{self, MAX_MEMORY_BYTES, MAX_TIMING_CYCLES};
use bulksim_core::spec::presets::preset;
use bulksim_core::workload::program::Event;
use bulksim_core::{system, Config};
use common::{config, read, run_records};

fn problem(sets: &[&str]) -> String {
    Config::default()
        .apply_sets(sets)
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string()
}

#[test]
fn a_timing_that_overflows_the_rule_latencies_is_rejected_with_key_value_and_range() {
    // 4294967295 wrapped nCL + nBL to 3 and made reads faster.
    let m = problem(&["dram.timing.nCL=4294967295"]);
    assert!(
        m.starts_with("dram.timing.nCL: 4294967295 is out of range; expected 0..=1073741823"),
        "{m}"
    );
    let m = problem(&["dram.timing.nWR=1073741824"]);
    assert!(m.starts_with("dram.timing.nWR: 1073741824"), "{m}");
    // Four parameters at the limit plus a constant still fit a rule's u32 latency.
    assert!(4 * MAX_TIMING_CYCLES as u64 + 2 <= u32::MAX as u64);
}

#[test]
fn the_largest_timing_gives_the_read_latency_its_definition_says() {
    // One read to a closed bank: ACT, nRCD later RD, nCL later data for nBL cycles.
    let t = preset("DDR4_8Gb_x8_2400").unwrap().timing;
    let n_cl = MAX_TIMING_CYCLES as u64;
    let c = config(&[
        &format!("dram.timing.nCL={n_cl}"),
        "controller.refresh=none",
    ]);
    let stats = run_records(&c, vec![read(0, 0)]);
    assert_eq!(
        stats.read_latency.p50_mem_cycles,
        t.n_rcd as u64 + n_cl + t.n_bl as u64
    );
}

#[test]
fn memory_beyond_32_bit_frame_numbers_is_rejected_naming_the_largest_value() {
    // DDR4 8Gb x8: 16 banks x 64K rows x 8 KB rows = 8 GiB per rank; 16 TiB / 8 GiB = 2048.
    let m = problem(&["dram.ranks=1073741824"]);
    assert!(
        m.starts_with("dram.ranks: 1073741824 is out of range; with 1 channel(s) of 8.0 GiB ranks at most 2048 fit the 16.0 TiB"),
        "{m}"
    );
    let m = problem(&["dram.channels=65536"]);
    assert!(
        m.starts_with("dram.channels: 65536 is out of range; with 1 rank(s) of 8.0 GiB per channel at most 2048 fit"),
        "{m}"
    );
    let m = problem(&["dram.channels=4", "dram.ranks=1024"]);
    assert!(
        m.contains("dram.ranks: 1024") && m.contains("at most 512"),
        "{m}"
    );
    // Exactly 2^32 frames is the largest memory.
    let c = config(&["dram.ranks=2048"]);
    assert_eq!(
        limits::capacity_bytes(&c.spec().unwrap().organisation),
        Some(MAX_MEMORY_BYTES)
    );
    // Devices add up: two of 2048 ranks are 32 TiB.
    let m = problem(&["memory.device.0.ranks=2048", "memory.device.1.ranks=2048"]);
    assert!(
        m.contains("memory.device: the devices hold 32.0 TiB"),
        "{m}"
    );
    // A power of two is still required, and zero is not one.
    assert!(problem(&["dram.ranks=0"]).starts_with("dram.ranks: 0 is not a power of two"));
}

#[test]
fn the_startup_estimate_grows_by_each_frame_rank_and_bank_it_adds() {
    let one = config(&[]);
    let two = config(&["dram.ranks=2"]);
    let system = RunKind::System { cores: 1 };
    let added = host_memory::startup_bytes(&two, system).unwrap()
        - host_memory::startup_bytes(&one, system).unwrap();
    // 8 GiB more memory: 2^21 frames of 20 bytes, one rank of 384 and 16 banks of 128.
    assert_eq!(added, (1 << 21) * 20 + 384 + 16 * 128);
    let replay_added = host_memory::startup_bytes(&two, RunKind::Replay).unwrap()
        - host_memory::startup_bytes(&one, RunKind::Replay).unwrap();
    assert_eq!(replay_added, 384 + 16 * 128, "replay has no OS frames");
    // Private caches are one array per core: 1 MiB of data and 16384 lines of 18 bytes.
    let per_core = host_memory::startup_bytes(&one, RunKind::System { cores: 3 }).unwrap()
        - host_memory::startup_bytes(&one, RunKind::System { cores: 2 }).unwrap();
    assert_eq!(per_core, (1 << 20) + 16384 * 18);
}

#[test]
fn a_run_needing_more_host_memory_than_allowed_fails_before_allocating() {
    let dir = common::dir("limits", "host-memory");
    common::write_thread(
        &dir,
        0,
        false,
        &[Event::Map {
            vaddr: 0x1000,
            bytes: 4096,
        }],
    );
    // 2048 ranks: 16 TiB, 2^32 frames of 7 bytes (frame table; the allocator's order is drawn
    // lazily above 16 GiB) = 28 GiB of OS tables.
    let c = config(&["dram.ranks=2048", "sim.memory_limit_mb=1024"]);
    let e = system::run_workload(&c, &dir).err().unwrap().to_string();
    assert!(
        e.starts_with("the configuration needs about 28.")
            && e.contains("GiB of host memory up front")
            && e.contains("more than the 1.0 GiB sim.memory_limit_mb"),
        "{e}"
    );
    // Trace replay builds no OS: 2048 ranks of controller tables fit in 16 MiB but not in 1.
    let replay = config(&["dram.ranks=2048", "sim.memory_limit_mb=16"]);
    assert!(host_memory::check_host_memory(&replay, RunKind::Replay).is_ok());
    let tight = config(&["dram.ranks=2048", "sim.memory_limit_mb=1"]);
    let mut records = vec![read(0, 0)].into_iter();
    let e = bulksim_core::sim::run(&tight, &mut records, None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs about 4.") && e.contains("MiB"), "{e}");
}

#[test]
fn config_check_names_every_bad_key_with_its_line() {
    let dir = common::dir("limits", "check");
    std::fs::write(dir.join("base.toml"), "[controller]\nread_queue_size = 0\n").unwrap();
    std::fs::write(
        dir.join("bad.toml"),
        "include = \"base.toml\"\n\
         [dram]\n\
         ranks = \"two\"\n\
         channels = 3\n\
         rank = 1\n\
         [dram.timing]\n\
         nCL = 4294967295\n\
         nRP = -1\n\
         [[cache.level]]\n\
         size_kb = 32\n\
         [[cache.level]]\n\
         ways = \"many\"\n",
    )
    .unwrap();
    let problems = Config::check_file(&dir.join("bad.toml"));
    let expect = [
        "'dram.rank'",
        "line 3: dram.ranks: invalid type: string \"two\", expected u32",
        "line 8: dram.timing.nRP: invalid value: integer `-1`, expected u32",
        "line 12: cache.level.1.ways: invalid type: string \"many\", expected u32",
        "dram.channels: 3 is not a power of two",
        "dram.timing.nCL: 4294967295 is out of range",
        "controller.read_queue_size: 0 is out of range",
    ];
    for e in expect {
        assert!(
            problems.iter().any(|p| p.contains(e)),
            "{e} in {problems:#?}"
        );
    }
    assert_eq!(problems.len(), expect.len(), "{problems:#?}");
    assert!(problems.iter().all(|p| !p.contains('\n')), "{problems:#?}");
}

#[test]
fn a_device_value_out_of_range_is_named_by_the_device_key() {
    let c = Config::default()
        .apply_sets(&["memory.device.0.channels=3", "memory.device.1.ranks=4096"])
        .unwrap();
    let problems = c.problems();
    assert_eq!(
        problems,
        [
            "memory.device.0.channels (device0): 3 is not a power of two (address mapping needs one); expected 1, 2, 4, ...",
            "memory.device.1.ranks (device1): 4096 is out of range; with 1 channel(s) of 8.0 GiB ranks at most 2048 fit the 16.0 TiB the model can address (2^32 frames of 4 KiB: the OS's frame numbers are 32-bit)",
        ]
    );
}
