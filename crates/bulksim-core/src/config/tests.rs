//! Unit tests of the config: the field table against the structs, defaults, file and
//! override errors, includes, devices, cache levels and the semantic checks.

use super::keys::flat_keys;
use super::*;

fn leaf_keys_of_default() -> Vec<String> {
    let mut config = Config::default();
    config.memory.device.push(DeviceConfig::default());
    config.hybrid = Some(Default::default());
    let table = toml::Table::try_from(config).unwrap();
    let mut keys = flat_keys(&table, "");
    keys.push("dram.timing".into());
    keys.push("include".into());
    // A table that also takes a shorthand value (`controller.refresh = "none"`).
    keys.push("controller.refresh".into());
    // An optional key, absent by default (the controller's policy).
    keys.push("memory.device[].page_policy".into());
    keys.sort();
    keys.dedup();
    keys
}

#[test]
fn every_field_is_documented_and_every_doc_is_a_field() {
    let keys = leaf_keys_of_default();
    let docs: Vec<String> = CONFIG_FIELDS.iter().map(|f| f.key.to_string()).collect();
    for k in &keys {
        assert!(docs.contains(k), "field {k} has no entry in CONFIG_FIELDS");
    }
    for d in &docs {
        assert!(
            keys.contains(d),
            "CONFIG_FIELDS names {d}, which is not a field"
        );
    }
    for f in CONFIG_FIELDS.iter() {
        assert!(!f.unit.is_empty() && !f.description.is_empty(), "{}", f.key);
    }
}

#[test]
fn hybrid_needs_one_dram_and_one_pcm_device_and_names_unbuilt_values() {
    let base = Config::default();
    assert!(base.hybrid.is_none());
    let text = toml::to_string(&base).unwrap();
    assert!(
        !text.contains("hybrid"),
        "an absent [hybrid] is not serialized"
    );
    let hybrid = |sets: &[&str]| {
        let mut all = vec![
            "memory.device.0.preset=DDR3_4Gb_x8_1600",
            "memory.device.1.preset=PCM_x8_1600",
            "hybrid.mechanism=cm",
            "hybrid.placement=pcm_only",
            "controller.refresh=none",
        ];
        all.extend(sets);
        Config::default().apply_sets(&all).unwrap()
    };
    let ok = hybrid(&[]);
    assert!(ok.hybrid.is_some());
    assert_eq!(ok.problems(), Vec::<String>::new());
    let two_dram = hybrid(&[
        "memory.device.1.preset=DDR3_4Gb_x8_1600",
        "memory.device.1.name=b",
    ]);
    let p = two_dram.problems();
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("memory.device: [hybrid] needs exactly two devices"),
        "{p:?}"
    );
    let p = hybrid(&["hybrid.remap_lines=retag", "hybrid.period_ns=0"]).problems();
    assert_eq!(p.len(), 1, "retag is accepted: {p:?}");
    assert!(p[0].starts_with("hybrid.period_ns: 0"), "{p:?}");
    let p = hybrid(&["system.bulk_mechanism=mc_dma"]).problems();
    assert!(p[0].starts_with("system.bulk_mechanism:"), "{p:?}");
    let e = Config::default()
        .apply_sets(&["hybrid.mechanizm=cm"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("hybrid.mechanism"), "{e}");
}

#[test]
fn defaults_are_the_documented_system() {
    let c = Config::default();
    assert_eq!(c.dram.preset, "DDR4_8Gb_x8_2400");
    assert_eq!(
        (c.dram.channels, c.dram.ranks, c.dram.rows_per_subarray),
        (1, 1, 512)
    );
    assert_eq!(c.controller.scheduler, Scheduler::Frfcfs);
    assert_eq!(c.controller.page_policy, PagePolicy::Open);
    assert_eq!(c.controller.address_mapping, "RoBaRaCoCh");
    assert_eq!(
        (c.controller.read_queue_size, c.controller.write_queue_size),
        (32, 32)
    );
    assert_eq!(c.controller.refresh.policy, RefreshPolicy::Staggered);
    c.validate().unwrap();
}

