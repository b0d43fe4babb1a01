//! A core's cycle (`Core::step`): retiring, the stall and milestone bookkeeping of what
//! retired, its bulk jobs, then dispatching its thread's work in order (the fault path's
//! kernel instructions, a kernel copy, the thread's copy steps and events) until the width
//! is spent, an event must wait, or the time slice ends.

use super::dispatch::{Space, Step};
use super::env::CoreEnv;
use super::{Core, Slot, NO_LINE};
use crate::error::Result;
use crate::workload::program::Event;

/// What a core's dispatch loop does after a piece of work (whether the work moved).
enum Flow {
    /// Back to the loop's top: the budget may allow more.
    Again(bool),
    /// The core dispatches nothing more this cycle.
    Stop(bool),
    /// Nothing of this kind to do: on to the next kind.
    On,
}

impl Core {
    /// One core cycle of core `c` at `env.now`; whether it made progress.
    pub(in crate::system) fn step(&mut self, c: usize, env: &mut CoreEnv) -> Result<bool> {
        if self.asleep {
            // Debug builds (every test run) check that the skipped cycle would do nothing.
            #[cfg(debug_assertions)]
            self.check_sleep(c, env)?;
            return Ok(false);
        }
        let progress = self.step_awake(c, env)?;
        self.asleep = self.waits_for_a_line(env);
        Ok(progress)
    }

    /// Whether the core can do nothing until a line arrives (a memory-bound core spends most
    /// cycles so; skipping them is what makes its cost follow memory's work, issue 35): the
    /// window head waits for memory, so nothing retires, and the thread's next event is a
    /// load or store that cannot dispatch: the window is full, or the load is dependent (an
    /// older load, the head, has no data yet). No other work comes first. Only `line_arrived`
    /// changes any of this.
    fn waits_for_a_line(&self, env: &CoreEnv) -> bool {
        let blocked = match self.pending {
            Some(Event::Load(_) | Event::Store(_)) => self.window.len() >= env.settings.window,
            Some(Event::LoadDependent(_)) => true,
            _ => false,
        };
        blocked
            && self.head_ready() == Some(u64::MAX)
            && self.jobs.is_empty()
            && self.kernel_instructions == 0
            && self.kernel_step.is_none()
            && self.pending_step.is_none()
    }

    /// Steps an asleep core anyway and fails if the step changed anything (a check of
    /// `waits_for_a_line`, in debug builds only).
    #[cfg(debug_assertions)]
    fn check_sleep(&mut self, c: usize, env: &mut CoreEnv) -> Result<()> {
        let (window, pending, retired) = (self.window.len(), self.pending, self.retired);
        let progress = self.step_awake(c, env)?;
        assert!(
            !progress
                && self.window.len() == window
                && self.pending == pending
                && self.retired == retired,
            "core {c} asleep at {} fs moved",
            env.now
        );
        Ok(())
    }

    /// One cycle of a core that is not asleep.
    #[inline]
    fn step_awake(&mut self, c: usize, env: &mut CoreEnv) -> Result<bool> {
        let retired = self.retire(env.settings.width, env.now);
        let mut progress = retired > 0;
        self.note_retired(c, env, retired);
        if env.sched.running(c).is_none() {
            if env.sched.take_next(c, env.now).is_none() {
                return Ok(progress);
            }
            progress = true;
        }
        if env.now < self.os_until_fs {
            // The OS has the core (hybrid OS time): nothing dispatches.
            return Ok(progress);
        }
        if !self.jobs.is_empty() {
            let (moved, busy) = self.step_bulk_jobs(c, env)?;
            progress |= moved;
            if busy {
                return Ok(progress);
            }
        }
        progress |= self.dispatch_events(c, env)?;
        Ok(progress)
    }

    /// After core `c` retired `retired` slots this cycle: a stall on memory starting at the
    /// window head noted, the running thread's count, the measured window's milestones.
    #[inline]
    fn note_retired(&mut self, c: usize, env: &mut CoreEnv, retired: usize) {
        if self.stalled_since.is_none() && self.head_ready() == Some(u64::MAX) {
            self.stalled_since = Some(env.now);
            if let Some(rec) = &mut env.interruptions {
                let line = self.window.front().expect("a waiting head").line;
                rec.stall_started(env.mem.router(), c, line);
            }
        }
        if let Some(t) = env.sched.running(c) {
            // A thread leaves its core only with an empty window, so every slot retired
            // here is the running thread's own.
            env.sched.retired(t, retired as u64);
        }
        if retired > 0 {
            if let Some(m) = &mut env.measure {
                if m.retired(c, self.retired, env.now) {
                    m.take_snapshot(env.mem.router());
                }
            }
        }
    }

