//! Execution (SPEC §4.4): run an argv with no shell, a scrubbed environment, `/dev/null` as
//! stdin, a new session, a timeout and bounded capture; kill the whole process group on
//! timeout, overflow or cancellation, and drain the pipes with a deadline so a backgrounded
//! grandchild that holds stdout open cannot hang the call.
//!
//! With the kernel sandbox on (the default), every command starts through the sandbox
//! launcher ([`launcher`]): the server's own binary in a helper mode that joins the call's
//! cgroups ([`cgroup`]), sets rlimits, enters user/PID(/net) namespaces, applies Landlock
//! ([`filesystem`]) and seccomp ([`seccomp`]), then `execve`s the command. Limits come from
//! a resource [`profile`]; what was really applied is reported per call ([`sandbox`]).
//!
//! The servers never see this module's internals: they hand the terminal flow a command string
//! and get an envelope back.

pub mod cgroup;
pub mod filesystem;
pub mod launcher;
pub mod profile;
pub mod sandbox;
pub mod seccomp;
pub mod spawn;
#[allow(unsafe_code)]
mod sys;
pub mod view;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::jail::ContainedDir;
use crate::redact::{CAPTURE_MARGIN, Captured};

pub use launcher::{LAUNCHER_ARG, launcher_main};
pub use profile::Profile;
pub use sandbox::{Sandbox, SandboxConfig, SandboxReport};

use cgroup::CallCgroup;
use launcher::{LaunchEvent, LaunchSpec};

/// How long pipes are drained after the command ended or was killed.
pub const DRAIN_DEADLINE: Duration = Duration::from_millis(500);

/// The limits one command runs under: a profile's values, tightened by the policy and
/// the caller (see [`profile::effective_limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecLimits {
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Bytes of stdout and of stderr kept (each), after redaction.
    pub max_output_bytes: usize,
    /// RLIMIT_NOFILE: open descriptors per process.
    pub open_files: u64,
    /// Processes (and threads) of the whole call, via the pids cgroup.
    pub processes: u64,
    /// Memory of the whole call, via the memory cgroup (per process where none exists).
    pub memory_bytes: u64,
    /// RLIMIT_FSIZE: the largest file the command may write.
    pub file_size_bytes: u64,
    /// RLIMIT_CPU: CPU seconds per process.
    pub cpu_seconds: u64,
    /// Network allowed (off: seccomp refuses non-unix sockets, empty network namespace).
    pub network: bool,
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
    /// The whole environment (the terminal's scrubbed one).
    pub env: Vec<(String, String)>,
    /// The profile the limits came from.
    pub profile: Profile,
    /// Limits.
    pub limits: ExecLimits,
    /// Held at `execve` until opened; `None`: runs as soon as it is ready.
    pub gate: Option<&'a Gate>,
}

/// Why the command stopped, when it did not simply exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It exited (or died of a signal) on its own.
    Exited,
    /// It ran past the timeout; the whole tree was killed.
    TimedOut,
    /// A stream passed [`ExecLimits::overflow_kill_bytes`]; the whole tree was killed.
    Overflowed,
    /// The caller cancelled; the whole tree was killed.
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
    /// What confined the call, really.
    pub sandbox: SandboxReport,
}

/// The command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// `spawn` failed.
    #[error("command could not be started: {0}")]
    Spawn(std::io::Error),
    /// `require_kernel_sandbox = true` and a mechanism is missing: nothing ran.
    #[error("{reason}; nothing ran")]
    SandboxRequired {
        /// Which mechanism and why.
        reason: String,
        /// The sandbox report of the refused call.
        report: Box<SandboxReport>,
    },
    /// The launcher could not start the command (`execve` failed).
    #[error("command could not be started: {reason}")]
    Launch {
        /// Why.
        reason: String,
        /// The sandbox report of the call.
        report: Box<SandboxReport>,
    },
}

