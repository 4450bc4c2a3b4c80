//! The background `fdatasync` of lines written behind ([`AuditLog::append_sync_behind`],
//! [`AuditLog::append_then`]): one thread a log, which lets records nothing waits on gather
//! for a moment and covers every line written before each call (group commit).
//!
//! A failed background sync is remembered: every later append fails (fail-closed).

use std::fs::File;
use std::sync::{Arc, Mutex};

use super::AuditLog;
use super::chain::ChainState;

/// How long the syncer lets records that nothing waits on gather before one `fdatasync`.
pub const SYNC_LINGER: std::time::Duration = std::time::Duration::from_millis(2);

/// A background `fdatasync` of the log failed: the lines it was to cover may not be on
/// disk, and every later append to this log fails.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The `fdatasync` call failed with this error.
    #[error("fdatasync of the audit log failed: {0}")]
    Failed(Arc<std::io::Error>),
}

/// Called once the line it was registered with is durable (or the sync failed).
pub(super) type Waiter = Box<dyn FnOnce(Result<(), SyncError>) + Send>;

/// What the syncer thread and the writers share.
struct SyncShared {
    /// Told after the next `fdatasync`.
    waiters: Vec<Waiter>,
    /// Lines were written that no `fdatasync` has covered yet.
    pending: bool,
    /// The log is being dropped: sync what is pending and stop.
    stop: bool,
    /// A background `fdatasync` failed: every later append fails (fail-closed).
    failed: Option<SyncError>,
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
pub(super) struct Syncer {
    shared: Arc<(Mutex<SyncShared>, std::sync::Condvar)>,
    thread: std::thread::JoinHandle<()>,
}

impl Syncer {
    pub(super) fn start(
        file: Arc<File>,
        syncs: Arc<std::sync::atomic::AtomicU64>,
    ) -> std::io::Result<Syncer> {
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
    pub(super) fn set_file(&self, file: Arc<File>) {
        let (lock, _) = &*self.shared;
        lock.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .file = file;
    }

    pub(super) fn request(&self, waiter: Option<Waiter>) {
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

    pub(super) fn failure(&self) -> Option<SyncError> {
        let (lock, _) = &*self.shared;
        lock.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .failed
            .clone()
    }

    /// A synchronous `fdatasync` just covered every line written so far (the caller holds
    /// the chain lock, so no line was written behind it meanwhile).
    pub(super) fn covered(&self) {
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

    /// The log is being dropped: sync what is pending, then end the thread.
    pub(super) fn stop(self) {
        {
            let (lock, wake) = &*self.shared;
            let mut s = lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.stop = true;
            wake.notify_one();
        }
        let _ = self.thread.join();
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
            let why = SyncError::Failed(Arc::new(e));
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

impl AuditLog {
    /// `fdatasync` the current file: every line written to it so far is durable.
    pub(super) fn sync_now(&self, state: &ChainState) -> std::io::Result<()> {
        state.file.sync_data()?;
        self.syncs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some(s) = self.syncer.get() {
            s.covered();
        }
        Ok(())
    }
}
