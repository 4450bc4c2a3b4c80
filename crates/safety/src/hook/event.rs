//! One hook event as an agent sends it on stdin: read with a size bound, parsed, and sorted
//! into what the hook judges. Nothing here decides; a malformed event is an error value the
//! core turns into a refusal (`exit 2`).

use serde_json::{Map, Value};

/// Largest event read from stdin. A `Write` of a big file carries the whole file, so the
/// bound is generous; an event past it is refused whole, never judged on a prefix.
pub const MAX_EVENT_BYTES: usize = 32 * 1024 * 1024;

/// Which agent sent the event, and so which answer format it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (`hookSpecificOutput.permissionDecision` allow/deny/ask; exit 2 blocks).
    ClaudeCode,
    /// OpenAI Codex (its PreToolUse accepts only deny; exit 2 blocks).
    Codex,
}

impl Agent {
    /// The name used in audit records and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }
}

/// The two events the hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Before the tool runs: allow, ask, deny or no decision.
    Pre,
    /// After a tool wrote a file: the scanner's findings fed back.
    Post,
}

impl Phase {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Pre => "PreToolUse",
            Phase::Post => "PostToolUse",
        }
    }
}

/// What an event asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Subject {
    /// A shell command (Claude's and Codex's `Bash`).
    Shell { command: String },
    /// File tools: each path, and whether the tool writes it; the file-name patterns of
    /// `Glob` (`pattern`) and `Grep` (`glob`), which name files too.
    Files {
        paths: Vec<(String, bool)>,
        patterns: Vec<String>,
    },
    /// Codex's `apply_patch`: the patch text (its file headers name what it writes).
    Patch { patch: String },
    /// Any other tool, judged by name (`mcp__server__tool`, `WebFetch`, ...).
    Other,
}

/// A parsed event.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) phase: Phase,
    pub(crate) tool_name: String,
    pub(crate) cwd: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) tool_use_id: Option<String>,
    pub(crate) subject: Subject,
}

/// Why an event could not be judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EventError {
    /// Bigger than [`MAX_EVENT_BYTES`].
    #[error("the hook event is larger than {MAX_EVENT_BYTES} bytes; it is refused unread")]
    TooLarge,
    /// Not JSON, or not an object.
    #[error("the hook event is not a JSON object: {0}")]
    NotJson(String),
    /// A field is missing or of the wrong type.
    #[error("the hook event's '{field}' is {problem}")]
    Field {
        field: &'static str,
        problem: &'static str,
    },
    /// An event this hook does not answer.
    #[error(
        "the hook event '{0}' is not one safe-mcp answers (PreToolUse, PostToolUse): refused, \
         so a hook registered under the wrong event cannot pass silently"
    )]
    UnknownEvent(String),
}

fn string_field<'a>(
    object: &'a Map<String, Value>,
    field: &'static str,
) -> Result<&'a str, EventError> {
    match object.get(field) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(EventError::Field {
            field,
            problem: "not a string",
        }),
        None => Err(EventError::Field {
            field,
            problem: "missing",
        }),
    }
}

fn optional_string(object: &Map<String, Value>, field: &'static str) -> Option<String> {
    object.get(field).and_then(Value::as_str).map(str::to_owned)
}

/// Tools that take one path in `field`, and whether they write it. A missing path is an
/// error for the tools that always have one, and simply nothing to check for those whose
/// path is optional (`Glob`, `Grep`, `LS` default to the working folder).
const FILE_TOOLS: &[(&str, &str, bool, bool)] = &[
    // (tool, field, writes, required)
    ("Write", "file_path", true, true),
    ("Edit", "file_path", true, true),
    ("MultiEdit", "file_path", true, true),
    ("NotebookEdit", "notebook_path", true, true),
    ("Read", "file_path", false, true),
    ("NotebookRead", "notebook_path", false, true),
    ("Glob", "path", false, false),
    ("Grep", "path", false, false),
    ("LS", "path", false, false),
];

