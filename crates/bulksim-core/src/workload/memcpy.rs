//! The instruction steps of one `memcpy` as a core dispatches them when `system.memcpy` is
//! `software` (the unmodified library copy: a call, then word loads and stores carrying the
//! bytes), `software_nt` (the copy with non-temporal stores the copy-engine paper sets beside
//! its engines, Sec. 3: the same word loads, with the stores of every whole destination line
//! of the write-combining buffers' size non-temporal, the head and tail ordinary, and a fence
//! at the end) or `movblk` (the copy-engine paper's modified memcpy, digest section 1.7: a size
//! and alignment check, software copies of the head up to a line-aligned destination and of
//! the tail, one `movblk` per whole line between; under `copy_engine.policy = "dce_rowclone"`
//! each whole destination chunk of the movblk part is first offered to the memory controller
//! as one step, and expands into its movblks when the system declines it). The expansion is pure and lazy: an
//! iterator over a few words of state, so a copy of any size costs no memory, and the system
//! decides the timing and the bytes of every step.

/// One step of a copy, in dispatch order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyStep {
    /// Non-memory instructions.
    Compute(u64),
    /// A load of `bytes` (1..=word) at `src`; never crosses a line of `line` bytes.
    LoadWord { src: u64, bytes: u32 },
    /// A store of `bytes` at `dst` carrying the bytes at `src` (the load just before it);
    /// never crosses a `word_bytes` boundary of dst.
    StoreWord { dst: u64, src: u64, bytes: u32 },
    /// A non-temporal store (`software_nt`): as `StoreWord`, but it goes around the caches
    /// into a write-combining buffer.
    StoreNt { dst: u64, src: u64, bytes: u32 },
    /// The fence ending a `software_nt` copy that made non-temporal stores: its
    /// write-combining buffers are written out.
    Fence,
    /// One movblk: `line` bytes from `src` to line-aligned `dst`.
    Movblk { src: u64, dst: u64 },
    /// A whole destination chunk (`bytes`, dst aligned to it) offered to the memory
    /// controller; declined (`MemcpyExpansion::decline`), it runs as movblks.
    Chunk { src: u64, dst: u64, bytes: u64 },
}

/// Which memcpy the program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcpyKind {
    /// Word loads and stores only.
    Software,
    /// Word loads and stores for what is not a whole destination line, movblks for the rest.
    Movblk,
    /// Word loads; ordinary stores for what is not a whole destination line of the
    /// write-combining buffers (`MemcpyExpansion::with_nt_line`), non-temporal stores for the
    /// rest, then a fence.
    SoftwareNt,
}

/// The instruction cost of the library code around the data movement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcpyCost {
    /// Instructions of the call itself (call, set-up, return), once per memcpy.
    pub call_instructions: u64,
    /// Bytes one load or store moves at most (the copy loop's word); must be at least 1.
    pub word_bytes: u64,
    /// Instructions of the movblk version's size and alignment test, once per memcpy.
    pub check_instructions: u64,
    /// Instructions of the movblk loop per block (pointer updates, count, branch).
    pub loop_instructions: u64,
}

/// What the expansion emits next besides starting a new chunk or block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// The call (and check) instructions, emitted first.
    Call,
    /// Nothing half done: the next step starts a chunk or a block at `offset`.
    Nothing,
    /// The store of the chunk whose load was just emitted (`nt`: a non-temporal one).
    Store { bytes: u32, nt: bool },
    /// The movblk whose loop instructions were just emitted.
    Movblk,
    /// The chunk whose loop instructions were just emitted.
    Chunk,
}

/// The steps of one memcpy of `bytes` bytes from `src` to `dst`, produced one at a time.
///
/// The copy is cut at offsets (bytes from the start): `[0, head_end)` and
/// `[blocks_end, bytes)` are copied in software chunks, `[head_end, blocks_end)` in whole
/// lines by movblk, or for `software_nt` in software chunks with non-temporal stores (empty
/// for the software kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcpyExpansion {
    kind: MemcpyKind,
    src: u64,
    dst: u64,
    bytes: u64,
    line: u64,
    word_bytes: u64,
    call_instructions: u64,
    loop_instructions: u64,
    head_end: u64,
    blocks_end: u64,
    /// Bytes copied (or begun) so far.
    offset: u64,
    pending: Pending,
    /// Destination chunk offered whole to the memory controller (0: none).
    chunk: u64,
    /// No chunk starts below this offset (a declined chunk runs as movblks).
    no_chunk_before: u64,
    /// The fence of a `software_nt` copy with non-temporal stores is still to come.
    fence: bool,
}

