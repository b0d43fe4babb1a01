//! One cache array: set-associative, write-back, write-allocate, LRU replacement, holding real
//! data (so copies through it move bytes), with any power-of-two line size. It answers lookups
//! and applies fills, and offers the operations a memory controller needs for bulk-operation
//! coherence: write back a dirty line, invalidate a line, insert a line with given contents.
//! MSHRs and write-back buffers belong to the cache level around it (`level`); each line
//! remembers why it was last written (`Origin`) so its write-back is booked by cause.

pub use crate::port::Origin;

/// Largest line size a level may have (bytes).
pub const MAX_LINE: usize = 256;

/// One line's bytes, by value (no allocation per eviction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineBuf {
    len: u16,
    bytes: [u8; MAX_LINE],
}

impl LineBuf {
    pub fn from_slice(data: &[u8]) -> LineBuf {
        let mut bytes = [0; MAX_LINE];
        bytes[..data.len()].copy_from_slice(data);
        LineBuf {
            len: data.len() as u16,
            bytes,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// A dirty line pushed out (to be written back): line number in the array's line size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evicted {
    pub line: u64,
    pub data: LineBuf,
    pub origin: Origin,
}

/// Counters of one cache array.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArrayCounts {
    pub hits: u64,
    pub misses: u64,
    pub writebacks: u64,
    pub invalidations: u64,
    pub inserts: u64,
}

pub struct Cache {
    sets: u64,
    ways: usize,
    line_bytes: usize,
    /// Line number (byte address / line size) per way, `EMPTY` when invalid.
    tags: Vec<u64>,
    dirty: Vec<bool>,
    origin: Vec<Origin>,
    last_use: Vec<u64>,
    /// `line_bytes` per way, flat.
    data: Vec<u8>,
    clock: u64,
    pub stats: ArrayCounts,
}

const EMPTY: u64 = u64::MAX;

impl Cache {
    /// `bytes` total, `ways` per set, `line_bytes` per line; sets must come out a power of
    /// two.
    pub fn new(bytes: u64, ways: u32, line_bytes: u32) -> Result<Cache, String> {
        let line = line_bytes as u64;
        if !line.is_power_of_two() || line < 8 || line > MAX_LINE as u64 {
            return Err(format!(
                "line size {line_bytes} bytes: expected a power of two from 8 to {MAX_LINE}"
            ));
        }
        let lines = bytes / line;
        if ways == 0 || lines == 0 || lines % ways as u64 != 0 {
            return Err(format!(
                "{bytes} bytes do not make whole sets of {ways} ways of {line}-byte lines"
            ));
        }
        let sets = lines / ways as u64;
        if !sets.is_power_of_two() {
            return Err(format!("{sets} sets is not a power of two"));
        }
        let n = lines as usize;
        Ok(Cache {
            sets,
            ways: ways as usize,
            line_bytes: line as usize,
            tags: vec![EMPTY; n],
            dirty: vec![false; n],
            origin: vec![Origin::Program; n],
            last_use: vec![0; n],
            data: vec![0; n * line as usize],
            clock: 0,
            stats: ArrayCounts::default(),
        })
    }

    pub fn line_bytes(&self) -> usize {
        self.line_bytes
    }

    fn set_range(&self, line: u64) -> std::ops::Range<usize> {
        let set = (line & (self.sets - 1)) as usize;
        set * self.ways..(set + 1) * self.ways
    }

    /// Whether putting `line` (absent) in would push out a dirty line: its set has no free
    /// way and its least recently used line is dirty.
    pub fn victim_is_dirty(&self, line: u64) -> bool {
        let range = self.set_range(line);
        if range.clone().any(|i| self.tags[i] == EMPTY) {
            return false;
        }
        range
            .min_by_key(|&i| self.last_use[i])
            .is_some_and(|i| self.dirty[i])
    }

    /// The way holding `line`, without touching LRU state.
    pub fn probe(&self, line: u64) -> Option<usize> {
        self.set_range(line).find(|&i| self.tags[i] == line)
    }

    /// A demand access: the way on a hit (now most recently used); counts hit or miss.
    pub fn access(&mut self, line: u64) -> Option<usize> {
        let way = self.probe(line);
        self.access_found(way)
    }

