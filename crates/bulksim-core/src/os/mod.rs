//! The OS memory manager: per-process page tables (radix tables, `page_table`) of 4 KB pages
//! over mapped regions, frames from the allocator (`allocator`, asked with a `FrameRequest`
//! that names the process, thread, page and purpose), the frame table (`frame_table`: each
//! frame's owner, sharing count and referenced bit), copy-on-write after fork, and
//! zero-on-first-touch. It does not tick: `translate` returns the physical address and the work
//! (a page to zero, a page to copy) that must finish before the access proceeds; the system
//! executes that work by the chosen bulk mechanism. An exiting process drops its references to
//! frames in ascending virtual page order (a frame no longer referenced is free again); its
//! page table stays for inspection, valid until the frames are reused.
//!
//! With a replacing policy (`clock`, `rank_clock`) a full memory evicts a page: the allocator
//! names a frame in use, its page leaves its owner's page table (no swap contents are
//! modelled: a later access faults again and gets a zeroed frame), and the frame is reused.
//! Per thread the OS counts accesses by global rank (`ThreadPages`) when told each frame's
//! rank (`with_ranks`).

pub mod allocator;
pub mod external;
pub mod frame_table;
pub mod page_table;
pub mod tlb;

use crate::request::VADDR_LIMIT;
use crate::stat_struct::{extend, stat_struct};
use allocator::{AllocContext, FrameAllocator, FrameRequest, PlacementStats, Purpose, PAGE};
use frame_table::FrameTable;
use page_table::{beyond_reach, PageTable, Pte};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tlb::Tlbs;

#[derive(Clone, Debug, Default)]
struct Process {
    pages: PageTable,
    /// Threads running in the process beyond its first (`T` events); it ends with its last.
    extra_threads: u32,
    /// The process has had more than one thread: their streams do not order one thread's
    /// maps against another's accesses, so an access outside every mapping is taken as a
    /// first touch of memory another thread mapped (`os.unordered_touches`), not an error.
    threaded: bool,
    /// Mapped virtual page ranges, the most recent last (it decides where ranges overlap).
    regions: Vec<Region>,
    /// After the process exited: each of its frames' generation at the exit, so that a
    /// read of its image can tell a frame another took since (`lookup_intact`).
    exit_generations: Option<BTreeMap<u32, u32>>,
    /// Pages `renew_page` took a frame from, not yet placed again (counted once in
    /// `populated`).
    renewed: BTreeSet<u64>,
}

/// A mapped range of virtual pages [start, end).
#[derive(Clone, Copy, Debug, Default)]
struct Region {
    start: u64,
    end: u64,
    /// Pages were touched before the trace began: present on first access, with no fault.
    resident: bool,
}

/// Work that must complete before an access proceeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Fill a new frame with zeros (first touch).
    Zero { frame: u32 },
    /// Copy a shared frame into a new one (copy-on-write).
    Copy { src: u32, dst: u32 },
    /// A page of a resident region seen for the first time: the new frame must read as zero,
    /// untimed, and there is no fault (no kernel instructions).
    Resident { frame: u32 },
    /// Make a copy-on-write page no longer shared writable: the fault path alone.
    Reuse,
}

stat_struct! {
    /// The OS's counters, under `os` in the full-system stats.
    pub struct OsStats {
        pub processes: u64 = sum("processes", "processes created (initial threads and forks)"),
        pub forks: u64 = sum("calls", "fork events"),
        pub page_faults: u64 = sum("faults", "first touches and writes to copy-on-write pages"),
        pub zero_fills: u64 = sum("pages", "pages zeroed on first touch"),
        pub cow_copies: u64 = sum("pages", "pages copied on a write to a shared page"),
        /// Made writable without a copy.
        pub cow_reuses: u64 = sum("pages", "writes to a copy-on-write page no longer shared (no copy needed)"),
        pub cow_same_subarray: u64 = sum("pages", "copy-on-write destinations in the source's subarray (FPM-capable)"),
        pub copy_placements: u64 = sum("pages", "pages of resident mappings (foreign traces, `N` events) given a frame by the copy that writes them (their first touch, or the first touch after os.trace_bulk_destinations renewed them): placed as a copy-on-write destination is (from the source's subarray under os.allocator = subarray_aware), since the copy brings the page into being"),
        pub copy_placements_same_subarray: u64 = sum("pages", "copy_placements in the source's subarray (FPM-capable)"),
        pub renewed_pages: u64 = sum("pages", "pages a trace's page copy or initialization record gave a new frame before it ran (os.trace_bulk_destinations = allocate): the kernel allocates the destination of a copy-on-write copy or a zeroing when it happens"),
        pub frames_usable: u64 = sum("pages", "4 KB frames the allocator may hand out (capacity minus RowClone's reserved rows)"),
        pub frames_used: u64 = sum("pages", "most frames in use at once during the run (its peak; an exited process's frames are freed)"),
        pub fault_instructions: u64 = sum("instructions", "kernel instructions of the fault path (os.fault_instructions per page fault), included in `instructions`"),
        /// Pages present from the start (`P` events).
        pub populated: u64 = sum("pages", "pages of populated mappings (`P` events): present from the start, without a fault or zeroing; and pages of resident mappings (`N` events and foreign traces) at their first access, also without a fault"),
        pub unmapped_pages: u64 = sum("pages", "present pages removed by unmaps (`U` events) and execs (`E`)"),
        pub spawns: u64 = sum("calls", "thread starts in a running process (`T` events), sharing its memory"),
        pub unordered_touches: u64 = sum("pages", "first touches, by a thread of a multi-threaded process, of a page outside every mapping its stream has seen: the streams do not order one thread's maps against another's accesses, so these are taken as zero-fill faults of memory another thread mapped"),
        pub execs: u64 = sum("calls", "exec events (`E`): the process's address space replaced"),
        pub evictions: u64 = sum("pages", "pages evicted to reuse their frame when memory was full (clock, rank_clock): the owner's page-table entry is removed; no swap I/O is modelled"),
        pub refaults: u64 = sum("faults", "page faults on pages evicted earlier (included in page_faults)"),
        pub placement: PlacementStats = nested(),
        pub threads: Vec<ThreadPages> = merge(extend, "list", "per thread in workload order, when frames' ranks are known: preferred_rank and second_rank (global ranks: rank_static os.thread_ranks or i mod R and the next rank up; rank_clock its chosen two; other policies i mod R and i+1 mod R), accesses_by_rank (translations served by each global rank), off_preferred and off_first_two (those not on the preferred rank, and on neither of the two), page_faults (faults the thread took), evictions (pages its faults evicted)"),
    }
}

