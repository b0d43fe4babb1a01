//! What the one scheduler asks of every component (`run.rs`) and how it steps them. Every
//! component answers when it next has work and whether it is quiet (`Scheduled`): the memory
//! side (the cache hierarchy with the devices and the hybrid memory below it), the bulk
//! coordinator (copy engines, operations below the caches) and each core, so the run loop's
//! jump to the next change, its end and the fast-forward of steady compute ask one list
//! (`System::components`). The components that step between the memory side and the cores
//! (the hybrid memory's OS work, the copy engines) are `Stepped`: each says whether it is due
//! in this core cycle and is stepped only then, in the order of one list
//! (`System::split_stepped`), with a `World` lending what it may change. A new component joins
//! these two lists; the run loop stays as it is. The memory side steps first, at the devices'
//! own cycles; the cores step last, in order, each through its `CoreEnv`.

use super::bulk::BulkCoordinator;
use super::core::Core;
use super::threads::ThreadScheduler;
use super::System;
use crate::cache::Hierarchy;
use crate::error::Result;
use crate::os::Os;

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

/// What a component stepped before the cores may read and change besides itself, lent for
/// one core cycle.
pub(super) struct World<'a> {
    /// The current time (fs): a core-cycle boundary.
    pub now: u64,
    /// Page tables, frames and the hybrid memory's DRAM pool.
    pub os: &'a mut Os,
    /// The cache hierarchy with the memory router and its devices below.
    pub mem: &'a mut Hierarchy,
    /// Which core runs which process (a remap's OS time goes to the page's process's core).
    pub sched: &'a ThreadScheduler,
    /// The cores, for OS time taken from their front ends (`Core::hold_front_end`).
    pub cores: &'a mut [Core],
}

/// A component the scheduler steps in the core cycles in which it is due, before the cores.
pub(super) trait Stepped {
    /// Whether it has work at `world.now`: its own timed work is due, or it must answer what
    /// another component did since its last step (a frame the OS placed or released).
    fn due(&self, world: &World) -> bool;
    /// Does the work due; whether it made progress (then the next core cycle is visited too).
    fn step(&mut self, world: &mut World) -> Result<bool>;
}

impl Stepped for BulkCoordinator {
    /// Its copy engines step every core cycle while any holds a movblk.
    fn due(&self, _world: &World) -> bool {
        self.engines_busy()
    }

    fn step(&mut self, world: &mut World) -> Result<bool> {
        let engines = self.engines_mut().expect("due only with busy engines");
        engines.advance(world.mem, world.now);
        Ok(true)
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

    /// The components stepped before the cores, in the order they step (the hybrid memory's
    /// OS work, then the copy engines), and what they may change.
    #[inline]
    pub(super) fn split_stepped(&mut self) -> ([Option<&mut dyn Stepped>; 2], World<'_>) {
        let stepped: [Option<&mut dyn Stepped>; 2] = [
            self.hybrid_os.as_mut().map(|h| h as &mut dyn Stepped),
            Some(&mut self.bulk),
        ];
        let world = World {
            now: self.now,
            os: &mut self.os,
            mem: &mut self.mem,
            sched: &self.sched,
            cores: &mut self.cores,
        };
        (stepped, world)
    }

    /// Whether no component besides the cores holds anything in flight.
    pub(super) fn components_quiet(&self) -> bool {
        self.components().iter().all(|c| c.is_quiet())
    }
}
