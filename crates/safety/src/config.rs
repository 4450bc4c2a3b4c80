//! Configuration (docs/policy.md, the reference of every key): load, override, resolve and validate `policy.toml`
//! once at start-up.
//!
//! Order of work, each step fatal on doubt:
//! 1. choose the file: `--config` wins over `SAFE_MCP_POLICY_FILE`; neither is fatal;
//! 2. parse the TOML into a tree and apply every `SAFE_MCP_*` override from `ENV_OVERRIDES`;
//! 3. deserialize with unknown keys rejected (a typo must not silently disable a rule);
//! 4. resolve relative paths against the policy file's folder;
//! 5. validate the section of the server being started: its roots exist; every path the
//!    policy names (audit log, journal, both roots), each symlink resolved, is distinct and
//!    none lies inside another; the audit log and the journal are not symlinks.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::exec::Profile;
use crate::jail::is_within;
use crate::redact::RedactionSettings;

/// Which server is starting: it reads only its own section and the shared keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// `safe-mcp terminal`.
    Terminal,
    /// `safe-mcp files`.
    Files,
    /// The guard: runs registered tools through the terminal's executor, so it validates
    /// `[terminal]` (jail, sandbox, limits) and `[guard]`.
    Guard,
    /// `safe-mcp hook` and `safe-mcp check`: judge what an agent's own tools are about to
    /// do with the terminal's rules and the `[hook]` roots; nothing runs, so the jail, the
    /// sandbox and the limits are not validated.
    Hook,
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
    /// The policy file is not valid TOML or has an unknown or mistyped key. The first line
    /// names the file, the line and column and what is wrong; the lines after it show the
    /// offending line with a caret under the place.
    #[error("policy file '{path}' is invalid: {message}{excerpt}")]
    Invalid {
        /// The path given.
        path: PathBuf,
        /// `line L, column C: ` (when the place is known) and the parser's message, which
        /// names the key, on one line.
        message: String,
        /// Empty, or the offending line and a caret under the place, each on its own line
        /// after a newline.
        excerpt: String,
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
    /// Two of the paths the policy names (audit log, journal, jail root, workspace root) are
    /// the same, or one lies inside the other.
    #[error("{key} '{path}' {relation} {other_key} '{other}': {why}")]
    Overlap {
        /// The first key.
        key: &'static str,
        /// Its resolved path.
        path: PathBuf,
        /// `is the same path as` or `lies inside`.
        relation: &'static str,
        /// The other key.
        other_key: &'static str,
        /// Its resolved path.
        other: PathBuf,
        /// What could go wrong, and the fix.
        why: &'static str,
    },
    /// A state file (audit log, journal) is a symlink: what it names can be changed by
    /// whoever can write the link's target folder, so only a real path is taken.
    #[error(
        "{key} '{path}' is a symlink (to '{target}'): give the real path of the file, not a link to it"
    )]
    StateIsSymlink {
        /// The state file's key.
        key: &'static str,
        /// The path as given (resolved against the policy's folder).
        path: PathBuf,
        /// Where the link leads, every symlink resolved.
        target: PathBuf,
    },
    /// A path could not be resolved (a symlink loop, or a link that cannot be read).
    #[error("{key} '{path}' cannot be resolved: {message}")]
    Unresolvable {
        /// The key.
        key: &'static str,
        /// The path as given.
        path: PathBuf,
        /// Why.
        message: String,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuditFailMode {
    /// No record, no operation (default).
    Closed,
    /// Proceed without the record and say so in the result.
    Open,
}

/// `audit_on_replaced`: what a writer does when it finds, before an append, that the log's
/// path no longer names the file it has open (renamed, deleted, replaced) or that the file
/// shrank (truncated in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuditOnReplaced {
    /// Refuse the append, and every later one until the server restarts (default): under
    /// `audit_fail_mode = "closed"` nothing runs.
    #[default]
    Fail,
    /// Open the file at the path (creating it if needed) and write, as its first record,
    /// what was found, chained to the last record written before.
    Reopen,
}

/// A string or a list of strings (for `executable`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CommandList {
    /// Program names (basenames).
    pub commands: Vec<String>,
}

/// `[terminal.sandbox]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxSettings {
    /// The profile commands run under unless a rule names another.
    pub profile: Profile,
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
            profile: Profile::Standard,
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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
    pub profile: Option<Profile>,
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
    /// What `safe-mcp hook` answers when this rule lets a command through: `allow` (the
    /// agent skips its own prompt), `ask` (the agent must ask its user), `deny` (refused
    /// in agent hooks only). Absent: no decision, the agent's own permission rules apply.
    #[serde(default)]
    pub hook: Option<HookDecision>,
}

/// A decision a hook rule names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HookDecision {
    /// Let it through without the agent's own prompt.
    Allow,
    /// Make the agent ask its user.
    Ask,
    /// Refuse it.
    Deny,
}

impl HookDecision {
    /// The lower-case name, as in the policy and the agents' JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            HookDecision::Allow => "allow",
            HookDecision::Ask => "ask",
            HookDecision::Deny => "deny",
        }
    }
}

/// What `[hook] unlisted_tools` gives a tool no `[[hook.tools]]` entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UnlistedTools {
    /// No decision: the agent's own permission rules apply (default).
    #[default]
    None,
    /// Make the agent ask its user.
    Ask,
    /// Refuse it.
    Deny,
}

/// One `[[hook.tools]]` entry: a decision for the tools whose name matches.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookToolRule {
    /// The tool's name as the agent sends it (`mcp__github__create_issue`); `*` matches any
    /// run of characters (`mcp__github__*`).
    pub name: String,
    /// The decision.
    pub decision: HookDecision,
    /// Why (shown with a deny or an ask).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `[audit]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AuditSettings {
    /// `[audit.syslog]`: every record also to syslog; absent: the local log only.
    pub syslog: Option<SyslogSettings>,
}

/// `[audit.syslog]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyslogSettings {
    /// `"unix"` (a datagram socket such as `/dev/log`), `"udp"` or `"tcp"`.
    pub transport: SyslogTransport,
    /// The socket's path (`unix`), or `IP:port` (`udp`, `tcp`; no host names).
    pub address: String,
    /// `true`: a record that cannot be shipped fails the call as a record that cannot be
    /// written does (the local record is kept either way).
    #[serde(default)]
    pub required: bool,
    /// The facility (`local0` unless set): `kern`, `user`, ..., `auth`, ..., `local7`.
    #[serde(default = "default_facility")]
    pub facility: String,
}

fn default_facility() -> String {
    "local0".to_string()
}

/// `[audit.syslog] transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SyslogTransport {
    /// A Unix datagram socket.
    Unix,
    /// UDP.
    Udp,
    /// TCP, octet-counting framing (RFC 6587).
    Tcp,
}

/// An `IP:port` for `[audit.syslog] address` (no host names: nothing is resolved at start-up
/// that could name another host later).
pub(crate) fn syslog_address(address: &str) -> Result<std::net::SocketAddr, String> {
    address.parse::<std::net::SocketAddr>().map_err(|_| {
        format!("'{address}' is not an IP address and port (127.0.0.1:514, [::1]:514)")
    })
}

/// The RFC 5424 code of the facility `name`.
pub(crate) fn syslog_facility(name: &str) -> Result<u8, String> {
    const NAMES: [&str; 24] = [
        "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
        "authpriv", "ftp", "ntp", "audit", "alert", "clock", "local0", "local1", "local2",
        "local3", "local4", "local5", "local6", "local7",
    ];
    NAMES
        .iter()
        .position(|n| *n == name)
        .and_then(|i| u8::try_from(i).ok())
        .ok_or_else(|| format!("'{name}' is not a syslog facility ({})", NAMES.join(", ")))
}

