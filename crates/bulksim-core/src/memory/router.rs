//! The memory router: owns the physical address space, which it splits into the devices'
//! disjoint ranges (in the order the config lists them, each as large as its organisation),
//! and the functional memory image. It is the one place bytes are read and written: fills read
//! the image when they complete, write-backs write it when they leave the last cache level,
//! and the bytes bulk operations move are applied as each device reports them. Requests reach a
//! device in its local addresses; completions come back in the device's cycles, which the
//! caller turns into time with the device's period.

use super::channels::MemorySystem;
use super::device::MemoryDevice;
use super::hybrid::{HybridMemory, HYBRID_TAG};
use crate::bulk::{BulkKind, BulkOp, Move};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::hybrid::BLOCK_BYTES;
use crate::image::MemoryImage;
use crate::port::{Port, Request, Response};

/// Seed of the memory image's initial contents (fixed: runs are deterministic).
const IMAGE_SEED: u64 = 0x0b01_c51e;

pub struct MemoryRouter {
    pub devices: Vec<MemoryDevice>,
    image: MemoryImage,
    moves: Vec<Move>,
    /// Total bytes of all devices; an address past it goes to the last device, whose
    /// channels count it out of range.
    capacity: u64,
    /// `[hybrid]`: the two devices are one hybrid memory (docs/hybrid.md): accesses are
    /// redirected while pages migrate, and the image follows the blocks.
    pub hybrid: Option<HybridMemory>,
    scratch: Vec<Response>,
}

impl MemoryRouter {
    /// The devices `config` describes (`[[memory.device]]`, or one from `[dram]`).
    pub fn new(config: &Config) -> Result<MemoryRouter> {
        let mut devices = Vec::new();
        let mut base = 0u64;
        for (name, cfg) in config.device_configs()? {
            let channels = MemorySystem::new(&cfg)?;
            let device = MemoryDevice::new(name, channels, base);
            base = base.checked_add(device.size).ok_or_else(|| {
                Error::Config("memory.device: the devices' capacities overflow 64 bits".into())
            })?;
            devices.push(device);
        }
        let hybrid = match &config.hybrid {
            Some(h) => Some(HybridMemory::new(h, &devices)?),
            None => None,
        };
        if let Some(h) = &hybrid {
            if h.cfg.copy_priority.resolve(h.cfg.mechanism)
                == crate::hybrid::config::CopyPriority::Low
            {
                // Program requests before migration copies in every queue (Table I's
                // HIGH and LOW queues of HMMSim, as one queue with two classes).
                for d in &mut devices {
                    d.channels.set_low_priority_tag(HYBRID_TAG);
                }
            }
        }
        Ok(MemoryRouter {
            devices,
            image: MemoryImage::new(IMAGE_SEED),
            moves: Vec::new(),
            capacity: base,
            hybrid,
            scratch: Vec::new(),
        })
    }

    /// Total bytes of all devices.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The device holding physical address `addr` (the last one for addresses past the end,
    /// whose requests it counts as out of range).
    #[inline]
    pub fn device_of(&self, addr: u64) -> usize {
        if self.devices.len() == 1 {
            return 0;
        }
        self.devices
            .iter()
            .position(|d| d.contains(addr))
            .unwrap_or(self.devices.len() - 1)
    }

    pub fn image(&self) -> &MemoryImage {
        &self.image
    }

    /// Reads `buf.len()` bytes at physical address `addr` (as the program addresses them:
    /// a migrating page's blocks are read where their newest bytes are).
    pub fn read(&self, addr: u64, buf: &mut [u8]) {
        let Some(h) = &self.hybrid else {
            self.image.read(addr, buf);
            return;
        };
        let mut done = 0;
        while done < buf.len() {
            let at = addr + done as u64;
            let n = ((BLOCK_BYTES - at % BLOCK_BYTES) as usize).min(buf.len() - done);
            self.image
                .read(h.resolve_read(at), &mut buf[done..done + n]);
            done += n;
        }
    }

