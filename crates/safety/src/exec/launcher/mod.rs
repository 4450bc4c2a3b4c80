//! The sandbox launcher: the server starts every command as
//! `safe-mcp __sandbox-exec <spec as JSON>`, a fresh single-threaded process that confines
//! itself and then `execve`s the command. Single-threaded matters: `unshare`/`clone` of a
//! user namespace fails in a threaded process, and Landlock and seccomp (without TSYNC)
//! bind only the calling thread.
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
//!    unprivileged uid and gid, every other capability set emptied;
//! 6. Landlock; 7. seccomp, last; 8. the start gate, `execve`.
//!
//! What was really applied goes back to the server as JSON lines on an inherited pipe, so
//! each result reports the truth of its own call, not a start-up guess.
//!
//! The parts, one a file: `spec` (what the server sends), `report` (what goes back, and
//! the reasons a call is refused), `cold` (a launcher started for its call) and `warm`
//! (one started ahead, waiting for its call on a socket), then the steps both take:
//! `cgroups` (1), `rlimits` (2), `namespaces` (3), `confine` (4 to 7, with `identity` for
//! the capabilities and the uid switch) and `execve` (8).

mod cgroups;
mod cold;
mod confine;
mod execve;
mod identity;
mod namespaces;
mod report;
mod rlimits;
mod spec;
mod warm;

use std::process::ExitCode;

use super::filesystem;
use super::sys;

pub use cgroups::beside_command;
pub use report::LaunchEvent;
pub use spec::{LaunchSpec, MAX_CALL_MESSAGE, WarmSpec};

use report::Reporter;

/// The hidden first argument that starts the binary in sandbox-launcher mode.
pub const LAUNCHER_ARG: &str = "__sandbox-exec";

/// Exit code of a launcher that refused to run the command.
pub(crate) const REFUSED_EXIT: u8 = 126;

/// The hidden first argument of a launcher started ahead of its call ([`WarmSpec`]).
pub(crate) const WARM_ARG: &str = "__sandbox-warm";

/// Entry point of the sandbox launcher mode (and of the cgroup reaper,
/// [`super::cgroup::REAPER_ARG`], which the same binary runs). `main` calls this first,
/// before any thread or runtime exists; it returns `None` when the process was not started
/// as a launcher or a reaper.
pub fn launcher_main() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let _self = args.next();
    let mode = args.next()?;
    if mode == super::cgroup::REAPER_ARG {
        return Some(super::cgroup::reaper_main(args));
    }
    if mode == WARM_ARG {
        sys::restore_default_signals();
        let warm: Option<WarmSpec> = args
            .next()
            .and_then(|a| a.into_string().ok())
            .and_then(|s| serde_json::from_str(&s).ok());
        return Some(match warm {
            Some(warm) => warm::warm_main(warm),
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
    Some(cold::launch(spec, ruleset.as_ref(), reporter))
}