/// Where a copy of `bytes` to `dst` is cut for whole destination lines of `line` bytes:
/// (head_end, blocks_end), both `bytes` when no whole line remains after the head.
fn cut(bytes: u64, dst: u64, line: u64) -> (u64, u64) {
    // Bytes until dst is line-aligned.
    let head = (line - dst % line) % line;
    if bytes < line || bytes - head < line {
        (bytes, bytes)
    } else {
        (head, head + (bytes - head) / line * line)
    }
}

impl MemcpyExpansion {
    /// The expansion of `memcpy(dst, src, bytes)` with first-level lines of `line` bytes.
    /// `line` and `cost.word_bytes` must be at least 1 (the config guarantees it), and
    /// `src + bytes`, `dst + bytes` must not wrap (the trace reader keeps every range below
    /// the page table's reach).
    pub fn new(
        kind: MemcpyKind,
        cost: MemcpyCost,
        src: u64,
        dst: u64,
        bytes: u64,
        line: u64,
    ) -> Self {
        debug_assert!(line > 0 && cost.word_bytes > 0);
        debug_assert!(src.checked_add(bytes).is_some() && dst.checked_add(bytes).is_some());
        let (call_instructions, head_end, blocks_end) = match kind {
            MemcpyKind::Software => (cost.call_instructions, bytes, bytes),
            // software_nt pays the same size and alignment test as movblk (it picks the
            // non-temporal part); its lines are the first level's until `with_nt_line`.
            MemcpyKind::Movblk | MemcpyKind::SoftwareNt => {
                let call = cost
                    .call_instructions
                    .saturating_add(cost.check_instructions);
                let (head_end, blocks_end) = cut(bytes, dst, line);
                (call, head_end, blocks_end)
            }
        };
        MemcpyExpansion {
            kind,
            src,
            dst,
            bytes,
            line,
            word_bytes: cost.word_bytes,
            call_instructions,
            loop_instructions: cost.loop_instructions,
            head_end,
            blocks_end,
            offset: 0,
            pending: Pending::Call,
            chunk: 0,
            no_chunk_before: 0,
            fence: kind == MemcpyKind::SoftwareNt && blocks_end > head_end,
        }
    }

    /// The same `software_nt` expansion with its non-temporal part cut in whole destination
    /// lines of `nt_line` bytes (the write-combining buffer's line, the memory line) instead
    /// of first-level lines; other kinds are unchanged. Call before the first step.
    pub fn with_nt_line(mut self, nt_line: u64) -> Self {
        if self.kind == MemcpyKind::SoftwareNt && nt_line > 0 {
            let (head_end, blocks_end) = cut(self.bytes, self.dst, nt_line);
            self.head_end = head_end;
            self.blocks_end = blocks_end;
            self.fence = blocks_end > head_end;
        }
        self
    }

    /// The same expansion offering each whole `chunk`-byte destination chunk of its movblk
    /// part as one `CopyStep::Chunk` (0: none).
    pub fn with_chunks(mut self, chunk: u64) -> Self {
        self.chunk = chunk;
        self
    }

    /// The chunk just emitted is declined: it runs as movblks (its loop instructions stand
    /// for the first movblk's).
    pub fn decline(&mut self, step: CopyStep) {
        if let CopyStep::Chunk { bytes, .. } = step {
            self.offset -= bytes;
            self.no_chunk_before = self.offset + bytes;
            self.pending = Pending::Movblk;
        }
    }

    /// Whether a whole destination chunk starts at the current offset.
    fn chunk_here(&self) -> bool {
        self.chunk > 0
            && self.kind == MemcpyKind::Movblk
            && self.offset >= self.no_chunk_before
            && (self.dst + self.offset) % self.chunk == 0
            && self.offset + self.chunk <= self.blocks_end
    }

