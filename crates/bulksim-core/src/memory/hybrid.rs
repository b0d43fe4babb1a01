//! The hybrid router's state (docs/hybrid.md; issue 17): the part of the memory router that
//! makes two devices, a DRAM and a PCM, one hybrid memory. It holds the PACT and the ART,
//! decides where each LLC miss and write-back is served (`route`, then `accepted` for what
//! the access does to the tables), keeps the functional image right while blocks move
//! (`resolve`: every block's newest bytes are at its entry's destination once its bit is
//! set, at its source before), runs the background copier (a read of the source block, then
//! a write of it to the destination, through the devices' controllers, at most
//! `hybrid.copies_in_flight` per device and after the caches' requests), and the OS's periodic
//! policy (`period`, in `hybrid/period.rs`: the PACT drained into per-virtual-page scores,
//! `policy::plan`, entries inserted). Completing a migration needs the caches and the page
//! tables, which the system owns: it takes `ready` keys and calls `finish` (system/hybrid.rs).
//!
//! Built: `cm` (every block of a migrating page copied in the background, accesses
//! redirected by the ART) and `cm_obm` (promotions copy a block when a program read finds
//! it not yet copied; `obm_complete_after` N copies the rest after N), promotions and
//! demotions of DRAM-homed pages, with `placement = "pcm_only"` (the OS allocates PCM
//! frames only; DRAM frames belong to this component's free list), and `cpm` (no ART on
//! the access path; the period's plan run one migration at a time, the page's lines pinned
//! in the last cache level by the system). `cm_obm_pd` flips a
//! partly promoted page's entry to demote it (`Art::flip`). Not built: energy.

use super::MemoryDevice;
use crate::error::{Error, Result};
use crate::hybrid::art::ArtStats;
use crate::hybrid::art::{Art, Direction};
use crate::hybrid::config::{HybridConfig, PactOrigins, Placement};
use crate::hybrid::pact::{Pact, PactStats};
use crate::hybrid::policy::{DramFrames, Scores};
use crate::hybrid::redirect::{access_redirect, redirect, Access, Redirect};
use crate::hybrid::{Device, Frame, BLOCKS_PER_PAGE, BLOCK_BYTES, PAGE_BYTES};
use crate::os::external::ExternalFrames;
use crate::os::{Os, Pid};
use crate::port::{Origin, Request, RequestKind};
use crate::stat_struct::stat_struct;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

mod period;

/// Tag bit of the copier's requests to the controllers (the caches' request ids stay far
/// below it; the controllers' own client bit is `1 << 31`).
pub const HYBRID_TAG: u32 = 1 << 30;

