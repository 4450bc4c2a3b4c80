//! Paths no agent tool may write, even beneath a root: what a later program obeys without
//! anyone reading it. Git runs `.git/hooks/*` and `core.fsmonitor`/`core.pager` from
//! `.git/config`; agents load `.claude/`, `.codex/` and `.mcp.json` (hooks, MCP servers to
//! start); shells run their start-up files; direnv runs `.envrc`; editors run tasks from
//! `.vscode/` and `.idea/`; package managers read `.npmrc` (`node-options`, `script-shell`).

use std::path::{Component, Path};

/// The built-in protected paths, matched at any depth beneath a root, ASCII case ignored.
/// `[hook] protected` adds to them.
pub const BUILTIN_PROTECTED: &[&str] = &[
    ".git",
    ".claude",
    ".codex",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".envrc",
    ".gitconfig",
    ".ssh",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".inputrc",
    ".config/git",
    ".config/fish",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
];

/// The files whose presence together makes a folder a bare git repository (git's own test,
/// `is_git_directory`: `HEAD`, `objects/`, `refs/`). Git obeys such a folder's `config`
/// (`core.fsmonitor` runs a program) and its `hooks/` when a command runs inside it.
const BARE_REPO_MARKERS: [&str; 3] = ["head", "objects", "refs"];

/// Names a write may not add to a folder that already holds a bare-repository marker.
const BARE_REPO_PARTS: [&str; 6] = ["head", "objects", "refs", "config", "hooks", "packed-refs"];

/// The protected list: each entry as lower-cased components.
#[derive(Debug, Clone)]
pub(crate) struct Protected {
    entries: Vec<(String, Vec<String>)>,
}

fn lowered(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

impl Protected {
    /// The built-in entries and the operator's.
    pub(crate) fn new(extra: &[String]) -> Self {
        let entries = BUILTIN_PROTECTED
            .iter()
            .map(|s| s.to_string())
            .chain(extra.iter().cloned())
            .map(|entry| {
                let parts = lowered(Path::new(&entry));
                (entry, parts)
            })
            .filter(|(_, parts)| !parts.is_empty())
            .collect();
        Protected { entries }
    }

    /// The entry `relative` (a path relative to a root, symlinks resolved) falls under: its
    /// components appear, in order and next to each other, anywhere in the path, so
    /// `sub/.git/hooks/x` is under `.git` and `a/.config/git/config` under `.config/git`.
    pub(crate) fn entry_for(&self, relative: &Path) -> Option<&str> {
        let parts = lowered(relative);
        self.entries
            .iter()
            .find(|(_, entry)| parts.windows(entry.len()).any(|w| w == entry.as_slice()))
            .map(|(name, _)| name.as_str())
    }
}

/// Would writing `relative` make or change a bare git repository? For each folder on the
/// way, if the next name is one of [`BARE_REPO_PARTS`] and that folder already holds (or
/// this write makes) a second marker of [`BARE_REPO_MARKERS`], `exists` saying which names
/// exist (relative to the root): the folder is returned. Planting `HEAD`, `objects/x` and
/// `refs/x` and a `config` with `core.fsmonitor` is how a file tool plants code that the
/// next `git status` in that folder runs.
pub(crate) fn bare_repo_folder(
    relative: &Path,
    exists: impl Fn(&Path) -> bool,
) -> Option<std::path::PathBuf> {
    let names: Vec<&std::ffi::OsStr> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    for (k, next) in names.iter().enumerate() {
        let next_lower = next.to_string_lossy().to_ascii_lowercase();
        if !BARE_REPO_PARTS.contains(&next_lower.as_str()) {
            continue;
        }
        let folder: std::path::PathBuf = names.iter().take(k).collect();
        let present = BARE_REPO_MARKERS
            .iter()
            .filter(|marker| {
                **marker == next_lower
                    || exists(&folder.join(marker))
                    || exists(&folder.join(marker.to_ascii_uppercase()))
            })
            .count();
        if present >= 2 {
            return Some(folder);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn protected_entries_match_at_any_depth_ignoring_case() {
        let p = Protected::new(&["deploy/keys".into()]);
        assert_eq!(
            p.entry_for(Path::new(".git/hooks/pre-commit")),
            Some(".git")
        );
        assert_eq!(p.entry_for(Path::new("sub/.GIT/config")), Some(".git"));
        assert_eq!(
            p.entry_for(Path::new("a/.config/git/config")),
            Some(".config/git")
        );
        assert_eq!(
            p.entry_for(Path::new("x/deploy/keys/id")),
            Some("deploy/keys")
        );
        assert_eq!(p.entry_for(Path::new("src/.gitignore")), None);
        assert_eq!(p.entry_for(Path::new("docs/git/config")), None);
        assert_eq!(p.entry_for(Path::new("deploy/keysafe")), None);
    }

    #[test]
    fn a_second_bare_repository_marker_is_refused() {
        let have = |names: &'static [&'static str]| {
            move |p: &Path| names.iter().any(|n| p == Path::new(n))
        };
        // Nothing there yet: the first marker alone is an ordinary file.
        assert_eq!(bare_repo_folder(Path::new("HEAD"), have(&[])), None);
        assert_eq!(
            bare_repo_folder(Path::new("objects/x"), have(&["HEAD"])),
            Some(PathBuf::new())
        );
        assert_eq!(
            bare_repo_folder(Path::new("sub/config"), have(&["sub/HEAD", "sub/refs"])),
            Some(PathBuf::from("sub"))
        );
        assert_eq!(
            bare_repo_folder(Path::new("src/config.rs"), have(&["src/HEAD"])),
            None
        );
    }
}
