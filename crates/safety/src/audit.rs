//! Audit log (SPEC §4.6): append-only JSONL, every record fdatasync'ed, SHA-256 hash chain.
//!
//! CONTRACT (other modules rely on it):
//! - `AuditLog::open(path, redactor) -> Result<AuditLog, AuditError>` continues an existing chain.
//! - `AuditLog::append(&self, record: serde_json::Map) -> Result<(), AuditError>`: adds `seq`,
//!   `ts`, `prev` (hash of the previous record) and `hash`, redacts every string, writes one line,
//!   fsyncs. Thread-safe (`&self`).
//! - `AuditLog::append_sync_behind(&self, record)`: the same line, written before it returns
//!   (so a crash or `kill -9` of the server loses nothing), with the `fdatasync` done by a
//!   background thread that covers every line written since its last one (group commit).
//!   For records of calls that change nothing (`explain_command`): only a power loss in the
//!   milliseconds after the reply can lose such a record; any `fdatasync` of the log that
//!   follows (the next [`AuditLog::append`], or the background one) covers it.
//! - `AuditLog::append_then(&self, record, then)`: the line written now, `then(Ok)` called
//!   from the background thread once an `fdatasync` covered it (or `then(Err)`): what
//!   `run_command`'s start gate opens on, so nothing runs before its intent is durable.
//! - `verify(path) -> Result<VerifyReport, std::io::Error>` for `safe-mcp audit verify`.
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
//! The log is shared by every server (SPEC §3), so each append takes an exclusive `flock` on the
//! file, re-reads the chain head if another process appended since, writes (and, for
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
//! [`verify`] walks the chain back from the log through the start records.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::redact::Redactor;

/// `prev` of the first record.
pub const GENESIS_PREV: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Fields the log adds to every record, and the rotation marker: a caller's field of one
/// of these names is renamed (`event_<name>`), so no record can forge them.
const RESERVED_FIELDS: [&str; 6] = ["seq", "ts", "prev", "hash", "rotation", "replaced"];

/// How many times one append follows rotations done meanwhile before it gives up.
const ROTATION_ATTEMPTS: usize = 16;

/// The longest record line `open` reads back (a tail longer than this is refused, not
/// followed: a forged multi-gigabyte last line must not exhaust memory at start-up).
const MAX_LINE: u64 = 64 * 1024 * 1024;

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

/// The head of the chain as last written.
#[derive(Debug)]
struct ChainState {
    /// Shared with the background syncer and the `flock` guard of an append.
    file: Arc<File>,
    /// `seq` of the last record (0 for an empty log).
    seq: u64,
    /// `hash` of the last record ([`GENESIS_PREV`] for an empty log).
    last_hash: String,
    /// File length after the last record this process wrote or read.
    len: u64,
    /// Set when a failed write could not be rolled back: the file may end in a partial line,
    /// and appending after it would hide the damage.
    poisoned: Option<String>,
    /// The file's last record is a rotation end naming this rotated file: the chain goes on
    /// in the file now at the log's path.
    ended: Option<String>,
    /// The log was found renamed, deleted, replaced or truncated under this writer, and
    /// `audit_on_replaced = "fail"`: every append is refused (what was found).
    replaced: Option<String>,
    /// The same under `audit_on_replaced = "reopen"`: the record that explains it, to be the
    /// first one written in the file now at the path (chained to the last one before).
    pending_replaced: Option<Map<String, Value>>,
    /// Reused serialisation buffer.
    buf: Vec<u8>,
}

impl ChainState {
    /// The `seq` of the next record.
    fn next_seq(&self) -> std::io::Result<u64> {
        self.seq
            .checked_add(1)
            .ok_or_else(|| std::io::Error::other("audit sequence number overflow"))
    }
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
}

/// How long the syncer lets records that nothing waits on gather before one `fdatasync`.
pub const SYNC_LINGER: std::time::Duration = std::time::Duration::from_millis(2);

/// Called once the line it was registered with is durable (or the sync failed).
type Waiter = Box<dyn FnOnce(Result<(), String>) + Send>;

/// What the syncer thread and the writers share.
struct SyncShared {
    /// Told after the next `fdatasync`.
    waiters: Vec<Waiter>,
    /// Lines were written that no `fdatasync` has covered yet.
    pending: bool,
    /// The log is being dropped: sync what is pending and stop.
    stop: bool,
    /// A background `fdatasync` failed: every later append fails (fail-closed).
    failed: Option<String>,
    /// The syncer is letting records gather and will sync when its short wait ends: a
    /// record nothing waits on need not wake it.
    lingering: bool,
    /// The file to sync: the log's current file (replaced when the log rotates).
    file: Arc<File>,
}