stat_struct! {
    /// The hybrid memory's counters (`hybrid` in the full-system stats).
    pub struct HybridStats {
        pub mechanism: String = keep("name", "hybrid.mechanism"),
        pub periods: u64 = sum("periods", "times the OS drained the PACT and ran the policy"),
        pub promotions_started: u64 = sum("pages", "promotions started (ART entries inserted, PCM -> DRAM)"),
        pub demotions_started: u64 = sum("pages", "demotions started (DRAM -> the page's PCM frame)"),
        pub promotions_completed: u64 = sum("pages", "promotions completed: the page remapped to its DRAM frame"),
        pub demotions_completed: u64 = sum("pages", "demotions completed: the page remapped to its PCM frame, the DRAM frame freed"),
        pub promotions_skipped: u64 = sum("pages", "promotions the policy skipped because the key's ART set was full"),
        pub partial_completions: u64 = sum("pages", "cm_obm: partly promoted pages the policy chose for demotion, whose remaining blocks were then copied in the background (the page is demoted whole by a later period)"),
        pub art_full_completions: u64 = sum("pages", "cm_obm, cm_obm_pd with hybrid.art_full_completes: partly promoted pages completed (their remaining blocks copied in the background) because the ART refused a migration a way in their set"),
        pub blocks_copied: u64 = sum("blocks", "migration copy writes issued: background copies and the copy writes of promoting reads that found their bit clear"),
        pub blocks_copied_on_demand: u64 = sum("blocks", "of blocks_copied, the copy writes of program reads of a promoting block not yet copied"),
        pub write_backs_behind_start: u64 = sum("blocks", "write-backs that left the LLC before their page's migration started and reached the device after: served at the destination as ACCESSREDIRECT says, their bytes moved there from the source in the image"),
        pub copies_dropped: u64 = sum("blocks", "background copies dropped because a write-back (or a program read's copy) set the block's bit after the copy was queued"),
        pub pcm_writes_elided: u64 = sum("blocks", "hybrid.elide_clean: demotion copies not made because the block was not written since its page was promoted (its PCM home still holds it)"),
        pub dram_accesses: u64 = sum("requests", "program LLC misses and write-backs served by DRAM"),
        pub pcm_accesses: u64 = sum("requests", "program LLC misses and write-backs served by PCM"),
        pub copy_and_init_accesses: u64 = sum("requests", "LLC misses and write-backs of copies, zeroing and bulk coherence (memcpy, copy-on-write, first-touch zeroing; not migration) the devices accepted: counted in the PACT under hybrid.pact_origins = all, never in dram_accesses or pcm_accesses"),
        pub dram_reads: u64 = sum("requests", "program LLC misses served by DRAM"),
        pub pcm_reads: u64 = sum("requests", "program LLC misses served by PCM"),
        pub dram_fraction: f64 = derived("fraction", "dram_accesses / (dram_accesses + pcm_accesses)"),
        pub dram_read_fraction: f64 = derived("fraction", "dram_reads / (dram_reads + pcm_reads)"),
        pub pages_flushed_lines: u64 = sum("lines", "cached lines of completed migrations' old frames invalidated (remap_lines = flush), and CPM's held write-backs sent to the new frame"),
        pub pages_retagged_lines: u64 = sum("lines", "cached lines of completed migrations' old frames renamed to the new frame (remap_lines = retag), and CPM's held write-backs sent to it"),
        pub os_time_ns: u64 = sum("ns", "OS time taken from the cores' front ends: hybrid.os_period_ns per period, hybrid.os_remap_ns per remap"),
        pub cpm_handoffs: u64 = sum("migrations", "cpm: completed migrations whose hand-off (flush, remap, the next set-up) ran before the next migration could start"),
        pub cpm_flushed_lines: u64 = sum("lines", "cpm: dirty pinned LLC lines (and held write-backs) written to the new frame one after another at completions"),
        pub cpm_handoff_ns: u64 = sum("ns", "cpm: serial hand-off time: hybrid.cpm_setup_ns per migration set up, the flush's lines times hybrid.cpm_flush_{dram,pcm}_line_ns, hybrid.remap_shootdown_ns per remap"),
        pub remap_stall_ns: u64 = sum("ns", "time every core's front end was stalled by remaps, every mechanism's (hybrid.remap_shootdown_ns per remap, once, not per core; a partial demotion's flip remaps nothing)"),
        pub partial_demotions: u64 = sum("pages", "cm_obm_pd: partly promoted pages demoted by flipping their ART entry (art.flips; also counted in demotions_started)"),
        pub pcm_served: u64 = sum("requests", "program LLC misses and write-backs the PCM's controllers served (a forwarded read or an absorbed write on arrival; a write merged into a queued one is served with it, counted once)"),
        pub pcm_service_ns: f64 = sum("ns", "their latencies from arrival at the PCM's controller to served (the last data beat), summed"),
        pub pcm_avg_ns: f64 = derived("ns", "pcm_service_ns / pcm_served: mean PCM service time of program requests (issue 17 item 11)"),
        pub dram_served: u64 = sum("requests", "program LLC misses and write-backs the DRAM's controllers served (as pcm_served)"),
        pub dram_service_ns: f64 = sum("ns", "their latencies from arrival at the DRAM's controller to served, summed"),
        pub dram_avg_ns: f64 = derived("ns", "dram_service_ns / dram_served: mean DRAM service time of program requests"),
        pub pcm_accesses_all: u64 = sum("requests", "every request the PCM's controllers received: program LLC misses and write-backs, migration copy reads and writes, lines flushed by completing migrations (the paper's PCM accesses)"),
        pub pact: PactStats = nested(),
        pub art: ArtStats = nested(),
    }
}

impl HybridStats {
    /// Computes the derived fields (fractions, mean service times) from the counters.
    pub fn derive(&mut self) {
        let frac = |a: u64, b: u64| {
            if a + b == 0 {
                0.0
            } else {
                a as f64 / (a + b) as f64
            }
        };
        let mean = |ns: f64, n: u64| if n == 0 { 0.0 } else { ns / n as f64 };
        self.dram_fraction = frac(self.dram_accesses, self.pcm_accesses);
        self.dram_read_fraction = frac(self.dram_reads, self.pcm_reads);
        self.pcm_avg_ns = mean(self.pcm_service_ns, self.pcm_served);
        self.dram_avg_ns = mean(self.dram_service_ns, self.dram_served);
    }
}

/// One step of a block copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Read,
    Write,
}

/// A copier request: block `block` of the migration keyed `key`.
#[derive(Clone, Copy, Debug)]
struct Copy {
    key: u64,
    block: u32,
    step: Step,
    /// A program read's copy write (its bit is already set): timing only, never dropped.
    demand: bool,
    /// A demand write's frame (the destination when it was queued: a flip may since have
    /// made it the source); background copies use the migration's own.
    to: Option<u64>,
}

/// A page migrating: its ART entry's key and whose page it is.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    pub key: u64,
    pub src: u64,
    pub dest: u64,
    pub direction: Direction,
    pub pid: Pid,
    pub vpn: u64,
    /// Copier requests queued or in flight for it.
    outstanding: u32,
    /// Blocks copied on demand so far (`cm_obm`: `obm_complete_after`).
    demand_copies: u32,
    /// Its remaining blocks are queued for the background copier (always under `cm` and
    /// for demotions; under `cm_obm` once `obm_complete_after` is reached, the policy
    /// chose the partly promoted page for demotion, or its ART set was needed).
    background: bool,
    /// The period (`stats.periods`) in which it started.
    started_period: u64,
    /// `cm_obm_pd`: a promotion turned into a demotion of the same page back to its PCM
    /// home (`Art::flip`): the page stays mapped at its home, nothing is remapped.
    pub flipped: bool,
}