/// One thread's page placement counters (`os.threads`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ThreadPages {
    pub preferred_rank: u32,
    pub second_rank: u32,
    pub accesses_by_rank: Vec<u64>,
    pub off_preferred: u64,
    pub off_first_two: u64,
    pub page_faults: u64,
    pub evictions: u64,
}

/// A frame's global rank, as the system numbers ranks.
pub type RankOf = Arc<dyn Fn(u32) -> u32 + Send + Sync>;

/// Per-access rank accounting (each page-table entry holds its frame's rank).
struct RankAccounting {
    ranks: u32,
    rank_of: RankOf,
}

pub struct Os {
    procs: Vec<Process>,
    /// Kernel instructions one fault runs besides its zeroing or copy.
    fault_instructions: u64,
    table: FrameTable,
    frames: FrameAllocator,
    /// The cores' recent pages (kept only when the policy replaces pages).
    tlbs: Tlbs,
    replacing: bool,
    /// Pages evicted and not faulted in again, by (process, virtual page).
    evicted: BTreeSet<(Pid, u64)>,
    ranks: Option<RankAccounting>,
    /// Frames a component other than the allocator hands out (a hybrid memory's DRAM
    /// frames, docs/hybrid.md), with their free list: an exit that frees one leaves it in
    /// `released` for that component instead of returning it to the allocator.
    pub external: Option<external::ExternalFrames>,
    /// Frames a page migration copies from: an exit that frees one also leaves it in
    /// `released` (the migration frees it when it ends), so that no other process gets it
    /// while accesses to it are still redirected.
    held: BTreeSet<u32>,
    pub released: Vec<u32>,
    /// The global rank of the last translation without a fault (`count_access`).
    last_rank: u16,
    pub stats: OsStats,
}

pub type Pid = u32;
/// A thread of the workload (its trace file's index).
pub type ThreadId = u32;

impl Os {
    pub fn new(frames: FrameAllocator, fault_instructions: u64) -> Os {
        Self::with_tlb_pages(frames, fault_instructions, 64)
    }

    /// `new`, a replacing policy's rollover keeping each core's last `tlb_pages` pages.
    pub fn with_tlb_pages(frames: FrameAllocator, fault_instructions: u64, tlb_pages: u32) -> Os {
        let replacing = frames.replaces_pages();
        Os {
            procs: Vec::new(),
            fault_instructions,
            table: FrameTable::new(frames.frame_count()),
            tlbs: Tlbs::new(if replacing { tlb_pages } else { 0 }),
            replacing,
            evicted: BTreeSet::new(),
            ranks: None,
            external: None,
            held: BTreeSet::new(),
            released: Vec::new(),
            last_rank: 0,
            stats: OsStats {
                frames_usable: frames.usable(),
                ..Default::default()
            },
            frames,
        }
    }

    /// Counts each thread's accesses by global rank (`os.threads`): `ranks` ranks in all,
    /// `rank_of(frame)` each frame's.
    /// (A page-table entry holds 16 bits of rank: more ranks than that, which no memory the
    /// model can address has, go uncounted.)
    pub fn count_ranks(&mut self, ranks: u32, rank_of: RankOf) {
        if ranks <= 1 << 16 {
            self.ranks = Some(RankAccounting { ranks, rank_of });
        }
    }

    /// Thread `thread` starts: the policy may give it ranks now (`rank_clock`).
    pub fn start_thread(&mut self, thread: ThreadId) {
        self.frames.start_thread(thread, &self.table);
        self.thread_pages(thread);
    }

    /// `rank_clock` with `least_delay`: each global rank's mean DRAM read latency so far.
    pub fn set_rank_delays(&mut self, delays: &[f64]) {
        self.frames.set_rank_delays(delays);
    }

    /// Thread `thread`'s counters, created (with its ranks) when first needed.
    fn thread_pages(&mut self, thread: ThreadId) -> Option<&mut ThreadPages> {
        let ranks = self.ranks.as_ref()?.ranks;
        let t = thread as usize;
        if self.stats.threads.len() <= t {
            for i in self.stats.threads.len()..=t {
                let (preferred_rank, second_rank) = self
                    .frames
                    .thread_ranks(i as u32)
                    .unwrap_or((i as u32 % ranks, (i as u32 + 1) % ranks));
                self.stats.threads.push(ThreadPages {
                    preferred_rank,
                    second_rank,
                    accesses_by_rank: vec![0; ranks as usize],
                    ..Default::default()
                });
            }
        }
        let pages = &mut self.stats.threads[t];
        if let Some((p, s)) = self.frames.thread_ranks(thread) {
            // A policy that picks ranks when the thread starts (after its counters).
            (pages.preferred_rank, pages.second_rank) = (p, s);
        }
        Some(pages)
    }

