//! The `inter_bank` policy: a free pool per DRAM bank (channel, bank). Ordinary allocations
//! come in the shared scattered order, but a copy-on-write destination is taken from the pool
//! of the source's neighbouring bank (bank index ^ 1, same channel and rank) while it has a
//! free frame, so every copy can use RowClone's inter-bank PSM mode (the paper's PSM
//! configuration); otherwise it falls back to the scattered order.

use super::{bank_key, AllocContext, FramePolicy, FrameRequest, FrameSite, FreeFrames, Pooling};

#[derive(Clone, Debug)]
pub struct InterBank {
    free: FreeFrames,
}

impl InterBank {
    pub const POOLING: Pooling = Pooling {
        key: bank_key,
        lists: true,
    };

    pub fn new(free: FreeFrames) -> InterBank {
        InterBank { free }
    }
}

/// The pool a copy of a frame in `pool` draws from: the neighbouring bank of the same rank
/// (bank indices pair up within a rank), or `pool` itself when that bank has no usable frame.
fn partner(free: &mut FreeFrames, pool: u32) -> u32 {
    let key = free.pool_key(pool);
    let neighbour = FrameSite {
        bank_index: key.bank_index ^ 1,
        ..key
    };
    free.pool_for_key(neighbour).unwrap_or(pool)
}

impl FramePolicy for InterBank {
    #[inline]
    fn alloc(&mut self, req: &FrameRequest, _ctx: &mut AllocContext) -> Option<u32> {
        self.free.alloc_near(req, partner)
    }

    fn free(&mut self, frame: u32) {
        self.free.free(frame);
    }

    fn frames(&self) -> &FreeFrames {
        &self.free
    }
}