/// A CPM migration the period's plan listed, started when the one before it ends.
#[derive(Clone, Copy, Debug)]
struct Planned {
    promote: bool,
    /// The policy's virtual page id.
    vp: u64,
    /// The physical page it was planned from.
    key: u64,
}

pub struct HybridMemory {
    pub cfg: HybridConfig,
    /// Copy requests one device's queues hold at most (`hybrid.copies_in_flight`, resolved
    /// per mechanism): a bound, so that a period starting many migrations does not fill
    /// every queue. They are offered after the caches' requests each device cycle; with a
    /// `low` copy priority the controllers also serve them only when no program request
    /// can be (`controller::Request::low`).
    copies_in_flight: usize,
    /// `cpm`: the next migration may not start before this time (fs): the previous one's
    /// hand-off (flush, remap) and its own set-up must be over first.
    pub cpm_not_before_fs: u64,
    /// `cpm`: the next migration's set-up has been scheduled (it ends by
    /// `cpm_not_before_fs`); a migration starts only after one, and its time is counted
    /// when it does.
    cpm_set_up: bool,
    /// `cpm`: no ART on the access path; one migration at a time from `cpm_list`, the
    /// page's lines pinned in the last cache level meanwhile (the system pins them).
    pub cpm: bool,
    cpm_list: VecDeque<Planned>,
    /// Device indices of the DRAM and the PCM.
    pub dram: usize,
    pub pcm: usize,
    /// DRAM pages: [base, base + count).
    dram_base: u64,
    dram_pages_total: u64,
    pub pact: Pact,
    pub art: Art,
    scores: Scores,
    /// ART lookup latency added to every response (fs).
    pub art_fs: u64,
    pub period_fs: u64,
    pub next_period_fs: u64,
    migrations: BTreeMap<u64, Migration>,
    /// Per device, copier requests waiting for its queues.
    queued: Vec<VecDeque<Copy>>,
    in_flight: BTreeMap<u32, Copy>,
    in_flight_per_device: Vec<usize>,
    next_tag: u32,
    /// Keys of migrations whose blocks are all at the destination and whose copies are
    /// done: the system completes them (the page's accesses wait meanwhile).
    pub ready: BTreeSet<u64>,
    /// DRAM pages holding a page (promoted, or placed there first): its owner and virtual
    /// page, and the PCM frame it returns to (None for a page placed in DRAM first until
    /// its first demotion takes one).
    in_dram: BTreeMap<u64, (Pid, u64, Option<u64>)>,
    counts: Vec<(u64, u32)>,
    /// `elide_clean`: per DRAM page, the blocks written since its promotion started (bit b:
    /// block b differs from the PCM home).
    written: BTreeMap<u64, u64>,
    /// Migrations started since the system last took them, (src, dest, direction): the OS
    /// holds a promotion's PCM source until it ends, and stale cached lines of the
    /// destination are dropped.
    pub started: Vec<(u64, u64, Direction)>,
    pub stats: HybridStats,
}

/// Packs a process's virtual page into the policy's page id (pid above bit 40).
fn vpage(pid: Pid, vpn: u64) -> u64 {
    (pid as u64) << 40 | vpn
}

fn unpack(vp: u64) -> (Pid, u64) {
    ((vp >> 40) as Pid, vp & ((1 << 40) - 1))
}

impl HybridMemory {
    /// The hybrid memory over `devices` (validated: one DRAM, one PCM; a device is PCM when
    /// its part's name starts with `PCM`).
    pub fn new(cfg: &HybridConfig, devices: &[MemoryDevice]) -> Result<Self> {
        let pcm: Vec<usize> = (0..devices.len())
            .filter(|&i| devices[i].channels.spec().name.starts_with("PCM"))
            .collect();
        if devices.len() != 2 || pcm.len() != 1 {
            return Err(Error::Config(
                "memory.device: [hybrid] needs exactly two devices, one DRAM and one PCM".into(),
            ));
        }
        let pcm = pcm[0];
        let dram = 1 - pcm;
        let d = &devices[dram];
        let dram_base = d.base / PAGE_BYTES;
        let dram_pages_total = d.size / PAGE_BYTES;
        let cpm = cfg.mechanism == crate::hybrid::config::Mechanism::Cpm;
        let art_fs = if cpm {
            0
        } else {
            (crate::hybrid::ART_LOOKUP_NS * 1e6).round() as u64
        };
        let period_fs = cfg.period_ns.saturating_mul(1_000_000);
        Ok(HybridMemory {
            cfg: cfg.clone(),
            copies_in_flight: cfg.copies_in_flight_for(cfg.mechanism) as usize,
            cpm_not_before_fs: 0,
            cpm_set_up: false,
            cpm,
            cpm_list: VecDeque::new(),
            dram,
            pcm,
            dram_base,
            dram_pages_total,
            pact: Pact::new(cfg.pact_entries, cfg.pact_ways, cfg.pact_count_bits)?,
            art: Art::new(cfg.art_entries, cfg.art_ways)?,
            scores: Scores::new(cfg.decay),
            art_fs,
            period_fs,
            next_period_fs: period_fs,
            migrations: BTreeMap::new(),
            queued: vec![VecDeque::new(); devices.len()],
            in_flight: BTreeMap::new(),
            in_flight_per_device: vec![0; devices.len()],
            next_tag: 0,
            ready: BTreeSet::new(),
            in_dram: BTreeMap::new(),
            counts: Vec::new(),
            written: BTreeMap::new(),
            started: Vec::new(),
            stats: HybridStats {
                mechanism: cfg.mechanism.name().into(),
                ..Default::default()
            },
        })
    }

