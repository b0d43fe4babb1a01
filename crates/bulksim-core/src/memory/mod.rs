//! Main memory below the caches: the memory router (`router`), which owns the physical address
//! space, the functional image of its bytes and the memory devices placed in it, and each
//! device's channels (`channels`: address mapping, per-channel controllers, bulk-operation
//! planning and the channel copier, and the refreshes' overlap across a device's ranks), and
//! the router's hybrid DRAM+PCM variant (`hybrid`: it carries out the tables and decisions of
//! the `hybrid` module).

pub mod channels;
pub mod device;
pub mod hybrid;
pub mod rank_latency;
pub mod router;

pub use channels::MemorySystem;
pub use device::MemoryDevice;
pub use router::MemoryRouter;
