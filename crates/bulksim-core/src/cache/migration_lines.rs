//! The cached lines of a page the hybrid memory migrates: CPM pins the migrating page's
//! lines in the last level; at completion its lines are flushed to the new frame
//! (`hybrid.remap_lines = "flush"`) or renamed there (`"retag"`), with the post-LLC
//! write-backs held for it; a frame a migration is about to fill loses whatever lines an
//! exited owner left.

use super::hierarchy::{write_masked, Hierarchy};
use crate::port::{Origin, Request, RequestKind};

impl Hierarchy {
    /// Pins the lines of [addr, addr + bytes) in every array of the last level (CPM: a
    /// migrating page's lines stay there, so its write-backs wait in the cache).
    pub fn pin_last_level(&mut self, addr: u64, bytes: u64) {
        let last = self.last();
        let lb = self.levels[last].line_bytes;
        for a in &mut self.levels[last].arrays {
            a.pin(addr / lb, (addr + bytes).div_ceil(lb));
        }
        self.pinned = Some((addr, addr + bytes));
    }

    /// Ends `pin_last_level`.
    pub fn unpin_last_level(&mut self) {
        let last = self.last();
        for a in &mut self.levels[last].arrays {
            a.unpin();
        }
        self.pinned = None;
    }

    /// Forgets every cached copy of [addr, addr + bytes) in every array, dirty or not, and
    /// every fill in flight for it: its bytes belong to nobody any more (a frame a page
    /// migration is about to fill, whose lines an exited owner may have left).
    pub fn drop_lines(&mut self, addr: u64, bytes: u64) {
        self.epoch += 1;
        for l in &mut self.levels {
            let lb = l.line_bytes;
            for m in l.mshrs.iter_mut().flatten() {
                if m.line * lb < addr + bytes && (m.line + 1) * lb > addr {
                    m.dead = true;
                }
            }
            for a in &mut l.arrays {
                for line in addr / lb..(addr + bytes).div_ceil(lb) {
                    a.invalidate(line);
                }
            }
        }
    }

    /// Whether a write-back to [a, b) waits in the last level's queue for memory.
    pub fn memory_writes_in(&self, a: u64, b: u64) -> bool {
        self.levels[self.last()]
            .out_writebacks
            .iter()
            .any(|w| w.req.addr < b && w.req.addr + w.req.bytes as u64 > a)
    }

    /// A migrated page's cached lines (`hybrid.remap_lines = "flush"`): every line of
    /// [old, old + bytes) in every level is invalidated, and its newest bytes, when any copy
    /// was dirty, are written to the same place in [new, new + bytes): into the image now
    /// (the last level first, so a newer copy higher up lands last) and to memory as one
    /// write-back of each last-level line (origin `Migration`). Returns the lines dropped.
    pub fn move_lines_to(&mut self, old: u64, new: u64, bytes: u64) -> u64 {
        self.epoch += 1;
        let last_bytes = self.last_line_bytes();
        let mut dropped = 0;
        let mut dirty_lines = std::collections::BTreeSet::new();
        for level in (0..self.levels.len()).rev() {
            let lb = self.levels[level].line_bytes;
            for a in 0..self.levels[level].arrays.len() {
                for line in old / lb..(old + bytes).div_ceil(lb) {
                    let array = &mut self.levels[level].arrays[a];
                    if let Some(ev) = array.write_back(line) {
                        let at = new + (line * lb - old);
                        write_masked(&mut self.memory, at, ev.data.as_slice(), &ev.valid);
                        dirty_lines.insert(at / last_bytes);
                    }
                    dropped += self.levels[level].arrays[a].invalidate(line) as u64;
                }
            }
        }
        dropped += self.release_held_writebacks(old, new, bytes);
        for line in dirty_lines {
            let req = Request {
                id: None,
                addr: line * last_bytes,
                bytes: last_bytes as u32,
                kind: RequestKind::Writeback,
                origin: Origin::Migration,
                thread: 0,
            };
            self.send_writeback_to_memory(req, Origin::Migration, None);
        }
        dropped
    }

    /// A migrated page's cached lines (`hybrid.remap_lines = "retag"`): every line of
    /// [old, old + bytes) in every array is renamed to the same place in [new, new + bytes),
    /// keeping its bytes and dirty state (`Cache::retag`); nothing is written now. The last
    /// level goes first, so that a line an upper level pushes out into it cannot push out a
    /// line still under its old name. Returns the lines moved.
    pub fn retag_lines_to(&mut self, old: u64, new: u64, bytes: u64) -> u64 {
        self.epoch += 1;
        let mut moved = 0;
        for level in (0..self.levels.len()).rev() {
            let lb = self.levels[level].line_bytes;
            for a in 0..self.levels[level].arrays.len() {
                let (n, evicted) = self.levels[level].arrays[a].retag(
                    old / lb,
                    (old + bytes).div_ceil(lb),
                    new / lb,
                );
                moved += n;
                for ev in evicted {
                    // No core's access pushed it out: booked to the array's own core.
                    self.write_back(level, a, &ev, None, a);
                }
            }
        }
        moved + self.release_held_writebacks(old, new, bytes)
    }

    /// Post-LLC write-backs held for a CPM page ([old, old + bytes)) go to the same place
    /// in [new, new + bytes) at its completion. Returns how many.
    fn release_held_writebacks(&mut self, old: u64, new: u64, bytes: u64) -> u64 {
        let last_bytes = self.last_line_bytes();
        let held: Vec<u64> = self
            .held_writebacks
            .range(old / last_bytes..(old + bytes).div_ceil(last_bytes))
            .copied()
            .collect();
        for &line in &held {
            // The program's own write-backs, late: they count as the program's.
            self.held_writebacks.remove(&line);
            let at = new + (line * last_bytes - old);
            let req = Request {
                id: None,
                addr: at,
                bytes: last_bytes as u32,
                kind: RequestKind::Writeback,
                origin: Origin::Program,
                thread: 0,
            };
            self.send_writeback_to_memory(req, Origin::Program, None);
        }
        held.len() as u64
    }
}
