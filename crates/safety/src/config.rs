//! Configuration (SPEC §3): load, override, resolve and validate `policy.toml` once at start-up.
//!
//! Order of work, each step fatal on doubt:
//! 1. choose the file: `--config` wins over `SAFE_MCP_POLICY_FILE`; neither is fatal;
//! 2. parse the TOML into a tree and apply every `SAFE_MCP_*` override from [`ENV_OVERRIDES`];
//! 3. deserialize with unknown keys rejected (a typo must not silently disable a rule);
//! 4. resolve relative paths against the policy file's folder;
//! 5. validate the section of the server being started (roots exist, state files outside them).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::redact::RedactionSettings;

/// Which server is starting: it reads only its own section and the shared keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// `safe-mcp terminal`.
    Terminal,
    /// `safe-mcp files`.
    Files,
}

/// A fatal start-up condition. `Display` is the text after `fatal: `.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Neither `--config` nor `SAFE_MCP_POLICY_FILE` was given.
    #[error(
        "no policy file given: pass --config FILE or set SAFE_MCP_POLICY_FILE (there is no default location)"
    )]
    NoPolicyFile,
    /// The policy file could not be read.
    #[error("policy file '{path}' cannot be read: {message}")]
    Unreadable {
        /// The path given.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The policy file is not valid TOML or has an unknown or mistyped key.
    #[error("policy file '{path}' is invalid: {message}")]
    Invalid {
        /// The path given.
        path: PathBuf,
        /// The parser's message (names the key).
        message: String,
    },
    /// A `SAFE_MCP_*` variable is unknown or its value does not parse.
    #[error("environment variable {name}: {message}")]
    BadEnv {
        /// The variable.
        name: String,
        /// Why.
        message: String,
    },
    /// A required key is missing.
    #[error("{key} is not set: set it in the policy file or via {env}")]
    Missing {
        /// The TOML key, e.g. `terminal.jail_root`.
        key: &'static str,
        /// Its environment variable.
        env: &'static str,
    },
    /// A root does not exist or is not a directory.
    #[error("{key} '{path}' {problem}")]
    BadRoot {
        /// The TOML key.
        key: &'static str,
        /// The resolved path.
        path: PathBuf,
        /// `does not exist` or `is not a directory`.
        problem: String,
    },
    /// A state file (audit log, journal) lies inside a root the server acts on.
    #[error(
        "{key} '{path}' lies inside {root_key} '{root}': the server could move or forge it; put it outside"
    )]
    StateInsideRoot {
        /// The state file's key.
        key: &'static str,
        /// Its resolved path.
        path: PathBuf,
        /// The root's key.
        root_key: &'static str,
        /// The root.
        root: PathBuf,
    },
    /// Any other invalid value, with the key named.
    #[error("{key}: {message}")]
    BadValue {
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
}

/// `audit_fail_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditFailMode {
    /// No record, no operation (default).
    Closed,
    /// Proceed without the record and say so in the result.
    Open,
}

/// A string or a list of strings (for `executable`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One value.
    One(String),
    /// Several values.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The values as a list.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// `[terminal.limits]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Wall-clock limit per command.
    pub timeout_seconds: u64,
    /// Cap for stdout and for stderr, each.
    pub max_output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout_seconds: 30,
            max_output_bytes: 65536,
        }
    }
}

/// `[terminal.allowlist]` / `[terminal.denylist]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CommandList {
    /// Program names (basenames).
    pub commands: Vec<String>,
}

