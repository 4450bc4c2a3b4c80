//! The command's view of the file system: a private mount namespace, made by the launcher
//! before it confines itself, in which
//! - every mount is read-only and `nosuid` (`mount_setattr(AT_RECURSIVE)` on `/`),
//! - the jail alone is writable, and `nosuid,nodev` (a recursive bind of it onto itself),
//! - every repository's `.git` in the jail (to `SCAN_DEPTH` folders deep) is read-only
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

use rustix::io::Errno;

use super::sys;

/// Why the view could not be made, or the working folder not entered in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ViewError {
    /// A path holds a NUL byte.
    #[error("{}: a NUL byte in the path", .0.display())]
    NulInPath(PathBuf),
    /// The mount namespace (and user namespace, named in `namespaces`) could not be made.
    #[error("unshare({namespaces}): {source}")]
    Unshare {
        /// The namespaces asked for, as flags.
        namespaces: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// An id map file of the new user namespace could not be written.
    #[error(transparent)]
    IdMap(IdMapError),
    /// `/` could not be made a private mount.
    #[error("making / private: {0}")]
    Private(Errno),
    /// The jail could not be bound onto itself.
    #[error("binding the jail {}: {errno}", .jail.display())]
    BindJail {
        /// The jail root.
        jail: PathBuf,
        /// Why.
        errno: Errno,
    },
    /// The mounts could not be made read-only.
    #[error("making every mount read-only: {0}")]
    ReadOnly(std::io::Error),
    /// The jail's mount could not be made `nosuid,nodev`.
    #[error("making the jail nosuid,nodev: {0}")]
    JailNosuid(std::io::Error),
    /// The jail's mount could not be made writable again.
    #[error("making the jail writable: {0}")]
    JailWritable(std::io::Error),
    /// The jail could not be opened inside the view.
    #[error("opening the jail in the view: {0}")]
    OpenJail(Errno),
    /// A folder to protect could not be opened.
    #[error("opening {}: {errno}", .path.display())]
    Open {
        /// Jail-relative.
        path: PathBuf,
        /// Why.
        errno: Errno,
    },
    /// A folder to protect could not be cloned as a mount.
    #[error("cloning {}: {errno}", .path.display())]
    Clone {
        /// Jail-relative.
        path: PathBuf,
        /// Why.
        errno: Errno,
    },
    /// A protected folder's mount could not be made read-only.
    #[error("making {} read-only: {source}", .path.display())]
    ProtectReadOnly {
        /// Jail-relative.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A protected folder's mount could not be attached.
    #[error("mounting {} read-only: {errno}", .path.display())]
    Mount {
        /// Jail-relative.
        path: PathBuf,
        /// Why.
        errno: Errno,
    },
    /// The working folder could not be opened before the view was made.
    #[error("opening the working folder: {0}")]
    OpenWorkingFolder(Errno),
    /// The working folder could not be opened inside the view.
    #[error("opening the working folder in the view: {0}")]
    OpenWorkingFolderInView(Errno),
    /// The working folder could not be compared with the one before the view.
    #[error("{0}")]
    Stat(Errno),
    /// The working folder inside the view is not the one before it.
    #[error("the working folder was moved or replaced while the call started")]
    WorkingFolderReplaced,
    /// The working folder could not be entered.
    #[error("entering the working folder: {0}")]
    EnterWorkingFolder(Errno),
}

/// How deep below the jail root `.git` entries are looked for and made read-only.
pub(crate) const SCAN_DEPTH: usize = 4;

/// The most folders the scan for `.git` reads (a jail holding a huge tree is not walked
/// whole on every call; the report says when the scan stopped early).
pub(crate) const SCAN_FOLDERS: usize = 4096;

/// What the view holds, reported with each call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ViewReport {
    /// The jail-relative `.git` entries made read-only.
    pub protected: Vec<String>,
    /// The scan for `.git` stopped at `SCAN_FOLDERS` folders: repositories deeper in a
    /// large tree may be writable.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scan_truncated: bool,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const AT_EMPTY_PATH: libc::c_uint = 0x1000;

fn c_path(path: &Path) -> Result<std::ffi::CString, ViewError> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| ViewError::NulInPath(path.to_path_buf()))
}

/// Why a new user namespace's id maps could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {source}")]
pub(crate) struct IdMapError {
    /// `setgroups`, `uid_map` or `gid_map`.
    file: &'static str,
    /// Why.
    source: std::io::Error,
}

