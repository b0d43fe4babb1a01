//! The error type every fallible entry point returns. Each variant carries one message that
//! already names where the problem is (config key, or trace file and line) and what was
//! expected, so callers print it as is; the Python binding maps the variants to
//! `bulksim.ConfigError`, `bulksim.TraceError` and `OSError`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A bad config file, key or value.
    Config(String),
    /// A malformed trace line or an unreadable trace.
    Trace(String),
    /// Any other input/output failure (command log, output file).
    Io(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) | Error::Trace(m) | Error::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn config_err(msg: impl Into<String>) -> Error {
    Error::Config(msg.into())
}
