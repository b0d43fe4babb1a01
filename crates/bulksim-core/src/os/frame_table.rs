//! The frame table: per physical frame, the process that got it (its owner, kept until the
//! frame is free again), how many page-table entries reference it (copy-on-write sharing after
//! fork), and a referenced bit that every translation sets. It is flat (two vectors and a
//! bitset indexed by frame number) so the translation hot path only sets a bit, and it is what
//! a CLOCK replacement or page migration policy reads next to the page tables. A generation
//! per frame counts the times it was handed out, so that an exited process's page table can
//! tell which of its frames another has taken since.

use super::Pid;

#[derive(Clone, Debug)]
pub struct FrameTable {
    /// The owner's pid + 1, 0 for none: all-zero vectors come from the allocator as untouched
    /// zero pages, so frames never used cost no host memory here.
    owner: Vec<Pid>,
    /// The virtual page number the owner first mapped the frame at (page migration reads it
    /// to key its policy by virtual page).
    page: Vec<u64>,
    refcount: Vec<u16>,
    /// One referenced bit per frame, 64 frames a word.
    referenced: Vec<u64>,
    /// Times each frame was handed out (`assign`, `reuse`), wrapping.
    generation: Vec<u32>,
}

impl FrameTable {
    /// A table of `frames` free frames.
    pub fn new(frames: usize) -> FrameTable {
        FrameTable {
            owner: vec![0; frames],
            page: vec![0; frames],
            refcount: vec![0; frames],
            referenced: vec![0; frames.div_ceil(64)],
            generation: vec![0; frames],
        }
    }

    /// Frames in the table (usable or not).
    pub fn len(&self) -> usize {
        self.refcount.len()
    }

    pub fn is_empty(&self) -> bool {
        self.refcount.is_empty()
    }

    /// The process that got `frame`, while it is in use.
    pub fn owner(&self, frame: u32) -> Option<Pid> {
        self.owner[frame as usize].checked_sub(1)
    }

    /// The virtual page number `frame` was mapped at by its owner (meaningful while owned).
    pub fn page(&self, frame: u32) -> u64 {
        self.page[frame as usize]
    }

    /// Records that `frame` holds its owner's virtual page `vpn`.
    pub fn set_page(&mut self, frame: u32, vpn: u64) {
        self.page[frame as usize] = vpn;
    }

    /// Page-table entries that reference `frame` (0: free).
    pub fn refcount(&self, frame: u32) -> u16 {
        self.refcount[frame as usize]
    }

    /// Whether `frame` was accessed since its referenced bit was last cleared.
    pub fn referenced(&self, frame: u32) -> bool {
        self.referenced[frame as usize / 64] >> (frame % 64) & 1 == 1
    }

    /// Marks `frame` accessed (every translation does).
    #[inline]
    pub fn set_referenced(&mut self, frame: u32) {
        self.referenced[frame as usize / 64] |= 1 << (frame % 64);
    }

    /// Clears `frame`'s referenced bit and returns what it was (a CLOCK hand's step).
    pub fn clear_referenced(&mut self, frame: u32) -> bool {
        let was = self.referenced(frame);
        self.referenced[frame as usize / 64] &= !(1 << (frame % 64));
        was
    }

    /// `pid` got the free `frame`: owned by it, referenced once, accessed.
    pub fn assign(&mut self, frame: u32, pid: Pid) {
        debug_assert_eq!(self.refcount[frame as usize], 0, "frame {frame} in use");
        self.reuse(frame);
        self.owner[frame as usize] = pid + 1;
        self.refcount[frame as usize] = 1;
        self.set_referenced(frame);
    }

    /// `frame` is handed out again (its bytes may change from now on), also when its new
    /// user is not yet its owner (a migration copying into it).
    pub fn reuse(&mut self, frame: u32) {
        let g = &mut self.generation[frame as usize];
        *g = g.wrapping_add(1);
    }

    /// Times `frame` was handed out.
    pub fn generation(&self, frame: u32) -> u32 {
        self.generation[frame as usize]
    }

    /// One more page-table entry references `frame` (a fork shares it).
    pub fn share(&mut self, frame: u32) {
        let count = &mut self.refcount[frame as usize];
        *count = count
            .checked_add(1)
            .expect("more than 65535 references to one frame");
    }

    /// One reference to `frame` is dropped; returns whether the frame is free now (then it
    /// has no owner and its referenced bit is clear).
    pub fn release(&mut self, frame: u32) -> bool {
        let count = &mut self.refcount[frame as usize];
        debug_assert!(*count > 0, "frame {frame} is free");
        *count -= 1;
        if *count > 0 {
            return false;
        }
        self.owner[frame as usize] = 0;
        self.clear_referenced(frame);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_refcount_and_referenced_bit() {
        let mut t = FrameTable::new(130);
        assert_eq!((t.len(), t.owner(129), t.refcount(129)), (130, None, 0));
        t.assign(129, 3);
        assert_eq!(
            (t.owner(129), t.refcount(129), t.referenced(129)),
            (Some(3), 1, true)
        );
        assert!(!t.referenced(128) && !t.referenced(1), "bits are per frame");
        assert!(t.clear_referenced(129));
        assert!(!t.clear_referenced(129));
        t.set_referenced(129);
        t.share(129);
        assert!(!t.release(129), "still shared");
        assert_eq!((t.owner(129), t.refcount(129)), (Some(3), 1));
        assert!(t.release(129));
        assert_eq!(
            (t.owner(129), t.refcount(129), t.referenced(129)),
            (None, 0, false)
        );
    }
}
