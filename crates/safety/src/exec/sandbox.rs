//! The server's side of the kernel sandbox: what to ask the launcher for, and the honest
//! report of what each call really got: the profile, its concrete limits and every
//! mechanism with its status, plus the list of downgrades where the kernel or the host fell
//! short (see `docs/sandbox.md`).

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::ExecLimits;
use super::cgroup::{CgroupReport, Cgroups, LimitHits};
use super::filesystem::{self, FsRules, LandlockReport, Prepared};
use super::launcher::LaunchEvent;
use super::profile::Profile;

/// The most `.git` entries a server remembers between calls.
pub(crate) const MAX_KNOWN_REPOSITORIES: usize = 1024;

/// How the server confines commands; built once from the policy.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The binary that has the launcher mode (the running `safe-mcp`).
    pub launcher: PathBuf,
    /// The jail root: the only place a command may write.
    pub jail_root: PathBuf,
    /// Read-and-execute folders (defaults, policy `read_paths`, `PATH`).
    pub read_paths: Vec<PathBuf>,
    /// A missing mechanism refuses the command (`require_kernel_sandbox = true`).
    pub require: bool,
    /// Use user + PID (+ net) namespaces.
    pub namespaces: bool,
    /// Use per-call cgroups.
    pub cgroups: bool,
    /// Build the read-only view (a mount namespace) for every command.
    pub view: bool,
    /// Run every command as this uid and gid (a root server; `None`: the server's own).
    pub run_as: Option<(u32, u32)>,
}

/// The running sandbox: configuration plus the cgroup hierarchies found at start-up.
#[derive(Debug)]
pub struct Sandbox {
    /// The configuration.
    pub config: SandboxConfig,
    /// Hierarchies for per-call cgroups.
    pub cgroups: Cgroups,
    /// The Landlock rulesets, built once: `[network allowed, network denied]`. `None` where
    /// the server could not build one (the launcher then builds and reports its own).
    rulesets: [Option<Prepared>; 2],
    /// Every `.git` entry (jail-relative) a call's view protected: each later view protects
    /// them first, so a command that grows the tree past the scan's bound cannot hide one.
    known_repositories: std::sync::Mutex<std::collections::BTreeSet<PathBuf>>,
}

impl Sandbox {
    /// Find the cgroup hierarchies (creating our base folders).
    pub fn new(config: SandboxConfig) -> Sandbox {
        let cgroups = if config.cgroups {
            Cgroups::discover(&config.launcher)
        } else {
            Cgroups::none()
        };
        let ruleset = |deny_network: bool| {
            filesystem::prepare(&FsRules {
                write_root: config.jail_root.clone(),
                read_paths: config.read_paths.clone(),
                deny_network,
            })
            .ok()
        };
        let rulesets = [ruleset(false), ruleset(true)];
        Sandbox {
            config,
            cgroups,
            rulesets,
            known_repositories: Default::default(),
        }
    }

