//! Workload traces for the full system: per hardware thread, a stream of events — runs of
//! non-memory instructions, loads and stores with virtual addresses, `memcpy`, `meminit`,
//! memory mapping, `fork`, `wait` and `exit`. Version 1, in two encodings read alike:
//!
//! - text (`.trace`): a header line `bulksim-workload 1` (or `bulksim-workload 1 child` for a
//!   thread that only starts when another forks it), then one event per line:
//!   `C n` (n non-memory instructions), `L vaddr`, `S vaddr` (store 8 bytes), `M src dst bytes`,
//!   `I dst bytes value`, `A vaddr bytes` (map; pages appear zeroed on first touch),
//!   `P vaddr bytes` (map populated: pages present and zero from the start, no faults),
//!   `F thread` (fork: that thread starts as a child process with a copy-on-write copy of this
//!   one's memory), `W` (wait for the children to exit), `X` (exit). Version 2 adds
//!   `L vaddr bytes` / `S vaddr bytes` (every line of the range), `K vaddr bytes` /
//!   `G vaddr bytes` (the kernel copies into / out of user memory), `N vaddr bytes` (a
//!   resident map: pages present on first access, no fault), `U vaddr bytes` (unmap), `E`
//!   (exec), `T thread` (start a thread in this process, sharing its memory), `Y thread` (the
//!   recorded schedule: pass the core to that thread), `R vaddr` /
//!   `B vaddr` (a read / write-back of a line below the caches, as post-LLC traces give),
//!   `D vaddr` (a read below the caches that depends on every older load: pointer chasing),
//!   `Q vaddr` (a load through the caches that depends on every older load: pointer chasing
//!   above the caches),
//!   `B src dst` (movblk: one first-level line from `src` to line-aligned `dst` through the
//!   copy engines; both below 2^48 - 256).
//!   Numbers are decimal or 0x-hex; `#` starts a comment line.
//! - binary (`.btrace`): gzip of the magic `BSWL`, a version byte, a child flag byte, then
//!   per event an opcode byte (the text letter) and its operands as LEB128 varints. About a
//!   byte or two per event after compression.
//!
//! A workload is one such file (thread 0) or a directory of `thread-<id>.trace` / `.btrace`.
//! Readers stream and report bad input by file and record (line) number.

use crate::error::{Error, Result};
use crate::request::VADDR_LIMIT;
use crate::workload::lines::{self, read_error};
use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Compute(u64),
    Load(u64),
    Store(u64),
    Memcpy {
        src: u64,
        dst: u64,
        bytes: u64,
    },
    Meminit {
        dst: u64,
        bytes: u64,
        value: u8,
    },
    Map {
        vaddr: u64,
        bytes: u64,
    },
    /// A region whose pages exist already (zeroed, as if touched before the trace began).
    MapPopulated {
        vaddr: u64,
        bytes: u64,
    },
    Fork(u32),
    Wait,
    Exit,
    /// Starts that thread (marked `child`) in this thread's process: it shares the address
    /// space (pthread_create, clone with CLONE_VM). The process ends when its last thread
    /// exits.
    Spawn(u32),
    /// The recorded schedule: the core this thread runs on passes to that thread now, if it
    /// waits there (a capture of a multi-threaded process records where its threads took
    /// turns). Not an instruction.
    Yield(u32),
    /// A load of `bytes` bytes at `vaddr`: one access to every line the range touches.
    LoadRange {
        vaddr: u64,
        bytes: u64,
    },
    /// A store of `bytes` bytes at `vaddr`: one access to every line the range touches.
    StoreRange {
        vaddr: u64,
        bytes: u64,
    },
    /// The kernel copies `bytes` into user memory at `vaddr` (a read-like system call):
    /// stores to every line of the range, run on the thread's core.
    KernelToUser {
        vaddr: u64,
        bytes: u64,
    },
    /// The kernel copies `bytes` out of user memory at `vaddr` (a write-like system call):
    /// loads of every line of the range.
    KernelFromUser {
        vaddr: u64,
        bytes: u64,
    },
    /// Unmaps [vaddr, vaddr + bytes) (page-rounded): its pages' frames lose a reference, and
    /// a later access is an error unless the range is mapped again.
    Unmap {
        vaddr: u64,
        bytes: u64,
    },
    /// A region whose pages were touched before the trace began, made present on their first
    /// access with no fault (zero, untimed): what a trace that starts mid-run, or a program's
    /// initial image, needs.
    MapResident {
        vaddr: u64,
        bytes: u64,
    },
    /// The process replaces its program (`execve`): every mapping and page is dropped.
    Exec,
    /// A read of the line at `vaddr` issued below the caches (post-LLC traces): the core
    /// waits for it like a load miss.
    MemRead(u64),
    /// A write-back of the line at `vaddr` issued below the caches (post-LLC traces): posted,
    /// the core does not wait.
    MemWrite(u64),
    /// A read below the caches like `MemRead` whose address depends on the data of every
    /// older load or read of the thread (pointer chasing): it issues only once they all have
    /// their data.
    MemReadDependent(u64),
    /// A load through the caches like `Load` whose address depends on the data of every older
    /// load or read of the thread (pointer chasing): it issues only once they all have their
    /// data. Text `Q vaddr`, binary code `Q`.
    LoadDependent(u64),
    /// `movblk`: one instruction copying one first-level line's worth of bytes (L) from
    /// `src` (any alignment) to `dst` (L-aligned) through the copy engines
    /// (`copy_engine.policy`); text `B src dst`, binary code `b`.
    Movblk {
        src: u64,
        dst: u64,
    },
}

