//! The guard's registry: which named tools exist, what each may run, and the decision on
//! one call.
//!
//! An operator entry (`[[guard.tools]]`) is a named rule: a pinned executable, the patterns
//! every argument must fully match, the folders it may run in, its sandbox profile and the
//! caller variables that may reach it. [`Registry::new`] compiles the entries and checks each
//! against its own `examples_allow`/`examples_deny`; a disagreement is a start-up error
//! naming the entry, so a policy that does not do what its author wrote never serves.
//!
//! A caller may add entries at run time ([`Registry::register`]), but only narrower ones: a
//! run-time entry names the executable of an operator entry (a self-grant of `/bin/sh` the
//! operator did not list is `POLICY_DENIED`), cannot take an operator entry's name (no
//! replacement, so no widening), runs under the same or a stricter profile, and a call
//! through it must pass its own rules AND those of an operator entry for that executable.
//! Run-time entries live in memory only and die with the registry.
//!
//! The registry decides; it neither runs nor records. The server audits every registration
//! and call through the recorder and turns [`Refusal`] into an envelope.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use regex::Regex;

use crate::config::{GuardSettings, GuardTool, ReplayMode, check_cwd_pattern};
use crate::exec::Profile;
use crate::jail::ContainedDir;
use crate::policy::{PATTERN_SIZE_LIMIT, whole_match};
use crate::result::ResultCode;

/// Most run-time entries one registry holds: registrations are memory a caller spends.
pub const MAX_RUNTIME_ENTRIES: usize = 256;

/// Most patterns one run-time entry may give.
pub const MAX_RUNTIME_PATTERNS: usize = 64;

/// A start-up error in `[[guard.tools]]`; `Display` names the entry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// An `args_patterns` regex does not compile (or is over the size limit).
    #[error("guard.tools[{index}] '{name}': args_patterns '{pattern}' does not compile: {message}")]
    BadPattern {
        /// The entry's place in the policy.
        index: usize,
        /// The entry's name.
        name: String,
        /// The pattern as written.
        pattern: String,
        /// The regex error.
        message: String,
    },
    /// The `cwd` pattern is not a folder or glob beneath the jail root.
    #[error("guard.tools[{index}] '{name}': {message}")]
    BadCwd {
        /// The entry's place in the policy.
        index: usize,
        /// The entry's name.
        name: String,
        /// Why.
        message: String,
    },
    /// An example the entry disagrees with.
    #[error(
        "guard.tools[{index}] '{name}': {list} {example:?} is {outcome} by the entry itself{why}"
    )]
    BadExample {
        /// The entry's place in the policy.
        index: usize,
        /// The entry's name.
        name: String,
        /// `examples_allow` or `examples_deny`.
        list: &'static str,
        /// The example's arguments.
        example: Vec<String>,
        /// `refused` or `allowed`.
        outcome: &'static str,
        /// Empty, or `: ` and the refusal's reason.
        why: String,
    },
    /// Two entries share a name (the config loader refuses this too).
    #[error("guard.tools[{index}] '{name}': a second entry of this name")]
    DuplicateName {
        /// The second entry's place in the policy.
        index: usize,
        /// The name.
        name: String,
    },
}

/// A refused registration or call: the envelope's code and a reason in plain words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `POLICY_DENIED` (the rules say no) or `INVALID_REQUEST` (the request is malformed).
    pub code: ResultCode,
    /// What was refused and why, naming the tool and the argument.
    pub reason: String,
}

impl Refusal {
    fn denied(reason: String) -> Refusal {
        Refusal {
            code: ResultCode::PolicyDenied,
            reason,
        }
    }
    fn invalid(reason: String) -> Refusal {
        Refusal {
            code: ResultCode::InvalidRequest,
            reason,
        }
    }
}

/// An allowed call: what the server runs and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The tool the caller named.
    pub tool: String,
    /// The operator entry whose rules the call passed (the tool itself for an operator
    /// entry).
    pub operator_entry: String,
    /// Whether the tool is a run-time entry.
    pub runtime: bool,
    /// The program to run, every symlink resolved.
    pub executable: PathBuf,
    /// The sandbox profile to run it under.
    pub profile: Profile,
    /// The caller variables that may reach the command; any other name of a caller's `env`
    /// must be dropped (or refused) by the server.
    pub env_allow: Vec<String>,
    /// The file names a caller may use for the executable instead of its path: the
    /// resolved file's and the one the policy wrote (`sh` for `/bin/sh` → `/usr/bin/dash`).
    pub file_names: Vec<String>,
}

/// A granted registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The new tool's name.
    pub tool: String,
    /// Its executable, every symlink resolved.
    pub executable: PathBuf,
    /// The operator entries it narrows (those with that executable); a call must pass one.
    pub operator_entries: Vec<String>,
    /// Its profile (the one asked for, or the strictest of its operator entries').
    pub profile: Profile,
}

