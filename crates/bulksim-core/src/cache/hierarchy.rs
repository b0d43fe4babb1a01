//! The chain of cache levels from the core down to the memory below them (`MemoryBelow`: the
//! router's devices or the fixed-latency memory), joined by the request port. The first
//! level serves the core (lookups, stores, misses); a miss takes an MSHR and leaves as a fill
//! request for the level below, which answers from its array after its hit latency or misses
//! in turn; the last level's requests go to memory through `send_to_memory` (where their
//! traffic is counted), fills ahead of write-backs. A victim goes to the level below as a
//! write-back (the last level's to memory, whose image takes its bytes as it leaves). Data is
//! functional: a fill takes the line as the levels below and memory hold it when the fill
//! completes. Bulk-operation coherence acts here on all levels at once: write back a line,
//! invalidate a line, insert a line at the last level (where the memory controller's
//! copies land). Request ids name every fill and waited write-back in flight; their
//! completions come back through `complete`. Lines below the first level keep a valid bit
//! per first-level line; only a copy engine's partial write under
//! `copy_engine.partial_line = "sector"` leaves some clear: lookups needing them miss and
//! merge the fetched line under the valid part, write-backs and functional reads respect
//! them. This file holds the chain and its timed paths; the hierarchy's other concerns are
//! in their own files: non-temporal stores that go around every level (`non_temporal.rs`),
//! a post-LLC trace's requests below the caches (`below_caches.rs`), a migrating page's
//! lines (`migration_lines.rs`), untimed work and the cores' view (`untimed.rs`).

use super::array::{Evicted, LineBuf, Sectors, MAX_LINE};
use super::level::{writeback_request, CacheLevel, Mshr, Outgoing};
use super::level_port::LevelPort;
use super::write_combining::{WriteCombining, WriteCombiningStats};
use crate::config::CacheLevelConfig;
use crate::memory::{MemoryBelow, MemoryRouter, MemorySide};
use crate::port::{DueQueue, Movblk, Origin, Port, Request, RequestId, RequestKind, Response};
use crate::stat_struct::stat_struct;

stat_struct! {
    /// Bytes over the channel by cause.
    pub struct Traffic {
        pub read_bytes: u64 = sum("bytes", "channel reads that fill the cache for the program's loads and stores"),
        pub write_bytes: u64 = sum("bytes", "channel writes of lines the program wrote"),
        pub copy_bytes: u64 = sum("bytes", "channel reads and writes caused by copies: copy loops (source, destination fills, their write-backs), coherence write-backs, line copies below the cache"),
        pub init_bytes: u64 = sum("bytes", "the same for initialization (zeroing on first touch, meminit)"),
    }
}

impl Traffic {
    pub(super) fn book(&mut self, origin: Origin, write: bool, bytes: u64) {
        let slot = match (origin, write) {
            (Origin::Program, false) | (Origin::Coherence, false) => &mut self.read_bytes,
            (Origin::Program, true) | (Origin::Coherence, true) => &mut self.write_bytes,
            (Origin::Copy, _) | (Origin::Migration, _) => &mut self.copy_bytes,
            (Origin::Init, _) => &mut self.init_bytes,
        };
        *slot += bytes;
    }

    pub fn total(&self) -> u64 {
        self.read_bytes + self.write_bytes + self.copy_bytes + self.init_bytes
    }
}

/// Notes a request memory took (kept out of line: most runs record none).
#[cold]
#[inline(never)]
fn record_sent(sent: &mut Vec<(u32, u64, bool)>, req: &Request) {
    sent.push((req.thread, req.addr, req.kind == RequestKind::Writeback));
}

/// Writes the valid sectors of a line's `data` at `addr` into the memory image (a masked
/// write: memory keeps its own bytes under the invalid ones).
pub(super) fn write_masked(memory: &mut MemoryBelow, addr: u64, data: &[u8], valid: &Sectors) {
    if valid.is_whole() {
        memory.write(addr, data);
        return;
    }
    for run in valid.runs() {
        memory.write(addr + run.start as u64, &data[run]);
    }
}

/// Whether a line written or brought in for `origin` is bulk work's (a copy or an
/// initialization), which a post-LLC trace's records never saw.
pub(super) fn is_bulk_work(origin: Origin) -> bool {
    matches!(origin, Origin::Copy | Origin::Init)
}

/// What a request id in flight is for.
#[derive(Clone, Copy, Debug)]
pub enum Pending {
    /// A fill of `line` (in the level's line size) for `core`'s MSHR at `level`.
    Fill {
        level: usize,
        core: usize,
        line: u64,
    },
    /// A write-back the memory controller asked for on behalf of `core`'s bulk operation.
    Writeback { core: usize },
    /// A read below the caches for `core` (a post-LLC trace's request); `line` in the first
    /// level's line size, which is what the core waits on.
    BelowCaches { core: usize, line: u64 },
}

/// What completing a request id did for the cores.
#[derive(Clone, Copy, Debug)]
pub enum Completed {
    /// The first level has `line` now: `core`'s loads waiting for it may retire.
    Line { core: usize, line: u64 },
    /// A write-back `core`'s bulk operation waits for has reached memory.
    Writeback { core: usize },
    /// A fill of an inner level: nothing for the cores yet.
    Inner,
}

