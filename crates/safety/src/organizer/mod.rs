//! The files server's request flow: six tools, each answered with an [`Envelope`]. None of
//! them deletes; none overwrites.
//!
//! Every tool parses its arguments into workspace names (`Workspace::contain`:
//! `INVALID_REQUEST`, `PATH_ESCAPE`), evaluates the layered rules (`SkipPolicy`:
//! `POLICY_DENIED`, `NEEDS_EXPLICIT_REQUEST`), acts through directory handles
//! (`Workspace`) under the journal's lock ([`Journal`]), and is recorded by the audited-call
//! recorder: a tool that changes something writes an intent record first (with
//! `audit_fail_mode = "closed"` a failed intent record means `AUDIT_UNAVAILABLE` and
//! nothing moves), then the outcome record; in `"open"` mode a missing record is reported
//! in `detail.audit`.
//!
//! One file per part of the flow: `list` (list_files), `plan` (plan_organize and
//! apply_plan, which share the plan book), `moves` (move_file and the journaled step every
//! move goes through) and `history` (undo and redo). A tool's refusals are `ToolError`s
//! inside, turned into the envelope in one place (`ToolError::envelope`); its detail is
//! a struct, whose schema is the tool's `outputSchema` ([`output_schema`]).

mod history;
mod list;
mod moves;
mod plan;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::audit::AuditError;
use crate::config::Config;
use crate::jail::workspace::{ContainedPath, JailError, Workspace};
use crate::journal::{self, History, Journal, JournalError, Locked};
use crate::policy::layers::{Refusal, SkipPolicy};
use crate::protocol::{
    self, ArgKind, ArgSpec, MAX_PATH_ARG_BYTES, MAX_PLAN_ID_BYTES, MAX_QUOTE_BYTES,
};
use crate::recorder::{Call, Durability, Recorder, Unrecorded};
use crate::redact::{RedactError, Redactor};
use crate::result::{self, Envelope, NoDetail, ResultCode};

pub use history::HistoryDetail;
pub use list::{ListFilesDetail, ListedEntry, WhyNot};
pub use moves::{MoveFileDetail, MovePair};
pub use plan::{ApplyPlanDetail, Change, PlanMove, PlanOrganizeDetail, Skip};

use plan::PlanBook;

/// Default `[files] max_plan_moves`.
pub(crate) const DEFAULT_MAX_PLAN_MOVES: u64 = 500;
/// Default `[files] max_list_entries`.
pub(crate) const DEFAULT_MAX_LIST_ENTRIES: u64 = 10_000;

/// The six tool names, in the order the server lists them.
pub(crate) const TOOL_NAMES: [&str; 6] = [
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

/// What each files tool takes, as its refusals describe it (the schemas are the structs
/// below; `dispatch` checks the shape first so that a refusal names the argument and what
/// it must be, never serde's words).
fn argument_specs(tool: &str) -> &'static [ArgSpec] {
    const fn string(name: &'static str, required: bool, must_be: &'static str) -> ArgSpec {
        ArgSpec {
            name,
            required,
            kind: ArgKind::String,
            must_be,
        }
    }
    const LIST: &[ArgSpec] = &[string(
        "subdir",
        false,
        "a string: a folder inside the workspace, relative to it",
    )];
    const APPLY: &[ArgSpec] = &[string(
        "plan_id",
        true,
        "a string: the plan_id that plan_organize returned",
    )];
    const MOVE: &[ArgSpec] = &[
        string(
            "src",
            true,
            "a string: the path of the entry to move, relative to the workspace",
        ),
        string(
            "dest",
            true,
            "a string: the full destination path (not a folder), relative to the workspace",
        ),
    ];
    match tool {
        "list_files" => LIST,
        "apply_plan" => APPLY,
        "move_file" => MOVE,
        _ => &[],
    }
}

/// Arguments of `list_files`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListFilesArgs {
    /// A folder inside the workspace to list instead of its top level (workspace-relative).
    /// At most 4096 bytes.
    #[serde(default)]
    #[schemars(length(max = MAX_PATH_ARG_BYTES))]
    pub subdir: Option<String>,
}

/// Arguments of `apply_plan`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApplyPlanArgs {
    /// The `plan_id` that `plan_organize` returned (single use).
    #[schemars(length(min = 1, max = MAX_PLAN_ID_BYTES))]
    pub plan_id: String,
}