/// `[terminal.sandbox]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxSettings {
    /// `strict`, `standard` or `permissive`.
    pub profile: String,
    /// Folders a command may read and execute from besides the jail.
    pub read_paths: Vec<PathBuf>,
    /// A missing kernel mechanism refuses the command instead of downgrading.
    pub require_kernel_sandbox: bool,
    /// Start commands through the sandbox launcher (Landlock, seccomp, namespaces, cgroups,
    /// rlimits). `false` leaves only the timeout, output cap and process group: for
    /// benchmarks and hosts where the launcher cannot run; every result then says so.
    pub enabled: bool,
    /// Use user + PID (+ network) namespaces when the kernel allows them.
    pub namespaces: bool,
    /// Use a per-call cgroup (tree kill, process and memory limits) when writable.
    pub cgroups: bool,
    /// The unprivileged identity a root server runs commands as: a user name (its primary
    /// group) or `UID:GID`. Unset: the jail root's owner; a root-owned jail is then a
    /// start-up error.
    pub run_as: Option<String>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            profile: "standard".into(),
            read_paths: Vec::new(),
            require_kernel_sandbox: false,
            enabled: true,
            namespaces: true,
            cgroups: true,
            run_as: None,
        }
    }
}

/// One `[[terminal.rules]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandRule {
    /// The program this rule is about (basename).
    pub command: String,
    /// Token sets; an argv holding every token of one entry is denied, in any order.
    #[serde(default)]
    pub deny_args: Vec<String>,
    /// Regexes; when present, every argument must fully match one of them.
    #[serde(default)]
    pub args_patterns: Vec<String>,
    /// Pinned absolute executable path(s).
    #[serde(default)]
    pub executable: Option<OneOrMany>,
    /// Reason reported when this rule denies.
    #[serde(default)]
    pub reason: Option<String>,
    /// Commands this rule must let through (checked at start-up).
    #[serde(default)]
    pub examples_allow: Vec<String>,
    /// Commands this rule must refuse (checked at start-up).
    #[serde(default)]
    pub examples_deny: Vec<String>,
    /// Sandbox profile for this program.
    #[serde(default)]
    pub profile: Option<String>,
    /// Allow form: the subcommand this rule is about (`git log`). A program with one such rule
    /// is a program with subcommands: the first operand after its global options is the
    /// subcommand, and a subcommand with no rule is refused. Needs `allow_options`.
    #[serde(default)]
    pub subcommand: Option<String>,
    /// Allow form: the options the program (or its `subcommand`) may take; any other option is
    /// refused with a reason naming it. Specs: `-r`, `--reverse` (flags), `-k VALUE`,
    /// `--key=VALUE` (a value, attached or the next argument), `-M[VALUE]`, `--abbrev[=VALUE]`
    /// (an optional, attached value), `--color=never` (that value only), `-NUM` (`-5`).
    /// On a program-level rule of a program with subcommands, these are its global options.
    /// Absent: no allow form; `[]`: an allow form with no options. See docs/policy.md.
    #[serde(default)]
    pub allow_options: Option<Vec<String>>,
    /// Allow form: at most this many operands (non-option arguments, the subcommand not
    /// counted); `uniq` gets 1, its second operand is a file it writes. Needs `allow_options`.
    #[serde(default)]
    pub max_operands: Option<usize>,
    /// Allow form: regexes; every operand (not the options or their values) must fully match
    /// one. `date` gets `\+.*`: an operand without `+` sets the clock. Needs `allow_options`.
    #[serde(default)]
    pub operand_patterns: Vec<String>,
}

/// `[terminal]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TerminalSettings {
    /// REQUIRED: the folder commands run in and cannot leave.
    pub jail_root: Option<PathBuf>,
    /// `PATH` for commands.
    pub path: Option<String>,
    /// `LANG` for commands.
    pub lang: Option<String>,
    /// Time and output limits.
    pub limits: Limits,
    /// Allowed program names.
    pub allowlist: CommandList,
    /// Denied program names (deny wins).
    pub denylist: CommandList,
    /// Per-program argument rules.
    pub rules: Vec<CommandRule>,
    /// Kernel sandbox settings.
    pub sandbox: SandboxSettings,
    /// How many `run_command` calls may run at once (default
    /// [`DEFAULT_MAX_CONCURRENT_COMMANDS`], at least 1); a call over the limit is answered
    /// `BUSY` at once and runs nothing.
    pub max_concurrent_commands: Option<u64>,
}

