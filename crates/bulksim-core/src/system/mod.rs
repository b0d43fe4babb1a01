//! The full system: trace-driven out-of-order cores (one per initial thread; forked children
//! run on their parent's core when it waits or exits), a private write-back cache per core,
//! the OS memory manager, and the memory system below. Time is one integer clock in
//! femtoseconds shared by the core clock and the memory clock; the loop steps the cores every
//! core cycle while any can make progress and otherwise jumps to the next event (a fill, the
//! end of a bulk operation, a memory-controller event).
//!
//! Bulk work — memcpy/meminit events, copy-on-write copies and first-touch zeroing returned by
//! the OS — blocks the core that needs it and executes by `system.bulk_mechanism`: `cpu`
//! moves every line through the cache with loads and stores (write-allocate); `mc_dma`,
//! `rowclone` and `rowclone_zi` first do the memory controller's coherence work (RowClone
//! section 4.2.2: dirty source lines are written back, or under RowClone copied in the cache
//! under the destination's tag; destination lines are invalidated, partly covered dirty ones
//! written back first), then hand the operation to the memory system, whose `bulk.mechanism`
//! they set, and block requests to the destination until it completes. `rowclone_zi` also
//! inserts clean zero lines for every zeroed line.
//!
//! Processes share no writable memory (fork is copy-on-write), so the private caches need no
//! coherence protocol between them.

pub mod core;
pub mod memside;
pub mod stats;

use self::core::{Core, Job, LineTask, MemPhase, Slot, NO_LINE};
use crate::bulk::{BulkKind, BulkOp};
use crate::cache::{Cache, Origin, LINE};
use crate::config::{Config, InitMechanism, LineStores, Mechanism, SystemMechanism};
use crate::error::{Error, Result};
use crate::memory::MemorySystem;
use crate::os::allocator::{sites_from_mapper, FrameAllocator, PAGE};
use crate::os::{Os, Pid, Work};
use crate::workload::program::{thread_files, Event, ProgramReader};
use memside::{MemSide, Pending};
use stats::{BulkWait, CoreStats, SystemStats, ThreadStats};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ThreadState {
    NotStarted,
    Runnable,
    Waiting,
    Done,
}

struct Thread {
    reader: ProgramReader,
    pid: Option<Pid>,
    state: ThreadState,
    parent: Option<usize>,
    live_children: u32,
    stores: u64,
    instructions: u64,
    start_fs: u64,
    end_fs: u64,
}

const EV_TAG: u8 = 0;
const EV_OP: u8 = 1;

pub struct System {
    mechanism: SystemMechanism,
    /// `cpu` copies and initializations allocate whole destination lines without reading them.
    allocate_full_lines: bool,
    /// Initializations run the `cpu` store loop whatever `mechanism` is.
    init_by_cpu: bool,
    cores: Vec<Core>,
    threads: Vec<Thread>,
    os: Os,
    mem: MemSide,
    events: BinaryHeap<Reverse<(u64, u8, u32)>>,
    op_owner: HashMap<u32, usize>,
    active_dst: Vec<(u64, u64)>,
    core_fs: u64,
    tck_fs: u64,
    hit_fs: u64,
    width: usize,
    window: usize,
    now: u64,
    mem_next: u64,
    /// The last memory cycle ticked (a cycle is ticked once).
    mem_done: Option<u64>,
    memcpy_ops: u64,
    meminit_ops: u64,
    bulk_wait: BulkWait,
    buf: Vec<(u32, u64)>,
}

/// What dispatching one event did.
enum Step {
    /// Consumed; dispatch may go on.
    Next,
    /// Not dispatched (window or MSHRs full, or waiting on work): retry it later.
    Retry(Event, bool),
    /// Consumed, and the core must stop dispatching this cycle (bulk work, thread switch).
    Stop,
}

