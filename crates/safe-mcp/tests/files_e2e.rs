//! End-to-end: the real `safe-mcp files` binary driven through the rmcp client over stdio.
//! The demo sequence gives the seed's envelopes (SPEC §5.2), and a server SIGKILLed in the
//! middle of apply_plan recovers on restart.
//!
//! Until `safe-mcp files` is wired into the binary these tests print a loud SKIP line.

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
async fn demo_sequence_through_the_real_binary_matches_the_seed() {
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
                           {"code": "POLICY_DENIED", "name": "link.pdf", "reason": "'organize' is not permitted by any rule (deny by default)", "rule": null},
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
               "reason": "'organize' is not permitted by any rule (deny by default)"})
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

#[tokio::test]
async fn real_server_sigkilled_mid_apply_recovers_on_restart() {
    let (dir, policy) = sandbox();
    let ws = dir.path().join("sandbox/files");
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
    const N: usize = 2000;
    for i in 0..N {
        std::fs::write(ws.join(format!("f{i}.txt")), format!("content {i}")).unwrap();
    }
    let text = std::fs::read_to_string(&policy)
        .unwrap()
        .replace("max_plan_moves = 500", "max_plan_moves = 5000");
    std::fs::write(&policy, text).unwrap();
    for (round, delay_ms) in [40u64, 90, 160, 320].into_iter().enumerate() {
        let (s, pid) = start(&policy).await;
        let plan = call(&s, "plan_organize", json!({})).await;
        let id = plan["detail"]["plan_id"].clone();
        let mut params = CallToolRequestParams::new("apply_plan");
        params = params.with_arguments(json!({"plan_id": id}).as_object().unwrap().clone());
        let peer = s.peer().clone();
        let apply = tokio::spawn(async move { peer.call_tool(params).await });
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
        let pid = pid.unwrap().to_string();
        std::process::Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap();
        let _ = apply.await;
        drop(s);
        // Restart: recovery runs before the first call is answered.
        let (s, _) = start(&policy).await;
        let mut places = 0;
        for i in 0..N {
            let name = format!("f{i}.txt");
            let here = [ws.join(&name), ws.join("Documents").join(&name)];
            let found: Vec<&PathBuf> = here.iter().filter(|p| p.is_file()).collect();
            assert_eq!(found.len(), 1, "{name}");
            assert_eq!(
                std::fs::read_to_string(found[0]).unwrap(),
                format!("content {i}")
            );
            places += usize::from(found[0].ends_with(format!("Documents/{name}")));
        }
        eprintln!("round {round}: {places} of {N} files had moved when the server was killed");
        // Undo whatever the journal says happened; then everything is back.
        loop {
            let env = call(&s, "undo_last_action", json!({})).await;
            if env["code"] == json!("INVALID_REQUEST") {
                break;
            }
            assert_eq!(env["code"], json!("OK"), "{env}");
        }
        for i in 0..N {
            assert!(
                ws.join(format!("f{i}.txt")).is_file(),
                "f{i}.txt not back after undo"
            );
        }
        s.cancel().await.ok();
    }
}
