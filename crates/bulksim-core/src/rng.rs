//! SplitMix64: the project's seeded generator. Written out here (a few lines) rather than taken
//! from a crate because its output sequence is part of the project's contract: the same seed
//! must give byte-identical traces and stats on every machine and every future version.

#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

/// The state's increment per output (the golden-ratio constant of SplitMix64).
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function of a state.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }

    /// The `k`-th output (from 0) of `SplitMix64::new(seed)`, without the `k` before it: the
    /// state only ever advances by `GAMMA`, so before output `k` it is `seed + (k + 1) * GAMMA`.
    #[inline]
    pub fn nth(seed: u64, k: u64) -> u64 {
        mix(seed.wrapping_add(k.wrapping_add(1).wrapping_mul(GAMMA)))
    }

    /// Uniform in `0..n` (n > 0), by 128-bit multiply (no modulo bias worth noting).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_is_the_published_splitmix64() {
        // First outputs for seed 0 of the reference SplitMix64 (Vigna).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let mut r = SplitMix64::new(7);
        assert!((0..1000).all(|_| r.below(10) < 10));
    }

    #[test]
    fn nth_is_the_sequential_output() {
        let mut seeds = SplitMix64::new(99);
        let mut all = vec![0, 1, u64::MAX, GAMMA, GAMMA.wrapping_neg()];
        all.extend((0..60).map(|_| seeds.next_u64()));
        for seed in all {
            let mut r = SplitMix64::new(seed);
            for k in 0..2000 {
                assert_eq!(
                    SplitMix64::nth(seed, k),
                    r.next_u64(),
                    "seed {seed:#x} k {k}"
                );
            }
        }
        // Far along the sequence: the state wraps; stepping on from output k gives k + 1.
        for k in [u64::MAX - 1, 1 << 40, (1 << 63) + 5] {
            let mut r = SplitMix64(7u64.wrapping_add(k.wrapping_add(1).wrapping_mul(GAMMA)));
            assert_eq!(SplitMix64::nth(7, k + 1), r.next_u64());
        }
    }
}
