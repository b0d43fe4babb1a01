//! One copy engine beside one cache array: its queue of movblks, the movblk it works on, and
//! the steps of that work (source-line lookups, fetches of missing source lines, the
//! decision to pass the operation down, the shift buffer's realignment, the destination
//! write). Each step takes the time the copy-engines paper gives it (a lookup or write is the
//! level's hit latency, realignment `copy_engine.realign_cycles`, a message the port below),
//! and a fetch waits for the hierarchy's real fill, so misses cost what the levels and memory
//! below make them cost. The array is locked from the moment the engine starts a movblk until
//! it is done with it. Pipelined (`copy_engine.pipeline`), the engine works in two stages: one
//! movblk reads its sources (and decides where it runs) while the one before it realigns and
//! writes its destination, or sends its message down. Where a movblk runs, and what a fetched
//! line does there, is the policy's (`Placement`).

use super::Placement;
use crate::cache::Hierarchy;
use crate::port::Movblk;
use std::collections::VecDeque;

/// What the engine does next for its movblk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Look up source line `i` in the array.
    Lookup(usize),
    /// Every lookup is done: copy here, or pass the operation down.
    Decide,
    /// Ask the level below for source line `i`.
    Fetch(usize),
    /// Wait for source line `i`'s fill.
    WaitFill(usize),
    /// Last level, a destination line this level lacks (`partial_line = "fetch"`): ask for it.
    FetchDst,
    WaitDst,
    Realign,
    Write,
    /// The destination write is over: its bytes land.
    Written,
    /// Look up (and discard) the destination before passing the operation down.
    DstCheck,
    /// Send the operation's two addresses to the engine below.
    Send,
    /// The message has crossed the port: the operation is the engine below's.
    Sent,
}

impl Step {
    /// Whether the finishing stage does it (the destination write or the message down).
    fn is_back(self) -> bool {
        matches!(
            self,
            Step::Realign | Step::Write | Step::Written | Step::DstCheck | Step::Send | Step::Sent
        )
    }
}

/// What advancing an engine produced for the engines around it.
pub enum Outcome {
    /// Nothing new.
    Nothing,
    /// The operation goes to the engine below, arriving at the given time.
    PassDown(Movblk, u64),
}

/// The movblk an engine works on.
struct Work {
    op: Movblk,
    /// Source lines in this level's line size; `n` of them (1 or 2).
    lines: [u64; 2],
    n: usize,
    hit: [bool; 2],
    step: Step,
    /// When the current step is over (fs).
    until: u64,
    started: u64,
}

/// Counters of one engine.
#[derive(Clone, Debug, Default)]
pub struct EngineCounts {
    pub copies: u64,
    pub busy_fs: u64,
    pub passed_down: u64,
    pub dst_discards: u64,
    pub dst_discards_dirty: u64,
    pub fetches: u64,
}

pub struct Engine {
    /// The cache level it sits beside, and the array of that level.
    pub level: usize,
    pub array: usize,
    /// Whether it is the last engine (it always copies).
    pub last: bool,
    /// Movblks waiting, each with the time it reaches the engine (fs).
    pub queue: VecDeque<(Movblk, u64)>,
    /// The movblk reading its source lines and deciding where it runs.
    front: Option<Work>,
    /// The movblk realigning and writing its destination, or sending its message down.
    back: Option<Work>,
    /// When the last movblk was done (fs): busy time counts overlapping movblks once.
    last_done: u64,
    pub counts: EngineCounts,
}

/// Fixed costs the engines share (fs).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub core_fs: u64,
    pub realign_fs: u64,
    pub parallel_reads: bool,
    /// The last level fetches a destination line it lacks before writing part of it.
    pub fetch_partial_dst: bool,
    /// The next movblk reads its sources while the one before it finishes.
    pub pipeline: bool,
    /// A block written alone into a line the level lacks is its only valid sector.
    pub sector_partial_dst: bool,
}

impl Engine {
    pub fn new(level: usize, array: usize, last: bool) -> Engine {
        Engine {
            level,
            array,
            last,
            queue: VecDeque::new(),
            front: None,
            back: None,
            last_done: 0,
            counts: EngineCounts::default(),
        }
    }

    /// Whether it has a movblk queued or in progress.
    pub fn busy(&self) -> bool {
        self.in_progress() > 0 || !self.queue.is_empty()
    }

    /// Movblks in progress (0 to 2).
    fn in_progress(&self) -> usize {
        self.front.is_some() as usize + self.back.is_some() as usize
    }

    /// Movblks queued or in progress.
    pub fn occupancy(&self) -> usize {
        self.queue.len() + self.in_progress()
    }

