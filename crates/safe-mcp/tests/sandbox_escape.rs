//! The kernel layers on their own: a policy that allow-lists `sh` and `python3` on purpose, so
//! the argument rules cannot be what stops an attack, driven through the built `safe-mcp`
//! binary and the rmcp client. Each attack is judged on the host: the outside file's `stat`
//! and extended attributes before and after, the mode bits of what a command made, a marker
//! file a would-be program creates, the uid a command reports.
//!
//! As root (as on CI) the commands run as `nobody` (the jail's owner). A missing kernel
//! mechanism is a loud SKIP, and a failure under STRICT_SANDBOX_TESTS=1.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use safe_mcp::client;
use serde_json::{Value, json};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp"))
}

/// A temporary jail handed to nobody, a state folder, and a policy allowing shells.
struct Fixture {
    dir: tempfile::TempDir,
    policy: PathBuf,
}

impl Fixture {
    fn new(sandbox: &str) -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("safe-mcp-escape-")
            .tempdir()
            .unwrap();
        let jail = dir.path().join("jail");
        std::fs::create_dir_all(&jail).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        // An existing repository in the jail, as a user's project would have.
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(jail.join("repo"))
            .status()
            .unwrap();
        assert!(git.success());
        safe_mcp::demo::hand_jail_to_nobody(dir.path(), &jail).unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(
            &policy,
            format!(
                "audit_log = \"state/audit.jsonl\"\n\
                 [terminal]\njail_root = \"jail\"\n\
                 [terminal.allowlist]\ncommands = [\"sh\", \"python3\", \"git\", \"id\", \"cat\", \"grep\"]\n\
                 [terminal.sandbox]\n{sandbox}\n"
            ),
        )
        .unwrap();
        Fixture { dir, policy }
    }

    fn jail(&self) -> PathBuf {
        self.dir.path().join("jail")
    }

    /// The whole sandbox report of the call that answered `envelope`, from its audit
    /// record (checked against the envelope: [`crate::recorded::recorded_report`]).
    fn report(&self, envelope: &Value) -> Value {
        crate::recorded::recorded_report(&self.dir.path().join("state/audit.jsonl"), envelope)
            .unwrap()
    }

    /// A file beside the jail, owned by the uid commands run as (so only the kernel's view,
    /// not file permissions, can stop a change to it), mode 0600, an old mtime, an xattr.
    fn outside_file(&self) -> PathBuf {
        let path = self.dir.path().join("outside.txt");
        std::fs::write(&path, "outside\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let times = rustix::fs::Timestamps {
            last_access: rustix::fs::Timespec {
                tv_sec: 1_000_000_000,
                tv_nsec: 0,
            },
            last_modification: rustix::fs::Timespec {
                tv_sec: 1_000_000_000,
                tv_nsec: 0,
            },
        };
        rustix::fs::utimensat(rustix::fs::CWD, &path, &times, rustix::fs::AtFlags::empty())
            .unwrap();
        rustix::fs::setxattr(
            &path,
            "user.origin",
            b"host",
            rustix::fs::XattrFlags::empty(),
        )
        .unwrap();
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        }
        path
    }

    async fn session(&self) -> client::Session {
        let policy = self.policy.to_string_lossy();
        client::connect(&bin(), &["terminal", "--config", &policy], &[])
            .await
            .unwrap()
    }
}

async fn run(session: &client::Session, command: &str, cwd: Option<&str>) -> Value {
    let mut args = json!({ "command": command });
    if let Some(cwd) = cwd {
        args["cwd"] = json!(cwd);
    }
    client::call(session, "run_command", args).await.unwrap()
}

/// What a command must not be able to change on a file.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    mode: u32,
    uid: u32,
    gid: u32,
    mtime: i64,
    size: u64,
    xattrs: Vec<String>,
}

fn stat(path: &Path) -> Stat {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let mut buf = vec![0u8; 4096];
    let n = rustix::fs::listxattr(path, &mut buf).unwrap();
    let mut xattrs: Vec<String> = buf[..n]
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    xattrs.sort();
    Stat {
        mode: meta.mode(),
        uid: meta.uid(),
        gid: meta.gid(),
        mtime: meta.mtime(),
        size: meta.size(),
        xattrs,
    }
}

fn skip_unless(what: &str, ok: bool, envelope: &Value) -> bool {
    if !ok {
        let message = format!("SKIPPED: {what} is not available here: {envelope}");
        if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!! {message} !!!!!!!!\n");
    }
    ok
}

