//! The bulk engine of one channel controller: executes in-DRAM segments (RowClone FPM rows,
//! PSM TRANSFER lines, seed-row writes) in order, one command at a time, deciding each command
//! from the device's bank state, so it opens, reuses or closes rows as needed. It has the
//! command bus whenever its next command is ready. While it works on a bank, requests from
//! the queues leave that bank alone (the bank is locked), and a rank's refresh waits until
//! the engine has finished its segment and precharged its banks there; a new segment on a
//! rank with a refresh due waits for the refresh. After a segment it keeps a row open only
//! if the next segment uses it; otherwise it precharges, and the segment is done when its
//! data is written and its banks are closed. TRR issues only when its TRW can follow in
//! the next cycle, as TRANSFER's two command cycles (`spec/rowclone.rs`).

use super::refresh::Refresh;
use crate::device::{Device, RankActivity};
use crate::mapping::DramAddr;
use crate::segment::{Move, Segment, SegmentKind};
use crate::spec::{Command, Spec};
use std::collections::VecDeque;

pub enum Tick {
    /// A command went out this cycle.
    Issued,
    /// Nothing to issue before this cycle (u64::MAX: nothing of the engine's own).
    Wait(u64),
}

pub struct BulkEngine {
    queue: VecDeque<Segment>,
    /// The head segment has issued a command.
    started: bool,
    /// FPM: ACT2 issued; TRANSFER: TRR issued.
    half_done: bool,
    /// Banks the head segment must precharge before it is done.
    closing: Vec<DramAddr>,
    /// Banks the engine opened and has not closed.
    held: Vec<DramAddr>,
    /// Per flat bank index: requests from the queues must not touch it.
    locked: Vec<bool>,
    locked_list: Vec<u32>,
    /// End of the head segment's last data transfer or precharge so far.
    done_at: u64,
    write_end: u64,
    read_end: u64,
    precharge: u64,
    /// Segments finished: (operation, cycle its work ended).
    pub finished: Vec<(u32, u64)>,
    /// Image changes made by data that moved.
    pub moves: Vec<Move>,
    /// Commands issued, for the bulk energy.
    pub activity: RankActivity,
}

impl BulkEngine {
    pub fn new(spec: &Spec) -> BulkEngine {
        let t = &spec.timing;
        let o = &spec.organisation;
        BulkEngine {
            queue: VecDeque::new(),
            started: false,
            half_done: false,
            closing: Vec::new(),
            held: Vec::new(),
            locked: vec![false; (o.ranks * o.banks_per_rank()) as usize],
            locked_list: Vec::new(),
            done_at: 0,
            write_end: (t.n_cwl + t.n_bl) as u64,
            read_end: (t.n_cl + t.n_bl) as u64,
            precharge: t.n_rp as u64,
            finished: Vec::new(),
            moves: Vec::new(),
            activity: RankActivity::default(),
        }
    }

    pub fn push(&mut self, segment: Segment) {
        self.queue.push_back(segment);
        if self.queue.len() == 1 {
            self.relock();
        }
    }

