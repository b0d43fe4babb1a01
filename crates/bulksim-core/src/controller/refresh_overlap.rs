//! Refresh overlap: how long refreshes of different ranks ran at the same time, among the
//! ranks a staggered schedule spreads (a channel's ranks, or every rank of the device under
//! `controller.refresh.stagger = "system"`). Staggering is meant to keep one rank refreshing
//! at a time; when N x tRFC exceeds tREFI (e.g. 4 ranks at FGR-4x and extended temperature:
//! 4 x 350 ns > 975 ns) that is impossible and refreshes overlap. Each REF adds the part of its
//! tRFC during which another rank's refresh, begun earlier, was still running. Besides,
//! `RefreshConcurrency` counts over all of a device's ranks how many refresh at once (each
//! REF's tRFC), whatever the schedule or scheme: the most at once, and for how long at least
//! k did. Peak power follows the most ranks refreshing at once, which is why refreshes are
//! staggered (the Rank Assignment paper's §III-A).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Refresh intervals of a device's ranks, for their overlap.
#[derive(Clone, Debug)]
pub struct RefreshOverlap {
    /// Ranks per channel.
    ranks: usize,
    /// Whether ranks of different channels count against each other.
    system: bool,
    /// Per global rank (channel * ranks + rank), the end of its latest refresh.
    busy_until: Vec<u64>,
    /// Memory cycles of overlap, summed over REFs.
    pub cycles: u64,
}

impl RefreshOverlap {
    pub fn new(channels: usize, ranks: usize, system: bool) -> RefreshOverlap {
        RefreshOverlap {
            ranks,
            system,
            busy_until: vec![0; channels * ranks],
            cycles: 0,
        }
    }

    /// The end of the latest refresh of any rank.
    pub fn latest_end(&self) -> u64 {
        self.busy_until.iter().copied().max().unwrap_or(0)
    }

    /// `rank` of `channel` refreshes over [start, end).
    pub fn refresh(&mut self, channel: u32, rank: u32, start: u64, end: u64) {
        let me = channel as usize * self.ranks + rank as usize;
        let peers = if self.system {
            0..self.busy_until.len()
        } else {
            let first = channel as usize * self.ranks;
            first..first + self.ranks
        };
        let latest = peers
            .filter(|&k| k != me)
            .map(|k| self.busy_until[k])
            .max()
            .unwrap_or(0);
        self.cycles += latest.min(end).saturating_sub(start);
        self.busy_until[me] = end;
    }
}

/// REFs of one rank, `count` of them `period` cycles apart, the first refreshing over
/// [start, start + busy): one REF, or a round of an idle controller booked in closed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RefSeries {
    pub start: u64,
    pub busy: u64,
    pub period: u64,
    pub count: u64,
}

/// How many of a device's ranks refresh at once. REFs arrive as they issue (or are booked
/// ahead by an idle controller), never starting before the cycle they are reported in, so a
/// sweep in start order can close everything that starts by that cycle.
#[derive(Clone, Debug, Default)]
pub struct RefreshConcurrency {
    /// REFs reported but not swept yet, earliest start first.
    pending: BinaryHeap<Reverse<RefSeries>>,
    /// Ends of the refreshes running at `swept_to`.
    running: Vec<u64>,
    /// Cycle up to which the time at each concurrency is counted.
    swept_to: u64,
    /// Per k: memory cycles during which exactly k ranks refreshed (index 0 unused).
    cycles_at: Vec<u64>,
    /// The most ranks refreshing at the same cycle.
    pub most: u64,
}

impl RefreshConcurrency {
    /// Reports REFs; `now` is the current cycle: none of them starts before it.
    pub fn add(&mut self, series: RefSeries, now: u64) {
        debug_assert!(series.start >= now);
        if series.count > 0 && series.busy > 0 {
            self.pending.push(Reverse(series));
        }
    }

    /// Sweeps every REF starting at or before `now` (none reported later can).
    pub fn advance(&mut self, now: u64) {
        while self.skip_repeating_periods(now) {}
        self.sweep(now);
    }

