//! The run loop of the timing mode: one scheduler over one femtosecond time line that
//! steps the memory devices, delivers due memory responses, steps the components due before
//! the cores (`schedule.rs`) and the cores, and otherwise jumps to the next moment anything
//! can change; and the `run_workload*` entry points that build a system and run it.

use super::*;

/// Fewest core cycles of pure compute worth jumping over (see `fast_forward_compute`).
pub(super) const FAST_FORWARD_MIN_CYCLES: u64 = 64;
/// Scheduler steps between looks at the host clock for progress.
pub(super) const PROGRESS_CHECK_STEPS: u32 = 4096;

impl System {
    /// Runs the workload to the end: one scheduler over one femtosecond time line. Each
    /// memory device is stepped at its own cycles when it has work; the cores are stepped
    /// every core cycle while any can make progress; otherwise time jumps to the earliest
    /// moment anything can change (a response due, a device's next event, a core's window
    /// head). With `sim.skip_idle = false` every core cycle and every memory cycle is visited
    /// instead; both give identical stats (tested).
    pub fn run(&mut self) -> Result<SystemStats> {
        self.run_with_progress(None, PROGRESS_PERIOD)
    }

    /// `run`, calling `progress` at most once per `period` of host time and once at the end.
    pub fn run_with_progress(
        &mut self,
        mut progress: Option<Progress>,
        period: std::time::Duration,
    ) -> Result<SystemStats> {
        if self.run.functional {
            return self.run_functional(progress, period);
        }
        let started = std::time::Instant::now();
        let mut reported = started;
        let mut steps_to_check = PROGRESS_CHECK_STEPS;
        loop {
            if let Some(report) = progress.as_mut() {
                steps_to_check -= 1;
                if steps_to_check == 0 {
                    steps_to_check = PROGRESS_CHECK_STEPS;
                    if reported.elapsed() >= period {
                        reported = std::time::Instant::now();
                        report(self.retired(), self.now as f64 / 1e6);
                    }
                }
            }
            if self.now > self.run.max_fs {
                return Err(self.past_max_cycles());
            }
            // Cheap first look (core 0 alone) before the full one.
            if self.run.skip_idle
                && self.nothing_due()
                && (self.sched.running(0).is_none()
                    || matches!(self.cores[0].pending, Some(Event::Compute(n)) if n > FAST_FORWARD_MIN_CYCLES))
            {
                self.fast_forward_compute();
            }
            self.mem.now = self.now;
            self.step_memory();
            if self.mem.memory_accepted >= self.mem.memory_accept_limit {
                self.stop_all_threads();
                break;
            }
            self.deliver_events();
            let mut active = self.step_components()?;
            if self
                .measure
                .as_ref()
                .is_some_and(measure::Measure::finished)
            {
                self.stop_all_threads();
                break;
            }
            if self.mem.pump(self.now) {
                active = true;
                self.take_due();
            } else if self.mem.responses_pending() {
                self.take_due();
            }
            if self.mem.take_memory_arrivals() {
                self.wake_memory();
            }
            if self.all_done() {
                break;
            }
            let next = if active || !self.run.skip_idle {
                self.now + self.timing.core_fs
            } else {
                self.next_change_fs()?
            };
            // Next core-cycle boundary after now.
            self.now = next
                .div_ceil(self.timing.core_fs)
                .max(self.now / self.timing.core_fs + 1)
                * self.timing.core_fs;
        }
        if let Some(report) = progress.as_mut() {
            report(self.retired(), self.now as f64 / 1e6);
        }
        let wall = started.elapsed().as_secs_f64();
        Ok(self.stats(wall))
    }

    /// One core cycle of the components: each component stepped before the cores that is
    /// due now (`System::split_stepped`: the hybrid OS work, the copy engines), then every
    /// core in order; whether any made progress. Always inlined: it is the loop's body, called
    /// once per core cycle (a call here cost about 1% of host instructions under callgrind).
    #[inline(always)]
    fn step_components(&mut self) -> Result<bool> {
        let mut active = false;
        let (stepped, mut world) = self.split_stepped();
        for component in stepped.into_iter().flatten() {
            if component.due(&world) {
                active |= component.step(&mut world)?;
            }
        }
        let (cores, mut env) = self.split_cores();
        for (c, core) in cores.iter_mut().enumerate() {
            active |= core.step(c, &mut env)?;
        }
        Ok(active)
    }

    /// No response and no finished bulk operation is held for delivery.
    #[inline]
    fn nothing_due(&self) -> bool {
        self.mem.inbox.is_empty() && self.bulk.next_finished_fs() == u64::MAX
    }

    /// Every thread has ended and nothing is left in flight: the run is over.
    #[inline]
    fn all_done(&self) -> bool {
        self.sched.all_done() && self.components_quiet()
    }

