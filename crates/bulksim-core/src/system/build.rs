//! Building a `System` from a config and a workload: the memory router and its frame
//! allocator, the OS, the thread scheduler, the cache hierarchy and the bulk coordinator,
//! each checked against the config before the run starts.

use super::*;
use crate::memory::{FixedLatencyMemory, MemoryBelow};

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

/// Frames (4 KiB) of the largest memory the replacing allocators (`clock`, `rank_clock`)
/// accept: 1 TiB, about ten seconds of start-up decoding every frame.
const MAX_REPLACING_FRAMES: usize = 1 << 28;

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
        let mut router = memory_router(&config)?;
        let mut os = build_os(&config, &router, workload.threads.len())?;
        let core_fs = (1e6 / config.system.core_ghz).round() as u64;
        let setup = scheduler_setup(&config, record_intervals);
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
        let memory = memory_below(&config, router, core_fs);
        let mut mem = Hierarchy::new(&config.cache.level, memory, core_count, core_fs)
            .map_err(Error::Config)?;
        for l in &mut mem.levels {
            l.address_bytes = config.cache.address_bytes as u64;
        }
        // The copy engines are built here, beside the levels as configured so far.
        let bulk = BulkCoordinator::new(&config, &mem, core_fs);
        configure_memory_side(&config, &mut mem, core_count);
        let interruptions = config.sim.interruption_metrics.then(|| {
            mem.sent_to_memory = Some(Vec::new());
            InterruptionRecorder::new(
                mem.router(),
                core_count,
                sched.thread_count(),
                mem.line_bytes(),
                mem.last_line_bytes(),
            )
        });
        let timing = Timing {
            core_fs,
            hit_fs: mem.levels[0].hit_fs,
            line: mem.line_bytes(),
        };
        Ok(System {
            run: RunOptions::new(&config, record_intervals, core_fs),
            bulk,
            cores,
            sched,
            os,
            mem,
            timing,
            settings: CoreSettings::new(&config.core),
            interruptions,
            now: 0,
            measure: measure::Measure::new(
                config.sim.warmup_instructions,
                config.sim.measure_instructions,
                spare_cores_from,
            ),
            hybrid_os,
        })
    }
}

/// The memory router for `config`, its devices set up for the full system: completed bulk
/// operations reported, hazards left to the bulk coordinator, rank latencies tracked for
/// `os.preferred_rank = "least_delay"`.
fn memory_router(config: &Config) -> Result<MemoryRouter> {
    let mut router = MemoryRouter::new(config)?;
    let least_delay = config.os.allocator == crate::config::AllocatorPolicy::RankClock
        && config.os.preferred_rank == crate::config::PreferredRank::LeastDelay;
    for d in &mut router.devices {
        d.channels.report_completed_ops();
        d.channels.leave_hazards_to_caller();
        if least_delay {
            d.track_rank_latency();
        }
    }
    Ok(router)
}

