//! Write-combining buffers of one core, for the non-temporal stores of the `software_nt`
//! memcpy (`system.memcpy`; the copy-engine paper's Sec. 3 alternative to its engines). A
//! buffer holds the bytes stored so far into one memory line (the last level's line, the
//! size of Intel's 64-byte WC buffers); stores into a line combine in its buffer; a buffer
//! whose every byte is written leaves at once as one full-line write to memory; a store
//! into a line no buffer holds, with every buffer in use, first evicts the oldest buffer
//! early, as a partial write of only its written bytes; a fence writes out every buffer.
//! This module only decides which writes leave when; the hierarchy applies them
//! (`Hierarchy::non_temporal_store`).

use crate::stat_struct::stat_struct;

stat_struct! {
    /// What the write-combining buffers of every core did (`system.memcpy = "software_nt"`).
    pub struct WriteCombiningStats {
        pub stores: u64 = sum("stores", "non-temporal stores: each went around the caches into a write-combining buffer"),
        pub full_writes: u64 = sum("lines", "buffers written to memory with every byte of their memory line stored: one full-line write each"),
        pub partial_writes: u64 = sum("lines", "buffers written to memory early, evicted by a store into another line or by the routine's fence before every byte was stored: one masked write of the stored bytes each (memory keeps its own bytes elsewhere; counted as one line burst on the channel)"),
        pub partial_bytes: u64 = sum("bytes", "the stored bytes the partial writes carried"),
        pub invalidated_lines: u64 = sum("lines", "cached copies of a line a non-temporal store wrote, dropped from every level and array (coherence: memory now holds newer bytes)"),
        pub dirty_write_backs: u64 = sum("lines", "of those, dirty ones written back first (their other bytes would be lost)"),
    }
}

/// One buffer leaving for memory: the memory line's first byte address and how many of its
/// bytes were stored (all of them: a full-line write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CombinedWrite {
    pub addr: u64,
    pub bytes: u64,
    pub full: bool,
}

/// One open buffer: its memory line (in line units) and a bit per stored byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Buffer {
    line: u64,
    stored: [u64; 4],
}

impl Buffer {
    fn count(&self) -> u64 {
        self.stored.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// The write-combining buffers of one core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteCombining {
    line_bytes: u64,
    capacity: usize,
    /// Open buffers, oldest first.
    open: Vec<Buffer>,
}

impl WriteCombining {
    /// `capacity` buffers (at least 1) of one `line_bytes`-byte memory line (at most 256).
    pub fn new(capacity: usize, line_bytes: u64) -> Self {
        debug_assert!(capacity > 0 && (1..=256).contains(&line_bytes));
        WriteCombining {
            line_bytes,
            capacity,
            open: Vec::with_capacity(capacity),
        }
    }

    /// A store of `len` bytes at `addr`, all within one memory line. Returns the buffers
    /// that leave for memory because of it, in order: the oldest one evicted early to make
    /// room (partial), and this line's own once every byte of it is stored (full).
    pub fn store(&mut self, addr: u64, len: u64) -> [Option<CombinedWrite>; 2] {
        let line = addr / self.line_bytes;
        debug_assert_eq!(line, (addr + len.max(1) - 1) / self.line_bytes);
        let mut evicted = None;
        let at = match self.open.iter().position(|b| b.line == line) {
            Some(at) => at,
            None => {
                if self.open.len() >= self.capacity {
                    evicted = Some(self.leave(0));
                }
                self.open.push(Buffer {
                    line,
                    stored: [0; 4],
                });
                self.open.len() - 1
            }
        };
        let first = addr % self.line_bytes;
        let buffer = &mut self.open[at];
        for byte in first..first + len {
            buffer.stored[(byte / 64) as usize] |= 1 << (byte % 64);
        }
        let full = (buffer.count() == self.line_bytes).then(|| self.leave(at));
        [evicted, full]
    }

    /// Every open buffer leaves (a fence), oldest first.
    pub fn drain(&mut self) -> Vec<CombinedWrite> {
        (0..self.open.len()).map(|_| self.leave(0)).collect()
    }

    /// Whether no buffer is open.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    fn leave(&mut self, at: usize) -> CombinedWrite {
        let b = self.open.remove(at);
        let bytes = b.count();
        CombinedWrite {
            addr: b.line * self.line_bytes,
            bytes,
            full: bytes == self.line_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sixteen 4-byte stores fill a 64-byte line: only the last one sends it, full.
    #[test]
    fn a_line_leaves_whole_when_its_last_byte_is_stored() {
        let mut wc = WriteCombining::new(4, 64);
        for k in 0..15 {
            assert_eq!(wc.store(0x1000 + 4 * k, 4), [None, None]);
        }
        let full = CombinedWrite {
            addr: 0x1000,
            bytes: 64,
            full: true,
        };
        assert_eq!(wc.store(0x1000 + 60, 4), [None, Some(full)]);
        assert!(wc.is_empty());
        // Storing a byte twice does not count it twice.
        wc.store(0x2000, 8);
        wc.store(0x2000, 8);
        assert_eq!(
            wc.drain(),
            [CombinedWrite {
                addr: 0x2000,
                bytes: 8,
                full: false
            }]
        );
    }

    /// With every buffer open, a store into another line evicts the oldest, partial; a
    /// fence writes out the rest, oldest first.
    #[test]
    fn the_oldest_buffer_is_evicted_early_and_a_fence_drains_the_rest() {
        let mut wc = WriteCombining::new(2, 64);
        assert_eq!(wc.store(0x1000, 8), [None, None]);
        assert_eq!(wc.store(0x1040, 4), [None, None]);
        assert_eq!(wc.store(0x1008, 8), [None, None]);
        let first = CombinedWrite {
            addr: 0x1000,
            bytes: 16,
            full: false,
        };
        assert_eq!(wc.store(0x1080, 2), [Some(first), None]);
        assert_eq!(
            wc.drain(),
            [
                CombinedWrite {
                    addr: 0x1040,
                    bytes: 4,
                    full: false
                },
                CombinedWrite {
                    addr: 0x1080,
                    bytes: 2,
                    full: false
                }
            ]
        );
        assert!(wc.is_empty());
    }
}
