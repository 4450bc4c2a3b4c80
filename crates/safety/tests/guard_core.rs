//! The guard's safety core, called as the wiring crate calls it: real policies in
//! temporary folders, real processes through the crate's own launcher, the real audit log and
//! replay state file. Each test asserts on the code, the reason's key words and the effect.
//!
//! Run: `cargo test -p safety --test all -- guard_core::`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use safety::config::{self, Server};
use safety::guard::GuardCore;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::sandbox_common::{Marker, give_to_nobody};

/// The operator entry for `/bin/echo` every policy here has.
const ECHO: &str = r#"
[[guard.tools]]
name = "echo"
executable = "/bin/echo"
args_patterns = ["[^-;|&$`<>]{1,200}"]
examples_allow = [["hello"]]
examples_deny = [["-e"], [";id"]]
"#;

/// `/bin/sh -c SCRIPT`: a shell on purpose (the attacks need one).
const SH: &str = r#"
[[guard.tools]]
name = "sh"
executable = "/bin/sh"
args_patterns = ["-c", "[ -~]{1,400}"]
examples_allow = [["-c", "true"]]
examples_deny = [["-c", "\n"]]
"#;

/// `python3 -c SCRIPT`.
const PYTHON: &str = r#"
[[guard.tools]]
name = "python"
executable = "/usr/bin/python3"
args_patterns = ["-c", "[ -~\n]{1,2000}"]
examples_allow = [["-c", "print(1)"]]
examples_deny = [["-c", "é"]]
"#;

/// `/usr/bin/env` with no arguments; a caller may set GREETING and COLUMNS.
const ENV: &str = r#"
[[guard.tools]]
name = "env"
executable = "/usr/bin/env"
args_patterns = ["-0"]
env_allow = ["GREETING", "COLUMNS"]
examples_deny = [["sh"]]
"#;

/// A guard core in a temporary folder: `jail/`, `state/audit.jsonl`, `state/replay.json`.
pub struct Guard {
    dir: tempfile::TempDir,
    core: GuardCore,
}

fn policy_text(guard: &str, tools: &str) -> String {
    format!(
        "audit_log = \"state/audit.jsonl\"\n\
         [terminal]\njail_root = \"jail\"\n\
         [terminal.limits]\ntimeout_seconds = 30\nmax_output_bytes = 65536\n\
         [guard]\nreplay_state = \"state/replay.json\"\n{guard}\n{tools}"
    )
}

fn start_in(dir: &Path, guard: &str, tools: &str) -> GuardCore {
    let path = dir.join("policy.toml");
    std::fs::write(&path, policy_text(guard, tools)).unwrap();
    let config = config::load(&path, Server::Guard, &[]).unwrap();
    let launcher = PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp-sandbox-exec"));
    GuardCore::start_with_launcher(config, launcher).unwrap()
}