impl std::fmt::Debug for SyncShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncShared")
            .field("waiters", &self.waiters.len())
            .field("pending", &self.pending)
            .field("stop", &self.stop)
            .field("failed", &self.failed)
            .field("lingering", &self.lingering)
            .finish()
    }
}

/// A thread that `fdatasync`s the log after lines written by `append_sync_behind`.
#[derive(Debug)]
struct Syncer {
    shared: Arc<(Mutex<SyncShared>, std::sync::Condvar)>,
    thread: std::thread::JoinHandle<()>,
}

impl Syncer {
    fn start(file: Arc<File>, syncs: Arc<std::sync::atomic::AtomicU64>) -> std::io::Result<Syncer> {
        let shared = Arc::new((
            Mutex::new(SyncShared {
                waiters: Vec::new(),
                pending: false,
                stop: false,
                failed: None,
                lingering: false,
                file,
            }),
            std::sync::Condvar::new(),
        ));
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("audit-sync".into())
            .spawn(move || sync_loop(&theirs, &syncs))?;
        Ok(Syncer { shared, thread })
    }

    /// The log moved on to a new file (rotation). Every line of the old file is already
    /// durable: the writer that moves on `fdatasync`s the old file first (its end record
    /// included), which covers the whole file, whoever wrote them.
    fn set_file(&self, file: Arc<File>) {
        let (lock, _) = &*self.shared;
        lock.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .file = file;
    }

    fn request(&self, waiter: Option<Waiter>) {
        let (lock, wake) = &*self.shared;
        let wake_now = {
            let mut s = lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.pending = true;
            let waiting = waiter.is_some();
            s.waiters.extend(waiter);
            waiting || !s.lingering
        };
        // After the lock is released: the syncer, woken, finds it free instead of waiting
        // for it (one wake-up, not two). It reads `pending` under the lock, so it cannot
        // miss this request either way.
        if wake_now {
            wake.notify_one();
        }
    }

    fn failure(&self) -> Option<String> {
        let (lock, _) = &*self.shared;
        lock.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .failed
            .clone()
    }

    /// A synchronous `fdatasync` just covered every line written so far (the caller holds
    /// the chain lock, so no line was written behind it meanwhile).
    fn covered(&self) {
        let (lock, _) = &*self.shared;
        let waiters = {
            let mut s = lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.pending = false;
            std::mem::take(&mut s.waiters)
        };
        for waiter in waiters {
            waiter(Ok(()));
        }
    }
}

