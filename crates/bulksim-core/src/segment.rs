//! In-DRAM steps of bulk operations, and the bytes each finished piece moves in the memory
//! image: the interface between the planner (`bulk`), which produces segments, and each
//! channel controller's bulk engine (`controller::bulk_engine`), which executes them. It sits
//! below both so that neither names the other; `bulk` re-exports these types.

use crate::mapping::DramAddr;

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
