//! A cache level seen through the request port (`port::Port`) by the one above it: the core
//! offers its first level the misses of its loads, stores and copy loops, and each level
//! offers the next the fills its MSHRs need. A level accepts a fill when the line is there
//! (answered after its hit latency), already being fetched (the request joins that MSHR), or
//! when it has an MSHR and write-back buffer room for a new miss. Responses carry the id of
//! the request they answer and the time they are due. A first-level fill completes for the
//! core by line (`Completed::Line`), since a core waits on lines rather than on ids.
//!
//! Write-backs between levels do not cross this port: they move into the level below at once,
//! with their bytes (a line in transit would be invisible to fills and bulk coherence; the
//! bandwidth between levels is not modelled). Memory-bound write-backs leave from the last
//! level through the memory devices' ports.

use super::hierarchy::Hierarchy;
use crate::port::{Port, Request, RequestKind, Response};

/// Level `level` of `hierarchy`, as the component above it sees it.
pub struct LevelPort<'a> {
    pub(super) hierarchy: &'a mut Hierarchy,
    pub(super) level: usize,
}

impl Port for LevelPort<'_> {
    fn can_accept(&self, req: &Request) -> bool {
        debug_assert!(
            req.kind != RequestKind::Writeback,
            "write-backs do not cross it"
        );
        let l = &self.hierarchy.levels[self.level];
        let core = req.thread as usize;
        let line = req.addr / l.line_bytes;
        let offset = (req.addr - line * l.line_bytes) as usize;
        let len = (req.bytes as usize).min(l.line_bytes as usize - offset);
        // The core looked into its first level before sending: only misses come to it. A
        // line without the sectors asked for is a miss (`Cache::access_bytes`).
        (self.level > 0
            && l.arrays[l.array_of[core]]
                .probe_bytes(line, offset, len)
                .is_some())
            || l.has_mshr(core, line)
            || (l.mshrs[core].len() < l.mshr_cap && l.can_allocate(core))
    }

    fn send(&mut self, req: &Request, fs: u64) {
        self.hierarchy.take_fill(self.level, req, fs);
    }

    fn take_responses(&mut self, out: &mut Vec<Response>) {
        out.append(&mut self.hierarchy.levels[self.level].responses);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::memory::MemoryRouter;
    use crate::port::Origin;

    const CORE_FS: u64 = 312_500;

    /// A 32-byte first level over a second level with 2 MSHRs and a 10-cycle hit.
    fn two_levels() -> Hierarchy {
        let config = Config::default()
            .apply_sets(&[
                "cache.level.0.line_bytes=32",
                "cache.level.0.size_kb=16",
                "cache.level.1.size_kb=64",
                "cache.level.1.mshrs=2",
                "cache.level.1.hit_cycles=10",
            ])
            .unwrap();
        let router = MemoryRouter::new(&config).unwrap();
        Hierarchy::new(&config.cache.level, router, 1, CORE_FS).unwrap()
    }

    fn fill(id: u32, addr: u64) -> Request {
        Request {
            id: Some(id),
            addr,
            bytes: 32,
            kind: RequestKind::Read,
            origin: Origin::Program,
            thread: 0,
        }
    }

    #[test]
    fn a_level_answers_a_hit_after_its_latency_and_refuses_a_miss_without_an_mshr() {
        let mut h = two_levels();
        h.insert_in(1, 0, 0, &[7; 64], false, Origin::Program);
        let mut l2 = h.port(1);
        // A hit: answered 10 core cycles after it was sent, under the sender's id.
        assert!(l2.can_accept(&fill(5, 32)));
        l2.send(&fill(5, 32), 1_000);
        let mut out = Vec::new();
        l2.take_responses(&mut out);
        assert_eq!(out, vec![(5, 1_000 + 10 * CORE_FS)]);
        // Two misses take the two MSHRs; a third line is refused, a request for a line
        // already being fetched joins its MSHR.
        l2.send(&fill(6, 64), 1_000);
        l2.send(&fill(7, 128), 1_000);
        assert!(!l2.can_accept(&fill(8, 192)));
        assert!(l2.can_accept(&fill(9, 96)), "same 64-byte line as 64");
        l2.send(&fill(9, 96), 1_000);
        assert_eq!(h.levels[1].mshrs[0].len(), 2);
        let waiting: Vec<_> = h.levels[1].mshrs[0][0].waiters.clone();
        assert_eq!(waiting, vec![6, 9]);
        // Nothing is due before the fills complete.
        let mut out = Vec::new();
        h.port(1).take_responses(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_completed_fill_answers_every_request_that_joined_it() {
        let mut h = two_levels();
        h.port(1).send(&fill(6, 64), 0);
        h.port(1).send(&fill(9, 96), 0);
        let below = h.levels[1].mshrs[0][0].id;
        h.complete(below, 4_000_000);
        let mut out = Vec::new();
        h.port(1).take_responses(&mut out);
        assert_eq!(out, vec![(6, 4_000_000), (9, 4_000_000)]);
        assert!(h.levels[1].arrays[0].probe(1).is_some(), "the line is in");
    }

    #[test]
    fn the_core_sends_its_first_level_misses_through_the_port() {
        let mut h = two_levels();
        assert!(h.request_fill(0, 3, Origin::Program, false));
        assert!(h.levels[0].has_mshr(0, 3));
        // The first level hands the fill to the second through the second's port.
        assert!(h.pump(0));
        assert!(h.levels[0].out_fills.is_empty());
        assert!(
            h.levels[1].has_mshr(0, 1),
            "32-byte line 3 is in 64-byte line 1"
        );
    }
}
