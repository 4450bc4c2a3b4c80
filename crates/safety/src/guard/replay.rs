//! The replay window: the canonical hashes ([`CanonicalHash`]) of the commands run recently,
//! so a second run of the same command can be flagged or blocked.
//!
//! # Bounds
//!
//! The window holds at most [`ReplayLimits::max_entries`] hashes (the least recently
//! recorded is evicted first) and forgets a hash once it is older than
//! [`ReplayLimits::max_age`] (an entry exactly that old still counts). Ages are measured on
//! a monotonic clock ([`Instant`]), so setting the system clock does not move them. Recording
//! a hash that is already there counts as a replay and makes it the newest entry again, aged
//! zero: a command repeated within the window keeps being caught.
//!
//! One window is shared by every entry point of a process (it is `Send + Sync`; one lock
//! guards it, held for a map look-up, or for the write of the state file).
//!
//! # Across a restart
//!
//! [`ReplayWindow::save`] writes the window to a state file the caller names (and keeps
//! outside any jail, like the audit log): a temporary file in the same folder, `fsync`, then
//! `rename` over the old one and an `fsync` of the folder, so the file is always a whole old
//! or a whole new state. [`ReplayWindow::load`] reads it back at start-up.
//!
//! A monotonic clock does not carry over a restart, so the file stores, for each hash, its
//! age at the save (monotonic) and, once, the wall-clock time of the save. On load an entry's
//! age is its saved age plus the wall-clock time since the save, and only entries no older
//! than the window are kept; each is then aged on the new process's monotonic clock. When the
//! wall clock now reads *earlier* than the save (it was set back), the time since the save
//! counts as zero: an entry is never younger than it was at the save, so it lives at most
//! `max_age` minus its saved age more, never forever. When the wall clock was set forward,
//! entries age faster and may be forgotten early; forgetting errs towards running a command
//! again, which a flag-only policy allows anyway, and which never lets a hash outlive its
//! window.
//!
//! A missing state file is a first start (an empty window). A file that exists but cannot be
//! read or does not parse is an error ([`ReplayStateError`]): the caller decides, the window
//! never starts empty in silence.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::canon::CanonicalHash;

/// The bounds of a [`ReplayWindow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayLimits {
    /// At most this many hashes; recording one more evicts the least recently recorded.
    /// `0` remembers nothing.
    pub max_entries: usize,
    /// A hash older than this is forgotten.
    pub max_age: Duration,
}

impl Default for ReplayLimits {
    /// Shellguard's defaults: 1000 entries, one hour.
    fn default() -> Self {
        Self {
            max_entries: 1000,
            max_age: Duration::from_secs(3600),
        }
    }
}

/// Where a [`ReplayWindow`] reads the time: a monotonic clock for ages, and the wall clock
/// only to carry ages across a restart. [`SystemClock`] is the real one; tests inject their
/// own.
pub trait Clock: Send + Sync {
    /// Now, on a clock that never goes back.
    fn monotonic(&self) -> Instant;
    /// Now, on the wall clock (which may be set back or forward).
    fn wall(&self) -> SystemTime;
}

/// The system's clocks: [`Instant::now`] and [`SystemTime::now`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn monotonic(&self) -> Instant {
        Instant::now()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// Why the state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ReplayStateError {
    /// The file exists but could not be read.
    #[error("cannot read the replay state file {}: {source}", path.display())]
    Read {
        /// The state file.
        path: PathBuf,
        /// What the system answered.
        source: std::io::Error,
    },
    /// The file was read but is not a replay state this version wrote.
    #[error("the replay state file {} is corrupt: {reason}", path.display())]
    Corrupt {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The new state could not be written, synced or moved into place.
    #[error("cannot write the replay state file {}: {source}", path.display())]
    Write {
        /// The state file.
        path: PathBuf,
        /// What the system answered.
        source: std::io::Error,
    },
}