    /// The DRAM frames' free list, which the OS keeps (new pages take from it first under
    /// `placement = "dram_first"`).
    fn dram_pool(os: &mut Os) -> &mut ExternalFrames {
        os.external
            .as_mut()
            .expect("the hybrid memory's DRAM frames")
    }

    fn free_dram_count(os: &Os) -> u64 {
        os.external.as_ref().map_or(0, |x| x.free_count())
    }

    /// Pages the OS placed in DRAM first since the last call become DRAM pages here (with
    /// no PCM frame yet).
    pub fn note_placed(&mut self, os: &mut Os) {
        for (frame, pid, vpn) in Self::dram_pool(os).take_placed() {
            self.in_dram.insert(frame, (pid, vpn, None));
        }
    }

    /// `dram_first`: new pages take DRAM frames while more than this many are free (the
    /// policy's watermark, kept for promotions: else new pages took the frames demotions
    /// freed for hot pages, and no promotion found one); None under `pcm_only`.
    pub fn placement_reserve(&self) -> Option<u64> {
        (self.cfg.placement == Placement::DramFirst).then(|| {
            DramFrames {
                free: 0,
                vacating: 0,
                total: self.dram_pages_total,
            }
            .watermark(self.cfg.free_min)
        })
    }

    /// The DRAM frames: the OS's allocator never hands them out (they are the hybrid
    /// memory's, placed by `hybrid.placement`).
    pub fn dram_frames(&self) -> std::ops::Range<u64> {
        self.dram_base..self.dram_base + self.dram_pages_total
    }

    fn frame(&self, page: u64) -> Frame {
        if self.dram_frames().contains(&page) {
            Frame::dram(page)
        } else {
            Frame::pcm(page)
        }
    }

    /// The device index (`dram` or `pcm`) holding physical page `page`.
    pub fn dram_or_pcm(&self, page: u64) -> usize {
        self.device_index(self.frame(page))
    }

    fn device_index(&self, f: Frame) -> usize {
        match f.device {
            Device::Dram => self.dram,
            Device::Pcm => self.pcm,
        }
    }

    /// Where an access of `kind` to physical `addr` is served now (no table changes). A
    /// migration's own write-back (a flushed line, addressed to its new frame) is not
    /// redirected.
    pub fn route(&self, addr: u64, kind: RequestKind, origin: Origin) -> u64 {
        if origin == Origin::Migration || self.cpm {
            return addr;
        }
        let page = addr / PAGE_BYTES;
        let Some(id) = self.art.find(page) else {
            return addr;
        };
        let access = match kind {
            RequestKind::Writeback => Access::WriteBack,
            _ => Access::Read,
        };
        let block = ((addr % PAGE_BYTES) / BLOCK_BYTES) as u32;
        let at = access_redirect(Some(self.art.entry(id)), self.frame(page), access, block);
        at.served_at().page * PAGE_BYTES + addr % PAGE_BYTES
    }

    /// A device accepted `req` (from the last cache level) at `served` (`route`'s answer):
    /// the PACT counts a program request, the ART is looked up and its bit set as
    /// ACCESSREDIRECT says. Returns the block copy the image must make now, (src, dest), when
    /// a promoting read found its bit clear (its copy write is queued for the timing), or a
    /// write-back did (its bytes went to the source before the migration started).
    pub fn accepted(&mut self, req: &Request, served: u64) -> Option<(u64, u64)> {
        if req.origin == Origin::Migration {
            return None;
        }
        let read = req.kind != RequestKind::Writeback;
        self.count_accepted(req, served, read);
        if !read {
            self.note_written(served);
        }
        if self.cpm {
            return None;
        }
        self.redirect_accepted(req, read)
    }

    /// `accepted`'s counts: the PACT's (program requests; copies and zeroing as
    /// `pact_origins` says) and, for a program request, its device's accesses and reads.
    fn count_accepted(&mut self, req: &Request, served: u64, read: bool) {
        let page = req.addr / PAGE_BYTES;
        // `count_copies` concerns the migration copier alone (whose requests do not come
        // here); copies and zeroing count as `pact_origins` says.
        if req.origin == Origin::Program {
            self.pact.record(page);
        } else {
            self.stats.copy_and_init_accesses += 1;
            if self.cfg.pact_origins == PactOrigins::All {
                self.pact.record(page);
            }
        }
        if req.origin == Origin::Program {
            let dram = self.dram_frames().contains(&(served / PAGE_BYTES));
            let s = &mut self.stats;
            match (dram, read) {
                (true, true) => {
                    s.dram_accesses += 1;
                    s.dram_reads += 1
                }
                (true, false) => s.dram_accesses += 1,
                (false, true) => {
                    s.pcm_accesses += 1;
                    s.pcm_reads += 1
                }
                (false, false) => s.pcm_accesses += 1,
            }
        }
    }

