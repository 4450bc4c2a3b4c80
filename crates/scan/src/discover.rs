//! Which files a scan looks at: the scanned extensions, the always-skipped folders, `--ignore`
//! globs and the size cap.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use walkdir::WalkDir;

use crate::error::ScanError;
use crate::finding::Language;

/// Folders never entered: dependencies and VCS metadata. `dist/` and `build/` are scanned,
/// because an installed MCP server often ships only its built code there.
const SKIPPED_DIRECTORIES: [&str; 2] = ["node_modules", ".git"];

/// The language of a path, from its extension.
pub(crate) fn language_of(path: &Path) -> Option<Language> {
    let extension = path.extension()?.to_str()?;
    match extension {
        "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" => Some(Language::JavaScript),
        "py" => Some(Language::Python),
        "rs" => Some(Language::Rust),
        _ => None,
    }
}

/// User `--ignore` globs, matched against the path relative to the scan root.
pub(crate) struct IgnoreGlobs {
    set: GlobSet,
}

impl IgnoreGlobs {
    /// Compile the globs. A bare name such as `dist` also matches everything below it.
    pub(crate) fn new(globs: &[String]) -> Result<Self, ScanError> {
        let mut builder = GlobSetBuilder::new();
        for glob in globs {
            let compiled = Glob::new(glob).map_err(|source| ScanError::BadGlob {
                glob: glob.clone(),
                source,
            })?;
            builder.add(compiled);
        }
        let set = builder.build().map_err(|source| ScanError::BadGlob {
            glob: globs.join(","),
            source,
        })?;
        Ok(IgnoreGlobs { set })
    }

    fn is_ignored(&self, relative: &Path) -> bool {
        !self.set.is_empty()
            && (self.set.is_match(relative) || self.set.is_match(relative.join("")))
    }
}

/// A file chosen for scanning.
pub(crate) struct Candidate {
    /// The path to open.
    pub(crate) path: PathBuf,
    /// The path to print (as reached from the scan root, without a leading `./`).
    pub(crate) display: String,
    /// The analyser to use.
    pub(crate) language: Language,
    /// The file was named as the scan root itself: a symbolic link the user names is followed;
    /// one met inside a tree never is.
    pub(crate) named_root: bool,
    /// Production code or tests and development scripts, from its path below the root.
    pub(crate) context: crate::finding::Context,
}

/// What a walk found: files to scan, entries not scanned (with the reason) and errors.
#[derive(Default)]
pub(crate) struct Discovered {
    pub(crate) candidates: Vec<Candidate>,
    /// `tsconfig*.json` and `jsconfig*.json` files of the tree (for `paths` aliases; the
    /// ones named `tsconfig.json`/`jsconfig.json` govern their folders, the others may be
    /// what those `extends`).
    pub(crate) ts_configs: Vec<PathBuf>,
    /// `(display path, reason)` of entries with a scanned extension (or a link to a folder)
    /// that are not scanned: symbolic links, FIFOs, sockets, devices.
    pub(crate) skipped: Vec<(String, String)>,
    /// `(display path, message)` of folder entries that could not be read.
    pub(crate) errors: Vec<(String, String)>,
}

/// What kind of non-regular file `file_type` is, in words.
pub(crate) fn kind_of(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_symlink() {
        "symbolic link"
    } else if file_type.is_dir() {
        "folder"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

/// Walk `root` (a file or a folder) and list the files to scan. Unreadable folder entries become
/// errors, and entries not followed (links, FIFOs, devices) are listed: nothing is dropped
/// without a word.
pub(crate) fn discover(root: &Path, root_is_file: bool, ignore: &IgnoreGlobs) -> Discovered {
    let mut found = Discovered::default();
    if root_is_file {
        // A file named explicitly is scanned if we know its language, whatever the globs say.
        if let Some(language) = language_of(root) {
            found.candidates.push(Candidate {
                path: root.to_path_buf(),
                display: display_path(root),
                language,
                named_root: true,
                context: crate::finding::Context::of(root),
            });
        } else {
            found
                .errors
                .push((display_path(root), "unsupported file type".to_string()));
        }
        return found;
    }
    let walker = WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    let walker = walker.filter_entry(|entry| {
        if entry.depth() == 0 {
            return true;
        }
        let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
        if entry.file_type().is_dir()
            && entry
                .file_name()
                .to_str()
                .is_some_and(|name| SKIPPED_DIRECTORIES.contains(&name))
        {
            return false;
        }
        !ignore.is_ignored(relative)
    });
    for entry in walker {
        match entry {
            Ok(entry) if entry.file_type().is_file() => {
                if entry.file_name().to_str().is_some_and(|name| {
                    (name.starts_with("tsconfig") || name.starts_with("jsconfig"))
                        && name.ends_with(".json")
                }) {
                    found.ts_configs.push(entry.path().to_path_buf());
                }
                if let Some(language) = language_of(entry.path()) {
                    found.candidates.push(Candidate {
                        path: entry.path().to_path_buf(),
                        display: display_path(entry.path()),
                        language,
                        named_root: false,
                        context: crate::finding::Context::of(
                            entry.path().strip_prefix(root).unwrap_or(entry.path()),
                        ),
                    });
                }
            }
            Ok(entry) if entry.file_type().is_dir() => {}
            // The root itself, named by the caller (`/proc/self/fd/N` from the guard is a
            // link to the folder it opened): walked, not listed as a link not followed.
            Ok(entry) if entry.depth() == 0 => {}
            Ok(entry) => {
                // A link inside the tree is never followed: it may lead out of the tree (to a
                // home folder, /proc) or to a FIFO. It is listed if it would have been scanned
                // (a source name), or if it leads to a folder (code that is not looked at).
                let file_type = entry.file_type();
                let source_name = language_of(entry.path()).is_some();
                let reason = if file_type.is_symlink() {
                    let to_folder = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
                    (source_name || to_folder).then(|| {
                        let target = if to_folder { " to a folder" } else { "" };
                        format!("symbolic link{target}, not followed")
                    })
                } else {
                    source_name.then(|| format!("not a regular file ({})", kind_of(file_type)))
                };
                if let Some(reason) = reason {
                    found.skipped.push((display_path(entry.path()), reason));
                }
            }
            Err(error) => {
                let path = error
                    .path()
                    .map_or_else(|| display_path(root), display_path);
                found.errors.push((path, error.to_string()));
            }
        }
    }
    found
}

/// The path as reports print it: as reached from the scan root, without a leading `./`.
pub(crate) fn display_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    text.strip_prefix("./")
        .map(str::to_string)
        .unwrap_or_else(|| text.into_owned())
}
