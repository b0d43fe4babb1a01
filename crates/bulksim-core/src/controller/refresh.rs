//! All-bank refresh bookkeeping: each rank owes one REF every tREFI (at the configured
//! granularity, resolved into the spec's nREFI/nRFC). Staggered ranks are offset over tREFI:
//! per channel rank r's first REF falls due at (r + 1) * tREFI / ranks, or system-wide rank
//! k = channel * ranks + r at (k + 1) * tREFI / (channels * ranks); simultaneous ranks all fall
//! due at tREFI. A due rank is blocked for new commands until its banks are precharged (PREA)
//! and the REF issues; a postponing scheme (`refresh_scheme`) decides when an owed REF blocks
//! its rank instead. Under `elastic_deadline = "window"`, elastic refresh's windows of 8 tREFI
//! are staggered as the REFs are: a rank first due at d ends its windows at 8d + (8k + 1)
//! tREFI (under `per_ref`, the default, each owed REF has its own deadline instead). An idle
//! controller may book whole rounds of refreshes at once (`skip_rounds`): each rank refreshes
//! exactly when due while nothing else happens, so the rounds are known in closed form.
//! Under same-bank refresh (DDR5 REFsb) the same schedule owes one REFsb per tREFI /
//! banks_per_group, and `SameBankRefresh` says which bank index each one refreshes: every
//! index once per tREFI (the standard's rule that each bank gets a REFsb before any gets a
//! second), in turn or, bank-idle-aware, the indexes with nothing queued first.

use super::refresh_scheme::{Postponement, RankActivity};
use crate::config::SameBankOrder;

/// How first due cycles are spread over ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Over the channel's ranks.
    PerChannel,
    /// Over all ranks of `channels` channels; this is `channel`.
    System { channel: u32, channels: u32 },
    /// Every rank at once.
    Simultaneous,
}

#[derive(Clone, Debug)]
pub struct Refresh {
    enabled: bool,
    interval: u64,
    next_due: Vec<u64>,
    pending: Vec<bool>,
    any: bool,
    postponement: Postponement,
    /// Per rank, the end of its first window of 8 tREFI (elastic refresh forces what the rank
    /// still owes at each window's end): tREFI + 8 x its first REF's due cycle, so that the
    /// ranks' window ends keep their places in the stagger, 8 tREFI / N apart as their REFs
    /// are tREFI / N apart; the last rank's (first due at tREFI) ends 8 tREFI after its first
    /// REF, as a lone rank's does.
    first_window_end: Vec<u64>,
    /// Per rank not blocked, the cycle it will be at the latest (postponing schemes).
    wake: Vec<u64>,
    /// Per rank, the cycle it was last blocked (postponing schemes).
    blocked_since: Vec<u64>,
    /// Whether an owed refresh blocks its whole rank (all-bank REF); false under same-bank
    /// refresh, whose owed REFsb holds its bank set (`SameBankRefresh::locked`) and its rank
    /// only once the set is closed (`hold_rank`).
    blocks_ranks: bool,
    /// Same-bank refresh: the ranks held for a REFsb whose banks are closed.
    held: Vec<bool>,
}

impl Refresh {
    /// Refresh of one channel's `ranks` ranks, each every `interval` cycles, staggered over
    /// `ranks` or, system-wide, over all `channels * ranks` ranks; `simultaneous` puts every
    /// rank's first REF at `interval`.
    pub fn new(enabled: bool, ranks: usize, interval: u64) -> Refresh {
        Self::scheduled(enabled, ranks, interval, Schedule::PerChannel)
    }

