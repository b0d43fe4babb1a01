//! The writers `convert` ends in: bulksim workloads (every event as is), the post-LLC line
//! formats (msc, ramulator-cpu) and the request trace formats of trace mode (native,
//! dramsim3, ramulator). Below-the-cache events arrive here — `Compute`, `MemRead`,
//! `MemWrite`, `Memcpy`, `Meminit` — and each format writes what it can express:
//!
//! - instruction gaps: the `Compute` instructions since the last record (msc, ramulator-cpu);
//! - cycles (native, dramsim3): the number of instructions before the request, every request
//!   counting one: one instruction per memory-controller cycle, bulksim's documented choice;
//! - a copy or initialization: a native `C`/`I` record; in formats without bulk records, the
//!   line requests a CPU copy loop would send (reads of the source lines, writes of the
//!   destination lines);
//! - a ramulator-cpu write-back travels with the read just before it (no instructions
//!   between them); a write-back with no such read cannot be written, and is an error.

use super::cache_filter::MEMORY_LINE;
use crate::error::{Error, Result};
use crate::workload::program::{Event, ProgramWriter};
use crate::workload::trace::TraceFormat;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The formats `convert` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Bulksim,
    Msc,
    RamulatorCpu,
    Request(TraceFormat),
}

impl OutputFormat {
    pub const NAMES: [&'static str; 6] = [
        "bulksim",
        "msc",
        "ramulator-cpu",
        "native",
        "dramsim3",
        "ramulator",
    ];

    pub fn from_name(name: &str) -> Result<OutputFormat> {
        Ok(match name {
            "bulksim" => OutputFormat::Bulksim,
            "msc" => OutputFormat::Msc,
            "ramulator-cpu" => OutputFormat::RamulatorCpu,
            "native" => OutputFormat::Request(TraceFormat::Native),
            "dramsim3" => OutputFormat::Request(TraceFormat::Dramsim3),
            "ramulator" => OutputFormat::Request(TraceFormat::Ramulator),
            _ => {
                return Err(Error::Trace(format!(
                    "cannot convert to '{name}'; output formats: {}",
                    Self::NAMES.join(", ")
                )))
            }
        })
    }
}

/// What a conversion wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub reads: u64,
    pub writes: u64,
    pub copies: u64,
    pub inits: u64,
    /// Instructions the output stands for (requests count one each).
    pub instructions: u64,
}

enum Out {
    Bulksim(ProgramWriter),
    Text(BufWriter<File>),
}

pub struct Sink {
    format: OutputFormat,
    out: Out,
    path: String,
    /// `Compute` instructions since the last record written.
    gap: u64,
    /// A ramulator-cpu read not yet written: (gap, address, write-back).
    held: Option<(u64, u64, Option<u64>)>,
    pub written: Written,
}

impl Sink {
    pub fn create(path: &Path, format: OutputFormat) -> Result<Sink> {
        let name = path.display().to_string();
        let out = match format {
            OutputFormat::Bulksim => Out::Bulksim(ProgramWriter::create(path, false)?),
            _ => Out::Text(BufWriter::with_capacity(
                1 << 16,
                File::create(path).map_err(|e| Error::Io(format!("{name}: {e}")))?,
            )),
        };
        Ok(Sink {
            format,
            out,
            path: name,
            gap: 0,
            held: None,
            written: Written::default(),
        })
    }

    /// Writes one event; `at` names the input record it came from, for errors.
    pub fn event(&mut self, e: &Event, at: &dyn Fn() -> String) -> Result<()> {
        if let Out::Bulksim(w) = &mut self.out {
            count(&mut self.written, e);
            return w.write(e);
        }
        match *e {
            Event::Compute(n) => {
                self.gap += n;
                self.written.instructions += n;
            }
            Event::MemRead(a) | Event::MemReadDependent(a) => self.request(false, a, at)?,
            Event::MemWrite(a) => self.request(true, a, at)?,
            Event::Memcpy { src, dst, bytes } => {
                if self.format == OutputFormat::Request(TraceFormat::Native) {
                    self.written.copies += 1;
                    let cycle = self.take_cycle();
                    self.line(format_args!("{cycle},C,{src:#x},{dst:#x},{bytes}"))?;
                } else {
                    for line in lines(src, bytes) {
                        self.request(false, line, at)?;
                    }
                    for line in lines(dst, bytes) {
                        self.request(true, line, at)?;
                    }
                }
            }
            Event::Meminit { dst, bytes, value } => {
                if self.format == OutputFormat::Request(TraceFormat::Native) {
                    self.written.inits += 1;
                    let cycle = self.take_cycle();
                    self.line(format_args!("{cycle},I,{dst:#x},{bytes},{value}"))?;
                } else {
                    for line in lines(dst, bytes) {
                        self.request(true, line, at)?;
                    }
                }
            }
            // Address-space bookkeeping has no request form.
            _ => {}
        }
        Ok(())
    }

