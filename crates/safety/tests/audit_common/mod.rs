//! Helpers shared by the audit log's test files.

use std::sync::Arc;

use safety::redact::{RedactionSettings, Redactor};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The redactor with every built-in rule on.
pub fn redactor() -> Arc<Redactor> {
    Arc::new(Redactor::new(&RedactionSettings::default()).unwrap_or_else(|e| panic!("{e}")))
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// One log line as a record.
pub fn parse(line: &str) -> Map<String, Value> {
    match serde_json::from_str(line) {
        Ok(Value::Object(map)) => map,
        other => panic!("not a record: {other:?}"),
    }
}

/// `record` (chain fields included, no `hash`) as a log line whose `hash` matches its
/// content, as the log writes it (no newline): what someone able to write the file can forge.
pub fn hashed_line(record: Map<String, Value>) -> String {
    let mut canonical = Vec::new();
    safety::audit::canonical_json(&Value::Object(record), &mut canonical);
    let hash = hex::encode(Sha256::digest(&canonical));
    let text = String::from_utf8_lossy(&canonical);
    format!(
        "{},\"hash\":\"{hash}\"}}",
        text.strip_suffix('}').unwrap_or_default()
    )
}

/// The lines of the file at `path` (none if it cannot be read).
pub fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}
