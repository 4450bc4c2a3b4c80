//! `safe-mcp hook claude-code|codex --config FILE` and `safe-mcp check --config FILE
//! [--json] [--cwd DIR] -- COMMAND...`: the command-line halves of [`safety::hook`].
//!
//! The hook never exits 1: both agents take exit 1 (and every status but 0 and 2) as "go
//! ahead". A policy that does not load, an input that cannot be read and a panic are all
//! exit 2 with the reason on stderr, which both agents treat as a block.

use std::io::Read;
use std::path::{Path, PathBuf};

use safety::hook::{Agent, CommandText, HookAnswer, HookCore, Judgement, Verdict};

/// `check`'s exit status for a command the policy lets through (with or without a prompt).
pub const CHECK_ALLOWED: u8 = 0;
/// `check`'s exit status for a refused command.
pub const CHECK_DENIED: u8 = 1;
/// `check`'s exit status when the policy or the arguments are wrong.
pub const CHECK_ERROR: u8 = 2;

/// Load the policy, then read and answer the event ([`HookCore::answer_from`]). Every
/// failure is an [`HookAnswer::refuse`].
pub fn run_hook(
    agent: Agent,
    load: impl FnOnce() -> Result<safety::Config, String>,
    stdin: impl Read,
) -> HookAnswer {
    let core = match load().and_then(|c| HookCore::new(c).map_err(|e| e.to_string())) {
        Ok(core) => core,
        Err(e) => {
            return HookAnswer::refuse(&format!(
                "safe-mcp hook refused the call: its policy does not load: {e}"
            ));
        }
    };
    core.answer_from(agent, stdin)
}

/// One `check`: the decision and its text (or JSON) for stdout, and the exit status.
pub fn run_check(
    load: impl FnOnce() -> Result<safety::Config, String>,
    cwd: Option<PathBuf>,
    words: &[String],
    json: bool,
) -> (String, u8) {
    let core = match load().and_then(|c| HookCore::new(c).map_err(|e| e.to_string())) {
        Ok(core) => core,
        Err(e) => return (format!("error: {e}\n"), CHECK_ERROR),
    };
    let here = match std::env::current_dir() {
        Ok(here) => here,
        Err(e) => {
            return (
                format!("error: the current folder is unknown: {e}\n"),
                CHECK_ERROR,
            );
        }
    };
    // `--cwd sub` is taken from the current folder, as a shell's `cd sub` would be.
    let cwd = cwd.map_or_else(|| here.clone(), |c| here.join(c));
    let text = match words {
        [] => return ("error: no command given\n".to_string(), CHECK_ERROR),
        [one] => CommandText::Line(one),
        many => CommandText::Argv(many),
    };
    let j = core.judge_command(&cwd, text);
    let status = if j.decision == Verdict::Deny {
        CHECK_DENIED
    } else {
        CHECK_ALLOWED
    };
    let out = if json {
        format!("{}\n", core.redacted_json(&j))
    } else {
        render_text(&core, &j)
    };
    (out, status)
}

fn render_text(core: &HookCore, j: &Judgement) -> String {
    let shown = |p: &Path| safety::protocol::quote(&p.to_string_lossy());
    let mut out = String::new();
    let decision = match j.decision {
        Verdict::None => "allowed (no decision: the agent's own prompts apply)",
        Verdict::Allow => "allowed (answered allow: the agent skips its prompt)",
        Verdict::Ask => "allowed after the user says yes (answered ask)",
        Verdict::Deny => "denied",
    };
    out.push_str(&format!("decision: {decision}\n"));
    out.push_str(&format!("code:     {}\n", j.code.as_str()));
    out.push_str(&format!("rule:     {}\n", j.decided_by));
    out.push_str(&format!(
        "reason:   {}\n",
        safety::protocol::quote(&core.redact(&j.reason))
    ));
    if let Some(argv) = &j.argv {
        let words: Vec<String> = core
            .redact_argv(argv)
            .iter()
            .map(|a| format!("'{}'", safety::protocol::quote(a)))
            .collect();
        out.push_str(&format!("argv:     {}\n", words.join(" ")));
    }
    if let Some(p) = &j.program {
        out.push_str(&format!("program:  {}\n", shown(p)));
    }
    if let Some(p) = &j.root {
        out.push_str(&format!("root:     {}\n", shown(p)));
    }
    if let Some(p) = &j.cwd {
        out.push_str(&format!("cwd:      {}\n", shown(p)));
    }
    for p in &j.paths {
        out.push_str(&format!("path:     {}\n", shown(p)));
    }
    out
}