    /// `frame`'s global rank when the OS counts accesses by rank, else 0.
    fn rank_of(&self, frame: u32) -> u16 {
        self.ranks
            .as_ref()
            .map_or(0, |acc| (acc.rank_of)(frame) as u16)
    }

    /// A translation to `frame` (on global rank `rank`) on core `core` that did not fault:
    /// the frame is referenced, the core's TLB holds it, and `count_access` will count it by
    /// rank once the access goes ahead (a retried access translates again).
    #[inline]
    fn note_access(&mut self, core: u32, frame: u32, rank: u16) {
        self.table.set_referenced(frame);
        if self.replacing {
            self.tlbs.touch(core, frame);
        }
        self.last_rank = rank;
    }

    /// The access last translated without a fault went ahead: counted for `thread` by its
    /// frame's rank (`os.threads`).
    #[inline]
    pub fn count_access(&mut self, thread: ThreadId) {
        if self.ranks.is_none() {
            return;
        }
        let rank = self.last_rank as u32;
        if self.stats.threads.get(thread as usize).is_none() {
            self.thread_pages(thread);
        }
        let t = &mut self.stats.threads[thread as usize];
        t.accesses_by_rank[rank as usize] += 1;
        if rank != t.preferred_rank {
            t.off_preferred += 1;
            if rank != t.second_rank {
                t.off_first_two += 1;
            }
        }
    }

    /// A fault of `thread` (its counter).
    fn note_fault(&mut self, thread: ThreadId) {
        self.stats.page_faults += 1;
        self.stats.fault_instructions += self.fault_instructions;
        if let Some(t) = self.thread_pages(thread) {
            t.page_faults += 1;
        }
    }

    /// A frame for `req` from the policy: a frame in use is evicted first (its owner's
    /// page-table entry removed, TLB entries shot down). Then `frame` is assigned to
    /// `req.pid`'s page `req.vpn`.
    fn take_frame(&mut self, req: &FrameRequest) -> Result<u32, String> {
        if let Some(f) = self
            .external
            .as_mut()
            .and_then(|x| x.place(req.pid, req.vpn))
        {
            return Ok(f as u32);
        }
        self.take_allocator_frame(req)
    }

    /// `take_frame` from the allocator alone (never an external frame).
    fn take_allocator_frame(&mut self, req: &FrameRequest) -> Result<u32, String> {
        let mut ctx = AllocContext {
            table: &mut self.table,
            tlbs: &self.tlbs,
            stats: &mut self.stats.placement,
        };
        let frame = self
            .frames
            .alloc(req, &mut ctx)
            .ok_or_else(|| self.out_of_memory())?;
        if self.replacing {
            if self.table.refcount(frame) > 0 {
                self.evict(frame, req.thread);
            }
            self.frames.set_page(frame, req.vpn);
        }
        Ok(frame)
    }

    /// Evicts the page in `frame` (one owner) for `thread`'s fault.
    fn evict(&mut self, frame: u32, thread: ThreadId) {
        let pid = self
            .table
            .owner(frame)
            .expect("a frame in use has an owner");
        let vpn = self.frames.page_in(frame);
        let pte = self.procs[pid as usize].pages.remove(vpn);
        debug_assert_eq!(pte.map(|p| p.frame), Some(frame));
        let free = self.table.release(frame);
        debug_assert!(free, "replacing policies pass over shared frames");
        self.tlbs.shoot_down(frame);
        self.evicted.insert((pid, vpn));
        self.stats.evictions += 1;
        if let Some(t) = self.thread_pages(thread) {
            t.evictions += 1;
        }
    }

    pub fn new_process(&mut self) -> Pid {
        self.procs.push(Process::default());
        self.stats.processes += 1;
        (self.procs.len() - 1) as Pid
    }

    /// Maps [vaddr, vaddr + bytes) (page-rounded); pages appear on first touch.
    pub fn map(&mut self, pid: Pid, vaddr: u64, bytes: u64) {
        self.add_region(pid, vaddr, bytes, false);
    }

    /// Maps [vaddr, vaddr + bytes) as touched before the trace began: each page gets a frame
    /// on its first access, without a fault (`Work::Resident`).
    pub fn map_resident(&mut self, pid: Pid, vaddr: u64, bytes: u64) {
        self.add_region(pid, vaddr, bytes, true);
    }

    fn add_region(&mut self, pid: Pid, vaddr: u64, bytes: u64, resident: bool) {
        let (start, end) = (vaddr / PAGE, (vaddr + bytes).div_ceil(PAGE));
        let regions = &mut self.procs[pid as usize].regions;
        // A range mapped again replaces what it covers (as mmap with MAP_FIXED does), which
        // also keeps the list from growing with repeated maps of the same range.
        cut(regions, start, end);
        regions.push(Region {
            start,
            end,
            resident,
        });
    }

