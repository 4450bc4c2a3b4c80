//! The official MCP Python SDK client (`mcp` from PyPI, pinned with its dependencies by
//! `tests/clients/python/requirements.txt`) against the guard server, speaking shellguard's
//! argument names: a whole session over stdio through `tests/clients/python/client.py`, which
//! prints a JSON summary of what the SDK got; this test asserts on it.
//!
//! The client runs in a venv under the target folder (`CARGO_TARGET_TMPDIR/py-client-venv`).
//! `.ci/run` creates it; when it is missing (or holds another `mcp`) this test creates it
//! itself (`python3 -m venv`, `pip install -r requirements.txt`, bounded by
//! [`PIP_TIMEOUT`]). Without python3 or its venv module, or when the install fails, it fails
//! under `STRICT_SANDBOX_TESTS=1` (CI) and otherwise says loudly that it was skipped.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use crate::guard_e2e::{Fixture, TOOLS};
use crate::ts_client::run_bounded;

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");
/// The client's folder.
const CLIENT_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/python");
/// The venv the client runs in.
const VENV: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/py-client-venv");
/// The pinned SDK version (as `scripts/bench_lean_results.sh`).
const MCP_VERSION: &str = "2.3.0";
/// Longest creating the venv and installing into it may take here.
const PIP_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest one client run may take.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// One install at a time.
static INSTALL: Mutex<()> = Mutex::new(());

/// A test that cannot run here says so loudly, and fails under `STRICT_SANDBOX_TESTS=1`.
fn skip(why: &str) {
    let message = format!("SKIPPED: the Python SDK client test: {why}");
    if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
        panic!("{message}");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!!!!!!! {message} !!!!!!!!\n");
}

/// Whether the venv's python has the pinned `mcp`.
fn has_pinned_sdk(python: &PathBuf) -> bool {
    let mut check = Command::new(python);
    check.args([
        "-c",
        &format!(
            "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '{MCP_VERSION}')"
        ),
    ]);
    matches!(run_bounded(check, CLIENT_TIMEOUT), Ok((true, _, _)))
}

/// The venv's python with the pinned SDK (installed when missing), or `None` after
/// [`skip`].
pub fn installed_client() -> Option<PathBuf> {
    let _one = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let python = PathBuf::from(VENV).join("bin/python");
    if has_pinned_sdk(&python) {
        return Some(python);
    }
    let mut venv = Command::new("python3");
    venv.args(["-m", "venv", "--clear", VENV]);
    match run_bounded(venv, PIP_TIMEOUT) {
        Ok((true, _, _)) => {}
        Ok((_, out, err)) => {
            skip(&format!(
                "`python3 -m venv {VENV}` failed (python3 with its venv module is needed):\n{out}\n{err}"
            ));
            return None;
        }
        Err(why) => {
            skip(&format!("`python3 -m venv`: {why} (python3 is needed)"));
            return None;
        }
    }
    eprintln!("py_client: installing the pinned mcp into {VENV}");
    let mut pip = Command::new(&python);
    pip.args([
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "-r",
    ])
    .arg(PathBuf::from(CLIENT_DIR).join("requirements.txt"));
    match run_bounded(pip, PIP_TIMEOUT) {
        Ok((true, _, _)) if has_pinned_sdk(&python) => Some(python),
        Ok((_, out, err)) => {
            skip(&format!(
                "`pip install -r requirements.txt` failed:\n{out}\n{err}"
            ));
            None
        }
        Err(why) => {
            skip(&format!("`pip install`: {why}"));
            None
        }
    }
}

/// Run the client against `safe-mcp ARGS` with `calls`; its summary.
fn run_client(python: &PathBuf, f: &Fixture, calls: &[(&str, Value)]) -> Value {
    let server_stderr = f.root().join("server-stderr.txt");
    let spec = json!({
        "command": BIN,
        "args": f.args(),
        "env": {"SAFE_MCP_LOG": "warn"},
        "server_stderr": server_stderr,
        "calls": calls.iter().map(|(tool, a)| json!({"tool": tool, "arguments": a})).collect::<Vec<_>>(),
    });
    let mut cmd = Command::new(python);
    cmd.arg(PathBuf::from(CLIENT_DIR).join("client.py"))
        .arg(spec.to_string())
        .current_dir(f.root());
    let (ok, out, err) = match run_bounded(cmd, CLIENT_TIMEOUT) {
        Ok(done) => done,
        Err(why) => panic!("the Python client did not finish: {why}"),
    };
    assert!(ok, "the client failed:\n{out}\n{err}");
    let value: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let server_err = std::fs::read_to_string(&server_stderr).unwrap_or_default();
    assert!(
        value.get("fatal").is_none(),
        "{}\nserver stderr: {server_err}\nclient stderr: {err}",
        value["fatal"]
    );
    assert!(err.is_empty(), "python wrote to stderr:\n{err}");
    value
}

