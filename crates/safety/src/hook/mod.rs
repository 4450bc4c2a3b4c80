//! Agent hooks (docs/hooks.md): `safe-mcp hook claude-code|codex` judges what an agent's own
//! tools are about to do with the same parser, policy, containment and audit chain that guard
//! the servers, and `safe-mcp check` shows a policy author one decision.
//!
//! - **Shell commands** (`Bash`): [`parse_shell_command`] (the terminal's grammar, plus the
//!   expansions bash would do: `*`, `{a,b}`, `~`), then [`TerminalPolicy::evaluate_argv`], the
//!   event's `cwd` contained beneath a `[hook]` root, every path-like argument contained
//!   (`Jail::check_args`), no argument naming a protected path, the program resolved on the
//!   policy's `PATH` (`TerminalPolicy::resolve_program`). Allowed commands get no decision
//!   (the agent's own prompts apply) unless a rule says `hook = "allow"` or `"ask"`.
//! - **File tools**: the path beneath a root (`Jail::locate`, through the kernel);
//!   writing a protected path (`hook::protect`), a path that would make a bare git repository,
//!   a file with other hard links or through a dangling symlink is denied.
//! - **Other tools** (`mcp__*` and the rest): `[[hook.tools]]` by name, the strictest match
//!   winning; none: `[hook] unlisted_tools`.
//! - **After a write**: the scanner on the written file; findings at or above `[hook]
//!   scan_floor` go back to the agent as a block with their fixes.
//!
//! Every decision is one audit record (`tool: "hook"`). An event that cannot be read or
//! judged, and a record that cannot be written (under `audit_fail_mode = "closed"`), is a
//! refusal by exit status 2, which both agents treat as a block; never exit 1, which they
//! treat as "go ahead".

mod event;
mod protect;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value, json};

pub use event::{Agent, MAX_EVENT_BYTES};
pub use protect::BUILTIN_PROTECTED;

use crate::audit::AuditLog;
use crate::config::{Config, HookDecision, UnlistedTools};
use crate::jail::{ContainedDir, Jail, JailError, is_within, path_candidates};
use crate::parse::parse_shell_command;
use crate::policy::{PolicyError, TerminalPolicy};
use crate::protocol::quote;
use crate::redact::{RedactError, Redactor};
use crate::result::ResultCode;
use event::{Event, Phase, Subject};
use protect::Protected;

/// What the hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No decision: the agent's own permission rules apply.
    None,
    /// Let it through without the agent's prompt.
    Allow,
    /// The agent must ask its user.
    Ask,
    /// Refused.
    Deny,
}

impl Verdict {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::None => "none",
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

impl From<HookDecision> for Verdict {
    fn from(d: HookDecision) -> Self {
        match d {
            HookDecision::Allow => Verdict::Allow,
            HookDecision::Ask => Verdict::Ask,
            HookDecision::Deny => Verdict::Deny,
        }
    }
}

/// One decision, with everything `safe-mcp check` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// The answer.
    pub decision: Verdict,
    /// `OK` unless refused: `POLICY_DENIED`, `PATH_ESCAPE`, `INVALID_REQUEST`, ...
    pub code: ResultCode,
    /// One sentence.
    pub reason: String,
    /// What decided: `parser`, `allowlist`, `denylist`, `default-deny`, `rules[N]`,
    /// `executable`, `jail`, `protected`, `hook.tools[N]`, `hook.unlisted_tools`.
    pub decided_by: String,
    /// The argv as parsed, not redacted: [`HookCore::redacted_json`] and
    /// [`HookCore::redact_argv`] make it fit to leave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// The program that would run, resolved on the policy's `PATH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<PathBuf>,
    /// The root the decision was contained in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<PathBuf>,
    /// The working folder, as the kernel resolved it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Every path the request names, relative to the root, symlinks resolved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathBuf>,
}

