//! Run statistics: the serialisable `Stats` record, the summaries of the latency histograms
//! (`counters`) behind its percentiles, the table giving every stat a unit and a description (generated from the
//! `stat_struct!` declarations; docs/stats.md is generated from it), and the short human
//! summary. Everything outside `host` is a deterministic function of config and input; `host`
//! holds wall-clock figures.

use crate::counters::LatencyHistogram;
use crate::energy::EnergyBreakdown;
use crate::stat_struct::{extend, stat_struct, sub_each, FieldDoc};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

stat_struct! {
    /// A latency distribution's summary, in memory cycles and in ns. Its descriptions name
    /// `{what}` (read, copy, ...) and `{span}` (from when to when), which the field holding it
    /// gives.
    pub struct LatencyStats {
        pub mean_mem_cycles: f64 = derived("memory cycles", "mean {what} latency{span}"),
        pub p50_mem_cycles: u64 = derived("memory cycles", "median {what} latency (nearest rank)"),
        pub p99_mem_cycles: u64 = derived("memory cycles", "99th percentile {what} latency (nearest rank)"),
        pub max_mem_cycles: u64 = max("memory cycles", "largest {what} latency"),
        pub mean_ns: f64 = derived("ns", "mean {what} latency"),
        pub p50_ns: f64 = derived("ns", "median {what} latency"),
        pub p99_ns: f64 = derived("ns", "99th percentile {what} latency"),
        pub max_ns: f64 = max("ns", "largest {what} latency"),
    }
}

impl LatencyStats {
    pub fn from_histogram(h: &LatencyHistogram, tck_ns: f64) -> LatencyStats {
        let (p50, p99) = (h.percentile(50.0), h.percentile(99.0));
        LatencyStats {
            mean_mem_cycles: h.mean(),
            p50_mem_cycles: p50,
            p99_mem_cycles: p99,
            max_mem_cycles: h.max(),
            mean_ns: h.mean() * tck_ns,
            p50_ns: p50 as f64 * tck_ns,
            p99_ns: p99 as f64 * tck_ns,
            max_ns: h.max() as f64 * tck_ns,
        }
    }
}

stat_struct! {
    /// DRAM energy by component and by rank, in nJ (see `energy.rs`).
    pub struct EnergyStats {
        /// act_nj, pre_nj, read_nj, write_nj, refresh_nj, background_nj, io_nj.
        #[serde(flatten)]
        pub components: EnergyBreakdown = flatten(),
        pub core_nj: f64 = sum("nJ", "DRAM energy without channel I/O: the six components above"),
        pub total_nj: f64 = sum("nJ", "core_nj + io_nj"),
        /// Total per rank, channel by channel.
        pub by_rank_nj: Vec<f64> = merge(extend, sub = sub_each, "nJ per rank", "total energy of each rank, channel 0's ranks first"),
        pub power_source: String = keep("text", "where the preset's currents and I/O powers come from"),
        /// CMMP's dynamic model, beside the current-based one above (`energy::per_bit_energy`).
        pub per_bit: crate::energy::BitEnergyStats = nested(),
        pub per_bit_source: String = keep("text", "where the part's pJ/bit energies come from; empty: it declares none and per_bit is all 0"),
    }
}

/// `{span}` of the bulk operations' latencies.
macro_rules! bulk_span {
    () => {
        ", from arrival at the memory system to the end of its last command (data written, banks precharged)"
    };
}

stat_struct! {
    /// Bulk operations (copy and initialization): how their bytes moved, their latencies and
    /// the energy of the commands issued for them.
    pub struct BulkStats {
        pub mechanism: String = keep("name", "how bulk operations executed (bulk.mechanism config key)"),
        pub copies: u64 = sum("operations", "copy operations completed"),
        pub inits: u64 = sum("operations", "initialization operations completed"),
        pub bytes_copied: u64 = sum("bytes", "bytes the copy operations asked to copy"),
        pub bytes_initialized: u64 = sum("bytes", "bytes the initialization operations asked to set"),
        pub fpm_bytes: u64 = sum("bytes", "bytes moved by RowClone Fast Parallel Mode (whole rows within a subarray)"),
        pub psm_bytes: u64 = sum("bytes", "bytes moved by RowClone Pipelined Serial Mode (TRANSFER, once per byte even when it goes through a temporary row)"),
        pub channel_copy_bytes: u64 = sum("bytes", "bytes moved over the channel by line reads and writes (mechanism channel, and RowClone's fallback and seed rows)"),
        pub dma_bytes: u64 = sum("bytes", "bytes moved over the channel by the memory controller's DMA engine (mechanism mc_dma)"),
        pub in_dram_bytes: u64 = sum("bytes", "fpm_bytes + psm_bytes: bytes that never crossed the channel"),
        pub channel_bytes: u64 = sum("bytes", "data carried over the channel for bulk operations: RD and WR bursts issued for them x line size (a copied line counts twice, read and write)"),
        pub copy_channel_bytes: u64 = sum("bytes", "channel bursts of line jobs (copier) for copy operations x line size"),
        pub init_channel_bytes: u64 = sum("bytes", "channel bursts for initialization operations: copier line jobs and seed-row writes, x line size"),
        pub copy_latency: LatencyStats = nested(what = "copy", span = bulk_span!()),
        pub init_latency: LatencyStats = nested(what = "initialization", span = bulk_span!()),
        pub energy_nj: f64 = sum("nJ", "DRAM core energy of the commands issued for bulk operations (ACT, ACT2, PRE, RD, WR, TRANSFER), without background or refresh"),
        pub energy_with_io_nj: f64 = sum("nJ", "bulk.energy_nj plus the channel I/O of their RD and WR bursts"),
        pub reserved_bytes: u64 = sum("bytes", "capacity RowClone reserves: one zero row per subarray and one temporary row per bank (0 for other mechanisms)"),
        pub usable_bytes: u64 = sum("bytes", "capacity minus bulk.reserved_bytes"),
    }
}

