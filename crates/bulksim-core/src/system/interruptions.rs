//! Service-interruption metrics (`sim.interruption_metrics`; docs/rank_assignment.md,
//! Metrics): owns what the run records for them and their computation at its end. While the
//! run goes, it keeps each thread's stalls on DRAM with the rank holding the line the window
//! head waits for, and counts each request memory takes on the rank it goes to and the thread
//! that caused it. At the end it sets those stalls against the controllers' unavailability
//! intervals: a thread is stalled by rank r while its window head is a load (or a read below
//! the caches) waiting on a line of r that memory serves, and r is refreshing or draining
//! writes (*choice*). A stall whose line the caches serve is no stall on a rank.

use crate::controller::unavailability::{Cause, Interval, Unavailability};
use crate::memory::MemoryRouter;
use crate::stat_struct::{extend, stat_struct};
use serde::Serialize;

/// A core's DRAM reads in flight kept for telling DRAM stalls from cache stalls: more would
/// be a leak (every read's line arrives and removes it), so the oldest goes first.
const MAX_READS_IN_FLIGHT: usize = 256;

stat_struct! {
    /// Which threads the refreshes and write drains stalled, and where threads' DRAM accesses
    /// went.
    pub struct InterruptionStats {
        pub refreshes: u64 = sum("refreshes", "refreshes (REFs, from `unavailable[].intervals`) the metrics cover"),
        pub threads_stalled_per_refresh: f64 = derived("threads", "mean over refreshes of the threads the refresh stalled (a thread's window head waited on a DRAM read of the refreshing rank during the refresh's interval: from falling due to the end of its tRFC)"),
        pub weighted_stall_per_refresh: f64 = derived("threads (stalled time / interval length, summed)", "mean over refreshes of the weighted core stall time: per thread, the time it was stalled by the refreshing rank within the refresh's interval over the interval's length, summed over threads (at most the number of threads)"),
        pub refreshes_stalling_share: f64 = derived("fraction", "share of refreshes that stalled at least one thread"),
        pub write_drains: u64 = sum("write drains", "write-drain periods the metrics cover"),
        pub threads_stalled_per_drain: f64 = derived("threads", "mean over write drains of the threads the drain stalled (window head waiting on a DRAM read of a draining rank, every rank of the channel for a channel-wide drain)"),
        pub banks_written_per_drain: f64 = derived("banks", "mean over write drains of the distinct banks the drain wrote"),
        pub watermark_drains: u64 = sum("write drains", "of the write drains, those the write queue's high watermark started (the paper's drains; the others began because no read waited)"),
        pub threads_stalled_per_watermark_drain: f64 = derived("threads", "mean over the watermark-started drains of the threads the drain stalled (paper §III-D: 5.7 of 8 on PCM)"),
        pub banks_written_per_watermark_drain: f64 = derived("banks", "mean over the watermark-started drains of the distinct banks the drain wrote (paper §III-D: 8.6 of the 16 banks of a channel on PCM)"),
        pub threads: Vec<ThreadInterruptions> = merge(extend, "list", "per thread: refreshes_stalled (refreshes that stalled it), refresh_stall_share (those over all refreshes), dram_reads_by_rank, dram_writes_by_rank and dram_accesses_by_rank (requests memory took that the thread caused, per global rank: channel x ranks + rank, devices in order; a write-back counts for the thread whose access evicted the line)"),
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub per_refresh: Vec<RefreshInterruption> = merge(extend, "list", "only with sim.record_intervals: per refresh in `unavailable[].intervals` order, its global rank, start_ns, end_ns, threads_stalled and weighted_stall"),
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub per_drain: Vec<DrainInterruption> = merge(extend, "list", "only with sim.record_intervals: per write drain, its global channel, global rank (null: every rank of the channel), start_ns, end_ns, threads_stalled and banks_written"),
    }
}

/// One thread's share of the interruptions and its DRAM accesses by rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ThreadInterruptions {
    pub refreshes_stalled: u64,
    pub refresh_stall_share: f64,
    pub dram_reads_by_rank: Vec<u64>,
    pub dram_writes_by_rank: Vec<u64>,
    pub dram_accesses_by_rank: Vec<u64>,
}

/// One refresh and the threads it stalled.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RefreshInterruption {
    pub rank: u32,
    pub start_ns: f64,
    pub end_ns: f64,
    pub threads_stalled: u32,
    pub weighted_stall: f64,
}

