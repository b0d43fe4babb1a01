//! Request trace readers. Three line formats, streamed (the whole trace is never in memory):
//! - `native`: `cycle,R|W,address` (address decimal or 0x-hex), and the bulk operations
//!   `cycle,C,src,dst,bytes` (copy) and `cycle,I,dst,bytes,value` (set bytes to a byte value);
//! - `dramsim3`: `0xADDR READ|WRITE CYCLE`;
//! - `ramulator`: Ramulator 2's load/store trace `LD|ST 0xADDR`, no cycles (issued as fast as
//!   the controller accepts them).
//!
//! Cycles are memory-controller clock cycles; requests are offered in file order, none before
//! its cycle. Blank lines and lines starting with `#` are skipped. A malformed line is an error
//! naming the file, the line number and the expected form.

use crate::bulk::{BulkKind, BulkOp};
use crate::error::{Error, Result};
use crate::request::RequestKind;
use crate::workload::lines;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Native,
    Dramsim3,
    Ramulator,
}

impl TraceFormat {
    pub const NAMES: &'static [&'static str] = &["native", "dramsim3", "ramulator"];

    fn expected(self) -> &'static str {
        match self {
            TraceFormat::Native => {
                "`cycle,R|W,address`, `cycle,C,src,dst,bytes` or `cycle,I,dst,bytes,value` (native format)"
            }
            TraceFormat::Dramsim3 => "`0xADDRESS READ|WRITE CYCLE` (dramsim3 format)",
            TraceFormat::Ramulator => "`LD|ST 0xADDRESS` (ramulator format)",
        }
    }
}

impl FromStr for TraceFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<TraceFormat> {
        match s {
            "native" => Ok(TraceFormat::Native),
            "dramsim3" => Ok(TraceFormat::Dramsim3),
            "ramulator" => Ok(TraceFormat::Ramulator),
            _ => Err(Error::Config(format!(
                "trace format '{s}' is not known; valid: {}",
                TraceFormat::NAMES.join(", ")
            ))),
        }
    }
}

/// What one trace record asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOp {
    /// A read or write of the line holding `addr`.
    Access { kind: RequestKind, addr: u64 },
    /// A copy or initialization.
    Bulk(BulkOp),
}

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    pub cycle: u64,
    pub op: TraceOp,
}

impl TraceRecord {
    pub fn access(cycle: u64, kind: RequestKind, addr: u64) -> TraceRecord {
        TraceRecord {
            cycle,
            op: TraceOp::Access { kind, addr },
        }
    }

    pub fn bulk(cycle: u64, op: BulkOp) -> TraceRecord {
        TraceRecord {
            cycle,
            op: TraceOp::Bulk(op),
        }
    }

    /// Kind and address of a read or write.
    pub fn as_access(&self) -> Option<(RequestKind, u64)> {
        match self.op {
            TraceOp::Access { kind, addr } => Some((kind, addr)),
            TraceOp::Bulk(_) => None,
        }
    }
}

/// Anything that yields requests in order.
pub trait RequestSource {
    fn next_request(&mut self) -> Result<Option<TraceRecord>>;

    /// Where the last record came from (`file:line`), for errors found after parsing.
    fn location(&self) -> String {
        "request".into()
    }
}

impl RequestSource for std::vec::IntoIter<TraceRecord> {
    fn next_request(&mut self) -> Result<Option<TraceRecord>> {
        Ok(self.next())
    }
}

pub struct TraceReader<R: BufRead> {
    reader: R,
    format: TraceFormat,
    name: String,
    line_no: u64,
    line: Vec<u8>,
}

impl TraceReader<BufReader<File>> {
    pub fn open(path: &Path, format: TraceFormat) -> Result<Self> {
        let file = File::open(path)
            .map_err(|e| Error::Trace(format!("{}: cannot open trace: {e}", path.display())))?;
        Ok(TraceReader::new(
            BufReader::with_capacity(1 << 16, file),
            format,
            &path.display().to_string(),
        ))
    }
}

impl<R: BufRead> TraceReader<R> {
    pub fn new(reader: R, format: TraceFormat, name: &str) -> Self {
        TraceReader {
            reader,
            format,
            name: name.to_string(),
            line_no: 0,
            line: Vec::new(),
        }
    }

