//! End-to-end tests of the terminal server: the real binary, driven through the official
//! rmcp client over stdio, against temporary folders only.

use std::path::{Path, PathBuf};

use safe_mcp::client::{self, Session};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

struct Fixture {
    dir: tempfile::TempDir,
    policy: PathBuf,
}

const POLICY: &str = r#"
audit_log = "state/audit.jsonl"
audit_fail_mode = "FAILMODE"

[terminal]
jail_root = "jail"

[terminal.limits]
timeout_seconds = 20
max_output_bytes = 4096

[terminal.allowlist]
commands = ["cat", "echo", "ls", "printenv", "sleep", "sh", "seq", "true", "false", "tty", "pwd", "printf", "git", "yes"]

[terminal.denylist]
commands = ["rm"]

[[terminal.rules]]
command = "git"
deny_args = ["-c", "--output", "config core.*"]
reason = "git escape"
"#;

impl Fixture {
    fn new() -> Self {
        Self::with_mode("closed")
    }

    fn with_mode(mode: &str) -> Self {
        Self::with_policy(mode, "")
    }

    /// The test policy with `mode` as `audit_fail_mode` and `extra` appended.
    fn with_policy(mode: &str, extra: &str) -> Self {
        Self::build("", mode, extra)
    }

    /// The test policy with top-level keys `top` put first.
    fn with_top_level(top: &str) -> Self {
        Self::build(top, "closed", "")
    }

    fn build(top: &str, mode: &str, extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let jail = dir.path().join("jail");
        std::fs::create_dir_all(jail.join("sub")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::write(jail.join("notes.txt"), "demo file\n").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "outside\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), jail.join("link")).unwrap();
        safe_mcp::demo::hand_jail_to_nobody(dir.path(), &jail).unwrap();
        let policy = dir.path().join("policy.toml");
        let text = format!("{top}\n{}{extra}", POLICY.replace("FAILMODE", mode));
        std::fs::write(&policy, text).unwrap();
        Fixture { dir, policy }
    }

    fn jail(&self) -> PathBuf {
        self.dir.path().join("jail")
    }

    fn audit_log(&self) -> PathBuf {
        self.dir.path().join("state/audit.jsonl")
    }

    async fn connect(&self) -> Session {
        client::connect(
            Path::new(BIN),
            &["terminal", "--config", self.policy.to_str().unwrap()],
            &[],
        )
        .await
        .expect("connect")
    }
}

async fn run(s: &Session, args: Value) -> Value {
    client::call(s, "run_command", args)
        .await
        .expect("call run_command")
}

fn code(e: &Value) -> &str {
    e["code"].as_str().unwrap_or_default()
}

fn audit_text(f: &Fixture) -> String {
    std::fs::read_to_string(f.audit_log()).unwrap_or_default()
}

#[tokio::test]
async fn demo_envelopes_match_apart_from_duration() {
    let f = Fixture::new();
    let s = f.connect().await;
    let mut ok = run(&s, json!({"command": "cat notes.txt"})).await;
    // Every run reports its sandbox in one line, checked apart with its audit record (and
    // the whole report beside it on a host where something was downgraded); the rest is
    // the documented envelope.
    crate::recorded::recorded_report(&f.audit_log(), &ok).unwrap();
    ok.as_object_mut().unwrap().remove("duration_ms");
    let detail = ok["detail"].as_object_mut().unwrap();
    detail.remove("sandbox_report");
    let sandbox = detail.remove("sandbox");
    assert!(
        sandbox.is_some_and(|s| s
            .as_str()
            .is_some_and(|s| s.starts_with("profile=standard "))),
        "run_command must report its sandbox"
    );
    assert_eq!(
        ok,
        json!({"action":"run_command","code":"OK","detail":{"exit_code":0,"stderr":"","stdout":"demo file\n"},"ok":true,"reason":"'cat' is allowed"})
    );
    let mut denied = run(&s, json!({"command": "rm -rf /"})).await;
    denied.as_object_mut().unwrap().remove("duration_ms");
    assert_eq!(
        denied,
        json!({"action":"run_command","code":"POLICY_DENIED","detail":{},"ok":false,"reason":"'rm' is on the denylist"})
    );
}

#[tokio::test]
async fn tools_list_carries_schemas_annotations_and_instructions() {
    let f = Fixture::new();
    let s = f.connect().await;
    let info = s.peer_info().expect("server info");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("explain_command") && instructions.contains("without a shell"));
    // What the instructions say of glob characters is what happens: `*` reaches the program.
    assert!(
        instructions.contains("`ls *.txt` looks for a file named `*.txt`")
            && !instructions.contains("globbing are refused"),
        "{instructions}"
    );
    std::fs::write(f.jail().join("a.txt"), "a").unwrap();
    let e = run(&s, json!({"command": "ls *.txt"})).await;
    assert_eq!(code(&e), "OK", "{e}");
    assert_eq!(e["detail"]["exit_code"], 2, "{e}");
    assert!(
        e["detail"]["stderr"].as_str().unwrap().contains("'*.txt'"),
        "{e}"
    );
    let tools = s.peer().list_all_tools().await.unwrap();
    let tools = serde_json::to_value(&tools).unwrap();
    let run = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "run_command")
        .unwrap();
    let explain = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "explain_command")
        .unwrap();
    assert_eq!(run["annotations"]["destructiveHint"], true);
    assert_eq!(run["annotations"]["readOnlyHint"], false);
    assert_eq!(explain["annotations"]["readOnlyHint"], true);
    assert_eq!(explain["annotations"]["idempotentHint"], true);
    assert_eq!(run["inputSchema"]["required"], json!(["command"]));
    assert_eq!(run["inputSchema"]["additionalProperties"], false);
    for t in [run, explain] {
        let props = &t["outputSchema"]["properties"];
        for key in ["ok", "code", "action", "reason", "detail", "duration_ms"] {
            assert!(props.get(key).is_some(), "outputSchema lacks {key}");
        }
    }
}