/// One write drain and the threads it stalled.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DrainInterruption {
    pub channel: u32,
    pub rank: Option<u32>,
    pub start_ns: f64,
    pub end_ns: f64,
    pub threads_stalled: u32,
    pub banks_written: u32,
}

/// Where a device's ranks start in the global numbering.
struct DeviceRanks {
    period_fs: u64,
    first_channel: u32,
    first_rank: u32,
    channels: u32,
    ranks: u32,
}

/// What the run records for the metrics.
pub struct InterruptionRecorder {
    devices: Vec<DeviceRanks>,
    total_ranks: usize,
    /// Per core: the global rank of the line its window head waits on (the open stall).
    stall_rank: Vec<u32>,
    /// Per core: the memory lines (last-level line addresses) of its DRAM reads in flight.
    reads_in_flight: Vec<Vec<u64>>,
    /// Per core: the thread that last ran there (write-backs after it left count for it).
    last_thread: Vec<usize>,
    /// Per thread: its stalls on DRAM, (start fs, end fs, global rank), in time order.
    stalls: Vec<Vec<(u64, u64, u32)>>,
    /// Per thread, per global rank: DRAM reads and writes it caused.
    reads: Vec<Vec<u64>>,
    writes: Vec<Vec<u64>>,
    /// The first level's and the memory's line sizes (bytes).
    core_line: u64,
    memory_line: u64,
}

/// The recording methods stay out of line: the scheduler loop they are called from is one
/// inlined function whose code layout every other run pays for.
impl InterruptionRecorder {
    pub fn new(
        router: &MemoryRouter,
        cores: usize,
        threads: usize,
        core_line: u64,
        memory_line: u64,
    ) -> InterruptionRecorder {
        let mut devices = Vec::new();
        let (mut first_channel, mut first_rank) = (0, 0);
        for d in &router.devices {
            let o = &d.channels.spec().organisation;
            devices.push(DeviceRanks {
                period_fs: d.period_fs,
                first_channel,
                first_rank,
                channels: o.channels,
                ranks: o.ranks,
            });
            first_channel += o.channels;
            first_rank += o.channels * o.ranks;
        }
        let total_ranks = first_rank as usize;
        InterruptionRecorder {
            devices,
            total_ranks,
            stall_rank: vec![0; cores],
            reads_in_flight: vec![Vec::new(); cores],
            last_thread: vec![0; cores],
            stalls: vec![Vec::new(); threads],
            reads: vec![vec![0; total_ranks]; threads],
            writes: vec![vec![0; total_ranks]; threads],
            core_line,
            memory_line,
        }
    }

    /// The global rank (channel x ranks + rank, devices in order) holding physical `addr`.
    fn global_rank(&self, router: &MemoryRouter, addr: u64) -> u32 {
        let dev = router.device_of(addr);
        let d = &router.devices[dev];
        let a = d.channels.mapper().decode(addr.wrapping_sub(d.base));
        let r = &self.devices[dev];
        r.first_rank + (a.channel % r.channels) * r.ranks + a.rank % r.ranks
    }

    /// Core `core`'s window head began waiting on `line` (a first-level line number).
    #[inline(never)]
    pub fn stall_started(&mut self, router: &MemoryRouter, core: usize, line: u64) {
        self.stall_rank[core] = self.global_rank(router, line * self.core_line);
    }

    /// Core `core`'s stall that began at `start` ended at `end` when the head's `line`
    /// arrived; kept for `thread` when memory served the line.
    #[inline(never)]
    pub fn stall_ended(&mut self, core: usize, thread: usize, line: u64, start: u64, end: u64) {
        let memory_line = line * self.core_line / self.memory_line;
        if self.reads_in_flight[core].contains(&memory_line) {
            self.stalls[thread].push((start, end, self.stall_rank[core]));
        }
    }

    /// `line` (a first-level line number) arrived at core `core`'s first level.
    #[inline(never)]
    pub fn line_arrived(&mut self, core: usize, line: u64) {
        let memory_line = line * self.core_line / self.memory_line;
        let reads = &mut self.reads_in_flight[core];
        if let Some(i) = reads.iter().position(|&l| l == memory_line) {
            reads.remove(i);
        }
    }

