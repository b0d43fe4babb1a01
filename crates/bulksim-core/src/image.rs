//! The functional memory image: the bytes the simulated memory holds, so that a simulated copy
//! really copies and tests can compare destination with source. Sparse and page-granular: an
//! untouched page reads as deterministic pseudo-random bytes derived from (seed, page number),
//! so copying it is distinguishable from leaving stale or zero data; word `k` of page `p` is
//! output `k` of SplitMix64 seeded with `seed ^ p * GAMMA`, computed word by word on a read
//! (never a whole page for a 64-byte line). A page known to hold only zeros costs one table
//! entry and no page of host memory (zeroing 1 GB stores nothing); any other written page is
//! stored as 4 KB. Copies have memmove semantics (overlap allowed).

use crate::rng::{SplitMix64, GAMMA};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub const PAGE_BYTES: u64 = 4096;
const PAGE: usize = PAGE_BYTES as usize;
/// Largest piece `MemoryImage::copy` moves through a small buffer (bytes).
const BLOCK_BUFFER: usize = 256;
type PageBytes = Box<[u8; PAGE]>;

/// A page that has been written. (An untouched page has no entry.)
enum PageState {
    /// The page's bytes.
    Data(PageBytes),
    /// All zeros, stored as nothing.
    Zero,
}

/// Hashes a page number by one folded multiply by the golden ratio (the 128-bit product's
/// halves XORed; the golden ratio spreads strided keys best of the constants tried): the
/// image is looked up on every cache fill and write-back, and page numbers need no protection
/// against chosen collisions. The product's high half brings the page number's high bits into
/// the bucket index, so pages a power of two apart do not share buckets (tested below).
#[derive(Default)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        let product = (self.0 ^ n) as u128 * GAMMA as u128;
        self.0 = product as u64 ^ (product >> 64) as u64;
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type PageMap = HashMap<u64, PageState, BuildHasherDefault<PageHasher>>;

fn is_zero(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(16);
    let mut acc = 0u128;
    for c in &mut chunks {
        acc |= u128::from_le_bytes(c.try_into().expect("16 bytes"));
    }
    acc == 0 && chunks.remainder().iter().all(|&b| b == 0)
}

/// Writes bytes `offset..offset + out.len()` of page `page`'s initial contents (before anything
/// was written to it) to `out`, computing only the words they fall in.
fn initial_into(seed: u64, page: u64, offset: usize, out: &mut [u8]) {
    debug_assert!(offset + out.len() <= PAGE);
    let seed = seed ^ page.wrapping_mul(GAMMA);
    let (mut word, mut skip, mut done) = (offset / 8, offset % 8, 0);
    while done < out.len() {
        let bytes = SplitMix64::nth(seed, word as u64).to_le_bytes();
        let n = (8 - skip).min(out.len() - done);
        out[done..done + n].copy_from_slice(&bytes[skip..skip + n]);
        (word, skip, done) = (word + 1, 0, done + n);
    }
}

/// The whole initial contents of page `page`.
fn initial(seed: u64, page: u64) -> PageBytes {
    let mut bytes: PageBytes = Box::new([0; PAGE]);
    initial_into(seed, page, 0, &mut bytes[..]);
    bytes
}

pub struct MemoryImage {
    seed: u64,
    pages: PageMap,
}

impl MemoryImage {
    pub fn new(seed: u64) -> MemoryImage {
        MemoryImage {
            seed,
            pages: PageMap::default(),
        }
    }

