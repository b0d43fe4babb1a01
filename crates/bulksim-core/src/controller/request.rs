//! A memory request as the controller holds it: kind, line address, decoded DRAM address,
//! arrival cycle, and which row commands it needed (for hit/miss/conflict accounting).

use crate::mapping::DramAddr;
use crate::spec::Command;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    Write,
}

#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub kind: RequestKind,
    /// Byte address divided by the line size.
    pub line: u64,
    pub addr: DramAddr,
    /// The column command that serves it (RD/WR, or RDA/WRA under the closed page policy).
    pub column: Command,
    /// Cycle the request entered the controller's queue.
    pub arrival: u64,
    /// It issued an ACT of its own.
    pub activated: bool,
    /// It issued a PRE of its own (a row conflict).
    pub precharged: bool,
}
