//! The Python binding `bulksim._core`: thin wrappers that resolve configs, run simulations with
//! the GIL released, and hand results back as JSON text (the Python package parses it). Engine
//! errors become `ConfigError`, `TraceError` or `OSError` with the engine's message.

use bulksim_core::config::{Config, CONFIG_FIELDS};
use bulksim_core::spec::{presets, Timing};
use bulksim_core::stats::STAT_DOCS;
use bulksim_core::system::stats::SYSTEM_STAT_DOCS;
use bulksim_core::workload::forkbench::{Forkbench, RandomAccess};
use bulksim_core::workload::generate::{GenOptions, Generator};
use bulksim_core::workload::source::{Workload, WorkloadFormat};
use bulksim_core::workload::standin::generator::write_prefix;
use bulksim_core::workload::standin::spec::{self as standin, KindInfo, Spec};
use bulksim_core::workload::synthetic::{Synthetic, KINDS};
use bulksim_core::workload::trace::{TraceFormat, TraceReader};
use bulksim_core::{sim, Error};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::io::BufWriter;
use std::path::Path;

create_exception!(
    bulksim._core,
    ConfigError,
    PyValueError,
    "A bad config file, key or value."
);
create_exception!(
    bulksim._core,
    TraceError,
    PyValueError,
    "A malformed or unreadable trace."
);

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Config(m) => ConfigError::new_err(m),
        Error::Trace(m) => TraceError::new_err(m),
        Error::Io(m) => PyOSError::new_err(m),
    }
}

/// Defaults, then the config file (if any, with its includes), then the preset (if any), then
/// `key=value` overrides, merged in that order.
fn merged(
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: &[String],
) -> Result<Config, Error> {
    let base = match config_path {
        Some(path) => Config::from_file(Path::new(path))?,
        None => Config::default(),
    };
    let mut all = Vec::new();
    if let Some(p) = preset {
        all.push(format!("dram.preset=\"{p}\""));
    }
    all.extend(sets.iter().cloned());
    base.apply_sets(&all)
}

/// `merged`, validated as a whole.
fn resolve(
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: &[String],
) -> Result<Config, Error> {
    let config = merged(config_path, preset, sets)?;
    config.validate()?;
    Ok(config)
}

