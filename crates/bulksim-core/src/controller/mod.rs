//! The channel controller: read and write queues, write drain, refresh (all-bank REF, or
//! DDR5's same-bank REFsb with the bank's open rows precharged first), the page
//! policy, and one scheduling decision per memory cycle (at most one command on the command
//! bus). `tick` returns the next cycle at which anything can change, for idle skipping.
//! Statistics it keeps: requests, forwarding/merging, row-buffer outcomes, read latency.
//! Its bulk engine executes in-DRAM bulk segments with priority on the command bus; requests
//! tagged as bulk line jobs are reported back when served. `refresh_overlap` counts how long
//! ranks refresh at once: per channel here, and over a device's ranks in its channels (the
//! system-wide stagger), which use it from here.

pub mod adaptive_refresh;
pub mod bulk_engine;
pub mod queue;
pub mod refresh;
pub mod refresh_overlap;
pub mod refresh_scheme;
pub mod request;
pub mod scheduler;
pub mod unavailability;
pub mod write_drain;

use crate::config::{
    ControllerConfig, DrainPolicy, DrainScope, PagePolicy, RefreshBankScope, RefreshPolicy,
    RefreshScheme, Scheduler, Stagger,
};
use crate::counters::{LatencyHistogram, WastedActs};
use crate::device::{Device, RankActivity};
use crate::mapping::DramAddr;
use crate::spec::{Command, Spec};
use crate::stat_struct::stat_struct;
use adaptive_refresh::AdaptiveRefresh;
use bulk_engine::{BulkEngine, Tick};
use queue::RequestQueue;
use refresh::{Refresh, SameBankRefresh, Schedule};
use refresh_overlap::{RefSeries, RefreshOverlap};
use refresh_scheme::{Postponement, RankActivity as RankQueueActivity};
pub use request::{Request, RequestKind, CLIENT_TAG, NO_TAG};
use scheduler::{HitCap, Owned};
use unavailability::Unavailability;
use write_drain::WriteDrain;

stat_struct! {
    /// Counters one controller accumulates (summed over channels into `Stats`).
    pub struct ControllerStats {
        pub reads: u64 = sum("requests", "read requests received (including forwarded ones)"),
        pub writes: u64 = sum("requests", "write requests received (including merged ones)"),
        pub reads_forwarded: u64 = sum("requests", "reads answered from a queued write to the same line"),
        pub writes_merged: u64 = sum("requests", "writes folded into a queued write to the same line"),
        pub writes_absorbed: u64 = sum("requests", "writes dropped on arrival by controller.write_drain.policy = ideal"),
        pub row_hits: u64 = sum("requests", "requests served without an ACT of their own"),
        pub row_misses: u64 = sum("requests", "requests served from an ACT of their own to a closed bank"),
        pub row_conflicts: u64 = sum("requests", "requests served from an ACT of their own after a PRE of another row of theirs"),
        pub wasted_acts: WastedActs = nested(),
        #[serde(skip)]
        pub read_latency: LatencyHistogram = merge(LatencyHistogram::merge, "memory cycles", "read latencies of reads served by DRAM, from arrival to the last data beat"),
        pub last_done: u64 = max("memory cycles", "cycle of the last data beat of any served request"),
        pub read_queue_peak: u64 = max("requests", "most reads waiting in one channel's read queue at once"),
        pub program_served: u64 = sum("requests", "program LLC misses and write-backs served (a forwarded read or an absorbed write on arrival; a write merged into a queued one is served with it, counted once)"),
        pub program_latency: u64 = sum("memory cycles", "their latencies from arrival at the controller to served (the last data beat), summed"),
        /// For their energy.
        #[serde(skip)]
        pub bulk_commands: RankActivity = merge(RankActivity::add_counts, "commands", "commands issued for bulk operations (engine and tagged requests)"),
    }
}

