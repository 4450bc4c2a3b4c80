//! The demo's hook half: three `PreToolUse` events as Claude Code sends them, fed to
//! `safe-mcp hook claude-code`, each printed with the exact JSON in and what came out
//! (stdout, stderr, exit status): an allowed command, a refused one with its reason, and a
//! write that leaves the root.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The demo's hook policy: the example policy, whose terminal jail is the one root, with
/// `cat` answered `allow` outright.
pub fn make_policy(dir: &Path) -> Result<PathBuf> {
    let policy = dir.join("hook-policy.toml");
    let text = format!(
        "{}\n[[terminal.rules]]\ncommand = \"cat\"\nhook = \"allow\"\n",
        crate::demo::EXAMPLE_POLICY
    );
    std::fs::write(&policy, text)?;
    Ok(policy)
}

/// One event through the hook: what went in, what came out.
pub struct Exchange {
    /// The event, as written on stdin.
    pub event: Value,
    /// The exit status.
    pub exit_code: i32,
    /// Stdout.
    pub stdout: String,
    /// Stderr.
    pub stderr: String,
}

/// Feed `event` to `bin hook claude-code --config policy`.
pub fn exchange(bin: &Path, policy: &Path, event: Value) -> Result<Exchange> {
    let mut child = Command::new(bin)
        .args(["hook", "claude-code", "--config"])
        .arg(policy)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting safe-mcp hook")?;
    child
        .stdin
        .take()
        .context("the hook's stdin")?
        .write_all(event.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    Ok(Exchange {
        event,
        exit_code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Run the three events against the sandbox's jail (`jail`), print each, and check that
/// each got the answer it must.
pub fn run(bin: &Path, policy: &Path, jail: &Path) -> Result<Vec<Exchange>> {
    println!("== agent hook (safe-mcp hook claude-code) ==\n");
    let event = |tool: &str, input: Value| {
        json!({
            "session_id": "demo",
            "cwd": jail,
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "toolu_demo",
        })
    };
    let outside = jail.parent().unwrap_or(jail).join("outside.txt");
    let events = [
        (event("Bash", json!({"command": "cat notes.txt"})), 0),
        (event("Bash", json!({"command": "rm -rf /"})), 2),
        (
            event(
                "Write",
                json!({"file_path": outside, "content": "planted\n"}),
            ),
            2,
        ),
    ];
    let mut exchanges = Vec::new();
    for (event, want) in events {
        let x = exchange(bin, policy, event)?;
        println!(">>> stdin: {}", x.event);
        println!("<<< exit {}", x.exit_code);
        if !x.stdout.is_empty() {
            println!("<<< stdout: {}", x.stdout.trim_end());
        }
        if !x.stderr.is_empty() {
            println!("<<< stderr: {}", x.stderr.trim_end());
        }
        println!();
        if x.exit_code != want {
            bail!(
                "the hook answered exit {} where {want} was due",
                x.exit_code
            );
        }
        exchanges.push(x);
    }
    Ok(exchanges)
}
