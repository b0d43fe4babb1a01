//! The `scatter` policy: every frame, copies included, is the next free one in the seeded
//! scattered order (the most recently freed first), wherever it lies, as a stock kernel's
//! buddy allocator spreads pages after some uptime.

use super::{subarray_key, AllocContext, FramePolicy, FrameRequest, FreeFrames, Pooling};

#[derive(Clone, Debug)]
pub struct Scatter {
    free: FreeFrames,
}

impl Scatter {
    /// Pools by subarray only name where frames lie (the `cow_same_subarray` stat): no lists.
    pub const POOLING: Pooling = Pooling {
        key: subarray_key,
        lists: false,
    };

    pub fn new(free: FreeFrames) -> Scatter {
        Scatter { free }
    }
}

impl FramePolicy for Scatter {
    #[inline]
    fn alloc(&mut self, _req: &FrameRequest, _ctx: &mut AllocContext) -> Option<u32> {
        self.free.alloc()
    }

    fn free(&mut self, frame: u32) {
        self.free.free(frame);
    }

    fn frames(&self) -> &FreeFrames {
        &self.free
    }
}
