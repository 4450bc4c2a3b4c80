//! A log renamed, deleted, replaced or truncated under its writer (`audit_on_replaced`):
//! found before each append by comparing the path with the open file, then refused, or
//! recorded as the first record of the file now at the path (docs/audit.md).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use serde_json::{Map, Value};

use super::chain::{ChainState, first_checked, read_chain_head};
use super::record::now;
use super::{AuditError, AuditLog};

impl AuditLog {
    /// The log was found replaced under this writer (`found` says how): refuse, from now
    /// on, or (`audit_on_replaced = "reopen"`) note `record` for the file at the path and
    /// have [`AuditLog::settle`] reopen it.
    pub(super) fn found_replaced(
        &self,
        state: &mut ChainState,
        found: String,
        record: Map<String, Value>,
    ) -> Result<Option<u64>, AuditError> {
        tracing::error!("audit log '{}' was {found}", self.path.display());
        if !self.reopen_replaced {
            state.replaced = Some(found.clone());
            return Err(AuditError::Replaced {
                path: self.path.clone(),
                found,
            });
        }
        // Lines written behind into the old file are covered before the syncer moves on to
        // the new one (their waiters are told once an `fdatasync` covered them).
        self.sync_now(state).map_err(|e| self.io_error(e))?;
        state.pending_replaced = Some(record);
        Ok(None)
    }

    /// First thing in the file reopened after [`AuditLog::found_replaced`]: the record that
    /// explains the gap, chained to the last record this writer knew (not to whatever the
    /// file at the path holds: `verify` must see the break, and this record explains it).
    /// Whatever the file holds stays; a cut-off last line is ended first, so the record is
    /// a line of its own. Returns the length to write the caller's record at.
    pub(super) fn record_replaced(
        &self,
        state: &mut ChainState,
        len: u64,
    ) -> Result<u64, AuditError> {
        let io = |e| self.io_error(e);
        // Kept until it is written: an append that fails here leaves it pending, so the
        // next one writes it (the gap is never left unexplained by a failed write).
        let Some(record) = state.pending_replaced.clone() else {
            return Ok(len);
        };
        // Another writer sharing the log found the same and already wrote the explanation
        // as the new file's first record (chained to the same head): continue after it.
        if len > 0 && first_replaced_prev(&state.file).map_err(io)? == Some(state.last_hash.clone())
        {
            let head = read_chain_head(&state.file, len).map_err(|e| e.at(&self.path))?;
            state.seq = head.seq;
            state.last_hash = head.hash;
            state.ended = head.rotated_to;
            state.len = len;
            state.pending_replaced = None;
            return Ok(len);
        }
        let mut at = len;
        if len > 0 {
            let mut last = [0u8; 1];
            state.file.read_exact_at(&mut last, len - 1).map_err(io)?;
            if last[0] != b'\n' {
                (&*state.file).write_all(b"\n").map_err(io)?;
                at += 1;
            }
        }
        self.put(state, &record, &now(), at, true)?;
        state.pending_replaced = None;
        state.ended = None;
        Ok(state.len)
    }
}

/// How `path` no longer names the file whose `fstat` is `open`, if it does not: `deleted`
/// (no name left), `renamed` (the file has a name, not this one), `replaced` (another file
/// is at the path). `None` when it still names it.
pub(super) fn path_moved(
    path: &Path,
    open: &std::fs::Metadata,
) -> std::io::Result<Option<(&'static str, String)>> {
    let (kind, found) = match std::fs::metadata(path) {
        Ok(named) if named.dev() == open.dev() && named.ino() == open.ino() => return Ok(None),
        Ok(named) => (
            "replaced",
            format!(
                "replaced (the path names inode {}, not the open file's inode {}{})",
                named.ino(),
                open.ino(),
                if open.nlink() == 0 {
                    ", deleted"
                } else {
                    ", renamed away"
                }
            ),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && open.nlink() == 0 => (
            "deleted",
            format!("deleted (inode {} has no name left)", open.ino()),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
            "renamed",
            format!("renamed (inode {} is no longer at the path)", open.ino()),
        ),
        Err(e) => return Err(e),
    };
    Ok(Some((kind, found)))
}

/// The record a writer puts first in the file it reopens after finding `kind`.
pub(super) fn replaced_record(
    kind: &str,
    found: &str,
    open: &std::fs::Metadata,
    state: &ChainState,
) -> Map<String, Value> {
    Map::from_iter([
        ("replaced".to_string(), Value::from(kind)),
        ("found".to_string(), Value::from(found)),
        ("old_inode".to_string(), Value::from(open.ino())),
        ("old_size_left".to_string(), Value::from(state.len)),
        ("old_size_found".to_string(), Value::from(open.len())),
        ("previous_seq".to_string(), Value::from(state.seq)),
    ])
}

/// The `prev` of the file's first record when that record is a `replaced` one.
fn first_replaced_prev(file: &File) -> std::io::Result<Option<String>> {
    Ok(first_checked(file)?
        .filter(|r| r.replaced.is_some())
        .map(|r| r.prev))
}
