//! The OS's migration policy (issue 17 item 5; the paper gives no formula, so every
//! constant here is bulksim's choice and a `hybrid.*` key): once a period it folds the
//! drained PACT counts into a decayed score per virtual page, then plans which PCM pages
//! to promote and which DRAM pages to demote. It owns the scores and the plan only: the
//! caller translates physical pages to virtual ones (frame owners), says which pages are
//! candidates, how many DRAM frames are free or being vacated, and whether the ART has a
//! way for each key, and then carries the plan out (CPM one migration at a time, the CM
//! variants all at once). Everything is ordered by score and page number, never by a hash
//! map, so the same inputs give the same plan on every machine.

use super::config::HybridConfig;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Scores below this are dropped and read as 0 (bulksim's choice): about 16 idle periods
/// after a count of 1 at decay 0.5. It keeps the table to pages touched lately; such a
/// page then ties with never-touched ones and is ordered by page number.
pub const SCORE_FLOOR: f64 = 1.0 / 65536.0;

/// Decayed access scores by virtual page (the caller's page id, e.g. process and virtual
/// page number packed in a u64; ties go to the lower id). Kept across remaps because the
/// caller keys them by virtual, not physical, page.
#[derive(Clone, Debug, PartialEq)]
pub struct Scores {
    decay: f64,
    scores: BTreeMap<u64, f64>,
}

impl Scores {
    pub fn new(decay: f64) -> Scores {
        Scores {
            decay,
            scores: BTreeMap::new(),
        }
    }

    /// One period: every score becomes count + decay x old score, a page without a count
    /// counting 0. A page listed twice (counted under two frames, e.g. across a remap) gets
    /// the sum of its counts.
    pub fn update(&mut self, counts: &[(u64, u32)]) {
        for s in self.scores.values_mut() {
            *s *= self.decay;
        }
        for &(page, count) in counts {
            *self.scores.entry(page).or_insert(0.0) += f64::from(count);
        }
        self.scores.retain(|_, s| *s >= SCORE_FLOOR);
    }

    /// The score of `page` (0 if it has none).
    pub fn score(&self, page: u64) -> f64 {
        self.scores.get(&page).copied().unwrap_or(0.0)
    }

    /// Drops `page`'s score (its memory was freed).
    pub fn forget(&mut self, page: u64) {
        self.scores.remove(&page);
    }

    /// (page, score) in page order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.scores.iter().map(|(&p, &s)| (p, s))
    }

    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }
}

/// A page the policy may migrate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// The virtual page (ties between equal scores go to the lower one).
    pub page: u64,
    pub score: f64,
    /// Key of the ART entry the migration would insert: the PCM home for a promotion, the
    /// DRAM page for a demotion of a DRAM-homed page. None when it inserts nothing: a
    /// partial demotion flips the page's own entry, and CPM uses no ART.
    pub key: Option<u64>,
}

/// The policy's thresholds (`hybrid.promote_min`, `hybrid.free_min`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    pub promote_min: f64,
    pub free_min: f64,
}

impl From<&HybridConfig> for Thresholds {
    fn from(c: &HybridConfig) -> Thresholds {
        Thresholds {
            promote_min: c.promote_min,
            free_min: c.free_min,
        }
    }
}

/// DRAM frames as the period starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramFrames {
    /// Free now (destinations for promotions).
    pub free: u64,
    /// Held by demotions in flight: free once they complete.
    pub vacating: u64,
    /// All DRAM frames.
    pub total: u64,
}

impl DramFrames {
    /// Free plus vacating frames below which the policy demotes: free_min of all frames,
    /// rounded up so that any positive free_min keeps at least one frame coming free.
    pub fn watermark(&self, free_min: f64) -> u64 {
        (free_min * self.total as f64).ceil() as u64
    }
}

/// What to start this period, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// PCM pages to promote, hottest first.
    pub promote: Vec<Candidate>,
    /// DRAM pages to demote, coldest first.
    pub demote: Vec<Candidate>,
    /// Demotions refused an ART way: they wait for a later period. The next coldest page
    /// needing a way is tried (its set may have one), a partly promoted page is not.
    pub demote_waiting: Vec<Candidate>,
    /// PCM pages hot enough to promote, with a free frame, whose ART set was full
    /// (skipped, counted).
    pub promotions_skipped: u64,
    /// ART keys refused a way this period: the skipped promotions' and the waiting
    /// demotions', in plan order.
    pub refused: Vec<u64>,
    /// With a demotion waiting: the demotions the watermark still asked for at the end.
    pub demotions_short: u64,
}

