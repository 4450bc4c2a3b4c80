//! The terminal server's request flow: parse → evaluate → contain → record intent → run →
//! redact then truncate → record outcome. The MCP wiring hands over the raw JSON arguments
//! and returns the [`Envelope`] it gets back; it decides nothing.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::exec::cgroup::LimitHits;
use crate::exec::filesystem;
use crate::exec::profile::{LimitsError, Profile, effective_limits};
use crate::exec::sandbox::LimitsReport;
use crate::exec::{
    ExecError, ExecLimits, ExecRequest, Executor, Gate, SandboxConfig, SandboxReport, Stop,
};
use crate::jail::{Jail, JailError};
use crate::parse::{MAX_COMMAND_BYTES, parse_command};
use crate::policy::{PolicyError, TerminalPolicy};
use crate::protocol::{self, ArgKind, ArgSpec, MAX_PATH_ARG_BYTES, ShapeError, check_len, quote};
use crate::recorder::{Call, Durability, Recorder, Unrecorded};
use crate::redact::{RedactError, Redactor};
use crate::result::{self, Envelope, ResultCode};

/// Tool name of the command runner.
pub const RUN_COMMAND: &str = "run_command";
/// Tool name of the dry run.
pub const EXPLAIN_COMMAND: &str = "explain_command";

/// The terminal server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// A policy rule is invalid or disagrees with its examples.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The jail root cannot be opened.
    #[error(transparent)]
    Jail(#[from] JailError),
    /// An operator redaction pattern does not compile.
    #[error(transparent)]
    Redact(#[from] RedactError),
    /// The configuration has no `[terminal]` section with a jail root (it was loaded for
    /// another server).
    #[error("the configuration has no [terminal] section with a jail root")]
    NoTerminalSection,
    /// A sandbox profile's limits cannot be built under `[terminal.limits]`, so the
    /// start-up probe of the kernel sandbox could not run.
    #[error("cannot probe the kernel sandbox for the {profile} profile: {reason}")]
    SandboxProbe {
        /// The profile probed.
        profile: Profile,
        /// Why its limits could not be built.
        reason: String,
    },
    /// The audit log cannot be opened and `audit_fail_mode = "closed"`: a server that cannot
    /// record an operation would answer every call AUDIT_UNAVAILABLE, so it does not start.
    #[error(transparent)]
    Audit(#[from] crate::audit::AuditError),
    /// The sandbox launcher (this binary) cannot be located.
    #[error("cannot locate the sandbox launcher (the running binary): {0}")]
    Launcher(std::io::Error),
    /// The identity commands would run as is root, unknown or not allowed.
    #[error("{0}")]
    Identity(String),
    /// The empty HOME folder for commands could not be made.
    #[error("cannot make the commands' empty HOME folder: {0}")]
    Home(std::io::Error),
}

/// Why the arguments of a terminal tool were refused (`INVALID_REQUEST`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ArgumentError {
    /// An unknown, missing or mistyped argument (a 1 MiB key comes back as a short
    /// prefix).
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// `timeout_seconds` is not a whole number of at least 1.
    #[error(
        "'timeout_seconds' must be a whole number of seconds, at least 1 (and at most the \
         policy's timeout: a call may only lower it); got {0}"
    )]
    Timeout(serde_json::Number),
    /// A string argument is longer than its bound (its length is told, never its value).
    #[error("{0}")]
    TooLong(String),
}

/// Arguments of `run_command` / `explain_command`, checked by hand so that every malformed
/// request still gets an envelope (`INVALID_REQUEST`) instead of a protocol error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandArgs {
    /// The command string.
    pub command: String,
    /// Optional working folder inside the jail.
    pub cwd: Option<String>,
    /// Optional lower timeout for this call (run_command only).
    pub timeout_seconds: Option<u64>,
}

impl CommandArgs {
    /// Read the arguments object; unknown fields and wrong types are refused with a reason.
    pub(crate) fn from_json(
        tool: &str,
        args: Option<&Map<String, Value>>,
    ) -> Result<Self, ArgumentError> {
        let specs = if tool == RUN_COMMAND {
            RUN_ARGUMENTS
        } else {
            RUN_ARGUMENTS.get(..2).unwrap_or_default()
        };
        protocol::check_shape(tool, args, specs)?;
        let empty = Map::new();
        let args = args.unwrap_or(&empty);
        let command = match args.get("command") {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let cwd = match args.get("cwd") {
            Some(Value::String(s)) => {
                // A 1 MiB cwd would be echoed by every later reason and the audit record.
                check_len("cwd", s, MAX_PATH_ARG_BYTES)
                    .map_err(|e| ArgumentError::TooLong(e.to_string()))?;
                Some(s.clone())
            }
            _ => None,
        };
        let timeout_seconds = match args.get("timeout_seconds") {
            Some(Value::Number(n)) => match n.as_u64() {
                Some(t) if t >= 1 => Some(t),
                _ => return Err(ArgumentError::Timeout(n.clone())),
            },
            _ => None,
        };
        Ok(CommandArgs {
            command,
            cwd,
            timeout_seconds,
        })
    }
}

/// The arguments of `run_command` as its `inputSchema` describes them: what
/// [`CommandArgs::from_json`] accepts, each bound the one it enforces.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "only its schema is used; from_json reads the arguments"
)]
struct RunCommandInput {
    /// One command line, e.g. `git log --oneline -n 5`. Quoting works as in sh; pipes,
    /// redirection, `;`, `&&`, `$VAR` and `$(...)` are refused. At most 16384 bytes.
    #[schemars(length(min = 1, max = MAX_COMMAND_BYTES))]
    command: String,
    /// Working folder, relative to the jail root (default: the root). Must stay inside it.
    /// At most 4096 bytes.
    #[schemars(length(max = MAX_PATH_ARG_BYTES))]
    cwd: Option<String>,
    /// Lower the time limit for this call (whole seconds, at least 1); it can never be
    /// raised above the policy's.
    #[schemars(range(min = 1))]
    timeout_seconds: Option<u64>,
}

