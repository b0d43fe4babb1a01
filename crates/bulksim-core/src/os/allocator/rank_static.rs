//! The `rank_static` policy (Rank Assignment for timing runs, docs/rank_assignment.md, "Page
//! allocation"): thread i's pages go on its preferred global rank, `os.thread_ranks[i]` or
//! else i mod R, a page shared by threads on the rank of the thread that touched it first
//! (whoever asks for the frame). Frames of a rank come in the shared scattered order
//! restricted to that rank (a free pool per (channel, rank)), the most recently freed first.
//! With probability `os.mapping_error` a new page goes to a uniformly random other rank
//! instead (the paper's Fig 8). A rank with no free frame left passes the page to the next
//! rank up, cyclically, that has one (bulksim's choice; counted).

use super::ranks::{rank_key, RankLayout};
use super::{AllocContext, FramePolicy, FrameRequest, FreeFrames, Pooling, RankSetup};
use crate::rng::SplitMix64;

#[derive(Clone, Debug)]
pub struct RankStatic {
    free: FreeFrames,
    layout: RankLayout,
    thread_ranks: Vec<u32>,
    mapping_error: f64,
    /// Draws of the mapping error, from `os.seed` (apart from the scattered order's).
    rng: SplitMix64,
}

/// Mixed into `os.seed` for the mapping error's draws, so they do not repeat the order's.
const MAPPING_ERROR_SEED: u64 = 0x6d61_7070_696e_6721;

impl RankStatic {
    pub const POOLING: Pooling = Pooling {
        key: rank_key,
        lists: true,
    };

    pub fn new(free: FreeFrames, ranks: RankSetup, seed: u64) -> RankStatic {
        RankStatic {
            free,
            layout: ranks.layout,
            thread_ranks: ranks.thread_ranks,
            mapping_error: ranks.mapping_error,
            rng: SplitMix64::new(seed ^ MAPPING_ERROR_SEED),
        }
    }

    /// Thread `thread`'s rank: its `os.thread_ranks` entry, else thread mod R.
    fn preferred(&self, thread: u32) -> u32 {
        match self.thread_ranks.get(thread as usize) {
            Some(&r) => r,
            None => thread % self.layout.count(),
        }
    }
}

impl FramePolicy for RankStatic {
    fn alloc(&mut self, req: &FrameRequest, ctx: &mut AllocContext) -> Option<u32> {
        let ranks = self.layout.count();
        let mut rank = self.preferred(req.thread);
        if self.mapping_error > 0.0 && ranks > 1 && self.rng.unit() < self.mapping_error {
            // Uniform over the R - 1 other ranks.
            let other = self.rng.below(ranks as u64 - 1) as u32;
            rank = if other >= rank { other + 1 } else { other };
            ctx.stats.mapping_errors += 1;
        }
        for step in 0..ranks {
            let r = (rank + step) % ranks;
            let Some(pool) = self.free.pool_for_key(self.layout.key(r)) else {
                continue;
            };
            if let Some(frame) = self.free.take_from_pool(pool) {
                if step > 0 {
                    ctx.stats.rank_full_fallbacks += 1;
                }
                return Some(frame);
            }
        }
        None
    }

    fn free(&mut self, frame: u32) {
        self.free.free(frame);
    }

    fn frames(&self) -> &FreeFrames {
        &self.free
    }

    /// The preferred rank, and as second the next rank up (where its pages go when its rank
    /// is full).
    fn thread_ranks(&self, thread: u32) -> Option<(u32, u32)> {
        let r = self.preferred(thread);
        Some((r, (r + 1) % self.layout.count()))
    }
}
