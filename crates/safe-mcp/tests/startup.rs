//! Every fatal start-up condition prints its own `fatal: ...` line naming the
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
        safe_mcp::demo::hand_jail_to_nobody(dir.path(), &dir.path().join("jail")).unwrap();
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
    // The file, the line and column and the parser's message on the fatal line, then the
    // offending line with a caret under the place: not folded onto one line with `|`.
    let fatal = format!(
        "fatal: policy file '{}' is invalid: line 1, column 22: unclosed array, expected `]`",
        p.display()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines.iter().position(|l| *l == fatal);
    let at = at.unwrap_or_else(|| panic!("no {fatal:?} in {stderr}"));
    assert_eq!(
        lines.get(at + 1..at + 3),
        Some(
            &[
                "  1 | audit_log = [unclosed",
                "    |                      ^"
            ][..]
        )
    );
    assert!(!out.status.success());
}

#[test]
fn mistyped_value_is_fatal_with_its_place_in_plain_words() {
    let s = Sandbox::new();
    let p = s.policy(&format!(
        "{GOOD}[terminal.limits]\ntimeout_seconds = \"x\"\n"
    ));
    let out = start_with("terminal", &p);
    assert_fatal(
        &out,
        "is invalid: line 8, column 19: invalid type: string \"x\", expected a whole number (0 \
         or more) in `terminal.limits.timeout_seconds`",
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("u64"));
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
fn journal_inside_the_terminal_jail_is_fatal_for_both_servers() {
    // One policy for both servers: the terminal's commands write in the jail, so the
    // organiser's journal (its undo history) must not be there.
    let s = Sandbox::new();
    std::fs::create_dir_all(s.path().join("ws")).unwrap();
    let p = s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"ws\"\njournal = \"jail/journal.json\"\n"
    ));
    for server in ["terminal", "files"] {
        let out = start(server, &["--config", p.to_str().unwrap()], &[]);
        assert_fatal(&out, "files.journal");
        assert_fatal(&out, "lies inside terminal.jail_root");
    }
    // The same policy with the journal outside the jail starts the terminal server.
    let p = s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"ws\"\njournal = \"state/journal.json\"\n"
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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

/// An allow-form option spec that cannot be read is fatal and names the rule and the entry.
#[test]
fn allow_form_with_a_bad_option_spec_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&format!(
        "{GOOD}\n[[terminal.rules]]\ncommand = \"ls\"\nallow_options = [\"-l\", \"-w COLS\"]\nexamples_allow = [\"ls -l\"]\n"
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(
        &out,
        "terminal.rules[0] ('ls'): allow_options entry '-w COLS'",
    );
}

