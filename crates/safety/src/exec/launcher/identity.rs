//! Step 5, the command's identity and capabilities: a root launcher empties the bounding
//! set, switches to the command's unprivileged uid and gid, then empties every other
//! capability set, so the command holds no power beyond its own files.

use super::report::LaunchEvent;

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
pub(super) const CAP_SYS_ADMIN: u32 = 21;

/// Drop every capability still in the bounding set, except `keep`. Each drop replaces the
/// process's credentials, so only the ones present are dropped.
pub(super) fn drop_bounding_set(keep: Option<u32>) -> Result<(), String> {
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
pub(super) fn drop_capabilities(
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
