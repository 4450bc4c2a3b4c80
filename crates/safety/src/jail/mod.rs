//! Path containment for the terminal server (docs/terminal.md).
//!
//! The jail root is opened once as a directory handle. Every path a request names (the `cwd`,
//! path-like arguments) is resolved by the kernel relative to that handle with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: `..` that climbs out, an absolute
//! symlink target, or a symlink leading out of the root all fail inside the kernel, so no
//! string comparison decides containment. [`workspace`] holds the stricter file-operation
//! layer of the files server.

pub mod workspace;

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Is `inner` equal to or beneath `root`? Compared by components, never by string prefix:
/// `/srv/jail_evil` starts with `/srv/jail` as a string but is not inside it.
pub(crate) fn is_within(root: &Path, inner: &Path) -> bool {
    let mut r = root.components();
    let mut i = inner.components();
    loop {
        match (r.next(), i.next()) {
            (None, _) => return true,
            (Some(a), Some(b)) if a == b => continue,
            _ => return false,
        }
    }
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JailError {
    /// The path leaves the root (→ `PATH_ESCAPE`).
    #[error("path '{path}' escapes the jail root")]
    Escape {
        /// The path as given.
        path: String,
    },
    /// Part of a command's argument is a path that leaves the root, e.g. the value of
    /// `--output=/tmp/x`, or the `//host/x` of a URL (→ `PATH_ESCAPE`).
    #[error("{}", arg_escape(.arg, .path))]
    ArgEscape {
        /// The whole argument as given.
        arg: String,
        /// The part of it that was taken as a path.
        path: String,
    },
    /// The path is malformed or does not name a usable folder (→ `INVALID_REQUEST`).
    #[error("{reason}")]
    Invalid {
        /// One sentence.
        reason: String,
    },
    /// The root itself cannot be opened (start-up).
    #[error("jail root '{root}' cannot be opened: {message}")]
    Root {
        /// The root.
        root: PathBuf,
        /// Why.
        message: String,
    },
}

/// The reason of [`JailError::ArgEscape`]: a URL is named as one (its `//host/...` part is
/// what leaves the jail, and showing only that part would read as a mangled path).
fn arg_escape(arg: &str, path: &str) -> String {
    let (arg, path) = (crate::protocol::quote(arg), crate::protocol::quote(path));
    if is_url(&arg) {
        format!(
            "argument '{arg}' is a URL; URLs are refused, since a command may name only paths \
             inside the jail and the '{path}' of this one is read as a path outside it"
        )
    } else {
        format!("argument '{arg}' names the path '{path}', which escapes the jail root")
    }
}

/// `scheme://...` (RFC 3986 scheme: a letter, then letters, digits, `+`, `-`, `.`).
pub(crate) fn is_url(arg: &str) -> bool {
    arg.split_once("://").is_some_and(|(scheme, _)| {
        let mut chars = scheme.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// The jail: a canonical root and an open directory handle on it.
#[derive(Debug)]
pub struct Jail {
    root: PathBuf,
    dir: OwnedFd,
}

/// A working folder proven to be inside the jail. Only [`Jail::resolve_cwd`] makes one.
#[derive(Debug)]
pub struct ContainedDir {
    relative: PathBuf,
    absolute: PathBuf,
    handle: OwnedFd,
}

impl ContainedDir {
    /// Path relative to the jail root (`""` for the root itself).
    pub fn relative(&self) -> &Path {
        &self.relative
    }
    /// The real absolute path of the folder, as the kernel resolved it.
    pub fn absolute(&self) -> &Path {
        &self.absolute
    }
    /// The open handle on the folder (the child enters it with `fchdir`).
    pub(crate) fn handle_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.handle.as_fd()
    }
}

fn beneath() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS
}

/// How often [`openat2`] asks again after `EAGAIN` before the caller refuses.
const OPENAT2_ATTEMPTS: usize = 1000;

/// `openat2`, asked again when the kernel answers `EAGAIN`. With `RESOLVE_BENEATH` the kernel
/// gives up on a `..` (written, or in a symlink's target) whenever any rename or mount
/// anywhere on the machine raced the lookup, since it can then not prove the `..` stayed
/// beneath; openat2(2) says to retry. Bounded: after [`OPENAT2_ATTEMPTS`] the `EAGAIN` is
/// returned and the caller refuses, as it refuses any errno it does not expect.
pub(crate) fn openat2<P: rustix::path::Arg + Copy>(
    dir: BorrowedFd<'_>,
    path: P,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    let mut attempt = 1;
    loop {
        match rustix::fs::openat2(dir, path, flags, mode, resolve) {
            Err(Errno::AGAIN) if attempt < OPENAT2_ATTEMPTS => {
                attempt += 1;
                std::thread::yield_now();
            }
            answer => return answer,
        }
    }
}

impl Jail {
    /// Open the (already canonical) root.
    pub fn open(root: &Path) -> Result<Jail, JailError> {
        let dir = rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| JailError::Root {
            root: root.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(Jail {
            root: root.to_path_buf(),
            dir,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Turn a request path into a path relative to the root, refusing absolute paths outside it.
    /// `/srv/jail_evil/x` is not inside `/srv/jail`: components are compared, not strings.
    fn relative_to_root(&self, base: &Path, path: &str) -> Result<PathBuf, JailError> {
        if path.contains('\0') {
            return Err(JailError::Invalid {
                reason: "path contains a NUL byte".into(),
            });
        }
        let p = Path::new(path);
        if p.is_absolute() {
            if !is_within(&self.root, p) {
                return Err(JailError::Escape {
                    path: path.to_string(),
                });
            }
            Ok(p.strip_prefix(&self.root)
                .map(Path::to_path_buf)
                .unwrap_or_default())
        } else {
            Ok(base.join(p))
        }
    }

    /// Resolve `rel` beneath the root through the kernel. Symlinks that stay inside are
    /// followed; one that leads out, or a `..` that climbs out, is `EXDEV`.
    fn open_beneath(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        openat2(
            self.dir.as_fd(),
            rel,
            flags | OFlags::CLOEXEC,
            Mode::empty(),
            beneath(),
        )
    }

    /// Resolve the optional working folder of a command.
    pub fn resolve_cwd(&self, cwd: Option<&str>) -> Result<ContainedDir, JailError> {
        let given = cwd.unwrap_or("");
        let relative = self.relative_to_root(Path::new(""), given)?;
        if relative.as_os_str().is_empty() {
            // The root itself (the usual case): a second handle to the folder opened when
            // the jail was, and the name resolved then; no path walk.
            let handle = self
                .dir
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| JailError::Invalid {
                    reason: format!("the jail root cannot be opened: {e}"),
                })?;
            return Ok(ContainedDir {
                relative,
                absolute: self.root.clone(),
                handle,
            });
        }
        let handle = match self.open_beneath(&relative, OFlags::PATH | OFlags::DIRECTORY) {
            Ok(fd) => fd,
            Err(Errno::XDEV) | Err(Errno::LOOP) => {
                return Err(JailError::Escape {
                    path: given.to_string(),
                });
            }
            Err(Errno::NOENT) => {
                return Err(JailError::Invalid {
                    reason: format!("cwd '{given}' does not exist"),
                });
            }
            Err(Errno::NOTDIR) => {
                return Err(JailError::Invalid {
                    reason: format!("cwd '{given}' is not a folder"),
                });
            }
            Err(e) => {
                return Err(JailError::Invalid {
                    reason: format!("cwd '{given}' cannot be opened: {e}"),
                });
            }
        };
        // The kernel's own name for the folder it opened (symlinks inside already resolved).
        let absolute = std::fs::read_link(format!("/proc/self/fd/{}", fd_number(&handle)))
            .map_err(|e| JailError::Invalid {
                reason: format!("cwd '{given}' cannot be resolved: {e}"),
            })?;
        // Defence in depth: the kernel said beneath; the name must agree.
        if !is_within(&self.root, &absolute) {
            return Err(JailError::Escape {
                path: given.to_string(),
            });
        }
        let relative = absolute
            .strip_prefix(&self.root)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Ok(ContainedDir {
            relative,
            absolute,
            handle,
        })
    }

    /// Check one path named by a request, taken relative to `cwd`. A path that does not exist
    /// yet is judged by its deepest existing ancestor, walked through the kernel the same way;
    /// a `..` in the part that does not exist is refused: the kernel never saw it, and a
    /// program that creates folders (`mkdir -p`, `git init`) or normalises the path itself
    /// would climb out with it (`sub/missing/../../../x`).
    pub(crate) fn check_path(&self, cwd: &ContainedDir, path: &str) -> Result<(), JailError> {
        self.deepest_beneath(cwd, path).map(|_| ())
    }

    /// The walk of [`Jail::check_path`]: a handle on the deepest existing part of `path`
    /// (opened by the kernel beneath the root) and the rest as written, which holds no `..`.
    fn deepest_beneath(
        &self,
        cwd: &ContainedDir,
        path: &str,
    ) -> Result<(OwnedFd, PathBuf), JailError> {
        let escape = || JailError::Escape {
            path: path.to_string(),
        };
        let rel = self.relative_to_root(cwd.relative(), path)?;
        let components: Vec<Component> = rel.components().collect();
        for keep in (0..=components.len()).rev() {
            let prefix: PathBuf = components.iter().take(keep).collect();
            match self.open_beneath(&prefix, OFlags::PATH) {
                Ok(fd) => {
                    let rest = components.get(keep..).unwrap_or_default();
                    if rest.contains(&Component::ParentDir) {
                        return Err(escape());
                    }
                    return Ok((fd, rest.iter().collect()));
                }
                Err(Errno::NOENT) | Err(Errno::NOTDIR) => continue,
                // XDEV/LOOP: out through `..` or a symlink. Anything else (EACCES,
                // ENAMETOOLONG): not provably inside, so refused too.
                Err(_) => return Err(escape()),
            }
        }
        // The empty prefix is the root itself, which always opens.
        Err(escape())
    }

    /// The kernel's own name for an open handle, relative to the root; `None` when that
    /// name is not beneath the root (defence in depth: the kernel already said it is).
    pub(crate) fn relative_name(&self, handle: &OwnedFd) -> Option<PathBuf> {
        let absolute = std::fs::read_link(format!("/proc/self/fd/{}", fd_number(handle))).ok()?;
        if !is_within(&self.root, &absolute) {
            return None;
        }
        absolute
            .strip_prefix(&self.root)
            .ok()
            .map(Path::to_path_buf)
    }

    /// Where `path` (taken relative to `cwd`) really is, for a check of *which* file it names
    /// rather than only whether it stays inside: the path relative to the root of its
    /// deepest existing part as the kernel resolved it (every symlink inside followed, so
    /// `link/hooks` with `link -> .git` is `.git/hooks`), then the rest as written (which
    /// holds no `..`), and the link count of the entry when it exists and is a regular file.
    /// Containment is refused as [`Jail::check_path`] refuses it.
    pub(crate) fn locate(&self, cwd: &ContainedDir, path: &str) -> Result<Located, JailError> {
        let (fd, rest) = self.deepest_beneath(cwd, path)?;
        // `notes -> .git/hooks/pre-commit`, dangling: a write through it creates the target,
        // which the name `notes` does not show. Refused.
        if let Some(Component::Normal(first)) = rest.components().next()
            && rustix::fs::statat(&fd, first, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(
                |st| {
                    rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
                },
            )
        {
            return Err(JailError::Invalid {
                reason: format!(
                    "'{}' is a symlink to something that does not exist: writing through it \
                     would create a file its name does not show",
                    crate::protocol::quote(path)
                ),
            });
        }
        let mut relative = self.relative_name(&fd).ok_or_else(|| JailError::Escape {
            path: path.to_string(),
        })?;
        let links = if rest.as_os_str().is_empty() {
            rustix::fs::fstat(&fd)
                .ok()
                .filter(|st| {
                    rustix::fs::FileType::from_raw_mode(st.st_mode)
                        == rustix::fs::FileType::RegularFile
                })
                .map(|st| st.st_nlink)
        } else {
            None
        };
        if !rest.as_os_str().is_empty() {
            relative.push(rest);
        }
        Ok(Located { relative, links })
    }

    /// Does `rel` (relative to the root) name something that exists beneath it?
    pub(crate) fn exists_beneath(&self, rel: &Path) -> bool {
        self.open_beneath(rel, OFlags::PATH).is_ok()
    }

    /// Does `name` name an existing entry (link or not) relative to `cwd`? Used to treat
    /// `cat link` as path-like when `link` is a symlink leading out of the jail.
    fn names_entry(&self, cwd: &ContainedDir, name: &str) -> bool {
        if name.is_empty() || name.contains('\0') {
            return false;
        }
        let rel = cwd.relative().join(name);
        let rel = if rel.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            rel
        };
        rustix::fs::statat(
            self.dir.as_fd(),
            &rel,
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .is_ok()
    }

    /// Check every path-like argument of an argv: absolute paths, anything
    /// holding `/` or a `..` component, the value of `--opt=value`, the attached value of a
    /// short option (`-o/tmp/x`), values after `:` (`host:/etc`), and any argument that names
    /// an existing entry relative to the working folder.
    pub(crate) fn check_args(&self, cwd: &ContainedDir, args: &[String]) -> Result<(), JailError> {
        for arg in args {
            for candidate in path_candidates(arg) {
                let path_like = candidate.starts_with('/')
                    || candidate.contains('/')
                    || candidate == ".."
                    || self.names_entry(cwd, candidate);
                if path_like {
                    self.check_path(cwd, candidate).map_err(|e| match e {
                        // The part that escapes is not the whole argument: name both.
                        JailError::Escape { path } if candidate != arg => JailError::ArgEscape {
                            arg: arg.clone(),
                            path,
                        },
                        other => other,
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// Where a path really is beneath the root ([`Jail::locate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    /// Relative to the root, symlinks inside resolved.
    pub(crate) relative: PathBuf,
    /// The link count, when the path names an existing regular file.
    pub(crate) links: Option<u64>,
}

/// The parts of one argument that could be a path.
pub(crate) fn path_candidates(arg: &str) -> Vec<&str> {
    let mut out = vec![arg];
    if let Some((_, value)) = arg.split_once('=') {
        out.push(value);
    }
    // `-o/tmp/x`, and also after a cluster of flags: `cp -vt/tmp/x` is `-v -t /tmp/x`, and
    // which letters take a value is the program's business, so every suffix after a run of
    // option letters may be the value (`-vt..` is `..`).
    if arg.starts_with('-') && !arg.starts_with("--") {
        let bytes = arg.as_bytes();
        let mut k = 2;
        while k <= bytes.len() {
            if let Some(rest) = arg.get(k..).filter(|r| !r.is_empty())
                && !out.contains(&rest)
            {
                out.push(rest);
            }
            match bytes.get(k - 1) {
                Some(b) if b.is_ascii_alphanumeric() && k < bytes.len() => k += 1,
                _ => break,
            }
        }
    }
    for piece in arg.split([':', '=', ',']) {
        if piece.starts_with('/') && !out.contains(&piece) {
            out.push(piece);
        }
    }
    out
}

fn fd_number(fd: &OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_glued_after_a_cluster_of_flags_is_a_candidate() {
        let c = path_candidates("-vt/tmp/x");
        assert!(c.contains(&"/tmp/x") && c.contains(&"t/tmp/x"), "{c:?}");
        assert!(path_candidates("-vt..").contains(&".."));
        assert!(path_candidates("-uf/etc/passwd").contains(&"/etc/passwd"));
        // A long option's value comes after `=` only.
        assert_eq!(path_candidates("--x"), vec!["--x"]);
    }

    #[test]
    fn component_comparison_refuses_sibling_with_longer_name() {
        assert!(is_within(Path::new("/srv/jail"), Path::new("/srv/jail/a")));
        assert!(is_within(Path::new("/srv/jail"), Path::new("/srv/jail")));
        assert!(!is_within(
            Path::new("/srv/jail"),
            Path::new("/srv/jail_evil/a")
        ));
        assert!(!is_within(Path::new("/srv/jail"), Path::new("/srv")));
    }
    use std::os::unix::fs::symlink;

    fn jail() -> (tempfile::TempDir, Jail) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("jail");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        std::fs::create_dir_all(dir.path().join("jail_evil")).unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        symlink(dir.path().join("secret"), root.join("link")).unwrap();
        symlink("/etc", root.join("etc")).unwrap();
        symlink("notes.txt", root.join("inside")).unwrap();
        let root = root.canonicalize().unwrap();
        let j = Jail::open(&root).unwrap();
        (dir, j)
    }

    #[test]
    fn cwd_traversal_and_absolute_escape_are_refused() {
        let (_d, j) = jail();
        assert!(matches!(
            j.resolve_cwd(Some("..")),
            Err(JailError::Escape { .. })
        ));
        assert!(matches!(
            j.resolve_cwd(Some("sub/../..")),
            Err(JailError::Escape { .. })
        ));
        assert!(matches!(
            j.resolve_cwd(Some("/etc")),
            Err(JailError::Escape { .. })
        ));
        assert!(matches!(
            j.resolve_cwd(Some("etc")),
            Err(JailError::Escape { .. })
        ));
        let evil = j.root().parent().unwrap().join("jail_evil");
        assert!(matches!(
            j.resolve_cwd(evil.to_str()),
            Err(JailError::Escape { .. })
        ));
        assert_eq!(
            j.resolve_cwd(Some("sub")).unwrap().relative(),
            Path::new("sub")
        );
        let abs = j.root().join("sub");
        assert_eq!(
            j.resolve_cwd(abs.to_str()).unwrap().relative(),
            Path::new("sub")
        );
        assert!(matches!(
            j.resolve_cwd(Some("missing")),
            Err(JailError::Invalid { .. })
        ));
    }

    /// With `RESOLVE_BENEATH` the kernel answers a `..` with `EAGAIN` whenever any rename on
    /// the machine raced the lookup. A real rename storm runs beside thousands of lookups whose
    /// symlinks climb with `..`: the inside one always resolves, the outside one is always an
    /// escape, never a different answer.
    #[test]
    fn a_rename_storm_elsewhere_never_changes_an_answer() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let (d, j) = jail();
        std::fs::create_dir_all(j.root().join("sub/inner")).unwrap();
        symlink("../../sub", j.root().join("sub/inner/up")).unwrap();
        symlink("../../notes.txt", j.root().join("sub/inner/file")).unwrap();
        symlink("../../../secret", j.root().join("sub/inner/out")).unwrap();
        let storm = tempfile::tempdir().unwrap();
        let (a, b) = (storm.path().join("a"), storm.path().join("b"));
        std::fs::write(&a, "x").unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let renamer = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut renames = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    std::fs::rename(&a, &b).unwrap();
                    std::fs::rename(&b, &a).unwrap();
                    renames += 2;
                }
                renames
            })
        };
        let root = j.resolve_cwd(None).unwrap();
        let mut wrong = Vec::new();
        for _ in 0..20_000 {
            if let Err(e) = j.resolve_cwd(Some("sub/inner/up")) {
                wrong.push(format!("cwd inside: {e:?}"));
            }
            if let Err(e) = j.check_path(&root, "sub/inner/file") {
                wrong.push(format!("path inside: {e:?}"));
            }
            match j.resolve_cwd(Some("sub/inner/out")) {
                Err(JailError::Escape { .. }) => {}
                other => wrong.push(format!("cwd outside: {:?}", other.map(|c| c.absolute))),
            }
        }
        stop.store(true, Ordering::Relaxed);
        let renames = renamer.join().unwrap();
        assert!(renames > 0, "the storm never ran");
        assert!(
            wrong.is_empty(),
            "{} of 60000 answers changed, e.g. {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(3)]
        );
        drop(d);
    }

    #[test]
    fn args_naming_escaping_symlinks_are_refused() {
        let (_d, j) = jail();
        let cwd = j.resolve_cwd(None).unwrap();
        let a = |s: &str| vec![s.to_string()];
        assert!(matches!(
            j.check_args(&cwd, &a("link")),
            Err(JailError::Escape { .. })
        ));
        assert!(matches!(
            j.check_args(&cwd, &a("etc/passwd")),
            Err(JailError::Escape { .. })
        ));
        assert!(matches!(
            j.check_args(&cwd, &a("/etc/passwd")),
            Err(JailError::Escape { .. })
        ));
        assert!(matches!(
            j.check_args(&cwd, &a("../secret")),
            Err(JailError::Escape { .. })
        ));
        assert!(matches!(
            j.check_args(&cwd, &a("--output=/tmp/x")),
            Err(JailError::ArgEscape { .. })
        ));
        assert!(matches!(
            j.check_args(&cwd, &a("-o/tmp/x")),
            Err(JailError::ArgEscape { .. })
        ));
        assert!(matches!(
            j.check_args(&cwd, &a("host:/etc/passwd")),
            Err(JailError::ArgEscape { .. })
        ));
        assert!(matches!(
            j.check_args(&cwd, &a("sub/../../secret")),
            Err(JailError::Escape { .. })
        ));
        assert!(j.check_args(&cwd, &a("notes.txt")).is_ok());
    }

    #[test]
    fn an_escaping_part_of_an_argument_is_named_with_its_argument() {
        let (_d, j) = jail();
        let cwd = j.resolve_cwd(None).unwrap();
        let a = |s: &str| vec![s.to_string()];
        let reason = |s: &str| j.check_args(&cwd, &a(s)).unwrap_err().to_string();
        assert_eq!(
            reason("https://example.com/x.git"),
            "argument 'https://example.com/x.git' is a URL; URLs are refused, since a command \
             may name only paths inside the jail and the '//example.com/x.git' of this one is \
             read as a path outside it"
        );
        assert!(matches!(
            j.check_args(&cwd, &a("git+ssh://host/x")),
            Err(JailError::ArgEscape { .. })
        ));
        assert_eq!(
            reason("--output=/tmp/x"),
            "argument '--output=/tmp/x' names the path '/tmp/x', which escapes the jail root"
        );
        // A whole argument that escapes is named once, as a path.
        assert_eq!(
            reason("/etc/passwd"),
            "path '/etc/passwd' escapes the jail root"
        );
        assert!(!is_url("host:/etc/passwd") && !is_url("1http://x") && is_url("s3://b/k"));
        assert!(j.check_args(&cwd, &a("inside")).is_ok());
        assert!(j.check_args(&cwd, &a("sub/new-file")).is_ok());
        assert!(j.check_args(&cwd, &a("--output=sub/out.txt")).is_ok());
        assert!(j.check_args(&cwd, &a("hello")).is_ok());
    }
}