    /// Unmaps [vaddr, vaddr + bytes) (page-rounded): present pages there lose their frame
    /// (freed when no other process shares it), in ascending order.
    pub fn unmap(&mut self, pid: Pid, vaddr: u64, bytes: u64) {
        let (start, end) = (vaddr / PAGE, (vaddr + bytes).div_ceil(PAGE));
        let (table, frames) = (&mut self.table, &mut self.frames);
        let proc_ = &mut self.procs[pid as usize];
        let mut pages = 0;
        proc_.pages.remove_range(start, end, |_, pte| {
            pages += 1;
            if table.release(pte.frame) {
                frames.free(pte.frame);
            }
        });
        cut(&mut proc_.regions, start, end);
        self.stats.unmapped_pages += pages;
    }

    /// `pid` replaces its program: every page and mapping goes.
    pub fn exec(&mut self, pid: Pid) {
        self.unmap(pid, 0, VADDR_LIMIT);
        self.stats.execs += 1;
    }

    /// Maps a region whose pages are present from the start (as if touched before the trace
    /// began): each unmapped page gets a frame now, without a fault. Returns the new frames,
    /// which the caller must make zero.
    pub fn map_populated(
        &mut self,
        pid: Pid,
        thread: ThreadId,
        vaddr: u64,
        bytes: u64,
    ) -> Result<Vec<u32>, String> {
        let end = vaddr.saturating_add(bytes);
        if end > VADDR_LIMIT {
            return Err(beyond_reach(end - 1));
        }
        self.map(pid, vaddr, bytes);
        let mut frames = Vec::new();
        for vpn in vaddr / PAGE..end.div_ceil(PAGE) {
            if self.procs[pid as usize].pages.get(vpn).is_some() {
                continue;
            }
            frames.push(self.new_page(pid, thread, vpn, Purpose::Populated)?);
        }
        self.stats.populated += frames.len() as u64;
        self.note_frames_used();
        Ok(frames)
    }

    /// Whether process `pid` has had more than one thread.
    pub fn is_threaded(&self, pid: Pid) -> bool {
        self.procs[pid as usize].threaded
    }

    /// A new thread in process `pid`, sharing its memory: `pid` again.
    pub fn spawn(&mut self, pid: Pid) -> Pid {
        self.procs[pid as usize].extra_threads += 1;
        self.procs[pid as usize].threaded = true;
        self.stats.spawns += 1;
        pid
    }

    /// A child with a copy-on-write view of `parent`'s memory.
    pub fn fork(&mut self, parent: Pid) -> Pid {
        let p = &mut self.procs[parent as usize];
        p.pages.write_protect_all();
        let mut child = p.clone();
        child.extra_threads = 0;
        child.threaded = false;
        let table = &mut self.table;
        child.pages.for_each(|_, pte| table.share(pte.frame));
        self.procs.push(child);
        self.stats.processes += 1;
        self.stats.forks += 1;
        (self.procs.len() - 1) as Pid
    }

    /// Kernel instructions each fault runs besides its zeroing or copy.
    pub fn fault_instructions(&self) -> u64 {
        self.fault_instructions
    }

    /// Physical address of `vaddr` for `pid` (running as `thread`), and the work a fault
    /// needs first (`Some` exactly when the access faults; the fault path's
    /// `fault_instructions` come with it). Sets the frame's referenced bit.
    pub fn translate(
        &mut self,
        pid: Pid,
        thread: ThreadId,
        vaddr: u64,
        write: bool,
    ) -> Result<(u64, Option<Work>), String> {
        self.translate_on(thread, pid, thread, vaddr, write)
    }

    /// `translate` for an access on core `core` (whose TLB then holds the page). An access
    /// that does not fault is counted by rank when the caller says it went ahead
    /// (`count_access`).
    pub fn translate_on(
        &mut self,
        core: u32,
        pid: Pid,
        thread: ThreadId,
        vaddr: u64,
        write: bool,
    ) -> Result<(u64, Option<Work>), String> {
        self.translate_placing(core, pid, thread, vaddr, write, None)
    }

    /// `translate` for the destination of a copy whose source is `src_frame` (a write): a
    /// page of a resident region seen for the first time is placed as a copy-on-write
    /// destination is (`Purpose::CopyOnWrite`, the source's subarray under
    /// `subarray_aware`), since the copy is what brings it into being.
    pub fn translate_copy_destination(
        &mut self,
        core: u32,
        pid: Pid,
        thread: ThreadId,
        vaddr: u64,
        src_frame: u32,
    ) -> Result<(u64, Option<Work>), String> {
        self.translate_placing(core, pid, thread, vaddr, true, Some(src_frame))
    }

    /// `pid`'s page at `vaddr` loses its frame (freed when no other process shares it) but
    /// stays mapped, so its next touch places it anew: a trace's page copy or initialization
    /// record writes a page the kernel allocates when the record happens. Whether the page
    /// was present.
    pub fn renew_page(&mut self, pid: Pid, vaddr: u64) -> bool {
        let vpn = vaddr / PAGE;
        // An evicted page is renewed too: its next touch places it, with no refault.
        let evicted = self.replacing && self.evicted.remove(&(pid, vpn));
        let (table, frames, tlbs) = (&mut self.table, &mut self.frames, &mut self.tlbs);
        let (external, held, released) = (&self.external, &self.held, &mut self.released);
        let mut present = false;
        self.procs[pid as usize]
            .pages
            .remove_range(vpn, vpn + 1, |_, pte| {
                present = true;
                tlbs.shoot_down(pte.frame);
                if table.release(pte.frame) {
                    // As at an exit: a hybrid memory's DRAM frame, or one a migration copies
                    // from, goes back to the component that owns it.
                    let is_external = external
                        .as_ref()
                        .is_some_and(|x| x.contains(pte.frame as u64));
                    if is_external || held.contains(&pte.frame) {
                        released.push(pte.frame);
                    } else {
                        frames.free(pte.frame);
                    }
                }
            });
        if present {
            self.procs[pid as usize].renewed.insert(vpn);
            self.note_frames_used();
        }
        self.stats.renewed_pages += (present || evicted) as u64;
        present || evicted
    }

