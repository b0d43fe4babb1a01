//! Physical page (frame) allocation: the interface every placement policy implements
//! (`FramePolicy`: a frame for a `FrameRequest` that says who asks and why), the closed enum
//! `FrameAllocator` that dispatches to the policies without trait objects, and the bookkeeping
//! they share (`FreeFrames`): the usable frames in one seeded scattered order (as a stock
//! kernel's buddy allocator spreads pages after some uptime), the most recently freed frames
//! reused first, and per-pool free lists. The allocator knows nothing of the address mapper:
//! it is built from the frame count and `site(frame)`, where a frame's first line lies in DRAM
//! (`None`: the frame must not be used, as when it touches a row RowClone reserves);
//! `sites_from_mapper` derives that from an `AddressMapper` and `usable_frames_from_mapper`
//! counts the usable frames in closed form. One file per policy: `scatter`, `subarray_aware`,
//! `inter_bank`, `rank_static`, `clock` and `rank_clock` (the last two replace pages: they
//! may hand out a frame in use, which the OS evicts first); the lazily drawn order of large
//! memories is in `lazy_order`, global rank numbers in `ranks`, the physical frame list the
//! CLOCK policies walk in `frame_list`.
//!
//! Two paths give the scattered order. Up to `LAZY_ABOVE_FRAMES` frames (16 GiB: every shipped
//! config) it is eager: every frame's site is decoded at start-up and the usable frames are
//! shuffled by a backward Fisher-Yates, with flat per-frame tables; results of existing runs
//! depend on exactly this order. Above it, start-up would cost seconds and gigabytes for a
//! workload that touches a few pages, so the order is drawn lazily (`lazy_order`): a forward
//! Fisher-Yates over all frame numbers that draws position i only when a frame is wanted,
//! decodes only drawn frames, skips unusable ones as they come, and fills the pools as frames
//! are drawn; per-frame state is sparse (maps of drawn and used frames). Start-up is then
//! independent of capacity; a copy-on-write destination wanted from one pool draws (and
//! keeps, free, for later allocations) frames until one of that pool comes, about as many as
//! there are pools, and a pool with no free frame left draws the whole rest of the order once.

mod clock;
mod frame_list;
mod inter_bank;
mod lazy_order;
mod rank_clock;
mod rank_static;
pub mod ranks;
mod scatter;
mod subarray_aware;

pub use clock::Clock;
pub use inter_bank::InterBank;
pub use rank_clock::RankClock;
pub use rank_static::RankStatic;
pub use scatter::Scatter;
pub use subarray_aware::SubarrayAware;

use super::frame_table::FrameTable;
use super::tlb::Tlbs;
use super::Pid;
use crate::config::{AllocatorPolicy, PreferredRank};
use crate::mapping::AddressMapper;
use crate::rng::SplitMix64;
use crate::stat_struct::stat_struct;
use frame_list::FrameList;
use lazy_order::LazyOrder;
use ranks::RankLayout;
use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub const PAGE: u64 = 4096;

/// Offset of a frame's last line (of 64 bytes) within it.
const LAST_LINE: u64 = PAGE - 64;

/// Frame counts above which the scattered order is drawn lazily: 2^22 frames of 4 KiB
/// (16 GiB), above every shipped config, so their results keep the eager order.
pub const LAZY_ABOVE_FRAMES: usize = 1 << 22;

/// `site(frame)`, owned and shared, so that a lazy order can keep asking during the run.
pub type SiteFn = Arc<dyn Fn(u32) -> Option<FrameSite> + Send + Sync>;

/// A frame's pool, named by its site with the fields that do not tell pools apart zeroed.
pub type PoolKey = fn(&FrameSite) -> FrameSite;

/// How a policy groups frames: the pool key, and whether it keeps a free list per pool.
#[derive(Clone, Copy, Debug)]
pub struct Pooling {
    pub key: PoolKey,
    pub lists: bool,
}

/// Where a frame's first line lies in DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FrameSite {
    pub channel: u32,
    pub rank: u32,
    /// The flat bank index within the channel (rank, bank group and bank).
    pub bank_index: u32,
    pub subarray: u32,
}

/// The pool of a subarray: (channel, bank, subarray).
pub fn subarray_key(s: &FrameSite) -> FrameSite {
    FrameSite { rank: 0, ..*s }
}