/// Hottest first, ties to the lower page.
fn hotter(a: &Candidate, b: &Candidate) -> Ordering {
    b.score.total_cmp(&a.score).then(a.page.cmp(&b.page))
}

/// Coldest first, ties to the lower page.
fn colder(a: &Candidate, b: &Candidate) -> Ordering {
    a.score.total_cmp(&b.score).then(a.page.cmp(&b.page))
}

/// Plans one period. `pcm` are the PCM pages not migrating; `dram` the pages holding a
/// DRAM frame that may be demoted (a partly promoted page included, with `key` None under
/// partial demotion). `art_reserve(key)` takes an ART way for `key` and says whether there
/// was one (e.g. [`super::art::ArtRoom::reserve`]; always true for CPM).
///
/// Promotion: PCM pages scoring at least `promote_min`, hottest first, each taking a free
/// DRAM frame and an ART way; a page whose set is full is skipped and the next tried; none
/// are promoted once the free frames are used up. The hot pages not promoted are waiting.
/// Demotion: while free (after the promotions) plus vacating frames are under the
/// watermark, the coldest DRAM pages strictly colder than the best waiting page are
/// demoted. With no page waiting nothing is demoted: DRAM pages make way only for a page
/// that would use the frame. A demotion refused an ART way waits and the next coldest
/// page needing a way is tried; once one waits no partly promoted page (`key` None, it
/// needs no new way) is demoted: else a full ART sent back the pages just promoted, hot,
/// while cold ones stayed (the caller frees ways instead, see `Plan::refused`).
pub fn plan(
    pcm: &[Candidate],
    dram: &[Candidate],
    frames: DramFrames,
    t: Thresholds,
    mut art_reserve: impl FnMut(u64) -> bool,
) -> Plan {
    let mut out = Plan::default();
    let mut hot: Vec<Candidate> = pcm
        .iter()
        .filter(|c| c.score >= t.promote_min)
        .copied()
        .collect();
    hot.sort_by(hotter);

    let mut free = frames.free;
    let mut best_waiting: Option<f64> = None;
    for c in &hot {
        if free == 0 {
            best_waiting.get_or_insert(c.score);
            break; // the rest are colder and wait too
        }
        if let Some(k) = c.key.filter(|&k| !art_reserve(k)) {
            out.promotions_skipped += 1;
            out.refused.push(k);
            best_waiting.get_or_insert(c.score);
            continue;
        }
        out.promote.push(*c);
        free -= 1;
    }

    let Some(best) = best_waiting else {
        return out;
    };
    let watermark = frames.watermark(t.free_min);
    let mut coming_free = free + frames.vacating;
    if coming_free >= watermark {
        return out;
    }
    let mut cold: Vec<Candidate> = dram.iter().filter(|c| c.score < best).copied().collect();
    cold.sort_by(colder);
    for c in cold {
        if coming_free >= watermark {
            break;
        }
        match c.key {
            Some(k) if !art_reserve(k) => {
                out.demote_waiting.push(c);
                out.refused.push(k);
                continue;
            }
            // A partly promoted page needs no new way: after a refusal it would go in a
            // colder page's place just because the ART is full.
            None if !out.demote_waiting.is_empty() => continue,
            _ => {}
        }
        out.demote.push(c);
        coming_free += 1;
    }
    if !out.demote_waiting.is_empty() {
        out.demotions_short = watermark.saturating_sub(coming_free);
    }
    out
}

/// A partly promoted page (OBM) that `complete_for_room` may complete to free its ART way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartlyPromoted {
    /// Its ART key (the PCM home).
    pub key: u64,
    /// The virtual page (ties go to the lower one).
    pub page: u64,
    /// Its page's decayed access score (`Scores::score`): among pages with as many blocks
    /// copied, the hotter is completed first.
    pub score: f64,
    /// Blocks copied on demand so far.
    pub demand_copies: u32,
    /// The period in which its promotion started.
    pub started_period: u64,
}

