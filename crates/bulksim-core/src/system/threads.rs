//! Threads and processes, shared by the timing and the functional mode: each thread's event
//! stream and its expansion (ranged accesses into line sweeps, fork targets made absolute, a
//! memcpy routine's steps), which thread each core runs and which wait for it (run queues),
//! time slices (`system.time_slice_instructions`), and the thread events that move threads
//! between states: fork and spawn (a child starts on an idle spare core or its parent's
//! core), yield (the recorded schedule), wait and exit. A core asks it for its next thread
//! and tells it when a thread retired instructions or stalled; the caller (timing dispatch
//! in `mod.rs`, `functional.rs`) decides only when an event may go (a full window, copies in
//! flight), not what it does to the threads.

use super::stats::ThreadStats;
use crate::error::{Error, Result};
use crate::os::{Os, Pid};
use crate::workload::looping::LoopingSource;
use crate::workload::memcpy::{CopyStep, MemcpyExpansion};
use crate::workload::program::Event;
use crate::workload::source::{EventSource, WorkloadThread};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ThreadState {
    NotStarted,
    Runnable,
    Waiting,
    Done,
}

struct Thread {
    reader: Box<dyn EventSource>,
    /// The id of this thread's copy's thread 0 (fork targets are relative to it).
    copy_base: u32,
    /// Which copy of the workload the thread belongs to.
    copy: u32,
    /// The line accesses left of a ranged access or kernel copy being dispatched.
    sweep: Option<Sweep>,
    /// The steps left of a memcpy routine being dispatched (`system.memcpy`).
    memcpy: Option<MemcpyExpansion>,
    /// Its copy and initialization events are the kernel's page operations and each whole
    /// destination page gets a new frame first (`os.trace_bulk_destinations = allocate`).
    renews_bulk_destinations: bool,
    pid: Option<Pid>,
    state: ThreadState,
    parent: Option<usize>,
    live_children: u32,
    stores: u64,
    /// Bytes the kernel copied to or from this thread's memory (`K`, `G` events).
    kernel_copy_bytes: u64,
    instructions: u64,
    start_fs: u64,
    end_fs: u64,
    /// Stalls on memory: count, total (fs), and the intervals when recorded.
    stalls: u64,
    stall_fs: u64,
    stall_intervals: Vec<(u64, u64)>,
}

/// The line-by-line accesses of a ranged event: lines from `next` up to `end` (addresses).
#[derive(Clone, Copy, Debug)]
struct Sweep {
    next: u64,
    end: u64,
    write: bool,
}

impl Sweep {
    fn new(vaddr: u64, bytes: u64, write: bool, line: u64) -> Sweep {
        Sweep {
            next: vaddr - vaddr % line,
            end: vaddr + bytes,
            write,
        }
    }

    /// The next line's access and the rest of the sweep, if any.
    fn step(self, line: u64) -> (Event, Option<Sweep>) {
        let ev = if self.write {
            Event::Store(self.next)
        } else {
            Event::Load(self.next)
        };
        let next = self.next + line;
        (ev, (next < self.end).then_some(Sweep { next, ..self }))
    }
}

/// One core as the scheduler sees it: the thread it runs and those waiting for it.
#[derive(Default)]
struct CoreQueue {
    running: Option<usize>,
    queue: VecDeque<usize>,
    /// The running thread's retired instructions when it got the core (its time slice
    /// counts from there).
    slice_start: u64,
    /// Time slices that ended with another thread waiting for the core.
    preemptions: u64,
    /// Switches the recorded schedule asked for (`Y` events).
    yields: u64,
    /// When the last thread that ran here exited (fs).
    last_exit_fs: u64,
}

/// What a thread event (fork, spawn, yield, wait, exit) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ThreadOutcome {
    /// A child thread started (the event is an instruction of its own).
    Started,
    /// Nothing to do: a yield to a thread not waiting on this core, a wait with no live
    /// child. The thread goes on.
    Nothing,
    /// The core must first drain its window (a thread leaves its core with an empty one).
    NotYet,
    /// The thread left its core (it yielded, waits or exited).
    Left,
}

/// Per-core counters the scheduler keeps, for the core's stats.
pub(super) struct CoreCounts {
    pub preemptions: u64,
    pub yields: u64,
    pub last_exit_fs: u64,
}

