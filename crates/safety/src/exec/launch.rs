//! The server's side of a sandbox launcher: the call's cgroup folders, the launch spec
//! (what to run and how to confine it), the report pipe and the start of the launcher
//! process, then, once a launcher holds the call, its supervision and the report it wrote
//! of what it really applied. The launcher's own side, in the process it starts, is
//! [`super::launcher`]; a launcher started ahead of its call is [`super::warm`].

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::capture::DRAIN_DEADLINE;
use super::cgroup::CallCgroup;
use super::launcher::{self, LAUNCHER_ARG, LaunchEvent, LaunchSpec};
use super::supervise::{outcome, supervise};
use super::{
    ExecError, ExecLimits, ExecOutcome, ExecRequest, Gate, Profile, Sandbox, filesystem, sandbox,
    spawn,
};

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
pub(super) struct LaunchPipes {
    report_read: OwnedFd,
    report_write: OwnedFd,
    /// The read end of the call's gate, when it has one.
    gate: Option<i32>,
}

impl LaunchPipes {
    pub(super) fn new(gate: Option<&Gate>) -> std::io::Result<LaunchPipes> {
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
    pub(super) fn into_report_read(self) -> OwnedFd {
        self.report_read
    }

    /// The launcher's end, kept open across its `execve`, and the Landlock ruleset.
    pub(super) fn inherited(&self, ruleset: Option<&filesystem::Prepared>) -> Vec<i32> {
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
pub(super) enum LauncherStart<'a> {
    /// Output collected, waited on through the runtime; in the folder `cwd` when given.
    Async(Option<std::os::fd::BorrowedFd<'a>>),
    /// No runtime, output discarded (the start-up probe), in the jail root.
    Detached,
}

/// Start the sandbox launcher, `<launcher> <mode> <spec as JSON>`, with no environment and
/// only the descriptors in `keep`, through the same child steps as every command.
pub(super) fn start_launcher(
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

/// What a launch spec runs: the program (`None`: the probe), its argv and environment, and
/// the working folder relative to the jail.
#[derive(Default)]
struct CallCommand {
    program: Option<PathBuf>,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    cwd_relative: PathBuf,
}

/// Refuse before spawning when the policy requires the kernel sandbox and the cgroup
/// layer is already short of it.
pub(super) fn precheck(
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

/// Fresh folders for a launcher started for its call, limited so that the command holds
/// exactly its process limit beside what the launcher keeps there
/// ([`launcher::beside_command`], with the PID namespace [`spec`] will ask for).
pub(super) fn create_call(sandbox: &Sandbox, limits: &ExecLimits) -> CallCgroup {
    let reserved = sandbox.cgroups.reserve();
    let beside = launcher::beside_command(sandbox.config.namespaces, !reserved.kills_tree());
    reserved.limit(limits.processes, limits.memory_bytes, beside)
}

/// The spec of a launch: `command` confined by the sandbox's rules and the call's limits and
/// folders, reporting on `report_fd`, waiting at `gate_fd`.
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

/// The launcher's spec for this request. Without `pipes` (a launcher started ahead,
/// which has its report pipe and gets the gate with the call) the descriptor numbers
/// are placeholders it fills in.
pub(super) fn call_spec(
    sandbox: &Sandbox,
    request: &ExecRequest<'_>,
    call: &CallCgroup,
    pipes: Option<&LaunchPipes>,
) -> LaunchSpec {
    let fds = match pipes {
        Some(p) => (p.report_write.as_raw_fd(), p.gate),
        None => (-1, request.gate.map(|_| -1)),
    };
    spec(
        sandbox,
        &request.limits,
        call,
        CallCommand {
            program: Some(request.program.clone()),
            argv: request.argv(),
            env: request.env.clone(),
            cwd_relative: request.cwd.relative().to_path_buf(),
        },
        &sandbox.known_repositories(),
        fds,
    )
}

/// Everything after a launcher holds the call: supervise, collect its report, kill and
/// remove the call's cgroups, map a refusal to its error.
pub(super) async fn supervise_launch(
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
    let supervised = supervise(child, limits, cancel, Some(&mut call), request.hash_output).await;
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

/// The start-up probe's launch: a launcher that applies every step and runs nothing, waited
/// on without the runtime; what it reported.
pub(super) fn probe_events(
    sandbox: &Sandbox,
    limits: &ExecLimits,
    call: &CallCgroup,
) -> std::io::Result<Vec<LaunchEvent>> {
    use std::io::Read;
    let pipes = LaunchPipes::new(None)?;
    let fds = (pipes.report_write.as_raw_fd(), None);
    let spec = spec(
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