    /// `accepted`'s ACCESSREDIRECT under the CM variants: the bit it sets, the demand copy
    /// a promoting read queues, and the block copy the image must make now (see `accepted`).
    fn redirect_accepted(&mut self, req: &Request, read: bool) -> Option<(u64, u64)> {
        let page = req.addr / PAGE_BYTES;
        let block = ((req.addr % PAGE_BYTES) / BLOCK_BYTES) as u32;
        let kind = if read {
            Access::Read
        } else {
            Access::WriteBack
        };
        let home = self.frame(page);
        // A write-back that finds its block's bit clear was written into the image before
        // the page's entry existed (`resolve_write` sets the bit of every later one, and
        // a flip leaves clear the bits of blocks whose newest bytes are at the entry's
        // source), so its bytes are at the source: the bit it sets must bring them along.
        let stale_write = (!read && !self.migrations.is_empty())
            .then(|| self.art.find(page))
            .flatten()
            .map(|id| *self.art.entry(id))
            .filter(|e| !e.is_copied(block));
        match redirect(&mut self.art, home, kind, block) {
            Redirect::ReadAndCopy { read, copy_to } => {
                let m = self
                    .migrations
                    .get_mut(&page)
                    .expect("a migration per entry");
                m.outstanding += 1;
                m.demand_copies += 1;
                let complete_rest = !m.background
                    && self.cfg.obm_complete_after > 0
                    && m.demand_copies >= self.cfg.obm_complete_after;
                let dev = self.device_index(copy_to);
                self.queued[dev].push_back(Copy {
                    key: page,
                    block,
                    step: Step::Write,
                    demand: true,
                    to: Some(copy_to.page),
                });
                if complete_rest {
                    self.copy_rest(page);
                }
                let off = block as u64 * BLOCK_BYTES;
                Some((
                    read.page * PAGE_BYTES + off,
                    copy_to.page * PAGE_BYTES + off,
                ))
            }
            _ => stale_write.map(|e| {
                self.stats.write_backs_behind_start += 1;
                let off = block as u64 * BLOCK_BYTES;
                (e.src * PAGE_BYTES + off, e.dest * PAGE_BYTES + off)
            }),
        }
    }

    /// Where the image holds the newest bytes of the block at physical `addr` (a functional
    /// read): the entry's destination once the block's bit is set, else its source.
    #[inline]
    pub fn resolve_read(&self, addr: u64) -> u64 {
        if self.migrations.is_empty() {
            return addr;
        }
        let page = addr / PAGE_BYTES;
        let Some(id) = self.art.find(page) else {
            return addr;
        };
        let block = ((addr % PAGE_BYTES) / BLOCK_BYTES) as u32;
        let e = self.art.entry(id);
        let frame = if e.is_copied(block) { e.dest } else { e.src };
        frame * PAGE_BYTES + addr % PAGE_BYTES
    }

    /// Where a functional write of the block at physical `addr` goes (a write-back leaving
    /// the last cache level): a migrating page's destination. A block not yet there gets
    /// its bit set, and the block copy the image must make first, (src, dest), is returned
    /// so that a partial write leaves the rest of the block right.
    #[inline]
    pub fn resolve_write(&mut self, addr: u64) -> (u64, Option<(u64, u64)>) {
        if self.migrations.is_empty() {
            self.note_written(addr);
            return (addr, None);
        }
        let page = addr / PAGE_BYTES;
        let Some(id) = self.art.find(page) else {
            self.note_written(addr);
            return (addr, None);
        };
        let block = ((addr % PAGE_BYTES) / BLOCK_BYTES) as u32;
        let e = *self.art.entry(id);
        let dest = e.dest * PAGE_BYTES + addr % PAGE_BYTES;
        self.note_written(dest);
        if e.is_copied(block) {
            return (dest, None);
        }
        self.art.set_bit(id, block);
        self.check_ready(page);
        let b = block as u64 * BLOCK_BYTES;
        (
            dest,
            Some((e.src * PAGE_BYTES + b, e.dest * PAGE_BYTES + b)),
        )
    }

    /// `elide_clean`: the block at physical `addr` was written; in a DRAM page it now
    /// differs from the page's PCM home.
    #[inline]
    fn note_written(&mut self, addr: u64) {
        if !self.cfg.elide_clean {
            return;
        }
        let page = addr / PAGE_BYTES;
        if self.dram_frames().contains(&page) {
            let block = (addr % PAGE_BYTES) / BLOCK_BYTES;
            *self.written.entry(page).or_default() |= 1 << block;
        }
    }

