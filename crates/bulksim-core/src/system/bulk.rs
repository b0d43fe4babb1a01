//! The bulk coordinator: the one place that decides how a copy or an initialization runs
//! and the one record of the bulk work in flight. A memcpy or meminit event, a
//! copy-on-write copy or a first-touch zeroing becomes either a memcpy routine the core
//! runs (`system.memcpy`: its loads and stores, movblks and dce_rowclone chunks), or a core
//! job by `system.bulk_mechanism`: `cpu` moves every line through the first cache level,
//! `mc_dma`, `rowclone` and `rowclone_zi` do the memory controller's coherence work over
//! every level and hand the operation to the memory router. Every operation below the
//! caches, a core's job or a chunk handed down by the copy engines' front
//! (`dram_chunks.rs`), is in the one hazard record (`Hazards`) from its coherence work until
//! it completes: accesses to its destination wait, stores to a chunk's source wait, and a
//! conflicting operation waits before its coherence work. It also counts the operations and
//! the time cores wait for them.

use super::core::{Core, Job, LineTask, MemPhase};
use super::dram_chunks::{ChunkOutcome, DramChunks, Offer};
use super::stats::BulkWait;
use crate::bulk::{BulkKind, BulkOp};
use crate::cache::{Hierarchy, Origin};
use crate::config::{Config, InitMechanism, LineStores, MemcpyMode, SystemMechanism};
use crate::copy_engine::CopyEngines;
use crate::error::{Error, Result};
use crate::memory::MemorySide;
use crate::port::DueQueue;
use crate::workload::memcpy::{MemcpyCost, MemcpyExpansion, MemcpyKind};

/// One bulk operation below the caches, from its coherence work until it completes.
struct InFlight {
    op: BulkOp,
    /// The core whose job or copy it is.
    core: usize,
    /// The memory device's (device, operation id) once it took the operation.
    handle: Option<(usize, u32)>,
    /// A dce_rowclone chunk: the core went on (it does not wait for a job), and stores to
    /// the chunk's source wait until it completes.
    chunk: bool,
}

/// The one record of range hazards between bulk operations and the cores' accesses.
/// Operations in it never overlap (a conflicting one waits), so a destination range names
/// one. Kept in a vector and only searched: no order of it reaches results.
#[derive(Default)]
struct Hazards {
    ops: Vec<InFlight>,
}

impl Hazards {
    /// Whether `op` must wait for an operation in flight.
    fn conflicts(&self, op: &BulkOp) -> bool {
        self.ops.iter().any(|a| op.must_wait_for(&a.op))
    }

    /// Core `c`'s job `op` did its coherence work: accesses to its destination wait.
    fn begin(&mut self, op: BulkOp, core: usize) {
        self.ops.push(InFlight {
            op,
            core,
            handle: None,
            chunk: false,
        });
    }

    /// The memory device took job `op` as (device, id).
    fn submitted(&mut self, op: &BulkOp, device: usize, id: u32) {
        let range = op.dst_range();
        if let Some(a) = self
            .ops
            .iter_mut()
            .find(|a| !a.chunk && a.op.dst_range() == range)
        {
            a.handle = Some((device, id));
        }
    }

    /// Job `op` is over: its destination is free.
    fn finish(&mut self, op: &BulkOp) {
        let range = op.dst_range();
        if let Some(i) = self.ops.iter().position(|a| a.op.dst_range() == range) {
            self.ops.swap_remove(i);
        }
    }

    /// Core `core`'s chunk `op`, taken as (device, id), did its coherence work.
    fn hand_down(&mut self, op: BulkOp, core: usize, device: usize, id: u32) {
        self.ops.push(InFlight {
            op,
            core,
            handle: Some((device, id)),
            chunk: true,
        });
    }

    /// Whether an operation in flight writes the byte at `pa`.
    fn dst_blocked(&self, pa: u64) -> bool {
        self.ops.iter().any(|a| {
            let (s, e) = a.op.dst_range();
            (s..e).contains(&pa)
        })
    }

