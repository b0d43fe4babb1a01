//! What the one scheduler asks of every component it steps (`run.rs`): when it next has work
//! and whether it is quiet. The memory side (the cache hierarchy with the devices and the
//! hybrid memory below it), the bulk coordinator (copy engines, operations below the caches)
//! and each core answer for themselves, so the run loop's jump to the next change, its end and
//! the fast-forward of steady compute ask one list (`System::components`) instead of reaching
//! into each component's parts; a new component joins that list and the loop stays as it is.

use super::bulk::BulkCoordinator;
use super::core::Core;
use super::System;
use crate::cache::Hierarchy;

/// A component the scheduler steps.
pub(super) trait Scheduled {
    /// The earliest time (fs) it may have work while nothing else changes (u64::MAX: none).
    fn next_work_fs(&self, now: u64) -> u64;
    /// Whether it holds nothing in flight: no request, response or operation.
    fn is_quiet(&self) -> bool;
}

impl Scheduled for Hierarchy {
    /// A response due, a fill leaving an inner level, a device's next step, the hybrid
    /// memory's next event.
    fn next_work_fs(&self, _now: u64) -> u64 {
        let router = self.router();
        let mut t = self.inbox.next_fs().min(self.next_departure());
        for d in &router.devices {
            t = t.min(d.next_fs());
        }
        if let Some(h) = &router.hybrid {
            t = t.min(h.next_event_fs());
        }
        t
    }

    fn is_quiet(&self) -> bool {
        self.inbox.is_empty()
            && !self.responses_pending()
            && self.outbox_empty()
            && self.router().is_idle()
    }
}

impl Scheduled for BulkCoordinator {
    /// A finished operation due (the engines step every core cycle while busy).
    fn next_work_fs(&self, _now: u64) -> u64 {
        self.next_finished_fs()
    }

    fn is_quiet(&self) -> bool {
        self.idle() && !self.engines_busy() && self.next_finished_fs() == u64::MAX
    }
}

impl Scheduled for Core {
    /// Its window head's retirement, or the end of the OS time holding its front end.
    fn next_work_fs(&self, now: u64) -> u64 {
        let mut t = self.head_ready().unwrap_or(u64::MAX);
        if self.os_until_fs > now {
            t = t.min(self.os_until_fs);
        }
        t
    }

    fn is_quiet(&self) -> bool {
        self.window.is_empty()
    }
}

impl System {
    /// The components besides the cores, for the questions the scheduler asks of all.
    #[inline]
    pub(super) fn components(&self) -> [&dyn Scheduled; 2] {
        [&self.mem, &self.bulk]
    }

    /// The earliest time any component, cores included, may next have work.
    pub(super) fn next_work_fs(&self) -> u64 {
        let components = self
            .components()
            .into_iter()
            .map(|c| c.next_work_fs(self.now));
        let cores = self.cores.iter().map(|c| c.next_work_fs(self.now));
        components.chain(cores).min().unwrap_or(u64::MAX)
    }

    /// Whether no component besides the cores holds anything in flight.
    pub(super) fn components_quiet(&self) -> bool {
        self.components().iter().all(|c| c.is_quiet())
    }
}