    /// The movblks in progress, oldest first, and every queued one: none of them performed
    /// yet (its destination written, or its message sent).
    pub fn unperformed(&self) -> impl Iterator<Item = &Movblk> {
        self.back
            .iter()
            .chain(&self.front)
            .map(|w| &w.op)
            .chain(self.queue.iter().map(|(op, _)| op))
    }

    /// Does every step due by `now`; returns what it passes down, if anything.
    pub fn advance(
        &mut self,
        h: &mut Hierarchy,
        now: u64,
        placement: Placement,
        costs: &Costs,
    ) -> Outcome {
        loop {
            // The older movblk first: finishing it may free the stage the younger one needs.
            if self.back.as_ref().is_some_and(|w| w.until <= now) {
                if let Some(out) = self.step_back(h, now, costs) {
                    return out;
                }
                continue;
            }
            if self.back.is_none() && self.front.as_ref().is_some_and(|w| w.step.is_back()) {
                self.back = self.front.take();
                continue;
            }
            if self.front.is_none() && self.may_start(h, now, costs) {
                let (op, _) = self.queue.pop_front().expect("a queued movblk");
                self.start(h, op, now);
                continue;
            }
            match &self.front {
                Some(w) if w.until <= now && !w.step.is_back() => {
                    self.step_front(h, now, placement, costs)
                }
                _ => return Outcome::Nothing,
            }
        }
    }

    /// Whether the queue's first movblk may start now: it has arrived, and the engine is
    /// idle, or pipelined with the movblk before it not writing a line it reads.
    fn may_start(&self, h: &Hierarchy, now: u64, costs: &Costs) -> bool {
        let Some(&(op, arrives)) = self.queue.front() else {
            return false;
        };
        if arrives > now {
            return false;
        }
        match &self.back {
            None => true,
            Some(older) => {
                let lb = h.levels[self.level].line_bytes;
                let dst = older.op.dst / lb;
                costs.pipeline
                    && op.src / lb != dst
                    && op.second_part().map_or(true, |next| next / lb != dst)
            }
        }
    }

    fn start(&mut self, h: &mut Hierarchy, op: Movblk, now: u64) {
        let lb = h.levels[self.level].line_bytes;
        let first = op.src / lb;
        let (lines, n) = match op.second_part() {
            Some(next) if next / lb != first => ([first, next / lb], 2),
            _ => ([first, first], 1),
        };
        h.levels[self.level].locked[self.array] = true;
        self.front = Some(Work {
            op,
            lines,
            n,
            hit: [false; 2],
            step: Step::Lookup(0),
            until: now,
            started: now,
        });
    }

    /// Does the reading stage's current step (due now).
    fn step_front(&mut self, h: &mut Hierarchy, now: u64, placement: Placement, costs: &Costs) {
        let level = self.level;
        let hit_fs = h.levels[level].hit_fs;
        let w = self.front.as_mut().expect("a movblk reading its sources");
        let core = w.op.core;
        match w.step {
            Step::Lookup(i) => {
                w.hit[i] = h.engine_source_hit(level, self.array, &w.op, w.lines[i]);
                let both = costs.parallel_reads && i == 0 && w.n == 2;
                if both {
                    w.hit[1] = h.engine_source_hit(level, self.array, &w.op, w.lines[1]);
                }
                w.until = now + hit_fs;
                w.step = w.after_lookup(i, both, placement);
            }
            Step::Decide => {
                let any_hit = w.hit[..w.n].iter().any(|&x| x);
                w.step = if any_hit || self.last || placement.fetch_at_once {
                    match (0..w.n).find(|&i| !w.hit[i]) {
                        Some(i) => Step::Fetch(i),
                        None => Self::after_sources(self.last, costs, h, level, self.array, w),
                    }
                } else {
                    Step::DstCheck
                };
            }
            Step::Fetch(i) => {
                let allocate = if self.last {
                    placement.allocate_last
                } else {
                    placement.allocate
                };
                if h.engine_fill(level, core, w.lines[i], allocate, now) {
                    self.counts.fetches += 1;
                    w.step = Step::WaitFill(i);
                } else {
                    w.until = now + costs.core_fs; // no MSHR free: try again
                }
            }
            Step::WaitFill(i) => {
                if h.levels[level].has_mshr(core, w.lines[i]) {
                    w.until = now + costs.core_fs;
                    return;
                }
                w.hit[i] = true;
                let next_lookup = placement.fetch_at_once && i + 1 < w.n && !costs.parallel_reads;
                w.step = if next_lookup {
                    Step::Lookup(i + 1)
                } else {
                    match (0..w.n).find(|&k| !w.hit[k]) {
                        Some(k) => Step::Fetch(k),
                        None => Self::after_sources(self.last, costs, h, level, self.array, w),
                    }
                };
            }
            Step::FetchDst => {
                let lb = h.levels[level].line_bytes;
                if h.engine_fill(level, core, w.op.dst / lb, true, now) {
                    w.step = Step::WaitDst;
                } else {
                    w.until = now + costs.core_fs;
                }
            }
            Step::WaitDst => {
                let lb = h.levels[level].line_bytes;
                if h.levels[level].has_mshr(core, w.op.dst / lb) {
                    w.until = now + costs.core_fs;
                    return;
                }
                w.step = Step::Realign;
            }
            step => unreachable!("{step:?} is the finishing stage's"),
        }
    }

