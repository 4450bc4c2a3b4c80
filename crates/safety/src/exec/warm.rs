//! The launcher started ahead of its call. Starting a launcher (the process, its cgroup
//! folders, the read-only view, both seccomp filters) costs milliseconds a call need not
//! wait for: after each call, a dedicated thread starts the next call's launcher, which
//! waits on a socket for its call. The call then sends only what depends on it (its spec,
//! working folder and gate) and is confined exactly as by a launcher started for it
//! ([`super::launcher`] is the other side). Calls that need a PID namespace (no cgroup can
//! kill their tree) cannot use one: after the first, none is started.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::cgroup::CallCgroup;
use super::launch::{self, LauncherStart, start_launcher};
use super::launcher::{self, LaunchSpec};
use super::{ExecError, ExecLimits, ExecOutcome, ExecRequest, Gate, Profile, Sandbox, spawn};

/// A launcher started ahead of its call ([`launcher::WarmSpec`]), waiting on its channel.
/// Field order is drop order: an unused launcher is killed before its folders are removed.
pub(super) struct WarmSlot {
    child: spawn::Spawned,
    channel: OwnedFd,
    report_read: OwnedFd,
    /// The call's folders, limited ahead for `limits` (processes, memory).
    call: CallCgroup,
    limits: (u64, u64),
}

impl std::fmt::Debug for WarmSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmSlot")
            .field("child", &self.child)
            .finish()
    }
}

impl WarmSlot {
    /// Start one whose folders are limited for `limits` (the previous call's), which the
    /// call rewrites only when its own differ.
    fn start(sandbox: &Sandbox, limits: (u64, u64)) -> std::io::Result<WarmSlot> {
        use rustix::net::{AddressFamily, SocketFlags, SocketType};
        let reserved = sandbox.cgroups.reserve();
        let (report_read, report_write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let (channel, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )?;
        let mut ruleset_fds: Vec<i32> = [false, true]
            .into_iter()
            .filter_map(|deny| sandbox.ruleset(deny).map(|r| r.fd.as_raw_fd()))
            .collect();
        ruleset_fds.dedup();
        let warm = launcher::WarmSpec {
            report_fd: report_write.as_raw_fd(),
            channel_fd: theirs.as_raw_fd(),
            ruleset_fds: ruleset_fds.clone(),
            cgroup_v1_tasks: reserved.v1_task_files(),
            cgroup_v2: reserved.v2_dir(),
            view: sandbox
                .config
                .view
                .then(|| sandbox.config.jail_root.clone()),
            view_known: sandbox.known_repositories(),
        };
        let mut keep = vec![report_write.as_raw_fd(), theirs.as_raw_fd()];
        keep.extend(ruleset_fds);
        let spec = serde_json::to_string(&warm).map_err(std::io::Error::other)?;
        let child = start_launcher(
            sandbox,
            launcher::WARM_ARG,
            spec,
            &keep,
            LauncherStart::Async(None),
        )?;
        drop((report_write, theirs));
        Ok(WarmSlot {
            child,
            channel,
            report_read,
            // It becomes the command: nothing of ours beside it.
            call: reserved.limit(limits.0, limits.1, Default::default()),
            limits,
        })
    }
}

/// Send a call to a launcher started ahead: the spec as one message, with the working
/// folder's handle and the gate's read end as `SCM_RIGHTS`.
fn send_call(
    channel: &OwnedFd,
    spec: &LaunchSpec,
    cwd: std::os::fd::BorrowedFd<'_>,
    gate: Option<&Gate>,
) -> std::io::Result<()> {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    let bytes = serde_json::to_vec(spec).map_err(std::io::Error::other)?;
    if bytes.len() > launcher::MAX_CALL_MESSAGE {
        return Err(std::io::Error::other("the call spec is too large to send"));
    }
    let mut fds = vec![cwd];
    if let Some(gate) = gate {
        fds.push(gate.read_end());
    }
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::other("no room for the call's descriptors"));
    }
    let sent = rustix::net::sendmsg(
        channel,
        &[std::io::IoSlice::new(&bytes)],
        &mut control,
        SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
    )?;
    if sent != bytes.len() {
        return Err(std::io::Error::other("the call spec was sent in part"));
    }
    Ok(())
}

/// The queue of the thread that starts launchers ahead: the limits to write ahead.
type StarterQueue = std::sync::Mutex<std::sync::mpsc::Sender<(u64, u64)>>;

/// The launchers started ahead of their calls, for one executor: the one waiting for the
/// next call, the thread that starts them, and what they are started for.
#[derive(Debug, Clone, Default)]
pub(super) struct StartedAhead {
    /// The launcher started ahead of the next call, if one is ready.
    slot: Arc<std::sync::Mutex<Option<WarmSlot>>>,
    /// The last call's (processes, memory) limits: the next call's folders get them ahead.
    last_limits: Arc<std::sync::Mutex<Option<(u64, u64)>>>,
    /// The thread that starts launchers ahead of their calls ([`StartedAhead::schedule`]).
    starter: Arc<std::sync::OnceLock<StarterQueue>>,
    /// A launcher is being started ahead; `done` is notified when that ends.
    pending: Arc<AtomicBool>,
    done: Arc<Notify>,
    /// Calls here cannot use a launcher started ahead (they need a PID namespace).
    unusable: Arc<AtomicBool>,
}

impl StartedAhead {
    /// Remember a call's limits: the next launcher's folders are limited for them ahead.
    pub(super) fn remember_limits(&self, limits: &ExecLimits) {
        if let Ok(mut last) = self.last_limits.lock() {
            *last = Some((limits.processes, limits.memory_bytes));
        }
    }

