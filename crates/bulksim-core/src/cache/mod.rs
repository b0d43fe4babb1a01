//! The cache hierarchy of the full system: cache arrays (`array`), cache levels that own their
//! arrays, MSHRs and write-back buffers (`level`), each level's request port for the one above
//! it (`level_port`), the chain of levels above the memory
//! router with the operations bulk coherence needs over all of them (`hierarchy`), and each
//! core's write-combining buffers for non-temporal stores (`write_combining`). The
//! hierarchy's other concerns are one file each: non-temporal stores (`non_temporal`), a
//! post-LLC trace's requests below the caches (`below_caches`), a migrating page's lines
//! (`migration_lines`) and untimed work and the cores' view (`untimed`).

pub mod array;
mod below_caches;
pub mod hierarchy;
pub mod level;
pub mod level_port;
mod migration_lines;
mod non_temporal;
mod untimed;
pub mod write_combining;

pub use array::{Cache, Evicted, LineBuf, Origin};
pub use hierarchy::{Hierarchy, Pending};
pub use level::{CacheLevel, LevelStats, OriginBytes, PortTraffic};
pub use level_port::LevelPort;