impl ExecError {
    /// The sandbox report, when the sandbox got far enough to make one.
    pub fn report(&self) -> Option<&SandboxReport> {
        match self {
            ExecError::Spawn(_) => None,
            ExecError::SandboxRequired { report, .. } | ExecError::Launch { report, .. } => {
                Some(report)
            }
        }
    }
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

/// The parts of an outcome the supervisor collects (the sandbox report is added after).
struct Supervised {
    status: Option<rustix::process::WaitStatus>,
    stop: Stop,
    stdout: Captured,
    stderr: Captured,
    drain_abandoned: bool,
}

/// Watch a started child: capture both streams, stop it on timeout, overflow or
/// cancellation, and kill its whole tree (the call's cgroup, then the process group).
async fn supervise(
    mut child: spawn::Spawned,
    limits: &ExecLimits,
    cancel: &CancellationToken,
    call: Option<&mut CallCgroup>,
) -> Supervised {
    let pid = child.pid();
    let cap = limits.max_output_bytes;
    let kill_at = limits.overflow_kill_bytes();
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
    let ((stdout, a), (stderr, b)) = tokio::join!(drain(stdout), drain(stderr));
    Supervised {
        status,
        stop,
        stdout,
        stderr,
        drain_abandoned: a || b,
    }
}

fn outcome(s: Supervised, sandbox: SandboxReport) -> ExecOutcome {
    ExecOutcome {
        exit_code: s.status.and_then(|st| st.exit_status()),
        signal: s.status.and_then(|st| st.terminating_signal()),
        stop: s.stop,
        stdout: s.stdout,
        stderr: s.stderr,
        drain_abandoned: s.drain_abandoned,
        sandbox,
    }
}

/// Read the launcher's report lines until every holder of the pipe closed it.
async fn read_report(read: OwnedFd) -> Vec<LaunchEvent> {
    let Ok(mut pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(read) else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    // A report is a few hundred bytes; a launcher never writes more than this.
    let mut limited = (&mut pipe).take(64 * 1024);
    let _ = limited.read_to_end(&mut bytes).await;
    parse_report(&bytes)
}

fn parse_report(bytes: &[u8]) -> Vec<LaunchEvent> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The report pipe between a launcher and the server (launcher → server).
struct LaunchPipes {
    report_read: OwnedFd,
    report_write: OwnedFd,
    /// The read end of the call's gate, when it has one.
    gate: Option<i32>,
}

impl LaunchPipes {
    fn new(gate: Option<&Gate>) -> std::io::Result<LaunchPipes> {
        let flags = rustix::pipe::PipeFlags::CLOEXEC;
        let (report_read, report_write) = rustix::pipe::pipe_with(flags)?;
        Ok(LaunchPipes {
            report_read,
            report_write,
            gate: gate.map(Gate::raw),
        })
    }

    /// The read end, once the launcher holds the write end: ours is closed, since only the
    /// launcher (and its clone) may hold it, so EOF means the report is complete.
    fn into_report_read(self) -> OwnedFd {
        self.report_read
    }

    /// The launcher's end, kept open across its `execve`, and the Landlock ruleset.
    fn inherited(&self, ruleset: Option<&filesystem::Prepared>) -> Vec<i32> {
        [
            Some(self.report_write.as_raw_fd()),
            ruleset.map(|r| r.fd.as_raw_fd()),
            self.gate,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// How [`start_launcher`] starts the launcher.
enum LauncherStart<'a> {
    /// Output collected, waited on through the runtime; in the folder `cwd` when given.
    Async(Option<std::os::fd::BorrowedFd<'a>>),
    /// No runtime, output discarded (the start-up probe), in the jail root.
    Detached,
}

/// Start the sandbox launcher, `<launcher> <mode> <spec as JSON>`, with no environment and
/// only the descriptors in `keep`, through the same child steps as every command.
fn start_launcher(
    sandbox: &Sandbox,
    mode: &str,
    spec: String,
    keep: &[std::os::fd::RawFd],
    how: LauncherStart<'_>,
) -> std::io::Result<spawn::Spawned> {
    let argv = [
        sandbox.config.launcher.to_string_lossy().into_owned(),
        mode.to_string(),
        spec,
    ];
    let request = |cwd| spawn::SpawnRequest {
        program: &sandbox.config.launcher,
        argv: &argv,
        env: &[],
        cwd,
        keep,
        gate: None,
        // The launcher switches identity itself, after its privileged steps.
        identity: None,
    };
    match how {
        LauncherStart::Async(cwd) => spawn::spawn(&request(cwd)),
        LauncherStart::Detached => {
            use std::os::fd::AsFd;
            let root = std::fs::File::open(&sandbox.config.jail_root)?;
            spawn::spawn_detached(&request(Some(root.as_fd())))
        }
    }
}

/// A gate the command waits at, after every other preparation and just before `execve`,
/// until the caller opens it. The terminal flow opens it once the call's audit intent record
/// is durable, so process creation and sandbox set-up overlap the `fdatasync` while nothing
/// the model asked for runs before the record is on disk (SPEC §4.6).
#[derive(Debug)]
pub struct Gate {
    read: OwnedFd,
}

/// The other end of a [`Gate`]: [`GateOpener::open`] lets the command run; anything else
/// (refusing, or dropping the opener) makes it exit without running.
#[derive(Debug)]
pub struct GateOpener {
    write: Option<OwnedFd>,
}

impl Gate {
    /// A closed gate and its opener.
    pub fn new() -> std::io::Result<(Gate, GateOpener)> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        Ok((Gate { read }, GateOpener { write: Some(write) }))
    }

    fn raw(&self) -> i32 {
        self.read.as_raw_fd()
    }
}

impl GateOpener {
    /// Let the command run.
    pub fn open(mut self) {
        self.send(b'g');
    }

    /// Make the command exit without running.
    pub fn refuse(mut self) {
        self.send(b'n');
    }

    fn send(&mut self, byte: u8) {
        if let Some(write) = self.write.take() {
            // One byte into an empty pipe: it cannot block or be split.
            let _ = rustix::io::write(&write, &[byte]);
        }
    }
}

impl Drop for GateOpener {
    fn drop(&mut self) {
        // Forked children may hold copies of the write end, so EOF is not to be relied on:
        // an opener that was never opened says no explicitly.
        self.send(b'n');
    }
}

/// Wait at a gate (in the child, before `execve`): `true` only when it was opened.
pub(crate) fn gate_opened(gate: &impl std::os::fd::AsFd) -> bool {
    sys::read_byte(gate) == Some(b'g')
}

/// A launcher started ahead of its call ([`launcher::WarmSpec`]), waiting on its channel.
/// Field order is drop order: an unused launcher is killed before its folders are removed.
struct WarmSlot {
    child: spawn::Spawned,
    channel: OwnedFd,
    report_read: OwnedFd,
    /// The call's folders, limited ahead for `limits` (processes, memory).
    call: CallCgroup,
    limits: (u64, u64),
}

impl std::fmt::Debug for WarmSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmSlot")
            .field("child", &self.child)
            .finish()
    }
}

impl WarmSlot {
    /// Start one whose folders are limited for `limits` (the previous call's), which the
    /// call rewrites only when its own differ.
    fn start(sandbox: &Sandbox, limits: (u64, u64)) -> std::io::Result<WarmSlot> {
        use rustix::net::{AddressFamily, SocketFlags, SocketType};
        let reserved = sandbox.cgroups.reserve();
        let (report_read, report_write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let (channel, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )?;
        let mut ruleset_fds: Vec<i32> = [false, true]
            .into_iter()
            .filter_map(|deny| sandbox.ruleset(deny).map(|r| r.fd.as_raw_fd()))
            .collect();
        ruleset_fds.dedup();
        let warm = launcher::WarmSpec {
            report_fd: report_write.as_raw_fd(),
            channel_fd: theirs.as_raw_fd(),
            ruleset_fds: ruleset_fds.clone(),
            cgroup_v1_tasks: reserved.v1_task_files(),
            cgroup_v2: reserved.v2_dir(),
            view: sandbox
                .config
                .view
                .then(|| sandbox.config.jail_root.clone()),
            view_known: sandbox.known_repositories(),
        };
        let mut keep = vec![report_write.as_raw_fd(), theirs.as_raw_fd()];
        keep.extend(ruleset_fds);
        let spec = serde_json::to_string(&warm).map_err(std::io::Error::other)?;
        let child = start_launcher(
            sandbox,
            launcher::WARM_ARG,
            spec,
            &keep,
            LauncherStart::Async(None),
        )?;
        drop((report_write, theirs));
        Ok(WarmSlot {
            child,
            channel,
            report_read,
            // It becomes the command: nothing of ours beside it.
            call: reserved.limit(limits.0, limits.1, Default::default()),
            limits,
        })
    }
}

/// Send a call to a launcher started ahead: the spec as one message, with the working
/// folder's handle and the gate's read end as `SCM_RIGHTS`.
fn send_call(
    channel: &OwnedFd,
    spec: &LaunchSpec,
    cwd: std::os::fd::BorrowedFd<'_>,
    gate: Option<&Gate>,
) -> std::io::Result<()> {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    use std::os::fd::AsFd;
    let bytes = serde_json::to_vec(spec).map_err(std::io::Error::other)?;
    if bytes.len() > launcher::MAX_CALL_MESSAGE {
        return Err(std::io::Error::other("the call spec is too large to send"));
    }
    let mut fds = vec![cwd];
    if let Some(gate) = gate {
        fds.push(gate.read.as_fd());
    }
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::other("no room for the call's descriptors"));
    }
    let sent = rustix::net::sendmsg(
        channel,
        &[std::io::IoSlice::new(&bytes)],
        &mut control,
        SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
    )?;
    if sent != bytes.len() {
        return Err(std::io::Error::other("the call spec was sent in part"));
    }
    Ok(())
}

/// What a launch spec runs: the program (`None`: the probe), its argv and environment, and
/// the working folder relative to the jail.
#[derive(Default)]
struct CallCommand {
    program: Option<PathBuf>,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    cwd_relative: PathBuf,
}

/// The queue of the thread that starts launchers ahead: the limits to write ahead.
type StarterQueue = std::sync::Mutex<std::sync::mpsc::Sender<(u64, u64)>>;

/// Runs commands. One per server.
#[derive(Debug, Clone, Default)]
pub struct Executor {
    sandbox: Option<Arc<Sandbox>>,
    /// The launcher started ahead of the next call, if one is ready.
    warm: Arc<std::sync::Mutex<Option<WarmSlot>>>,
    /// The last call's (processes, memory) limits: the next call's folders get them ahead.
    last_limits: Arc<std::sync::Mutex<Option<(u64, u64)>>>,
    /// The thread that starts launchers ahead of their calls ([`Executor::schedule_warm`]).
    starter: Arc<std::sync::OnceLock<StarterQueue>>,
    /// A launcher is being started ahead; `warm_done` is notified when that ends.
    warm_pending: Arc<AtomicBool>,
    warm_done: Arc<Notify>,
    /// Calls here cannot use a launcher started ahead (they need a PID namespace).
    warm_unusable: Arc<AtomicBool>,
    /// The uid and gid of commands started without the launcher.
    plain_identity: Option<(u32, u32)>,
}

impl Executor {
    /// An executor without the kernel sandbox: session, process group, timeout and
    /// capture only (`[terminal.sandbox] enabled = false`).
    pub fn new() -> Self {
        Executor::default()
    }

