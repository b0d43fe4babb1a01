//! Looping a thread's event stream (`system.loop_workloads`): when the stream ends (its end
//! or an exit) it starts again from its beginning, so a short trace (the 100,000-line MSC
//! and SPEC heads) runs as long as `sim.stop_after_dram_accesses` asks. The first pass runs
//! as written, except waits (`W`), skipped on every pass: looped children never exit. Later
//! passes replay the work and skip what set the process up once, since its effect is still
//! there: maps (`A`, `P`, `N`: a map over a mapped range would replace its pages) and thread
//! starts (`F`, `T`: the threads run already). A later pass that unmaps (`U`) or execs (`E`)
//! is an error: the pass after it would run on memory that is gone. A thread whose pass
//! makes no memory access (only compute, maps, thread starts) is not looped: it could never
//! bring the run to its stop, and would loop for ever.

use crate::error::{Error, Result};
use crate::workload::program::Event;
use crate::workload::source::{EventSource, Reopen};

pub struct LoopingSource {
    current: Box<dyn EventSource>,
    reopen: Reopen,
    /// Passes started after the first.
    repeats: u64,
    /// Memory accesses given out in the current pass.
    accesses: u64,
}

impl LoopingSource {
    pub fn new(source: Box<dyn EventSource>, reopen: Reopen) -> LoopingSource {
        LoopingSource {
            current: source,
            reopen,
            repeats: 0,
            accesses: 0,
        }
    }
}

impl EventSource for LoopingSource {
    fn next_event(&mut self) -> Result<Option<Event>> {
        loop {
            let event = match self.current.next_event()? {
                None | Some(Event::Exit) => {
                    if self.accesses == 0 {
                        return Ok(None);
                    }
                    self.current = (self.reopen)()?;
                    self.repeats += 1;
                    self.accesses = 0;
                    continue;
                }
                Some(e) => e,
            };
            if event == Event::Wait {
                continue;
            }
            if self.repeats > 0 {
                match event {
                    Event::Map { .. }
                    | Event::MapPopulated { .. }
                    | Event::MapResident { .. }
                    | Event::Fork(_)
                    | Event::Spawn(_) => continue,
                    Event::Unmap { .. } | Event::Exec => {
                        return Err(Error::Trace(format!(
                            "{}: system.loop_workloads: pass {} of this thread unmaps or execs \
                             (`U`, `E`), so the pass after it would run on memory that is \
                             gone; a looped trace may not unmap or exec",
                            self.current.location(),
                            self.repeats + 1
                        )))
                    }
                    _ => {}
                }
            }
            if accesses_memory(&event) {
                self.accesses += 1;
            }
            return Ok(Some(event));
        }
    }

    fn location(&self) -> String {
        self.current.location()
    }

    fn starts_as_child(&self) -> bool {
        self.current.starts_as_child()
    }

    fn bulk_events_are_page_operations(&self) -> bool {
        self.current.bulk_events_are_page_operations()
    }
}

/// Whether the event loads, stores, copies or initializes memory (through the caches or below).
fn accesses_memory(e: &Event) -> bool {
    match e {
        Event::Load(_)
        | Event::LoadDependent(_)
        | Event::Store(_)
        | Event::LoadRange { .. }
        | Event::StoreRange { .. }
        | Event::Memcpy { .. }
        | Event::Movblk { .. }
        | Event::Meminit { .. }
        | Event::KernelToUser { .. }
        | Event::KernelFromUser { .. }
        | Event::MemRead(_)
        | Event::MemWrite(_)
        | Event::MemReadDependent(_) => true,
        Event::Compute(_)
        | Event::Map { .. }
        | Event::MapPopulated { .. }
        | Event::MapResident { .. }
        | Event::Unmap { .. }
        | Event::Fork(_)
        | Event::Spawn(_)
        | Event::Yield(_)
        | Event::Wait
        | Event::Exit
        | Event::Exec => false,
    }
}
