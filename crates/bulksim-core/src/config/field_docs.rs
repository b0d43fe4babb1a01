//! Where each config field's unit and description live: `config_struct!` declares a section's
//! serde struct one field per line with its unit and description beside it (as `stat_struct!`
//! does for stats), and `CONFIG_FIELDS` gathers every section's entries into the one table that
//! key checks, `bulksim docs` (docs/config.md) and `config show` read, in the reference's order.

use super::{
    BulkConfig, CacheConfig, CacheLevelConfig, ControllerConfig, CopyEngineConfig, CoreConfig,
    DeviceConfig, DramConfig, HybridConfig, MemcpyConfig, MemoryConfig, OsConfig, RefreshConfig,
    SimConfig, SystemConfig, WriteDrainConfig, INCLUDE_DOC,
};
use serde::Serialize;
use std::sync::LazyLock;

/// Unit and description of one config field.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FieldDoc {
    pub key: &'static str,
    pub unit: &'static str,
    pub description: &'static str,
    /// The names a choice field takes (`choice(..)`); empty for every other field.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub choices: &'static [&'static str],
}

/// Declares a config section's struct, each field followed by where its docs are:
///
/// ```ignore
/// config_struct! {
///     #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
///     #[serde(deny_unknown_fields, default)]
///     pub struct BulkConfig at "bulk" {
///         pub fpm: bool = doc("on/off", "use FPM when source and destination share a subarray"),
///         pub engine: EngineConfig = section(),
///     }
/// }
/// ```
///
/// `doc(unit, description)` documents the key `prefix.field`; `choice(Enum, description)`
/// documents a field holding a `config_enum!` value (or an `Option` of one): its unit is the
/// enum's names (`Enum::UNIT`) and its `choices` are the names, so the docs, `config show` and
/// the error for a bad value list exactly what the field reads; `section()` marks a field
/// whose struct documents its own keys under its own prefix (nothing else is accepted, so a
/// field cannot be declared without saying where its docs are). The struct is emitted as
/// written (attributes, derives and serde settings pass through), with
/// `field_docs()`, its entries in declaration order.
macro_rules! config_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident at $prefix:literal {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $fty:ty = $how:ident ( $($args:tt)* )
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$fmeta])*
                $fvis $field: $fty,
            )*
        }

        impl $name {
            /// Unit and description of each key this struct declares, keyed
            /// `prefix.field`, in declaration order.
            pub fn field_docs() -> Vec<$crate::config::FieldDoc> {
                let mut docs = Vec::new();
                $(docs.extend_from_slice($crate::config::field_docs::config_struct!(
                    @entry $prefix, $field, $how($($args)*)
                ));)*
                docs
            }
        }
    };
    (@entry $prefix:literal, $field:ident, doc($unit:literal, $description:literal $(,)?)) => {
        &[$crate::config::FieldDoc {
            key: concat!($prefix, ".", stringify!($field)),
            unit: $unit,
            description: $description,
            choices: &[],
        }]
    };
    (@entry $prefix:literal, $field:ident, choice($choice:ty, $description:literal $(,)?)) => {
        &[$crate::config::FieldDoc {
            key: concat!($prefix, ".", stringify!($field)),
            unit: <$choice>::UNIT,
            description: $description,
            choices: <$choice>::NAMES,
        }]
    };
    (@entry $prefix:literal, $field:ident, section()) => {
        &[]
    };
}
pub(crate) use config_struct;

/// Every config field's unit and description, section by section, each section's fields in
/// the order its struct declares them (the order `config show` writes the TOML in).
pub static CONFIG_FIELDS: LazyLock<Vec<FieldDoc>> = LazyLock::new(declared_fields);

/// Every section's entries, section by section in declaration order.
fn declared_fields() -> Vec<FieldDoc> {
    let sections = [
        DramConfig::field_docs(),
        ControllerConfig::field_docs(),
        RefreshConfig::field_docs(),
        WriteDrainConfig::field_docs(),
        BulkConfig::field_docs(),
        SystemConfig::field_docs(),
        CoreConfig::field_docs(),
        CacheConfig::field_docs(),
        CacheLevelConfig::field_docs(),
        MemoryConfig::field_docs(),
        DeviceConfig::field_docs(),
        CopyEngineConfig::field_docs(),
        MemcpyConfig::field_docs(),
        OsConfig::field_docs(),
        SimConfig::field_docs(),
        HybridConfig::field_docs(),
    ];
    std::iter::once(INCLUDE_DOC)
        .chain(sections.into_iter().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    config_struct! {
        #[derive(Debug, Default, Deserialize)]
        struct Inner at "outer.inner" {
            depth: u32 = doc("levels", "how deep"),
        }
    }

    config_struct! {
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        struct Outer at "outer" {
            /// Rust docs pass through.
            width: u32 = doc("bytes", "how wide"),
            inner: Inner = section(),
            #[serde(rename = "tall")]
            height: f64 = doc("m", "how tall"),
        }
    }

    #[test]
    fn a_declaration_gives_each_documented_field_its_key_unit_and_description() {
        let docs: Vec<(&str, &str, &str)> = Outer::field_docs()
            .iter()
            .map(|f| (f.key, f.unit, f.description))
            .collect();
        assert_eq!(
            docs,
            [
                ("outer.width", "bytes", "how wide"),
                ("outer.height", "m", "how tall")
            ]
        );
        let inner: Vec<&str> = Inner::field_docs().iter().map(|f| f.key).collect();
        assert_eq!(inner, ["outer.inner.depth"]);
        // Serde attributes pass through the macro.
        let parsed: Outer = toml::from_str("width = 3\ntall = 1.5\n[inner]\ndepth = 2").unwrap();
        assert_eq!(
            (parsed.width, parsed.height, parsed.inner.depth),
            (3, 1.5, 2)
        );
        assert!(toml::from_str::<Outer>("height = 1.5").is_err());
    }

    #[test]
    fn the_table_holds_every_declared_key_once_in_declaration_order() {
        let mut keys: Vec<&str> = CONFIG_FIELDS.iter().map(|f| f.key).collect();
        assert_eq!(keys[0], "include");
        assert_eq!(keys[1], "dram.preset");
        // Within a section, the struct's order: `dram.columns` is declared before `dram.rows`.
        let at = |key: &str| keys.iter().position(|k| *k == key).unwrap();
        assert!(at("dram.columns") < at("dram.rows"));
        assert!(at("dram.rows") < at("controller.scheduler"));
        let before = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), before, "a key is declared twice");
    }
}
