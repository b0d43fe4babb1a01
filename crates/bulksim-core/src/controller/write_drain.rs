//! Write drain: the controller serves reads until the write queue reaches its high watermark
//! (or no read waits), then serves writes until it falls to the low watermark with reads
//! waiting (or empties). Hysteresis keeps bus turnarounds (tWTR, RD-to-WR) rare. It also
//! counts its drain periods (reads wait during them) where the mode flips, so that keeping
//! this statistic adds nothing to the cycles in which the mode stays: a separate per-cycle
//! check of the mode cost trace replay about 1% of its instructions (docs/performance.md).

#[derive(Clone, Debug)]
pub struct WriteDrain {
    high: usize,
    low: usize,
    draining: bool,
    /// Start of the drain period in progress.
    since: u64,
    /// Drain periods ended so far.
    pub periods: u64,
    /// Memory cycles of those periods, summed.
    pub period_mem_cycles: u64,
    /// Whether to keep each ended period in `recorded`.
    pub record: bool,
    /// Each ended period [start, end) in memory cycles, in order, when `record` is on.
    pub recorded: Vec<(u64, u64)>,
}

impl WriteDrain {
    /// Watermarks as fractions of the write queue size.
    pub fn new(queue_size: usize, high_fraction: f64, low_fraction: f64) -> WriteDrain {
        let high = ((high_fraction * queue_size as f64).round() as usize).clamp(1, queue_size);
        let low = ((low_fraction * queue_size as f64).round() as usize).min(high - 1);
        WriteDrain {
            high,
            low,
            draining: false,
            since: 0,
            periods: 0,
            period_mem_cycles: 0,
            record: false,
            recorded: Vec::new(),
        }
    }

    /// Whether writes are being served (a drain period is open).
    pub fn is_draining(&self) -> bool {
        self.draining
    }

    /// Updates the mode from queue occupancies at cycle `now`; returns whether writes are
    /// being served.
    #[inline]
    pub fn update(&mut self, reads: usize, writes: usize, now: u64) -> bool {
        if self.draining {
            if writes == 0 || (writes <= self.low && reads > 0) {
                self.draining = false;
                self.periods += 1;
                self.period_mem_cycles += now - self.since;
                if self.record {
                    self.recorded.push((self.since, now));
                }
            }
        } else if writes >= self.high || (reads == 0 && writes > 0) {
            self.draining = true;
            self.since = now;
        }
        self.draining
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis_between_watermarks() {
        let mut d = WriteDrain::new(32, 0.8, 0.2); // high 26, low 6
        d.record = true;
        assert!(!d.update(5, 25, 10));
        assert!(d.update(5, 26, 11));
        assert!(d.update(5, 7, 12));
        assert!(!d.update(5, 6, 20));
        assert!(d.update(0, 1, 30), "drains when no read waits");
        assert!(d.update(0, 1, 31));
        assert!(!d.update(0, 0, 35));
        // Two drain periods: cycles 11..20 and 30..35.
        assert_eq!((d.periods, d.period_mem_cycles), (2, 9 + 5));
        assert_eq!(d.recorded, [(11, 20), (30, 35)]);
    }
}
