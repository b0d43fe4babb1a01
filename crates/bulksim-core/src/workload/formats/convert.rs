//! `bulksim convert`: a workload or request trace rewritten in another format, streamed. The
//! input is any workload format (one thread) or a request trace (native, dramsim3,
//! ramulator; its cycles are dropped, its requests become reads and write-backs below the
//! caches). From an instruction-level format (bulksim, champsim, standin) to a post-LLC or request
//! format, line accesses go through a functional cache hierarchy (`cache_filter`) when one
//! is given: misses become reads, dirty evictions write-backs, hits count as non-memory
//! instructions; without one every line access is a request. See `sink` for how each output
//! writes gaps, cycles and bulk operations. A conversion stops with an error once the output
//! stands for more than its instruction limit (`DEFAULT_MAX_INSTRUCTIONS` unless given), so an
//! endless input ends instead of running (or filling the disk) forever.

use super::cache_filter::{CacheFilter, MemoryRequest, MEMORY_LINE};
use super::sink::{OutputFormat, Sink, Written};
use crate::bulk::BulkKind;
use crate::config::CacheLevelConfig;
use crate::error::{Error, Result};
use crate::request::RequestKind;
use crate::workload::program::Event;
use crate::workload::source::{EventSource, WorkloadFormat};
use crate::workload::trace::{RequestSource, TraceFormat, TraceOp, TraceReader};
use std::path::Path;

/// The default limit on the instructions a conversion's output stands for (`bulksim convert
/// --max-instructions`): as many as trace replay's default `sim.max_cycles`, since a native or
/// dramsim3 output counts one instruction per memory cycle and replay refuses a cycle beyond
/// `sim.max_cycles`. Far above any real trace (ChampSim's are about 10^9 instructions); an
/// endless input stops here.
pub const DEFAULT_MAX_INSTRUCTIONS: u64 = crate::config::DEFAULT_MAX_CYCLES;

/// What a conversion read and wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertReport {
    /// The input's format (as given, or detected).
    pub from: String,
    pub written: Written,
    pub cache_filtered: bool,
}

/// An input: a workload format's events, or a request trace's requests as events.
enum Input {
    Events(Box<dyn EventSource>),
    Requests(TraceReader<std::io::BufReader<std::fs::File>>),
}

impl Input {
    fn next(&mut self) -> Result<Option<Event>> {
        match self {
            Input::Events(s) => s.next_event(),
            Input::Requests(r) => Ok(r.next_request()?.map(|rec| match rec.op {
                TraceOp::Access {
                    kind: RequestKind::Read,
                    addr,
                } => Event::MemRead(addr),
                TraceOp::Access { addr, .. } => Event::MemWrite(addr),
                TraceOp::Bulk(op) => match op.kind {
                    BulkKind::Copy { src } => Event::Memcpy {
                        src,
                        dst: op.dst,
                        bytes: op.bytes,
                    },
                    BulkKind::Init { value } => Event::Meminit {
                        dst: op.dst,
                        bytes: op.bytes,
                        value,
                    },
                },
            })),
        }
    }

    fn location(&self) -> String {
        match self {
            Input::Events(s) => s.location(),
            Input::Requests(r) => r.location(),
        }
    }
}

/// The formats `convert` reads: the workload formats and the request trace formats.
pub fn input_names() -> Vec<&'static str> {
    let mut names: Vec<_> = WorkloadFormat::ALL.iter().map(|f| f.name()).collect();
    names.extend(TraceFormat::NAMES);
    names
}

/// Converts `input` (in `from`, detected from the content when None) into `output` in `to`,
/// through a cache of `cache` levels when given (instruction-level inputs only), up to
/// `DEFAULT_MAX_INSTRUCTIONS`.
pub fn convert(
    input: &Path,
    from: Option<&str>,
    output: &Path,
    to: &str,
    cache: Option<&[CacheLevelConfig]>,
) -> Result<ConvertReport> {
    convert_limited(input, from, output, to, cache, DEFAULT_MAX_INSTRUCTIONS)
}

/// `convert`, stopping with an error naming the input record once the output stands for more
/// than `max_instructions` instructions.
pub fn convert_limited(
    input: &Path,
    from: Option<&str>,
    output: &Path,
    to: &str,
    cache: Option<&[CacheLevelConfig]>,
    max_instructions: u64,
) -> Result<ConvertReport> {
    let to_format = OutputFormat::from_name(to)?;
    let (mut source, from_name, instruction_level) = open_input(input, from)?;
    if cache.is_some() && !(instruction_level && to_format != OutputFormat::Bulksim) {
        return Err(Error::Trace(format!(
            "a cache filter applies only from an instruction-level format (bulksim, champsim, standin) \
             to a post-LLC or request format, not from {from_name} to {to}; leave out the cache \
             configuration (or give --no-cache)"
        )));
    }
    let mut filter = cache.map(CacheFilter::new).transpose()?;
    // Without a filter, an instruction-level stream's accesses still become line requests.
    let lines_to_requests = instruction_level && to_format != OutputFormat::Bulksim;
    let mut sink = Sink::create(output, to_format)?;
    let mut requests = Vec::new();
    let over_limit = |source: &Input| {
        Error::Trace(format!(
            "{}: the input stands for more than {max_instructions} instructions, the \
             conversion's limit (convert --max-instructions; the default, 10^11, is as many \
             cycles as trace replay takes by default); an endless input? raise \
             --max-instructions to convert more",
            source.location()
        ))
    };
    while let Some(event) = source.next()? {
        // Checked as each event arrives: the error names the record the input had reached.
        if sink.written.instructions > max_instructions {
            return Err(over_limit(&source));
        }
        let at = || source.location();
        if !lines_to_requests {
            sink.event(&event, &at)?;
            continue;
        }
        requests.clear();
        match line_requests(event, &mut filter, &mut requests, &at)? {
            Some(accesses) => {
                write_requests(&mut sink, &requests, accesses, filter.is_some(), &at)?
            }
            None => sink.event(&event, &at)?,
        }
    }
    if sink.written.instructions > max_instructions {
        return Err(over_limit(&source));
    }
    Ok(ConvertReport {
        from: from_name,
        written: sink.finish()?,
        cache_filtered: filter.is_some(),
    })
}

