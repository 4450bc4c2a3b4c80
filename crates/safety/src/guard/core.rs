//! The guard server's safety core: everything its eight tools decide.
//!
//! The guard runs nothing of its own. A call of `guard_exec` or `guard_spawn` is judged by
//! the [`Registry`] (a named entry with a pinned executable and argument patterns), its
//! folder and path-like arguments are contained by the terminal's [`Jail`](crate::jail::Jail),
//! its environment is the terminal's scrubbed one plus only the caller variables the entry
//! lists, its limits are the entry's profile tightened by the caller, its canonical hash is
//! looked up in the [`ReplayWindow`], and then it runs through the terminal's own flow
//! ([`TerminalCore`]): the fail-closed intent record, the kernel sandbox, the whole-tree
//! kill, redaction then truncation, the outcome record.
//!
//! The wiring crate (`crates/guard`) hands each tool's raw JSON arguments to a method here
//! and returns the envelope it gets back; it decides nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::audit::{self, AUDIT_REPORT, AUDIT_SOURCE};
use super::canon::{CanonicalCommand, CanonicalHash};
use super::registry::{Allowed, Refusal, Registry, RegistryError};
use super::replay::{ReplayLimits, ReplayStateError, ReplayWindow};
use super::tier::{TrustTier, trust_tier};
use crate::config::{Config, ReplayMode, forbidden_env};
use crate::exec::cgroup::LimitHits;
use crate::exec::profile::clamp_cpu;
use crate::exec::{ExecLimits, Profile, SandboxReport};
use crate::jail::{ContainedDir, JailError};
use crate::protocol::{self, ArgKind, ArgSpec, MAX_PATH_ARG_BYTES, quote};
use crate::recorder::{Call, Durability};
use crate::result::{self, Envelope, ResultCode};
use crate::terminal::{CallError, Job, Ran, StartError, TerminalCore};

/// Runs a registered tool's program and returns its output.
pub const GUARD_EXEC: &str = "guard_exec";
/// Runs a registered tool's program and returns the SHA-256 of its output.
pub const GUARD_SPAWN: &str = "guard_spawn";
/// Adds a run-time entry that narrows an operator entry.
pub const REGISTER_ALLOWLIST: &str = "register_allowlist";
/// Looks a command's canonical hash up in the replay window.
pub const REPLAY_CHECK: &str = "replay_check";
/// The profile, limits and mechanisms a tool runs under.
pub const SANDBOX_STATUS: &str = "sandbox_status";
/// How far a tool can be trusted.
pub const TRUST_TIER: &str = "trust_tier";

/// The eight tools, in the order they are listed.
pub const TOOLS: [&str; 8] = [
    GUARD_EXEC,
    GUARD_SPAWN,
    REGISTER_ALLOWLIST,
    AUDIT_SOURCE,
    AUDIT_REPORT,
    REPLAY_CHECK,
    SANDBOX_STATUS,
    TRUST_TIER,
];

/// Most arguments one call may pass.
pub const MAX_ARGS: usize = 1024;
/// Most bytes of one argument.
pub const MAX_ARG_BYTES: usize = 16 * 1024;
/// Most bytes of all arguments of one call together.
pub const MAX_ARGS_TOTAL_BYTES: usize = 256 * 1024;
/// Most variables a caller's `env` may hold.
pub const MAX_ENV_VARS: usize = 64;
/// Most bytes of one `env` value.
pub const MAX_ENV_VALUE_BYTES: usize = 16 * 1024;
/// Most bytes of one `argsPatterns` entry.
pub const MAX_PATTERN_BYTES: usize = 4096;

/// The guard could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardStartError {
    /// The terminal part (jail, sandbox, audit log, redaction) could not start.
    #[error(transparent)]
    Terminal(#[from] StartError),
    /// A `[[guard.tools]]` entry is bad.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The replay state file exists but cannot be read.
    #[error(transparent)]
    Replay(#[from] ReplayStateError),
}

/// The guard's safety core.
#[derive(Debug)]
pub struct GuardCore {
    terminal: TerminalCore,
    registry: Registry,
    replay: Arc<ReplayWindow>,
    replay_state: Option<PathBuf>,
    scan_root: Option<PathBuf>,
}

/// Why a guarded call did not run (or could not start).
enum Stopped {
    /// The guard's own rules, or the registry, refused it.
    Refused(Refusal),
    /// The terminal's flow refused or failed it (busy, audit, sandbox, start).
    Call(CallError),
}

impl From<Refusal> for Stopped {
    fn from(r: Refusal) -> Self {
        Stopped::Refused(r)
    }
}

impl From<CallError> for Stopped {
    fn from(e: CallError) -> Self {
        Stopped::Call(e)
    }
}

fn invalid(reason: String) -> Refusal {
    Refusal {
        code: ResultCode::InvalidRequest,
        reason,
    }
}

fn denied(reason: String) -> Refusal {
    Refusal {
        code: ResultCode::PolicyDenied,
        reason,
    }
}

fn jail_refusal(e: JailError) -> Refusal {
    let code = match e {
        JailError::Escape { .. } | JailError::ArgEscape { .. } => ResultCode::PathEscape,
        JailError::Invalid { .. } => ResultCode::InvalidRequest,
        JailError::Root { .. } => ResultCode::InternalError,
    };
    Refusal {
        code,
        reason: e.to_string(),
    }
}

/// Which of the two running tools a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    Exec,
    Spawn,
}

impl Runner {
    fn tool(self) -> &'static str {
        match self {
            Runner::Exec => GUARD_EXEC,
            Runner::Spawn => GUARD_SPAWN,
        }
    }
    /// The name of the argument that names the program.
    fn program_arg(self) -> &'static str {
        match self {
            Runner::Exec => "command",
            Runner::Spawn => "file",
        }
    }
}

/// The arguments of `guard_exec` / `guard_spawn`, read and bounded.
#[derive(Debug, Clone, Default)]
struct RunArgs {
    tool_name: String,
    program: String,
    args: Vec<String>,
    cwd: Option<String>,
    env: BTreeMap<String, String>,
    timeout_ms: Option<u64>,
    block_on_replay: bool,
    fd_budget: Option<u64>,
    shell: bool,
}

const TOOL_NAME: ArgSpec = ArgSpec {
    name: "toolName",
    required: true,
    kind: ArgKind::String,
    must_be: "a string: the name of a registered tool",
};
const ARGS: ArgSpec = ArgSpec {
    name: "args",
    required: true,
    kind: ArgKind::Array,
    must_be: "an array of strings: the arguments after the program, one element each",
};
const CWD: ArgSpec = ArgSpec {
    name: "cwd",
    required: false,
    kind: ArgKind::String,
    must_be: "a string: the working folder, relative to the jail",
};
const ENV: ArgSpec = ArgSpec {
    name: "env",
    required: false,
    kind: ArgKind::Object,
    must_be: "an object of string values: variables the tool's env_allow lists",
};

const EXEC_ARGUMENTS: &[ArgSpec] = &[
    TOOL_NAME,
    ArgSpec {
        name: "command",
        required: true,
        kind: ArgKind::String,
        must_be: "a string: the tool's executable (its absolute path, or its file name)",
    },
    ARGS,
    CWD,
    ENV,
    ArgSpec {
        name: "timeoutMs",
        required: false,
        kind: ArgKind::Number,
        must_be: "a whole number of milliseconds, at least 1",
    },
    ArgSpec {
        name: "blockOnReplay",
        required: false,
        kind: ArgKind::Bool,
        must_be: "a boolean: refuse the call when it is a replay",
    },
];

const SPAWN_ARGUMENTS: &[ArgSpec] = &[
    TOOL_NAME,
    ArgSpec {
        name: "file",
        required: true,
        kind: ArgKind::String,
        must_be: "a string: the tool's executable (its absolute path, or its file name)",
    },
    ARGS,
    CWD,
    ENV,
    ArgSpec {
        name: "fdBudget",
        required: false,
        kind: ArgKind::Number,
        must_be: "a whole number of open descriptors, at least 1",
    },
    ArgSpec {
        name: "shell",
        required: false,
        kind: ArgKind::Bool,
        must_be: "a boolean (only false: no shell ever runs)",
    },
];