/// The arguments of `explain_command` as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "only its schema is used; from_json reads the arguments"
)]
struct ExplainCommandInput {
    /// The command line to judge, exactly as it would be given to run_command. At most
    /// 16384 bytes.
    #[schemars(length(min = 1, max = MAX_COMMAND_BYTES))]
    command: String,
    /// Working folder, relative to the jail root. At most 4096 bytes.
    #[schemars(length(max = MAX_PATH_ARG_BYTES))]
    cwd: Option<String>,
}

/// The `inputSchema` of a terminal tool (`None` for a name this server does not have).
pub fn input_schema(tool: &str) -> Option<Map<String, Value>> {
    match tool {
        RUN_COMMAND => Some(result::input_schema::<RunCommandInput>()),
        EXPLAIN_COMMAND => Some(result::input_schema::<ExplainCommandInput>()),
        _ => None,
    }
}

/// The arguments of `run_command`; `explain_command` takes the first two.
const RUN_ARGUMENTS: &[ArgSpec] = &[
    ArgSpec {
        name: "command",
        required: true,
        kind: ArgKind::String,
        must_be: "a string: one command line, e.g. \"ls -la\"",
    },
    ArgSpec {
        name: "cwd",
        required: false,
        kind: ArgKind::String,
        must_be: "a string: the working folder, relative to the jail",
    },
    ArgSpec {
        name: "timeout_seconds",
        required: false,
        kind: ArgKind::Number,
        must_be: "a whole number of seconds, at least 1",
    },
];

/// The bound of each string argument of the terminal tools (docs/protocol.md); the
/// audit record keeps a value within it whole and only the size of a longer one.
const ARGUMENT_BOUNDS: &[(&str, usize)] =
    &[("command", MAX_COMMAND_BYTES), ("cwd", MAX_PATH_ARG_BYTES)];

/// `detail` of `run_command`. A call refused before anything ran has none of these fields
/// (only `audit`, when its record is missing).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub(crate) struct RunCommandDetail {
    /// The exit status, present when the command ran: `null` when a signal ended it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<Option<i32>>,
    /// Standard output, terminal escapes stripped, redacted, then cut to the cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error, treated as `stdout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The signal that ended the command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
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
    /// The output pipes were still held open by a process that outlived the command, and
    /// reading them was abandoned.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub output_incomplete: bool,
    /// What confined the command, in one line (also on a failed start that got that far):
    /// the profile and each mechanism, `off` where it is missing, e.g. `profile=standard
    /// landlock=7/partial seccomp=on ro_view=on ns=off uid=65534 caps=dropped kill=cgroup
    /// pids=on memory=on net=on`, then `downgrades=N` when something was downgraded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// How often a limit stopped something: forks the process limit refused, processes
    /// the memory limit killed (present only when one did; the limits themselves are in
    /// explain_command's `detail.sandbox.limits`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_hits: Option<LimitHits>,
    /// The whole sandbox report (limits, mechanisms, downgrades in words), present when
    /// something was downgraded (the kernel or the host lacked a mechanism, or the policy
    /// disabled the sandbox): a weaker sandbox is never silent. Always in the audit record.
    /// Its fields are those of explain_command's `detail.sandbox` (that tool's
    /// `outputSchema` describes them); here it is an open object, so the schema every
    /// `run_command` client reads stays small.
    #[serde(skip_serializing_if = "no_downgrade")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub sandbox_report: Option<SandboxReport>,
}

/// `sandbox_report` stays off the wire when nothing was downgraded.
fn no_downgrade(report: &Option<SandboxReport>) -> bool {
    report.as_ref().is_none_or(|r| r.downgrades.is_empty())
}

impl RunCommandDetail {
    /// Set what confined the command: its one-line summary, its limit hits, its report.
    fn set_sandbox(&mut self, report: SandboxReport) {
        self.sandbox = Some(report.brief());
        self.limit_hits = (!report.limit_hits.is_empty()).then(|| report.limit_hits.clone());
        self.sandbox_report = Some(report);
    }

    /// What the outcome record keeps of the detail, under the names the wire uses: the
    /// exit status, the signal, the truncation figures, whether the tree was killed, and as
    /// `sandbox` the whole report (where the wire has its summary). Not the output.
    fn record_fields(&self) -> Map<String, Value> {
        let mut fields = Map::new();
        let mut keep = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                fields.insert(key.into(), v);
            }
        };
        keep("exit_code", self.exit_code.map(|c| json!(c)));
        keep("signal", self.signal.map(|s| json!(s)));
        keep(
            "stdout_truncated_bytes",
            self.stdout_truncated_bytes.map(|b| json!(b)),
        );
        keep(
            "stderr_truncated_bytes",
            self.stderr_truncated_bytes.map(|b| json!(b)),
        );
        keep("killed", self.killed.then_some(Value::Bool(true)));
        keep(
            "sandbox",
            self.sandbox_report.as_ref().map(SandboxReport::to_value),
        );
        fields
    }
}

/// The decision `explain_command` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The command would run.
    Allow,
    /// A stage refused it.
    Deny,
}

/// Where the mechanisms in explain_command's `detail.sandbox` come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) enum ReportSource {
    /// What the probe at start-up found for a profile with the same network setting.
    #[serde(rename = "start-up probe")]
    StartUpProbe,
}

/// explain_command's `detail.sandbox`: the sandbox report a run would have, with where its
/// mechanisms come from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct ExpectedSandbox {
    /// The call's profile and limits, the mechanisms of the start-up probe.
    #[serde(flatten)]
    pub report: SandboxReport,
    /// Always the start-up probe: nothing was run for this call.
    pub source: ReportSource,
}

/// `detail` of `explain_command`. Never holds stdout, stderr or an exit code; an
/// unreadable request has none of these fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub(crate) struct ExplainCommandDetail {
    /// Whether the command would run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The command as parsed (absent when it did not parse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// The stage or rule that decided: `parser`, `denylist`, `default-deny`, `rules[N]`,
    /// `jail`, `executable`, or the allowing rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// `decision == allow`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_run: Option<bool>,
    /// The program that would be executed (allowed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// The working folder, relative to the jail (allowed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The sandbox the command would get (allowed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<ExpectedSandbox>,
    /// SHA-256 of the call's canonical form: executable, argv, cwd, environment (allowed
    /// only; the audit intent of the same run carries the same hash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical_hash: Option<String>,
}

