//! The system's side of a hybrid memory (`[hybrid]`, docs/hybrid.md): the OS work the
//! hybrid router (`memory::hybrid`) cannot do alone because it needs the caches and the page
//! tables. Once a period (an event on the scheduler's time line, `next_period_fs`) the OS
//! reads the PACT and starts the policy's migrations; a migration whose blocks are all at
//! their destination completes when its page is quiet (no miss in flight for it, no
//! write-back of it waiting for memory; its accesses wait meanwhile, `System::blocked`):
//! the old frame's cached lines are flushed to the new frame and invalidated, or renamed to
//! it (`hybrid.remap_lines`), the OS maps
//! the page to the new frame, and the ART entry and the vacated frame are freed. DRAM
//! frames a process leaves at exit return to the hybrid memory's free list, with the PCM
//! frame kept for the page; a PCM frame a promotion copies from is held (`Os::hold`) so
//! that no other process gets it before the promotion ends. OS time (`hybrid.os_period_ns`,
//! `os_remap_ns`, bulksim's model) takes a core's front end: core 0's each period, the
//! page's process's core at each remap. Under `cpm` each completion is followed by the
//! serial hand-off of the paper's baseline: the page's dirty pinned lines flushed to the new
//! frame one after another, the remap's TLB shootdown (which stalls every core at every
//! mechanism's remap, `hybrid.remap_shootdown_ns`), and the next migration's set-up; the next CPM migration starts
//! only when all of it is over (`HybridMemory::cpm_hand_off`).

use super::System;
use crate::hybrid::art::Direction;
use crate::hybrid::config::RemapLines;
use crate::hybrid::PAGE_BYTES;

impl System {
    /// The hybrid memory's OS work due now; whether it did any (cores waiting on a page
    /// that completed may go on).
    pub(super) fn step_hybrid(&mut self) -> crate::error::Result<bool> {
        let mut acted = false;
        let h = self.mem.router.hybrid.as_mut().expect("hybrid");
        h.note_placed(&mut self.os);
        for frame in std::mem::take(&mut self.os.released) {
            if let Some(home) = h.release_dram(frame as u64, &mut self.os) {
                self.os.free_frame(home as u32);
            }
        }
        if self.now >= h.next_period_fs {
            for d in h.period(&mut self.os, self.now)? {
                self.mem.router.devices[d].wake(self.now);
            }
            let os_ns = h.cfg.os_period_ns;
            self.take_os_time(0, os_ns);
            self.take_started();
            acted = true;
        }
        let h = self.mem.router.hybrid.as_ref().expect("hybrid");
        let ready: Vec<u64> = h.ready.iter().copied().collect();
        for key in ready {
            let (a, b) = (key * PAGE_BYTES, (key + 1) * PAGE_BYTES);
            if self.mem.fetching_in(a, b) || self.mem.memory_writes_in(a, b) {
                continue;
            }
            self.complete_migration(key);
            acted = true;
        }
        let h = self.mem.router.hybrid.as_mut().expect("hybrid");
        if h.cpm_due(self.now) {
            if let Some(d) = h.start_next_cpm(&mut self.os, self.now)? {
                self.mem.router.devices[d].wake(self.now);
            }
            self.take_started();
            acted = true;
        }
        if acted && !self.mem.memory_outbox_empty() {
            let now = self.now;
            for d in &mut self.mem.router.devices {
                d.wake(now);
            }
        }
        Ok(acted)
    }

    /// The migrations the hybrid memory just started: a promotion's PCM source is held,
    /// the destination's stale cached lines are dropped (a frame freed by a demotion or an
    /// exit may still have some, dirty ones of an exited owner among them), and under
    /// `cpm` the page's lines are pinned in the last level.
    fn take_started(&mut self) {
        let h = self.mem.router.hybrid.as_mut().expect("hybrid");
        let cpm = h.cpm;
        for (src, dest, direction) in std::mem::take(&mut h.started) {
            if direction == Direction::Promoting {
                self.os.hold(src as u32);
            }
            self.mem.drop_lines(dest * PAGE_BYTES, PAGE_BYTES);
            if cpm {
                self.mem.pin_last_level(src * PAGE_BYTES, PAGE_BYTES);
            }
        }
    }

