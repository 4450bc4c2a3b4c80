//! Crash safety and concurrency of the files organiser: a kill at any moment leaves every file in one of its two places.
//!
//! The tests re-execute this test binary as a child process (`crash_child` below does
//! nothing unless `FILES_CRASH_MODE` is set): the child opens the organiser on a shared
//! sandbox and applies a plan of thousands of moves (or undoes one); the parent SIGKILLs it
//! at a random moment during the step, restarts the organiser (which recovers), and checks
//! that every file exists exactly once, at its source or destination, with its content
//! unchanged; that the journal agrees; and that undo restores the original layout.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::files_sandbox::Sandbox;
use safety::journal::Journal;
use safety::organizer::Organizer;
use safety::result::ResultCode;

const FILES: usize = 3000;
/// Files each `churn` child moves (and undoes and redoes some of).
const CHURN_FILES: usize = 120;

fn unix_micros() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros()
}

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
            // Both children start their work together, so their steps interleave.
            let go = std::path::PathBuf::from(std::env::var("FILES_CRASH_GO").unwrap());
            let waiting = std::time::Instant::now();
            while !go.exists() {
                assert!(waiting.elapsed() < Duration::from_secs(60), "no go signal");
                std::thread::sleep(Duration::from_millis(1));
            }
            println!("MARK:start {}", unix_micros());
            // Every result is reported to the parent, which checks it.
            let report = |env: safety::result::Envelope| {
                let moves = match env.detail.get("moves") {
                    Some(m) => m.clone(),
                    None if env.ok => serde_json::json!([{
                        "src": env.detail["src"], "dest": env.detail["dest"]
                    }]),
                    None => serde_json::json!([]),
                };
                let line = serde_json::json!({
                    "tool": env.action, "code": env.code.as_str(),
                    "reason": env.reason, "moves": moves,
                });
                println!("MARK:op {line}");
            };
            for k in 0..CHURN_FILES {
                report(org.move_file(&format!("{tag}{k}.txt"), &format!("D{tag}/{tag}{k}.txt")));
                if k % 4 == 3 {
                    report(org.undo_last_action());
                }
                if k % 8 == 7 {
                    report(org.redo_last_action());
                }
            }
            println!("MARK:end {}", unix_micros());
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
    // The harness names a test by its path below the crate root (`files_crash::crash_child`
    // in the one test binary); `--exact` must be given that whole name.
    let module = module_path!().split_once("::").map_or("", |(_, path)| path);
    let child_test = format!("{module}::crash_child");
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        child_test.as_str(),
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("FILES_CRASH_MODE", mode)
    .env("FILES_CRASH_TAG", tag)
    .env("FILES_CRASH_POLICY", &sb.policy)
    .env("FILES_CRASH_GO", sb.state.join("go"))
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
fn wait_done(child: std::process::Child, out: BufReader<std::process::ChildStdout>) -> u64 {
    let rest = wait_output(child, out);
    rest.lines()
        .find_map(|l| l.split("MARK:took ").nth(1))
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Wait for a child that is not killed; returns what it printed after `MARK:begin`.
fn wait_output(
    mut child: std::process::Child,
    mut out: BufReader<std::process::ChildStdout>,
) -> String {
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut out, &mut rest);
    assert!(child.wait().unwrap().success(), "{rest}");
    assert!(rest.contains("MARK:done"), "{rest}");
    rest
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

/// What one `churn` child reported.
struct Churn {
    tag: &'static str,
    ops: Vec<serde_json::Value>,
    start: u128,
    end: u128,
}

impl Churn {
    fn parse(tag: &'static str, output: &str) -> Churn {
        let field = |name: &str| -> u128 {
            output
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or_else(|| panic!("child {tag} printed no {name}: {output}"))
        };
        Churn {
            tag,
            ops: output
                .lines()
                .filter_map(|l| l.strip_prefix("MARK:op "))
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            start: field("MARK:start "),
            end: field("MARK:end "),
        }
    }

    fn of(&self, tool: &str) -> Vec<&serde_json::Value> {
        self.ops.iter().filter(|o| o["tool"] == tool).collect()
    }
}

#[test]
fn two_processes_on_one_workspace_serialise_and_keep_the_journal_whole() {
    use std::collections::{BTreeMap, BTreeSet};
    let sb = Sandbox::new();
    for tag in ["a", "b"] {
        for k in 0..CHURN_FILES {
            sb.write(&format!("{tag}{k}.txt"), &format!("content {k}"));
        }
    }
    let (c1, o1) = spawn_child(&sb, "churn", "a");
    let (c2, o2) = spawn_child(&sb, "churn", "b");
    std::fs::write(sb.state.join("go"), "").unwrap();
    let runs = [
        Churn::parse("a", &wait_output(c1, o1)),
        Churn::parse("b", &wait_output(c2, o2)),
    ];
    // The two really worked at the same time: their runs overlap.
    assert!(
        runs[0].start < runs[1].end && runs[1].start < runs[0].end,
        "the children did not run at the same time"
    );

    // What each process got. Its own moves always succeed (its files are its own); an
    // undo always finds something (this process pushed more than it undid); a redo finds
    // nothing only when the other process's new work cleared the shared redo stack.
    let mut net: BTreeMap<String, i64> = BTreeMap::new();
    let (mut ok_steps, mut refused, mut crossed) = (0usize, 0usize, 0usize);
    for run in &runs {
        let moves = run.of("move_file");
        assert_eq!(moves.len(), CHURN_FILES, "{}", run.tag);
        for (k, m) in moves.iter().enumerate() {
            assert_eq!(m["code"], "OK", "{}: {m}", run.tag);
            let t = run.tag;
            assert_eq!(
                m["moves"],
                serde_json::json!([{"src": format!("{t}{k}.txt"), "dest": format!("D{t}/{t}{k}.txt")}]),
                "{m}"
            );
        }
        assert_eq!(run.of("undo_last_action").len(), CHURN_FILES / 4);
        assert_eq!(run.of("redo_last_action").len(), CHURN_FILES / 8);
        for op in &run.ops {
            let code = op["code"].as_str().unwrap();
            let tool = op["tool"].as_str().unwrap();
            match (tool, code) {
                (_, "OK") => ok_steps += 1,
                ("redo_last_action", "INVALID_REQUEST") => {
                    assert_eq!(op["reason"], "nothing to redo", "{op}");
                    refused += 1;
                    crossed += 1;
                    continue;
                }
                _ => panic!("{}: unexpected result {op}", run.tag),
            }
            let list = op["moves"].as_array().unwrap();
            assert_eq!(list.len(), 1, "{op}");
            let (src, dest) = (
                list[0]["src"].as_str().unwrap(),
                list[0]["dest"].as_str().unwrap(),
            );
            // The file's name at the workspace root, and which way it went.
            let (name, forward) = if dest.contains('/') {
                (src, 1)
            } else {
                (dest, -1)
            };
            if !name.starts_with(run.tag) {
                crossed += 1;
            }
            *net.entry(name.to_string()).or_default() += forward;
        }
    }
    eprintln!("{crossed} results of one process were shaped by the other's work");

    // The final state is exactly what the results add up to: a file is at its
    // destination when it went forward once more than back, else at its source.
    let org = sb.organizer();
    check_consistent(&sb, &org, "a", CHURN_FILES);
    check_consistent(&sb, &org, "b", CHURN_FILES);
    let tree = Sandbox::tree(&sb.ws);
    let mut at_dest = BTreeSet::new();
    for tag in ["a", "b"] {
        for k in 0..CHURN_FILES {
            let name = format!("{tag}{k}.txt");
            let n = net.get(&name).copied().unwrap_or(0);
            assert!(
                n == 0 || n == 1,
                "{name} went forward {n} more times than back"
            );
            let dest = format!("D{tag}/{name}");
            let (here, not_there) = if n == 1 {
                (&dest, &name)
            } else {
                (&name, &dest)
            };
            assert_eq!(
                tree.get(here),
                Some(&format!("content {k}")),
                "{name}: net {n}"
            );
            assert!(!tree.contains_key(not_there), "{name} is at both places");
            if n == 1 {
                at_dest.insert(name);
            }
        }
    }
    // The shared journal agrees: its undo stack holds exactly the files at their
    // destination, its redo stack only files at their source.
    let history = org.history().unwrap();
    let in_undo: BTreeSet<String> = history
        .undo
        .iter()
        .flat_map(|a| a.moves.iter().map(|m| m.src.clone()))
        .collect();
    assert_eq!(in_undo, at_dest);
    for action in &history.redo {
        for m in &action.moves {
            assert!(!at_dest.contains(&m.src), "{} is on the redo stack", m.src);
        }
    }
    // The shared audit log is one unbroken chain: an intent and an outcome for every step
    // that happened, an outcome alone for every refusal, nothing lost or doubled.
    let report = safety::audit::verify(&sb.state.join("audit.jsonl")).unwrap();
    assert_eq!(report.broken, None);
    assert_eq!(report.records as usize, 2 * ok_steps + refused);

    undo_everything(&org);
    original_layout(&sb, "a", CHURN_FILES);
    original_layout(&sb, "b", CHURN_FILES);
}