#[test]
fn the_python_sdk_client_runs_a_whole_guard_session_in_shellguard_names() {
    let Some(python) = installed_client() else {
        return;
    };
    let f = Fixture::new();
    let hello = json!({
        "toolName": "echo", "command": "/bin/echo", "args": ["hello"],
        "cwd": "src", "timeoutMs": 5000, "blockOnReplay": false,
    });
    let mut blocked = hello.clone();
    blocked["blockOnReplay"] = json!(true);
    let calls = [
        ("guard_exec", hello.clone()),
        ("guard_exec", hello),
        ("guard_exec", blocked),
        (
            "guard_exec",
            json!({"toolName": "echo", "command": "/bin/echo", "args": [";id"]}),
        ),
        (
            "guard_spawn",
            json!({"toolName": "echo", "file": "/bin/echo", "args": ["spawned"], "fdBudget": 16}),
        ),
        (
            "register_allowlist",
            json!({"toolName": "greet", "executable": "/bin/echo", "argsPatterns": ["hi"], "sandboxProfile": "strict"}),
        ),
        (
            "guard_exec",
            json!({"toolName": "greet", "command": "echo", "args": ["hi"]}),
        ),
        (
            "replay_check",
            json!({"executable": "/bin/echo", "args": ["never"], "record": true}),
        ),
        (
            "replay_check",
            json!({"executable": "/bin/echo", "args": ["never"]}),
        ),
        ("sandbox_status", json!({"toolName": "greet"})),
        ("trust_tier", json!({"toolName": "echo"})),
        ("audit_source", json!({"path": "app.js"})),
        (
            "audit_report",
            json!({"findings": [], "format": "markdown"}),
        ),
        (
            "guard_exec",
            json!({"toolName": "echo", "command": "/bin/echo"}),
        ),
        ("no_such_tool", json!({})),
    ];
    let report = run_client(&python, &f, &calls);
    assert_eq!(report["server"], "safe-mcp-guard");
    assert!(
        report["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("guard_exec")),
        "{}",
        report["instructions"]
    );
    assert_eq!(report["tools"], json!(TOOLS));
    let got = report["calls"].as_array().unwrap();
    assert_eq!(got.len(), calls.len(), "{report}");
    for call in got {
        let shown = format!("{} {}", call["tool"], call["arguments"]);
        // The SDK raised nothing: it validates a successful call's structuredContent
        // against the tool's outputSchema itself.
        assert!(call.get("error").is_none(), "{shown}: {}", call["error"]);
        let e = &call["structured"];
        assert_eq!(call["isError"], !e["ok"].as_bool().unwrap(), "{shown}: {e}");
        assert_eq!(call["text_matches"], true, "{shown}: {call}");
        if call["tool"] != "no_such_tool" {
            assert_eq!(call["output_valid"], true, "{shown}: {e}");
        }
        if call["input_valid"] == false {
            assert_eq!(
                e["ok"], false,
                "{shown}: the schema refuses it, the server ran it"
            );
        }
    }
    let codes: Vec<&str> = got
        .iter()
        .map(|c| c["structured"]["code"].as_str().unwrap_or("-"))
        .collect();
    let mut want = vec![
        "OK",
        "OK",
        "POLICY_DENIED",
        "POLICY_DENIED",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "INVALID_REQUEST",
        "INVALID_REQUEST",
    ];
    want.truncate(codes.len());
    assert_eq!(codes, want, "{report}");
    assert!(
        (d_findings(&got[11]).iter()).any(|f| f["id"] == "exec_dynamic_string"),
        "{}",
        got[11]
    );
    // An empty findings array (shellguard's audit_report crashes on any array) renders.
    assert_eq!(
        got[12]["structured"]["detail"]["mimeType"], "text/markdown",
        "{}",
        got[12]
    );
    let d = |i: usize| &got[i]["structured"]["detail"];
    assert_eq!(d(0)["stdout"], "hello\n");
    assert_eq!(d(0)["isReplay"], false);
    assert_eq!(d(1)["isReplay"], true);
    assert_eq!(d(0)["canonicalHash"], d(1)["canonicalHash"]);
    assert_eq!(d(4)["fdBudget"], 16);
    assert_eq!(d(4)["stdoutHash"].as_str().map(str::len), Some(64));
    assert_eq!(d(5)["registered"], true);
    assert_eq!(d(6)["stdout"], "hi\n");
    assert_eq!(d(7)["recorded"], true);
    assert_eq!(d(8)["isReplay"], true);
    assert_eq!(d(8)["recorded"], false);
    assert_eq!(d(9)["profile"], "strict");
    assert!(d(10)["tier"].is_string());
    // The schema says what the server says of a call without its args.
    assert_eq!(got[13]["input_valid"], false, "{}", got[13]);
}

/// The findings of an audit_source call in the client's summary.
fn d_findings(call: &Value) -> Vec<Value> {
    call["structured"]["detail"]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}