    /// Counts the requests memory took (`sent`: core, address, write), each for the thread
    /// running on its core (or the last that ran there), and empties the list.
    #[inline(never)]
    pub fn count_sent(
        &mut self,
        router: &MemoryRouter,
        running: impl Fn(usize) -> Option<usize>,
        sent: &mut Vec<(u32, u64, bool)>,
    ) {
        for &(core, addr, write) in sent.iter() {
            let core = core as usize;
            if let Some(t) = running(core) {
                self.last_thread[core] = t;
            }
            let thread = self.last_thread[core];
            let rank = self.global_rank(router, addr) as usize;
            if write {
                self.writes[thread][rank] += 1;
            } else {
                self.reads[thread][rank] += 1;
                let reads = &mut self.reads_in_flight[core];
                if reads.len() == MAX_READS_IN_FLIGHT {
                    reads.remove(0);
                }
                reads.push(addr / self.memory_line);
            }
        }
        sent.clear();
    }

    /// The metrics from the recorded stalls and every channel's unavailability (global
    /// channel order, intervals recorded); per-interval detail when `detail`.
    pub fn finish(&self, unavailable: &[Unavailability], detail: bool) -> InterruptionStats {
        let threads = self.stalls.len();
        let by_rank = StallsByRank::new(&self.stalls, self.total_ranks);
        let mut tally = Tally::new(threads, detail);
        for (k, u) in unavailable.iter().enumerate() {
            let k = k as u32;
            let Some(d) = self
                .devices
                .iter()
                .rfind(|d| k >= d.first_channel && k < d.first_channel + d.channels)
            else {
                continue;
            };
            let channel_rank = d.first_rank + (k - d.first_channel) * d.ranks;
            for i in &u.intervals {
                let span = (
                    i.start_mem_cycles * d.period_fs,
                    i.end_mem_cycles * d.period_fs,
                );
                let ranks = match i.rank {
                    Some(r) => channel_rank + r..channel_rank + r + 1,
                    None => channel_rank..channel_rank + d.ranks,
                };
                let refresh = i.cause == Cause::Refresh;
                let (stalled, weighted) =
                    tally.count_stalls(&by_rank, ranks.clone(), span, refresh);
                match i.cause {
                    Cause::Refresh => tally.refresh(ranks.start, span, stalled, weighted),
                    Cause::WriteDrain => tally.drain(k, i, ranks.start, span, stalled),
                }
            }
        }
        tally.finish(&self.reads, &self.writes)
    }
}

/// Per thread and global rank, the thread's stalls on that rank in time order (a thread's
/// stalls never overlap).
struct StallsByRank(Vec<Vec<Vec<(u64, u64)>>>);

impl StallsByRank {
    fn new(stalls: &[Vec<(u64, u64, u32)>], total_ranks: usize) -> StallsByRank {
        let mut by_rank = vec![vec![Vec::new(); total_ranks]; stalls.len()];
        for (t, stalls) in stalls.iter().enumerate() {
            for &(a, b, r) in stalls {
                by_rank[t][r as usize].push((a, b));
            }
        }
        StallsByRank(by_rank)
    }

    /// How long (fs) thread `t` stalled on any of `ranks` within `[a, b)`.
    fn stalled_fs(&self, t: usize, ranks: std::ops::Range<u32>, (a, b): (u64, u64)) -> u64 {
        let mut sum = 0;
        for r in ranks {
            let s = &self.0[t][r as usize];
            let first = s.partition_point(|&(_, end)| end <= a);
            for &(x, y) in s[first..].iter().take_while(|&&(x, _)| x < b) {
                sum += y.min(b) - x.max(a);
            }
        }
        sum
    }
}

/// The metrics being summed over the intervals, turned into means by `finish`.
struct Tally {
    out: InterruptionStats,
    /// Per-interval records are kept.
    detail: bool,
    /// Per thread, the refreshes it stalled in.
    refreshes_stalled: Vec<u64>,
    /// Over refreshes: threads stalled, weighted stall, refreshes stalling any thread.
    threads_sum: u64,
    weighted_sum: f64,
    stalling: u64,
    /// Over write drains (and those the high watermark started): threads stalled, banks
    /// written.
    drain_threads_sum: u64,
    drain_banks_sum: u64,
    watermark_threads_sum: u64,
    watermark_banks_sum: u64,
}

