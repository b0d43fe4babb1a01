//! One cache array: set-associative, write-back, write-allocate, LRU replacement, holding real
//! data (so copies through it move bytes), with any power-of-two line size. It answers lookups
//! and applies fills, and offers the operations a memory controller needs for bulk-operation
//! coherence: write back a dirty line, invalidate a line, insert a line with given contents.
//! MSHRs and write-back buffers belong to the cache level around it (`level`); each line
//! remembers why it was last written (`Origin`) so its write-back is booked by cause.
//!
//! Each line also keeps a valid bit per sector (`set_sector_bytes`; one sector, the whole
//! line, unless set). Every fill and insert makes a line wholly valid; only a copy engine's
//! write of a block smaller than the line into a line the array lacks
//! (`copy_engine.partial_line = "sector"`) puts in a partially valid line, whose invalid
//! sectors hold no data: a lookup needing them misses, a write-back writes only the valid
//! ones. Each array also notes which regions of 64 lines any line has entered, so that
//! dropping a page none of whose lines it can hold (`invalidate_lines`) costs one test.

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
    /// Its valid sectors (bit i: bytes [i x sector, (i + 1) x sector)); only these are data.
    pub valid: Sectors,
}

/// Valid bits of one line's sectors: a line holds at most `MAX_LINE` / 8 = 32 sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sectors {
    pub mask: u32,
    /// Bytes per sector.
    pub bytes: u16,
    /// Sectors per line.
    pub count: u8,
}

impl Sectors {
    /// Every sector of the line is valid.
    pub fn is_whole(&self) -> bool {
        self.mask == full_mask(self.count as usize)
    }

    /// Whether sector `i` is valid.
    pub fn has(&self, i: usize) -> bool {
        self.mask >> i & 1 == 1
    }

    /// Bytes of the valid sectors.
    pub fn valid_bytes(&self) -> u64 {
        self.mask.count_ones() as u64 * self.bytes as u64
    }

    /// The byte ranges of the line's valid sectors, adjacent ones joined.
    pub fn runs(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let (n, s) = (self.count as usize, self.bytes as usize);
        let mut i = 0;
        std::iter::from_fn(move || {
            while i < n && !self.has(i) {
                i += 1;
            }
            if i == n {
                return None;
            }
            let start = i;
            while i < n && self.has(i) {
                i += 1;
            }
            Some(start * s..i * s)
        })
    }
}

/// What the bytes of a new line's invalid sectors are set to: no data, and not zero, so
/// that a read or write-back of them by mistake shows in the bytes (memory is mostly zero).
pub const INVALID_FILL: u8 = 0xdb;

/// The mask with the low `n` bits set.
fn full_mask(n: usize) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// Counters of one cache array.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArrayCounts {
    pub hits: u64,
    pub misses: u64,
    pub writebacks: u64,
    pub invalidations: u64,
    pub inserts: u64,
    pub sector_misses: u64,
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
    /// Valid sectors per way (meaningful while the way holds a line).
    valid: Vec<u32>,
    sector_bytes: usize,
    /// The mask of a wholly valid line.
    full: u32,
    clock: u64,
    /// Lines [start, end) that replacement passes over while others remain in their set
    /// (a page CPM migrates, pinned in the last level; empty: none).
    pinned: (u64, u64),
    /// One bit per region of `1 << REGION_SHIFT` lines: set when a line of the region enters
    /// a way, cleared when `invalidate_lines` empties the whole region. A clear bit means no
    /// way holds a line of the region, so dropping a page never seen here (a resident page's
    /// first touch, a fresh frame's hand-over) costs one test instead of a tag search per
    /// line; a set bit only means one may (lines leave by eviction without clearing it).
    regions: Vec<u64>,
    pub stats: ArrayCounts,
}

