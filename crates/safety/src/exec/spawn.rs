//! Process creation without `fork`: a `posix_spawn`-style start (`sys::spawn_vfork`) and
//! the child handle the supervisor waits on (a pidfd in the runtime's reactor), with the
//! child's stdout and stderr as non-blocking pipes.
//!
//! `std::process::Command` (and so tokio's) falls back to `fork` as soon as a pre-exec hook
//! is set, and every hook we need (`setsid`, parent-death signal, entering the folder by
//! handle, the gate) is one. A `fork` of the server copies its page tables and then takes a
//! page fault on every page the server writes afterwards: on a 2-vCPU VM that was a
//! measurable part of every `run_command` (the `bench` example of the `safe-mcp` crate).

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use rustix::process::{Pid, WaitOptions, WaitStatus};
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

use super::sys;

/// What to start.
pub struct SpawnRequest<'a> {
    /// The executable.
    pub program: &'a Path,
    /// The full argv, argv\[0\] first.
    pub argv: &'a [String],
    /// The whole environment.
    pub env: &'a [(String, String)],
    /// Folder to enter by handle (`None`: stay in the server's).
    pub cwd: Option<BorrowedFd<'a>>,
    /// Descriptors that must survive `execve`.
    pub keep: &'a [RawFd],
    /// Wait at this gate before `execve`.
    pub gate: Option<RawFd>,
    /// Become this uid and gid (no supplementary groups) before `execve`.
    pub identity: Option<(u32, u32)>,
}

/// A started child: its pid, a pidfd that becomes readable when it exits, and its output.
pub struct Spawned {
    pid: Pid,
    pidfd: Option<AsyncFd<OwnedFd>>,
    /// The child's stdout.
    pub stdout: Option<pipe::Receiver>,
    /// The child's stderr.
    pub stderr: Option<pipe::Receiver>,
    status: Option<WaitStatus>,
}

/// Why a command cannot become `execve` arguments.
pub(crate) const NUL_IN_COMMAND: &str = "a NUL byte in the command";

/// A command's program, argv and `KEY=value` environment as C strings for `execve`.
pub(crate) struct ExecStrings {
    /// The executable.
    pub program: CString,
    /// The full argv, argv\[0\] first.
    pub argv: Vec<CString>,
    /// `KEY=value` entries.
    pub env: Vec<CString>,
}

impl ExecStrings {
    /// Fails with [`NUL_IN_COMMAND`] when any part holds a NUL byte.
    pub(crate) fn new(
        program: &Path,
        argv: &[String],
        env: &[(String, String)],
    ) -> Result<ExecStrings, &'static str> {
        let c = |s: &[u8]| CString::new(s).map_err(|_| NUL_IN_COMMAND);
        Ok(ExecStrings {
            program: c(program.as_os_str().as_bytes())?,
            argv: argv
                .iter()
                .map(|a| c(a.as_bytes()))
                .collect::<Result<_, _>>()?,
            env: env
                .iter()
                .map(|(k, v)| c(format!("{k}={v}").as_bytes()))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// `/dev/null` for reading, opened once (close-on-exec; the child `dup2`s it onto its stdin).
fn dev_null() -> std::io::Result<BorrowedFd<'static>> {
    static NULL: std::sync::OnceLock<OwnedFd> = std::sync::OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd.as_fd());
    }
    let fd = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    // Two first calls at once: one descriptor is kept, the other closed.
    Ok(NULL.get_or_init(|| fd).as_fd())
}

/// Start `request`. Returns once the child has `execve`d (or failed, with its reason).
/// Needs the Tokio runtime (its stdout and stderr are pipes in the reactor).
pub fn spawn(request: &SpawnRequest<'_>) -> std::io::Result<Spawned> {
    let (pid, output) = start(request, true)?;
    let [stdout, stderr] =
        output.map(|fd| fd.and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok()));
    let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::NONBLOCK)
        .ok()
        .and_then(sys::register_pidfd);
    Ok(Spawned {
        pid,
        pidfd,
        stdout,
        stderr,
        status: None,
    })
}

