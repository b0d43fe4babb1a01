//! The readers of other tools' workload formats (msc, ramulator-cpu, rowclone, champsim):
//! exact event sequences from small files, one error naming file:record for each kind of bad
//! input, detection by content, the full system running them, and `convert`. The streaming
//! passes over the shared real traces (their READMEs' counts) are in
//! tests/test_workload_formats.py, where their absence is a visible skip.

use crate::common;
use bulksim_core::request::VADDR_LIMIT;
use bulksim_core::system::run_opened_workload;
use bulksim_core::workload::formats::champsim::Instr;
use bulksim_core::workload::formats::convert::convert;
use bulksim_core::workload::program::Event;
use bulksim_core::workload::source::{Workload, WorkloadFormat};
use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};

const RESIDENT: Event = Event::MapResident {
    vaddr: 0,
    bytes: VADDR_LIMIT,
};

fn events(format: WorkloadFormat, path: &Path) -> bulksim_core::Result<Vec<Event>> {
    let mut threads = format.open(path)?;
    assert_eq!(threads.len(), 1);
    let mut out = Vec::new();
    while let Some(e) = threads[0].next_event()? {
        out.push(e);
    }
    Ok(out)
}

fn gzip(path: &Path, bytes: &[u8]) {
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap();
}

fn xz(path: &Path, bytes: &[u8]) {
    let mut w = liblzma::write::XzEncoder::new(std::fs::File::create(path).unwrap(), 6);
    w.write_all(bytes).unwrap();
    w.finish().unwrap();
}

#[test]
fn msc_records_become_compute_then_reads_and_write_backs() {
    let d = dir("formats", "msc");
    let text = "2 R 0x88b38078 0x3067fd11\n0 W 0x310a47b8\n\n12 R 0x40 0x1\n";
    let path = d.join("t");
    std::fs::write(&path, text).unwrap();
    assert_eq!(
        events(WorkloadFormat::Msc, &path).unwrap(),
        [
            RESIDENT,
            Event::Compute(2),
            Event::MemRead(0x88b38078),
            Event::MemWrite(0x310a47b8),
            Event::Compute(12),
            Event::MemRead(0x40),
        ]
    );
    // The same records gzip-compressed read alike.
    let gz = d.join("t.gz");
    gzip(&gz, std::fs::read(&path).unwrap().as_slice());
    assert_eq!(
        events(WorkloadFormat::Msc, &gz).unwrap(),
        events(WorkloadFormat::Msc, &path).unwrap()
    );
}

#[test]
fn ramulator_cpu_records_carry_a_read_and_an_optional_write_back() {
    let d = dir("formats", "ramcpu");
    let text = "0 9618752\n9 0x1000 0x2040\n3 89619008 4096\n";
    let plain = d.join("plain");
    std::fs::write(&plain, text).unwrap();
    // Gzip told by its magic bytes, whatever the name.
    let gz = d.join("compressed.txt");
    gzip(&gz, text.as_bytes());
    let expected = [
        RESIDENT,
        Event::MemRead(9618752),
        Event::Compute(9),
        Event::MemRead(0x1000),
        Event::MemWrite(0x2040),
        Event::Compute(3),
        Event::MemRead(89619008),
        Event::MemWrite(4096),
    ];
    assert_eq!(
        events(WorkloadFormat::RamulatorCpu, &plain).unwrap(),
        expected
    );
    assert_eq!(events(WorkloadFormat::RamulatorCpu, &gz).unwrap(), expected);
}

#[test]
fn rowclone_records_include_copies_and_initializations() {
    let d = dir("formats", "rowclone");
    let path = d.join("t");
    let text = "R 7c025cc0 0 0\nR 7c025d00 7f0aafc0 5\nC 79e9d000 1fcff000 4096 1349\nS 7a556000 0 4096 711\nS 0x1000 ff 64 0\n";
    std::fs::write(&path, text).unwrap();
    assert_eq!(
        events(WorkloadFormat::Rowclone, &path).unwrap(),
        [
            RESIDENT,
            Event::MemRead(0x7c025cc0),
            Event::Compute(5),
            Event::MemRead(0x7c025d00),
            Event::MemWrite(0x7f0aafc0),
            Event::Compute(1349),
            Event::Memcpy {
                src: 0x1fcff000,
                dst: 0x79e9d000,
                bytes: 4096
            },
            Event::Compute(711),
            Event::Meminit {
                dst: 0x7a556000,
                bytes: 4096,
                value: 0
            },
            Event::Meminit {
                dst: 0x1000,
                bytes: 64,
                value: 0xff
            },
        ]
    );
}

