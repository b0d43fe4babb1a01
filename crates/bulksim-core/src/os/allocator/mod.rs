//! Physical page (frame) allocation: the interface every placement policy implements
//! (`FramePolicy`: a frame for a `FrameRequest` that says who asks and why), the closed enum
//! `FrameAllocator` that dispatches to the policies without trait objects, and the bookkeeping
//! they share: the usable frames in one seeded scattered order (as a stock kernel's buddy
//! allocator spreads pages after some uptime), the most recently freed frames reused first,
//! and per-pool free lists. The allocator knows nothing of the address mapper: it is built
//! from the frame count and `site(frame)`, where a frame's first line lies in DRAM (`None`:
//! the frame must not be used, as when it touches a row RowClone reserves);
//! `sites_from_mapper` derives that from an `AddressMapper`. One file per policy:
//! `scatter`, `subarray_aware`, `inter_bank`.

mod inter_bank;
mod scatter;
mod subarray_aware;

pub use inter_bank::InterBank;
pub use scatter::Scatter;
pub use subarray_aware::SubarrayAware;

use super::frame_table::FrameTable;
use super::Pid;
use crate::config::AllocatorPolicy;
use crate::mapping::AddressMapper;
use crate::workload::rng::SplitMix64;
use std::collections::BTreeMap;

pub const PAGE: u64 = 4096;

/// Where a frame's first line lies in DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FrameSite {
    pub channel: u32,
    pub rank: u32,
    /// The flat bank index within the channel (rank, bank group and bank).
    pub bank_index: u32,
    pub subarray: u32,
}

