//! The circular list the CLOCK policies walk: every usable frame in physical (frame number)
//! order, each with its global rank, and per rank the list positions of its frames, so that a
//! rank's pointer steps over its own frames only while its position in the one list stays
//! comparable with the others' (the "trailing" pointer). A rollover clears every referenced
//! bit except those of the pages the cores' TLBs hold.

use super::ranks::RankLayout;
use super::FrameSite;
use crate::os::frame_table::FrameTable;
use crate::os::tlb::Tlbs;

#[derive(Clone, Debug)]
pub struct FrameList {
    /// Usable frames, ascending.
    frames: Vec<u32>,
    /// Per global rank, the positions in `frames` of its frames, ascending.
    by_rank: Vec<Vec<u32>>,
    /// Per position, the virtual page its frame holds (meaningful while in use): the page to
    /// evict. Kept here, per usable frame, rather than per frame of the whole memory.
    pages: Vec<u64>,
}

impl FrameList {
    /// The usable frames of `frames` under `site` (every one decoded once, in order).
    pub fn new(
        frames: usize,
        site: impl Fn(u32) -> Option<FrameSite>,
        layout: &RankLayout,
    ) -> FrameList {
        let mut list = Vec::new();
        let mut by_rank = vec![Vec::new(); layout.count() as usize];
        for f in 0..frames as u32 {
            let Some(s) = site(f) else { continue };
            by_rank[layout.global(&s) as usize].push(list.len() as u32);
            list.push(f);
        }
        FrameList {
            pages: vec![0; list.len()],
            frames: list,
            by_rank,
        }
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// The frame at list position `pos`.
    #[inline]
    pub fn frame(&self, pos: usize) -> u32 {
        self.frames[pos]
    }

    /// `frame`'s list position (it must be usable).
    fn position_of(&self, frame: u32) -> usize {
        self.frames
            .binary_search(&frame)
            .expect("a frame of the list")
    }

    /// The virtual page `frame` holds (as last set).
    pub fn page_in(&self, frame: u32) -> u64 {
        self.pages[self.position_of(frame)]
    }

    /// `frame` now holds virtual page `vpn`.
    pub fn set_page(&mut self, frame: u32, vpn: u64) {
        let pos = self.position_of(frame);
        self.pages[pos] = vpn;
    }

    pub fn ranks(&self) -> usize {
        self.by_rank.len()
    }

    /// Rank `rank`'s list positions.
    #[inline]
    pub fn positions(&self, rank: usize) -> &[u32] {
        &self.by_rank[rank]
    }

    /// Clears every referenced bit of the list's frames except those of in-use frames the
    /// TLBs hold.
    pub fn roll_over(&self, table: &mut FrameTable, tlbs: &Tlbs) {
        for &f in &self.frames {
            table.clear_referenced(f);
        }
        for f in tlbs.frames() {
            if table.refcount(f) > 0 {
                table.set_referenced(f);
            }
        }
    }
}
