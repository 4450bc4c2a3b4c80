//! The sandbox launcher: the server starts every command as `safe-mcp __sandbox-exec SPEC`,
//! a fresh single-threaded process that confines itself and then `execve`s the command.
//! Single-threaded matters: `unshare`/`clone` of a user namespace fails in a threaded
//! process, and Landlock and seccomp (without TSYNC) bind only the calling thread.
//!
//! Order (each step named after the attack it stops):
//! 0. (in the server's spawn, `sys::spawn_vfork`, before this binary even starts) `setsid`,
//!    parent-death signal with a re-check, working folder entered by handle;
//! 1. join the call's cgroups before anything forks, so every process the command starts
//!    is born inside them, `setsid` or not: v1 by writing `0` to `tasks` (one thread, no
//!    global lock); v2 by cloning the process that becomes the command straight into it
//!    (`CLONE_INTO_CGROUP`) when namespaces are on, else through `cgroup.procs`, whose
//!    global lock can wait for an RCU grace period (a launcher started ahead pays that
//!    before its call);
//! 2. rlimits: core dumps off, open files, file size, CPU time (and memory per process
//!    when no memory cgroup exists);
//! 3. namespaces only where they do something: network for a profile without network, PID
//!    where no cgroup kills the tree (the clone is then PID 1; when it ends, the kernel
//!    kills everything left inside), user only for a process that is not root and needs
//!    one to make the others;
//! 4. the read-only view ([`super::view`]), after every cgroup write (cgroupfs is read-only
//!    in it); a launcher started ahead builds it before its call;
//! 5. the bounding set emptied, a root launcher's identity switched to the command's
//!    unprivileged uid and gid ([`switch_identity`]), every other capability set emptied;
//! 6. Landlock; 7. seccomp, last; 8. the start gate, `execve`.
//!
//! What was really applied goes back to the server as JSON lines on an inherited pipe, so
//! each result reports the truth of its own call, not a start-up guess.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

use super::filesystem::{self, FsRules, LandlockReport};
use super::seccomp::{self, FilterChoice};
use super::spawn::ExecStrings;
use super::sys;
use super::view::{self, ViewReport};

/// The hidden first argument that starts the binary in sandbox-launcher mode.
pub const LAUNCHER_ARG: &str = "__sandbox-exec";

/// Exit code of a launcher that refused to run the command.
pub const REFUSED_EXIT: u8 = 126;

/// Everything the launcher needs, passed as one JSON argument.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchSpec {
    /// The resolved executable; `None` for the start-up probe (apply everything, run nothing).
    pub program: Option<PathBuf>,
    /// The full argv, argv\[0\] first.
    pub argv: Vec<String>,
    /// The command's whole environment.
    pub env: Vec<(String, String)>,
    /// Landlock rules.
    pub fs: FsRules,
    /// The descriptor number of the ruleset the server built from `fs` once, and what it
    /// gives; `None`: the launcher builds the ruleset itself.
    pub landlock_ruleset: Option<(i32, LandlockReport)>,
    /// RLIMIT_NOFILE.
    pub open_files: u64,
    /// RLIMIT_FSIZE.
    pub file_size_bytes: u64,
    /// RLIMIT_CPU (soft; the hard limit, one second later, is SIGKILL).
    pub cpu_seconds: u64,
    /// RLIMIT_DATA, only when no memory cgroup holds the limit.
    pub data_bytes: Option<u64>,
    /// Namespaces are allowed: a network namespace when `fs.deny_network` (inside a user
    /// namespace only for a launcher that is not root and needs one to make it).
    pub namespaces: bool,
    /// Also a PID namespace (when no cgroup can kill the whole tree: its teardown costs an
    /// RCU grace period, so it is used only where it is the tree-kill mechanism).
    pub pid_namespace: bool,
    /// The call's cgroup v2 folder (tree kill).
    pub cgroup_v2: Option<PathBuf>,
    /// The call's cgroup v1 `tasks` files (process and memory limits).
    pub cgroup_v1_tasks: Vec<PathBuf>,
    /// The descriptor number of the report pipe.
    pub report_fd: i32,
    /// The descriptor number of the gate's read end: the command is not `execve`d until the
    /// server writes `g` to it (its audit intent record is durable). `None`: no gate.
    #[serde(default)]
    pub gate_fd: Option<i32>,
    /// The server's pid (the parent re-check).
    pub parent_pid: i32,
    /// Refuse to run when Landlock or seccomp cannot be applied.
    pub require: bool,
    /// Refuse to run when no PID namespace can be made (no cgroup kills the tree).
    pub require_namespaces: bool,
    /// Build the read-only view ([`view`]) around this jail root (`None`: no view).
    #[serde(default)]
    pub view: Option<PathBuf>,
    /// The working folder, relative to the jail root (entered again inside the view).
    #[serde(default)]
    pub cwd_relative: PathBuf,
    /// Jail-relative `.git` entries earlier calls protected: protected again first.
    #[serde(default)]
    pub view_known: Vec<PathBuf>,
    /// Run the command as this uid and gid (a root server never runs one as root).
    #[serde(default)]
    pub run_as: Option<(u32, u32)>,
    /// seccomp refuses every change of file metadata: set by the server when no view is
    /// asked for, and by the launcher when the view could not be made.
    #[serde(default)]
    pub deny_metadata: bool,
}

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
struct Reporter {
    pipe: Option<std::fs::File>,
    pending: Vec<u8>,
}

impl Reporter {
    fn new(pipe: Option<std::fs::File>) -> Reporter {
        Reporter {
            pipe,
            pending: Vec::new(),
        }
    }

    fn send(&mut self, event: &LaunchEvent) {
        if self.pipe.is_some()
            && let Ok(line) = serde_json::to_vec(event)
        {
            self.pending.extend_from_slice(&line);
            self.pending.push(b'\n');
        }
    }

    /// Write what was collected. Must be called before a clone or fork (the child would
    /// write the same lines again), `execve` and `std::process::exit`.
    fn flush(&mut self) {
        if let Some(pipe) = self.pipe.as_mut()
            && !self.pending.is_empty()
        {
            let _ = pipe.write_all(&self.pending);
        }
        self.pending.clear();
    }

