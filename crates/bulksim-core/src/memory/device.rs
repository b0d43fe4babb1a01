//! One memory device: a standard and its address mapping (its `MemorySystem` of channels), the
//! physical range it occupies, and its own clock. The device knows nothing of the physical
//! address space beyond its base; the router translates. Each device keeps the cycle it was
//! last stepped at and the next cycle it must be stepped, so one scheduler can interleave
//! devices with different clocks on a single femtosecond time line.

use super::channels::MemorySystem;
use super::rank_latency::RankLatency;
use crate::controller::NO_TAG;
use crate::port::{Port, Request, RequestKind, Response};

pub struct MemoryDevice {
    /// Name in stats (`memory.device.<name>` or the preset).
    pub name: String,
    pub channels: MemorySystem,
    /// First physical byte address of the device.
    pub base: u64,
    /// Capacity in bytes.
    pub size: u64,
    /// Clock period in femtoseconds.
    pub period_fs: u64,
    /// Next cycle at which the device must be stepped (u64::MAX: none planned).
    pub next_cycle: u64,
    /// The last cycle stepped (a cycle is stepped once).
    pub done_cycle: Option<u64>,
    /// Each rank's read latency so far, when asked for (`track_rank_latency`).
    pub rank_latency: Option<RankLatency>,
}

impl MemoryDevice {
    pub fn new(name: String, channels: MemorySystem, base: u64) -> MemoryDevice {
        let size = channels.mapper().capacity();
        let period_fs = (channels.spec().tck_ns() * 1e6).round() as u64;
        MemoryDevice {
            name,
            channels,
            base,
            size,
            period_fs,
            next_cycle: u64::MAX,
            done_cycle: None,
            rank_latency: None,
        }
    }

    /// Keeps each rank's mean read latency from now on (`rank_latency`).
    pub fn track_rank_latency(&mut self) {
        let o = &self.channels.spec().organisation;
        self.rank_latency = Some(RankLatency::new((o.channels * o.ranks) as usize));
    }

    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.size
    }

    /// The first cycle after time `fs` not yet stepped: where work sent at `fs` enters. A
    /// cycle that starts exactly at `fs` is stepped before the cores act at `fs` whenever
    /// the device is stepped then at all, so work sent at `fs` always enters after it: the
    /// same with idle skipping on (where an idle device is not stepped) as with it off.
    pub fn cycle_at(&self, fs: u64) -> u64 {
        let cycle = fs / self.period_fs + 1;
        match self.done_cycle {
            Some(done) => cycle.max(done + 1),
            None => cycle,
        }
    }

    /// New work arrived at time `fs`: make sure the device is stepped then.
    pub fn wake(&mut self, fs: u64) {
        self.next_cycle = self.next_cycle.min(self.cycle_at(fs));
    }

    /// Time of the next planned step (u64::MAX: none).
    pub fn next_fs(&self) -> u64 {
        if self.next_cycle == u64::MAX {
            u64::MAX
        } else {
            self.next_cycle * self.period_fs
        }
    }
}

impl MemoryDevice {
    fn controller_kind(kind: RequestKind) -> crate::request::RequestKind {
        match kind {
            RequestKind::Read | RequestKind::ReadForOwnership => crate::request::RequestKind::Read,
            RequestKind::Writeback => crate::request::RequestKind::Write,
        }
    }
}

/// The device as the last cache level sees it: requests in physical addresses, taken at the
/// device's cycle `fs / period`, responses with their completion times.
impl Port for MemoryDevice {
    #[inline]
    fn can_accept(&self, req: &Request) -> bool {
        self.channels
            .can_accept_client(Self::controller_kind(req.kind), req.addr - self.base)
    }

    #[inline]
    fn send(&mut self, req: &Request, fs: u64) {
        self.send_issued(req, fs, fs);
    }

    fn take_responses(&mut self, out: &mut Vec<Response>) {
        let start = out.len();
        self.channels.take_completions(out);
        for r in &mut out[start..] {
            r.1 *= self.period_fs;
            if let Some(l) = &mut self.rank_latency {
                l.done(r.0, r.1);
            }
        }
    }
}

impl MemoryDevice {
    /// `Port::send` with the time the request left its sender (`issued`, fs): the
    /// controller orders requests of one cycle by it (reads and writes in one order).
    #[inline]
    pub fn send_issued(&mut self, req: &Request, fs: u64, issued: u64) {
        let taken = self.channels.try_enqueue_client(
            Self::controller_kind(req.kind),
            req.addr - self.base,
            fs / self.period_fs,
            req.id.unwrap_or(NO_TAG),
            req.origin == crate::port::Origin::Program,
            issued,
        );
        debug_assert!(taken, "send after can_accept");
        if let (Some(l), Some(id)) = (&mut self.rank_latency, req.id) {
            if Self::controller_kind(req.kind) == crate::request::RequestKind::Read {
                let a = self.channels.mapper().decode(req.addr - self.base);
                let ranks = self.channels.spec().organisation.ranks;
                // Timed from the cycle the controller takes it, in fs.
                l.sent(
                    id,
                    a.channel * ranks + a.rank,
                    (fs / self.period_fs) * self.period_fs,
                );
            }
        }
    }
}
