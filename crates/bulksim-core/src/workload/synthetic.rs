//! Synthetic stand-ins for the Rank Assignment paper's programs (its SPEC, PARSEC and NPB
//! traces were never published): post-LLC workload directories, one `thread-<i>.trace` per
//! thread in format v2, generated deterministically from (name, threads, accesses per thread,
//! working set, seed). Each thread maps its memory resident (`N`), then gives `accesses`
//! DRAM accesses — reads (`R`), dependent reads (`D`) and write-backs (`B`), each after a
//! random run of non-memory instructions (`C`) — then exits. This file owns the five
//! generators, their parameters (`KINDS`, docs/rank_assignment.md "Workloads") and the
//! summary of what was written; the fractions are kept exactly (to one access) by error
//! diffusion rather than by chance, and only addresses and instruction gaps are random.

use super::program::{Event, ProgramWriter};
use crate::error::{Error, Result};
use crate::rng::SplitMix64;
use std::path::Path;

const LINE: u64 = 64;
const PAGE: u64 = 4096;
/// Where thread 0's memory starts; thread t's (multi-threaded) follows at t working sets.
pub const BASE: u64 = 0x1000_0000;
/// The most accesses per thread one workload may ask for (about 1.6 GB of text per thread).
pub const MAX_ACCESSES: u64 = 100_000_000;
/// The most threads of a multi-threaded stand-in.
pub const MAX_THREADS: u32 = 64;

/// Which program a stand-in imitates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// GemsFDTD: a stencil, several interleaved sequential read streams and one write stream.
    Gems,
    /// lbm: streaming, reads one grid and writes the other (write-backs as many as reads).
    Lbm,
    /// mcf: pointer chasing, dependent random reads over the working set, few writes.
    Mcf,
    /// MG (NPB): one 8-thread process, stencil streams with 15% of accesses to other threads'
    /// pages (halo exchange with the neighbouring threads); each thread places its own
    /// partition when it starts.
    Share15,
    /// canneal (PARSEC): one 8-thread process, random reads with 60% of accesses to other
    /// threads' pages.
    Share60,
}

/// A stand-in's name, the program it stands for and its parameters (every value *choice*).
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    pub kind: Kind,
    pub name: &'static str,
    pub stands_for: &'static str,
    /// DRAM accesses (reads and write-backs) per 1000 instructions, on average.
    pub mpki: f64,
    /// Of the accesses, write-backs.
    pub write_fraction: f64,
    /// Of the accesses, those to other threads' pages (all of them reads: a thread writes
    /// only its own pages).
    pub shared_fraction: f64,
    /// Threads by default; single-threaded ones take only 1 (run copies with `--copies`).
    pub threads: u32,
    /// Each thread's own pages are placed when it starts, by the thread itself (a `P` map of
    /// its partition), as a program whose threads initialise their own partitions before the
    /// measured region does (NPB's MG); else a page goes where its first access puts it, and a
    /// neighbour's read can place it before its owner touches it.
    pub owners_place_their_pages: bool,
}

pub const KINDS: [KindInfo; 5] = [
    KindInfo {
        kind: Kind::Gems,
        name: "synth-gems",
        stands_for: "GemsFDTD (SPEC CPU2006)",
        mpki: 30.0,
        write_fraction: 0.25,
        shared_fraction: 0.0,
        threads: 1,
        owners_place_their_pages: false,
    },
    KindInfo {
        kind: Kind::Lbm,
        name: "synth-lbm",
        stands_for: "lbm (SPEC CPU2006)",
        mpki: 40.0,
        write_fraction: 0.5,
        shared_fraction: 0.0,
        threads: 1,
        owners_place_their_pages: false,
    },
    KindInfo {
        kind: Kind::Mcf,
        name: "synth-mcf",
        stands_for: "mcf (SPEC CPU2006)",
        mpki: 25.0,
        write_fraction: 0.1,
        shared_fraction: 0.0,
        threads: 1,
        owners_place_their_pages: false,
    },
    KindInfo {
        kind: Kind::Share15,
        name: "synth-share15",
        stands_for: "MG (NPB), 15% of accesses to other threads' pages",
        mpki: 25.0,
        write_fraction: 0.25,
        shared_fraction: 0.15,
        threads: 8,
        owners_place_their_pages: true,
    },
    KindInfo {
        kind: Kind::Share60,
        name: "synth-share60",
        stands_for: "canneal (PARSEC), 60% of accesses to other threads' pages",
        mpki: 30.0,
        write_fraction: 0.15,
        shared_fraction: 0.6,
        threads: 8,
        owners_place_their_pages: false,
    },
];

