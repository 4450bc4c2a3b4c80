//! The head of the chain, kept right while several writers share the log: under the file's
//! `flock` an append re-reads the head another process wrote, follows or finishes a
//! rotation, and then writes its line chained to that head (cut back if the write fails).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::file::{FileLock, lock, open_append, same_file, sync_dir};
use super::record::{CheckedRecord, RecordError, Rotation, chained_line, check_line, now};
use super::replaced::{path_moved, replaced_record};
use super::{AuditError, AuditLog, GENESIS_PREV};

/// How many times one append follows rotations done meanwhile before it gives up.
const ROTATION_ATTEMPTS: usize = 16;

/// The longest record line `open` reads back (a tail longer than this is refused, not
/// followed: a forged multi-gigabyte last line must not exhaust memory at start-up).
const MAX_LINE: u64 = 64 * 1024 * 1024;

/// The head of the chain as last written.
#[derive(Debug)]
pub(super) struct ChainState {
    /// Shared with the background syncer and the `flock` guard of an append.
    pub(super) file: Arc<File>,
    /// `seq` of the last record (0 for an empty log).
    pub(super) seq: u64,
    /// `hash` of the last record ([`GENESIS_PREV`] for an empty log).
    pub(super) last_hash: String,
    /// File length after the last record this process wrote or read.
    pub(super) len: u64,
    /// Set when a failed write could not be rolled back: the file may end in a partial line,
    /// and appending after it would hide the damage.
    pub(super) poisoned: Option<String>,
    /// The file's last record is a rotation end naming this rotated file: the chain goes on
    /// in the file now at the log's path.
    pub(super) ended: Option<String>,
    /// The log was found renamed, deleted, replaced or truncated under this writer, and
    /// `audit_on_replaced = "fail"`: every append is refused (what was found).
    pub(super) replaced: Option<String>,
    /// The same under `audit_on_replaced = "reopen"`: the record that explains it, to be the
    /// first one written in the file now at the path (chained to the last one before).
    pub(super) pending_replaced: Option<Map<String, Value>>,
    /// Reused serialisation buffer.
    pub(super) buf: Vec<u8>,
    /// This writer appended a record that no checkpoint of its own covers yet.
    pub(super) unsigned: bool,
    /// This writer wrote a record whose `seq` is a multiple of the checkpoint interval (a
    /// rotation or replacement record included) and no checkpoint since: the next ordinary
    /// append adds one.
    pub(super) due: bool,
    /// The chain's last record is a checkpoint: its interval.
    pub(super) head_every: Option<u64>,
    /// This writer has appended (its first append opens with a checkpoint when the head is
    /// not one: what a writer killed before its closing checkpoint left is covered at once).
    pub(super) started: bool,
    /// `[audit.syslog]`: where each record also goes.
    pub(super) shipper: Option<super::syslog::Shipper>,
    /// Records this writer could not ship, since the last one it could.
    pub(super) unshipped: Option<Unshipped>,
    /// A stretch of unshipped records that ended: recorded (and shipped) next.
    pub(super) gap: Option<Unshipped>,
    /// The last record of the append under way that did not reach syslog (`seq`, why): with
    /// `required = true` the append fails once everything else about it is done.
    pub(super) not_shipped: Option<(u64, String)>,
}

/// Records that did not reach syslog: `seq` from and to, and the last reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unshipped {
    pub(super) from: u64,
    pub(super) to: u64,
    pub(super) reason: String,
}

impl ChainState {
    /// The `seq` of the next record.
    pub(super) fn next_seq(&self) -> std::io::Result<u64> {
        self.seq
            .checked_add(1)
            .ok_or_else(|| std::io::Error::other("audit sequence number overflow"))
    }
}

impl AuditLog {
    /// Lock the current file and bring the chain head up to date: follow a rotation another
    /// writer did, finish one that a crash cut short, or rotate when the file is full.
    /// Returns the file's length with its `flock` held.
    pub(super) fn settle(&self, state: &mut ChainState) -> Result<(FileLock, u64), AuditError> {
        for _ in 0..ROTATION_ATTEMPTS {
            let guard = lock(&state.file).map_err(|e| self.io_error(e))?;
            if let Some(len) = self.settle_locked(state)? {
                return Ok((guard, len));
            }
            drop(guard);
            self.reopen(state)?;
        }
        Err(self.io_error(std::io::Error::other(format!(
            "the log rotated {ROTATION_ATTEMPTS} times during one append"
        ))))
    }

