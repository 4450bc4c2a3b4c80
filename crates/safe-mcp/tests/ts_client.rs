//! The official TypeScript SDK client (`@modelcontextprotocol/sdk`, what Claude Desktop and
//! Claude Code are built on) against every server: connect over stdio, list the tools, call
//! every tool on its success and refusal paths, and fail on anything the SDK prints
//! (`console.*`, or the node process's stderr: the SDK's validator warns there about schema
//! keywords it does not know, such as `format: "uint64"`), on any `structuredContent` the
//! SDK finds not to fit its tool's `outputSchema`, and on any call the tool's `inputSchema`
//! refuses but the server accepted.
//!
//! The client is `tests/clients/ts/client.mjs`, its SDK (and the Inspector that
//! `http_clients` runs) pinned by the committed `package-lock.json`. `.ci/run` installs it (`npm ci`); when `node_modules` is missing this
//! test runs `npm ci` itself (bounded by [`NPM_CI_TIMEOUT`]). Without node or npm, or when
//! the install fails, it fails under `STRICT_SANDBOX_TESTS=1` (CI) and otherwise says loudly
//! that it was skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::tool_schemas::Fixture;

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");
/// The client's folder.
const CLIENT_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/ts");
/// Longest `npm ci` may take here before the test gives up on it.
const NPM_CI_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest one client run may take (its slowest call sleeps 1 s).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// One `npm ci` at a time: the tests of this module share the folder.
static INSTALL: Mutex<()> = Mutex::new(());

/// A test that cannot run here says so loudly, and fails under `STRICT_SANDBOX_TESTS=1`.
fn skip(why: &str) {
    let message = format!("SKIPPED: the TypeScript SDK client test: {why}");
    if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
        panic!("{message}");
    }
    // Past the test harness's capture (which takes only the print macros), so that a
    // skip shows in a plain `cargo test` run.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!!!!!!! {message} !!!!!!!!\n");
}

/// Run `cmd` to its end or until `limit`, whichever is first (then it is killed); whether
/// it succeeded and its output, or why it did not finish.
pub fn run_bounded(cmd: Command, limit: Duration) -> Result<(bool, String, String), String> {
    run_bounded_status(cmd, limit).map(|(status, out, err)| (status.success(), out, err))
}

/// [`run_bounded`] with the exit status itself.
pub fn run_bounded_status(
    mut cmd: Command,
    limit: Duration,
) -> Result<(std::process::ExitStatus, String, String), String> {
    let stdout = tempfile::tempfile().map_err(|e| e.to_string())?;
    let stderr = tempfile::tempfile().map_err(|e| e.to_string())?;
    let (mut out, mut err) = (
        stdout.try_clone().map_err(|e| e.to_string())?,
        stderr.try_clone().map_err(|e| e.to_string())?,
    );
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{:?} ran past {limit:?}", cmd.get_program()));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |file: &mut std::fs::File| {
        use std::io::{Read, Seek};
        let mut text = String::new();
        let _ = file.rewind();
        let _ = file.read_to_string(&mut text);
        text
    };
    Ok((status, read(&mut out), read(&mut err)))
}

/// The packages the client folder's `package-lock.json` pins that the tests run: the SDK
/// and the Inspector (whose CLI `http_clients` drives).
const PACKAGES: [&str; 2] = [
    "@modelcontextprotocol/sdk",
    "@modelcontextprotocol/inspector",
];

/// The client folder with its packages installed (`npm ci` when they are missing), or
/// `None` after [`skip`] when node or the packages are not to be had.
pub fn installed_client() -> Option<PathBuf> {
    let dir = PathBuf::from(CLIENT_DIR);
    let installed = || {
        PACKAGES.iter().all(|p| {
            dir.join("node_modules")
                .join(p)
                .join("package.json")
                .exists()
        })
    };
    let _one = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let mut version = Command::new("node");
    version.arg("--version");
    if !matches!(run_bounded(version, CLIENT_TIMEOUT), Ok((true, _, _))) {
        skip("`node --version` does not run (Node.js 18 or later is needed)");
        return None;
    }
    if installed() {
        return Some(dir);
    }
    eprintln!("ts_client: node_modules missing, running `npm ci` in {CLIENT_DIR}");
    let mut npm = Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir);
    match run_bounded(npm, NPM_CI_TIMEOUT) {
        Ok((true, _, _)) if installed() => Some(dir),
        Ok((_, out, err)) => {
            skip(&format!("`npm ci` in {CLIENT_DIR} failed:\n{out}\n{err}"));
            None
        }
        Err(why) => {
            skip(&format!("`npm ci` in {CLIENT_DIR}: {why}"));
            None
        }
    }
}

