//! Unit tests of the frame allocator: each policy's placement, the eager and lazy scattered
//! orders, and where a frame lies (`sites_from_mapper`, the closed-form usable count).

use super::*;
use std::sync::Arc;

/// A frame table and the rest of an allocation's context.
struct Env {
    table: FrameTable,
    tlbs: Tlbs,
    stats: PlacementStats,
}

impl Env {
    fn new(frames: usize) -> Env {
        Env {
            table: FrameTable::new(frames),
            tlbs: Tlbs::new(0),
            stats: PlacementStats::default(),
        }
    }

    fn ctx(&mut self) -> AllocContext<'_> {
        AllocContext {
            table: &mut self.table,
            tlbs: &self.tlbs,
            stats: &mut self.stats,
        }
    }
}

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

fn drain(a: &mut FrameAllocator, t: &mut Env, purpose: Purpose) -> Vec<u32> {
    std::iter::from_fn(|| a.alloc(&req(purpose), &mut t.ctx())).collect()
}

#[test]
fn every_policy_hands_out_the_same_scattered_order_and_reuses_the_last_freed() {
    let mut t = Env::new(64);
    let mut orders = Vec::new();
    for policy in [
        AllocatorPolicy::Scatter,
        AllocatorPolicy::SubarrayAware,
        AllocatorPolicy::InterBank,
    ] {
        let mut a = FrameAllocator::new(policy, 64, site, 7);
        assert_eq!((a.usable(), a.frame_count()), (56, 64));
        let all = drain(&mut a, &mut t, Purpose::FirstTouch);
        assert_eq!(all.len(), 56);
        assert!(all.iter().all(|f| f % 8 != 7));
        a.free(all[3]);
        a.free(all[9]);
        assert_eq!(a.in_use(), 54);
        assert_eq!(drain(&mut a, &mut t, Purpose::Populated), [all[9], all[3]]);
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
    let mut t = Env::new(64);
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
            &mut t,
            copy.purpose,
        );
        let copies: Vec<u32> = (0..6)
            .map(|_| a.alloc(&copy, &mut t.ctx()).unwrap())
            .collect();
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
            _ => unreachable!("not in the list"),
        }
    }
}

#[test]
fn copies_take_the_pools_most_recently_freed_frame_first() {
    let mut t = Env::new(64);
    for policy in [AllocatorPolicy::SubarrayAware, AllocatorPolicy::InterBank] {
        let mut a = FrameAllocator::new(policy, 64, site, 7);
        let copy = req(Purpose::CopyOnWrite { src_frame: 0 });
        let first: Vec<u32> = (0..3)
            .map(|_| a.alloc(&copy, &mut t.ctx()).unwrap())
            .collect();
        a.free(first[0]);
        a.free(first[2]);
        // An ordinary allocation takes the last freed; the copy the one freed before.
        assert_eq!(
            a.alloc(&req(Purpose::FirstTouch), &mut t.ctx()),
            Some(first[2])
        );
        assert_eq!(a.alloc(&copy, &mut t.ctx()), Some(first[0]), "{policy:?}");
        a.free(first[1]);
        assert_eq!(a.alloc(&copy, &mut t.ctx()), Some(first[1]), "{policy:?}");
    }
}

#[test]
fn a_full_pool_falls_back_to_the_scattered_order() {
    let mut t = Env::new(64);
    let mut a = FrameAllocator::new(AllocatorPolicy::SubarrayAware, 64, site, 7);
    let copy = req(Purpose::CopyOnWrite { src_frame: 0 });
    let pool: Vec<u32> = (0..7)
        .map(|_| a.alloc(&copy, &mut t.ctx()).unwrap())
        .collect();
    assert!(pool.iter().all(|&f| f < 7), "{pool:?}");
    let next = a.alloc(&copy, &mut t.ctx()).unwrap();
    assert!(next >= 7, "{next}");
}

const POLICIES: [AllocatorPolicy; 3] = [
    AllocatorPolicy::Scatter,
    AllocatorPolicy::SubarrayAware,
    AllocatorPolicy::InterBank,
];

/// The 64 frames of `site` on the lazy path (threshold 0 forces it).
fn lazy(policy: AllocatorPolicy, seed: u64) -> FrameAllocator {
    let usable = || (0..64).filter(|&f| site(f).is_some()).count() as u64;
    FrameAllocator::for_memory(
        policy,
        64,
        Arc::new(site),
        usable,
        seed,
        0,
        RankSetup::single(),
    )
}

#[test]
fn the_threshold_picks_the_path_and_the_eager_one_keeps_its_order() {
    let mut t = Env::new(64);
    for policy in POLICIES {
        let mut eager = FrameAllocator::for_memory(
            policy,
            64,
            Arc::new(site),
            || unreachable!(),
            7,
            64,
            RankSetup::single(),
        );
        assert!(!eager.frames().is_lazy());
        assert_eq!(eager.sites_decoded(), 64, "every frame at start-up");
        let mut old = FrameAllocator::new(policy, 64, site, 7);
        let first = drain(&mut eager, &mut t, Purpose::FirstTouch);
        assert_eq!(first, drain(&mut old, &mut t, Purpose::FirstTouch));
        assert!(lazy(policy, 7).frames().is_lazy());
    }
}