const REGISTER_ARGUMENTS: &[ArgSpec] = &[
    TOOL_NAME,
    ArgSpec {
        name: "executable",
        required: true,
        kind: ArgKind::String,
        must_be: "a string: the absolute path of an operator entry's executable",
    },
    ArgSpec {
        name: "argsPatterns",
        required: true,
        kind: ArgKind::Array,
        must_be: "an array of strings: regexes every argument must fully match one of",
    },
    ArgSpec {
        name: "cwdPattern",
        required: false,
        kind: ArgKind::String,
        must_be: "a string: a folder or glob relative to the jail",
    },
    ArgSpec {
        name: "sandboxProfile",
        required: false,
        kind: ArgKind::String,
        must_be: "one of \"strict\", \"standard\", \"permissive\"",
    },
];

const REPLAY_ARGUMENTS: &[ArgSpec] = &[
    ArgSpec {
        name: "executable",
        required: true,
        kind: ArgKind::String,
        must_be: "a string: the absolute path of the program",
    },
    ARGS,
    CWD,
    ENV,
    ArgSpec {
        name: "record",
        required: false,
        kind: ArgKind::Bool,
        must_be: "a boolean: also record the hash in the window",
    },
];

const STATUS_ARGUMENTS: &[ArgSpec] = &[ArgSpec {
    name: "toolName",
    required: false,
    kind: ArgKind::String,
    must_be: "a string: the name of a registered tool",
}];

const TIER_ARGUMENTS: &[ArgSpec] = &[TOOL_NAME];

/// The bound of each string argument of the guard's tools; an audit record keeps a value
/// within it whole and only the size of a longer one.
const ARGUMENT_BOUNDS: &[(&str, usize)] = &[
    ("toolName", 64),
    ("command", MAX_PATH_ARG_BYTES),
    ("file", MAX_PATH_ARG_BYTES),
    ("executable", MAX_PATH_ARG_BYTES),
    ("cwd", MAX_PATH_ARG_BYTES),
    ("cwdPattern", MAX_PATH_ARG_BYTES),
];

/// A string argument, bounded.
fn string_arg<'a>(
    args: &'a Map<String, Value>,
    name: &str,
    max: usize,
) -> Result<Option<&'a str>, Refusal> {
    match args.get(name) {
        Some(Value::String(s)) => {
            protocol::check_len(name, s, max).map_err(|e| invalid(e.to_string()))?;
            Ok(Some(s))
        }
        _ => Ok(None),
    }
}

/// A whole number argument of at least 1.
fn positive_arg(args: &Map<String, Value>, name: &str, what: &str) -> Result<Option<u64>, Refusal> {
    match args.get(name) {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if v >= 1 => Ok(Some(v)),
            _ => Err(invalid(format!(
                "'{name}' must be a whole number of {what}, at least 1; got {n}"
            ))),
        },
        _ => Ok(None),
    }
}

fn bool_arg(args: &Map<String, Value>, name: &str) -> bool {
    matches!(args.get(name), Some(Value::Bool(true)))
}

/// `args`: an array of strings, bounded in count, per item and in all.
fn string_list(
    args: &Map<String, Value>,
    name: &str,
    max_items: usize,
    max_item_bytes: usize,
) -> Result<Vec<String>, Refusal> {
    let Some(Value::Array(items)) = args.get(name) else {
        return Ok(Vec::new());
    };
    if items.len() > max_items {
        return Err(invalid(format!(
            "'{name}' has {} items; the limit is {max_items}",
            items.len()
        )));
    }
    let mut out = Vec::with_capacity(items.len());
    let mut total = 0usize;
    for (i, item) in items.iter().enumerate() {
        let Value::String(s) = item else {
            return Err(invalid(format!(
                "'{name}[{i}]' must be a string; got {}",
                protocol::json_type(item)
            )));
        };
        protocol::check_len(&format!("{name}[{i}]"), s, max_item_bytes)
            .map_err(|e| invalid(e.to_string()))?;
        total = total.saturating_add(s.len());
        if total > MAX_ARGS_TOTAL_BYTES {
            return Err(invalid(format!(
                "'{name}' holds more than {MAX_ARGS_TOTAL_BYTES} bytes in all"
            )));
        }
        if s.contains('\0') {
            return Err(invalid(format!(
                "'{name}[{i}]' holds a NUL byte, which no argument can carry"
            )));
        }
        out.push(s.clone());
    }
    Ok(out)
}

/// Whether `name` is a well-formed environment variable name.
fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    (1..=128).contains(&name.len())
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `env`: an object of string values with well-formed names, bounded.
fn env_arg(args: &Map<String, Value>) -> Result<BTreeMap<String, String>, Refusal> {
    let Some(Value::Object(vars)) = args.get("env") else {
        return Ok(BTreeMap::new());
    };
    if vars.len() > MAX_ENV_VARS {
        return Err(invalid(format!(
            "'env' has {} variables; the limit is {MAX_ENV_VARS}",
            vars.len()
        )));
    }
    let mut out = BTreeMap::new();
    for (name, value) in vars {
        if !valid_env_name(name) {
            return Err(invalid(format!(
                "'env' name '{}' is not a variable name (letters, digits and _, not starting \
                 with a digit, at most 128)",
                quote(name)
            )));
        }
        let Value::String(v) = value else {
            return Err(invalid(format!(
                "'env.{name}' must be a string; got {}",
                protocol::json_type(value)
            )));
        };
        protocol::check_len(&format!("env.{name}"), v, MAX_ENV_VALUE_BYTES)
            .map_err(|e| invalid(e.to_string()))?;
        if v.contains('\0') {
            return Err(invalid(format!("'env.{name}' holds a NUL byte")));
        }
        out.insert(name.clone(), v.clone());
    }
    Ok(out)
}

impl RunArgs {
    fn from_json(runner: Runner, args: Option<&Map<String, Value>>) -> Result<Self, Refusal> {
        let tool = runner.tool();
        let specs = match runner {
            Runner::Exec => EXEC_ARGUMENTS,
            Runner::Spawn => SPAWN_ARGUMENTS,
        };
        protocol::check_shape(tool, args, specs).map_err(|e| invalid(e.to_string()))?;
        let empty = Map::new();
        let args = args.unwrap_or(&empty);
        let program = string_arg(args, runner.program_arg(), MAX_PATH_ARG_BYTES)?
            .unwrap_or_default()
            .to_string();
        Ok(RunArgs {
            tool_name: string_arg(args, "toolName", 64)?
                .unwrap_or_default()
                .to_string(),
            program,
            args: string_list(args, "args", MAX_ARGS, MAX_ARG_BYTES)?,
            cwd: string_arg(args, "cwd", MAX_PATH_ARG_BYTES)?.map(str::to_string),
            env: env_arg(args)?,
            timeout_ms: positive_arg(args, "timeoutMs", "milliseconds")?,
            block_on_replay: bool_arg(args, "blockOnReplay"),
            fd_budget: positive_arg(args, "fdBudget", "open descriptors")?,
            shell: bool_arg(args, "shell"),
        })
    }
}

/// Whitespace shellguard refuses in a program name (`\s` of JavaScript): a program name
/// with a space in it is a shell command line, not a path.
fn has_whitespace(s: &str) -> bool {
    s.chars().any(|c| c.is_whitespace() || c == '\u{feff}')
}

/// Whether `given` (the caller's `command`/`file`) names the entry's pinned executable: its
/// absolute path (any spelling that resolves to the same file) or its file name.
fn check_program(arg: &str, given: &str, allowed: &Allowed) -> Result<(), Refusal> {
    let pinned = &allowed.executable;
    let mismatch = || {
        denied(format!(
            "executable mismatch: tool '{}' runs '{}', and '{arg}' names '{}'; pass that path \
             (or its file name) in '{arg}' and every argument in 'args'",
            allowed.tool,
            pinned.display(),
            quote(given)
        ))
    };
    if given.is_empty() {
        return Err(invalid(format!(
            "'{arg}' is empty: name the tool's executable"
        )));
    }
    if has_whitespace(given) {
        return Err(denied(format!(
            "'{arg}' must be a single executable path, not a shell string: '{}' holds \
             whitespace; put the program in '{arg}' and each argument in 'args'",
            quote(given)
        )));
    }
    let path = Path::new(given);
    if !given.contains('/') {
        return if allowed.file_names.iter().any(|n| n == given) {
            Ok(())
        } else {
            Err(mismatch())
        };
    }
    if !path.is_absolute() {
        return Err(mismatch());
    }
    match path.canonicalize() {
        Ok(real) if &real == pinned => Ok(()),
        _ => Err(mismatch()),
    }
}

