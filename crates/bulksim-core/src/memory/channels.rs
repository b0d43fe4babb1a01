//! One DRAM device's channels: the address mapper and one controller per channel. It routes
//! requests by channel, steps every controller, merges their command logs in cycle order into
//! one file, and sums their counters into `Stats`. Bulk operations enter here: it plans each
//! one, hands its in-DRAM segments to the controllers' bulk engines and its line jobs to the
//! channel copier, reports the bytes they move (in device-local addresses) for the memory
//! router to apply to the image, and completes operations as their parts finish. Addresses
//! here are local to the device; its clock is the preset's.

use crate::bulk::channel_copy::ChannelCopier;
use crate::bulk::plan::Planner;
use crate::bulk::reserved::ReservedRows;
use crate::bulk::tracker::BulkTracker;
use crate::bulk::{BulkOp, Move};
use crate::config::{Config, Mechanism, Stagger};
use crate::controller::refresh_overlap::{RefSeries, RefreshConcurrency, RefreshOverlap};
use crate::controller::unavailability::Unavailability;
use crate::controller::{Controller, ControllerStats, RequestKind, CLIENT_TAG, NO_TAG};
use crate::device::CommandLog;
use crate::device::RankActivity;
use crate::energy::{per_bit_energy, rank_energy, BitEnergyStats, EnergyBreakdown};
use crate::error::{Error, Result};
use crate::mapping::AddressMapper;
use crate::spec::{Command, Spec};
use crate::stats::{BulkStats, EnergyStats, LatencyStats, Stats};
use std::path::Path;

/// One request for a controller (device-local address): what `Controller::enqueue` takes
/// besides its decoded address.
#[derive(Clone, Copy)]
struct Enqueue {
    kind: RequestKind,
    addr: u64,
    /// The device's cycle.
    now: u64,
    /// Reported with its completion (`NO_TAG`: nobody waits).
    tag: u32,
    /// A program's request (its service time summed).
    program: bool,
    /// When it left its sender (fs; 0: unknown).
    issued: u64,
}

/// The one way into the controllers (a trace's requests, the caches' and the hybrid
/// copier's through `try_enqueue_client`, the channel copier's): decodes the address,
/// counts it once if it lies past the device's capacity (its upper bits are ignored), and
/// enqueues it at its channel, which has room (`has_room`).
#[inline(always)]
fn enqueue(
    mapper: &AddressMapper,
    controllers: &mut [Controller],
    out_of_range: &mut u64,
    at: Enqueue,
) {
    let dram = mapper.decode(at.addr);
    if at.addr >= mapper.capacity() {
        *out_of_range += 1;
    }
    let line = at.addr / mapper.line_bytes();
    controllers[dram.channel as usize]
        .enqueue(at.kind, line, dram, at.now, at.tag, at.program, at.issued);
}

/// Whether `ctrl`, the channel holding `addr`, has room for a `kind` request to it now.
/// Only per-rank write room needs the address decoded.
#[inline(always)]
fn has_room(mapper: &AddressMapper, ctrl: &Controller, kind: RequestKind, addr: u64) -> bool {
    if kind == RequestKind::Write && ctrl.writes_per_rank() {
        ctrl.can_accept_write(mapper.decode(addr).rank)
    } else {
        ctrl.can_accept(kind)
    }
}

pub struct MemorySystem {
    spec: Spec,
    mapper: AddressMapper,
    controllers: Vec<Controller>,
    log: Option<CommandLog>,
    out_of_range: u64,
    mechanism: Mechanism,
    reserved: Option<ReservedRows>,
    bulk_queue_size: usize,
    allow_fpm: bool,
    copier: ChannelCopier,
    tracker: BulkTracker,
    /// Bytes moved by bulk work since the router last took them.
    moves: Vec<Move>,
    /// Whether the copier or the tracker may have work (a bulk operation was accepted and
    /// has not been seen finished): one flag for the hot path of traces without bulk work.
    bulk_work: bool,
    client_outstanding: u64,
    completions: Vec<(u32, u64)>,
    /// Under the system-wide stagger, the overlap of all ranks' refreshes (else each
    /// controller counts its channel's).
    system_refresh_overlap: Option<RefreshOverlap>,
    /// How many of the device's ranks refresh at once (every schedule and scheme).
    refresh_concurrency: RefreshConcurrency,
}