fn instr(loads: [u64; 4], stores: [u64; 2]) -> [u8; 64] {
    Instr {
        ip: 0x401000,
        is_branch: false,
        branch_taken: false,
        destination_registers: [1, 0],
        source_registers: [2, 3, 0, 0],
        destination_memory: stores,
        source_memory: loads,
    }
    .encode()
}

/// Three plain instructions, one with two loads and a store, one more plain, a branch.
fn champsim_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    for _ in 0..3 {
        b.extend(instr([0; 4], [0; 2]));
    }
    b.extend(instr([0x1000, 0, 0x2008, 0], [0x3000, 0]));
    b.extend(instr([0; 4], [0; 2]));
    let mut branch = Instr::decode(&instr([0; 4], [0; 2]));
    branch.is_branch = true;
    branch.branch_taken = true;
    b.extend(branch.encode());
    b
}

#[test]
fn champsim_records_become_compute_runs_loads_and_stores_in_any_compression() {
    let d = dir("formats", "champsim");
    let expected = [
        RESIDENT,
        Event::Compute(3),
        Event::Load(0x1000),
        Event::Load(0x2008),
        Event::Store(0x3000),
        Event::Compute(2),
    ];
    let bytes = champsim_bytes();
    let plain = d.join("t.champsimtrace");
    std::fs::write(&plain, &bytes).unwrap();
    let gz = d.join("t.champsimtrace.gz");
    gzip(&gz, &bytes);
    let x = d.join("t.champsimtrace.xz");
    xz(&x, &bytes);
    for path in [&plain, &gz, &x] {
        assert_eq!(
            events(WorkloadFormat::Champsim, path).unwrap(),
            expected,
            "{}",
            path.display()
        );
        assert_eq!(
            WorkloadFormat::detect(path).unwrap(),
            WorkloadFormat::Champsim
        );
    }
    // An xz file of two streams reads as `xz -dc` does: both (the first stream alone once
    // ran, silently shorter); bytes after the last stream are an error.
    let two = d.join("two.champsimtrace.xz");
    let (first, second) = bytes.split_at(3 * 64);
    xz(&two, first);
    let mut more = std::fs::read(&two).unwrap();
    xz(&d.join("second.xz"), second);
    more.extend(std::fs::read(d.join("second.xz")).unwrap());
    std::fs::write(&two, &more).unwrap();
    assert_eq!(events(WorkloadFormat::Champsim, &two).unwrap(), expected);
    more.extend(b"garbage");
    std::fs::write(&two, &more).unwrap();
    let err = events(WorkloadFormat::Champsim, &two)
        .unwrap_err()
        .to_string();
    assert!(err.contains("corrupt or truncated xz stream"), "{err}");
    // The layout is ChampSim's: ip first, the flags at bytes 8 and 9, destination memory at
    // 16, source memory at 32.
    let raw = instr([0x11, 0, 0, 0], [0x22, 0]);
    assert_eq!(raw[16], 0x22);
    assert_eq!(raw[32], 0x11);
    assert_eq!(u64::from_le_bytes(raw[..8].try_into().unwrap()), 0x401000);
}

/// Reads until the first error, which must start with `file:record:` and contain `what`.
fn assert_error(format: WorkloadFormat, path: &Path, record: u64, what: &str) {
    let err = match events(format, path) {
        Ok(e) => panic!("{}: no error, {} events", path.display(), e.len()),
        Err(e) => e.to_string(),
    };
    let at = format!("{}:{record}: ", path.display());
    assert!(err.starts_with(&at), "{err} (expected it at {at})");
    assert!(err.contains(what), "{err} (expected '{what}')");
}