/// Milliseconds since the Unix epoch, `age` ago.
fn unix_ms_ago(age: Duration) -> u64 {
    let at = SystemTime::now()
        .checked_sub(age)
        .unwrap_or(UNIX_EPOCH)
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(at.as_millis()).unwrap_or(u64::MAX)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `detail` of `guard_exec`: shellguard's result names (`stdout`, `stderr`, `exitCode`,
/// `durationMs`, `trustTier`, `canonicalHash`, `isReplay`, `signal`) and ours. A call
/// refused before anything ran has none of the run's fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GuardExecDetail {
    /// Standard output, terminal escapes stripped, redacted, then cut to the cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error, treated as `stdout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The exit status, present when the command ran: `null` when a signal ended it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<Option<i32>>,
    /// The signal that ended the command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// How long the command ran, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The tool's trust tier at this call (see `trust_tier`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust_tier: Option<TrustTier>,
    /// SHA-256 of the canonical form of what ran (or would have): executable, arguments,
    /// folder, environment, each NFKC-normalised with invisible code points removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical_hash: Option<String>,
    /// The same canonical hash was in the replay window (`[guard] replay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_replay: Option<bool>,
    /// When the same command was last recorded (Unix milliseconds), for a replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen_at_ms: Option<u64>,
    /// The effective time limit of the call, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The sandbox profile the command ran under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// The program that ran, every symlink resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// The operator entry whose rules the call passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_entry: Option<String>,
    /// The server killed the command's process tree (timeout, cancel, endless output).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub killed: bool,
    /// An output was cut; the two counts below say by how much.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Bytes of stdout left out (with `truncated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_truncated_bytes: Option<u64>,
    /// Bytes of stderr left out (with `truncated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_truncated_bytes: Option<u64>,
    /// The output pipes were still held open by a process that outlived the command.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub output_incomplete: bool,
    /// What confined the command, in one line (as run_command's `detail.sandbox`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// How often a limit stopped something (present only when one did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_hits: Option<LimitHits>,
    /// The whole sandbox report, present when something was downgraded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub sandbox_report: Option<Value>,
    /// Present when the replay window could not be saved to `[guard] replay_state` (a
    /// restart would forget this call); the text says why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_state: Option<String>,
    /// The whole sandbox report, for the outcome record only.
    #[serde(skip)]
    #[schemars(skip)]
    pub recorded_sandbox: Option<Value>,
}

/// `detail` of `guard_spawn`: shellguard's result names (`pid`, `stdoutHash`, `stderrHash`,
/// `exitCode`, `signal`, `durationMs`, `trustTier`, `canonicalHash`, `isReplay`,
/// `fdBudget`) and ours. No output text: the SHA-256 of each stream's raw bytes instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GuardSpawnDetail {
    /// The host pid of the process the server started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// SHA-256 (hex) of every byte the command wrote to stdout (up to where it was stopped
    /// for endless output), before redaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_hash: Option<String>,
    /// SHA-256 (hex) of every byte written to stderr, as `stdoutHash`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_hash: Option<String>,
    /// Bytes read from stdout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_bytes: Option<u64>,
    /// Bytes read from stderr.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_bytes: Option<u64>,
    /// The exit status: `null` when a signal ended it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<Option<i32>>,
    /// The signal that ended the command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// How long the command ran, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The tool's trust tier at this call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust_tier: Option<TrustTier>,
    /// SHA-256 of the canonical form of what ran (as guard_exec's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical_hash: Option<String>,
    /// The same canonical hash was in the replay window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_replay: Option<bool>,
    /// When the same command was last recorded (Unix milliseconds), for a replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen_at_ms: Option<u64>,
    /// The effective RLIMIT_NOFILE of the command: the caller's `fdBudget` or the profile's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd_budget: Option<u64>,
    /// The sandbox profile the command ran under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// The program that ran, every symlink resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// The operator entry whose rules the call passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_entry: Option<String>,
    /// The server killed the command's process tree (timeout, cancel, endless output).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub killed: bool,
    /// What confined the command, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// How often a limit stopped something (present only when one did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_hits: Option<LimitHits>,
    /// The whole sandbox report, present when something was downgraded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub sandbox_report: Option<Value>,
    /// Present when the replay window could not be saved (see guard_exec).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_state: Option<String>,
    /// The whole sandbox report, for the outcome record only.
    #[serde(skip)]
    #[schemars(skip)]
    pub recorded_sandbox: Option<Value>,
}

/// What both running tools' details carry, set in one place.
trait RunDetail: Default {
    fn set_replay(&mut self, hash: &CanonicalHash, seen: Option<Duration>, mode: ReplayMode);
    fn set_sandbox(&mut self, report: &SandboxReport);
    fn set_replay_state(&mut self, note: Option<String>);
}

/// The sandbox report's parts every running tool reports: its one line, its limit hits,
/// and the whole report when something was downgraded.
fn sandbox_parts(report: &SandboxReport) -> (String, Option<LimitHits>, Option<Value>) {
    (
        report.brief(),
        (!report.limit_hits.is_empty()).then(|| report.limit_hits.clone()),
        (!report.downgrades.is_empty()).then(|| report.to_value()),
    )
}

macro_rules! run_detail {
    ($t:ty) => {
        impl RunDetail for $t {
            fn set_replay(
                &mut self,
                hash: &CanonicalHash,
                seen: Option<Duration>,
                mode: ReplayMode,
            ) {
                self.canonical_hash = Some(hash.to_hex());
                self.is_replay = Some(mode != ReplayMode::Off && seen.is_some());
                self.last_seen_at_ms = seen.map(unix_ms_ago);
            }
            fn set_sandbox(&mut self, report: &SandboxReport) {
                let (brief, hits, whole) = sandbox_parts(report);
                self.sandbox = Some(brief);
                self.limit_hits = hits;
                self.sandbox_report = whole;
                self.recorded_sandbox = Some(report.to_value());
            }
            fn set_replay_state(&mut self, note: Option<String>) {
                self.replay_state = note;
            }
        }
    };
}
run_detail!(GuardExecDetail);
run_detail!(GuardSpawnDetail);

/// `detail` of `register_allowlist`: shellguard's names (`registered`, `toolName`,
/// `executable`, `argsPatternCount`, `sandboxProfile`, `derivedTrustTier`) and ours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RegisterDetail {
    /// Whether the entry was added (false on a refusal that got that far).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered: Option<bool>,
    /// The new tool's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Its executable, every symlink resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// How many argument patterns it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args_pattern_count: Option<usize>,
    /// Its profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_profile: Option<Profile>,
    /// Its trust tier, from the real state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived_trust_tier: Option<TrustTier>,
    /// The operator entries it narrows: a call must pass its patterns and one of theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_entries: Option<Vec<String>>,
}

/// `detail` of `replay_check`: shellguard's names (`canonicalHash`, `isReplay`,
/// `lastSeenAtMs`, `windowSize`) and ours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReplayCheckDetail {
    /// SHA-256 of the command's canonical form (as guard_exec would compute it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical_hash: Option<String>,
    /// The hash is in the window now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_replay: Option<bool>,
    /// When it was last recorded (Unix milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen_at_ms: Option<u64>,
    /// Hashes in the window now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_size: Option<usize>,
    /// Whether this call recorded the hash (only with `record: true` and replay on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<bool>,
    /// `[guard] replay`: `flag`, `block` or `off`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_mode: Option<String>,
    /// Present when a recorded hash could not be saved to `[guard] replay_state`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_state: Option<String>,
}