/// What the client reported about one call.
struct Report {
    value: Value,
}

/// Run the client against `safe-mcp ARGS` with `calls` (`[tool, arguments]` pairs); its
/// report, after checking that node printed nothing on stderr.
fn run_client(dir: &Path, args: &[String], calls: &[(&str, Value)]) -> Report {
    let spec = json!({
        "command": BIN,
        "args": args,
        "env": {"SAFE_MCP_LOG": "warn"},
        "calls": calls.iter().map(|(tool, a)| json!({"tool": tool, "arguments": a})).collect::<Vec<_>>(),
    });
    let mut node = Command::new("node");
    node.arg("client.mjs")
        .arg(spec.to_string())
        .current_dir(dir);
    let (ok, out, err) = match run_bounded(node, CLIENT_TIMEOUT) {
        Ok(done) => done,
        Err(why) => panic!("the TypeScript client did not finish: {why}"),
    };
    assert!(ok, "the client failed:\n{out}\n{err}");
    assert!(err.is_empty(), "node wrote to stderr:\n{err}");
    let value: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(value.get("fatal").is_none(), "{}", value["fatal"]);
    assert_eq!(
        value["console"],
        json!([]),
        "the SDK printed (server stderr: {})",
        value["server_stderr"]
    );
    Report { value }
}

impl Report {
    /// Check every call: the SDK raised nothing (a `structuredContent` that does not fit
    /// the `outputSchema` is an error it raises), `isError == !ok`, the code is `want`, and
    /// a call whose arguments the `inputSchema` refuses was refused.
    fn check(&self, want: &[&str]) {
        let calls = self.value["calls"].as_array().unwrap();
        for call in calls {
            let shown = format!("{} {}", call["tool"], call["arguments"]);
            assert!(call.get("error").is_none(), "{shown}: {}", call["error"]);
        }
        let codes: Vec<&str> = calls
            .iter()
            .map(|c| c["structured"]["code"].as_str().unwrap_or("-"))
            .collect();
        assert_eq!(codes, want, "{}", self.value);
        for call in calls {
            let shown = format!("{} {}", call["tool"], call["arguments"]);
            let e = &call["structured"];
            assert_eq!(call["isError"], !e["ok"].as_bool().unwrap(), "{shown}: {e}");
            if call["input_valid"] == false {
                assert_eq!(
                    e["ok"], false,
                    "{shown}: the schema refuses it, the server ran it"
                );
            }
        }
    }
}

#[test]
fn the_typescript_sdk_client_works_with_the_terminal_server_without_a_warning() {
    let Some(dir) = installed_client() else {
        return;
    };
    let f = Fixture::new();
    let calls = [
        ("run_command", json!({"command": "echo hi"})),
        (
            "run_command",
            json!({"command": "cat notes.txt", "cwd": null, "timeout_seconds": 5}),
        ),
        ("run_command", json!({"command": "seq 1 100000"})),
        (
            "run_command",
            json!({"command": "sleep 5", "timeout_seconds": 1}),
        ),
        ("run_command", json!({"command": "rm -rf /"})),
        ("run_command", json!({"command": "ls | cat"})),
        ("run_command", json!({"command": "cat ../secret"})),
        (
            "run_command",
            json!({"command": "ls", "timeout_seconds": 0}),
        ),
        ("run_command", json!({"command": "ls", "bogus": 1})),
        ("explain_command", json!({"command": "ls -la"})),
        ("explain_command", json!({"command": "rm -rf /"})),
        ("no_such_tool", json!({})),
    ];
    let report = run_client(&dir, &f.args("terminal"), &calls);
    assert_eq!(
        report.value["tools"],
        json!(["run_command", "explain_command"])
    );
    report.check(&[
        "OK",
        "OK",
        "OUTPUT_TRUNCATED",
        "TIMEOUT",
        "POLICY_DENIED",
        "POLICY_DENIED",
        "PATH_ESCAPE",
        "INVALID_REQUEST",
        "INVALID_REQUEST",
        "OK",
        "POLICY_DENIED",
        "INVALID_REQUEST",
    ]);
    let calls = report.value["calls"].as_array().unwrap();
    assert_eq!(calls[0]["structured"]["detail"]["stdout"], "hi\n");
    // The schema says what the server says of timeout_seconds 0 and unknown arguments.
    for i in [7, 8] {
        assert_eq!(calls[i]["input_valid"], false, "{}", calls[i]);
    }
}

