//! `[bulk]`: how a request trace's copy and initialization requests execute below the caches
//! (over the channel, by the controller's DMA engine, or in DRAM by RowClone).

use super::choice::config_enum;
use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};

config_enum! {
    /// How copy and initialization requests execute (see `bulk`).
    pub enum Mechanism {
        /// Trace replay: `channel`. Full system: what `system.bulk_mechanism` executes below the
        /// caches (`cpu`: channel, for pieces spanning memory devices; `mc_dma`; `rowclone` and
        /// `rowclone_zi`: rowclone).
        Auto = "auto",
        /// Over the channel by the memory side, with no caches: read each source line, write
        /// each destination line, through the controller's queues (a copy loop's memory traffic;
        /// not the full system's `cpu`, which runs the loop on a core through the caches).
        Channel = "channel",
        /// The memory controller's DMA engine: the same channel traffic, booked as DMA.
        McDma = "mc_dma",
        /// In DRAM: Fast Parallel Mode, Pipelined Serial Mode, channel fallback for the rest.
        Rowclone = "rowclone",
    }
}

impl Mechanism {
    /// The mechanism that executes: `auto` is `channel` unless the full system resolved it.
    pub fn resolved(self) -> Mechanism {
        match self {
            Mechanism::Auto => Mechanism::Channel,
            m => m,
        }
    }
}

config_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct BulkConfig at "bulk" {
        pub mechanism: Mechanism = choice(
            Mechanism,
            "how copy and init requests execute below the caches: auto (trace replay: channel; full system: set by system.bulk_mechanism, and any other value that disagrees with it is an error), channel and mc_dma over the channel (line reads and writes through the controller's queues, no caches; mc_dma is booked as DMA), rowclone in DRAM (FPM, PSM, channel fallback); rowclone reserves a zero row per subarray and a temporary row per bank",
        ),
        pub lines_in_flight: u32 = doc(
            "lines",
            "the channel copier's buffer (mechanisms channel and mc_dma, RowClone's fallback): reads fill it, then its lines are written; default one 4 KB page",
        ),
        pub queue_size: u32 = doc(
            "operations",
            "bulk operations in flight at once; further ones wait at the front end like a full request queue",
        ),
        pub fpm: bool = doc(
            "bool",
            "rowclone: allow Fast Parallel Mode for copies; false sends every in-DRAM copy through PSM (the paper's PSM configuration); zeroing whole rows uses FPM from the zero row either way",
        ),
    }
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            mechanism: Mechanism::Auto,
            lines_in_flight: 64,
            queue_size: 16,
            fpm: true,
        }
    }
}