#[tokio::test]
async fn quoted_operators_are_literal_and_unquoted_ones_refused() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = run(&s, json!({"command": "echo \"a;b\" 'c|d' e\\&f"})).await;
    assert_eq!(e["detail"]["stdout"], "a;b c|d e&f\n");
    for (command, op) in [
        ("echo a; rm x", ";"),
        ("echo a | cat", "|"),
        ("echo $(id)", "$("),
        ("echo a > x", ">"),
        ("echo `id`", "`"),
    ] {
        let e = run(&s, json!({ "command": command })).await;
        assert_eq!(code(&e), "POLICY_DENIED", "{command}: {e}");
        let reason = e["reason"].as_str().unwrap();
        assert!(
            reason.contains(&format!("'{op}'")) && reason.contains("without a shell"),
            "{command}: {reason}"
        );
    }
    assert!(!f.jail().join("x").exists());
}

#[tokio::test]
async fn escapes_return_path_escape_and_nothing_runs() {
    let f = Fixture::new();
    let s = f.connect().await;
    let cases = [
        json!({"command": "pwd", "cwd": ".."}),
        json!({"command": "pwd", "cwd": "/etc"}),
        json!({"command": "pwd", "cwd": "sub/../.."}),
        json!({"command": "cat ../secret.txt"}),
        json!({"command": "cat /etc/passwd"}),
        json!({"command": "cat link"}),
        json!({"command": "cat sub/../../secret.txt"}),
        // `..` after a folder that does not exist: the kernel never resolves it, a program
        // that creates or normalises the path would climb out with it.
        json!({"command": "cat sub/missing/../../../secret.txt"}),
        json!({"command": "ls sub/missing/../../.."}),
    ];
    for args in cases {
        let e = run(&s, args.clone()).await;
        assert_eq!(code(&e), "PATH_ESCAPE", "{args}: {e}");
        assert_eq!(e["detail"], json!({}), "{args}");
    }
    // Nothing ran: the log holds outcome records only, no intent.
    assert!(!audit_text(&f).contains("\"intent\""));
    let jail_evil = f.dir.path().join("jail_evil");
    std::fs::create_dir_all(&jail_evil).unwrap();
    let e = run(
        &s,
        json!({"command": "pwd", "cwd": jail_evil.to_str().unwrap()}),
    )
    .await;
    assert_eq!(code(&e), "PATH_ESCAPE", "sibling with a longer name: {e}");
    let e = run(&s, json!({"command": "pwd", "cwd": "sub"})).await;
    assert_eq!(
        e["detail"]["stdout"],
        format!("{}/sub\n", f.jail().canonicalize().unwrap().display())
    );
}

#[tokio::test]
async fn malformed_requests_get_envelopes_and_the_server_survives() {
    let f = Fixture::new();
    let s = f.connect().await;
    let huge = "a".repeat(1024 * 1024);
    // Each reason names what was refused and why (the start of it is asserted).
    let cases = [
        (
            json!({}),
            "missing required argument 'command': it must be a string",
        ),
        (json!({"command": 42}), "'command' must be a string"),
        (
            json!({"command": "echo hi", "cwd": 7}),
            "'cwd' must be a string",
        ),
        (
            json!({"command": "echo hi", "nope": true}),
            "unknown argument 'nope': 'run_command' takes only command, cwd, timeout_seconds",
        ),
        (
            json!({"command": huge}),
            "command is 1048576 bytes long; the limit is 16384 bytes",
        ),
        (
            json!({"command": "echo a\u{0}b"}),
            "command contains a NUL byte",
        ),
        (
            json!({"command": "echo \"unbalanced"}),
            "unbalanced double quote",
        ),
        (json!({"command": "   "}), "command is empty"),
        (
            json!({"command": "sleep 1", "timeout_seconds": 999}),
            "timeout_seconds 999 is longer than this command may run: it must be a whole \
             number of seconds from 1 to 20",
        ),
        (
            json!({"command": "sleep 1", "timeout_seconds": "soon"}),
            "'timeout_seconds' must be a whole number of seconds, at least 1; got a string",
        ),
    ];
    for (args, reason) in cases {
        let e = run(&s, args.clone()).await;
        let shown: String = args.to_string().chars().take(60).collect();
        assert_eq!(code(&e), "INVALID_REQUEST", "{shown}: {e}");
        let got = e["reason"].as_str().unwrap();
        assert!(got.starts_with(reason), "{shown}: {got:?}");
    }
    let unknown = client::call(&s, "format_disk", json!({})).await.unwrap();
    assert_eq!(code(&unknown), "INVALID_REQUEST");
    assert!(
        unknown["reason"]
            .as_str()
            .unwrap()
            .contains("unknown tool 'format_disk'")
    );
    // Still serving.
    let e = run(&s, json!({"command": "echo alive"})).await;
    assert_eq!(e["detail"]["stdout"], "alive\n");
}