#[test]
fn bad_text_records_are_errors_naming_file_record_and_form() {
    let d = dir("formats", "bad-text");
    let cases: &[(WorkloadFormat, &str, u64, &str)] = &[
        (
            WorkloadFormat::Msc,
            "1 R 0x40 0x1\nx R 0x40 0x1\n",
            2,
            "bad instruction count 'x'",
        ),
        (
            WorkloadFormat::Msc,
            "1 R 0x40\n",
            1,
            "a read takes 4 fields",
        ),
        (
            WorkloadFormat::Msc,
            "1 W 0x40 0x1\n",
            1,
            "a write takes 3 fields",
        ),
        (
            WorkloadFormat::Msc,
            "1 X 0x40\n",
            1,
            "unknown request type 'X'",
        ),
        (
            WorkloadFormat::Msc,
            "1 R 0xzz 0x1\n",
            1,
            "bad address '0xzz'",
        ),
        (
            WorkloadFormat::Msc,
            "1 W 0x1000000000000\n",
            1,
            "beyond the page table's reach",
        ),
        (WorkloadFormat::Msc, "1 W 0x40\n0 R 0x40 0x1\n", 0, ""),
        (
            WorkloadFormat::RamulatorCpu,
            "5\n",
            1,
            "missing the read address",
        ),
        (
            WorkloadFormat::RamulatorCpu,
            "5 1 2 3\n",
            1,
            "4 fields; 2 or 3 expected",
        ),
        (
            WorkloadFormat::RamulatorCpu,
            "5 12a\n",
            1,
            "bad read address '12a'",
        ),
        (
            WorkloadFormat::RamulatorCpu,
            "5 281474976710656\n",
            1,
            "beyond the page table's reach",
        ),
        (
            WorkloadFormat::RamulatorCpu,
            "99999999999999 64\n",
            1,
            "above the limit of 2^40",
        ),
        (
            WorkloadFormat::Rowclone,
            "R 40 0\n",
            1,
            "an R record has 4 fields, not 3",
        ),
        (
            WorkloadFormat::Rowclone,
            "C 40 1000 64 1 9\n",
            1,
            "C records have 5 fields, not 6",
        ),
        (
            WorkloadFormat::Rowclone,
            "Q 40 0 1\n",
            1,
            "unknown record type 'Q'",
        ),
        (
            WorkloadFormat::Rowclone,
            "S 40 100 64 1\n",
            1,
            "value 0x100 does not fit a byte",
        ),
        (WorkloadFormat::Rowclone, "C 40 80 128 1\n", 1, "overlap"),
        (
            WorkloadFormat::Rowclone,
            "C 40 1000 0 1\n",
            1,
            "a byte count of 0",
        ),
        (
            WorkloadFormat::Rowclone,
            "S ffffffffff00 0 4096 1\n",
            1,
            "ends beyond the page table's reach",
        ),
        (
            WorkloadFormat::Rowclone,
            "R 40 0 1\nR 40 0 -1\n",
            2,
            "bad instruction count '-1'",
        ),
    ];
    for (i, &(format, text, record, what)) in cases.iter().enumerate() {
        let path = d.join(format!("case{i}"));
        std::fs::write(&path, text).unwrap();
        if what.is_empty() {
            events(format, &path).unwrap();
            continue;
        }
        assert_error(format, &path, record, what);
        // Every message says which form was expected.
        let err = events(format, &path).unwrap_err().to_string();
        assert!(err.contains("format), got '"), "{err}");
    }
}

/// Fields are separated by spaces or tabs only: a carriage return or form feed inside a line
/// once split a field in two (`31 472988046\r41088` read as a read plus an invented
/// write-back). It is now an error naming the line, and a line ending in `\r\n` still reads.
#[test]
fn control_characters_inside_text_records_are_errors_naming_the_line() {
    let d = dir("formats", "control");
    let cases: &[(WorkloadFormat, &str, &str)] = &[
        (
            WorkloadFormat::RamulatorCpu,
            "5 64\n31 472988046\r41088\n",
            "a carriage return (0x0d) at byte 13 of the line",
        ),
        (
            WorkloadFormat::RamulatorCpu,
            "31 472988046\x0c41088\n",
            "a form feed (0x0c) at byte 13 of the line",
        ),
        (
            WorkloadFormat::Msc,
            "1 R 0x40 0x1\n2 R\r0x80 0x1\n",
            "a carriage return (0x0d) at byte 4 of the line",
        ),
        (
            WorkloadFormat::Msc,
            "1 W 0x40\x0b\n",
            "a vertical tab (0x0b) at byte 9 of the line",
        ),
        (
            WorkloadFormat::Rowclone,
            "R 40 0 1\nR 40\r80 2\n",
            "a carriage return (0x0d) at byte 5 of the line",
        ),
        (
            WorkloadFormat::Bulksim,
            "bulksim-workload 1\nN 0 1048576\nL 4096\r128\nX\n",
            "a carriage return (0x0d) at byte 7 of the line",
        ),
    ];
    for (i, &(format, text, what)) in cases.iter().enumerate() {
        let path = d.join(format!("case{i}.trace"));
        std::fs::write(&path, text).unwrap();
        let record = text
            .lines()
            .position(|l| l.contains(what_char(what)))
            .unwrap() as u64
            + 1;
        assert_error(format, &path, record, what);
        let err = events(format, &path).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "fields are separated by spaces or tabs, and a line ends in \\n or \\r\\n"
            ),
            "{err}"
        );
    }
    // Windows line endings and tabs between fields are fine.
    let path = d.join("crlf.trace");
    std::fs::write(&path, "31\t472988046 41088\r\n2 64\r\n").unwrap();
    assert_eq!(
        events(WorkloadFormat::RamulatorCpu, &path).unwrap(),
        [
            RESIDENT,
            Event::Compute(31),
            Event::MemRead(472988046),
            Event::MemWrite(41088),
            Event::Compute(2),
            Event::MemRead(64),
        ]
    );
    // Detection leaves such a line to the reader, which names it.
    let path = d.join("detect.trace");
    std::fs::write(&path, "2 R 0x40 0x1\n3 W 0x80\r\n4 R\x0c0xc0 0x1\n").unwrap();
    assert_eq!(WorkloadFormat::detect(&path).unwrap(), WorkloadFormat::Msc);
    assert_error(
        WorkloadFormat::Msc,
        &path,
        3,
        "a form feed (0x0c) at byte 4",
    );
}

