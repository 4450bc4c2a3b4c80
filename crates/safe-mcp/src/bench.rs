//! `safe-mcp bench`: measured figures, each side by side with its baseline in one run
//! (ratios, not absolute timings, are the claim; machines are noisy).

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;

use crate::client;
use crate::demo::make_sandbox;

/// The `p`-quantile (0.0–1.0) of `samples` (sorted in place).
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples.get(index).copied().unwrap_or_default()
}

/// A duration in microseconds.
pub fn micros(d: Duration) -> f64 {
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
    let plain = client::connect(
        &bin,
        &["terminal", "--config", &policy.to_string_lossy()],
        &[("SAFE_MCP_SANDBOX_ENABLED", "false")],
    )
    .await?;
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

    let (mut rt, mut floor, mut bare, mut ex, mut mcp) = (vec![], vec![], vec![], vec![], vec![]);
    let mut rt_plain = vec![];
    client::call(&plain, "run_command", echo.clone()).await?;
    for _ in 0..iterations {
        let t = Instant::now();
        let env = client::call(&session, "run_command", echo.clone()).await?;
        rt.push(t.elapsed());
        anyhow::ensure!(
            env["detail"]["stdout"] == "hi\n",
            "unexpected envelope {env}"
        );
        let t = Instant::now();
        let env = client::call(&plain, "run_command", echo.clone()).await?;
        rt_plain.push(t.elapsed());
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
        // The MCP floor: an unknown tool is answered with an envelope and nothing else.
        let t = Instant::now();
        client::call(&session, "no_such_tool", json!({})).await?;
        mcp.push(t.elapsed());
    }
    session.cancel().await.ok();
    plain.cancel().await.ok();
    let audit = audit_append_vs_bare(dir.path(), iterations.max(200))?;
    let core_explain = explain_in_process(&policy, iterations.max(200))?;
    let core_run = run_in_process(&policy, iterations.max(200)).await?;
    let redaction = redaction_throughput()?;
    let (rt50, fl50, bare50, ex50) = (
        percentile(&mut rt, 0.5),
        percentile(&mut floor, 0.5),
        percentile(&mut bare, 0.5),
        percentile(&mut ex, 0.5),
    );
    println!("safe-mcp bench ({iterations} interleaved rounds, medians)");
    let plain50 = percentile(&mut rt_plain, 0.5);
    println!(
        "  floor: spawn echo + 2 × write+fsync  : {:>9.1} µs",
        micros(fl50)
    );
    println!(
        "  bare spawn-and-collect of echo       : {:>9.1} µs",
        micros(bare50)
    );
    println!(
        "  run_command \"echo hi\", sandbox off  : {:>9.1} µs   vs floor {:.2}× (target ≤ 1.15×), vs bare spawn {:.2}×",
        micros(plain50),
        micros(plain50) / micros(fl50),
        micros(plain50) / micros(bare50)
    );
    println!(
        "  run_command \"echo hi\", full sandbox : {:>9.1} µs   vs floor {:.2}×, vs bare spawn {:.2}×",
        micros(rt50),
        micros(rt50) / micros(fl50),
        micros(rt50) / micros(bare50)
    );
    println!(
        "  explain_command MCP round trip p50   : {:>9.1} µs   (target < 100 µs); p99 {:.1} µs",
        micros(ex50),
        micros(percentile(&mut ex, 0.99))
    );
    println!(
        "  MCP floor: unknown-tool round trip    : {:>9.1} µs   (explain / floor {:.2}×)",
        micros(percentile(&mut mcp, 0.5)),
        micros(ex50) / micros(percentile(&mut mcp, 0.5))
    );
    println!(
        "  explain_command in-process (core only): {:>8.1} µs",
        micros(core_explain)
    );
    println!(
        "  run_command in-process, sandbox off   : {:>8.1} µs   (core only, no MCP)",
        micros(core_run)
    );
    println!(
        "  audit append (redact+hash+write+fsync): {:>8.1} µs   vs bare write+fsync {:.1} µs: ratio {:.2}× (target ≤ 1.1×)",
        micros(audit.0),
        micros(audit.1),
        micros(audit.0) / micros(audit.1)
    );
    println!(
        "  redaction, 64 KiB outputs, all rules : {:>9.1} MB/s  (plain copy {:.0} MB/s; target ≥ 500 MB/s)",
        redaction.0, redaction.1
    );
    Ok(())
}