    /// Applies `change` to page `page`'s bytes, storing them from the page's current contents
    /// first if they were not stored (one table lookup). `keeps_zero`: the change leaves a zero
    /// page zero, so a zero page stays unstored.
    fn change(&mut self, page: u64, keeps_zero: bool, change: impl FnOnce(&mut [u8; PAGE])) {
        let seed = self.seed;
        match self.pages.entry(page) {
            Entry::Occupied(e) => match e.into_mut() {
                PageState::Data(bytes) => change(bytes),
                PageState::Zero if keeps_zero => {}
                state => {
                    let mut bytes: PageBytes = Box::new([0; PAGE]);
                    change(&mut bytes);
                    *state = PageState::Data(bytes);
                }
            },
            Entry::Vacant(e) => {
                let mut bytes = initial(seed, page);
                change(&mut bytes);
                e.insert(PageState::Data(bytes));
            }
        }
    }

    /// Calls `f(page, offset, done, n)` for each piece of `addr..addr + len` within one page
    /// (`done` bytes of the range before it, `n` in it), in address order.
    fn pieces(addr: u64, len: u64, mut f: impl FnMut(u64, usize, usize, usize)) {
        let mut done = 0u64;
        while done < len {
            let at = addr + done;
            let (page, offset) = (at / PAGE_BYTES, at % PAGE_BYTES);
            let n = (PAGE_BYTES - offset).min(len - done);
            f(page, offset as usize, done as usize, n as usize);
            done += n;
        }
    }

    /// Reads bytes `offset..offset + out.len()` of page `page`.
    fn read_piece(&self, page: u64, offset: usize, out: &mut [u8]) {
        match self.pages.get(&page) {
            Some(PageState::Data(p)) => out.copy_from_slice(&p[offset..offset + out.len()]),
            Some(PageState::Zero) => out.fill(0),
            None => initial_into(self.seed, page, offset, out),
        }
    }

    /// Writes `data` at byte `offset` of page `page`.
    fn write_piece(&mut self, page: u64, offset: usize, data: &[u8]) {
        if data.len() == PAGE {
            // A whole page: its old contents do not matter.
            if is_zero(data) {
                self.pages.insert(page, PageState::Zero);
            } else if let Some(PageState::Data(p)) = self.pages.get_mut(&page) {
                p.copy_from_slice(data);
            } else {
                let bytes: PageBytes = data.to_vec().into_boxed_slice().try_into().expect("4 KB");
                self.pages.insert(page, PageState::Data(bytes));
            }
        } else {
            self.change(page, is_zero(data), |bytes| {
                bytes[offset..offset + data.len()].copy_from_slice(data)
            });
        }
    }

