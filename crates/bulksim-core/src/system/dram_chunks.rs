//! `copy_engine.policy = "dce_rowclone"` (beyond the copy-engines paper; docs/copy_engines.md):
//! the movblk memcpy offers each whole destination chunk (`copy_engine.dram_chunk_bytes`) to
//! the memory controller as one operation. When every older instruction has retired, the
//! chunk's source and destination are translated; a chunk whose source has another offset
//! within a last-level line than its destination, or is not one physically contiguous range
//! in the destination's device, is declined (RowClone moves whole lines or rows: such a chunk
//! would only cross the channel). Otherwise a tag probe of every cache level
//! (`copy_engine.probe_cycles`; under `dram_rule = "always"` only for dirty lines holding some
//! sectors, which would need a write-back) declines it when a level holds one of its source
//! lines, so cached data is copied by the engines beside the caches. A chunk going down waits
//! for the engines to be idle (an older movblk may write its source; the probe is then taken
//! again) and gets RowClone's coherence work (destination lines dropped, dirty source lines
//! copied in the cache under the destination's tag: no write-back to wait for, since source
//! and destination lines align) before it goes to the memory controller; the core goes on at
//! once. Until it completes, accesses to its destination and stores to its source wait
//! (the bulk coordinator's hazard record, `bulk.rs`). A declined chunk comes back from the
//! routine as its movblks. `DramChunks` decides (its settings are its own); the bulk
//! coordinator owns it, records a chunk it hands down and counts it; the core's side (the
//! translation, the window slot) is `Core::dispatch_chunk` (`core/access.rs`).

use crate::bulk::{BulkKind, BulkOp};
use crate::cache::Hierarchy;
use crate::config::{Config, DramRule};
use crate::copy_engine::CopyEngines;
use crate::error::{Error, Result};
use crate::memory::MemorySide;

/// What offering a chunk did.
pub(super) enum ChunkOutcome {
    /// Not yet (older work, a fault's work queued: `moved`, or no room below): retry.
    Retry(bool),
    /// The memory controller runs it.
    HandedDown,
    /// It runs as movblks; `probed`: the caches' tags were probed first (its time holds the
    /// routine's next instruction).
    Declined { probed: bool },
}

/// What the memory controller said to a chunk that may go down.
pub(super) enum Offer {
    /// Decided without the memory controller (see `ChunkOutcome`).
    Outcome(ChunkOutcome),
    /// Taken by memory device `.0` as operation `.1`: its coherence work is due now.
    Accepted(usize, u32),
}

/// dce_rowclone's settings: the tag probe's time and the rule for cached sources.
pub(super) struct DramChunks {
    /// `copy_engine.probe_cycles` as a time (fs).
    probe_fs: u64,
    /// `copy_engine.dram_rule = "always"`.
    always: bool,
}

impl DramChunks {
    pub fn new(config: &Config, core_fs: u64) -> DramChunks {
        DramChunks {
            probe_fs: config.copy_engine.probe_cycles as u64 * core_fs,
            always: config.copy_engine.dram_rule == DramRule::Always,
        }
    }

    /// The tag probe's time (fs).
    pub fn probe_fs(&self) -> u64 {
        self.probe_fs
    }

    /// Core `c` offers chunk `op` whose source's last byte is at `src_last` (physical) at
    /// `now`; `conflicts`: an operation in flight touches its bytes. Counts declined chunks
    /// in `engines`' stats.
    pub fn offer(
        &self,
        (op, src_last): (BulkOp, u64),
        c: usize,
        mem: &mut Hierarchy,
        engines: &mut CopyEngines,
        conflicts: bool,
        now: u64,
    ) -> Result<Offer> {
        let BulkKind::Copy { src: src_pa } = op.kind else {
            unreachable!("a chunk is a copy")
        };
        let (dst_pa, bytes) = (op.dst, op.bytes);
        let last_line = mem.last_line_bytes();
        let layout_ok = src_pa % last_line == dst_pa % last_line
            && src_last == src_pa + bytes - 1
            && mem.memory.within_one_device(&op);
        let stats = &mut engines.stats.dram;
        if !layout_ok {
            stats.chunks += 1;
            stats.declined_layout += 1;
            return Ok(Offer::Outcome(ChunkOutcome::Declined { probed: false }));
        }
        let (s0, s1) = (src_pa, src_pa + bytes);
        let (d0, d1) = op.dst_range();
        // Under "always", a dirty source line holding only some sectors
        // (`partial_line = "sector"`) would have to be written back first: such a chunk
        // stays with the engines too.
        let held = if self.always {
            caches_hold_partial_dirty(mem, s0, s1)
        } else {
            caches_hold(mem, s0, s1)
        };
        if held {
            stats.chunks += 1;
            stats.declined_cached += 1;
            return Ok(Offer::Outcome(ChunkOutcome::Declined { probed: true }));
        }
        // Going down: older movblks finish first (one may write the source: the probe is
        // then taken again), lines in flight land, the coherence work needs write-back room,
        // and an operation on the same bytes finishes first.
        if engines.busy()
            || mem.fetching_in(s0, s1)
            || mem.fetching_in(d0, d1)
            || !mem.levels.iter().all(|l| l.can_allocate(c))
            || conflicts
        {
            return Ok(Offer::Outcome(ChunkOutcome::Retry(false)));
        }
        match mem.memory.try_enqueue_bulk(op, now) {
            Ok(Some((device, id))) => Ok(Offer::Accepted(device, id)),
            Ok(None) => Ok(Offer::Outcome(ChunkOutcome::Retry(false))),
            Err(e) => Err(Error::Io(format!(
                "internal error: a copy chunk checked to lie in one device was refused: {e}"
            ))),
        }
    }
}

/// Whether any array of any cache level holds a line of [a, b).
fn caches_hold(mem: &Hierarchy, a: u64, b: u64) -> bool {
    mem.levels.iter().any(|l| {
        let lb = l.line_bytes;
        (a / lb..b.div_ceil(lb)).any(|line| l.arrays.iter().any(|k| k.probe(line).is_some()))
    })
}

/// Whether any array of any cache level holds a dirty line of [a, b) with only some of its
/// sectors valid.
fn caches_hold_partial_dirty(mem: &Hierarchy, a: u64, b: u64) -> bool {
    mem.levels.iter().any(|l| {
        let lb = l.line_bytes;
        (a / lb..b.div_ceil(lb)).any(|line| {
            l.arrays.iter().any(|k| {
                k.probe(line)
                    .is_some_and(|way| k.is_dirty(way) && !k.is_whole(way))
            })
        })
    })
}