/// The pool of a bank: (channel, bank).
pub fn bank_key(s: &FrameSite) -> FrameSite {
    FrameSite {
        rank: 0,
        subarray: 0,
        ..*s
    }
}

/// `site(frame)` under `mapper` (borrowed, or owned for a `SiteFn`): `None` when the frame's
/// first or last line lies in a row `reserved(row)` marks. The row is read from address bits
/// field by field, so the last line's row is the first line's with the row bits of the page
/// offset set (`usable_frames_from_mapper` relies on the same); when the page offset holds no
/// row bit (every shipped mapping), both lines share a row and one decode per frame does.
pub fn sites_from_mapper<M: Borrow<AddressMapper>, R: Fn(u32) -> bool>(
    mapper: M,
    reserved: R,
) -> impl Fn(u32) -> Option<FrameSite> {
    let in_page_row = mapper.borrow().decode(LAST_LINE).row;
    move |frame| {
        let mapper = mapper.borrow();
        let first = mapper.decode(frame as u64 * PAGE);
        if reserved(first.row) || (in_page_row != 0 && reserved(first.row | in_page_row)) {
            return None;
        }
        Some(FrameSite {
            channel: first.channel,
            rank: first.rank,
            bank_index: first.bank_index,
            subarray: first.subarray,
        })
    }
}

/// How many of the first `frames` frames (a power of two, as every mapped memory is)
/// `sites_from_mapper(mapper, reserved)` calls usable, in closed form. The row is one field of
/// address bits, so a frame's first and last line rows depend only on the row bits within the
/// frame number (the same for both lines) and those within the page offset (clear in the first
/// line, set in the last); each pattern of the frame's row bits occurs `frames >> bits` times.
/// Costs O(rows x row bits), not O(frames). Other frame counts are counted frame by frame.
pub fn usable_frames_from_mapper(
    mapper: &AddressMapper,
    reserved: impl Fn(u32) -> bool,
    frames: u64,
) -> u64 {
    if !frames.is_power_of_two() {
        let site = sites_from_mapper(mapper, reserved);
        return (0..frames).filter(|&f| site(f as u32).is_some()).count() as u64;
    }
    // Decoding is a shift and mask per field, so each address bit adds its own row bit.
    let in_page = mapper.decode(LAST_LINE).row;
    let frame_row_bits: Vec<u32> = (0..frames.trailing_zeros())
        .map(|b| mapper.decode((1u64 << b) * PAGE).row)
        .filter(|&row| row != 0)
        .collect();
    let patterns = 1u64 << frame_row_bits.len();
    let usable_patterns = (0..patterns)
        .filter(|&p| {
            let row = frame_row_bits
                .iter()
                .enumerate()
                .filter(|&(i, _)| p >> i & 1 == 1)
                .fold(0, |row, (_, &bit)| row | bit);
            !reserved(row) && !reserved(row | in_page)
        })
        .count() as u64;
    usable_patterns * (frames / patterns)
}

/// Why a frame is wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A page's first touch (it will be zeroed).
    FirstTouch,
    /// A private copy of the shared `src_frame` (copy-on-write).
    CopyOnWrite { src_frame: u32 },
    /// A page present from the start of the trace (`P` events).
    Populated,
}

/// A request for a frame: who asks (process and thread), for which virtual page, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRequest {
    pub pid: Pid,
    pub thread: u32,
    pub vpn: u64,
    pub purpose: Purpose,
}

stat_struct! {
    /// How the rank-aware and replacing policies placed pages, under `os.placement`.
    pub struct PlacementStats {
        pub rank_full_fallbacks: u64 = sum("pages", "rank_static: pages placed on another rank because the wanted one had no free frame (the next rank up, cyclically, with one)"),
        pub mapping_errors: u64 = sum("pages", "rank_static: pages sent to a random other rank on purpose (os.mapping_error)"),
        pub second_rank_pages: u64 = sum("pages", "rank_clock: frames taken by the walk of the thread's second rank (its own rank's pointer had reached the end)"),
        pub clock_pages: u64 = sum("pages", "rank_clock: frames taken by the baseline CLOCK walk from the trailing pointer (both of the thread's ranks' pointers at the end)"),
        pub rollovers: u64 = sum("rollovers", "clock, rank_clock: times all pointers reached the end of the frame list, every referenced bit but the TLBs' pages was cleared and the pointers restarted"),
    }
}