    /// With nothing active, the earliest moment anything can change (fs): the earliest next
    /// work of any component (`schedule.rs`).
    fn next_change_fs(&self) -> Result<u64> {
        let t = self.next_work_fs();
        if t == u64::MAX {
            return Err(Error::Io(format!(
                "internal error: the system stalled at {} ns with work pending",
                self.now / 1_000_000
            )));
        }
        Ok(t)
    }

    /// While every core with a thread runs a long stretch of non-memory instructions and
    /// nothing else can happen (no event, no request in the caches or memory, no device due),
    /// each core cycle is like the last: jumps over such cycles in closed form, up to the
    /// next device event and `sim.max_cycles`, as stepping would leave them. Stepping a
    /// billion-instruction compute record would cost about a hundred host seconds.
    #[inline(never)]
    pub(super) fn fast_forward_compute(&mut self) {
        let window = self.settings.window;
        let width = self.settings.width;
        if width > window {
            return;
        }
        let horizon = FAST_FORWARD_MIN_CYCLES + (window / width) as u64 + 1;
        let mut any = false;
        for (c, core) in self.cores.iter().enumerate() {
            if core.os_until_fs > self.now {
                return;
            }
            if self.sched.running(c).is_none() {
                if self.sched.has_waiting(c) || !core.window.is_empty() {
                    return;
                }
                continue;
            }
            if !core.computing_steadily(width, self.now, horizon) {
                return;
            }
            any = true;
        }
        if !any || !self.components_quiet() {
            return;
        }
        // Cycles at now, now + core_fs, ...: each before every component's next work (a
        // device's next step, the hybrid memory's next event) and the limit, and each leaving
        // every core more than a cycle's work.
        let mut last = self.run.max_fs;
        for c in self.components() {
            last = last.min(c.next_work_fs(self.now).saturating_sub(1));
        }
        if last < self.now {
            return;
        }
        let mut cycles = (last - self.now) / self.timing.core_fs + 1;
        for (c, core) in self.cores.iter().enumerate() {
            if let Some(Event::Compute(left)) = core.pending {
                cycles = cycles.min((left - 1) / width as u64);
            }
            // A measured core's next milestone is passed by stepping, in its own cycle.
            if let Some(target) = self.measure.as_ref().and_then(|m| m.next_milestone(c)) {
                cycles = cycles.min(target.saturating_sub(core.retired + 1) / width as u64);
            }
        }
        if cycles < horizon {
            return;
        }
        for c in 0..self.cores.len() {
            let Some(t) = self.sched.running(c) else {
                continue;
            };
            let retired =
                self.cores[c].fast_forward_compute(cycles, width, self.now, self.timing.core_fs);
            self.sched.retired(t, retired);
        }
        self.now += cycles * self.timing.core_fs;
    }

    /// `sim.stop_after_dram_accesses` is reached: the run ends now, as if every running
    /// thread exited at this moment (its stall on memory, if any, counted up to now).
    pub(super) fn stop_all_threads(&mut self) {
        let now = self.now;
        for c in 0..self.cores.len() {
            if let (Some(since), Some(t)) =
                (self.cores[c].stalled_since.take(), self.sched.running(c))
            {
                self.sched.stalled(t, since, now);
            }
        }
        self.sched.stop_all(now);
    }

    /// Instructions retired so far, over all cores.
    pub(super) fn retired(&self) -> u64 {
        self.cores.iter().map(|c| c.retired).sum()
    }

    /// The run reached `sim.max_cycles`: an error naming where each running thread is.
    #[cold]
    pub(super) fn past_max_cycles(&self) -> Error {
        let running = self.sched.running_locations();
        let place = if running.is_empty() {
            "the workload".to_string()
        } else {
            running.join(", ")
        };
        Error::Trace(format!(
            "{place}: the run reached sim.max_cycles ({} core cycles) with its threads at these records; raise sim.max_cycles to run longer",
            self.run.max_cycles
        ))
    }

    /// Requests wait for memory: step every device at its first cycle not yet stepped from
    /// now.
    pub(super) fn wake_memory(&mut self) {
        let now = self.now;
        for d in &mut self.mem.router_mut().devices {
            d.wake(now);
        }
    }

