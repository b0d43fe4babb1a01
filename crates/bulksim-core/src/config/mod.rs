//! Configuration: serde structs that are the single source of truth for defaults, each
//! field declared with its unit and description (docs and `config show` are built from them),
//! loading from TOML with file/line errors, `--set key=value` overrides with "did you mean"
//! suggestions, semantic validation, and resolution of the preset into a complete `Spec`. One
//! concept per file: each section's structs (`dram`, `controller`, `refresh`, `bulk`,
//! `system`, `cache`, `memory`, `copy_engine`, `os`, `sim`, `hybrid`), the field table
//! (`field_docs`), keys and their checks (`keys`), reading files (`load`), overrides
//! (`overrides`), the spec and the devices (`spec`, `devices`) and validation (`validate`).

mod bulk;
mod cache;
mod choice;
mod controller;
mod copy_engine;
mod devices;
mod dram;
mod field_docs;
pub mod hybrid;
mod keys;
mod load;
mod memory;
mod os;
mod overrides;
mod refresh;
mod sim;
mod spec;
mod system;
mod validate;
mod validate_hierarchy;

pub use bulk::{BulkConfig, Mechanism};
pub use cache::{CacheConfig, CacheLevelConfig};
pub use controller::{
    ControllerConfig, DrainPolicy, DrainScope, PagePolicy, Scheduler, WriteDrainConfig,
    RANK_DRAIN_WATERMARKS,
};
pub use copy_engine::{CopyEngineConfig, CopyEnginePolicy, CopyOrdering, DramRule, PartialLine};
pub use dram::{DramConfig, Temperature};
pub use field_docs::{FieldDoc, CONFIG_FIELDS};
pub use hybrid::HybridConfig;
pub use keys::check_key;
pub use load::{read_config_file, read_small_text_file, MAX_CONFIG_BYTES};
pub use memory::{DeviceConfig, MemoryConfig};
pub use os::{AllocatorPolicy, OsConfig, PreferredRank, TraceBulkDestinations};
pub use refresh::{
    ElasticDeadline, RefreshBankScope, RefreshConfig, RefreshPolicy, RefreshScheme, SameBankOrder,
    Stagger,
};
pub use sim::{SimConfig, SimMode, DEFAULT_MAX_CYCLES};
pub use system::{
    CoreConfig, InitMechanism, LineStores, MemcpyConfig, MemcpyMode, SystemConfig, SystemMechanism,
};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Files merged under this one (resolved by `from_file`; empty afterwards).
    #[serde(skip_serializing)]
    pub include: Includes,
    pub dram: DramConfig,
    pub controller: ControllerConfig,
    pub bulk: BulkConfig,
    pub system: SystemConfig,
    pub core: CoreConfig,
    pub cache: CacheConfig,
    pub memory: MemoryConfig,
    pub copy_engine: CopyEngineConfig,
    pub memcpy: MemcpyConfig,
    pub os: OsConfig,
    pub sim: SimConfig,
    /// `[hybrid]`: a hybrid DRAM+PCM memory with page migration (docs/hybrid.md); absent:
    /// off, and every device is plain memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridConfig>,
}

/// `include`'s unit and description: the one key outside a section (`Config` is no
/// `config_struct!`; each of its sections documents its own keys).
const INCLUDE_DOC: FieldDoc = FieldDoc {
    key: "include",
    unit: "paths",
    description: "config files merged under this one (relative to it); this file's values win",
    choices: &[],
};

/// `include = "base.toml"` or `include = ["a.toml", "b.toml"]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Includes {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl Includes {
    fn paths(&self) -> Vec<&str> {
        match self {
            Includes::None => vec![],
            Includes::One(p) => vec![p.as_str()],
            Includes::Many(ps) => ps.iter().map(String::as_str).collect(),
        }
    }
}

#[cfg(test)]
mod tests;
