//! One process's page table: a radix tree over the 36-bit virtual page number (48-bit virtual
//! addresses, 4 KB pages), three directory levels and a leaf level of 512 entries each, like
//! x86-64's four-level table. Nodes live in two flat vectors and point at each other by
//! index, so a translation is four array loads and no hashing; copying a process is cloning
//! two vectors; walking it visits pages in ascending virtual page order, which is what makes
//! an exit free frames in the same order every run.

use super::allocator::PAGE;
use crate::request::VADDR_LIMIT;

const LEVEL_BITS: u32 = 9;
const FANOUT: usize = 1 << LEVEL_BITS;
const LEVELS: u32 = 4;
/// Virtual page number bits the table covers.
pub const VPN_BITS: u32 = LEVEL_BITS * LEVELS;
// The table covers exactly the virtual addresses the input formats accept.
const _: () = assert!(VADDR_LIMIT == PAGE << VPN_BITS);

/// A page-table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pte {
    pub frame: u32,
    pub writable: bool,
    /// The frame's global rank (0 unless the OS counts accesses by rank): in the entry's
    /// padding, so counting an access by rank costs no lookup.
    pub rank: u16,
}

const ABSENT: Pte = Pte {
    frame: u32::MAX,
    writable: false,
    rank: 0,
};

#[derive(Clone, Debug)]
pub struct PageTable {
    /// Directory nodes, the root first. An entry is its child's index + 1 (0: no child); a
    /// child of the last directory level is an index into `leaves`.
    dirs: Vec<[u32; FANOUT]>,
    leaves: Vec<[Pte; FANOUT]>,
    len: usize,
}

impl Default for PageTable {
    fn default() -> Self {
        PageTable::new()
    }
}

/// The error for an address the table cannot hold.
pub fn beyond_reach(vaddr: u64) -> String {
    format!(
        "virtual address {vaddr:#x} is beyond the page table's reach: addresses must be below \
         {VADDR_LIMIT:#x} ({} bits)",
        VPN_BITS + PAGE.trailing_zeros()
    )
}

#[inline]
fn index(vpn: u64, level: u32) -> usize {
    (vpn >> (LEVEL_BITS * level)) as usize & (FANOUT - 1)
}

impl PageTable {
    pub fn new() -> PageTable {
        PageTable {
            dirs: vec![[0; FANOUT]],
            leaves: Vec::new(),
            len: 0,
        }
    }

    /// Pages present.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The leaf holding `vpn`'s entry, if it exists.
    #[inline]
    fn leaf(&self, vpn: u64) -> Option<usize> {
        if vpn >> VPN_BITS != 0 {
            return None;
        }
        let mut node = 0;
        for level in (1..LEVELS).rev() {
            let child = self.dirs[node][index(vpn, level)];
            if child == 0 {
                return None;
            }
            node = child as usize - 1;
        }
        Some(node)
    }

    /// `vpn`'s entry if the page is present.
    #[inline]
    pub fn get(&self, vpn: u64) -> Option<Pte> {
        let pte = self.leaves[self.leaf(vpn)?][index(vpn, 0)];
        (pte != ABSENT).then_some(pte)
    }

    #[inline]
    pub fn get_mut(&mut self, vpn: u64) -> Option<&mut Pte> {
        let leaf = self.leaf(vpn)?;
        let pte = &mut self.leaves[leaf][index(vpn, 0)];
        (*pte != ABSENT).then_some(pte)
    }

    /// Sets `vpn`'s entry, creating the nodes on the way.
    pub fn insert(&mut self, vpn: u64, pte: Pte) -> Result<(), String> {
        if vpn >> VPN_BITS != 0 {
            return Err(beyond_reach(vpn.saturating_mul(PAGE)));
        }
        debug_assert_ne!(pte, ABSENT);
        let mut node = 0;
        for level in (1..LEVELS).rev() {
            let i = index(vpn, level);
            let mut child = self.dirs[node][i];
            if child == 0 {
                child = if level == 1 {
                    self.leaves.push([ABSENT; FANOUT]);
                    self.leaves.len() as u32
                } else {
                    self.dirs.push([0; FANOUT]);
                    self.dirs.len() as u32
                };
                self.dirs[node][i] = child;
            }
            node = child as usize - 1;
        }
        let slot = &mut self.leaves[node][index(vpn, 0)];
        if *slot == ABSENT {
            self.len += 1;
        }
        *slot = pte;
        Ok(())
    }

    /// Calls `f(vpn, pte)` for every present page in ascending `vpn` order.
    pub fn for_each(&self, mut f: impl FnMut(u64, Pte)) {
        self.walk(0, LEVELS - 1, 0, &mut f);
    }

    fn walk(&self, node: usize, level: u32, base: u64, f: &mut impl FnMut(u64, Pte)) {
        for (i, &child) in self.dirs[node].iter().enumerate() {
            if child == 0 {
                continue;
            }
            let base = base | (i as u64) << (LEVEL_BITS * level);
            if level > 1 {
                self.walk(child as usize - 1, level - 1, base, f);
                continue;
            }
            for (j, &pte) in self.leaves[child as usize - 1].iter().enumerate() {
                if pte != ABSENT {
                    f(base | j as u64, pte);
                }
            }
        }
    }

    /// Removes every present page with `start <= vpn < end`, calling `f(vpn, pte)` for each in
    /// ascending order. Visits only the nodes that overlap the range, so unmapping a huge,
    /// sparsely touched range costs what is present in it.
    pub fn remove_range(&mut self, start: u64, end: u64, mut f: impl FnMut(u64, Pte)) {
        let end = end.min(1 << VPN_BITS);
        if start < end {
            self.remove_in(0, LEVELS - 1, 0, start, end, &mut f);
        }
    }

