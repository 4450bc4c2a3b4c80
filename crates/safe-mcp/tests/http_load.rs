//! The terminal server over HTTP under load, with a fault: 32 callers side by side, each
//! making 200 `run_command "echo hi"` calls on its own keep-alive connection, while the
//! audit log ships to a real rsyslogd that is killed a third of the way in and started again
//! later. Every call must succeed, every call must be in the local log exactly once (intent
//! and outcome) with its caller, the chain must hold, and each record must be either in
//! rsyslog or inside a recorded gap, but for the few that sat unread in the socket's queue
//! when the daemon died (lost without an error: the limit of a datagram socket). Latency (p50/p99) and calls per second are printed
//! beside the same calls made one after another over stdio: figures, not assertions.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http_e2e::{Conn, Server};
use crate::rsyslog_daemon::{Rsyslog, lines};

const CALLERS: usize = 32;
const CALLS: usize = 200;
/// At most this many records sent just before rsyslogd was killed may be lost unseen (the
/// socket's queue: a datagram the kernel took is not refused when its reader dies).
const QUEUE_BOUND: u64 = 64;

const POLICY: &str = r#"
audit_log = "state/audit.jsonl"

[terminal]
jail_root = "jail"
max_concurrent_commands = 40

[terminal.allowlist]
commands = ["echo"]
"#;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The same number of calls, one after another, over stdio with the rmcp client: p50, p99
/// and calls per second.
fn stdio_figures(policy: &Path, calls: usize) -> (Duration, Duration, f64) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let bin = Path::new(env!("CARGO_BIN_EXE_safe-mcp"));
        let session = safe_mcp::client::connect(
            bin,
            &["terminal", "--config", policy.to_str().unwrap()],
            &[],
        )
        .await
        .unwrap();
        let mut times = Vec::with_capacity(calls);
        let started = Instant::now();
        for _ in 0..calls {
            let t = Instant::now();
            let e = safe_mcp::client::call(&session, "run_command", json!({"command": "echo hi"}))
                .await
                .unwrap();
            assert_eq!(e["code"], "OK", "{e}");
            times.push(t.elapsed());
        }
        let rate = calls as f64 / started.elapsed().as_secs_f64();
        times.sort();
        (percentile(&times, 0.5), percentile(&times, 0.99), rate)
    })
}

