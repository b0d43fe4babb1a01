//! Readers of the workload formats other tools write, each an `EventSource` the full system
//! runs like one of its own threads: MSC/USIMM and Ramulator CPU traces and the RowClone
//! group's post-LLC traces with bulk records (`msc`, `ramulator_cpu`, `rowclone`, all below
//! the caches), and ChampSim instruction traces (`champsim`, through the caches). This file
//! owns what they share: opening a file whatever its compression (gzip and xz found by their
//! magic bytes, never by the extension), the line-by-line reading of the text formats with
//! record numbers for errors, and the event stream every post-LLC record turns into.
//!
//! bulksim's choice for every foreign trace: its addresses are one process's virtual
//! addresses, all present from before the trace began, so a stream starts with a resident
//! map of the whole address space (`MapResident { 0, VADDR_LIMIT }`: a page is given a frame
//! on its first access, with no fault). Each copy of a workload maps its own.

pub mod cache_filter;
pub mod champsim;
pub mod convert;
pub mod detect;
pub mod msc;
pub mod ramulator_cpu;
pub mod rowclone;
pub mod sink;

use crate::error::{Error, Result};
use crate::request::VADDR_LIMIT;
use crate::workload::lines::{self, read_error};
use crate::workload::program::{Event, MAX_COMPUTE};
use crate::workload::source::EventSource;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The largest instruction gap one record may give (split into events of at most
/// `MAX_COMPUTE`): about a trillion instructions, far beyond any real gap between misses, and
/// small enough that no run's instruction count can wrap.
pub const MAX_RECORD_GAP: u64 = 1 << 40;

/// How a file's bytes are compressed, judged from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Plain,
    Gzip,
    Xz,
}

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0];

/// Turns a decompressor's failure into words naming the compression.
struct Decompressed<R> {
    inner: R,
    compression: Compression,
}

impl<R: Read> Read for Decompressed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let what = match (self.compression, e.kind()) {
                (_, std::io::ErrorKind::Interrupted) => return e,
                (Compression::Gzip, std::io::ErrorKind::UnexpectedEof) => {
                    "the gzip stream is cut short (truncated file)".to_string()
                }
                (Compression::Gzip, _) => format!("corrupt gzip stream ({e})"),
                (Compression::Xz, _) => format!("corrupt or truncated xz stream ({e})"),
                (Compression::Plain, _) => return e,
            };
            std::io::Error::new(std::io::ErrorKind::InvalidData, what)
        })
    }
}

/// The file at `path`, decompressed as its magic bytes say, and which compression that was.
pub fn open_decompressed(path: &Path) -> Result<(Box<dyn BufRead + Send>, Compression)> {
    let name = path.display();
    let file = File::open(path).map_err(|e| Error::Trace(format!("{name}: cannot open: {e}")))?;
    let mut file = BufReader::with_capacity(1 << 16, file);
    let head = file
        .fill_buf()
        .map_err(|e| Error::Trace(format!("{name}: cannot read: {e}")))?;
    let compression = if head.starts_with(GZIP_MAGIC) {
        Compression::Gzip
    } else if head.starts_with(XZ_MAGIC) {
        Compression::Xz
    } else {
        Compression::Plain
    };
    let reader: Box<dyn BufRead + Send> = match compression {
        Compression::Plain => Box::new(file),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 16,
            Decompressed {
                inner: flate2::bufread::MultiGzDecoder::new(file),
                compression,
            },
        )),
        Compression::Xz => Box::new(BufReader::with_capacity(
            1 << 16,
            Decompressed {
                // Every stream of the file, as `xz -dc` reads it (a single-stream decoder
                // would stop at the first and ignore the rest, garbage included).
                inner: liblzma::bufread::XzDecoder::new_multi_decoder(file),
                compression,
            },
        )),
    };
    Ok((reader, compression))
}

/// The lines of a text trace, numbered from 1; blank lines and `#` comments are skipped.
pub struct LineInput {
    reader: Box<dyn BufRead + Send>,
    pub name: String,
    pub record: u64,
    line: Vec<u8>,
}

impl LineInput {
    pub fn open(path: &Path) -> Result<LineInput> {
        let (reader, _) = open_decompressed(path)?;
        Ok(LineInput::new(reader, &path.display().to_string()))
    }

    pub fn new(reader: Box<dyn BufRead + Send>, name: &str) -> LineInput {
        LineInput {
            reader,
            name: name.to_string(),
            record: 0,
            line: Vec::new(),
        }
    }

    /// The next line that is neither blank nor a `#` comment, without its ending and the
    /// blanks around it; None at the end of the input. A control character inside it (other
    /// than a tab) is an error: fields are separated by spaces or tabs only.
    pub fn next_line(&mut self) -> Result<Option<&str>> {
        loop {
            self.record += 1;
            let n = lines::read_line(&mut self.reader, &mut self.line)
                .map_err(|e| self.error(read_error(&e)))?;
            if n == 0 {
                return Ok(None);
            }
            let Ok(text) = std::str::from_utf8(&self.line) else {
                return Err(self.error("not UTF-8 text"));
            };
            let text = lines::content_str(text);
            if !text.is_empty() && !text.starts_with('#') {
                break;
            }
        }
        if let Some(what) = lines::control_character(&self.line) {
            return Err(self.error(what));
        }
        // Checked UTF-8 above; taken again outside the loop, which reuses the buffer.
        Ok(std::str::from_utf8(&self.line).ok().map(lines::content_str))
    }

