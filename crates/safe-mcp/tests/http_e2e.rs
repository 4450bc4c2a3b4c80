//! `--transport http` end to end: the built binary on a loopback port, spoken to with plain
//! HTTP/1.1 over a `TcpStream` (every byte of the request is the test's), against temporary
//! folders only. The front's refusals (401, 403, 413, 404), the callers' names in the audit
//! records, their tool subsets and limits, a client that disconnects mid-call, SIGTERM, TLS
//! and the start-up refusals.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

/// Longest the server may take to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The terminal policy: a few programs, and `[http]` with the tokens file.
const TERMINAL: &str = r#"
audit_log = "state/audit.jsonl"

[terminal]
jail_root = "jail"
max_concurrent_commands = 40

[terminal.allowlist]
commands = ["echo", "sleep", "ls"]
"#;

/// The guard policy: `echo` and `sleep`.
const GUARD: &str = r#"
audit_log = "state/audit.jsonl"

[terminal]
jail_root = "jail"

[guard]
replay_state = "state/replay.json"

[[guard.tools]]
name = "echo"
executable = "/bin/echo"
args_patterns = ["[a-z ]{1,40}"]

[[guard.tools]]
name = "sleep"
executable = "/bin/sleep"
args_patterns = ["[0-9]{1,2}"]
"#;

/// The files policy: a workspace with one file.
const FILES: &str = r#"
audit_log = "state/audit.jsonl"

[files]
workspace_root = "jail"
journal = "state/journal.jsonl"
"#;

