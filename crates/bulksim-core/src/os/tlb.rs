//! What each core's TLB holds, as far as page replacement needs it: the core's last
//! `os.tlb_pages` distinct frames translated, most recent first. A CLOCK rollover keeps these
//! frames' referenced bits (the paper's "pages resident in the processor TLBs"); an evicted
//! frame is shot down from every core's list. Only kept when a replacing policy (clock,
//! rank_clock) runs, so other runs pay nothing per translation.

#[derive(Clone, Debug, Default)]
pub struct Tlbs {
    /// Per core, up to `pages` frames, the most recent first.
    cores: Vec<Vec<u32>>,
    pages: usize,
}

impl Tlbs {
    /// TLBs of `pages` entries per core (0: none kept).
    pub fn new(pages: u32) -> Tlbs {
        Tlbs {
            cores: Vec::new(),
            pages: pages as usize,
        }
    }

    /// Core `core` translated to `frame`: it becomes the core's most recent entry.
    #[inline]
    pub fn touch(&mut self, core: u32, frame: u32) {
        if self.pages == 0 {
            return;
        }
        let core = core as usize;
        if core >= self.cores.len() {
            self.cores.resize_with(core + 1, Vec::new);
        }
        let entries = &mut self.cores[core];
        if entries.first() == Some(&frame) {
            return;
        }
        match entries.iter().position(|&f| f == frame) {
            Some(i) => entries[..=i].rotate_right(1),
            None => {
                if entries.len() == self.pages {
                    entries.pop();
                }
                entries.insert(0, frame);
            }
        }
    }

    /// Every core's entries (a frame in several cores' TLBs comes once per core).
    pub fn frames(&self) -> impl Iterator<Item = u32> + '_ {
        self.cores.iter().flatten().copied()
    }

    /// `frame` no longer holds the page the entries named (evicted): dropped everywhere.
    pub fn shoot_down(&mut self, frame: u32) {
        for entries in &mut self.cores {
            entries.retain(|&f| f != frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_cores_last_distinct_pages() {
        let mut t = Tlbs::new(3);
        for f in [1, 2, 2, 3, 1, 4] {
            t.touch(0, f);
        }
        t.touch(1, 9);
        // Core 0: 4, 1, 3 (2 is the least recent of four distinct pages).
        assert_eq!(t.frames().collect::<Vec<_>>(), [4, 1, 3, 9]);
        t.shoot_down(1);
        assert_eq!(t.frames().collect::<Vec<_>>(), [4, 3, 9]);
        let mut none = Tlbs::new(0);
        none.touch(0, 5);
        assert_eq!(none.frames().count(), 0);
    }
}
