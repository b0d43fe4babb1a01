//! The spec file of a generated stand-in (docs/hybrid_workloads.md): TOML with the marker
//! `bulksim_standin = 1` and the keys `kind`, `size_mb`, `instructions`, `seed` and
//! `instructions_per_ms`; the kinds and their fixed parameters. A bad file is one error
//! naming the file and the key.

use crate::error::{Error, Result};
use crate::workload::lines;
use std::path::Path;

/// The marker key (and its value, the spec version) that tells a stand-in spec from a trace.
pub const MARKER: &str = "bulksim_standin";
pub const VERSION: i64 = 1;

/// Bytes of one stream element (a double): streams step by this, so 8 accesses share a line.
pub const ELEMENT_BYTES: u64 = 8;
/// Non-memory instructions between two accesses: one access per 4 instructions.
pub const COMPUTE_PER_ACCESS: u64 = 3;
/// Where the footprint starts in the process's virtual address space.
pub const BASE: u64 = 0x1000_0000;
pub const PAGE: u64 = 4096;
pub const LINE: u64 = 64;

/// The largest footprint (MiB): the page tables of the Zipf kinds stay below 50 MB.
pub const MAX_SIZE_MB: u64 = 16 * 1024;
/// The most instructions one spec may ask for (2^50).
pub const MAX_INSTRUCTIONS: u64 = 1 << 50;

/// Default footprint per copy (MiB): issue 17's 256 MB a copy.
pub const DEFAULT_SIZE_MB: u64 = 256;
/// Default instructions: issue 17's 100 M warm-up plus 100 M measured per core.
pub const DEFAULT_INSTRUCTIONS: u64 = 200_000_000;
pub const DEFAULT_SEED: u64 = 1;
/// Default instructions per millisecond, turning the kinds' periods (ms) into instruction
/// counts: a 4 GHz core (Table I of the paper) at an assumed IPC of 1 (bulksim's choice).
pub const DEFAULT_INSTRUCTIONS_PER_MS: u64 = 4_000_000;

/// The stand-in kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Four arrays swept together (3 loads, 1 store per element); 70% of sweeps cover only
    /// a hot quarter, which moves to the next quarter every 10 ms.
    FpStream,
    /// Two arrays swept in full, one load and one store per element; they swap roles each
    /// sweep.
    StreamRw,
    /// Four dependent chains of line-sized nodes on pages drawn Zipf(0.8); 10% stores.
    PointerChase,
    /// Lines of pages drawn Zipf(1.0), independent loads, 20% stores; which page has which
    /// popularity is reshuffled every 5 ms.
    ZipfDrift,
}

/// A kind's name, the programs it stands for and its fixed parameters (every value a
/// choice of issue 17, docs/hybrid_workloads.md).
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    pub kind: Kind,
    pub name: &'static str,
    pub stands_for: &'static str,
    /// Of every `store_every` accesses, one is a store: the last, for the Zipf kinds; for the
    /// streams it follows from the pattern (a store after each element's loads).
    pub store_every: u64,
    /// Zipf exponent of the page draws (0: no Zipf draws).
    pub zipf_exponent: f64,
    /// Milliseconds between moves of the hot set (0: never moves).
    pub period_ms: u64,
}

pub const KINDS: [KindInfo; 4] = [
    KindInfo {
        kind: Kind::FpStream,
        name: "fp_stream",
        stands_for: "410.bwaves, 434.zeusmp, 436.cactusADM, 437.leslie3d, 459.GemsFDTD",
        store_every: 4,
        zipf_exponent: 0.0,
        period_ms: 10,
    },
    KindInfo {
        kind: Kind::StreamRw,
        name: "stream_rw",
        stands_for: "470.lbm, 433.milc",
        store_every: 2,
        zipf_exponent: 0.0,
        period_ms: 0,
    },
    KindInfo {
        kind: Kind::PointerChase,
        name: "pointer_chase",
        stands_for: "429.mcf, 473.astar",
        store_every: 10,
        zipf_exponent: 0.8,
        period_ms: 0,
    },
    KindInfo {
        kind: Kind::ZipfDrift,
        name: "zipf_drift",
        stands_for: "450.soplex",
        store_every: 5,
        zipf_exponent: 1.0,
        period_ms: 5,
    },
];

/// fp_stream: arrays swept together.
pub const FP_ARRAYS: u64 = 4;
/// fp_stream: the probability that a sweep covers only the hot quarter.
pub const FP_HOT_SWEEPS: f64 = 0.7;
/// pointer_chase: chains followed side by side.
pub const CHAINS: u64 = 4;

impl KindInfo {
    pub fn from_name(name: &str) -> Option<&'static KindInfo> {
        KINDS.iter().find(|k| k.name == name)
    }

    pub fn of(kind: Kind) -> &'static KindInfo {
        KINDS.iter().find(|k| k.kind == kind).expect("every kind")
    }

    pub fn names() -> Vec<&'static str> {
        KINDS.iter().map(|k| k.name).collect()
    }
}