impl System {
    /// Builds the system for `config` and the workload at `path` (a file or a directory of
    /// per-thread traces).
    pub fn new(config: &Config, path: &Path) -> Result<System> {
        let mut config = config.clone();
        config.bulk.mechanism = match config.system.bulk_mechanism {
            SystemMechanism::Cpu => Mechanism::Cpu,
            SystemMechanism::McDma => Mechanism::McDma,
            SystemMechanism::Rowclone | SystemMechanism::RowcloneZi => Mechanism::Rowclone,
        };
        config.validate()?;
        let mut memory = MemorySystem::new(&config)?;
        memory.report_completed_ops();
        let reserved = memory.reserved_rows();
        let site = sites_from_mapper(memory.mapper(), |row| {
            reserved.is_some_and(|r| r.contains(row))
        });
        let frame_count = (memory.mapper().capacity() / PAGE) as usize;
        let frames = FrameAllocator::new(config.os.allocator, frame_count, site, config.os.seed);
        let mut os = Os::new(frames, config.os.fault_instructions as u64);
        let tck_fs = (memory.spec().tck_ns() * 1e6).round() as u64;
        let core_fs = (1e6 / config.system.core_ghz).round() as u64;
        let mut threads = Vec::new();
        for file in thread_files(path)? {
            let reader = ProgramReader::open(&file)?;
            threads.push(Thread {
                state: if reader.child {
                    ThreadState::NotStarted
                } else {
                    ThreadState::Runnable
                },
                reader,
                pid: None,
                parent: None,
                live_children: 0,
                stores: 0,
                instructions: 0,
                start_fs: 0,
                end_fs: 0,
            });
        }
        let mut cores = Vec::new();
        for (t, thread) in threads.iter_mut().enumerate() {
            if thread.state == ThreadState::Runnable {
                thread.pid = Some(os.new_process());
                let mut core = Core::new();
                core.thread = Some(t);
                cores.push(core);
            }
        }
        if cores.is_empty() {
            return Err(Error::Trace(format!(
                "{}: every thread is marked `child`; at least one must start the workload",
                path.display()
            )));
        }
        let cache_bytes = config.cache.size_kb as u64 * 1024;
        let core_count = cores.len();
        let cache_count = if config.cache.shared { 1 } else { core_count };
        let caches = (0..cache_count)
            .map(|_| {
                Cache::new(cache_bytes, config.cache.ways)
                    .map_err(|e| Error::Config(format!("cache: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(System {
            mechanism: config.system.bulk_mechanism,
            allocate_full_lines: config.system.cpu_full_line_stores == LineStores::Allocate,
            init_by_cpu: config.system.init_mechanism == InitMechanism::Cpu,
            cores,
            threads,
            os,
            mem: MemSide::new(
                memory,
                caches,
                core_count,
                config.core.mshrs as usize,
                config.cache.writeback_buffer as usize,
            ),
            events: BinaryHeap::new(),
            op_owner: HashMap::new(),
            active_dst: Vec::new(),
            core_fs,
            tck_fs,
            hit_fs: config.cache.hit_cycles as u64 * core_fs,
            width: config.core.width as usize,
            window: config.core.window as usize,
            now: 0,
            mem_next: u64::MAX,
            mem_done: None,
            memcpy_ops: 0,
            meminit_ops: 0,
            bulk_wait: BulkWait::default(),
            buf: Vec::new(),
        })
    }

    /// Runs the workload to the end.
    pub fn run(&mut self) -> Result<SystemStats> {
        let started = std::time::Instant::now();
        loop {
            self.tick_memory();
            self.deliver_events();
            let mut active = false;
            for c in 0..self.cores.len() {
                active |= self.step_core(c)?;
            }
            if !self.mem.outbox_empty() {
                self.wake_memory();
            }
            let threads_done = self
                .threads
                .iter()
                .all(|t| matches!(t.state, ThreadState::Done | ThreadState::NotStarted));
            if threads_done
                && self.events.is_empty()
                && self.mem.outbox_empty()
                && self.mem.memory.is_idle()
            {
                break;
            }
            let next = if active {
                self.now + self.core_fs
            } else {
                let mut t = self.events.peek().map_or(u64::MAX, |e| e.0 .0);
                if self.mem_next != u64::MAX {
                    t = t.min(self.mem_next * self.tck_fs);
                }
                for c in &self.cores {
                    if let Some(h) = c.head_ready() {
                        t = t.min(h);
                    }
                }
                if t == u64::MAX {
                    return Err(Error::Io(format!(
                        "internal error: the system stalled at {} ns with work pending",
                        self.now / 1_000_000
                    )));
                }
                t
            };
            // Next core-cycle boundary after now.
            self.now = next.div_ceil(self.core_fs).max(self.now / self.core_fs + 1) * self.core_fs;
        }
        let wall = started.elapsed().as_secs_f64();
        Ok(self.stats(wall))
    }

    /// The memory system has new work: tick it at the first cycle not yet ticked from now.
    fn wake_memory(&mut self) {
        let mut cycle = self.now.div_ceil(self.tck_fs);
        if let Some(done) = self.mem_done {
            cycle = cycle.max(done + 1);
        }
        self.mem_next = self.mem_next.min(cycle);
    }

    fn tick_memory(&mut self) {
        while self.mem_next != u64::MAX && self.mem_next * self.tck_fs <= self.now {
            let m = self.mem_next;
            self.mem_done = Some(m);
            self.mem.drain_outbox(m);
            let next = self.mem.memory.tick(m);
            self.mem.memory.take_completions(&mut self.buf);
            for (tag, done) in self.buf.drain(..) {
                self.events.push(Reverse((done * self.tck_fs, EV_TAG, tag)));
            }
            self.mem.memory.take_completed_ops(&mut self.buf);
            for (id, done) in self.buf.drain(..) {
                self.events.push(Reverse((done * self.tck_fs, EV_OP, id)));
            }
            self.mem_next = if next == u64::MAX {
                u64::MAX
            } else {
                next.max(m + 1)
            };
            if !self.mem.outbox_empty() {
                self.mem_next = self.mem_next.min(m + 1);
            }
        }
    }

    fn deliver_events(&mut self) {
        while let Some(&Reverse((t, kind, id))) = self.events.peek() {
            if t > self.now {
                break;
            }
            self.events.pop();
            if kind == EV_OP {
                let core = self.op_owner.remove(&id).expect("an owned operation");
                if let Some(Job::Memory { phase, .. }) = self.cores[core].jobs.front_mut() {
                    *phase = MemPhase::Done;
                }
                continue;
            }
            match self.mem.complete_tag(id) {
                Pending::Fill { core, line } => {
                    self.mem.complete_fill(core, line);
                    self.cores[core].line_arrived(line, t);
                }
                Pending::Writeback { core } => {
                    if let Some(Job::Memory {
                        writebacks_pending, ..
                    }) = self.cores[core].jobs.front_mut()
                    {
                        *writebacks_pending -= 1;
                    }
                }
            }
        }
    }

    /// One core cycle for core `c`; whether it made progress.
    fn step_core(&mut self, c: usize) -> Result<bool> {
        let mut progress = self.cores[c].retire(self.width, self.now) > 0;
        if let Some(t) = self.cores[c].thread {
            let n = self.cores[c].retired;
            self.threads[t].instructions = self.threads[t].instructions.max(n);
        }
        if self.cores[c].thread.is_none() {
            match self.cores[c].run_queue.pop_front() {
                Some(t) => {
                    self.cores[c].thread = Some(t);
                    self.threads[t].start_fs = self.now;
                    progress = true;
                }
                None => return Ok(progress),
            }
        }
        if !self.cores[c].jobs.is_empty() {
            let before = self.cores[c].jobs.len();
            let origin = self.cores[c].jobs[0].origin();
            let started = *self.cores[c].job_started_fs.get_or_insert(self.now);
            progress |= self.progress_job(c)?;
            if self.cores[c].jobs.len() < before {
                // Counted to the end of this core cycle, when the core may go on.
                self.bulk_wait
                    .add(origin, self.now + self.core_fs - started);
                self.cores[c].job_started_fs = None;
            }
            if !self.cores[c].jobs.is_empty() {
                return Ok(progress);
            }
            if self.cores[c].bulk_instruction {
                self.cores[c].bulk_instruction = false;
                let ready = self.now + self.core_fs;
                self.cores[c].window.push_back(Slot {
                    ready_fs: ready,
                    line: NO_LINE,
                });
            }
        }
        let mut budget = self.width;
        while budget > 0 {
            let t = self.cores[c].thread.expect("a running thread");
            // The fault path's kernel instructions go before the access that faulted.
            let kernel = std::mem::take(&mut self.cores[c].kernel_instructions);
            if kernel > 0 {
                let before = budget;
                if let Step::Retry(Event::Compute(left), _) =
                    self.dispatch(c, t, Event::Compute(kernel), &mut budget)?
                {
                    self.cores[c].kernel_instructions = left;
                }
                progress |= budget < before;
                if self.cores[c].kernel_instructions > 0 {
                    break;
                }
                continue;
            }
            let ev = match self.cores[c].pending.take() {
                Some(e) => e,
                None => self.threads[t].reader.next_event()?.unwrap_or(Event::Exit),
            };
            match self.dispatch(c, t, ev, &mut budget)? {
                Step::Next => progress = true,
                Step::Retry(ev, moved) => {
                    self.cores[c].pending = Some(ev);
                    progress |= moved;
                    break;
                }
                Step::Stop => {
                    progress = true;
                    break;
                }
            }
        }
        Ok(progress)
    }

    fn err(&self, t: usize, e: impl std::fmt::Display) -> Error {
        Error::Trace(format!("{}: {e}", self.threads[t].reader.location()))
    }

    fn push_slot(&mut self, c: usize, ready_fs: u64, line: u64) {
        self.cores[c].window.push_back(Slot { ready_fs, line });
    }

    fn blocked(&self, pa: u64) -> bool {
        self.active_dst.iter().any(|&(s, e)| (s..e).contains(&pa))
    }

    fn dispatch(&mut self, c: usize, t: usize, ev: Event, budget: &mut usize) -> Result<Step> {
        let full = self.cores[c].window.len() >= self.window;
        let pid = self.threads[t].pid.expect("a started thread");
        let next_cycle = self.now + self.core_fs;
        match ev {
            Event::Compute(n) => {
                let room = self.window - self.cores[c].window.len();
                let k = n.min(*budget as u64).min(room as u64);
                for _ in 0..k {
                    self.push_slot(c, next_cycle, NO_LINE);
                }
                *budget -= k as usize;
                if k < n {
                    return Ok(Step::Retry(Event::Compute(n - k), k > 0));
                }
                Ok(Step::Next)
            }
            Event::Load(va) | Event::Store(va) => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                let write = matches!(ev, Event::Store(_));
                let (pa, work) = self
                    .os
                    .translate(pid, t as u32, va, write)
                    .map_err(|e| self.err(t, e))?;
                if let Some(w) = work {
                    self.queue_work(c, w);
                    return Ok(Step::Retry(ev, true));
                }
                if self.blocked(pa) {
                    return Ok(Step::Retry(ev, false));
                }
                let line = pa / LINE;
                let hit = self.mem.cache_mut(c).probe(line).is_some();
                if !hit && !self.mem.request_fill(c, line, Origin::Program) {
                    return Ok(Step::Retry(ev, false));
                }
                let way = self.mem.cache_mut(c).access(line);
                if write {
                    let th = &mut self.threads[t];
                    th.stores += 1;
                    let value = ((t as u64 + 1) << 48 | th.stores).to_le_bytes();
                    let offset = (pa % LINE) as usize & !7;
                    match way {
                        Some(w) => self
                            .mem
                            .cache_mut(c)
                            .write(w, offset, &value, Origin::Program),
                        None => self.mem.add_store(c, line, offset, value),
                    }
                    self.push_slot(c, next_cycle, NO_LINE);
                } else if way.is_some() {
                    self.push_slot(c, self.now + self.hit_fs, NO_LINE);
                } else {
                    self.push_slot(c, u64::MAX, line);
                }
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::Memcpy { .. } | Event::Meminit { .. } => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                self.queue_bulk_event(c, t, pid, ev)?;
                self.cores[c].bulk_instruction = true;
                Ok(Step::Stop)
            }
            Event::Map { vaddr, bytes } | Event::MapPopulated { vaddr, bytes } => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                if matches!(ev, Event::Map { .. }) {
                    self.os.map(pid, vaddr, bytes);
                } else {
                    let frames = self
                        .os
                        .map_populated(pid, t as u32, vaddr, bytes)
                        .map_err(|e| self.err(t, e))?;
                    for frame in frames {
                        self.mem.zero_untimed(frame as u64 * PAGE, PAGE);
                    }
                }
                self.push_slot(c, next_cycle, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::Fork(child) => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                let ok = self
                    .threads
                    .get(child as usize)
                    .is_some_and(|th| th.state == ThreadState::NotStarted);
                if !ok {
                    return Err(self.err(
                        t,
                        format!("fork of thread {child}: there is no such thread marked `child` that has not started"),
                    ));
                }
                let child = child as usize;
                let child_pid = self.os.fork(pid);
                let th = &mut self.threads[child];
                th.pid = Some(child_pid);
                th.state = ThreadState::Runnable;
                th.parent = Some(t);
                self.threads[t].live_children += 1;
                self.cores[c].run_queue.push_back(child);
                self.push_slot(c, next_cycle, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            Event::Wait | Event::Exit => {
                if !self.cores[c].window.is_empty() {
                    return Ok(Step::Retry(ev, false));
                }
                if ev == Event::Wait {
                    if self.threads[t].live_children == 0 {
                        return Ok(Step::Next);
                    }
                    self.threads[t].state = ThreadState::Waiting;
                } else {
                    self.os.exit(pid);
                    let th = &mut self.threads[t];
                    th.state = ThreadState::Done;
                    th.end_fs = self.now;
                    if let Some(p) = th.parent {
                        let parent = &mut self.threads[p];
                        parent.live_children -= 1;
                        if parent.live_children == 0 && parent.state == ThreadState::Waiting {
                            parent.state = ThreadState::Runnable;
                            self.cores[c].run_queue.push_back(p);
                        }
                    }
                }
                self.threads[t].instructions = self.cores[c].retired;
                if ev == Event::Exit {
                    self.cores[c].last_exit_fs = self.now;
                }
                self.cores[c].thread = None;
                Ok(Step::Stop)
            }
        }
    }

    /// A fault's work as core `c`'s: the kernel's fault-path instructions, then the bulk job
    /// (zero a new frame, copy a shared one), if any.
    fn queue_work(&mut self, c: usize, w: Work) {
        self.cores[c].kernel_instructions += self.os.fault_instructions();
        let (op, origin) = match w {
            Work::Reuse => return,
            Work::Zero { frame } => (
                BulkOp {
                    kind: BulkKind::Init { value: 0 },
                    dst: frame as u64 * PAGE,
                    bytes: PAGE,
                },
                Origin::Init,
            ),
            Work::Copy { src, dst } => (
                BulkOp {
                    kind: BulkKind::Copy {
                        src: src as u64 * PAGE,
                    },
                    dst: dst as u64 * PAGE,
                    bytes: PAGE,
                },
                Origin::Copy,
            ),
        };
        self.queue_op(c, op, origin);
    }

    fn queue_op(&mut self, c: usize, op: BulkOp, origin: Origin) {
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
        let job = match mechanism {
            SystemMechanism::Cpu => {
                let mut tasks = Vec::new();
                let (mut d, end) = op.dst_range();
                while d < end {
                    let len = ((d / LINE + 1) * LINE).min(end) - d;
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
                        (d0.div_ceil(LINE), d1 / LINE)
                    } else {
                        (0, 0)
                    },
                }
            }
        };
        self.cores[c].jobs.push_back(job);
    }

    /// A memcpy/meminit event: translate page by page (faults queue their work first), then
    /// one physical operation per piece that stays within a page on both sides.
    fn queue_bulk_event(&mut self, c: usize, t: usize, pid: Pid, ev: Event) -> Result<()> {
        let (src, dst, bytes, value) = match ev {
            Event::Memcpy { src, dst, bytes } => (Some(src), dst, bytes, 0),
            Event::Meminit { dst, bytes, value } => (None, dst, bytes, value),
            _ => unreachable!("a bulk event"),
        };
        let mut done = 0;
        while done < bytes {
            let d = dst + done;
            let mut len = (PAGE - d % PAGE).min(bytes - done);
            let src_pa = match src {
                Some(s) => {
                    let s = s + done;
                    len = len.min(PAGE - s % PAGE);
                    let (pa, work) = self
                        .os
                        .translate(pid, t as u32, s, false)
                        .map_err(|e| self.err(t, e))?;
                    if let Some(w) = work {
                        self.queue_work(c, w);
                    }
                    Some(pa)
                }
                None => None,
            };
            let (dst_pa, work) = self
                .os
                .translate(pid, t as u32, d, true)
                .map_err(|e| self.err(t, e))?;
            if let Some(w) = work {
                self.queue_work(c, w);
            }
            let op = BulkOp {
                kind: match src_pa {
                    Some(s) => BulkKind::Copy { src: s },
                    None => BulkKind::Init { value },
                },
                dst: dst_pa,
                bytes: len,
            };
            let origin = if src.is_some() {
                Origin::Copy
            } else {
                Origin::Init
            };
            self.queue_op(c, op, origin);
            done += len;
        }
        Ok(())
    }

    /// Advances core `c`'s first bulk job; whether anything happened.
    fn progress_job(&mut self, c: usize) -> Result<bool> {
        let lookahead = 2 * self.mem.mshrs_free(c).max(1) + 8;
        let per_cycle = (self.width / 2).max(1);
        let job = self.cores[c].jobs.front_mut().expect("a job");
        match job {
            Job::Lines {
                tasks,
                done,
                next,
                origin,
            } => {
                let origin = *origin;
                let mut progress = false;
                let mut performed = 0;
                let end = (*next + lookahead).min(tasks.len());
                for i in *next..end {
                    if done[i] {
                        continue;
                    }
                    let task = tasks[i];
                    let dst_line = task.dst / LINE;
                    // A whole destination line may be allocated without a read; one whose
                    // fill is already in flight waits for it (its stores land first).
                    let allocate = self.allocate_full_lines
                        && task.len == LINE
                        && self.mem.cache_mut(c).probe(dst_line).is_none();
                    if allocate && (self.mem.has_mshr(c, dst_line) || !self.mem.can_allocate(c)) {
                        continue;
                    }
                    // The destination (unless allocated) and the one or two source lines.
                    let mut lines = [0u64; 3];
                    let mut count = 0;
                    if !allocate {
                        lines[0] = dst_line;
                        count = 1;
                    }
                    if let Some(s) = task.src {
                        lines[count] = s / LINE;
                        lines[count + 1] = (s + task.len - 1) / LINE;
                        count += 2;
                    }
                    let mut ready = true;
                    for &l in &lines[..count] {
                        if self.mem.cache_mut(c).probe(l).is_none() {
                            ready = false;
                            if !self.mem.has_mshr(c, l) {
                                if self.mem.request_fill(c, l, origin) {
                                    progress = true;
                                } else {
                                    break;
                                }
                            }
                        }
                    }
                    if !ready || performed >= per_cycle {
                        continue;
                    }
                    let mut line_buf = [task.value; LINE as usize];
                    let bytes = &mut line_buf[..task.len as usize];
                    if let Some(s) = task.src {
                        // Source bytes line by line (a misaligned piece spans two).
                        let mut k = 0;
                        while k < bytes.len() {
                            let a = s + k as u64;
                            let offset = (a % LINE) as usize;
                            let n = (LINE as usize - offset).min(bytes.len() - k);
                            let cache = self.mem.cache_mut(c);
                            let way = cache.probe(a / LINE).expect("present");
                            bytes[k..k + n].copy_from_slice(&cache.data(way)[offset..offset + n]);
                            k += n;
                        }
                    }
                    if allocate {
                        self.mem.insert(c, dst_line, &line_buf, true, origin);
                    } else {
                        let way = self.mem.cache_mut(c).probe(dst_line).expect("present");
                        self.mem
                            .cache_mut(c)
                            .write(way, (task.dst % LINE) as usize, bytes, origin);
                    }
                    done[i] = true;
                    performed += 1;
                    progress = true;
                }
                while *next < tasks.len() && done[*next] {
                    *next += 1;
                }
                if *next == tasks.len() {
                    self.cores[c].jobs.pop_front();
                    progress = true;
                }
                Ok(progress)
            }
            Job::Memory { .. } => self.progress_memory_job(c),
        }
    }

    fn progress_memory_job(&mut self, c: usize) -> Result<bool> {
        let Some(Job::Memory {
            op,
            phase,
            writebacks_pending,
            zero_lines,
            ..
        }) = self.cores[c].jobs.front()
        else {
            unreachable!("a memory job")
        };
        let (op, phase, pending, zero_lines) = (*op, *phase, *writebacks_pending, *zero_lines);
        let set_phase = |s: &mut System, p: MemPhase, wb: u32| {
            if let Some(Job::Memory {
                phase,
                writebacks_pending,
                ..
            }) = s.cores[c].jobs.front_mut()
            {
                *phase = p;
                *writebacks_pending = wb;
            }
        };
        match phase {
            MemPhase::Coherence => {
                // Lines still being fetched (stores may wait on them) must land first, and the
                // cache needs room for the write-backs this may cause.
                let touches = |line: u64| {
                    let a = line * LINE;
                    let (d0, d1) = op.dst_range();
                    (a < d1 && a + LINE > d0)
                        || op
                            .src_range()
                            .is_some_and(|(s0, s1)| a < s1 && a + LINE > s0)
                };
                if self.mem.mshr_lines().any(touches) || !self.mem.can_allocate(c) {
                    return Ok(false);
                }
                let wb = self.coherence(c, &op);
                self.active_dst.push(op.dst_range());
                set_phase(
                    self,
                    if wb > 0 {
                        MemPhase::WaitWritebacks
                    } else {
                        MemPhase::Submit
                    },
                    wb,
                );
                Ok(true)
            }
            MemPhase::WaitWritebacks => {
                if pending == 0 {
                    set_phase(self, MemPhase::Submit, 0);
                    return Ok(true);
                }
                Ok(false)
            }
            MemPhase::Submit => {
                let mut cycle = self.now.div_ceil(self.tck_fs);
                if let Some(done) = self.mem_done {
                    cycle = cycle.max(done + 1);
                }
                match self.mem.memory.try_enqueue_bulk(op, cycle) {
                    Ok(Some(id)) => {
                        self.op_owner.insert(id, c);
                        self.wake_memory();
                        set_phase(self, MemPhase::Wait(id), 0);
                        Ok(true)
                    }
                    Ok(None) => Ok(false),
                    Err(e) => Err(Error::Io(format!(
                        "internal error: a bulk operation the OS produced was refused: {e}"
                    ))),
                }
            }
            MemPhase::Wait(_) => Ok(false),
            MemPhase::Done => {
                let (mut next, end) = zero_lines;
                let zero = [0u8; LINE as usize];
                while next < end && self.mem.can_allocate(c) {
                    self.mem.insert(c, next, &zero, false, Origin::Init);
                    next += 1;
                }
                if next < end {
                    if let Some(Job::Memory { zero_lines, .. }) = self.cores[c].jobs.front_mut() {
                        zero_lines.0 = next;
                    }
                    return Ok(next > zero_lines.0);
                }
                let range = op.dst_range();
                if let Some(i) = self.active_dst.iter().position(|&r| r == range) {
                    self.active_dst.swap_remove(i);
                }
                self.cores[c].jobs.pop_front();
                Ok(true)
            }
        }
    }

    /// The memory controller's coherence work before an operation below the cache; returns
    /// the write-backs it must wait for.
    fn coherence(&mut self, c: usize, op: &BulkOp) -> u32 {
        let in_cache_copy = matches!(
            self.mechanism,
            SystemMechanism::Rowclone | SystemMechanism::RowcloneZi
        );
        let mut waits = 0;
        let (d0, d1) = op.dst_range();
        let whole = |line: u64| line * LINE >= d0 && (line + 1) * LINE <= d1;
        for line in d0 / LINE..d1.div_ceil(LINE) {
            for k in 0..self.mem.caches.len() {
                if !whole(line) {
                    if let Some(ev) = self.mem.caches[k].write_back(line) {
                        self.mem.write_back(k, ev, Some(c));
                        waits += 1;
                    }
                }
                self.mem.caches[k].invalidate(line);
            }
        }
        if let BulkKind::Copy { src } = op.kind {
            let delta = src as i128 - op.dst as i128;
            let aligned = delta.rem_euclid(LINE as i128) == 0;
            for line in src / LINE..(src + op.bytes).div_ceil(LINE) {
                for k in 0..self.mem.caches.len() {
                    let Some(way) = self.mem.caches[k].probe(line) else {
                        continue;
                    };
                    if !self.mem.caches[k].is_dirty(way) {
                        continue;
                    }
                    let dst_line = ((line * LINE) as i128 - delta) as u64 / LINE;
                    if in_cache_copy && aligned && whole(dst_line) {
                        // RowClone: copy the dirty line in the cache under the destination's
                        // tag; DRAM's stale copy of it is overwritten there.
                        let data = *self.mem.caches[k].data(way);
                        self.mem.insert(k, dst_line, &data, true, Origin::Copy);
                    } else if let Some(ev) = self.mem.caches[k].write_back(line) {
                        self.mem.write_back(k, ev, Some(c));
                        waits += 1;
                    }
                }
            }
        }
        waits
    }

    /// Bytes at `vaddr` as process `pid` sees them now (None where unmapped).
    pub fn read_virtual(&self, pid: Pid, vaddr: u64, len: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        for i in 0..len as u64 {
            let pa = self.os.lookup(pid, vaddr + i)?;
            out.push(self.mem.read_line(pa / LINE)[(pa % LINE) as usize]);
        }
        Some(out)
    }

    /// The process id thread `t` ran as.
    pub fn pid_of(&self, t: usize) -> Option<Pid> {
        self.threads.get(t)?.pid
    }

    fn stats(&self, wall_seconds: f64) -> SystemStats {
        let end = self.threads.iter().map(|t| t.end_fs).max().unwrap_or(0);
        let cycles = end / self.core_fs;
        let instructions: u64 = self.cores.iter().map(|c| c.retired).sum();
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let mut memory = self.mem.memory.stats(0);
        memory.host.wall_seconds = wall_seconds;
        if wall_seconds > 0.0 {
            memory.host.requests_per_wall_second =
                (memory.reads + memory.writes) as f64 / wall_seconds;
        }
        let mut traffic = self.mem.traffic.clone();
        traffic.copy_bytes += memory.bulk.copy_channel_bytes;
        traffic.init_bytes += memory.bulk.init_channel_bytes;
        let total = traffic.total();
        let mut cache = crate::cache::CacheStats::default();
        for c in &self.mem.caches {
            let s = &c.stats;
            cache.hits += s.hits;
            cache.misses += s.misses;
            cache.writebacks += s.writebacks;
            cache.invalidations += s.invalidations;
            cache.inserts += s.inserts;
        }
        SystemStats {
            mechanism: match self.mechanism {
                SystemMechanism::Cpu => "cpu",
                SystemMechanism::McDma => "mc_dma",
                SystemMechanism::Rowclone => "rowclone",
                SystemMechanism::RowcloneZi => "rowclone_zi",
            }
            .into(),
            core_ghz: 1e6 / self.core_fs as f64,
            cycles,
            simulated_ns: end as f64 / 1e6,
            instructions,
            ipc: ratio(instructions, cycles),
            cores: self
                .cores
                .iter()
                .map(|c| {
                    let own = c.last_exit_fs / self.core_fs;
                    CoreStats {
                        instructions: c.retired,
                        cycles: own,
                        ipc: ratio(c.retired, own),
                    }
                })
                .collect(),
            threads: self
                .threads
                .iter()
                .map(|t| ThreadStats {
                    file: t
                        .reader
                        .location()
                        .rsplit_once(':')
                        .map_or(String::new(), |(f, _)| f.to_string()),
                    instructions: t.instructions,
                    start_ns: t.start_fs as f64 / 1e6,
                    end_ns: t.end_fs as f64 / 1e6,
                })
                .collect(),
            traffic_bytes: total,
            fmtc: ratio(traffic.copy_bytes, total),
            bytes_per_instruction: ratio(total, instructions),
            energy_nj_per_instruction: if instructions == 0 {
                0.0
            } else {
                memory.energy.total_nj / instructions as f64
            },
            traffic,
            memcpy_ops: self.memcpy_ops,
            meminit_ops: self.meminit_ops,
            bulk_wait: self.bulk_wait.finished(),
            cache,
            os: self.os.stats.clone(),
            memory,
        }
    }
}

/// Runs the workload at `path` under `config`.
pub fn run_workload(config: &Config, path: &Path) -> Result<(SystemStats, System)> {
    run_workload_logged(config, path, None)
}

/// `run_workload`, writing every DRAM command issued to `command_log` (CSV, see
/// `device::command_log`) when given.
pub fn run_workload_logged(
    config: &Config,
    path: &Path,
    command_log: Option<&Path>,
) -> Result<(SystemStats, System)> {
    let mut system = System::new(config, path)?;
    if let Some(log) = command_log {
        system.mem.memory.log_commands_to(log)?;
    }
    let stats = system.run()?;
    system.mem.memory.finish_log()?;
    Ok((stats, system))
}
