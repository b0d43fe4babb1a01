//! The event streams of the stand-in kinds (docs/hybrid_workloads.md), generated as they
//! are read. Every stream opens with a resident map of its footprint (`N`: each page gets a
//! frame on first touch, no fault, no zeroing traffic), then gives `C 3` and one access,
//! over and over (one access per 4 instructions), and ends with the compute that makes its
//! instruction count exact. Reopening a spec gives the same stream again (loops, copies).
//!
//! - fp_stream: sweeps over 4 arrays of size/4 bytes, 8-byte elements; per element a load of
//!   arrays 0, 1, 2 and a store to array 3. A sweep is drawn hot with probability 0.7 and
//!   then covers the hot quarter of every array (the same quarter of each), else all of
//!   them; the hot quarter is quarter (t / period) mod 4 at the sweep's start t.
//! - stream_rw: sweeps over 2 arrays of size/2 bytes; per element a load of the source and a
//!   store to the destination; they swap roles after each sweep.
//! - pointer_chase: nodes are lines; each load visits a line drawn uniformly in a page drawn
//!   Zipf(0.8) (ranks laid on pages by a seeded permutation); every 10th access stores to
//!   the node just loaded. Four chains take turns: the load of chain 0 is a dependent load
//!   (`Q`), which waits for every older load, so each round of four issues once the round
//!   before has its data: four misses in flight, each chain's next node after its last.
//! - zipf_drift: independent loads and stores (every 5th access) of a line drawn uniformly
//!   in a page drawn Zipf(1.0); every 5 ms the ranks are laid on pages by a new permutation.

use super::spec::{
    Kind, Spec, BASE, CHAINS, COMPUTE_PER_ACCESS, ELEMENT_BYTES, FP_ARRAYS, FP_HOT_SWEEPS, LINE,
    PAGE,
};
use super::zipf::{permutation, Zipf};
use crate::error::Result;
use crate::rng::SplitMix64;
use crate::workload::program::{Event, ProgramWriter};
use crate::workload::source::EventSource;
use std::path::Path;

/// Mixed into the seed for the page permutations, so they do not repeat the access draws.
const SHUFFLE_SALT: u64 = 0x5EED_0F5A_6E5F_u64;

/// One stand-in's event stream.
pub struct StandinSource {
    spec: Spec,
    name: String,
    /// Instructions given out (the opening map counts one).
    emitted: u64,
    /// The access that follows the compute just given out.
    pending: Option<Event>,
    pattern: Pattern,
    rng: SplitMix64,
}

enum Pattern {
    FpStream(FpStream),
    StreamRw(StreamRw),
    Pages(ZipfPages),
}

impl StandinSource {
    /// The stream of the spec at `path`.
    pub fn open(path: &Path) -> Result<StandinSource> {
        Ok(StandinSource::new(
            Spec::read(path)?,
            &path.display().to_string(),
        ))
    }

    /// The stream of `spec`; `name` is what locations name.
    pub fn new(spec: Spec, name: &str) -> StandinSource {
        let elements = |parts: u64| spec.bytes() / parts / ELEMENT_BYTES;
        let pattern = match spec.kind {
            Kind::FpStream => Pattern::FpStream(FpStream {
                elements: elements(FP_ARRAYS),
                period: spec.period_instructions(),
                lo: 0,
                hi: 0,
                i: 0,
                array: 0,
            }),
            Kind::StreamRw => Pattern::StreamRw(StreamRw {
                elements: elements(2),
                i: 0,
                store: false,
                sweep: 0,
            }),
            Kind::PointerChase | Kind::ZipfDrift => {
                let pages = (spec.bytes() / PAGE) as usize;
                let info = spec.info();
                Pattern::Pages(ZipfPages {
                    zipf: Zipf::new(pages, info.zipf_exponent),
                    pages: permutation(pages, &mut shuffle_rng(spec.seed, 0)),
                    chained: spec.kind == Kind::PointerChase,
                    store_every: info.store_every,
                    period: spec.period_instructions(),
                    epoch: 0,
                    seed: spec.seed,
                    last: BASE,
                    accesses: 0,
                    loads: 0,
                })
            }
        };
        StandinSource {
            rng: SplitMix64::new(spec.seed),
            spec,
            name: name.to_string(),
            emitted: 0,
            pending: None,
            pattern,
        }
    }
}

impl EventSource for StandinSource {
    fn next_event(&mut self) -> Result<Option<Event>> {
        if self.emitted == 0 {
            self.emitted = 1;
            return Ok(Some(Event::MapResident {
                vaddr: BASE,
                bytes: self.spec.bytes(),
            }));
        }
        if let Some(access) = self.pending.take() {
            self.emitted += 1;
            return Ok(Some(access));
        }
        let left = self.spec.instructions - self.emitted;
        if left == 0 {
            return Ok(None);
        }
        if left <= COMPUTE_PER_ACCESS {
            self.emitted += left;
            return Ok(Some(Event::Compute(left)));
        }
        self.emitted += COMPUTE_PER_ACCESS;
        let at = self.emitted;
        let rng = &mut self.rng;
        self.pending = Some(match &mut self.pattern {
            Pattern::FpStream(p) => p.next(at, rng),
            Pattern::StreamRw(p) => p.next(),
            Pattern::Pages(p) => p.next(at, rng),
        });
        Ok(Some(Event::Compute(COMPUTE_PER_ACCESS)))
    }