impl Guard {
    /// `guard`: lines of the `[guard]` table (besides replay_state); `tools`: entries.
    pub fn new(guard: &str, tools: &str) -> Guard {
        let dir = tempfile::Builder::new()
            .prefix("safe-mcp-guard-test-")
            .tempdir()
            .unwrap();
        std::fs::create_dir_all(dir.path().join("jail")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        // A root server runs commands as the jail's owner.
        give_to_nobody(&dir.path().join("jail"));
        let core = start_in(dir.path(), guard, tools);
        Guard { dir, core }
    }

    fn all() -> Guard {
        Guard::new("", &[ECHO, SH, PYTHON, ENV].concat())
    }

    fn jail(&self) -> PathBuf {
        self.dir.path().join("jail")
    }

    pub fn audit_log(&self) -> PathBuf {
        self.dir.path().join("state/audit.jsonl")
    }

    /// Stop this core and start another on the same folder (same replay state, same log).
    fn restart(self, guard: &str, tools: &str) -> Guard {
        let Guard { dir, core } = self;
        drop(core);
        let core = start_in(dir.path(), guard, tools);
        Guard { dir, core }
    }

    pub async fn exec(&self, args: Value) -> Value {
        self.core
            .guard_exec(args.as_object(), &CancellationToken::new())
            .await
            .to_value()
    }

    async fn spawn(&self, args: Value) -> Value {
        self.core
            .guard_spawn(args.as_object(), &CancellationToken::new())
            .await
            .to_value()
    }

    fn register(&self, args: Value) -> Value {
        self.core.register_allowlist(args.as_object()).to_value()
    }

    async fn replay_check(&self, args: Value) -> Value {
        self.core.replay_check(args.as_object()).await.to_value()
    }

    fn status(&self, args: Value) -> Value {
        self.core.sandbox_status(args.as_object()).to_value()
    }

    fn tier(&self, tool: &str) -> Value {
        self.core
            .trust_tier(json!({ "toolName": tool }).as_object())
            .to_value()
    }

    /// The audit log's records, in order.
    fn records(&self) -> Vec<Map<String, Value>> {
        std::fs::read_to_string(self.audit_log())
            .unwrap()
            .lines()
            .map(|l| match serde_json::from_str(l) {
                Ok(Value::Object(m)) => m,
                other => panic!("not a record: {other:?}"),
            })
            .collect()
    }
}

fn code(envelope: &Value) -> &str {
    envelope["code"].as_str().unwrap_or_default()
}

fn reason(envelope: &Value) -> &str {
    envelope["reason"].as_str().unwrap_or_default()
}

/// Assert the envelope's code and that its reason holds every key word.
#[track_caller]
fn assert_refused(envelope: &Value, want: &str, words: &[&str]) {
    assert_eq!(code(envelope), want, "{envelope:#}");
    assert_eq!(envelope["ok"], false, "{envelope:#}");
    for w in words {
        assert!(
            reason(envelope).contains(w),
            "reason lacks '{w}': {envelope:#}"
        );
    }
}

/// Assert that nothing ran: no field of a run in the detail.
#[track_caller]
fn assert_nothing_ran(envelope: &Value) {
    for key in ["exitCode", "stdout", "pid", "durationMs", "stdoutHash"] {
        assert!(
            envelope["detail"].get(key).is_none(),
            "'{key}' in a refusal: {envelope:#}"
        );
    }
}

fn echo(args: &[&str]) -> Value {
    json!({ "toolName": "echo", "command": "/bin/echo", "args": args })
}

fn sh(script: &str) -> Value {
    json!({ "toolName": "sh", "command": "/bin/sh", "args": ["-c", script] })
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Wait up to `limit` for `marker`'s processes to be gone; the ones still there.
fn survivors_after(marker: &Marker, limit: Duration) -> Vec<String> {
    let end = Instant::now() + limit;
    loop {
        let left = marker.survivors();
        if left.is_empty() || Instant::now() >= end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

// 1. ---------------------------------------------------------------------------------------

#[tokio::test]
async fn register_allowlist_refuses_every_self_grant_and_accepts_only_narrowing() {
    let g = Guard::new("", ECHO);

    // An executable the operator did not list, /bin/sh included.
    let r = g.register(json!({
        "toolName": "myshell", "executable": "/bin/sh", "argsPatterns": ["-c", ".*"]
    }));
    assert_refused(&r, "POLICY_DENIED", &["/bin/sh", "not the executable"]);
    assert_eq!(code(&g.tier("myshell")), "OK");
    assert_eq!(
        g.tier("myshell")["detail"]["tier"],
        "LOW",
        "never registered"
    );
    let run = g
        .exec(json!({ "toolName": "myshell", "command": "/bin/sh", "args": ["-c", "id"] }))
        .await;
    assert_refused(&run, "INVALID_REQUEST", &["myshell"]);

    // A listed executable through a symlink, and through a `..` spelling.
    let link = g.dir.path().join("my-echo");
    std::os::unix::fs::symlink("/bin/echo", &link).unwrap();
    let r = g.register(json!({
        "toolName": "echo-link", "executable": link.to_str().unwrap(),
        "argsPatterns": ["[a-z]{1,10}"]
    }));
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["registered"], true);
    assert_eq!(r["detail"]["operatorEntries"], json!(["echo"]));
    let real_echo = std::fs::canonicalize("/bin/echo").unwrap();
    assert_eq!(r["detail"]["executable"], real_echo.to_str().unwrap());
    let r = g.register(json!({
        "toolName": "echo-dots", "executable": "/usr/bin/../bin/echo",
        "argsPatterns": ["[a-z]{1,10}"], "sandboxProfile": "strict"
    }));
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["sandboxProfile"], "strict");
    // The granted entry really runs.
    let run = g
        .exec(json!({ "toolName": "echo-dots", "command": "/bin/echo", "args": ["granted"] }))
        .await;
    assert_eq!(code(&run), "OK", "{run:#}");
    assert_eq!(run["detail"]["stdout"], "granted\n");
    assert_eq!(run["detail"]["profile"], "strict");

    // Replacing an operator entry's name (even with narrower patterns).
    let r = g.register(json!({
        "toolName": "echo", "executable": "/bin/echo", "argsPatterns": ["x"]
    }));
    assert_refused(&r, "POLICY_DENIED", &["'echo'", "operator entry"]);
    // The operator entry is unchanged: it still accepts what it accepted.
    let run = g.exec(echo(&["still"])).await;
    assert_eq!(run["detail"]["stdout"], "still\n", "{run:#}");

    // A looser profile than the operator's (standard).
    let r = g.register(json!({
        "toolName": "echo-loose", "executable": "/bin/echo",
        "argsPatterns": ["[a-z]{1,10}"], "sandboxProfile": "permissive"
    }));
    assert_refused(&r, "POLICY_DENIED", &["permissive", "looser", "standard"]);
    let run = g
        .exec(json!({ "toolName": "echo-loose", "command": "/bin/echo", "args": ["x"] }))
        .await;
    assert_refused(&run, "INVALID_REQUEST", &["echo-loose"]);
}

// 2. ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_narrowed_entry_refuses_what_either_layer_refuses_and_runs_what_both_accept() {
    let g = Guard::new("", ECHO);
    // Run-time: lower-case letters and '-'; operator: anything but '-', ';', ...
    let r = g.register(json!({
        "toolName": "narrow", "executable": "/bin/echo", "argsPatterns": ["[a-z-]{1,20}"]
    }));
    assert_eq!(code(&r), "OK", "{r:#}");
    let call = |arg: &str| json!({ "toolName": "narrow", "command": "echo", "args": [arg] });

    // The run-time patterns accept "-n", the operator's refuse it.
    let r = g.exec(call("-n")).await;
    assert_refused(&r, "POLICY_DENIED", &["-n", "operator entry 'echo'"]);
    assert_nothing_ran(&r);
    // The operator's accept "HELLO", the run-time ones refuse it.
    let r = g.exec(call("HELLO")).await;
    assert_refused(&r, "POLICY_DENIED", &["HELLO", "run-time entry 'narrow'"]);
    assert_nothing_ran(&r);
    // Both accept "hello".
    let r = g.exec(call("hello")).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["stdout"], "hello\n");
    assert_eq!(r["detail"]["operatorEntry"], "echo");
    assert!(reason(&r).contains("within operator entry 'echo'"), "{r:#}");
}

// 3. ---------------------------------------------------------------------------------------

