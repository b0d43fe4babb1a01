//! Hostile inputs to the readers (issue #13): arithmetic on what a record asks for never wraps,
//! lines are bounded, binary workloads are checked end to end (gzip trailer, truncation,
//! trailing bytes), and workload directories are complete or refused. Every case is one error
//! naming the file and the line or record.

use crate::common;
use bulksim_core::request::VADDR_LIMIT;
use bulksim_core::sim;
use bulksim_core::system::run_workload;
use bulksim_core::workload::lines::MAX_LINE_BYTES;
use bulksim_core::workload::program::{thread_files, Event, ProgramReader, MAX_COMPUTE};
use bulksim_core::workload::trace::{RequestSource, TraceFormat, TraceReader};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    common::dir("bulksim-hostile", name)
}

/// Replays trace text written to `d/t.trace`; the error text if the run fails.
fn replay(d: &Path, text: &str, sets: &[&str]) -> Result<bulksim_core::Stats, String> {
    let path = d.join("t.trace");
    std::fs::write(&path, text).unwrap();
    let mut reader = TraceReader::open(&path, TraceFormat::Native).map_err(|e| e.to_string())?;
    sim::run(&common::config(sets), &mut reader, None, None).map_err(|e| e.to_string())
}

#[test]
fn bulk_ranges_that_wrap_past_2_pow_64_name_the_line() {
    let d = dir("wrap");
    let cases = [
        // The case: ran as one 4 KB init at a wrapped address.
        "0,I,0xffffffffffffff00,4096,0",
        // A copy from a source that wraps (moved 64 lines, none out of range).
        "0,C,0xfffffffffffff000,0x100000,4096",
        "0,C,0x100000,0xfffffffffffff001,4095",
    ];
    for case in cases {
        let err = replay(&d, &format!("# bulk\n{case}\n"), &[]).unwrap_err();
        let want = format!(
            "{}:2: range runs past the top of the address space (2^64)",
            d.join("t.trace").display()
        );
        assert!(err.starts_with(&want), "{case}: {err}");
    }
    // Ending just below 2^64 does not wrap: the reader accepts it, the memory refuses it.
    let err = replay(&d, "0,I,0xffffffffffffe000,4096,7\n", &[]).unwrap_err();
    assert!(
        err.contains("t.trace:1: init of 4096 bytes") && err.contains("reaches beyond the memory"),
        "{err}"
    );
}

#[test]
fn bulk_ranges_past_capacity_name_the_line() {
    let d = dir("capacity");
    let stats = replay(&d, "0,R,0\n", &[]).unwrap();
    assert_eq!(
        stats.bulk.reserved_bytes, 0,
        "channel copies reserve nothing"
    );
    let capacity = stats.bulk.usable_bytes;
    // The last 4 KB of memory: accepted, and all of it is initialized.
    let fits = replay(&d, &format!("0,I,{},4096,1\n", capacity - 4096), &[]).unwrap();
    assert_eq!(fits.out_of_range_requests, 0);
    assert_eq!((fits.bulk.inits, fits.bulk.bytes_initialized), (1, 4096));
    // One byte further: refused, naming the line, for both ends of a copy.
    for line in [
        format!("0,I,{},4096,1", capacity - 4095),
        format!("0,C,{},0,4096", capacity - 4095),
        format!("0,C,0,{},4096", capacity),
    ] {
        let err = replay(&d, &format!("0,R,0\n{line}\n"), &[]).unwrap_err();
        assert!(
            err.contains("t.trace:2: ")
                && err.contains(&format!("reaches beyond the memory's {capacity} bytes")),
            "{line}: {err}"
        );
    }
}