/// One HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of the answer (the last `data:` event of a stream).
    pub fn message(&self) -> Value {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            let data = (self.body.lines())
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|d| d.contains("\"result\"") || d.contains("\"error\""))
                .unwrap_or("null");
            return serde_json::from_str(data).unwrap();
        }
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// A byte stream a request goes over: TCP, or TLS over TCP.
pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// A keep-alive HTTP/1.1 connection.
pub struct Conn {
    reader: BufReader<Box<dyn Stream>>,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        Conn::over(Box::new(tcp(addr)))
    }

    pub fn over(stream: Box<dyn Stream>) -> Conn {
        Conn {
            reader: BufReader::new(stream),
        }
    }

    /// Write `request` as is.
    pub fn write_raw(&mut self, request: &[u8]) {
        self.reader.get_mut().write_all(request).unwrap();
    }

    /// `POST /mcp` with `body`, the bearer `token` (if any) and `extra` headers.
    pub fn post(&mut self, token: Option<&str>, extra: &[(&str, &str)], body: &str) -> Reply {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Content-Length: {}\r\n",
            body.len()
        );
        if let Some(token) = token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        self.write_raw(head.as_bytes());
        self.write_raw(body.as_bytes());
        self.read_reply()
    }

    pub fn read_reply(&mut self) -> Reply {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not a status line: {line:?}"));
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h).unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let find = |name: &str| {
            (headers.iter())
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let mut body = Vec::new();
        if let Some(n) = find("content-length") {
            body.resize(n.parse().unwrap(), 0);
            self.reader.read_exact(&mut body).unwrap();
        } else if find("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).unwrap();
                let n = usize::from_str_radix(size.trim(), 16).unwrap();
                let mut chunk = vec![0; n + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        }
        Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    /// A JSON-RPC request; its `result` (or the whole message when there is none).
    pub fn rpc(&mut self, token: &str, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let reply = self.post(Some(token), &[], &body.to_string());
        assert_eq!(reply.status, 200, "{method}: {reply:?}");
        let message = reply.message();
        message.get("result").cloned().unwrap_or(message)
    }

    /// `tools/call`: the envelope (`structuredContent`).
    pub fn call(&mut self, token: &str, tool: &str, arguments: Value) -> Value {
        let result = self.rpc(
            token,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        result["structuredContent"].clone()
    }
}

/// A TCP connection with a read timeout.
pub fn tcp(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
}

/// A server of the binary on a loopback port, its folder and its callers' tokens.
pub struct Server {
    pub dir: tempfile::TempDir,
    pub child: Child,
    pub addr: SocketAddr,
    pub tokens: Vec<String>,
    pub stderr: PathBuf,
}

/// Callers: a name and lines for its `[[caller]]` entry (`tools = [..]`, ...).
pub type CallerSpec<'a> = (&'a str, &'a str);

impl Server {
    /// `safe-mcp <server> --transport http` with `policy`, `[http]` lines `http`, and
    /// `callers`.
    pub fn start(server: &str, policy: &str, http: &str, callers: &[CallerSpec]) -> Server {
        Self::start_with(server, policy, http, callers, &[]).unwrap()
    }

    /// As [`Server::start`] with `args` added; `Err` with stderr when it exits instead.
    pub fn start_with(
        server: &str,
        policy: &str,
        http: &str,
        callers: &[CallerSpec],
        args: &[&str],
    ) -> Result<Server, String> {
        let dir = tempfile::tempdir().unwrap();
        let jail = dir.path().join("jail");
        std::fs::create_dir_all(&jail).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::write(jail.join("notes.txt"), "hello\n").unwrap();
        if server != "files" {
            safe_mcp::demo::hand_jail_to_nobody(dir.path(), &jail).unwrap();
        }
        let mut tokens = Vec::new();
        let mut file = String::new();
        for (i, (name, extra)) in callers.iter().enumerate() {
            let token = format!("smcp_test_{i}_{}", uuid_like(i));
            file.push_str(&safety::callers::caller_stanza(name, &token));
            file.push_str(extra);
            file.push('\n');
            tokens.push(token);
        }
        let tokens_file = dir.path().join("tokens.toml");
        write_owner_only(&tokens_file, &file);
        let text = format!("{policy}\n[http]\ntokens_file = \"tokens.toml\"\n{http}\n");
        let policy = dir.path().join("policy.toml");
        std::fs::write(&policy, text).unwrap();
        let stderr = dir.path().join("server.log");
        let mut command = Command::new(BIN);
        command
            .args([server, "--config"])
            .arg(&policy)
            .args(["--transport", "http", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("SAFE_MCP_LOG", "info,rmcp=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        let mut child = command.spawn().unwrap();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let log = std::fs::read_to_string(&stderr).unwrap_or_default();
            if let Some(url) = log.split("listening on ").nth(1) {
                let addr = url
                    .trim_start_matches("http://")
                    .trim_start_matches("https://")
                    .split('/')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                return Ok(Server {
                    dir,
                    child,
                    addr,
                    tokens,
                    stderr,
                });
            }
            if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(log);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn conn(&self) -> Conn {
        Conn::open(self.addr)
    }

    pub fn audit_log(&self) -> PathBuf {
        self.dir.path().join("state/audit.jsonl")
    }

    /// Every audit record.
    pub fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(self.audit_log())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// SIGTERM, and the exit status (bounded wait).
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn uuid_like(i: usize) -> String {
    format!(
        "{:016x}",
        (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    )
}

pub fn write_owner_only(path: &Path, text: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Whether a process whose command line is `needle` (its program named by a path or not)
/// is running.
fn running(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| {
                let line = String::from_utf8_lossy(&c).replace('\0', " ");
                let line = line.trim();
                line == needle || line.ends_with(&format!("/{needle}"))
            })
            .unwrap_or(false)
    })
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[test]
fn without_a_callers_token_nothing_runs_the_answer_is_401_and_the_attempt_is_recorded() {
    let s = Server::start("terminal", TERMINAL, "", &[("alice", "")]);
    let run = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"run_command","arguments":{"command":"echo pwned"}}})
    .to_string();
    // A refused request's body is not read: the front answers and closes the connection.
    let missing = s.conn().post(None, &[], &run);
    assert_eq!(missing.status, 401, "{missing:?}");
    assert_eq!(
        missing.header("www-authenticate"),
        Some("Bearer realm=\"safe-mcp\"")
    );
    let wrong = s.conn().post(Some("smcp_not_a_token"), &[], &run);
    assert_eq!(wrong.status, 401);
    assert!(
        wrong
            .header("www-authenticate")
            .is_some_and(|h| h.contains("error=\"invalid_token\""))
    );
    // The hash from the file is not a token.
    let hash = safety::callers::token_sha256(&s.tokens[0]);
    assert_eq!(s.conn().post(Some(&hash), &[], &run).status, 401);
    let basic = s
        .conn()
        .post(None, &[("Authorization", "Basic YWxpY2U6eA==")], &run);
    assert_eq!(basic.status, 401);
    assert_eq!(s.conn().post(None, &[], INIT).status, 401);
    let records = s.records();
    let refused: Vec<&Value> = (records.iter())
        .filter(|r| r["event"] == "http_refused")
        .collect();
    assert_eq!(refused.len(), 5, "{records:#?}");
    assert!(refused.iter().all(|r| r["status"] == 401));
    assert_eq!(refused[0]["reason"], "no bearer token");
    assert_eq!(
        refused[1]["reason"],
        "the token is not one of this server's callers"
    );
    assert!(
        !records.iter().any(|r| r["tool"] == "run_command"),
        "a tool saw an unauthenticated request: {records:#?}"
    );
    assert!(
        !std::fs::read_to_string(s.audit_log())
            .unwrap()
            .contains("smcp_not_a_token")
    );
    let ok = s
        .conn()
        .call(&s.tokens[0], "run_command", json!({"command": "echo hi"}));
    assert_eq!(ok["detail"]["stdout"], "hi\n", "{ok}");
}

#[test]
fn a_foreign_origin_a_foreign_host_a_large_body_and_another_path_are_refused() {
    let s = Server::start(
        "terminal",
        TERMINAL,
        "allowed_origins = [\"http://localhost:5173\"]\nmax_body_bytes = 4096",
        &[("alice", "")],
    );
    let t = s.tokens[0].as_str();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    for origin in [
        "http://evil.example",
        "null",
        "http://localhost:5174",
        "https://localhost:5173",
    ] {
        let r = s.conn().post(Some(t), &[("Origin", origin)], list);
        assert_eq!(r.status, 403, "{origin}: {r:?}");
    }
    let allowed = s
        .conn()
        .post(Some(t), &[("Origin", "http://localhost:5173")], list);
    assert_eq!(allowed.status, 200, "{allowed:?}");
    // DNS rebinding: a name that resolves to loopback in the attacker's DNS.
    let mut raw = s.conn();
    raw.write_raw(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer {t}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n\r\n{list}",
            list.len()
        )
        .as_bytes(),
    );
    assert_eq!(raw.read_reply().status, 403);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"run_command","arguments":{{"command":"echo {}"}}}}}}"#,
        "a".repeat(5000)
    );
    let mut c = s.conn();
    assert_eq!(c.post(Some(t), &[], &big).status, 413);
    let mut other = s.conn();
    other.write_raw(
        format!("POST /admin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {t}\r\nContent-Length: 2\r\n\r\n{{}}").as_bytes(),
    );
    assert_eq!(other.read_reply().status, 404);
    let records = s.records();
    let statuses: Vec<u64> = (records.iter())
        .filter(|r| r["event"] == "http_refused")
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    // The origins and the body are the front's refusals; the Host is rmcp's (not recorded).
    assert_eq!(statuses, [403, 403, 403, 403, 413], "{records:#?}");
    assert_eq!(
        (records.iter())
            .find(|r| r["status"] == 413)
            .map(|r| r["caller"].clone()),
        Some(json!("alice"))
    );
    assert!(!records.iter().any(|r| r["tool"] == "run_command"));
}

