//! Recall and false-positive rate of the built-in redaction rules on the corpus
//! (crates/safety/tests/data/redaction/corpus.jsonl, docs/redaction.md "The corpus and the
//! measured figures"), and, with `--detect-secrets PATH`, the same two figures for Yelp's
//! detect-secrets scanning the same texts in the same run.
//!
//! Run: `cargo run --release -p safety --example redact_corpus [-- --detect-secrets PATH]
//! [--failures N]`; scripts/redaction_compare.sh installs a pinned detect-secrets and runs it.
//!
//! detect-secrets reports a line, not a span, so it is scored line by line: a secret counts as
//! found when detect-secrets flags a line that holds it (for a multi-line block, a line of it or
//! the armour line just before it), in every place the secret occurs; a keep item counts as a
//! false positive when every place it occurs is on a flagged line. This favours detect-secrets
//! on recall: a redactor must remove every byte of the secret, a line flag only has to point
//! near it.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "measurement harness: a failure aborts the measurement"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use safety::redact::{RedactionSettings, Redactor};

#[path = "../tests/redact_corpus_common/mod.rs"]
#[allow(
    dead_code,
    unreachable_pub,
    reason = "shared with the test, which uses the parts this example does not"
)]
mod common;

use common::{Entry, Report, Verdict};

struct Args {
    detect_secrets: Option<PathBuf>,
    failures: usize,
    corpus: Option<PathBuf>,
}

fn args() -> Args {
    let mut args = Args {
        detect_secrets: None,
        failures: 40,
        corpus: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--detect-secrets" => {
                args.detect_secrets =
                    Some(PathBuf::from(it.next().expect("--detect-secrets PATH")));
            }
            "--failures" => {
                args.failures = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--failures N");
            }
            "--corpus" => args.corpus = Some(PathBuf::from(it.next().expect("--corpus PATH"))),
            other => panic!(
                "unknown argument {other:?} (--detect-secrets PATH, --failures N, --corpus PATH)"
            ),
        }
    }
    args
}

fn print_report(title: &str, report: &Report, failures: usize) {
    println!("== {title}");
    println!("{}", report.summary());
    println!();
    println!("per kind:");
    print!("{}", report.kind_table());
    println!();
    println!("per source:");
    print!("{}", report.source_table());
    println!();
    let leaks = report.failures.iter().filter(|f| f.what == "leak").count();
    println!(
        "failures: {leaks} leaks, {} false positives; the first {failures}:",
        report.failures.len() - leaks
    );
    print!("{}", report.failure_list(failures));
    println!();
}

/// A file name whose extension matches the text's format (detect-secrets reads some formats
/// differently; this helps it, never hurts).
fn file_name(index: usize, entry: &Entry) -> String {
    let ext = match entry.source.as_str() {
        "json-config" | "docker-config" | "gcp-service-account" | "aws-cli" => "json",
        "yaml-config" | "kubeconfig" => "yaml",
        "toml-config" => "toml",
        "ini-config" | "pip-config" | "aws-credentials" => "ini",
        "dotenv" => "env",
        "source-code" => "py",
        _ => "txt",
    };
    format!("{index:05}.{ext}")
}

/// Run detect-secrets over every text (one file each) and return, per file name, the lines
/// it flags.
fn detect_secrets(exe: &Path, entries: &[Entry]) -> BTreeMap<String, BTreeSet<usize>> {
    // The scan runs inside the folder: a relative PATH is resolved here first.
    let exe = std::path::absolute(exe).unwrap();
    let exe = exe.as_path();
    let dir = tempfile::tempdir().unwrap();
    for (i, entry) in entries.iter().enumerate() {
        std::fs::write(dir.path().join(file_name(i, entry)), &entry.text).unwrap();
    }
    let version = Command::new(exe).arg("--version").output().unwrap();
    println!(
        "detect-secrets {} ({}), `scan --all-files` over {} files",
        String::from_utf8_lossy(&version.stdout).trim(),
        exe.display(),
        entries.len()
    );
    let started = Instant::now();
    let out = Command::new(exe)
        .args(["scan", "--all-files"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "detect-secrets failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "detect-secrets took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut flagged: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (file, findings) in json["results"].as_object().expect("results") {
        for finding in findings.as_array().expect("findings") {
            let line = finding["line_number"].as_u64().expect("line_number");
            flagged
                .entry(file.trim_start_matches("./").to_string())
                .or_default()
                .insert(usize::try_from(line).unwrap());
        }
    }
    flagged
}

/// The line-level verdict of detect-secrets on one text.
fn judge_lines(entry: &Entry, flagged: &BTreeSet<usize>) -> Verdict {
    let leaked = entry
        .secrets
        .iter()
        .map(|s| {
            let widen = usize::from(s.value.contains('\n'));
            let spans = common::line_spans(&entry.text, &s.value);
            spans.is_empty()
                || !spans.iter().all(|&(first, last)| {
                    (first.saturating_sub(widen).max(1)..=last).any(|l| flagged.contains(&l))
                })
        })
        .collect();
    let altered = entry
        .keep
        .iter()
        .map(|k| {
            !common::line_spans(&entry.text, k)
                .iter()
                .any(|&(first, last)| (first..=last).all(|l| !flagged.contains(&l)))
        })
        .collect();
    let output = entry
        .text
        .split('\n')
        .enumerate()
        .map(|(i, line)| {
            if flagged.contains(&(i + 1)) {
                format!("[flagged by detect-secrets] {line}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    Verdict {
        leaked,
        altered,
        output,
    }
}

fn main() {
    let args = args();
    // Another corpus of the same format (e.g. the script run with another seed:
    // `REDACTION_CORPUS_SEED=7 python3 scripts/redaction_corpus.py /tmp/c.jsonl`).
    let entries = match &args.corpus {
        Some(path) => common::parse(&std::fs::read_to_string(path).unwrap()).unwrap(),
        None => common::load().unwrap(),
    };
    let redactor = Redactor::new(&RedactionSettings::default()).unwrap();
    let started = Instant::now();
    let ours = common::score(&entries, |e| common::judge_redactor(&redactor, e));
    let took = started.elapsed();
    print_report(
        &format!(
            "safe-mcp built-in rules (Redactor::redact, byte-exact; {:.0} ms for the corpus)",
            took.as_secs_f64() * 1000.0
        ),
        &ours,
        args.failures,
    );
    let Some(exe) = args.detect_secrets else {
        println!("(no --detect-secrets PATH: detect-secrets not measured)");
        return;
    };
    let flagged = detect_secrets(&exe, &entries);
    let none = BTreeSet::new();
    let mut index = 0;
    let theirs = common::score(&entries, |e| {
        let verdict = judge_lines(e, flagged.get(&file_name(index, e)).unwrap_or(&none));
        index += 1;
        verdict
    });
    print_report(
        "detect-secrets (line-level: a flagged line counts as the secret found, which favours it)",
        &theirs,
        args.failures,
    );
    println!("== side by side (same corpus, same run)");
    println!("{:<40} {:>9} {:>16}", "", "recall", "false positives");
    println!(
        "{:<40} {:>8.2}% {:>15.2}%",
        "safe-mcp (byte-exact)",
        ours.recall(),
        ours.false_positive_rate()
    );
    println!(
        "{:<40} {:>8.2}% {:>15.2}%",
        "detect-secrets (line-level)",
        theirs.recall(),
        theirs.false_positive_rate()
    );
}
