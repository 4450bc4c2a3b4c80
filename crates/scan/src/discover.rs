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
}

/// Walk `root` (a file or a folder) and list the files to scan. Unreadable folder entries become
/// errors, never silent drops.
pub(crate) fn discover(
    root: &Path,
    ignore: &IgnoreGlobs,
) -> (Vec<Candidate>, Vec<(String, String)>) {
    let mut candidates = Vec::new();
    let mut errors = Vec::new();
    if root.is_file() {
        // A file named explicitly is scanned if we know its language, whatever the globs say.
        if let Some(language) = language_of(root) {
            candidates.push(Candidate {
                path: root.to_path_buf(),
                display: display_path(root),
                language,
            });
        } else {
            errors.push((display_path(root), "unsupported file type".to_string()));
        }
        return (candidates, errors);
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
                if let Some(language) = language_of(entry.path()) {
                    candidates.push(Candidate {
                        path: entry.path().to_path_buf(),
                        display: display_path(entry.path()),
                        language,
                    });
                }
            }
            Ok(_) => {}
            Err(error) => {
                let path = error
                    .path()
                    .map_or_else(|| display_path(root), display_path);
                errors.push((path, error.to_string()));
            }
        }
    }
    (candidates, errors)
}

fn display_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    text.strip_prefix("./")
        .map(str::to_string)
        .unwrap_or_else(|| text.into_owned())
}