#[tokio::test]
async fn environment_is_the_scrubbed_set_and_home_is_not_the_jail() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = run(&s, json!({"command": "printenv"})).await;
    let mut names: Vec<&str> = e["detail"]["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    names.sort();
    let mut expected: Vec<String> = ["PATH", "HOME", "LANG", "GIT_CEILING_DIRECTORIES"]
        .iter()
        .map(|n| n.to_string())
        .chain(
            safety::terminal::HARDENING_ENV
                .iter()
                .map(|(n, _)| n.to_string()),
        )
        .chain(std::iter::once("GIT_CONFIG_COUNT".to_string()))
        .chain((0..safety::terminal::GIT_OVERRIDES.len()).flat_map(|i| {
            [
                format!("GIT_CONFIG_KEY_{i}"),
                format!("GIT_CONFIG_VALUE_{i}"),
            ]
        }))
        .collect();
    expected.sort();
    assert_eq!(names, expected, "{e}");
    // HOME is an empty folder outside the jail (a config file planted in the jail root
    // must not be read as ~/.gitconfig by the next command).
    let e = run(&s, json!({"command": "printenv HOME"})).await;
    let home = e["detail"]["stdout"].as_str().unwrap().trim().to_string();
    let jail = f.jail().canonicalize().unwrap();
    assert!(!std::path::Path::new(&home).starts_with(&jail), "{e}");
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "{home} is empty"
    );
}

#[tokio::test]
async fn stdin_is_empty_and_there_is_no_terminal_to_prompt_on() {
    let f = Fixture::new();
    let s = f.connect().await;
    // `cat` with no file reads stdin: /dev/null ends at once.
    let e = run(&s, json!({"command": "cat"})).await;
    assert_eq!(code(&e), "OK");
    assert_eq!(e["detail"]["stdout"], "");
    // New session, no controlling terminal: a prompt would fail instead of waiting.
    let e = run(&s, json!({"command": "tty"})).await;
    assert_eq!(e["detail"]["exit_code"], 1);
    assert_eq!(e["detail"]["stdout"], "not a tty\n");
}

#[tokio::test]
async fn non_zero_exit_is_still_ok_and_invalid_utf8_is_survived() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = run(&s, json!({"command": "false"})).await;
    assert_eq!(e["ok"], true);
    assert_eq!(e["detail"]["exit_code"], 1);
    let e = run(&s, json!({"command": "printf '\\377\\376ok'"})).await;
    assert_eq!(code(&e), "OK");
    assert_eq!(e["detail"]["stdout"], "\u{FFFD}\u{FFFD}ok");
}

fn survivors(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(marker) {
                found.push(text);
            }
        }
    }
    found
}

#[tokio::test]
async fn timeout_kills_the_process_group() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = run(
        &s,
        json!({"command": "sh -c \"sleep 61.31 & sleep 61.32\"", "timeout_seconds": 1}),
    )
    .await;
    assert_eq!(code(&e), "TIMEOUT", "{e}");
    assert_eq!(e["ok"], false);
    assert_eq!(e["detail"]["killed"], true);
    assert!(
        survivors("61.31").is_empty() && survivors("61.32").is_empty(),
        "a process outlived its call"
    );
}

#[tokio::test]
async fn backgrounded_grandchild_holding_stdout_does_not_hang_the_call() {
    let f = Fixture::new();
    let s = f.connect().await;
    // The grandchild keeps stdout open; the call must still come back, well before the 20 s timeout.
    let e = run(
        &s,
        json!({"command": "sh -c \"sleep 62.41 & echo started\""}),
    )
    .await;
    assert_eq!(code(&e), "OK", "{e}");
    assert_eq!(e["detail"]["stdout"], "started\n");
    assert!(
        survivors("62.41").is_empty(),
        "the backgrounded sleep outlived its call"
    );
}

/// From a truncation reason, `(kept, read)` of `stream`'s `"{stream}: KEPT of the READ
/// bytes read are kept"`.
fn kept_of(reason: &str, stream: &str) -> (u64, u64) {
    let at = reason
        .find(&format!("{stream}: "))
        .unwrap_or_else(|| panic!("no {stream} figures in {reason:?}"));
    let words: Vec<&str> = reason[at..].split(' ').collect();
    assert_eq!(&words[2..4], ["of", "the"], "{reason}");
    assert_eq!(&words[5..9], ["bytes", "read", "are", "kept"], "{reason}");
    (words[1].parse().unwrap(), words[4].parse().unwrap())
}

#[tokio::test]
async fn long_output_keeps_head_and_tail() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = run(&s, json!({"command": "seq 1 100000"})).await;
    assert_eq!(code(&e), "OUTPUT_TRUNCATED", "{}", e["reason"]);
    assert_eq!(e["ok"], true);
    let out = e["detail"]["stdout"].as_str().unwrap();
    assert!(out.starts_with("1\n2\n3\n"));
    assert!(
        out.ends_with("99999\n100000\n"),
        "tail: {:?}",
        &out[out.len().saturating_sub(80)..]
    );
    assert!(out.contains("bytes omitted] ..."));
    assert!(out.len() < 4096 + 200, "stdout is {} bytes", out.len());
    assert!(e["detail"]["stdout_truncated_bytes"].as_u64().unwrap() > 500_000);
    assert_eq!(e["detail"]["truncated"], true);
    // The reason says what the cap is and what was kept, with the figures of the detail.
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "'seq' is allowed; its output was longer than the 4096-byte cap per stream, so the \
             middle was cut: stdout: "
        ),
        "{reason}"
    );
    let (kept, read) = kept_of(reason, "stdout");
    assert_eq!(read, 588_895, "seq 1 100000 writes 588895 bytes");
    assert_eq!(
        read - kept,
        e["detail"]["stdout_truncated_bytes"].as_u64().unwrap()
    );
    assert!(!reason.contains("stderr"), "{reason}");
}

