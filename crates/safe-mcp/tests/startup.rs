//! Every fatal start-up condition of SPEC §3 prints its own `fatal: ...` line naming the
//! problem and exits non-zero. These start the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

fn repo_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name)
}

/// Start a server with exactly `env` and stdin closed; it either fails at once or serves
/// until EOF on stdin (which closes it cleanly).
fn start(server: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg(server)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("SAFE_MCP_LOG", "error");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(std::process::Stdio::null())
        .output()
        .expect("run safe-mcp")
}

fn fatal_line(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .lines()
        .find(|l| l.starts_with("fatal: "))
        .unwrap_or_default()
        .to_string()
}

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("jail")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        Sandbox { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn policy(&self, body: &str) -> PathBuf {
        let p = self.path().join("policy.toml");
        std::fs::write(&p, body).unwrap();
        p
    }
}

const GOOD: &str = r#"
audit_log = "state/audit.jsonl"
[terminal]
jail_root = "jail"
[terminal.allowlist]
commands = ["ls"]
"#;

fn assert_fatal(out: &Output, needle: &str) {
    assert!(
        !out.status.success(),
        "expected failure, got {:?}",
        out.status
    );
    let line = fatal_line(out);
    assert!(
        line.contains(needle),
        "fatal line {line:?} should contain {needle:?}; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn no_policy_file_is_fatal() {
    let out = start("terminal", &[], &[]);
    assert_fatal(&out, "no policy file given");
}

#[test]
fn missing_policy_file_is_fatal() {
    let out = start("terminal", &["--config", "/nonexistent/policy.toml"], &[]);
    assert_fatal(&out, "/nonexistent/policy.toml' cannot be read");
}

#[test]
fn invalid_toml_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy("audit_log = [unclosed");
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "is invalid");
}

#[test]
fn unknown_key_is_fatal_and_named() {
    let s = Sandbox::new();
    let p = s.policy(&GOOD.replace(
        "[terminal.allowlist]",
        "[terminal.allowlist]\ncommandz = [\"rm\"]",
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "commandz");
}

#[test]
fn unset_jail_root_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&GOOD.replace("jail_root = \"jail\"", ""));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "terminal.jail_root is not set");
}

#[test]
fn missing_jail_root_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&GOOD.replace("jail_root = \"jail\"", "jail_root = \"nope\""));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "does not exist");
}

#[test]
fn jail_root_that_is_a_file_is_fatal() {
    let s = Sandbox::new();
    std::fs::write(s.path().join("afile"), "x").unwrap();
    let p = s.policy(&GOOD.replace("jail_root = \"jail\"", "jail_root = \"afile\""));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "is not a directory");
}

#[test]
fn bad_redaction_regex_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&format!(
        "{GOOD}\n[redaction]\nextra_patterns = [{{ name = \"broken\", regex = \"(unclosed\" }}]\n"
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "broken");
}

#[test]
fn audit_log_inside_jail_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&GOOD.replace(
        "audit_log = \"state/audit.jsonl\"",
        "audit_log = \"jail/audit.jsonl\"",
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "lies inside terminal.jail_root");
}

#[test]
fn audit_log_reaching_into_jail_through_a_symlink_is_fatal() {
    let s = Sandbox::new();
    std::os::unix::fs::symlink(s.path().join("jail"), s.path().join("state/j")).unwrap();
    let p = s.policy(&GOOD.replace("state/audit.jsonl", "state/j/audit.jsonl"));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "lies inside terminal.jail_root");
}

#[test]
fn files_skip_rule_without_layer_is_fatal() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.path().join("ws")).unwrap();
    let p = s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"ws\"\njournal = \"state/j.json\"\n[[files.skip]]\nwhen = [\"dotfile\"]\nreason = \"x\"\n"
    ));
    let out = start("files", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "layer");
}

#[test]
fn journal_inside_workspace_is_fatal() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.path().join("ws")).unwrap();
    let p = s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"ws\"\njournal = \"ws/j.json\"\n"
    ));
    let out = start("files", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "lies inside files.workspace_root");
}

#[test]
fn unknown_safe_mcp_variable_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(GOOD);
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[("SAFE_MCP_JAIL_RROT", "/tmp")],
    );
    assert_fatal(&out, "SAFE_MCP_JAIL_RROT");
}

#[test]
fn bad_override_value_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(GOOD);
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[("SAFE_MCP_TIMEOUT_SECONDS", "soon")],
    );
    assert_fatal(&out, "SAFE_MCP_TIMEOUT_SECONDS");
}

#[test]
fn rule_that_contradicts_its_examples_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&format!(
        "{GOOD}\n[[terminal.rules]]\ncommand = \"ls\"\ndeny_args = [\"-R\"]\nexamples_deny = [\"ls -la\"]\n"
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(&out, "example 'ls -la' should be denied");
}

#[test]
fn env_override_fills_a_missing_root() {
    let s = Sandbox::new();
    let p = s.policy(&GOOD.replace("jail_root = \"jail\"", ""));
    let jail = s.path().join("jail");
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[("SAFE_MCP_JAIL_ROOT", jail.to_str().unwrap())],
    );
    // stdin is /dev/null: the server starts, sees EOF and exits cleanly.
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn config_flag_wins_over_env_variable() {
    let s = Sandbox::new();
    let good = s.policy(GOOD);
    let out = start(
        "terminal",
        &["--config", good.to_str().unwrap()],
        &[("SAFE_MCP_POLICY_FILE", "/nonexistent.toml")],
    );
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = start(
        "terminal",
        &[],
        &[("SAFE_MCP_POLICY_FILE", good.to_str().unwrap())],
    );
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shipped policy.toml refuses to start until the operator fills in the roots.
#[test]
fn shipped_policy_toml_refuses_until_roots_are_filled_in() {
    let s = Sandbox::new();
    let copy = s.path().join("policy.toml");
    std::fs::copy(repo_file("policy.toml"), &copy).unwrap();
    let out = start("terminal", &["--config", copy.to_str().unwrap()], &[]);
    assert_fatal(&out, "terminal.jail_root is not set");
    let out = start("files", &["--config", copy.to_str().unwrap()], &[]);
    assert_fatal(&out, "files.workspace_root is not set");
}

/// The shipped example policy starts (its rules pass their own examples).
#[test]
fn shipped_example_policy_starts_against_a_sandbox() {
    let s = Sandbox::new();
    let copy = s.path().join("policy.example.toml");
    std::fs::copy(repo_file("policy.example.toml"), &copy).unwrap();
    let status = Command::new("bash")
        .arg(repo_file("scripts/make_demo_sandbox.sh"))
        .arg(s.path())
        .output()
        .unwrap();
    assert!(status.status.success());
    let out = start("terminal", &["--config", copy.to_str().unwrap()], &[]);
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
