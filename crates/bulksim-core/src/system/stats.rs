//! Full-system statistics: instructions, cycles and IPC per core and thread, the channel
//! traffic split by cause and the fraction due to copies (FMTC), cache and OS counters, the
//! memory system's own stats, and per-instruction bandwidth and energy. Units in
//! `SYSTEM_STAT_DOCS`, from which docs/stats.md is generated.

use crate::cache::hierarchy::Traffic;
use crate::cache::{LevelStats, Origin};
use crate::os::OsStats;
use crate::stat_struct::{extend, stat_struct, FieldDoc};
use crate::stats::Stats;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

stat_struct! {
    /// One core's instructions and time.
    pub struct CoreStats {
        pub instructions: u64 = sum("instructions", "instructions retired on the core"),
        pub core_cycles: u64 = max("core cycles", "until the last thread that ran on this core exited (or the run stopped at sim.stop_after_dram_accesses)"),
        pub ipc: f64 = derived("instructions per cycle", "instructions / core_cycles (a program's IPC in a multi-programmed mix)"),
        pub yields: u64 = sum("switches", "times the recorded schedule (`Y` events of a capture) passed the core to another thread waiting there"),
        pub preemptions: u64 = sum("time slices", "times a thread gave the core to another runnable thread at the end of its time slice (system.time_slice_instructions)"),
        pub warmup_end_cycle: u64 = max("core cycles", "sim.measure_instructions: the core cycle in which the core's retired instructions reached sim.warmup_instructions (0 without a warm-up; 0 for a core not measured)"),
        pub measure_end_cycle: u64 = max("core cycles", "sim.measure_instructions: the core cycle in which they reached sim.warmup_instructions + sim.measure_instructions (0 for a core not measured)"),
        pub measured_cycles: u64 = sum("core cycles", "measure_end_cycle - warmup_end_cycle: the core's measured window"),
        pub measured_instructions: u64 = sum("instructions", "instructions retired in the measured window: sim.measure_instructions give or take core.width - 1 (a core cycle retires several, so either milestone may overshoot its count)"),
    }
}

stat_struct! {
    /// Warm-up and measured windows (`sim.measure_instructions`) over the measured cores:
    /// those that start a thread.
    pub struct MeasurementStats {
        pub warmup_instructions: u64 = keep("instructions per core", "sim.warmup_instructions"),
        pub measure_instructions: u64 = keep("instructions per core", "sim.measure_instructions"),
        pub cores: u64 = keep("cores", "cores measured: those that start a thread (cores[0..cores])"),
        pub stats_from_cycle: u64 = keep("core cycles", "the core cycle in which the last core finished its warm-up: memory-side stats (memory, memory_devices, hybrid) cover from here to the end of the run, core_cycles"),
        pub slowest_core: u64 = keep("core", "the measured core with the most measured cycles (the lowest of ties)"),
        pub cycles_max: u64 = max("core cycles", "its measured_cycles: the slowest core's window (speedup_last's time)"),
        pub cycles_mean: f64 = derived("core cycles", "mean of the measured cores' measured_cycles (speedup's time)"),
        pub instructions_mean: f64 = derived("instructions", "mean of the measured cores' measured_instructions"),
    }
}

stat_struct! {
    /// One thread's instructions, lifetime and waits on memory.
    pub struct ThreadStats {
        pub file: String = keep("path", "the thread's trace file"),
        pub instructions: u64 = sum("instructions", "instructions the thread itself retired (not those of threads that ran on its core before or after it)"),
        pub start_ns: f64 = keep("ns", "when the thread last started running on its core"),
        pub end_ns: f64 = max("ns", "when the thread exited; a run stopped at sim.stop_after_dram_accesses ends every running thread at the stop, so all their end_ns are that moment"),
        pub memory_stalls: u64 = sum("stalls", "times the window head waited for a line from memory"),
        pub memory_stall_ns: f64 = sum("ns", "time the window head waited for lines from memory, summed"),
        pub kernel_copy_bytes: u64 = sum("bytes", "bytes the kernel copied into or out of the thread's memory for read/write-like system calls (`K`, `G` events), run as line stores and loads on its core"),
        pub copy: u64 = keep("copy", "which copy of the workload the thread belongs to (`--copies`; 0 for the first)"),
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub stall_intervals_ns: Vec<(f64, f64)> = merge(extend, "ns", "each such wait as (start, end), when sim.record_intervals is on"),
    }
}