#[tokio::test]
async fn endless_output_is_cut_and_the_writer_killed() {
    let f = Fixture::new();
    let s = f.connect().await;
    // `yes` never stops on its own: past 16 × the cap (at least 1 MiB) the group is killed.
    let e = run(&s, json!({"command": "yes safe-mcp-flood"})).await;
    assert_eq!(code(&e), "OUTPUT_TRUNCATED", "{}", e["reason"]);
    assert_eq!(e["detail"]["killed"], true);
    assert_eq!(e["detail"]["truncated"], true);
    let out = e["detail"]["stdout"].as_str().unwrap();
    assert!(out.starts_with("safe-mcp-flood\n") && out.len() < 4096 + 200);
    assert!(survivors("safe-mcp-flood").is_empty());
    // Why it was stopped, the cap, and what was kept, in figures that agree with the detail.
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "'yes' was stopped and its whole process tree killed: it kept writing past 1048576 \
             bytes on one stream, the most that is read from a command (16 times the 4096-byte \
             output cap, and at least 1 MiB); stdout: "
        ),
        "{reason}"
    );
    let (kept, read) = kept_of(reason, "stdout");
    assert!(read > 1_048_576 && kept <= 4096, "{reason}");
    assert_eq!(
        read - kept,
        e["detail"]["stdout_truncated_bytes"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn secrets_are_redacted_in_output_and_in_the_audit_log() {
    let f = Fixture::new();
    let s = f.connect().await;
    let key = "AKIAIOSFODNN7EXAMPLQ";
    let e = run(&s, json!({ "command": format!("echo key={key}") })).await;
    let out = e["detail"]["stdout"].as_str().unwrap();
    assert!(!out.contains(key) && out.contains("[REDACTED:"), "{out}");
    assert!(!audit_text(&f).contains(key), "audit log holds the secret");
}

#[tokio::test]
async fn audit_records_intent_then_outcome_and_the_chain_verifies() {
    let f = Fixture::new();
    let s = f.connect().await;
    run(&s, json!({"command": "echo one"})).await;
    run(&s, json!({"command": "rm -rf /"})).await;
    client::call(&s, "explain_command", json!({"command": "echo two"}))
        .await
        .unwrap();
    let text = audit_text(&f);
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e["tool"].as_str().unwrap(), e["event"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("run_command", "intent"),
            ("run_command", "outcome"),
            ("run_command", "outcome"),
            ("explain_command", "outcome")
        ]
    );
    let out = std::process::Command::new(BIN)
        .args(["audit", "verify"])
        .arg(f.audit_log())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok: 4 records");
}

#[tokio::test]
async fn a_rotating_audit_log_keeps_one_verified_chain_across_its_files() {
    let f = Fixture::with_top_level("audit_rotate_bytes = 4096");
    let s = f.connect().await;
    for n in 0..12 {
        let e = run(&s, json!({ "command": format!("echo {n}") })).await;
        assert_eq!(e["code"], "OK", "{e}");
    }
    let rotated = |n: u32| PathBuf::from(format!("{}.{n}", f.audit_log().display()));
    assert!(rotated(1).exists() && rotated(2).exists(), "no rotation");
    let out = std::process::Command::new(BIN)
        .args(["audit", "verify"])
        .arg(f.audit_log())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.starts_with("ok: ") && stdout.contains(" files (") && stdout.contains(".jsonl.1"),
        "{stdout}"
    );
    // Every call is there: an intent and an outcome per command, over all the chain's files.
    let report = safety::audit::verify(&f.audit_log()).unwrap();
    let mut outcomes = 0;
    for file in report.files {
        outcomes += std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"event\":\"outcome\""))
            .count();
    }
    assert_eq!(outcomes, 12);
}

/// Make the audit log really unwritable: `chattr +i` where it works, else a log whose parent
/// is a regular file (ENOTDIR, which even root cannot write through).
fn make_log_unwritable(f: &Fixture) -> Option<PathBuf> {
    let log = f.audit_log();
    std::fs::write(&log, "").unwrap();
    let ok = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&log)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok && std::fs::OpenOptions::new().append(true).open(&log).is_err() {
        return Some(log);
    }
    eprintln!("chattr +i unavailable here; using a log path whose parent is a regular file");
    let _ = std::fs::remove_file(&log);
    std::fs::remove_dir_all(f.dir.path().join("state")).unwrap();
    std::fs::write(f.dir.path().join("state"), "not a folder").unwrap();
    None
}

fn undo_unwritable(log: Option<PathBuf>) {
    if let Some(log) = log {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&log)
            .status();
    }
}