    /// Whether a handed-down chunk still reads a byte of [a, b).
    fn chunk_source_held(&self, a: u64, b: u64) -> bool {
        self.ops
            .iter()
            .any(|h| h.chunk && h.op.src_range().is_some_and(|(s0, s1)| a < s1 && s0 < b))
    }

    /// Whether core `c` has chunks handed down not yet done.
    fn chunks_pending(&self, c: usize) -> bool {
        self.ops.iter().any(|h| h.chunk && h.core == c)
    }

    /// Device `device` finished operation `id`: a chunk leaves the record; a job stays
    /// (its core finishes it, `finish`).
    fn completed(&mut self, device: usize, id: u32) -> Finished {
        let i = self
            .ops
            .iter()
            .position(|h| h.handle == Some((device, id)))
            .expect("a completed operation is a core's job or a handed-down chunk");
        let h = &mut self.ops[i];
        if h.chunk {
            self.ops.swap_remove(i);
            Finished::Chunk
        } else {
            h.handle = None;
            Finished::Job(h.core)
        }
    }
}

/// What the memory controller's completion of an operation was for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Finished {
    /// Core `c`'s job: it finishes at the core's next step.
    Job(usize),
    /// A chunk handed down: it is over.
    Chunk,
}

/// The bulk coordinator (see the module doc).
pub(super) struct BulkCoordinator {
    /// `system.bulk_mechanism`.
    mechanism: SystemMechanism,
    /// `cpu` copies and initializations allocate whole destination lines without reading them.
    allocate_full_lines: bool,
    /// Initializations run the `cpu` store loop whatever `mechanism` is.
    init_by_cpu: bool,
    /// `system.bulk_offload_min_bytes`.
    offload_min: u64,
    /// `system.memcpy` when a routine runs memcpys (None: `bulk`), and its costs.
    memcpy_kind: Option<MemcpyKind>,
    memcpy_cost: MemcpyCost,
    /// `dce_rowclone`: `copy_engine.dram_chunk_bytes` (0: the routine offers no chunks).
    dram_chunk_bytes: u64,
    memcpy_ops: u64,
    meminit_ops: u64,
    wait: BulkWait,
    hazards: Hazards,
    /// The copy engines (`copy_engine.policy`; None: no engines).
    engines: Option<CopyEngines>,
    /// dce_rowclone's decision for a chunk the routine offers (`dram_chunks.rs`).
    chunks: DramChunks,
    /// Operations the memory devices finished, held until the end of their last cycle
    /// (id, device), in the order the cores learn of them.
    finished_ops: DueQueue,
    /// Scratch space for the ids a device reports.
    taken: Vec<(u32, u64)>,
}

impl BulkCoordinator {
    /// From the config; the copy engines sit beside `mem`'s levels, clocked at `core_fs`.
    pub fn new(config: &Config, mem: &Hierarchy, core_fs: u64) -> BulkCoordinator {
        BulkCoordinator {
            mechanism: config.system.bulk_mechanism,
            allocate_full_lines: config.system.cpu_full_line_stores == LineStores::Allocate,
            init_by_cpu: config.system.init_mechanism == InitMechanism::Cpu,
            offload_min: config.system.bulk_offload_min_bytes,
            memcpy_kind: match config.system.memcpy {
                MemcpyMode::Bulk => None,
                MemcpyMode::Software => Some(MemcpyKind::Software),
                MemcpyMode::Movblk => Some(MemcpyKind::Movblk),
                MemcpyMode::SoftwareNt => Some(MemcpyKind::SoftwareNt),
            },
            memcpy_cost: MemcpyCost {
                call_instructions: config.memcpy.call_instructions as u64,
                word_bytes: config.memcpy.word_bytes as u64,
                check_instructions: config.memcpy.check_instructions as u64,
                loop_instructions: config.memcpy.loop_instructions as u64,
            },
            dram_chunk_bytes: match config.copy_engine.policy {
                crate::config::CopyEnginePolicy::DceRowclone
                    if config.system.memcpy == MemcpyMode::Movblk =>
                {
                    config.copy_engine.dram_chunk_bytes as u64
                }
                _ => 0,
            },
            memcpy_ops: 0,
            meminit_ops: 0,
            wait: BulkWait::default(),
            hazards: Hazards::default(),
            engines: CopyEngines::new(&config.copy_engine, mem, core_fs),
            chunks: DramChunks::new(config, core_fs),
            finished_ops: DueQueue::default(),
            taken: Vec::new(),
        }
    }

