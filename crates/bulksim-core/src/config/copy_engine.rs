//! `[copy_engine]`: the copy engines beside the cache levels (where movblks run, their queue,
//! ordering, pipeline and realignment, and `dce_rowclone`'s hand-off of chunks to DRAM).

use super::choice::config_enum;
use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};

config_struct! {
    /// Copy engines beside the cache levels (`[copy_engine]`, `copy_engine` module).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct CopyEngineConfig at "copy_engine" {
        pub policy: CopyEnginePolicy = choice(
            CopyEnginePolicy,
            "copy engines beside the caches (docs/copy_engines.md): none; ce_l1 (an engine beside the first level only: every movblk runs there, missing source lines fetched and allocated); dce (engines beside the first two levels: a movblk runs in the first level when one of its source lines is there, else in the second, missing lines allocated); dce_nt (the same, missing source lines go to the engine only); dce_rowclone (beyond the paper: dce_nt, and the movblk memcpy hands each whole destination chunk of copy_engine.dram_chunk_bytes to the memory controller, which runs it as RowClone, when no cache holds its source; needs system.bulk_mechanism = rowclone or rowclone_zi)",
        ),
        /// Movblks queued at the first-level engine.
        pub fifo_depth: u32 = doc(
            "movblks",
            "movblks retired into the first-level engine's queue and not yet done; a full queue stalls dispatch (the paper leaves it open: 8 is bulksim's choice)",
        ),
        pub ordering: CopyOrdering = choice(
            CopyOrdering,
            "younger loads and stores wait for queued movblks whose ranges they overlap (overlap) or for every queued movblk (serial)",
        ),
        pub parallel_reads: bool = doc(
            "bool",
            "an engine reads its two source lines at once (two banks) instead of one after the other (the paper assumes serial reads)",
        ),
        /// Two stages per engine: the next movblk reads its sources while the one before it
        /// finishes (`copy_engine::engine`).
        pub pipeline: bool = doc(
            "bool",
            "an engine works in two stages: the next movblk reads its source lines (and, at the first level, decides where it runs) while the one before it realigns and writes its destination or sends its message down (true: bulksim's reading of the paper's FIFO 'to allow pipelining several copy instructions'), or one movblk at a time (false); a movblk reading the line the one before it writes waits for it",
        ),
        /// Core cycles of the shift buffer's realignment.
        pub realign_cycles: u32 = doc(
            "core cycles",
            "the shift buffer's realignment of the two source lines (the paper: 2)",
        ),
        pub nt_last_level: bool = doc(
            "bool",
            "dce_nt: the last engine allocates the source lines it fetches from memory (true) or hands them to the engine only (false, bulksim's reading of the paper's non-temporal rule)",
        ),
        pub partial_line: PartialLine = choice(
            PartialLine,
            "the last engine writes a block smaller than its level's line (32 B into a 64-B L2 line) into a line it lacks: merge (the line is made whole from the level below and memory at no cost: bytes exact, a later miss to the other half is a hit; bulksim's choice, the digest's option b), fetch (the line is read from below first, costing a miss) or sector (the line keeps a valid bit per first-level line and is put in valid in the block only, without a fetch: a later fill or engine read of an invalid part misses, fetches the line and merges it under the valid part, counted in cache.<level>.sector_misses; a write-back writes only the valid parts, masked; bulksim's choice, the digest's option a)",
        ),
        /// `dce_rowclone`: bytes of one destination chunk handed to the memory controller.
        pub dram_chunk_bytes: u32 = doc(
            "bytes",
            "dce_rowclone: the destination chunk the movblk memcpy hands down as one operation: a power of two from the last level's line to the 4096-byte page (bulksim's choice: 4096, one page, RowClone's copy granularity); a chunk goes down only when its source has the destination's offset within a last-level line and lies in one physically contiguous range, else it runs as movblks",
        ),
        /// `dce_rowclone`: core cycles of the tag probe that decides a chunk's place.
        pub probe_cycles: u32 = doc(
            "core cycles",
            "dce_rowclone: the tag probe of every cache level for a chunk's source lines holds the memcpy's next instruction this long (bulksim's choice: 0, the probe overlapping the routine's own work)",
        ),
        pub dram_rule: DramRule = choice(
            DramRule,
            "dce_rowclone: hand a chunk down when no cache level holds any of its source lines (probe), or always (the controller's RowClone coherence copies dirty source lines in the cache under the destination's tag)",
        ),
    }
}

config_enum! {
    /// When `dce_rowclone` hands a chunk to the memory controller (`copy_engine.dram_rule`).
    pub enum DramRule {
        /// When no cache level holds any of its source lines (a tag probe).
        Probe = "probe",
        /// Always (no probe; the controller's coherence moves cached data).
        Always = "always",
    }
}

config_enum! {
    /// How the last engine writes a destination block smaller than its level's line
    /// (`copy_engine.partial_line`).
    pub enum PartialLine {
        /// The rest of the line is taken from below at no cost (bulksim's choice).
        Merge = "merge",
        /// The line is fetched from below first, then written.
        Fetch = "fetch",
        /// The line keeps a valid bit per block: only the block written is valid (bulksim's
        /// choice of the paper's sector-valid option); a miss to the rest fetches and merges,
        /// a write-back writes only valid bytes.
        Sector = "sector",
    }
}

impl Default for CopyEngineConfig {
    fn default() -> Self {
        CopyEngineConfig {
            policy: CopyEnginePolicy::None,
            fifo_depth: 8,
            ordering: CopyOrdering::Overlap,
            parallel_reads: false,
            pipeline: true,
            realign_cycles: 2,
            nt_last_level: false,
            partial_line: PartialLine::Merge,
            dram_chunk_bytes: 4096,
            probe_cycles: 0,
            dram_rule: DramRule::Probe,
        }
    }
}

config_enum! {
    /// Where movblks run (`copy_engine.policy`).
    pub enum CopyEnginePolicy {
        None = "none",
        CeL1 = "ce_l1",
        Dce = "dce",
        DceNt = "dce_nt",
        /// As `DceNt`, and the movblk memcpy hands whole destination chunks to RowClone.
        DceRowclone = "dce_rowclone",
    }
}

impl CopyEnginePolicy {
    /// Cache levels with an engine beside them.
    pub fn engine_levels(self) -> usize {
        match self {
            CopyEnginePolicy::None => 0,
            CopyEnginePolicy::CeL1 => 1,
            CopyEnginePolicy::Dce | CopyEnginePolicy::DceNt | CopyEnginePolicy::DceRowclone => 2,
        }
    }
}

config_enum! {
    /// Which younger accesses wait for queued movblks (`copy_engine.ordering`).
    pub enum CopyOrdering {
        Overlap = "overlap",
        Serial = "serial",
    }
}
