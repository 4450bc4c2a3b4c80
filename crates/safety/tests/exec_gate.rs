//! The start gate: a command's process is created (and, with the sandbox, confined) while
//! the audit intent record is being synced, but it does not `execve` until the gate opens.
//! Real processes in temporary folders, with the sandbox off and through the launcher.

use std::path::{Path, PathBuf};
use std::time::Duration;

use safety::exec::profile::{Profile, effective_limits};
use safety::exec::{ExecError, ExecRequest, Executor, Gate, SandboxConfig};
use safety::jail::Jail;
use tokio_util::sync::CancellationToken;

fn jail() -> (tempfile::TempDir, Jail) {
    let dir = tempfile::Builder::new()
        .prefix("safe-mcp-gate-")
        .tempdir()
        .unwrap();
    let root = dir.path().canonicalize().unwrap();
    let jail = Jail::open(&root).unwrap();
    (dir, jail)
}

fn executors(root: &Path) -> Vec<(&'static str, Executor)> {
    let launcher = PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp-sandbox-exec"));
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    vec![
        ("sandbox off", Executor::new()),
        (
            "launcher",
            Executor::sandboxed(SandboxConfig {
                launcher,
                jail_root: root.to_path_buf(),
                read_paths: safety::exec::filesystem::read_paths(&[], &path),
                require: false,
                namespaces: true,
                cgroups: true,
                view: true,
                run_as: None,
            }),
        ),
    ]
}

fn touch_request<'a>(
    cwd: &'a safety::jail::ContainedDir,
    gate: Option<&'a Gate>,
) -> ExecRequest<'a> {
    ExecRequest {
        program: PathBuf::from("/usr/bin/touch"),
        args: vec!["marker".into()],
        argv0: "touch".into(),
        cwd,
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        profile: Profile::Standard,
        limits: effective_limits(Profile::Standard, 30, 65536, None).unwrap(),
        gate,
        hash_output: false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_gate_means_the_command_never_runs() {
    let (dir, jail) = jail();
    for (name, executor) in executors(jail.root()) {
        let cwd = jail.resolve_cwd(None).unwrap();
        let (gate, opener) = Gate::new().unwrap();
        let request = touch_request(&cwd, Some(&gate));
        opener.refuse();
        let result = executor.run(&request, &CancellationToken::new()).await;
        assert!(
            !dir.path().join("marker").exists(),
            "{name}: the command ran although the gate was refused"
        );
        match (name, result) {
            // Without the launcher the child reports the refusal before execve.
            ("sandbox off", Err(ExecError::Spawn(e))) => {
                assert!(e.to_string().contains("audit intent record"), "{name}: {e}")
            }
            // The launcher reports it in its refusal line.
            ("launcher", Err(ExecError::SandboxRequired { reason, .. })) => {
                assert!(reason.contains("audit intent record"), "{name}: {reason}")
            }
            (name, other) => panic!("{name}: unexpected result {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_opener_refuses_too() {
    let (dir, jail) = jail();
    for (name, executor) in executors(jail.root()) {
        let cwd = jail.resolve_cwd(None).unwrap();
        let (gate, opener) = Gate::new().unwrap();
        drop(opener);
        let request = touch_request(&cwd, Some(&gate));
        let result = executor.run(&request, &CancellationToken::new()).await;
        assert!(result.is_err(), "{name}: {result:?}");
        assert!(!dir.path().join("marker").exists(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_command_waits_at_the_gate_until_it_opens() {
    let (dir, jail) = jail();
    for (name, executor) in executors(jail.root()) {
        let _ = std::fs::remove_file(dir.path().join("marker"));
        let cwd = jail.resolve_cwd(None).unwrap();
        let (gate, opener) = Gate::new().unwrap();
        let marker = dir.path().join("marker");
        // Another thread plays the audit syncer: it checks that nothing ran while the gate
        // was closed, then opens it.
        let watcher = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let ran_early = marker.exists();
            opener.open();
            ran_early
        });
        let request = touch_request(&cwd, Some(&gate));
        let outcome = executor
            .run(&request, &CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(outcome.exit_code, Some(0), "{name}: {outcome:?}");
        assert!(
            !watcher.join().unwrap(),
            "{name}: ran before the gate opened"
        );
        assert!(dir.path().join("marker").exists(), "{name}: did not run");
    }
}
