//! The guard half of `safe-mcp demo`: a small guard policy and jail next to the others,
//! `safe-mcp guard --config POLICY` started as a child process and driven through the same
//! rmcp client, every call and its envelope printed as the terminal half prints them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::client;
use crate::demo::{hand_jail_to_nobody, print_call};

/// The guard policy the demo writes (`guard/policy.toml`); paths are relative to it.
pub const GUARD_POLICY: &str = r#"# The demo's guard policy. Paths are relative to this file.
audit_log = "state/audit.jsonl"

[terminal]
# Commands run in this folder and can write nowhere else. As root, the demo hands it to
# `nobody`: a root server runs commands as the jail's owner, never as root.
jail_root = "jail"

[guard]
replay = "flag"                      # a repeated call runs and is flagged (isReplay)
replay_state = "state/replay.json"   # the replay window survives a restart
scan_root = "jail/src"               # audit_source reads beneath this folder only

# A limited tool: every argument must fully match the pattern (no option, no shell
# metacharacter); the examples are checked at start-up.
[[guard.tools]]
name = "echo"
executable = "/bin/echo"
args_patterns = ["[^-;|&$`<>]{1,200}"]
examples_allow = [["hello"]]
examples_deny = [["-e"], [";id"]]

# The same program with no patterns: any argument goes (trust tier MEDIUM).
[[guard.tools]]
name = "echo-any"
executable = "/bin/echo"

# Limited, but under the permissive profile (trust tier HIGH).
[[guard.tools]]
name = "echo-long"
executable = "/bin/echo"
args_patterns = ["[a-z]{1,200}"]
profile = "permissive"
"#;

/// A source file with the shell injection `audit_source` finds.
pub const VULNERABLE_JS: &str = r#"const { exec } = require("child_process");

// An MCP tool handler that puts the model's input into a shell command line.
function runGit(x) {
  exec(`git ${x}`, (err, out) => console.log(out));
}

module.exports = { runGit };
"#;

/// Lay out `dir/guard`: the policy, its jail with `src/server.js` under the scan root, and
/// a state folder. Returns the policy's path.
pub fn make_sandbox(dir: &Path) -> Result<PathBuf> {
    let guard = dir.join("guard");
    let jail = guard.join("jail");
    std::fs::create_dir_all(jail.join("src"))?;
    std::fs::create_dir_all(guard.join("state"))?;
    std::fs::write(jail.join("src/server.js"), VULNERABLE_JS)?;
    let policy = guard.join("policy.toml");
    std::fs::write(&policy, GUARD_POLICY)?;
    // As root: `nobody` owns the jail and can pass through `dir` and `dir/guard` to it.
    hand_jail_to_nobody(dir, &jail)?;
    hand_jail_to_nobody(&guard, &jail)?;
    Ok(policy)
}

/// One step of the sequence: a tool, its arguments, and a line saying what it shows.
struct Step {
    what: &'static str,
    tool: &'static str,
    args: Value,
}

/// The sequence, in order.
fn steps() -> Vec<Step> {
    let hello = json!({ "toolName": "echo", "command": "echo", "args": ["hello"] });
    let blocked = json!({
        "toolName": "echo", "command": "echo", "args": ["hello"], "blockOnReplay": true,
    });
    vec![
        Step {
            what: "a narrowing registration over an operator entry's executable: granted",
            tool: "register_allowlist",
            args: json!({
                "toolName": "echo-words",
                "executable": "/bin/echo",
                "argsPatterns": ["[a-z]{1,20}"],
            }),
        },
        Step {
            what: "a self-grant of /bin/sh, which no operator entry names: refused",
            tool: "register_allowlist",
            args: json!({ "toolName": "shell", "executable": "/bin/sh", "argsPatterns": [] }),
        },
        Step {
            what: "a guarded call",
            tool: "guard_exec",
            args: hello.clone(),
        },
        Step {
            what: "the same call again: it runs, flagged as a replay",
            tool: "guard_exec",
            args: hello,
        },
        Step {
            what: "the same call with blockOnReplay: refused",
            tool: "guard_exec",
            args: blocked,
        },
        Step {
            what: "args[0] is \"hel\\u2060lo\" (a WORD JOINER inside): the pattern sees it as \
                   given, the hash without it, so it is the same command",
            tool: "guard_exec",
            args: json!({ "toolName": "echo", "command": "echo", "args": ["hel\u{2060}lo"] }),
        },
        Step {
            what: "trust tier of a name nobody registered",
            tool: "trust_tier",
            args: json!({ "toolName": "curl" }),
        },
        Step {
            what: "trust tier of an entry with no patterns",
            tool: "trust_tier",
            args: json!({ "toolName": "echo-any" }),
        },
        Step {
            what: "trust tier of a limited entry under the permissive profile",
            tool: "trust_tier",
            args: json!({ "toolName": "echo-long" }),
        },
        Step {
            what: "trust tier of a limited entry (CRITICAL unless this host downgrades the sandbox)",
            tool: "trust_tier",
            args: json!({ "toolName": "echo" }),
        },
        Step {
            what: "the sandbox a tool runs in, as enforced on this host",
            tool: "sandbox_status",
            args: json!({ "toolName": "echo" }),
        },
        Step {
            what: "a source scan of the scan root (jail/src), whose server.js has exec(`git ${x}`)",
            tool: "audit_source",
            args: json!({ "path": "." }),
        },
    ]
}

/// Start `bin guard --config policy` and run the sequence; returns the envelopes.
pub async fn run(bin: &Path, policy: &Path, via: &client::Via) -> Result<Vec<Value>> {
    let policy = policy.to_string_lossy();
    let session = client::start(bin, &["guard", "--config", &policy], via)
        .await
        .context("starting safe-mcp guard")?;
    println!(
        "== guard server{} (policy: {policy}) ==\n",
        crate::demo::over(&session)
    );
    let mut envelopes = Vec::new();
    for step in steps() {
        println!("# {}", step.what);
        let envelope = client::call(&session, step.tool, step.args.clone()).await?;
        print_call(step.tool, &step.args, &envelope);
        envelopes.push(envelope);
    }
    session.close().await?;
    Ok(envelopes)
}