    /// Whether a memcpy routine (`system.memcpy`) runs copies, not a bulk job.
    pub fn routine_copies(&self) -> bool {
        self.memcpy_kind.is_some()
    }

    /// The memcpy routine's steps for a copy of `bytes` from `src` to `dst`, when a routine
    /// runs copies (counted as a memcpy). `line`: the first level's line size; `nt_line`:
    /// the memory's (non-temporal stores fill whole ones).
    pub fn routine(
        &mut self,
        src: u64,
        dst: u64,
        bytes: u64,
        line: u64,
        nt_line: u64,
    ) -> Option<MemcpyExpansion> {
        let kind = self.memcpy_kind?;
        self.memcpy_ops += 1;
        Some(
            MemcpyExpansion::new(kind, self.memcpy_cost, src, dst, bytes, line)
                .with_chunks(self.dram_chunk_bytes)
                .with_nt_line(nt_line),
        )
    }

    /// How operation `op` for `origin` runs, as a core's job: by `system.bulk_mechanism`
    /// (initializations by the core under `system.init_mechanism = "cpu"`); bytes across
    /// memory devices or below `system.bulk_offload_min_bytes` go through the core. `line`:
    /// the first level's line size (bytes).
    pub fn plan(&mut self, op: BulkOp, origin: Origin, mem: &Hierarchy, line: u64) -> Job {
        let mechanism = match op.kind {
            BulkKind::Copy { .. } => {
                self.memcpy_ops += 1;
                self.mechanism
            }
            BulkKind::Init { .. } => {
                self.meminit_ops += 1;
                if self.init_by_cpu {
                    SystemMechanism::Cpu
                } else {
                    self.mechanism
                }
            }
        };
        // Bytes that cross memory devices can only move through the cores; pieces below the
        // offload granularity are the core's too.
        let mechanism = if mem.memory.within_one_device(&op) && op.bytes >= self.offload_min {
            mechanism
        } else {
            SystemMechanism::Cpu
        };
        match mechanism {
            SystemMechanism::Cpu => {
                let mut tasks = Vec::new();
                let (mut d, end) = op.dst_range();
                while d < end {
                    let len = ((d / line + 1) * line).min(end) - d;
                    let (src, value) = match op.kind {
                        BulkKind::Copy { src } => (Some(src + (d - op.dst)), 0),
                        BulkKind::Init { value } => (None, value),
                    };
                    tasks.push(LineTask {
                        src,
                        dst: d,
                        len,
                        value,
                    });
                    d += len;
                }
                Job::Lines {
                    done: vec![false; tasks.len()],
                    waiting_at: vec![0; tasks.len()],
                    all_waiting: (0, 0),
                    tasks,
                    next: 0,
                    origin,
                }
            }
            m => {
                let (d0, d1) = op.dst_range();
                // Zero-Insert puts in the lines the zeroing covers whole.
                let zero_insert =
                    m == SystemMechanism::RowcloneZi && op.kind == BulkKind::Init { value: 0 };
                Job::Memory {
                    op,
                    origin,
                    phase: MemPhase::Coherence,
                    writebacks_pending: 0,
                    zero_lines: if zero_insert {
                        {
                            let lb = mem.last_line_bytes();
                            (d0.div_ceil(lb), d1 / lb)
                        }
                    } else {
                        (0, 0)
                    },
                }
            }
        }
    }

