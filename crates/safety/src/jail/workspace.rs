//! Workspace file operations through a directory handle (the files server's only way to touch the workspace).
//!
//! The files server never hands a path string to the kernel from the root of the file
//! system. The workspace root is opened once; every later lookup is relative to that
//! handle (or to a folder handle derived from it) with `openat2` and
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, entries are inspected
//! with `statat(.., AT_SYMLINK_NOFOLLOW)` and never opened, folders are created with
//! `mkdirat` relative to a checked handle, and moves use `renameat2(RENAME_NOREPLACE)`, so
//! "the destination exists" is decided atomically by the kernel.
//!
//! Values that name something inside the workspace (`ContainedPath`, `WorkspaceDir`,
//! `WorkspaceEntry`) can only be constructed by this module: a caller that holds a plain
//! `String` cannot move a file.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, RenameFlags, ResolveFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// Longest single name the kernel accepts (bytes).
pub(crate) const MAX_NAME_BYTES: usize = 255;
/// Longest path the kernel accepts (bytes, without the NUL).
pub(crate) const MAX_PATH_BYTES: usize = 4095;
/// Bytes handed to each `getdents64` call when a folder is read (one call returns a few
/// thousand entries, so a folder of 100 000 names takes a few dozen calls).
const GETDENTS_BUFFER: usize = 64 * 1024;

/// Why a workspace operation did not happen. The organiser maps each variant to one
/// result code; `Display` is the human sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JailError {
    /// The name is malformed (empty, NUL byte, overlong, trailing `/`): `INVALID_REQUEST`.
    #[error("{0}")]
    Invalid(String),
    /// The name leaves the workspace or passes through a symlink: `PATH_ESCAPE`.
    #[error("{0}")]
    Escape(String),
    /// Nothing is there.
    #[error("'{0}' does not exist")]
    NotFound(String),
    /// The destination is taken: the kernel refused to overwrite it.
    #[error("destination '{0}' already exists; nothing is overwritten")]
    Exists(String),
    /// A path component that must be a folder is something else.
    #[error("'{0}' is not a folder")]
    NotAFolder(String),
    /// `renameat2` answered EXDEV: the two places are on different file systems.
    #[error(
        "moving '{src}' to '{dest}' would cross a file-system boundary; it is refused, never copied and deleted"
    )]
    CrossDevice {
        /// Source as shown to the user.
        src: String,
        /// Destination as shown to the user.
        dest: String,
    },
    /// `renameat2(RENAME_NOREPLACE)` answered EINVAL: the file system cannot promise not to
    /// overwrite, or a folder would be moved into itself.
    #[error(
        "moving '{src}' to '{dest}' was refused by the file system (no overwrite protection there, or a folder into itself); nothing was moved"
    )]
    RenameRefused {
        /// Source as shown to the user.
        src: String,
        /// Destination as shown to the user.
        dest: String,
    },
    /// What a move put at its destination is not the entry that was checked: between the
    /// check and the rename another entry took the source's name (`renameat2` with
    /// `RENAME_EXCHANGE` swaps in a symlink atomically). `outcome` says where that entry is
    /// now (put back at the source when that could be done).
    #[error(
        "'{src}' was exchanged for another entry after it was checked and before it was moved to '{dest}'; {outcome}"
    )]
    Swapped {
        /// Source as shown to the user.
        src: String,
        /// Destination as shown to the user.
        dest: String,
        /// Where the entry that moved by mistake is now, in words.
        outcome: String,
    },
    /// Any other system error, with the operation and the name.
    #[error("{op} '{path}' failed: {errno}")]
    Io {
        /// The system call, e.g. `rename`.
        op: &'static str,
        /// The workspace-relative name.
        path: String,
        /// The error number.
        errno: Errno,
    },
}

/// What kind of entry a name refers to (never following a symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Directory,
    /// A symbolic link (never followed, never moved).
    Symlink,
    /// A named pipe (never opened: opening one blocks).
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character or block device.
    Device,
    /// Anything else.
    Unknown,
}

