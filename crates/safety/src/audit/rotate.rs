//! Rotation (`audit_rotate_bytes`): a full file is hard-linked to `<log>.<n>` and a new
//! file, starting with a record chained to the old one's end record, is renamed over the
//! log's path, so the path names a whole, chained file at every moment and nothing is
//! deleted. Each step can be repeated after a crash.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

use serde_json::{Map, Value};

use super::chain::{ChainState, first_record};
use super::file::{parent_dir, same_file};
use super::record::{Rotation, chained_line, now};
use super::{AuditError, AuditLog};

impl AuditLog {
    /// The log's own file name, when it can rotate (names are built from it as text).
    fn base_name(&self) -> std::io::Result<&str> {
        self.path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| std::io::Error::other("the log's file name is not UTF-8"))
    }

    /// `<log name>.<n>`: the only names this log rotates to (an end record naming anything
    /// else, say `../x`, was not written by it).
    pub(super) fn is_rotated_name(&self, name: &str) -> bool {
        self.base_name()
            .is_ok_and(|base| rotated_number(base, name).is_some())
    }

    /// The name the file (starting the chain, or continuing `<log>.<k>`) gets when it
    /// rotates: `<log>.<k + 1>` (`<log>.1` for the first), or the next one not taken by an
    /// unrelated file. The chain names its files; other files in the folder (backups,
    /// `<log>.20261130`) play no part.
    pub(super) fn next_rotated_name(&self, file: &File) -> std::io::Result<String> {
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
    pub(super) fn switch(&self, state: &mut ChainState, name: &str) -> Result<(), AuditError> {
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
        let ts = now();
        let hash = chained_line(&start, seq, &ts, &state.last_hash, &mut line);
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
            .map_err(io)?;
        // In the chain now: syslog gets it too, so the central copy chains across files.
        self.ship(state, &line, seq, &hash, &ts, false);
        Ok(())
    }
}

/// `n` when `name` is `<base>.<n>` (decimal digits only).
pub(super) fn rotated_number(base: &str, name: &str) -> Option<u64> {
    let digits = name.strip_prefix(base)?.strip_prefix('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
