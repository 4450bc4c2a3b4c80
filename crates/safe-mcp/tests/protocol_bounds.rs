//! Protocol and input bounds (docs/protocol.md), through the built binary
//! with raw lines on its stdin: every malformed line gets its JSON-RPC error and the server
//! keeps serving; an over-long argument is INVALID_REQUEST without being echoed (in the
//! reply or the audit log); `max_concurrent_commands` answers over-limit calls BUSY at once.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");
/// Longer than any answer takes here; a line the server never answers fails after it.
const WAIT: Duration = Duration::from_secs(10);
/// Bound of the front (crates/safety/src/protocol.rs MAX_LINE_BYTES).
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// No reason may be longer than this (MAX_REASON_BYTES plus its cut note).
const REASON_BOUND: usize = 1100;
/// No audit line of these tests may be longer than this (their commands are short).
const AUDIT_LINE_BOUND: usize = 8 * 1024;

/// One temporary folder with a jail, a workspace and a state folder, and its policy.
struct Fixture {
    dir: tempfile::TempDir,
    policy: PathBuf,
}

impl Fixture {
    /// The one place the test policy is written: `terminal_extra` goes into `[terminal]`.
    /// A root server runs commands as the jail's owner: the jail goes to nobody.
    fn new(terminal_extra: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["jail", "ws", "state"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        safe_mcp::demo::hand_jail_to_nobody(dir.path(), &dir.path().join("jail")).unwrap();
        std::fs::write(dir.path().join("ws/report.pdf"), "pdf").unwrap();
        let policy = dir.path().join("policy.toml");
        let text = format!(
            r#"
audit_log = "state/audit.jsonl"

[terminal]
jail_root = "jail"
{terminal_extra}

[terminal.allowlist]
commands = ["ls", "sleep"]

[files]
workspace_root = "ws"
journal = "state/journal.json"
"#
        );
        std::fs::write(&policy, text).unwrap();
        Fixture { dir, policy }
    }

    fn audit_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("state/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn audit_records(&self) -> Vec<Value> {
        self.audit_lines()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn start(&self, server: &str) -> Server {
        Server::start(server, &self.policy)
    }
}

/// The server as a child process, with a thread that reads its stdout line by line.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Server {
    /// Start and complete the MCP handshake.
    fn start(server: &str, policy: &Path) -> Server {
        let mut child = Command::new(BIN)
            .arg(server)
            .arg("--config")
            .arg(policy)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("SAFE_MCP_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start safe-mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Server {
            child,
            stdin,
            lines,
        };
        s.send(
            &json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"protocol-bounds-test","version":"1"}}}),
        );
        let init = s.next();
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        s.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        s
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.raw(&line);
    }

    /// The next line the server writes (fails when none comes within [`WAIT`]).
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .expect("the server wrote no answer: the client would wait forever");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Every line up to and including the answer to `id`.
    fn until(&self, id: &Value) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.next();
            let done =
                line["id"] == *id && (line.get("result").is_some() || line.get("error").is_some());
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// `tools/list` works: the server is still up and serving.
    fn still_serves(&mut self, id: i64) {
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}));
        let answer = self.until(&json!(id)).pop().unwrap();
        assert!(
            answer["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty()),
            "tools/list after a malformed line: {answer}"
        );
    }

    /// `tools/call`; returns the envelope.
    fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":tool,"arguments":arguments}}));
        let answer = self.until(&json!(id)).pop().unwrap();
        answer["result"]["structuredContent"].clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The malformed lines, each with the error code and id it must be answered with.
