//! `safe-mcp hook claude-code|codex` and `safe-mcp check`, driven as the agents drive them:
//! one event on stdin, the answer read from stdout, stderr and the exit status. The events
//! are the agents' documented examples and hostile ones (huge, malformed, a `cwd` outside the
//! roots, `..`, a symlink out, a dangling symlink, a hard link, a planted bare repository).
//! A refusal must be exit 2: both agents take any other non-zero status as "go ahead".

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

/// A throw-away project (the one `[hook]` root) and a policy outside it.
struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    policy: PathBuf,
    audit: PathBuf,
}

fn setup(extra: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("proj");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(base.join("state")).unwrap();
    std::fs::write(root.join("notes.txt"), "notes\n").unwrap();
    std::fs::write(outside.join("secret"), "s\n").unwrap();
    let policy = base.join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            r#"audit_log = "state/audit.jsonl"
[terminal]
allowlist.commands = ["ls", "cat", "git", "echo", "cp"]
denylist.commands = ["rm"]
[[terminal.rules]]
command = "git"
deny_args = ["push -f", "push --force"]
reason = "no force pushes"
[[terminal.rules]]
command = "ls"
hook = "allow"
[[terminal.rules]]
command = "cp"
hook = "ask"
[hook]
roots = ["proj"]
scan_floor = "HIGH"
[[hook.tools]]
name = "mcp__github__*"
decision = "ask"
[[hook.tools]]
name = "mcp__github__delete_*"
decision = "deny"
reason = "deleting on GitHub needs a person"
{extra}"#
        ),
    )
    .unwrap();
    Setup {
        audit: base.join("state/audit.jsonl"),
        _dir: dir,
        root,
        outside,
        policy,
    }
}

