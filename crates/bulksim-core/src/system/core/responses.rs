//! What comes back to a core through its first-level port: a line its loads wait for (which
//! may end a stall on memory), and the completions its memory job waits for (a write-back it
//! asked for, the bulk operation below the caches).

use super::{Core, Job, MemPhase};
use crate::system::interruptions::InterruptionRecorder;
use crate::system::threads::ThreadScheduler;

impl Core {
    /// Core `c`'s first level has `line` at `t`: the loads waiting for it get their data,
    /// and a stall on memory at the window head ends (counted to the running thread).
    #[inline]
    pub(in crate::system) fn fill_arrived(
        &mut self,
        c: usize,
        line: u64,
        t: u64,
        sched: &mut ThreadScheduler,
        mut interruptions: Option<&mut InterruptionRecorder>,
    ) {
        if let (Some(since), Some(thread)) = (self.stalled_since, sched.running(c)) {
            if self.window.front().is_some_and(|s| s.line == line) {
                // The stall on memory ends when the head's line arrives.
                sched.stalled(thread, since, t);
                if let Some(rec) = interruptions.as_deref_mut() {
                    rec.stall_ended(c, thread, line, since, t);
                }
                self.stalled_since = None;
            }
        }
        if let Some(rec) = interruptions {
            rec.line_arrived(c, line);
        }
        self.line_arrived(line, t)
    }

    /// A write-back the core's memory job asked for has reached memory.
    pub fn writeback_done(&mut self) {
        if let Some(Job::Memory {
            writebacks_pending, ..
        }) = self.jobs.front_mut()
        {
            *writebacks_pending -= 1;
        }
    }

    /// The bulk operation the core's memory job handed below the caches has finished.
    pub fn bulk_op_done(&mut self) {
        if let Some(Job::Memory { phase, .. }) = self.jobs.front_mut() {
            *phase = MemPhase::Done;
        }
    }
}
