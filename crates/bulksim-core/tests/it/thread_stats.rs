//! Full-system stats say what they mean: a thread's `instructions` are its own, also when
//! threads share a core (a forked child runs on its waiting parent's core), and
//! `os.frames_used` is the peak of frames in use, not the (empty) count after every exit.

use crate::common;
use bulksim_core::system::run_workload;
use bulksim_core::workload::program::Event;
use common::*;

#[test]
fn a_forked_child_counts_its_own_instructions_and_frames_used_is_the_peak() {
    let d = dir("thread-stats", "fork");
    let page = 4096;
    // Parent: map 4 pages (1), store to each (4: four first-touch zero fills), fork (1),
    // wait (retires nothing), 5 compute, exit: 1 + 4 + 1 + 5 = 11 instructions.
    let mut parent = vec![Event::Map {
        vaddr: 0x10000,
        bytes: 4 * page,
    }];
    for i in 0..4 {
        parent.push(Event::Store(0x10000 + i * page));
    }
    parent.extend([Event::Fork(1), Event::Wait, Event::Compute(5), Event::Exit]);
    // Child: 3 loads of shared pages, stores to 2 of them (two copy-on-write copies), 10
    // compute, exit: 3 + 2 + 10 = 15 instructions.
    let child = [
        Event::Load(0x10000),
        Event::Load(0x10000 + page),
        Event::Load(0x10000 + 2 * page),
        Event::Store(0x10000 + page + 8),
        Event::Store(0x10000 + 3 * page + 8),
        Event::Compute(10),
        Event::Exit,
    ];
    write_thread(&d, 0, false, &parent);
    write_thread(&d, 1, true, &child);
    let (stats, _) = run_workload(&paper_system(&[]), &d).unwrap();
    assert_eq!(stats.cores.len(), 1, "the child runs on its parent's core");
    assert_eq!(stats.threads[0].instructions, 11);
    assert_eq!(stats.threads[1].instructions, 15);
    assert_eq!(stats.instructions, 26);
    assert_eq!(stats.cores[0].instructions, 26);
    // 4 parent frames plus the child's 2 copies at once; after both exit none is in use.
    assert_eq!(stats.os.cow_copies, 2);
    assert_eq!(stats.os.frames_used, 6);
}