const EMPTY: u64 = u64::MAX;
/// Lines per region of `Cache::regions` (64: a 4 KiB page of 64-byte lines).
const REGION_SHIFT: u32 = 6;

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
            valid: vec![1; n],
            sector_bytes: line as usize,
            full: 1,
            clock: 0,
            pinned: (0, 0),
            regions: Vec::new(),
            stats: ArrayCounts::default(),
        })
    }

    pub fn line_bytes(&self) -> usize {
        self.line_bytes
    }

    /// Keeps valid bits per `bytes`-byte sector of each line (a power of two dividing the
    /// line, at most 32 per line; anything else keeps one sector per line). Set before use.
    pub fn set_sector_bytes(&mut self, bytes: usize) {
        let ok =
            bytes.is_power_of_two() && bytes <= self.line_bytes && self.line_bytes / bytes <= 32;
        self.sector_bytes = if ok { bytes } else { self.line_bytes };
        self.full = full_mask(self.line_bytes / self.sector_bytes);
        self.valid.fill(self.full);
    }

    pub fn sector_bytes(&self) -> usize {
        self.sector_bytes
    }

    /// The sectors bytes [offset, offset + len) of a line touch.
    pub fn sectors_of(&self, offset: usize, len: usize) -> u32 {
        if len == 0 {
            return 0;
        }
        let (a, b) = (
            offset / self.sector_bytes,
            (offset + len - 1) / self.sector_bytes,
        );
        full_mask(b + 1) & !full_mask(a)
    }

    /// The valid sectors of the line in `way`.
    pub fn sectors(&self, way: usize) -> Sectors {
        Sectors {
            mask: self.valid[way],
            bytes: self.sector_bytes as u16,
            count: (self.line_bytes / self.sector_bytes) as u8,
        }
    }

    /// Whether the line in `way` is valid in every sector.
    pub fn is_whole(&self, way: usize) -> bool {
        self.valid[way] == self.full
    }

    /// Whether bytes [offset, offset + len) of the line in `way` are valid.
    pub fn holds(&self, way: usize, offset: usize, len: usize) -> bool {
        let valid = self.valid[way];
        valid == self.full || {
            let m = self.sectors_of(offset, len);
            valid & m == m
        }
    }

    /// The way holding `line` with bytes [offset, offset + len) valid, without touching LRU
    /// state.
    pub fn probe_bytes(&self, line: u64, offset: usize, len: usize) -> Option<usize> {
        self.probe(line).filter(|&w| self.holds(w, offset, len))
    }

    /// A demand access needing bytes [offset, offset + len) of `line`: the way on a hit (now
    /// most recently used); the line there with a needed sector invalid is a miss, counted
    /// also as a sector miss (the line stays, most recently used).
    pub fn access_bytes(&mut self, line: u64, offset: usize, len: usize) -> Option<usize> {
        match self.probe(line) {
            Some(w) if !self.holds(w, offset, len) => {
                self.clock += 1;
                self.last_use[w] = self.clock;
                self.stats.misses += 1;
                self.stats.sector_misses += 1;
                None
            }
            way => self.access_found(way),
        }
    }

    /// Counts a sector miss of a lookup that counts no access (a copy engine's source read).
    pub fn count_sector_miss(&mut self) {
        self.stats.sector_misses += 1;
    }

    /// Fills the invalid sectors of the line in `way` from `below` (the whole line as the
    /// levels below hold it); the valid ones, newer, stay. The line is wholly valid after.
    pub fn merge(&mut self, way: usize, below: &[u8]) {
        let s = self.sector_bytes;
        let at = way * self.line_bytes;
        for i in 0..self.line_bytes / s {
            if self.valid[way] >> i & 1 == 0 {
                self.data[at + i * s..at + (i + 1) * s].copy_from_slice(&below[i * s..(i + 1) * s]);
            }
        }
        self.valid[way] = self.full;
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
            .min_by_key(|&i| self.victim_key(i))
            .is_some_and(|i| self.dirty[i])
    }

    /// Replacement order of way `i`: unpinned lines first, then least recently used.
    #[inline]
    fn victim_key(&self, i: usize) -> (bool, u64) {
        let t = self.tags[i];
        (t >= self.pinned.0 && t < self.pinned.1, self.last_use[i])
    }

    /// Pins lines [start, end): replacement evicts them only from a set holding nothing
    /// else (CPM: a migrating page's lines stay in the last level). One range at a time;
    /// `unpin` ends it.
    pub fn pin(&mut self, start: u64, end: u64) {
        self.pinned = (start, end);
    }

    pub fn unpin(&mut self) {
        self.pinned = (0, 0);
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

    /// The sectors it covers become valid (a write into an invalid sector covers all of it:
    /// writes below the first level are of whole first-level lines).
    pub fn write(&mut self, way: usize, offset: usize, bytes: &[u8], origin: Origin) {
        let at = way * self.line_bytes + offset;
        self.data[at..at + bytes.len()].copy_from_slice(bytes);
        self.dirty[way] = true;
        self.origin[way] = origin;
        if self.valid[way] != self.full {
            let s = self.sector_bytes;
            debug_assert!(
                self.holds(way, offset, bytes.len()) || (offset % s == 0 && bytes.len() % s == 0),
                "a write into an invalid sector covers it"
            );
            self.valid[way] |= self.sectors_of(offset, bytes.len());
        }
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
        self.insert_sectors(line, data, self.full, dirty, origin)
    }

    /// `insert` of a line whose sectors in `valid` only are data: a new line is valid in
    /// those; a line present takes those sectors' bytes and keeps its other valid ones.
    pub fn insert_sectors(
        &mut self,
        line: u64,
        data: &[u8],
        valid: u32,
        dirty: bool,
        origin: Origin,
    ) -> (usize, Option<Evicted>) {
        self.clock += 1;
        self.stats.inserts += 1;
        let way = self.way_for(line);
        let evicted = self.push_out(way, line);
        let present = self.tags[way] == line;
        let keep_dirty = present && self.dirty[way];
        self.tags[way] = line;
        self.mark_region(line);
        let lb = self.line_bytes;
        if valid == self.full {
            self.data[way * lb..(way + 1) * lb].copy_from_slice(data);
            self.valid[way] = self.full;
        } else {
            let s = self.sector_bytes;
            for i in 0..lb / s {
                let at = way * lb + i * s;
                if valid >> i & 1 == 1 {
                    self.data[at..at + s].copy_from_slice(&data[i * s..(i + 1) * s]);
                } else if !present {
                    self.data[at..at + s].fill(INVALID_FILL);
                }
            }
            self.valid[way] = if present {
                self.valid[way] | valid
            } else {
                valid
            };
        }
        self.dirty[way] = dirty || keep_dirty;
        self.origin[way] = origin;
        self.last_use[way] = self.clock;
        (way, evicted)
    }

    /// The way `line` goes into: its own if present, else the first empty way of its set,
    /// else the set's replacement victim (the first way of least `victim_key`), found in one
    /// pass over the set (the fill path's hottest search in a 16-way last level).
    fn way_for(&self, line: u64) -> usize {
        let range = self.set_range(line);
        let mut empty = None;
        let mut victim = range.start;
        let mut least = self.victim_key(range.start);
        for i in range {
            let t = self.tags[i];
            if t == line {
                return i;
            }
            if t == EMPTY {
                empty.get_or_insert(i);
            } else if empty.is_none() {
                let key = self.victim_key(i);
                if key < least {
                    (victim, least) = (i, key);
                }
            }
        }
        empty.unwrap_or(victim)
    }

    /// The dirty line `way` holds, if it is not `line` (which is about to take the way):
    /// its contents, to be written back, counted as a write-back.
    fn push_out(&mut self, way: usize, line: u64) -> Option<Evicted> {
        let held = self.tags[way];
        if held == EMPTY || held == line || !self.dirty[way] {
            return None;
        }
        self.stats.writebacks += 1;
        Some(Evicted {
            line: held,
            data: LineBuf::from_slice(self.data(way)),
            origin: self.origin[way],
            valid: self.sectors(way),
        })
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
            valid: self.sectors(i),
        })
    }

    /// Empties the array, returning its dirty lines (to be written back).
    pub fn clear(&mut self) -> Vec<Evicted> {
        let mut dirty = Vec::new();
        for i in 0..self.tags.len() {
            if self.tags[i] != EMPTY && self.dirty[i] {
                dirty.push(Evicted {
                    line: self.tags[i],
                    data: LineBuf::from_slice(self.data(i)),
                    origin: self.origin[i],
                    valid: self.sectors(i),
                });
            }
            self.tags[i] = EMPTY;
            self.dirty[i] = false;
        }
        self.regions.clear();
        dirty
    }

    /// Renames the lines of [start, end) to [to, to + (end - start)), keeping their bytes,
    /// valid sectors, dirty state and origin (`hybrid.remap_lines = "retag"`: a migrated
    /// page's lines follow it to its new frame, in whichever set that is). All are taken out
    /// first, so no line of the range can be pushed out under its old name; each then goes
    /// into its new set as a fill would, least recently used first (so they keep their order
    /// and become the most recently used), over a copy of the new line already there (stale:
    /// dropped) or else an empty way or the set's least recently used line. Counts no
    /// access, insert or invalidation. Returns the lines moved and the dirty lines pushed
    /// out, to be written back.
    pub fn retag(&mut self, start: u64, end: u64, to: u64) -> (u64, Vec<Evicted>) {
        let mut taken = Vec::new();
        for line in start..end {
            if let Some(w) = self.probe(line) {
                taken.push((self.last_use[w], line, w));
            }
        }
        taken.sort_unstable();
        let lb = self.line_bytes;
        let mut moved = Vec::with_capacity(taken.len());
        for &(_, line, w) in &taken {
            let data = LineBuf::from_slice(self.data(w));
            moved.push((line, data, self.valid[w], self.dirty[w], self.origin[w]));
            self.tags[w] = EMPTY;
            self.dirty[w] = false;
        }
        let mut evicted = Vec::new();
        for (line, data, valid, dirty, origin) in moved {
            let new = to + (line - start);
            let way = self.way_for(new);
            evicted.extend(self.push_out(way, new));
            self.tags[way] = new;
            self.mark_region(new);
            self.data[way * lb..(way + 1) * lb].copy_from_slice(data.as_slice());
            self.valid[way] = valid;
            self.dirty[way] = dirty;
            self.origin[way] = origin;
            self.clock += 1;
            self.last_use[way] = self.clock;
        }
        (taken.len() as u64, evicted)
    }

    /// Notes that a line of `line`'s region entered a way (`regions`).
    #[inline]
    fn mark_region(&mut self, line: u64) {
        let region = (line >> REGION_SHIFT) as usize;
        let word = region / 64;
        if word >= self.regions.len() {
            self.regions.resize(word + 1, 0);
        }
        self.regions[word] |= 1 << (region % 64);
    }

    /// Whether a way may hold a line of `region` (false: surely none does).
    #[inline]
    fn region_may_hold(&self, region: u64) -> bool {
        self.regions
            .get((region / 64) as usize)
            .is_some_and(|w| (w >> (region % 64)) & 1 == 1)
    }

    /// Drops every line of [start, end), as `invalidate` on each would; returns how many
    /// were present. A region no line of which entered since it was last emptied is passed
    /// over without a search (`regions`).
    pub fn invalidate_lines(&mut self, start: u64, end: u64) -> u64 {
        let mut dropped = 0;
        let mut line = start;
        while line < end {
            let region = line >> REGION_SHIFT;
            let region_start = region << REGION_SHIFT;
            let region_end = (region_start + (1 << REGION_SHIFT)).min(end);
            if self.region_may_hold(region) {
                for l in line..region_end {
                    dropped += self.invalidate(l) as u64;
                }
                if line == region_start && region_end == region_start + (1 << REGION_SHIFT) {
                    // The whole region is empty now.
                    self.regions[(region / 64) as usize] &= !(1 << (region % 64));
                }
            }
            line = region_end;
        }
        dropped
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

    /// Why the line in `way` was last written or brought in.
    pub fn origin(&self, way: usize) -> Origin {
        self.origin[way]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_lines_are_passed_over_while_their_set_has_others() {
        // 2 sets x 2 ways; line 2 pinned.
        let mut c = Cache::new(4 * 64, 2, 64).unwrap();
        let d = [7u8; 64];
        c.pin(2, 3);
        c.insert(2, &d, true, Origin::Program);
        c.insert(0, &d, false, Origin::Program);
        // 2 is the least recently used, yet 0 goes.
        assert!(!c.victim_is_dirty(4));
        c.insert(4, &d, false, Origin::Program);
        assert!(c.probe(2).is_some() && c.probe(0).is_none());
        c.unpin();
        assert!(c.victim_is_dirty(6));
        let (_, ev) = c.insert(6, &d, false, Origin::Program);
        assert_eq!(ev.map(|e| e.line), Some(2));
    }

    #[test]
    fn invalidating_a_range_drops_exactly_the_lines_a_search_per_line_would() {
        // 8 sets x 2 ways; regions of 64 lines.
        let mut c = Cache::new(16 * 64, 2, 64).unwrap();
        let d = [7u8; 64];
        for line in [3, 10, 70, 200] {
            c.insert(line, &d, false, Origin::Program);
        }
        // A region never entered is passed over; one entered is searched.
        assert_eq!(c.invalidate_lines(128, 192), 0);
        assert_eq!(c.invalidate_lines(64, 128), 1);
        assert!(c.probe(70).is_none() && c.probe(200).is_some());
        // Part of a region: the rest of it stays searchable.
        assert_eq!(c.invalidate_lines(0, 5), 1);
        assert!(c.probe(10).is_some());
        assert_eq!(c.invalidate_lines(0, 64), 1);
        assert!(c.probe(10).is_none());
        // An emptied region entered again is searched again.
        c.insert(12, &d, false, Origin::Program);
        assert_eq!(c.invalidate_lines(0, 64), 1);
        // A line renamed into a region marks it too.
        let (moved, _) = c.retag(200, 201, 300);
        assert_eq!(moved, 1);
        assert_eq!(c.invalidate_lines(256, 320), 1);
        assert_eq!(c.stats.invalidations, 5);
        // A range across regions, as one call.
        for line in [60, 63, 64, 66] {
            c.insert(line, &d, false, Origin::Program);
        }
        assert_eq!(c.invalidate_lines(62, 66), 2);
        assert!(c.probe(60).is_some() && c.probe(66).is_some());
    }

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
    fn retag_moves_lines_with_their_state_to_their_new_sets() {
        // 2 sets x 2 ways (set = line & 1).
        let mut c = Cache::new(4 * 64, 2, 64).unwrap();
        let (w0, _) = c.insert(0, &[1; 64], false, Origin::Program);
        c.write(w0, 0, &[9; 8], Origin::Copy);
        c.insert(2, &[2; 64], false, Origin::Program);
        c.insert(3, &[3; 64], true, Origin::Program);
        c.insert(7, &[4; 64], false, Origin::Program);
        let before = c.stats.clone();
        // Lines 0 and 2 (set 0) move to 9 and 11 (set 1, full).
        let (moved, evicted) = c.retag(0, 3, 9);
        assert_eq!(moved, 2);
        assert_eq!(
            (c.stats.inserts, c.stats.invalidations),
            (before.inserts, before.invalidations),
            "a rename is no insert or invalidation"
        );
        assert!(c.probe(0).is_none() && c.probe(2).is_none());
        // Line 0, least recently used, goes first, over set 1's least recently used line 3
        // (dirty: written back); line 2 then pushes out 7 (clean: nothing to write), now
        // less recently used than the moved line 9.
        assert_eq!(evicted.iter().map(|e| e.line).collect::<Vec<_>>(), [3]);
        let w9 = c.probe(9).expect("moved");
        assert!(c.is_dirty(w9) && c.origin[w9] == Origin::Copy);
        assert_eq!(&c.data(w9)[..9], &[9, 9, 9, 9, 9, 9, 9, 9, 1]);
        let w11 = c.probe(11).expect("moved");
        assert!(!c.is_dirty(w11) && c.data(w11) == [2; 64]);
        assert!(c.probe(7).is_none());
        // A stale copy of a new line is replaced, not written back.
        let mut c = Cache::new(4 * 64, 2, 64).unwrap();
        c.insert(0, &[1; 64], false, Origin::Program);
        c.insert(4, &[7; 64], true, Origin::Program);
        let (moved, evicted) = c.retag(0, 1, 4);
        assert_eq!((moved, evicted.len()), (1, 0));
        assert_eq!(c.data(c.probe(4).unwrap()), [1; 64]);
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

    #[test]
    fn a_partially_valid_line_holds_its_valid_sectors_only_until_merged() {
        // 64-byte lines in 32-byte sectors.
        let mut c = Cache::new(4 * 64, 2, 64).unwrap();
        c.set_sector_bytes(32);
        assert_eq!(
            (
                c.sectors_of(0, 64),
                c.sectors_of(32, 32),
                c.sectors_of(31, 2)
            ),
            (3, 2, 3)
        );
        // A normal insert is wholly valid.
        let (way, _) = c.insert(0, &[1; 64], false, Origin::Program);
        assert!(c.is_whole(way) && c.holds(way, 0, 64));
        // The second half alone, dirty: only it is valid, the first half is a sector miss.
        let mut half = [0u8; 64];
        half[32..].fill(9);
        let (way, _) = c.insert_sectors(2, &half, 0b10, true, Origin::Copy);
        assert_eq!(c.sectors(way).mask, 0b10);
        assert_eq!(&c.data(way)[..32], &[INVALID_FILL; 32], "no data");
        assert!(c.probe_bytes(2, 32, 32).is_some() && c.probe_bytes(2, 0, 32).is_none());
        assert!(c.access_bytes(2, 0, 32).is_none());
        assert_eq!((c.stats.misses, c.stats.sector_misses), (1, 1));
        // Its write-back carries the mask: 32 valid bytes in one run.
        let ev = c.write_back(2).unwrap();
        assert_eq!(ev.valid.runs().collect::<Vec<_>>(), vec![32..64]);
        assert_eq!(ev.valid.valid_bytes(), 32);
        // Merging the line from below fills only the invalid half.
        c.merge(way, &[5; 64]);
        assert!(c.is_whole(way));
        assert_eq!(&c.data(way)[..32], &[5; 32]);
        assert_eq!(&c.data(way)[32..], &[9; 32]);
        // A write of a whole sector makes it valid.
        let (way, _) = c.insert_sectors(4, &[0; 64], 0b01, true, Origin::Copy);
        c.write(way, 32, &[3; 32], Origin::Program);
        assert!(c.is_whole(way));
        // Without sectors set, a line is one sector.
        let d = Cache::new(4 * 64, 2, 64).unwrap();
        assert_eq!(d.sectors_of(0, 8), 1);
    }
}