    /// The error for the current line, which failed to parse with `what`. A control
    /// character in the line is named instead: it sits inside a field (only spaces, tabs and
    /// commas separate them), which is why the line failed.
    fn error(&self, what: &str) -> Error {
        let place = format!("{}:{}", self.name, self.line_no);
        if let Some(control) = lines::control_character(&self.line) {
            return Error::Trace(format!("{place}: {control}"));
        }
        Error::Trace(format!(
            "{place}: {what}; expected {}, got '{}'",
            self.format.expected(),
            lines::shown(lines::content(&self.line))
        ))
    }

    /// Parses one non-blank line. Works on bytes: the hot path of a million-line replay.
    fn parse(&self, text: &[u8]) -> std::result::Result<TraceRecord, &'static str> {
        let sep = if self.format == TraceFormat::Native {
            b','
        } else {
            b' '
        };
        let mut f = Fields { rest: text, sep };
        let mut fields = [f.next(), f.next(), f.next(), f.next(), None, None];
        let bulk = self.format == TraceFormat::Native && matches!(fields[1], Some(b"C" | b"I"));
        if bulk {
            (fields[4], fields[5]) = (f.next(), f.next());
        }
        let count = fields.iter().take_while(|x| x.is_some()).count();
        let field = |i: usize| fields[i].unwrap_or_default();
        let arity = match self.format {
            TraceFormat::Ramulator => 2,
            _ if bulk => 5,
            _ => 3,
        };
        if count != arity {
            return Err("wrong number of fields");
        }
        let kind = |word: &[u8], read: &[u8], write: &[u8]| match word {
            w if w == read => Ok(RequestKind::Read),
            w if w == write => Ok(RequestKind::Write),
            _ => Err("bad request type"),
        };
        Ok(match self.format {
            TraceFormat::Native => {
                let cycle = number(field(0)).ok_or("bad cycle")?;
                match field(1) {
                    b"C" => TraceRecord::bulk(cycle, copy_op(field(2), field(3), field(4))?),
                    b"I" => TraceRecord::bulk(cycle, init_op(field(2), field(3), field(4))?),
                    word => TraceRecord::access(
                        cycle,
                        kind(word, b"R", b"W")?,
                        number(field(2)).ok_or("bad address")?,
                    ),
                }
            }
            TraceFormat::Dramsim3 => TraceRecord::access(
                number(field(2)).ok_or("bad cycle")?,
                kind(field(1), b"READ", b"WRITE")?,
                number(field(0)).ok_or("bad address")?,
            ),
            TraceFormat::Ramulator => TraceRecord::access(
                0,
                kind(field(0), b"LD", b"ST")?,
                number(field(1)).ok_or("bad address")?,
            ),
        })
    }
}

/// A native `C` record's copy from its source, destination and byte-count fields. Kept out
/// of line: bulk records are rare, and the access records' path stays short.
#[inline(never)]
fn copy_op(src: &[u8], dst: &[u8], bytes: &[u8]) -> std::result::Result<BulkOp, &'static str> {
    let src = number(src).ok_or("bad source address")?;
    let dst = number(dst).ok_or("bad destination address")?;
    let bytes = byte_count(bytes)?;
    ends_below_top(src, bytes)?;
    ends_below_top(dst, bytes)?;
    if src < dst.saturating_add(bytes) && dst < src.saturating_add(bytes) {
        return Err("source and destination overlap");
    }
    Ok(BulkOp {
        kind: BulkKind::Copy { src },
        dst,
        bytes,
    })
}

/// A native `I` record's initialization from its destination, byte-count and value fields
/// (out of line, as `copy_op`).
#[inline(never)]
fn init_op(dst: &[u8], bytes: &[u8], value: &[u8]) -> std::result::Result<BulkOp, &'static str> {
    let dst = number(dst).ok_or("bad destination address")?;
    let bytes = byte_count(bytes)?;
    ends_below_top(dst, bytes)?;
    let value = number(value)
        .filter(|&v| v <= 255)
        .ok_or("bad value (a byte, 0 to 255)")?;
    Ok(BulkOp {
        kind: BulkKind::Init { value: value as u8 },
        dst,
        bytes,
    })
}

