//! The kind of a line request (read or write) and the reach of a virtual address: shared by
//! the input formats that produce requests (`workload`), the bulk operations' channel copier
//! (`bulk`), the OS's page tables (`os`), the system's memory side, and the controllers that
//! serve them, so that none of those need name another.

/// Virtual addresses must lie below this (2^48: 4 KiB pages and the OS page table's 36-bit
/// virtual page number). The input formats refuse addresses at or above it.
pub const VADDR_LIMIT: u64 = 1 << 48;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    Write,
}
