//! Write drain: reads go first while writes wait in the write queue; when a scope's writes
//! reach the high watermark (or no read waits) the scope drains: its writes are served until
//! they fall to the low watermark with reads waiting (or run out). Hysteresis keeps bus
//! turnarounds (tWTR, RD-to-WR) rare. The scope is the channel (one state; reads wait during
//! a drain) or each rank (`controller.write_drain.scope = "rank"`: a draining rank's reads
//! wait while the other ranks keep serving reads; `coordinate` starts every rank with writes
//! when one starts). Each drain period is counted where the mode flips, with the banks its
//! writes went to, so keeping these statistics adds nothing to the cycles in which the mode
//! stays: a separate per-cycle check of the mode cost trace replay about 1% of its
//! instructions (docs/performance.md). Periods the high watermark started (the paper's write
//! drains) are counted apart from those started because no read waited. The
//! `equal_priority` and `ideal` policies have no drain periods: the controller schedules
//! reads and writes as one set, or drops writes.

use crate::config::{DrainPolicy, DrainScope};

/// One scope's state (the channel's, or one rank's).
#[derive(Clone, Debug, Default)]
struct Unit {
    writes: usize,
    draining: bool,
    /// Start of the drain period in progress.
    since: u64,
    /// The period in progress was started by the high watermark (not by an empty read queue).
    by_watermark: bool,
    /// Banks written in the drain period in progress (bitset over the channel's banks).
    banks: Vec<u64>,
}

/// One ended drain period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrainPeriod {
    /// The rank drained (None: the whole channel).
    pub rank: Option<u32>,
    pub start: u64,
    pub end: u64,
    /// Distinct banks that received writes during the period.
    pub banks_written: u32,
    /// Started by the high watermark (a rank's, under coordination); else by no read waiting.
    pub by_watermark: bool,
}

#[derive(Clone, Debug)]
pub struct WriteDrain {
    pub policy: DrainPolicy,
    scope: DrainScope,
    coordinate: bool,
    high: usize,
    low: usize,
    /// Write entries one scope unit may hold.
    capacity: usize,
    /// The channel scope's state (a field of its own: the hot path of every tick).
    channel: Unit,
    /// The rank scope's states, one per rank (empty for the channel scope).
    units: Vec<Unit>,
    /// Units draining now.
    draining_units: usize,
    /// Per rank: whether its scope unit is draining (kept for the scheduler's rank masks).
    rank_draining: Vec<bool>,
    /// Drain periods ended so far.
    pub periods: u64,
    /// Memory cycles of those periods, summed.
    pub period_mem_cycles: u64,
    /// Banks written per period, summed over the periods.
    pub banks_written: u64,
    /// Of the periods, those the high watermark started, and their banks written, summed.
    pub watermark_periods: u64,
    pub watermark_banks_written: u64,
    /// Per rank, periods and their cycles (rank scope; empty for the channel scope).
    pub rank_periods: Vec<(u64, u64)>,
    /// Whether to keep each ended period in `recorded`.
    pub record: bool,
    /// Each ended period, in order of its end, when `record` is on.
    pub recorded: Vec<DrainPeriod>,
}

impl WriteDrain {
    /// A drain over `ranks` ranks of `banks` banks in all, with (high, low) watermarks and
    /// `capacity` write entries per scope unit.
    pub fn new(
        policy: DrainPolicy,
        scope: DrainScope,
        coordinate: bool,
        (high, low, capacity): (usize, usize, usize),
        ranks: usize,
        banks: usize,
    ) -> WriteDrain {
        let units = match scope {
            DrainScope::Channel => 0,
            DrainScope::Rank => ranks,
        };
        let unit = Unit {
            banks: vec![0; banks.div_ceil(64)],
            ..Default::default()
        };
        WriteDrain {
            policy,
            scope,
            coordinate,
            high,
            low,
            capacity,
            channel: unit.clone(),
            units: vec![unit; units],
            draining_units: 0,
            rank_draining: vec![false; ranks],
            periods: 0,
            period_mem_cycles: 0,
            banks_written: 0,
            watermark_periods: 0,
            watermark_banks_written: 0,
            rank_periods: match scope {
                DrainScope::Channel => Vec::new(),
                DrainScope::Rank => vec![(0, 0); ranks],
            },
            record: false,
            recorded: Vec::new(),
        }
    }

    /// Whether the write queue is split by rank (each rank's share has its own room).
    #[inline]
    pub fn per_rank(&self) -> bool {
        self.scope == DrainScope::Rank
    }

    /// Whether writes are drained per rank: the rank scope under the watermark policy. The
    /// other policies have no drains, so under them a rank scope only sizes the write queue
    /// (each rank's share); it must not hold writes back waiting for a drain that never comes.
    #[inline]
    pub fn drains_per_rank(&self) -> bool {
        self.scope == DrainScope::Rank && self.policy == DrainPolicy::Watermark
    }