#[test]
fn lines_longer_than_the_limit_name_the_line_in_every_text_format() {
    let long = "9".repeat(MAX_LINE_BYTES + 1);
    let cases = [
        (TraceFormat::Native, format!("1,R,0x40\n2,R,{long}\n")),
        (
            TraceFormat::Dramsim3,
            format!("0x40 READ 1\n{long} READ 2\n"),
        ),
        (TraceFormat::Ramulator, format!("LD 0x40\nLD {long}\n")),
    ];
    for (format, text) in cases {
        let mut r = TraceReader::new(text.as_bytes(), format, "t.trace");
        assert!(r.next_request().unwrap().is_some());
        let err = r.next_request().unwrap_err().to_string();
        assert_eq!(
            err,
            "t.trace:2: line longer than 4096 bytes (not a text file?)"
        );
    }
    // An endless input without newlines (`--trace /dev/zero`) stops at the limit.
    let mut r = TraceReader::new(
        BufReader::new(std::io::repeat(0)),
        TraceFormat::Native,
        "/dev/zero",
    );
    let err = r.next_request().unwrap_err().to_string();
    assert_eq!(
        err,
        "/dev/zero:1: line longer than 4096 bytes (not a text file?)"
    );
    // A line at the limit is read (here a comment, then a request).
    let ok = format!("#{}\n1,R,0x40\n", "x".repeat(MAX_LINE_BYTES - 1));
    let mut r = TraceReader::new(ok.as_bytes(), TraceFormat::Native, "t.trace");
    assert_eq!(r.next_request().unwrap().unwrap().cycle, 1);

    // Text workloads: the header line and event lines alike.
    for (text, at) in [
        (format!("bulksim-workload 1{long}\n"), 1),
        (format!("bulksim-workload 1\nC 1\nC {long}\n"), 3),
    ] {
        let err = events_of_text(&text).unwrap_err();
        assert_eq!(
            err,
            format!("w.trace:{at}: line longer than 4096 bytes (not a text file?)")
        );
    }
    let endless = ProgramReader::from_text(Box::new(BufReader::new(std::io::repeat(b'b'))), "zero");
    assert_eq!(
        endless.err().unwrap().to_string(),
        "zero:1: line longer than 4096 bytes (not a text file?)"
    );
}

fn events_of_text(text: &str) -> Result<Vec<Event>, String> {
    let mut r =
        ProgramReader::from_text(Box::new(std::io::Cursor::new(text.to_string())), "w.trace")
            .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(e) = r.next_event().map_err(|e| e.to_string())? {
        out.push(e);
    }
    Ok(out)
}

#[test]
fn workload_numbers_and_ranges_that_cannot_be_addressed_name_the_record() {
    let cases = [
        ("C 18446744073709551616", "number above 2^64 - 1"),
        ("L 99999999999999999999999", "number above 2^64 - 1"),
        (
            "C 4294967297",
            "4294967297 instructions in one event; at most 2^32 (4294967296)",
        ),
        (
            "A 0xfffffffffffff000 8192",
            "range of 8192 bytes at 0xfffffffffffff000 ends beyond the page table's reach",
        ),
        (
            "P 0xfffffffff000 4097",
            "ends beyond the page table's reach: addresses must be below 0x1000000000000",
        ),
        (
            "M 0x1000 0xfffffffffffff000 4096",
            "range of 4096 bytes at 0xfffffffffffff000",
        ),
        (
            "M 0xffffffffffffffff 0x1000 1",
            "range of 1 bytes at 0xffffffffffffffff",
        ),
        (
            "I 0xffffffffffffff00 4096 0",
            "range of 4096 bytes at 0xffffffffffffff00",
        ),
    ];
    for (line, what) in cases {
        let err = events_of_text(&format!("bulksim-workload 1\nC 1\n{line}\n")).unwrap_err();
        assert!(
            err.starts_with("w.trace:3: ") && err.contains(what),
            "{line}: {err}"
        );
    }
    // The limits themselves are accepted: the last page below the reach, the largest count.
    let at_limits = format!(
        "bulksim-workload 1\nC {MAX_COMPUTE}\nP {:#x} 4096\nI {:#x} 4096 1\n",
        VADDR_LIMIT - 4096,
        VADDR_LIMIT - 4096
    );
    assert_eq!(events_of_text(&at_limits).unwrap().len(), 3);
}

