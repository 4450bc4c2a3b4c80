//! The files-server request flow (SPEC §5.2): six tools, each answered with an
//! [`Envelope`]. None of them deletes; none overwrites.
//!
//! Every tool follows the spec's flow: parse the arguments into workspace names
//! ([`Workspace::contain`]: `INVALID_REQUEST`, `PATH_ESCAPE`), evaluate the layered rules
//! ([`SkipPolicy`]: `POLICY_DENIED`, `NEEDS_EXPLICIT_REQUEST`), act through directory
//! handles ([`Workspace`]) under the journal's lock ([`Journal`]), and record. A tool that
//! changes something writes an audit intent record first; with `audit_fail_mode =
//! "closed"` a failed intent record means `AUDIT_UNAVAILABLE` and nothing moves. The
//! outcome record follows; in `"open"` mode a missing record is reported in
//! `detail.audit`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::audit::{AuditError, AuditLog};
use crate::config::{AuditFailMode, Config};
use crate::jail::workspace::{
    ContainedPath, EntryKind, FileIdentity, JailError, Workspace, WorkspaceDir, check_component,
    nfc, nfc_cow,
};
use crate::journal::{
    self, Action, Direction, Done, History, Journal, JournalError, JournalMove, Locked,
};
use crate::policy::layers::{
    NO_CATEGORY_REASON, RULE_ORGANIZE, Refusal, Scope, SkipPolicy, Subject,
};
use crate::protocol::{self, MAX_PATH_ARG_BYTES, MAX_PLAN_ID_BYTES, MAX_QUOTE_BYTES};
use crate::redact::{RedactError, Redactor};
use crate::result::{Envelope, ResultCode};

/// Why an entry whose name cannot be one path component is skipped by a plan.
const UNUSABLE_NAME: &str = "the name cannot be used as a destination";

/// Default `[files] max_plan_moves`.
pub const DEFAULT_MAX_PLAN_MOVES: u64 = 500;
/// Default `[files] max_list_entries`.
pub const DEFAULT_MAX_LIST_ENTRIES: u64 = 10_000;
/// Plans kept in memory at once; the oldest unused plan is forgotten first.
const MAX_OPEN_PLANS: usize = 64;
/// Folders a listing never enters.
const NEVER_ENTERED: &[&str] = &[".git", "node_modules"];

/// The six tool names, in the order the server lists them.
pub const TOOL_NAMES: [&str; 6] = [
    "list_files",
    "plan_organize",
    "apply_plan",
    "move_file",
    "undo_last_action",
    "redo_last_action",
];

/// The bound of each string argument of the files tools (docs/protocol.md).
const ARGUMENT_BOUNDS: &[(&str, usize)] = &[
    ("subdir", MAX_PATH_ARG_BYTES),
    ("src", MAX_PATH_ARG_BYTES),
    ("dest", MAX_PATH_ARG_BYTES),
    ("plan_id", MAX_PLAN_ID_BYTES),
];

/// Arguments of `list_files`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// A folder inside the workspace to list instead of its top level (workspace-relative).
    #[serde(default)]
    pub subdir: Option<String>,
}

/// Arguments of `apply_plan`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPlanArgs {
    /// The `plan_id` that `plan_organize` returned (single use).
    pub plan_id: String,
}

/// Arguments of `move_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileArgs {
    /// The entry to move (workspace-relative).
    pub src: String,
    /// The full destination path, not a folder (workspace-relative); missing parent
    /// folders are created.
    pub dest: String,
}

