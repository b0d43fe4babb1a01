//! Requests issued below the caches: a post-LLC trace's reads and write-backs are what
//! missed or left the last level of the run that wrote the trace, so they go straight to
//! memory, except where bulk work (which that run never saw) has put the line in the caches
//! since: a read of such a line hits there, a write-back takes it out. Under CPM the
//! migrating page's write-backs are held as if pinned in the last level.

use super::hierarchy::{is_bulk_work, write_masked, Hierarchy, Pending};
use super::level::Outgoing;
use crate::port::{Origin, Request, RequestKind};

impl Hierarchy {
    /// A read of the memory line holding `addr` for `core`, issued below the caches (a
    /// post-LLC trace's read: the trace already is what missed the last level). It goes to
    /// memory after the last level's fills waiting before it; its completion reports the
    /// first-level line of `addr` to `core` (`Completed::Line`), and nothing is cached.
    pub fn read_below_caches(&mut self, core: usize, addr: u64) {
        let first_line = addr / self.levels[0].line_bytes;
        let bytes = self.last_line_bytes();
        let id = self.new_id(Pending::BelowCaches {
            core,
            line: first_line,
        });
        if let Some(level) = self.trace_hit(core, addr) {
            // The trace's record is a miss in the caches of the run that wrote it, which
            // never saw the bulk work that put the line here since: a hit now.
            // As a fill from the first level would take: each level's lookup, and the port
            // down to each lower level and back.
            let latency = self.levels[0].hit_fs
                + self.levels[1..=level]
                    .iter()
                    .map(|l| l.hit_fs + 2 * l.port_fs)
                    .sum::<u64>();
            self.hit_responses.push((id, self.now + latency));
            return;
        }
        if !self.held_writebacks.is_empty() && self.held_writebacks.contains(&(addr / bytes)) {
            // A line CPM holds for its migrating page: a last-level hit.
            let l = &self.levels[self.last()];
            self.hit_responses.push((id, self.now + l.hit_fs));
            return;
        }
        let req = Request::fill(
            Some(id),
            addr / bytes,
            bytes,
            false,
            Origin::Program,
            core as u32,
        );
        let out = Outgoing {
            req,
            not_before: 0,
            issued: self.now,
            buffer: None,
        };
        self.send_to_memory(out, self.now, Origin::Program);
    }

    /// A write-back of the memory line holding `addr` for `core`, issued below the caches (a
    /// post-LLC trace's dirty eviction): posted to memory after the last level's write-backs
    /// waiting before it. Its data is what memory holds (a trace carries no bytes).
    pub fn write_below_caches(&mut self, core: usize, addr: u64) {
        let bytes = self.last_line_bytes();
        self.take_out_for_trace(core, addr);
        if self.pinned.is_some_and(|(a, b)| (a..b).contains(&addr)) {
            // CPM: the migrating page's write-backs stay in the last level until the copy
            // is done ("an L2 of pinned lines only" for a post-LLC trace).
            self.held_writebacks.insert(addr / bytes);
            return;
        }
        let req = Request {
            id: None,
            addr: addr / bytes * bytes,
            bytes: bytes as u32,
            kind: RequestKind::Writeback,
            origin: Origin::Program,
            thread: core as u32,
        };
        self.send_writeback_to_memory(req, Origin::Program, None);
    }

    /// The first of `core`'s levels holding the first-level line at `addr` whole, put there
    /// by bulk work (most recently used there now, the hit counted as a trace hit), if any: a
    /// post-LLC trace's read of such a line. Lines the program's own accesses brought in are
    /// passed over: the run that wrote the trace had them too, and missed.
    fn trace_hit(&mut self, core: usize, addr: u64) -> Option<usize> {
        let first = self.levels[0].line_bytes;
        for (i, l) in self.levels.iter_mut().enumerate() {
            let a = &mut l.arrays[l.array_of[core]];
            let offset = (addr % l.line_bytes / first * first) as usize;
            let found = a.probe_bytes(addr / l.line_bytes, offset, first as usize);
            if let Some(way) = found.filter(|&w| is_bulk_work(a.origin(w))) {
                a.touch(way);
                l.trace_hits += 1;
                return Some(i);
            }
        }
        None
    }

    /// A post-LLC trace's write-back of the line at `addr`: the run that wrote the trace
    /// evicted it from its caches, so where bulk work put it in `core`'s levels it leaves
    /// them too, its bytes (the last level's first, the first level's last: the newest)
    /// written into memory, where the write-back finds them.
    fn take_out_for_trace(&mut self, core: usize, addr: u64) {
        // The memory line the write-back covers, in each level's (smaller or equal) lines.
        let bytes = self.last_line_bytes();
        let start = addr / bytes * bytes;
        for l in self.levels.iter_mut().rev() {
            let a = &mut l.arrays[l.array_of[core]];
            for line in start / l.line_bytes..(start + bytes) / l.line_bytes {
                let Some(way) = a.probe(line).filter(|&w| is_bulk_work(a.origin(w))) else {
                    continue;
                };
                if a.is_dirty(way) {
                    write_masked(
                        &mut self.memory,
                        line * l.line_bytes,
                        a.data(way),
                        &a.sectors(way),
                    );
                }
                a.invalidate(line);
                l.trace_takeouts += 1;
            }
        }
    }
}
