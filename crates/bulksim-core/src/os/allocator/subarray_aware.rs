//! The `subarray_aware` policy (RowClone section 4.3.1): a free pool per DRAM subarray
//! (channel, bank, subarray). Ordinary allocations come in the shared scattered order, but a
//! copy-on-write destination is taken from the source frame's pool while it has a free frame,
//! so the copy can use RowClone's FPM mode; otherwise it falls back to the scattered order.

use super::{subarray_key, AllocContext, FramePolicy, FrameRequest, FreeFrames, Pooling};

#[derive(Clone, Debug)]
pub struct SubarrayAware {
    free: FreeFrames,
}

impl SubarrayAware {
    pub const POOLING: Pooling = Pooling {
        key: subarray_key,
        lists: true,
    };

    pub fn new(free: FreeFrames) -> SubarrayAware {
        SubarrayAware { free }
    }
}

impl FramePolicy for SubarrayAware {
    #[inline]
    fn alloc(&mut self, req: &FrameRequest, _ctx: &mut AllocContext) -> Option<u32> {
        // The source's own subarray.
        self.free.alloc_near(req, |_, pool| pool)
    }

    fn free(&mut self, frame: u32) {
        self.free.free(frame);
    }

    fn frames(&self) -> &FreeFrames {
        &self.free
    }
}
