//! The command's view of the file system: a private mount namespace, made by the launcher
//! before it confines itself, in which
//! - every mount is read-only and `nosuid` (`mount_setattr(AT_RECURSIVE)` on `/`),
//! - the jail alone is writable, and `nosuid,nodev` (a recursive bind of it onto itself),
//! - every repository's `.git` in the jail (to [`SCAN_DEPTH`] folders deep) is read-only
//!   again, and a mount point, so it cannot be renamed, removed or replaced either.
//!
//! Landlock (every ABI to date) does not mediate `chmod`, `chown`, `utimensat` or
//! `setxattr`: a command could change the mode, owner, times and extended attributes of any
//! file outside the jail that its uid owns. A read-only mount refuses all of them (`EROFS`)
//! whatever the uid, and no write of any kind reaches a file outside the jail. Mounts made
//! here are private: nothing propagates back to the host, and they vanish with the launcher's
//! last process. Where this view cannot be made, the launcher's seccomp filter refuses those
//! system calls instead ([`super::seccomp::FilterChoice::deny_metadata`]).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::mount::{MountPropagationFlags, MoveMountFlags, OpenTreeFlags};
use serde::{Deserialize, Serialize};

use super::sys;

/// How deep below the jail root `.git` entries are looked for and made read-only.
pub const SCAN_DEPTH: usize = 4;

/// The most folders the scan for `.git` reads (a jail holding a huge tree is not walked
/// whole on every call; the report says when the scan stopped early).
pub const SCAN_FOLDERS: usize = 4096;

/// What the view holds, reported with each call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewReport {
    /// The jail-relative `.git` entries made read-only.
    pub protected: Vec<String>,
    /// The scan for `.git` stopped at [`SCAN_FOLDERS`] folders: repositories deeper in a
    /// large tree may be writable.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scan_truncated: bool,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const AT_EMPTY_PATH: libc::c_uint = 0x1000;

fn c_path(path: &Path) -> Result<std::ffi::CString, String> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{}: a NUL byte in the path", path.display()))
}

/// Does this process hold `CAP_SYS_ADMIN` (root, or root of its own user namespace)?
pub fn holds_sys_admin() -> bool {
    rustix::thread::capabilities(None)
        .map(|sets| {
            sets.effective
                .contains(rustix::thread::CapabilitySet::SYS_ADMIN)
        })
        .unwrap_or(false)
}

/// Move this (single-threaded) process into a new mount namespace and build the view.
/// A process without `CAP_SYS_ADMIN` first makes a user namespace that maps its own uid and
/// gid to themselves (and no other), in which it may mount.
pub fn enter(jail_root: &Path) -> Result<ViewReport, String> {
    if holds_sys_admin() {
        sys::unshare(libc::CLONE_NEWNS).map_err(|e| format!("unshare(CLONE_NEWNS): {e}"))?;
    } else {
        let (uid, gid) = (rustix::process::geteuid(), rustix::process::getegid());
        sys::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)
            .map_err(|e| format!("unshare(CLONE_NEWUSER|CLONE_NEWNS): {e}"))?;
        let write = |name: &str, text: String| {
            std::fs::write(Path::new("/proc/self").join(name), text)
                .map_err(|e| format!("{name}: {e}"))
        };
        write("setgroups", "deny".into())?;
        write("uid_map", format!("{} {} 1", uid.as_raw(), uid.as_raw()))?;
        write("gid_map", format!("{} {} 1", gid.as_raw(), gid.as_raw()))?;
    }
    // Nothing mounted here may propagate back into the host's namespace.
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(|e| format!("making / private: {e}"))?;
    // The jail becomes its own mount, so it can keep write access when all else loses it.
    rustix::mount::mount_bind_recursive(jail_root, jail_root)
        .map_err(|e| format!("binding the jail {}: {e}", jail_root.display()))?;
    let root = c_path(Path::new("/"))?;
    sys::mount_setattr(
        rustix::fs::CWD,
        &root,
        AT_RECURSIVE,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
        0,
    )
    .map_err(|e| format!("making every mount read-only: {e}"))?;
    let jail = c_path(jail_root)?;
    // No setuid program and no device node in the jail is honoured in the view.
    sys::mount_setattr(
        rustix::fs::CWD,
        &jail,
        AT_RECURSIVE,
        MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
    )
    .map_err(|e| format!("making the jail nosuid,nodev: {e}"))?;
    // Write access back for the jail's own mount only: a mount nested in the jail stays
    // read-only (it may be read-only on the host too, and its flags are not known here).
    sys::mount_setattr(rustix::fs::CWD, &jail, 0, 0, MOUNT_ATTR_RDONLY)
        .map_err(|e| format!("making the jail writable: {e}"))?;
    protect_repositories(jail_root)
}

