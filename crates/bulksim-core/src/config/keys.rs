//! Config keys: the dotted names `--set`, `config check` and the loaders accept, checked
//! against the field table with "did you mean" suggestions, the values each enum key takes,
//! and the walks over a TOML table by key (its leaves, and the table without unknown keys).

use super::CONFIG_FIELDS;
use crate::error::{config_err, Result};
use crate::spec::presets::PRESET_NAMES;
use crate::spec::Timing;

/// The values an enum key takes, for the error naming a bad one.
pub(super) fn enum_values(key: &str) -> Option<&'static [&'static str]> {
    match key {
        "controller.scheduler" => Some(&["fcfs", "frfcfs"]),
        "controller.page_policy" => Some(&["open", "closed"]),
        "controller.refresh" | "controller.refresh.policy" => {
            Some(&["staggered", "simultaneous", "none", "all_bank"])
        }
        "controller.refresh.stagger" => Some(&["channel", "system"]),
        "controller.refresh.scheme" => Some(&["demand", "elastic", "pausing", "pcd", "adaptive"]),
        "controller.refresh.elastic_deadline" => Some(&["per_ref", "window"]),
        "controller.write_drain.scope" => Some(&["channel", "rank"]),
        "controller.write_drain.policy" => Some(&["watermark", "equal_priority", "ideal"]),
        "dram.temperature" => Some(&["normal", "extended"]),
        "bulk.mechanism" => Some(&["channel", "mc_dma", "rowclone"]),
        "system.bulk_mechanism" => Some(&["cpu", "mc_dma", "rowclone", "rowclone_zi"]),
        "system.cpu_full_line_stores" => Some(&["fetch", "allocate"]),
        "system.init_mechanism" => Some(&["same", "cpu"]),
        "os.allocator" => Some(&[
            "scatter",
            "subarray_aware",
            "inter_bank",
            "rank_static",
            "clock",
            "rank_clock",
        ]),
        "os.preferred_rank" => Some(&["most_free", "least_delay"]),
        "os.trace_bulk_destinations" => Some(&["allocate", "keep"]),
        "sim.mode" => Some(&["timing", "functional"]),
        "copy_engine.policy" => Some(&["none", "ce_l1", "dce", "dce_nt", "dce_rowclone"]),
        "copy_engine.dram_rule" => Some(&["probe", "always"]),
        "dram.preset" => Some(PRESET_NAMES),
        "hybrid.mechanism" => Some(&["cpm", "cm", "cm_obm", "cm_obm_pd"]),
        "hybrid.copy_priority" => Some(&["auto", "low", "equal"]),
        "hybrid.remap_lines" => Some(&["flush", "retag"]),
        "hybrid.pact_origins" => Some(&["program", "all"]),
        "hybrid.placement" => Some(&["dram_first", "pcm_only"]),
        _ => None,
    }
}

/// ` (did you mean 'X'?)` for the candidate nearest `word` when one is near enough, else empty.
pub(super) fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let best = candidates
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 3))
        .min();
    match best {
        Some((_, c)) => format!(" (did you mean '{c}'?)"),
        None => String::new(),
    }
}

/// `cache.level.1.size_kb` -> `cache.level[].size_kb`, the documented form.
pub(super) fn generic_key(key: &str) -> String {
    key.split('.').fold(String::new(), |mut acc, part| {
        if !acc.is_empty() && part.parse::<usize>().is_ok() {
            acc.push_str("[]");
        } else {
            if !acc.is_empty() {
                acc.push('.');
            }
            acc.push_str(part);
        }
        acc
    })
}

/// Checks a dotted key against the documented fields; `dram.timing.<name>` takes any timing
/// parameter name.
pub fn check_key(key: &str) -> Result<()> {
    if let Some(param) = key.strip_prefix("dram.timing.") {
        if Timing::PARAMS.iter().any(|(n, _)| *n == param) {
            return Ok(());
        }
        let names: Vec<&str> = Timing::PARAMS.iter().map(|(n, _)| *n).collect();
        return Err(config_err(format!(
            "unknown timing parameter '{param}' in key '{key}'{}; valid: {}",
            did_you_mean(param, names.iter().copied()),
            names.join(", ")
        )));
    }
    if CONFIG_FIELDS.iter().any(|f| f.key == key) {
        return Ok(());
    }
    let section = key.split('.').next().unwrap_or("");
    let in_section: Vec<&str> = CONFIG_FIELDS
        .iter()
        .map(|f| f.key)
        .filter(|k| k.starts_with(&format!("{section}.")))
        .collect();
    let valid = if in_section.is_empty() {
        CONFIG_FIELDS
            .iter()
            .map(|f| f.key)
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        in_section.join(", ")
    };
    Err(config_err(format!(
        "unknown config key '{key}'{}; valid keys: {valid}",
        did_you_mean(key, CONFIG_FIELDS.iter().map(|f| f.key))
    )))
}

/// `key` under the dotted `prefix` (none at the top).
fn dotted(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Removes every key `check_key` rejects (and tables left with no known key).
pub(super) fn drop_unknown(table: &mut toml::Table, prefix: &str) {
    table.retain(|k, v| {
        let key = dotted(prefix, k);
        match v {
            toml::Value::Table(t) if key == "dram.timing" => {
                t.retain(|name, _| check_key(&format!("dram.timing.{name}")).is_ok());
                true
            }
            toml::Value::Table(t) if !CONFIG_FIELDS.iter().any(|f| f.key == key) => {
                drop_unknown(t, &key);
                CONFIG_FIELDS
                    .iter()
                    .any(|f| f.key.starts_with(&format!("{key}.")))
            }
            toml::Value::Array(items) if check_key(&key).is_ok() => {
                for item in items.iter_mut() {
                    if let toml::Value::Table(t) = item {
                        drop_unknown(t, &format!("{key}[]"));
                    }
                }
                true
            }
            _ => check_key(&key).is_ok(),
        }
    });
}

/// Dotted keys of every leaf; each `dram.timing` entry is a leaf of its own.
pub(super) fn flat_keys(table: &toml::Table, prefix: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for (k, v) in table {
        let key = dotted(prefix, k);
        match v {
            toml::Value::Table(t) if key == "dram.timing" => {
                keys.extend(t.keys().map(|name| format!("{key}.{name}")));
            }
            toml::Value::Table(t)
                if !CONFIG_FIELDS.iter().any(|f| f.key == key)
                    || CONFIG_FIELDS
                        .iter()
                        .any(|f| f.key.starts_with(&format!("{key}."))) =>
            {
                keys.extend(flat_keys(t, &key));
            }
            toml::Value::Array(items) => {
                keys.push(key.clone());
                for item in items {
                    if let toml::Value::Table(t) = item {
                        keys.extend(flat_keys(t, &format!("{key}[]")));
                    }
                }
            }
            _ => keys.push(key),
        }
    }
    keys
}
