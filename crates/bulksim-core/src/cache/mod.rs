//! The cache hierarchy of the full system: cache arrays (`array`), cache levels that own their
//! arrays, MSHRs and write-back buffers (`level`), each level's request port for the one above
//! it (`level_port`), and the chain of levels above the memory
//! router with the operations bulk coherence needs over all of them (`hierarchy`).

pub mod array;
pub mod hierarchy;
pub mod level;
pub mod level_port;

pub use array::{Cache, Evicted, LineBuf, Origin};
pub use hierarchy::{Hierarchy, Pending};
pub use level::{CacheLevel, LevelStats, OriginBytes, PortTraffic};
pub use level_port::LevelPort;
