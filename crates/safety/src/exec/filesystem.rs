//! Landlock for the command: write access only beneath the jail root; read and
//! execute beneath the jail root and the listed system folders; nothing else. Applied in the
//! launcher to itself just before `execve`, so only the command (and what it starts) is
//! confined, and the kernel enforces it even for root.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, RestrictionStatus,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use serde::{Deserialize, Serialize};

/// Why Landlock could not be prepared or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum LandlockError {
    /// The ruleset could not be built (the text is the landlock crate's).
    #[error(transparent)]
    Ruleset(#[from] landlock::RulesetError),
    /// The kernel has no Landlock.
    #[error("Landlock is not available")]
    Unavailable,
    /// `no_new_privs` could not be set.
    #[error("no_new_privs: {0}")]
    NoNewPrivs(rustix::io::Errno),
    /// The kernel refused the ruleset.
    #[error("landlock_restrict_self: {0}")]
    Restrict(std::io::Error),
}

/// The newest Landlock ABI whose rights we ask for (best effort below it).
/// ABI 9 adds mediation of `connect` to named unix sockets, which older kernels lack.
const TARGET_ABI: ABI = ABI::V9;

/// The oldest ABI that carries the guarantee "no write outside the jail": ABI 3 adds
/// `truncate`, without which a command could empty any file it can name.
pub(crate) const MINIMUM_ABI: u32 = 3;

/// Read and execute access every ordinary program needs: the system's programs and
/// libraries, and the few `/etc` files libc, locales, TLS and git read. `/etc` as a whole is
/// not here on purpose (`/etc/shadow`, keys and tokens live there).
pub(crate) const DEFAULT_READ_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
    // Certificates, not keys: `/etc/ssl/private` and `/etc/pki/tls/private` hold the host's
    // private keys, readable by a root command if the whole of `/etc/ssl` were listed.
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates.conf",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust/extracted",
    "/etc/pki/tls/openssl.cnf",
    "/etc/gitconfig",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/inputrc",
    "/etc/terminfo",
    "/etc/os-release",
    "/etc/alternatives",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

/// Device files a command may also write to (`> /dev/null` style sinks).
pub(crate) const DEVICE_WRITE_PATHS: &[&str] = &["/dev/null", "/dev/full"];

/// What Landlock did for one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LandlockReport {
    /// The kernel's Landlock ABI (0: none).
    pub abi: u32,
    /// `fully_enforced`, `partially_enforced` or `not_enforced`.
    pub status: String,
    /// TCP bind/connect refused by Landlock (network-off profiles).
    pub network_rules: bool,
    /// Signals and abstract unix sockets scoped to the sandbox (ABI 6).
    pub scoped: bool,
    /// What this kernel's ABI cannot mediate, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmediated: Vec<String>,
}

impl LandlockReport {
    /// True when the guarantee "no write outside the jail" holds.
    pub(crate) fn confines_writes(&self) -> bool {
        self.status != "not_enforced" && self.abi >= MINIMUM_ABI
    }
}

/// Everything the launcher needs to build the ruleset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FsRules {
    /// Full access beneath this folder (the jail root).
    pub write_root: PathBuf,
    /// Read and execute beneath these.
    pub read_paths: Vec<PathBuf>,
    /// Refuse TCP bind and connect.
    pub deny_network: bool,
}

fn kernel_abi(status: &RestrictionStatus) -> u32 {
    match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => kernel_abi
            .and_then(|k| u32::try_from(k).ok())
            .unwrap_or(effective_abi as u32),
        _ => 0,
    }
}

