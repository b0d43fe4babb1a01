//! The `rank_clock` policy: Rank Assignment's modified CLOCK for the page-allocation study
//! (the paper's section IV-C; docs/rank_assignment.md, "Page allocation"). Each thread gets a
//! preferred rank when it starts and a second rank by the same rule among the others
//! (`os.preferred_rank`: most_free or least_delay; the second rank is bulksim's choice); the
//! ranks belong to the thread, wherever it runs. Each rank has a pointer into the one list of
//! usable frames in physical order that steps over that rank's frames only and clears no
//! referenced bit; a request walks its preferred rank's pointer to the first unreferenced
//! frame (free, or in use and then evicted by the OS), which the OS marks referenced. At the
//! end of the list it walks the second rank's pointer; failing that, baseline CLOCK (clearing
//! bits as it passes) from the position of the pointer that trails all others, which then
//! continues past the frame taken. When every pointer has reached the end, every referenced
//! bit is cleared except those of the pages in the cores' TLBs and all pointers restart.
//! Frames shared after fork are passed over, and no page is evicted while a frame is free,
//! as in `clock`.

use super::frame_list::FrameList;
use super::{AllocContext, FramePolicy, FrameRequest, FreeFrames, RankSetup};
use crate::config::PreferredRank;
use crate::os::frame_table::FrameTable;

#[derive(Clone, Debug)]
pub struct RankClock {
    list: FrameList,
    /// Per rank, the index into its positions of the next frame its pointer looks at.
    pointer: Vec<usize>,
    /// Per thread, its (preferred, second) ranks once started.
    threads: Vec<Option<(u32, u32)>>,
    /// Threads whose preferred rank each rank is.
    threads_on: Vec<u32>,
    rule: PreferredRank,
    /// Per rank, the mean DRAM read latency so far (least_delay).
    delays: Vec<f64>,
    free: FreeFrames,
}

impl RankClock {
    pub fn new(list: FrameList, free: FreeFrames, ranks: RankSetup) -> RankClock {
        let n = list.ranks();
        RankClock {
            list,
            pointer: vec![0; n],
            threads: Vec::new(),
            threads_on: vec![0; n],
            rule: ranks.preferred,
            delays: vec![0.0; n],
            free,
        }
    }

    pub fn set_delays(&mut self, delays: &[f64]) {
        for (d, &v) in self.delays.iter_mut().zip(delays) {
            *d = v;
        }
    }

    /// The list position rank `r`'s pointer is at (the list's length at the end).
    fn position(&self, r: usize) -> usize {
        self.list
            .positions(r)
            .get(self.pointer[r])
            .map_or(self.list.len(), |&p| p as usize)
    }

    /// The best rank other than `except` by the configured rule: most unused frames or least
    /// delay, then fewest threads, then lowest index.
    fn best_rank(&self, table: &FrameTable, except: Option<u32>) -> u32 {
        let unused = |r: usize| {
            self.list
                .positions(r)
                .iter()
                .filter(|&&p| table.refcount(self.list.frame(p as usize)) == 0)
                .count()
        };
        let candidates = (0..self.list.ranks() as u32).filter(|&r| Some(r) != except);
        let best = match self.rule {
            PreferredRank::MostFree => candidates
                .map(|r| {
                    (
                        std::cmp::Reverse(unused(r as usize)),
                        self.threads_on[r as usize],
                        r,
                    )
                })
                .min()
                .map(|(_, _, r)| r),
            PreferredRank::LeastDelay => candidates
                .map(|r| (self.delays[r as usize], self.threads_on[r as usize], r))
                .min_by(|a, b| a.partial_cmp(b).expect("delays are finite"))
                .map(|(_, _, r)| r),
        };
        // One rank in all: it is also the second.
        best.unwrap_or(0)
    }

