//! The shipped `policy.example.toml` through the built binary: `explain_command` refuses each
//! attack on an option that runs code with POLICY_DENIED and a reason naming the option (or operand) that
//! would run a program, write a named file or set host state, and still lets normal
//! read-only use through. explain_command runs nothing, so this holds whatever uid the
//! server would run commands as.

use safe_mcp::client;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp"))
}

/// A copy of the shipped example policy with its jail and state folders beside it, as
/// `scripts/make_demo_sandbox.sh` lays them out.
fn shipped_example(dir: &Path) -> PathBuf {
    // The demo's own set-up: the example policy, the seeding script, the jail handed to
    // nobody when root.
    safe_mcp::demo::make_sandbox(dir).unwrap()
}

async fn explain(session: &client::Session, command: &str) -> Value {
    client::call(session, "explain_command", json!({ "command": command }))
        .await
        .unwrap()
}

/// Each attack and what its reason must name. The policy is judged before paths, so
/// `/tmp/x` is refused by the rule, not as PATH_ESCAPE.
const ATTACKS: &[(&str, &str)] = &[
    (
        "git grep --no-index --open-files-in-pager=id x",
        "option '--open-files-in-pager=id' is not allowed for 'git grep'",
    ),
    (
        "git grep --no-index '--open-files-in-pager=id;' x",
        "option '--open-files-in-pager=id;'",
    ),
    (
        "sort --compress-program=sh -S 1K x",
        "option '--compress-program=sh' is not allowed for 'sort'",
    ),
    (
        "sort -o .git/config x",
        "option '-o' is not allowed for 'sort'",
    ),
    ("uniq a .git/config", "'.git/config' is one too many"),
    (
        "git -c core.pager=sh log",
        "option '-c' is not allowed for 'git'",
    ),
    (
        "git --exec-path=/tmp log",
        "option '--exec-path=/tmp' is not allowed for 'git'",
    ),
    (
        "git config core.fsmonitor x",
        "subcommand 'config' of 'git' is not allowed",
    ),
    (
        "git log --output=/tmp/x",
        "option '--output=/tmp/x' is not allowed for 'git log'",
    ),
    (
        "git diff --ext-diff",
        "option '--ext-diff' is not allowed for 'git diff'",
    ),
    (
        "grep --color=always key x",
        "option '--color=always' is not allowed for 'grep'",
    ),
    (
        "date -s 2020-01-01",
        "option '-s' is not allowed for 'date'",
    ),
];

#[tokio::test]
async fn shipped_policy_refuses_each_attack_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let policy = shipped_example(dir.path());
    let policy = policy.to_string_lossy();
    let session = client::connect(&bin(), &["terminal", "--config", &policy], &[])
        .await
        .unwrap();
    for (attack, names) in ATTACKS {
        let e = explain(&session, attack).await;
        assert_eq!(e["code"], "POLICY_DENIED", "{attack}: {e}");
        assert_eq!(e["ok"], false, "{attack}: {e}");
        let reason = e["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains(names),
            "{attack}: reason '{reason}' should name {names}"
        );
        assert!(e.to_string().contains("rules["), "{attack}: {e}");
    }
    // Normal read-only use still passes, with its exact documented reason.
    for command in [
        "git status",
        "git log --oneline -n 5",
        "git diff HEAD~1",
        "sort -rn notes.txt",
        "uniq -c notes.txt",
        "grep -n demo notes.txt",
        "cat notes.txt",
    ] {
        let e = explain(&session, command).await;
        assert_eq!(e["code"], "OK", "{command}: {e}");
        let program = command.split(' ').next().unwrap_or_default();
        assert_eq!(e["reason"], format!("'{program}' is allowed"), "{command}");
    }
    session.cancel().await.ok();
}
