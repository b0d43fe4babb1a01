//! `[cache]` and each `[[cache.level]]`: the cache hierarchy from the core down, one level's
//! geometry, latency, MSHRs, write-back buffer and port. Checked by `validate.rs`.

use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};

config_struct! {
    /// The cache hierarchy, levels listed from the core down.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct CacheConfig at "cache" {
        pub level: Vec<CacheLevelConfig> = doc(
            "list of tables",
            "the cache levels from the core down (`[[cache.level]]`; override one with `--set cache.level.N.key=value`); default: one private 1 MiB level",
        ),
        /// Bytes of one address on a port between levels (traffic counts them).
        pub address_bytes: u32 = doc(
            "bytes",
            "size of one address crossing a port between cache levels: traffic stats count each line moved as line + address, a copy-engine message as two addresses (the copy-engines paper leaves it open: 4, a 32-bit target, is bulksim's choice)",
        ),
    }
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            level: vec![CacheLevelConfig::default()],
            address_bytes: 4,
        }
    }
}

config_struct! {
    /// One cache level (`[[cache.level]]`): write-back, write-allocate, LRU, non-inclusive.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct CacheLevelConfig at "cache.level[]" {
        pub size_kb: u32 = doc("KiB", "capacity: per core when private, in total when shared"),
        pub ways: u32 = doc(
            "ways",
            "associativity (LRU, write-back, write-allocate, non-inclusive)",
        ),
        pub line_bytes: u32 = doc(
            "bytes",
            "line size: a power of two, never smaller than the level above's; the last level's is 64 (one DRAM burst)",
        ),
        pub hit_cycles: u32 = doc(
            "core cycles",
            "latency of a hit at this level (first level: load-to-use; below: added to the miss of the level above)",
        ),
        pub shared: bool = doc(
            "bool",
            "one array shared by all cores instead of a private one per core (MSHRs stay per core)",
        ),
        pub mshrs: u32 = doc(
            "misses",
            "misses in flight per core at this level (misses to a line in flight merge)",
        ),
        pub writeback_buffer: u32 = doc(
            "lines",
            "write-backs each array of the level holds for the level below (per array); while it is full the level starts no miss and allocates no line, since each needs room for its victim (gem5's example L2 uses 8)",
        ),
        /// Core cycles to cross the port above this level, each way.
        pub port_cycles: u32 = doc(
            "core cycles",
            "time to cross the port above this level, each way (the copy-engines paper's off-chip L2: 10); a fill answered here takes hit_cycles + 2 x port_cycles, and a copy-engine message takes port_cycles",
        ),
        /// A miss leaves for the level below only after this level's lookup (`hit_cycles`).
        pub serial_lookup: bool = doc(
            "bool",
            "a miss leaves for the level below only after this level's lookup (hit_cycles); false: at once, the lookup overlapping the request below",
        ),
        /// A miss that pushes out a dirty line waits for that line's write-back below.
        pub writeback_delays_miss: bool = doc(
            "bool",
            "a miss (or a copy engine's destination write) whose victim is dirty first writes the victim back: it leaves only after the write-back has crossed the port below and been written there (the level below's port_cycles + hit_cycles; memory.fixed_latency_cycles from the last level; nothing when DRAM devices time the memory): a blocking write-back, for studies of its cost; false: victims leave through the write-back buffer and delay nothing (as in SimpleScalar, whose write-backs cost no time: unlimited write buffers)",
        ),
    }
}

impl Default for CacheLevelConfig {
    fn default() -> Self {
        CacheLevelConfig {
            size_kb: 1024,
            ways: 16,
            line_bytes: 64,
            hit_cycles: 20,
            shared: false,
            mshrs: 8,
            writeback_buffer: 8,
            port_cycles: 0,
            serial_lookup: false,
            writeback_delays_miss: false,
        }
    }
}
