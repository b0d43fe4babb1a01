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

use crate::mapping::DramAddr;

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

/// The bytes a finished piece moves in the memory image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Copy { src: u64, dst: u64, len: u64 },
    Fill { dst: u64, len: u64, value: u8 },
}

/// One in-DRAM step of an operation, executed by a channel's bulk engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// RowClone FPM: ACT the source row, ACT2 the destination row of the same subarray, PRE.
    Fpm { src: DramAddr, dst: DramAddr },
    /// RowClone PSM: one line over the chip's internal bus, TRR at the source bank and TRW at
    /// the destination bank (another bank of the same rank) the next cycle.
    Transfer { src: DramAddr, dst: DramAddr },
    /// A channel write issued by the engine itself (to seed a row for a non-zero init).
    WriteLine { dst: DramAddr },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub op: u32,
    pub kind: SegmentKind,
    /// Applied to the image when the data moves (ACT2, TRW or WR).
    pub moves: Vec<Move>,
}

impl Segment {
    /// The banks (flat index) and rows the segment needs open, source first.
    pub fn rows(&self) -> [Option<(u32, u32)>; 2] {
        let key = |a: &DramAddr| Some((a.bank_index, a.row));
        match &self.kind {
            SegmentKind::Fpm { src, .. } => [key(src), None],
            SegmentKind::Transfer { src, dst } => [key(src), key(dst)],
            SegmentKind::WriteLine { dst } => [key(dst), None],
        }
    }

    pub fn rank(&self) -> u32 {
        match &self.kind {
            SegmentKind::Fpm { src, .. } | SegmentKind::Transfer { src, .. } => src.rank,
            SegmentKind::WriteLine { dst } => dst.rank,
        }
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