impl MemorySystem {
    pub fn new(config: &Config) -> Result<MemorySystem> {
        let spec = config.spec()?;
        let c = &config.controller;
        let mapper = AddressMapper::new(&spec.organisation, &c.address_mapping, c.xor_bank)?;
        let controllers = (0..spec.organisation.channels)
            .map(|ch| {
                let mut ctrl = Controller::new(&spec, c, ch);
                if config.sim.record_intervals {
                    ctrl.record_intervals();
                }
                if config.bulk.mechanism.resolved() != Mechanism::Rowclone {
                    ctrl.without_bulk_commands(); // only RowClone's segments reach the engines
                }
                ctrl
            })
            .collect();
        let system_refresh_overlap = (c.refresh.stagger == Stagger::System).then(|| {
            RefreshOverlap::new(
                spec.organisation.channels as usize,
                spec.organisation.ranks as usize,
                true,
            )
        });
        let b = &config.bulk;
        let reserved = (b.mechanism.resolved() == Mechanism::Rowclone)
            .then(|| ReservedRows::new(&spec.organisation));
        Ok(MemorySystem {
            spec,
            mapper,
            controllers,
            log: None,
            out_of_range: 0,
            mechanism: b.mechanism.resolved(),
            reserved,
            bulk_queue_size: b.queue_size as usize,
            allow_fpm: b.fpm,
            copier: ChannelCopier::new(b.lines_in_flight as usize),
            tracker: BulkTracker::default(),
            moves: Vec::new(),
            bulk_work: false,
            client_outstanding: 0,
            completions: Vec::new(),
            system_refresh_overlap,
            refresh_concurrency: RefreshConcurrency::default(),
        })
    }

    /// Per channel, when its ranks could not serve requests and why.
    pub fn unavailability(&self) -> Vec<Unavailability> {
        self.controllers
            .iter()
            .map(|c| c.unavailability())
            .collect()
    }

    /// Whether bulk work moved bytes the router has not taken yet.
    #[inline]
    pub fn has_moves(&self) -> bool {
        !self.moves.is_empty()
    }

    /// Bytes bulk work moved since the last call, in the order they moved (local addresses).
    pub fn take_moves(&mut self, out: &mut Vec<Move>) {
        out.append(&mut self.moves);
    }

    /// Offers a copy or initialization at cycle `now`. Ok(false) when it must wait: the bulk
    /// queue is full, or it touches bytes an operation in flight writes (or writes bytes one
    /// reads). Err names what is wrong with the operation itself.
    /// Ok(Some(id)) when accepted; the id appears in `completed_ops` when the operation ends.
    pub fn try_enqueue_bulk(
        &mut self,
        op: BulkOp,
        now: u64,
    ) -> std::result::Result<Option<u32>, String> {
        if self.tracker.in_flight() >= self.bulk_queue_size || self.tracker.conflicts(&op) {
            return Ok(None);
        }
        let o = &self.spec.organisation;
        let mut planner = Planner::new(
            &self.mapper,
            self.mechanism,
            self.reserved,
            (o.columns / o.burst_length) as usize,
            o.bankgroups,
            o.banks_per_group,
        );
        if !self.allow_fpm {
            planner = planner.without_fpm();
        }
        let plan = planner.plan(&op, self.tracker.next_id()).map_err(|e| {
            let what = match op.kind {
                crate::bulk::BulkKind::Copy { src } => {
                    format!("copy of {} bytes from {src:#x} to {:#x}", op.bytes, op.dst)
                }
                crate::bulk::BulkKind::Init { value } => {
                    format!("init of {} bytes at {:#x} to {value}", op.bytes, op.dst)
                }
            };
            format!("{what}: {e}")
        })?;
        let parts = (plan.segments.len() + plan.jobs.len()) as u64;
        self.bulk_work = true;
        let id = self.tracker.start(op, now, parts);
        let c = &mut self.tracker.counters;
        c.fpm_bytes += plan.fpm_bytes;
        c.psm_bytes += plan.psm_bytes;
        if self.mechanism == Mechanism::McDma {
            c.dma_bytes += plan.channel_bytes;
        } else {
            c.channel_copy_bytes += plan.channel_bytes;
        }
        let seeds = plan
            .segments
            .iter()
            .filter(|s| matches!(s.kind, crate::bulk::SegmentKind::WriteLine { .. }))
            .count() as u64;
        self.tracker.counters.init_channel_bytes += seeds * self.mapper.line_bytes();
        for seg in plan.segments {
            let channel = match &seg.kind {
                crate::bulk::SegmentKind::Fpm { src, .. }
                | crate::bulk::SegmentKind::Transfer { src, .. } => src.channel,
                crate::bulk::SegmentKind::WriteLine { dst } => dst.channel,
            };
            debug_assert_eq!(seg.op, id);
            self.controllers[channel as usize].bulk.push(seg);
        }
        for job in plan.jobs {
            self.copier.push(job);
        }
        Ok(Some(id))
    }