#[test]
fn thirty_two_callers_with_rsyslogd_killed_mid_run_lose_no_call_and_no_record() {
    let syslog_dir = tempfile::tempdir().unwrap();
    let Some(rsyslog) = Rsyslog::start(syslog_dir.path(), None) else {
        return;
    };
    let socket = syslog_dir.path().join("log.sock");
    let policy = format!(
        "{POLICY}\n[audit.syslog]\ntransport = \"unix\"\naddress = \"{}\"\n",
        socket.display()
    );
    let names: Vec<String> = (0..CALLERS).map(|i| format!("caller-{i:02}")).collect();
    let specs: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    let server = Server::start(
        "terminal",
        &policy,
        "max_concurrent_per_caller = 2\ncalls_per_minute = 0",
        &specs,
    );
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (server.tokens.iter().cloned())
        .map(|token| {
            let (addr, done) = (server.addr, done.clone());
            std::thread::spawn(move || {
                let mut conn = Conn::open(addr);
                let mut times = Vec::with_capacity(CALLS);
                let mut failures = Vec::new();
                for _ in 0..CALLS {
                    let t = Instant::now();
                    let e = conn.call(&token, "run_command", json!({"command": "echo hi"}));
                    times.push(t.elapsed());
                    if e["code"] != "OK" || e["detail"]["stdout"] != "hi\n" {
                        failures.push(e);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
                (times, failures)
            })
        })
        .collect();
    // The fault: rsyslogd killed a third of the way in, started again at two thirds.
    let total = CALLERS * CALLS;
    let wait_for = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(600);
        while done.load(Ordering::Relaxed) < n {
            assert!(Instant::now() < deadline, "the calls stalled");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_for(total / 3);
    let ports = rsyslog.kill();
    wait_for(total * 2 / 3);
    let rsyslog = Rsyslog::start(syslog_dir.path(), Some(ports)).unwrap();
    let mut times = Vec::with_capacity(total);
    let mut failures = Vec::new();
    for worker in workers {
        let (t, f) = worker.join().unwrap();
        times.extend(t);
        failures.extend(f);
    }
    let elapsed = started.elapsed();
    assert!(
        failures.is_empty(),
        "{} failed calls: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );

    // Locally: each caller's 200 calls, each an intent and an outcome, exactly once.
    let records = server.records();
    let mut per_caller: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut ids = HashSet::new();
    for r in records.iter().filter(|r| r["tool"] == "run_command") {
        let caller = r["caller"]
            .as_str()
            .expect("a call record without its caller");
        let entry = per_caller.entry(caller).or_default();
        match r["event"].as_str() {
            Some("intent") => {
                entry.0 += 1;
                assert!(
                    ids.insert(r["request_id"].as_str().unwrap().to_string()),
                    "a request recorded twice: {r}"
                );
            }
            Some("outcome") => entry.1 += 1,
            other => panic!("unexpected event {other:?}"),
        }
    }
    assert_eq!(per_caller.len(), CALLERS);
    for (caller, counts) in &per_caller {
        assert_eq!(*counts, (CALLS, CALLS), "{caller}");
    }
    assert_eq!(
        safety::verify_audit_log(&server.audit_log())
            .unwrap()
            .broken,
        None
    );
    // In rsyslog: every record, except those inside the gaps the log recorded.
    let gaps: Vec<(u64, u64)> = (records.iter())
        .filter(|r| r["syslog"] == "gap")
        .map(|r| {
            (
                r["from_seq"].as_u64().unwrap(),
                r["to_seq"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        !gaps.is_empty(),
        "rsyslogd was down and no gap was recorded"
    );
    // The records written after the restart reach rsyslog once the server writes again; the
    // last ones are the checkpoint-less tail, all shipped by now.
    let last_seq = records.last().unwrap()["seq"].as_u64().unwrap();
    let received: BTreeSet<u64> = {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seqs: BTreeSet<u64> = lines(&syslog_dir.path().join("out.log"))
                .iter()
                .filter_map(|l| l.split("seq=\"").nth(1)?.split('"').next()?.parse().ok())
                .collect();
            if seqs.contains(&last_seq) || Instant::now() > deadline {
                break seqs;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let in_gap = |seq: u64| gaps.iter().any(|(from, to)| (*from..=*to).contains(&seq));
    let missing: Vec<u64> = (records.iter())
        .filter_map(|r| r["seq"].as_u64())
        .filter(|s| !received.contains(s) && !in_gap(*s))
        .collect();
    // What a datagram socket loses without an error: the records queued in it, unread, when
    // the daemon died. They are the last ones sent before the first refused send.
    let queued_at_kill = |seq: u64| {
        gaps.first()
            .is_some_and(|(from, _)| seq < *from && from - seq <= QUEUE_BOUND)
    };
    assert!(
        missing.iter().all(|s| queued_at_kill(*s)),
        "records neither shipped, in a gap, nor queued when rsyslogd was killed: {missing:?} (gaps {gaps:?})"
    );
    let gapped: u64 = gaps.iter().map(|(f, t)| t - f + 1).sum();
    drop(rsyslog);

    // The figures, beside stdio.
    times.sort();
    let (p50, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));
    let rate = total as f64 / elapsed.as_secs_f64();
    let stdio_policy = server.dir.path().join("stdio.toml");
    std::fs::write(&stdio_policy, POLICY).unwrap();
    let (s50, s99, srate) = stdio_figures(&stdio_policy, CALLS);
    eprintln!(
        "http, {CALLERS} callers x {CALLS} calls: p50 {:.1} ms, p99 {:.1} ms, {rate:.0} calls/s; \
         stdio, one client x {CALLS} calls: p50 {:.1} ms, p99 {:.1} ms, {srate:.0} calls/s; \
         {} records, {} of them in {} syslog gaps, {} lost unseen in the socket's queue",
        ms(p50),
        ms(p99),
        ms(s50),
        ms(s99),
        records.len(),
        gapped,
        gaps.len(),
        missing.len()
    );
}