/// What a policy may read and change besides its own state when it picks a frame.
pub struct AllocContext<'a> {
    /// Owners, sharing and referenced bits (CLOCK walks clear bits).
    pub table: &'a mut FrameTable,
    /// Pages whose referenced bits a CLOCK rollover keeps.
    pub tlbs: &'a Tlbs,
    pub stats: &'a mut PlacementStats,
}

/// A placement policy.
pub trait FramePolicy {
    /// A frame for `req`, or `None` when none can be had. Without page replacement the frame
    /// is free (and marked used); a replacing policy may return a frame in use, whose page
    /// the caller evicts before reusing it.
    fn alloc(&mut self, req: &FrameRequest, ctx: &mut AllocContext) -> Option<u32>;
    /// `frame` is free again.
    fn free(&mut self, frame: u32);
    /// The shared bookkeeping.
    fn frames(&self) -> &FreeFrames;
    /// Thread `thread` starts (the rank policies pick its ranks now).
    fn start_thread(&mut self, _thread: u32, _table: &FrameTable) {}
    /// The preferred and second rank of `thread`, if the policy gives threads ranks.
    fn thread_ranks(&self, _thread: u32) -> Option<(u32, u32)> {
        None
    }
    /// The replacing policies: the virtual page `frame` holds (to evict it) ...
    fn page_in(&self, _frame: u32) -> u64 {
        unreachable!("only replacing policies evict")
    }
    /// ... as the OS sets it when it assigns the frame.
    fn set_page(&mut self, _frame: u32, _vpn: u64) {}
}

/// What the rank-aware and replacing policies need besides the frames.
#[derive(Clone, Debug)]
pub struct RankSetup {
    pub layout: RankLayout,
    /// `os.thread_ranks`.
    pub thread_ranks: Vec<u32>,
    /// `os.mapping_error`.
    pub mapping_error: f64,
    pub preferred: PreferredRank,
}

impl RankSetup {
    /// One rank, no per-thread choices (the policies that ignore ranks).
    pub fn single() -> RankSetup {
        RankSetup {
            layout: RankLayout::new(&[1]),
            thread_ranks: Vec::new(),
            mapping_error: 0.0,
            preferred: PreferredRank::MostFree,
        }
    }
}

/// Which frames are in use: a flag per frame (eager), or the set of them (lazy).
#[derive(Clone, Debug)]
enum Used {
    Dense(Vec<bool>),
    Sparse(BTreeSet<u32>),
}

impl Used {
    #[inline]
    fn contains(&self, frame: u32) -> bool {
        match self {
            Used::Dense(flags) => flags[frame as usize],
            Used::Sparse(set) => set.contains(&frame),
        }
    }

    fn set(&mut self, frame: u32, used: bool) {
        match self {
            Used::Dense(flags) => flags[frame as usize] = used,
            Used::Sparse(set) if used => {
                set.insert(frame);
            }
            Used::Sparse(set) => {
                set.remove(&frame);
            }
        }
    }
}

/// Each frame's pool number: per frame (eager; meaningful for usable frames), or per drawn
/// frame (lazy: every frame handed out has been drawn).
#[derive(Clone, Debug)]
enum PoolOf {
    Dense(Vec<u32>),
    Sparse(BTreeMap<u32, u32>),
}

/// A free list per pool, each in the scattered order, freed frames appended; and per pool
/// the frames freed, the most recent last (entries taken since by another path are skipped
/// when met).
#[derive(Clone, Debug, Default)]
struct PoolLists {
    lists: Vec<Vec<u32>>,
    cursor: Vec<usize>,
    freed: Vec<Vec<u32>>,
}

