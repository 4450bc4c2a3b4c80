//! The audit log taken away from a running terminal server: renamed,
//! deleted, replaced or truncated in place while the server runs. The next call must fail
//! closed (AUDIT_UNAVAILABLE, nothing runs), or, with `audit_on_replaced = "reopen"`, go on
//! in the file at the path whose first new record explains the gap, which `safe-mcp audit
//! verify` then reports. The real binary, driven through the rmcp client, temporary folders.

use std::path::{Path, PathBuf};
use std::process::Command;

use safe_mcp::client::{self, Session};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

/// The sandbox lines every policy of these tests carries: the one place to add, say,
/// `run_as = "nobody"` when a root server must run commands as another uid.
const SANDBOX: &str = "[terminal.sandbox]\n";

/// A command the policy allows that leaves a marker in the jail when it runs.
const MARK: &str = "sh -c \"touch marker\"";

struct Fixture {
    dir: tempfile::TempDir,
    policy: PathBuf,
}

impl Fixture {
    fn new(on_replaced: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("jail")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        // A root server runs commands as the jail's owner: the jail goes to nobody.
        safe_mcp::demo::hand_jail_to_nobody(dir.path(), &dir.path().join("jail")).unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(
            &policy,
            format!(
                "audit_log = \"state/audit.jsonl\"\naudit_fail_mode = \"closed\"\n\
                 audit_on_replaced = \"{on_replaced}\"\n[terminal]\njail_root = \"jail\"\n\
                 [terminal.allowlist]\ncommands = [\"sh\", \"true\"]\n{SANDBOX}"
            ),
        )
        .unwrap();
        Fixture { dir, policy }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("state/audit.jsonl")
    }

    fn marker(&self) -> PathBuf {
        self.dir.path().join("jail/marker")
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

async fn run(s: &Session, command: &str) -> Value {
    client::call(s, "run_command", json!({ "command": command }))
        .await
        .expect("call run_command")
}

#[derive(Debug, Clone, Copy)]
enum Tamper {
    Renamed,
    Deleted,
    Replaced,
    Truncated,
}

const TAMPERS: [Tamper; 4] = [
    Tamper::Renamed,
    Tamper::Deleted,
    Tamper::Replaced,
    Tamper::Truncated,
];

impl Tamper {
    fn apply(self, path: &Path) {
        match self {
            Tamper::Renamed => std::fs::rename(path, path.with_extension("moved")),
            Tamper::Deleted => std::fs::remove_file(path),
            Tamper::Replaced => std::fs::remove_file(path).and_then(|()| std::fs::write(path, "")),
            Tamper::Truncated => std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(0)),
        }
        .unwrap_or_else(|e| panic!("{self:?}: {e}"));
    }

    fn kind(self) -> &'static str {
        match self {
            Tamper::Renamed => "renamed",
            Tamper::Deleted => "deleted",
            Tamper::Replaced => "replaced",
            Tamper::Truncated => "truncated",
        }
    }
}

/// The server ran `MARK` once (so the command can run and leave its marker), then the log
/// was taken away: returns the session for the next call.
async fn started_then_tampered(f: &Fixture, tamper: Tamper) -> Session {
    let s = f.connect().await;
    let e = run(&s, MARK).await;
    assert_eq!(e["code"], "OK", "{tamper:?}: the control run failed: {e}");
    assert!(
        f.marker().exists(),
        "{tamper:?}: the control run left no marker"
    );
    std::fs::remove_file(f.marker()).unwrap();
    tamper.apply(&f.log());
    s
}

fn verify(path: &Path) -> (i32, String) {
    verify_args(path, &[])
}

/// `safe-mcp audit verify PATH EXTRA...`: the exit code and stdout.
fn verify_args(path: &Path, extra: &[&std::ffi::OsStr]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(["audit", "verify"])
        .arg(path)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test]
async fn a_log_taken_away_while_the_server_runs_fails_the_next_calls_closed() {
    for tamper in TAMPERS {
        let f = Fixture::new("fail");
        let s = started_then_tampered(&f, tamper).await;
        let before = std::fs::read(f.log()).ok();
        // Twice: the second call must not quietly start a new log either.
        for _ in 0..2 {
            let e = run(&s, MARK).await;
            assert_eq!(e["code"], "AUDIT_UNAVAILABLE", "{tamper:?}: {e}");
            let reason = e["reason"].as_str().unwrap_or_default();
            assert!(
                reason.contains(&format!("was {}", tamper.kind())),
                "{tamper:?}: {reason}"
            );
            assert!(
                !f.marker().exists(),
                "{tamper:?}: the command ran unrecorded"
            );
        }
        assert_eq!(std::fs::read(f.log()).ok(), before, "{tamper:?}");
        s.cancel().await.ok();
    }
}

#[tokio::test]
async fn with_reopen_the_server_goes_on_and_verify_reports_the_explained_gap() {
    for tamper in TAMPERS {
        let f = Fixture::new("reopen");
        let s = started_then_tampered(&f, tamper).await;
        let e = run(&s, MARK).await;
        assert_eq!(e["code"], "OK", "{tamper:?}: {e}");
        assert!(f.marker().exists(), "{tamper:?}");
        s.cancel().await.ok();
        let text = std::fs::read_to_string(f.log()).unwrap();
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["replaced"], tamper.kind(), "{tamper:?}: {text}");
        // The control run wrote an intent and an outcome: the event goes on from seq 2.
        assert_eq!(first["previous_seq"], 2, "{tamper:?}: {text}");
        assert_eq!(first["seq"], 3, "{tamper:?}: {text}");
        assert!(text.contains("\"event\":\"outcome\""), "{tamper:?}: {text}");
        let (code, out) = verify(&f.log());
        assert_eq!(code, 1, "{tamper:?}: {out}");
        assert!(
            out.starts_with("broken: record 1: the log was ")
                && out.contains(tamper.kind())
                && out.contains("while a server wrote it"),
            "{tamper:?}: {out}"
        );
    }
}

