//! End-to-end tests of the guard server (`safe-mcp guard --config FILE`) and of its one-shot
//! front `safe-mcp exec`: the real binary, driven through the official rmcp client over
//! stdio (and as a child process for `exec`), against temporary folders only.
//! `py_client` uses this module's fixture for the official Python SDK client.

use std::path::{Path, PathBuf};
use std::process::Command;

use safe_mcp::client::{self, Session};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

/// The guard's eight tools, in the order it lists them.
pub const TOOLS: [&str; 8] = [
    "guard_exec",
    "guard_spawn",
    "register_allowlist",
    "audit_source",
    "audit_report",
    "replay_check",
    "sandbox_status",
    "trust_tier",
];

/// A guard policy: `echo` (the brief's example), `sh` with only `-c` and two scripts, and
/// `sleep` with a number of seconds.
const POLICY: &str = r#"
audit_log = "state/audit.jsonl"

[terminal]
jail_root = "jail"

[terminal.limits]
timeout_seconds = 20
max_output_bytes = 4096

[guard]
replay_state = "state/replay.json"
scan_root = "jail/src"

[[guard.tools]]
name = "echo"
executable = "/bin/echo"
args_patterns = ["[^-;|&$`<>]{1,200}"]
examples_allow = [["hello"]]
examples_deny = [["-e"], [";id"]]

[[guard.tools]]
name = "sh"
executable = "/bin/sh"
args_patterns = ["-c", "exit 3", "kill -KILL \\$\\$"]
examples_allow = [["-c", "exit 3"]]
examples_deny = [["-c", "id"]]

[[guard.tools]]
name = "sleep"
executable = "/bin/sleep"
args_patterns = ["[0-9]{1,2}"]
"#;

