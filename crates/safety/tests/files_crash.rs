//! Crash safety and concurrency of the files organiser (SPEC §5.2 "crash safety").
//!
//! The tests re-execute this test binary as a child process (`crash_child` below does
//! nothing unless `FILES_CRASH_MODE` is set): the child opens the organiser on a shared
//! sandbox and applies a plan of thousands of moves (or undoes one); the parent SIGKILLs it
//! at a random moment during the step, restarts the organiser (which recovers), and checks
//! that every file exists exactly once, at its source or destination, with its content
//! unchanged; that the journal agrees; and that undo restores the original layout.

mod files_sandbox;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use files_sandbox::Sandbox;
use safety::journal::Journal;
use safety::organizer::Organizer;
use safety::result::ResultCode;

const FILES: usize = 3000;

fn child_organizer() -> Organizer {
    let policy = std::env::var("FILES_CRASH_POLICY").unwrap();
    let env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("SAFE_MCP_"))
        .collect();
    let config = safety::config::load(
        std::path::Path::new(&policy),
        safety::config::Server::Files,
        &env,
    )
    .unwrap();
    Organizer::open(&config).unwrap()
}

/// The child half (a no-op in a normal test run).
#[test]
fn crash_child() {
    let Ok(mode) = std::env::var("FILES_CRASH_MODE") else {
        return;
    };
    let org = child_organizer();
    match mode.as_str() {
        "apply" => {
            let plan = org.plan_organize();
            let id = plan.detail["plan_id"].as_str().unwrap().to_string();
            println!("MARK:begin");
            let started = std::time::Instant::now();
            let env = org.apply_plan(&id, &|_, _| {});
            assert!(env.ok, "{env:?}");
            println!("MARK:took {}", started.elapsed().as_micros());
        }
        "undo" => {
            println!("MARK:begin");
            let env = org.undo_last_action();
            assert!(env.ok, "{env:?}");
        }
        "churn" => {
            let tag = std::env::var("FILES_CRASH_TAG").unwrap();
            println!("MARK:begin");
            for k in 0..120 {
                let _ = org.move_file(&format!("{tag}{k}.txt"), &format!("D{tag}/{tag}{k}.txt"));
                if k % 4 == 3 {
                    let _ = org.undo_last_action();
                }
                if k % 8 == 7 {
                    let _ = org.redo_last_action();
                }
            }
        }
        other => panic!("unknown mode {other}"),
    }
    println!("MARK:done");
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn sandbox(files: usize, prefix: &str) -> Sandbox {
    let sb = Sandbox::new().with_env("SAFE_MCP_MAX_PLAN_MOVES", "100000");
    for i in 0..files {
        sb.write(&format!("{prefix}{i}.txt"), &format!("content {i}"));
    }
    sb
}

/// Start the child; return it once it printed `MARK:begin`, with the time it took.
fn spawn_child(
    sb: &Sandbox,
    mode: &str,
    tag: &str,
) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env("FILES_CRASH_MODE", mode)
        .env("FILES_CRASH_TAG", tag)
        .env("FILES_CRASH_POLICY", &sb.policy)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in &sb.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "child ended before MARK:begin"
        );
        if line.contains("MARK:begin") {
            break;
        }
    }
    (child, out)
}

