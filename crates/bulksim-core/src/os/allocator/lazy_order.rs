//! The scattered order of a large memory, drawn lazily: a forward Fisher-Yates over the frame
//! numbers `0..frames` that fixes position i (a uniform pick among the positions not yet
//! fixed) only when the i-th frame is wanted, so start-up costs nothing and each draw costs one
//! site decode and a few map operations. Only positions a swap moved are stored (a sparse map
//! that grows by at most one entry per draw); every other position still holds its own frame
//! number. Unusable frames come out too: the caller skips them as they are drawn.

use super::{FrameSite, SiteFn};
use crate::rng::SplitMix64;
use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone)]
pub struct LazyOrder {
    site: SiteFn,
    rng: SplitMix64,
    frames: u64,
    /// The next position to fix.
    next: u64,
    /// Positions at or after `next` whose entry a swap replaced: position -> frame.
    moved: BTreeMap<u32, u32>,
}

impl LazyOrder {
    /// The order of `frames` frames (at most 2^32) drawn from `seed`, placed by `site`.
    pub fn new(frames: usize, site: SiteFn, seed: u64) -> LazyOrder {
        debug_assert!(frames as u64 <= 1 << 32, "frame numbers are u32");
        LazyOrder {
            site,
            rng: SplitMix64::new(seed),
            frames: frames as u64,
            next: 0,
            moved: BTreeMap::new(),
        }
    }

    /// The next frame of the order and its site (`None` inside: unusable); `None` once every
    /// frame has been drawn.
    pub fn draw(&mut self) -> Option<(u32, Option<FrameSite>)> {
        if self.next >= self.frames {
            return None;
        }
        // Positions are below `frames` <= 2^32, so they fit u32.
        let i = self.next as u32;
        let j = (self.next + self.rng.below(self.frames - self.next)) as u32;
        self.next += 1;
        // Swap positions i and j; position i is never read again, so its entry goes.
        let at_i = self.moved.remove(&i).unwrap_or(i);
        let frame = if j == i {
            at_i
        } else {
            self.moved.insert(j, at_i).unwrap_or(j)
        };
        Some((frame, (self.site)(frame)))
    }

    /// Whether every frame has been drawn.
    pub fn is_done(&self) -> bool {
        self.next >= self.frames
    }
}

impl fmt::Debug for LazyOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyOrder")
            .field("frames", &self.frames)
            .field("next", &self.next)
            .field("moved", &self.moved.len())
            .finish_non_exhaustive()
    }
}