pub const TEXT_HEADER: &str = "bulksim-workload 2";
/// Headers of the versions read: version 2 adds ranged accesses, kernel copies, unmap, exec,
/// resident maps and accesses below the caches to version 1's events.
const TEXT_HEADERS: [&str; 2] = ["bulksim-workload 1", "bulksim-workload 2"];
const MAGIC: &[u8; 4] = b"BSWL";
const VERSION: u8 = 2;

enum Source {
    Text(Box<dyn BufRead + Send>),
    Binary(BinaryInput),
}

/// The decompressed bytes of a binary trace through a read-ahead buffer: events and their
/// varints are read straight from the buffer, with no call through a boxed reader per byte.
/// The end of the stream is where the gzip trailer (CRC-32 and length) has been checked and
/// nothing follows it in the file, so a corrupt, cut or padded file never reads as complete.
struct BinaryInput {
    /// Boxed: touched only on a refill, and it keeps `Source` small.
    gz: Box<GzDecoder<BufReader<File>>>,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
}

impl BinaryInput {
    const BUFFER: usize = 64 * 1024;

    fn new(file: File) -> BinaryInput {
        BinaryInput {
            gz: Box::new(GzDecoder::new(BufReader::new(file))),
            buf: vec![0; Self::BUFFER].into_boxed_slice(),
            pos: 0,
            end: 0,
        }
    }

    /// Refills the buffer once it is used up; false at the end of the stream.
    #[cold]
    fn refill(&mut self) -> std::io::Result<bool> {
        loop {
            match self.gz.read(&mut self.buf) {
                Ok(n) => {
                    self.pos = 0;
                    self.end = n;
                    if n == 0 && !self.gz.get_mut().fill_buf()?.is_empty() {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            "trailing bytes after the gzip stream",
                        ));
                    }
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(gzip_error(e)),
            }
        }
    }

    /// The next byte, None at the end of the stream.
    #[inline]
    fn byte(&mut self) -> std::io::Result<Option<u8>> {
        if self.pos == self.end && !self.refill()? {
            return Ok(None);
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(Some(b))
    }

    /// A LEB128 varint of at most ten bytes whose value fits 64 bits (the tenth byte carries
    /// only bit 63; any higher bit would be dropped, so it is an error).
    #[inline]
    fn varint(&mut self) -> std::result::Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = match self.byte() {
                Ok(Some(b)) => b,
                Ok(None) => return Err("record cut short".into()),
                Err(e) => return Err(read_error(&e)),
            };
            if shift == 63 && b & 0x7e != 0 {
                return Err("varint longer than 64 bits".into());
            }
            value |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint longer than 64 bits".into())
    }
}

/// A decompression failure in words: a cut file, a checksum that does not match, bad data.
fn gzip_error(e: std::io::Error) -> std::io::Error {
    use std::io::ErrorKind;
    let what = match e.kind() {
        ErrorKind::UnexpectedEof => "the gzip stream is cut short (truncated file)".to_string(),
        // flate2 says "checksum" only when the trailer's CRC-32 or length differs.
        _ if e.to_string().contains("checksum") => {
            "the gzip trailer's CRC-32 or length does not match the data (corrupt file)".to_string()
        }
        _ => format!("corrupt gzip stream ({e})"),
    };
    std::io::Error::new(ErrorKind::InvalidData, what)
}