/// The line requests an instruction-level event makes (through the cache filter when there is
/// one) into `requests`, and how many accesses it made; `None` for an event that is no
/// access (written as it is).
fn line_requests(
    event: Event,
    filter: &mut Option<CacheFilter>,
    requests: &mut Vec<MemoryRequest>,
    location: &dyn Fn() -> String,
) -> Result<Option<u64>> {
    let mut accesses = 0u64;
    let mut access = |addr: u64, store: bool, out: &mut Vec<MemoryRequest>| {
        accesses += 1;
        match filter {
            Some(f) => f.access(addr, store, out),
            None if store => out.push(MemoryRequest::WriteBack(addr / MEMORY_LINE * MEMORY_LINE)),
            None => out.push(MemoryRequest::Read(addr / MEMORY_LINE * MEMORY_LINE)),
        }
    };
    match event {
        Event::Load(a) | Event::LoadDependent(a) => access(a, false, requests),
        Event::Store(a) => access(a, true, requests),
        Event::LoadRange { vaddr, bytes } | Event::KernelFromUser { vaddr, bytes } => {
            for line in line_addresses(vaddr, bytes) {
                access(line, false, requests);
            }
        }
        Event::StoreRange { vaddr, bytes } | Event::KernelToUser { vaddr, bytes } => {
            for line in line_addresses(vaddr, bytes) {
                access(line, true, requests);
            }
        }
        // A copy or initialization runs as a CPU loop of line loads and stores.
        Event::Memcpy { src, dst, bytes } => {
            for (s, d) in line_addresses(src, bytes).zip(line_addresses(dst, bytes)) {
                access(s, false, requests);
                access(d, true, requests);
            }
        }
        Event::Meminit { dst, bytes, .. } => {
            for line in line_addresses(dst, bytes) {
                access(line, true, requests);
            }
        }
        Event::Fork(_) | Event::Spawn(_) => {
            return Err(Error::Trace(format!(
                "{}: a fork or thread start cannot be converted: convert takes one thread",
                location()
            )))
        }
        _ => return Ok(None),
    }
    Ok(Some(accesses))
}

/// Writes one event's line requests, after the accesses that hit in the filter as compute.
fn write_requests(
    sink: &mut Sink,
    requests: &[MemoryRequest],
    accesses: u64,
    filtered: bool,
    at: &dyn Fn() -> String,
) -> Result<()> {
    // Accesses that reached memory are the requests' instructions; the rest (hits) are
    // non-memory instructions as far as the post-LLC stream is concerned.
    let reads = requests
        .iter()
        .filter(|r| matches!(r, MemoryRequest::Read(_)))
        .count() as u64;
    let hits = if filtered { accesses - reads } else { 0 };
    if hits > 0 {
        sink.event(&Event::Compute(hits), at)?;
    }
    for r in requests {
        let e = match *r {
            MemoryRequest::Read(a) => Event::MemRead(a),
            MemoryRequest::WriteBack(a) => Event::MemWrite(a),
        };
        sink.event(&e, at)?;
    }
    Ok(())
}

/// The byte addresses of the memory lines a range touches, each line once.
fn line_addresses(start: u64, bytes: u64) -> impl Iterator<Item = u64> {
    let first = start / MEMORY_LINE;
    let last = (start + bytes.max(1) - 1) / MEMORY_LINE;
    (first..=last).map(|l| l * MEMORY_LINE)
}

/// Opens the input: (its events, its format's name, whether it is instruction-level).
fn open_input(path: &Path, from: Option<&str>) -> Result<(Input, String, bool)> {
    if let Some(name) = from {
        if let Ok(format) = name.parse::<TraceFormat>() {
            return Ok((
                Input::Requests(TraceReader::open(path, format)?),
                name.to_string(),
                false,
            ));
        }
    }
    let format = match from {
        Some(name) => WorkloadFormat::from_name(name).map_err(|_| {
            Error::Trace(format!(
                "cannot convert from '{name}'; input formats: {}",
                input_names().join(", ")
            ))
        })?,
        None => WorkloadFormat::detect(path)?,
    };
    let mut threads = format.open(path)?;
    if threads.len() != 1 {
        return Err(Error::Trace(format!(
            "{}: {} threads; convert takes a workload of one thread",
            path.display(),
            threads.len()
        )));
    }
    let source = threads.pop().expect("one thread");
    Ok((
        Input::Events(source),
        format.name().to_string(),
        !format.is_post_llc(),
    ))
}
