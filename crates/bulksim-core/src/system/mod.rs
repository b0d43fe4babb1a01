//! The full system and its scheduler: trace-driven out-of-order cores, the cache hierarchy
//! (`cache::Hierarchy`), the OS memory manager, and the memory router with its devices below.
//! Which thread each core runs (one per initial thread; forked children run on their
//! parent's core when it waits or exits, or on an idle spare core when `system.cores` adds
//! some) is the thread scheduler's (`threads.rs`). Time is one integer clock in femtoseconds
//! on which the core clock and each device's clock are periods; the loop steps the cores every
//! core cycle while any can make progress, each device at its own cycles while it has work,
//! and otherwise jumps to the next event (a response due, the end of a bulk operation, a
//! device's next event).
//!
//! Bulk work — memcpy/meminit events, copy-on-write copies and first-touch zeroing returned by
//! the OS — blocks the core that needs it; how it executes (`system.bulk_mechanism`,
//! `system.memcpy`, dce_rowclone chunks) and the one record of the bulk operations in flight
//! that accesses wait for are the bulk coordinator's (`bulk.rs`).
//!
//! Processes share no writable memory (fork is copy-on-write), so the private caches need no
//! coherence protocol between them; a frame that changes owner is handed over instead.
//!
//! A run is bounded by `sim.max_cycles` core cycles: a compute record that alone would end
//! past it, or a run that reaches it, stops with an error naming the record(s). With
//! `sim.stop_after_dram_accesses` it ends, without error, in the core cycle in which the
//! memory devices accept that many requests (`stop_all_threads`). Long runs
//! report progress (instructions retired, simulated time) about twice a second of host time.

mod bulk;
pub mod core;
mod dram_chunks;
mod functional;
mod hybrid;
pub mod interruptions;
mod measure;
pub mod stats;
mod threads;

use self::core::{Core, CoreSettings, Job, MemPhase, Slot, NO_LINE};
use crate::bulk::{BulkKind, BulkOp};
use crate::cache::hierarchy::Completed;
use crate::cache::{Hierarchy, Origin};
use crate::config::{Config, Mechanism, SimMode, SystemMechanism, TraceBulkDestinations};
use crate::error::{Error, Result};
use crate::memory::MemoryRouter;
use crate::os::allocator::{
    ranks::{RankBits, RankLayout},
    sites_from_mapper, usable_frames_from_mapper, FrameAllocator, RankSetup, SiteFn,
    LAZY_ABOVE_FRAMES, PAGE,
};
use crate::os::{Os, Pid, RankOf, Work};
use crate::port::{Movblk, Port};
use crate::workload::memcpy::CopyStep;
use crate::workload::program::Event;
use crate::workload::source::Workload;
use bulk::{BulkCoordinator, Finished};
use hybrid::{FrontEndHold, HybridOsWork};
use interruptions::InterruptionRecorder;
use stats::{CoreStats, DeviceStats, SystemStats};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use threads::{SchedulerSetup, ThreadOutcome, ThreadScheduler};

/// The mechanism below the caches: `system.bulk_mechanism`'s, which a `bulk.mechanism` other
/// than `auto` must agree with (the user's setting is never overwritten silently).
fn below_caches(config: &Config) -> Result<Mechanism> {
    let system = config.system.bulk_mechanism;
    let below = match system {
        SystemMechanism::Cpu => Mechanism::Channel,
        SystemMechanism::McDma => Mechanism::McDma,
        SystemMechanism::Rowclone | SystemMechanism::RowcloneZi => Mechanism::Rowclone,
    };
    match config.bulk.mechanism {
        Mechanism::Auto => Ok(below),
        user if user == below => Ok(below),
        user => Err(Error::Config(format!(
            "bulk.mechanism = \"{}\" disagrees with system.bulk_mechanism = \"{}\": in the full \
             system, system.bulk_mechanism decides how bulk work executes below the caches (\"{}\" \
             here); leave bulk.mechanism at \"auto\" or set it to \"{}\"",
            user.name(),
            system.name(),
            below.name(),
            below.name()
        ))),
    }
}

/// What a store dispatched through `System::access` writes.
#[derive(Clone, Copy, Debug)]
enum StoreData {
    /// Nothing: a load.
    None,
    /// The program's own store: a word naming the thread and the store.
    Program,
    /// A copy's store: `len` bytes read now at virtual `src`.
    From { src: u64, len: u32 },
}

const EV_TAG: u8 = 0;
const EV_OP: u8 = 1;

/// Called during a run with the instructions retired and the simulated time (ns) so far:
/// at most once per `PROGRESS_PERIOD` of host time, and once at the end.
pub type Progress<'a> = &'a mut dyn FnMut(u64, f64);
pub const PROGRESS_PERIOD: std::time::Duration = std::time::Duration::from_millis(500);
/// Fewest core cycles of pure compute worth jumping over (see `fast_forward_compute`).
const FAST_FORWARD_MIN_CYCLES: u64 = 64;
/// Scheduler steps between looks at the host clock for progress.
const PROGRESS_CHECK_STEPS: u32 = 4096;

/// Frames (4 KiB) of the largest memory the replacing allocators (`clock`, `rank_clock`)
/// accept: 1 TiB, about ten seconds of start-up decoding every frame.
const MAX_REPLACING_FRAMES: usize = 1 << 28;

pub struct System {
    /// `sim.mode = "functional"`: cores and OS only (`functional`).
    functional: bool,
    /// How copies and initializations run, and the bulk work in flight (`bulk.rs`).
    bulk: BulkCoordinator,
    cores: Vec<Core>,
    /// Threads, processes and which core runs which (`threads.rs`).
    sched: ThreadScheduler,
    os: Os,
    mem: Hierarchy,
    /// Due events: (time fs, kind, id, memory device).
    events: BinaryHeap<Reverse<(u64, u8, u32, u32)>>,
    core_fs: u64,
    hit_fs: u64,
    /// The first cache level's line size (bytes).
    line: u64,
    /// `[core]`: every core's width, window and memory limits.
    settings: CoreSettings,
    skip_idle: bool,
    record_intervals: bool,
    /// The interruption metrics' records (`sim.interruption_metrics`; None: off).
    interruptions: Option<InterruptionRecorder>,
    /// `sim.max_cycles` in core cycles, and as a time (fs).
    max_cycles: u64,
    max_fs: u64,
    now: u64,
    buf: Vec<(u32, u64)>,
    /// Warm-up and measured windows per core (`sim.measure_instructions`; None: off).
    measure: Option<measure::Measure>,
    /// The hybrid memory's OS work (`hybrid.rs`; None: no `[hybrid]`).
    hybrid_os: Option<HybridOsWork>,
}

