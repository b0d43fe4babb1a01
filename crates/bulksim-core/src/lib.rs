//! bulksim-core: a cycle-accurate memory-system simulator engine. Layers, outermost first:
//! `workload` (trace readers and generators) -> `sim` (the top loop) -> `memory` (channels) ->
//! `controller` (queues, scheduling, refresh, write drain) -> `device` (timing state compiled
//! from `spec`, the standards as data). `energy` turns device activity into nJ; `image` holds
//! the bytes that bulk operations move; `config`, `mapping`, `stats` and `error` serve them all.

pub mod bulk;
pub mod cache;
pub mod config;
pub mod controller;
pub mod device;
pub mod energy;
pub mod error;
pub mod image;
pub mod mapping;
pub mod memory;
pub mod os;
pub mod request;
pub mod segment;
pub mod sim;
pub mod spec;
pub mod stats;
pub mod system;
pub mod workload;

pub use config::Config;
pub use error::{Error, Result};
pub use stats::Stats;
