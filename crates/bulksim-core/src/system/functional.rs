//! Functional mode (`sim.mode = "functional"`): the cores and the OS only, for the
//! page-allocation study (docs/rank_assignment.md, "Page allocation"). No cache, DRAM or data
//! is simulated: every memory event of a thread is translated (page faults, evictions,
//! referenced bits and the TLBs' pages, accesses by rank) and retires in one core cycle, like
//! every other instruction (one instruction per cycle per core; a fault's
//! `os.fault_instructions` retire on its thread too). A memcpy or meminit translates every
//! page it reads or writes and counts as one instruction. Threads share cores round-robin as
//! in timing mode: a forked or spawned thread waits on its parent's core, a time slice
//! (`system.time_slice_instructions`) passes the core on. The core that is furthest behind
//! in cycles runs next (ties: the lowest index), so threads interleave as they would in time.

use super::threads::ThreadOutcome;
use super::System;
use crate::error::Result;
use crate::os::allocator::PAGE;
use crate::os::Work;
use crate::workload::program::Event;

impl System {
    /// Runs the workload functionally to the end; `progress` as in `run_with_progress`.
    pub(super) fn run_functional(
        &mut self,
        mut progress: Option<super::Progress>,
        period: std::time::Duration,
    ) -> Result<super::stats::SystemStats> {
        let started = std::time::Instant::now();
        let mut reported = started;
        let mut cycles = vec![0u64; self.cores.len()];
        let mut steps: u32 = 0;
        loop {
            let next = (0..self.cores.len())
                .filter(|&c| self.sched.has_work(c))
                .min_by_key(|&c| (cycles[c], c));
            let Some(c) = next else { break };
            if cycles[c] > self.run.max_cycles {
                self.now = cycles[c] * self.timing.core_fs;
                return Err(self.past_max_cycles());
            }
            let t = match self.sched.running(c) {
                Some(t) => t,
                None => self
                    .sched
                    .take_next(c, cycles[c] * self.timing.core_fs)
                    .expect("a queued thread"),
            };
            if self
                .sched
                .slice_over(c, t, self.cores[c].at_event_boundary(), &self.os)
            {
                self.sched.preempt(c);
                continue;
            }
            let retired = self.step_functional(c, t, cycles[c])?;
            cycles[c] += retired;
            self.cores[c].retired += retired;
            self.sched.retired(t, retired);
            steps = steps.wrapping_add(1);
            if let Some(report) = progress.as_mut() {
                if steps % super::run::PROGRESS_CHECK_STEPS == 0 && reported.elapsed() >= period {
                    reported = std::time::Instant::now();
                    self.now = cycles.iter().copied().max().unwrap_or(0) * self.timing.core_fs;
                    report(self.retired(), self.now as f64 / 1e6);
                }
            }
        }
        self.now = cycles.iter().copied().max().unwrap_or(0) * self.timing.core_fs;
        if let Some(report) = progress.as_mut() {
            report(self.retired(), self.now as f64 / 1e6);
        }
        Ok(self.stats(started.elapsed().as_secs_f64()))
    }

    /// Thread `t`'s next event on core `c` at core cycle `cycle`: the instructions it
    /// retires (each in one cycle).
    fn step_functional(&mut self, c: usize, t: usize, cycle: u64) -> Result<u64> {
        let pid = self.sched.pid(t);
        let ev = self.sched.next_event(t, self.timing.line)?;
        Ok(match ev {
            Event::Compute(n) => {
                if cycle.saturating_add(n) > self.run.max_cycles {
                    return Err(self.sched.err(
                        t,
                        format!(
                            "{n} non-memory instructions take {n} core cycles in functional mode, past sim.max_cycles ({} core cycles); a corrupt count? raise sim.max_cycles to run it",
                            self.run.max_cycles
                        ),
                    ));
                }
                n
            }
            Event::Load(va)
            | Event::LoadDependent(va)
            | Event::MemRead(va)
            | Event::MemReadDependent(va) => 1 + self.translate_functional(c, t, va, false)?,
            Event::Store(va) | Event::MemWrite(va) => {
                1 + self.translate_functional(c, t, va, true)?
            }
            Event::Memcpy { src, dst, bytes } => {
                1 + self.memcpy_functional(c, t, src, dst, bytes)?
            }
            Event::Movblk { src, dst } => {
                // Functional mode translates like the timing core does: both source lines
                // as loads, the destination as a store.
                let line = self.timing.line;
                let mut kernel = self.translate_functional(c, t, src, false)?;
                kernel += self.translate_functional(c, t, src + line - 1, false)?;
                kernel += self.translate_functional(c, t, dst, true)?;
                1 + kernel
            }
            Event::Meminit { dst, bytes, .. } => {
                let mut kernel = 0;
                self.renew_bulk_destinations(t, dst, bytes);
                for page in pages(dst, bytes) {
                    kernel += self.translate_functional(c, t, page, true)?;
                }
                1 + kernel
            }
            Event::Map { vaddr, bytes } => {
                self.os.map(pid, vaddr, bytes);
                1
            }
            Event::MapPopulated { vaddr, bytes } => {
                self.os
                    .map_populated(pid, t as u32, vaddr, bytes)
                    .map_err(|e| self.sched.err(t, e))?;
                1
            }
            Event::Unmap { vaddr, bytes } => {
                self.os.unmap(pid, vaddr, bytes);
                1
            }
            Event::MapResident { vaddr, bytes } => {
                self.os.map_resident(pid, vaddr, bytes);
                1
            }
            Event::Exec => {
                self.os.exec(pid);
                1
            }
            Event::Fork(_) | Event::Spawn(_) | Event::Yield(_) | Event::Wait | Event::Exit => {
                // A thread event is an instruction when it starts a child; a switch retires
                // nothing. Every event retires at once here, so the window is always empty.
                let end = cycle * self.timing.core_fs;
                let outcome = self.sched.thread_event(c, t, ev, end, true, &mut self.os)?;
                u64::from(outcome == ThreadOutcome::Started)
            }
            Event::LoadRange { .. }
            | Event::StoreRange { .. }
            | Event::KernelToUser { .. }
            | Event::KernelFromUser { .. } => {
                unreachable!("next_event turns ranged accesses into line accesses")
            }
        })
    }