    fn translate_placing(
        &mut self,
        core: u32,
        pid: Pid,
        thread: ThreadId,
        vaddr: u64,
        write: bool,
        copy_of: Option<u32>,
    ) -> Result<(u64, Option<Work>), String> {
        let vpn = vaddr / PAGE;
        let offset = vaddr % PAGE;
        let proc_ = &mut self.procs[pid as usize];
        if let Some(pte) = proc_.pages.get_mut(vpn) {
            let src = pte.frame;
            if !write || pte.writable {
                let rank = pte.rank;
                self.note_access(core, src, rank);
                return Ok((src as u64 * PAGE + offset, None));
            }
            if self.table.refcount(src) == 1 {
                pte.writable = true;
                self.note_fault(thread);
                self.table.set_referenced(src);
                self.stats.cow_reuses += 1;
                return Ok((src as u64 * PAGE + offset, Some(Work::Reuse)));
            }
            self.note_fault(thread);
            let dst = self.copy_on_write(pid, thread, vpn, src)?;
            return Ok((dst as u64 * PAGE + offset, Some(Work::Copy { src, dst })));
        }
        let region = proc_
            .regions
            .iter()
            .rev()
            .find(|r| (r.start..r.end).contains(&vpn))
            .copied();
        let region = match region {
            Some(r) => r,
            None if proc_.threaded && vaddr < VADDR_LIMIT => {
                self.stats.unordered_touches += 1;
                Region::default()
            }
            None => {
                return Err(format!(
                    "access to unmapped address {vaddr:#x} (map it first with an `A` event)"
                ))
            }
        };
        if vaddr >= VADDR_LIMIT {
            return Err(beyond_reach(vaddr));
        }
        // An evicted page of a resident region faults like any other evicted page.
        let refault = self.replacing && self.evicted.remove(&(pid, vpn));
        if region.resident && !refault {
            let frame = self.place_resident(pid, thread, vpn, copy_of)?;
            let rank = self.rank_of(frame);
            self.note_access(core, frame, rank);
            return Ok((frame as u64 * PAGE + offset, Some(Work::Resident { frame })));
        }
        self.note_fault(thread);
        self.stats.refaults += refault as u64;
        let frame = self.new_page(pid, thread, vpn, Purpose::FirstTouch)?;
        self.stats.zero_fills += 1;
        self.note_frames_used();
        Ok((frame as u64 * PAGE + offset, Some(Work::Zero { frame })))
    }

    /// Gives `pid`'s shared page `vpn` (now in frame `src`) a private copy on a write: a new
    /// frame, writable, in its page-table entry; returns the new frame.
    fn copy_on_write(
        &mut self,
        pid: Pid,
        thread: ThreadId,
        vpn: u64,
        src: u32,
    ) -> Result<u32, String> {
        let req = FrameRequest {
            pid,
            thread,
            vpn,
            purpose: Purpose::CopyOnWrite { src_frame: src },
        };
        let dst = self.take_frame(&req)?;
        let rank_of_dst = self.rank_of(dst);
        let pte = self.procs[pid as usize]
            .pages
            .get_mut(vpn)
            .expect("present");
        *pte = Pte {
            frame: dst,
            writable: true,
            rank: rank_of_dst,
        };
        self.table.release(src);
        self.table.assign(dst, pid);
        self.table.set_page(dst, vpn);
        self.stats.cow_copies += 1;
        if self.frames.same_key(src, dst) {
            self.stats.cow_same_subarray += 1;
        }
        self.note_frames_used();
        Ok(dst)
    }

    /// Places `pid`'s page `vpn` of a resident region without a fault (a copy of frame
    /// `copy_of` when the page is a placed copy's destination); returns its frame.
    fn place_resident(
        &mut self,
        pid: Pid,
        thread: ThreadId,
        vpn: u64,
        copy_of: Option<u32>,
    ) -> Result<u32, String> {
        let purpose = match copy_of {
            Some(src_frame) => Purpose::CopyOnWrite { src_frame },
            None => Purpose::Populated,
        };
        let renewed = self.procs[pid as usize].renewed.remove(&vpn);
        let frame = self.new_page(pid, thread, vpn, purpose)?;
        if let Some(src) = copy_of {
            self.stats.copy_placements += 1;
            if self.frames.same_key(src, frame) {
                self.stats.copy_placements_same_subarray += 1;
            }
        }
        self.stats.populated += !renewed as u64;
        self.note_frames_used();
        Ok(frame)
    }

    /// A fresh frame for `pid`'s page `vpn` (below the page table's reach), writable and
    /// referenced once.
    fn new_page(
        &mut self,
        pid: Pid,
        thread: ThreadId,
        vpn: u64,
        purpose: Purpose,
    ) -> Result<u32, String> {
        let req = FrameRequest {
            pid,
            thread,
            vpn,
            purpose,
        };
        let frame = self.take_frame(&req)?;
        let pte = Pte {
            frame,
            writable: true,
            rank: self.rank_of(frame),
        };
        self.procs[pid as usize].pages.insert(vpn, pte)?;
        self.table.assign(frame, pid);
        self.table.set_page(frame, vpn);
        Ok(frame)
    }