impl KindInfo {
    pub fn from_name(name: &str) -> Result<&'static KindInfo> {
        KINDS.iter().find(|k| k.name == name).ok_or_else(|| {
            let names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
            Error::Config(format!(
                "unknown synthetic workload '{name}'; expected one of {}",
                names.join(", ")
            ))
        })
    }

    fn multithreaded(&self) -> bool {
        self.threads > 1
    }
}

/// Memory per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkingSet {
    /// 4 MiB per thread: a few MB, as the paper's cache-friendlier programs.
    Small,
    /// 256 MiB per thread: far beyond any cache, pages spread over every bank.
    Large,
}

impl WorkingSet {
    pub fn from_name(name: &str) -> Result<WorkingSet> {
        match name {
            "small" => Ok(WorkingSet::Small),
            "large" => Ok(WorkingSet::Large),
            _ => Err(Error::Config(format!(
                "working set '{name}': expected small (4 MiB per thread) or large (256 MiB per thread)"
            ))),
        }
    }

    pub fn bytes(self) -> u64 {
        match self {
            WorkingSet::Small => 4 << 20,
            WorkingSet::Large => 256 << 20,
        }
    }
}

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct Synthetic {
    pub kind: &'static KindInfo,
    pub threads: u32,
    pub accesses: u64,
    pub working_set: WorkingSet,
    pub seed: u64,
}

/// What was written, summed over the threads (counted as written, for the CLI's summary).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub threads: u32,
    pub instructions: u64,
    pub reads: u64,
    /// Of the reads, dependent ones (`D`).
    pub dependent_reads: u64,
    pub writes: u64,
    /// Accesses to another thread's pages.
    pub shared_accesses: u64,
    /// Distinct pages touched, over all threads (a page two threads touch counts once).
    pub footprint_pages: u64,
}

impl Summary {
    pub fn accesses(&self) -> u64 {
        self.reads + self.writes
    }
}

/// Keeps a fraction exactly: `tick` is true `fraction` of the times, evenly spread.
struct Fraction {
    fraction: f64,
    owed: f64,
}

impl Fraction {
    fn new(fraction: f64) -> Fraction {
        Fraction {
            fraction,
            owed: 0.0,
        }
    }

    fn tick(&mut self) -> bool {
        self.owed += self.fraction;
        if self.owed >= 1.0 - 1e-9 {
            self.owed -= 1.0;
            true
        } else {
            false
        }
    }
}

/// One access: the line's address and how it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Read(u64),
    Dependent(u64),
    Write(u64),
}

/// One thread's access stream.
struct ThreadGen {
    kind: Kind,
    thread: u64,
    threads: u64,
    /// Lines per thread.
    lines: u64,
    rng: SplitMix64,
    /// The sweep position (line within an array) of the streaming kinds.
    cursor: u64,
    /// Which of a cell's accesses comes next (streaming kinds).
    phase: u64,
    /// The grid lbm reads this sweep (0 or 1; it writes the other).
    grid: u64,
    writes: Fraction,
    shared_reads: Fraction,
    /// The last own line read (random kinds write back lines they read).
    last_read: u64,
    /// The neighbour a halo read goes to next (share15: alternately t+1 and t-1).
    neighbour_up: bool,
}

impl ThreadGen {
    fn new(s: &Synthetic, thread: u64) -> ThreadGen {
        let info = s.kind;
        // Reads carry all shared accesses: of the reads, shared / (1 - writes).
        let shared_of_reads = info.shared_fraction / (1.0 - info.write_fraction);
        let mut rng = SplitMix64::new(SplitMix64::nth(s.seed, thread) ^ info.mpki.to_bits());
        let lines = s.working_set.bytes() / LINE;
        let cursor = rng.below(lines / 4);
        ThreadGen {
            kind: info.kind,
            thread,
            threads: s.threads as u64,
            lines,
            rng,
            cursor,
            phase: 0,
            grid: 0,
            writes: Fraction::new(info.write_fraction),
            shared_reads: Fraction::new(shared_of_reads),
            last_read: 0,
            neighbour_up: true,
        }
    }

    /// Thread `t`'s line `i` (of its working set) as an address.
    fn line(&self, t: u64, i: u64) -> u64 {
        BASE + (t * self.lines + i) * LINE
    }

    fn own(&self, i: u64) -> u64 {
        self.line(self.thread, i)
    }