    /// Thread `thread`'s ranks, given now if it has none yet.
    fn ranks_of(&mut self, thread: u32, table: &FrameTable) -> (u32, u32) {
        if let Some(Some(r)) = self.threads.get(thread as usize) {
            return *r;
        }
        let preferred = self.best_rank(table, None);
        let second = if self.list.ranks() > 1 {
            self.best_rank(table, Some(preferred))
        } else {
            preferred
        };
        if self.threads.len() <= thread as usize {
            self.threads.resize(thread as usize + 1, None);
        }
        self.threads[thread as usize] = Some((preferred, second));
        self.threads_on[preferred as usize] += 1;
        (preferred, second)
    }

    /// Rank `r`'s walk: its first unreferenced frame from its pointer on, clearing no bits.
    fn walk_rank(&mut self, r: usize, table: &FrameTable) -> Option<u32> {
        let evict = self.must_evict();
        let positions = self.list.positions(r);
        while self.pointer[r] < positions.len() {
            let f = self.list.frame(positions[self.pointer[r]] as usize);
            self.pointer[r] += 1;
            let takeable = table.refcount(f) == 0 || (table.refcount(f) == 1 && evict);
            if takeable && !table.referenced(f) {
                return Some(f);
            }
        }
        None
    }

    /// Whether no frame is free, so that a walk may evict (none is evicted while one is).
    fn must_evict(&self) -> bool {
        self.free.in_use >= self.free.usable
    }

    /// Baseline CLOCK from the trailing pointer's position: the first unreferenced frame,
    /// clearing the bits of those passed; the trailing pointer continues past it. At the
    /// list's end, every pointer is at the end.
    fn walk_clock(&mut self, table: &mut FrameTable) -> Option<u32> {
        let trailing = (0..self.list.ranks())
            .min_by_key(|&r| (self.position(r), r))
            .expect("a rank");
        let mut hand = self.position(trailing);
        let evict = self.must_evict();
        while hand < self.list.len() {
            let f = self.list.frame(hand);
            hand += 1;
            if table.refcount(f) > 1 || table.clear_referenced(f) {
                continue;
            }
            if table.refcount(f) == 1 && !evict {
                continue;
            }
            self.pointer[trailing] = self
                .list
                .positions(trailing)
                .partition_point(|&p| (p as usize) < hand);
            return Some(f);
        }
        for r in 0..self.list.ranks() {
            self.pointer[r] = self.list.positions(r).len();
        }
        None
    }

    fn all_at_end(&self) -> bool {
        (0..self.list.ranks()).all(|r| self.pointer[r] == self.list.positions(r).len())
    }
}

impl FramePolicy for RankClock {
    fn alloc(&mut self, req: &FrameRequest, ctx: &mut AllocContext) -> Option<u32> {
        let (preferred, second) = self.ranks_of(req.thread, ctx.table);
        // A second round after a rollover finds every frame outside the TLBs unreferenced.
        for _ in 0..2 {
            if self.all_at_end() {
                self.list.roll_over(ctx.table, ctx.tlbs);
                ctx.stats.rollovers += 1;
                self.pointer.iter_mut().for_each(|p| *p = 0);
            }
            let found = if let Some(f) = self.walk_rank(preferred as usize, ctx.table) {
                Some(f)
            } else if let Some(f) = self.walk_rank(second as usize, ctx.table) {
                ctx.stats.second_rank_pages += 1;
                Some(f)
            } else {
                let f = self.walk_clock(ctx.table);
                ctx.stats.clock_pages += f.is_some() as u64;
                f
            };
            if let Some(f) = found {
                if ctx.table.refcount(f) == 0 {
                    self.free.in_use += 1;
                }
                return Some(f);
            }
        }
        None
    }

    fn free(&mut self, _frame: u32) {
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

    fn start_thread(&mut self, thread: u32, table: &FrameTable) {
        self.ranks_of(thread, table);
    }

    fn thread_ranks(&self, thread: u32) -> Option<(u32, u32)> {
        self.threads.get(thread as usize).copied().flatten()
    }
}