impl Judgement {
    fn deny(code: ResultCode, decided_by: &str, reason: impl Into<String>) -> Self {
        Judgement {
            decision: Verdict::Deny,
            code,
            reason: reason.into(),
            decided_by: decided_by.to_string(),
            argv: None,
            program: None,
            root: None,
            cwd: None,
            paths: Vec::new(),
        }
    }

    fn pass(decision: Verdict, decided_by: &str, reason: impl Into<String>) -> Self {
        Judgement {
            code: ResultCode::Ok,
            decision,
            ..Judgement::deny(ResultCode::Ok, decided_by, reason)
        }
    }
}

/// The answer an agent reads: what goes on stdout and stderr, and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAnswer {
    /// Stdout: the agent's JSON, or nothing.
    pub stdout: String,
    /// Stderr: the reason of a refusal (exit 2), or a note.
    pub stderr: String,
    /// 0 (answered) or 2 (refused).
    pub exit_code: u8,
}

impl HookAnswer {
    /// No decision: exit 0, nothing on stdout.
    fn nothing() -> Self {
        HookAnswer {
            stdout: String::new(),
            stderr: String::new(),
            exit_code: 0,
        }
    }

    /// Exit 0 with one JSON object on stdout.
    fn json(value: &Value) -> Self {
        HookAnswer {
            stdout: format!("{value}\n"),
            ..HookAnswer::nothing()
        }
    }

    /// A refusal both agents obey: exit 2, the reason on stderr.
    pub fn refuse(reason: &str) -> Self {
        HookAnswer {
            stdout: String::new(),
            stderr: format!("{}\n", one_line(reason)),
            exit_code: 2,
        }
    }
}

