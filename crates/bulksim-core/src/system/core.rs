//! One core's state: the instruction window (in-order retirement of slots that become ready
//! when their latency or their cache fill is over), the thread it runs and those waiting for
//! it, and the bulk job it is blocked on. The dispatch logic lives in `System`, which owns the
//! OS and the caches the core talks to.

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

pub struct Core {
    pub window: VecDeque<Slot>,
    pub thread: Option<usize>,
    pub run_queue: VecDeque<usize>,
    /// An event taken from the thread that could not dispatch yet.
    pub pending: Option<Event>,
    /// Bulk jobs to finish before `pending` dispatches.
    pub jobs: VecDeque<Job>,
    /// When the first job in `jobs` started (fs), once it has.
    pub job_started_fs: Option<u64>,
    /// Kernel instructions of page faults still to dispatch (before `pending`).
    pub kernel_instructions: u64,
    /// The pending event is a memcpy/meminit whose jobs are queued (it retires after them).
    pub bulk_instruction: bool,
    pub retired: u64,
    /// When the last thread that ran here exited (fs).
    pub last_exit_fs: u64,
}

impl Core {
    pub fn new() -> Core {
        Core {
            window: VecDeque::new(),
            thread: None,
            run_queue: VecDeque::new(),
            pending: None,
            jobs: VecDeque::new(),
            job_started_fs: None,
            kernel_instructions: 0,
            bulk_instruction: false,
            retired: 0,
            last_exit_fs: 0,
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

    /// Loads waiting for `line` get their data at `ready_fs`.
    pub fn line_arrived(&mut self, line: u64, ready_fs: u64) {
        for s in self.window.iter_mut().filter(|s| s.line == line) {
            s.line = NO_LINE;
            s.ready_fs = ready_fs;
        }
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