/// An allow form must prove itself: without examples it is fatal; an example it refuses
/// against its claim is fatal too.
#[test]
fn allow_form_without_examples_or_with_a_wrong_one_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&format!(
        "{GOOD}\n[[terminal.rules]]\ncommand = \"ls\"\nallow_options = [\"-l\"]\n"
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(
        &out,
        "terminal.rules[0] ('ls'): an allow form (allow_options) needs at least one",
    );
    let p = s.policy(&format!(
        "{GOOD}\n[[terminal.rules]]\ncommand = \"ls\"\nallow_options = [\"-l\"]\nexamples_allow = [\"ls -la\"]\n"
    ));
    let out = start("terminal", &["--config", p.to_str().unwrap()], &[]);
    assert_fatal(
        &out,
        "example 'ls -la' should be allowed but is denied (option '-a' (in '-la') is not allowed for 'ls')",
    );
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
    // The demo's set-up: the example policy, the seeding script, the jail handed to nobody
    // when root (a root server never runs a command as root).
    let copy = safe_mcp::demo::make_sandbox(s.path()).unwrap();
    let out = start("terminal", &["--config", copy.to_str().unwrap()], &[]);
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Both servers exit cleanly (status 0, no `fatal:` line) when the client closes stdin
/// before the handshake: nothing to serve is not an error.
#[test]
fn both_servers_exit_cleanly_when_stdin_closes_before_initialize() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    for server in ["terminal", "files"] {
        let out = start_with(server, &p);
        assert!(
            out.status.success() && fatal_line(&out).is_empty(),
            "{server}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---- Each remaining fatal condition (config.rs, policy, journal, audit). ----

/// A files-server policy beside [`GOOD`]: workspace `ws`, journal in `state/`.
fn files_policy(s: &Sandbox, extra: &str) -> PathBuf {
    std::fs::create_dir_all(s.path().join("ws")).unwrap();
    s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"ws\"\njournal = \"state/j.json\"\n{extra}"
    ))
}

/// Start `server` on [`GOOD`] followed by `extra`, and assert the fatal line names `needle`.
fn fatal_with_good_policy_and(server: &str, extra: &str, needle: &str) {
    let s = Sandbox::new();
    let p = s.policy(&format!("{GOOD}{extra}"));
    assert_fatal(&start_with(server, &p), needle);
}

fn start_with(server: &str, policy: &Path) -> Output {
    start(server, &["--config", policy.to_str().unwrap()], &[])
}

/// Start a server, complete the MCP handshake on its stdin, then close it: a server that
/// got past start-up answers `initialize` and exits cleanly at EOF.
fn start_and_greet(server: &str, policy: &Path) -> Output {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .arg(server)
        .arg("--config")
        .arg(policy)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("SAFE_MCP_LOG", "error")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run safe-mcp");
    let mut stdin = child.stdin.take().unwrap();
    // A server that refused to start has closed its stdin: a failed write is its answer.
    let _ = stdin.write_all(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup-test","version":"1"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n"
        )
        .as_bytes(),
    );
    drop(stdin);
    child.wait_with_output().expect("wait for safe-mcp")
}

#[test]
fn files_policy_of_these_tests_starts() {
    // The base the files tests below break one thing of: it must start as it is, so each
    // refusal below is caused by the one change that test makes.
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    for server in ["files", "terminal"] {
        let out = start_and_greet(server, &p);
        assert!(
            out.status.success() && fatal_line(&out).is_empty(),
            "{server}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("\"serverInfo\""),
            "{server} did not answer initialize: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn policy_path_that_cannot_be_read_is_fatal() {
    // Tests may run as root, for whom mode 000 hides nothing: a folder stands at the path.
    let s = Sandbox::new();
    let p = s.path().join("policy.toml");
    std::fs::create_dir(&p).unwrap();
    let out = start_with("terminal", &p);
    assert_fatal(
        &out,
        &format!("policy file '{}' cannot be read", p.display()),
    );
}

#[test]
fn unset_audit_log_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&GOOD.replace("audit_log = \"state/audit.jsonl\"", ""));
    assert_fatal(
        &start_with("terminal", &p),
        "audit_log is not set: set it in the policy file or via SAFE_MCP_AUDIT_LOG",
    );
}

#[test]
fn bad_audit_fail_mode_is_fatal_and_named() {
    let s = Sandbox::new();
    let p = s.policy(&format!("audit_fail_mode = \"sometimes\"\n{GOOD}"));
    let out = start_with("terminal", &p);
    assert_fatal(
        &out,
        "is invalid: line 1, column 19: unknown variant `sometimes`",
    );
    assert_fatal(&out, "in `audit_fail_mode`");
}

#[test]
fn too_small_audit_rotate_bytes_is_fatal_and_named() {
    let s = Sandbox::new();
    let p = s.policy(&format!("audit_rotate_bytes = 100\n{GOOD}"));
    let needle = "audit_rotate_bytes: must be 0 (never rotate) or at least 4096";
    assert_fatal(&start_with("terminal", &p), needle);
    // The same from its environment variable, on a policy without the key.
    let p = s.policy(GOOD);
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[("SAFE_MCP_AUDIT_ROTATE_BYTES", "10")],
    );
    assert_fatal(&out, needle);
}

#[test]
fn unknown_files_skip_predicate_is_fatal_and_named() {
    let s = Sandbox::new();
    let p = files_policy(
        &s,
        "[[files.skip]]\nlayer = \"protection\"\nwhen = [\"dotfiles\"]\nreason = \"x\"\n",
    );
    let out = start_with("files", &p);
    assert_fatal(
        &out,
        "is invalid: line 13, column 9: unknown variant `dotfiles`",
    );
    assert_fatal(&out, "in `files.skip.when`");
}

