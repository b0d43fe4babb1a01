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
//! (`active_ops`, `chunk_source_held`). A declined chunk comes back from the routine as its
//! movblks.

use super::{Space, System};
use crate::bulk::{BulkKind, BulkOp};
use crate::error::{Error, Result};

/// A chunk the memory controller runs: its operation and the device's id for it.
pub(super) struct Handed {
    op: BulkOp,
    device: usize,
    id: u32,
    /// The core whose copy it is.
    core: usize,
}

/// What offering a chunk did.
pub(super) enum ChunkOutcome {
    /// Not yet (older work, a fault's work queued: `moved`, or no room below): retry.
    Retry(bool),
    /// The memory controller runs it.
    HandedDown,
    /// It runs as movblks.
    Declined,
}

impl System {
    /// Core `c` offers the chunk of `bytes` from `src` to `dst` (in `space`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dispatch_chunk(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        src: u64,
        dst: u64,
        bytes: u64,
        budget: &mut usize,
    ) -> Result<ChunkOutcome> {
        if !self.cores[c].window.is_empty() || self.mem_ports_left == 0 {
            return Ok(ChunkOutcome::Retry(false));
        }
        let Some(src_pa) = self.resolve(c, t, space, src, false)? else {
            return Ok(ChunkOutcome::Retry(true));
        };
        let Some(src_last) = self.resolve(c, t, space, src + bytes - 1, false)? else {
            return Ok(ChunkOutcome::Retry(true));
        };
        let Some(dst_pa) = self.resolve(c, t, space, dst, true)? else {
            return Ok(ChunkOutcome::Retry(true));
        };
        let op = BulkOp {
            kind: BulkKind::Copy { src: src_pa },
            dst: dst_pa,
            bytes,
        };
        let last_line = self.mem.last_line_bytes();
        let layout_ok = src_pa % last_line == dst_pa % last_line
            && src_last == src_pa + bytes - 1
            && self.mem.router.within_one_device(&op);
        fn stats(s: &mut System) -> &mut crate::copy_engine::DramChunkStats {
            &mut s.engines.as_mut().expect("engines").stats.dram
        }
        if !layout_ok {
            stats(self).chunks += 1;
            stats(self).declined_layout += 1;
            return Ok(ChunkOutcome::Declined);
        }
        let (s0, s1) = (src_pa, src_pa + bytes);
        let (d0, d1) = op.dst_range();
        // Under "always", a dirty source line holding only some sectors
        // (`partial_line = "sector"`) would have to be written back first: such a chunk
        // stays with the engines too.
        let held = if self.chunk_always {
            self.caches_hold_partial_dirty(s0, s1)
        } else {
            self.caches_hold(s0, s1)
        };
        if held {
            stats(self).chunks += 1;
            stats(self).declined_cached += 1;
            self.hold_for_probe(c);
            return Ok(ChunkOutcome::Declined);
        }
        // Going down: older movblks finish first (one may write the source: the probe is
        // then taken again), lines in flight land, the coherence work needs write-back room,
        // and an operation on the same bytes finishes first.
        if self.engines.as_ref().is_some_and(|e| e.busy())
            || self.mem.fetching_in(s0, s1)
            || self.mem.fetching_in(d0, d1)
            || !self.mem.levels.iter().all(|l| l.can_allocate(c))
            || self.active_ops.iter().any(|a| op.must_wait_for(a))
        {
            return Ok(ChunkOutcome::Retry(false));
        }
        let (device, id) = match self.mem.router.try_enqueue_bulk(op, self.now) {
            Ok(Some(accepted)) => accepted,
            Ok(None) => return Ok(ChunkOutcome::Retry(false)),
            Err(e) => {
                return Err(Error::Io(format!(
                    "internal error: a copy chunk checked to lie in one device was refused: {e}"
                )))
            }
        };
        let waits = self.coherence(c, &op);
        debug_assert_eq!(waits, 0, "aligned whole lines need no write-back");
        self.active_ops.push(op);
        self.handed.push(Handed {
            op,
            device,
            id,
            core: c,
        });
        let line = self.line;
        let s = stats(self);
        s.chunks += 1;
        s.copies += 1;
        s.blocks += bytes / line;
        self.mem_ports_left -= 1;
        let ready = self.now + self.core_fs + self.chunk_probe_fs;
        self.push_mem_slot(c, ready, super::core::NO_LINE);
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(ChunkOutcome::HandedDown)
    }

    /// The chunk just offered runs as movblks: the routine that offered it expands it.
    pub(super) fn decline_chunk(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        step: crate::workload::memcpy::CopyStep,
    ) {
        let expansion = match space {
            Space::Physical => self.cores[c].kernel_copy.as_mut(),
            Space::Virtual(_) => self.sched.memcpy_mut(t),
        };
        expansion
            .expect("the routine that offered the chunk")
            .decline(step);
    }

    /// The tag probe's time holds the routine's next instruction (`probe_cycles`).
    fn hold_for_probe(&mut self, c: usize) {
        if self.chunk_probe_fs > 0 {
            let ready = self.now + self.chunk_probe_fs;
            self.push_slot(c, ready, super::core::NO_LINE);
        }
    }

    /// Whether any array of any cache level holds a line of [a, b).
    fn caches_hold(&self, a: u64, b: u64) -> bool {
        self.mem.levels.iter().any(|l| {
            let lb = l.line_bytes;
            (a / lb..b.div_ceil(lb)).any(|line| l.arrays.iter().any(|k| k.probe(line).is_some()))
        })
    }

    /// Whether any array of any cache level holds a dirty line of [a, b) with only some of
    /// its sectors valid.
    fn caches_hold_partial_dirty(&self, a: u64, b: u64) -> bool {
        self.mem.levels.iter().any(|l| {
            let lb = l.line_bytes;
            (a / lb..b.div_ceil(lb)).any(|line| {
                l.arrays.iter().any(|k| {
                    k.probe(line)
                        .is_some_and(|way| k.is_dirty(way) && !k.is_whole(way))
                })
            })
        })
    }

    /// Whether core `c` has copies not yet done: movblks in the engines or chunks handed
    /// down (its exit waits for them: their writes are the program's).
    pub(super) fn copies_pending(&self, c: usize) -> bool {
        self.engines
            .as_ref()
            .is_some_and(|e| e.busy_for(&self.mem, c))
            || self.handed.iter().any(|h| h.core == c)
    }

    /// Whether a store to [a, b) must wait: a handed-down chunk still reads those bytes.
    pub(super) fn chunk_source_held(&self, a: u64, b: u64) -> bool {
        self.handed
            .iter()
            .any(|h| h.op.src_range().is_some_and(|(s0, s1)| a < s1 && s0 < b))
    }

    /// The memory controller finished operation `id` of `device`: a handed-down chunk.
    pub(super) fn chunk_done(&mut self, device: usize, id: u32) {
        let i = self
            .handed
            .iter()
            .position(|h| h.device == device && h.id == id)
            .expect("a completed operation is a core's job or a handed-down chunk");
        let h = self.handed.swap_remove(i);
        let range = h.op.dst_range();
        if let Some(k) = self.active_ops.iter().position(|a| a.dst_range() == range) {
            self.active_ops.swap_remove(k);
        }
    }
}