impl EntryKind {
    fn from_file_type(t: FileType) -> Self {
        match t {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Directory,
            FileType::Symlink => EntryKind::Symlink,
            FileType::Fifo => EntryKind::Fifo,
            FileType::Socket => EntryKind::Socket,
            FileType::CharacterDevice | FileType::BlockDevice => EntryKind::Device,
            _ => EntryKind::Unknown,
        }
    }

    /// The wire name, e.g. `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Directory => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::Fifo => "fifo",
            EntryKind::Socket => "socket",
            EntryKind::Device => "device",
            EntryKind::Unknown => "unknown",
        }
    }
}

/// What identifies one file between planning and acting, and between a move and its undo:
/// kind, device, inode, size and modification time (from `lstat`, never following links).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileIdentity {
    /// Entry kind.
    pub kind: EntryKind,
    /// Device number.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, seconds.
    pub mtime_s: i64,
    /// Modification time, nanoseconds.
    pub mtime_ns: u64,
}

impl FileIdentity {
    fn from_stat(st: &rustix::fs::Stat) -> Self {
        FileIdentity {
            kind: EntryKind::from_file_type(FileType::from_raw_mode(st.st_mode)),
            dev: st.st_dev,
            ino: st.st_ino,
            size: u64::try_from(st.st_size).unwrap_or(0),
            mtime_s: st.st_mtime,
            mtime_ns: st.st_mtime_nsec,
        }
    }

    /// Is `other` still the very same, unchanged entry? A folder's size and mtime change
    /// whenever its contents do, so folders are compared by kind, device and inode only.
    pub fn unchanged(&self, other: &FileIdentity) -> bool {
        if self.kind == EntryKind::Directory {
            self.kind == other.kind && self.dev == other.dev && self.ino == other.ino
        } else {
            self == other
        }
    }

    /// The first difference between `self` (recorded) and `now`, in words.
    pub fn difference(&self, now: &FileIdentity) -> Option<&'static str> {
        if self.kind != now.kind {
            Some("its type changed")
        } else if self.dev != now.dev || self.ino != now.ino {
            Some("it was replaced by another file (inode changed)")
        } else if self.kind != EntryKind::Directory && self.size != now.size {
            Some("its size changed")
        } else if self.kind != EntryKind::Directory
            && (self.mtime_s != now.mtime_s || self.mtime_ns != now.mtime_ns)
        {
            Some("its modification time changed")
        } else {
            None
        }
    }
}

/// A workspace-relative name that passed the lexical checks: no NUL, no empty or overlong
/// component, no `..` above the root, each component NFC-normalised. Only this module
/// constructs one. The empty path is the workspace root itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct ContainedPath {
    parts: Vec<String>,
}

impl ContainedPath {
    /// Is this the workspace root itself?
    pub(crate) fn is_root(&self) -> bool {
        self.parts.is_empty()
    }

    /// The last component, `None` for the root.
    pub(crate) fn leaf(&self) -> Option<&str> {
        self.parts.last().map(String::as_str)
    }

    /// The folder holding this entry (the root's parent is the root).
    pub(crate) fn parent(&self) -> ContainedPath {
        let mut parts = self.parts.clone();
        parts.pop();
        ContainedPath { parts }
    }

    /// The components, outermost first.
    pub(crate) fn components(&self) -> &[String] {
        &self.parts
    }

    /// This path with one more validated component.
    pub(crate) fn join(&self, name: &str) -> Result<ContainedPath, JailError> {
        validate_component(name, name)?;
        let mut parts = self.parts.clone();
        parts.push(name.to_string());
        Ok(ContainedPath { parts })
    }
}

impl fmt::Display for ContainedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.parts.is_empty() {
            f.write_str(".")
        } else {
            f.write_str(&self.parts.join("/"))
        }
    }
}

/// NFC form of a name (`café` typed and `café` stored decomposed are one file).
pub(crate) fn nfc(name: &str) -> String {
    nfc_cow(name).into_owned()
}

/// [`nfc`] without a copy when the name is already in NFC (every ASCII name, and any name
/// the quick check proves normalised), which is nearly every name in a real folder.
pub(crate) fn nfc_cow(name: &str) -> Cow<'_, str> {
    if name.is_ascii() || is_nfc_quick(name.chars()) == IsNormalized::Yes {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.nfc().collect())
    }
}