#[tokio::test]
async fn caller_env_reaches_the_command_only_for_listed_names() {
    let g = Guard::new("", ENV);
    let call = |env: Value| json!({ "toolName": "env", "command": "/usr/bin/env", "args": ["-0"], "env": env });
    for (name, value) in [
        ("PATH", "/tmp/evil"),
        ("LD_PRELOAD", "/tmp/evil.so"),
        ("UNLISTED_NAME", "marker-unlisted"),
    ] {
        let r = g.exec(call(json!({ name: value, "GREETING": "hi" }))).await;
        assert_refused(&r, "POLICY_DENIED", &[name, "env_allow", "nothing ran"]);
        assert_nothing_ran(&r);
    }
    // A listed name reaches it; the refused ones are not there either.
    let r = g
        .exec(call(
            json!({ "GREETING": "hello-from-caller", "COLUMNS": "77" }),
        ))
        .await;
    assert_eq!(code(&r), "OK", "{r:#}");
    let out = r["detail"]["stdout"].as_str().unwrap();
    let vars: Vec<&str> = out.split('\0').filter(|v| !v.is_empty()).collect();
    assert!(vars.contains(&"GREETING=hello-from-caller"), "{vars:?}");
    assert!(vars.contains(&"COLUMNS=77"), "{vars:?}");
    assert!(
        !vars.iter().any(|v| v.starts_with("LD_PRELOAD=")),
        "{vars:?}"
    );
    assert!(
        !vars.iter().any(|v| v.contains("marker-unlisted")),
        "{vars:?}"
    );
    assert!(!vars.iter().any(|v| v.contains("/tmp/evil")), "{vars:?}");
}

/// `PAGER=cat`, `TERM=dumb`, `NO_COLOR=1` are hardening the terminal gives every command
/// (a program that pages runs `$PAGER` through a shell). An `env_allow` naming one would let
/// a caller set it back to a program of its choice, so the loader refuses it, naming the
/// entry, whatever its case.
#[test]
fn env_allow_cannot_name_a_hardening_variable_of_the_base_environment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("jail")).unwrap();
    for name in ["PAGER", "pager", "TERM", "NO_COLOR", "GIT_PAGER"] {
        let tool = format!(
            "[[guard.tools]]\nname = \"env\"\nexecutable = \"/usr/bin/env\"\n\
             env_allow = [\"COLUMNS\", \"{name}\"]\n"
        );
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, policy_text("", &tool)).unwrap();
        let e = config::load(&path, Server::Guard, &[])
            .map(|_| ())
            .expect_err(name)
            .to_string();
        assert!(e.contains("guard.tools[0] 'env': env_allow"), "{name}: {e}");
        assert!(e.contains(name), "{name}: {e}");
    }
}

// 4. ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_backgrounded_sleep_does_not_survive_its_call() {
    let g = Guard::new("", SH);
    let marker = Marker::new();
    // The script ends with the sleeper alive (it says so), leaving it behind.
    let script = format!(
        "sleep 987654.{} & sleep 0.3; kill -0 $! && echo alive",
        marker.0
    );
    let r = g.exec(sh(&script)).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["stdout"], "alive\n", "{r:#}");
    let left = survivors_after(&marker, Duration::from_secs(5));
    assert!(left.is_empty(), "survivors of the call: {left:?}");
}

// 5. ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_child_that_ignores_sigterm_is_killed_at_its_timeout() {
    let g = Guard::new("", SH);
    let marker = Marker::new();
    let script = format!("trap '' TERM; sleep 100.{}; echo done", marker.0);
    let mut call = sh(&script);
    call["timeoutMs"] = json!(500);
    let started = Instant::now();
    // While the call runs, the sleeper is seen (so "no survivor" below means killed).
    let watch = async {
        for _ in 0..60 {
            if !marker.pids().is_empty() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    };
    let (r, seen) = tokio::join!(g.exec(call), watch);
    let took = started.elapsed();
    assert!(seen, "the sleeper was never seen running: {r:#}");
    assert_refused(
        &r,
        "TIMEOUT",
        &["500 ms timeout", "whole process tree was killed"],
    );
    assert!(took < Duration::from_secs(5), "took {took:?}: {r:#}");
    assert!(took >= Duration::from_millis(450), "took {took:?}: {r:#}");
    assert_eq!(r["detail"]["timeoutMs"], 500, "{r:#}");
    assert_eq!(r["detail"]["killed"], true, "{r:#}");
    assert_ne!(r["detail"]["stdout"], "done\n");
    let left = survivors_after(&marker, Duration::from_secs(5));
    assert!(left.is_empty(), "survivors of the call: {left:?}");
}

// 6. ---------------------------------------------------------------------------------------

/// Opens the jail's root until an error; prints the count and the errno's name.
const OPEN_UNTIL_FULL: &str = "import os, errno\n\
n = 0\n\
err = 'none'\n\
while n < 100:\n    \
try:\n        os.open('.', os.O_RDONLY)\n    \
except OSError as e:\n        err = errno.errorcode.get(e.errno, str(e.errno))\n        break\n    \
n += 1\n\
print(n, err)\n";

fn python_spawn(script: &str, fds: Option<u64>) -> Value {
    let mut call =
        json!({ "toolName": "python", "file": "/usr/bin/python3", "args": ["-c", script] });
    if let Some(fds) = fds {
        call["fdBudget"] = json!(fds);
    }
    call
}

/// The count of `OPEN_UNTIL_FULL`'s output with this hash, if any count up to 100 gives it.
fn which_count(hash: &str) -> Option<String> {
    (0..=100)
        .flat_map(|n| {
            ["EMFILE", "none", "ENFILE", "EACCES"]
                .into_iter()
                .map(move |e| format!("{n} {e}\n"))
        })
        .find(|text| sha256_hex(text.as_bytes()) == hash)
}

/// The descriptors above 2 a command finds open when it starts, seen by a guarded python.
async fn inherited_fds(g: &Guard) -> Vec<u32> {
    let r = g
        .exec(json!({ "toolName": "python", "command": "/usr/bin/python3", "args": ["-c",
            "import os\nfor f in range(3, 1024):\n    try:\n        os.fstat(f); print(f)\n    except OSError:\n        pass"] }))
        .await;
    assert_eq!(code(&r), "OK", "{r:#}");
    let out = r["detail"]["stdout"].as_str().unwrap();
    out.lines().map(|l| l.parse().unwrap()).collect()
}

