//! The cgroup reaper: a small process, started with the server's cgroup set-up, that
//! kills and removes the server's call folders once the server is gone, however it died.
//!
//! Why: where a cgroup kills the tree (v2 `cgroup.kill`) no PID namespace is made, the
//! launcher becomes the command, and the parent-death signal reaches only that direct
//! child: a `setsid` grandchild of a server killed by SIGKILL would live on in its call
//! folder until another server started and swept it ([`super::sweep_stale`]).
//!
//! How: the reaper is the launcher binary in the mode [`REAPER_ARG`], started with
//! `std::process::Command` (once, at start-up) with no environment, in `/`, in a process
//! group of its own (a terminal's Ctrl-C reaches the server first, not it), as the server's
//! own user with nothing added (and `no_new_privs`). Its stdin is the read end of a pipe
//! whose write end only the server holds, close-on-exec, so no launcher or command ever
//! inherits it. EOF on stdin means the server is gone (it exited, or dropped its cgroup
//! set-up, or was killed): the reaper then kills every call folder of the server's
//! `safe-mcp.<pid>.<k>` folders ([`super::reap_base`], the sweep's code), removes them and
//! exits. It lives in the server's own cgroup, never in a call folder, and holds no
//! descriptor a command gets.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::EMPTY_DEADLINE;

/// The hidden first argument that starts the launcher binary as the cgroup reaper.
pub const REAPER_ARG: &str = "__reaper";

/// A running reaper, owned by the server's folder pool: dropping it closes the pipe (the
/// reaper reaps what is left and exits) and waits, bounded, for it to end.
#[derive(Debug)]
pub(super) struct Reaper {
    /// The pipe's write end: only the server holds it (close-on-exec).
    hold: Option<OwnedFd>,
    child: Child,
}

impl Reaper {
    /// Start the reaper of `bases` (the server's `safe-mcp.<pid>.<k>` folders) from the
    /// launcher binary `launcher`. Does not wait for it: the server's start never blocks.
    pub(super) fn start(launcher: &Path, bases: &[PathBuf]) -> std::io::Result<Reaper> {
        use std::os::unix::process::CommandExt;
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let child = Command::new(launcher)
            .arg(REAPER_ARG)
            .args(bases)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        Ok(Reaper {
            hold: Some(write),
            child,
        })
    }

    /// Why the reaper is not running any more, if it is not (it exited or was killed).
    pub(super) fn gone(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(None) => None,
            Ok(Some(status)) => Some(format!("the cgroup reaper exited ({status})")),
            Err(e) => Some(format!("the cgroup reaper cannot be waited on ({e})")),
        }
    }

    /// The reaper's pid (tests).
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        drop(self.hold.take());
        // By now every call's folders were killed and removed, so the reaper finds little
        // or nothing; still, never wait longer than it may take on a folder.
        let deadline = Instant::now() + EMPTY_DEADLINE + Duration::from_secs(1);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The reaper's side: wait for EOF on stdin (the server is gone), then kill and remove
/// every call folder of the `safe-mcp.*` folders named in `dirs`, and the folders.
pub(crate) fn reaper_main(dirs: impl Iterator<Item = OsString>) -> ExitCode {
    let _ = rustix::thread::set_no_new_privs(true);
    // Only folders of the server's own kind: a reaper started by hand touches nothing else.
    let dirs: Vec<PathBuf> = dirs
        .map(PathBuf::from)
        .filter(|d| {
            d.is_absolute()
                && d.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("safe-mcp."))
        })
        .collect();
    let mut stdin = std::io::stdin().lock();
    let mut buf = [0u8; 64];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    for dir in &dirs {
        super::reap_base(dir, EMPTY_DEADLINE);
    }
    ExitCode::SUCCESS
}