    fn close(&mut self) {
        self.flush();
        self.pipe = None;
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The hidden first argument of a launcher started ahead of its call ([`WarmSpec`]).
pub const WARM_ARG: &str = "__sandbox-warm";

/// What a launcher started ahead of its call gets at start: where to report, where its
/// call will come from, which cgroups to join now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmSpec {
    /// The descriptor number of the report pipe.
    pub report_fd: i32,
    /// The descriptor number of its end of the call channel (a `SOCK_SEQPACKET` pair): one
    /// message, the call's [`LaunchSpec`] as JSON, with the working folder and (when the
    /// call has one) the gate as `SCM_RIGHTS`.
    pub channel_fd: i32,
    /// Inherited Landlock ruleset descriptors (made close-on-exec at once; the call's spec
    /// names the one it uses).
    pub ruleset_fds: Vec<i32>,
    /// The call's cgroup v1 `tasks` files, joined at start (off the request path).
    pub cgroup_v1_tasks: Vec<PathBuf>,
    /// The call's cgroup v2 folder, joined at start through `cgroup.procs` (off the request
    /// path: that move takes the kernel's global threadgroup lock).
    #[serde(default)]
    pub cgroup_v2: Option<PathBuf>,
    /// Build the read-only view around this jail root ahead of the call.
    #[serde(default)]
    pub view: Option<PathBuf>,
    /// Jail-relative `.git` entries earlier calls protected.
    #[serde(default)]
    pub view_known: Vec<PathBuf>,
}

/// The largest call message a started-ahead launcher accepts.
pub const MAX_CALL_MESSAGE: usize = 256 * 1024;

/// Entry point of the sandbox launcher mode. `main` calls this first, before any thread or
/// runtime exists; it returns `None` when the process was not started as a launcher.
pub fn launcher_main() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let _self = args.next();
    let mode = args.next()?;
    if mode == WARM_ARG {
        sys::restore_default_signals();
        let warm: Option<WarmSpec> = args
            .next()
            .and_then(|a| a.into_string().ok())
            .and_then(|s| serde_json::from_str(&s).ok());
        return Some(match warm {
            Some(warm) => warm_main(warm),
            None => {
                eprintln!("safe-mcp sandbox launcher: missing or malformed warm spec");
                ExitCode::from(REFUSED_EXIT)
            }
        });
    }
    if mode != LAUNCHER_ARG {
        return None;
    }
    sys::restore_default_signals();
    let spec: Option<LaunchSpec> = args
        .next()
        .and_then(|a| a.into_string().ok())
        .and_then(|s| serde_json::from_str(&s).ok());
    let Some(spec) = spec else {
        eprintln!("safe-mcp sandbox launcher: missing or malformed launch spec");
        return Some(ExitCode::from(REFUSED_EXIT));
    };
    let reporter = Reporter::new(sys::adopt_inherited_fd(spec.report_fd).map(std::fs::File::from));
    // Close-on-exec from here on: the command never holds the ruleset.
    let ruleset = spec.landlock_ruleset.as_ref().and_then(|(fd, report)| {
        Some(filesystem::Prepared {
            fd: sys::adopt_inherited_fd(*fd)?,
            report: report.clone(),
        })
    });
    Some(launch(spec, ruleset.as_ref(), reporter))
}

/// A launcher started ahead of its call. While waiting is free: join the call's cgroups,
/// compile both seccomp filters and install the one every profile shares, drop every
/// capability but `CAP_SYS_ADMIN` from the bounding set (it is needed only to make a network
/// namespace; the rest of the sets are dropped with the call). Then take the
/// call from the channel, do only what depends on it, and become the command. If the
/// server goes away first, the parent-death signal (set by the server's spawn) or the
/// closed channel ends it without running anything.
fn warm_main(warm: WarmSpec) -> ExitCode {
    use std::os::fd::IntoRawFd;
    let mut reporter =
        Reporter::new(sys::adopt_inherited_fd(warm.report_fd).map(std::fs::File::from));
    // Close-on-exec from here on: the command never holds a ruleset or the channel.
    let mut rulesets: Vec<(i32, OwnedFd)> = warm
        .ruleset_fds
        .iter()
        .filter_map(|&fd| Some((fd, sys::adopt_inherited_fd(fd)?)))
        .collect();
    let Some(channel) = sys::adopt_inherited_fd(warm.channel_fd) else {
        return refuse(
            &mut reporter,
            "the launcher's call channel is missing".into(),
        );
    };
    // Off the call's path, so the v2 move through `cgroup.procs` is fine here.
    let joined = join_cgroups(&warm.cgroup_v1_tasks, warm.cgroup_v2.as_deref());
    // The view too: the mount namespace costs its copy of the host's mount table here, not
    // on the call's path.
    let built_view = warm
        .view
        .as_deref()
        .map(|jail| view::enter(jail, &warm.view_known));
    let deny_metadata = !matches!(built_view, Some(Ok(_)));
    let mut ahead = Ahead {
        filters: [false, true]
            .into_iter()
            .map(|deny| FilterChoice {
                deny_network: deny,
                deny_user_namespaces: deny,
                deny_metadata,
            })
            .filter_map(|choice| Some((choice, seccomp::build(choice).ok()?)))
            .collect(),
        ..Ahead::default()
    };
    if rustix::process::geteuid().is_root() && drop_bounding_set(Some(CAP_SYS_ADMIN)).is_ok() {
        // The last one goes in `confine`: making a network namespace needs it.
        ahead.bounding_left = Some(CAP_SYS_ADMIN);
    }
    // Every profile's filter now (this process needs none of what it refuses); a profile
    // without network stacks its stricter filter on top when the call comes.
    let standard = FilterChoice {
        deny_network: false,
        deny_user_namespaces: false,
        deny_metadata,
    };
    if let Some((_, programs)) = ahead.filters.iter().find(|(c, _)| *c == standard)
        && seccomp::install(programs).is_ok()
    {
        ahead.installed = Some(standard);
    }
    let (message, fds) = match receive_call(&channel) {
        Ok(Some(call)) => call,
        // The server dropped the slot (shut down, or never used it): nothing to do.
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            return refuse(
                &mut reporter,
                format!("the call could not be received: {e}"),
            );
        }
    };
    drop(channel);
    let mut spec: LaunchSpec = match serde_json::from_slice(&message) {
        Ok(spec) => spec,
        Err(e) => return refuse(&mut reporter, format!("malformed call spec: {e}")),
    };
    reporter.send(&joined);
    if let Some(reason) = required_join_refusal(&spec, &joined) {
        return refuse(&mut reporter, reason);
    }
    let mut fds = fds.into_iter();
    match fds.next() {
        Some(cwd) => {
            let entered = match (&built_view, &spec.view) {
                (Some(Ok(_)), Some(jail)) => {
                    view::enter_cwd(jail, &spec.cwd_relative, std::os::fd::AsFd::as_fd(&cwd))
                }
                _ => rustix::process::fchdir(&cwd).map_err(|e| e.to_string()),
            };
            if let Err(e) = entered {
                return refuse(
                    &mut reporter,
                    format!("cannot enter the working folder: {e}"),
                );
            }
        }
        None => {
            return refuse(
                &mut reporter,
                "the call came without its working folder".into(),
            );
        }
    }
    if spec.gate_fd.is_some() {
        match fds.next() {
            Some(gate) => spec.gate_fd = Some(gate.into_raw_fd()),
            None => return refuse(&mut reporter, "the call came without its gate".into()),
        }
    }
    drop(fds);
    let ruleset = spec.landlock_ruleset.as_ref().and_then(|(number, report)| {
        let at = rulesets.iter().position(|(n, _)| n == number)?;
        Some(filesystem::Prepared {
            fd: rulesets.swap_remove(at).1,
            report: report.clone(),
        })
    });
    drop(rulesets);
    if spec.view.is_some() {
        let event = match built_view {
            Some(Ok(report)) => LaunchEvent::View {
                report: Some(report),
                error: None,
            },
            Some(Err(error)) => LaunchEvent::View {
                report: None,
                error: Some(error),
            },
            None => LaunchEvent::View {
                report: None,
                error: Some("the launcher started ahead made no view".into()),
            },
        };
        if let Some(reason) = view_refusal(&spec, &event) {
            reporter.send(&event);
            return refuse(&mut reporter, reason);
        }
        reporter.send(&event);
        spec.deny_metadata |= deny_metadata;
    }
    let exec = match exec_parts(&spec) {
        Ok(e) => e,
        Err(reason) => return refuse(&mut reporter, reason),
    };
    if let Err(code) = prepare(&spec, &mut reporter) {
        return code;
    }
    let namespaces = if spec.namespaces && spec.fs.deny_network {
        enter_network_namespace()
    } else {
        LaunchEvent::Namespaces {
            active: Vec::new(),
            error: None,
        }
    };
    reporter.send(&namespaces);
    if let Err(reason) = confine_with(
        &spec,
        ruleset.as_ref(),
        &mut reporter,
        &ahead,
        spec.deny_metadata,
    ) {
        return refuse(&mut reporter, reason);
    }
    exec_or_report(exec.as_ref(), &mut reporter)
}