/// Argument and folder rules: the part of an entry both layers have.
#[derive(Debug, Clone)]
struct Rules {
    /// Anchored; empty: any argument.
    patterns: Vec<Regex>,
    /// The folders a call may run in (matched against the jail-relative resolved cwd).
    cwd: Option<CwdPattern>,
}

/// A `cwd` folder or glob, compiled.
#[derive(Debug, Clone)]
struct CwdPattern {
    source: String,
    regex: Regex,
}

/// One compiled operator entry.
#[derive(Debug, Clone)]
struct OperatorEntry {
    name: String,
    executable: PathBuf,
    /// See [`Allowed::file_names`].
    file_names: Vec<String>,
    rules: Rules,
    profile: Profile,
    env_allow: Vec<String>,
}

/// One run-time entry.
#[derive(Debug, Clone)]
struct RuntimeEntry {
    executable: PathBuf,
    rules: Rules,
    profile: Profile,
    /// Names of the operator entries with its executable, in policy order.
    parents: Vec<String>,
}

/// What [`trust_tier`](super::trust_tier) reads of one tool.
#[derive(Debug, Clone)]
pub(crate) struct TierView {
    /// A run-time entry's own patterns (`None` for an operator entry).
    pub(crate) runtime_layer: Option<Vec<Regex>>,
    /// The operator entries' patterns; a call needs to pass only one of them, so the
    /// arguments are as open as the most open of these.
    pub(crate) operator_layers: Vec<Vec<Regex>>,
    pub(crate) profile: Profile,
}

/// The registry: operator entries (fixed at start-up) and run-time entries (in memory).
#[derive(Debug)]
pub struct Registry {
    /// In policy order.
    operator: Vec<OperatorEntry>,
    runtime: RwLock<BTreeMap<String, RuntimeEntry>>,
    replay: ReplayMode,
}

/// A `cwd` folder or glob as a regex over the jail-relative folder: `*` and `?` stay within
/// one path component, `**` spans any number, anything else is literal; the folder named
/// and everything beneath it match (`build` allows `build` and `build/x`).
fn compile_cwd(pattern: &str) -> Result<CwdPattern, String> {
    check_cwd_pattern(pattern)?;
    let parts: Vec<&str> = pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return Err(format!(
            "cwd '{pattern}' names the jail root itself: leave cwd out instead"
        ));
    }
    let mut regex = String::from("^");
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            regex.push('/');
        }
        if *part == "**" {
            regex.push_str(".*");
            continue;
        }
        for c in part.chars() {
            match c {
                '*' => regex.push_str("[^/]*"),
                '?' => regex.push_str("[^/]"),
                c => regex.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
            }
        }
    }
    regex.push_str("(?:/.*)?$");
    let regex = regex::RegexBuilder::new(&regex)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("cwd '{pattern}' cannot be compiled: {e}"))?;
    Ok(CwdPattern {
        source: pattern.to_string(),
        regex,
    })
}

impl Rules {
    /// Whether `args` all pass; the refusal names the first argument that does not.
    fn check_args(&self, layer: &str, args: &[String]) -> Result<(), String> {
        if self.patterns.is_empty() {
            return Ok(());
        }
        for (i, arg) in args.iter().enumerate() {
            if !self.patterns.iter().any(|re| re.is_match(arg)) {
                return Err(format!(
                    "argument {i} '{arg}' matches none of the args_patterns of {layer}"
                ));
            }
        }
        Ok(())
    }

    /// Whether the resolved folder `cwd` passes.
    fn check_cwd(&self, layer: &str, cwd: &ContainedDir) -> Result<(), String> {
        let Some(pattern) = &self.cwd else {
            return Ok(());
        };
        // The folder as the kernel resolved it beneath the root, not the caller's text:
        // `src/../etc` or a symlink `src -> /etc` cannot pass a `src` rule.
        let relative = cwd.relative();
        let shown = relative.display();
        let Some(text) = relative.to_str() else {
            return Err(format!(
                "the working folder '{shown}' is not UTF-8, so it cannot match the cwd '{}' of {layer}",
                pattern.source
            ));
        };
        if pattern.regex.is_match(text) {
            Ok(())
        } else {
            let shown = if text.is_empty() { "." } else { text };
            Err(format!(
                "the working folder '{shown}' is not within the cwd '{}' of {layer}",
                pattern.source
            ))
        }
    }

    fn check(&self, layer: &str, args: &[String], cwd: &ContainedDir) -> Result<(), String> {
        self.check_args(layer, args)?;
        self.check_cwd(layer, cwd)
    }
}

/// Whether `name` is a well-formed tool name (as `[[guard.tools]] name`).
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

pub use crate::exec::profile::no_looser;