    /// A thread of `pid` exits; with the process's last thread, the process: its frames
    /// lose a reference each, in ascending virtual page order; unreferenced ones are free
    /// again.
    pub fn exit(&mut self, pid: Pid) {
        let threads = &mut self.procs[pid as usize].extra_threads;
        if *threads > 0 {
            *threads -= 1;
            return;
        }
        let (table, frames) = (&mut self.table, &mut self.frames);
        let (external, held, released) = (&self.external, &self.held, &mut self.released);
        let is_external = |f: u32| external.as_ref().is_some_and(|x| x.contains(f as u64));
        let mut generations = BTreeMap::new();
        self.procs[pid as usize].pages.for_each(|_, pte| {
            generations.insert(pte.frame, table.generation(pte.frame));
            if table.release(pte.frame) {
                if is_external(pte.frame) || held.contains(&pte.frame) {
                    released.push(pte.frame);
                } else {
                    frames.free(pte.frame);
                }
            }
        });
        self.procs[pid as usize].exit_generations = Some(generations);
        self.note_frames_used();
    }

    /// `lookup`, and for an exited process None when the frame was handed out again since
    /// it exited (its bytes are another's now or may be).
    pub fn lookup_intact(&self, pid: Pid, vaddr: u64) -> Option<u64> {
        let pa = self.lookup(pid, vaddr)?;
        let frame = (pa / PAGE) as u32;
        match &self.procs[pid as usize].exit_generations {
            Some(g) if g.get(&frame) != Some(&self.table.generation(frame)) => None,
            _ => Some(pa),
        }
    }

    /// Physical address of `vaddr` if it is mapped (no fault taken).
    pub fn lookup(&self, pid: Pid, vaddr: u64) -> Option<u64> {
        let pte = self.procs.get(pid as usize)?.pages.get(vaddr / PAGE)?;
        Some(pte.frame as u64 * PAGE + vaddr % PAGE)
    }

    /// Frames in `range` are handed out by another component (a hybrid memory's DRAM
    /// frames): `remap` moves pages into them, an exit leaves them in `released`, and with
    /// `place_above` Some(n) new pages take them before the allocator's while more than n
    /// are free.
    pub fn set_external_frames(&mut self, range: std::ops::Range<u64>, place_above: Option<u64>) {
        self.external = Some(external::ExternalFrames::new(range, place_above));
    }

    /// Takes the lowest free external frame for a migration's destination (its bytes are
    /// the migrating page's from now on).
    pub fn take_external(&mut self) -> Option<u64> {
        let f = self.external.as_mut()?.take()?;
        self.table.reuse(f as u32);
        Some(f)
    }

    fn is_external(&self, frame: u32) -> bool {
        self.external
            .as_ref()
            .is_some_and(|x| x.contains(frame as u64))
    }

    /// A frame from the allocator kept for `pid`'s page `vpn` while the page lives
    /// elsewhere (a hybrid memory's PCM home for a page placed in DRAM first, taken when
    /// the page is demoted). Err when the allocator has none left.
    pub fn alloc_kept_frame(
        &mut self,
        pid: Pid,
        thread: ThreadId,
        vpn: u64,
    ) -> Result<u32, String> {
        let req = FrameRequest {
            pid,
            thread,
            vpn,
            purpose: Purpose::FirstTouch,
        };
        let frame = self.take_allocator_frame(&req)?;
        self.table.assign(frame, pid);
        self.table.set_page(frame, vpn);
        self.note_frames_used();
        Ok(frame)
    }

    /// Page migration: `pid`'s virtual page `vpn` now lives in `frame` (whose bytes the
    /// caller made the page's). A frame not yet owned becomes `pid`'s; the old frame keeps
    /// its owner (the caller releases it, or keeps it for the page, as its policy says).
    /// Returns the old frame, or None when `vpn` is not mapped.
    pub fn remap(&mut self, pid: Pid, vpn: u64, frame: u32) -> Option<u32> {
        let rank = self.rank_of(frame);
        let pte = self.procs.get_mut(pid as usize)?.pages.get_mut(vpn)?;
        let old = pte.frame;
        pte.frame = frame;
        pte.rank = rank;
        if self.table.refcount(frame) == 0 {
            self.table.assign(frame, pid);
            self.table.set_page(frame, vpn);
        }
        Some(old)
    }

    /// Drops the frame table's reference to `frame` without freeing it to the allocator
    /// (an external frame vacated by a migration).
    pub fn release_external(&mut self, frame: u32) {
        self.table.release(frame);
    }

    /// A migration copies from `frame` (see `released`).
    pub fn hold(&mut self, frame: u32) {
        self.held.insert(frame);
    }

    /// The migration from `frame` ended; a frame its process released meanwhile goes back
    /// to the allocator.
    pub fn unhold(&mut self, frame: u32) {
        self.held.remove(&frame);
        if self.table.refcount(frame) == 0 && !self.is_external(frame) {
            self.frames.free(frame);
        }
    }

    /// Releases `frame`, kept for a page that no longer needs it, to the allocator.
    pub fn free_frame(&mut self, frame: u32) {
        if self.table.release(frame) {
            self.frames.free(frame);
        }
    }

    /// Keeps `frames_used` at its peak.
    fn note_frames_used(&mut self) {
        self.stats.frames_used = self.stats.frames_used.max(self.frames.in_use());
    }

