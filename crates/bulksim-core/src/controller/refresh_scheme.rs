//! When an owed refresh blocks its rank (`controller.refresh.scheme`). `demand` blocks the
//! rank as soon as its REF falls due. `elastic` (Stuecheli et al., MICRO 2010, as the Rank
//! Assignment paper's §VI-I uses it) postpones: a rank owes REFs until it has had no queued
//! request for `idle_ns`; a REF is forced once the rank owes 8, 7 tREFI after it fell due
//! (`per_ref`, the postponement limit), or with every other REF still owed at the end of its
//! 8 x tREFI window (`window`; the ranks' windows end in the order and spacing of their
//! stagger). `pausing` (Nair et al., HPCA 2013, §VI-H) refreshes in fragments (REFs of a finer
//! granularity resolved into the spec): a fragment starts whenever the rank has no queued
//! request, and the refresh pauses at a fragment boundary when a request arrives, unless that
//! fragment is 8 tREFI late. `pcd` (Mukundan et al., ISCA 2013, §VI-G) blocks on demand but
//! lets the rank's queued requests go first in the tRFC before its REF (`Controller`'s pick);
//! `adaptive` blocks on demand too and switches granularity (`adaptive_refresh`).
//! The thresholds are bulksim's choices where the papers leave them open
//! (docs/rank_assignment.md).

use crate::config::{ElasticDeadline, RefreshScheme};

/// Per rank, what the scheme needs to know of the rank's queued requests.
#[derive(Clone, Debug, Default)]
pub struct RankActivity {
    /// Requests queued for the rank (reads and writes).
    pub queued: Vec<u32>,
    /// Cycle the rank's queue last became empty.
    pub idle_since: Vec<u64>,
}

impl RankActivity {
    pub fn new(ranks: usize) -> RankActivity {
        RankActivity {
            queued: vec![0; ranks],
            idle_since: vec![0; ranks],
        }
    }

    #[inline]
    pub fn queued(&mut self, rank: u32) {
        self.queued[rank as usize] += 1;
    }

    #[inline]
    pub fn served(&mut self, rank: u32, now: u64) {
        let q = &mut self.queued[rank as usize];
        *q -= 1;
        if *q == 0 {
            self.idle_since[rank as usize] = now;
        }
    }
}

/// A scheme's rule, in memory cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Postponement {
    /// Block when due.
    Demand,
    /// Block once the rank has idled `idle` cycles, or at the owed REF's deadline: 7 tREFI
    /// after it fell due (`per_ref`: when the rank owes 8, a tREFI before a 9th), or the end
    /// of the 8-tREFI window it fell due in (`window`; the rank's windows end at its first
    /// window end plus multiples of 8 tREFI).
    Elastic {
        idle: u64,
        deadline: ElasticDeadline,
    },
    /// Block whenever the rank is idle, or once the owed REF is `late` cycles past due.
    Pausing { late: u64 },
}

impl Postponement {
    /// The rule of `scheme`; `interval` is the 1x tREFI (pausing's fragments are finer).
    pub fn new(
        scheme: RefreshScheme,
        idle_cycles: u64,
        deadline: ElasticDeadline,
        interval: u64,
    ) -> Postponement {
        match scheme {
            RefreshScheme::Demand | RefreshScheme::Pcd | RefreshScheme::Adaptive => {
                Postponement::Demand
            }
            RefreshScheme::Elastic => Postponement::Elastic {
                idle: idle_cycles,
                deadline,
            },
            RefreshScheme::Pausing => Postponement::Pausing { late: 8 * interval },
        }
    }