/// Build the ruleset (every path opened, every rule added) without applying it.
fn build(rules: &FsRules) -> Result<landlock::RulesetCreated, LandlockError> {
    let all = AccessFs::from_all(TARGET_ABI);
    let read = AccessFs::from_read(TARGET_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        // A command must not signal the server (or anything outside its sandbox), nor reach
        // abstract unix sockets that processes outside listen on.
        .scope(Scope::from_all(TARGET_ABI))?;
    if rules.deny_network {
        // TCP bind and connect are refused outright: no rule grants any port.
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    let readable: Vec<&Path> = rules.read_paths.iter().map(PathBuf::as_path).collect();
    Ok(ruleset
        .create()?
        .add_rules(path_beneath_rules(readable, read))?
        .add_rules(path_beneath_rules(DEVICE_WRITE_PATHS, all))?
        // Writes go to the jail and nowhere else: `cp x /etc/y`, `tee /tmp/x`,
        // `git log --output=/tmp/x` all meet EACCES even if a policy rule missed them.
        .add_rules(path_beneath_rules([rules.write_root.as_path()], all))?)
}

/// Build the ruleset and restrict the calling thread (the launcher is single-threaded).
/// Also sets `no_new_privs`, so a setuid binary cannot regain what the ruleset took.
/// The fallback when the server could not hand over a [`Prepared`] ruleset.
pub(crate) fn restrict_self(rules: &FsRules) -> Result<LandlockReport, LandlockError> {
    let status = build(rules)?.restrict_self()?;
    let abi = kernel_abi(&status);
    let status = match status.ruleset {
        RulesetStatus::FullyEnforced => "fully_enforced",
        RulesetStatus::PartiallyEnforced => "partially_enforced",
        RulesetStatus::NotEnforced => "not_enforced",
    };
    Ok(report(rules, abi, status))
}

fn report(rules: &FsRules, abi: u32, status: &str) -> LandlockReport {
    let mut unmediated = Vec::new();
    if abi < 9 {
        unmediated.push("connect to named unix sockets (needs Landlock ABI 9)".to_string());
    }
    if abi < 6 {
        unmediated.push("signals and abstract unix sockets (need Landlock ABI 6)".to_string());
    }
    if rules.deny_network && abi < 4 {
        unmediated.push("TCP bind/connect (needs Landlock ABI 4)".to_string());
    }
    LandlockReport {
        abi,
        status: status.to_string(),
        network_rules: rules.deny_network && abi >= 4,
        scoped: abi >= 6,
        unmediated,
    }
}

/// A ruleset the server builds once (opening every read path with `O_PATH` costs ~45
/// system-call round trips per command otherwise) and hands to each launcher by descriptor;
/// the launcher only calls `landlock_restrict_self`. The ruleset is never changed after it
/// is built, so sharing it between concurrent commands is sound.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The ruleset descriptor (close-on-exec in the server; inherited by the launcher only).
    pub fd: std::os::fd::OwnedFd,
    /// What applying it gives, as [`restrict_self`] would report it.
    pub report: LandlockReport,
}

/// Build the ruleset for `rules` in the server, without applying it. `Err` when Landlock
/// is unavailable (the launcher then tries, and reports, on its own).
pub(crate) fn prepare(rules: &FsRules) -> Result<Prepared, LandlockError> {
    let abi = super::sys::landlock_abi();
    if abi < 1 {
        return Err(LandlockError::Unavailable);
    }
    let created = build(rules)?;
    let fd: Option<std::os::fd::OwnedFd> = created.into();
    let fd = fd.ok_or(LandlockError::Unavailable)?;
    let abi = u32::try_from(abi).unwrap_or(0);
    // BestEffort: every right asked for (up to TARGET_ABI) is handled when the kernel knows
    // TARGET_ABI; below it, the crate drops what the kernel lacks (partially enforced).
    let status = if abi >= TARGET_ABI as u32 {
        "fully_enforced"
    } else {
        "partially_enforced"
    };
    Ok(Prepared {
        fd,
        report: report(rules, abi, status),
    })
}

/// Apply a ruleset the server prepared: `no_new_privs`, then `landlock_restrict_self`.
pub(crate) fn restrict_with(
    fd: std::os::fd::BorrowedFd<'_>,
    report: &LandlockReport,
) -> Result<LandlockReport, LandlockError> {
    rustix::thread::set_no_new_privs(true).map_err(LandlockError::NoNewPrivs)?;
    super::sys::landlock_restrict_self(fd).map_err(LandlockError::Restrict)?;
    Ok(report.clone())
}

/// The read list for a policy: the defaults, the policy's own `read_paths` and every `PATH`
/// folder (a program the policy's `PATH` finds must be executable).
pub fn read_paths(policy_paths: &[PathBuf], path_var: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = DEFAULT_READ_PATHS.iter().map(PathBuf::from).collect();
    out.extend(policy_paths.iter().cloned());
    out.extend(
        path_var
            .split(':')
            .filter(|p| Path::new(p).is_absolute())
            .map(PathBuf::from),
    );
    out.sort();
    out.dedup();
    out
}