/// Arguments of `move_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MoveFileArgs {
    /// The entry to move (workspace-relative). At most 4096 bytes.
    #[schemars(length(min = 1, max = MAX_PATH_ARG_BYTES))]
    pub src: String,
    /// The full destination path, not a folder (workspace-relative); missing parent
    /// folders are created. At most 4096 bytes.
    #[schemars(length(min = 1, max = MAX_PATH_ARG_BYTES))]
    pub dest: String,
}

/// Arguments of the tools that take none (`plan_organize`, `undo_last_action`,
/// `redo_last_action`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// The `inputSchema` of a files tool (`None` for a name this server does not have).
pub fn input_schema(tool: &str) -> Option<Map<String, Value>> {
    Some(match tool {
        "list_files" => result::input_schema::<ListFilesArgs>(),
        "apply_plan" => result::input_schema::<ApplyPlanArgs>(),
        "move_file" => result::input_schema::<MoveFileArgs>(),
        "plan_organize" | "undo_last_action" | "redo_last_action" => {
            result::input_schema::<NoArgs>()
        }
        _ => return None,
    })
}

/// The `outputSchema` of a files tool (`None` for a name this server does not have).
pub fn output_schema(tool: &str) -> Option<Map<String, Value>> {
    Some(match tool {
        "list_files" => result::output_schema::<ListFilesDetail>(),
        "plan_organize" => result::output_schema::<PlanOrganizeDetail>(),
        "apply_plan" => result::output_schema::<ApplyPlanDetail>(),
        "move_file" => result::output_schema::<MoveFileDetail>(),
        "undo_last_action" | "redo_last_action" => result::output_schema::<HistoryDetail>(),
        _ => return None,
    })
}

/// The organiser could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OrganizerError {
    /// `[files]` has no resolved workspace root (`config::load` sets it).
    #[error("files.workspace_root is not set")]
    NoWorkspaceRoot,
    /// `[files]` has no resolved journal path (`config::load` sets it).
    #[error("files.journal is not set")]
    NoJournal,
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

/// Why a tool call did nothing (or stopped): each becomes an envelope with no detail in
/// [`ToolError::envelope`]. Refusals that report what they found (a plan whose files
/// changed, an undo whose places are taken, a step that failed part way) are envelopes
/// with their tool's detail instead.
#[derive(Debug, thiserror::Error)]
enum ToolError {
    /// The arguments do not fit the tool's schema (an unknown, missing or mistyped one), or
    /// one is longer than its bound.
    #[error("invalid arguments for '{tool}': {message}")]
    Arguments {
        /// The tool, quoted.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// A tool this server does not have.
    #[error("unknown tool '{0}'; this server has {names}", names = TOOL_NAMES.join(", "))]
    UnknownTool(String),
    /// A path was refused or a file operation failed.
    #[error(transparent)]
    Jail(#[from] JailError),
    /// A layered rule refused the entry.
    #[error("{}", .0.reason)]
    Refused(Refusal),
    /// The journal could not be read or written.
    #[error("the undo journal could not be written, so nothing was moved: {0}")]
    Journal(#[from] JournalError),
    /// Listing never enters tool-managed trees.
    #[error("listing never enters '.git' or 'node_modules'")]
    NeverEntered,
    /// `src` or `dest` names the workspace itself.
    #[error("src and dest must name an entry inside the workspace, not the workspace itself")]
    NotAnEntry,
    /// The source of a move is not there.
    #[error("{}", source_missing(.0))]
    SourceMissing(String),
    /// The destination of a move is taken (also by an NFC-equal name).
    #[error("destination '{0}' already exists; nothing is overwritten")]
    DestinationTaken(ContainedPath),
    /// Not something plan_organize could have returned.
    #[error(
        "plan_id is empty or too long to be a plan id (plan_organize returns a 36-character \
         one); make a plan with plan_organize first"
    )]
    NotAPlanId,
    /// A plan id seen before.
    #[error("plan '{0}' was already used; plan ids are single use, make a new plan")]
    PlanUsed(String),
    /// A plan id never seen (or forgotten).
    #[error("unknown plan id '{0}'; make a plan with plan_organize first")]
    UnknownPlan(String),
    /// The history stack is empty.
    #[error("nothing to {0}")]
    NothingTo(&'static str),
    /// The intent record could not be written (`audit_fail_mode = "closed"`).
    #[error(
        "the audit record could not be written, so nothing was done (audit_fail_mode = \"closed\")"
    )]
    Unrecorded(#[from] Unrecorded),
}

impl ToolError {
    fn code(&self) -> ResultCode {
        match self {
            ToolError::Arguments { .. }
            | ToolError::UnknownTool(_)
            | ToolError::NotAnEntry
            | ToolError::NotAPlanId
            | ToolError::PlanUsed(_)
            | ToolError::UnknownPlan(_)
            | ToolError::NothingTo(_) => ResultCode::InvalidRequest,
            ToolError::Jail(e) => jail_code(e),
            ToolError::Refused(r) => r.code,
            ToolError::Journal(_) | ToolError::SourceMissing(_) => ResultCode::OperationFailed,
            ToolError::NeverEntered | ToolError::DestinationTaken(_) => ResultCode::PolicyDenied,
            ToolError::Unrecorded(_) => ResultCode::AuditUnavailable,
        }
    }