/// The cgroup limits of `sandbox_status` (present for each one a cgroup enforces).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CgroupLimits {
    /// Memory of the whole call (memory cgroup).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_max_bytes: Option<u64>,
    /// Processes of the whole call (pids cgroup).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pids_max: Option<u64>,
}

/// `detail` of `sandbox_status`: shellguard's names (`profile`, `timeoutMs`,
/// `maxStdoutBytes`, `maxStderrBytes`, `fdBudget`, `cgroupActive`, `cgroupLimits`), each
/// one enforced, and ours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SandboxStatusDetail {
    /// The tool asked about (absent: the default profile).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Its profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// Wall-clock limit, milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Bytes of stdout kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_stdout_bytes: Option<u64>,
    /// Bytes of stderr kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_stderr_bytes: Option<u64>,
    /// RLIMIT_NOFILE of each process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd_budget: Option<u64>,
    /// A per-call cgroup kills the tree or carries a limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_active: Option<bool>,
    /// The limits a cgroup enforces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_limits: Option<CgroupLimits>,
    /// Processes of the whole call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// Memory of the whole call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The largest file a command may write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_size_bytes: Option<u64>,
    /// CPU seconds per process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<u64>,
    /// Network allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// The mechanisms in one line (as run_command's `detail.sandbox`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Mechanisms wanted and missing on this host, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downgrades: Option<Vec<String>>,
    /// The whole report of the start-up probe for this profile (explain_command's
    /// `detail.sandbox`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub sandbox_report: Option<Value>,
}

/// `detail` of `trust_tier`: shellguard's names (`tier`, `reasons`, `improvementHints`) and
/// ours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TrustTierDetail {
    /// The tool asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// `LOW`, `MEDIUM`, `HIGH` or `CRITICAL` (most trusted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<TrustTier>,
    /// Why it has this tier and no higher.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<String>>,
    /// What would raise it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub improvement_hints: Option<Vec<String>>,
}

/// `guard_exec`'s arguments as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "only its schema is used")]
struct GuardExecInput {
    /// The registered tool to run (an operator entry or a run-time one).
    #[schemars(length(min = 1, max = 64))]
    tool_name: String,
    /// The tool's executable: its absolute path or its file name. No shell string: the
    /// arguments go in `args`.
    #[schemars(length(min = 1, max = MAX_PATH_ARG_BYTES))]
    command: String,
    /// The arguments after the program, one element each; every one must fully match one of
    /// the tool's patterns.
    #[schemars(length(max = MAX_ARGS), inner(length(max = MAX_ARG_BYTES)))]
    args: Vec<String>,
    /// Working folder, relative to the jail root (default: the root).
    #[schemars(length(max = MAX_PATH_ARG_BYTES))]
    cwd: Option<String>,
    /// Variables for the command; only names the tool's `env_allow` lists.
    env: Option<BTreeMap<String, String>>,
    /// Lower the time limit for this call (milliseconds, at least 1); never raised.
    #[schemars(range(min = 1))]
    timeout_ms: Option<u64>,
    /// Refuse the call when the same command is in the replay window.
    block_on_replay: Option<bool>,
}

/// `guard_spawn`'s arguments as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "only its schema is used")]
struct GuardSpawnInput {
    /// The registered tool to run.
    #[schemars(length(min = 1, max = 64))]
    tool_name: String,
    /// The tool's executable: its absolute path or its file name.
    #[schemars(length(min = 1, max = MAX_PATH_ARG_BYTES))]
    file: String,
    /// The arguments after the program, one element each.
    #[schemars(length(max = MAX_ARGS), inner(length(max = MAX_ARG_BYTES)))]
    args: Vec<String>,
    /// Working folder, relative to the jail root.
    #[schemars(length(max = MAX_PATH_ARG_BYTES))]
    cwd: Option<String>,
    /// Variables for the command; only names the tool's `env_allow` lists.
    env: Option<BTreeMap<String, String>>,
    /// Lower the command's RLIMIT_NOFILE (at least 1); never raised above the profile's.
    #[schemars(range(min = 1))]
    fd_budget: Option<u64>,
    /// Only `false`: `true` is refused, no shell ever runs.
    shell: Option<bool>,
}

/// `register_allowlist`'s arguments as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "only its schema is used")]
struct RegisterInput {
    /// The new tool's name (`A-Z a-z 0-9 _ . -`, at most 64); not an existing one.
    #[schemars(length(min = 1, max = 64))]
    tool_name: String,
    /// The absolute path of an operator entry's executable.
    #[schemars(length(min = 1, max = MAX_PATH_ARG_BYTES))]
    executable: String,
    /// Regexes (anchored for you); every argument must fully match one of them, and also
    /// pass the operator entry's.
    #[schemars(
        length(max = super::registry::MAX_RUNTIME_PATTERNS),
        inner(length(max = MAX_PATTERN_BYTES))
    )]
    args_patterns: Vec<String>,
    /// A folder or glob relative to the jail root the tool may run in.
    #[schemars(length(max = MAX_PATH_ARG_BYTES))]
    cwd_pattern: Option<String>,
    /// `strict`, `standard` or `permissive`, no looser than the operator entry's (default:
    /// the strictest of them).
    sandbox_profile: Option<Profile>,
}

/// `replay_check`'s arguments as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "only its schema is used")]
struct ReplayCheckInput {
    /// The absolute path of the program.
    #[schemars(length(min = 1, max = MAX_PATH_ARG_BYTES))]
    executable: String,
    /// The arguments after the program.
    #[schemars(length(max = MAX_ARGS), inner(length(max = MAX_ARG_BYTES)))]
    args: Vec<String>,
    /// Working folder, relative to the jail root.
    #[schemars(length(max = MAX_PATH_ARG_BYTES))]
    cwd: Option<String>,
    /// The caller variables the command would get.
    env: Option<BTreeMap<String, String>>,
    /// Also record the hash (default false: only look).
    record: Option<bool>,
}

/// `sandbox_status`'s arguments as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "only its schema is used")]
struct SandboxStatusInput {
    /// A registered tool (absent: the default profile).
    #[schemars(length(min = 1, max = 64))]
    tool_name: Option<String>,
}

/// `trust_tier`'s arguments as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "only its schema is used")]
struct TrustTierInput {
    /// The tool to rate.
    #[schemars(length(min = 1, max = 64))]
    tool_name: String,
}

/// The `inputSchema` of a guard tool (`None` for a name this server does not have).
pub fn input_schema(tool: &str) -> Option<Map<String, Value>> {
    match tool {
        GUARD_EXEC => Some(result::input_schema::<GuardExecInput>()),
        GUARD_SPAWN => Some(result::input_schema::<GuardSpawnInput>()),
        REGISTER_ALLOWLIST => Some(result::input_schema::<RegisterInput>()),
        REPLAY_CHECK => Some(result::input_schema::<ReplayCheckInput>()),
        SANDBOX_STATUS => Some(result::input_schema::<SandboxStatusInput>()),
        TRUST_TIER => Some(result::input_schema::<TrustTierInput>()),
        other => audit::input_schema(other),
    }
}

/// The `outputSchema` of a guard tool (`None` for a name this server does not have).
pub fn output_schema(tool: &str) -> Option<Map<String, Value>> {
    match tool {
        GUARD_EXEC => Some(result::output_schema::<GuardExecDetail>()),
        GUARD_SPAWN => Some(result::output_schema::<GuardSpawnDetail>()),
        REGISTER_ALLOWLIST => Some(result::output_schema::<RegisterDetail>()),
        REPLAY_CHECK => Some(result::output_schema::<ReplayCheckDetail>()),
        SANDBOX_STATUS => Some(result::output_schema::<SandboxStatusDetail>()),
        TRUST_TIER => Some(result::output_schema::<TrustTierDetail>()),
        other => audit::output_schema(other),
    }
}

/// What every record of a guard call carries: its arguments, bounded.
fn record_fields(
    args: Option<&Map<String, Value>>,
    request_id: Option<&str>,
) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert(
        "arguments".into(),
        protocol::audit_arguments(args, ARGUMENT_BOUNDS),
    );
    if let Some(id) = request_id {
        fields.insert("request_id".into(), json!(id));
    }
    fields
}

