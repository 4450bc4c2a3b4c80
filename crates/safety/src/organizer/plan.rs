//! `plan_organize` and `apply_plan`: a plan proposes moves of top-level files into
//! category folders and changes nothing; applying it re-checks every file and moves all of
//! them or none. The two share the plan book: a plan id works once.

use std::collections::{HashMap, HashSet, VecDeque};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::moves::{MovePair, StepMove, join_shown, step_failed};
use super::{Organizer, ToolError};
use crate::jail::workspace::{
    ContainedPath, EntryKind, FileIdentity, JailError, WorkspaceDir, check_component, nfc, nfc_cow,
};
use crate::journal::{Action, Direction, JournalMove};
use crate::policy::layers::{NO_CATEGORY_REASON, RULE_ORGANIZE, Scope, Subject};
use crate::recorder::Call;
use crate::result::{Envelope, ResultCode};

const PLAN_ORGANIZE: &str = "plan_organize";
const APPLY_PLAN: &str = "apply_plan";

/// Why an entry whose name cannot be one path component is skipped by a plan.
const UNUSABLE_NAME: &str = "the name cannot be used as a destination";

/// Plans kept in memory at once; the oldest unused plan is forgotten first.
const MAX_OPEN_PLANS: usize = 64;

/// `detail` of `plan_organize`; a refused call has none of these fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct PlanOrganizeDetail {
    /// The single-use id to give `apply_plan`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// When the plan was made (RFC 3339, UTC, microseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// `moves.len()`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_count: Option<usize>,
    /// The proposed moves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<PlanMove>>,
    /// `skips.len()`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_count: Option<usize>,
    /// The entries the plan leaves, each with why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skips: Option<Vec<Skip>>,
    /// The folder had more entries than `max_list_entries`, or the moves were cut at
    /// `max_plan_moves`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// One proposed move.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanMove {
    /// Where the entry is, workspace-relative.
    pub src: String,
    /// Where it would go.
    pub dest: String,
    /// The category that chose the folder.
    pub category: String,
    /// Its size when planned, in bytes.
    pub size: u64,
}

/// An entry a plan leaves where it is.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Skip {
    /// `POLICY_DENIED` (never moved) or `NEEDS_EXPLICIT_REQUEST` (moved only when named).
    pub code: ResultCode,
    /// The name as stored.
    pub name: String,
    /// Why.
    pub reason: String,
    /// The rule that decided (`organize`), or `null`.
    pub rule: Option<String>,
}

impl Skip {
    fn new(name: &str, code: ResultCode, reason: impl Into<String>, rule: Option<&str>) -> Skip {
        Skip {
            code,
            name: name.to_string(),
            reason: reason.into(),
            rule: rule.map(str::to_string),
        }
    }
}

/// `detail` of `apply_plan`: the moves made; or what changed since the plan was made; or
/// the move a failed step stopped at. A call refused before it looked has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ApplyPlanDetail {
    /// The plan applied (or refused because the workspace changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// Moves in the plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned: Option<usize>,
    /// Moves made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<usize>,
    /// The moves made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<MovePair>>,
    /// What changed since the plan was made (the whole plan was refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<Vec<Change>>,
    /// The move the step stopped at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<MovePair>,
}

/// One difference between the plan and the workspace.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Change {
    /// The workspace-relative path concerned.
    pub name: String,
    /// What is different.
    pub what: String,
}

impl Change {
    fn new(path: &ContainedPath, what: impl Into<String>) -> Change {
        Change {
            name: path.to_string(),
            what: what.into(),
        }
    }
}

/// Why a category folder cannot receive files.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    /// It is not a plain folder (a symlink would lead the move elsewhere).
    #[error("destination folder '{0}' is not a plain folder; symlinks are never followed")]
    NotPlain(String),
    /// It could not be read.
    #[error(transparent)]
    Jail(#[from] JailError),
}

/// One move of a plan, with what was seen at planning time.
#[derive(Debug, Clone)]
struct PlannedMove {
    src: ContainedPath,
    dest: ContainedPath,
    identity: FileIdentity,
}

