//! `--set key=value` overrides: each applied in order to the config's TOML table (an index
//! into a list of tables, `cache.level.1.size_kb`, may add the next table), the value parsed
//! as TOML or else taken as a bare string, and a bad value reported naming its key and the
//! values the key takes.

use super::keys::{check_key, enum_values, generic_key};
use super::Config;
use crate::error::{config_err, Error, Result};
use serde::Deserialize;

impl Config {
    /// Applies `key=value` overrides in order.
    pub fn apply_sets<S: AsRef<str>>(&self, sets: &[S]) -> Result<Config> {
        let mut table = toml::Table::try_from(self).expect("config serializes");
        for set in sets {
            let set = set.as_ref();
            let (key, value) = set.split_once('=').ok_or_else(|| {
                config_err(format!(
                    "override '{set}': expected key=value, e.g. controller.scheduler=fcfs"
                ))
            })?;
            let key = key.trim();
            check_key(&generic_key(key))?;
            let mut node = &mut table;
            let parts: Vec<&str> = key.split('.').collect();
            let mut i = 0;
            while i < parts.len() - 1 {
                let part = parts[i];
                let value = node
                    .entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()));
                node = match value {
                    toml::Value::Array(items) => {
                        // `cache.level.1.size_kb`: an index into a list of tables; the next
                        // index past the end adds a table.
                        let index: usize = parts[i + 1].parse().map_err(|_| {
                            config_err(format!(
                                "override '{set}': '{part}' is a list; expected {part}.N.key with N an index"
                            ))
                        })?;
                        if index == items.len() {
                            items.push(toml::Value::Table(Default::default()));
                        }
                        let len = items.len();
                        i += 1;
                        items
                            .get_mut(index)
                            .and_then(|v| v.as_table_mut())
                            .ok_or_else(|| {
                                config_err(format!(
                                    "override '{set}': {part} has {len} entries; index {index} is past the next one"
                                ))
                            })?
                    }
                    v => v.as_table_mut().ok_or_else(|| {
                        config_err(format!("override '{set}': '{part}' is not a table"))
                    })?,
                };
                i += 1;
            }
            node.insert(
                parts[parts.len() - 1].to_string(),
                parse_value(value.trim()),
            );
            // Deserialize after each override so an error names the key that caused it.
            Config::deserialize(toml::Value::Table(table.clone()))
                .map_err(|e| value_error(key, value, &e))?;
        }
        Config::deserialize(toml::Value::Table(table)).map_err(|e| config_err(e.to_string()))
    }
}

/// Parses the value side of `key=value`: a TOML value if it is one, else a bare string.
fn parse_value(text: &str) -> toml::Value {
    let wrapped = format!("v = {text}");
    match toml::from_str::<toml::Table>(&wrapped) {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.into()),
    }
}

fn value_error(key: &str, value: &str, e: &impl std::fmt::Display) -> Error {
    // serde appends "in `key`" on a second line; the key is already named in front.
    let message = e.to_string();
    let first = message.lines().next().unwrap_or("").trim();
    // A choice's own error lists its names already; a preset name's does not.
    let mut valid = match enum_values(key) {
        Some(v) if !v.iter().all(|name| first.contains(name)) => {
            format!("; valid values: {}", v.join(", "))
        }
        _ => String::new(),
    };
    if key == "bulk.mechanism" && value.trim().trim_matches('"') == "cpu" {
        valid += " ('cpu' is now 'channel': line reads and writes over the channel without caches; the core's copy loop through the caches is the full system's system.bulk_mechanism = cpu)";
    }
    config_err(format!(
        "{key}: bad value '{}': {first}{valid}",
        value.trim()
    ))
}