/// Can `name` be one component of a [`ContainedPath`]? The same check
/// [`ContainedPath::join`] makes, without building a path.
pub(crate) fn check_component(name: &str) -> Result<(), JailError> {
    validate_component(name, name)
}

/// Check one component exactly as it will reach the kernel (never trimmed: a trailing
/// space or quote must not be silently dropped, GHSA-7rgq-gccq-qphx).
fn validate_component(part: &str, shown: &str) -> Result<(), JailError> {
    // `a/b` smuggled in as one component would be a second, unchecked step.
    if part.is_empty() || part.contains('/') {
        return Err(JailError::Invalid(format!(
            "'{shown}' is not a single name"
        )));
    }
    // `.` and `..` as a leaf name a folder itself or its parent, never a file to move.
    if part == "." || part == ".." {
        return Err(JailError::Invalid(format!(
            "'{shown}' cannot be '.' or '..'"
        )));
    }
    // A NUL byte would cut the name short at the syscall; serde accepts `\u0000`.
    if part.contains('\0') {
        return Err(JailError::Invalid(
            "a name cannot contain a NUL byte".into(),
        ));
    }
    // Overlong names: refuse early with a typed error instead of ENAMETOOLONG mid-action.
    if part.len() > MAX_NAME_BYTES {
        return Err(JailError::Invalid(format!(
            "a name is longer than {MAX_NAME_BYTES} bytes ({} bytes)",
            part.len()
        )));
    }
    Ok(())
}

/// An open folder inside the workspace, reached without following any symlink. Only the
/// [`Workspace`] hands these out.
#[derive(Debug)]
pub(crate) struct WorkspaceDir {
    fd: OwnedFd,
    path: ContainedPath,
}

/// One entry of a folder, as `lstat` saw it. Never opened.
#[derive(Debug, Clone)]
pub(crate) struct WorkspaceEntry {
    name: String,
    utf8: bool,
    identity: FileIdentity,
}

impl WorkspaceEntry {
    /// The name as stored (lossily decoded if it is not UTF-8).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
    /// Whether the stored name is valid UTF-8 (a name that is not cannot be named by a
    /// client, and is never moved).
    pub(crate) fn is_utf8(&self) -> bool {
        self.utf8
    }
    /// What `lstat` reported.
    pub(crate) fn identity(&self) -> &FileIdentity {
        &self.identity
    }
}

/// One entry of a folder as reading the folder reported it: the name and the type the
/// file system stored beside it (`d_type`), nothing opened and nothing `lstat`-ed yet. The
/// planner classifies by this type and `lstat`s only the entries it will plan
/// (`WorkspaceDir::identity_of`); anything it records for `apply_plan` comes from
/// `lstat`, never from the folder read.
#[derive(Debug, Clone)]
pub struct ScannedEntry<'a> {
    name: Cow<'a, str>,
    raw: &'a [u8],
    utf8: bool,
    kind: Option<EntryKind>,
}

impl ScannedEntry<'_> {
    /// The name as stored (lossily decoded if it is not UTF-8).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Whether the stored name is valid UTF-8.
    pub(crate) fn is_utf8(&self) -> bool {
        self.utf8
    }
    /// The entry's type as the folder read reported it; `None` when the file system does
    /// not record types in folders (`DT_UNKNOWN`), so only `lstat` can tell.
    pub(crate) fn kind_hint(&self) -> Option<EntryKind> {
        self.kind
    }
}

/// One name of a [`Scan`]: where its bytes are in the scan's buffer, and its stored type.
#[derive(Debug, Clone, Copy)]
struct ScanItem {
    start: usize,
    len: usize,
    file_type: FileType,
}

/// A sorted, bounded folder read without `lstat` (`WorkspaceDir::scan`). The names live
/// in one buffer, so a folder of 100 000 entries costs a handful of allocations, not
/// 100 000.
#[derive(Debug, Clone)]
pub struct Scan {
    names: Vec<u8>,
    items: Vec<ScanItem>,
    /// How many entries the folder holds in all.
    pub total: usize,
    /// `total` was more than the limit.
    pub truncated: bool,
}