/// The address space of an access: a thread's virtual addresses, or physical ones (the
/// kernel's copy-on-write copy run by a memcpy routine, `system.memcpy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    Virtual(Pid),
    Physical,
}

/// What dispatching one event did.
enum Step {
    /// Consumed; dispatch may go on.
    Next,
    /// Not dispatched (window or MSHRs full, or waiting on work): retry it later.
    Retry(Event, bool),
    /// Consumed, and the core must stop dispatching this cycle (bulk work, thread switch).
    Stop,
}

impl System {
    /// Builds the system for `config` and the workload at `path` (a file or a directory of
    /// per-thread traces in bulksim's format).
    pub fn new(config: &Config, path: &Path) -> Result<System> {
        let workload = Workload::open(path, None, 1)?;
        Self::with_workload(config, workload, path)
    }

    /// Builds the system for `config` and an opened workload (`path` names it in errors).
    pub fn with_workload(config: &Config, workload: Workload, path: &Path) -> Result<System> {
        let mut config = config.clone();
        config.bulk.mechanism = below_caches(&config)?;
        config.validate()?;
        // The metrics need the controllers' intervals; stats list them only when asked for.
        let record_intervals = config.sim.record_intervals;
        config.sim.record_intervals |= config.sim.interruption_metrics;
        // Before anything sized by the config is allocated; one core per thread at most.
        let cores = workload.threads.len().max(config.system.cores as usize);
        crate::host_memory::check_host_memory(
            &config,
            crate::host_memory::RunKind::System { cores },
        )?;
        let mut router = MemoryRouter::new(&config)?;
        let least_delay = config.os.allocator == crate::config::AllocatorPolicy::RankClock
            && config.os.preferred_rank == crate::config::PreferredRank::LeastDelay;
        for d in &mut router.devices {
            d.channels.report_completed_ops();
            d.channels.leave_hazards_to_caller();
            if least_delay {
                d.track_rank_latency();
            }
        }
        // Frames over all devices; channel numbers run on across devices so that no two
        // devices share an allocator pool (a copy never spans devices).
        let rank_capacity_frames = config.dram.rank_capacity_mb * (1 << 20) / PAGE;
        let mut ranks_per_channel = Vec::new();
        let (frames, rank_of) = {
            let mut sites = Vec::new();
            let mut usable = Vec::new();
            let mut channel_base = 0;
            // A hybrid memory's DRAM frames are its own (`placement = "pcm_only"`).
            let hybrid_dram = router.hybrid.as_ref().map(|h| h.dram);
            for (i, d) in router.devices.iter().enumerate() {
                let excluded = hybrid_dram == Some(i);
                let reserved = d.channels.reserved_rows();
                let reserved = move |row| reserved.is_some_and(|r| r.contains(row));
                let mapper = d.channels.mapper();
                let o = &d.channels.spec().organisation;
                let frames = d.size / PAGE;
                let usable_frames = if excluded { 0 } else { frames };
                // `dram.rank_capacity_mb`: a frame beyond its rank's first frames is unusable.
                let rank_bits = RankBits::new(mapper, frames);
                let ranks = (o.channels * o.ranks) as u64;
                usable.push((mapper.clone(), reserved, usable_frames, ranks));
                // Owned, so that a lazily drawn order can keep decoding during the run.
                let site = sites_from_mapper(mapper.clone(), reserved);
                let capped = move |f: u32| {
                    let within = !excluded
                        && (rank_capacity_frames == 0
                            || rank_bits.index_in_rank(f as u64) < rank_capacity_frames);
                    within.then(|| site(f)).flatten()
                };
                sites.push((d.base / PAGE, frames, channel_base, capped));
                ranks_per_channel.extend((0..o.channels).map(|_| o.ranks));
                channel_base += o.channels;
            }
            let frame_count = (router.capacity() / PAGE) as usize;
            let site: SiteFn = std::sync::Arc::new(move |frame: u32| {
                let f = frame as u64;
                let (first, _, channels, site) = sites
                    .iter()
                    .find(|(first, count, _, _)| f >= *first && f < first + count)?;
                let mut s = site((f - first) as u32)?;
                s.channel += channels;
                Some(s)
            });
            let usable = || {
                usable
                    .iter()
                    .map(|(m, reserved, frames, ranks)| {
                        let all = usable_frames_from_mapper(m, reserved, *frames);
                        if rank_capacity_frames == 0 {
                            all
                        } else {
                            // Reserved rows within the kept frames are not subtracted here
                            // (lazily drawn memories only: above 16 GiB).
                            all.min(ranks * rank_capacity_frames.min(frames / ranks))
                        }
                    })
                    .sum()
            };
            let layout = RankLayout::new(&ranks_per_channel);
            let setup = RankSetup {
                layout: layout.clone(),
                thread_ranks: config.os.thread_ranks.clone(),
                mapping_error: config.os.mapping_error,
                preferred: config.os.preferred_rank,
            };
            let rank_site = site.clone();
            // A frame's global rank, from its first line's (channel, rank).
            let rank_of: RankOf =
                std::sync::Arc::new(move |frame| rank_site(frame).map_or(0, |s| layout.global(&s)));
            let (policy, seed) = (config.os.allocator, config.os.seed);
            if policy.replaces_pages() && frame_count > MAX_REPLACING_FRAMES {
                return Err(Error::Config(format!(
                    "os.allocator: {} decodes every frame of the memory at start-up to list the usable ones; at most {} GiB of memory is supported, this one has {} GiB (fewer dram.channels or dram.ranks, or a smaller part)",
                    if policy == crate::config::AllocatorPolicy::Clock { "clock" } else { "rank_clock" },
                    (MAX_REPLACING_FRAMES as u64 * PAGE) >> 30,
                    (frame_count as u64 * PAGE) >> 30
                )));
            }
            let frames = FrameAllocator::for_memory(
                policy,
                frame_count,
                site,
                usable,
                seed,
                LAZY_ABOVE_FRAMES,
                setup,
            );
            (frames, rank_of)
        };
        if frames.usable() == 0 && rank_capacity_frames > 0 {
            return Err(Error::Config(
                "dram.rank_capacity_mb: no usable frame is left in any rank".into(),
            ));
        }
        let ranks = ranks_per_channel.iter().sum::<u32>();
        if !config.os.thread_ranks.is_empty()
            && config.os.thread_ranks.len() != workload.threads.len()
        {
            return Err(Error::Config(format!(
                "os.thread_ranks: {} entries for {} threads; expected one global rank per thread, in workload order",
                config.os.thread_ranks.len(),
                workload.threads.len()
            )));
        }
        let mut os = Os::with_tlb_pages(
            frames,
            config.os.fault_instructions as u64,
            config.os.tlb_pages,
        );
        os.count_ranks(ranks, rank_of);
        if let Some(h) = &router.hybrid {
            os.set_external_frames(h.dram_frames(), h.placement_reserve());
        }
        let core_fs = (1e6 / config.system.core_ghz).round() as u64;
        let functional = config.sim.mode == SimMode::Functional;
        let setup = SchedulerSetup {
            time_slice: config.system.time_slice_instructions,
            loop_workloads: config.system.loop_workloads,
            allocate_bulk_destinations: config.os.trace_bulk_destinations
                == TraceBulkDestinations::Allocate,
            cores: config.system.cores as usize,
            // The functional mode keeps a child on its parent's core (`functional.rs`).
            children_to_spare_cores: !functional,
            record_intervals,
        };
        let sched = ThreadScheduler::new(workload.threads, &setup, &mut os, path)?;
        let cores: Vec<Core> = (0..sched.core_count()).map(|_| Core::new()).collect();
        let spare_cores_from = sched.spare_cores_from();
        // Every device is stepped from its first cycle: with idle skipping, that step plans
        // the next at the first refresh due, so a device refreshes on time also before its
        // first request (not in a burst of overdue REFs when it comes); without, every cycle.
        for d in &mut router.devices {
            d.next_cycle = 0;
        }
        let core_count = cores.len();
        let hybrid_os = router.hybrid.as_ref().map(HybridOsWork::new);
        let mut mem = Hierarchy::new(&config.cache.level, router, core_count, core_fs)
            .map_err(Error::Config)?;
        for l in &mut mem.levels {
            l.address_bytes = config.cache.address_bytes as u64;
        }
        // The copy engines are built here, beside the levels as configured so far.
        let bulk = BulkCoordinator::new(&config, &mem, core_fs);
        if config.memory.fixed_latency_cycles > 0 {
            mem.fixed_latency_fs = Some(config.memory.fixed_latency_cycles as u64 * core_fs);
        }
        if config.sim.stop_after_dram_accesses > 0 {
            mem.memory_accept_limit = config.sim.stop_after_dram_accesses;
        }
        if config.system.memcpy == crate::config::MemcpyMode::SoftwareNt {
            mem.set_write_combining(core_count, config.memcpy.wc_buffers as usize);
        }
        let interruptions = config.sim.interruption_metrics.then(|| {
            mem.sent_to_memory = Some(Vec::new());
            InterruptionRecorder::new(
                &mem.router,
                core_count,
                sched.thread_count(),
                mem.line_bytes(),
                mem.last_line_bytes(),
            )
        });
        Ok(System {
            functional,
            bulk,
            cores,
            sched,
            os,
            line: mem.line_bytes(),
            hit_fs: mem.levels[0].hit_fs,
            mem,
            events: BinaryHeap::new(),
            core_fs,
            settings: CoreSettings::new(&config.core),
            skip_idle: config.sim.skip_idle,
            record_intervals,
            interruptions,
            max_cycles: config.sim.max_cycles,
            max_fs: config.sim.max_cycles.saturating_mul(core_fs),
            now: 0,
            buf: Vec::new(),
            measure: measure::Measure::new(
                config.sim.warmup_instructions,
                config.sim.measure_instructions,
                spare_cores_from,
            ),
            hybrid_os,
        })
    }

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
        if self.functional {
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
            if self.now > self.max_fs {
                return Err(self.past_max_cycles());
            }
            // Cheap first look (core 0 alone) before the full one.
            if self.skip_idle
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
            let mut active = self.step_hybrid_os()?;
            if let Some(e) = self.bulk.engines_mut() {
                if e.busy() {
                    e.advance(&mut self.mem, self.now);
                    active = true;
                }
            }
            for c in 0..self.cores.len() {
                active |= self.step_core(c)?;
            }
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
            let threads_done = self.sched.all_done();
            if threads_done
                && !self.bulk.engines_busy()
                && self.events.is_empty()
                && self.mem.outbox_empty()
                && self.mem.router.is_idle()
            {
                break;
            }
            let next = if active || !self.skip_idle {
                self.now + self.core_fs
            } else {
                let mut t = self.events.peek().map_or(u64::MAX, |e| e.0 .0);
                for d in &self.mem.router.devices {
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
                if let Some(h) = &self.mem.router.hybrid {
                    t = t.min(h.next_event_fs());
                }
                if t == u64::MAX {
                    return Err(Error::Io(format!(
                        "internal error: the system stalled at {} ns with work pending",
                        self.now / 1_000_000
                    )));
                }
                t
            };
            // Next core-cycle boundary after now.
            self.now = next.div_ceil(self.core_fs).max(self.now / self.core_fs + 1) * self.core_fs;
        }
        if let Some(report) = progress.as_mut() {
            report(self.retired(), self.now as f64 / 1e6);
        }
        let wall = started.elapsed().as_secs_f64();
        Ok(self.stats(wall))
    }

