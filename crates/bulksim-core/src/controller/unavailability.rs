//! Where a channel's ranks could not serve requests, and why: per rank, each refresh from the
//! cycle it fell due (new commands to the rank wait from then) to the end of its tRFC; per
//! channel, each write-drain period (reads wait while writes are served). Totals are always
//! kept; the intervals themselves are kept when asked for (`sim.record_intervals`), for
//! metrics such as "threads stalled per refresh".

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
    pub rank: Option<u32>,
    pub cause: Cause,
    pub start_mem_cycles: u64,
    pub end_mem_cycles: u64,
}

/// Unavailability of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RankUnavailability {
    /// Refreshes (REF commands) of the rank.
    pub refreshes: u64,
    /// Memory cycles from each refresh falling due to the end of its tRFC, summed.
    pub refresh_mem_cycles: u64,
}

/// Unavailability of one channel and its ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Unavailability {
    pub ranks: Vec<RankUnavailability>,
    /// Write-drain periods (reads wait).
    pub write_drains: u64,
    /// Memory cycles spent draining writes, summed.
    pub write_drain_mem_cycles: u64,
    /// Every interval, in order of its end, when recording is on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    #[serde(skip)]
    record: bool,
    #[serde(skip)]
    drain_since: Option<u64>,
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

    /// Whether a write-drain period is open.
    pub fn is_draining(&self) -> bool {
        self.drain_since.is_some()
    }

    /// The controller serves writes (`draining`) or reads at cycle `now`.
    #[inline(always)]
    pub fn drain_mode(&mut self, draining: bool, now: u64) {
        if draining != self.drain_since.is_some() {
            self.drain_changed(draining, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn drain_changed(&mut self, draining: bool, now: u64) {
        match (draining, self.drain_since) {
            (true, None) => self.drain_since = Some(now),
            (false, Some(start)) => {
                self.drain_since = None;
                self.write_drains += 1;
                self.write_drain_mem_cycles += now - start;
                if self.record {
                    self.intervals.push(Interval {
                        rank: None,
                        cause: Cause::WriteDrain,
                        start_mem_cycles: start,
                        end_mem_cycles: now,
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refreshes_and_drains_are_summed_and_recorded() {
        let mut u = Unavailability::new(2, true);
        u.refresh(1, 100, 300);
        u.drain_mode(true, 400);
        u.drain_mode(true, 410);
        u.drain_mode(false, 450);
        assert_eq!(u.ranks[1].refreshes, 1);
        assert_eq!(u.ranks[1].refresh_mem_cycles, 200);
        assert_eq!((u.write_drains, u.write_drain_mem_cycles), (1, 50));
        assert_eq!(u.intervals.len(), 2);
        assert_eq!(u.intervals[1].cause, Cause::WriteDrain);
        let mut quiet = Unavailability::new(1, false);
        quiet.refresh(0, 0, 10);
        assert!(quiet.intervals.is_empty());
    }
}
