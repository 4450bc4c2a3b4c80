//! A launcher started ahead of its call. While it waits, it does what does not depend on
//! the call: join the call's cgroups, build the read-only view, compile both seccomp
//! filters and install the one every profile shares, and empty the bounding set but for
//! the one capability a network namespace needs. Then it takes the call from its channel,
//! does only what depends on it, and becomes the command.

use std::os::fd::OwnedFd;
use std::process::ExitCode;

use super::cgroups::{join_cgroups, required_join_refusal};
use super::confine::{Ahead, confine_with, view_refusal};
use super::execve::{exec_or_report, exec_parts};
use super::identity::{CAP_SYS_ADMIN, drop_bounding_set};
use super::namespaces::enter_network_namespace;
use super::report::{LaunchEvent, Refusal, Reporter, refuse};
use super::rlimits::prepare;
use super::spec::{LaunchSpec, MAX_CALL_MESSAGE, WarmSpec};
use crate::exec::filesystem;
use crate::exec::seccomp::{self, FilterChoice};
use crate::exec::sys;
use crate::exec::view;

/// A launcher started ahead of its call. While waiting is free: join the call's cgroups,
/// compile both seccomp filters and install the one every profile shares, drop every
/// capability but `CAP_SYS_ADMIN` from the bounding set (it is needed only to make a network
/// namespace; the rest of the sets are dropped with the call). Then take the
/// call from the channel, do only what depends on it, and become the command. If the
/// server goes away first, the parent-death signal (set by the server's spawn) or the
/// closed channel ends it without running anything.
pub(super) fn warm_main(warm: WarmSpec) -> ExitCode {
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
        return refuse(&mut reporter, Refusal::NoChannel);
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
            return refuse(&mut reporter, Refusal::Receive(e));
        }
    };
    drop(channel);
    let mut spec: LaunchSpec = match serde_json::from_slice(&message) {
        Ok(spec) => spec,
        Err(e) => return refuse(&mut reporter, Refusal::MalformedSpec(e)),
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
                        .map_err(Refusal::WorkingFolder)
                }
                _ => rustix::process::fchdir(&cwd).map_err(Refusal::Chdir),
            };
            if let Err(reason) = entered {
                return refuse(&mut reporter, reason);
            }
        }
        None => {
            return refuse(&mut reporter, Refusal::NoWorkingFolder);
        }
    }
    if spec.gate_fd.is_some() {
        match fds.next() {
            Some(gate) => spec.gate_fd = Some(gate.into_raw_fd()),
            None => return refuse(&mut reporter, Refusal::NoGate),
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
                error: Some(error.to_string()),
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