#[test]
fn the_lazy_order_hands_out_every_usable_frame_once_then_runs_out() {
    let mut t = Env::new(64);
    for policy in POLICIES {
        for seed in 0..20 {
            let mut a = lazy(policy, seed);
            assert_eq!(
                (a.usable(), a.frame_count(), a.sites_decoded()),
                (56, 64, 0)
            );
            let all = drain(&mut a, &mut t, Purpose::FirstTouch);
            let mut sorted = all.clone();
            sorted.sort();
            let usable: Vec<u32> = (0..64).filter(|&f| site(f).is_some()).collect();
            assert_eq!(sorted, usable, "each usable frame once, no unusable one");
            assert_ne!(all, usable, "shuffled");
            assert_eq!((a.in_use(), a.sites_decoded()), (56, 64));
            assert_eq!(a.alloc(&req(Purpose::FirstTouch), &mut t.ctx()), None);
        }
    }
}

#[test]
fn the_lazy_order_decodes_only_what_it_draws() {
    let mut t = Env::new(64);
    let mut a = lazy(AllocatorPolicy::Scatter, 3);
    let first: Vec<u32> = (0..5)
        .map(|_| a.alloc(&req(Purpose::FirstTouch), &mut t.ctx()).unwrap())
        .collect();
    // Five usable frames drawn, plus any of the 8 unusable ones drawn before them.
    let decoded = a.sites_decoded();
    assert!((5..=13).contains(&decoded), "{decoded}");
    // Freeing and reusing draws nothing more.
    a.free(first[1]);
    a.free(first[4]);
    assert_eq!(drain_n(&mut a, &mut t, 2), [first[4], first[1]]);
    assert_eq!(a.sites_decoded(), decoded);
}

fn drain_n(a: &mut FrameAllocator, t: &mut Env, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| a.alloc(&req(Purpose::FirstTouch), &mut t.ctx()).unwrap())
        .collect()
}

#[test]
fn the_lazy_order_is_deterministic_per_seed_and_reuses_the_last_freed() {
    let mut t = Env::new(64);
    let mut orders = Vec::new();
    for policy in POLICIES {
        let mut a = lazy(policy, 11);
        let again = drain(&mut lazy(policy, 11), &mut t, Purpose::FirstTouch);
        let other = drain(&mut lazy(policy, 12), &mut t, Purpose::FirstTouch);
        let first = drain_n(&mut a, &mut t, 10);
        assert_eq!(first, again[..10], "same seed, same order");
        assert_ne!(again, other, "another seed, another order");
        a.free(first[3]);
        a.free(first[9]);
        assert_eq!(a.in_use(), 8);
        assert_eq!(drain_n(&mut a, &mut t, 3), [first[9], first[3], again[10]]);
        orders.push(again);
    }
    // The policies share the scattered order on the lazy path too.
    assert_eq!(orders[0], orders[1]);
    assert_eq!(orders[0], orders[2]);
}

#[test]
fn lazy_copies_go_to_the_source_subarray_or_the_partner_bank_then_fall_back() {
    let mut t = Env::new(64);
    for policy in [AllocatorPolicy::SubarrayAware, AllocatorPolicy::InterBank] {
        let mut a = lazy(policy, 5);
        let src = a.alloc(&req(Purpose::FirstTouch), &mut t.ctx()).unwrap();
        let s = site(src).unwrap();
        let copy = req(Purpose::CopyOnWrite { src_frame: src });
        // A subarray holds 7 usable frames (8 minus the unusable one); a bank 14.
        let room = match policy {
            AllocatorPolicy::SubarrayAware => 6,
            _ => 14,
        };
        let copies: Vec<u32> = (0..room)
            .map(|_| a.alloc(&copy, &mut t.ctx()).unwrap())
            .collect();
        for &d in &copies {
            let ds = site(d).unwrap();
            if policy == AllocatorPolicy::SubarrayAware {
                assert_eq!(
                    (ds.channel, ds.bank_index, ds.subarray),
                    (s.channel, s.bank_index, s.subarray)
                );
                assert!(a.same_key(src, d));
            } else {
                assert_eq!((ds.channel, ds.bank_index), (s.channel, s.bank_index ^ 1));
                assert!(!a.same_key(src, d));
            }
        }
        // The pool is empty now: the next copy comes from the scattered order, and the
        // frames drawn while looking for the pool are still handed out, each once.
        let rest = drain(&mut a, &mut t, copy.purpose);
        assert_eq!(1 + copies.len() + rest.len(), 56);
        let mut all: Vec<u32> = [vec![src], copies, rest].concat();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 56);
    }
}