/// Wait for a child that is not killed; returns the `MARK:took` figure (µs) if any.
fn wait_done(mut child: std::process::Child, mut out: BufReader<std::process::ChildStdout>) -> u64 {
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut out, &mut rest);
    assert!(child.wait().unwrap().success());
    assert!(rest.contains("MARK:done"), "{rest}");
    rest.lines()
        .find_map(|l| l.split("MARK:took ").nth(1))
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Every file exists exactly once with its content; the journal's stacks agree with
/// where the files are. Returns how many files are at their destination.
fn check_consistent(sb: &Sandbox, org: &Organizer, prefix: &str, files: usize) -> usize {
    let tree = Sandbox::tree(&sb.ws);
    let mut by_name: std::collections::HashMap<&str, Vec<(&String, &String)>> = Default::default();
    for (path, content) in &tree {
        let base = path.rsplit('/').next().unwrap_or(path);
        by_name.entry(base).or_default().push((path, content));
    }
    let mut at_dest = 0;
    for i in 0..files {
        let name = format!("{prefix}{i}.txt");
        let content = format!("content {i}");
        let places: Vec<&String> = by_name
            .get(name.as_str())
            .map(|v| {
                v.iter()
                    .filter(|(_, c)| **c == content)
                    .map(|(p, _)| *p)
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(places.len(), 1, "{name} is at {places:?}");
        if places[0].contains('/') {
            at_dest += 1;
        }
    }
    let history = org.history().unwrap();
    let mut in_undo = std::collections::HashSet::new();
    for action in &history.undo {
        for m in &action.moves {
            assert!(
                tree.contains_key(&m.dest),
                "journal says {} is at {}",
                m.src,
                m.dest
            );
            assert!(in_undo.insert(m.src.clone()));
        }
    }
    for action in &history.redo {
        for m in &action.moves {
            if !in_undo.contains(&m.src) {
                assert!(tree.contains_key(&m.src), "journal says {} is back", m.src);
            }
        }
    }
    at_dest
}

fn undo_everything(org: &Organizer) {
    loop {
        let env = org.undo_last_action();
        if env.code == ResultCode::InvalidRequest {
            break;
        }
        assert!(env.ok, "{env:?}");
    }
}

fn original_layout(sb: &Sandbox, prefix: &str, files: usize) {
    for i in 0..files {
        let p = sb.ws.join(format!("{prefix}{i}.txt"));
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("content {i}"),
            "{}",
            p.display()
        );
    }
}

#[test]
fn sigkill_during_apply_or_undo_recovers_to_one_place_per_file() {
    let sb = sandbox(FILES, "f");
    let journal_path = sb.state.join("journal.json");
    // Calibrate: one uninterrupted apply.
    let (child, out) = spawn_child(&sb, "apply", "");
    let full = Duration::from_micros(wait_done(child, out));
    {
        let org = sb.organizer();
        assert_eq!(check_consistent(&sb, &org, "f", FILES), FILES);
        undo_everything(&org);
    }
    original_layout(&sb, "f", FILES);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash test seed {seed}, full apply {full:?}");
    let mut rng = Rng(seed);
    let (mut interrupted, mut partial) = (0, 0);
    let rounds = 24;
    for round in 0..rounds {
        let undo_round = round % 3 == 2;
        if undo_round {
            // Apply fully first, then kill the undo.
            let org = sb.organizer();
            let id = org.plan_organize().detail["plan_id"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(org.apply_plan(&id, &|_, _| {}).ok);
        }
        let (mut child, _out) = spawn_child(&sb, if undo_round { "undo" } else { "apply" }, "");
        let delay = rng.next() % (full.as_micros() as u64).max(1);
        std::thread::sleep(Duration::from_micros(delay));
        child.kill().unwrap();
        let _ = child.wait();
        // Before recovery: was a step left open?
        {
            let journal = Journal::open(&journal_path).unwrap();
            let locked = journal.lock().unwrap();
            if locked.interrupted().is_some() {
                interrupted += 1;
            }
        }
        let org = sb.organizer();
        let at_dest = check_consistent(&sb, &org, "f", FILES);
        if at_dest > 0 && at_dest < FILES {
            partial += 1;
        }
        undo_everything(&org);
        original_layout(&sb, "f", FILES);
        check_consistent(&sb, &org, "f", FILES);
    }
    eprintln!(
        "{rounds} rounds: {interrupted} killed inside a step, {partial} with files at both places"
    );
    assert!(
        interrupted > 0,
        "no kill landed inside a step; the test did not exercise recovery"
    );
}

#[test]
fn two_processes_on_one_workspace_serialise_and_keep_the_journal_whole() {
    let sb = Sandbox::new();
    for tag in ["a", "b"] {
        for k in 0..120 {
            sb.write(&format!("{tag}{k}.txt"), &format!("content {k}"));
        }
    }
    let (c1, o1) = spawn_child(&sb, "churn", "a");
    let (c2, o2) = spawn_child(&sb, "churn", "b");
    wait_done(c1, o1);
    wait_done(c2, o2);
    let org = sb.organizer();
    check_consistent(&sb, &org, "a", 120);
    check_consistent(&sb, &org, "b", 120);
    undo_everything(&org);
    original_layout(&sb, "a", 120);
    original_layout(&sb, "b", 120);
}