    /// A thread other than this one: a neighbour (halo) or a random one.
    fn other(&mut self, neighbour: bool) -> u64 {
        if neighbour {
            self.neighbour_up = !self.neighbour_up;
            if self.neighbour_up {
                (self.thread + self.threads - 1) % self.threads
            } else {
                (self.thread + 1) % self.threads
            }
        } else {
            (self.thread + 1 + self.rng.below(self.threads - 1)) % self.threads
        }
    }

    fn next(&mut self) -> Access {
        match self.kind {
            // Three input arrays read in step and one output array written: per cell three
            // reads and a write-back (a stencil's sweep over its grids).
            Kind::Gems | Kind::Share15 => {
                let array = self.lines / 4;
                let cell = self.cursor;
                let phase = self.phase;
                self.phase = (self.phase + 1) % 4;
                if self.phase == 0 {
                    self.cursor = (self.cursor + 1) % array;
                }
                if phase == 3 {
                    return Access::Write(self.own(3 * array + cell));
                }
                let i = phase * array + cell;
                if self.kind == Kind::Share15 && self.shared_reads.tick() {
                    // The same place in a neighbour's grid: the halo.
                    let t = self.other(true);
                    return Access::Read(self.line(t, i));
                }
                Access::Read(self.own(i))
            }
            // Read a line of one grid, then write the line of the other; swap grids each sweep.
            Kind::Lbm => {
                let half = self.lines / 2;
                let (src, dst) = if self.grid == 0 { (0, half) } else { (half, 0) };
                let cell = self.cursor;
                self.phase ^= 1;
                if self.phase == 1 {
                    return Access::Read(self.own(src + cell));
                }
                self.cursor += 1;
                if self.cursor == half {
                    self.cursor = 0;
                    self.grid ^= 1;
                }
                Access::Write(self.own(dst + cell))
            }
            Kind::Mcf | Kind::Share60 => {
                if self.writes.tick() {
                    return Access::Write(self.own(self.last_read));
                }
                if self.kind == Kind::Share60 && self.shared_reads.tick() {
                    let t = self.other(false);
                    let i = self.rng.below(self.lines);
                    return Access::Read(self.line(t, i));
                }
                self.last_read = self.rng.below(self.lines);
                let a = self.own(self.last_read);
                if self.kind == Kind::Mcf {
                    Access::Dependent(a)
                } else {
                    Access::Read(a)
                }
            }
        }
    }
}

impl Synthetic {
    /// Checks the request and makes it (threads 0: the stand-in's default).
    pub fn new(
        name: &str,
        threads: u32,
        accesses: u64,
        working_set: &str,
        seed: u64,
    ) -> Result<Synthetic> {
        let kind = KindInfo::from_name(name)?;
        let threads = if threads == 0 { kind.threads } else { threads };
        if !kind.multithreaded() && threads != 1 {
            return Err(Error::Config(format!(
                "threads = {threads}: {name} is single-threaded; run several with --copies (each its own address space)"
            )));
        }
        if kind.multithreaded() && !(2..=MAX_THREADS).contains(&threads) {
            return Err(Error::Config(format!(
                "threads = {threads}: {name} shares pages between threads; expected 2 to {MAX_THREADS}"
            )));
        }
        if !(1..=MAX_ACCESSES).contains(&accesses) {
            return Err(Error::Config(format!(
                "accesses = {accesses}: expected 1 to {MAX_ACCESSES} DRAM accesses per thread"
            )));
        }
        Ok(Synthetic {
            kind,
            threads,
            accesses,
            working_set: WorkingSet::from_name(working_set)?,
            seed,
        })
    }

    /// Writes the workload into `dir`, which must be new or empty.
    pub fn write(&self, dir: &Path) -> Result<Summary> {
        create_empty_dir(dir)?;
        let threads = self.threads as u64;
        let ws = self.working_set.bytes();
        let mut touched = vec![false; (threads * ws / PAGE) as usize];
        let mut summary = Summary {
            threads: self.threads,
            ..Summary::default()
        };
        for t in 0..threads {
            let child = t > 0 && self.kind.multithreaded();
            let path = dir.join(format!("thread-{t}.trace"));
            let mut w = ProgramWriter::create(&path, child)?;
            self.write_prologue(&mut w, t, child, &mut summary)?;
            self.write_accesses(&mut w, t, &mut touched, &mut summary)?;
            w.write(&Event::Exit)?;
            w.finish()?;
        }
        Ok(summary)
    }

