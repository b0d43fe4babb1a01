//! `[dram]`: the memory part (a preset) and what a config changes of it: channels, ranks,
//! subarray size, row and column overrides, timing overrides, operating temperature and the
//! pJ/bit energy model's activation size. `spec.rs` resolves it into a `Spec`.

use super::choice::config_enum;
use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

config_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct DramConfig at "dram" {
        pub preset: String = doc(
            "name",
            "memory part: organisation, speed and timing (`bulksim spec list`)",
        ),
        pub channels: u32 = doc(
            "channels",
            "independent channels, each with its own controller; a power of two",
        ),
        pub ranks: u32 = doc(
            "ranks per channel",
            "ranks sharing each channel's buses; a power of two",
        ),
        pub rows_per_subarray: u32 = doc("rows", "rows sharing one row buffer (subarray size)"),
        /// Columns per row per chip; 0 keeps the preset's.
        pub columns: u32 = doc(
            "columns per row per chip",
            "row size override (0 = the preset's); e.g. 512 on an x8 DDR3 part gives the 4 KB rank rows the RowClone paper assumes",
        ),
        /// Rows per bank; 0 keeps the preset's (a smaller memory of the same part).
        pub rows: u32 = doc(
            "rows per bank",
            "capacity override (0 = the preset's): a power of two up to the preset's rows; dram.rows_per_subarray must not exceed it",
        ),
        pub timing: BTreeMap<String, u32> = doc(
            "cycles (tCK) per entry",
            "overrides of the preset's timing parameters by name, e.g. { nCL = 17 }",
        ),
        pub temperature: Temperature = choice(
            Temperature,
            "extended (above 85 C): the preset's nREFI, nREFI2 and nREFI4 are halved (rounded down) before dram.timing overrides apply",
        ),
        /// MiB of each rank the OS may use (the capacity study); 0: the whole rank.
        pub rank_capacity_mb: u64 = doc(
            "MiB per rank",
            "frames the OS may use in each rank (the capacity study of docs/rank_assignment.md, \"Page allocation\"): each rank's lowest-numbered usable frames up to this size; 0 = the whole rank. With clock or rank_clock a full memory evicts pages; otherwise it is out of memory",
        ),
        /// Bits one ACT senses in the pJ/bit energy model; 0: the part's (the whole row).
        pub activation_bits: u64 = doc(
            "bits per ACT",
            "parts with pJ/bit energies (CMMP's, `memory.energy.per_bit`): bits one ACT senses, charged the array-read energy; 0: the part's (the whole row, 32,768 bits of a 4 KB row); at most the row's bits",
        ),
    }
}

config_enum! {
    /// Operating temperature range: above 85 C (extended) cells leak faster and are refreshed
    /// twice as often.
    pub enum Temperature {
        Normal = "normal",
        Extended = "extended",
    }
}

impl Default for DramConfig {
    fn default() -> Self {
        DramConfig {
            preset: "DDR4_8Gb_x8_2400".into(),
            channels: 1,
            ranks: 1,
            rows_per_subarray: 512,
            columns: 0,
            rows: 0,
            timing: BTreeMap::new(),
            temperature: Temperature::Normal,
            rank_capacity_mb: 0,
            activation_bits: 0,
        }
    }
}