/// One stand-in: what a spec file holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub kind: Kind,
    /// Footprint of one copy (MiB).
    pub size_mb: u64,
    /// Instructions the stream holds, the opening map included.
    pub instructions: u64,
    pub seed: u64,
    /// Instructions per millisecond of program time, for the kinds' periods.
    pub instructions_per_ms: u64,
}

/// The keys of a spec, each with its unit and meaning (docs/hybrid_workloads.md).
pub const KEYS: [(&str, &str); 6] = [
    (MARKER, "spec format version: 1"),
    ("kind", "fp_stream, stream_rw, pointer_chase or zipf_drift"),
    ("size_mb", "footprint of one copy (MiB), 1 to 16384"),
    (
        "instructions",
        "instructions of the stream, the opening map included (count), 1 to 2^50",
    ),
    ("seed", "seed of the random draws (integer, 0 to 2^63 - 1)"),
    (
        "instructions_per_ms",
        "instructions per millisecond of program time, for the periods (instructions/ms)",
    ),
];

impl Spec {
    /// A spec of `kind` with the default size, instructions, seed and conversion.
    pub fn new(kind: Kind) -> Spec {
        Spec {
            kind,
            size_mb: DEFAULT_SIZE_MB,
            instructions: DEFAULT_INSTRUCTIONS,
            seed: DEFAULT_SEED,
            instructions_per_ms: DEFAULT_INSTRUCTIONS_PER_MS,
        }
    }