#[tokio::test]
async fn fail_closed_audit_refuses_and_nothing_runs() {
    // The server opens its log at start-up (an unwritable one is fatal then, see
    // startup::terminal_with_a_folder_at_the_audit_log_path_is_fatal): the log becomes
    // unwritable while it runs.
    let f = Fixture::new();
    let s = f.connect().await;
    let immutable = make_log_unwritable(&f);
    let e = run(&s, json!({"command": "sh -c \"echo ran > ran.txt\""})).await;
    undo_unwritable(immutable);
    assert_eq!(code(&e), "AUDIT_UNAVAILABLE", "{e}");
    assert_eq!(e["ok"], false);
    assert!(
        !f.jail().join("ran.txt").exists(),
        "the command ran without its audit record"
    );
}

#[tokio::test]
async fn fail_open_audit_runs_and_says_so() {
    let f = Fixture::with_mode("open");
    let immutable = make_log_unwritable(&f);
    let s = f.connect().await;
    let e = run(&s, json!({"command": "sh -c \"echo ran > ran.txt\""})).await;
    undo_unwritable(immutable);
    assert_eq!(code(&e), "OK", "{e}");
    assert!(
        e["detail"]["audit"]
            .as_str()
            .unwrap()
            .starts_with("unavailable: "),
        "{e}"
    );
    assert!(f.jail().join("ran.txt").exists());
}

#[tokio::test]
async fn program_path_forms_must_be_the_program_on_path() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = run(&s, json!({"command": "/bin/echo hi"})).await;
    assert_eq!(code(&e), "OK", "{e}");
    let e = run(&s, json!({"command": "/bin/rm -rf /"})).await;
    assert_eq!(e["reason"], "'rm' is on the denylist");
    let fake = f.jail().join("echo");
    std::fs::write(&fake, "#!/bin/sh\necho pwned\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = run(&s, json!({"command": "./echo hi"})).await;
    assert_eq!(code(&e), "POLICY_DENIED", "{e}");
}

#[tokio::test]
async fn git_option_escapes_are_denied() {
    let f = Fixture::new();
    let s = f.connect().await;
    for command in [
        "git -c core.pager=sh log",
        "git log --output=x",
        "git log --outp=x",
        "git config Core.fsmonitor x",
    ] {
        let e = run(&s, json!({ "command": command })).await;
        assert_eq!(code(&e), "POLICY_DENIED", "{command}: {e}");
        assert_eq!(e["reason"], "git escape");
    }
}

#[tokio::test]
async fn explain_runs_nothing_and_names_the_decision() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = client::call(
        &s,
        "explain_command",
        json!({"command": "sh -c \"echo ran > ran.txt\""}),
    )
    .await
    .unwrap();
    assert_eq!(code(&e), "OK");
    let d = &e["detail"];
    assert_eq!(d["decision"], "allow");
    assert_eq!(d["argv"], json!(["sh", "-c", "echo ran > ran.txt"]));
    assert!(d.get("stdout").is_none() && d.get("exit_code").is_none() && d.get("stderr").is_none());
    assert_eq!(d["canonical_hash"].as_str().unwrap().len(), 64);
    assert!(!f.jail().join("ran.txt").exists());
    let e = client::call(&s, "explain_command", json!({"command": "rm -rf /"}))
        .await
        .unwrap();
    assert_eq!(code(&e), "POLICY_DENIED");
    assert_eq!(e["detail"]["decision"], "deny");
    assert_eq!(e["detail"]["decided_by"], "denylist");
    // The stage that refused is named: containment, not the allowlist that let `cat` through.
    let e = client::call(&s, "explain_command", json!({"command": "cat /etc/passwd"}))
        .await
        .unwrap();
    assert_eq!(code(&e), "PATH_ESCAPE");
    assert_eq!(e["detail"]["decided_by"], "jail");
    assert_eq!(e["detail"]["argv"], json!(["cat", "/etc/passwd"]));
    let e = client::call(&s, "explain_command", json!({"command": "echo a; rm x"}))
        .await
        .unwrap();
    assert_eq!(e["detail"]["decided_by"], "parser");
    assert!(e["detail"].get("argv").is_none());
}

// ---- "No shell is ever invoked", observed in /proc while the command runs. ----

/// Programs that are shells: none may stand between the server and a command.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"];

fn proc_argv(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

fn proc_exe(pid: i32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default()
}

fn proc_parent(pid: i32) -> Option<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|p| p.trim().parse().ok())
}

fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

fn is_shell(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| SHELLS.contains(&n))
}

/// The canonical path of `program` on the policy's default PATH.
fn on_default_path(program: &str) -> PathBuf {
    ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| panic!("{program} is not on the default PATH"))
}

/// One process of a chain from a command up to the server.
#[derive(Debug)]
struct Link {
    pid: i32,
    exe: PathBuf,
    argv: Vec<String>,
}