/// Arguments of the tools that take none (`plan_organize`, `undo_last_action`,
/// `redo_last_action`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// The organiser could not start.
#[derive(Debug, thiserror::Error)]
pub enum OrganizerError {
    /// `[files]` lacks a resolved workspace root or journal (config::load sets both).
    #[error("{0}")]
    Config(String),
    /// The workspace could not be opened.
    #[error("workspace: {0}")]
    Workspace(#[from] JailError),
    /// The journal could not be read, locked or recovered.
    #[error("{0}")]
    Journal(#[from] JournalError),
    /// The audit log could not be opened (fail-closed).
    #[error("{0}")]
    Audit(#[from] AuditError),
    /// The redaction rules did not compile.
    #[error("{0}")]
    Redact(#[from] RedactError),
}

/// One move of a plan, with what was seen at planning time.
#[derive(Debug, Clone)]
struct PlannedMove {
    src: ContainedPath,
    dest: ContainedPath,
    identity: FileIdentity,
}

#[derive(Debug, Default)]
struct PlanBook {
    open: HashMap<String, Vec<PlannedMove>>,
    order: VecDeque<String>,
    used: HashSet<String>,
}

/// The files organiser: one workspace, its rules, its journal and the audit log.
#[derive(Debug)]
pub struct Organizer {
    workspace: Workspace,
    policy: SkipPolicy,
    journal: Journal,
    audit: Option<AuditLog>,
    audit_startup_error: Option<String>,
    fail_mode: AuditFailMode,
    max_plan_moves: usize,
    max_list_entries: usize,
    plans: Mutex<PlanBook>,
}

/// One tool call in flight: its audit bookkeeping and its clock.
struct Call<'a> {
    org: &'a Organizer,
    tool: &'a str,
    args: Value,
    started: Instant,
    audit_note: Option<String>,
}

impl Call<'_> {
    fn record(&self, mut record: Map<String, Value>) -> Result<(), String> {
        record.insert("tool".into(), Value::from(self.tool));
        record.insert("args".into(), self.args.clone());
        match &self.org.audit {
            Some(log) => log.append(record).map_err(|e| e.to_string()),
            None => Err(self
                .org
                .audit_startup_error
                .clone()
                .unwrap_or_else(|| "no audit log".into())),
        }
    }

    /// The intent record before anything changes. Fail-closed: no record, no operation.
    fn intent(&mut self, what: Map<String, Value>) -> Result<(), Envelope> {
        let mut record = what;
        record.insert("event".into(), Value::from("intent"));
        match self.record(record) {
            Ok(()) => Ok(()),
            Err(e) => match self.org.fail_mode {
                AuditFailMode::Closed => Err(self.finish(Envelope::new(
                    self.tool,
                    ResultCode::AuditUnavailable,
                    "the audit record could not be written, so nothing was done (audit_fail_mode = \"closed\")",
                ))),
                AuditFailMode::Open => {
                    self.audit_note = Some(format!("unavailable: {e}"));
                    Ok(())
                }
            },
        }
    }

    /// The outcome record, the duration and (if a record is missing) `detail.audit`.
    fn finish(&self, mut env: Envelope) -> Envelope {
        env.duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut record = Map::new();
        record.insert("event".into(), Value::from("outcome"));
        record.insert("code".into(), Value::from(env.code.as_str()));
        record.insert("reason".into(), Value::from(env.reason.clone()));
        record.insert("duration_ms".into(), Value::from(env.duration_ms));
        if env.code == ResultCode::AuditUnavailable {
            // The intent could not be written; the outcome will not be either.
            return env;
        }
        let outcome = self.record(record);
        let note = self
            .audit_note
            .clone()
            .or_else(|| outcome.err().map(|e| format!("unavailable: {e}")));
        if let Some(note) = note {
            env.set("audit", note);
        }
        env
    }
}

fn jail_code(e: &JailError) -> ResultCode {
    match e {
        JailError::Invalid(_) => ResultCode::InvalidRequest,
        JailError::Escape(_) => ResultCode::PathEscape,
        JailError::Exists(_) => ResultCode::PolicyDenied,
        JailError::NotFound(_)
        | JailError::NotAFolder(_)
        | JailError::CrossDevice { .. }
        | JailError::RenameRefused { .. }
        | JailError::Swapped { .. }
        | JailError::Io { .. } => ResultCode::OperationFailed,
    }
}

fn jail_envelope(tool: &str, e: &JailError) -> Envelope {
    Envelope::new(tool, jail_code(e), e.to_string())
}

fn refusal_envelope(tool: &str, r: &Refusal) -> Envelope {
    Envelope::new(tool, r.code, r.reason.clone())
}

fn skip_value(name: &str, code: ResultCode, reason: &str, rule: Option<&str>) -> Value {
    json!({ "code": code.as_str(), "name": name, "reason": reason, "rule": rule })
}

fn journal_failed(tool: &str, e: &JournalError) -> Envelope {
    Envelope::new(
        tool,
        ResultCode::OperationFailed,
        format!("the undo journal could not be written, so nothing was moved: {e}"),
    )
}

/// A move made (or to be made) in one step, with the handles it needs.
struct StepMove {
    from_dir: ContainedPath,
    from_leaf: String,
    to_dir: ContainedPath,
    to_leaf: String,
    /// The entry the re-check saw at the source: what must arrive at the destination.
    identity: FileIdentity,
}

/// Why a step stopped part way; every move already made was carried back where possible.
struct StepFailure {
    error: JailError,
    index: usize,
    put_back: usize,
}

impl Organizer {
    /// Start the organiser for a loaded `[files]` config: open the workspace, the audit
    /// log and the journal, and recover a step a crash interrupted.
    pub fn open(config: &Config) -> Result<Organizer, OrganizerError> {
        let files = &config.files;
        let root = files
            .workspace_root
            .as_deref()
            .ok_or_else(|| OrganizerError::Config("files.workspace_root is not set".into()))?;
        let journal_path = files
            .journal
            .as_deref()
            .ok_or_else(|| OrganizerError::Config("files.journal is not set".into()))?;
        let workspace = Workspace::open(root)?;
        let journal = Journal::open(journal_path)?;
        let redactor = Arc::new(Redactor::new(&config.redaction)?);
        let (audit, audit_startup_error) = AuditLog::open_for_server(config, redactor)?;
        let to_usize = |v: Option<u64>, default: u64| {
            usize::try_from(v.unwrap_or(default).max(1)).unwrap_or(usize::MAX)
        };
        let organizer = Organizer {
            policy: SkipPolicy::new(files),
            max_plan_moves: to_usize(files.max_plan_moves, DEFAULT_MAX_PLAN_MOVES),
            max_list_entries: to_usize(files.max_list_entries, DEFAULT_MAX_LIST_ENTRIES),
            workspace,
            journal,
            audit,
            audit_startup_error,
            fail_mode: config.audit_fail_mode,
            plans: Mutex::new(PlanBook::default()),
        };
        {
            let mut locked = organizer.lock_and_recover()?;
            locked.compact()?;
        }
        Ok(organizer)
    }

    /// The workspace root.
    pub fn workspace_root(&self) -> &std::path::Path {
        self.workspace.root()
    }

    /// The undo and redo stacks as the journal holds them now (for diagnostics and tests).
    pub fn history(&self) -> Result<History, JournalError> {
        Ok(self.lock_and_recover()?.history().clone())
    }

    /// Take the journal lock and end any step a crash (of this or another process) left
    /// open, before anything else is done.
    fn lock_and_recover(&self) -> Result<Locked<'_>, JournalError> {
        let mut locked = self.journal.lock()?;
        if let Some(r) = journal::recover(&mut locked, &self.workspace)? {
            tracing::warn!(
                "recovered an interrupted {:?} of action {}: {} moved, {} not moved, {} missing",
                r.op,
                r.action_id,
                r.moved,
                r.not_moved,
                r.missing.len()
            );
            if let Some(log) = &self.audit {
                let mut rec = Map::new();
                rec.insert("event".into(), Value::from("recovery"));
                rec.insert("action_id".into(), Value::from(r.action_id));
                rec.insert("moved".into(), Value::from(r.moved));
                rec.insert("not_moved".into(), Value::from(r.not_moved));
                rec.insert("missing".into(), Value::from(r.missing.clone()));
                if let Err(e) = log.append(rec) {
                    tracing::warn!("recovery audit record not written: {e}");
                }
            }
        }
        Ok(locked)
    }

    fn call<'a>(&'a self, tool: &'a str, args: Value) -> Call<'a> {
        Call {
            org: self,
            tool,
            args,
            started: Instant::now(),
            audit_note: None,
        }
    }

    /// Dispatch a tool call by name with its raw JSON arguments: the one entry point the
    /// MCP wiring uses. Unknown tools and arguments that do not fit the tool's schema are
    /// answered with `INVALID_REQUEST` envelopes. `progress(done, total)` is called while
    /// `apply_plan` moves files.
    pub fn dispatch(
        &self,
        tool: &str,
        args: Option<&Map<String, Value>>,
        progress: &dyn Fn(u64, u64),
    ) -> Envelope {
        let raw = Value::Object(args.cloned().unwrap_or_default());
        // serde's messages quote the value they choke on; a reason quotes a short prefix.
        fn parse<T: for<'de> Deserialize<'de>>(raw: &Value) -> Result<T, String> {
            T::deserialize(raw).map_err(|e| protocol::clip(e.to_string(), 2 * MAX_QUOTE_BYTES))
        }
        // A refused call's record keeps each argument only within its bound: a 100 000
        // character plan_id must not become a 100 kB audit line.
        let shown_tool = protocol::quote(tool);
        let invalid = |message: String| {
            let call = self.call(
                &shown_tool,
                protocol::audit_arguments(args, ARGUMENT_BOUNDS),
            );
            call.finish(Envelope::new(
                &shown_tool,
                ResultCode::InvalidRequest,
                message,
            ))
        };
        let bad_args = |e: String| invalid(format!("invalid arguments for '{tool}': {e}"));
        // Every string argument has a bound (docs/protocol.md); an over-long one is refused
        // before anything reads it, with its length, never its value.
        if TOOL_NAMES.contains(&tool)
            && let Err(e) = protocol::check_arguments(args, ARGUMENT_BOUNDS)
        {
            return bad_args(e.to_string());
        }
        match tool {
            "list_files" => match parse::<ListFilesArgs>(&raw) {
                Ok(a) => self.list_files(a.subdir.as_deref()),
                Err(e) => bad_args(e),
            },
            "plan_organize" => match parse::<NoArgs>(&raw) {
                Ok(_) => self.plan_organize(),
                Err(e) => bad_args(e),
            },
            "apply_plan" => match parse::<ApplyPlanArgs>(&raw) {
                Ok(a) => self.apply_plan(&a.plan_id, progress),
                Err(e) => bad_args(e),
            },
            "move_file" => match parse::<MoveFileArgs>(&raw) {
                Ok(a) => self.move_file(&a.src, &a.dest),
                Err(e) => bad_args(e),
            },
            "undo_last_action" => match parse::<NoArgs>(&raw) {
                Ok(_) => self.undo_last_action(),
                Err(e) => bad_args(e),
            },
            "redo_last_action" => match parse::<NoArgs>(&raw) {
                Ok(_) => self.redo_last_action(),
                Err(e) => bad_args(e),
            },
            _ => invalid(format!(
                "unknown tool '{shown_tool}'; this server has {}",
                TOOL_NAMES.join(", ")
            )),
        }
    }

    /// `list_files(subdir?)`: read-only; each entry with name, size, kind, category,
    /// whether the organiser would move it, and why not.
    pub fn list_files(&self, subdir: Option<&str>) -> Envelope {
        const TOOL: &str = "list_files";
        let call = self.call(TOOL, json!({ "subdir": subdir }));
        let env = self.list_files_inner(subdir);
        self.finish_read_only(call, env)
    }

    fn list_files_inner(&self, subdir: Option<&str>) -> Envelope {
        const TOOL: &str = "list_files";
        let path = match subdir {
            None | Some("") | Some(".") => ContainedPath::default(),
            Some(raw) => match self.workspace.contain(raw) {
                Ok(p) => p,
                Err(e) => return jail_envelope(TOOL, &e),
            },
        };
        // Tool-managed trees (`.git`, `node_modules`) are huge and not the user's clutter.
        if path
            .components()
            .iter()
            .any(|c| NEVER_ENTERED.contains(&c.to_lowercase().as_str()))
        {
            return Envelope::new(
                TOOL,
                ResultCode::PolicyDenied,
                "listing never enters '.git' or 'node_modules'",
            );
        }
        let dir = match self.workspace.open_dir(&path) {
            Ok(d) => d,
            Err(e) => return jail_envelope(TOOL, &e),
        };
        let listing = match dir.list(self.max_list_entries) {
            Ok(l) => l,
            Err(e) => return jail_envelope(TOOL, &e),
        };
        let entries: Vec<Value> = listing
            .entries
            .iter()
            .map(|entry| {
                let id = entry.identity();
                let subject = Subject {
                    name: entry.name(),
                    utf8: entry.is_utf8(),
                    kind: id.kind,
                };
                let category = self.policy.category_of(entry.name(), id.kind);
                let why_not = match self.policy.evaluate(&subject, Scope::Planner) {
                    Some(r) => Some(skip_value(entry.name(), r.code, &r.reason, r.rule)),
                    None if category.is_none() => Some(skip_value(
                        entry.name(),
                        ResultCode::NeedsExplicitRequest,
                        NO_CATEGORY_REASON,
                        Some(RULE_ORGANIZE),
                    )),
                    None => None,
                };
                let why_not = why_not.map(|mut v| {
                    if let Some(o) = v.as_object_mut() {
                        o.remove("name");
                    }
                    v
                });
                json!({
                    "name": entry.name(),
                    "size": id.size,
                    "kind": id.kind.as_str(),
                    "category": category,
                    "would_move": why_not.is_none(),
                    "why_not": why_not,
                })
            })
            .collect();
        let count = entries.len();
        let reason = if listing.truncated {
            format!(
                "listed {count} of {} entries (max_list_entries)",
                listing.total
            )
        } else {
            format!("listed {count} entries")
        };
        let mut env = Envelope::new(TOOL, ResultCode::Ok, reason);
        env.set("subdir", dir.path().to_string());
        env.set("count", count);
        env.set("total", listing.total);
        env.set("truncated", listing.truncated);
        env.set("entries", Value::Array(entries));
        env
    }

    /// NFC names in a destination folder, for the "destination still free" checks; a folder
    /// that does not exist yet holds none.
    fn names_in(&self, dir: &ContainedPath) -> Result<HashSet<String>, JailError> {
        match self.workspace.open_dir(dir) {
            Ok(d) => d.nfc_names(),
            Err(JailError::NotFound(_)) => Ok(HashSet::new()),
            Err(e) => Err(e),
        }
    }

    /// Read-only tools: one record after the fact; in closed mode a call whose record
    /// cannot be written is not answered with data.
    fn finish_read_only(&self, call: Call<'_>, env: Envelope) -> Envelope {
        let mut record = Map::new();
        record.insert("event".into(), Value::from("outcome"));
        record.insert("code".into(), Value::from(env.code.as_str()));
        record.insert("reason".into(), Value::from(env.reason.clone()));
        let mut env = env;
        env.duration_ms = u64::try_from(call.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        record.insert("duration_ms".into(), Value::from(env.duration_ms));
        if let Err(e) = call.record(record) {
            match self.fail_mode {
                AuditFailMode::Closed => {
                    let mut refused = Envelope::new(
                        call.tool,
                        ResultCode::AuditUnavailable,
                        "the audit record could not be written, so nothing is returned (audit_fail_mode = \"closed\")",
                    );
                    refused.duration_ms = env.duration_ms;
                    return refused;
                }
                AuditFailMode::Open => env.set("audit", format!("unavailable: {e}")),
            }
        }
        env
    }

    /// `plan_organize()`: proposes moves and skips for the top level; changes nothing (not
    /// even destination folders) and returns a single-use `plan_id`.
    pub fn plan_organize(&self) -> Envelope {
        const TOOL: &str = "plan_organize";
        let call = self.call(TOOL, json!({}));
        let (env, plan) = match self.plan_inner() {
            Ok(x) => x,
            Err(e) => (jail_envelope(TOOL, &e), None),
        };
        let env = self.finish_read_only(call, env);
        if let (true, Some((id, moves))) = (env.ok, plan) {
            let mut book = self.plans.lock().unwrap_or_else(|p| p.into_inner());
            book.open.insert(id.clone(), moves);
            book.order.push_back(id);
            while book.order.len() > MAX_OPEN_PLANS {
                if let Some(old) = book.order.pop_front() {
                    book.open.remove(&old);
                }
            }
        }
        env
    }

    /// The state of a category folder for planning: the NFC names already there, or why
    /// it cannot receive files.
    fn category_folder(
        &self,
        dir: &WorkspaceDir,
        category: &str,
        dest_dir: &ContainedPath,
    ) -> Result<HashSet<String>, String> {
        match dir.stat(category) {
            Ok(None) => Ok(HashSet::new()),
            Ok(Some(f)) if f.kind == EntryKind::Directory => self
                .workspace
                .open_dir(dest_dir)
                .and_then(|d| d.nfc_names())
                .map_err(|e| e.to_string()),
            // A category folder that is a symlink would lead the move elsewhere.
            Ok(Some(_)) => Err(format!(
                "destination folder '{category}' is not a plain folder; symlinks are never followed"
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    #[allow(clippy::type_complexity)]
    fn plan_inner(&self) -> Result<(Envelope, Option<(String, Vec<PlannedMove>)>), JailError> {
        const TOOL: &str = "plan_organize";
        let root = ContainedPath::default();
        let dir = self.workspace.open_dir(&root)?;
        // Classification needs only each entry's name and type, which reading the folder
        // gives; `lstat` is spent only on the entries that become moves (what `apply_plan`
        // re-checks comes from it), and on entries whose type the file system did not store.
        let scan = dir.scan(self.max_list_entries)?;
        let mut truncated = scan.truncated;
        let mut moves: Vec<PlannedMove> = Vec::new();
        let mut move_values: Vec<Value> = Vec::new();
        let mut skips: Vec<Value> = Vec::new();
        // Per category folder: its path, and Err(reason) if it cannot be used or Ok(the
        // NFC names taken there).
        let mut folders: HashMap<&str, (ContainedPath, Result<HashSet<String>, String>)> =
            HashMap::new();
        'entries: for entry in scan.entries() {
            let name = entry.name();
            // What `lstat` said, once it has been asked.
            let mut seen: Option<FileIdentity> = None;
            let mut kind = match entry.kind_hint() {
                Some(k) => k,
                None => match dir.identity_of(&entry)? {
                    Some(id) => {
                        seen = Some(id);
                        id.kind
                    }
                    // Removed since the folder was read.
                    None => continue,
                },
            };
            // Runs once, or twice when `lstat` shows a type other than the folder read did
            // (the entry was replaced in between): then it is classified again by `lstat`.
            loop {
                let subject = Subject {
                    name,
                    utf8: entry.is_utf8(),
                    kind,
                };
                if let Some(r) = self.policy.evaluate(&subject, Scope::Planner) {
                    skips.push(skip_value(name, r.code, &r.reason, r.rule));
                    continue 'entries;
                }
                let Some(category) = self.policy.category_of(name, kind) else {
                    skips.push(skip_value(
                        name,
                        ResultCode::NeedsExplicitRequest,
                        NO_CATEGORY_REASON,
                        Some(RULE_ORGANIZE),
                    ));
                    continue 'entries;
                };
                // A name that cannot be a single path component (or is not UTF-8) cannot be
                // moved by name; checked without building a path for every entry.
                if !entry.is_utf8() || check_component(name).is_err() {
                    skips.push(skip_value(
                        name,
                        ResultCode::PolicyDenied,
                        UNUSABLE_NAME,
                        None,
                    ));
                    continue 'entries;
                }
                let folder = match folders.get_mut(category) {
                    Some(f) => f,
                    None => match root.join(category) {
                        Ok(dest_dir) => {
                            let taken = self.category_folder(&dir, category, &dest_dir);
                            folders.entry(category).or_insert((dest_dir, taken))
                        }
                        Err(_) => {
                            skips.push(skip_value(
                                name,
                                ResultCode::PolicyDenied,
                                UNUSABLE_NAME,
                                None,
                            ));
                            continue 'entries;
                        }
                    },
                };
                let (dest_dir, taken) = folder;
                let names = match taken {
                    Err(reason) => {
                        skips.push(skip_value(name, ResultCode::PolicyDenied, reason, None));
                        continue 'entries;
                    }
                    Ok(names) => names,
                };
                let key = nfc_cow(name);
                // An occupied destination is PROTECTION: never overwritten, never renamed
                // around (also two planned files whose names are NFC-equal).
                if names.contains(key.as_ref()) {
                    let dest = join_shown(dest_dir, name);
                    skips.push(skip_value(
                        name,
                        ResultCode::PolicyDenied,
                        &format!("destination '{dest}' already exists; nothing is overwritten"),
                        None,
                    ));
                    continue 'entries;
                }
                if moves.len() >= self.max_plan_moves {
                    truncated = true;
                    continue 'entries;
                }
                let identity = match seen {
                    Some(id) => id,
                    None => match dir.identity_of(&entry)? {
                        Some(id) if id.kind == kind => id,
                        Some(id) => {
                            seen = Some(id);
                            kind = id.kind;
                            continue;
                        }
                        None => continue 'entries,
                    },
                };
                let (src, dest) = match (root.join(name), dest_dir.join(name)) {
                    (Ok(src), Ok(dest)) => (src, dest),
                    (Err(e), _) | (_, Err(e)) => {
                        skips.push(skip_value(
                            name,
                            ResultCode::PolicyDenied,
                            &e.to_string(),
                            None,
                        ));
                        continue 'entries;
                    }
                };
                names.insert(key.into_owned());
                move_values.push(json!({
                    "src": src.to_string(),
                    "dest": dest.to_string(),
                    "category": category,
                    "size": identity.size,
                }));
                moves.push(PlannedMove {
                    src,
                    dest,
                    identity,
                });
                continue 'entries;
            }
        }
        let plan_id = uuid::Uuid::new_v4().to_string();
        let created = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        let mut env = Envelope::new(
            TOOL,
            ResultCode::Ok,
            format!("proposed {} move(s), skipped {}", moves.len(), skips.len()),
        );
        env.set("plan_id", plan_id.clone());
        env.set("created", created);
        env.set("move_count", moves.len());
        env.set("moves", Value::Array(move_values));
        env.set("skip_count", skips.len());
        env.set("skips", Value::Array(skips));
        env.set("truncated", truncated);
        Ok((env, Some((plan_id, moves))))
    }

    /// `apply_plan(plan_id)`: re-check every file, then move all of them or none.
    pub fn apply_plan(&self, plan_id: &str, progress: &dyn Fn(u64, u64)) -> Envelope {
        const TOOL: &str = "apply_plan";
        let mut call = self.call(TOOL, json!({ "plan_id": plan_id }));
        // A plan id is a UUID; anything long is not one of ours.
        if plan_id.is_empty() || plan_id.len() > 64 {
            return call.finish(Envelope::new(
                TOOL,
                ResultCode::InvalidRequest,
                "plan_id is not a plan id",
            ));
        }
        let plan = {
            let mut book = self.plans.lock().unwrap_or_else(|p| p.into_inner());
            // Single use: a replayed id must not move anything again.
            if book.used.contains(plan_id) {
                return call.finish(Envelope::new(
                    TOOL,
                    ResultCode::InvalidRequest,
                    format!("plan '{plan_id}' was already used; plan ids are single use, make a new plan"),
                ));
            }
            let Some(plan) = book.open.remove(plan_id) else {
                return call.finish(Envelope::new(
                    TOOL,
                    ResultCode::InvalidRequest,
                    format!("unknown plan id '{plan_id}'; make a plan with plan_organize first"),
                ));
            };
            book.order.retain(|id| id != plan_id);
            book.used.insert(plan_id.to_string());
            plan
        };
        let mut locked = match self.lock_and_recover() {
            Ok(l) => l,
            Err(e) => return call.finish(journal_failed(TOOL, &e)),
        };

        // Re-check: the plan is applied only to exactly the files that were planned.
        let mut changed: Vec<Value> = Vec::new();
        let mut dirs: HashMap<ContainedPath, Result<WorkspaceDir, JailError>> = HashMap::new();
        let mut dest_names: HashMap<ContainedPath, HashSet<String>> = HashMap::new();
        for m in &plan {
            let (Some(src_leaf), Some(dest_leaf)) = (m.src.leaf(), m.dest.leaf()) else {
                continue;
            };
            let src_dir = m.src.parent();
            let dir = dirs
                .entry(src_dir.clone())
                .or_insert_with(|| self.workspace.open_dir(&src_dir));
            let now = match dir {
                Ok(d) => d.stat(src_leaf),
                Err(e) => Err(e.clone()),
            };
            match now {
                Ok(None) => {
                    changed.push(json!({ "name": m.src.to_string(), "what": "it vanished" }))
                }
                Ok(Some(now)) => {
                    if let Some(what) = m.identity.difference(&now) {
                        changed.push(json!({ "name": m.src.to_string(), "what": what }));
                    }
                }
                Err(e) => changed.push(json!({ "name": m.src.to_string(), "what": e.to_string() })),
            }
            let dest_dir = m.dest.parent();
            if !dest_names.contains_key(&dest_dir) {
                let names = self.names_in(&dest_dir);
                match names {
                    Ok(n) => {
                        dest_names.insert(dest_dir.clone(), n);
                    }
                    Err(e) => {
                        changed
                            .push(json!({ "name": dest_dir.to_string(), "what": e.to_string() }));
                        dest_names.insert(dest_dir.clone(), HashSet::new());
                    }
                }
            }
            if dest_names
                .get(&dest_dir)
                .is_some_and(|n| n.contains(&nfc(dest_leaf)))
            {
                changed.push(
                    json!({ "name": m.dest.to_string(), "what": "the destination is taken" }),
                );
            }
        }
        if !changed.is_empty() {
            let mut env = Envelope::new(
                TOOL,
                ResultCode::OperationFailed,
                "the workspace changed since the plan was made; the whole plan is refused and nothing was moved",
            );
            env.set("plan_id", plan_id);
            env.set("changed", Value::Array(changed));
            return call.finish(env);
        }

        let mut intent = Map::new();
        intent.insert("plan_id".into(), Value::from(plan_id));
        intent.insert("planned".into(), Value::from(plan.len()));
        if let Err(env) = call.intent(intent) {
            return env;
        }
        let action = Action {
            id: locked.next_action_id(),
            tool: TOOL.into(),
            moves: plan
                .iter()
                .map(|m| JournalMove {
                    src: m.src.to_string(),
                    dest: m.dest.to_string(),
                    identity: m.identity,
                })
                .collect(),
        };
        let steps: Vec<StepMove> = plan
            .iter()
            .filter_map(|m| {
                Some(StepMove {
                    from_dir: m.src.parent(),
                    from_leaf: m.src.leaf()?.to_string(),
                    to_dir: m.dest.parent(),
                    to_leaf: m.dest.leaf()?.to_string(),
                    identity: m.identity,
                })
            })
            .collect();
        match self.run_step(&mut locked, Direction::Do, &action, &steps, progress) {
            Ok(()) => {}
            Err(env) => return call.finish(self.step_failed(TOOL, env, &steps)),
        }
        let mut env = Envelope::new(
            TOOL,
            ResultCode::Ok,
            format!("moved {} file(s)", plan.len()),
        );
        env.set("plan_id", plan_id);
        env.set("planned", plan.len());
        env.set("moved", plan.len());
        env.set(
            "moves",
            Value::Array(
                plan.iter()
                    .map(|m| json!({ "src": m.src.to_string(), "dest": m.dest.to_string() }))
                    .collect(),
            ),
        );
        call.finish(env)
    }

    fn step_failed(&self, tool: &str, failure: StepError, steps: &[StepMove]) -> Envelope {
        match failure {
            StepError::Journal(e) => journal_failed(tool, &e),
            StepError::Move(f) => {
                let reason = if f.put_back == f.index {
                    format!("{}; nothing was moved", f.error)
                } else {
                    format!(
                        "{}; {} of {} move(s) already made could not be put back (see undo_last_action)",
                        f.error,
                        f.index - f.put_back,
                        f.index
                    )
                };
                let mut env = Envelope::new(tool, jail_code(&f.error), reason);
                if let Some(s) = steps.get(f.index) {
                    env.set(
                        "failed",
                        json!({
                            "src": join_shown(&s.from_dir, &s.from_leaf),
                            "dest": join_shown(&s.to_dir, &s.to_leaf),
                        }),
                    );
                }
                env
            }
        }
    }

    /// Journal `begin`, the renames, journal `end`. If a rename fails, the moves already
    /// made are carried back (newest first) and the journal records what stayed moved.
    fn run_step(
        &self,
        locked: &mut Locked<'_>,
        op: Direction,
        action: &Action,
        steps: &[StepMove],
        progress: &dyn Fn(u64, u64),
    ) -> Result<(), StepError> {
        // Destination folders are made before the journal's intent (they are never
        // removed, so they need no undo).
        let mut dirs: HashMap<ContainedPath, WorkspaceDir> = HashMap::new();
        for s in steps {
            for d in [&s.from_dir, &s.to_dir] {
                if !dirs.contains_key(d) {
                    let handle = if d == &s.to_dir {
                        self.workspace.ensure_dir(d)
                    } else {
                        self.workspace.open_dir(d)
                    };
                    match handle {
                        Ok(h) => {
                            dirs.insert(d.clone(), h);
                        }
                        Err(error) => {
                            return Err(StepError::Move(StepFailure {
                                error,
                                index: 0,
                                put_back: 0,
                            }));
                        }
                    }
                }
            }
        }
        locked.begin(op, action).map_err(StepError::Journal)?;
        let total = steps.len() as u64;
        let every = (total / 100).max(1);
        for (i, s) in steps.iter().enumerate() {
            let (Some(from), Some(to)) = (dirs.get(&s.from_dir), dirs.get(&s.to_dir)) else {
                continue;
            };
            // Attack stopped: the source exchanged for a symlink (RENAME_EXCHANGE) after the
            // re-check. The entry that arrives is checked to be the re-checked inode; one
            // that is not is put back at once, this move counts as not made, and the step
            // stops here: the moves before it are carried back below and nothing after it
            // moves.
            if let Err(error) =
                self.workspace
                    .rename_checked(from, &s.from_leaf, to, &s.to_leaf, &s.identity)
            {
                let mut still_moved = Vec::new();
                let mut put_back = 0;
                for j in (0..i).rev() {
                    let Some(b) = steps.get(j) else { continue };
                    // Checked too: a carried-back move that brought another entry puts it
                    // back and stays in the journal as still moved (its undo then finds the
                    // file changed and refuses).
                    let back = match (dirs.get(&b.to_dir), dirs.get(&b.from_dir)) {
                        (Some(t), Some(f)) => self.workspace.rename_checked(
                            t,
                            &b.to_leaf,
                            f,
                            &b.from_leaf,
                            &b.identity,
                        ),
                        _ => Err(JailError::NotFound(b.to_leaf.clone())),
                    };
                    match back {
                        Ok(()) => put_back += 1,
                        Err(_) => still_moved.push(j),
                    }
                }
                still_moved.sort_unstable();
                locked
                    .end(Done::Only(still_moved))
                    .map_err(StepError::Journal)?;
                return Err(StepError::Move(StepFailure {
                    error,
                    index: i,
                    put_back,
                }));
            }
            let done = i as u64 + 1;
            if done.is_multiple_of(every) || done == total {
                progress(done, total);
            }
        }
        locked.end(Done::Complete).map_err(StepError::Journal)?;
        Ok(())
    }

    /// `move_file(src, dest)`: move one named entry to a full destination path, creating
    /// missing parent folders inside the workspace. Obeys only PROTECTION.
    pub fn move_file(&self, src: &str, dest: &str) -> Envelope {
        const TOOL: &str = "move_file";
        let mut call = self.call(TOOL, json!({ "src": src, "dest": dest }));
        let src_path = match self.workspace.contain(src) {
            Ok(p) => p,
            Err(e) => return call.finish(jail_envelope(TOOL, &e)),
        };
        let dest_path = match self.workspace.contain(dest) {
            Ok(p) => p,
            Err(e) => return call.finish(jail_envelope(TOOL, &e)),
        };
        let (Some(src_leaf), Some(dest_leaf)) = (src_path.leaf(), dest_path.leaf()) else {
            return call.finish(Envelope::new(
                TOOL,
                ResultCode::InvalidRequest,
                "src and dest must name an entry inside the workspace, not the workspace itself",
            ));
        };
        let src_dir = match self.workspace.open_dir(&src_path.parent()) {
            Ok(d) => d,
            Err(JailError::NotFound(_)) => {
                return call.finish(Envelope::new(
                    TOOL,
                    ResultCode::OperationFailed,
                    format!("source '{src_path}' does not exist"),
                ));
            }
            Err(e) => return call.finish(jail_envelope(TOOL, &e)),
        };
        let (stored_leaf, identity) = match src_dir.find(src_leaf) {
            Ok(Some(found)) => found,
            Ok(None) => {
                return call.finish(Envelope::new(
                    TOOL,
                    ResultCode::OperationFailed,
                    format!("source '{src_path}' does not exist"),
                ));
            }
            Err(e) => return call.finish(jail_envelope(TOOL, &e)),
        };
        // PROTECTION on the entry itself: a symlink/FIFO/device falls to deny-by-default and
        // is never opened or moved; declared protection rules apply to named requests too.
        let subject = Subject {
            name: &stored_leaf,
            utf8: true,
            kind: identity.kind,
        };
        if let Some(r) = self.policy.evaluate(&subject, Scope::Explicit) {
            return call.finish(refusal_envelope(TOOL, &r));
        }
        // PROTECTION on the names the move would create (a bidi-disguised destination).
        for (i, part) in dest_path.components().iter().enumerate() {
            let kind = if i + 1 == dest_path.components().len() {
                identity.kind
            } else {
                EntryKind::Directory
            };
            if let Some(r) = self.policy.check_new_name(part, kind) {
                return call.finish(refusal_envelope(TOOL, &r));
            }
        }
        let mut locked = match self.lock_and_recover() {
            Ok(l) => l,
            Err(e) => return call.finish(journal_failed(TOOL, &e)),
        };
        // The destination, read-only first: a symlinked folder on the way is PATH_ESCAPE
        // before anything is created; an occupied name (also NFC-equal) is refused.
        let dest_parent = dest_path.parent();
        match self.workspace.open_dir(&dest_parent) {
            Ok(d) => match d.is_free(dest_leaf) {
                Ok(true) => {}
                Ok(false) => {
                    return call.finish(Envelope::new(
                        TOOL,
                        ResultCode::PolicyDenied,
                        format!("destination '{dest_path}' already exists; nothing is overwritten"),
                    ));
                }
                Err(e) => return call.finish(jail_envelope(TOOL, &e)),
            },
            Err(JailError::NotFound(_)) => {}
            Err(e) => return call.finish(jail_envelope(TOOL, &e)),
        }
        let src_stored = src_dir
            .path()
            .join(&stored_leaf)
            .map(|p| p.to_string())
            .unwrap_or_default();
        let mut intent = Map::new();
        intent.insert("src".into(), Value::from(src_stored.clone()));
        intent.insert("dest".into(), Value::from(dest_path.to_string()));
        if let Err(env) = call.intent(intent) {
            return env;
        }
        let action = Action {
            id: locked.next_action_id(),
            tool: TOOL.into(),
            moves: vec![JournalMove {
                src: src_stored.clone(),
                dest: dest_path.to_string(),
                identity,
            }],
        };
        let steps = [StepMove {
            from_dir: src_dir.path().clone(),
            from_leaf: stored_leaf,
            to_dir: dest_parent,
            to_leaf: dest_leaf.to_string(),
            identity,
        }];
        if let Err(f) = self.run_step(&mut locked, Direction::Do, &action, &steps, &|_, _| {}) {
            let env = match f {
                StepError::Move(f) => jail_envelope(TOOL, &f.error),
                StepError::Journal(e) => journal_failed(TOOL, &e),
            };
            return call.finish(env);
        }
        let mut env = Envelope::new(TOOL, ResultCode::Ok, format!("moved {src_stored}"));
        env.set("src", src_stored);
        env.set("dest", dest_path.to_string());
        env.set("moved", 1);
        call.finish(env)
    }

    /// `undo_last_action()`: put back every file of the most recent action, or none.
    pub fn undo_last_action(&self) -> Envelope {
        self.step_history("undo_last_action", Direction::Undo)
    }

    /// `redo_last_action()`: re-apply the most recently undone action, or nothing.
    pub fn redo_last_action(&self) -> Envelope {
        self.step_history("redo_last_action", Direction::Redo)
    }

    fn step_history(&self, tool: &'static str, op: Direction) -> Envelope {
        let mut call = self.call(tool, json!({}));
        let mut locked = match self.lock_and_recover() {
            Ok(l) => l,
            Err(e) => return call.finish(journal_failed(tool, &e)),
        };
        let stack = match op {
            Direction::Undo => &locked.history().undo,
            _ => &locked.history().redo,
        };
        let Some(action) = stack.last().cloned() else {
            let what = if op == Direction::Undo {
                "undo"
            } else {
                "redo"
            };
            return call.finish(Envelope::new(
                tool,
                ResultCode::InvalidRequest,
                format!("nothing to {what}"),
            ));
        };
        // Check every place before moving anything: the file at each place must still be
        // the one that was moved there (never carry back a replacement), and each target
        // place must be free (never overwrite to make room).
        let mut taken = Vec::new();
        let mut replaced = Vec::new();
        let mut missing = Vec::new();
        let mut steps = Vec::new();
        // One handle and one NFC name set per folder, not one folder scan per file.
        let mut from_dirs: HashMap<ContainedPath, Option<WorkspaceDir>> = HashMap::new();
        let mut to_names: HashMap<ContainedPath, HashSet<String>> = HashMap::new();
        for m in &action.moves {
            let (from, to) = op.places(m);
            let (from_path, to_path) =
                match (self.workspace.contain(from), self.workspace.contain(to)) {
                    (Ok(f), Ok(t)) => (f, t),
                    (Err(e), _) | (_, Err(e)) => return call.finish(jail_envelope(tool, &e)),
                };
            let (Some(from_leaf), Some(to_leaf)) = (from_path.leaf(), to_path.leaf()) else {
                continue;
            };
            let from_parent = from_path.parent();
            if !from_dirs.contains_key(&from_parent) {
                let dir = match self.workspace.open_dir(&from_parent) {
                    Ok(d) => Some(d),
                    Err(JailError::NotFound(_)) => None,
                    Err(e) => return call.finish(jail_envelope(tool, &e)),
                };
                from_dirs.insert(from_parent.clone(), dir);
            }
            let now = match from_dirs.get(&from_parent) {
                Some(Some(d)) => d.stat(from_leaf),
                _ => Ok(None),
            };
            match now {
                Ok(Some(now)) if m.identity.unchanged(&now) => {}
                Ok(Some(_)) => replaced.push(from.to_string()),
                Ok(None) => missing.push(from.to_string()),
                Err(e) => return call.finish(jail_envelope(tool, &e)),
            }
            let to_parent = to_path.parent();
            if !to_names.contains_key(&to_parent) {
                let names = self.names_in(&to_parent);
                match names {
                    Ok(n) => {
                        to_names.insert(to_parent.clone(), n);
                    }
                    Err(e) => return call.finish(jail_envelope(tool, &e)),
                }
            }
            // Taken also when an NFC-equal name is there, or when two moves of this action
            // would land on one name.
            if let Some(names) = to_names.get_mut(&to_parent)
                && !names.insert(nfc(to_leaf))
            {
                taken.push(to.to_string());
            }
            steps.push(StepMove {
                from_dir: from_parent,
                from_leaf: from_leaf.to_string(),
                to_dir: to_parent,
                to_leaf: to_leaf.to_string(),
                identity: m.identity,
            });
        }
        let verb = if op == Direction::Undo {
            "undo"
        } else {
            "redo"
        };
        if !taken.is_empty() || !replaced.is_empty() || !missing.is_empty() {
            let mut env = Envelope::new(
                tool,
                ResultCode::OperationFailed,
                format!(
                    "{verb} refused: a place is taken or a file was replaced or moved since; nothing was moved"
                ),
            );
            env.set("action", action.tool.clone());
            env.set("taken", taken);
            env.set("replaced", replaced);
            env.set("missing", missing);
            return call.finish(env);
        }
        let mut intent = Map::new();
        intent.insert("action_id".into(), Value::from(action.id));
        intent.insert("action".into(), Value::from(action.tool.clone()));
        intent.insert("moves".into(), Value::from(action.moves.len()));
        if let Err(env) = call.intent(intent) {
            return env;
        }
        if let Err(f) = self.run_step(&mut locked, op, &action, &steps, &|_, _| {}) {
            return call.finish(self.step_failed(tool, f, &steps));
        }
        let n = action.moves.len();
        let mut env = Envelope::new(
            tool,
            ResultCode::Ok,
            format!("{verb} of {} moved {n} file(s)", action.tool),
        );
        env.set("action", action.tool.clone());
        env.set("moved", n);
        env.set(
            "moves",
            Value::Array(
                action
                    .moves
                    .iter()
                    .map(|m| {
                        let (from, to) = op.places(m);
                        json!({ "src": from, "dest": to })
                    })
                    .collect(),
            ),
        );
        call.finish(env)
    }
}

enum StepError {
    Move(StepFailure),
    Journal(JournalError),
}

fn join_shown(dir: &ContainedPath, leaf: &str) -> String {
    if dir.is_root() {
        leaf.to_string()
    } else {
        format!("{dir}/{leaf}")
    }
}