/// An empty network namespace for this process (the strict profile), with a user
/// namespace around it only where one is needed to make it (not root).
fn enter_network_namespace() -> LaunchEvent {
    // Read before unshare: inside a new user namespace without a map they read as the
    // overflow id (65534), and a map of that is refused.
    let (uid, gid) = (rustix::process::geteuid(), rustix::process::getegid());
    let mut flags = libc::CLONE_NEWNET;
    let mut active = vec!["net".to_string()];
    // Root, or already root of the view's own user namespace: no (second) user namespace.
    let needs_user = !view::holds_sys_admin();
    if needs_user {
        flags |= libc::CLONE_NEWUSER;
        active.insert(0, "user".into());
    }
    if let Err(e) = sys::unshare(flags) {
        return LaunchEvent::Namespaces {
            active: Vec::new(),
            error: Some(format!("unshare: {e}")),
        };
    }
    let mapped = if needs_user {
        write_id_maps(Path::new("/proc/self"), uid.as_raw(), gid.as_raw())
    } else {
        Ok(())
    };
    LaunchEvent::Namespaces {
        active,
        error: mapped.err(),
    }
}

/// One call message and its descriptors; `None` when the server closed the channel.
fn receive_call(channel: &OwnedFd) -> std::io::Result<Option<(Vec<u8>, Vec<OwnedFd>)>> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags};
    let mut message = vec![0u8; MAX_CALL_MESSAGE];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = loop {
        match rustix::net::recvmsg(
            channel,
            &mut [std::io::IoSliceMut::new(&mut message)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Err(rustix::io::Errno::INTR) => continue,
            other => break other?,
        }
    };
    let mut fds = Vec::new();
    for part in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = part {
            fds.extend(rights);
        }
    }
    if received.bytes == 0 && fds.is_empty() {
        return Ok(None);
    }
    if received.flags.contains(ReturnFlags::TRUNC) || received.flags.contains(ReturnFlags::CTRUNC) {
        return Err(std::io::Error::other("the call message was cut off"));
    }
    message.truncate(received.bytes);
    Ok(Some((message, fds)))
}

fn refuse(reporter: &mut Reporter, reason: String) -> ExitCode {
    reporter.send(&LaunchEvent::Refused { reason });
    ExitCode::from(REFUSED_EXIT)
}

fn set_limit(
    resource: rustix::process::Resource,
    name: &str,
    value: u64,
    hard: u64,
    set: &mut Vec<String>,
    problems: &mut Vec<String>,
) {
    // Raising a hard limit is refused even to root (no CAP_SYS_RESOURCE): only ever lower.
    let current = rustix::process::getrlimit(resource);
    let cap = |v: u64| current.maximum.map_or(v, |m| v.min(m));
    let limit = rustix::process::Rlimit {
        current: Some(cap(value)),
        maximum: Some(cap(hard)),
    };
    match rustix::process::setrlimit(resource, limit) {
        Ok(()) => set.push(format!("{name}={}", cap(value))),
        Err(e) => problems.push(format!("RLIMIT_{name}: {e}")),
    }
}

/// Step 1 (v1 part, and v2 when no namespace child will be cloned into it).
/// Move this process (one thread) into the call's cgroups: v1 through `tasks` (no global
/// lock), v2 through `cgroup.procs` (the kernel's global threadgroup lock, which can wait
/// for an RCU grace period: callers on a call's path clone into v2 instead when they can).
fn join_cgroups(v1_tasks: &[PathBuf], v2: Option<&Path>) -> LaunchEvent {
    let mut v1_failed = Vec::new();
    for tasks in v1_tasks {
        // `0` is the calling thread; the launcher has only one.
        if let Err(e) = std::fs::write(tasks, "0") {
            v1_failed.push(format!("{}: {e}", tasks.display()));
        }
    }
    let v2_failed = v2.and_then(|dir| {
        std::fs::write(dir.join("cgroup.procs"), "0")
            .err()
            .map(|e| format!("{}: {e}", dir.display()))
    });
    LaunchEvent::CgroupJoin {
        v2_failed,
        v1_failed,
    }
}

/// Why the call must not run: the kernel sandbox is required and a cgroup join failed.
fn required_join_refusal(spec: &LaunchSpec, joined: &LaunchEvent) -> Option<String> {
    let why = join_failed(joined).filter(|_| spec.require)?;
    Some(format!(
        "the kernel sandbox is required but the call's cgroup could not be joined: {why}"
    ))
}

