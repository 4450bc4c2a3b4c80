//! `safe-mcp demo`: a throw-away sandbox, the servers (terminal, files, guard) started as
//! child processes, driven through the rmcp client, every envelope printed; then three
//! agent hook events and their answers, and the servers' signed audit log verified.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::client::{self, python_style};

/// The shipped example policy and seeding script, embedded so the demo runs from anywhere.
pub const EXAMPLE_POLICY: &str = include_str!("../../../policy.example.toml");
/// `scripts/make_demo_sandbox.sh`.
pub const SANDBOX_SCRIPT: &str = include_str!("../../../scripts/make_demo_sandbox.sh");

/// Lay out a sandbox in `dir`: the example policy plus what the seeding script makes.
pub fn make_sandbox(dir: &Path) -> Result<PathBuf> {
    let policy = dir.join("policy.example.toml");
    std::fs::write(&policy, EXAMPLE_POLICY)?;
    let script = dir.join("make_demo_sandbox.sh");
    std::fs::write(&script, SANDBOX_SCRIPT)?;
    let status = std::process::Command::new("bash")
        .arg(&script)
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .context("running make_demo_sandbox.sh with bash")?;
    if !status.success() {
        bail!("make_demo_sandbox.sh failed: {status}");
    }
    hand_jail_to_nobody(dir, &dir.join("sandbox/terminal"))?;
    if rustix::process::geteuid().is_root() {
        // `sandbox/` too must let nobody pass on the way to the jail.
        add_search_permission(&dir.join("sandbox"))?;
    }
    Ok(policy)
}

/// Add search permission for others to a folder.
fn add_search_permission(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut mode = std::fs::metadata(dir)?.permissions();
    mode.set_mode(mode.mode() | 0o001);
    std::fs::set_permissions(dir, mode)?;
    Ok(())
}

/// The uid and gid a root server's commands run as in the demo and the tests: `nobody`.
pub const NOBODY: u32 = 65534;

/// Make `jail` (beneath `dir`) a jail a root server can run commands in: a root server never
/// runs a command as root but as the jail's owner, so when this process is root the jail
/// and everything in it go to `nobody`, and `dir` gets search permission for others so
/// `nobody` can reach the jail by its path. Not root: nothing to do.
pub fn hand_jail_to_nobody(dir: &Path, jail: &Path) -> Result<()> {
    if !rustix::process::geteuid().is_root() {
        return Ok(());
    }
    add_search_permission(dir)?;
    let mut stack = vec![jail.to_path_buf()];
    while let Some(path) = stack.pop() {
        std::os::unix::fs::lchown(&path, Some(NOBODY), Some(NOBODY))
            .with_context(|| format!("chown {}", path.display()))?;
        if std::fs::symlink_metadata(&path)?.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                stack.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Print one call: `>>> tool {args}` and the envelope as indented JSON.
pub fn print_call(tool: &str, args: &Value, envelope: &Value) {
    println!(">>> tool: {tool}  args: {}", python_style(args));
    println!(
        "{}",
        serde_json::to_string_pretty(envelope).unwrap_or_default()
    );
    println!();
}

/// The terminal half: `cat notes.txt` and `rm -rf /`.
pub async fn terminal_half(bin: &Path, policy: &Path) -> Result<Vec<Value>> {
    let policy = policy.to_string_lossy();
    let session = client::connect(bin, &["terminal", "--config", &policy], &[]).await?;
    println!("== terminal server ==\n");
    let mut envelopes = Vec::new();
    for command in ["cat notes.txt", "rm -rf /"] {
        let args = json!({ "command": command });
        let envelope = client::call(&session, "run_command", args.clone()).await?;
        print_call("run_command", &args, &envelope);
        envelopes.push(envelope);
    }
    session.cancel().await.ok();
    Ok(envelopes)
}

/// Why the demo could not start, when its temporary folder cannot be made in `temp`: the
/// folder, the system's reason, and the fix (`TMPDIR` names where temporary folders go).
pub fn temp_folder_failed(temp: &Path, error: &std::io::Error) -> String {
    format!(
        "cannot make the demo's temporary folder in '{}' ({error}); set TMPDIR to a folder \
         you can write to (e.g. TMPDIR=$HOME/tmp safe-mcp demo)",
        temp.display(),
    )
}

/// The terminal and files servers' log, signed: a checkpoint key made in the sandbox's
/// `state/` (as `safe-mcp audit keygen` makes it) and named in the policy. Returns the
/// verifier key's path.
fn sign_the_log(dir: &Path, policies: &[&Path]) -> Result<PathBuf> {
    let (key, public) = (dir.join("state/audit.key"), dir.join("state/audit.key.pub"));
    safety::audit::generate_checkpoint_key("safe-mcp-demo", &key, &public)?;
    for policy in policies {
        let text = std::fs::read_to_string(policy)?;
        std::fs::write(
            policy,
            format!(
                "# Added by the demo: a signed checkpoint every 10 records and when a server \
                 stops.\naudit_checkpoint_key = \"state/audit.key\"\naudit_checkpoint_every = 10\n\
                 {text}"
            ),
        )?;
    }
    Ok(public)
}

/// `safe-mcp audit verify LOG --key PUB` on the servers' log, printed.
fn verify_the_log(bin: &Path, log: &Path, verifier: &Path) -> Result<()> {
    println!(
        "== audit: the log the terminal and files servers and the hook share, its chain and signed checkpoints"
    );
    println!(
        "$ safe-mcp audit verify {} --key {}",
        log.display(),
        verifier.display()
    );
    let out = std::process::Command::new(bin)
        .args(["audit", "verify"])
        .arg(log)
        .arg("--key")
        .arg(verifier)
        .output()
        .context("running safe-mcp audit verify")?;
    print!("{}", String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        bail!(
            "audit verify failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!();
    Ok(())
}

/// Run the whole demo in a fresh temporary folder; `keep` leaves it in place.
pub async fn run(keep: bool) -> Result<()> {
    let bin = std::env::current_exe().context("locating the safe-mcp binary")?;
    let dir = tempfile::Builder::new()
        .prefix("safe-mcp-demo-")
        .tempdir()
        .map_err(|e| anyhow::anyhow!(temp_folder_failed(&std::env::temp_dir(), &e)))?;
    let policy = make_sandbox(dir.path())?;
    let hook_policy = crate::demo_hook::make_policy(dir.path())?;
    // Both policies name the same log: every writer of a signed log signs it.
    let verifier = sign_the_log(dir.path(), &[&policy, &hook_policy])?;
    println!(
        "sandbox: {} (policy: {})\n",
        dir.path().display(),
        policy.display()
    );
    terminal_half(&bin, &policy).await?;
    crate::demo_files::run(&bin, &policy).await?;
    let guard_policy = crate::demo_guard::make_sandbox(dir.path())?;
    crate::demo_guard::run(&bin, &guard_policy).await?;
    crate::demo_hook::run(&bin, &hook_policy, &dir.path().join("sandbox/terminal"))?;
    verify_the_log(&bin, &dir.path().join("state/audit.jsonl"), &verifier)?;
    if keep {
        let kept = dir.keep();
        println!("sandbox kept at {}", kept.display());
    }
    Ok(())
}