/// Default `[terminal] max_concurrent_commands`.
pub const DEFAULT_MAX_CONCURRENT_COMMANDS: u64 = 4;

/// Default `PATH` for commands.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Default `LANG` for commands.
pub const DEFAULT_LANG: &str = "C.UTF-8";

impl TerminalSettings {
    /// `PATH` given to commands.
    pub fn path(&self) -> &str {
        self.path.as_deref().unwrap_or(DEFAULT_PATH)
    }
    /// `LANG` given to commands.
    pub fn lang(&self) -> &str {
        self.lang.as_deref().unwrap_or(DEFAULT_LANG)
    }
    /// How many commands may run at once.
    pub fn max_concurrent_commands(&self) -> u64 {
        self.max_concurrent_commands
            .unwrap_or(DEFAULT_MAX_CONCURRENT_COMMANDS)
    }
}

/// Which layer a `[[files.skip]]` rule belongs to (required, no default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// Enforced by every tool, without override.
    Protection,
    /// Enforced only by the automatic planner.
    Restraint,
}

/// A predicate usable in `when = [...]`; unknown names are a start-up error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Predicate {
    /// Control, bidi or other format characters in the name.
    UnsafeName,
    /// Name starts with `.`.
    Dotfile,
    /// Installers and executables (`.exe`, `.msi`, `.dmg`, `.pkg`, `.deb`, ...).
    Installer,
    /// Application bundles (`.app` folders).
    AppFolder,
    /// System files (`desktop.ini`, `Thumbs.db`, `.DS_Store`, ...).
    SystemFile,
    /// A directory.
    Directory,
    /// No category matches the extension.
    Uncategorized,
}

/// One `[[files.skip]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkipRule {
    /// Required layer.
    pub layer: Layer,
    /// Matches when ANY predicate matches.
    pub when: Vec<Predicate>,
    /// Reason reported for a skipped entry.
    pub reason: String,
}

/// `[files]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FilesSettings {
    /// REQUIRED: the folder the organiser works in.
    pub workspace_root: Option<PathBuf>,
    /// Undo journal (outside the workspace).
    pub journal: Option<PathBuf>,
    /// Most moves one plan may hold.
    pub max_plan_moves: Option<u64>,
    /// Most entries one listing returns.
    pub max_list_entries: Option<u64>,
    /// Category name → extensions (with dot, lower case).
    pub categories: BTreeMap<String, Vec<String>>,
    /// Layered skip rules.
    pub skip: Vec<SkipRule>,
}

/// The whole policy file as written (after env overrides).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyFile {
    /// Shared audit log path.
    pub audit_log: Option<PathBuf>,
    /// Shared fail mode.
    pub audit_fail_mode: Option<AuditFailMode>,
    /// Rotate the audit log at this size in bytes (0 or absent: never).
    pub audit_rotate_bytes: Option<u64>,
    /// Shared redaction settings.
    pub redaction: RedactionSettings,
    /// Terminal section.
    pub terminal: TerminalSettings,
    /// Files section.
    pub files: FilesSettings,
}

/// The loaded policy: paths resolved, the started server's section validated.
#[derive(Debug, Clone)]
pub struct Config {
    /// The policy file it came from (absolute).
    pub policy_file: PathBuf,
    /// The server it was validated for.
    pub server: Server,
    /// Resolved audit log path.
    pub audit_log: PathBuf,
    /// Fail mode.
    pub audit_fail_mode: AuditFailMode,
    /// Rotate the audit log once its file holds this many bytes (0: never).
    pub audit_rotate_bytes: u64,
    /// Redaction settings.
    pub redaction: RedactionSettings,
    /// Terminal section (jail_root resolved and canonical when `server == Terminal`).
    pub terminal: TerminalSettings,
    /// Files section (workspace_root and journal resolved when `server == Files`).
    pub files: FilesSettings,
}