/// Free-frame bookkeeping every policy shares.
#[derive(Clone, Debug)]
pub struct FreeFrames {
    /// Usable frames in the seeded scattered order, as far as drawn (all of them when eager).
    order: Vec<u32>,
    cursor: usize,
    /// The rest of the order, drawn on demand (`None`: `order` is complete).
    lazy: Option<LazyOrder>,
    /// Freed frames, the most recent last.
    freed: Vec<u32>,
    used: Used,
    pool_of: PoolOf,
    key: PoolKey,
    /// Pool numbers by key, numbered in order of first appearance (by frame number when
    /// eager, as drawn when lazy), and each pool's key. Only looked up, never iterated (so a
    /// hash map cannot reach results); one look-up per frame at start-up when eager, which in
    /// an ordered map was most of a large memory's start-up (docs/performance.md).
    pools: FxHashMap<FrameSite, u32>,
    pool_keys: Vec<FrameSite>,
    /// Per-pool free lists, for the policies that place copies by pool.
    lists: Option<PoolLists>,
    frames: usize,
    /// Calls of `site` so far (every frame at start-up when eager, drawn frames when lazy).
    sites_decoded: u64,
    pub usable: u64,
    pub in_use: u64,
}

impl FreeFrames {
    /// The usable frames of `frames` under `site`, shuffled by `seed` (a backward
    /// Fisher-Yates over all of them at once), in pools by `pooling`.
    pub fn eager(
        frames: usize,
        site: impl Fn(u32) -> Option<FrameSite>,
        pooling: Pooling,
        seed: u64,
    ) -> FreeFrames {
        let mut pool_of = vec![0u32; frames];
        // (frame, pool) pairs, shuffled together: the per-pool lists are then built in one
        // pass in order, not by looking each frame's pool up at random (a cache miss per
        // frame in a multi-GiB memory).
        let mut placed: Vec<(u32, u32)> = Vec::with_capacity(frames);
        let mut pools = FxHashMap::default();
        let mut pool_keys = Vec::new();
        for (f, slot) in pool_of.iter_mut().enumerate() {
            let Some(s) = site(f as u32) else { continue };
            let key = (pooling.key)(&s);
            *slot = *pools.entry(key).or_insert_with(|| {
                pool_keys.push(key);
                pool_keys.len() as u32 - 1
            });
            placed.push((f as u32, *slot));
        }
        let mut rng = SplitMix64::new(seed);
        for i in (1..placed.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            placed.swap(i, j);
        }
        let order: Vec<u32> = placed.iter().map(|&(f, _)| f).collect();
        let lists = pooling.lists.then(|| {
            let mut lists = vec![Vec::new(); pools.len()];
            for &(f, pool) in &placed {
                lists[pool as usize].push(f);
            }
            PoolLists {
                cursor: vec![0; lists.len()],
                freed: vec![Vec::new(); lists.len()],
                lists,
            }
        });
        FreeFrames {
            usable: order.len() as u64,
            order,
            cursor: 0,
            lazy: None,
            freed: Vec::new(),
            used: Used::Dense(vec![false; frames]),
            pool_of: PoolOf::Dense(pool_of),
            key: pooling.key,
            pools,
            pool_keys,
            lists,
            frames,
            sites_decoded: frames as u64,
            in_use: 0,
        }
    }

    /// `frames` frames under `site`, of which `usable` are usable (see
    /// `usable_frames_from_mapper`), in an order drawn lazily from `seed` (`lazy_order`):
    /// nothing is decoded or allocated per frame here.
    pub fn lazy(
        frames: usize,
        site: SiteFn,
        usable: u64,
        pooling: Pooling,
        seed: u64,
    ) -> FreeFrames {
        FreeFrames {
            order: Vec::new(),
            cursor: 0,
            lazy: Some(LazyOrder::new(frames, site, seed)),
            freed: Vec::new(),
            used: Used::Sparse(BTreeSet::new()),
            pool_of: PoolOf::Sparse(BTreeMap::new()),
            key: pooling.key,
            pools: FxHashMap::default(),
            pool_keys: Vec::new(),
            lists: pooling.lists.then(PoolLists::default),
            frames,
            sites_decoded: 0,
            usable,
            in_use: 0,
        }
    }

    /// Only the counts (frames, usable, in use) of a policy that keeps its own list of
    /// frames (the replacing ones): nothing is ever drawn from it.
    pub fn counters(frames: usize, usable: u64) -> FreeFrames {
        FreeFrames {
            order: Vec::new(),
            cursor: 0,
            lazy: None,
            freed: Vec::new(),
            used: Used::Sparse(BTreeSet::new()),
            pool_of: PoolOf::Sparse(BTreeMap::new()),
            key: subarray_key,
            pools: FxHashMap::default(),
            pool_keys: Vec::new(),
            lists: None,
            frames,
            sites_decoded: frames as u64,
            usable,
            in_use: 0,
        }
    }