    /// An executor that starts every command through the sandbox launcher.
    pub fn sandboxed(config: SandboxConfig) -> Self {
        Executor {
            sandbox: Some(Arc::new(Sandbox::new(config))),
            ..Executor::default()
        }
    }

    /// The sandbox configuration, when the sandbox is on.
    pub fn sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_deref()
    }

    /// An executor without the kernel sandbox whose commands run as `run_as` (a root
    /// server never runs a command as root, sandbox or not).
    pub fn unsandboxed(run_as: Option<(u32, u32)>) -> Self {
        Executor {
            plain_identity: run_as,
            ..Executor::default()
        }
    }

    /// Start the command itself, without the launcher (sandbox off).
    fn spawn_plain(&self, request: &ExecRequest<'_>) -> std::io::Result<spawn::Spawned> {
        spawn::spawn(&spawn::SpawnRequest {
            program: &request.program,
            argv: &Self::argv(request),
            env: &request.env,
            cwd: Some(request.cwd.handle_fd()),
            keep: &[],
            gate: request.gate.map(Gate::raw),
            identity: self.plain_identity,
        })
    }

    fn spec(
        sandbox: &Sandbox,
        limits: &ExecLimits,
        call: &CallCgroup,
        command: CallCommand,
        known_repositories: &[PathBuf],
        (report_fd, gate_fd): (i32, Option<i32>),
    ) -> LaunchSpec {
        let CallCommand {
            program,
            argv,
            env,
            cwd_relative,
        } = command;
        let config = &sandbox.config;
        let fs = sandbox.fs_rules(!limits.network);
        let ruleset = sandbox.ruleset(!limits.network);
        LaunchSpec {
            program,
            argv,
            env,
            fs,
            landlock_ruleset: ruleset.map(|r| (r.fd.as_raw_fd(), r.report.clone())),
            open_files: limits.open_files,
            file_size_bytes: limits.file_size_bytes,
            cpu_seconds: limits.cpu_seconds,
            data_bytes: call.report.memory.is_none().then_some(limits.memory_bytes),
            namespaces: config.namespaces,
            pid_namespace: config.namespaces && !call.kills_tree(),
            cgroup_v2: call.v2_dir(),
            cgroup_v1_tasks: call.v1_task_files(),
            report_fd,
            gate_fd,
            parent_pid: rustix::process::getpid().as_raw_nonzero().get(),
            require: config.require,
            require_namespaces: config.require && !call.kills_tree(),
            view: config.view.then(|| config.jail_root.clone()),
            view_known: known_repositories.to_vec(),
            cwd_relative,
            run_as: config.run_as,
            deny_metadata: !config.view,
        }
    }