/// Run `command` (its `{}` replaced by a unique `sleep` argument of about 2 s), and while
/// it runs, find the `sleep` by its marker and walk its parents up to the server. Returns
/// the chain, the sleep first and the server last, and the call's envelope.
async fn chain_while_running(f: &Fixture, s: &Session, command: &str) -> (Vec<Link>, Value) {
    let me = i32::try_from(std::process::id()).unwrap();
    let policy = f.policy.to_string_lossy().into_owned();
    let servers: Vec<i32> = all_pids()
        .into_iter()
        .filter(|p| proc_parent(*p) == Some(me))
        .filter(|p| {
            let argv = proc_argv(*p);
            argv.get(1).is_some_and(|a| a == "terminal") && argv.contains(&policy)
        })
        .collect();
    assert_eq!(
        servers.len(),
        1,
        "the server started by this test: {servers:?}"
    );
    let server = servers[0];
    assert_eq!(
        proc_exe(server),
        Path::new(BIN).canonicalize().unwrap(),
        "the server"
    );
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let marker = format!("2.{}{nanos}", std::process::id());
    let command = command.replace("{}", &marker);
    let watch = async {
        let started = std::time::Instant::now();
        let sleep = loop {
            let found: Vec<i32> = all_pids()
                .into_iter()
                .filter(|p| {
                    let argv = proc_argv(*p);
                    argv.first().is_some_and(|a| a == "sleep") && argv.contains(&marker)
                })
                .collect();
            if found.len() == 1 {
                break found[0];
            }
            assert!(
                started.elapsed() < std::time::Duration::from_millis(1800),
                "the command never showed up in /proc: {found:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        };
        let mut chain = Vec::new();
        let mut pid = sleep;
        for _ in 0..8 {
            chain.push(Link {
                pid,
                exe: proc_exe(pid),
                argv: proc_argv(pid),
            });
            if pid == server {
                return chain;
            }
            pid = proc_parent(pid).unwrap_or_else(|| panic!("no parent of {pid}: {chain:?}"));
        }
        panic!("the chain from the command does not reach the server {server}: {chain:?}");
    };
    let (chain, e) = tokio::join!(watch, run(s, json!({ "command": command })));
    let shown: Vec<String> = chain
        .iter()
        .map(|l| format!("{} {}", l.pid, l.exe.display()))
        .collect();
    eprintln!("{command}: {}", shown.join(" <- "));
    (chain, e)
}

async fn no_shell_between_the_server_and_the_command(f: &Fixture, sandboxed: bool) {
    let s = f.connect().await;
    let bin = Path::new(BIN).canonicalize().unwrap();
    let launchers = [bin.clone(), bin.with_file_name("safe-mcp-sandbox-exec")];
    let sleep = on_default_path("sleep");

    // Twice: with the sandbox, the first call starts its launcher then (it clones the
    // command), the next one may use a launcher started ahead (which becomes the command).
    for _ in 0..2 {
        let (chain, e) = chain_while_running(f, &s, "sleep {}").await;
        assert_eq!(code(&e), "OK", "{e}");
        assert_eq!(e["detail"]["exit_code"], 0, "{e}");
        let report = crate::recorded::recorded_report(&f.audit_log(), &e).unwrap();
        let mechanisms = &report["mechanisms"];
        assert_eq!(mechanisms["launcher"], sandboxed, "{e}");
        // The process running the command is the program itself, not a shell running it.
        assert_eq!(chain[0].exe, sleep, "{chain:?}");
        assert_eq!(chain[0].argv[0], "sleep", "{chain:?}");
        // Between it and the server: nothing, or only the sandbox launcher.
        let between = &chain[1..chain.len() - 1];
        if !sandboxed {
            assert!(
                between.is_empty(),
                "the server's own child is the command: {chain:?}"
            );
        } else if mechanisms["launcher_started_ahead"] == false {
            assert!(
                !between.is_empty(),
                "a launcher started for the call stays: {chain:?}"
            );
        }
        for link in between {
            assert!(
                launchers.contains(&link.exe),
                "{} ({:?}) is neither the command nor the launcher: {chain:?}",
                link.exe.display(),
                link.argv
            );
        }
        for link in &chain {
            assert!(!is_shell(&link.exe), "a shell in the chain: {chain:?}");
            assert!(
                !link.argv.first().is_some_and(|a| is_shell(Path::new(a))),
                "a shell in the chain: {chain:?}"
            );
        }
    }

    // Control: the same method sees a shell when the model asks for one by name (`sh` is
    // allow-listed in this test policy), so the assertions above are not vacuous.
    let (chain, e) = chain_while_running(f, &s, "sh -c \"sleep {}; true\"").await;
    assert_eq!(code(&e), "OK", "{e}");
    assert_eq!(chain[0].exe, sleep, "{chain:?}");
    assert!(is_shell(&chain[1].exe), "the shell was not seen: {chain:?}");
    s.cancel().await.ok();
}

#[tokio::test]
async fn no_shell_is_ever_invoked_sandbox_off() {
    let f = Fixture::with_policy("closed", "\n[terminal.sandbox]\nenabled = false\n");
    no_shell_between_the_server_and_the_command(&f, false).await;
}

#[tokio::test]
async fn no_shell_is_ever_invoked_sandbox_on() {
    let f = Fixture::new();
    no_shell_between_the_server_and_the_command(&f, true).await;
}

/// The benchmark's wiring works end to end, repeats included: every figure of every run is
/// a measured, positive duration or rate (their values are not asserted: machines are noisy).
#[tokio::test(flavor = "multi_thread")]
async fn the_benchmark_measures_every_figure_in_each_run() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp"));
    let runs = crate::bench::run(&bin, 3, 2).await.unwrap();
    assert_eq!(runs.len(), 2);
    for f in &runs {
        assert_eq!(f.iterations, 3);
        let figures = [
            f.floor,
            f.bare,
            f.run_lean,
            f.run_rmcp,
            f.run_in_process,
            f.explain_between.0,
            f.explain_between.1,
            f.explain_between.2,
            f.explain_b2b,
            f.unknown_b2b,
            f.burst.0,
            f.burst.1,
            f.explain_paced,
            f.unknown_paced,
            f.unknown_between.0,
            f.unknown_between.1,
            f.run_sandboxed.0,
            f.run_sandboxed.1,
            f.run_off_phase2,
            f.explain_sandboxed,
            f.explain_core,
            f.audit.0,
            f.audit.1,
            f.redaction.0,
            f.redaction.1,
        ];
        assert!(figures.iter().all(|v| v.is_finite() && *v > 0.0), "{f:?}");
        // A round trip that spawns a process cannot beat the bare spawn it contains.
        assert!(f.run_in_process > f.bare * 0.5, "{f:?}");
    }
}

/// Each tool's published `outputSchema`, compiled; the detail schema must be closed.
fn output_validators(tools: &Value) -> std::collections::HashMap<String, jsonschema::Validator> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let schema = &t["outputSchema"];
            assert!(
                !schema.to_string().contains("\"format\""),
                "format keys in {schema}"
            );
            let name = t["name"].as_str().unwrap().to_string();
            (name, jsonschema::validator_for(schema).unwrap())
        })
        .collect()
}

