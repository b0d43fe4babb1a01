//! What the full system reads a workload through: `EventSource`, one stream of events per
//! hardware thread, whatever format it came from; `WorkloadFormat`, the formats there are
//! readers for; and `Workload`, the opened threads of one run, `copies` times over (each copy
//! its own processes and address spaces, thread ids of copy k offset by k times the
//! threads per copy).

use crate::error::{Error, Result};
use crate::workload::formats::{
    self, champsim::ChampsimReader, msc::MscReader, ramulator_cpu::RamulatorCpuReader,
    rowclone::RowcloneReader,
};
use crate::workload::program::{thread_files, Event, ProgramReader};
use crate::workload::standin::generator::StandinSource;
use std::path::{Path, PathBuf};

/// One thread's stream of events.
pub trait EventSource: Send {
    /// The next event, None at the end of the stream.
    fn next_event(&mut self) -> Result<Option<Event>>;
    /// `file:record` of the last event read, for errors found when it executes.
    fn location(&self) -> String;
    /// The thread starts only when another forks it.
    fn starts_as_child(&self) -> bool;
    /// Its copy and initialization events are the kernel's page operations (the rowclone
    /// format's `C` and `S` records): each writes a page allocated when it happens
    /// (`os.trace_bulk_destinations`), not a program's buffer.
    fn bulk_events_are_page_operations(&self) -> bool {
        false
    }
}

impl EventSource for ProgramReader {
    fn next_event(&mut self) -> Result<Option<Event>> {
        ProgramReader::next_event(self)
    }
    fn location(&self) -> String {
        ProgramReader::location(self)
    }
    fn starts_as_child(&self) -> bool {
        self.child
    }
}

/// The workload formats the full system reads (docs/workloads.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadFormat {
    /// bulksim's own workload format (`workload::program`): a file or a thread directory.
    Bulksim,
    /// MSC/USIMM post-LLC traces (`formats::msc`).
    Msc,
    /// Ramulator CPU post-LLC traces (`formats::ramulator_cpu`).
    RamulatorCpu,
    /// Post-LLC traces with bulk copy/initialization records (`formats::rowclone`).
    Rowclone,
    /// ChampSim instruction traces (`formats::champsim`).
    Champsim,
    /// A generated stand-in: a TOML spec whose events are generated as they are read
    /// (`workload::standin`).
    Standin,
}

impl WorkloadFormat {
    pub const ALL: [WorkloadFormat; 6] = [
        WorkloadFormat::Bulksim,
        WorkloadFormat::Msc,
        WorkloadFormat::RamulatorCpu,
        WorkloadFormat::Rowclone,
        WorkloadFormat::Champsim,
        WorkloadFormat::Standin,
    ];

    /// The name the CLI and the config use.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadFormat::Bulksim => "bulksim",
            WorkloadFormat::Msc => "msc",
            WorkloadFormat::RamulatorCpu => "ramulator-cpu",
            WorkloadFormat::Rowclone => "rowclone",
            WorkloadFormat::Champsim => "champsim",
            WorkloadFormat::Standin => "standin",
        }
    }

    /// Whether its records are below the caches (last-level-cache misses and write-backs).
    pub fn is_post_llc(self) -> bool {
        matches!(
            self,
            WorkloadFormat::Msc | WorkloadFormat::RamulatorCpu | WorkloadFormat::Rowclone
        )
    }

    pub fn from_name(name: &str) -> Result<WorkloadFormat> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|f| f.name()).collect();
                Error::Trace(format!(
                    "unknown workload format '{name}'; expected one of {}",
                    names.join(", ")
                ))
            })
    }

    /// The format of the workload at `path`, judged from its content (a bounded prefix).
    pub fn detect(path: &Path) -> Result<WorkloadFormat> {
        formats::detect::detect(path)
    }

    /// One copy's thread streams of the workload at `path`.
    pub fn open(self, path: &Path) -> Result<Vec<Box<dyn EventSource>>> {
        let one = |source: Box<dyn EventSource>| Ok(vec![source]);
        match self {
            WorkloadFormat::Bulksim => thread_files(path)?
                .iter()
                .map(|f| Ok(Box::new(ProgramReader::open(f)?) as Box<dyn EventSource>))
                .collect(),
            WorkloadFormat::Msc => one(Box::new(MscReader::open(path)?)),
            WorkloadFormat::RamulatorCpu => one(Box::new(RamulatorCpuReader::open(path)?)),
            WorkloadFormat::Rowclone => one(Box::new(RowcloneReader::open(path)?)),
            WorkloadFormat::Champsim => one(Box::new(ChampsimReader::open(path)?)),
            WorkloadFormat::Standin => one(Box::new(StandinSource::open(path)?)),
        }
    }
}

/// Opens a thread's stream again from its beginning (`system.loop_workloads`).
pub type Reopen = Box<dyn Fn() -> Result<Box<dyn EventSource>> + Send>;

/// One thread of an opened workload.
pub struct WorkloadThread {
    pub source: Box<dyn EventSource>,
    /// Opens `source` again from its beginning.
    pub reopen: Reopen,
    /// Which copy of the workload (or program of a mix) it belongs to.
    pub copy: u32,
    /// The id of its copy's thread 0 among all threads: a fork of thread `k` in this
    /// copy starts thread `base + k`.
    pub base: u32,
}

/// The threads of a run.
pub struct Workload {
    pub format: WorkloadFormat,
    pub threads: Vec<WorkloadThread>,
}

/// The most copies of a workload one run takes (each needs a core).
pub const MAX_COPIES: u32 = 1024;

impl Workload {
    /// Opens the workload at `path` in `format` (detected from the content when `None`),
    /// `copies` times.
    pub fn open(path: &Path, format: Option<WorkloadFormat>, copies: u32) -> Result<Workload> {
        if copies == 0 || copies > MAX_COPIES {
            return Err(Error::Trace(format!(
                "copies = {copies}: expected 1 to {MAX_COPIES} copies of the workload"
            )));
        }
        let program = (path.to_path_buf(), format);
        Self::open_mix(&vec![program; copies as usize])
    }

    /// Opens several programs to run side by side (a multi-programmed mix): each its own
    /// processes and cores, in the order given, each in its format (detected when `None`).
    /// The workload's format is the first program's.
    pub fn open_mix(programs: &[(PathBuf, Option<WorkloadFormat>)]) -> Result<Workload> {
        if programs.is_empty() || programs.len() > MAX_COPIES as usize {
            return Err(Error::Trace(format!(
                "{} programs: expected 1 to {MAX_COPIES}",
                programs.len()
            )));
        }
        let mut threads = Vec::new();
        let mut first = None;
        for (copy, (path, format)) in programs.iter().enumerate() {
            let format = match format {
                Some(f) => *f,
                None => WorkloadFormat::detect(path)?,
            };
            first.get_or_insert(format);
            let base = threads.len() as u32;
            for (i, source) in format.open(path)?.into_iter().enumerate() {
                let path = path.clone();
                threads.push(WorkloadThread {
                    source,
                    reopen: Box::new(move || {
                        format.open(&path)?.into_iter().nth(i).ok_or_else(|| {
                            Error::Trace(format!(
                                "{}: thread {i} is gone from the workload since it was opened",
                                path.display()
                            ))
                        })
                    }),
                    copy: copy as u32,
                    base,
                });
            }
        }
        Ok(Workload {
            format: first.expect("at least one program"),
            threads,
        })
    }

    /// Threads that start running at once (one core each).
    pub fn starting_threads(&self) -> usize {
        self.threads
            .iter()
            .filter(|t| !t.source.starts_as_child())
            .count()
    }
}