    /// Requests whose tag has `bit` set are low priority in every channel's queues
    /// (`Controller::set_low_priority_tag`).
    pub fn set_low_priority_tag(&mut self, bit: u32) {
        for c in &mut self.controllers {
            c.set_low_priority_tag(bit);
        }
    }

    /// Offers a request for a client above the memory system (a cache fill or write-back);
    /// when `tag` is not `NO_TAG` its completion appears in `completions`; `program`: a
    /// program's (its latency summed, `program_service`). False if the channel's queue is
    /// full. `issued`: when the request left its sender (fs; 0: unknown), its age among
    /// the requests its controller takes in the same cycle.
    pub fn try_enqueue_client(
        &mut self,
        kind: RequestKind,
        addr: u64,
        now: u64,
        tag: u32,
        program: bool,
        issued: u64,
    ) -> bool {
        if !self.can_accept_client(kind, addr) {
            return false;
        }
        let tag = if tag == NO_TAG {
            NO_TAG
        } else {
            self.client_outstanding += 1;
            tag | CLIENT_TAG
        };
        let at = Enqueue {
            kind,
            addr,
            now,
            tag,
            program,
            issued,
        };
        enqueue(
            &self.mapper,
            &mut self.controllers,
            &mut self.out_of_range,
            at,
        );
        true
    }

    /// The read latencies of every channel, in one histogram (memory cycles).
    pub fn read_latencies(&self) -> crate::counters::LatencyHistogram {
        let mut h = crate::counters::LatencyHistogram::default();
        for c in &self.controllers {
            h.merge(&c.stats.read_latency);
        }
        h
    }

    /// Requests the controllers received, reads and writes, all channels.
    pub fn requests_received(&self) -> u64 {
        self.controllers
            .iter()
            .map(|c| c.stats.reads + c.stats.writes)
            .sum()
    }

    /// Program LLC misses and write-backs served, all channels, and their latencies from
    /// arrival at the controller to served, summed (memory cycles).
    pub fn program_service(&self) -> (u64, u64) {
        self.controllers.iter().fold((0, 0), |(n, c), ctrl| {
            (
                n + ctrl.stats.program_served,
                c + ctrl.stats.program_latency,
            )
        })
    }

    /// Whether a client request of `kind` to `addr` would find room in its channel's queue.
    #[inline]
    pub fn can_accept_client(&self, kind: RequestKind, addr: u64) -> bool {
        self.can_accept(self.mapper.channel_of(addr) as usize, kind, addr)
    }

    /// Client requests served since the last call: (tag, cycle their data is done).
    pub fn take_completions(&mut self, out: &mut Vec<(u32, u64)>) {
        out.append(&mut self.completions);
    }

    /// Takes out the served client requests whose tag has bit `mask` (a component's own
    /// requests among the caches'), leaving the others for `take_completions`.
    pub fn take_completions_tagged(&mut self, mask: u32, out: &mut Vec<(u32, u64)>) {
        if self.completions.iter().any(|c| c.0 & mask != 0) {
            out.extend(self.completions.iter().filter(|c| c.0 & mask != 0));
            self.completions.retain(|c| c.0 & mask == 0);
        }
    }

    /// The caller orders bulk operations by their range hazards (`BulkOp::must_wait_for`)
    /// before offering them: the queue does not check them a second time.
    pub fn leave_hazards_to_caller(&mut self) {
        self.tracker.caller_tracks_hazards = true;
    }

    /// Starts reporting finished bulk operations through `take_completed_ops`.
    pub fn report_completed_ops(&mut self) {
        self.tracker.report = true;
    }

    /// Bulk operations finished since the last call: (id, cycle they ended).
    pub fn take_completed_ops(&mut self, out: &mut Vec<(u32, u64)>) {
        out.append(&mut self.tracker.completed);
    }