/// The `outputSchema` of a terminal tool (`None` for a name this server does not have).
pub fn output_schema(tool: &str) -> Option<Map<String, Value>> {
    match tool {
        RUN_COMMAND => Some(result::output_schema::<RunCommandDetail>()),
        EXPLAIN_COMMAND => Some(result::output_schema::<ExplainCommandDetail>()),
        _ => None,
    }
}

/// Why a terminal call did not run its command (or, for [`CallError::Exec`], could not
/// start it). Each becomes an envelope in [`CallError::envelope`], the one place that
/// picks its code and reason.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// The arguments are malformed.
    #[error(transparent)]
    Arguments(#[from] ArgumentError),
    /// `max_concurrent_commands` commands are running.
    #[error(
        "{} already running, the most this server runs at once \
         ([terminal] max_concurrent_commands); nothing ran: call again when one has finished",
        protocol::count(*.0, "command is", "commands are")
    )]
    Busy(u64),
    /// Parsing, the policy or the jail refused the command.
    #[error("{}", .0.reason)]
    Refused(Box<Refusal>),
    /// The limits of a run cannot be built (the caller's timeout cannot apply).
    #[error(transparent)]
    Limits(LimitsError),
    /// The limits of a dry run cannot be built: the profile's own limits, validated at
    /// start-up, so a bug.
    #[error(transparent)]
    ProfileLimits(LimitsError),
    /// The start gate could not be made.
    #[error("could not create the start gate, so nothing ran: {0}")]
    Gate(std::io::Error),
    /// The intent record could not be made durable (`audit_fail_mode = "closed"`).
    #[error("the audit record could not be written, so nothing ran: {0}")]
    Audit(#[from] Unrecorded),
    /// The executor could not start the command.
    #[error(transparent)]
    Exec(#[from] ExecError),
}

impl CallError {
    fn code(&self) -> ResultCode {
        match self {
            CallError::Arguments(_) | CallError::Limits(_) => ResultCode::InvalidRequest,
            CallError::Busy(_) => ResultCode::Busy,
            CallError::Refused(r) => r.code,
            CallError::ProfileLimits(_) | CallError::Gate(_) => ResultCode::InternalError,
            CallError::Audit(_) => ResultCode::AuditUnavailable,
            CallError::Exec(_) => ResultCode::OperationFailed,
        }
    }

    /// The envelope of `tool` for this error: its code, its message, and (for a command
    /// the sandbox got as far as reporting on) the sandbox report.
    pub(crate) fn envelope<D: Default>(
        self,
        tool: &str,
        report: impl FnOnce(SandboxReport, &mut D),
    ) -> Envelope<D> {
        let mut detail = D::default();
        if let CallError::Exec(e) = &self
            && let Some(r) = e.report()
        {
            report(r.clone(), &mut detail);
        }
        Envelope::with(tool, self.code(), self.to_string(), detail)
    }
}

/// The terminal server's safety core: everything `run_command` and `explain_command` decide.
#[derive(Debug)]
pub struct TerminalCore {
    config: Config,
    policy: TerminalPolicy,
    jail: Jail,
    /// Every command's environment ([`TerminalCore::environment`]), built once.
    env: Vec<(String, String)>,
    redactor: Arc<Redactor>,
    recorder: Recorder,
    executor: Executor,
    /// What the start-up probe found, for a network-on and a network-off profile.
    probe_online: SandboxReport,
    probe_offline: SandboxReport,
    /// explain_command's `detail.sandbox` per profile: a function of the profile, the policy
    /// and the start-up probe alone, so built once.
    explain_sandbox: PerProfile<std::sync::OnceLock<ExpectedSandbox>>,
    /// One permit per command allowed to run at once (`max_concurrent_commands`).
    slots: tokio::sync::Semaphore,
}

/// One value per sandbox profile.
#[derive(Debug, Default)]
struct PerProfile<T> {
    strict: T,
    standard: T,
    permissive: T,
}

/// What stage one to three decided for a command string.
struct Vetted {
    argv: Vec<String>,
    program: std::path::PathBuf,
    cwd: crate::jail::ContainedDir,
    reason: String,
    decided_by: String,
    profile: Profile,
}

/// Why stages 1–3 refused, with what explain_command reports about it.
#[derive(Debug)]
pub(crate) struct Refusal {
    code: ResultCode,
    reason: String,
    /// The argv, when the command parsed.
    argv: Option<Vec<String>>,
    /// The stage or rule that refused: `parser`, `denylist`, `default-deny`, `rules[N]`,
    /// `jail`, `executable`.
    decided_by: String,
}

impl TerminalCore {
    /// Compile the policy, open the jail, build the redactor, probe the kernel sandbox.
    /// Fatal problems are errors. Commands start through the launcher mode of the running
    /// binary, or of `safe-mcp-sandbox-exec` when that sits beside it.
    pub fn start(config: Config) -> Result<Self, StartError> {
        let exe = std::env::current_exe().map_err(StartError::Launcher)?;
        // The small launcher-only binary starts faster than the whole server (~0.5 ms per
        // command); it is used when it was installed beside this one, else this binary is.
        let small = exe.with_file_name("safe-mcp-sandbox-exec");
        let launcher = if small.is_file() { small } else { exe };
        Self::start_with_launcher(config, launcher)
    }

    /// [`TerminalCore::start`] with an explicit launcher binary (any binary whose `main`
    /// calls [`crate::exec::launcher_main`] first; tests use `safe-mcp-sandbox-exec`).
    pub fn start_with_launcher(
        config: Config,
        launcher: std::path::PathBuf,
    ) -> Result<Self, StartError> {
        let root = config
            .jail_root()
            .ok_or(StartError::NoTerminalSection)?
            .to_path_buf();
        let policy = TerminalPolicy::new(&config.terminal)?;
        let jail = Jail::open(&root)?;
        let redactor = Arc::new(Redactor::new(&config.redaction)?);
        // Opened now, not on the first call: a server that cannot record must not say
        // "ready" and then answer every call AUDIT_UNAVAILABLE.
        let recorder = Recorder::open(&config, redactor.clone())?.clipping_reasons();
        let settings = &config.terminal.sandbox;
        let run_as = command_identity(settings.run_as.as_deref(), jail.root())?;
        let home = empty_home().map_err(StartError::Home)?;
        let executor = if settings.enabled {
            let mut read_paths =
                filesystem::read_paths(&settings.read_paths, config.terminal.path());
            read_paths.push(home.clone());
            Executor::sandboxed(SandboxConfig {
                launcher,
                jail_root: jail.root().to_path_buf(),
                read_paths,
                require: settings.require_kernel_sandbox,
                namespaces: settings.namespaces,
                cgroups: settings.cgroups,
                view: settings.namespaces,
                run_as,
            })
        } else {
            Executor::unsandboxed(run_as)
        };
        let default_profile = settings.profile;
        let probe = |profile: Profile| {
            let limits = effective_limits(
                profile,
                config.terminal.limits.timeout_seconds,
                config.terminal.limits.max_output_bytes,
                None,
            );
            limits
                .map(|l| executor.probe(profile, &l))
                .map_err(|reason| StartError::SandboxProbe {
                    profile,
                    reason: reason.to_string(),
                })
        };
        let probe_online = probe(if default_profile == Profile::Strict {
            Profile::Standard
        } else {
            default_profile
        })?;
        let probe_offline = probe(Profile::Strict)?;
        let summary = if default_profile == Profile::Strict {
            probe_offline.summary()
        } else {
            probe_online.summary()
        };
        if summary.contains("DOWNGRADED") || summary.contains("OFF") {
            tracing::warn!("{summary}");
        } else {
            tracing::info!("{summary}");
        }
        let slots = usize::try_from(config.terminal.max_concurrent_commands())
            .unwrap_or(usize::MAX)
            .min(tokio::sync::Semaphore::MAX_PERMITS);
        Ok(TerminalCore {
            slots: tokio::sync::Semaphore::new(slots),
            env: Self::environment(&config, &jail, &home),
            config,
            policy,
            jail,
            redactor,
            recorder,
            executor,
            probe_online,
            probe_offline,
            explain_sandbox: Default::default(),
        })
    }

    /// What the start-up probe found for the policy's default profile.
    pub fn sandbox_probe(&self) -> &SandboxReport {
        if self.config.terminal.sandbox.profile == Profile::Strict {
            &self.probe_offline
        } else {
            &self.probe_online
        }
    }

    /// The configuration the core was started with.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The jail every command runs in.
    pub(crate) fn jail(&self) -> &Jail {
        &self.jail
    }

    /// Every command's environment before a caller's additions.
    pub(crate) fn base_env(&self) -> &[(String, String)] {
        &self.env
    }

    /// The audit recorder of this server.
    pub(crate) fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The redactor of every text this server sends or records.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
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
        self.recorder.refused(&quote(tool), arguments, &refusal)
    }

    /// Record a request the HTTP front refused before any tool saw it.
    pub fn record_http_refusal(&self, refusal: &crate::callers::HttpRefusal) {
        self.recorder.http_refused(refusal);
    }

    /// The answer to a tool this server does not have.
    pub fn unknown_tool(&self, name: &str) -> Envelope {
        let shown = quote(name);
        Envelope::new(
            &shown,
            ResultCode::InvalidRequest,
            format!("unknown tool '{shown}': this server has {RUN_COMMAND} and {EXPLAIN_COMMAND}"),
        )
    }

    /// Server instructions for the model: how to use the tools under this policy.
    pub fn instructions(&self) -> String {
        let allowed = self.config.terminal.allowlist.commands.join(", ");
        format!(
            "Runs allow-listed programs inside one folder (the jail) without a shell. \
             Pass one command per call, e.g. `ls -la` or `git log --oneline -n 5`; quoting works as \
             in sh, but pipes, redirection, `;`, `&&`, `$VAR`, `$(...)`, backticks and a leading \
             `~` are refused, so run one program at a time and filter its output yourself. \
             Nothing is expanded: `*`, `?` and `[...]` reach the program as written (`ls *.txt` \
             looks for a file named `*.txt`), so list the folder and name files yourself. \
             Paths must stay inside \
             the jail; `cwd` is relative to it. Allowed programs: {allowed}. Call explain_command \
             first when unsure: it says whether and why a command would run, without running it. \
             Every result has `ok`, `code` and `reason`; a refusal is final under this policy, so \
             do not retry the same command in another spelling."
        )
    }

    /// The profile's limits, tightened by `[terminal.limits]` and the caller (never widened).
    pub(crate) fn limits(
        &self,
        profile: Profile,
        timeout_override: Option<u64>,
    ) -> Result<ExecLimits, LimitsError> {
        let limits = &self.config.terminal.limits;
        effective_limits(
            profile,
            limits.timeout_seconds,
            limits.max_output_bytes,
            timeout_override,
        )
    }

    /// [`TerminalCore::expected_sandbox`] for explain_command (whose limits depend on the
    /// profile alone), built on first use and cloned after.
    fn explain_sandbox(&self, profile: Profile, limits: &ExecLimits) -> ExpectedSandbox {
        let cell = match profile {
            Profile::Strict => &self.explain_sandbox.strict,
            Profile::Standard => &self.explain_sandbox.standard,
            Profile::Permissive => &self.explain_sandbox.permissive,
        };
        cell.get_or_init(|| self.expected_sandbox(profile, limits))
            .clone()
    }

    /// `detail.sandbox` for explain_command: the call's profile and limits, the mechanisms
    /// the start-up probe found for a profile with the same network setting.
    pub(crate) fn expected_sandbox(
        &self,
        profile: Profile,
        limits: &ExecLimits,
    ) -> ExpectedSandbox {
        let probe = if limits.network {
            &self.probe_online
        } else {
            &self.probe_offline
        };
        let mut report = probe.clone();
        report.profile = profile;
        report.limits = LimitsReport::of(limits);
        ExpectedSandbox {
            report,
            source: ReportSource::StartUpProbe,
        }
    }

    /// A command's whole environment, the same for every call: `PATH`, `LANG`, `HOME` (an
    /// empty folder no command can write, not the jail root: a `~/.gitconfig`, `~/.ssh/config`
    /// or `~/.npmrc` a command wrote there would be obeyed by every later command), and the
    /// hardening variables of [`HARDENING_ENV`] and [`GIT_OVERRIDES`].
    fn environment(config: &Config, jail: &Jail, home: &std::path::Path) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = vec![
            ("PATH".into(), config.terminal.path().to_string()),
            ("HOME".into(), home.to_string_lossy().into_owned()),
            ("LANG".into(), config.terminal.lang().to_string()),
        ];
        env.extend(
            HARDENING_ENV
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        // git stops looking for a repository at the jail's parent: none above the jail is used.
        if let Some(parent) = jail.root().parent() {
            env.push((
                "GIT_CEILING_DIRECTORIES".into(),
                parent.to_string_lossy().into_owned(),
            ));
        }
        // Command-line level configuration (`git -c`), which wins over every config file,
        // including one a command planted in a repository it made itself.
        env.push(("GIT_CONFIG_COUNT".into(), GIT_OVERRIDES.len().to_string()));
        for (i, (key, value)) in GIT_OVERRIDES.iter().enumerate() {
            env.push((format!("GIT_CONFIG_KEY_{i}"), key.to_string()));
            env.push((format!("GIT_CONFIG_VALUE_{i}"), value.to_string()));
        }
        env
    }

    /// Stages 1–3: parse, evaluate, contain. Each stage runs once; a refusal says which one
    /// refused.
    fn vet(&self, command: &str, cwd: Option<&str>) -> Result<Vetted, Box<Refusal>> {
        let refuse =
            |code: ResultCode, reason: String, argv: Option<&Vec<String>>, decided_by: &str| {
                Box::new(Refusal {
                    code,
                    reason,
                    argv: argv.cloned(),
                    decided_by: decided_by.to_string(),
                })
            };
        let jail_refusal = |e: JailError, argv: &Vec<String>| {
            refuse(jail_code(&e), e.to_string(), Some(argv), "jail")
        };
        // parse_command refuses an over-long command before it reads a character.
        let argv =
            parse_command(command).map_err(|e| refuse(e.code(), e.to_string(), None, "parser"))?;
        let decision = self.policy.evaluate_argv(&argv);
        if !decision.allowed {
            return Err(refuse(
                decision.code,
                decision.reason,
                Some(&argv),
                &decision.decided_by,
            ));
        }
        let contained = self
            .jail
            .resolve_cwd(cwd)
            .map_err(|e| jail_refusal(e, &argv))?;
        let args = argv.get(1..).unwrap_or_default();
        self.jail
            .check_args(&contained, args)
            .map_err(|e| jail_refusal(e, &argv))?;
        let argv0 = argv.first().cloned().unwrap_or_default();
        let program = self
            .policy
            .resolve_program(&argv0, contained.absolute())
            .map_err(|d| refuse(d.code, d.reason, Some(&argv), &d.decided_by))?;
        // An HTTP caller with a stricter profile runs under it.
        let profile = crate::callers::tighten(
            decision
                .profile
                .unwrap_or(self.config.terminal.sandbox.profile),
        );
        Ok(Vetted {
            argv,
            program,
            cwd: contained,
            reason: decision.reason,
            decided_by: decision.decided_by,
            profile,
        })
    }

    /// SHA-256 over the canonical form of a call: executable, argv, cwd, environment.
    fn canonical_hash(vetted: &Vetted, env: &[(String, String)]) -> String {
        let canonical = json!({
            "executable": vetted.program.to_string_lossy(),
            "argv": vetted.argv,
            "cwd": vetted.cwd.absolute().to_string_lossy(),
            "env": env,
        });
        let mut bytes = Vec::new();
        crate::audit::canonical_json(&canonical, &mut bytes);
        hex::encode(Sha256::digest(&bytes))
    }

    /// `explain_command`: the same parse, evaluation and containment as `run_command`, then
    /// return before the executor. Detail never holds stdout, stderr or an exit code.
    pub fn explain_command(&self, args: Option<&Map<String, Value>>) -> Envelope {
        let call = self
            .recorder
            .call(EXPLAIN_COMMAND, record_fields(args, None));
        let envelope = match CommandArgs::from_json(EXPLAIN_COMMAND, args) {
            Err(e) => {
                CallError::from(e).envelope(EXPLAIN_COMMAND, |_, _: &mut ExplainCommandDetail| {})
            }
            Ok(a) => self.explain_vetted(&a),
        };
        // explain changes nothing, so its record is written before the reply (a crash of
        // the server cannot lose it) and fsync'ed behind it, grouped with others.
        call.finish(envelope, Map::new(), Durability::Behind)
    }

    fn explain_vetted(&self, a: &CommandArgs) -> Envelope<ExplainCommandDetail> {
        let v = match self.vet(&a.command, a.cwd.as_deref()) {
            Ok(v) => v,
            Err(refusal) => {
                let Refusal {
                    code,
                    reason,
                    argv,
                    decided_by,
                } = *refusal;
                let detail = ExplainCommandDetail {
                    decision: Some(Decision::Deny),
                    // The argv goes back to the client: redacted, as every text that leaves.
                    argv: argv.map(|a| self.redactor.redact_argv(&a)),
                    decided_by: Some(decided_by),
                    would_run: Some(false),
                    ..Default::default()
                };
                return Envelope::with(EXPLAIN_COMMAND, code, reason, detail);
            }
        };
        let limits = match self.limits(v.profile, None) {
            Ok(l) => l,
            Err(e) => return CallError::ProfileLimits(e).envelope(EXPLAIN_COMMAND, |_, _| {}),
        };
        let detail = ExplainCommandDetail {
            decision: Some(Decision::Allow),
            decided_by: Some(v.decided_by.clone()),
            would_run: Some(true),
            executable: Some(v.program.to_string_lossy().into_owned()),
            cwd: Some(v.cwd.relative().to_string_lossy().into_owned()),
            // The profile and its limits are in `sandbox`, as in run_command's detail.
            sandbox: Some(self.explain_sandbox(v.profile, &limits)),
            canonical_hash: Some(Self::canonical_hash(&v, &self.env)),
            argv: Some(self.redactor.redact_argv(&v.argv)),
        };
        Envelope::with(EXPLAIN_COMMAND, ResultCode::Ok, v.reason, detail)
    }

    /// `run_command`: vet, record intent (fail-closed), run, redact then truncate, record outcome.
    pub async fn run_command(
        &self,
        args: Option<&Map<String, Value>>,
        cancel: &CancellationToken,
    ) -> Envelope {
        let request_id = uuid::Uuid::new_v4().to_string();
        let mut call = self
            .recorder
            .call(RUN_COMMAND, record_fields(args, Some(&request_id)));
        // Held until the outcome is recorded; dropped (freeing the slot) when this future
        // ends, also when the client cancels it.
        let mut slot = None;
        let result = match CommandArgs::from_json(RUN_COMMAND, args) {
            Err(e) => Err(CallError::from(e)),
            // A model can start any number of calls at once; without a limit each holds a
            // process tree, its memory and output buffers. Over the limit nothing queues:
            // the call is answered now and the model decides what to do.
            Ok(a) => match self.try_slot() {
                Ok(permit) => {
                    slot = Some(permit);
                    self.run_vetted(&a, &mut call, cancel).await
                }
                Err(busy) => Err(busy),
            },
        };
        let envelope = result.unwrap_or_else(|e| {
            e.envelope(RUN_COMMAND, |report, d: &mut RunCommandDetail| {
                d.set_sandbox(report);
            })
        });
        let recorded = envelope.detail.record_fields();
        let envelope = call.finish(envelope, recorded, Durability::Now);
        drop(slot);
        envelope
    }

    async fn run_vetted(
        &self,
        a: &CommandArgs,
        call: &mut Call<'_>,
        cancel: &CancellationToken,
    ) -> Result<Envelope<RunCommandDetail>, CallError> {
        let vetted = self
            .vet(&a.command, a.cwd.as_deref())
            .map_err(CallError::Refused)?;
        let limits = self
            .limits(vetted.profile, a.timeout_seconds)
            .map_err(CallError::Limits)?;
        let mut intent = Map::new();
        intent.insert(
            "argv".into(),
            json!(self.redactor.redact_argv(&vetted.argv)),
        );
        intent.insert("executable".into(), json!(vetted.program.to_string_lossy()));
        intent.insert("cwd".into(), json!(vetted.cwd.relative().to_string_lossy()));
        intent.insert(
            "canonical_hash".into(),
            json!(Self::canonical_hash(&vetted, &self.env)),
        );
        intent.insert("profile".into(), json!(vetted.profile.name()));
        let job = Job {
            program: &vetted.program,
            argv: &vetted.argv,
            cwd: &vetted.cwd,
            env: self.env.clone(),
            profile: vetted.profile,
            limits,
            hash_output: false,
        };
        let ran = self.execute(&job, intent, call, cancel).await?;
        let (code, reason) = ran.code_and_reason(&vetted.argv, &vetted.reason, &limits);
        let truncated = ran.truncated();
        let mut detail = RunCommandDetail {
            exit_code: Some(ran.outcome.exit_code),
            signal: ran.outcome.signal,
            killed: ran.outcome.stop != Stop::Exited,
            truncated,
            stdout_truncated_bytes: truncated.then_some(ran.stdout.omitted_bytes),
            stderr_truncated_bytes: truncated.then_some(ran.stderr.omitted_bytes),
            output_incomplete: ran.outcome.drain_abandoned,
            ..Default::default()
        };
        detail.set_sandbox(ran.outcome.sandbox);
        detail.stdout = Some(ran.stdout.text);
        detail.stderr = Some(ran.stderr.text);
        Ok(Envelope::with(RUN_COMMAND, code, reason, detail))
    }

    /// A slot of `[terminal] max_concurrent_commands`, held while a command runs; `Err` with
    /// the refusal when every slot is taken (nothing queues).
    pub(crate) fn try_slot(&self) -> Result<tokio::sync::SemaphorePermit<'_>, CallError> {
        self.slots
            .try_acquire()
            .map_err(|_| CallError::Busy(self.config.terminal.max_concurrent_commands()))
    }

    /// Steps four to six of every command, whichever server allowed it: the intent record
    /// (fail-closed: the command waits before `execve` until it is durable, and never runs
    /// when it cannot be), the run in the sandbox, then terminal escapes stripped, secrets
    /// redacted and the output cut, in that order.
    pub(crate) async fn execute(
        &self,
        job: &Job<'_>,
        intent: Map<String, Value>,
        call: &mut Call<'_>,
        cancel: &CancellationToken,
    ) -> Result<Ran, CallError> {
        // Fail-closed: nothing runs before the intent record is durable. The line is written
        // now; the command's process is created and sandboxed while the disk syncs, and
        // waits at a gate before `execve` that opens only once the fdatasync succeeded.
        let (gate, opener) = Gate::new().map_err(CallError::Gate)?;
        let pending = call.intent_gated(intent, opener)?;
        let request = ExecRequest {
            program: job.program.to_path_buf(),
            argv0: job.argv.first().cloned().unwrap_or_default(),
            args: job.argv.get(1..).unwrap_or_default().to_vec(),
            cwd: job.cwd,
            env: job.env.clone(),
            profile: job.profile,
            limits: job.limits,
            gate: pending.gated().then_some(&gate),
            hash_output: job.hash_output,
        };
        let started = std::time::Instant::now();
        let run = self.executor.run(&request, cancel).await;
        let run_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        call.settle(pending)?;
        let outcome = run?;
        // Strip terminal escapes, redact, then truncate: in that order, always (a key that
        // `grep --color=always` wraps in escapes is found, and no escape reaches the client).
        let cap = job.limits.max_output_bytes;
        let stdout = self
            .redactor
            .strip_redact_then_truncate(&outcome.stdout, cap);
        let stderr = self
            .redactor
            .strip_redact_then_truncate(&outcome.stderr, cap);
        Ok(Ran {
            outcome,
            stdout,
            stderr,
            run_ms,
        })
    }
}

