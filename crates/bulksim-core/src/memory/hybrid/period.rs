//! The OS's periodic migration policy of the hybrid memory (`HybridMemory::period`): the PACT
//! drained into scores by virtual page, the candidates for promotion and demotion, the plan
//! (`hybrid::policy::plan`), then the plan's migrations started (or, under CPM, queued to run
//! one at a time), and under OBM the partly promoted pages completed for ART room.

use super::{unpack, vpage, HybridMemory, Planned};
use crate::error::Result;
use crate::hybrid::art::Direction;
use crate::hybrid::policy::{
    completions_for_room, plan, Candidate, DramFrames, PartlyPromoted, Plan, Thresholds,
};
use crate::hybrid::{Device, PAGE_BYTES};
use crate::os::Os;
use std::collections::BTreeSet;

impl HybridMemory {
    /// The OS's period at time `now`: drains the PACT into scores by virtual page, plans
    /// with `policy::plan`, starts the plan's migrations (entries inserted, every block's
    /// copy queued). Returns the devices whose queues got work.
    pub fn period(&mut self, os: &mut Os, now: u64) -> Result<Vec<usize>> {
        self.next_period_fs = now + self.period_fs;
        self.stats.periods += 1;
        self.update_scores(os);
        let pcm = self.promotion_candidates(os);
        let dram = self.demotion_candidates();
        let vacating = self
            .migrations
            .values()
            .filter(|m| m.direction == Direction::Demoting)
            .count() as u64;
        let frames = DramFrames {
            free: Self::free_dram_count(os),
            vacating,
            total: self.dram_pages_total,
        };
        let mut room = self.art.room();
        let cpm = self.cpm;
        let p = plan(&pcm, &dram, frames, Thresholds::from(&self.cfg), |k| {
            cpm || room.reserve(k)
        });
        self.stats.promotions_skipped += p.promotions_skipped;
        if cpm {
            return self.queue_cpm_plan(&p, os, now);
        }
        let mut woken = Vec::new();
        self.start_promotions(&p, os, &mut woken);
        self.start_demotions(&p, os, &mut woken)?;
        if self.cfg.art_full_completes && self.complete_for_room(&p) {
            woken.push(self.pcm);
        }
        woken.sort_unstable();
        woken.dedup();
        Ok(woken)
    }

    /// `period`'s first step: the PACT drained into the scores, by virtual page (a frame
    /// no process owns is left out).
    fn update_scores(&mut self, os: &Os) {
        self.pact.drain_into(&mut self.counts);
        let table = os.frame_table();
        let mut vcounts = Vec::with_capacity(self.counts.len());
        for &(page, count) in &self.counts {
            let Ok(frame) = u32::try_from(page) else {
                continue;
            };
            if frame as usize >= table.len() {
                continue;
            }
            if let (Some(pid), vpn) = (table.owner(frame), table.page(frame)) {
                vcounts.push((vpage(pid, vpn), count));
            }
        }
        self.scores.update(&vcounts);
    }

    /// The pages the policy may promote: scored pages mapped to a PCM frame of their own
    /// (not shared) that no migration holds.
    fn promotion_candidates(&self, os: &Os) -> Vec<Candidate> {
        let table = os.frame_table();
        let mut pcm = Vec::new();
        for (vp, score) in self.scores.iter() {
            let (pid, vpn) = unpack(vp);
            let Some(pa) = os.lookup(pid, vpn * PAGE_BYTES) else {
                continue;
            };
            let page = pa / PAGE_BYTES;
            if self.frame(page).device == Device::Pcm
                && !self.migrations.contains_key(&page)
                && table.refcount(page as u32) == 1
            {
                pcm.push(Candidate {
                    page: vp,
                    score,
                    key: Some(page),
                });
            }
        }
        pcm
    }

    /// The pages the policy may demote: those in DRAM frames that no migration holds, and
    /// under `cm_obm` the partly promoted pages (keyless: completed first if chosen).
    fn demotion_candidates(&self) -> Vec<Candidate> {
        let mut dram: Vec<Candidate> = self
            .in_dram
            .iter()
            .filter(|(d, _)| !self.migrations.contains_key(d))
            .map(|(&d, &(pid, vpn, _))| Candidate {
                page: vpage(pid, vpn),
                score: self.scores.score(vpage(pid, vpn)),
                key: Some(d),
            })
            .collect();
        // `cm_obm`: a partly promoted page holds a DRAM frame too; chosen for demotion it
        // is completed first (no new ART way now), then demoted whole by a later period.
        dram.extend(
            self.migrations
                .values()
                .filter(|m| m.direction == Direction::Promoting && !m.background)
                .map(|m| Candidate {
                    page: vpage(m.pid, m.vpn),
                    score: self.scores.score(vpage(m.pid, m.vpn)),
                    key: None,
                }),
        );
        dram
    }