/// Parse the bytes an agent wrote on stdin.
pub(crate) fn parse(bytes: &[u8], agent: Agent) -> Result<Event, EventError> {
    if bytes.len() > MAX_EVENT_BYTES {
        return Err(EventError::TooLarge);
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| EventError::NotJson(e.to_string()))?;
    let Value::Object(object) = value else {
        return Err(EventError::NotJson("the top level is not an object".into()));
    };
    let phase = match string_field(&object, "hook_event_name")? {
        "PreToolUse" => Phase::Pre,
        "PostToolUse" => Phase::Post,
        other => return Err(EventError::UnknownEvent(crate::protocol::quote(other))),
    };
    let tool_name = string_field(&object, "tool_name")?.to_string();
    let input = match object.get("tool_input") {
        Some(Value::Object(input)) => input,
        Some(_) => {
            return Err(EventError::Field {
                field: "tool_input",
                problem: "not an object",
            });
        }
        None => {
            return Err(EventError::Field {
                field: "tool_input",
                problem: "missing",
            });
        }
    };
    let subject = if tool_name == "Bash" {
        Subject::Shell {
            command: string_field(input, "command")
                .map_err(|_| EventError::Field {
                    field: "tool_input.command",
                    problem: "missing or not a string",
                })?
                .to_string(),
        }
    } else if tool_name == "apply_patch" && agent == Agent::Codex {
        // Codex hands the patch as `command` (its shell-form name for the tool's input).
        let patch = string_field(input, "command")
            .or_else(|_| string_field(input, "patch"))
            .map_err(|_| EventError::Field {
                field: "tool_input.command",
                problem: "missing or not a string",
            })?;
        Subject::Patch {
            patch: patch.to_string(),
        }
    } else if let Some(&(_, field, writes, required)) =
        FILE_TOOLS.iter().find(|(name, ..)| *name == tool_name)
    {
        let paths = match input.get(field) {
            Some(Value::String(path)) => vec![(path.clone(), writes)],
            None if !required => vec![],
            _ => {
                return Err(EventError::Field {
                    field: "tool_input's path",
                    problem: "missing or not a string",
                });
            }
        };
        let pattern_field = match tool_name.as_str() {
            "Glob" => Some("pattern"),
            "Grep" => Some("glob"),
            _ => None,
        };
        let patterns = pattern_field
            .and_then(|f| input.get(f))
            .and_then(Value::as_str)
            .map(|p| vec![p.to_string()])
            .unwrap_or_default();
        Subject::Files { paths, patterns }
    } else {
        Subject::Other
    };
    Ok(Event {
        phase,
        tool_name,
        cwd: optional_string(&object, "cwd"),
        session_id: optional_string(&object, "session_id"),
        tool_use_id: optional_string(&object, "tool_use_id"),
        subject,
    })
}

/// The files a Codex patch writes: every `*** Add File:`, `*** Update File:`, `*** Delete
/// File:` and `*** Move to:` header. A patch with none is refused by the caller: a text
/// that does not parse as a patch is not waved through.
pub(crate) fn patch_paths(patch: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    patch
        .lines()
        .filter_map(|line| {
            // Codex trims each line (Unicode white space too) before it reads a header: so
            // must this, or ` *** Add File: .git/hooks/x` would pass unseen.
            let line = line.trim();
            HEADERS
                .iter()
                .find_map(|h| line.strip_prefix(h))
                .map(|p| p.trim().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_bash_event_parses() {
        let e = parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/p","tool_input":{"command":"npm test"}}"#,
            Agent::ClaudeCode,
        )
        .unwrap();
        assert_eq!(e.phase, Phase::Pre);
        assert_eq!(
            e.subject,
            Subject::Shell {
                command: "npm test".into()
            }
        );
        assert_eq!(e.cwd.as_deref(), Some("/p"));
    }

    #[test]
    fn malformed_events_are_errors() {
        assert!(matches!(
            parse(b"not json", Agent::ClaudeCode),
            Err(EventError::NotJson(_))
        ));
        assert!(matches!(
            parse(br#"{"hook_event_name":"Stop"}"#, Agent::ClaudeCode),
            Err(EventError::UnknownEvent(_))
        ));
        assert!(matches!(
            parse(
                br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#,
                Agent::ClaudeCode
            ),
            Err(EventError::Field { .. })
        ));
        assert!(matches!(
            parse(
                br#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"content":"x"}}"#,
                Agent::ClaudeCode
            ),
            Err(EventError::Field { .. })
        ));
    }

    #[test]
    fn patch_headers_name_every_written_file() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/b.rs\n\
                     *** Move to: src/c.rs\n@@\n-a\n+b\n*** Delete File: d\n*** End Patch";
        assert_eq!(
            patch_paths(patch),
            vec!["a.txt", "src/b.rs", "src/c.rs", "d"]
        );
        assert!(patch_paths("not a patch").is_empty());
        assert_eq!(
            patch_paths(
                "*** Begin Patch\n \t*** Add File: .git/hooks/x\n\u{3000}*** Update File: y\n"
            ),
            vec![".git/hooks/x", "y"]
        );
    }
}