/// `site(frame)` under `mapper`: `None` when the frame's first or last line lies in a row
/// `reserved(row)` marks.
pub fn sites_from_mapper<'a>(
    mapper: &'a AddressMapper,
    reserved: impl Fn(u32) -> bool + 'a,
) -> impl Fn(u32) -> Option<FrameSite> + 'a {
    move |frame| {
        let first = mapper.decode(frame as u64 * PAGE);
        let last = mapper.decode(frame as u64 * PAGE + PAGE - 64);
        if reserved(first.row) || reserved(last.row) {
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

/// A placement policy.
pub trait FramePolicy {
    /// A free frame for `req` (marked used), or `None` when none is left. `table` shows the
    /// frames' owners, sharing and referenced bits.
    fn alloc(&mut self, req: &FrameRequest, table: &FrameTable) -> Option<u32>;
    /// `frame` is free again.
    fn free(&mut self, frame: u32);
    /// The shared bookkeeping.
    fn frames(&self) -> &FreeFrames;
}

/// Free-frame bookkeeping every policy shares.
#[derive(Clone, Debug)]
pub struct FreeFrames {
    /// Usable frames in the seeded scattered order.
    order: Vec<u32>,
    cursor: usize,
    /// Freed frames, the most recent last.
    freed: Vec<u32>,
    used: Vec<bool>,
    /// Each frame's pool number (meaningful for usable frames).
    pool_of: Vec<u32>,
    pools: usize,
    pub usable: u64,
    pub in_use: u64,
}

impl FreeFrames {
    /// The usable frames of `frames` under `site`, shuffled by `seed`, each in the pool
    /// `key(site)` names. Returns the pools' numbers by key as well (numbered in order of
    /// first appearance by frame number).
    pub fn new<K: Ord + Copy>(
        frames: usize,
        site: impl Fn(u32) -> Option<FrameSite>,
        key: impl Fn(&FrameSite) -> K,
        seed: u64,
    ) -> (FreeFrames, BTreeMap<K, u32>) {
        let mut pool_of = vec![0u32; frames];
        let mut order = Vec::with_capacity(frames);
        let mut keys = BTreeMap::new();
        for (f, slot) in pool_of.iter_mut().enumerate() {
            let Some(s) = site(f as u32) else { continue };
            let next = keys.len() as u32;
            *slot = *keys.entry(key(&s)).or_insert(next);
            order.push(f as u32);
        }
        let mut rng = SplitMix64::new(seed);
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        let free = FreeFrames {
            usable: order.len() as u64,
            order,
            cursor: 0,
            freed: Vec::new(),
            used: vec![false; frames],
            pool_of,
            pools: keys.len(),
            in_use: 0,
        };
        (free, keys)
    }

    fn take(&mut self, f: u32) -> u32 {
        self.used[f as usize] = true;
        self.in_use += 1;
        f
    }

    /// Any free frame: the most recently freed, else the next in the scattered order.
    pub fn alloc(&mut self) -> Option<u32> {
        while let Some(f) = self.freed.pop() {
            if !self.used[f as usize] {
                return Some(self.take(f));
            }
        }
        while self.cursor < self.order.len() {
            let f = self.order[self.cursor];
            self.cursor += 1;
            if !self.used[f as usize] {
                return Some(self.take(f));
            }
        }
        None
    }

    /// Returns `frame` to the free frames.
    pub fn free(&mut self, frame: u32) {
        debug_assert!(self.used[frame as usize], "frame {frame} is free");
        self.used[frame as usize] = false;
        self.in_use -= 1;
        self.freed.push(frame);
    }

    /// Frames in the address space (usable or not).
    pub fn frame_count(&self) -> usize {
        self.used.len()
    }

    /// `frame`'s pool number.
    pub fn pool_of(&self, frame: u32) -> u32 {
        self.pool_of[frame as usize]
    }
}

/// A free list per pool, each in the scattered order, freed frames appended.
#[derive(Clone, Debug)]
pub struct Pools {
    lists: Vec<Vec<u32>>,
    cursor: Vec<usize>,
}

impl Pools {
    pub fn new(free: &FreeFrames) -> Pools {
        let mut lists = vec![Vec::new(); free.pools];
        for &f in &free.order {
            lists[free.pool_of(f) as usize].push(f);
        }
        Pools {
            cursor: vec![0; lists.len()],
            lists,
        }
    }

    /// The next free frame of pool `pool`, if any.
    pub fn take(&mut self, pool: u32, free: &mut FreeFrames) -> Option<u32> {
        let (list, cursor) = (&self.lists[pool as usize], &mut self.cursor[pool as usize]);
        while *cursor < list.len() {
            let f = list[*cursor];
            *cursor += 1;
            if !free.used[f as usize] {
                return Some(free.take(f));
            }
        }
        None
    }

    /// `frame` (just freed) is available in its pool again.
    pub fn push(&mut self, frame: u32, free: &FreeFrames) {
        self.lists[free.pool_of(frame) as usize].push(frame);
    }
}

/// The scattered free frames plus a free list per pool: what the policies that place a
/// copy-on-write destination by its source's pool share.
#[derive(Clone, Debug)]
pub struct PooledFrames {
    pub free: FreeFrames,
    pools: Pools,
}

impl PooledFrames {
    pub fn new(free: FreeFrames) -> PooledFrames {
        PooledFrames {
            pools: Pools::new(&free),
            free,
        }
    }

    /// A copy-on-write destination from pool `pool_for(source's pool)` while it has a free
    /// frame; anything else (and a copy whose pool is empty) in the scattered order.
    #[inline]
    pub fn alloc(&mut self, req: &FrameRequest, pool_for: impl Fn(u32) -> u32) -> Option<u32> {
        if let Purpose::CopyOnWrite { src_frame } = req.purpose {
            let pool = pool_for(self.free.pool_of(src_frame));
            if let Some(f) = self.pools.take(pool, &mut self.free) {
                return Some(f);
            }
        }
        self.free.alloc()
    }

    pub fn free(&mut self, frame: u32) {
        self.free.free(frame);
        self.pools.push(frame, &self.free);
    }
}

/// The configured policy (a closed set: a `match`, not a virtual call, per allocation).
#[derive(Clone, Debug)]
pub enum FrameAllocator {
    Scatter(Scatter),
    SubarrayAware(SubarrayAware),
    InterBank(InterBank),
}

macro_rules! dispatch {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            FrameAllocator::Scatter($p) => $e,
            FrameAllocator::SubarrayAware($p) => $e,
            FrameAllocator::InterBank($p) => $e,
        }
    };
}

impl FrameAllocator {
    /// `policy` over `frames` frames placed by `site` (see `sites_from_mapper`), the
    /// scattered order drawn from `seed`.
    pub fn new(
        policy: AllocatorPolicy,
        frames: usize,
        site: impl Fn(u32) -> Option<FrameSite>,
        seed: u64,
    ) -> FrameAllocator {
        match policy {
            AllocatorPolicy::Scatter => FrameAllocator::Scatter(Scatter::new(frames, site, seed)),
            AllocatorPolicy::SubarrayAware => {
                FrameAllocator::SubarrayAware(SubarrayAware::new(frames, site, seed))
            }
            AllocatorPolicy::InterBank => {
                FrameAllocator::InterBank(InterBank::new(frames, site, seed))
            }
        }
    }

