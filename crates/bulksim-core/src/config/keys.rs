//! Config keys: the dotted names `--set`, `config check` and the loaders accept, checked
//! against the field table with "did you mean" suggestions, the values each enum key takes,
//! and the walks over a TOML table by key (its leaves, and the table without unknown keys).

use super::CONFIG_FIELDS;
use crate::error::{config_err, Result};
use crate::spec::presets::PRESET_NAMES;
use crate::spec::Timing;

/// The values a choice key takes, for the error naming a bad one: a `choice(..)` field's names
/// (`CONFIG_FIELDS`; `controller.refresh` alone is its policy), or the presets.
pub(super) fn enum_values(key: &str) -> Option<&'static [&'static str]> {
    let key = match generic_key(key).as_str() {
        "dram.preset" => return Some(PRESET_NAMES),
        "controller.refresh" => "controller.refresh.policy".to_string(),
        k => k.to_string(),
    };
    CONFIG_FIELDS
        .iter()
        .find(|f| f.key == key && !f.choices.is_empty())
        .map(|f| f.choices)
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
