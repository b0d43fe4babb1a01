//! The run loop of the timing mode: one scheduler over one femtosecond time line that
//! steps the memory devices, delivers due memory responses, steps the hybrid OS work, the
//! copy engines and the cores, and otherwise jumps to the next moment anything can change;
//! and the `run_workload*` entry points that build a system and run it.

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
                && self.events.is_empty()
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
            if !self.mem.memory_outbox_empty() {
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

    /// One core cycle of the components: the hybrid OS work, the copy engines, then every
    /// core in order; whether any made progress. Always inlined: it is the loop's body, called
    /// once per core cycle (a call here cost about 1% of host instructions under callgrind).
    #[inline(always)]
    fn step_components(&mut self) -> Result<bool> {
        let mut active = self.step_hybrid_os()?;
        if let Some(e) = self.bulk.engines_mut() {
            if e.busy() {
                e.advance(&mut self.mem, self.now);
                active = true;
            }
        }
        let (cores, mut env) = self.split_cores();
        for (c, core) in cores.iter_mut().enumerate() {
            active |= core.step(c, &mut env)?;
        }
        Ok(active)
    }

    /// Every thread has ended and nothing is left in flight: the run is over.
    #[inline]
    fn all_done(&self) -> bool {
        self.sched.all_done()
            && !self.bulk.engines_busy()
            && self.events.is_empty()
            && self.mem.outbox_empty()
            && self.mem.router().is_idle()
    }

    /// With nothing active, the earliest moment anything can change (fs): a response due,
    /// a device's next step, a core's window head or the end of its OS time, a departure
    /// from the caches, the hybrid memory's next event.
    fn next_change_fs(&self) -> Result<u64> {
        let mut t = self.events.peek().map_or(u64::MAX, |e| e.0 .0);
        for d in &self.mem.router().devices {
            t = t.min(d.next_fs());
        }
        for c in &self.cores {
            if let Some(h) = c.head_ready() {
                t = t.min(h);
            }
            if c.os_until_fs > self.now {
                t = t.min(c.os_until_fs);
            }
        }
        t = t.min(self.mem.next_departure());
        if let Some(h) = &self.mem.router().hybrid {
            t = t.min(h.next_event_fs());
        }
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
        if !any
            || self.bulk.engines_busy()
            || !self.bulk.idle()
            || self.mem.responses_pending()
            || !self.mem.outbox_empty()
            || !self.mem.router().is_idle()
        {
            return;
        }
        // Cycles at now, now + core_fs, ...: each before every device's next step and the
        // limit, and each leaving every core more than a cycle's work.
        let mut last = self.run.max_fs;
        for d in &self.mem.router().devices {
            last = last.min(d.next_fs().saturating_sub(1));
        }
        if let Some(h) = &self.mem.router().hybrid {
            last = last.min(h.next_event_fs().saturating_sub(1));
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
    /// requests, steps the controllers, and turns completions into events.
    pub(super) fn step_memory(&mut self) {
        for dev in 0..self.mem.router().devices.len() {
            loop {
                let d = &self.mem.router().devices[dev];
                if d.next_cycle == u64::MAX || d.next_cycle * d.period_fs > self.now {
                    break;
                }
                let (m, period) = (d.next_cycle, d.period_fs);
                self.mem.drain_to_memory(dev, m);
                if self.interruptions.is_some() {
                    self.count_sent_requests();
                }
                let next = self.mem.router_mut().step(dev, m);
                self.mem.router_mut().take_responses(dev, &mut self.buf);
                let device = &mut self.mem.router_mut().devices[dev];
                for (id, due_fs) in self.buf.drain(..) {
                    self.events.push(Reverse((due_fs, EV_TAG, id, dev as u32)));
                }
                device.channels.take_completed_ops(&mut self.buf);
                for (id, done) in self.buf.drain(..) {
                    self.events
                        .push(Reverse((done * period, EV_OP, id, dev as u32)));
                }
                let waiting = !self.mem.memory_outbox_empty();
                let d = &mut self.mem.router_mut().devices[dev];
                d.next_cycle = if next == u64::MAX {
                    u64::MAX
                } else {
                    next.max(m + 1)
                };
                if waiting || !self.run.skip_idle {
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

    /// Inner cache levels' responses into the event queue.
    pub(super) fn take_due(&mut self) {
        self.mem.take_memory_responses(&mut self.buf);
        for (id, t) in self.buf.drain(..) {
            self.events.push(Reverse((t, EV_TAG, id, 0)));
        }
        for level in 1..self.mem.levels.len() {
            self.mem.port(level).take_responses(&mut self.buf);
            for (id, t) in self.buf.drain(..) {
                self.events.push(Reverse((t, EV_TAG, id, 0)));
            }
        }
    }

    pub(super) fn deliver_events(&mut self) {
        while let Some(&Reverse((t, kind, id, dev))) = self.events.peek() {
            if t > self.now {
                break;
            }
            self.events.pop();
            if kind == EV_OP {
                let Finished::Job(core) = self.bulk.completed(dev as usize, id) else {
                    continue;
                };
                if let Some(Job::Memory { phase, .. }) = self.cores[core].jobs.front_mut() {
                    *phase = MemPhase::Done;
                }
                continue;
            }
            match self.mem.complete(id, t) {
                Completed::Line { core, line } => {
                    if let (Some(since), Some(th)) =
                        (self.cores[core].stalled_since, self.sched.running(core))
                    {
                        if self.cores[core]
                            .window
                            .front()
                            .is_some_and(|s| s.line == line)
                        {
                            // The stall on memory ends when the head's line arrives.
                            self.sched.stalled(th, since, t);
                            if let Some(rec) = &mut self.interruptions {
                                rec.stall_ended(core, th, line, since, t);
                            }
                            self.cores[core].stalled_since = None;
                        }
                    }
                    if let Some(rec) = &mut self.interruptions {
                        rec.line_arrived(core, line);
                    }
                    self.cores[core].line_arrived(line, t)
                }
                Completed::Writeback { core } => {
                    if let Some(Job::Memory {
                        writebacks_pending, ..
                    }) = self.cores[core].jobs.front_mut()
                    {
                        *writebacks_pending -= 1;
                    }
                }
                Completed::Inner => {}
            }
            self.take_due();
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