    /// Advances core `c`'s first bulk job at `now`; whether anything happened. `lb`: the
    /// first level's line size (bytes); `width`: `core.width` (a core loop performs half as
    /// many lines a cycle).
    pub fn progress_job(
        &mut self,
        c: usize,
        core: &mut Core,
        mem: &mut Hierarchy,
        now: u64,
        (lb, width): (u64, usize),
    ) -> Result<bool> {
        let lookahead = 2 * mem.l1_ref().mshrs_free(c).max(1) + 8;
        let per_cycle = (width / 2).max(1);
        let job = core.jobs.front_mut().expect("a job");
        match job {
            Job::Lines { .. } => {
                let (progress, finished) =
                    self.progress_lines(c, job, mem, lb, (lookahead, per_cycle));
                if finished {
                    core.jobs.pop_front();
                    return Ok(true);
                }
                Ok(progress)
            }
            Job::Memory { .. } => self.progress_memory_job(c, core, mem, now),
        }
    }

    /// The core loop's job (`cpu`): looks at the next `lookahead` lines, requests the fills
    /// they need and performs up to `per_cycle` whose lines are present. Returns whether
    /// anything happened and whether the job is done.
    fn progress_lines(
        &self,
        c: usize,
        job: &mut Job,
        mem: &mut Hierarchy,
        lb: u64,
        (lookahead, per_cycle): (usize, usize),
    ) -> (bool, bool) {
        let Job::Lines {
            tasks,
            done,
            waiting_at,
            all_waiting,
            next,
            origin,
        } = job
        else {
            unreachable!("a core loop's job")
        };
        let origin = *origin;
        let mut progress = false;
        let mut performed = 0;
        let end = (*next + lookahead).min(tasks.len());
        let epoch = mem.epoch;
        if all_waiting.0 == epoch && end <= all_waiting.1 {
            return (false, false);
        }
        // Once a fill is refused (MSHRs or write-back buffer full) every later one in this
        // look is too: nothing frees either until the epoch moves.
        let mut refused = false;
        let mut idle = true;
        for i in *next..end {
            if done[i] || waiting_at[i] == epoch {
                continue;
            }
            let task = tasks[i];
            let dst_line = task.dst / lb;
            // A whole destination line may be allocated without a read; one whose fill is
            // already in flight waits for it (its stores land first).
            let l1 = mem.l1();
            let allocate =
                self.allocate_full_lines && task.len == lb && l1.array(c).probe(dst_line).is_none();
            if allocate && (l1.has_mshr(c, dst_line) || !l1.can_allocate(c)) {
                waiting_at[i] = mem.epoch;
                continue;
            }
            let (ready, requested) =
                request_task_lines(mem, c, &task, (allocate, lb), origin, &mut refused);
            progress |= requested;
            if !ready {
                waiting_at[i] = mem.epoch;
                continue;
            }
            if performed >= per_cycle {
                idle = false;
                continue;
            }
            perform_task(mem, c, &task, (allocate, lb), origin);
            done[i] = true;
            performed += 1;
            progress = true;
        }
        // Every task looked at is done or waiting as of `epoch` (nothing moved it during the
        // look): the next look finds the same until it moves.
        if idle && mem.epoch == epoch {
            *all_waiting = (epoch, end);
        }
        while *next < tasks.len() && done[*next] {
            *next += 1;
        }
        (progress, *next == tasks.len())
    }

