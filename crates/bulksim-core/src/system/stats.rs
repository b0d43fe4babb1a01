//! Full-system statistics: instructions, cycles and IPC per core and thread, the channel
//! traffic split by cause and the fraction due to copies (FMTC), cache and OS counters, the
//! memory system's own stats, and per-instruction bandwidth and energy. Units in
//! `SYSTEM_STAT_DOCS`, from which docs/stats.md is generated.

use crate::cache::hierarchy::Traffic;
use crate::cache::{LevelStats, Origin};
use crate::os::OsStats;
use crate::stats::{StatDoc, Stats};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct CoreStats {
    pub instructions: u64,
    /// Core cycles until the last thread that ran on this core exited.
    pub core_cycles: u64,
    pub ipc: f64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ThreadStats {
    pub file: String,
    pub instructions: u64,
    pub start_ns: f64,
    pub end_ns: f64,
    /// Times the window head waited for a line from memory.
    pub memory_stalls: u64,
    /// Time the window head waited for lines from memory, summed.
    pub memory_stall_ns: f64,
    /// Each such wait as (start, end) in ns, when `sim.record_intervals` is on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stall_intervals_ns: Vec<(f64, f64)>,
}

/// Time cores spent blocked on bulk work, from the cycle a job starts (its coherence work
/// under a memory-side mechanism, its first line under `cpu`) to the cycle the core may go on.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BulkWait {
    pub copies: u64,
    pub copy_ns: f64,
    pub copy_ns_per_op: f64,
    pub inits: u64,
    pub init_ns: f64,
    pub init_ns_per_op: f64,
}

impl BulkWait {
    /// Counts one finished job of `origin` that took `fs` femtoseconds.
    pub fn add(&mut self, origin: Origin, fs: u64) {
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
    /// Every memory device's stats when there are several (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_devices: Vec<DeviceStats>,
}

/// One memory device's place in the physical address space and its stats.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DeviceStats {
    pub name: String,
    pub base: u64,
    pub bytes: u64,
    pub stats: Stats,
}

macro_rules! docs {
    ($($name:expr, $unit:expr, $desc:expr;)*) => {
        &[$(StatDoc { name: $name, unit: $unit, description: $desc },)*]
    };
}

