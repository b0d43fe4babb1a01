//! Untimed work on the whole hierarchy and the cores' functional view of it: the final flush
//! of every dirty line into the image, zeroing memory present before the run, handing a
//! freed frame to a new owner (the dead lines of the old one dropped everywhere else), and
//! reading bytes as a core, or all cores, see them now.

use super::hierarchy::{write_masked, Hierarchy};
use crate::memory::MemorySide;

impl Hierarchy {
    /// Writes every dirty line back to the memory image and empties every level, untimed
    /// and counted nowhere: what a flush of all caches at the end of a run leaves in memory
    /// (the cores' view, `read_as_cores`, then is the image's). The last level goes first,
    /// so a newer copy higher up lands last; a partially valid line writes only its valid
    /// sectors. Misses in flight are not waited for.
    pub fn flush_untimed(&mut self) {
        self.epoch += 1;
        for l in self.levels.iter_mut().rev() {
            let lb = l.line_bytes;
            for a in &mut l.arrays {
                for ev in a.clear() {
                    write_masked(
                        &mut self.memory,
                        ev.line * lb,
                        ev.data.as_slice(),
                        &ev.valid,
                    );
                }
            }
        }
    }

    /// Makes the `bytes` at `addr` zero without timing (memory present before the run
    /// began): cached copies are dropped at every level, the image is cleared.
    pub fn zero_untimed(&mut self, addr: u64, bytes: u64) {
        self.epoch += 1;
        for l in &mut self.levels {
            let lb = l.line_bytes;
            for a in &mut l.arrays {
                a.invalidate_lines(addr / lb, (addr + bytes).div_ceil(lb));
            }
        }
        self.memory.zero_untimed(addr, bytes);
    }

    /// A freed frame at [addr, addr + bytes) now belongs to `core`: the lines its earlier
    /// owner left in other cores' arrays, or is still fetching there, are dead (no process
    /// maps the frame any more) and are dropped without a write-back, so they can neither be
    /// read by nor written back over the new owner. bulksim's caches keep no coherence protocol between cores, so this
    /// hand-over is where it would matter.
    pub fn hand_over(&mut self, core: usize, addr: u64, bytes: u64) {
        self.epoch += 1;
        for l in &mut self.levels {
            let (lb, mine) = (l.line_bytes, l.array_of[core]);
            // Fills other cores started for the old owner (a store's fill may still be in
            // flight when its process exits) must not bring its bytes back either.
            for (other, mshrs) in l.mshrs.iter_mut().enumerate() {
                if other == core {
                    continue;
                }
                for m in mshrs.iter_mut() {
                    if m.line * lb < addr + bytes && (m.line + 1) * lb > addr {
                        m.dead = true;
                    }
                }
            }
            for (k, a) in l.arrays.iter_mut().enumerate() {
                if k != mine {
                    a.invalidate_lines(addr / lb, (addr + bytes).div_ceil(lb));
                }
            }
        }
    }

    /// Current contents of `buf.len()` bytes at `addr` as core `core` sees them (within one
    /// first-level line): `read_as_cores`, with its stores still waiting for the line's fill.
    pub fn read_as_core(&self, core: usize, addr: u64, buf: &mut [u8]) {
        self.read_below(0, addr, buf);
        let l = &self.levels[0];
        let line = addr / l.line_bytes;
        let Some(m) = l.mshrs[core].iter().find(|m| m.line == line) else {
            return;
        };
        let start = (addr - line * l.line_bytes) as usize;
        let end = start + buf.len();
        for (offset, len, bytes) in &m.stores {
            let (a, b) = (*offset, *offset + *len as usize);
            let (from, to) = (a.max(start), b.min(end));
            if from < to {
                buf[from - start..to - start].copy_from_slice(&bytes[from - a..to - a]);
            }
        }
    }

    /// Current contents of `buf.len()` bytes at `addr` as the cores see them (within one
    /// first-level line).
    pub fn read_as_cores(&self, addr: u64, buf: &mut [u8]) {
        self.read_below(0, addr, buf);
    }
}
