//! What a core's dispatch asks of the OS and the bulk coordinator: address translation
//! with its page faults, the work the OS returns (copy-on-write copies, zeroing), bulk
//! events queued as operations, rank delays fed to the allocator and the measured
//! window's checks.

use super::*;

impl System {
    /// Thread `t` exited on core `c`: an error when `c` is measured, before the end of its
    /// window, and has no other thread to run (its workload ended too soon).
    pub(super) fn check_measured_core_has_work(&self, c: usize, t: usize) -> Result<()> {
        let Some(m) = &self.measure else {
            return Ok(());
        };
        if !m.pending(c) || self.sched.has_waiting(c) {
            return Ok(());
        }
        Err(Error::Config(format!(
            "sim.measure_instructions: core {c}'s workload ended ({}) after {} instructions, before the end of its measured window at sim.warmup_instructions + sim.measure_instructions = {}; set system.loop_workloads = true to wrap its traces, or measure fewer instructions",
            self.sched.location(t),
            self.cores[c].retired,
            self.measure_end()
        )))
    }

    /// sim.warmup_instructions + sim.measure_instructions.
    pub(super) fn measure_end(&self) -> u64 {
        self.measure.as_ref().map_or(0, measure::Measure::end)
    }

    /// `os.preferred_rank = "least_delay"`: each global rank's mean DRAM read latency so far
    /// (devices in order, each channel's ranks in turn), for the thread about to start.
    pub(super) fn feed_rank_delays(&mut self) {
        let delays: Vec<f64> = self
            .mem
            .router()
            .devices
            .iter()
            .filter_map(|d| d.rank_latency.as_ref())
            .flat_map(|l| l.mean_ns())
            .collect();
        if !delays.is_empty() {
            self.os.set_rank_delays(&delays);
        }
    }

    /// The physical address of thread `t`'s `va`, or None when a fault's work was queued on
    /// core `c` first (retry the access after it). A resident page seen for the first time
    /// is made zero at once, untimed, with no fault.
    pub(super) fn translate(
        &mut self,
        c: usize,
        t: usize,
        pid: Pid,
        va: u64,
        write: bool,
    ) -> Result<Option<u64>> {
        let (pa, work) = self
            .os
            .translate_on(c as u32, pid, t as u32, va, write)
            .map_err(|e| self.err(t, e))?;
        match work {
            None => Ok(Some(pa)),
            Some(Work::Resident { frame }) => {
                self.first_touch_resident(c, frame);
                Ok(Some(pa))
            }
            Some(w) => {
                self.queue_work(c, w);
                Ok(None)
            }
        }
    }

    /// A resident page's frame seen for the first time (no fault): it becomes core `c`'s and
    /// reads zero, untimed.
    pub(super) fn first_touch_resident(&mut self, c: usize, frame: u32) {
        self.mem.hand_over(c, frame as u64 * PAGE, PAGE);
        self.mem.zero_untimed(frame as u64 * PAGE, PAGE);
    }

    /// `va` in `space` as a physical address: `translate` for a thread's virtual address.
    pub(super) fn resolve(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        va: u64,
        write: bool,
    ) -> Result<Option<u64>> {
        match space {
            Space::Virtual(pid) => self.translate(c, t, pid, va, write),
            Space::Physical => Ok(Some(va)),
        }
    }

    /// A fault's work as core `c`'s: the kernel's fault-path instructions, then the bulk job
    /// (zero a new frame, copy a shared one), if any; under a memcpy routine
    /// (`system.memcpy`), a copy-on-write copy is that routine's, run by the core.
    pub(super) fn queue_work(&mut self, c: usize, w: Work) {
        self.cores[c].kernel_instructions += self.os.fault_instructions();
        match w {
            Work::Zero { frame } | Work::Copy { dst: frame, .. } => {
                self.mem.hand_over(c, frame as u64 * PAGE, PAGE)
            }
            Work::Reuse | Work::Resident { .. } => {}
        }
        if let Work::Copy { src, dst } = w {
            let (line, nt_line) = (self.timing.line, self.mem.last_line_bytes());
            let (src, dst) = (src as u64 * PAGE, dst as u64 * PAGE);
            if let Some(routine) = self.bulk.routine(src, dst, PAGE, line, nt_line) {
                debug_assert!(self.cores[c].kernel_copy.is_none(), "one fault at a time");
                self.cores[c].kernel_copy = Some(routine);
                return;
            }
        }
        let (op, origin) = match w {
            Work::Reuse | Work::Resident { .. } => return,
            Work::Zero { frame } => (
                BulkOp {
                    kind: BulkKind::Init { value: 0 },
                    dst: frame as u64 * PAGE,
                    bytes: PAGE,
                },
                Origin::Init,
            ),
            Work::Copy { src, dst } => (
                BulkOp {
                    kind: BulkKind::Copy {
                        src: src as u64 * PAGE,
                    },
                    dst: dst as u64 * PAGE,
                    bytes: PAGE,
                },
                Origin::Copy,
            ),
        };
        self.queue_op(c, op, origin);
    }

    /// Core `c` runs operation `op` for `origin` as the bulk coordinator plans it.
    pub(super) fn queue_op(&mut self, c: usize, op: BulkOp, origin: Origin) {
        let job = self.bulk.plan(op, origin, &self.mem, self.timing.line);
        self.cores[c].jobs.push_back(job);
    }

    /// A memcpy/meminit event: translate page by page (faults queue their work first), then
    /// one physical operation per piece that stays within a page on both sides.
    pub(super) fn queue_bulk_event(
        &mut self,
        c: usize,
        t: usize,
        pid: Pid,
        ev: Event,
    ) -> Result<()> {
        let (src, dst, bytes, value) = match ev {
            Event::Memcpy { src, dst, bytes } => (Some(src), dst, bytes, 0),
            Event::Meminit { dst, bytes, value } => (None, dst, bytes, value),
            _ => unreachable!("a bulk event"),
        };
        let mut done = 0;
        while done < bytes {
            let d = dst + done;
            let mut len = (PAGE - d % PAGE).min(bytes - done);
            let src_pa = match src {
                Some(s) => {
                    let s = s + done;
                    len = len.min(PAGE - s % PAGE);
                    let (pa, work) = self
                        .os
                        .translate(pid, t as u32, s, false)
                        .map_err(|e| self.err(t, e))?;
                    match work {
                        Some(Work::Resident { frame }) => self.first_touch_resident(c, frame),
                        Some(w) => self.queue_work(c, w),
                        None => {}
                    }
                    Some(pa)
                }
                None => None,
            };
            if self.sched.renews_bulk_destinations(t) && d % PAGE == 0 && len == PAGE {
                self.os.renew_page(pid, d);
            }
            let (dst_pa, work) = match src_pa {
                Some(s) => self.os.translate_copy_destination(
                    c as u32,
                    pid,
                    t as u32,
                    d,
                    (s / PAGE) as u32,
                ),
                None => self.os.translate(pid, t as u32, d, true),
            }
            .map_err(|e| self.err(t, e))?;
            match work {
                Some(Work::Resident { frame }) => self.first_touch_resident(c, frame),
                Some(w) => self.queue_work(c, w),
                None => {}
            }
            let op = BulkOp {
                kind: match src_pa {
                    Some(s) => BulkKind::Copy { src: s },
                    None => BulkKind::Init { value },
                },
                dst: dst_pa,
                bytes: len,
            };
            let origin = if src.is_some() {
                Origin::Copy
            } else {
                Origin::Init
            };
            self.queue_op(c, op, origin);
            done += len;
        }
        Ok(())
    }
}
