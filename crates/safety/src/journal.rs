//! Write-ahead undo journal of the files server: what makes a move survive a crash and
//! an undo possible.
//!
//! Format: an append-only JSON-lines file outside the workspace (start-up refuses a
//! journal inside it, see [`crate::config`]). The first line may be a `snapshot` of the
//! undo and redo stacks; every later line is an event:
//!
//! - `begin` — written and fsync'ed *before the first rename* of a step. A step is one
//!   direction (`do`, `undo`, `redo`) of one action (a `move_file` or an applied plan). A
//!   `do` begin carries the whole action: every move with the moved file's identity.
//! - `end` — written and fsync'ed after the step, saying which moves took effect
//!   (`complete`, or the list of indices that did).
//!
//! One begin and one end per step, whatever its size: a plan of 10 000 moves costs two
//! fsyncs, not 10 000.
//!
//! Recovery (`recover`): a `begin` without `end` is a step a crash interrupted. Each of
//! its files is looked for (by device and inode, never following a link) at the step's
//! target place: found there, the move happened; otherwise it did not. The truth is
//! written as the step's `end`, so every file is at exactly one of its two places and the
//! journal says which; the stacks then hold only moves that really happened, and undo and
//! redo go on working.
//!
//! Concurrency: every step runs under an exclusive `flock` on `<journal>.lock`, and the
//! journal is re-read under that lock whenever another process changed it, so two
//! servers on one workspace serialise their changes and never interleave records.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustix::fs::{FlockOperation, Mode, OFlags};
use serde::{Deserialize, Serialize};

use crate::jail::workspace::{FileIdentity, JailError, Workspace};

/// Journal size past which a step's end is followed by a compaction.
const COMPACT_AFTER_BYTES: u64 = 16 * 1024 * 1024;

/// The journal could not be read, written or locked.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// An I/O failure, with the path.
    #[error("journal '{path}': {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// A complete line that does not parse, or events that contradict the stacks.
    #[error("journal '{path}' is corrupt at line {line}: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A file of an interrupted step could not be looked for.
    #[error("recovering the journal: {0}")]
    Recovery(#[from] JailError),
}

/// One move of an action: workspace-relative names as stored, and the file's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalMove {
    /// Where the file was before the action.
    pub src: String,
    /// Where the action put it.
    pub dest: String,
    /// The file's identity (kind, device, inode, size, mtime); a move does not change it.
    pub identity: FileIdentity,
}

/// One undoable action: a `move_file` or an applied plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// Unique, increasing.
    pub id: u64,
    /// The tool that did it (`move_file`, `apply_plan`).
    pub tool: String,
    /// Its moves, in the order they were made.
    pub moves: Vec<JournalMove>,
}

impl Action {
    fn subset(&self, keep: impl Fn(usize) -> bool) -> Action {
        Action {
            id: self.id,
            tool: self.tool.clone(),
            moves: self
                .moves
                .iter()
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(_, m)| m.clone())
                .collect(),
        }
    }
}

/// The direction of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// New work: files go from `src` to `dest`; clears the redo stack.
    Do,
    /// Files go back from `dest` to `src`.
    Undo,
    /// Files go again from `src` to `dest`.
    Redo,
}

impl Direction {
    /// `(from, to)` of a move in this direction.
    pub fn places(self, m: &JournalMove) -> (&str, &str) {
        match self {
            Direction::Do | Direction::Redo => (&m.src, &m.dest),
            Direction::Undo => (&m.dest, &m.src),
        }
    }
}

/// Which moves of a step took effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Done {
    /// All of them.
    Complete,
    /// Only these indices.
    Only(Vec<usize>),
}

