//! Per-call control groups (the whole-tree kill): every process a command starts is
//! born inside the call's cgroup, whatever it does afterwards (`setsid`, double fork), so
//! the whole tree can be killed at once (v2 `cgroup.kill`) and limited (`pids.max`, memory).
//!
//! Layout: `<hierarchy>/<our own cgroup>/safe-mcp.<server pid>.<k>/call-<n>` in each usable
//! hierarchy: the v2 one (kill, `populated`), v1 `pids` and v1 `memory` (limits, on hybrid
//! hosts where those controllers are bound to v1), or v2 controllers where delegated.
//! Stale folders of servers that died are removed at start-up; the server's own are
//! killed and removed by its reaper (`reaper`) as soon as the server is gone.

mod reaper;

pub use reaper::REAPER_ARG;
pub(crate) use reaper::reaper_main;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long to wait for a killed cgroup to empty before giving up on removing it.
const EMPTY_DEADLINE: Duration = Duration::from_secs(2);

/// How many fresh, never-used call folder sets are kept ready: `mkdir` in cgroupfs costs
/// ~0.1–0.3 ms per hierarchy, so it is done between calls (after the previous call's
/// folders were removed), not while a command waits. A folder is never reused.
const SPARE_SETS: usize = 2;

/// One hierarchy we can create cgroups in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// The unified (v2) hierarchy: `cgroup.kill`, `cgroup.events`, maybe `pids.max`/`memory.max`.
    V2,
    /// v1 `pids` controller.
    V1Pids,
    /// v1 `memory` controller.
    V1Memory,
}

/// A base folder (ours, `safe-mcp.<pid>`) in one hierarchy.
#[derive(Debug, Clone)]
struct Base {
    kind: Kind,
    dir: PathBuf,
}

/// The hierarchies this server may use, found once at start-up.
#[derive(Debug)]
pub struct Cgroups {
    pool: Arc<Pool>,
    problems: Vec<String>,
}

/// A call folder that could not be created (reported among the call's problems).
#[derive(Debug, thiserror::Error)]
#[error("cannot create {}: {source}", .dir.display())]
struct Unmade {
    dir: PathBuf,
    source: std::io::Error,
}

/// One call's folders, one per base, created ahead of use (or why one could not be).
type FolderSet = Vec<(Kind, PathBuf, Result<(), Unmade>)>;

/// The base folders and the fresh call folders made ahead of time.
#[derive(Debug)]
struct Pool {
    bases: Vec<Base>,
    /// The v2 base has `cgroup.kill` (kernel 5.14+), so every call folder made in it has
    /// too: found once, not for every call.
    v2_kills: bool,
    counter: AtomicU64,
    spare: Mutex<Vec<FolderSet>>,
    /// The reaper that kills what is left in these folders once the server is gone
    /// (dropped after the folders are removed), or why there is none.
    reaper: Mutex<Result<reaper::Reaper, String>>,
}

impl Pool {
    fn empty() -> Pool {
        Pool::with(Vec::new())
    }

    fn with(bases: Vec<Base>) -> Pool {
        let v2_kills = bases
            .iter()
            .any(|b| b.kind == Kind::V2 && b.dir.join("cgroup.kill").exists());
        Pool {
            bases,
            v2_kills,
            counter: AtomicU64::new(0),
            spare: Mutex::new(Vec::new()),
            reaper: Mutex::new(Err("no cgroup reaper was started".into())),
        }
    }

    /// Why a command's tree would outlive a server killed by SIGKILL: no reaper is running.
    fn unreaped(&self) -> Option<String> {
        let Ok(mut reaper) = self.reaper.lock() else {
            return Some("the cgroup reaper's lock is poisoned".into());
        };
        match &mut *reaper {
            Ok(running) => running.gone(),
            Err(why) => Some(why.clone()),
        }
    }

    /// Create a fresh, empty folder for the next call in every base (no limits yet).
    fn make_set(&self) -> FolderSet {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        self.bases
            .iter()
            .map(|base| {
                let dir = base.dir.join(format!("call-{n}"));
                let made = std::fs::create_dir(&dir).map_err(|source| Unmade {
                    dir: dir.clone(),
                    source,
                });
                (base.kind.clone(), dir, made)
            })
            .collect()
    }

