//! End-to-end: the real `safe-mcp files` binary driven through the rmcp client over stdio.
//! The demo sequence gives the documented envelopes (docs/files.md), and a server SIGKILLed in the
//! middle of apply_plan (frozen first, so the journal and the files on disk show the step
//! in progress at the moment of the kill) recovers on restart.

use std::path::{Path, PathBuf};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// The binary under test; `FILES_E2E_BIN` may name another build of it.
fn bin() -> String {
    std::env::var("FILES_E2E_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_safe-mcp").to_string())
}

/// A sandbox as `scripts/make_demo_sandbox.sh` makes it, with a copy of the example policy.
fn sandbox() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let policy = dir.path().join("policy.example.toml");
    std::fs::copy(root.join("policy.example.toml"), &policy).unwrap();
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts/make_demo_sandbox.sh"))
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    (dir, policy)
}

async fn start(policy: &Path) -> (RunningService<rmcp::RoleClient, ()>, Option<u32>) {
    let mut cmd = tokio::process::Command::new(bin());
    cmd.arg("files")
        .arg("--config")
        .arg(policy)
        .env_clear()
        .env("SAFE_MCP_LOG", "warn");
    let transport = TokioChildProcess::new(cmd).unwrap();
    let pid = transport.id();
    (().serve(transport).await.unwrap(), pid)
}

async fn call(s: &RunningService<rmcp::RoleClient, ()>, tool: &str, args: Value) -> Value {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let r = s.peer().call_tool(params).await.unwrap();
    let env = r.structured_content.clone().unwrap();
    assert_eq!(r.is_error, Some(!env["ok"].as_bool().unwrap()));
    let text: Value = serde_json::from_str(&r.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(text, env);
    env
}

fn without_volatile(mut env: Value) -> Value {
    env.as_object_mut().unwrap().remove("duration_ms");
    if let Some(d) = env.get_mut("detail").and_then(Value::as_object_mut) {
        d.remove("created");
        d.remove("plan_id");
    }
    env
}

#[tokio::test]
async fn demo_sequence_through_the_real_binary_gives_the_documented_envelopes() {
    let (dir, policy) = sandbox();
    let (s, _) = start(&policy).await;
    let plan = call(&s, "plan_organize", json!({})).await;
    let id = plan["detail"]["plan_id"].clone();
    assert_eq!(
        without_volatile(plan),
        json!({"action": "plan_organize", "code": "OK", "ok": true, "reason": "proposed 2 move(s), skipped 3",
               "detail": {"move_count": 2, "skip_count": 3, "truncated": false,
                 "moves": [{"category": "Images", "dest": "Images/photo.png", "size": 41, "src": "photo.png"},
                           {"category": "Documents", "dest": "Documents/report.pdf", "size": 16, "src": "report.pdf"}],
                 "skips": [{"code": "NEEDS_EXPLICIT_REQUEST", "name": ".bashrc", "reason": "dotfiles are configuration, not clutter to be filed", "rule": "organize"},
                           {"code": "POLICY_DENIED", "name": "link.pdf", "reason": "'link.pdf' is a symlink; symlinks are never followed or moved, however they are named: no rule permits organizing it (deny by default)", "rule": null},
                           {"code": "NEEDS_EXPLICIT_REQUEST", "name": "setup.exe", "reason": "installers, executables and application folders are left where the user put them", "rule": "organize"}]}})
    );
    let applied = call(&s, "apply_plan", json!({"plan_id": id})).await;
    assert_eq!(
        without_volatile(applied),
        json!({"action": "apply_plan", "code": "OK", "ok": true, "reason": "moved 2 file(s)",
               "detail": {"moved": 2, "planned": 2,
                 "moves": [{"dest": "Images/photo.png", "src": "photo.png"}, {"dest": "Documents/report.pdf", "src": "report.pdf"}]}})
    );
    let link = call(
        &s,
        "move_file",
        json!({"src": "link.pdf", "dest": "Documents/link.pdf"}),
    )
    .await;
    assert_eq!(
        without_volatile(link),
        json!({"action": "move_file", "code": "POLICY_DENIED", "detail": {}, "ok": false,
               "reason": "'link.pdf' is a symlink; symlinks are never followed or moved, however they are named: no rule permits organizing it (deny by default)"})
    );
    let setup = call(
        &s,
        "move_file",
        json!({"src": "setup.exe", "dest": "Documents/setup.exe"}),
    )
    .await;
    assert_eq!(
        without_volatile(setup),
        json!({"action": "move_file", "code": "OK", "ok": true, "reason": "moved setup.exe",
               "detail": {"dest": "Documents/setup.exe", "moved": 1, "src": "setup.exe"}})
    );
    s.cancel().await.ok();
    assert!(
        dir.path()
            .join("sandbox/files/Documents/setup.exe")
            .is_file()
    );
}

/// The state letter of `/proc/PID/stat` (`R`, `S`, `T` stopped, `Z` zombie), if it exists.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {sig} {pid}");
}

