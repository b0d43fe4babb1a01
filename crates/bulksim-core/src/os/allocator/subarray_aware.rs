//! The `subarray_aware` policy (RowClone section 4.3.1): a free pool per DRAM subarray
//! (channel, bank, subarray). Ordinary allocations come in the shared scattered order, but a
//! copy-on-write destination is taken from the source frame's pool while it has a free frame,
//! so the copy can use RowClone's FPM mode; otherwise it falls back to the scattered order.

use super::{FramePolicy, FrameRequest, FrameSite, FreeFrames, PooledFrames};
use crate::os::frame_table::FrameTable;

#[derive(Clone, Debug)]
pub struct SubarrayAware {
    frames: PooledFrames,
}

impl SubarrayAware {
    pub fn new(frames: usize, site: impl Fn(u32) -> Option<FrameSite>, seed: u64) -> SubarrayAware {
        let (free, _) = FreeFrames::new(
            frames,
            site,
            |s| (s.channel, s.bank_index, s.subarray),
            seed,
        );
        SubarrayAware {
            frames: PooledFrames::new(free),
        }
    }
}

impl FramePolicy for SubarrayAware {
    #[inline]
    fn alloc(&mut self, req: &FrameRequest, _table: &FrameTable) -> Option<u32> {
        // The source's own subarray.
        self.frames.alloc(req, |pool| pool)
    }

    fn free(&mut self, frame: u32) {
        self.frames.free(frame);
    }

    fn frames(&self) -> &FreeFrames {
        &self.frames.free
    }
}