    /// Reads `buf.len()` bytes from `addr`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) {
        Self::pieces(addr, buf.len() as u64, |page, offset, done, n| {
            self.read_piece(page, offset, &mut buf[done..done + n])
        });
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        Self::pieces(addr, data.len() as u64, |page, offset, done, n| {
            self.write_piece(page, offset, &data[done..done + n])
        });
    }

    /// Sets `len` bytes at `dst` to zero; whole pages are recorded as zero pages, which store
    /// no bytes.
    pub fn zero(&mut self, dst: u64, len: u64) {
        Self::pieces(dst, len, |page, offset, _, n| {
            if n == PAGE {
                self.pages.insert(page, PageState::Zero);
            } else {
                self.change(page, true, |bytes| bytes[offset..offset + n].fill(0));
            }
        });
    }

    /// Sets `len` bytes at `dst` to `value`.
    pub fn fill(&mut self, dst: u64, len: u64, value: u8) {
        if value == 0 {
            return self.zero(dst, len);
        }
        Self::pieces(dst, len, |page, offset, _, n| {
            if n == PAGE {
                self.pages
                    .insert(page, PageState::Data(Box::new([value; PAGE])));
            } else {
                self.change(page, false, |bytes| bytes[offset..offset + n].fill(value));
            }
        });
    }

    /// Copies `len` bytes from `src` to `dst` (the ranges may overlap), a destination page at
    /// a time: forwards when the destination is below the source, else backwards, so no piece
    /// overwrites source bytes a later piece still reads. A whole page copied from a whole
    /// page takes the source page's state: a zero page stays a zero page, an untouched page
    /// is stored with its initial contents.
    pub fn copy(&mut self, src: u64, dst: u64, len: u64) {
        if src == dst || len == 0 {
            return;
        }
        let piece = |image: &mut MemoryImage, done: u64, n: u64| {
            let (s, d) = (src + done, dst + done);
            if n == PAGE_BYTES && s % PAGE_BYTES == 0 {
                let state = match image.pages.get(&(s / PAGE_BYTES)) {
                    Some(PageState::Data(p)) => PageState::Data(p.clone()),
                    Some(PageState::Zero) => PageState::Zero,
                    None => PageState::Data(initial(image.seed, s / PAGE_BYTES)),
                };
                image.pages.insert(d / PAGE_BYTES, state);
            } else if n as usize <= BLOCK_BUFFER {
                // A block (the hybrid memory copies 64 bytes at a time): a page-sized buffer
                // would cost zeroing 4 KB per copy.
                let mut buf = [0u8; BLOCK_BUFFER];
                let buf = &mut buf[..n as usize];
                image.read(s, buf);
                image.write(d, buf);
            } else {
                let mut buf = [0u8; PAGE];
                let buf = &mut buf[..n as usize];
                image.read(s, buf);
                image.write(d, buf);
            }
        };
        if dst < src {
            Self::pieces(dst, len, |_, _, done, n| piece(self, done as u64, n as u64));
        } else {
            let mut end = len;
            while end > 0 {
                let at = dst + end - 1;
                let start = (at - at % PAGE_BYTES).max(dst) - dst;
                piece(self, start, end - start);
                end = start;
            }
        }
    }

    /// Pages that have been written, zero pages included (the image's table entries).
    pub fn pages_written(&self) -> usize {
        self.pages.len()
    }

    /// Pages whose bytes are stored (written pages other than zero pages).
    pub fn pages_stored(&self) -> usize {
        self.pages
            .values()
            .filter(|p| matches!(p, PageState::Data(_)))
            .count()
    }

    /// Host memory the image holds, estimated: 4 KB per stored page plus the table (a key, a
    /// state and a control byte per bucket).
    pub fn host_bytes(&self) -> usize {
        let bucket = std::mem::size_of::<(u64, PageState)>() + 1;
        self.pages_stored() * PAGE + self.pages.capacity() * bucket
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

    /// The initial contents as the image generated them before reads went word by word: the
    /// whole page from the sequential generator. Every simulated result depends on these bytes.
    fn reference_page(seed: u64, page: u64) -> Vec<u8> {
        let mut rng = SplitMix64::new(seed ^ page.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        (0..PAGE / 8)
            .flat_map(|_| rng.next_u64().to_le_bytes())
            .collect()
    }

    fn reference(seed: u64, addr: u64, len: usize) -> Vec<u8> {
        let (first, end) = (addr / PAGE_BYTES, (addr + len as u64).div_ceil(PAGE_BYTES));
        let pages: Vec<u8> = (first..end).flat_map(|p| reference_page(seed, p)).collect();
        let skip = (addr % PAGE_BYTES) as usize;
        pages[skip..skip + len].to_vec()
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
    fn untouched_reads_are_the_whole_page_generators_bytes() {
        let mut r = SplitMix64::new(5);
        for seed in [0, 1, 0x5EED, u64::MAX] {
            let img = MemoryImage::new(seed);
            // Whole pages, including high page numbers.
            for page in [0, 1, 2, 1000, 1 << 20, (u64::MAX / PAGE_BYTES) - 1] {
                let got = bytes(&img, page * PAGE_BYTES, PAGE);
                assert_eq!(got, reference_page(seed, page), "seed {seed} page {page}");
            }
            // Random ranges: odd offsets and lengths, lines, and ranges crossing pages.
            for _ in 0..150 {
                let addr = r.below(64 * PAGE_BYTES) + (1 << 30);
                let len = match r.below(3) {
                    0 => r.below(20) as usize,
                    1 => 64,
                    _ => r.below(3 * PAGE_BYTES) as usize,
                };
                assert_eq!(
                    bytes(&img, addr, len),
                    reference(seed, addr, len),
                    "{addr} {len}"
                );
            }
            assert_eq!(img.pages_written(), 0);
        }
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

    #[test]
    fn zeroing_a_gigabyte_stores_no_page() {
        let mut img = MemoryImage::new(11);
        let start = std::time::Instant::now();
        img.zero(1 << 32, 1 << 30);
        let took = start.elapsed();
        assert_eq!(img.pages_written(), 262_144);
        assert_eq!(img.pages_stored(), 0);
        assert!(img.host_bytes() < 16 << 20, "{} bytes", img.host_bytes());
        // Debug build, shared machine: generous, but storing 1 GB would not fit.
        assert!(took.as_secs_f64() < 10.0, "{took:?}");
        assert!(bytes(&img, (1 << 32) + 12345, 9000).iter().all(|&b| b == 0));
        // A partial zeroing of a zero page and a zero write leave it unstored.
        img.zero((1 << 32) + 100, 50);
        img.write((1 << 32) + 5000, &[0; 64]);
        img.write(1 << 33, &[0; PAGE]);
        img.fill((1 << 33) + PAGE_BYTES, PAGE_BYTES, 0);
        assert_eq!(img.pages_stored(), 0);
        // Zero pages copy as zero pages.
        img.copy(1 << 32, 1 << 34, 8 * PAGE_BYTES);
        assert_eq!(img.pages_stored(), 0);
        assert!(bytes(&img, 1 << 34, 8 * PAGE).iter().all(|&b| b == 0));
    }

    #[test]
    fn whole_page_operations_store_the_page_and_partial_ones_keep_the_rest() {
        let mut img = MemoryImage::new(4);
        let p = 10 * PAGE_BYTES;
        // Partial zeroing across a boundary keeps each page's other initial bytes.
        let before = bytes(&img, p, 2 * PAGE);
        img.zero(p + 4000, 200);
        let after = bytes(&img, p, 2 * PAGE);
        assert_eq!(&after[..4000], &before[..4000]);
        assert!(after[4000..4200].iter().all(|&b| b == 0));
        assert_eq!(&after[4200..], &before[4200..]);
        assert_eq!(img.pages_stored(), 2);
        // A whole-page write replaces a stored page; a nonzero fill stores it.
        img.write(p, &[9; PAGE]);
        img.fill(p + PAGE_BYTES, PAGE_BYTES, 7);
        assert_eq!(bytes(&img, p + 4094, 4), vec![9, 9, 7, 7]);
        // Writing zeros over a whole stored page makes it a zero page.
        img.write(p, &[0; PAGE]);
        assert_eq!(img.pages_stored(), 1);
        // Copying an untouched page stores its initial contents at the destination.
        let untouched = bytes(&img, 50 * PAGE_BYTES, PAGE);
        img.copy(50 * PAGE_BYTES, 60 * PAGE_BYTES, PAGE_BYTES);
        assert_eq!(bytes(&img, 60 * PAGE_BYTES, PAGE), untouched);
        assert_eq!(bytes(&img, 50 * PAGE_BYTES, PAGE), untouched);
        assert_eq!(img.pages_stored(), 2);
        // Unaligned copy of untouched bytes spanning pages.
        let src = bytes(&img, 70 * PAGE_BYTES + 123, 3 * PAGE);
        img.copy(
            70 * PAGE_BYTES + 123,
            80 * PAGE_BYTES + 4000,
            3 * PAGE_BYTES,
        );
        assert_eq!(bytes(&img, 80 * PAGE_BYTES + 4000, 3 * PAGE), src);
    }

    #[test]
    fn overlapping_copies_are_memmoves_in_both_directions() {
        for (src, dst) in [
            (0, 100),
            (100, 0),
            (0, 4096),
            (4096, 0),
            (10, 5000),
            (5000, 10),
        ] {
            let mut img = MemoryImage::new(8);
            img.write(3 * PAGE_BYTES, &[1; 300]);
            img.zero(PAGE_BYTES, PAGE_BYTES);
            let len = 3 * PAGE_BYTES + 500;
            let mut model = bytes(&img, 0, 6 * PAGE);
            model.copy_within(src as usize..(src + len) as usize, dst as usize);
            img.copy(src, dst, len);
            assert_eq!(bytes(&img, 0, 6 * PAGE), model, "{src} -> {dst}");
        }
    }

    /// A byte-array model of a few pages against the image under random reads, writes,
    /// zeroing, fills and copies, whole-page and aligned ones favoured.
    #[test]
    fn random_operations_match_a_byte_array() {
        const PAGES: u64 = 6;
        const BASE: u64 = 1000 * PAGE_BYTES;
        let span = PAGES * PAGE_BYTES;
        for seed in 0..6 {
            let mut r = SplitMix64::new(seed);
            let mut img = MemoryImage::new(seed);
            let mut model = reference(seed, BASE, span as usize);
            let range = |r: &mut SplitMix64| -> (u64, u64) {
                let (addr, len) = match r.below(4) {
                    0 => (r.below(PAGES) * PAGE_BYTES, PAGE_BYTES * (1 + r.below(2))),
                    1 => (r.below(span / 64) * 64, 64),
                    2 => (r.below(span), r.below(40)),
                    _ => (r.below(span), r.below(3 * PAGE_BYTES)),
                };
                let len = len.min(span - addr);
                (addr, len)
            };
            for step in 0..400 {
                let (addr, len) = range(&mut r);
                let (a, l) = (addr as usize, len as usize);
                match r.below(5) {
                    0 => {
                        let zeros = r.below(3) == 0;
                        let data: Vec<u8> = (0..l)
                            .map(|_| if zeros { 0 } else { r.next_u64() as u8 })
                            .collect();
                        img.write(BASE + addr, &data);
                        model[a..a + l].copy_from_slice(&data);
                    }
                    1 => {
                        img.zero(BASE + addr, len);
                        model[a..a + l].fill(0);
                    }
                    2 => {
                        let value = r.below(3) as u8;
                        img.fill(BASE + addr, len, value);
                        model[a..a + l].fill(value);
                    }
                    3 => {
                        let to = if r.below(2) == 0 {
                            r.below(PAGES) * PAGE_BYTES
                        } else {
                            r.below(span)
                        };
                        let len = len.min(span - to);
                        img.copy(BASE + addr, BASE + to, len);
                        model.copy_within(a..a + len as usize, to as usize);
                    }
                    _ => assert_eq!(bytes(&img, BASE + addr, l), model[a..a + l], "{step}"),
                }
                assert_eq!(
                    bytes(&img, BASE, span as usize),
                    model,
                    "seed {seed} step {step}"
                );
                assert!(img.pages_stored() <= PAGES as usize);
            }
            // Nothing outside the modelled pages was touched.
            assert_eq!(bytes(&img, BASE - 64, 64), reference(seed, BASE - 64, 64));
            assert_eq!(
                bytes(&img, BASE + span, 64),
                reference(seed, BASE + span, 64)
            );
        }
    }

    #[test]
    fn page_numbers_spread_over_buckets() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<PageHasher>::default();
        // Pages a power of two apart must not share their low hash bits (1024 random values
        // take about 647 of 1024 buckets).
        for shift in [0, 1, 5, 8, 9, 12, 16, 20, 30] {
            let mut low: Vec<u64> = (0..1024u64)
                .map(|i| build.hash_one(i << shift) & 0x3FF)
                .collect();
            low.sort_unstable();
            low.dedup();
            assert!(
                low.len() > 600,
                "stride 2^{shift}: {} of 1024 buckets",
                low.len()
            );
        }
    }
}