    /// Refuse before spawning when the policy requires the kernel sandbox and the cgroup
    /// layer is already short of it.
    fn precheck(
        sandbox: &Sandbox,
        profile: Profile,
        limits: &ExecLimits,
        call: &CallCgroup,
    ) -> Result<Vec<String>, ExecError> {
        let mut problems = call.problems.clone();
        problems.extend(sandbox.cgroups.problems().iter().cloned());
        let missing = sandbox::cgroup_downgrades(limits, &call.report, &problems);
        if sandbox.config.require && !missing.is_empty() {
            let report = sandbox::build_report(
                profile,
                limits,
                call.report.clone(),
                &problems,
                &[LaunchEvent::Refused {
                    reason: String::new(),
                }],
                Default::default(),
            );
            return Err(ExecError::SandboxRequired {
                reason: format!("the kernel sandbox is required but {}", missing.join("; ")),
                report: Box::new(report),
            });
        }
        Ok(problems)
    }

    /// Run to completion, timeout, overflow or cancellation. No process of the call survives.
    pub async fn run(
        &self,
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let Some(sandbox) = self.sandbox.as_deref() else {
            let child = self.spawn_plain(request).map_err(ExecError::Spawn)?;
            let supervised = supervise(child, &request.limits, cancel, None).await;
            let report = sandbox::unsandboxed_report(request.profile, &request.limits);
            return Ok(outcome(supervised, report));
        };
        if let Ok(mut last) = self.last_limits.lock() {
            *last = Some((request.limits.processes, request.limits.memory_bytes));
        }
        let result = match self.take_warm_or_wait().await {
            Some(slot) => match self.run_warm(sandbox, slot, request, cancel).await {
                Some(done) => done,
                // The launcher started ahead is gone (killed while idle): start one now.
                None => self.run_cold(sandbox, request, cancel).await,
            },
            None => self.run_cold(sandbox, request, cancel).await,
        };
        if let Ok(outcome) = &result
            && let Some(view) = &outcome.sandbox.mechanisms.view
        {
            // Before the next launcher is started ahead: it protects these first.
            sandbox.remember_repositories(&view.protected);
        }
        self.schedule_warm();
        result
    }