#[test]
fn file_errors_name_file_and_line() {
    let e = Config::from_toml_str(
        "[controller]\nscheduler = \"fcfs\"\nschedular = 1\n",
        "my.toml",
    )
    .unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("my.toml")
            && m.contains("controller.schedular")
            && m.contains("did you mean 'controller.scheduler'"),
        "{m}"
    );
    let e = Config::from_toml_str("[controller]\nscheduler = \"lifo\"\n", "my.toml").unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("my.toml") && m.contains("line 2") && m.contains("frfcfs"),
        "{m}"
    );
}

#[test]
fn overrides_apply_and_name_bad_keys_and_values() {
    let c = Config::default()
        .apply_sets(&[
            "controller.scheduler=fcfs",
            "dram.ranks=2",
            "dram.timing.nCL=17",
        ])
        .unwrap();
    assert_eq!(c.controller.scheduler, Scheduler::Fcfs);
    assert_eq!(c.dram.ranks, 2);
    assert_eq!(c.spec().unwrap().timing.n_cl, 17);
    let m = Config::default()
        .apply_sets(&["controller.page_polcy=open"])
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("controller.page_polcy") && m.contains("did you mean 'controller.page_policy'"),
        "{m}"
    );
    let m = Config::default()
        .apply_sets(&["controller.page_policy=half"])
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("controller.page_policy") && m.contains("expected `open` or `closed`"),
        "{m}"
    );
    assert!(!m.contains('\n'), "one line: {m}");
    let m = Config::default()
        .apply_sets(&["dram.ranks=two"])
        .unwrap_err()
        .to_string();
    assert!(m.contains("dram.ranks"), "{m}");
    let m = Config::default()
        .apply_sets(&["dram.timing.nXYZ=3"])
        .unwrap_err()
        .to_string();
    assert!(m.contains("nXYZ") && m.contains("nCL"), "{m}");
    let m = Config::default()
        .apply_sets(&["noequals"])
        .unwrap_err()
        .to_string();
    assert!(m.contains("key=value"), "{m}");
}