    /// `elide_clean`: marks copied, without a copy, the blocks of migration `key`'s entry
    /// not written in DRAM page `dram_page` since its promotion (its PCM home holds them).
    fn elide_unwritten(&mut self, key: u64, dram_page: u64) {
        let written = self.written.get(&dram_page).copied().unwrap_or(0);
        let id = self.art.find(key).expect("an entry per migration");
        for b in 0..BLOCKS_PER_PAGE {
            if written >> b & 1 == 0 && !self.art.entry(id).is_copied(b) {
                self.art.set_bit(id, b);
                self.stats.pcm_writes_elided += 1;
            }
        }
    }

    /// Whether physical page `page` is completing (its accesses wait).
    pub fn completing(&self, page: u64) -> bool {
        !self.ready.is_empty() && self.ready.contains(&page)
    }

    /// Whether the copier has work for any device.
    pub fn is_idle(&self) -> bool {
        self.in_flight.is_empty() && self.queued.iter().all(VecDeque::is_empty)
    }

    /// Whether device `device`'s waiting copier requests may enter its queues at its next
    /// cycle: some wait, and fewer than `copies_in_flight` are in its queues. At the limit
    /// none can until the device serves one of its copies, which happens in its own step
    /// (`served`), so stepping it every cycle until then would only look again.
    pub fn may_offer_copies(&self, device: usize) -> bool {
        !self.queued[device].is_empty() && self.in_flight_per_device[device] < self.copies_in_flight
    }

    /// Offers device `device`'s waiting copier requests at its cycle `cycle`, in order,
    /// until one is refused or `copies_in_flight` are in its queues. Each block copy the
    /// image must make as a copy write issues is passed to `copy`.
    pub fn offer_copies(
        &mut self,
        device: usize,
        d: &mut MemoryDevice,
        cycle: u64,
        mut copy: impl FnMut(u64, u64),
    ) {
        while self.in_flight_per_device[device] < self.copies_in_flight {
            let Some(&c) = self.queued[device].front() else {
                break;
            };
            let m = self.migrations[&c.key];
            let id = self.art.find(c.key).expect("an entry per migration");
            let copied = self.art.entry(id).is_copied(c.block);
            if !c.demand && copied {
                // A write-back (or a program read's copy) got there first: the destination
                // already holds the newest bytes.
                self.queued[device].pop_front();
                self.stats.copies_dropped += 1;
                self.copy_done(c.key);
                continue;
            }
            let frame = match c.step {
                Step::Read => m.src,
                Step::Write => c.to.unwrap_or(m.dest),
            };
            let addr = frame * PAGE_BYTES + c.block as u64 * BLOCK_BYTES;
            let kind = match c.step {
                Step::Read => crate::request::RequestKind::Read,
                Step::Write => crate::request::RequestKind::Write,
            };
            let tag = HYBRID_TAG | self.next_tag;
            if !d.channels.try_enqueue_client(
                kind,
                addr - d.base,
                cycle,
                tag,
                false,
                cycle * d.period_fs,
            ) {
                break;
            }
            self.next_tag = (self.next_tag + 1) % HYBRID_TAG;
            self.queued[device].pop_front();
            if self.cfg.count_copies {
                // The copier's requests reach the devices here, not through `accepted`.
                self.pact.record(frame);
            }
            self.in_flight.insert(tag, c);
            self.in_flight_per_device[device] += 1;
            if c.step == Step::Write {
                self.stats.blocks_copied += 1;
                if c.demand {
                    self.stats.blocks_copied_on_demand += 1;
                } else {
                    // The bit is set as the write issues; the bytes move in the image now
                    // (the source block cannot have changed since its read: write-backs
                    // to a migrating page go to the destination).
                    self.art.set_bit(id, c.block);
                    let b = c.block as u64 * BLOCK_BYTES;
                    copy(m.src * PAGE_BYTES + b, m.dest * PAGE_BYTES + b);
                }
            }
        }
    }

    /// A copier request of device `device` was served; returns the device whose queue got
    /// a follow-up (the copy write after a read), if any.
    pub fn served(&mut self, device: usize, tag: u32) -> Option<usize> {
        let c = self
            .in_flight
            .remove(&tag)
            .expect("a copier request in flight");
        self.in_flight_per_device[device] -= 1;
        match c.step {
            Step::Read => {
                let m = self.migrations[&c.key];
                let dev = self.device_index(self.frame(m.dest));
                self.queued[dev].push_back(Copy {
                    step: Step::Write,
                    ..c
                });
                Some(dev)
            }
            Step::Write => {
                self.copy_done(c.key);
                None
            }
        }
    }

    fn copy_done(&mut self, key: u64) {
        let m = self.migrations.get_mut(&key).expect("a migration");
        m.outstanding -= 1;
        self.check_ready(key);
    }

    fn check_ready(&mut self, key: u64) {
        let m = &self.migrations[&key];
        if m.outstanding == 0
            && self
                .art
                .find(key)
                .is_some_and(|id| self.art.is_complete(id))
        {
            self.ready.insert(key);
        }
    }

