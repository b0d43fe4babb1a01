//! What a core asks of the OS and the bulk coordinator when an access faults or a bulk
//! event arrives: addresses resolved in their space (a fault's work queued on the core
//! first), the fault's work as kernel instructions and a bulk job or a kernel copy, bulk
//! events queued as operations page by page, and the measured window's check at exit.

use super::dispatch::Space;
use super::env::CoreEnv;
use super::Core;
use crate::bulk::{BulkKind, BulkOp};
use crate::cache::Origin;
use crate::error::{Error, Result};
use crate::os::allocator::PAGE;
use crate::os::{Pid, Work};
use crate::workload::program::Event;

impl Core {
    /// Thread `t` exited on core `c`: an error when `c` is measured, before the end of its
    /// window, and has no other thread to run (its workload ended too soon).
    pub(super) fn check_measured_core_has_work(
        &self,
        c: usize,
        t: usize,
        env: &CoreEnv,
    ) -> Result<()> {
        let Some(m) = &env.measure else {
            return Ok(());
        };
        if !m.pending(c) || env.sched.has_waiting(c) {
            return Ok(());
        }
        Err(Error::Config(format!(
            "sim.measure_instructions: core {c}'s workload ended ({}) after {} instructions, before the end of its measured window at sim.warmup_instructions + sim.measure_instructions = {}; set system.loop_workloads = true to wrap its traces, or measure fewer instructions",
            env.sched.location(t),
            self.retired,
            m.end()
        )))
    }

    /// `va` in `space` as a physical address, or None when a fault's work was queued on
    /// core `c` first (retry the access after it): `CoreEnv::translate` for a thread's
    /// virtual address.
    #[inline]
    pub(super) fn resolve(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
        space: Space,
        va: u64,
        write: bool,
    ) -> Result<Option<u64>> {
        let Space::Virtual(pid) = space else {
            return Ok(Some(va));
        };
        match env.translate(c, t, pid, va, write)? {
            (pa, None) => Ok(Some(pa)),
            (_, Some(w)) => {
                self.queue_work(c, env, w);
                Ok(None)
            }
        }
    }

    /// A fault's work as core `c`'s: the kernel's fault-path instructions, then the bulk job
    /// (zero a new frame, copy a shared one), if any; under a memcpy routine
    /// (`system.memcpy`), a copy-on-write copy is that routine's, run by the core.
    pub(super) fn queue_work(&mut self, c: usize, env: &mut CoreEnv, w: Work) {
        self.kernel_instructions += env.os.fault_instructions();
        match w {
            Work::Zero { frame } | Work::Copy { dst: frame, .. } => {
                env.mem.hand_over(c, frame as u64 * PAGE, PAGE)
            }
            Work::Reuse | Work::Resident { .. } => {}
        }
        if let Work::Copy { src, dst } = w {
            let (line, nt_line) = (env.timing.line, env.mem.last_line_bytes());
            let (src, dst) = (src as u64 * PAGE, dst as u64 * PAGE);
            if let Some(routine) = env.bulk.routine(src, dst, PAGE, line, nt_line) {
                debug_assert!(self.kernel_copy.is_none(), "one fault at a time");
                self.kernel_copy = Some(routine);
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
        self.queue_op(env, op, origin);
    }

    /// Core `c` runs operation `op` for `origin` as the bulk coordinator plans it.
    pub(super) fn queue_op(&mut self, env: &mut CoreEnv, op: BulkOp, origin: Origin) {
        let job = env.bulk.plan(op, origin, env.mem, env.timing.line);
        self.jobs.push_back(job);
    }

    /// A memcpy/meminit event: translate page by page (faults queue their work first), then
    /// one physical operation per piece that stays within a page on both sides.
    pub(super) fn queue_bulk_event(
        &mut self,
        c: usize,
        t: usize,
        env: &mut CoreEnv,
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
                    let (pa, work) = env
                        .os
                        .translate(pid, t as u32, s, false)
                        .map_err(|e| env.err(t, e))?;
                    match work {
                        Some(Work::Resident { frame }) => env.first_touch_resident(c, frame),
                        Some(w) => self.queue_work(c, env, w),
                        None => {}
                    }
                    Some(pa)
                }
                None => None,
            };
            if env.sched.renews_bulk_destinations(t) && d % PAGE == 0 && len == PAGE {
                env.os.renew_page(pid, d);
            }
            let (dst_pa, work) = match src_pa {
                Some(s) => {
                    env.os
                        .translate_copy_destination(c as u32, pid, t as u32, d, (s / PAGE) as u32)
                }
                None => env.os.translate(pid, t as u32, d, true),
            }
            .map_err(|e| env.err(t, e))?;
            match work {
                Some(Work::Resident { frame }) => env.first_touch_resident(c, frame),
                Some(w) => self.queue_work(c, env, w),
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
            self.queue_op(env, op, origin);
            done += len;
        }
        Ok(())
    }
}