#[test]
fn unknown_files_skip_layer_is_fatal_and_named() {
    let s = Sandbox::new();
    let p = files_policy(
        &s,
        "[[files.skip]]\nlayer = \"politeness\"\nwhen = [\"dotfile\"]\nreason = \"x\"\n",
    );
    let out = start_with("files", &p);
    assert_fatal(
        &out,
        "is invalid: line 12, column 9: unknown variant `politeness`",
    );
    assert_fatal(&out, "in `files.skip.layer`");
}

#[test]
fn invalid_args_pattern_regex_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[[terminal.rules]]\ncommand = \"ls\"\nargs_patterns = [\"-l\", \"(unclosed\"]\n",
        "terminal.rules[0] ('ls'): args pattern '(unclosed' does not compile",
    );
}

#[test]
fn rule_command_that_is_not_a_bare_name_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[[terminal.rules]]\ncommand = \"/bin/ls\"\ndeny_args = [\"-R\"]\n",
        "terminal.rules[0] ('/bin/ls'): command must be a bare program name",
    );
}

#[test]
fn rule_with_an_empty_deny_args_entry_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[[terminal.rules]]\ncommand = \"ls\"\ndeny_args = [\"-R\", \"  \"]\n",
        "terminal.rules[0] ('ls'): deny_args holds an empty entry",
    );
}

#[test]
fn rule_with_a_relative_executable_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[[terminal.rules]]\ncommand = \"ls\"\nexecutable = \"bin/ls\"\n",
        "terminal.rules[0] ('ls'): executable 'bin/ls' must be an absolute path",
    );
}

#[test]
fn rule_with_an_unknown_profile_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[[terminal.rules]]\ncommand = \"ls\"\nprofile = \"lenient\"\n",
        "unknown variant `lenient`, expected one of `strict`, `standard`, `permissive` in `terminal.rules.profile`",
    );
}

#[test]
fn unknown_sandbox_profile_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[terminal.sandbox]\nprofile = \"lenient\"\n",
        "unknown variant `lenient`, expected one of `strict`, `standard`, `permissive` in `terminal.sandbox.profile`",
    );
}

#[test]
fn requiring_a_disabled_kernel_sandbox_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[terminal.sandbox]\nenabled = false\nrequire_kernel_sandbox = true\n",
        "terminal.sandbox.require_kernel_sandbox: cannot be true while [terminal.sandbox] enabled = false",
    );
}

#[test]
fn zero_timeout_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[terminal.limits]\ntimeout_seconds = 0\n",
        "terminal.limits.timeout_seconds: must be at least 1",
    );
}

#[test]
fn zero_output_cap_is_fatal() {
    fatal_with_good_policy_and(
        "terminal",
        "\n[terminal.limits]\nmax_output_bytes = 0\n",
        "terminal.limits.max_output_bytes: must be at least 1",
    );
}

#[test]
fn relative_path_entry_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&GOOD.replace(
        "jail_root = \"jail\"",
        "jail_root = \"jail\"\npath = \"/usr/bin:bin\"",
    ));
    assert_fatal(
        &start_with("terminal", &p),
        "terminal.path: every PATH entry must be an absolute folder",
    );
}

#[test]
fn bad_boolean_override_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(GOOD);
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[("SAFE_MCP_SANDBOX_ENABLED", "perhaps")],
    );
    assert_fatal(
        &out,
        "environment variable SAFE_MCP_SANDBOX_ENABLED: 'perhaps' is not true or false",
    );
}

#[test]
fn override_into_a_key_that_is_not_a_table_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy("audit_log = \"state/audit.jsonl\"\nterminal = 5\n");
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[(
            "SAFE_MCP_JAIL_ROOT",
            s.path().join("jail").to_str().unwrap(),
        )],
    );
    assert_fatal(
        &out,
        "environment variable SAFE_MCP_JAIL_ROOT: policy key 'terminal' is not a table",
    );
}