impl Config {
    /// The canonical jail root (validated for the terminal server).
    pub fn jail_root(&self) -> Option<&Path> {
        self.terminal.jail_root.as_deref()
    }
    /// The canonical workspace root (validated for the files server).
    pub fn workspace_root(&self) -> Option<&Path> {
        self.files.workspace_root.as_deref()
    }
}

/// What kind of value an environment override carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvKind {
    /// A string (paths included).
    Str,
    /// A non-negative integer.
    Int,
    /// `true`/`false` (also `1`/`0`, `yes`/`no`).
    Bool,
}

/// Every `SAFE_MCP_*` override: variable, TOML key path, kind. The README lists this table.
pub const ENV_OVERRIDES: &[(&str, &[&str], EnvKind)] = &[
    ("SAFE_MCP_AUDIT_LOG", &["audit_log"], EnvKind::Str),
    (
        "SAFE_MCP_AUDIT_FAIL_MODE",
        &["audit_fail_mode"],
        EnvKind::Str,
    ),
    (
        "SAFE_MCP_AUDIT_ROTATE_BYTES",
        &["audit_rotate_bytes"],
        EnvKind::Int,
    ),
    (
        "SAFE_MCP_REDACTION_ENABLED",
        &["redaction", "enabled"],
        EnvKind::Bool,
    ),
    (
        "SAFE_MCP_REDACTION_ENTROPY_FALLBACK",
        &["redaction", "entropy_fallback"],
        EnvKind::Bool,
    ),
    (
        "SAFE_MCP_JAIL_ROOT",
        &["terminal", "jail_root"],
        EnvKind::Str,
    ),
    ("SAFE_MCP_PATH", &["terminal", "path"], EnvKind::Str),
    ("SAFE_MCP_LANG", &["terminal", "lang"], EnvKind::Str),
    (
        "SAFE_MCP_TIMEOUT_SECONDS",
        &["terminal", "limits", "timeout_seconds"],
        EnvKind::Int,
    ),
    (
        "SAFE_MCP_MAX_OUTPUT_BYTES",
        &["terminal", "limits", "max_output_bytes"],
        EnvKind::Int,
    ),
    (
        "SAFE_MCP_MAX_CONCURRENT_COMMANDS",
        &["terminal", "max_concurrent_commands"],
        EnvKind::Int,
    ),
    (
        "SAFE_MCP_SANDBOX_PROFILE",
        &["terminal", "sandbox", "profile"],
        EnvKind::Str,
    ),
    (
        "SAFE_MCP_REQUIRE_KERNEL_SANDBOX",
        &["terminal", "sandbox", "require_kernel_sandbox"],
        EnvKind::Bool,
    ),
    (
        "SAFE_MCP_SANDBOX_ENABLED",
        &["terminal", "sandbox", "enabled"],
        EnvKind::Bool,
    ),
    (
        "SAFE_MCP_SANDBOX_NAMESPACES",
        &["terminal", "sandbox", "namespaces"],
        EnvKind::Bool,
    ),
    (
        "SAFE_MCP_SANDBOX_CGROUPS",
        &["terminal", "sandbox", "cgroups"],
        EnvKind::Bool,
    ),
    (
        "SAFE_MCP_RUN_AS",
        &["terminal", "sandbox", "run_as"],
        EnvKind::Str,
    ),
    (
        "SAFE_MCP_WORKSPACE_ROOT",
        &["files", "workspace_root"],
        EnvKind::Str,
    ),
    ("SAFE_MCP_JOURNAL", &["files", "journal"], EnvKind::Str),
    (
        "SAFE_MCP_MAX_PLAN_MOVES",
        &["files", "max_plan_moves"],
        EnvKind::Int,
    ),
    (
        "SAFE_MCP_MAX_LIST_ENTRIES",
        &["files", "max_list_entries"],
        EnvKind::Int,
    ),
];

