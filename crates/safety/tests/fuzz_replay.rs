//! Replays the committed fuzz seeds (`fuzz/seeds/<target>/`) through the fuzz targets'
//! own checks on stable, so the checks keep compiling and every seed keeps passing
//! without nightly or cargo-fuzz. The checks are the files the fuzz binaries include
//! (`fuzz/checks/*.rs`), not copies of them.
//!
//! Each seed folder must exist and hold at least one file: a missing or empty folder
//! fails the test instead of passing it with nothing replayed.
//!
//! Run: `cargo test -p safety --test all fuzz_replay::`.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/checks/parse_command.rs"]
mod parse_command;
#[path = "../../../fuzz/checks/request.rs"]
mod request;

/// The committed inputs of one fuzz target (`fuzz/seeds/<target>/`), sorted by name.
fn seeds(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("seed folder {} unreadable: {err}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("seed folder entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "seed folder {} holds no files: nothing to replay",
        dir.display()
    );
    files
}

/// Runs `check` on every seed of `target`; fails naming each seed that panicked.
fn replay(target: &str, check: fn(&[u8])) {
    let mut failures = Vec::new();
    for path in seeds(target) {
        let data = std::fs::read(&path).expect("seed file");
        if let Err(panic) = std::panic::catch_unwind(|| check(&data)) {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)")
                .to_string();
            failures.push(format!("{}: {message}", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} {target} seed(s) failed the check:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_parse_command_seed_passes_the_fuzz_check() {
    replay("parse_command", parse_command::check);
}

#[test]
fn every_request_seed_passes_the_fuzz_check() {
    replay("request", request::check);
}