/// A plan's id and its moves.
type Plan = (String, Vec<PlannedMove>);

/// The plans made and not yet used, and the ids already used.
#[derive(Debug, Default)]
pub(super) struct PlanBook {
    open: HashMap<String, Vec<PlannedMove>>,
    order: VecDeque<String>,
    used: HashSet<String>,
}

impl Organizer {
    /// `plan_organize()`: proposes moves and skips for the top level; changes nothing (not
    /// even destination folders) and returns a single-use `plan_id`.
    pub fn plan_organize(&self) -> Envelope {
        let call = self.call(PLAN_ORGANIZE, json!({}));
        let (answer, plan) = match self.plan() {
            Ok((env, plan)) => (Ok(env), Some(plan)),
            Err(e) => (Err(e), None),
        };
        let env = Self::finish_read_only(call, answer);
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
    ) -> Result<HashSet<String>, Unusable> {
        match dir.stat(category) {
            Ok(None) => Ok(HashSet::new()),
            Ok(Some(f)) if f.kind == EntryKind::Directory => Ok(self
                .workspace
                .open_dir(dest_dir)
                .and_then(|d| d.nfc_names())?),
            // A category folder that is a symlink would lead the move elsewhere.
            Ok(Some(_)) => Err(Unusable::NotPlain(category.to_string())),
            Err(e) => Err(Unusable::Jail(e)),
        }
    }

