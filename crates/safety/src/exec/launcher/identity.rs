//! Step 5, the command's identity and capabilities: a root launcher empties the bounding
//! set, switches to the command's unprivileged uid and gid, then empties every other
//! capability set, so the command holds no power beyond its own files.

use rustix::io::Errno;

use super::report::LaunchEvent;

/// Why the command's identity could not be switched.
#[derive(Debug, thiserror::Error)]
pub(super) enum IdentityError {
    /// The command would run as root.
    #[error("refusing to run a command as uid 0")]
    Root,
    /// `setgroups` failed.
    #[error("setgroups: {0}")]
    Groups(Errno),
    /// `setresgid` failed.
    #[error("setresgid: {0}")]
    Gid(Errno),
    /// `setresuid` failed.
    #[error("setresuid: {0}")]
    Uid(Errno),
    /// The parent-death signal could not be set again.
    #[error("PR_SET_PDEATHSIG: {0}")]
    DeathSignal(Errno),
    /// The server died during the switch.
    #[error("the launcher's parent went away")]
    ParentGone,
    /// The kernel took the calls but the ids are not the command's.
    #[error("the uid or gid did not change")]
    Unchanged,
}

/// Why a capability set could not be emptied.
#[derive(Debug, thiserror::Error)]
pub(super) enum CapabilityError {
    /// Reading a bit of the bounding set failed.
    #[error("PR_CAPBSET_READ {bit}: {errno}")]
    ReadBounding {
        /// The capability's number.
        bit: u32,
        /// Why.
        errno: Errno,
    },
    /// Dropping a bit of the bounding set failed.
    #[error("PR_CAPBSET_DROP {bit}: {errno}")]
    DropBounding {
        /// The capability's number.
        bit: u32,
        /// Why.
        errno: Errno,
    },
    /// `capget` failed.
    #[error("capget: {0}")]
    Get(Errno),
    /// The ambient set could not be cleared.
    #[error("clearing the ambient set: {0}")]
    ClearAmbient(Errno),
    /// `capset` failed.
    #[error("capset: {0}")]
    Set(Errno),
    /// `capset` succeeded and yet a set still holds something.
    #[error("capabilities are still held after capset")]
    StillHeld,
}

/// Become `uid:gid` (no supplementary groups): called by a root launcher, after the
/// bounding set is emptied and before the other sets are cleared (the switch needs
/// `CAP_SETUID`/`CAP_SETGID`; the kernel then clears permitted and effective itself). The
/// kernel also clears the parent-death signal on a change of credentials: it is set again,
/// and the parent checked to be the same one.
fn switch_identity(uid: u32, gid: u32) -> Result<(), IdentityError> {
    use rustix::process::{Gid, Uid};
    let parent = rustix::process::getppid();
    let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
    if uid.is_root() {
        return Err(IdentityError::Root);
    }
    rustix::thread::set_thread_groups(&[]).map_err(IdentityError::Groups)?;
    rustix::thread::set_thread_res_gid(gid, gid, gid).map_err(IdentityError::Gid)?;
    rustix::thread::set_thread_res_uid(uid, uid, uid).map_err(IdentityError::Uid)?;
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(IdentityError::DeathSignal)?;
    if rustix::process::getppid() != parent {
        return Err(IdentityError::ParentGone);
    }
    let (r, e, s) = (
        rustix::process::getuid(),
        rustix::process::geteuid(),
        rustix::process::getgid(),
    );
    if r != uid || e != uid || s != gid {
        return Err(IdentityError::Unchanged);
    }
    Ok(())
}

/// `CAP_SYS_ADMIN`: the one capability a launcher started ahead keeps until its call (a
/// network namespace needs it).
pub(super) const CAP_SYS_ADMIN: u32 = 21;

/// Drop every capability still in the bounding set, except `keep`. Each drop replaces the
/// process's credentials, so only the ones present are dropped.
pub(super) fn drop_bounding_set(keep: Option<u32>) -> Result<(), CapabilityError> {
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
            Err(errno) => return Err(CapabilityError::ReadBounding { bit, errno }),
        }
        if let Err(errno) = rustix::thread::remove_capability_from_bounding_set(cap) {
            return Err(CapabilityError::DropBounding { bit, errno });
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
                error: switched.err().map(|e| e.to_string()),
            });
        }
    });
    (identity, capabilities)
}

/// [`drop_capabilities`], with `between` run after the bounding set is emptied and before
/// the other sets are.
fn drop_capabilities_then(bounding_left: Option<u32>, between: impl FnOnce()) -> LaunchEvent {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    let failed = |error: CapabilityError| LaunchEvent::Capabilities {
        held: "unknown".into(),
        error: Some(error.to_string()),
    };
    let before = match rustix::thread::capabilities(None) {
        Ok(sets) => sets,
        Err(e) => return failed(CapabilityError::Get(e)),
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
                    .map_err(|errno| CapabilityError::DropBounding { bit, errno }),
                Ok(false) => Ok(()),
                Err(errno) => Err(CapabilityError::ReadBounding { bit, errno }),
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
        return failed(CapabilityError::ClearAmbient(e));
    }
    if held_any {
        let none = CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        };
        if let Err(e) = rustix::thread::set_capabilities(None, none) {
            return failed(CapabilityError::Set(e));
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
        Ok(_) => failed(CapabilityError::StillHeld),
        Err(e) => failed(CapabilityError::Get(e)),
    }
}
