//! MSC/USIMM traces (the 2012 Memory Scheduling Championship): one last-level-cache miss or
//! dirty eviction per line, below the caches. `<n> R <hex address> <hex pc>` is a read after
//! n non-memory instructions, `<n> W <hex address>` a write-back. Read as `Compute(n)` then
//! `MemRead(address)` / `MemWrite(address)`; the PC is checked and dropped (the core model has
//! no use for it). Plain or gzip.

use super::{address, fields, gap, hex, LineFormat, PostLlcReader, Record};
use crate::workload::program::Event;

pub struct Msc;

impl LineFormat for Msc {
    const NAME: &'static str = "msc";
    const EXPECTED: &'static str =
        "`<instructions> R <hex address> <hex pc>` or `<instructions> W <hex address>`";

    fn parse(text: &str) -> std::result::Result<Record, String> {
        let f = fields(text);
        let event = match f.as_slice() {
            [n, "R", addr, pc] => {
                hex(pc, "pc")?;
                (
                    n,
                    Event::MemRead(address(hex(addr, "address")?, "address")?),
                )
            }
            [n, "W", addr] => (
                n,
                Event::MemWrite(address(hex(addr, "address")?, "address")?),
            ),
            [_, "R", ..] => return Err("a read takes 4 fields".into()),
            [_, "W", ..] => return Err("a write takes 3 fields".into()),
            [_, op, ..] => return Err(format!("unknown request type '{op}' (R or W)")),
            _ => return Err("missing fields".into()),
        };
        Ok(Record {
            gap: gap(event.0)?,
            first: event.1,
            second: None,
        })
    }
}

pub type MscReader = PostLlcReader<Msc>;
