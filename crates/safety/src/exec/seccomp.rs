//! The seccomp filter installed last, just before `execve` of the command.
//!
//! Default action: allow. A listed system call returns `EPERM` (`ENOSYS` for `clone3`, so
//! libc falls back to `clone`, whose flags the filter can see). The lists are short on
//! purpose: Landlock confines the filesystem; this filter removes kernel surface that
//! Landlock does not cover.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Why a filter could not be built or installed (the text is seccompiler's).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeccompError {
    /// A rule or filter could not be built for this architecture.
    #[error(transparent)]
    Build(#[from] seccompiler::BackendError),
    /// The kernel refused the filter.
    #[error(transparent)]
    Install(#[from] seccompiler::Error),
}

/// `fchmodat2` (Linux 6.6), `setxattrat` and `removexattrat` (Linux 6.13): one number on
/// every architecture, not yet in `libc`.
const SYS_FCHMODAT2: i64 = 452;
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;

/// On x86_64 the x32 ABI numbers every system call again with this bit set; a filter that
/// lists only the plain numbers would let `socket | 0x4000_0000` through.
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// Which filter to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterChoice {
    /// Refuse every socket family but `AF_UNIX` (the strict profile).
    pub deny_network: bool,
    /// Refuse creating user namespaces (the strict profile).
    pub deny_user_namespaces: bool,
    /// Refuse every change of file metadata (mode, owner, times, extended attributes):
    /// the second line where the read-only view ([`super::view`]) could not be made, since
    /// Landlock does not mediate these calls.
    pub deny_metadata: bool,
}

impl FilterChoice {
    /// A short name for reports.
    pub fn describe(&self) -> String {
        let base = match (self.deny_network, self.deny_user_namespaces) {
            (true, true) => {
                "strict (no io_uring, ptrace, process_vm, vsock, setuid/setgid modes, \
                             network sockets, user namespaces"
            }
            (true, false) => {
                "no io_uring, ptrace, process_vm, vsock, setuid/setgid modes, \
                              network sockets"
            }
            (false, true) => {
                "no io_uring, ptrace, process_vm, vsock, setuid/setgid modes, user namespaces"
            }
            (false, false) => {
                "standard (no io_uring, ptrace, process_vm, vsock, setuid/setgid modes"
            }
        };
        let close = if base.contains('(') { ")" } else { "" };
        if self.deny_metadata {
            format!("{base}, no chmod/chown/utimes/xattr changes{close}")
        } else {
            format!("{base}{close}")
        }
    }
}

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompRule, SeccompError> {
    let c = SeccompCondition::new(arg, len, op, value)?;
    Ok(SeccompRule::new(vec![c])?)
}

/// The calls of the older system-call table (x86_64 has them; aarch64 only has the `*at`
/// forms): (call, mode argument, flags argument when the mode matters only on create).
#[cfg(target_arch = "x86_64")]
const LEGACY_MODE_CALLS: &[(i64, u8, Option<u8>)] = &[
    (libc::SYS_chmod, 1, None),
    (libc::SYS_creat, 1, None),
    (libc::SYS_mknod, 1, None),
    (libc::SYS_open, 2, Some(1)),
];
#[cfg(not(target_arch = "x86_64"))]
const LEGACY_MODE_CALLS: &[(i64, u8, Option<u8>)] = &[];

/// Metadata calls of the older table (see [`LEGACY_MODE_CALLS`]).
#[cfg(target_arch = "x86_64")]
const LEGACY_METADATA_CALLS: &[i64] = &[
    libc::SYS_chmod,
    libc::SYS_chown,
    libc::SYS_lchown,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_futimesat,
];
#[cfg(not(target_arch = "x86_64"))]
const LEGACY_METADATA_CALLS: &[i64] = &[];

/// `EPERM` for a setuid or setgid bit in the mode argument of the calls that set a mode
/// (`chmod` family always; `open`/`openat`/`creat`/`mknod`/`mknodat` when they create).
fn setuid_rules(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) -> Result<(), SeccompError> {
    use SeccompCmpArgLen::Dword;
    let bit =
        |arg: u8, bit: u64| SeccompCondition::new(arg, Dword, SeccompCmpOp::MaskedEq(bit), bit);
    let special = [libc::S_ISUID as u64, libc::S_ISGID as u64];
    let creating = [
        libc::O_CREAT as u64,
        (libc::O_TMPFILE & !libc::O_DIRECTORY) as u64,
    ];
    // (call, mode argument, flags argument when the mode matters only on create)
    let mut calls: Vec<(i64, u8, Option<u8>)> = vec![
        (libc::SYS_fchmod, 1, None),
        (libc::SYS_fchmodat, 2, None),
        (SYS_FCHMODAT2, 2, None),
        (libc::SYS_mknodat, 2, None),
        (libc::SYS_openat, 3, Some(2)),
    ];
    calls.extend_from_slice(LEGACY_MODE_CALLS);
    for (nr, mode, flags) in calls {
        let mut chain = Vec::new();
        for s in special {
            match flags {
                None => chain.push(SeccompRule::new(vec![bit(mode, s)?])?),
                Some(f) => {
                    for c in creating {
                        chain.push(SeccompRule::new(vec![bit(f, c)?, bit(mode, s)?])?);
                    }
                }
            }
        }
        rules.insert(nr, chain);
    }
    Ok(())
}