/// `[http]`: how a server started with `--transport http` admits its callers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HttpSettings {
    /// REQUIRED over HTTP: the callers' token file (`[[caller]]` entries with the SHA-256 of
    /// each token, never the token): outside every root, owned by the server's user, no
    /// permission for group or others.
    pub tokens_file: Option<PathBuf>,
    /// Browser origins allowed to call (`https://app.example:443`, `http://localhost:*`);
    /// empty (the default): a request that carries an `Origin` header is refused (403).
    pub allowed_origins: Vec<String>,
    /// `Host` names the server answers to besides the loopback names (`localhost`,
    /// `127.0.0.1`, `::1`); a name the request's `Host` does not match is refused (403).
    pub allowed_hosts: Vec<String>,
    /// The largest request body in bytes (413 above it).
    pub max_body_bytes: u64,
    /// Tool calls one caller may have running at once; more are answered `BUSY`.
    pub max_concurrent_per_caller: u32,
    /// Tool calls one caller may start per minute (a bucket that refills evenly); more are
    /// answered `BUSY`. 0: no rate limit.
    pub calls_per_minute: u32,
}

/// A browser origin: an `Origin` header's value, or an `[http] allowed_origins` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: String,
    /// The host, lower case (an IPv6 address in brackets).
    pub host: String,
    /// The port (the scheme's default when none is written); `None`: any port (`:*`, in an
    /// allowlist entry only).
    pub port: Option<u16>,
}

/// Parse `scheme://host[:port]` (no path, no user, no query). `pattern`: an allowlist entry,
/// where `:*` means any port. `null` and other schemes are refused: a page with an opaque
/// origin is never a caller.
pub fn parse_origin(text: &str, pattern: bool) -> Result<Origin, String> {
    let bad = |why: &str| format!("'{text}' is not an origin ({why}): write scheme://host[:port]");
    let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(bad("the scheme must be http or https")),
    };
    if rest.is_empty() || rest.contains(['/', '?', '#', '@', ' ']) {
        return Err(bad("only a host and a port may follow the scheme"));
    }
    // `[::1]:8080`, `host:8080`, `host`.
    let (host, port) = match rest.strip_prefix('[') {
        Some(v6) => {
            let (addr, after) = v6.split_once(']').ok_or_else(|| bad("an unclosed '['"))?;
            addr.parse::<std::net::Ipv6Addr>()
                .map_err(|_| bad("not an IPv6 address in brackets"))?;
            (
                format!("[{}]", addr.to_ascii_lowercase()),
                after.strip_prefix(':'),
            )
        }
        None => match rest.rsplit_once(':') {
            Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
            None => (rest.to_ascii_lowercase(), None),
        },
    };
    if host.is_empty() || host.contains(':') && !host.starts_with('[') {
        return Err(bad("no host"));
    }
    let port = match port {
        None => Some(default_port),
        Some("*") if pattern => None,
        Some(p) => Some(
            p.parse::<u16>()
                .map_err(|_| bad("the port must be 0 to 65535"))?,
        ),
    };
    Ok(Origin { scheme, host, port })
}

/// Why a secret file (a signer key, a TLS key, the callers' token file) was not read.
#[derive(Debug, thiserror::Error)]
pub enum OwnerOnlyError {
    /// It could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is not a file only the server's user can read and write: what is wrong.
    #[error("{0}")]
    Exposed(String),
}

/// Read the file at `path` (at most `max` bytes) only when it is a regular file (a symlink
/// is refused, not followed) owned by this process's effective user, with no permission for
/// group or others: a file someone else can write could name a caller or a key of theirs,
/// one someone else can read gives the secret away.
pub fn read_owner_only(path: &Path, max: u64) -> Result<String, OwnerOnlyError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let exposed = |what: String| OwnerOnlyError::Exposed(what);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => exposed("a symbolic link".to_string()),
            _ => OwnerOnlyError::Io(e),
        })?;
    let stat = rustix::fs::fstat(&file).map_err(std::io::Error::from)?;
    let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
    if kind != rustix::fs::FileType::RegularFile {
        return Err(exposed(format!("not a regular file ({kind:?})")));
    }
    let me = rustix::process::geteuid().as_raw();
    if stat.st_uid != me {
        return Err(exposed(format!(
            "owned by uid {}, not the server's uid {me}",
            stat.st_uid
        )));
    }
    let mode = stat.st_mode & 0o777;
    if mode & 0o077 != 0 {
        return Err(exposed(format!("mode {mode:03o}")));
    }
    let mut text = String::new();
    file.take(max.saturating_add(1)).read_to_string(&mut text)?;
    if u64::try_from(text.len()).unwrap_or(u64::MAX) > max {
        return Err(exposed(format!("longer than {max} bytes")));
    }
    Ok(text)
}

/// `[http] max_body_bytes` when the policy does not say.
pub const DEFAULT_HTTP_MAX_BODY_BYTES: u64 = 1 << 20;

/// The largest `[http] max_body_bytes`.
pub const MAX_HTTP_MAX_BODY_BYTES: u64 = 64 << 20;

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            tokens_file: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: DEFAULT_HTTP_MAX_BODY_BYTES,
            max_concurrent_per_caller: 4,
            calls_per_minute: 600,
        }
    }
}

/// `[hook]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HookSettings {
    /// The project folders an agent hook lets the agent touch; absent: `terminal.jail_root`.
    pub roots: Vec<PathBuf>,
    /// More paths no agent tool may write, added to the built-in ones: relative paths matched
    /// at any depth beneath a root (`.env`, `deploy/keys`), compared ignoring ASCII case.
    pub protected: Vec<String>,
    /// The severity from which a written file's scan findings are fed back to the agent
    /// (`LOW`, `MEDIUM`, `HIGH`, `CRITICAL`; default `HIGH`).
    pub scan_floor: Option<String>,
    /// A tool that is neither the shell, a file tool nor named by `[[hook.tools]]`.
    pub unlisted_tools: UnlistedTools,
    /// Decisions by tool name (MCP tools and any other tool the agent has).
    pub tools: Vec<HookToolRule>,
}

/// `[terminal]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
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
    /// `DEFAULT_MAX_CONCURRENT_COMMANDS`, at least 1); a call over the limit is answered
    /// `BUSY` at once and runs nothing.
    pub max_concurrent_commands: Option<u64>,
}

/// Default `[terminal] max_concurrent_commands`.
pub(crate) const DEFAULT_MAX_CONCURRENT_COMMANDS: u64 = 4;

/// Default `PATH` for commands.
pub(crate) const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Default `LANG` for commands.
pub(crate) const DEFAULT_LANG: &str = "C.UTF-8";

impl TerminalSettings {
    /// `PATH` given to commands.
    pub fn path(&self) -> &str {
        self.path.as_deref().unwrap_or(DEFAULT_PATH)
    }
    /// `LANG` given to commands.
    pub(crate) fn lang(&self) -> &str {
        self.lang.as_deref().unwrap_or(DEFAULT_LANG)
    }
    /// How many commands may run at once.
    pub fn max_concurrent_commands(&self) -> u64 {
        self.max_concurrent_commands
            .unwrap_or(DEFAULT_MAX_CONCURRENT_COMMANDS)
    }
}

/// Which layer a `[[files.skip]]` rule belongs to (required, no default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// Enforced by every tool, without override.
    Protection,
    /// Enforced only by the automatic planner.
    Restraint,
}

/// A predicate usable in `when = [...]`; unknown names are a start-up error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
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

/// `[guard] replay`: what a call whose canonical hash is already in the replay window gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    /// Run it and flag it as a replay (a call's `blockOnReplay` may still refuse it).
    #[default]
    Flag,
    /// Refuse it with `POLICY_DENIED`.
    Block,
    /// No replay window: nothing is flagged (the tool's trust tier is at most `HIGH`).
    Off,
}