fn compile_operator_entry(
    index: usize,
    tool: &GuardTool,
    default_profile: Profile,
) -> Result<OperatorEntry, RegistryError> {
    let mut patterns = Vec::with_capacity(tool.args_patterns.len());
    for pattern in &tool.args_patterns {
        let re = whole_match(pattern).map_err(|e| RegistryError::BadPattern {
            index,
            name: tool.name.clone(),
            pattern: pattern.clone(),
            message: e.to_string(),
        })?;
        patterns.push(re);
    }
    let cwd = (tool.cwd.as_deref())
        .map(compile_cwd)
        .transpose()
        .map_err(|message| RegistryError::BadCwd {
            index,
            name: tool.name.clone(),
            message,
        })?;
    let file_name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let mut file_names: Vec<String> = [Some(&tool.executable), tool.written_executable.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|p| file_name(p))
        .collect();
    file_names.dedup();
    let entry = OperatorEntry {
        name: tool.name.clone(),
        file_names,
        executable: tool.executable.clone(),
        rules: Rules { patterns, cwd },
        profile: tool.profile.unwrap_or(default_profile),
        env_allow: tool.env_allow.clone(),
    };
    // The entry tests itself: an example it disagrees with means the patterns do not say
    // what their author meant, and the policy is refused before it serves a call.
    let layer = format!("'{}'", tool.name);
    let examples = [
        ("examples_allow", &tool.examples_allow, true),
        ("examples_deny", &tool.examples_deny, false),
    ];
    for (list, examples, want) in examples {
        for example in examples {
            let got = entry.rules.check_args(&layer, example);
            if got.is_ok() != want {
                return Err(RegistryError::BadExample {
                    index,
                    name: tool.name.clone(),
                    list,
                    example: example.clone(),
                    outcome: if want { "refused" } else { "allowed" },
                    why: got.err().map(|r| format!(": {r}")).unwrap_or_default(),
                });
            }
        }
    }
    Ok(entry)
}

impl Registry {
    /// The registry of `[guard]` (as loaded for [`Server::Guard`](crate::config::Server::Guard):
    /// executables checked and resolved). `default_profile` is the profile of an entry that
    /// names none (`[terminal.sandbox] profile`). Every pattern is compiled and every
    /// example checked; the first bad entry is the error.
    pub fn new(settings: &GuardSettings, default_profile: Profile) -> Result<Self, RegistryError> {
        let mut operator: Vec<OperatorEntry> = Vec::with_capacity(settings.tools.len());
        for (index, tool) in settings.tools.iter().enumerate() {
            if operator.iter().any(|e| e.name == tool.name) {
                return Err(RegistryError::DuplicateName {
                    index,
                    name: tool.name.clone(),
                });
            }
            operator.push(compile_operator_entry(index, tool, default_profile)?);
        }
        Ok(Registry {
            operator,
            runtime: RwLock::new(BTreeMap::new()),
            replay: settings.replay,
        })
    }

    /// The registry of a loaded guard configuration.
    pub fn from_config(config: &crate::config::Config) -> Result<Self, RegistryError> {
        Registry::new(&config.guard, config.terminal.sandbox.profile)
    }

    /// The replay mode of the policy (`[guard] replay`).
    pub fn replay_mode(&self) -> ReplayMode {
        self.replay
    }

    /// Every tool name, operator entries first (in policy order), then run-time entries.
    pub fn tool_names(&self) -> Vec<String> {
        let runtime = self.runtime.read().unwrap_or_else(PoisonError::into_inner);
        (self.operator.iter().map(|e| e.name.clone()))
            .chain(runtime.keys().cloned())
            .collect()
    }

    /// Whether `tool` is registered (operator or run-time).
    pub fn contains(&self, tool: &str) -> bool {
        self.operator.iter().any(|e| e.name == tool)
            || (self.runtime.read().unwrap_or_else(PoisonError::into_inner)).contains_key(tool)
    }