#[test]
fn unset_journal_is_fatal() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.path().join("ws")).unwrap();
    let p = s.policy(&format!("{GOOD}\n[files]\nworkspace_root = \"ws\"\n"));
    assert_fatal(
        &start_with("files", &p),
        "files.journal is not set: set it in the policy file or via SAFE_MCP_JOURNAL",
    );
}

#[test]
fn missing_workspace_root_is_fatal() {
    let s = Sandbox::new();
    let p = s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"nope\"\njournal = \"state/j.json\"\n"
    ));
    let ws = s.path().join("nope");
    assert_fatal(
        &start_with("files", &p),
        &format!("files.workspace_root '{}' does not exist", ws.display()),
    );
}

#[test]
fn workspace_root_that_is_a_file_is_fatal() {
    let s = Sandbox::new();
    std::fs::write(s.path().join("afile"), "x").unwrap();
    let p = s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"afile\"\njournal = \"state/j.json\"\n"
    ));
    let ws = s.path().join("afile");
    assert_fatal(
        &start_with("files", &p),
        &format!("files.workspace_root '{}' is not a directory", ws.display()),
    );
}

#[test]
fn audit_log_inside_workspace_is_fatal() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    let text = std::fs::read_to_string(&p).unwrap().replace(
        "audit_log = \"state/audit.jsonl\"",
        "audit_log = \"ws/audit.jsonl\"",
    );
    std::fs::write(&p, text).unwrap();
    let out = start_with("files", &p);
    assert_fatal(&out, "audit_log '");
    assert_fatal(&out, "lies inside files.workspace_root");
}

#[test]
fn journal_whose_folder_does_not_exist_is_fatal() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("state/j.json", "no-such-folder/j.json");
    std::fs::write(&p, text).unwrap();
    let out = start_with("files", &p);
    assert_fatal(
        &out,
        &format!(
            "its folder '{}' does not exist",
            s.path().join("no-such-folder").display()
        ),
    );
}

#[test]
fn corrupt_journal_is_fatal() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    std::fs::write(s.path().join("state/j.json"), "{\"t\":\"begin\", garbage\n").unwrap();
    let out = start_with("files", &p);
    assert_fatal(&out, "is corrupt at line 1");
    assert_fatal(&out, "j.json");
}

#[test]
fn audit_log_that_cannot_be_opened_is_fatal_for_files_when_closed() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    // A folder at the log's path: no mode bit is involved, so this holds for root too.
    std::fs::create_dir(s.path().join("state/audit.jsonl")).unwrap();
    let out = start_with("files", &p);
    assert_fatal(&out, "audit log '");
    assert_fatal(&out, "audit.jsonl' cannot be written");
}

#[test]
fn audit_log_with_a_broken_last_record_is_fatal_for_files() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    std::fs::write(
        s.path().join("state/audit.jsonl"),
        "{\"seq\":1,\"prev\":\"forged\",\"hash\":\"nope\"}\n",
    )
    .unwrap();
    let out = start_with("files", &p);
    assert_fatal(&out, "is broken at its end");
}

// ---- Where the audit log is, and that it opens, decided at start-up. ----

#[test]
fn dangling_symlink_audit_log_into_the_jail_is_fatal() {
    // The link's target does not exist yet: the server would create it inside the jail,
    // where the model reads and empties it.
    let s = Sandbox::new();
    std::os::unix::fs::symlink(
        s.path().join("jail/not-yet.jsonl"),
        s.path().join("state/audit.jsonl"),
    )
    .unwrap();
    let p = s.policy(GOOD);
    let out = start_with("terminal", &p);
    assert_fatal(&out, "lies inside terminal.jail_root");
    assert_fatal(&out, "jail/not-yet.jsonl");
    assert!(!s.path().join("jail/not-yet.jsonl").exists());
    // The same through a relative link and a chain of two links.
    std::fs::remove_file(s.path().join("state/audit.jsonl")).unwrap();
    std::os::unix::fs::symlink("hop", s.path().join("state/audit.jsonl")).unwrap();
    std::os::unix::fs::symlink("../jail/x.jsonl", s.path().join("state/hop")).unwrap();
    assert_fatal(
        &start_with("terminal", &p),
        "lies inside terminal.jail_root",
    );
}