/// `SAFE_MCP_*` variables that are not policy overrides.
pub const OTHER_ENV: &[&str] = &["SAFE_MCP_POLICY_FILE", "SAFE_MCP_LOG"];

/// Choose the policy file: `--config` wins; else `SAFE_MCP_POLICY_FILE`; else fatal.
pub fn choose_policy_file(
    flag: Option<&Path>,
    env_value: Option<&str>,
) -> Result<PathBuf, ConfigError> {
    match (flag, env_value) {
        (Some(p), _) => Ok(p.to_path_buf()),
        (None, Some(v)) if !v.is_empty() => Ok(PathBuf::from(v)),
        _ => Err(ConfigError::NoPolicyFile),
    }
}

/// Load the policy for `server`. `env` is the process environment as pairs (tests pass their own).
pub fn load(
    policy_file: &Path,
    server: Server,
    env: &[(String, String)],
) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(policy_file).map_err(|e| ConfigError::Unreadable {
        path: policy_file.to_path_buf(),
        message: e.to_string(),
    })?;
    let policy_file = absolute(policy_file)?;
    let base = policy_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    let mut tree: toml::Table = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        path: policy_file.clone(),
        message: one_line(&e.to_string()),
    })?;
    apply_env_overrides(&mut tree, env)?;
    let file: PolicyFile =
        PolicyFile::deserialize(toml::Value::Table(tree)).map_err(|e| ConfigError::Invalid {
            path: policy_file.clone(),
            message: one_line(&e.to_string()),
        })?;
    resolve_and_validate(file, &policy_file, &base, server)
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn absolute(path: &Path) -> Result<PathBuf, ConfigError> {
    std::path::absolute(path).map_err(|e| ConfigError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Write every `SAFE_MCP_*` override into the TOML tree; unknown variables are fatal.
fn apply_env_overrides(
    tree: &mut toml::Table,
    env: &[(String, String)],
) -> Result<(), ConfigError> {
    for (name, value) in env {
        if !name.starts_with("SAFE_MCP_") || OTHER_ENV.contains(&name.as_str()) {
            continue;
        }
        // A mistyped variable (SAFE_MCP_JAIL_RROT) must not be silently ignored.
        let Some((_, key_path, kind)) = ENV_OVERRIDES.iter().find(|(n, _, _)| n == name) else {
            return Err(ConfigError::BadEnv {
                name: name.clone(),
                message: "unknown SAFE_MCP_ variable (see the README for the list)".into(),
            });
        };
        let parsed = match kind {
            EnvKind::Str => toml::Value::String(value.clone()),
            EnvKind::Int => {
                let n: i64 = value.trim().parse().map_err(|_| ConfigError::BadEnv {
                    name: name.clone(),
                    message: format!("'{value}' is not a whole number"),
                })?;
                toml::Value::Integer(n)
            }
            EnvKind::Bool => toml::Value::Boolean(match value.trim() {
                "true" | "1" | "yes" => true,
                "false" | "0" | "no" => false,
                _ => {
                    return Err(ConfigError::BadEnv {
                        name: name.clone(),
                        message: format!("'{value}' is not true or false"),
                    });
                }
            }),
        };
        insert_path(tree, key_path, parsed).map_err(|message| ConfigError::BadEnv {
            name: name.clone(),
            message,
        })?;
    }
    Ok(())
}

fn insert_path(tree: &mut toml::Table, path: &[&str], value: toml::Value) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Err("empty key path".into());
    };
    let mut table = tree;
    for part in parents {
        let entry = table
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(format!("policy key '{part}' is not a table")),
        };
    }
    table.insert(last.to_string(), value);
    Ok(())
}