    pub fn mapper(&self) -> &AddressMapper {
        &self.mapper
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    pub fn reserved_rows(&self) -> Option<ReservedRows> {
        self.reserved
    }

    /// Writes every issued command to `path` (CSV, see `device::command_log`).
    pub fn log_commands_to(&mut self, path: &Path) -> Result<()> {
        let log = CommandLog::create(path)
            .map_err(|e| Error::Io(format!("command log {}: {e}", path.display())))?;
        self.log = Some(log);
        for c in &mut self.controllers {
            c.device.enable_log();
        }
        Ok(())
    }

    /// Offers a request at cycle `now`; false if its channel's queue is full.
    #[inline]
    pub fn try_enqueue(&mut self, kind: RequestKind, addr: u64, now: u64) -> bool {
        // A blocked front end retries every cycle it runs, so check space before decoding.
        let channel = self.channel_of(addr);
        if !self.can_accept(channel, kind, addr) {
            return false;
        }
        self.enqueue(kind, addr, now);
        true
    }

    /// Takes a trace's request whose channel has room for it (`can_accept`).
    #[inline(always)]
    pub fn enqueue(&mut self, kind: RequestKind, addr: u64, now: u64) {
        let at = Enqueue {
            kind,
            addr,
            now,
            tag: NO_TAG,
            program: false,
            issued: 0,
        };
        enqueue(
            &self.mapper,
            &mut self.controllers,
            &mut self.out_of_range,
            at,
        );
    }

    /// The channel holding `addr`.
    #[inline]
    pub fn channel_of(&self, addr: u64) -> usize {
        self.mapper.channel_of(addr) as usize
    }

    /// Whether `channel`'s queue has room for a `kind` request to `addr` now. Only a tick
    /// can change the answer. Only per-rank write room needs the address decoded.
    #[inline]
    pub fn can_accept(&self, channel: usize, kind: RequestKind, addr: u64) -> bool {
        has_room(&self.mapper, &self.controllers[channel], kind, addr)
    }

    /// Steps every channel at `now`; returns the earliest cycle anything can change next.
    #[inline(always)]
    pub fn tick(&mut self, now: u64) -> u64 {
        let mut next = u64::MAX;
        let bulk = self.bulk_work;
        if bulk {
            next = self.step_copier(now);
        }
        let bulk = bulk || self.client_outstanding > 0;
        let mut refreshed = false;
        for (ch, c) in self.controllers.iter_mut().enumerate() {
            if let Some(overlap) = &self.system_refresh_overlap {
                if c.keeps_stagger() {
                    // Elastic refresh under the system stagger: REFs of every channel so far,
                    // this cycle's included, hold this channel's back.
                    c.stagger_busy_until = c.stagger_busy_until.max(overlap.latest_end());
                }
            }
            next = next.min(c.tick(now));
            if let Some((rank, start, end)) = c.refresh_issued.take() {
                refreshed = true;
                if let Some(overlap) = &mut self.system_refresh_overlap {
                    overlap.refresh(ch as u32, rank, start, end);
                }
                self.refresh_concurrency.add(
                    RefSeries {
                        start,
                        busy: end - start,
                        period: 0,
                        count: 1,
                    },
                    now,
                );
            }
        }
        if refreshed {
            self.refresh_concurrency.advance(now);
        }
        if bulk {
            next = next.min(self.collect_bulk_events(now));
            self.bulk_work = !self.copier.is_idle() || self.tracker.in_flight() > 0;
        }
        if let Some(log) = &mut self.log {
            for c in &mut self.controllers {
                c.device
                    .drain_log(|ch, cmd| log.record(cmd.cycle, cmd.command, ch, &cmd.addr));
            }
        }
        next
    }

    #[inline(never)]
    fn step_copier(&mut self, now: u64) -> u64 {
        let (mapper, controllers) = (&self.mapper, &mut self.controllers);
        let out_of_range = &mut self.out_of_range;
        self.copier.step(now, |kind, addr, tag| {
            let channel = mapper.channel_of(addr) as usize;
            if !has_room(mapper, &controllers[channel], kind, addr) {
                return false;
            }
            let at = Enqueue {
                kind,
                addr,
                now,
                tag,
                program: false,
                issued: 0,
            };
            enqueue(mapper, controllers, out_of_range, at);
            true
        })
    }

    /// Takes what the controllers report about bulk work: served line-job requests, moved
    /// data, finished segments. Returns when the copier may act next.
    #[inline(never)]
    fn collect_bulk_events(&mut self, now: u64) -> u64 {
        let mut next = u64::MAX;
        for c in &mut self.controllers {
            for (tag, kind, done) in c.served.drain(..) {
                if tag & CLIENT_TAG != 0 {
                    self.client_outstanding -= 1;
                    self.completions.push((tag & !CLIENT_TAG, done));
                    continue;
                }
                match self.copier.served(tag, kind, done) {
                    Some(job) => {
                        self.moves.push(job.moves);
                        let bytes = (job.reads.len() as u64 + 1) * self.mapper.line_bytes();
                        self.tracker.channel_bytes(job.op, bytes);
                        self.tracker.part_done(job.op, done);
                        next = now + 1; // a copier slot is free
                    }
                    None => next = next.min(done.max(now + 1)), // the job's write may go then
                }
            }
            self.moves.append(&mut c.bulk.moves);
            for (op, done) in c.bulk.finished.drain(..) {
                self.tracker.part_done(op, done);
            }
        }
        next
    }

    pub fn is_idle(&self) -> bool {
        self.controllers.iter().all(|c| c.is_idle()) && self.copier.is_idle()
    }

    /// With nothing to do before `until`, books each idle channel's refreshes due before it in
    /// closed form (`Controller::skip_idle_refreshes`), so a long idle gap costs no host time.
    /// Returns whether any channel booked refreshes.
    pub fn skip_idle_refreshes(&mut self, now: u64, until: u64) -> bool {
        let mut booked = false;
        if !self.bulk_work && self.client_outstanding == 0 && self.is_idle() {
            for c in &mut self.controllers {
                booked |= c.skip_idle_refreshes(now, until);
                for series in c.refreshes_booked.drain(..) {
                    self.refresh_concurrency.add(series, now);
                }
            }
        }
        booked
    }

    /// Flushes the command log, if any.
    pub fn finish_log(&mut self) -> Result<()> {
        match self.log.take() {
            Some(log) => log
                .finish()
                .map_err(|e| Error::Io(format!("command log {e}"))),
            None => Ok(()),
        }
    }

    /// Sums the controllers' counters into `Stats` (host figures left at zero).
    pub fn stats(&self, frontend_stall_cycles: u64) -> Stats {
        let mut total = ControllerStats::default();
        let mut counts = [0u64; crate::spec::NUM_COMMANDS];
        for c in &self.controllers {
            total.add(&c.stats);
            for (sum, n) in counts.iter_mut().zip(c.device.command_counts()) {
                *sum += n;
            }
        }
        let tck_ns = self.spec.tck_ns();
        let bulk = &self.tracker.counters;
        let cycles = total.last_done.max(bulk.last_done);
        let simulated_ns = cycles as f64 * tck_ns;
        let bursts: u64 = Command::ALL
            .iter()
            .filter(|c| c.is_column())
            .map(|&c| counts[c as usize])
            .sum();
        let bytes = bursts * self.mapper.line_bytes();
        let accesses = total.row_hits + total.row_misses + total.row_conflicts;
        let bulk_stats = self.bulk_stats(tck_ns);
        Stats {
            preset: self.spec.name.clone(),
            tck_ns,
            mem_cycles: cycles,
            simulated_ns,
            reads: total.reads,
            writes: total.writes,
            reads_forwarded: total.reads_forwarded,
            writes_merged: total.writes_merged,
            writes_absorbed: total.writes_absorbed,
            read_latency: LatencyStats::from_histogram(&total.read_latency, tck_ns),
            bandwidth_gbps: if cycles == 0 {
                0.0
            } else {
                bytes as f64 / simulated_ns
            },
            peak_bandwidth_gbps: self.spec.peak_channel_gbps() * self.controllers.len() as f64,
            row_hits: total.row_hits,
            read_queue_peak: total.read_queue_peak,
            row_misses: total.row_misses,
            row_conflicts: total.row_conflicts,
            wasted_acts: total.wasted_acts.clone(),
            refresh: self.refresh_stats(tck_ns),
            row_hit_rate: if accesses == 0 {
                0.0
            } else {
                total.row_hits as f64 / accesses as f64
            },
            // REFsb is listed only by runs that issue it (same-bank refresh), so that every
            // other run's commands keep their entries.
            commands: Command::ALL
                .iter()
                .filter(|&&c| c != Command::RefSb || counts[c as usize] > 0)
                .map(|&c| (c.name().to_string(), counts[c as usize]))
                .collect(),
            refreshes: counts[Command::Ref as usize],
            frontend_stall_mem_cycles: frontend_stall_cycles,
            out_of_range_requests: self.out_of_range,
            mcgr_bytes: self.mapper.mcgr_bytes(),
            bulk: bulk_stats,
            energy: self.energy_stats(cycles),
            host: Default::default(),
        }
    }

    /// The bulk operations' counters, channel traffic and energy.
    fn bulk_stats(&self, tck_ns: f64) -> BulkStats {
        let bulk = &self.tracker.counters;
        let mut bulk_commands = RankActivity::default();
        for c in &self.controllers {
            bulk_commands.add_counts(&c.stats.bulk_commands);
            bulk_commands.add_counts(&c.bulk.activity);
        }
        let bulk_energy = rank_energy(&self.spec, &bulk_commands);
        let o = &self.spec.organisation;
        let reserved_bytes = self.reserved.map_or(0, |r| r.bytes(o));
        BulkStats {
            mechanism: self.mechanism.name().into(),
            copies: bulk.copies,
            inits: bulk.inits,
            bytes_copied: bulk.bytes_copied,
            bytes_initialized: bulk.bytes_initialized,
            fpm_bytes: bulk.fpm_bytes,
            psm_bytes: bulk.psm_bytes,
            channel_copy_bytes: bulk.channel_copy_bytes,
            dma_bytes: bulk.dma_bytes,
            in_dram_bytes: bulk.fpm_bytes + bulk.psm_bytes,
            channel_bytes: (bulk_commands.reads + bulk_commands.writes) * self.mapper.line_bytes(),
            copy_channel_bytes: bulk.copy_channel_bytes,
            init_channel_bytes: bulk.init_channel_bytes,
            copy_latency: LatencyStats::from_histogram(&bulk.copy_latency, tck_ns),
            init_latency: LatencyStats::from_histogram(&bulk.init_latency, tck_ns),
            energy_nj: bulk_energy.core_nj(),
            energy_with_io_nj: bulk_energy.total_nj(),
            reserved_bytes,
            usable_bytes: self.mapper.capacity() - reserved_bytes,
        }
    }

    /// Refresh windows, concurrency and overlap summed over the channels.
    fn refresh_stats(&self, tck_ns: f64) -> crate::stats::RefreshStats {
        crate::stats::RefreshStats {
            adaptive_windows: self
                .controllers
                .iter()
                .filter_map(|c| c.adaptive.as_ref())
                .map(|a| a.windows)
                .sum(),
            adaptive_fine_windows: self
                .controllers
                .iter()
                .filter_map(|c| c.adaptive.as_ref())
                .map(|a| a.fine_windows)
                .sum(),
            most_ranks_refreshing: self.refresh_concurrency.most_at_once(),
            ranks_refreshing_ns: self
                .refresh_concurrency
                .at_least()
                .iter()
                .map(|&cycles| cycles as f64 * tck_ns)
                .collect(),
            overlap_ns: (self.system_refresh_overlap.as_ref().map_or(0, |o| o.cycles)
                + self
                    .controllers
                    .iter()
                    .map(|c| c.refresh_overlap.cycles)
                    .sum::<u64>()) as f64
                * tck_ns,
        }
    }

    /// DRAM energy of every rank over `cycles` memory cycles.
    fn energy_stats(&self, cycles: u64) -> EnergyStats {
        let mut energy = EnergyBreakdown::default();
        let mut per_bit = BitEnergyStats::default();
        let mut by_rank_nj = Vec::new();
        for c in &self.controllers {
            for activity in c.device.activity(cycles) {
                let e = rank_energy(&self.spec, &activity);
                by_rank_nj.push(e.total_nj());
                energy.add(&e);
                per_bit.add(&per_bit_energy(&self.spec, &activity));
            }
        }
        EnergyStats {
            core_nj: energy.core_nj(),
            total_nj: energy.total_nj(),
            components: energy,
            by_rank_nj,
            power_source: self.spec.power.source.clone(),
            per_bit,
            per_bit_source: self
                .spec
                .bit_energy
                .as_ref()
                .map_or(String::new(), |e| e.source.clone()),
        }
    }
}