/// A bulk operation's size: at least one byte, and small enough that its end is an address.
fn byte_count(s: &[u8]) -> std::result::Result<u64, &'static str> {
    number(s)
        .filter(|&b| b > 0 && b < 1 << 48)
        .ok_or("bad byte count (1 to 2^48 - 1)")
}

/// A bulk range must end at an address: one that wraps past 2^64 would silently move other
/// bytes. (Whether it fits the configured memory is checked where it meets the memory.)
fn ends_below_top(start: u64, bytes: u64) -> std::result::Result<(), &'static str> {
    match start.checked_add(bytes) {
        Some(_) => Ok(()),
        None => Err("range runs past the top of the address space (2^64)"),
    }
}

/// Fields of a line split at `sep` (a comma; for a space, any run of spaces and tabs), each
/// without the spaces and tabs around it. Other control characters stay in the field, which
/// then fails to parse: no field holds one legitimately.
struct Fields<'a> {
    rest: &'a [u8],
    sep: u8,
}

impl<'a> Fields<'a> {
    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.sep == b' ' {
            let start = self
                .rest
                .iter()
                .position(|&b| !lines::is_blank(b))
                .unwrap_or(self.rest.len());
            self.rest = &self.rest[start..];
            if self.rest.is_empty() {
                return None;
            }
            let end = self
                .rest
                .iter()
                .position(|&b| lines::is_blank(b))
                .unwrap_or(self.rest.len());
            let (field, rest) = self.rest.split_at(end);
            self.rest = rest;
            return Some(field);
        }
        if self.rest.is_empty() {
            return None;
        }
        match self.rest.iter().position(|&b| b == self.sep) {
            Some(end) => {
                let field = &self.rest[..end];
                // A trailing separator leaves one more (empty) field.
                self.rest = if end + 1 == self.rest.len() {
                    b" "
                } else {
                    &self.rest[end + 1..]
                };
                Some(lines::trim_blanks(field))
            }
            None => {
                let field = lines::trim_blanks(self.rest);
                self.rest = &[];
                Some(field)
            }
        }
    }
}

impl<R: BufRead> RequestSource for TraceReader<R> {
    fn location(&self) -> String {
        format!("{}:{}", self.name, self.line_no)
    }

    fn next_request(&mut self) -> Result<Option<TraceRecord>> {
        loop {
            self.line_no += 1;
            let n = lines::read_line(&mut self.reader, &mut self.line).map_err(|e| {
                Error::Trace(format!(
                    "{}:{}: {}",
                    self.name,
                    self.line_no,
                    lines::read_error(&e)
                ))
            })?;
            if n == 0 {
                return Ok(None);
            }
            let text = lines::content(&self.line);
            if text.is_empty() || text[0] == b'#' {
                continue;
            }
            return self.parse(text).map(Some).map_err(|what| self.error(what));
        }
    }
}

