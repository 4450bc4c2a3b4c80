//! Step 3, namespaces, only where they do something: an empty network namespace for a
//! profile without network, and a PID namespace where no cgroup can kill the whole tree
//! (its PID 1 reaps until the command ends; when it exits, the kernel kills whatever is
//! left inside). A user namespace is made around them only for a launcher that is not root.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::REFUSED_EXIT;
use super::cgroups::{join_cgroups, required_join_refusal};
use super::cold::confine;
use super::execve::{Exec, exec_or_report};
use super::report::{LaunchEvent, Refusal, Reporter, refuse};
use super::spec::LaunchSpec;
use crate::exec::filesystem;
use crate::exec::sys;
use crate::exec::view::{self, write_id_maps};

/// Why the namespaces of a call could not be made at all.
#[derive(Debug, thiserror::Error)]
pub(super) enum NamespaceError {
    /// A pipe between the launcher and its clone could not be made.
    #[error("{0}")]
    Pipe(rustix::io::Errno),
    /// `clone3` into the call's cgroup failed for a reason other than an old kernel.
    #[error("clone3: {0}")]
    Clone3(std::io::Error),
    /// The clone failed.
    #[error("clone: {0}")]
    Clone(std::io::Error),
}

/// An empty network namespace for this process (the strict profile), with a user
/// namespace around it only where one is needed to make it (not root).
pub(super) fn enter_network_namespace() -> LaunchEvent {
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
        error: mapped.err().map(|e| e.to_string()),
    }
}

/// Step 3. The launcher stays outside and waits; its clone is PID 1 of the new PID
/// namespace, confines itself, forks the command and reaps until the command ends. When
/// PID 1 exits, the kernel kills every process left in the namespace (a `setsid` escapee,
/// a double-forked daemon). `Err` only when the namespaces could not be made at all.
pub(super) fn in_namespaces(
    spec: &LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    exec: Option<&Exec>,
    reporter: &mut Reporter,
) -> Result<ExitCode, NamespaceError> {
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
    let (go_read, go_write) = rustix::pipe::pipe_with(cloexec).map_err(NamespaceError::Pipe)?;
    let (status_read, status_write) =
        rustix::pipe::pipe_with(cloexec).map_err(NamespaceError::Pipe)?;
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
                reporter.send(&LaunchEvent::Refused {
                    reason: reason.to_string(),
                });
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
    match mapped {
        Ok(()) => reporter.send(&LaunchEvent::Namespaces {
            active,
            error: None,
        }),
        Err(e) => reporter.send(&LaunchEvent::Refused {
            reason: Refusal::IdMaps(e).to_string(),
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

/// Why [`clone_child`] made no clone.
enum CloneFailed {
    /// The kernel sandbox is required and the call's v2 folder could not be joined.
    Refused(Refusal),
    /// The clone failed.
    Error(NamespaceError),
}

/// Clone PID 1 of the new namespaces, straight into the call's cgroup v2 folder when there
/// is one; if the kernel cannot (no clone3), join the folder first and clone plainly.
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
                Err(e) => return Err(CloneFailed::Error(NamespaceError::Clone3(e))),
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
    sys::clone_into_namespaces(flags).map_err(|e| CloneFailed::Error(NamespaceError::Clone(e)))
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
        reporter.send(&LaunchEvent::Refused {
            reason: reason.to_string(),
        });
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