/// Every full-system stat outside `memory` (which is `STAT_DOCS`).
pub const SYSTEM_STAT_DOCS: &[StatDoc] = docs![
    "mechanism", "name", "system.bulk_mechanism of the run";
    "core_ghz", "GHz", "core clock";
    "core_cycles", "core cycles", "from 0 until the last thread exited";
    "simulated_ns", "ns", "`core_cycles` in nanoseconds";
    "instructions", "instructions", "instructions retired by all threads (a memcpy or meminit counts as one; the loads and stores a `cpu` copy performs do not)";
    "ipc", "instructions per cycle", "instructions / core_cycles";
    "cores", "list", "per core: instructions retired, core_cycles until its last thread exited, and IPC over those cycles (a program's IPC in a multi-programmed mix)";
    "threads", "list", "per thread: trace file, instructions, start and end time (ns), memory_stalls (times the window head waited for a line from memory), memory_stall_ns (that waiting summed) and, with sim.record_intervals, stall_intervals_ns";
    "traffic.read_bytes", "bytes", "channel reads that fill the cache for the program's loads and stores";
    "traffic.write_bytes", "bytes", "channel writes of lines the program wrote";
    "traffic.copy_bytes", "bytes", "channel reads and writes caused by copies: copy loops (source, destination fills, their write-backs), coherence write-backs, line copies below the cache";
    "traffic.init_bytes", "bytes", "the same for initialization (zeroing on first touch, meminit)";
    "traffic_bytes", "bytes", "sum of the traffic split: requests at the memory controllers x 64 (`memory.reads` + `memory.writes`, forwarded and merged ones included), plus RowClone seed-row writes";
    "fmtc", "fraction", "fraction of memory traffic due to copies: traffic.copy_bytes / traffic_bytes (RowClone's FMTC)";
    "bytes_per_instruction", "bytes per instruction", "traffic_bytes / instructions (memory bandwidth per instruction)";
    "energy_nj_per_instruction", "nJ per instruction", "memory.energy.total_nj / instructions";
    "memcpy_ops", "operations", "memcpy and copy-on-write copies executed";
    "meminit_ops", "operations", "meminit and first-touch zeroing executed";
    "bulk_wait.copies", "operations", "copies (memcpy pieces within a page, copy-on-write) a core waited for";
    "bulk_wait.copy_ns", "ns", "core time blocked on copies, summed: from a copy's start (coherence work, or its first line under `cpu`) to the core cycle it may go on";
    "bulk_wait.copy_ns_per_op", "ns per operation", "bulk_wait.copy_ns / bulk_wait.copies (compare RowClone Table 3's 4 KB copy latencies)";
    "bulk_wait.inits", "operations", "initializations (meminit pieces, first-touch zeroing) a core waited for";
    "bulk_wait.init_ns", "ns", "core time blocked on initializations, summed as for copies";
    "bulk_wait.init_ns_per_op", "ns per operation", "bulk_wait.init_ns / bulk_wait.inits";
    "cache.l1.hits", "accesses", "demand lookups that hit, all cores (first level: program loads and stores; below: fills asked for by the level above)";
    "cache.l1.misses", "accesses", "demand lookups that missed, all cores";
    "cache.l1.writebacks", "lines", "dirty lines written back (evictions and coherence)";
    "cache.l1.invalidations", "lines", "lines dropped for bulk-operation coherence";
    "cache.l1.inserts", "lines", "lines put into the level (fills, write-backs from above, in-cache copies, zero inserts, lines allocated whole by cpu copies and initializations)";
    "cache.l1.below.read_bytes.program", "bytes", "bytes read through the port below the level (fills), for the program's loads and stores; likewise .copy, .init, .coherence, .migration";
    "cache.l1.below.read_bytes.copy", "bytes", "fills for copies";
    "cache.l1.below.read_bytes.init", "bytes", "fills for initializations";
    "cache.l1.below.read_bytes.coherence", "bytes", "fills for coherence work (none today)";
    "cache.l1.below.read_bytes.migration", "bytes", "fills for page migration (none today)";
    "cache.l1.below.write_bytes.program", "bytes", "bytes written through the port below the level (write-backs) of lines the program wrote";
    "cache.l1.below.write_bytes.copy", "bytes", "write-backs of lines a copy wrote";
    "cache.l1.below.write_bytes.init", "bytes", "write-backs of lines an initialization wrote";
    "cache.l1.below.write_bytes.coherence", "bytes", "write-backs the memory controller asked for before a bulk operation";
    "cache.l1.below.write_bytes.migration", "bytes", "write-backs for page migration (none today)";
    "unavailable", "list", "per channel of every device in order: ranks[].refreshes and ranks[].refresh_mem_cycles (memory cycles from each refresh falling due to the end of its tRFC, summed), write_drains and write_drain_mem_cycles (periods the controller served writes while reads waited), and with sim.record_intervals every interval (rank, cause, start_mem_cycles, end_mem_cycles)";
    "os.processes", "processes", "processes created (initial threads and forks)";
    "os.forks", "calls", "fork events";
    "os.page_faults", "faults", "first touches and writes to copy-on-write pages";
    "os.zero_fills", "pages", "pages zeroed on first touch";
    "os.cow_copies", "pages", "pages copied on a write to a shared page";
    "os.cow_reuses", "pages", "writes to a copy-on-write page no longer shared (no copy needed)";
    "os.cow_same_subarray", "pages", "copy-on-write destinations in the source's subarray (FPM-capable)";
    "os.frames_usable", "pages", "4 KB frames the allocator may hand out (capacity minus RowClone's reserved rows)";
    "os.frames_used", "pages", "frames in use at the end of the run (frames of exited processes are free)";
    "os.populated", "pages", "pages of populated mappings (`P` events): present from the start, without a fault or zeroing";
    "os.fault_instructions", "instructions", "kernel instructions of the fault path (os.fault_instructions per page fault), included in `instructions`";
];

impl SystemStats {
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
        s += &format!(
            "performance         {} instructions in {} cycles ({:.1} us): IPC {:.3}\n",
            self.instructions,
            self.core_cycles,
            self.simulated_ns / 1000.0,
            self.ipc
        );
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
        s += "-- memory system\n";
        s += &self.memory.summary();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_system_stat_is_documented_and_every_doc_is_a_stat() {
        let mut stats = SystemStats::default();
        stats.cache.insert("l1".into(), LevelStats::default());
        crate::stats::assert_documented(
            &stats,
            "memory",
            &["memory"],
            SYSTEM_STAT_DOCS,
            "SYSTEM_STAT_DOCS",
        );
    }
}