/// Threads, processes and run queues (see the module doc).
pub(super) struct ThreadScheduler {
    threads: Vec<Thread>,
    cores: Vec<CoreQueue>,
    /// `system.time_slice_instructions` (0: no preemption).
    time_slice: u64,
    /// The first spare core (`system.cores`): cores from here on start idle.
    spare_cores_from: usize,
    /// Forked and spawned threads go to an idle spare core when there is one (the timing
    /// mode); otherwise to their parent's core.
    children_to_spare_cores: bool,
    /// Stall intervals are kept (`sim.record_intervals`).
    record_intervals: bool,
}

/// How the scheduler is set up (from the config).
pub(super) struct SchedulerSetup {
    pub time_slice: u64,
    pub loop_workloads: bool,
    /// `os.trace_bulk_destinations = allocate`.
    pub allocate_bulk_destinations: bool,
    /// `system.cores` (0: one per starting thread).
    pub cores: usize,
    pub children_to_spare_cores: bool,
    pub record_intervals: bool,
}

impl ThreadScheduler {
    /// The workload's threads; each that does not start as a child gets a process and a
    /// core of its own, then spare cores up to `setup.cores`. `path` names the workload.
    pub fn new(
        workload: Vec<WorkloadThread>,
        setup: &SchedulerSetup,
        os: &mut Os,
        path: &std::path::Path,
    ) -> Result<ThreadScheduler> {
        let mut threads = Vec::new();
        for thread in workload {
            let reader = if setup.loop_workloads {
                Box::new(LoopingSource::new(thread.source, thread.reopen))
            } else {
                thread.source
            };
            let renews_bulk_destinations =
                reader.bulk_events_are_page_operations() && setup.allocate_bulk_destinations;
            threads.push(Thread {
                state: if reader.starts_as_child() {
                    ThreadState::NotStarted
                } else {
                    ThreadState::Runnable
                },
                renews_bulk_destinations,
                reader,
                copy_base: thread.base,
                copy: thread.copy,
                sweep: None,
                memcpy: None,
                kernel_copy_bytes: 0,
                pid: None,
                parent: None,
                live_children: 0,
                stores: 0,
                instructions: 0,
                start_fs: 0,
                end_fs: 0,
                stalls: 0,
                stall_fs: 0,
                stall_intervals: Vec::new(),
            });
        }
        let mut cores = Vec::new();
        for (t, thread) in threads.iter_mut().enumerate() {
            if thread.state == ThreadState::Runnable {
                thread.pid = Some(os.new_process());
                os.start_thread(t as u32);
                cores.push(CoreQueue {
                    running: Some(t),
                    ..CoreQueue::default()
                });
            }
        }
        if cores.is_empty() {
            return Err(Error::Trace(format!(
                "{}: every thread is marked `child`; at least one must start the workload",
                path.display()
            )));
        }
        // Spare cores (`system.cores` above the starting threads) take forked and spawned
        // threads, so a multi-threaded process runs its threads side by side.
        let spare_cores_from = cores.len();
        let wanted = setup.cores;
        if wanted > 0 && wanted < cores.len() {
            return Err(Error::Config(format!(
                "system.cores: {wanted}, but {} starts {} threads, one core each; expected at least {} (or 0: one core per starting thread)",
                path.display(),
                cores.len(),
                cores.len()
            )));
        }
        cores.resize_with(cores.len().max(wanted), CoreQueue::default);
        Ok(ThreadScheduler {
            threads,
            cores,
            time_slice: setup.time_slice,
            spare_cores_from,
            children_to_spare_cores: setup.children_to_spare_cores,
            record_intervals: setup.record_intervals,
        })
    }

    /// Cores, spare ones included.
    pub fn core_count(&self) -> usize {
        self.cores.len()
    }

    /// Threads in the workload.
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// The first spare core: the cores before it started with a thread.
    pub fn spare_cores_from(&self) -> usize {
        self.spare_cores_from
    }

    /// The thread core `c` runs.
    #[inline]
    pub fn running(&self, c: usize) -> Option<usize> {
        self.cores[c].running
    }

    /// Whether core `c` runs a thread or has one waiting for it.
    pub fn has_work(&self, c: usize) -> bool {
        self.cores[c].running.is_some() || !self.cores[c].queue.is_empty()
    }