stat_struct! {
    /// Time cores spent blocked on bulk work, from the cycle a job starts (its coherence work
    /// under a memory-side mechanism, its first line under `cpu`) to the cycle the core may
    /// go on.
    pub struct BulkWait {
        pub copies: u64 = sum("operations", "copies (memcpy pieces within a page, copy-on-write) a core waited for"),
        pub copy_ns: f64 = sum("ns", "core time blocked on copies, summed: from a copy's start (coherence work, or its first line under `cpu`) to the core cycle it may go on"),
        pub copy_ns_per_op: f64 = derived("ns per operation", "bulk_wait.copy_ns / bulk_wait.copies (compare RowClone Table 3's 4 KB copy latencies)"),
        pub inits: u64 = sum("operations", "initializations (meminit pieces, first-touch zeroing) a core waited for"),
        pub init_ns: f64 = sum("ns", "core time blocked on initializations, summed as for copies"),
        pub init_ns_per_op: f64 = derived("ns per operation", "bulk_wait.init_ns / bulk_wait.inits"),
    }
}

impl BulkWait {
    /// Counts one finished job of `origin` that took `fs` femtoseconds.
    pub fn count(&mut self, origin: Origin, fs: u64) {
        let ns = fs as f64 / 1e6;
        if origin == Origin::Copy {
            self.copies += 1;
            self.copy_ns += ns;
        } else {
            self.inits += 1;
            self.init_ns += ns;
        }
    }