    /// The PCM frame DRAM page `key` is demoted to: the one it was promoted from, or for a
    /// page placed in DRAM first a frame from the OS's allocator, kept for the page from
    /// now on. Err when the PCM has no free frame.
    fn home_of(&mut self, key: u64, os: &mut Os) -> Result<u64> {
        let (pid, vpn, home) = self.in_dram[&key];
        if let Some(home) = home {
            return Ok(home);
        }
        let frame = os.alloc_kept_frame(pid, pid, vpn).map_err(|e| {
            Error::Config(format!(
                "hybrid: demoting process {pid}'s page {:#x} from DRAM: {e}",
                vpn * PAGE_BYTES
            ))
        })? as u64;
        self.in_dram.insert(key, (pid, vpn, Some(frame)));
        Ok(frame)
    }

    /// `cpm`: the next migration's set-up (`cpm_setup_ns`) runs from `from_fs`; it may
    /// start when that ends.
    fn set_up_next_cpm(&mut self, from_fs: u64) {
        self.cpm_not_before_fs = from_fs.saturating_add(self.cfg.cpm_setup_ns * 1_000_000);
        self.cpm_set_up = true;
    }

    /// `cpm`: the hand-off after a completion at `now` whose flush wrote `flushed` lines to
    /// a frame of `dest_device`, one after another: the flush, then the remap (its page-table
    /// update and TLB shootdown), then the next migration's set-up; the next migration may
    /// start only after all three.
    pub fn cpm_hand_off(&mut self, now: u64, flushed: u64, dest_device: usize) {
        let per_line = if dest_device == self.dram {
            self.cfg.cpm_flush_dram_line_ns
        } else {
            self.cfg.cpm_flush_pcm_line_ns
        };
        let flush_ns = flushed.saturating_mul(per_line);
        let ns = flush_ns.saturating_add(self.cfg.remap_shootdown_ns);
        self.stats.cpm_handoffs += 1;
        self.stats.cpm_flushed_lines += flushed;
        self.stats.cpm_handoff_ns += ns;
        let end = now.saturating_add(ns.saturating_mul(1_000_000));
        if self.cpm_list.is_empty() {
            // Nothing to set up yet: a later period sets its first migration up then.
            self.cpm_not_before_fs = end;
        } else {
            self.set_up_next_cpm(end);
        }
    }

    /// `cpm`: a migration started on the set-up scheduled for it, whose time is counted now
    /// (a set-up whose list went stale meanwhile serves the next period's first migration).
    fn cpm_started(&mut self) {
        self.cpm_set_up = false;
        self.stats.cpm_handoff_ns += self.cfg.cpm_setup_ns;
    }

    /// `cpm`: whether a planned migration waits for the hand-off or set-up to end (then
    /// `next_event_fs` includes its time).
    fn cpm_waiting(&self) -> bool {
        self.cpm && self.migrations.is_empty() && !self.cpm_list.is_empty()
    }

    /// `cpm`: whether the next planned migration may start at `now`.
    pub fn cpm_due(&self, now: u64) -> bool {
        self.cpm_waiting() && self.cpm_set_up && now >= self.cpm_not_before_fs
    }

    /// The next time the OS side has work without any access: the next period, or under
    /// `cpm` the end of a hand-off with a migration waiting.
    pub fn next_event_fs(&self) -> u64 {
        if self.cpm_waiting() {
            self.next_period_fs.min(self.cpm_not_before_fs)
        } else {
            self.next_period_fs
        }
    }

    /// `cpm`: with no migration running and the hand-off over at `now`, starts the first
    /// migration of the period's list that still applies (its page still where it was
    /// planned from, a free DRAM frame for a promotion). Returns the device whose queue
    /// got its copies.
    pub fn start_next_cpm(&mut self, os: &mut Os, now: u64) -> Result<Option<usize>> {
        if !self.cpm
            || !self.migrations.is_empty()
            || !self.cpm_set_up
            || now < self.cpm_not_before_fs
        {
            return Ok(None);
        }
        while let Some(p) = self.cpm_list.pop_front() {
            let (pid, vpn) = unpack(p.vp);
            if os.lookup(pid, vpn * PAGE_BYTES) != Some(p.key * PAGE_BYTES) {
                continue;
            }
            if p.promote {
                let Some(dest) = Self::dram_pool(os).peek() else {
                    continue;
                };
                if os.frame_table().refcount(p.key as u32) != 1 {
                    continue;
                }
                if self.start(p.key, dest, Direction::Promoting, pid, vpn, false) {
                    os.take_external();
                    self.stats.promotions_started += 1;
                    self.cpm_started();
                    return Ok(Some(self.pcm));
                }
            } else {
                let Some(&(_, _, had_home)) = self.in_dram.get(&p.key) else {
                    continue;
                };
                let home = self.home_of(p.key, os)?;
                if self.start_demotion(p.key, home, had_home.is_some(), pid, vpn) {
                    self.stats.demotions_started += 1;
                    self.cpm_started();
                    return Ok(Some(self.dram));
                }
            }
        }
        Ok(None)
    }

