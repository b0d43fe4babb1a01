//! Counters that a layer fills and the run's stats report, kept below both so that neither
//! names the other: the exact latency histogram (the controllers' read latencies, the bulk
//! tracker's copy and initialization latencies; `stats` summarises it into percentiles) and
//! the ACTs a controller wasted (nested in the controller's and the run's stats).

use crate::stat_struct::stat_struct;
use std::collections::BTreeMap;

/// Exact latency distribution in cycles: one counter per cycle value, dense below
/// `DENSE_CYCLES` and sparse above, so a latency of 2^30 cycles (a large configured timing)
/// costs one map entry, not 8 GiB of counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    /// Counts of latencies from `DENSE_CYCLES` up.
    sparse: BTreeMap<u64, u64>,
    n: u64,
    sum: u64,
    max: u64,
}

/// Latencies below this many cycles are counted densely (512 KiB of counters at most).
const DENSE_CYCLES: u64 = 1 << 16;

impl LatencyHistogram {
    #[inline]
    pub fn record(&mut self, cycles: u64) {
        match self.counts.get_mut(cycles as usize) {
            Some(count) => *count += 1,
            None => self.record_beyond(cycles),
        }
        self.n += 1;
        self.sum += cycles;
        self.max = self.max.max(cycles);
    }

    /// A latency past the dense counters so far: grow them, or count it sparsely from
    /// `DENSE_CYCLES` up. Out of line, so that the common case stays one bounds check.
    #[cold]
    #[inline(never)]
    fn record_beyond(&mut self, cycles: u64) {
        if cycles >= DENSE_CYCLES {
            *self.sparse.entry(cycles).or_insert(0) += 1;
        } else {
            let i = cycles as usize;
            self.counts.resize((i + 1).next_power_of_two(), 0);
            self.counts[i] += 1;
        }
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        for (&v, &c) in &other.sparse {
            *self.sparse.entry(v).or_insert(0) += c;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// Takes away an earlier snapshot of this histogram: the latencies recorded since, the
    /// largest among them recomputed from the counts.
    pub fn sub(&mut self, earlier: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&earlier.counts) {
            *a -= b;
        }
        for (v, c) in &earlier.sparse {
            if let Some(mine) = self.sparse.get_mut(v) {
                *mine -= c;
            }
        }
        self.sparse.retain(|_, c| *c > 0);
        self.n -= earlier.n;
        self.sum -= earlier.sum;
        self.max = match self.sparse.last_key_value() {
            Some((&v, _)) => v,
            None => self.counts.iter().rposition(|&c| c > 0).unwrap_or(0) as u64,
        };
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Nearest-rank percentile: the smallest value with at least `p`% of samples at or below.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.n as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        let dense = self.counts.iter().enumerate().map(|(v, &c)| (v as u64, c));
        for (v, c) in dense.chain(self.sparse.iter().map(|(&v, &c)| (v, c))) {
            seen += c;
            if seen >= rank {
                return v;
            }
        }
        self.max
    }

    pub fn max(&self) -> u64 {
        self.max
    }
}

stat_struct! {
    /// ACTs whose row closed before the request it was opened for was served from it (that
    /// request then needs another ACT). Every ACT the controller issues for a request is
    /// either its served request's (a row miss or conflict) or one of these.
    pub struct WastedActs {
        pub refresh: u64 = sum("ACTs", "rows closed unused by a refresh's precharge-all"),
        pub other: u64 = sum("ACTs", "rows closed unused by anything else (the bulk engine's precharges)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut h = LatencyHistogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), 50);
        assert_eq!(h.percentile(99.0), 99);
        assert_eq!(h.max(), 100);
        assert!((h.mean() - 50.5).abs() < 1e-12);
        let mut g = LatencyHistogram::default();
        g.record(1000);
        h.merge(&g);
        assert_eq!((h.count(), h.max(), h.percentile(100.0)), (101, 1000, 1000));
        // Since a snapshot: only what came after, its largest value recomputed.
        let snap = h.clone();
        for v in [7, 7, 9, 1 << 20] {
            h.record(v);
        }
        let mut since = h.clone();
        since.sub(&snap);
        assert_eq!((since.count(), since.max()), (4, 1 << 20));
        assert_eq!((since.percentile(50.0), since.percentile(75.0)), (7, 9));
        assert!((since.mean() - (23.0 + (1 << 20) as f64) / 4.0).abs() < 1e-9);
        let mut none = h.clone();
        none.sub(&h);
        assert_eq!((none.count(), none.max(), none.mean()), (0, 0, 0.0));
    }
}