    pub fn scheduled(enabled: bool, ranks: usize, interval: u64, schedule: Schedule) -> Refresh {
        let next_due = (0..ranks as u64)
            .map(|r| match schedule {
                Schedule::PerChannel => (r + 1) * interval / ranks as u64,
                Schedule::System { channel, channels } => {
                    let k = channel as u64 * ranks as u64 + r;
                    (k + 1) * interval / (channels as u64 * ranks as u64)
                }
                Schedule::Simultaneous => interval,
            })
            .collect::<Vec<u64>>();
        Refresh {
            enabled,
            interval,
            first_window_end: next_due.iter().map(|&d| interval + 8 * d).collect(),
            wake: next_due.clone(),
            next_due,
            pending: vec![false; ranks],
            any: false,
            postponement: Postponement::Demand,
            blocked_since: vec![0; ranks],
            blocks_ranks: true,
            held: vec![false; ranks],
        }
    }

    /// Owed refreshes block no rank until `hold_rank` (same-bank refresh: the controller
    /// locks their banks).
    pub fn blocking_no_rank(mut self) -> Refresh {
        self.blocks_ranks = false;
        self
    }

    /// Same-bank refresh: whether `rank` is held for its REFsb. Held once the REFsb's banks
    /// are closed, so that no new command (an ACT: tRRD_L before a REFsb) keeps delaying it.
    pub fn hold_rank(&mut self, rank: u32, held: bool) {
        self.held[rank as usize] = held;
    }

    /// Owed REFs block their ranks by `postponement`'s rule instead of when due.
    pub fn postponed(mut self, postponement: Postponement) -> Refresh {
        self.postponement = postponement;
        self
    }

    /// Whether REFs block their ranks when due (idle rounds can then be booked in closed
    /// form).
    pub fn on_demand(&self) -> bool {
        self.postponement == Postponement::Demand
    }

    /// Where `rank`'s current refresh began to hold it: its due cycle on demand, else the
    /// cycle its owed REF began to block it.
    pub fn blocked_from(&self, rank: u32) -> u64 {
        match self.postponement {
            Postponement::Demand => self.next_due[rank as usize],
            _ => self.blocked_since[rank as usize],
        }
    }

    /// Blocks ranks by a postponing scheme's rule, from their queued requests.
    #[inline(never)]
    pub fn poll_postponed(&mut self, now: u64, activity: &RankActivity) -> bool {
        if !self.enabled {
            return false;
        }
        let mut any = false;
        for r in 0..self.next_due.len() {
            let blocks = self.postponement.blocks(
                now,
                (self.next_due[r], self.first_window_end[r], self.interval),
                activity.queued[r],
                activity.idle_since[r],
            );
            match blocks {
                Ok(()) => {
                    if !self.pending[r] {
                        self.blocked_since[r] = now;
                    }
                    self.pending[r] = true;
                    any = true;
                }
                Err(at) => {
                    self.pending[r] = false;
                    self.wake[r] = at;
                }
            }
        }
        self.any = any;
        any
    }

    /// Marks ranks whose refresh has fallen due by `now`; returns whether any rank is pending.
    #[inline]
    pub fn poll(&mut self, now: u64) -> bool {
        if !self.enabled {
            return false;
        }
        let mut any = false;
        for (due, pending) in self.next_due.iter().zip(self.pending.iter_mut()) {
            *pending |= now >= *due;
            any |= *pending;
        }
        self.any = any;
        any
    }

    /// Whether any rank is blocked for refresh (as of the last `poll`).
    #[inline]
    pub fn any_pending(&self) -> bool {
        self.any
    }

    #[inline]
    pub fn is_pending(&self, rank: u32) -> bool {
        self.pending[rank as usize]
    }

    /// Per rank, whether it is blocked for refresh (as of the last `poll`): a rank that owes
    /// an all-bank REF, or under same-bank refresh one held for its REFsb.
    #[inline]
    pub fn pending_mask(&self) -> &[bool] {
        if self.blocks_ranks {
            &self.pending
        } else {
            &self.held
        }
    }