fn join_failed(event: &LaunchEvent) -> Option<String> {
    match event {
        LaunchEvent::CgroupJoin {
            v2_failed,
            v1_failed,
        } if v2_failed.is_some() || !v1_failed.is_empty() => Some(
            v2_failed
                .iter()
                .chain(v1_failed.iter())
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    }
}

/// Step 2: rlimits.
fn prepare(spec: &LaunchSpec, reporter: &mut Reporter) -> Result<(), ExitCode> {
    use rustix::process::Resource;
    let mut problems = Vec::new();
    let mut rlimits = Vec::new();
    // A crashing command must not write a core file (it may hold secrets) into the jail.
    set_limit(Resource::Core, "CORE", 0, 0, &mut rlimits, &mut problems);
    // Descriptor exhaustion of the host, and the shellguard "fd budget" actually enforced.
    set_limit(
        Resource::Nofile,
        "NOFILE",
        spec.open_files,
        spec.open_files,
        &mut rlimits,
        &mut problems,
    );
    // Filling the disk through the jail: no file may grow past this.
    set_limit(
        Resource::Fsize,
        "FSIZE",
        spec.file_size_bytes,
        spec.file_size_bytes,
        &mut rlimits,
        &mut problems,
    );
    // A CPU burner that outlives its server: SIGXCPU at the soft limit, SIGKILL a second later.
    set_limit(
        Resource::Cpu,
        "CPU",
        spec.cpu_seconds,
        spec.cpu_seconds.saturating_add(1),
        &mut rlimits,
        &mut problems,
    );
    if let Some(data) = spec.data_bytes {
        // No memory cgroup: cap each process's heap instead (RLIMIT_AS would break
        // runtimes that reserve address space, such as Go and the JVM).
        set_limit(
            Resource::Data,
            "DATA",
            data,
            data,
            &mut rlimits,
            &mut problems,
        );
    }
    // The server may have died between spawn and here; the parent-death signal set by its
    // spawn covers later deaths, this covers the window before it.
    let ppid = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get());
    if ppid != spec.parent_pid {
        return Err(ExitCode::from(REFUSED_EXIT));
    }
    reporter.send(&LaunchEvent::Prepared { rlimits, problems });
    Ok(())
}

/// The view (after every cgroup write: cgroupfs is read-only in it), then steps 4 and 5:
/// Landlock, then seccomp. `Err` when `require` and something is missing.
fn confine(
    spec: &LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    reporter: &mut Reporter,
) -> Result<(), String> {
    let mut deny_metadata = spec.deny_metadata;
    if let Some(jail) = &spec.view {
        let event = match cold_view(jail, &spec.view_known, &spec.cwd_relative) {
            Ok(report) => LaunchEvent::View {
                report: Some(report),
                error: None,
            },
            Err(error) => LaunchEvent::View {
                report: None,
                error: Some(error),
            },
        };
        deny_metadata |= matches!(event, LaunchEvent::View { report: None, .. });
        let refusal = view_refusal(spec, &event);
        reporter.send(&event);
        if let Some(reason) = refusal {
            return Err(reason);
        }
    }
    confine_with(spec, ruleset, reporter, &Ahead::default(), deny_metadata)
}

/// What a launcher started ahead did before its call came.
#[derive(Default)]
struct Ahead {
    /// seccomp filters compiled ahead.
    filters: Vec<(FilterChoice, Vec<seccompiler::BpfProgram>)>,
    /// The filter already installed (the standard one: every profile's rules).
    installed: Option<FilterChoice>,
    /// The bounding set already holds nothing but this capability.
    bounding_left: Option<u32>,
}

