//! Each rank's mean read latency so far, as the last cache level sees a memory device: from
//! when a read enters a controller's queue (so queueing behind other requests, refreshes and
//! write drains counts) to its completion. Kept only when a rank choice reads it (the OS's
//! `os.preferred_rank = "least_delay"`); reads are matched to completions by request id in a
//! map that is looked up, never iterated.

use crate::port::RequestId;
use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
pub struct RankLatency {
    /// Reads in flight: when each was sent (fs) and its rank within the device.
    in_flight: HashMap<RequestId, (u64, u32)>,
    total_fs: Vec<u64>,
    reads: Vec<u64>,
}

impl RankLatency {
    /// Latencies for `ranks` ranks (channel x ranks per channel + rank).
    pub fn new(ranks: usize) -> RankLatency {
        RankLatency {
            in_flight: HashMap::new(),
            total_fs: vec![0; ranks],
            reads: vec![0; ranks],
        }
    }

    /// Read `id` to `rank` entered the controller at `fs`.
    pub fn sent(&mut self, id: RequestId, rank: u32, fs: u64) {
        self.in_flight.insert(id, (fs, rank));
    }

    /// Request `id` completed at `fs` (not a tracked read: ignored).
    pub fn done(&mut self, id: RequestId, fs: u64) {
        if let Some((sent, rank)) = self.in_flight.remove(&id) {
            self.total_fs[rank as usize] += fs.saturating_sub(sent);
            self.reads[rank as usize] += 1;
        }
    }

    /// Each rank's mean latency in ns so far (0 before its first read).
    pub fn mean_ns(&self) -> impl Iterator<Item = f64> + '_ {
        self.total_fs.iter().zip(&self.reads).map(|(&t, &n)| {
            if n == 0 {
                0.0
            } else {
                t as f64 / n as f64 / 1e6
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_per_rank_from_matched_reads() {
        let mut l = RankLatency::new(2);
        l.sent(7, 1, 1_000_000);
        l.sent(8, 1, 2_000_000);
        l.done(7, 31_000_000);
        l.done(8, 12_000_000);
        l.done(9, 5_000_000); // a write's completion: not tracked
        let means: Vec<f64> = l.mean_ns().collect();
        assert_eq!(means, [0.0, 20.0]); // (30 + 10) / 2 ns
    }
}
