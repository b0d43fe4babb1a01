//! The level below the last cache level, as the cache hierarchy sees it: `MemorySide`, what
//! the hierarchy needs of memory (the functional image's reads, writes and zeroing, whether
//! its requests queue for the devices or are taken at once, bulk offers), implemented by
//! the memory router (devices that time every request) and by `MemoryBelow`, the one the
//! hierarchy holds: the router, with the fixed-latency memory timing the caches' requests in
//! front of it when `memory.fixed_latency_cycles` asks (static dispatch, no virtual call per
//! request). Code that needs the devices themselves (stepping them, their stats and logs, the
//! hybrid tables) reaches the router through `router`.

use super::fixed_latency::FixedLatencyMemory;
use super::router::MemoryRouter;
use crate::bulk::BulkOp;
use crate::port::{Request, Response};

/// What the cache hierarchy needs of the memory below it.
pub trait MemorySide {
    /// Reads `buf.len()` bytes at physical `addr` as the program addresses them.
    fn read(&self, addr: u64, buf: &mut [u8]);
    /// Writes `data` at physical `addr` (a write-back leaving the caches).
    fn write(&mut self, addr: u64, data: &[u8]);
    /// Makes `bytes` at `addr` zero without timing (memory present before the run began).
    fn zero_untimed(&mut self, addr: u64, bytes: u64);
    /// Whether the last level's requests wait in its queues until a device takes them
    /// (`MemoryRouter::offer`, from `Hierarchy::drain_to_memory`); false: memory takes each
    /// as it is sent (`take_at_once`), and no write-back holds a buffer place.
    fn queues_requests(&self) -> bool;
    /// Takes `req`, sent by the last level at `fs`, at once if this memory needs no queue
    /// (true), answering it later; false: it must wait in the last level's queue.
    fn take_at_once(&mut self, req: &Request, fs: u64) -> bool;
    /// How long a write-back into memory takes when a miss waits for it
    /// (`writeback_delays_miss`): 0 when devices time it (its cost shows in their queues).
    fn write_back_fs(&self) -> u64;
    /// Whether every byte `op` reads and writes lies in one device.
    fn within_one_device(&self, op: &BulkOp) -> bool;
    /// Offers a bulk operation at `fs` to the device holding it (`MemoryRouter::try_enqueue_bulk`).
    fn try_enqueue_bulk(
        &mut self,
        op: BulkOp,
        fs: u64,
    ) -> std::result::Result<Option<(usize, u32)>, String>;
}

impl MemorySide for MemoryRouter {
    #[inline]
    fn read(&self, addr: u64, buf: &mut [u8]) {
        MemoryRouter::read(self, addr, buf)
    }
    #[inline]
    fn write(&mut self, addr: u64, data: &[u8]) {
        MemoryRouter::write(self, addr, data)
    }
    fn zero_untimed(&mut self, addr: u64, bytes: u64) {
        MemoryRouter::zero_untimed(self, addr, bytes)
    }
    #[inline]
    fn queues_requests(&self) -> bool {
        true
    }
    #[inline]
    fn take_at_once(&mut self, _req: &Request, _fs: u64) -> bool {
        false
    }
    #[inline]
    fn write_back_fs(&self) -> u64 {
        0
    }
    fn within_one_device(&self, op: &BulkOp) -> bool {
        MemoryRouter::within_one_device(self, op)
    }
    fn try_enqueue_bulk(
        &mut self,
        op: BulkOp,
        fs: u64,
    ) -> std::result::Result<Option<(usize, u32)>, String> {
        MemoryRouter::try_enqueue_bulk(self, op, fs)
    }
}

/// The memory below the caches the hierarchy holds: the router (the address space, the
/// image, the devices and the hybrid tables), and the fixed-latency memory when it times the
/// caches' requests instead of the devices. The router is a plain field, not a variant, so
/// every path that reaches the devices or the image pays nothing for the choice (an enum cost
/// the full system 0.8% of its host instructions in a match per access, issue 34).
pub struct MemoryBelow {
    router: MemoryRouter,
    /// `memory.fixed_latency_cycles` > 0: what times the caches' requests (None: the devices).
    fixed_latency: Option<FixedLatencyMemory>,
}

impl From<MemoryRouter> for MemoryBelow {
    fn from(router: MemoryRouter) -> MemoryBelow {
        MemoryBelow::new(router, None)
    }
}

impl MemoryBelow {
    pub fn new(router: MemoryRouter, fixed_latency: Option<FixedLatencyMemory>) -> MemoryBelow {
        MemoryBelow {
            router,
            fixed_latency,
        }
    }

    /// The router: the address space, the image, the devices and the hybrid tables.
    #[inline]
    pub fn router(&self) -> &MemoryRouter {
        &self.router
    }

    #[inline]
    pub fn router_mut(&mut self) -> &mut MemoryRouter {
        &mut self.router
    }

    /// Moves the answers the fixed-latency memory has given, with their due times, into
    /// `out` (the devices' come from `MemoryRouter::take_responses` as each is stepped).
    #[inline]
    pub fn take_responses(&mut self, out: &mut Vec<Response>) {
        if let Some(f) = &mut self.fixed_latency {
            f.take_responses(out);
        }
    }

    /// Whether answers `take_responses` would move wait.
    #[inline]
    pub fn has_responses(&self) -> bool {
        self.fixed_latency
            .as_ref()
            .is_some_and(|f| f.has_responses())
    }
}

impl MemorySide for MemoryBelow {
    #[inline]
    fn read(&self, addr: u64, buf: &mut [u8]) {
        self.router.read(addr, buf)
    }
    #[inline]
    fn write(&mut self, addr: u64, data: &[u8]) {
        self.router.write(addr, data)
    }
    fn zero_untimed(&mut self, addr: u64, bytes: u64) {
        self.router.zero_untimed(addr, bytes)
    }
    #[inline]
    fn queues_requests(&self) -> bool {
        self.fixed_latency.is_none()
    }
    #[inline]
    fn take_at_once(&mut self, req: &Request, fs: u64) -> bool {
        match &mut self.fixed_latency {
            Some(f) => {
                f.take(req, fs);
                true
            }
            None => false,
        }
    }
    #[inline]
    fn write_back_fs(&self) -> u64 {
        self.fixed_latency.as_ref().map_or(0, |f| f.latency_fs())
    }
    fn within_one_device(&self, op: &BulkOp) -> bool {
        self.router.within_one_device(op)
    }
    fn try_enqueue_bulk(
        &mut self,
        op: BulkOp,
        fs: u64,
    ) -> std::result::Result<Option<(usize, u32)>, String> {
        self.router.try_enqueue_bulk(op, fs)
    }
}