    /// Does the finishing stage's current step (due now); `Some` ends this advance.
    fn step_back(&mut self, h: &mut Hierarchy, now: u64, costs: &Costs) -> Option<Outcome> {
        let level = self.level;
        let hit_fs = h.levels[level].hit_fs;
        let w = self.back.as_mut().expect("a movblk finishing");
        let core = w.op.core;
        match w.step {
            Step::Realign => {
                w.until = now + costs.realign_fs;
                w.step = Step::Write;
            }
            Step::Write => {
                // Allocating the destination may first write a dirty victim back.
                let lb = h.levels[level].line_bytes;
                let dst = w.op.dst / lb;
                let present = h.levels[level].arrays[self.array].probe(dst).is_some();
                let victim = if present {
                    0
                } else {
                    h.victim_write_back_fs(level, core, dst, true)
                };
                w.until = now + hit_fs + victim;
                w.step = Step::Written;
            }
            Step::Written => {
                // The destination's bytes land when the write is over.
                let op = w.op;
                self.counts.copies += 1;
                self.done(now);
                h.engine_write(level, self.array, &op, costs.sector_partial_dst);
                self.release(h);
            }
            Step::DstCheck => {
                let lb = h.levels[level].line_bytes;
                let a = &h.levels[level].arrays[self.array];
                if let Some(way) = a.probe(w.op.dst / lb) {
                    self.counts.dst_discards += 1;
                    self.counts.dst_discards_dirty += a.is_dirty(way) as u64;
                    h.discard(level, self.array, w.op.dst / lb);
                }
                w.until = now + hit_fs;
                w.step = Step::Send;
            }
            Step::Send => {
                w.until = now + h.levels[level + 1].port_fs;
                h.levels[level].below_messages += 1;
                w.step = Step::Sent;
            }
            Step::Sent => {
                self.counts.passed_down += 1;
                let op = w.op;
                self.done(now);
                self.release(h);
                return Some(Outcome::PassDown(op, now));
            }
            step => unreachable!("{step:?} is the reading stage's"),
        }
        None
    }

    /// The finishing movblk is done at `now`: busy time runs from its start, or from the
    /// end of the movblk before it if they overlapped.
    fn done(&mut self, now: u64) {
        let w = self.back.take().expect("a movblk finishing");
        self.counts.busy_fs += now - w.started.max(self.last_done);
        self.last_done = now;
    }

    /// The step after every source line is at hand: realign, unless the last level must
    /// first fetch a destination line it lacks.
    fn after_sources(
        last: bool,
        costs: &Costs,
        h: &Hierarchy,
        level: usize,
        array: usize,
        w: &Work,
    ) -> Step {
        let lb = h.levels[level].line_bytes;
        let partial = h.levels[0].line_bytes < lb;
        if last
            && partial
            && costs.fetch_partial_dst
            && h.levels[level].arrays[array].probe(w.op.dst / lb).is_none()
        {
            Step::FetchDst
        } else {
            Step::Realign
        }
    }

    /// The movblk is done (or sent): the array stays locked only for work left.
    fn release(&mut self, h: &mut Hierarchy) {
        if self.queue.is_empty() && self.front.is_none() {
            h.levels[self.level].locked[self.array] = false;
        }
    }
}

impl Work {
    /// The step after looking up source `i` (and the second source too when `both`): fetch
    /// a miss at once where the placement says so, else the next lookup, else the decision.
    #[inline]
    fn after_lookup(&self, i: usize, both: bool, placement: Placement) -> Step {
        let next = if both { 2 } else { i + 1 };
        if placement.fetch_at_once && !self.hit[i] {
            Step::Fetch(i)
        } else if placement.fetch_at_once && both && !self.hit[1] {
            Step::Fetch(1)
        } else if next < self.n {
            Step::Lookup(next)
        } else {
            Step::Decide
        }
    }
}