/// A command the policy allowed and the jail contained, ready for
/// [`TerminalCore::execute`].
pub(crate) struct Job<'a> {
    /// The resolved program.
    pub(crate) program: &'a std::path::Path,
    /// The argv, argv\[0\] first.
    pub(crate) argv: &'a [String],
    /// The contained working folder.
    pub(crate) cwd: &'a crate::jail::ContainedDir,
    /// The whole environment of the command.
    pub(crate) env: Vec<(String, String)>,
    /// The profile its limits came from.
    pub(crate) profile: Profile,
    /// Its limits.
    pub(crate) limits: ExecLimits,
    /// Hash every byte of each stream as well.
    pub(crate) hash_output: bool,
}

/// A command that ran: its outcome and each stream as it may leave (redacted, then cut).
pub(crate) struct Ran {
    pub(crate) outcome: crate::exec::ExecOutcome,
    pub(crate) stdout: crate::redact::Truncated,
    pub(crate) stderr: crate::redact::Truncated,
    /// How long the command ran, in milliseconds (from its start to the end of the drain).
    pub(crate) run_ms: u64,
}

impl Ran {
    /// Whether an output was cut (or the command stopped for endless output).
    pub(crate) fn truncated(&self) -> bool {
        self.stdout.omitted_bytes > 0
            || self.stderr.omitted_bytes > 0
            || self.outcome.stop == Stop::Overflowed
    }