    fn take(&mut self, f: u32) -> u32 {
        self.used.set(f, true);
        self.in_use += 1;
        f
    }

    /// The pool numbered for `key`, numbering it (with an empty free list) if new.
    fn pool_named(&mut self, key: FrameSite) -> u32 {
        if let Some(&pool) = self.pools.get(&key) {
            return pool;
        }
        let pool = self.pool_keys.len() as u32;
        self.pools.insert(key, pool);
        self.pool_keys.push(key);
        if let Some(l) = &mut self.lists {
            l.lists.push(Vec::new());
            l.cursor.push(0);
            l.freed.push(Vec::new());
        }
        pool
    }

    /// Draws the next usable frame of a lazy order into `order` and its pool's free list;
    /// `None` when the order is complete (always when eager).
    fn draw(&mut self) -> Option<u32> {
        loop {
            let lazy = self.lazy.as_mut()?;
            let Some((frame, site)) = lazy.draw() else {
                // Done: the swap map is empty and no longer needed.
                self.lazy = None;
                return None;
            };
            self.sites_decoded += 1;
            let Some(site) = site else { continue };
            let pool = self.pool_named((self.key)(&site));
            if let PoolOf::Sparse(map) = &mut self.pool_of {
                map.insert(frame, pool);
            }
            if let Some(l) = &mut self.lists {
                l.lists[pool as usize].push(frame);
            }
            self.order.push(frame);
            if self.lazy.as_ref().is_some_and(LazyOrder::is_done) {
                self.lazy = None;
            }
            return Some(frame);
        }
    }

    /// Any free frame: the most recently freed, else the next in the scattered order.
    pub fn alloc(&mut self) -> Option<u32> {
        while let Some(f) = self.freed.pop() {
            if !self.used.contains(f) {
                return Some(self.take(f));
            }
        }
        loop {
            while self.cursor < self.order.len() {
                let f = self.order[self.cursor];
                self.cursor += 1;
                if !self.used.contains(f) {
                    return Some(self.take(f));
                }
            }
            self.draw()?;
        }
    }

    /// The free frame of pool `pool` freed most recently, else the next in the pool's
    /// scattered order among those drawn, if any. Recently freed frames come first, as in
    /// `alloc`: their lines may still be cached, and handing out never-used frames instead
    /// would spread a program over ever more frames, all of a few subarrays' cache sets.
    fn next_in_pool(&mut self, pool: u32) -> Option<u32> {
        let lists = self.lists.as_mut()?;
        let freed = &mut lists.freed[pool as usize];
        while let Some(f) = freed.pop() {
            if !self.used.contains(f) {
                return Some(f);
            }
        }
        let (list, cursor) = (
            &lists.lists[pool as usize],
            &mut lists.cursor[pool as usize],
        );
        while *cursor < list.len() {
            let f = list[*cursor];
            *cursor += 1;
            if !self.used.contains(f) {
                return Some(f);
            }
        }
        None
    }

    /// The next free frame of pool `pool` (marked used), drawing frames (kept free for later)
    /// until one of the pool comes; `None` when the pool has none left.
    pub fn take_from_pool(&mut self, pool: u32) -> Option<u32> {
        loop {
            if let Some(f) = self.next_in_pool(pool) {
                return Some(self.take(f));
            }
            self.draw()?;
        }
    }

    /// A copy-on-write destination from pool `pool_for(self, source's pool)` while it has a
    /// free frame; anything else (and a copy whose pool is empty) in the scattered order.
    #[inline]
    pub fn alloc_near(
        &mut self,
        req: &FrameRequest,
        pool_for: impl Fn(&mut FreeFrames, u32) -> u32,
    ) -> Option<u32> {
        if let Purpose::CopyOnWrite { src_frame } = req.purpose {
            let pool = pool_for(self, self.pool_of(src_frame));
            if let Some(f) = self.take_from_pool(pool) {
                return Some(f);
            }
        }
        self.alloc()
    }

    /// Returns `frame` to the free frames (and to its pool's free list).
    pub fn free(&mut self, frame: u32) {
        debug_assert!(self.used.contains(frame), "frame {frame} is free");
        self.used.set(frame, false);
        self.in_use -= 1;
        self.freed.push(frame);
        if self.lists.is_some() {
            let pool = self.pool_of(frame);
            if let Some(l) = &mut self.lists {
                l.lists[pool as usize].push(frame);
                l.freed[pool as usize].push(frame);
            }
        }
    }

