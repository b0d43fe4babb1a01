//! The software memcpy with non-temporal stores (`system.memcpy = "software_nt"`, the copy
//! engines paper's Sec. 3 alternative; docs/copy_engines.md) on the copy-engines presets:
//! the bytes it moves at each level, the lines it leaves cached, its write-combining buffers'
//! key.

use crate::common;
use bulksim_core::system::{stats::SystemStats, System};
use bulksim_core::workload::program::Event;
use bulksim_core::Config;
use common::{config_file, holds, image_virtual};
use std::path::Path;

/// A resident region for the tests' buffers.
const BASE: u64 = 0x100_0000;
const REGION: u64 = 4 << 20;

fn preset(sets: &[&str]) -> Config {
    config_file("copy_engines.toml", sets)
}

fn run_system(name: &str, config: &Config, body: &[Event]) -> (SystemStats, System) {
    common::run_resident("software-nt", name, config, (BASE, REGION), body)
}

fn run(name: &str, config: &Config, body: &[Event]) -> SystemStats {
    run_system(name, config, body).0
}

/// Waits long enough for every miss in flight to complete.
fn settle() -> Event {
    Event::Compute(4000)
}

/// The software memcpy with non-temporal stores (`system.memcpy = "software_nt"`, the
/// paper's Sec. 3 alternative) copying 4 KB from memory to an uncached destination, both
/// page-aligned: it reads each source line once (128 first-level fills of 32 bytes, 64
/// memory reads of 64 bytes), fetches no destination line, allocates none in any cache,
/// and writes the destination to memory as exactly 4096 / 64 = 64 full-line writes. The
/// software loop, for comparison, fills all 128 destination lines too.
#[test]
fn software_nt_reads_the_source_once_and_writes_whole_lines_around_the_caches() {
    let (src, dst, n) = (BASE + 0x4_0000, BASE + 0x20_0000, 4096);
    let body = [Event::Memcpy { src, dst, bytes: n }];
    for file in ["copy_engines.toml", "copy_engines_ddr3.toml"] {
        let config = config_file(file, &["system.memcpy=\"software_nt\""]);
        let (s, sys) = run_system(&format!("nt-4k-{file}"), &config, &body);
        let wc = s.write_combining.clone().expect("write-combining stats");
        assert_eq!(
            (
                wc.stores,
                wc.full_writes,
                wc.partial_writes,
                wc.invalidated_lines
            ),
            (1024, 64, 0, 0),
            "{file}: (non-temporal stores, full writes, partial writes, lines dropped)"
        );
        let (l1, l2) = (&s.cache["l1"], &s.cache["l2"]);
        // Reads: the source once. Writes: the destination once, as 64-byte lines.
        assert_eq!(
            (l1.below.read_bytes.total(), l1.below.write_bytes.total()),
            (n, n),
            "{file}: L1-L2 bytes read, written"
        );
        assert_eq!(
            (l2.below.read_bytes.total(), l2.below.write_bytes.total()),
            (n, n),
            "{file}: L2-memory bytes read, written"
        );
        // The paper's off-chip traffic: 128 fills of 32 + 4, 64 line writes of 64 + 4.
        assert_eq!(l1.below_bytes_with_addresses, 128 * 36 + 64 * 68, "{file}");
        assert_eq!((s.traffic.copy_bytes, s.traffic.write_bytes), (2 * n, 0));
        if file == "copy_engines_ddr3.toml" {
            assert_eq!((s.memory.reads, s.memory.writes), (64, 64), "{file}");
        }
        for k in 0..n / 32 {
            assert!(
                !holds(&sys, 0, dst + 32 * k) && !holds(&sys, 1, dst + 32 * k),
                "{file}: destination line {k} cached"
            );
            assert!(
                holds(&sys, 1, src + 32 * k),
                "{file}: source line {k} in L2"
            );
        }
        let pid = sys.pid_of(0).unwrap();
        let copied = sys.read_virtual(pid, dst, n as usize).unwrap();
        assert_eq!(copied, sys.read_virtual(pid, src, n as usize).unwrap());
        // The software loop fetches every destination line too (write-allocate).
        let config = config_file(file, &["system.memcpy=\"software\""]);
        let s = run(&format!("sw-4k-{file}"), &config, &body);
        assert_eq!(s.cache["l1"].below.read_bytes.total(), 2 * n, "{file}");
    }
}

/// A destination whose lines are cached dirty (the program stored into them) loses every
/// cached copy to the non-temporal stores: dirty ones are written back first, then dropped
/// from both levels; the bytes in memory and as the core sees them are the source's.
#[test]
fn software_nt_drops_cached_destination_lines_writing_dirty_ones_back_first() {
    let (src, dst) = (BASE + 0x4_0000, BASE + 0x20_0000);
    let mut body: Vec<Event> = (0..8).map(|k| Event::Store(dst + 32 * k)).collect();
    body.push(settle());
    body.push(Event::Memcpy {
        src,
        dst,
        bytes: 256,
    });
    let config = preset(&["system.memcpy=\"software_nt\""]);
    let (s, mut sys) = run_system("nt-dirty-dst", &config, &body);
    let wc = s.write_combining.expect("write-combining stats");
    // 8 dirty L1 lines written back into L2's 4 lines, which go to memory: 8 + 4 write-backs;
    // 8 L1 and 4 L2 lines dropped.
    assert_eq!(
        (wc.full_writes, wc.dirty_write_backs, wc.invalidated_lines),
        (4, 12, 12)
    );
    for k in 0..8 {
        assert!(!holds(&sys, 0, dst + 32 * k) && !holds(&sys, 1, dst + 32 * k));
    }
    let pid = sys.pid_of(0).unwrap();
    let source = sys.read_virtual(pid, src, 256).unwrap();
    assert_eq!(sys.read_virtual(pid, dst, 256).unwrap(), source);
    sys.flush_caches();
    assert_eq!(image_virtual(&sys, dst, 256), source);
}

#[test]
fn wc_buffers_out_of_range_is_a_config_error_naming_the_key() {
    for bad in ["0", "65"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/copy_engines.toml");
        let c = Config::from_file(&path)
            .unwrap()
            .apply_sets(&[&format!("memcpy.wc_buffers={bad}")])
            .unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("memcpy.wc_buffers") && e.contains("expected 1 to 64"),
            "{e}"
        );
    }
}