#[tokio::test]
async fn fd_budget_32_stops_the_33rd_descriptor_and_only_a_hash_comes_back() {
    let g = Guard::new("", PYTHON);
    // With only 0-2 open, 32 descriptors leave 29 opens. A descriptor the server itself
    // inherited without close-on-exec also reaches the command today (see
    // `no_descriptor_beyond_stdio_reaches_the_command`) and takes one of the 32 slots when
    // its number is below 32.
    let inherited = inherited_fds(&g).await;
    let below = inherited.iter().filter(|&&fd| fd < 32).count();
    if !inherited.is_empty() {
        eprintln!(
            "\n!!!!!!!! the command inherits descriptors {inherited:?} from the test process !!!!!!!!\n"
        );
    }
    let r = g.spawn(python_spawn(OPEN_UNTIL_FULL, Some(32))).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    let d = &r["detail"];
    assert_eq!(d["fdBudget"], 32, "{r:#}");
    assert_eq!(d["exitCode"], 0, "{r:#}");
    let expected = format!("{} EMFILE\n", 29 - below);
    let expected = expected.as_str();
    let got = d["stdoutHash"].as_str().unwrap();
    assert_eq!(
        got,
        sha256_hex(expected.as_bytes()),
        "stdout was {:?}, not {expected:?}: {r:#}",
        which_count(got)
    );
    assert_eq!(d["stdoutBytes"], expected.len());
    assert_eq!(d["stderrHash"], sha256_hex(b""));
    // No output text anywhere in the answer.
    assert!(
        d.get("stdout").is_none() && d.get("stderr").is_none(),
        "{r:#}"
    );
    assert!(!r.to_string().contains(expected.trim_end()), "{r:#}");

    // Without fdBudget, the profile's limit applies (larger: more than 29 opens).
    let r = g.spawn(python_spawn(OPEN_UNTIL_FULL, None)).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    let profile_fds = g.status(json!({ "toolName": "python" }))["detail"]["fdBudget"]
        .as_u64()
        .unwrap();
    assert_eq!(r["detail"]["fdBudget"], profile_fds);
    let taken = inherited
        .iter()
        .filter(|&&fd| u64::from(fd) < profile_fds)
        .count() as u64;
    let expected = if profile_fds - taken >= 103 {
        "100 none\n".to_string()
    } else {
        format!("{} EMFILE\n", profile_fds - 3 - taken)
    };
    assert_eq!(
        r["detail"]["stdoutHash"],
        sha256_hex(expected.as_bytes()),
        "{:?}",
        which_count(r["detail"]["stdoutHash"].as_str().unwrap())
    );

    // Above the profile: refused, nothing ran.
    let r = g
        .spawn(python_spawn(OPEN_UNTIL_FULL, Some(profile_fds + 1)))
        .await;
    assert_refused(
        &r,
        "INVALID_REQUEST",
        &["fdBudget", &(profile_fds + 1).to_string()],
    );
    assert_nothing_ran(&r);
}

#[tokio::test]
async fn tiny_fd_budgets_get_a_clear_answer_and_never_hang() {
    let g = Guard::new("", PYTHON);
    for fds in [1u64, 3, 4, 8] {
        let started = Instant::now();
        let r = g.spawn(python_spawn("print('tiny')", Some(fds))).await;
        let took = started.elapsed();
        eprintln!(
            "fdBudget {fds}: {} in {took:?}: {} (exitCode {}, stderrBytes {})",
            code(&r),
            reason(&r),
            r["detail"]["exitCode"],
            r["detail"]["stderrBytes"]
        );
        assert!(
            took < Duration::from_secs(20),
            "fdBudget {fds} took {took:?}"
        );
        assert!(!reason(&r).is_empty(), "{r:#}");
        // The launcher starts under any budget; the program itself may not (the dynamic
        // loader cannot open python's libraries under 1 or 3: exit 127; python's start-up
        // fails under 4): its failure is the command's exit status, never a hang.
        assert_eq!(code(&r), "OK", "fdBudget {fds}: {r:#}");
        assert_eq!(r["detail"]["fdBudget"], fds);
        let printed = r["detail"]["stdoutHash"] == sha256_hex(b"tiny\n");
        if fds >= 8 {
            assert!(printed, "fdBudget {fds}: {r:#}");
            assert_eq!(r["detail"]["exitCode"], 0, "{r:#}");
        } else {
            assert!(!printed, "fdBudget {fds}: python started: {r:#}");
            assert_ne!(r["detail"]["exitCode"], 0, "fdBudget {fds}: {r:#}");
            assert!(r["detail"]["stderrBytes"].as_u64().unwrap() > 0, "{r:#}");
        }
    }
}

// 7. ---------------------------------------------------------------------------------------

fn lines_of(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

#[tokio::test]
async fn a_second_call_is_a_replay_and_block_on_replay_runs_nothing() {
    let g = Guard::new("", SH);
    let log = g.jail().join("log.txt");
    let append = sh("echo ran >> log.txt");

    let first = g.exec(append.clone()).await;
    assert_eq!(code(&first), "OK", "{first:#}");
    assert_eq!(first["detail"]["isReplay"], false, "{first:#}");
    assert_eq!(lines_of(&log), 1);
    let second = g.exec(append.clone()).await;
    assert_eq!(code(&second), "OK", "{second:#}");
    assert_eq!(second["detail"]["isReplay"], true, "{second:#}");
    assert!(second["detail"]["lastSeenAtMs"].is_u64(), "{second:#}");
    assert_eq!(
        second["detail"]["canonicalHash"],
        first["detail"]["canonicalHash"]
    );
    assert_eq!(lines_of(&log), 2);

    let mut blocked = append.clone();
    blocked["blockOnReplay"] = json!(true);
    let r = g.exec(blocked).await;
    assert_refused(
        &r,
        "POLICY_DENIED",
        &["replay", "blockOnReplay", "nothing ran"],
    );
    assert_eq!(r["detail"]["isReplay"], true);
    assert_nothing_ran(&r);
    assert_eq!(lines_of(&log), 2, "a blocked replay ran");

    // blockOnReplay on a new command runs it.
    let mut fresh = sh("echo other >> log.txt");
    fresh["blockOnReplay"] = json!(true);
    let r = g.exec(fresh).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(lines_of(&log), 3);

    // After a restart, on the same replay_state file: still a replay.
    let g = g.restart("", SH);
    let r = g.exec(append.clone()).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["isReplay"], true, "forgotten at restart: {r:#}");
    assert_eq!(lines_of(&log), 4);

    // The same state under `replay = "block"`: refused.
    let g = g.restart("replay = \"block\"", SH);
    let r = g.exec(append).await;
    assert_refused(&r, "POLICY_DENIED", &["replay = \"block\"", "nothing ran"]);
    assert_eq!(lines_of(&log), 4, "a blocked replay ran");
}

