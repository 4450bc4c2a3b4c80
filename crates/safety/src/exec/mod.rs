//! Execution: run an argv with no shell, a scrubbed environment, `/dev/null` as stdin, a new
//! session, a timeout and bounded capture; kill the whole process tree on timeout, overflow
//! or cancellation, and drain the pipes with a deadline so a backgrounded grandchild that
//! holds stdout open cannot hang the call (see `docs/terminal.md` and `docs/sandbox.md`).
//!
//! With the kernel sandbox on (the default), every command starts through the sandbox
//! launcher ([`launcher`]): the server's own binary in a helper mode that joins the call's
//! cgroups ([`cgroup`]), sets rlimits, enters user/PID(/net) namespaces, applies Landlock
//! ([`filesystem`]) and seccomp ([`seccomp`]), then `execve`s the command. Limits come from
//! a resource [`profile`]; what was really applied is reported per call ([`sandbox`]).
//!
//! A call goes through these parts, each in a module of its own:
//! - `launch`: the server's side of a launcher: the call's cgroup folders, the launch spec,
//!   the report pipe, the start of the launcher, and reading back what it applied;
//! - `warm`: a launcher started ahead of its call, so the call pays only for what depends on it;
//! - `gate` ([`Gate`]): the command waits just before `execve` until its audit intent
//!   record is durable;
//! - `supervise`: wait, timeout, overflow and cancellation, and the kill of the whole tree;
//! - `capture`: the bounded capture of stdout and stderr and the drain with a deadline.
//!
//! [`Executor`] ties them together. The servers never see this module's internals: they
//! hand the terminal flow a command string and get an envelope back.

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

mod capture;
mod gate;
mod launch;
mod supervise;
mod warm;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::jail::ContainedDir;
use crate::redact::Captured;

pub use capture::DRAIN_DEADLINE;
pub use gate::{Gate, GateOpener};
pub use launcher::{LAUNCHER_ARG, launcher_main};
pub use profile::Profile;
pub use sandbox::{Sandbox, SandboxConfig, SandboxReport};

use launch::{LaunchPipes, LauncherStart, start_launcher};
use launcher::LaunchEvent;
use supervise::{outcome, supervise};

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
    pub(crate) fn overflow_kill_bytes(&self) -> u64 {
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
    /// Also take the SHA-256 of every byte of stdout and stderr (the guard's `guard_spawn`
    /// answers with these instead of the text).
    pub hash_output: bool,
}

/// Why the command stopped, when it did not simply exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It exited (or died of a signal) on its own.
    Exited,
    /// It ran past the timeout; the whole tree was killed.
    TimedOut,
    /// A stream passed `ExecLimits::overflow_kill_bytes`; the whole tree was killed.
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
    /// SHA-256 of every byte read from stdout (with `ExecRequest::hash_output`): all of
    /// the stream, or up to where it was stopped for endless output.
    pub stdout_sha256: Option<[u8; 32]>,
    /// SHA-256 of every byte read from stderr, as `stdout_sha256`.
    pub stderr_sha256: Option<[u8; 32]>,
    /// The host pid of the process the server started (the command, or with the sandbox
    /// on, the launcher that became it, or that started it in a PID namespace).
    pub pid: u32,
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

impl ExecRequest<'_> {
    /// The full argv, argv\[0\] first.
    fn argv(&self) -> Vec<String> {
        let mut argv = Vec::with_capacity(self.args.len() + 1);
        argv.push(self.argv0.clone());
        argv.extend(self.args.iter().cloned());
        argv
    }
}

/// Runs commands. One per server.
#[derive(Debug, Clone, Default)]
pub struct Executor {
    sandbox: Option<Arc<Sandbox>>,
    /// The launchers started ahead of their calls.
    ahead: warm::StartedAhead,
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
            argv: &request.argv(),
            env: &request.env,
            cwd: Some(request.cwd.handle_fd()),
            keep: &[],
            gate: request.gate.map(Gate::raw),
            identity: self.plain_identity,
        })
    }

    /// Run to completion, timeout, overflow or cancellation. No process of the call survives.
    pub async fn run(
        &self,
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let Some(sandbox) = self.sandbox.as_deref() else {
            let child = self.spawn_plain(request).map_err(ExecError::Spawn)?;
            let supervised =
                supervise(child, &request.limits, cancel, None, request.hash_output).await;
            let report =
                sandbox::unsandboxed_report(request.profile, &request.limits, self.plain_identity);
            return Ok(outcome(supervised, report));
        };
        self.ahead.remember_limits(&request.limits);
        let result = match self.ahead.take_or_wait().await {
            Some(slot) => match self.ahead.run(sandbox, slot, request, cancel).await {
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
        if let Some(sandbox) = &self.sandbox {
            self.ahead.schedule(sandbox);
        }
        result
    }

    /// Start a launcher for this call now.
    async fn run_cold(
        &self,
        sandbox: &Sandbox,
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let limits = &request.limits;
        let call = launch::create_call(sandbox, limits);
        let problems = launch::precheck(sandbox, request.profile, limits, &call)?;
        let pipes = LaunchPipes::new(request.gate).map_err(ExecError::Spawn)?;
        let spec = launch::call_spec(sandbox, request, &call, Some(&pipes));
        if spec.pid_namespace {
            // This host's trees die with a PID namespace, which only a launcher started for
            // its call makes: starting one ahead would be thrown away.
            self.ahead.mark_unusable();
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
        launch::supervise_launch(request, cancel, child, report_read, call, problems, false).await
    }

    /// The pid of the launcher waiting for the next call, if one is (tests).
    pub fn next_launcher_pid(&self) -> Option<i32> {
        self.ahead.next_pid()
    }

    /// Start the launcher for the next call now and wait until it is in place (tests, and
    /// the benchmark's warm-up).
    pub fn prepare_next_launcher(&self) -> std::io::Result<bool> {
        let Some(sandbox) = self.sandbox.as_deref() else {
            return Ok(false);
        };
        self.ahead.prepare(sandbox)?;
        Ok(true)
    }

    /// Start-up probe: run the launcher through every step with nothing to execute and
    /// report what the kernel really granted. Synchronous (called before the runtime).
    pub fn probe(&self, profile: Profile, limits: &ExecLimits) -> SandboxReport {
        let Some(sandbox) = self.sandbox.as_deref() else {
            return sandbox::unsandboxed_report(profile, limits, self.plain_identity);
        };
        let call = launch::create_call(sandbox, limits);
        let mut problems = call.problems.clone();
        problems.extend(sandbox.cgroups.problems().iter().cloned());
        let events = launch::probe_events(sandbox, limits, &call).unwrap_or_else(|e| {
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
}
