//! Main memory below the caches: the level below the last cache level as the hierarchy sees
//! it (`side`: the router's devices or the fixed-latency memory, `fixed_latency`), the
//! memory router (`router`), which owns the physical address
//! space, the functional image of its bytes and the memory devices placed in it, and each
//! device's channels (`channels`: address mapping, per-channel controllers, bulk-operation
//! planning and the channel copier, and the refreshes' overlap across a device's ranks), and
//! the router's hybrid DRAM+PCM variant (`hybrid`: it carries out the tables and decisions of
//! the `hybrid` module).

pub mod channels;
pub mod device;
pub mod fixed_latency;
pub mod hybrid;
pub mod rank_latency;
pub mod router;
pub mod side;

pub use channels::MemorySystem;
pub use device::MemoryDevice;
pub use fixed_latency::FixedLatencyMemory;
pub use router::MemoryRouter;
pub use side::{MemoryBelow, MemorySide};
