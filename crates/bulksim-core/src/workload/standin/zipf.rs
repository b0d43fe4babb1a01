//! Zipf draws over `n` ranks: rank k (from 0) has probability (k + 1)^-s / H(n, s), with
//! H(n, s) the sum of (j + 1)^-s over all ranks. Drawn by inverse transform over the
//! cumulative table, so the same uniform gives the same rank on every machine. A guide table
//! (the cutpoint method) narrows each draw's search to the few ranks whose cumulative
//! probabilities straddle the uniform's bin: the rank is the one the search over the whole
//! table finds, at a cost independent of `n` (the search over 65,536 pages was 9% of a
//! memory-bound stand-in run's host time).

use crate::rng::SplitMix64;

pub struct Zipf {
    /// cdf[k]: the probability of ranks 0..=k; the last is 1.
    cdf: Vec<f64>,
    /// guide[j], j in 0..=n: the first rank whose cdf exceeds j / n (n: none does).
    guide: Vec<u32>,
}

impl Zipf {
    /// Zipf with exponent `s` over `n` (> 0) ranks.
    pub fn new(n: usize, s: f64) -> Zipf {
        assert!(n > 0, "Zipf over no ranks");
        let mut cdf = Vec::with_capacity(n);
        let mut sum = 0.0;
        for k in 0..n {
            sum += weight(k, s);
            cdf.push(sum);
        }
        for c in &mut cdf {
            *c /= sum;
        }
        cdf[n - 1] = 1.0;
        let guide = (0..=n)
            .map(|j| cdf.partition_point(|&c| c <= j as f64 / n as f64) as u32)
            .collect();
        Zipf { cdf, guide }
    }

    /// The probability of rank `k`, from the table.
    pub fn probability(&self, k: usize) -> f64 {
        self.cdf[k] - if k == 0 { 0.0 } else { self.cdf[k - 1] }
    }

    /// A rank drawn with one output of `rng`.
    pub fn draw(&self, rng: &mut SplitMix64) -> usize {
        self.guided(rng.unit())
    }

    /// The rank of uniform `u` in [0, 1): the first whose cdf exceeds `u`.
    #[inline]
    fn guided(&self, u: f64) -> usize {
        let n = self.cdf.len();
        // u lies in bin j = floor(u n), give or take the rounding of u * n: the bins either
        // side bound the search (guide[j - 1] <= rank <= guide[j + 2]).
        let j = ((u * n as f64) as usize).min(n);
        let lo = self.guide[j.saturating_sub(1)] as usize;
        let hi = self.guide[(j + 2).min(n)] as usize;
        (lo + self.cdf[lo..hi].partition_point(|&c| c <= u)).min(n - 1)
    }

    /// `draw`'s answer for uniform `u` by a search over the whole table (the definition).
    #[cfg(test)]
    fn rank_of(&self, u: f64) -> usize {
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }
}

/// The unnormalized weight of rank `k`: (k + 1)^-s.
fn weight(k: usize, s: f64) -> f64 {
    ((k + 1) as f64).powf(-s)
}

/// A permutation of 0..n drawn by Fisher-Yates with `rng`.
pub fn permutation(n: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_are_the_closed_form() {
        // n = 4, s = 1: H = 1 + 1/2 + 1/3 + 1/4 = 25/12.
        let z = Zipf::new(4, 1.0);
        for (k, p) in [12.0 / 25.0, 6.0 / 25.0, 4.0 / 25.0, 3.0 / 25.0]
            .into_iter()
            .enumerate()
        {
            assert!((z.probability(k) - p).abs() < 1e-12, "rank {k}");
        }
        // s = 0 is uniform.
        let u = Zipf::new(8, 0.0);
        assert!((0..8).all(|k| (u.probability(k) - 0.125).abs() < 1e-12));
    }

    #[test]
    fn draws_follow_the_probabilities() {
        let z = Zipf::new(16, 0.8);
        let mut rng = SplitMix64::new(3);
        let draws = 200_000;
        let mut counts = [0u64; 16];
        for _ in 0..draws {
            counts[z.draw(&mut rng)] += 1;
        }
        for (k, &c) in counts.iter().enumerate() {
            let p = z.probability(k);
            // Four standard deviations of a binomial count.
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (c as f64 - draws as f64 * p).abs() < 4.0 * sd,
                "rank {k}: {c} of {draws}, p = {p}"
            );
        }
    }

    /// The guide table changes no draw: each is the rank the search over the whole table
    /// finds, for random uniforms and for those on and next to every bin edge.
    #[test]
    fn guided_draws_are_the_whole_table_search() {
        for (n, s) in [
            (1, 1.0),
            (2, 0.5),
            (7, 1.2),
            (1000, 0.0),
            (65_536, 0.99),
            (4096, 3.0),
        ] {
            let z = Zipf::new(n, s);
            let mut rng = SplitMix64::new(n as u64);
            for _ in 0..20_000 {
                let mut probe = rng.clone();
                let u = probe.unit();
                assert_eq!(z.draw(&mut rng), z.rank_of(u), "n {n}, s {s}, u {u}");
            }
            for j in 0..=n.min(5000) {
                let edge = j as f64 / n as f64;
                for u in [
                    edge,
                    f64::from_bits(edge.to_bits().saturating_sub(1)),
                    f64::from_bits(edge.to_bits() + 1),
                ] {
                    if !(0.0..1.0).contains(&u) {
                        continue;
                    }
                    assert_eq!(z.guided(u), z.rank_of(u), "n {n}, s {s}, edge u {u}");
                }
            }
        }
    }

    #[test]
    fn a_permutation_holds_every_index_once() {
        let mut p = permutation(1000, &mut SplitMix64::new(9));
        assert_ne!(p, (0..1000).collect::<Vec<u32>>());
        p.sort_unstable();
        assert_eq!(p, (0..1000).collect::<Vec<u32>>());
    }
}
