//! Warm-up and measured instructions per core (`sim.warmup_instructions`,
//! `sim.measure_instructions`; docs/hybrid.md, "Measurement"). Each core that starts a
//! thread has two milestones: the core cycle in which its retired instructions reach the
//! warm-up, and the one in which they reach warm-up + measured; its measured window lies
//! between them. The run ends when every such core has passed its second milestone; cores
//! that finished keep running meanwhile, so they keep loading memory.
//!
//! Memory-side stats (every device's `Stats` and the hybrid memory's) cover the interval from
//! the core cycle in which the last core finished its warm-up to the end of the run: a
//! snapshot of them is taken at that instant and taken away at the end (`stat_struct!`'s
//! `sub`); the derived figures that can be are recomputed from the differences.

use super::stats::{CoreStats, MeasurementStats};
use crate::counters::LatencyHistogram;
use crate::memory::hybrid::HybridStats;
use crate::memory::MemoryRouter;
use crate::stats::{LatencyStats, Stats};

/// The memory-side stats at the instant the last core finished its warm-up.
struct Snapshot {
    devices: Vec<Stats>,
    /// Each device's read latencies.
    reads: Vec<LatencyHistogram>,
    hybrid: Option<HybridStats>,
}

pub(super) struct Measure {
    warmup: u64,
    measure: u64,
    /// Per measured core: when (fs) and at how many retired instructions it finished its
    /// warm-up, and its measured window.
    warm: Vec<Option<(u64, u64)>>,
    done: Vec<Option<(u64, u64)>>,
    /// Measured cores still in warm-up, and still before the end of their window.
    warming: usize,
    measuring: usize,
    /// When the last core finished its warm-up (fs): memory-side stats count from here.
    start_fs: Option<u64>,
    snapshot: Option<Snapshot>,
}

impl Measure {
    /// For `cores` measured cores (0..cores); None when `measure` is 0 (off).
    pub fn new(warmup: u64, measure: u64, cores: usize) -> Option<Measure> {
        if measure == 0 {
            return None;
        }
        let mut m = Measure {
            warmup,
            measure,
            warm: vec![None; cores],
            done: vec![None; cores],
            warming: cores,
            measuring: cores,
            start_fs: None,
            snapshot: None,
        };
        if warmup == 0 {
            // Every window starts at cycle 0, and so do the memory-side stats.
            m.warm.fill(Some((0, 0)));
            m.warming = 0;
            m.start_fs = Some(0);
        }
        Some(m)
    }

    /// Whether core `c` is measured and still before the end of its window.
    pub fn pending(&self, c: usize) -> bool {
        self.done.get(c).is_some_and(Option::is_none)
    }

    /// The retired count at which core `c` passes its next milestone (None: none left).
    pub fn next_milestone(&self, c: usize) -> Option<u64> {
        if !self.pending(c) {
            return None;
        }
        Some(match self.warm[c] {
            None => self.warmup,
            Some(_) => self.warmup + self.measure,
        })
    }

    /// Core `c` has retired `retired` instructions in the core cycle at `now` (fs). Returns
    /// true when that made the last core finish its warm-up (take the snapshot now).
    pub fn retired(&mut self, c: usize, retired: u64, now: u64) -> bool {
        let mut last_warm = false;
        if c >= self.warm.len() {
            return false;
        }
        if self.warm[c].is_none() && retired >= self.warmup {
            self.warm[c] = Some((now, retired));
            self.warming -= 1;
            if self.warming == 0 {
                self.start_fs = Some(now);
                last_warm = true;
            }
        }
        if self.warm[c].is_some() && self.done[c].is_none() && retired >= self.warmup + self.measure
        {
            self.done[c] = Some((now, retired));
            self.measuring -= 1;
        }
        last_warm
    }

    /// sim.warmup_instructions + sim.measure_instructions.
    pub fn end(&self) -> u64 {
        self.warmup + self.measure
    }

