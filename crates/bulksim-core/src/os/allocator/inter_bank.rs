//! The `inter_bank` policy: a free pool per DRAM bank (channel, bank). Ordinary allocations
//! come in the shared scattered order, but a copy-on-write destination is taken from the pool
//! of the source's neighbouring bank (bank index ^ 1, same channel and rank) while it has a
//! free frame, so every copy can use RowClone's inter-bank PSM mode (the paper's PSM
//! configuration); otherwise it falls back to the scattered order.

use super::{FramePolicy, FrameRequest, FrameSite, FreeFrames, Pools, Purpose};
use crate::os::frame_table::FrameTable;

#[derive(Clone, Debug)]
pub struct InterBank {
    free: FreeFrames,
    pools: Pools,
    /// The pool a copy of a frame in pool i draws from.
    partner: Vec<u32>,
}

impl InterBank {
    pub fn new(frames: usize, site: impl Fn(u32) -> Option<FrameSite>, seed: u64) -> InterBank {
        let (free, keys) = FreeFrames::new(frames, site, |s| (s.channel, s.bank_index), seed);
        let mut partner = vec![0; keys.len()];
        for (&(ch, bank), &k) in &keys {
            // The neighbouring bank of the same rank (bank indices pair up within a rank).
            partner[k as usize] = keys.get(&(ch, bank ^ 1)).copied().unwrap_or(k);
        }
        InterBank {
            pools: Pools::new(&free),
            free,
            partner,
        }
    }
}

impl FramePolicy for InterBank {
    #[inline]
    fn alloc(&mut self, req: &FrameRequest, _table: &FrameTable) -> Option<u32> {
        if let Purpose::CopyOnWrite { src_frame } = req.purpose {
            let pool = self.partner[self.free.pool_of(src_frame) as usize];
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