    #[inline]
    pub fn alloc(&mut self, req: &FrameRequest, table: &FrameTable) -> Option<u32> {
        dispatch!(self, p => p.alloc(req, table))
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

    /// Whether two frames share a pool: a subarray, or a bank under `inter_bank` (the
    /// `cow_same_subarray` stat).
    pub fn same_key(&self, a: u32, b: u32) -> bool {
        let f = self.frames();
        f.pool_of(a) == f.pool_of(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 frames, 2 channels x 2 banks x 2 subarrays, frame bits = (subarray, bank, channel,
    /// 3 low bits); frames with low bits 7 unusable.
    fn site(f: u32) -> Option<FrameSite> {
        (f % 8 != 7).then_some(FrameSite {
            channel: f >> 3 & 1,
            rank: 0,
            bank_index: f >> 4 & 1,
            subarray: f >> 5 & 1,
        })
    }

    fn req(purpose: Purpose) -> FrameRequest {
        FrameRequest {
            pid: 0,
            thread: 0,
            vpn: 0,
            purpose,
        }
    }

    fn drain(a: &mut FrameAllocator, t: &FrameTable, purpose: Purpose) -> Vec<u32> {
        std::iter::from_fn(|| a.alloc(&req(purpose), t)).collect()
    }

    #[test]
    fn every_policy_hands_out_the_same_scattered_order_and_reuses_the_last_freed() {
        let t = FrameTable::new(64);
        let mut orders = Vec::new();
        for policy in [
            AllocatorPolicy::Scatter,
            AllocatorPolicy::SubarrayAware,
            AllocatorPolicy::InterBank,
        ] {
            let mut a = FrameAllocator::new(policy, 64, site, 7);
            assert_eq!((a.usable(), a.frame_count()), (56, 64));
            let all = drain(&mut a, &t, Purpose::FirstTouch);
            assert_eq!(all.len(), 56);
            assert!(all.iter().all(|f| f % 8 != 7));
            a.free(all[3]);
            a.free(all[9]);
            assert_eq!(a.in_use(), 54);
            assert_eq!(drain(&mut a, &t, Purpose::Populated), [all[9], all[3]]);
            orders.push(all);
        }
        assert_eq!(orders[0], orders[1]);
        assert_eq!(orders[0], orders[2]);
        let mut sorted = orders[0].clone();
        sorted.sort();
        assert_ne!(sorted, orders[0], "shuffled");
    }

    #[test]
    fn copies_go_to_the_source_subarray_or_the_partner_bank() {
        let t = FrameTable::new(64);
        let src = 0b10_1010; // channel 1, bank 0, subarray 1
        let copy = req(Purpose::CopyOnWrite { src_frame: src });
        for policy in [
            AllocatorPolicy::Scatter,
            AllocatorPolicy::SubarrayAware,
            AllocatorPolicy::InterBank,
        ] {
            let mut a = FrameAllocator::new(policy, 64, site, 7);
            let scattered = drain(
                &mut FrameAllocator::new(policy, 64, site, 7),
                &t,
                copy.purpose,
            );
            let copies: Vec<u32> = (0..6).map(|_| a.alloc(&copy, &t).unwrap()).collect();
            let sites: Vec<FrameSite> = copies.iter().map(|&f| site(f).unwrap()).collect();
            match policy {
                AllocatorPolicy::Scatter => assert_eq!(copies, scattered[..6]),
                AllocatorPolicy::SubarrayAware => {
                    assert!(sites
                        .iter()
                        .all(|s| (s.channel, s.bank_index, s.subarray) == (1, 0, 1)));
                    assert!(copies.iter().all(|&d| a.same_key(src, d)));
                }
                AllocatorPolicy::InterBank => {
                    // The neighbouring bank of the same channel, any subarray.
                    assert!(sites.iter().all(|s| (s.channel, s.bank_index) == (1, 1)));
                    assert!(copies.iter().all(|&d| !a.same_key(src, d)));
                }
            }
        }
    }

    #[test]
    fn a_full_pool_falls_back_to_the_scattered_order() {
        let t = FrameTable::new(64);
        let mut a = FrameAllocator::new(AllocatorPolicy::SubarrayAware, 64, site, 7);
        let copy = req(Purpose::CopyOnWrite { src_frame: 0 });
        let pool: Vec<u32> = (0..7).map(|_| a.alloc(&copy, &t).unwrap()).collect();
        assert!(pool.iter().all(|&f| f < 7), "{pool:?}");
        let next = a.alloc(&copy, &t).unwrap();
        assert!(next >= 7, "{next}");
    }
}