    /// Translates a memcpy's pages for thread `t` on core `c`: the source's as loads, then
    /// the destination's as stores; returns the fault path's kernel instructions.
    fn memcpy_functional(
        &mut self,
        c: usize,
        t: usize,
        src: u64,
        dst: u64,
        bytes: u64,
    ) -> Result<u64> {
        let pid = self.sched.pid(t);
        let mut kernel = 0;
        for page in pages(src, bytes) {
            kernel += self.translate_functional(c, t, page, false)?;
        }
        self.renew_bulk_destinations(t, dst, bytes);
        for page in pages(dst, bytes) {
            // As the timing mode does: each destination page placed by the source
            // page it is copied from.
            let from = src + page.max(dst) - dst;
            let src_frame = self.os.lookup(pid, from).map(|pa| (pa / PAGE) as u32);
            kernel += self.translate_functional_as(c, t, page, true, src_frame)?;
        }
        Ok(kernel)
    }

    /// Translates thread `t`'s access on core `c`; a fault is retried (so the access is
    /// counted once, as in timing mode). Returns the fault path's kernel instructions.
    #[inline]
    fn translate_functional(&mut self, c: usize, t: usize, va: u64, write: bool) -> Result<u64> {
        self.translate_functional_as(c, t, va, write, None)
    }

    /// Thread `t`'s whole destination pages of a bulk event in [dst, dst + bytes) lose their
    /// frames first when its bulk events are the kernel's page operations
    /// (`os.trace_bulk_destinations = allocate`), as in the timing mode.
    fn renew_bulk_destinations(&mut self, t: usize, dst: u64, bytes: u64) {
        if !self.sched.renews_bulk_destinations(t) {
            return;
        }
        let pid = self.sched.pid(t);
        for page in (dst.div_ceil(PAGE)..(dst + bytes) / PAGE).map(|p| p * PAGE) {
            self.os.renew_page(pid, page);
        }
    }

    /// `translate_functional`; a write that is a copy's destination (`copy_of`: the source
    /// page's frame) is placed as the timing mode places it.
    fn translate_functional_as(
        &mut self,
        c: usize,
        t: usize,
        va: u64,
        write: bool,
        copy_of: Option<u32>,
    ) -> Result<u64> {
        let pid = self.sched.pid(t);
        let (_, work) = match copy_of {
            Some(src) => self
                .os
                .translate_copy_destination(c as u32, pid, t as u32, va, src),
            None => self.os.translate_on(c as u32, pid, t as u32, va, write),
        }
        .map_err(|e| self.sched.err(t, e))?;
        let kernel = match work {
            None | Some(Work::Resident { .. }) => 0,
            Some(_) => {
                self.os
                    .translate_on(c as u32, pid, t as u32, va, write)
                    .map_err(|e| self.sched.err(t, e))?;
                self.os.fault_instructions()
            }
        };
        self.os.count_access(t as u32);
        Ok(kernel)
    }
}

/// The page addresses [vaddr, vaddr + bytes) touches.
fn pages(vaddr: u64, bytes: u64) -> impl Iterator<Item = u64> {
    let first = vaddr / PAGE;
    let end = vaddr.saturating_add(bytes).div_ceil(PAGE);
    (first..end).map(|p| p * PAGE)
}
