//! One cache level: its arrays (one per core, or one shared by all), the MSHRs of each core at
//! this level, the bounded write-back buffer of each array, the requests it has not yet handed
//! to the level below (fills ahead of write-backs), and its counters. The chain of levels and
//! the memory router below them are the hierarchy's business (`hierarchy`).

use super::array::{ArrayCounts, Cache, Evicted};
use crate::config::CacheLevelConfig;
use crate::port::{Origin, Request, RequestId, Response};
use crate::stat_struct::stat_struct;
use std::collections::VecDeque;

/// A miss in flight at this level.
pub struct Mshr {
    /// Line number in this level's line size.
    pub line: u64,
    pub origin: Origin,
    /// The fill's request id below.
    pub id: RequestId,
    /// Stores waiting for the line (first level only): (offset, length, bytes).
    pub stores: Vec<(usize, u8, [u8; 8])>,
    /// Fills of the level above waiting for this line.
    pub waiters: Vec<RequestId>,
    /// The line's frame changed owner while the fill was in flight: its bytes and waiting
    /// stores belong to a process that no longer maps it, so the fill puts nothing in.
    pub dead: bool,
    /// Whether the line goes into the array when it arrives; false for a copy engine's
    /// non-temporal source read (until a demand request joins the miss).
    pub allocate: bool,
}

/// A request waiting to leave the level, and the array whose write-back buffer holds it.
pub struct Outgoing {
    pub req: Request,
    /// Earliest time (fs) it may leave: after a serial lookup, or a port crossing.
    pub not_before: u64,
    /// When it left the level (fs): its age in the controller's one order of reads and
    /// writes (`Controller::older_read`), finer than the device's cycle.
    pub issued: u64,
    /// (level, array) whose write-back buffer entry frees when the request is taken.
    pub buffer: Option<(usize, usize)>,
}

stat_struct! {
    /// Bytes that crossed a port, by direction and origin.
    pub struct PortTraffic {
        pub read_bytes: OriginBytes = nested(dir = "read through the port below the level (fills)"),
        pub write_bytes: OriginBytes = nested(dir = "written through the port below the level (write-backs; of a partially valid line only its valid sectors, copy_engine.partial_line = \"sector\")"),
    }
}

stat_struct! {
    /// A byte count per origin (see `port::Origin`).
    pub struct OriginBytes {
        pub program: u64 = sum("bytes", "bytes {dir}, for the program's own loads and stores"),
        pub copy: u64 = sum("bytes", "bytes {dir}, for copies (memcpy, copy-on-write)"),
        pub init: u64 = sum("bytes", "bytes {dir}, for initializations (meminit, first-touch zeroing)"),
        pub coherence: u64 = sum("bytes", "bytes {dir}, for the memory controller's coherence work before bulk operations"),
        pub migration: u64 = sum("bytes", "bytes {dir}, for page migration (a hybrid memory's flushed lines, written to their new frame)"),
    }
}

impl OriginBytes {
    /// Bytes of every origin.
    pub fn total(&self) -> u64 {
        self.program + self.copy + self.init + self.coherence + self.migration
    }

    /// Counts `bytes` for `origin`.
    pub fn count(&mut self, origin: Origin, bytes: u64) {
        *match origin {
            Origin::Program => &mut self.program,
            Origin::Copy => &mut self.copy,
            Origin::Init => &mut self.init,
            Origin::Coherence => &mut self.coherence,
            Origin::Migration => &mut self.migration,
        } += bytes;
    }
}

stat_struct! {
    /// Counters of one cache level, summed over its arrays.
    pub struct LevelStats {
        pub hits: u64 = sum("accesses", "demand lookups that hit, all cores (first level: program loads and stores; below: fills asked for by the level above)"),
        pub misses: u64 = sum("accesses", "demand lookups that missed, all cores"),
        pub writebacks: u64 = sum("lines", "dirty lines written back (evictions and coherence)"),
        pub invalidations: u64 = sum("lines", "lines dropped for bulk-operation coherence or handed-over frames"),
        pub inserts: u64 = sum("lines", "lines put into the level (fills, write-backs from above, in-cache copies, zero inserts, lines allocated whole by cpu copies and initializations)"),
        pub sector_misses: u64 = sum("accesses", "lookups that found the line with a sector they need invalid (copy_engine.partial_line = \"sector\": a copy engine wrote only part of the line): fills from the level above (counted in misses too) and copy-engine source reads; the line is fetched from below and its invalid sectors merged in"),
        pub trace_hits: u64 = sum("accesses", "post-LLC trace reads this level answered (after the hit latencies of the levels down to it) instead of memory, because bulk work had put their line here (cpu copies and initializations, RowClone-ZI's zero lines, copy engines); the trace's own reads never allocate, and lines the program cached do not count: the run that wrote the trace had them and missed"),
        pub trace_takeouts: u64 = sum("lines", "lines bulk work had put in this level that a post-LLC trace's write-back of them took out (the run that wrote the trace evicted them), dirty bytes written to memory first; the write-back still goes to memory"),
        pub below: PortTraffic = nested(),
        pub below_transfers: u64 = sum("transfers", "lines moved through the port below the level (fills, including lines sent to a copy engine only, and write-backs), each carrying one address of cache.address_bytes"),
        pub below_messages: u64 = sum("messages", "copy-engine operations sent through the port below the level (two addresses each, no data)"),
        pub below_bytes_with_addresses: u64 = sum("bytes", "bytes through the port below, addresses included: below.read_bytes + below.write_bytes (all origins) + (below_transfers + 2 x below_messages) x cache.address_bytes; for the first level of the copy-engines preset, the paper's off-chip traffic"),
    }
}

