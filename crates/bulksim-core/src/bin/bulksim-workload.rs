//! A minimal native full-system driver, for counting host instructions per simulated
//! instruction under valgrind without an interpreter in the way (see
//! docs/perf-fullsystem-notes.md).
//! Usage:
//!   bulksim-workload run DIR [--config FILE] [--copies N] [key=value ...]
//!                                                    runs a workload, prints the stats JSON
//!   bulksim-workload forkbench DIR SIZE_BYTES PAGES  writes a binary forkbench workload (seed 1)

use bulksim_core::error::{Error, Result};
use bulksim_core::workload::forkbench::Forkbench;
use bulksim_core::workload::source::Workload;
use bulksim_core::Config;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str =
    "usage: bulksim-workload run DIR [--config FILE] [--copies N] [key=value ...] | \
                     bulksim-workload forkbench DIR SIZE_BYTES PAGES";

fn number(what: &str, text: &str) -> Result<u64> {
    text.parse()
        .map_err(|_| Error::Config(format!("{what}: not a number: {text:?}")))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result: Result<Option<String>> = match (args.get(1).map(String::as_str), args.len()) {
        (Some("run"), n) if n >= 3 => (|| {
            let (mut base, mut copies, mut sets) = (Config::default(), 1, Vec::new());
            let mut rest = args[3..].iter();
            while let Some(arg) = rest.next() {
                match arg.as_str() {
                    "--config" => {
                        let file = rest.next().ok_or(Error::Config(USAGE.into()))?;
                        base = Config::from_file(Path::new(file))?;
                    }
                    "--copies" => {
                        let n = rest.next().ok_or(Error::Config(USAGE.into()))?;
                        copies = u32::try_from(number("--copies", n)?).map_err(|_| {
                            Error::Config(format!("--copies: {n} is more than {}", u32::MAX))
                        })?;
                    }
                    _ => sets.push(arg.clone()),
                }
            }
            let config = base.apply_sets(&sets)?;
            config.validate()?;
            let path = Path::new(&args[2]);
            let workload = Workload::open(path, None, copies)?;
            let (stats, _) =
                bulksim_core::system::run_opened_workload(&config, workload, path, None, None)?;
            Ok(Some(
                serde_json::to_string_pretty(&stats).expect("stats serialize"),
            ))
        })(),
        (Some("forkbench"), 5) => (|| {
            let bytes = number("SIZE_BYTES", &args[3])?;
            let pages = number("PAGES", &args[4])?;
            Forkbench::new(bytes, pages, 1, true).write(Path::new(&args[2]))?;
            Ok(None)
        })(),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(Some(text)) => {
            // A closed pipe (e.g. `| head`) is not an error worth a panic.
            let _ = writeln!(std::io::stdout(), "{text}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
