//! Redaction throughput over 64 KiB command outputs, every built-in rule on, side by side with
//! the floor it cannot beat (a plain copy of the same bytes), measured in one process.
//!
//! Each side is timed by the wall clock and by the CPU time of this thread
//! (`CLOCK_THREAD_CPUTIME_ID`): on a machine shared with other work the wall-clock figure
//! includes the time this thread was waiting for a CPU, the CPU-time figure does not.
//!
//! Run: `cargo run --release -p safety --example redact_bench`
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "benchmark harness: a failure aborts the measurement, and indices come from its own tables"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use safety::redact::{Captured, RedactionSettings, Redactor};

const SIZE: usize = 64 * 1024;

/// Realistic output: build logs, listings, git log, JSON logs with URLs, prose; `secrets`
/// credentials sprinkled in.
fn output(secrets: usize) -> String {
    let lines = [
        "   Compiling serde_json v1.0.140 (/home/dev/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde_json-1.0.140)",
        "warning: unused variable: `task` --> src/scheduler/disk_queue.rs:118:9",
        "-rw-r--r--  1 dev  staff   18342 Mar  3 10:14 Cargo.lock",
        "drwxr-xr-x  5 dev  staff     160 Mar  3 10:12 target",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 Author: Dev <dev@example.com>",
        "{\"level\":\"info\",\"ts\":\"2025-03-03T10:14:00Z\",\"msg\":\"GET https://api.example.com/v1/items?page=2 200\",\"request_id\":\"550e8400-e29b-41d4-a716-446655440000\"}",
        "The scheduler asks each worker for its task list, then skips disks that are busy.",
        "test parse::tests::refuses_unbalanced_quote ... ok",
        "    Finished `release` profile [optimized] target(s) in 41.27s",
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
        "Password policy: at least twelve characters; rotate the secret every 90 days.",
        "2025-03-03 10:14:01 INFO  [main] Connected to https://registry.npmjs.org/ in 34ms",
    ];
    let planted = [
        "export GITHUB_TOKEN=ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
        "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ];
    let mut text = String::with_capacity(SIZE + 256);
    let mut i = 0;
    let every = 600usize.checked_div(secrets).unwrap_or(usize::MAX);
    while text.len() < SIZE {
        if secrets > 0 && i % every == every / 2 {
            text.push_str(planted[(i / every) % planted.len()]);
        } else {
            text.push_str(lines[i % lines.len()]);
        }
        text.push('\n');
        i += 1;
    }
    let mut cut = SIZE;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text
}

fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / time.as_secs_f64() / 1e6
}

/// CPU time this thread has run.
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Wall-clock and CPU time spent in `f`, run `n` times.
fn timed(n: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let cpu = thread_cpu_time();
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    (t.elapsed(), thread_cpu_time().saturating_sub(cpu))
}

fn main() {
    let redactor = match Redactor::new(&RedactionSettings::default()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("redactor does not build: {e}");
            std::process::exit(2);
        }
    };
    let (rounds, per_round) = (30, 100);
    let iterations = rounds * per_round;
    println!(
        "redaction over {} KiB outputs, {} built-in rules, {iterations} iterations each, \
         interleaved in blocks of {per_round}",
        SIZE / 1024,
        safety::redact::BUILTIN_RULES.len()
    );
    println!(
        "{:<34} {:>12} {:>12} {:>7} {:>12} {:>12}",
        "output", "redact MB/s", "copy MB/s", "ratio", "redact cpu", "copy cpu"
    );
    for (label, secrets) in [
        ("no secrets", 0),
        ("4 secrets per 64 KiB", 4),
        ("16 secrets per 64 KiB", 16),
    ] {
        let text = output(secrets);
        let found = redactor.redact(&text).matches("[REDACTED:").count();
        let (mut redact_wall, mut copy_wall) = (Duration::ZERO, Duration::ZERO);
        let (mut redact_cpu, mut copy_cpu) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..rounds {
            let (wall, cpu) = timed(per_round, || {
                black_box(redactor.redact(black_box(&text)));
            });
            redact_wall += wall;
            redact_cpu += cpu;
            let (wall, cpu) = timed(per_round, || {
                black_box(black_box(&text).to_owned());
            });
            copy_wall += wall;
            copy_cpu += cpu;
        }
        let bytes = text.len() * iterations;
        let (r, c) = (mb_per_s(bytes, redact_wall), mb_per_s(bytes, copy_wall));
        println!(
            "{:<34} {:>12.0} {:>12.0} {:>6.1}x {:>12.0} {:>12.0}",
            format!("{label} ({found} found)"),
            r,
            c,
            c / r,
            mb_per_s(bytes, redact_cpu),
            mb_per_s(bytes, copy_cpu),
        );
    }
    // redact_then_truncate on a 1 MiB stream captured under a 64 KiB cap.
    let cap = 64 * 1024;
    let big = output(4).repeat(16);
    let bytes = big.as_bytes();
    let head = bytes[..cap + safety::redact::CAPTURE_MARGIN].to_vec();
    let tail = bytes[bytes.len() - (cap + safety::redact::CAPTURE_MARGIN)..].to_vec();
    let captured = Captured {
        head,
        tail,
        total: bytes.len() as u64,
    };
    let runs = 500;
    let t = Instant::now();
    for _ in 0..runs {
        black_box(redactor.redact_then_truncate(black_box(&captured), cap));
    }
    let per_call = t.elapsed() / runs;
    println!("redact_then_truncate, 1 MiB stream, 64 KiB cap: {per_call:?} per call");
    base64_blobs(&redactor);
}

/// A text made around a blob.
type Shape = fn(&str) -> String;

/// One large base64 blob of each shape the decoding rules look at, at 256 KiB, 1 MiB and
/// 4 MiB: time per call and per MiB, so a rule that turned quadratic shows as a per-MiB time
/// that grows with the size.
fn base64_blobs(redactor: &Redactor) {
    // Deterministic base64 characters (xorshift), no padding.
    let chars = |n: usize| -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from(ALPHABET[(seed % 64) as usize])
            })
            .collect()
    };
    println!("large base64 blobs (one per text), best of 5 calls:");
    println!(
        "{:<44} {:>12} {:>12} {:>12}",
        "blob", "256 KiB", "1 MiB", "4 MiB"
    );
    let shapes: [(&str, Shape); 3] = [
        ("plain base64 (an image, a bundle)", |b| {
            format!("data: {b}\n")
        }),
        ("base64 of a PEM (client-key-data: LS0t...)", |b| {
            format!("client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ{b}\n")
        }),
        ("an \"auth\" value (Docker's user:password)", |b| {
            format!("{{\"auth\": \"{b}\"}}\n")
        }),
    ];
    for (label, shape) in shapes {
        let mut cells = Vec::new();
        for size in [256 << 10, 1 << 20, 4 << 20] {
            let text = shape(&chars(size));
            let best = (0..5)
                .map(|_| {
                    let t = Instant::now();
                    black_box(redactor.redact(black_box(&text)));
                    t.elapsed()
                })
                .min()
                .unwrap_or_default();
            let per_mib = best.as_secs_f64() * 1e3 / (size as f64 / f64::from(1 << 20));
            cells.push(format!(
                "{:.2} ms ({per_mib:.2}/MiB)",
                best.as_secs_f64() * 1e3
            ));
        }
        println!(
            "{label:<44} {:>12} {:>12} {:>12}",
            cells[0], cells[1], cells[2]
        );
    }
}