fn assert_fits(validators: &std::collections::HashMap<String, jsonschema::Validator>, e: &Value) {
    let tool = e["action"].as_str().unwrap();
    let errors: Vec<String> = validators[tool]
        .iter_errors(e)
        .map(|err| format!("{err} at {}", err.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{tool}: {errors:?}\n{e}");
}

#[tokio::test]
async fn every_envelope_fits_its_tools_output_schema_exactly() {
    let f = Fixture::new();
    let s = f.connect().await;
    let tools = serde_json::to_value(s.peer().list_all_tools().await.unwrap()).unwrap();
    let validators = output_validators(&tools);
    let runs = [
        json!({"command": "cat notes.txt"}),
        json!({"command": "false"}),
        json!({"command": "sh -c \"kill -9 $$\""}),
        json!({"command": "sleep 5", "timeout_seconds": 1}),
        json!({"command": "seq 1 100000"}),
        json!({"command": "yes"}),
        json!({"command": "rm -rf /"}),
        json!({"command": "ls | cat"}),
        json!({"command": "cat ../secret.txt"}),
        json!({"command": "ls", "cwd": "../"}),
        json!({"command": "git -c core.pager=x log"}),
        json!({"command": "nosuchprogram"}),
        json!({"command": 5}),
        json!({"cwd": "sub"}),
        json!({"command": "ls", "bogus": 1}),
        json!({"command": "ls", "timeout_seconds": 0}),
    ];
    let mut codes = std::collections::BTreeSet::new();
    for args in runs {
        let e = run(&s, args).await;
        assert_fits(&validators, &e);
        codes.insert(code(&e).to_string());
    }
    for want in [
        "OK",
        "TIMEOUT",
        "OUTPUT_TRUNCATED",
        "POLICY_DENIED",
        "PATH_ESCAPE",
        "INVALID_REQUEST",
    ] {
        assert!(
            codes.contains(want),
            "no {want} envelope was checked: {codes:?}"
        );
    }
    for args in [
        json!({"command": "ls -la", "cwd": "sub"}),
        json!({"command": "rm -rf /"}),
        json!({"command": "ls | cat"}),
        json!({"command": "cat ../secret.txt"}),
        json!({"command": "nosuchprogram"}),
        json!({"command": "ls", "timeout_seconds": 1}),
    ] {
        let e = client::call(&s, "explain_command", args).await.unwrap();
        assert_fits(&validators, &e);
    }
    // The check can fail: a field the schema does not name is refused, at the top level
    // and inside detail.
    let mut e = run(&s, json!({"command": "cat notes.txt"})).await;
    e["detail"]["surprise"] = json!(1);
    assert!(!validators["run_command"].is_valid(&e));
    let mut e = run(&s, json!({"command": "cat notes.txt"})).await;
    e["detail"]["sandbox"] = json!({"profile": "standard"});
    assert!(
        !validators["run_command"].is_valid(&e),
        "the summary is a string"
    );

    // A downgraded call carries the whole report (here the sandbox disabled by policy).
    // run_command's schema keeps it an open object; field by field it is the report
    // explain_command's schema describes, which is checked here.
    let off = Fixture::with_policy("closed", "\n[terminal.sandbox]\nenabled = false\n");
    let s = off.connect().await;
    let e = run(&s, json!({"command": "cat notes.txt"})).await;
    assert!(e["detail"]["sandbox_report"]["limits"].is_object(), "{e}");
    assert_fits(&validators, &e);
    let mut report = e["detail"]["sandbox_report"].clone();
    assert_fits(&validators, &as_explained(&report));
    report["limits"]["surprise"] = json!(1);
    assert!(!validators["explain_command"].is_valid(&as_explained(&report)));
}

/// An explain_command envelope whose `detail.sandbox` is `report` (as explain reports it:
/// with the source of its mechanisms), to check a run's report against explain's schema.
fn as_explained(report: &Value) -> Value {
    let mut sandbox = report.clone();
    sandbox["source"] = json!("start-up probe");
    json!({"action": "explain_command", "code": "OK", "ok": true, "reason": "r",
           "duration_ms": 0, "detail": {"sandbox": sandbox}})
}

/// The audit log's `run_command` outcome records.
fn run_outcomes(f: &Fixture) -> Vec<Value> {
    crate::recorded::run_outcomes(&f.audit_log()).unwrap()
}

/// `safe-mcp audit verify` on the fixture's log: its stdout, after asserting success.
fn audit_verifies(f: &Fixture) -> String {
    let out = std::process::Command::new(BIN)
        .args(["audit", "verify"])
        .arg(f.audit_log())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test]
async fn a_lean_result_has_the_summary_and_its_record_the_whole_report() {
    let f = Fixture::new();
    let s = f.connect().await;
    let e = run(&s, json!({"command": "echo hi"})).await;
    assert_eq!(code(&e), "OK", "{e}");
    let summary = e["detail"]["sandbox"].as_str().unwrap();
    assert!(summary.len() <= 200, "{} bytes: {summary}", summary.len());
    for mechanism in [
        "landlock=",
        " seccomp=",
        " ro_view=",
        " ns=",
        " uid=",
        " caps=",
        " kill=",
        " pids=",
        " memory=",
        " net=on",
    ] {
        assert!(summary.contains(mechanism), "no {mechanism} in {summary}");
    }
    // The audit record keeps the whole report (limits, every mechanism), and the result
    // carries it only when something was downgraded on this host (checked against it).
    let report = crate::recorded::recorded_report(&f.audit_log(), &e).unwrap();
    assert_eq!(report["limits"]["processes"], 128, "{report}");
    assert_eq!(report["mechanisms"]["launcher"], true, "{report}");
    assert!(report["mechanisms"]["rlimits"].is_array(), "{report}");
    let downgraded = report["downgrades"]
        .as_array()
        .is_some_and(|d| !d.is_empty());
    assert_eq!(
        e["detail"].get("sandbox_report").is_some(),
        downgraded,
        "{e}"
    );
    assert_eq!(summary.contains(" downgrades="), downgraded, "{summary}");
    if !downgraded {
        // The whole envelope stays small (its only variable part is the duration).
        let bytes = serde_json::to_vec(&e).unwrap().len();
        assert!(bytes <= 400, "{bytes} bytes: {e}");
    }
    // The record keeps the full report and the figures of the run, never the output.
    let outcome = run_outcomes(&f).pop().unwrap();
    assert_eq!(outcome["exit_code"], 0, "{outcome}");
    assert!(outcome.get("stdout").is_none(), "{outcome}");
    // explain_command gives the whole report, where it is asked for.
    let x = client::call(&s, "explain_command", json!({"command": "echo hi"}))
        .await
        .unwrap();
    assert_eq!(
        x["detail"]["sandbox"]["mechanisms"]["launcher"], true,
        "{x}"
    );
    assert_eq!(x["detail"]["sandbox"]["limits"]["processes"], 128, "{x}");
    s.cancel().await.ok();
    assert!(audit_verifies(&f).starts_with("ok: "));
}

#[tokio::test]
async fn a_downgrade_is_never_silent() {
    // The sandbox disabled by policy: the result carries the whole report, whose
    // downgrades say what is missing, and its summary counts them.
    let f = Fixture::with_policy("closed", "\n[terminal.sandbox]\nenabled = false\n");
    let s = f.connect().await;
    let e = run(&s, json!({"command": "echo hi"})).await;
    assert_eq!(code(&e), "OK", "{e}");
    let report = &e["detail"]["sandbox_report"];
    assert_eq!(report["mechanisms"]["launcher"], false, "{e}");
    assert!(
        report["downgrades"][0]
            .as_str()
            .unwrap()
            .contains("disabled by policy"),
        "{e}"
    );
    let summary = e["detail"]["sandbox"].as_str().unwrap();
    assert!(
        summary.contains(" sandbox=off ") && summary.ends_with(" downgrades=1"),
        "{summary}"
    );
    assert_eq!(
        report,
        &crate::recorded::recorded_report(&f.audit_log(), &e).unwrap()
    );
    // Namespaces turned off: no read-only view (seccomp stands in, coarser), a downgrade.
    let f2 = Fixture::with_policy("closed", "\n[terminal.sandbox]\nnamespaces = false\n");
    let s2 = f2.connect().await;
    let e = run(&s2, json!({"command": "echo hi"})).await;
    let report = &e["detail"]["sandbox_report"];
    assert!(
        report["downgrades"].as_array().is_some_and(|d| d
            .iter()
            .any(|l| l.as_str().unwrap().contains("no read-only view"))),
        "{e}"
    );
    assert!(
        e["detail"]["sandbox"]
            .as_str()
            .unwrap()
            .contains(" ro_view=off "),
        "{e}"
    );
    crate::recorded::recorded_report(&f2.audit_log(), &e).unwrap();
    s.cancel().await.ok();
    s2.cancel().await.ok();
    assert!(audit_verifies(&f).starts_with("ok: "));
    assert!(audit_verifies(&f2).starts_with("ok: "));
}

#[tokio::test]
async fn envelopes_with_an_audit_note_fit_the_output_schema() {
    let f = Fixture::with_mode("open");
    let immutable = make_log_unwritable(&f);
    let s = f.connect().await;
    let tools = serde_json::to_value(s.peer().list_all_tools().await.unwrap()).unwrap();
    let validators = output_validators(&tools);
    let ran = run(&s, json!({"command": "cat notes.txt"})).await;
    let explained = client::call(&s, "explain_command", json!({"command": "ls"}))
        .await
        .unwrap();
    undo_unwritable(immutable);
    for e in [ran, explained] {
        assert!(
            e["detail"]["audit"]
                .as_str()
                .unwrap()
                .starts_with("unavailable: "),
            "{e}"
        );
        assert_fits(&validators, &e);
    }
}