    pub fn pending_ranks(&self) -> impl Iterator<Item = u32> + '_ {
        self.pending
            .iter()
            .enumerate()
            .filter(|(_, &p)| p)
            .map(|(r, _)| r as u32)
    }

    /// The cycle `rank`'s pending refresh fell due.
    pub fn due(&self, rank: u32) -> u64 {
        self.next_due[rank as usize]
    }

    /// The REF for `rank` issued: the next one falls due a tREFI after this one was due.
    pub fn done(&mut self, rank: u32) {
        self.pending[rank as usize] = false;
        self.any = self.pending.iter().any(|&p| p);
        self.next_due[rank as usize] += self.interval;
    }

    /// From now on each rank's next REF falls due `interval` cycles after its last one was
    /// due (adaptive refresh switching granularity).
    pub fn set_interval(&mut self, interval: u64) {
        self.interval = interval;
    }

    /// The refresh interval (tREFI), in cycles.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// Whole rounds (every rank refreshing once) that fall due before `until`, counting from
    /// each rank's next due cycle: the last round's latest REF is due before `until`.
    pub fn rounds_before(&self, until: u64) -> u64 {
        let last = self.next_due.iter().copied().max().unwrap_or(u64::MAX);
        if !self.enabled || self.interval == 0 || until <= last {
            return 0;
        }
        (until - 1 - last) / self.interval + 1
    }

    /// The fewest cycles between two consecutive due REFs of the channel (any ranks), over
    /// every future round: the ranks' offsets within a round never change.
    pub fn min_spacing(&self) -> u64 {
        let mut offsets: Vec<u64> = self.next_due.iter().map(|d| d % self.interval).collect();
        offsets.sort_unstable();
        let wrap = offsets[0] + self.interval - offsets[offsets.len() - 1];
        offsets.windows(2).map(|w| w[1] - w[0]).fold(wrap, u64::min)
    }

    /// Moves every rank's next due REF `rounds` intervals on (their REFs were booked at once).
    pub fn skip_rounds(&mut self, rounds: u64) {
        debug_assert!(!self.pending.iter().any(|&p| p));
        for due in &mut self.next_due {
            *due += rounds * self.interval;
        }
    }

    /// Earliest cycle a not-yet-pending rank falls due, or under a postponing scheme is
    /// blocked at the latest (u64::MAX when disabled).
    pub fn next_due(&self) -> u64 {
        if !self.enabled {
            return u64::MAX;
        }
        let due = if self.on_demand() {
            &self.next_due
        } else {
            &self.wake
        };
        due.iter()
            .zip(&self.pending)
            .filter(|(_, &p)| !p)
            .map(|(&d, _)| d)
            .min()
            .unwrap_or(u64::MAX)
    }
}

/// Same-bank refresh's choice of bank index: each rank's REFsb of the current round (one
/// round per tREFI, `banks_per_group` REFsb) cover every bank index once, in the configured
/// order. Written for a bank set of one index per bank group; a per-bank refresh (REFpb)
/// would be the same bookkeeping over a rank's every bank.
#[derive(Clone, Debug)]
pub struct SameBankRefresh {
    order: SameBankOrder,
    pub bankgroups: u32,
    pub banks_per_group: u32,
    /// Per rank, the bank indexes refreshed in its current round (bit b: index b).
    refreshed: Vec<u32>,
    /// Per rank, the index its owed REFsb refreshes, once chosen: kept until it issues, so
    /// that the banks closed for it are the ones it refreshes.
    chosen: Vec<Option<u32>>,
    /// Per bank of the channel, whether it belongs to the set of an owed REFsb: requests to
    /// it wait (the scheduler's bank locks), so that the set closes and stays closed.
    locked: Vec<bool>,
    /// `locked` or the bulk engine's locks, when both lock banks.
    merged: Vec<bool>,
    /// Ranks whose owed REFsb locks its set.
    locking: u32,
    /// Cycles before its REFsb's earliest cycle that a rank is held (no new ACT), so that no
    /// ACT of another bank delays the REFsb (tRRD_L); 0 until the controller sets it.
    pub hold_window: u64,
}

