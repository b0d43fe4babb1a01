//! Main memory below the caches: the memory router (`router`), which owns the physical address
//! space, the functional image of its bytes and the memory devices placed in it, and each
//! device's channels (`channels`: address mapping, per-channel controllers, bulk-operation
//! planning and the channel copier), and the refreshes' overlap across ranks (`refresh_overlap`).

pub mod channels;
pub mod device;
pub mod rank_latency;
pub mod refresh_overlap;
pub mod router;

pub use channels::MemorySystem;
pub use device::MemoryDevice;
pub use router::MemoryRouter;