/// [`confine`] after what a launcher started ahead already did: filters compiled ahead
/// are used, one already installed is not installed again (a stricter one is stacked on
/// top), and only what is left of the bounding set is dropped.
fn confine_with(
    spec: &LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    reporter: &mut Reporter,
    ahead: &Ahead,
    deny_metadata: bool,
) -> Result<(), String> {
    use std::os::fd::AsFd;
    let (identity, capabilities) = drop_capabilities(ahead.bounding_left, spec.run_as);
    let capabilities_error = match (&identity, &capabilities) {
        (Some(LaunchEvent::Identity { error: Some(e), .. }), _) => Some(format!("identity: {e}")),
        (_, LaunchEvent::Capabilities { error, .. }) => error.clone(),
        _ => None,
    };
    if let Some(identity) = &identity {
        reporter.send(identity);
    }
    reporter.send(&capabilities);
    // A command must never run as root, whatever `require` says.
    if let Some(LaunchEvent::Identity { error: Some(e), .. }) = &identity {
        return Err(format!("the command's identity could not be set: {e}"));
    }
    let applied = match ruleset {
        Some(prepared) => filesystem::restrict_with(prepared.fd.as_fd(), &prepared.report),
        None => filesystem::restrict_self(&spec.fs),
    };
    let (landlock, landlock_error) = match applied {
        Ok(r) if r.confines_writes() => (Some(r), None),
        Ok(r) => {
            let why = format!(
                "Landlock is {} at ABI {} (ABI {} is needed to confine writes)",
                r.status.replace('_', " "),
                r.abi,
                filesystem::MINIMUM_ABI
            );
            (Some(r), Some(why))
        }
        Err(e) => (None, Some(e)),
    };
    let choice = FilterChoice {
        deny_network: spec.fs.deny_network,
        deny_user_namespaces: spec.fs.deny_network,
        deny_metadata,
    };
    let installed = if ahead.installed == Some(choice) {
        Ok(())
    } else {
        match ahead.filters.iter().find(|(c, _)| *c == choice) {
            Some((_, programs)) => seccomp::install(programs),
            None => seccomp::build(choice).and_then(|p| seccomp::install(&p)),
        }
    };
    let (seccomp, seccomp_error) = match installed {
        Ok(()) => (Some(choice.describe().to_string()), None),
        Err(e) => (None, Some(e)),
    };
    let missing: Vec<String> = [
        capabilities_error.map(|e| format!("capabilities: {e}")),
        landlock_error.as_ref().map(|e| format!("Landlock: {e}")),
        seccomp_error.as_ref().map(|e| format!("seccomp: {e}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    reporter.send(&LaunchEvent::Confined {
        landlock,
        landlock_error,
        seccomp,
        seccomp_error,
    });
    if spec.require && !missing.is_empty() {
        return Err(format!(
            "the kernel sandbox is required but {}",
            missing.join("; ")
        ));
    }
    Ok(())
}

struct Exec {
    strings: ExecStrings,
    /// Waited on just before `execve` (see [`LaunchSpec::gate_fd`]).
    gate: Option<OwnedFd>,
}

fn exec_parts(spec: &LaunchSpec) -> Result<Option<Exec>, String> {
    let Some(program) = &spec.program else {
        return Ok(None);
    };
    Ok(Some(Exec {
        strings: ExecStrings::new(program, &spec.argv, &spec.env)?,
        // Close-on-exec from here on: the command never holds the gate.
        gate: spec.gate_fd.and_then(sys::adopt_inherited_fd),
    }))
}

/// Step 6. Only returns on failure (or for the probe, which runs nothing).
fn exec_or_report(exec: Option<&Exec>, reporter: &mut Reporter) -> ExitCode {
    let Some(exec) = exec else {
        reporter.close();
        return ExitCode::SUCCESS;
    };
    if let Some(gate) = &exec.gate
        && !super::gate_opened(gate)
    {
        // The server could not make its intent record durable: nothing runs. The server
        // knows why and says so; this line only keeps the report whole.
        reporter.send(&LaunchEvent::Refused {
            reason: "the audit intent record could not be made durable".into(),
        });
        return ExitCode::from(REFUSED_EXIT);
    }
    reporter.flush();
    let error = sys::execve(&exec.strings.program, &exec.strings.argv, &exec.strings.env);
    reporter.send(&LaunchEvent::ExecFailed {
        reason: error.to_string(),
    });
    ExitCode::from(127)
}

fn launch(
    spec: LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    mut reporter: Reporter,
) -> ExitCode {
    let exec = match exec_parts(&spec) {
        Ok(e) => e,
        Err(reason) => return refuse(&mut reporter, reason),
    };
    // With namespaces on, the clone that becomes the command (or PID 1) is born in the v2
    // folder (`clone3(CLONE_INTO_CGROUP)`): moving a process through `cgroup.procs` takes
    // the kernel's global threadgroup lock and can wait for an RCU grace period. Without,
    // the launcher joins it now.
    let v2_now = spec.cgroup_v2.as_deref().filter(|_| !spec.namespaces);
    let joined = join_cgroups(&spec.cgroup_v1_tasks, v2_now);
    reporter.send(&joined);
    if let Some(reason) = required_join_refusal(&spec, &joined) {
        return refuse(&mut reporter, reason);
    }
    if let Err(code) = prepare(&spec, &mut reporter) {
        return code;
    }
    if spec.namespaces {
        match in_namespaces(&spec, ruleset, exec.as_ref(), &mut reporter) {
            Ok(code) => return code,
            Err(error) => {
                // The launcher becomes the command after all: the processes `pids.max`
                // allowed beside it go back (a failure to is part of the same downgrade).
                let error = with_give_back(error, give_back_slack(&spec));
                reporter.send(&LaunchEvent::Namespaces {
                    active: Vec::new(),
                    error: Some(error.clone()),
                });
                // No clone was made, so nothing was born in the v2 folder: the launcher,
                // which becomes the command, joins it now (else no tree kill, unreported).
                if spec.cgroup_v2.is_some() {
                    let joined = join_cgroups(&[], spec.cgroup_v2.as_deref());
                    reporter.send(&joined);
                    if let Some(reason) = required_join_refusal(&spec, &joined) {
                        return refuse(&mut reporter, reason);
                    }
                }
                if spec.require_namespaces {
                    return refuse(
                        &mut reporter,
                        format!(
                            "the kernel sandbox is required but no PID namespace could be made \
                             and no cgroup can kill the whole tree: {error}"
                        ),
                    );
                }
            }
        }
    }
    if let Err(reason) = confine(&spec, ruleset, &mut reporter) {
        return refuse(&mut reporter, reason);
    }
    exec_or_report(exec.as_ref(), &mut reporter)
}

/// The view for a launcher started for its call: built now, and the working folder (the
/// one the launcher was started in) entered again inside it.
fn cold_view(jail: &Path, known: &[PathBuf], cwd_relative: &Path) -> Result<ViewReport, String> {
    let before = rustix::fs::open(
        ".",
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| format!("opening the working folder: {e}"))?;
    let report = view::enter(jail, known)?;
    view::enter_cwd(jail, cwd_relative, std::os::fd::AsFd::as_fd(&before))?;
    Ok(report)
}

/// Why the call must not run: the kernel sandbox is required and the view is missing, or
/// its scan for `.git` stopped early (a repository past it would be writable).
fn view_refusal(spec: &LaunchSpec, event: &LaunchEvent) -> Option<String> {
    match event {
        LaunchEvent::View { error: Some(e), .. } if spec.require => Some(format!(
            "the kernel sandbox is required but the read-only view could not be made: {e}"
        )),
        LaunchEvent::View {
            report: Some(r), ..
        } if spec.require && r.scan_truncated => Some(format!(
            "the kernel sandbox is required but the scan for .git folders stopped at {} \
                 folders: a repository beyond it would be writable",
            view::SCAN_FOLDERS
        )),
        _ => None,
    }
}

/// Become `uid:gid` (no supplementary groups): called by a root launcher, after the
/// bounding set is emptied and before the other sets are cleared (the switch needs
/// `CAP_SETUID`/`CAP_SETGID`; the kernel then clears permitted and effective itself). The
/// kernel also clears the parent-death signal on a change of credentials: it is set again,
/// and the parent checked to be the same one.
fn switch_identity(uid: u32, gid: u32) -> Result<(), String> {
    use rustix::process::{Gid, Uid};
    let parent = rustix::process::getppid();
    let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
    if uid.is_root() {
        return Err("refusing to run a command as uid 0".into());
    }
    rustix::thread::set_thread_groups(&[]).map_err(|e| format!("setgroups: {e}"))?;
    rustix::thread::set_thread_res_gid(gid, gid, gid).map_err(|e| format!("setresgid: {e}"))?;
    rustix::thread::set_thread_res_uid(uid, uid, uid).map_err(|e| format!("setresuid: {e}"))?;
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|e| format!("PR_SET_PDEATHSIG: {e}"))?;
    if rustix::process::getppid() != parent {
        return Err("the launcher's parent went away".into());
    }
    let (r, e, s) = (
        rustix::process::getuid(),
        rustix::process::geteuid(),
        rustix::process::getgid(),
    );
    if r != uid || e != uid || s != gid {
        return Err("the uid or gid did not change".into());
    }
    Ok(())
}

/// `CAP_SYS_ADMIN`: the one capability a launcher started ahead keeps until its call (a
/// network namespace needs it).
const CAP_SYS_ADMIN: u32 = 21;

/// Drop every capability still in the bounding set, except `keep`. Each drop replaces the
/// process's credentials, so only the ones present are dropped.
fn drop_bounding_set(keep: Option<u32>) -> Result<(), String> {
    use rustix::thread::CapabilitySet;
    for bit in 0..64u32 {
        if Some(bit) == keep {
            continue;
        }
        let cap = CapabilitySet::from_bits_retain(1u64 << bit);
        match rustix::thread::capability_is_in_bounding_set(cap) {
            Ok(true) => {}
            Ok(false) => continue,
            // EINVAL: beyond the kernel's last capability.
            Err(rustix::io::Errno::INVAL) => break,
            Err(e) => return Err(format!("PR_CAPBSET_READ {bit}: {e}")),
        }
        if let Err(e) = rustix::thread::remove_capability_from_bounding_set(cap) {
            return Err(format!("PR_CAPBSET_DROP {bit}: {e}"));
        }
    }
    Ok(())
}