#[test]
fn every_record_of_a_call_names_its_caller_and_a_subset_hides_and_refuses_the_other_tools() {
    let s = Server::start(
        "terminal",
        TERMINAL,
        "",
        &[
            ("alice", ""),
            (
                "ci-bot",
                "tools = [\"explain_command\"]\nprofile = \"strict\"",
            ),
        ],
    );
    let (alice, bot) = (s.tokens[0].as_str(), s.tokens[1].as_str());
    let mut c = s.conn();
    let init = c.post(Some(alice), &[], INIT);
    assert_eq!(init.status, 200);
    assert_eq!(
        init.message()["result"]["serverInfo"]["name"],
        "safe-mcp-terminal"
    );
    // Stateless: no session to carry.
    assert_eq!(init.header("mcp-session-id"), None);
    let names = |result: Value| -> Vec<String> {
        (result["tools"].as_array().unwrap().iter())
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(c.rpc(alice, "tools/list", json!({}))),
        ["run_command", "explain_command"]
    );
    assert_eq!(
        names(c.rpc(bot, "tools/list", json!({}))),
        ["explain_command"]
    );
    let ran = c.call(alice, "run_command", json!({"command": "echo hi"}));
    assert_eq!(ran["code"], "OK");
    assert!(
        ran["detail"]["sandbox"]
            .as_str()
            .is_some_and(|s| s.starts_with("profile=standard")),
        "{ran}"
    );
    let refused = c.call(bot, "run_command", json!({"command": "echo hi"}));
    assert_eq!(refused["code"], "POLICY_DENIED", "{refused}");
    assert!(refused["reason"].as_str().unwrap().contains("ci-bot"));
    // The bot's profile is strict: its dry run says so.
    let explained = c.call(bot, "explain_command", json!({"command": "echo hi"}));
    assert_eq!(explained["code"], "OK", "{explained}");
    assert_eq!(
        explained["detail"]["sandbox"]["profile"], "strict",
        "{explained}"
    );
    let denied = c.call(alice, "run_command", json!({"command": "cat /etc/shadow"}));
    assert_eq!(denied["code"], "POLICY_DENIED");
    let records = s.records();
    let calls: Vec<&Value> = (records.iter())
        .filter(|r| r.get("tool").is_some())
        .collect();
    assert!(calls.len() >= 5, "{records:#?}");
    for r in &calls {
        assert!(
            r["caller"] == "alice" || r["caller"] == "ci-bot",
            "a record without its caller: {r}"
        );
    }
    let by = |caller: &str, tool: &str| {
        (calls.iter())
            .filter(|r| r["caller"] == caller && r["tool"] == tool)
            .count()
    };
    // alice: intent and outcome of the run, and the refusal's outcome; the bot: its refusal
    // and its dry run.
    assert_eq!(by("alice", "run_command"), 3, "{calls:#?}");
    assert_eq!(by("ci-bot", "run_command"), 1, "{calls:#?}");
    assert_eq!(by("ci-bot", "explain_command"), 1, "{calls:#?}");
    assert_eq!(
        safety::verify_audit_log(&s.audit_log()).unwrap().broken,
        None
    );
}