/// One `[[guard.tools]]` entry: a named tool with a pinned executable and its argument rules.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardTool {
    /// The tool's name (`[A-Za-z0-9_.-]{1,64}`, unique): what a caller's `toolName` names.
    pub name: String,
    /// The absolute path of the program; checked at start-up to be an executable file and
    /// stored with every symlink resolved, so a link changed later does not change what runs.
    pub executable: PathBuf,
    /// Regexes (Rust `regex`, anchored for you); every argument must fully match one. Empty:
    /// any argument (the tool's trust tier is then `MEDIUM`).
    #[serde(default)]
    pub args_patterns: Vec<String>,
    /// A folder or glob (`*`, `?`, `**`) relative to the jail root: a call runs only in a
    /// matching folder or beneath one, compared with the folder as the jail resolved it.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The sandbox profile; absent: `[terminal.sandbox] profile`.
    #[serde(default)]
    pub profile: Option<Profile>,
    /// Names of environment variables a caller may set; nothing else of a caller's `env`
    /// reaches the command. Loader and configuration variables ([`FORBIDDEN_ENV`]) are refused.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// `executable` as the policy wrote it, before its symlinks were resolved (its file
    /// name is a name a caller may use for it, as is the resolved one's).
    #[serde(skip)]
    #[schemars(skip)]
    pub written_executable: Option<PathBuf>,
    /// Argument lists (the program not included) this entry must accept; checked when the
    /// registry is built at start-up, one that is refused is fatal.
    #[serde(default)]
    pub examples_allow: Vec<Vec<String>>,
    /// Argument lists this entry must refuse; one that is accepted is fatal.
    #[serde(default)]
    pub examples_deny: Vec<Vec<String>>,
}

/// `[guard]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GuardSettings {
    /// The folder source scans may read (a path beneath it only); absent: no scans.
    pub scan_root: Option<PathBuf>,
    /// What a replayed call gets.
    pub replay: ReplayMode,
    /// The file the replay window is kept in across restarts (outside the jail, like the
    /// audit log); absent: the window lives in memory only.
    pub replay_state: Option<PathBuf>,
    /// Most hashes the replay window holds (default `DEFAULT_REPLAY_WINDOW_ENTRIES`, at
    /// least 1); the oldest goes first.
    pub replay_window_entries: Option<u64>,
    /// How long a hash stays in the window, in seconds (default
    /// `DEFAULT_REPLAY_WINDOW_SECONDS`, at least 1).
    pub replay_window_seconds: Option<u64>,
    /// The operator's tools.
    pub tools: Vec<GuardTool>,
}

/// Default `[guard] replay_window_entries`.
pub const DEFAULT_REPLAY_WINDOW_ENTRIES: u64 = 10_000;
/// Default `[guard] replay_window_seconds` (one hour).
pub const DEFAULT_REPLAY_WINDOW_SECONDS: u64 = 3600;

impl GuardSettings {
    /// Most hashes the replay window holds.
    pub fn replay_window_entries(&self) -> u64 {
        self.replay_window_entries
            .unwrap_or(DEFAULT_REPLAY_WINDOW_ENTRIES)
    }
    /// How long a hash stays in the replay window.
    pub fn replay_window_age(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.replay_window_seconds
                .unwrap_or(DEFAULT_REPLAY_WINDOW_SECONDS),
        )
    }
}

/// Environment variables no `[[guard.tools]] env_allow` may name, compared ignoring case: each
/// makes a program load code or configuration from where the caller says (a trailing `*`
/// is a prefix). `PATH` picks the program; `LD_*`, `GCONV_PATH`, `GLIBC_TUNABLES`,
/// `MALLOC_*` steer the loader and libc; `BASH_ENV`, `ENV`, `SHELLOPTS`, `BASHOPTS`, `PS4`,
/// `IFS`, `CDPATH`, `PROMPT_COMMAND` run shell code; `GIT_*` reconfigures git
/// (`GIT_SSH_COMMAND`, `GIT_CONFIG_*`); `PYTHON*`, `NODE_OPTIONS`, `NODE_PATH`, `PERL5*`,
/// `PERLLIB`, `RUBYOPT`, `RUBYLIB`, `JAVA_TOOL_OPTIONS`, `_JAVA_OPTIONS`, `JDK_JAVA_OPTIONS`,
/// `CLASSPATH` load code into interpreters; `HOME`, `XDG_CONFIG_HOME`, `TMPDIR` move where
/// programs read their configuration and write; `PAGER`, `TERM`, `NO_COLOR` are the
/// terminal's hardening of every command's environment (`PAGER=cat`: a program that pages
/// runs `$PAGER` through a shell), which a caller must not set back; `SAFE_MCP_*` is ours.
pub const FORBIDDEN_ENV: &[&str] = &[
    "PATH",
    "LD_*",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "MALLOC_*",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "RESOLV_*",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "CDPATH",
    "PROMPT_COMMAND",
    "BASH_FUNC_*",
    "GIT_*",
    "PYTHON*",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5*",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "TMPDIR",
    "PAGER",
    "TERM",
    "NO_COLOR",
    "SAFE_MCP_*",
];

/// The [`FORBIDDEN_ENV`] entry `name` falls under, if any (case ignored).
pub fn forbidden_env(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    FORBIDDEN_ENV
        .iter()
        .copied()
        .find(|entry| match entry.strip_suffix('*') {
            Some(prefix) => upper.starts_with(prefix),
            None => upper == *entry,
        })
}

/// `audit_checkpoint_every` when the policy does not say.
pub const DEFAULT_CHECKPOINT_EVERY: u64 = 1000;

/// The largest `audit_checkpoint_every`: a verifier lets about this many records pass
/// unsigned after a checkpoint, so an interval without bound would let any stretch pass.
pub const MAX_CHECKPOINT_EVERY: u64 = 100_000;

/// The smallest `audit_rotate_bytes` other than 0 (off): each rotation adds two records.
pub const MIN_ROTATE_BYTES: u64 = 4096;

/// The whole policy file as written (after env overrides).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyFile {
    /// Shared audit log path.
    pub audit_log: Option<PathBuf>,
    /// Shared fail mode.
    pub audit_fail_mode: Option<AuditFailMode>,
    /// Rotate the audit log at this size in bytes (0 or absent: never).
    pub audit_rotate_bytes: Option<u64>,
    /// What a writer does when the log was renamed, deleted, replaced or truncated under it.
    pub audit_on_replaced: Option<AuditOnReplaced>,
    /// The Ed25519 signer key (`safe-mcp audit keygen`) that signs audit checkpoints; absent:
    /// no checkpoints.
    pub audit_checkpoint_key: Option<PathBuf>,
    /// A signed checkpoint every this many records (default 1000).
    pub audit_checkpoint_every: Option<u64>,
    /// `[audit]`: where records go besides the local log.
    pub audit: AuditSettings,
    /// Shared redaction settings.
    pub redaction: RedactionSettings,
    /// Terminal section.
    pub terminal: TerminalSettings,
    /// Files section.
    pub files: FilesSettings,
    /// Guard section.
    pub guard: GuardSettings,
    /// Agent hook section.
    pub hook: HookSettings,
    /// HTTP transport section.
    pub http: HttpSettings,
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
    /// What a writer does when the log was renamed, deleted, replaced or truncated under it.
    pub audit_on_replaced: AuditOnReplaced,
    /// The checkpoint signer key, resolved (outside every root, not a symlink).
    pub audit_checkpoint_key: Option<PathBuf>,
    /// A signed checkpoint every this many records.
    pub audit_checkpoint_every: u64,
    /// `[audit.syslog]`, checked (a `unix` path resolved, outside every root).
    pub audit_syslog: Option<SyslogSettings>,
    /// Redaction settings.
    pub redaction: RedactionSettings,
    /// Terminal section (jail_root resolved and canonical when `server == Terminal`).
    pub terminal: TerminalSettings,
    /// Files section (workspace_root and journal resolved when `server == Files`).
    pub files: FilesSettings,
    /// Guard section (paths resolved, every tool's executable checked and resolved when
    /// `server == Guard`; its patterns and examples are checked when the registry is built).
    pub guard: GuardSettings,
    /// Agent hook section (`roots` resolved, canonical and never empty when `server ==
    /// Hook`: `terminal.jail_root` stands in when no root is given).
    pub hook: HookSettings,
    /// HTTP transport section (`tokens_file` resolved, outside every root, not a symlink;
    /// origins and hosts checked).
    pub http: HttpSettings,
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
pub(crate) enum EnvKind {
    /// A string (paths included).
    Str,
    /// A non-negative integer.
    Int,
    /// `true`/`false` (also `1`/`0`, `yes`/`no`).
    Bool,
}

