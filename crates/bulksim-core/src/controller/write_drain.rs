//! Write drain: the controller serves reads until the write queue reaches its high watermark
//! (or no read waits), then serves writes until it falls to the low watermark with reads
//! waiting (or empties). Hysteresis keeps bus turnarounds (tWTR, RD-to-WR) rare.

#[derive(Clone, Debug)]
pub struct WriteDrain {
    high: usize,
    low: usize,
    draining: bool,
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
        }
    }

    /// Updates the mode from queue occupancies; returns whether writes are being served.
    #[inline]
    pub fn update(&mut self, reads: usize, writes: usize) -> bool {
        if self.draining {
            if writes == 0 || (writes <= self.low && reads > 0) {
                self.draining = false;
            }
        } else if writes >= self.high || (reads == 0 && writes > 0) {
            self.draining = true;
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
        assert!(!d.update(5, 25));
        assert!(d.update(5, 26));
        assert!(d.update(5, 7));
        assert!(!d.update(5, 6));
        assert!(d.update(0, 1), "drains when no read waits");
        assert!(!d.update(0, 0));
    }
}
