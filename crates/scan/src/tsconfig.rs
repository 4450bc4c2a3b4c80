//! TypeScript `paths` aliases (`"~/*": ["./src/*"]` in a `tsconfig.json` or
//! `jsconfig.json` of the scanned tree), so that taint crosses an import written as
//! `~/services/figma.js`. Only the file's own `compilerOptions.baseUrl` and
//! `compilerOptions.paths` are read (`extends` is not followed); a config that cannot be
//! read or parsed gives no alias, and such imports then lead nowhere, as before.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest config file read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// One `paths` entry of one config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Alias {
    /// The folder of the config: the alias applies to files beneath it (the nearest
    /// config's aliases win).
    pub(crate) scope: PathBuf,
    /// The pattern's text before its `*` (all of it when it has none).
    prefix: String,
    /// The pattern's text after its `*`; `None` for a pattern without one (an exact name).
    suffix: Option<String>,
    /// Each target, joined to the base folder, with `*` in it where the match goes.
    targets: Vec<String>,
}

impl Alias {
    /// The paths `specifier` stands for under this alias, in the order to try them.
    pub(crate) fn expand(&self, specifier: &str) -> Vec<PathBuf> {
        let matched = match &self.suffix {
            None => (specifier == self.prefix).then_some(""),
            Some(suffix) => specifier
                .strip_prefix(self.prefix.as_str())
                .and_then(|rest| rest.strip_suffix(suffix.as_str())),
        };
        let Some(matched) = matched else {
            return Vec::new();
        };
        self.targets
            .iter()
            .map(|target| PathBuf::from(target.replacen('*', matched, 1)))
            .collect()
    }

    /// How specific the pattern is (TypeScript tries the longest prefix first).
    pub(crate) fn specificity(&self) -> usize {
        self.prefix.len() + usize::from(self.suffix.is_none())
    }
}

/// The aliases of the config at `path` (none when it cannot be read or parsed).
pub(crate) fn aliases_of(path: &Path) -> Vec<Alias> {
    let Some(text) = read_config(path) else {
        return Vec::new();
    };
    let Some(scope) = path.parent() else {
        return Vec::new();
    };
    aliases_in(&text, scope)
}

/// The aliases a config's text declares, for a config in folder `scope`.
pub(crate) fn aliases_in(text: &str, scope: &Path) -> Vec<Alias> {
    let Ok(Some(value)) = jsonc_parser::parse_to_serde_value(text, &Default::default()) else {
        return Vec::new();
    };
    let Some(options) = value.get("compilerOptions") else {
        return Vec::new();
    };
    let base = match options.get("baseUrl").and_then(|base| base.as_str()) {
        Some(base) => scope.join(base),
        None => scope.to_path_buf(),
    };
    let Some(paths) = options.get("paths").and_then(|paths| paths.as_object()) else {
        return Vec::new();
    };
    let mut aliases = Vec::new();
    for (pattern, targets) in paths {
        let (prefix, suffix) = match pattern.split_once('*') {
            Some((prefix, suffix)) if !suffix.contains('*') => {
                (prefix.to_string(), Some(suffix.to_string()))
            }
            Some(_) => continue,
            None => (pattern.clone(), None),
        };
        let targets: Vec<String> = targets
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|target| target.as_str())
            .filter(|target| target.matches('*').count() <= 1)
            .map(|target| base.join(target).to_string_lossy().into_owned())
            .collect();
        if !targets.is_empty() {
            aliases.push(Alias {
                scope: scope.to_path_buf(),
                prefix,
                suffix,
                targets,
            });
        }
    }
    aliases
}

/// The text of a config: a regular file opened without following a symbolic link, at most
/// [`MAX_CONFIG_BYTES`].
fn read_config(path: &Path) -> Option<String> {
    use rustix::fs::{Mode, OFlags};
    let flags =
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW;
    let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .ok()?;
    (text.len() as u64 <= MAX_CONFIG_BYTES).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_with_comments_and_trailing_commas_gives_its_aliases() {
        let text = r#"{
          "compilerOptions": {
            "baseUrl": "./",
            /* comment */
            "paths": { "~/*": ["./src/*"], "@lib": ["./lib/index.ts"], "a*b*": ["x"], },
          },
        }"#;
        let aliases = aliases_in(text, Path::new("/p"));
        assert_eq!(aliases.len(), 2, "{aliases:?}");
        let tilde = aliases.iter().find(|a| a.prefix == "~/").expect("~/*");
        assert_eq!(
            tilde.expand("~/services/figma.js"),
            vec![PathBuf::from("/p/./src/services/figma.js")]
        );
        assert!(tilde.expand("./x").is_empty());
        let exact = aliases.iter().find(|a| a.prefix == "@lib").expect("@lib");
        assert_eq!(
            exact.expand("@lib"),
            vec![PathBuf::from("/p/./lib/index.ts")]
        );
        assert!(exact.expand("@lib/x").is_empty());
        assert!(exact.specificity() > "@lib".len());
    }

    #[test]
    fn no_paths_or_bad_text_gives_none() {
        assert!(aliases_in("{", Path::new("/p")).is_empty());
        assert!(aliases_in(r#"{"compilerOptions": {}}"#, Path::new("/p")).is_empty());
        assert!(aliases_in("[]", Path::new("/p")).is_empty());
    }
}