/// Every `SAFE_MCP_*` override: variable, TOML key path, kind. docs/policy.md lists this table
/// (a unit test keeps the two equal).
pub(crate) const ENV_OVERRIDES: &[(&str, &[&str], EnvKind)] = &[
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
        "SAFE_MCP_AUDIT_ON_REPLACED",
        &["audit_on_replaced"],
        EnvKind::Str,
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
pub(crate) const OTHER_ENV: &[&str] = &["SAFE_MCP_POLICY_FILE", "SAFE_MCP_LOG"];

/// Every key the policy file accepts, as a dotted path: `terminal.limits.timeout_seconds` is
/// `timeout_seconds` under `[terminal.limits]`, and `[]` marks an array of tables
/// (`terminal.rules[].command`). Read from the JSON Schema of [`PolicyFile`], whose structs
/// refuse unknown fields, so the list is the one the loader accepts; a table is not listed,
/// its keys are. docs/policy.md documents exactly these (a test keeps the two equal).
pub fn policy_keys() -> Vec<String> {
    let schema = serde_json::Value::from(schemars::schema_for!(PolicyFile));
    let defs = schema.get("$defs").cloned().unwrap_or_default();
    let mut keys = Vec::new();
    collect_keys(&schema, &defs, "", &mut keys);
    keys.sort();
    keys.dedup();
    keys
}

/// Every `SAFE_MCP_*` variable the servers read: each override with the dotted key it sets
/// (the notation of [`policy_keys`]), then the others with `None`.
pub fn environment_variables() -> Vec<(&'static str, Option<String>)> {
    ENV_OVERRIDES
        .iter()
        .map(|(name, path, _)| (*name, Some(path.join("."))))
        .chain(OTHER_ENV.iter().map(|name| (*name, None)))
        .collect()
}

/// The object schemas a property's schema stands for: through `$ref`, `anyOf`/`oneOf`/`allOf`
/// (an `Option` or an untagged enum) and array `items`; the flag says an array was crossed.
fn object_schemas<'a>(
    schema: &'a serde_json::Value,
    defs: &'a serde_json::Value,
    in_array: bool,
    out: &mut Vec<(&'a serde_json::Value, bool)>,
) {
    if let Some(name) = schema
        .get("$ref")
        .and_then(serde_json::Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        if let Some(target) = defs.get(name) {
            object_schemas(target, defs, in_array, out);
        }
        return;
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(combinator)
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            object_schemas(branch, defs, in_array, out);
        }
    }
    if let Some(items) = schema.get("items") {
        object_schemas(items, defs, true, out);
    }
    if schema.get("properties").is_some() {
        out.push((schema, in_array));
    }
}

/// Add the dotted path of every key below `schema` (an object schema) to `keys`.
fn collect_keys(
    schema: &serde_json::Value,
    defs: &serde_json::Value,
    prefix: &str,
    keys: &mut Vec<String>,
) {
    let Some(properties) = schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
    else {
        return;
    };
    for (name, property) in properties {
        let path = format!("{prefix}{name}");
        let mut tables = Vec::new();
        object_schemas(property, defs, false, &mut tables);
        if tables.is_empty() {
            keys.push(path);
            continue;
        }
        for (table, in_array) in tables {
            let below = if in_array {
                format!("{path}[].")
            } else {
                format!("{path}.")
            };
            collect_keys(table, defs, &below, keys);
        }
    }
}

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
    let mut tree: toml::Table = toml::from_str(&text)
        .map_err(|e| invalid(&policy_file, &text, plain(e.message()), e.span()))?;
    apply_env_overrides(&mut tree, env)?;
    let file: PolicyFile = PolicyFile::deserialize(toml::Value::Table(tree)).map_err(|e| {
        // The tree (overrides applied) has no places; the same error read from the file
        // itself has one, unless an override caused it.
        let span = toml::from_str::<PolicyFile>(&text)
            .err()
            .filter(|f| e.message().starts_with(f.message()))
            .and_then(|f| f.span());
        // Display adds the key path (`in `terminal.limits``) the message lacks.
        invalid(&policy_file, &text, plain(&e.to_string()), span)
    })?;
    resolve_and_validate(file, &policy_file, &base, server)
}

/// [`ConfigError::Invalid`] for `message` at byte `span` of the policy's `text`.
fn invalid(
    path: &Path,
    text: &str,
    message: String,
    span: Option<std::ops::Range<usize>>,
) -> ConfigError {
    let Some(start) = span.map(|s| s.start).filter(|s| *s <= text.len()) else {
        return ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
            excerpt: String::new(),
        };
    };
    let before = text.get(..start).unwrap_or_default();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_no = before.matches('\n').count() + 1;
    let column = before.get(line_start..).unwrap_or_default().chars().count() + 1;
    let line = text
        .get(line_start..)
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default();
    let gutter = line_no.to_string().len();
    ConfigError::Invalid {
        path: path.to_path_buf(),
        message: format!("line {line_no}, column {column}: {message}"),
        excerpt: format!(
            "\n  {line_no} | {line}\n  {:gutter$} | {:>column$}",
            "", "^"
        ),
    }
}

