//! The hybrid memory's energy by component (issue 17 item 2 and item 11's "energy by DRAM,
//! PCM, PACT, ART"): each device's pJ/bit model (`energy::per_bit_energy`, Table I's parts),
//! and 0.01 nJ per access of each table (Table I, CACTI 5.3) from the counters the tables
//! already keep. Reported beside `hybrid` as `hybrid_energy`.

use super::art::ArtStats;
use super::pact::PactStats;
use super::TABLE_ACCESS_NJ;
use crate::stat_struct::stat_struct;
use crate::stats::Stats;

stat_struct! {
    /// Energy of the hybrid memory by component, in nJ.
    pub struct HybridEnergy {
        pub dram_nj: f64 = sum("nJ", "the DRAM device's memory.energy.per_bit.total_nj (array and row-buffer pJ/bit); a part declaring no pJ/bit energies: its current-based energy.total_nj instead"),
        pub pcm_nj: f64 = sum("nJ", "the PCM device's energy, as dram_nj"),
        pub pact_nj: f64 = sum("nJ", "0.01 nJ per PACT update (hybrid.pact.updates; the OS's periodic read of the table is not charged, bulksim's choice)"),
        pub art_nj: f64 = sum("nJ", "0.01 nJ per ART access: lookups, inserts, bit updates and flips (0 under cpm, which has no ART on the access path)"),
        pub total_nj: f64 = sum("nJ", "dram_nj + pcm_nj + pact_nj + art_nj"),
    }
}

/// A device's energy for the breakdown: its pJ/bit model if the part declares one, else its
/// current-based total.
fn device_nj(s: &Stats) -> f64 {
    if s.energy.per_bit_source.is_empty() {
        s.energy.total_nj
    } else {
        s.energy.per_bit.total_nj
    }
}

/// ART accesses Table I's energy is charged for (`Art::charged_accesses`'s sum).
fn art_accesses(a: &ArtStats) -> u64 {
    a.lookups + a.inserts + a.bit_updates + a.flips
}

/// The breakdown from the two devices' stats and the tables' counters.
pub fn hybrid_energy(dram: &Stats, pcm: &Stats, pact: &PactStats, art: &ArtStats) -> HybridEnergy {
    let mut e = HybridEnergy {
        dram_nj: device_nj(dram),
        pcm_nj: device_nj(pcm),
        pact_nj: pact.updates as f64 * TABLE_ACCESS_NJ,
        art_nj: art_accesses(art) as f64 * TABLE_ACCESS_NJ,
        total_nj: 0.0,
    };
    e.total_nj = e.dram_nj + e.pcm_nj + e.pact_nj + e.art_nj;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1,000 PACT updates and 300 ART accesses at 0.01 nJ: 10 and 3 nJ; devices by model.
    #[test]
    fn tables_cost_a_hundredth_of_a_nanojoule_per_access() {
        let mut dram = Stats::default();
        dram.energy.total_nj = 500.0; // current-based: used only without a pJ/bit model
        dram.energy.per_bit.total_nj = 40.0;
        dram.energy.per_bit_source = "Table I".into();
        let mut pcm = Stats::default();
        pcm.energy.total_nj = 70.0;
        let pact = PactStats {
            updates: 1000,
            ..Default::default()
        };
        let art = ArtStats {
            lookups: 200,
            inserts: 50,
            bit_updates: 40,
            flips: 10,
            ..Default::default()
        };
        let e = hybrid_energy(&dram, &pcm, &pact, &art);
        assert_eq!((e.dram_nj, e.pcm_nj), (40.0, 70.0));
        assert!((e.pact_nj - 10.0).abs() < 1e-9 && (e.art_nj - 3.0).abs() < 1e-9);
        assert!((e.total_nj - 123.0).abs() < 1e-9);
    }
}