    /// [`AuditLog::settle`] with the file locked: `Some(length)` to write here, `None` when
    /// the chain goes on in the file now at the log's path.
    fn settle_locked(&self, state: &mut ChainState) -> Result<Option<u64>, AuditError> {
        let io = |e| self.io_error(e);
        // The open file's size (another process sharing the log may have appended since our
        // last record), device and inode: one `fstat`.
        let open = state.file.metadata().map_err(io)?;
        let len = open.len();
        if state.pending_replaced.is_some() {
            return self.record_replaced(state, len).map(Some);
        }
        // Truncated in place: writers only ever append (a failed write cuts back only its
        // own partial line), so a file shorter than this writer left it lost records.
        if state.len != u64::MAX && len < state.len {
            let found = format!(
                "truncated in place (from {} to {len} bytes, inode {})",
                state.len,
                open.ino()
            );
            let record = replaced_record("truncated", &found, &open, state);
            return self.found_replaced(state, found, record);
        }
        if len != state.len {
            let head = read_chain_head(&state.file, len).map_err(|e| e.at(&self.path))?;
            state.seq = head.seq;
            state.last_hash = head.hash;
            state.ended = head.rotated_to;
            state.head_every = head.checkpoint_every;
            state.len = len;
        }
        if let Some(name) = state.ended.clone() {
            if !self.is_rotated_name(&name) {
                return Err(AuditError::Broken {
                    path: self.path.clone(),
                    reason: format!(
                        "its rotation end record names '{name}', not a rotated file of this log"
                    ),
                });
            }
            // The writer that ended it may have died before its `fdatasync` returned: make
            // the old file durable (our own lines in it and the end record) before anything
            // goes on in the next one.
            self.sync_now(state).map_err(io)?;
            // When the path still names this file, that writer stopped before the new file
            // took its place: finish that now.
            if same_file(&state.file, &self.path).map_err(io)? {
                self.switch(state, &name)?;
            }
            return Ok(None);
        }
        // The path must still name the open file: a log renamed, deleted or replaced would
        // otherwise be written on to a file nobody reads (or that is gone).
        if let Some((kind, found)) = path_moved(&self.path, &open).map_err(io)? {
            let record = replaced_record(kind, &found, &open, state);
            return self.found_replaced(state, found, record);
        }
        if self.rotate_bytes == 0 || len < self.rotate_bytes {
            return Ok(Some(len));
        }
        let name = self.next_rotated_name(&state.file).map_err(io)?;
        let end = Map::from_iter([
            ("rotation".to_string(), Value::from("end")),
            ("rotated_to".to_string(), Value::from(name.clone())),
        ]);
        // Durable before anything moves: it also covers every earlier line of the file.
        self.put(state, &end, &now(), len, true)?;
        state.ended = Some(name.clone());
        self.switch(state, &name)?;
        Ok(None)
    }

    /// Continue in the file now at the log's path (never a new, empty one: the path was
    /// given to the next file by `rename`).
    fn reopen(&self, state: &mut ChainState) -> Result<(), AuditError> {
        let io = |e| self.io_error(e);
        // After a rotation, never created: the path was given to the next file by `rename`.
        // After the log was found deleted (`audit_on_replaced = "reopen"`), created afresh.
        let file = open_append(&self.path, state.pending_replaced.is_some()).map_err(io)?;
        // The rename that put it there is durable before a line of ours goes into it.
        sync_dir(&self.path).map_err(io)?;
        let file = Arc::new(file);
        if let Some(syncer) = self.syncer.get() {
            syncer.set_file(file.clone());
        }
        state.file = file;
        // Never a real length: the new file's head is read under its lock.
        state.len = u64::MAX;
        state.ended = None;
        Ok(())
    }