/// The control character an expected message names.
fn what_char(what: &str) -> char {
    match what {
        w if w.contains("carriage return") => '\r',
        w if w.contains("form feed") => '\x0c',
        _ => '\x0b',
    }
}

/// A file of zeros (or `/dev/zero`) is not a ChampSim trace: detection does not take it for
/// one, and read as one its first record is refused (it once ran for 2^40 records).
#[test]
fn zero_records_are_not_champsim_instructions() {
    let d = dir("formats", "zeros");
    let zeros = d.join("zeros.champsimtrace");
    std::fs::write(&zeros, [0u8; 64 * 100]).unwrap();
    assert_error(
        WorkloadFormat::Champsim,
        &zeros,
        1,
        "64 zero bytes, not a ChampSim `input_instr` record (it has no instruction address)",
    );
    let dev_zero = Path::new("/dev/zero");
    let err = WorkloadFormat::detect(dev_zero).unwrap_err().to_string();
    assert!(
        err.starts_with("/dev/zero: cannot tell the workload format from the content"),
        "{err}"
    );
    assert_error(WorkloadFormat::Champsim, dev_zero, 1, "64 zero bytes");
    // A zero record after real ones names its place.
    let mut bytes = champsim_bytes();
    bytes.extend([0u8; 64]);
    let path = d.join("tail.champsimtrace");
    std::fs::write(&path, &bytes).unwrap();
    assert_error(WorkloadFormat::Champsim, &path, 7, "64 zero bytes");
}

#[test]
fn bad_binary_and_compressed_input_names_the_record() {
    let d = dir("formats", "bad-binary");
    // A ChampSim trace cut inside its third record.
    let mut bytes = champsim_bytes();
    bytes.truncate(2 * 64 + 10);
    let cut = d.join("cut.champsimtrace");
    std::fs::write(&cut, &bytes).unwrap();
    assert_error(
        WorkloadFormat::Champsim,
        &cut,
        3,
        "record cut short: 10 of 64 bytes",
    );
    // An address beyond the page table in the fourth record's source operands.
    let mut far = Vec::new();
    far.extend(instr([0; 4], [0; 2]));
    far.extend(instr([0; 4], [0; 2]));
    far.extend(instr([0; 4], [0; 2]));
    far.extend(instr([0x40, 1 << 48, 0, 0], [0; 2]));
    let path = d.join("far.champsimtrace");
    std::fs::write(&path, &far).unwrap();
    assert_error(
        WorkloadFormat::Champsim,
        &path,
        4,
        "source memory operand 0x1000000000000 is beyond the page table's reach",
    );
    // A gzip file cut short: the error names the record being read.
    let text: String = (0..2000)
        .map(|i| format!("{i} R 0x{:x} 0x1\n", i * 64))
        .collect();
    let gz = d.join("cut.gz");
    gzip(&gz, text.as_bytes());
    let whole = std::fs::read(&gz).unwrap();
    std::fs::write(&gz, &whole[..whole.len() / 2]).unwrap();
    let err = events(WorkloadFormat::Msc, &gz).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}:", gz.display())) && err.contains("gzip stream is cut short"),
        "{err}"
    );
    // A corrupt xz stream.
    let x = d.join("bad.xz");
    xz(&x, &champsim_bytes());
    let mut broken = std::fs::read(&x).unwrap();
    let middle = broken.len() / 2;
    broken[middle] ^= 0xff;
    std::fs::write(&x, &broken).unwrap();
    let err = events(WorkloadFormat::Champsim, &x)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("{}:1: ", x.display())) && err.contains("xz stream"),
        "{err}"
    );
}

