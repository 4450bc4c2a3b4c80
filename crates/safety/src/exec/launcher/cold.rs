//! A launcher started for its call: every step in order, on the call's path, then the
//! command. With namespaces on, the command (or PID 1 above it) is a clone born in the
//! call's cgroup v2 folder; where the namespaces cannot be made, the launcher becomes the
//! command itself.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::cgroups::{give_back_slack, join_cgroups, required_join_refusal, with_give_back};
use super::confine::{Ahead, confine_with, view_refusal};
use super::execve::{exec_or_report, exec_parts};
use super::namespaces::in_namespaces;
use super::report::{LaunchEvent, Refusal, Reporter, refuse};
use super::rlimits::prepare;
use super::spec::LaunchSpec;
use crate::exec::filesystem;
use crate::exec::view::{self, ViewError, ViewReport};

/// Run the call's steps in order and become the command; the launcher's exit code when
/// it could not.
pub(super) fn launch(
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
                let error = with_give_back(&error, give_back_slack(&spec));
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
                    return refuse(&mut reporter, Refusal::NoPidNamespace(error));
                }
            }
        }
    }
    if let Err(reason) = confine(&spec, ruleset, &mut reporter) {
        return refuse(&mut reporter, reason);
    }
    exec_or_report(exec.as_ref(), &mut reporter)
}

/// The view (after every cgroup write: cgroupfs is read-only in it), then steps 4 and 5:
/// Landlock, then seccomp. `Err` when `require` and something is missing.
pub(super) fn confine(
    spec: &LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    reporter: &mut Reporter,
) -> Result<(), Refusal> {
    let mut deny_metadata = spec.deny_metadata;
    if let Some(jail) = &spec.view {
        let event = match cold_view(jail, &spec.view_known, &spec.cwd_relative) {
            Ok(report) => LaunchEvent::View {
                report: Some(report),
                error: None,
            },
            Err(error) => LaunchEvent::View {
                report: None,
                error: Some(error.to_string()),
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

/// The view for a launcher started for its call: built now, and the working folder (the
/// one the launcher was started in) entered again inside it.
fn cold_view(jail: &Path, known: &[PathBuf], cwd_relative: &Path) -> Result<ViewReport, ViewError> {
    let before = rustix::fs::open(
        ".",
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(ViewError::OpenWorkingFolder)?;
    let report = view::enter(jail, known)?;
    view::enter_cwd(jail, cwd_relative, std::os::fd::AsFd::as_fd(&before))?;
    Ok(report)
}
