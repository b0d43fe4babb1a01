//! bulksim-core: a cycle-accurate memory-system simulator engine. Layers, outermost first;
//! each uses only the layers below it and the shared modules:
//!
//! 1. `workload`: the inputs. Request-trace readers and generators, full-system program
//!    traces, forkbench and the random-access program.
//! 2. `system`: the full system and its one scheduler (a femtosecond time line; each clock
//!    domain a period on it). Trace-driven cores, the OS memory manager (`os`: page tables,
//!    frame table, allocator policies; asked, never ticking) and the coordination of bulk
//!    work (coherence over the hierarchy, then execution by `system.bulk_mechanism`). `sim`
//!    is the top loop of request-trace runs, without cores.
//! 3. `cache`: the hierarchy of cache levels, each owning its arrays, MSHRs and write-back
//!    buffer, joined by the request port (`port`) down to the memory router.
//! 4. `memory`: the memory router (physical ranges -> devices, and the functional image, the
//!    one place bytes are read and written) and each device's channels: routing to one
//!    controller per channel, planning bulk operations (`bulk`: planner, channel copier,
//!    reserved rows, tracker), merging command logs and summing stats.
//! 5. `controller`: per channel, queues, scheduling, refresh, write drain, and the bulk
//!    engine that executes in-DRAM segments.
//! 6. `device`: timing state compiled from `spec`, the command log.
//! 7. `spec`: the standards and presets as data.
//!
//! `request` (the kind of a line request) and `segment` (in-DRAM steps of bulk operations
//! and the bytes they move) are the vocabulary shared across layers, so that the input
//! formats never name the controller and `bulk` and `controller` never name each other
//! (enforced by `tests/layering.rs`). `energy` turns device activity into nJ; `image` holds
//! the bytes that bulk operations move; `hybrid` is the hybrid DRAM+PCM memory (CMMP): its
//! tables (PACT, ART), access redirection and migration policy as pure units, and the memory
//! router's hybrid variant that carries them out (`hybrid::engine`, used by `memory::router`;
//! the system's side of a migration is `system/hybrid.rs`); `mapping`, `stats` (with
//! `stat_struct`, the macro that declares stats structs), `config` (with `limits`, what the
//! model can simulate and the host memory a run needs up front) and `error` serve them all.

pub mod bulk;
pub mod cache;
pub mod config;
pub mod controller;
pub mod copy_engine;
pub mod device;
pub mod energy;
pub mod error;
pub mod hybrid;
pub mod image;
pub mod limits;
pub mod mapping;
pub mod memory;
pub mod os;
pub mod port;
pub mod request;
pub mod segment;
pub mod sim;
pub mod spec;
pub mod stat_struct;
pub mod stats;
pub mod system;
pub mod workload;

pub use config::Config;
pub use error::{Error, Result};
pub use stats::Stats;