/// A realistic 64 KiB command output: listing and log lines with a few secrets in it.
fn realistic_output() -> String {
    let mut text = String::new();
    let mut n = 0u64;
    while text.len() < 64 * 1024 {
        n += 1;
        text.push_str(&format!(
            "-rw-r--r-- 1 dev dev {:>6} Nov 30 02:{:02} src/module_{n}/file_{n}.rs\n{:07x} Fix the thing in module {n} (refs #{n}): handle the edge case\n",
            n * 37 % 99_991,
            n % 60,
            n.wrapping_mul(0x9E37_79B9) & 0xFFF_FFFF
        ));
        if n.is_multiple_of(300) {
            text.push_str("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLQ\n");
        }
    }
    text.truncate(64 * 1024);
    text
}

/// MB/s of `Redactor::redact` over 64 KiB outputs, and of a plain copy of the same bytes.
fn redaction_throughput() -> Result<(f64, f64)> {
    let redactor = safety::redact::Redactor::new(&safety::redact::RedactionSettings::default())?;
    let text = realistic_output();
    let rounds = 400;
    let (mut redact, mut copy) = (Duration::ZERO, Duration::ZERO);
    let mut sink = 0usize;
    for _ in 0..rounds {
        let t = Instant::now();
        sink += redactor.redact(&text).len();
        redact += t.elapsed();
        let t = Instant::now();
        sink += std::hint::black_box(text.clone()).len();
        copy += t.elapsed();
    }
    std::hint::black_box(sink);
    let mb = (text.len() * rounds) as f64 / 1e6;
    Ok((mb / redact.as_secs_f64(), mb / copy.as_secs_f64()))
}

/// Median time of one audit append vs a bare write + fdatasync of a line of the same size.
fn audit_append_vs_bare(dir: &Path, iterations: usize) -> Result<(Duration, Duration)> {
    let redactor = std::sync::Arc::new(safety::redact::Redactor::new(
        &safety::redact::RedactionSettings::default(),
    )?);
    let log_path = dir.join("state").join("bench-audit.jsonl");
    let log = safety::audit::AuditLog::open(&log_path, redactor)?;
    let mut bare = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("state").join("bench-bare.jsonl"))?;
    let record = |n: usize| {
        let mut map = serde_json::Map::new();
        map.insert("event".into(), json!("outcome"));
        map.insert("tool".into(), json!("run_command"));
        map.insert(
            "arguments".into(),
            json!({"command": "git log --oneline -n 5"}),
        );
        map.insert("code".into(), json!("OK"));
        map.insert("reason".into(), json!("'git' is allowed"));
        map.insert("duration_ms".into(), json!(n % 97));
        map
    };
    log.append(record(0))?;
    let line_len = std::fs::read_to_string(&log_path)?.len();
    let line = vec![b'x'; line_len];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for n in 0..iterations {
        let t = Instant::now();
        log.append(record(n))?;
        a.push(t.elapsed());
        let t = Instant::now();
        bare.write_all(&line)?;
        bare.sync_data()?;
        b.push(t.elapsed());
    }
    Ok((percentile(&mut a, 0.5), percentile(&mut b, 0.5)))
}

/// Median time of `TerminalCore::explain_command` called in-process (no MCP, no pipes).
fn explain_in_process(policy: &Path, iterations: usize) -> Result<Duration> {
    let config = safety::config::load(policy, safety::config::Server::Terminal, &[])?;
    let core = safety::terminal::TerminalCore::start(config)?;
    let args = json!({ "command": "git log --oneline -n 5" });
    let args = args.as_object();
    let mut samples = Vec::new();
    for _ in 0..iterations {
        let t = Instant::now();
        std::hint::black_box(core.explain_command(args));
        samples.push(t.elapsed());
    }
    Ok(percentile(&mut samples, 0.5))
}

/// Median time of `TerminalCore::run_command("echo hi")` in-process with the sandbox off.
async fn run_in_process(policy: &Path, iterations: usize) -> Result<Duration> {
    let env = [("SAFE_MCP_SANDBOX_ENABLED".to_string(), "false".to_string())];
    let config = safety::config::load(policy, safety::config::Server::Terminal, &env)?;
    let core = safety::terminal::TerminalCore::start(config)?;
    let args = json!({ "command": "echo hi" });
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut samples = Vec::new();
    for _ in 0..iterations {
        let t = Instant::now();
        let env = core.run_command(args.as_object(), &cancel).await;
        samples.push(t.elapsed());
        anyhow::ensure!(
            env.detail.get("stdout") == Some(&json!("hi\n")),
            "unexpected {env:?}"
        );
    }
    Ok(percentile(&mut samples, 0.5))
}