#[pyfunction]
#[pyo3(signature = (config_path, preset, sets))]
fn resolve_config(
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: Vec<String>,
) -> PyResult<String> {
    resolve(config_path, preset, &sets)
        .map(|c| c.to_toml())
        .map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (config_path, preset, sets, trace, trace_format, command_log=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn run_trace(
    py: Python<'_>,
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: Vec<String>,
    trace: &str,
    trace_format: &str,
    command_log: Option<&str>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    let config = resolve(config_path, preset, &sets).map_err(to_py)?;
    let format: TraceFormat = trace_format.parse().map_err(to_py)?;
    let mut reader = TraceReader::open(Path::new(trace), format).map_err(to_py)?;
    let stats = py
        .detach(|| {
            let mut report = |n: u64| {
                if let Some(cb) = &progress {
                    Python::attach(|py| {
                        let _ = cb.call1(py, (n,));
                    });
                }
            };
            sim::run(
                &config,
                &mut reader,
                command_log.map(Path::new),
                Some(&mut report),
            )
        })
        .map_err(to_py)?;
    Ok((
        serde_json::to_string(&stats).expect("stats serialize"),
        stats.summary(),
    ))
}

/// Runs a full-system workload (a trace file or a directory of per-thread traces), writing
/// every DRAM command the run issues to `command_log` (CSV) if given, and calling `progress`
/// with (instructions retired, simulated ns) about twice a second and once at the end. `fmt`
/// names the workload's format (detected from the content when None); `copies` runs that
/// many copies, one core and address space each.
#[pyfunction]
#[pyo3(signature = (config_path, preset, sets, workload, command_log=None, progress=None, fmt=None, copies=1))]
#[allow(clippy::too_many_arguments)]
fn run_workload(
    py: Python<'_>,
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: Vec<String>,
    workload: &str,
    command_log: Option<&str>,
    progress: Option<Py<PyAny>>,
    fmt: Option<&str>,
    copies: u32,
) -> PyResult<(String, String)> {
    let config = resolve(config_path, preset, &sets).map_err(to_py)?;
    let format = fmt
        .map(WorkloadFormat::from_name)
        .transpose()
        .map_err(to_py)?;
    let path = Path::new(workload);
    run_opened(
        py,
        &config,
        progress,
        command_log.map(Path::new),
        path,
        || Workload::open(path, format, copies),
    )
}

/// Opens a workload with `open` and runs it under `config` without holding the GIL, calling
/// `progress` with (instructions retired, simulated ns); returns (stats JSON, summary).
fn run_opened(
    py: Python<'_>,
    config: &Config,
    progress: Option<Py<PyAny>>,
    command_log: Option<&Path>,
    path: &Path,
    open: impl FnOnce() -> Result<Workload, Error> + Send,
) -> PyResult<(String, String)> {
    let stats = py
        .detach(|| {
            let mut report = |instructions: u64, simulated_ns: f64| {
                if let Some(cb) = &progress {
                    Python::attach(|py| {
                        let _ = cb.call1(py, (instructions, simulated_ns));
                    });
                }
            };
            bulksim_core::system::run_opened_workload(
                config,
                open()?,
                path,
                command_log,
                progress.is_some().then_some(&mut report as _),
            )
        })
        .map_err(to_py)?
        .0;
    Ok((
        serde_json::to_string(&stats).expect("stats serialize"),
        stats.summary(),
    ))
}

/// Runs several programs side by side, each `(path, format)` (format detected when None) on
/// its own cores and in its own address spaces, in the order given (`threads[].copy` is the
/// program's index).
#[pyfunction]
#[pyo3(signature = (config_path, preset, sets, programs, progress=None))]
fn run_workload_mix(
    py: Python<'_>,
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: Vec<String>,
    programs: Vec<(String, Option<String>)>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    let config = resolve(config_path, preset, &sets).map_err(to_py)?;
    let programs = programs
        .into_iter()
        .map(|(path, fmt)| {
            let format = fmt.as_deref().map(WorkloadFormat::from_name).transpose()?;
            Ok((std::path::PathBuf::from(path), format))
        })
        .collect::<Result<Vec<_>, Error>>()
        .map_err(to_py)?;
    let path = programs.first().map(|p| p.0.clone()).unwrap_or_default();
    run_opened(py, &config, progress, None, &path, || {
        Workload::open_mix(&programs)
    })
}

/// The format of the workload at `path` as judged from its content (its name).
#[pyfunction]
fn detect_workload_format(path: &str) -> PyResult<String> {
    WorkloadFormat::detect(Path::new(path))
        .map(|f| f.name().to_string())
        .map_err(to_py)
}

/// Converts a workload or request trace (`bulksim convert`, docs/workloads.md): `src` in
/// `from_fmt` (detected when None) into `dst` in `to_fmt`, through a functional cache built
/// from the resolved config's `[[cache.level]]` when `cache` is true, stopping with an error
/// once the output stands for more than `max_instructions` (None: the default, 10^11). Returns
/// (input format, reads, writes, copies, initializations, instructions) written.
#[pyfunction]
#[pyo3(signature = (src, dst, to_fmt, from_fmt=None, cache=false, config_path=None, sets=Vec::new(), max_instructions=None))]
#[allow(clippy::too_many_arguments)]
fn convert(
    py: Python<'_>,
    src: &str,
    dst: &str,
    to_fmt: &str,
    from_fmt: Option<&str>,
    cache: bool,
    config_path: Option<&str>,
    sets: Vec<String>,
    max_instructions: Option<u64>,
) -> PyResult<(String, u64, u64, u64, u64, u64)> {
    let levels = if cache {
        Some(
            resolve(config_path, None, &sets)
                .map_err(to_py)?
                .cache
                .level,
        )
    } else {
        None
    };
    let report = py
        .detach(|| {
            bulksim_core::workload::formats::convert::convert_limited(
                Path::new(src),
                from_fmt,
                Path::new(dst),
                to_fmt,
                levels.as_deref(),
                max_instructions
                    .unwrap_or(bulksim_core::workload::formats::convert::DEFAULT_MAX_INSTRUCTIONS),
            )
        })
        .map_err(to_py)?;
    let w = report.written;
    Ok((
        report.from,
        w.reads,
        w.writes,
        w.copies,
        w.inits,
        w.instructions,
    ))
}

/// The input and output format names of `convert`.
#[pyfunction]
fn convert_formats() -> (Vec<&'static str>, Vec<&'static str>) {
    (
        bulksim_core::workload::formats::convert::input_names(),
        bulksim_core::workload::formats::sink::OutputFormat::NAMES.to_vec(),
    )
}

/// The names of the workload formats there are readers for.
#[pyfunction]
fn workload_formats() -> Vec<&'static str> {
    WorkloadFormat::ALL.iter().map(|f| f.name()).collect()
}

/// One region read back after a run: its bytes, or None where unmapped.
type RegionBytes = Option<Vec<u8>>;

/// `run_workload`, then reads memory as the workload's threads see it at the end: for each
/// `(thread, vaddr, length)` in `regions`, the bytes at `vaddr` in the address space that
/// thread ran as (through the caches), or None where a byte is unmapped or the thread never ran.
/// Lets tests check what bulk operations left in memory.
#[pyfunction]
fn run_workload_read(
    py: Python<'_>,
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: Vec<String>,
    workload: &str,
    regions: Vec<(usize, u64, usize)>,
) -> PyResult<(String, String, Vec<RegionBytes>)> {
    let config = resolve(config_path, preset, &sets).map_err(to_py)?;
    let (stats, bytes) = py
        .detach(|| {
            let (stats, system) = bulksim_core::system::run_workload(&config, Path::new(workload))?;
            let bytes = regions
                .iter()
                .map(|&(thread, vaddr, len)| {
                    system
                        .pid_of(thread)
                        .and_then(|pid| system.read_virtual(pid, vaddr, len))
                })
                .collect::<Vec<_>>();
            Ok::<_, Error>((stats, bytes))
        })
        .map_err(to_py)?;
    Ok((
        serde_json::to_string(&stats).expect("stats serialize"),
        stats.summary(),
        bytes,
    ))
}

/// Writes a forkbench workload directory.
#[pyfunction]
#[pyo3(signature = (path, array_bytes, pages_updated, seed=1, binary=true, parent_thread=0, child_thread=1))]
#[allow(clippy::too_many_arguments)]
fn generate_forkbench(
    py: Python<'_>,
    path: &str,
    array_bytes: u64,
    pages_updated: u64,
    seed: u64,
    binary: bool,
    parent_thread: u32,
    child_thread: u32,
) -> PyResult<()> {
    let fb = Forkbench {
        array_bytes,
        pages_updated,
        seed,
        binary,
        parent_thread,
        child_thread,
    };
    py.detach(|| fb.write(Path::new(path))).map_err(to_py)
}

/// Writes a random-access (memory-intensive) program as thread `thread` of a workload directory.
#[pyfunction]
#[pyo3(signature = (path, region_bytes, accesses, write_percent=25, work=2, seed=1, thread=0, binary=true))]
#[allow(clippy::too_many_arguments)]
fn generate_random_access(
    py: Python<'_>,
    path: &str,
    region_bytes: u64,
    accesses: u64,
    write_percent: u64,
    work: u64,
    seed: u64,
    thread: u32,
    binary: bool,
) -> PyResult<()> {
    let p = RandomAccess {
        region_bytes,
        accesses,
        write_percent,
        work,
        seed,
        thread,
        binary,
    };
    py.detach(|| p.write(Path::new(path))).map_err(to_py)
}

#[pyfunction]
fn system_stat_docs() -> String {
    serde_json::to_string(&*SYSTEM_STAT_DOCS).expect("docs serialize")
}

/// The resolved spec (organisation, timing in cycles, data rate, source) as JSON.
#[pyfunction]
#[pyo3(signature = (config_path, preset, sets))]
fn spec_json(
    config_path: Option<&str>,
    preset: Option<&str>,
    sets: Vec<String>,
) -> PyResult<String> {
    // The part alone: the rest of the config (e.g. a refresh policy the part cannot run)
    // does not stop `spec show`.
    let config = merged(config_path, preset, &sets).map_err(to_py)?;
    let spec = config.dram_spec().map_err(to_py)?;
    Ok(serde_json::to_string(&spec).expect("spec serializes"))
}

/// Every problem in a config file and its includes (empty when it is good).
#[pyfunction]
fn check_config(path: &str) -> Vec<String> {
    Config::check_file(Path::new(path))
}

#[pyfunction]
fn preset_names() -> Vec<&'static str> {
    presets::PRESET_NAMES.to_vec()
}