/// A parser's message on one line, with serde's type names in plain words (`expected u64`
/// is `expected a whole number`).
fn plain(message: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("expected u64", "expected a whole number (0 or more)"),
        ("expected u32", "expected a whole number (0 or more)"),
        ("expected usize", "expected a whole number (0 or more)"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
        ("expected struct ", "expected a table: "),
    ];
    let mut text = message.split_whitespace().collect::<Vec<_>>().join(" ");
    for (serde, words) in WORDS {
        text = text.replace(serde, words);
    }
    text
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
                message: "unknown SAFE_MCP_ variable (see docs/policy.md for the list)".into(),
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
        insert_path(tree, key_path, parsed).map_err(|e| ConfigError::BadEnv {
            name: name.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// Why an override cannot be written into the policy's tree.
#[derive(Debug, thiserror::Error)]
enum InsertError {
    /// An override with no key (a mistake in [`ENV_OVERRIDES`]).
    #[error("empty key path")]
    EmptyPath,
    /// The file holds a value where the override needs a table (`terminal = 1`).
    #[error("policy key '{0}' is not a table")]
    NotATable(String),
}

fn insert_path(
    tree: &mut toml::Table,
    path: &[&str],
    value: toml::Value,
) -> Result<(), InsertError> {
    let Some((last, parents)) = path.split_last() else {
        return Err(InsertError::EmptyPath);
    };
    let mut table = tree;
    for part in parents {
        let entry = table
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(InsertError::NotATable(part.to_string())),
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

/// The most symlinks one path may pass through: the kernel's own limit (`MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;

/// `path` (absolute) with every symlink resolved, dangling ones included: walked one
/// component at a time as the kernel would when it creates the file, each symlink replaced
/// by its target (a relative target read against the link's folder), as far as the path
/// exists; the rest as written. A `..` goes up from the folder reached, never lexically
/// across a link.
///
/// `canonicalize` stops at a dangling symlink; taking the rest lexically then hides where a
/// dangling `audit_log -> /srv/jail/x` would create the file (inside the jail, where the
/// model reads and empties it).
fn resolve_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut out = PathBuf::from("/");
    // Components still to walk, the next one last.
    let mut pending: Vec<std::ffi::OsString> = Vec::new();
    push_components(&mut pending, path);
    let mut hops = 0usize;
    while let Some(part) = pending.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&part);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                // `a -> b -> a`: bounded, as the kernel bounds it (ELOOP).
                if hops > MAX_SYMLINKS {
                    return Err(std::io::Error::other(format!(
                        "more than {MAX_SYMLINKS} symlinks on the way (a symlink loop?)"
                    )));
                }
                let target = std::fs::read_link(&candidate)?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            Ok(_) => out = candidate,
            // Not there (yet): the rest of the path is taken as written.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                out = candidate
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Put the components of `path` on `pending` so that its first component is popped first
/// (`.` and the root dropped: the caller starts from `/` or the link's folder).
fn push_components(pending: &mut Vec<std::ffi::OsString>, path: &Path) {
    for component in path.components().rev() {
        match component {
            Component::Normal(name) => pending.push(name.to_os_string()),
            Component::ParentDir => pending.push("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
}

/// A state file (audit log, journal): where it really is, every symlink resolved.
struct StatePath {
    key: &'static str,
    /// As given, resolved against the policy's folder.
    given: PathBuf,
    /// Every symlink resolved (see [`resolve_symlinks`]).
    resolved: PathBuf,
    /// The path's last component is itself a symlink (dangling or not).
    link: bool,
}

fn state_path(key: &'static str, base: &Path, raw: &Path) -> Result<StatePath, ConfigError> {
    let given = resolve(base, raw);
    let unresolvable = |e: std::io::Error| ConfigError::Unresolvable {
        key,
        path: given.clone(),
        message: e.to_string(),
    };
    let resolved = resolve_symlinks(&given).map_err(unresolvable)?;
    let link = match (given.parent(), given.file_name()) {
        (Some(parent), Some(name)) => {
            let folder = resolve_symlinks(parent).map_err(unresolvable)?;
            std::fs::symlink_metadata(folder.join(name)).is_ok_and(|m| m.file_type().is_symlink())
        }
        _ => false,
    };
    Ok(StatePath {
        key,
        given,
        resolved,
        link,
    })
}

impl StatePath {
    /// The audit log and the journal are opened by path at every start (and the log at every
    /// rotation): a link could be pointed elsewhere later, even where this check passed.
    fn refuse_link(&self) -> Result<(), ConfigError> {
        if self.link {
            return Err(ConfigError::StateIsSymlink {
                key: self.key,
                path: self.given.clone(),
                target: self.resolved.clone(),
            });
        }
        Ok(())
    }
}

/// What a path the policy names is: a state file the servers write, or a root they act in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathKind {
    State,
    Root,
}

/// Every path the policy names (`audit_log`, `files.journal`, `terminal.jail_root`,
/// `files.workspace_root`, those that are known), resolved, must be distinct and none inside
/// another: checked pair by pair, the first overlap reported naming both keys.
fn distinct_and_not_nested(paths: &[(&'static str, &Path, PathKind)]) -> Result<(), ConfigError> {
    for (i, a) in paths.iter().enumerate() {
        for b in paths.iter().skip(i + 1) {
            // `inner` is equal to or inside `outer`.
            let (inner, outer) = if is_within(b.1, a.1) {
                (a, b)
            } else if is_within(a.1, b.1) {
                (b, a)
            } else {
                continue;
            };
            return Err(overlap(inner, outer));
        }
    }
    Ok(())
}

fn overlap(
    inner: &(&'static str, &Path, PathKind),
    outer: &(&'static str, &Path, PathKind),
) -> ConfigError {
    let same = inner.1 == outer.1;
    let relation = if same {
        "is the same path as"
    } else {
        "lies inside"
    };
    let why = match (inner.2, outer.2) {
        // A state file in a root: the model's commands (or the organiser's moves) reach it.
        (PathKind::State, PathKind::Root) => {
            return ConfigError::StateInsideRoot {
                key: inner.0,
                path: inner.1.to_path_buf(),
                root_key: outer.0,
                root: outer.1.to_path_buf(),
            };
        }
        // `audit_log == journal`: two writers of different formats in one file corrupt
        // each other's records.
        (PathKind::State, PathKind::State) => {
            "each state file needs a path of its own (one file cannot hold both, nor a folder hold the other)"
        }
        // The jail and the workspace overlapping: the terminal's commands would change the
        // files the organiser planned to move (or it would move the jail's files).
        (PathKind::Root, PathKind::Root) => {
            "the terminal's commands could change the organiser's files behind its plans; give each server its own folder, neither inside the other"
        }
        (PathKind::Root, PathKind::State) => {
            "a state file's path is a folder holding a root; put the state files in a folder of their own"
        }
    };
    ConfigError::Overlap {
        key: inner.0,
        path: inner.1.to_path_buf(),
        relation,
        other_key: outer.0,
        other: outer.1.to_path_buf(),
        why,
    }
}

/// `[terminal] path`: a relative entry would find programs wherever a command's folder is.
fn check_command_path(t: &TerminalSettings) -> Result<(), ConfigError> {
    if t.path().split(':').all(|p| Path::new(p).is_absolute()) {
        return Ok(());
    }
    Err(ConfigError::BadValue {
        key: "terminal.path".into(),
        message: "every PATH entry must be an absolute folder".into(),
    })
}

/// The `[hook]` section for `safe-mcp hook` and `check`: the roots (or the terminal's jail)
/// canonical, the audit log and the policy file outside every root (an agent that could
/// write either could forge its record or rewrite its own rules), the protected paths
/// relative and without `..`, the scan floor a severity, the tool names well formed.
fn validate_hook(
    file: &mut PolicyFile,
    policy_file: &Path,
    base: &Path,
    audit_log: &StatePath,
    extra_state: &[(&'static str, &Path, PathKind)],
) -> Result<(), ConfigError> {
    let given: Vec<PathBuf> = if file.hook.roots.is_empty() {
        file.terminal.jail_root.iter().cloned().collect()
    } else {
        file.hook.roots.clone()
    };
    if given.is_empty() {
        return Err(ConfigError::BadValue {
            key: "hook.roots".into(),
            message: "is empty and terminal.jail_root is not set: name the project folders an \
                      agent may work in"
                .into(),
        });
    }
    let mut roots = Vec::with_capacity(given.len());
    for root in &given {
        roots.push(canonical_root("hook.roots", &resolve(base, root))?);
    }
    let mut paths = vec![("audit_log", audit_log.resolved.as_path(), PathKind::State)];
    paths.extend(
        roots
            .iter()
            .map(|r| ("hook.roots", r.as_path(), PathKind::Root)),
    );
    paths.extend(extra_state.iter().copied());
    distinct_and_not_nested(&paths)?;
    audit_log.refuse_link()?;
    let policy_real = policy_file
        .canonicalize()
        .unwrap_or_else(|_| policy_file.to_path_buf());
    if let Some(root) = roots.iter().find(|r| is_within(r, &policy_real)) {
        return Err(ConfigError::StateInsideRoot {
            key: "the policy file",
            path: policy_real,
            root_key: "hook.roots",
            root: root.clone(),
        });
    }
    for entry in &file.hook.protected {
        let path = Path::new(entry);
        let bad = entry.is_empty()
            || path.is_absolute()
            || path
                .components()
                .any(|c| !matches!(c, Component::Normal(_)));
        if bad {
            return Err(ConfigError::BadValue {
                key: "hook.protected".into(),
                message: format!(
                    "'{entry}' must be a relative path of plain names (no '/' at the start, \
                     no '.' or '..')"
                ),
            });
        }
    }
    if let Some(floor) = &file.hook.scan_floor
        && !["LOW", "MEDIUM", "HIGH", "CRITICAL"].contains(&floor.to_ascii_uppercase().as_str())
    {
        return Err(ConfigError::BadValue {
            key: "hook.scan_floor".into(),
            message: format!("'{floor}' is not LOW, MEDIUM, HIGH or CRITICAL"),
        });
    }
    for rule in &file.hook.tools {
        let ok = !rule.name.is_empty()
            && rule.name.len() <= 256
            && rule
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'*'));
        if !ok {
            return Err(ConfigError::BadValue {
                key: "hook.tools[].name".into(),
                message: format!(
                    "'{}' must be 1-256 characters of A-Z, a-z, 0-9, '_', '-', '.' and '*'",
                    rule.name
                ),
            });
        }
    }
    check_command_path(&file.terminal)?;
    file.hook.roots = roots;
    Ok(())
}

/// The other server's root, when it is set and exists (a missing one is that server's own
/// start-up error, not this one's).
fn existing_root(base: &Path, root: Option<&Path>) -> Option<PathBuf> {
    root.and_then(|r| resolve(base, r).canonicalize().ok())
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

/// `[guard]` (the server is the guard): the scan root exists, the window's bounds are at
/// least 1, and every tool entry is well-formed; a bad entry is fatal, naming it.
fn validate_guard(guard: &mut GuardSettings, base: &Path) -> Result<(), ConfigError> {
    if let Some(scan) = guard.scan_root.take() {
        guard.scan_root = Some(canonical_root("guard.scan_root", &resolve(base, &scan))?);
    }
    for (key, value) in [
        ("guard.replay_window_entries", guard.replay_window_entries),
        ("guard.replay_window_seconds", guard.replay_window_seconds),
    ] {
        // Zero would make every window empty: replay on in name only.
        if value == Some(0) {
            return Err(ConfigError::BadValue {
                key: key.into(),
                message: "must be at least 1".into(),
            });
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for (index, tool) in guard.tools.iter_mut().enumerate() {
        let bad = |message: String| ConfigError::BadValue {
            key: format!("guard.tools[{index}] '{}'", tool.name),
            message,
        };
        let name_ok = (1..=64).contains(&tool.name.len())
            && tool
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !name_ok {
            return Err(bad("name must be 1 to 64 of A-Z a-z 0-9 _ . -".into()));
        }
        // A second entry of the same name would let the wider of the two answer for both.
        if !names.insert(tool.name.clone()) {
            return Err(bad("a second entry of this name".into()));
        }
        tool.written_executable = Some(tool.executable.clone());
        tool.executable = checked_executable(&tool.executable).map_err(&bad)?;
        if let Some(cwd) = &tool.cwd {
            check_cwd_pattern(cwd).map_err(&bad)?;
        }
        for name in &tool.env_allow {
            let well_formed = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !well_formed {
                return Err(bad(format!(
                    "env_allow '{name}' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"
                )));
            }
            if let Some(entry) = forbidden_env(name) {
                return Err(bad(format!(
                    "env_allow '{name}' cannot be allowed: {entry} makes programs load code or configuration from where the caller says"
                )));
            }
        }
    }
    Ok(())
}

/// `executable` as it will run: absolute, an existing regular file with an execute bit,
/// every symlink resolved. Relative paths are refused (they would be found through `PATH`
/// or the working folder, which the caller influences).
fn checked_executable(executable: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let shown = executable.display();
    if !executable.is_absolute() {
        return Err(format!("executable '{shown}' must be an absolute path"));
    }
    let meta = std::fs::metadata(executable)
        .map_err(|e| format!("executable '{shown}' cannot be used: {e}"))?;
    if !meta.is_file() {
        return Err(format!("executable '{shown}' is not a regular file"));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(format!("executable '{shown}' is not executable (no x bit)"));
    }
    executable
        .canonicalize()
        .map_err(|e| format!("executable '{shown}' cannot be resolved: {e}"))
}

/// A `cwd` pattern names folders beneath the jail root: relative, no `..`, not empty. The
/// registry compares it with the folder the jail resolved, never with the caller's string.
pub(crate) fn check_cwd_pattern(cwd: &str) -> Result<(), String> {
    let path = Path::new(cwd);
    if cwd.is_empty() || path.is_absolute() {
        return Err(format!(
            "cwd '{cwd}' must be a folder or glob relative to the jail root"
        ));
    }
    // `build/../..` would name the jail's parent.
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(format!("cwd '{cwd}' must not hold '..'"));
    }
    Ok(())
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
    let audit_log = state_path("audit_log", base, &audit_log)?;
    let audit_fail_mode = file.audit_fail_mode.unwrap_or(AuditFailMode::Closed);
    let audit_on_replaced = file.audit_on_replaced.unwrap_or_default();
    let audit_rotate_bytes = file.audit_rotate_bytes.unwrap_or(0);
    // The checkpoint key: a command that could read it could sign a rewritten log.
    let checkpoint_key = file
        .audit_checkpoint_key
        .take()
        .map(|k| state_path("audit_checkpoint_key", base, &k))
        .transpose()?;
    let audit_checkpoint_every = file
        .audit_checkpoint_every
        .unwrap_or(DEFAULT_CHECKPOINT_EVERY);
    if !(1..=MAX_CHECKPOINT_EVERY).contains(&audit_checkpoint_every) {
        return Err(ConfigError::BadValue {
            key: "audit_checkpoint_every".into(),
            message: format!("must be 1 to {MAX_CHECKPOINT_EVERY}"),
        });
    }
    // The callers' token file: a command that could write it could name itself a caller.
    let tokens_file = file
        .http
        .tokens_file
        .take()
        .map(|t| state_path("http.tokens_file", base, &t))
        .transpose()?;
    check_http(&file.http)?;
    let mut audit_syslog = file.audit.syslog.take();
    let syslog_socket = match &mut audit_syslog {
        Some(syslog) => {
            let bad = |message: String| ConfigError::BadValue {
                key: "audit.syslog".into(),
                message,
            };
            syslog_facility(&syslog.facility).map_err(bad)?;
            match syslog.transport {
                SyslogTransport::Udp | SyslogTransport::Tcp => {
                    syslog_address(&syslog.address).map_err(bad)?;
                    None
                }
                // A socket inside a root could be one a command bound, reading (or
                // dropping) every record.
                SyslogTransport::Unix => {
                    let socket =
                        state_path("audit.syslog.address", base, Path::new(&syslog.address))?;
                    syslog.address = socket.resolved.to_string_lossy().into_owned();
                    Some(socket)
                }
            }
        }
        None => None,
    };
    // State paths besides the log and the journal: the checkpoint key, the syslog socket.
    let extra_state: Vec<(&'static str, &Path, PathKind)> = checkpoint_key
        .iter()
        .map(|k| {
            (
                "audit_checkpoint_key",
                k.resolved.as_path(),
                PathKind::State,
            )
        })
        .chain(syslog_socket.iter().map(|s| {
            (
                "audit.syslog.address",
                s.resolved.as_path(),
                PathKind::State,
            )
        }))
        .chain(
            (tokens_file.iter())
                .map(|t| ("http.tokens_file", t.resolved.as_path(), PathKind::State)),
        )
        .collect();
    if audit_rotate_bytes != 0 && audit_rotate_bytes < MIN_ROTATE_BYTES {
        return Err(ConfigError::BadValue {
            key: "audit_rotate_bytes".into(),
            message: format!("must be 0 (never rotate) or at least {}", MIN_ROTATE_BYTES),
        });
    }

    match server {
        Server::Terminal | Server::Guard => {
            let t = &mut file.terminal;
            let jail = t.jail_root.take().ok_or(ConfigError::Missing {
                key: "terminal.jail_root",
                env: "SAFE_MCP_JAIL_ROOT",
            })?;
            let jail = canonical_root("terminal.jail_root", &resolve(base, &jail))?;
            // One policy file may configure both servers: the organiser's journal and
            // workspace must not be where this server's commands can write either.
            let journal = (file.files.journal.as_deref())
                .map(|j| state_path("files.journal", base, j))
                .transpose()?;
            let workspace = existing_root(base, file.files.workspace_root.as_deref());
            let mut paths = vec![("audit_log", audit_log.resolved.as_path(), PathKind::State)];
            paths.extend(
                (journal.as_ref())
                    .map(|j| ("files.journal", j.resolved.as_path(), PathKind::State)),
            );
            paths.push(("terminal.jail_root", &jail, PathKind::Root));
            paths.extend(
                (workspace.as_deref()).map(|w| ("files.workspace_root", w, PathKind::Root)),
            );
            // The guard's replay window: a command that could rewrite it could make a
            // replay look new.
            let replay_state = (server == Server::Guard)
                .then_some(file.guard.replay_state.as_deref())
                .flatten()
                .map(|r| state_path("guard.replay_state", base, r))
                .transpose()?;
            paths.extend(
                (replay_state.as_ref())
                    .map(|r| ("guard.replay_state", r.resolved.as_path(), PathKind::State)),
            );
            paths.extend(extra_state.iter().copied());
            distinct_and_not_nested(&paths)?;
            audit_log.refuse_link()?;
            journal.as_ref().map(StatePath::refuse_link).transpose()?;
            replay_state
                .as_ref()
                .map(StatePath::refuse_link)
                .transpose()?;
            if server == Server::Guard {
                file.guard.replay_state = replay_state.map(|r| r.resolved);
                validate_guard(&mut file.guard, base)?;
            }
            let t = &mut file.terminal;
            t.jail_root = Some(jail);
            t.sandbox.read_paths = t
                .sandbox
                .read_paths
                .iter()
                .map(|p| resolve(base, p))
                .collect();
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
            check_command_path(t)?;
        }
        Server::Hook => validate_hook(&mut file, policy_file, base, &audit_log, &extra_state)?,
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
            let journal = state_path("files.journal", base, &journal)?;
            // The terminal server of the same policy runs commands in its jail: neither the
            // journal nor the workspace may be there (a missing jail is the terminal server's
            // own start-up error).
            let jail = existing_root(base, file.terminal.jail_root.as_deref());
            let mut paths = vec![
                ("audit_log", audit_log.resolved.as_path(), PathKind::State),
                ("files.journal", journal.resolved.as_path(), PathKind::State),
                ("files.workspace_root", ws.as_path(), PathKind::Root),
            ];
            paths.extend(
                jail.as_deref()
                    .map(|j| ("terminal.jail_root", j, PathKind::Root)),
            );
            paths.extend(extra_state.iter().copied());
            distinct_and_not_nested(&paths)?;
            audit_log.refuse_link()?;
            journal.refuse_link()?;
            let f = &mut file.files;
            f.workspace_root = Some(ws);
            f.journal = Some(journal.resolved);
        }
    }

    checkpoint_key
        .as_ref()
        .map(StatePath::refuse_link)
        .transpose()?;
    tokens_file
        .as_ref()
        .map(StatePath::refuse_link)
        .transpose()?;
    let mut http = file.http;
    http.tokens_file = tokens_file.map(|t| t.resolved);
    Ok(Config {
        policy_file: policy_file.to_path_buf(),
        server,
        audit_log: audit_log.resolved,
        audit_fail_mode,
        audit_rotate_bytes,
        audit_on_replaced,
        audit_checkpoint_key: checkpoint_key.map(|k| k.resolved),
        audit_checkpoint_every,
        audit_syslog,
        redaction: file.redaction,
        terminal: file.terminal,
        files: file.files,
        guard: file.guard,
        hook: file.hook,
        http,
    })
}

/// `[http]`'s values: bounds, and origins and hosts in the forms the server compares.
fn check_http(http: &HttpSettings) -> Result<(), ConfigError> {
    let bad = |key: &str, message: String| ConfigError::BadValue {
        key: format!("http.{key}"),
        message,
    };
    if !(1024..=MAX_HTTP_MAX_BODY_BYTES).contains(&http.max_body_bytes) {
        return Err(bad(
            "max_body_bytes",
            format!("must be 1024 to {MAX_HTTP_MAX_BODY_BYTES}"),
        ));
    }
    if http.max_concurrent_per_caller == 0 {
        return Err(bad(
            "max_concurrent_per_caller",
            "must be at least 1 (0 would answer every call BUSY)".into(),
        ));
    }
    for origin in &http.allowed_origins {
        parse_origin(origin, true).map_err(|m| bad("allowed_origins", m))?;
    }
    for host in &http.allowed_hosts {
        let ok = !host.is_empty()
            && host.len() <= 253
            && (host.chars())
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
        if !ok {
            return Err(bad(
                "allowed_hosts",
                format!("'{host}' is not a host name, an IP address or host:port"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_symlink_is_resolved_dangling_relative_and_before_dotdot() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("jail/sub")).unwrap();
        std::fs::create_dir_all(root.join("state")).unwrap();
        // `..` after a link goes up from where the link leads, not lexically.
        std::os::unix::fs::symlink("../jail/sub", root.join("state/l")).unwrap();
        assert_eq!(
            resolve_symlinks(&root.join("state/l/../x.jsonl")).unwrap(),
            root.join("jail/x.jsonl")
        );
        // A dangling link, through a relative one, to a file not made yet.
        std::os::unix::fs::symlink("hop", root.join("state/audit.jsonl")).unwrap();
        std::os::unix::fs::symlink(root.join("jail/new.jsonl"), root.join("state/hop")).unwrap();
        assert_eq!(
            resolve_symlinks(&root.join("state/audit.jsonl")).unwrap(),
            root.join("jail/new.jsonl")
        );
        // A loop is an error, not a hang.
        std::os::unix::fs::symlink("b", root.join("state/a")).unwrap();
        std::os::unix::fs::symlink("a", root.join("state/b")).unwrap();
        assert!(resolve_symlinks(&root.join("state/a")).is_err());
        // What does not exist is taken as written.
        assert_eq!(
            resolve_symlinks(&root.join("state/none/./y")).unwrap(),
            root.join("state/none/y")
        );
    }

    #[test]
    fn an_unknown_profile_is_refused_naming_the_allowed_ones() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("policy.toml");
        for (body, key) in [
            (
                "[terminal.sandbox]\nprofile = 'lenient'\n",
                "terminal.sandbox.profile",
            ),
            (
                "[[terminal.rules]]\ncommand = 'ls'\nprofile = 'lenient'\n",
                "terminal.rules.profile",
            ),
        ] {
            std::fs::write(&policy, body).unwrap();
            let e = load(&policy, Server::Terminal, &[]).unwrap_err();
            let message = e.to_string();
            assert!(matches!(e, ConfigError::Invalid { .. }), "{e:?}");
            assert!(
                message.contains(
                    "unknown variant `lenient`, expected one of `strict`, `standard`, `permissive`"
                ),
                "{message}"
            );
            assert!(message.contains(key), "{message}");
        }
        // From the environment too, named by the variable's key.
        std::fs::write(&policy, "").unwrap();
        let env = [(
            "SAFE_MCP_SANDBOX_PROFILE".to_string(),
            "lenient".to_string(),
        )];
        let e = load(&policy, Server::Terminal, &env)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected one of `strict`, `standard`, `permissive`"),
            "{e}"
        );
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
                EnvKind::Str if *name == "SAFE_MCP_AUDIT_ON_REPLACED" => "reopen",
                EnvKind::Str if *name == "SAFE_MCP_SANDBOX_PROFILE" => "strict",
                EnvKind::Str => "x",
                EnvKind::Int => "5",
                EnvKind::Bool => "true",
            };
            apply_env_overrides(&mut tree, &[(name.to_string(), value.to_string())]).unwrap();
            let parsed = PolicyFile::deserialize(toml::Value::Table(tree));
            assert!(parsed.is_ok(), "{name} -> {path:?}: {parsed:?}");
        }
    }

    /// A folder with a jail, a state folder and a policy for the guard holding `guard`.
    fn guard_policy(guard: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("jail/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(
            &policy,
            format!("audit_log = 'state/audit.jsonl'\n[terminal]\njail_root = 'jail'\n{guard}"),
        )
        .unwrap();
        (dir, policy)
    }

    fn guard_error(guard: &str) -> String {
        let (_dir, policy) = guard_policy(guard);
        load(&policy, Server::Guard, &[]).unwrap_err().to_string()
    }

    #[test]
    fn a_guard_policy_loads_with_each_executable_resolved_and_defaults_set() {
        let (dir, policy) = guard_policy(
            "[guard]\nreplay = 'block'\nreplay_state = 'state/replay.json'\nscan_root = 'jail/src'\n\
             [[guard.tools]]\nname = 'sh'\nexecutable = '/bin/sh'\nargs_patterns = ['-c']\n\
             cwd = 'src/**'\nprofile = 'strict'\nenv_allow = ['COLUMNS', 'LC_ALL']\n\
             examples_allow = [['-c']]\nexamples_deny = [['-x']]\n",
        );
        let config = load(&policy, Server::Guard, &[]).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let guard = &config.guard;
        assert_eq!(guard.replay, ReplayMode::Block);
        assert_eq!(guard.replay_state, Some(root.join("state/replay.json")));
        assert_eq!(guard.scan_root, Some(root.join("jail/src")));
        assert_eq!(guard.replay_window_entries(), DEFAULT_REPLAY_WINDOW_ENTRIES);
        assert_eq!(
            guard.replay_window_age().as_secs(),
            DEFAULT_REPLAY_WINDOW_SECONDS
        );
        let tool = guard.tools.first().unwrap();
        assert_eq!(
            tool.executable,
            Path::new("/bin/sh").canonicalize().unwrap()
        );
        assert_eq!(tool.profile, Some(Profile::Strict));
        assert_eq!(tool.examples_allow, [["-c"]]);
        // The terminal reads no [guard]: its tools are not checked there.
        let (_d, policy) = guard_policy("[[guard.tools]]\nname = 'x'\nexecutable = 'rel'\n");
        assert!(load(&policy, Server::Terminal, &[]).is_ok());
        assert!(load(&policy, Server::Guard, &[]).is_err());
    }

    #[test]
    fn a_guard_executable_must_be_an_absolute_existing_executable_file() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("not-executable");
        std::fs::write(&plain, "#!/bin/sh\n").unwrap();
        let missing = dir.path().join("missing");
        for (executable, problem) in [
            ("ls".to_string(), "must be an absolute path"),
            ("./bin/ls".to_string(), "must be an absolute path"),
            (plain.display().to_string(), "is not executable"),
            (missing.display().to_string(), "cannot be used"),
            ("/tmp".to_string(), "is not a regular file"),
        ] {
            let e = guard_error(&format!(
                "[[guard.tools]]\nname = 'ok'\nexecutable = '/bin/ls'\n\
                 [[guard.tools]]\nname = 'bad-one'\nexecutable = '{executable}'\n"
            ));
            assert!(e.starts_with("guard.tools[1] 'bad-one': "), "{e}");
            assert!(e.contains(problem), "{executable}: {e}");
        }
        // Executable once its bit is set.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (_d, policy) = guard_policy(&format!(
            "[[guard.tools]]\nname = 'script'\nexecutable = '{}'\n",
            plain.display()
        ));
        load(&policy, Server::Guard, &[]).unwrap();
    }

    #[test]
    fn env_allow_refuses_loader_and_configuration_variables_naming_the_entry() {
        for name in [
            "PATH",
            "LD_PRELOAD",
            "ld_library_path",
            "GIT_SSH_COMMAND",
            "GIT_CONFIG_GLOBAL",
            "BASH_ENV",
            "ENV",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
            "GLIBC_TUNABLES",
            "SAFE_MCP_POLICY_FILE",
        ] {
            let e = guard_error(&format!(
                "[[guard.tools]]\nname = 'ls'\nexecutable = '/bin/ls'\nenv_allow = ['COLUMNS', '{name}']\n"
            ));
            assert!(e.starts_with("guard.tools[0] 'ls': env_allow"), "{e}");
            assert!(e.contains("cannot be allowed"), "{name}: {e}");
        }
        for name in ["", "1X", "A-B", "A=B"] {
            let e = guard_error(&format!(
                "[[guard.tools]]\nname = 'ls'\nexecutable = '/bin/ls'\nenv_allow = ['{name}']\n"
            ));
            assert!(e.contains("is not a variable name"), "{name}: {e}");
        }
        assert_eq!(forbidden_env("LD_AUDIT"), Some("LD_*"));
        assert_eq!(forbidden_env("COLUMNS"), None);
        assert_eq!(forbidden_env("ENVIRONMENT"), None);
    }

    #[test]
    fn bad_guard_entries_and_values_are_fatal_naming_the_key() {
        let ls = "executable = '/bin/ls'\n";
        for (guard, wanted) in [
            (
                format!("[[guard.tools]]\nname = 'a b'\n{ls}"),
                "guard.tools[0] 'a b': name must be",
            ),
            (format!("[[guard.tools]]\nname = ''\n{ls}"), "name must be"),
            (
                format!("[[guard.tools]]\nname = 'ls'\n{ls}[[guard.tools]]\nname = 'ls'\n{ls}"),
                "guard.tools[1] 'ls': a second entry",
            ),
            (
                format!("[[guard.tools]]\nname = 'ls'\n{ls}cwd = '/etc'\n"),
                "relative to the jail root",
            ),
            (
                format!("[[guard.tools]]\nname = 'ls'\n{ls}cwd = 'src/../..'\n"),
                "must not hold '..'",
            ),
            (
                format!("[[guard.tools]]\nname = 'ls'\n{ls}shell = true\n"),
                "unknown field `shell`",
            ),
            (
                "[[guard.tools]]\nname = 'ls'\n".to_string(),
                "missing field `executable`",
            ),
            (
                "[guard]\nreplay = 'maybe'\n".to_string(),
                "expected one of `flag`, `block`, `off`",
            ),
            (
                "[guard]\nreplay_window_entries = 0\n".to_string(),
                "guard.replay_window_entries: must be at least 1",
            ),
            (
                "[guard]\nreplay_window_seconds = 0\n".to_string(),
                "guard.replay_window_seconds: must be at least 1",
            ),
            (
                "[guard]\nscan_root = 'nowhere'\n".to_string(),
                "guard.scan_root",
            ),
            // Inside the jail, a command could rewrite the window and make a replay look new.
            (
                "[guard]\nreplay_state = 'jail/replay.json'\n".to_string(),
                "guard.replay_state",
            ),
            (
                "[guard]\nreplay_state = 'state/audit.jsonl'\n".to_string(),
                "is the same path as",
            ),
        ] {
            let e = guard_error(&guard);
            assert!(e.contains(wanted), "{guard}: {e}");
        }
    }
}
