//! `undo_last_action` and `redo_last_action`: step back or forward through whole actions.
//! Every place is checked before anything moves: the file at each place must still be the
//! one that was moved there, and each target place must be free; otherwise nothing moves.

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::moves::{MovePair, StepMove, step_failed};
use super::{Organizer, ToolError};
use crate::jail::workspace::{ContainedPath, JailError, WorkspaceDir, nfc};
use crate::journal::Direction;
use crate::protocol;
use crate::recorder::Call;
use crate::result::{Envelope, ResultCode};

/// `detail` of `undo_last_action` and `redo_last_action`: the moves made; or why the
/// action was refused whole; or the move a failed step stopped at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct HistoryDetail {
    /// The tool of the action undone or redone (`move_file`, `apply_plan`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Files moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<usize>,
    /// The moves made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<MovePair>>,
    /// Target places that are taken (refused whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken: Option<Vec<String>>,
    /// Places whose file is not the one moved there (refused whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<Vec<String>>,
    /// Places whose file is gone (refused whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    /// The move the step stopped at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<MovePair>,
}

impl Organizer {
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
        let answer = self.step(&mut call, tool, op);
        Self::finish(call, answer)
    }

    fn step(
        &self,
        call: &mut Call<'_>,
        tool: &'static str,
        op: Direction,
    ) -> Result<Envelope<HistoryDetail>, ToolError> {
        let mut locked = self.lock_and_recover()?;
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
            return Err(ToolError::NothingTo(what));
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
                    (Err(e), _) | (_, Err(e)) => return Err(e.into()),
                };
            let (Some(from_leaf), Some(to_leaf)) = (from_path.leaf(), to_path.leaf()) else {
                continue;
            };
            let from_parent = from_path.parent();
            if !from_dirs.contains_key(&from_parent) {
                let dir = match self.workspace.open_dir(&from_parent) {
                    Ok(d) => Some(d),
                    Err(JailError::NotFound(_)) => None,
                    Err(e) => return Err(e.into()),
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
                Err(e) => return Err(e.into()),
            }
            let to_parent = to_path.parent();
            if !to_names.contains_key(&to_parent) {
                let names = self.names_in(&to_parent)?;
                to_names.insert(to_parent.clone(), names);
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
            let detail = HistoryDetail {
                action: Some(action.tool.clone()),
                taken: Some(taken),
                replaced: Some(replaced),
                missing: Some(missing),
                ..Default::default()
            };
            return Ok(Envelope::with(
                tool,
                ResultCode::OperationFailed,
                format!(
                    "{verb} refused: a place is taken or a file was replaced or moved since; nothing was moved"
                ),
                detail,
            ));
        }
        let mut intent = Map::new();
        intent.insert("action_id".into(), Value::from(action.id));
        intent.insert("action".into(), Value::from(action.tool.clone()));
        intent.insert("moves".into(), Value::from(action.moves.len()));
        call.intent(intent)?;
        if let Err(failure) = self.run_step(&mut locked, op, &action, &steps, &|_, _| {}) {
            let (env, failed) = step_failed(tool, failure, &steps)?;
            return Ok(env.map_detail(|()| HistoryDetail {
                failed,
                ..Default::default()
            }));
        }
        let n = action.moves.len();
        let detail = HistoryDetail {
            action: Some(action.tool.clone()),
            moved: Some(n),
            moves: Some(
                action
                    .moves
                    .iter()
                    .map(|m| {
                        let (from, to) = op.places(m);
                        MovePair {
                            src: from.to_string(),
                            dest: to.to_string(),
                        }
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        let reason = format!(
            "{verb} of {} moved {}",
            action.tool,
            protocol::count(n, "file", "files")
        );
        Ok(Envelope::with(tool, ResultCode::Ok, reason, detail))
    }
}
