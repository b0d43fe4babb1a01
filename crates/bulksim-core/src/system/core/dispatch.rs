//! The dispatch of each kind of event into a core's window: compute, the program's loads
//! and stores, a memcpy routine's steps, bulk events queued as jobs, post-LLC reads and
//! writes sent below the caches, address-space changes and thread events (for the thread
//! scheduler).

use super::env::CoreEnv;
use super::{Core, NO_LINE};
use crate::cache::Origin;
use crate::error::Result;
use crate::os::allocator::PAGE;
use crate::os::Pid;
use crate::system::dram_chunks::ChunkOutcome;
use crate::system::threads::ThreadOutcome;
use crate::workload::memcpy::CopyStep;
use crate::workload::program::Event;

/// What a store dispatched through `Core::access` writes.
#[derive(Clone, Copy, Debug)]
pub(super) enum StoreData {
    /// Nothing: a load.
    None,
    /// The program's own store: a word naming the thread and the store.
    Program,
    /// A copy's store: `len` bytes read now at virtual `src`.
    From { src: u64, len: u32 },
}

/// The address space of an access: a thread's virtual addresses, or physical ones (the
/// kernel's copy-on-write copy run by a memcpy routine, `system.memcpy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Space {
    Virtual(Pid),
    Physical,
}

/// What dispatching one event did.
pub(super) enum Step {
    /// Consumed; dispatch may go on.
    Next,
    /// Not dispatched (window or MSHRs full, or waiting on work): retry it later.
    Retry(Event, bool),
    /// Consumed, and the core must stop dispatching this cycle (bulk work, thread switch).
    Stop,
}

impl Core {
    /// One step of a memcpy routine (`system.memcpy`): its instructions, its word loads and
    /// stores (`Origin::Copy`), its movblks.
    pub(super) fn dispatch_copy_step(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        space: Space,
        step: CopyStep,
        budget: &mut usize,
    ) -> Result<Option<(CopyStep, bool)>> {
        let full = self.window.len() >= env.settings.window;
        let retry = |moved: Option<bool>| moved.map(|m| (step, m));
        Ok(match step {
            CopyStep::Compute(n) => match self.dispatch(c, t, env, Event::Compute(n), budget)? {
                Step::Retry(Event::Compute(left), moved) => Some((CopyStep::Compute(left), moved)),
                _ => None,
            },
            _ if full => Some((step, false)),
            CopyStep::LoadWord { src, .. } => {
                retry(self.access(c, t, env, space, src, StoreData::None, Origin::Copy, budget)?)
            }
            CopyStep::StoreWord { dst, src, bytes } => {
                let data = StoreData::From { src, len: bytes };
                retry(self.access(c, t, env, space, dst, data, Origin::Copy, budget)?)
            }
            CopyStep::StoreNt { dst, src, bytes } => {
                retry(self.store_non_temporal(c, t, env, space, dst, src, bytes, budget)?)
            }
            CopyStep::Fence => {
                env.mem.drain_write_combining(c);
                self.push_slot(env.now + env.timing.core_fs, NO_LINE);
                *budget -= 1;
                None
            }
            CopyStep::Movblk { src, dst } => {
                match self.dispatch_movblk(c, t, env, space, src, dst, budget)? {
                    Step::Retry(_, moved) => Some((step, moved)),
                    _ => None,
                }
            }
            CopyStep::Chunk { src, dst, bytes } => {
                match self.dispatch_chunk(c, t, env, space, src, dst, bytes, budget)? {
                    ChunkOutcome::Retry(moved) => Some((step, moved)),
                    ChunkOutcome::HandedDown => None,
                    ChunkOutcome::Declined { .. } => {
                        self.decline_chunk(t, env, space, step);
                        None
                    }
                }
            }
        })
    }

