//! What a launcher tells the server: one JSON line per step (what was applied, or why
//! not), collected and written in one go, and the refusal that ends a call which must not
//! run.

use std::io::Write;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

use super::REFUSED_EXIT;
use crate::exec::filesystem::LandlockReport;
use crate::exec::view::{self, IdMapError, ViewError, ViewReport};

/// One line of the report the launcher writes to the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LaunchEvent {
    /// Rlimits set.
    Prepared {
        /// The rlimits set, e.g. `NOFILE=256`.
        rlimits: Vec<String>,
        /// What failed.
        problems: Vec<String>,
    },
    /// The call's cgroups joined (or why not).
    CgroupJoin {
        /// Why the v2 folder (tree kill) could not be joined.
        v2_failed: Option<String>,
        /// v1 folders that could not be joined.
        v1_failed: Vec<String>,
    },
    /// Namespaces created (or why not).
    Namespaces {
        /// `user`, `pid`, `net`.
        active: Vec<String>,
        /// Why they could not be made.
        error: Option<String>,
    },
    /// The read-only view of the file system (or why it could not be made).
    View {
        /// What it holds.
        report: Option<ViewReport>,
        /// Why it could not be made.
        error: Option<String>,
    },
    /// The identity the command runs as.
    Identity {
        /// `uid:gid`.
        user: String,
        /// Why the switch failed.
        error: Option<String>,
    },
    /// Capabilities after the launcher dropped them (or why it could not).
    Capabilities {
        /// `all dropped` (root: bounding, permitted, effective, inheritable and ambient
        /// sets emptied) or `none held` (not root: nothing to drop).
        held: String,
        /// Why they could not be dropped.
        error: Option<String>,
    },
    /// Landlock and seccomp applied (or why not).
    Confined {
        /// What Landlock did.
        landlock: Option<LandlockReport>,
        /// Why Landlock could not be applied.
        landlock_error: Option<String>,
        /// The seccomp filter installed.
        seccomp: Option<String>,
        /// Why seccomp could not be applied.
        seccomp_error: Option<String>,
    },
    /// The launcher refused to run the command (a required mechanism is missing).
    Refused {
        /// Why.
        reason: String,
    },
    /// `execve` failed.
    ExecFailed {
        /// Why.
        reason: String,
    },
}

/// Writes report lines; silently does nothing when the pipe is gone. Lines are collected
/// and written in one go (each write wakes the server): before `execve`, before the
/// process clones or exits, and when it is dropped. A whole report is far below PIPE_BUF,
/// so it arrives whole.
pub(super) struct Reporter {
    pipe: Option<std::fs::File>,
    pending: Vec<u8>,
}

impl Reporter {
    pub(super) fn new(pipe: Option<std::fs::File>) -> Reporter {
        Reporter {
            pipe,
            pending: Vec::new(),
        }
    }

    pub(super) fn send(&mut self, event: &LaunchEvent) {
        if self.pipe.is_some()
            && let Ok(line) = serde_json::to_vec(event)
        {
            self.pending.extend_from_slice(&line);
            self.pending.push(b'\n');
        }
    }

    /// Write what was collected. Must be called before a clone or fork (the child would
    /// write the same lines again), `execve` and `std::process::exit`.
    pub(super) fn flush(&mut self) {
        if let Some(pipe) = self.pipe.as_mut()
            && !self.pending.is_empty()
        {
            let _ = pipe.write_all(&self.pending);
        }
        self.pending.clear();
    }

    pub(super) fn close(&mut self) {
        self.flush();
        self.pipe = None;
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Why a launcher does not run its call. The text is the reason the server reports (in a
/// [`LaunchEvent::Refused`] line).
#[derive(Debug, thiserror::Error)]
pub(super) enum Refusal {
    /// A launcher started ahead lost its call channel.
    #[error("the launcher's call channel is missing")]
    NoChannel,
    /// The call message could not be read from the channel.
    #[error("the call could not be received: {0}")]
    Receive(std::io::Error),
    /// The call message is not a launch spec.
    #[error("malformed call spec: {0}")]
    MalformedSpec(serde_json::Error),
    /// The call message came without the working folder's handle.
    #[error("the call came without its working folder")]
    NoWorkingFolder,
    /// The working folder could not be entered.
    #[error("cannot enter the working folder: {0}")]
    WorkingFolder(ViewError),
    /// The working folder could not be entered by its handle (no view).
    #[error("cannot enter the working folder: {0}")]
    Chdir(rustix::io::Errno),
    /// The spec names a gate and the message brought none.
    #[error("the call came without its gate")]
    NoGate,
    /// The kernel sandbox is required and a cgroup join failed (each failure named).
    #[error("the kernel sandbox is required but the call's cgroup could not be joined: {0}")]
    CgroupJoin(String),
    /// The kernel sandbox is required and the read-only view could not be made.
    #[error("the kernel sandbox is required but the read-only view could not be made: {0}")]
    NoView(String),
    /// The kernel sandbox is required and the scan for `.git` stopped at its bound.
    #[error(
        "the kernel sandbox is required but the scan for .git folders stopped at {} \
         folders: a repository beyond it would be writable",
        view::SCAN_FOLDERS
    )]
    ScanTruncated,
    /// The command would keep the launcher's identity (root).
    #[error("the command's identity could not be set: {0}")]
    Identity(String),
    /// The kernel sandbox is required and these mechanisms are missing.
    #[error("the kernel sandbox is required but {}", .0.join("; "))]
    Missing(Vec<String>),
    /// The kernel sandbox is required, no PID namespace could be made, and no cgroup kills
    /// the tree.
    #[error(
        "the kernel sandbox is required but no PID namespace could be made \
         and no cgroup can kill the whole tree: {0}"
    )]
    NoPidNamespace(String),
    /// The new user namespace's id maps could not be written.
    #[error("the user namespace could not be mapped: {0}")]
    IdMaps(IdMapError),
    /// The server refused the start gate (its intent record is not durable).
    #[error("the audit intent record could not be made durable")]
    GateRefused,
    /// The command cannot become `execve` arguments.
    #[error("{0}")]
    Command(&'static str),
}

/// Report why the call must not run; the launcher exits with [`REFUSED_EXIT`].
pub(super) fn refuse(reporter: &mut Reporter, reason: Refusal) -> ExitCode {
    reporter.send(&LaunchEvent::Refused {
        reason: reason.to_string(),
    });
    ExitCode::from(REFUSED_EXIT)
}