/// Usable frames counted one by one.
fn counted(m: &AddressMapper, reserved: impl Fn(u32) -> bool) -> u64 {
    let site = sites_from_mapper(m, reserved);
    (0..m.capacity() / PAGE)
        .filter(|&f| site(f as u32).is_some())
        .count() as u64
}

#[test]
fn the_closed_form_usable_count_matches_counting_frame_by_frame() {
    let o = small_org();
    let rows = o.rows;
    let reserved = move |r: u32| r % 128 == 127 || r == rows - 2;
    // Row bits on top, in the middle, and below the page offset (a frame spans two rows).
    for order in ["RoRaBaChCo", "ChRaBaRoCo", "RaBaCoChRo", "CoRoBaRaCh"] {
        for xor in [false, true] {
            let m = AddressMapper::new(&o, order, xor).unwrap();
            let frames = m.capacity() / PAGE;
            let closed = usable_frames_from_mapper(&m, reserved, frames);
            assert_eq!(closed, counted(&m, reserved), "{order} xor {xor}");
            assert!(closed < frames, "{order}: some rows are reserved");
        }
    }
    // RoRaBaChCo: a frame is one row of one bank, so 1024 - 9 of 1024 rows are usable.
    let m = AddressMapper::new(&o, "RoRaBaChCo", false).unwrap();
    let frames = m.capacity() / PAGE;
    assert_eq!(
        usable_frames_from_mapper(&m, reserved, frames),
        frames / 1024 * (1024 - 9)
    );
}

/// The organisation of the closed-form test: 2 channels x 2 ranks x 8 banks, 1024 rows in
/// subarrays of 128, 4 KiB rows (a page is one row, or spans two where row bits lie
/// below the page offset).
fn small_org() -> crate::spec::Organisation {
    let mut o = crate::spec::presets::preset("DDR3_2Gb_x8_1066")
        .unwrap()
        .organisation;
    o.columns = 512;
    o.rows = 1024;
    o.rows_per_subarray = 128;
    o.ranks = 2;
    o.channels = 2;
    o
}

/// `sites_from_mapper` decodes one line per frame when the page offset holds no row bit;
/// every frame's site and usability equal those of decoding both its first and last line.
#[test]
fn one_decode_per_frame_gives_the_two_line_sites() {
    let o = small_org();
    let reserved = |r: u32| r % 128 == 127 || r == 5;
    for order in ["RoRaBaChCo", "ChRaBaRoCo", "RaBaCoChRo", "CoRoBaRaCh"] {
        for xor in [false, true] {
            let m = AddressMapper::new(&o, order, xor).unwrap();
            let site = sites_from_mapper(&m, reserved);
            for f in 0..(m.capacity() / PAGE) as u32 {
                let first = m.decode(f as u64 * PAGE);
                let last = m.decode(f as u64 * PAGE + LAST_LINE);
                let want = (!reserved(first.row) && !reserved(last.row)).then_some(FrameSite {
                    channel: first.channel,
                    rank: first.rank,
                    bank_index: first.bank_index,
                    subarray: first.subarray,
                });
                assert_eq!(site(f), want, "{order} xor {xor} frame {f}");
            }
        }
    }
}

/// The eager order, pool numbers and per-pool lists equal those of the plain algorithm
/// (an ordered map for pool numbers, the frames shuffled alone, each list built by
/// looking its frames' pools up): start-up got faster, the placement did not move.
#[test]
fn the_eager_order_and_pools_are_those_of_the_plain_algorithm() {
    let o = small_org();
    let m = AddressMapper::new(&o, "RoRaBaChCo", true).unwrap();
    let frames = (m.capacity() / PAGE) as usize;
    let reserved = |r: u32| r % 128 == 127;
    for key in [subarray_key as PoolKey, bank_key] {
        let site = sites_from_mapper(&m, reserved);
        let got = FreeFrames::eager(frames, &site, Pooling { key, lists: true }, 7);
        let mut pools = BTreeMap::new();
        let mut pool_of = vec![u32::MAX; frames];
        let mut order = Vec::new();
        for f in 0..frames as u32 {
            let Some(s) = site(f) else { continue };
            let n = pools.len() as u32;
            pool_of[f as usize] = *pools.entry(key(&s)).or_insert(n);
            order.push(f);
        }
        let mut rng = SplitMix64::new(7);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut lists = vec![Vec::new(); pools.len()];
        for &f in &order {
            lists[pool_of[f as usize] as usize].push(f);
        }
        assert!(pools.len() > 8, "several pools");
        assert_eq!(got.order, order);
        assert_eq!(got.lists.as_ref().unwrap().lists, lists);
        for (k, &n) in &pools {
            assert_eq!(got.pool_keys[n as usize], *k);
            assert_eq!(got.pools.get(k), Some(&n));
        }
    }
}
