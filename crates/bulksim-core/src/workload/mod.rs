//! Workloads: readers of request traces in the supported formats, readers of full-system
//! workloads (bulksim's own and other tools' formats), and generators of synthetic request
//! traces (stream, random, mixed, page copy) for demos, tests and benchmarks, and the
//! synthetic stand-ins of the Rank Assignment study's programs; and the expansion of a
//! `memcpy` into the instructions a core runs for it; and the stand-ins generated on the fly
//! from a small spec file (`standin`: the CMMP study's programs).

pub mod forkbench;
pub mod formats;
pub mod generate;
pub mod lines;
pub mod looping;
pub mod memcpy;
pub mod program;
pub mod source;
pub mod standin;
pub mod synthetic;
pub mod trace;
