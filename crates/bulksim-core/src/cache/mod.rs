//! The cache hierarchy of the full system: cache arrays (`array`), cache levels that own their
//! arrays, MSHRs and write-back buffers (`level`), each level's request port for the one above
//! it (`level_port`), the chain of levels above the memory
//! router with the operations bulk coherence needs over all of them (`hierarchy`), and each
//! core's write-combining buffers for non-temporal stores (`write_combining`).

pub mod array;
pub mod hierarchy;
pub mod level;
pub mod level_port;
pub mod write_combining;

pub use array::{Cache, Evicted, LineBuf, Origin};
pub use hierarchy::{Hierarchy, Pending};
pub use level::{CacheLevel, LevelStats, OriginBytes, PortTraffic};
pub use level_port::LevelPort;
