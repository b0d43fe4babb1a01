//! Hybrid DRAM+PCM memory with concurrent multi-page migration (CMMP, seed 004, issue 17;
//! docs/hybrid.md): the hardware tables and the decisions the router and the OS take
//! from them, as pure, deterministic units that know nothing of the simulator. `pact` is
//! the Page Access Count Table the router updates on program LLC misses and write-backs;
//! `art` the Access Redirection Table with one entry per migrating page; `redirect` the
//! ACCESSREDIRECT decision for one LLC miss or write-back; `policy` the OS's periodic
//! scoring and choice of promotions and demotions; `config` the `[hybrid]` settings (declared
//! in `crate::config::hybrid`, with the page and block sizes, and named here as before).
//! The router's hybrid variant that carries them out below the caches (routing, the image,
//! the background copier, the OS's period) is `memory::hybrid`; the system's side
//! (completion: flush and remap) is `system/hybrid.rs`. Built: all four mechanisms
//! (docs/hybrid.md, "Status").

pub mod art;
pub use crate::config::hybrid as config;
pub use crate::config::hybrid::{BLOCKS_PER_PAGE, BLOCK_BYTES, PAGE_BYTES};
pub mod energy;
pub mod pact;
pub mod policy;
pub mod redirect;

/// Latency of an ART lookup added to every LLC miss and write-back under the CM variants,
/// in ns (Table I; 2 core cycles at 4 GHz). The PACT's 0.6 ns is off the critical path.
pub const ART_LOOKUP_NS: f64 = 0.5;
/// Energy of one PACT or ART access, in nJ (Table I, CACTI 5.3).
pub const TABLE_ACCESS_NJ: f64 = 0.01;

/// Which memory a frame lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Device {
    Dram,
    Pcm,
}

/// A physical page frame: its device and its page number (physical address / `PAGE_BYTES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frame {
    pub device: Device,
    pub page: u64,
}

impl Frame {
    pub const fn dram(page: u64) -> Frame {
        Frame {
            device: Device::Dram,
            page,
        }
    }

    pub const fn pcm(page: u64) -> Frame {
        Frame {
            device: Device::Pcm,
            page,
        }
    }
}

/// The mask bit of block `block` (0..64) of a page.
#[inline]
pub(crate) fn block_bit(block: u32) -> u64 {
    debug_assert!(block < BLOCKS_PER_PAGE, "block {block} out of a page");
    // The mask keeps a bad index from shifting out of range in release builds.
    1u64 << (block % BLOCKS_PER_PAGE)
}