#[test]
fn includes_merge_with_the_including_file_winning() {
    let dir = std::env::temp_dir().join(format!("bulksim-include-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/base.toml"),
        "[dram]\nranks = 2\nchannels = 2\n[controller]\nscheduler = \"fcfs\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("mid.toml"),
        "include = \"sub/base.toml\"\n[dram]\nranks = 4\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("top.toml"),
        "include = [\"mid.toml\"]\n[controller]\npage_policy = \"closed\"\n",
    )
    .unwrap();
    let c = Config::from_file(&dir.join("top.toml")).unwrap();
    assert_eq!((c.dram.ranks, c.dram.channels), (4, 2));
    assert_eq!(c.controller.scheduler, Scheduler::Fcfs);
    assert_eq!(c.controller.page_policy, PagePolicy::Closed);
    std::fs::write(dir.join("loop.toml"), "include = \"loop.toml\"\n").unwrap();
    assert!(Config::from_file(&dir.join("loop.toml"))
        .unwrap_err()
        .to_string()
        .contains("include cycle"));
    std::fs::write(
        dir.join("bad.toml"),
        "include = \"sub/base.toml\"\n[dram]\nrank = 1\n[controller]\nschedular = 1\n",
    )
    .unwrap();
    let problems = Config::check_file(&dir.join("bad.toml"));
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems
        .iter()
        .any(|p| p.contains("bad.toml") && p.contains("'dram.rank'")));
    assert!(problems
        .iter()
        .any(|p| p.contains("'controller.schedular'")));
    assert!(Config::check_file(&dir.join("top.toml")).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn columns_override_sets_the_row_size() {
    let c = Config::default()
        .apply_sets(&["dram.preset=\"DDR3_2Gb_x8_1066\"", "dram.columns=512"])
        .unwrap();
    let spec = c.spec().unwrap();
    assert_eq!(spec.organisation.columns, 512);
    assert_eq!(
        spec.organisation.row_bytes(),
        4096,
        "the RowClone paper's 4 KB rank row"
    );
    assert_eq!(Config::default().spec().unwrap().organisation.columns, 1024);
}

#[test]
fn semantic_errors_name_the_key() {
    let bad = |sets: &[&str], key: &str| {
        let m = Config::default()
            .apply_sets(sets)
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(m.contains(key), "{m}");
    };
    bad(&["dram.preset=DDR5"], "dram.preset");
    bad(&["dram.channels=3"], "dram.channels");
    bad(
        &["controller.read_queue_size=0"],
        "controller.read_queue_size",
    );
    bad(
        &["controller.write_low_watermark=0.9"],
        "controller.write_low_watermark",
    );
    bad(
        &["controller.address_mapping=RoBaRa"],
        "controller.address_mapping",
    );
    bad(&["dram.rows_per_subarray=0"], "dram.rows_per_subarray");
    bad(&["dram.columns=500"], "dram.columns");
    bad(&["dram.rows=3"], "dram.rows");
    bad(&["dram.rows=1048576"], "dram.rows");
    bad(&["dram.columns=4"], "dram.columns");
    bad(&["dram.timing.nREFI=10"], "nREFI");
    bad(
        &["cache.level.0.writeback_buffer=0"],
        "cache.level.0.writeback_buffer",
    );
    bad(&["cache.level.0.line_bytes=48"], "cache.level.0.line_bytes");
    bad(&["cache.level.1.line_bytes=32"], "cache.level.1.line_bytes");
    bad(&["memory.device.0.preset=DDR9"], "memory.device.0");
    let e = Config::default()
        .apply_sets(&["bulk.mechanism=cpu"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("now 'channel'") && !e.contains('\n'), "{e}");
}

/// `[[memory.device]]`'s controller keys: each device's value, else the top level's; a
/// bad value is named by the device's key.
#[test]
fn devices_take_their_own_page_policy_mapping_and_queues() {
    let two = [
        "memory.device.0.preset=DRAM_CMMP_1000",
        "memory.device.1.preset=PCM_CMMP_400",
        "controller.refresh=none",
    ];
    let c = Config::default()
        .apply_sets(&two)
        .unwrap()
        .apply_sets(&[
            "memory.device.1.page_policy=closed",
            "memory.device.1.address_mapping=RoCoRaBaCh",
            "memory.device.1.read_queue_size=1024",
            "memory.device.1.write_queue_size=512",
        ])
        .unwrap();
    let devices = c.device_configs().unwrap();
    let (dram, pcm) = (&devices[0].1.controller, &devices[1].1.controller);
    assert_eq!(dram.page_policy, PagePolicy::Open);
    assert_eq!(dram.address_mapping, "RoBaRaCoCh");
    assert_eq!((dram.read_queue_size, dram.write_queue_size), (32, 32));
    assert_eq!(pcm.page_policy, PagePolicy::Closed);
    assert_eq!(pcm.address_mapping, "RoCoRaBaCh");
    assert_eq!((pcm.read_queue_size, pcm.write_queue_size), (1024, 512));
    let bad = |set: &str, key: &str| {
        let c = Config::default().apply_sets(&two).unwrap();
        let m = match c.apply_sets(&[set]) {
            Ok(c) => c.validate().unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(m.contains(key) && !m.contains('\n'), "{set}: {m}");
    };
    bad(
        "memory.device.1.address_mapping=RoRaXX",
        "memory.device.1.address_mapping (device1): unknown field 'XX'",
    );
    bad(
        "memory.device.0.read_queue_size=5000",
        "memory.device.0.read_queue_size (device0): 5000",
    );
    bad("memory.device.1.page_policy=half", "page_policy");
    // Bits sensed per ACT: a part with pJ/bit energies, at most its row.
    let c = Config::default()
        .apply_sets(&two)
        .unwrap()
        .apply_sets(&["memory.device.1.activation_bits=4096"])
        .unwrap();
    let specs: Vec<_> = c
        .device_configs()
        .unwrap()
        .iter()
        .map(|(_, c)| c.spec().unwrap().bit_energy.unwrap().activation_bits)
        .collect();
    assert_eq!(specs, [0, 4096]);
    bad(
        "memory.device.1.activation_bits=40000",
        "memory.device.1.activation_bits (device1): 40000 is out of range; expected 1..=32768",
    );
    let e = Config::default()
        .apply_sets(&["dram.activation_bits=512"])
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("dram.activation_bits: DDR4_8Gb_x8_2400 declares no pJ/bit"),
        "{e}"
    );
}

#[test]
fn cache_levels_and_devices_are_lists_settable_by_index() {
    let c = Config::default()
        .apply_sets(&[
            "cache.level.0.size_kb=32",
            "cache.level.0.line_bytes=32",
            "cache.level.1.size_kb=256",
            "memory.device.0.preset=DDR3_2Gb_x8_1066",
            "memory.device.1.preset=DDR4_8Gb_x8_2400",
        ])
        .unwrap();
    assert_eq!(c.cache.level.len(), 2);
    assert_eq!(c.cache.level[0].line_bytes, 32);
    assert_eq!(
        c.cache.level[1],
        CacheLevelConfig {
            size_kb: 256,
            ..Default::default()
        }
    );
    c.validate().unwrap();
    let devices = c.device_configs().unwrap();
    assert_eq!(devices[1].0, "device1");
    assert_eq!(devices[1].1.dram.preset, "DDR4_8Gb_x8_2400");
    let e = Config::default()
        .apply_sets(&["cache.level.3.size_kb=1"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("index 3"), "{e}");
    let e = Config::default()
        .apply_sets(&["cache.level.0.sizekb=1"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("cache.level[].size_kb"), "did you mean: {e}");
}

#[test]
fn config_files_are_read_up_to_the_size_limit() {
    let err = read_config_file(std::path::Path::new("/dev/zero")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "larger than 1048576 bytes (not a config file?)"
    );
    let path = std::env::temp_dir().join(format!("bulksim-cfg-{}.toml", std::process::id()));
    std::fs::write(&path, "x".repeat(MAX_CONFIG_BYTES as usize)).unwrap();
    assert_eq!(read_config_file(&path).unwrap().len(), 1 << 20);
    std::fs::write(&path, "x".repeat(MAX_CONFIG_BYTES as usize + 1)).unwrap();
    assert!(read_config_file(&path).is_err());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_cache_level_without_ways_or_size_is_one_problem_not_a_panic() {
    for (set, problem) in [
        (
            "cache.level.0.ways=0",
            "cache.level.0.ways: 0 is out of range; expected 1..=64",
        ),
        (
            "cache.level.0.size_kb=0",
            "cache.level.0.size_kb: 0 is out of range; expected 1..=1048576",
        ),
        (
            "cache.level.0.mshrs=0",
            "cache.level.0.mshrs: 0 is out of range; expected 1..=1024",
        ),
    ] {
        let config = Config::default().apply_sets(&[set]).unwrap();
        assert_eq!(config.problems(), [problem], "{set}");
    }
}

/// Every choice key (a `config_enum!` field) reads each of its names, and a bad value is one
/// error listing all of them: the names come from the enum, in one place.
#[test]
fn every_choice_key_reads_its_names_and_a_bad_value_lists_them() {
    let choices: Vec<&FieldDoc> = CONFIG_FIELDS
        .iter()
        .filter(|f| !f.choices.is_empty())
        .collect();
    assert!(choices.len() >= 27, "only {} choice keys", choices.len());
    for f in choices {
        assert_eq!(f.unit, f.choices.join(" | "), "{}", f.key);
        // Keys under `hybrid` need the section; devices' keys are checked by their own test.
        if f.key.contains("[]") {
            continue;
        }
        for name in f.choices {
            Config::default()
                .apply_sets(&[format!("{}={name}", f.key)])
                .unwrap_or_else(|e| panic!("{} = {name}: {e}", f.key));
        }
        let e = Config::default()
            .apply_sets(&[format!("{}=not_a_choice", f.key)])
            .unwrap_err()
            .to_string();
        for name in f.choices {
            assert!(e.contains(&format!("`{name}`")), "{}: {e}", f.key);
        }
        assert!(
            !e.contains("valid values"),
            "{}: names listed twice: {e}",
            f.key
        );
    }
}
