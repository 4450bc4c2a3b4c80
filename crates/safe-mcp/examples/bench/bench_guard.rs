//! `--example bench -- --guard`: what the guard adds to a command. On the demo policy with
//! one guard entry for `/bin/echo`, side by side and interleaved round by round:
//!
//! 1. in process (no MCP): `guard_exec echo hi` against the terminal's `run_command
//!    "echo hi"`, both with the full sandbox, on cores started from the same policy (target
//!    ≤ 1.05×: the guard adds a registry look-up, a canonical hash and a replay look-up);
//! 2. the same two over MCP (a `safe-mcp guard` and a `safe-mcp terminal` server, one line
//!    client each);
//! 3. `safe-mcp exec` for one call (a whole process: policy load, sandbox probe, the call)
//!    against a bare spawn of `/bin/echo hi`.
//!
//! The replay look-up with 10 000 entries is `cargo run --release -p safety --example
//! replay_bench`.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "benchmark harness: a failure aborts the measurement, and indices come from its own tables"
)]

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use crate::bench::{micros, percentile, timed, timed_async};
use crate::line_client::LineClient;
use safe_mcp::demo::make_sandbox;

/// The guard entry the benchmark adds to the demo policy.
const GUARD_SECTION: &str = r#"
[[guard.tools]]
name = "echo"
executable = "/bin/echo"
args_patterns = ["[a-z]{1,16}"]
examples_allow = [["hi"]]
"#;

fn said_hi(e: &Value) -> Result<()> {
    ensure!(e["detail"]["stdout"] == "hi\n", "unexpected envelope {e}");
    Ok(())
}

fn p50(samples: &mut [Duration]) -> f64 {
    micros(percentile(samples, 0.5))
}

/// Run the comparison against the `safe-mcp` binary `bin` with `iterations` rounds.
pub(crate) async fn run(bin: &Path, iterations: usize) -> Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("safe-mcp-bench-guard-")
        .tempdir()?;
    let policy = make_sandbox(dir.path())?;
    let mut text = std::fs::read_to_string(&policy)?;
    text.push_str(GUARD_SECTION);
    std::fs::write(&policy, text)?;
    let policy_arg = policy.to_string_lossy().into_owned();
    let run_args = json!({ "command": "echo hi" });
    let guard_args = json!({ "toolName": "echo", "command": "/bin/echo", "args": ["hi"] });

    // 1. In process.
    let load = |server| safety::config::load(&policy, server, &[]);
    // Commands start through the server binary's launcher mode (this example has none).
    let launcher = bin.to_path_buf();
    let terminal = safety::terminal::TerminalCore::start_with_launcher(
        load(safety::config::Server::Terminal)?,
        launcher.clone(),
    )?;
    let guard = safety::guard::GuardCore::start_with_launcher(
        load(safety::config::Server::Guard)?,
        launcher,
    )?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let (mut run_in, mut guard_in) = (Vec::new(), Vec::new());
    for round in 0..=iterations {
        let (mut r, mut g) = (Vec::new(), Vec::new());
        let e = timed_async(&mut r, terminal.run_command(run_args.as_object(), &cancel)).await;
        said_hi(&e.to_value())?;
        let e = timed_async(&mut g, guard.guard_exec(guard_args.as_object(), &cancel)).await;
        said_hi(&e.to_value())?;
        if round > 0 {
            // Round 0 warms both up.
            run_in.extend(r);
            guard_in.extend(g);
        }
    }
    drop((terminal, guard));

    // 2. Over MCP, a line client each.
    let mut term = LineClient::start(bin, &["terminal", "--config", &policy_arg], &[])?;
    let mut grd = LineClient::start(bin, &["guard", "--config", &policy_arg], &[])?;
    said_hi(&term.call("run_command", &run_args)?)?;
    said_hi(&grd.call("guard_exec", &guard_args)?)?;
    let (mut run_mcp, mut guard_mcp) = (Vec::new(), Vec::new());
    for _ in 0..iterations {
        said_hi(&timed(&mut run_mcp, || {
            term.call("run_command", &run_args)
        })?)?;
        said_hi(&timed(&mut guard_mcp, || {
            grd.call("guard_exec", &guard_args)
        })?)?;
    }
    drop((term, grd));

    // 3. One `safe-mcp exec` process against a bare spawn of the same command.
    let exec_rounds = (iterations / 10).max(10);
    let (mut exec, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..exec_rounds {
        let out = timed(&mut exec, || {
            std::process::Command::new(bin)
                .args(["exec", "--config", &policy_arg, "--tool", "echo", "--"])
                .args(["/bin/echo", "hi"])
                .stderr(std::process::Stdio::null())
                .output()
        })?;
        ensure!(out.status.success(), "safe-mcp exec failed: {out:?}");
        let envelope: Value = serde_json::from_slice(&out.stdout)?;
        said_hi(&envelope)?;
        let out = timed(&mut bare, || {
            std::process::Command::new("/bin/echo").arg("hi").output()
        })?;
        ensure!(out.stdout == b"hi\n", "bare echo failed");
    }

    let (r, g) = (p50(&mut run_in), p50(&mut guard_in));
    let (rm, gm) = (p50(&mut run_mcp), p50(&mut guard_mcp));
    let (e, b) = (p50(&mut exec), p50(&mut bare));
    println!("guard, full sandbox, {iterations} interleaved rounds (p50):");
    println!(
        "  guard_exec echo hi, in process   : {g:>9.1} µs   vs run_command \"echo hi\" {r:.1} µs: {:.3}× (target ≤ 1.05×)",
        g / r
    );
    println!(
        "  guard_exec echo hi, MCP line     : {gm:>9.1} µs   vs run_command \"echo hi\" {rm:.1} µs: {:.3}×",
        gm / rm
    );
    println!(
        "  safe-mcp exec, one call ({exec_rounds} runs): {e:>9.1} µs   vs a bare spawn of /bin/echo hi {b:.1} µs: {:.1}×",
        e / b
    );
    Ok(())
}