#[pyfunction]
fn config_fields() -> String {
    serde_json::to_string(&*CONFIG_FIELDS).expect("docs serialize")
}

#[pyfunction]
fn stat_docs() -> String {
    serde_json::to_string(&*STAT_DOCS).expect("docs serialize")
}

/// The stats that are groups of named entries (`commands`), each with its entries' names.
#[pyfunction]
fn stat_groups() -> Vec<(&'static str, Vec<&'static str>)> {
    bulksim_core::stats::stat_groups()
}

#[pyfunction]
fn timing_params() -> Vec<(&'static str, &'static str)> {
    Timing::PARAMS.to_vec()
}

#[pyfunction]
fn default_config() -> String {
    Config::default().to_toml()
}

#[pyfunction]
#[pyo3(signature = (path, pattern, requests, interval=0, write_fraction=0.0, footprint=1<<30, seed=0))]
#[allow(clippy::too_many_arguments)]
fn generate_trace(
    py: Python<'_>,
    path: &str,
    pattern: &str,
    requests: u64,
    interval: u64,
    write_fraction: f64,
    footprint: u64,
    seed: u64,
) -> PyResult<()> {
    let opts = GenOptions {
        pattern: pattern.parse().map_err(to_py)?,
        requests,
        interval,
        write_fraction,
        footprint,
        seed,
    };
    let generator = Generator::new(opts).map_err(to_py)?;
    let file =
        std::fs::File::create(path).map_err(|e| PyOSError::new_err(format!("{path}: {e}")))?;
    py.detach(|| generator.write_native(&mut BufWriter::with_capacity(1 << 16, file)))
        .map_err(to_py)
}

