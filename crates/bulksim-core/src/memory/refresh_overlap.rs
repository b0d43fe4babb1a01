//! Refresh overlap: how long refreshes of different ranks ran at the same time, among the
//! ranks a staggered schedule spreads (a channel's ranks, or every rank of the device under
//! `controller.refresh.stagger = "system"`). Staggering is meant to keep one rank refreshing
//! at a time; when N x tRFC exceeds tREFI (e.g. 4 ranks at FGR-4x and extended temperature:
//! 4 x 350 ns > 975 ns) that is impossible and refreshes overlap. Each REF adds the part of its
//! tRFC during which another rank's refresh, begun earlier, was still running.

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
}