    /// Thread `t`'s placement events: thread 0 maps the working set and starts the others;
    /// each thread places its own partition first where owners place their pages.
    fn write_prologue(
        &self,
        w: &mut ProgramWriter,
        t: u64,
        child: bool,
        summary: &mut Summary,
    ) -> Result<()> {
        let threads = self.threads as u64;
        let ws = self.working_set.bytes();
        // The thread's own partition, placed by the thread before any other can reach it
        // (thread 0 before it starts the others).
        let own_partition = Event::MapPopulated {
            vaddr: BASE + t * ws,
            bytes: ws,
        };
        if child && self.kind.owners_place_their_pages {
            w.write(&own_partition)?;
            summary.instructions += 1;
        }
        if !child {
            let bytes = if self.kind.multithreaded() {
                threads * ws
            } else {
                ws
            };
            w.write(&Event::MapResident { vaddr: BASE, bytes })?;
            summary.instructions += 1;
            if self.kind.owners_place_their_pages {
                w.write(&own_partition)?;
                summary.instructions += 1;
            }
            if self.kind.multithreaded() {
                for k in 1..self.threads {
                    w.write(&Event::Spawn(k))?;
                    summary.instructions += 1;
                }
            }
        }
        Ok(())
    }

    /// Thread `t`'s accesses, each after a random compute gap; `touched` marks the pages
    /// reached so far (for the footprint).
    fn write_accesses(
        &self,
        w: &mut ProgramWriter,
        t: u64,
        touched: &mut [bool],
        summary: &mut Summary,
    ) -> Result<()> {
        // Instructions per access on average, the access itself one of them.
        let gap_mean = 1000.0 / self.kind.mpki - 1.0;
        let mut gen = ThreadGen::new(self, t);
        debug_assert_eq!(gen.own(0), BASE + t * self.working_set.bytes());
        let (own_start, own_end) = (gen.own(0), gen.own(gen.lines));
        for _ in 0..self.accesses {
            // Uniform in 0..=2 x mean: the mean is kept, the spacing irregular.
            let gap = gen.rng.below((2.0 * gap_mean).round() as u64 + 1);
            if gap > 0 {
                w.write(&Event::Compute(gap))?;
                summary.instructions += gap;
            }
            let (event, addr) = match gen.next() {
                Access::Read(a) => {
                    summary.reads += 1;
                    (Event::MemRead(a), a)
                }
                Access::Dependent(a) => {
                    summary.reads += 1;
                    summary.dependent_reads += 1;
                    (Event::MemReadDependent(a), a)
                }
                Access::Write(a) => {
                    summary.writes += 1;
                    (Event::MemWrite(a), a)
                }
            };
            w.write(&event)?;
            summary.instructions += 1;
            if !(own_start..own_end).contains(&addr) {
                summary.shared_accesses += 1;
            }
            // Single-threaded stand-ins each have their own space: count per thread.
            let page = ((addr - BASE) / PAGE) as usize;
            if !std::mem::replace(&mut touched[page], true) {
                summary.footprint_pages += 1;
            }
        }
        Ok(())
    }
}

/// Creates `dir`, refusing one that exists and holds anything.
fn create_empty_dir(dir: &Path) -> Result<()> {
    let io = |e: std::io::Error| Error::Io(format!("{}: {e}", dir.display()));
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(io)?;
        if entries.next().is_some() {
            return Err(Error::Io(format!(
                "{}: exists and is not empty; give a new or empty directory",
                dir.display()
            )));
        }
    }
    std::fs::create_dir_all(dir).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accesses(name: &str, n: usize) -> Vec<Access> {
        let s = Synthetic::new(name, 0, 1, "small", 1).unwrap();
        let mut g = ThreadGen::new(&s, 1.min(s.threads as u64 - 1));
        (0..n).map(|_| g.next()).collect()
    }

    /// lbm reads a line of one grid and writes the same line of the other, alternately,
    /// and swaps the grids after a sweep.
    #[test]
    fn lbm_alternates_read_and_write_of_the_same_cell() {
        let a = accesses("synth-lbm", 8);
        for pair in a.chunks(2) {
            let (Access::Read(r), Access::Write(w)) = (pair[0], pair[1]) else {
                panic!("{pair:?}");
            };
            assert_eq!(w - r, (4 << 20) / 2, "the other grid, same cell");
        }
    }

    #[test]
    fn fractions_are_kept_exactly() {
        let mut f = Fraction::new(0.15);
        let n = (0..1000).filter(|_| f.tick()).count();
        assert_eq!(n, 150);
        let mut f = Fraction::new(0.25);
        let ticks: Vec<bool> = (0..8).map(|_| f.tick()).collect();
        assert_eq!(
            ticks,
            [false, false, false, true, false, false, false, true]
        );
    }
}
