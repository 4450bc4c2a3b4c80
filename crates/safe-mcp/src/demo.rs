//! `safe-mcp demo`: a throw-away sandbox, the servers (terminal, files, guard) started as
//! child processes, driven through the rmcp client, every envelope printed; then three
//! agent hook events and their answers, and the servers' signed audit log verified.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::client::{self, Via, python_style};

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
pub async fn terminal_half(bin: &Path, policy: &Path, via: &Via) -> Result<Vec<Value>> {
    let policy = policy.to_string_lossy();
    let session = client::start(bin, &["terminal", "--config", &policy], via).await?;
    println!("== terminal server{} ==\n", over(&session));
    let mut envelopes = Vec::new();
    for command in ["cat notes.txt", "rm -rf /"] {
        let args = json!({ "command": command });
        let envelope = client::call(&session, "run_command", args.clone()).await?;
        print_call("run_command", &args, &envelope);
        envelopes.push(envelope);
    }
    session.close().await?;
    Ok(envelopes)
}

/// ` (over http://...)` for a server reached over HTTP.
pub fn over(session: &client::Served) -> String {
    match session.url() {
        Some(url) => format!(" over {url} as caller 'alice'"),
        None => String::new(),
    }
}

/// The callers of `demo --http`: `alice` may use every tool; `auditor` only the tools that
/// look, and its commands run under the strict profile.
const CALLERS: [(&str, &str); 2] = [
    ("alice", ""),
    (
        "auditor",
        "tools = [\"explain_command\", \"list_files\", \"sandbox_status\", \"trust_tier\"]\nprofile = \"strict\"\n",
    ),
];

/// `demo --http`: a tokens file with two callers in `state/` (mode 0600) named by each
/// policy's `[http]`; returns each caller's token.
fn make_callers(dir: &Path, policies: &[&Path]) -> Result<Vec<String>> {
    let mut file = String::new();
    let mut tokens = Vec::new();
    for (name, extra) in CALLERS {
        let token = safety::callers::new_token()?;
        file.push_str(&safety::callers::caller_stanza(name, &token));
        file.push_str(extra);
        file.push('\n');
        tokens.push(token);
    }
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join("state/tokens.toml"))?
        .write_all(file.as_bytes())?;
    for policy in policies {
        let text = std::fs::read_to_string(policy)?;
        let tokens_file = dir.join("state/tokens.toml");
        std::fs::write(
            policy,
            format!(
                "{text}\n# Added by demo --http: the callers' token file.\n[http]\ntokens_file = \"{}\"\n",
                tokens_file.display()
            ),
        )?;
    }
    Ok(tokens)
}

/// `demo --http`, the second caller: its tool list, a command it may not run, its dry run
/// under the strict profile; and a request with no token at all.
async fn second_caller(bin: &Path, policy: &Path, token: &str) -> Result<()> {
    let policy = policy.to_string_lossy();
    let via = Via::Http {
        token: token.to_string(),
    };
    let session = client::start(bin, &["terminal", "--config", &policy], &via).await?;
    let url = session.url().unwrap_or_default().to_string();
    println!(
        "== terminal server over {url} as caller 'auditor' (tools: explain_command; profile: strict) ==\n"
    );
    let tools = session.peer().list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    println!(">>> tools/list\n{names:?}\n");
    for (tool, command) in [
        ("run_command", "cat notes.txt"),
        ("explain_command", "cat notes.txt"),
    ] {
        let args = json!({ "command": command });
        let envelope = client::call(&session, tool, args.clone()).await?;
        print_call(tool, &args, &envelope);
    }
    // No token: the front answers 401 and records the attempt; nothing runs.
    let refused = anonymous_post(&url).await?;
    println!(">>> POST {url} without a token\n{refused}\n");
    session.close().await?;
    Ok(())
}

/// A `tools/call` with no `Authorization` header: the status line and the challenge.
async fn anonymous_post(url: &str) -> Result<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "run_command", "arguments": {"command": "cat notes.txt"}}});
    let response = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send()
        .await?;
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if status != reqwest::StatusCode::UNAUTHORIZED {
        bail!("a request without a token was answered {status}");
    }
    let reason = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.pointer("/error/message")?.as_str().map(str::to_string))
        .unwrap_or(text);
    Ok(format!(
        "HTTP {status}, WWW-Authenticate: {challenge}, {reason}"
    ))
}

/// How many records of the log name each caller.
fn records_per_caller(log: &Path) -> Result<Vec<(String, usize)>> {
    let mut counts = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(log)?.lines() {
        let record: Value = serde_json::from_str(line)?;
        let who = match (record.get("caller"), record.get("event")) {
            (Some(Value::String(c)), _) => c.clone(),
            (_, Some(Value::String(e))) if e == "http_refused" => "(refused: no caller)".into(),
            _ => continue,
        };
        *counts.entry(who).or_insert(0) += 1;
    }
    Ok(counts.into_iter().collect())
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

/// Run the whole demo in a fresh temporary folder; `keep` leaves it in place; `http`
/// reaches every server over loopback HTTP with two callers instead of stdio.
pub async fn run(keep: bool, http: bool) -> Result<()> {
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
    let guard_policy = crate::demo_guard::make_sandbox(dir.path())?;
    let tokens = match http {
        true => make_callers(dir.path(), &[&policy, &guard_policy])?,
        false => Vec::new(),
    };
    let via = match tokens.first() {
        Some(token) => Via::Http {
            token: token.clone(),
        },
        None => Via::Stdio,
    };
    terminal_half(&bin, &policy, &via).await?;
    if let Some(second) = tokens.get(1) {
        second_caller(&bin, &policy, second).await?;
    }
    crate::demo_files::run(&bin, &policy, &via).await?;
    crate::demo_guard::run(&bin, &guard_policy, &via).await?;
    crate::demo_hook::run(&bin, &hook_policy, &dir.path().join("sandbox/terminal"))?;
    let log = dir.path().join("state/audit.jsonl");
    verify_the_log(&bin, &log, &verifier)?;
    if http {
        println!("== audit: records per caller in {}", log.display());
        for (caller, n) in records_per_caller(&log)? {
            println!("{caller}: {n}");
        }
        println!();
    }
    if keep {
        let kept = dir.keep();
        println!("sandbox kept at {}", kept.display());
    }
    Ok(())
}
