//! Real MCP clients against every server over Streamable HTTP: the official Python SDK
//! (`streamable_http_client`, through `tests/clients/python/client.py`), the official
//! TypeScript SDK (`StreamableHTTPClientTransport`, through `tests/clients/ts/client.mjs`)
//! and the MCP Inspector's CLI (`mcp-inspector --cli URL --transport http`, one process per
//! request).
//!
//! Each test starts `safe-mcp SERVER --config POLICY --transport http --listen 127.0.0.1:0`
//! with a temporary policy whose `[http]` section names a tokens file (mode 0600, beside the
//! policy, outside every root) of two callers made with `safe-mcp token`: `alice`, who may
//! use every tool, and `bob`, who may use one. It reads the port from the server's
//! `listening on http://127.0.0.1:PORT/mcp` line on stderr, runs one client session as
//! alice (initialize, list the tools, call every tool on its success and refusal paths),
//! one as bob (he is listed his one tool, and a call of another is refused with
//! `POLICY_DENIED`) and one with a token the server does not know (refused with 401 and a
//! `WWW-Authenticate: Bearer` challenge), then stops the server. The front's own refusals
//! over raw HTTP are `http_e2e`'s; this module adds only the answers the clients rely on
//! (`GET` and `DELETE` are 405, so neither SDK waits on a stream or ends a session) and a
//! `BUSY` envelope as the TypeScript SDK sees it.
//!
//! The clients are installed as `py_client` and `ts_client` install them (the venv under
//! the target folder, `npm ci` of the committed `package-lock.json`, which pins the SDK and
//! the Inspector); without them these tests fail under `STRICT_SANDBOX_TESTS=1` and
//! otherwise say loudly that they were skipped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http_e2e::{Conn, write_owner_only};
use crate::ts_client::run_bounded;

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");
const PY_CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/python/client.py"
);
/// Longest the server may take to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest one client run may take.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// A server started with `--transport http --listen 127.0.0.1:0`, killed when dropped.
pub struct HttpServer {
    child: Child,
    stderr: PathBuf,
    /// `http://127.0.0.1:PORT/mcp`, as the server said it listens.
    pub url: String,
}

