//! The `clock` policy: baseline CLOCK page replacement, the page-allocation study's baseline
//! (docs/rank_assignment.md, "Page allocation"). One pointer walks the usable frames in
//! physical order, clearing the referenced bit of every frame it passes, and takes the first
//! frame whose bit was already clear: a free frame, or one in use whose page the OS then
//! evicts, but only when no frame is free (*choice*: a kernel reclaims only when its free
//! lists are empty; so pages are never evicted while memory suffices). At the end of the
//! list every referenced bit is cleared except those of the pages in the cores' TLBs, and the
//! pointer starts over. Frames shared by several page-table
//! entries (after fork) are passed over, never evicted (bulksim's choice: one page's owner
//! alone is known).

use super::frame_list::FrameList;
use super::{AllocContext, FramePolicy, FrameRequest, FreeFrames};

#[derive(Clone, Debug)]
pub struct Clock {
    list: FrameList,
    /// The next list position the pointer looks at.
    hand: usize,
    free: FreeFrames,
}

impl Clock {
    pub fn new(list: FrameList, free: FreeFrames) -> Clock {
        Clock {
            list,
            hand: 0,
            free,
        }
    }
}

impl FramePolicy for Clock {
    fn alloc(&mut self, _req: &FrameRequest, ctx: &mut AllocContext) -> Option<u32> {
        // While a frame is free none is evicted (a kernel reclaims only when its free
        // lists are empty); a second pass after a rollover then finds one.
        let evict = self.free.in_use >= self.free.usable;
        for _ in 0..2 {
            while self.hand < self.list.len() {
                let f = self.list.frame(self.hand);
                self.hand += 1;
                if ctx.table.refcount(f) > 1 || ctx.table.clear_referenced(f) {
                    continue;
                }
                if ctx.table.refcount(f) == 1 && !evict {
                    continue;
                }
                if ctx.table.refcount(f) == 0 {
                    self.free.in_use += 1;
                }
                return Some(f);
            }
            self.list.roll_over(ctx.table, ctx.tlbs);
            ctx.stats.rollovers += 1;
            self.hand = 0;
        }
        None
    }

    fn free(&mut self, _frame: u32) {
        // The walk finds it: a free frame's referenced bit is clear.
        self.free.in_use -= 1;
    }

    fn frames(&self) -> &FreeFrames {
        &self.free
    }

    fn page_in(&self, frame: u32) -> u64 {
        self.list.page_in(frame)
    }

    fn set_page(&mut self, frame: u32, vpn: u64) {
        self.list.set_page(frame, vpn);
    }
}
