//! A core's cycle: retiring, and dispatching its thread's events (loads, stores, compute,
//! movblk, copy steps, bulk and thread events) into its window and the first cache level,
//! waiting where a completing migration or bulk work in flight blocks an access.

use super::*;

/// What a core's dispatch loop does after a piece of work (whether the work moved).
enum Flow {
    /// Back to the loop's top: the budget may allow more.
    Again(bool),
    /// The core dispatches nothing more this cycle.
    Stop(bool),
    /// Nothing of this kind to do: on to the next kind.
    On,
}

impl System {
    /// One core cycle for core `c`; whether it made progress.
    pub(super) fn step_core(&mut self, c: usize) -> Result<bool> {
        let retired = self.cores[c].retire(self.settings.width, self.now);
        let mut progress = retired > 0;
        self.note_retired(c, retired);
        if self.sched.running(c).is_none() {
            if self.sched.take_next(c, self.now).is_none() {
                return Ok(progress);
            }
            progress = true;
        }
        if self.now < self.cores[c].os_until_fs {
            // The OS has the core (hybrid OS time): nothing dispatches.
            return Ok(progress);
        }
        if !self.cores[c].jobs.is_empty() {
            let (moved, busy) = self.step_bulk_jobs(c)?;
            progress |= moved;
            if busy {
                return Ok(progress);
            }
        }
        progress |= self.dispatch_events(c)?;
        Ok(progress)
    }

    /// After core `c` retired `retired` slots this cycle: a stall on memory starting at the
    /// window head noted, the running thread's count, the measured window's milestones.
    #[inline]
    fn note_retired(&mut self, c: usize, retired: usize) {
        if self.cores[c].stalled_since.is_none() && self.cores[c].head_ready() == Some(u64::MAX) {
            self.cores[c].stalled_since = Some(self.now);
            if let Some(rec) = &mut self.interruptions {
                let line = self.cores[c].window.front().expect("a waiting head").line;
                rec.stall_started(self.mem.router(), c, line);
            }
        }
        if let Some(t) = self.sched.running(c) {
            // A thread leaves its core only with an empty window, so every slot retired
            // here is the running thread's own.
            self.sched.retired(t, retired as u64);
        }
        if retired > 0 {
            if let Some(m) = &mut self.measure {
                if m.retired(c, self.cores[c].retired, self.now) {
                    m.take_snapshot(self.mem.router());
                }
            }
        }
    }

    /// Core `c`'s bulk jobs (copies and initializations it waits for) take a step: whether
    /// any moved, and whether some are left (the core then dispatches nothing).
    fn step_bulk_jobs(&mut self, c: usize) -> Result<(bool, bool)> {
        let before = self.cores[c].jobs.len();
        let origin = self.cores[c].jobs[0].origin();
        let started = *self.cores[c].job_started_fs.get_or_insert(self.now);
        let progress = self.bulk.progress_job(
            c,
            &mut self.cores[c],
            &mut self.mem,
            self.now,
            (self.timing.line, self.settings.width),
        )?;
        if self.cores[c].jobs.len() < before {
            // Counted to the end of this core cycle, when the core may go on.
            self.bulk
                .count_wait(origin, self.now + self.timing.core_fs - started);
            self.cores[c].job_started_fs = None;
        }
        if !self.cores[c].jobs.is_empty() {
            return Ok((progress, true));
        }
        if self.cores[c].bulk_instruction {
            self.cores[c].bulk_instruction = false;
            let ready = self.now + self.timing.core_fs;
            self.push_slot(c, ready, NO_LINE);
        }
        Ok((progress, false))
    }

