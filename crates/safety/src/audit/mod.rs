//! The audit log: append-only JSONL, every record fdatasync'ed, SHA-256 hash chain
//! (docs/audit.md).
//!
//! - [`AuditLog::open`] continues an existing chain; `AuditLog::open_for_server` is how
//!   every server opens its log at start-up.
//! - [`AuditLog::append`] adds `seq`, `ts`, `prev` (hash of the previous record) and `hash`,
//!   redacts every string, writes one line and fdatasyncs it. Thread-safe (`&self`).
//! - [`AuditLog::append_sync_behind`] writes the same line before it returns (so a crash or
//!   `kill -9` of the server loses nothing), with the `fdatasync` done by a background thread
//!   that covers every line written since its last one (group commit). For records of calls
//!   that change nothing (`explain_command`): only a power loss in the milliseconds after the
//!   reply can lose such a record; any `fdatasync` of the log that follows (the next
//!   [`AuditLog::append`], or the background one) covers it.
//! - [`AuditLog::append_then`] writes the line now and calls `then(Ok)` from the background
//!   thread once an `fdatasync` covered it (or `then(Err)`): what `run_command`'s start gate
//!   opens on, so nothing runs before its intent is durable.
//! - [`verify`](fn@verify) checks a log's chain across its rotated files, for
//!   `safe-mcp audit verify`.
//!
//! # Record format
//!
//! One JSON object per line. The caller's fields, redacted, plus:
//! - `seq`: 1 for the first record of the file, then +1 per record;
//! - `ts`: RFC 3339 UTC time with microseconds (`2025-01-31T12:00:00.123456Z`);
//! - `prev`: the `hash` of the previous record, or 64 zeros for the first;
//! - `hash`: lower-case hex SHA-256 of the record's *canonical serialisation without `hash`*.
//!
//! Canonical serialisation ([`canonical_json`]): compact JSON (no blanks), object members sorted
//! by the UTF-8 bytes of their keys at every level, strings escaped as `serde_json` escapes them
//! (`"`, `\`, control characters; everything else literal UTF-8), numbers as `serde_json` prints
//! them. The line written is that canonical text with `,"hash":"<hex>"` appended as the last
//! member, so `hash == sha256(line without ,"hash":"...")`, checkable with standard tools.
//!
//! A caller field named `seq`, `ts`, `prev` or `hash` is kept as `event_seq`, ... (nothing the
//! caller says can overwrite the chain fields).
//!
//! # Several writers
//!
//! The terminal and files servers write one log, so each append takes an exclusive `flock` on
//! the file, re-reads the chain head if another process appended since, writes (and, for
//! [`AuditLog::append`], fdatasyncs), unlocks.
//!
//! # Rotation (`audit_rotate_bytes`, [`AuditLog::rotate_at`])
//!
//! An append that finds the file at or over the size, under its `flock`: writes and
//! fdatasyncs an end record `{"rotation":"end","rotated_to":"<log>.<n>"}` (`n` one more than
//! the file the current one continues, 1 for the first; a name taken by an unrelated file is
//! skipped), hard-links the file to that name, writes the new file's first record
//! `{"rotation":"start","previous_file":"<log>.<n>"}` (chained to the end record: `seq` and
//! `prev` go on) under `<log>.rotating` with the old file's permissions, fdatasyncs it, and
//! `rename`s it over the log's path. The path names a whole, chained file at every moment,
//! and nothing is deleted. A writer (another process, or this one after a restart) that finds
//! an end record as the head fdatasyncs that file (its writer may have died before its own
//! sync returned), finishes the link and rename when the path still names it, then follows
//! to the file at the path, after an fsync of the folder. An end record naming anything but
//! `<log>.<digits>` is refused. A caller field named `rotation` is kept as `event_rotation`.
//! [`verify`](fn@verify) walks the chain back from the log through the start records.
//!
//! # The parts
//!
//! - `record`: one record's line: canonical JSON, its hash, and the check of a line alone.
//! - `chain`: the chain head kept right under the file's lock, and each line written.
//! - `syncer`: the background `fdatasync` that covers lines written behind.
//! - `rotate`: rotation to `<log>.<n>` and the file that continues the chain.
//! - `replaced`: a log renamed, deleted, replaced or truncated under its writer.
//! - `file`: opening, locking and comparing the log's file, and syncing its folder.
//! - `verify`: the whole chain checked, across rotated files.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::redact::Redactor;

