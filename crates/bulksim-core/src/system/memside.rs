//! Everything below the cores: the caches (one per core, or one shared) and each core's MSHRs,
//! the fills and write-backs the memory system has not accepted yet, and the booking of every
//! byte that crosses the channel as program read, program write, copy or initialization
//! traffic. Fills go to the controllers ahead of write-backs (reads first, as a cache's miss
//! path does), and each cache's write-back buffer is bounded: while it is full, the cache
//! starts no miss and allocates no line. Data is functional-first: a write-back writes the
//! memory image when it is issued, a fill reads it when the fill completes; timing comes from
//! the memory system's requests.

use crate::cache::{Cache, Evicted, LineData, Origin, LINE};
use crate::controller::{RequestKind, NO_TAG};
use crate::memory::MemorySystem;
use serde::Serialize;
use std::collections::VecDeque;

/// Bytes over the channel by cause.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Traffic {
    /// Fills for the program's own loads and stores.
    pub read_bytes: u64,
    /// Write-backs of lines the program wrote.
    pub write_bytes: u64,
    /// Reads and writes caused by copies (copy loops, their write-backs, coherence
    /// write-backs, line copies below the cache).
    pub copy_bytes: u64,
    /// The same for initialization (zeroing, meminit).
    pub init_bytes: u64,
}

impl Traffic {
    fn book(&mut self, origin: Origin, write: bool) {
        let slot = match (origin, write) {
            (Origin::Program, false) => &mut self.read_bytes,
            (Origin::Program, true) => &mut self.write_bytes,
            (Origin::Copy, _) => &mut self.copy_bytes,
            (Origin::Init, _) => &mut self.init_bytes,
        };
        *slot += LINE;
    }

    pub fn total(&self) -> u64 {
        self.read_bytes + self.write_bytes + self.copy_bytes + self.init_bytes
    }
}

struct Mshr {
    line: u64,
    origin: Origin,
    /// Stores waiting for the line: (offset, bytes).
    stores: Vec<(usize, [u8; 8])>,
}

/// A request the memory system has not accepted yet.
struct Outgoing {
    addr: u64,
    tag: u32,
    /// The cache a write-back leaves (its buffer entry is freed when memory takes it).
    cache: usize,
}

/// What a completed tag was for.
#[derive(Clone, Copy, Debug)]
pub enum Pending {
    Fill { core: usize, line: u64 },
    Writeback { core: usize },
}

pub struct MemSide {
    pub memory: MemorySystem,
    pub caches: Vec<Cache>,
    /// The cache each core uses.
    cache_of: Vec<usize>,
    mshrs: Vec<Vec<Mshr>>,
    mshr_cap: usize,
    fills: VecDeque<Outgoing>,
    writebacks: VecDeque<Outgoing>,
    /// Write-backs each cache has waiting in `writebacks`.
    wb_queued: Vec<usize>,
    wb_cap: usize,
    tags: Vec<Option<Pending>>,
    free_tags: Vec<u32>,
    pub traffic: Traffic,
}

impl MemSide {
    /// `caches` holds one cache per core, or one shared by all `cores`; each has room for
    /// `wb_cap` write-backs.
    pub fn new(
        memory: MemorySystem,
        caches: Vec<Cache>,
        cores: usize,
        mshr_cap: usize,
        wb_cap: usize,
    ) -> MemSide {
        let shared = caches.len() == 1;
        MemSide {
            memory,
            cache_of: (0..cores).map(|c| if shared { 0 } else { c }).collect(),
            mshrs: (0..cores).map(|_| Vec::new()).collect(),
            mshr_cap,
            fills: VecDeque::new(),
            writebacks: VecDeque::new(),
            wb_queued: vec![0; caches.len()],
            wb_cap,
            caches,
            tags: Vec::new(),
            free_tags: Vec::new(),
            traffic: Traffic::default(),
        }
    }

    pub fn cache_mut(&mut self, core: usize) -> &mut Cache {
        &mut self.caches[self.cache_of[core]]
    }

