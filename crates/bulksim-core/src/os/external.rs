//! Frames the OS does not take from its allocator: a hybrid memory's DRAM frames
//! (docs/hybrid.md). The OS keeps their free list, because both it and the hybrid memory
//! take from it: with `place_above` Some(n) a new page takes the lowest free one before
//! the allocator is asked while more than n are free (`hybrid.placement = "dram_first"`, n
//! the policy's watermark, which promotions keep), and a promotion takes the lowest free
//! one for its destination. Frames are handed out lowest first, the never-used ones
//! counted by a cursor so a large DRAM costs no set at start. Pages placed here are
//! remembered (`placed`) until the hybrid memory takes note of them.

use super::Pid;
use std::collections::BTreeSet;

pub struct ExternalFrames {
    /// Every external frame.
    range: std::ops::Range<u64>,
    /// Frames freed after use, lowest first.
    freed: BTreeSet<u64>,
    /// The next never-used frame; `range.end` when all were used once.
    fresh: u64,
    /// Some(n): new pages take a free external frame before the allocator's while more
    /// than n are free (the n left are the migration policy's).
    place_above: Option<u64>,
    /// (frame, process, virtual page) of pages placed in external frames since the owner
    /// last took them (`take_placed`).
    placed: Vec<(u64, Pid, u64)>,
}

impl ExternalFrames {
    pub fn new(range: std::ops::Range<u64>, place_above: Option<u64>) -> ExternalFrames {
        ExternalFrames {
            fresh: range.start,
            range,
            freed: BTreeSet::new(),
            place_above,
            placed: Vec::new(),
        }
    }

    pub fn contains(&self, frame: u64) -> bool {
        self.range.contains(&frame)
    }

    pub fn range(&self) -> std::ops::Range<u64> {
        self.range.clone()
    }

    /// Free frames.
    pub fn free_count(&self) -> u64 {
        self.freed.len() as u64 + (self.range.end - self.fresh)
    }

    /// The free frame taken next: the lowest freed one, else the next never used.
    pub fn peek(&self) -> Option<u64> {
        match self.freed.first() {
            Some(&f) => Some(f),
            None => (self.fresh < self.range.end).then_some(self.fresh),
        }
    }

    /// Takes the lowest free frame.
    pub fn take(&mut self) -> Option<u64> {
        let f = self.peek()?;
        if !self.freed.remove(&f) {
            self.fresh += 1;
        }
        Some(f)
    }

    /// `frame` is free again.
    pub fn give_back(&mut self, frame: u64) {
        debug_assert!(self.contains(frame), "frame {frame} is not external");
        debug_assert!(
            frame < self.fresh && !self.freed.contains(&frame),
            "frame {frame} is free already"
        );
        self.freed.insert(frame);
    }

    /// A frame for a new page of `pid` at `vpn`, when pages are placed here first and more
    /// than `place_above` frames are free.
    pub(super) fn place(&mut self, pid: Pid, vpn: u64) -> Option<u64> {
        let keep = self.place_above?;
        if self.free_count() <= keep {
            return None;
        }
        let f = self.take()?;
        self.placed.push((f, pid, vpn));
        Some(f)
    }

    /// Whether a page was placed here since the last `take_placed`.
    pub fn has_placed(&self) -> bool {
        !self.placed.is_empty()
    }

    /// The pages placed here since the last call, in placement order.
    pub fn take_placed(&mut self) -> Vec<(u64, Pid, u64)> {
        std::mem::take(&mut self.placed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_go_lowest_first_and_come_back() {
        let mut x = ExternalFrames::new(10..14, None);
        assert_eq!(x.free_count(), 4);
        assert_eq!(x.take(), Some(10));
        assert_eq!(x.take(), Some(11));
        x.give_back(10);
        assert_eq!(
            x.peek(),
            Some(10),
            "a freed frame below the cursor goes first"
        );
        assert_eq!(x.take(), Some(10));
        assert_eq!((x.take(), x.take(), x.take()), (Some(12), Some(13), None));
        assert_eq!(x.free_count(), 0);
    }

    #[test]
    fn placement_only_when_asked_and_remembered_once() {
        let mut off = ExternalFrames::new(0..2, None);
        assert_eq!(off.place(1, 7), None);
        let mut on = ExternalFrames::new(0..2, Some(0));
        assert_eq!(on.place(1, 7), Some(0));
        assert_eq!(on.place(2, 9), Some(1));
        assert_eq!(on.place(2, 10), None, "full: the allocator's turn");
        assert_eq!(on.take_placed(), vec![(0, 1, 7), (1, 2, 9)]);
        assert!(on.take_placed().is_empty());
    }

    #[test]
    fn placement_leaves_the_policys_frames_and_freed_ones_to_it() {
        // 4 frames, 1 kept for promotions: new pages take 3, then a frame freed by a
        // demotion (free again: 2) goes to the next new page only while more than 1 are
        // free.
        let mut x = ExternalFrames::new(0..4, Some(1));
        assert_eq!(
            (x.place(1, 0), x.place(1, 1), x.place(1, 2)),
            (Some(0), Some(1), Some(2))
        );
        assert_eq!(x.place(1, 3), None, "the last free frame is the policy's");
        x.give_back(1);
        assert_eq!(x.place(1, 4), Some(1));
        assert_eq!(x.place(1, 5), None);
        assert_eq!(x.take(), Some(3), "a promotion still gets the kept frame");
    }
}
