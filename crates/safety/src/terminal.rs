//! The terminal server's request flow: parse → evaluate → contain → record intent → run →
//! redact then truncate → record outcome. The MCP wiring hands over the raw JSON arguments
//! and returns the [`Envelope`] it gets back; it decides nothing.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::audit::AuditLog;
use crate::config::{AuditFailMode, Config};
use crate::exec::filesystem;
use crate::exec::profile::{Profile, effective_limits};
use crate::exec::sandbox::limits_json;
use crate::exec::{ExecLimits, ExecRequest, Executor, Gate, SandboxConfig, SandboxReport, Stop};
use crate::jail::{Jail, JailError};
use crate::parse::{MAX_COMMAND_BYTES, parse_command};
use crate::policy::{PolicyError, TerminalPolicy};
use crate::protocol::{self, MAX_PATH_ARG_BYTES, check_len, json_type, quote};
use crate::redact::{RedactError, Redactor};
use crate::result::{Envelope, ResultCode};

/// Tool name of the command runner.
pub const RUN_COMMAND: &str = "run_command";
/// Tool name of the dry run.
pub const EXPLAIN_COMMAND: &str = "explain_command";

/// The terminal server could not start.
#[derive(Debug, thiserror::Error)]
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
    /// The configuration was validated for another server.
    #[error("configuration was not loaded for the terminal server")]
    WrongServer,
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

/// Arguments of `run_command` / `explain_command`, checked by hand so that every malformed
/// request still gets an envelope (`INVALID_REQUEST`) instead of a protocol error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandArgs {
    /// The command string.
    pub command: String,
    /// Optional working folder inside the jail.
    pub cwd: Option<String>,
    /// Optional lower timeout for this call (run_command only).
    pub timeout_seconds: Option<u64>,
}

impl CommandArgs {
    /// Read the arguments object; unknown fields and wrong types are refused with a reason.
    pub fn from_json(tool: &str, args: Option<&Map<String, Value>>) -> Result<Self, String> {
        let empty = Map::new();
        let args = args.unwrap_or(&empty);
        let allowed: &[&str] = if tool == RUN_COMMAND {
            &["command", "cwd", "timeout_seconds"]
        } else {
            &["command", "cwd"]
        };
        // An argument name is quoted only as a short prefix: a 1 MiB key must not come back.
        if let Some(unknown) = args.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!(
                "unknown argument '{}' (expected {})",
                quote(unknown),
                allowed.join(", ")
            ));
        }
        let command = match args.get("command") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(format!(
                    "'command' must be a string, got {}",
                    json_type(other)
                ));
            }
            None => return Err("missing required argument 'command'".into()),
        };
        let cwd = match args.get("cwd") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => {
                // A 1 MiB cwd would be echoed by every later reason and the audit record.
                check_len("cwd", s, MAX_PATH_ARG_BYTES)?;
                Some(s.clone())
            }
            Some(other) => return Err(format!("'cwd' must be a string, got {}", json_type(other))),
        };
        let timeout_seconds = match args.get("timeout_seconds") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(t) if t >= 1 => Some(t),
                _ => return Err("'timeout_seconds' must be a whole number of at least 1".into()),
            },
            Some(other) => {
                return Err(format!(
                    "'timeout_seconds' must be a number, got {}",
                    json_type(other)
                ));
            }
        };
        Ok(CommandArgs {
            command,
            cwd,
            timeout_seconds,
        })
    }
}

/// The bound of each string argument of the terminal tools (docs/protocol.md); the
/// audit record keeps a value within it whole and only the size of a longer one.
const ARGUMENT_BOUNDS: &[(&str, usize)] =
    &[("command", MAX_COMMAND_BYTES), ("cwd", MAX_PATH_ARG_BYTES)];