    /// A job below the caches: coherence work, write-backs, the operation handed to the
    /// memory router, and (Zero-Insert) zero lines put in once it is done.
    fn progress_memory_job(
        &mut self,
        c: usize,
        core: &mut Core,
        mem: &mut Hierarchy,
        now: u64,
    ) -> Result<bool> {
        let Some(Job::Memory {
            op,
            phase,
            writebacks_pending,
            zero_lines,
            ..
        }) = core.jobs.front()
        else {
            unreachable!("a memory job")
        };
        let (op, phase, pending, zero_lines) = (*op, *phase, *writebacks_pending, *zero_lines);
        match phase {
            MemPhase::Coherence => {
                let Some(wb) = self.try_coherence(c, &op, mem) else {
                    return Ok(false);
                };
                let next = if wb > 0 {
                    MemPhase::WaitWritebacks
                } else {
                    MemPhase::Submit
                };
                set_phase(core, next, wb);
                Ok(true)
            }
            MemPhase::WaitWritebacks => {
                if pending == 0 {
                    set_phase(core, MemPhase::Submit, 0);
                    return Ok(true);
                }
                Ok(false)
            }
            MemPhase::Submit => match mem.memory.try_enqueue_bulk(op, now) {
                Ok(Some((device, id))) => {
                    self.hazards.submitted(&op, device, id);
                    set_phase(core, MemPhase::Wait(id), 0);
                    Ok(true)
                }
                Ok(None) => Ok(false),
                Err(e) => Err(Error::Io(format!(
                    "internal error: a bulk operation the OS produced was refused: {e}"
                ))),
            },
            MemPhase::Wait(_) => Ok(false),
            MemPhase::Done => {
                let next = insert_zero_lines(mem, c, zero_lines);
                if next < zero_lines.1 {
                    if let Some(Job::Memory { zero_lines, .. }) = core.jobs.front_mut() {
                        zero_lines.0 = next;
                    }
                    return Ok(next > zero_lines.0);
                }
                self.hazards.finish(&op);
                core.jobs.pop_front();
                Ok(true)
            }
        }
    }

    /// Core `c`'s job `op` does its coherence work now unless lines of it are still being
    /// fetched (stores may wait on them), a level has no room for the write-backs it may
    /// cause, or an operation in flight conflicts; then it is in the hazard record. Returns
    /// the write-backs to wait for (None: not yet).
    fn try_coherence(&mut self, c: usize, op: &BulkOp, mem: &mut Hierarchy) -> Option<u32> {
        let (d0, d1) = op.dst_range();
        let fetching = mem.fetching_in(d0, d1)
            || op
                .src_range()
                .is_some_and(|(s0, s1)| mem.fetching_in(s0, s1));
        if fetching || !mem.levels.iter().all(|l| l.can_allocate(c)) || self.hazards.conflicts(op) {
            return None;
        }
        let wb = self.coherence(c, op, mem);
        self.hazards.begin(*op, c);
        Some(wb)
    }

    /// The memory controller's coherence work before an operation below the caches, on every
    /// level from the last up (so a newer copy higher up lands in memory last); returns the
    /// write-backs it must wait for.
    pub fn coherence(&self, c: usize, op: &BulkOp, mem: &mut Hierarchy) -> u32 {
        let in_cache_copy = matches!(
            self.mechanism,
            SystemMechanism::Rowclone | SystemMechanism::RowcloneZi
        );
        let mut waits = 0;
        let (d0, d1) = op.dst_range();
        for level in (0..mem.levels.len()).rev() {
            let lb = mem.levels[level].line_bytes;
            let arrays = mem.levels[level].arrays.len();
            let whole = |line: u64| line * lb >= d0 && (line + 1) * lb <= d1;
            for line in d0 / lb..d1.div_ceil(lb) {
                for k in 0..arrays {
                    if !whole(line) && mem.coherence_write_back(level, k, line, c) {
                        waits += 1;
                    }
                    mem.invalidate(level, k, line);
                }
            }
            let BulkKind::Copy { src } = op.kind else {
                continue;
            };
            let delta = src as i128 - op.dst as i128;
            let aligned = delta.rem_euclid(lb as i128) == 0;
            for line in src / lb..(src + op.bytes).div_ceil(lb) {
                for k in 0..arrays {
                    let array = &mem.levels[level].arrays[k];
                    let Some(way) = array.probe(line) else {
                        continue;
                    };
                    if !array.is_dirty(way) {
                        continue;
                    }
                    let dst_line = ((line * lb) as i128 - delta) as u64 / lb;
                    // (A partially valid line, `copy_engine.partial_line = "sector"`, is
                    // written back instead: its invalid sectors are no data to copy.)
                    if in_cache_copy && aligned && whole(dst_line) && array.is_whole(way) {
                        // RowClone: copy the dirty line in the cache under the destination's
                        // tag; DRAM's stale copy of it is overwritten there.
                        let data = crate::cache::LineBuf::from_slice(array.data(way));
                        mem.insert_in(level, k, dst_line, data.as_slice(), true, Origin::Copy);
                    } else if mem.coherence_write_back(level, k, line, c) {
                        waits += 1;
                    }
                }
            }
        }
        waits
    }