    /// Write one record line at the end of the locked file, chained to the head; with
    /// `sync_now`, `fdatasync` it before returning. On failure nothing counts as written:
    /// the file is cut back to `len` (if even that fails, every later append fails).
    pub(super) fn put(
        &self,
        state: &mut ChainState,
        record: &Map<String, Value>,
        ts: &str,
        len: u64,
        sync_now: bool,
    ) -> Result<(), AuditError> {
        let io = |e| self.io_error(e);
        let seq = state.next_seq().map_err(io)?;
        state.buf.clear();
        let hash = chained_line(record, seq, ts, &state.last_hash, &mut state.buf);

        let written = (&*state.file).write_all(&state.buf).and_then(|()| {
            if sync_now {
                // Covers this line and every line written behind before it.
                self.sync_now(state)
            } else {
                Ok(())
            }
        });
        if let Err(source) = written {
            // Roll back a partial line so the next record does not follow garbage.
            let rolled_back = state
                .file
                .set_len(len)
                .and_then(|()| state.file.sync_data());
            if let Err(e) = rolled_back {
                state.poisoned = Some(format!(
                    "an earlier write failed ({source}) and could not be rolled back ({e})"
                ));
            }
            return Err(io(source));
        }
        state.seq = seq;
        state.last_hash = hash;
        state.len = len + state.buf.len() as u64;
        state.head_every = record
            .get("checkpoint")
            .and_then(|c| c.get("every"))
            .and_then(Value::as_u64);
        if let Some((_, every)) = &self.checkpoints
            && seq % every == 0
        {
            state.due = true;
        }
        if state.shipper.is_some() {
            // Without `[audit.syslog]` an append copies nothing for it.
            let line = std::mem::take(&mut state.buf);
            let hash = state.last_hash.clone();
            self.ship(
                state,
                &line,
                seq,
                &hash,
                ts,
                record.contains_key("checkpoint"),
            );
            state.buf = line;
        }
        Ok(())
    }

    /// Send a line just written (with its newline) to syslog. The local record stands
    /// whatever happens, and the writer's bookkeeping goes on: a failure is remembered (the
    /// stretch of records not shipped, reported in results by [`AuditLog::unshipped`] and,
    /// once shipping works again, by a record of its own) and, with `required = true`, fails
    /// the append at its end (`not_shipped`).
    pub(super) fn ship(
        &self,
        state: &mut ChainState,
        line: &[u8],
        seq: u64,
        hash: &str,
        ts: &str,
        checkpoint: bool,
    ) {
        let Some(shipper) = state.shipper.as_mut() else {
            return;
        };
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        match shipper.ship(line, seq, hash, ts, checkpoint) {
            Ok(()) => {
                if let Some(stretch) = state.unshipped.take() {
                    state.gap = Some(stretch);
                }
            }
            Err(reason) => {
                match &mut state.unshipped {
                    Some(stretch) => {
                        stretch.to = seq;
                        stretch.reason = reason.clone();
                    }
                    None => {
                        tracing::error!("audit record {seq} not shipped to syslog: {reason}");
                        state.unshipped = Some(Unshipped {
                            from: seq,
                            to: seq,
                            reason: reason.clone(),
                        });
                    }
                }
                state.not_shipped = Some((seq, reason));
            }
        }
    }
}

/// The rotation record a file starts with, if its first line is a whole record.
pub(super) fn first_record(file: &File) -> std::io::Result<Option<Rotation>> {
    Ok(first_checked(file)?.and_then(|r| r.rotation))
}

/// A file's first line, when it is a whole record that checks out on its own.
pub(super) fn first_checked(file: &File) -> std::io::Result<Option<CheckedRecord>> {
    let mut line = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut at = 0u64;
    loop {
        let n = file.read_at(&mut chunk, at)?;
        let Some(part) = chunk.get(..n).filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        if let Some(end) = part.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(part.get(..end).unwrap_or_default());
            return Ok(check_line(&line).ok());
        }
        line.extend_from_slice(part);
        at += n as u64;
        if at > MAX_LINE {
            return Ok(None);
        }
    }
}

/// Why the head of a log file could not be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum TailError {
    /// Reading the file failed.
    #[error(transparent)]
    Io(std::io::Error),
    /// The file does not end with a newline.
    #[error("the last record is cut off (no newline at its end)")]
    CutOff,
    /// No newline before the last one within [`MAX_LINE`] bytes.
    #[error("the last line is longer than {MAX_LINE} bytes")]
    TooLong,
    /// The last line is not a record that checks out on its own.
    #[error(transparent)]
    Record(#[from] RecordError),
}

impl TailError {
    /// The error of the log at `path`: an I/O failure, or a log broken at its end.
    pub(super) fn at(self, path: &Path) -> AuditError {
        let path = path.to_path_buf();
        match self {
            TailError::Io(source) => AuditError::Io { path, source },
            broken @ (TailError::CutOff | TailError::TooLong | TailError::Record(_)) => {
                AuditError::Broken {
                    path,
                    reason: broken.to_string(),
                }
            }
        }
    }
}

