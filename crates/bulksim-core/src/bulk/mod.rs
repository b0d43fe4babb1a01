//! Bulk operations: `copy(src, dst, bytes)` and `init(dst, bytes, value)` requests, and how
//! they are split for execution. `plan` turns one operation into in-DRAM segments, executed
//! in order by each channel controller's `BulkEngine` (RowClone FPM rows, PSM TRANSFER lines,
//! engine-issued writes that seed a row), and channel line jobs, executed by the
//! `ChannelCopier` as ordinary reads and writes through the controllers' queues. `reserved`
//! knows the rows RowClone sets aside; `tracker` completes operations and keeps their stats.
//! Every piece carries the `Move` it makes in the functional memory image, applied when the
//! data really moves.

pub mod channel_copy;
pub mod plan;
pub mod reserved;
pub mod tracker;

pub use crate::segment::{Move, Segment, SegmentKind};

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkKind {
    /// Copy `bytes` from `src` to the destination.
    Copy { src: u64 },
    /// Set `bytes` at the destination to `value` (memset).
    Init { value: u8 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkOp {
    pub kind: BulkKind,
    pub dst: u64,
    pub bytes: u64,
}

impl BulkOp {
    /// The source range, for a copy.
    pub fn src_range(&self) -> Option<(u64, u64)> {
        match self.kind {
            BulkKind::Copy { src } => Some((src, src + self.bytes)),
            BulkKind::Init { .. } => None,
        }
    }

    pub fn dst_range(&self) -> (u64, u64) {
        (self.dst, self.dst + self.bytes)
    }

    /// Whether `self` must wait for `earlier` (in flight): a read-after-write,
    /// write-after-read or write-after-write on the same bytes. The one definition of a
    /// bulk range hazard, for the memory system's queue and the full system's coordinator.
    pub fn must_wait_for(&self, earlier: &BulkOp) -> bool {
        let overlaps = |a: (u64, u64), b: (u64, u64)| a.0 < b.1 && b.0 < a.1;
        let (ed, nd) = (earlier.dst_range(), self.dst_range());
        overlaps(ed, nd)
            || self.src_range().is_some_and(|s| overlaps(ed, s))
            || earlier.src_range().is_some_and(|s| overlaps(s, nd))
    }
}

/// One destination line moved over the channel: read the source lines (and the destination
/// line itself when only part of it changes), then write the destination line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineJob {
    pub op: u32,
    /// Line-aligned byte addresses to read first (0 to 3).
    pub reads: Vec<u64>,
    /// Line-aligned byte address written last.
    pub write: u64,
    pub moves: Move,
}

#[cfg(test)]
mod hazard_tests {
    use super::*;

    fn copy(src: u64, dst: u64) -> BulkOp {
        BulkOp {
            kind: BulkKind::Copy { src },
            dst,
            bytes: 4096,
        }
    }

    #[test]
    fn only_writes_to_shared_bytes_order_two_operations() {
        let a = copy(0x1000, 0x8000);
        // Read-read of the same source: no hazard.
        assert!(!copy(0x1000, 0x20000).must_wait_for(&a));
        // Read after write (reads what `a` writes), write after read, write after write.
        assert!(copy(0x8800, 0x30000).must_wait_for(&a));
        assert!(copy(0x40000, 0x1800).must_wait_for(&a));
        let init = BulkOp {
            kind: BulkKind::Init { value: 0 },
            dst: 0x8fff,
            bytes: 1,
        };
        assert!(init.must_wait_for(&a));
        // Touching ranges do not overlap.
        assert!(!copy(0x9000, 0x50000).must_wait_for(&a));
    }
}
