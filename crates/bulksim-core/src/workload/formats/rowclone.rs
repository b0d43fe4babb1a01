//! Post-LLC traces with bulk records, as the RowClone authors' group published them with their
//! DRAM simulator (`forkset`): below the caches, addresses hexadecimal without a prefix (a
//! 0x prefix is accepted too), byte counts and instruction gaps decimal.
//!
//! - `R <read> <write-back or 0> <n>`: `Compute(n)`, `MemRead(read)`, and `MemWrite` of a
//!   nonzero write-back;
//! - `C <dst> <src> <bytes> <n>`: `Compute(n)`, `Memcpy { src, dst, bytes }`;
//! - `S <dst> <value> <bytes> <n>`: `Compute(n)`, `Meminit { dst, bytes, value }`; the value
//!   must fit a byte (every S record of forkset sets 0).
//!
//! The last field of C and S is undocumented; forkset's values (1349 on nearly every copy)
//! read as an instruction gap, and that is how bulksim takes it. Copies and initializations
//! run through `system.bulk_mechanism` like any memcpy/meminit; they are the kernel's page
//! operations, so each whole destination page is allocated when its record happens
//! (`os.trace_bulk_destinations`).

use super::{address, decimal, fields, gap, hex, range, LineFormat, PostLlcReader, Record};
use crate::workload::program::Event;

pub struct Rowclone;

fn bytes(s: &str) -> std::result::Result<u64, String> {
    match decimal(s, "byte count")? {
        0 => Err("a byte count of 0".into()),
        n => Ok(n),
    }
}

impl LineFormat for Rowclone {
    const NAME: &'static str = "rowclone";
    const EXPECTED: &'static str = "`R <hex read> <hex write-back|0> <instructions>`, `C <hex dst> <hex src> <bytes> <instructions>` or `S <hex dst> <hex value> <bytes> <instructions>`";
    /// The README: "the operating system's page copies and page initializations appear as
    /// explicit records".
    const BULK_RECORDS_ARE_PAGE_OPERATIONS: bool = true;

    fn parse(text: &str) -> std::result::Result<Record, String> {
        let f = fields(text);
        match f.as_slice() {
            ["R", read, wb, n] => {
                let read = address(hex(read, "read address")?, "read address")?;
                let wb = hex(wb, "write-back address")?;
                let second = match wb {
                    0 => None,
                    wb => Some(Event::MemWrite(address(wb, "write-back address")?)),
                };
                Ok(Record {
                    gap: gap(n)?,
                    first: Event::MemRead(read),
                    second,
                })
            }
            ["C", dst, src, size, n] => {
                let dst = hex(dst, "destination address")?;
                let src = hex(src, "source address")?;
                let bytes = bytes(size)?;
                range(src, bytes, "source")?;
                range(dst, bytes, "destination")?;
                if src < dst + bytes && dst < src + bytes {
                    return Err("copy source and destination overlap".into());
                }
                Ok(Record {
                    gap: gap(n)?,
                    first: Event::Memcpy { src, dst, bytes },
                    second: None,
                })
            }
            ["S", dst, value, size, n] => {
                let dst = hex(dst, "destination address")?;
                let value = hex(value, "value")?;
                let value = u8::try_from(value)
                    .map_err(|_| format!("value {value:#x} does not fit a byte (0 to 0xff)"))?;
                let bytes = bytes(size)?;
                range(dst, bytes, "destination")?;
                Ok(Record {
                    gap: gap(n)?,
                    first: Event::Meminit { dst, bytes, value },
                    second: None,
                })
            }
            ["R", ..] => Err(format!("an R record has 4 fields, not {}", f.len())),
            ["C" | "S", ..] => Err(format!("{} records have 5 fields, not {}", f[0], f.len())),
            [op, ..] => Err(format!("unknown record type '{op}' (R, C or S)")),
            [] => Err("empty record".into()),
        }
    }
}

pub type RowcloneReader = PostLlcReader<Rowclone>;