/// A temporary jail (with `src/app.js` beneath the scan root), state folder and policy.
pub struct Fixture {
    dir: tempfile::TempDir,
    pub policy: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with_policy(POLICY)
    }

    /// `text` as the policy. A root server runs commands as the jail's owner: nobody.
    pub fn with_policy(text: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let jail = dir.path().join("jail");
        std::fs::create_dir_all(jail.join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::write(
            jail.join("src/app.js"),
            "const { exec } = require('child_process');\nexec('ls ' + process.argv[2]);\n",
        )
        .unwrap();
        safe_mcp::demo::hand_jail_to_nobody(dir.path(), &jail).unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(&policy, text).unwrap();
        Fixture { dir, policy }
    }

    /// `safe-mcp guard --config POLICY`.
    pub fn args(&self) -> Vec<String> {
        vec![
            "guard".to_string(),
            "--config".to_string(),
            self.policy.to_string_lossy().into_owned(),
        ]
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    async fn connect(&self) -> Session {
        let args = self.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        client::connect(Path::new(BIN), &args, &[])
            .await
            .expect("connect")
    }

    /// `safe-mcp exec --config POLICY ARGS...`: exit status, stdout, stderr.
    fn exec(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = Command::new(BIN)
            .arg("exec")
            .arg("--config")
            .arg(&self.policy)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SAFE_MCP_LOG", "warn")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn code(e: &Value) -> &str {
    e["code"].as_str().unwrap_or_default()
}

/// The tools the server lists, as JSON.
async fn list(s: &Session) -> Vec<Value> {
    let tools = serde_json::to_value(s.peer().list_all_tools().await.unwrap()).unwrap();
    tools.as_array().unwrap().clone()
}

/// Call `tool` (the client checks `isError == !ok` and that the text block is the same
/// JSON) and check the envelope against the tool's `outputSchema`.
async fn call(s: &Session, tools: &[Value], tool: &str, args: Value) -> Value {
    let e = client::call(s, tool, args.clone())
        .await
        .unwrap_or_else(|err| panic!("{tool} {args}: {err:#}"));
    if let Some(t) = tools.iter().find(|t| t["name"] == tool) {
        let validator = jsonschema::validator_for(&t["outputSchema"]).unwrap();
        let errors: Vec<String> = validator.iter_errors(&e).map(|x| x.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{tool} {args}: the envelope does not fit the outputSchema: {errors:#?}\n{e}"
        );
    }
    assert_eq!(e["action"], tool, "{e}");
    e
}

/// SHA-256 of `bytes` in hex, by coreutils' `sha256sum`.
fn sha256(bytes: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(bytes.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

#[tokio::test]
async fn tools_list_has_the_eight_tools_with_their_hints_and_the_instructions() {
    let f = Fixture::new();
    let s = f.connect().await;
    let info = s.peer_info().expect("server info");
    let instructions = info.instructions.clone().unwrap_or_default();
    for needle in [
        "guard_exec",
        "toolName",
        "without a shell",
        "echo, sh, sleep",
    ] {
        assert!(instructions.contains(needle), "{needle}: {instructions}");
    }
    let tools = list(&s).await;
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, TOOLS);
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{name} is not ^[a-z_]+$"
        );
        let hints = &t["annotations"];
        let (read_only, destructive) = match name {
            "guard_exec" | "guard_spawn" => (false, true),
            "register_allowlist" => (false, false),
            // `record: true` writes the window.
            "replay_check" => (false, false),
            _ => (true, false),
        };
        assert_eq!(hints["readOnlyHint"], read_only, "{name}: {hints}");
        assert_eq!(hints["destructiveHint"], destructive, "{name}: {hints}");
        assert_eq!(hints["openWorldHint"], false, "{name}: {hints}");
        assert!(t["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert!(t["outputSchema"].is_object(), "{name}");
    }
    let exec = tools.iter().find(|t| t["name"] == "guard_exec").unwrap();
    let props = exec["inputSchema"]["properties"].as_object().unwrap();
    for arg in [
        "toolName",
        "command",
        "args",
        "cwd",
        "env",
        "timeoutMs",
        "blockOnReplay",
    ] {
        assert!(props.contains_key(arg), "guard_exec lacks {arg}: {props:?}");
    }
    assert_eq!(exec["inputSchema"]["additionalProperties"], false);
}

#[tokio::test]
async fn a_session_runs_replays_and_refuses() {
    let f = Fixture::new();
    let s = f.connect().await;
    let tools = list(&s).await;

    // A call.
    let hello = json!({"toolName": "echo", "command": "/bin/echo", "args": ["hello"]});
    let e = call(&s, &tools, "guard_exec", hello.clone()).await;
    assert_eq!(code(&e), "OK", "{e}");
    let d = &e["detail"];
    assert_eq!(d["stdout"], "hello\n", "{e}");
    assert_eq!(d["exitCode"], 0, "{e}");
    assert_eq!(d["isReplay"], false, "{e}");
    let hash = d["canonicalHash"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 64, "{e}");

    // A replay: the same call, and the same call in another spelling the canonical hash
    // folds (a word joiner inside the word), are flagged; blockOnReplay refuses it.
    let again = call(&s, &tools, "guard_exec", hello.clone()).await;
    assert_eq!(code(&again), "OK", "{again}");
    assert_eq!(again["detail"]["isReplay"], true, "{again}");
    assert_eq!(again["detail"]["canonicalHash"], hash.as_str());
    let joined = json!({"toolName": "echo", "command": "echo", "args": ["hel\u{2060}lo"]});
    let e = call(&s, &tools, "guard_exec", joined).await;
    assert_eq!(code(&e), "OK", "{e}");
    assert_eq!(e["detail"]["isReplay"], true, "{e}");
    assert_eq!(e["detail"]["canonicalHash"], hash.as_str(), "{e}");
    let mut blocked = hello.clone();
    blocked["blockOnReplay"] = json!(true);
    let e = call(&s, &tools, "guard_exec", blocked).await;
    assert_eq!(code(&e), "POLICY_DENIED", "{e}");
    // replay_check agrees, and only looks unless told to record.
    let look = json!({"executable": "/bin/echo", "args": ["hello"]});
    let e = call(&s, &tools, "replay_check", look).await;
    assert_eq!(code(&e), "OK", "{e}");
    assert_eq!(e["detail"]["isReplay"], true, "{e}");
    assert_eq!(e["detail"]["canonicalHash"], hash.as_str(), "{e}");
    assert_eq!(e["detail"]["recorded"], false, "{e}");
    let fresh = json!({"executable": "/bin/echo", "args": ["fresh"]});
    let e = call(&s, &tools, "replay_check", fresh.clone()).await;
    assert_eq!(
        (&e["detail"]["isReplay"], &e["detail"]["recorded"]),
        (&json!(false), &json!(false)),
        "{e}"
    );
    let mut record = fresh.clone();
    record["record"] = json!(true);
    let e = call(&s, &tools, "replay_check", record).await;
    assert_eq!(e["detail"]["recorded"], true, "{e}");
    let e = call(&s, &tools, "replay_check", fresh).await;
    assert_eq!(e["detail"]["isReplay"], true, "{e}");

    // Refusals: an argument no pattern matches, a program that is not the tool's, an
    // unregistered tool, a shell string, a caller variable env_allow does not list.
    for (args, want) in [
        (
            json!({"toolName": "echo", "command": "/bin/echo", "args": [";id"]}),
            "POLICY_DENIED",
        ),
        (
            json!({"toolName": "echo", "command": "/bin/sh", "args": ["hello"]}),
            "POLICY_DENIED",
        ),
        (
            json!({"toolName": "nope", "command": "/bin/echo", "args": ["hello"]}),
            "INVALID_REQUEST",
        ),
        (
            json!({"toolName": "sh", "command": "/bin/sh", "args": ["-c", "id"]}),
            "POLICY_DENIED",
        ),
        (
            json!({"toolName": "echo", "command": "/bin/echo", "args": ["x"], "env": {"FOO": "1"}}),
            "POLICY_DENIED",
        ),
        (
            json!({"toolName": "echo", "command": "/bin/echo", "args": ["x"], "timeoutMs": 0}),
            "INVALID_REQUEST",
        ),
        (
            json!({"toolName": "echo", "command": "/bin/echo"}),
            "INVALID_REQUEST",
        ),
        (
            json!({"toolName": "echo", "command": "/bin/echo", "args": ["x"], "bogus": 1}),
            "INVALID_REQUEST",
        ),
    ] {
        let e = call(&s, &tools, "guard_exec", args.clone()).await;
        assert_eq!(code(&e), want, "{args}: {e}");
        assert_eq!(e["ok"], false, "{args}: {e}");
    }
    // The command's status is the command's: a non-zero exit is still ok.
    let e = call(
        &s,
        &tools,
        "guard_exec",
        json!({"toolName": "sh", "command": "/bin/sh", "args": ["-c", "exit 3"]}),
    )
    .await;
    assert_eq!(
        (code(&e), &e["detail"]["exitCode"]),
        ("OK", &json!(3)),
        "{e}"
    );
    // A timeout.
    let e = call(
        &s,
        &tools,
        "guard_exec",
        json!({"toolName": "sleep", "command": "sleep", "args": ["5"], "timeoutMs": 300}),
    )
    .await;
    assert_eq!(code(&e), "TIMEOUT", "{e}");

    // guard_spawn: the hashes of the output, not the text; shell: true refused.
    let e = call(
        &s,
        &tools,
        "guard_spawn",
        json!({"toolName": "echo", "file": "/bin/echo", "args": ["spawned"], "fdBudget": 16}),
    )
    .await;
    assert_eq!(code(&e), "OK", "{e}");
    assert_eq!(e["detail"]["stdoutHash"], sha256("spawned\n"), "{e}");
    assert_eq!(e["detail"]["stderrHash"], sha256(""), "{e}");
    assert_eq!(e["detail"]["fdBudget"], 16, "{e}");
    assert!(e["detail"].get("stdout").is_none(), "{e}");
    let e = call(
        &s,
        &tools,
        "guard_spawn",
        json!({"toolName": "echo", "file": "/bin/echo", "args": ["x"], "shell": true}),
    )
    .await;
    assert_eq!(e["ok"], false, "{e}");

    // register_allowlist narrows: a new tool over echo with a tighter pattern.
    let e = call(
        &s,
        &tools,
        "register_allowlist",
        json!({"toolName": "greet", "executable": "/bin/echo", "argsPatterns": ["hi|bye"], "sandboxProfile": "strict"}),
    )
    .await;
    assert_eq!(code(&e), "OK", "{e}");
    assert_eq!(e["detail"]["registered"], true, "{e}");
    let e = call(
        &s,
        &tools,
        "guard_exec",
        json!({"toolName": "greet", "command": "/bin/echo", "args": ["hi"]}),
    )
    .await;
    assert_eq!(
        (code(&e), &e["detail"]["stdout"]),
        ("OK", &json!("hi\n")),
        "{e}"
    );
    let e = call(
        &s,
        &tools,
        "guard_exec",
        json!({"toolName": "greet", "command": "/bin/echo", "args": ["hello"]}),
    )
    .await;
    assert_eq!(code(&e), "POLICY_DENIED", "{e}");
    // ... and cannot widen: /bin/sh for a new name is no operator entry's executable? It is
    // (`sh`), but a looser profile than the operator entry's is refused, as is a second
    // registration of a name.
    let e = call(
        &s,
        &tools,
        "register_allowlist",
        json!({"toolName": "greet", "executable": "/bin/echo", "argsPatterns": ["hi"]}),
    )
    .await;
    assert_eq!(e["ok"], false, "{e}");
    let e = call(
        &s,
        &tools,
        "register_allowlist",
        json!({"toolName": "cat", "executable": "/bin/cat", "argsPatterns": [".*"]}),
    )
    .await;
    assert_eq!(code(&e), "POLICY_DENIED", "{e}");

    // The read-only tools.
    let e = call(&s, &tools, "sandbox_status", json!({"toolName": "echo"})).await;
    assert_eq!(code(&e), "OK", "{e}");
    assert!(e["detail"]["profile"].is_string(), "{e}");
    let e = call(&s, &tools, "sandbox_status", json!({})).await;
    assert_eq!(code(&e), "OK", "{e}");
    let e = call(&s, &tools, "trust_tier", json!({"toolName": "echo"})).await;
    assert_eq!(code(&e), "OK", "{e}");
    assert!(e["detail"]["tier"].is_string(), "{e}");
    let e = call(&s, &tools, "trust_tier", json!({"toolName": "nope"})).await;
    assert_eq!(e["detail"]["tier"], "LOW", "{e}");
    // The scanner, beneath the scan root only: the sample's `exec('ls ' + ...)` is found,
    // and the scan result renders (as a whole, and as its bare findings array).
    let e = call(&s, &tools, "audit_source", json!({"path": "app.js"})).await;
    assert_eq!(code(&e), "OK", "{e}");
    let findings = e["detail"]["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["id"] == "exec_dynamic_string"),
        "{e}"
    );
    let e2 = call(&s, &tools, "audit_source", json!({"path": "../../etc"})).await;
    assert_eq!(code(&e2), "PATH_ESCAPE", "{e2}");
    for findings in [e["detail"].clone(), e["detail"]["findings"].clone()] {
        let r = call(
            &s,
            &tools,
            "audit_report",
            json!({"findings": findings, "format": "sarif"}),
        )
        .await;
        assert_eq!(code(&r), "OK", "{r}");
        assert_eq!(r["detail"]["mimeType"], "application/sarif+json", "{r}");
        let sarif: Value = serde_json::from_str(r["detail"]["report"].as_str().unwrap()).unwrap();
        assert_eq!(sarif["version"], "2.1.0", "{r}");
        assert!(sarif.to_string().contains("exec_dynamic_string"), "{r}");
    }

    // An unknown tool: an INVALID_REQUEST envelope naming the server's tools, not a
    // protocol error.
    let e = client::call(&s, "no_such_tool", json!({})).await.unwrap();
    assert_eq!(code(&e), "INVALID_REQUEST", "{e}");
    assert!(e["reason"].as_str().unwrap().contains("guard_exec"), "{e}");
}

/// `safe-mcp exec` prints one JSON line, the envelope of its one call.
fn one_envelope(out: &str) -> Value {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    serde_json::from_str(lines[0]).unwrap()
}

#[test]
fn exec_exits_with_the_commands_status_and_prints_one_envelope() {
    let f = Fixture::new();
    let (status, out, err) = f.exec(&["--tool", "sh", "--", "/bin/sh", "-c", "exit 3"]);
    assert_eq!(status, Some(3), "{out}\n{err}");
    let e = one_envelope(&out);
    assert_eq!(
        (&e["ok"], code(&e), &e["action"], &e["detail"]["exitCode"]),
        (&json!(true), "OK", &json!("guard_exec"), &json!(3)),
        "{e}"
    );
    let (status, out, err) = f.exec(&["--tool", "echo", "--", "echo", "hello"]);
    assert_eq!(status, Some(0), "{out}\n{err}");
    assert_eq!(one_envelope(&out)["detail"]["stdout"], "hello\n");
}

#[test]
fn exec_exits_125_on_a_refusal_and_124_on_a_timeout() {
    let f = Fixture::new();
    for argv in [
        &["--tool", "echo", "--", "/bin/echo", ";id"][..],
        &["--tool", "sh", "--", "/bin/sh", "-c", "id"],
        &["--tool", "nope", "--", "/bin/echo", "hi"],
        &["--tool", "echo", "--env", "FOO=1", "--", "/bin/echo", "hi"],
    ] {
        let (status, out, err) = f.exec(argv);
        assert_eq!(status, Some(125), "{argv:?}: {out}\n{err}");
        let e = one_envelope(&out);
        let want = if argv[1] == "nope" {
            "INVALID_REQUEST"
        } else {
            "POLICY_DENIED"
        };
        assert_eq!(code(&e), want, "{argv:?}: {e}");
        assert_eq!(e["ok"], false);
    }
    let (status, out, err) = f.exec(&[
        "--tool",
        "sleep",
        "--timeout-ms",
        "300",
        "--",
        "/bin/sleep",
        "5",
    ]);
    assert_eq!(status, Some(124), "{out}\n{err}");
    assert_eq!(code(&one_envelope(&out)), "TIMEOUT", "{out}");
}

#[test]
fn exec_exits_128_plus_the_signal_that_ended_the_command() {
    let f = Fixture::new();
    let (status, out, err) = f.exec(&["--tool", "sh", "--", "/bin/sh", "-c", "kill -KILL $$"]);
    assert_eq!(status, Some(128 + 9), "{out}\n{err}");
    let e = one_envelope(&out);
    assert_eq!((code(&e), &e["detail"]["signal"]), ("OK", &json!(9)), "{e}");
}

#[test]
fn exec_exits_126_with_fatal_on_a_bad_policy() {
    // An examples_deny list the entry accepts is fatal at start-up.
    let bad = POLICY.replace(
        r#"examples_deny = [["-e"], [";id"]]"#,
        r#"examples_deny = [["hi"]]"#,
    );
    assert_ne!(bad, POLICY);
    for policy in [bad.as_str(), "[guard]\nbogus = 1\n"] {
        let f = Fixture::with_policy(policy);
        let (status, out, err) = f.exec(&["--tool", "echo", "--", "/bin/echo", "hi"]);
        assert_eq!(status, Some(126), "{policy}: {out}\n{err}");
        assert!(err.starts_with("fatal:"), "{err}");
        assert!(out.is_empty(), "{out}");
    }
    // A missing policy file too.
    let f = Fixture::new();
    std::fs::remove_file(&f.policy).unwrap();
    let (status, _, err) = f.exec(&["--tool", "echo", "--", "/bin/echo", "hi"]);
    assert_eq!(status, Some(126), "{err}");
    assert!(err.contains("fatal:"), "{err}");
}
