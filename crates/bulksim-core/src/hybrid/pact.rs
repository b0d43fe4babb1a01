//! The Page Access Count Table (PACT, Table I; issue 17 item 4): a set-associative table of
//! saturating access counts by physical page that the router updates on every program LLC
//! miss and write-back, and that the OS reads and resets once a period. It owns only the
//! counts and their replacement; which accesses count (not copies, unless
//! `hybrid.count_copies`) and when the OS drains it are the caller's.

use crate::error::{config_err, Result};
use crate::stat_struct::stat_struct;

stat_struct! {
    /// What the PACT did (each update is one table access for energy).
    pub struct PactStats {
        pub updates: u64 = sum("accesses", "LLC misses and write-backs recorded (one table access each)"),
        pub hits: u64 = sum("accesses", "updates that found their page and incremented its count"),
        pub allocations: u64 = sum("entries", "updates that missed and took an invalid way with count 1"),
        pub replacements: u64 = sum("entries", "updates that missed in a full set and replaced its lowest count"),
        pub saturated: u64 = sum("accesses", "hits on a count already at its maximum (left unchanged)"),
        pub drains: u64 = sum("reads", "times the OS read and reset the table"),
    }
}

/// What one update did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PactOutcome {
    /// The page was there; its count went up by one (or stayed at the maximum).
    Hit,
    /// The page took an invalid way with count 1.
    Allocated,
    /// The page replaced `page`, whose count `count` is lost.
    Replaced { page: u64, count: u32 },
}

pub struct Pact {
    sets: u64,
    ways: usize,
    max_count: u32,
    /// Page of each slot, slot = set x ways + way; meaningless where the count is 0.
    pages: Vec<u64>,
    /// Count of each slot; 0 = invalid (the paper's encoding: no separate valid bit).
    counts: Vec<u32>,
    pub stats: PactStats,
}

impl Pact {
    /// A table of `entries` counts of `count_bits` bits each in sets of `ways`
    /// (`hybrid.pact_entries`, `hybrid.pact_ways`, `hybrid.pact_count_bits`).
    pub fn new(entries: u32, ways: u32, count_bits: u32) -> Result<Pact> {
        if let Some(p) = super::config::table_problem("pact", entries, ways) {
            return Err(config_err(p));
        }
        if !(1..=32).contains(&count_bits) {
            return Err(config_err(format!(
                "hybrid.pact_count_bits: {count_bits}; expected 1..=32"
            )));
        }
        let max_count = if count_bits == 32 {
            u32::MAX
        } else {
            (1u32 << count_bits) - 1
        };
        Ok(Pact {
            sets: u64::from(entries / ways),
            ways: ways as usize,
            max_count,
            pages: vec![0; entries as usize],
            counts: vec![0; entries as usize],
            stats: PactStats::default(),
        })
    }

    pub fn sets(&self) -> u64 {
        self.sets
    }

    pub fn ways(&self) -> usize {
        self.ways
    }

    /// The largest count an entry holds.
    pub fn max_count(&self) -> u32 {
        self.max_count
    }

    /// Records one access to physical page `page`: a hit adds 1 (saturating); a miss takes
    /// the lowest invalid way, else replaces the set's lowest count, ties to the lowest way.
    /// The paper says only "the entry with the lowest count is evicted"; the lowest way is a
    /// deterministic tie-break that needs no LRU state. One pass over the set finds the page
    /// or, failing that, the victim.
    #[inline]
    pub fn record(&mut self, page: u64) -> PactOutcome {
        self.stats.updates += 1;
        let base = (page % self.sets) as usize * self.ways;
        let pages = &self.pages[base..base + self.ways];
        let counts = &mut self.counts[base..base + self.ways];
        let mut victim = 0;
        let mut lowest = u32::MAX;
        for w in 0..pages.len() {
            let c = counts[w];
            if c != 0 && pages[w] == page {
                if c < self.max_count {
                    counts[w] = c + 1;
                } else {
                    self.stats.saturated += 1;
                }
                self.stats.hits += 1;
                return PactOutcome::Hit;
            }
            // Strictly lower only: ties stay with the lower way.
            if c < lowest {
                lowest = c;
                victim = w;
            }
        }
        // No hit: every way was visited, so `victim` is the lowest invalid way if the set
        // has one (count 0 is the least possible) and the lowest-count way otherwise.
        let old_page = pages[victim];
        self.pages[base + victim] = page;
        self.counts[base + victim] = 1;
        if lowest == 0 {
            self.stats.allocations += 1;
            PactOutcome::Allocated
        } else {
            self.stats.replacements += 1;
            PactOutcome::Replaced {
                page: old_page,
                count: lowest,
            }
        }
    }

    /// The count of `page`, if it has an entry (a peek: no access counted).
    pub fn count(&self, page: u64) -> Option<u32> {
        let base = (page % self.sets) as usize * self.ways;
        (base..base + self.ways)
            .find(|&s| self.counts[s] != 0 && self.pages[s] == page)
            .map(|s| self.counts[s])
    }