    /// Core `c`'s bulk jobs (copies and initializations it waits for) take a step: whether
    /// any moved, and whether some are left (the core then dispatches nothing).
    fn step_bulk_jobs(&mut self, c: usize, env: &mut CoreEnv) -> Result<(bool, bool)> {
        let before = self.jobs.len();
        let origin = self.jobs[0].origin();
        let started = *self.job_started_fs.get_or_insert(env.now);
        let progress = env.bulk.progress_job(
            c,
            self,
            env.mem,
            env.now,
            (env.timing.line, env.settings.width),
        )?;
        if self.jobs.len() < before {
            // Counted to the end of this core cycle, when the core may go on.
            env.bulk
                .count_wait(origin, env.now + env.timing.core_fs - started);
            self.job_started_fs = None;
        }
        if !self.jobs.is_empty() {
            return Ok((progress, true));
        }
        if self.bulk_instruction {
            self.bulk_instruction = false;
            self.push_slot(env.now + env.timing.core_fs, NO_LINE);
        }
        Ok((progress, false))
    }

    /// Core `c` dispatches up to `core.width` instructions of its running thread: the fault
    /// path's kernel instructions and a kernel copy first, then the thread's own copy steps
    /// and events, until the budget is spent, an event must wait, or the time slice ends;
    /// whether anything moved.
    #[inline]
    fn dispatch_events(&mut self, c: usize, env: &mut CoreEnv) -> Result<bool> {
        let mut progress = false;
        let mut budget = env.settings.width;
        self.mem_ports_left = env.settings.mem_ports;
        while budget > 0 {
            let t = env.sched.running(c).expect("a running thread");
            match self.dispatch_kernel_work(c, t, env, &mut budget)? {
                Flow::Again(moved) => {
                    progress |= moved;
                    continue;
                }
                Flow::Stop(moved) => {
                    progress |= moved;
                    break;
                }
                Flow::On => {}
            }
            self.kernel_copy = None;
            if env.sched.slice_over(c, t, self.at_event_boundary(), env.os) {
                // At an event boundary; the thread leaves with an empty window, so every
                // slot retired on a core is its running thread's.
                if self.window.is_empty() {
                    env.sched.preempt(c);
                    progress = true;
                }
                break;
            }
            if self.pending.is_none() {
                let step = match self.pending_step.take() {
                    Some(s) => Some(s),
                    None => env.sched.next_copy_step(t),
                };
                if let Some(step) = step {
                    let space = Space::Virtual(env.sched.pid(t));
                    match self.dispatch_copy_step(c, t, env, space, step, &mut budget)? {
                        None => {
                            progress = true;
                            continue;
                        }
                        Some((step, moved)) => {
                            self.pending_step = Some(step);
                            progress |= moved;
                            break;
                        }
                    }
                }
            }
            let ev = match self.pending.take() {
                Some(e) => e,
                None => env.sched.next_event(t, env.timing.line)?,
            };
            match self.dispatch(c, t, env, ev, &mut budget)? {
                Step::Next => progress = true,
                Step::Retry(ev, moved) => {
                    self.pending = Some(ev);
                    progress |= moved;
                    break;
                }
                Step::Stop => {
                    progress = true;
                    break;
                }
            }
        }
        Ok(progress)
    }

    /// Core `c`'s kernel work, which goes before the access that faulted: the fault path's
    /// kernel instructions, then a copy-on-write copy run by the memcpy routine (physical
    /// addresses).
    #[inline]
    fn dispatch_kernel_work(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        budget: &mut usize,
    ) -> Result<Flow> {
        let kernel = std::mem::take(&mut self.kernel_instructions);
        if kernel > 0 {
            let before = *budget;
            if let Step::Retry(Event::Compute(left), _) =
                self.dispatch(c, t, env, Event::Compute(kernel), budget)?
            {
                self.kernel_instructions = left;
            }
            let moved = *budget < before;
            return Ok(if self.kernel_instructions > 0 {
                Flow::Stop(moved)
            } else {
                Flow::Again(moved)
            });
        }
        let kernel_step = match self.kernel_step.take() {
            Some(s) => Some(s),
            None => self.kernel_copy.as_mut().and_then(|m| m.next()),
        };
        if let Some(step) = kernel_step {
            return Ok(
                match self.dispatch_copy_step(c, t, env, Space::Physical, step, budget)? {
                    None => Flow::Again(true),
                    Some((step, moved)) => {
                        self.kernel_step = Some(step);
                        Flow::Stop(moved)
                    }
                },
            );
        }
        Ok(Flow::On)
    }

    /// A slot ready at `ready_fs`, or waiting for `line`.
    #[inline]
    pub(super) fn push_slot(&mut self, ready_fs: u64, line: u64) {
        self.window.push_back(Slot { ready_fs, line });
    }

    /// A load, store or movblk's slot: it holds a load/store queue entry (`core.lsq`).
    #[inline]
    pub(super) fn push_mem_slot(&mut self, ready_fs: u64, line: u64) {
        self.window.push_mem_back(Slot { ready_fs, line });
    }
}