/// The state file's tag and version.
const FORMAT: &str = "safe-mcp-replay-window";
const VERSION: u32 = 1;

/// The state file, as JSON.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateFile {
    format: String,
    version: u32,
    /// Wall-clock time of the save, milliseconds since the Unix epoch.
    saved_at_unix_ms: u64,
    /// Oldest first.
    entries: Vec<StateEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateEntry {
    hash: String,
    /// Age at the save, on the monotonic clock, in milliseconds.
    age_ms: u64,
}

struct Entry {
    at: Instant,
    seq: u64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<CanonicalHash, Entry>,
    /// Recording order (`seq`), oldest first; with one monotonic clock also age order.
    order: BTreeMap<u64, CanonicalHash>,
    next_seq: u64,
}

impl Inner {
    fn insert(&mut self, hash: CanonicalHash, at: Instant) -> bool {
        let seq = self.next_seq;
        self.next_seq += 1;
        let old = self.entries.insert(hash, Entry { at, seq });
        if let Some(old) = &old {
            self.order.remove(&old.seq);
        }
        self.order.insert(seq, hash);
        old.is_some()
    }

    fn pop_oldest(&mut self) {
        if let Some((_, hash)) = self.order.pop_first() {
            self.entries.remove(&hash);
        }
    }

    fn oldest_at(&self) -> Option<Instant> {
        let (_, hash) = self.order.first_key_value()?;
        self.entries.get(hash).map(|e| e.at)
    }
}

/// A bounded, shared, persistent set of recently run [`CanonicalHash`]es (see the module
/// documentation).
pub struct ReplayWindow {
    limits: ReplayLimits,
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
}