/// A reason as one line: agents show stderr to the model, and a newline in a quoted file
/// name must not start a line of its own there.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The hook could not start: the policy's rules or redaction patterns do not compile.
#[derive(Debug, thiserror::Error)]
pub enum HookStartError {
    /// A `[[terminal.rules]]` entry is wrong.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A redaction pattern does not compile.
    #[error(transparent)]
    Redaction(#[from] RedactError),
}

/// A command as `safe-mcp check` is given it.
#[derive(Debug, Clone, Copy)]
pub enum CommandText<'a> {
    /// One string, parsed as the hook parses an agent's shell command.
    Line(&'a str),
    /// Words already split (`check -- git push -f`).
    Argv(&'a [String]),
}

/// The hook's state for one process: the compiled policy and what it needs to record.
#[derive(Debug)]
pub struct HookCore {
    config: Config,
    policy: TerminalPolicy,
    roots: Vec<PathBuf>,
    protected: Protected,
    floor: scan::rule::Severity,
    redactor: Arc<Redactor>,
}

impl HookCore {
    /// Compile the policy of a config loaded for [`crate::Server::Hook`]. Nothing else is
    /// built: no sandbox probe, no launcher; the redaction rules compile on first use.
    pub fn new(config: Config) -> Result<HookCore, HookStartError> {
        let policy = TerminalPolicy::new(&config.terminal)?;
        let redactor = Arc::new(Redactor::new(&config.redaction)?);
        let floor = match config
            .hook
            .scan_floor
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            Some("LOW") => scan::rule::Severity::Low,
            Some("MEDIUM") => scan::rule::Severity::Medium,
            Some("CRITICAL") => scan::rule::Severity::Critical,
            _ => scan::rule::Severity::High,
        };
        Ok(HookCore {
            roots: config.hook.roots.clone(),
            protected: Protected::new(&config.hook.protected),
            policy,
            floor,
            redactor,
            config,
        })
    }

    /// Read one event from `input` (at most [`MAX_EVENT_BYTES`] + 1 bytes, so an over-long
    /// one is known as such and refused unread past the bound) and answer it.
    pub fn answer_from(&self, agent: Agent, input: impl Read) -> HookAnswer {
        let mut bytes = Vec::new();
        let limit = u64::try_from(MAX_EVENT_BYTES)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        match input.take(limit).read_to_end(&mut bytes) {
            Ok(_) => self.answer(agent, &bytes),
            Err(e) => HookAnswer::refuse(&format!(
                "safe-mcp hook refused the call: the event could not be read: {e}"
            )),
        }
    }

    /// Answer one event, the whole input as read (more than [`MAX_EVENT_BYTES`] is refused).
    pub fn answer(&self, agent: Agent, input: &[u8]) -> HookAnswer {
        self.compile_ahead(input);
        let event = match event::parse(input, agent) {
            Ok(event) => event,
            Err(error) => {
                let reason = format!("safe-mcp hook refused the call: {error}");
                let mut record = Map::new();
                record.insert("agent".into(), json!(agent.as_str()));
                record.insert("decision".into(), json!("deny"));
                record.insert("code".into(), json!(ResultCode::InvalidRequest.as_str()));
                record.insert("reason".into(), json!(reason));
                record.insert("input_bytes".into(), json!(input.len()));
                return match self.record(record) {
                    Ok(()) => HookAnswer::refuse(&reason),
                    Err(e) => HookAnswer::refuse(&format!("{reason} ({e})")),
                };
            }
        };
        match event.phase {
            Phase::Pre => self.answer_pre(agent, &event),
            Phase::Post => self.answer_post(agent, &event),
        }
    }

    fn answer_pre(&self, agent: Agent, event: &Event) -> HookAnswer {
        let judgement = self.judge_event(event);
        let mut record = self.record_of(agent, event, &judgement);
        if let Subject::Shell { command } = &event.subject {
            // A command past the parser's bound was refused unread: its length and hash
            // are recorded, not megabytes of it.
            if command.len() > crate::parse::MAX_COMMAND_BYTES {
                use sha2::Digest;
                record.insert("command_bytes".into(), json!(command.len()));
                record.insert(
                    "command_sha256".into(),
                    json!(hex::encode(sha2::Sha256::digest(command.as_bytes()))),
                );
            } else {
                record.insert("command".into(), json!(command));
            }
        }
        if let Err(e) = self.record(record) {
            return HookAnswer::refuse(&format!(
                "safe-mcp hook refused the call: its audit record could not be written ({e})"
            ));
        }
        render_pre(agent, &judgement)
    }

    /// The decision for a `PreToolUse` event.
    fn judge_event(&self, event: &Event) -> Judgement {
        match &event.subject {
            Subject::Shell { command } => match event.cwd.as_deref() {
                Some(cwd) => self.judge_command(Path::new(cwd), CommandText::Line(command)),
                None => Judgement::deny(
                    ResultCode::InvalidRequest,
                    "hook",
                    "the event has no 'cwd', so the command's folder is unknown",
                ),
            },
            Subject::Files { paths, patterns } => {
                // `../**/*.txt`, `/etc/*`: a pattern walks where its own path leads.
                for pattern in patterns {
                    let p = Path::new(pattern);
                    let climbs = p.components().any(|c| c == std::path::Component::ParentDir);
                    let elsewhere = p.is_absolute() && !self.roots.iter().any(|r| is_within(r, p));
                    if climbs || elsewhere {
                        return Judgement::deny(
                            ResultCode::PathEscape,
                            "jail",
                            format!(
                                "the pattern '{}' leads outside the [hook] roots",
                                quote(pattern)
                            ),
                        );
                    }
                }
                let paths = paths.iter().map(|(p, writes)| (p.as_str(), *writes));
                self.judge_paths(event.cwd.as_deref(), paths)
            }
            Subject::Patch { patch } => {
                let files = event::patch_paths(patch);
                if files.is_empty() {
                    return Judgement::deny(
                        ResultCode::InvalidRequest,
                        "hook",
                        "the patch names no file ('*** Add File:', '*** Update File:', ...), so \
                         what it writes cannot be checked",
                    );
                }
                let files = files.iter().map(|f| (f.as_str(), true));
                self.judge_paths(event.cwd.as_deref(), files)
            }
            Subject::Other => self.judge_tool(&event.tool_name),
        }
    }

    /// Every path of one call: the first refusal, or the last judgement with every path.
    fn judge_paths<'p>(
        &self,
        cwd: Option<&str>,
        paths: impl Iterator<Item = (&'p str, bool)>,
    ) -> Judgement {
        let mut last = Judgement::pass(Verdict::None, "jail", "no path to check");
        let mut all = Vec::new();
        for (path, writes) in paths {
            let j = self.judge_path(cwd, path, writes);
            if j.decision == Verdict::Deny {
                return j;
            }
            all.extend(j.paths.iter().cloned());
            last = j;
        }
        last.paths = all;
        last
    }

    /// The decision for a tool judged by name alone.
    fn judge_tool(&self, tool: &str) -> Judgement {
        let mut strictest: Option<(usize, &crate::config::HookToolRule)> = None;
        for (i, rule) in self.config.hook.tools.iter().enumerate() {
            if glob_match(&rule.name, tool)
                && strictest.is_none_or(|(_, s)| rule.decision > s.decision)
            {
                strictest = Some((i, rule));
            }
        }
        match strictest {
            Some((i, rule)) => {
                let reason = rule.reason.clone().unwrap_or_else(|| {
                    format!(
                        "'{}' matches hook.tools[{i}] ('{}'): {}",
                        quote(tool),
                        rule.name,
                        rule.decision.as_str()
                    )
                });
                let by = format!("hook.tools[{i}]");
                match rule.decision {
                    HookDecision::Deny => Judgement::deny(ResultCode::PolicyDenied, &by, reason),
                    d => Judgement::pass(d.into(), &by, reason),
                }
            }
            None => {
                let reason = format!("'{}' matches no [[hook.tools]] entry", quote(tool));
                match self.config.hook.unlisted_tools {
                    UnlistedTools::None => {
                        Judgement::pass(Verdict::None, "hook.unlisted_tools", reason)
                    }
                    UnlistedTools::Ask => {
                        Judgement::pass(Verdict::Ask, "hook.unlisted_tools", reason)
                    }
                    UnlistedTools::Deny => Judgement::deny(
                        ResultCode::PolicyDenied,
                        "hook.unlisted_tools",
                        format!("{reason}, and [hook] unlisted_tools = \"deny\""),
                    ),
                }
            }
        }
    }

    /// The root holding `cwd` and the folder contained beneath it, through the kernel.
    fn contain_cwd(&self, cwd: &Path) -> Result<(Jail, ContainedDir), Box<Judgement>> {
        let escape = |why: String| Box::new(Judgement::deny(ResultCode::PathEscape, "jail", why));
        if !cwd.is_absolute() {
            return Err(Box::new(Judgement::deny(
                ResultCode::InvalidRequest,
                "jail",
                format!(
                    "cwd '{}' is not an absolute path",
                    quote(&cwd.to_string_lossy())
                ),
            )));
        }
        let real = std::fs::canonicalize(cwd).map_err(|e| {
            Box::new(Judgement::deny(
                ResultCode::InvalidRequest,
                "jail",
                format!(
                    "cwd '{}' cannot be resolved: {e}",
                    quote(&cwd.to_string_lossy())
                ),
            ))
        })?;
        let Some(root) = self.roots.iter().find(|r| is_within(r, &real)) else {
            return Err(escape(format!(
                "cwd '{}' lies beneath none of the [hook] roots",
                quote(&cwd.to_string_lossy())
            )));
        };
        let jail = Jail::open(root).map_err(|e| escape(e.to_string()))?;
        let relative = real.strip_prefix(root).unwrap_or(Path::new(""));
        let dir = jail
            .resolve_cwd(Some(&relative.to_string_lossy()))
            .map_err(|e| Box::new(jail_judgement(e)))?;
        Ok((jail, dir))
    }

    /// The decision for one shell command run in `cwd`: what `Bash` and `safe-mcp check` get.
    pub fn judge_command(&self, cwd: &Path, command: CommandText<'_>) -> Judgement {
        let argv = match command {
            CommandText::Line(line) => match parse_shell_command(line) {
                Ok(argv) => argv,
                Err(e) => return Judgement::deny(e.code(), "parser", e.to_string()),
            },
            CommandText::Argv(words) => words.to_vec(),
        };
        let mut j = self.judge_argv(cwd, &argv);
        j.argv = Some(argv);
        j
    }

    fn judge_argv(&self, cwd: &Path, argv: &[String]) -> Judgement {
        if argv.first().is_none_or(String::is_empty) {
            return Judgement::deny(ResultCode::InvalidRequest, "parser", "the command is empty");
        }
        let decision = self.policy.evaluate_argv(argv);
        if !decision.allowed {
            return Judgement::deny(decision.code, &decision.decided_by, decision.reason);
        }
        let (jail, dir) = match self.contain_cwd(cwd) {
            Ok(found) => found,
            Err(j) => return *j,
        };
        let located = |mut j: Judgement| {
            j.root = Some(jail.root().to_path_buf());
            j.cwd = Some(dir.absolute().to_path_buf());
            j
        };
        let args = argv.get(1..).unwrap_or_default();
        if let Err(e) = jail.check_args(&dir, args) {
            return located(jail_judgement(e));
        }
        // A command can write any file it names: no argument may name a protected path
        // (`cp evil .git/hooks/pre-commit`, `tee .bashrc`), read or write alike.
        let mut paths = Vec::new();
        for arg in args {
            for candidate in path_candidates(arg) {
                if candidate.is_empty() || candidate.starts_with('-') {
                    continue;
                }
                // A dangling symlink (a write through it creates what its name hides).
                // (Containment was `check_args`' job; a word that is no path, a commit
                // message longer than a file name say, fails to resolve and names nothing.)
                let place = match jail.locate(&dir, candidate) {
                    Ok(place) => place,
                    Err(e @ JailError::Invalid { .. }) => return located(jail_judgement(e)),
                    Err(_) => continue,
                };
                // A hard link: what a command writes there changes the file under every
                // name it has, perhaps outside the roots.
                if let Some(links) = place.links.filter(|&n| n > 1) {
                    return located(Judgement::deny(
                        ResultCode::PolicyDenied,
                        "protected",
                        format!(
                            "argument '{}' names a file with {links} hard links: a command \
                             writing it would change it under another name too",
                            quote(arg)
                        ),
                    ));
                }
                if let Some(entry) = self.protected.entry_for(&place.relative) {
                    return located(Judgement::deny(
                        ResultCode::PolicyDenied,
                        "protected",
                        format!(
                            "argument '{}' names '{}', under the protected path '{entry}': no \
                             command may name it, since a command can write what it names",
                            quote(arg),
                            quote(&place.relative.to_string_lossy())
                        ),
                    ));
                }
                // Reported: what names a path (the `a` of `-la` is checked, not shown).
                let names_path = candidate.contains('/') || jail.exists_beneath(&place.relative);
                if names_path && !paths.contains(&place.relative) {
                    paths.push(place.relative);
                }
            }
        }
        let argv0 = argv.first().map(String::as_str).unwrap_or_default();
        let program = match self.policy.resolve_program(argv0, dir.absolute()) {
            Ok(p) => p,
            Err(d) => return located(Judgement::deny(d.code, &d.decided_by, d.reason)),
        };
        let (verdict, decided_by, reason) = match decision.hook {
            Some((said, rule)) => (
                Verdict::from(said),
                format!("rules[{rule}]"),
                format!(
                    "{}; rules[{rule}] says hook = \"{}\"",
                    decision.reason,
                    said.as_str()
                ),
            ),
            None => (Verdict::None, decision.decided_by.clone(), decision.reason),
        };
        let mut j = if verdict == Verdict::Deny {
            Judgement::deny(ResultCode::PolicyDenied, &decided_by, reason)
        } else {
            Judgement::pass(verdict, &decided_by, reason)
        };
        j.program = Some(program);
        j.paths = paths;
        located(j)
    }

    /// The decision for one path a file tool names; `writes`: the tool writes it.
    fn judge_path(&self, cwd: Option<&str>, path: &str, writes: bool) -> Judgement {
        let given = Path::new(path);
        let (jail, dir) = if given.is_absolute() {
            match self.root_of(given) {
                Some(root) => match Jail::open(root).and_then(|j| {
                    let d = j.resolve_cwd(None)?;
                    Ok((j, d))
                }) {
                    Ok(found) => found,
                    Err(e) => return jail_judgement(e),
                },
                None => {
                    return Judgement::deny(
                        ResultCode::PathEscape,
                        "jail",
                        format!("'{}' lies beneath none of the [hook] roots", quote(path)),
                    );
                }
            }
        } else {
            match cwd {
                Some(cwd) => match self.contain_cwd(Path::new(cwd)) {
                    Ok(found) => found,
                    Err(j) => return *j,
                },
                None => {
                    return Judgement::deny(
                        ResultCode::InvalidRequest,
                        "jail",
                        format!("'{}' is relative and the event has no 'cwd'", quote(path)),
                    );
                }
            }
        };
        let place = match jail.locate(&dir, path) {
            Ok(place) => place,
            Err(e) => {
                let mut j = jail_judgement(e);
                j.root = Some(jail.root().to_path_buf());
                return j;
            }
        };
        let shown = place.relative.to_string_lossy().into_owned();
        let refuse = |why: String| {
            let mut j = Judgement::deny(ResultCode::PolicyDenied, "protected", why);
            j.root = Some(jail.root().to_path_buf());
            j.paths = vec![place.relative.clone()];
            j
        };
        if writes {
            if let Some(entry) = self.protected.entry_for(&place.relative) {
                return refuse(format!(
                    "'{}' is under the protected path '{entry}': agent tools may not write it \
                     (programs obey it without anyone reading it)",
                    quote(&shown)
                ));
            }
            if let Some(folder) =
                protect::bare_repo_folder(&place.relative, |p| jail.exists_beneath(p))
            {
                let folder = if folder.as_os_str().is_empty() {
                    ".".to_string()
                } else {
                    folder.to_string_lossy().into_owned()
                };
                return refuse(format!(
                    "writing '{}' would make '{}' a bare git repository, whose config and \
                     hooks git obeys in that folder",
                    quote(&shown),
                    quote(&folder)
                ));
            }
            if let Some(links) = place.links.filter(|&n| n > 1) {
                return refuse(format!(
                    "'{}' has {links} hard links: writing it would change a file under \
                     another name too, perhaps outside the roots",
                    quote(&shown)
                ));
            }
        }
        let mut j = Judgement::pass(
            Verdict::None,
            "jail",
            format!(
                "'{}' lies beneath the root '{}'",
                quote(&shown),
                quote(&jail.root().to_string_lossy())
            ),
        );
        j.root = Some(jail.root().to_path_buf());
        j.paths = vec![place.relative];
        j
    }

    /// The root an absolute path lies beneath: as written, or with its existing part's
    /// symlinks resolved (a path through a linked folder that leads into a root).
    fn root_of(&self, path: &Path) -> Option<&PathBuf> {
        if let Some(root) = self.roots.iter().find(|r| is_within(r, path)) {
            return Some(root);
        }
        let mut existing = path;
        let mut rest = Vec::new();
        while !existing.exists() {
            rest.push(existing.file_name()?);
            existing = existing.parent()?;
        }
        let mut real = std::fs::canonicalize(existing).ok()?;
        real.extend(rest.iter().rev());
        self.roots.iter().find(|r| is_within(r, &real))
    }

    fn answer_post(&self, agent: Agent, event: &Event) -> HookAnswer {
        let written: Vec<String> = match &event.subject {
            Subject::Files { paths, .. } => paths
                .iter()
                .filter(|(_, w)| *w)
                .map(|(p, _)| p.clone())
                .collect(),
            Subject::Patch { patch } => event::patch_paths(patch),
            _ => Vec::new(),
        };
        let mut lines = Vec::new();
        let mut count = 0usize;
        let mut scanned = Vec::new();
        for path in &written {
            if !scan::is_scanned_file(Path::new(path)) {
                continue;
            }
            let judged = self.judge_path(event.cwd.as_deref(), path, false);
            let Some(root) = judged
                .root
                .as_ref()
                .filter(|_| judged.decision != Verdict::Deny)
            else {
                continue;
            };
            let Some(relative) = judged.paths.first() else {
                continue;
            };
            match crate::guard::audit::scan_file_beneath(root, &relative.to_string_lossy()) {
                Ok(report) => {
                    scanned.push(relative.to_string_lossy().into_owned());
                    for f in report.findings.iter().filter(|f| f.severity >= self.floor) {
                        count += 1;
                        lines.push(format!(
                            "- {}:{}:{} {} {}: {} Fix: {}",
                            quote(&f.file),
                            f.line,
                            f.column,
                            f.severity.name(),
                            f.rule_id,
                            f.message,
                            f.suggested_fix
                        ));
                    }
                }
                Err(e) => lines.push(format!("- {}: not scanned: {e}", quote(path))),
            }
        }
        let judgement = if count > 0 {
            Judgement::deny(
                ResultCode::PolicyDenied,
                "scan",
                format!(
                    "safe-mcp scan found {count} finding{} at or above {} in what was just \
                     written; fix {}:\n{}",
                    if count == 1 { "" } else { "s" },
                    self.floor.name(),
                    if count == 1 { "it" } else { "them" },
                    lines.join("\n")
                ),
            )
        } else {
            Judgement::pass(
                Verdict::None,
                "scan",
                format!("no finding at or above {}", self.floor.name()),
            )
        };
        let mut record = self.record_of(agent, event, &judgement);
        record.insert("scanned".into(), json!(scanned));
        record.insert("findings".into(), json!(count));
        if let Err(e) = self.record(record) {
            return HookAnswer::refuse(&format!(
                "safe-mcp hook could not write its audit record ({e})"
            ));
        }
        if count == 0 {
            return HookAnswer::nothing();
        }
        // The documented form for feedback after a tool ran: `decision: "block"` with the
        // reason, which both agents hand to the model.
        HookAnswer::json(&json!({"decision": "block", "reason": judgement.reason}))
    }

    fn record_of(&self, agent: Agent, event: &Event, j: &Judgement) -> Map<String, Value> {
        let mut record = Map::new();
        record.insert("agent".into(), json!(agent.as_str()));
        record.insert("hook_event".into(), json!(event.phase.as_str()));
        record.insert("tool_name".into(), json!(event.tool_name));
        for (key, value) in [
            ("session_id", &event.session_id),
            ("tool_use_id", &event.tool_use_id),
            ("cwd", &event.cwd),
        ] {
            if let Some(v) = value {
                record.insert(key.into(), json!(v));
            }
        }
        record.insert("decision".into(), json!(j.decision.as_str()));
        record.insert("code".into(), json!(j.code.as_str()));
        record.insert("decided_by".into(), json!(j.decided_by));
        record.insert("reason".into(), json!(j.reason));
        if !j.paths.is_empty() {
            record.insert("paths".into(), json!(j.paths));
        }
        if let Some(p) = &j.program {
            record.insert("executable".into(), json!(p));
        }
        record
    }

    /// Start compiling, on another thread, the redaction rules the event's text calls for
    /// (each rule's regex is compiled the first time a text holds its anchor, about 0.5 ms
    /// for some), while this one judges the event and opens the log. Every event has a
    /// `session_id`, whose anchor calls for the session rule. Only a cache is filled: the
    /// record is redacted as before, and waits for a compilation still under way.
    fn compile_ahead(&self, input: &[u8]) {
        if input.len() > MAX_EVENT_BYTES {
            return;
        }
        let redactor = self.redactor.clone();
        let text = String::from_utf8_lossy(input).into_owned();
        // A thread that cannot start only means the record compiles what it needs itself.
        let _ = std::thread::Builder::new()
            .name("redact-ahead".into())
            .spawn(move || redactor.redact(&text));
    }

    /// Append one record (`tool: "hook"`), synced before the answer. Under
    /// `audit_fail_mode = "open"` a failure is only logged.
    fn record(&self, mut record: Map<String, Value>) -> Result<(), String> {
        record.insert("tool".into(), json!("hook"));
        let written = AuditLog::open_configured(&self.config, self.redactor.clone())
            .and_then(|log| log.append(record));
        match written {
            Ok(()) => Ok(()),
            Err(e) if self.config.audit_fail_mode == crate::config::AuditFailMode::Open => {
                tracing::warn!("audit record not written (audit_fail_mode = \"open\"): {e}");
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// A judgement as it may leave the process (`safe-mcp check --json`): every string
    /// redacted.
    pub fn redacted_json(&self, j: &Judgement) -> Value {
        let mut value = serde_json::to_value(j).unwrap_or(Value::Null);
        if let (Some(argv), Some(slot)) = (&j.argv, value.get_mut("argv")) {
            *slot = json!(self.redactor.redact_argv(argv));
        }
        self.redactor.redact_json(&mut value);
        value
    }

    /// An argv as it may leave: redacted, also in the context of its neighbours
    /// ([`Redactor::redact_argv`]).
    pub fn redact_argv(&self, argv: &[String]) -> Vec<String> {
        self.redactor.redact_argv(argv)
    }

    /// [`Redactor::redact`] with this policy's rules.
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }
}

/// The answer to a `PreToolUse` event in the agent's format.
fn render_pre(agent: Agent, j: &Judgement) -> HookAnswer {
    let empty = HookAnswer::nothing();
    let json_answer = |decision: &str| {
        HookAnswer::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": j.reason,
            }
        }))
    };
    let denied = |reason: &str| {
        HookAnswer::refuse(&format!(
            "safe-mcp denied this ({}, {}): {reason}",
            j.code.as_str(),
            j.decided_by
        ))
    };
    match (agent, j.decision) {
        (_, Verdict::Deny) => denied(&j.reason),
        (_, Verdict::None) => empty,
        (Agent::ClaudeCode, Verdict::Allow) => json_answer("allow"),
        (Agent::ClaudeCode, Verdict::Ask) => json_answer("ask"),
        // Codex's PreToolUse takes no `allow` without a rewritten input (it logs the hook
        // as failed and goes on): no decision says the same, with its own approvals.
        (Agent::Codex, Verdict::Allow) => empty,
        // Nor `ask`: a hook that answers it fails open. The only answer that keeps a
        // person in the loop is a refusal that says why.
        (Agent::Codex, Verdict::Ask) => denied(&format!(
            "{}; the policy wants a person to approve this, and Codex's PreToolUse hook \
             cannot ask, so it is refused: run it yourself if you mean it",
            j.reason
        )),
    }
}

fn jail_judgement(e: JailError) -> Judgement {
    let code = match e {
        JailError::Escape { .. } | JailError::ArgEscape { .. } => ResultCode::PathEscape,
        JailError::Invalid { .. } => ResultCode::InvalidRequest,
        JailError::Root { .. } => ResultCode::OperationFailed,
    };
    Judgement::deny(code, "jail", e.to_string())
}

/// `*` matches any run of characters; everything else itself.
fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
        return false;
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for middle in parts.iter().skip(1).take(parts.len().saturating_sub(2)) {
        match rest.find(middle) {
            Some(at) => rest = rest.get(at + middle.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_match("mcp__github__*", "mcp__github__create_issue"));
        assert!(!glob_match("mcp__github__*", "mcp__gitlab__x"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("mcp__*__delete*", "mcp__fs__delete_file"));
        assert!(!glob_match("WebFetch", "WebFetchX"));
        assert!(glob_match("a*a", "aa"));
        assert!(!glob_match("ab*ba", "aba"));
    }
}
