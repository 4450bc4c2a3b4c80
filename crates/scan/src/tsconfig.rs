//! TypeScript `paths` aliases (`"~/*": ["./src/*"]` in a `tsconfig.json` or
//! `jsconfig.json` of the scanned tree), so that taint crosses an import written as
//! `~/services/figma.js`. Only the file's own `compilerOptions.baseUrl` and
//! `compilerOptions.paths` are read (`extends` is not followed); a config that cannot be
//! read or parsed gives no alias, and such imports then lead nowhere, as before.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::project::normalise;
use crate::report::FileIdentity;

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

/// One config of the tree: the folder it governs and the aliases in force there (its own
/// `paths`, or those of the config it `extends`; with a `baseUrl`, any other bare name is
/// looked up beneath it too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    pub(crate) scope: PathBuf,
    pub(crate) aliases: Vec<Alias>,
}

/// What one config file says of its own.
#[derive(Default)]
struct Own {
    base: Option<PathBuf>,
    paths: Option<serde_json::Map<String, serde_json::Value>>,
    extends: Option<PathBuf>,
}

/// The configs among `paths` (the `tsconfig*.json`/`jsconfig*.json` files of the tree):
/// each `tsconfig.json` or `jsconfig.json` with the aliases in force in its folder.
/// `extends` is followed to another of these files (a relative path, at most
/// [`MAX_EXTENDS`] steps); a config that cannot be read or parsed governs its folder with no
/// alias.
///
/// Also returns the identity of every config file it opened: `--output` must not replace a
/// file the scan read, configs included.
pub(crate) fn configs(paths: &[PathBuf]) -> (Vec<Config>, Vec<FileIdentity>) {
    let mut read = Vec::new();
    let own: Vec<(PathBuf, Own)> = paths
        .iter()
        .map(|path| {
            let parsed = read_config(path, &mut read)
                .and_then(|text| own_of(&text, path.parent()?))
                .unwrap_or_default();
            (normalise(path), parsed)
        })
        .collect();
    let configs = own
        .iter()
        .filter(|(path, _)| {
            matches!(
                path.file_name().and_then(|name| name.to_str()),
                Some("tsconfig.json" | "jsconfig.json")
            )
        })
        .filter_map(|(path, config)| {
            let scope = path.parent()?.to_path_buf();
            // The nearest `baseUrl` and `paths` along the `extends` chain.
            let (mut base, mut table) = (config.base.clone(), config.paths.as_ref());
            let mut next = config.extends.clone();
            for _ in 0..MAX_EXTENDS {
                if base.is_some() && table.is_some() {
                    break;
                }
                let Some(parent) = next
                    .take()
                    .and_then(|extended| own.iter().find(|(path, _)| *path == extended))
                else {
                    break;
                };
                if base.is_none() {
                    base = parent.1.base.clone();
                }
                if table.is_none() {
                    table = parent.1.paths.as_ref();
                }
                next = parent.1.extends.clone();
            }
            let aliases = config_aliases(base, table, &scope);
            Some(Config { scope, aliases })
        })
        .collect();
    (configs, read)
}

/// How many `extends` steps are followed.
const MAX_EXTENDS: usize = 8;

/// The `baseUrl`, `paths` and relative `extends` of a config's text, for a config in
/// folder `scope`.
fn own_of(text: &str, scope: &Path) -> Option<Own> {
    let value = jsonc_parser::parse_to_serde_value(text, &Default::default()).ok()??;
    let options = value.get("compilerOptions");
    let base = options
        .and_then(|options| options.get("baseUrl"))
        .and_then(|base| base.as_str())
        .map(|base| normalise(&scope.join(base)));
    let paths = options
        .and_then(|options| options.get("paths"))
        .and_then(|paths| paths.as_object())
        .cloned();
    let extends = value
        .get("extends")
        .and_then(|extends| extends.as_str())
        .filter(|extends| extends.starts_with("./") || extends.starts_with("../"))
        .map(|extends| {
            let mut path = scope.join(extends);
            if path.extension().is_none() {
                path.set_extension("json");
            }
            normalise(&path)
        });
    Some(Own {
        base,
        paths,
        extends,
    })
}

/// The aliases a config's text declares, for a config in folder `scope` (its own
/// `compilerOptions` only).
#[cfg(test)]
pub(crate) fn aliases_in(text: &str, scope: &Path) -> Vec<Alias> {
    own_of(text, scope)
        .map(|own| config_aliases(own.base, own.paths.as_ref(), scope))
        .unwrap_or_default()
}

/// The aliases in force in a config's folder `scope`, from the `baseUrl` and `paths` it has
/// or inherits: each pattern (targets beneath `baseUrl`, else beneath the folder), then,
/// with a `baseUrl`, any bare name beneath it.
fn config_aliases(
    base: Option<PathBuf>,
    table: Option<&serde_json::Map<String, serde_json::Value>>,
    scope: &Path,
) -> Vec<Alias> {
    let root = base.clone().unwrap_or_else(|| scope.to_path_buf());
    let mut aliases: Vec<Alias> = table
        .map(|table| aliases_of_table(table, &root, scope))
        .unwrap_or_default();
    if let Some(base) = base {
        aliases.push(Alias {
            scope: scope.to_path_buf(),
            prefix: String::new(),
            suffix: Some(String::new()),
            targets: vec![base.join("*").to_string_lossy().into_owned()],
        });
    }
    aliases
}

/// The aliases of one `paths` table, whose targets are relative to `root`.
fn aliases_of_table(
    paths: &serde_json::Map<String, serde_json::Value>,
    root: &Path,
    scope: &Path,
) -> Vec<Alias> {
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
            .map(|target| root.join(target).to_string_lossy().into_owned())
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
/// [`MAX_CONFIG_BYTES`]. The identity of a regular file it opens goes to `read`.
fn read_config(path: &Path, read: &mut Vec<FileIdentity>) -> Option<String> {
    use rustix::fs::{Mode, OFlags};
    let flags =
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW;
    let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    read.push(FileIdentity {
        device: stat.st_dev,
        inode: stat.st_ino,
    });
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
        // The two patterns, then the `baseUrl` lookup of any bare name.
        assert_eq!(aliases.len(), 3, "{aliases:?}");
        let bare = aliases.last().expect("baseUrl");
        assert_eq!(bare.expand("utils/x"), vec![PathBuf::from("/p/utils/x")]);
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