    /// Queues the background copy of every block of migration `key` not yet at its
    /// destination.
    fn copy_rest(&mut self, key: u64) {
        let id = self.art.find(key).expect("an entry per migration");
        let e = *self.art.entry(id);
        let dev = self.device_index(self.frame(e.src));
        let m = self.migrations.get_mut(&key).expect("a migration");
        if m.background {
            return;
        }
        m.background = true;
        for block in (0..BLOCKS_PER_PAGE).filter(|&b| !e.is_copied(b)) {
            m.outstanding += 1;
            self.queued[dev].push_back(Copy {
                key,
                block,
                step: Step::Read,
                demand: false,
                to: None,
            });
        }
        self.check_ready(key);
    }

    /// Starts demoting DRAM page `key` to PCM frame `home`; with `elide_clean` and a home
    /// the page came from (`had_home`), only the blocks written since are copied.
    fn start_demotion(&mut self, key: u64, home: u64, had_home: bool, pid: Pid, vpn: u64) -> bool {
        let elide = self.cfg.elide_clean && had_home;
        self.start(key, home, Direction::Demoting, pid, vpn, elide)
    }

    /// Inserts the entry and queues a read of every block (`cm`, demotions; `cm_obm`
    /// promotions copy on access only); false if the ART refused.
    fn start(
        &mut self,
        key: u64,
        dest: u64,
        direction: Direction,
        pid: Pid,
        vpn: u64,
        elide: bool,
    ) -> bool {
        // The source is the page the caches address: the key (the home page).
        let src = key;
        if self.art.insert(key, src, dest, direction).is_err() {
            return false;
        }
        if elide {
            self.elide_unwritten(key, src);
        }
        if direction == Direction::Promoting {
            // Every block of the destination will be the PCM page's until written.
            self.written.remove(&dest);
        }
        self.started.push((src, dest, direction));
        self.migrations.insert(
            key,
            Migration {
                key,
                src,
                dest,
                direction,
                pid,
                vpn,
                outstanding: 0,
                demand_copies: 0,
                background: false,
                started_period: self.stats.periods,
                flipped: false,
            },
        );
        if direction == Direction::Demoting || !self.cfg.mechanism.on_demand() {
            self.copy_rest(key);
        }
        true
    }

    /// The migration keyed `key`, while it runs.
    pub fn migration(&self, key: u64) -> Option<&Migration> {
        self.migrations.get(&key)
    }

    /// Completes the ready migration keyed `key` once the system has moved the page's
    /// cached lines and remapped it (`remapped`: false when the page was no longer mapped
    /// there, e.g. its process exited): the entry is freed, a demotion's DRAM frame is
    /// free again, a promotion's PCM frame stays the page's.
    pub fn finish(&mut self, key: u64, remapped: bool, os: &mut Os) -> Migration {
        self.ready.remove(&key);
        let m = self.migrations.remove(&key).expect("a ready migration");
        let id = self.art.find(key).expect("its entry");
        self.art.remove(id);
        match m.direction {
            Direction::Promoting => {
                if remapped {
                    self.in_dram.insert(m.dest, (m.pid, m.vpn, Some(m.src)));
                    self.stats.promotions_completed += 1;
                } else {
                    self.written.remove(&m.dest);
                    Self::dram_pool(os).give_back(m.dest);
                }
            }
            Direction::Demoting => {
                self.in_dram.remove(&m.src);
                self.written.remove(&m.src);
                Self::dram_pool(os).give_back(m.src);
                self.stats.demotions_completed += 1;
            }
        }
        m
    }

    /// A process released DRAM page `page` (it exited): the frame is free again, and the
    /// PCM frame kept for the page is returned.
    /// A frame a migration still copies from is freed when the migration completes.
    pub fn release_dram(&mut self, page: u64, os: &mut Os) -> Option<u64> {
        if self.migrations.contains_key(&page) {
            return None;
        }
        let (_, _, home) = self.in_dram.remove(&page)?;
        self.written.remove(&page);
        Self::dram_pool(os).give_back(page);
        home
    }

    /// DRAM frames as (free, in use, total), for balance checks: in use are those holding
    /// a promoted page and those a migration in flight copies to or from, each counted once.
    pub fn dram_frame_balance(&self, os: &Os) -> (u64, u64, u64) {
        let mut used: BTreeSet<u64> = self.in_dram.keys().copied().collect();
        for m in self.migrations.values() {
            used.insert(match m.direction {
                Direction::Promoting => m.dest,
                Direction::Demoting => m.src,
            });
        }
        (
            Self::free_dram_count(os),
            used.len() as u64,
            self.dram_pages_total,
        )
    }

    /// Migrations started and not yet completed (each holds one ART entry).
    pub fn migrations_in_flight(&self) -> usize {
        self.migrations.len()
    }

    /// The stats with the fractions computed and the tables' counters.
    pub fn stats(&self) -> HybridStats {
        let mut s = self.stats.clone();
        s.derive();
        s.pact = self.pact.stats.clone();
        // CPM keeps its one migration's copied blocks in the same table, but has no ART on
        // the access path: its counters are not reported.
        if !self.cpm {
            s.art = self.art.stats.clone();
        }
        s
    }
}
