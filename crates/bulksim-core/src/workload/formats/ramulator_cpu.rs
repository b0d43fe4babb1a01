//! Ramulator CPU traces (Ramulator 1's CPU-trace front end): one last-level-cache miss per
//! line, below the caches. `<n> <read address> [<write-back address>]`, addresses decimal or
//! 0x-hex: n non-memory instructions, then a read, and the dirty line that read's fill
//! evicted. Read as `Compute(n)`, `MemRead(read)`, [`MemWrite(write-back)`]. Plain or gzip
//! (told apart by the magic bytes).

use super::{address, decimal, fields, gap, hex, LineFormat, PostLlcReader, Record};
use crate::workload::program::Event;

pub struct RamulatorCpu;

/// Decimal, or hexadecimal with a 0x prefix.
fn number(s: &str, what: &str) -> std::result::Result<u64, String> {
    if s.starts_with("0x") || s.starts_with("0X") {
        hex(s, what)
    } else {
        decimal(s, what)
    }
}

impl LineFormat for RamulatorCpu {
    const NAME: &'static str = "ramulator-cpu";
    const EXPECTED: &'static str =
        "`<instructions> <read address> [<write-back address>]`, addresses decimal or 0x-hex";

    fn parse(text: &str) -> std::result::Result<Record, String> {
        let f = fields(text);
        let (n, read, writeback) = match f.as_slice() {
            [n, read] => (n, read, None),
            [n, read, wb] => (n, read, Some(wb)),
            [_] => return Err("missing the read address".into()),
            _ => return Err(format!("{} fields; 2 or 3 expected", f.len())),
        };
        let read = address(number(read, "read address")?, "read address")?;
        let second = match writeback {
            Some(wb) => Some(Event::MemWrite(address(
                number(wb, "write-back address")?,
                "write-back address",
            )?)),
            None => None,
        };
        Ok(Record {
            gap: gap(n)?,
            first: Event::MemRead(read),
            second,
        })
    }
}

pub type RamulatorCpuReader = PostLlcReader<RamulatorCpu>;