#[test]
fn formats_are_detected_from_the_content() {
    let d = dir("formats", "detect");
    let cases = [
        (
            "a",
            "2 R 0x88b38078 0x3067fd11\n0 W 0x310a47b8\n",
            WorkloadFormat::Msc,
        ),
        (
            "b",
            "0 9618752\n9 89618496 4096\n",
            WorkloadFormat::RamulatorCpu,
        ),
        (
            "c",
            "R 7c025cc0 0 0\nC 79e9d000 1fcff000 4096 1349\n",
            WorkloadFormat::Rowclone,
        ),
        ("d", "bulksim-workload 2\nC 5\nX\n", WorkloadFormat::Bulksim),
    ];
    for (name, text, format) in cases {
        let path = d.join(name);
        std::fs::write(&path, text).unwrap();
        assert_eq!(WorkloadFormat::detect(&path).unwrap(), format, "{name}");
        let gz = d.join(format!("{name}.gz"));
        gzip(&gz, text.as_bytes());
        if format != WorkloadFormat::Bulksim {
            assert_eq!(WorkloadFormat::detect(&gz).unwrap(), format, "{name}.gz");
        }
    }
    // A binary file of whole records needs no telling name.
    let anon = d.join("anon");
    std::fs::write(&anon, champsim_bytes()).unwrap();
    assert_eq!(
        WorkloadFormat::detect(&anon).unwrap(),
        WorkloadFormat::Champsim
    );
    for (name, bytes) in [
        ("prose", b"hello world\n".to_vec()),
        ("odd", vec![7u8; 100]),
    ] {
        let path = d.join(name);
        std::fs::write(&path, bytes).unwrap();
        let err = WorkloadFormat::detect(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: cannot tell the workload format from the content: expected one of bulksim, \
                 msc, ramulator-cpu, rowclone, champsim, standin (docs/workloads.md); give it with \
                 --workload-format",
                path.display()
            )
        );
    }
}

/// The shared real traces' folder: `BULKSIM_SHARED_TRACES`, else `shared/traces` beside the
/// repository (or beside any folder above it, for a worktree nested deeper). None, saying
/// so on stderr, when it is absent: the caller uses a small file of its own instead.
fn shared(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("BULKSIM_SHARED_TRACES")
        .map(PathBuf::from)
        .or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .skip(2)
                .map(|a| a.join("../shared/traces"))
                .find(|p| p.is_dir())
        })
        .unwrap_or_else(|| PathBuf::from("../shared/traces"));
    let dir = root.join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "{} is absent (set BULKSIM_SHARED_TRACES to the shared traces folder): using a \
             small file instead",
            dir.display()
        );
        None
    }
}

/// A small post-LLC trace runs through the full system: every read and write-back is one
/// 64-byte line over the channel, each record's events count as instructions, and two
/// copies each run the same thread on their own core.
#[test]
fn a_post_llc_trace_runs_below_the_caches_and_copies_run_alike() {
    let d = dir("formats", "system");
    let path = d.join("t");
    let text: String = (0..200u64)
        .map(|i| {
            if i % 4 == 3 {
                format!("{} W 0x{:x}\n", i % 7, 0x10_0000 + i * 4096)
            } else {
                format!("{} R 0x{:x} 0x400\n", i % 7, 0x20_0000 + i * 64)
            }
        })
        .collect();
    std::fs::write(&path, &text).unwrap();
    let gaps: u64 = (0..200u64).map(|i| i % 7).sum();
    let config = paper_system(&[]);
    let run = |copies| {
        let w = Workload::open(&path, None, copies).unwrap();
        assert_eq!(w.format, WorkloadFormat::Msc);
        run_opened_workload(&config, w, &path, None, None)
            .unwrap()
            .0
    };
    let one = run(1);
    assert_eq!(one.traffic.read_bytes, 150 * 64);
    assert_eq!(one.traffic.write_bytes, 50 * 64);
    // The resident map, the gaps, one per record.
    assert_eq!(one.threads[0].instructions, 1 + gaps + 200);
    assert_eq!(one.os.page_faults, 0);
    let two = run(2);
    assert_eq!(two.cores.len(), 2);
    assert_eq!(two.threads.len(), 2);
    for t in &two.threads {
        assert_eq!(t.instructions, one.threads[0].instructions);
    }
    // Own address spaces: each page is made present once per copy.
    assert!(one.os.populated > 0);
    assert_eq!(two.os.populated, 2 * one.os.populated);
    assert_eq!(two.traffic.read_bytes, 2 * one.traffic.read_bytes);
}