    /// The envelope's code and reason for how the command ended; `ok_reason` is the
    /// policy's reason for a command that simply exited.
    pub(crate) fn code_and_reason(
        &self,
        argv: &[String],
        ok_reason: &str,
        limits: &ExecLimits,
    ) -> (ResultCode, String) {
        let (outcome, stdout, stderr) = (&self.outcome, &self.stdout, &self.stderr);
        let program = argv
            .first()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .unwrap_or("");
        match outcome.stop {
            Stop::TimedOut => (
                ResultCode::Timeout,
                format!(
                    "'{program}' ran past its {} timeout; its whole process tree was killed",
                    shown_duration(limits.timeout)
                ),
            ),
            Stop::Cancelled => (
                ResultCode::OperationFailed,
                format!(
                    "'{program}' was cancelled by the client; its whole process tree was killed"
                ),
            ),
            Stop::Overflowed => (
                ResultCode::OutputTruncated,
                format!(
                    "'{program}' was stopped and its whole process tree killed: it kept writing \
                     past {} bytes on one stream, the most that is read from a command (16 \
                     times the {}-byte output cap, and at least 1 MiB); {}",
                    limits.overflow_kill_bytes(),
                    limits.max_output_bytes,
                    kept_streams(&[
                        ("stdout", outcome.stdout.total, stdout.omitted_bytes),
                        ("stderr", outcome.stderr.total, stderr.omitted_bytes),
                    ])
                ),
            ),
            Stop::Exited if stdout.omitted_bytes > 0 || stderr.omitted_bytes > 0 => (
                ResultCode::OutputTruncated,
                format!(
                    "{ok_reason}; its output was longer than the {}-byte cap per stream, so the \
                     middle was cut: {}",
                    limits.max_output_bytes,
                    kept_streams(&[
                        ("stdout", outcome.stdout.total, stdout.omitted_bytes),
                        ("stderr", outcome.stderr.total, stderr.omitted_bytes),
                    ])
                ),
            ),
            Stop::Exited => (ResultCode::Ok, ok_reason.to_string()),
        }
    }
}