/// Empty every capability set the command could use or regain: the bounding set (what a
/// later `execve` can give back), ambient, inheritable, permitted and effective. For root
/// this takes away every power beyond file access by uid 0 (no mounts, no raw I/O, no
/// module loading, no `CAP_DAC_OVERRIDE`); a process that holds no capabilities has
/// nothing to drop (and `no_new_privs`, set for seccomp, keeps set-uid and file
/// capabilities from adding any).
fn drop_capabilities(
    bounding_left: Option<u32>,
    run_as: Option<(u32, u32)>,
) -> (Option<LaunchEvent>, LaunchEvent) {
    let mut identity = None;
    let capabilities = drop_capabilities_then(bounding_left, || {
        if let Some((uid, gid)) = run_as {
            let switched = switch_identity(uid, gid);
            identity = Some(LaunchEvent::Identity {
                user: format!("{uid}:{gid}"),
                error: switched.err(),
            });
        }
    });
    (identity, capabilities)
}

/// [`drop_capabilities`], with `between` run after the bounding set is emptied and before
/// the other sets are.
fn drop_capabilities_then(bounding_left: Option<u32>, between: impl FnOnce()) -> LaunchEvent {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    let failed = |what: String| LaunchEvent::Capabilities {
        held: "unknown".into(),
        error: Some(what),
    };
    let before = match rustix::thread::capabilities(None) {
        Ok(sets) => sets,
        Err(e) => return failed(format!("capget: {e}")),
    };
    let held_any = !(before.effective.is_empty()
        && before.permitted.is_empty()
        && before.inheritable.is_empty());
    let dropped = match bounding_left {
        // Only one capability is left in the bounding set (dropped before the call).
        Some(bit) => {
            let cap = rustix::thread::CapabilitySet::from_bits_retain(1u64 << bit);
            match rustix::thread::capability_is_in_bounding_set(cap) {
                Ok(true) => rustix::thread::remove_capability_from_bounding_set(cap)
                    .map_err(|e| format!("PR_CAPBSET_DROP {bit}: {e}")),
                Ok(false) => Ok(()),
                Err(e) => Err(format!("PR_CAPBSET_READ {bit}: {e}")),
            }
        }
        None if held_any => drop_bounding_set(None),
        None => Ok(()),
    };
    if let Err(e) = dropped {
        return failed(e);
    }
    between();
    if let Err(e) = rustix::thread::clear_ambient_capability_set()
        && e != rustix::io::Errno::INVAL
    {
        return failed(format!("clearing the ambient set: {e}"));
    }
    if held_any {
        let none = CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        };
        if let Err(e) = rustix::thread::set_capabilities(None, none) {
            return failed(format!("capset: {e}"));
        }
    }
    match rustix::thread::capabilities(None) {
        Ok(after)
            if after.effective.is_empty()
                && after.permitted.is_empty()
                && after.inheritable.is_empty() =>
        {
            LaunchEvent::Capabilities {
                held: if held_any { "all dropped" } else { "none held" }.into(),
                error: None,
            }
        }
        Ok(_) => failed("capabilities are still held after capset".into()),
        Err(e) => failed(format!("capget: {e}")),
    }
}

/// How many processes of a launcher started for its call stay in the call's folders
/// beside the command (in `launch`): with namespaces on, the launcher joins the v1 folders,
/// clones, and stays as the clone's parent (the clone is born in the v2 folder, so it
/// counts only in v1); a PID namespace's init is in both. With namespaces off the launcher
/// becomes the command: none. (On a kernel without `clone3` into a cgroup, older than 5.7,
/// the launcher joins the v2 folder too, and the command can hold one process fewer there.)
pub fn beside_command(namespaces: bool, pid_namespace: bool) -> super::cgroup::Beside {
    let init = u64::from(namespaces && pid_namespace);
    super::cgroup::Beside {
        v1: u64::from(namespaces) + init,
        v2: init,
    }
}

/// The namespace failure's text, with why the slack could not be given back when it could
/// not (it reaches the result's downgrades as one).
fn with_give_back(error: String, given_back: Result<(), String>) -> String {
    match given_back {
        Ok(()) => error,
        Err(e) => format!("{error}; the process limit keeps its slack: {e}"),
    }
}

