//! Supervision of a started command: capture both streams, wait for the command to end,
//! and stop it on timeout, output overflow or cancellation. Whatever the reason it stopped,
//! its whole tree is killed (the call's cgroup, then its process group) before the pipes
//! are drained, so no process of the call outlives it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::capture::{self, Overflow};
use super::cgroup::CallCgroup;
use super::{ExecLimits, ExecOutcome, SandboxReport, Stop, spawn};
use crate::redact::Captured;

/// The parts of an outcome the supervisor collects (the sandbox report is added after).
pub(super) struct Supervised {
    status: Option<rustix::process::WaitStatus>,
    stop: Stop,
    stdout: Captured,
    stderr: Captured,
    stdout_sha256: Option<[u8; 32]>,
    stderr_sha256: Option<[u8; 32]>,
    drain_abandoned: bool,
    pid: u32,
}

/// Watch a started child: capture both streams, stop it on timeout, overflow or
/// cancellation, and kill its whole tree (the call's cgroup, then the process group).
/// `hash`: also take the SHA-256 of every byte of each stream.
pub(super) async fn supervise(
    mut child: spawn::Spawned,
    limits: &ExecLimits,
    cancel: &CancellationToken,
    call: Option<&mut CallCgroup>,
    hash: bool,
) -> Supervised {
    let pid = child.pid();
    let cap = limits.max_output_bytes;
    let kill_at = limits.overflow_kill_bytes();
    let overflow: Overflow = Arc::new((AtomicBool::new(false), Notify::new()));
    let stdout = child
        .stdout
        .take()
        .map(|s| capture::start_reading(s, cap, kill_at, &overflow, hash));
    let stderr = child
        .stderr
        .take()
        .map(|s| capture::start_reading(s, cap, kill_at, &overflow, hash));

    let waited = tokio::select! {
        status = child.wait() => (status.ok(), Stop::Exited),
        _ = tokio::time::sleep(limits.timeout) => (None, Stop::TimedOut),
        _ = overflow.1.notified() => (None, Stop::Overflowed),
        _ = cancel.cancelled() => (None, Stop::Cancelled),
    };
    if waited.1 != Stop::Exited
        && let Some(call) = call.as_deref()
    {
        // The cgroup holds every process of the call, including any that left the
        // process group with setsid or a double fork: kill them all at once.
        call.kill();
    }
    // Kill the whole group: on a stop, the command itself; after a normal exit, any
    // process it left behind in its group (a backgrounded `sleep &`).
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    // A status comes back only with `Exited`; after a stop the killed child is reaped here.
    let status = match waited.0 {
        Some(status) => Some(status),
        None => child.wait().await.ok(),
    };
    let stop = if overflow.0.load(Ordering::SeqCst) && waited.1 == Stop::Exited {
        // The stream hit the kill threshold just as the child ended.
        Stop::Overflowed
    } else {
        waited.1
    };
    if let Some(call) = call {
        // Whatever outlived the command in the cgroup dies now, before the pipes are
        // drained, so a background writer cannot hold them open.
        call.kill_leftovers();
    }

    // Drain with a deadline: a grandchild that left the group (setsid) may hold the pipe.
    // Both at once: an escaped process holding both pipes costs one deadline, not two.
    let (stdout, stderr) = tokio::join!(capture::drain(stdout), capture::drain(stderr));
    Supervised {
        status,
        stop,
        drain_abandoned: stdout.abandoned || stderr.abandoned,
        stdout_sha256: stdout.sha256,
        stderr_sha256: stderr.sha256,
        stdout: stdout.captured,
        stderr: stderr.captured,
        pid: u32::try_from(pid.as_raw_nonzero().get()).unwrap_or(0),
    }
}

/// The outcome of a supervised call, with the sandbox report of what confined it.
pub(super) fn outcome(s: Supervised, sandbox: SandboxReport) -> ExecOutcome {
    ExecOutcome {
        exit_code: s.status.and_then(|st| st.exit_status()),
        signal: s.status.and_then(|st| st.terminating_signal()),
        stop: s.stop,
        stdout: s.stdout,
        stderr: s.stderr,
        drain_abandoned: s.drain_abandoned,
        stdout_sha256: s.stdout_sha256,
        stderr_sha256: s.stderr_sha256,
        pid: s.pid,
        sandbox,
    }
}