    /// The `.git` entries earlier views protected.
    pub(crate) fn known_repositories(&self) -> Vec<PathBuf> {
        self.known_repositories
            .lock()
            .map(|k| k.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Remember what a call's view protected (bounded: a tree of more repositories than
    /// [`MAX_KNOWN_REPOSITORIES`] relies on the scan for the rest).
    pub(crate) fn remember_repositories(&self, protected: &[String]) {
        if let Ok(mut known) = self.known_repositories.lock() {
            for path in protected {
                if known.len() >= MAX_KNOWN_REPOSITORIES {
                    break;
                }
                known.insert(PathBuf::from(path));
            }
        }
    }

    /// The Landlock rules of a call (the ruleset built from them once: [`Sandbox::ruleset`]).
    pub(crate) fn fs_rules(&self, deny_network: bool) -> FsRules {
        FsRules {
            write_root: self.config.jail_root.clone(),
            read_paths: self.config.read_paths.clone(),
            deny_network,
        }
    }

    /// The Landlock ruleset built once for calls with (or without) network, if any.
    pub(crate) fn ruleset(&self, deny_network: bool) -> Option<&Prepared> {
        self.rulesets
            .get(usize::from(deny_network))
            .and_then(Option::as_ref)
    }
}

/// Which mechanisms were active for one call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Mechanisms {
    /// The command went through the sandbox launcher at all.
    pub launcher: bool,
    /// The launcher was started ahead of the call (after the previous answer) and had
    /// joined the call's cgroups before the call came.
    pub launcher_started_ahead: bool,
    /// Landlock (null when not applied).
    pub landlock: Option<LandlockReport>,
    /// The seccomp filter installed (null when none).
    pub seccomp: Option<String>,
    /// Namespaces the command ran in (`user`, `pid`, `net`).
    pub namespaces: Vec<String>,
    /// The read-only view of the file system (null when not made).
    pub view: Option<super::view::ViewReport>,
    /// The `uid:gid` the command ran as, when the launcher switched to it (a root server).
    pub run_as: Option<String>,
    /// Capabilities left to the command: `all dropped` (root), `none held` (not root), or
    /// null when the launcher did not report.
    pub capabilities: Option<String>,
    /// Per-call cgroup: tree kill and the limits it carries.
    pub cgroup: CgroupReport,
    /// rlimits set, e.g. `NOFILE=256`.
    pub rlimits: Vec<String>,
    /// What kills the whole tree: `cgroup.kill`, `pid namespace` or `process group`.
    pub tree_kill: String,
    /// The command ran in its own session and process group.
    pub process_group: bool,
}

/// `detail.sandbox` of a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SandboxReport {
    /// The profile's name.
    pub profile: Profile,
    /// The concrete limits of the call.
    pub limits: LimitsReport,
    /// What was really active.
    pub mechanisms: Mechanisms,
    /// Mechanisms that were wanted and missing, with what that means.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub downgrades: Vec<String>,
    /// How often a limit stopped something during the call.
    #[serde(skip_serializing_if = "LimitHits::is_empty")]
    pub limit_hits: LimitHits,
    /// Peak memory of the whole call, where the memory cgroup reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<u64>,
}

impl SandboxReport {
    /// The report as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The one-line summary every `run_command` result carries as `detail.sandbox`:
    /// `key=value` pairs for the profile and each mechanism (`off` where it is missing),
    /// then the number of downgrades when there are any (the result then carries this
    /// whole report as `sandbox_report`). At most [`BRIEF_MAX_BYTES`] bytes, e.g.
    /// `profile=standard landlock=7/partial seccomp=on ro_view=on ns=off uid=65534
    /// caps=dropped kill=cgroup pids=on memory=on net=on`.
    ///
    /// `landlock` is the kernel's ABI and whether the ruleset is `full`y, `partial`ly or
    /// `not-enforced`; `ro_view` the read-only view of the file system; `ns` the namespaces;
    /// `uid` the user the command ran as (`server`: the server's own); `caps` what is left of
    /// its capabilities; `kill` what kills the whole tree (`cgroup`, `pid-ns`,
    /// `process-group`); `pids` and `memory` the cgroup limits; `net` whether the network
    /// is usable (`not-blocked`: the profile turns it off and nothing could block it).
    pub fn brief(&self) -> String {
        let m = &self.mechanisms;
        let on = |on: bool| if on { "on" } else { "off" };
        let mut line = format!("profile={}", self.profile);
        if !m.launcher {
            line.push_str(" sandbox=off");
        }
        let landlock = match &m.landlock {
            Some(l) => {
                let status = match l.status.as_str() {
                    "fully_enforced" => "full",
                    "partially_enforced" => "partial",
                    "not_enforced" => "not-enforced",
                    other => other,
                };
                format!("{}/{status}", l.abi)
            }
            None => "off".into(),
        };
        let ns = if m.namespaces.is_empty() {
            "off".into()
        } else {
            m.namespaces.join("+")
        };
        let uid = match &m.run_as {
            Some(id) => id.split(':').next().unwrap_or(id),
            None => "server",
        };
        let caps = match m.capabilities.as_deref() {
            Some("all dropped") => "dropped",
            Some("none held") => "none-held",
            Some("unknown") => "unknown",
            Some(other) => other,
            None => "not-dropped",
        };
        let kill = match m.tree_kill.as_str() {
            "cgroup.kill" => "cgroup",
            "pid namespace" => "pid-ns",
            "process group" => "process-group",
            other => other,
        };
        let network_blocked = m.seccomp.is_some()
            || m.namespaces.iter().any(|n| n == "net")
            || m.landlock.as_ref().is_some_and(|l| l.network_rules);
        let net = match self.limits.network {
            Network::On => "on",
            Network::Off if network_blocked => "off",
            Network::Off => "not-blocked",
        };
        line.push_str(&format!(
            " landlock={landlock} seccomp={} ro_view={} ns={ns} uid={uid} caps={caps} \
             kill={kill} pids={} memory={} net={net}",
            on(m.seccomp.is_some()),
            on(m.view.is_some()),
            on(m.cgroup.processes.is_some()),
            on(m.cgroup.memory.is_some()),
        ));
        if !self.downgrades.is_empty() {
            line.push_str(&format!(" downgrades={}", self.downgrades.len()));
        }
        line
    }

