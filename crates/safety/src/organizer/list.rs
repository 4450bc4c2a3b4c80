//! `list_files`: read-only; each entry of one folder with its name, size, kind, category,
//! whether the organiser would move it, and why not.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use super::{Organizer, ToolError};
use crate::jail::workspace::ContainedPath;
use crate::policy::layers::{NO_CATEGORY_REASON, RULE_ORGANIZE, Scope, Subject};
use crate::protocol;
use crate::result::{Envelope, ResultCode};

const TOOL: &str = "list_files";

/// Folders a listing never enters.
const NEVER_ENTERED: &[&str] = &[".git", "node_modules"];

/// `detail` of `list_files`; a refused call has none of these fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ListFilesDetail {
    /// The folder listed, workspace-relative (`""` for the top level).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subdir: Option<String>,
    /// Entries returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Entries the folder holds in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// More than `max_list_entries`: only the first are returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// The entries, in byte order of their names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<ListedEntry>>,
}

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListedEntry {
    /// The name as stored.
    pub name: String,
    /// Size in bytes (`lstat`).
    pub size: u64,
    /// `file`, `directory`, `symlink`, `fifo`, `socket`, `device` or `unknown`.
    pub kind: String,
    /// The category folder the planner would move it to, if any.
    pub category: Option<String>,
    /// Whether `plan_organize` would move it.
    pub would_move: bool,
    /// Why the planner leaves it, when it does.
    pub why_not: Option<WhyNot>,
}

/// Why the planner leaves an entry.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WhyNot {
    /// `POLICY_DENIED` (never moved) or `NEEDS_EXPLICIT_REQUEST` (moved only when named).
    pub code: ResultCode,
    /// The rule's reason.
    pub reason: String,
    /// The rule that decided (`organize`), or `null` for deny-by-default.
    pub rule: Option<String>,
}

impl Organizer {
    /// `list_files(subdir?)`: read-only; each entry with name, size, kind, category,
    /// whether the organiser would move it, and why not.
    pub fn list_files(&self, subdir: Option<&str>) -> Envelope {
        let call = self.call(TOOL, json!({ "subdir": subdir }));
        Self::finish_read_only(call, self.list(subdir))
    }

    fn list(&self, subdir: Option<&str>) -> Result<Envelope<ListFilesDetail>, ToolError> {
        let path = match subdir {
            None | Some("") | Some(".") => ContainedPath::default(),
            Some(raw) => self.workspace.contain(raw)?,
        };
        // Tool-managed trees (`.git`, `node_modules`) are huge and not the user's clutter.
        if path
            .components()
            .iter()
            .any(|c| NEVER_ENTERED.contains(&c.to_lowercase().as_str()))
        {
            return Err(ToolError::NeverEntered);
        }
        let dir = self.workspace.open_dir(&path)?;
        let listing = dir.list(self.max_list_entries)?;
        let entries: Vec<ListedEntry> = listing
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
                    Some(r) => Some(WhyNot {
                        code: r.code,
                        reason: r.reason,
                        rule: r.rule.map(str::to_string),
                    }),
                    None if category.is_none() => Some(WhyNot {
                        code: ResultCode::NeedsExplicitRequest,
                        reason: NO_CATEGORY_REASON.to_string(),
                        rule: Some(RULE_ORGANIZE.to_string()),
                    }),
                    None => None,
                };
                ListedEntry {
                    name: entry.name().to_string(),
                    size: id.size,
                    kind: id.kind.as_str().to_string(),
                    category: category.map(str::to_string),
                    would_move: why_not.is_none(),
                    why_not,
                }
            })
            .collect();
        let count = entries.len();
        let reason = if listing.truncated {
            format!(
                "listed {count} of {} (the first max_list_entries of the folder)",
                protocol::count(listing.total, "entry", "entries")
            )
        } else {
            format!("listed {}", protocol::count(count, "entry", "entries"))
        };
        let detail = ListFilesDetail {
            subdir: Some(dir.path().to_string()),
            count: Some(count),
            total: Some(listing.total),
            truncated: Some(listing.truncated),
            entries: Some(entries),
        };
        Ok(Envelope::with(TOOL, ResultCode::Ok, reason, detail))
    }
}
