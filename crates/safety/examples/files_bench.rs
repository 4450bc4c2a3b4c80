//! Files-server benchmark, side by side in one run:
//! - `plan_organize` over a workspace of 100 000 files (target < 0.3 s);
//! - `apply_plan` of 10 000 moves (journaled, durable, crash-safe) vs a naive loop of plain
//!   `rename(2)` calls over the same files (target <= 1.5x);
//! - `list_files` on 100 000 entries (bounded by max_list_entries, and unbounded).
//!
//! Run: `cargo run --release -p safety --example files_bench` (optionally `-- ROUNDS`).
//! Everything happens in a temporary folder; the shipped example policy is copied first.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "benchmark harness: a failure aborts the measurement, and indices come from its own tables"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use safety::config::{self, Server};
use safety::organizer::Organizer;

const PLAN_FILES: usize = 100_000;
const APPLY_FILES: usize = 10_000;
const EXTENSIONS: [&str; 6] = ["pdf", "png", "mp3", "mp4", "zip", "csv"];

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn organizer(base: &Path, ws: &Path, max_plan: usize, max_list: usize) -> Organizer {
    let policy = base.join("policy.toml");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy.example.toml");
    std::fs::copy(shipped, &policy).expect("copy policy");
    let state = base.join("state");
    std::fs::create_dir_all(&state).expect("state folder");
    let name = ws.file_name().and_then(|n| n.to_str()).unwrap_or("ws");
    let env = vec![
        (
            "SAFE_MCP_WORKSPACE_ROOT".to_string(),
            ws.display().to_string(),
        ),
        (
            "SAFE_MCP_JOURNAL".to_string(),
            state
                .join(format!("{name}-journal.json"))
                .display()
                .to_string(),
        ),
        (
            "SAFE_MCP_AUDIT_LOG".to_string(),
            state
                .join(format!("{name}-audit.jsonl"))
                .display()
                .to_string(),
        ),
        ("SAFE_MCP_MAX_PLAN_MOVES".to_string(), max_plan.to_string()),
        (
            "SAFE_MCP_MAX_LIST_ENTRIES".to_string(),
            max_list.to_string(),
        ),
    ];
    let config = config::load(&policy, Server::Files, &env).expect("config");
    Organizer::open(&config).expect("organizer")
}

