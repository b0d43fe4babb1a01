//! The top loop: feeds requests from a source into the memory system in order (none before its
//! cycle, head-of-line blocking when a queue is full) and steps the controllers. With idle
//! skipping on, it jumps straight to the next cycle at which anything can change; with it off,
//! it visits every cycle. Both give identical stats (tested). The run ends when every request,
//! writes included, has been served by DRAM, and every bulk operation has completed.
//!
//! A long idle gap before the next record costs no host time: the refreshes the idle channels
//! owe in it are booked in closed form (`MemorySystem::skip_idle_refreshes`). A record whose
//! cycle lies beyond `sim.max_cycles` (a corrupt cycle) stops the run with an error naming it.

use crate::bulk::BulkOp;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::memory::router::MovedBytes;
use crate::memory::{MemoryRouter, MemorySystem};
use crate::request::RequestKind;
use crate::stats::Stats;
use crate::workload::trace::{RequestSource, TraceOp};
use std::path::Path;
use std::time::Instant;

/// Called every `PROGRESS_EVERY` requests with the number offered so far.
pub type Progress<'a> = &'a mut dyn FnMut(u64);
pub const PROGRESS_EVERY: u64 = 1 << 16;

pub fn run<S: RequestSource>(
    config: &Config,
    source: &mut S,
    command_log: Option<&Path>,
    progress: Option<Progress>,
) -> Result<Stats> {
    run_keeping_memory(config, source, command_log, progress).map(|(stats, _)| stats)
}

/// `run`, also returning the memory at the end (its image holds the bytes bulk operations
/// moved). Trace mode drives one memory device, in its own cycles.
pub fn run_keeping_memory<S: RequestSource>(
    config: &Config,
    source: &mut S,
    command_log: Option<&Path>,
    mut progress: Option<Progress>,
) -> Result<(Stats, MemoryRouter)> {
    let started = Instant::now();
    let mut router = replay_router(config, command_log)?;
    let (skip_idle, max_cycles) = (config.sim.skip_idle, config.sim.max_cycles);
    let mut now = 0u64;
    // A bulk head's operation; `head` holds only its cycle.
    let mut bulk = None;
    let mut head = next_head(source, max_cycles, &mut bulk)?;
    let (mut offered, mut stall_cycles) = (0u64, 0u64);
    // One device: the replay loop owns its channels while it runs (a local the compiler
    // keeps close), the router's image takes the bytes they move; both go back at the end.
    let mut device = router.devices.pop().expect("one device");
    let mut mem = device.channels;
    let mut moved = router.moved_bytes(device.base);
    loop {
        let mut blocked = false;
        while let Some(rec) = head {
            if rec.cycle > now {
                break;
            }
            match rec.access {
                Some((kind, addr)) => {
                    if !mem.try_enqueue(kind, addr, now) {
                        // Only ticks can make room: step them in a loop of their own.
                        now = enqueue_when_room(
                            &mut mem,
                            &mut moved,
                            kind,
                            addr,
                            now,
                            skip_idle,
                            &mut stall_cycles,
                        )?;
                    }
                }
                None => {
                    let op = bulk.expect("a bulk head's operation");
                    if !offer_bulk(&mut mem, op, source, now)? {
                        blocked = true;
                        break;
                    }
                }
            }
            offered += 1;
            report_progress(&mut progress, offered);
            head = next_head(source, max_cycles, &mut bulk)?;
        }
        let mut next = mem.tick(now);
        if mem.has_moves() {
            moved.apply(&mut mem);
        }
        if head.is_none() && mem.is_idle() {
            break;
        }
        if let (Some(rec), false) = (head, blocked) {
            if skip_idle && rec.cycle > next && mem.is_idle() {
                // Any `next` the tick gave stays valid: a refresh booked here moves its
                // channel's deadline later, and a visit before it finds nothing to do.
                mem.skip_idle_refreshes(now, rec.cycle);
            }
            next = next.min(rec.cycle);
        }
        let target = next_visit(now, next, skip_idle);
        if target == u64::MAX {
            return Err(stalled(now));
        }
        if blocked {
            stall_cycles += target - now;
        }
        now = target;
    }
    let stats = replay_stats(&mut mem, stall_cycles, started, offered)?;
    device.channels = mem;
    router.devices.push(device);
    Ok((stats, router))
}

/// The memory of a trace replay (one device, timing mode), logging commands to `command_log`
/// when given; refuses configs trace replay cannot run.
fn replay_router(config: &Config, command_log: Option<&Path>) -> Result<MemoryRouter> {
    if !config.memory.device.is_empty() {
        return Err(Error::Config(
            "memory.device: trace replay drives one device ([dram]); several devices need a workload (--workload)".into(),
        ));
    }
    if config.sim.mode == crate::config::SimMode::Functional {
        return Err(Error::Config(
            "sim.mode: functional runs the cores and the OS of a workload (--workload); trace replay is timing only".into(),
        ));
    }
    config.validate()?;
    crate::host_memory::check_host_memory(config, crate::host_memory::RunKind::Replay)?;
    let mut router = MemoryRouter::new(config)?;
    if let Some(path) = command_log {
        router.devices[0].channels.log_commands_to(path)?;
    }
    Ok(router)
}