pub struct Controller {
    pub device: Device,
    scheduler: Scheduler,
    row_hit_cap: u32,
    page_policy: PagePolicy,
    reads: RequestQueue,
    writes: RequestQueue,
    drain: WriteDrain,
    /// Scratch per-rank masks of ranks blocked for reads and for writes this cycle.
    blocked: [Vec<bool>; 2],
    refresh: Refresh,
    /// A DramAddr per rank, for rank-wide commands (PREA, REF).
    rank_addrs: Vec<DramAddr>,
    hits_since_act: Vec<u32>,
    /// Per bank: its open row was opened for a request not served yet (its owner).
    owned: Vec<bool>,
    /// Owners waiting in the read and the write queue.
    owners: [u32; 2],
    read_data_delay: u64,
    write_data_delay: u64,
    pub bulk: BulkEngine,
    /// Tagged requests served since the last drain: (tag, kind, cycle their data is done).
    pub served: Vec<(u32, RequestKind, u64)>,
    pub stats: ControllerStats,
    /// The REF issued in the last tick, if any: (rank, cycle, end of its tRFC), for the
    /// device's count of ranks refreshing at once (and its overlap count across channels
    /// under the system-wide stagger).
    pub refresh_issued: Option<(u32, u64, u64)>,
    /// REFs an idle controller booked in closed form since the device last took them, per
    /// rank a series (`skip_idle_refreshes`).
    pub refreshes_booked: Vec<RefSeries>,
    /// Elastic refresh under a stagger: a REF issues only while no other rank of the
    /// stagger's group (the channel's ranks, or every rank under the system stagger) is
    /// refreshing, so postponed and idle-time REFs keep the stagger's one rank at a time.
    keeps_stagger: bool,
    /// The end of the latest refresh of the stagger's group known here (this channel's REFs;
    /// the device adds the other channels' under the system stagger).
    pub stagger_busy_until: u64,
    /// The system-wide stagger is on: REFs are reported, and idle refreshes are stepped
    /// rather than booked in closed form, so that the overlap across channels is seen.
    system_stagger: bool,
    /// Overlap of this channel's ranks' refreshes (channel stagger and simultaneous).
    pub refresh_overlap: RefreshOverlap,
    /// Reads and writes compete in one cycle (per-rank drains or equal priority).
    both_queues: bool,
    /// Requests whose tag has this bit are low priority (`Request::low`); 0: none.
    low_priority_tag: u32,
    /// Per rank, its queued requests and when it last idled (postponing refresh schemes).
    rank_queues: Option<RankQueueActivity>,
    /// PCD: cycles before a REF in which its rank's requests go first (0: off).
    pcd_window: u64,
    /// Adaptive refresh's granularity choice (scheme = adaptive).
    pub adaptive: Option<Box<AdaptiveRefresh>>,
    /// Refresh periods of this channel's ranks (the write drain counts its own periods).
    unavailable: Unavailability,
    /// nRFC: how long a REF keeps its rank busy (nRFCsb: a REFsb its banks).
    refresh_busy: u64,
    /// Same-bank refresh (DDR5 REFsb): which bank index each rank refreshes next; None under
    /// all-bank refresh.
    same_bank: Option<Box<SameBankRefresh>>,
    /// The longest any REF delays a later REF (any rank), or None when a REF feeds a window
    /// rule: what decides whether idle refreshes can be booked in closed form.
    ref_to_ref: Option<u64>,
}

/// The refresh schedule of channel `channel`: which ranks refresh when, and how refreshes are
/// postponed under `refresh.scheme`.
fn refresh_schedule(spec: &Spec, cfg: &ControllerConfig, channel: u32) -> Refresh {
    let o = &spec.organisation;
    let t = &spec.timing;
    // Same-bank refresh: banks_per_group REFsb per tREFI (tREFI2, in FGR mode), one per
    // bank index, each standing for a share of the REF it replaces.
    let refs_per_interval = match cfg.refresh.bank_scope {
        RefreshBankScope::AllBank => 1,
        RefreshBankScope::SameBank => o.banks_per_group as u64,
    };
    let schedule = Refresh::scheduled(
        cfg.refresh.policy != RefreshPolicy::None && spec.has_refresh,
        o.ranks as usize,
        t.n_refi as u64 / refs_per_interval,
        match (cfg.refresh.policy, cfg.refresh.stagger) {
            (RefreshPolicy::Simultaneous, _) => Schedule::Simultaneous,
            (_, Stagger::System) => Schedule::System {
                channel,
                channels: o.channels,
            },
            (_, Stagger::Channel) => Schedule::PerChannel,
        },
    )
    .postponed(Postponement::new(
        cfg.refresh.scheme,
        (cfg.refresh.idle_ns / spec.tck_ns()).ceil() as u64,
        cfg.refresh.elastic_deadline,
        // The 1x interval: pausing's fragments come pause_granularity to one.
        match cfg.refresh.scheme {
            RefreshScheme::Pausing => t.n_refi as u64 * cfg.refresh.pause_granularity as u64,
            _ => t.n_refi as u64,
        },
    ));
    match cfg.refresh.bank_scope {
        RefreshBankScope::AllBank => schedule,
        // An owed REFsb locks its bank set (`SameBankRefresh::locks`) and holds its rank
        // only in the last tRRD_L before it issues (`refresh_step`).
        RefreshBankScope::SameBank => schedule.blocking_no_rank(),
    }
}

/// PCD's window before a REF in memory cycles (`refresh.pcd_window_ns`, or nRFC), 0 when the
/// scheme is not PCD.
fn pcd_window(spec: &Spec, cfg: &ControllerConfig) -> u64 {
    let t = &spec.timing;
    match cfg.refresh.scheme {
        RefreshScheme::Pcd if cfg.refresh.pcd_window_ns > 0.0 => {
            (cfg.refresh.pcd_window_ns / spec.tck_ns()).ceil() as u64
        }
        RefreshScheme::Pcd => t.n_rfc as u64,
        _ => 0,
    }
}

/// Adaptive refresh's state, with a device of the fine-granularity timing, when the scheme
/// is adaptive and the part refreshes.
fn adaptive_refresh(
    spec: &Spec,
    cfg: &ControllerConfig,
    channel: u32,
) -> Option<Box<AdaptiveRefresh>> {
    let t = &spec.timing;
    (cfg.refresh.scheme == RefreshScheme::Adaptive
        && cfg.refresh.policy != RefreshPolicy::None
        && spec.has_refresh)
        .then(|| {
            let mut fine = spec.clone();
            fine.timing.n_rfc = t.n_rfc4;
            fine.timing.n_refi = if t.n_refi4 > 0 {
                t.n_refi4
            } else {
                t.n_refi / 4
            };
            Box::new(AdaptiveRefresh::new(
                Device::new(&fine, channel),
                cfg.refresh.ar_reads as u64,
                (t.n_refi as u64, t.n_rfc as u64),
                (fine.timing.n_refi as u64, fine.timing.n_rfc as u64),
            ))
        })
}