    /// With the per-operation means filled in.
    pub fn finished(&self) -> BulkWait {
        let mean = |ns: f64, n: u64| if n == 0 { 0.0 } else { ns / n as f64 };
        BulkWait {
            copy_ns_per_op: mean(self.copy_ns, self.copies),
            init_ns_per_op: mean(self.init_ns, self.inits),
            ..self.clone()
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SystemStats {
    pub mechanism: String,
    pub core_ghz: f64,
    pub core_cycles: u64,
    pub simulated_ns: f64,
    pub instructions: u64,
    pub ipc: f64,
    pub cores: Vec<CoreStats>,
    pub threads: Vec<ThreadStats>,
    pub traffic: Traffic,
    pub traffic_bytes: u64,
    pub fmtc: f64,
    pub bytes_per_instruction: f64,
    pub energy_nj_per_instruction: f64,
    pub memcpy_ops: u64,
    pub meminit_ops: u64,
    pub bulk_wait: BulkWait,
    /// Per cache level, by name (`l1`, `l2`, ...).
    pub cache: BTreeMap<String, LevelStats>,
    pub os: OsStats,
    /// The first memory device's stats (the only one unless `[[memory.device]]` lists more).
    pub memory: Stats,
    /// Per channel of every device (in device order), when its ranks could not serve
    /// requests: refreshes and write drains.
    pub unavailable: Vec<crate::controller::unavailability::Unavailability>,
    /// With sim.interruption_metrics: which threads refreshes and drains stalled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interruptions: Option<super::interruptions::InterruptionStats>,
    /// Every memory device's stats when there are several (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_devices: Vec<DeviceStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_engine: Option<crate::copy_engine::CopyEngineStats>,
    /// With `system.memcpy = "software_nt"`: its non-temporal stores' write-combining buffers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_combining: Option<crate::cache::write_combining::WriteCombiningStats>,
    /// With `[hybrid]`: the hybrid memory's migrations, accesses and tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<crate::memory::hybrid::HybridStats>,
    /// With `[hybrid]`: its energy by DRAM, PCM, PACT and ART.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid_energy: Option<crate::hybrid::energy::HybridEnergy>,
    /// With `sim.measure_instructions`: the measured windows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measurement: Option<MeasurementStats>,
}

/// One memory device's place in the physical address space and its stats.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DeviceStats {
    pub name: String,
    pub base: u64,
    pub bytes: u64,
    pub stats: Stats,
}

/// Every full-system stat outside `memory` (which is `STAT_DOCS`): the top-level figures here,
/// the components' stats from their declarations.
pub static SYSTEM_STAT_DOCS: LazyLock<Vec<FieldDoc>> = LazyLock::new(|| {
    let top: &[(&str, &'static str, &str)] = &[
        ("mechanism", "name", "system.bulk_mechanism of the run"),
        ("core_ghz", "GHz", "core clock"),
        ("core_cycles", "core cycles", "from 0 until the last thread exited, or until the core cycle in which the memory devices accepted the sim.stop_after_dram_accesses-th request (every stat is then that moment's, requests in flight included as far as they got)"),
        ("simulated_ns", "ns", "`core_cycles` in nanoseconds"),
        ("instructions", "instructions", "instructions retired by all threads (a memcpy or meminit counts as one; the loads and stores a `cpu` copy performs do not)"),
        ("ipc", "instructions per cycle", "instructions / core_cycles: with several cores, their throughput together (about the sum of the cores' IPCs; each core's is cores[].ipc)"),
        ("cores", "list", "per core: instructions retired, core_cycles until its last thread exited, and IPC over those cycles (a program's IPC in a multi-programmed mix); with sim.measure_instructions also warmup_end_cycle and measure_end_cycle (core cycles: its milestones), measured_cycles (their difference) and measured_instructions (docs/hybrid.md, Measurement)"),
        ("threads", "list", "per thread: trace file, instructions (its own, also when threads share a core), start and end time (ns), memory_stalls (times the window head waited for a line from memory), memory_stall_ns (that waiting summed) and, with sim.record_intervals, stall_intervals_ns"),
        ("traffic_bytes", "bytes", "sum of the traffic split: requests at the memory controllers x 64 (`memory.reads` + `memory.writes`, forwarded and merged ones included), plus RowClone seed-row writes"),
        ("fmtc", "fraction", "fraction of memory traffic due to copies: traffic.copy_bytes / traffic_bytes (RowClone's FMTC)"),
        ("bytes_per_instruction", "bytes per instruction", "traffic_bytes / instructions (memory bandwidth per instruction)"),
        ("energy_nj_per_instruction", "nJ per instruction", "memory.energy.total_nj / instructions"),
        ("memcpy_ops", "operations", "copies begun: with system.memcpy = bulk (the default), one per page touched, that is one per piece of a memcpy (`M` event) lying within one 4 KiB page of both its source and its destination (an aligned N-page copy counts N, a misaligned one up to 2N), whoever performs the piece; with a memcpy routine (software, movblk), one per memcpy event; and one per copy-on-write page copy; 0 in functional mode"),
        ("meminit_ops", "operations", "initializations begun, one per page touched: one per piece of a meminit (`I` event) lying within one 4 KiB page (an aligned N-page meminit counts N), and one per page zeroed on its first touch (os.zero_fills; a page mapped resident reads zero without one); 0 in functional mode"),
        ("memory_devices", "list", "only with several [[memory.device]]: per device its name, base (first physical byte address), bytes (capacity) and stats (as `memory`); `memory` itself is the first device's; with sim.warmup_instructions both cover from measurement.stats_from_cycle on (counters, energy and read_latency; their peaks, ends of time and bulk latencies cover the whole run)"),
        ("unavailable", "list", "per channel of every device in order: ranks[].refreshes and ranks[].refresh_mem_cycles (memory cycles from each refresh falling due to the end of its tRFC, summed), write_drains, write_drain_mem_cycles and write_drain_banks_written (every period the controller served writes: started by the write queue's high watermark or because no read waited), watermark_drains and watermark_drain_banks_written (the periods the high watermark started), and with sim.record_intervals every interval (rank, cause, start_mem_cycles, end_mem_cycles; a drain's banks_written and by_watermark)"),
    ];
    let mut docs: Vec<FieldDoc> = top
        .iter()
        .map(|&(name, unit, description)| FieldDoc {
            name: name.into(),
            unit,
            description: description.into(),
        })
        .collect();
    docs.extend(Traffic::stat_docs_at("traffic"));
    docs.extend(BulkWait::stat_docs_at("bulk_wait"));
    // Every level has the same stats; `l1` stands for `l2`, `l3`, ...
    docs.extend(LevelStats::stat_docs_at("cache.l1"));
    docs.extend(OsStats::stat_docs_at("os"));
    docs.extend(super::interruptions::InterruptionStats::stat_docs_at(
        "interruptions",
    ));
    docs.extend(crate::copy_engine::CopyEngineStats::stat_docs_at(
        "copy_engine",
    ));
    docs.extend(
        crate::cache::write_combining::WriteCombiningStats::stat_docs_at("write_combining"),
    );
    docs.extend(crate::memory::hybrid::HybridStats::stat_docs_at("hybrid"));
    docs.extend(crate::hybrid::energy::HybridEnergy::stat_docs_at(
        "hybrid_energy",
    ));
    docs.extend(MeasurementStats::stat_docs_at("measurement"));
    docs
});

impl SystemStats {
    /// The performance line (several busy cores: their IPC together, then each core's) and
    /// the measured windows' line.
    fn performance_lines(&self) -> String {
        let mut s = String::new();
        // Cores that ran something: with several, `ipc` is their throughput together (about
        // the sum of their IPCs), so it is labelled as such and each core's follows.
        let busy: Vec<(usize, &CoreStats)> = self
            .cores
            .iter()
            .enumerate()
            .filter(|(_, c)| c.instructions > 0)
            .collect();
        let together = if busy.len() > 1 {
            format!(" of all {} cores together", busy.len())
        } else {
            String::new()
        };
        s += &format!(
            "performance         {} instructions in {} cycles ({:.1} us): IPC {:.3}{together}\n",
            self.instructions,
            self.core_cycles,
            self.simulated_ns / 1000.0,
            self.ipc
        );
        if busy.len() > 1 {
            s += &format!("per-core IPC        {}\n", per_core_ipc(&busy));
        }
        if let Some(m) = &self.measurement {
            s += &format!(
                "measured            {} cores x {} instructions after {} of warm-up: mean {:.0} cycles, slowest core {} {} cycles; memory stats from cycle {}\n",
                m.cores,
                m.measure_instructions,
                m.warmup_instructions,
                m.cycles_mean,
                m.slowest_core,
                m.cycles_max,
                m.stats_from_cycle
            );
        }
        s
    }

    /// A few readable lines with units, then the memory system's summary.
    pub fn summary(&self) -> String {
        let t = &self.traffic;
        let mb = |b: u64| b as f64 / (1 << 20) as f64;
        let mut s = format!(
            "system              {} cores at {:.2} GHz, bulk mechanism {}\n",
            self.cores.len(),
            self.core_ghz,
            self.mechanism
        );
        s += &self.performance_lines();
        s += &format!(
            "memory traffic      {:.2} MiB: read {:.2}, write {:.2}, copy {:.2}, init {:.2}; FMTC {:.3}\n",
            mb(self.traffic_bytes),
            mb(t.read_bytes),
            mb(t.write_bytes),
            mb(t.copy_bytes),
            mb(t.init_bytes),
            self.fmtc
        );
        s += &format!(
            "os                  {} forks, {} copy-on-write copies ({} in the source's subarray), {} zero fills\n",
            self.os.forks, self.os.cow_copies, self.os.cow_same_subarray, self.os.zero_fills
        );
        for (name, l) in &self.cache {
            s += &format!(
                "cache {name:<13} {} hits, {} misses, {} write-backs\n",
                l.hits, l.misses, l.writebacks
            );
        }
        s += &format!(
            "per instruction     {:.3} bytes of traffic, {:.3} nJ of DRAM energy\n",
            self.bytes_per_instruction, self.energy_nj_per_instruction
        );
        if let Some(m) = &self.interruptions {
            s += &format!(
                "interruptions       {} refreshes: {:.2} threads stalled and {:.2} weighted stall per refresh, {:.1}% stall a thread; {} write drains: {:.2} threads stalled per drain\n",
                m.refreshes,
                m.threads_stalled_per_refresh,
                m.weighted_stall_per_refresh,
                100.0 * m.refreshes_stalling_share,
                m.write_drains,
                m.threads_stalled_per_drain
            );
        }
        s += "-- memory system\n";
        s += &self.memory.summary();
        s
    }
}

/// The most cores whose IPC the summary lists one by one; more are summarised.
const LISTED_CORES: usize = 8;

/// Each busy core's IPC (`core 0 1.172, core 1 1.173`), or for many cores their range.
fn per_core_ipc(busy: &[(usize, &CoreStats)]) -> String {
    if busy.len() <= LISTED_CORES {
        let each: Vec<String> = busy
            .iter()
            .map(|(i, c)| format!("core {i} {:.3}", c.ipc))
            .collect();
        return each.join(", ");
    }
    let by_ipc = |a: &&(usize, &CoreStats), b: &&(usize, &CoreStats)| a.1.ipc.total_cmp(&b.1.ipc);
    let low = busy.iter().min_by(by_ipc).expect("busy cores");
    let high = busy.iter().max_by(by_ipc).expect("busy cores");
    let mean = busy.iter().map(|(_, c)| c.ipc).sum::<f64>() / busy.len() as f64;
    format!(
        "{} cores: min {:.3} (core {}), mean {mean:.3}, max {:.3} (core {}); each in cores[] of the JSON",
        busy.len(),
        low.1.ipc,
        low.0,
        high.1.ipc,
        high.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(instructions: u64, ipc: f64) -> CoreStats {
        CoreStats {
            instructions,
            ipc,
            ..Default::default()
        }
    }

    #[test]
    fn a_multi_core_summary_labels_the_ipc_of_all_cores_and_gives_each() {
        let mut stats = SystemStats {
            instructions: 300,
            core_cycles: 100,
            ipc: 3.0,
            cores: vec![core(100, 1.0), core(0, 0.0), core(200, 2.0)],
            ..Default::default()
        };
        let summary = stats.summary();
        assert!(
            summary.contains("in 100 cycles (0.0 us): IPC 3.000 of all 2 cores together\n"),
            "{summary}"
        );
        assert!(
            summary.contains("\nper-core IPC        core 0 1.000, core 2 2.000\n"),
            "{summary}"
        );
        stats.cores = (0..10).map(|i| core(1, 0.5 + i as f64 / 10.0)).collect();
        assert!(stats.summary().contains(
            "per-core IPC        10 cores: min 0.500 (core 0), mean 0.950, max 1.400 (core 9)"
        ));
        // One core: its IPC is the run's, unlabelled.
        stats.cores = vec![core(300, 3.0)];
        let summary = stats.summary();
        assert!(summary.contains("IPC 3.000\n"), "{summary}");
        assert!(!summary.contains("per-core"), "{summary}");
    }

    #[test]
    fn every_system_stat_is_documented_and_every_doc_is_a_stat() {
        let mut stats = SystemStats::default();
        stats.cache.insert("l1".into(), LevelStats::default());
        stats.memory_devices.push(DeviceStats::default());
        stats.interruptions = Some(super::super::interruptions::InterruptionStats {
            per_refresh: vec![Default::default()],
            per_drain: vec![Default::default()],
            ..Default::default()
        });
        stats.copy_engine = Some(Default::default());
        stats.write_combining = Some(Default::default());
        stats.hybrid = Some(Default::default());
        stats.hybrid_energy = Some(Default::default());
        stats.measurement = Some(Default::default());
        crate::stats::assert_documented(
            &stats,
            "memory",
            &["memory"],
            &SYSTEM_STAT_DOCS,
            "SYSTEM_STAT_DOCS",
        );
    }
}
