//! The system's side of a hybrid memory (`[hybrid]`, docs/hybrid.md) as one component,
//! `HybridOsWork`: the OS work the hybrid router (`memory::hybrid`) cannot do alone because it
//! needs the caches, the page tables and the cores' front ends. It is `Stepped`
//! (`schedule.rs`): the scheduler steps it in the core cycles in which it is due, lending it a
//! `World`, so a new migration policy changes `hybrid/` and this file, never `system/mod.rs`
//! or the run loop. Once a period (an event on the scheduler's time line, `next_period_fs`) the OS
//! reads the PACT and starts the policy's migrations; a migration whose blocks are all at
//! their destination completes when its page is quiet (no miss in flight for it, no
//! write-back of it waiting for memory; its accesses wait meanwhile, `CoreEnv::blocked`):
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

use super::schedule::{Stepped, World};
use crate::cache::Hierarchy;
use crate::hybrid::art::Direction;
use crate::hybrid::config::RemapLines;
use crate::hybrid::PAGE_BYTES;
use crate::memory::hybrid::HybridMemory;
use crate::os::Os;

/// The hybrid memory's OS work: its settings, read once from `[hybrid]`.
pub(super) struct HybridOsWork {
    /// `hybrid.os_period_ns`: core 0's OS time each period (ns).
    os_period_ns: u64,
    /// `hybrid.os_remap_ns`: the page's core's OS time at each remap (ns).
    os_remap_ns: u64,
    /// `hybrid.remap_shootdown_ns`: every core's stall at each remap (ns).
    remap_shootdown_ns: u64,
    /// `hybrid.remap_lines = "retag"`: cached lines are renamed, not flushed.
    retag: bool,
    /// The mechanism is CPM (pinned lines, serial hand-off).
    cpm: bool,
}

impl HybridOsWork {
    /// The OS work of `hybrid` (its settings do not change during a run).
    pub(super) fn new(hybrid: &HybridMemory) -> HybridOsWork {
        HybridOsWork {
            os_period_ns: hybrid.cfg.os_period_ns,
            os_remap_ns: hybrid.cfg.os_remap_ns,
            remap_shootdown_ns: hybrid.cfg.remap_shootdown_ns,
            retag: hybrid.cfg.remap_lines == RemapLines::Retag,
            cpm: hybrid.cpm,
        }
    }

    /// Whether an access to `pa` waits because its page's migration is completing.
    #[inline]
    pub(super) fn completing(mem: &Hierarchy, pa: u64) -> bool {
        mem.router()
            .hybrid
            .as_ref()
            .is_some_and(|h| h.completing(pa / PAGE_BYTES))
    }
}

impl Stepped for HybridOsWork {
    /// A period or a CPM start due, a migration ready to complete once its page is quiet, or
    /// a DRAM frame the OS placed a page in or released since the last step.
    fn due(&self, w: &World) -> bool {
        let h = w.mem.router().hybrid.as_ref().expect("hybrid");
        w.now >= h.next_period_fs
            || !h.ready.is_empty()
            || h.cpm_due(w.now)
            || !w.os.released.is_empty()
            || w.os.external.as_ref().is_some_and(|x| x.has_placed())
    }

    /// The hybrid memory's OS work due now; whether it did any (cores waiting on a page
    /// that completed may go on). The OS time it takes holds the cores' front ends.
    fn step(&mut self, w: &mut World) -> crate::error::Result<bool> {
        let (now, os) = (w.now, &mut *w.os);
        let mut acted = false;
        let h = w.mem.router_mut().hybrid.as_mut().expect("hybrid");
        h.note_placed(os);
        for frame in std::mem::take(&mut os.released) {
            if let Some(home) = h.release_dram(frame as u64, os) {
                os.free_frame(home as u32);
            }
        }
        if now >= h.next_period_fs {
            for d in h.period(os, now)? {
                w.mem.router_mut().devices[d].wake(now);
            }
            self.take_os_time(w, 0, self.os_period_ns);
            self.take_started(w.os, w.mem);
            acted = true;
        }
        let h = w.mem.router().hybrid.as_ref().expect("hybrid");
        let ready: Vec<u64> = h.ready.iter().copied().collect();
        for key in ready {
            let (a, b) = (key * PAGE_BYTES, (key + 1) * PAGE_BYTES);
            if w.mem.fetching_in(a, b) || w.mem.memory_writes_in(a, b) {
                continue;
            }
            self.complete_migration(w, key);
            acted = true;
        }
        let h = w.mem.router_mut().hybrid.as_mut().expect("hybrid");
        if h.cpm_due(now) {
            if let Some(d) = h.start_next_cpm(w.os, now)? {
                w.mem.router_mut().devices[d].wake(now);
            }
            self.take_started(w.os, w.mem);
            acted = true;
        }
        if acted && !w.mem.memory_outbox_empty() {
            for d in &mut w.mem.router_mut().devices {
                d.wake(now);
            }
        }
        Ok(acted)
    }
}

impl HybridOsWork {
    /// The migrations the hybrid memory just started: a promotion's PCM source is held,
    /// the destination's stale cached lines are dropped (a frame freed by a demotion or an
    /// exit may still have some, dirty ones of an exited owner among them), and under
    /// `cpm` the page's lines are pinned in the last level.
    fn take_started(&self, os: &mut Os, mem: &mut Hierarchy) {
        let h = mem.router_mut().hybrid.as_mut().expect("hybrid");
        for (src, dest, direction) in std::mem::take(&mut h.started) {
            if direction == Direction::Promoting {
                os.hold(src as u32);
            }
            mem.drop_lines(dest * PAGE_BYTES, PAGE_BYTES);
            if self.cpm {
                mem.pin_last_level(src * PAGE_BYTES, PAGE_BYTES);
            }
        }
    }

