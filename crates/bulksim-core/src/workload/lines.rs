//! Bounded reading for every text input read in Rust. Line by line (request traces, text
//! workloads), a line may hold at most `MAX_LINE_BYTES` bytes; a whole-file input (config TOML)
//! at most `MAX_CONFIG_BYTES`. So a file with no newlines or no end (a binary file given as a
//! trace, `/dev/zero`) stops with an error naming the line or file instead of growing one
//! buffer until the allocator aborts.

use std::io::{BufRead, Read};

/// The longest accepted line, newline excluded. Real lines are well under 100 bytes; 4 KB
/// leaves room for long comments.
pub const MAX_LINE_BYTES: usize = 4096;

/// Reads one line, newline included, into `line` (cleared first); the number of bytes read,
/// 0 at the end of the input. A line longer than `MAX_LINE_BYTES` is an `InvalidData` error
/// whose text says so (the caller adds file and line).
pub fn read_line(reader: &mut dyn BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    line.clear();
    // Room for the content, a CR and the newline: a longer line is cut, and seen as too long.
    let n = reader
        .take(MAX_LINE_BYTES as u64 + 2)
        .read_until(b'\n', line)?;
    let content = line.strip_suffix(b"\n").unwrap_or(line);
    let content = content.strip_suffix(b"\r").unwrap_or(content);
    if content.len() > MAX_LINE_BYTES {
        return Err(too_long());
    }
    Ok(n)
}

/// The largest config file: configs are a few KB of TOML.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The whole text of a config file, at most `MAX_CONFIG_BYTES`; a larger file (or an endless
/// one) is an `InvalidData` error saying so.
pub fn read_config_file(path: &std::path::Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_CONFIG_BYTES} bytes (not a config file?)"),
        ));
    }
    Ok(text)
}

/// What to say about a failed read: the limit as is, any other failure as "cannot read".
pub fn read_error(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::InvalidData {
        e.to_string()
    } else {
        format!("cannot read: {e}")
    }
}

fn too_long() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("line longer than {MAX_LINE_BYTES} bytes (not a text file?)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_up_to_the_limit_are_read_and_longer_ones_refused() {
        let at_limit = "x".repeat(MAX_LINE_BYTES) + "\r\nnext\n";
        let mut r = at_limit.as_bytes();
        let mut line = Vec::new();
        assert_eq!(read_line(&mut r, &mut line).unwrap(), MAX_LINE_BYTES + 2);
        assert_eq!(read_line(&mut r, &mut line).unwrap(), 5);
        assert_eq!(line, b"next\n");
        assert_eq!(read_line(&mut r, &mut line).unwrap(), 0);

        let over = "x".repeat(MAX_LINE_BYTES + 1) + "\n";
        let err = read_line(&mut over.as_bytes(), &mut line).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert_eq!(
            err.to_string(),
            "line longer than 4096 bytes (not a text file?)"
        );
        // An endless input without newlines stops after the limit.
        let mut zeros = std::io::repeat(0).take(u64::MAX);
        assert!(read_line(&mut std::io::BufReader::new(&mut zeros), &mut line).is_err());
    }

    #[test]
    fn config_files_are_read_up_to_the_size_limit() {
        let err = read_config_file(std::path::Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "larger than 1048576 bytes (not a config file?)"
        );
        let path = std::env::temp_dir().join(format!("bulksim-cfg-{}.toml", std::process::id()));
        std::fs::write(&path, "x".repeat(MAX_CONFIG_BYTES as usize)).unwrap();
        assert_eq!(read_config_file(&path).unwrap().len(), 1 << 20);
        std::fs::write(&path, "x".repeat(MAX_CONFIG_BYTES as usize + 1)).unwrap();
        assert!(read_config_file(&path).is_err());
        std::fs::remove_file(&path).unwrap();
    }
}
