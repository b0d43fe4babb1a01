//! Bounded reading for every text input read in Rust, and the one rule for splitting a line
//! into fields. Line by line (request traces, text workloads), a line may hold at most
//! `MAX_LINE_BYTES` bytes; a whole-file input (config TOML, a stand-in spec) at most
//! `MAX_CONFIG_BYTES` (read by `config`, whose reader is re-exported here). So a file with no newlines or no end (a binary file given as a trace,
//! `/dev/zero`) stops with an error naming the line or file instead of growing one buffer
//! until the allocator aborts. Fields are separated by spaces or tabs only: a line ends in
//! `\n` or `\r\n`, and any other control character in it (a stray carriage return, a form
//! feed) is an error, never a field separator that invents a record.

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

/// Whether `b` separates fields: a space or a tab.
#[inline(always)]
pub fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// `text` without the spaces and tabs around it.
pub fn trim_blanks(text: &[u8]) -> &[u8] {
    let start = text
        .iter()
        .position(|&b| !is_blank(b))
        .unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|&b| !is_blank(b))
        .map_or(start, |i| i + 1);
    &text[start..end]
}

/// A line's content: without its line ending (`\n` or `\r\n`) and the blanks around it.
pub fn content(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    trim_blanks(line.strip_suffix(b"\r").unwrap_or(line))
}

/// `content` of a line already known to be UTF-8 text.
pub fn content_str(line: &str) -> &str {
    let bytes = content(line.as_bytes());
    let start = bytes.as_ptr() as usize - line.as_ptr() as usize;
    // Only ASCII bytes were cut, so both ends are character boundaries.
    &line[start..start + bytes.len()]
}

/// The fields of a line's content: the runs of characters between spaces and tabs.
pub fn fields(text: &str) -> impl Iterator<Item = &str> + Clone {
    text.split([' ', '\t']).filter(|f| !f.is_empty())
}

/// What is wrong with a line (its ending, `\n` or `\r\n`, allowed) that holds a control
/// character other than a tab (a carriage return inside the line, a form feed, a NUL), or None
/// when it holds none. Fields are separated by spaces or tabs only, so such a character would
/// otherwise hide inside a field or, read as a blank, split one field in two.
pub fn control_character(line: &[u8]) -> Option<String> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let at = line
        .iter()
        .position(|&b| (b < 0x20 && b != b'\t') || b == 0x7f)?;
    let name = match line[at] {
        b'\r' => "a carriage return (0x0d)".to_string(),
        0x0c => "a form feed (0x0c)".to_string(),
        0x0b => "a vertical tab (0x0b)".to_string(),
        0 => "a NUL byte (0x00)".to_string(),
        b => format!("control character 0x{b:02x}"),
    };
    Some(format!(
        "{name} at byte {} of the line; fields are separated by spaces or tabs, and a line \
         ends in \\n or \\r\\n",
        at + 1
    ))
}

/// A line's content cut to 80 characters for an error message, control characters shown
/// as escapes so that the message stays one line.
pub fn shown(content: &[u8]) -> String {
    let text = String::from_utf8_lossy(content);
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 77 && text.chars().count() > 80 {
            out += "...";
            break;
        }
        if c.is_control() && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

// Config files are read by `config` (below the inputs); stand-in specs use the same bound.
pub use crate::config::{read_config_file, read_small_text_file, MAX_CONFIG_BYTES};

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
    fn fields_are_split_at_spaces_and_tabs_only() {
        assert_eq!(content(b"  31 0x40\t \r\n"), b"31 0x40");
        assert_eq!(content(b"\t\n"), b"");
        assert_eq!(content_str(" \u{e9}t\u{e9} \r\n"), "\u{e9}t\u{e9}");
        let got: Vec<&str> = fields("31\t 472988046  41088").collect();
        assert_eq!(got, ["31", "472988046", "41088"]);
        // A carriage return or form feed inside the line is no separator.
        let got: Vec<&str> = fields("31 472988046\r41088").collect();
        assert_eq!(got, ["31", "472988046\r41088"]);
        assert_eq!(fields("a\x0cb").count(), 1);
    }

    #[test]
    fn control_characters_inside_a_line_are_named() {
        assert_eq!(control_character(b"31 472988046\t41088\r\n"), None);
        assert_eq!(
            control_character(b"31 472988046\r41088\n").unwrap(),
            "a carriage return (0x0d) at byte 13 of the line; fields are separated by spaces \
             or tabs, and a line ends in \\n or \\r\\n"
        );
        assert!(control_character(b"  R\x0c0x40")
            .unwrap()
            .starts_with("a form feed (0x0c) at byte 4"));
        assert!(control_character(b"R 0x40\r\r\n")
            .unwrap()
            .starts_with("a carriage return (0x0d) at byte 7"));
        assert!(control_character(b"R 0x40\x7f")
            .unwrap()
            .starts_with("control character 0x7f at byte 7"));
        assert_eq!(shown(b"31 4\r41"), "31 4\\r41");
        assert_eq!(shown("x".repeat(100).as_bytes()).len(), 80);
    }
}
