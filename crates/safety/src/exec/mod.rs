//! Execution (SPEC §4.4): run an argv with no shell, a scrubbed environment, `/dev/null` as
//! stdin, a new session, a timeout and bounded capture; kill the whole process group on
//! timeout, overflow or cancellation, and drain the pipes with a deadline so a backgrounded
//! grandchild that holds stdout open cannot hang the call.
//!
//! The servers never see this module's internals: they hand the terminal flow a command string
//! and get an envelope back. A kernel sandbox layer plugs in at [`Executor::command_for`], the
//! one place a child process is built.

#[allow(unsafe_code)]
mod sys;

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::jail::ContainedDir;
use crate::redact::{CAPTURE_MARGIN, Captured};

/// The hidden first argument that starts the binary in sandbox-launcher mode.
pub const LAUNCHER_ARG: &str = "__sandbox-exec";

/// Entry point of the sandbox launcher mode. `main` calls this first, before any thread or
/// runtime exists; it returns `None` when the process was not started as a launcher.
pub fn launcher_main() -> Option<std::process::ExitCode> {
    let first = std::env::args_os().nth(1)?;
    if first != LAUNCHER_ARG {
        return None;
    }
    eprintln!("fatal: the sandbox launcher is not built yet");
    Some(std::process::ExitCode::from(126))
}

/// How long pipes are drained after the command ended or was killed.
pub const DRAIN_DEADLINE: Duration = Duration::from_millis(500);

/// The limits one command runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecLimits {
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Bytes of stdout and of stderr kept (each), after redaction.
    pub max_output_bytes: usize,
}

impl ExecLimits {
    /// A stream that produces more than this is cut off and the process group killed, so an
    /// endless writer (`yes`) cannot hold the call: 16 × the cap, at least 1 MiB.
    pub fn overflow_kill_bytes(&self) -> u64 {
        (self.max_output_bytes as u64)
            .saturating_mul(16)
            .max(1 << 20)
    }
}

/// What to run. Only the terminal flow builds one, after policy and containment said yes.
#[derive(Debug)]
pub struct ExecRequest<'a> {
    /// The resolved executable.
    pub program: PathBuf,
    /// Arguments after argv\[0\].
    pub args: Vec<String>,
    /// argv\[0\] as the user wrote it.
    pub argv0: String,
    /// The contained working folder (entered by handle in the child).
    pub cwd: &'a ContainedDir,
    /// The whole environment: exactly PATH, HOME and LANG.
    pub env: Vec<(String, String)>,
    /// Limits.
    pub limits: ExecLimits,
}

/// Why the command stopped, when it did not simply exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It exited (or died of a signal) on its own.
    Exited,
    /// It ran past the timeout; the group was killed.
    TimedOut,
    /// A stream passed [`ExecLimits::overflow_kill_bytes`]; the group was killed.
    Overflowed,
    /// The caller cancelled; the group was killed.
    Cancelled,
}

/// What happened.
#[derive(Debug, Clone)]
pub struct ExecOutcome {
    /// Exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Why it stopped.
    pub stop: Stop,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// The pipes were still held open (by a grandchild) when the drain deadline passed.
    pub drain_abandoned: bool,
}

/// The command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// `spawn` failed.
    #[error("command could not be started: {0}")]
    Spawn(std::io::Error),
}

/// Bounded capture of one stream: head, a ring-buffered tail, and the total.
#[derive(Debug, Default)]
struct CaptureBuffer {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    total: u64,
    keep: usize,
}

impl CaptureBuffer {
    fn new(cap: usize) -> Self {
        CaptureBuffer {
            keep: cap.saturating_add(CAPTURE_MARGIN),
            ..Default::default()
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        let room = self.keep.saturating_sub(self.head.len());
        if room > 0 {
            let take = room.min(bytes.len());
            let (now, rest) = bytes.split_at(take);
            self.head.extend_from_slice(now);
            bytes = rest;
        }
        if bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.keep {
            self.tail.clear();
            let start = bytes.len() - self.keep;
            self.tail.extend(bytes.get(start..).unwrap_or_default());
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.keep);
            self.tail.drain(..overflow.min(self.tail.len()));
            self.tail.extend(bytes);
        }
    }

    fn finish(self) -> Captured {
        Captured {
            head: self.head,
            tail: self.tail.into_iter().collect(),
            total: self.total,
        }
    }
}

type SharedBuffer = Arc<std::sync::Mutex<CaptureBuffer>>;

async fn read_stream<R: AsyncRead + Unpin>(
    mut reader: R,
    buffer: SharedBuffer,
    kill_at: u64,
    overflow: Arc<(AtomicBool, Notify)>,
) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let total = match buffer.lock() {
                    Ok(mut b) => {
                        b.push(chunk.get(..n).unwrap_or_default());
                        b.total
                    }
                    Err(_) => break,
                };
                if total > kill_at {
                    overflow.0.store(true, Ordering::SeqCst);
                    overflow.1.notify_one();
                    break;
                }
            }
        }
    }
}