    fn out_of_memory(&self) -> String {
        if let Some(x) = &self.external {
            let r = x.range();
            return format!(
                "out of PCM: all {} usable 4 KB frames of the hybrid memory's PCM are in use by processes that have not exited, besides its {} DRAM frames (frames {}..{}); a larger PCM (memory.device[].rows) or fewer or smaller workload copies",
                self.frames.usable(),
                r.end - r.start,
                r.start,
                r.end
            );
        }
        format!(
            "out of physical memory: all {} usable 4 KB frames are in use by processes that have not exited (an exited process's frames are freed)",
            self.frames.usable()
        )
    }

    pub fn frames(&self) -> &FrameAllocator {
        &self.frames
    }

    /// Each frame's owner, sharing count and referenced bit.
    pub fn frame_table(&self) -> &FrameTable {
        &self.table
    }
}

/// Removes pages [start, end) from `regions`, splitting a region that straddles the range.
fn cut(regions: &mut Vec<Region>, start: u64, end: u64) {
    if !regions.iter().any(|r| r.start < end && start < r.end) {
        return;
    }
    let mut kept = Vec::with_capacity(regions.len() + 1);
    for r in regions.drain(..) {
        if r.end <= start || end <= r.start {
            kept.push(r);
            continue;
        }
        if r.start < start {
            kept.push(Region { end: start, ..r });
        }
        if end < r.end {
            kept.push(Region { start: end, ..r });
        }
    }
    *regions = kept;
}

#[cfg(test)]
mod tests {
    use super::allocator::sites_from_mapper;
    use super::*;
    use crate::config::AllocatorPolicy;
    use crate::mapping::AddressMapper;
    use crate::spec::presets::preset;

    fn os(policy: AllocatorPolicy) -> Os {
        let mut o = preset("DDR3_2Gb_x8_1066").unwrap().organisation;
        o.columns = 512;
        o.rows = 4096;
        o.rows_per_subarray = 512;
        let m = AddressMapper::new(&o, "RoRaBaChCo", false).unwrap();
        let frames = (m.capacity() / PAGE) as usize;
        let site = sites_from_mapper(&m, |r| r % 512 == 511);
        Os::new(FrameAllocator::new(policy, frames, site, 1), 100)
    }

    #[test]
    fn first_touch_zeroes_and_fork_copies_on_write() {
        let mut os = os(AllocatorPolicy::Scatter);
        let p = os.new_process();
        os.map(p, 0x10000, 2 * PAGE);
        assert!(os.translate(p, 0, 0x9000, false).is_err(), "unmapped");
        let (pa, work) = os.translate(p, 0, 0x10008, true).unwrap();
        let Some(Work::Zero { frame }) = work else {
            panic!("{work:?}")
        };
        assert_eq!(pa, frame as u64 * PAGE + 8);
        assert_eq!(os.translate(p, 0, 0x10010, true).unwrap(), (pa + 8, None));
        let c = os.fork(p);
        // Reads share; the first write on either side copies; the last sharer just writes.
        assert_eq!(os.translate(c, 0, 0x10008, false).unwrap(), (pa, None));
        let (cpa, work) = os.translate(c, 0, 0x10008, true).unwrap();
        assert_eq!(
            work,
            Some(Work::Copy {
                src: frame,
                dst: (cpa / PAGE) as u32
            })
        );
        assert_ne!(cpa, pa);
        assert_eq!(
            os.translate(p, 0, 0x10008, true).unwrap(),
            (pa, Some(Work::Reuse)),
            "parent is alone now"
        );
        assert_eq!(
            (os.stats.forks, os.stats.cow_copies, os.stats.cow_reuses),
            (1, 1, 1)
        );
        // Three faults (first touch, the child's copy, the parent's reuse), 100 each.
        assert_eq!(
            (os.stats.page_faults, os.stats.fault_instructions),
            (3, 300)
        );
    }

    #[test]
    fn subarray_aware_keeps_copies_in_the_source_subarray() {
        for (policy, expect_all) in [
            (AllocatorPolicy::SubarrayAware, true),
            (AllocatorPolicy::Scatter, false),
            (AllocatorPolicy::InterBank, false),
        ] {
            let mut os = os(policy);
            let p = os.new_process();
            os.map(p, 0, 200 * PAGE);
            for i in 0..200 {
                os.translate(p, 0, i * PAGE, true).unwrap();
            }
            let c = os.fork(p);
            for i in 0..200 {
                os.translate(c, 0, i * PAGE, true).unwrap();
            }
            assert_eq!(os.stats.cow_copies, 200);
            if policy == AllocatorPolicy::InterBank {
                // RoRaBaChCo, 1 channel: frame = (row * 8 + bank); copies go to bank ^ 1.
                for i in 0..200 {
                    let (src, dst) = (
                        os.lookup(p, i * PAGE).unwrap(),
                        os.lookup(c, i * PAGE).unwrap(),
                    );
                    assert_eq!(((src / PAGE) % 8) ^ 1, (dst / PAGE) % 8);
                }
                assert_eq!(os.stats.cow_same_subarray, 0, "copies leave the bank");
            }
            if expect_all {
                assert_eq!(os.stats.cow_same_subarray, 200);
            } else {
                assert!(
                    os.stats.cow_same_subarray < 20,
                    "{}",
                    os.stats.cow_same_subarray
                );
            }
        }
    }