    /// Steps every device through its cycles up to now: offers the last cache level's
    /// requests, steps the controllers, and hands what each finished back to whom it is for.
    pub(super) fn step_memory(&mut self) {
        for dev in 0..self.mem.router().devices.len() {
            loop {
                let d = &self.mem.router().devices[dev];
                if d.next_cycle == u64::MAX || d.next_cycle * d.period_fs > self.now {
                    break;
                }
                let (m, period) = (d.next_cycle, d.period_fs);
                let retry_fs = self.mem.drain_to_memory(dev, m);
                if self.interruptions.is_some() {
                    self.count_sent_requests();
                }
                let next = self.mem.router_mut().step(dev, m);
                // What the device finished goes back to whom it is for: responses to the
                // hierarchy's inbox, bulk operations to the bulk coordinator.
                self.mem.collect_device_responses(dev);
                self.bulk.collect_finished_ops(&mut self.mem, dev, period);
                let d = &mut self.mem.router_mut().devices[dev];
                d.next_cycle = if next == u64::MAX {
                    u64::MAX
                } else {
                    next.max(m + 1)
                };
                if retry_fs != u64::MAX {
                    // A refused request may be taken then: offer it again.
                    d.next_cycle = d.next_cycle.min(retry_fs.div_ceil(period).max(m + 1));
                }
                if !self.run.skip_idle {
                    d.next_cycle = d.next_cycle.min(m + 1);
                }
            }
        }
    }

    /// The interruption metrics count the requests memory just took, by thread and rank.
    #[inline(never)]
    pub(super) fn count_sent_requests(&mut self) {
        if let Some(rec) = &mut self.interruptions {
            let sent = self.mem.sent_to_memory.as_mut().expect("recorded");
            let sched = &self.sched;
            rec.count_sent(self.mem.memory.router(), |c| sched.running(c), sent);
        }
    }

    /// Inner cache levels' responses into the hierarchy's inbox.
    #[inline]
    pub(super) fn take_due(&mut self) {
        self.mem.collect_responses();
    }

    /// Delivers everything due by now, in one order: by time, a response before a bulk
    /// operation finished at the same time, then by id and source. A response goes through
    /// the hierarchy (`Hierarchy::complete`) to the core it is for; a finished operation
    /// through the bulk coordinator to the core whose job waits for it. A response delivered
    /// may release inner levels' responses due now, which are delivered in turn.
    pub(super) fn deliver_events(&mut self) {
        loop {
            let response = self.mem.inbox.peek_due(self.now);
            let op = self.bulk.peek_finished(self.now);
            match (response, op) {
                (Some((t, _, _)), Some((op_t, _, _))) if op_t < t => self.deliver_finished_op(),
                (Some((t, id, _)), _) => {
                    self.mem.inbox.pop();
                    self.deliver_response(id, t);
                    self.take_due();
                }
                (None, Some(_)) => self.deliver_finished_op(),
                (None, None) => break,
            }
        }
    }

    /// The first finished bulk operation reaches the core whose job waits for it.
    fn deliver_finished_op(&mut self) {
        if let Finished::Job(core) = self.bulk.take_finished() {
            self.cores[core].bulk_op_done();
        }
    }

    /// Request `id`'s response, due at `t`, through the hierarchy to its core.
    #[inline]
    fn deliver_response(&mut self, id: u32, t: u64) {
        match self.mem.complete(id, t) {
            Completed::Line { core, line } => self.cores[core].fill_arrived(
                core,
                line,
                t,
                &mut self.sched,
                self.interruptions.as_mut(),
            ),
            Completed::Writeback { core } => self.cores[core].writeback_done(),
            Completed::Inner => {}
        }
    }
}

/// Runs the workload at `path` under `config`.
pub fn run_workload(config: &Config, path: &Path) -> Result<(SystemStats, System)> {
    run_workload_logged(config, path, None)
}

/// `run_workload`, writing every DRAM command issued to `command_log` (CSV, see
/// `device::command_log`) when given.
pub fn run_workload_logged(
    config: &Config,
    path: &Path,
    command_log: Option<&Path>,
) -> Result<(SystemStats, System)> {
    run_workload_with_progress(config, path, command_log, None)
}

/// `run_workload_logged`, reporting progress (see `Progress`) when given.
pub fn run_workload_with_progress(
    config: &Config,
    path: &Path,
    command_log: Option<&Path>,
    progress: Option<Progress>,
) -> Result<(SystemStats, System)> {
    let workload = Workload::open(path, None, 1)?;
    run_opened_workload(config, workload, path, command_log, progress)
}

/// Runs an opened workload (any format, any number of copies) under `config`, logging
/// commands and reporting progress like `run_workload_with_progress`.
pub fn run_opened_workload(
    config: &Config,
    workload: Workload,
    path: &Path,
    command_log: Option<&Path>,
    progress: Option<Progress>,
) -> Result<(SystemStats, System)> {
    let mut system = System::with_workload(config, workload, path)?;
    if let Some(log) = command_log {
        let several = system.mem.router().devices.len() > 1;
        for d in &mut system.mem.router_mut().devices {
            // Several devices: one log each, named after the device.
            let path = if several {
                log.with_extension(format!("{}.csv", d.name))
            } else {
                log.to_path_buf()
            };
            d.channels.log_commands_to(&path)?;
        }
    }
    let stats = system.run_with_progress(progress, PROGRESS_PERIOD)?;
    system.mem.router_mut().finish_logs()?;
    Ok((stats, system))
}