    /// Completes the ready, quiet migration keyed `key` (its home page).
    fn complete_migration(&mut self, w: &mut World, key: u64) {
        let now = w.now;
        let h = w.mem.router().hybrid.as_ref().expect("hybrid");
        let m = *h.migration(key).expect("a ready migration");
        if m.flipped {
            // A partial demotion: the page never left its PCM home, whose lines the caches
            // hold under the right address already; the DRAM frame is free again.
            w.os.unhold(m.dest as u32);
            let h = w.mem.router_mut().hybrid.as_mut().expect("hybrid");
            h.finish(key, true, w.os);
            return;
        }
        let (old_at, new_at) = (m.src * PAGE_BYTES, m.dest * PAGE_BYTES);
        let dest_device = h.dram_or_pcm(m.dest);
        let writes_before = last_level_writes_out(w.mem);
        let lines = if self.retag {
            w.mem.retag_lines_to(old_at, new_at, PAGE_BYTES)
        } else {
            w.mem.move_lines_to(old_at, new_at, PAGE_BYTES)
        };
        if self.cpm {
            w.mem.unpin_last_level();
            // The lines just queued for the new frame are the flush, written one after
            // another; then the remap stalls every core; then the next set-up.
            let flushed = last_level_writes_out(w.mem) - writes_before;
            let h = w.mem.router_mut().hybrid.as_mut().expect("hybrid");
            h.cpm_hand_off(now, flushed as u64, dest_device);
        }
        let (old, new) = (m.src as u32, m.dest as u32);
        // The page may have gone with its process meanwhile.
        let mapped = w.os.frame_table().owner(old) == Some(m.pid)
            && w.os.lookup(m.pid, m.vpn * PAGE_BYTES) == Some(m.src * PAGE_BYTES);
        if mapped {
            w.os.remap(m.pid, m.vpn, new);
            let core = w.sched.core_running_pid(m.pid).unwrap_or(0);
            self.take_os_time(w, core, self.os_remap_ns);
            // Every mechanism's remap updates the page table and shoots down the page's TLB
            // entries on every core (HMMSim drains the CPUs at every completion, CPM's or
            // not); only CPM's next migration also waits for it (`cpm_hand_off`).
            let h = w.mem.router_mut().hybrid.as_mut().expect("hybrid");
            let stall_ns = self.remap_shootdown_ns;
            h.stats.remap_stall_ns += stall_ns;
            if stall_ns > 0 {
                for core in w.cores.iter_mut() {
                    core.hold_front_end(now, stall_ns);
                }
            }
        }
        if m.direction == Direction::Promoting {
            w.os.unhold(old);
        }
        if m.direction == Direction::Demoting {
            if w.os.frame_table().refcount(old) > 0 {
                w.os.release_external(old);
            }
            if !mapped {
                w.os.free_frame(new);
            }
        }
        let h = w.mem.router_mut().hybrid.as_mut().expect("hybrid");
        if self.retag {
            h.stats.pages_retagged_lines += lines;
        } else {
            h.stats.pages_flushed_lines += lines;
        }
        h.finish(key, mapped, w.os);
    }

    /// Core `c`'s front end runs OS work for `ns` after any it has already (hybrid OS
    /// time: `os_period_ns`, `os_remap_ns`), counted in `os_time_ns`.
    fn take_os_time(&self, w: &mut World, c: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        w.cores[c].hold_front_end(w.now, ns);
        w.mem
            .router_mut()
            .hybrid
            .as_mut()
            .expect("hybrid")
            .stats
            .os_time_ns += ns;
    }
}

/// Write-backs the last cache level has queued for memory.
fn last_level_writes_out(mem: &Hierarchy) -> usize {
    mem.levels.last().map_or(0, |l| l.out_writebacks.len())
}

#[cfg(test)]
mod tests {
    use super::super::System;
    use super::*;
    use crate::config::Config;
    use crate::workload::program::{Event, ProgramWriter};

    /// The OS work is stepped only when due, so `due` must see everything its step would do:
    /// here a frame the OS released (a process's exit) and the period's time, each alone.
    #[test]
    fn due_sees_a_released_frame_and_the_period() {
        let d = std::env::temp_dir().join(format!("bulksim-hybrid-due-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let mut w = ProgramWriter::create(&d.join("thread-0.trace"), false).unwrap();
        w.write(&Event::Compute(10)).unwrap();
        w.finish().unwrap();
        let config = Config::default()
            .apply_sets(&[
                "memory.device.0.name=dram",
                "memory.device.0.preset=DDR4_8Gb_x8_1600",
                "memory.device.1.name=pcm",
                "memory.device.1.preset=PCM_x8_1600",
                "controller.refresh=none",
                "hybrid.mechanism=cm",
                "hybrid.placement=pcm_only",
                "hybrid.period_ns=10000",
            ])
            .unwrap();
        let mut sys = System::new(&config, &d).unwrap();
        let work = sys.hybrid_os.take().expect("[hybrid]");
        let (_, world) = sys.split_stepped();
        assert!(!work.due(&world), "nothing to do at the start");
        world.os.released.push(0);
        assert!(work.due(&world), "a released frame");
        world.os.released.clear();
        let period = world.mem.router().hybrid.as_ref().unwrap().next_period_fs;
        let mut at_period = World {
            now: period,
            ..world
        };
        assert!(work.due(&at_period), "the period");
        at_period.now = period - 1;
        assert!(!work.due(&at_period));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