/// Names of the regular files directly in `dir`.
fn files_in(dir: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The journal's records, one JSON value per line.
fn journal_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_server_sigkilled_mid_apply_recovers_on_restart() {
    let (dir, policy) = sandbox();
    let ws = dir.path().join("sandbox/files");
    let docs = ws.join("Documents");
    let journal = dir.path().join("state/organizer-journal.json");
    for entry in std::fs::read_dir(&ws).unwrap() {
        let p = entry.unwrap().path();
        if std::fs::symlink_metadata(&p).unwrap().is_file()
            || std::fs::symlink_metadata(&p)
                .unwrap()
                .file_type()
                .is_symlink()
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    const N: usize = 4000;
    for i in 0..N {
        std::fs::write(ws.join(format!("f{i}.txt")), format!("content {i}")).unwrap();
    }
    let text = std::fs::read_to_string(&policy)
        .unwrap()
        .replace("max_plan_moves = 500", "max_plan_moves = 5000");
    std::fs::write(&policy, text).unwrap();
    // Each round freezes the server (SIGSTOP) once this many files reached their
    // destination, checks on disk that the apply is in progress, then SIGKILLs it.
    for (round, threshold) in [1, N / 3, 2 * N / 3].into_iter().enumerate() {
        let mut caught = None;
        for attempt in 0..5 {
            let (s, pid) = start(&policy).await;
            let pid = pid.unwrap();
            let plan = call(&s, "plan_organize", json!({})).await;
            assert_eq!(plan["detail"]["move_count"], N, "{}", plan["reason"]);
            let id = plan["detail"]["plan_id"].clone();
            let params = CallToolRequestParams::new("apply_plan")
                .with_arguments(json!({ "plan_id": id }).as_object().unwrap().clone());
            let peer = s.peer().clone();
            let apply = tokio::spawn(async move { peer.call_tool(params).await });
            let watching = std::time::Instant::now();
            while files_in(&docs).len() < threshold && !apply.is_finished() {
                assert!(
                    watching.elapsed() < std::time::Duration::from_secs(60),
                    "apply_plan made no progress"
                );
                tokio::task::yield_now().await;
            }
            signal(pid, "-STOP");
            let stopping = std::time::Instant::now();
            while process_state(pid) != Some('T') {
                assert!(stopping.elapsed() < std::time::Duration::from_secs(5));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            // Frozen: nothing changes on disk until it dies. Is it mid-apply?
            let moved = files_in(&docs);
            let records = journal_records(&journal);
            let last = records.last().cloned().unwrap_or_default();
            let open_step = last["t"] == "begin"
                && last["op"] == "do"
                && last["action"]["moves"].as_array().map(Vec::len) == Some(N);
            signal(pid, "-KILL");
            let _ = apply.await;
            drop(s);
            let dying = std::time::Instant::now();
            while !matches!(process_state(pid), None | Some('Z')) {
                assert!(dying.elapsed() < std::time::Duration::from_secs(5));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            if open_step && !moved.is_empty() && moved.len() < N {
                caught = Some((moved, last["action_id"].clone()));
                break;
            }
            // The apply had finished (or not begun) when the stop landed: put the files
            // back and try again.
            eprintln!(
                "round {round} attempt {attempt}: not mid-apply ({} moved, last record {})",
                moved.len(),
                last["t"]
            );
            let (s, _) = start(&policy).await;
            loop {
                let env = call(&s, "undo_last_action", json!({})).await;
                if env["code"] == json!("INVALID_REQUEST") {
                    break;
                }
                assert_eq!(env["code"], json!("OK"), "{env}");
            }
            s.cancel().await.ok();
        }
        let (moved, action_id) =
            caught.unwrap_or_else(|| panic!("round {round}: never stopped mid-apply"));
        eprintln!(
            "round {round}: killed with {} of {N} files moved",
            moved.len()
        );

        // After the kill, before the restart: the step is still open in the journal and
        // every file is at one place, as the frozen server left it.
        assert_eq!(files_in(&docs), moved);
        let last = journal_records(&journal).last().cloned().unwrap();
        assert_eq!(last["t"], "begin", "{last}");
        assert_eq!(last["action_id"], action_id);

        // Restart: recovery runs before the first call is answered.
        let (s, _) = start(&policy).await;
        let listing = call(&s, "list_files", json!({})).await;
        assert_eq!(listing["code"], "OK", "{listing}");
        let mut places = 0;
        for i in 0..N {
            let name = format!("f{i}.txt");
            let here = [ws.join(&name), docs.join(&name)];
            let found: Vec<&PathBuf> = here.iter().filter(|p| p.is_file()).collect();
            assert_eq!(found.len(), 1, "{name}");
            assert_eq!(
                std::fs::read_to_string(found[0]).unwrap(),
                format!("content {i}")
            );
            places += usize::from(found[0].starts_with(&docs));
        }
        // Recovery moved nothing; it recorded what had happened.
        assert_eq!(places, moved.len());
        assert_eq!(files_in(&docs), moved);
        // The journal no longer holds an open step: its undo stack's top is the
        // interrupted action, cut down to exactly the moves that took effect.
        let records = journal_records(&journal);
        assert!(
            !records.iter().any(|r| r["t"] == "begin"
                && !records
                    .iter()
                    .any(|e| e["t"] == "end" && e["action_id"] == r["action_id"])),
            "a step is still open after the restart"
        );
        let snapshot = records
            .iter()
            .rev()
            .find(|r| r["t"] == "snapshot")
            .expect("the restart compacts the journal into a snapshot");
        let top = snapshot["undo"].as_array().unwrap().last().unwrap();
        assert_eq!(top["id"], action_id, "{top}");
        let in_journal: std::collections::BTreeSet<String> = top["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["src"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(in_journal, moved);
        // Undo puts back exactly what the killed apply had moved, then nothing is left.
        let env = call(&s, "undo_last_action", json!({})).await;
        assert_eq!(env["code"], json!("OK"), "{env}");
        assert_eq!(env["detail"]["moved"], moved.len(), "{env}");
        let env = call(&s, "undo_last_action", json!({})).await;
        assert_eq!(env["code"], json!("INVALID_REQUEST"), "{env}");
        for i in 0..N {
            assert!(
                ws.join(format!("f{i}.txt")).is_file(),
                "f{i}.txt not back after undo"
            );
        }
        assert!(files_in(&docs).is_empty());
        s.cancel().await.ok();
    }
}