stat_struct! {
    /// Wall-clock figures of the run: the only stats that are not deterministic.
    pub struct HostStats {
        pub wall_seconds: f64 = max("s", "wall-clock time of the simulation (not deterministic)"),
        pub requests_per_wall_second: f64 = derived("requests/s", "requests simulated per wall-clock second (not deterministic)"),
        pub memory_offers: u64 = sum("offers", "full system: requests the last cache level offered this memory, a refused one counted again each time it is offered again; host work (deterministic, but a property of the simulator, not of the modelled system: it changes when the simulator gets faster)"),
    }
}

/// `merge` of per-k lists (`ranks_refreshing_ns`): entry by entry, the longer list's tail kept.
fn add_each(mine: &mut Vec<f64>, theirs: &[f64]) {
    if mine.len() < theirs.len() {
        mine.resize(theirs.len(), 0.0);
    }
    for (m, t) in mine.iter_mut().zip(theirs) {
        *m += t;
    }
}

stat_struct! {
    /// How refreshes of different ranks coincided.
    pub struct RefreshStats {
        pub adaptive_windows: u64 = sum("windows", "controller.refresh.scheme = adaptive: 8 x tREFI windows ended, all channels"),
        pub adaptive_fine_windows: u64 = sum("windows", "of those, windows refreshed at 4x granularity"),
        pub most_ranks_refreshing: u64 = max("ranks", "the most ranks of one memory device refreshing at the same memory cycle (each REF over its tRFC, from its issue), under any refresh schedule and scheme: what sets the peak refresh power (the reason refreshes are staggered)"),
        pub ranks_refreshing_ns: Vec<f64> = merge(add_each, sub = sub_each, "ns per number of ranks", "list: entry k - 1, for k from 1 to most_ranks_refreshing, is the time during which at least k ranks of a device refreshed at once (each REF over its tRFC), summed over devices; entry 0 is the time any rank refreshed, so entry k - 1 over entry 0 is the share of the refresh time with k or more ranks refreshing"),
        pub overlap_ns: f64 = sum("ns", "for each REF, the part of its tRFC during which another rank's refresh, begun earlier, was still running, summed; among a channel's ranks, or all ranks under controller.refresh.stagger = system (simultaneous refresh overlaps by design)"),
    }
}

