//! Copy engines beside the cache levels (the copy-engines paper, seed 001; docs/copy_engines.md):
//! the `movblk` operation a core retires into its first-level engine's queue, the policy
//! that decides where each movblk runs (`copy_engine.policy`: `ce_l1` always beside the first
//! level; `dce` and `dce_nt` beside the first level when one of its source lines is there,
//! else beside the second, whose engine always copies), and the engines of the whole system
//! with their counters; under `dce_rowclone` also the counters of the destination chunks
//! the movblk memcpy hands to the memory controller. One engine's steps and timing are `engine`'s. The core-side rules
//! (a movblk waits for every older instruction, younger accesses overlapping a queued
//! movblk wait for it, a locked first level refuses the core's accesses) are the system's,
//! which asks the engines here what is queued and locked.

pub mod engine;

use crate::cache::Hierarchy;
use crate::config::{CopyEngineConfig, CopyEnginePolicy, CopyOrdering, PartialLine};
use crate::port::Movblk;
use crate::stat_struct::stat_struct;
use engine::{Costs, Engine, Outcome};

/// How a policy places a movblk and its fetched source lines.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// `ce_l1`: every source miss is fetched at once (no decision to pass down).
    pub fetch_at_once: bool,
    /// A non-last engine allocates the source lines it fetches.
    pub allocate: bool,
    /// The last engine allocates the source lines it fetches.
    pub allocate_last: bool,
}

stat_struct! {
    /// Counters of the engines beside one cache level, summed over its arrays.
    pub struct EngineStats {
        pub copies: u64 = sum("movblks", "movblks this level's engines copied (wrote the destination here)"),
        pub passed_down: u64 = sum("movblks", "movblks this level's engines sent to the engine below (two addresses over the port)"),
        pub busy_cycles: u64 = sum("core cycles", "cycles the engines worked on movblks (from a movblk's start to its write or its message's arrival below; two movblks in the pipeline count once), summed over arrays"),
        pub source_fetches: u64 = sum("lines", "source lines the engines asked the level below for"),
        pub dst_discards: u64 = sum("lines", "destination lines dropped from this level without a write-back before a movblk went down"),
        pub dst_discards_dirty: u64 = sum("lines", "of dst_discards, lines that were dirty (their write-back is saved)"),
        pub lock_stall_cycles: u64 = sum("core cycles", "cycles a request to this level waited because its engine held the array (first level: a core's load or store; below: the fills waiting at the port above)"),
    }
}

stat_struct! {
    /// The copy engines (`copy_engine.policy`): movblks by where they ran.
    pub struct CopyEngineStats {
        pub movblks: u64 = sum("movblks", "movblk instructions retired into the first-level engines' queues"),
        pub fifo_full_cycles: u64 = sum("core cycles", "cycles a core's movblk waited for room in its first-level engine's queue"),
        pub ordering_stall_cycles: u64 = sum("core cycles", "cycles a core's load or store waited for a queued movblk it overlaps (copy_engine.ordering)"),
        pub l1: EngineStats = nested(),
        pub l2: EngineStats = nested(),
        pub dram: DramChunkStats = nested(),
    }
}

stat_struct! {
    /// Destination chunks the movblk memcpy offered to the memory controller
    /// (`copy_engine.policy = "dce_rowclone"`); zero under every other policy.
    pub struct DramChunkStats {
        pub chunks: u64 = sum("chunks", "whole destination chunks (copy_engine.dram_chunk_bytes) the movblk memcpy offered to the memory controller"),
        pub copies: u64 = sum("chunks", "of chunks, those the memory controller ran as RowClone operations (no cache level held a source line, or copy_engine.dram_rule = always)"),
        pub blocks: u64 = sum("movblks", "first-level lines those chunks copied: the movblks they stand for"),
        pub declined_cached: u64 = sum("chunks", "of chunks, those run as movblks because a cache level held one of their source lines"),
        pub declined_layout: u64 = sum("chunks", "of chunks, those run as movblks because their source had another offset within a last-level line than their destination, or was not one physically contiguous range within one memory device"),
    }
}

pub struct CopyEngines {
    /// One first-level engine per first-level array (per core when private).
    pub first: Vec<Engine>,
    /// One second-level engine per second-level array (none under `ce_l1`).
    pub second: Vec<Engine>,
    placement: Placement,
    costs: Costs,
    pub fifo_depth: usize,
    pub ordering: CopyOrdering,
    pub stats: CopyEngineStats,
}

