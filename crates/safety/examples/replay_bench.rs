//! Replay-window look-ups with 10 000 hashes in the window, side by side with the floor they
//! cannot beat (a bare `HashSet` look-up of the same keys), measured in one process; and the
//! cost of a full guard step, canonicalising and hashing one command, beside them.
//!
//! Target: a look-up under 5 µs.
//!
//! Run: `cargo run --release -p safety --example replay_bench`
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "benchmark harness: a failure aborts the measurement, and indices come from its own tables"
)]

use std::collections::HashSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use safety::guard::{CanonicalCommand, CanonicalHash, ReplayLimits, ReplayWindow};

const ENTRIES: u32 = 10_000;
const ROUNDS: usize = 50;

fn command(n: u32) -> CanonicalCommand {
    CanonicalCommand::new(
        "/usr/bin/git",
        ["log".to_owned(), format!("--max-count={n}")],
        "/srv/app",
        [
            ("PATH", "/usr/bin:/bin"),
            ("LANG", "C.UTF-8"),
            ("HOME", "/srv"),
        ],
    )
}

/// Best of `ROUNDS` runs of `f` over all keys, per key.
fn per_op(keys: usize, mut f: impl FnMut() -> usize) -> Duration {
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed() / u32::try_from(keys).unwrap()
        })
        .min()
        .unwrap()
}

fn main() {
    let hashes: Vec<CanonicalHash> = (0..ENTRIES).map(|n| command(n).hash()).collect();
    let absent: Vec<CanonicalHash> = (ENTRIES..2 * ENTRIES).map(|n| command(n).hash()).collect();
    let window = ReplayWindow::new(ReplayLimits {
        max_entries: ENTRIES as usize,
        max_age: Duration::from_secs(3600),
    });
    for h in &hashes {
        window.record(*h);
    }
    let set: HashSet<CanonicalHash> = hashes.iter().copied().collect();
    assert_eq!(window.len(), hashes.len());

    let n = hashes.len();
    let base_hit = per_op(n, || hashes.iter().filter(|h| set.contains(*h)).count());
    let win_hit = per_op(n, || hashes.iter().filter(|h| window.check(h)).count());
    let base_miss = per_op(n, || absent.iter().filter(|h| set.contains(*h)).count());
    let win_miss = per_op(n, || absent.iter().filter(|h| window.check(h)).count());
    // A replay record: present, refreshed, still 10 000 entries.
    let win_record = per_op(n, || hashes.iter().filter(|h| window.record(**h)).count());
    let commands: Vec<CanonicalCommand> = (0..1000).map(command).collect();
    let hash_cost = per_op(commands.len(), || {
        commands
            .iter()
            .map(|c| c.hash().as_bytes()[0] as usize)
            .sum()
    });

    // The trust tier every guarded call reports: its patterns against the probe arguments.
    let settings: safety::config::GuardSettings = toml::from_str(
        "[[tools]]\nname = 'git'\nexecutable = '/bin/echo'\nargs_patterns = ['log', '--oneline', '-n', '[0-9]{1,3}']\n",
    )
    .unwrap();
    let registry =
        safety::guard::Registry::new(&settings, safety::exec::Profile::Standard).unwrap();
    let tier_cost = per_op(100, || {
        (0..100)
            .map(|_| {
                safety::guard::trust_tier(&registry, "git", &[])
                    .reasons
                    .len()
            })
            .sum()
    });

    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-12);
    println!("replay window, {ENTRIES} entries, best of {ROUNDS} rounds, per operation:");
    println!(
        "  {:<34} {:>10} {:>12} {:>7}",
        "", "window", "HashSet", "ratio"
    );
    println!(
        "  {:<34} {:>10.0?} {:>12.0?} {:>6.1}x",
        "check, present",
        win_hit,
        base_hit,
        ratio(win_hit, base_hit)
    );
    println!(
        "  {:<34} {:>10.0?} {:>12.0?} {:>6.1}x",
        "check, absent",
        win_miss,
        base_miss,
        ratio(win_miss, base_miss)
    );
    println!(
        "  {:<34} {:>10.0?}",
        "record, a replay (refresh)", win_record
    );
    println!(
        "  {:<34} {:>10.1?}",
        "canonicalise + SHA-256, one call", hash_cost
    );
    println!(
        "  {:<34} {:>10.1?}",
        "trust tier of a limited tool", tier_cost
    );
    let worst = win_hit.max(win_miss).max(win_record);
    println!(
        "target: a look-up < 5 µs: {} (worst {worst:.0?})",
        if worst < Duration::from_micros(5) {
            "met"
        } else {
            "NOT met"
        }
    );
}