#[tokio::test]
async fn replay_block_policy_refuses_the_second_call() {
    let g = Guard::new("replay = \"block\"", SH);
    let log = g.jail().join("log.txt");
    let append = sh("echo ran >> log.txt");
    let r = g.exec(append.clone()).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(lines_of(&log), 1);
    let r = g.exec(append).await;
    assert_refused(&r, "POLICY_DENIED", &["replay", "block", "nothing ran"]);
    assert_nothing_ran(&r);
    assert_eq!(lines_of(&log), 1, "a blocked replay ran");
}

#[tokio::test]
async fn a_call_older_than_the_window_is_not_a_replay() {
    let g = Guard::new("replay = \"block\"\nreplay_window_seconds = 1", SH);
    let log = g.jail().join("log.txt");
    let append = sh("echo ran >> log.txt");
    let r = g.exec(append.clone()).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    // Within the window: a replay (block: refused).
    let r = g.exec(append.clone()).await;
    assert_eq!(code(&r), "POLICY_DENIED", "{r:#}");
    assert_eq!(lines_of(&log), 1);
    // The refusal refreshed the entry's age; wait longer than the window from now.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let r = g.exec(append).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["isReplay"], false, "{r:#}");
    assert_eq!(lines_of(&log), 2);
}

#[tokio::test]
async fn replay_off_never_flags() {
    let g = Guard::new("replay = \"off\"", SH);
    let log = g.jail().join("log.txt");
    let mut append = sh("echo ran >> log.txt");
    append["blockOnReplay"] = json!(true);
    for n in 1..=3 {
        let r = g.exec(append.clone()).await;
        assert_eq!(code(&r), "OK", "{r:#}");
        assert_eq!(r["detail"]["isReplay"], false, "{r:#}");
        assert_eq!(lines_of(&log), n);
    }
    let check = g
        .replay_check(json!({ "executable": "/bin/sh", "args": ["-c", "echo ran >> log.txt"], "record": true }))
        .await;
    assert_eq!(code(&check), "OK", "{check:#}");
    assert_eq!(check["detail"]["isReplay"], false, "{check:#}");
    assert_eq!(check["detail"]["recorded"], false, "{check:#}");
    assert_eq!(check["detail"]["replayMode"], "off");
}

#[tokio::test]
async fn replay_check_only_looks_unless_asked_to_record() {
    let g = Guard::new("", SH);
    let check = |script: &str, record: bool| json!({ "executable": "/bin/sh", "args": ["-c", script], "record": record });

    // Looking does not change the window: the later run is not a replay.
    let c = g.replay_check(check("echo a", false)).await;
    assert_eq!(code(&c), "OK", "{c:#}");
    assert_eq!(c["detail"]["isReplay"], false);
    assert_eq!(c["detail"]["recorded"], false);
    let c2 = g.replay_check(check("echo a", false)).await;
    assert_eq!(c2["detail"]["isReplay"], false, "looking recorded: {c2:#}");
    let r = g.exec(sh("echo a")).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["isReplay"], false, "{r:#}");
    // The hash replay_check computes is the one guard_exec computes.
    assert_eq!(r["detail"]["canonicalHash"], c["detail"]["canonicalHash"]);
    // And now the window has it.
    let c = g.replay_check(check("echo a", false)).await;
    assert_eq!(c["detail"]["isReplay"], true, "{c:#}");

    // record: true changes it.
    let c = g.replay_check(check("echo b", true)).await;
    assert_eq!(c["detail"]["isReplay"], false, "{c:#}");
    assert_eq!(c["detail"]["recorded"], true, "{c:#}");
    let r = g.exec(sh("echo b")).await;
    assert_eq!(r["detail"]["isReplay"], true, "{r:#}");
    assert_eq!(r["detail"]["stdout"], "b\n", "flag mode still runs: {r:#}");
}

// 8. ---------------------------------------------------------------------------------------

#[tokio::test]
async fn invisible_character_variants_hash_the_same() {
    let g = Guard::new("", ECHO);
    let hash = |arg: String| {
        let g = &g;
        async move {
            let c = g
                .replay_check(json!({ "executable": "/bin/echo", "args": [arg] }))
                .await;
            assert_eq!(code(&c), "OK", "{c:#}");
            c["detail"]["canonicalHash"].as_str().unwrap().to_string()
        }
    };
    let plain = hash("hello".into()).await;
    assert_eq!(plain.len(), 64);
    for variant in [
        "hel\u{2060}lo",
        "hel\u{00AD}lo",
        "hello\u{FE0F}",
        "h\u{E0041}\u{E0042}ello\u{E007F}",
        "hel\u{200B}lo",
        "\u{FF48}\u{FF45}\u{FF4C}\u{FF4C}\u{FF4F}",
    ] {
        assert_eq!(hash(variant.into()).await, plain, "{variant:?}");
    }
    // A fullwidth-vs-ASCII pair in another word, too.
    assert_eq!(
        hash("\u{FF21}\u{FF22}1".into()).await,
        hash("AB1".into()).await
    );
    for different in ["hallo", "hello ", "Hello", "hell"] {
        assert_ne!(hash(different.into()).await, plain, "{different:?}");
    }
    // And guard_exec flags the invisible variant of a command that ran as a replay, while
    // running the argument exactly as given.
    let r = g.exec(echo(&["hello"])).await;
    assert_eq!(r["detail"]["canonicalHash"], plain, "{r:#}");
    let r = g.exec(echo(&["hel\u{2060}lo"])).await;
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["isReplay"], true, "{r:#}");
}

// 9. ---------------------------------------------------------------------------------------