    /// The state unit of `rank`: None for the channel's, else the rank's index.
    #[inline]
    fn unit(&self, rank: u32) -> Option<usize> {
        match self.scope {
            DrainScope::Channel => None,
            DrainScope::Rank => Some(rank as usize),
        }
    }

    #[inline]
    fn state(&mut self, unit: Option<usize>) -> &mut Unit {
        match unit {
            None => &mut self.channel,
            Some(i) => &mut self.units[i],
        }
    }

    /// Whether a write to `rank` finds room.
    #[inline]
    pub fn has_room(&self, rank: u32) -> bool {
        let u = match self.unit(rank) {
            None => &self.channel,
            Some(i) => &self.units[i],
        };
        u.writes < self.capacity
    }

    /// A write to `rank` entered the queue.
    #[inline]
    pub fn write_queued(&mut self, rank: u32) {
        let u = self.unit(rank);
        self.state(u).writes += 1;
    }

    /// A write to `rank`'s bank `bank` (channel-wide index) was served at `now`. A drain
    /// left without writes ends at the next cycle, where the next `update` would end it, so
    /// that the last drain of a run is counted even when nothing ticks after it.
    #[inline]
    pub fn write_served(&mut self, rank: u32, bank: u32, now: u64) {
        let i = self.unit(rank);
        let u = self.state(i);
        u.writes -= 1;
        if u.draining {
            u.banks[bank as usize / 64] |= 1 << (bank % 64);
            if u.writes == 0 {
                self.flip(i, now + 1, false);
            }
        }
    }

    /// Whether any scope unit is draining.
    #[inline]
    pub fn is_draining(&self) -> bool {
        self.draining_units > 0
    }

    /// Per rank, whether it is draining (rank scope).
    #[inline]
    pub fn rank_draining(&self) -> &[bool] {
        &self.rank_draining
    }

    /// Updates every unit's mode from the reads waiting in the channel at cycle `now`;
    /// returns whether any unit is draining.
    #[inline]
    pub fn update(&mut self, reads: usize, now: u64) -> bool {
        if self.units.is_empty() {
            let u = &self.channel;
            let flip = if u.draining {
                u.writes == 0 || (u.writes <= self.low && reads > 0)
            } else {
                u.writes >= self.high || (reads == 0 && u.writes > 0)
            };
            if flip && self.policy == DrainPolicy::Watermark {
                let by_watermark = u.writes >= self.high;
                self.flip(None, now, by_watermark);
            }
            return self.channel.draining;
        }
        if self.policy != DrainPolicy::Watermark {
            return false;
        }
        // Coordinated: some rank started a drain (Some), by its high watermark (true).
        let mut start_all: Option<bool> = None;
        // Coordinated ranks stop together: once every draining rank is down to its low
        // watermark with reads waiting (or out of writes).
        let all_low = self.coordinate
            && reads > 0
            && self
                .units
                .iter()
                .all(|u| !u.draining || u.writes <= self.low);
        for i in 0..self.units.len() {
            let u = &self.units[i];
            if u.draining {
                let low = if self.coordinate {
                    all_low
                } else {
                    u.writes <= self.low && reads > 0
                };
                if u.writes == 0 || low {
                    self.flip(Some(i), now, false);
                }
            } else if u.writes >= self.high || (reads == 0 && u.writes > 0) {
                let by_watermark = u.writes >= self.high;
                self.flip(Some(i), now, by_watermark);
                if self.coordinate {
                    start_all = Some(start_all.unwrap_or(false) || by_watermark);
                }
            }
        }
        if let Some(by_watermark) = start_all {
            for i in 0..self.units.len() {
                if !self.units[i].draining && self.units[i].writes > 0 {
                    self.flip(Some(i), now, by_watermark);
                }
            }
        }
        self.draining_units > 0
    }