impl CopyEngines {
    /// The engines `cfg` asks for over `h`; None for `policy = "none"`.
    pub fn new(cfg: &CopyEngineConfig, h: &Hierarchy, core_fs: u64) -> Option<CopyEngines> {
        let levels = cfg.policy.engine_levels();
        if levels == 0 {
            return None;
        }
        let engines = |level: usize| {
            (0..h.levels[level].arrays.len())
                .map(|a| Engine::new(level, a, level + 1 == levels))
                .collect::<Vec<_>>()
        };
        let placement = match cfg.policy {
            CopyEnginePolicy::CeL1 => Placement {
                fetch_at_once: true,
                allocate: true,
                allocate_last: true,
            },
            CopyEnginePolicy::Dce => Placement {
                fetch_at_once: false,
                allocate: true,
                allocate_last: true,
            },
            CopyEnginePolicy::DceNt | CopyEnginePolicy::DceRowclone => Placement {
                fetch_at_once: false,
                allocate: false,
                allocate_last: cfg.nt_last_level,
            },
            CopyEnginePolicy::None => unreachable!("no engines"),
        };
        Some(CopyEngines {
            first: engines(0),
            second: if levels > 1 { engines(1) } else { Vec::new() },
            placement,
            costs: Costs {
                core_fs,
                realign_fs: cfg.realign_cycles as u64 * core_fs,
                parallel_reads: cfg.parallel_reads,
                pipeline: cfg.pipeline,
                fetch_partial_dst: cfg.partial_line == PartialLine::Fetch,
                sector_partial_dst: cfg.partial_line == PartialLine::Sector,
            },
            fifo_depth: cfg.fifo_depth as usize,
            ordering: cfg.ordering,
            stats: CopyEngineStats::default(),
        })
    }

    /// Core `core`'s first-level engine.
    fn first_of(&self, h: &Hierarchy, core: usize) -> usize {
        h.levels[0].array_of[core]
    }

    /// Whether core `core`'s engine queue has room for another movblk.
    pub fn has_room(&self, h: &Hierarchy, core: usize) -> bool {
        self.first[self.first_of(h, core)].occupancy() < self.fifo_depth
    }

    /// Core `core` retires `op` into its first-level engine's queue at `now`.
    pub fn push(&mut self, h: &mut Hierarchy, op: Movblk, now: u64) {
        let e = self.first_of(h, op.core);
        self.first[e].queue.push_back((op, now));
        h.levels[0].locked[e] = true;
        self.stats.movblks += 1;
    }

    /// Whether a load or store of core `core` to [a, b) must wait for a movblk not yet
    /// performed (`copy_engine.ordering`).
    pub fn orders(&self, h: &Hierarchy, core: usize, a: u64, b: u64) -> bool {
        let e = &self.first[self.first_of(h, core)];
        match self.ordering {
            CopyOrdering::Serial => e.busy(),
            CopyOrdering::Overlap => e.unperformed().any(|op| op.overlaps(a, b)),
        }
    }

    /// Whether any engine holds a movblk of core `core`, queued or in progress.
    pub fn busy_for(&self, h: &Hierarchy, core: usize) -> bool {
        self.first[self.first_of(h, core)].busy()
            || self
                .second
                .iter()
                .any(|e| e.unperformed().any(|op| op.core == core))
    }

    /// Whether any engine has work.
    pub fn busy(&self) -> bool {
        self.first.iter().chain(&self.second).any(Engine::busy)
    }

    /// Does every engine step due by `now`, first-level engines first (what they pass down
    /// joins the second level's queue, arriving when its message has crossed the port).
    pub fn advance(&mut self, h: &mut Hierarchy, now: u64) {
        for i in 0..self.first.len() {
            loop {
                match self.first[i].advance(h, now, self.placement, &self.costs) {
                    Outcome::Nothing => break,
                    Outcome::PassDown(op, arrives) => {
                        let below = h.levels[1].array_of[op.core];
                        self.second[below].queue.push_back((op, arrives));
                        h.levels[1].locked[below] = true;
                    }
                }
            }
        }
        for e in &mut self.second {
            let out = e.advance(h, now, self.placement, &self.costs);
            debug_assert!(
                matches!(out, Outcome::Nothing),
                "the last engine always copies"
            );
        }
    }

    /// The counters, per level.
    pub fn stats(&self, h: &Hierarchy) -> CopyEngineStats {
        let mut s = self.stats.clone();
        let fs = self.costs.core_fs;
        for (engines, out) in [(&self.first, &mut s.l1), (&self.second, &mut s.l2)] {
            for e in engines {
                let c = &e.counts;
                out.copies += c.copies;
                out.passed_down += c.passed_down;
                out.busy_cycles += c.busy_fs / fs;
                out.source_fetches += c.fetches;
                out.dst_discards += c.dst_discards;
                out.dst_discards_dirty += c.dst_discards_dirty;
            }
        }
        s.l2.lock_stall_cycles += h.levels.get(1).map_or(0, |l| l.lock_waits);
        s
    }
}