/// A time limit as a reason shows it: whole seconds (`30 s`), or milliseconds when it is not
/// a whole number of seconds (`500 ms`, `1500 ms`).
fn shown_duration(d: std::time::Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// What was kept of each cut stream, e.g. `stdout: 65536 of the 1089536 bytes read are kept
/// (its start and its end)`, for `(name, bytes read, bytes left out)`; uncut streams are
/// not named.
fn kept_streams(streams: &[(&str, u64, u64)]) -> String {
    let cut: Vec<String> = streams
        .iter()
        .filter(|(_, _, omitted)| *omitted > 0)
        .map(|(name, total, omitted)| {
            format!(
                "{name}: {} of the {total} bytes read are kept (its start and its end)",
                total.saturating_sub(*omitted)
            )
        })
        .collect();
    cut.join("; ")
}

/// Variables every command gets besides `PATH`, `HOME` and `LANG`: no system or global git
/// configuration, no pager, no prompt, no editor, no colour, no optional index writes.
pub const HARDENING_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_EDITOR", "false"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
];

/// git settings given as command-line configuration (`GIT_CONFIG_KEY_n`): each names a
/// program git would run, set back to a harmless one whatever a repository's config says.
pub const GIT_OVERRIDES: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("gpg.program", "gpg"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.x509.program", "gpgsm"),
    ("safe.bareRepository", "explicit"),
    ("protocol.ext.allow", "never"),
    ("protocol.file.allow", "user"),
    ("color.ui", "never"),
];

