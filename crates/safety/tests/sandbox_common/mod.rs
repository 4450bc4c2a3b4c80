//! Shared set-up for the sandbox tests: a temporary policy, jail and audit log; the
//! terminal core started with the crate's own launcher binary; feature detection that
//! skips loudly; a unique marker to find surviving processes by their arguments.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use safety::config::{self, Server};
use safety::terminal::TerminalCore;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[path = "../../../safe-mcp/examples/bench/recorded.rs"]
mod recorded;

/// Programs the test policy allows (the attacks need shells and interpreters on purpose).
pub const ALLOWED: &[&str] = &[
    "bash", "sh", "python3", "setsid", "sleep", "yes", "touch", "cp", "cat", "true", "echo",
];

/// How to build the test server.
#[derive(Debug, Clone)]
pub struct Options {
    pub profile: &'static str,
    pub enabled: bool,
    pub namespaces: bool,
    pub cgroups: bool,
    pub require: bool,
    pub extra: &'static str,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: "standard",
            enabled: true,
            namespaces: true,
            cgroups: true,
            require: false,
            extra: "",
        }
    }
}

/// A started core in a temporary folder.
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub core: TerminalCore,
}

/// Kernel features a test can depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    Landlock,
    Seccomp,
    ProcessLimit,
    MemoryLimit,
    CgroupKill,
    PidNamespace,
    TreeKill,
}

/// The unprivileged identity test commands run as.
pub const NOBODY: u32 = 65534;

/// chown a folder to nobody (when the tests run as root, as on CI).
pub fn give_to_nobody(path: &std::path::Path) {
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    }
}

impl Setup {
    pub fn new(o: &Options) -> Setup {
        let dir = tempfile::Builder::new()
            .prefix("safe-mcp-sandbox-test-")
            .tempdir()
            .unwrap();
        std::fs::create_dir_all(dir.path().join("jail")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        // A root server runs commands as the jail's owner: give the jail (and the folder
        // around it, which the control experiments write to with the sandbox off) to nobody.
        give_to_nobody(dir.path());
        give_to_nobody(&dir.path().join("jail"));
        let allowed: Vec<String> = ALLOWED.iter().map(|a| format!("\"{a}\"")).collect();
        let policy = format!(
            "audit_log = \"state/audit.jsonl\"\n\
             [terminal]\njail_root = \"jail\"\n\
             [terminal.limits]\ntimeout_seconds = 30\nmax_output_bytes = 65536\n\
             [terminal.allowlist]\ncommands = [{}]\n\
             [terminal.sandbox]\nprofile = \"{}\"\nenabled = {}\nnamespaces = {}\ncgroups = {}\n\
             require_kernel_sandbox = {}\n{}",
            allowed.join(", "),
            o.profile,
            o.enabled,
            o.namespaces,
            o.cgroups,
            o.require,
            o.extra,
        );
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, policy).unwrap();
        let config = config::load(&path, Server::Terminal, &[]).unwrap();
        let launcher = PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp-sandbox-exec"));
        let core = TerminalCore::start_with_launcher(config, launcher).unwrap();
        Setup { dir, core }
    }

    pub fn jail(&self) -> PathBuf {
        self.dir.path().join("jail")
    }

    /// Run one `run_command` and return the envelope as JSON.
    pub async fn run(&self, args: Value) -> Value {
        let envelope = self
            .core
            .run_command(args.as_object(), &CancellationToken::new())
            .await;
        envelope.to_value()
    }

    /// The whole sandbox report of the call that answered `envelope`, from its audit
    /// record (checked against the envelope: the summary, and the whole report on the wire
    /// exactly when something was downgraded).
    pub fn report(&self, envelope: &Value) -> Value {
        recorded::recorded_report(&self.dir.path().join("state/audit.jsonl"), envelope)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// True when the start-up probe found `feature`; otherwise print a loud SKIP line (or
    /// fail, under STRICT_SANDBOX_TESTS=1) and return false.
    pub fn has(&self, feature: Feature, test: &str) -> bool {
        let probe = self.core.sandbox_probe().to_value();
        let m = &probe["mechanisms"];
        let ok = match feature {
            Feature::Landlock => m["landlock"]["abi"].as_u64().unwrap_or(0) >= 3,
            Feature::Seccomp => m["seccomp"].is_string(),
            Feature::ProcessLimit => m["cgroup"]["processes"].is_string(),
            Feature::MemoryLimit => m["cgroup"]["memory"].is_string(),
            Feature::CgroupKill => m["cgroup"]["kill"] == true,
            Feature::PidNamespace => m["namespaces"]
                .as_array()
                .is_some_and(|n| n.iter().any(|x| x == "pid")),
            Feature::TreeKill => m["tree_kill"] != "process group",
        };
        if !ok {
            let message = format!(
                "SKIPPED {test}: this kernel/host lacks {feature:?} (start-up probe: {})",
                self.core.sandbox_probe().summary()
            );
            if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
                panic!("{message}");
            }
            eprintln!("\n!!!!!!!! {message} !!!!!!!!\n");
        }
        ok
    }
}

/// A unique string to recognise a test's processes by their command line.
pub struct Marker(pub String);

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl Marker {
    pub fn new() -> Marker {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        Marker(format!("{}{n}{nanos}", std::process::id()))
    }

    /// An argument for `sleep` that is unique and long: `1000.<digits>` seconds.
    pub fn sleep_arg(&self) -> String {
        format!("1000.{}", self.0)
    }

    /// `pid: command line` of live (non-zombie: a zombie's command line is empty)
    /// processes that carry the marker.
    pub fn survivors(&self) -> Vec<String> {
        // A process killed a moment ago may still be on its way out: look twice.
        for attempt in 0..2 {
            let found = scan(&self.0);
            if found.is_empty() || attempt == 1 {
                return found
                    .into_iter()
                    .map(|(pid, text)| format!("{pid}: {text}"))
                    .collect();
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        Vec::new()
    }

    /// The pids of the processes carrying the marker now (one look).
    pub fn pids(&self) -> Vec<i32> {
        scan(&self.0).into_iter().map(|(pid, _)| pid).collect()
    }
}

fn scan(marker: &str) -> Vec<(i32, String)> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str() else { continue };
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker)
            && let Ok(pid) = pid.parse()
        {
            found.push((pid, text));
        }
    }
    found
}