#[tokio::test]
async fn trust_tiers_follow_the_real_state() {
    let open = r#"
[[guard.tools]]
name = "any-env"
executable = "/usr/bin/env"

[[guard.tools]]
name = "dotstar"
executable = "/bin/echo"
args_patterns = [".*"]

[[guard.tools]]
name = "loose"
executable = "/bin/echo"
args_patterns = ["[a-z]{1,10}"]
profile = "permissive"
"#;
    let g = Guard::new("", &[ECHO, open].concat());
    let tier = |t: &str| {
        let r = g.tier(t);
        assert_eq!(code(&r), "OK", "{r:#}");
        r
    };
    let r = tier("nosuch");
    assert_eq!(r["detail"]["tier"], "LOW", "{r:#}");
    for t in ["any-env", "dotstar"] {
        let r = tier(t);
        assert_eq!(r["detail"]["tier"], "MEDIUM", "{r:#}");
        assert!(
            !r["detail"]["improvementHints"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
    let r = tier("loose");
    assert_eq!(r["detail"]["tier"], "HIGH", "{r:#}");
    assert!(
        r["detail"]["reasons"].to_string().contains("permissive"),
        "{r:#}"
    );

    // echo: limited patterns, standard profile, replay on: CRITICAL unless this host
    // downgraded a sandbox mechanism (then HIGH, saying so).
    let downgrades = g.status(json!({ "toolName": "echo" }))["detail"]["downgrades"].clone();
    let r = tier("echo");
    if downgrades.as_array().is_some_and(Vec::is_empty) {
        assert_eq!(r["detail"]["tier"], "CRITICAL", "{r:#}");
        assert_eq!(r["detail"]["improvementHints"], json!([]));
    } else {
        eprintln!("\n!!!!!!!! SKIPPED CRITICAL: this host downgrades {downgrades} !!!!!!!!\n");
        assert_eq!(r["detail"]["tier"], "HIGH", "{r:#}");
    }
    // Its run reports the same tier.
    let run = g.exec(echo(&["x"])).await;
    assert_eq!(run["detail"]["trustTier"], r["detail"]["tier"], "{run:#}");
    // A run-time entry's tier comes with its registration.
    let reg =
        g.register(json!({ "toolName": "rt", "executable": "/bin/echo", "argsPatterns": [] }));
    assert_eq!(reg["detail"]["derivedTrustTier"], "MEDIUM", "{reg:#}");

    // The same echo with replay off: at most HIGH.
    let g = g.restart("replay = \"off\"", ECHO);
    let r = g.tier("echo");
    assert_eq!(r["detail"]["tier"], "HIGH", "{r:#}");
    assert!(
        r["detail"]["reasons"].to_string().contains("replay"),
        "{r:#}"
    );
}

// 10. --------------------------------------------------------------------------------------

#[tokio::test]
async fn bad_input_is_invalid_request_naming_the_argument() {
    let g = Guard::all();
    let big = "a".repeat(1024 * 1024);
    let many: Vec<String> = (0..10_000).map(|i| format!("a{i}")).collect();
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({ "toolName": 5, "command": "echo", "args": [] }),
            "toolName",
        ),
        (
            json!({ "toolName": "echo", "command": true, "args": [] }),
            "command",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": "hello" }),
            "args",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": {} }),
            "args",
        ),
        (json!({ "command": "echo", "args": [] }), "toolName"),
        (json!({ "toolName": "echo", "args": [] }), "command"),
        (json!({ "toolName": "echo", "command": "echo" }), "args"),
        (
            json!({ "toolName": "nosuch", "command": "echo", "args": [] }),
            "nosuch",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": ["a", 1] }),
            "args[1]",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [null] }),
            "args[0]",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": many }),
            "args",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [big] }),
            "args[0]",
        ),
        (
            json!({ "toolName": "echo", "command": big, "args": [] }),
            "command",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "env": { "GREETING": 1 } }),
            "env.GREETING",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "env": ["A=1"] }),
            "env",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "env": { "A B": "1" } }),
            "env",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "bogus": 1 }),
            "bogus",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "timeoutMs": 0 }),
            "timeoutMs",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "timeoutMs": -1 }),
            "timeoutMs",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "timeoutMs": 2.5 }),
            "timeoutMs",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "timeoutMs": "5" }),
            "timeoutMs",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "timeoutMs": 30_001 }),
            "timeoutMs",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": [], "blockOnReplay": "yes" }),
            "blockOnReplay",
        ),
        (
            json!({ "toolName": "echo", "command": "", "args": [] }),
            "command",
        ),
        (
            json!({ "toolName": "echo", "command": "echo", "args": ["a\u{0}b"] }),
            "args[0]",
        ),
    ];
    for (args, word) in &cases {
        let r = g.exec(args.clone()).await;
        let shown: String = args.to_string().chars().take(120).collect();
        assert_eq!(code(&r), "INVALID_REQUEST", "{shown}: {r:#}");
        assert!(
            reason(&r).contains(word),
            "{shown}: reason lacks '{word}': {}",
            reason(&r)
        );
        assert_nothing_ran(&r);
    }
    // No arguments at all, and the other tools' bad input.
    let r = g
        .core
        .guard_exec(None, &CancellationToken::new())
        .await
        .to_value();
    assert_refused(&r, "INVALID_REQUEST", &["toolName"]);
    let r = g
        .spawn(json!({ "toolName": "python", "file": "python3", "args": [], "fdBudget": 0 }))
        .await;
    assert_refused(&r, "INVALID_REQUEST", &["fdBudget"]);
    let r = g
        .spawn(json!({ "toolName": "python", "file": "python3", "args": [], "timeoutMs": 5 }))
        .await;
    assert_refused(&r, "INVALID_REQUEST", &["timeoutMs"]);
    let r = g.register(json!({ "toolName": "x", "executable": "/bin/echo", "argsPatterns": "a" }));
    assert_refused(&r, "INVALID_REQUEST", &["argsPatterns"]);
    let r =
        g.register(json!({ "toolName": "x", "executable": "/bin/echo", "argsPatterns": ["("] }));
    assert_eq!(code(&r), "INVALID_REQUEST", "{r:#}");
    let r = g.register(json!({ "toolName": "x", "executable": "/bin/echo", "argsPatterns": [], "sandboxProfile": "lenient" }));
    assert_refused(&r, "INVALID_REQUEST", &["sandboxProfile", "lenient"]);
    let r = g
        .replay_check(json!({ "executable": "echo", "args": [] }))
        .await;
    assert_refused(&r, "INVALID_REQUEST", &["executable"]);
    let r = g
        .replay_check(json!({ "executable": "/bin/echo", "args": [], "record": 1 }))
        .await;
    assert_refused(&r, "INVALID_REQUEST", &["record"]);
    let r = g.core.trust_tier(json!({}).as_object()).to_value();
    assert_refused(&r, "INVALID_REQUEST", &["toolName"]);

    // shell: true, an executable mismatch, a shell string in `command`: POLICY_DENIED.
    let r = g.spawn(json!({ "toolName": "python", "file": "/usr/bin/python3", "args": ["-c", "print(1)"], "shell": true })).await;
    assert_refused(&r, "POLICY_DENIED", &["shell"]);
    assert_nothing_ran(&r);
    let r = g
        .exec(json!({ "toolName": "echo", "command": "/bin/cat", "args": ["x"] }))
        .await;
    assert_refused(&r, "POLICY_DENIED", &["mismatch", "/bin/cat"]);
    let r = g
        .exec(json!({ "toolName": "echo", "command": "cat", "args": ["x"] }))
        .await;
    assert_refused(&r, "POLICY_DENIED", &["mismatch"]);
    let r = g
        .exec(json!({ "toolName": "echo", "command": "/bin/echo hello", "args": [] }))
        .await;
    assert_refused(&r, "POLICY_DENIED", &["command", "whitespace"]);
    assert_nothing_ran(&r);
    let r = g
        .exec(json!({ "toolName": "echo", "command": "echo", "args": ["ok"] }))
        .await;
    assert_eq!(code(&r), "OK", "the server still answers: {r:#}");
}

