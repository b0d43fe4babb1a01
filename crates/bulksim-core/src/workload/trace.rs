//! Request trace readers. Three line formats, streamed (the whole trace is never in memory):
//! - `native`: `cycle,R|W,address` (address decimal or 0x-hex);
//! - `dramsim3`: `0xADDR READ|WRITE CYCLE`;
//! - `ramulator`: Ramulator 2's load/store trace `LD|ST 0xADDR`, no cycles (issued as fast as
//!   the controller accepts them).
//!
//! Cycles are memory-controller clock cycles; requests are offered in file order, none before
//! its cycle. Blank lines and lines starting with `#` are skipped. A malformed line is an error
//! naming the file, the line number and the expected form.

use crate::controller::RequestKind;
use crate::error::{Error, Result};
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
            TraceFormat::Native => "`cycle,R|W,address` (native format)",
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

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    pub cycle: u64,
    pub kind: RequestKind,
    pub addr: u64,
}

/// Anything that yields requests in order.
pub trait RequestSource {
    fn next_request(&mut self) -> Result<Option<TraceRecord>>;
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
    line: String,
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
            line: String::new(),
        }
    }

    fn error(&self, what: &str) -> Error {
        let mut text = self.line.trim_end().to_string();
        if text.len() > 80 {
            text.truncate(77);
            text += "...";
        }
        Error::Trace(format!(
            "{}:{}: {what}; expected {}, got '{text}'",
            self.name,
            self.line_no,
            self.format.expected()
        ))
    }

    fn parse(&self, text: &str) -> std::result::Result<TraceRecord, &'static str> {
        match self.format {
            TraceFormat::Native => {
                let mut f = text.split(',');
                let (Some(c), Some(k), Some(a), None) = (f.next(), f.next(), f.next(), f.next())
                else {
                    return Err("wrong number of fields");
                };
                let cycle = number(c.trim()).ok_or("bad cycle")?;
                let kind = match k.trim() {
                    "R" => RequestKind::Read,
                    "W" => RequestKind::Write,
                    _ => return Err("bad request type"),
                };
                Ok(TraceRecord {
                    cycle,
                    kind,
                    addr: number(a.trim()).ok_or("bad address")?,
                })
            }
            TraceFormat::Dramsim3 => {
                let mut f = text.split_whitespace();
                let (Some(a), Some(k), Some(c), None) = (f.next(), f.next(), f.next(), f.next())
                else {
                    return Err("wrong number of fields");
                };
                let kind = match k {
                    "READ" => RequestKind::Read,
                    "WRITE" => RequestKind::Write,
                    _ => return Err("bad request type"),
                };
                Ok(TraceRecord {
                    cycle: number(c).ok_or("bad cycle")?,
                    kind,
                    addr: number(a).ok_or("bad address")?,
                })
            }
            TraceFormat::Ramulator => {
                let mut f = text.split_whitespace();
                let (Some(k), Some(a), None) = (f.next(), f.next(), f.next()) else {
                    return Err("wrong number of fields");
                };
                let kind = match k {
                    "LD" => RequestKind::Read,
                    "ST" => RequestKind::Write,
                    _ => return Err("bad request type"),
                };
                Ok(TraceRecord {
                    cycle: 0,
                    kind,
                    addr: number(a).ok_or("bad address")?,
                })
            }
        }
    }
}

impl<R: BufRead> RequestSource for TraceReader<R> {
    fn next_request(&mut self) -> Result<Option<TraceRecord>> {
        loop {
            self.line.clear();
            self.line_no += 1;
            let n = self.reader.read_line(&mut self.line).map_err(|e| {
                Error::Trace(format!("{}:{}: cannot read: {e}", self.name, self.line_no))
            })?;
            if n == 0 {
                return Ok(None);
            }
            let text = self.line.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            return self.parse(text).map(Some).map_err(|what| self.error(what));
        }
    }
}

/// Decimal, or hexadecimal with a 0x prefix.
fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
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
    fn the_three_formats_read_the_same_requests() {
        let native = read_all("# c\n10,R,0x40\n\n12,W,128\n", TraceFormat::Native).unwrap();
        let dramsim3 = read_all("0x40 READ 10\n0x80 WRITE 12\n", TraceFormat::Dramsim3).unwrap();
        assert_eq!(native, dramsim3);
        assert_eq!(
            native[1],
            TraceRecord {
                cycle: 12,
                kind: RequestKind::Write,
                addr: 128
            }
        );
        let ram = read_all("LD 0x40\nST 0x80\n", TraceFormat::Ramulator).unwrap();
        assert_eq!(
            ram.iter().map(|r| (r.kind, r.addr)).collect::<Vec<_>>(),
            native.iter().map(|r| (r.kind, r.addr)).collect::<Vec<_>>()
        );
        assert!(ram.iter().all(|r| r.cycle == 0));
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