impl Scan {
    /// The entries in byte order of their names, at most the requested limit.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = ScannedEntry<'_>> {
        self.items.iter().map(|item| {
            let raw = self
                .names
                .get(item.start..item.start + item.len)
                .unwrap_or_default();
            let (name, utf8) = match std::str::from_utf8(raw) {
                Ok(s) => (Cow::Borrowed(s), true),
                Err(_) => (String::from_utf8_lossy(raw), false),
            };
            let kind = match item.file_type {
                FileType::Unknown => None,
                t => Some(EntryKind::from_file_type(t)),
            };
            ScannedEntry {
                name,
                raw,
                utf8,
                kind,
            }
        })
    }
}

/// A sorted, bounded folder listing.
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    /// Entries in byte order of their names, at most the requested limit.
    pub entries: Vec<WorkspaceEntry>,
    /// How many entries the folder holds in all.
    pub total: usize,
    /// `total` was more than the limit.
    pub truncated: bool,
}

fn dir_flags() -> OFlags {
    // O_NONBLOCK: should a FIFO ever be reached it must not block the server. No O_NOFOLLOW:
    // RESOLVE_NO_SYMLINKS already refuses a symlink in the last component, with ELOOP
    // (O_NOFOLLOW would turn that into an ambiguous ENOTDIR).
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK
}

fn resolve_flags() -> ResolveFlags {
    // BENEATH: `..` and absolute names cannot leave the handle's folder (EXDEV).
    // NO_SYMLINKS: no symlink anywhere in the name is followed (ELOOP), so a folder swapped
    // for a symlink after planning cannot redirect the operation (CVE-2025-53109 shape).
    // NO_MAGICLINKS: `/proc/self/fd/N`-style links are refused too.
    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
}

fn open_child_dir(parent: BorrowedFd<'_>, name: &str, shown: &str) -> Result<OwnedFd, JailError> {
    validate_component(name, shown)?;
    super::openat2(parent, name, dir_flags(), Mode::empty(), resolve_flags()).map_err(|e| match e {
        Errno::LOOP => JailError::Escape(format!(
            "'{shown}' passes through a symlink; symlinks are never followed"
        )),
        Errno::XDEV => JailError::Escape(format!("'{shown}' is outside the workspace")),
        Errno::NOENT => JailError::NotFound(shown.to_string()),
        Errno::NOTDIR => JailError::NotAFolder(shown.to_string()),
        errno => JailError::Io {
            op: "open",
            path: shown.to_string(),
            errno,
        },
    })
}

impl WorkspaceDir {
    /// This folder's workspace-relative path (with the names as stored).
    pub(crate) fn path(&self) -> &ContainedPath {
        &self.path
    }

    fn shown(&self, name: &str) -> String {
        if self.path.is_root() {
            name.to_string()
        } else {
            format!("{}/{name}", self.path)
        }
    }

