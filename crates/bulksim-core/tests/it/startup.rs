//! Start-up cost does not grow with configured capacity (issue #13): above 16 GiB the page
//! allocator draws its scattered order lazily, so a small workload on a large memory decodes
//! the sites of about the frames it touches, not of every frame.

use crate::common;

use bulksim_core::os::allocator::LAZY_ABOVE_FRAMES;
use bulksim_core::system;
use bulksim_core::workload::program::Event;
use common::config;

/// 30 events over two threads: first touches, a copy, an init, a fork and the child's
/// copy-on-write stores.
fn small_workload(name: &str) -> std::path::PathBuf {
    let dir = common::dir("startup", name);
    let page = |i: u64| 0x10000 + i * 4096;
    let mut parent = vec![Event::Map {
        vaddr: page(0),
        bytes: 16 * 4096,
    }];
    parent.extend((0..4).map(|i| Event::Store(page(i))));
    parent.extend([
        Event::Load(page(0) + 64),
        Event::Compute(10),
        Event::Memcpy {
            src: page(0),
            dst: page(4),
            bytes: 4096,
        },
        Event::Meminit {
            dst: page(5),
            bytes: 4096,
            value: 7,
        },
        Event::Store(page(6)),
        Event::Fork(1),
        Event::Store(page(0) + 8),
        Event::Store(page(1) + 8),
        Event::Wait,
        Event::Load(page(2)),
        Event::Exit,
    ]);
    let mut child: Vec<Event> = (0..10).map(|i| Event::Store(page(i) + 16)).collect();
    child.extend([
        Event::Load(page(0)),
        Event::Load(page(3)),
        Event::Compute(5),
        Event::Exit,
    ]);
    assert_eq!(parent.len() + child.len(), 30);
    common::write_thread(&dir, 0, false, &parent);
    common::write_thread(&dir, 1, true, &child);
    dir
}

#[test]
fn a_small_workload_on_64_ranks_decodes_about_the_frames_it_touches() {
    let dir = small_workload("64-ranks");
    for policy in ["scatter", "subarray_aware", "inter_bank"] {
        let allocator = format!("os.allocator={policy}");
        let (one, one_sys) = system::run_workload(&config(&[&allocator]), &dir).unwrap();
        let (big, big_sys) =
            system::run_workload(&config(&[&allocator, "dram.ranks=64"]), &dir).unwrap();
        let (one_frames, big_frames) = (one_sys.os().frames(), big_sys.os().frames());
        // 1 rank (8 GiB, 2^21 frames) is eager: every site decoded at start-up.
        assert!(!one_frames.frames().is_lazy());
        assert_eq!(one_frames.sites_decoded(), 1 << 21);
        // 64 ranks (2^27 frames) is lazy, with the same usable count per rank in closed form.
        assert!(big_frames.frame_count() > LAZY_ABOVE_FRAMES);
        assert!(big_frames.frames().is_lazy());
        assert_eq!(big.os.frames_usable, 64 * one.os.frames_usable);
        // The same page faults, zero fills and copies wherever the frames lie.
        assert_eq!(
            (big.os.page_faults, big.os.zero_fills, big.os.cow_copies),
            (one.os.page_faults, one.os.zero_fills, one.os.cow_copies)
        );
        assert!(big.os.cow_copies > 0 && big.os.frames_used >= 10);
        let decoded = big_frames.sites_decoded();
        // A copy wanted in a pool draws until a frame of that pool comes: about as many
        // frames as there are pools (64 ranks x 8 banks, each of 128 subarrays).
        let pools = match policy {
            "scatter" => 0,
            "inter_bank" => 64 * 8,
            _ => 64 * 8 * 128,
        };
        // Every frame used was drawn; besides them, the rare unusable ones (1 row in 256)
        // and those drawn while looking for a pool.
        assert!(
            decoded >= big.os.frames_used
                && decoded <= big.os.frames_used + 4 + big.os.cow_copies * 4 * pools,
            "{policy}: {decoded} sites decoded for {} frames",
            big.os.frames_used
        );
        assert!(decoded < 1 << 21, "{policy}: far below the 2^27 frames");
        if policy == "subarray_aware" {
            assert_eq!(big.os.cow_same_subarray, big.os.cow_copies);
        }
    }
}