fn sync_loop(
    shared: &(Mutex<SyncShared>, std::sync::Condvar),
    syncs: &std::sync::atomic::AtomicU64,
) {
    let (lock, wake) = shared;
    loop {
        let mut s = lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while !s.pending && !s.stop {
            s = wake
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if !s.pending && s.stop {
            return;
        }
        // Only records nothing waits on: let more of them gather for one fdatasync (a
        // stream of dry runs must not cost one disk flush each). A waiter or a stop
        // ends the wait at once.
        let lingered = std::time::Instant::now() + SYNC_LINGER;
        s.lingering = true;
        while s.waiters.is_empty() && !s.stop {
            let left = lingered.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            s = wake
                .wait_timeout(s, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        s.lingering = false;
        if !s.pending && s.waiters.is_empty() {
            // A synchronous append's fdatasync covered everything meanwhile.
            continue;
        }
        s.pending = false;
        let waiters = std::mem::take(&mut s.waiters);
        // Taken with the waiters: a waiter registered before a rotation's file swap has its
        // line in the old file, which the rotation already made durable.
        let file = s.file.clone();
        drop(s);
        // Every line written before this call is covered by it (a waiter is registered
        // after its line is written); lines written while it runs set `pending` again and
        // get the next round.
        let result = file.sync_data();
        if result.is_ok() {
            syncs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        let result = result.map_err(|e| {
            tracing::error!("audit log fdatasync failed: {e}");
            let why = format!("fdatasync of the audit log failed: {e}");
            let mut s = lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.failed = Some(why.clone());
            why
        });
        for waiter in waiters {
            waiter(result.clone());
        }
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        if let Some(syncer) = self.syncer.take() {
            {
                let (lock, wake) = &*syncer.shared;
                let mut s = lock
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                s.stop = true;
                wake.notify_one();
            }
            let _ = syncer.thread.join();
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

/// Releases the `flock` when an append ends, however it ends (a panic included).
struct FileLock(Arc<File>);

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
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
        // Opened just after another writer's rotation renamed a new file into place: that
        // rename is durable before a line of ours goes into the file.
        sync_dir(&path).map_err(io)?;
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
            }),
            syncer: std::sync::OnceLock::new(),
            syncs: Arc::default(),
            rotate_bytes: 0,
            reopen_replaced: false,
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

    /// Open the log of a server starting with `config` (its rotation size and
    /// `audit_on_replaced` applied). Under `audit_fail_mode = "closed"` a log that cannot be
    /// opened is the error the server refuses to start with; under "open" the server starts
    /// without it (`Ok((None, Some(why)))`, warned on stderr) and says so in its results.
    /// Every server starts through this, so none says "ready" with a log it cannot write.
    pub fn open_for_server(
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

    /// [`AuditLog::open`] with the policy's rotation size and `audit_on_replaced`.
    pub fn open_configured(
        config: &crate::config::Config,
        redactor: Arc<Redactor>,
    ) -> Result<AuditLog, AuditError> {
        Ok(AuditLog::open(&config.audit_log, redactor)?
            .rotate_at(config.audit_rotate_bytes)
            .reopen_when_replaced(
                config.audit_on_replaced == crate::config::AuditOnReplaced::Reopen,
            ))
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
        then: impl FnOnce(Result<(), String>) + Send + 'static,
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
            state.poisoned = Some(reason.clone());
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
        let (_lock, len) = self.settle(state)?;
        self.put(state, &record, &ts, len, syncer.is_none())?;
        if let Some(syncer) = syncer {
            // Registered under the chain lock, after the line was written.
            syncer.request(waiter);
        }
        Ok(())
    }

    fn io_error(&self, source: std::io::Error) -> AuditError {
        AuditError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Lock the current file and bring the chain head up to date: follow a rotation another
    /// writer did, finish one that a crash cut short, or rotate when the file is full.
    /// Returns the file's length with its `flock` held.
    fn settle(&self, state: &mut ChainState) -> Result<(FileLock, u64), AuditError> {
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

    /// The log was found replaced under this writer (`found` says how): refuse, from now
    /// on, or (`audit_on_replaced = "reopen"`) note `record` for the file at the path and
    /// have [`AuditLog::settle`] reopen it.
    fn found_replaced(
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
    fn record_replaced(&self, state: &mut ChainState, len: u64) -> Result<u64, AuditError> {
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

    /// `fdatasync` the current file: every line written to it so far is durable.
    fn sync_now(&self, state: &ChainState) -> std::io::Result<()> {
        state.file.sync_data()?;
        self.syncs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some(s) = self.syncer.get() {
            s.covered();
        }
        Ok(())
    }

    /// The log's own file name, when it can rotate (names are built from it as text).
    fn base_name(&self) -> std::io::Result<&str> {
        self.path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| std::io::Error::other("the log's file name is not UTF-8"))
    }

    /// `<log name>.<n>`: the only names this log rotates to (an end record naming anything
    /// else, say `../x`, was not written by it).
    fn is_rotated_name(&self, name: &str) -> bool {
        self.base_name()
            .is_ok_and(|base| rotated_number(base, name).is_some())
    }

    /// The name the file (starting the chain, or continuing `<log>.<k>`) gets when it
    /// rotates: `<log>.<k + 1>` (`<log>.1` for the first), or the next one not taken by an
    /// unrelated file. The chain names its files; other files in the folder (backups,
    /// `<log>.20261130`) play no part.
    fn next_rotated_name(&self, file: &File) -> std::io::Result<String> {
        let base = self.base_name()?;
        let previous = match first_record(file)? {
            Some(Rotation::Start(name)) => rotated_number(base, &name).unwrap_or(0),
            _ => 0,
        };
        let dir = parent_dir(&self.path);
        let mut n = previous;
        for _ in 0..1000 {
            n = n
                .checked_add(1)
                .ok_or_else(|| std::io::Error::other("rotated file numbers exhausted"))?;
            let name = format!("{base}.{n}");
            if std::fs::symlink_metadata(dir.join(&name)).is_err() {
                return Ok(name);
            }
        }
        Err(std::io::Error::other(
            "1000 rotated file names in a row are taken",
        ))
    }

    /// Give the ended file (locked, at the log's path) its rotated `name` and put a new file
    /// in its place that starts with a record chained to the end record. The path names a
    /// whole, chained file at every moment: the old file is hard-linked to its new name
    /// first, the new one is complete under a temporary name before `rename` swaps it in.
    /// Each step can be repeated after a crash.
    fn switch(&self, state: &mut ChainState, name: &str) -> Result<(), AuditError> {
        let io = |e: std::io::Error| {
            self.io_error(std::io::Error::new(
                e.kind(),
                format!("rotating it to '{name}': {e}"),
            ))
        };
        let dir = parent_dir(&self.path);
        let rotated = dir.join(name);
        match std::fs::hard_link(&self.path, &rotated) {
            Ok(()) => {}
            // Linked before a crash.
            Err(e)
                if e.kind() == std::io::ErrorKind::AlreadyExists
                    && same_file(&state.file, &rotated).map_err(io)? => {}
            Err(e) => return Err(io(e)),
        }
        let seq = state.next_seq().map_err(io)?;
        let start = Map::from_iter([
            ("rotation".to_string(), Value::from("start")),
            ("previous_file".to_string(), Value::from(name)),
        ]);
        let mut line = Vec::with_capacity(256);
        chained_line(&start, seq, &now(), &state.last_hash, &mut line);
        let mut tmp_name = self.path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(".rotating");
        let tmp = dir.join(tmp_name);
        // A leftover of a crash is removed, never followed: the new file is created afresh
        // (`O_EXCL`, which also refuses a symlink put at that name).
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
        let mut next = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io)?;
        // The new file keeps the old one's owner, group and permissions (an operator's
        // chown and chmod survive). Owner first: a chown clears set-id bits. A server that may
        // not give a file away (not root, the log not its own) warns and goes on with a file
        // of its own: the records matter more than who owns them.
        let old = state.file.metadata().map_err(io)?;
        {
            if let Err(e) = std::os::unix::fs::fchown(&next, Some(old.uid()), Some(old.gid())) {
                tracing::warn!(
                    "the rotated audit log keeps its permissions but not its owner {}:{} ({e})",
                    old.uid(),
                    old.gid()
                );
            }
        }
        next.set_permissions(old.permissions())
            .and_then(|()| next.write_all(&line))
            .and_then(|()| next.sync_data())
            // The folder is fsync'ed by `reopen`, which follows, before any line goes into
            // the new file.
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(io)
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
    fn put(
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
        Ok(())
    }
}

/// The record's line (canonical JSON with `seq`, `ts`, `prev`, then `hash` last, and a
/// newline) into `out`; returns the hash.
fn chained_line(
    record: &Map<String, Value>,
    seq: u64,
    ts: &str,
    prev: &str,
    out: &mut Vec<u8>,
) -> String {
    canonical_record(record, seq, ts, prev, out);
    let hash = hex::encode(Sha256::digest(&*out));
    // The canonical text ends with the object's `}`: put `hash` before it, last.
    out.pop();
    out.extend_from_slice(b",\"hash\":\"");
    out.extend_from_slice(hash.as_bytes());
    out.extend_from_slice(b"\"}\n");
    hash
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// `fsync` the folder that holds `path`: a `rename` or a file created in it is durable.
fn sync_dir(path: &Path) -> std::io::Result<()> {
    File::open(parent_dir(path))?.sync_all()
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// True when `path` names the file `file` is open on.
fn same_file(file: &File, path: &Path) -> std::io::Result<bool> {
    let open = file.metadata()?;
    match std::fs::metadata(path) {
        Ok(named) => Ok(open.dev() == named.dev() && open.ino() == named.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The log opened for reading and appending (`create`: made with mode 0600 if missing).
fn open_append(path: &Path, create: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(create)
        .mode(0o600)
        .open(path)
}

/// How `path` no longer names the file whose `fstat` is `open`, if it does not: `deleted`
/// (no name left), `renamed` (the file has a name, not this one), `replaced` (another file
/// is at the path). `None` when it still names it.
fn path_moved(
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
fn replaced_record(
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

/// `n` when `name` is `<base>.<n>` (decimal digits only).
fn rotated_number(base: &str, name: &str) -> Option<u64> {
    let digits = name.strip_prefix(base)?.strip_prefix('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The rotation record a file starts with, if its first line is a whole record.
fn first_record(file: &File) -> std::io::Result<Option<Rotation>> {
    Ok(first_checked(file)?.and_then(|r| r.rotation))
}

/// A file's first line, when it is a whole record that checks out on its own.
fn first_checked(file: &File) -> std::io::Result<Option<CheckedRecord>> {
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

fn lock(file: &Arc<File>) -> std::io::Result<FileLock> {
    file.lock()?;
    Ok(FileLock(file.clone()))
}

enum TailError {
    Io(std::io::Error),
    Broken(String),
}

impl TailError {
    fn at(self, path: &Path) -> AuditError {
        let path = path.to_path_buf();
        match self {
            TailError::Io(source) => AuditError::Io { path, source },
            TailError::Broken(reason) => AuditError::Broken { path, reason },
        }
    }
}

/// The chain head: the last record of a file.
struct Head {
    seq: u64,
    hash: String,
    /// The last record is a rotation end naming this rotated file.
    rotated_to: Option<String>,
}

/// The head of a log file of `len` bytes.
fn read_chain_head(file: &File, len: u64) -> Result<Head, TailError> {
    if len == 0 {
        return Ok(Head {
            seq: 0,
            hash: GENESIS_PREV.to_string(),
            rotated_to: None,
        });
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1)
        .map_err(TailError::Io)?;
    if last[0] != b'\n' {
        return Err(TailError::Broken(
            "the last record is cut off (no newline at its end)".to_string(),
        ));
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
            return Err(TailError::Broken(format!(
                "the last line is longer than {MAX_LINE} bytes"
            )));
        }
    }
    let mut line = vec![0u8; (body_end - start) as usize];
    file.read_exact_at(&mut line, start)
        .map_err(TailError::Io)?;
    let record = check_line(&line).map_err(TailError::Broken)?;
    Ok(Head {
        seq: record.seq,
        hash: record.hash,
        rotated_to: match record.rotation {
            Some(Rotation::End(name)) => Some(name),
            _ => None,
        },
    })
}

/// The chain fields of a record that checked out on its own.
struct CheckedRecord {
    seq: u64,
    prev: String,
    hash: String,
    rotation: Option<Rotation>,
    /// A record written by a writer that found the log replaced under it: what it found.
    replaced: Option<String>,
}

/// A record the log writes when it rotates.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Rotation {
    /// The last record of a file that was rotated: `rotated_to` is its new name.
    End(String),
    /// The first record of the file that follows: `previous_file` names the rotated one.
    Start(String),
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Check one line (without its newline) on its own: JSON object, chain fields present and
/// well-formed, `hash` right, and the bytes exactly what the writer would have written.
fn check_line(line: &[u8]) -> Result<CheckedRecord, String> {
    if line.is_empty() {
        return Err("empty line".to_string());
    }
    let value: Value =
        serde_json::from_slice(line).map_err(|e| format!("not a JSON record ({e})"))?;
    let Value::Object(mut map) = value else {
        return Err("not a JSON object".to_string());
    };
    let hash = match map.remove("hash") {
        Some(Value::String(h)) if is_hex64(&h) => h,
        Some(_) => return Err("field 'hash' is not 64 lower-case hex digits".to_string()),
        None => return Err("field 'hash' is missing".to_string()),
    };
    let seq = match map.get("seq").and_then(Value::as_u64) {
        Some(seq) if seq > 0 => seq,
        _ => return Err("field 'seq' is missing or not a positive integer".to_string()),
    };
    let prev = match map.get("prev") {
        Some(Value::String(p)) if is_hex64(p) => p.clone(),
        _ => return Err("field 'prev' is missing or not 64 lower-case hex digits".to_string()),
    };
    match map.get("ts").and_then(Value::as_str) {
        Some(ts) if chrono::DateTime::parse_from_rfc3339(ts).is_ok() => {}
        _ => return Err("field 'ts' is missing or not an RFC 3339 time".to_string()),
    }
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
    let rotation = match map.get("rotation") {
        None => None,
        Some(kind) => match (kind.as_str(), text("rotated_to"), text("previous_file")) {
            (Some("end"), Some(name), None) => Some(Rotation::End(name)),
            (Some("start"), None, Some(name)) => Some(Rotation::Start(name)),
            _ => return Err("malformed rotation record".to_string()),
        },
    };
    let replaced = match (map.get("replaced"), text("found")) {
        (None, _) => None,
        (Some(Value::String(_)), Some(found)) => Some(found),
        _ => return Err("malformed replaced record".to_string()),
    };
    let mut canonical = Vec::with_capacity(line.len());
    canonical_json(&Value::Object(map), &mut canonical);
    let computed = hex::encode(Sha256::digest(&canonical));
    if computed != hash {
        return Err(format!(
            "record was edited: its hash is {hash} but its content hashes to {computed}"
        ));
    }
    // Same content, different bytes (reformatted, a duplicate key added): still an edit.
    canonical.pop();
    canonical.extend_from_slice(b",\"hash\":\"");
    canonical.extend_from_slice(hash.as_bytes());
    canonical.extend_from_slice(b"\"}");
    if canonical != line {
        return Err(
            "record was edited: its bytes are not the canonical form of its content".to_string(),
        );
    }
    Ok(CheckedRecord {
        seq,
        prev,
        hash,
        rotation,
        replaced,
    })
}

/// The canonical JSON of `record` with the chain fields `seq`, `ts` and `prev` added: the
/// same bytes as [`canonical_json`] of the record with those three keys inserted (a caller's
/// field of those names was renamed before), without building that record.
fn canonical_record(
    record: &Map<String, Value>,
    seq: u64,
    ts: &str,
    prev: &str,
    out: &mut Vec<u8>,
) {
    let mut members: Vec<(&str, Member<'_>)> = record
        .iter()
        .map(|(k, v)| (k.as_str(), Member::Value(v)))
        .collect();
    members.push(("seq", Member::Seq(seq)));
    members.push(("ts", Member::Text(ts)));
    members.push(("prev", Member::Text(prev)));
    write_object(members, out);
}

/// A member of an object being written canonically.
enum Member<'a> {
    Value(&'a Value),
    Seq(u64),
    Text(&'a str),
}

/// Write an object's members sorted by the bytes of their keys, without blanks.
fn write_object(mut members: Vec<(&str, Member<'_>)>, out: &mut Vec<u8>) {
    members.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out.push(b'{');
    for (i, (key, member)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_json_string(key, out);
        out.push(b':');
        match member {
            Member::Value(v) => canonical_json(v, out),
            Member::Seq(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Member::Text(t) => write_json_string(t, out),
        }
    }
    out.push(b'}');
}

/// Append the canonical serialisation of `value` to `out` (see the module documentation).
pub fn canonical_json(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(
            map.iter()
                .map(|(k, v)| (k.as_str(), Member::Value(v)))
                .collect(),
            out,
        ),
    }
}

fn write_json_string(s: &str, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail, and a &str always serialises.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// What `verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Records that verified (in every file checked).
    pub records: u64,
    /// The first broken record (1-based line number in [`VerifyReport::file`]) and what is
    /// wrong.
    pub broken: Option<(u64, String)>,
    /// The files of the chain that were checked, oldest first: the rotated files the chain
    /// names (`<log>.1`, `<log>.2`, ...), then the log itself.
    pub files: Vec<PathBuf>,
    /// The file holding the broken record.
    pub file: Option<PathBuf>,
}

/// The chain as far as it verified.
struct Walk {
    prev_hash: String,
    expected_seq: u64,
}

impl Walk {
    /// Records verified so far (`seq` starts at 1 and goes up by one a record).
    fn records(&self) -> u64 {
        self.expected_seq - 1
    }
}

/// Check an audit log's hash chain, across its rotated files.
///
/// The chain's files are named by the chain itself: the log's first record, when it is a
/// rotation start, names the rotated file it continues, whose first record names the one
/// before, and so on (in the log's folder; the log is first resolved, so a symlink to it
/// works). Other files beside it (backups, `<log>.20261130`) play no part. Reports the first broken line (1-based, in [`VerifyReport::file`]) and why:
/// a record whose content does not match its hash (edited), a `seq` gap (deleted record), a
/// `seq` out of order (reordered records), a `prev` that is not the previous record's hash,
/// a last line without newline or not parsable (cut-off tail), a rotated file that does not
/// end with its rotation record (records cut from its end), a chain that starts
/// mid-way (a rotated file removed or renamed), a rotated file of the log that the chain
/// does not reach (the log reset or replaced). `records` counts the records
/// before the first broken one.
pub fn verify(path: &Path) -> Result<VerifyReport, std::io::Error> {
    let path = std::fs::canonicalize(path)?;
    let path = path.as_path();
    // The log is opened once and read through that handle: a writer that rotates meanwhile
    // renames it, and puts a file at the path that the walk did not start from. The rotated
    // files the walk named are final (their end record was written before they got a name).
    let live_file = File::open(path)?;
    // Only what was whole when `verify` started: a writer holds the exclusive `flock` while it
    // writes a line, so under a shared one the length ends at a whole record. (A file that
    // cannot be locked is read as it is.)
    let whole = match live_file.lock_shared() {
        Ok(()) => {
            let len = live_file.metadata().map(|m| m.len());
            let _ = live_file.unlock();
            Some(len?)
        }
        Err(_) => None,
    };
    let files = chain_files(path, &live_file)?;
    let mut walk = Walk {
        prev_hash: GENESIS_PREV.to_string(),
        expected_seq: 1,
    };
    for (i, file) in files.iter().enumerate() {
        // The last file is the log itself, read through the handle the walk started from
        // (the walk reads first records with `pread`, so it starts at offset 0).
        let rotated = i + 1 < files.len();
        let reader: Box<dyn Read + '_> = match (rotated, whole) {
            (true, _) => Box::new(File::open(file)?),
            (false, Some(len)) => Box::new((&live_file).take(len)),
            (false, None) => Box::new(&live_file),
        };
        if let Some(broken) = verify_file(file, reader, i == 0, rotated, &mut walk)? {
            return Ok(VerifyReport {
                records: walk.records(),
                broken: Some(broken),
                file: Some(file.to_path_buf()),
                files,
            });
        }
    }
    // A rotated file of this log that the chain does not reach: the log was reset or replaced
    // after it rotated (its history would otherwise go unchecked).
    if let Some(orphan) = unreached_rotated_file(path, &files, &live_file)? {
        return Ok(VerifyReport {
            records: walk.records(),
            broken: Some((
                1,
                "a rotated file of this log that its chain does not reach: the log was reset \
                 or replaced after this file rotated"
                    .to_string(),
            )),
            files,
            file: Some(orphan),
        });
    }
    Ok(VerifyReport {
        records: walk.records(),
        broken: None,
        file: None,
        files,
    })
}

/// The files of the chain that ends in `path`, oldest first: walked back through the
/// rotation start records, as long as each names a plain file name that exists. Where the
/// walk stops, the oldest file's first record tells `verify` why (a start record: the chain
/// starts mid-way).
fn chain_files(path: &Path, live: &File) -> Result<Vec<PathBuf>, std::io::Error> {
    let dir = parent_dir(path);
    let mut files = vec![path.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    let mut previous = continued_file(dir, live, &mut seen)?;
    while let Some(file) = previous {
        previous = continued_file(dir, &File::open(&file)?, &mut seen)?;
        files.push(file);
    }
    files.reverse();
    Ok(files)
}

/// The file `file` continues: the one its first record (a rotation start) names, when that
/// is a plain file name in `dir`, not `seen` before on this walk, and a file that exists.
fn continued_file(
    dir: &Path,
    file: &File,
    seen: &mut std::collections::HashSet<String>,
) -> std::io::Result<Option<PathBuf>> {
    let Some(Rotation::Start(previous)) = first_record(file)? else {
        return Ok(None);
    };
    let plain = Path::new(&previous).file_name() == Some(std::ffi::OsStr::new(&previous));
    let path = dir.join(&previous);
    Ok((plain && path.is_file() && seen.insert(previous)).then_some(path))
}

/// A file beside the log named `<log>.<digits>`, ending with an end record that names it
/// (so written by this log's rotation), that is not among `files` and whose own chain does
/// not lead back to `live` (the file `verify` started from: a file rotated from it while
/// `verify` ran leads back to it, or is it). Backups and other files (which do not end so)
/// play no part.
fn unreached_rotated_file(
    path: &Path,
    files: &[PathBuf],
    live: &File,
) -> std::io::Result<Option<PathBuf>> {
    let Some(base) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    let mut found: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(parent_dir(path))? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let numbered = rotated_number(base, name).is_some();
        let candidate = entry.path();
        if !numbered
            || files.contains(&candidate)
            || !candidate.is_file()
            || leads_back_to(&candidate, live)?
        {
            continue;
        }
        let file = File::open(&candidate)?;
        let len = file.metadata()?.len();
        if let Ok(head) = read_chain_head(&file, len)
            && head.rotated_to.as_deref() == Some(name)
        {
            found.push(candidate);
        }
    }
    found.sort();
    Ok(found.into_iter().next())
}

/// True when `file` is `live`, or its start records lead back to it (through files in the
/// same folder).
fn leads_back_to(file: &Path, live: &File) -> std::io::Result<bool> {
    let dir = parent_dir(file);
    let mut seen = std::collections::HashSet::new();
    let mut current = Some(file.to_path_buf());
    while let Some(path) = current {
        if same_file(live, &path)? {
            return Ok(true);
        }
        current = continued_file(dir, &File::open(&path)?, &mut seen)?;
    }
    Ok(false)
}

/// One file of the chain; `first`: the oldest one (it must not continue another); `rotated`:
/// it must end with its rotation end record. (A later file continues the one before it by
/// construction: the walk found that one through its first record.)
fn verify_file(
    path: &Path,
    file: Box<dyn Read + '_>,
    first: bool,
    rotated: bool,
    walk: &mut Walk,
) -> Result<Option<(u64, String)>, std::io::Error> {
    let own_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut ended: Option<String> = None;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        number += 1;
        let Some(body) = line.strip_suffix(b"\n") else {
            return Ok(Some((
                number,
                "cut-off tail: the last line has no newline (a record was truncated)".to_string(),
            )));
        };
        let record = match check_line(body) {
            Ok(record) => record,
            Err(reason) => return Ok(Some((number, reason))),
        };
        if ended.is_some() {
            return Ok(Some((
                number,
                "a record follows the file's rotation end record".to_string(),
            )));
        }
        if number == 1
            && first
            && let Some(Rotation::Start(named)) = &record.rotation
        {
            return Ok(Some((
                number,
                format!(
                    "the chain starts mid-way: this file continues '{named}', which is missing \
                     (rotated files were removed or renamed)"
                ),
            )));
        }
        // A writer found the log replaced under it and said so in the file it went on in:
        // the records it had written before are not in this chain.
        if let Some(found) = &record.replaced
            && (record.seq != walk.expected_seq || record.prev != walk.prev_hash)
        {
            return Ok(Some((
                number,
                format!(
                    "the log was {found} while a server wrote it (this record says so); the \
                     records before it, up to seq {}, are not in this chain",
                    record.seq.saturating_sub(1)
                ),
            )));
        }
        if record.seq != walk.expected_seq {
            let reason = seq_problem(&mut reader, number, walk.expected_seq, record.seq)?;
            return Ok(Some((number, reason)));
        }
        if record.prev != walk.prev_hash {
            let reason = if walk.expected_seq == 1 {
                "the first record's prev is not the genesis value (records before it were removed)"
                    .to_string()
            } else if number == 1 {
                "chain broken: prev does not match the hash of the previous file's last record"
                    .to_string()
            } else {
                format!(
                    "chain broken: prev does not match the hash of line {}",
                    number - 1
                )
            };
            return Ok(Some((number, reason)));
        }
        if let Some(Rotation::End(name)) = &record.rotation {
            ended = Some(name.clone());
        }
        walk.prev_hash = record.hash;
        walk.expected_seq += 1;
    }
    if rotated {
        match ended {
            Some(name) if name == own_name => {}
            Some(name) => {
                return Ok(Some((
                    number,
                    format!("the rotation end record names '{name}', not this file (renamed?)"),
                )));
            }
            None => {
                return Ok(Some((
                    number + 1,
                    "cut-off tail: a rotated file must end with its rotation end record \
                     (records were cut from its end)"
                        .to_string(),
                )));
            }
        }
    }
    Ok(None)
}

/// Explain a `seq` that is not the expected one at line `number`: a later line holding the
/// expected `seq` means records were reordered; none means records were deleted. The later
/// lines are the rest of `rest`, the reader the file was verified through (the same handle and
/// length, not the path again: during a rotation the path may name the next file already).
fn seq_problem(
    rest: &mut impl BufRead,
    number: u64,
    expected: u64,
    found: u64,
) -> Result<String, std::io::Error> {
    if found < expected {
        return Ok(format!(
            "records out of order: expected seq {expected}, found seq {found} (reordered or duplicated)"
        ));
    }
    let mut line = Vec::new();
    let mut at = number;
    loop {
        line.clear();
        if rest.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        at += 1;
        if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&line)
            && map.get("seq").and_then(Value::as_u64) == Some(expected)
        {
            return Ok(format!(
                "records out of order: expected seq {expected}, found seq {found}; seq {expected} is at line {at}"
            ));
        }
    }
    let missing = if found - expected == 1 {
        format!("seq {expected} is missing")
    } else {
        format!("seqs {expected}..{} are missing", found - 1)
    };
    Ok(format!(
        "record deleted: expected seq {expected}, found seq {found} ({missing})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_level_and_has_no_blanks() {
        let value = serde_json::json!({"b": 1, "a": {"z": [true, null, "x\"y"], "c": 2.5}});
        let mut out = Vec::new();
        canonical_json(&value, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            r#"{"a":{"c":2.5,"z":[true,null,"x\"y"]},"b":1}"#
        );
    }

    #[test]
    fn canonical_record_is_canonical_json_of_the_record_with_the_chain_fields() {
        // Keys that sort before, between and after `prev`, `seq` and `ts`, a renamed caller
        // field, nesting, escapes and a large sequence number.
        let record = serde_json::json!({
            "zeta": [1, {"b": 2, "a": "\u{1}\"x"}], "tool": "run_command", "a": null,
            "event_seq": 7, "q": "é", "sequence": true, "p": 1.5, "prevalent": "x", "u": {}
        });
        let Value::Object(record) = record else {
            panic!("not an object")
        };
        let (seq, ts, prev) = (u64::MAX, "2026-11-30T07:00:00.000001Z", GENESIS_PREV);
        let mut ours = Vec::new();
        canonical_record(&record, seq, ts, prev, &mut ours);
        let mut merged = record.clone();
        merged.insert("seq".into(), Value::from(seq));
        merged.insert("ts".into(), Value::from(ts));
        merged.insert("prev".into(), Value::from(prev));
        let mut expected = Vec::new();
        canonical_json(&Value::Object(merged), &mut expected);
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&expected)
        );
    }

    #[test]
    fn genesis_is_64_zeros() {
        assert!(is_hex64(GENESIS_PREV));
        assert!(GENESIS_PREV.bytes().all(|b| b == b'0'));
    }
}