/// The empty folder every command gets as `HOME`: `<temp>/safe-mcp-home-<uid>`, outside the
/// jail, shared by every server of this uid (so none is left behind by a server that is
/// killed), mode 0555 and owned by the server, so a command's uid cannot write it (in the
/// view it is read-only besides). Made when missing; a path that is anything else (a
/// symlink, another owner, another mode, not empty: someone else's folder, or one a command
/// wrote to) is an error that names it.
fn empty_home() -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let euid = rustix::process::geteuid().as_raw();
    let path = std::env::temp_dir().join(format!("safe-mcp-home-{euid}"));
    match std::fs::DirBuilder::new().mode(0o555).create(&path) {
        Ok(()) => std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o555))?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&path)?;
    let empty = std::fs::read_dir(&path)?.next().is_none();
    if !meta.is_dir() || meta.uid() != euid || meta.mode() & 0o7777 != 0o555 || !empty {
        return Err(std::io::Error::other(format!(
            "{} is not an empty folder of mode 0555 owned by uid {euid}: remove it",
            path.display()
        )));
    }
    Ok(path)
}

/// The uid and gid commands run as (`None`: the server's own). A root server never runs a
/// command as root: it uses `run_as` (a user name or `UID:GID`), else the jail root's owner;
/// a root-owned jail with no `run_as` is an error that names the fix. A server that is not
/// root cannot switch, so a `run_as` other than itself is an error too.
fn command_identity(
    run_as: Option<&str>,
    jail_root: &std::path::Path,
) -> Result<Option<(u32, u32)>, StartError> {
    use std::os::unix::fs::MetadataExt;
    let euid = rustix::process::geteuid().as_raw();
    let wanted = run_as.map(parse_identity).transpose()?;
    if euid != 0 {
        return match wanted {
            Some((uid, _)) if uid != euid => Err(StartError::Identity(format!(
                "[terminal.sandbox] run_as = {uid} needs a server started as root (this one runs as uid {euid})"
            ))),
            _ => Ok(None),
        };
    }
    let (uid, gid) = match wanted {
        Some(id) => id,
        None => {
            let meta = std::fs::metadata(jail_root)
                .map_err(|e| StartError::Identity(format!("cannot stat the jail root: {e}")))?;
            (meta.uid(), meta.gid())
        }
    };
    if uid == 0 {
        return Err(StartError::Identity(format!(
            "the server runs as root and commands would run as root: set [terminal.sandbox] \
             run_as = \"USER\" (or \"UID:GID\", or SAFE_MCP_RUN_AS), or give the jail '{}' to \
             the unprivileged user commands should run as (chown)",
            jail_root.display()
        )));
    }
    Ok(Some((uid, gid)))
}