/// The longest any REF delays a later REF, or None when a REF feeds a window rule.
fn ref_to_ref(spec: &Spec) -> Option<u64> {
    {
        let rules = spec.rules();
        let from_ref = || rules.iter().filter(|r| r.preceding.contains(&Command::Ref));
        if from_ref().any(|r| r.window > 0) {
            None
        } else {
            from_ref()
                .filter(|r| r.following.contains(&Command::Ref))
                .map(|r| r.latency as u64)
                .max()
        }
    }
}

impl Controller {
    pub fn new(spec: &Spec, cfg: &ControllerConfig, channel: u32) -> Controller {
        let o = &spec.organisation;
        let t = &spec.timing;
        let banks = (o.ranks * o.banks_per_rank()) as usize;
        let rank_addrs = (0..o.ranks)
            .map(|r| DramAddr {
                channel,
                rank: r,
                bankgroup_index: r * o.bankgroups,
                bank_index: r * o.banks_per_rank(),
                ..Default::default()
            })
            .collect();
        Controller {
            device: Device::new(spec, channel),
            scheduler: cfg.scheduler,
            row_hit_cap: cfg.row_hit_cap,
            page_policy: cfg.page_policy,
            reads: RequestQueue::new(cfg.read_queue_size as usize, banks),
            writes: RequestQueue::new(
                match cfg.write_drain.scope {
                    DrainScope::Channel => cfg.write_queue_size as usize,
                    DrainScope::Rank => cfg.drain_watermarks().2 * o.ranks as usize,
                },
                banks,
            ),
            drain: WriteDrain::new(
                cfg.write_drain.policy,
                cfg.write_drain.scope,
                cfg.write_drain.coordinate,
                cfg.drain_watermarks(),
                o.ranks as usize,
                (o.ranks * o.banks_per_rank()) as usize,
            ),
            blocked: [vec![false; o.ranks as usize], vec![false; o.ranks as usize]],
            refresh: refresh_schedule(spec, cfg, channel),
            rank_addrs,
            hits_since_act: vec![0; (o.ranks * o.banks_per_rank()) as usize],
            owned: vec![false; (o.ranks * o.banks_per_rank()) as usize],
            owners: [0; 2],
            read_data_delay: (t.n_cl + t.n_bl) as u64,
            write_data_delay: (t.n_cwl + t.n_bl) as u64,
            bulk: BulkEngine::new(spec),
            served: Vec::new(),
            stats: ControllerStats::default(),
            refresh_issued: None,
            refreshes_booked: Vec::new(),
            keeps_stagger: cfg.refresh.scheme == RefreshScheme::Elastic
                && cfg.refresh.elastic_keeps_stagger
                && cfg.refresh.policy != RefreshPolicy::Simultaneous,
            stagger_busy_until: 0,
            system_stagger: cfg.refresh.stagger == Stagger::System,
            refresh_overlap: RefreshOverlap::new(1, o.ranks as usize, false),
            low_priority_tag: 0,
            rank_queues: matches!(
                cfg.refresh.scheme,
                RefreshScheme::Elastic | RefreshScheme::Pausing
            )
            .then(|| RankQueueActivity::new(o.ranks as usize)),
            pcd_window: pcd_window(spec, cfg),
            adaptive: adaptive_refresh(spec, cfg, channel),
            both_queues: cfg.write_drain.scope == DrainScope::Rank
                || cfg.write_drain.policy == DrainPolicy::EqualPriority,
            unavailable: Unavailability::new(o.ranks as usize, false),
            refresh_busy: match cfg.refresh.bank_scope {
                RefreshBankScope::AllBank => t.n_rfc as u64,
                RefreshBankScope::SameBank => t.n_rfcsb as u64,
            },
            ref_to_ref: ref_to_ref(spec),
            same_bank: (cfg.refresh.bank_scope == RefreshBankScope::SameBank).then(|| {
                let mut sb = SameBankRefresh::new(
                    cfg.refresh.same_bank_order,
                    o.ranks as usize,
                    o.bankgroups,
                    o.banks_per_group,
                );
                // The longest a command of another bank (ACT, ACT2) delays a REFsb.
                sb.hold_window = t.n_rrd_l as u64;
                Box::new(sb)
            }),
        }
    }

    /// This channel gets no in-DRAM bulk work (its bulk engine stays idle): the device keeps
    /// the deadlines of only the commands requests and refresh issue (`Device::only_commands`).
    pub fn without_bulk_commands(&mut self) {
        let (read, write) = match self.page_policy {
            PagePolicy::Open => (Command::Rd, Command::Wr),
            PagePolicy::Closed => (Command::RdA, Command::WrA),
        };
        let used = [
            Command::Act,
            Command::Pre,
            read,
            write,
            Command::PreA,
            Command::Ref,
            Command::RefSb,
        ];
        // REFsb's deadlines only under same-bank refresh (others never issue it).
        let used = &used[..used.len() - self.same_bank.is_none() as usize];
        self.device.only_commands(used);
    }