    /// Core `c` dispatches up to `core.width` instructions of its running thread: the fault
    /// path's kernel instructions and a kernel copy first, then the thread's own copy steps
    /// and events, until the budget is spent, an event must wait, or the time slice ends;
    /// whether anything moved.
    #[inline]
    fn dispatch_events(&mut self, c: usize) -> Result<bool> {
        let mut progress = false;
        let mut budget = self.settings.width;
        self.cores[c].mem_ports_left = self.settings.mem_ports;
        while budget > 0 {
            let t = self.sched.running(c).expect("a running thread");
            match self.dispatch_kernel_work(c, t, &mut budget)? {
                Flow::Again(moved) => {
                    progress |= moved;
                    continue;
                }
                Flow::Stop(moved) => {
                    progress |= moved;
                    break;
                }
                Flow::On => {}
            }
            self.cores[c].kernel_copy = None;
            if self
                .sched
                .slice_over(c, t, self.cores[c].at_event_boundary(), &self.os)
            {
                // At an event boundary; the thread leaves with an empty window, so every
                // slot retired on a core is its running thread's.
                if self.cores[c].window.is_empty() {
                    self.sched.preempt(c);
                    progress = true;
                }
                break;
            }
            if self.cores[c].pending.is_none() {
                let step = match self.cores[c].pending_step.take() {
                    Some(s) => Some(s),
                    None => self.sched.next_copy_step(t),
                };
                if let Some(step) = step {
                    let pid = self.sched.pid(t);
                    match self.dispatch_copy_step(c, t, Space::Virtual(pid), step, &mut budget)? {
                        None => {
                            progress = true;
                            continue;
                        }
                        Some((step, moved)) => {
                            self.cores[c].pending_step = Some(step);
                            progress |= moved;
                            break;
                        }
                    }
                }
            }
            let ev = match self.cores[c].pending.take() {
                Some(e) => e,
                None => self.sched.next_event(t, self.timing.line)?,
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

    /// Core `c`'s kernel work, which goes before the access that faulted: the fault path's
    /// kernel instructions, then a copy-on-write copy run by the memcpy routine (physical
    /// addresses).
    #[inline]
    fn dispatch_kernel_work(&mut self, c: usize, t: usize, budget: &mut usize) -> Result<Flow> {
        let kernel = std::mem::take(&mut self.cores[c].kernel_instructions);
        if kernel > 0 {
            let before = *budget;
            if let Step::Retry(Event::Compute(left), _) =
                self.dispatch(c, t, Event::Compute(kernel), budget)?
            {
                self.cores[c].kernel_instructions = left;
            }
            let moved = *budget < before;
            return Ok(if self.cores[c].kernel_instructions > 0 {
                Flow::Stop(moved)
            } else {
                Flow::Again(moved)
            });
        }
        let kernel_step = match self.cores[c].kernel_step.take() {
            Some(s) => Some(s),
            None => self.cores[c].kernel_copy.as_mut().and_then(|m| m.next()),
        };
        if let Some(step) = kernel_step {
            return Ok(
                match self.dispatch_copy_step(c, t, Space::Physical, step, budget)? {
                    None => Flow::Again(true),
                    Some((step, moved)) => {
                        self.cores[c].kernel_step = Some(step);
                        Flow::Stop(moved)
                    }
                },
            );
        }
        Ok(Flow::On)
    }

    pub(super) fn err(&self, t: usize, e: impl std::fmt::Display) -> Error {
        self.sched.err(t, e)
    }

    pub(super) fn push_slot(&mut self, c: usize, ready_fs: u64, line: u64) {
        self.cores[c].window.push_back(Slot { ready_fs, line });
    }

    /// A load, store or movblk's slot: it holds a load/store queue entry (`core.lsq`).
    pub(super) fn push_mem_slot(&mut self, c: usize, ready_fs: u64, line: u64) {
        self.cores[c].window.push_mem_back(Slot { ready_fs, line });
    }

    /// Whether an access to `pa` waits: its hybrid page's migration is completing, or a bulk
    /// operation in flight writes it.
    pub(super) fn blocked(&self, pa: u64) -> bool {
        self.migration_completing(pa) || self.bulk.dst_blocked(pa)
    }

    /// Whether the hybrid memory completes the migration of the page holding `pa`.
    #[inline]
    pub(super) fn migration_completing(&self, pa: u64) -> bool {
        self.hybrid_os.is_some() && HybridOsWork::completing(&self.mem, pa)
    }

    /// The hybrid memory's OS work due now (`HybridOsWork::step`), with the OS time it
    /// takes from the cores' front ends; whether it did any.
    pub(super) fn step_hybrid_os(&mut self) -> Result<bool> {
        let Some(work) = self.hybrid_os.as_mut() else {
            return Ok(false);
        };
        let (acted, holds) = work.step(self.now, &mut self.os, &mut self.mem, &self.sched)?;
        for &hold in holds {
            match hold {
                FrontEndHold::Core(c, ns) => self.cores[c].hold_front_end(self.now, ns),
                FrontEndHold::EveryCore(ns) => {
                    for core in &mut self.cores {
                        core.hold_front_end(self.now, ns);
                    }
                }
            }
        }
        Ok(acted)
    }

    /// Whether core `c`'s access to `pa` (a store: `write`) must wait: a migration
    /// completing, or bulk work (`BulkCoordinator::access_waits`, which counts a copy
    /// engine's stall).
    pub(super) fn access_waits(&mut self, c: usize, pa: u64, write: bool) -> bool {
        self.migration_completing(pa)
            || self
                .bulk
                .access_waits(c, pa, write, &self.mem, self.timing.line)
    }

    /// Thread `t`'s `movblk` from `src` to `dst` is one the system can run: a copy engine
    /// exists, `dst` is line-aligned and the two lines do not overlap.
    fn check_movblk(&self, t: usize, src: u64, dst: u64) -> Result<()> {
        let l = self.timing.line;
        if self.bulk.engines().is_none() {
            return Err(self.err(
                t,
                "movblk needs a copy engine: set copy_engine.policy to ce_l1, dce, dce_nt or dce_rowclone",
            ));
        }
        if dst % l != 0 {
            return Err(self.err(
                t,
                format!("movblk dst {dst:#x} not aligned to the {l}-byte L1 line"),
            ));
        }
        if src < dst + l && dst < src + l {
            return Err(self.err(
                t,
                format!(
                    "movblk source {src:#x} and destination {dst:#x} overlap (a movblk copies {l} bytes)"
                ),
            ));
        }
        Ok(())
    }

    /// A `movblk` from `src` to `dst` (virtual): once every older instruction has retired,
    /// its source (as loads) and destination (as a store) are translated, the misses in
    /// flight for its lines complete, and it retires into the core's first-level engine
    /// queue (a full queue stalls dispatch).
    pub(super) fn dispatch_movblk(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        src: u64,
        dst: u64,
        budget: &mut usize,
    ) -> Result<Step> {
        let ev = Event::Movblk { src, dst };
        let l = self.timing.line;
        self.check_movblk(t, src, dst)?;
        if !self.cores[c].window.is_empty() || self.cores[c].mem_ports_left == 0 {
            return Ok(Step::Retry(ev, false));
        }
        let engines = self.bulk.engines().expect("checked by check_movblk");
        if !engines.has_room(&self.mem, c) {
            self.bulk
                .engines_mut()
                .expect("engines")
                .stats
                .fifo_full_cycles += 1;
            return Ok(Step::Retry(ev, false));
        }
        let split = l - src % l;
        let Some(src_pa) = self.resolve(c, t, space, src, false)? else {
            return Ok(Step::Retry(ev, true));
        };
        let src_next = if split < l {
            match self.resolve(c, t, space, src + split, false)? {
                Some(pa) => pa,
                None => return Ok(Step::Retry(ev, true)),
            }
        } else {
            src_pa + l
        };
        let Some(dst_pa) = self.resolve(c, t, space, dst, true)? else {
            return Ok(Step::Retry(ev, true));
        };
        let op = Movblk {
            src: src_pa,
            src_next,
            split,
            dst: dst_pa,
            bytes: l,
            core: c,
        };
        // Misses in flight for its lines complete first, and bulk operations writing them.
        let ranges = [
            (src_pa, src_pa + split),
            (src_next, src_next + (l - split)),
            (dst_pa, dst_pa + l),
        ];
        for (a, b) in ranges {
            if a < b && (self.mem.fetching_in(a, b) || self.blocked(a) || self.blocked(b - 1)) {
                return Ok(Step::Retry(ev, false));
            }
        }
        if self.bulk.chunk_source_held(dst_pa, dst_pa + l) {
            return Ok(Step::Retry(ev, false));
        }
        self.cores[c].mem_ports_left -= 1;
        let now = self.now;
        self.bulk
            .engines_mut()
            .expect("engines")
            .push(&mut self.mem, op, now);
        self.push_mem_slot(c, self.now + self.timing.core_fs, NO_LINE);
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(Step::Next)
    }

    /// A load, or a store of `data`, at `va` through the first level, for `origin`: None
    /// when dispatched, else `Some(moved)` to retry it (`moved`: a fault's work was queued).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn access(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        va: u64,
        data: StoreData,
        origin: Origin,
        budget: &mut usize,
    ) -> Result<Option<bool>> {
        let write = !matches!(data, StoreData::None);
        if !self.cores[c].has_mem_slot(&self.settings) {
            return Ok(Some(false));
        }
        let Some(pa) = self.resolve(c, t, space, va, write)? else {
            return Ok(Some(true));
        };
        if self.access_waits(c, pa, write) {
            return Ok(Some(false));
        }
        // A copy's store carries the bytes its load read (within one first-level line).
        let src_pa = match data {
            StoreData::From { src, .. } => match self.resolve(c, t, space, src, false)? {
                Some(pa) => pa,
                None => return Ok(Some(true)),
            },
            _ => 0,
        };
        let line = pa / self.timing.line;
        let found = self.mem.l1().array(c).probe(line);
        if write
            && found.is_none()
            && self.mem.l1_ref().waiting_stores(c) >= self.settings.store_queue
        {
            return Ok(Some(false));
        }
        if found.is_none() && !self.mem.request_fill(c, line, origin, write) {
            return Ok(Some(false));
        }
        let mut bytes = [0u8; 8];
        let stored: &[u8] = match data {
            StoreData::None => &[],
            StoreData::Program => {
                let store = self.sched.count_store(t);
                bytes = ((t as u64 + 1) << 48 | store).to_le_bytes();
                &bytes
            }
            StoreData::From { len, .. } => {
                let len = len as usize;
                self.mem.read_as_core(c, src_pa, &mut bytes[..len]);
                &bytes[..len]
            }
        };
        self.cores[c].mem_ports_left -= 1;
        let next_cycle = self.now + self.timing.core_fs;
        // A fill request does not change the array: the probe still holds.
        let way = self.mem.l1().array(c).access_found(found);
        if write {
            // A program store writes its 8-byte word; a copy's store its own bytes.
            let offset = match data {
                StoreData::Program => (pa % self.timing.line) as usize & !7,
                _ => (pa % self.timing.line) as usize,
            };
            match way {
                Some(w) => self.mem.l1().array(c).write(w, offset, stored, origin),
                None => self.mem.add_store_bytes(c, line, offset, stored),
            }
            self.push_mem_slot(c, next_cycle, NO_LINE);
        } else if way.is_some() {
            let data_fs = self.now + self.timing.hit_fs;
            let core = &mut self.cores[c];
            core.load_data_fs = core.load_data_fs.max(data_fs);
            self.push_mem_slot(c, data_fs, NO_LINE);
        } else {
            self.push_mem_slot(c, u64::MAX, line);
        }
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(None)
    }

    /// A non-temporal store (`system.memcpy = "software_nt"`) of the `len` bytes at `src` to
    /// `va`: as a copy's store, but around the caches (`Hierarchy::non_temporal_store`). It
    /// also waits while a fill of any line of its memory line is in flight (that fill's
    /// waiting stores are older and would land on top of its bytes). None when dispatched,
    /// else `Some(moved)` to retry it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn store_non_temporal(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        va: u64,
        src: u64,
        len: u32,
        budget: &mut usize,
    ) -> Result<Option<bool>> {
        if !self.cores[c].has_mem_slot(&self.settings) {
            return Ok(Some(false));
        }
        let Some(pa) = self.resolve(c, t, space, va, true)? else {
            return Ok(Some(true));
        };
        let memory_line = self.mem.last_line_bytes();
        let start = pa - pa % memory_line;
        if self.access_waits(c, pa, true) || self.mem.fetching_in(start, start + memory_line) {
            return Ok(Some(false));
        }
        let Some(src_pa) = self.resolve(c, t, space, src, false)? else {
            return Ok(Some(true));
        };
        let mut bytes = [0u8; 8];
        let bytes = &mut bytes[..len as usize];
        self.mem.read_as_core(c, src_pa, bytes);
        if !self.mem.non_temporal_store(c, pa, bytes) {
            return Ok(Some(false));
        }
        self.cores[c].mem_ports_left -= 1;
        self.push_mem_slot(c, self.now + self.timing.core_fs, NO_LINE);
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(None)
    }

    /// One step of a memcpy routine (`system.memcpy`): its instructions, its word loads and
    /// stores (`Origin::Copy`), its movblks.
    pub(super) fn dispatch_copy_step(
        &mut self,
        c: usize,
        t: usize,
        space: Space,
        step: CopyStep,
        budget: &mut usize,
    ) -> Result<Option<(CopyStep, bool)>> {
        let full = self.cores[c].window.len() >= self.settings.window;
        let retry = |moved: Option<bool>| moved.map(|m| (step, m));
        Ok(match step {
            CopyStep::Compute(n) => match self.dispatch(c, t, Event::Compute(n), budget)? {
                Step::Retry(Event::Compute(left), moved) => Some((CopyStep::Compute(left), moved)),
                _ => None,
            },
            _ if full => Some((step, false)),
            CopyStep::LoadWord { src, .. } => {
                retry(self.access(c, t, space, src, StoreData::None, Origin::Copy, budget)?)
            }
            CopyStep::StoreWord { dst, src, bytes } => {
                let data = StoreData::From { src, len: bytes };
                retry(self.access(c, t, space, dst, data, Origin::Copy, budget)?)
            }
            CopyStep::StoreNt { dst, src, bytes } => {
                retry(self.store_non_temporal(c, t, space, dst, src, bytes, budget)?)
            }
            CopyStep::Fence => {
                self.mem.drain_write_combining(c);
                self.push_slot(c, self.now + self.timing.core_fs, NO_LINE);
                *budget -= 1;
                None
            }
            CopyStep::Movblk { src, dst } => {
                match self.dispatch_movblk(c, t, space, src, dst, budget)? {
                    Step::Retry(_, moved) => Some((step, moved)),
                    _ => None,
                }
            }
            CopyStep::Chunk { src, dst, bytes } => {
                match self.dispatch_chunk(c, t, space, src, dst, bytes, budget)? {
                    dram_chunks::ChunkOutcome::Retry(moved) => Some((step, moved)),
                    dram_chunks::ChunkOutcome::HandedDown => None,
                    dram_chunks::ChunkOutcome::Declined { .. } => {
                        self.decline_chunk(c, t, space, step);
                        None
                    }
                }
            }
        })
    }

    /// Dispatches thread `t`'s event `ev` on core `c`, within `budget` instructions of
    /// this cycle; what it did.
    pub(super) fn dispatch(
        &mut self,
        c: usize,
        t: usize,
        ev: Event,
        budget: &mut usize,
    ) -> Result<Step> {
        let full = self.cores[c].window.len() >= self.settings.window;
        let pid = self.sched.pid(t);
        match ev {
            Event::Movblk { src, dst } => {
                self.dispatch_movblk(c, t, Space::Virtual(pid), src, dst, budget)
            }
            Event::Compute(n) => self.dispatch_compute(c, t, n, budget),
            Event::Load(va) | Event::Store(va) | Event::LoadDependent(va) => {
                self.dispatch_program_access(c, t, ev, va, full, budget)
            }
            Event::Memcpy { src, dst, bytes } if self.bulk.routine_copies() => {
                self.start_memcpy_routine(t, pid, src, dst, bytes);
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
            Event::MemRead(va) | Event::MemWrite(va) | Event::MemReadDependent(va) => {
                self.dispatch_below_caches(c, t, ev, va, full, budget)
            }
            Event::Map { .. }
            | Event::MapPopulated { .. }
            | Event::Unmap { .. }
            | Event::MapResident { .. }
            | Event::Exec => self.dispatch_address_space(c, t, ev, full, budget),
            Event::LoadRange { .. }
            | Event::StoreRange { .. }
            | Event::KernelToUser { .. }
            | Event::KernelFromUser { .. } => {
                unreachable!("next_event turns ranged accesses into line accesses")
            }
            Event::Yield(_) | Event::Fork(_) | Event::Spawn(_) | Event::Wait | Event::Exit => {
                self.dispatch_thread_event(c, t, ev, full, budget)
            }
        }
    }

    /// `n` non-memory instructions: as many as the budget and the window take now, the
    /// rest retried.
    #[inline]
    fn dispatch_compute(&mut self, c: usize, t: usize, n: u64, budget: &mut usize) -> Result<Step> {
        let cycles = n.div_ceil(self.settings.width as u64);
        if (self.now / self.timing.core_fs).saturating_add(cycles) > self.run.max_cycles {
            return Err(self.err(
                t,
                format!(
                    "{n} non-memory instructions take {cycles} core cycles at core.width {}, past sim.max_cycles ({} core cycles); a corrupt count? raise sim.max_cycles to run it",
                    self.settings.width, self.run.max_cycles
                ),
            ));
        }
        let next_cycle = self.now + self.timing.core_fs;
        let room = self.settings.window - self.cores[c].window.len();
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

    /// Whether a memory access of core `c` waits this cycle: its queue is `full`, or it is
    /// `dependent` (pointer chasing) and its address is known only once every older load
    /// has its data.
    #[inline]
    fn waits_to_dispatch(&self, c: usize, full: bool, dependent: bool) -> bool {
        full || (dependent && !self.cores[c].loads_have_data(self.now))
    }

    /// The program's load or store `ev` of virtual `va` through the caches.
    #[inline]
    fn dispatch_program_access(
        &mut self,
        c: usize,
        t: usize,
        ev: Event,
        va: u64,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        if self.waits_to_dispatch(c, full, matches!(ev, Event::LoadDependent(_))) {
            return Ok(Step::Retry(ev, false));
        }
        let data = if matches!(ev, Event::Store(_)) {
            StoreData::Program
        } else {
            StoreData::None
        };
        let space = Space::Virtual(self.sched.pid(t));
        Ok(
            match self.access(c, t, space, va, data, Origin::Program, budget)? {
                Some(moved) => Step::Retry(ev, moved),
                None => Step::Next,
            },
        )
    }

    /// A memcpy run by the `system.memcpy` routine: thread `t` runs its steps from now on.
    fn start_memcpy_routine(&mut self, t: usize, pid: Pid, src: u64, dst: u64, bytes: u64) {
        if self.sched.renews_bulk_destinations(t) {
            // The routine's stores then place each whole destination page anew.
            for page in (dst.div_ceil(PAGE)..(dst + bytes) / PAGE).map(|p| p * PAGE) {
                self.os.renew_page(pid, page);
            }
        }
        let routine = self
            .bulk
            .routine(
                src,
                dst,
                bytes,
                self.timing.line,
                self.mem.last_line_bytes(),
            )
            .expect("a memcpy routine");
        self.sched.start_memcpy(t, routine);
    }

    /// A post-LLC trace's read or write `ev` of virtual `va`, sent below the caches.
    fn dispatch_below_caches(
        &mut self,
        c: usize,
        t: usize,
        ev: Event,
        va: u64,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        if self.waits_to_dispatch(c, full, matches!(ev, Event::MemReadDependent(_))) {
            return Ok(Step::Retry(ev, false));
        }
        let pid = self.sched.pid(t);
        let Some(pa) = self.translate(c, t, pid, va, false)? else {
            return Ok(Step::Retry(ev, true));
        };
        if self.blocked(pa) {
            return Ok(Step::Retry(ev, false));
        }
        if matches!(ev, Event::MemWrite(_)) {
            self.mem.write_below_caches(c, pa);
            self.push_slot(c, self.now + self.timing.core_fs, NO_LINE);
        } else {
            self.mem.read_below_caches(c, pa);
            self.push_slot(c, u64::MAX, pa / self.timing.line);
        }
        self.os.count_access(t as u32);
        *budget -= 1;
        Ok(Step::Next)
    }

    /// A change to the address space (`Map`, `MapPopulated`, `Unmap`, `MapResident`,
    /// `Exec`): one instruction; an unmap, a resident mapping or an exec waits for an
    /// empty window (accesses in flight may still translate through the range).
    fn dispatch_address_space(
        &mut self,
        c: usize,
        t: usize,
        ev: Event,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        let pid = self.sched.pid(t);
        let waits = match ev {
            Event::Map { .. } | Event::MapPopulated { .. } => full,
            _ => !self.cores[c].window.is_empty(),
        };
        if waits {
            return Ok(Step::Retry(ev, false));
        }
        match ev {
            Event::Map { vaddr, bytes } => self.os.map(pid, vaddr, bytes),
            Event::MapPopulated { vaddr, bytes } => {
                let frames = self
                    .os
                    .map_populated(pid, t as u32, vaddr, bytes)
                    .map_err(|e| self.err(t, e))?;
                for frame in frames {
                    self.mem.zero_untimed(frame as u64 * PAGE, PAGE);
                }
            }
            Event::Unmap { vaddr, bytes } => self.os.unmap(pid, vaddr, bytes),
            Event::MapResident { vaddr, bytes } => self.os.map_resident(pid, vaddr, bytes),
            Event::Exec => self.os.exec(pid),
            _ => unreachable!("dispatch sends only address-space events here"),
        }
        self.push_slot(c, self.now + self.timing.core_fs, NO_LINE);
        *budget -= 1;
        Ok(Step::Next)
    }

    /// A thread event (`Yield`, `Fork`, `Spawn`, `Wait`, `Exit`) for the thread scheduler.
    fn dispatch_thread_event(
        &mut self,
        c: usize,
        t: usize,
        ev: Event,
        full: bool,
        budget: &mut usize,
    ) -> Result<Step> {
        match ev {
            Event::Yield(_) => {
                let window_empty = self.cores[c].window.is_empty();
                Ok(
                    match self
                        .sched
                        .thread_event(c, t, ev, self.now, window_empty, &mut self.os)?
                    {
                        ThreadOutcome::NotYet => Step::Retry(ev, false),
                        ThreadOutcome::Left => Step::Stop,
                        _ => Step::Next,
                    },
                )
            }
            Event::Fork(_) | Event::Spawn(_) => {
                if full {
                    return Ok(Step::Retry(ev, false));
                }
                self.feed_rank_delays();
                self.sched
                    .thread_event(c, t, ev, self.now, false, &mut self.os)?;
                self.push_slot(c, self.now + self.timing.core_fs, NO_LINE);
                *budget -= 1;
                Ok(Step::Next)
            }
            _ => {
                // Wait or Exit. A thread exits once its copies are done: the engines' and
                // the memory controller's writes are its own, into frames the exit frees.
                if !self.cores[c].window.is_empty()
                    || (ev == Event::Exit && self.bulk.copies_pending(c, &self.mem))
                {
                    return Ok(Step::Retry(ev, false));
                }
                let outcome = self
                    .sched
                    .thread_event(c, t, ev, self.now, true, &mut self.os)?;
                if ev == Event::Exit {
                    self.check_measured_core_has_work(c, t)?;
                }
                Ok(if outcome == ThreadOutcome::Left {
                    Step::Stop
                } else {
                    Step::Next
                })
            }
        }
    }
}
