//! One audit append (redact, serialise, chain-hash, write, fsync) against the floor it cannot
//! beat: a bare `write` + `fdatasync` of the same bytes to another file in the same folder.
//! Same number of iterations, interleaved, one process.
//!
//! Run: `cargo run --release -p safety --example audit_bench [-- DIR]` (DIR defaults to the
//! current folder: use a folder on the disk the real log lives on, not a tmpfs).
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "benchmark harness: a failure aborts the measurement, and indices come from its own tables"
)]

use std::fs::OpenOptions;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use safety::audit::AuditLog;
use safety::redact::{RedactionSettings, Redactor};
use serde_json::{Map, Value, json};

fn record(n: u64) -> Map<String, Value> {
    match json!({
        "event": "outcome",
        "tool": "run_command",
        "args": {"command": "git log --oneline -n 5", "cwd": "projects/demo"},
        "code": "OK",
        "reason": "command finished",
        "exit_code": 0,
        "duration_ms": n % 97,
        "stdout_bytes": 412,
        "stderr_bytes": 0
    }) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = std::env::args()
        .nth(1)
        .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
    let dir = tempfile::Builder::new()
        .prefix("audit-bench-")
        .tempdir_in(&base)?;
    let redactor = Arc::new(Redactor::new(&RedactionSettings::default())?);
    let log = AuditLog::open(&dir.path().join("audit.jsonl"), redactor)?;
    let mut bare = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.path().join("bare.jsonl"))?;

    let iterations = 2000u64;
    let warmup = 50u64;
    let (mut audit_time, mut bare_time) = (Duration::ZERO, Duration::ZERO);
    let mut line_len = 0usize;
    for n in 0..iterations + warmup {
        let fields = record(n);
        let t = Instant::now();
        log.append(fields)?;
        let a = t.elapsed();
        // The bare floor writes a line of the same length the audit log just wrote.
        if line_len == 0 {
            line_len = std::fs::read_to_string(dir.path().join("audit.jsonl"))?.len();
        }
        let bytes = vec![b'x'; line_len];
        let t = Instant::now();
        bare.write_all(&bytes)?;
        bare.sync_data()?;
        let b = t.elapsed();
        if n >= warmup {
            audit_time += a;
            bare_time += b;
        }
    }
    let per = |d: Duration| d / iterations as u32;
    println!(
        "audit append vs bare write+fdatasync, {line_len}-byte records, {iterations} iterations each, interleaved, in {}",
        base.display()
    );
    println!(
        "audit append (redact+serialise+hash+write+fsync): {:?} per record",
        per(audit_time)
    );
    println!(
        "bare write + fdatasync of the same bytes:         {:?} per record",
        per(bare_time)
    );
    println!(
        "ratio: {:.3}x",
        audit_time.as_secs_f64() / bare_time.as_secs_f64()
    );
    let report = safety::audit::verify(&dir.path().join("audit.jsonl"))?;
    println!(
        "verify: {} records, broken: {:?}",
        report.records, report.broken
    );
    Ok(())
}