    #[test]
    fn reserved_rows_are_never_allocated_and_memory_runs_out_cleanly() {
        let mut os = os(AllocatorPolicy::Scatter);
        let usable = os.stats.frames_usable;
        assert_eq!(usable, 4096 * 8 * 511 / 512); // 4096 rows x 8 banks, minus one row in 512
        let p = os.new_process();
        os.map(p, 0, (usable + 1) * PAGE);
        for i in 0..usable {
            let (pa, _) = os.translate(p, 0, i * PAGE, true).unwrap();
            let row = pa / PAGE / 8; // RoRaBaChCo, 1 channel: 8 pages (banks) per row number
            assert_ne!(row % 512, 511);
        }
        let e = os.translate(p, 0, usable * PAGE, true).unwrap_err();
        assert!(e.contains("out of physical memory"), "{e}");
        // As the message says, an exited process's frames are freed: a new one gets them.
        assert!(e.contains("an exited process's frames are freed"), "{e}");
        os.exit(p);
        let q = os.new_process();
        os.map(q, 0, PAGE);
        assert!(os.translate(q, 1, 0, true).is_ok());
        assert_eq!(os.stats.frames_used, usable);
    }

    #[test]
    fn translate_marks_frames_referenced_and_the_table_knows_owners_and_sharing() {
        let mut os = os(AllocatorPolicy::Scatter);
        let p = os.new_process();
        os.map(p, 0, 2 * PAGE);
        let (pa, _) = os.translate(p, 0, 8, true).unwrap();
        let f = (pa / PAGE) as u32;
        let t = os.frame_table();
        assert_eq!(
            (t.owner(f), t.refcount(f), t.referenced(f)),
            (Some(p), 1, true)
        );
        os.table.clear_referenced(f);
        os.translate(p, 0, 16, false).unwrap();
        assert!(os.frame_table().referenced(f), "a plain read hit sets it");
        let c = os.fork(p);
        assert_eq!(os.frame_table().refcount(f), 2);
        os.translate(c, 1, 8, true).unwrap(); // the child copies
        let cf = (os.lookup(c, 8).unwrap() / PAGE) as u32;
        let t = os.frame_table();
        assert_eq!(
            (t.owner(cf), t.refcount(cf), t.refcount(f)),
            (Some(c), 1, 1)
        );
        os.exit(c);
        assert_eq!(
            (os.frame_table().owner(cf), os.frame_table().refcount(cf)),
            (None, 0)
        );
    }

    #[test]
    fn an_exited_process_image_is_read_only_where_no_one_took_its_frames() {
        let mut os = os(AllocatorPolicy::SubarrayAware);
        let p = os.new_process();
        os.map(p, 0, 3 * PAGE);
        for i in 0..3 {
            os.translate(p, 0, i * PAGE, true).unwrap();
        }
        let before: Vec<_> = (0..3).map(|i| os.lookup_intact(p, i * PAGE)).collect();
        assert!(before.iter().all(Option::is_some));
        os.exit(p);
        assert_eq!(os.lookup_intact(p, PAGE), before[1], "nobody took it yet");
        // Another process takes the most recently freed frame (the highest page's).
        let q = os.new_process();
        os.map(q, 0, PAGE);
        let (pa, _) = os.translate(q, 1, 0, true).unwrap();
        assert_eq!(Some(pa), before[2]);
        assert_eq!(os.lookup_intact(p, 2 * PAGE), None, "q has it now");
        assert_eq!(
            os.lookup(p, 2 * PAGE),
            before[2],
            "the stale entry itself remains"
        );
        assert_eq!(os.lookup_intact(p, 0), before[0]);
        os.exit(q);
        assert_eq!(
            os.lookup_intact(p, 2 * PAGE),
            None,
            "freed again is not p's again"
        );
        assert_eq!(os.lookup_intact(q, 0), Some(pa));
    }

    #[test]
    fn exit_frees_in_ascending_page_order_and_far_apart_pages_work() {
        let mut os = os(AllocatorPolicy::SubarrayAware);
        let p = os.new_process();
        // Pages far apart in the 48-bit space, touched out of order.
        let vaddrs = [0x7fff_ffff_f000, 0x3000, 0x1_0000_0000, 0, 0x40_0000];
        for &v in &vaddrs {
            os.map(p, v, PAGE);
        }
        let mut frame_of = std::collections::BTreeMap::new();
        for &v in &vaddrs {
            let (pa, _) = os.translate(p, 0, v, true).unwrap();
            frame_of.insert(v, pa / PAGE);
        }
        os.exit(p);
        assert_eq!(os.frames().in_use(), 0);
        assert_eq!(os.stats.frames_used, 5, "the peak stays");
        // The most recently freed is reused first: the highest page's frame comes back first.
        let q = os.new_process();
        os.map(q, 0, 5 * PAGE);
        let again: Vec<u64> = (0..5)
            .map(|i| os.translate(q, 1, i * PAGE, true).unwrap().0 / PAGE)
            .collect();
        let descending: Vec<u64> = frame_of.values().rev().copied().collect();
        assert_eq!(again, descending);
        os.map(q, 1 << 48, PAGE);
        let e = os.translate(q, 1, 1 << 48, true).unwrap_err();
        assert!(e.contains("0x1000000000000") && e.contains("beyond"), "{e}");
        let e = os
            .map_populated(q, 1, (1 << 48) - PAGE, 2 * PAGE)
            .unwrap_err();
        assert!(e.contains("beyond"), "{e}");
    }
}