#[test]
fn convert_msc_to_bulksim_and_back_keeps_every_record() {
    let d = dir("formats", "convert-msc");
    let src = match shared("msc") {
        Some(s) => s.join("comm1"),
        None => {
            let p = d.join("small");
            std::fs::write(
                &p,
                "2 R 0x88b38078 0x3067fd11\n0 W 0x310a47b8\n7 R 0x40 0x1\n",
            )
            .unwrap();
            p
        }
    };
    let mid = d.join("mid.btrace");
    let back = d.join("back.msc");
    let there = convert(&src, None, &mid, "bulksim", None).unwrap();
    assert_eq!(there.from, "msc");
    convert(&mid, None, &back, "msc", None).unwrap();
    // The PC is not kept (no event carries it): compare gap, type and address.
    let key = |path: &Path| -> Vec<(u64, String, u64)> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let addr = u64::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap();
                (f[0].parse().unwrap(), f[1].to_string(), addr)
            })
            .collect()
    };
    let original = key(&src);
    assert_eq!(key(&back), original);
    assert_eq!(
        there.written.reads + there.written.writes,
        original.len() as u64
    );
}

/// A tiny program through a 1 KiB direct-mapped cache (16 sets of 64-byte lines): the
/// requests are the misses and dirty evictions derived by hand; cycles count instructions,
/// each request one.
#[test]
fn convert_through_a_cache_gives_the_misses_and_write_backs() {
    use bulksim_core::config::CacheLevelConfig;
    let d = dir("formats", "convert-cache");
    write_thread(
        &d,
        0,
        false,
        &[
            Event::Store(0x40), // miss: read 0x40 (cycle 0), dirty
            Event::Load(0x48),  // hit: one instruction
            Event::Load(0x440), // set 1 again: read 0x440 (2), write back 0x40 (3)
            Event::Load(0x40),  // miss: read 0x40 (4)
            Event::Compute(10), // 5..15
            Event::Load(0x40),  // hit
            Event::Exit,
        ],
    );
    let level = CacheLevelConfig {
        size_kb: 1,
        ways: 1,
        ..CacheLevelConfig::default()
    };
    let out = d.join("out.csv");
    let report = convert(
        &d,
        Some("bulksim"),
        &out,
        "native",
        Some(std::slice::from_ref(&level)),
    )
    .unwrap();
    assert!(report.cache_filtered);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "0,R,0x40\n2,R,0x440\n3,W,0x40\n4,R,0x40\n"
    );
    // msc output: the hits and the compute are the next record's gap.
    let msc = d.join("out.msc");
    convert(
        &d,
        Some("bulksim"),
        &msc,
        "msc",
        Some(std::slice::from_ref(&level)),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&msc).unwrap(),
        "0 R 0x40 0x0\n1 R 0x440 0x0\n0 W 0x40\n0 R 0x40 0x0\n"
    );
    // Without a cache every access is a request.
    convert(&d, Some("bulksim"), &out, "dramsim3", None).unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "0x40 WRITE 0\n0x40 READ 1\n0x440 READ 2\n0x40 READ 3\n0x40 READ 14\n"
    );
    // Bad arguments: one error each.
    let err = |r: bulksim_core::Result<_>| r.unwrap_err().to_string();
    assert_eq!(
        err(convert(&d, Some("bulksim"), &out, "champsim", None)),
        "cannot convert to 'champsim'; output formats: bulksim, msc, ramulator-cpu, native, \
         dramsim3, ramulator"
    );
    assert!(err(convert(&d, Some("nope"), &out, "msc", None))
        .starts_with("cannot convert from 'nope'; input formats: bulksim, msc,"));
    let msc_in = d.join("in.msc");
    std::fs::write(&msc_in, "1 R 0x40 0x0\n").unwrap();
    assert!(err(convert(&msc_in, None, &out, "native", Some(&[level])))
        .starts_with("a cache filter applies only from an instruction-level format"));
}