/// Start `request` with no output to collect (stdout and stderr are `/dev/null`, opened
/// read-only: writes fail) and no runtime: wait with [`Spawned::try_wait`]. Dropped
/// unfinished, the child is killed and reaped like any [`Spawned`].
pub(crate) fn spawn_detached(request: &SpawnRequest<'_>) -> std::io::Result<Spawned> {
    let (pid, _) = start(request, false)?;
    Ok(Spawned {
        pid,
        pidfd: None,
        stdout: None,
        stderr: None,
        status: None,
    })
}

/// The child's stdout and stderr read ends, when captured.
type Output = [Option<OwnedFd>; 2];

/// The steps both kinds of spawn share: `clone(CLONE_VM | CLONE_VFORK)`, the child's set-up,
/// `execve`, and the child's reason when a step failed.
fn start(request: &SpawnRequest<'_>, capture: bool) -> std::io::Result<(Pid, Output)> {
    let ExecStrings { program, argv, env } =
        ExecStrings::new(request.program, request.argv, request.env)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());

    let cloexec = rustix::pipe::PipeFlags::CLOEXEC;
    let null = dev_null()?;
    let (mut output, mut writers): (Output, [Option<OwnedFd>; 2]) = Default::default();
    if capture {
        for (read, write) in output.iter_mut().zip(writers.iter_mut()) {
            let (r, w) = rustix::pipe::pipe_with(cloexec)?;
            (*read, *write) = (Some(r), Some(w));
        }
    }
    let (report_read, report_write) = rustix::pipe::pipe_with(cloexec)?;
    let sink = |w: &Option<OwnedFd>| w.as_ref().map_or(null.as_raw_fd(), |w| w.as_raw_fd());
    let plan = sys::VforkPlan {
        program: &program,
        argv: &argv_ptrs,
        envp: &env_ptrs,
        stdio: [null.as_raw_fd(), sink(&writers[0]), sink(&writers[1])],
        cwd: request.cwd.map(|fd| fd.as_raw_fd()),
        keep: request.keep,
        gate: request.gate,
        identity: request.identity,
        parent_pid: rustix::process::getpid().as_raw_nonzero().get(),
        error_pipe: report_write.as_raw_fd(),
    };
    let raw = sys::spawn_vfork(&plan)?;
    drop((writers, report_write));
    let pid = Pid::from_raw(raw).ok_or_else(|| std::io::Error::other("clone returned pid 0"))?;
    // The error pipe is close-on-exec: EOF means the child is running the command.
    let mut errno = [0u8; 4];
    let got = sys::read_full(&report_read, &mut errno);
    if got == errno.len() {
        // The child failed before execve and has exited: reap it.
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
        let code = i32::from_ne_bytes(errno);
        return Err(if code == sys::GATE_REFUSED {
            std::io::Error::other("the audit intent record could not be made durable")
        } else {
            std::io::Error::from_raw_os_error(code)
        });
    }
    Ok((pid, output))
}

impl Spawned {
    /// The child's pid (also its process group and session id).
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Reap the child if it has exited (without waiting).
    pub fn try_wait(&mut self) -> std::io::Result<Option<WaitStatus>> {
        if self.status.is_none()
            && let Some((_, status)) =
                rustix::process::waitpid(Some(self.pid), WaitOptions::NOHANG)?
        {
            self.status = Some(status);
        }
        Ok(self.status)
    }

    /// Wait until the child exits and reap it.
    pub async fn wait(&mut self) -> std::io::Result<WaitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match &self.pidfd {
                Some(fd) => {
                    let mut ready = fd.readable().await?;
                    ready.clear_ready();
                }
                // No pidfd (a kernel before 5.3): poll.
                None => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // Never leave a running child or a zombie behind.
        if matches!(self.try_wait(), Ok(None)) {
            let _ = rustix::process::kill_process(self.pid, rustix::process::Signal::KILL);
            let _ = rustix::process::waitpid(Some(self.pid), WaitOptions::empty());
        }
    }
}

impl std::fmt::Debug for Spawned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawned").field("pid", &self.pid).finish()
    }
}