    /// Dispatches thread `t`'s event `ev` on core `c`, within `budget` instructions of
    /// this cycle; what it did.
    pub(super) fn dispatch(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        ev: Event,
        budget: &mut usize,
    ) -> Result<Step> {
        let full = self.window.len() >= env.settings.window;
        let pid = env.sched.pid(t);
        match ev {
            Event::Movblk { src, dst } => {
                self.dispatch_movblk(c, t, env, Space::Virtual(pid), src, dst, budget)
            }
            Event::Compute(n) => self.dispatch_compute(t, env, n, budget),
            Event::Load(va) | Event::Store(va) | Event::LoadDependent(va) => {
                self.dispatch_program_access(c, t, env, ev, va, full, budget)
            }
            Event::Memcpy { src, dst, bytes } if env.bulk.routine_copies() => {
                env.start_memcpy_routine(t, pid, src, dst, bytes);
                Ok(Step::Next)
            }
            Event::Memcpy { .. } | Event::Meminit { .. } => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                self.queue_bulk_event(c, t, env, pid, ev)?;
                self.bulk_instruction = true;
                Ok(Step::Stop)
            }
            Event::MemRead(va) | Event::MemWrite(va) | Event::MemReadDependent(va) => {
                self.dispatch_below_caches(c, t, env, ev, va, full, budget)
            }
            Event::Map { .. }
            | Event::MapPopulated { .. }
            | Event::Unmap { .. }
            | Event::MapResident { .. }
            | Event::Exec => self.dispatch_address_space(t, env, ev, full, budget),
            Event::LoadRange { .. }
            | Event::StoreRange { .. }
            | Event::KernelToUser { .. }
            | Event::KernelFromUser { .. } => {
                unreachable!("next_event turns ranged accesses into line accesses")
            }
            Event::Yield(_) | Event::Fork(_) | Event::Spawn(_) | Event::Wait | Event::Exit => {
                self.dispatch_thread_event(c, t, env, ev, full, budget)
            }
        }
    }

    /// `n` non-memory instructions: as many as the budget and the window take now, the
    /// rest retried.
    #[inline]
    fn dispatch_compute(
        &mut self,
        t: usize,
        env: &mut CoreEnv,
        n: u64,
        budget: &mut usize,
    ) -> Result<Step> {
        let cycles = n.div_ceil(env.settings.width as u64);
        if (env.now / env.timing.core_fs).saturating_add(cycles) > env.max_cycles {
            return Err(env.err(
                t,
                format!(
                    "{n} non-memory instructions take {cycles} core cycles at core.width {}, past sim.max_cycles ({} core cycles); a corrupt count? raise sim.max_cycles to run it",
                    env.settings.width, env.max_cycles
                ),
            ));
        }
        let next_cycle = env.now + env.timing.core_fs;
        let room = env.settings.window - self.window.len();
        let k = n.min(*budget as u64).min(room as u64);
        for _ in 0..k {
            self.push_slot(next_cycle, NO_LINE);
        }
        *budget -= k as usize;
        if k < n {
            return Ok(Step::Retry(Event::Compute(n - k), k > 0));
        }
        Ok(Step::Next)
    }

    /// Whether a memory access of core `c` waits this cycle: its queue is `full`, or it is
    /// `dependent` (pointer chasing) and its address is known only once every older load
    /// has its data.
    #[inline]
    fn waits_to_dispatch(&self, now: u64, full: bool, dependent: bool) -> bool {
        full || (dependent && !self.loads_have_data(now))
    }

    /// The program's load or store `ev` of virtual `va` through the caches.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn dispatch_program_access(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        ev: Event,
        va: u64,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        if self.waits_to_dispatch(env.now, full, matches!(ev, Event::LoadDependent(_))) {
            return Ok(Step::Retry(ev, false));
        }
        let data = if matches!(ev, Event::Store(_)) {
            StoreData::Program
        } else {
            StoreData::None
        };
        let space = Space::Virtual(env.sched.pid(t));
        Ok(
            match self.access(c, t, env, space, va, data, Origin::Program, budget)? {
                Some(moved) => Step::Retry(ev, moved),
                None => Step::Next,
            },
        )
    }

    /// A post-LLC trace's read or write `ev` of virtual `va`, sent below the caches.
    #[allow(clippy::too_many_arguments)]
    fn dispatch_below_caches(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        ev: Event,
        va: u64,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        if self.waits_to_dispatch(env.now, full, matches!(ev, Event::MemReadDependent(_))) {
            return Ok(Step::Retry(ev, false));
        }
        let pid = env.sched.pid(t);
        let Some(pa) = self.resolve(c, t, env, Space::Virtual(pid), va, false)? else {
            return Ok(Step::Retry(ev, true));
        };
        if env.blocked(pa) {
            return Ok(Step::Retry(ev, false));
        }
        if matches!(ev, Event::MemWrite(_)) {
            env.mem.write_below_caches(c, pa);
            self.push_slot(env.now + env.timing.core_fs, NO_LINE);
        } else {
            env.mem.read_below_caches(c, pa);
            self.push_slot(u64::MAX, pa / env.timing.line);
        }
        env.os.count_access(t as u32);
        *budget -= 1;
        Ok(Step::Next)
    }

    /// A change to the address space (`Map`, `MapPopulated`, `Unmap`, `MapResident`,
    /// `Exec`): one instruction; an unmap, a resident mapping or an exec waits for an
    /// empty window (accesses in flight may still translate through the range).
    fn dispatch_address_space(
        &mut self,
        t: usize,
        env: &mut CoreEnv,
        ev: Event,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        let pid = env.sched.pid(t);
        let waits = match ev {
            Event::Map { .. } | Event::MapPopulated { .. } => full,
            _ => !self.window.is_empty(),
        };
        if waits {
            return Ok(Step::Retry(ev, false));
        }
        match ev {
            Event::Map { vaddr, bytes } => env.os.map(pid, vaddr, bytes),
            Event::MapPopulated { vaddr, bytes } => {
                let frames = env
                    .os
                    .map_populated(pid, t as u32, vaddr, bytes)
                    .map_err(|e| env.err(t, e))?;
                for frame in frames {
                    env.mem.zero_untimed(frame as u64 * PAGE, PAGE);
                }
            }
            Event::Unmap { vaddr, bytes } => env.os.unmap(pid, vaddr, bytes),
            Event::MapResident { vaddr, bytes } => env.os.map_resident(pid, vaddr, bytes),
            Event::Exec => env.os.exec(pid),
            _ => unreachable!("dispatch sends only address-space events here"),
        }
        self.push_slot(env.now + env.timing.core_fs, NO_LINE);
        *budget -= 1;
        Ok(Step::Next)
    }

    /// A thread event (`Yield`, `Fork`, `Spawn`, `Wait`, `Exit`) for the thread scheduler.
    fn dispatch_thread_event(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        ev: Event,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        match ev {
            Event::Yield(_) => {
                let window_empty = self.window.is_empty();
                Ok(
                    match env
                        .sched
                        .thread_event(c, t, ev, env.now, window_empty, env.os)?
                    {
                        ThreadOutcome::NotYet => Step::Retry(ev, false),
                        ThreadOutcome::Left => Step::Stop,
                        _ => Step::Next,
                    },
                )
            }
            Event::Fork(_) | Event::Spawn(_) => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                env.feed_rank_delays();
                env.sched.thread_event(c, t, ev, env.now, false, env.os)?;
                self.push_slot(env.now + env.timing.core_fs, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            _ => {
                // Wait or Exit. A thread exits once its copies are done: the engines' and
                // the memory controller's writes are its own, into frames the exit frees.
                if !self.window.is_empty()
                    || (ev == Event::Exit && env.bulk.copies_pending(c, env.mem))
                {
                    return Ok(Step::Retry(ev, false));
                }
                let outcome = env.sched.thread_event(c, t, ev, env.now, true, env.os)?;
                if ev == Event::Exit {
                    self.check_measured_core_has_work(c, t, env)?;
                }
                Ok(if outcome == ThreadOutcome::Left {
                    Step::Stop
                } else {
                    Step::Next
                })
            }
        }
    }
}
