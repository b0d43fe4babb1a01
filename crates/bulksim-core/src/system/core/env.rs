//! What a core talks to while it steps (`CoreEnv`): the thread scheduler, the OS, the cache
//! hierarchy (its first-level port), the bulk coordinator, the run's timing and settings,
//! the interruption recorder and the measured windows, borrowed apart from the cores once
//! per core cycle (`System::split_cores`: a plain struct of borrows on the stack). It also
//! answers what a core asks of them: address translation through the OS (a fault's work
//! comes back for the core to queue), whether an access waits for a migration or bulk work,
//! the rank delays the allocator is fed.

use super::Core;
use crate::cache::Hierarchy;
use crate::error::{Error, Result};
use crate::os::allocator::PAGE;
use crate::os::{Os, Pid, Work};
use crate::system::bulk::BulkCoordinator;
use crate::system::core::CoreSettings;
use crate::system::hybrid::HybridOsWork;
use crate::system::interruptions::InterruptionRecorder;
use crate::system::measure::Measure;
use crate::system::threads::ThreadScheduler;
use crate::system::{System, Timing};

/// The rest of the system as the cores see it during one core cycle.
pub(in crate::system) struct CoreEnv<'a> {
    /// The current time (fs).
    pub now: u64,
    /// Core cycle, first-level hit latency and line size.
    pub timing: Timing,
    /// `[core]`: width, window and memory limits.
    pub settings: CoreSettings,
    /// `sim.max_cycles` in core cycles.
    pub max_cycles: u64,
    /// A hybrid memory's OS work exists (its migrations may hold accesses).
    pub hybrid: bool,
    pub sched: &'a mut ThreadScheduler,
    pub os: &'a mut Os,
    pub mem: &'a mut Hierarchy,
    pub bulk: &'a mut BulkCoordinator,
    pub interruptions: Option<&'a mut InterruptionRecorder>,
    pub measure: Option<&'a mut Measure>,
}

impl System {
    /// The cores, and everything else they talk to, borrowed apart for one core cycle.
    #[inline(always)]
    pub(in crate::system) fn split_cores(&mut self) -> (&mut [Core], CoreEnv<'_>) {
        let env = CoreEnv {
            now: self.now,
            timing: self.timing,
            settings: self.settings,
            max_cycles: self.run.max_cycles,
            hybrid: self.hybrid_os.is_some(),
            sched: &mut self.sched,
            os: &mut self.os,
            mem: &mut self.mem,
            bulk: &mut self.bulk,
            interruptions: self.interruptions.as_mut(),
            measure: self.measure.as_mut(),
        };
        (&mut self.cores, env)
    }
}

impl CoreEnv<'_> {
    /// An error at thread `t`'s place in its workload.
    pub fn err(&self, t: usize, e: impl std::fmt::Display) -> Error {
        self.sched.err(t, e)
    }

    /// The physical address of thread `t`'s `va` on core `c`, and the fault's work the core
    /// must do first, if any (then the access is retried after it). A resident page seen for
    /// the first time is made zero at once, untimed, with no fault.
    #[inline]
    pub fn translate(
        &mut self,
        c: usize,
        t: usize,
        pid: Pid,
        va: u64,
        write: bool,
    ) -> Result<(u64, Option<Work>)> {
        let (pa, work) = self
            .os
            .translate_on(c as u32, pid, t as u32, va, write)
            .map_err(|e| self.sched.err(t, e))?;
        match work {
            Some(Work::Resident { frame }) => {
                self.first_touch_resident(c, frame);
                Ok((pa, None))
            }
            w => Ok((pa, w)),
        }
    }

    /// A resident page's frame seen for the first time (no fault): it becomes core `c`'s and
    /// reads zero, untimed.
    pub fn first_touch_resident(&mut self, c: usize, frame: u32) {
        self.mem.hand_over(c, frame as u64 * PAGE, PAGE);
        self.mem.zero_untimed(frame as u64 * PAGE, PAGE);
    }

    /// Whether an access to `pa` waits: its hybrid page's migration is completing, or a bulk
    /// operation in flight writes it.
    pub fn blocked(&self, pa: u64) -> bool {
        self.migration_completing(pa) || self.bulk.dst_blocked(pa)
    }

    /// Whether the hybrid memory completes the migration of the page holding `pa`.
    #[inline]
    pub fn migration_completing(&self, pa: u64) -> bool {
        self.hybrid && HybridOsWork::completing(self.mem, pa)
    }

    /// Whether core `c`'s access to `pa` (a store: `write`) must wait: a migration
    /// completing, or bulk work (`BulkCoordinator::access_waits`, which counts a copy
    /// engine's stall).
    #[inline]
    pub fn access_waits(&mut self, c: usize, pa: u64, write: bool) -> bool {
        self.migration_completing(pa)
            || self
                .bulk
                .access_waits(c, pa, write, self.mem, self.timing.line)
    }

    /// `os.preferred_rank = "least_delay"`: each global rank's mean DRAM read latency so far
    /// (devices in order, each channel's ranks in turn), for the thread about to start.
    pub fn feed_rank_delays(&mut self) {
        let delays: Vec<f64> = self
            .mem
            .router()
            .devices
            .iter()
            .filter_map(|d| d.rank_latency.as_ref())
            .flat_map(|l| l.mean_ns())
            .collect();
        if !delays.is_empty() {
            self.os.set_rank_delays(&delays);
        }
    }

    /// A memcpy run by the `system.memcpy` routine: thread `t` runs its steps from now on.
    pub fn start_memcpy_routine(&mut self, t: usize, pid: Pid, src: u64, dst: u64, bytes: u64) {
        if self.sched.renews_bulk_destinations(t) {
            // The routine's stores then place each whole destination page anew.
            for page in (dst.div_ceil(PAGE)..(dst + bytes) / PAGE).map(|p| p * PAGE) {
                self.os.renew_page(pid, page);
            }
        }
        let routine = self
            .bulk
            .routine(
                src,
                dst,
                bytes,
                self.timing.line,
                self.mem.last_line_bytes(),
            )
            .expect("a memcpy routine");
        self.sched.start_memcpy(t, routine);
    }
}
