//! A memory request as the controller holds it: kind, line address, decoded DRAM address,
//! arrival cycle, which row commands it needed (for hit/miss/conflict accounting), and the
//! tag of the bulk-operation line job it belongs to, if any.

use crate::mapping::DramAddr;
use crate::spec::Command;

pub use crate::request::RequestKind;

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
    /// When it left its sender (fs; 0: unknown): between the read and the write queue,
    /// the older of two requests that arrived in the same cycle (`Controller::older_read`).
    pub issued: u64,
    /// It issued an ACT of its own.
    pub activated: bool,
    /// It issued a PRE of its own (a row conflict).
    pub precharged: bool,
    /// The channel copier's slot for a bulk line job, else `NO_TAG`.
    pub tag: u32,
    /// A program's LLC miss or write-back (`Origin::Program`): its latency, arrival to
    /// served, is summed in `ControllerStats::program_latency`.
    pub program: bool,
    /// Low priority (a hybrid memory's migration copy under `hybrid.copy_priority = "low"`):
    /// it gets a command only in a cycle in which no other request of its queue can.
    pub low: bool,
}

/// Tag of a request that is not part of a bulk operation.
pub const NO_TAG: u32 = u32::MAX;

/// Marks the tag of a request from a client above the memory system (a cache fill or a
/// write-back whose completion someone awaits): reported when served, but not bulk work.
pub const CLIENT_TAG: u32 = 1 << 31;