#[test]
fn events_after_an_exit_are_refused() {
    let err = events_of_text("bulksim-workload 1\nC 1\nX\n# done\n\nC 5\n").unwrap_err();
    assert_eq!(
        err,
        "w.trace:6: event after the exit (`X`) of record 3; an exit ends the thread's trace"
    );
    // Comments and blank lines after the exit are fine; the location stays at the exit.
    let mut r = ProgramReader::from_text(
        Box::new(std::io::Cursor::new("bulksim-workload 1\nX\n\n# end\n")),
        "w.trace",
    )
    .unwrap();
    assert_eq!(r.next_event().unwrap(), Some(Event::Exit));
    assert_eq!(r.location(), "w.trace:2");
    assert_eq!(r.next_event().unwrap(), None);
}

/// A binary workload's uncompressed bytes: header, then events with varint operands.
fn binary_body(events: &[u8]) -> Vec<u8> {
    let mut body = b"BSWL\x01\x00".to_vec();
    body.extend_from_slice(events);
    body
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// Events of binary file bytes `file` (written to `d/name`), or the error.
fn events_of_binary(d: &Path, name: &str, file: &[u8]) -> Result<Vec<Event>, String> {
    let path = d.join(name);
    std::fs::write(&path, file).unwrap();
    let mut r = ProgramReader::open(&path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(e) = r.next_event().map_err(|e| e.to_string())? {
        out.push(e);
    }
    Ok(out)
}

/// C 5, S 0x10040, L 0x10040, X.
const EVENTS: &[u8] = b"C\x05S\xc0\x80\x04L\xc0\x80\x04X";

#[test]
fn binary_workloads_are_checked_to_the_gzip_trailer() {
    let d = dir("btrace");
    let good = gzip(&binary_body(EVENTS));
    let want = vec![
        Event::Compute(5),
        Event::Store(0x10040),
        Event::Load(0x10040),
        Event::Exit,
    ];
    assert_eq!(events_of_binary(&d, "good.btrace", &good).unwrap(), want);
    let name = d.join("t.btrace").display().to_string();
    let n = good.len();
    let corrupt = "the gzip trailer's CRC-32 or length does not match the data (corrupt file)";

    // The trailer: CRC-32 (4 bytes), then the length (4 bytes). The error comes when the
    // reader looks past the exit, record 5.
    for at in [n - 8, n - 5, n - 4, n - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x01;
        let err = events_of_binary(&d, "t.btrace", &bad).unwrap_err();
        assert_eq!(err, format!("{name}:5: {corrupt}"), "byte {at}");
    }
    // Trailing bytes after the stream, also a second gzip member (events would be dropped).
    for extra in [b"junk".to_vec(), gzip(b"C\x01")] {
        let mut padded = good.clone();
        padded.extend_from_slice(&extra);
        let err = events_of_binary(&d, "t.btrace", &padded).unwrap_err();
        assert_eq!(
            err,
            format!("{name}:5: trailing bytes after the gzip stream")
        );
    }
    // Every cut of the file is an error; none reads as a complete workload.
    for len in 0..n {
        let got = events_of_binary(&d, "t.btrace", &good[..len]);
        let err = got.expect_err(&format!(
            "a file cut to {len} of {n} bytes was read as complete"
        ));
        assert!(err.starts_with(&name), "{err}");
    }
    // Any one flipped bit either is caught or lies in a header field the data does not
    // depend on (gzip's mtime, flags, OS): never altered events.
    for at in 0..n {
        for bit in 0..8 {
            let mut bad = good.clone();
            bad[at] ^= 1 << bit;
            if let Ok(events) = events_of_binary(&d, "t.btrace", &bad) {
                assert_eq!(events, want, "bit {bit} of byte {at}");
            }
        }
    }
}

#[test]
fn binary_records_that_do_not_fit_their_fields_name_the_record() {
    let d = dir("btrace-fields");
    // A 10-byte varint whose last byte carries more than bit 63 (it used to read as 5).
    let mut too_wide = b"C\x85".to_vec();
    too_wide.extend([0x80; 8]);
    too_wide.push(0x02);
    // The largest value, 2^64 - 1, ends with 0x01 and reads back.
    let mut widest = b"C".to_vec();
    widest.extend([0xff; 9]);
    widest.push(0x01);
    let name = d.join("t.btrace").display().to_string();
    let err = events_of_binary(&d, "t.btrace", &gzip(&binary_body(&too_wide))).unwrap_err();
    assert_eq!(err, format!("{name}:1: varint longer than 64 bits"));
    let err = events_of_binary(&d, "t.btrace", &gzip(&binary_body(&widest))).unwrap_err();
    assert_eq!(
        err,
        format!(
            "{name}:1: {} instructions in one event; at most 2^32 ({MAX_COMPUTE})",
            u64::MAX
        )
    );
    // An event after the exit, and a child flag that is neither 0 nor 1.
    let mut after = EVENTS.to_vec();
    after.extend(b"C\x01");
    let err = events_of_binary(&d, "t.btrace", &gzip(&binary_body(&after))).unwrap_err();
    assert_eq!(
        err,
        format!(
            "{name}:5: event after the exit (`X`) of record 4; an exit ends the thread's trace"
        )
    );
    let err = events_of_binary(&d, "t.btrace", &gzip(b"BSWL\x01\x02X")).unwrap_err();
    assert!(
        err.starts_with(&format!(
            "{name}:0: not a binary workload trace of version 1 to 2"
        )),
        "{err}"
    );
}

#[test]
fn workload_directories_are_complete_or_refused() {
    let d = dir("gaps");
    let thread = "bulksim-workload 1\nC 5\nX\n";
    std::fs::write(d.join("thread-0.trace"), thread).unwrap();
    std::fs::write(d.join("thread-2.trace"), thread).unwrap();
    std::fs::write(d.join("notes.txt"), "not a thread").unwrap();
    let err = thread_files(&d).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}: thread-2.trace is not part of the workload: thread files are thread-<id>.trace or .btrace with ids 0, 1, 2, ... without gaps, and there is no thread-1",
            d.display()
        )
    );
    // The run refuses it too, rather than running thread 0 alone.
    let config = common::paper_system(&[]);
    assert_eq!(run_workload(&config, &d).err().unwrap().to_string(), err);
    // Names that are no id are refused the same way.
    std::fs::write(d.join("thread-1.trace"), thread).unwrap();
    std::fs::write(d.join("thread-03.btrace"), b"").unwrap();
    let err = thread_files(&d).unwrap_err().to_string();
    assert!(
        err.contains(": thread-03.btrace is not part of the workload")
            && err.ends_with("there is no thread-3"),
        "{err}"
    );
    std::fs::remove_file(d.join("thread-03.btrace")).unwrap();
    // Complete: three threads, other files ignored.
    let files = thread_files(&d).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["thread-0.trace", "thread-1.trace", "thread-2.trace"]
    );
}