pub struct Hierarchy {
    pub levels: Vec<CacheLevel>,
    /// The level below the last: the devices behind the router, or the fixed-latency memory.
    pub memory: MemoryBelow,
    ids: Vec<Option<Pending>>,
    free_ids: Vec<RequestId>,
    /// Channel traffic by cause (the memory boundary), booked as the last level sends each
    /// request to memory (`send_to_memory`), the one place it is counted.
    pub traffic: Traffic,
    /// Advances whenever a line appears in or leaves an array, a miss completes or a
    /// write-back buffer entry frees: while it stands still, a request refused or a line
    /// found missing would be refused or missing again (the `cpu` copy loop relies on it).
    pub epoch: u64,
    /// Requests the memory devices accepted from the last level (reads and writes), and the
    /// most they may accept (`sim.stop_after_dram_accesses`; u64::MAX: no limit): at the
    /// limit the last level offers nothing more, so a run can stop at exactly that count.
    pub memory_accepted: u64,
    pub memory_accept_limit: u64,
    /// Per memory device, the requests the last level offered it, refused ones counted each
    /// time they were offered again: the host work of moving requests into memory.
    pub memory_offers: Vec<u64>,
    /// A request has entered the last level's queue for memory since the devices were last
    /// woken for one (`take_memory_arrivals`).
    memory_arrived: bool,
    /// Every request memory took since the owner last emptied it, while `Some` (the system's
    /// interruption metrics): (core that caused it, physical address, whether a write).
    pub sent_to_memory: Option<Vec<(u32, u64, bool)>>,
    /// Reads below the caches that the levels answered themselves (a post-LLC trace's read
    /// of a line bulk work brought in), with their due times.
    pub(super) hit_responses: Vec<Response>,
    /// Responses come back to the hierarchy through its ports (the memory side's, each
    /// device's, each inner level's) and wait here until due; `Hierarchy::complete` then
    /// delivers each to the level and core it is for.
    pub inbox: DueQueue,
    /// Scratch space for responses taken from a port.
    taken: Vec<Response>,
    /// The byte range `pin_last_level` pinned (CPM's migrating page), while pinned.
    pub(super) pinned: Option<(u64, u64)>,
    /// Last-level lines of post-LLC write-backs to the pinned range, held as if in the
    /// last level (a post-LLC trace has no cache to pin them in) until `move_lines_to`.
    pub(super) held_writebacks: std::collections::BTreeSet<u64>,
    /// The current time (fs), set by the owner each step: when first-level misses start.
    pub now: u64,
    /// Each core's write-combining buffers (empty unless `set_write_combining`).
    pub(super) write_combining: Vec<WriteCombining>,
    /// What they did.
    pub write_combining_stats: WriteCombiningStats,
}

