//! forkbench (RowClone paper, section 7.2) as a two-thread workload: the parent maps an
//! S-byte array, initializes it (one 8-byte store per 64-byte line, a few instructions of
//! loop work between stores), forks, and waits; the child updates one cache line in each of
//! N distinct random pages of the array and exits. Thread 0 is the parent, thread 1 the
//! child (started by the fork).

use super::program::{Event, ProgramWriter, MAX_COMPUTE};
use crate::error::{Error, Result};
use crate::request::VADDR_LIMIT;
use crate::rng::SplitMix64;
use std::path::Path;

/// Where the array starts in the parent's address space.
pub const ARRAY_BASE: u64 = 0x4000_0000;
const PAGE: u64 = 4096;
const LINE: u64 = 64;
/// Loop instructions per initializing store (index, compare, branch, value).
pub const INIT_WORK: u64 = 4;
/// Instructions per child update (random index, address arithmetic).
pub const UPDATE_WORK: u64 = 10;
/// The largest array or region: it starts at `ARRAY_BASE` and must end within the page
/// table's reach, or the trace written could not be read back.
pub const MAX_ARRAY_BYTES: u64 = VADDR_LIMIT - ARRAY_BASE;

#[derive(Clone, Copy, Debug)]
pub struct Forkbench {
    pub array_bytes: u64,
    pub pages_updated: u64,
    pub seed: u64,
    pub binary: bool,
    /// Thread ids of the parent and the child (0 and 1 alone; others inside a mix).
    pub parent_thread: u32,
    pub child_thread: u32,
}

impl Forkbench {
    pub fn new(array_bytes: u64, pages_updated: u64, seed: u64, binary: bool) -> Forkbench {
        Forkbench {
            array_bytes,
            pages_updated,
            seed,
            binary,
            parent_thread: 0,
            child_thread: 1,
        }
    }
}

impl Forkbench {
    /// Writes the workload directory `dir` (thread-0 and thread-1).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let pages = self.array_bytes / PAGE;
        if self.array_bytes == 0 || self.array_bytes % PAGE != 0 {
            return Err(Error::Config(format!(
                "forkbench: array size {} is not a positive multiple of 4096 bytes",
                self.array_bytes
            )));
        }
        if self.array_bytes > MAX_ARRAY_BYTES {
            return Err(Error::Config(format!(
                "forkbench: array size {} bytes does not fit the virtual address space; at most {MAX_ARRAY_BYTES}",
                self.array_bytes
            )));
        }
        if self.pages_updated > pages {
            return Err(Error::Config(format!(
                "forkbench: {} pages to update but the array has only {pages}",
                self.pages_updated
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
        let ext = if self.binary { "btrace" } else { "trace" };
        let (p, c) = (self.parent_thread, self.child_thread);
        let mut parent = ProgramWriter::create(&dir.join(format!("thread-{p}.{ext}")), false)?;
        parent.write(&Event::Map {
            vaddr: ARRAY_BASE,
            bytes: self.array_bytes,
        })?;
        for line in 0..self.array_bytes / LINE {
            parent.write(&Event::Compute(INIT_WORK))?;
            parent.write(&Event::Store(ARRAY_BASE + line * LINE))?;
        }
        parent.write(&Event::Fork(c))?;
        parent.write(&Event::Wait)?;
        parent.write(&Event::Exit)?;
        parent.finish()?;

        let mut rng = SplitMix64::new(self.seed);
        // N distinct pages: a partial Fisher-Yates shuffle of the page numbers.
        let mut order: Vec<u64> = (0..pages).collect();
        let mut child = ProgramWriter::create(&dir.join(format!("thread-{c}.{ext}")), true)?;
        for i in 0..self.pages_updated as usize {
            let j = i + rng.below(pages - i as u64) as usize;
            order.swap(i, j);
            let line = rng.below(PAGE / LINE);
            child.write(&Event::Compute(UPDATE_WORK))?;
            child.write(&Event::Store(ARRAY_BASE + order[i] * PAGE + line * LINE))?;
        }
        child.write(&Event::Exit)?;
        child.finish()
    }
}

/// A memory-intensive program (the role SPEC CPU2006's memory-bound benchmarks play in the
/// paper's mixes): a populated region (its pages exist from the start, as in the paper's
/// traces of a representative portion of a running program, so it neither faults nor zeroes),
/// then `accesses` loads and stores to random lines of it (`write_percent` of them stores),
/// `work` instructions apart. No copies or forks.
#[derive(Clone, Copy, Debug)]
pub struct RandomAccess {
    pub region_bytes: u64,
    pub accesses: u64,
    pub write_percent: u64,
    pub work: u64,
    pub seed: u64,
    pub thread: u32,
    pub binary: bool,
}

impl RandomAccess {
    pub fn write(&self, dir: &Path) -> Result<()> {
        if self.region_bytes < PAGE
            || self.region_bytes > MAX_ARRAY_BYTES
            || self.write_percent > 100
            || self.work > MAX_COMPUTE
        {
            return Err(Error::Config(format!(
                "random-access program: region of 4096 to {MAX_ARRAY_BYTES} bytes (got {}), write \
                 percent 0-100 (got {}), work at most {MAX_COMPUTE} instructions (got {})",
                self.region_bytes, self.write_percent, self.work
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
        let ext = if self.binary { "btrace" } else { "trace" };
        let mut w =
            ProgramWriter::create(&dir.join(format!("thread-{}.{ext}", self.thread)), false)?;
        w.write(&Event::MapPopulated {
            vaddr: ARRAY_BASE,
            bytes: self.region_bytes,
        })?;
        let mut rng = SplitMix64::new(self.seed);
        let lines = self.region_bytes / LINE;
        for _ in 0..self.accesses {
            w.write(&Event::Compute(self.work))?;
            let addr = ARRAY_BASE + rng.below(lines) * LINE;
            if rng.below(100) < self.write_percent {
                w.write(&Event::Store(addr))?;
            } else {
                w.write(&Event::Load(addr))?;
            }
        }
        w.write(&Event::Exit)?;
        w.finish()
    }
}