/// Map `uid`/`gid` (ours, as seen outside a new user namespace) to themselves inside it,
/// and nothing else, through `proc_dir` of the process in it (`/proc/<pid>` from outside,
/// `/proc/self` from inside). Used by the view and by the launcher's namespaces.
pub(crate) fn write_id_maps(proc_dir: &Path, uid: u32, gid: u32) -> Result<(), IdMapError> {
    let write = |file: &'static str, text: &str| {
        std::fs::write(proc_dir.join(file), text).map_err(|source| IdMapError { file, source })
    };
    // Only ever called for a process that is not root: map its own ids, nothing else.
    write("setgroups", "deny")?;
    write("uid_map", &format!("{uid} {uid} 1"))?;
    write("gid_map", &format!("{gid} {gid} 1"))?;
    Ok(())
}

/// Does this process hold `CAP_SYS_ADMIN` (root, or root of its own user namespace)?
pub(crate) fn holds_sys_admin() -> bool {
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
pub(crate) fn enter(jail_root: &Path, known: &[PathBuf]) -> Result<ViewReport, ViewError> {
    if holds_sys_admin() {
        sys::unshare(libc::CLONE_NEWNS).map_err(|source| ViewError::Unshare {
            namespaces: "CLONE_NEWNS",
            source,
        })?;
    } else {
        let (uid, gid) = (rustix::process::geteuid(), rustix::process::getegid());
        sys::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS).map_err(|source| {
            ViewError::Unshare {
                namespaces: "CLONE_NEWUSER|CLONE_NEWNS",
                source,
            }
        })?;
        write_id_maps(Path::new("/proc/self"), uid.as_raw(), gid.as_raw())
            .map_err(ViewError::IdMap)?;
    }
    // Nothing mounted here may propagate back into the host's namespace.
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(ViewError::Private)?;
    // The jail becomes its own mount, so it can keep write access when all else loses it.
    rustix::mount::mount_bind_recursive(jail_root, jail_root).map_err(|errno| {
        ViewError::BindJail {
            jail: jail_root.to_path_buf(),
            errno,
        }
    })?;
    let root = c_path(Path::new("/"))?;
    sys::mount_setattr(
        rustix::fs::CWD,
        &root,
        AT_RECURSIVE,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
        0,
    )
    .map_err(ViewError::ReadOnly)?;
    let jail = c_path(jail_root)?;
    // No setuid program and no device node in the jail is honoured in the view.
    sys::mount_setattr(
        rustix::fs::CWD,
        &jail,
        AT_RECURSIVE,
        MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
    )
    .map_err(ViewError::JailNosuid)?;
    // Write access back for the jail's own mount only: a mount nested in the jail stays
    // read-only (it may be read-only on the host too, and its flags are not known here).
    sys::mount_setattr(rustix::fs::CWD, &jail, 0, 0, MOUNT_ATTR_RDONLY)
        .map_err(ViewError::JailWritable)?;
    protect_repositories(jail_root, known)
}

/// Make every `.git` entry (folder or `gitdir:` file) in the jail a read-only mount of
/// itself: those named in `known` (every one an earlier call of this server protected, so a
/// tree grown past the scan's bound cannot hide one), then those found to [`SCAN_DEPTH`]
/// folders deep. A `.git` a command could write holds `config` (`core.fsmonitor`,
/// `core.pager`, `alias.*`, filter drivers) and `hooks/`: what a later `git status` runs.
///
/// Every folder between the jail root and each `.git` becomes a (writable) mount of itself
/// first: a mount point cannot be renamed, so the repository cannot be moved aside for a
/// copy with a planted config, nor below the scan's depth. The folder a `gitdir:` file names
/// (a linked worktree's, a submodule's) is protected the same way when it is in the jail.
/// Lookups go through `openat2(RESOLVE_BENEATH | NO_SYMLINKS)` from the jail, so a symlink
/// swapped in by a concurrent command cannot point a mount elsewhere.
fn protect_repositories(jail_root: &Path, known: &[PathBuf]) -> Result<ViewReport, ViewError> {
    let jail = rustix::fs::open(
        jail_root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(ViewError::OpenJail)?;
    let mut found: Vec<PathBuf> = known
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == ".git") && is_plain_relative(p))
        .cloned()
        .collect();
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
                found.push(path);
            } else if kind.is_dir() && depth + 1 < SCAN_DEPTH {
                queue.push_back((path, depth + 1));
            }
        }
    }
    found.sort();
    found.dedup();
    let mut pinned: std::collections::BTreeSet<PathBuf> = std::collections::BTreeSet::new();
    let mut read_only: std::collections::BTreeSet<PathBuf> = std::collections::BTreeSet::new();
    for git in found {
        let Ok(meta) = std::fs::symlink_metadata(jail_root.join(&git)) else {
            // A known repository that is gone: nothing to protect.
            continue;
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        // `gitdir: PATH` in a `.git` file: the git folder it names is what git uses.
        let target = if meta.is_file() {
            gitdir_target(jail_root, &git)
        } else {
            None
        };
        for path in std::iter::once(&git).chain(target.as_ref()) {
            pin_ancestors(jail.as_fd(), path, &mut pinned)?;
            if read_only.insert(path.clone()) {
                protect(jail.as_fd(), path, true)?;
            }
        }
        report.protected.push(git.to_string_lossy().into_owned());
        if let Some(t) = target {
            report.protected.push(t.to_string_lossy().into_owned());
        }
    }
    report.protected.sort();
    report.protected.dedup();
    Ok(report)
}