    /// Add a run-time entry, which can only narrow. Refused with `POLICY_DENIED` when
    /// `executable` is no operator entry's (compared with every symlink resolved), when
    /// `tool` is already registered (an operator entry cannot be replaced, a run-time entry
    /// is not re-registered), when `profile` is looser than an operator entry's for that
    /// executable, or when the registry is full; with `INVALID_REQUEST` when the name, a
    /// pattern or the `cwd` pattern is malformed. `profile` absent: the strictest of those
    /// operator entries'.
    pub fn register(
        &self,
        tool: &str,
        executable: &Path,
        args_patterns: &[String],
        cwd_pattern: Option<&str>,
        profile: Option<Profile>,
    ) -> Result<Registration, Refusal> {
        if !valid_name(tool) {
            return Err(Refusal::invalid(format!(
                "tool name '{tool}' must be 1 to 64 of A-Z a-z 0-9 _ . -"
            )));
        }
        // Replacing an operator entry would let a caller widen what the operator allowed.
        if self.operator.iter().any(|e| e.name == tool) {
            return Err(Refusal::denied(format!(
                "'{tool}' is an operator entry: it cannot be replaced or widened; register a new name"
            )));
        }
        let shown = executable.display();
        let not_listed = |why: &str| {
            Refusal::denied(format!(
                "'{shown}' is not the executable of any operator entry{why}: a run-time entry can only narrow one"
            ))
        };
        // A relative name would be found through PATH or the working folder, which the
        // caller influences; only an absolute path names one file.
        if !executable.is_absolute() {
            return Err(not_listed(" (not an absolute path)"));
        }
        // `/usr/bin/../bin/sh` or a symlink to a listed program: compare the real files.
        let resolved = executable
            .canonicalize()
            .map_err(|e| not_listed(&format!(" (it cannot be resolved: {e})")))?;
        let parents: Vec<&OperatorEntry> = (self.operator.iter())
            .filter(|e| e.executable == resolved)
            .collect();
        if parents.is_empty() {
            return Err(not_listed(""));
        }
        let strictest = parents
            .iter()
            .map(|e| e.profile)
            .min_by_key(|p| Profile::ALL.iter().position(|q| q == p))
            .unwrap_or(Profile::Strict);
        let profile = profile.unwrap_or(strictest);
        if let Some(looser) = parents.iter().find(|e| !no_looser(profile, e.profile)) {
            return Err(Refusal::denied(format!(
                "profile '{}' is looser than '{}' of operator entry '{}': a run-time entry may only be the same or stricter",
                profile.name(),
                looser.profile.name(),
                looser.name
            )));
        }
        if args_patterns.len() > MAX_RUNTIME_PATTERNS {
            return Err(Refusal::invalid(format!(
                "{} args_patterns: at most {MAX_RUNTIME_PATTERNS}",
                args_patterns.len()
            )));
        }
        let mut patterns = Vec::with_capacity(args_patterns.len());
        for pattern in args_patterns {
            let re = whole_match(pattern).map_err(|e| {
                Refusal::invalid(format!("args_patterns '{pattern}' does not compile: {e}"))
            })?;
            patterns.push(re);
        }
        let cwd = cwd_pattern
            .map(compile_cwd)
            .transpose()
            .map_err(Refusal::invalid)?;
        let mut runtime = self.runtime.write().unwrap_or_else(PoisonError::into_inner);
        if runtime.contains_key(tool) {
            return Err(Refusal::denied(format!(
                "'{tool}' is already registered: a run-time entry is not replaced"
            )));
        }
        if runtime.len() >= MAX_RUNTIME_ENTRIES {
            return Err(Refusal::denied(format!(
                "the registry already holds {MAX_RUNTIME_ENTRIES} run-time entries, the most it takes"
            )));
        }
        let parents: Vec<String> = parents.iter().map(|e| e.name.clone()).collect();
        runtime.insert(
            tool.to_string(),
            RuntimeEntry {
                executable: resolved.clone(),
                rules: Rules { patterns, cwd },
                profile,
                parents: parents.clone(),
            },
        );
        Ok(Registration {
            tool: tool.to_string(),
            executable: resolved,
            operator_entries: parents,
            profile,
        })
    }

    /// Judge one call of `tool` with `args` (the arguments only; the program is the entry's
    /// executable) in the folder `cwd` the jail resolved. An operator entry's call must pass
    /// its rules; a run-time entry's call must pass the run-time entry's rules AND those of
    /// one operator entry for its executable (the first in policy order that it passes
    /// gives the environment allow-list). An unknown tool is `INVALID_REQUEST`; a call the
    /// rules refuse is `POLICY_DENIED`, the reason naming the argument and the layer.
    pub fn check(
        &self,
        tool: &str,
        args: &[String],
        cwd: &ContainedDir,
    ) -> Result<Allowed, Refusal> {
        let operator_allowed = |entry: &OperatorEntry| Allowed {
            tool: tool.to_string(),
            operator_entry: entry.name.clone(),
            runtime: false,
            executable: entry.executable.clone(),
            profile: entry.profile,
            env_allow: entry.env_allow.clone(),
            file_names: entry.file_names.clone(),
        };
        if let Some(entry) = self.operator.iter().find(|e| e.name == tool) {
            let layer = format!("operator entry '{tool}'");
            entry
                .rules
                .check(&layer, args, cwd)
                .map_err(|r| Refusal::denied(format!("'{tool}' refused: {r}")))?;
            return Ok(operator_allowed(entry));
        }
        let runtime = self.runtime.read().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = runtime.get(tool) else {
            return Err(Refusal::invalid(format!(
                "no tool named '{tool}' is registered"
            )));
        };
        let layer = format!("run-time entry '{tool}'");
        entry
            .rules
            .check(&layer, args, cwd)
            .map_err(|r| Refusal::denied(format!("'{tool}' refused: {r}")))?;
        let mut refusals = Vec::new();
        for parent in &entry.parents {
            let Some(op) = self.operator.iter().find(|e| &e.name == parent) else {
                continue;
            };
            let layer = format!("operator entry '{parent}'");
            match op.rules.check(&layer, args, cwd) {
                Ok(()) => {
                    return Ok(Allowed {
                        runtime: true,
                        executable: entry.executable.clone(),
                        profile: entry.profile,
                        ..operator_allowed(op)
                    });
                }
                Err(r) => refusals.push(r),
            }
        }
        Err(Refusal::denied(format!(
            "'{tool}' refused: {}",
            refusals.join("; ")
        )))
    }

