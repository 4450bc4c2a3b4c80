//! End-to-end tests of the kernel sandbox through the real `safe-mcp` binary and the
//! official rmcp client: the sandbox report on the wire, MCP cancellation killing a whole
//! process tree, server death taking its commands with it, and the start-up summary line.
//! Kernel features are checked through the server's own report; a missing one is a loud
//! SKIP (a failure under STRICT_SANDBOX_TESTS=1).

use crate::bench_sandbox;
use safe_mcp::client;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp"))
}

/// A temporary jail, state folder and policy that allows the tools these tests need.
fn policy(dir: &Path, extra: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("jail")).unwrap();
    std::fs::create_dir_all(dir.join("state")).unwrap();
    safe_mcp::demo::hand_jail_to_nobody(dir, &dir.join("jail")).unwrap();
    let path = dir.join("policy.toml");
    std::fs::write(
        &path,
        format!(
            "audit_log = \"state/audit.jsonl\"\n\
             [terminal]\njail_root = \"jail\"\n\
             [terminal.allowlist]\ncommands = [\"sleep\", \"sh\", \"setsid\", \"true\"]\n{extra}"
        ),
    )
    .unwrap();
    path
}

fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("1000.{}{}", std::process::id(), nanos % 1_000_000_000)
}

/// pids and argv of live processes (a zombie, exited but not yet reaped by whoever
/// adopted it, is not live; its command line is empty anyway).
fn live_processes() -> Vec<(i32, Vec<String>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
        {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        out.push((pid, args));
    }
    out
}

/// pids and command lines of live processes whose argv\[0\] is `program` and that carry
/// `marker` (the launcher's own command line also holds the marker, inside its spec).
fn processes(program: &str, marker: &str) -> Vec<(i32, String)> {
    live_processes()
        .into_iter()
        .filter(|(_, args)| {
            args.first().is_some_and(|a| a == program) && args.iter().any(|a| a.contains(marker))
        })
        .map(|(pid, args)| (pid, args.join(" ")))
        .collect()
}

async fn wait_until(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}

fn skip_unless(report: &Value, what: &str, ok: bool) -> bool {
    if !ok {
        let message = format!("SKIPPED: {what} is not available here; sandbox report: {report}");
        if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!! {message} !!!!!!!!\n");
    }
    ok
}

fn tree_kill_available(sandbox: &Value) -> bool {
    sandbox["mechanisms"]["tree_kill"] != "process group"
}

#[tokio::test(flavor = "multi_thread")]
async fn results_carry_the_sandbox_report_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path(), "");
    let policy = policy.to_string_lossy();
    let session = client::connect(&bin(), &["terminal", "--config", &policy], &[])
        .await
        .unwrap();
    let e = client::call(&session, "run_command", json!({"command": "true"}))
        .await
        .unwrap();
    assert_eq!(e["code"], "OK", "{e}");
    // On the wire: the one-line summary (and the whole report only after a downgrade);
    // the whole report is in the call's audit record.
    let summary = e["detail"]["sandbox"].as_str().unwrap_or_default();
    assert!(summary.starts_with("profile=standard "), "{e}");
    assert!(summary.len() <= 200, "{e}");
    assert!(!summary.contains("sandbox=off"), "{e}");
    let sandbox =
        &crate::recorded::recorded_report(&dir.path().join("state/audit.jsonl"), &e).unwrap();
    assert_eq!(sandbox["profile"], "standard", "{e}");
    assert_eq!(sandbox["mechanisms"]["launcher"], true, "{e}");
    assert_eq!(sandbox["limits"]["processes"], 128, "{e}");
    if skip_unless(
        sandbox,
        "Landlock",
        sandbox["mechanisms"]["landlock"]["abi"]
            .as_u64()
            .unwrap_or(0)
            >= 3,
    ) {
        assert!(sandbox["mechanisms"]["seccomp"].is_string(), "{e}");
        assert!(summary.contains(" seccomp=on "), "{e}");
        let abi = sandbox["mechanisms"]["landlock"]["abi"]
            .as_u64()
            .unwrap_or(0);
        assert!(summary.contains(&format!(" landlock={abi}/")), "{e}");
    }
    let x = client::call(&session, "explain_command", json!({"command": "sleep 1"}))
        .await
        .unwrap();
    assert_eq!(x["detail"]["sandbox"]["profile"], "standard", "{x}");
    assert_eq!(x["detail"]["sandbox"]["source"], "start-up probe", "{x}");
    // explain_command is where the whole report is asked for.
    assert_eq!(x["detail"]["sandbox"]["limits"]["processes"], 128, "{x}");
    assert!(x["detail"]["sandbox"]["mechanisms"].is_object(), "{x}");
    session.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_cancellation_kills_the_whole_tree_and_returns_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path(), "");
    let policy_arg = policy.to_string_lossy();
    let session = client::connect(&bin(), &["terminal", "--config", &policy_arg], &[])
        .await
        .unwrap();
    let probe = client::call(&session, "run_command", json!({"command": "true"}))
        .await
        .unwrap();
    let report =
        crate::recorded::recorded_report(&dir.path().join("state/audit.jsonl"), &probe).unwrap();
    if !skip_unless(
        &report,
        "a whole-tree kill (cgroup or PID namespace)",
        tree_kill_available(&report),
    ) {
        return;
    }
    let m = marker();
    // One child in the call's group, one that left it with setsid.
    let command = format!("sh -c \"setsid sleep {m} & sleep {m}\"");
    let params = CallToolRequestParams::new("run_command").with_arguments(
        json!({ "command": command })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = session
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || processes("sleep", &m).len()
            == 2)
        .await,
        "the two sleeps never started: {:?}",
        processes("sleep", &m)
    );
    let cancelled_at = Instant::now();
    // Sends notifications/cancelled for this request id.
    handle.cancel(Some("test cancels".into())).await.unwrap();
    assert!(
        wait_until(Duration::from_secs(3), || processes("sleep", &m).is_empty()).await,
        "survivors after cancellation: {:?}",
        processes("sleep", &m)
    );
    // The call itself finished promptly: its outcome record is in the audit log.
    let audit = dir.path().join("state/audit.jsonl");
    let recorded = wait_until(Duration::from_secs(3), || {
        std::fs::read_to_string(&audit)
            .map(|t| t.lines().any(|l| l.contains("cancelled by the client")))
            .unwrap_or(false)
    })
    .await;
    assert!(recorded, "no outcome record for the cancelled call");
    assert!(cancelled_at.elapsed() < Duration::from_secs(3));
    // The server is still serving.
    let e = client::call(&session, "run_command", json!({"command": "true"}))
        .await
        .unwrap();
    assert_eq!(e["code"], "OK", "{e}");
    session.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_server_takes_its_running_commands_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path(), "");
    let policy_arg = policy.to_string_lossy().into_owned();
    let session = client::connect(&bin(), &["terminal", "--config", &policy_arg], &[])
        .await
        .unwrap();
    let m = marker();
    let command = format!("sh -c \"setsid sleep {m} & sleep {m}\"");
    let peer = session.peer().clone();
    let call = tokio::spawn(async move {
        let params = CallToolRequestParams::new("run_command").with_arguments(
            json!({ "command": command })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        peer.call_tool(params).await
    });
    assert!(
        wait_until(Duration::from_secs(10), || processes("sleep", &m).len()
            == 2)
        .await,
        "the sleeps never started"
    );
    // SIGKILL the server: no clean-up code of its own runs.
    let bin_path = bin().to_string_lossy().into_owned();
    let servers: Vec<(i32, String)> = processes(&bin_path, &policy_arg)
        .into_iter()
        .filter(|(_, cmd)| cmd.contains(" terminal "))
        .collect();
    assert_eq!(servers.len(), 1, "{servers:?}");
    let _ = std::process::Command::new("kill")
        .args(["-9", &servers[0].0.to_string()])
        .status();
    assert!(
        wait_until(Duration::from_secs(3), || processes("sleep", &m).is_empty()).await,
        "commands outlived their server: {:?}",
        processes("sleep", &m)
    );
    call.abort();
}

