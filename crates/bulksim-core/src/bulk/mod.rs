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
