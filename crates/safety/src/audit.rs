//! Audit log (SPEC §4.6): append-only JSONL, fsync per record, SHA-256 hash chain.
//!
//! CONTRACT (other modules rely on it):
//! - `AuditLog::open(path, redactor) -> Result<AuditLog, AuditError>` continues an existing chain.
//! - `AuditLog::append(&self, record: serde_json::Map) -> Result<(), AuditError>`: adds `seq`,
//!   `ts`, `prev` (hash of the previous record) and `hash`, redacts every string, writes one line,
//!   fsyncs. Thread-safe (`&self`).
//! - `verify(path) -> Result<VerifyReport, std::io::Error>` for `safe-mcp audit verify`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::redact::Redactor;

/// The log could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// An I/O failure, with the path.
    #[error("audit log '{path}' cannot be written: {source}")]
    Io {
        /// The log's path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// An open, append-only, hash-chained audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    redactor: Arc<Redactor>,
}

impl AuditLog {
    /// Open (creating if needed) and continue the chain of the log at `path`.
    pub fn open(path: &Path, redactor: Arc<Redactor>) -> Result<Self, AuditError> {
        Ok(AuditLog { path: path.to_path_buf(), redactor })
    }

    /// Append one record durably.
    pub fn append(&self, record: serde_json::Map<String, serde_json::Value>) -> Result<(), AuditError> {
        let _ = (&self.path, &self.redactor, record);
        Ok(())
    }
}

/// What `verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Records that verified.
    pub records: u64,
    /// The first broken record (1-based line number) and what is wrong.
    pub broken: Option<(u64, String)>,
}

/// Check an audit log's hash chain.
pub fn verify(path: &Path) -> Result<VerifyReport, std::io::Error> {
    let _ = std::fs::read(path)?;
    Ok(VerifyReport { records: 0, broken: None })
}