impl Read for BinaryInput {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.end && !self.refill()? {
            return Ok(0);
        }
        let n = out.len().min(self.end - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Streams one thread's events.
pub struct ProgramReader {
    source: Source,
    name: String,
    record: u64,
    line: Vec<u8>,
    /// The thread starts only when forked.
    pub child: bool,
}

fn trace_err(name: &str, record: u64, what: impl std::fmt::Display) -> Error {
    Error::Trace(format!("{name}:{record}: {what}"))
}

impl ProgramReader {
    pub fn open(path: &Path) -> Result<ProgramReader> {
        let name = path.display().to_string();
        let file = File::open(path)
            .map_err(|e| Error::Trace(format!("{name}: cannot open workload trace: {e}")))?;
        let binary = path.extension().is_some_and(|e| e == "btrace");
        if binary {
            let mut r = BinaryInput::new(file);
            let mut head = [0u8; 6];
            r.read_exact(&mut head)
                .map_err(|e| trace_err(&name, 0, format!("not a binary workload trace ({e})")))?;
            if &head[..4] != MAGIC || !(1..=VERSION).contains(&head[4]) || head[5] > 1 {
                return Err(trace_err(
                    &name,
                    0,
                    format!(
                        "not a binary workload trace of version 1 to {VERSION} (magic BSWL, \
                         version byte, child flag 0 or 1)"
                    ),
                ));
            }
            return Ok(ProgramReader {
                source: Source::Binary(r),
                name,
                record: 0,
                line: Vec::new(),
                child: head[5] != 0,
            });
        }
        Self::from_text(Box::new(BufReader::new(file)), &name)
    }

    pub fn from_text(mut r: Box<dyn BufRead + Send>, name: &str) -> Result<ProgramReader> {
        let mut header = Vec::new();
        lines::read_line(&mut r, &mut header).map_err(|e| trace_err(name, 1, read_error(&e)))?;
        let header_text = String::from_utf8_lossy(&header);
        let header = lines::content_str(&header_text);
        let rest = TEXT_HEADERS
            .iter()
            .find_map(|h| header.strip_prefix(h))
            .map(lines::content_str);
        let child = match rest {
            Some("") => false,
            Some("child") => true,
            _ => {
                return Err(trace_err(
                    name,
                    1,
                    format!(
                        "expected the header `{TEXT_HEADER}` (or `{TEXT_HEADER} child`), got '{}'",
                        lines::shown(header.as_bytes())
                    ),
                ))
            }
        };
        Ok(ProgramReader {
            source: Source::Text(r),
            name: name.into(),
            record: 1,
            line: Vec::new(),
            child,
        })
    }

    /// `file:record` of the last event read, for errors found when it executes.
    pub fn location(&self) -> String {
        format!("{}:{}", self.name, self.record)
    }

    /// The next event, None at the end of the stream. An exit must end the stream: what
    /// follows it would never run, and for a binary trace reading on to the end is what
    /// checks the gzip trailer.
    pub fn next_event(&mut self) -> Result<Option<Event>> {
        let event = self.next_any()?;
        if event == Some(Event::Exit) {
            let exit = self.record;
            if self.next_any()?.is_some() {
                return Err(trace_err(
                    &self.name,
                    self.record,
                    format!("event after the exit (`X`) of record {exit}; an exit ends the thread's trace"),
                ));
            }
            self.record = exit;
        }
        Ok(event)
    }

    fn next_any(&mut self) -> Result<Option<Event>> {
        match &mut self.source {
            Source::Text(_) => self.next_text(),
            Source::Binary(_) => self.next_binary(),
        }
    }

    fn next_text(&mut self) -> Result<Option<Event>> {
        let Source::Text(r) = &mut self.source else {
            unreachable!()
        };
        loop {
            self.record += 1;
            let n = lines::read_line(r, &mut self.line)
                .map_err(|e| trace_err(&self.name, self.record, read_error(&e)))?;
            if n == 0 {
                return Ok(None);
            }
            let Ok(text) = std::str::from_utf8(&self.line) else {
                return Err(trace_err(&self.name, self.record, "not UTF-8 text"));
            };
            let text = lines::content_str(text);
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            if let Some(what) = lines::control_character(&self.line) {
                return Err(trace_err(&self.name, self.record, what));
            }
            return parse_text(text).map(Some).map_err(|what| {
                trace_err(
                    &self.name,
                    self.record,
                    format!("{what}; got '{}'", lines::shown(text.as_bytes())),
                )
            });
        }
    }

    fn next_binary(&mut self) -> Result<Option<Event>> {
        let Source::Binary(r) = &mut self.source else {
            unreachable!()
        };
        self.record += 1;
        let (name, record) = (self.name.as_str(), self.record);
        let op = match r.byte() {
            Ok(None) => return Ok(None),
            Ok(Some(op)) => op,
            Err(e) => return Err(trace_err(name, record, read_error(&e))),
        };
        let mut v = || r.varint().map_err(|e| trace_err(name, record, e));
        let event = match op {
            b'C' => Event::Compute(v()?),
            b'L' => Event::Load(v()?),
            b'Q' => Event::LoadDependent(v()?),
            b'S' => Event::Store(v()?),
            b'M' => Event::Memcpy {
                src: v()?,
                dst: v()?,
                bytes: v()?,
            },
            b'I' => Event::Meminit {
                dst: v()?,
                bytes: v()?,
                value: u8::try_from(v()?)
                    .map_err(|_| trace_err(name, record, "meminit value above 255"))?,
            },
            b'Y' => Event::Yield(
                u32::try_from(v()?).map_err(|_| trace_err(name, record, "thread id too large"))?,
            ),
            b'T' => Event::Spawn(
                u32::try_from(v()?).map_err(|_| trace_err(name, record, "thread id too large"))?,
            ),
            b'F' => Event::Fork(
                u32::try_from(v()?).map_err(|_| trace_err(name, record, "thread id too large"))?,
            ),
            b'A' | b'P' | b'l' | b's' | b'K' | b'G' | b'U' | b'N' => range_event(op, v()?, v()?),
            b'W' => Event::Wait,
            b'X' => Event::Exit,
            b'E' => Event::Exec,
            b'R' => Event::MemRead(v()?),
            b'B' => Event::MemWrite(v()?),
            b'D' => Event::MemReadDependent(v()?),
            b'b' => Event::Movblk {
                src: v()?,
                dst: v()?,
            },
            other => {
                return Err(trace_err(
                    name,
                    record,
                    format!("unknown event code {other:#04x}"),
                ))
            }
        };
        validate(&event).map_err(|e| trace_err(name, record, e))?;
        Ok(Some(event))
    }
}

/// The range event a binary record's code stands for (`A P l s K G U N`), over `bytes`
/// bytes at `vaddr`.
#[inline]
fn range_event(code: u8, vaddr: u64, bytes: u64) -> Event {
    match code {
        b'A' => Event::Map { vaddr, bytes },
        b'P' => Event::MapPopulated { vaddr, bytes },
        b'l' => Event::LoadRange { vaddr, bytes },
        b's' => Event::StoreRange { vaddr, bytes },
        b'K' => Event::KernelToUser { vaddr, bytes },
        b'G' => Event::KernelFromUser { vaddr, bytes },
        b'U' => Event::Unmap { vaddr, bytes },
        b'N' => Event::MapResident { vaddr, bytes },
        other => unreachable!("{other:#04x} is no range event's code"),
    }
}

fn num(s: Option<&str>) -> std::result::Result<u64, &'static str> {
    let s = s.ok_or("missing operand")?;
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => "number above 2^64 - 1",
        _ => "bad number",
    })
}