/// `safe-mcp audit keygen` into the fixture's state folder: (signer key, verifier key).
fn keygen(f: &Fixture) -> (PathBuf, PathBuf) {
    let key = f.dir.path().join("state/audit.key");
    let out = Command::new(BIN)
        .args(["audit", "keygen", "--name", "host-1.example/audit", "--out"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let pubkey = f.dir.path().join("state/audit.key.pub");
    let printed = String::from_utf8_lossy(&out.stdout);
    let written = std::fs::read_to_string(&pubkey).unwrap();
    assert!(printed.contains(written.trim()), "{printed}");
    // A second keygen over the same files is refused and changes nothing.
    let again = Command::new(BIN)
        .args(["audit", "keygen", "--name", "x", "--out"])
        .arg(&key)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    assert_eq!(std::fs::read_to_string(&pubkey).unwrap(), written);
    (key, pubkey)
}

fn signed_policy(f: &Fixture, every: u64) {
    let policy = std::fs::read_to_string(&f.policy).unwrap();
    std::fs::write(
        &f.policy,
        format!(
            "audit_checkpoint_key = \"state/audit.key\"\naudit_checkpoint_every = {every}\n{policy}"
        ),
    )
    .unwrap();
}

fn verify_with(path: &Path, key: &Path) -> (i32, String) {
    verify_args(path, &["--key".as_ref(), key.as_os_str()])
}

#[tokio::test]
async fn a_server_signs_its_log_and_closes_it_with_a_checkpoint_that_verify_checks() {
    let f = Fixture::new("fail");
    let (_, pubkey) = keygen(&f);
    signed_policy(&f, 3);
    let s = f.connect().await;
    for _ in 0..4 {
        assert_eq!(run(&s, "true").await["code"], "OK");
    }
    s.cancel().await.ok();
    // The server writes its closing checkpoint as it exits.
    let last_is_checkpoint = || {
        let text = std::fs::read_to_string(f.log()).unwrap_or_default();
        text.lines()
            .last()
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .is_some_and(|r| r.get("checkpoint").is_some())
    };
    for _ in 0..100 {
        if last_is_checkpoint() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        last_is_checkpoint(),
        "{}",
        std::fs::read_to_string(f.log()).unwrap()
    );
    let (code, out) = verify_with(&f.log(), &pubkey);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("signed: "), "{out}");
    assert!(!out.contains("NOT covered"), "{out}");
    let covered = [
        "--key".as_ref(),
        pubkey.as_os_str(),
        "--require-covered".as_ref(),
    ];
    assert_eq!(verify_args(&f.log(), &covered).0, 0);
    // The closing checkpoint cut off (the chain is still whole): the records after the
    // last checkpoint left are reported, and fail where they must be covered.
    let text = std::fs::read_to_string(f.log()).unwrap();
    let cut: Vec<&str> = text.lines().collect();
    let cut = format!("{}\n", cut[..cut.len() - 1].join("\n"));
    std::fs::write(f.log(), &cut).unwrap();
    let (code, out) = verify_with(&f.log(), &pubkey);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("NOT covered"), "{out}");
    let (code, out) = verify_args(&f.log(), &covered);
    assert_eq!(code, 1, "{out}");
    // An edited record (its own hash fixed or not) is reported as before.
    let text = std::fs::read_to_string(f.log()).unwrap();
    std::fs::write(
        f.log(),
        text.replacen("\"code\":\"OK\"", "\"code\":\"NO\"", 1),
    )
    .unwrap();
    let (code, out) = verify_with(&f.log(), &pubkey);
    assert_eq!(code, 1, "{out}");
}

#[tokio::test]
async fn a_server_whose_checkpoint_key_others_can_read_does_not_start() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new("fail");
    let (key, _) = keygen(&f);
    signed_policy(&f, 3);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = Command::new(BIN)
        .args(["terminal", "--config", f.policy.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("mode 644"), "{stderr}");
    assert!(!f.log().exists(), "nothing was written: {stderr}");
}

#[tokio::test]
async fn a_record_syslog_did_not_take_is_said_in_the_result_and_kept_locally() {
    let f = Fixture::new("fail");
    // A socket nobody reads: every send is refused.
    let socket = f.dir.path().join("state/syslog.sock");
    std::os::unix::net::UnixDatagram::bind(&socket)
        .map(drop)
        .unwrap();
    let policy = std::fs::read_to_string(&f.policy).unwrap();
    std::fs::write(
        &f.policy,
        format!("{policy}[audit.syslog]\ntransport = \"unix\"\naddress = \"state/syslog.sock\"\n"),
    )
    .unwrap();
    let s = f.connect().await;
    let e = run(&s, "true").await;
    assert_eq!(e["code"], "OK", "{e}");
    let note = e["detail"]["audit"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("syslog: records 1..=") && note.contains("not shipped to syslog"),
        "{e}"
    );
    s.cancel().await.ok();
    let (code, out) = verify(&f.log());
    assert_eq!(code, 0, "{out}");
}
