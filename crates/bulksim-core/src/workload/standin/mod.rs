//! Generated stand-in workloads (`WorkloadFormat::Standin`): a small TOML spec file names a
//! kind, a footprint, an instruction count and a seed, and the events are generated on the
//! fly as the run reads them, so a run of hundreds of millions of instructions needs no
//! trace file. The kinds stand for the CMMP paper's SPEC CPU2006 programs (issue 17,
//! docs/hybrid_workloads.md): `spec` owns the file and the kinds' parameters, `zipf` the
//! skewed page draws, `generator` the event streams.

pub mod generator;
pub mod spec;
pub mod zipf;
