//! The channel copier: executes line jobs (the `cpu` and `mc_dma` mechanisms, and RowClone's
//! fallback) as ordinary requests through the controllers' queues, like a DMA engine or a
//! core's copy loop moving data through a buffer of `lines_in_flight` lines. Jobs take buffer
//! slots in order and send their reads to their channels' read queues; once the buffer is
//! full (or no job waits) and every read of it is back, the buffered lines' writes go to the
//! destination channels' write queues, where they are buffered and drained like any write.
//! A slot frees when its write is served. Requests carry the slot as a tag; the controllers
//! report each tagged request served.

use super::LineJob;
use crate::request::RequestKind;
use std::collections::VecDeque;

#[derive(Debug)]
struct Active {
    job: LineJob,
    reads_sent: usize,
    reads_back: usize,
    /// Cycle the last read's data has arrived.
    data_at: u64,
    write_released: bool,
    write_sent: bool,
}

#[derive(Debug)]
pub struct ChannelCopier {
    pending: VecDeque<LineJob>,
    slots: Vec<Option<Active>>,
    free: Vec<u32>,
}

impl ChannelCopier {
    pub fn new(lines_in_flight: usize) -> ChannelCopier {
        ChannelCopier {
            pending: VecDeque::new(),
            slots: (0..lines_in_flight).map(|_| None).collect(),
            free: (0..lines_in_flight as u32).rev().collect(),
        }
    }

    pub fn push(&mut self, job: LineJob) {
        self.pending.push_back(job);
    }

    #[inline]
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.free.len() == self.slots.len()
    }

    /// Offers whatever can go now through `enqueue(kind, byte address, tag) -> accepted`;
    /// returns the next cycle at which a write's data will be ready (u64::MAX if none).
    pub fn step(
        &mut self,
        now: u64,
        mut enqueue: impl FnMut(RequestKind, u64, u32) -> bool,
    ) -> u64 {
        if self.pending.is_empty() && self.free.len() == self.slots.len() {
            return u64::MAX;
        }
        while !self.pending.is_empty() {
            let Some(slot) = self.free.pop() else { break };
            let job = self.pending.pop_front().expect("not empty");
            self.slots[slot as usize] = Some(Active {
                job,
                reads_sent: 0,
                reads_back: 0,
                data_at: now,
                write_released: false,
                write_sent: false,
            });
        }
        let mut next = u64::MAX;
        let mut buffered_all_back = true;
        for (tag, slot) in self.slots.iter_mut().enumerate() {
            let Some(a) = slot else { continue };
            while a.reads_sent < a.job.reads.len() {
                if !enqueue(RequestKind::Read, a.job.reads[a.reads_sent], tag as u32) {
                    break;
                }
                a.reads_sent += 1;
            }
            if a.write_released {
                continue;
            }
            if a.reads_back < a.job.reads.len() {
                buffered_all_back = false;
            } else if a.data_at > now {
                buffered_all_back = false;
                next = next.min(a.data_at);
            }
        }
        let buffer_done = self.free.is_empty() || self.pending.is_empty();
        for (tag, slot) in self.slots.iter_mut().enumerate() {
            let Some(a) = slot else { continue };
            if !a.write_released && buffer_done && buffered_all_back {
                a.write_released = true;
            }
            if a.write_released && !a.write_sent {
                if !enqueue(RequestKind::Write, a.job.write, tag as u32) {
                    break;
                }
                a.write_sent = true;
            }
        }
        next
    }

    /// A tagged request was served, its data done at `done`. Returns the finished job when
    /// this was its write.
    pub fn served(&mut self, tag: u32, kind: RequestKind, done: u64) -> Option<LineJob> {
        let slot = &mut self.slots[tag as usize];
        let a = slot.as_mut().expect("a tag of an active job");
        match kind {
            RequestKind::Read => {
                a.reads_back += 1;
                a.data_at = a.data_at.max(done);
                None
            }
            RequestKind::Write => {
                let a = slot.take().expect("active");
                self.free.push(tag);
                Some(a.job)
            }
        }
    }
}