    /// Frames in the address space (usable or not).
    pub fn frame_count(&self) -> usize {
        self.frames
    }

    /// `frame`'s pool number; `frame` must have been handed out.
    pub fn pool_of(&self, frame: u32) -> u32 {
        match &self.pool_of {
            PoolOf::Dense(pools) => pools[frame as usize],
            PoolOf::Sparse(pools) => *pools
                .get(&frame)
                .expect("a frame handed out has been drawn"),
        }
    }

    /// `pool`'s key.
    pub fn pool_key(&self, pool: u32) -> FrameSite {
        self.pool_keys[pool as usize]
    }

    /// The pool of `key`: when eager, `None` if no usable frame has it; when lazy, numbered
    /// now if no frame of it has been drawn yet (it may come later).
    pub fn pool_for_key(&mut self, key: FrameSite) -> Option<u32> {
        if self.is_lazy() {
            Some(self.pool_named(key))
        } else {
            self.pools.get(&key).copied()
        }
    }

    /// Calls of `site` so far: every frame at start-up when eager, drawn frames when lazy.
    pub fn sites_decoded(&self) -> u64 {
        self.sites_decoded
    }

    /// Whether the order is drawn lazily.
    pub fn is_lazy(&self) -> bool {
        matches!(self.pool_of, PoolOf::Sparse(_))
    }
}

/// The configured policy (a closed set: a `match`, not a virtual call, per allocation).
#[derive(Clone, Debug)]
pub enum FrameAllocator {
    Scatter(Scatter),
    SubarrayAware(SubarrayAware),
    InterBank(InterBank),
    RankStatic(RankStatic),
    Clock(Clock),
    RankClock(RankClock),
}

macro_rules! dispatch {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            FrameAllocator::Scatter($p) => $e,
            FrameAllocator::SubarrayAware($p) => $e,
            FrameAllocator::InterBank($p) => $e,
            FrameAllocator::RankStatic($p) => $e,
            FrameAllocator::Clock($p) => $e,
            FrameAllocator::RankClock($p) => $e,
        }
    };
}

impl FrameAllocator {
    /// `policy` over `frames` frames placed by `site` (see `sites_from_mapper`), the
    /// scattered order drawn from `seed` all at once (the eager path, whatever the size), as
    /// if on one rank.
    pub fn new(
        policy: AllocatorPolicy,
        frames: usize,
        site: impl Fn(u32) -> Option<FrameSite>,
        seed: u64,
    ) -> FrameAllocator {
        Self::with_ranks(policy, frames, site, seed, RankSetup::single())
    }

    /// `new` with the global ranks and the rank policies' settings.
    pub fn with_ranks(
        policy: AllocatorPolicy,
        frames: usize,
        site: impl Fn(u32) -> Option<FrameSite>,
        seed: u64,
        ranks: RankSetup,
    ) -> FrameAllocator {
        if policy.replaces_pages() {
            let list = FrameList::new(frames, &site, &ranks.layout);
            let free = FreeFrames::counters(frames, list.len() as u64);
            return Self::replacing(policy, list, free, ranks);
        }
        let free = FreeFrames::eager(frames, site, Self::pooling(policy), seed);
        Self::with_free(policy, free, seed, ranks)
    }

    /// `policy` over `frames` frames placed by `site`, `usable()` of them usable: eager (as
    /// `new`) up to `lazy_above` frames, lazily drawn above (`usable` is called only then).
    /// The replacing policies list every usable frame at start-up, whatever the size.
    pub fn for_memory(
        policy: AllocatorPolicy,
        frames: usize,
        site: SiteFn,
        usable: impl FnOnce() -> u64,
        seed: u64,
        lazy_above: usize,
        ranks: RankSetup,
    ) -> FrameAllocator {
        if frames <= lazy_above || policy.replaces_pages() {
            return Self::with_ranks(policy, frames, |f| site(f), seed, ranks);
        }
        let free = FreeFrames::lazy(frames, site, usable(), Self::pooling(policy), seed);
        Self::with_free(policy, free, seed, ranks)
    }