    /// The launcher's spec for this request. Without `pipes` (a launcher started ahead,
    /// which has its report pipe and gets the gate with the call) the descriptor numbers
    /// are placeholders it fills in.
    fn call_spec(
        sandbox: &Sandbox,
        request: &ExecRequest<'_>,
        call: &CallCgroup,
        pipes: Option<&LaunchPipes>,
    ) -> LaunchSpec {
        let fds = match pipes {
            Some(p) => (p.report_write.as_raw_fd(), p.gate),
            None => (-1, request.gate.map(|_| -1)),
        };
        Self::spec(
            sandbox,
            &request.limits,
            call,
            CallCommand {
                program: Some(request.program.clone()),
                argv: Self::argv(request),
                env: request.env.clone(),
                cwd_relative: request.cwd.relative().to_path_buf(),
            },
            &sandbox.known_repositories(),
            fds,
        )
    }

    fn argv(request: &ExecRequest<'_>) -> Vec<String> {
        let mut argv = Vec::with_capacity(request.args.len() + 1);
        argv.push(request.argv0.clone());
        argv.extend(request.args.iter().cloned());
        argv
    }

    /// Fresh folders for a launcher started for its call, limited so that the command holds
    /// exactly its process limit beside what the launcher keeps there
    /// ([`launcher::beside_command`], with the PID namespace [`Self::spec`] will ask for).
    fn create_call(sandbox: &Sandbox, limits: &ExecLimits) -> CallCgroup {
        let reserved = sandbox.cgroups.reserve();
        let beside = launcher::beside_command(sandbox.config.namespaces, !reserved.kills_tree());
        reserved.limit(limits.processes, limits.memory_bytes, beside)
    }