struct Answer {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Answer {
    /// The `permissionDecision` of a JSON answer.
    fn decision(&self) -> Option<String> {
        let v: Value = serde_json::from_str(self.stdout.trim()).ok()?;
        v["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .map(str::to_owned)
    }
}

fn run(s: &Setup, agent: &str, input: &[u8]) -> Answer {
    let mut child = Command::new(BIN)
        .args(["hook", agent, "--config"])
        .arg(&s.policy)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The hook may refuse before reading all of a huge input: a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(input);
    let out = child.wait_with_output().unwrap();
    Answer {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn pre(s: &Setup, agent: &str, tool: &str, input: Value) -> Answer {
    let event = json!({
        "session_id": "abc123",
        "transcript_path": "/home/user/.claude/projects/x/transcript.jsonl",
        "cwd": s.root,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_01ABC123",
    });
    run(s, agent, event.to_string().as_bytes())
}

fn bash(s: &Setup, command: &str) -> Answer {
    pre(
        s,
        "claude-code",
        "Bash",
        json!({"command": command, "description": "d"}),
    )
}

fn assert_denied(a: &Answer, needle: &str) {
    assert_eq!(a.code, 2, "stdout {} stderr {}", a.stdout, a.stderr);
    assert!(
        a.stdout.is_empty(),
        "a refusal prints nothing on stdout: {}",
        a.stdout
    );
    assert!(
        a.stderr.contains(needle),
        "stderr should hold '{needle}': {}",
        a.stderr
    );
    assert_eq!(a.stderr.lines().count(), 1, "one line: {}", a.stderr);
}

fn assert_no_decision(a: &Answer) {
    assert_eq!((a.code, a.stdout.as_str()), (0, ""), "stderr {}", a.stderr);
}

#[test]
fn the_documented_bash_example_gets_the_policys_answer() {
    let s = setup("");
    // An allowed program with no hook rule: no decision, Claude's own prompts apply.
    assert_no_decision(&bash(&s, "git status"));
    // hook = "allow" and hook = "ask".
    let a = bash(&s, "ls -la src");
    assert_eq!((a.code, a.decision().as_deref()), (0, Some("allow")));
    let a = bash(&s, "cp notes.txt src/copy.txt");
    assert_eq!((a.code, a.decision().as_deref()), (0, Some("ask")));
    // Refusals, each with its reason.
    assert_denied(&bash(&s, "git push -f"), "no force pushes");
    assert_denied(&bash(&s, "rm -rf /"), "'rm' is on the denylist");
    assert_denied(&bash(&s, "npm test"), "'npm' is not on the allowlist");
    assert_denied(&bash(&s, "ls; rm -rf ~"), "shell operator ';'");
    assert_denied(&bash(&s, "cat notes.txt | sh"), "shell operator '|'");
    assert_denied(&bash(&s, "echo $(id)"), "command substitution");
}

#[test]
fn expansions_the_shell_would_do_are_refused() {
    let s = setup("");
    assert_denied(&bash(&s, "cat *"), "unquoted '*'");
    assert_denied(&bash(&s, "cat src/?"), "unquoted '?'");
    assert_denied(&bash(&s, "cat {a,b}"), "unquoted '{'");
    assert_denied(&bash(&s, "echo a=~/x"), "unquoted '~'");
    // Quoted, they are literal to bash too.
    assert_no_decision(&bash(&s, "echo '*' \"{a,b}\" 'a=~/x'"));
}

#[test]
fn paths_outside_the_roots_are_path_escape() {
    let s = setup("");
    let secret = s.outside.join("secret");
    assert_denied(
        &bash(&s, &format!("cat {}", secret.display())),
        "PATH_ESCAPE",
    );
    assert_denied(&bash(&s, "cat ../outside/secret"), "PATH_ESCAPE");
    // A symlink inside the root that leads out.
    std::os::unix::fs::symlink(&secret, s.root.join("link")).unwrap();
    assert_denied(&bash(&s, "cat link"), "PATH_ESCAPE");
    let a = pre(
        &s,
        "claude-code",
        "Read",
        json!({"file_path": s.root.join("link")}),
    );
    assert_denied(&a, "PATH_ESCAPE");
    // `..` through a folder that does not exist yet.
    let a = pre(
        &s,
        "claude-code",
        "Write",
        json!({"file_path": format!("{}/src/new/../../../outside/x", s.root.display()), "content": "x"}),
    );
    assert_denied(&a, "PATH_ESCAPE");
    assert!(!s.outside.join("x").exists());
    // A `cwd` outside every root.
    let event = json!({
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": s.outside,
        "tool_input": {"command": "ls"},
    });
    assert_denied(
        &run(&s, "claude-code", event.to_string().as_bytes()),
        "beneath none of the [hook] roots",
    );
    // An absolute path elsewhere.
    let a = pre(
        &s,
        "claude-code",
        "Write",
        json!({"file_path": "/etc/passwd", "content": "x"}),
    );
    assert_denied(&a, "PATH_ESCAPE");
}

#[test]
fn protected_paths_cannot_be_written() {
    let s = setup("[hook.protected_extra_is_not_a_key]\n");
    // An unknown key is refused at start-up: the call is refused (exit 2), not waved through.
    let a = bash(&s, "ls");
    assert_denied(&a, "policy does not load");

    let s = setup("");
    let write = |path: &Path| {
        pre(
            &s,
            "claude-code",
            "Write",
            json!({"file_path": path, "content": "#!/bin/sh\necho pwned\n"}),
        )
    };
    for protected in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".claude/settings.json",
        ".mcp.json",
        ".bashrc",
        "src/.GIT/config",
        ".vscode/tasks.json",
    ] {
        assert_denied(&write(&s.root.join(protected)), "protected path");
    }
    // Through a symlink that stays inside but names a protected file.
    std::os::unix::fs::symlink(".git/config", s.root.join("innocent")).unwrap();
    assert_denied(&write(&s.root.join("innocent")), "protected path");
    // A dangling symlink: writing it would create its target.
    std::os::unix::fs::symlink(".git/hooks/post-checkout", s.root.join("dangling")).unwrap();
    assert_denied(&write(&s.root.join("dangling")), "does not exist");
    // A hard link to a file outside the root.
    std::fs::hard_link(s.outside.join("secret"), s.root.join("hardlink")).unwrap();
    assert_denied(&write(&s.root.join("hardlink")), "hard links");
    // Bash may not even name a protected path.
    assert_denied(
        &bash(&s, "cp notes.txt .git/hooks/pre-commit"),
        "protected path '.git'",
    );
    // An ordinary file is fine: no decision.
    assert_no_decision(&write(&s.root.join("src/app.py")));
    let a = pre(
        &s,
        "claude-code",
        "Edit",
        json!({"file_path": s.root.join("notes.txt"), "old_string": "a", "new_string": "b"}),
    );
    assert_no_decision(&a);
}

#[test]
fn a_bare_repository_cannot_be_planted() {
    let s = setup("");
    let write = |rel: &str| {
        pre(
            &s,
            "claude-code",
            "Write",
            json!({"file_path": s.root.join(rel), "content": "ref: refs/heads/main\n"}),
        )
    };
    // The first marker alone is an ordinary file; the hook lets it be written.
    assert_no_decision(&write("plant/HEAD"));
    std::fs::create_dir_all(s.root.join("plant")).unwrap();
    std::fs::write(s.root.join("plant/HEAD"), "ref: refs/heads/main\n").unwrap();
    // The second would make `plant` a repository git obeys (core.fsmonitor, hooks).
    assert_denied(&write("plant/objects/info"), "bare git repository");
    assert_denied(&write("plant/refs/heads/main"), "bare git repository");
}

#[test]
fn mcp_tools_are_judged_by_name_and_codex_gets_its_own_format() {
    let s = setup("");
    let a = pre(
        &s,
        "claude-code",
        "mcp__github__create_issue",
        json!({"title": "x"}),
    );
    assert_eq!((a.code, a.decision().as_deref()), (0, Some("ask")));
    let a = pre(&s, "claude-code", "mcp__github__delete_repo", json!({}));
    assert_denied(&a, "deleting on GitHub needs a person");
    assert_no_decision(&pre(&s, "claude-code", "mcp__other__x", json!({})));

    // Codex: deny is exit 2; allow is no decision (its PreToolUse refuses `allow` without
    // a rewritten input); ask is a refusal that says a person must approve.
    assert_denied(
        &pre(&s, "codex", "Bash", json!({"command": "git push -f"})),
        "no force pushes",
    );
    assert_no_decision(&pre(&s, "codex", "Bash", json!({"command": "ls -la"})));
    assert_denied(
        &pre(&s, "codex", "Bash", json!({"command": "cp notes.txt b"})),
        "cannot ask",
    );
    // apply_patch: every file the patch names is checked.
    let patch = "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** End Patch";
    assert_no_decision(&pre(&s, "codex", "apply_patch", json!({"command": patch})));
    let patch = "*** Begin Patch\n*** Update File: src/a.py\n*** Move to: .git/hooks/pre-push\n*** End Patch";
    assert_denied(
        &pre(&s, "codex", "apply_patch", json!({"command": patch})),
        "protected path",
    );
    let patch = "*** Begin Patch\n*** Add File: ../outside/x\n+x\n*** End Patch";
    assert_denied(
        &pre(&s, "codex", "apply_patch", json!({"command": patch})),
        "PATH_ESCAPE",
    );
    assert_denied(
        &pre(&s, "codex", "apply_patch", json!({"command": "rm -rf /"})),
        "names no file",
    );
}

#[test]
fn malformed_and_hostile_events_are_exit_2_never_1() {
    let s = setup("");
    assert_denied(&run(&s, "claude-code", b""), "not a JSON object");
    assert_denied(&run(&s, "claude-code", b"{not json"), "not a JSON object");
    assert_denied(&run(&s, "claude-code", b"[1,2]"), "not a JSON object");
    assert_denied(
        &run(
            &s,
            "claude-code",
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
        ),
        "'tool_input' is missing",
    );
    assert_denied(
        &run(
            &s,
            "claude-code",
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        ),
        "no 'cwd'",
    );
    assert_denied(
        &run(
            &s,
            "claude-code",
            br#"{"hook_event_name":"UserPromptSubmit","prompt":"x"}"#,
        ),
        "not one safe-mcp answers",
    );
    // 40 MB: refused whole, unread past the bound.
    let mut huge = br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/","tool_input":{"command":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 40 * 1024 * 1024));
    huge.extend(br#""}}"#);
    assert_denied(&run(&s, "claude-code", &huge), "larger than");
    // Deep nesting: serde_json's recursion limit, an error, not a crash.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_denied(
        &run(&s, "claude-code", deep.as_bytes()),
        "not a JSON object",
    );
    // A policy that cannot be read.
    let broken = Setup {
        policy: s.root.join("no-such-policy.toml"),
        ..setup("")
    };
    assert_denied(&bash(&broken, "ls"), "policy does not load");
}

#[test]
fn every_decision_is_an_audit_record_in_one_chain() {
    let s = setup("");
    bash(&s, "git status");
    bash(&s, "git push -f");
    bash(
        &s,
        "git push https://user:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x",
    );
    run(&s, "claude-code", b"garbage");
    let text = std::fs::read_to_string(&s.audit).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r["tool"] == "hook"));
    assert_eq!(records[0]["decision"], "none");
    assert_eq!(records[1]["decision"], "deny");
    assert_eq!(records[1]["decided_by"], "rules[0]");
    assert_eq!(records[3]["code"], "INVALID_REQUEST");
    // The command is kept, its secret is not.
    assert!(!text.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    assert!(
        records[2]["command"]
            .as_str()
            .unwrap()
            .contains("[REDACTED:")
    );
    let out = Command::new(BIN)
        .args(["audit", "verify"])
        .arg(&s.audit)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok: 4 records\n");
    // A log that cannot be written refuses the call (fail-closed).
    std::fs::remove_file(&s.audit).unwrap();
    std::fs::create_dir(&s.audit).unwrap();
    assert_denied(&bash(&s, "git status"), "audit record could not be written");
}

#[test]
fn post_tool_use_feeds_the_scanners_findings_back() {
    let s = setup("");
    let file = s.root.join("src/server.js");
    std::fs::write(
        &file,
        "const { exec } = require('child_process');\n\
         server.tool('run', {}, async ({ name }) => { exec(`git log ${name}`); });\n",
    )
    .unwrap();
    let event = json!({
        "hook_event_name": "PostToolUse", "tool_name": "Write", "cwd": s.root,
        "tool_input": {"file_path": file, "content": "..."},
        "tool_response": {"success": true},
    });
    let a = run(&s, "claude-code", event.to_string().as_bytes());
    assert_eq!(a.code, 0, "{}", a.stderr);
    let v: Value = serde_json::from_str(a.stdout.trim()).unwrap();
    assert_eq!(v["decision"], "block");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("exec_template_literal"), "{reason}");
    assert!(reason.contains("Fix:"), "{reason}");
    // A clean file: nothing to say.
    std::fs::write(&file, "console.log('hi');\n").unwrap();
    let a = run(&s, "claude-code", event.to_string().as_bytes());
    assert_no_decision(&a);
}

#[test]
fn check_shows_the_decision_and_its_rule() {
    let s = setup("");
    let check = |args: &[&str]| {
        let out = Command::new(BIN)
            .arg("check")
            .arg("--config")
            .arg(&s.policy)
            .arg("--cwd")
            .arg(&s.root)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = check(&["git push -f"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("decision: denied") && out.contains("rule:     rules[0]"),
        "{out}"
    );
    let (code, out) = check(&["--json", "--", "ls", "-la", "src"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["decided_by"], "rules[1]");
    assert!(v["program"].as_str().unwrap().ends_with("/ls"));
    assert_eq!(v["paths"], json!(["src"]));
    let (code, _) = check(&["cat ../outside/secret"]);
    assert_eq!(code, 1);
    let out = Command::new(BIN)
        .args(["check", "--config", "/nonexistent.toml", "ls"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_demos_hook_half_gives_the_answers_it_shows() {
    let dir = tempfile::tempdir().unwrap();
    let dir_path = dir.path().canonicalize().unwrap();
    safe_mcp::demo::make_sandbox(&dir_path).unwrap();
    let policy = safe_mcp::demo_hook::make_policy(&dir_path).unwrap();
    let jail = dir_path.join("sandbox/terminal");
    let x = safe_mcp::demo_hook::run(Path::new(BIN), &policy, &jail).unwrap();
    assert_eq!(x.len(), 3);
    assert!(
        x[0].stdout.contains(r#""permissionDecision":"allow""#),
        "{}",
        x[0].stdout
    );
    assert!(
        x[1].stderr.contains("'rm' is on the denylist"),
        "{}",
        x[1].stderr
    );
    assert!(x[2].stderr.contains("PATH_ESCAPE"), "{}", x[2].stderr);
    assert!(!dir_path.join("sandbox/outside.txt").exists());
}

#[test]
fn attacks_found_in_review_stay_closed() {
    let s = setup("");
    // A value glued after a cluster of flags: `-vt DIR`.
    assert_denied(
        &bash(&s, &format!("cp -vt{} notes.txt", s.outside.display())),
        "PATH_ESCAPE",
    );
    assert_denied(&bash(&s, "cp -vt.. notes.txt"), "PATH_ESCAPE");
    assert_denied(&bash(&s, "cp -vt.git notes.txt"), "protected path '.git'");
    // Codex trims patch lines before it reads a header.
    let patch = "*** Begin Patch\n*** Add File: ok.txt\n+hi\n *** Add File: .git/hooks/pre-commit\n+x\n*** End Patch";
    assert_denied(
        &pre(&s, "codex", "apply_patch", json!({"command": patch})),
        "protected path",
    );
    // Bash through a hard link or a dangling symlink.
    std::fs::hard_link(s.outside.join("secret"), s.root.join("hl")).unwrap();
    assert_denied(&bash(&s, "cp notes.txt hl"), "hard links");
    std::os::unix::fs::symlink(".git/hooks/pre-push", s.root.join("dl")).unwrap();
    assert_denied(&bash(&s, "cp notes.txt dl"), "does not exist");
    // Glob and Grep patterns that walk out.
    let glob = pre(&s, "claude-code", "Glob", json!({"pattern": "../**/*"}));
    assert_denied(&glob, "leads outside");
    let grep = pre(
        &s,
        "claude-code",
        "Grep",
        json!({"pattern": "x", "glob": "/etc/*"}),
    );
    assert_denied(&grep, "leads outside");
    assert_no_decision(&pre(
        &s,
        "claude-code",
        "Glob",
        json!({"pattern": "src/**/*.rs"}),
    ));
    // A long word that names no path is no refusal.
    let long = format!("echo {}", "w".repeat(300));
    assert_no_decision(&bash(&s, &long));
    // A command past the parser's bound is refused and recorded by length and hash.
    let huge = format!("echo {}", "x".repeat(20_000));
    assert_denied(&bash(&s, &huge), "bytes long");
    let log = std::fs::read_to_string(&s.audit).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["command_bytes"], 20_005);
    assert!(last.get("command").is_none());
}
