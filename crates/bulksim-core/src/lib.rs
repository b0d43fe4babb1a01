//! bulksim-core: a cycle-accurate memory-system simulator engine. Its top-level modules in
//! layers, bottom first: a module names only the modules listed before it, so there is no
//! import cycle among them (`tests/it/layering.rs` checks this list against the sources).
//!
//! 1. `error`: the error type (config, trace, I/O), each naming the key or file and line.
//! 2. `rng`: SplitMix64, the seeded generator behind every random choice.
//! 3. `spec`: the standards (DDR3, DDR4, PCM, RowClone's commands) and presets as data.
//! 4. `mapping`: physical address to channel, rank, bank, row and column.
//! 5. `request`: a line request's kind and the reach of a virtual address.
//! 6. `segment`: the in-DRAM steps of bulk operations and the bytes they move.
//! 7. `stat_struct`: the macro declaring stats structs with a unit and description per field.
//! 8. `counters`: the latency histogram and wasted-ACT counts, filled below, reported above.
//! 9. `device`: timing state compiled from `spec`, bank state, the command log.
//! 10. `energy`: device activity to nJ (IDD-based DRAM energy).
//! 11. `stats`: the run's `Stats` record, its latency summaries and its docs table.
//! 12. `image`: the functional memory image (the bytes bulk operations move).
//! 13. `port`: the request port joining cores, cache levels and memory, and the movblk.
//! 14. `limits`: what the model can simulate (timing and capacity ranges).
//! 15. `config`: the run's configuration, its defaults, field docs and validation.
//! 16. `os`: page tables, frame table and allocator policies (asked, never ticking).
//! 17. `hybrid`: the hybrid DRAM+PCM memory's tables and decisions as pure units (CMMP).
//! 18. `bulk`: bulk copy/init: planner, channel copier, reserved rows, tracker.
//! 19. `controller`: per channel: queues, scheduling, refresh, write drain, the bulk engine.
//! 20. `memory`: the memory router (address space, image, hybrid variant) and device channels.
//! 21. `cache`: cache arrays, cache levels and the hierarchy of them down to the router.
//! 22. `copy_engine`: the copy engines beside the cache levels (movblk, CE-L1, DCE, DCE-NT).
//! 23. `host_memory`: the host memory a run allocates up front, checked before it does.
//! 24. `workload`: the inputs: trace readers and generators, program traces, forkbench.
//! 25. `sim`: the top loop of request-trace runs (one memory device, no cores).
//! 26. `system`: the full system: cores, threads, the scheduler, bulk coordination.
//!
//! `request`, `segment` and `port` are the vocabulary shared across layers, so that the input
//! formats never name the controller and `bulk` and `controller` never name each other (also
//! checked by `tests/it/layering.rs`).

pub mod bulk;
pub mod cache;
pub mod config;
pub mod controller;
pub mod copy_engine;
pub mod counters;
pub mod device;
pub mod energy;
pub mod error;
pub mod host_memory;
pub mod hybrid;
pub mod image;
pub mod limits;
pub mod mapping;
pub mod memory;
pub mod os;
pub mod port;
pub mod request;
pub mod rng;
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