stat_struct! {
    /// The memory system's stats: one device's channels together.
    pub struct Stats {
        pub preset: String = keep("name", "memory part preset simulated"),
        pub tck_ns: f64 = keep("ns", "memory clock period"),
        pub mem_cycles: u64 = max("memory cycles", "from cycle 0 until the last request was served by DRAM (last data beat of the last read or write)"),
        pub simulated_ns: f64 = max("ns", "`mem_cycles` in nanoseconds"),
        pub reads: u64 = sum("requests", "read requests received (including forwarded ones)"),
        pub writes: u64 = sum("requests", "write requests received (including merged ones)"),
        pub reads_forwarded: u64 = sum("requests", "reads answered from a queued write to the same line, without a DRAM access"),
        pub writes_merged: u64 = sum("requests", "writes folded into a queued write to the same line"),
        pub writes_absorbed: u64 = sum("requests", "writes dropped on arrival, never issued (controller.write_drain.policy = ideal)"),
        pub read_latency: LatencyStats = nested(what = "read", span = " over reads served by DRAM, from arrival at the controller to the last data beat"),
        pub bandwidth_gbps: f64 = derived("GB/s (1e9 B/s)", "bytes moved by RD and WR bursts over `simulated_ns`, all channels"),
        pub peak_bandwidth_gbps: f64 = sum("GB/s (1e9 B/s)", "data rate x bus width x channels"),
        pub row_hits: u64 = sum("requests", "requests served without an ACT of their own (from a row open when they were served)"),
        pub row_misses: u64 = sum("requests", "requests served from an ACT of their own to a closed bank"),
        pub row_conflicts: u64 = sum("requests", "requests served from an ACT of their own after a PRE of another row of theirs"),
        pub wasted_acts: crate::counters::WastedActs = nested(),
        pub row_hit_rate: f64 = derived("fraction", "row_hits / (row_hits + row_misses + row_conflicts)"),
        pub read_queue_peak: u64 = max("requests", "most reads waiting in one channel's read queue at once (the largest over channels)"),
        pub commands: BTreeMap<String, u64> = sum("commands", "issued commands by name (ACT, PRE, PREA, RD, WR, RDA, WRA, REF, RowClone's ACT2, TRR, TRW, and DDR5's same-bank REFsb, listed only when issued), all channels"),
        pub refreshes: u64 = sum("commands", "all-bank REF commands issued"),
        pub refresh: RefreshStats = nested(),
        pub frontend_stall_mem_cycles: u64 = sum("memory cycles", "cycles in which the next trace request was due but its queue was full"),
        pub out_of_range_requests: u64 = sum("requests", "requests whose address exceeded capacity (upper bits ignored)"),
        pub mcgr_bytes: u64 = keep("bytes", "RowClone minimum copy granularity (the paper's MCGR, section 4.3.2): the smallest aligned range holding whole rows under the address mapping, i.e. the row size across a rank times the channels (and banks) the mapping spreads a row over (RoBaRaCoCh: x channels; RoRaBaChCo: x 1); FPM can copy or zero a 4096-byte OS page only when this is at most 4096 (bulksim run notes when a RowClone mechanism runs where it is not)"),
        pub bulk: BulkStats = nested(),
        pub energy: EnergyStats = nested(),
        pub host: HostStats = nested(),
    }
}

/// Unit and description of one stat (dotted path as in the JSON), for hand-written tables.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StatDoc {
    pub name: &'static str,
    pub unit: &'static str,
    pub description: &'static str,
}

/// Every memory-system stat, generated from the `stat_struct!` declarations above (and
/// `EnergyBreakdown`'s); docs/stats.md is generated from it.
pub static STAT_DOCS: LazyLock<Vec<FieldDoc>> = LazyLock::new(Stats::stat_docs);

/// The memory-system stats that are groups of named entries rather than one value (`commands`,
/// one count per command), each with the names of its entries. Results hold one column per
/// entry (`commands.ACT`), so a figure or table names an entry, never the group.
pub fn stat_groups() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![(
        "commands",
        crate::spec::Command::ALL.iter().map(|c| c.name()).collect(),
    )]
}

