//! `[controller]`: each channel's memory controller (scheduler, page policy, queues, address
//! mapping) and `[controller.write_drain]`, where and how writes are drained; refresh, the
//! other sub-table, is `refresh.rs`.

use super::choice::config_enum;
use super::field_docs::config_struct;
use super::refresh::{refresh_config, RefreshConfig};
use serde::{Deserialize, Serialize};

config_enum! {
    pub enum Scheduler {
        Fcfs = "fcfs",
        Frfcfs = "frfcfs",
    }
}

config_enum! {
    pub enum PagePolicy {
        Open = "open",
        Closed = "closed",
    }
}

config_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct ControllerConfig at "controller" {
        pub scheduler: Scheduler = choice(
            Scheduler,
            "fcfs: oldest ready request first; frfcfs: ready row hits first, then oldest ready",
        ),
        pub row_hit_cap: u32 = doc(
            "column commands",
            "frfcfs: after this many hits to one open row, stop favouring its hits (0 = no cap)",
        ),
        pub page_policy: PagePolicy = choice(
            PagePolicy,
            "open: rows stay open until a conflict; closed: every access auto-precharges (RDA/WRA)",
        ),
        pub read_queue_size: u32 = doc("requests", "read queue entries per channel"),
        pub write_queue_size: u32 = doc("requests", "write queue entries per channel"),
        pub write_high_watermark: f64 = doc(
            "fraction of write queue",
            "write drain starts when the write queue holds this much",
        ),
        pub write_low_watermark: f64 = doc(
            "fraction of write queue",
            "write drain stops at this occupancy if reads wait",
        ),
        #[serde(deserialize_with = "refresh_config")]
        pub refresh: RefreshConfig = doc(
            "table | policy name",
            "refresh settings below; a name alone (e.g. \"none\") sets controller.refresh.policy with the other keys at their defaults",
        ),
        pub write_drain: WriteDrainConfig = section(),
        pub address_mapping: String = doc(
            "name | field order",
            "non_interleaved, channel_interleaved, bank_interleaved or bank_xor (the paper's Fig 5, docs/rank_assignment.md), or address bits most significant field first from Ch Ra Bg Ba Ro Co; a field may appear twice if one part gives its bit count (Co2)",
        ),
        pub xor_bank: bool = doc(
            "bool",
            "XOR the bank bits with the low row bits (permutation interleaving); bank_xor implies it",
        ),
    }
}

config_enum! {
    /// Which requests share one write-drain state: the channel's whole write queue, or each
    /// rank's writes (the Rank Assignment paper's Table II: other ranks keep serving reads).
    pub enum DrainScope {
        Channel = "channel",
        Rank = "rank",
    }
}

config_enum! {
    /// How writes compete with reads.
    pub enum DrainPolicy {
        /// Reads first; writes drained between the high and low watermarks.
        Watermark = "watermark",
        /// Reads and writes in one order, by the scheduler (no drain periods).
        EqualPriority = "equal_priority",
        /// Writes are absorbed when they arrive and never reach DRAM (an upper bound).
        Ideal = "ideal",
    }
}

config_struct! {
    /// `[controller.write_drain]`: where and how writes are drained (see `controller::write_drain`).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct WriteDrainConfig at "controller.write_drain" {
        pub scope: DrainScope = choice(
            DrainScope,
            "channel: one drain state for the channel's write queue (reads wait during a drain); rank: each rank drains its own writes while the other ranks keep serving reads, with 2 x high write entries per rank (bulksim's choice)",
        ),
        pub policy: DrainPolicy = choice(
            DrainPolicy,
            "watermark: reads first, writes drained from high down to low; equal_priority: reads and writes in one order by the scheduler (two that reach the controller in one cycle: the one that left the last cache level first), no drains; ideal: writes absorbed on arrival, never issued (an upper bound)",
        ),
        /// High watermark in entries of the scope's writes; 0: channel scope takes
        /// `controller.write_high_watermark` of the write queue, rank scope 10.
        pub high: u32 = doc(
            "writes",
            "a drain starts when the scope holds this many writes; 0: channel scope uses controller.write_high_watermark, rank scope 10 (the paper's Table II)",
        ),
        /// Low watermark in entries; 0 with `high` 0: the fraction (channel) or 5 (rank).
        pub low: u32 = doc(
            "writes",
            "a drain stops at this many writes if reads wait; used when high is set (rank scope default 5)",
        ),
        pub coordinate: bool = doc(
            "bool",
            "rank scope: when one rank starts a drain, every rank of the channel with writes starts one too (each stops at its own low watermark)",
        ),
    }
}

impl Default for WriteDrainConfig {
    fn default() -> Self {
        WriteDrainConfig {
            scope: DrainScope::Channel,
            policy: DrainPolicy::Watermark,
            high: 0,
            low: 0,
            coordinate: false,
        }
    }
}

/// Per-rank watermarks of the Rank Assignment paper's Table II, the rank scope's default.
pub const RANK_DRAIN_WATERMARKS: (u32, u32) = (10, 5);

impl ControllerConfig {
    /// The write drain's (high, low) watermarks in entries of its scope's writes, and the
    /// write entries each scope unit may hold.
    pub fn drain_watermarks(&self) -> (usize, usize, usize) {
        let d = &self.write_drain;
        match d.scope {
            DrainScope::Channel if d.high == 0 => {
                let size = self.write_queue_size as usize;
                let high =
                    ((self.write_high_watermark * size as f64).round() as usize).clamp(1, size);
                let low = ((self.write_low_watermark * size as f64).round() as usize).min(high - 1);
                (high, low, size)
            }
            DrainScope::Channel => (
                d.high as usize,
                d.low as usize,
                self.write_queue_size as usize,
            ),
            DrainScope::Rank => {
                let (high, low) = if d.high == 0 {
                    RANK_DRAIN_WATERMARKS
                } else {
                    (d.high, d.low)
                };
                // bulksim's choice: room for two drains' worth of writes per rank.
                (high as usize, low as usize, 2 * high as usize)
            }
        }
    }
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            scheduler: Scheduler::Frfcfs,
            row_hit_cap: 0,
            page_policy: PagePolicy::Open,
            read_queue_size: 32,
            write_queue_size: 32,
            write_high_watermark: 0.8,
            write_low_watermark: 0.2,
            refresh: RefreshConfig::default(),
            write_drain: WriteDrainConfig::default(),
            address_mapping: "RoBaRaCoCh".into(),
            xor_bank: false,
        }
    }
}