    /// One line for the start-up log.
    pub fn summary(&self) -> String {
        let m = &self.mechanisms;
        if !m.launcher {
            return "kernel sandbox OFF (disabled by policy): process group only".into();
        }
        let landlock = match &m.landlock {
            Some(l) => format!("Landlock ABI {} {}", l.abi, l.status.replace('_', " ")),
            None => "Landlock OFF".into(),
        };
        let seccomp = if m.seccomp.is_some() {
            "seccomp on"
        } else {
            "seccomp OFF"
        };
        let view = match &m.view {
            Some(v) => format!("read-only view ({} .git protected)", v.protected.len()),
            None => "read-only view OFF".into(),
        };
        let ns = if m.namespaces.is_empty() {
            "no namespaces".to_string()
        } else {
            format!("namespaces {}", m.namespaces.join("+"))
        };
        let caps = format!(
            "capabilities {}",
            m.capabilities.as_deref().unwrap_or("NOT DROPPED")
        );
        let cg = format!(
            "cgroup kill {}, processes {}, memory {}",
            if m.cgroup.kill { "on" } else { "OFF" },
            m.cgroup.processes.as_deref().unwrap_or("OFF"),
            m.cgroup.memory.as_deref().unwrap_or("OFF"),
        );
        let mut line = format!(
            "kernel sandbox ({} profile): {landlock}; {seccomp}; {view}; {ns}; {caps}; runs as {}; {cg}; tree kill by {}",
            self.profile,
            m.run_as.as_deref().unwrap_or("the server's uid"),
            m.tree_kill
        );
        if !self.downgrades.is_empty() {
            line.push_str(&format!("; DOWNGRADED: {}", self.downgrades.join("; ")));
        }
        line
    }
}

/// The bound of [`SandboxReport::brief`].
pub const BRIEF_MAX_BYTES: usize = 200;

/// The concrete limits of a call as reported in `detail.sandbox.limits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LimitsReport {
    /// Wall-clock limit in seconds.
    pub timeout_seconds: u64,
    /// Bytes of stdout and of stderr kept (each).
    pub max_output_bytes: u64,
    /// Open descriptors per process.
    pub open_files: u64,
    /// Processes (and threads) of the whole call.
    pub processes: u64,
    /// Memory of the whole call.
    pub memory_bytes: u64,
    /// The largest file the command may write.
    pub file_size_bytes: u64,
    /// CPU seconds per process.
    pub cpu_seconds: u64,
    /// Network access.
    pub network: Network,
}

/// Whether a call may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// Allowed.
    On,
    /// Refused (seccomp, an empty network namespace, Landlock where it can).
    Off,
}

impl LimitsReport {
    /// The report of `limits`.
    pub fn of(limits: &ExecLimits) -> LimitsReport {
        LimitsReport {
            timeout_seconds: limits.timeout.as_secs(),
            max_output_bytes: u64::try_from(limits.max_output_bytes).unwrap_or(u64::MAX),
            open_files: limits.open_files,
            processes: limits.processes,
            memory_bytes: limits.memory_bytes,
            file_size_bytes: limits.file_size_bytes,
            cpu_seconds: limits.cpu_seconds,
            network: if limits.network {
                Network::On
            } else {
                Network::Off
            },
        }
    }
}

/// The report of a call that ran without the launcher (sandbox disabled by policy), as
/// `run_as` (`uid`, `gid`) when the server switched to it.
pub(crate) fn unsandboxed_report(
    profile: Profile,
    limits: &ExecLimits,
    run_as: Option<(u32, u32)>,
) -> SandboxReport {
    SandboxReport {
        profile,
        limits: LimitsReport::of(limits),
        mechanisms: Mechanisms {
            launcher: false,
            run_as: run_as.map(|(uid, gid)| format!("{uid}:{gid}")),
            tree_kill: "process group".into(),
            process_group: true,
            ..Mechanisms::default()
        },
        memory_peak_bytes: None,
        downgrades: vec![
            "the kernel sandbox is disabled by policy ([terminal.sandbox] enabled = false): \
             no Landlock, seccomp, namespaces, cgroup or rlimits; only the timeout, the \
             output cap and the process group apply"
                .into(),
        ],
        limit_hits: LimitHits::default(),
    }
}

