//! `[os]`: the OS memory manager's settings (the frame allocator policy and its seed, page
//! fault cost, rank assignment of threads, CLOCK's TLB reach, and what a trace's whole-page
//! bulk records do to their destinations).

use super::choice::config_enum;
use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};

config_enum! {
    /// How the OS places physical frames (see `os::allocator` for each policy).
    pub enum AllocatorPolicy {
        Scatter = "scatter",
        SubarrayAware = "subarray_aware",
        InterBank = "inter_bank",
        /// Rank Assignment for timing runs: each thread's pages on its own rank.
        RankStatic = "rank_static",
        /// Baseline CLOCK page replacement over all frames.
        Clock = "clock",
        /// Rank Assignment's modified CLOCK (per-rank pointers).
        RankClock = "rank_clock",
    }
}

impl AllocatorPolicy {
    /// Whether the policy places a thread's pages on its rank (the mapping must keep a page
    /// in one rank).
    pub fn is_rank_aware(self) -> bool {
        matches!(
            self,
            AllocatorPolicy::RankStatic | AllocatorPolicy::RankClock
        )
    }

    /// Whether the policy replaces pages when memory is full (CLOCK).
    pub fn replaces_pages(self) -> bool {
        matches!(self, AllocatorPolicy::Clock | AllocatorPolicy::RankClock)
    }
}

config_enum! {
    /// How `rank_clock` picks a new thread's preferred (and second) rank.
    pub enum PreferredRank {
        MostFree = "most_free",
        LeastDelay = "least_delay",
    }
}

config_enum! {
    /// What a trace's page copy or initialization record (the rowclone format's `C` and `S`)
    /// does to its destination page first.
    pub enum TraceBulkDestinations {
        /// The page gets a new frame when the record happens, as the kernel allocates a
        /// copy-on-write destination or a page to zero (a copy's from the source's subarray
        /// under `subarray_aware`).
        Allocate = "allocate",
        /// The page keeps the frame its first touch gave it.
        Keep = "keep",
    }
}

config_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct OsConfig at "os" {
        pub allocator: AllocatorPolicy = choice(
            AllocatorPolicy,
            "physical page allocation: scatter (seeded random order, like a stock kernel), subarray_aware (copy-on-write destinations from the source's subarray when free: FPM), inter_bank (from a neighbouring bank of the source's channel and rank: inter-bank PSM), rank_static (Rank Assignment: thread i's pages on global rank i mod R, in the scattered order within the rank), clock (CLOCK page replacement over all frames in physical order), rank_clock (Rank Assignment's modified CLOCK: per-rank pointers); docs/rank_assignment.md, \"Page allocation\"",
        ),
        pub seed: u64 = doc(
            "integer",
            "seed of the page allocator's order (and of os.mapping_error's draws)",
        ),
        pub fault_instructions: u32 = doc(
            "instructions",
            "kernel instructions each page fault runs besides its zeroing or copy (trap, page-table walk and update, frame allocation, return); they retire as non-memory instructions of the faulting thread and count in `instructions`; 0 models a free fault path",
        ),
        /// `rank_static`: each thread's global rank (empty: thread i on rank i mod R).
        pub thread_ranks: Vec<u32> = doc(
            "list of global ranks",
            "rank_static only (an error with another allocator): the preferred rank of each thread in workload order (global rank = channel x ranks per channel + rank, devices in order); one entry per thread; empty = thread i on rank i mod R",
        ),
        /// `rank_static`: probability that a new page goes to a random other rank.
        pub mapping_error: f64 = doc(
            "probability (0..1)",
            "rank_static only (above 0 an error with another allocator): each new page goes, with this probability, to a uniformly random rank other than its thread's (the paper's Fig 8 mapping error)",
        ),
        pub preferred_rank: PreferredRank = choice(
            PreferredRank,
            "rank_clock: a new thread's preferred rank, and its second from the other ranks by the same rule: most_free (most frames neither in use nor referenced; ties fewest threads, then lowest rank) or least_delay (lowest mean DRAM read latency of the rank so far as the system reports it; all zero in functional mode, so the ties decide)",
        ),
        /// Pages per core kept referenced when the CLOCK pointers roll over (TLB reach).
        pub tlb_pages: u32 = doc(
            "pages per core",
            "clock, rank_clock: when the pointers roll over, every referenced bit is cleared except those of each core's last this many distinct pages (what its TLB holds)",
        ),
        /// What a trace's whole-page copy or initialization record does to its destination.
        pub trace_bulk_destinations: TraceBulkDestinations = choice(
            TraceBulkDestinations,
            "post-LLC traces whose copy and initialization records are the kernel's page operations (the rowclone format's C and S records): allocate (each record's whole destination page gets a new frame when the record happens, as the kernel allocates a copy-on-write destination or a page to zero; a copy's frame comes from the source's subarray under os.allocator = subarray_aware: the RowClone paper's Section 4.3.1) or keep (the page keeps the frame its first touch gave it; a page first touched by a copy is still placed as a copy-on-write destination). The traces' addresses are physical in the simulator that wrote them, where the kernel's free list hands the same frame out again and again (forkset: 21,787 copies into 2,672 pages), so keep pins every later copy to the first one's placement; docs/workloads.md",
        ),
    }
}

impl Default for OsConfig {
    fn default() -> Self {
        OsConfig {
            allocator: AllocatorPolicy::Scatter,
            seed: 1,
            fault_instructions: 0,
            thread_ranks: Vec::new(),
            mapping_error: 0.0,
            preferred_rank: PreferredRank::MostFree,
            tlb_pages: 64,
            trace_bulk_destinations: TraceBulkDestinations::Allocate,
        }
    }
}