    /// The one conversion of a refusal into the envelope of `tool`.
    fn envelope<D: Default>(&self, tool: &str) -> Envelope<D> {
        Envelope::with(tool, self.code(), self.to_string(), D::default())
    }
}

/// The reason of [`ToolError::SourceMissing`] for `src` as the caller gave it: a URL is
/// named as one, not shown as the path it was read as (`https:/host/x`).
fn source_missing(src: &str) -> String {
    let shown = protocol::quote(src);
    if crate::jail::is_url(src) {
        format!(
            "source '{shown}' is a URL; src must be the path of an entry inside the workspace, \
             relative to it, and no entry has this name"
        )
    } else {
        format!("source '{shown}' does not exist")
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

/// The reason of a read-only call whose record cannot be written under "closed".
const NOTHING_RETURNED: &str =
    "the audit record could not be written, so nothing is returned (audit_fail_mode = \"closed\")";

/// The files organiser: one workspace, its rules, its journal and the audit log.
#[derive(Debug)]
pub struct Organizer {
    workspace: Workspace,
    policy: SkipPolicy,
    journal: Journal,
    recorder: Recorder,
    max_plan_moves: usize,
    max_list_entries: usize,
    plans: Mutex<PlanBook>,
}

impl Organizer {
    /// Start the organiser for a loaded `[files]` config: open the workspace, the audit
    /// log and the journal, and recover a step a crash interrupted.
    pub fn open(config: &Config) -> Result<Organizer, OrganizerError> {
        let files = &config.files;
        let root = files
            .workspace_root
            .as_deref()
            .ok_or(OrganizerError::NoWorkspaceRoot)?;
        let journal_path = files.journal.as_deref().ok_or(OrganizerError::NoJournal)?;
        let workspace = Workspace::open(root)?;
        let journal = Journal::open(journal_path)?;
        let redactor = Arc::new(Redactor::new(&config.redaction)?);
        let recorder = Recorder::open(config, redactor)?;
        let to_usize = |v: Option<u64>, default: u64| {
            usize::try_from(v.unwrap_or(default).max(1)).unwrap_or(usize::MAX)
        };
        let organizer = Organizer {
            policy: SkipPolicy::new(files),
            max_plan_moves: to_usize(files.max_plan_moves, DEFAULT_MAX_PLAN_MOVES),
            max_list_entries: to_usize(files.max_list_entries, DEFAULT_MAX_LIST_ENTRIES),
            workspace,
            journal,
            recorder,
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
            let mut rec = Map::new();
            rec.insert("event".into(), Value::from("recovery"));
            rec.insert("action_id".into(), Value::from(r.action_id));
            rec.insert("moved".into(), Value::from(r.moved));
            rec.insert("not_moved".into(), Value::from(r.not_moved));
            rec.insert("missing".into(), Value::from(r.missing.clone()));
            if let Err(e) = self.recorder.append(rec, Durability::Now) {
                tracing::warn!("recovery audit record not written: {e}");
            }
        }
        Ok(locked)
    }

    /// Start the audited call of `tool`; `args` go into each of its records.
    fn call(&self, tool: &str, args: Value) -> Call<'_> {
        let mut fields = Map::new();
        fields.insert("args".into(), args);
        self.recorder.call(tool, fields)
    }

    /// Finish a call that changes something: its refusal or its answer, recorded.
    fn finish<D: Serialize + Default>(
        call: Call<'_>,
        answer: Result<Envelope<D>, ToolError>,
    ) -> Envelope {
        match answer {
            Ok(env) => call.finish(env, Map::new(), Durability::Now),
            // The intent could not be written; the outcome will not be either.
            Err(e @ ToolError::Unrecorded(_)) => {
                let env = e.envelope::<D>(call.tool());
                call.finish_unrecorded(env)
            }
            Err(e) => {
                let env = e.envelope::<D>(call.tool());
                call.finish(env, Map::new(), Durability::Now)
            }
        }
    }

    /// Finish a call that changes nothing: one record after the fact; under "closed" a
    /// call whose record cannot be written is not answered with data.
    fn finish_read_only<D: Serialize + Default>(
        call: Call<'_>,
        answer: Result<Envelope<D>, ToolError>,
    ) -> Envelope {
        let env = answer.unwrap_or_else(|e| e.envelope(call.tool()));
        call.finish_read_only(env, NOTHING_RETURNED)
    }

    /// The answer to an HTTP caller's call that [`crate::callers::run_as`] did not let in
    /// (a tool outside its subset, a limit reached): recorded like every call, nothing moved.
    pub fn refused(
        &self,
        tool: &str,
        args: Option<&Map<String, Value>>,
        refusal: crate::callers::Refusal,
    ) -> Envelope {
        let arguments = protocol::audit_arguments(args, ARGUMENT_BOUNDS);
        self.recorder
            .refused(&protocol::quote(tool), arguments, &refusal)
    }

    /// Record a request the HTTP front refused before any tool saw it.
    pub fn record_http_refusal(&self, refusal: &crate::callers::HttpRefusal) {
        self.recorder.http_refused(refusal);
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
        let bad_args = |message: String| ToolError::Arguments {
            tool: tool.to_string(),
            message,
        };
        // serde's messages quote the value they choke on; a reason quotes a short prefix.
        fn parse<T: for<'de> Deserialize<'de>>(raw: &Value, tool: &str) -> Result<T, ToolError> {
            T::deserialize(raw).map_err(|e| ToolError::Arguments {
                tool: tool.to_string(),
                message: protocol::clip(e.to_string(), 2 * MAX_QUOTE_BYTES),
            })
        }
        // Every string argument has a bound (docs/protocol.md); an over-long one is refused
        // before anything reads it, with its length, never its value.
        let checked = if TOOL_NAMES.contains(&tool) {
            protocol::check_arguments(args, ARGUMENT_BOUNDS)
                .map_err(|e| bad_args(e.to_string()))
                .and_then(|()| {
                    protocol::check_shape(tool, args, argument_specs(tool))
                        .map_err(|e| bad_args(e.to_string()))
                })
        } else {
            Ok(())
        };
        let shown_tool = protocol::quote(tool);
        let answer = checked.and_then(|()| match tool {
            "list_files" => {
                parse::<ListFilesArgs>(&raw, tool).map(|a| self.list_files(a.subdir.as_deref()))
            }
            "plan_organize" => parse::<NoArgs>(&raw, tool).map(|_| self.plan_organize()),
            "apply_plan" => {
                parse::<ApplyPlanArgs>(&raw, tool).map(|a| self.apply_plan(&a.plan_id, progress))
            }
            "move_file" => {
                parse::<MoveFileArgs>(&raw, tool).map(|a| self.move_file(&a.src, &a.dest))
            }
            "undo_last_action" => parse::<NoArgs>(&raw, tool).map(|_| self.undo_last_action()),
            "redo_last_action" => parse::<NoArgs>(&raw, tool).map(|_| self.redo_last_action()),
            _ => Err(ToolError::UnknownTool(shown_tool.clone())),
        });
        answer.unwrap_or_else(|error| {
            // A refused call's record keeps each argument only within its bound: a 100 000
            // character plan_id must not become a 100 kB audit line.
            let call = self.call(
                &shown_tool,
                protocol::audit_arguments(args, ARGUMENT_BOUNDS),
            );
            Self::finish::<NoDetail>(call, Err(error))
        })
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
}