/// Decimal, or hexadecimal with a 0x prefix; None on any other byte or on overflow.
#[inline(always)]
fn number(s: &[u8]) -> Option<u64> {
    let (digits, radix) = match s {
        [b'0', b'x' | b'X', hex @ ..] => (hex, 16),
        _ => (s, 10),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    if radix == 16 {
        // A hex digit is 4 bits: overflow is a value with its top 4 bits in use.
        for &b in digits {
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return None,
            };
            if value >> 60 != 0 {
                return None;
            }
            value = value << 4 | d as u64;
        }
    } else {
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            value = value.checked_mul(10)?.checked_add(d as u64)?;
        }
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str, format: TraceFormat) -> Result<Vec<TraceRecord>> {
        let mut r = TraceReader::new(text.as_bytes(), format, "t.trace");
        let mut out = Vec::new();
        while let Some(rec) = r.next_request()? {
            out.push(rec);
        }
        Ok(out)
    }

    #[test]
    fn numbers_parse_up_to_u64_max_and_reject_overflow_and_stray_bytes() {
        // u64::MAX = 0xffffffffffffffff = 18446744073709551615: the last value of each radix.
        assert_eq!(number(b"0xffffffffffffffff"), Some(u64::MAX));
        assert_eq!(number(b"0XFfFfFFFFffffFFFF"), Some(u64::MAX));
        assert_eq!(number(b"0x1_0000000000000000"), None);
        assert_eq!(number(b"0x10000000000000000"), None);
        assert_eq!(number(b"0x00000000000000000001"), Some(1)); // leading zeros never overflow
        assert_eq!(number(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(number(b"18446744073709551616"), None);
        assert_eq!(number(b"0x9aF"), Some(0x9af));
        assert_eq!(number(b"0042"), Some(42));
        for bad in [
            &b""[..],
            b"0x",
            b"0xg",
            b"12a",
            b"1/",
            b"1:",
            b"0x@",
            b"0x`",
            b"-1",
            b" 1",
        ] {
            assert_eq!(number(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn the_three_formats_read_the_same_requests() {
        let native = read_all("# c\n10,R,0x40\n\n12,W,128\n", TraceFormat::Native).unwrap();
        let dramsim3 = read_all("0x40 READ 10\n0x80 WRITE 12\n", TraceFormat::Dramsim3).unwrap();
        assert_eq!(native, dramsim3);
        assert_eq!(native[1], TraceRecord::access(12, RequestKind::Write, 128));
        let ram = read_all("LD 0x40\nST 0x80\n", TraceFormat::Ramulator).unwrap();
        assert_eq!(
            ram.iter().map(|r| r.as_access()).collect::<Vec<_>>(),
            native.iter().map(|r| r.as_access()).collect::<Vec<_>>()
        );
        assert!(ram.iter().all(|r| r.cycle == 0));
    }

    #[test]
    fn native_traces_carry_copies_and_initializations() {
        let recs = read_all(
            "5,C,0x1000,0x9000,4096\n6,I,0x2000,100,0xff\n7,R,0x40\n",
            TraceFormat::Native,
        )
        .unwrap();
        assert_eq!(
            recs[0],
            TraceRecord::bulk(
                5,
                BulkOp {
                    kind: BulkKind::Copy { src: 0x1000 },
                    dst: 0x9000,
                    bytes: 4096
                }
            )
        );
        assert_eq!(
            recs[1].op,
            TraceOp::Bulk(BulkOp {
                kind: BulkKind::Init { value: 255 },
                dst: 0x2000,
                bytes: 100
            })
        );
        assert_eq!(recs[2].as_access(), Some((RequestKind::Read, 0x40)));
    }

    #[test]
    fn malformed_lines_name_file_line_and_form() {
        let cases = [
            (
                "1,R,0x40\n2,X,0x80\n",
                TraceFormat::Native,
                ":2:",
                "bad request type",
            ),
            (
                "1,R\n",
                TraceFormat::Native,
                ":1:",
                "wrong number of fields",
            ),
            ("1,R,0xZZ\n", TraceFormat::Native, ":1:", "bad address"),
            ("0x40 READ ten\n", TraceFormat::Dramsim3, ":1:", "bad cycle"),
            ("LD\n", TraceFormat::Ramulator, ":1:", "wrong number"),
            ("1,R,0x40,\n", TraceFormat::Native, ":1:", "wrong number"),
            (
                "1,R,99999999999999999999\n",
                TraceFormat::Native,
                ":1:",
                "bad address",
            ),
            ("1,R,0x\n", TraceFormat::Native, ":1:", "bad address"),
            ("1,C,0,4096\n", TraceFormat::Native, ":1:", "wrong number"),
            (
                "1,C,0,4096,0\n",
                TraceFormat::Native,
                ":1:",
                "bad byte count",
            ),
            ("1,C,0,64,128\n", TraceFormat::Native, ":1:", "overlap"),
            ("1,C,x,64,128\n", TraceFormat::Native, ":1:", "bad source"),
            ("1,I,0,64,256\n", TraceFormat::Native, ":1:", "bad value"),
            ("1,I,0,64\n", TraceFormat::Native, ":1:", "wrong number"),
            ("1,R,0,64,1\n", TraceFormat::Native, ":1:", "wrong number"),
            (
                "0x40 READ 1 2\n",
                TraceFormat::Dramsim3,
                ":1:",
                "wrong number",
            ),
        ];
        for (text, fmt, line, what) in cases {
            let m = read_all(text, fmt).unwrap_err().to_string();
            assert!(
                m.starts_with("t.trace")
                    && m.contains(line)
                    && m.contains(what)
                    && m.contains("expected"),
                "{m}"
            );
        }
        assert!(matches!(
            "csv".parse::<TraceFormat>(),
            Err(Error::Config(_))
        ));
    }
}