    fn new_tag(&mut self, p: Pending) -> u32 {
        match self.free_tags.pop() {
            Some(t) => {
                self.tags[t as usize] = Some(p);
                t
            }
            None => {
                self.tags.push(Some(p));
                (self.tags.len() - 1) as u32
            }
        }
    }

    /// What `tag` was for; frees it.
    pub fn complete_tag(&mut self, tag: u32) -> Pending {
        self.free_tags.push(tag);
        self.tags[tag as usize].take().expect("a live tag")
    }

    pub fn has_mshr(&self, core: usize, line: u64) -> bool {
        self.mshrs[core].iter().any(|m| m.line == line)
    }

    /// Lines being fetched, all cores.
    pub fn mshr_lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.mshrs.iter().flatten().map(|m| m.line)
    }

    pub fn mshrs_free(&self, core: usize) -> usize {
        self.mshr_cap - self.mshrs[core].len()
    }

    /// Whether `core`'s cache has write-back buffer room for a victim: a new miss or line
    /// allocation waits until it has.
    pub fn can_allocate(&self, core: usize) -> bool {
        self.wb_queued[self.cache_of[core]] < self.wb_cap
    }

    /// Makes sure `line` is being fetched for `core`: merges with an MSHR in flight or takes
    /// a new one. False when all MSHRs are busy or the write-back buffer is full.
    pub fn request_fill(&mut self, core: usize, line: u64, origin: Origin) -> bool {
        if self.has_mshr(core, line) {
            return true;
        }
        if self.mshrs[core].len() >= self.mshr_cap || !self.can_allocate(core) {
            return false;
        }
        self.mshrs[core].push(Mshr {
            line,
            origin,
            stores: Vec::new(),
        });
        let tag = self.new_tag(Pending::Fill { core, line });
        self.fills.push_back(Outgoing {
            addr: line * LINE,
            tag,
            cache: self.cache_of[core],
        });
        self.traffic.book(origin, false);
        true
    }

    /// A store waiting for `line` (whose MSHR exists).
    pub fn add_store(&mut self, core: usize, line: u64, offset: usize, bytes: [u8; 8]) {
        let m = self.mshrs[core]
            .iter_mut()
            .find(|m| m.line == line)
            .expect("an MSHR for the line");
        m.stores.push((offset, bytes));
    }

    /// Writes a dirty line of `cache` back; with `waiter`, its completion is reported for
    /// that core.
    pub fn write_back(&mut self, cache: usize, ev: Evicted, waiter: Option<usize>) {
        self.memory.image_mut().write(ev.line * LINE, &ev.data);
        let tag = match waiter {
            Some(core) => self.new_tag(Pending::Writeback { core }),
            None => NO_TAG,
        };
        self.writebacks.push_back(Outgoing {
            addr: ev.line * LINE,
            tag,
            cache,
        });
        self.wb_queued[cache] += 1;
        self.traffic.book(ev.origin, true);
    }

    /// Puts a line into `core`'s cache, writing back what it pushes out.
    pub fn insert(
        &mut self,
        core: usize,
        line: u64,
        data: &LineData,
        dirty: bool,
        origin: Origin,
    ) -> usize {
        let (way, evicted) = self.cache_mut(core).insert(line, data, dirty, origin);
        if let Some(ev) = evicted {
            self.write_back(self.cache_of[core], ev, None);
        }
        way
    }

    /// The line's data has arrived: fill it (applying waiting stores).
    pub fn complete_fill(&mut self, core: usize, line: u64) {
        let i = self.mshrs[core]
            .iter()
            .position(|m| m.line == line)
            .expect("an MSHR for the fill");
        let m = self.mshrs[core].swap_remove(i);
        // In a shared cache another core's fill may have brought the line already (and it
        // may be dirty since): apply the waiting stores to it instead of refilling.
        if let Some(way) = self.cache_mut(core).probe(line) {
            for (offset, bytes) in &m.stores {
                self.cache_mut(core)
                    .write(way, *offset, bytes, Origin::Program);
            }
            return;
        }
        let mut data = [0u8; LINE as usize];
        self.memory.image().read(line * LINE, &mut data);
        let dirty = !m.stores.is_empty();
        for (offset, bytes) in &m.stores {
            data[*offset..*offset + 8].copy_from_slice(bytes);
        }
        let origin = if dirty { Origin::Program } else { m.origin };
        self.insert(core, line, &data, dirty, origin);
    }

    /// Makes the `bytes` at `addr` zero without timing (memory present before the trace
    /// began): cached copies are dropped, the image is cleared.
    pub fn zero_untimed(&mut self, addr: u64, bytes: u64) {
        for line in addr / LINE..(addr + bytes).div_ceil(LINE) {
            for cache in &mut self.caches {
                cache.invalidate(line);
            }
        }
        self.memory.image_mut().zero(addr, bytes);
    }

    /// Current contents of `line` as the cores see it (a cache, else memory).
    pub fn read_line(&self, line: u64) -> LineData {
        for c in &self.caches {
            if let Some(way) = c.probe(line) {
                return *c.data(way);
            }
        }
        let mut data = [0u8; LINE as usize];
        self.memory.image().read(line * LINE, &mut data);
        data
    }

    pub fn outbox_empty(&self) -> bool {
        self.fills.is_empty() && self.writebacks.is_empty()
    }

    /// Offers waiting requests to memory at memory cycle `now`: fills, then write-backs, each
    /// in order; one a full controller refuses does not hold back those for other channels.
    pub fn drain_outbox(&mut self, now: u64) {
        let memory = &mut self.memory;
        self.fills
            .retain(|f| !memory.try_enqueue_client(RequestKind::Read, f.addr, now, f.tag));
        let queued = &mut self.wb_queued;
        self.writebacks.retain(|w| {
            let taken = memory.try_enqueue_client(RequestKind::Write, w.addr, now, w.tag);
            if taken {
                queued[w.cache] -= 1;
            }
            !taken
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// One channel with 4-entry queues; one cache whose write-back buffer holds `wb_cap`.
    fn side(wb_cap: usize) -> MemSide {
        let mut config = Config::default();
        config.controller.read_queue_size = 4;
        config.controller.write_queue_size = 4;
        let memory = MemorySystem::new(&config).unwrap();
        let cache = Cache::new(64 * 1024, 4).unwrap();
        MemSide::new(memory, vec![cache], 1, 8, wb_cap)
    }

    fn victim(line: u64) -> Evicted {
        Evicted {
            line,
            data: [0; LINE as usize],
            origin: Origin::Program,
        }
    }

    #[test]
    fn fills_pass_write_backs_a_full_write_queue_refuses() {
        let mut m = side(16);
        for line in 0..6 {
            m.write_back(0, victim(line), None);
        }
        assert!(m.request_fill(0, 100, Origin::Program));
        m.drain_outbox(0);
        assert_eq!(m.writebacks.len(), 2, "the write queue took 4 of 6");
        assert!(m.fills.is_empty(), "the fill queued after them went ahead");
    }

    #[test]
    fn a_full_write_back_buffer_starts_no_miss_until_memory_takes_its_lines() {
        let mut m = side(2);
        for line in 0..6 {
            m.write_back(0, victim(line), None);
        }
        assert!(!m.can_allocate(0));
        assert!(!m.request_fill(0, 100, Origin::Program));
        m.drain_outbox(0);
        assert!(!m.can_allocate(0), "2 still wait: the buffer is full");
        let mut cycle = 1;
        while !m.writebacks.is_empty() {
            m.memory.tick(cycle);
            m.drain_outbox(cycle);
            cycle += 1;
            assert!(cycle < 10_000, "the controller drains its writes");
        }
        assert!(m.request_fill(0, 100, Origin::Program));
    }
}
