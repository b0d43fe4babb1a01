//! The layering of the crate, checked on the sources. `LAYERS` is the order of every top-level
//! module, bottom first: a module may name only the modules below it, so there is no import
//! cycle among them. The test computes from the sources which top-level modules each module's
//! files name and reports every upward edge by file and line; it also checks that `lib.rs`
//! declares exactly these modules and that its doc comment lists them in this order. Besides
//! the order, the input formats name nothing of the controller, `bulk` and `controller` do not
//! name each other, and `config` does not name the OS layer.
//!
//! A file "names" a module if it mentions the path `crate::MODULE` anywhere (code or doc
//! links), also inside a grouped `use crate::{...}`, or reaches it as `super::super::MODULE`.

use std::fs;
use std::path::{Path, PathBuf};

/// Every top-level module, bottom first: each names only modules before it.
const LAYERS: &[&str] = &[
    "error",
    "rng",
    "spec",
    "mapping",
    "request",
    "segment",
    "stat_struct",
    "counters",
    "device",
    "energy",
    "stats",
    "image",
    "port",
    "limits",
    "config",
    "os",
    "hybrid",
    "bulk",
    "controller",
    "memory",
    "cache",
    "copy_engine",
    "host_memory",
    "workload",
    "sim",
    "system",
];

/// Upward edges tolerated, as (from, to): none. A cut that cannot be made at once goes here
/// with the reason; the test fails for an entry that no edge uses any more.
const ALLOWED_UPWARD: &[(&str, &str)] = &[];

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
        } else if p.is_file() && p.extension().is_some_and(|e| e == "rs") {
            out.push(p.to_path_buf());
        }
    }
    let mut out = Vec::new();
    walk(&src().join(rel), &mut out);
    out
}

/// The sources of top-level module `module` (`src/MODULE.rs` or `src/MODULE/`), as
/// (path relative to src/, text).
fn module_sources(module: &str) -> Vec<(String, String)> {
    let mut files = sources(&format!("{module}.rs"));
    files.extend(sources(module));
    assert!(!files.is_empty(), "no sources for module {module}");
    files
        .into_iter()
        .map(|file| {
            let text = fs::read_to_string(&file).expect("read source");
            let rel = file
                .strip_prefix(src())
                .unwrap_or(&file)
                .display()
                .to_string();
            (rel, text)
        })
        .collect()
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

/// One module's sources: (module, path relative to src/, text).
type Source = (String, String, String);

/// Every upward edge in `files` under the order `layers` (bottom first), one line each:
/// "src/FILE:LINE: MODULE names crate::ABOVE, which is above it". An edge in `allowed` is not
/// reported; the allowed edges no file uses are returned second.
fn upward_edges(
    layers: &[&str],
    files: &[Source],
    allowed: &[(&str, &str)],
) -> (Vec<String>, Vec<String>) {
    let rank = |m: &str| layers.iter().position(|l| *l == m);
    let mut found = Vec::new();
    let mut used = vec![false; allowed.len()];
    for (module, rel, text) in files {
        let Some(own) = rank(module) else {
            found.push(format!(
                "src/{rel}: module {module} is not in the layer order"
            ));
            continue;
        };
        for (above, other) in layers.iter().enumerate().skip(own + 1) {
            let lines = names(text, other);
            if lines.is_empty() {
                continue;
            }
            if let Some(i) = allowed
                .iter()
                .position(|&(f, t)| f == module && t == *other)
            {
                used[i] = true;
                continue;
            }
            for line in lines {
                found.push(format!(
                    "src/{rel}:{line}: {module} (layer {}) names crate::{other} (layer {}), \
                     which is above it",
                    own + 1,
                    above + 1
                ));
            }
        }
    }
    let stale = allowed
        .iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|((f, t), _)| format!("allowed edge {f} -> {t} is no longer used: delete it"))
        .collect();
    (found, stale)
}

