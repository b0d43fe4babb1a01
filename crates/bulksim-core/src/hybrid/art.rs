//! The Access Redirection Table (ART, Table I; issue 17 items 6 and 9): one entry per
//! migrating page in a set-associative table indexed by the entry's key, the *home* page
//! the LLC addresses (the PCM page while it is promoted, the DRAM page of a DRAM-homed page
//! being demoted, and still the PCM page after a partial demotion flips an entry). An entry
//! holds where the page's blocks come from and go to, which way they move, and one bit per
//! 64-B block saying whether that block is already at the destination. The table owns the
//! entries, their replacement-free allocation (a full set refuses an insert; the caller
//! skips the promotion or lets the demotion wait), the flip of item 9 and the counters
//! energy is charged from. What an access does with an entry is `redirect`'s.

use super::{block_bit, Device, Frame, BLOCKS_PER_PAGE};
use crate::error::{config_err, Result};
use crate::stat_struct::stat_struct;

stat_struct! {
    /// What the ART did. Lookups, inserts, bit updates and flips are table accesses that
    /// energy charges (bulksim's choice: a removal only clears the valid bit).
    pub struct ArtStats {
        pub lookups: u64 = sum("accesses", "lookups by key (one per LLC miss and write-back under the CM variants)"),
        pub inserts: u64 = sum("entries", "entries inserted (migrations started)"),
        pub inserts_refused: u64 = sum("inserts", "inserts refused because the key's set was full"),
        pub bit_updates: u64 = sum("accesses", "copied bits changed from 0 to 1"),
        pub flips: u64 = sum("entries", "promoting entries turned into partial demotions"),
        pub removals: u64 = sum("entries", "entries freed (migrations completed)"),
        pub peak_entries: u64 = max("entries", "most valid entries at once"),
    }
}

/// Which way an entry's blocks move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// PCM -> DRAM: `src` is a PCM frame, `dest` a DRAM frame.
    Promoting,
    /// DRAM -> PCM: `src` is a DRAM frame, `dest` a PCM frame.
    Demoting,
}

impl Direction {
    /// The devices of (src, dest).
    pub fn devices(self) -> (Device, Device) {
        match self {
            Direction::Promoting => (Device::Pcm, Device::Dram),
            Direction::Demoting => (Device::Dram, Device::Pcm),
        }
    }
}

/// One valid entry (the valid bit is the slot being occupied).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArtEntry {
    /// Home page: the physical page the LLC addresses for this page.
    pub key: u64,
    /// Page number of the frame blocks are copied from.
    pub src: u64,
    /// Page number of the frame blocks are copied to.
    pub dest: u64,
    pub direction: Direction,
    /// Bit b set: block b is at `dest` (copied there, or written there by a write-back).
    pub copied: u64,
}

impl ArtEntry {
    pub fn src_frame(&self) -> Frame {
        Frame {
            device: self.direction.devices().0,
            page: self.src,
        }
    }

    pub fn dest_frame(&self) -> Frame {
        Frame {
            device: self.direction.devices().1,
            page: self.dest,
        }
    }

    #[inline]
    pub fn is_copied(&self, block: u32) -> bool {
        self.copied & block_bit(block) != 0
    }

    /// Every block is at the destination: the migration can complete.
    pub fn is_complete(&self) -> bool {
        self.copied == u64::MAX
    }

    /// Blocks still to copy.
    pub fn remaining(&self) -> u32 {
        self.copied.count_zeros()
    }

    /// The lowest block not yet at the destination (the background copier's next), if any.
    pub fn next_uncopied(&self) -> Option<u32> {
        let b = self.copied.trailing_ones();
        (b < BLOCKS_PER_PAGE).then_some(b)
    }
}

/// A valid entry's place in the table; stays valid until the entry is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EntryId(u32);