    /// `access` for a line whose `probe` gave `way` (no second search of the set).
    pub fn access_found(&mut self, way: Option<usize>) -> Option<usize> {
        self.clock += 1;
        match way {
            Some(i) => {
                self.last_use[i] = self.clock;
                self.stats.hits += 1;
                Some(i)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    pub fn data(&self, way: usize) -> &[u8] {
        &self.data[way * self.line_bytes..(way + 1) * self.line_bytes]
    }

    /// Writes `bytes` at `offset` of the line in `way` and marks it dirty.
    /// Makes `way` the most recently used of its set without counting an access (a copy
    /// engine's read or write).
    pub fn touch(&mut self, way: usize) {
        self.clock += 1;
        self.last_use[way] = self.clock;
    }

    pub fn write(&mut self, way: usize, offset: usize, bytes: &[u8], origin: Origin) {
        let at = way * self.line_bytes + offset;
        self.data[at..at + bytes.len()].copy_from_slice(bytes);
        self.dirty[way] = true;
        self.origin[way] = origin;
    }

    /// Overwrites bytes of the line in `way` without touching its dirty state or origin
    /// (keeping a lower level's copy equal to what an upper level wrote to memory).
    pub fn patch(&mut self, way: usize, offset: usize, bytes: &[u8]) {
        let at = way * self.line_bytes + offset;
        self.data[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// Puts `line` in (replacing the least recently used way of its set, or updating it if
    /// present); returns the dirty line it pushed out, if any, and the way.
    pub fn insert(
        &mut self,
        line: u64,
        data: &[u8],
        dirty: bool,
        origin: Origin,
    ) -> (usize, Option<Evicted>) {
        self.clock += 1;
        self.stats.inserts += 1;
        let way = match self.probe(line) {
            Some(i) => i,
            None => {
                let range = self.set_range(line);
                range
                    .clone()
                    .find(|&i| self.tags[i] == EMPTY)
                    .unwrap_or_else(|| range.min_by_key(|&i| self.last_use[i]).expect("ways > 0"))
            }
        };
        let evicted = if self.tags[way] != EMPTY && self.tags[way] != line && self.dirty[way] {
            self.stats.writebacks += 1;
            Some(Evicted {
                line: self.tags[way],
                data: LineBuf::from_slice(self.data(way)),
                origin: self.origin[way],
            })
        } else {
            None
        };
        let keep_dirty = self.tags[way] == line && self.dirty[way];
        self.tags[way] = line;
        let lb = self.line_bytes;
        self.data[way * lb..(way + 1) * lb].copy_from_slice(data);
        self.dirty[way] = dirty || keep_dirty;
        self.origin[way] = origin;
        self.last_use[way] = self.clock;
        (way, evicted)
    }

    /// Cleans `line` if it is dirty, returning its contents to write back.
    pub fn write_back(&mut self, line: u64) -> Option<Evicted> {
        let i = self.probe(line)?;
        if !self.dirty[i] {
            return None;
        }
        self.dirty[i] = false;
        self.stats.writebacks += 1;
        Some(Evicted {
            line,
            data: LineBuf::from_slice(self.data(i)),
            origin: self.origin[i],
        })
    }

    /// Drops `line`; returns whether it was present.
    pub fn invalidate(&mut self, line: u64) -> bool {
        match self.probe(line) {
            Some(i) => {
                self.tags[i] = EMPTY;
                self.dirty[i] = false;
                self.stats.invalidations += 1;
                true
            }
            None => false,
        }
    }

    pub fn is_dirty(&self, way: usize) -> bool {
        self.dirty[way]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_writes_back_only_dirty_lines() {
        // 2 sets x 2 ways.
        let mut c = Cache::new(4 * 64, 2, 64).unwrap();
        let d = [7u8; 64];
        assert!(c.insert(0, &d, false, Origin::Program).1.is_none());
        assert!(c.insert(2, &d, true, Origin::Copy).1.is_none());
        assert!(c.access(0).is_some()); // 2 is now least recently used in set 0
        let (_, ev) = c.insert(4, &d, false, Origin::Program);
        assert_eq!(ev.map(|e| (e.line, e.origin)), Some((2, Origin::Copy)));
        let (_, ev) = c.insert(6, &d, false, Origin::Program);
        assert!(ev.is_none(), "line 0 was clean");
        assert!(c.probe(0).is_none() && c.probe(4).is_some() && c.probe(6).is_some());
        assert_eq!(
            c.insert(1, &d, false, Origin::Program).1,
            None,
            "set 1 is separate"
        );
    }

    #[test]
    fn coherence_operations() {
        let mut c = Cache::new(1024 * 64, 16, 64).unwrap();
        let (way, _) = c.insert(9, &[1; 64], false, Origin::Program);
        c.write(way, 8, &[5; 8], Origin::Program);
        let wb = c.write_back(9).unwrap();
        assert_eq!(&wb.data.as_slice()[8..16], &[5; 8]);
        assert!(c.write_back(9).is_none(), "clean now");
        assert!(c.invalidate(9) && !c.invalidate(9));
        assert!(c.access(9).is_none());
        assert_eq!((c.stats.hits, c.stats.misses), (0, 1));
        assert!(Cache::new(1000, 16, 64).is_err());
    }
}