    /// Whether an operation in flight writes the byte at `pa` (an access to it waits).
    pub fn dst_blocked(&self, pa: u64) -> bool {
        self.hazards.dst_blocked(pa)
    }

    /// Whether no bulk operation is in flight below the caches.
    pub fn idle(&self) -> bool {
        self.hazards.ops.is_empty()
    }

    /// Core `c`'s chunk `op`, taken by the memory device as (device, id), did its coherence
    /// work: the core goes on while it runs.
    pub fn hand_down(&mut self, op: BulkOp, core: usize, device: usize, id: u32) {
        self.hazards.hand_down(op, core, device, id);
    }

    /// Whether a store to [a, b) must wait: a handed-down chunk still reads those bytes.
    pub fn chunk_source_held(&self, a: u64, b: u64) -> bool {
        self.hazards.chunk_source_held(a, b)
    }

    /// Whether core `c` has chunks handed down not yet done.
    pub fn chunks_pending(&self, c: usize) -> bool {
        self.hazards.chunks_pending(c)
    }

    /// Takes the operations memory device `device` finished (each done at the end of a
    /// device cycle of `period_fs`) into the queue of finished operations.
    #[inline]
    pub fn collect_finished_ops(&mut self, mem: &mut Hierarchy, device: usize, period_fs: u64) {
        mem.router_mut().devices[device]
            .channels
            .take_completed_ops(&mut self.taken);
        for (id, done) in self.taken.drain(..) {
            self.finished_ops.push(done * period_fs, id, device as u32);
        }
    }

    /// The first finished operation in order when it is due by `now`: (time, id, device).
    #[inline]
    pub fn peek_finished(&self, now: u64) -> Option<(u64, u32, u32)> {
        self.finished_ops.peek_due(now)
    }

    /// Removes the first finished operation (the one `peek_finished` showed): what it
    /// finished (`Finished::Job(core)` when a core's job waited for it).
    pub fn take_finished(&mut self) -> Finished {
        let (_, id, device) = self.finished_ops.pop().expect("peeked");
        self.hazards.completed(device as usize, id)
    }

    /// When the next finished operation is due (u64::MAX: none is held).
    pub fn next_finished_fs(&self) -> u64 {
        self.finished_ops.next_fs()
    }

    /// Core `c` waited `fs` for a job of `origin` (counted when it ends).
    pub fn count_wait(&mut self, origin: Origin, fs: u64) {
        self.wait.count(origin, fs);
    }

    /// (memcpy operations, meminit operations, the cores' waits) for the stats.
    pub fn counts(&self) -> (u64, u64, BulkWait) {
        (self.memcpy_ops, self.meminit_ops, self.wait.finished())
    }