/// Why an insert was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// Every way of the key's set is valid (counted in `inserts_refused`).
    SetFull,
    /// The key already has an entry (a caller's bug: a page migrates once at a time).
    AlreadyPresent,
}

/// `Art::keys` of an invalid slot (no page number reaches it: pages are addresses / 4 KB).
const NO_KEY: u64 = u64::MAX;

/// Counters of `Art::by_low_bits`: 8 per entry of Table I's 512-entry table, so that a
/// page with no entry shares its counter with a valid key about one time in eight.
const KEY_FILTER: usize = 4096;

pub struct Art {
    sets: u64,
    ways: usize,
    /// Slot = set x ways + way; None = invalid.
    slots: Vec<Option<ArtEntry>>,
    /// Each slot's key (`NO_KEY`: invalid), apart from the entries so that a lookup scans
    /// one set's 8-byte keys, not its whole entries.
    keys: Vec<u64>,
    /// Valid entries by the low bits of their key (`KEY_FILTER` counters): a lookup of a
    /// page with no entry, nearly every one, usually ends at a zero here. The router looks
    /// up every request waiting for a device once per device cycle, so this is hot.
    by_low_bits: Vec<u32>,
    valid: usize,
    pub stats: ArtStats,
}

impl Art {
    /// A table of `entries` in sets of `ways` (`hybrid.art_entries`, `hybrid.art_ways`).
    pub fn new(entries: u32, ways: u32) -> Result<Art> {
        if let Some(p) = super::config::table_problem("art", entries, ways) {
            return Err(config_err(p));
        }
        Ok(Art {
            sets: u64::from(entries / ways),
            ways: ways as usize,
            slots: vec![None; entries as usize],
            keys: vec![NO_KEY; entries as usize],
            by_low_bits: vec![0; KEY_FILTER],
            valid: 0,
            stats: ArtStats::default(),
        })
    }

    pub fn sets(&self) -> u64 {
        self.sets
    }

    pub fn ways(&self) -> usize {
        self.ways
    }

    /// The set of key page `key`.
    #[inline]
    pub fn set_of(&self, key: u64) -> usize {
        (key % self.sets) as usize
    }

    #[inline]
    fn set_slots(&self, key: u64) -> std::ops::Range<usize> {
        let base = self.set_of(key) * self.ways;
        base..base + self.ways
    }

    /// Valid entries.
    pub fn len(&self) -> usize {
        self.valid
    }

    pub fn is_empty(&self) -> bool {
        self.valid == 0
    }

    /// Invalid ways in `key`'s set (the OS's view when it plans; not a table access).
    pub fn free_ways(&self, key: u64) -> usize {
        self.slots[self.set_slots(key)]
            .iter()
            .filter(|s| s.is_none())
            .count()
    }

    /// Whether an insert of `key` would find an invalid way.
    pub fn has_room(&self, key: u64) -> bool {
        self.free_ways(key) > 0
    }

    /// Starts a migration: a valid entry for `key` with no block copied, in the set's
    /// lowest invalid way.
    pub fn insert(
        &mut self,
        key: u64,
        src: u64,
        dest: u64,
        direction: Direction,
    ) -> std::result::Result<EntryId, InsertError> {
        let mut free = None;
        for s in self.set_slots(key) {
            match &self.slots[s] {
                Some(e) if e.key == key => return Err(InsertError::AlreadyPresent),
                Some(_) => {}
                None => {
                    free.get_or_insert(s);
                }
            }
        }
        let Some(s) = free else {
            self.stats.inserts_refused += 1;
            return Err(InsertError::SetFull);
        };
        self.keys[s] = key;
        self.by_low_bits[key as usize % KEY_FILTER] += 1;
        self.slots[s] = Some(ArtEntry {
            key,
            src,
            dest,
            direction,
            copied: 0,
        });
        self.valid += 1;
        self.stats.inserts += 1;
        self.stats.peak_entries = self.stats.peak_entries.max(self.valid as u64);
        Ok(EntryId(s as u32))
    }