    /// Completes the ready, quiet migration keyed `key` (its home page).
    fn complete_migration(&mut self, key: u64) {
        let h = self.mem.router.hybrid.as_ref().expect("hybrid");
        let (cpm, remap_ns) = (h.cpm, h.cfg.os_remap_ns);
        let m = *h.migration(key).expect("a ready migration");
        if m.flipped {
            // A partial demotion: the page never left its PCM home, whose lines the caches
            // hold under the right address already; the DRAM frame is free again.
            self.os.unhold(m.dest as u32);
            let h = self.mem.router.hybrid.as_mut().expect("hybrid");
            h.finish(key, true, &mut self.os);
            return;
        }
        let (old_at, new_at) = (m.src * PAGE_BYTES, m.dest * PAGE_BYTES);
        let retag = h.cfg.remap_lines == RemapLines::Retag;
        let dest_device = h.dram_or_pcm(m.dest);
        let writes_before = self.last_level_writes_out();
        let lines = if retag {
            self.mem.retag_lines_to(old_at, new_at, PAGE_BYTES)
        } else {
            self.mem.move_lines_to(old_at, new_at, PAGE_BYTES)
        };
        if cpm {
            self.mem.unpin_last_level();
            // The lines just queued for the new frame are the flush, written one after
            // another; then the remap stalls every core; then the next set-up.
            let flushed = self.last_level_writes_out() - writes_before;
            let h = self.mem.router.hybrid.as_mut().expect("hybrid");
            h.cpm_hand_off(self.now, flushed as u64, dest_device);
        }
        let (old, new) = (m.src as u32, m.dest as u32);
        // The page may have gone with its process meanwhile.
        let mapped = self.os.frame_table().owner(old) == Some(m.pid)
            && self.os.lookup(m.pid, m.vpn * PAGE_BYTES) == Some(m.src * PAGE_BYTES);
        if mapped {
            self.os.remap(m.pid, m.vpn, new);
            let core = self.core_running(m.pid).unwrap_or(0);
            self.take_os_time(core, remap_ns);
            // Every mechanism's remap updates the page table and shoots down the page's TLB
            // entries on every core (HMMSim drains the CPUs at every completion, CPM's or
            // not); only CPM's next migration also waits for it (`cpm_hand_off`).
            let h = self.mem.router.hybrid.as_mut().expect("hybrid");
            let stall_ns = h.cfg.remap_shootdown_ns;
            h.stats.remap_stall_ns += stall_ns;
            self.stall_every_core(stall_ns);
        }
        if m.direction == Direction::Promoting {
            self.os.unhold(old);
        }
        if m.direction == Direction::Demoting {
            if self.os.frame_table().refcount(old) > 0 {
                self.os.release_external(old);
            }
            if !mapped {
                self.os.free_frame(new);
            }
        }
        let h = self.mem.router.hybrid.as_mut().expect("hybrid");
        if retag {
            h.stats.pages_retagged_lines += lines;
        } else {
            h.stats.pages_flushed_lines += lines;
        }
        h.finish(key, mapped, &mut self.os);
    }

    /// Core `c`'s front end runs OS work for `ns` after any it has already (hybrid OS
    /// time: `os_period_ns`, `os_remap_ns`), counted in `os_time_ns`.
    fn take_os_time(&mut self, c: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        self.hold_front_end(c, ns);
        self.mem
            .router
            .hybrid
            .as_mut()
            .expect("hybrid")
            .stats
            .os_time_ns += ns;
    }

    /// Write-backs the last cache level has queued for memory.
    fn last_level_writes_out(&self) -> usize {
        self.mem.levels.last().map_or(0, |l| l.out_writebacks.len())
    }

    /// Every core's front end dispatches nothing for `ns` after any OS work it has already
    /// (a TLB shootdown's interrupt; as HMMSim's `pin` drains the CPUs).
    fn stall_every_core(&mut self, ns: u64) {
        if ns == 0 {
            return;
        }
        for c in 0..self.cores.len() {
            self.hold_front_end(c, ns);
        }
    }

    /// Core `c`'s front end dispatches nothing for `ns` more, after any OS work it has.
    fn hold_front_end(&mut self, c: usize, ns: u64) {
        let core = &mut self.cores[c];
        core.os_until_fs = core
            .os_until_fs
            .max(self.now)
            .saturating_add(ns.saturating_mul(1_000_000));
    }

    /// The first core running a thread of process `pid`, if any.
    fn core_running(&self, pid: crate::os::Pid) -> Option<usize> {
        self.sched.core_running_pid(pid)
    }
}
