//! `--example bench -- --sandbox`: what the kernel sandbox costs. `run_command "true"` through
//! two servers on the same policy, one with the full sandbox (launcher, cgroups,
//! namespaces, Landlock, seccomp, rlimits) and one with `SAFE_MCP_SANDBOX_ENABLED=false`,
//! interleaved round by round, medians side by side and their ratio (target ≤ 1.5×).
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "benchmark harness: a failure aborts the measurement, and indices come from its own tables"
)]

use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::json;

use crate::bench::{micros, percentile, timed, timed_async};
use crate::line_client::LineClient;
use safe_mcp::client;
use safe_mcp::demo::make_sandbox;

/// `e` when its call ran and succeeded.
fn succeeded(e: serde_json::Value) -> Result<serde_json::Value> {
    ensure!(e["code"] == "OK", "run failed: {e}");
    Ok(e)
}

/// How many calls recorded in the audit log `log` took a launcher started ahead of them
/// (the result says it only in the record's whole report).
fn took_ahead(log: &std::path::Path) -> Result<usize> {
    Ok(crate::recorded::run_outcomes(log)
        .map_err(anyhow::Error::msg)?
        .iter()
        .filter(|r| r["sandbox"]["mechanisms"]["launcher_started_ahead"] == true)
        .count())
}