#[test]
fn audit_log_that_is_a_symlink_outside_every_root_is_fatal() {
    let s = Sandbox::new();
    std::fs::write(s.path().join("state/real.jsonl"), "").unwrap();
    std::os::unix::fs::symlink("real.jsonl", s.path().join("state/audit.jsonl")).unwrap();
    let out = start_with("terminal", &s.policy(GOOD));
    assert_fatal(&out, "audit_log '");
    assert_fatal(&out, "is a symlink (to '");
    assert_fatal(&out, "give the real path");
}

#[test]
fn journal_that_is_a_symlink_is_fatal() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    std::os::unix::fs::symlink("elsewhere.json", s.path().join("state/j.json")).unwrap();
    for server in ["files", "terminal"] {
        let out = start_with(server, &p);
        assert_fatal(&out, "files.journal '");
        assert_fatal(&out, "is a symlink");
    }
}

#[test]
fn audit_log_symlink_loop_is_fatal() {
    let s = Sandbox::new();
    std::os::unix::fs::symlink("b", s.path().join("state/audit.jsonl")).unwrap();
    std::os::unix::fs::symlink("audit.jsonl", s.path().join("state/b")).unwrap();
    assert_fatal(
        &start_with("terminal", &s.policy(GOOD)),
        "cannot be resolved: more than 40 symlinks",
    );
}

#[test]
fn audit_log_equal_to_journal_is_fatal_for_both_servers() {
    let s = Sandbox::new();
    let p = files_policy(&s, "");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("state/j.json", "state/audit.jsonl");
    std::fs::write(&p, text).unwrap();
    for server in ["files", "terminal"] {
        let out = start_with(server, &p);
        assert_fatal(&out, "is the same path as");
        assert_fatal(&out, "audit_log '");
        assert_fatal(&out, "files.journal '");
    }
}

#[test]
fn jail_and_workspace_that_overlap_are_fatal_for_both_servers() {
    // Same folder, the workspace inside the jail, the jail inside the workspace.
    for (jail, ws, relation) in [
        ("jail", "jail", "is the same path as"),
        ("jail", "jail/ws", "lies inside"),
        ("ws/jail", "ws", "lies inside"),
    ] {
        let s = Sandbox::new();
        std::fs::create_dir_all(s.path().join(jail)).unwrap();
        std::fs::create_dir_all(s.path().join(ws)).unwrap();
        let p = s.policy(&format!(
            "{}\n[files]\nworkspace_root = \"{ws}\"\njournal = \"state/j.json\"\n",
            GOOD.replace("jail_root = \"jail\"", &format!("jail_root = \"{jail}\""))
        ));
        for server in ["files", "terminal"] {
            let out = start_with(server, &p);
            assert_fatal(&out, relation);
            assert_fatal(&out, "terminal.jail_root '");
            assert_fatal(&out, "files.workspace_root '");
        }
    }
}

#[test]
fn a_missing_root_of_the_other_server_is_not_this_servers_error() {
    let s = Sandbox::new();
    let p = s.policy(&format!(
        "{GOOD}\n[files]\nworkspace_root = \"no-such-ws\"\njournal = \"state/j.json\"\n"
    ));
    let out = start_with("terminal", &p);
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shipped policy.toml, its jail filled in, with the audit log's folder (the shipped
/// `/var/lib/safe-mcp`, here a temporary stand-in) missing.
#[test]
fn terminal_with_the_shipped_policy_and_no_audit_folder_is_fatal() {
    let s = Sandbox::new();
    let copy = s.path().join("policy.toml");
    std::fs::copy(repo_file("policy.toml"), &copy).unwrap();
    let missing = s.path().join("var-lib-safe-mcp");
    let log = missing.join("audit.jsonl");
    let out = start(
        "terminal",
        &["--config", copy.to_str().unwrap()],
        &[
            (
                "SAFE_MCP_JAIL_ROOT",
                s.path().join("jail").to_str().unwrap(),
            ),
            ("SAFE_MCP_AUDIT_LOG", log.to_str().unwrap()),
            (
                "SAFE_MCP_JOURNAL",
                missing.join("organizer-journal.json").to_str().unwrap(),
            ),
        ],
    );
    assert_fatal(
        &out,
        &format!("its folder '{}' does not exist", missing.display()),
    );
}

#[test]
fn terminal_with_a_folder_at_the_audit_log_path_is_fatal() {
    let s = Sandbox::new();
    std::fs::create_dir(s.path().join("state/audit.jsonl")).unwrap();
    let out = start_and_greet("terminal", &s.policy(GOOD));
    assert_fatal(&out, "audit.jsonl' cannot be written");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("serverInfo"),
        "a server that cannot record answered initialize"
    );
}

