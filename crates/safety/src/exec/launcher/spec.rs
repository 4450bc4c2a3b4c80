//! What the server sends a launcher: the whole launch spec of a call (as one JSON argument
//! to a launcher started for it, or as one message on the channel of a launcher started
//! ahead), and the smaller spec a launcher started ahead gets at its start.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::exec::filesystem::{FsRules, LandlockReport};

/// Everything the launcher needs, passed as one JSON argument.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchSpec {
    /// The resolved executable; `None` for the start-up probe (apply everything, run nothing).
    pub program: Option<PathBuf>,
    /// The full argv, argv\[0\] first.
    pub argv: Vec<String>,
    /// The command's whole environment.
    pub env: Vec<(String, String)>,
    /// Landlock rules.
    pub fs: FsRules,
    /// The descriptor number of the ruleset the server built from `fs` once, and what it
    /// gives; `None`: the launcher builds the ruleset itself.
    pub landlock_ruleset: Option<(i32, LandlockReport)>,
    /// RLIMIT_NOFILE.
    pub open_files: u64,
    /// RLIMIT_FSIZE.
    pub file_size_bytes: u64,
    /// RLIMIT_CPU (soft; the hard limit, one second later, is SIGKILL).
    pub cpu_seconds: u64,
    /// RLIMIT_DATA, only when no memory cgroup holds the limit.
    pub data_bytes: Option<u64>,
    /// Namespaces are allowed: a network namespace when `fs.deny_network` (inside a user
    /// namespace only for a launcher that is not root and needs one to make it).
    pub namespaces: bool,
    /// Also a PID namespace (when no cgroup can kill the whole tree: its teardown costs an
    /// RCU grace period, so it is used only where it is the tree-kill mechanism).
    pub pid_namespace: bool,
    /// The call's cgroup v2 folder (tree kill).
    pub cgroup_v2: Option<PathBuf>,
    /// The call's cgroup v1 `tasks` files (process and memory limits).
    pub cgroup_v1_tasks: Vec<PathBuf>,
    /// The descriptor number of the report pipe.
    pub report_fd: i32,
    /// The descriptor number of the gate's read end: the command is not `execve`d until the
    /// server writes `g` to it (its audit intent record is durable). `None`: no gate.
    #[serde(default)]
    pub gate_fd: Option<i32>,
    /// The server's pid (the parent re-check).
    pub parent_pid: i32,
    /// Refuse to run when Landlock or seccomp cannot be applied.
    pub require: bool,
    /// Refuse to run when no PID namespace can be made (no cgroup kills the tree).
    pub require_namespaces: bool,
    /// Build the read-only view ([`crate::exec::view`]) around this jail root (`None`: no view).
    #[serde(default)]
    pub view: Option<PathBuf>,
    /// The working folder, relative to the jail root (entered again inside the view).
    #[serde(default)]
    pub cwd_relative: PathBuf,
    /// Jail-relative `.git` entries earlier calls protected: protected again first.
    #[serde(default)]
    pub view_known: Vec<PathBuf>,
    /// Run the command as this uid and gid (a root server never runs one as root).
    #[serde(default)]
    pub run_as: Option<(u32, u32)>,
    /// seccomp refuses every change of file metadata: set by the server when no view is
    /// asked for, and by the launcher when the view could not be made.
    #[serde(default)]
    pub deny_metadata: bool,
}

/// What a launcher started ahead of its call gets at start: where to report, where its
/// call will come from, which cgroups to join now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmSpec {
    /// The descriptor number of the report pipe.
    pub report_fd: i32,
    /// The descriptor number of its end of the call channel (a `SOCK_SEQPACKET` pair): one
    /// message, the call's [`LaunchSpec`] as JSON, with the working folder and (when the
    /// call has one) the gate as `SCM_RIGHTS`.
    pub channel_fd: i32,
    /// Inherited Landlock ruleset descriptors (made close-on-exec at once; the call's spec
    /// names the one it uses).
    pub ruleset_fds: Vec<i32>,
    /// The call's cgroup v1 `tasks` files, joined at start (off the request path).
    pub cgroup_v1_tasks: Vec<PathBuf>,
    /// The call's cgroup v2 folder, joined at start through `cgroup.procs` (off the request
    /// path: that move takes the kernel's global threadgroup lock).
    #[serde(default)]
    pub cgroup_v2: Option<PathBuf>,
    /// Build the read-only view around this jail root ahead of the call.
    #[serde(default)]
    pub view: Option<PathBuf>,
    /// Jail-relative `.git` entries earlier calls protected.
    #[serde(default)]
    pub view_known: Vec<PathBuf>,
}

/// The largest call message a started-ahead launcher accepts.
pub const MAX_CALL_MESSAGE: usize = 256 * 1024;