    /// Writes `data` at physical address `addr` (a write-back leaving the caches; a
    /// migrating page's blocks go to its destination).
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let Some(h) = &mut self.hybrid else {
            self.image.write(addr, data);
            return;
        };
        let mut done = 0;
        while done < data.len() {
            let at = addr + done as u64;
            let n = ((BLOCK_BYTES - at % BLOCK_BYTES) as usize).min(data.len() - done);
            let (to, copy) = h.resolve_write(at);
            if let Some((src, dst)) = copy {
                self.image.copy(src, dst, BLOCK_BYTES);
            }
            self.image.write(to, &data[done..done + n]);
            done += n;
        }
    }

    /// Offers `req` from the last cache level to device `device` at time `fs`: taken when
    /// the device holds the address it is served at (under `[hybrid]`, where the ART sends
    /// it) and its queue has room. The hybrid memory then counts it and updates its tables.
    /// `issued`: when it left the last cache level (fs), its age among the requests the
    /// controller takes in the same cycle.
    #[inline]
    pub fn offer(&mut self, device: usize, req: &Request, fs: u64, issued: u64) -> bool {
        let Some(h) = &mut self.hybrid else {
            if self.device_of(req.addr) != device {
                return false;
            }
            let d = &mut self.devices[device];
            if !d.can_accept(req) {
                return false;
            }
            d.send_issued(req, fs, issued);
            return true;
        };
        let served = h.route(req.addr, req.kind, req.origin);
        let d = &mut self.devices[device];
        if !d.contains(served) {
            return false;
        }
        let at = Request {
            addr: served,
            ..*req
        };
        if !d.can_accept(&at) {
            return false;
        }
        d.send_issued(&at, fs, issued);
        if let Some((src, dst)) = h.accepted(req, served) {
            self.image.copy(src, dst, BLOCK_BYTES);
            let dev = if self.devices[h.dram].contains(dst) {
                h.dram
            } else {
                h.pcm
            };
            self.devices[dev].wake(fs);
        }
        true
    }

    /// Device `device`'s responses to the caches' requests, with their due times (under
    /// `[hybrid]` each LLC miss waited for its ART lookup too).
    pub fn take_responses(&mut self, device: usize, out: &mut Vec<Response>) {
        let start = out.len();
        self.devices[device].take_responses(out);
        if let Some(h) = &self.hybrid {
            for r in &mut out[start..] {
                r.1 += h.art_fs;
            }
        }
    }

    /// Makes `bytes` at `addr` zero without timing (memory present before the run began).
    pub fn zero_untimed(&mut self, addr: u64, bytes: u64) {
        self.image.zero(addr, bytes);
    }

    /// Whether every byte `op` reads and writes lies in one device (so the device can run it
    /// below the caches).
    pub fn within_one_device(&self, op: &BulkOp) -> bool {
        if self.devices.len() == 1 {
            return true;
        }
        let d = &self.devices[self.device_of(op.dst)];
        let inside = |a: u64, len: u64| d.contains(a) && d.contains(a + len.max(1) - 1);
        inside(op.dst, op.bytes)
            && match op.kind {
                BulkKind::Copy { src } => inside(src, op.bytes),
                BulkKind::Init { .. } => true,
            }
    }

    /// Offers a bulk operation at time `fs` to the device holding it; Ok(Some((device, id)))
    /// when accepted, Ok(None) when it must wait, Err when the operation cannot run (e.g. it
    /// spans devices).
    pub fn try_enqueue_bulk(
        &mut self,
        op: BulkOp,
        fs: u64,
    ) -> std::result::Result<Option<(usize, u32)>, String> {
        let device = self.device_of(op.dst);
        let d = &self.devices[device];
        let (d0, d1) = op.dst_range();
        let inside = |a: u64, b: u64| d.contains(a) && (b == a || d.contains(b - 1));
        let src_ok = match op.kind {
            BulkKind::Copy { src } => inside(src, src + op.bytes),
            BulkKind::Init { .. } => true,
        };
        if !inside(d0, d1) || !src_ok {
            return Err(format!(
                "bulk operation at {:#x} ({} bytes) spans memory devices; bulksim moves bytes between devices only by line reads and writes",
                op.dst, op.bytes
            ));
        }
        let local = BulkOp {
            kind: match op.kind {
                BulkKind::Copy { src } => BulkKind::Copy { src: src - d.base },
                k => k,
            },
            dst: op.dst - d.base,
            bytes: op.bytes,
        };
        let cycle = d.cycle_at(fs);
        let d = &mut self.devices[device];
        let id = d.channels.try_enqueue_bulk(local, cycle)?;
        if id.is_some() {
            d.wake(fs);
        }
        Ok(id.map(|id| (device, id)))
    }

    /// Steps device `device` at its cycle `cycle` and applies the bytes its bulk work moved;
    /// returns the next cycle it can change state.
    #[inline]
    pub fn step(&mut self, device: usize, cycle: u64) -> u64 {
        if self.hybrid.is_some() {
            return self.step_hybrid(device, cycle);
        }
        let d = &mut self.devices[device];
        d.done_cycle = Some(cycle);
        let next = d.channels.tick(cycle);
        if d.channels.has_moves() {
            self.apply_moves(device);
        }
        next
    }

    /// `step` under `[hybrid]`: the copier's waiting requests are offered (after the
    /// caches', which the caller offered first), the device is stepped, and its served copier
    /// requests go back to the copier (a read's copy write queued, possibly for the other
    /// device, which is woken). Copier requests still waiting bring the next step forward to
    /// the next cycle only while they could enter then (`may_offer_copies`).
    #[inline(never)]
    fn step_hybrid(&mut self, device: usize, cycle: u64) -> u64 {
        let h = self.hybrid.as_mut().expect("hybrid");
        let d = &mut self.devices[device];
        d.done_cycle = Some(cycle);
        let image = &mut self.image;
        h.offer_copies(device, d, cycle, |src, dst| {
            image.copy(src, dst, BLOCK_BYTES)
        });
        let mut next = d.channels.tick(cycle);
        let fs = cycle * d.period_fs;
        self.scratch.clear();
        d.channels
            .take_completions_tagged(HYBRID_TAG, &mut self.scratch);
        for i in 0..self.scratch.len() {
            let tag = self.scratch[i].0;
            if let Some(other) = h.served(device, tag) {
                self.devices[other].wake(fs);
            }
        }
        if h.may_offer_copies(device) {
            next = next.min(cycle + 1);
        }
        next
    }

    /// What applies moved bytes of a device placed at `base` to the image (trace replay,
    /// which holds its one device's channels itself while it runs).
    pub fn moved_bytes(&mut self, base: u64) -> MovedBytes<'_> {
        MovedBytes {
            image: &mut self.image,
            moves: &mut self.moves,
            base,
        }
    }

    /// Applies the bytes device `device`'s bulk work moved to the image.
    #[inline(never)]
    pub fn apply_moves(&mut self, device: usize) {
        let d = &mut self.devices[device];
        MovedBytes {
            image: &mut self.image,
            moves: &mut self.moves,
            base: d.base,
        }
        .apply(&mut d.channels);
    }

    /// `[hybrid]`: the hybrid memory's stats with the devices' part (program requests'
    /// service times, every PCM access), derived fields computed.
    pub fn hybrid_stats(&self) -> Option<crate::memory::hybrid::HybridStats> {
        let h = self.hybrid.as_ref()?;
        let mut s = h.stats();
        let service = |d: usize| {
            let dev = &self.devices[d];
            let (n, cycles) = dev.channels.program_service();
            (n, cycles as f64 * dev.channels.spec().tck_ns())
        };
        (s.pcm_served, s.pcm_service_ns) = service(h.pcm);
        (s.dram_served, s.dram_service_ns) = service(h.dram);
        s.pcm_accesses_all = self.devices[h.pcm].channels.requests_received();
        s.derive();
        Some(s)
    }

    pub fn is_idle(&self) -> bool {
        self.devices.iter().all(|d| d.channels.is_idle())
            && self
                .hybrid
                .as_ref()
                .map_or(true, |h| h.is_idle() && h.ready.is_empty())
    }

    pub fn finish_logs(&mut self) -> Result<()> {
        for d in &mut self.devices {
            d.channels.finish_log()?;
        }
        Ok(())
    }
}

/// The image and a scratch list, for applying one device's moved bytes.
pub struct MovedBytes<'a> {
    image: &'a mut MemoryImage,
    moves: &'a mut Vec<Move>,
    base: u64,
}

impl MovedBytes<'_> {
    /// Applies what `channels` moved since the last call (device-local addresses).
    #[inline(never)]
    pub fn apply(&mut self, channels: &mut MemorySystem) {
        channels.take_moves(self.moves);
        let base = self.base;
        for m in self.moves.drain(..) {
            match m {
                Move::Copy { src, dst, len } => self.image.copy(src + base, dst + base, len),
                Move::Fill { dst, len, value } => self.image.fill(dst + base, len, value),
            }
        }
    }
}