#[test]
fn config_files_are_read_up_to_a_size_limit() {
    let err = bulksim_core::Config::from_file(Path::new("/dev/zero")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/dev/zero: cannot read config: larger than 1048576 bytes (not a config file?)"
    );
    assert_eq!(
        bulksim_core::Config::check_file(Path::new("/dev/zero")),
        ["/dev/zero: cannot read config: larger than 1048576 bytes (not a config file?)"]
    );
    // An include is read the same way, and the error names it.
    let d = dir("config");
    std::fs::write(d.join("c.toml"), "include = \"/dev/zero\"\n").unwrap();
    let err = bulksim_core::Config::from_file(&d.join("c.toml")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/dev/zero: cannot read config: larger than"),
        "{err}"
    );
}

/// Generators refuse what they could not write correctly: cycles that wrap, arrays and
/// regions whose trace the reader would refuse.
#[test]
fn generators_refuse_parameters_that_would_wrap_or_be_unreadable() {
    use bulksim_core::workload::forkbench::{Forkbench, RandomAccess, MAX_ARRAY_BYTES};
    use bulksim_core::workload::generate::{GenOptions, Generator, Pattern};
    let opts = |requests, interval| GenOptions {
        pattern: Pattern::Stream,
        requests,
        interval,
        write_fraction: 0.0,
        footprint: 1 << 20,
        seed: 1,
    };
    // 3 requests 2^63 cycles apart: the third would be due at 2^64, cycle 0 once wrapped.
    let err = Generator::new(opts(3, 1 << 63)).err().unwrap().to_string();
    assert_eq!(
        err,
        "interval: 3 requests 9223372036854775808 cycles apart pass cycle 2^64 - 1"
    );
    // Two requests: the last is due at 2^63, a number.
    let mut g = Generator::new(opts(2, 1 << 63)).unwrap();
    assert_eq!(g.next_request().unwrap().unwrap().cycle, 0);
    assert_eq!(g.next_request().unwrap().unwrap().cycle, 1 << 63);

    let d = dir("generators");
    let too_big = MAX_ARRAY_BYTES + 4096;
    let err = Forkbench::new(too_big, 1, 1, true)
        .write(&d)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "forkbench: array size {too_big} bytes does not fit"
        )),
        "{err}"
    );
    assert!(
        std::fs::read_dir(&d).unwrap().next().is_none(),
        "nothing written"
    );
    let ra = RandomAccess {
        region_bytes: too_big,
        accesses: 1,
        write_percent: 0,
        work: 1,
        seed: 1,
        thread: 0,
        binary: false,
    };
    assert!(ra
        .write(&d)
        .unwrap_err()
        .to_string()
        .contains(&format!("got {too_big}")));
    let ra = RandomAccess {
        region_bytes: 4096,
        work: MAX_COMPUTE + 1,
        ..ra
    };
    assert!(ra
        .write(&d)
        .unwrap_err()
        .to_string()
        .contains(&format!("got {}", MAX_COMPUTE + 1)));
    // At the limit the array's trace is written and reads back.
    let ra = RandomAccess {
        region_bytes: MAX_ARRAY_BYTES,
        work: MAX_COMPUTE,
        ..ra
    };
    ra.write(&d).unwrap();
    let mut r = ProgramReader::open(&d.join("thread-0.trace")).unwrap();
    while r.next_event().unwrap().is_some() {}
}