fn arch() -> Result<TargetArch, SeccompError> {
    Ok(TargetArch::try_from(std::env::consts::ARCH)?)
}

fn mirror_x32(rules: &mut BTreeMap<i64, Vec<SeccompRule>>, target: TargetArch) {
    if target != TargetArch::x86_64 {
        return;
    }
    let plain: Vec<(i64, Vec<SeccompRule>)> = rules.iter().map(|(k, v)| (*k, v.clone())).collect();
    for (nr, chain) in plain {
        rules.insert(nr | X32_SYSCALL_BIT, chain);
    }
}

/// Compile the filters for `choice`: the main `EPERM` filter and a second one that answers
/// `openat2` (and, when user namespaces are refused, `clone3`) with `ENOSYS`: their mode and
/// flags live in memory a filter cannot read, so they cannot be allowed selectively, and
/// libc falls back to `openat` and `clone`, which the main filter sees.
pub fn build(choice: FilterChoice) -> Result<Vec<BpfProgram>, SeccompError> {
    let target = arch()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // io_uring performs file and socket operations without the system calls this filter
    // and Landlock's network rules see.
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(nr, vec![]);
    }
    // Reading or writing another process's memory (the server's, a sibling's) or tracing it.
    for nr in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
    ] {
        rules.insert(nr, vec![]);
    }
    // Kernel attack surface no allow-listed tool needs: eBPF, userfaultfd (race widening for
    // kernel exploits), perf, keyrings, module and kexec loading, file handles (the
    // `open_by_handle_at` container escape).
    for nr in [
        libc::SYS_bpf,
        libc::SYS_userfaultfd,
        libc::SYS_perf_event_open,
        libc::SYS_add_key,
        libc::SYS_keyctl,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_open_by_handle_at,
    ] {
        rules.insert(nr, vec![]);
    }
    // AF_VSOCK reaches the hypervisor host from a VM guest, past every network namespace.
    let mut socket_rules = vec![cond(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::AF_VSOCK as u64,
    )?];
    if choice.deny_network {
        // Strict: no network at all; AF_UNIX stays (programs use socketpair internally).
        socket_rules.push(cond(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?);
    }
    rules.insert(libc::SYS_socket, socket_rules.clone());
    rules.insert(libc::SYS_socketpair, socket_rules);
    if choice.deny_user_namespaces {
        // A new user namespace hands the command a full capability set over fresh
        // namespaces: a large kernel attack surface and a way to build its own mounts.
        let newuser = libc::CLONE_NEWUSER as u64;
        rules.insert(
            libc::SYS_unshare,
            vec![cond(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(newuser),
                newuser,
            )?],
        );
        rules.insert(
            libc::SYS_clone,
            vec![cond(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(newuser),
                newuser,
            )?],
        );
    }
    // No file may gain a setuid or setgid bit: a setuid copy of a shell left in the jail is
    // run by any local user on the host, where the jail is not mounted nosuid. Refused on
    // the mode argument of every call that sets one (chmod family; open/creat/mknod with
    // O_CREAT or O_TMPFILE). `openat2` takes its mode in memory a filter cannot read: it
    // answers ENOSYS (a second filter), and libc falls back to `openat`.
    setuid_rules(&mut rules)?;
    if choice.deny_metadata {
        // Landlock does not mediate these; without the read-only view, nothing else stops
        // `chmod 0666`, `touch -d` or `setfattr` on a file outside the jail that the uid owns.
        for nr in [
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            SYS_FCHMODAT2,
            libc::SYS_fchown,
            libc::SYS_fchownat,
            libc::SYS_utimensat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
            SYS_SETXATTRAT,
            SYS_REMOVEXATTRAT,
        ]
        .into_iter()
        .chain(LEGACY_METADATA_CALLS.iter().copied())
        {
            rules.insert(nr, vec![]);
        }
    }
    mirror_x32(&mut rules, target);
    let main = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        target,
    )?;
    let mut programs: Vec<BpfProgram> = vec![main.try_into()?];
    {
        let mut enosys = BTreeMap::new();
        enosys.insert(libc::SYS_openat2, vec![]);
        if choice.deny_user_namespaces {
            enosys.insert(libc::SYS_clone3, vec![]);
        }
        mirror_x32(&mut enosys, target);
        let filter = SeccompFilter::new(
            enosys,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
            target,
        )?;
        programs.push(filter.try_into()?);
    }
    Ok(programs)
}

/// Install the compiled filters on the calling thread (which must be the only one). Sets
/// `no_new_privs` first, so a setuid program cannot shed the filter.
pub(crate) fn install(programs: &[BpfProgram]) -> Result<(), SeccompError> {
    for program in programs {
        seccompiler::apply_filter(program)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_filter_compiles() {
        for deny_network in [false, true] {
            for deny_user_namespaces in [false, true] {
                for deny_metadata in [false, true] {
                    let programs = build(FilterChoice {
                        deny_network,
                        deny_user_namespaces,
                        deny_metadata,
                    })
                    .unwrap();
                    assert_eq!(programs.len(), 2);
                }
            }
        }
    }
}