// 11. --------------------------------------------------------------------------------------

#[tokio::test]
async fn paths_stay_in_the_jail() {
    let g = Guard::new("", ECHO);
    for arg in ["../../etc/passwd", "/etc/passwd"] {
        let r = g.exec(echo(&[arg])).await;
        assert_refused(&r, "PATH_ESCAPE", &[arg]);
        assert_nothing_ran(&r);
    }
    let mut call = echo(&["x"]);
    call["cwd"] = json!("..");
    let r = g.exec(call.clone()).await;
    assert_refused(&r, "PATH_ESCAPE", &[]);
    assert_nothing_ran(&r);
    // A symlink in the jail that points out of it.
    let outside = g.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, g.jail().join("out")).unwrap();
    call["cwd"] = json!("out");
    let r = g.exec(call.clone()).await;
    assert_refused(&r, "PATH_ESCAPE", &["out"]);
    assert_nothing_ran(&r);
    // replay_check contains its folder too.
    let r = g
        .replay_check(json!({ "executable": "/bin/echo", "args": [], "cwd": "out" }))
        .await;
    assert_refused(&r, "PATH_ESCAPE", &[]);
    // Control: a folder in the jail works.
    std::fs::create_dir(g.jail().join("inside")).unwrap();
    give_to_nobody(&g.jail().join("inside"));
    call["cwd"] = json!("inside");
    let r = g.exec(call).await;
    assert_eq!(code(&r), "OK", "{r:#}");
}

// 12. --------------------------------------------------------------------------------------

#[tokio::test]
async fn every_registration_and_run_is_in_a_verified_audit_chain() {
    let g = Guard::new("", ECHO);
    let granted = g.register(json!({
        "toolName": "audited", "executable": "/bin/echo", "argsPatterns": ["[a-z]{1,9}"]
    }));
    assert_eq!(code(&granted), "OK", "{granted:#}");
    let refused = g.register(json!({
        "toolName": "sneaky", "executable": "/bin/sh", "argsPatterns": [".*"]
    }));
    assert_eq!(code(&refused), "POLICY_DENIED", "{refused:#}");
    let run = g.exec(echo(&["audit"])).await;
    assert_eq!(code(&run), "OK", "{run:#}");
    let hash = run["detail"]["canonicalHash"].as_str().unwrap();

    let records = g.records();
    let of = |tool: &str, name: &str| -> Vec<&Map<String, Value>> {
        records
            .iter()
            .filter(|r| {
                r.get("tool") == Some(&json!(tool)) && r["arguments"]["toolName"] == json!(name)
            })
            .collect()
    };
    for (name, want) in [("audited", "OK"), ("sneaky", "POLICY_DENIED")] {
        let recs = of("register_allowlist", name);
        let outcome = recs.iter().find(|r| r.get("code") == Some(&json!(want)));
        assert!(outcome.is_some(), "no {want} record of '{name}': {recs:#?}");
    }
    let exec = of("guard_exec", "echo");
    let intent = exec
        .iter()
        .position(|r| r.get("canonical_hash") == Some(&json!(hash)) && r["event"] == "intent");
    let outcome = exec
        .iter()
        .position(|r| r["event"] != "intent" && r.get("code") == Some(&json!("OK")));
    let (Some(intent), Some(outcome)) = (intent, outcome) else {
        panic!("no intent with the hash, or no outcome: {exec:#?}");
    };
    assert!(
        intent < outcome,
        "the intent comes after the outcome: {exec:#?}"
    );
    assert_eq!(exec[outcome].get("canonical_hash"), Some(&json!(hash)));

    let report = safety::audit::verify(&g.audit_log()).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.records, records.len() as u64);
}

// 13. --------------------------------------------------------------------------------------

