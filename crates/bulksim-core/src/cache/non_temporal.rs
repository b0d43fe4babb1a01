//! Non-temporal stores (`system.memcpy = "software_nt"`), which go around every cache level:
//! each drops the cached copies of its memory line (a dirty one written back first) and
//! writes the image at once, and its core's write-combining buffers decide when a line write
//! leaves for memory, holding a place in the last level's write-back buffer until memory
//! takes it.

use super::hierarchy::Hierarchy;
use super::write_combining::{CombinedWrite, WriteCombining};
use crate::memory::MemorySide;
use crate::port::{Origin, Request, RequestKind};

impl Hierarchy {
    /// Gives every one of `cores` cores `buffers` write-combining buffers of one memory line
    /// (the last level's) for non-temporal stores.
    pub fn set_write_combining(&mut self, cores: usize, buffers: usize) {
        let line = self.last_line_bytes();
        self.write_combining = vec![WriteCombining::new(buffers.max(1), line); cores];
    }

    /// A non-temporal store of `data` (within one memory line) at `addr` by `core`: every
    /// cached copy of its memory line, in every level and array, is dropped (a dirty one
    /// written back first, as any write-back), the bytes go into the memory image at once
    /// (so every later fill reads them), and the core's write-combining buffers take the
    /// store, sending the line writes it causes to memory. False, with nothing done, when
    /// memory's write queue has no room for such a write (the last level's write-back
    /// buffer, which the line writes share): the store waits. The caller makes sure no fill
    /// for the line is in flight (its stores would land on top of these bytes).
    pub fn non_temporal_store(&mut self, core: usize, addr: u64, data: &[u8]) -> bool {
        let last = self.last();
        let array = self.levels[last].array_of[core];
        if self.memory.queues_requests() && !self.last_can_allocate(array) {
            return false;
        }
        let line_bytes = self.last_line_bytes();
        let start = addr / line_bytes * line_bytes;
        for level in 0..self.levels.len() {
            let lb = self.levels[level].line_bytes;
            for a in 0..self.levels[level].arrays.len() {
                for line in start / lb..(start + line_bytes).div_ceil(lb) {
                    // An upper level's dirty line lands in a lower level here, whose turn
                    // comes after: it leaves there, to memory.
                    if let Some(ev) = self.levels[level].arrays[a].write_back(line) {
                        self.write_combining_stats.dirty_write_backs += 1;
                        self.write_back(level, a, &ev, None, core);
                    }
                    if self.levels[level].arrays[a].invalidate(line) {
                        self.write_combining_stats.invalidated_lines += 1;
                        self.epoch += 1;
                    }
                }
            }
        }
        self.memory.write(addr, data);
        self.write_combining_stats.stores += 1;
        let writes = self.write_combining[core].store(addr, data.len() as u64);
        for w in writes.into_iter().flatten() {
            self.write_combined(core, w);
        }
        true
    }

    /// `core`'s fence: every open write-combining buffer leaves for memory.
    pub fn drain_write_combining(&mut self, core: usize) {
        let Some(wc) = self.write_combining.get_mut(core) else {
            return;
        };
        for w in wc.drain() {
            self.write_combined(core, w);
        }
    }

    /// One write-combining buffer's line write: it crosses the port below every level
    /// (counted there with its stored bytes, as a partially valid line's write-back is) and
    /// goes to memory as one write of the memory line (a masked one when partial: memory
    /// keeps its own bytes elsewhere; the bytes are in the image since the stores). It holds
    /// a place in the last level's write-back buffer until memory takes it.
    fn write_combined(&mut self, core: usize, w: CombinedWrite) {
        let stats = &mut self.write_combining_stats;
        if w.full {
            stats.full_writes += 1;
        } else {
            stats.partial_writes += 1;
            stats.partial_bytes += w.bytes;
        }
        for l in &mut self.levels {
            l.below.write_bytes.count(Origin::Copy, w.bytes);
            l.below_transfers += 1;
        }
        let line_bytes = self.last_line_bytes();
        let last = self.last();
        let array = self.levels[last].array_of[core];
        let req = Request {
            id: None,
            addr: w.addr,
            bytes: line_bytes as u32,
            kind: RequestKind::Writeback,
            origin: Origin::Copy,
            thread: core as u32,
        };
        self.send_writeback_to_memory(req, Origin::Copy, Some((last, array)));
    }
}
