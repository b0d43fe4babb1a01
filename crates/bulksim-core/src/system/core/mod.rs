//! A core and its pipeline: its state here (the instruction window, `window.rs`; the event
//! it could not dispatch yet; the bulk jobs it is blocked on; its memory ports), its cycle
//! (`pipeline.rs`: retire, bulk jobs, dispatch), the dispatch of each kind of event
//! (`dispatch.rs`), its accesses through its first-level port (`access.rs`: loads, stores,
//! movblks, dce_rowclone chunks) and what it asks the OS when an access faults
//! (`faults.rs`). Everything else a core talks to (the scheduler, the OS, the caches, the
//! bulk coordinator) it reaches through a `CoreEnv` (`env.rs`) that the system borrows
//! apart from the cores once per core cycle; which thread a core runs is the scheduler's
//! (`threads.rs`).

mod access;
mod dispatch;
pub(super) mod env;
mod faults;
mod pipeline;
mod responses;
mod window;

pub use window::Window;

use crate::bulk::BulkOp;
use crate::cache::Origin;
use crate::workload::program::Event;
use std::collections::VecDeque;

/// A window slot waiting on no cache line.
pub const NO_LINE: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// Time (fs) the result is ready, once `line` is NO_LINE.
    pub ready_fs: u64,
    /// The cache line a load waits for.
    pub line: u64,
}

/// One destination line of a copy or initialization done by the core with loads and stores.
#[derive(Clone, Copy, Debug)]
pub struct LineTask {
    /// Source byte address (a copy) or None (an initialization).
    pub src: Option<u64>,
    pub dst: u64,
    /// Bytes, within the destination line.
    pub len: u64,
    pub value: u8,
}

/// What a blocked core is doing for a memcpy, meminit, copy-on-write or zeroing.
#[derive(Debug)]
pub enum Job {
    /// `cpu`: the lines go through the cache as loads and stores.
    Lines {
        tasks: Vec<LineTask>,
        done: Vec<bool>,
        /// Per task, the hierarchy's epoch when it was last found waiting (0: not known to
        /// wait): while the epoch is unchanged its lines' presence and the MSHRs and buffer
        /// room it waited on are too, so it need not be looked at again.
        waiting_at: Vec<u64>,
        /// (epoch, window end) of the last look at the window that found every task done
        /// or waiting: until the epoch moves, a window no larger holds nothing to do.
        all_waiting: (u64, usize),
        next: usize,
        origin: Origin,
    },
    /// `mc_dma` / `rowclone`: coherence work, then the operation below the cache.
    Memory {
        op: BulkOp,
        origin: Origin,
        phase: MemPhase,
        writebacks_pending: u32,
        /// Zero-Insert: the lines [next, end) still to put into the cache once memory is done
        /// (empty otherwise).
        zero_lines: (u64, u64),
    },
}

