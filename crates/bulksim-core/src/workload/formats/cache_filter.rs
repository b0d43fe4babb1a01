//! A functional cache hierarchy for `convert`: turns an instruction-level stream's line
//! accesses into the memory requests a hierarchy of the configured shape would send below
//! it — a read per access that misses every level, a write-back per dirty line pushed out of
//! the last level. Write-back, write-allocate, LRU, non-inclusive (as `[[cache.level]]`
//! describes): a dirty line evicted from one level is written into the next (allocated there
//! if absent). No timing, no sharing, no OS: addresses are the trace's own (virtual).

use crate::cache::array::{Cache, Origin};
use crate::config::CacheLevelConfig;
use crate::error::{Error, Result};

/// The line size of memory requests (the last level's line, one DRAM burst).
pub const MEMORY_LINE: u64 = 64;

pub struct CacheFilter {
    levels: Vec<Cache>,
    line_bytes: Vec<u64>,
    /// Contents written into lines: the filter keeps no data that matters.
    zeros: Vec<u8>,
}

/// One memory request a filtered access sends below the caches (a line's byte address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryRequest {
    Read(u64),
    WriteBack(u64),
}

impl CacheFilter {
    /// A hierarchy of `levels` (from the core down); each level's shape is checked as the
    /// config's validation does.
    pub fn new(levels: &[CacheLevelConfig]) -> Result<CacheFilter> {
        if levels.is_empty() {
            return Err(Error::Config(
                "cache.level: no levels; a cache filter needs at least one [[cache.level]]".into(),
            ));
        }
        let mut arrays = Vec::new();
        for (i, l) in levels.iter().enumerate() {
            let array = Cache::new(l.size_kb as u64 * 1024, l.ways, l.line_bytes)
                .map_err(|e| Error::Config(format!("cache.level.{i}: {e}")))?;
            arrays.push(array);
        }
        let line_bytes: Vec<u64> = levels.iter().map(|l| l.line_bytes as u64).collect();
        if line_bytes.last() != Some(&MEMORY_LINE) {
            return Err(Error::Config(format!(
                "cache.level.{}.line_bytes: the last level's lines are what memory transfers \
                 ({MEMORY_LINE} bytes)",
                levels.len() - 1
            )));
        }
        let widest = *line_bytes.iter().max().unwrap_or(&MEMORY_LINE) as usize;
        Ok(CacheFilter {
            levels: arrays,
            line_bytes,
            zeros: vec![0; widest],
        })
    }

    /// One access to the line holding `addr` (a store dirties it in the first level); the
    /// memory requests it causes, in order, are appended to `out`.
    pub fn access(&mut self, addr: u64, store: bool, out: &mut Vec<MemoryRequest>) {
        let hit = (0..self.levels.len()).find(|&i| {
            let line = addr / self.line_bytes[i];
            self.levels[i].access(line).is_some()
        });
        let filled_from = match hit {
            Some(i) => i,
            None => {
                out.push(MemoryRequest::Read(addr / MEMORY_LINE * MEMORY_LINE));
                self.levels.len()
            }
        };
        // Fill every level above the one that had it, the lowest first.
        for level in (0..filled_from).rev() {
            self.fill(level, addr, level == 0 && store, out);
        }
        if store && hit == Some(0) {
            let way = self.levels[0].probe(addr / self.line_bytes[0]);
            if let Some(way) = way {
                self.levels[0].write(way, 0, &[], Origin::Program);
            }
        }
    }

    /// Puts the line holding `addr` into `level`, dirty or clean; a dirty line it pushes out
    /// is written into the level below (or to memory from the last level).
    fn fill(&mut self, level: usize, addr: u64, dirty: bool, out: &mut Vec<MemoryRequest>) {
        let lb = self.line_bytes[level];
        let (_, evicted) = self.levels[level].insert(
            addr / lb,
            &self.zeros[..lb as usize],
            dirty,
            Origin::Program,
        );
        if let Some(e) = evicted {
            self.write_back(level + 1, e.line * lb, out);
        }
    }

    /// A dirty line at byte address `addr` written back into `level` (memory below the last).
    fn write_back(&mut self, level: usize, addr: u64, out: &mut Vec<MemoryRequest>) {
        if level == self.levels.len() {
            out.push(MemoryRequest::WriteBack(addr / MEMORY_LINE * MEMORY_LINE));
            return;
        }
        let line = addr / self.line_bytes[level];
        match self.levels[level].probe(line) {
            Some(way) => self.levels[level].write(way, 0, &[], Origin::Program),
            None => self.fill(level, addr, true, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(size_kb: u32, ways: u32) -> CacheLevelConfig {
        CacheLevelConfig {
            size_kb,
            ways,
            line_bytes: 64,
            ..CacheLevelConfig::default()
        }
    }

    /// One 1 KiB direct-mapped level (16 sets): lines 1 KiB apart conflict.
    #[test]
    fn misses_and_dirty_evictions_of_a_direct_mapped_cache() {
        let mut f = CacheFilter::new(&[level(1, 1)]).unwrap();
        let mut out = Vec::new();
        f.access(0x40, true, &mut out);
        f.access(0x48, false, &mut out);
        f.access(0x440, false, &mut out);
        f.access(0x40, false, &mut out);
        use MemoryRequest::*;
        assert_eq!(out, [Read(0x40), Read(0x440), WriteBack(0x40), Read(0x40)]);
    }

    /// Two levels: a dirty line evicted from the first is written into the second, and
    /// reaches memory only when the second evicts it.
    #[test]
    fn a_dirty_line_moves_down_before_it_reaches_memory() {
        let mut f = CacheFilter::new(&[level(1, 1), level(2, 1)]).unwrap();
        let mut out = Vec::new();
        use MemoryRequest::*;
        f.access(0x0, true, &mut out); // miss both; dirty in L1
        f.access(0x400, false, &mut out); // L1 set 0 conflict: 0x0 written into L2 (hit)
        assert_eq!(out, [Read(0x0), Read(0x400)]);
        f.access(0x800, false, &mut out); // L2 (32 sets): 0x800 evicts dirty 0x0 there
        assert_eq!(out[2..], [Read(0x800), WriteBack(0x0)]);
    }
}