    pub fn error(&self, what: impl std::fmt::Display) -> Error {
        Error::Trace(format!("{}:{}: {what}", self.name, self.record))
    }
}

/// One record of a post-LLC trace: the non-memory instructions before it and its events
/// (a read, a write-back, a read with its write-back, a copy, an initialization).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub gap: u64,
    pub first: Event,
    pub second: Option<Event>,
}

/// One post-LLC line format: how a line becomes a record, and what a line should look like.
pub trait LineFormat: Send + 'static {
    /// The format's name, as the CLI gives it.
    const NAME: &'static str;
    /// The accepted forms, for error messages.
    const EXPECTED: &'static str;
    /// Its copy and initialization records are the kernel's page operations
    /// (`EventSource::bulk_events_are_page_operations`).
    const BULK_RECORDS_ARE_PAGE_OPERATIONS: bool = false;
    fn parse(text: &str) -> std::result::Result<Record, String>;
}

/// A post-LLC text trace read as events: the resident map of the whole address space, then
/// per record `Compute(gap)` (omitted when 0, split into events of at most `MAX_COMPUTE`)
/// and the record's events.
pub struct PostLlcReader<F: LineFormat> {
    input: LineInput,
    pending: VecDeque<Event>,
    started: bool,
    format: std::marker::PhantomData<F>,
}

impl<F: LineFormat> PostLlcReader<F> {
    pub fn open(path: &Path) -> Result<PostLlcReader<F>> {
        Ok(Self::new(LineInput::open(path)?))
    }

    pub fn new(input: LineInput) -> PostLlcReader<F> {
        PostLlcReader {
            input,
            pending: VecDeque::with_capacity(4),
            started: false,
            format: std::marker::PhantomData,
        }
    }

    /// The next record, None at the end of the trace.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        let Some(text) = self.input.next_line()? else {
            return Ok(None);
        };
        match F::parse(text) {
            Ok(record) => Ok(Some(record)),
            Err(what) => {
                let got = lines::shown(text.as_bytes());
                Err(self.input.error(format!(
                    "{what}; expected {} ({} format), got '{got}'",
                    F::EXPECTED,
                    F::NAME
                )))
            }
        }
    }
}

impl<F: LineFormat> EventSource for PostLlcReader<F> {
    fn next_event(&mut self) -> Result<Option<Event>> {
        if !self.started {
            self.started = true;
            return Ok(Some(whole_address_space()));
        }
        if let Some(e) = self.pending.pop_front() {
            return Ok(Some(e));
        }
        let Some(record) = self.next_record()? else {
            return Ok(None);
        };
        push_compute(&mut self.pending, record.gap);
        self.pending.push_back(record.first);
        self.pending.extend(record.second);
        Ok(self.pending.pop_front())
    }

    fn location(&self) -> String {
        format!("{}:{}", self.input.name, self.input.record)
    }

    fn starts_as_child(&self) -> bool {
        false
    }

    fn bulk_events_are_page_operations(&self) -> bool {
        F::BULK_RECORDS_ARE_PAGE_OPERATIONS
    }
}

/// The first event of every foreign trace: the whole address space resident.
pub fn whole_address_space() -> Event {
    Event::MapResident {
        vaddr: 0,
        bytes: VADDR_LIMIT,
    }
}

/// `Compute` events for `gap` instructions (none for 0), each at most `MAX_COMPUTE`.
pub fn push_compute(out: &mut VecDeque<Event>, mut gap: u64) {
    while gap > 0 {
        let n = gap.min(MAX_COMPUTE);
        out.push_back(Event::Compute(n));
        gap -= n;
    }
}

/// Fields of a line split at spaces and tabs (`lines::fields`), with the counts checked by
/// the caller.
pub fn fields(text: &str) -> Vec<&str> {
    lines::fields(text).collect()
}

/// An instruction gap: decimal, at most `MAX_RECORD_GAP`.
pub fn gap(s: &str) -> std::result::Result<u64, String> {
    let n = decimal(s, "instruction count")?;
    if n > MAX_RECORD_GAP {
        return Err(format!(
            "instruction count {n} above the limit of 2^40 ({MAX_RECORD_GAP}) per record"
        ));
    }
    Ok(n)
}

pub fn decimal(s: &str, what: &str) -> std::result::Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad {what} '{s}' (a decimal number)"));
    }
    s.parse()
        .map_err(|_| format!("{what} '{s}' above 2^64 - 1"))
}

/// A hexadecimal number, with or without a 0x prefix.
pub fn hex(s: &str, what: &str) -> std::result::Result<u64, String> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("bad {what} '{s}' (a hexadecimal number)"));
    }
    u64::from_str_radix(digits, 16).map_err(|_| format!("{what} '{s}' above 2^64 - 1"))
}

/// An address a trace record names: below the page table's reach.
pub fn address(value: u64, what: &str) -> std::result::Result<u64, String> {
    if value >= VADDR_LIMIT {
        return Err(format!(
            "{what} {value:#x} is beyond the page table's reach: addresses must be below \
             {VADDR_LIMIT:#x} (2^48)"
        ));
    }
    Ok(value)
}

/// The end of a `bytes`-long range at `start` within the page table's reach.
pub fn range(start: u64, bytes: u64, what: &str) -> std::result::Result<(), String> {
    match start.checked_add(bytes) {
        Some(end) if end <= VADDR_LIMIT => Ok(()),
        _ => Err(format!(
            "{what} range of {bytes} bytes at {start:#x} ends beyond the page table's reach \
             (2^48)"
        )),
    }
}