    #[inline]
    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.held.is_empty()
    }

    /// Per-bank locks, when any bank is locked.
    #[inline]
    pub fn locked(&self) -> Option<&[bool]> {
        if self.locked_list.is_empty() {
            None
        } else {
            Some(&self.locked)
        }
    }

    /// Whether the engine has a row open in `rank` (its refresh must wait).
    pub fn holds_rank(&self, rank: u32) -> bool {
        self.held.iter().any(|a| a.rank == rank)
    }

    fn relock(&mut self) {
        for &b in &self.locked_list {
            self.locked[b as usize] = false;
        }
        self.locked_list.clear();
        let head = self.queue.front().map(|s| s.rows()).unwrap_or([None, None]);
        let banks = self
            .held
            .iter()
            .map(|a| a.bank_index)
            .chain(head.iter().flatten().map(|&(b, _)| b));
        for b in banks {
            if !self.locked[b as usize] {
                self.locked[b as usize] = true;
                self.locked_list.push(b);
            }
        }
    }

    fn issue(&mut self, dev: &mut Device, cmd: Command, a: &DramAddr, now: u64) -> Tick {
        dev.issue(cmd, a, now);
        let act = &mut self.activity;
        match cmd {
            Command::Act | Command::Act2 => {
                act.acts += 1;
                if !self.held.iter().any(|h| h.bank_index == a.bank_index) {
                    self.held.push(*a);
                }
            }
            Command::Pre => {
                act.precharges += 1;
                self.held.retain(|h| h.bank_index != a.bank_index);
                self.done_at = self.done_at.max(now + self.precharge);
            }
            Command::Trr => {
                act.transfer_reads += 1;
                self.done_at = self.done_at.max(now + self.read_end);
            }
            Command::Trw => {
                act.transfer_writes += 1;
                self.done_at = self.done_at.max(now + self.write_end);
            }
            Command::Wr => {
                act.writes += 1;
                self.done_at = self.done_at.max(now + self.write_end);
            }
            _ => unreachable!("the bulk engine issues ACT, ACT2, PRE, TRR, TRW and WR"),
        }
        self.started = true;
        self.relock();
        Tick::Issued
    }

    /// Issues `cmd` at `a` if it is ready by `now`, else says when it will be.
    fn try_issue(&mut self, dev: &mut Device, cmd: Command, a: &DramAddr, now: u64) -> Tick {
        let t = dev.earliest(cmd, a);
        if t <= now {
            self.issue(dev, cmd, a, now)
        } else {
            Tick::Wait(t)
        }
    }

    /// The command that opens `a`'s row (PRE of another row, or ACT) and its ready cycle;
    /// None when the row is open.
    fn opening(dev: &Device, a: &DramAddr) -> Option<(Command, u64)> {
        match dev.open_row(a) {
            Some(r) if r == a.row => None,
            Some(_) => Some((Command::Pre, dev.earliest(Command::Pre, a))),
            None => Some((Command::Act, dev.earliest(Command::Act, a))),
        }
    }

    /// One cycle: issues the engine's next command if it is ready.
    #[inline(never)]
    pub fn tick(&mut self, dev: &mut Device, refresh: &Refresh, now: u64) -> Tick {
        loop {
            if !self.closing.is_empty() {
                self.closing.retain(|a| dev.open_row(a).is_some());
                if let Some(&a) = self
                    .closing
                    .iter()
                    .min_by_key(|a| dev.earliest(Command::Pre, a))
                {
                    return self.try_issue(dev, Command::Pre, &a, now);
                }
                self.finish_head();
                continue;
            }
            let Some(head) = self.queue.front() else {
                return Tick::Wait(u64::MAX);
            };
            let rank = head.rank();
            if !self.started && refresh.is_pending(rank) {
                // Close what the engine holds in the rank; the refresh goes next.
                if let Some(&a) = self.held.iter().find(|a| a.rank == rank) {
                    let done_at = self.done_at;
                    let tick = self.try_issue(dev, Command::Pre, &a, now);
                    (self.started, self.done_at) = (false, done_at);
                    return tick;
                }
                return Tick::Wait(u64::MAX);
            }
            return match head.kind {
                SegmentKind::Fpm { src, dst } => {
                    if let Some((cmd, _)) = Self::opening(dev, &src) {
                        return self.try_issue(dev, cmd, &src, now);
                    }
                    match self.try_issue(dev, Command::Act2, &dst, now) {
                        Tick::Issued => {
                            self.data_moved();
                            self.closing.push(dst);
                            Tick::Issued
                        }
                        wait => wait,
                    }
                }
                SegmentKind::Transfer { src, dst } => {
                    self.transfer_step(dev, refresh, (src, dst), now)
                }
                SegmentKind::WriteLine { dst } => {
                    if let Some((cmd, _)) = Self::opening(dev, &dst) {
                        return self.try_issue(dev, cmd, &dst, now);
                    }
                    match self.try_issue(dev, Command::Wr, &dst, now) {
                        Tick::Issued => {
                            self.data_moved();
                            self.release(refresh, &[dst]);
                            Tick::Issued
                        }
                        wait => wait,
                    }
                }
            };
        }
    }

    /// The next command of the head TRANSFER from `src` to `dst`: the rows' openings, then
    /// TRR (its TRW ready one cycle later), then TRW.
    #[inline]
    fn transfer_step(
        &mut self,
        dev: &mut Device,
        refresh: &Refresh,
        (src, dst): (DramAddr, DramAddr),
        now: u64,
    ) -> Tick {
        if self.half_done {
            let issued = self.try_issue(dev, Command::Trw, &dst, now);
            debug_assert!(matches!(issued, Tick::Issued), "TRW follows its TRR");
            if matches!(issued, Tick::Issued) {
                self.data_moved();
                self.release(refresh, &[src, dst]);
            }
            return issued;
        }
        let opening = [Self::opening(dev, &src), Self::opening(dev, &dst)];
        let first = opening
            .iter()
            .zip([src, dst])
            .filter_map(|(o, a)| o.map(|(c, t)| (t, c, a)))
            .min_by_key(|&(t, _, _)| t);
        if let Some((_, cmd, a)) = first {
            return self.try_issue(dev, cmd, &a, now);
        }
        let ready = dev
            .earliest(Command::Trr, &src)
            .max(dev.earliest(Command::Trw, &dst).saturating_sub(1));
        if ready > now {
            return Tick::Wait(ready);
        }
        self.half_done = true;
        self.issue(dev, Command::Trr, &src, now)
    }

    /// The head segment's data has moved: its image changes apply now.
    fn data_moved(&mut self) {
        let head = self.queue.front_mut().expect("a head segment");
        self.moves.append(&mut head.moves);
        self.half_done = true;
    }

    /// After the head's last data command: keep open the rows the next segment uses (unless a
    /// refresh is due in their rank), close the others; the head is done once they are closed.
    fn release(&mut self, refresh: &Refresh, banks: &[DramAddr]) {
        let next = self.queue.get(1).map(|s| s.rows()).unwrap_or([None, None]);
        for a in banks {
            let reused = next
                .iter()
                .flatten()
                .any(|&(b, r)| b == a.bank_index && r == a.row);
            if (!reused || refresh.is_pending(a.rank))
                && !self.closing.iter().any(|c| c.bank_index == a.bank_index)
            {
                self.closing.push(*a);
            }
        }
        if self.closing.is_empty() {
            self.finish_head();
        }
    }

    fn finish_head(&mut self) {
        let head = self.queue.pop_front().expect("a head segment");
        self.finished.push((head.op, self.done_at));
        self.started = false;
        self.half_done = false;
        self.done_at = 0;
        self.relock();
    }
}
