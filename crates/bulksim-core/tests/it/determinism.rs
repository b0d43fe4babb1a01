//! Determinism of the OS across processes of a workload: one process exits (freeing its
//! frames) while another still allocates, and two runs give byte-identical stats; the second
//! process really reuses the first one's frames, in the order the exit freed them (ascending
//! virtual page, most recently freed reused first), so hash-order freeing would show.

use crate::common;
use bulksim_core::system::run_workload;
use bulksim_core::workload::program::{Event, ProgramWriter};
use common::config;
use std::path::{Path, PathBuf};

const PAGE: u64 = 4096;
const A: u64 = 0x1000_0000;
const B: u64 = 0x2000_0000;

fn write_thread(d: &Path, id: u32, events: &[Event]) {
    let mut w = ProgramWriter::create(&d.join(format!("thread-{id}.trace")), false).unwrap();
    for e in events {
        w.write(e).unwrap();
    }
    w.finish().unwrap();
}

/// Thread 0 maps and touches 100 pages, then exits; thread 1 computes first, then maps and
/// touches 600 pages, after thread 0's frames are free (thread 0 needs about 130 us; thread
/// 1's computing alone takes 1M core cycles, over 300 us).
fn workload() -> PathBuf {
    let d = std::env::temp_dir().join(format!("bulksim-determinism-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut t0 = vec![Event::Map {
        vaddr: A,
        bytes: 100 * PAGE,
    }];
    t0.extend((0..100).map(|i| Event::Store(A + i * PAGE)));
    t0.push(Event::Exit);
    write_thread(&d, 0, &t0);
    let mut t1 = vec![
        Event::Compute(3_000_000),
        Event::Map {
            vaddr: B,
            bytes: 600 * PAGE,
        },
    ];
    t1.extend((0..600).map(|i| Event::Store(B + i * PAGE)));
    t1.push(Event::Exit);
    write_thread(&d, 1, &t1);
    d
}

#[test]
fn an_exit_while_another_process_allocates_is_deterministic() {
    let d = workload();
    // Private caches: a line of a freed frame left in core 0's cache must not be what core 1
    // sees after it reuses the frame (`Hierarchy::hand_over`), which `read_virtual` checks.
    let c = config(&["os.allocator=\"subarray_aware\""]);
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (s, sys) = run_workload(&c, &d).unwrap();
        let mut json = serde_json::to_value(&s).unwrap();
        json["memory"]
            .as_object_mut()
            .expect("memory stats")
            .remove("host")
            .expect("a host field to drop");
        runs.push(serde_json::to_string(&json).unwrap());
        // Thread 0's frames now hold thread 1's stores: its n-th store (1-based) went to
        // the n-th frame it got, the most recently freed first, i.e. thread 0's pages from
        // the highest down (its stale page table still names them), and core 1 sees its
        // own store there, not a line core 0 left. Thread 0's image is refused now.
        let (p0, p1) = (sys.pid_of(0).unwrap(), sys.pid_of(1).unwrap());
        for j in 0..100u64 {
            let old = A + (99 - j) * PAGE;
            assert_eq!(
                sys.os().lookup(p1, B + j * PAGE),
                sys.os().lookup(p0, old),
                "thread 0's page {} reused by thread 1's page {j}",
                99 - j
            );
            assert_eq!(sys.read_virtual(p0, old, 8), None, "another's frame now");
            let got = sys.read_virtual(p1, B + j * PAGE, 8).unwrap();
            let want = ((1u64 + 1) << 48 | (j + 1)).to_le_bytes().to_vec();
            assert_eq!(got, want, "thread 1's page {j}");
        }
    }
    assert_eq!(runs[0], runs[1]);
    let _ = std::fs::remove_dir_all(&d);
}