impl SameBankRefresh {
    pub fn new(order: SameBankOrder, ranks: usize, bankgroups: u32, banks_per_group: u32) -> Self {
        assert!((1..=32).contains(&banks_per_group));
        SameBankRefresh {
            order,
            bankgroups,
            banks_per_group,
            refreshed: vec![0; ranks],
            chosen: vec![None; ranks],
            locked: vec![false; ranks * (bankgroups * banks_per_group) as usize],
            merged: vec![false; ranks * (bankgroups * banks_per_group) as usize],
            locking: 0,
            hold_window: 0,
        }
    }

    /// The banks of `rank`'s set of bank index `bank`, as bank indexes of the channel.
    fn set(&self, rank: u32, bank: u32) -> impl Iterator<Item = usize> {
        let per_group = self.banks_per_group as usize;
        let first = rank as usize * self.bankgroups as usize * per_group + bank as usize;
        (0..self.bankgroups as usize).map(move |g| first + g * per_group)
    }

    fn lock(&mut self, rank: u32, bank: u32, locked: bool) {
        for b in self.set(rank, bank).collect::<Vec<_>>() {
            self.locked[b] = locked;
        }
        if locked {
            self.locking += 1;
        } else {
            self.locking -= 1;
        }
    }

    /// The per-bank locks requests must respect: the owed REFsb's sets, with the bulk
    /// engine's `bulk` locks; None when no bank is locked.
    #[inline]
    pub fn locks<'a>(&'a mut self, bulk: Option<&'a [bool]>) -> Option<&'a [bool]> {
        match (self.locking, bulk) {
            (0, bulk) => bulk,
            (_, None) => Some(&self.locked),
            (_, Some(bulk)) => {
                for (m, (&a, &b)) in self.merged.iter_mut().zip(self.locked.iter().zip(bulk)) {
                    *m = a || b;
                }
                Some(&self.merged)
            }
        }
    }

    /// The bank index `rank`'s owed REFsb refreshes. Chosen at the first call after the
    /// previous REFsb: round robin takes the lowest index not yet refreshed in the round;
    /// bank-idle-aware the lowest such index for which `idle` holds (no request queued),
    /// else the lowest left.
    pub fn bank_for(&mut self, rank: u32, idle: impl Fn(u32) -> bool) -> u32 {
        let r = rank as usize;
        if let Some(bank) = self.chosen[r] {
            return bank;
        }
        let refreshed = self.refreshed[r];
        let mut left = (0..self.banks_per_group).filter(|b| refreshed & (1 << b) == 0);
        let first_left = left.clone().next().expect("a round has an index left");
        let bank = match self.order {
            SameBankOrder::RoundRobin => first_left,
            SameBankOrder::BankIdleAware => left.find(|&b| idle(b)).unwrap_or(first_left),
        };
        self.chosen[r] = Some(bank);
        self.lock(rank, bank, true);
        bank
    }