/// Writes a synthetic stand-in of the Rank Assignment study (`workload::synthetic`) into the
/// directory `path`; returns what was written, counted as written.
#[pyfunction]
#[pyo3(signature = (name, path, threads=0, accesses=250_000, working_set="small", seed=1))]
fn generate_synthetic<'py>(
    py: Python<'py>,
    name: &str,
    path: &str,
    threads: u32,
    accesses: u64,
    working_set: &str,
    seed: u64,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let synthetic = Synthetic::new(name, threads, accesses, working_set, seed).map_err(to_py)?;
    let s = py
        .detach(|| synthetic.write(Path::new(path)))
        .map_err(to_py)?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("name", synthetic.kind.name)?;
    d.set_item("stands_for", synthetic.kind.stands_for)?;
    d.set_item("threads", s.threads)?;
    d.set_item("working_set_bytes", synthetic.working_set.bytes())?;
    d.set_item("instructions", s.instructions)?;
    d.set_item("reads", s.reads)?;
    d.set_item("dependent_reads", s.dependent_reads)?;
    d.set_item("writes", s.writes)?;
    d.set_item("shared_accesses", s.shared_accesses)?;
    d.set_item("footprint_bytes", s.footprint_pages * 4096)?;
    Ok(d)
}

/// The generated stand-ins (`workload::standin`): per kind its name and the programs it
/// stands for; the spec keys with their meaning; and the defaults of the optional keys.
#[pyfunction]
fn standin_info(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    let kinds = pyo3::types::PyDict::new(py);
    for k in standin::KINDS {
        kinds.set_item(k.name, k.stands_for)?;
    }
    d.set_item("kinds", kinds)?;
    let keys = pyo3::types::PyDict::new(py);
    for (key, meaning) in standin::KEYS {
        keys.set_item(key, meaning)?;
    }
    d.set_item("keys", keys)?;
    let defaults = Spec::new(standin::Kind::FpStream);
    d.set_item("size_mb", defaults.size_mb)?;
    d.set_item("instructions", defaults.instructions)?;
    d.set_item("seed", defaults.seed)?;
    d.set_item("instructions_per_ms", defaults.instructions_per_ms)?;
    d.set_item("max_size_mb", standin::MAX_SIZE_MB)?;
    d.set_item("max_instructions", standin::MAX_INSTRUCTIONS)?;
    Ok(d)
}

