//! `[sim]`: how a run is driven and when it ends (timing or functional mode, idle skipping,
//! interval records, host memory, the cycle guard, and the full system's stop and
//! measurement windows).

use super::choice::config_enum;
use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};

config_enum! {
    /// Whether the full system simulates time (caches, DRAM) or only the cores and the OS.
    pub enum SimMode {
        Timing = "timing",
        Functional = "functional",
    }
}

config_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct SimConfig at "sim" {
        pub skip_idle: bool = doc(
            "bool",
            "jump over cycles in which nothing can change (results are identical either way)",
        ),
        pub record_intervals: bool = doc(
            "bool",
            "keep every interval a rank was unavailable (refresh, write drain) and every interval a thread stalled on memory, besides their totals (stats `unavailable[].intervals`, `threads[].stall_intervals`)",
        ),
        /// Compute the `interruptions` stats (which threads each refresh and write drain
        /// stalled, DRAM accesses per thread and rank); records intervals internally.
        pub interruption_metrics: bool = doc(
            "bool",
            "full system only: compute the `interruptions` stats at the end of the run (per refresh and per write drain the threads it stalled, the weighted core stall time per refresh, per thread the share of refreshes that stalled it and its DRAM reads and writes per rank; docs/rank_assignment.md, Metrics); the intervals it needs are recorded internally and listed in stats only with sim.record_intervals; off: the run pays nothing",
        ),
        /// Host memory a run may allocate up front, in MiB; 0: the machine's available memory.
        pub memory_limit_mb: u64 = doc(
            "MiB",
            "host memory a run may allocate up front (controllers' tables and queues, cache arrays, the OS's 20 bytes per 4 KiB frame up to 16 GiB, 7 above); a larger configuration is an error saying how much it needs; 0 = the machine's available memory (MemAvailable)",
        ),
        /// The longest run allowed (memory cycles in trace replay, core cycles in the full
        /// system): a guard against a corrupt cycle or instruction count running for days.
        pub max_cycles: u64 = doc(
            "cycles: memory cycles in trace replay, core cycles in the full system",
            "longest run allowed: a trace record whose cycle lies beyond it, a full-system compute record (`C n`) that would end beyond it, or a full-system run that reaches it stops with an error naming the record; raise it for longer runs (idle gaps cost no host time, refreshes included)",
        ),
        /// A full-system run ends when the memory devices have accepted this many requests
        /// (reads and writes); 0: off.
        pub stop_after_dram_accesses: u64 = doc(
            "requests",
            "full system: the run ends in the core cycle in which the memory devices have accepted this many requests from the caches (reads and writes, every channel and device; the Rank Assignment paper ends each run at 2 million); the stats are those of that moment, every running thread's end time being it; a workload that ends sooner just ends; 0: off",
        ),
        /// Instructions each core retires before its measured window (full system); 0: none.
        pub warmup_instructions: u64 = doc(
            "instructions per core",
            "full system, with sim.measure_instructions: each core (one per starting thread) first retires this many instructions; memory-side stats (memory, memory_devices, hybrid) count only from the core cycle in which the last core finished its warm-up (docs/hybrid.md, Measurement); 0: no warm-up",
        ),
        /// Instructions each core's measured window lasts (full system); the run ends when
        /// every core has finished its window; 0: off.
        pub measure_instructions: u64 = doc(
            "instructions per core",
            "full system: each core's measured window lasts from the core cycle in which it retired sim.warmup_instructions to the one in which it retired this many more (stats cores[].measured_cycles, measurement); the run ends when every core has finished its window, cores that finished keep running meanwhile (with system.loop_workloads their traces wrap); a core whose workload ends first is an error, and so is sim.stop_after_dram_accesses beside it; 0: off",
        ),
        pub mode: SimMode = choice(
            SimMode,
            "full system: timing simulates caches and DRAM; functional runs only the cores (one instruction per core cycle) and the OS: every memory access is translated (faults, evictions, referenced bits) with no cache or DRAM (the page-allocation study)",
        ),
    }
}

/// `sim.max_cycles` by default: about 83 s of DDR4-2400 memory cycles or 25 s of a 4 GHz core,
/// a thousand times the longest shipped experiment.
pub const DEFAULT_MAX_CYCLES: u64 = 100_000_000_000;

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            skip_idle: true,
            record_intervals: false,
            interruption_metrics: false,
            memory_limit_mb: 0,
            max_cycles: DEFAULT_MAX_CYCLES,
            stop_after_dram_accesses: 0,
            warmup_instructions: 0,
            measure_instructions: 0,
            mode: SimMode::Timing,
        }
    }
}