fn resolve(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// Lexically normalise `.` and `..` (the file may not exist yet, so no canonicalize).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalise a state-file path as far as it exists, so a symlinked parent folder
/// pointing into a root is seen for what it is.
fn canonical_state_path(path: &Path) -> PathBuf {
    let path = normalize(path);
    if let Ok(c) = path.canonicalize() {
        return c;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => canonical_state_path(parent).join(name),
        _ => path,
    }
}

/// Is `inner` equal to or beneath `root`? Compared by components, never by string prefix:
/// `/srv/jail_evil` starts with `/srv/jail` as a string but is not inside it.
pub fn is_within(root: &Path, inner: &Path) -> bool {
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

/// `StateInsideRoot` for the first of `states` (key, path) that lies inside `root`.
fn state_outside(
    root_key: &'static str,
    root: &Path,
    states: &[(&'static str, &Path)],
) -> Result<(), ConfigError> {
    match states.iter().find(|(_, path)| is_within(root, path)) {
        Some((key, path)) => Err(ConfigError::StateInsideRoot {
            key,
            path: path.to_path_buf(),
            root_key,
            root: root.to_path_buf(),
        }),
        None => Ok(()),
    }
}

fn canonical_root(key: &'static str, path: &Path) -> Result<PathBuf, ConfigError> {
    let meta = std::fs::metadata(path).map_err(|_| ConfigError::BadRoot {
        key,
        path: path.to_path_buf(),
        problem: "does not exist".into(),
    })?;
    if !meta.is_dir() {
        return Err(ConfigError::BadRoot {
            key,
            path: path.to_path_buf(),
            problem: "is not a directory".into(),
        });
    }
    path.canonicalize().map_err(|e| ConfigError::BadRoot {
        key,
        path: path.to_path_buf(),
        problem: format!("cannot be resolved: {e}"),
    })
}

fn resolve_and_validate(
    mut file: PolicyFile,
    policy_file: &Path,
    base: &Path,
    server: Server,
) -> Result<Config, ConfigError> {
    let audit_log = file.audit_log.take().ok_or(ConfigError::Missing {
        key: "audit_log",
        env: "SAFE_MCP_AUDIT_LOG",
    })?;
    let audit_log = canonical_state_path(&resolve(base, &audit_log));
    let audit_fail_mode = file.audit_fail_mode.unwrap_or(AuditFailMode::Closed);
    let audit_rotate_bytes = file.audit_rotate_bytes.unwrap_or(0);
    if audit_rotate_bytes != 0 && audit_rotate_bytes < crate::audit::MIN_ROTATE_BYTES {
        return Err(ConfigError::BadValue {
            key: "audit_rotate_bytes".into(),
            message: format!(
                "must be 0 (never rotate) or at least {}",
                crate::audit::MIN_ROTATE_BYTES
            ),
        });
    }

    match server {
        Server::Terminal => {
            let t = &mut file.terminal;
            let jail = t.jail_root.take().ok_or(ConfigError::Missing {
                key: "terminal.jail_root",
                env: "SAFE_MCP_JAIL_ROOT",
            })?;
            let jail = canonical_root("terminal.jail_root", &resolve(base, &jail))?;
            // One policy file may configure both servers: the organiser's journal must not be
            // where this server's commands can write either.
            let journal =
                (file.files.journal.as_deref()).map(|j| canonical_state_path(&resolve(base, j)));
            let mut states = vec![("audit_log", audit_log.as_path())];
            states.extend(journal.as_deref().map(|j| ("files.journal", j)));
            state_outside("terminal.jail_root", &jail, &states)?;
            let t = &mut file.terminal;
            t.jail_root = Some(jail);
            t.sandbox.read_paths = t
                .sandbox
                .read_paths
                .iter()
                .map(|p| resolve(base, p))
                .collect();
            if crate::exec::Profile::from_name(&t.sandbox.profile).is_none() {
                return Err(ConfigError::BadValue {
                    key: "terminal.sandbox.profile".into(),
                    message: format!(
                        "'{}' is not one of strict, standard, permissive",
                        t.sandbox.profile
                    ),
                });
            }
            // Requiring the kernel sandbox while turning it off would refuse every command.
            if t.sandbox.require_kernel_sandbox && !t.sandbox.enabled {
                return Err(ConfigError::BadValue {
                    key: "terminal.sandbox.require_kernel_sandbox".into(),
                    message: "cannot be true while [terminal.sandbox] enabled = false".into(),
                });
            }
            if t.limits.timeout_seconds == 0 {
                return Err(ConfigError::BadValue {
                    key: "terminal.limits.timeout_seconds".into(),
                    message: "must be at least 1".into(),
                });
            }
            if t.limits.max_output_bytes == 0 {
                return Err(ConfigError::BadValue {
                    key: "terminal.limits.max_output_bytes".into(),
                    message: "must be at least 1".into(),
                });
            }
            // Zero would answer every run_command BUSY: a server that cannot work.
            if t.max_concurrent_commands() == 0 {
                return Err(ConfigError::BadValue {
                    key: "terminal.max_concurrent_commands".into(),
                    message: "must be at least 1".into(),
                });
            }
            if !t.path().split(':').all(|p| Path::new(p).is_absolute()) {
                return Err(ConfigError::BadValue {
                    key: "terminal.path".into(),
                    message: "every PATH entry must be an absolute folder".into(),
                });
            }
        }
        Server::Files => {
            let f = &mut file.files;
            let ws = f.workspace_root.take().ok_or(ConfigError::Missing {
                key: "files.workspace_root",
                env: "SAFE_MCP_WORKSPACE_ROOT",
            })?;
            let ws = canonical_root("files.workspace_root", &resolve(base, &ws))?;
            let journal = f.journal.take().ok_or(ConfigError::Missing {
                key: "files.journal",
                env: "SAFE_MCP_JOURNAL",
            })?;
            let journal = canonical_state_path(&resolve(base, &journal));
            state_outside(
                "files.workspace_root",
                &ws,
                &[("audit_log", &audit_log), ("files.journal", &journal)],
            )?;
            // The terminal server of the same policy runs commands in its jail: the journal
            // must not be there (a missing jail is the terminal server's own start-up error).
            if let Some(jail) = (file.terminal.jail_root.as_deref())
                .and_then(|j| resolve(base, j).canonicalize().ok())
            {
                state_outside("terminal.jail_root", &jail, &[("files.journal", &journal)])?;
            }
            f.workspace_root = Some(ws);
            f.journal = Some(journal);
        }
    }

    Ok(Config {
        policy_file: policy_file.to_path_buf(),
        server,
        audit_log,
        audit_fail_mode,
        audit_rotate_bytes,
        redaction: file.redaction,
        terminal: file.terminal,
        files: file.files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn flag_wins_over_env() {
        let p = choose_policy_file(Some(Path::new("/a.toml")), Some("/b.toml")).unwrap();
        assert_eq!(p, PathBuf::from("/a.toml"));
        let p = choose_policy_file(None, Some("/b.toml")).unwrap();
        assert_eq!(p, PathBuf::from("/b.toml"));
        assert!(matches!(
            choose_policy_file(None, None),
            Err(ConfigError::NoPolicyFile)
        ));
        assert!(matches!(
            choose_policy_file(None, Some("")),
            Err(ConfigError::NoPolicyFile)
        ));
    }

    #[test]
    fn every_override_names_a_real_key() {
        // Each override must land on a key the schema knows; deny_unknown_fields proves it.
        for (name, path, kind) in ENV_OVERRIDES {
            let mut tree = toml::Table::new();
            let value = match kind {
                EnvKind::Str if *name == "SAFE_MCP_AUDIT_FAIL_MODE" => "open",
                EnvKind::Str => "x",
                EnvKind::Int => "5",
                EnvKind::Bool => "true",
            };
            apply_env_overrides(&mut tree, &[(name.to_string(), value.to_string())]).unwrap();
            let parsed = PolicyFile::deserialize(toml::Value::Table(tree));
            assert!(parsed.is_ok(), "{name} -> {path:?}: {parsed:?}");
        }
    }
}