impl GuardCore {
    /// Start the terminal part (jail, sandbox probe, audit log, redaction), compile the
    /// registry (each entry checked against its examples), load the replay window.
    pub fn start(config: Config) -> Result<Self, GuardStartError> {
        let registry = Registry::from_config(&config)?;
        let terminal = TerminalCore::start(config)?;
        Self::assemble(terminal, registry)
    }

    /// [`GuardCore::start`] with an explicit launcher binary (tests, the benchmark).
    pub fn start_with_launcher(config: Config, launcher: PathBuf) -> Result<Self, GuardStartError> {
        let registry = Registry::from_config(&config)?;
        let terminal = TerminalCore::start_with_launcher(config, launcher)?;
        Self::assemble(terminal, registry)
    }

    fn assemble(terminal: TerminalCore, registry: Registry) -> Result<Self, GuardStartError> {
        let guard = &terminal.config().guard;
        let limits = ReplayLimits {
            max_entries: usize::try_from(guard.replay_window_entries()).unwrap_or(usize::MAX),
            max_age: guard.replay_window_age(),
        };
        let replay_state = guard.replay_state.clone();
        let replay = match &replay_state {
            Some(path) => ReplayWindow::load(path, limits)?,
            None => ReplayWindow::new(limits),
        };
        if registry.replay_mode() == ReplayMode::Off {
            tracing::warn!("[guard] replay = \"off\": no call is flagged as a replay");
        }
        Ok(GuardCore {
            scan_root: guard.scan_root.clone(),
            terminal,
            registry,
            replay: Arc::new(replay),
            replay_state,
        })
    }

    /// The registry (operator and run-time entries).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The replay window shared by `guard_exec`, `guard_spawn` and `replay_check`.
    pub fn replay_window(&self) -> &ReplayWindow {
        &self.replay
    }

    /// What the start-up probe found for the policy's default profile.
    pub fn sandbox_probe(&self) -> &SandboxReport {
        self.terminal.sandbox_probe()
    }

    /// The answer to a call that failed inside the server (a scan's thread died).
    pub fn internal_error(&self, tool: &str, why: &str) -> Envelope {
        Envelope::new(
            &quote(tool),
            ResultCode::InternalError,
            format!("the call failed inside the server: {why}"),
        )
    }

    /// The answer to an HTTP caller's call that [`crate::callers::run_as`] did not let in
    /// (a tool outside its subset, a limit reached): recorded like every call, nothing run.
    pub fn refused(
        &self,
        tool: &str,
        args: Option<&Map<String, Value>>,
        refusal: crate::callers::Refusal,
    ) -> Envelope {
        let arguments = protocol::audit_arguments(args, ARGUMENT_BOUNDS);
        self.terminal
            .recorder()
            .refused(&quote(tool), arguments, &refusal)
    }

    /// Record a request the HTTP front refused before any tool saw it.
    pub fn record_http_refusal(&self, refusal: &crate::callers::HttpRefusal) {
        self.terminal.recorder().http_refused(refusal);
    }

    /// The answer to a tool this server does not have.
    pub fn unknown_tool(&self, name: &str) -> Envelope {
        let shown = quote(name);
        Envelope::new(
            &shown,
            ResultCode::InvalidRequest,
            format!(
                "unknown tool '{shown}': this server has {}",
                TOOLS.join(", ")
            ),
        )
    }

    /// Server instructions for the model.
    pub fn instructions(&self) -> String {
        let tools = self.registry.tool_names();
        let listed = if tools.is_empty() {
            "none".to_string()
        } else {
            tools.join(", ")
        };
        format!(
            "Runs registered tools: each is one pinned program with argument patterns, run \
             inside one folder (the jail) without a shell, in the kernel sandbox. Call \
             guard_exec with toolName, command (the program's path or file name) and args (one \
             element per argument; no shell string, no pipes); guard_spawn is the same but \
             returns the SHA-256 of each output stream instead of the text. Registered tools: \
             {listed}. register_allowlist can only add a narrower tool over an executable \
             the operator listed. replay_check only looks unless record is true; a command \
             already run recently is flagged (isReplay) and may be refused. trust_tier and \
             sandbox_status describe a tool; audit_source scans source code beneath the scan \
             root and audit_report renders the result. Every result has ok, code and reason; a \
             refusal is final under this policy, so do not retry the same call in another \
             spelling."
        )
    }

    /// The downgrades of the start-up probe for `profile`.
    fn downgrades(&self, profile: Profile) -> Vec<String> {
        match self.terminal.limits(profile, None) {
            Ok(limits) => {
                self.terminal
                    .expected_sandbox(profile, &limits)
                    .report
                    .downgrades
            }
            Err(e) => vec![format!(
                "the {profile} profile's limits cannot be built: {e}"
            )],
        }
    }