impl Job {
    /// Why the job runs: `Origin::Copy` or `Origin::Init`.
    pub fn origin(&self) -> Origin {
        match self {
            Job::Lines { origin, .. } | Job::Memory { origin, .. } => *origin,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemPhase {
    Coherence,
    WaitWritebacks,
    Submit,
    Wait(u32),
    Done,
}

/// `[core]`: every core's width, window and memory limits.
#[derive(Clone, Copy, Debug)]
pub struct CoreSettings {
    /// `core.width`: instructions dispatched and retired per core cycle.
    pub width: usize,
    /// `core.window`: slots in the instruction window.
    pub window: usize,
    /// `core.mem_ports` (usize::MAX: as many as the width).
    pub mem_ports: usize,
    /// `core.store_queue` (usize::MAX: no limit).
    pub store_queue: usize,
    /// `core.lsq` (usize::MAX: no limit).
    pub lsq: usize,
}

impl CoreSettings {
    pub fn new(cfg: &crate::config::CoreConfig) -> CoreSettings {
        // 0 in the config: no limit of its own.
        let limit = |n: u32| if n == 0 { usize::MAX } else { n as usize };
        CoreSettings {
            width: cfg.width as usize,
            window: cfg.window as usize,
            mem_ports: limit(cfg.mem_ports),
            store_queue: limit(cfg.store_queue),
            lsq: limit(cfg.lsq),
        }
    }
}

pub struct Core {
    pub window: Window,
    /// An event taken from the thread that could not dispatch yet.
    pub pending: Option<Event>,
    /// A step of a memcpy routine that could not dispatch yet (`system.memcpy`).
    pub pending_step: Option<crate::workload::memcpy::CopyStep>,
    /// Bulk jobs to finish before `pending` dispatches.
    pub jobs: VecDeque<Job>,
    /// When the first job in `jobs` started (fs), once it has.
    pub job_started_fs: Option<u64>,
    /// Kernel instructions of page faults still to dispatch (before `pending`).
    pub kernel_instructions: u64,
    /// A copy-on-write copy the memcpy routine runs (`system.memcpy`), in physical
    /// addresses, before `pending`; and its step that could not dispatch yet.
    pub kernel_copy: Option<crate::workload::memcpy::MemcpyExpansion>,
    pub kernel_step: Option<crate::workload::memcpy::CopyStep>,
    /// The pending event is a memcpy/meminit whose jobs are queued (it retires after them).
    pub bulk_instruction: bool,
    pub retired: u64,
    /// When the latest load that hit in the first level has its data (fs): with no slot
    /// waiting for a line, every older load has its data from then on (a dependent read
    /// waits for it).
    pub load_data_fs: u64,
    /// Until when the core runs OS work (fs): its front end dispatches nothing, its window
    /// drains (`hybrid.os_period_ns`, `hybrid.os_remap_ns`).
    pub os_until_fs: u64,
    /// Since when the window head has waited for a line (a stall on memory).
    pub stalled_since: Option<u64>,
    /// Memory ports (`core.mem_ports`) left in the core cycle being dispatched.
    pub mem_ports_left: usize,
    /// The core can do nothing until a line arrives (`Core::step`'s `waits_for_a_line`):
    /// its cycles are skipped until then.
    asleep: bool,
}

impl Core {
    /// The front end dispatches nothing for `ns` more, after any OS work it has (hybrid OS
    /// time, a TLB shootdown).
    #[inline]
    pub fn hold_front_end(&mut self, now: u64, ns: u64) {
        self.os_until_fs = self
            .os_until_fs
            .max(now)
            .saturating_add(ns.saturating_mul(1_000_000));
    }

    pub fn new() -> Core {
        Core {
            window: Window::new(),
            pending: None,
            pending_step: None,
            jobs: VecDeque::new(),
            job_started_fs: None,
            kernel_instructions: 0,
            kernel_copy: None,
            kernel_step: None,
            bulk_instruction: false,
            retired: 0,
            load_data_fs: 0,
            os_until_fs: 0,
            stalled_since: None,
            mem_ports_left: 0,
            asleep: false,
        }
    }

    /// Retires up to `width` ready slots at `now`; returns how many.
    pub fn retire(&mut self, width: usize, now: u64) -> usize {
        let mut n = 0;
        while n < width {
            match self.window.front() {
                Some(s) if s.line == NO_LINE && s.ready_fs <= now => {
                    self.window.pop_front();
                    n += 1;
                }
                _ => break,
            }
        }
        self.retired += n as u64;
        n
    }

    /// Whether the core is in the steady state of a long compute run, `cycles` core cycles
    /// from its end at least: at least `width` slots in the window (no more than it holds),
    /// all ready by `now`, and nothing but non-memory instructions pending. Each cycle then
    /// retires `width` slots and dispatches `width` new ones, so the window keeps its length.
    pub fn computing_steadily(&self, width: usize, now: u64, cycles: u64) -> bool {
        matches!(self.pending, Some(Event::Compute(left)) if left > cycles * width as u64)
            && self.jobs.is_empty()
            && self.kernel_instructions == 0
            && !self.bulk_instruction
            && self.window.len() >= width
            && self.window.all_ready_by(now)
    }

    /// Does what `cycles` steady compute cycles (see `computing_steadily`) from `now` do: each
    /// retires `width` slots and dispatches `width` more, ready a core cycle (`core_fs`)
    /// after their dispatch. Returns the instructions retired.
    pub fn fast_forward_compute(
        &mut self,
        cycles: u64,
        width: usize,
        now: u64,
        core_fs: u64,
    ) -> u64 {
        let Some(Event::Compute(left)) = &mut self.pending else {
            unreachable!("a steady compute run")
        };
        let width = width as u64;
        let pushed = cycles * width;
        *left -= pushed;
        self.retired += pushed;
        // The window holds as many slots as before, the last ones dispatched: dispatch j (of
        // `pushed`) went out in cycle j / width and is ready a cycle later.
        let window = self.window.len() as u64;
        debug_assert!(pushed >= window);
        while self.window.pop_front().is_some() {}
        for j in pushed - window..pushed {
            self.window.push_back(Slot {
                ready_fs: now + (j / width + 1) * core_fs,
                line: NO_LINE,
            });
        }
        pushed
    }

    /// Whether a load, store or movblk may dispatch this cycle: a memory port is left and the
    /// load/store queue (`core.lsq`) has room.
    pub fn has_mem_slot(&self, settings: &CoreSettings) -> bool {
        self.mem_ports_left > 0 && self.window.mem_slots() < settings.lsq
    }

    /// Whether no part of an event is left to dispatch: no pending event, no memcpy routine
    /// step, no kernel copy (where a time slice may end).
    pub fn at_event_boundary(&self) -> bool {
        self.pending.is_none()
            && self.pending_step.is_none()
            && self.kernel_copy.is_none()
            && self.kernel_step.is_none()
    }

    /// Whether every load and read in the window has its data by `now`: what a dependent
    /// read (`D`) waits for.
    pub fn loads_have_data(&self, now: u64) -> bool {
        !self.window.waits_for_a_line() && self.load_data_fs <= now
    }

    /// Loads waiting for `line` get their data at `ready_fs`.
    pub fn line_arrived(&mut self, line: u64, ready_fs: u64) {
        self.asleep = false;
        self.window.line_arrived(line, ready_fs);
    }

    /// When the head of the window can retire (u64::MAX while it waits for memory).
    pub fn head_ready(&self) -> Option<u64> {
        self.window.front().map(|s| {
            if s.line == NO_LINE {
                s.ready_fs
            } else {
                u64::MAX
            }
        })
    }
}

impl Default for Core {
    fn default() -> Self {
        Core::new()
    }
}