    /// Whether threads wait for core `c`.
    pub fn has_waiting(&self, c: usize) -> bool {
        !self.cores[c].queue.is_empty()
    }

    /// The core running a thread of process `pid` (the lowest such), if any.
    pub fn core_running_pid(&self, pid: Pid) -> Option<usize> {
        self.cores
            .iter()
            .position(|c| c.running.is_some_and(|t| self.threads[t].pid == Some(pid)))
    }

    /// An idle core `c` takes the first thread waiting for it at `now_fs`: its time slice
    /// starts. None when none waits.
    pub fn take_next(&mut self, c: usize, now_fs: u64) -> Option<usize> {
        let t = self.cores[c].queue.pop_front()?;
        let core = &mut self.cores[c];
        core.running = Some(t);
        core.slice_start = self.threads[t].instructions;
        self.threads[t].start_fs = now_fs;
        Some(t)
    }

    /// Whether thread `t` has used up its time slice on core `c` while another thread waits
    /// there; `at_boundary`: the core has no part of an event left to dispatch.
    /// Threads of a process with several (`T`) are not preempted: a capture records their
    /// schedule (`Y`), which slices would reorder.
    pub fn slice_over(&self, c: usize, t: usize, at_boundary: bool, os: &Os) -> bool {
        let core = &self.cores[c];
        let th = &self.threads[t];
        self.time_slice > 0
            && !core.queue.is_empty()
            && at_boundary
            && th.memcpy.is_none()
            && th.instructions - core.slice_start >= self.time_slice
            && !th.pid.is_some_and(|p| os.is_threaded(p))
    }

    /// Core `c`'s running thread goes behind those waiting (its slice is over).
    pub fn preempt(&mut self, c: usize) {
        let core = &mut self.cores[c];
        let t = core.running.take().expect("a running thread");
        core.queue.push_back(t);
        core.preemptions += 1;
    }

    /// Thread `t`'s next event to dispatch: the next line of a ranged access in progress, else
    /// the next from its stream (an exit at its end), ranges turned into line sweeps and fork
    /// targets made absolute; a sweep goes `line` bytes (the first cache level's lines) at a
    /// time.
    pub fn next_event(&mut self, t: usize, line: u64) -> Result<Event> {
        let th = &mut self.threads[t];
        if let Some(sweep) = th.sweep {
            let (ev, rest) = sweep.step(line);
            th.sweep = rest;
            return Ok(ev);
        }
        let ev = th.reader.next_event()?.unwrap_or(Event::Exit);
        let sweep = match ev {
            Event::LoadRange { vaddr, bytes } => Sweep::new(vaddr, bytes, false, line),
            Event::StoreRange { vaddr, bytes } => Sweep::new(vaddr, bytes, true, line),
            Event::KernelFromUser { vaddr, bytes } => {
                th.kernel_copy_bytes += bytes;
                Sweep::new(vaddr, bytes, false, line)
            }
            Event::KernelToUser { vaddr, bytes } => {
                th.kernel_copy_bytes += bytes;
                Sweep::new(vaddr, bytes, true, line)
            }
            Event::Fork(k) | Event::Spawn(k) | Event::Yield(k) => {
                let Ok(k) = u32::try_from(k as u64 + th.copy_base as u64) else {
                    return Err(self.err(t, "thread id too large"));
                };
                return Ok(match ev {
                    Event::Fork(_) => Event::Fork(k),
                    Event::Spawn(_) => Event::Spawn(k),
                    _ => Event::Yield(k),
                });
            }
            _ => return Ok(ev),
        };
        let (first, rest) = sweep.step(line);
        th.sweep = rest;
        Ok(first)
    }

    /// Thread `t` runs a memcpy routine's steps before its next event.
    pub fn start_memcpy(&mut self, t: usize, expansion: MemcpyExpansion) {
        self.threads[t].memcpy = Some(expansion);
    }

    /// The next step of thread `t`'s memcpy routine; None (and the routine ends) after the
    /// last one.
    pub fn next_copy_step(&mut self, t: usize) -> Option<CopyStep> {
        let step = self.threads[t].memcpy.as_mut().and_then(|m| m.next());
        if step.is_none() {
            self.threads[t].memcpy = None;
        }
        step
    }

