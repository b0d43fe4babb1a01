//! What the model can simulate, checked while a config is validated, before a run builds
//! anything. Every numeric limit is the range of the structure the value must fit: a timing
//! parameter must keep each rule's latency (a sum of parameters) inside the `u32` of the rule
//! table, a memory must keep its 4 KiB frame numbers inside the OS's `u32` frame tables. The
//! host memory a run needs up front is `host_memory`'s (it reads the whole config).

use crate::error::{config_err, Result};
use crate::spec::Organisation;

/// Largest value of any `dram.timing` parameter, in cycles. A rule's latency is a `u32` sum
/// of at most four parameters plus a constant (`WRA -> ACT` is nCWL + nBL + nWR + nRP; `RD ->
/// WR` is nCL + nBL + 2 - nCWL), so each parameter below 2^30 keeps every sum below 2^32.
pub const MAX_TIMING_CYCLES: u32 = (1 << 30) - 1;

/// Bytes of one OS frame (page).
pub const FRAME_BYTES: u64 = 4096;

/// Largest memory, in bytes, over all devices: frame numbers are `u32` in the OS's frame
/// table, page-table entries and allocator, so at most 2^32 frames of 4 KiB (16 TiB).
pub const MAX_MEMORY_BYTES: u64 = (1u64 << 32) * FRAME_BYTES;

/// `bytes` as a short human-readable size (binary units).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The capacity of `o` in bytes, or `None` when it does not fit 64 bits.
pub fn capacity_bytes(o: &Organisation) -> Option<u64> {
    [
        o.channels as u64,
        o.ranks as u64,
        o.banks_per_rank() as u64,
        o.rows as u64,
    ]
    .into_iter()
    .try_fold(o.row_bytes(), |acc, n| acc.checked_mul(n))
}

/// Checks that the memory of `o` (channels x ranks x banks x rows x row bytes) fits the
/// address space the model can map; `key` names the config key the error points at.
pub fn check_capacity(o: &Organisation, key: &str) -> Result<u64> {
    match capacity_bytes(o) {
        Some(bytes) if bytes <= MAX_MEMORY_BYTES => Ok(bytes),
        bytes => Err(config_err(format!(
            "{key}: {} channel(s) x {} rank(s) of {} make {}; at most {} can be simulated (2^32 frames of 4 KiB: the OS's frame numbers are 32-bit)",
            o.channels,
            o.ranks,
            human_bytes(o.row_bytes() * o.banks_per_rank() as u64 * o.rows as u64),
            bytes.map_or_else(|| "more than 2^64 bytes".to_string(), human_bytes),
            human_bytes(MAX_MEMORY_BYTES),
        ))),
    }
}