    /// `lstat` of one name in this folder; `Ok(None)` when nothing is there.
    pub(crate) fn stat(&self, name: &str) -> Result<Option<FileIdentity>, JailError> {
        let shown = self.shown(name);
        validate_component(name, &shown)?;
        match rustix::fs::statat(self.fd.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileIdentity::from_stat(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(errno) => Err(JailError::Io {
                op: "stat",
                path: shown,
                errno,
            }),
        }
    }

    /// Find `name` in this folder: first exactly, then by NFC-equal stored name.
    /// Returns the name as stored and its identity.
    pub(crate) fn find(&self, name: &str) -> Result<Option<(String, FileIdentity)>, JailError> {
        if let Some(id) = self.stat(name)? {
            return Ok(Some((name.to_string(), id)));
        }
        let wanted = nfc(name);
        for stored in self.raw_names()? {
            // An ASCII name is its own NFC form, and the exact lookup above missed it.
            if stored.is_ascii() {
                continue;
            }
            let Ok(stored) = String::from_utf8(stored) else {
                continue;
            };
            if nfc(&stored) == wanted
                && let Some(id) = self.stat(&stored)?
            {
                return Ok(Some((stored, id)));
            }
        }
        Ok(None)
    }

    /// Is `name` free here, also under NFC comparison (a stored decomposed `café` makes a
    /// composed `café` taken: two names that look the same are one name)?
    pub(crate) fn is_free(&self, name: &str) -> Result<bool, JailError> {
        Ok(self.find(name)?.is_none())
    }

    /// The NFC forms of every name in this folder (for checking many destinations at once).
    pub(crate) fn nfc_names(&self) -> Result<HashSet<String>, JailError> {
        Ok(self
            .raw_names()?
            .into_iter()
            .map(|n| nfc(&String::from_utf8_lossy(&n)))
            .collect())
    }

    /// Read every name of this folder with its stored type, through a fresh handle (so the
    /// read position of `self` is never shared) and one `getdents64` buffer for the whole
    /// read: no allocation per entry beyond the name the caller keeps.
    fn read_folder(&self, mut each: impl FnMut(&[u8], FileType)) -> Result<(), JailError> {
        let io = |errno| JailError::Io {
            op: "read folder",
            path: self.path.to_string(),
            errno,
        };
        let fd =
            rustix::fs::openat(self.fd.as_fd(), ".", dir_flags(), Mode::empty()).map_err(io)?;
        let mut buf = vec![MaybeUninit::<u8>::uninit(); GETDENTS_BUFFER];
        let mut dir = RawDir::new(fd, &mut buf);
        while let Some(entry) = dir.next() {
            let entry = entry.map_err(io)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            each(name, entry.file_type());
        }
        Ok(())
    }

    fn raw_names(&self) -> Result<Vec<Vec<u8>>, JailError> {
        let mut names = Vec::new();
        self.read_folder(|name, _| names.push(name.to_vec()))?;
        Ok(names)
    }

    /// Read this folder without inspecting any entry: every name with the type the folder
    /// records for it, sorted by bytes, cut to `limit`.
    pub(crate) fn scan(&self, limit: usize) -> Result<Scan, JailError> {
        let mut names: Vec<u8> = Vec::new();
        let mut items: Vec<ScanItem> = Vec::new();
        self.read_folder(|name, file_type| {
            items.push(ScanItem {
                start: names.len(),
                len: name.len(),
                file_type,
            });
            names.extend_from_slice(name);
        })?;
        let bytes = |i: &ScanItem| names.get(i.start..i.start + i.len).unwrap_or_default();
        items.sort_unstable_by(|a, b| bytes(a).cmp(bytes(b)));
        let total = items.len();
        let truncated = total > limit;
        items.truncate(limit);
        Ok(Scan {
            names,
            items,
            total,
            truncated,
        })
    }

    /// `lstat` of a scanned entry (by its stored bytes, never following a link);
    /// `Ok(None)` when it was removed since the folder was read.
    pub(crate) fn identity_of(
        &self,
        entry: &ScannedEntry<'_>,
    ) -> Result<Option<FileIdentity>, JailError> {
        match rustix::fs::statat(self.fd.as_fd(), entry.raw, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileIdentity::from_stat(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(errno) => Err(JailError::Io {
                op: "stat",
                path: self.shown(entry.name()),
                errno,
            }),
        }
    }

    /// List this folder: every name, sorted by bytes, cut to `limit`; each kept entry is
    /// inspected with `lstat` (never opened, so a FIFO cannot block the listing).
    pub(crate) fn list(&self, limit: usize) -> Result<Listing, JailError> {
        let scan = self.scan(limit)?;
        let mut entries = Vec::with_capacity(scan.items.len());
        for scanned in scan.entries() {
            // `None`: removed between reading the folder and looking at the entry.
            let Some(identity) = self.identity_of(&scanned)? else {
                continue;
            };
            entries.push(WorkspaceEntry {
                utf8: scanned.is_utf8(),
                name: scanned.name.into_owned(),
                identity,
            });
        }
        Ok(Listing {
            entries,
            total: scan.total,
            truncated: scan.truncated,
        })
    }
}

/// The workspace: its canonical root and an open handle to it.
#[derive(Debug)]
pub(crate) struct Workspace {
    root: PathBuf,
    root_fd: OwnedFd,
}

impl Workspace {
    /// Open the (already canonical) workspace root.
    pub(crate) fn open(root: &Path) -> Result<Workspace, JailError> {
        let fd = rustix::fs::open(root, dir_flags() | OFlags::NOFOLLOW, Mode::empty()).map_err(
            |errno| JailError::Io {
                op: "open workspace",
                path: root.display().to_string(),
                errno,
            },
        )?;
        Ok(Workspace {
            root: root.to_path_buf(),
            root_fd: fd,
        })
    }

    /// The canonical root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Turn a client's name into a [`ContainedPath`], lexically. The kernel checks again at
    /// every use (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`); this layer gives the precise
    /// error and refuses what must never reach it.
    pub(crate) fn contain(&self, raw: &str) -> Result<ContainedPath, JailError> {
        // Empty: names nothing.
        if raw.is_empty() {
            return Err(JailError::Invalid("the name is empty".into()));
        }
        // NUL: would cut the name short at the syscall (serde accepts `\u0000`).
        if raw.contains('\0') {
            return Err(JailError::Invalid(
                "a name cannot contain a NUL byte".into(),
            ));
        }
        // Overlong: refuse with a typed error rather than ENAMETOOLONG halfway through.
        if raw.len() > MAX_PATH_BYTES {
            return Err(JailError::Invalid(format!(
                "the name is longer than {MAX_PATH_BYTES} bytes ({} bytes)",
                raw.len()
            )));
        }
        // `sub/file.txt/`: check exactly the bytes that are used, never trim (GHSA-7rgq).
        if raw.len() > 1 && raw.ends_with('/') {
            return Err(JailError::Invalid(format!(
                "'{raw}' ends with '/'; name the entry without a trailing slash"
            )));
        }
        let relative: Vec<String> = if raw.starts_with('/') {
            // An absolute name is accepted only if it lies beneath the root, compared by
            // components: `/srv/inbox_evil` starts with `/srv/inbox` as a string but is not
            // inside it (CVE-2025-53110).
            let path = Path::new(raw);
            let root_len = self.root.components().count();
            if !super::is_within(&self.root, path) {
                return Err(JailError::Escape(format!(
                    "'{raw}' is outside the workspace"
                )));
            }
            path.components()
                .skip(root_len)
                .map(|c| match c {
                    Component::ParentDir => "..".to_string(),
                    Component::CurDir => ".".to_string(),
                    other => other.as_os_str().to_string_lossy().into_owned(),
                })
                .collect()
        } else {
            raw.split('/').map(str::to_string).collect()
        };
        let mut parts: Vec<String> = Vec::new();
        for part in relative {
            match part.as_str() {
                "" | "." => {}
                // `..` above the root is a traversal (`../inbox_evil/secret`). Below the
                // root it is resolved lexically, which equals the kernel's physical
                // resolution because no symlink is ever followed.
                ".." => {
                    if parts.pop().is_none() {
                        return Err(JailError::Escape(format!(
                            "'{raw}' climbs out of the workspace"
                        )));
                    }
                }
                _ => {
                    let normalised = nfc(&part);
                    validate_component(&normalised, raw)?;
                    parts.push(normalised);
                }
            }
        }
        Ok(ContainedPath { parts })
    }

    /// Open a folder of the workspace without following any symlink. Each component is
    /// looked up exactly, then by NFC-equal stored name.
    pub(crate) fn open_dir(&self, path: &ContainedPath) -> Result<WorkspaceDir, JailError> {
        let mut fd = rustix::io::dup(self.root_fd.as_fd()).map_err(|errno| JailError::Io {
            op: "dup",
            path: ".".into(),
            errno,
        })?;
        let mut stored = ContainedPath::default();
        for part in &path.parts {
            let shown = stored.join(part)?.to_string();
            let next = match open_child_dir(fd.as_fd(), part, &shown) {
                Ok(next) => {
                    stored.parts.push(part.clone());
                    next
                }
                Err(JailError::NotFound(_)) => {
                    let here = WorkspaceDir {
                        fd,
                        path: stored.clone(),
                    };
                    let Some((name, _)) = here.find(part)? else {
                        return Err(JailError::NotFound(shown));
                    };
                    let next = open_child_dir(here.fd.as_fd(), &name, &shown)?;
                    stored.parts.push(name);
                    next
                }
                Err(e) => return Err(e),
            };
            fd = next;
        }
        Ok(WorkspaceDir { fd, path: stored })
    }

    /// Open a folder, creating each missing component with `mkdirat` relative to the
    /// already-checked parent handle (never by a path from the root).
    pub(crate) fn ensure_dir(&self, path: &ContainedPath) -> Result<WorkspaceDir, JailError> {
        let mut dir = self.open_dir(&ContainedPath::default())?;
        for part in &path.parts {
            let shown = dir.path.join(part)?.to_string();
            let next = match open_child_dir(dir.fd.as_fd(), part, &shown) {
                Ok(fd) => fd,
                Err(JailError::NotFound(_)) => {
                    if let Some((name, _)) = dir.find(part)? {
                        open_child_dir(dir.fd.as_fd(), &name, &shown)?
                    } else {
                        match rustix::fs::mkdirat(
                            dir.fd.as_fd(),
                            part.as_str(),
                            Mode::from_raw_mode(0o755),
                        ) {
                            // EEXIST: someone made it in between; the open below checks what.
                            Ok(()) | Err(Errno::EXIST) => {}
                            Err(errno) => {
                                return Err(JailError::Io {
                                    op: "mkdir",
                                    path: shown,
                                    errno,
                                });
                            }
                        }
                        open_child_dir(dir.fd.as_fd(), part, &shown)?
                    }
                }
                Err(e) => return Err(e),
            };
            let mut parts = dir.path.parts.clone();
            parts.push(part.clone());
            dir = WorkspaceDir {
                fd: next,
                path: ContainedPath { parts },
            };
        }
        Ok(dir)
    }

    /// `lstat` of a path; `Ok(None)` if it or a parent folder is missing.
    pub(crate) fn stat_path(
        &self,
        path: &ContainedPath,
    ) -> Result<Option<FileIdentity>, JailError> {
        let Some(leaf) = path.leaf() else {
            return Err(JailError::Invalid(
                "the workspace root itself cannot be named here".into(),
            ));
        };
        match self.open_dir(&path.parent()) {
            Ok(dir) => dir.stat(leaf),
            Err(JailError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Move `from_dir/from` to `to_dir/to` with `renameat2(RENAME_NOREPLACE)`: an existing
    /// destination is refused by the kernel atomically (never overwritten, never renamed
    /// around), a cross-device move is refused (never copied and deleted), and a file
    /// system without NOREPLACE support is refused (never a plain rename instead).
    pub(crate) fn rename_noreplace(
        &self,
        from_dir: &WorkspaceDir,
        from: &str,
        to_dir: &WorkspaceDir,
        to: &str,
    ) -> Result<(), JailError> {
        let src = from_dir.shown(from);
        let dest = to_dir.shown(to);
        validate_component(from, &src)?;
        validate_component(to, &dest)?;
        rustix::fs::renameat_with(
            from_dir.fd.as_fd(),
            from,
            to_dir.fd.as_fd(),
            to,
            RenameFlags::NOREPLACE,
        )
        .map_err(|errno| match errno {
            Errno::EXIST | Errno::NOTEMPTY => JailError::Exists(dest.clone()),
            Errno::XDEV => JailError::CrossDevice {
                src: src.clone(),
                dest: dest.clone(),
            },
            Errno::INVAL => JailError::RenameRefused {
                src: src.clone(),
                dest: dest.clone(),
            },
            Errno::NOENT => JailError::NotFound(src.clone()),
            errno => JailError::Io {
                op: "rename",
                path: src.clone(),
                errno,
            },
        })
    }
}

impl Workspace {
    /// [`Workspace::rename_noreplace`], then proof that what moved is the entry that was
    /// checked: the destination is `lstat`ed (`fstatat` with `AT_SYMLINK_NOFOLLOW`, relative
    /// to the folder handle) and its device and inode must be `expected`'s.
    ///
    /// Attack stopped: a planned file exchanged for a symlink (or any other entry) after the
    /// caller's re-check, with `renameat2(RENAME_EXCHANGE)`, which no check before a rename
    /// can close. When the moved entry is not `expected`, it is put back at once
    /// (`RENAME_NOREPLACE` to the source name, or, when that name was taken meanwhile, to a
    /// free `<name>.swapped-N` beside it), never left at the destination, and
    /// [`JailError::Swapped`] says where it is; the caller then treats the move as not made.
    pub(crate) fn rename_checked(
        &self,
        from_dir: &WorkspaceDir,
        from: &str,
        to_dir: &WorkspaceDir,
        to: &str,
        expected: &FileIdentity,
    ) -> Result<(), JailError> {
        self.rename_noreplace(from_dir, from, to_dir, to)?;
        let now = rustix::fs::statat(to_dir.fd.as_fd(), to, AtFlags::SYMLINK_NOFOLLOW);
        if let Ok(st) = &now
            && st.st_dev == expected.dev
            && st.st_ino == expected.ino
        {
            return Ok(());
        }
        let src = from_dir.shown(from);
        let dest = to_dir.shown(to);
        let outcome = if now.is_err() {
            // Gone again already (the other party moved it on): nothing of ours is there.
            format!("the entry is no longer at '{dest}'; nothing was left moved")
        } else {
            match self.put_back(to_dir, to, from_dir, from) {
                Some(name) => format!(
                    "it was put back at '{}' and counts as not moved",
                    from_dir.shown(&name)
                ),
                None => format!(
                    "it could not be put back and is still at '{dest}': check and remove it by hand"
                ),
            }
        };
        tracing::warn!(src = %src, dest = %dest, outcome = %outcome, "an entry was exchanged during a move");
        Err(JailError::Swapped { src, dest, outcome })
    }

    /// Move `to_dir/to` back to `from_dir/from`, or to the first free `from.swapped-N`
    /// (N = 1..=16) beside it; the name it went to.
    fn put_back(
        &self,
        to_dir: &WorkspaceDir,
        to: &str,
        from_dir: &WorkspaceDir,
        from: &str,
    ) -> Option<String> {
        let names = std::iter::once(from.to_string())
            .chain((1..=16).map(|n| format!("{from}.swapped-{n}")));
        for name in names {
            match self.rename_noreplace(to_dir, to, from_dir, &name) {
                Ok(()) => return Some(name),
                Err(JailError::Exists(_) | JailError::Invalid(_)) => continue,
                Err(_) => return None,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = Workspace::open(&root).unwrap();
        (dir, ws)
    }

    #[test]
    fn contain_refuses_traversal_above_root_but_resolves_inside() {
        let (_d, ws) = ws();
        assert!(matches!(ws.contain("../x"), Err(JailError::Escape(_))));
        assert!(matches!(ws.contain("a/../../x"), Err(JailError::Escape(_))));
        assert_eq!(ws.contain("a/../b").unwrap().to_string(), "b");
        assert_eq!(ws.contain("./a//b").unwrap().to_string(), "a/b");
    }

    #[test]
    fn contain_compares_absolute_names_by_component() {
        let (_d, ws) = ws();
        let inside = format!("{}/a.txt", ws.root().display());
        assert_eq!(ws.contain(&inside).unwrap().to_string(), "a.txt");
        let sibling = format!("{}_evil/a.txt", ws.root().display());
        assert!(matches!(ws.contain(&sibling), Err(JailError::Escape(_))));
        assert!(matches!(
            ws.contain("/etc/passwd"),
            Err(JailError::Escape(_))
        ));
    }

    #[test]
    fn contain_refuses_malformed_names() {
        let (_d, ws) = ws();
        assert!(matches!(ws.contain(""), Err(JailError::Invalid(_))));
        assert!(matches!(ws.contain("a\0b"), Err(JailError::Invalid(_))));
        assert!(matches!(ws.contain("a/"), Err(JailError::Invalid(_))));
        assert!(matches!(
            ws.contain(&"x".repeat(256)),
            Err(JailError::Invalid(_))
        ));
        assert!(matches!(
            ws.contain(&"a/".repeat(2100)),
            Err(JailError::Invalid(_))
        ));
    }

    #[test]
    fn contain_normalises_to_nfc() {
        let (_d, ws) = ws();
        let decomposed = ws.contain("cafe\u{301}.txt").unwrap();
        assert_eq!(decomposed.to_string(), "caf\u{e9}.txt");
    }
}
