//! Reading config files: the whole text of a file up to `MAX_CONFIG_BYTES`, parsing with the
//! file's name (and line) in every error, includes merged recursively under the including
//! file, and `check_file`'s pass that reports every problem of a file and its includes at
//! once instead of the first.

use super::keys::{check_key, drop_unknown, flat_keys};
use super::Config;
use crate::error::{config_err, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest config file: configs are a few KB of TOML. Stand-in specs are capped alike.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The whole text of a config file, at most `MAX_CONFIG_BYTES`; a larger file (or an endless
/// one) is an `InvalidData` error saying so.
pub fn read_config_file(path: &Path) -> std::io::Result<String> {
    read_small_text_file(path, "a config file")
}

/// The whole text of a small text file (`what` it should be, for the error), at most
/// `MAX_CONFIG_BYTES`; a larger or endless one is an `InvalidData` error saying so, before
/// more than that is read.
pub fn read_small_text_file(path: &Path, what: &str) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_CONFIG_BYTES} bytes (not {what}?)"),
        ));
    }
    Ok(text)
}

impl Config {
    /// Reads a config file, merging the files it includes (recursively; paths relative to
    /// the including file; the including file's values win).
    pub fn from_file(path: &Path) -> Result<Config> {
        let table = load_merged(path, &mut Vec::new())?;
        Config::deserialize(toml::Value::Table(table))
            .map_err(|e| config_err(format!("{}: {}", path.display(), e.to_string().trim())))
    }

    /// Every problem in a config file and its includes, each named once: every unknown key,
    /// every value of the wrong type (with its file and line), and every semantic problem of
    /// what remains once those are dropped (`Config::problems`). Empty when the file is good.
    pub fn check_file(path: &Path) -> Vec<String> {
        let mut problems = Vec::new();
        let merged = check_merged(path, &mut Vec::new(), &mut problems);
        match Config::deserialize(toml::Value::Table(merged)) {
            Ok(config) => problems.extend(config.problems()),
            Err(e) => problems.push(format!("{}: {}", path.display(), e.to_string().trim())),
        }
        let mut seen = std::collections::BTreeSet::new();
        problems.retain(|p| seen.insert(p.clone()));
        problems
    }

    /// Parses a TOML document; `source` (a file name) prefixes every error.
    pub fn from_toml_str(text: &str, source: &str) -> Result<Config> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| config_err(format!("{source}: {e}")))?;
        for key in flat_keys(&table, "") {
            check_key(&key).map_err(|e| config_err(format!("{source}: {e}")))?;
        }
        toml::from_str(text).map_err(|e| config_err(format!("{source}: {e}")))
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("config serializes")
    }
}

/// The error for `name` included again while `stack` is being read.
fn include_cycle(name: &str, stack: &[PathBuf]) -> String {
    let chain: Vec<String> = stack.iter().map(|p| p.display().to_string()).collect();
    format!("{name}: include cycle ({})", chain.join(" -> "))
}

/// One file's table merged over its includes; each file is first checked on its own so errors
/// carry that file's name and line.
fn load_merged(path: &Path, stack: &mut Vec<PathBuf>) -> Result<toml::Table> {
    let name = path.display().to_string();
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if stack.contains(&canonical) {
        return Err(config_err(include_cycle(&name, stack)));
    }
    let text = read_config_file(path)
        .map_err(|e| config_err(format!("{name}: cannot read config: {e}")))?;
    let own = Config::from_toml_str(&text, &name)?;
    let mut table: toml::Table =
        toml::from_str(&text).map_err(|e| config_err(format!("{name}: {e}")))?;
    table.remove("include");
    stack.push(canonical);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut merged = toml::Table::new();
    for include in own.include.paths() {
        let base = load_merged(&dir.join(include), stack)
            .map_err(|e| config_err(format!("{e} (included from {name})")))?;
        merge(&mut merged, base);
    }
    stack.pop();
    merge(&mut merged, table);
    Ok(merged)
}

/// `check_file`'s pass over one file and its includes: reports each unknown key, each value
/// of the wrong type and each include problem into `problems`, and returns the merged table
/// without them.
fn check_merged(path: &Path, stack: &mut Vec<PathBuf>, problems: &mut Vec<String>) -> toml::Table {
    let name = path.display().to_string();
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if stack.contains(&canonical) {
        problems.push(include_cycle(&name, stack));
        return toml::Table::new();
    }
    let text = match read_config_file(path) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("{name}: cannot read config: {e}"));
            return toml::Table::new();
        }
    };
    let mut table: toml::Table = match toml::from_str(&text) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("{name}: {}", one_line(&e)));
            return toml::Table::new();
        }
    };
    for key in flat_keys(&table, "") {
        if let Err(e) = check_key(&key) {
            problems.push(format!("{name}: {e}"));
        }
    }
    // Type errors, one per `key = value` line: each found is commented out (keeping the line
    // numbers) and the file parsed again, until none is left.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..=lines.len() {
        let Err(e) = toml::from_str::<Config>(&lines.join("\n")) else {
            break;
        };
        let Some(line) = e
            .span()
            .map(|s| lines.join("\n")[..s.start].matches('\n').count())
        else {
            break;
        };
        let is_assignment = lines[line].contains('=') && !lines[line].trim_start().starts_with('[');
        if !e.message().starts_with("unknown field") {
            let key = key_at_line(&lines, line).unwrap_or_default();
            problems.push(format!(
                "{name}: line {}: {key}: {}",
                line + 1,
                e.message().trim()
            ));
        }
        if !is_assignment {
            break;
        }
        lines[line] = format!("# {}", lines[line]);
    }
    if let Ok(cleaned) = toml::from_str::<toml::Table>(&lines.join("\n")) {
        table = cleaned;
    }
    drop_unknown(&mut table, "");
    let includes = match table.remove("include") {
        Some(toml::Value::String(p)) => vec![p],
        Some(toml::Value::Array(ps)) => ps
            .iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    stack.push(canonical);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut merged = toml::Table::new();
    for include in includes {
        let base = check_merged(&dir.join(include), stack, problems);
        merge(&mut merged, base);
    }
    stack.pop();
    merge(&mut merged, table);
    merged
}

/// A TOML error's message on one line, with its line number when it has one.
fn one_line(e: &toml::de::Error) -> String {
    let text = e.to_string();
    let mut parts = text.lines().filter(|l| {
        let l = l.trim();
        !l.is_empty()
            && !l.starts_with('|')
            && !l.chars().next().is_some_and(|c| c.is_ascii_digit())
    });
    parts.next().map_or(text.clone(), |first| {
        let rest: Vec<&str> = parts.collect();
        format!("{}: {}", first.trim(), rest.join(" ").trim())
    })
}

/// The dotted key assigned on line `index` of a config file (`cache.level.1.ways` for the
/// second `[[cache.level]]` table), from the table headers above it.
fn key_at_line(lines: &[String], index: usize) -> Option<String> {
    let mut section = String::new();
    let mut array_counts: BTreeMap<String, usize> = BTreeMap::new();
    for line in &lines[..index] {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("[[").and_then(|l| l.split("]]").next()) {
            let name = name.trim().to_string();
            let count = array_counts.entry(name.clone()).or_insert(0);
            section = format!("{name}.{count}");
            *count += 1;
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            section = name.trim().to_string();
        }
    }
    let key = lines[index]
        .split('=')
        .next()?
        .trim()
        .replace(['"', '\''], "");
    Some(if section.is_empty() {
        key
    } else {
        format!("{section}.{key}")
    })
}

/// Deep merge: tables merge key by key, anything else in `over` replaces `base`.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}