    /// Start a launcher for this call now.
    async fn run_cold(
        &self,
        sandbox: &Sandbox,
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let limits = &request.limits;
        let call = Self::create_call(sandbox, limits);
        let problems = Self::precheck(sandbox, request.profile, limits, &call)?;
        let pipes = LaunchPipes::new(request.gate).map_err(ExecError::Spawn)?;
        let spec = Self::call_spec(sandbox, request, &call, Some(&pipes));
        if spec.pid_namespace {
            // This host's trees die with a PID namespace, which only a launcher started for
            // its call makes: starting one ahead would be thrown away.
            self.warm_unusable.store(true, Ordering::SeqCst);
        }
        let spec =
            serde_json::to_string(&spec).map_err(|e| ExecError::Spawn(std::io::Error::other(e)))?;
        let ruleset = sandbox.ruleset(!limits.network);
        // The launcher waits at the gate itself, after its set-up, just before execve.
        let child = start_launcher(
            sandbox,
            LAUNCHER_ARG,
            spec,
            &pipes.inherited(ruleset),
            LauncherStart::Async(Some(request.cwd.handle_fd())),
        )
        .map_err(ExecError::Spawn)?;
        let report_read = pipes.into_report_read();
        Self::supervise_launch(request, cancel, child, report_read, call, problems, false).await
    }