    /// While every core with a thread runs a long stretch of non-memory instructions and
    /// nothing else can happen (no event, no request in the caches or memory, no device due),
    /// each core cycle is like the last: jumps over such cycles in closed form, up to the
    /// next device event and `sim.max_cycles`, as stepping would leave them. Stepping a
    /// billion-instruction compute record would cost about a hundred host seconds.
    #[inline(never)]
    fn fast_forward_compute(&mut self) {
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
            || !self.mem.router.is_idle()
        {
            return;
        }
        // Cycles at now, now + core_fs, ...: each before every device's next step and the
        // limit, and each leaving every core more than a cycle's work.
        let mut last = self.max_fs;
        for d in &self.mem.router.devices {
            last = last.min(d.next_fs().saturating_sub(1));
        }
        if let Some(h) = &self.mem.router.hybrid {
            last = last.min(h.next_event_fs().saturating_sub(1));
        }
        if last < self.now {
            return;
        }
        let mut cycles = (last - self.now) / self.core_fs + 1;
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
            let retired = self.cores[c].fast_forward_compute(cycles, width, self.now, self.core_fs);
            self.sched.retired(t, retired);
        }
        self.now += cycles * self.core_fs;
    }

    /// `sim.stop_after_dram_accesses` is reached: the run ends now, as if every running
    /// thread exited at this moment (its stall on memory, if any, counted up to now).
    fn stop_all_threads(&mut self) {
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
    fn retired(&self) -> u64 {
        self.cores.iter().map(|c| c.retired).sum()
    }

    /// The run reached `sim.max_cycles`: an error naming where each running thread is.
    #[cold]
    fn past_max_cycles(&self) -> Error {
        let running = self.sched.running_locations();
        let place = if running.is_empty() {
            "the workload".to_string()
        } else {
            running.join(", ")
        };
        Error::Trace(format!(
            "{place}: the run reached sim.max_cycles ({} core cycles) with its threads at these records; raise sim.max_cycles to run longer",
            self.max_cycles
        ))
    }

    /// Requests wait for memory: step every device at its first cycle not yet stepped from
    /// now.
    fn wake_memory(&mut self) {
        let now = self.now;
        for d in &mut self.mem.router.devices {
            d.wake(now);
        }
    }

    /// Steps every device through its cycles up to now: offers the last cache level's
    /// requests, steps the controllers, and turns completions into events.
    fn step_memory(&mut self) {
        for dev in 0..self.mem.router.devices.len() {
            loop {
                let d = &self.mem.router.devices[dev];
                if d.next_cycle == u64::MAX || d.next_cycle * d.period_fs > self.now {
                    break;
                }
                let (m, period) = (d.next_cycle, d.period_fs);
                self.mem.drain_to_memory(dev, m);
                if self.interruptions.is_some() {
                    self.count_sent_requests();
                }
                let next = self.mem.router.step(dev, m);
                self.mem.router.take_responses(dev, &mut self.buf);
                let device = &mut self.mem.router.devices[dev];
                for (id, due_fs) in self.buf.drain(..) {
                    self.events.push(Reverse((due_fs, EV_TAG, id, dev as u32)));
                }
                device.channels.take_completed_ops(&mut self.buf);
                for (id, done) in self.buf.drain(..) {
                    self.events
                        .push(Reverse((done * period, EV_OP, id, dev as u32)));
                }
                let waiting = !self.mem.memory_outbox_empty();
                let d = &mut self.mem.router.devices[dev];
                d.next_cycle = if next == u64::MAX {
                    u64::MAX
                } else {
                    next.max(m + 1)
                };
                if waiting || !self.skip_idle {
                    d.next_cycle = d.next_cycle.min(m + 1);
                }
            }
        }
    }

    /// The interruption metrics count the requests memory just took, by thread and rank.
    #[inline(never)]
    fn count_sent_requests(&mut self) {
        if let Some(rec) = &mut self.interruptions {
            let sent = self.mem.sent_to_memory.as_mut().expect("recorded");
            let sched = &self.sched;
            rec.count_sent(&self.mem.router, |c| sched.running(c), sent);
        }
    }

    /// Inner cache levels' responses into the event queue.
    fn take_due(&mut self) {
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

    fn deliver_events(&mut self) {
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

    /// One core cycle for core `c`; whether it made progress.
    fn step_core(&mut self, c: usize) -> Result<bool> {
        let retired = self.cores[c].retire(self.settings.width, self.now);
        let mut progress = retired > 0;
        if self.cores[c].stalled_since.is_none() && self.cores[c].head_ready() == Some(u64::MAX) {
            self.cores[c].stalled_since = Some(self.now);
            if let Some(rec) = &mut self.interruptions {
                let line = self.cores[c].window.front().expect("a waiting head").line;
                rec.stall_started(&self.mem.router, c, line);
            }
        }
        if let Some(t) = self.sched.running(c) {
            // A thread leaves its core only with an empty window, so every slot retired
            // here is the running thread's own.
            self.sched.retired(t, retired as u64);
        }
        if retired > 0 {
            if let Some(m) = &mut self.measure {
                if m.retired(c, self.cores[c].retired, self.now) {
                    m.take_snapshot(&self.mem.router);
                }
            }
        }
        if self.sched.running(c).is_none() {
            if self.sched.take_next(c, self.now).is_none() {
                return Ok(progress);
            }
            progress = true;
        }
        if self.now < self.cores[c].os_until_fs {
            // The OS has the core (hybrid OS time): nothing dispatches.
            return Ok(progress);
        }
        if !self.cores[c].jobs.is_empty() {
            let before = self.cores[c].jobs.len();
            let origin = self.cores[c].jobs[0].origin();
            let started = *self.cores[c].job_started_fs.get_or_insert(self.now);
            progress |= self.bulk.progress_job(
                c,
                &mut self.cores[c],
                &mut self.mem,
                self.now,
                (self.line, self.settings.width),
            )?;
            if self.cores[c].jobs.len() < before {
                // Counted to the end of this core cycle, when the core may go on.
                self.bulk
                    .count_wait(origin, self.now + self.core_fs - started);
                self.cores[c].job_started_fs = None;
            }
            if !self.cores[c].jobs.is_empty() {
                return Ok(progress);
            }
            if self.cores[c].bulk_instruction {
                self.cores[c].bulk_instruction = false;
                let ready = self.now + self.core_fs;
                self.push_slot(c, ready, NO_LINE);
            }
        }
        let mut budget = self.settings.width;
        self.cores[c].mem_ports_left = self.settings.mem_ports;
        while budget > 0 {
            let t = self.sched.running(c).expect("a running thread");
            // The fault path's kernel instructions go before the access that faulted.
            let kernel = std::mem::take(&mut self.cores[c].kernel_instructions);
            if kernel > 0 {
                let before = budget;
                if let Step::Retry(Event::Compute(left), _) =
                    self.dispatch(c, t, Event::Compute(kernel), &mut budget)?
                {
                    self.cores[c].kernel_instructions = left;
                }
                progress |= budget < before;
                if self.cores[c].kernel_instructions > 0 {
                    break;
                }
                continue;
            }
            // A copy-on-write copy run by the memcpy routine goes before the access that
            // faulted, in physical addresses.
            let kernel_step = match self.cores[c].kernel_step.take() {
                Some(s) => Some(s),
                None => self.cores[c].kernel_copy.as_mut().and_then(|m| m.next()),
            };
            if let Some(step) = kernel_step {
                match self.dispatch_copy_step(c, t, Space::Physical, step, &mut budget)? {
                    None => {
                        progress = true;
                        continue;
                    }
                    Some((step, moved)) => {
                        self.cores[c].kernel_step = Some(step);
                        progress |= moved;
                        break;
                    }
                }
            }
            self.cores[c].kernel_copy = None;
            if self
                .sched
                .slice_over(c, t, self.cores[c].at_event_boundary(), &self.os)
            {
                // At an event boundary; the thread leaves with an empty window, so every
                // slot retired on a core is its running thread's.
                if self.cores[c].window.is_empty() {
                    self.sched.preempt(c);
                    progress = true;
                }
                break;
            }
            if self.cores[c].pending.is_none() {
                let step = match self.cores[c].pending_step.take() {
                    Some(s) => Some(s),
                    None => self.sched.next_copy_step(t),
                };
                if let Some(step) = step {
                    let pid = self.sched.pid(t);
                    match self.dispatch_copy_step(c, t, Space::Virtual(pid), step, &mut budget)? {
                        None => {
                            progress = true;
                            continue;
                        }
                        Some((step, moved)) => {
                            self.cores[c].pending_step = Some(step);
                            progress |= moved;
                            break;
                        }
                    }
                }
            }
            let ev = match self.cores[c].pending.take() {
                Some(e) => e,
                None => self.sched.next_event(t, self.line)?,
            };
            match self.dispatch(c, t, ev, &mut budget)? {
                Step::Next => progress = true,
                Step::Retry(ev, moved) => {
                    self.cores[c].pending = Some(ev);
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

    fn err(&self, t: usize, e: impl std::fmt::Display) -> Error {
        self.sched.err(t, e)
    }

    fn push_slot(&mut self, c: usize, ready_fs: u64, line: u64) {
        self.cores[c].window.push_back(Slot { ready_fs, line });
    }

    /// A load, store or movblk's slot: it holds a load/store queue entry (`core.lsq`).
    fn push_mem_slot(&mut self, c: usize, ready_fs: u64, line: u64) {
        self.cores[c].window.push_mem_back(Slot { ready_fs, line });
    }

    /// Whether an access to `pa` waits: its hybrid page's migration is completing, or a bulk
    /// operation in flight writes it.
    fn blocked(&self, pa: u64) -> bool {
        self.migration_completing(pa) || self.bulk.dst_blocked(pa)
    }

    /// Whether the hybrid memory completes the migration of the page holding `pa`.
    #[inline]
    fn migration_completing(&self, pa: u64) -> bool {
        self.hybrid_os.is_some() && HybridOsWork::completing(&self.mem, pa)
    }

    /// The hybrid memory's OS work due now (`HybridOsWork::step`), with the OS time it
    /// takes from the cores' front ends; whether it did any.
    fn step_hybrid_os(&mut self) -> Result<bool> {
        let Some(work) = self.hybrid_os.as_mut() else {
            return Ok(false);
        };
        let (acted, holds) = work.step(self.now, &mut self.os, &mut self.mem, &self.sched)?;
        for &hold in holds {
            match hold {
                FrontEndHold::Core(c, ns) => self.cores[c].hold_front_end(self.now, ns),
                FrontEndHold::EveryCore(ns) => {
                    for core in &mut self.cores {
                        core.hold_front_end(self.now, ns);
                    }
                }
            }
        }
        Ok(acted)
    }

    /// Whether core `c`'s access to `pa` (a store: `write`) must wait: a migration
    /// completing, or bulk work (`BulkCoordinator::access_waits`, which counts a copy
    /// engine's stall).
    fn access_waits(&mut self, c: usize, pa: u64, write: bool) -> bool {
        self.migration_completing(pa) || self.bulk.access_waits(c, pa, write, &self.mem, self.line)
    }

    /// A `movblk` from `src` to `dst` (virtual): once every older instruction has retired,
    /// its source (as loads) and destination (as a store) are translated, the misses in
    /// flight for its lines complete, and it retires into the core's first-level engine
    /// queue (a full queue stalls dispatch).
    fn dispatch_movblk(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        src: u64,
        dst: u64,
        budget: &mut usize,
    ) -> Result<Step> {
        let ev = Event::Movblk { src, dst };
        let l = self.line;
        let Some(engines) = self.bulk.engines() else {
            return Err(self.err(
                t,
                "movblk needs a copy engine: set copy_engine.policy to ce_l1, dce, dce_nt or dce_rowclone",
            ));
        };
        if dst % l != 0 {
            return Err(self.err(
                t,
                format!("movblk dst {dst:#x} not aligned to the {l}-byte L1 line"),
            ));
        }
        if src < dst + l && dst < src + l {
            return Err(self.err(
                t,
                format!(
                    "movblk source {src:#x} and destination {dst:#x} overlap (a movblk copies {l} bytes)"
                ),
            ));
        }
        if !self.cores[c].window.is_empty() || self.cores[c].mem_ports_left == 0 {
            return Ok(Step::Retry(ev, false));
        }
        if !engines.has_room(&self.mem, c) {
            self.bulk
                .engines_mut()
                .expect("engines")
                .stats
                .fifo_full_cycles += 1;
            return Ok(Step::Retry(ev, false));
        }
        let split = l - src % l;
        let Some(src_pa) = self.resolve(c, t, space, src, false)? else {
            return Ok(Step::Retry(ev, true));
        };
        let src_next = if split < l {
            match self.resolve(c, t, space, src + split, false)? {
                Some(pa) => pa,
                None => return Ok(Step::Retry(ev, true)),
            }
        } else {
            src_pa + l
        };
        let Some(dst_pa) = self.resolve(c, t, space, dst, true)? else {
            return Ok(Step::Retry(ev, true));
        };
        let op = Movblk {
            src: src_pa,
            src_next,
            split,
            dst: dst_pa,
            bytes: l,
            core: c,
        };
        // Misses in flight for its lines complete first, and bulk operations writing them.
        let ranges = [
            (src_pa, src_pa + split),
            (src_next, src_next + (l - split)),
            (dst_pa, dst_pa + l),
        ];
        for (a, b) in ranges {
            if a < b && (self.mem.fetching_in(a, b) || self.blocked(a) || self.blocked(b - 1)) {
                return Ok(Step::Retry(ev, false));
            }
        }
        if self.bulk.chunk_source_held(dst_pa, dst_pa + l) {
            return Ok(Step::Retry(ev, false));
        }
        self.cores[c].mem_ports_left -= 1;
        let now = self.now;
        self.bulk
            .engines_mut()
            .expect("engines")
            .push(&mut self.mem, op, now);
        self.push_mem_slot(c, self.now + self.core_fs, NO_LINE);
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(Step::Next)
    }

    /// A load, or a store of `data`, at `va` through the first level, for `origin`: None
    /// when dispatched, else `Some(moved)` to retry it (`moved`: a fault's work was queued).
    #[allow(clippy::too_many_arguments)]
    fn access(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        va: u64,
        data: StoreData,
        origin: Origin,
        budget: &mut usize,
    ) -> Result<Option<bool>> {
        let write = !matches!(data, StoreData::None);
        if !self.cores[c].has_mem_slot(&self.settings) {
            return Ok(Some(false));
        }
        let Some(pa) = self.resolve(c, t, space, va, write)? else {
            return Ok(Some(true));
        };
        if self.access_waits(c, pa, write) {
            return Ok(Some(false));
        }
        // A copy's store carries the bytes its load read (within one first-level line).
        let src_pa = match data {
            StoreData::From { src, .. } => match self.resolve(c, t, space, src, false)? {
                Some(pa) => pa,
                None => return Ok(Some(true)),
            },
            _ => 0,
        };
        let line = pa / self.line;
        let found = self.mem.l1().array(c).probe(line);
        if write
            && found.is_none()
            && self.mem.l1_ref().waiting_stores(c) >= self.settings.store_queue
        {
            return Ok(Some(false));
        }
        if found.is_none() && !self.mem.request_fill(c, line, origin, write) {
            return Ok(Some(false));
        }
        let mut bytes = [0u8; 8];
        let stored: &[u8] = match data {
            StoreData::None => &[],
            StoreData::Program => {
                let store = self.sched.count_store(t);
                bytes = ((t as u64 + 1) << 48 | store).to_le_bytes();
                &bytes
            }
            StoreData::From { len, .. } => {
                let len = len as usize;
                self.mem.read_as_core(c, src_pa, &mut bytes[..len]);
                &bytes[..len]
            }
        };
        self.cores[c].mem_ports_left -= 1;
        let next_cycle = self.now + self.core_fs;
        // A fill request does not change the array: the probe still holds.
        let way = self.mem.l1().array(c).access_found(found);
        if write {
            // A program store writes its 8-byte word; a copy's store its own bytes.
            let offset = match data {
                StoreData::Program => (pa % self.line) as usize & !7,
                _ => (pa % self.line) as usize,
            };
            match way {
                Some(w) => self.mem.l1().array(c).write(w, offset, stored, origin),
                None => self.mem.add_store_bytes(c, line, offset, stored),
            }
            self.push_mem_slot(c, next_cycle, NO_LINE);
        } else if way.is_some() {
            let data_fs = self.now + self.hit_fs;
            let core = &mut self.cores[c];
            core.load_data_fs = core.load_data_fs.max(data_fs);
            self.push_mem_slot(c, data_fs, NO_LINE);
        } else {
            self.push_mem_slot(c, u64::MAX, line);
        }
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(None)
    }

    /// A non-temporal store (`system.memcpy = "software_nt"`) of the `len` bytes at `src` to
    /// `va`: as a copy's store, but around the caches (`Hierarchy::non_temporal_store`). It
    /// also waits while a fill of any line of its memory line is in flight (that fill's
    /// waiting stores are older and would land on top of its bytes). None when dispatched,
    /// else `Some(moved)` to retry it.
    #[allow(clippy::too_many_arguments)]
    fn store_non_temporal(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        va: u64,
        src: u64,
        len: u32,
        budget: &mut usize,
    ) -> Result<Option<bool>> {
        if !self.cores[c].has_mem_slot(&self.settings) {
            return Ok(Some(false));
        }
        let Some(pa) = self.resolve(c, t, space, va, true)? else {
            return Ok(Some(true));
        };
        let memory_line = self.mem.last_line_bytes();
        let start = pa - pa % memory_line;
        if self.access_waits(c, pa, true) || self.mem.fetching_in(start, start + memory_line) {
            return Ok(Some(false));
        }
        let Some(src_pa) = self.resolve(c, t, space, src, false)? else {
            return Ok(Some(true));
        };
        let mut bytes = [0u8; 8];
        let bytes = &mut bytes[..len as usize];
        self.mem.read_as_core(c, src_pa, bytes);
        if !self.mem.non_temporal_store(c, pa, bytes) {
            return Ok(Some(false));
        }
        self.cores[c].mem_ports_left -= 1;
        self.push_mem_slot(c, self.now + self.core_fs, NO_LINE);
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(None)
    }

    /// One step of a memcpy routine (`system.memcpy`): its instructions, its word loads and
    /// stores (`Origin::Copy`), its movblks.
    fn dispatch_copy_step(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        step: CopyStep,
        budget: &mut usize,
    ) -> Result<Option<(CopyStep, bool)>> {
        let full = self.cores[c].window.len() >= self.settings.window;
        let retry = |moved: Option<bool>| moved.map(|m| (step, m));
        Ok(match step {
            CopyStep::Compute(n) => match self.dispatch(c, t, Event::Compute(n), budget)? {
                Step::Retry(Event::Compute(left), moved) => Some((CopyStep::Compute(left), moved)),
                _ => None,
            },
            _ if full => Some((step, false)),
            CopyStep::LoadWord { src, .. } => {
                retry(self.access(c, t, space, src, StoreData::None, Origin::Copy, budget)?)
            }
            CopyStep::StoreWord { dst, src, bytes } => {
                let data = StoreData::From { src, len: bytes };
                retry(self.access(c, t, space, dst, data, Origin::Copy, budget)?)
            }
            CopyStep::StoreNt { dst, src, bytes } => {
                retry(self.store_non_temporal(c, t, space, dst, src, bytes, budget)?)
            }
            CopyStep::Fence => {
                self.mem.drain_write_combining(c);
                self.push_slot(c, self.now + self.core_fs, NO_LINE);
                *budget -= 1;
                None
            }
            CopyStep::Movblk { src, dst } => {
                match self.dispatch_movblk(c, t, space, src, dst, budget)? {
                    Step::Retry(_, moved) => Some((step, moved)),
                    _ => None,
                }
            }
            CopyStep::Chunk { src, dst, bytes } => {
                match self.dispatch_chunk(c, t, space, src, dst, bytes, budget)? {
                    dram_chunks::ChunkOutcome::Retry(moved) => Some((step, moved)),
                    dram_chunks::ChunkOutcome::HandedDown => None,
                    dram_chunks::ChunkOutcome::Declined { .. } => {
                        self.decline_chunk(c, t, space, step);
                        None
                    }
                }
            }
        })
    }

    fn dispatch(&mut self, c: usize, t: usize, ev: Event, budget: &mut usize) -> Result<Step> {
        let full = self.cores[c].window.len() >= self.settings.window;
        let pid = self.sched.pid(t);
        let next_cycle = self.now + self.core_fs;
        match ev {
            Event::Movblk { src, dst } => {
                self.dispatch_movblk(c, t, Space::Virtual(pid), src, dst, budget)
            }
            Event::Compute(n) => {
                let cycles = n.div_ceil(self.settings.width as u64);
                if (self.now / self.core_fs).saturating_add(cycles) > self.max_cycles {
                    return Err(self.err(
                        t,
                        format!(
                            "{n} non-memory instructions take {cycles} core cycles at core.width {}, past sim.max_cycles ({} core cycles); a corrupt count? raise sim.max_cycles to run it",
                            self.settings.width, self.max_cycles
                        ),
                    ));
                }
                let room = self.settings.window - self.cores[c].window.len();
                let k = n.min(*budget as u64).min(room as u64);
                for _ in 0..k {
                    self.push_slot(c, next_cycle, NO_LINE);
                }
                *budget -= k as usize;
                if k < n {
                    return Ok(Step::Retry(Event::Compute(n - k), k > 0));
                }
                Ok(Step::Next)
            }
            Event::Load(va) | Event::Store(va) | Event::LoadDependent(va) => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                // Pointer chasing: the address is known once every older load has its data.
                if matches!(ev, Event::LoadDependent(_)) && !self.cores[c].loads_have_data(self.now)
                {
                    return Ok(Step::Retry(ev, false));
                }
                let write = matches!(ev, Event::Store(_));
                let data = if write {
                    StoreData::Program
                } else {
                    StoreData::None
                };
                Ok(
                    match self.access(
                        c,
                        t,
                        Space::Virtual(pid),
                        va,
                        data,
                        Origin::Program,
                        budget,
                    )? {
                        Some(moved) => Step::Retry(ev, moved),
                        None => Step::Next,
                    },
                )
            }
            Event::Memcpy { src, dst, bytes } if self.bulk.routine_copies() => {
                if self.sched.renews_bulk_destinations(t) {
                    // The routine's stores then place each whole destination page anew.
                    for page in (dst.div_ceil(PAGE)..(dst + bytes) / PAGE).map(|p| p * PAGE) {
                        self.os.renew_page(pid, page);
                    }
                }
                let routine = self
                    .bulk
                    .routine(src, dst, bytes, self.line, self.mem.last_line_bytes())
                    .expect("a memcpy routine");
                self.sched.start_memcpy(t, routine);
                Ok(Step::Next)
            }
            Event::Memcpy { .. } | Event::Meminit { .. } => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                self.queue_bulk_event(c, t, pid, ev)?;
                self.cores[c].bulk_instruction = true;
                Ok(Step::Stop)
            }
            Event::Map { vaddr, bytes } | Event::MapPopulated { vaddr, bytes } => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                if matches!(ev, Event::Map { .. }) {
                    self.os.map(pid, vaddr, bytes);
                } else {
                    let frames = self
                        .os
                        .map_populated(pid, t as u32, vaddr, bytes)
                        .map_err(|e| self.err(t, e))?;
                    for frame in frames {
                        self.mem.zero_untimed(frame as u64 * PAGE, PAGE);
                    }
                }
                self.push_slot(c, next_cycle, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::MemRead(va) | Event::MemWrite(va) | Event::MemReadDependent(va) => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                // Pointer chasing: the address is known once every older load has its data.
                if matches!(ev, Event::MemReadDependent(_))
                    && !self.cores[c].loads_have_data(self.now)
                {
                    return Ok(Step::Retry(ev, false));
                }
                let Some(pa) = self.translate(c, t, pid, va, false)? else {
                    return Ok(Step::Retry(ev, true));
                };
                if self.blocked(pa) {
                    return Ok(Step::Retry(ev, false));
                }
                if matches!(ev, Event::MemWrite(_)) {
                    self.mem.write_below_caches(c, pa);
                    self.push_slot(c, next_cycle, NO_LINE);
                } else {
                    self.mem.read_below_caches(c, pa);
                    self.push_slot(c, u64::MAX, pa / self.line);
                }
                self.os.count_access(t as u32);
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::Unmap { vaddr, bytes } | Event::MapResident { vaddr, bytes } => {
                if !self.cores[c].window.is_empty() {
                    // In-flight accesses may still translate through the range.
                    return Ok(Step::Retry(ev, false));
                }
                if matches!(ev, Event::Unmap { .. }) {
                    self.os.unmap(pid, vaddr, bytes);
                } else {
                    self.os.map_resident(pid, vaddr, bytes);
                }
                self.push_slot(c, next_cycle, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::Yield(_) => {
                let window_empty = self.cores[c].window.is_empty();
                Ok(
                    match self
                        .sched
                        .thread_event(c, t, ev, self.now, window_empty, &mut self.os)?
                    {
                        ThreadOutcome::NotYet => Step::Retry(ev, false),
                        ThreadOutcome::Left => Step::Stop,
                        _ => Step::Next,
                    },
                )
            }
            Event::Exec => {
                if !self.cores[c].window.is_empty() {
                    return Ok(Step::Retry(ev, false));
                }
                self.os.exec(pid);
                self.push_slot(c, next_cycle, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::LoadRange { .. }
            | Event::StoreRange { .. }
            | Event::KernelToUser { .. }
            | Event::KernelFromUser { .. } => {
                unreachable!("next_event turns ranged accesses into line accesses")
            }
            Event::Fork(_) | Event::Spawn(_) => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                self.feed_rank_delays();
                self.sched
                    .thread_event(c, t, ev, self.now, false, &mut self.os)?;
                self.push_slot(c, next_cycle, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::Wait | Event::Exit => {
                // A thread exits once its copies are done: the engines' and the memory
                // controller's writes are its own, into frames the exit frees.
                if !self.cores[c].window.is_empty()
                    || (ev == Event::Exit && self.bulk.copies_pending(c, &self.mem))
                {
                    return Ok(Step::Retry(ev, false));
                }
                let outcome = self
                    .sched
                    .thread_event(c, t, ev, self.now, true, &mut self.os)?;
                if ev == Event::Exit {
                    self.check_measured_core_has_work(c, t)?;
                }
                Ok(if outcome == ThreadOutcome::Left {
                    Step::Stop
                } else {
                    Step::Next
                })
            }
        }
    }

    /// Thread `t` exited on core `c`: an error when `c` is measured, before the end of its
    /// window, and has no other thread to run (its workload ended too soon).
    fn check_measured_core_has_work(&self, c: usize, t: usize) -> Result<()> {
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
    fn measure_end(&self) -> u64 {
        self.measure.as_ref().map_or(0, measure::Measure::end)
    }

    /// `os.preferred_rank = "least_delay"`: each global rank's mean DRAM read latency so far
    /// (devices in order, each channel's ranks in turn), for the thread about to start.
    fn feed_rank_delays(&mut self) {
        let delays: Vec<f64> = self
            .mem
            .router
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
    fn translate(
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
    fn first_touch_resident(&mut self, c: usize, frame: u32) {
        self.mem.hand_over(c, frame as u64 * PAGE, PAGE);
        self.mem.zero_untimed(frame as u64 * PAGE, PAGE);
    }

    /// `va` in `space` as a physical address: `translate` for a thread's virtual address.
    fn resolve(
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
    fn queue_work(&mut self, c: usize, w: Work) {
        self.cores[c].kernel_instructions += self.os.fault_instructions();
        match w {
            Work::Zero { frame } | Work::Copy { dst: frame, .. } => {
                self.mem.hand_over(c, frame as u64 * PAGE, PAGE)
            }
            Work::Reuse | Work::Resident { .. } => {}
        }
        if let Work::Copy { src, dst } = w {
            let (line, nt_line) = (self.line, self.mem.last_line_bytes());
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
    fn queue_op(&mut self, c: usize, op: BulkOp, origin: Origin) {
        let job = self.bulk.plan(op, origin, &self.mem, self.line);
        self.cores[c].jobs.push_back(job);
    }

    /// A memcpy/meminit event: translate page by page (faults queue their work first), then
    /// one physical operation per piece that stays within a page on both sides.
    fn queue_bulk_event(&mut self, c: usize, t: usize, pid: Pid, ev: Event) -> Result<()> {
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

    /// Whether cache level `level` holds the line of physical address `pa` in the array
    /// core `core` uses.
    pub fn cache_holds(&self, level: usize, core: usize, pa: u64) -> bool {
        let l = &self.mem.levels[level];
        l.arrays[l.array_of[core]]
            .probe(pa / l.line_bytes)
            .is_some()
    }

    /// Writes every dirty cache line back to the memory image and empties the caches,
    /// untimed (`Hierarchy::flush_untimed`): for checks of the image after a run.
    pub fn flush_caches(&mut self) {
        self.mem.flush_untimed();
    }

    /// The cache hierarchy, for checks of what its levels hold.
    pub fn caches(&self) -> &Hierarchy {
        &self.mem
    }

    /// Bytes at `vaddr` as process `pid` sees them now (None where unmapped, or for an
    /// exited process where a frame it left was handed out again since: `Os::lookup_intact`).
    pub fn read_virtual(&self, pid: Pid, vaddr: u64, len: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        for i in 0..len as u64 {
            let pa = self.os.lookup_intact(pid, vaddr + i)?;
            let mut byte = [0u8];
            self.mem.read_as_cores(pa, &mut byte);
            out.push(byte[0]);
        }
        Some(out)
    }

    /// The functional memory image (behind the memory router).
    /// The OS (page tables, frame table, allocator).
    pub fn os(&self) -> &Os {
        &self.os
    }

    pub fn image(&self) -> &crate::image::MemoryImage {
        self.mem.router.image()
    }

    /// The hybrid memory (`[hybrid]`), for checks of its tables after a run.
    pub fn hybrid(&self) -> Option<&crate::memory::hybrid::HybridMemory> {
        self.mem.router.hybrid.as_ref()
    }

    /// The process id thread `t` ran as.
    pub fn pid_of(&self, t: usize) -> Option<Pid> {
        self.sched.pid_of(t)
    }

    fn stats(&self, wall_seconds: f64) -> SystemStats {
        let end = self.sched.end_fs();
        let cycles = end / self.core_fs;
        let instructions: u64 = self.cores.iter().map(|c| c.retired).sum();
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let mut unavailable: Vec<_> = self
            .mem
            .router
            .devices
            .iter()
            .flat_map(|d| d.channels.unavailability())
            .collect();
        let interruptions = self
            .interruptions
            .as_ref()
            .map(|rec| rec.finish(&unavailable, self.record_intervals));
        if !self.record_intervals {
            // Recorded for the metrics only.
            for u in &mut unavailable {
                u.intervals.clear();
            }
        }
        let mut devices: Vec<DeviceStats> = self
            .mem
            .router
            .devices
            .iter()
            .map(|d| DeviceStats {
                name: d.name.clone(),
                base: d.base,
                bytes: d.size,
                stats: d.channels.stats(0),
            })
            .collect();
        for d in &mut devices {
            let s = &mut d.stats;
            s.host.wall_seconds = wall_seconds;
            if wall_seconds > 0.0 {
                s.host.requests_per_wall_second = (s.reads + s.writes) as f64 / wall_seconds;
            }
        }
        let mut traffic = self.mem.traffic.clone();
        let mut energy_nj = 0.0;
        for d in &devices {
            traffic.copy_bytes += d.stats.bulk.copy_channel_bytes;
            traffic.init_bytes += d.stats.bulk.init_channel_bytes;
            energy_nj += d.stats.energy.total_nj;
        }
        if let Some(m) = &self.measure {
            for (i, d) in devices.iter_mut().enumerate() {
                let reads = self.mem.router.devices[i].channels.read_latencies();
                m.device_interval(i, &mut d.stats, reads);
            }
        }
        let memory = devices[0].stats.clone();
        // Over the measured interval when there is one: the devices' stats are, and the
        // hybrid memory's are made so below before its energy is summed.
        let mut hybrid = self.mem.router.hybrid_stats();
        if let (Some(m), Some(h)) = (&self.measure, &mut hybrid) {
            m.hybrid_interval(h);
        }
        let hybrid_energy = self
            .mem
            .router
            .hybrid
            .as_ref()
            .zip(hybrid.as_ref())
            .map(|(h, s)| {
                crate::hybrid::energy::hybrid_energy(
                    &devices[h.dram].stats,
                    &devices[h.pcm].stats,
                    &s.pact,
                    &s.art,
                )
            });
        if devices.len() == 1 {
            devices.clear();
        }
        let total = traffic.total();
        let (memcpy_ops, meminit_ops, bulk_wait) = self.bulk.counts();
        let cache = self
            .mem
            .levels
            .iter()
            .map(|l| (l.name.clone(), l.stats()))
            .collect();
        let mut cores: Vec<CoreStats> = self
            .cores
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let counts = self.sched.core_counts(k);
                let own = counts.last_exit_fs / self.core_fs;
                CoreStats {
                    instructions: c.retired,
                    core_cycles: own,
                    ipc: ratio(c.retired, own),
                    preemptions: counts.preemptions,
                    yields: counts.yields,
                    ..Default::default()
                }
            })
            .collect();
        let measurement = self.measure.as_ref().map(|m| {
            for (c, s) in cores
                .iter_mut()
                .enumerate()
                .take(self.sched.spare_cores_from())
            {
                m.core(c, s, self.core_fs);
            }
            m.stats(&cores, self.core_fs)
        });
        SystemStats {
            mechanism: self.bulk.mechanism_name().into(),
            core_ghz: 1e6 / self.core_fs as f64,
            core_cycles: cycles,
            simulated_ns: end as f64 / 1e6,
            instructions,
            ipc: ratio(instructions, cycles),
            cores,
            threads: self.sched.thread_stats(),
            traffic_bytes: total,
            fmtc: ratio(traffic.copy_bytes, total),
            bytes_per_instruction: ratio(total, instructions),
            energy_nj_per_instruction: if instructions == 0 {
                0.0
            } else {
                energy_nj / instructions as f64
            },
            traffic,
            memcpy_ops,
            meminit_ops,
            bulk_wait,
            cache,
            os: self.os.stats.clone(),
            memory,
            memory_devices: devices,
            copy_engine: self.bulk.engines().map(|e| e.stats(&self.mem)),
            write_combining: self
                .bulk
                .non_temporal()
                .then(|| self.mem.write_combining_stats.clone()),
            hybrid,
            hybrid_energy,
            measurement,
            unavailable,
            interruptions,
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
        let several = system.mem.router.devices.len() > 1;
        for d in &mut system.mem.router.devices {
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
    system.mem.router.finish_logs()?;
    Ok((stats, system))
}