fn malformed_lines() -> Vec<(&'static str, Vec<u8>, i64, Value)> {
    let mut too_deep = br#"{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{"a":"#.to_vec();
    // 65 levels: deeper than the documented 64, yet within serde_json's own 128.
    too_deep.extend(b"[".repeat(64));
    too_deep.extend(b"]".repeat(64));
    too_deep.extend(b"}}\n");
    let mut very_deep = b"[".repeat(100_000);
    very_deep.push(b'\n');
    let mut too_long = br#"{"jsonrpc":"2.0","id":21,"method":"ping","params":{"pad":""#.to_vec();
    too_long.extend(vec![b'x'; MAX_LINE_BYTES]);
    too_long.extend(b"\"}}\n");
    vec![
        ("garbage", b"this is not json\n".to_vec(), -32700, Value::Null),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"ping\xff\xfe\"}\n".to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "two objects on one line",
            br#"{"jsonrpc":"2.0","id":23,"method":"ping"} {"jsonrpc":"2.0","id":24,"method":"ping"}"#
                .iter()
                .chain(b"\n")
                .copied()
                .collect(),
            -32700,
            Value::Null,
        ),
        ("too deep (65)", too_deep, -32700, Value::Null),
        ("too deep (100 000)", very_deep, -32700, Value::Null),
        ("too long", too_long, -32700, Value::Null),
        ("not an object", b"42\n".to_vec(), -32600, Value::Null),
        (
            "a batch",
            br#"[{"jsonrpc":"2.0","id":25,"method":"ping"}]"#.iter().chain(b"\n").copied().collect(),
            -32600,
            Value::Null,
        ),
        (
            "missing jsonrpc",
            br#"{"id":26,"method":"ping"}"#.iter().chain(b"\n").copied().collect(),
            -32600,
            json!(26),
        ),
        (
            "wrong jsonrpc",
            br#"{"jsonrpc":"1.0","id":"s-27","method":"ping"}"#.iter().chain(b"\n").copied().collect(),
            -32600,
            json!("s-27"),
        ),
        (
            "bad id type",
            br#"{"jsonrpc":"2.0","id":{"n":28},"method":"ping"}"#.iter().chain(b"\n").copied().collect(),
            -32600,
            Value::Null,
        ),
        (
            "method name longer than 128 bytes",
            format!(r#"{{"jsonrpc":"2.0","id":30,"method":"{}"}}"#, "m".repeat(100_000))
                .into_bytes()
                .into_iter()
                .chain(*b"\n")
                .collect(),
            -32600,
            json!(30),
        ),
        (
            "id longer than 128 bytes",
            format!(r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#, "i".repeat(100_000))
                .into_bytes()
                .into_iter()
                .chain(*b"\n")
                .collect(),
            -32600,
            Value::Null,
        ),
        (
            "method not a string",
            br#"{"jsonrpc":"2.0","id":29,"method":29}"#.iter().chain(b"\n").copied().collect(),
            -32600,
            json!(29),
        ),
    ]
}

fn every_malformed_line_is_answered(server: &str) {
    let f = Fixture::new("");
    let mut s = f.start(server);
    for (n, (what, line, code, id)) in malformed_lines().into_iter().enumerate() {
        s.raw(&line);
        let list_id = 1000 + n as i64;
        s.send(&json!({"jsonrpc":"2.0","id":list_id,"method":"tools/list"}));
        let mut seen = s.until(&json!(list_id));
        let list = seen.pop().unwrap();
        assert!(
            list["result"]["tools"].is_array(),
            "{server} {what}: {list}"
        );
        // Exactly one answer to the malformed line, and nothing else (a line holding two
        // requests must not run either of them).
        assert_eq!(seen.len(), 1, "{server} {what}: {seen:?}");
        let error = &seen[0];
        assert_eq!(error["jsonrpc"], json!("2.0"), "{server} {what}: {error}");
        assert_eq!(
            error["error"]["code"],
            json!(code),
            "{server} {what}: {error}"
        );
        assert_eq!(error["id"], id, "{server} {what}: {error}");
        assert!(
            error["error"]["message"].is_string(),
            "{server} {what}: {error}"
        );
        assert!(
            error.to_string().len() < 300,
            "{server} {what}: answer too long"
        );
    }
    s.still_serves(2000);
}

#[test]
fn terminal_answers_every_malformed_line_and_keeps_serving() {
    every_malformed_line_is_answered("terminal");
}

#[test]
fn files_answers_every_malformed_line_and_keeps_serving() {
    every_malformed_line_is_answered("files");
}

fn assert_refused_short(what: &str, envelope: &Value) {
    assert_eq!(
        envelope["code"],
        json!("INVALID_REQUEST"),
        "{what}: {envelope}"
    );
    let reason = envelope["reason"].as_str().unwrap();
    assert!(
        reason.len() < 300,
        "{what}: reason of {} bytes",
        reason.len()
    );
    assert!(
        !reason.contains(&"x".repeat(100)),
        "{what}: the value is echoed"
    );
    assert!(
        envelope.to_string().len() < REASON_BOUND,
        "{what}: envelope of {} bytes",
        envelope.to_string().len()
    );
}

fn assert_audit_lines_short(f: &Fixture) {
    let lines = f.audit_lines();
    assert!(!lines.is_empty(), "the refused calls must be audited");
    for line in lines {
        assert!(
            line.len() < AUDIT_LINE_BOUND,
            "an audit line of {} bytes: {}…",
            line.len(),
            &line[..200]
        );
    }
}

#[test]
fn terminal_refuses_over_long_arguments_without_echoing_them() {
    let f = Fixture::new("");
    let mut s = f.start("terminal");
    let mib = "x".repeat(1 << 20);
    let e = s.call(1, "run_command", json!({"command": "ls", "cwd": mib}));
    assert_refused_short("run_command cwd", &e);
    assert!(e["reason"].as_str().unwrap().contains("4096"), "{e}");
    let e = s.call(2, "explain_command", json!({"command": "ls", "cwd": mib}));
    assert_refused_short("explain_command cwd", &e);
    let e = s.call(3, "run_command", json!({"command": "ls", mib.clone(): 1}));
    assert_refused_short("run_command unknown 1 MiB key", &e);
    let e = s.call(4, "run_command", json!({"command": format!("ls {mib}")}));
    assert_refused_short("run_command command", &e);
    let e = s.call(5, mib.as_str(), json!({}));
    assert_refused_short("unknown 1 MiB tool name", &e);
    // A cwd at the bound is judged as a path (and is not in the jail), not as too long.
    let e = s.call(
        6,
        "run_command",
        json!({"command": "ls", "cwd": "x".repeat(4096)}),
    );
    assert!(
        !e["reason"].as_str().unwrap().contains("the limit is 4096"),
        "{e}"
    );
    s.still_serves(7);
    drop(s);
    assert_audit_lines_short(&f);
}

#[test]
fn files_refuses_over_long_arguments_without_echoing_them() {
    let f = Fixture::new("");
    let mut s = f.start("files");
    let long_id = "x".repeat(100_000);
    let e = s.call(1, "apply_plan", json!({"plan_id": long_id}));
    assert_refused_short("apply_plan plan_id", &e);
    assert!(
        e["reason"].as_str().unwrap().contains("100000 bytes"),
        "{e}"
    );
    let mib = "x".repeat(1 << 20);
    let e = s.call(
        2,
        "move_file",
        json!({"src": mib, "dest": "docs/report.pdf"}),
    );
    assert_refused_short("move_file src", &e);
    let e = s.call(3, "move_file", json!({"src": "report.pdf", "dest": mib}));
    assert_refused_short("move_file dest", &e);
    let e = s.call(4, "list_files", json!({"subdir": mib}));
    assert_refused_short("list_files subdir", &e);
    let e = s.call(5, "plan_organize", json!({mib.clone(): true}));
    assert_refused_short("plan_organize unknown 1 MiB key", &e);
    let e = s.call(6, "apply_plan", json!({"plan_id": 5, "extra": mib}));
    assert_refused_short("apply_plan wrong type and long extra", &e);
    s.still_serves(7);
    drop(s);
    assert_audit_lines_short(&f);
}

#[test]
fn over_limit_commands_are_busy_at_once_and_run_nothing() {
    let f = Fixture::new("max_concurrent_commands = 2");
    let mut s = f.start("terminal");
    let sent = Instant::now();
    for id in 1..=6 {
        s.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"run_command","arguments":{"command":"sleep 2"}}}));
    }
    let mut ok = 0;
    let mut busy = 0;
    for _ in 0..6 {
        let answer = s.next();
        let envelope = &answer["result"]["structuredContent"];
        match envelope["code"].as_str() {
            Some("OK") => {
                ok += 1;
                assert!(sent.elapsed() >= Duration::from_millis(1900), "{envelope}");
            }
            Some("BUSY") => {
                busy += 1;
                // At once: not after a command finished.
                assert!(sent.elapsed() < Duration::from_millis(1500), "{envelope}");
                assert_eq!(envelope["ok"], json!(false));
                assert!(
                    envelope["reason"].as_str().unwrap().contains("2 commands"),
                    "{envelope}"
                );
            }
            _ => panic!("unexpected answer: {answer}"),
        }
    }
    assert_eq!((ok, busy), (2, 4));
    // The slots are free again once the outcomes are recorded.
    let e = s.call(7, "run_command", json!({"command": "sleep 0"}));
    assert_eq!(e["code"], json!("OK"), "{e}");
    drop(s);
    let records = f.audit_records();
    let count = |event: &str, code: Option<&str>| {
        records
            .iter()
            .filter(|r| r["event"] == json!(event) && r["tool"] == json!("run_command"))
            .filter(|r| code.is_none_or(|c| r["code"] == json!(c)))
            .count()
    };
    // Only the two (and the one after) got an intent record: nothing ran for the others.
    assert_eq!(count("intent", None), 3);
    assert_eq!(count("outcome", Some("BUSY")), 4);
    assert_eq!(count("outcome", Some("OK")), 3);
}

#[test]
fn zero_max_concurrent_commands_is_fatal_also_from_the_environment() {
    let f = Fixture::new("");
    for env in [None, Some("0")] {
        let policy = match env {
            None => {
                let p = f.dir.path().join("zero.toml");
                let text = std::fs::read_to_string(&f.policy)
                    .unwrap()
                    .replace("[terminal]\n", "[terminal]\nmax_concurrent_commands = 0\n");
                std::fs::write(&p, text).unwrap();
                p
            }
            Some(_) => f.policy.clone(),
        };
        let mut cmd = Command::new(BIN);
        cmd.arg("terminal")
            .arg("--config")
            .arg(&policy)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null());
        if let Some(v) = env {
            cmd.env("SAFE_MCP_MAX_CONCURRENT_COMMANDS", v);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{env:?}: {stderr}");
        assert!(
            stderr.contains("terminal.max_concurrent_commands"),
            "{env:?}: {stderr}"
        );
    }
}
