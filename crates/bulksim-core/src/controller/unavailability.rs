//! Where a channel's ranks could not serve requests, and why: per rank, each refresh from the
//! cycle it fell due (new commands to the rank wait from then) to the end of its tRFC; per
//! channel or per rank (`controller.write_drain.scope`), each write-drain period (reads of the
//! drained scope wait while writes are served). Totals are always
//! kept; the intervals themselves are kept when asked for (`sim.record_intervals`), for
//! metrics such as "threads stalled per refresh". The controller records refreshes here; the
//! write drain counts its own periods (`write_drain.rs`), added by `with_drains` when read.

use super::write_drain::WriteDrain;
use serde::Serialize;

/// Why a rank or channel could not serve reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Refresh,
    WriteDrain,
}

/// One period of unavailability, in memory cycles [start, end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// The rank (None: a channel-wide write drain, every rank).
    pub rank: Option<u32>,
    pub cause: Cause,
    pub start_mem_cycles: u64,
    pub end_mem_cycles: u64,
    /// A write drain's distinct banks written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banks_written: Option<u32>,
    /// A write drain: whether the write queue's high watermark started it (else no read
    /// waited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_watermark: Option<bool>,
}

/// Unavailability of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RankUnavailability {
    /// Refreshes (REF commands) of the rank.
    pub refreshes: u64,
    /// Memory cycles from each refresh falling due to the end of its tRFC, summed.
    pub refresh_mem_cycles: u64,
    /// Write-drain periods of this rank alone (rank scope).
    pub write_drains: u64,
    /// Memory cycles of those periods, summed.
    pub write_drain_mem_cycles: u64,
}

/// Unavailability of one channel and its ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Unavailability {
    pub ranks: Vec<RankUnavailability>,
    /// Write-drain periods (reads wait).
    pub write_drains: u64,
    /// Memory cycles spent draining writes, summed (over ranks, for rank scope).
    pub write_drain_mem_cycles: u64,
    /// Distinct banks written per drain period, summed over the periods.
    pub write_drain_banks_written: u64,
    /// Of the periods, those the high watermark started (the paper's write drains), and
    /// their distinct banks written, summed.
    pub watermark_drains: u64,
    pub watermark_drain_banks_written: u64,
    /// Every interval, in order of its end, when recording is on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    #[serde(skip)]
    record: bool,
}

impl Unavailability {
    pub fn new(ranks: usize, record: bool) -> Unavailability {
        Unavailability {
            ranks: vec![RankUnavailability::default(); ranks],
            record,
            ..Default::default()
        }
    }

    /// Rank `rank`'s refresh fell due at `due` and keeps it busy until `end`.
    #[cold]
    #[inline(never)]
    pub fn refresh(&mut self, rank: u32, due: u64, end: u64) {
        let r = &mut self.ranks[rank as usize];
        r.refreshes += 1;
        r.refresh_mem_cycles += end - due;
        if self.record {
            self.intervals.push(Interval {
                rank: Some(rank),
                cause: Cause::Refresh,
                start_mem_cycles: due,
                end_mem_cycles: end,
                banks_written: None,
                by_watermark: None,
            });
        }
    }

    /// `count` refreshes of `rank`, each busy `span` cycles from falling due, booked at once
    /// (an idle controller's refreshes in closed form; only while intervals are not recorded).
    pub fn refreshes(&mut self, rank: u32, count: u64, span: u64) {
        debug_assert!(!self.record);
        let r = &mut self.ranks[rank as usize];
        r.refreshes += count;
        r.refresh_mem_cycles += count * span;
    }

    /// Whether every interval is kept (`sim.record_intervals`).
    pub fn is_recording(&self) -> bool {
        self.record
    }

    /// This record with the write-drain periods of `drain` added, their intervals placed
    /// among the refresh intervals in the order the two were recorded before drains were
    /// counted by the drain itself: a refresh when its REF issued (`refresh_busy` before its
    /// end), a drain when it ended. No drain ends in a cycle a REF issues (the controller
    /// does nothing else then), so the order is total.
    pub fn with_drains(&self, drain: &WriteDrain, refresh_busy: u64) -> Unavailability {
        let mut u = self.clone();
        u.write_drains = drain.periods;
        u.write_drain_mem_cycles = drain.period_mem_cycles;
        u.write_drain_banks_written = drain.banks_written;
        u.watermark_drains = drain.watermark_periods;
        u.watermark_drain_banks_written = drain.watermark_banks_written;
        for (r, &(periods, cycles)) in u.ranks.iter_mut().zip(&drain.rank_periods) {
            r.write_drains = periods;
            r.write_drain_mem_cycles = cycles;
        }
        if !drain.recorded.is_empty() {
            let drains = drain.recorded.iter().map(|p| Interval {
                rank: p.rank,
                cause: Cause::WriteDrain,
                start_mem_cycles: p.start,
                end_mem_cycles: p.end,
                banks_written: Some(p.banks_written),
                by_watermark: Some(p.by_watermark),
            });
            let recorded_at = |i: &Interval| match i.cause {
                Cause::Refresh => i.end_mem_cycles - refresh_busy,
                Cause::WriteDrain => i.end_mem_cycles,
            };
            let mut all: Vec<Interval> = self.intervals.iter().copied().chain(drains).collect();
            all.sort_by_key(recorded_at); // stable: refreshes keep their order
            u.intervals = all;
        }
        u
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DrainPolicy, DrainScope};

    fn channel_drain() -> WriteDrain {
        WriteDrain::new(
            DrainPolicy::Watermark,
            DrainScope::Channel,
            false,
            (4, 0, 4),
            2,
            32,
        )
    }

    #[test]
    fn refreshes_and_drains_are_summed_and_recorded() {
        let mut u = Unavailability::new(2, true);
        // REF issued at 150 for a refresh due at 100, busy 150 cycles.
        u.refresh(1, 100, 300);
        let mut drain = channel_drain(); // drains at 4 writes, back at 0
        drain.record = true;
        let fill = |d: &mut WriteDrain| (0..4).for_each(|_| d.write_queued(0));
        let empty = |d: &mut WriteDrain, now| (0..4).for_each(|_| d.write_served(0, 1, now));
        fill(&mut drain);
        assert!(drain.update(1, 120));
        empty(&mut drain, 139);
        assert!(!drain.update(1, 140));
        fill(&mut drain);
        assert!(drain.update(1, 400));
        empty(&mut drain, 449);
        assert!(!drain.update(1, 450));
        let all = u.with_drains(&drain, 150);
        assert_eq!(all.ranks[1].refreshes, 1);
        assert_eq!(all.ranks[1].refresh_mem_cycles, 200);
        assert_eq!((all.write_drains, all.write_drain_mem_cycles), (2, 20 + 50));
        // In the order they were recorded: the first drain ended (140) before the REF issued
        // (150), the second after.
        let spans: Vec<_> = all
            .intervals
            .iter()
            .map(|i| (i.cause, i.start_mem_cycles, i.end_mem_cycles))
            .collect();
        assert_eq!(
            spans,
            [
                (Cause::WriteDrain, 120, 140),
                (Cause::Refresh, 100, 300),
                (Cause::WriteDrain, 400, 450)
            ]
        );
        let mut quiet = Unavailability::new(1, false);
        quiet.refresh(0, 0, 10);
        let quiet = quiet.with_drains(&channel_drain(), 10);
        assert!(quiet.intervals.is_empty());
    }
}
