//! Telling a workload's format from its content: a bounded prefix of the file (decompressed
//! when gzip or xz) is matched against each format's records, so detection reads at most
//! `PEEK_BYTES` whatever the file's size.

use super::champsim;
use super::msc::Msc;
use super::ramulator_cpu::RamulatorCpu;
use super::rowclone::Rowclone;
use super::{open_decompressed, Compression, LineFormat};
use crate::error::{Error, Result};
use crate::workload::lines;
use crate::workload::program::thread_files;
use crate::workload::source::WorkloadFormat;
use crate::workload::standin::spec::Spec;
use std::io::Read;
use std::path::Path;

/// How much of the (decompressed) start of a file detection looks at.
pub const PEEK_BYTES: u64 = 64 * 1024;
/// How many records of a text trace must parse for a format to be chosen.
const PEEK_RECORDS: usize = 16;

/// The format of the workload at `path`.
pub fn detect(path: &Path) -> Result<WorkloadFormat> {
    if path.is_dir() || !path.exists() {
        thread_files(path)?;
        return Ok(WorkloadFormat::Bulksim);
    }
    let name = path.display();
    let (reader, compression) = open_decompressed(path)?;
    let mut head = Vec::new();
    // A corrupt stream may fail before the prefix is full: judge what came out.
    let read = reader.take(PEEK_BYTES).read_to_end(&mut head);
    if head.is_empty() {
        if let Err(e) = read {
            return Err(Error::Trace(format!("{name}: cannot read: {e}")));
        }
    }
    if head.starts_with(b"BSWL") || head.starts_with(b"bulksim-workload") {
        return Ok(WorkloadFormat::Bulksim);
    }
    if is_text(&head) && Spec::looks_like(&head) {
        return Ok(WorkloadFormat::Standin);
    }
    if let Some(format) = text_format(&head) {
        return Ok(format);
    }
    // Binary: ChampSim records when the name says so, or when the whole file (read within
    // the prefix) is whole records; a longer file is judged by its first records.
    let path_name = path.to_string_lossy();
    let named = path_name.contains(".champsimtrace") || compression == Compression::Xz;
    let whole_records = head.len() % champsim::RECORD_BYTES == 0;
    let cut_by_prefix = head.len() as u64 == PEEK_BYTES;
    if !is_text(&head)
        && champsim::looks_like_records(&head)
        && (named || whole_records || cut_by_prefix)
    {
        return Ok(WorkloadFormat::Champsim);
    }
    let names: Vec<_> = WorkloadFormat::ALL.iter().map(|f| f.name()).collect();
    Err(Error::Trace(format!(
        "{name}: cannot tell the workload format from the content: expected one of {} \
         (docs/workloads.md); give it with --workload-format",
        names.join(", ")
    )))
}

/// Whether the bytes read as text (UTF-8, allowing a character cut at the end).
fn is_text(head: &[u8]) -> bool {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => return true,
        Err(_) => return false,
    };
    !text.bytes().any(|b| b == 0)
}

/// The post-LLC text format whose parser accepts the first records.
fn text_format(head: &[u8]) -> Option<WorkloadFormat> {
    if !is_text(head) {
        return None;
    }
    let text = String::from_utf8_lossy(head);
    // The last line may be cut by the prefix: use it only when the file ended within it.
    let complete = if (head.len() as u64) < PEEK_BYTES {
        &text[..]
    } else {
        &text[..text.rfind('\n')?]
    };
    // A line with a stray control character is left to the reader, which names it.
    let records: Vec<&str> = complete
        .split('\n')
        .filter(|l| lines::control_character(l.as_bytes()).is_none())
        .map(lines::content_str)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .take(PEEK_RECORDS)
        .collect();
    if records.is_empty() {
        return None;
    }
    let all = |parse: fn(&str) -> std::result::Result<super::Record, String>| {
        records.iter().all(|r| parse(r).is_ok())
    };
    if all(Msc::parse) {
        Some(WorkloadFormat::Msc)
    } else if all(Rowclone::parse) {
        Some(WorkloadFormat::Rowclone)
    } else if all(RamulatorCpu::parse) {
        Some(WorkloadFormat::RamulatorCpu)
    } else {
        None
    }
}