const EXPECTED: &str = "expected one of `C n`, `L vaddr [bytes]`, `S vaddr [bytes]`, `M src dst bytes`, `I dst bytes value`, `A vaddr bytes`, `P vaddr bytes`, `N vaddr bytes`, `U vaddr bytes`, `K vaddr bytes`, `G vaddr bytes`, `R vaddr`, `D vaddr`, `Q vaddr`, `B vaddr`, `B src dst`, `F thread`, `T thread`, `Y thread`, `E`, `W`, `X`";

fn parse_text(text: &str) -> std::result::Result<Event, String> {
    let mut f = lines::fields(text);
    let op = f.next().unwrap_or_default();
    let sized = f.clone().count() == 2;
    let mut n = || num(f.next()).map_err(|e| format!("{e}; {EXPECTED}"));
    let event = match op {
        "C" => Event::Compute(n()?),
        "L" if sized => Event::LoadRange {
            vaddr: n()?,
            bytes: n()?,
        },
        "S" if sized => Event::StoreRange {
            vaddr: n()?,
            bytes: n()?,
        },
        "L" => Event::Load(n()?),
        "S" => Event::Store(n()?),
        "N" => Event::MapResident {
            vaddr: n()?,
            bytes: n()?,
        },
        "U" => Event::Unmap {
            vaddr: n()?,
            bytes: n()?,
        },
        "K" => Event::KernelToUser {
            vaddr: n()?,
            bytes: n()?,
        },
        "G" => Event::KernelFromUser {
            vaddr: n()?,
            bytes: n()?,
        },
        "R" => Event::MemRead(n()?),
        "B" if sized => Event::Movblk {
            src: n()?,
            dst: n()?,
        },
        "B" => Event::MemWrite(n()?),
        "D" => Event::MemReadDependent(n()?),
        "Q" => Event::LoadDependent(n()?),
        "E" => Event::Exec,
        "M" => Event::Memcpy {
            src: n()?,
            dst: n()?,
            bytes: n()?,
        },
        "I" => {
            let (dst, bytes, value) = (n()?, n()?, n()?);
            Event::Meminit {
                dst,
                bytes,
                value: u8::try_from(value).map_err(|_| "meminit value above 255".to_string())?,
            }
        }
        "A" => Event::Map {
            vaddr: n()?,
            bytes: n()?,
        },
        "P" => Event::MapPopulated {
            vaddr: n()?,
            bytes: n()?,
        },
        "F" => Event::Fork(u32::try_from(n()?).map_err(|_| "thread id too large".to_string())?),
        "T" => Event::Spawn(u32::try_from(n()?).map_err(|_| "thread id too large".to_string())?),
        "Y" => Event::Yield(u32::try_from(n()?).map_err(|_| "thread id too large".to_string())?),
        "W" => Event::Wait,
        "X" => Event::Exit,
        _ => return Err(format!("unknown event '{op}'; {EXPECTED}")),
    };
    if f.next().is_some() {
        return Err(format!("too many operands; {EXPECTED}"));
    }
    validate(&event)?;
    Ok(event)
}

/// The most non-memory instructions one `C` event may ask for. Far above any real run of
/// compute between memory operations, and low enough that no sum of instruction counts a
/// simulation can reach wraps.
pub const MAX_COMPUTE: u64 = 1 << 32;

/// `movblk` operands must lie below this: 256 bytes short of the page table's reach, so the
/// line (or, for an unaligned `src`, the two lines) a movblk touches ends within it for any
/// line size up to 128 bytes, and `src + line` never wraps.
pub const MOVBLK_ADDRESS_LIMIT: u64 = VADDR_LIMIT - 256;

/// A record's own errors: addresses beyond the page table's reach, then empty ranges and
/// overlapping copies.
fn validate(e: &Event) -> std::result::Result<(), String> {
    check_reach(e)?;
    check_extent(e)
}