impl Hierarchy {
    pub fn new(
        configs: &[CacheLevelConfig],
        memory: impl Into<MemoryBelow>,
        cores: usize,
        core_fs: u64,
    ) -> Result<Hierarchy, String> {
        let levels = configs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                CacheLevel::new(format!("l{}", i + 1), c, cores, core_fs)
                    .map_err(|e| format!("cache.level.{i}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut levels = levels;
        // Lines below the first level keep a valid bit per first-level line (the copy
        // engines' block), so a block written alone is the only valid part of its line
        // (`copy_engine.partial_line = "sector"`); every line is wholly valid otherwise.
        let sector = levels.first().map_or(0, |l| l.line_bytes as usize);
        for l in levels.iter_mut().skip(1) {
            for a in &mut l.arrays {
                a.set_sector_bytes(sector);
            }
        }
        let memory: MemoryBelow = memory.into();
        let devices = memory.router().devices.len();
        Ok(Hierarchy {
            levels,
            memory,
            ids: Vec::new(),
            free_ids: Vec::new(),
            traffic: Traffic::default(),
            epoch: 1,
            memory_accepted: 0,
            memory_accept_limit: u64::MAX,
            memory_offers: vec![0; devices],
            memory_arrived: false,
            sent_to_memory: None,
            hit_responses: Vec::new(),
            inbox: DueQueue::default(),
            taken: Vec::new(),
            pinned: None,
            held_writebacks: std::collections::BTreeSet::new(),
            now: 0,
            write_combining: Vec::new(),
            write_combining_stats: WriteCombiningStats::default(),
        })
    }

    pub(super) fn last(&self) -> usize {
        self.levels.len() - 1
    }

    /// The first level's line size (what the core's loads, stores and copy loops work in).
    pub fn line_bytes(&self) -> u64 {
        self.levels[0].line_bytes
    }

    pub fn l1(&mut self) -> &mut CacheLevel {
        &mut self.levels[0]
    }

    pub fn l1_ref(&self) -> &CacheLevel {
        &self.levels[0]
    }

    pub(super) fn new_id(&mut self, p: Pending) -> RequestId {
        match self.free_ids.pop() {
            Some(t) => {
                self.ids[t as usize] = Some(p);
                t
            }
            None => {
                self.ids.push(Some(p));
                (self.ids.len() - 1) as RequestId
            }
        }
    }

    /// What `id` was for; frees it.
    fn take_id(&mut self, id: RequestId) -> Pending {
        self.free_ids.push(id);
        self.ids[id as usize].take().expect("a live request id")
    }

    /// Whether any level has a miss in flight for a line overlapping [a, b).
    pub fn fetching_in(&self, a: u64, b: u64) -> bool {
        self.levels.iter().any(|l| {
            l.mshrs.iter().flatten().any(|m| {
                let s = m.line * l.line_bytes;
                s < b && s + l.line_bytes > a
            })
        })
    }

    /// Level `level` as the component above it sees it: the core for the first level, the
    /// level above otherwise.
    pub fn port(&mut self, level: usize) -> LevelPort<'_> {
        LevelPort {
            hierarchy: self,
            level,
        }
    }

    /// Makes sure `line` is being fetched into `core`'s first level, offering the miss to
    /// that level's port: it merges with an MSHR in flight or takes a new one. False when all
    /// MSHRs are busy or the write-back buffer is full.
    pub fn request_fill(&mut self, core: usize, line: u64, origin: Origin, write: bool) -> bool {
        let line_bytes = self.levels[0].line_bytes;
        let req = Request::fill(None, line, line_bytes, write, origin, core as u32);
        let mut port = self.port(0);
        if !port.can_accept(&req) {
            return false;
        }
        let now = port.hierarchy.now;
        port.send(&req, now);
        true
    }

    /// A copy engine's read of `line` (in `level`'s line size) for `core`, missing at
    /// `level`: it joins a miss in flight or takes an MSHR; the line goes into the array
    /// when it arrives only if `allocate`. False when no MSHR or buffer room is free.
    pub fn engine_fill(
        &mut self,
        level: usize,
        core: usize,
        line: u64,
        allocate: bool,
        not_before: u64,
    ) -> bool {
        self.request_fill_at(
            level,
            core,
            line,
            Origin::Copy,
            false,
            None,
            not_before,
            allocate,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn request_fill_at(
        &mut self,
        level: usize,
        core: usize,
        line: u64,
        origin: Origin,
        write: bool,
        waiter: Option<RequestId>,
        not_before: u64,
        allocate: bool,
    ) -> bool {
        let l = &mut self.levels[level];
        if let Some(m) = l.mshr_mut(core, line) {
            if let Some(w) = waiter {
                m.waiters.push(w);
            }
            m.allocate |= allocate;
            return true;
        }
        if l.mshrs[core].len() >= l.mshr_cap || !l.can_allocate(core) {
            return false;
        }
        let line_bytes = l.line_bytes;
        let not_before = not_before + self.victim_write_back_fs(level, core, line, allocate);
        let id = self.new_id(Pending::Fill { level, core, line });
        let l = &mut self.levels[level];
        l.mshrs[core].push(Mshr {
            line,
            origin,
            id,
            stores: Vec::new(),
            waiters: waiter.into_iter().collect(),
            dead: false,
            allocate,
        });
        let req = Request::fill(Some(id), line, line_bytes, write, origin, core as u32);
        l.below.read_bytes.count(origin, line_bytes);
        l.below_transfers += 1;
        let out = Outgoing {
            req,
            not_before,
            issued: not_before.max(self.now),
            buffer: None,
        };
        if level == self.last() {
            self.send_to_memory(out, not_before, origin);
        } else {
            self.levels[level].out_fills.push_back(out);
        }
        true
    }

    /// The time a write-back of the line that `line` would push out of `core`'s array at
    /// `level` takes first, when the level waits for it (`writeback_delays_miss`): across the
    /// port below and written there, or into the fixed-latency memory; 0 otherwise.
    pub fn victim_write_back_fs(
        &self,
        level: usize,
        core: usize,
        line: u64,
        allocate: bool,
    ) -> u64 {
        let l = &self.levels[level];
        let array = &l.arrays[l.array_of[core]];
        if !allocate
            || !l.writeback_delays_miss
            || array.probe(line).is_some()
            || !array.victim_is_dirty(line)
        {
            return 0;
        }
        match self.levels.get(level + 1) {
            Some(below) => below.port_fs + below.hit_fs,
            None => self.memory.write_back_fs(),
        }
    }

    /// A store waiting for `line` (whose first-level MSHR exists).
    pub fn add_store(&mut self, core: usize, line: u64, offset: usize, bytes: [u8; 8]) {
        self.add_store_bytes(core, line, offset, &bytes);
    }

    /// A store of up to 8 `bytes` waiting for `line` (whose first-level MSHR exists).
    pub fn add_store_bytes(&mut self, core: usize, line: u64, offset: usize, bytes: &[u8]) {
        let mut buf = [0u8; 8];
        buf[..bytes.len()].copy_from_slice(bytes);
        self.levels[0]
            .mshr_mut(core, line)
            .expect("an MSHR for the line")
            .stores
            .push((offset, bytes.len() as u8, buf));
    }

    /// Sends a dirty line of array `array` at `level` down: to the level below, or (from the
    /// last level, or when `waiter` is a bulk operation's core) to memory, writing the image.
    /// `evictor` is the core whose access pushed the line out: a memory-bound write-back
    /// carries it as its cause (a write-back into an inner level carries `array`, whose
    /// array it came from).
    pub(super) fn write_back(
        &mut self,
        level: usize,
        array: usize,
        ev: &Evicted,
        waiter: Option<usize>,
        evictor: usize,
    ) {
        let line_bytes = self.levels[level].line_bytes;
        let to_memory = waiter.is_some() || level == self.last();
        let mut req = writeback_request(ev, line_bytes, ev.origin, array as u32);
        if to_memory {
            req.thread = evictor as u32;
        }
        if let Some(core) = waiter {
            req.id = Some(self.new_id(Pending::Writeback { core }));
            req.origin = Origin::Coherence;
            req.thread = core as u32;
        }
        if waiter.is_some() {
            // A coherence write-back skips the levels below, whose copies of these bytes
            // (non-inclusive levels may keep an older, clean one) must not stay stale.
            for run in ev.valid.runs() {
                let at = req.addr + run.start as u64;
                self.patch_below(level, at, &ev.data.as_slice()[run]);
            }
        }
        let l = &mut self.levels[level];
        // A partially valid line writes only its valid sectors (masked), counted as such.
        l.below
            .write_bytes
            .count(req.origin, ev.valid.valid_bytes());
        l.below_transfers += 1;
        if to_memory {
            write_masked(&mut self.memory, req.addr, ev.data.as_slice(), &ev.valid);
            // Counted as the bytes were last written (a coherence write-back's too).
            self.send_writeback_to_memory(req, ev.origin, Some((level, array)));
        } else {
            // Into the level below at once: a line in transit between levels would be
            // invisible to fills and to bulk coherence. (Bandwidth between levels is not
            // modelled; the level below may exceed its write-back buffer briefly, which only
            // delays its next miss.)
            self.accept_writeback(level + 1, &req, ev.data, ev.valid, true);
        }
    }

    /// Writes `data` at `addr` into every copy the levels below `level` hold, leaving their
    /// dirty state as it is.
    fn patch_below(&mut self, level: usize, addr: u64, data: &[u8]) {
        for l in &mut self.levels[level + 1..] {
            let line = addr / l.line_bytes;
            let offset = (addr - line * l.line_bytes) as usize;
            for a in &mut l.arrays {
                if let Some(way) = a.probe(line) {
                    a.patch(way, offset, data);
                }
            }
        }
    }

    /// Puts a line into `core`'s array at `level`, writing back what it pushes out.
    pub fn insert_at(
        &mut self,
        level: usize,
        core: usize,
        line: u64,
        data: &[u8],
        dirty: bool,
        origin: Origin,
    ) -> usize {
        self.epoch += 1;
        let l = &mut self.levels[level];
        let array = l.array_of[core];
        let (way, evicted) = l.arrays[array].insert(line, data, dirty, origin);
        if let Some(ev) = evicted {
            self.write_back(level, array, &ev, None, core);
        }
        way
    }

    /// Puts a line into `core`'s first level.
    pub fn insert(&mut self, core: usize, line: u64, data: &[u8], dirty: bool, origin: Origin) {
        self.insert_at(0, core, line, data, dirty, origin);
    }

    /// Reads `buf.len()` bytes at `addr` as level `from` and below see them (the first holder
    /// of each line below `from`, else memory; the bytes of a holder's invalid sectors as
    /// the levels below it see them).
    pub(super) fn read_below(&self, from: usize, addr: u64, buf: &mut [u8]) {
        for (i, l) in self.levels.iter().enumerate().skip(from) {
            let line = addr / l.line_bytes;
            for a in &l.arrays {
                if let Some(way) = a.probe(line) {
                    let offset = (addr - line * l.line_bytes) as usize;
                    let data = a.data(way);
                    if a.holds(way, offset, buf.len()) {
                        buf.copy_from_slice(&data[offset..offset + buf.len()]);
                        return;
                    }
                    // A partially valid line: its valid sectors, the others from below.
                    let s = a.sector_bytes();
                    let mut k = 0;
                    while k < buf.len() {
                        let at = offset + k;
                        let n = (s - at % s).min(buf.len() - k);
                        if a.holds(way, at, n) {
                            buf[k..k + n].copy_from_slice(&data[at..at + n]);
                        } else {
                            self.read_below(i + 1, addr + k as u64, &mut buf[k..k + n]);
                        }
                        k += n;
                    }
                    return;
                }
            }
        }
        self.memory.read(addr, buf);
    }

    /// Completes request `id` (a fill's data or a waited write-back has arrived at time
    /// `fs`).
    pub fn complete(&mut self, id: RequestId, fs: u64) -> Completed {
        match self.take_id(id) {
            Pending::Writeback { core } => Completed::Writeback { core },
            Pending::BelowCaches { core, line } => Completed::Line { core, line },
            Pending::Fill { level, core, line } => {
                self.complete_fill(level, core, line, fs);
                if level == 0 {
                    Completed::Line { core, line }
                } else {
                    Completed::Inner
                }
            }
        }
    }

    fn complete_fill(&mut self, level: usize, core: usize, line: u64, fs: u64) {
        self.epoch += 1;
        let l = &mut self.levels[level];
        let i = l.mshrs[core]
            .iter()
            .position(|m| m.line == line)
            .expect("an MSHR for the fill");
        let m = l.mshrs[core].swap_remove(i);
        let line_bytes = l.line_bytes;
        // Answers cross the port above back up.
        let up = fs + l.port_fs;
        l.responses.extend(m.waiters.iter().map(|&w| (w, up)));
        if m.dead {
            return;
        }
        // In a shared array another core's fill may have brought the line already (and it
        // may be dirty since): apply the waiting stores to it instead of refilling. A line
        // there with invalid sectors (a sector miss, or a copy engine's block written while
        // the fill was in flight) takes those from the fill, even a non-allocating one: its
        // valid sectors are newer.
        if let Some(way) = l.array(core).probe(line) {
            if !l.array(core).is_whole(way) {
                let mut below = [0u8; MAX_LINE];
                let below = &mut below[..line_bytes as usize];
                self.read_below(level + 1, line * line_bytes, below);
                self.levels[level].array(core).merge(way, below);
            }
            let l = &mut self.levels[level];
            for (offset, len, bytes) in &m.stores {
                l.array(core)
                    .write(way, *offset, &bytes[..*len as usize], Origin::Program);
            }
            return;
        }
        if !m.allocate {
            return;
        }
        let mut data = [0u8; MAX_LINE];
        let data = &mut data[..line_bytes as usize];
        self.read_below(level + 1, line * line_bytes, data);
        let dirty = !m.stores.is_empty();
        for (offset, len, bytes) in &m.stores {
            let len = *len as usize;
            data[*offset..*offset + len].copy_from_slice(&bytes[..len]);
        }
        let origin = if dirty { Origin::Program } else { m.origin };
        self.insert_at(level, core, line, data, dirty, origin);
    }

    /// Offers the fills waiting between levels to the level below through its port, at time
    /// `now`, each level's in order until one is refused. Returns whether any was taken.
    pub fn pump(&mut self, now: u64) -> bool {
        let mut moved = false;
        for level in 0..self.last() {
            while let Some(o) = self.levels[level].out_fills.front() {
                let req = o.req;
                if o.not_before > now {
                    break;
                }
                if self.levels[level + 1].locked_for(req.thread as usize) {
                    self.levels[level + 1].lock_waits += 1;
                    break;
                }
                let mut below = self.port(level + 1);
                if !below.can_accept(&req) {
                    break;
                }
                below.send(&req, now);
                self.levels[level].out_fills.pop_front();
                moved = true;
            }
        }
        moved
    }

    /// Level `level` takes a fill request its port accepted, at time `now`: a hit is answered
    /// after the level's hit latency, a miss joins or takes an MSHR. The first level sees
    /// only misses (the core looked first and counted them).
    pub(super) fn take_fill(&mut self, level: usize, req: &Request, now: u64) {
        let core = req.thread as usize;
        let l = &mut self.levels[level];
        let line = req.addr / l.line_bytes;
        // The request crosses the port above (the first level's is the core's own).
        let arrive = if level > 0 { now + l.port_fs } else { now };
        // The bytes the level above asks for: one of its lines.
        let offset = (req.addr - line * l.line_bytes) as usize;
        let len = (req.bytes as usize).min(l.line_bytes as usize - offset);
        if level > 0 && l.array(core).probe_bytes(line, offset, len).is_some() {
            l.array(core).access(line);
            let id = req.id.expect("a fill from the level above has an id");
            l.responses.push((id, arrive + l.hit_fs + l.port_fs));
            return;
        }
        if level > 0 && l.mshr_mut(core, line).is_none() {
            // The miss (the core counts its own); a line here without the sectors asked
            // for is one too, fetched and merged when its fill completes.
            l.array(core).access_bytes(line, offset, len);
        }
        let not_before = if l.serial_lookup {
            arrive + l.hit_fs
        } else {
            arrive
        };
        let write = req.kind == RequestKind::ReadForOwnership;
        // A copy engine's non-temporal read stays out of every level on its way.
        let allocate = match req
            .id
            .and_then(|id| self.ids.get(id as usize).copied().flatten())
        {
            Some(Pending::Fill {
                level: above,
                core,
                line,
            }) => self.levels[above].mshrs[core]
                .iter()
                .find(|m| m.line == line)
                .map_or(true, |m| m.allocate),
            _ => true,
        };
        let taken = self.request_fill_at(
            level, core, line, req.origin, write, req.id, not_before, allocate,
        );
        debug_assert!(taken, "the port accepted the fill");
    }

    /// Level `level` takes a write-back from the level above: into its copy of the line, or
    /// as a new dirty line when line sizes match, else on toward memory.
    /// Only the sectors `valid` marks are data (a partially valid line from above).
    fn accept_writeback(
        &mut self,
        level: usize,
        req: &Request,
        data: LineBuf,
        valid: Sectors,
        force: bool,
    ) -> bool {
        let core = req.thread as usize;
        let l = &mut self.levels[level];
        let line = req.addr / l.line_bytes;
        let offset = (req.addr - line * l.line_bytes) as usize;
        let array = l.array_of[core];
        if let Some(way) = l.arrays[array].probe(line) {
            for run in valid.runs() {
                let bytes = &data.as_slice()[run.clone()];
                l.arrays[array].write(way, offset + run.start, bytes, req.origin);
            }
            return true;
        }
        if !force && !l.can_allocate(core) {
            return false;
        }
        if req.bytes as u64 == l.line_bytes {
            self.epoch += 1;
            let l = &mut self.levels[level];
            let (_, evicted) =
                l.arrays[array].insert_sectors(line, data.as_slice(), valid.mask, true, req.origin);
            if let Some(ev) = evicted {
                self.write_back(level, array, &ev, None, core);
            }
        } else {
            // A part of a larger line this level does not hold: on to memory, where it costs
            // one burst of the last level's line size like any write-back.
            self.levels[level]
                .below
                .write_bytes
                .count(req.origin, valid.valid_bytes());
            self.levels[level].below_transfers += 1;
            write_masked(&mut self.memory, req.addr, data.as_slice(), &valid);
            self.send_writeback_to_memory(*req, req.origin, Some((level, array)));
        }
        true
    }

    /// The one way a request leaves the last level (or goes around the levels) for memory,
    /// sent at `at`: its traffic is booked under `cause`, then the fixed-latency memory takes
    /// it at once, or it waits in the last level's queue for a device (`drain_to_memory`), a
    /// write-back holding its place in `out.buffer`'s write-back buffer until taken.
    /// Memory moves whole lines of the last level's size (one burst each).
    pub(super) fn send_to_memory(&mut self, out: Outgoing, at: u64, cause: Origin) {
        let write = out.req.kind == RequestKind::Writeback;
        self.traffic.book(cause, write, self.last_line_bytes());
        if self.memory.take_at_once(&out.req, at) {
            return;
        }
        if let Some((level, array)) = out.buffer {
            self.levels[level].wb_queued[array] += 1;
        }
        let last = self.last();
        if write {
            self.levels[last].out_writebacks.push_back(out);
        } else {
            self.levels[last].out_fills.push_back(out);
        }
        self.memory_arrived = true;
    }

    /// `send_to_memory` for a write-back sent now.
    pub(super) fn send_writeback_to_memory(
        &mut self,
        req: Request,
        cause: Origin,
        buffer: Option<(usize, usize)>,
    ) {
        let out = Outgoing {
            req,
            not_before: 0,
            issued: self.now,
            buffer,
        };
        self.send_to_memory(out, self.now, cause);
    }

    /// Offers the last level's requests for memory device `device` at its cycle `cycle`:
    /// fills, then write-backs, each in order; one a full controller refuses does not hold
    /// back those for other channels. Returns the earliest time (fs) an offer refused now
    /// could be taken while the device's queues stay as they are (u64::MAX: none), so that
    /// the device need not be stepped, and every waiting request offered again, each cycle
    /// one waits: a request not yet due, at its time; one refused by a full queue, never
    /// (a slot frees only when its controller issues, which steps the device at the next
    /// cycle anyway); one for another device, never (that device offers it); under the
    /// hybrid memory, whose routes change as pages migrate, any refusal at the next cycle.
    pub fn drain_to_memory(&mut self, device: usize, cycle: u64) -> u64 {
        let last = self.last();
        let router = self.memory.router_mut();
        let (levels, epoch) = (&mut self.levels, &mut self.epoch);
        let (accepted, limit) = (&mut self.memory_accepted, self.memory_accept_limit);
        let sent = &mut self.sent_to_memory;
        let fs = cycle * router.devices[device].period_fs;
        let offers = &mut self.memory_offers[device];
        let mut retry = u64::MAX;
        let retry_refused = if router.hybrid.is_some() {
            fs + 1
        } else {
            u64::MAX
        };
        let mut offer = |router: &mut MemoryRouter, req: &Request, not_before: u64, issued: u64| {
            if *accepted >= limit {
                return false;
            }
            if not_before > fs {
                retry = retry.min(not_before);
                return false;
            }
            *offers += 1;
            if !router.offer(device, req, fs, issued) {
                retry = retry.min(retry_refused);
                return false;
            }
            *accepted += 1;
            if let Some(sent) = sent {
                record_sent(sent, req);
            }
            true
        };
        levels[last]
            .out_fills
            .retain(|f| !offer(router, &f.req, f.not_before, f.issued));
        let mut writebacks = std::mem::take(&mut levels[last].out_writebacks);
        writebacks.retain(|w| {
            let taken = offer(router, &w.req, w.not_before, w.issued);
            if let (true, Some((l, a))) = (taken, w.buffer) {
                levels[l].wb_queued[a] -= 1;
                *epoch += 1;
            }
            !taken
        });
        levels[last].out_writebacks = writebacks;
        retry
    }

    /// Whether requests have entered the last level's queue for memory since the last call
    /// (the devices must then be woken to offer them).
    #[inline]
    pub fn take_memory_arrivals(&mut self) -> bool {
        std::mem::take(&mut self.memory_arrived)
    }

    /// The earliest time a fill waiting between levels may leave (u64::MAX: none waits).
    pub fn next_departure(&self) -> u64 {
        self.levels[..self.last()]
            .iter()
            .filter_map(|l| l.out_fills.front().map(|o| o.not_before))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Whether no level holds a request for the level below.
    pub fn outbox_empty(&self) -> bool {
        self.levels.iter().all(|l| l.outbox_empty())
    }

    /// Whether any level (or the fixed-latency memory) holds responses not yet taken.
    pub fn responses_pending(&self) -> bool {
        !self.hit_responses.is_empty()
            || self.memory.has_responses()
            || self.levels.iter().any(|l| !l.responses.is_empty())
    }

    /// Moves the answers to requests below the caches (the fixed-latency memory's, and the
    /// levels' own to a post-LLC trace's reads), with their due times, into `out`.
    pub fn take_memory_responses(&mut self, out: &mut Vec<Response>) {
        out.append(&mut self.hit_responses);
        self.memory.take_responses(out);
    }

    /// Takes the responses the memory side and the inner levels' ports hold into the inbox.
    pub fn collect_responses(&mut self) {
        let mut taken = std::mem::take(&mut self.taken);
        self.take_memory_responses(&mut taken);
        for (id, due) in taken.drain(..) {
            self.inbox.push(due, id, 0);
        }
        for level in 1..self.levels.len() {
            self.port(level).take_responses(&mut taken);
            for (id, due) in taken.drain(..) {
                self.inbox.push(due, id, 0);
            }
        }
        self.taken = taken;
    }

    /// Takes memory device `device`'s responses to the last level into the inbox.
    #[inline]
    pub fn collect_device_responses(&mut self, device: usize) {
        let mut taken = std::mem::take(&mut self.taken);
        self.router_mut().take_responses(device, &mut taken);
        for (id, due) in taken.drain(..) {
            self.inbox.push(due, id, device as u32);
        }
        self.taken = taken;
    }

    /// The router: the devices, the image and the hybrid tables (what the system steps,
    /// measures and reports), whichever memory times the caches' requests.
    #[inline]
    pub fn router(&self) -> &MemoryRouter {
        self.memory.router()
    }

    #[inline]
    pub fn router_mut(&mut self) -> &mut MemoryRouter {
        self.memory.router_mut()
    }

    /// Whether the last level holds requests for memory.
    pub fn memory_outbox_empty(&self) -> bool {
        self.levels[self.last()].outbox_empty()
    }

    /// Coherence: writes `line` of array `array` at `level` back to memory if it is dirty,
    /// reporting its completion for `core`; whether it did.
    pub fn coherence_write_back(
        &mut self,
        level: usize,
        array: usize,
        line: u64,
        core: usize,
    ) -> bool {
        match self.levels[level].arrays[array].write_back(line) {
            Some(ev) => {
                self.write_back(level, array, &ev, Some(core), core);
                true
            }
            None => false,
        }
    }

    /// Drops `line` (in the level's line size) from array `array` of `level`, for bulk
    /// coherence.
    pub fn invalidate(&mut self, level: usize, array: usize, line: u64) {
        if self.levels[level].arrays[array].invalidate(line) {
            self.epoch += 1;
        }
    }

    /// Puts `line` (in the level's line size) into array `array` of `level`, as the memory
    /// controller's in-cache copies and zero inserts do; writes back what it pushes out.
    pub fn insert_in(
        &mut self,
        level: usize,
        array: usize,
        line: u64,
        data: &[u8],
        dirty: bool,
        origin: Origin,
    ) {
        self.epoch += 1;
        let (_, evicted) = self.levels[level].arrays[array].insert(line, data, dirty, origin);
        if let Some(ev) = evicted {
            // The memory controller's insert: no core's access caused it.
            self.write_back(level, array, &ev, None, array);
        }
    }

    /// A copy engine's destination write at `level` into array `array` for `core`: the
    /// movblk's bytes, read as the cores see its source now, land in the destination's line,
    /// dirty, allocated without a fetch. A block smaller than a line this level lacks
    /// (`copy_engine.partial_line`): with `sector`, the line is put in valid in the block's
    /// sectors only; else it is made whole from the levels below.
    pub fn engine_write(&mut self, level: usize, array: usize, op: &Movblk, sector: bool) {
        let mut block = [0u8; MAX_LINE];
        let len = op.bytes as usize;
        let split = op.split as usize;
        self.read_below(0, op.src, &mut block[..split]);
        if split < len {
            self.read_below(0, op.src_next, &mut block[split..len]);
        }
        let lb = self.levels[level].line_bytes;
        let line = op.dst / lb;
        let offset = (op.dst - line * lb) as usize;
        if let Some(way) = self.levels[level].arrays[array].probe(line) {
            self.levels[level].arrays[array].write(way, offset, &block[..len], Origin::Copy);
            self.levels[level].arrays[array].touch(way);
            self.epoch += 1;
            return;
        }
        let mut whole = [0u8; MAX_LINE];
        let whole = &mut whole[..lb as usize];
        if sector && len < lb as usize {
            whole[offset..offset + len].copy_from_slice(&block[..len]);
            self.epoch += 1;
            let a = &mut self.levels[level].arrays[array];
            let valid = a.sectors_of(offset, len);
            let (_, evicted) = a.insert_sectors(line, whole, valid, true, Origin::Copy);
            if let Some(ev) = evicted {
                self.write_back(level, array, &ev, None, array);
            }
            return;
        }
        if len < lb as usize {
            self.read_below(level + 1, line * lb, whole);
        }
        whole[offset..offset + len].copy_from_slice(&block[..len]);
        self.insert_in(level, array, line, whole, true, Origin::Copy);
    }

    /// Whether array `array` at `level` holds every byte of `op`'s source that lies in
    /// `line` (a copy engine's source lookup): the line is there with those sectors valid.
    /// The line there without them is a sector miss, counted.
    pub fn engine_source_hit(
        &mut self,
        level: usize,
        array: usize,
        op: &Movblk,
        line: u64,
    ) -> bool {
        let lb = self.levels[level].line_bytes;
        let a = &mut self.levels[level].arrays[array];
        let Some(way) = a.probe(line) else {
            return false;
        };
        if a.is_whole(way) {
            return true;
        }
        let (start, end) = (line * lb, (line + 1) * lb);
        let parts = [(op.src, op.split), (op.src_next, op.bytes - op.split)];
        let hit = parts.iter().all(|&(s, n)| {
            let (from, to) = (s.max(start), (s + n).min(end));
            from >= to || a.holds(way, (from - start) as usize, (to - from) as usize)
        });
        if !hit {
            a.count_sector_miss();
        }
        hit
    }

    /// Drops `line` from array `array` of `level` without writing it back (a copy engine's
    /// destination, about to be overwritten below).
    pub fn discard(&mut self, level: usize, array: usize, line: u64) {
        self.invalidate(level, array, line);
    }

    /// The last level's index.
    pub fn last_level(&self) -> usize {
        self.last()
    }

    /// Whether the last level's array `array` has write-back buffer room.
    pub fn last_can_allocate(&self, array: usize) -> bool {
        let l = &self.levels[self.last()];
        l.wb_queued[array] < l.wb_cap
    }

    /// The last level's array that `core` uses.
    pub fn last_array_of(&self, core: usize) -> usize {
        self.levels[self.last()].array_of[core]
    }

    /// The last level's line size.
    pub fn last_line_bytes(&self) -> u64 {
        self.levels[self.last()].line_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// One channel with 4-entry queues; one level whose write-back buffer holds `wb_cap`.
    fn hierarchy(wb_cap: u32) -> Hierarchy {
        let mut config = Config::default();
        config.controller.read_queue_size = 4;
        config.controller.write_queue_size = 4;
        config.cache.level[0].size_kb = 64;
        config.cache.level[0].ways = 4;
        config.cache.level[0].writeback_buffer = wb_cap;
        let router = MemoryRouter::new(&config).unwrap();
        Hierarchy::new(&config.cache.level, router, 1, 312_500).unwrap()
    }

    /// Two private first levels (two cores).
    fn two_cores() -> Hierarchy {
        let mut config = Config::default();
        config.cache.level[0].size_kb = 64;
        config.cache.level[0].ways = 4;
        let router = MemoryRouter::new(&config).unwrap();
        Hierarchy::new(&config.cache.level, router, 2, 312_500).unwrap()
    }

    #[test]
    fn a_frame_handed_over_drops_the_old_owners_lines_and_fills_in_flight() {
        let mut h = two_cores();
        let mut before = [0u8; 128];
        h.memory.read(0, &mut before);
        // Core 0 holds line 0 dirty and is still fetching line 1 with a store waiting.
        h.insert(0, 0, &[5; 64], true, Origin::Program);
        assert!(h.request_fill(0, 1, Origin::Program, true));
        h.add_store(0, 1, 0, [9; 8]);
        let id = h.levels[0].mshrs[0][0].id;
        // The frame [0, 4096) goes to core 1.
        h.hand_over(1, 0, 4096);
        assert!(
            h.levels[0].arrays[0].probe(0).is_none(),
            "core 0's line dropped"
        );
        assert!(matches!(
            h.complete(id, 0),
            Completed::Line { core: 0, line: 1 }
        ));
        assert!(
            h.levels[0].arrays[0].probe(1).is_none(),
            "the late fill put nothing in"
        );
        // Neither the dropped dirty line nor the late store reached memory.
        let mut after = [0u8; 128];
        h.memory.read(0, &mut after);
        assert_eq!(after, before);
        assert_eq!(h.traffic.write_bytes, 0);
    }

    /// Evicts `n` dirty lines of set 0 (64 KiB, 4 ways: 256 sets) into the buffer.
    fn evict_dirty(h: &mut Hierarchy, n: u64) {
        for i in 0..4 + n {
            h.insert(0, i * 256, &[i as u8; 64], true, Origin::Program);
        }
    }

    #[test]
    fn fills_pass_write_backs_a_full_write_queue_refuses() {
        let mut h = hierarchy(16);
        evict_dirty(&mut h, 6);
        assert!(h.request_fill(0, 100, Origin::Program, false));
        h.drain_to_memory(0, 0);
        let last = &h.levels[0];
        assert_eq!(last.out_writebacks.len(), 2, "the write queue took 4 of 6");
        assert!(
            last.out_fills.is_empty(),
            "the fill queued after them went ahead"
        );
        assert_eq!(h.traffic.write_bytes, 6 * 64);
        assert_eq!(h.levels[0].below.read_bytes.program, 64);
    }

    #[test]
    fn a_full_write_back_buffer_starts_no_miss_until_memory_takes_its_lines() {
        let mut h = hierarchy(2);
        evict_dirty(&mut h, 6);
        assert!(!h.l1_ref().can_allocate(0));
        assert!(!h.request_fill(0, 100, Origin::Program, false));
        h.drain_to_memory(0, 0);
        assert!(
            !h.l1_ref().can_allocate(0),
            "2 still wait: the buffer is full"
        );
        let mut cycle = 1;
        while !h.levels[0].out_writebacks.is_empty() {
            h.router_mut().step(0, cycle);
            h.drain_to_memory(0, cycle);
            cycle += 1;
            assert!(cycle < 10_000, "the controller drains its writes");
        }
        assert!(h.request_fill(0, 100, Origin::Program, false));
    }

    #[test]
    fn write_backs_reach_the_image_as_they_leave_and_fills_read_it() {
        let mut h = hierarchy(16);
        evict_dirty(&mut h, 1);
        // Line 0 (all zeros) was pushed out dirty: memory holds it now.
        let mut buf = [9u8; 64];
        h.memory.read(0, &mut buf);
        assert_eq!(buf, [0u8; 64]);
        // A fill of it brings those bytes back, with a waiting store applied.
        assert!(h.request_fill(0, 0, Origin::Program, true));
        h.add_store(0, 0, 8, [7; 8]);
        let id = h.levels[0].mshrs[0][0].id;
        assert!(matches!(
            h.complete(id, 0),
            Completed::Line { core: 0, line: 0 }
        ));
        let mut seen = [0u8; 16];
        h.read_as_cores(0, &mut seen);
        assert_eq!(&seen[..8], &[0; 8]);
        assert_eq!(&seen[8..], &[7; 8]);
    }
}