    /// Whether REFs wait for the other ranks of the stagger's group (`stagger_busy_until`).
    #[inline]
    pub fn keeps_stagger(&self) -> bool {
        self.keeps_stagger
    }

    /// Keeps every refresh and write-drain interval, besides their totals.
    pub fn record_intervals(&mut self) {
        self.unavailable = Unavailability::new(self.rank_addrs.len(), true);
        self.drain.record = true;
    }

    /// When this channel's ranks could not serve requests, and why.
    pub fn unavailability(&self) -> Unavailability {
        self.unavailable.with_drains(&self.drain, self.refresh_busy)
    }

    /// Books in closed form the refreshes an idle controller would issue before `until`, with
    /// their energy, counts and unavailability, exactly as stepping would: every REF issues
    /// when due, since no bank is open, nothing else is issued, each rank may refresh by its
    /// next due cycle, and due REFs lie further apart than any REF delays another. The last
    /// round is issued for real, so the device's deadlines are the ones stepping leaves
    /// (those of earlier REFs are lower). Does nothing unless at least two whole rounds fit
    /// or when intervals or commands are recorded one by one. Returns whether it booked any.
    pub fn skip_idle_refreshes(&mut self, now: u64, until: u64) -> bool {
        let interval = self.refresh.interval();
        let Some(ref_to_ref) = self.ref_to_ref else {
            return false;
        };
        // interval 0: a part without refresh (nREFI unused), nothing to skip.
        if interval == 0
            || self.system_stagger
            || self.same_bank.is_some()
            || !self.refresh.on_demand()
            || self.adaptive.is_some()
            || until.saturating_sub(now) < 2 * interval
            || !self.is_idle()
            || self.refresh.pending_ranks().next().is_some()
            || self.drain.is_draining()
            || self.unavailable.is_recording()
            || self.device.is_logging()
            || self.refresh.min_spacing() < ref_to_ref.max(1)
        {
            return false;
        }
        let rounds = self.refresh.rounds_before(until);
        if rounds < 2 {
            return false;
        }
        for (rank, addr) in self.rank_addrs.iter().enumerate() {
            let rank = rank as u32;
            if self.device.rank_has_open_bank(rank)
                || self.device.earliest(Command::Ref, addr) > self.refresh.due(rank)
            {
                return false;
            }
        }
        let booked = rounds - 1;
        for rank in 0..self.rank_addrs.len() as u32 {
            self.device.count_refreshes(rank, booked);
            self.unavailable.refreshes(rank, booked, self.refresh_busy);
            // The booked rounds and the last one, each REF when due.
            self.refreshes_booked.push(RefSeries {
                start: self.refresh.due(rank),
                busy: self.refresh_busy,
                period: interval,
                count: booked + 1,
            });
        }
        self.refresh.skip_rounds(booked);
        // The last round, in the order its REFs fall due.
        let mut order: Vec<u32> = (0..self.rank_addrs.len() as u32).collect();
        order.sort_by_key(|&r| self.refresh.due(r));
        for rank in order {
            let due = self.refresh.due(rank);
            self.device
                .issue(Command::Ref, &self.rank_addrs[rank as usize], due);
            self.unavailable.refresh(rank, due, due + self.refresh_busy);
            self.refresh.done(rank);
        }
        true
    }

    /// Whether a request of `kind` can enter its queue now, for a write to a rank the
    /// caller does not know yet (per-rank drains: `can_accept_write`).
    #[inline]
    pub fn can_accept(&self, kind: RequestKind) -> bool {
        match kind {
            RequestKind::Read => !self.reads.is_full(),
            RequestKind::Write => !self.writes.is_full(),
        }
    }

    /// Whether writes have per-rank room (`controller.write_drain.scope = "rank"`), so that
    /// a write's rank must be asked with `can_accept_write`.
    #[inline]
    pub fn writes_per_rank(&self) -> bool {
        self.drain.per_rank()
    }

    /// Whether a write to `rank` can enter the write queue now.
    #[inline]
    pub fn can_accept_write(&self, rank: u32) -> bool {
        self.drain.has_room(rank)
    }