    fn remove_in(
        &mut self,
        node: usize,
        level: u32,
        base: u64,
        start: u64,
        end: u64,
        f: &mut impl FnMut(u64, Pte),
    ) {
        let span = 1u64 << (LEVEL_BITS * level);
        for i in 0..FANOUT {
            let child = self.dirs[node][i];
            let lo = base | (i as u64) << (LEVEL_BITS * level);
            if child == 0 || lo + span <= start || lo >= end {
                continue;
            }
            if level > 1 {
                self.remove_in(child as usize - 1, level - 1, lo, start, end, f);
                continue;
            }
            let leaf = &mut self.leaves[child as usize - 1];
            for (j, pte) in leaf.iter_mut().enumerate() {
                let vpn = lo | j as u64;
                if *pte != ABSENT && (start..end).contains(&vpn) {
                    f(vpn, *pte);
                    *pte = ABSENT;
                    self.len -= 1;
                }
            }
        }
    }

    /// Removes `vpn`'s entry if present (an evicted page): four array loads, where
    /// `remove_range` scans whole nodes.
    pub fn remove(&mut self, vpn: u64) -> Option<Pte> {
        let leaf = self.leaf(vpn)?;
        let pte = &mut self.leaves[leaf][index(vpn, 0)];
        if *pte == ABSENT {
            return None;
        }
        self.len -= 1;
        Some(std::mem::replace(pte, ABSENT))
    }

    /// Makes every present page read-only (both sides of a fork, for copy-on-write).
    pub fn write_protect_all(&mut self) {
        for leaf in &mut self.leaves {
            for pte in leaf.iter_mut() {
                pte.writable = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_range_takes_exactly_the_pages_in_range() {
        let mut t = PageTable::new();
        let vpns = [
            0u64,
            5,
            511,
            512,
            1 << 20,
            (1 << 27) + 3,
            (1 << VPN_BITS) - 1,
        ];
        for (i, &v) in vpns.iter().enumerate() {
            t.insert(v, pte(i as u32)).unwrap();
        }
        let mut removed = Vec::new();
        t.remove_range(5, (1 << 20) + 1, |vpn, p| removed.push((vpn, p.frame)));
        assert_eq!(removed, vec![(5, 1), (511, 2), (512, 3), (1 << 20, 4)]);
        assert_eq!(t.len(), 3);
        assert!(t.get(5).is_none() && t.get(0).is_some() && t.get((1 << 27) + 3).is_some());
        t.remove_range(0, u64::MAX, |_, _| {});
        assert!(t.is_empty());
    }

    #[test]
    fn remove_takes_one_page() {
        let mut t = PageTable::new();
        let pte = |frame| Pte {
            frame,
            writable: true,
            rank: 0,
        };
        t.insert(7, pte(1)).unwrap();
        t.insert(8, pte(2)).unwrap();
        assert_eq!(t.remove(7), Some(pte(1)));
        assert_eq!((t.remove(7), t.remove(1 << 30), t.len()), (None, None, 1));
        assert_eq!(t.get(8), Some(pte(2)));
    }

    fn pte(frame: u32) -> Pte {
        Pte {
            frame,
            writable: true,
            rank: 0,
        }
    }

    #[test]
    fn sparse_pages_far_apart_in_ascending_order() {
        let mut t = PageTable::new();
        let vpns = [(1 << VPN_BITS) - 1, 0x7_0000_0000, 5, 0, 512, 511, 1 << 27];
        for (i, &v) in vpns.iter().enumerate() {
            t.insert(v, pte(i as u32)).unwrap();
        }
        t.insert(5, pte(99)).unwrap(); // replacing keeps the count
        assert_eq!(t.len(), vpns.len());
        for (i, &v) in vpns.iter().enumerate() {
            let want = if v == 5 { 99 } else { i as u32 };
            assert_eq!(t.get(v), Some(pte(want)), "vpn {v:#x}");
        }
        assert_eq!(t.get(6), None);
        assert_eq!(t.get(1 << 26), None);
        assert_eq!(t.get(1 << VPN_BITS), None, "beyond reach reads as absent");
        let mut seen = Vec::new();
        t.for_each(|v, _| seen.push(v));
        let mut sorted = vpns.to_vec();
        sorted.sort();
        assert_eq!(seen, sorted);
        // Seven far-apart pages cost a handful of nodes, not a flat array.
        assert!(t.dirs.len() + t.leaves.len() < 20);
    }

    #[test]
    fn addresses_beyond_reach_are_rejected_by_name() {
        let mut t = PageTable::new();
        let e = t.insert(1 << VPN_BITS, pte(1)).unwrap_err();
        assert!(
            e.contains("0x1000000000000") && e.contains("48 bits"),
            "{e}"
        );
        assert!(t.is_empty());
    }

    #[test]
    fn a_clone_is_independent_and_write_protection_covers_every_page() {
        let mut t = PageTable::new();
        t.insert(3, pte(30)).unwrap();
        t.insert(1 << 20, pte(40)).unwrap();
        t.write_protect_all();
        let mut c = t.clone();
        c.get_mut(3).unwrap().frame = 31;
        c.insert(4, pte(50)).unwrap();
        assert_eq!(t.get(3).map(|p| (p.frame, p.writable)), Some((30, false)));
        assert_eq!(c.get(1 << 20).map(|p| p.writable), Some(false));
        assert_eq!((t.get(4), t.len(), c.len()), (None, 2, 3));
    }
}