mod chain;
mod checkpoint;
mod file;
mod record;
mod replaced;
mod rotate;
mod syncer;
mod syslog;
mod verify;

pub use checkpoint::{
    CheckpointSigner, CheckpointVerifier, KeyError, generate as generate_checkpoint_key,
};
pub use record::{GENESIS_PREV, canonical_json};
pub use syncer::{SYNC_LINGER, SyncError};
pub use verify::{Coverage, VerifyReport, verify, verify_signed};

use chain::{ChainState, read_chain_head};
use file::{lock, open_append, parent_dir, sync_dir};
use record::now;
use syncer::{Syncer, Waiter};

/// Fields the log adds to every record, and the rotation marker: a caller's field of one
/// of these names is renamed (`event_<name>`), so no record can forge them.
const RESERVED_FIELDS: [&str; 8] = [
    "seq",
    "ts",
    "prev",
    "hash",
    "rotation",
    "replaced",
    "checkpoint",
    "syslog",
];

/// The log could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// An I/O failure, with the path.
    #[error("audit log '{path}' cannot be written: {source}")]
    Io {
        /// The log's path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The log's folder does not exist, so the log cannot be created.
    #[error(
        "audit log '{path}' cannot be created: its folder '{folder}' does not exist (create it, owned by the server's user, mode 0700)"
    )]
    NoFolder {
        /// The log's path.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
    },
    /// The path no longer names the file this writer has open (renamed, deleted, replaced),
    /// or the file shrank under it (truncated): with `audit_on_replaced = "fail"` this append
    /// and every later one of this writer is refused.
    #[error(
        "audit log '{path}' was {found} while this server wrote it; no record is written until the server restarts (audit_on_replaced = \"reopen\" would start again in the file at the path, recording this)"
    )]
    Replaced {
        /// The log's path.
        path: PathBuf,
        /// What was found.
        found: String,
    },
    /// `audit_checkpoint_key` cannot be used.
    #[error(transparent)]
    CheckpointKey(#[from] KeyError),
    /// `[audit.syslog] required = true` and the record (kept in the local log) could not be
    /// shipped.
    #[error("audit record {seq} was written locally but not shipped to syslog: {reason}")]
    NotShipped {
        /// The record's `seq`.
        seq: u64,
        /// Why.
        reason: String,
    },
    /// `[audit.syslog]` cannot be used as given.
    #[error("[audit.syslog]: {0}")]
    Syslog(String),
    /// The existing log ends in a record that does not verify: continuing would chain new
    /// records onto a broken or forged tail.
    #[error("audit log '{path}' is broken at its end: {reason}; run `safe-mcp audit verify`")]
    Broken {
        /// The log's path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// An open, append-only, hash-chained audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    redactor: Arc<Redactor>,
    state: Mutex<ChainState>,
    /// The background syncer of [`AuditLog::append_sync_behind`], started on first use.
    syncer: std::sync::OnceLock<Syncer>,
    /// `fdatasync`s completed on this log (synchronous and background).
    syncs: Arc<std::sync::atomic::AtomicU64>,
    /// Rotate once the file holds this many bytes (0: never).
    rotate_bytes: u64,
    /// `audit_on_replaced = "reopen"`: a log found replaced under the writer is reopened
    /// (and the event recorded) instead of refused.
    reopen_replaced: bool,
    /// `audit_checkpoint_key`: the signer, and the interval in records.
    checkpoints: Option<(CheckpointSigner, u64)>,
    /// `[audit.syslog] required`: a record not shipped fails its append.
    syslog_required: bool,
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        // The closing checkpoint: what this writer appended is covered before it goes.
        if let Err(e) = self.checkpoint() {
            tracing::error!("audit log: the closing checkpoint could not be written: {e}");
        }
        if let Some(syncer) = self.syncer.take() {
            syncer.stop();
        }
    }
}

