//! The `subarray_aware` policy (RowClone section 4.3.1): a free pool per DRAM subarray
//! (channel, bank, subarray). Ordinary allocations come in the shared scattered order, but a
//! copy-on-write destination is taken from the source frame's pool while it has a free frame,
//! so the copy can use RowClone's FPM mode; otherwise it falls back to the scattered order.

use super::{FramePolicy, FrameRequest, FrameSite, FreeFrames, Pools, Purpose};
use crate::os::frame_table::FrameTable;

#[derive(Clone, Debug)]
pub struct SubarrayAware {
    free: FreeFrames,
    pools: Pools,
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
            pools: Pools::new(&free),
            free,
        }
    }
}

impl FramePolicy for SubarrayAware {
    #[inline]
    fn alloc(&mut self, req: &FrameRequest, _table: &FrameTable) -> Option<u32> {
        if let Purpose::CopyOnWrite { src_frame } = req.purpose {
            let pool = self.free.pool_of(src_frame);
            if let Some(f) = self.pools.take(pool, &mut self.free) {
                return Some(f);
            }
        }
        self.free.alloc()
    }

    fn free(&mut self, frame: u32) {
        self.free.free(frame);
        self.pools.push(frame, &self.free);
    }

    fn frames(&self) -> &FreeFrames {
        &self.free
    }
}