    pub fn info(&self) -> &'static KindInfo {
        KindInfo::of(self.kind)
    }

    /// Footprint in bytes.
    pub fn bytes(&self) -> u64 {
        self.size_mb << 20
    }

    /// The kind's period in instructions (0: none).
    pub fn period_instructions(&self) -> u64 {
        self.info().period_ms * self.instructions_per_ms
    }

    /// Checks the values; `name` is the file the errors name.
    pub fn validate(&self, name: &str) -> Result<()> {
        let bad =
            |key: &str, what: String| Err(Error::Trace(format!("{name}: key '{key}': {what}")));
        if !(1..=MAX_SIZE_MB).contains(&self.size_mb) {
            return bad(
                "size_mb",
                format!("{} MiB; expected 1 to {MAX_SIZE_MB}", self.size_mb),
            );
        }
        if !(1..=MAX_INSTRUCTIONS).contains(&self.instructions) {
            return bad(
                "instructions",
                format!(
                    "{} instructions; expected 1 to 2^50 ({MAX_INSTRUCTIONS})",
                    self.instructions
                ),
            );
        }
        if self.seed > i64::MAX as u64 {
            return bad(
                "seed",
                format!("{}; expected 0 to 2^63 - 1 (a TOML integer)", self.seed),
            );
        }
        if !(1..=1 << 40).contains(&self.instructions_per_ms) {
            return bad(
                "instructions_per_ms",
                format!(
                    "{} instructions/ms; expected 1 to 2^40",
                    self.instructions_per_ms
                ),
            );
        }
        Ok(())
    }

    /// The spec as TOML text, with a comment naming the kind and what it stands for.
    pub fn to_toml(&self) -> String {
        let info = self.info();
        format!(
            "# bulksim stand-in workload (docs/hybrid_workloads.md): {} stands for {}\n\
             {MARKER} = {VERSION}\n\
             kind = \"{}\"\n\
             size_mb = {}\n\
             instructions = {}\n\
             seed = {}\n\
             instructions_per_ms = {}\n",
            info.name,
            info.stands_for,
            info.name,
            self.size_mb,
            self.instructions,
            self.seed,
            self.instructions_per_ms
        )
    }

    /// Writes the spec to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        self.validate(&path.display().to_string())?;
        std::fs::write(path, self.to_toml())
            .map_err(|e| Error::Io(format!("{}: cannot write the spec: {e}", path.display())))
    }

    /// Reads the spec at `path`: at most `lines::MAX_CONFIG_BYTES`, like a config file (a
    /// spec is a few lines; `/dev/zero` given as one stops there).
    pub fn read(path: &Path) -> Result<Spec> {
        let name = path.display().to_string();
        let text = lines::read_small_text_file(path, "a stand-in spec").map_err(|e| {
            let what = match e.kind() {
                std::io::ErrorKind::InvalidData => e.to_string(),
                _ => format!("cannot read the stand-in spec: {e}"),
            };
            Error::Trace(format!("{name}: {what}"))
        })?;
        Spec::parse(&text, &name)
    }

    /// Parses spec text; `name` is the file the errors name.
    pub fn parse(text: &str, name: &str) -> Result<Spec> {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            Error::Trace(format!(
                "{name}: not a stand-in spec (TOML): {}",
                e.message()
            ))
        })?;
        let err = |key: &str, what: String| Error::Trace(format!("{name}: key '{key}': {what}"));
        let keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        for key in table.keys() {
            if !keys.contains(&key.as_str()) {
                return Err(Error::Trace(format!(
                    "{name}: unknown key '{key}'; expected {}",
                    keys.join(", ")
                )));
            }
        }
        let integer = |key: &str, default: Option<u64>| -> Result<u64> {
            match table.get(key) {
                None => default.ok_or_else(|| err(key, "missing".into())),
                Some(toml::Value::Integer(v)) if *v >= 0 => Ok(*v as u64),
                Some(v) => Err(err(key, format!("{v}; expected a non-negative integer"))),
            }
        };
        let version = integer(MARKER, None)?;
        if version != VERSION as u64 {
            return Err(err(
                MARKER,
                format!("version {version}; this bulksim reads version {VERSION}"),
            ));
        }
        let kind = match table.get("kind") {
            None => return Err(err("kind", "missing".into())),
            Some(toml::Value::String(s)) => {
                KindInfo::from_name(s)
                    .ok_or_else(|| {
                        err(
                            "kind",
                            format!(
                                "unknown stand-in kind '{s}'; expected one of {}",
                                KindInfo::names().join(", ")
                            ),
                        )
                    })?
                    .kind
            }
            Some(v) => return Err(err("kind", format!("{v}; expected a string"))),
        };
        let spec = Spec {
            kind,
            size_mb: integer("size_mb", Some(DEFAULT_SIZE_MB))?,
            instructions: integer("instructions", Some(DEFAULT_INSTRUCTIONS))?,
            seed: integer("seed", Some(DEFAULT_SEED))?,
            instructions_per_ms: integer("instructions_per_ms", Some(DEFAULT_INSTRUCTIONS_PER_MS))?,
        };
        spec.validate(name)?;
        Ok(spec)
    }

    /// Whether `head` (the start of a file) looks like a stand-in spec: a line setting the
    /// marker key.
    pub fn looks_like(head: &[u8]) -> bool {
        String::from_utf8_lossy(head).lines().any(|l| {
            l.trim_start()
                .strip_prefix(MARKER)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_toml() {
        for info in KINDS {
            let spec = Spec {
                kind: info.kind,
                size_mb: 3,
                instructions: 12_345,
                seed: u64::MAX >> 1,
                instructions_per_ms: 7,
            };
            let text = spec.to_toml();
            assert!(Spec::looks_like(text.as_bytes()));
            assert_eq!(Spec::parse(&text, "s.toml").unwrap(), spec);
        }
        let minimal = "bulksim_standin = 1\nkind = \"zipf_drift\"\n";
        assert_eq!(
            Spec::parse(minimal, "s.toml").unwrap(),
            Spec::new(Kind::ZipfDrift)
        );
    }

    #[test]
    fn bad_specs_name_the_file_and_key() {
        let head = "bulksim_standin = 1\n";
        let cases = [
            ("kind = \"fp\"", "s.toml: key 'kind': unknown stand-in kind 'fp'; expected one of fp_stream, stream_rw, pointer_chase, zipf_drift"),
            ("kind = \"fp_stream\"\nsize_mb = 0", "s.toml: key 'size_mb': 0 MiB; expected 1 to 16384"),
            ("kind = \"fp_stream\"\nsize_mb = -1", "s.toml: key 'size_mb': -1; expected a non-negative integer"),
            ("kind = \"fp_stream\"\nsizemb = 4", "s.toml: unknown key 'sizemb'; expected bulksim_standin, kind, size_mb, instructions, seed, instructions_per_ms"),
            ("kind = \"fp_stream\"\ninstructions = 0", "s.toml: key 'instructions': 0 instructions; expected 1 to 2^50 (1125899906842624)"),
            ("kind = \"fp_stream\"\ninstructions_per_ms = 0", "s.toml: key 'instructions_per_ms': 0 instructions/ms; expected 1 to 2^40"),
            ("size_mb = 4", "s.toml: key 'kind': missing"),
            ("kind = 3", "s.toml: key 'kind': 3; expected a string"),
            ("kind = \"fp_stream\"\nseed = 1.5", "s.toml: key 'seed': 1.5; expected a non-negative integer"),
        ];
        for (body, want) in cases {
            let got = Spec::parse(&format!("{head}{body}\n"), "s.toml").unwrap_err();
            assert_eq!(got.to_string(), want, "{body}");
        }
        let got = Spec::parse("kind = \"fp_stream\"\n", "s.toml").unwrap_err();
        assert_eq!(got.to_string(), "s.toml: key 'bulksim_standin': missing");
        let got = Spec::parse("bulksim_standin = 2\nkind = \"fp_stream\"\n", "s.toml").unwrap_err();
        assert_eq!(
            got.to_string(),
            "s.toml: key 'bulksim_standin': version 2; this bulksim reads version 1"
        );
        let got = Spec::parse("bulksim_standin = [\n", "s.toml").unwrap_err();
        assert!(
            got.to_string()
                .starts_with("s.toml: not a stand-in spec (TOML): "),
            "{got}"
        );
    }
}