#[test]
fn the_typescript_sdk_client_works_with_the_files_server_without_a_warning() {
    let Some(dir) = installed_client() else {
        return;
    };
    let f = Fixture::new();
    let calls = [
        ("list_files", json!({})),
        ("list_files", json!({"subdir": null})),
        (
            "move_file",
            json!({"src": "report.pdf", "dest": "docs/report.pdf"}),
        ),
        (
            "move_file",
            json!({"src": "link.pdf", "dest": "docs/link.pdf"}),
        ),
        (
            "move_file",
            json!({"src": "missing.pdf", "dest": "docs/missing.pdf"}),
        ),
        (
            "move_file",
            json!({"src": "../state/outside.pdf", "dest": "x.pdf"}),
        ),
        ("move_file", json!({"src": "photo.png"})),
        ("undo_last_action", json!({})),
        ("redo_last_action", json!({})),
        ("undo_last_action", json!({})),
        ("plan_organize", json!({})),
        ("apply_plan", json!({"plan_id": "$plan_id"})),
        ("apply_plan", json!({"plan_id": "$plan_id"})),
        ("undo_last_action", json!({})),
        ("undo_last_action", json!({})),
        ("no_such_tool", json!({})),
    ];
    let report = run_client(&dir, &f.args("files"), &calls);
    assert_eq!(
        report.value["tools"],
        json!([
            "list_files",
            "plan_organize",
            "apply_plan",
            "move_file",
            "undo_last_action",
            "redo_last_action"
        ])
    );
    report.check(&[
        "OK",
        "OK",
        "OK",
        "POLICY_DENIED",
        "OPERATION_FAILED",
        "PATH_ESCAPE",
        "INVALID_REQUEST",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "INVALID_REQUEST",
        "OK",
        "INVALID_REQUEST",
        "INVALID_REQUEST",
    ]);
    let calls = report.value["calls"].as_array().unwrap();
    // The plan moved both files (and its undo put them back).
    assert_eq!(
        calls[10]["structured"]["detail"]["move_count"], 2,
        "{}",
        calls[10]
    );
    assert!(f.root().join("ws/report.pdf").exists());
    assert!(f.root().join("ws/photo.png").exists());
}

#[test]
fn the_typescript_sdk_client_works_with_the_guard_server_without_a_warning() {
    let Some(dir) = installed_client() else {
        return;
    };
    let f = crate::guard_e2e::Fixture::new();
    let hello = json!({"toolName": "echo", "command": "/bin/echo", "args": ["hello"]});
    let calls = [
        ("guard_exec", hello.clone()),
        ("guard_exec", hello),
        (
            "guard_exec",
            json!({"toolName": "echo", "command": "/bin/echo", "args": [";id"]}),
        ),
        (
            "guard_exec",
            json!({"toolName": "sleep", "command": "sleep", "args": ["5"], "timeoutMs": 300}),
        ),
        (
            "guard_spawn",
            json!({"toolName": "echo", "file": "echo", "args": ["spawned"], "fdBudget": 16}),
        ),
        (
            "guard_spawn",
            json!({"toolName": "echo", "file": "echo", "args": ["x"], "shell": true}),
        ),
        (
            "register_allowlist",
            json!({"toolName": "sh2", "executable": "/bin/sh", "argsPatterns": ["-c"]}),
        ),
        (
            "register_allowlist",
            json!({"toolName": "bash", "executable": "/bin/bash", "argsPatterns": []}),
        ),
        (
            "replay_check",
            json!({"executable": "/bin/echo", "args": ["hello"]}),
        ),
        ("sandbox_status", json!({"toolName": "echo"})),
        ("trust_tier", json!({"toolName": "echo"})),
        ("audit_source", json!({"path": "app.js"})),
        ("audit_report", json!({"findings": [], "format": "sarif"})),
        ("guard_exec", json!({"toolName": "echo", "command": "echo"})),
        ("no_such_tool", json!({})),
    ];
    let report = run_client(&dir, &f.args(), &calls);
    assert_eq!(
        report.value["tools"],
        json!(crate::guard_e2e::TOOLS),
        "{}",
        report.value
    );
    report.check(&[
        "OK",
        "OK",
        "POLICY_DENIED",
        "TIMEOUT",
        "OK",
        "POLICY_DENIED",
        "OK",
        "POLICY_DENIED",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "INVALID_REQUEST",
        "INVALID_REQUEST",
    ]);
    let calls = report.value["calls"].as_array().unwrap();
    assert_eq!(calls[1]["structured"]["detail"]["isReplay"], true);
    assert_eq!(calls[8]["structured"]["detail"]["isReplay"], true);
    // The schema says what the server says of a call without its args.
    assert_eq!(calls[13]["input_valid"], false, "{}", calls[13]);
}