    /// Thread `t`'s memcpy routine in progress, if any (a declined chunk is put back into it).
    pub fn memcpy_mut(&mut self, t: usize) -> Option<&mut MemcpyExpansion> {
        self.threads[t].memcpy.as_mut()
    }

    /// An error at thread `t`'s record.
    pub fn err(&self, t: usize, e: impl std::fmt::Display) -> Error {
        Error::Trace(format!("{}: {e}", self.threads[t].reader.location()))
    }

    /// The process thread `t` runs in (None before it starts).
    pub fn pid_of(&self, t: usize) -> Option<Pid> {
        self.threads.get(t)?.pid
    }

    /// The process of a started thread `t`.
    #[inline]
    pub fn pid(&self, t: usize) -> Pid {
        self.threads[t].pid.expect("a started thread")
    }

    /// Whether thread `t`'s whole bulk destination pages get new frames first.
    pub fn renews_bulk_destinations(&self, t: usize) -> bool {
        self.threads[t].renews_bulk_destinations
    }

    /// Thread `t` retired `n` instructions.
    #[inline]
    pub fn retired(&mut self, t: usize, n: u64) {
        self.threads[t].instructions += n;
    }

    /// Thread `t` stores: the store's number (from 1) in the thread.
    pub fn count_store(&mut self, t: usize) -> u64 {
        self.threads[t].stores += 1;
        self.threads[t].stores
    }

    /// Thread `t` stalled on memory from `since` to `until` (fs).
    pub fn stalled(&mut self, t: usize, since: u64, until: u64) {
        let th = &mut self.threads[t];
        th.stalls += 1;
        th.stall_fs += until - since;
        if self.record_intervals {
            th.stall_intervals.push((since, until));
        }
    }

    /// Thread `t` forks (a new process) or spawns (in its process) thread `child`, which
    /// must be marked `child` and not have started: the OS learns of it, it becomes
    /// runnable and waits on an idle spare core if there is one (`children_to_spare_cores`),
    /// else on core `c`.
    fn start_child(
        &mut self,
        c: usize,
        t: usize,
        fork: bool,
        child: u32,
        os: &mut Os,
    ) -> Result<()> {
        let ok = self
            .threads
            .get(child as usize)
            .is_some_and(|th| th.state == ThreadState::NotStarted);
        if !ok {
            let what = if fork { "fork" } else { "spawn" };
            return Err(self.err(
                t,
                format!("{what} of thread {child}: there is no such thread marked `child` that has not started"),
            ));
        }
        let child = child as usize;
        let pid = self.pid(t);
        let child_pid = if fork { os.fork(pid) } else { os.spawn(pid) };
        os.start_thread(child as u32);
        let th = &mut self.threads[child];
        th.pid = Some(child_pid);
        th.state = ThreadState::Runnable;
        th.parent = Some(t);
        self.threads[t].live_children += 1;
        let spare = if self.children_to_spare_cores {
            (self.spare_cores_from..self.cores.len()).find(|&k| !self.has_work(k))
        } else {
            None
        };
        self.cores[spare.unwrap_or(c)].queue.push_back(child);
        Ok(())
    }

    /// Thread `t` on core `c` handles a thread event at `now_fs`: the one place fork,
    /// spawn, yield, wait and exit change threads, in both modes. `window_empty`: core `c`
    /// has nothing in flight (a thread leaves its core only then; a yield waits for it, the
    /// timing mode makes wait and exit wait before calling).
    pub fn thread_event(
        &mut self,
        c: usize,
        t: usize,
        ev: Event,
        now_fs: u64,
        window_empty: bool,
        os: &mut Os,
    ) -> Result<ThreadOutcome> {
        Ok(match ev {
            Event::Fork(child) | Event::Spawn(child) => {
                self.start_child(c, t, matches!(ev, Event::Fork(_)), child, os)?;
                ThreadOutcome::Started
            }
            Event::Yield(next) => self.yield_to(c, t, next, window_empty),
            Event::Wait if self.wait(c, t) => ThreadOutcome::Left,
            Event::Wait => ThreadOutcome::Nothing,
            Event::Exit => {
                self.exit(c, t, now_fs, os);
                ThreadOutcome::Left
            }
            _ => unreachable!("not a thread event: {ev:?}"),
        })
    }