    /// An idle controller books its ranks' rounds as series of one period, which may span
    /// billions of REFs: when the pending series of one period have one REF each per period
    /// (at least four left) and nothing else pending starts within three periods, two
    /// periods are swept; if the second leaves the running
    /// refreshes where the first did (relative to its end), every period after it repeats
    /// the second until a series runs out, and the periods whose REFs all start by `now`
    /// and before anything else pending are counted in closed form. True while it made progress.
    fn skip_repeating_periods(&mut self, now: u64) -> bool {
        // The series of the earliest one's period with at least four REFs left; anything
        // else pending (a single REF, such as the one that ends an idle gap) must start after
        // the periods swept and skipped.
        let Some(period) = self
            .pending
            .iter()
            .filter(|r| r.0.period > 0 && r.0.count >= 4)
            .min()
            .map(|r| r.0.period)
        else {
            return false;
        };
        let (series, others): (Vec<RefSeries>, Vec<RefSeries>) = self
            .pending
            .iter()
            .map(|r| r.0)
            .partition(|s| s.period == period && s.count >= 4);
        let limit = others
            .iter()
            .map(|s| s.start - 1)
            .min()
            .unwrap_or(u64::MAX)
            .min(now);
        let first = series.iter().map(|s| s.start).min().unwrap_or(0);
        let last = series.iter().map(|s| s.start).max().unwrap_or(0);
        let fewest = series.iter().map(|s| s.count).min().unwrap_or(0);
        if last - first >= period || limit < last.saturating_add(3 * period) {
            return false;
        }
        self.sweep(last);
        let before = (self.running_from_now(), self.cycles_at.clone());
        self.sweep(last + period);
        if self.running_from_now() != before.0 {
            return true;
        }
        let swept_to = self.swept_to;
        let skip = (fewest - 3).min((limit - swept_to) / period);
        if skip == 0 {
            return false;
        }
        for (k, c) in self.cycles_at.iter_mut().enumerate() {
            *c += skip * (*c - before.1.get(k).copied().unwrap_or(0));
        }
        let shift = skip * period;
        // The series swept twice: each now starts two periods later.
        let next: Vec<u64> = series.iter().map(|s| s.start + 2 * period).collect();
        self.swept_to += shift;
        for end in &mut self.running {
            *end += shift;
        }
        self.pending = self
            .pending
            .drain()
            .map(|Reverse(s)| {
                if s.period == period && next.contains(&s.start) {
                    Reverse(RefSeries {
                        start: s.start + shift,
                        count: s.count - skip,
                        ..s
                    })
                } else {
                    Reverse(s)
                }
            })
            .collect();
        false
    }

    /// The running refreshes' ends, less the cycle swept to, in order.
    fn running_from_now(&self) -> Vec<u64> {
        let mut ends: Vec<u64> = self.running.iter().map(|e| e - self.swept_to).collect();
        ends.sort_unstable();
        ends
    }

    fn sweep(&mut self, now: u64) {
        while let Some(&Reverse(s)) = self.pending.peek() {
            if s.start > now {
                break;
            }
            self.pending.pop();
            self.start(s.start, s.start + s.busy);
            if s.count > 1 {
                self.pending.push(Reverse(RefSeries {
                    start: s.start + s.period,
                    count: s.count - 1,
                    ..s
                }));
            }
        }
    }

    fn start(&mut self, start: u64, end: u64) {
        self.end_before(start);
        self.count_to(start);
        self.running.push(end);
        self.most = self.most.max(self.running.len() as u64);
    }

    /// Ends, in order, every running refresh that ends by `t`.
    fn end_before(&mut self, t: u64) {
        while let Some((i, &end)) = self
            .running
            .iter()
            .enumerate()
            .min_by_key(|&(_, &e)| e)
            .filter(|&(_, &e)| e <= t)
        {
            self.count_to(end);
            self.running.swap_remove(i);
        }
    }

    fn count_to(&mut self, t: u64) {
        let k = self.running.len();
        if k > 0 && t > self.swept_to {
            if self.cycles_at.len() <= k {
                self.cycles_at.resize(k + 1, 0);
            }
            self.cycles_at[k] += t - self.swept_to;
        }
        self.swept_to = self.swept_to.max(t);
    }

    /// Per k from 1 to the most at once: memory cycles during which at least k ranks
    /// refreshed, every REF reported so far counted to its end.
    pub fn at_least(&self) -> Vec<u64> {
        let mut all = self.clone();
        all.advance(u64::MAX);
        all.end_before(u64::MAX);
        let mut out = vec![0; all.cycles_at.len().saturating_sub(1)];
        let mut sum = 0;
        for k in (1..all.cycles_at.len()).rev() {
            sum += all.cycles_at[k];
            out[k - 1] = sum;
        }
        out
    }