/// Make every `.git` entry (folder or `gitdir:` file) found in the jail, to [`SCAN_DEPTH`]
/// folders deep, a read-only mount of itself. A `.git` a command could write holds
/// `config` (`core.fsmonitor`, `core.pager`, `alias.*`, filter drivers) and `hooks/`: what
/// a later `git status` runs. Lookups go through `openat2(RESOLVE_BENEATH | NO_SYMLINKS)`
/// from the jail, so a symlink swapped in by a concurrent command cannot point the mount
/// elsewhere.
fn protect_repositories(jail_root: &Path) -> Result<ViewReport, String> {
    let jail = rustix::fs::open(
        jail_root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("opening the jail in the view: {e}"))?;
    let mut report = ViewReport::default();
    let mut queue: std::collections::VecDeque<(PathBuf, usize)> =
        std::collections::VecDeque::from([(PathBuf::new(), 0)]);
    let mut visited = 0usize;
    while let Some((relative, depth)) = queue.pop_front() {
        if visited >= SCAN_FOLDERS {
            report.scan_truncated = true;
            break;
        }
        visited += 1;
        let Ok(entries) = std::fs::read_dir(jail_root.join(&relative)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = relative.join(&name);
            if name == ".git" && !kind.is_symlink() {
                protect(jail.as_fd(), &path)?;
                report.protected.push(path.to_string_lossy().into_owned());
            } else if kind.is_dir() && depth + 1 < SCAN_DEPTH {
                queue.push_back((path, depth + 1));
            }
        }
    }
    report.protected.sort();
    Ok(report)
}

/// Bind `relative` (beneath `jail`) read-only onto itself with the new mount API: the
/// handle that is cloned is the handle the clone is attached to, so nothing is looked up
/// twice.
fn protect(jail: BorrowedFd<'_>, relative: &Path) -> Result<(), String> {
    let what = relative.display();
    let target: OwnedFd = rustix::fs::openat2(
        jail,
        relative,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .map_err(|e| format!("opening {what}: {e}"))?;
    let tree = rustix::mount::open_tree(
        &target,
        "",
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::OPEN_TREE_CLOEXEC
            | OpenTreeFlags::AT_EMPTY_PATH,
    )
    .map_err(|e| format!("cloning {what}: {e}"))?;
    let empty = c_path(Path::new(""))?;
    sys::mount_setattr(
        tree.as_fd(),
        &empty,
        AT_EMPTY_PATH,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
    )
    .map_err(|e| format!("making {what} read-only: {e}"))?;
    rustix::mount::move_mount(
        &tree,
        "",
        &target,
        "",
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH,
    )
    .map_err(|e| format!("mounting {what} read-only: {e}"))
}

/// Enter the call's working folder in the view: `relative` beneath the jail, looked up in
/// this namespace (a folder handle opened before the view, or sent by the server, names the
/// host's mount, on which nothing here is read-only), and checked to be the folder `before`
/// names, so a folder renamed or swapped meanwhile is refused rather than entered.
pub fn enter_cwd(jail_root: &Path, relative: &Path, before: BorrowedFd<'_>) -> Result<(), String> {
    let jail = rustix::fs::open(
        jail_root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("opening the jail in the view: {e}"))?;
    let relative = if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    };
    // Plain `openat` (a launcher started ahead already has its seccomp filter, which
    // answers `openat2` with ENOSYS): whatever the lookup meets, the folder it ends in must
    // be the one `before` names, or the call is refused.
    let here = rustix::fs::openat(
        &jail,
        relative,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("opening the working folder in the view: {e}"))?;
    let (a, b) = (
        rustix::fs::fstat(&here).map_err(|e| e.to_string())?,
        rustix::fs::fstat(before).map_err(|e| e.to_string())?,
    );
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
        return Err("the working folder was moved or replaced while the call started".into());
    }
    rustix::process::fchdir(&here).map_err(|e| format!("entering the working folder: {e}"))
}
