//! The layering rules of the crate (see the module comment of `src/lib.rs`), checked on the
//! sources: the input formats name nothing of the controller, `bulk` and `controller` do not
//! name each other, and `config` does not name the OS layer.
//!
//! A file "names" a module if it mentions the path `crate::MODULE` anywhere (code or doc
//! links), also inside a grouped `use crate::{...}`, or reaches it as `super::super::MODULE`.

use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `.rs` files at `rel` under src/ (one file, or every file of a directory, recursively).
fn sources(rel: &str) -> Vec<PathBuf> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        if p.is_dir() {
            let mut entries: Vec<_> = fs::read_dir(p)
                .expect("read source dir")
                .map(|e| e.expect("dir entry").path())
                .collect();
            entries.sort();
            for e in entries {
                walk(&e, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p.to_path_buf());
        }
    }
    let mut out = Vec::new();
    walk(&src().join(rel), &mut out);
    assert!(!out.is_empty(), "no sources at src/{rel}");
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `text` at byte `at` starts the identifier `module` (not a longer name).
fn ident_at(text: &str, at: usize, module: &str) -> bool {
    text[at..].starts_with(module) && !text[at + module.len()..].starts_with(is_ident)
}

/// The 1-based lines of `text` that name `crate::module`.
fn names(text: &str, module: &str) -> Vec<usize> {
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let mut hits = Vec::new();
    for prefix in ["crate::", "super::super::"] {
        for (at, _) in text.match_indices(prefix) {
            if at > 0 && text[..at].ends_with(is_ident) {
                continue; // e.g. `bulksim_crate::`
            }
            let rest = at + prefix.len();
            if ident_at(text, rest, module) {
                hits.push(line_of(at));
            } else if text[rest..].starts_with('{') {
                // A grouped import: the top-level names inside the braces.
                let mut depth = 0;
                let mut start_of_item = true;
                for (i, c) in text[rest..].char_indices() {
                    match c {
                        '{' => {
                            depth += 1;
                            start_of_item = depth == 1;
                            continue;
                        }
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => {
                            start_of_item = true;
                            continue;
                        }
                        c if c.is_whitespace() => continue,
                        _ => {}
                    }
                    if start_of_item && depth == 1 && ident_at(text, rest + i, module) {
                        hits.push(line_of(rest + i));
                    }
                    start_of_item = false;
                }
            }
        }
    }
    hits.sort_unstable();
    hits
}

/// Every (file, line) under each of `dirs` that names `module`.
fn violations(dirs: &[&str], module: &str) -> Vec<String> {
    let mut out = Vec::new();
    for dir in dirs {
        for file in sources(dir) {
            let text = fs::read_to_string(&file).expect("read source");
            for line in names(&text, module) {
                let rel = file.strip_prefix(src()).unwrap_or(&file);
                out.push(format!(
                    "src/{}:{line} names crate::{module}",
                    rel.display()
                ));
            }
        }
    }
    out
}

#[test]
fn the_checker_sees_plain_grouped_and_super_paths() {
    let text = "use crate::controller::RequestKind;\n\
                use crate::{mapping, controller::Controller};\n\
                use crate::{\n    controller,\n};\n\
                use super::super::controller::X;\n\
                use crate::controllers::Y;\n\
                use crate::device::{controller};\n\
                // [`crate::controller`]\n";
    assert_eq!(names(text, "controller"), vec![1, 2, 4, 6, 9]);
    assert!(names("use crate::bulk_other::X;", "bulk").is_empty());
}

#[test]
fn input_formats_do_not_name_the_controller() {
    let v = violations(&["workload"], "controller");
    assert!(v.is_empty(), "{}", v.join("\n"));
}

#[test]
fn bulk_does_not_name_the_controller() {
    let v = violations(&["bulk"], "controller");
    assert!(v.is_empty(), "{}", v.join("\n"));
}

#[test]
fn controller_does_not_name_bulk() {
    let v = violations(&["controller"], "bulk");
    assert!(v.is_empty(), "{}", v.join("\n"));
}

#[test]
fn config_does_not_name_the_os() {
    let v = violations(&["config.rs"], "os");
    assert!(v.is_empty(), "{}", v.join("\n"));
}