    /// Valid entries.
    pub fn len(&self) -> usize {
        self.counts.iter().filter(|&&c| c != 0).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The OS's periodic read: replaces `out` with every valid (page, count) in ascending
    /// page order (independent of the table's geometry, so results do not depend on where
    /// an entry sat) and resets the table. `out` is reused to avoid a fresh allocation
    /// each period.
    pub fn drain_into(&mut self, out: &mut Vec<(u64, u32)>) {
        self.stats.drains += 1;
        out.clear();
        for (&page, count) in self.pages.iter().zip(self.counts.iter_mut()) {
            if *count != 0 {
                out.push((page, *count));
                *count = 0;
            }
        }
        // A page has at most one entry, so the order is total.
        out.sort_unstable_by_key(|&(page, _)| page);
    }

    /// `drain_into` into a new list.
    pub fn drain(&mut self) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        self.drain_into(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2-set, 4-way table: pages of one parity share a set.
    fn small(bits: u32) -> Pact {
        Pact::new(8, 4, bits).unwrap()
    }

    #[test]
    fn default_geometry_has_256_sets_of_32_ways() {
        let p = Pact::new(8192, 32, 16).unwrap();
        assert_eq!((p.sets(), p.ways(), p.max_count()), (256, 32, 65_535));
    }

    #[test]
    fn the_default_table_holds_8192_pages_then_replaces() {
        let mut p = Pact::new(8192, 32, 16).unwrap();
        for page in 0..8192 {
            assert_eq!(p.record(page), PactOutcome::Allocated);
        }
        assert_eq!(p.len(), 8192);
        // Page 8192 maps to set 0, whose ways all hold count 1: way 0 (page 0) goes.
        assert_eq!(p.record(8192), PactOutcome::Replaced { page: 0, count: 1 });
        assert_eq!(p.drain().len(), 8192);
    }

    #[test]
    fn bad_geometry_is_a_config_error_naming_the_key() {
        for (entries, ways, bits, key) in [
            (8192, 0, 16, "hybrid.pact_ways"),
            (100, 32, 16, "hybrid.pact_entries"),
            (8192, 32, 0, "hybrid.pact_count_bits"),
            (8192, 32, 33, "hybrid.pact_count_bits"),
        ] {
            let e = Pact::new(entries, ways, bits).err().expect("refused");
            assert!(e.to_string().contains(key), "{e}");
        }
    }

    #[test]
    fn a_miss_allocates_with_count_one_and_a_hit_increments() {
        let mut p = small(16);
        assert_eq!(p.record(6), PactOutcome::Allocated);
        assert_eq!(p.count(6), Some(1));
        assert_eq!(p.record(6), PactOutcome::Hit);
        assert_eq!(p.record(6), PactOutcome::Hit);
        assert_eq!(p.count(6), Some(3));
        assert_eq!(p.count(8), None);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p.stats.updates, p.stats.hits, p.stats.allocations),
            (3, 2, 1)
        );
    }

    #[test]
    fn counts_saturate_at_the_count_width() {
        let mut p = small(2);
        for _ in 0..5 {
            p.record(1);
        }
        assert_eq!(p.count(1), Some(3));
        assert_eq!(p.stats.saturated, 2);
        let mut wide = Pact::new(8, 4, 32).unwrap();
        assert_eq!(wide.max_count(), u32::MAX);
        wide.record(1);
        assert_eq!(wide.count(1), Some(1));
    }

    #[test]
    fn a_full_set_replaces_its_lowest_count() {
        let mut p = small(16);
        // Set 0 (even pages): counts 3, 1, 2, 4 in ways 0..4.
        for (page, n) in [(0, 3), (2, 1), (4, 2), (6, 4)] {
            for _ in 0..n {
                p.record(page);
            }
        }
        p.record(1); // the other set is untouched by set 0's traffic
        assert_eq!(p.record(8), PactOutcome::Replaced { page: 2, count: 1 });
        assert_eq!((p.count(2), p.count(8)), (None, Some(1)));
        assert_eq!(p.count(1), Some(1));
        assert_eq!(p.stats.replacements, 1);
    }

    #[test]
    fn equal_lowest_counts_evict_the_lowest_way() {
        let mut p = small(16);
        // Ways 0..4 of set 0 hold pages 10, 12, 14, 16; ways 1 and 3 end with count 1.
        for page in [10, 12, 14, 16] {
            p.record(page);
        }
        p.record(10);
        p.record(14);
        assert_eq!(p.record(18), PactOutcome::Replaced { page: 12, count: 1 });
        // Page 18 now sits in way 1 with count 1, tied with way 3 (page 16): way 1 goes.
        assert_eq!(p.record(20), PactOutcome::Replaced { page: 18, count: 1 });
        assert_eq!(p.count(16), Some(1));
    }

    #[test]
    fn an_invalid_way_is_used_before_any_replacement() {
        let mut p = small(16);
        for page in [0, 2, 4, 6] {
            p.record(page);
        }
        let drained = p.drain();
        assert_eq!(drained.len(), 4);
        // After the reset every way is invalid again: four allocations, no replacement.
        for page in [8, 10, 12, 14] {
            assert_eq!(p.record(page), PactOutcome::Allocated);
        }
        assert_eq!(p.stats.replacements, 0);
    }

    #[test]
    fn drain_lists_pages_in_order_and_resets() {
        let mut p = small(16);
        for page in [7, 2, 7, 5, 2, 7] {
            p.record(page);
        }
        let mut out = vec![(99, 99)];
        p.drain_into(&mut out);
        assert_eq!(out, vec![(2, 2), (5, 1), (7, 3)]);
        assert!(p.is_empty());
        assert_eq!(p.count(7), None);
        assert_eq!(p.drain(), vec![]);
        assert_eq!(p.stats.drains, 2);
        // A stale page left in an invalid slot must not be found as a hit.
        assert_eq!(p.record(7), PactOutcome::Allocated);
    }
}
