//! The optional command log: one CSV line per issued command (cycle, command, channel, rank,
//! bank group, bank, subarray, row, column), buffered and written to a file. Fields a command
//! does not address are -1 (a REFsb's bank group: it refreshes its bank in every group).
//! The independent timing checker in `tests/` replays this file.

use crate::mapping::DramAddr;
use crate::spec::{Command, Level};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub const HEADER: &str = "cycle,command,channel,rank,bankgroup,bank,subarray,row,column";

pub struct CommandLog {
    path: PathBuf,
    out: BufWriter<File>,
    error: Option<std::io::Error>,
}

impl CommandLog {
    pub fn create(path: &Path) -> std::io::Result<CommandLog> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        writeln!(out, "{HEADER}")?;
        Ok(CommandLog {
            path: path.to_path_buf(),
            out,
            error: None,
        })
    }

    pub fn record(&mut self, cycle: u64, cmd: Command, channel: u32, a: &DramAddr) {
        if self.error.is_some() {
            return;
        }
        let scope = cmd.scope();
        let bank_known = scope >= Level::Bank;
        let (bg, bank, sa) = if bank_known {
            (a.bankgroup as i64, a.bank as i64, a.subarray as i64)
        } else {
            (-1, -1, -1)
        };
        // A bank-set command (REFsb) addresses its bank in every bank group.
        let bg = if cmd.addresses_bank_set() { -1 } else { bg };
        let row = if scope >= Level::Row {
            a.row as i64
        } else {
            -1
        };
        let col = if scope == Level::Column {
            a.column as i64
        } else {
            -1
        };
        let sa = if scope >= Level::Row { sa } else { -1 };
        let r = writeln!(
            self.out,
            "{cycle},{},{channel},{},{bg},{bank},{sa},{row},{col}",
            cmd.name(),
            a.rank
        );
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    /// Flushes the file; reports the first write error, naming the file.
    pub fn finish(mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(format!("{}: {e}", self.path.display()));
        }
        self.out
            .flush()
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }
}