#[tokio::test]
async fn sandbox_status_reports_the_limits_that_are_enforced() {
    let g = Guard::all();
    let r = g.status(json!({ "toolName": "python" }));
    assert_eq!(code(&r), "OK", "{r:#}");
    let d = &r["detail"];
    for key in [
        "profile",
        "timeoutMs",
        "maxStdoutBytes",
        "maxStderrBytes",
        "fdBudget",
        "cgroupActive",
    ] {
        assert!(d.get(key).is_some(), "'{key}' missing: {r:#}");
    }
    assert_eq!(d["profile"], "standard");
    assert_eq!(d["maxStdoutBytes"], d["maxStderrBytes"]);
    let fds = d["fdBudget"].as_u64().unwrap();
    let timeout = d["timeoutMs"].as_u64().unwrap();
    let cap = d["maxStdoutBytes"].as_u64().unwrap();
    assert!(timeout <= 30_000, "above the policy's 30 s: {r:#}");
    assert!(cap <= 65_536, "above the policy's max_output_bytes: {r:#}");

    // The command sees that RLIMIT_NOFILE.
    let seen = g
        .exec(
            json!({ "toolName": "python", "command": "/usr/bin/python3", "args": ["-c",
            "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])"] }),
        )
        .await;
    assert_eq!(code(&seen), "OK", "{seen:#}");
    assert_eq!(seen["detail"]["stdout"], format!("{fds}\n"), "{seen:#}");
    // The time limit: exactly it is accepted, one more is refused.
    let mut call = echo(&["t"]);
    call["timeoutMs"] = json!(timeout + 1);
    let over = g.exec(call.clone()).await;
    assert_refused(
        &over,
        "INVALID_REQUEST",
        &["timeoutMs", &timeout.to_string()],
    );
    call["timeoutMs"] = json!(timeout);
    let at = g.exec(call).await;
    assert_eq!(code(&at), "OK", "{at:#}");
    assert_eq!(at["detail"]["timeoutMs"], timeout);
    // The output cap: more than it is cut to it.
    let out = g
        .exec(
            json!({ "toolName": "python", "command": "/usr/bin/python3", "args": ["-c",
            format!("print('x' * {})", cap + 1000)] }),
        )
        .await;
    assert_eq!(code(&out), "OUTPUT_TRUNCATED", "{out:#}");
    let kept = out["detail"]["stdout"].as_str().unwrap().len() as u64;
    assert!(kept <= cap + 200, "kept {kept} of a cap of {cap}");
    assert!(out["detail"]["stdoutTruncatedBytes"].as_u64().unwrap() >= 1000 - 200);
    // cgroupActive is what the start-up probe found.
    let cg = &g.core.sandbox_probe().to_value()["mechanisms"]["cgroup"];
    let active = cg["kill"] == true || cg["processes"].is_string() || cg["memory"].is_string();
    assert_eq!(d["cgroupActive"], active, "{r:#} vs {cg}");

    // The strict profile's limits are its own.
    let strict = g.register(json!({
        "toolName": "py-strict", "executable": "/usr/bin/python3",
        "argsPatterns": ["-c", "[ -~]{1,200}"], "sandboxProfile": "strict"
    }));
    assert_eq!(code(&strict), "OK", "{strict:#}");
    let s = g.status(json!({ "toolName": "py-strict" }));
    assert_eq!(s["detail"]["profile"], "strict", "{s:#}");
    let strict_fds = s["detail"]["fdBudget"].as_u64().unwrap();
    let seen = g
        .exec(
            json!({ "toolName": "py-strict", "command": "/usr/bin/python3", "args": ["-c",
            "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])"] }),
        )
        .await;
    assert_eq!(
        seen["detail"]["stdout"],
        format!("{strict_fds}\n"),
        "{seen:#}"
    );

    // Unknown tool: refused, naming it.
    let r = g.status(json!({ "toolName": "nosuch" }));
    assert_refused(&r, "INVALID_REQUEST", &["nosuch"]);
    let r = g.status(json!({ "toolName": 3 }));
    assert_refused(&r, "INVALID_REQUEST", &["toolName"]);
    // No toolName: the default profile.
    let r = g.status(json!({}));
    assert_eq!(code(&r), "OK", "{r:#}");
    assert_eq!(r["detail"]["profile"], "standard");
}

/// A descriptor the server holds without close-on-exec (inherited from whoever started it,
/// as a test harness's or an MCP client's) must not reach a sandboxed command: the vfork
/// child and the launcher mark everything from 3 up close-on-exec (`exec::sys::cloexec_from_3`).
#[tokio::test]
async fn no_descriptor_beyond_stdio_reaches_the_command() {
    use std::os::fd::AsRawFd;
    let g = Guard::new("", PYTHON);
    let planted = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    let number = u32::try_from(planted.as_raw_fd()).unwrap();
    let inherited = inherited_fds(&g).await;
    drop(planted);
    assert!(
        !inherited.contains(&number),
        "the server's descriptor {number} reached the command (all: {inherited:?})"
    );
    assert!(
        inherited.is_empty(),
        "descriptors reached the command: {inherited:?}"
    );
}

/// A caller may name an entry's program by its file name as the policy wrote it (`sh` for
/// `/bin/sh`, which is a symlink to `dash` on Debian) or by the resolved one, or by any
/// absolute spelling that resolves to the same file; any other name is refused.
#[tokio::test]
async fn the_program_may_be_named_as_written_or_as_resolved() {
    let g = Guard::new("", SH);
    let script = "exit 0";
    let resolved = std::fs::canonicalize("/bin/sh").unwrap();
    let resolved_name = resolved.file_name().unwrap().to_str().unwrap().to_string();
    for command in [
        "sh",
        resolved_name.as_str(),
        "/bin/sh",
        "/usr/bin/../bin/sh",
    ] {
        let r = g
            .exec(json!({ "toolName": "sh", "command": command, "args": ["-c", script] }))
            .await;
        assert_eq!(code(&r), "OK", "{command}: {r:#}");
    }
    for command in ["bash", "./sh", "bin/sh", "/bin/bash"] {
        let r = g
            .exec(json!({ "toolName": "sh", "command": command, "args": ["-c", script] }))
            .await;
        assert_refused(&r, "POLICY_DENIED", &["executable mismatch"]);
    }
}
