//! A minimal native driver: replays one trace and prints the stats JSON. Used by `make bench`
//! to count machine instructions per request under valgrind without an interpreter in the way.
//! Usage: bulksim-replay TRACE FORMAT [key=value ...]

use bulksim_core::workload::trace::{TraceFormat, TraceReader};
use bulksim_core::{sim, Config};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: bulksim-replay TRACE native|dramsim3|ramulator [key=value ...]");
        return ExitCode::from(2);
    }
    let result = (|| {
        let format: TraceFormat = args[2].parse()?;
        let config = Config::default().apply_sets(&args[3..])?;
        config.validate()?;
        let mut reader = TraceReader::open(Path::new(&args[1]), format)?;
        sim::run(&config, &mut reader, None, None)
    })();
    match result {
        Ok(stats) => {
            // A closed pipe (e.g. `| head`) is not an error worth a panic.
            let text = serde_json::to_string_pretty(&stats).expect("stats serialize");
            let _ = writeln!(std::io::stdout(), "{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