    /// Takes a request (the caller checked `can_accept`). A read of a line with a queued write
    /// is answered from that write; a write to such a line replaces it (and takes its tag).
    /// `program`: a program's LLC miss or write-back, whose latency is summed in the stats.
    /// `issued`: when it left its sender (fs; 0: unknown).
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &mut self,
        kind: RequestKind,
        line: u64,
        addr: DramAddr,
        now: u64,
        tag: u32,
        program: bool,
        issued: u64,
    ) {
        let low = tag != NO_TAG && tag & self.low_priority_tag != 0;
        let pending_write = self.writes.iter().position(|w| w.line == line);
        let column = match (kind, self.page_policy) {
            (RequestKind::Read, PagePolicy::Open) => Command::Rd,
            (RequestKind::Read, PagePolicy::Closed) => Command::RdA,
            (RequestKind::Write, PagePolicy::Open) => Command::Wr,
            (RequestKind::Write, PagePolicy::Closed) => Command::WrA,
        };
        let queue = match kind {
            RequestKind::Read => {
                self.stats.reads += 1;
                if pending_write.is_some() {
                    self.stats.reads_forwarded += 1;
                    self.served_on_arrival(kind, tag, program, now);
                    return;
                }
                &mut self.reads
            }
            RequestKind::Write => {
                self.stats.writes += 1;
                if self.drain.policy == DrainPolicy::Ideal {
                    // Absorbed: the write costs nothing and is done on arrival.
                    self.stats.writes_absorbed += 1;
                    self.served_on_arrival(kind, tag, program, now);
                    return;
                }
                if let Some(i) = pending_write {
                    self.stats.writes_merged += 1;
                    // Served with the queued write, and counted then.
                    self.writes.get_mut(i).program |= program;
                    // A write of a program's data is no copy to hold back.
                    self.writes.get_mut(i).low &= low;
                    if tag != NO_TAG {
                        // The queued write now carries this job's data; its own job's data
                        // was superseded, so that job is done.
                        let old = std::mem::replace(&mut self.writes.get_mut(i).tag, tag);
                        if old != NO_TAG {
                            self.served.push((old, kind, now));
                        }
                    }
                    return;
                }
                self.drain.write_queued(addr.rank);
                &mut self.writes
            }
        };
        if let Some(queues) = &mut self.rank_queues {
            queues.queued(addr.rank);
        }
        let request = Request {
            kind,
            line,
            addr,
            column,
            arrival: now,
            issued,
            activated: false,
            precharged: false,
            tag,
            program,
            low,
        };
        queue.push(request, &self.device);
        if kind == RequestKind::Read {
            let queued = self.reads.len() as u64;
            self.stats.read_queue_peak = self.stats.read_queue_peak.max(queued);
        }
    }

    /// A request done on arrival (a read forwarded from a queued write, an absorbed write):
    /// counted as served now and, when tagged, reported.
    #[inline]
    fn served_on_arrival(&mut self, kind: RequestKind, tag: u32, program: bool, now: u64) {
        self.stats.program_served += program as u64;
        self.stats.last_done = self.stats.last_done.max(now);
        if tag != NO_TAG {
            self.served.push((tag, kind, now));
        }
    }

    pub fn is_idle(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty() && self.bulk.is_idle()
    }

    /// One scheduling decision at cycle `now`. Returns the next cycle at which something can
    /// happen: `now + 1` after issuing, else the earliest ready time or refresh deadline.
    pub fn tick(&mut self, now: u64) -> u64 {
        let mut next = u64::MAX;
        let refreshing = match &self.rank_queues {
            None => self.refresh.poll(now),
            Some(queues) => self.refresh.poll_postponed(now, queues),
        };
        if !self.bulk.is_idle() {
            let changes = self.device.open_row_changes();
            match self.bulk.tick(&mut self.device, &self.refresh, now) {
                Tick::Issued => {
                    if self.device.open_row_changes() != changes {
                        self.release_closed_owners(false);
                    }
                    return now + 1;
                }
                Tick::Wait(t) => next = t,
            }
        }
        if refreshing {
            match self.refresh_step(now) {
                Ok(()) => return now + 1,
                Err(t) => next = next.min(t),
            }
        }
        next = next.min(self.refresh.next_due());

        let draining = self.drain.update(self.reads.len(), now);
        if self.pcd_window > 0 {
            // With both queues competing (per-rank drains), PCD serves the rank's reads: they
            // are what its refresh would stall.
            if let Some(t) = self.pcd_first(draining && !self.both_queues, now) {
                return t;
            }
        }
        if self.both_queues {
            return self.tick_both_queues(now, next);
        }
        let writing = draining;
        if self.owners[!writing as usize] > 0 {
            // A row opened for a request of the other queue stays open for it: serve it
            // across the mode switch.
            let queue = if writing {
                &mut self.reads
            } else {
                &mut self.writes
            };
            match ready_owner(queue, &self.device, self.refresh.pending_mask(), None, now) {
                Ok(index) => {
                    self.serve_rare(!writing, index, self.column_of(!writing, index), now);
                    return now + 1;
                }
                Err(t) => next = next.min(t),
            }
        }
        let pick = self.pick_in(writing, Blocked::Refreshing, now);
        match pick.choice {
            Some((index, cmd)) => {
                self.serve(writing, index, cmd, now);
                if cmd.is_column() || self.refresh.any_pending() {
                    // A column command frees a queue slot the front end may fill next cycle.
                    return now + 1;
                }
                // An ACT or PRE leaves the queues as they were, so the next event is the
                // earliest ready cycle of a queued request (or a refresh deadline). This is
                // cheaper than a full scheduling pass at now + 1, which after a row command
                // usually finds nothing: the command just issued delays the other candidates.
                next.min(self.earliest_ready(writing, now + 1))
            }
            None => next.min(pick.next_ready),
        }
    }

    /// Refresh's turn in a tick while refreshes are due: the first pending rank (not held by
    /// the bulk engine) whose PREA or REF is ready issues it (`Ok`); else `Err` holds the
    /// earliest cycle one of them is ready. Out of line: refreshes are due in few ticks, and
    /// `tick` itself is the trace replay's hottest function.
    #[inline(never)]
    fn refresh_step(&mut self, now: u64) -> Result<(), u64> {
        let mut next = u64::MAX;
        for rank in 0..self.rank_addrs.len() as u32 {
            if !self.refresh.is_pending(rank) || self.bulk.holds_rank(rank) {
                continue;
            }
            let (cmd, addr) = match self.same_bank {
                Some(_) => self.same_bank_command(rank),
                None if self.device.rank_has_open_bank(rank) => {
                    (Command::PreA, self.rank_addrs[rank as usize])
                }
                None => (Command::Ref, self.rank_addrs[rank as usize]),
            };
            let mut t = self.device.earliest(cmd, &addr);
            if let (Command::RefSb, Some(sb)) = (cmd, &self.same_bank) {
                // Its banks are closed. Within hold_window of its cycle an ACT of the rank
                // would delay it again: hold the rank until it issues; until then, wake up
                // when the window opens.
                if t > now + sb.hold_window {
                    next = next.min(t - sb.hold_window);
                    continue;
                }
                self.refresh.hold_rank(rank, true);
            }
            if cmd == Command::Ref && self.keeps_stagger {
                // Another rank of the stagger's group is refreshing: wait for its end.
                t = t.max(self.stagger_busy_until);
            }
            if t <= now {
                self.device.issue(cmd, &addr, now);
                match cmd {
                    Command::PreA | Command::Pre => self.release_closed_owners(true),
                    Command::Ref => self.book_refresh(rank, now),
                    Command::RefSb => {
                        let sb = self.same_bank.as_mut().expect("same-bank refresh");
                        sb.done(rank, addr.bank);
                        self.refresh.hold_rank(rank, false);
                        self.book_refresh(rank, now);
                    }
                    _ => {}
                }
                return Ok(());
            }
            next = next.min(t);
        }
        Err(next)
    }

    /// Books the REF just issued to `rank`: its unavailable period, the stagger's and the
    /// overlap's records, the refresh schedule and adaptive refresh's choice.
    fn book_refresh(&mut self, rank: u32, now: u64) {
        let due = self.refresh.blocked_from(rank);
        let end = now + self.refresh_busy;
        // A REFsb holds its rank only until it issues (while its banks close); then the
        // rank's other banks serve on.
        let unavailable_until = if self.same_bank.is_some() { now } else { end };
        self.unavailable.refresh(rank, due, unavailable_until);
        self.refresh_issued = Some((rank, now, end));
        self.stagger_busy_until = self.stagger_busy_until.max(end);
        if !self.system_stagger {
            self.refresh_overlap.refresh(0, rank, now, end);
        }
        self.refresh.done(rank);
        if self.adaptive.is_some() {
            self.adapt_refresh(rank, now);
        }
    }

    /// Same-bank refresh's next command for `rank`: a PRE to the open bank of the REFsb's
    /// bank set that can close first, or, with all of them closed, the REFsb. The bank index
    /// is chosen when the REFsb falls due (`SameBankRefresh::bank_for`), bank-idle-aware
    /// from the requests queued for the rank.
    #[cold]
    fn same_bank_command(&mut self, rank: u32) -> (Command, DramAddr) {
        let (reads, writes) = (&self.reads, &self.writes);
        let sb = self.same_bank.as_mut().expect("same-bank refresh");
        let bank = sb.bank_for(rank, |b| {
            let queued = |r: &Request| r.addr.rank == rank && r.addr.bank == b;
            !reads.iter().any(queued) && !writes.iter().any(queued)
        });
        let base = self.rank_addrs[rank as usize];
        let at = |g: u32| {
            let bankgroup_index = base.bankgroup_index + g;
            DramAddr {
                bankgroup: g,
                bank,
                bankgroup_index,
                bank_index: bankgroup_index * sb.banks_per_group + bank,
                ..base
            }
        };
        let close_first = (0..sb.bankgroups)
            .map(at)
            .filter_map(|a| self.device.open_row(&a).map(|row| DramAddr { row, ..a }))
            .min_by_key(|a| self.device.earliest(Command::Pre, a));
        match close_first {
            Some(open) => (Command::Pre, open),
            None => (Command::RefSb, at(0)),
        }
    }

    /// Adaptive refresh: books the REF just issued to `rank` (its granularity, the reads
    /// waiting for the rank) and switches granularity at a window's end.
    #[cold]
    fn adapt_refresh(&mut self, rank: u32, now: u64) {
        let waiting = self.reads.iter().filter(|r| r.addr.rank == rank).count() as u64;
        let a = self.adaptive.as_mut().expect("adaptive refresh");
        if a.fine {
            self.device.note_fine_refresh(rank);
        }
        a.refresh_issued(
            now,
            waiting,
            &mut self.device,
            &mut self.refresh,
            &mut self.refresh_busy,
        );
    }

    /// Requests whose tag has `bit` set are low priority from now on (`Request::low`: a
    /// hybrid memory's migration copies under `hybrid.copy_priority = "low"`).
    pub fn set_low_priority_tag(&mut self, bit: u32) {
        self.low_priority_tag = bit;
    }

    /// The scheduler's pick in the read or write queue, skipping the ranks `blocked` names.
    #[inline(always)]
    fn pick_in(&mut self, writing: bool, blocked: Blocked, now: u64) -> scheduler::Pick {
        let queue = if writing {
            &mut self.writes
        } else {
            &mut self.reads
        };
        let blocked = match blocked {
            Blocked::Refreshing => self
                .refresh
                .any_pending()
                .then(|| self.refresh.pending_mask()),
            Blocked::Mask(i) => Some(&self.blocked[i][..]),
        };
        let cap = HitCap {
            cap: self.row_hit_cap,
            hits_since_act: &self.hits_since_act,
        };
        let locked = match self.same_bank.as_deref_mut() {
            None => self.bulk.locked(),
            Some(same_bank) => same_bank.locks(self.bulk.locked()),
        };
        scheduler::pick(
            self.scheduler,
            queue,
            &self.device,
            blocked,
            locked,
            &cap,
            &Owned(&self.owned),
            now,
            self.low_priority_tag != 0,
        )
    }

    /// Preemptive command drain: when a rank's REF falls due within the PCD window, its
    /// queued requests (of the active queue) go first. Returns the next cycle if one issued.
    #[inline(never)]
    fn pcd_first(&mut self, writing: bool, now: u64) -> Option<u64> {
        let mut any = false;
        for r in 0..self.blocked[0].len() {
            let due = self.refresh.due(r as u32);
            let near =
                !self.refresh.is_pending(r as u32) && now < due && now + self.pcd_window >= due;
            self.blocked[0][r] = !near;
            any |= near;
        }
        if !any {
            return None;
        }
        let (index, cmd) = self.pick_in(writing, Blocked::Mask(0), now).choice?;
        self.serve_rare(writing, index, cmd, now);
        Some(now + 1)
    }

    /// One decision when reads and writes compete in one cycle: per-rank write drains (reads
    /// of the ranks not draining, writes of the ranks draining) or `equal_priority` (every
    /// request). The two queues' picks are compared as the scheduler would over one queue:
    /// FR-FCFS prefers a column command (a row hit), then the older request; FCFS the older.
    #[inline(never)]
    fn tick_both_queues(&mut self, now: u64, mut next: u64) -> u64 {
        let per_rank = self.drain.drains_per_rank();
        let pending = self.refresh.pending_mask();
        // Blocked ranks for reads (draining or refreshing) and writes (not draining, or
        // refreshing); equal priority blocks only refreshing ranks.
        let draining = self.drain.rank_draining();
        for (r, &p) in pending.iter().enumerate() {
            let d = per_rank && draining[r];
            self.blocked[0][r] = p || d;
            self.blocked[1][r] = p || (per_rank && !d);
        }
        if per_rank && self.owners != [0, 0] {
            // An owner on the other side of its rank's drain is still served from its row.
            for writing in [false, true] {
                if self.owners[writing as usize] == 0 {
                    continue;
                }
                let queue = if writing {
                    &mut self.writes
                } else {
                    &mut self.reads
                };
                match ready_owner(
                    queue,
                    &self.device,
                    pending,
                    Some((draining, !writing)),
                    now,
                ) {
                    Ok(index) => {
                        self.serve_rare(writing, index, self.column_of(writing, index), now);
                        return now + 1;
                    }
                    Err(t) => next = next.min(t),
                }
            }
        }
        let read_pick = self.pick_in(false, Blocked::Mask(0), now);
        let write_pick = if self.writes.is_empty() || (per_rank && !self.drain.is_draining()) {
            scheduler::Pick {
                choice: None,
                next_ready: u64::MAX,
            }
        } else {
            self.pick_in(true, Blocked::Mask(1), now)
        };
        let choice = match (read_pick.choice, write_pick.choice) {
            (Some(r), Some(w)) => {
                let read_first = match self.scheduler {
                    Scheduler::Frfcfs if r.1.is_column() != w.1.is_column() => r.1.is_column(),
                    _ => older_read(self.reads.get(r.0), self.writes.get(w.0)),
                };
                Some(if read_first { (false, r) } else { (true, w) })
            }
            (Some(r), None) => Some((false, r)),
            (None, Some(w)) => Some((true, w)),
            (None, None) => None,
        };
        match choice {
            Some((writing, (index, cmd))) => {
                self.serve_rare(writing, index, cmd, now);
                if cmd.is_column() || self.refresh.any_pending() {
                    return now + 1;
                }
                next.min(self.earliest_ready_rare(false, now + 1))
                    .min(self.earliest_ready_rare(true, now + 1))
            }
            None => next.min(read_pick.next_ready).min(write_pick.next_ready),
        }
    }

    /// The earliest cycle at or after `from` at which a request of the active queue has its
    /// next command ready; stops at the first one ready by `from`. Ignores FR-FCFS hold-backs,
    /// so it may wake the controller early, never late.
    #[inline(never)]
    fn earliest_ready_rare(&mut self, writing: bool, from: u64) -> u64 {
        self.earliest_ready(writing, from)
    }

    #[inline(never)]
    fn earliest_ready(&mut self, writing: bool, from: u64) -> u64 {
        let queue = if writing {
            &mut self.writes
        } else {
            &mut self.reads
        };
        queue.sync(&self.device);
        let mut next = u64::MAX;
        let mut start = 0;
        while let Some(i) = queue.next_due(start, from, &mut next) {
            start = i + 1;
            let t = queue.look_up(i, &self.device).1;
            if t <= from {
                return from;
            }
            next = next.min(t);
        }
        next
    }

    fn column_of(&self, writing: bool, index: usize) -> Command {
        let queue = if writing { &self.writes } else { &self.reads };
        queue.get(index).column
    }

    /// After a precharge the controller did not choose (a refresh's PREA, or the bulk
    /// engine's), the owners whose rows closed lose them: their ACT was wasted, and they will
    /// need another.
    #[cold]
    fn release_closed_owners(&mut self, refresh: bool) {
        for writing in [false, true] {
            let queue = if writing {
                &mut self.writes
            } else {
                &mut self.reads
            };
            for i in 0..queue.len() {
                let r = queue.get_mut(i);
                if r.activated && self.device.open_row(&r.addr) != Some(r.addr.row) {
                    r.activated = false;
                    self.owned[r.addr.bank_index as usize] = false;
                    self.owners[writing as usize] -= 1;
                    let w = &mut self.stats.wasted_acts;
                    if refresh {
                        w.refresh += 1;
                    } else {
                        w.other += 1;
                    }
                }
            }
        }
    }

    /// `serve` for the rare paths (owners across a mode switch, both queues at once), so
    /// that the common path keeps `serve` inlined.
    #[inline(never)]
    fn serve_rare(&mut self, writing: bool, index: usize, cmd: Command, now: u64) {
        self.serve(writing, index, cmd, now);
    }

    #[inline(always)]
    fn serve(&mut self, writing: bool, index: usize, cmd: Command, now: u64) {
        let queue = if writing {
            &mut self.writes
        } else {
            &mut self.reads
        };
        let req = queue.get_mut(index);
        let changes_before = self.device.open_row_changes();
        self.device.issue(cmd, &req.addr, now);
        let bank = req.addr.bank_index as usize;
        if self.device.open_row_changes() != changes_before {
            let addr = req.addr;
            queue.bank_changed(&addr, changes_before, &self.device);
        }
        let req = queue.get_mut(index);
        if req.tag != NO_TAG && req.tag & CLIENT_TAG == 0 {
            let b = &mut self.stats.bulk_commands;
            match cmd {
                Command::Act => b.acts += 1,
                Command::Pre => b.precharges += 1,
                Command::Rd => b.reads += 1,
                Command::Wr => b.writes += 1,
                Command::RdA => (b.reads, b.precharges) = (b.reads + 1, b.precharges + 1),
                Command::WrA => (b.writes, b.precharges) = (b.writes + 1, b.precharges + 1),
                _ => {}
            }
        }
        match cmd {
            Command::Act => {
                req.activated = true;
                self.hits_since_act[bank] = 0;
                self.owned[bank] = true;
                self.owners[writing as usize] += 1;
            }
            Command::Pre => req.precharged = true,
            _ => {
                debug_assert!(cmd.is_column());
                self.hits_since_act[bank] += 1;
                let req = queue.remove(index);
                if req.activated {
                    self.owned[bank] = false;
                    self.owners[writing as usize] -= 1;
                }
                if writing {
                    self.drain
                        .write_served(req.addr.rank, req.addr.bank_index, now);
                }
                if let Some(queues) = &mut self.rank_queues {
                    queues.served(req.addr.rank, now);
                }
                let s = &mut self.stats;
                if !req.activated {
                    s.row_hits += 1;
                } else if req.precharged {
                    s.row_conflicts += 1;
                } else {
                    s.row_misses += 1;
                }
                let done = match req.kind {
                    RequestKind::Read => {
                        let done = now + self.read_data_delay;
                        s.read_latency.record(done - req.arrival);
                        done
                    }
                    RequestKind::Write => now + self.write_data_delay,
                };
                s.last_done = s.last_done.max(done);
                if req.program {
                    s.program_served += 1;
                    s.program_latency += done - req.arrival;
                }
                if req.tag != NO_TAG {
                    self.served.push((req.tag, req.kind, done));
                }
            }
        }
    }
}