/// Run the comparison against the `safe-mcp` binary `bin` with `iterations` interleaved
/// rounds.
pub(crate) async fn run(bin: &std::path::Path, iterations: usize) -> Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("safe-mcp-bench-sandbox-")
        .tempdir()?;
    let policy = make_sandbox(dir.path())?;
    let policy = policy.to_string_lossy();
    let args = ["terminal", "--config", policy.as_ref()];
    let on = client::connect(bin, &args, &[]).await?;
    let off = client::connect(bin, &args, &[("SAFE_MCP_SANDBOX_ENABLED", "false")]).await?;
    let call = json!({ "command": "true" });

    // Warm up both paths, and check each is what it claims to be, by its recorded report
    // (the sandbox off is a downgrade: that result carries the whole report too).
    let log = dir.path().join("state/audit.jsonl");
    let launched = |e: &serde_json::Value| -> Result<bool> {
        let report = crate::recorded::recorded_report(&log, e).map_err(anyhow::Error::msg)?;
        Ok(report["mechanisms"]["launcher"] == true)
    };
    let e = client::call(&on, "run_command", call.clone()).await?;
    ensure!(
        launched(&e)?,
        "the sandboxed server did not use the launcher: {e}"
    );
    let e = client::call(&off, "run_command", call.clone()).await?;
    ensure!(
        !launched(&e)?,
        "the unsandboxed server used the launcher: {e}"
    );

    // The server whose launchers started ahead are counted writes a log of its own.
    let ahead_log = dir.path().join("state/bench-sandbox-on.jsonl");
    let ahead_env = ahead_log.to_string_lossy().into_owned();
    let mut lean_on = LineClient::start(bin, &args, &[("SAFE_MCP_AUDIT_LOG", &ahead_env)])?;
    let mut lean_off = LineClient::start(bin, &args, &[("SAFE_MCP_SANDBOX_ENABLED", "false")])?;
    // The full sandbox but without the read-only view (its mount namespace): what the view
    // itself costs, side by side.
    let mut lean_no_view =
        LineClient::start(bin, &args, &[("SAFE_MCP_SANDBOX_NAMESPACES", "false")])?;
    for lean in [&mut lean_on, &mut lean_off, &mut lean_no_view] {
        lean.call("run_command", &call)?;
    }

    let (mut with, mut without) = (Vec::new(), Vec::new());
    let (mut lean_with, mut lean_without) = (Vec::new(), Vec::new());
    let before = took_ahead(&ahead_log)?;
    for _ in 0..iterations {
        succeeded(timed(&mut lean_with, || {
            lean_on.call("run_command", &call)
        })?)?;
        succeeded(timed(&mut lean_without, || {
            lean_off.call("run_command", &call)
        })?)?;
        succeeded(timed_async(&mut with, client::call(&on, "run_command", call.clone())).await?)?;
        succeeded(
            timed_async(
                &mut without,
                client::call(&off, "run_command", call.clone()),
            )
            .await?,
        )?;
    }
    // Paced: as a model uses the tools, with time between calls (here 5 ms of idle before
    // each call; a model thinks for far longer): each call is timed on an idle machine.
    let (mut paced_with, mut paced_without) = (Vec::new(), Vec::new());
    let mut paced_no_view = Vec::new();
    let started_ahead = took_ahead(&ahead_log)? - before;
    for _ in 0..iterations {
        std::thread::sleep(Duration::from_millis(5));
        succeeded(timed(&mut paced_no_view, || {
            lean_no_view.call("run_command", &call)
        })?)?;
        std::thread::sleep(Duration::from_millis(5));
        succeeded(timed(&mut paced_with, || {
            lean_on.call("run_command", &call)
        })?)?;
        std::thread::sleep(Duration::from_millis(5));
        succeeded(timed(&mut paced_without, || {
            lean_off.call("run_command", &call)
        })?)?;
    }
    let (pw50, po50) = (
        percentile(&mut paced_with, 0.5),
        percentile(&mut paced_without, 0.5),
    );
    let pn50 = percentile(&mut paced_no_view, 0.5);
    // Back to back: blocks of 20 calls to one server, then 20 to the other, so the
    // launcher for the next call is started while the sandboxed server is busy with its own
    // calls (no other server's call in between to hide it behind).
    let (mut b2b_with, mut b2b_without) = (Vec::new(), Vec::new());
    let paced_ahead = took_ahead(&ahead_log)? - before - started_ahead;
    for _ in 0..iterations.div_ceil(20) {
        for _ in 0..20 {
            succeeded(timed(&mut b2b_with, || lean_on.call("run_command", &call))?)?;
        }
        for _ in 0..20 {
            succeeded(timed(&mut b2b_without, || {
                lean_off.call("run_command", &call)
            })?)?;
        }
    }
    let b2b_ahead = took_ahead(&ahead_log)? - before - started_ahead - paced_ahead;
    on.cancel().await.ok();
    off.cancel().await.ok();
    drop((lean_on, lean_off, lean_no_view));
    let (bw50, bo50) = (
        percentile(&mut b2b_with, 0.5),
        percentile(&mut b2b_without, 0.5),
    );
    let (lw50, lo50) = (
        percentile(&mut lean_with, 0.5),
        percentile(&mut lean_without, 0.5),
    );
    let (w50, o50) = (percentile(&mut with, 0.5), percentile(&mut without, 0.5));
    let (w90, o90) = (percentile(&mut with, 0.9), percentile(&mut without, 0.9));
    println!("bench --sandbox ({iterations} interleaved rounds)");
    println!("  interleaved call by call, through the lean line client:");
    println!(
        "  run_command \"true\", sandbox off : p50 {:>9.1} µs",
        micros(lo50)
    );
    println!(
        "  run_command \"true\", full sandbox: p50 {:>9.1} µs",
        micros(lw50)
    );
    println!(
        "  ratio (p50)                     : {:.2}×   (target ≤ 1.5×)",
        micros(lw50) / micros(lo50)
    );
    println!(
        "  sandboxed calls taken by a launcher started ahead: {started_ahead} of {iterations}"
    );
    println!("  paced (5 ms idle before each call, as between a model's calls), lean line client:");
    println!(
        "  run_command \"true\", sandbox off : p50 {:>9.1} µs",
        micros(po50)
    );
    println!(
        "  run_command \"true\", full sandbox: p50 {:>9.1} µs",
        micros(pw50)
    );
    println!(
        "  ratio (p50)                     : {:.2}×   (target ≤ 1.5×); started ahead: {paced_ahead} of {iterations}",
        micros(pw50) / micros(po50)
    );
    println!(
        "  run_command \"true\", no view    : p50 {:>9.1} µs   (full sandbox with namespaces off: {:.2}× sandbox off)",
        micros(pn50),
        micros(pn50) / micros(po50)
    );
    println!("  back to back (blocks of 20 calls per server), lean line client:");
    println!(
        "  run_command \"true\", sandbox off : p50 {:>9.1} µs",
        micros(bo50)
    );
    println!(
        "  run_command \"true\", full sandbox: p50 {:>9.1} µs",
        micros(bw50)
    );
    println!(
        "  ratio (p50)                     : {:.2}×   (target ≤ 1.5×); started ahead: {b2b_ahead} of {}",
        micros(bw50) / micros(bo50),
        b2b_with.len()
    );
    println!("  interleaved, through the rmcp client:");
    println!(
        "  run_command \"true\", sandbox off : p50 {:>9.1} µs   p90 {:>9.1} µs",
        micros(o50),
        micros(o90)
    );
    println!(
        "  run_command \"true\", full sandbox: p50 {:>9.1} µs   p90 {:>9.1} µs",
        micros(w50),
        micros(w90)
    );
    println!(
        "  ratio (p50)                     : {:.2}×   (target ≤ 1.5×)",
        micros(w50) / micros(o50)
    );
    Ok(())
}
