//! The host memory a run allocates up front (per-rank and per-bank ready tables, request
//! queues, cache arrays, the OS's per-frame tables), estimated from a validated config and
//! compared with what the machine has (`MemAvailable` in `/proc/meminfo`, or
//! `sim.memory_limit_mb`), so that a configuration too large for the machine is one error
//! saying how many bytes it needs, never an allocation abort. Above `config` and `os` (it
//! weighs their tables), below the runs that check it (`sim`, `system`).

use crate::config::Config;
use crate::error::{config_err, Result};
use crate::limits::{capacity_bytes, human_bytes, FRAME_BYTES};

/// Host bytes per rank of one channel: its ready-at row (11 x 8), energy activity counters
/// (10 x 8), tFAW window (4 slots x 8 + 8), refresh and unavailability counters, its address
/// and open-bank count; rounded up.
const BYTES_PER_RANK: u64 = 384;
/// Host bytes per bank: its ready-at row (11 x 8), open row, hit count and bulk lock; rounded up.
const BYTES_PER_BANK: u64 = 128;
/// Host bytes per controller besides its ranks and banks: the controller, device, bulk
/// engine and rule effects; rounded up.
const BYTES_PER_CHANNEL: u64 = 16 << 10;
/// Host bytes per request-queue entry (the request and its ready hint).
const BYTES_PER_QUEUE_ENTRY: u64 = 80;
/// Host bytes per cache line besides its data: tag, last use, dirty bit and origin.
const BYTES_PER_CACHE_LINE: u64 = 18;
/// Host bytes per 4 KiB frame of the OS's frame table (full-system runs): owner (4), sharing
/// count (2) and referenced bit; rounded up. Reserved up front at every capacity.
const FRAME_TABLE_BYTES_PER_FRAME: u64 = 7;
/// Host bytes per 4 KiB frame of the eager allocator's tables (memories up to
/// `os::allocator::LAZY_ABOVE_FRAMES` frames): order (4), pool number (4), used flag (1), the
/// pooled policies' free lists (4). Above that the order is drawn lazily and the allocator's
/// state grows with the frames drawn, not with the capacity.
const EAGER_ALLOCATOR_BYTES_PER_FRAME: u64 = 13;

/// Host bytes per 4 KiB frame of `frames` frames the OS reserves up front.
pub fn os_bytes_per_frame(frames: u64) -> u64 {
    if frames <= crate::os::allocator::LAZY_ABOVE_FRAMES as u64 {
        FRAME_TABLE_BYTES_PER_FRAME + EAGER_ALLOCATOR_BYTES_PER_FRAME
    } else {
        FRAME_TABLE_BYTES_PER_FRAME
    }
}

/// What a run builds: trace replay has no cores, caches or OS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    Replay,
    /// A full-system run with at most this many cores (one per starting thread).
    System {
        cores: usize,
    },
}

/// Host bytes `config` allocates up front for `run` (an estimate that errs on the high side):
/// every memory device's controllers, and for a full-system run the cache arrays and the OS's
/// frame tables. The config must have passed `validate`.
pub fn startup_bytes(config: &Config, run: RunKind) -> Result<u64> {
    let mut total: u64 = 0;
    let mut memory_bytes: u64 = 0;
    let c = &config.controller;
    let queue_entries = c.read_queue_size as u64 + c.write_queue_size as u64;
    for (_, device) in config.device_configs()? {
        let o = device.spec()?.organisation;
        let channels = o.channels as u64;
        let ranks = channels * o.ranks as u64;
        let banks = ranks * o.banks_per_rank() as u64;
        total = total
            .saturating_add(channels * (BYTES_PER_CHANNEL + queue_entries * BYTES_PER_QUEUE_ENTRY))
            .saturating_add(ranks * BYTES_PER_RANK)
            .saturating_add(banks * BYTES_PER_BANK);
        memory_bytes = memory_bytes.saturating_add(capacity_bytes(&o).unwrap_or(u64::MAX));
    }
    if let RunKind::System { cores } = run {
        let cores = cores.max(1) as u64;
        for level in &config.cache.level {
            let arrays = if level.shared { 1 } else { cores };
            let bytes = level.size_kb as u64 * 1024;
            let lines = bytes / level.line_bytes as u64;
            total = total.saturating_add(arrays * (bytes + lines * BYTES_PER_CACHE_LINE));
        }
        let frames = memory_bytes / FRAME_BYTES;
        total = total.saturating_add(frames.saturating_mul(os_bytes_per_frame(frames)));
    }
    Ok(total)
}

/// The host memory a run may use: `sim.memory_limit_mb` when set, else the machine's
/// available memory (`MemAvailable`), or `None` when neither is known.
pub fn host_memory_limit(config: &Config) -> Option<(u64, String)> {
    if config.sim.memory_limit_mb > 0 {
        return Some((
            config.sim.memory_limit_mb.saturating_mul(1 << 20),
            "sim.memory_limit_mb".into(),
        ));
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((
        kib * 1024,
        "available on this machine (MemAvailable)".into(),
    ))
}

/// Errors when the up-front allocation `run` needs for `config` exceeds the host memory
/// limit, naming both sizes.
pub fn check_host_memory(config: &Config, run: RunKind) -> Result<()> {
    let needed = startup_bytes(config, run)?;
    let Some((limit, source)) = host_memory_limit(config) else {
        return Ok(());
    };
    if needed > limit {
        let what = match run {
            RunKind::Replay => "controllers: per rank and bank tables and request queues",
            RunKind::System { .. } => {
                "controllers, cache arrays and the OS's per-frame tables (20 bytes per 4 KiB of simulated memory up to 16 GiB, 7 above)"
            }
        };
        return Err(config_err(format!(
            "the configuration needs about {} of host memory up front ({what}), more than the {} {source}; reduce dram.channels, dram.ranks or the cache sizes{}",
            human_bytes(needed),
            human_bytes(limit),
            if config.sim.memory_limit_mb > 0 {
                ", or raise sim.memory_limit_mb"
            } else {
                ", or set sim.memory_limit_mb"
            }
        )));
    }
    Ok(())
}