    fn pooling(policy: AllocatorPolicy) -> Pooling {
        match policy {
            AllocatorPolicy::Scatter | AllocatorPolicy::Clock | AllocatorPolicy::RankClock => {
                Scatter::POOLING
            }
            AllocatorPolicy::SubarrayAware => SubarrayAware::POOLING,
            AllocatorPolicy::InterBank => InterBank::POOLING,
            AllocatorPolicy::RankStatic => RankStatic::POOLING,
        }
    }

    fn with_free(
        policy: AllocatorPolicy,
        free: FreeFrames,
        seed: u64,
        ranks: RankSetup,
    ) -> FrameAllocator {
        match policy {
            AllocatorPolicy::Scatter => FrameAllocator::Scatter(Scatter::new(free)),
            AllocatorPolicy::SubarrayAware => {
                FrameAllocator::SubarrayAware(SubarrayAware::new(free))
            }
            AllocatorPolicy::InterBank => FrameAllocator::InterBank(InterBank::new(free)),
            AllocatorPolicy::RankStatic => {
                FrameAllocator::RankStatic(RankStatic::new(free, ranks, seed))
            }
            AllocatorPolicy::Clock | AllocatorPolicy::RankClock => {
                unreachable!("replacing policies are built by `replacing`")
            }
        }
    }

    fn replacing(
        policy: AllocatorPolicy,
        list: FrameList,
        free: FreeFrames,
        ranks: RankSetup,
    ) -> FrameAllocator {
        match policy {
            AllocatorPolicy::Clock => FrameAllocator::Clock(Clock::new(list, free)),
            _ => FrameAllocator::RankClock(RankClock::new(list, free, ranks)),
        }
    }

    /// Whether the policy may hand out a frame in use (its page to be evicted).
    pub fn replaces_pages(&self) -> bool {
        matches!(
            self,
            FrameAllocator::Clock(_) | FrameAllocator::RankClock(_)
        )
    }

    /// The virtual page `frame` holds (replacing policies).
    pub fn page_in(&self, frame: u32) -> u64 {
        dispatch!(self, p => p.page_in(frame))
    }

    /// `frame` now holds virtual page `vpn` (replacing policies).
    pub fn set_page(&mut self, frame: u32, vpn: u64) {
        dispatch!(self, p => p.set_page(frame, vpn))
    }

    pub fn start_thread(&mut self, thread: u32, table: &FrameTable) {
        dispatch!(self, p => p.start_thread(thread, table))
    }

    pub fn thread_ranks(&self, thread: u32) -> Option<(u32, u32)> {
        dispatch!(self, p => p.thread_ranks(thread))
    }

    /// `rank_clock`, `os.preferred_rank = least_delay`: each global rank's mean DRAM read
    /// latency so far.
    pub fn set_rank_delays(&mut self, delays: &[f64]) {
        if let FrameAllocator::RankClock(p) = self {
            p.set_delays(delays);
        }
    }

    #[inline]
    pub fn alloc(&mut self, req: &FrameRequest, ctx: &mut AllocContext) -> Option<u32> {
        dispatch!(self, p => p.alloc(req, ctx))
    }

    pub fn free(&mut self, frame: u32) {
        dispatch!(self, p => p.free(frame))
    }

    pub fn frames(&self) -> &FreeFrames {
        dispatch!(self, p => p.frames())
    }

    /// Usable frames.
    pub fn usable(&self) -> u64 {
        self.frames().usable
    }

    /// Frames handed out and not freed.
    pub fn in_use(&self) -> u64 {
        self.frames().in_use
    }

    /// Frames in the address space (usable or not).
    pub fn frame_count(&self) -> usize {
        self.frames().frame_count()
    }

    /// Calls of the site function so far (see `FreeFrames::sites_decoded`).
    pub fn sites_decoded(&self) -> u64 {
        self.frames().sites_decoded()
    }

    /// Whether two frames share a pool: a subarray, or a bank under `inter_bank` (the
    /// `cow_same_subarray` stat).
    pub fn same_key(&self, a: u32, b: u32) -> bool {
        if self.replaces_pages() {
            // Their frames are not pooled (a CLOCK walk decides, not a subarray).
            return false;
        }
        let f = self.frames();
        f.pool_of(a) == f.pool_of(b)
    }
}

#[cfg(test)]
mod tests;