    /// `rank`'s REFsb of `bank` issued: the round ends once every index is refreshed.
    pub fn done(&mut self, rank: u32, bank: u32) {
        let r = rank as usize;
        self.refreshed[r] |= 1 << bank;
        if self.refreshed[r].count_ones() == self.banks_per_group {
            self.refreshed[r] = 0;
        }
        self.chosen[r] = None;
        self.lock(rank, bank, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bank_rounds_cover_every_index_once_in_either_order() {
        let mut rr = SameBankRefresh::new(SameBankOrder::RoundRobin, 1, 8, 4);
        let mut taken = Vec::new();
        for _ in 0..8 {
            let b = rr.bank_for(0, |_| false);
            assert_eq!(rr.bank_for(0, |_| true), b, "kept until it issues");
            // Bank b of each of the 8 groups is locked until the REFsb issues.
            let locked: Vec<usize> = (0..32).filter(|&i| rr.locks(None).unwrap()[i]).collect();
            assert_eq!(
                locked,
                (0..8).map(|g| g * 4 + b as usize).collect::<Vec<_>>()
            );
            rr.done(0, b);
            assert_eq!(rr.locks(None), None);
            taken.push(b);
        }
        assert_eq!(taken, [0, 1, 2, 3, 0, 1, 2, 3]);
        // Bank-idle-aware: only index 2 is idle at first, then 0; each round still covers
        // all four, and an index is never taken twice in a round.
        let mut aware = SameBankRefresh::new(SameBankOrder::BankIdleAware, 1, 8, 4);
        let idle_sets: [&[u32]; 8] = [&[2], &[0, 2], &[], &[], &[3], &[3], &[1, 3], &[]];
        let taken: Vec<u32> = idle_sets
            .iter()
            .map(|idle| {
                let b = aware.bank_for(0, |b| idle.contains(&b));
                aware.done(0, b);
                b
            })
            .collect();
        assert_eq!(taken, [2, 0, 1, 3, 3, 0, 1, 2]);
    }

    #[test]
    fn ranks_are_staggered_and_rescheduled_every_interval() {
        let mut r = Refresh::new(true, 4, 1000);
        assert_eq!(r.next_due(), 250);
        assert!(!r.poll(249));
        assert!(r.poll(250));
        assert_eq!(r.pending_ranks().collect::<Vec<_>>(), vec![0]);
        r.done(0);
        assert_eq!(r.next_due(), 500);
        assert!(r.poll(1250));
        assert_eq!(r.pending_ranks().count(), 4);
        assert_eq!(Refresh::new(false, 1, 1000).next_due(), u64::MAX);
    }

    #[test]
    fn system_stagger_spreads_all_ranks_and_simultaneous_aligns_them() {
        // 2 channels x 2 ranks over 1000 cycles: ranks due at 250, 500 (channel 0) and 750,
        // 1000 (channel 1).
        let c1 = Refresh::scheduled(
            true,
            2,
            1000,
            Schedule::System {
                channel: 1,
                channels: 2,
            },
        );
        assert_eq!((c1.due(0), c1.due(1)), (750, 1000));
        let s = Refresh::scheduled(true, 4, 1000, Schedule::Simultaneous);
        assert!((0..4).all(|r| s.due(r) == 1000));
        assert_eq!(s.min_spacing(), 0);
    }

    #[test]
    fn whole_rounds_before_a_cycle_and_spacing_of_due_refs() {
        // Ranks due at 250, 500, 750, 1000: the last round starting at k*1000 ends at
        // 1000 + k*1000, which must lie before `until`.
        let mut r = Refresh::new(true, 4, 1000);
        assert_eq!(r.rounds_before(1000), 0);
        assert_eq!(r.rounds_before(1001), 1);
        assert_eq!(r.rounds_before(2000), 1);
        assert_eq!(r.rounds_before(2001), 2);
        assert_eq!(r.min_spacing(), 250);
        r.skip_rounds(3);
        assert_eq!(r.next_due(), 3250);
        assert_eq!(Refresh::new(true, 1, 900).min_spacing(), 900);
        // Three ranks of an interval 1000: due at 333, 666, 1000 (offset 0): gaps 333, 333, 334.
        assert_eq!(Refresh::new(true, 3, 1000).min_spacing(), 333);
        assert_eq!(Refresh::new(false, 1, 1000).rounds_before(u64::MAX), 0);
    }

    #[test]
    fn elastic_windows_end_in_stagger_order() {
        // System stagger of 4 ranks over 1000 cycles (2 channels x 2 ranks): REFs first due
        // at 250, 500, 750, 1000; windows end at 3000, 5000, 7000, 9000 (then every 8000),
        // 8 tREFI / 4 apart, not 250 apart as windows counted from each first REF.
        let ends: Vec<u64> = (0..2)
            .flat_map(|channel| {
                let r = Refresh::scheduled(
                    true,
                    2,
                    1000,
                    Schedule::System {
                        channel,
                        channels: 2,
                    },
                );
                r.first_window_end
            })
            .collect();
        assert_eq!(ends, [3000, 5000, 7000, 9000]);
        assert_eq!(
            Refresh::scheduled(true, 4, 1000, Schedule::Simultaneous).first_window_end,
            [9000; 4]
        );
        assert_eq!(Refresh::new(true, 1, 1000).first_window_end, [9000]);
    }
}