#[test]
fn a_caller_at_its_limits_is_busy_at_once_while_another_caller_is_served() {
    let s = Server::start(
        "terminal",
        TERMINAL,
        "max_concurrent_per_caller = 2\ncalls_per_minute = 100",
        &[
            ("slow", "max_concurrent = 1"),
            ("other", ""),
            ("few", "calls_per_minute = 2"),
        ],
    );
    let (slow, other, few) = (
        s.tokens[0].clone(),
        s.tokens[1].clone(),
        s.tokens[2].clone(),
    );
    let addr = s.addr;
    let long = std::thread::spawn(move || {
        Conn::open(addr).call(&slow, "run_command", json!({"command": "sleep 3"}))
    });
    // Wait until the slow call runs.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !running("sleep 3") {
        assert!(Instant::now() < deadline, "the slow call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let busy = s
        .conn()
        .call(&s.tokens[0], "run_command", json!({"command": "echo x"}));
    assert_eq!(busy["code"], "BUSY", "{busy}");
    assert!(
        busy["reason"].as_str().unwrap().contains("1 calls running"),
        "{busy}"
    );
    // Another caller is not held up by the slow one.
    let started = Instant::now();
    let served = s
        .conn()
        .call(&other, "run_command", json!({"command": "echo y"}));
    assert_eq!(served["code"], "OK", "{served}");
    assert!(
        running("sleep 3"),
        "the other caller waited for the slow one"
    );
    let elapsed = started.elapsed();
    // The rate: two calls a minute, the third is BUSY and says when to come back.
    let mut c = s.conn();
    for _ in 0..2 {
        assert_eq!(
            c.call(&few, "explain_command", json!({"command": "ls"}))["code"],
            "OK"
        );
    }
    let over = c.call(&few, "explain_command", json!({"command": "ls"}));
    assert_eq!(over["code"], "BUSY", "{over}");
    assert!(
        over["reason"]
            .as_str()
            .unwrap()
            .contains("2 calls per minute"),
        "{over}"
    );
    let done = long.join().unwrap();
    assert_eq!(done["code"], "OK", "{done}");
    eprintln!("another caller served in {elapsed:?} while the slow one ran");
}

#[test]
fn a_client_that_disconnects_mid_call_has_its_process_tree_killed() {
    for (server, policy, tool, args) in [
        (
            "terminal",
            TERMINAL,
            "run_command",
            json!({"command": "sleep 37"}),
        ),
        (
            "guard",
            GUARD,
            "guard_exec",
            json!({"toolName": "sleep", "command": "/bin/sleep", "args": ["38"]}),
        ),
    ] {
        let s = Server::start(server, policy, "", &[("alice", "")]);
        let needle = format!("sleep {}", if server == "terminal" { 37 } else { 38 });
        let body = json!({"jsonrpc":"2.0","id":9,"method":"tools/call",
            "params":{"name": tool, "arguments": args}})
        .to_string();
        let mut c = s.conn();
        c.write_raw(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
                s.tokens[0],
                body.len()
            )
            .as_bytes(),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while !running(&needle) {
            assert!(
                Instant::now() < deadline,
                "{server}: the command never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(c);
        let deadline = Instant::now() + Duration::from_secs(10);
        while running(&needle) {
            assert!(
                Instant::now() < deadline,
                "{server}: the command outlived its client"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // The outcome is recorded with the caller, and says why.
        let deadline = Instant::now() + Duration::from_secs(10);
        let outcome = loop {
            let found =
                (s.records().into_iter()).find(|r| r["event"] == "outcome" && r["tool"] == tool);
            if let Some(r) = found {
                break r;
            }
            assert!(Instant::now() < deadline, "{server}: no outcome record");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(outcome["caller"], "alice", "{outcome}");
        assert!(
            outcome["reason"].as_str().unwrap().contains("cancelled"),
            "{server}: {outcome}"
        );
    }
}

#[test]
fn the_guard_and_files_servers_serve_http_callers_too() {
    let g = Server::start("guard", GUARD, "", &[("alice", "tools = [\"guard_exec\"]")]);
    let mut c = g.conn();
    let t = g.tokens[0].as_str();
    let tools = c.rpc(t, "tools/list", json!({}));
    assert_eq!(tools["tools"].as_array().unwrap().len(), 1, "{tools}");
    let ran = c.call(
        t,
        "guard_exec",
        json!({"toolName": "echo", "command": "/bin/echo", "args": ["hi there"]}),
    );
    assert_eq!(ran["code"], "OK", "{ran}");
    let hidden = c.call(t, "register_allowlist", json!({"name": "x"}));
    assert_eq!(hidden["code"], "POLICY_DENIED", "{hidden}");
    assert!(
        g.records()
            .iter()
            .filter(|r| r.get("tool").is_some())
            .all(|r| r["caller"] == "alice")
    );
    let f = Server::start("files", FILES, "", &[("bob", "")]);
    let mut c = f.conn();
    let t = f.tokens[0].as_str();
    let listed = c.call(t, "list_files", json!({}));
    assert_eq!(listed["code"], "OK", "{listed}");
    assert!(listed.to_string().contains("notes.txt"), "{listed}");
    let moved = c.call(
        t,
        "move_file",
        json!({"src": "notes.txt", "dest": "docs/notes.txt"}),
    );
    assert_eq!(moved["code"], "OK", "{moved}");
    let records = f.records();
    let calls: Vec<&Value> = (records.iter())
        .filter(|r| r.get("tool").is_some())
        .collect();
    assert!(calls.len() >= 3, "{records:#?}");
    assert!(calls.iter().all(|r| r["caller"] == "bob"), "{calls:#?}");
}

#[test]
fn sigterm_lets_the_call_in_flight_finish_and_closes_the_log_with_its_checkpoint() {
    let key_dir = tempfile::tempdir().unwrap();
    let key = key_dir.path().join("signer");
    let public = key_dir.path().join("signer.pub");
    safety::audit::generate_checkpoint_key("test/http", &key, &public).unwrap();
    let policy = format!("audit_checkpoint_key = \"{}\"\n{TERMINAL}", key.display());
    let mut s = Server::start("terminal", &policy, "", &[("alice", "")]);
    let (addr, token) = (s.addr, s.tokens[0].clone());
    let call = std::thread::spawn(move || {
        Conn::open(addr).call(&token, "run_command", json!({"command": "sleep 2"}))
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while !running("sleep 2") {
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = s.terminate();
    let log = std::fs::read_to_string(&s.stderr).unwrap_or_default();
    assert!(status.success(), "{status:?}\n{log}");
    let answered = call.join();
    assert!(
        answered.as_ref().is_ok_and(|e| e["code"] == "OK"),
        "{answered:?}\n{log}"
    );
    // No one is served after the stop.
    assert!(TcpStream::connect_timeout(&s.addr, Duration::from_secs(2)).is_err());
    let records = s.records();
    assert!(
        records
            .last()
            .is_some_and(|r| r.get("checkpoint").is_some()),
        "{records:#?}"
    );
    let verifier = safety::audit::CheckpointVerifier::load(&public).unwrap();
    let report = safety::audit::verify_signed(&s.audit_log(), Some(&verifier)).unwrap();
    assert_eq!(report.broken, None);
    assert_eq!(report.signed.unwrap().covered, report.records);
}

#[test]
fn start_up_refuses_an_exposed_tokens_file_a_missing_one_and_clear_text_beyond_loopback() {
    // A tokens file others can read or write.
    let mut s = Server::start("terminal", TERMINAL, "", &[("alice", "")]);
    let _ = s.child.kill();
    let _ = s.child.wait();
    let dir = s.dir.path().to_path_buf();
    let tokens = dir.join("tokens.toml");
    let policy = dir.join("policy.toml");
    let start = |args: &[&str]| {
        Command::new(BIN)
            .args(["terminal", "--config"])
            .arg(&policy)
            .args(["--transport", "http"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = start(&["--listen", "127.0.0.1:0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mode 644") && err.contains("chmod 600"),
        "{err}"
    );
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A non-loopback address without TLS or --behind-proxy.
    let out = start(&["--listen", "0.0.0.0:0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a loopback address") && err.contains("--tls-cert"),
        "{err}"
    );
    // A tokens file inside the jail.
    let text = std::fs::read_to_string(&policy).unwrap();
    std::fs::rename(&tokens, dir.join("jail/tokens.toml")).unwrap();
    std::fs::write(
        &policy,
        text.replace(
            "tokens_file = \"tokens.toml\"",
            "tokens_file = \"jail/tokens.toml\"",
        ),
    )
    .unwrap();
    let out = start(&["--listen", "127.0.0.1:0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("http.tokens_file") && err.contains("terminal.jail_root"),
        "{err}"
    );
    // No tokens file at all.
    std::fs::write(&policy, text.replace("tokens_file = \"tokens.toml\"", "")).unwrap();
    let out = start(&["--listen", "127.0.0.1:0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs [http] tokens_file"), "{err}");
    // stdio ignores [http].
}

#[test]
fn safe_mcp_token_prints_a_token_and_the_entry_that_admits_it() {
    let out = Command::new(BIN)
        .args(["token", "--name", "alice"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let token = lines.next().unwrap();
    assert!(token.starts_with("smcp_") && token.len() > 40, "{token}");
    let rest: Vec<&str> = lines.collect();
    assert_eq!(
        rest,
        [
            "",
            "[[caller]]",
            "name = \"alice\"",
            &format!(
                "token_sha256 = \"{}\"",
                safety::callers::token_sha256(token)
            ),
        ]
    );
    let bad = Command::new(BIN)
        .args(["token", "--name", "a b"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn with_tls_the_server_speaks_only_tls_and_its_key_must_be_private() {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let certs = tempfile::tempdir().unwrap();
    let cert = certs.path().join("cert.pem");
    let key = certs.path().join("key.pem");
    std::fs::write(&cert, made.cert.pem()).unwrap();
    write_owner_only(&key, &made.signing_key.serialize_pem());
    let args = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let s = Server::start_with("terminal", TERMINAL, "", &[("alice", "")], &args).unwrap();
    assert!(
        std::fs::read_to_string(&s.stderr)
            .unwrap()
            .contains("listening on https://")
    );
    // A client that trusts the certificate is served.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(made.cert.der().clone()).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let stream = rustls::StreamOwned::new(tls, tcp(s.addr));
    let mut c = Conn::over(Box::new(stream));
    let ran = c.call(
        &s.tokens[0],
        "run_command",
        json!({"command": "echo over tls"}),
    );
    assert_eq!(ran["detail"]["stdout"], "over tls\n", "{ran}");
    // Plain HTTP to the TLS port gets no answer.
    let mut plain = Conn::open(s.addr);
    plain.write_raw(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}");
    let mut line = String::new();
    let read = plain.reader.read_line(&mut line);
    assert!(
        read.is_err() || !line.starts_with("HTTP/1.1"),
        "plain HTTP was answered: {line:?}"
    );
    drop(s);
    // A key others can read stops the start.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o640)).unwrap();
    let refused = Server::start_with("terminal", TERMINAL, "", &[("alice", "")], &args);
    let log = refused
        .err()
        .expect("a server with a readable TLS key started");
    assert!(
        log.contains("mode 640") && log.contains("chmod 600"),
        "{log}"
    );
}

#[test]
fn demo_http_drives_every_server_over_http_with_two_callers() {
    let out = Command::new(BIN)
        .args(["demo", "--http"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for server in ["terminal", "files", "guard"] {
        assert!(
            text.contains(&format!("== {server} server over http://127.0.0.1:")),
            "{server} was not reached over HTTP:\n{text}"
        );
    }
    let auditor = text
        .split("as caller 'auditor'")
        .nth(1)
        .expect("no second caller");
    assert!(auditor.contains("[\"explain_command\"]"), "{auditor}");
    assert!(auditor.contains("\"code\": \"POLICY_DENIED\""), "{auditor}");
    assert!(auditor.contains("\"profile\": \"strict\""), "{auditor}");
    assert!(
        text.contains("HTTP 401 Unauthorized, WWW-Authenticate: Bearer realm=\"safe-mcp\""),
        "{text}"
    );
    assert!(text.contains("(refused: no caller): 1"), "{text}");
    assert!(
        text.contains("\nalice: ") && text.contains("\nauditor: 2"),
        "{text}"
    );
    let signed = text
        .lines()
        .find(|l| l.starts_with("signed: "))
        .expect("the log was not verified");
    let ok = text.lines().find(|l| l.starts_with("ok: ")).unwrap();
    let records = ok.split(' ').nth(1).unwrap();
    assert!(
        signed.ends_with(&format!("records 1..={records} covered")),
        "{ok}\n{signed}"
    );
}