/// When a record's line must be on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// `fdatasync` before the append returns.
    Now,
    /// Written before the append returns; `fdatasync` by the background syncer.
    Behind,
}

impl AuditLog {
    /// Open (creating if needed) and continue the chain of the log at `path`.
    ///
    /// The last line of an existing log must be a whole, self-consistent record (newline
    /// at its end, valid JSON, its own hash right); otherwise the log is refused
    /// ([`AuditError::Broken`]). Earlier records are not re-checked here (`verify` does that).
    pub fn open(path: &Path, redactor: Arc<Redactor>) -> Result<Self, AuditError> {
        let io = |source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = match open_append(path, true) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let folder = parent_dir(path);
                if !folder.exists() {
                    return Err(AuditError::NoFolder {
                        path: path.to_path_buf(),
                        folder: folder.to_path_buf(),
                    });
                }
                return Err(io(e));
            }
            Err(e) => return Err(io(e)),
        };
        let file = Arc::new(file);
        let _lock = lock(&file).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let head = read_chain_head(&file, len).map_err(|e| e.at(path))?;
        drop(_lock);
        // Rotation renames and links next to the file itself, not next to a symlink to it.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        // Opened just after another writer's rotation renamed a new file into place (or
        // just after the file was created): that rename (or creation) is durable before a
        // line of ours goes into the file, or a crash could take the folder back to before
        // it and our durable record with the file.
        //
        // Skipped when the last record is an ordinary one (not a rotation's start or end):
        // every writer puts a line into a file only after opening it at the log's path and
        // fsyncing the folder (here, or in `reopen` after a rotation or a replaced file);
        // the one line written elsewhere is a rotation's start record, into the file
        // still under its temporary name. So an ordinary last record means a writer
        // fsync'ed the folder while the path already named this file: that name is
        // durable. A file at the path that changes after we read its head (another
        // writer's rotation) is seen under the lock at the first append, and `reopen`
        // fsyncs the folder then. Left uncovered: a log file moved into place by hand
        // (`mv`) whose rename a crash undoes before any writer fsync'ed the folder.
        if !head.written_after_folder_sync {
            sync_dir(&path).map_err(io)?;
        }
        Ok(AuditLog {
            path,
            redactor,
            state: Mutex::new(ChainState {
                file,
                seq: head.seq,
                last_hash: head.hash,
                len,
                poisoned: None,
                ended: head.rotated_to,
                replaced: None,
                pending_replaced: None,
                buf: Vec::with_capacity(1024),
                unsigned: false,
                due: false,
                head_every: head.checkpoint_every,
                started: false,
                shipper: None,
                unshipped: None,
                gap: None,
                not_shipped: None,
            }),
            syncer: std::sync::OnceLock::new(),
            syncs: Arc::default(),
            rotate_bytes: 0,
            reopen_replaced: false,
            checkpoints: None,
            syslog_required: false,
        })
    }

    /// Rotate the log once its file holds `bytes` bytes (0: never): the file is renamed
    /// `<name>.<n>` (the next free `n`, from 1) and a new file continues the chain at the
    /// log's path. Nothing is ever deleted. See [`AuditLog::append`].
    pub fn rotate_at(mut self, bytes: u64) -> Self {
        self.rotate_bytes = bytes;
        self
    }

    /// `audit_on_replaced`: with `true` ("reopen"), a log found renamed, deleted, replaced or
    /// truncated before an append is reopened at its path (created if gone) and gets, as its
    /// next record, one saying what was found, chained to the last record written before
    /// (so `verify` reports the gap, explained). With `false` ("fail", the default) that
    /// append and every later one fail. See [`AuditLog::append`].
    pub fn reopen_when_replaced(mut self, reopen: bool) -> Self {
        self.reopen_replaced = reopen;
        self
    }

    /// Sign the chain with `signer`: a checkpoint record after the first record this writer
    /// appends once one of its records had a `seq` that is a multiple of `every` (at least
    /// 1), and one when the log is closed (dropped) if this writer appended since its last
    /// (see `checkpoint`). Every writer of a signed log must sign it.
    pub fn with_checkpoints(mut self, signer: CheckpointSigner, every: u64) -> Self {
        self.checkpoints = Some((signer, every.max(1)));
        self
    }

    /// Ship every record to syslog as `settings` say (see `syslog`): after its line is
    /// written; a failure is reported by [`AuditLog::unshipped`] and recorded once shipping
    /// works again, and fails the append only when `settings.required`.
    pub fn with_syslog(
        mut self,
        settings: &crate::config::SyslogSettings,
    ) -> Result<Self, AuditError> {
        let shipper = syslog::Shipper::new(settings).map_err(AuditError::Syslog)?;
        self.syslog_required = settings.required;
        self.state
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .shipper = Some(shipper);
        Ok(self)
    }

    /// Records of this writer that have not reached syslog since the last one that did:
    /// what a result says in `detail.audit`. `None` without `[audit.syslog]` or when all
    /// went.
    pub fn unshipped(&self) -> Option<String> {
        let state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.unshipped.as_ref().map(|u| {
            format!(
                "records {}..={} were written to the local log but not shipped to syslog: {}",
                u.from, u.to, u.reason
            )
        })
    }

    /// Append a checkpoint now if this writer appended records that none of its checkpoints
    /// covers yet (what a server does when it stops; `Drop` calls it). Nothing without
    /// `with_checkpoints`.
    pub fn checkpoint(&self) -> Result<(), AuditError> {
        if self.checkpoints.is_none() {
            return Ok(());
        }
        let mut guard = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let state = &mut *guard;
        if !state.unsigned || state.poisoned.is_some() || state.replaced.is_some() {
            return Ok(());
        }
        let (_lock, _len) = self.settle(state)?;
        self.put_checkpoint(state, true)
    }

    /// [`AuditLog::put_checkpoint`] for an append: the record the caller asked for is what
    /// the append answers for, so a checkpoint that cannot be written is logged and left due
    /// (the next append tries again), not the append's failure.
    fn checkpoint_or_warn(&self, state: &mut ChainState, sync_now: bool) {
        if let Err(e) = self.put_checkpoint(state, sync_now) {
            state.due = true;
            tracing::error!("audit log: a checkpoint could not be written: {e}");
        }
    }

    /// Append the checkpoint record over the chain as it stands (the file locked by the
    /// caller): `{"checkpoint": {"size", "head", "every", "note"}}`, the note signed.
    fn put_checkpoint(&self, state: &mut ChainState, sync_now: bool) -> Result<(), AuditError> {
        let Some((signer, every)) = &self.checkpoints else {
            return Ok(());
        };
        let ts = now();
        let note = signer
            .sign(state.seq, &state.last_hash, &ts, *every)
            .map_err(|e| self.io_error(std::io::Error::other(format!("signing: {e}"))))?;
        let mut body = Map::new();
        body.insert("size".into(), Value::from(state.seq));
        body.insert("head".into(), Value::from(state.last_hash.clone()));
        body.insert("every".into(), Value::from(*every));
        body.insert("note".into(), Value::from(note));
        let record = Map::from_iter([("checkpoint".to_string(), Value::Object(body))]);
        let len = state.len;
        self.put(state, &record, &ts, len, sync_now)?;
        state.unsigned = false;
        state.due = false;
        Ok(())
    }

    /// Open the log of a server starting with `config` (its rotation size and
    /// `audit_on_replaced` applied). Under `audit_fail_mode = "closed"` a log that cannot be
    /// opened is the error the server refuses to start with; under "open" the server starts
    /// without it (`Ok((None, Some(why)))`, warned on stderr) and says so in its results.
    /// Every server starts through this, so none says "ready" with a log it cannot write.
    pub(crate) fn open_for_server(
        config: &crate::config::Config,
        redactor: Arc<Redactor>,
    ) -> Result<(Option<AuditLog>, Option<String>), AuditError> {
        match AuditLog::open_configured(config, redactor) {
            Ok(log) => Ok((Some(log), None)),
            Err(e) if config.audit_fail_mode == crate::config::AuditFailMode::Open => {
                tracing::warn!("audit log unavailable, continuing (audit_fail_mode = open): {e}");
                Ok((None, Some(e.to_string())))
            }
            Err(e) => Err(e),
        }
    }

    /// [`AuditLog::open`] with the policy's rotation size, `audit_on_replaced` and checkpoint
    /// key.
    pub(crate) fn open_configured(
        config: &crate::config::Config,
        redactor: Arc<Redactor>,
    ) -> Result<AuditLog, AuditError> {
        // The key first: a server that cannot sign does not start writing.
        let signer = config
            .audit_checkpoint_key
            .as_deref()
            .map(CheckpointSigner::load)
            .transpose()?;
        let log = AuditLog::open(&config.audit_log, redactor)?
            .rotate_at(config.audit_rotate_bytes)
            .reopen_when_replaced(
                config.audit_on_replaced == crate::config::AuditOnReplaced::Reopen,
            );
        let log = match &config.audit_syslog {
            Some(settings) => log.with_syslog(settings)?,
            None => log,
        };
        Ok(match signer {
            Some(signer) => log.with_checkpoints(signer, config.audit_checkpoint_every),
            None => log,
        })
    }

    /// How many `fdatasync`s of this log have completed (tests observe the ordering of
    /// [`AuditLog::append_then`]'s callbacks with it).
    pub fn completed_syncs(&self) -> u64 {
        self.syncs.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record durably.
    ///
    /// Returns only after the line is written and `fdatasync`ed. On failure nothing is
    /// considered written: the file is cut back to its previous length, and if even that
    /// fails every later append fails too.
    ///
    /// Before the line is written (under the file's `flock`) the writer checks that the
    /// log's path still names the file it has open (`stat` of the path against `fstat` of
    /// its descriptor: device and inode) and that the file is not shorter than this writer
    /// last left it. A log renamed, deleted or replaced would otherwise go on being written
    /// to a file nobody reads; one truncated in place would restart at seq 1 without a
    /// trace. Either fails ([`AuditError::Replaced`]), or, with
    /// [`AuditLog::reopen_when_replaced`], is recorded in the file at the path.
    pub fn append(&self, record: Map<String, Value>) -> Result<(), AuditError> {
        self.write(record, Durability::Now, None)
    }

    /// Append one record and return once its line is written (in the page cache, so it
    /// survives the server's own crash or `kill -9`); the `fdatasync` follows on a
    /// background thread that groups the lines written meanwhile into one call. For records
    /// that nothing waits on (a dry run changes nothing). A failed background sync makes
    /// every later append fail.
    pub fn append_sync_behind(&self, record: Map<String, Value>) -> Result<(), AuditError> {
        self.write(record, Durability::Behind, None)
    }

    /// Write one record's line now and return; `then` is called from the syncer thread once
    /// an `fdatasync` covered the line (`Ok`), or failed (`Err`). Lets a caller prepare work
    /// that must not take effect before the record is durable while the disk syncs. When the
    /// line cannot even be written, the error is returned and `then` is dropped uncalled.
    pub fn append_then(
        &self,
        record: Map<String, Value>,
        then: impl FnOnce(Result<(), SyncError>) + Send + 'static,
    ) -> Result<(), AuditError> {
        self.write(record, Durability::Behind, Some(Box::new(then)))
    }

    fn write(
        &self,
        record: Map<String, Value>,
        durability: Durability,
        waiter: Option<Waiter>,
    ) -> Result<(), AuditError> {
        let io = |e| self.io_error(e);
        // Redact before anything is hashed or written: the log is a copy of what the model
        // sent, and a secret in it would outlive every output that was redacted.
        let mut value = Value::Object(record);
        self.redactor.redact_json(&mut value);
        let mut record = match value {
            Value::Object(map) => map,
            other => Map::from_iter([("event".to_string(), other)]),
        };
        // A caller field must not overwrite (and so forge) a chain field.
        for key in RESERVED_FIELDS {
            if let Some(v) = record.remove(key) {
                record.insert(format!("event_{key}"), v);
            }
        }
        let ts = now();

        let mut guard = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let state = &mut *guard;
        if let Some(reason) = &state.poisoned {
            return Err(io(std::io::Error::other(reason.clone())));
        }
        if let Some(found) = &state.replaced {
            return Err(AuditError::Replaced {
                path: self.path.clone(),
                found: found.clone(),
            });
        }
        if let Some(reason) = self.syncer.get().and_then(Syncer::failure) {
            state.poisoned = Some(reason.to_string());
            return Err(io(std::io::Error::other(reason)));
        }
        let syncer = match durability {
            Durability::Now => None,
            Durability::Behind => Some(match self.syncer.get() {
                Some(s) => s,
                None => {
                    let started =
                        Syncer::start(state.file.clone(), self.syncs.clone()).map_err(io)?;
                    self.syncer.get_or_init(|| started)
                }
            }),
        };
        state.not_shipped = None;
        let (_lock, len) = self.settle(state)?;
        let mut len = len;
        if let Some((_, every)) = &self.checkpoints
            && !state.started
            && state.head_every != Some(*every)
        {
            // The opening checkpoint: the chain as this writer found it is signed before it
            // adds to it (an empty log's at size 0), so a log a writer signed always holds a
            // checkpoint, one left unsigned by a writer killed before closing is covered, and
            // the interval a verifier holds the next records to is this writer's. Not needed
            // when the head is already a checkpoint of this interval.
            self.checkpoint_or_warn(state, syncer.is_none());
            len = state.len;
        }
        state.started = true;
        self.put(state, &record, &ts, len, syncer.is_none())?;
        state.unsigned = true;
        if state.due {
            // Under the same lock, and synced with the record when it is.
            self.checkpoint_or_warn(state, syncer.is_none());
        }
        if let Some(gap) = state.gap.clone() {
            // Shipping works again: the stretch that did not go is on record, locally and
            // in syslog (kept for the next append if even the local write fails).
            let record = Map::from_iter([
                ("syslog".to_string(), Value::from("gap")),
                ("from_seq".to_string(), Value::from(gap.from)),
                ("to_seq".to_string(), Value::from(gap.to)),
                ("reason".to_string(), Value::from(gap.reason)),
            ]);
            let len = state.len;
            match self.put(state, &record, &now(), len, syncer.is_none()) {
                Ok(()) => state.gap = None,
                Err(e) => {
                    tracing::error!("audit log: the syslog gap record could not be written: {e}")
                }
            }
        }
        // `required = true`: a record that did not reach syslog fails the append, once its
        // line and everything after it are in place. Its waiter is dropped uncalled, as for a
        // line that could not be written (a gated command is refused); the line is still
        // synced.
        let refused = if self.syslog_required {
            state.not_shipped.take()
        } else {
            None
        };
        if let Some(syncer) = syncer {
            // Registered under the chain lock, after the line was written.
            syncer.request(if refused.is_some() { None } else { waiter });
        }
        if let Some((seq, reason)) = refused {
            return Err(AuditError::NotShipped { seq, reason });
        }
        Ok(())
    }

    fn io_error(&self, source: std::io::Error) -> AuditError {
        AuditError::Io {
            path: self.path.clone(),
            source,
        }
    }
}
