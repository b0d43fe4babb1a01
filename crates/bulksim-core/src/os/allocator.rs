//! Physical page (frame) allocation behind one interface, two policies. `scatter` hands out
//! frames in a seeded pseudo-random order over all of memory, as a stock kernel's buddy
//! allocator spreads pages after some uptime. `subarray_aware` (RowClone section 4.3.1) keeps
//! a free pool per DRAM subarray (channel, rank, bank, subarray); ordinary allocations come in
//! the same scattered order, but a copy-on-write destination is taken from the source frame's
//! pool when it has a free frame, so the copy can use FPM. `inter_bank` takes it instead from
//! a neighbouring bank of the source's channel and rank, so every copy can use RowClone's
//! inter-bank PSM (the paper's PSM configuration). Frames that touch rows RowClone reserves
//! are never handed out.

use crate::mapping::AddressMapper;
use crate::workload::rng::SplitMix64;
use serde::{Deserialize, Serialize};

pub const PAGE: u64 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocatorPolicy {
    Scatter,
    SubarrayAware,
    InterBank,
}

pub struct FrameAllocator {
    policy: AllocatorPolicy,
    order: Vec<u32>,
    cursor: usize,
    freed: Vec<u32>,
    used: Vec<bool>,
    key_of: Vec<u32>,
    pools: Vec<Vec<u32>>,
    pool_cursor: Vec<usize>,
    /// InterBank: the pool a copy of a frame in pool i draws from.
    partner: Vec<u32>,
    pub usable: u64,
    pub in_use: u64,
    /// Copy-on-write destinations found in the source's subarray.
    pub same_subarray: u64,
}

impl FrameAllocator {
    /// Frames of `capacity` bytes under `mapper`; `reserved(row)` marks rows not to use.
    pub fn new(
        policy: AllocatorPolicy,
        mapper: &AddressMapper,
        reserved: impl Fn(u32) -> bool,
        seed: u64,
    ) -> FrameAllocator {
        let frames = (mapper.capacity() / PAGE) as usize;
        let mut key_of = vec![0u32; frames];
        let mut order = Vec::with_capacity(frames);
        let mut keys = std::collections::HashMap::new();
        for (f, key_slot) in key_of.iter_mut().enumerate() {
            let first = mapper.decode(f as u64 * PAGE);
            let last = mapper.decode(f as u64 * PAGE + PAGE - 64);
            if reserved(first.row) || reserved(last.row) {
                continue;
            }
            let key = match policy {
                AllocatorPolicy::InterBank => (first.channel, first.bank_index, 0),
                _ => (first.channel, first.bank_index, first.subarray),
            };
            let next = keys.len() as u32;
            *key_slot = *keys.entry(key).or_insert(next);
            order.push(f as u32);
        }
        let mut rng = SplitMix64::new(seed);
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        let mut pools = Vec::new();
        let mut partner = Vec::new();
        if policy != AllocatorPolicy::Scatter {
            pools = vec![Vec::new(); keys.len()];
            for &f in &order {
                pools[key_of[f as usize] as usize].push(f);
            }
        }
        if policy == AllocatorPolicy::InterBank {
            partner = vec![0; keys.len()];
            for (&(ch, bank, _), &k) in &keys {
                // The neighbouring bank of the same rank (bank indices pair up within a rank).
                partner[k as usize] = keys.get(&(ch, bank ^ 1, 0)).copied().unwrap_or(k);
            }
        }
        FrameAllocator {
            policy,
            usable: order.len() as u64,
            pool_cursor: vec![0; pools.len()],
            partner,
            pools,
            order,
            cursor: 0,
            freed: Vec::new(),
            used: vec![false; frames],
            key_of,
            in_use: 0,
            same_subarray: 0,
        }
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

    /// A frame for a copy of `src`: in its subarray under `subarray_aware` when one is free.
    pub fn alloc_for_copy_of(&mut self, src: u32) -> Option<u32> {
        if self.policy != AllocatorPolicy::Scatter {
            let mut key = self.key_of[src as usize] as usize;
            if self.policy == AllocatorPolicy::InterBank {
                key = self.partner[key] as usize;
            }
            let pool = &self.pools[key];
            let cursor = &mut self.pool_cursor[key];
            while *cursor < pool.len() {
                let f = pool[*cursor];
                *cursor += 1;
                if !self.used[f as usize] {
                    self.same_subarray += 1;
                    return Some(self.take(f));
                }
            }
        }
        self.alloc()
    }

    /// Returns `frame` to the free frames (and to its subarray's pool).
    pub fn free(&mut self, frame: u32) {
        debug_assert!(self.used[frame as usize]);
        self.used[frame as usize] = false;
        self.in_use -= 1;
        self.freed.push(frame);
        if self.policy != AllocatorPolicy::Scatter {
            self.pools[self.key_of[frame as usize] as usize].push(frame);
        }
    }

    /// Frames in the address space (usable or not).
    pub fn frame_count(&self) -> usize {
        self.used.len()
    }

    /// Whether two frames share a subarray (for tests and stats).
    pub fn same_key(&self, a: u32, b: u32) -> bool {
        self.key_of[a as usize] == self.key_of[b as usize]
    }
}
