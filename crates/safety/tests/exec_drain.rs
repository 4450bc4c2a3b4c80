//! The drain deadline (`exec::capture::drain`): after a timeout, an overflow or a normal
//! exit, the process group is killed and the pipes are drained for at most
//! [`safety::exec::DRAIN_DEADLINE`]. A process that left the group with `setsid` and still
//! holds stdout open must not hang the call; the result then says `output_incomplete`.
//!
//! The sandbox is OFF here on purpose: with it on, the call's cgroup (or PID namespace) kills
//! the escaped process before the drain, and the deadline is never reached. Real processes;
//! each escaped `sleep` carries a unique marker argument and is killed by the test at the end.

use std::time::{Duration, Instant};

use crate::sandbox_common::*;
use serde_json::{Value, json};

/// The escaped process sleeps 1000+ s; a call that waited for it would take that long.
/// The bound leaves room for the 1 s timeout, the 0.5 s drain and a slow, loaded machine.
const BOUND: Duration = Duration::from_secs(8);

fn sandbox_off() -> Setup {
    Setup::new(&Options {
        enabled: false,
        namespaces: false,
        cgroups: false,
        ..Options::default()
    })
}

/// The envelope with long outputs cut, for assertion messages.
fn brief(e: &Value) -> Value {
    let mut e = e.clone();
    for stream in ["stdout", "stderr"] {
        if let Some(text) = e["detail"][stream].as_str() {
            let cut: String = text.chars().take(120).collect();
            e["detail"][stream] = json!(cut);
        }
    }
    e
}

/// Kills every process carrying the marker when dropped, also when an assertion failed.
struct KillOnDrop(Marker);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in self.0.pids() {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// A command that forks a child which leaves the session and process group (`setsid`)
/// and becomes a long `sleep` holding stdout and stderr; only once the child has left
/// does the parent go on with `then` (Python statements), so no race with the group kill
/// decides whether there is an escapee.
fn escapee_then(marker: &Marker, then: &str) -> String {
    format!(
        "python3 -c \"import os; r, w = os.pipe(); pid = os.fork(); \
         os.setsid() if pid == 0 else os.read(r, 1); \
         pid == 0 and os.write(w, b'x'); \
         pid == 0 and os.execvp('sleep', ['sleep', '{}']); \
         {then}\"",
        marker.sleep_arg()
    )
}

/// Run the [`escapee_then`] command and check that the call came back promptly although
/// the escaped process still holds its stdout.
async fn escaped_holder_does_not_hang(
    t: &Setup,
    then: &str,
    timeout_seconds: Option<u64>,
) -> (Value, KillOnDrop) {
    let guard = KillOnDrop(Marker::new());
    let command = escapee_then(&guard.0, then);
    let mut args = json!({ "command": command });
    if let Some(s) = timeout_seconds {
        args["timeout_seconds"] = json!(s);
    }
    let started = Instant::now();
    let e = t.run(args).await;
    let shown = brief(&e);
    let took = started.elapsed();
    assert!(
        took < BOUND,
        "{command}: the call took {took:?}, waiting for a process that left the group: {shown}"
    );
    // It came back at or after the drain deadline: the drain really waited, then gave up.
    assert!(took >= safety::exec::DRAIN_DEADLINE, "{command}: {took:?}");
    // The escaped process is alive after the call: it really outlived the group kill and
    // was still holding the pipe, so the call did not come back because the pipe closed.
    let alive = guard.0.pids();
    assert_eq!(
        alive.len(),
        1,
        "{command}: escaped process {alive:?}: {shown}"
    );
    let holds_stdout = std::fs::read_link(format!("/proc/{}/fd/1", alive[0]))
        .map(|l| l.to_string_lossy().starts_with("pipe:"))
        .unwrap_or(false);
    assert!(
        holds_stdout,
        "{command}: the escaped process has no pipe on fd 1"
    );
    assert_eq!(e["detail"]["output_incomplete"], true, "{command}: {shown}");
    (e, guard)
}

#[tokio::test(flavor = "multi_thread")]
async fn setsid_escapee_holding_stdout_past_a_timeout_does_not_hang_the_call() {
    let t = sandbox_off();
    assert_eq!(
        t.core.sandbox_probe().to_value()["mechanisms"]["tree_kill"],
        "process group",
        "this test needs the process-group kill only"
    );
    // The output written before the timeout is kept.
    let (e, _guard) = escaped_holder_does_not_hang(
        &t,
        "print('before-the-timeout', flush=True); os.execvp('sleep', ['sleep', '30'])",
        Some(1),
    )
    .await;
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert_eq!(e["detail"]["killed"], true, "{e}");
    assert_eq!(e["detail"]["stdout"], "before-the-timeout\n", "{e}");

    // Control: the same timeout without an escapee is complete (the flag is not always set).
    let e = t
        .run(json!({"command": "sh -c \"echo x; exec sleep 30\"", "timeout_seconds": 1}))
        .await;
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert!(e["detail"].get("output_incomplete").is_none(), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn setsid_escapee_holding_stdout_past_an_overflow_does_not_hang_the_call() {
    let t = sandbox_off();
    // `yes` passes the overflow threshold (16 x the cap, at least 1 MiB) within moments.
    let (e, _guard) = escaped_holder_does_not_hang(&t, "os.execvp('yes', ['yes'])", None).await;
    let shown = brief(&e);
    assert_eq!(e["code"], "OUTPUT_TRUNCATED", "{shown}");
    assert_eq!(e["detail"]["killed"], true, "{shown}");
    assert_eq!(e["detail"]["truncated"], true, "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn setsid_escapee_holding_stdout_after_a_normal_exit_does_not_hang_the_call() {
    let t = sandbox_off();
    let (e, _guard) = escaped_holder_does_not_hang(&t, "print('done')", None).await;
    assert_eq!(e["code"], "OK", "{e}");
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    assert_eq!(e["detail"]["stdout"], "done\n", "{e}");
    assert!(e["detail"].get("killed").is_none(), "{e}");

    // Control: a backgrounded child that stays in the group dies with it; output complete.
    let marker = Marker::new();
    let e = t
        .run(json!({"command": format!("sh -c \"echo done; sleep {} &\"", marker.sleep_arg())}))
        .await;
    assert_eq!(e["code"], "OK", "{e}");
    assert!(e["detail"].get("output_incomplete").is_none(), "{e}");
    assert_eq!(marker.survivors(), Vec::<String>::new(), "{e}");
}