    /// `system.bulk_mechanism` as the stats name it (its config name, `SystemMechanism::name`,
    /// the one conversion to text).
    pub fn mechanism_name(&self) -> &'static str {
        self.mechanism.name()
    }

    /// Whether core `c`'s access to the byte at `pa` (a store: `write`) must wait for bulk
    /// work: an operation in flight writes it, a handed-down chunk still reads it (a
    /// store), or the core's copy engine holds it (`engine_holds`). `line`: the first
    /// level's line size.
    pub fn access_waits(
        &mut self,
        c: usize,
        pa: u64,
        write: bool,
        mem: &Hierarchy,
        line: u64,
    ) -> bool {
        self.dst_blocked(pa)
            || (write && self.chunk_source_held(pa, pa + 1))
            || self.engine_holds(c, pa, mem, line)
    }

    /// Whether core `c`'s access to the line holding `pa` must wait for its copy engine: the
    /// first level is locked while the engine works, and a movblk not yet performed holds
    /// the ranges it reads and writes (`copy_engine.ordering`). Counts the stall.
    fn engine_holds(&mut self, c: usize, pa: u64, mem: &Hierarchy, line: u64) -> bool {
        let Some(e) = &mut self.engines else {
            return false;
        };
        let first = pa - pa % line;
        if e.orders(mem, c, first, first + line) {
            e.stats.ordering_stall_cycles += 1;
            return true;
        }
        if mem.levels[0].locked_for(c) {
            e.stats.l1.lock_stall_cycles += 1;
            return true;
        }
        false
    }

    /// The copy engines, if any.
    pub fn engines(&self) -> Option<&CopyEngines> {
        self.engines.as_ref()
    }

    /// The copy engines, if any, to step or to queue a movblk.
    pub fn engines_mut(&mut self) -> Option<&mut CopyEngines> {
        self.engines.as_mut()
    }

    /// Whether a copy engine has work.
    pub fn engines_busy(&self) -> bool {
        self.engines.as_ref().is_some_and(CopyEngines::busy)
    }

    /// Whether core `c` has copies not yet done: movblks in its engines or chunks handed
    /// down (its exit waits for them: their writes are the program's).
    pub fn copies_pending(&self, c: usize, mem: &Hierarchy) -> bool {
        self.engines.as_ref().is_some_and(|e| e.busy_for(mem, c)) || self.chunks_pending(c)
    }

    /// dce_rowclone's tag probe time (fs).
    pub fn chunk_probe_fs(&self) -> u64 {
        self.chunks.probe_fs()
    }

    /// Core `c` offers chunk `op` (its source's last byte at `src_last`) at `now`: declined,
    /// retried, or handed down with RowClone's coherence work and recorded until it
    /// completes. `line`: the first level's line size (the engines' blocks).
    pub fn offer_chunk(
        &mut self,
        chunk: (BulkOp, u64),
        c: usize,
        mem: &mut Hierarchy,
        now: u64,
        line: u64,
    ) -> Result<ChunkOutcome> {
        let op = chunk.0;
        let conflicts = self.hazards.conflicts(&op);
        let engines = self.engines.as_mut().expect("engines");
        let (device, id) = match self.chunks.offer(chunk, c, mem, engines, conflicts, now)? {
            Offer::Outcome(outcome) => return Ok(outcome),
            Offer::Accepted(device, id) => (device, id),
        };
        let waits = self.coherence(c, &op, mem);
        debug_assert_eq!(waits, 0, "aligned whole lines need no write-back");
        self.hand_down(op, c, device, id);
        let s = &mut self.engines.as_mut().expect("engines").stats.dram;
        s.chunks += 1;
        s.copies += 1;
        s.blocks += op.bytes / line;
        Ok(ChunkOutcome::HandedDown)
    }

    /// Whether the routine stores non-temporally (`system.memcpy = "software_nt"`).
    pub fn non_temporal(&self) -> bool {
        self.memcpy_kind == Some(MemcpyKind::SoftwareNt)
    }
}

/// Core `core`'s first job, below the caches, goes to phase `p` with `wb` write-backs to
/// wait for.
fn set_phase(core: &mut Core, p: MemPhase, wb: u32) {
    if let Some(Job::Memory {
        phase,
        writebacks_pending,
        ..
    }) = core.jobs.front_mut()
    {
        *phase = p;
        *writebacks_pending = wb;
    }
}

/// The lines task `task` needs in core `c`'s first level (the destination unless it is
/// allocated whole, `allocate`, and the one or two source lines; `lb`: the line size):
/// requests the fills of those missing, none once one is refused (`refused`). Returns
/// whether all are present and whether a fill was requested.
fn request_task_lines(
    mem: &mut Hierarchy,
    c: usize,
    task: &LineTask,
    (allocate, lb): (bool, u64),
    origin: Origin,
    refused: &mut bool,
) -> (bool, bool) {
    let mut lines = [0u64; 3];
    let mut count = 0;
    if !allocate {
        lines[0] = task.dst / lb;
        count = 1;
    }
    if let Some(s) = task.src {
        lines[count] = s / lb;
        lines[count + 1] = (s + task.len - 1) / lb;
        count += 2;
    }
    let (mut ready, mut requested) = (true, false);
    for &l in &lines[..count] {
        if mem.l1().array(c).probe(l).is_none() {
            ready = false;
            if !mem.l1().has_mshr(c, l) {
                if !*refused && mem.request_fill(c, l, origin, false) {
                    requested = true;
                } else {
                    *refused = true;
                    break;
                }
            }
        }
    }
    (ready, requested)
}