    /// Every measured core has finished its window: the run ends.
    pub fn finished(&self) -> bool {
        self.measuring == 0
    }

    /// Takes the memory-side stats now (the last core just finished its warm-up).
    pub fn take_snapshot(&mut self, router: &MemoryRouter) {
        self.snapshot = Some(Snapshot {
            devices: router.devices.iter().map(|d| d.channels.stats(0)).collect(),
            reads: router
                .devices
                .iter()
                .map(|d| d.channels.read_latencies())
                .collect(),
            hybrid: router.hybrid_stats(),
        });
    }

    /// The memory-side stats of device `i` over the measured interval (`end`: the run's,
    /// `reads`: its read latencies over the run).
    pub fn device_interval(&self, i: usize, end: &mut Stats, mut reads: LatencyHistogram) {
        let Some(snap) = &self.snapshot else {
            return;
        };
        let start = &snap.devices[i];
        // Bytes moved by bursts, from bandwidth x time at either end.
        let bytes = |s: &Stats| s.bandwidth_gbps * s.simulated_ns;
        let moved = bytes(end) - bytes(start);
        let ns = end.simulated_ns - start.simulated_ns;
        // Capacities, summed over devices but not counted over time: kept.
        let kept = (
            end.peak_bandwidth_gbps,
            end.bulk.reserved_bytes,
            end.bulk.usable_bytes,
        );
        end.sub(start);
        (
            end.peak_bandwidth_gbps,
            end.bulk.reserved_bytes,
            end.bulk.usable_bytes,
        ) = kept;
        end.bandwidth_gbps = if ns > 0.0 { moved / ns } else { 0.0 };
        reads.sub(&snap.reads[i]);
        end.read_latency = LatencyStats::from_histogram(&reads, end.tck_ns);
        let accesses = end.row_hits + end.row_misses + end.row_conflicts;
        end.row_hit_rate = if accesses == 0 {
            0.0
        } else {
            end.row_hits as f64 / accesses as f64
        };
    }

    /// The hybrid memory's stats over the measured interval.
    pub fn hybrid_interval(&self, end: &mut HybridStats) {
        if let Some(start) = self.snapshot.as_ref().and_then(|s| s.hybrid.as_ref()) {
            end.sub(start);
            end.derive();
        }
    }

    /// Core `c`'s stats with its milestones and window (`core_fs`: the core clock period).
    pub fn core(&self, c: usize, stats: &mut CoreStats, core_fs: u64) {
        if let (Some((w_fs, w_n)), Some((d_fs, d_n))) = (self.warm[c], self.done[c]) {
            stats.warmup_end_cycle = w_fs / core_fs;
            stats.measure_end_cycle = d_fs / core_fs;
            stats.measured_cycles = (d_fs - w_fs) / core_fs;
            stats.measured_instructions = d_n - w_n;
        }
    }

    /// The summary over the measured cores (their stats already filled by `core`).
    pub fn stats(&self, cores: &[CoreStats], core_fs: u64) -> MeasurementStats {
        let n = self.done.len();
        let measured = &cores[..n];
        let (slowest, max) = measured.iter().enumerate().fold((0, 0), |(i, m), (k, c)| {
            if c.measured_cycles > m {
                (k, c.measured_cycles)
            } else {
                (i, m)
            }
        });
        let mean = |f: fn(&CoreStats) -> u64| {
            if n == 0 {
                0.0
            } else {
                measured.iter().map(f).sum::<u64>() as f64 / n as f64
            }
        };
        MeasurementStats {
            warmup_instructions: self.warmup,
            measure_instructions: self.measure,
            cores: n as u64,
            stats_from_cycle: self.start_fs.unwrap_or(0) / core_fs,
            slowest_core: slowest as u64,
            cycles_max: max,
            cycles_mean: mean(|c| c.measured_cycles),
            instructions_mean: mean(|c| c.measured_instructions),
        }
    }
}
