//! The functional memory image: the bytes the simulated memory holds, so that a simulated copy
//! really copies and tests can compare destination with source. Sparse and page-granular: a
//! 4 KB page is stored once written; an untouched page reads as deterministic pseudo-random
//! bytes derived from (seed, page number), so copying it is distinguishable from leaving stale
//! or zero data. Copies have memmove semantics (overlap allowed).

use crate::workload::rng::SplitMix64;
use std::collections::HashMap;

pub const PAGE_BYTES: u64 = 4096;
type Page = Box<[u8; PAGE_BYTES as usize]>;

pub struct MemoryImage {
    seed: u64,
    pages: HashMap<u64, Page>,
}

impl MemoryImage {
    pub fn new(seed: u64) -> MemoryImage {
        MemoryImage {
            seed,
            pages: HashMap::new(),
        }
    }

    /// The contents of page `page` before anything was written to it.
    fn initial(&self, page: u64) -> Page {
        let mut rng = SplitMix64::new(self.seed ^ page.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut bytes: Page = Box::new([0; PAGE_BYTES as usize]);
        for word in bytes.chunks_exact_mut(8) {
            word.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        bytes
    }

    fn page_mut(&mut self, page: u64) -> &mut Page {
        if !self.pages.contains_key(&page) {
            let initial = self.initial(page);
            self.pages.insert(page, initial);
        }
        self.pages.get_mut(&page).expect("just inserted")
    }

    /// Reads `buf.len()` bytes from `addr`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) {
        let mut done = 0;
        while done < buf.len() {
            let at = addr + done as u64;
            let (page, offset) = (at / PAGE_BYTES, (at % PAGE_BYTES) as usize);
            let n = (PAGE_BYTES as usize - offset).min(buf.len() - done);
            match self.pages.get(&page) {
                Some(p) => buf[done..done + n].copy_from_slice(&p[offset..offset + n]),
                None => {
                    buf[done..done + n].copy_from_slice(&self.initial(page)[offset..offset + n])
                }
            }
            done += n;
        }
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let mut done = 0;
        while done < data.len() {
            let at = addr + done as u64;
            let (page, offset) = (at / PAGE_BYTES, (at % PAGE_BYTES) as usize);
            let n = (PAGE_BYTES as usize - offset).min(data.len() - done);
            self.page_mut(page)[offset..offset + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
    }

    /// Copies `len` bytes from `src` to `dst` (the ranges may overlap).
    pub fn copy(&mut self, src: u64, dst: u64, len: u64) {
        let mut buf = vec![0u8; len as usize];
        self.read(src, &mut buf);
        self.write(dst, &buf);
    }

    /// Sets `len` bytes at `dst` to `value`.
    pub fn fill(&mut self, dst: u64, len: u64, value: u8) {
        self.write(dst, &vec![value; len as usize]);
    }

    /// Pages that have been written (the image's memory footprint in pages).
    pub fn pages_written(&self) -> usize {
        self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(img: &MemoryImage, addr: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0; len];
        img.read(addr, &mut b);
        b
    }

    #[test]
    fn untouched_memory_is_deterministic_and_not_uniform() {
        let (a, b) = (MemoryImage::new(1), MemoryImage::new(1));
        assert_eq!(bytes(&a, 12345, 9000), bytes(&b, 12345, 9000));
        assert_ne!(bytes(&a, 0, 4096), bytes(&a, 4096, 4096), "pages differ");
        assert_ne!(
            bytes(&a, 0, 64),
            bytes(&MemoryImage::new(2), 0, 64),
            "seeds differ"
        );
        assert!(bytes(&a, 0, 4096).iter().any(|&x| x != 0));
        assert_eq!(a.pages_written(), 0, "reading allocates nothing");
    }

    #[test]
    fn writes_cross_page_boundaries_and_keep_neighbours() {
        let mut img = MemoryImage::new(7);
        let before = bytes(&img, 4000, 300);
        img.write(4090, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        let after = bytes(&img, 4000, 300);
        assert_eq!(&after[90..102], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(&after[..90], &before[..90]);
        assert_eq!(&after[102..], &before[102..]);
        assert_eq!(img.pages_written(), 2);
    }

    #[test]
    fn copy_moves_bytes_and_fill_sets_them() {
        let mut img = MemoryImage::new(3);
        let src = bytes(&img, 8192, 4096);
        img.copy(8192, 1 << 20, 4096);
        assert_eq!(bytes(&img, 1 << 20, 4096), src);
        assert_eq!(bytes(&img, 8192, 4096), src, "the source is unchanged");
        img.fill(1 << 20, 4096, 0);
        assert!(bytes(&img, 1 << 20, 4096).iter().all(|&x| x == 0));
        // Overlapping copy behaves as memmove.
        let original = bytes(&img, 100, 200);
        img.copy(100, 150, 200);
        assert_eq!(bytes(&img, 150, 200), original);
    }
}