fn fill(ws: &Path, n: usize, ext: Option<&str>) -> Vec<String> {
    std::fs::create_dir_all(ws).expect("workspace");
    (0..n)
        .map(|i| {
            let e = ext.unwrap_or(EXTENSIONS[i % EXTENSIONS.len()]);
            let name = format!("file{i:06}.{e}");
            std::fs::write(ws.join(&name), b"x").expect("write");
            name
        })
        .collect()
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().expect("tempdir");
    let base: PathBuf = dir.path().canonicalize().expect("canonical");
    println!(
        "files_bench: {rounds} rounds per figure, medians; folder {}",
        base.display()
    );

    // --- plan_organize and list_files over 100 000 files -------------------------------
    let big = base.join("big");
    fill(&big, PLAN_FILES, None);
    let org_default = organizer(&base, &big, 500, 100_000);
    let org_full = organizer(&base, &big, 100_000, 100_000);
    let org_list_default = organizer(&base, &big, 500, 10_000);
    let mut plan_default = Vec::new();
    let mut plan_full = Vec::new();
    let mut list_bounded = Vec::new();
    let mut list_full = Vec::new();
    let mut naive_readdir = Vec::new();
    let mut names_only = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let env = org_default.plan_organize();
        plan_default.push(t.elapsed());
        assert!(env.ok && env.detail["truncated"] == serde_json::json!(true));
        let t = Instant::now();
        let env = org_full.plan_organize();
        plan_full.push(t.elapsed());
        assert_eq!(env.detail["move_count"], serde_json::json!(PLAN_FILES));
        let t = Instant::now();
        let env = org_list_default.list_files(None);
        list_bounded.push(t.elapsed());
        assert_eq!(env.detail["count"], serde_json::json!(10_000));
        let t = Instant::now();
        let env = org_full.list_files(None);
        list_full.push(t.elapsed());
        assert_eq!(env.detail["count"], serde_json::json!(PLAN_FILES));
        // Baseline: read the folder and lstat every entry, nothing else.
        let t = Instant::now();
        let mut n = 0;
        for e in std::fs::read_dir(&big).expect("read_dir") {
            let e = e.expect("entry");
            let _ = std::fs::symlink_metadata(e.path()).expect("lstat");
            n += 1;
        }
        naive_readdir.push(t.elapsed());
        assert_eq!(n, PLAN_FILES);
        // Floor: read the folder's names (and stored types), no lstat at all.
        let t = Instant::now();
        let mut n = 0;
        for e in std::fs::read_dir(&big).expect("read_dir") {
            let e = e.expect("entry");
            // On Linux `file_type` is the stored d_type; no lstat.
            let _ = (e.file_name(), e.file_type().expect("d_type"));
            n += 1;
        }
        names_only.push(t.elapsed());
        assert_eq!(n, PLAN_FILES);
    }
    let naive = median(naive_readdir);
    println!();
    println!("{:<58} {:>10} {:>9}", "100 000 files", "median", "vs lstat");
    for (label, v) in [
        ("readdir + lstat of every entry (baseline)", naive),
        (
            "readdir only, names and d_type, no lstat (floor)",
            median(names_only),
        ),
        (
            "plan_organize, max_plan_moves 500 (classifies all)",
            median(plan_default),
        ),
        (
            "plan_organize, max_plan_moves 100 000 (all moves)",
            median(plan_full),
        ),
        (
            "list_files, max_list_entries 10 000 (bounded)",
            median(list_bounded),
        ),
        ("list_files, max_list_entries 100 000", median(list_full)),
    ] {
        println!(
            "{label:<58} {:>10} {:>8.2}x",
            ms(v),
            v.as_secs_f64() / naive.as_secs_f64()
        );
    }
    drop((org_default, org_full, org_list_default));

    // --- apply_plan of 10 000 moves vs a naive rename loop -----------------------------
    let small = base.join("small");
    let names = fill(&small, APPLY_FILES, Some("pdf"));
    // +10: the Documents folder is an entry of the listing too.
    let org = organizer(&base, &small, APPLY_FILES, APPLY_FILES + 10);
    let dest = small.join("Documents");
    std::fs::create_dir_all(&dest).expect("dest");
    let mut naive_times = Vec::new();
    let mut apply_times = Vec::new();
    for _ in 0..rounds {
        // Naive: plain rename(2) by path, no checks, no journal, no durability.
        let t = Instant::now();
        for n in &names {
            std::fs::rename(small.join(n), dest.join(n)).expect("rename");
        }
        naive_times.push(t.elapsed());
        for n in &names {
            std::fs::rename(dest.join(n), small.join(n)).expect("rename back");
        }
        // apply_plan: re-check every file, journal intent + fsync, renameat2 NOREPLACE
        // through directory handles, journal completion + fsync, audit records.
        let plan = org.plan_organize();
        let id = plan.detail["plan_id"]
            .as_str()
            .expect("plan id")
            .to_string();
        let t = Instant::now();
        let env = org.apply_plan(&id, &|_, _| {});
        apply_times.push(t.elapsed());
        assert!(env.ok, "{}", env.reason);
        assert_eq!(env.detail["moved"], serde_json::json!(APPLY_FILES));
        let undo = org.undo_last_action();
        assert!(undo.ok, "{}", undo.reason);
    }
    let naive = median(naive_times);
    let apply = median(apply_times);
    println!();
    println!("{:<58} {:>10} {:>9}", "10 000 moves", "median", "vs naive");
    println!(
        "{:<58} {:>10} {:>8.2}x",
        "naive loop of rename(2) by path",
        ms(naive),
        1.0
    );
    println!(
        "{:<58} {:>10} {:>8.2}x",
        "apply_plan (re-check, journal+fsync, renameat2 NOREPLACE)",
        ms(apply),
        apply.as_secs_f64() / naive.as_secs_f64()
    );
}
