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
/// `doc(unit, description)` documents the key `prefix.field`; `section()` marks a field
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
        }]
    };
    (@entry $prefix:literal, $field:ident, section()) => {
        &[]
    };
}
pub(crate) use config_struct;

/// Every config field's unit and description: each section's, in the reference's order
/// (`REFERENCE_ORDER`, then any field it does not list in declaration order). Tests keep
/// it in step with the structs.
pub static CONFIG_FIELDS: LazyLock<Vec<FieldDoc>> =
    LazyLock::new(|| in_reference_order(declared_fields()));

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

/// `declared` in `REFERENCE_ORDER`, fields it does not list last in the order given.
fn in_reference_order(mut declared: Vec<FieldDoc>) -> Vec<FieldDoc> {
    let mut ordered = Vec::with_capacity(declared.len());
    for key in REFERENCE_ORDER {
        if let Some(i) = declared.iter().position(|f| f.key == *key) {
            ordered.push(declared.remove(i));
        }
    }
    ordered.extend(declared);
    ordered
}

/// The order of the field table in docs/config.md and `config show`: the order the keys were
/// added in, which readers of the reference know. The structs declare their fields in the
/// order the TOML is written (`Config::to_toml`), which differs; a new field needs no entry
/// here (it follows these).
pub(super) const REFERENCE_ORDER: &[&str] = &[
    "include",
    "dram.preset",
    "dram.channels",
    "dram.ranks",
    "dram.rows_per_subarray",
    "dram.rows",
    "dram.columns",
    "dram.timing",
    "dram.temperature",
    "dram.activation_bits",
    "dram.rank_capacity_mb",
    "controller.scheduler",
    "controller.row_hit_cap",
    "controller.page_policy",
    "controller.read_queue_size",
    "controller.write_queue_size",
    "controller.write_high_watermark",
    "controller.write_low_watermark",
    "controller.refresh",
    "controller.refresh.policy",
    "controller.refresh.granularity",
    "controller.refresh.fgr_overhead",
    "controller.refresh.stagger",
    "controller.refresh.scheme",
    "controller.refresh.ar_reads",
    "controller.refresh.idle_ns",
    "controller.refresh.elastic_deadline",
    "controller.refresh.elastic_keeps_stagger",
    "controller.refresh.pause_granularity",
    "controller.refresh.pcd_window_ns",
    "controller.write_drain.scope",
    "controller.write_drain.policy",
    "controller.write_drain.high",
    "controller.write_drain.low",
    "controller.write_drain.coordinate",
    "controller.address_mapping",
    "controller.xor_bank",
    "bulk.mechanism",
    "bulk.lines_in_flight",
    "bulk.queue_size",
    "bulk.fpm",
    "system.bulk_mechanism",
    "system.init_mechanism",
    "system.core_ghz",
    "system.bulk_offload_min_bytes",
    "system.time_slice_instructions",
    "system.cores",
    "system.loop_workloads",
    "system.cpu_full_line_stores",
    "core.window",
    "core.width",
    "core.store_queue",
    "core.lsq",
    "core.mem_ports",
    "cache.address_bytes",
    "cache.level[].port_cycles",
    "cache.level[].writeback_delays_miss",
    "cache.level[].serial_lookup",
    "memory.fixed_latency_cycles",
    "system.memcpy",
    "memcpy.call_instructions",
    "memcpy.word_bytes",
    "memcpy.check_instructions",
    "memcpy.loop_instructions",
    "memcpy.wc_buffers",
    "copy_engine.policy",
    "copy_engine.dram_chunk_bytes",
    "copy_engine.probe_cycles",
    "copy_engine.dram_rule",
    "copy_engine.fifo_depth",
    "copy_engine.ordering",
    "copy_engine.parallel_reads",
    "copy_engine.pipeline",
    "copy_engine.realign_cycles",
    "copy_engine.partial_line",
    "copy_engine.nt_last_level",
    "cache.level",
    "cache.level[].size_kb",
    "cache.level[].shared",
    "cache.level[].ways",
    "cache.level[].line_bytes",
    "cache.level[].hit_cycles",
    "cache.level[].mshrs",
    "cache.level[].writeback_buffer",
    "memory.device",
    "memory.device[].name",
    "memory.device[].preset",
    "memory.device[].channels",
    "memory.device[].ranks",
    "memory.device[].rows",
    "memory.device[].activation_bits",
    "memory.device[].page_policy",
    "memory.device[].address_mapping",
    "memory.device[].read_queue_size",
    "memory.device[].write_queue_size",
    "os.allocator",
    "os.seed",
    "os.thread_ranks",
    "os.mapping_error",
    "os.preferred_rank",
    "os.tlb_pages",
    "os.trace_bulk_destinations",
    "os.fault_instructions",
    "sim.mode",
    "sim.skip_idle",
    "sim.record_intervals",
    "sim.interruption_metrics",
    "sim.memory_limit_mb",
    "sim.max_cycles",
    "sim.stop_after_dram_accesses",
    "sim.warmup_instructions",
    "sim.measure_instructions",
    "hybrid.mechanism",
    "hybrid.period_ns",
    "hybrid.pact_entries",
    "hybrid.pact_ways",
    "hybrid.pact_count_bits",
    "hybrid.art_entries",
    "hybrid.art_ways",
    "hybrid.decay",
    "hybrid.promote_min",
    "hybrid.free_min",
    "hybrid.copy_priority",
    "hybrid.copies_in_flight",
    "hybrid.obm_complete_after",
    "hybrid.art_full_completes",
    "hybrid.art_full_min_periods",
    "hybrid.elide_clean",
    "hybrid.remap_lines",
    "hybrid.pact_origins",
    "hybrid.count_copies",
    "hybrid.placement",
    "hybrid.os_period_ns",
    "hybrid.os_remap_ns",
    "hybrid.cpm_setup_ns",
    "hybrid.cpm_flush_dram_line_ns",
    "hybrid.cpm_flush_pcm_line_ns",
    "hybrid.remap_shootdown_ns",
];

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
    fn the_reference_order_names_declared_keys_once_and_the_table_holds_every_key_once() {
        let declared = declared_fields();
        let mut keys: Vec<&str> = declared.iter().map(|f| f.key).collect();
        keys.sort();
        let before = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), before, "a key is declared twice");
        for key in REFERENCE_ORDER {
            assert!(
                keys.contains(key),
                "REFERENCE_ORDER names {key}, which no struct declares"
            );
        }
        let mut listed = REFERENCE_ORDER.to_vec();
        listed.sort();
        listed.dedup();
        assert_eq!(
            listed.len(),
            REFERENCE_ORDER.len(),
            "REFERENCE_ORDER repeats a key"
        );
        assert_eq!(CONFIG_FIELDS.len(), declared.len());
        assert_eq!(CONFIG_FIELDS[0].key, "include");
        assert_eq!(CONFIG_FIELDS[1].key, "dram.preset");
        // `dram.rows` comes before `dram.columns` in the reference, after it in the struct.
        let at = |key: &str| CONFIG_FIELDS.iter().position(|f| f.key == key).unwrap();
        assert!(at("dram.rows") < at("dram.columns"));
    }

    #[test]
    fn fields_the_reference_order_does_not_list_follow_in_declaration_order() {
        let entry = |key: &'static str| FieldDoc {
            key,
            unit: "u",
            description: "d",
        };
        let declared = vec![
            entry("new.b"),
            entry("dram.columns"),
            entry("new.a"),
            entry("dram.rows"),
        ];
        let keys: Vec<&str> = in_reference_order(declared).iter().map(|f| f.key).collect();
        assert_eq!(keys, ["dram.rows", "dram.columns", "new.b", "new.a"]);
    }
}
