//! The kind of a line request (read or write): shared by the input formats that produce
//! requests (`workload`), the bulk operations' channel copier (`bulk`), the system's memory
//! side, and the controllers that serve them, so that none of those need name another.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    Write,
}