    fn take_spare(&self) -> Option<FolderSet> {
        self.spare.lock().ok()?.pop()
    }

    /// Top the spare sets up (called off the request path).
    fn refill(&self) {
        if self.bases.is_empty() || self.spare.lock().map_or(true, |s| s.len() >= SPARE_SETS) {
            return;
        }
        let set = self.make_set();
        match self.spare.lock() {
            Ok(mut spare) if spare.len() < SPARE_SETS => spare.push(set),
            _ => remove_set(set),
        }
    }
}

fn remove_set(set: FolderSet) {
    for (_, dir, made) in set {
        if made.is_ok() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Ok(mut spare) = self.spare.lock() {
            for set in spare.drain(..) {
                remove_set(set);
            }
        }
        for base in &self.bases {
            let _ = std::fs::remove_dir(&base.dir);
        }
    }
}

/// What the cgroup layer provides for one call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CgroupReport {
    /// The whole tree is killed with v2 `cgroup.kill`.
    pub kill: bool,
    /// How the process limit is enforced (`v1 pids.max`, `v2 pids.max`), if at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<String>,
    /// How the memory limit is enforced, if at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Why no reaper kills the tree when the server itself is killed, where the cgroup
    /// kills it (reported among the downgrades, not as a field of its own).
    #[serde(skip)]
    pub unreaped: Option<String>,
}

/// Counters read after the call: how often a limit stopped something.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LimitHits {
    /// Forks refused by the process limit.
    #[serde(skip_serializing_if = "is_zero")]
    pub processes: u64,
    /// Processes the memory limit killed.
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_oom_kills: u64,
    /// Peak memory of the call in bytes, where the kernel reports it (not a hit; reported
    /// separately as `memory_peak_bytes`).
    #[serde(skip)]
    pub memory_peak_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LimitHits {
    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.processes == 0 && self.memory_oom_kills == 0
    }
}

/// The cgroup folders of one call. Dropping it without [`CallCgroup::finish`] kills and
/// removes them anyway (best effort, synchronously).
#[derive(Debug)]
pub(crate) struct CallCgroup {
    dirs: Vec<(Kind, PathBuf)>,
    /// What these folders provide.
    pub report: CgroupReport,
    /// Why a wanted limit could not be set up (for the downgrade list).
    pub problems: Vec<String>,
    /// Why folders could not be made (one line each): kept so that a call limited again
    /// ([`CallCgroup::relimit`]) still reports them.
    unmade: Vec<String>,
    /// The folders were seen empty after the command ended (the only time they are
    /// checked): they stay so, since a process enters a call's folder only by being forked
    /// by one inside it, or moved there by us before the call. So `finish` need not read
    /// again what `kill_leftovers` read.
    emptied: bool,
    finished: bool,
    /// Where to make the next spare folders once this call's are removed.
    pool: Option<Arc<Pool>>,
}

/// One line of `/proc/self/mountinfo` that mounts a cgroup hierarchy.
struct Mount {
    root: String,
    point: PathBuf,
    fstype: String,
    options: String,
}

fn mounts() -> Vec<Mount> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            Some(Mount {
                root: left.get(3)?.to_string(),
                point: PathBuf::from(unescape(left.get(4)?)),
                fstype: right.first()?.to_string(),
                options: right.get(2).unwrap_or(&"").to_string(),
            })
        })
        .filter(|m| m.fstype == "cgroup" || m.fstype == "cgroup2")
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Our own cgroup path in the hierarchy whose `/proc/self/cgroup` controller field matches.
fn own_path(controller: Option<&str>) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let _id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        let hit = match controller {
            None => controllers.is_empty(),
            Some(c) => controllers.split(',').any(|x| x == c),
        };
        hit.then(|| path.to_string())
    })
}