    /// CPM's period: the plan becomes the list of migrations run one at a time; an idle
    /// CPM sets the first one up. Returns the devices whose queues got work.
    fn queue_cpm_plan(&mut self, p: &Plan, os: &mut Os, now: u64) -> Result<Vec<usize>> {
        let mut woken = Vec::new();
        // The list is rebuilt each period and run one migration at a time.
        self.cpm_list.clear();
        for (promote, list) in [(true, &p.promote), (false, &p.demote)] {
            for c in list {
                self.cpm_list.push_back(Planned {
                    promote,
                    vp: c.page,
                    key: c.key.expect("cpm plans with keys"),
                });
            }
        }
        if !self.cpm_list.is_empty() && self.migrations.is_empty() && !self.cpm_set_up {
            // Idle: the first migration is set up now, or when a hand-off still
            // running ends.
            self.set_up_next_cpm(now.max(self.cpm_not_before_fs));
        }
        woken.extend(self.start_next_cpm(os, now)?);
        Ok(woken)
    }

    /// The plan's promotions, while the DRAM pool has frames: each started migration's
    /// PCM device goes into `woken`.
    fn start_promotions(&mut self, p: &Plan, os: &mut Os, woken: &mut Vec<usize>) {
        for c in &p.promote {
            let key = c.key.expect("a promotion has a key");
            let Some(dest) = Self::dram_pool(os).peek() else {
                break;
            };
            let (pid, vpn) = unpack(c.page);
            if self.start(key, dest, Direction::Promoting, pid, vpn, false) {
                os.take_external();
                self.stats.promotions_started += 1;
                woken.push(self.pcm);
            }
        }
    }

    /// The plan's demotions (a keyless one is a partly promoted page: see
    /// `demote_partly_promoted`); each device that got copies goes into `woken`.
    fn start_demotions(&mut self, p: &Plan, os: &mut Os, woken: &mut Vec<usize>) -> Result<()> {
        for c in &p.demote {
            let Some(key) = c.key else {
                self.demote_partly_promoted(c.page, woken);
                continue;
            };
            let had_home = self.in_dram[&key].2.is_some();
            let home = self.home_of(key, os)?;
            let (pid, vpn, _) = self.in_dram[&key];
            if self.start_demotion(key, home, had_home, pid, vpn) {
                self.stats.demotions_started += 1;
                woken.push(self.dram);
            }
        }
        Ok(())
    }

    /// A partly promoted page the plan demotes: under `cm_obm_pd` its entry flips in place
    /// (a partial demotion); otherwise it is completed first (its rest copied), to be
    /// demoted whole by a later period.
    fn demote_partly_promoted(&mut self, vp: u64, woken: &mut Vec<usize>) {
        let (pid, vpn) = unpack(vp);
        let key = self
            .migrations
            .values()
            .find(|m| m.pid == pid && m.vpn == vpn)
            .expect("a partly promoted page")
            .key;
        if self.cfg.mechanism.partial_demotion() {
            // Partial demotion: the entry flips in place, the promoted blocks go
            // back to the PCM home.
            let id = self.art.find(key).expect("its entry");
            self.art.flip(id);
            let m = self.migrations.get_mut(&key).expect("a migration");
            std::mem::swap(&mut m.src, &mut m.dest);
            m.direction = Direction::Demoting;
            m.flipped = true;
            let dram_page = m.src;
            if self.cfg.elide_clean {
                self.elide_unwritten(key, dram_page);
            }
            self.copy_rest(key);
            self.stats.demotions_started += 1;
            self.stats.partial_demotions += 1;
            woken.push(self.dram);
            return;
        }
        self.copy_rest(key);
        self.stats.partial_completions += 1;
        woken.push(self.pcm);
    }

    /// OBM: the ART refused this period's plan ways (`plan.refused`), which partly promoted
    /// pages may hold for ever (a page completes only once all its blocks are read or
    /// written back). Completes as many of them as ways were refused (skipped promotions
    /// plus the demotions still wanted), from the refused keys' sets, chosen by
    /// `policy::completions_for_room` among the pages promoting for at least
    /// `art_full_min_periods` whole periods (one just promoted has not yet shown whether
    /// its blocks are used), so that the ways are free for a later period. Returns whether
    /// any started.
    fn complete_for_room(&mut self, plan: &Plan) -> bool {
        let wanted = plan.promotions_skipped + plan.demotions_short;
        if wanted == 0 {
            return false;
        }
        let sets: BTreeSet<usize> = plan.refused.iter().map(|&k| self.art.set_of(k)).collect();
        let partial: Vec<PartlyPromoted> = self
            .migrations
            .iter()
            .filter(|(&k, m)| {
                m.direction == Direction::Promoting
                    && !m.background
                    && sets.contains(&self.art.set_of(k))
            })
            .map(|(&key, m)| {
                let page = vpage(m.pid, m.vpn);
                PartlyPromoted {
                    key,
                    page,
                    score: self.scores.score(page),
                    demand_copies: m.demand_copies,
                    started_period: m.started_period,
                }
            })
            .collect();
        let newest_start = self
            .stats
            .periods
            .checked_sub(u64::from(self.cfg.art_full_min_periods));
        let mut started = false;
        for key in completions_for_room(&partial, wanted, newest_start) {
            self.copy_rest(key);
            self.stats.art_full_completions += 1;
            started = true;
        }
        started
    }
}