    /// Movblks the expansion emits in all.
    pub fn movblks(&self) -> u64 {
        match self.kind {
            MemcpyKind::Movblk => (self.blocks_end - self.head_end) / self.line,
            _ => 0,
        }
    }

    /// The next software chunk at the current offset: it ends at the earliest of the end of
    /// its software part, the next word boundary of dst and the next line boundary of src.
    fn chunk_bytes(&self, part_end: u64) -> u64 {
        let (src, dst) = (self.src + self.offset, self.dst + self.offset);
        let to_word = self.word_bytes - dst % self.word_bytes;
        let to_line = self.line - src % self.line;
        (part_end - self.offset).min(to_word).min(to_line)
    }
}

impl Iterator for MemcpyExpansion {
    type Item = CopyStep;

    fn next(&mut self) -> Option<CopyStep> {
        loop {
            match self.pending {
                Pending::Call => {
                    self.pending = Pending::Nothing;
                    if self.call_instructions > 0 {
                        return Some(CopyStep::Compute(self.call_instructions));
                    }
                }
                Pending::Store { bytes, nt } => {
                    self.pending = Pending::Nothing;
                    let (dst, src) = (self.dst + self.offset, self.src + self.offset);
                    let step = if nt {
                        CopyStep::StoreNt { dst, src, bytes }
                    } else {
                        CopyStep::StoreWord { dst, src, bytes }
                    };
                    self.offset += u64::from(bytes);
                    return Some(step);
                }
                Pending::Movblk => {
                    self.pending = Pending::Nothing;
                    let step = CopyStep::Movblk {
                        src: self.src + self.offset,
                        dst: self.dst + self.offset,
                    };
                    self.offset += self.line;
                    return Some(step);
                }
                Pending::Chunk => {
                    self.pending = Pending::Nothing;
                    let step = CopyStep::Chunk {
                        src: self.src + self.offset,
                        dst: self.dst + self.offset,
                        bytes: self.chunk,
                    };
                    self.offset += self.chunk;
                    return Some(step);
                }
                Pending::Nothing => {
                    if self.offset >= self.bytes {
                        if self.fence {
                            self.fence = false;
                            return Some(CopyStep::Fence);
                        }
                        return None;
                    }
                    let in_blocks = (self.head_end..self.blocks_end).contains(&self.offset);
                    if in_blocks && self.kind == MemcpyKind::Movblk {
                        self.pending = if self.chunk_here() {
                            Pending::Chunk
                        } else {
                            Pending::Movblk
                        };
                        if self.loop_instructions > 0 {
                            return Some(CopyStep::Compute(self.loop_instructions));
                        }
                        continue;
                    }
                    let part_end = if self.offset < self.head_end {
                        self.head_end
                    } else if in_blocks {
                        self.blocks_end
                    } else {
                        self.bytes
                    };
                    // At most one word and one line: far below 2^32 for any real config.
                    let bytes = u32::try_from(self.chunk_bytes(part_end)).unwrap_or(u32::MAX);
                    self.pending = Pending::Store {
                        bytes,
                        nt: in_blocks,
                    };
                    return Some(CopyStep::LoadWord {
                        src: self.src + self.offset,
                        bytes,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    const COST: MemcpyCost = MemcpyCost {
        call_instructions: 10,
        word_bytes: 4,
        check_instructions: 6,
        loop_instructions: 2,
    };

    fn steps(kind: MemcpyKind, cost: MemcpyCost, src: u64, dst: u64, n: u64) -> Vec<CopyStep> {
        MemcpyExpansion::new(kind, cost, src, dst, n, 32).collect()
    }

    /// Instructions the steps dispatch: each load, store and movblk is one.
    fn instructions(steps: &[CopyStep]) -> u64 {
        steps
            .iter()
            .map(|s| match *s {
                CopyStep::Compute(n) => n,
                _ => 1,
            })
            .sum()
    }

    /// Byte sizes of the load/store chunks, in order.
    fn chunks(steps: &[CopyStep]) -> Vec<u32> {
        steps
            .iter()
            .filter_map(|s| match *s {
                CopyStep::LoadWord { bytes, .. } => Some(bytes),
                _ => None,
            })
            .collect()
    }

    fn movblks(steps: &[CopyStep]) -> usize {
        steps
            .iter()
            .filter(|s| matches!(s, CopyStep::Movblk { .. }))
            .count()
    }

    /// Runs the steps on a byte array whose every byte differs from its neighbours' (so a
    /// byte from the wrong offset shows), checking each step's rules on the way; afterwards
    /// every byte of [dst, dst + n) must have been written exactly once with the byte at the
    /// same offset from src, and nothing else written.
    fn check_copy(kind: MemcpyKind, cost: MemcpyCost, src: u64, dst: u64, n: u64, line: u64) {
        check_copy_chunks(kind, cost, (src, dst, n), line, 0);
    }

    /// `check_copy` with `chunk`-byte destination chunks offered; every other chunk is
    /// declined (and must then come back as movblks), the rest copied whole.
    fn check_copy_chunks(
        kind: MemcpyKind,
        cost: MemcpyCost,
        (src, dst, n): (u64, u64, u64),
        line: u64,
        chunk: u64,
    ) {
        let mut memory = ModelMemory::new((src.max(dst) + n + 2 * line) as usize);
        let mut loaded: Option<(u64, u32)> = None;
        let word = cost.word_bytes;
        let what =
            format!("{kind:?} src {src} dst {dst} n {n} line {line} word {word} chunk {chunk}");
        // software_nt combines in lines twice the first level's (like the preset's 64-byte
        // memory line over 32-byte first-level lines).
        let nt_line = 2 * line;
        let dst_start = dst;
        let mut expansion = MemcpyExpansion::new(kind, cost, src, dst, n, line)
            .with_chunks(chunk)
            .with_nt_line(nt_line);
        let mut offered = 0;
        let (mut non_temporal, mut fenced) = (0u64, false);
        while let Some(step) = expansion.next() {
            match step {
                CopyStep::Chunk {
                    src: from,
                    dst,
                    bytes,
                } => {
                    check_no_load_pending(loaded, "chunk", &what);
                    assert_eq!((bytes, dst % chunk), (chunk, 0), "{what}: {step:?}");
                    offered += 1;
                    if offered % 2 == 0 {
                        expansion.decline(step);
                        continue;
                    }
                    memory.copy(from, dst, bytes);
                }
                CopyStep::Compute(k) => assert!(k > 0, "{what}: empty compute"),
                CopyStep::LoadWord { src, bytes } => {
                    assert!(loaded.is_none(), "{what}: two loads in a row");
                    check_load(&step, word, line, &what);
                    loaded = Some((src, bytes));
                }
                CopyStep::Fence => {
                    check_fence(kind, fenced, non_temporal, &what);
                    fenced = true;
                }
                CopyStep::StoreWord {
                    dst,
                    src: from,
                    bytes,
                }
                | CopyStep::StoreNt {
                    dst,
                    src: from,
                    bytes,
                } => {
                    assert!(!fenced, "{what}: a store after the fence");
                    if matches!(step, CopyStep::StoreNt { .. }) {
                        check_nt_store(kind, &step, (dst_start, n), nt_line, &what);
                        non_temporal += 1;
                    }
                    assert_eq!(loaded.take(), Some((from, bytes)), "{what}: {step:?}");
                    let last = dst + u64::from(bytes) - 1;
                    assert_eq!(dst / word, last / word, "{what}: {step:?} crosses a word");
                    memory.copy(from, dst, u64::from(bytes));
                }
                CopyStep::Movblk { src: from, dst } => {
                    check_no_load_pending(loaded, "movblk", &what);
                    check_movblk(kind, &step, line, &what);
                    memory.copy(from, dst, line);
                }
            }
        }
        assert!(loaded.is_none(), "{what}: a load without its store");
        assert_eq!(fenced, non_temporal > 0, "{what}: fence");
        check_nt_coverage(kind, non_temporal, (dst, n), nt_line, word, &what);
        memory.assert_copied_once(src, dst, n, &what);
    }

    /// Under software_nt, every byte of every whole destination line of `nt_line` bytes went
    /// non-temporal: at least one store per word of each such line.
    fn check_nt_coverage(
        kind: MemcpyKind,
        non_temporal: u64,
        (dst, n): (u64, u64),
        nt_line: u64,
        word: u64,
        what: &str,
    ) {
        if kind != MemcpyKind::SoftwareNt {
            return;
        }
        let first = dst.div_ceil(nt_line) * nt_line;
        let whole = ((dst + n) / nt_line * nt_line).saturating_sub(first);
        let words_per_line = nt_line.div_ceil(word);
        assert!(
            non_temporal >= whole / nt_line * words_per_line,
            "{what}: {non_temporal} non-temporal stores for {whole} bytes of whole lines"
        );
    }

    /// A chunk or a movblk never comes between a load and its store.
    fn check_no_load_pending(loaded: Option<(u64, u32)>, step: &str, what: &str) {
        assert!(
            loaded.is_none(),
            "{what}: {step} between a load and its store"
        );
    }

    /// One fence, software_nt's only, after its non-temporal stores.
    fn check_fence(kind: MemcpyKind, fenced: bool, non_temporal: u64, what: &str) {
        assert_eq!(kind, MemcpyKind::SoftwareNt, "{what}: fence");
        assert!(!fenced, "{what}: two fences");
        assert!(
            non_temporal > 0,
            "{what}: a fence without non-temporal stores"
        );
    }

    /// A movblk is the movblk routine's, to a line-aligned destination.
    fn check_movblk(kind: MemcpyKind, step: &CopyStep, line: u64, what: &str) {
        let CopyStep::Movblk { dst, .. } = *step else {
            unreachable!("{what}: {step:?} is not a movblk")
        };
        assert_eq!(kind, MemcpyKind::Movblk, "{what}: movblk in software");
        assert_eq!(dst % line, 0, "{what}: {step:?} dst not aligned");
    }

    /// A word load: 1 to `word` bytes within one line.
    fn check_load(step: &CopyStep, word: u64, line: u64, what: &str) {
        let CopyStep::LoadWord { src, bytes } = *step else {
            unreachable!("{what}: {step:?} is not a load")
        };
        assert!((1..=word).contains(&u64::from(bytes)), "{what}: {step:?}");
        let last = src + u64::from(bytes) - 1;
        assert_eq!(src / line, last / line, "{what}: {step:?} crosses a line");
    }

    /// A non-temporal store is software_nt's, and lies inside a whole destination line of the
    /// write-combining buffers' size (`nt_line`) within [dst_start, dst_start + n).
    fn check_nt_store(
        kind: MemcpyKind,
        step: &CopyStep,
        (dst_start, n): (u64, u64),
        nt_line: u64,
        what: &str,
    ) {
        let CopyStep::StoreNt { dst, .. } = *step else {
            unreachable!("{what}: {step:?} is not a non-temporal store")
        };
        assert_eq!(kind, MemcpyKind::SoftwareNt, "{what}: {step:?}");
        let line_start = dst - dst % nt_line;
        assert!(
            line_start >= dst_start && line_start + nt_line <= dst_start + n,
            "{what}: {step:?} outside a whole {nt_line}-byte line"
        );
    }

    /// A byte array whose every byte differs from its neighbours' (so a byte from the wrong
    /// offset shows), with a count of the writes to each byte.
    struct ModelMemory {
        original: Vec<u8>,
        memory: Vec<u8>,
        writes: Vec<u32>,
    }

    impl ModelMemory {
        fn new(size: usize) -> ModelMemory {
            let original: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
            ModelMemory {
                memory: original.clone(),
                original,
                writes: vec![0u32; size],
            }
        }

        /// Copies `bytes` bytes from the original at `from` to `dst`.
        fn copy(&mut self, from: u64, dst: u64, bytes: u64) {
            for k in 0..bytes {
                self.memory[(dst + k) as usize] = self.original[(from + k) as usize];
                self.writes[(dst + k) as usize] += 1;
            }
        }

        /// Every byte of [dst, dst + n) was written exactly once with the byte at the same
        /// offset from src, and nothing else was written.
        fn assert_copied_once(&self, src: u64, dst: u64, n: u64, what: &str) {
            for a in 0..self.memory.len() as u64 {
                let inside = (dst..dst + n).contains(&a);
                assert_eq!(
                    self.writes[a as usize], inside as u32,
                    "{what}: byte {a} writes"
                );
                let expected = if inside {
                    self.original[(src + a - dst) as usize]
                } else {
                    self.original[a as usize]
                };
                assert_eq!(self.memory[a as usize], expected, "{what}: byte {a}");
            }
        }
    }

    #[test]
    fn every_byte_copied_once_from_the_matching_source_byte() {
        let mut rng = SplitMix64::new(16);
        for case in 0..3000 {
            let line = [16u64, 32, 64][case % 3];
            let word = [1u64, 4, 8, 3][(case / 3) % 4];
            let n = match case % 5 {
                0 => 1 + rng.below(line),            // shorter than a line
                1 => line,                           // exactly a line
                2 => line + rng.below(line),         // head-only cases among these
                _ => 1 + rng.below(12 * line + 100), // many blocks and a tail
            };
            let src = rng.below(4 * line);
            // dst after the source range, so the two never overlap.
            let dst = src + n + rng.below(3 * line);
            let cost = MemcpyCost {
                call_instructions: rng.below(3),
                word_bytes: word,
                check_instructions: rng.below(3),
                loop_instructions: rng.below(3),
            };
            for kind in [
                MemcpyKind::Software,
                MemcpyKind::Movblk,
                MemcpyKind::SoftwareNt,
            ] {
                check_copy(kind, cost, src, dst, n, line);
                check_copy(kind, cost, dst, src, n, line);
                let chunk = line << (case % 3);
                check_copy_chunks(kind, cost, (src, dst, n), line, chunk);
            }
        }
    }

    /// The digest's network example: 1500 B to an aligned dst from a src 52 bytes past a line
    /// start (20 into its line): 1500 / 32 = 46 movblks (1472 B), then a 28-byte tail that
    /// starts 20 bytes into a source line: chunks of 4 up to the source line boundary 12 bytes
    /// on (3) and 16 bytes after it (4).
    #[test]
    fn payload_of_1500_bytes_is_46_movblks_and_a_tail_of_7_words() {
        let (dst, src) = (0x10_0000, 0x20_0000 + 52);
        let s = steps(MemcpyKind::Movblk, COST, src, dst, 1500);
        assert_eq!(movblks(&s), 46);
        assert_eq!(chunks(&s), [4; 7]);
        assert_eq!(s[0], CopyStep::Compute(10 + 6));
        assert_eq!(s[1], CopyStep::Compute(2));
        assert_eq!(s[2], CopyStep::Movblk { src, dst });
        assert_eq!(
            s[2 * 46],
            CopyStep::Movblk {
                src: src + 45 * 32,
                dst: dst + 45 * 32
            }
        );
        assert_eq!(
            s[2 * 46 + 1],
            CopyStep::LoadWord {
                src: src + 1472,
                bytes: 4
            }
        );
        assert_eq!(
            *s.last().unwrap(),
            CopyStep::StoreWord {
                dst: dst + 1496,
                src: src + 1496,
                bytes: 4
            }
        );
        // call + check, 46 x (2 loop + 1 movblk), 7 x (load + store).
        assert_eq!(instructions(&s), 16 + 46 * 3 + 14);
        assert_eq!(
            MemcpyExpansion::new(MemcpyKind::Movblk, COST, src, dst, 1500, 32).movblks(),
            46
        );
        // Software: source line boundaries fall on destination word boundaries (12 bytes
        // in, then every 32), so every chunk is a whole word: 375 of them.
        let s = steps(MemcpyKind::Software, COST, src, dst, 1500);
        assert_eq!(chunks(&s), [4; 375]);
        assert_eq!(instructions(&s), 10 + 2 * 375);
        assert_eq!(movblks(&s), 0);
    }

    /// A src 2 bytes into a word: its line boundaries (offsets 30 and 62) split two
    /// destination words, so 64 bytes take 16 + 2 chunks.
    #[test]
    fn source_line_boundaries_split_words() {
        let s = steps(MemcpyKind::Software, COST, 0x2002, 0x1000, 64);
        let mut expected = vec![4; 7];
        expected.extend([2, 2]);
        expected.extend([4; 7]);
        expected.extend([2, 2]);
        assert_eq!(chunks(&s), expected);
        assert_eq!(instructions(&s), 10 + 2 * 18);
    }

    /// dst 4 bytes before a line: a 4-byte head, then lines. With 35 bytes left after the
    /// head (n = 39) one movblk and a 3-byte tail; with 31 (n = 35) no whole line remains, so
    /// all of it is software even though n >= line.
    #[test]
    fn head_then_blocks_or_software_when_no_line_remains() {
        let dst = 0x1000 - 4;
        let s = steps(MemcpyKind::Movblk, COST, 0x3000, dst, 39);
        assert_eq!(
            s,
            [
                CopyStep::Compute(16),
                CopyStep::LoadWord {
                    src: 0x3000,
                    bytes: 4
                },
                CopyStep::StoreWord {
                    dst,
                    src: 0x3000,
                    bytes: 4
                },
                CopyStep::Compute(2),
                CopyStep::Movblk {
                    src: 0x3004,
                    dst: 0x1000
                },
                CopyStep::LoadWord {
                    src: 0x3024,
                    bytes: 3
                },
                CopyStep::StoreWord {
                    dst: 0x1020,
                    src: 0x3024,
                    bytes: 3
                },
            ]
        );
        let s = steps(MemcpyKind::Movblk, COST, 0x3000, dst, 35);
        assert_eq!(movblks(&s), 0);
        assert_eq!(chunks(&s), [4, 4, 4, 4, 4, 4, 4, 4, 3]);
        assert_eq!(instructions(&s), 16 + 2 * 9);
        // Below one line: software after the check.
        let s = steps(MemcpyKind::Movblk, COST, 0x3000, 0x1000, 31);
        assert_eq!(movblks(&s), 0);
        assert_eq!(instructions(&s), 16 + 2 * 8);
        // Exactly one aligned line: one movblk, nothing else.
        let s = steps(MemcpyKind::Movblk, COST, 0x3001, 0x1000, 32);
        assert_eq!(
            s,
            [
                CopyStep::Compute(16),
                CopyStep::Compute(2),
                CopyStep::Movblk {
                    src: 0x3001,
                    dst: 0x1000
                }
            ]
        );
    }

    /// Zero costs emit no empty computes: a movblk copy of whole lines is only movblks.
    #[test]
    fn zero_costs_emit_no_compute() {
        let free = MemcpyCost {
            call_instructions: 0,
            word_bytes: 8,
            check_instructions: 0,
            loop_instructions: 0,
        };
        let s = steps(MemcpyKind::Movblk, free, 0x3008, 0x1000, 96);
        assert_eq!(
            s,
            (0..3)
                .map(|i| CopyStep::Movblk {
                    src: 0x3008 + 32 * i,
                    dst: 0x1000 + 32 * i
                })
                .collect::<Vec<_>>()
        );
        let s = steps(MemcpyKind::Software, free, 0x3000, 0x1000, 16);
        assert_eq!(chunks(&s), [8, 8]);
        assert_eq!(instructions(&s), 4);
        // The software kind never checks: only the call is paid.
        let s = steps(MemcpyKind::Software, COST, 0x3000, 0x1000, 4);
        assert_eq!(s[0], CopyStep::Compute(10));
    }

    /// Whole destination chunks of the movblk part are offered first; a declined one comes
    /// back as its movblks; copies with no whole chunk are as without chunks.
    #[test]
    fn whole_destination_chunks_are_offered_and_declined_ones_run_as_movblks() {
        let free = MemcpyCost {
            call_instructions: 0,
            word_bytes: 8,
            check_instructions: 0,
            loop_instructions: 1,
        };
        // 0x2f00..0x5100: head none (dst line-aligned), blocks 0x2f00..0x5100 in 32 B;
        // whole 4 KB chunks: 0x3000..0x4000, 0x4000..0x5000.
        let (src, dst, n) = (0x10_0040, 0x2f00, 0x2200);
        let mut e =
            MemcpyExpansion::new(MemcpyKind::Movblk, free, src, dst, n, 32).with_chunks(4096);
        let mut got = Vec::new();
        let mut declined = false;
        while let Some(step) = e.next() {
            if let CopyStep::Chunk { dst: 0x4000, .. } = step {
                if !declined {
                    declined = true;
                    e.decline(step);
                    continue;
                }
            }
            got.push(step);
        }
        let chunk_dsts: Vec<u64> = got
            .iter()
            .filter_map(|s| match *s {
                CopyStep::Chunk { dst, .. } => Some(dst),
                _ => None,
            })
            .collect();
        assert_eq!(chunk_dsts, [0x3000]);
        // 0x100 before the first chunk, 0x1000 declined, 0x100 after: 8 + 128 + 8 movblks.
        assert_eq!(movblks(&got), 8 + 128 + 8);
        // One loop step per movblk, one per chunk, the declined chunk's standing for its
        // first movblk.
        assert_eq!(instructions(&got), 2 * (8 + 128 + 8) + 2);
        // Without chunks, or with none whole, the steps are the plain movblk memcpy's.
        for (dst, n) in [(0x2f00, 0x1000), (0x3000, 0xfe0)] {
            let plain: Vec<_> =
                MemcpyExpansion::new(MemcpyKind::Movblk, COST, src, dst, n, 32).collect();
            let chunked: Vec<_> = MemcpyExpansion::new(MemcpyKind::Movblk, COST, src, dst, n, 32)
                .with_chunks(4096)
                .collect();
            assert_eq!(plain, chunked, "dst {dst:#x} n {n:#x}");
        }
    }

    /// software_nt with 64-byte write-combining lines over 32-byte first-level lines: an
    /// aligned 4 KB copy is call + check, then 1024 word loads each followed by a
    /// non-temporal store, then the fence; a destination 8 bytes past a 64-byte boundary
    /// stores its 56-byte head and its 8-byte tail the ordinary way.
    #[test]
    fn software_nt_stores_whole_memory_lines_non_temporally_then_fences() {
        let expansion = |dst: u64, n: u64| -> Vec<CopyStep> {
            MemcpyExpansion::new(MemcpyKind::SoftwareNt, COST, 0x8000, dst, n, 32)
                .with_nt_line(64)
                .collect()
        };
        let count = |s: &[CopyStep], nt: bool| {
            s.iter()
                .filter(|x| match x {
                    CopyStep::StoreNt { .. } => nt,
                    CopyStep::StoreWord { .. } => !nt,
                    _ => false,
                })
                .count()
        };
        let s = expansion(0x1_0000, 4096);
        assert_eq!(s[0], CopyStep::Compute(10 + 6));
        assert_eq!((count(&s, true), count(&s, false)), (1024, 0));
        assert_eq!(chunks(&s), [4; 1024]);
        assert_eq!(*s.last().unwrap(), CopyStep::Fence);
        assert_eq!(movblks(&s), 0);
        assert_eq!(
            s[2],
            CopyStep::StoreNt {
                dst: 0x1_0000,
                src: 0x8000,
                bytes: 4
            }
        );
        // 0x1_0008 + 4096: head 56 bytes (14 words), 63 whole lines (1008 words), tail 8.
        let s = expansion(0x1_0008, 4096);
        assert_eq!((count(&s, true), count(&s, false)), (1008, 14 + 2));
        assert_eq!(*s.last().unwrap(), CopyStep::Fence);
        // No whole 64-byte line: no non-temporal store and no fence.
        let s = expansion(0x1_0020, 64);
        assert_eq!((count(&s, true), count(&s, false)), (0, 16));
        assert!(!s.contains(&CopyStep::Fence));
        // Without with_nt_line it cuts at first-level lines.
        let s: Vec<_> =
            MemcpyExpansion::new(MemcpyKind::SoftwareNt, COST, 0x8000, 0x1_0020, 64, 32).collect();
        assert_eq!((count(&s, true), count(&s, false)), (16, 0));
    }
}