    /// The cycle of the next request (instructions before it), counting the request.
    fn take_cycle(&mut self) -> u64 {
        let cycle = self.written.instructions;
        self.written.instructions += 1;
        self.gap = 0;
        cycle
    }

    fn request(&mut self, write: bool, addr: u64, at: &dyn Fn() -> String) -> Result<()> {
        if write {
            self.written.writes += 1;
        } else {
            self.written.reads += 1;
        }
        let gap = self.gap;
        let cycle = self.take_cycle();
        match (self.format, write) {
            (OutputFormat::Msc, false) => self.line(format_args!("{gap} R {addr:#x} 0x0")),
            (OutputFormat::Msc, true) => self.line(format_args!("{gap} W {addr:#x}")),
            (OutputFormat::RamulatorCpu, false) => {
                self.flush_held()?;
                self.held = Some((gap, addr, None));
                Ok(())
            }
            (OutputFormat::RamulatorCpu, true) => match &mut self.held {
                Some((_, _, wb @ None)) if gap == 0 => {
                    *wb = Some(addr);
                    Ok(())
                }
                _ => Err(Error::Trace(format!(
                    "{}: the write-back of {addr:#x} follows no read: the ramulator-cpu format \
                     carries a write-back only with the read just before it (convert to msc or \
                     native instead)",
                    at()
                ))),
            },
            (OutputFormat::Request(TraceFormat::Native), w) => {
                let op = if w { 'W' } else { 'R' };
                self.line(format_args!("{cycle},{op},{addr:#x}"))
            }
            (OutputFormat::Request(TraceFormat::Dramsim3), w) => {
                let op = if w { "WRITE" } else { "READ" };
                self.line(format_args!("{addr:#x} {op} {cycle}"))
            }
            (OutputFormat::Request(TraceFormat::Ramulator), w) => {
                let op = if w { "ST" } else { "LD" };
                self.line(format_args!("{op} {addr:#x}"))
            }
            (OutputFormat::Bulksim, _) => unreachable!("bulksim output writes events"),
        }
    }

    fn flush_held(&mut self) -> Result<()> {
        match self.held.take() {
            Some((gap, read, Some(wb))) => self.line(format_args!("{gap} {read} {wb}")),
            Some((gap, read, None)) => self.line(format_args!("{gap} {read}")),
            None => Ok(()),
        }
    }

    fn line(&mut self, text: std::fmt::Arguments) -> Result<()> {
        let Out::Text(w) = &mut self.out else {
            unreachable!("text formats only")
        };
        writeln!(w, "{text}").map_err(|e| Error::Io(format!("{}: {e}", self.path)))
    }

    pub fn finish(mut self) -> Result<Written> {
        self.flush_held()?;
        match self.out {
            Out::Bulksim(w) => w.finish()?,
            Out::Text(mut w) => w
                .flush()
                .map_err(|e| Error::Io(format!("{}: {e}", self.path)))?,
        }
        Ok(self.written)
    }
}

/// The memory lines a range touches (their byte addresses).
fn lines(start: u64, bytes: u64) -> impl Iterator<Item = u64> {
    let first = start / MEMORY_LINE;
    let last = (start + bytes - 1) / MEMORY_LINE;
    (first..=last).map(|l| l * MEMORY_LINE)
}

/// Counts an event written to a bulksim workload.
fn count(w: &mut Written, e: &Event) {
    match *e {
        Event::Compute(n) => w.instructions += n,
        Event::MemRead(_)
        | Event::MemReadDependent(_)
        | Event::Load(_)
        | Event::LoadDependent(_) => {
            w.reads += 1;
            w.instructions += 1
        }
        Event::MemWrite(_) | Event::Store(_) => {
            w.writes += 1;
            w.instructions += 1
        }
        Event::Memcpy { .. } => w.copies += 1,
        Event::Meminit { .. } => w.inits += 1,
        _ => {}
    }
}