/// Which partly promoted pages to complete when the ART refused `wanted` ways
/// (`hybrid.art_full_completes`): among those started in period `newest_start` or before
/// (None: none is old enough), the ones with the most blocks copied on demand first (least
/// left to copy), then hotter, then the lower page. Returns their keys.
pub fn completions_for_room(
    partial: &[PartlyPromoted],
    wanted: u64,
    newest_start: Option<u64>,
) -> Vec<u64> {
    let Some(newest) = newest_start else {
        return Vec::new();
    };
    let mut old: Vec<&PartlyPromoted> = partial
        .iter()
        .filter(|p| p.started_period <= newest)
        .collect();
    old.sort_by(|a, b| {
        b.demand_copies
            .cmp(&a.demand_copies)
            .then(b.score.total_cmp(&a.score))
            .then(a.page.cmp(&b.page))
    });
    old.iter()
        .take(usize::try_from(wanted).unwrap_or(usize::MAX))
        .map(|p| p.key)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hybrid::art::{Art, Direction};

    fn c(page: u64, score: f64) -> Candidate {
        Candidate {
            page,
            score,
            key: Some(page),
        }
    }

    fn pages(list: &[Candidate]) -> Vec<u64> {
        list.iter().map(|c| c.page).collect()
    }

    const T: Thresholds = Thresholds {
        promote_min: 2.0,
        free_min: 0.01,
    };

    /// 1000 DRAM frames (watermark 10), `free` of them free.
    fn frames(free: u64, vacating: u64) -> DramFrames {
        DramFrames {
            free,
            vacating,
            total: 1000,
        }
    }

    #[test]
    fn scores_decay_and_add_the_period_counts() {
        let mut s = Scores::new(0.5);
        s.update(&[(3, 4), (1, 2)]);
        assert_eq!((s.score(3), s.score(1), s.score(2)), (4.0, 2.0, 0.0));
        s.update(&[(3, 1), (3, 2)]);
        // 3 + 0.5 x 4 (two counts of one page summed), 0.5 x 2.
        assert_eq!((s.score(3), s.score(1)), (5.0, 1.0));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(1, 1.0), (3, 5.0)]);
        s.forget(3);
        assert_eq!(s.score(3), 0.0);
    }

    #[test]
    fn idle_scores_fall_below_the_floor_and_are_dropped() {
        let mut s = Scores::new(0.5);
        s.update(&[(9, 1)]);
        for _ in 0..16 {
            s.update(&[]);
        }
        assert_eq!(s.score(9), SCORE_FLOOR);
        s.update(&[]);
        assert!(s.is_empty());
    }

    #[test]
    fn promotes_hottest_first_with_ties_to_the_lower_page() {
        let pcm = [c(5, 3.0), c(2, 9.0), c(7, 3.0), c(4, 3.0)];
        let p = plan(&pcm, &[], frames(100, 0), T, |_| true);
        assert_eq!(pages(&p.promote), vec![2, 4, 5, 7]);
        assert!(p.demote.is_empty());
    }

    #[test]
    fn only_pages_scoring_at_least_promote_min_are_promoted() {
        let pcm = [c(1, 1.99), c(2, 2.0), c(3, 0.0)];
        let p = plan(&pcm, &[], frames(100, 0), T, |_| true);
        assert_eq!(pages(&p.promote), vec![2]);
    }

    #[test]
    fn promotions_stop_when_the_free_frames_run_out() {
        let pcm = [c(1, 5.0), c(2, 8.0), c(3, 6.0)];
        let p = plan(&pcm, &[], frames(2, 20), T, |_| true);
        assert_eq!(pages(&p.promote), vec![2, 3]);
    }

    #[test]
    fn a_full_art_set_skips_that_promotion_and_tries_the_next() {
        // ART of 2 sets x 1 way, set 0 already holding a migration: even keys are refused.
        let mut art = Art::new(2, 1).unwrap();
        art.insert(100, 100, 1, Direction::Promoting).unwrap();
        let mut room = art.room();
        let pcm = [c(2, 9.0), c(3, 8.0), c(5, 7.0)];
        let p = plan(&pcm, &[], frames(100, 0), T, |k| room.reserve(k));
        // 2 is refused (set 0 full); 3 takes set 1's last way, so 5 is refused too.
        assert_eq!(pages(&p.promote), vec![3]);
        assert_eq!(p.promotions_skipped, 2);
        assert_eq!(p.refused, vec![2, 5]);
    }

    #[test]
    fn demotes_coldest_pages_while_under_the_free_watermark() {
        // No frame free: the hottest PCM page waits; watermark 10, 7 vacating: demote 3.
        let pcm = [c(50, 4.0)];
        let dram: Vec<Candidate> = (0..8).map(|p| c(p, 8.0 - p as f64)).collect();
        let p = plan(&pcm, &dram, frames(0, 7), T, |_| true);
        assert!(p.promote.is_empty());
        assert_eq!(pages(&p.demote), vec![7, 6, 5]);
        // At the watermark nothing more is demoted.
        let p = plan(&pcm, &dram, frames(0, 10), T, |_| true);
        assert!(p.demote.is_empty());
    }

    #[test]
    fn promotions_use_frames_that_the_watermark_then_asks_back() {
        // One free frame, 9 vacating (watermark 10): page 50 takes the frame, leaving 9
        // coming free, so one page is demoted for page 51, which still waits. Without a
        // waiting page nothing is demoted although the count is under the watermark.
        let pcm = [c(50, 6.0), c(51, 5.0)];
        let dram = [c(1, 0.5), c(2, 0.25)];
        let p = plan(&pcm, &dram, frames(1, 9), T, |_| true);
        assert_eq!(pages(&p.promote), vec![50]);
        assert_eq!(pages(&p.demote), vec![2]);
        let p = plan(&pcm[..1], &dram, frames(1, 9), T, |_| true);
        assert_eq!(pages(&p.promote), vec![50]);
        assert!(p.demote.is_empty(), "no page waits for a frame");
    }

    #[test]
    fn only_pages_colder_than_the_best_waiting_page_are_demoted() {
        let pcm = [c(50, 3.0), c(51, 2.5)];
        // Page 1 ties with the best waiting page (3.0): not colder, kept.
        let dram = [c(1, 3.0), c(2, 2.9), c(3, 0.0), c(4, 0.0)];
        let p = plan(&pcm, &dram, frames(0, 0), T, |_| true);
        // Ties among the coldest go to the lower page.
        assert_eq!(pages(&p.demote), vec![3, 4, 2]);
    }

    #[test]
    fn no_waiting_page_means_no_demotion() {
        let pcm = [c(50, 1.0)]; // below promote_min: not waiting
        let dram = [c(1, 0.0)];
        let p = plan(&pcm, &dram, frames(0, 0), T, |_| true);
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn a_demotion_refused_an_art_way_waits_and_no_partly_promoted_page_goes_in_its_place() {
        let pcm = [c(50, 9.0)];
        let partly_promoted = Candidate {
            page: 5,
            score: 3.0,
            key: None,
        };
        let dram = [c(2, 0.0), c(3, 1.0), c(4, 2.0), partly_promoted];
        let p = plan(&pcm, &dram, frames(0, 6), T, |k| k != 3);
        // Page 2 goes; page 3's set is full: it waits; page 4 finds a way; page 5, partly
        // promoted, would need none but does not go in page 3's place.
        assert_eq!(pages(&p.demote), vec![2, 4]);
        assert_eq!(pages(&p.demote_waiting), vec![3]);
        assert_eq!(p.refused, vec![3]);
        assert_eq!(
            p.demotions_short, 2,
            "watermark 10: 6 vacating, pages 2 and 4"
        );
    }

    #[test]
    fn a_partial_demotion_needs_no_art_way() {
        let pcm = [c(50, 9.0)];
        let dram = [Candidate {
            page: 2,
            score: 0.0,
            key: None,
        }];
        let p = plan(&pcm, &dram, frames(0, 9), T, |_| false);
        assert_eq!(pages(&p.demote), vec![2]);
        assert_eq!(
            p.promotions_skipped, 0,
            "no free frame: the promotion never asked"
        );
    }

    #[test]
    fn the_watermark_rounds_up_and_follows_the_config() {
        let f = DramFrames {
            free: 0,
            vacating: 0,
            total: 64,
        };
        assert_eq!(f.watermark(0.01), 1);
        assert_eq!(f.watermark(0.0), 0);
        assert_eq!(frames(0, 0).watermark(0.01), 10);
        let t = Thresholds::from(&HybridConfig::default());
        assert_eq!(t, T);
    }

    fn partly(key: u64, demand_copies: u32, score: f64, started_period: u64) -> PartlyPromoted {
        PartlyPromoted {
            key,
            page: key,
            score,
            demand_copies,
            started_period,
        }
    }

    #[test]
    fn pages_promoted_this_period_are_not_completed_for_room() {
        // Period 5: page 3 started this period; with a minimum age of one whole period
        // only pages started in period 4 or before are candidates.
        let partial = [
            partly(1, 2, 1.0, 4),
            partly(2, 9, 1.0, 1),
            partly(3, 0, 50.0, 5),
            partly(4, 2, 8.0, 3),
        ];
        // Most blocks copied on demand first, then hotter, then the lower page.
        assert_eq!(completions_for_room(&partial, 3, Some(4)), vec![2, 4, 1]);
        assert_eq!(completions_for_room(&partial, 10, Some(4)), vec![2, 4, 1]);
        assert_eq!(completions_for_room(&partial, 1, Some(4)), vec![2]);
        // Minimum age 0: this period's page too (last: no block used yet).
        assert_eq!(
            completions_for_room(&partial, 10, Some(5)),
            vec![2, 4, 1, 3]
        );
        // Too early in the run for any page to be old enough.
        assert!(completions_for_room(&partial, 10, None).is_empty());
        assert!(completions_for_room(&partial, 0, Some(5)).is_empty());
    }
}
