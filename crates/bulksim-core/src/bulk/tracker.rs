//! Operations in flight and their completion: each operation is split into parts (segments
//! and line jobs); when its last part is done the operation's latency, from arrival to the
//! end of its last DRAM command (data written, banks precharged), is recorded. Also the
//! hazard check that keeps dependent operations in order: an operation waits while it
//! reads or writes bytes that one in flight writes, or writes bytes one in flight reads.

use super::BulkOp;
use crate::counters::LatencyHistogram;

#[derive(Clone, Debug)]
struct InFlight {
    id: u32,
    op: BulkOp,
    arrival: u64,
    parts_left: u64,
    done: u64,
}

/// Counters over all operations.
#[derive(Clone, Debug, Default)]
pub struct BulkCounters {
    pub copies: u64,
    pub inits: u64,
    pub bytes_copied: u64,
    pub bytes_initialized: u64,
    pub fpm_bytes: u64,
    pub psm_bytes: u64,
    pub channel_copy_bytes: u64,
    pub dma_bytes: u64,
    /// Channel data (read and write bursts) of line jobs, by operation kind.
    pub copy_channel_bytes: u64,
    pub init_channel_bytes: u64,
    pub copy_latency: LatencyHistogram,
    pub init_latency: LatencyHistogram,
    /// End of the last operation's last command.
    pub last_done: u64,
}

#[derive(Debug, Default)]
pub struct BulkTracker {
    in_flight: Vec<InFlight>,
    next_id: u32,
    pub counters: BulkCounters,
    /// Operations finished since last taken: (id, cycle), when `report` is on.
    pub completed: Vec<(u32, u64)>,
    pub report: bool,
    /// The component above orders operations by their range hazards itself (the full
    /// system's bulk coordinator), so the queue need not check them again.
    pub caller_tracks_hazards: bool,
}

impl BulkTracker {
    #[inline]
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether `op` must wait for an operation in flight (a read-after-write, write-after-read
    /// or write-after-write on the same bytes).
    pub fn conflicts(&self, op: &BulkOp) -> bool {
        !self.caller_tracks_hazards && self.in_flight.iter().any(|f| op.must_wait_for(&f.op))
    }

    /// The id the next operation will get.
    pub fn next_id(&self) -> u32 {
        self.next_id
    }

    /// Registers an operation split into `parts` pieces; returns its id.
    pub fn start(&mut self, op: BulkOp, arrival: u64, parts: u64) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let c = &mut self.counters;
        match op.kind {
            super::BulkKind::Copy { .. } => {
                c.copies += 1;
                c.bytes_copied += op.bytes;
            }
            super::BulkKind::Init { .. } => {
                c.inits += 1;
                c.bytes_initialized += op.bytes;
            }
        }
        self.in_flight.push(InFlight {
            id,
            op,
            arrival,
            parts_left: parts,
            done: arrival,
        });
        id
    }

    /// Line jobs of operation `id` carried `bytes` over the channel.
    pub fn channel_bytes(&mut self, id: u32, bytes: u64) {
        if let Some(f) = self.in_flight.iter().find(|f| f.id == id) {
            match f.op.kind {
                super::BulkKind::Copy { .. } => self.counters.copy_channel_bytes += bytes,
                super::BulkKind::Init { .. } => self.counters.init_channel_bytes += bytes,
            }
        }
    }

    /// One part of operation `id` finished at cycle `done`.
    pub fn part_done(&mut self, id: u32, done: u64) {
        let i = self
            .in_flight
            .iter()
            .position(|f| f.id == id)
            .expect("a part of an operation in flight");
        let f = &mut self.in_flight[i];
        f.parts_left -= 1;
        f.done = f.done.max(done);
        if f.parts_left == 0 {
            let f = self.in_flight.swap_remove(i);
            let c = &mut self.counters;
            let latency = f.done - f.arrival;
            match f.op.kind {
                super::BulkKind::Copy { .. } => c.copy_latency.record(latency),
                super::BulkKind::Init { .. } => c.init_latency.record(latency),
            }
            c.last_done = c.last_done.max(f.done);
            if self.report {
                self.completed.push((f.id, f.done));
            }
        }
    }
}