    fn location(&self) -> String {
        format!(
            "{} ({} stand-in, after {} instructions)",
            self.name,
            self.spec.info().name,
            self.emitted
        )
    }

    fn starts_as_child(&self) -> bool {
        false
    }
}

/// The generator of epoch `epoch`'s page permutation.
fn shuffle_rng(seed: u64, epoch: u64) -> SplitMix64 {
    SplitMix64::new(SplitMix64::nth(seed ^ SHUFFLE_SALT, epoch))
}

struct FpStream {
    /// Elements per array.
    elements: u64,
    /// Instructions between moves of the hot quarter.
    period: u64,
    /// The current sweep's elements [lo, hi).
    lo: u64,
    hi: u64,
    /// The next element and the array its next access goes to.
    i: u64,
    array: u64,
}

impl FpStream {
    /// The access at instruction `at`.
    fn next(&mut self, at: u64, rng: &mut SplitMix64) -> Event {
        if self.array == 0 && self.i == self.hi {
            let quarter = self.elements / 4;
            if rng.unit() < FP_HOT_SWEEPS {
                self.lo = (at / self.period % 4) * quarter;
                self.hi = self.lo + quarter;
            } else {
                self.lo = 0;
                self.hi = self.elements;
            }
            self.i = self.lo;
        }
        let addr = BASE + (self.array * self.elements + self.i) * ELEMENT_BYTES;
        let store = self.array == FP_ARRAYS - 1;
        self.array += 1;
        if self.array == FP_ARRAYS {
            self.array = 0;
            self.i += 1;
        }
        if store {
            Event::Store(addr)
        } else {
            Event::Load(addr)
        }
    }
}

struct StreamRw {
    /// Elements per array.
    elements: u64,
    i: u64,
    /// Whether the next access is the element's store.
    store: bool,
    /// Sweeps done: array sweep % 2 is the source.
    sweep: u64,
}

impl StreamRw {
    fn next(&mut self) -> Event {
        let src = self.sweep % 2;
        let array = if self.store { 1 - src } else { src };
        let addr = BASE + (array * self.elements + self.i) * ELEMENT_BYTES;
        if !self.store {
            self.store = true;
            return Event::Load(addr);
        }
        self.store = false;
        self.i += 1;
        if self.i == self.elements {
            self.i = 0;
            self.sweep += 1;
        }
        Event::Store(addr)
    }
}

struct ZipfPages {
    zipf: Zipf,
    /// pages[rank]: the page (index in the footprint) of that popularity rank.
    pages: Vec<u32>,
    /// Pointer chasing: chain 0's loads are dependent; stores go to the node just loaded.
    chained: bool,
    store_every: u64,
    /// Instructions between reshuffles (0: never).
    period: u64,
    epoch: u64,
    seed: u64,
    /// The line of the last load.
    last: u64,
    accesses: u64,
    loads: u64,
}

impl ZipfPages {
    fn draw_line(&mut self, rng: &mut SplitMix64) -> u64 {
        let page = self.pages[self.zipf.draw(rng)] as u64;
        BASE + page * PAGE + rng.below(PAGE / LINE) * LINE
    }

    fn next(&mut self, at: u64, rng: &mut SplitMix64) -> Event {
        if self.period > 0 && at / self.period != self.epoch {
            self.epoch = at / self.period;
            self.pages = permutation(self.pages.len(), &mut shuffle_rng(self.seed, self.epoch));
        }
        self.accesses += 1;
        if self.accesses % self.store_every == 0 {
            return Event::Store(if self.chained {
                self.last
            } else {
                self.draw_line(rng)
            });
        }
        let addr = self.draw_line(rng);
        self.last = addr;
        let dependent = self.chained && self.loads % CHAINS == 0;
        self.loads += 1;
        if dependent {
            Event::LoadDependent(addr)
        } else {
            Event::Load(addr)
        }
    }
}

/// Writes the first `instructions` instructions (at most the spec's) of the stand-in at
/// `spec` as a bulksim trace at `out` (text, or binary for `.btrace`), for inspection.
/// Returns the events written.
pub fn write_prefix(spec: &Path, out: &Path, instructions: u64) -> Result<u64> {
    let mut s = Spec::read(spec)?;
    s.instructions = s.instructions.min(instructions.max(1));
    let mut source = StandinSource::new(s, &spec.display().to_string());
    let mut w = ProgramWriter::create(out, false)?;
    let mut events = 0;
    while let Some(e) = source.next_event()? {
        w.write(&e)?;
        events += 1;
    }
    w.finish()?;
    Ok(events)
}