/// Writes a stand-in spec (`workload::standin::spec`) to `path`; returns its TOML text.
#[pyfunction]
#[pyo3(signature = (path, kind, size_mb, instructions, seed, instructions_per_ms))]
fn write_standin(
    path: &str,
    kind: &str,
    size_mb: u64,
    instructions: u64,
    seed: u64,
    instructions_per_ms: u64,
) -> PyResult<String> {
    let info = KindInfo::from_name(kind).ok_or_else(|| {
        TraceError::new_err(format!(
            "unknown stand-in kind '{kind}'; expected one of {}",
            KindInfo::names().join(", ")
        ))
    })?;
    let spec = Spec {
        kind: info.kind,
        size_mb,
        instructions,
        seed,
        instructions_per_ms,
    };
    spec.write(Path::new(path)).map_err(to_py)?;
    Ok(spec.to_toml())
}

/// Writes the first `instructions` instructions of the stand-in at `spec` as a bulksim
/// trace at `out`; returns the events written.
#[pyfunction]
fn dump_standin(py: Python<'_>, spec: &str, out: &str, instructions: u64) -> PyResult<u64> {
    py.detach(|| write_prefix(Path::new(spec), Path::new(out), instructions))
        .map_err(to_py)
}

/// The synthetic stand-ins' names, in order.
#[pyfunction]
fn synthetic_names() -> Vec<&'static str> {
    KINDS.iter().map(|k| k.name).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The build identity that build.rs computed from the engine's sources.
    m.add("ENGINE_ID", env!("BULKSIM_ENGINE_ID"))?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(run_trace, m)?)?;
    m.add_function(wrap_pyfunction!(spec_json, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    m.add_function(wrap_pyfunction!(config_fields, m)?)?;
    m.add_function(wrap_pyfunction!(stat_docs, m)?)?;
    m.add_function(wrap_pyfunction!(stat_groups, m)?)?;
    m.add_function(wrap_pyfunction!(timing_params, m)?)?;
    m.add_function(wrap_pyfunction!(default_config, m)?)?;
    m.add_function(wrap_pyfunction!(generate_trace, m)?)?;
    m.add_function(wrap_pyfunction!(run_workload, m)?)?;
    m.add_function(wrap_pyfunction!(run_workload_read, m)?)?;
    m.add_function(wrap_pyfunction!(detect_workload_format, m)?)?;
    m.add_function(wrap_pyfunction!(run_workload_mix, m)?)?;
    m.add_function(wrap_pyfunction!(workload_formats, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(convert_formats, m)?)?;
    m.add_function(wrap_pyfunction!(generate_forkbench, m)?)?;
    m.add_function(wrap_pyfunction!(generate_random_access, m)?)?;
    m.add_function(wrap_pyfunction!(system_stat_docs, m)?)?;
    m.add_function(wrap_pyfunction!(generate_synthetic, m)?)?;
    m.add_function(wrap_pyfunction!(synthetic_names, m)?)?;
    m.add_function(wrap_pyfunction!(standin_info, m)?)?;
    m.add_function(wrap_pyfunction!(write_standin, m)?)?;
    m.add_function(wrap_pyfunction!(dump_standin, m)?)?;
    Ok(())
}
