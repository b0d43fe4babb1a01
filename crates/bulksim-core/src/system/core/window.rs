//! The instruction window of a core: slots in program order that retire in order once
//! ready, indexed by the cache line each waiting load needs so that a fill wakes only its
//! own slots.

use super::{Slot, NO_LINE};
use std::collections::VecDeque;

/// No slot (the end of a chain of slots waiting for one line).
const NO_SLOT: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
struct Entry {
    slot: Slot,
    /// Sequence number of the next older slot waiting for the same line (NO_SLOT: none).
    older: u64,
}

/// The instruction window: slots in program order, plus an index from each line that loads
/// wait for to the chain of slots waiting for it, so that a fill touches only those slots
/// instead of scanning the window. Waiting slots never retire (only ready slots at the
/// front do), so every slot in a chain is still in the window when its line arrives.
#[derive(Debug, Default)]
pub struct Window {
    entries: VecDeque<Entry>,
    /// Sequence number of `entries[0]` (one per slot ever pushed).
    front_seq: u64,
    /// (line, sequence number of the youngest slot waiting for it), one per distinct line;
    /// as few as the outstanding misses, so a linear search.
    waiting: Vec<(u64, u64)>,
    /// Sequence numbers of the slots that are loads, stores or movblks (`core.lsq`), oldest
    /// first: kept apart so that the slots stay small on the hot path.
    mem_seqs: VecDeque<u64>,
}

impl Window {
    pub fn new() -> Window {
        Window::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn front(&self) -> Option<&Slot> {
        self.entries.front().map(|e| &e.slot)
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Slot> {
        let e = self.entries.pop_front()?;
        if self.mem_seqs.front() == Some(&self.front_seq) {
            self.mem_seqs.pop_front();
        }
        self.front_seq += 1;
        Some(e.slot)
    }

    /// Loads, stores and movblks in the window.
    pub fn mem_slots(&self) -> usize {
        self.mem_seqs.len()
    }

    /// A load, store or movblk's slot: it holds a load/store queue entry until it retires.
    pub fn push_mem_back(&mut self, slot: Slot) {
        self.mem_seqs
            .push_back(self.front_seq + self.entries.len() as u64);
        self.push_back(slot);
    }

    #[inline]
    pub fn push_back(&mut self, slot: Slot) {
        let mut older = NO_SLOT;
        if slot.line != NO_LINE {
            let seq = self.front_seq + self.entries.len() as u64;
            match self.waiting.iter_mut().find(|(l, _)| *l == slot.line) {
                Some((_, youngest)) => older = std::mem::replace(youngest, seq),
                None => self.waiting.push((slot.line, seq)),
            }
        }
        self.entries.push_back(Entry { slot, older });
    }

    /// Whether any slot still waits for a line from memory.
    pub fn waits_for_a_line(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Whether every slot waits for no line and is ready by `now`.
    pub fn all_ready_by(&self, now: u64) -> bool {
        self.waiting.is_empty()
            && self
                .entries
                .iter()
                .all(|e| e.slot.line == NO_LINE && e.slot.ready_fs <= now)
    }

    /// Slots waiting for `line` become ready at `ready_fs`.
    pub fn line_arrived(&mut self, line: u64, ready_fs: u64) {
        let Some(i) = self.waiting.iter().position(|&(l, _)| l == line) else {
            return;
        };
        let mut seq = self.waiting.swap_remove(i).1;
        while seq != NO_SLOT {
            let e = &mut self.entries[(seq - self.front_seq) as usize];
            debug_assert_eq!(e.slot.line, line);
            e.slot.line = NO_LINE;
            e.slot.ready_fs = ready_fs;
            seq = std::mem::replace(&mut e.older, NO_SLOT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use crate::system::core::Core;

    /// The window against the plain scan it replaces: random pushes (ready slots and loads
    /// waiting on a few lines), fills and retirements leave the same slots.
    #[test]
    fn window_index_matches_a_scan() {
        let mut rng = SplitMix64::new(7);
        let mut core = Core::new();
        // (slot, whether it is a load/store queue entry)
        let mut model: VecDeque<(Slot, bool)> = VecDeque::new();
        for step in 0..200_000u64 {
            match rng.next_u64() % 4 {
                0 | 1 if model.len() < 64 => {
                    let line = match rng.next_u64() % 3 {
                        0 => NO_LINE,
                        _ => rng.next_u64() % 6,
                    };
                    let slot = Slot {
                        ready_fs: if line == NO_LINE { step } else { u64::MAX },
                        line,
                    };
                    if line == NO_LINE {
                        core.window.push_back(slot);
                    } else {
                        core.window.push_mem_back(slot);
                    }
                    model.push_back((slot, line != NO_LINE));
                }
                2 => {
                    let line = rng.next_u64() % 7;
                    core.line_arrived(line, step + 3);
                    for (s, _) in model.iter_mut().filter(|(s, _)| s.line == line) {
                        s.line = NO_LINE;
                        s.ready_fs = step + 3;
                    }
                }
                _ => {
                    let n = core.retire(4, step);
                    let mut m = 0;
                    while m < 4
                        && model
                            .front()
                            .is_some_and(|(s, _)| s.line == NO_LINE && s.ready_fs <= step)
                    {
                        model.pop_front();
                        m += 1;
                    }
                    assert_eq!(n, m, "step {step}");
                }
            }
            assert_eq!(core.window.len(), model.len());
            assert_eq!(
                core.window.mem_slots(),
                model.iter().filter(|(_, mem)| *mem).count()
            );
            assert_eq!(
                core.head_ready(),
                model.front().map(|(s, _)| if s.line == NO_LINE {
                    s.ready_fs
                } else {
                    u64::MAX
                })
            );
            let slots: Vec<(u64, u64)> = core
                .window
                .entries
                .iter()
                .map(|e| (e.slot.line, e.slot.ready_fs))
                .collect();
            let expect: Vec<(u64, u64)> = model.iter().map(|(s, _)| (s.line, s.ready_fs)).collect();
            assert_eq!(slots, expect, "step {step}");
        }
    }
}