    /// Thread `t` on core `c` yields to thread `next`; `window_empty`: core `c` has nothing
    /// in flight.
    fn yield_to(&mut self, c: usize, t: usize, next: u32, window_empty: bool) -> ThreadOutcome {
        let core = &mut self.cores[c];
        let Some(at) = core.queue.iter().position(|&q| q == next as usize) else {
            return ThreadOutcome::Nothing;
        };
        if !window_empty {
            return ThreadOutcome::NotYet;
        }
        core.queue.remove(at);
        core.queue.push_front(next as usize);
        core.queue.push_back(t);
        core.running = None;
        core.yields += 1;
        ThreadOutcome::Left
    }

    /// Thread `t` on core `c` waits for its children; whether it blocks (it has live ones)
    /// and leaves the core.
    fn wait(&mut self, c: usize, t: usize) -> bool {
        if self.threads[t].live_children == 0 {
            return false;
        }
        self.threads[t].state = ThreadState::Waiting;
        self.cores[c].running = None;
        true
    }

    /// Thread `t` exits on core `c` at `now_fs`: its process ends, a parent waiting for its
    /// last child becomes runnable on core `c`, and the core is free.
    fn exit(&mut self, c: usize, t: usize, now_fs: u64, os: &mut Os) {
        os.exit(self.pid(t));
        let th = &mut self.threads[t];
        th.state = ThreadState::Done;
        th.end_fs = now_fs;
        if let Some(p) = th.parent {
            let parent = &mut self.threads[p];
            parent.live_children -= 1;
            if parent.live_children == 0 && parent.state == ThreadState::Waiting {
                parent.state = ThreadState::Runnable;
                self.cores[c].queue.push_back(p);
            }
        }
        self.cores[c].last_exit_fs = now_fs;
        self.cores[c].running = None;
    }

    /// Where thread `t` is in its stream (a file and record).
    pub fn location(&self, t: usize) -> String {
        self.threads[t].reader.location()
    }

    /// `sim.stop_after_dram_accesses` is reached at `now_fs`: every running or waiting
    /// thread ends now, and so does every core with work.
    pub fn stop_all(&mut self, now_fs: u64) {
        for core in &mut self.cores {
            if core.running.is_some() || !core.queue.is_empty() {
                core.last_exit_fs = now_fs;
            }
        }
        for th in &mut self.threads {
            if matches!(th.state, ThreadState::Runnable | ThreadState::Waiting) {
                th.end_fs = now_fs;
            }
        }
    }

    /// Whether every thread has exited (or never started).
    pub fn all_done(&self) -> bool {
        self.threads
            .iter()
            .all(|t| matches!(t.state, ThreadState::Done | ThreadState::NotStarted))
    }

    /// Where each running or waiting thread is in its stream.
    pub fn running_locations(&self) -> Vec<String> {
        self.threads
            .iter()
            .filter(|t| matches!(t.state, ThreadState::Runnable | ThreadState::Waiting))
            .map(|t| t.reader.location())
            .collect()
    }

    /// When the last thread ended (fs).
    pub fn end_fs(&self) -> u64 {
        self.threads.iter().map(|t| t.end_fs).max().unwrap_or(0)
    }

    /// Core `c`'s scheduling counters.
    pub fn core_counts(&self, c: usize) -> CoreCounts {
        let core = &self.cores[c];
        CoreCounts {
            preemptions: core.preemptions,
            yields: core.yields,
            last_exit_fs: core.last_exit_fs,
        }
    }

    /// Every thread's stats.
    pub fn thread_stats(&self) -> Vec<ThreadStats> {
        self.threads
            .iter()
            .map(|t| ThreadStats {
                file: t
                    .reader
                    .location()
                    .rsplit_once(':')
                    .map_or(String::new(), |(f, _)| f.to_string()),
                instructions: t.instructions,
                start_ns: t.start_fs as f64 / 1e6,
                end_ns: t.end_fs as f64 / 1e6,
                memory_stalls: t.stalls,
                memory_stall_ns: t.stall_fs as f64 / 1e6,
                kernel_copy_bytes: t.kernel_copy_bytes,
                copy: t.copy as u64,
                stall_intervals_ns: t
                    .stall_intervals
                    .iter()
                    .map(|&(a, b)| (a as f64 / 1e6, b as f64 / 1e6))
                    .collect(),
            })
            .collect()
    }
}