    /// Hand this call to the launcher started ahead of it. `None` when the launcher cannot
    /// take it (it died while idle): nothing was sent, nothing ran, its folders are gone.
    async fn run_warm(
        &self,
        sandbox: &Sandbox,
        slot: WarmSlot,
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
    ) -> Option<Result<ExecOutcome, ExecError>> {
        let limits = &request.limits;
        let WarmSlot {
            child,
            channel,
            report_read,
            call,
            limits: ahead,
        } = slot;
        let wanted = (limits.processes, limits.memory_bytes);
        let call = if ahead == wanted {
            call
        } else {
            call.relimit(wanted.0, wanted.1)
        };
        let problems = match Self::precheck(sandbox, request.profile, limits, &call) {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let mut spec = Self::call_spec(sandbox, request, &call, None);
        if spec.pid_namespace {
            // No cgroup kills this host's trees: the PID namespace path needs a launcher
            // started for the call. Starting more ahead would be wasted work.
            self.warm_unusable.store(true, Ordering::SeqCst);
            drop((child, channel, report_read));
            drop(call);
            return None;
        }
        // Its ruleset is already built; the rules themselves are not needed.
        if spec.landlock_ruleset.is_some() {
            spec.fs.read_paths.clear();
        }
        // Joined at its start; its report pipe and the call's descriptors come with it.
        spec.cgroup_v1_tasks.clear();
        // Its view was built at its start, from the list it got then.
        spec.view_known.clear();
        if let Err(e) = send_call(&channel, &spec, request.cwd.handle_fd(), request.gate) {
            tracing::debug!("the launcher started ahead could not take the call: {e}");
            // Reap it, then remove the folders it was in.
            drop((child, channel, report_read));
            drop(call);
            return None;
        }
        drop(channel);
        Some(
            Self::supervise_launch(request, cancel, child, report_read, call, problems, true).await,
        )
    }

    /// Everything after a launcher holds the call: supervise, collect its report, kill and
    /// remove the call's cgroups, map a refusal to its error.
    async fn supervise_launch(
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
        child: spawn::Spawned,
        report_read: OwnedFd,
        mut call: CallCgroup,
        problems: Vec<String>,
        started_ahead: bool,
    ) -> Result<ExecOutcome, ExecError> {
        let limits = &request.limits;
        let reader = tokio::spawn(read_report(report_read));
        let supervised = supervise(child, limits, cancel, Some(&mut call)).await;
        let cgroup_report = call.report.clone();
        let hits = call.finish().await;
        let events = match tokio::time::timeout(DRAIN_DEADLINE, reader).await {
            Ok(Ok(events)) => events,
            _ => Vec::new(),
        };
        let mut report = sandbox::build_report(
            request.profile,
            limits,
            cgroup_report,
            &problems,
            &events,
            hits,
        );
        report.mechanisms.launcher_started_ahead = started_ahead;
        for event in &events {
            match event {
                LaunchEvent::Refused { reason } => {
                    return Err(ExecError::SandboxRequired {
                        reason: reason.clone(),
                        report: Box::new(report),
                    });
                }
                LaunchEvent::ExecFailed { reason } => {
                    return Err(ExecError::Launch {
                        reason: reason.clone(),
                        report: Box::new(report),
                    });
                }
                _ => {}
            }
        }
        Ok(outcome(supervised, report))
    }

    fn take_warm(&self) -> Option<WarmSlot> {
        self.warm.lock().ok()?.take()
    }

    /// The launcher started ahead, waiting (at most 50 ms) for one that is being started:
    /// it is further along than a launcher started now would be.
    async fn take_warm_or_wait(&self) -> Option<WarmSlot> {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(50);
        loop {
            let done = self.warm_done.notified();
            if let Some(slot) = self.take_warm() {
                return Some(slot);
            }
            if !self.warm_pending.load(Ordering::SeqCst) {
                return None;
            }
            if tokio::time::timeout_at(deadline, done).await.is_err() {
                return self.take_warm();
            }
        }
    }

    /// Start the launcher for the next call, off the request path: a dedicated thread (the
    /// "starter") spawns it, so the runtime's thread is never held by the spawn; the
    /// launcher execs, joins the next call's cgroups and waits on its channel. The starter
    /// lives as long as the executor, which matters: the parent-death signal follows the
    /// thread that started a process.
    fn schedule_warm(&self) {
        let Some(sandbox) = self.sandbox.clone() else {
            return;
        };
        if self.warm_unusable.load(Ordering::SeqCst)
            || self.warm.lock().map_or(true, |s| s.is_some())
        {
            return;
        }
        // Set by every call before this runs; the folders are limited for it ahead.
        let Some(limits) = self.last_limits.lock().ok().and_then(|l| *l) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let slot = self.warm.clone();
        let pending = self.warm_pending.clone();
        let done = self.warm_done.clone();
        let starter = self.starter.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<(u64, u64)>();
            let spawned = std::thread::Builder::new()
                .name("launcher-starter".into())
                .spawn(move || {
                    while let Ok(limits) = rx.recv() {
                        if slot.lock().map_or(true, |s| s.is_some()) {
                            pending.store(false, Ordering::SeqCst);
                            done.notify_waiters();
                            continue;
                        }
                        // The pidfd and pipes are registered with the server's reactor.
                        let _entered = runtime.enter();
                        match WarmSlot::start(&sandbox, limits) {
                            Ok(started) => {
                                if let Ok(mut s) = slot.lock()
                                    && s.is_none()
                                {
                                    *s = Some(started);
                                }
                            }
                            Err(e) => tracing::debug!("no launcher started ahead: {e}"),
                        }
                        pending.store(false, Ordering::SeqCst);
                        done.notify_waiters();
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("no launcher starter thread: {e}");
            }
            std::sync::Mutex::new(tx)
        });
        if let Ok(tx) = starter.lock() {
            self.warm_pending.store(true, Ordering::SeqCst);
            if tx.send(limits).is_err() {
                self.warm_pending.store(false, Ordering::SeqCst);
            }
        }
    }

    /// The pid of the launcher waiting for the next call, if one is (tests).
    pub fn next_launcher_pid(&self) -> Option<i32> {
        let slot = self.warm.lock().ok()?;
        slot.as_ref().map(|s| s.child.pid().as_raw_nonzero().get())
    }

    /// Start the launcher for the next call now and wait until it is in place (tests, and
    /// the benchmark's warm-up).
    pub fn prepare_next_launcher(&self) -> std::io::Result<bool> {
        let Some(sandbox) = self.sandbox.as_deref() else {
            return Ok(false);
        };
        let standard = Profile::Standard.limits();
        let limits = self
            .last_limits
            .lock()
            .ok()
            .and_then(|l| *l)
            .unwrap_or((standard.processes, standard.memory_bytes));
        let started = WarmSlot::start(sandbox, limits)?;
        let mut slot = self
            .warm
            .lock()
            .map_err(|_| std::io::Error::other("lock poisoned"))?;
        if slot.is_none() {
            *slot = Some(started);
        }
        Ok(true)
    }

    /// Start-up probe: run the launcher through every step with nothing to execute and
    /// report what the kernel really granted. Synchronous (called before the runtime).
    pub fn probe(&self, profile: Profile, limits: &ExecLimits) -> SandboxReport {
        let Some(sandbox) = self.sandbox.as_deref() else {
            return sandbox::unsandboxed_report(profile, limits);
        };
        let call = Self::create_call(sandbox, limits);
        let mut problems = call.problems.clone();
        problems.extend(sandbox.cgroups.problems().iter().cloned());
        let events = Self::probe_events(sandbox, limits, &call).unwrap_or_else(|e| {
            vec![LaunchEvent::Refused {
                reason: format!("the sandbox launcher could not be started: {e}"),
            }]
        });
        let cgroup_report = call.report.clone();
        drop(call);
        let mut report = sandbox::build_report(
            profile,
            limits,
            cgroup_report,
            &problems,
            &events,
            Default::default(),
        );
        for event in &events {
            if let LaunchEvent::Refused { reason } = event {
                report.downgrades.push(reason.clone());
            }
        }
        report
    }

    fn probe_events(
        sandbox: &Sandbox,
        limits: &ExecLimits,
        call: &CallCgroup,
    ) -> std::io::Result<Vec<LaunchEvent>> {
        use std::io::Read;
        let pipes = LaunchPipes::new(None)?;
        let fds = (pipes.report_write.as_raw_fd(), None);
        let spec = Self::spec(
            sandbox,
            limits,
            call,
            CallCommand::default(),
            &sandbox.known_repositories(),
            fds,
        );
        let spec = serde_json::to_string(&spec).map_err(std::io::Error::other)?;
        let ruleset = sandbox.ruleset(!limits.network);
        // Without the runtime: this runs at start-up.
        let mut child = start_launcher(
            sandbox,
            LAUNCHER_ARG,
            spec,
            &pipes.inherited(ruleset),
            LauncherStart::Detached,
        )?;
        let report_read = pipes.into_report_read();
        // The probe runs nothing; it ends in milliseconds. Bound it anyway.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while child.try_wait()?.is_none() {
            if std::time::Instant::now() > deadline {
                call.kill();
                // Dropping it kills and reaps it.
                drop(child);
                return Err(std::io::Error::other(
                    "the sandbox probe did not finish in 5 s",
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut bytes = Vec::new();
        std::fs::File::from(report_read)
            .take(64 * 1024)
            .read_to_end(&mut bytes)?;
        Ok(parse_report(&bytes))
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