/// A launcher started for its call whose namespaces could not be made becomes the command:
/// lower each `pids.max` of its folders by what [`beside_command`] allowed for the
/// processes that will not exist, so the command holds exactly its number. Folders without
/// `pids.max` (the v1 memory folder, a v2 folder without the controller) are left alone.
fn give_back_slack(spec: &LaunchSpec) -> Result<(), String> {
    let beside = beside_command(spec.namespaces, spec.pid_namespace);
    let v1 = spec
        .cgroup_v1_tasks
        .iter()
        .filter_map(|tasks| tasks.parent())
        .map(|dir| (dir, beside.v1));
    let v2 = spec.cgroup_v2.iter().map(|dir| (dir.as_path(), beside.v2));
    // Every folder is tried; each one that keeps its slack is named.
    let failed: Vec<String> = v1
        .chain(v2)
        .filter(|(_, slack)| *slack > 0)
        .filter_map(|(dir, slack)| {
            let file = dir.join("pids.max");
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(e) => return Some(format!("{}: {e}", file.display())),
            };
            let text = text.trim();
            if text == "max" {
                // No limit was written here: nothing to give back.
                return None;
            }
            let lowered = match text.parse::<u64>() {
                Ok(max) => max.saturating_sub(slack).max(1),
                Err(e) => return Some(format!("{}: '{text}': {e}", file.display())),
            };
            std::fs::write(&file, lowered.to_string())
                .err()
                .map(|e| format!("{}: {e}", file.display()))
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

/// Step 3. The launcher stays outside and waits; its clone is PID 1 of the new PID
/// namespace, confines itself, forks the command and reaps until the command ends. When
/// PID 1 exits, the kernel kills every process left in the namespace (a `setsid` escapee,
/// a double-forked daemon). `Err` only when the namespaces could not be made at all.
fn in_namespaces(
    spec: &LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    exec: Option<&Exec>,
    reporter: &mut Reporter,
) -> Result<ExitCode, String> {
    // Only the namespaces that do something: PID where no cgroup kills the tree, network
    // where the profile turns it off. A user namespace only where one is needed to make
    // them (not root): root's power is taken by `drop_capabilities` instead (a user
    // namespace mapping root to itself would leave it every capability over the files it
    // can reach). With none, this is a plain clone into the call's v2 cgroup.
    let mut flags = 0;
    let mut active: Vec<String> = Vec::new();
    if spec.pid_namespace {
        flags |= libc::CLONE_NEWPID;
        active.push("pid".into());
    }
    if spec.fs.deny_network {
        // An empty network namespace: only a loopback device that is down.
        flags |= libc::CLONE_NEWNET;
        active.push("net".into());
    }
    let euid = rustix::process::geteuid();
    let user_namespace = flags != 0 && !view::holds_sys_admin();
    if user_namespace {
        flags |= libc::CLONE_NEWUSER;
        active.insert(0, "user".into());
    }
    let cloexec = rustix::pipe::PipeFlags::CLOEXEC;
    let (go_read, go_write) = rustix::pipe::pipe_with(cloexec).map_err(|e| e.to_string())?;
    let (status_read, status_write) =
        rustix::pipe::pipe_with(cloexec).map_err(|e| e.to_string())?;
    reporter.flush();
    let child = match clone_child(spec, flags, reporter) {
        Ok(child) => child,
        // Refused outright: not a namespace failure for `launch` to fall back from.
        Err(CloneFailed::Refused(reason)) => return Ok(refuse(reporter, reason)),
        Err(CloneFailed::Error(e)) => return Err(e),
    };
    if child == 0 {
        drop(go_write);
        drop(status_read);
        if !spec.pid_namespace {
            // No PID namespace to hold together: become the command (the cgroup kills it).
            drop(status_write);
            let code = if !await_id_maps(go_read) {
                i32::from(REFUSED_EXIT)
            } else if let Err(reason) = confine(spec, ruleset, reporter) {
                reporter.send(&LaunchEvent::Refused { reason });
                i32::from(REFUSED_EXIT)
            } else if exec.is_none() {
                0
            } else {
                // Returns only when execve failed (and reported why).
                let _ = exec_or_report(exec, reporter);
                127
            };
            reporter.flush();
            std::process::exit(code);
        }
        let code = namespace_init(spec, ruleset, exec, reporter, go_read, status_write);
        reporter.flush();
        std::process::exit(code);
    }
    drop(go_read);
    drop(status_write);
    // A new user namespace needs its id maps, written from outside (here).
    let mapped = if user_namespace {
        write_id_maps(
            &PathBuf::from(format!("/proc/{child}")),
            euid.as_raw(),
            rustix::process::getegid().as_raw(),
        )
    } else {
        Ok(())
    };
    let go = if mapped.is_ok() { [1u8] } else { [0u8] };
    let _ = rustix::io::write(&go_write, &go);
    drop(go_write);
    match &mapped {
        Ok(()) => reporter.send(&LaunchEvent::Namespaces {
            active,
            error: None,
        }),
        Err(e) => reporter.send(&LaunchEvent::Refused {
            reason: format!("the user namespace could not be mapped: {e}"),
        }),
    }
    // The launcher keeps no copy of the report pipe: EOF tells the server the report is whole.
    reporter.close();
    let child_pid = rustix::process::Pid::from_raw(child);
    let own = loop {
        match rustix::process::waitpid(child_pid, rustix::process::WaitOptions::empty()) {
            Err(rustix::io::Errno::INTR) => continue,
            Ok(Some((_, status))) => break Some(status),
            _ => break None,
        }
    };
    // The command's own status, as PID 1 saw it; else PID 1's.
    let mut buf = String::new();
    let _ = std::fs::File::from(status_read).read_to_string(&mut buf);
    let (kind, value) = buf.trim().split_once(' ').unwrap_or(("", ""));
    let value: Option<i32> = value.parse().ok();
    match (kind, value, own) {
        ("exit", Some(code), _) => Ok(ExitCode::from(u8::try_from(code).unwrap_or(1))),
        ("signal", Some(sig), _) => sys::die_by_signal(sig),
        (_, _, Some(status)) => match (status.exit_status(), status.terminating_signal()) {
            (Some(code), _) => Ok(ExitCode::from(u8::try_from(code).unwrap_or(1))),
            (_, Some(sig)) => sys::die_by_signal(sig),
            _ => Ok(ExitCode::from(1)),
        },
        _ => Ok(ExitCode::from(1)),
    }
}

/// Clone PID 1 of the new namespaces, straight into the call's cgroup v2 folder when there
/// is one; if the kernel cannot (no clone3), join the folder first and clone plainly.
/// Why [`clone_child`] made no clone.
enum CloneFailed {
    /// The kernel sandbox is required and the call's v2 folder could not be joined.
    Refused(String),
    /// The clone failed.
    Error(String),
}

fn clone_child(
    spec: &LaunchSpec,
    flags: libc::c_int,
    reporter: &mut Reporter,
) -> Result<libc::pid_t, CloneFailed> {
    if let Some(dir) = &spec.cgroup_v2 {
        let opened = rustix::fs::open(
            dir,
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        );
        if let Ok(fd) = opened {
            use std::os::fd::AsFd;
            match sys::clone3_into_cgroup(flags, fd.as_fd()) {
                Ok(pid) => return Ok(pid),
                Err(e)
                    if e.raw_os_error() == Some(libc::EINVAL)
                        || e.raw_os_error() == Some(libc::ENOSYS)
                        || e.raw_os_error() == Some(libc::E2BIG) => {}
                Err(e) => return Err(CloneFailed::Error(format!("clone3: {e}"))),
            }
        }
        let joined = join_cgroups(&[], Some(dir));
        reporter.send(&joined);
        reporter.flush();
        // As in `launch`: a required sandbox refuses a call whose folder could not be joined.
        if let Some(reason) = required_join_refusal(spec, &joined) {
            return Err(CloneFailed::Refused(reason));
        }
    }
    sys::clone_into_namespaces(flags).map_err(|e| CloneFailed::Error(format!("clone: {e}")))
}

/// Map a new user namespace's ids to our own (only ever for a process that is not root),
/// through `proc_dir` of the process in it (`/proc/<pid>` from outside, `/proc/self`).
/// Map `uid`/`gid` (ours, as seen outside the new user namespace) to themselves inside it.
fn write_id_maps(proc_dir: &Path, uid: u32, gid: u32) -> Result<(), String> {
    let write = |name: &str, text: &str| {
        std::fs::write(proc_dir.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    // Only ever called for a process that is not root: map its own ids, nothing else.
    write("setgroups", "deny")?;
    write("uid_map", &format!("{uid} {uid} 1"))?;
    write("gid_map", &format!("{gid} {gid} 1"))?;
    Ok(())
}

/// In the clone: set the parent-death signal (if the launcher dies, so does everything
/// below it), then wait until the launcher has written the id maps. EOF means the launcher
/// is gone; 0 means the maps failed.
fn await_id_maps(go_read: OwnedFd) -> bool {
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    sys::read_byte(&go_read) == Some(1)
}

/// PID 1 of the call's namespace. Returns its exit code.
fn namespace_init(
    spec: &LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    exec: Option<&Exec>,
    reporter: &mut Reporter,
    go_read: OwnedFd,
    status_write: OwnedFd,
) -> i32 {
    if !await_id_maps(go_read) {
        return i32::from(REFUSED_EXIT);
    }
    if let Err(reason) = confine(spec, ruleset, reporter) {
        reporter.send(&LaunchEvent::Refused { reason });
        return i32::from(REFUSED_EXIT);
    }
    let Some(exec) = exec else {
        // The probe: everything applied, nothing to run.
        return 0;
    };
    reporter.flush();
    let command = match sys::fork() {
        Ok(0) => {
            let _ = rustix::process::set_parent_process_death_signal(Some(
                rustix::process::Signal::KILL,
            ));
            drop(status_write);
            let code = exec_or_report(Some(exec), reporter);
            reporter.flush();
            std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 127 });
        }
        Ok(pid) => pid,
        Err(e) => {
            reporter.send(&LaunchEvent::ExecFailed {
                reason: format!("fork: {e}"),
            });
            return 127;
        }
    };
    reporter.close();
    // Reap every child (orphans re-parent to PID 1) until the command itself ends.
    let status = loop {
        match rustix::process::waitpid(None, rustix::process::WaitOptions::empty()) {
            Err(rustix::io::Errno::INTR) => continue,
            Ok(Some((pid, status))) if pid.as_raw_nonzero().get() == command => break Some(status),
            Ok(Some(_)) => continue,
            _ => break None,
        }
    };
    let line = match status.map(|s| (s.exit_status(), s.terminating_signal())) {
        Some((Some(code), _)) => format!("exit {code}"),
        Some((_, Some(sig))) => format!("signal {sig}"),
        _ => "exit 1".to_string(),
    };
    let _ = rustix::io::write(&status_write, line.as_bytes());
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path, namespaces: bool, pid_namespace: bool) -> LaunchSpec {
        LaunchSpec {
            program: None,
            argv: Vec::new(),
            env: Vec::new(),
            fs: FsRules {
                write_root: dir.to_path_buf(),
                read_paths: Vec::new(),
                deny_network: false,
            },
            landlock_ruleset: None,
            open_files: 64,
            file_size_bytes: 1 << 20,
            cpu_seconds: 1,
            data_bytes: None,
            namespaces,
            pid_namespace,
            cgroup_v2: Some(dir.join("v2")),
            cgroup_v1_tasks: vec![dir.join("pids/tasks"), dir.join("memory/tasks")],
            report_fd: -1,
            gate_fd: None,
            parent_pid: 1,
            require: false,
            require_namespaces: false,
            view: None,
            cwd_relative: PathBuf::new(),
            view_known: Vec::new(),
            run_as: None,
            deny_metadata: false,
        }
    }

    /// When the namespaces could not be made, the launcher gives back exactly the slack
    /// `beside_command` allowed, per hierarchy; a folder without `pids.max` and a `max` are
    /// left alone. Plain folders stand in for cgroupfs.
    #[test]
    fn a_launcher_that_becomes_the_command_gives_back_its_slack() {
        for ((namespaces, pid_namespace), (v1, v2)) in [
            ((true, true), ("16", "16")),
            ((true, false), ("16", "16")),
            ((false, false), ("18", "17")),
        ] {
            let tmp = tempfile::tempdir().expect("temp dir");
            for folder in ["v2", "pids", "memory"] {
                std::fs::create_dir(tmp.path().join(folder)).expect("folder");
            }
            let s = spec(tmp.path(), namespaces, pid_namespace);
            let limited = crate::exec::cgroup::Beside {
                v1: 16 + beside_command(namespaces, pid_namespace).v1,
                v2: 16 + beside_command(namespaces, pid_namespace).v2,
            };
            // As `ReservedCall::limit` wrote them; for (false, false) pretend two more were
            // allowed, which must stay: with namespaces off nothing was set aside.
            let (w1, w2) = if namespaces {
                (limited.v1, limited.v2)
            } else {
                (18, 17)
            };
            // cgroupfs ends what it shows with a newline.
            std::fs::write(tmp.path().join("pids/pids.max"), format!("{w1}\n")).expect("v1");
            std::fs::write(tmp.path().join("v2/pids.max"), format!("{w2}\n")).expect("v2");
            give_back_slack(&s).expect("given back");
            let read = |f: &str| {
                let text = std::fs::read_to_string(tmp.path().join(f)).expect("read");
                text.trim().to_string()
            };
            assert_eq!(
                (read("pids/pids.max").as_str(), read("v2/pids.max").as_str()),
                (v1, v2),
                "namespaces {namespaces}, PID namespace {pid_namespace}"
            );
            assert!(!tmp.path().join("memory/pids.max").exists());
        }
        // The failure to give it back is part of the downgrade's text.
        assert_eq!(
            with_give_back("clone: EPERM".into(), Err("pids.max: EACCES".into())),
            "clone: EPERM; the process limit keeps its slack: pids.max: EACCES"
        );
        assert_eq!(
            with_give_back("clone: EPERM".into(), Ok(())),
            "clone: EPERM"
        );
        // No limit written ("max"): nothing to give back.
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(tmp.path().join("pids")).expect("folder");
        std::fs::write(tmp.path().join("pids/pids.max"), "max\n").expect("v1");
        give_back_slack(&spec(tmp.path(), true, true)).expect("given back");
        let max = std::fs::read_to_string(tmp.path().join("pids/pids.max")).expect("read");
        assert_eq!(max, "max\n");

        // A file that holds no number is named, and the other folders are still lowered.
        let tmp = tempfile::tempdir().expect("temp dir");
        for folder in ["v2", "pids"] {
            std::fs::create_dir(tmp.path().join(folder)).expect("folder");
        }
        std::fs::write(tmp.path().join("pids/pids.max"), "garbage\n").expect("v1");
        std::fs::write(tmp.path().join("v2/pids.max"), "17\n").expect("v2");
        let error = give_back_slack(&spec(tmp.path(), true, true)).expect_err("named");
        assert!(
            error.contains("pids/pids.max") && error.contains("garbage"),
            "{error}"
        );
        let v2 = std::fs::read_to_string(tmp.path().join("v2/pids.max")).expect("read");
        assert_eq!(v2, "16");
    }
}