#[test]
fn terminal_with_a_broken_last_audit_record_is_fatal() {
    let s = Sandbox::new();
    std::fs::write(
        s.path().join("state/audit.jsonl"),
        "{\"seq\":1,\"prev\":\"forged\",\"hash\":\"nope\"}\n",
    )
    .unwrap();
    let out = start_and_greet("terminal", &s.policy(GOOD));
    assert_fatal(&out, "is broken at its end");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("serverInfo"));
}

#[test]
fn terminal_under_fail_open_starts_without_its_log_and_says_so() {
    let s = Sandbox::new();
    std::fs::create_dir(s.path().join("state/audit.jsonl")).unwrap();
    let p = s.policy(&format!("audit_fail_mode = \"open\"\n{GOOD}"));
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[("SAFE_MCP_LOG", "warn")],
    );
    assert!(
        out.status.success() && fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("audit log unavailable, continuing (audit_fail_mode = open)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_audit_on_replaced_is_fatal_and_named() {
    let s = Sandbox::new();
    let p = s.policy(&format!("audit_on_replaced = \"ignore\"\n{GOOD}"));
    let out = start_with("terminal", &p);
    assert_fatal(&out, "unknown variant `ignore`");
    assert_fatal(&out, "in `audit_on_replaced`");
    let p = s.policy(GOOD);
    let out = start(
        "terminal",
        &["--config", p.to_str().unwrap()],
        &[("SAFE_MCP_AUDIT_ON_REPLACED", "sometimes")],
    );
    assert_fatal(&out, "unknown variant `sometimes`");
}

/// The commands' HOME is `<TMPDIR>/safe-mcp-home-<uid>`: a folder there that is not the
/// server's own empty one (here one holding a planted `.gitconfig`) stops the start-up with
/// its path named, instead of being handed to every command.
#[test]
fn a_home_folder_that_is_not_an_empty_one_of_the_server_is_fatal() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let s = Sandbox::new();
    let p = s.policy(GOOD);
    let tmp = s.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    let home = tmp.join(format!("safe-mcp-home-{uid}"));
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join(".gitconfig"), "[core]\n\tpager = sh\n").unwrap();
    let env = [("TMPDIR", tmp.to_str().unwrap())];
    let out = start("terminal", &["--config", p.to_str().unwrap()], &env);
    assert_fatal(&out, "is not an empty folder of mode 0555");
    // Emptied, but writable by others: still refused.
    std::fs::remove_file(home.join(".gitconfig")).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = start("terminal", &["--config", p.to_str().unwrap()], &env);
    assert_fatal(&out, "is not an empty folder of mode 0555");
    // Empty and 0555: used.
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = start("terminal", &["--config", p.to_str().unwrap()], &env);
    assert!(
        fatal_line(&out).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn demo_without_a_writable_temp_folder_says_tmpdir_would_help() {
    let out = start("demo", &[], &[("TMPDIR", "/nonexistent-safe-mcp-tmp")]);
    assert_fatal(
        &out,
        "fatal: cannot make the demo's temporary folder in '/nonexistent-safe-mcp-tmp' (No such \
         file or directory (os error 2)",
    );
    assert_fatal(&out, "); set TMPDIR to a folder you can write to");
}