/// The chain head: the last record of a file.
pub(super) struct Head {
    pub(super) seq: u64,
    pub(super) hash: String,
    /// The last record is a rotation end naming this rotated file.
    pub(super) rotated_to: Option<String>,
    /// The last record is a checkpoint: its interval.
    pub(super) checkpoint_every: Option<u64>,
    /// The last record is neither a rotation's start nor its end: it was written by a
    /// writer that had opened this file at the log's path and fsync'ed the folder since
    /// (see [`AuditLog::open`](super::AuditLog::open)).
    pub(super) written_after_folder_sync: bool,
}

/// The head of a log file of `len` bytes.
pub(super) fn read_chain_head(file: &File, len: u64) -> Result<Head, TailError> {
    if len == 0 {
        return Ok(Head {
            seq: 0,
            hash: GENESIS_PREV.to_string(),
            rotated_to: None,
            checkpoint_every: None,
            written_after_folder_sync: false,
        });
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1)
        .map_err(TailError::Io)?;
    if last[0] != b'\n' {
        return Err(TailError::CutOff);
    }
    // Walk back from the final newline to the one before it.
    let body_end = len - 1;
    let mut start = body_end;
    let mut chunk = vec![0u8; 8192];
    'search: while start > 0 {
        let step = start.min(chunk.len() as u64);
        let from = start - step;
        let part = chunk.get_mut(..step as usize).unwrap_or_default();
        file.read_exact_at(part, from).map_err(TailError::Io)?;
        if let Some(i) = part.iter().rposition(|&b| b == b'\n') {
            start = from + i as u64 + 1;
            break 'search;
        }
        start = from;
        if body_end - start > MAX_LINE {
            return Err(TailError::TooLong);
        }
    }
    let mut line = vec![0u8; (body_end - start) as usize];
    file.read_exact_at(&mut line, start)
        .map_err(TailError::Io)?;
    let record = check_line(&line)?;
    Ok(Head {
        seq: record.seq,
        hash: record.hash,
        checkpoint_every: record.checkpoint.and_then(|c| c.every),
        written_after_folder_sync: record.rotation.is_none(),
        rotated_to: match record.rotation {
            Some(Rotation::End(name)) => Some(name),
            _ => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use serde_json::{Map, Value, json};

    use super::read_chain_head;
    use crate::audit::AuditLog;
    use crate::redact::{RedactionSettings, Redactor};

    fn head_written_after_folder_sync(path: &Path) -> bool {
        let file = std::fs::File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        read_chain_head(&file, len)
            .unwrap_or_else(|e| panic!("{e:?}"))
            .written_after_folder_sync
    }

    fn record(n: u64) -> Map<String, Value> {
        match json!({"tool": "run_command", "n": n, "args": {"command": "x".repeat(200)}}) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// `AuditLog::open` skips its folder fsync only when the last record proves a writer
    /// fsync'ed the folder while the path named the file: never for an empty file (just
    /// created), nor for a file whose last record is a rotation's start (written under the
    /// temporary name, then renamed into place) or end.
    #[test]
    fn only_an_ordinary_last_record_proves_the_folder_was_synced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, "").unwrap();
        assert!(!head_written_after_folder_sync(&path), "empty file");

        let redactor = Arc::new(Redactor::new(&RedactionSettings::default()).unwrap());
        let log = AuditLog::open(&path, redactor)
            .unwrap()
            .rotate_at(crate::config::MIN_ROTATE_BYTES);
        log.append(record(0)).unwrap();
        assert!(head_written_after_folder_sync(&path), "an ordinary record");

        let rotated = dir.path().join("audit.jsonl.1");
        let mut n = 1;
        while !rotated.exists() {
            log.append(record(n)).unwrap();
            n += 1;
            assert!(n < 1000, "never rotated");
        }
        // The append that found the file full rotated it and wrote its record into the
        // new file (after `reopen` fsync'ed the folder); the rotated file ends with the
        // end record.
        assert!(!head_written_after_folder_sync(&rotated), "rotation end");
        assert!(
            head_written_after_folder_sync(&path),
            "record after the start"
        );

        // A new file that holds only its start record: the rename that put it at the path
        // may not be durable yet.
        let lines = std::fs::read_to_string(&path).unwrap();
        let start = lines.lines().next().unwrap();
        assert!(start.contains("\"rotation\":\"start\""), "{start}");
        std::fs::write(&path, format!("{start}\n")).unwrap();
        assert!(!head_written_after_folder_sync(&path), "rotation start");
    }
}