impl HttpServer {
    /// Start `safe-mcp ARGS --transport http --listen 127.0.0.1:0`, its stderr going to
    /// `stderr`; back once it has said where it listens.
    pub fn start(args: &[String], stderr: &Path) -> HttpServer {
        let log = std::fs::File::create(stderr).unwrap();
        let child = Command::new(BIN)
            .args(args)
            .args(["--transport", "http", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut server = HttpServer {
            child,
            stderr: stderr.to_path_buf(),
            url: String::new(),
        };
        let start = Instant::now();
        loop {
            let text = server.stderr();
            if let Some(url) = listening_url(&text) {
                server.url = url;
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the server ended ({status}) before it listened:\n{text}");
            }
            assert!(
                start.elapsed() < START_TIMEOUT,
                "the server did not say where it listens within {START_TIMEOUT:?}:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// `host:port` of the URL.
    fn address(&self) -> &str {
        let rest = self.url.trim_start_matches("http://");
        rest.split('/').next().unwrap_or(rest)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `http://127.0.0.1:PORT/mcp` of a `listening on ...` line.
fn listening_url(stderr: &str) -> Option<String> {
    let at = stderr.find("listening on http://")? + "listening on ".len();
    let url: String = stderr[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\u{1b}')
        .collect();
    url.ends_with("/mcp").then_some(url)
}

/// A new token and its `[[caller]]` stanza from `safe-mcp token --name NAME`.
fn new_token(name: &str) -> (String, String) {
    let out = Command::new(BIN)
        .args(["token", "--name", name])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "safe-mcp token: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (token, stanza) = text.split_once('\n').unwrap();
    assert!(stanza.contains("[[caller]]"), "{text}");
    (token.trim().to_string(), stanza.to_string())
}

/// The tokens of the callers [`serve_over_http`] sets up, and one the server does not know.
pub struct Tokens {
    pub alice: String,
    pub bob: String,
    pub unknown: String,
}

/// Give the policy at `policy` an `[http]` section (with `extra` lines) whose tokens file
/// (`tokens.toml` beside it, mode 0600) holds alice, with every tool, and bob, with only
/// `bob_tool`.
pub fn serve_over_http(policy: &Path, bob_tool: &str, extra: &str) -> Tokens {
    let dir = policy.parent().unwrap();
    let (alice, alice_stanza) = new_token("alice");
    let (bob, bob_stanza) = new_token("bob");
    let (unknown, _) = new_token("nobody");
    let tokens = dir.join("tokens.toml");
    write_owner_only(
        &tokens,
        &format!("{alice_stanza}\n{bob_stanza}tools = [\"{bob_tool}\"]\n"),
    );
    let mut text = std::fs::read_to_string(policy).unwrap();
    text.push_str(&format!(
        "\n[http]\ntokens_file = {}\n{extra}\n",
        toml_string(&tokens)
    ));
    std::fs::write(policy, text).unwrap();
    Tokens {
        alice,
        bob,
        unknown,
    }
}

/// `path` as a TOML basic string.
fn toml_string(path: &Path) -> String {
    serde_json::to_string(&path.to_string_lossy()).unwrap()
}

/// A whole session's calls and the code the envelope of each must carry.
struct Script {
    /// The tools the server lists, in order.
    tools: Vec<&'static str>,
    calls: Vec<(&'static str, Value, &'static str)>,
    /// The one tool bob may use, a call of it he makes and its code, and a call of
    /// another tool (refused).
    bob: (&'static str, Value, &'static str),
    bob_refused: (&'static str, Value),
}

impl Script {
    fn calls(&self) -> Vec<Value> {
        self.calls
            .iter()
            .map(|(tool, arguments, _)| json!({"tool": tool, "arguments": arguments}))
            .collect()
    }

    fn codes(&self) -> Vec<&'static str> {
        self.calls.iter().map(|(_, _, code)| *code).collect()
    }

    fn bob_calls(&self) -> Vec<Value> {
        let (tool, arguments, _) = &self.bob;
        let (other, other_arguments) = &self.bob_refused;
        vec![
            json!({"tool": tool, "arguments": arguments}),
            json!({"tool": other, "arguments": other_arguments}),
        ]
    }
}

/// The terminal server: every tool, its success and refusal paths.
fn terminal_script() -> Script {
    Script {
        tools: vec!["run_command", "explain_command"],
        calls: vec![
            ("run_command", json!({"command": "echo hi"}), "OK"),
            (
                "run_command",
                json!({"command": "cat notes.txt", "timeout_seconds": 5}),
                "OK",
            ),
            (
                "run_command",
                json!({"command": "rm -rf /"}),
                "POLICY_DENIED",
            ),
            (
                "run_command",
                json!({"command": "ls | cat"}),
                "POLICY_DENIED",
            ),
            (
                "run_command",
                json!({"command": "cat ../secret"}),
                "PATH_ESCAPE",
            ),
            (
                "run_command",
                json!({"command": "sleep 5", "timeout_seconds": 1}),
                "TIMEOUT",
            ),
            ("explain_command", json!({"command": "ls -la"}), "OK"),
            (
                "explain_command",
                json!({"command": "rm -rf /"}),
                "POLICY_DENIED",
            ),
            ("no_such_tool", json!({}), "INVALID_REQUEST"),
        ],
        bob: ("explain_command", json!({"command": "ls"}), "OK"),
        bob_refused: ("run_command", json!({"command": "echo hi"})),
    }
}

/// The files server: every tool, its success and refusal paths.
fn files_script() -> Script {
    Script {
        tools: vec![
            "list_files",
            "plan_organize",
            "apply_plan",
            "move_file",
            "undo_last_action",
            "redo_last_action",
        ],
        calls: vec![
            ("list_files", json!({}), "OK"),
            (
                "move_file",
                json!({"src": "report.pdf", "dest": "docs/report.pdf"}),
                "OK",
            ),
            (
                "move_file",
                json!({"src": "link.pdf", "dest": "docs/link.pdf"}),
                "POLICY_DENIED",
            ),
            (
                "move_file",
                json!({"src": "../state/outside.pdf", "dest": "x.pdf"}),
                "PATH_ESCAPE",
            ),
            ("undo_last_action", json!({}), "OK"),
            ("redo_last_action", json!({}), "OK"),
            ("undo_last_action", json!({}), "OK"),
            ("plan_organize", json!({}), "OK"),
            ("apply_plan", json!({"plan_id": "$plan_id"}), "OK"),
            (
                "apply_plan",
                json!({"plan_id": "$plan_id"}),
                "INVALID_REQUEST",
            ),
            ("undo_last_action", json!({}), "OK"),
        ],
        bob: ("list_files", json!({}), "OK"),
        bob_refused: (
            "move_file",
            json!({"src": "photo.png", "dest": "docs/photo.png"}),
        ),
    }
}

/// The guard server: every tool, its success and refusal paths.
fn guard_script() -> Script {
    let hello = json!({"toolName": "echo", "command": "/bin/echo", "args": ["hello"]});
    Script {
        tools: crate::guard_e2e::TOOLS.to_vec(),
        calls: vec![
            ("guard_exec", hello.clone(), "OK"),
            (
                "guard_exec",
                json!({"toolName": "echo", "command": "/bin/echo", "args": [";id"]}),
                "POLICY_DENIED",
            ),
            (
                "guard_spawn",
                json!({"toolName": "echo", "file": "echo", "args": ["spawned"], "fdBudget": 16}),
                "OK",
            ),
            (
                "register_allowlist",
                json!({"toolName": "greet", "executable": "/bin/echo", "argsPatterns": ["hi"]}),
                "OK",
            ),
            (
                "register_allowlist",
                json!({"toolName": "bash", "executable": "/bin/bash", "argsPatterns": []}),
                "POLICY_DENIED",
            ),
            (
                "replay_check",
                json!({"executable": "/bin/echo", "args": ["hello"]}),
                "OK",
            ),
            ("sandbox_status", json!({"toolName": "echo"}), "OK"),
            ("trust_tier", json!({"toolName": "echo"}), "OK"),
            ("audit_source", json!({"path": "app.js"}), "OK"),
            (
                "audit_report",
                json!({"findings": [], "format": "sarif"}),
                "OK",
            ),
        ],
        bob: ("trust_tier", json!({"toolName": "echo"}), "OK"),
        bob_refused: ("guard_exec", hello),
    }
}

/// A fixture of the server `name` serving over HTTP: the server, its tokens and the
/// fixture's folder (kept alive by the returned guard).
struct Served {
    server: HttpServer,
    tokens: Tokens,
    root: PathBuf,
    _fixture: Box<dyn std::any::Any>,
}

/// Serve `name` over HTTP, its `[http]` section with `extra` lines.
fn serve(name: &str, script: &Script, extra: &str) -> Served {
    let (fixture, policy, root, args): (Box<dyn std::any::Any>, _, _, _) = match name {
        "guard" => {
            let f = crate::guard_e2e::Fixture::new();
            let (policy, root, args) = (f.policy.clone(), f.root().to_path_buf(), f.args());
            (Box::new(f), policy, root, args)
        }
        _ => {
            let f = crate::tool_schemas::Fixture::new();
            let (policy, root, args) = (f.policy.clone(), f.root().to_path_buf(), f.args(name));
            (Box::new(f), policy, root, args)
        }
    };
    let tokens = serve_over_http(&policy, script.bob.0, extra);
    let server = HttpServer::start(&args, &root.join("server-stderr.txt"));
    Served {
        server,
        tokens,
        root,
        _fixture: fixture,
    }
}

/// The records of the fixture's audit log.
fn audit_records(served: &Served) -> Vec<Value> {
    let text = std::fs::read_to_string(served.root.join("state/audit.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Whether some record of the audit log names `caller`.
fn audited_caller(served: &Served, caller: &str) -> bool {
    audit_records(served).iter().any(|r| r["caller"] == caller)
}

/// Check one client's calls: the client raised nothing, `isError == !ok`, and the codes
/// are `want`.
fn check_calls(calls: &Value, want: &[&str], shown: &Value) {
    let calls = calls.as_array().unwrap();
    for call in calls {
        let what = format!("{} {}", call["tool"], call["arguments"]);
        assert!(call.get("error").is_none(), "{what}: {}", call["error"]);
        let e = &call["structured"];
        assert_eq!(call["isError"], !e["ok"].as_bool().unwrap(), "{what}: {e}");
        if call["input_valid"] == false {
            assert_eq!(
                e["ok"], false,
                "{what}: the schema refuses it, the server ran it"
            );
        }
    }
    let codes: Vec<&str> = calls
        .iter()
        .map(|c| c["structured"]["code"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(codes, want, "{shown}");
}

/// Content a script's calls must have produced, beyond their codes.
fn check_content(name: &str, calls: &Value, served: &Served) {
    let d = |i: usize| &calls[i]["structured"]["detail"];
    match name {
        "terminal" => {
            assert_eq!(d(0)["stdout"], "hi\n", "{}", calls[0]);
            assert_eq!(d(1)["stdout"], "demo file\n", "{}", calls[1]);
        }
        "files" => {
            assert_eq!(d(7)["move_count"], 2, "{}", calls[7]);
            // The plan's undo put both files back.
            assert!(served.root.join("ws/report.pdf").exists());
            assert!(served.root.join("ws/photo.png").exists());
        }
        _ => {
            assert_eq!(d(0)["stdout"], "hello\n", "{}", calls[0]);
            assert_eq!(d(5)["isReplay"], true, "{}", calls[5]);
        }
    }
}

// ---------------------------------------------------------------- the Python SDK

/// Run `client.py` with `spec`; its summary, after checking it ended well and printed
/// nothing on stderr.
fn run_python(python: &Path, served: &Served, spec: Value) -> Value {
    let mut cmd = Command::new(python);
    cmd.arg(PY_CLIENT)
        .arg(spec.to_string())
        .current_dir(&served.root);
    let (ok, out, err) =
        run_bounded(cmd, CLIENT_TIMEOUT).unwrap_or_else(|why| panic!("the Python client: {why}"));
    assert!(ok, "the client failed:\n{out}\n{err}");
    let value: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(
        value.get("fatal").is_none(),
        "{}\nserver stderr: {}\nclient stderr: {err}",
        value["fatal"],
        served.server.stderr()
    );
    assert!(err.is_empty(), "python wrote to stderr:\n{err}");
    value
}

fn python_session(name: &str, script: &Script) {
    let Some(python) = crate::py_client::installed_client() else {
        return;
    };
    let served = serve(name, script, "");
    let url = &served.server.url;
    let report = run_python(
        &python,
        &served,
        json!({
            "url": url, "token": served.tokens.alice,
            "bad_token": served.tokens.unknown, "calls": script.calls(),
        }),
    );
    assert_eq!(report["server"], format!("safe-mcp-{name}"), "{report}");
    assert_eq!(report["tools"], json!(script.tools), "{report}");
    check_calls(&report["calls"], &script.codes(), &report);
    for call in report["calls"].as_array().unwrap() {
        let what = format!("{} {}", call["tool"], call["arguments"]);
        assert_eq!(call["text_matches"], true, "{what}: {call}");
        if call["tool"] != "no_such_tool" {
            assert_eq!(call["output_valid"], true, "{what}: {call}");
        }
    }
    check_content(name, &report["calls"], &served);
    let refused = &report["bad_token"];
    assert!(refused.get("tools").is_none(), "{refused}");
    assert!(refused["sdk_error"].is_string(), "{refused}");
    assert_eq!(refused["status"], 401, "{refused}");
    assert!(
        refused["www_authenticate"]
            .as_str()
            .is_some_and(|h| h.starts_with("Bearer")),
        "{refused}"
    );

    // bob through the SDK's high-level `Client`: it probes `server/discover`, which the
    // server answers, so the session runs in the stateless 2026-07-28 era (no initialize).
    let report = run_python(
        &python,
        &served,
        json!({
            "url": url, "token": served.tokens.bob, "client": "auto",
            "calls": script.bob_calls(),
        }),
    );
    assert_eq!(report["server"], format!("safe-mcp-{name}"), "{report}");
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    assert_eq!(report["tools"], json!([script.bob.0]), "{report}");
    check_calls(&report["calls"], &[script.bob.2, "POLICY_DENIED"], &report);
    // Every call's records name its caller.
    for caller in ["alice", "bob"] {
        assert!(
            audited_caller(&served, caller),
            "{:#?}",
            audit_records(&served)
        );
    }
}

#[test]
fn the_python_sdk_client_runs_a_terminal_session_over_http() {
    python_session("terminal", &terminal_script());
}

#[test]
fn the_python_sdk_client_runs_a_files_session_over_http() {
    python_session("files", &files_script());
}

#[test]
fn the_python_sdk_client_runs_a_guard_session_over_http() {
    python_session("guard", &guard_script());
}

// ---------------------------------------------------------------- the TypeScript SDK

/// Run `client.mjs` with `spec`; its report, after checking that node printed nothing and
/// the transport reported no error (such as a GET or DELETE it could not make sense of).
fn run_node(dir: &Path, served: &Served, spec: Value) -> Value {
    let mut node = Command::new("node");
    node.arg("client.mjs")
        .arg(spec.to_string())
        .current_dir(dir);
    let (ok, out, err) = run_bounded(node, CLIENT_TIMEOUT)
        .unwrap_or_else(|why| panic!("the TypeScript client: {why}"));
    assert!(ok, "the client failed:\n{out}\n{err}");
    assert!(err.is_empty(), "node wrote to stderr:\n{err}");
    let value: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let server_err = served.server.stderr();
    assert!(
        value.get("fatal").is_none(),
        "{}\nserver stderr: {server_err}",
        value["fatal"]
    );
    assert_eq!(value["console"], json!([]), "the SDK printed: {value}");
    assert_eq!(
        value["transport_errors"],
        json!([]),
        "server stderr: {server_err}"
    );
    value
}

fn typescript_session(name: &str, script: &Script) {
    let Some(dir) = crate::ts_client::installed_client() else {
        return;
    };
    let served = serve(name, script, "");
    let url = &served.server.url;
    let report = run_node(
        &dir,
        &served,
        json!({
            "url": url, "token": served.tokens.alice,
            "bad_token": served.tokens.unknown, "calls": script.calls(),
        }),
    );
    assert_eq!(report["tools"], json!(script.tools), "{report}");
    check_calls(&report["calls"], &script.codes(), &report);
    check_content(name, &report["calls"], &served);
    let refused = &report["bad_token"];
    assert!(refused.get("tools").is_none(), "{refused}");
    assert_eq!(refused["code"], 401, "{refused}");

    let report = run_node(
        &dir,
        &served,
        json!({"url": url, "token": served.tokens.bob, "calls": script.bob_calls()}),
    );
    assert_eq!(report["tools"], json!([script.bob.0]), "{report}");
    check_calls(&report["calls"], &[script.bob.2, "POLICY_DENIED"], &report);
}

#[test]
fn the_typescript_sdk_client_runs_a_terminal_session_over_http() {
    typescript_session("terminal", &terminal_script());
}

#[test]
fn the_typescript_sdk_client_runs_a_files_session_over_http() {
    typescript_session("files", &files_script());
}

#[test]
fn the_typescript_sdk_client_runs_a_guard_session_over_http() {
    typescript_session("guard", &guard_script());
}

// ---------------------------------------------------------------- the Inspector CLI

/// One `mcp-inspector --cli URL --transport http --header "Authorization: Bearer TOKEN"
/// --format json ARGS` run, its home a folder of the fixture (the CLI keeps a catalog and
/// OAuth state there), never starting an OAuth flow; its exit code, the JSON it printed
/// on stdout and its stderr.
fn inspector(dir: &Path, served: &Served, token: &str, args: &[&str]) -> (i32, Value, String) {
    let home = served.root.join("inspector-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new(dir.join("node_modules/.bin/mcp-inspector"));
    cmd.args(["--cli", &served.server.url, "--transport", "http"])
        .arg("--header")
        .arg(format!("Authorization: Bearer {token}"))
        .args(["--format", "json", "--stored-auth-only"])
        .args(args)
        .env("HOME", &home)
        .env_remove("MCP_CATALOG_PATH")
        .env_remove("MCP_CLIENT_CONFIG_PATH")
        .current_dir(dir);
    let what = format!("mcp-inspector {args:?}");
    let (status, out, err) = crate::ts_client::run_bounded_status(cmd, CLIENT_TIMEOUT)
        .unwrap_or_else(|why| panic!("{what}: {why}"));
    let value = if out.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{what}: {e}: {out}\n{err}"))
    };
    (status.code().unwrap_or(-1), value, err)
}

/// A tools/call through the Inspector: the result's `structuredContent`. The Inspector
/// prints the result either way; on `isError: true` it also exits 5 with a
/// `tool_is_error` envelope on stderr.
fn inspector_call(
    dir: &Path,
    served: &Served,
    token: &str,
    tool: &str,
    arguments: &Value,
) -> Value {
    let args = arguments.to_string();
    let (code, out, err) = inspector(
        dir,
        served,
        token,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            &args,
        ],
    );
    let what = format!("{tool} {arguments}: exit {code}\nstdout: {out}\nstderr: {err}");
    let result = &out["result"];
    let e = &result["structuredContent"];
    assert!(e.is_object(), "{what}");
    assert_eq!(result["isError"] == true, e["ok"] == false, "{what}");
    if e["ok"] == true {
        assert_eq!(code, 0, "{what}");
    } else {
        assert_eq!(code, 5, "{what}");
        assert!(err.contains("tool_is_error"), "{what}");
    }
    e.clone()
}

/// A tools/call of a tool the server did not list to the caller: the Inspector checks
/// the name against tools/list itself and sends nothing.
fn inspector_call_unlisted(dir: &Path, served: &Served, token: &str, tool: &str) {
    let (code, out, err) = inspector(
        dir,
        served,
        token,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            "{}",
        ],
    );
    assert_ne!(code, 0, "{tool}: {out}\n{err}");
    assert!(err.contains("tool_not_found"), "{tool}: {out}\n{err}");
}

fn inspector_session(name: &str, script: &Script) {
    let Some(dir) = crate::ts_client::installed_client() else {
        return;
    };
    let served = serve(name, script, "");
    let tokens = &served.tokens;
    // --strict: the Inspector also lints every schema and fails on an error-severity
    // portability problem.
    let (code, listed, err) = inspector(
        &dir,
        &served,
        &tokens.alice,
        &["--method", "tools/list", "--strict"],
    );
    assert_eq!(code, 0, "{listed}\n{err}");
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}\n{err}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, script.tools, "{listed}");

    let mut plan_id = Value::Null;
    let mut envelopes = Vec::new();
    for (tool, arguments, want) in &script.calls {
        if !script.tools.contains(tool) {
            inspector_call_unlisted(&dir, &served, &tokens.alice, tool);
            envelopes.push(json!({"structured": {"code": want}}));
            continue;
        }
        let mut arguments = arguments.clone();
        if arguments["plan_id"] == "$plan_id" {
            arguments["plan_id"] = plan_id.clone();
        }
        let e = inspector_call(&dir, &served, &tokens.alice, tool, &arguments);
        assert_eq!(e["code"], *want, "{tool} {arguments}: {e}");
        if e["detail"]["plan_id"].is_string() {
            plan_id = e["detail"]["plan_id"].clone();
        }
        envelopes.push(json!({"structured": e}));
    }
    check_content(name, &json!(envelopes), &served);

    // bob in the 2026-07-28 era (server/discover, no initialize); alice ran in the
    // handshake era, the Inspector's default.
    let (code, listed, err) = inspector(
        &dir,
        &served,
        &tokens.bob,
        &["--protocol-era", "modern", "--method", "tools/list"],
    );
    assert_eq!(code, 0, "{listed}\n{err}");
    assert_eq!(
        listed["result"]["tools"].as_array().map(|t| t.len()),
        Some(1),
        "{listed}"
    );
    assert_eq!(
        listed["result"]["tools"][0]["name"], script.bob.0,
        "{listed}"
    );
    let (tool, arguments, want) = &script.bob;
    let e = inspector_call(&dir, &served, &tokens.bob, tool, arguments);
    assert_eq!(e["code"], *want, "{e}");
    // bob's other tools are not listed to him, so the Inspector does not call them (the
    // SDK tests show the server refusing such a call).
    inspector_call_unlisted(&dir, &served, &tokens.bob, script.bob_refused.0);

    let (code, out, err) = inspector(&dir, &served, &tokens.unknown, &["--method", "tools/list"]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert_eq!(out, Value::Null, "{err}");
    // The Inspector's name for a 401 (with --stored-auth-only it starts no OAuth flow).
    assert!(err.contains("auth_required"), "{err}");
}

#[test]
fn the_inspector_cli_lists_and_calls_the_terminal_tools_over_http() {
    inspector_session("terminal", &terminal_script());
}

#[test]
fn the_inspector_cli_lists_and_calls_the_files_tools_over_http() {
    inspector_session("files", &files_script());
}

#[test]
fn the_inspector_cli_lists_and_calls_the_guard_tools_over_http() {
    inspector_session("guard", &guard_script());
}

// ---------------------------------------------------------------- the HTTP front itself

#[test]
fn a_caller_past_its_rate_is_answered_busy_through_the_typescript_sdk() {
    let Some(dir) = crate::ts_client::installed_client() else {
        return;
    };
    let script = terminal_script();
    let served = serve("terminal", &script, "calls_per_minute = 2");
    let echo = json!({"tool": "run_command", "arguments": {"command": "echo hi"}});
    let report = run_node(
        &dir,
        &served,
        json!({"url": served.server.url, "token": served.tokens.alice, "calls": [echo, echo, echo]}),
    );
    check_calls(&report["calls"], &["OK", "OK", "BUSY"], &report);
    // Each caller has a bucket of its own.
    let report = run_node(
        &dir,
        &served,
        json!({"url": served.server.url, "token": served.tokens.bob,
               "calls": [{"tool": "explain_command", "arguments": {"command": "ls"}}]}),
    );
    check_calls(&report["calls"], &["OK"], &report);
}

#[test]
fn get_and_delete_are_answered_405_so_no_client_waits_on_a_stream_or_a_session() {
    let script = terminal_script();
    let served = serve("terminal", &script, "");
    let mut conn = Conn::open(served.server.address().parse().unwrap());
    for method in ["GET", "DELETE"] {
        conn.write_raw(
            format!(
                "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
                 Authorization: Bearer {}\r\n\r\n",
                served.tokens.alice
            )
            .as_bytes(),
        );
        let reply = conn.read_reply();
        assert_eq!(reply.status, 405, "{method}: {reply:?}");
        assert_eq!(reply.header("allow"), Some("POST"), "{method}: {reply:?}");
    }
}
