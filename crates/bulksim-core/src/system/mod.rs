//! The full system and its scheduler: trace-driven out-of-order cores, the cache hierarchy
//! (`cache::Hierarchy`), the OS memory manager, and the memory router with its devices below.
//! Which thread each core runs (one per initial thread; forked children run on their
//! parent's core when it waits or exits, or on an idle spare core when `system.cores` adds
//! some) is the thread scheduler's (`threads.rs`). Time is one integer clock in femtoseconds
//! on which the core clock and each device's clock are periods; the loop steps the cores every
//! core cycle while any can make progress, each device at its own cycles while it has work,
//! and otherwise jumps to the next event (a response due, the end of a bulk operation, a
//! device's next event).
//!
//! Bulk work — memcpy/meminit events, copy-on-write copies and first-touch zeroing returned by
//! the OS — blocks the core that needs it; how it executes (`system.bulk_mechanism`,
//! `system.memcpy`, dce_rowclone chunks) and the one record of the bulk operations in flight
//! that accesses wait for are the bulk coordinator's (`bulk.rs`).
//!
//! Processes share no writable memory (fork is copy-on-write), so the private caches need no
//! coherence protocol between them; a frame that changes owner is handed over instead.
//!
//! A run is bounded by `sim.max_cycles` core cycles: a compute record that alone would end
//! past it, or a run that reaches it, stops with an error naming the record(s). With
//! `sim.stop_after_dram_accesses` it ends, without error, in the core cycle in which the
//! memory devices accept that many requests (`stop_all_threads`). Long runs
//! report progress (instructions retired, simulated time) about twice a second of host time.

mod build;
mod bulk;
mod collect;
pub mod core;
mod dram_chunks;
mod functional;
mod hybrid;
pub mod interruptions;
mod measure;
mod run;
mod schedule;
pub mod stats;
mod threads;

pub use run::{run_opened_workload, run_workload, run_workload_logged, run_workload_with_progress};

use self::core::{Core, CoreSettings};
use crate::cache::hierarchy::Completed;
use crate::cache::Hierarchy;
use crate::config::{Config, Mechanism, SimMode, SystemMechanism, TraceBulkDestinations};
use crate::error::{Error, Result};
use crate::memory::MemoryRouter;
use crate::os::allocator::{
    ranks::{RankBits, RankLayout},
    sites_from_mapper, usable_frames_from_mapper, FrameAllocator, RankSetup, SiteFn,
    LAZY_ABOVE_FRAMES, PAGE,
};
use crate::os::{Os, Pid, RankOf};
use crate::workload::program::Event;
use crate::workload::source::Workload;
use bulk::{BulkCoordinator, Finished};
use hybrid::HybridOsWork;
use interruptions::InterruptionRecorder;
use stats::{CoreStats, DeviceStats, SystemStats};
use std::path::Path;
use threads::{SchedulerSetup, ThreadScheduler};

/// Called during a run with the instructions retired and the simulated time (ns) so far:
/// at most once per `PROGRESS_PERIOD` of host time, and once at the end.
pub type Progress<'a> = &'a mut dyn FnMut(u64, f64);
pub const PROGRESS_PERIOD: std::time::Duration = std::time::Duration::from_millis(500);

/// Timing constants of the cores and the first cache level.
#[derive(Clone, Copy, Debug)]
struct Timing {
    /// One core cycle (fs).
    core_fs: u64,
    /// The first cache level's hit latency (fs).
    hit_fs: u64,
    /// The first cache level's line size (bytes).
    line: u64,
}

/// How the run goes and when it stops (`[sim]`).
#[derive(Clone, Copy, Debug)]
struct RunOptions {
    /// `sim.mode = "functional"`: cores and OS only (`functional`).
    functional: bool,
    /// `sim.skip_idle`: time jumps over cycles in which nothing can change.
    skip_idle: bool,
    /// `sim.record_intervals` as the user set it (the interruption metrics turn it on inside).
    record_intervals: bool,
    /// `sim.max_cycles` in core cycles, and as a time (fs).
    max_cycles: u64,
    max_fs: u64,
}

pub struct System {
    /// How the run goes and when it stops.
    run: RunOptions,
    /// How copies and initializations run, and the bulk work in flight (`bulk.rs`).
    bulk: BulkCoordinator,
    cores: Vec<Core>,
    /// Threads, processes and which core runs which (`threads.rs`).
    sched: ThreadScheduler,
    os: Os,
    mem: Hierarchy,
    /// Core cycle, first-level hit latency and line size.
    timing: Timing,
    /// `[core]`: every core's width, window and memory limits.
    settings: CoreSettings,
    /// The interruption metrics' records (`sim.interruption_metrics`; None: off).
    interruptions: Option<InterruptionRecorder>,
    now: u64,
    /// Warm-up and measured windows per core (`sim.measure_instructions`; None: off).
    measure: Option<measure::Measure>,
    /// The hybrid memory's OS work (`hybrid.rs`; None: no `[hybrid]`).
    hybrid_os: Option<HybridOsWork>,
}

impl System {
    /// Whether cache level `level` holds the line of physical address `pa` in the array
    /// core `core` uses.
    pub fn cache_holds(&self, level: usize, core: usize, pa: u64) -> bool {
        let l = &self.mem.levels[level];
        l.arrays[l.array_of[core]]
            .probe(pa / l.line_bytes)
            .is_some()
    }

    /// Writes every dirty cache line back to the memory image and empties the caches,
    /// untimed (`Hierarchy::flush_untimed`): for checks of the image after a run.
    pub fn flush_caches(&mut self) {
        self.mem.flush_untimed();
    }

    /// The cache hierarchy, for checks of what its levels hold.
    pub fn caches(&self) -> &Hierarchy {
        &self.mem
    }

    /// Bytes at `vaddr` as process `pid` sees them now (None where unmapped, or for an
    /// exited process where a frame it left was handed out again since: `Os::lookup_intact`).
    pub fn read_virtual(&self, pid: Pid, vaddr: u64, len: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        for i in 0..len as u64 {
            let pa = self.os.lookup_intact(pid, vaddr + i)?;
            let mut byte = [0u8];
            self.mem.read_as_cores(pa, &mut byte);
            out.push(byte[0]);
        }
        Some(out)
    }

    /// The functional memory image (behind the memory router).
    /// The OS (page tables, frame table, allocator).
    pub fn os(&self) -> &Os {
        &self.os
    }

    pub fn image(&self) -> &crate::image::MemoryImage {
        self.mem.router().image()
    }

    /// The hybrid memory (`[hybrid]`), for checks of its tables after a run.
    pub fn hybrid(&self) -> Option<&crate::memory::hybrid::HybridMemory> {
        self.mem.router().hybrid.as_ref()
    }

    /// The process id thread `t` ran as.
    pub fn pid_of(&self, t: usize) -> Option<Pid> {
        self.sched.pid_of(t)
    }
}