/// A relative path of plain names only (no `..`, no root): what a jail-relative path from
/// an earlier report must be.
fn is_plain_relative(path: &Path) -> bool {
    path.components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// The jail-relative folder a `.git` file's `gitdir:` line names, when it lies in the jail
/// (resolved lexically against the file's folder; an outside one is read-only anyway).
fn gitdir_target(jail_root: &Path, git_file: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(jail_root.join(git_file))
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let named = Path::new(text.lines().next()?.strip_prefix("gitdir:")?.trim());
    let joined = if named.is_absolute() {
        named.strip_prefix(jail_root).ok()?.to_path_buf()
    } else {
        git_file.parent()?.join(named)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::Normal(n) => out.push(n),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Make every folder between the jail root and `path` (exclusive) a mount of itself, so none
/// of them can be renamed while the call runs (`EBUSY`). It stops at a folder named `.git`:
/// what lies inside one is read-only with it, and a writable mount there would undo that.
fn pin_ancestors(
    jail: BorrowedFd<'_>,
    path: &Path,
    pinned: &mut std::collections::BTreeSet<PathBuf>,
) -> Result<(), ViewError> {
    let mut ancestor = PathBuf::new();
    let parents: Vec<_> = path
        .parent()
        .map(|p| p.components().collect())
        .unwrap_or_default();
    for component in parents {
        if component.as_os_str() == ".git" {
            break;
        }
        ancestor.push(component);
        if pinned.insert(ancestor.clone()) {
            protect(jail, &ancestor, false)?;
        }
    }
    Ok(())
}

/// Bind `relative` (beneath `jail`) onto itself, read-only when asked, with the new mount
/// API: the handle that is cloned is the handle the clone is attached to, so nothing is
/// looked up twice.
fn protect(jail: BorrowedFd<'_>, relative: &Path, read_only: bool) -> Result<(), ViewError> {
    let path = || relative.to_path_buf();
    let target: OwnedFd = crate::jail::openat2(
        jail,
        relative,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .map_err(|errno| ViewError::Open {
        path: path(),
        errno,
    })?;
    let tree = rustix::mount::open_tree(
        &target,
        "",
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::OPEN_TREE_CLOEXEC
            | OpenTreeFlags::AT_EMPTY_PATH,
    )
    .map_err(|errno| ViewError::Clone {
        path: path(),
        errno,
    })?;
    if read_only {
        let empty = c_path(Path::new(""))?;
        sys::mount_setattr(
            tree.as_fd(),
            &empty,
            AT_EMPTY_PATH,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            0,
        )
        .map_err(|source| ViewError::ProtectReadOnly {
            path: path(),
            source,
        })?;
    }
    rustix::mount::move_mount(
        &tree,
        "",
        &target,
        "",
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH,
    )
    .map_err(|errno| ViewError::Mount {
        path: path(),
        errno,
    })
}

/// Enter the call's working folder in the view: `relative` beneath the jail, looked up in
/// this namespace (a folder handle opened before the view, or sent by the server, names the
/// host's mount, on which nothing here is read-only), and checked to be the folder `before`
/// names, so a folder renamed or swapped meanwhile is refused rather than entered.
pub(crate) fn enter_cwd(
    jail_root: &Path,
    relative: &Path,
    before: BorrowedFd<'_>,
) -> Result<(), ViewError> {
    let jail = rustix::fs::open(
        jail_root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(ViewError::OpenJail)?;
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
    .map_err(ViewError::OpenWorkingFolderInView)?;
    let (a, b) = (
        rustix::fs::fstat(&here).map_err(ViewError::Stat)?,
        rustix::fs::fstat(before).map_err(ViewError::Stat)?,
    );
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
        return Err(ViewError::WorkingFolderReplaced);
    }
    rustix::process::fchdir(&here).map_err(ViewError::EnterWorkingFolder)
}