    /// Starts (`by_watermark`: the high watermark started it) or ends `unit`'s drain.
    #[cold]
    fn flip(&mut self, unit: Option<usize>, now: u64, by_watermark: bool) {
        let per_rank = self.per_rank();
        let i = unit.unwrap_or(0);
        let u = match unit {
            None => &mut self.channel,
            Some(i) => &mut self.units[i],
        };
        if !u.draining {
            u.draining = true;
            u.since = now;
            u.by_watermark = by_watermark;
            self.draining_units += 1;
        } else {
            u.draining = false;
            self.draining_units -= 1;
            let banks: u32 = u.banks.iter().map(|w| w.count_ones()).sum();
            u.banks.fill(0);
            self.periods += 1;
            self.period_mem_cycles += now - u.since;
            self.banks_written += banks as u64;
            if u.by_watermark {
                self.watermark_periods += 1;
                self.watermark_banks_written += banks as u64;
            }
            if per_rank {
                let p = &mut self.rank_periods[i];
                p.0 += 1;
                p.1 += now - u.since;
            }
            if self.record {
                self.recorded.push(DrainPeriod {
                    rank: per_rank.then_some(i as u32),
                    start: u.since,
                    end: now,
                    banks_written: banks,
                    by_watermark: u.by_watermark,
                });
            }
        }
        let draining = self.state(unit).draining;
        if per_rank {
            self.rank_draining[i] = draining;
        } else {
            self.rank_draining.fill(draining);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(size: usize, high: f64, low: f64) -> WriteDrain {
        let high = ((high * size as f64).round() as usize).clamp(1, size);
        let low = ((low * size as f64).round() as usize).min(high - 1);
        WriteDrain::new(
            DrainPolicy::Watermark,
            DrainScope::Channel,
            false,
            (high, low, size),
            1,
            16,
        )
    }

    fn set_writes(d: &mut WriteDrain, rank: u32, n: usize) {
        let u = d.unit(rank);
        d.state(u).writes = n;
    }

    #[test]
    fn hysteresis_between_watermarks() {
        let mut d = channel(32, 0.8, 0.2); // high 26, low 6
        d.record = true;
        set_writes(&mut d, 0, 25);
        assert!(!d.update(5, 10));
        set_writes(&mut d, 0, 26);
        assert!(d.update(5, 11));
        d.write_served(0, 3, 11);
        d.write_served(0, 3, 11);
        d.write_served(0, 7, 11);
        set_writes(&mut d, 0, 7);
        assert!(d.update(5, 12));
        set_writes(&mut d, 0, 6);
        assert!(!d.update(5, 20));
        set_writes(&mut d, 0, 1);
        assert!(d.update(0, 30), "drains when no read waits");
        assert!(d.update(0, 31));
        set_writes(&mut d, 0, 0);
        assert!(!d.update(0, 35));
        // Two drain periods: cycles 11..20 (banks 3 and 7 written), started by the high
        // watermark, and 30..35, started because no read waited.
        assert_eq!((d.periods, d.period_mem_cycles), (2, 9 + 5));
        assert_eq!(d.banks_written, 2);
        assert_eq!((d.watermark_periods, d.watermark_banks_written), (1, 2));
        let spans: Vec<_> = d
            .recorded
            .iter()
            .map(|p| (p.start, p.end, p.banks_written, p.by_watermark))
            .collect();
        assert_eq!(spans, [(11, 20, 2, true), (30, 35, 0, false)]);
        assert_eq!(d.rank_draining(), [false]);
    }

    #[test]
    fn ranks_drain_on_their_own_unless_coordinated() {
        for coordinate in [false, true] {
            let mut d = WriteDrain::new(
                DrainPolicy::Watermark,
                DrainScope::Rank,
                coordinate,
                (10, 5, 20),
                2,
                32,
            );
            set_writes(&mut d, 0, 10);
            set_writes(&mut d, 1, 3);
            assert!(d.update(4, 0));
            assert_eq!(
                d.rank_draining(),
                [true, coordinate],
                "coordinate {coordinate}"
            );
            // Rank 0 falls to its low watermark: alone it stops; coordinated, it waits
            // until rank 1 is low too (it is: 3 writes).
            set_writes(&mut d, 0, 5);
            assert!(!d.update(4, 1));
            assert_eq!(d.rank_draining(), [false, false]);
            // Rank 0's drain was its high watermark's; rank 1's, started with it, is too.
            assert_eq!(d.watermark_periods, 1 + coordinate as u64);
            assert_eq!(d.periods, 1 + coordinate as u64);
            // No read waiting: rank 1 drains its 3 writes, not a watermark drain.
            set_writes(&mut d, 0, 0);
            assert!(d.update(0, 2));
            set_writes(&mut d, 1, 0);
            assert!(!d.update(0, 3));
            assert_eq!(d.watermark_periods, 1 + coordinate as u64);
            assert_eq!(d.periods, 2 + coordinate as u64);
            set_writes(&mut d, 0, 20);
            assert!(!d.has_room(0), "2 x high entries per rank");
        }
    }

    #[test]
    fn other_policies_never_drain() {
        for policy in [DrainPolicy::EqualPriority, DrainPolicy::Ideal] {
            let mut d = WriteDrain::new(policy, DrainScope::Channel, false, (26, 6, 32), 1, 16);
            set_writes(&mut d, 0, 32);
            assert!(!d.update(0, 5));
            assert_eq!(d.periods, 0);
        }
    }
}
