//! The engine's build identity (docs/experiments.md, "Which engine made a row"): a SHA-256 of
//! everything that decides what the extension computes, taken when it is built: every `.rs`
//! file under both crates' `src/`, both crates' `Cargo.toml`, the workspace's `Cargo.toml`
//! (its release profile) and `Cargo.lock` (the dependencies' versions), this script, and the
//! build profile (`release` or `debug`, optimisation level, debug assertions). Files are
//! hashed by their path relative to the workspace, in sorted order, with CRLF read as LF, so
//! the same sources give the same identity on any machine and in any checkout folder. The
//! extension exposes it as `ENGINE_ID`, `<package version>+<16 hex digits>` (a semver build
//! tag); results, kept runs and cached inputs are keyed on it, so a changed engine never reuses
//! what an older one made. It lives in this crate, not in bulksim-core, because it identifies
//! the extension as a whole: the binding's sources change results too, and a build script here
//! reruns when either crate changes, whereas one in bulksim-core would have to watch the crate
//! that depends on it.

use sha2::{Digest, Sha256};
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let crate_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = crate_dir
        .parent()
        .and_then(Path::parent)
        .expect("bulksim-py lives in <workspace>/crates/bulksim-py")
        .to_path_buf();
    let core_dir = workspace.join("crates").join("bulksim-core");

    let mut files = vec![
        workspace.join("Cargo.toml"),
        workspace.join("Cargo.lock"),
        core_dir.join("Cargo.toml"),
        crate_dir.join("Cargo.toml"),
        crate_dir.join("build.rs"),
    ];
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    for src in [core_dir.join("src"), crate_dir.join("src")] {
        // A directory: cargo reruns this script when anything below it changes.
        println!("cargo:rerun-if-changed={}", src.display());
        rust_sources(&src, &mut files);
    }

    let mut relative: Vec<(String, &PathBuf)> = files
        .iter()
        .map(|f| (relative_name(&workspace, f), f))
        .collect();
    relative.sort();

    let mut hasher = Sha256::new();
    for (name, path) in relative {
        let bytes =
            fs::read(path).unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
        let text = without_carriage_returns(&bytes);
        // Name and length first, so that no two file sets hash the same bytes.
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(&text);
    }
    let profile = format!(
        "profile={};opt-level={};debug-assertions={}",
        env::var("PROFILE").unwrap_or_default(),
        env::var("OPT_LEVEL").unwrap_or_default(),
        env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some(),
    );
    hasher.update(profile.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let version = env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    println!("cargo:rustc-env=BULKSIM_ENGINE_ID={version}+{hex}");
}

/// Every `.rs` file below `dir`, recursively.
fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: cannot list: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: cannot list: {e}", dir.display()))
            .path();
        if path.is_dir() {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `path` relative to the workspace, with `/` between parts on every system.
fn relative_name(workspace: &Path, path: &Path) -> String {
    let relative = path
        .strip_prefix(workspace)
        .expect("every hashed file is in the workspace");
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The bytes with every CRLF as LF (a checkout with Windows line endings is the same source).
fn without_carriage_returns(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (i, &b) in bytes.iter().enumerate() {
        if !(b == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            out.push(b);
        }
    }
    out
}