    /// The entry keyed `key`, if the page is migrating (one table access).
    #[inline]
    pub fn lookup(&mut self, key: u64) -> Option<EntryId> {
        self.stats.lookups += 1;
        self.find(key)
    }

    /// `lookup` without counting an access (for checks and tests).
    #[inline]
    pub fn find(&self, key: u64) -> Option<EntryId> {
        if self.by_low_bits[key as usize % KEY_FILTER] == 0 {
            return None;
        }
        let slots = self.set_slots(key);
        let base = slots.start;
        self.keys[slots]
            .iter()
            .position(|&k| k == key)
            .map(|w| EntryId((base + w) as u32))
    }

    /// The entry at `id`. Panics if it was removed: ids never outlive their entry.
    #[inline]
    pub fn entry(&self, id: EntryId) -> &ArtEntry {
        self.slots[id.0 as usize]
            .as_ref()
            .expect("ART entry id used after its entry was removed")
    }

    #[inline]
    fn entry_mut(&mut self, id: EntryId) -> &mut ArtEntry {
        self.slots[id.0 as usize]
            .as_mut()
            .expect("ART entry id used after its entry was removed")
    }

    /// Marks block `block` as at the destination; returns whether the bit was clear. Only
    /// a change is a table write (setting a set bit writes nothing, bulksim's choice).
    #[inline]
    pub fn set_bit(&mut self, id: EntryId, block: u32) -> bool {
        let e = self.entry_mut(id);
        let was_clear = e.copied & block_bit(block) == 0;
        e.copied |= block_bit(block);
        if was_clear {
            self.stats.bit_updates += 1;
        }
        was_clear
    }

    /// Whether every block of `id`'s page is at the destination.
    pub fn is_complete(&self, id: EntryId) -> bool {
        self.entry(id).is_complete()
    }

    /// Frees the entry (its migration completed) and returns it.
    pub fn remove(&mut self, id: EntryId) -> ArtEntry {
        let e = self.slots[id.0 as usize]
            .take()
            .expect("ART entry id used after its entry was removed");
        self.keys[id.0 as usize] = NO_KEY;
        self.by_low_bits[e.key as usize % KEY_FILTER] -= 1;
        self.valid -= 1;
        self.stats.removals += 1;
        e
    }

    /// Partial demotion (item 9): turns a promoting entry into a demotion of the same page
    /// back to its PCM home, in place. The key (the PCM home the LLC still addresses) stays;
    /// the DRAM frame becomes the source and the PCM home the destination; the bits are
    /// complemented, so the blocks never promoted (still current in PCM) count as already
    /// there and the promoted ones (bit now 0) are the ones to copy back. Returns false,
    /// changing nothing, if the entry is not promoting.
    pub fn flip(&mut self, id: EntryId) -> bool {
        let e = self.entry_mut(id);
        if e.direction != Direction::Promoting {
            return false;
        }
        *e = ArtEntry {
            key: e.key,
            src: e.dest,
            dest: e.src,
            direction: Direction::Demoting,
            copied: !e.copied,
        };
        self.stats.flips += 1;
        true
    }

    /// Every valid entry in slot order (deterministic: set, then way).
    pub fn entries(&self) -> impl Iterator<Item = (EntryId, &ArtEntry)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(s, e)| e.as_ref().map(|e| (EntryId(s as u32), e)))
    }

    /// Table accesses energy charges: lookups, inserts, bit updates and flips.
    pub fn charged_accesses(&self) -> u64 {
        let s = &self.stats;
        s.lookups + s.inserts + s.bit_updates + s.flips
    }

    /// A snapshot of the free ways per set, for the policy to reserve from while it plans.
    pub fn room(&self) -> ArtRoom {
        ArtRoom {
            sets: self.sets,
            free: (0..self.sets as usize)
                .map(|set| {
                    let base = set * self.ways;
                    self.slots[base..base + self.ways]
                        .iter()
                        .filter(|s| s.is_none())
                        .count() as u32
                })
                .collect(),
        }
    }
}

