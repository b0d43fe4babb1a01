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

use super::refresh_scheme::{Postponement, RankActivity};

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
        }
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

    /// Per rank, whether it is blocked for refresh (as of the last `poll`).
    #[inline]
    pub fn pending_mask(&self) -> &[bool] {
        &self.pending
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

#[cfg(test)]
mod tests {
    use super::*;

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