/// Collect a reader task, giving up after [`DRAIN_DEADLINE`]: a grandchild that left the group
/// (`setsid sleep 1000 &`) may hold the pipe open forever.
/// Whatever was read before the deadline is kept.
async fn drain(reader: Option<(tokio::task::JoinHandle<()>, SharedBuffer)>) -> (Captured, bool) {
    let Some((mut handle, buffer)) = reader else {
        return (Captured::default(), false);
    };
    let abandoned = match tokio::time::timeout(DRAIN_DEADLINE, &mut handle).await {
        Ok(_) => false,
        Err(_) => {
            handle.abort();
            true
        }
    };
    let captured = match buffer.lock() {
        Ok(mut b) => std::mem::take(&mut *b).finish(),
        Err(_) => Captured::default(),
    };
    (captured, abandoned)
}

/// Runs commands. Holds nothing but configuration; one per server.
#[derive(Debug, Clone, Default)]
pub struct Executor {}

impl Executor {
    /// A plain executor (process group + new session; no kernel sandbox yet).
    pub fn new() -> Self {
        Executor {}
    }

    /// Build the child process. This is the single place a kernel sandbox plugs in.
    fn command_for(&self, request: &ExecRequest<'_>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&request.program);
        cmd.arg0(&request.argv0)
            .args(&request.args)
            .env_clear()
            .envs(request.env.iter().map(|(k, v)| (k, v)))
            // The real path is a fallback; the child enters the folder by handle.
            .current_dir(request.cwd.absolute())
            // stdin and stdout of the server are the protocol channel: never inherited.
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let parent = rustix::process::getpid().as_raw_nonzero().get();
        sys::isolate_child(&mut cmd, parent, Some(request.cwd.handle_fd().as_raw_fd()));
        cmd
    }

    /// Run to completion, timeout, overflow or cancellation. No process of the group survives.
    pub async fn run(
        &self,
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let mut child = self
            .command_for(request)
            .spawn()
            .map_err(ExecError::Spawn)?;
        let pid = child
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id as i32));
        let cap = request.limits.max_output_bytes;
        let kill_at = request.limits.overflow_kill_bytes();
        let overflow = Arc::new((AtomicBool::new(false), Notify::new()));
        let stdout = child.stdout.take().map(|s| {
            let buffer: SharedBuffer = Arc::new(std::sync::Mutex::new(CaptureBuffer::new(cap)));
            (
                tokio::spawn(read_stream(s, buffer.clone(), kill_at, overflow.clone())),
                buffer,
            )
        });
        let stderr = child.stderr.take().map(|s| {
            let buffer: SharedBuffer = Arc::new(std::sync::Mutex::new(CaptureBuffer::new(cap)));
            (
                tokio::spawn(read_stream(s, buffer.clone(), kill_at, overflow.clone())),
                buffer,
            )
        });

        let waited = tokio::select! {
            status = child.wait() => (status.ok(), Stop::Exited),
            _ = tokio::time::sleep(request.limits.timeout) => (None, Stop::TimedOut),
            _ = overflow.1.notified() => (None, Stop::Overflowed),
            _ = cancel.cancelled() => (None, Stop::Cancelled),
        };
        // Kill the whole group: on a stop, the command itself; after a normal exit, any
        // process it left behind in its group (a backgrounded `sleep &`).
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let status: Option<ExitStatus> = match waited {
            (Some(status), stop) => Some(status).filter(|_| stop == Stop::Exited),
            (None, _) => child.wait().await.ok(),
        };
        let stop = if overflow.0.load(Ordering::SeqCst) && waited.1 == Stop::Exited {
            // The stream hit the kill threshold just as the child ended.
            Stop::Overflowed
        } else {
            waited.1
        };

        // Drain with a deadline: a grandchild that left the group (setsid) may hold the pipe.
        let (stdout, a) = drain(stdout).await;
        let (stderr, b) = drain(stderr).await;
        let drain_abandoned = a || b;

        use std::os::unix::process::ExitStatusExt;
        Ok(ExecOutcome {
            exit_code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            stop,
            stdout,
            stderr,
            drain_abandoned,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut b = CaptureBuffer::new(4);
        let keep = 4 + CAPTURE_MARGIN;
        let data: Vec<u8> = (0..(keep * 3)).map(|i| (i % 251) as u8).collect();
        for chunk in data.chunks(1000) {
            b.push(chunk);
        }
        let c = b.finish();
        assert_eq!(c.total, data.len() as u64);
        assert_eq!(c.head, data[..keep]);
        assert_eq!(c.tail, data[data.len() - keep..]);
    }

    #[test]
    fn capture_of_short_output_is_all_head() {
        let mut b = CaptureBuffer::new(100);
        b.push(b"hello");
        let c = b.finish();
        assert_eq!(c.head, b"hello");
        assert!(c.tail.is_empty());
    }
}