/// The cgroup reapers (`<launcher> __reaper <folder>...`) a server with pid `server`
/// started: their command line names its `safe-mcp.<server>.` folders.
fn reapers_of(server: u32) -> Vec<(i32, String)> {
    let folder = format!("/safe-mcp.{server}.");
    live_processes()
        .into_iter()
        .filter(|(_, args)| {
            args.get(1).is_some_and(|a| a == "__reaper") && args.iter().any(|a| a.contains(&folder))
        })
        .map(|(pid, args)| (pid, args.join(" ")))
        .collect()
}

/// A server that ends normally (its stdin closed) leaves no reaper behind: the reaper sees
/// EOF on its pipe and exits on its own.
#[tokio::test(flavor = "multi_thread")]
async fn the_reaper_exits_when_its_server_exits_normally() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path(), "");
    let mut server = tokio::process::Command::new(bin())
        .args(["terminal", "--config"])
        .arg(&policy)
        .env_clear()
        .env("SAFE_MCP_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = server.id().unwrap();
    let started = wait_until(Duration::from_secs(20), || !reapers_of(pid).is_empty()).await;
    let report = tokio::time::timeout(Duration::from_secs(20), async {
        let probe = client::connect(
            &bin(),
            &["terminal", "--config", &policy.to_string_lossy()],
            &[],
        )
        .await
        .unwrap();
        let e = client::call(&probe, "run_command", json!({"command": "true"}))
            .await
            .unwrap();
        probe.cancel().await.ok();
        crate::recorded::recorded_report(&dir.path().join("state/audit.jsonl"), &e).unwrap()
    })
    .await
    .unwrap();
    if !skip_unless(
        &report,
        "cgroup v2 cgroup.kill (the reaper's host)",
        report["mechanisms"]["cgroup"]["kill"] == true,
    ) {
        return;
    }
    assert!(started, "the server started no cgroup reaper");
    let reapers = reapers_of(pid);
    assert_eq!(reapers.len(), 1, "{reapers:?}");
    // A clean end: stdin closed, the server returns from main.
    drop(server.stdin.take());
    let status = tokio::time::timeout(Duration::from_secs(20), server.wait())
        .await
        .unwrap()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        None,
        "the server did not exit on its own: {status}"
    );
    assert!(
        wait_until(Duration::from_secs(5), || reapers_of(pid).is_empty()).await,
        "the reaper outlived its server's clean exit: {:?}",
        reapers_of(pid)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn start_up_prints_one_sandbox_summary_line_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path(), "");
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::process::Command::new(bin())
            .args(["terminal", "--config"])
            .arg(&policy)
            .env_clear()
            .env("SAFE_MCP_LOG", "info")
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("kernel sandbox ("))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("standard profile"), "{stderr}");
    assert!(lines[0].contains("tree kill by"), "{stderr}");
}

/// The benchmark's wiring works (a few rounds; figures are not asserted here).
#[tokio::test(flavor = "multi_thread")]
async fn sandbox_benchmark_runs_both_servers() {
    let rounds = std::env::var("SANDBOX_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    bench_sandbox::run(&bin(), rounds).await.unwrap();
}