pub struct CacheLevel {
    pub name: String,
    pub line_bytes: u64,
    /// Hit latency in femtoseconds.
    pub hit_fs: u64,
    /// Time to cross the port above this level, each way (fs).
    pub port_fs: u64,
    /// A miss leaves only after the lookup (`hit_fs`).
    pub serial_lookup: bool,
    /// A miss pushing out a dirty line waits for its write-back.
    pub writeback_delays_miss: bool,
    /// Per array: a copy engine works in it, so requests from the level above wait.
    pub locked: Vec<bool>,
    pub below_transfers: u64,
    pub below_messages: u64,
    /// Bytes of one address on the port below (`cache.address_bytes`).
    pub address_bytes: u64,
    /// Steps at which a fill from above waited because an engine held the array.
    pub lock_waits: u64,
    /// Post-LLC trace reads this level served (`LevelStats::trace_hits`).
    pub trace_hits: u64,
    /// Lines post-LLC trace write-backs took out (`LevelStats::trace_takeouts`).
    pub trace_takeouts: u64,
    pub arrays: Vec<Cache>,
    /// The array each core uses.
    pub array_of: Vec<usize>,
    /// Misses in flight per core.
    pub mshrs: Vec<Vec<Mshr>>,
    pub mshr_cap: usize,
    /// Write-backs each array's buffer holds (not yet taken below).
    pub wb_queued: Vec<usize>,
    pub wb_cap: usize,
    pub out_fills: VecDeque<Outgoing>,
    pub out_writebacks: VecDeque<Outgoing>,
    pub below: PortTraffic,
    /// Answers to fills the level above sent through this level's port, with their due times.
    pub responses: Vec<Response>,
}

impl CacheLevel {
    pub fn new(
        name: String,
        cfg: &CacheLevelConfig,
        cores: usize,
        core_fs: u64,
    ) -> Result<CacheLevel, String> {
        let count = if cfg.shared { 1 } else { cores };
        let arrays = (0..count)
            .map(|_| Cache::new(cfg.size_kb as u64 * 1024, cfg.ways, cfg.line_bytes))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CacheLevel {
            name,
            line_bytes: cfg.line_bytes as u64,
            hit_fs: cfg.hit_cycles as u64 * core_fs,
            port_fs: cfg.port_cycles as u64 * core_fs,
            serial_lookup: cfg.serial_lookup,
            writeback_delays_miss: cfg.writeback_delays_miss,
            locked: vec![false; count],
            below_transfers: 0,
            below_messages: 0,
            lock_waits: 0,
            trace_hits: 0,
            trace_takeouts: 0,
            address_bytes: 4,
            arrays,
            array_of: (0..cores).map(|c| if cfg.shared { 0 } else { c }).collect(),
            mshrs: (0..cores).map(|_| Vec::new()).collect(),
            mshr_cap: cfg.mshrs as usize,
            wb_queued: vec![0; count],
            wb_cap: cfg.writeback_buffer as usize,
            out_fills: VecDeque::new(),
            out_writebacks: VecDeque::new(),
            below: PortTraffic::default(),
            responses: Vec::new(),
        })
    }

    pub fn array(&mut self, core: usize) -> &mut Cache {
        &mut self.arrays[self.array_of[core]]
    }

    pub fn has_mshr(&self, core: usize, line: u64) -> bool {
        self.mshrs[core].iter().any(|m| m.line == line)
    }

    pub fn mshr_mut(&mut self, core: usize, line: u64) -> Option<&mut Mshr> {
        self.mshrs[core].iter_mut().find(|m| m.line == line)
    }

    /// Stores of `core` waiting in its MSHRs for their lines.
    pub fn waiting_stores(&self, core: usize) -> usize {
        self.mshrs[core].iter().map(|m| m.stores.len()).sum()
    }

    pub fn mshrs_free(&self, core: usize) -> usize {
        self.mshr_cap - self.mshrs[core].len()
    }

    /// Whether a copy engine holds `core`'s array.
    pub fn locked_for(&self, core: usize) -> bool {
        self.locked[self.array_of[core]]
    }

    /// Whether `core`'s array has write-back buffer room for a victim.
    pub fn can_allocate(&self, core: usize) -> bool {
        self.wb_queued[self.array_of[core]] < self.wb_cap
    }

    pub fn outbox_empty(&self) -> bool {
        self.out_fills.is_empty() && self.out_writebacks.is_empty()
    }

    pub fn stats(&self) -> LevelStats {
        let mut sum = ArrayCounts::default();
        for a in &self.arrays {
            let s = &a.stats;
            sum.hits += s.hits;
            sum.misses += s.misses;
            sum.writebacks += s.writebacks;
            sum.invalidations += s.invalidations;
            sum.inserts += s.inserts;
            sum.sector_misses += s.sector_misses;
        }
        LevelStats {
            hits: sum.hits,
            misses: sum.misses,
            writebacks: sum.writebacks,
            invalidations: sum.invalidations,
            inserts: sum.inserts,
            sector_misses: sum.sector_misses,
            trace_hits: self.trace_hits,
            trace_takeouts: self.trace_takeouts,
            below: self.below.clone(),
            below_transfers: self.below_transfers,
            below_messages: self.below_messages,
            below_bytes_with_addresses: self.below.read_bytes.total()
                + self.below.write_bytes.total()
                + (self.below_transfers + 2 * self.below_messages) * self.address_bytes,
        }
    }
}

/// An evicted line as a write-back request.
pub fn writeback_request(ev: &Evicted, line_bytes: u64, origin: Origin, thread: u32) -> Request {
    Request {
        id: None,
        addr: ev.line * line_bytes,
        bytes: line_bytes as u32,
        kind: crate::port::RequestKind::Writeback,
        origin,
        thread,
    }
}
