//! `move_file`, and the journaled step every move of every tool goes through: the journal's
//! `begin`, the checked renames, the journal's `end`, with the moves already made carried
//! back when one fails part way.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Organizer, ToolError, jail_code};
use crate::jail::workspace::{ContainedPath, EntryKind, FileIdentity, JailError, WorkspaceDir};
use crate::journal::{Action, Direction, Done, JournalError, JournalMove, Locked};
use crate::policy::layers::{Scope, Subject};
use crate::protocol;
use crate::recorder::Call;
use crate::result::{Envelope, ResultCode};

const MOVE_FILE: &str = "move_file";

/// `detail` of `move_file`; a refused call has none of these fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct MoveFileDetail {
    /// Where the entry was, as stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// Where it is now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest: Option<String>,
    /// Always 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<u64>,
}

/// One move: from `src` to `dest`, workspace-relative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MovePair {
    /// Where the entry was.
    pub src: String,
    /// Where it went (or was to go).
    pub dest: String,
}

/// Why a step stopped.
pub(super) enum StepError {
    /// A rename failed; the moves before it were carried back where possible.
    Move(StepFailure),
    /// The journal could not be written.
    Journal(JournalError),
}

/// A move made (or to be made) in one step, with the handles it needs.
pub(super) struct StepMove {
    pub(super) from_dir: ContainedPath,
    pub(super) from_leaf: String,
    pub(super) to_dir: ContainedPath,
    pub(super) to_leaf: String,
    /// The entry the re-check saw at the source: what must arrive at the destination.
    pub(super) identity: FileIdentity,
}

/// Why a step stopped part way; every move already made was carried back where possible.
pub(super) struct StepFailure {
    error: JailError,
    index: usize,
    put_back: usize,
}

/// The envelope of a step that stopped part way, and the move it stopped at; a journal
/// that could not be written is a refusal with no detail.
pub(super) fn step_failed(
    tool: &str,
    failure: StepError,
    steps: &[StepMove],
) -> Result<(Envelope<()>, Option<MovePair>), ToolError> {
    match failure {
        StepError::Journal(e) => Err(ToolError::Journal(e)),
        StepError::Move(f) => {
            let reason = if f.put_back == f.index {
                format!("{}; nothing was moved", f.error)
            } else {
                format!(
                    "{}; {} of the {} already made could not be put back (see undo_last_action)",
                    f.error,
                    f.index - f.put_back,
                    protocol::count(f.index, "move", "moves")
                )
            };
            let failed = steps.get(f.index).map(|s| MovePair {
                src: join_shown(&s.from_dir, &s.from_leaf),
                dest: join_shown(&s.to_dir, &s.to_leaf),
            });
            Ok((
                Envelope::with(tool, jail_code(&f.error), reason, ()),
                failed,
            ))
        }
    }
}

impl Organizer {
    /// Journal `begin`, the renames, journal `end`. If a rename fails, the moves already
    /// made are carried back (newest first) and the journal records what stayed moved.
    pub(super) fn run_step(
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
        let mut call = self.call(MOVE_FILE, json!({ "src": src, "dest": dest }));
        let answer = self.move_one(&mut call, src, dest);
        Self::finish(call, answer)
    }

    fn move_one(
        &self,
        call: &mut Call<'_>,
        src: &str,
        dest: &str,
    ) -> Result<Envelope<MoveFileDetail>, ToolError> {
        let src_path = self.workspace.contain(src)?;
        let dest_path = self.workspace.contain(dest)?;
        let (Some(src_leaf), Some(dest_leaf)) = (src_path.leaf(), dest_path.leaf()) else {
            return Err(ToolError::NotAnEntry);
        };
        let src_dir = match self.workspace.open_dir(&src_path.parent()) {
            Ok(d) => d,
            Err(JailError::NotFound(_)) => return Err(ToolError::SourceMissing(src.to_string())),
            Err(e) => return Err(e.into()),
        };
        let Some((stored_leaf, identity)) = src_dir.find(src_leaf)? else {
            return Err(ToolError::SourceMissing(src.to_string()));
        };
        // PROTECTION on the entry itself: a symlink/FIFO/device falls to deny-by-default and
        // is never opened or moved; declared protection rules apply to named requests too.
        let subject = Subject {
            name: &stored_leaf,
            utf8: true,
            kind: identity.kind,
        };
        if let Some(r) = self.policy.evaluate(&subject, Scope::Explicit) {
            return Err(ToolError::Refused(r));
        }
        // PROTECTION on the names the move would create (a bidi-disguised destination).
        for (i, part) in dest_path.components().iter().enumerate() {
            let kind = if i + 1 == dest_path.components().len() {
                identity.kind
            } else {
                EntryKind::Directory
            };
            if let Some(r) = self.policy.check_new_name(part, kind) {
                return Err(ToolError::Refused(r));
            }
        }
        let mut locked = self.lock_and_recover()?;
        // The destination, read-only first: a symlinked folder on the way is PATH_ESCAPE
        // before anything is created; an occupied name (also NFC-equal) is refused.
        let dest_parent = dest_path.parent();
        match self.workspace.open_dir(&dest_parent) {
            Ok(d) => {
                if !d.is_free(dest_leaf)? {
                    return Err(ToolError::DestinationTaken(dest_path));
                }
            }
            Err(JailError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
        let src_stored = src_dir
            .path()
            .join(&stored_leaf)
            .map(|p| p.to_string())
            .unwrap_or_default();
        let mut intent = Map::new();
        intent.insert("src".into(), Value::from(src_stored.clone()));
        intent.insert("dest".into(), Value::from(dest_path.to_string()));
        call.intent(intent)?;
        let action = Action {
            id: locked.next_action_id(),
            tool: MOVE_FILE.into(),
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
        match self.run_step(&mut locked, Direction::Do, &action, &steps, &|_, _| {}) {
            Ok(()) => {}
            Err(StepError::Move(f)) => return Err(f.error.into()),
            Err(StepError::Journal(e)) => return Err(e.into()),
        }
        let reason = format!("moved {src_stored}");
        let detail = MoveFileDetail {
            src: Some(src_stored),
            dest: Some(dest_path.to_string()),
            moved: Some(1),
        };
        Ok(Envelope::with(MOVE_FILE, ResultCode::Ok, reason, detail))
    }
}

/// `dir/leaf` as shown to a client (`leaf` alone at the top level).
pub(super) fn join_shown(dir: &ContainedPath, leaf: &str) -> String {
    if dir.is_root() {
        leaf.to_string()
    } else {
        format!("{dir}/{leaf}")
    }
}