/// The audit log as the flow uses it: opened at start-up ([`AuditLog::open_for_server`]:
/// under `audit_fail_mode = "closed"` a log that cannot be opened stops the start), and
/// reopened after a failed append (or, under "open", one that failed at start-up), so a log
/// that cannot be written makes operations fail closed.
#[derive(Debug)]
struct AuditSink {
    config: Config,
    redactor: Arc<Redactor>,
    log: Mutex<Option<Arc<AuditLog>>>,
}

impl AuditSink {
    /// Append durably (`fdatasync` before returning).
    fn append(&self, record: Map<String, Value>) -> Result<(), String> {
        self.with_log(|log| log.append(record))
    }

    /// Append, with the `fdatasync` done behind the reply (see
    /// [`AuditLog::append_sync_behind`]): for calls that change nothing.
    fn append_sync_behind(&self, record: Map<String, Value>) -> Result<(), String> {
        self.with_log(|log| log.append_sync_behind(record))
    }

    /// Write now, call `then` once durable (see [`AuditLog::append_then`]).
    fn append_then(
        &self,
        record: Map<String, Value>,
        then: impl FnOnce(Result<(), String>) + Send + 'static,
    ) -> Result<(), String> {
        self.with_log(|log| log.append_then(record, then))
    }

    fn with_log(
        &self,
        append: impl FnOnce(&AuditLog) -> Result<(), crate::audit::AuditError>,
    ) -> Result<(), String> {
        let log = {
            let mut guard = self
                .log
                .lock()
                .map_err(|_| "audit log lock poisoned".to_string())?;
            match guard.as_ref() {
                Some(log) => log.clone(),
                None => {
                    let log = Arc::new(
                        AuditLog::open_configured(&self.config, self.redactor.clone())
                            .map_err(|e| e.to_string())?,
                    );
                    *guard = Some(log.clone());
                    log
                }
            }
        };
        append(&log).map_err(|e| {
            // Drop the handle so the next call reopens (the chain is re-read from disk);
            // except a log found replaced under the writer: reopening it here would start a
            // new chain with no trace of the gap, so every later call fails the same way.
            if !matches!(e, crate::audit::AuditError::Replaced { .. })
                && let Ok(mut guard) = self.log.lock()
            {
                *guard = None;
            }
            e.to_string()
        })
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
    audit: Arc<AuditSink>,
    executor: Executor,
    /// What the start-up probe found, for a network-on and a network-off profile.
    probe_online: SandboxReport,
    probe_offline: SandboxReport,
    /// explain_command's `detail.sandbox` per profile: a function of the profile, the policy
    /// and the start-up probe alone, so built once.
    explain_sandbox: PerProfile<std::sync::OnceLock<Value>>,
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
struct Refusal {
    envelope: Envelope,
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
            .ok_or(StartError::WrongServer)?
            .to_path_buf();
        let policy = TerminalPolicy::new(&config.terminal)?;
        let jail = Jail::open(&root)?;
        let redactor = Arc::new(Redactor::new(&config.redaction)?);
        // Opened now, not on the first call: a server that cannot record must not say
        // "ready" and then answer every call AUDIT_UNAVAILABLE.
        let (log, _unavailable) = AuditLog::open_for_server(&config, redactor.clone())?;
        let audit = Arc::new(AuditSink {
            config: config.clone(),
            redactor: redactor.clone(),
            log: Mutex::new(log.map(Arc::new)),
        });
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
        let default_profile = Profile::from_name(&settings.profile).unwrap_or(Profile::Strict);
        let probe = |p: Profile| {
            let limits = effective_limits(
                p,
                config.terminal.limits.timeout_seconds,
                config.terminal.limits.max_output_bytes,
                None,
            );
            limits.map(|l| executor.probe(p, &l))
        };
        let probe_online = probe(if default_profile == Profile::Strict {
            Profile::Standard
        } else {
            default_profile
        })
        .map_err(|_| StartError::WrongServer)?;
        let probe_offline = probe(Profile::Strict).map_err(|_| StartError::WrongServer)?;
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
            audit,
            executor,
            probe_online,
            probe_offline,
            explain_sandbox: Default::default(),
        })
    }

    /// What the start-up probe found for the policy's default profile.
    pub fn sandbox_probe(&self) -> &SandboxReport {
        if Profile::from_name(&self.config.terminal.sandbox.profile) == Some(Profile::Strict) {
            &self.probe_offline
        } else {
            &self.probe_online
        }
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
             in sh, but pipes, redirection, `;`, `&&`, `$VAR`, `$(...)` and globbing are refused, \
             so run one program at a time and filter its output yourself. Paths must stay inside \
             the jail; `cwd` is relative to it. Allowed programs: {allowed}. Call explain_command \
             first when unsure: it says whether and why a command would run, without running it. \
             Every result has `ok`, `code` and `reason`; a refusal is final under this policy, so \
             do not retry the same command in another spelling."
        )
    }

    /// The profile's limits, tightened by `[terminal.limits]` and the caller (never widened).
    fn limits(
        &self,
        profile: Profile,
        timeout_override: Option<u64>,
    ) -> Result<ExecLimits, String> {
        let limits = &self.config.terminal.limits;
        effective_limits(
            profile,
            limits.timeout_seconds,
            limits.max_output_bytes,
            timeout_override,
        )
        .map_err(|e| e.to_string())
    }

    /// [`TerminalCore::expected_sandbox`] for explain_command (whose limits depend on the
    /// profile alone), built on first use and cloned after.
    fn explain_sandbox(&self, profile: Profile, limits: &ExecLimits) -> Value {
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
    fn expected_sandbox(&self, profile: Profile, limits: &ExecLimits) -> Value {
        let probe = if limits.network {
            &self.probe_online
        } else {
            &self.probe_offline
        };
        let mut report = probe.clone();
        report.profile = profile;
        report.limits = limits_json(limits);
        let mut value = report.to_value();
        if let Value::Object(map) = &mut value {
            map.insert("source".into(), json!("start-up probe"));
        }
        value
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
    /// refused (its envelope has no detail).
    fn vet(&self, action: &str, command: &str, cwd: Option<&str>) -> Result<Vetted, Box<Refusal>> {
        let refuse = |envelope: Envelope, argv: Option<&Vec<String>>, decided_by: &str| {
            Box::new(Refusal {
                envelope,
                argv: argv.cloned(),
                decided_by: decided_by.to_string(),
            })
        };
        if command.len() > MAX_COMMAND_BYTES {
            let reason = format!(
                "command is {} bytes; the limit is {MAX_COMMAND_BYTES}",
                command.len()
            );
            let envelope = Envelope::new(action, ResultCode::InvalidRequest, reason);
            return Err(refuse(envelope, None, "parser"));
        }
        let argv = parse_command(command).map_err(|e| {
            refuse(
                Envelope::new(action, e.code(), e.to_string()),
                None,
                "parser",
            )
        })?;
        let decision = self.policy.evaluate_argv(&argv);
        if !decision.allowed {
            let envelope = Envelope::new(action, decision.code, decision.reason);
            return Err(refuse(envelope, Some(&argv), &decision.decided_by));
        }
        let contained = self
            .jail
            .resolve_cwd(cwd)
            .map_err(|e| refuse(jail_envelope(action, e), Some(&argv), "jail"))?;
        let args = argv.get(1..).unwrap_or_default();
        self.jail
            .check_args(&contained, args)
            .map_err(|e| refuse(jail_envelope(action, e), Some(&argv), "jail"))?;
        let argv0 = argv.first().cloned().unwrap_or_default();
        let program = self
            .policy
            .resolve_program(&argv0, contained.absolute())
            .map_err(|d| {
                refuse(
                    Envelope::new(action, d.code, d.reason),
                    Some(&argv),
                    &d.decided_by,
                )
            })?;
        let profile_name = decision
            .profile
            .clone()
            .unwrap_or_else(|| self.config.terminal.sandbox.profile.clone());
        // Names are validated at start-up; should one slip through, the tightest applies.
        let profile = Profile::from_name(&profile_name).unwrap_or(Profile::Strict);
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
        let started = Instant::now();
        let mut envelope = match CommandArgs::from_json(EXPLAIN_COMMAND, args) {
            Err(reason) => Envelope::new(EXPLAIN_COMMAND, ResultCode::InvalidRequest, reason),
            Ok(a) => self.explain_vetted(&a),
        };
        envelope.reason = protocol::clip_reason(envelope.reason);
        envelope.duration_ms = elapsed_ms(started);
        let mut record = base_record(EXPLAIN_COMMAND, "outcome", args);
        record.insert("code".into(), json!(envelope.code));
        record.insert("reason".into(), json!(envelope.reason));
        record.insert("duration_ms".into(), json!(envelope.duration_ms));
        // explain changes nothing, so its record is written before the reply (a crash of
        // the server cannot lose it) and fsync'ed behind it, grouped with others.
        if let Err(e) = self.audit.append_sync_behind(record) {
            envelope.set("audit", format!("unavailable: {e}"));
        }
        envelope
    }

    fn explain_vetted(&self, a: &CommandArgs) -> Envelope {
        match self.vet(EXPLAIN_COMMAND, &a.command, a.cwd.as_deref()) {
            Err(refusal) => {
                let mut e = refusal.envelope;
                e.set("decision", "deny");
                if let Some(argv) = refusal.argv {
                    e.set("argv", json!(argv));
                }
                e.set("decided_by", refusal.decided_by);
                e.set("would_run", false);
                e
            }
            Ok(v) => {
                let limits = match self.limits(v.profile, None) {
                    Ok(l) => l,
                    Err(reason) => {
                        return Envelope::new(EXPLAIN_COMMAND, ResultCode::InternalError, reason);
                    }
                };
                let mut e = Envelope::new(EXPLAIN_COMMAND, ResultCode::Ok, v.reason.clone());
                e.set("argv", json!(v.argv));
                e.set("decision", "allow");
                e.set("decided_by", v.decided_by.clone());
                e.set("would_run", true);
                e.set("executable", v.program.to_string_lossy().into_owned());
                e.set("cwd", v.cwd.relative().to_string_lossy().into_owned());
                // The profile and its limits are in `sandbox`, as in run_command's detail.
                e.set("sandbox", self.explain_sandbox(v.profile, &limits));
                e.set("canonical_hash", Self::canonical_hash(&v, &self.env));
                e
            }
        }
    }

    /// `run_command`: vet, record intent (fail-closed), run, redact then truncate, record outcome.
    pub async fn run_command(
        &self,
        args: Option<&Map<String, Value>>,
        cancel: &CancellationToken,
    ) -> Envelope {
        let started = Instant::now();
        let request_id = uuid::Uuid::new_v4().to_string();
        // Held until the outcome is recorded; dropped (freeing the slot) when this future
        // ends, also when the client cancels it.
        let mut slot = None;
        let mut envelope = match CommandArgs::from_json(RUN_COMMAND, args) {
            Err(reason) => Envelope::new(RUN_COMMAND, ResultCode::InvalidRequest, reason),
            // A model can start any number of calls at once; without a limit each holds a
            // process tree, its memory and output buffers. Over the limit nothing queues:
            // the call is answered now and the model decides what to do.
            Ok(a) => match self.slots.try_acquire() {
                Ok(permit) => {
                    slot = Some(permit);
                    self.run_vetted(&a, args, &request_id, cancel).await
                }
                Err(_) => Envelope::new(
                    RUN_COMMAND,
                    ResultCode::Busy,
                    format!(
                        "{} commands are already running, the most this server runs at once \
                         ([terminal] max_concurrent_commands); nothing ran: call again when \
                         one has finished",
                        self.config.terminal.max_concurrent_commands()
                    ),
                ),
            },
        };
        envelope.reason = protocol::clip_reason(envelope.reason);
        envelope.duration_ms = elapsed_ms(started);
        let mut record = base_record(RUN_COMMAND, "outcome", args);
        record.insert("request_id".into(), json!(request_id));
        record.insert("code".into(), json!(envelope.code));
        record.insert("reason".into(), json!(envelope.reason));
        record.insert("duration_ms".into(), json!(envelope.duration_ms));
        for key in [
            "exit_code",
            "signal",
            "stdout_truncated_bytes",
            "stderr_truncated_bytes",
            "killed",
            "sandbox",
        ] {
            if let Some(v) = envelope.detail.get(key) {
                record.insert(key.into(), v.clone());
            }
        }
        if let Err(e) = self.audit.append(record) {
            envelope.set("audit", format!("unavailable: {e}"));
        }
        drop(slot);
        envelope
    }

    async fn run_vetted(
        &self,
        a: &CommandArgs,
        raw: Option<&Map<String, Value>>,
        request_id: &str,
        cancel: &CancellationToken,
    ) -> Envelope {
        let vetted = match self.vet(RUN_COMMAND, &a.command, a.cwd.as_deref()) {
            Ok(v) => v,
            Err(refusal) => return refusal.envelope,
        };
        let limits = match self.limits(vetted.profile, a.timeout_seconds) {
            Ok(l) => l,
            Err(reason) => return Envelope::new(RUN_COMMAND, ResultCode::InvalidRequest, reason),
        };
        // Intent before anything runs. Fail-closed: no record, no run.
        let mut intent = base_record(RUN_COMMAND, "intent", raw);
        intent.insert("request_id".into(), json!(request_id));
        intent.insert("argv".into(), json!(vetted.argv));
        intent.insert("executable".into(), json!(vetted.program.to_string_lossy()));
        intent.insert("cwd".into(), json!(vetted.cwd.relative().to_string_lossy()));
        intent.insert(
            "canonical_hash".into(),
            json!(Self::canonical_hash(&vetted, &self.env)),
        );
        intent.insert("profile".into(), json!(vetted.profile.name()));
        // Fail-closed: nothing runs before the intent record is durable. The line is written
        // now; the command's process is created and sandboxed while the disk syncs, and
        // waits at a gate before `execve` that opens only once the fdatasync succeeded.
        let fail_open = self.config.audit_fail_mode == AuditFailMode::Open;
        let mut audit_note = None;
        let (gate, opener) = match Gate::new() {
            Ok(pair) => pair,
            Err(e) => {
                return Envelope::new(
                    RUN_COMMAND,
                    ResultCode::InternalError,
                    format!("could not create the start gate, so nothing ran: {e}"),
                );
            }
        };
        let synced: Arc<std::sync::OnceLock<Result<(), String>>> = Arc::default();
        let told = synced.clone();
        let then = move |result: Result<(), String>| {
            let ok = result.is_ok();
            let _ = told.set(result);
            if ok || fail_open {
                opener.open();
            } else {
                opener.refuse();
            }
        };
        let gated = match self.audit.append_then(intent, then) {
            Ok(()) => true,
            Err(e) if fail_open => {
                audit_note = Some(format!("unavailable: {e}"));
                false
            }
            Err(e) => {
                return Envelope::new(
                    RUN_COMMAND,
                    ResultCode::AuditUnavailable,
                    format!("the audit record could not be written, so nothing ran: {e}"),
                );
            }
        };
        let request = ExecRequest {
            program: vetted.program.clone(),
            argv0: vetted.argv.first().cloned().unwrap_or_default(),
            args: vetted.argv.get(1..).unwrap_or_default().to_vec(),
            cwd: &vetted.cwd,
            env: self.env.clone(),
            profile: vetted.profile,
            limits,
            gate: gated.then_some(&gate),
        };
        let run = self.executor.run(&request, cancel).await;
        if let Some(Err(e)) = synced.get() {
            if !fail_open {
                return Envelope::new(
                    RUN_COMMAND,
                    ResultCode::AuditUnavailable,
                    format!("the audit record could not be written, so nothing ran: {e}"),
                );
            }
            audit_note = Some(format!("unavailable: {e}"));
        }
        let outcome = match run {
            Ok(o) => o,
            Err(e) => {
                let mut env =
                    Envelope::new(RUN_COMMAND, ResultCode::OperationFailed, e.to_string());
                if let Some(report) = e.report() {
                    env.set("sandbox", report.to_value());
                }
                if let Some(note) = audit_note {
                    env.set("audit", note);
                }
                return env;
            }
        };
        // Strip terminal escapes, redact, then truncate: in that order, always (a key that
        // `grep --color=always` wraps in escapes is found, and no escape reaches the client).
        let stdout = self
            .redactor
            .strip_redact_then_truncate(&outcome.stdout, limits.max_output_bytes);
        let stderr = self
            .redactor
            .strip_redact_then_truncate(&outcome.stderr, limits.max_output_bytes);
        let program = vetted
            .argv
            .first()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .unwrap_or("");
        let (code, reason) = match outcome.stop {
            Stop::TimedOut => (
                ResultCode::Timeout,
                format!(
                    "'{program}' ran past its {} s timeout; its whole process tree was killed",
                    limits.timeout.as_secs()
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
                    "'{program}' wrote more than {} bytes; it was stopped and its output cut",
                    limits.overflow_kill_bytes()
                ),
            ),
            Stop::Exited if stdout.omitted_bytes > 0 || stderr.omitted_bytes > 0 => (
                ResultCode::OutputTruncated,
                format!(
                    "{}; output cut to {} bytes per stream",
                    vetted.reason, limits.max_output_bytes
                ),
            ),
            Stop::Exited => (ResultCode::Ok, vetted.reason.clone()),
        };
        let mut env = Envelope::new(RUN_COMMAND, code, reason);
        env.set("exit_code", json!(outcome.exit_code));
        env.set("stdout", stdout.text);
        env.set("stderr", stderr.text);
        if let Some(signal) = outcome.signal {
            env.set("signal", signal);
        }
        if outcome.stop != Stop::Exited {
            env.set("killed", true);
        }
        if stdout.omitted_bytes > 0 || stderr.omitted_bytes > 0 || outcome.stop == Stop::Overflowed
        {
            env.set("truncated", true);
            env.set("stdout_truncated_bytes", stdout.omitted_bytes);
            env.set("stderr_truncated_bytes", stderr.omitted_bytes);
        }
        if outcome.drain_abandoned {
            env.set("output_incomplete", true);
        }
        env.set("sandbox", outcome.sandbox.to_value());
        if let Some(note) = audit_note {
            env.set("audit", note);
        }
        env
    }
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

fn jail_envelope(action: &str, e: JailError) -> Envelope {
    match e {
        JailError::Escape { .. } => Envelope::new(action, ResultCode::PathEscape, e.to_string()),
        JailError::Invalid { .. } => {
            Envelope::new(action, ResultCode::InvalidRequest, e.to_string())
        }
        JailError::Root { .. } => Envelope::new(action, ResultCode::InternalError, e.to_string()),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn base_record(tool: &str, event: &str, args: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("event".into(), json!(event));
    record.insert("tool".into(), json!(tool));
    // The audit module redacts every string before it is hashed and written. A 1 MiB
    // argument must not become a 1 MiB audit record: past its bound only its size is kept.
    record.insert(
        "arguments".into(),
        protocol::audit_arguments(args, ARGUMENT_BOUNDS),
    );
    record
}