impl Tally {
    fn new(threads: usize, detail: bool) -> Tally {
        Tally {
            out: InterruptionStats::default(),
            detail,
            refreshes_stalled: vec![0; threads],
            threads_sum: 0,
            weighted_sum: 0.0,
            stalling: 0,
            drain_threads_sum: 0,
            drain_banks_sum: 0,
            watermark_threads_sum: 0,
            watermark_banks_sum: 0,
        }
    }

    /// The threads that stalled on `ranks` during `span` and, for a `refresh`, their stall
    /// weighted by its share of the span (each such thread's refresh count goes up).
    fn count_stalls(
        &mut self,
        by_rank: &StallsByRank,
        ranks: std::ops::Range<u32>,
        (a, b): (u64, u64),
        refresh: bool,
    ) -> (u32, f64) {
        let mut stalled = 0u32;
        let mut weighted = 0.0;
        for (t, stalled_by_refreshes) in self.refreshes_stalled.iter_mut().enumerate() {
            let fs = by_rank.stalled_fs(t, ranks.clone(), (a, b));
            if fs > 0 {
                stalled += 1;
                if refresh {
                    *stalled_by_refreshes += 1;
                    weighted += fs as f64 / (b - a) as f64;
                }
            }
        }
        (stalled, weighted)
    }

    /// A refresh of global rank `rank` over `span` (fs) that stalled `stalled` threads.
    fn refresh(&mut self, rank: u32, (a, b): (u64, u64), stalled: u32, weighted: f64) {
        self.out.refreshes += 1;
        self.threads_sum += stalled as u64;
        self.weighted_sum += weighted;
        self.stalling += (stalled > 0) as u64;
        if self.detail {
            self.out.per_refresh.push(RefreshInterruption {
                rank,
                start_ns: a as f64 / 1e6,
                end_ns: b as f64 / 1e6,
                threads_stalled: stalled,
                weighted_stall: weighted,
            });
        }
    }

    /// Write drain `i` of global channel `channel` (first global rank `rank`) over `span`
    /// (fs) that stalled `stalled` threads.
    fn drain(&mut self, channel: u32, i: &Interval, rank: u32, (a, b): (u64, u64), stalled: u32) {
        let banks = i.banks_written.unwrap_or(0);
        self.out.write_drains += 1;
        self.drain_threads_sum += stalled as u64;
        self.drain_banks_sum += banks as u64;
        if i.by_watermark == Some(true) {
            self.out.watermark_drains += 1;
            self.watermark_threads_sum += stalled as u64;
            self.watermark_banks_sum += banks as u64;
        }
        if self.detail {
            self.out.per_drain.push(DrainInterruption {
                channel,
                rank: i.rank.map(|_| rank),
                start_ns: a as f64 / 1e6,
                end_ns: b as f64 / 1e6,
                threads_stalled: stalled,
                banks_written: banks,
            });
        }
    }

    /// The means, and each thread's share and DRAM accesses by rank (`reads`, `writes`).
    fn finish(mut self, reads: &[Vec<u64>], writes: &[Vec<u64>]) -> InterruptionStats {
        let mean = |sum: f64, n: u64| if n == 0 { 0.0 } else { sum / n as f64 };
        let out = &mut self.out;
        out.threads_stalled_per_refresh = mean(self.threads_sum as f64, out.refreshes);
        out.weighted_stall_per_refresh = mean(self.weighted_sum, out.refreshes);
        out.refreshes_stalling_share = mean(self.stalling as f64, out.refreshes);
        out.threads_stalled_per_drain = mean(self.drain_threads_sum as f64, out.write_drains);
        out.banks_written_per_drain = mean(self.drain_banks_sum as f64, out.write_drains);
        out.threads_stalled_per_watermark_drain =
            mean(self.watermark_threads_sum as f64, out.watermark_drains);
        out.banks_written_per_watermark_drain =
            mean(self.watermark_banks_sum as f64, out.watermark_drains);
        out.threads = (0..self.refreshes_stalled.len())
            .map(|t| ThreadInterruptions {
                refreshes_stalled: self.refreshes_stalled[t],
                refresh_stall_share: mean(self.refreshes_stalled[t] as f64, out.refreshes),
                dram_reads_by_rank: reads[t].clone(),
                dram_writes_by_rank: writes[t].clone(),
                dram_accesses_by_rank: reads[t]
                    .iter()
                    .zip(&writes[t])
                    .map(|(r, w)| r + w)
                    .collect(),
            })
            .collect();
        self.out
    }
}