/// Every range and movblk operand of `e` lies within the page table's reach.
#[inline]
fn check_reach(e: &Event) -> std::result::Result<(), String> {
    // A range must end within the page table's reach; checked here, where the record is
    // known, so no later address arithmetic on it can wrap.
    let reach = |start: u64, bytes: u64| match start.checked_add(bytes) {
        Some(end) if end <= VADDR_LIMIT => Ok(()),
        _ => Err(format!(
            "range of {bytes} bytes at {start:#x} ends beyond the page table's reach: \
             addresses must be below {VADDR_LIMIT:#x}"
        )),
    };
    match *e {
        Event::Compute(n) if n > MAX_COMPUTE => {
            return Err(format!(
                "{n} instructions in one event; at most 2^32 ({MAX_COMPUTE})"
            ))
        }
        Event::Memcpy { src, dst, bytes } if bytes > 0 => {
            reach(src, bytes)?;
            reach(dst, bytes)?;
        }
        Event::Meminit {
            dst: start, bytes, ..
        }
        | Event::Map {
            vaddr: start,
            bytes,
        }
        | Event::MapPopulated {
            vaddr: start,
            bytes,
        }
        | Event::MapResident {
            vaddr: start,
            bytes,
        }
        | Event::Unmap {
            vaddr: start,
            bytes,
        }
        | Event::LoadRange {
            vaddr: start,
            bytes,
        }
        | Event::StoreRange {
            vaddr: start,
            bytes,
        }
        | Event::KernelToUser {
            vaddr: start,
            bytes,
        }
        | Event::KernelFromUser {
            vaddr: start,
            bytes,
        } if bytes > 0 => reach(start, bytes)?,
        Event::Movblk { src, dst } => {
            for (operand, address) in [("src", src), ("dst", dst)] {
                if address >= MOVBLK_ADDRESS_LIMIT {
                    return Err(format!(
                        "movblk {operand} {address:#x} is beyond the page table's reach: movblk \
                         addresses must be below {MOVBLK_ADDRESS_LIMIT:#x} (2^48 minus 256, so \
                         one line from either cannot wrap)"
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// `e` moves, maps or touches at least one byte, and a copy's ranges do not overlap.
#[inline]
fn check_extent(e: &Event) -> std::result::Result<(), String> {
    match *e {
        Event::Memcpy { src, dst, bytes } => {
            if bytes == 0 {
                return Err("memcpy of 0 bytes".into());
            }
            if src < dst.saturating_add(bytes) && dst < src.saturating_add(bytes) {
                return Err("memcpy source and destination overlap".into());
            }
        }
        Event::Meminit { bytes: 0, .. } => return Err("meminit of 0 bytes".into()),
        Event::Map { bytes: 0, .. }
        | Event::MapPopulated { bytes: 0, .. }
        | Event::MapResident { bytes: 0, .. } => return Err("map of 0 bytes".into()),
        Event::Unmap { bytes: 0, .. } => return Err("unmap of 0 bytes".into()),
        Event::LoadRange { bytes: 0, .. }
        | Event::StoreRange { bytes: 0, .. }
        | Event::KernelToUser { bytes: 0, .. }
        | Event::KernelFromUser { bytes: 0, .. } => return Err("access of 0 bytes".into()),
        _ => {}
    }
    Ok(())
}

/// Writes one thread's events, text or binary by the file extension.
pub struct ProgramWriter {
    out: Box<dyn Write>,
    binary: bool,
}

impl ProgramWriter {
    pub fn create(path: &Path, child: bool) -> Result<ProgramWriter> {
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", path.display()));
        let file = std::io::BufWriter::new(File::create(path).map_err(io)?);
        let binary = path.extension().is_some_and(|e| e == "btrace");
        let mut out: Box<dyn Write> = if binary {
            Box::new(GzEncoder::new(file, Compression::default()))
        } else {
            Box::new(file)
        };
        if binary {
            out.write_all(MAGIC).map_err(io)?;
            out.write_all(&[VERSION, child as u8]).map_err(io)?;
        } else {
            writeln!(out, "{TEXT_HEADER}{}", if child { " child" } else { "" }).map_err(io)?;
        }
        Ok(ProgramWriter { out, binary })
    }

    pub fn write(&mut self, e: &Event) -> Result<()> {
        let io = |e: std::io::Error| Error::Io(format!("writing workload trace: {e}"));
        if self.binary {
            let (op, args): (u8, Vec<u64>) = match *e {
                Event::Compute(n) => (b'C', vec![n]),
                Event::Load(a) => (b'L', vec![a]),
                Event::Store(a) => (b'S', vec![a]),
                Event::Memcpy { src, dst, bytes } => (b'M', vec![src, dst, bytes]),
                Event::Meminit { dst, bytes, value } => (b'I', vec![dst, bytes, value as u64]),
                Event::Map { vaddr, bytes } => (b'A', vec![vaddr, bytes]),
                Event::MapPopulated { vaddr, bytes } => (b'P', vec![vaddr, bytes]),
                Event::Fork(t) => (b'F', vec![t as u64]),
                Event::Spawn(t) => (b'T', vec![t as u64]),
                Event::Yield(t) => (b'Y', vec![t as u64]),
                Event::Wait => (b'W', vec![]),
                Event::Exit => (b'X', vec![]),
                Event::LoadRange { vaddr, bytes } => (b'l', vec![vaddr, bytes]),
                Event::StoreRange { vaddr, bytes } => (b's', vec![vaddr, bytes]),
                Event::KernelToUser { vaddr, bytes } => (b'K', vec![vaddr, bytes]),
                Event::KernelFromUser { vaddr, bytes } => (b'G', vec![vaddr, bytes]),
                Event::Unmap { vaddr, bytes } => (b'U', vec![vaddr, bytes]),
                Event::MapResident { vaddr, bytes } => (b'N', vec![vaddr, bytes]),
                Event::Exec => (b'E', vec![]),
                Event::MemRead(a) => (b'R', vec![a]),
                Event::MemWrite(a) => (b'B', vec![a]),
                Event::MemReadDependent(a) => (b'D', vec![a]),
                Event::LoadDependent(a) => (b'Q', vec![a]),
                Event::Movblk { src, dst } => (b'b', vec![src, dst]),
            };
            let mut buf = vec![op];
            for mut v in args {
                loop {
                    let byte = (v & 0x7f) as u8;
                    v >>= 7;
                    if v == 0 {
                        buf.push(byte);
                        break;
                    }
                    buf.push(byte | 0x80);
                }
            }
            return self.out.write_all(&buf).map_err(io);
        }
        match *e {
            Event::Compute(n) => writeln!(self.out, "C {n}"),
            Event::Load(a) => writeln!(self.out, "L {a:#x}"),
            Event::Store(a) => writeln!(self.out, "S {a:#x}"),
            Event::Memcpy { src, dst, bytes } => writeln!(self.out, "M {src:#x} {dst:#x} {bytes}"),
            Event::Meminit { dst, bytes, value } => {
                writeln!(self.out, "I {dst:#x} {bytes} {value}")
            }
            Event::Map { vaddr, bytes } => writeln!(self.out, "A {vaddr:#x} {bytes}"),
            Event::MapPopulated { vaddr, bytes } => writeln!(self.out, "P {vaddr:#x} {bytes}"),
            Event::Fork(t) => writeln!(self.out, "F {t}"),
            Event::Spawn(t) => writeln!(self.out, "T {t}"),
            Event::Yield(t) => writeln!(self.out, "Y {t}"),
            Event::Wait => writeln!(self.out, "W"),
            Event::Exit => writeln!(self.out, "X"),
            Event::LoadRange { vaddr, bytes } => writeln!(self.out, "L {vaddr:#x} {bytes}"),
            Event::StoreRange { vaddr, bytes } => writeln!(self.out, "S {vaddr:#x} {bytes}"),
            Event::KernelToUser { vaddr, bytes } => writeln!(self.out, "K {vaddr:#x} {bytes}"),
            Event::KernelFromUser { vaddr, bytes } => writeln!(self.out, "G {vaddr:#x} {bytes}"),
            Event::Unmap { vaddr, bytes } => writeln!(self.out, "U {vaddr:#x} {bytes}"),
            Event::MapResident { vaddr, bytes } => writeln!(self.out, "N {vaddr:#x} {bytes}"),
            Event::Exec => writeln!(self.out, "E"),
            Event::MemRead(a) => writeln!(self.out, "R {a:#x}"),
            Event::MemWrite(a) => writeln!(self.out, "B {a:#x}"),
            Event::MemReadDependent(a) => writeln!(self.out, "D {a:#x}"),
            Event::LoadDependent(a) => writeln!(self.out, "Q {a:#x}"),
            Event::Movblk { src, dst } => writeln!(self.out, "B {src:#x} {dst:#x}"),
        }
        .map_err(io)
    }

    pub fn finish(mut self) -> Result<()> {
        self.out
            .flush()
            .map_err(|e| Error::Io(format!("writing workload trace: {e}")))
    }
}

/// The thread files of a workload: one file is thread 0; a directory holds
/// `thread-<id>.trace` or `thread-<id>.btrace` files, ids from 0 without gaps.
pub fn thread_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        if !path.exists() {
            return Err(Error::Trace(format!(
                "{}: no such workload file or directory",
                path.display()
            )));
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    for id in 0.. {
        let text = path.join(format!("thread-{id}.trace"));
        let binary = path.join(format!("thread-{id}.btrace"));
        match (text.exists(), binary.exists()) {
            (true, false) => files.push(text),
            (false, true) => files.push(binary),
            (true, true) => {
                return Err(Error::Trace(format!(
                    "{}: both thread-{id}.trace and thread-{id}.btrace; keep one",
                    path.display()
                )))
            }
            (false, false) => break,
        }
    }
    // Every other thread file must be one of those: a gap in the ids (thread-0 and thread-2
    // without thread-1) or a name that is no id would silently drop threads.
    let entries = std::fs::read_dir(path)
        .map_err(|e| Error::Trace(format!("{}: cannot list: {e}", path.display())))?;
    let mut strays = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::Trace(format!("{}: cannot list: {e}", path.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let thread_file =
            name.starts_with("thread-") && (name.ends_with(".trace") || name.ends_with(".btrace"));
        if thread_file && !files.iter().any(|f| f.ends_with(&name)) {
            strays.push(name);
        }
    }
    strays.sort();
    if let Some(first) = strays.first() {
        let id = files.len();
        return Err(Error::Trace(format!(
            "{}: {first} is not part of the workload: thread files are thread-<id>.trace or \
             .btrace with ids 0, 1, 2, ... without gaps, and there is no thread-{id}",
            path.display()
        )));
    }
    if files.is_empty() {
        return Err(Error::Trace(format!(
            "{}: no thread-0.trace or thread-0.btrace in the workload directory",
            path.display()
        )));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> Vec<Event> {
        vec![
            Event::Map {
                vaddr: 0x10000,
                bytes: 8192,
            },
            Event::MapPopulated {
                vaddr: 0x80000,
                bytes: 4096,
            },
            Event::Compute(7),
            Event::Store(0x10040),
            Event::Load(0x10040),
            Event::Memcpy {
                src: 0x10000,
                dst: 0x11000,
                bytes: 4096,
            },
            Event::Meminit {
                dst: 0x10000,
                bytes: 100,
                value: 255,
            },
            Event::Fork(1),
            Event::Spawn(2),
            Event::Yield(2),
            Event::LoadRange {
                vaddr: 0x1003c,
                bytes: 8,
            },
            Event::StoreRange {
                vaddr: 0x10000,
                bytes: 200,
            },
            Event::KernelToUser {
                vaddr: 0x10000,
                bytes: 4096,
            },
            Event::KernelFromUser {
                vaddr: 0x10100,
                bytes: 10,
            },
            Event::MapResident {
                vaddr: 0x400000,
                bytes: 1 << 20,
            },
            Event::MemRead(0x400040),
            Event::MemWrite(0x400080),
            Event::Movblk {
                src: 0x400013,
                dst: 0x401000,
            },
            Event::MemWrite(0x400100),
            Event::Movblk {
                src: MOVBLK_ADDRESS_LIMIT - 1,
                dst: 0,
            },
            Event::MemReadDependent(0x4000c0),
            Event::LoadDependent(0x400100),
            Event::Unmap {
                vaddr: 0x80000,
                bytes: 4096,
            },
            Event::Exec,
            Event::Wait,
            Event::Exit,
        ]
    }

    fn read_all(path: &Path) -> Result<(bool, Vec<Event>)> {
        let mut r = ProgramReader::open(path)?;
        let mut out = Vec::new();
        while let Some(e) = r.next_event()? {
            out.push(e);
        }
        Ok((r.child, out))
    }

    #[test]
    fn text_and_binary_round_trip() {
        let dir = std::env::temp_dir().join(format!("bulksim-prog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, child) in [("a.trace", false), ("b.btrace", true)] {
            let path = dir.join(name);
            let mut w = ProgramWriter::create(&path, child).unwrap();
            for e in events() {
                w.write(&e).unwrap();
            }
            w.finish().unwrap();
            assert_eq!(read_all(&path).unwrap(), (child, events()), "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Binary traces that break off or carry bad codes: the error names file and record.
    #[test]
    fn bad_binary_records_name_file_and_record() {
        let dir = std::env::temp_dir().join(format!("bulksim-progbin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut long = vec![b'C'];
        long.extend([0xffu8; 10]);
        let cases: [(&[u8], &str); 5] = [
            (b"C\x03L", ":2: record cut short"),
            (b"C\x03S\x80", ":2: record cut short"),
            (b"C\x03W?", ":3: unknown event code 0x3f"),
            (&long, ":1: varint longer than 64 bits"),
            (b"F\x80\x80\x80\x80\x10", ":1: thread id too large"),
        ];
        for (i, (body, what)) in cases.into_iter().enumerate() {
            let path = dir.join(format!("t{i}.btrace"));
            let mut gz = GzEncoder::new(File::create(&path).unwrap(), Compression::default());
            gz.write_all(b"BSWL\x02\x00").unwrap();
            gz.write_all(body).unwrap();
            gz.finish().unwrap();
            let err = read_all(&path).unwrap_err().to_string();
            let name = path.display().to_string();
            assert_eq!(err, format!("{name}{what}"), "case {i}");
        }
        let path = dir.join("short.btrace");
        let mut gz = GzEncoder::new(File::create(&path).unwrap(), Compression::default());
        gz.write_all(b"BSW").unwrap();
        gz.finish().unwrap();
        let err = read_all(&path).unwrap_err().to_string();
        assert!(
            err.ends_with(":0: not a binary workload trace (failed to fill whole buffer)"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A long binary trace crosses many read-ahead buffers and reads back unchanged.
    #[test]
    fn long_binary_trace_round_trips() {
        let dir = std::env::temp_dir().join(format!("bulksim-proglong-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("long.btrace");
        let all: Vec<Event> = (0..100_000u64)
            .flat_map(|i| {
                [
                    Event::Compute(i % 300),
                    Event::Store(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                ]
            })
            .collect();
        let mut w = ProgramWriter::create(&path, false).unwrap();
        for e in &all {
            w.write(e).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(read_all(&path).unwrap(), (false, all));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `B` with two operands is a movblk, with one the post-LLC write-back; both are written
    /// back in the same text and binary forms, side by side.
    #[test]
    fn movblk_and_write_back_share_the_letter_b() {
        let text = "bulksim-workload 2\nB 0x40\nB 0x13 0x1000\nB 64\nB 19 4096\n";
        let mut r = ProgramReader::from_text(Box::new(text.as_bytes()), "w.trace").unwrap();
        let mut read = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            read.push(e);
        }
        let movblk = Event::Movblk {
            src: 0x13,
            dst: 0x1000,
        };
        assert_eq!(
            read,
            [Event::MemWrite(0x40), movblk, Event::MemWrite(0x40), movblk]
        );

        let dir = std::env::temp_dir().join(format!("bulksim-movblk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text_path = dir.join("m.trace");
        let mut w = ProgramWriter::create(&text_path, false).unwrap();
        w.write(&Event::MemWrite(0x40)).unwrap();
        w.write(&movblk).unwrap();
        w.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(&text_path).unwrap(),
            "bulksim-workload 2\nB 0x40\nB 0x13 0x1000\n"
        );
        // Binary: `B` then one varint, `b` then two (0x1000 is 0x80 0x20 in LEB128).
        let binary_path = dir.join("m.btrace");
        let mut w = ProgramWriter::create(&binary_path, false).unwrap();
        w.write(&Event::MemWrite(0x40)).unwrap();
        w.write(&movblk).unwrap();
        w.finish().unwrap();
        let mut raw = Vec::new();
        GzDecoder::new(BufReader::new(File::open(&binary_path).unwrap()))
            .read_to_end(&mut raw)
            .unwrap();
        assert_eq!(raw, b"BSWL\x02\x00B\x40b\x13\x80\x20");
        assert_eq!(
            read_all(&binary_path).unwrap(),
            (false, vec![Event::MemWrite(0x40), movblk])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A movblk whose operand is bad or beyond the limit: one error naming file, record and,
    /// for the limit, the operand.
    #[test]
    fn bad_movblk_records_name_file_record_and_operand() {
        let limit = MOVBLK_ADDRESS_LIMIT;
        let cases = [
            ("B 0x10 0xzz".to_string(), "bad number".to_string()),
            ("B 0x10 0x20 0x30".into(), "too many operands".into()),
            (
                "B 0x10 99999999999999999999".into(),
                "number above 2^64 - 1".into(),
            ),
            (
                format!("B {limit:#x} 0x1000"),
                format!("movblk src {limit:#x} is beyond the page table's reach"),
            ),
            (
                format!("B 0x1000 {:#x}", limit + 0xe0),
                format!(
                    "movblk dst {:#x} is beyond the page table's reach",
                    limit + 0xe0
                ),
            ),
            (
                "B 0x10 0xffffffffffffffe0".into(),
                "movblk dst 0xffffffffffffffe0".into(),
            ),
        ];
        for (record, what) in cases {
            let text = format!("bulksim-workload 2\nC 1\n{record}\n");
            let mut r =
                ProgramReader::from_text(Box::new(std::io::Cursor::new(text)), "w.trace").unwrap();
            assert_eq!(r.next_event().unwrap(), Some(Event::Compute(1)));
            let err = r.next_event().unwrap_err().to_string();
            assert!(err.starts_with("w.trace:3: "), "{record}: {err}");
            assert!(err.contains(&what), "{record}: {err}");
        }
        // The largest accepted operands.
        let text = format!("bulksim-workload 2\nB {:#x} {:#x}\n", limit - 1, limit - 32);
        let mut r =
            ProgramReader::from_text(Box::new(std::io::Cursor::new(text)), "w.trace").unwrap();
        assert_eq!(
            r.next_event().unwrap(),
            Some(Event::Movblk {
                src: limit - 1,
                dst: limit - 32
            })
        );

        let dir = std::env::temp_dir().join(format!("bulksim-movblkbad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut beyond = b"C\x01b\x10".to_vec();
        let mut v = limit;
        while v >= 0x80 {
            beyond.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        beyond.push(v as u8);
        let binary: [(&[u8], String); 2] = [
            (b"C\x01b\x10", ":2: record cut short".into()),
            (
                &beyond,
                format!(":2: movblk dst {limit:#x} is beyond the page table's reach"),
            ),
        ];
        for (i, (body, what)) in binary.into_iter().enumerate() {
            let path = dir.join(format!("m{i}.btrace"));
            let mut gz = GzEncoder::new(File::create(&path).unwrap(), Compression::default());
            gz.write_all(b"BSWL\x02\x00").unwrap();
            gz.write_all(body).unwrap();
            gz.finish().unwrap();
            let err = read_all(&path).unwrap_err().to_string();
            let name = path.display().to_string();
            assert!(err.starts_with(&format!("{name}{what}")), "case {i}: {err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_records_name_file_and_record() {
        let cases = [
            ("bulksim-workload 1\nC 3\nZ 5\n", ":3:", "unknown event 'Z'"),
            ("bulksim-workload 1\nL\n", ":2:", "missing operand"),
            ("bulksim-workload 1\nM 0 64 128\n", ":2:", "overlap"),
            ("bulksim-workload 1\nI 0 64 300\n", ":2:", "above 255"),
            (
                "bulksim-workload 1\nS 0x10 9 1\n",
                ":2:",
                "too many operands",
            ),
            ("bulksim-workload 2\nL 0x10 0\n", ":2:", "access of 0 bytes"),
            ("bulksim-workload 2\nU 0x10 0\n", ":2:", "unmap of 0 bytes"),
            (
                "bulksim-workload 2\nK 0xfffffffffffff000 8192\n",
                ":2:",
                "beyond the page table",
            ),
            ("bulksim-workload 2\nR\n", ":2:", "missing operand"),
            ("bulksim-workload 2\nD\n", ":2:", "missing operand"),
            ("bulksim-workload 2\nQ\n", ":2:", "missing operand"),
            ("bulksim-workload 3\n", ":1:", "expected the header"),
            ("workload 2\n", ":1:", "expected the header"),
        ];
        for (text, at, what) in cases {
            let reader = ProgramReader::from_text(Box::new(text.as_bytes()), "w.trace");
            let err = match reader {
                Err(e) => e,
                Ok(mut r) => loop {
                    match r.next_event() {
                        Err(e) => break e,
                        Ok(None) => panic!("{text}: no error"),
                        Ok(Some(_)) => {}
                    }
                },
            }
            .to_string();
            assert!(
                err.starts_with("w.trace") && err.contains(at) && err.contains(what),
                "{err}"
            );
        }
    }
}