/// Free ART ways per set as the policy plans a period: each migration it picks reserves a
/// way of its key's set, so later picks see the ways earlier ones will take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtRoom {
    sets: u64,
    free: Vec<u32>,
}

impl ArtRoom {
    /// Takes a way of `key`'s set; false (and nothing taken) when the set has none left.
    pub fn reserve(&mut self, key: u64) -> bool {
        let f = &mut self.free[(key % self.sets) as usize];
        if *f == 0 {
            return false;
        }
        *f -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{Demoting, Promoting};

    /// 2 sets of 2 ways: even keys share set 0.
    fn small() -> Art {
        Art::new(4, 2).unwrap()
    }

    #[test]
    fn default_geometry_has_16_sets_of_32_ways() {
        let a = Art::new(512, 32).unwrap();
        assert_eq!((a.sets(), a.ways()), (16, 32));
        assert!(Art::new(500, 32)
            .err()
            .unwrap()
            .to_string()
            .contains("hybrid.art_entries"));
    }

    #[test]
    fn insert_then_lookup_finds_the_entry_with_no_block_copied() {
        let mut a = small();
        let id = a.insert(10, 10, 3, Promoting).unwrap();
        assert_eq!(a.lookup(10), Some(id));
        assert_eq!(a.lookup(12), None);
        let e = *a.entry(id);
        assert_eq!((e.key, e.copied, e.remaining()), (10, 0, 64));
        assert_eq!(e.src_frame(), Frame::pcm(10));
        assert_eq!(e.dest_frame(), Frame::dram(3));
        assert_eq!(e.next_uncopied(), Some(0));
        assert_eq!((a.stats.lookups, a.stats.inserts, a.len()), (2, 1, 1));
    }

    #[test]
    fn a_full_set_refuses_inserts_and_counts_them() {
        let mut a = small();
        let first = a.insert(0, 0, 100, Promoting).unwrap();
        a.insert(2, 2, 101, Promoting).unwrap();
        assert!(!a.has_room(4));
        assert_eq!(a.insert(4, 4, 102, Promoting), Err(InsertError::SetFull));
        assert_eq!(a.stats.inserts_refused, 1);
        // The other set is unaffected.
        assert!(a.has_room(5));
        a.insert(5, 200, 5, Demoting).unwrap();
        // Freeing a way of set 0 lets the refused key in.
        a.remove(first);
        assert_eq!(a.lookup(0), None);
        assert!(a.insert(4, 4, 102, Promoting).is_ok());
        assert_eq!((a.len(), a.stats.removals, a.stats.peak_entries), (3, 1, 3));
    }

    #[test]
    fn the_default_table_refuses_a_33rd_key_of_one_set() {
        let mut a = Art::new(512, 32).unwrap();
        // Keys 0, 16, 32, ... share set 0.
        for i in 0..32 {
            assert!(a.insert(16 * i, 16 * i, i, Promoting).is_ok());
        }
        assert_eq!(
            a.insert(16 * 32, 0, 0, Promoting),
            Err(InsertError::SetFull)
        );
        assert!(a.has_room(1));
        assert_eq!(a.stats.inserts_refused, 1);
    }

    #[test]
    fn keys_sharing_low_bits_are_found_and_forgotten_apart() {
        // 7 and 7 + KEY_FILTER share a filter counter and (2 sets) a set.
        let mut a = small();
        let (k1, k2) = (7, 7 + KEY_FILTER as u64);
        let id1 = a.insert(k1, k1, 1, Promoting).unwrap();
        assert_eq!(a.find(k2), None);
        let id2 = a.insert(k2, k2, 2, Promoting).unwrap();
        assert_eq!((a.find(k1), a.find(k2)), (Some(id1), Some(id2)));
        a.remove(id1);
        assert_eq!((a.find(k1), a.find(k2)), (None, Some(id2)));
        a.remove(id2);
        assert_eq!((a.find(k1), a.find(k2)), (None, None));
        // The freed lowest way is taken again and found.
        assert_eq!(a.insert(k2, k2, 3, Promoting), Ok(id1));
        assert_eq!(a.find(k2), Some(id1));
    }

    #[test]
    fn a_key_has_at_most_one_entry() {
        let mut a = small();
        a.insert(7, 7, 1, Promoting).unwrap();
        assert_eq!(
            a.insert(7, 7, 2, Promoting),
            Err(InsertError::AlreadyPresent)
        );
        assert_eq!((a.len(), a.stats.inserts_refused), (1, 0));
    }

    #[test]
    fn bits_set_once_each_until_complete() {
        let mut a = small();
        let id = a.insert(1, 1, 9, Promoting).unwrap();
        assert!(a.set_bit(id, 0));
        assert!(!a.set_bit(id, 0));
        assert!(a.set_bit(id, 63));
        assert!(a.entry(id).is_copied(63) && !a.entry(id).is_copied(1));
        assert_eq!(a.entry(id).next_uncopied(), Some(1));
        assert_eq!(a.stats.bit_updates, 2);
        for b in 0..64 {
            a.set_bit(id, b);
        }
        assert!(a.is_complete(id));
        assert_eq!(a.entry(id).next_uncopied(), None);
        assert_eq!(a.stats.bit_updates, 64);
        let e = a.remove(id);
        assert!(e.is_complete());
        assert!(a.is_empty() && a.find(1).is_none());
    }

    #[test]
    fn flip_keeps_the_pcm_key_and_complements_the_bits() {
        let mut a = small();
        // PCM home page 40 promoting to DRAM frame 7; blocks 0 and 5 promoted.
        let id = a.insert(40, 40, 7, Promoting).unwrap();
        a.set_bit(id, 0);
        a.set_bit(id, 5);
        assert!(a.flip(id));
        let e = *a.entry(id);
        assert_eq!(e.key, 40);
        assert_eq!(e.direction, Demoting);
        assert_eq!(e.src_frame(), Frame::dram(7));
        assert_eq!(e.dest_frame(), Frame::pcm(40));
        assert_eq!(e.copied, !((1 << 0) | (1 << 5)));
        // Exactly the promoted blocks are left to copy back, lowest first.
        assert_eq!(e.remaining(), 2);
        assert_eq!(e.next_uncopied(), Some(0));
        // Still found under the PCM key, and a demoting entry does not flip again.
        assert_eq!(a.find(40), Some(id));
        assert!(!a.flip(id));
        assert_eq!(a.stats.flips, 1);
        assert_eq!(a.charged_accesses(), 1 + 2 + 1);
    }

    #[test]
    fn flipping_an_untouched_promotion_leaves_nothing_to_copy() {
        let mut a = small();
        let id = a.insert(3, 3, 8, Promoting).unwrap();
        a.flip(id);
        assert!(a.is_complete(id));
    }

    #[test]
    fn entries_iterate_in_slot_order() {
        let mut a = small();
        a.insert(3, 3, 1, Promoting).unwrap();
        a.insert(2, 2, 2, Promoting).unwrap();
        a.insert(4, 4, 3, Promoting).unwrap();
        let keys: Vec<u64> = a.entries().map(|(_, e)| e.key).collect();
        assert_eq!(keys, vec![2, 4, 3]);
    }

    #[test]
    fn room_reservations_follow_the_sets() {
        let mut a = small();
        a.insert(0, 0, 1, Promoting).unwrap();
        let mut room = a.room();
        assert!(room.reserve(2));
        assert!(!room.reserve(4));
        assert!(room.reserve(1) && room.reserve(3) && !room.reserve(5));
        // The snapshot leaves the table itself untouched.
        assert!(a.has_room(2));
    }
}