impl fmt::Debug for ReplayWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayWindow")
            .field("limits", &self.limits)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl ReplayWindow {
    /// An empty window on the system's clocks.
    #[must_use]
    pub fn new(limits: ReplayLimits) -> Self {
        Self::with_clock(limits, Arc::new(SystemClock))
    }

    /// An empty window on `clock`.
    #[must_use]
    pub fn with_clock(limits: ReplayLimits, clock: Arc<dyn Clock>) -> Self {
        Self {
            limits,
            clock,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The window saved at `path`, on the system's clocks; empty when there is no file there.
    ///
    /// # Errors
    /// [`ReplayStateError::Read`] when the file exists but cannot be read,
    /// [`ReplayStateError::Corrupt`] when it does not parse as a saved window.
    pub fn load(path: &Path, limits: ReplayLimits) -> Result<Self, ReplayStateError> {
        Self::load_with_clock(path, limits, Arc::new(SystemClock))
    }

    /// [`load`](Self::load) on `clock`.
    ///
    /// # Errors
    /// As for [`load`](Self::load).
    pub fn load_with_clock(
        path: &Path,
        limits: ReplayLimits,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ReplayStateError> {
        let window = Self::with_clock(limits, clock);
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(window),
            Err(source) => {
                return Err(ReplayStateError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let corrupt = |reason: String| ReplayStateError::Corrupt {
            path: path.to_owned(),
            reason,
        };
        let state: StateFile =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        if state.format != FORMAT || state.version != VERSION {
            return Err(corrupt(format!(
                "format {:?} version {}, expected {FORMAT:?} version {VERSION}",
                state.format, state.version
            )));
        }
        // Time since the save; a wall clock set back counts as none (see the module docs).
        let saved_at = UNIX_EPOCH + Duration::from_millis(state.saved_at_unix_ms);
        let since_save = window
            .clock
            .wall()
            .duration_since(saved_at)
            .unwrap_or(Duration::ZERO);
        let mut aged = Vec::with_capacity(state.entries.len());
        let mut seen = std::collections::HashSet::with_capacity(state.entries.len());
        for entry in &state.entries {
            let hash = CanonicalHash::from_hex(&entry.hash)
                .ok_or_else(|| corrupt(format!("{:?} is not a SHA-256 hex digest", entry.hash)))?;
            if !seen.insert(hash) {
                return Err(corrupt(format!("{hash} appears twice")));
            }
            let age = Duration::from_millis(entry.age_ms).saturating_add(since_save);
            if age <= limits.max_age {
                aged.push((age, hash));
            }
        }
        // Oldest first, so recording order stays age order.
        aged.sort_by_key(|e| std::cmp::Reverse(e.0));
        let now = window.clock.monotonic();
        {
            let mut inner = window.lock();
            for (age, hash) in aged {
                // An age the monotonic clock cannot go back to (shortly after boot) is taken
                // as now: the entry lives at most `max_age` more, not forever.
                inner.insert(hash, now.checked_sub(age).unwrap_or(now));
            }
            while inner.entries.len() > limits.max_entries {
                inner.pop_oldest();
            }
        }
        Ok(window)
    }

    /// The bounds this window keeps.
    #[must_use]
    pub fn limits(&self) -> ReplayLimits {
        self.limits
    }

    /// Whether `hash` is in the window now. Only looks: nothing is recorded, refreshed or
    /// evicted.
    #[must_use]
    pub fn check(&self, hash: &CanonicalHash) -> bool {
        let now = self.clock.monotonic();
        let inner = self.lock();
        inner
            .entries
            .get(hash)
            .is_some_and(|e| now.saturating_duration_since(e.at) <= self.limits.max_age)
    }

    /// How long ago `hash` was last recorded, when it is in the window now. Only looks.
    #[must_use]
    pub fn age(&self, hash: &CanonicalHash) -> Option<Duration> {
        let now = self.clock.monotonic();
        let inner = self.lock();
        let age = now.saturating_duration_since(inner.entries.get(hash)?.at);
        (age <= self.limits.max_age).then_some(age)
    }

    /// Record `hash` as run now, and say how long ago it was last recorded when it was
    /// still in the window (a replay): the look-up and the record under one lock, so of two
    /// identical calls at once one is the replay.
    pub fn record_seen(&self, hash: CanonicalHash) -> Option<Duration> {
        let now = self.clock.monotonic();
        let mut inner = self.lock();
        let seen = inner
            .entries
            .get(&hash)
            .map(|e| now.saturating_duration_since(e.at))
            .filter(|age| *age <= self.limits.max_age);
        self.record_locked(&mut inner, hash);
        seen
    }

    /// Record `hash` as run now; `true` when it was already in the window (a replay).
    pub fn record(&self, hash: CanonicalHash) -> bool {
        let mut inner = self.lock();
        self.record_locked(&mut inner, hash)
    }

    /// [`record`](Self::record), then [`save`](Self::save) to `path` under the same lock, so
    /// the file never lags behind an answer already given.
    ///
    /// # Errors
    /// [`ReplayStateError::Write`] when the state cannot be saved (the hash is recorded in
    /// memory all the same).
    pub fn record_and_save(
        &self,
        hash: CanonicalHash,
        path: &Path,
    ) -> Result<bool, ReplayStateError> {
        let mut inner = self.lock();
        let replay = self.record_locked(&mut inner, hash);
        self.save_locked(&mut inner, path)?;
        Ok(replay)
    }

    /// How many hashes the window holds now (expired ones not counted).
    #[must_use]
    pub fn len(&self) -> usize {
        let now = self.clock.monotonic();
        let inner = self.lock();
        inner
            .entries
            .values()
            .filter(|e| now.saturating_duration_since(e.at) <= self.limits.max_age)
            .count()
    }

    /// Whether the window holds no live hash.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Write the window to `path` atomically (see the module documentation).
    ///
    /// # Errors
    /// [`ReplayStateError::Write`] when the temporary file cannot be written or synced, or
    /// cannot replace `path`.
    pub fn save(&self, path: &Path) -> Result<(), ReplayStateError> {
        let mut inner = self.lock();
        self.save_locked(&mut inner, path)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The map stays consistent at every step, so a panic elsewhere leaves it usable.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn expire(&self, inner: &mut Inner, now: Instant) {
        while inner
            .oldest_at()
            .is_some_and(|at| now.saturating_duration_since(at) > self.limits.max_age)
        {
            inner.pop_oldest();
        }
    }

    fn record_locked(&self, inner: &mut Inner, hash: CanonicalHash) -> bool {
        let now = self.clock.monotonic();
        self.expire(inner, now);
        let replay = inner.insert(hash, now);
        while inner.entries.len() > self.limits.max_entries {
            inner.pop_oldest();
        }
        replay
    }

    fn save_locked(&self, inner: &mut Inner, path: &Path) -> Result<(), ReplayStateError> {
        let now = self.clock.monotonic();
        self.expire(inner, now);
        let entries = inner
            .order
            .values()
            .filter_map(|hash| {
                let entry = inner.entries.get(hash)?;
                let age = now.saturating_duration_since(entry.at).as_millis();
                Some(StateEntry {
                    hash: hash.to_hex(),
                    age_ms: u64::try_from(age).unwrap_or(u64::MAX),
                })
            })
            .collect();
        let saved_at = self
            .clock
            .wall()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_millis();
        let state = StateFile {
            format: FORMAT.to_owned(),
            version: VERSION,
            saved_at_unix_ms: u64::try_from(saved_at).unwrap_or(u64::MAX),
            entries,
        };
        let bytes = serde_json::to_vec(&state).map_err(|e| ReplayStateError::Write {
            path: path.to_owned(),
            source: e.into(),
        })?;
        write_atomically(path, &bytes).map_err(|source| ReplayStateError::Write {
            path: path.to_owned(),
            source,
        })
    }
}

/// Write `bytes` to `path` through a temporary file in the same folder: write, `fsync`,
/// `rename`, `fsync` the folder.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = folder.join(tmp_name);
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        File::open(folder)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::canon::CanonicalCommand;

    /// A clock the test moves: monotonic time from a fixed start, wall time set apart.
    struct TestClock {
        start: Instant,
        state: Mutex<(Duration, SystemTime)>,
    }

    impl TestClock {
        fn new() -> Arc<Self> {
            Arc::new(Self {
                start: Instant::now(),
                state: Mutex::new((
                    Duration::ZERO,
                    UNIX_EPOCH + Duration::from_secs(1_700_000_000),
                )),
            })
        }

        /// Both clocks move on by `d`.
        fn advance(&self, d: Duration) {
            let mut s = self.state.lock().unwrap();
            s.0 += d;
            s.1 += d;
        }

        fn set_wall(&self, wall: SystemTime) {
            self.state.lock().unwrap().1 = wall;
        }

        fn wall_now(&self) -> SystemTime {
            self.state.lock().unwrap().1
        }
    }

    impl Clock for TestClock {
        fn monotonic(&self) -> Instant {
            self.start + self.state.lock().unwrap().0
        }

        fn wall(&self) -> SystemTime {
            self.state.lock().unwrap().1
        }
    }

    fn h(n: u32) -> CanonicalHash {
        CanonicalCommand::new("/bin/echo", [n.to_string()], "/", [("A", "B")]).hash()
    }

    const MIN: Duration = Duration::from_secs(60);

    fn limits(max_entries: usize) -> ReplayLimits {
        ReplayLimits {
            max_entries,
            max_age: 60 * MIN,
        }
    }

    /// A test clock and a window of `max_entries` on it.
    fn window(max_entries: usize) -> (Arc<TestClock>, ReplayWindow) {
        let clock = TestClock::new();
        let w = ReplayWindow::with_clock(limits(max_entries), clock.clone());
        (clock, w)
    }

    /// A temporary folder, the state file's path in it, a test clock and a 10-entry window
    /// on it.
    fn fixture() -> (tempfile::TempDir, PathBuf, Arc<TestClock>, ReplayWindow) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("replay.json");
        let (clock, w) = window(10);
        (dir, path, clock, w)
    }

    /// A restart: a new monotonic clock, the wall clock at `wall`, the window loaded from
    /// `path`.
    fn restart(
        path: &Path,
        wall: SystemTime,
        max_entries: usize,
    ) -> (Arc<TestClock>, ReplayWindow) {
        let clock = TestClock::new();
        clock.set_wall(wall);
        let w = ReplayWindow::load_with_clock(path, limits(max_entries), clock.clone()).unwrap();
        (clock, w)
    }

    #[test]
    fn a_second_record_within_the_window_is_a_replay_and_check_only_looks() {
        let (clock, w) = window(10);
        assert!(!w.check(&h(1)));
        assert!(!w.check(&h(1)), "check recorded nothing");
        assert!(w.is_empty());
        assert!(!w.record(h(1)));
        assert!(w.check(&h(1)));
        clock.advance(59 * MIN);
        assert!(w.record(h(1)));
        assert!(!w.check(&h(2)));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn not_a_replay_once_older_than_the_window() {
        let (clock, w) = window(10);
        w.record(h(1));
        clock.advance(60 * MIN);
        assert!(w.check(&h(1)), "exactly the window's age still counts");
        clock.advance(Duration::from_millis(1));
        assert!(!w.check(&h(1)));
        assert!(!w.record(h(1)));
    }

    #[test]
    fn a_replay_refreshes_the_entry() {
        let (clock, w) = window(10);
        w.record(h(1));
        clock.advance(40 * MIN);
        assert!(w.record(h(1)));
        clock.advance(40 * MIN);
        assert!(w.check(&h(1)), "aged 40 minutes since its last run");
    }

    #[test]
    fn the_size_bound_evicts_the_least_recently_recorded() {
        let (clock, w) = window(3);
        for n in 1..=3 {
            w.record(h(n));
            clock.advance(Duration::from_secs(1));
        }
        assert!(w.record(h(1)), "1 is now the newest");
        assert!(!w.record(h(4)), "evicts 2");
        assert_eq!(w.len(), 3);
        assert!(!w.check(&h(2)));
        assert!(w.check(&h(1)) && w.check(&h(3)) && w.check(&h(4)));
        assert!(!w.record(h(5)), "evicts 3");
        assert!(!w.check(&h(3)));
    }

    #[test]
    fn zero_entries_remembers_nothing() {
        let w = ReplayWindow::new(limits(0));
        assert!(!w.record(h(1)));
        assert!(!w.record(h(1)));
    }

    #[test]
    fn flagged_again_after_a_save_and_a_load() {
        let (dir, path, clock, w) = fixture();
        assert!(!w.record_and_save(h(1), &path).unwrap());
        clock.advance(10 * MIN);
        w.record_and_save(h(2), &path).unwrap();
        drop(w);

        // A restart, the wall clock 20 minutes on.
        let (restarted, w) = restart(&path, clock.wall_now() + 20 * MIN, 10);
        assert!(w.check(&h(1)) && w.check(&h(2)));
        assert!(w.record(h(1)), "a replay across the restart");
        assert!(!w.record(h(3)));
        // h(2) was 20 + 0 minutes old at the restart: gone 40 minutes later.
        restarted.advance(40 * MIN + Duration::from_secs(1));
        assert!(!w.check(&h(2)));
        assert!(w.check(&h(1)), "refreshed after the restart");
        assert!(
            !std::fs::read_dir(dir.path()).unwrap().any(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".tmp")),
            "no temporary file left"
        );
    }

    #[test]
    fn entries_older_than_the_window_at_load_are_dropped() {
        let (_dir, path, clock, w) = fixture();
        w.record(h(1));
        clock.advance(30 * MIN);
        w.record(h(2));
        w.save(&path).unwrap();
        let (_, w) = restart(&path, clock.wall_now() + 31 * MIN, 10);
        assert!(!w.check(&h(1)), "30 + 31 minutes old");
        assert!(w.check(&h(2)));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn a_wall_clock_set_back_does_not_keep_an_entry_alive() {
        let (_dir, path, clock, w) = fixture();
        w.record(h(1));
        clock.advance(10 * MIN);
        w.save(&path).unwrap();
        let year = Duration::from_secs(365 * 24 * 3600);
        let (back, w) = restart(&path, clock.wall_now() - year, 10);
        assert!(w.check(&h(1)));
        back.advance(50 * MIN + Duration::from_secs(1));
        assert!(
            !w.check(&h(1)),
            "10 minutes before the save, 50 after the load"
        );
    }

    #[test]
    fn a_smaller_window_at_load_keeps_the_youngest() {
        let (_dir, path, clock, w) = fixture();
        for n in 1..=5 {
            w.record(h(n));
            clock.advance(Duration::from_secs(1));
        }
        w.save(&path).unwrap();
        let (_, w) = restart(&path, clock.wall_now(), 2);
        assert_eq!(w.len(), 2);
        assert!(w.check(&h(4)) && w.check(&h(5)) && !w.check(&h(3)));
    }

    #[test]
    fn a_missing_file_is_an_empty_window() {
        let dir = tempfile::tempdir().unwrap();
        let w = ReplayWindow::load(&dir.path().join("none.json"), limits(10)).unwrap();
        assert!(w.is_empty());
    }

    #[test]
    fn a_corrupt_or_unreadable_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("replay.json");
        let good = ReplayWindow::new(limits(10));
        good.record(h(1));
        good.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let bad_hash = text.replace(&h(1).to_hex(), "not-a-hash");
        let doubled = text.replace(
            "}]",
            &format!(r#"}},{{"hash":"{}","age_ms":0}}]"#, h(1).to_hex()),
        );
        let cases = [
            ("truncated", text.get(..text.len() / 2).unwrap().to_owned()),
            ("not json", "garbage".to_owned()),
            ("empty", String::new()),
            ("bad hash", bad_hash),
            ("duplicate", doubled),
            (
                "other version",
                text.replace(r#""version":1"#, r#""version":9"#),
            ),
            ("unknown field", text.replacen('{', r#"{"extra":1,"#, 1)),
        ];
        for (what, content) in cases {
            std::fs::write(&path, &content).unwrap();
            let err = ReplayWindow::load(&path, limits(10)).unwrap_err();
            assert!(
                matches!(err, ReplayStateError::Corrupt { .. }),
                "{what}: {err}"
            );
            assert!(err.to_string().contains("replay.json"), "{what}: {err}");
        }
        // A folder where the file should be cannot be read.
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let err = ReplayWindow::load(&folder, limits(10)).unwrap_err();
        assert!(matches!(err, ReplayStateError::Read { .. }), "{err}");
    }

    #[test]
    fn a_save_that_cannot_write_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let w = ReplayWindow::new(limits(10));
        let err = w
            .record_and_save(h(1), &dir.path().join("missing/replay.json"))
            .unwrap_err();
        assert!(matches!(err, ReplayStateError::Write { .. }), "{err}");
        assert!(w.check(&h(1)), "recorded in memory all the same");
    }

    #[test]
    fn one_window_is_shared_across_threads() {
        let w = Arc::new(ReplayWindow::new(limits(1000)));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let w = Arc::clone(&w);
                std::thread::spawn(move || (0..100).filter(|n| w.record(h(n + t * 50))).count())
            })
            .collect();
        let replays: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        // 400 records of 250 distinct hashes: exactly 150 were replays.
        assert_eq!(replays, 150);
        assert_eq!(w.len(), 250);
    }
}
