//! How long an agent waits for each hook: process start to answer, side by side in one run.
//!
//! - `safe-mcp hook claude-code` on a `Bash` event the policy answers (an allowed command,
//!   and a refused one), and on a `Write` event;
//! - `safe-mcp check` on the same command;
//! - the baseline: a Python hook that only reads the JSON and tests one regex, the shape of
//!   Claude Code's official example validator (`bash_command_validator_example.py`), run by
//!   the interpreter itself (`sys.executable`, not a version manager's shim);
//! - the floor: `safe-mcp --version`, the same binary started and ended doing nothing.
//!
//! Each is started `--iterations` times (default 200), alternating, and the p50 and p90 of
//! the wall time are printed with the ratio to the Python baseline. `--old PATH` adds the
//! floor and the hook cases of another `safe-mcp` binary (say, one built from an earlier
//! commit), alternating with the rest. Build the binary first:
//!
//! ```sh
//! cargo build --release -p safe-mcp && cargo run --release -p safe-mcp --example hook_bench
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark: a failure ends it"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PYTHON_HOOK: &str = r#"
import json, re, sys
data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if re.search(r"\brm\s+-rf\b", command):
    print("refused", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/release/examples/hook_bench -> target/release/safe-mcp
    let bin = exe.parent().unwrap().parent().unwrap().join("safe-mcp");
    assert!(
        bin.exists(),
        "build it first: cargo build --release -p safe-mcp ({bin:?})"
    );
    bin
}

fn time(program: &Path, args: &[&str], input: &[u8]) -> (Duration, i32) {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let status = child.wait().unwrap();
    (started.elapsed(), status.code().unwrap_or(-1))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted
        .get(at)
        .or(sorted.last())
        .copied()
        .unwrap_or_default()
}

fn main() {
    let iterations: usize = std::env::args()
        .skip_while(|a| a != "--iterations")
        .nth(1)
        .map(|n| n.parse().expect("--iterations N"))
        .unwrap_or(200);
    let old: Option<PathBuf> = std::env::args()
        .skip_while(|a| a != "--old")
        .nth(1)
        .map(PathBuf::from);
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(base.join("state")).unwrap();
    let policy = base.join("policy.toml");
    std::fs::write(
        &policy,
        r#"audit_log = "state/audit.jsonl"
[terminal]
allowlist.commands = ["ls", "cat", "git", "grep"]
denylist.commands = ["rm"]
[[terminal.rules]]
command = "git"
deny_args = ["push -f", "push --force"]
[hook]
roots = ["proj"]
"#,
    )
    .unwrap();
    let event = |tool: &str, input: serde_json::Value| {
        serde_json::json!({
            "session_id": "s", "cwd": root, "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "t",
            "permission_mode": "default", "transcript_path": "/tmp/t.jsonl",
        })
        .to_string()
        .into_bytes()
    };
    let allowed = event("Bash", serde_json::json!({"command": "git status"}));
    let refused = event("Bash", serde_json::json!({"command": "rm -rf /"}));
    let write = event(
        "Write",
        serde_json::json!({"file_path": root.join("src/a.py"), "content": "print(1)\n"}),
    );
    let bin = binary();
    let config = policy.to_str().unwrap().to_string();
    let hook = ["hook", "claude-code", "--config", config.as_str()];
    let cwd = root.to_str().unwrap().to_string();
    let check = [
        "check",
        "--config",
        config.as_str(),
        "--cwd",
        cwd.as_str(),
        "git status",
    ];
    // The interpreter itself, not a version manager's shim script in front of it.
    let python = PathBuf::from(
        String::from_utf8(
            Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim(),
    );
    let python = python.as_path();
    let py_args = ["-c", PYTHON_HOOK];
    type Case<'a> = (&'a str, &'a Path, &'a [&'a str], &'a [u8], i32);
    let version = ["--version"];
    let mut cases: Vec<Case> = vec![
        (
            "python3 hook (read JSON, one regex)",
            python,
            &py_args,
            &allowed,
            0,
        ),
        ("floor: safe-mcp --version", &bin, &version, b"", 0),
        ("safe-mcp hook: Bash, no decision", &bin, &hook, &allowed, 0),
        ("safe-mcp hook: Bash, denied", &bin, &hook, &refused, 2),
        ("safe-mcp hook: Write, contained", &bin, &hook, &write, 0),
        ("safe-mcp check 'git status'", &bin, &check, b"", 0),
    ];
    if let Some(old) = &old {
        cases.extend([
            (
                "old: floor --version",
                old.as_path(),
                &version[..],
                &b""[..],
                0,
            ),
            ("old: hook Bash, no decision", old, &hook, &allowed, 0),
            ("old: hook Bash, denied", old, &hook, &refused, 2),
            ("old: hook Write, contained", old, &hook, &write, 0),
        ]);
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    for _ in 0..iterations {
        for (i, (name, program, args, input, want)) in cases.iter().enumerate() {
            let (took, code) = time(program, args, input);
            assert_eq!(code, *want, "{name} exited {code}");
            if let Some(t) = times.get_mut(i) {
                t.push(took);
            }
        }
    }
    let mut baseline = None;
    println!("{iterations} runs each, alternating; wall time from spawn to exit");
    println!(
        "{:<40} {:>9} {:>9} {:>12}",
        "case", "p50", "p90", "p50 ratio"
    );
    for ((name, ..), mut t) in cases.iter().zip(times) {
        t.sort();
        let (p50, p90) = (percentile(&t, 0.5), percentile(&t, 0.9));
        let base = *baseline.get_or_insert(p50);
        println!(
            "{name:<40} {:>7.2}ms {:>7.2}ms {:>11.3}x",
            p50.as_secs_f64() * 1e3,
            p90.as_secs_f64() * 1e3,
            p50.as_secs_f64() / base.as_secs_f64()
        );
    }
}