    /// The plan: its envelope and the moves `apply_plan` will re-check.
    fn plan(&self) -> Result<(Envelope<PlanOrganizeDetail>, Plan), ToolError> {
        let root = ContainedPath::default();
        let dir = self.workspace.open_dir(&root)?;
        // Classification needs only each entry's name and type, which reading the folder
        // gives; `lstat` is spent only on the entries that become moves (what `apply_plan`
        // re-checks comes from it), and on entries whose type the file system did not store.
        let scan = dir.scan(self.max_list_entries)?;
        let mut truncated = scan.truncated;
        let mut moves: Vec<PlannedMove> = Vec::new();
        let mut move_values: Vec<PlanMove> = Vec::new();
        let mut skips: Vec<Skip> = Vec::new();
        // Per category folder: its path, and why it cannot be used or the NFC names taken
        // there.
        let mut folders: HashMap<&str, (ContainedPath, Result<HashSet<String>, Unusable>)> =
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
                    skips.push(Skip::new(name, r.code, r.reason, r.rule));
                    continue 'entries;
                }
                let Some(category) = self.policy.category_of(name, kind) else {
                    skips.push(Skip::new(
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
                    skips.push(Skip::new(
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
                            skips.push(Skip::new(
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
                        skips.push(Skip::new(
                            name,
                            ResultCode::PolicyDenied,
                            reason.to_string(),
                            None,
                        ));
                        continue 'entries;
                    }
                    Ok(names) => names,
                };
                let key = nfc_cow(name);
                // An occupied destination is PROTECTION: never overwritten, never renamed
                // around (also two planned files whose names are NFC-equal).
                if names.contains(key.as_ref()) {
                    let dest = join_shown(dest_dir, name);
                    skips.push(Skip::new(
                        name,
                        ResultCode::PolicyDenied,
                        format!("destination '{dest}' already exists; nothing is overwritten"),
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
                        skips.push(Skip::new(
                            name,
                            ResultCode::PolicyDenied,
                            e.to_string(),
                            None,
                        ));
                        continue 'entries;
                    }
                };
                names.insert(key.into_owned());
                move_values.push(PlanMove {
                    src: src.to_string(),
                    dest: dest.to_string(),
                    category: category.to_string(),
                    size: identity.size,
                });
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
        // The demo's documented wording, kept exactly.
        let reason = format!("proposed {} move(s), skipped {}", moves.len(), skips.len());
        let detail = PlanOrganizeDetail {
            plan_id: Some(plan_id.clone()),
            created: Some(created),
            move_count: Some(moves.len()),
            moves: Some(move_values),
            skip_count: Some(skips.len()),
            skips: Some(skips),
            truncated: Some(truncated),
        };
        let env = Envelope::with(PLAN_ORGANIZE, ResultCode::Ok, reason, detail);
        Ok((env, (plan_id, moves)))
    }

    /// `apply_plan(plan_id)`: re-check every file, then move all of them or none.
    pub fn apply_plan(&self, plan_id: &str, progress: &dyn Fn(u64, u64)) -> Envelope {
        let mut call = self.call(APPLY_PLAN, json!({ "plan_id": plan_id }));
        let answer = self.apply(&mut call, plan_id, progress);
        Self::finish(call, answer)
    }

    fn apply(
        &self,
        call: &mut Call<'_>,
        plan_id: &str,
        progress: &dyn Fn(u64, u64),
    ) -> Result<Envelope<ApplyPlanDetail>, ToolError> {
        // A plan id is a UUID; anything long is not one of ours.
        if plan_id.is_empty() || plan_id.len() > 64 {
            return Err(ToolError::NotAPlanId);
        }
        let plan = {
            let mut book = self.plans.lock().unwrap_or_else(|p| p.into_inner());
            // Single use: a replayed id must not move anything again.
            if book.used.contains(plan_id) {
                return Err(ToolError::PlanUsed(plan_id.to_string()));
            }
            let Some(plan) = book.open.remove(plan_id) else {
                return Err(ToolError::UnknownPlan(plan_id.to_string()));
            };
            book.order.retain(|id| id != plan_id);
            book.used.insert(plan_id.to_string());
            plan
        };
        let mut locked = self.lock_and_recover()?;

        // Re-check: the plan is applied only to exactly the files that were planned.
        let mut changed: Vec<Change> = Vec::new();
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
                Ok(None) => changed.push(Change::new(&m.src, "it vanished")),
                Ok(Some(now)) => {
                    if let Some(what) = m.identity.difference(&now) {
                        changed.push(Change::new(&m.src, what));
                    }
                }
                Err(e) => changed.push(Change::new(&m.src, e.to_string())),
            }
            let dest_dir = m.dest.parent();
            if !dest_names.contains_key(&dest_dir) {
                let names = self.names_in(&dest_dir);
                match names {
                    Ok(n) => {
                        dest_names.insert(dest_dir.clone(), n);
                    }
                    Err(e) => {
                        changed.push(Change::new(&dest_dir, e.to_string()));
                        dest_names.insert(dest_dir.clone(), HashSet::new());
                    }
                }
            }
            if dest_names
                .get(&dest_dir)
                .is_some_and(|n| n.contains(&nfc(dest_leaf)))
            {
                changed.push(Change::new(&m.dest, "the destination is taken"));
            }
        }
        if !changed.is_empty() {
            let detail = ApplyPlanDetail {
                plan_id: Some(plan_id.to_string()),
                changed: Some(changed),
                ..Default::default()
            };
            return Ok(Envelope::with(
                APPLY_PLAN,
                ResultCode::OperationFailed,
                "the workspace changed since the plan was made; the whole plan is refused and nothing was moved",
                detail,
            ));
        }

        let mut intent = Map::new();
        intent.insert("plan_id".into(), Value::from(plan_id));
        intent.insert("planned".into(), Value::from(plan.len()));
        call.intent(intent)?;
        let action = Action {
            id: locked.next_action_id(),
            tool: APPLY_PLAN.into(),
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
        if let Err(failure) = self.run_step(&mut locked, Direction::Do, &action, &steps, progress) {
            let (env, failed) = step_failed(APPLY_PLAN, failure, &steps)?;
            return Ok(env.map_detail(|()| ApplyPlanDetail {
                failed,
                ..Default::default()
            }));
        }
        let detail = ApplyPlanDetail {
            plan_id: Some(plan_id.to_string()),
            planned: Some(plan.len()),
            moved: Some(plan.len()),
            moves: Some(
                plan.iter()
                    .map(|m| MovePair {
                        src: m.src.to_string(),
                        dest: m.dest.to_string(),
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        let reason = format!("moved {} file(s)", plan.len());
        Ok(Envelope::with(APPLY_PLAN, ResultCode::Ok, reason, detail))
    }
}