/// `run_as`: `UID:GID` (numbers), or a user name (its primary group).
fn parse_identity(text: &str) -> Result<(u32, u32), StartError> {
    if let Some((u, g)) = text.split_once(':')
        && let (Ok(uid), Ok(gid)) = (u.parse::<u32>(), g.parse::<u32>())
    {
        return Ok((uid, gid));
    }
    match nix::unistd::User::from_name(text) {
        Ok(Some(user)) => Ok((user.uid.as_raw(), user.gid.as_raw())),
        Ok(None) => Err(StartError::Identity(format!(
            "[terminal.sandbox] run_as: no user '{text}' (give a user name or UID:GID)"
        ))),
        Err(e) => Err(StartError::Identity(format!(
            "[terminal.sandbox] run_as: looking up '{text}': {e}"
        ))),
    }
}

/// The code of a containment refusal.
fn jail_code(e: &JailError) -> ResultCode {
    match e {
        JailError::Escape { .. } | JailError::ArgEscape { .. } => ResultCode::PathEscape,
        JailError::Invalid { .. } => ResultCode::InvalidRequest,
        JailError::Root { .. } => ResultCode::InternalError,
    }
}

/// What every record of a terminal call carries besides `tool` and `event`: its arguments
/// (and the request id of a run). The audit module redacts every string before it is hashed
/// and written. A 1 MiB argument must not become a 1 MiB audit record: past its bound only
/// its size is kept.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(tool: &str, args: Value) -> String {
        match CommandArgs::from_json(tool, args.as_object()) {
            Ok(a) => panic!("accepted: {a:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn busy_counts_agree_with_their_verb() {
        assert!(
            CallError::Busy(1)
                .to_string()
                .starts_with("1 command is already running, the most this server runs at once")
        );
        assert!(
            CallError::Busy(2)
                .to_string()
                .starts_with("2 commands are already running, ")
        );
    }

    #[test]
    fn argument_errors_name_the_argument_and_what_it_must_be() {
        assert_eq!(
            reason(RUN_COMMAND, json!({})),
            "missing required argument 'command': it must be a string: one command line, e.g. \
             \"ls -la\""
        );
        assert_eq!(
            reason(RUN_COMMAND, json!({"command": 5})),
            "'command' must be a string: one command line, e.g. \"ls -la\"; got a number"
        );
        assert_eq!(
            reason(RUN_COMMAND, json!({"command": "ls", "cwd": true})),
            "'cwd' must be a string: the working folder, relative to the jail; got a boolean"
        );
        assert_eq!(
            reason(
                RUN_COMMAND,
                json!({"command": "ls", "timeout_seconds": "5"})
            ),
            "'timeout_seconds' must be a whole number of seconds, at least 1; got a string"
        );
        for bad in [json!(0), json!(-3), json!(2.5)] {
            let shown = bad.to_string();
            assert_eq!(
                reason(
                    RUN_COMMAND,
                    json!({"command": "ls", "timeout_seconds": bad})
                ),
                format!(
                    "'timeout_seconds' must be a whole number of seconds, at least 1 (and at \
                     most the policy's timeout: a call may only lower it); got {shown}"
                )
            );
        }
        assert_eq!(
            reason(
                EXPLAIN_COMMAND,
                json!({"command": "ls", "timeout_seconds": 5})
            ),
            "unknown argument 'timeout_seconds': 'explain_command' takes only command, cwd"
        );
        assert_eq!(
            reason(RUN_COMMAND, json!({"command": "ls", "x\ny": 1})),
            "unknown argument 'x\\ny': 'run_command' takes only command, cwd, timeout_seconds"
        );
        let ok = CommandArgs::from_json(
            RUN_COMMAND,
            json!({"command": "ls", "cwd": null, "timeout_seconds": 3}).as_object(),
        );
        assert_eq!(
            ok,
            Ok(CommandArgs {
                command: "ls".into(),
                cwd: None,
                timeout_seconds: Some(3),
            })
        );
    }
}