/// The OS over every frame of `router`'s devices, with its frame allocator and each frame's
/// global rank; `threads` checks `os.thread_ranks`.
fn build_os(config: &Config, router: &MemoryRouter, threads: usize) -> Result<Os> {
    let rank_capacity_frames = config.dram.rank_capacity_mb * (1 << 20) / PAGE;
    let (frames, rank_of, ranks) = frame_allocator(config, router, rank_capacity_frames)?;
    if frames.usable() == 0 && rank_capacity_frames > 0 {
        return Err(Error::Config(
            "dram.rank_capacity_mb: no usable frame is left in any rank".into(),
        ));
    }
    if !config.os.thread_ranks.is_empty() && config.os.thread_ranks.len() != threads {
        return Err(Error::Config(format!(
            "os.thread_ranks: {} entries for {} threads; expected one global rank per thread, in workload order",
            config.os.thread_ranks.len(),
            threads
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
    Ok(os)
}

/// The frame allocator of `config.os.allocator` over `router`'s frames, each frame's global
/// rank, and the number of ranks.
fn frame_allocator(
    config: &Config,
    router: &MemoryRouter,
    rank_capacity_frames: u64,
) -> Result<(FrameAllocator, RankOf, u32)> {
    let (site, usable, ranks_per_channel) = frame_sites(router, rank_capacity_frames);
    let frame_count = (router.capacity() / PAGE) as usize;
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
            policy.name(),
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
    Ok((frames, rank_of, ranks_per_channel.iter().sum()))
}

/// Where each frame of `router`'s devices lies (its channel numbered on across devices, so
/// that no two devices share an allocator pool: a copy never spans devices), how many
/// frames are usable (counted only when asked: a lazily drawn memory's decoding is long),
/// and the ranks of each channel. A hybrid memory's DRAM frames are its own
/// (`placement = "pcm_only"`); with `dram.rank_capacity_mb` a frame beyond its rank's first
/// `rank_capacity_frames` is unusable.
fn frame_sites(
    router: &MemoryRouter,
    rank_capacity_frames: u64,
) -> (SiteFn, impl FnOnce() -> u64, Vec<u32>) {
    let mut sites = Vec::new();
    let mut usable = Vec::new();
    let mut ranks_per_channel = Vec::new();
    let mut channel_base = 0;
    let hybrid_dram = router.hybrid.as_ref().map(|h| h.dram);
    for (i, d) in router.devices.iter().enumerate() {
        let excluded = hybrid_dram == Some(i);
        let reserved = d.channels.reserved_rows();
        let reserved = move |row| reserved.is_some_and(|r| r.contains(row));
        let mapper = d.channels.mapper();
        let o = &d.channels.spec().organisation;
        let frames = d.size / PAGE;
        let usable_frames = if excluded { 0 } else { frames };
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
    let site: SiteFn = std::sync::Arc::new(move |frame: u32| {
        let f = frame as u64;
        let (first, _, channels, site) = sites
            .iter()
            .find(|(first, count, _, _)| f >= *first && f < first + count)?;
        let mut s = site((f - first) as u32)?;
        s.channel += channels;
        Some(s)
    });
    let usable = move || {
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
    (site, usable, ranks_per_channel)
}

/// The level below the caches: the router's devices, or a fixed-latency memory in front of
/// them (`memory.fixed_latency_cycles`, in core cycles of `core_fs`).
fn memory_below(config: &Config, router: MemoryRouter, core_fs: u64) -> MemoryBelow {
    match config.memory.fixed_latency_cycles {
        0 => MemoryBelow::new(router, None),
        cycles => MemoryBelow::new(
            router,
            Some(FixedLatencyMemory::new(cycles as u64 * core_fs)),
        ),
    }
}

/// The memory side's settings from `config`: the run's end after
/// `sim.stop_after_dram_accesses`, and write-combining buffers for
/// `system.memcpy = "software_nt"`.
fn configure_memory_side(config: &Config, mem: &mut Hierarchy, core_count: usize) {
    if config.sim.stop_after_dram_accesses > 0 {
        mem.memory_accept_limit = config.sim.stop_after_dram_accesses;
    }
    if config.system.memcpy == crate::config::MemcpyMode::SoftwareNt {
        mem.set_write_combining(core_count, config.memcpy.wc_buffers as usize);
    }
}

/// The thread scheduler's settings from `config` (`record_intervals`: the user's
/// `sim.record_intervals`).
fn scheduler_setup(config: &Config, record_intervals: bool) -> SchedulerSetup {
    SchedulerSetup {
        time_slice: config.system.time_slice_instructions,
        loop_workloads: config.system.loop_workloads,
        allocate_bulk_destinations: config.os.trace_bulk_destinations
            == TraceBulkDestinations::Allocate,
        cores: config.system.cores as usize,
        // The functional mode keeps a child on its parent's core (`functional.rs`).
        children_to_spare_cores: config.sim.mode != SimMode::Functional,
        record_intervals,
    }
}

impl RunOptions {
    /// The run's options from `config` (`record_intervals`: the user's
    /// `sim.record_intervals`; `core_fs`: one core cycle in fs).
    fn new(config: &Config, record_intervals: bool, core_fs: u64) -> RunOptions {
        RunOptions {
            functional: config.sim.mode == SimMode::Functional,
            skip_idle: config.sim.skip_idle,
            record_intervals,
            max_cycles: config.sim.max_cycles,
            max_fs: config.sim.max_cycles.saturating_mul(core_fs),
        }
    }
}