/// Request traces separate fields by spaces or tabs (dramsim3, ramulator) or commas (native)
/// only: a carriage return or form feed inside a line is an error naming the line, never a
/// separator (`LD\r0x40` once read as a load); `\r\n` line endings still read.
#[test]
fn control_characters_inside_request_trace_lines_name_the_line() {
    let cases = [
        (TraceFormat::Ramulator, "LD 0x40\nLD\r0x80\n", 2, 3),
        (TraceFormat::Ramulator, "LD\x0c0x40\n", 1, 3),
        (TraceFormat::Dramsim3, "0x40 READ 1\n0x80 READ\r2\n", 2, 10),
        (TraceFormat::Native, "0,R,0x40\n1,W\r,0x80\n", 2, 4),
        (TraceFormat::Native, "0,R,0x40\r\r\n", 1, 9),
    ];
    for (format, text, line, byte) in cases {
        let mut reader = TraceReader::new(text.as_bytes(), format, "t.trace");
        let err = loop {
            match reader.next_request() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("{text:?}: read without an error"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(
            err.starts_with(&format!("t.trace:{line}: a "))
                && err.contains(&format!(
                    ") at byte {byte} of the line; fields are separated"
                )),
            "{text:?}: {err}"
        );
    }
    let mut reader = TraceReader::new(
        "LD 0x40\r\n\tST\t0x80 \r\n".as_bytes(),
        TraceFormat::Ramulator,
        "t.trace",
    );
    assert!(reader.next_request().unwrap().is_some());
    assert!(reader.next_request().unwrap().is_some());
    assert!(reader.next_request().unwrap().is_none());
}