/// Whether read `r` is at least as old as write `w` (reads and writes in one order): the
/// earlier arrival cycle; in one cycle, the earlier time each left its sender when both are
/// known (a write-back that left the last cache level before a read goes first, whether or
/// not a cycle edge fell between them), else the read.
#[inline]
fn older_read(r: &Request, w: &Request) -> bool {
    if r.arrival != w.arrival {
        return r.arrival < w.arrival;
    }
    r.issued == 0 || w.issued == 0 || r.issued <= w.issued
}

/// Which ranks a pick skips: those due for refresh, or a scratch mask the caller filled.
#[derive(Clone, Copy)]
enum Blocked {
    Refreshing,
    Mask(usize),
}

/// The oldest owner (a request whose row was opened for it) in `queue` whose column command
/// is ready at `now`, or the earliest cycle one could be. Owners of a rank due for refresh
/// wait for it (its precharge-all closes their rows). `only`: (per-rank drain state, the
/// state an owner's rank must be in to count).
fn ready_owner(
    queue: &mut RequestQueue,
    device: &Device,
    refresh_pending: &[bool],
    only: Option<(&[bool], bool)>,
    now: u64,
) -> Result<usize, u64> {
    let mut next = u64::MAX;
    for i in 0..queue.len() {
        let r = *queue.get(i);
        let rank = r.addr.rank as usize;
        if !r.activated
            || refresh_pending[rank]
            || only.is_some_and(|(state, want)| state[rank] != want)
        {
            continue;
        }
        let (cmd, t) = queue.look_up(i, device);
        debug_assert!(cmd.is_column(), "an owner's row is open");
        if t <= now {
            return Ok(i);
        }
        next = next.min(t);
    }
    Err(next)
}

#[cfg(test)]
mod tests;
