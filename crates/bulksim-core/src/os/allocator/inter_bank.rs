//! The `inter_bank` policy: a free pool per DRAM bank (channel, bank). Ordinary allocations
//! come in the shared scattered order, but a copy-on-write destination is taken from the pool
//! of the source's neighbouring bank (bank index ^ 1, same channel and rank) while it has a
//! free frame, so every copy can use RowClone's inter-bank PSM mode (the paper's PSM
//! configuration); otherwise it falls back to the scattered order.

use super::{FramePolicy, FrameRequest, FrameSite, FreeFrames, PooledFrames};
use crate::os::frame_table::FrameTable;

#[derive(Clone, Debug)]
pub struct InterBank {
    frames: PooledFrames,
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
            frames: PooledFrames::new(free),
            partner,
        }
    }
}

impl FramePolicy for InterBank {
    #[inline]
    fn alloc(&mut self, req: &FrameRequest, _table: &FrameTable) -> Option<u32> {
        // The source's neighbouring bank.
        let partner = &self.partner;
        self.frames.alloc(req, |pool| partner[pool as usize])
    }

    fn free(&mut self, frame: u32) {
        self.frames.free(frame);
    }

    fn frames(&self) -> &FreeFrames {
        &self.frames.free
    }
}