/// Performs task `task` in core `c`'s first level, its lines present: the source bytes (or
/// the value) written into the destination line, or a whole new line inserted (`allocate`).
fn perform_task(
    mem: &mut Hierarchy,
    c: usize,
    task: &LineTask,
    (allocate, lb): (bool, u64),
    origin: Origin,
) {
    let dst_line = task.dst / lb;
    let mut line_buf = [task.value; crate::cache::array::MAX_LINE];
    let bytes = &mut line_buf[..task.len as usize];
    if let Some(s) = task.src {
        // Source bytes line by line (a misaligned piece spans two).
        let mut k = 0;
        while k < bytes.len() {
            let a = s + k as u64;
            let offset = (a % lb) as usize;
            let n = (lb as usize - offset).min(bytes.len() - k);
            let cache = mem.l1().array(c);
            let way = cache.probe(a / lb).expect("present");
            bytes[k..k + n].copy_from_slice(&cache.data(way)[offset..offset + n]);
            k += n;
        }
    }
    if allocate {
        mem.insert(c, dst_line, &line_buf[..lb as usize], true, origin);
    } else {
        let cache = mem.l1().array(c);
        let way = cache.probe(dst_line).expect("present");
        cache.write(way, (task.dst % lb) as usize, bytes, origin);
    }
}

/// Zero-Insert: puts clean zero lines [next, end) of `zero_lines` into core `c`'s
/// last-level array while it has room; returns the first line not put in.
fn insert_zero_lines(mem: &mut Hierarchy, c: usize, (mut next, end): (u64, u64)) -> u64 {
    let zero = [0u8; crate::cache::array::MAX_LINE];
    let zero = &zero[..mem.last_line_bytes() as usize];
    let (last, array) = (mem.last_level(), mem.last_array_of(c));
    while next < end && mem.last_can_allocate(array) {
        mem.insert_in(last, array, next, zero, false, Origin::Init);
        next += 1;
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(src: u64, dst: u64, bytes: u64) -> BulkOp {
        BulkOp {
            kind: BulkKind::Copy { src },
            dst,
            bytes,
        }
    }

    /// One record for a core's job and a handed-down chunk: what waits on each, and what a
    /// completion means for each.
    #[test]
    fn one_record_for_jobs_and_chunks() {
        let mut h = Hazards::default();
        let job = copy(0x5000, 0x1000, 0x1000);
        let chunk = copy(0xa000, 0x8000, 0x1000);
        h.begin(job, 2);
        h.submitted(&job, 0, 7);
        h.hand_down(chunk, 3, 1, 7);
        // Accesses to either destination wait; a store waits on the chunk's source only.
        assert!(h.dst_blocked(0x1fff) && h.dst_blocked(0x8000));
        assert!(!h.dst_blocked(0x2000) && !h.dst_blocked(0x5000));
        assert!(h.chunk_source_held(0xaff0, 0xb010));
        assert!(!h.chunk_source_held(0x5000, 0x5001));
        assert!(h.chunks_pending(3) && !h.chunks_pending(2));
        // An operation reading a job's destination waits for it.
        assert!(h.conflicts(&copy(0x1800, 0x20000, 64)));
        assert!(!h.conflicts(&copy(0x30000, 0x20000, 64)));
        // Same id, other device: the job's completion names its core and keeps it recorded
        // until the core finishes it.
        assert_eq!(h.completed(0, 7), Finished::Job(2));
        assert!(h.dst_blocked(0x1000));
        h.finish(&job);
        assert!(!h.dst_blocked(0x1000));
        assert_eq!(h.completed(1, 7), Finished::Chunk);
        assert!(!h.dst_blocked(0x8000) && !h.chunk_source_held(0xa000, 0xa001));
        assert!(h.ops.is_empty());
    }
}