/// The folder of our own cgroup under a mount, when the mount shows it.
fn own_dir(mount: &Mount, own: &str) -> Option<PathBuf> {
    let rel = if mount.root == "/" {
        own
    } else {
        // A mount of a sub-tree (containers): our path must lie beneath its root.
        own.strip_prefix(mount.root.as_str())?
    };
    let rel = rel.trim_start_matches('/');
    let dir = if rel.is_empty() {
        mount.point.clone()
    } else {
        mount.point.join(rel)
    };
    dir.is_dir().then_some(dir)
}

fn pid_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Remove `safe-mcp.<pid>` folders left by servers that are gone (their calls' folders
/// first). Folders that still hold processes stay.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten().take(1000) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("safe-mcp."))
            .and_then(|p| p.split('.').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid_alive(pid) {
            continue;
        }
        reap_base(&entry.path(), Duration::ZERO);
    }
}

/// Kill every call folder in a base folder (`safe-mcp.<pid>.<k>`) and remove them, then the
/// base: a folder that still holds processes once `wait` has passed stays. Used by the
/// start-up sweep of dead servers' folders (no wait) and by the reaper.
fn reap_base(dir: &Path, wait: Duration) {
    if let Ok(calls) = std::fs::read_dir(dir) {
        for call in calls.flatten().take(10_000) {
            let call = call.path();
            if call.is_dir() {
                let _ = kill_dir(&call);
                remove_when_empty(&call, wait);
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Remove a killed folder, retrying while its dying tasks keep it busy, for up to `wait`.
fn remove_when_empty(dir: &Path, wait: Duration) {
    let started = Instant::now();
    loop {
        match std::fs::remove_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound && started.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => return,
        }
    }
}

/// Kill every process listed in a cgroup folder (v1 has no `cgroup.kill`). Repeats while
/// new processes appear (a fork racing the kill), bounded.
fn kill_dir(dir: &Path) -> std::io::Result<()> {
    let kill_file = dir.join("cgroup.kill");
    if kill_file.exists() {
        return std::fs::write(kill_file, "1");
    }
    for _ in 0..100 {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs"))?;
        let pids: Vec<i32> = procs
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.is_empty() {
            return Ok(());
        }
        for pid in pids {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
    Ok(())
}

fn is_empty(kind: &Kind, dir: &Path) -> bool {
    if *kind == Kind::V2
        && let Ok(events) = std::fs::read_to_string(dir.join("cgroup.events"))
    {
        return events.lines().any(|l| l.trim() == "populated 0");
    }
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|p| p.trim().is_empty())
        .unwrap_or(true)
}

fn read_counter(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == key).then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(0)
}

fn read_number(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

impl Cgroups {
    /// Find the usable hierarchies, create our base folder in each and start the reaper
    /// of those folders from the launcher binary `launcher` (`reaper`). Nothing here is
    /// fatal: a hierarchy we cannot write to, or a reaper that cannot start, is a reported
    /// downgrade.
    pub fn discover(launcher: &Path) -> Cgroups {
        let mut bases = Vec::new();
        let mut problems = Vec::new();
        // One folder per executor: a process may hold several (tests do).
        static INSTANCE: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "safe-mcp.{}.{}",
            std::process::id(),
            INSTANCE.fetch_add(1, Ordering::Relaxed)
        );
        let all = mounts();
        let wanted: [(Kind, &str, Option<&str>); 3] = [
            (Kind::V2, "cgroup2", None),
            (Kind::V1Pids, "cgroup", Some("pids")),
            (Kind::V1Memory, "cgroup", Some("memory")),
        ];
        for (kind, fstype, controller) in wanted {
            let mount = all.iter().find(|m| {
                m.fstype == fstype
                    && controller.is_none_or(|c| m.options.split(',').any(|o| o == c))
            });
            let Some(mount) = mount else {
                if kind == Kind::V2 {
                    problems.push("no cgroup v2 hierarchy is mounted".into());
                }
                continue;
            };
            let Some(own) = own_path(controller) else {
                continue;
            };
            let Some(parent) = own_dir(mount, &own) else {
                problems.push(format!(
                    "our {fstype} cgroup is not visible under {}",
                    mount.point.display()
                ));
                continue;
            };
            sweep_stale(&parent);
            let dir = parent.join(&name);
            match std::fs::create_dir(&dir) {
                Ok(()) => bases.push(Base { kind, dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    bases.push(Base { kind, dir })
                }
                Err(e) => problems.push(format!(
                    "cannot create a cgroup under {}: {e}",
                    parent.display()
                )),
            }
        }
        let pool = Pool::with(bases);
        if !pool.bases.is_empty() {
            let dirs: Vec<PathBuf> = pool.bases.iter().map(|b| b.dir.clone()).collect();
            let started = reaper::Reaper::start(launcher, &dirs)
                .map_err(|e| format!("the cgroup reaper could not be started ({e})"));
            if let Ok(mut slot) = pool.reaper.lock() {
                *slot = started;
            }
        }
        let pool = Arc::new(pool);
        pool.refill();
        Cgroups { pool, problems }
    }

    /// The pid of the running reaper, if one runs (tests).
    pub fn reaper_pid(&self) -> Option<u32> {
        let reaper = self.pool.reaper.lock().ok()?;
        reaper.as_ref().ok().map(reaper::Reaper::pid)
    }

    /// No cgroup at all (sandbox off, or tests of the fallback paths).
    pub fn none() -> Cgroups {
        Cgroups {
            pool: Arc::new(Pool::empty()),
            problems: vec!["cgroups not used".into()],
        }
    }

    /// Why some hierarchy is unusable, for the start-up summary.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// Take fresh folders for a call (made ahead of time, else now), limits not yet written:
    /// each call gets folders no process has ever been in. A launcher started ahead of its
    /// call joins them first; [`ReservedCall::limit`] writes the limits when the call comes.
    pub(crate) fn reserve(&self) -> ReservedCall {
        ReservedCall {
            set: Some(
                self.pool
                    .take_spare()
                    .unwrap_or_else(|| self.pool.make_set()),
            ),
            pool: self.pool.clone(),
        }
    }
}

/// Processes of ours that live in a call's folders beside the command's own tree, per
/// hierarchy: `pids.max` is the command's number plus these, so the command itself can hold
/// exactly its number (a launcher that becomes the command: none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Beside {
    /// In the v1 folders.
    pub v1: u64,
    /// In the v2 folder.
    pub v2: u64,
}

/// Fresh call folders, limits not yet written. Dropped unused, they are removed.
#[derive(Debug)]
pub(crate) struct ReservedCall {
    set: Option<FolderSet>,
    pool: Arc<Pool>,
}

impl Drop for ReservedCall {
    fn drop(&mut self) {
        if let Some(set) = self.set.take() {
            remove_set(set);
        }
    }
}

impl ReservedCall {
    /// The v1 `tasks` files a launcher started ahead of the call joins.
    pub(crate) fn v1_task_files(&self) -> Vec<PathBuf> {
        self.set
            .iter()
            .flatten()
            .filter(|(k, _, made)| *k != Kind::V2 && made.is_ok())
            .map(|(_, d, _)| d.join("tasks"))
            .collect()
    }

    /// The v2 folder a launcher started ahead joins (through `cgroup.procs`, before its call).
    pub(crate) fn v2_dir(&self) -> Option<PathBuf> {
        self.set
            .iter()
            .flatten()
            .find(|(k, _, made)| *k == Kind::V2 && made.is_ok())
            .map(|(_, d, _)| d.clone())
    }

    /// True when the v2 folder was made and has `cgroup.kill`: the call's
    /// [`CallCgroup::kills_tree`] will say the same.
    pub(crate) fn kills_tree(&self) -> bool {
        self.pool.v2_kills && self.v2_dir().is_some()
    }

    /// Write the call's limits and make it a [`CallCgroup`]. `beside`: how many of our own
    /// processes live in the folders beside the command's tree ([`Beside::default`] for a
    /// launcher started ahead, which becomes the command): `pids.max` is `processes` plus
    /// those, per hierarchy.
    pub(crate) fn limit(mut self, processes: u64, memory_bytes: u64, beside: Beside) -> CallCgroup {
        let set = self.set.take().unwrap_or_default();
        let mut call = CallCgroup {
            dirs: Vec::new(),
            report: CgroupReport::default(),
            problems: Vec::new(),
            unmade: Vec::new(),
            emptied: false,
            finished: false,
            pool: Some(self.pool.clone()),
        };
        let pids_max = |beside: u64| processes.saturating_add(beside).to_string();
        for (kind, dir, made) in set {
            if let Err(e) = made {
                let e = e.to_string();
                call.problems.push(e.clone());
                call.unmade.push(e);
                continue;
            }
            match kind {
                Kind::V2 => {
                    call.report.kill = self.pool.v2_kills;
                    if call.report.kill {
                        call.report.unreaped = self.pool.unreaped();
                    }
                    if !call.report.kill {
                        call.problems
                            .push("cgroup v2 has no cgroup.kill (kernel < 5.14)".into());
                    }
                    // Delegated v2 controllers (pure v2 hosts) carry the limits themselves.
                    if std::fs::write(dir.join("pids.max"), pids_max(beside.v2)).is_ok() {
                        call.report.processes = Some("cgroup v2 pids.max".into());
                    }
                    if std::fs::write(dir.join("memory.max"), memory_bytes.to_string()).is_ok() {
                        let _ = std::fs::write(dir.join("memory.swap.max"), "0");
                        call.report.memory = Some("cgroup v2 memory.max".into());
                    }
                }
                Kind::V1Pids => match std::fs::write(dir.join("pids.max"), pids_max(beside.v1)) {
                    Ok(()) => call.report.processes = Some("cgroup v1 pids.max".into()),
                    Err(e) => call.problems.push(format!("pids.max: {e}")),
                },
                Kind::V1Memory => {
                    // Without memsw the limit only covers RAM and a bomb goes to swap. The
                    // kernel keeps memsw >= the RAM limit: raise memsw first, lower it after
                    // (folders limited for another call are limited again).
                    let value = memory_bytes.to_string();
                    let memsw = dir.join("memory.memsw.limit_in_bytes");
                    let memsw_set = std::fs::write(&memsw, &value).is_ok();
                    match std::fs::write(dir.join("memory.limit_in_bytes"), &value) {
                        Ok(()) => {
                            if !memsw_set {
                                let _ = std::fs::write(&memsw, &value);
                            }
                            call.report.memory = Some("cgroup v1 memory.limit_in_bytes".into());
                        }
                        Err(e) => call.problems.push(format!("memory.limit_in_bytes: {e}")),
                    }
                }
            }
            call.dirs.push((kind, dir));
        }
        call
    }
}

impl CallCgroup {
    /// The call's cgroup v2 folder: the launcher clones the command's PID 1 straight into
    /// it (`CLONE_INTO_CGROUP`).
    pub(crate) fn v2_dir(&self) -> Option<PathBuf> {
        self.dirs
            .iter()
            .find(|(k, _)| *k == Kind::V2)
            .map(|(_, d)| d.clone())
    }

    /// The call's v1 `tasks` files: the launcher writes `0` (itself, one thread) to each,
    /// which the kernel does without its global threadgroup lock (moving a whole process
    /// through `cgroup.procs` waits for an RCU grace period, ~10 ms).
    pub(crate) fn v1_task_files(&self) -> Vec<PathBuf> {
        self.dirs
            .iter()
            .filter(|(k, _)| *k != Kind::V2)
            .map(|(_, d)| d.join("tasks"))
            .collect()
    }

    /// True when the whole tree can be killed by the cgroup, escapees included.
    pub(crate) fn kills_tree(&self) -> bool {
        self.report.kill
    }

    /// The same folders under other limits (a launcher started ahead had its folders
    /// limited for the previous call's profile; it becomes the command, so nothing beside).
    pub(crate) fn relimit(mut self, processes: u64, memory_bytes: u64) -> CallCgroup {
        self.finished = true;
        let set: FolderSet = std::mem::take(&mut self.dirs)
            .into_iter()
            .map(|(k, d)| (k, d, Ok(())))
            .collect();
        let mut call = ReservedCall {
            set: Some(set),
            pool: self.pool.take().unwrap_or_else(|| Arc::new(Pool::empty())),
        }
        .limit(processes, memory_bytes, Beside::default());
        // Still not made: reported as they were, after the made folders' problems.
        call.unmade = std::mem::take(&mut self.unmade);
        call.problems.extend(call.unmade.iter().cloned());
        call
    }

    /// After the command ended: kill whatever it left in the folders, if anything.
    pub(crate) fn kill_leftovers(&mut self) {
        if !self.all_empty() {
            self.kill();
        }
    }

    /// Kill every process of the call (v2 `cgroup.kill`, else signal each listed pid).
    pub(crate) fn kill(&self) {
        let v2 = self.dirs.iter().find(|(k, _)| *k == Kind::V2);
        if let Some((_, dir)) = v2
            && kill_dir(dir).is_ok()
        {
            return;
        }
        for (_, dir) in &self.dirs {
            let _ = kill_dir(dir);
        }
    }

    fn all_empty(&mut self) -> bool {
        if self.emptied {
            return true;
        }
        // Every process of the call is in the v2 folder (the launcher is gone by now), so
        // where it can kill the tree its `populated 0` speaks for the v1 folders too.
        let empty = if self.report.kill
            && let Some((k, d)) = self.dirs.iter().find(|(k, _)| *k == Kind::V2)
        {
            is_empty(k, d)
        } else {
            self.dirs.iter().all(|(k, d)| is_empty(k, d))
        };
        self.emptied = empty;
        empty
    }

    /// Kill what is left, wait (bounded) until the folders are empty, read the limit
    /// counters, remove the folders (after the answer). Returns the counters.
    pub(crate) async fn finish(mut self) -> LimitHits {
        self.finished = true;
        let started = Instant::now();
        if !self.all_empty() {
            self.kill();
            while started.elapsed() < EMPTY_DEADLINE && !self.all_empty() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
        let hits = self.hits();
        // Removing the folders and making the next call's happen after the answer, off
        // the request path (the tree is already dead or given up on: nothing waits on it).
        let rest = CallCgroup {
            dirs: std::mem::take(&mut self.dirs),
            report: CgroupReport::default(),
            problems: Vec::new(),
            unmade: Vec::new(),
            emptied: false,
            finished: true,
            pool: self.pool.take(),
        };
        let cleanup = move || {
            let mut rest = rest;
            rest.remove();
            if let Some(pool) = rest.pool.take() {
                pool.refill();
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(cleanup)),
            Err(_) => cleanup(),
        }
        hits
    }

    fn hits(&self) -> LimitHits {
        let mut hits = LimitHits::default();
        for (kind, dir) in &self.dirs {
            match kind {
                Kind::V1Pids => hits.processes = read_counter(&dir.join("pids.events"), "max"),
                Kind::V1Memory => {
                    hits.memory_oom_kills =
                        read_counter(&dir.join("memory.oom_control"), "oom_kill");
                    hits.memory_peak_bytes = read_number(&dir.join("memory.max_usage_in_bytes"));
                }
                Kind::V2 => {
                    if self.report.processes.as_deref() == Some("cgroup v2 pids.max") {
                        hits.processes = read_counter(&dir.join("pids.events"), "max");
                    }
                    if self.report.memory.as_deref() == Some("cgroup v2 memory.max") {
                        hits.memory_oom_kills =
                            read_counter(&dir.join("memory.events"), "oom_kill");
                        hits.memory_peak_bytes = read_number(&dir.join("memory.peak"));
                    }
                }
            }
        }
        hits
    }

    fn remove(&mut self) {
        for (_, dir) in &self.dirs {
            // A task that is still exiting keeps the folder busy for a moment.
            for _ in 0..50 {
                match std::fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
        }
        self.dirs.clear();
    }
}

impl Drop for CallCgroup {
    fn drop(&mut self) {
        if !self.finished {
            self.kill();
            self.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder that could not be made is reported again when the call is limited again:
    /// the downgrade text keeps its reason. Plain folders stand in for cgroupfs here (the
    /// limit files are written as ordinary files).
    #[test]
    fn a_folder_that_could_not_be_made_is_still_reported_after_relimit() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let pool = Arc::new(Pool::with(vec![
            Base {
                kind: Kind::V1Pids,
                dir: tmp.path().to_path_buf(),
            },
            Base {
                kind: Kind::V1Memory,
                dir: tmp.path().join("missing"),
            },
        ]));
        let reserved = ReservedCall {
            set: Some(pool.make_set()),
            pool: pool.clone(),
        };
        let call = reserved.limit(16, 1 << 20, Beside::default());
        let unmade = |call: &CallCgroup| {
            call.problems
                .iter()
                .filter(|p| p.starts_with("cannot create") && p.contains("missing"))
                .count()
        };
        assert_eq!(unmade(&call), 1, "{:?}", call.problems);
        assert_eq!(call.report.processes.as_deref(), Some("cgroup v1 pids.max"));
        assert_eq!(call.report.memory, None);

        let call = call.relimit(32, 2 << 20);
        assert_eq!(unmade(&call), 1, "{:?}", call.problems);
        assert_eq!(call.report.processes.as_deref(), Some("cgroup v1 pids.max"));
        assert_eq!(call.report.memory, None);
        let pids = std::fs::read_to_string(tmp.path().join("call-0/pids.max")).expect("pids");
        assert_eq!(pids, "32");
        drop(call);
    }

    /// A pool without a running reaper says why, so the call's report can list it: none
    /// was started, or the one started has exited.
    #[test]
    fn a_reaper_that_is_not_running_is_reported() {
        let pool = Pool::empty();
        assert_eq!(
            pool.unreaped().as_deref(),
            Some("no cgroup reaper was started")
        );
        // `true` ends at once, as a reaper that died would.
        let reaper = reaper::Reaper::start(Path::new("/bin/true"), &[]).expect("start true");
        *pool.reaper.lock().expect("lock") = Ok(reaper);
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut why = pool.unreaped();
        while why.is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            why = pool.unreaped();
        }
        assert!(
            why.as_deref().is_some_and(|w| w.contains("reaper exited")),
            "{why:?}"
        );
    }

    /// Each hierarchy's `pids.max` allows for exactly the launcher's own processes that
    /// [`crate::exec::launcher::beside_command`] says stay there: the launcher counts in
    /// v1 only, a PID namespace's init in both, nothing when the launcher becomes the command.
    #[test]
    fn each_hierarchy_allows_exactly_the_launchers_own_processes() {
        use crate::exec::launcher::beside_command;
        let tmp = tempfile::tempdir().expect("temp dir");
        for kind in ["v1", "v2"] {
            std::fs::create_dir(tmp.path().join(kind)).expect("base folder");
        }
        let pool = Arc::new(Pool::with(vec![
            Base {
                kind: Kind::V2,
                dir: tmp.path().join("v2"),
            },
            Base {
                kind: Kind::V1Pids,
                dir: tmp.path().join("v1"),
            },
        ]));
        let cases = [
            ((true, true), ("18", "17")),
            ((true, false), ("17", "16")),
            ((false, true), ("16", "16")),
            ((false, false), ("16", "16")),
        ];
        for (n, ((namespaces, pid_namespace), (v1, v2))) in cases.into_iter().enumerate() {
            let reserved = ReservedCall {
                set: Some(pool.make_set()),
                pool: pool.clone(),
            };
            let call = reserved.limit(16, 1 << 20, beside_command(namespaces, pid_namespace));
            let read = |kind: &str| {
                std::fs::read_to_string(tmp.path().join(format!("{kind}/call-{n}/pids.max")))
                    .expect("pids.max")
            };
            assert_eq!(
                (read("v1").as_str(), read("v2").as_str()),
                (v1, v2),
                "namespaces {namespaces}, PID namespace {pid_namespace}"
            );
            drop(call);
        }
    }
}