    /// Calls here need a PID namespace, which only a launcher started for its call makes:
    /// starting more ahead would be wasted work.
    pub(super) fn mark_unusable(&self) {
        self.unusable.store(true, Ordering::SeqCst);
    }

    /// Hand this call to the launcher started ahead of it. `None` when the launcher cannot
    /// take it (it died while idle): nothing was sent, nothing ran, its folders are gone.
    pub(super) async fn run(
        &self,
        sandbox: &Sandbox,
        slot: WarmSlot,
        request: &ExecRequest<'_>,
        cancel: &CancellationToken,
    ) -> Option<Result<ExecOutcome, ExecError>> {
        let limits = &request.limits;
        let WarmSlot {
            child,
            channel,
            report_read,
            call,
            limits: ahead,
        } = slot;
        let wanted = (limits.processes, limits.memory_bytes);
        let call = if ahead == wanted {
            call
        } else {
            call.relimit(wanted.0, wanted.1)
        };
        let problems = match launch::precheck(sandbox, request.profile, limits, &call) {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let mut spec = launch::call_spec(sandbox, request, &call, None);
        if spec.pid_namespace {
            // No cgroup kills this host's trees: the PID namespace path needs a launcher
            // started for the call. Starting more ahead would be wasted work.
            self.mark_unusable();
            drop((child, channel, report_read));
            drop(call);
            return None;
        }
        // Its ruleset is already built; the rules themselves are not needed.
        if spec.landlock_ruleset.is_some() {
            spec.fs.read_paths.clear();
        }
        // Joined at its start; its report pipe and the call's descriptors come with it.
        spec.cgroup_v1_tasks.clear();
        // Its view was built at its start, from the list it got then.
        spec.view_known.clear();
        if let Err(e) = send_call(&channel, &spec, request.cwd.handle_fd(), request.gate) {
            tracing::debug!("the launcher started ahead could not take the call: {e}");
            // Reap it, then remove the folders it was in.
            drop((child, channel, report_read));
            drop(call);
            return None;
        }
        drop(channel);
        Some(
            launch::supervise_launch(request, cancel, child, report_read, call, problems, true)
                .await,
        )
    }

    fn take(&self) -> Option<WarmSlot> {
        self.slot.lock().ok()?.take()
    }

    /// The launcher started ahead, waiting (at most 50 ms) for one that is being started:
    /// it is further along than a launcher started now would be.
    pub(super) async fn take_or_wait(&self) -> Option<WarmSlot> {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(50);
        loop {
            let done = self.done.notified();
            if let Some(slot) = self.take() {
                return Some(slot);
            }
            if !self.pending.load(Ordering::SeqCst) {
                return None;
            }
            if tokio::time::timeout_at(deadline, done).await.is_err() {
                return self.take();
            }
        }
    }

    /// Start the launcher for the next call, off the request path: a dedicated thread (the
    /// "starter") spawns it, so the runtime's thread is never held by the spawn; the
    /// launcher execs, joins the next call's cgroups and waits on its channel. The starter
    /// lives as long as the executor, which matters: the parent-death signal follows the
    /// thread that started a process.
    pub(super) fn schedule(&self, sandbox: &Arc<Sandbox>) {
        let sandbox = sandbox.clone();
        if self.unusable.load(Ordering::SeqCst) || self.slot.lock().map_or(true, |s| s.is_some()) {
            return;
        }
        // Set by every call before this runs; the folders are limited for it ahead.
        let Some(limits) = self.last_limits.lock().ok().and_then(|l| *l) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let slot = self.slot.clone();
        let pending = self.pending.clone();
        let done = self.done.clone();
        let starter = self.starter.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<(u64, u64)>();
            let spawned = std::thread::Builder::new()
                .name("launcher-starter".into())
                .spawn(move || {
                    while let Ok(limits) = rx.recv() {
                        if slot.lock().map_or(true, |s| s.is_some()) {
                            pending.store(false, Ordering::SeqCst);
                            done.notify_waiters();
                            continue;
                        }
                        // The pidfd and pipes are registered with the server's reactor.
                        let _entered = runtime.enter();
                        match WarmSlot::start(&sandbox, limits) {
                            Ok(started) => {
                                if let Ok(mut s) = slot.lock()
                                    && s.is_none()
                                {
                                    *s = Some(started);
                                }
                            }
                            Err(e) => tracing::debug!("no launcher started ahead: {e}"),
                        }
                        pending.store(false, Ordering::SeqCst);
                        done.notify_waiters();
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("no launcher starter thread: {e}");
            }
            std::sync::Mutex::new(tx)
        });
        if let Ok(tx) = starter.lock() {
            self.pending.store(true, Ordering::SeqCst);
            if tx.send(limits).is_err() {
                self.pending.store(false, Ordering::SeqCst);
            }
        }
    }

    /// The pid of the launcher waiting for the next call, if one is.
    pub(super) fn next_pid(&self) -> Option<i32> {
        let slot = self.slot.lock().ok()?;
        slot.as_ref().map(|s| s.child.pid().as_raw_nonzero().get())
    }

    /// Start the launcher for the next call now and wait until it is in place.
    pub(super) fn prepare(&self, sandbox: &Sandbox) -> std::io::Result<()> {
        let standard = Profile::Standard.limits();
        let limits = self
            .last_limits
            .lock()
            .ok()
            .and_then(|l| *l)
            .unwrap_or((standard.processes, standard.memory_bytes));
        let started = WarmSlot::start(sandbox, limits)?;
        let mut slot = self
            .slot
            .lock()
            .map_err(|_| std::io::Error::other("lock poisoned"))?;
        if slot.is_none() {
            *slot = Some(started);
        }
        Ok(())
    }
}