    /// Whether a rank whose oldest owed REF fell due at `due` (the rank's first window of
    /// 8 REFs ending at `first_end`) is blocked at `now`, and otherwise the cycle it will be
    /// at the latest if nothing is queued for it meanwhile. A REF belongs to the first window
    /// ending after its due cycle.
    #[inline]
    pub fn blocks(
        &self,
        now: u64,
        (due, first_end, interval): (u64, u64, u64),
        queued: u32,
        idle_since: u64,
    ) -> Result<(), u64> {
        match *self {
            Postponement::Demand => {
                if now >= due {
                    Ok(())
                } else {
                    Err(due)
                }
            }
            Postponement::Elastic { idle, deadline } => {
                if now < due {
                    return Err(due);
                }
                let window = 8 * interval;
                let window_end = match deadline {
                    // Forced once the rank owes 8 (this one and the 7 due since), a tREFI
                    // before a 9th would be owed: room for a PREA and the other ranks'
                    // refreshes it may wait for under `elastic_keeps_stagger`.
                    ElasticDeadline::PerRef => due + 7 * interval,
                    ElasticDeadline::Window if due < first_end => first_end,
                    ElasticDeadline::Window => {
                        first_end + ((due - first_end) / window + 1) * window
                    }
                };
                let idle_at = if queued == 0 {
                    (idle_since + idle).max(due)
                } else {
                    u64::MAX
                };
                let at = window_end.min(idle_at);
                if now >= at {
                    Ok(())
                } else {
                    Err(at)
                }
            }
            Postponement::Pausing { late } => {
                if now < due {
                    return Err(due);
                }
                if queued == 0 || now >= due + late {
                    Ok(())
                } else {
                    Err(due + late)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elastic_waits_for_idleness_or_the_window_end() {
        let p = Postponement::Elastic {
            idle: 100,
            deadline: ElasticDeadline::Window,
        };
        // Due at 1000 (the first REF, due at 1000, interval 1000, first window ending at
        // 9000): busy rank.
        assert_eq!(p.blocks(1500, (1000, 9000, 1000), 3, 0), Err(9000));
        assert_eq!(p.blocks(9000, (1000, 9000, 1000), 3, 0), Ok(()));
        // Idle since 1450: blocks at 1550.
        assert_eq!(p.blocks(1500, (1000, 9000, 1000), 0, 1450), Err(1550));
        assert_eq!(p.blocks(1550, (1000, 9000, 1000), 0, 1450), Ok(()));
        // Idle long before the due cycle: blocks at the due cycle.
        assert_eq!(p.blocks(999, (1000, 9000, 1000), 0, 0), Err(1000));
        assert_eq!(p.blocks(1000, (1000, 9000, 1000), 0, 0), Ok(()));
        // The 9th REF, due at the window's end, belongs to the next window, ending at 17000.
        assert_eq!(p.blocks(9500, (9000, 9000, 1000), 2, 0), Err(17000));
        // The first of 4 staggered ranks (due at 250, 1250, ...; first window ending at
        // 3000): the REFs due at 1250 and 2250 are forced at 3000, the one due at 3250 at
        // 11000.
        assert_eq!(p.blocks(1300, (1250, 3000, 1000), 1, 0), Err(3000));
        assert_eq!(p.blocks(2300, (2250, 3000, 1000), 1, 0), Err(3000));
        assert_eq!(p.blocks(3300, (3250, 3000, 1000), 1, 0), Err(11000));
    }

    /// `per_ref`: each owed REF is forced 7 intervals after it fell due (8 owed), so a busy
    /// rank's REFs are forced one an interval (as they fell due), never in a burst.
    #[test]
    fn elastic_per_ref_forces_each_ref_when_eight_are_owed() {
        let p = Postponement::Elastic {
            idle: 100,
            deadline: ElasticDeadline::PerRef,
        };
        // Due at 1000, interval 1000: by 8000 the REFs due at 1000..=8000 are owed (8).
        assert_eq!(p.blocks(1500, (1000, 9000, 1000), 3, 0), Err(8000));
        assert_eq!(p.blocks(8000, (1000, 9000, 1000), 3, 0), Ok(()));
        // The next REF, due at 2000, is forced at 9000, not with the first.
        assert_eq!(p.blocks(8001, (2000, 9000, 1000), 3, 0), Err(9000));
        // Idleness still issues it early.
        assert_eq!(p.blocks(2500, (2000, 9000, 1000), 0, 2450), Err(2550));
    }

    #[test]
    fn pausing_fragments_go_while_idle_until_eight_intervals_late() {
        let p = Postponement::Pausing { late: 8000 };
        assert_eq!(p.blocks(1200, (1000, 1000, 1000), 0, 1100), Ok(()));
        assert_eq!(p.blocks(1200, (1000, 1000, 1000), 1, 0), Err(9000));
        assert_eq!(p.blocks(9000, (1000, 1000, 1000), 1, 0), Ok(()));
        assert_eq!(Postponement::Demand.blocks(5, (10, 10, 10), 1, 0), Err(10));
    }
}