/// What the server knows before the launcher runs: the cgroup layer's downgrades.
pub(crate) fn cgroup_downgrades(
    limits: &ExecLimits,
    cgroup: &CgroupReport,
    problems: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    let why = if problems.is_empty() {
        String::new()
    } else {
        format!(" ({})", problems.join("; "))
    };
    if cgroup.processes.is_none() {
        out.push(format!(
            "process limit of {} not enforced: no pids cgroup{why}",
            limits.processes
        ));
    }
    if cgroup.memory.is_none() {
        out.push(format!(
            "memory limit of {} bytes enforced per process only (RLIMIT_DATA): no memory cgroup{why}",
            limits.memory_bytes
        ));
    }
    if cgroup.kill
        && let Some(e) = &cgroup.unreaped
    {
        out.push(format!(
            "a command's tree can outlive a server killed by SIGKILL: {e}; its cgroup is \
             killed only when the next server starts"
        ));
    }
    out
}

/// Merge the launcher's report lines with what the server set up.
pub(crate) fn build_report(
    profile: Profile,
    limits: &ExecLimits,
    cgroup: CgroupReport,
    cgroup_problems: &[String],
    events: &[LaunchEvent],
    hits: LimitHits,
) -> SandboxReport {
    let mut m = Mechanisms {
        launcher: true,
        cgroup,
        process_group: true,
        ..Mechanisms::default()
    };
    let mut downgrades = cgroup_downgrades(limits, &m.cgroup, cgroup_problems);
    let mut confined = false;
    for event in events {
        match event {
            LaunchEvent::Prepared {
                rlimits, problems, ..
            } => {
                m.rlimits = rlimits.clone();
                downgrades.extend(problems.iter().map(|p| format!("launcher: {p}")));
            }
            LaunchEvent::CgroupJoin {
                v2_failed,
                v1_failed,
            } => {
                if let Some(e) = v2_failed {
                    m.cgroup.kill = false;
                    downgrades.push(format!("the call's cgroup v2 could not be joined ({e})"));
                }
                if !v1_failed.is_empty() {
                    if m.cgroup.processes.as_deref() == Some("cgroup v1 pids.max") {
                        m.cgroup.processes = None;
                    }
                    if m.cgroup.memory.as_deref() == Some("cgroup v1 memory.limit_in_bytes") {
                        m.cgroup.memory = None;
                    }
                    downgrades.push(format!(
                        "the call's cgroup v1 folders could not be joined ({}): limits not enforced",
                        v1_failed.join("; ")
                    ));
                }
            }
            LaunchEvent::Namespaces { active, error } => {
                m.namespaces = active.clone();
                if let Some(e) = error {
                    downgrades.push(format!("no user/PID namespace ({e})"));
                }
            }
            LaunchEvent::View { report, error } => {
                m.view = report.clone();
                if report.as_ref().is_some_and(|r| r.scan_truncated) {
                    downgrades.push(format!(
                        "the scan for .git folders stopped at {} folders: a repository \
                         beyond it that no earlier call saw is writable",
                        super::view::SCAN_FOLDERS
                    ));
                }
                if let Some(e) = error {
                    downgrades.push(format!(
                        "no read-only view ({e}): seccomp refuses chmod, chown, utimes and \
                         xattr changes everywhere instead, and .git folders in the jail stay \
                         writable"
                    ));
                }
            }
            LaunchEvent::Identity { user, error } => {
                if error.is_none() {
                    m.run_as = Some(user.clone());
                }
            }
            LaunchEvent::Capabilities { held, error } => {
                m.capabilities = Some(held.clone());
                if let Some(e) = error {
                    downgrades.push(format!("capabilities could not be dropped ({e})"));
                }
            }
            LaunchEvent::Confined {
                landlock,
                landlock_error,
                seccomp,
                seccomp_error,
            } => {
                confined = true;
                m.landlock = landlock.clone();
                m.seccomp = seccomp.clone();
                if let Some(e) = landlock_error {
                    downgrades.push(format!(
                        "Landlock: {e}: writes outside the jail are stopped only by the path checks"
                    ));
                }
                if let Some(e) = seccomp_error {
                    downgrades.push(format!("seccomp: {e}"));
                }
            }
            LaunchEvent::Refused { .. } | LaunchEvent::ExecFailed { .. } => {}
        }
    }
    if confined && !events.iter().any(|e| matches!(e, LaunchEvent::View { .. })) {
        downgrades.push(
            "no read-only view (namespaces are off by policy): seccomp refuses chmod, chown, \
             utimes and xattr changes everywhere instead, and .git folders in the jail stay \
             writable"
                .into(),
        );
    }
    if !confined
        && !events
            .iter()
            .any(|e| matches!(e, LaunchEvent::Refused { .. }))
    {
        downgrades.push("the launcher reported no Landlock/seccomp status".into());
    }
    let pid_ns = m.namespaces.iter().any(|n| n == "pid");
    m.tree_kill = if m.cgroup.kill {
        "cgroup.kill".into()
    } else if pid_ns {
        "pid namespace".into()
    } else {
        downgrades.push(
            "whole-tree kill by process group only: a process that calls setsid can outlive the call"
                .into(),
        );
        "process group".into()
    };
    if !limits.network {
        let net_off = m.seccomp.is_some()
            || m.namespaces.iter().any(|n| n == "net")
            || m.landlock.as_ref().is_some_and(|l| l.network_rules);
        if !net_off {
            downgrades.push("network is not blocked although the profile turns it off".into());
        }
        if m.landlock.as_ref().is_some_and(|l| l.abi < 9) {
            downgrades.push(
                "a named unix socket outside the jail can still be connected to (Landlock \
                 ABI 9 mediates that; this kernel's is older): only its file permissions stand \
                 in the way"
                    .into(),
            );
        }
    }
    SandboxReport {
        profile,
        limits: LimitsReport::of(limits),
        mechanisms: m,
        downgrades,
        memory_peak_bytes: (hits.memory_peak_bytes > 0).then_some(hits.memory_peak_bytes),
        limit_hits: hits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::view::ViewReport;

    fn limits(network: bool) -> LimitsReport {
        LimitsReport {
            timeout_seconds: 30,
            max_output_bytes: 65536,
            open_files: 256,
            processes: 128,
            memory_bytes: 1 << 29,
            file_size_bytes: 1 << 30,
            cpu_seconds: 60,
            network: if network { Network::On } else { Network::Off },
        }
    }

    /// Every shape a report's mechanisms take, at their longest (a two-digit Landlock ABI,
    /// the largest uid, a two-digit downgrade count), and each missing.
    fn every_report(mut each: impl FnMut(&SandboxReport)) {
        let landlocks = [
            None,
            Some(("fully_enforced", true)),
            Some(("partially_enforced", false)),
            Some(("not_enforced", false)),
        ];
        let namespaces: [&[&str]; 3] = [&[], &["user", "pid"], &["user", "pid", "net"]];
        let capabilities = [
            None,
            Some("all dropped"),
            Some("none held"),
            Some("unknown"),
        ];
        for profile in [Profile::Strict, Profile::Standard, Profile::Permissive] {
            for launcher in [true, false] {
                for landlock in landlocks {
                    for (seccomp, view) in
                        [(false, false), (true, false), (false, true), (true, true)]
                    {
                        for ns in namespaces {
                            for caps in capabilities {
                                for cgroup in 0..8u8 {
                                    for tree_kill in
                                        ["cgroup.kill", "pid namespace", "process group"]
                                    {
                                        for downgrades in [0, 1, 99] {
                                            each(&SandboxReport {
                                                profile,
                                                limits: limits(profile != Profile::Strict),
                                                mechanisms: Mechanisms {
                                                    launcher,
                                                    landlock: landlock.map(
                                                        |(status, network_rules)| LandlockReport {
                                                            abi: 99,
                                                            status: status.into(),
                                                            network_rules,
                                                            scoped: true,
                                                            unmediated: vec!["x".repeat(300)],
                                                        },
                                                    ),
                                                    seccomp: seccomp.then(|| "x".repeat(300)),
                                                    namespaces: ns
                                                        .iter()
                                                        .map(|n| n.to_string())
                                                        .collect(),
                                                    view: view.then(|| ViewReport {
                                                        protected: vec![".git".into()],
                                                        scan_truncated: true,
                                                    }),
                                                    run_as: Some(format!(
                                                        "{}:{}",
                                                        u32::MAX - 1,
                                                        u32::MAX - 1
                                                    )),
                                                    capabilities: caps.map(str::to_string),
                                                    cgroup: CgroupReport {
                                                        kill: cgroup & 1 != 0,
                                                        processes: (cgroup & 2 != 0)
                                                            .then(|| "cgroup v1 pids.max".into()),
                                                        memory: (cgroup & 4 != 0).then(|| {
                                                            "cgroup v1 memory.limit_in_bytes".into()
                                                        }),
                                                        unreaped: None,
                                                    },
                                                    tree_kill: tree_kill.into(),
                                                    ..Mechanisms::default()
                                                },
                                                downgrades: vec![String::new(); downgrades],
                                                limit_hits: LimitHits::default(),
                                                memory_peak_bytes: Some(u64::MAX),
                                            });
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_brief_of_every_report_fits_in_200_bytes() {
        let mut count = 0;
        let mut longest = String::new();
        every_report(|report| {
            count += 1;
            let brief = report.brief();
            if brief.len() > longest.len() {
                longest = brief;
            }
        });
        assert!(count > 10_000, "{count}");
        assert!(
            longest.len() <= BRIEF_MAX_BYTES,
            "{} bytes: {longest}",
            longest.len()
        );
        assert!(!longest.contains('\n'), "{longest}");
        eprintln!("the longest brief, {} bytes: {longest}", longest.len());
    }

    #[test]
    fn the_brief_names_every_mechanism_that_is_off() {
        let mut report = SandboxReport {
            profile: Profile::Strict,
            limits: limits(false),
            mechanisms: Mechanisms {
                launcher: true,
                tree_kill: "process group".into(),
                ..Mechanisms::default()
            },
            downgrades: vec!["a".into(), "b".into()],
            limit_hits: LimitHits::default(),
            memory_peak_bytes: None,
        };
        let brief = report.brief();
        for off in [
            "landlock=off",
            "seccomp=off",
            "ro_view=off",
            "ns=off",
            "uid=server",
            "caps=not-dropped",
            "kill=process-group",
            "pids=off",
            "memory=off",
            "net=not-blocked",
            "downgrades=2",
        ] {
            assert!(brief.contains(off), "no '{off}' in: {brief}");
        }
        assert!(brief.starts_with("profile=strict "), "{brief}");
        assert!(!brief.contains("sandbox=off"), "{brief}");

        // Each one named as on once it is.
        report.mechanisms = Mechanisms {
            launcher: true,
            landlock: Some(LandlockReport {
                abi: 7,
                status: "partially_enforced".into(),
                network_rules: false,
                scoped: true,
                unmediated: Vec::new(),
            }),
            seccomp: Some("strict".into()),
            namespaces: vec!["user".into(), "pid".into(), "net".into()],
            view: Some(ViewReport {
                protected: Vec::new(),
                scan_truncated: false,
            }),
            run_as: Some("65534:65534".into()),
            capabilities: Some("all dropped".into()),
            cgroup: CgroupReport {
                kill: true,
                processes: Some("cgroup v2 pids.max".into()),
                memory: Some("cgroup v2 memory.max".into()),
                unreaped: None,
            },
            tree_kill: "cgroup.kill".into(),
            ..Mechanisms::default()
        };
        report.downgrades.clear();
        assert_eq!(
            report.brief(),
            "profile=strict landlock=7/partial seccomp=on ro_view=on ns=user+pid+net uid=65534 \
             caps=dropped kill=cgroup pids=on memory=on net=off"
        );
    }

    #[test]
    fn the_brief_of_a_disabled_sandbox_says_so_and_counts_its_downgrade() {
        let report = unsandboxed_report(Profile::Strict, &Profile::Strict.limits(), None);
        assert_eq!(
            unsandboxed_report(
                Profile::Strict,
                &Profile::Strict.limits(),
                Some((65534, 65534))
            )
            .mechanisms
            .run_as
            .as_deref(),
            Some("65534:65534")
        );
        let brief = report.brief();
        assert_eq!(
            brief,
            "profile=strict sandbox=off landlock=off seccomp=off ro_view=off ns=off uid=server \
             caps=not-dropped kill=process-group pids=off memory=off net=not-blocked downgrades=1"
        );
        assert!(brief.len() <= BRIEF_MAX_BYTES, "{} bytes", brief.len());
    }
}