    /// The profile `tool` runs under; `None` when it is not registered.
    pub fn profile_of(&self, tool: &str) -> Option<Profile> {
        if let Some(entry) = self.operator.iter().find(|e| e.name == tool) {
            return Some(entry.profile);
        }
        let runtime = self.runtime.read().unwrap_or_else(PoisonError::into_inner);
        runtime.get(tool).map(|e| e.profile)
    }

    /// What the trust tier reads of `tool`; `None` when it is not registered.
    pub(crate) fn tier_view(&self, tool: &str) -> Option<TierView> {
        if let Some(entry) = self.operator.iter().find(|e| e.name == tool) {
            return Some(TierView {
                runtime_layer: None,
                operator_layers: vec![entry.rules.patterns.clone()],
                profile: entry.profile,
            });
        }
        let runtime = self.runtime.read().unwrap_or_else(PoisonError::into_inner);
        let entry = runtime.get(tool)?;
        let operator_layers = (entry.parents.iter())
            .filter_map(|p| self.operator.iter().find(|e| &e.name == p))
            .map(|e| e.rules.patterns.clone())
            .collect();
        Some(TierView {
            runtime_layer: Some(entry.rules.patterns.clone()),
            operator_layers,
            profile: entry.profile,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::Jail;

    fn tool(name: &str, executable: &str, patterns: &[&str]) -> GuardTool {
        GuardTool {
            name: name.into(),
            executable: PathBuf::from(executable),
            args_patterns: patterns.iter().map(|p| p.to_string()).collect(),
            cwd: None,
            profile: None,
            env_allow: vec![],
            examples_allow: vec![],
            examples_deny: vec![],
            written_executable: None,
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// `/bin/ls` and `/bin/echo` as the loader leaves them: resolved.
    fn real(path: &str) -> String {
        Path::new(path)
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    fn registry(tools: Vec<GuardTool>) -> Registry {
        let settings = GuardSettings {
            tools,
            ..GuardSettings::default()
        };
        Registry::new(&settings, Profile::Standard).unwrap()
    }

    struct Root {
        _dir: tempfile::TempDir,
        jail: Jail,
    }

    fn jail() -> Root {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/sub")).unwrap();
        std::fs::create_dir_all(dir.path().join("other")).unwrap();
        std::os::unix::fs::symlink("../other", dir.path().join("src/link")).unwrap();
        let jail = Jail::open(&dir.path().canonicalize().unwrap()).unwrap();
        Root { _dir: dir, jail }
    }

    #[test]
    fn an_operator_entry_refuses_an_argument_no_pattern_matches_whole() {
        let ls = real("/bin/ls");
        let r = registry(vec![tool("ls", &ls, &["-l", "[a-z]+"])]);
        let root = jail();
        let cwd = root.jail.resolve_cwd(None).unwrap();
        let ok = r.check("ls", &strings(&["-l", "src"]), &cwd).unwrap();
        assert_eq!(ok.executable, PathBuf::from(&ls));
        assert_eq!(ok.profile, Profile::Standard);
        assert!(!ok.runtime);
        // Anchored by the registry: `src;id` contains a match of `[a-z]+` but is not one.
        let no = r.check("ls", &strings(&["src;id"]), &cwd).unwrap_err();
        assert_eq!(no.code, ResultCode::PolicyDenied);
        assert!(no.reason.contains("argument 0 'src;id'"), "{}", no.reason);
        let unknown = r.check("cat", &[], &cwd).unwrap_err();
        assert_eq!(unknown.code, ResultCode::InvalidRequest);
    }

    #[test]
    fn registering_an_executable_the_operator_did_not_list_is_policy_denied() {
        let r = registry(vec![tool("ls", &real("/bin/ls"), &["-l"])]);
        for exe in ["/bin/sh", "sh", "/no/such/program"] {
            let no = r
                .register("mine", Path::new(exe), &[], None, None)
                .unwrap_err();
            assert_eq!(no.code, ResultCode::PolicyDenied, "{exe}: {}", no.reason);
            assert!(
                no.reason
                    .contains("not the executable of any operator entry")
            );
        }
        assert!(!r.contains("mine"));
    }

    #[test]
    fn an_operator_entry_cannot_be_replaced_nor_a_runtime_entry_re_registered() {
        let ls = real("/bin/ls");
        let r = registry(vec![tool("ls", &ls, &["-l"])]);
        let no = r
            .register("ls", Path::new(&ls), &strings(&[".*"]), None, None)
            .unwrap_err();
        assert_eq!(no.code, ResultCode::PolicyDenied);
        assert!(no.reason.contains("cannot be replaced"), "{}", no.reason);
        r.register("ls-l", Path::new(&ls), &strings(&["-l"]), None, None)
            .unwrap();
        let again = r
            .register("ls-l", Path::new(&ls), &strings(&[".*"]), None, None)
            .unwrap_err();
        assert_eq!(again.code, ResultCode::PolicyDenied);
        assert_eq!(r.tool_names(), ["ls", "ls-l"]);
    }

    #[test]
    fn a_narrowed_entry_refuses_what_either_layer_refuses() {
        let ls = real("/bin/ls");
        let r = registry(vec![tool("ls", &ls, &["-l", "-a", "[a-z]+"])]);
        // The run-time entry allows `-a`, `-R` and names; the operator never allowed `-R`.
        let reg = r
            .register(
                "narrow",
                Path::new(&ls),
                &strings(&["-a", "-R", "[a-z]+"]),
                None,
                None,
            )
            .unwrap();
        assert_eq!(reg.operator_entries, ["ls"]);
        let root = jail();
        let cwd = root.jail.resolve_cwd(None).unwrap();
        let ok = r.check("narrow", &strings(&["-a", "src"]), &cwd).unwrap();
        assert!(ok.runtime);
        assert_eq!(ok.operator_entry, "ls");
        // Refused by the run-time layer (the operator allows -l).
        let by_runtime = r.check("narrow", &strings(&["-l"]), &cwd).unwrap_err();
        assert!(
            by_runtime.reason.contains("run-time entry 'narrow'"),
            "{}",
            by_runtime.reason
        );
        // Refused by the operator layer (the run-time entry allows -R).
        let by_operator = r.check("narrow", &strings(&["-R"]), &cwd).unwrap_err();
        assert_eq!(by_operator.code, ResultCode::PolicyDenied);
        assert!(
            by_operator.reason.contains("operator entry 'ls'"),
            "{}",
            by_operator.reason
        );
        // A run-time entry with no patterns is still held to the operator's.
        r.register("open", Path::new(&ls), &[], None, None).unwrap();
        assert!(r.check("open", &strings(&["--exec"]), &cwd).is_err());
    }

    #[test]
    fn a_symlink_or_dotdot_to_a_listed_program_names_that_program() {
        let ls = real("/bin/ls");
        let r = registry(vec![tool("ls", &ls, &["-l"])]);
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("my-ls");
        std::os::unix::fs::symlink(&ls, &link).unwrap();
        let reg = r.register("via-link", &link, &[], None, None).unwrap();
        assert_eq!(reg.executable, PathBuf::from(&ls));
        let parent = Path::new(&ls).parent().unwrap().file_name().unwrap();
        let dotted = format!(
            "{}/../{}/ls",
            Path::new(&ls).parent().unwrap().display(),
            parent.to_string_lossy()
        );
        r.register("via-dots", Path::new(&dotted), &[], None, None)
            .unwrap();
    }

    #[test]
    fn a_runtime_profile_may_only_be_the_same_or_stricter() {
        let ls = real("/bin/ls");
        let mut entry = tool("ls", &ls, &["-l"]);
        entry.profile = Some(Profile::Standard);
        let r = registry(vec![entry]);
        let no = r
            .register("wide", Path::new(&ls), &[], None, Some(Profile::Permissive))
            .unwrap_err();
        assert_eq!(no.code, ResultCode::PolicyDenied);
        assert!(no.reason.contains("looser"), "{}", no.reason);
        let same = r
            .register("same", Path::new(&ls), &[], None, Some(Profile::Standard))
            .unwrap();
        assert_eq!(same.profile, Profile::Standard);
        let strict = r
            .register("tight", Path::new(&ls), &[], None, Some(Profile::Strict))
            .unwrap();
        assert_eq!(strict.profile, Profile::Strict);
        let root = jail();
        let cwd = root.jail.resolve_cwd(None).unwrap();
        assert_eq!(
            r.check("tight", &strings(&["-l"]), &cwd).unwrap().profile,
            Profile::Strict
        );
        // Absent: the operator entry's.
        let default = r.register("dflt", Path::new(&ls), &[], None, None).unwrap();
        assert_eq!(default.profile, Profile::Standard);
        assert!(no_looser(Profile::Strict, Profile::Standard));
        assert!(!no_looser(Profile::Permissive, Profile::Standard));
    }

    #[test]
    fn cwd_is_compared_with_the_resolved_folder_not_the_callers_string() {
        let ls = real("/bin/ls");
        let mut entry = tool("ls", &ls, &[]);
        entry.cwd = Some("src".into());
        let r = registry(vec![entry]);
        let root = jail();
        let at = |cwd: &str| r.check("ls", &[], &root.jail.resolve_cwd(Some(cwd)).unwrap());
        assert!(at("src").is_ok());
        assert!(at("src/sub").is_ok());
        assert!(at("./src/sub/..").is_ok());
        // `src/link` is spelled beneath `src` but resolves to `other`.
        let no = at("src/link").unwrap_err();
        assert_eq!(no.code, ResultCode::PolicyDenied);
        assert!(no.reason.contains("'other'"), "{}", no.reason);
        // `srcx` starts with `src` as a string, not as a folder.
        std::fs::create_dir(root.jail.root().join("srcx")).unwrap();
        assert!(at("srcx").is_err());
        assert!(
            r.check("ls", &[], &root.jail.resolve_cwd(None).unwrap())
                .is_err()
        );
        // A run-time cwd narrows further; the operator's still holds.
        r.register("sub", Path::new(&ls), &[], Some("src/s*"), None)
            .unwrap();
        let sub = |cwd: &str| r.check("sub", &[], &root.jail.resolve_cwd(Some(cwd)).unwrap());
        assert!(sub("src/sub").is_ok());
        assert!(sub("src").is_err());
        r.register("elsewhere", Path::new(&ls), &[], Some("**"), None)
            .unwrap();
        let elsewhere = r.check(
            "elsewhere",
            &[],
            &root.jail.resolve_cwd(Some("other")).unwrap(),
        );
        assert!(
            elsewhere
                .unwrap_err()
                .reason
                .contains("operator entry 'ls'")
        );
    }

    #[test]
    fn cwd_globs_stay_within_components_unless_doubled() {
        let m = |pattern: &str, path: &str| compile_cwd(pattern).unwrap().regex.is_match(path);
        assert!(m("pkgs/*", "pkgs/a"));
        assert!(m("pkgs/*", "pkgs/a/b"));
        assert!(!m("pkgs/*", "pkgs"));
        assert!(m("pkgs/*/src", "pkgs/a/src"));
        assert!(!m("pkgs/*/src", "pkgs/a/b/src"));
        assert!(m("pkgs/**/src", "pkgs/a/b/src"));
        assert!(m("a.b", "a.b"));
        assert!(!m("a.b", "axb"));
        assert!(m("./build/", "build"));
        for bad in ["", "/etc", "a/../..", "."] {
            assert!(compile_cwd(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn runtime_registration_input_is_bounded_and_checked() {
        let ls = real("/bin/ls");
        let r = registry(vec![tool("ls", &ls, &[])]);
        let bad = |tool: &str, patterns: &[String], cwd: Option<&str>| {
            r.register(tool, Path::new(&ls), patterns, cwd, None)
                .unwrap_err()
                .code
        };
        assert_eq!(bad("", &[], None), ResultCode::InvalidRequest);
        assert_eq!(bad("a b", &[], None), ResultCode::InvalidRequest);
        assert_eq!(bad("x", &strings(&["("]), None), ResultCode::InvalidRequest);
        // Over the compiled size limit.
        assert_eq!(
            bad("x", &strings(&["\\w{5000}"]), None),
            ResultCode::InvalidRequest
        );
        assert_eq!(
            bad("x", &vec![String::from("a"); 65], None),
            ResultCode::InvalidRequest
        );
        assert_eq!(bad("x", &[], Some("../up")), ResultCode::InvalidRequest);
        for i in 0..MAX_RUNTIME_ENTRIES {
            r.register(&format!("t{i}"), Path::new(&ls), &[], None, None)
                .unwrap();
        }
        assert_eq!(bad("one-more", &[], None), ResultCode::PolicyDenied);
    }

    #[test]
    fn an_entry_that_disagrees_with_its_examples_is_a_start_up_error_naming_it() {
        let ls = real("/bin/ls");
        let settings = |entry: GuardTool| GuardSettings {
            tools: vec![tool("first", &ls, &[]), entry],
            ..GuardSettings::default()
        };
        let mut allow = tool("lister", &ls, &["-l", "[a-z]+"]);
        allow.examples_allow = vec![strings(&["-l", "src"]), strings(&["-a"])];
        let e = Registry::new(&settings(allow), Profile::Standard).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("guard.tools[1] 'lister': examples_allow"),
            "{text}"
        );
        assert!(
            text.contains("\"-a\"") && text.contains("refused"),
            "{text}"
        );
        let mut deny = tool("lister", &ls, &["-l", "[a-z]+"]);
        deny.examples_deny = vec![strings(&["$(id)"]), strings(&["src"])];
        let text = Registry::new(&settings(deny), Profile::Standard)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("examples_deny [\"src\"] is allowed"),
            "{text}"
        );
        let mut good = tool("lister", &ls, &["-l", "[a-z]+"]);
        good.examples_allow = vec![strings(&["-l", "src"]), vec![]];
        good.examples_deny = vec![strings(&["-la"]), strings(&["src/.."])];
        Registry::new(&settings(good), Profile::Standard).unwrap();
        let text = Registry::new(&settings(tool("lister", &ls, &["["])), Profile::Standard)
            .unwrap_err()
            .to_string();
        assert!(
            text.starts_with("guard.tools[1] 'lister': args_patterns '['"),
            "{text}"
        );
        let text = Registry::new(&settings(tool("first", &ls, &[])), Profile::Standard)
            .unwrap_err()
            .to_string();
        assert!(text.contains("a second entry"), "{text}");
    }

    #[test]
    fn with_two_operator_entries_for_one_program_a_call_passes_one_of_them() {
        let ls = real("/bin/ls");
        let mut long = tool("ls-long", &ls, &["-l"]);
        long.env_allow = strings(&["COLUMNS"]);
        let mut strict = tool("ls-all", &ls, &["-a"]);
        strict.profile = Some(Profile::Strict);
        let r = registry(vec![long, strict]);
        // Standard is looser than ls-all's strict.
        assert!(
            r.register("mine", Path::new(&ls), &[], None, Some(Profile::Standard))
                .is_err()
        );
        let reg = r.register("mine", Path::new(&ls), &[], None, None).unwrap();
        assert_eq!(reg.profile, Profile::Strict);
        assert_eq!(reg.operator_entries, ["ls-long", "ls-all"]);
        let root = jail();
        let cwd = root.jail.resolve_cwd(None).unwrap();
        let ok = r.check("mine", &strings(&["-l"]), &cwd).unwrap();
        assert_eq!(ok.operator_entry, "ls-long");
        assert_eq!(ok.env_allow, ["COLUMNS"]);
        assert_eq!(ok.profile, Profile::Strict);
        assert_eq!(
            r.check("mine", &strings(&["-a"]), &cwd)
                .unwrap()
                .operator_entry,
            "ls-all"
        );
        let no = r.check("mine", &strings(&["-R"]), &cwd).unwrap_err();
        assert!(
            no.reason.contains("'ls-long'") && no.reason.contains("'ls-all'"),
            "{}",
            no.reason
        );
    }

    #[test]
    fn digit_classes_are_unicode_unless_written_ascii_as_the_policy_page_says() {
        let unicode = whole_match("\\d+").unwrap();
        assert!(unicode.is_match("12") && unicode.is_match("\u{663}"));
        let ascii = whole_match("(?-u:\\d)+").unwrap();
        assert!(ascii.is_match("12") && !ascii.is_match("\u{663}"));
        let range = whole_match("[0-9]+").unwrap();
        assert!(!range.is_match("\u{663}"));
    }

    #[test]
    fn a_loaded_guard_policy_builds_a_registry_whose_entries_default_to_the_sandbox_profile() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("jail")).unwrap();
        let policy = dir.path().join("policy.toml");
        let write = |tools: &str| {
            std::fs::write(
                &policy,
                format!(
                    "audit_log = 'audit.jsonl'\n[terminal]\njail_root = 'jail'\n\
                     [terminal.sandbox]\nprofile = 'strict'\n{tools}"
                ),
            )
            .unwrap();
            crate::config::load(&policy, crate::config::Server::Guard, &[]).unwrap()
        };
        let config = write(
            "[[guard.tools]]\nname = 'echo'\nexecutable = '/bin/echo'\nargs_patterns = ['hi']\n\
             examples_allow = [['hi']]\nexamples_deny = [['bye']]\n",
        );
        let r = Registry::from_config(&config).unwrap();
        let root = Jail::open(config.jail_root().unwrap()).unwrap();
        let ok = r
            .check("echo", &strings(&["hi"]), &root.resolve_cwd(None).unwrap())
            .unwrap();
        assert_eq!(ok.profile, Profile::Strict);
        assert_eq!(ok.executable, PathBuf::from(real("/bin/echo")));
        let config = write(
            "[[guard.tools]]\nname = 'echo'\nexecutable = '/bin/echo'\nargs_patterns = ['hi']\n\
             examples_allow = [['hi', 'there']]\n",
        );
        let e = Registry::from_config(&config).unwrap_err().to_string();
        assert!(e.contains("guard.tools[0] 'echo': examples_allow"), "{e}");
        assert!(e.contains("argument 1 'there'"), "{e}");
    }
}