impl Done {
    fn contains(&self, i: usize) -> bool {
        match self {
            Done::Complete => true,
            Done::Only(v) => v.contains(&i),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Record {
    Snapshot {
        next_id: u64,
        undo: Vec<Action>,
        redo: Vec<Action>,
    },
    Begin {
        op: Direction,
        action_id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<Action>,
    },
    End {
        op: Direction,
        action_id: u64,
        done: Done,
        #[serde(default)]
        recovered: bool,
    },
}

/// The undo and redo stacks (last element = top).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    /// The next action id.
    pub next_id: u64,
    /// Applied actions; every file of each is at its `dest`.
    pub undo: Vec<Action>,
    /// Undone actions; every file of each is back at its `src`.
    pub redo: Vec<Action>,
}

/// A step that was begun and not ended: what a crash interrupted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted {
    /// Its direction.
    pub op: Direction,
    /// The action (for undo and redo: the whole action as it stood on its stack).
    pub action: Action,
}

impl History {
    fn apply_end(&mut self, op: Direction, action: &Action, done: &Done) {
        let moved = action.subset(|i| done.contains(i));
        let rest = action.subset(|i| !done.contains(i));
        match op {
            Direction::Do => {
                if !moved.moves.is_empty() {
                    self.undo.push(moved);
                    self.redo.clear();
                }
            }
            Direction::Undo => {
                self.undo.pop();
                if !rest.moves.is_empty() {
                    self.undo.push(rest);
                }
                if !moved.moves.is_empty() {
                    self.redo.push(moved);
                }
            }
            Direction::Redo => {
                self.redo.pop();
                if !rest.moves.is_empty() {
                    self.redo.push(rest);
                }
                if !moved.moves.is_empty() {
                    self.undo.push(moved);
                }
            }
        }
    }

    /// The action a step in `op` would act on, if any.
    fn target(&self, op: Direction, action_id: u64) -> Option<&Action> {
        let stack = match op {
            Direction::Do => return None,
            Direction::Undo => &self.undo,
            Direction::Redo => &self.redo,
        };
        stack.last().filter(|a| a.id == action_id)
    }
}

#[derive(Debug, Default)]
struct Cache {
    /// (device, inode, length) of the journal when `history` was read.
    stamp: Option<(u64, u64, u64)>,
    history: History,
    interrupted: Option<Interrupted>,
}

/// The journal of one workspace.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    lock_path: PathBuf,
    cache: Mutex<Cache>,
}

/// The journal, locked against every other process (and thread) for one step.
#[derive(Debug)]
pub struct Locked<'a> {
    journal: &'a Journal,
    _lock: OwnedFd,
    cache: std::sync::MutexGuard<'a, Cache>,
}

impl Journal {
    /// Use the journal at `path` (created on first write); its folder must exist.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let parent = path.parent().unwrap_or(Path::new("/"));
        if !parent.is_dir() {
            return Err(JournalError::Io {
                path: path.to_path_buf(),
                message: format!("its folder '{}' does not exist", parent.display()),
            });
        }
        let mut lock_name = path
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        lock_name.push(".lock");
        Ok(Journal {
            path: path.to_path_buf(),
            lock_path: parent.join(lock_name),
            cache: Mutex::new(Cache::default()),
        })
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, what: &str, e: impl std::fmt::Display) -> JournalError {
        JournalError::Io {
            path: self.path.clone(),
            message: format!("{what}: {e}"),
        }
    }

    /// Take the exclusive lock (waiting for another process to finish its step) and bring
    /// the stacks up to date with the file.
    pub fn lock(&self) -> Result<Locked<'_>, JournalError> {
        // The in-process mutex first, so two threads never both hold the file lock's fd.
        let cache = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let fd = rustix::fs::open(
            &self.lock_path,
            OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| self.io("cannot open the lock file", e))?;
        rustix::fs::flock(&fd, FlockOperation::LockExclusive)
            .map_err(|e| self.io("cannot take the lock", e))?;
        let mut locked = Locked {
            journal: self,
            _lock: fd,
            cache,
        };
        locked.refresh()?;
        Ok(locked)
    }
}