impl Stats {
    /// A few readable lines with units.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let l = &self.read_latency;
        let cmds: Vec<String> = self
            .commands
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        s += &format!(
            "preset              {} (tCK {:.3} ns)\n",
            self.preset, self.tck_ns
        );
        s += &format!(
            "simulated           {} cycles = {:.1} ns\n",
            self.mem_cycles, self.simulated_ns
        );
        s += &format!(
            "requests            {} reads ({} forwarded), {} writes ({} merged)\n",
            self.reads, self.reads_forwarded, self.writes, self.writes_merged
        );
        s += &format!(
            "read latency        mean {:.1} ns, p50 {:.1} ns, p99 {:.1} ns, max {:.1} ns\n",
            l.mean_ns, l.p50_ns, l.p99_ns, l.max_ns
        );
        s += &format!(
            "bandwidth           {:.2} GB/s of {:.2} GB/s peak ({:.1}%)\n",
            self.bandwidth_gbps,
            self.peak_bandwidth_gbps,
            100.0 * self.bandwidth_gbps / self.peak_bandwidth_gbps.max(f64::MIN_POSITIVE)
        );
        s += &format!(
            "row buffer          {} hits, {} misses, {} conflicts (hit rate {:.1}%)\n",
            self.row_hits,
            self.row_misses,
            self.row_conflicts,
            100.0 * self.row_hit_rate
        );
        s += &format!("commands            {}\n", cmds.join(", "));
        match self.commands.get("REFsb") {
            Some(&same_bank) => {
                s += &format!(
                    "refreshes           {} all-bank REF, {same_bank} same-bank REFsb\n",
                    self.refreshes
                )
            }
            None => s += &format!("refreshes           {}\n", self.refreshes),
        }
        s += &self.energy_lines();
        s += &self.bulk_lines();
        if self.out_of_range_requests > 0 {
            s += &format!(
                "warning             {} requests addressed beyond capacity; upper address bits were ignored\n",
                self.out_of_range_requests
            );
        }
        s += &format!(
            "host                {:.3} s wall, {:.0} requests/s\n",
            self.host.wall_seconds, self.host.requests_per_wall_second
        );
        s
    }

    /// The energy line, and a note when the part's currents are stand-ins.
    fn energy_lines(&self) -> String {
        let mut s = String::new();
        let (e, c) = (&self.energy, &self.energy.components);
        let uj = |nj: f64| nj / 1000.0;
        s += &format!(
            "DRAM energy         {:.2} uJ = core {:.2} (act {:.2}, pre {:.2}, rd {:.2}, wr {:.2}, ref {:.2}, background {:.2}) + I/O {:.2}\n",
            uj(e.total_nj),
            uj(e.core_nj),
            uj(c.act_nj),
            uj(c.pre_nj),
            uj(c.read_nj),
            uj(c.write_nj),
            uj(c.refresh_nj),
            uj(c.background_nj),
            uj(c.io_nj)
        );
        if crate::spec::is_stand_in_power(&e.power_source) {
            s += &format!(
                "note                the energy uses stand-in currents, not this part's own: {}\n",
                e.power_source
            );
        }
        s
    }

    /// The bulk operations' lines (none without bulk work or reserved rows).
    fn bulk_lines(&self) -> String {
        let mut s = String::new();
        let b = &self.bulk;
        if b.copies + b.inits > 0 {
            s += &format!(
                "bulk operations     {} copies ({} B), {} inits ({} B) by {}: FPM {} B, PSM {} B, over the channel {} B ({} B of bursts)\n",
                b.copies, b.bytes_copied, b.inits, b.bytes_initialized, b.mechanism,
                b.fpm_bytes, b.psm_bytes, b.channel_copy_bytes + b.dma_bytes, b.channel_bytes
            );
            s += &format!(
                "bulk latency        copy mean {:.1} ns (max {:.1}), init mean {:.1} ns (max {:.1}); command energy {:.3} uJ ({:.3} with I/O)\n",
                b.copy_latency.mean_ns, b.copy_latency.max_ns, b.init_latency.mean_ns,
                b.init_latency.max_ns, b.energy_nj / 1000.0, b.energy_with_io_nj / 1000.0
            );
        }
        if b.reserved_bytes > 0 {
            s += &format!(
                "reserved            {} B for RowClone's zero and temporary rows; {} B usable\n",
                b.reserved_bytes, b.usable_bytes
            );
        }
        s
    }
}

#[cfg(test)]
impl crate::stat_struct::DocName for StatDoc {
    fn doc_name(&self) -> &str {
        self.name
    }
}

// The tables' test helper lives beside `FieldDoc`; the system's stats tests reach it here.
#[cfg(test)]
pub(crate) use crate::stat_struct::assert_documented;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stat_is_documented_and_every_doc_is_a_stat() {
        assert_documented(&Stats::default(), "commands", &[], &STAT_DOCS, "STAT_DOCS");
    }

    /// `stat_groups` lists exactly the documented stats whose value is a JSON object, with the
    /// entries a run gives them.
    #[test]
    fn stat_groups_are_the_stats_held_as_objects() {
        let json = serde_json::to_value(Stats::default()).unwrap();
        let objects: Vec<&str> = STAT_DOCS
            .iter()
            .map(|d| d.name.as_str())
            .filter(|name| {
                name.split('.')
                    .try_fold(&json, |v, key| v.get(key))
                    .is_some_and(|v| v.is_object())
            })
            .collect();
        let groups = stat_groups();
        let names: Vec<&str> = groups.iter().map(|(name, _)| *name).collect();
        assert_eq!(objects, names);
        let run = Stats {
            commands: crate::spec::Command::ALL
                .iter()
                .map(|c| (c.name().to_string(), 0))
                .collect(),
            ..Default::default()
        };
        let entries: Vec<&str> = run.commands.keys().map(String::as_str).collect();
        let mut listed = groups[0].1.clone();
        listed.sort_unstable();
        assert_eq!(entries, listed);
    }

    #[test]
    fn generated_docs_are_complete_and_unique() {
        let mut names = std::collections::BTreeSet::new();
        for d in STAT_DOCS.iter() {
            assert!(names.insert(&d.name), "{} twice", d.name);
            assert!(
                !d.unit.is_empty() && !d.description.is_empty(),
                "{}",
                d.name
            );
            assert!(!d.description.contains('{'), "{}: unfilled {{key}}", d.name);
        }
        let d = |n: &str| &STAT_DOCS.iter().find(|d| d.name == n).unwrap().description;
        assert_eq!(
            d("bulk.init_latency.p99_mem_cycles"),
            "99th percentile initialization latency (nearest rank)"
        );
        assert_eq!(d("read_latency.mean_mem_cycles"), "mean read latency over reads served by DRAM, from arrival at the controller to the last data beat");
    }
}