    /// The most ranks refreshing at once, every REF reported so far counted.
    pub fn most_at_once(&self) -> u64 {
        let mut all = self.clone();
        all.advance(u64::MAX);
        all.most
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_counts_only_peers_still_refreshing() {
        let mut o = RefreshOverlap::new(2, 2, false);
        o.refresh(0, 0, 0, 100);
        o.refresh(1, 0, 10, 110); // another channel: not a peer
        assert_eq!(o.cycles, 0);
        o.refresh(0, 1, 60, 160); // overlaps rank 0 for 40 cycles
        assert_eq!(o.cycles, 40);
        let mut sys = RefreshOverlap::new(2, 2, true);
        sys.refresh(0, 0, 0, 100);
        sys.refresh(1, 0, 10, 110);
        assert_eq!(sys.cycles, 90);
        sys.refresh(1, 1, 200, 300);
        assert_eq!(sys.cycles, 90, "after the others ended");
    }

    fn one(start: u64, busy: u64) -> RefSeries {
        RefSeries {
            start,
            busy,
            period: 0,
            count: 1,
        }
    }

    #[test]
    fn concurrency_counts_time_at_each_number_of_ranks() {
        let mut c = RefreshConcurrency::default();
        // [0, 100), [50, 150), [60, 80), [200, 300): 3 at once over 60..80.
        c.add(one(0, 100), 0);
        c.advance(0);
        c.add(one(50, 100), 50);
        c.add(one(60, 20), 50);
        c.advance(60);
        c.add(one(200, 100), 200);
        assert_eq!(c.most_at_once(), 3);
        // At least 1: 0..150 and 200..300; at least 2: 50..100; at least 3: 60..80.
        assert_eq!(c.at_least(), [250, 50, 20]);
        // Reading the counts changes nothing: more REFs still count.
        c.advance(200);
        c.add(one(250, 10), 250);
        assert_eq!(c.at_least(), [250, 60, 20]);
    }

    #[test]
    fn booked_series_interleave_with_later_refs() {
        let mut c = RefreshConcurrency::default();
        // An idle controller books REFs at 100, 1100, 2100 (busy 50) at cycle 10; another
        // channel's REF issues at 1120 (busy 50): they overlap 30 cycles.
        c.add(
            RefSeries {
                start: 100,
                busy: 50,
                period: 1000,
                count: 3,
            },
            10,
        );
        c.advance(10);
        c.advance(1120);
        c.add(one(1120, 50), 1120);
        c.advance(1120);
        assert_eq!(c.most_at_once(), 2);
        assert_eq!(c.at_least(), [50 + 70 + 50, 30]);
        // Half-open: one ending where another starts is not two at once.
        let mut d = RefreshConcurrency::default();
        d.add(one(0, 10), 0);
        d.advance(10);
        d.add(one(10, 10), 10);
        assert_eq!((d.most_at_once(), d.at_least()), (1, vec![20]));
        assert_eq!(RefreshConcurrency::default().at_least(), Vec::<u64>::new());
    }

    /// Booked rounds counted in closed form give what sweeping them one REF at a time
    /// gives, for overlapping and separate ranks, at any cycle the sweep is read.
    #[test]
    fn repeating_periods_are_counted_as_sweeping_counts_them() {
        // 4 ranks staggered 250 cycles apart in a 1000-cycle period: overlapping (busy
        // about 300) and apart (about 100).
        for (offsets, busy) in [([0, 250, 500, 750], 300), ([0, 250, 500, 750], 100)] {
            let build = || {
                let mut c = RefreshConcurrency::default();
                // The REF that ends the gap, reported with the rounds.
                c.add(one(3_000_500, 400), 0);
                for (r, &o) in offsets.iter().enumerate() {
                    c.add(
                        RefSeries {
                            start: 10 + o,
                            busy: busy + r as u64,
                            period: 1000,
                            count: 5_000,
                        },
                        0,
                    );
                }
                c
            };
            for now in [2_000, 1_234_567, 4_999_999, u64::MAX] {
                let mut fast = build();
                fast.advance(now);
                let mut slow = build();
                slow.sweep(now);
                assert_eq!(fast.swept_to, slow.swept_to, "{now}");
                assert_eq!(fast.cycles_at, slow.cycles_at, "{now}");
                assert_eq!(fast.running_from_now(), slow.running_from_now(), "{now}");
                assert_eq!(fast.at_least(), slow.at_least(), "{now}");
                assert_eq!(fast.most, slow.most);
            }
        }
    }
}