impl Locked<'_> {
    /// The current stacks.
    pub fn history(&self) -> &History {
        &self.cache.history
    }

    /// A step a crash interrupted, until `recover` ends it.
    pub fn interrupted(&self) -> Option<&Interrupted> {
        self.cache.interrupted.as_ref()
    }

    /// A fresh action id.
    pub(crate) fn next_action_id(&self) -> u64 {
        self.cache.history.next_id
    }

    fn refresh(&mut self) -> Result<(), JournalError> {
        let path = &self.journal.path;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.cache.stamp = None;
                self.cache.history = History::default();
                self.cache.interrupted = None;
                return Ok(());
            }
            Err(e) => return Err(self.journal.io("cannot inspect", e)),
        };
        let stamp = (meta.dev(), meta.ino(), meta.len());
        if self.cache.stamp == Some(stamp) {
            return Ok(());
        }
        let (history, interrupted, good_len) = self.read_all()?;
        if good_len < meta.len() {
            // A torn last line (a crash mid-append): cut it so the next append starts on a
            // fresh line instead of gluing onto garbage.
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| self.journal.io("cannot open to repair", e))?;
            file.set_len(good_len)
                .map_err(|e| self.journal.io("cannot cut a torn line", e))?;
            file.sync_all()
                .map_err(|e| self.journal.io("cannot sync", e))?;
        }
        self.cache.history = history;
        self.cache.interrupted = interrupted;
        self.cache.stamp = Some((meta.dev(), meta.ino(), good_len));
        Ok(())
    }

    fn read_all(&self) -> Result<(History, Option<Interrupted>, u64), JournalError> {
        let path = &self.journal.path;
        let file = File::open(path).map_err(|e| self.journal.io("cannot read", e))?;
        let mut reader = BufReader::new(file);
        let mut history = History::default();
        let mut open_step: Option<Interrupted> = None;
        let mut good_len: u64 = 0;
        let mut line_no = 0usize;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|e| self.journal.io("cannot read", e))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let complete = buf.last() == Some(&b'\n');
            let record: Record = match serde_json::from_slice(&buf) {
                Ok(r) if complete => r,
                // Only the last line can be torn by a crash; it is dropped (its step's
                // `begin` was never durable, so no file was moved under it).
                _ if !complete => break,
                Ok(_) => break,
                Err(e) => {
                    return Err(JournalError::Corrupt {
                        path: path.clone(),
                        line: line_no,
                        message: e.to_string(),
                    });
                }
            };
            let corrupt = |message: String| JournalError::Corrupt {
                path: path.clone(),
                line: line_no,
                message,
            };
            match record {
                Record::Snapshot {
                    next_id,
                    undo,
                    redo,
                } => {
                    history = History {
                        next_id,
                        undo,
                        redo,
                    };
                    open_step = None;
                }
                Record::Begin {
                    op,
                    action_id,
                    action,
                } => {
                    if let Some(open) = &open_step {
                        return Err(corrupt(format!(
                            "step {} begun while step {} was still open",
                            action_id, open.action.id
                        )));
                    }
                    let action = match (op, action) {
                        (Direction::Do, Some(a)) => a,
                        (Direction::Do, None) => {
                            return Err(corrupt("a do step without its action".into()));
                        }
                        (_, _) => history.target(op, action_id).cloned().ok_or_else(|| {
                            corrupt(format!("action {action_id} is not on top of its stack"))
                        })?,
                    };
                    history.next_id = history.next_id.max(action.id.saturating_add(1));
                    open_step = Some(Interrupted { op, action });
                }
                Record::End {
                    op,
                    action_id,
                    done,
                    ..
                } => {
                    let Some(open) = open_step.take() else {
                        return Err(corrupt(format!(
                            "end of step {action_id} that was never begun"
                        )));
                    };
                    if open.op != op || open.action.id != action_id {
                        return Err(corrupt(format!(
                            "end of step {action_id} does not match its begin"
                        )));
                    }
                    history.apply_end(op, &open.action, &done);
                }
            }
            good_len += n as u64;
        }
        Ok((history, open_step, good_len))
    }

    fn append(&mut self, record: &Record) -> Result<(), JournalError> {
        let mut line =
            serde_json::to_vec(record).map_err(|e| self.journal.io("cannot encode", e))?;
        line.push(b'\n');
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.journal.path)
            .map_err(|e| self.journal.io("cannot open for writing", e))?;
        file.write_all(&line)
            .map_err(|e| self.journal.io("cannot write", e))?;
        // Durable before anything moves (begin) and before the step is reported (end).
        file.sync_data()
            .map_err(|e| self.journal.io("cannot sync", e))?;
        let meta = file
            .metadata()
            .map_err(|e| self.journal.io("cannot inspect", e))?;
        self.cache.stamp = Some((meta.dev(), meta.ino(), meta.len()));
        Ok(())
    }

    /// Write (and fsync) the intent of a step. For `Do`, `action` is the new action; for
    /// undo and redo it must be the top of its stack. Nothing may move before this returns.
    pub fn begin(&mut self, op: Direction, action: &Action) -> Result<(), JournalError> {
        let record = Record::Begin {
            op,
            action_id: action.id,
            action: (op == Direction::Do).then(|| action.clone()),
        };
        self.append(&record)?;
        self.cache.history.next_id = self.cache.history.next_id.max(action.id.saturating_add(1));
        self.cache.interrupted = Some(Interrupted {
            op,
            action: action.clone(),
        });
        Ok(())
    }

    /// Write (and fsync) the completion of the open step and update the stacks.
    pub fn end(&mut self, done: Done) -> Result<(), JournalError> {
        self.end_step(done, false)
    }

    fn end_step(&mut self, done: Done, recovered: bool) -> Result<(), JournalError> {
        let Some(open) = self.cache.interrupted.take() else {
            return Ok(());
        };
        let record = Record::End {
            op: open.op,
            action_id: open.action.id,
            done: done.clone(),
            recovered,
        };
        if let Err(e) = self.append(&record) {
            self.cache.interrupted = Some(open);
            return Err(e);
        }
        self.cache.history.apply_end(open.op, &open.action, &done);
        if self
            .cache
            .stamp
            .is_some_and(|(_, _, len)| len > COMPACT_AFTER_BYTES)
        {
            self.compact()?;
        }
        Ok(())
    }

    /// Rewrite the journal as one snapshot line: temp file, fsync, rename over the
    /// journal, fsync the folder. A crash at any point leaves the old or the new journal.
    pub(crate) fn compact(&mut self) -> Result<(), JournalError> {
        if self.cache.interrupted.is_some() {
            return Ok(());
        }
        let h = &self.cache.history;
        let record = Record::Snapshot {
            next_id: h.next_id,
            undo: h.undo.clone(),
            redo: h.redo.clone(),
        };
        let mut line =
            serde_json::to_vec(&record).map_err(|e| self.journal.io("cannot encode", e))?;
        line.push(b'\n');
        let mut tmp_name = self.journal.path.as_os_str().to_os_string();
        tmp_name.push(".tmp");
        let tmp = PathBuf::from(tmp_name);
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| self.journal.io("cannot write the compacted copy", e))?;
        file.write_all(&line)
            .map_err(|e| self.journal.io("cannot write the compacted copy", e))?;
        file.sync_all()
            .map_err(|e| self.journal.io("cannot sync the compacted copy", e))?;
        std::fs::rename(&tmp, &self.journal.path)
            .map_err(|e| self.journal.io("cannot replace with the compacted copy", e))?;
        if let Some(parent) = self.journal.path.parent() {
            File::open(parent)
                .and_then(|d| d.sync_all())
                .map_err(|e| self.journal.io("cannot sync its folder", e))?;
        }
        let meta = file
            .metadata()
            .map_err(|e| self.journal.io("cannot inspect", e))?;
        self.cache.stamp = Some((meta.dev(), meta.ino(), meta.len()));
        Ok(())
    }
}