/// Reports `offered` to `progress` every `PROGRESS_EVERY` requests.
#[inline]
fn report_progress(progress: &mut Option<Progress>, offered: u64) {
    if offered % PROGRESS_EVERY == 0 {
        if let Some(p) = progress.as_mut() {
            p(offered);
        }
    }
}

/// The run's stats, with its wall time since `started` and requests offered per wall second,
/// once the command log is flushed.
fn replay_stats(
    mem: &mut MemorySystem,
    stall_cycles: u64,
    started: Instant,
    offered: u64,
) -> Result<Stats> {
    mem.finish_log()?;
    let mut stats = mem.stats(stall_cycles);
    let wall = started.elapsed().as_secs_f64();
    stats.host.wall_seconds = wall;
    stats.host.requests_per_wall_second = if wall > 0.0 {
        offered as f64 / wall
    } else {
        0.0
    };
    Ok(stats)
}

/// The record the front end offers next, small enough to stay in registers: its cycle and,
/// for an access (nearly every record), kind and address. A bulk record's operation waits
/// beside it (`access` is None).
#[derive(Clone, Copy)]
struct Head {
    cycle: u64,
    access: Option<(RequestKind, u64)>,
}

/// Reads the next record (a bulk one's operation into `bulk`), unless its cycle lies beyond
/// `sim.max_cycles`: then an error naming it.
#[inline(always)]
fn next_head<S: RequestSource>(
    source: &mut S,
    max_cycles: u64,
    bulk: &mut Option<BulkOp>,
) -> Result<Option<Head>> {
    let Some(rec) = source.next_request()? else {
        return Ok(None);
    };
    if rec.cycle > max_cycles {
        return Err(beyond_max_cycles(source, rec.cycle, max_cycles));
    }
    let access = match rec.op {
        TraceOp::Access { kind, addr } => Some((kind, addr)),
        TraceOp::Bulk(op) => {
            *bulk = Some(op);
            None
        }
    };
    Ok(Some(Head {
        cycle: rec.cycle,
        access,
    }))
}

/// Offers a bulk operation; whether it was accepted. Err names the record when the operation
/// itself is wrong.
#[cold]
#[inline(never)]
fn offer_bulk<S: RequestSource>(
    mem: &mut MemorySystem,
    op: BulkOp,
    source: &S,
    now: u64,
) -> Result<bool> {
    Ok(mem
        .try_enqueue_bulk(op, now)
        .map_err(|e| Error::Trace(format!("{}: {e}", source.location())))?
        .is_some())
}

#[cold]
#[inline(never)]
fn beyond_max_cycles<S: RequestSource>(source: &S, cycle: u64, max_cycles: u64) -> Error {
    Error::Trace(format!(
        "{}: cycle {cycle} lies beyond sim.max_cycles ({max_cycles} memory cycles); a corrupt cycle? raise sim.max_cycles to replay it",
        source.location(),
    ))
}

/// Steps the memory system while the head request, an access, waits for room in its channel's
/// queue, exactly as the main loop would (front end blocked: stall cycles counted, no skip to
/// the next record), until a tick makes room; then enqueues it. Returns that cycle. A loop of
/// its own so that the common wait keeps few values live.
#[inline(always)]
fn enqueue_when_room(
    mem: &mut MemorySystem,
    moved: &mut MovedBytes,
    kind: RequestKind,
    addr: u64,
    mut now: u64,
    skip_idle: bool,
    stall_cycles: &mut u64,
) -> Result<u64> {
    let channel = mem.channel_of(addr);
    let blocked_at = now;
    loop {
        let next = mem.tick(now);
        if mem.has_moves() {
            moved.apply(mem);
        }
        let target = next_visit(now, next, skip_idle);
        if target == u64::MAX {
            return Err(stalled(now));
        }
        now = target;
        if mem.can_accept(channel, kind, addr) {
            *stall_cycles += now - blocked_at;
            mem.enqueue(kind, addr, now);
            return Ok(now);
        }
    }
}

#[cold]
#[inline(never)]
fn stalled(now: u64) -> Error {
    Error::Io(format!(
        "internal error: simulation stalled at cycle {now} with work pending"
    ))
}

/// The cycle the replay loop visits after `now`: the memory system's next event with idle
/// skipping, else the next cycle.
#[inline(always)]
fn next_visit(now: u64, next: u64, skip_idle: bool) -> u64 {
    if skip_idle {
        next.max(now + 1)
    } else {
        now + 1
    }
}
