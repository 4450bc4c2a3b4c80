//! `safe-mcp bench`: measured figures, each side by side with its baseline in one run
//! (ratios, not absolute timings, are the claim; machines are noisy).

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;

use crate::client;
use crate::demo::make_sandbox;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples.get(index).copied().unwrap_or_default()
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The floor `run_command` cannot beat: spawn and collect `echo hi`, plus two durable appends
/// (write + fsync) of audit-record-sized lines.
async fn floor_once(log: &mut std::fs::File, record: &[u8]) -> Result<()> {
    log.write_all(record)?;
    log.sync_data()?;
    let out = tokio::process::Command::new("echo")
        .arg("hi")
        .stdin(std::process::Stdio::null())
        .output()
        .await?;
    anyhow::ensure!(out.stdout == b"hi\n");
    log.write_all(record)?;
    log.sync_data()?;
    Ok(())
}

async fn spawn_once() -> Result<()> {
    let out = tokio::process::Command::new("echo")
        .arg("hi")
        .stdin(std::process::Stdio::null())
        .output()
        .await?;
    anyhow::ensure!(out.stdout == b"hi\n");
    Ok(())
}

/// Run the benchmark with `iterations` rounds of each measurement, interleaved.
pub async fn run(iterations: usize) -> Result<()> {
    let bin = std::env::current_exe().context("locating the safe-mcp binary")?;
    let dir = tempfile::Builder::new()
        .prefix("safe-mcp-bench-")
        .tempdir()?;
    let policy = make_sandbox(dir.path())?;
    let session = client::connect(
        &bin,
        &["terminal", "--config", &policy.to_string_lossy()],
        &[],
    )
    .await?;
    let mut floor_log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.path().join("state").join("floor.jsonl"))?;
    let record = vec![b'x'; 400];
    let echo = json!({ "command": "echo hi" });
    let explain = json!({ "command": "git log --oneline -n 5" });

    // Warm up every path once.
    client::call(&session, "run_command", echo.clone()).await?;
    client::call(&session, "explain_command", explain.clone()).await?;
    floor_once(&mut floor_log, &record).await?;

    let (mut rt, mut floor, mut bare, mut ex) = (vec![], vec![], vec![], vec![]);
    for _ in 0..iterations {
        let t = Instant::now();
        let env = client::call(&session, "run_command", echo.clone()).await?;
        rt.push(t.elapsed());
        anyhow::ensure!(
            env["detail"]["stdout"] == "hi\n",
            "unexpected envelope {env}"
        );
        let t = Instant::now();
        floor_once(&mut floor_log, &record).await?;
        floor.push(t.elapsed());
        let t = Instant::now();
        spawn_once().await?;
        bare.push(t.elapsed());
        let t = Instant::now();
        client::call(&session, "explain_command", explain.clone()).await?;
        ex.push(t.elapsed());
    }
    session.cancel().await.ok();
    let (rt50, fl50, bare50, ex50) = (
        percentile(&mut rt, 0.5),
        percentile(&mut floor, 0.5),
        percentile(&mut bare, 0.5),
        percentile(&mut ex, 0.5),
    );
    println!("safe-mcp bench ({iterations} interleaved rounds, medians)");
    println!(
        "  run_command \"echo hi\" MCP round trip : {:>9.1} µs",
        micros(rt50)
    );
    println!(
        "  floor: spawn echo + 2 × write+fsync  : {:>9.1} µs   ratio {:.2}× (target ≤ 1.15×)",
        micros(fl50),
        micros(rt50) / micros(fl50)
    );
    println!(
        "  bare spawn-and-collect of echo       : {:>9.1} µs   ratio {:.2}×",
        micros(bare50),
        micros(rt50) / micros(bare50)
    );
    println!(
        "  explain_command MCP round trip p50   : {:>9.1} µs   (target < 100 µs); p99 {:.1} µs",
        micros(ex50),
        micros(percentile(&mut ex, 0.99))
    );
    Ok(())
}

/// Make sure a path given to the benchmark exists (used by tests of the bench wiring).
pub fn ensure_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path)?;
    Ok(())
}