/// What recovery found for an interrupted step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recovered {
    /// The step's direction.
    pub op: Direction,
    /// The action's id.
    pub action_id: u64,
    /// Moves that had happened (the file is at its target place).
    pub moved: usize,
    /// Moves that had not (the file is still at its starting place).
    pub not_moved: usize,
    /// Files found at neither place (moved by someone else meanwhile).
    pub missing: Vec<String>,
}

/// End an interrupted step with the truth: each file is looked for at its target place
/// (same device and inode, never following a link); found there, the move happened.
pub(crate) fn recover(
    locked: &mut Locked<'_>,
    workspace: &Workspace,
) -> Result<Option<Recovered>, JournalError> {
    let Some(step) = locked.interrupted().cloned() else {
        return Ok(None);
    };
    let mut done = Vec::new();
    let mut missing = Vec::new();
    for (i, m) in step.action.moves.iter().enumerate() {
        let (from, to) = step.op.places(m);
        let at = |name: &str| -> Result<bool, JournalError> {
            let path = workspace.contain(name)?;
            Ok(workspace.stat_path(&path)?.is_some_and(|id| {
                id.kind == m.identity.kind && id.dev == m.identity.dev && id.ino == m.identity.ino
            }))
        };
        if at(to)? {
            done.push(i);
        } else if !at(from)? {
            missing.push(from.to_string());
        }
    }
    let moved = done.len();
    let total = step.action.moves.len();
    let done = if moved == total {
        Done::Complete
    } else {
        Done::Only(done)
    };
    locked.end_step(done, true)?;
    Ok(Some(Recovered {
        op: step.op,
        action_id: step.action.id,
        moved,
        not_moved: total - moved - missing.len(),
        missing,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::workspace::EntryKind;

    fn mv(src: &str, dest: &str, ino: u64) -> JournalMove {
        JournalMove {
            src: src.into(),
            dest: dest.into(),
            identity: FileIdentity {
                kind: EntryKind::File,
                dev: 1,
                ino,
                size: 1,
                mtime_s: 0,
                mtime_ns: 0,
            },
        }
    }

    #[test]
    fn replay_of_do_undo_redo_gives_the_same_stacks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.json");
        let journal = Journal::open(&path).unwrap();
        let a = Action {
            id: 0,
            tool: "apply_plan".into(),
            moves: vec![mv("a", "D/a", 1), mv("b", "D/b", 2)],
        };
        {
            let mut l = journal.lock().unwrap();
            l.begin(Direction::Do, &a).unwrap();
            l.end(Done::Complete).unwrap();
            l.begin(Direction::Undo, &a).unwrap();
            l.end(Done::Only(vec![1])).unwrap();
            assert_eq!(l.history().undo[0].moves, vec![mv("a", "D/a", 1)]);
            assert_eq!(l.history().redo[0].moves, vec![mv("b", "D/b", 2)]);
        }
        let again = Journal::open(&path).unwrap();
        let l = again.lock().unwrap();
        assert_eq!(l.history().undo[0].moves, vec![mv("a", "D/a", 1)]);
        assert_eq!(l.history().redo[0].moves, vec![mv("b", "D/b", 2)]);
        assert_eq!(l.history().next_id, 1);
    }

    #[test]
    fn torn_last_line_is_cut_and_an_open_begin_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.json");
        let journal = Journal::open(&path).unwrap();
        let a = Action {
            id: 0,
            tool: "move_file".into(),
            moves: vec![mv("a", "b", 1)],
        };
        {
            let mut l = journal.lock().unwrap();
            l.begin(Direction::Do, &a).unwrap();
        }
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"t\":\"end\",\"op\":").unwrap();
        let again = Journal::open(&path).unwrap();
        let l = again.lock().unwrap();
        assert_eq!(l.interrupted().map(|s| s.action.id), Some(0));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'));
    }
}