/// The modules `lib_rs` declares (`pub mod X;` / `mod X;`), in order.
fn declared_modules(lib_rs: &str) -> Vec<String> {
    lib_rs
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

/// The modules the numbered list of `lib_rs`'s doc comment names, one per item
/// ("//! 3. `spec`: ..."), in order.
fn documented_layers(lib_rs: &str) -> Vec<String> {
    lib_rs
        .lines()
        .filter_map(|l| {
            let item = l.strip_prefix("//! ")?;
            let (number, rest) = item.split_once(". `")?;
            if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            Some(rest.split_once('`')?.0.to_string())
        })
        .collect()
}

/// Every (file, line) under each of `dirs` that names `module`.
fn violations(dirs: &[&str], module: &str) -> Vec<String> {
    let mut out = Vec::new();
    for dir in dirs {
        for (rel, text) in module_sources(dir) {
            for line in names(&text, module) {
                out.push(format!("src/{rel}:{line} names crate::{module}"));
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
fn the_checker_reports_an_upward_edge_by_file_and_line() {
    let layers = ["low", "mid", "high"];
    let file = |m: &str, rel: &str, text: &str| (m.to_string(), rel.to_string(), text.into());
    let files = vec![
        file("low", "low.rs", "//! Bottom.\nuse crate::{mid::A};\n"),
        file("mid", "mid/a.rs", "use crate::low::X;\n"),
        file(
            "high",
            "high.rs",
            "use crate::mid::B;\nuse crate::low::C;\n",
        ),
        file("mid", "mid/b.rs", "fn f() {\n    crate::high::g();\n}\n"),
    ];
    let (found, stale) = upward_edges(&layers, &files, &[]);
    assert_eq!(
        found,
        vec![
            "src/low.rs:2: low (layer 1) names crate::mid (layer 2), which is above it",
            "src/mid/b.rs:2: mid (layer 2) names crate::high (layer 3), which is above it",
        ]
    );
    assert!(stale.is_empty());
    // An allowed edge is not reported; one that no file uses is.
    let (found, stale) = upward_edges(&layers, &files, &[("mid", "high"), ("low", "high")]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("src/low.rs:2:"), "{found:?}");
    assert_eq!(
        stale,
        vec!["allowed edge low -> high is no longer used: delete it"]
    );
    // A module missing from the order is reported too.
    let stray = vec![file("new", "new.rs", "")];
    let (found, _) = upward_edges(&layers, &stray, &[]);
    assert_eq!(
        found,
        vec!["src/new.rs: module new is not in the layer order"]
    );
}

#[test]
fn the_lib_parsers_read_declarations_and_the_numbered_list() {
    let lib = "//! Layers, bottom first:\n//!\n//! 1. `error`: errors.\n\
               //! 2. `spec`: standards; see `mapping`.\n//! Not 3. `x`.\n\
               //! 10. `system`: all.\n\npub mod error;\nmod spec;\npub mod system;\n\
               pub use error::Error;\n";
    assert_eq!(documented_layers(lib), vec!["error", "spec", "system"]);
    assert_eq!(declared_modules(lib), vec!["error", "spec", "system"]);
}

#[test]
fn no_module_names_a_module_above_it() {
    let files: Vec<Source> = LAYERS
        .iter()
        .flat_map(|m| {
            module_sources(m)
                .into_iter()
                .map(|(rel, text)| (m.to_string(), rel, text))
        })
        .collect();
    let (found, stale) = upward_edges(LAYERS, &files, ALLOWED_UPWARD);
    assert!(found.is_empty(), "upward edges:\n{}", found.join("\n"));
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

#[test]
fn every_module_of_lib_rs_is_in_the_order_once_and_its_doc_lists_the_order() {
    let lib = fs::read_to_string(src().join("lib.rs")).expect("read lib.rs");
    let mut declared = declared_modules(&lib);
    declared.sort();
    let mut ordered: Vec<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    ordered.sort();
    assert_eq!(
        declared, ordered,
        "lib.rs's modules and LAYERS differ (each module once)"
    );
    assert_eq!(
        documented_layers(&lib),
        LAYERS,
        "lib.rs's doc comment lists the layers in another order"
    );
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
    let v = violations(&["config"], "os");
    assert!(v.is_empty(), "{}", v.join("\n"));
}