/// True when the call that answered `envelope` ran in the read-only view (its summary
/// and its recorded report agree); else a loud SKIP (a failure on CI).
fn has_view(f: &Fixture, envelope: &Value) -> bool {
    let view = f.report(envelope)["mechanisms"]["view"].is_object();
    let summary = envelope["detail"]["sandbox"].as_str().unwrap_or_default();
    assert_eq!(summary.contains(" ro_view=on "), view, "{envelope}");
    skip_unless("the read-only view (mount namespace)", view, envelope)
}

/// The metadata attack of the issue: `chmod 0666`, `touch -d`, `setxattr`, `chown` on a
/// file outside the jail that the command's own uid owns.
fn metadata_attack(outside: &Path) -> String {
    let o = outside.display();
    format!(
        "sh -c \"chmod 666 {o}; touch -d 2001-01-01 {o}; python3 -c \\\"import os; \
         os.setxattr('{o}', 'user.evil', b'1')\\\"; python3 -c \\\"import os; \
         os.chown('{o}', 65534, 0)\\\"; python3 -c \\\"import os; os.truncate('{o}', 0)\\\"\""
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_outside_the_jail_does_not_change_in_the_read_only_view() {
    let f = Fixture::new("");
    let outside = f.outside_file();
    let before = stat(&outside);
    let s = f.session().await;
    let e = run(&s, &metadata_attack(&outside), None).await;
    assert_eq!(e["code"], "OK", "{e}");
    if !has_view(&f, &e) {
        return;
    }
    let stderr = e["detail"]["stderr"].as_str().unwrap_or_default();
    assert!(stderr.contains("Read-only file system"), "{e}");
    assert_eq!(stat(&outside), before, "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_view_seccomp_refuses_every_metadata_change() {
    let f = Fixture::new("namespaces = false");
    let outside = f.outside_file();
    let before = stat(&outside);
    let s = f.session().await;
    let e = run(&s, &metadata_attack(&outside), None).await;
    assert_eq!(e["code"], "OK", "{e}");
    // A downgrade: the result itself carries the whole report (and its record the same).
    assert!(
        e["detail"]["sandbox"]
            .as_str()
            .is_some_and(|s| s.contains(" ro_view=off ") && s.contains(" downgrades=")),
        "{e}"
    );
    let sandbox = &e["detail"]["sandbox_report"];
    assert_eq!(sandbox, &f.report(&e), "{e}");
    assert!(sandbox["mechanisms"]["view"].is_null(), "{e}");
    assert!(
        sandbox["mechanisms"]["seccomp"]
            .as_str()
            .unwrap_or_default()
            .contains("no chmod/chown/utimes/xattr"),
        "{e}"
    );
    assert!(
        sandbox["downgrades"].as_array().is_some_and(|d| d
            .iter()
            .any(|l| l.as_str().unwrap_or("").contains("no read-only view"))),
        "the missing view is a reported downgrade: {e}"
    );
    assert_eq!(stat(&outside), before, "{e}");
    // Inside the jail too: this second line is coarse, and says so.
    let e = run(&s, "sh -c \"echo x > mine; chmod 600 mine\"", None).await;
    let stderr = e["detail"]["stderr"].as_str().unwrap_or_default();
    assert!(stderr.contains("Operation not permitted"), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_attack_changes_the_file_when_the_sandbox_is_off() {
    // The control experiment: the same command with the kernel sandbox off does change the
    // file (it runs as the file's owner), so the tests above are not vacuous.
    let f = Fixture::new("enabled = false");
    let outside = f.outside_file();
    let before = stat(&outside);
    let s = f.session().await;
    let e = run(&s, &metadata_attack(&outside), None).await;
    assert_eq!(e["code"], "OK", "{e}");
    let after = stat(&outside);
    assert_ne!(after.mode, before.mode, "{e}");
    assert_ne!(after.mtime, before.mtime, "{e}");
    assert_ne!(after.xattrs, before.xattrs, "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_command_runs_as_root_and_no_file_gains_a_setuid_bit() {
    let f = Fixture::new("");
    let s = f.session().await;
    let e = run(&s, "id -u", None).await;
    assert_eq!(e["code"], "OK", "{e}");
    let uid = e["detail"]["stdout"].as_str().unwrap_or_default().trim();
    assert_ne!(uid, "0", "{e}");
    if rustix::process::geteuid().is_root() {
        assert_eq!(
            uid, "65534",
            "a root server runs commands as the jail's owner: {e}"
        );
        assert_eq!(f.report(&e)["mechanisms"]["run_as"], "65534:65534", "{e}");
        let summary = e["detail"]["sandbox"].as_str().unwrap_or_default();
        assert!(summary.contains(" uid=65534 "), "{e}");
    }
    // A setuid copy of a shell, by chmod, by chmod g+s, and created setuid by open(2) and
    // mknod(2): every route is refused and nothing in the jail carries the bits.
    let e = run(
        &s,
        "sh -c \"cp /bin/sh suid-sh; chmod 4755 suid-sh; chmod g+s suid-sh; \
         python3 -c \\\"import os; os.close(os.open('made-suid', os.O_CREAT | os.O_WRONLY, 0o4755))\\\"; \
         python3 -c \\\"import os, stat; os.mknod('node-suid', stat.S_IFREG | 0o6755)\\\"\"",
        None,
    )
    .await;
    assert_eq!(e["code"], "OK", "{e}");
    let stderr = e["detail"]["stderr"].as_str().unwrap_or_default();
    assert!(stderr.contains("Operation not permitted"), "{e}");
    let copy = f.jail().join("suid-sh");
    assert!(copy.exists(), "the copy itself is allowed: {e}");
    for entry in std::fs::read_dir(f.jail()).unwrap().flatten() {
        let mode = entry.metadata().unwrap().mode();
        assert_eq!(
            mode & 0o6000,
            0,
            "{} has mode {mode:o}: {e}",
            entry.path().display()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configuration_a_command_plants_is_not_obeyed_by_the_next() {
    let f = Fixture::new("");
    let s = f.session().await;
    let config = f.jail().join("repo/.git/config");
    let config_before = std::fs::read(&config).unwrap();
    // Inside the jail: a planted program that ran could create it there (outside, the view
    // would stop it anyway, and the test would prove nothing).
    let marker = f.jail().join("MARKER");
    let m = marker.display();
    // Plant, with a shell: the repository's config and hooks, a global config in HOME,
    // and the repository moved aside for a planted one.
    let e = run(
        &s,
        &format!(
            "sh -c \"printf '[core]\\n\\tfsmonitor = touch {m}\\n' >> repo/.git/config; \
             printf '#!/bin/sh\\ntouch {m}\\n' > repo/.git/hooks/post-index-change; \
             printf '[core]\\n\\tfsmonitor = touch {m}\\n' > \\$HOME/.gitconfig; \
             mv repo/.git repo/.git-aside\""
        ),
        None,
    )
    .await;
    assert_eq!(e["code"], "OK", "{e}");
    if !has_view(&f, &e) {
        return;
    }
    let protected = &f.report(&e)["mechanisms"]["view"]["protected"];
    assert_eq!(protected, &json!(["repo/.git"]), "{e}");
    let stderr = e["detail"]["stderr"].as_str().unwrap_or_default();
    assert!(stderr.contains("Read-only file system"), "{e}");
    assert!(
        stderr.contains("busy"),
        "the .git mount cannot be moved aside: {e}"
    );
    assert_eq!(std::fs::read(&config).unwrap(), config_before);
    assert!(!f.jail().join("repo/.git/hooks/post-index-change").exists());
    assert!(f.jail().join("repo/.git").is_dir());
    // HOME is an empty folder outside the jail that no command can write.
    let e = run(&s, "sh -c \"echo \\$HOME; ls -A \\$HOME\"", None).await;
    let home = e["detail"]["stdout"].as_str().unwrap_or_default();
    let home_path = home.lines().next().unwrap_or_default();
    assert!(!home_path.starts_with(&*f.jail().to_string_lossy()), "{e}");
    assert_eq!(home.lines().count(), 1, "HOME is empty: {e}");

    // A repository the command makes itself, with its own fsmonitor: the command-line
    // level configuration every command gets sets it back.
    let e = run(
        &s,
        &format!(
            "sh -c \"git init -q planted && cd planted && git config core.fsmonitor 'touch {m}' \
             && git config core.pager 'touch {m}' && git -c user.name=m -c user.email=m@m \
             commit -q --allow-empty -m planted\""
        ),
        None,
    )
    .await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    // Later commands, as the model would ask: git status in both repositories.
    for cwd in ["repo", "planted"] {
        let e = run(&s, "git status", Some(cwd)).await;
        assert_eq!(e["detail"]["exit_code"], 0, "{cwd}: {e}");
        let e = run(&s, "git -p log", Some(cwd)).await;
        assert_eq!(e["code"], "OK", "{cwd}: {e}");
    }
    assert!(!marker.exists(), "a planted program ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_reads_certificates_but_not_the_hosts_private_keys() {
    let f = Fixture::new("");
    let s = f.session().await;
    let e = run(
        &s,
        "sh -c \"ls /etc/ssl/certs | head -n 1; ls /etc/ssl/private\"",
        None,
    )
    .await;
    assert_eq!(e["code"], "OK", "{e}");
    if Path::new("/etc/ssl/certs").is_dir() {
        assert_ne!(e["detail"]["stdout"], "", "certificates are readable: {e}");
    }
    if Path::new("/etc/ssl/private").is_dir() {
        let stderr = e["detail"]["stderr"].as_str().unwrap_or_default();
        assert!(stderr.contains("Permission denied"), "{e}");
    }
}

#[test]
fn a_root_server_with_a_root_owned_jail_and_no_run_as_refuses_to_start() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("not root: a server that is not root cannot run commands as root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("jail")).unwrap();
    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "audit_log = \"state/audit.jsonl\"\n[terminal]\njail_root = \"jail\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(bin())
        .args(["terminal", "--config"])
        .arg(&policy)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("commands would run as root"), "{stderr}");
    assert!(
        stderr.contains("run_as"),
        "the message names the fix: {stderr}"
    );
    // With run_as, it starts (and the jail stays root's: nobody may only read it).
    std::fs::write(
        &policy,
        "audit_log = \"state/audit.jsonl\"\n[terminal]\njail_root = \"jail\"\n\
         [terminal.sandbox]\nrun_as = \"nobody\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(bin())
        .args(["terminal", "--config"])
        .arg(&policy)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_cannot_be_moved_aside_hidden_or_pointed_elsewhere() {
    let f = Fixture::new("");
    let s = f.session().await;
    let config = f.jail().join("repo/.git/config");
    let before = std::fs::read(&config).unwrap();
    // Moved aside for a copy with a planted config, or below the scan's depth: the folder
    // holding `.git` is a mount point in the view, so neither rename happens.
    let e = run(
        &s,
        "sh -c \"mv repo repo.orig; mkdir -p a/b/c; mv repo a/b/c/repo; ls -d repo/.git\"",
        None,
    )
    .await;
    if !has_view(&f, &e) {
        return;
    }
    let stderr = e["detail"]["stderr"].as_str().unwrap_or_default();
    assert_eq!(stderr.matches("busy").count(), 2, "{e}");
    assert!(f.jail().join("repo/.git").is_dir());
    assert!(!f.jail().join("repo.orig").exists() && !f.jail().join("a/b/c/repo").exists());
    // A `gitdir:` file pointing at a git folder the command made: protected from the next
    // call on (the planting call itself is the limit docs/sandbox.md names).
    let e = run(
        &s,
        "sh -c \"mkdir -p src && cp -r repo/.git evilgit && printf 'gitdir: ../evilgit\\n' > src/.git\"",
        None,
    )
    .await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    let e = run(&s, "sh -c \"echo '#planted' >> evilgit/config\"", None).await;
    let protected = &f.report(&e)["mechanisms"]["view"]["protected"];
    assert!(
        protected
            .as_array()
            .is_some_and(|p| p.contains(&json!("evilgit"))),
        "{e}"
    );
    assert!(
        e["detail"]["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("Read-only file system"),
        "{e}"
    );
    // Grown past the scan's bound: the report says so, and the repository an earlier call
    // protected is protected still.
    let e = run(
        &s,
        "python3 -c \"import os; [os.mkdir('d%d' % i) for i in range(4200)]\"",
        None,
    )
    .await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    let e = run(&s, "sh -c \"echo '#planted' >> repo/.git/config\"", None).await;
    // A downgrade: the result carries the whole report (the same as its record's).
    let report = &e["detail"]["sandbox_report"];
    assert_eq!(report, &f.report(&e), "{e}");
    let view = &report["mechanisms"]["view"];
    assert_eq!(view["scan_truncated"], true, "{e}");
    assert!(
        report["downgrades"].as_array().is_some_and(|d| d
            .iter()
            .any(|l| l.as_str().unwrap_or("").contains("stopped at"))),
        "{e}"
    );
    assert!(
        view["protected"]
            .as_array()
            .is_some_and(|p| p.contains(&json!("repo/.git"))),
        "{e}"
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn colour_escapes_neither_reach_the_model_nor_hide_a_key() {
    let f = Fixture::new("");
    let key = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d";
    std::fs::write(f.jail().join("creds.txt"), format!("token={key}\n")).unwrap();
    let s = f.session().await;
    // The colour escape ends in a letter right before the key: the attack of the issue.
    let e = run(&s, "grep --color=always ghp creds.txt", None).await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    let out = e["detail"]["stdout"].as_str().unwrap_or_default();
    assert!(!out.contains("ghp_u8jz"), "the key came back: {e}");
    assert!(!out.contains('\u{1b}'), "an escape came back: {e}");
    assert!(out.contains("[REDACTED:"), "{e}");
}