    /// The environment a command gets: the terminal's, with the caller's variables (each
    /// already allowed) set over it.
    fn command_env(&self, caller: &BTreeMap<String, String>) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .terminal
            .base_env()
            .iter()
            .filter(|(k, _)| !caller.contains_key(k))
            .cloned()
            .collect();
        env.extend(caller.iter().map(|(k, v)| (k.clone(), v.clone())));
        env
    }

    /// The canonical hash of what would run.
    fn hash_of(
        executable: &Path,
        args: &[String],
        cwd: &ContainedDir,
        env: &[(String, String)],
    ) -> CanonicalHash {
        CanonicalCommand::new(
            &executable.to_string_lossy(),
            args,
            &cwd.absolute().to_string_lossy(),
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .hash()
    }

    /// Save the window to `[guard] replay_state` on a blocking thread; the answer says
    /// when it failed.
    fn save_replay(&self) -> Option<tokio::task::JoinHandle<Option<String>>> {
        let path = self.replay_state.clone()?;
        let window = self.replay.clone();
        Some(tokio::task::spawn_blocking(move || {
            window.save(&path).err().map(|e| {
                tracing::warn!("the replay window was not saved: {e}");
                format!("not saved, a restart would forget this call: {e}")
            })
        }))
    }

    /// `guard_exec`: judge, contain, hash, look up the replay window, then run through the
    /// terminal's flow and return the output.
    pub async fn guard_exec(
        &self,
        args: Option<&Map<String, Value>>,
        cancel: &CancellationToken,
    ) -> Envelope {
        self.run_tool::<GuardExecDetail>(Runner::Exec, args, cancel)
            .await
    }

    /// `guard_spawn`: as `guard_exec`, with `fdBudget` and the SHA-256 of each stream
    /// instead of its text.
    pub async fn guard_spawn(
        &self,
        args: Option<&Map<String, Value>>,
        cancel: &CancellationToken,
    ) -> Envelope {
        self.run_tool::<GuardSpawnDetail>(Runner::Spawn, args, cancel)
            .await
    }

    async fn run_tool<D>(
        &self,
        runner: Runner,
        args: Option<&Map<String, Value>>,
        cancel: &CancellationToken,
    ) -> Envelope
    where
        D: RunDetail + Serialize + Fill,
    {
        let tool = runner.tool();
        let request_id = uuid::Uuid::new_v4().to_string();
        let mut call = self
            .terminal
            .recorder()
            .call(tool, record_fields(args, Some(&request_id)));
        let mut slot = None;
        let result = match RunArgs::from_json(runner, args) {
            Err(r) => Err(Stopped::Refused(r)),
            Ok(a) => match self.terminal.try_slot() {
                Ok(permit) => {
                    slot = Some(permit);
                    self.run_allowed::<D>(runner, &a, &mut call, cancel).await
                }
                Err(busy) => Err(Stopped::Call(busy)),
            },
        };
        let envelope = result.unwrap_or_else(|stopped| match stopped {
            Stopped::Refused(r) => Envelope::with(tool, r.code, r.reason, D::default()),
            Stopped::Call(e) => e.envelope(tool, |report, d: &mut D| d.set_sandbox(&report)),
        });
        let kept = D::record_of(&envelope.detail);
        let envelope = call.finish(envelope, kept, Durability::Now);
        drop(slot);
        envelope
    }

    /// Everything of a guarded call after its arguments were read.
    async fn run_allowed<D>(
        &self,
        runner: Runner,
        a: &RunArgs,
        call: &mut Call<'_>,
        cancel: &CancellationToken,
    ) -> Result<Envelope<D>, Stopped>
    where
        D: RunDetail + Fill,
    {
        let tool = runner.tool();
        if a.shell {
            return Err(denied(
                "shell: true is refused: no shell ever runs here; pass the program in 'file' \
                 and each argument as one element of 'args'"
                    .into(),
            )
            .into());
        }
        let jail = self.terminal.jail();
        let cwd = jail.resolve_cwd(a.cwd.as_deref()).map_err(jail_refusal)?;
        let mut allowed = self.registry.check(&a.tool_name, &a.args, &cwd)?;
        // An HTTP caller with a stricter profile runs under it.
        allowed.profile = crate::callers::tighten(allowed.profile);
        check_program(runner.program_arg(), &a.program, &allowed)?;
        jail.check_args(&cwd, &a.args).map_err(jail_refusal)?;
        if let Some(name) = a.env.keys().find(|k| !allowed.env_allow.contains(k)) {
            let listed = if allowed.env_allow.is_empty() {
                "none".to_string()
            } else {
                allowed.env_allow.join(", ")
            };
            return Err(denied(format!(
                "'env' sets {name}, which tool '{}' does not let a caller set (its env_allow: \
                 {listed}); nothing ran",
                a.tool_name
            ))
            .into());
        }
        if let Some(rule) = a.env.keys().find_map(|k| forbidden_env(k)) {
            // The loader refuses such an env_allow entry; this holds even if it did not.
            return Err(denied(format!(
                "'env' sets a variable under {rule}, which loads code or configuration; nothing ran"
            ))
            .into());
        }
        let limits = self.limits(runner, &allowed, a)?;
        let env = self.command_env(&a.env);
        let hash = Self::hash_of(&allowed.executable, &a.args, &cwd, &env);
        let mode = self.registry.replay_mode();
        let seen = match mode {
            ReplayMode::Off => None,
            _ => self.replay.record_seen(hash),
        };
        let saving = (mode != ReplayMode::Off)
            .then(|| self.save_replay())
            .flatten();
        let mut detail = D::default();
        detail.set_replay(&hash, seen, mode);
        let block = mode == ReplayMode::Block || (a.block_on_replay && runner == Runner::Exec);
        if let Some(age) = seen
            && block
        {
            let note = match saving {
                Some(task) => task.await.ok().flatten(),
                None => None,
            };
            detail.set_replay_state(note);
            let why = if mode == ReplayMode::Block {
                "[guard] replay = \"block\""
            } else {
                "blockOnReplay"
            };
            return Ok(Envelope::with(
                tool,
                ResultCode::PolicyDenied,
                format!(
                    "replay refused ({why}): the same command (canonical hash {}) already ran \
                     {} s ago, within the {} s replay window; nothing ran",
                    &hash.to_hex()[..12],
                    age.as_secs(),
                    self.replay.limits().max_age.as_secs()
                ),
                detail,
            ));
        }
        let mut argv = Vec::with_capacity(a.args.len() + 1);
        argv.push(allowed.executable.to_string_lossy().into_owned());
        argv.extend(a.args.iter().cloned());
        let mut intent = Map::new();
        intent.insert("tool_name".into(), json!(a.tool_name));
        intent.insert("operator_entry".into(), json!(allowed.operator_entry));
        intent.insert(
            "executable".into(),
            json!(allowed.executable.to_string_lossy()),
        );
        intent.insert(
            "argv".into(),
            json!(self.terminal.redactor().redact_argv(&argv)),
        );
        intent.insert("cwd".into(), json!(cwd.relative().to_string_lossy()));
        intent.insert("canonical_hash".into(), json!(hash.to_hex()));
        intent.insert("is_replay".into(), json!(seen.is_some()));
        intent.insert("profile".into(), json!(allowed.profile.name()));
        intent.insert("env_names".into(), json!(a.env.keys().collect::<Vec<_>>()));
        let job = Job {
            program: &allowed.executable,
            argv: &argv,
            cwd: &cwd,
            env,
            profile: allowed.profile,
            limits,
            hash_output: runner == Runner::Spawn,
        };
        let ran = self.terminal.execute(&job, intent, call, cancel).await;
        let note = match saving {
            Some(task) => task.await.ok().flatten(),
            None => None,
        };
        let ran = ran?;
        let ok_reason = format!(
            "'{}' ran as tool '{}'{}",
            allowed
                .executable
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            a.tool_name,
            if allowed.runtime {
                format!(" (within operator entry '{}')", allowed.operator_entry)
            } else {
                String::new()
            }
        );
        let (code, mut reason) = ran.code_and_reason(&argv, &ok_reason, &limits);
        if let Some(fds) = a.fd_budget.filter(|_| runner == Runner::Spawn)
            && ran.outcome.exit_code != Some(0)
            && fds < 16
        {
            // A program and its loader open descriptors before main: under a tiny budget it
            // fails at start-up, and guard_spawn shows no stderr to say so.
            reason.push_str(&format!(
                "; it exited with {} under fdBudget {fds}: a dynamically linked program opens                  several descriptors (libraries, locale, its runtime) before it starts, so a                  budget this small can stop it at start-up",
                ran.outcome
                    .exit_code
                    .map_or_else(|| "a signal".to_string(), |c| format!("status {c}"))
            ));
        }
        let tier = trust_tier(
            &self.registry,
            &a.tool_name,
            &ran.outcome.sandbox.downgrades,
        );
        detail.set_sandbox(&ran.outcome.sandbox);
        detail.set_replay_state(note);
        detail.fill(&ran, &allowed, &limits, tier.tier);
        Ok(Envelope::with(tool, code, reason, detail))
    }

    /// The limits of a guarded call: the entry's profile under `[terminal.limits]`, then
    /// the caller's `timeoutMs` / `fdBudget`, which may only tighten.
    fn limits(
        &self,
        runner: Runner,
        allowed: &Allowed,
        a: &RunArgs,
    ) -> Result<ExecLimits, Refusal> {
        let mut limits = self
            .terminal
            .limits(allowed.profile, None)
            .map_err(|e| invalid(e.to_string()))?;
        if let Some(ms) = a.timeout_ms.filter(|_| runner == Runner::Exec) {
            let allowed_ms = millis(limits.timeout);
            if ms > allowed_ms {
                return Err(invalid(format!(
                    "timeoutMs {ms} is longer than tool '{}' may run: at most {allowed_ms} ms \
                     (the {} profile under the policy's limits; a call may only lower it)",
                    a.tool_name, allowed.profile
                )));
            }
            limits.timeout = Duration::from_millis(ms);
            clamp_cpu(&mut limits);
        }
        if let Some(fds) = a.fd_budget.filter(|_| runner == Runner::Spawn) {
            if fds > limits.open_files {
                return Err(invalid(format!(
                    "fdBudget {fds} is more than tool '{}' may open: at most {} descriptors \
                     (the {} profile; a call may only lower it)",
                    a.tool_name, limits.open_files, allowed.profile
                )));
            }
            limits.open_files = fds;
        }
        Ok(limits)
    }

    /// `register_allowlist`: add a run-time entry, which can only narrow. Granted or
    /// refused, the registration is recorded; under `audit_fail_mode = "closed"` nothing is
    /// registered unless its intent record is durable.
    pub fn register_allowlist(&self, args: Option<&Map<String, Value>>) -> Envelope {
        let mut call = self
            .terminal
            .recorder()
            .call(REGISTER_ALLOWLIST, record_fields(args, None));
        let envelope = match self.register_checked(args, &mut call) {
            Ok(env) => env,
            Err(Stopped::Refused(r)) => Envelope::with(
                REGISTER_ALLOWLIST,
                r.code,
                r.reason,
                RegisterDetail::default(),
            ),
            Err(Stopped::Call(e)) => e.envelope(REGISTER_ALLOWLIST, |_, _| {}),
        };
        call.finish(envelope, Map::new(), Durability::Now)
    }

    fn register_checked(
        &self,
        args: Option<&Map<String, Value>>,
        call: &mut Call<'_>,
    ) -> Result<Envelope<RegisterDetail>, Stopped> {
        protocol::check_shape(REGISTER_ALLOWLIST, args, REGISTER_ARGUMENTS)
            .map_err(|e| invalid(e.to_string()))?;
        let empty = Map::new();
        let args = args.unwrap_or(&empty);
        let tool = string_arg(args, "toolName", 64)?.unwrap_or_default();
        let executable = string_arg(args, "executable", MAX_PATH_ARG_BYTES)?.unwrap_or_default();
        let patterns = string_list(
            args,
            "argsPatterns",
            super::registry::MAX_RUNTIME_PATTERNS,
            MAX_PATTERN_BYTES,
        )?;
        let cwd = string_arg(args, "cwdPattern", MAX_PATH_ARG_BYTES)?;
        let profile = match string_arg(args, "sandboxProfile", 16)? {
            None => None,
            Some(name) => Some(
                Profile::ALL
                    .into_iter()
                    .find(|p| p.name() == name)
                    .ok_or_else(|| {
                        invalid(format!(
                            "'sandboxProfile' must be one of \"strict\", \"standard\", \
                             \"permissive\"; got '{}'",
                            quote(name)
                        ))
                    })?,
            ),
        };
        let mut intent = Map::new();
        intent.insert("tool_name".into(), json!(tool));
        intent.insert("executable".into(), json!(executable));
        call.intent(intent).map_err(|e| Stopped::Call(e.into()))?;
        let granted =
            self.registry
                .register(tool, Path::new(executable), &patterns, cwd, profile)?;
        let tier = trust_tier(
            &self.registry,
            &granted.tool,
            &self.downgrades(granted.profile),
        );
        let detail = RegisterDetail {
            registered: Some(true),
            tool_name: Some(granted.tool.clone()),
            executable: Some(granted.executable.to_string_lossy().into_owned()),
            args_pattern_count: Some(patterns.len()),
            sandbox_profile: Some(granted.profile),
            derived_trust_tier: Some(tier.tier),
            operator_entries: Some(granted.operator_entries.clone()),
        };
        Ok(Envelope::with(
            REGISTER_ALLOWLIST,
            ResultCode::Ok,
            format!(
                "registered '{}' over '{}': a call must pass its {} and those of operator \
                 entry {}; it lives until the server stops",
                granted.tool,
                granted.executable.display(),
                protocol::count(patterns.len(), "pattern", "patterns"),
                granted
                    .operator_entries
                    .iter()
                    .map(|e| format!("'{e}'"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            detail,
        ))
    }

    /// `replay_check`: the canonical hash of a command and whether it is in the window.
    /// Only looks, unless `record: true` (then the window is changed and saved).
    pub async fn replay_check(&self, args: Option<&Map<String, Value>>) -> Envelope {
        let call = self
            .terminal
            .recorder()
            .call(REPLAY_CHECK, record_fields(args, None));
        let (envelope, changed) = match self.replay_checked(args).await {
            Ok(ok) => ok,
            Err(r) => (
                Envelope::with(REPLAY_CHECK, r.code, r.reason, ReplayCheckDetail::default()),
                false,
            ),
        };
        if changed {
            call.finish(envelope, Map::new(), Durability::Now)
        } else {
            call.finish_read_only(
                envelope,
                "the audit record of this check could not be written, so nothing is returned",
            )
        }
    }

    async fn replay_checked(
        &self,
        args: Option<&Map<String, Value>>,
    ) -> Result<(Envelope<ReplayCheckDetail>, bool), Refusal> {
        protocol::check_shape(REPLAY_CHECK, args, REPLAY_ARGUMENTS)
            .map_err(|e| invalid(e.to_string()))?;
        let empty = Map::new();
        let args = args.unwrap_or(&empty);
        let executable = string_arg(args, "executable", MAX_PATH_ARG_BYTES)?.unwrap_or_default();
        let argv = string_list(args, "args", MAX_ARGS, MAX_ARG_BYTES)?;
        let cwd = string_arg(args, "cwd", MAX_PATH_ARG_BYTES)?;
        let caller_env = env_arg(args)?;
        let record = bool_arg(args, "record");
        let path = Path::new(executable);
        if !path.is_absolute() {
            return Err(invalid(format!(
                "'executable' must be an absolute path (as guard_exec resolves it); got '{}'",
                quote(executable)
            )));
        }
        let resolved = path.canonicalize().map_err(|e| {
            invalid(format!(
                "'executable' '{}' cannot be resolved: {e}",
                quote(executable)
            ))
        })?;
        let cwd = self
            .terminal
            .jail()
            .resolve_cwd(cwd)
            .map_err(jail_refusal)?;
        let env = self.command_env(&caller_env);
        let hash = Self::hash_of(&resolved, &argv, &cwd, &env);
        let mode = self.registry.replay_mode();
        let seen = (mode != ReplayMode::Off)
            .then(|| self.replay.age(&hash))
            .flatten();
        let recorded = record && mode != ReplayMode::Off;
        let mut note = None;
        if recorded {
            self.replay.record(hash);
            if let Some(task) = self.save_replay() {
                note = task.await.ok().flatten();
            }
        }
        let detail = ReplayCheckDetail {
            canonical_hash: Some(hash.to_hex()),
            is_replay: Some(seen.is_some()),
            last_seen_at_ms: seen.map(unix_ms_ago),
            window_size: Some(self.replay.len()),
            recorded: Some(recorded),
            replay_mode: Some(
                match mode {
                    ReplayMode::Flag => "flag",
                    ReplayMode::Block => "block",
                    ReplayMode::Off => "off",
                }
                .into(),
            ),
            replay_state: note,
        };
        let reason = match (mode, seen, recorded) {
            (ReplayMode::Off, _, _) => {
                "[guard] replay = \"off\": there is no replay window, nothing is a replay".into()
            }
            (_, Some(age), _) => format!(
                "a replay: the same command was recorded {} s ago{}",
                age.as_secs(),
                if recorded { "; recorded again" } else { "" }
            ),
            (_, None, true) => "not a replay; recorded now".to_string(),
            (_, None, false) => "not a replay (only looked: nothing recorded)".to_string(),
        };
        Ok((
            Envelope::with(REPLAY_CHECK, ResultCode::Ok, reason, detail),
            recorded,
        ))
    }

    /// `sandbox_status`: the profile of a tool (or the default one), its concrete limits and
    /// what the start-up probe found active on this host.
    pub fn sandbox_status(&self, args: Option<&Map<String, Value>>) -> Envelope {
        let call = self
            .terminal
            .recorder()
            .call(SANDBOX_STATUS, record_fields(args, None));
        let envelope = self.sandbox_status_checked(args).unwrap_or_else(|r| {
            Envelope::with(
                SANDBOX_STATUS,
                r.code,
                r.reason,
                SandboxStatusDetail::default(),
            )
        });
        call.finish_read_only(
            envelope,
            "the audit record of this call could not be written, so nothing is returned",
        )
    }

    fn sandbox_status_checked(
        &self,
        args: Option<&Map<String, Value>>,
    ) -> Result<Envelope<SandboxStatusDetail>, Refusal> {
        protocol::check_shape(SANDBOX_STATUS, args, STATUS_ARGUMENTS)
            .map_err(|e| invalid(e.to_string()))?;
        let empty = Map::new();
        let tool = string_arg(args.unwrap_or(&empty), "toolName", 64)?;
        let profile = match tool {
            None => self.terminal.config().terminal.sandbox.profile,
            Some(t) => self
                .registry
                .profile_of(t)
                .ok_or_else(|| invalid(format!("no tool named '{}' is registered", quote(t))))?,
        };
        let limits = self
            .terminal
            .limits(profile, None)
            .map_err(|e| invalid(e.to_string()))?;
        let report = self.terminal.expected_sandbox(profile, &limits).report;
        let cgroup = &report.mechanisms.cgroup;
        let cgroup_active = cgroup.kill || cgroup.processes.is_some() || cgroup.memory.is_some();
        let cap = u64::try_from(limits.max_output_bytes).unwrap_or(u64::MAX);
        let detail = SandboxStatusDetail {
            tool_name: tool.map(str::to_string),
            profile: Some(profile),
            timeout_ms: Some(millis(limits.timeout)),
            max_stdout_bytes: Some(cap),
            max_stderr_bytes: Some(cap),
            fd_budget: Some(limits.open_files),
            cgroup_active: Some(cgroup_active),
            cgroup_limits: cgroup_active.then(|| CgroupLimits {
                memory_max_bytes: cgroup.memory.is_some().then_some(limits.memory_bytes),
                pids_max: cgroup.processes.is_some().then_some(limits.processes),
            }),
            processes: Some(limits.processes),
            memory_bytes: Some(limits.memory_bytes),
            file_size_bytes: Some(limits.file_size_bytes),
            cpu_seconds: Some(limits.cpu_seconds),
            network: Some(limits.network),
            sandbox: Some(report.brief()),
            downgrades: Some(report.downgrades.clone()),
            sandbox_report: Some(report.to_value()),
        };
        let reason = if report.downgrades.is_empty() {
            format!("profile {profile}: every sandbox mechanism is active on this host")
        } else {
            format!(
                "profile {profile}: {} on this host (see downgrades)",
                protocol::count(
                    report.downgrades.len(),
                    "mechanism is downgraded",
                    "mechanisms are downgraded"
                )
            )
        };
        Ok(Envelope::with(
            SANDBOX_STATUS,
            ResultCode::Ok,
            reason,
            detail,
        ))
    }

    /// `trust_tier`: how far a tool can be trusted, from the real state.
    pub fn trust_tier(&self, args: Option<&Map<String, Value>>) -> Envelope {
        let call = self
            .terminal
            .recorder()
            .call(TRUST_TIER, record_fields(args, None));
        let envelope = self.trust_tier_checked(args).unwrap_or_else(|r| {
            Envelope::with(TRUST_TIER, r.code, r.reason, TrustTierDetail::default())
        });
        call.finish_read_only(
            envelope,
            "the audit record of this call could not be written, so nothing is returned",
        )
    }

    fn trust_tier_checked(
        &self,
        args: Option<&Map<String, Value>>,
    ) -> Result<Envelope<TrustTierDetail>, Refusal> {
        protocol::check_shape(TRUST_TIER, args, TIER_ARGUMENTS)
            .map_err(|e| invalid(e.to_string()))?;
        let empty = Map::new();
        let tool = string_arg(args.unwrap_or(&empty), "toolName", 64)?.unwrap_or_default();
        let downgrades = self
            .registry
            .profile_of(tool)
            .map(|p| self.downgrades(p))
            .unwrap_or_default();
        let report = trust_tier(&self.registry, tool, &downgrades);
        let reason = format!("tool '{}' is {}", quote(tool), report.tier.as_str());
        let detail = TrustTierDetail {
            tool_name: Some(report.tool),
            tier: Some(report.tier),
            reasons: Some(report.reasons),
            improvement_hints: Some(report.hints),
        };
        Ok(Envelope::with(TRUST_TIER, ResultCode::Ok, reason, detail))
    }

    /// `audit_source`: scan source code beneath `[guard] scan_root`.
    pub fn audit_source(&self, args: Option<&Map<String, Value>>) -> Envelope {
        let call = self
            .terminal
            .recorder()
            .call(AUDIT_SOURCE, record_fields(args, None));
        let envelope = audit::audit_source(self.scan_root.as_deref(), args);
        call.finish_read_only(
            envelope,
            "the audit record of this scan could not be written, so nothing is returned",
        )
    }

    /// `audit_report`: render a scan result as markdown, json or sarif.
    pub fn audit_report(&self, args: Option<&Map<String, Value>>) -> Envelope {
        let call = self
            .terminal
            .recorder()
            .call(AUDIT_REPORT, record_fields(args, None));
        let envelope = audit::audit_report(args);
        call.finish_read_only(
            envelope,
            "the audit record of this call could not be written, so nothing is returned",
        )
    }
}

/// The run's own fields of a running tool's detail, and what its outcome record keeps.
trait Fill {
    fn fill(&mut self, ran: &Ran, allowed: &Allowed, limits: &ExecLimits, tier: TrustTier);
    fn record_of(detail: &Self) -> Map<String, Value>;
}

impl Fill for GuardExecDetail {
    fn fill(&mut self, ran: &Ran, allowed: &Allowed, limits: &ExecLimits, tier: TrustTier) {
        let truncated = ran.truncated();
        self.exit_code = Some(ran.outcome.exit_code);
        self.signal = ran.outcome.signal;
        self.duration_ms = Some(ran.run_ms);
        self.trust_tier = Some(tier);
        self.timeout_ms = Some(millis(limits.timeout));
        self.profile = Some(allowed.profile);
        self.executable = Some(allowed.executable.to_string_lossy().into_owned());
        self.operator_entry = Some(allowed.operator_entry.clone());
        self.killed = ran.outcome.stop != crate::exec::Stop::Exited;
        self.truncated = truncated;
        self.stdout_truncated_bytes = truncated.then_some(ran.stdout.omitted_bytes);
        self.stderr_truncated_bytes = truncated.then_some(ran.stderr.omitted_bytes);
        self.output_incomplete = ran.outcome.drain_abandoned;
        self.stdout = Some(ran.stdout.text.clone());
        self.stderr = Some(ran.stderr.text.clone());
    }

    fn record_of(d: &Self) -> Map<String, Value> {
        let mut fields = Map::new();
        let mut keep = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                fields.insert(key.into(), v);
            }
        };
        keep("exit_code", d.exit_code.map(|c| json!(c)));
        keep("signal", d.signal.map(|s| json!(s)));
        keep("canonical_hash", d.canonical_hash.clone().map(Value::from));
        keep("is_replay", d.is_replay.map(Value::from));
        keep("killed", d.killed.then_some(Value::Bool(true)));
        keep(
            "stdout_truncated_bytes",
            d.stdout_truncated_bytes.map(Value::from),
        );
        keep(
            "stderr_truncated_bytes",
            d.stderr_truncated_bytes.map(Value::from),
        );
        keep("sandbox", d.recorded_sandbox.clone());
        fields
    }
}

impl Fill for GuardSpawnDetail {
    fn fill(&mut self, ran: &Ran, allowed: &Allowed, limits: &ExecLimits, tier: TrustTier) {
        self.pid = Some(ran.outcome.pid);
        self.stdout_hash = ran.outcome.stdout_sha256.map(hex::encode);
        self.stderr_hash = ran.outcome.stderr_sha256.map(hex::encode);
        self.stdout_bytes = Some(ran.outcome.stdout.total);
        self.stderr_bytes = Some(ran.outcome.stderr.total);
        self.exit_code = Some(ran.outcome.exit_code);
        self.signal = ran.outcome.signal;
        self.duration_ms = Some(ran.run_ms);
        self.trust_tier = Some(tier);
        self.fd_budget = Some(limits.open_files);
        self.profile = Some(allowed.profile);
        self.executable = Some(allowed.executable.to_string_lossy().into_owned());
        self.operator_entry = Some(allowed.operator_entry.clone());
        self.killed = ran.outcome.stop != crate::exec::Stop::Exited;
    }

    fn record_of(d: &Self) -> Map<String, Value> {
        let mut fields = Map::new();
        let mut keep = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                fields.insert(key.into(), v);
            }
        };
        keep("exit_code", d.exit_code.map(|c| json!(c)));
        keep("signal", d.signal.map(|s| json!(s)));
        keep("canonical_hash", d.canonical_hash.clone().map(Value::from));
        keep("is_replay", d.is_replay.map(Value::from));
        keep("pid", d.pid.map(Value::from));
        keep("stdout_sha256", d.stdout_hash.clone().map(Value::from));
        keep("stderr_sha256", d.stderr_hash.clone().map(Value::from));
        keep("fd_budget", d.fd_budget.map(Value::from));
        keep("killed", d.killed.then_some(Value::Bool(true)));
        keep("sandbox", d.recorded_sandbox.clone());
        fields
    }
}
