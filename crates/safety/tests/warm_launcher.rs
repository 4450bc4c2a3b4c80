//! The launcher started ahead of a call: after the previous answer the server starts the
//! next call's launcher, which joins the call's cgroups and clones the process that will
//! become the command, then waits on its channel for the call (its spec, working folder and
//! gate). These tests start one explicitly and check that a call taken that way is confined
//! exactly like one whose launcher starts with it. Real processes, temporary folders.

use std::path::PathBuf;

use crate::sandbox_common::Marker;

use safety::exec::profile::{Profile, effective_limits};
use safety::exec::{ExecRequest, Executor, Gate, SandboxConfig};
use safety::jail::Jail;
use tokio_util::sync::CancellationToken;

struct Jailed {
    dir: tempfile::TempDir,
    root: PathBuf,
    jail: Jail,
    executor: Executor,
}

fn setup() -> Jailed {
    let dir = tempfile::Builder::new()
        .prefix("safe-mcp-warm-")
        .tempdir()
        .unwrap();
    let root = dir.path().join("jail");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let root = root.canonicalize().unwrap();
    let jail = Jail::open(&root).unwrap();
    let executor = executor(
        &root,
        PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp-sandbox-exec")),
        &[],
    );
    Jailed {
        dir,
        root,
        jail,
        executor,
    }
}

/// A sandboxed executor for the jail at `root`, starting commands through `launcher`, its
/// commands also allowed to read `read`.
fn executor(root: &std::path::Path, launcher: PathBuf, read: &[PathBuf]) -> Executor {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    Executor::sandboxed(SandboxConfig {
        launcher,
        jail_root: root.to_path_buf(),
        read_paths: safety::exec::filesystem::read_paths(read, &path),
        require: false,
        namespaces: true,
        cgroups: true,
        view: true,
        run_as: None,
    })
}

/// True (and a loud skip) when this host enforces no cgroup process limit; under
/// STRICT_SANDBOX_TESTS that is a failure instead.
fn no_process_limit(outcome: &safety::exec::ExecOutcome) -> bool {
    if outcome.sandbox.mechanisms.cgroup.processes.is_some() {
        return false;
    }
    assert!(
        std::env::var_os("STRICT_SANDBOX_TESTS").is_none(),
        "no cgroup process limit on this host: {outcome:?}"
    );
    eprintln!("skipped: no cgroup process limit on this host");
    true
}

impl Jailed {
    /// Run `r` on a launcher started ahead for it, and check the call was taken that way.
    async fn run_ahead(&self, r: &ExecRequest<'_>) -> safety::exec::ExecOutcome {
        assert!(self.executor.prepare_next_launcher().unwrap());
        let outcome = self
            .executor
            .run(r, &CancellationToken::new())
            .await
            .unwrap();
        assert!(
            outcome.sandbox.mechanisms.launcher_started_ahead,
            "{outcome:?}"
        );
        outcome
    }
}

fn request<'a>(
    cwd: &'a safety::jail::ContainedDir,
    program: &str,
    args: &[&str],
    profile: Profile,
    gate: Option<&'a Gate>,
) -> ExecRequest<'a> {
    ExecRequest {
        program: PathBuf::from(program),
        args: args.iter().map(|a| a.to_string()).collect(),
        argv0: program.rsplit('/').next().unwrap_or(program).to_string(),
        cwd,
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        profile,
        limits: effective_limits(profile, 30, 65536, None).unwrap(),
        gate,
        hash_output: false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_taken_by_a_launcher_started_ahead_runs_in_its_folder() {
    let t = setup();
    let cwd = t.jail.resolve_cwd(Some("sub")).unwrap();
    let r = request(&cwd, "/usr/bin/touch", &["marker"], Profile::Standard, None);
    let outcome = t.run_ahead(&r).await;
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    assert!(
        t.root.join("sub/marker").exists(),
        "not run in its working folder"
    );
    assert!(!t.root.join("marker").exists());
    if rustix::process::geteuid().is_root() {
        assert_eq!(
            outcome.sandbox.mechanisms.capabilities.as_deref(),
            Some("all dropped")
        );
    }
    assert!(outcome.sandbox.mechanisms.landlock.is_some(), "{outcome:?}");
    assert!(outcome.sandbox.mechanisms.seccomp.is_some(), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn landlock_still_refuses_a_write_outside_the_jail_on_that_path() {
    let t = setup();
    let cwd = t.jail.resolve_cwd(None).unwrap();
    let r = request(
        &cwd,
        "/bin/sh",
        &["-c", "cd ..; touch escaped-warm"],
        Profile::Standard,
        None,
    );
    let outcome = t.run_ahead(&r).await;
    assert_ne!(outcome.exit_code, Some(0), "{outcome:?}");
    assert!(!t.root.parent().unwrap().join("escaped-warm").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_gate_still_means_nothing_runs_on_that_path() {
    let t = setup();
    assert!(t.executor.prepare_next_launcher().unwrap());
    let cwd = t.jail.resolve_cwd(None).unwrap();
    let (gate, opener) = Gate::new().unwrap();
    opener.refuse();
    let r = request(
        &cwd,
        "/usr/bin/touch",
        &["marker"],
        Profile::Standard,
        Some(&gate),
    );
    let waiting = t.executor.next_launcher_pid();
    assert!(waiting.is_some());
    let result = t.executor.run(&r, &CancellationToken::new()).await;
    // The refusal has no sandbox report to look at: the launcher that waited was used up.
    assert_ne!(
        t.executor.next_launcher_pid(),
        waiting,
        "the call did not take it"
    );
    assert!(result.is_err(), "{result:?}");
    assert!(
        !t.root.join("marker").exists(),
        "ran although the gate was refused"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_on_that_path_has_no_network() {
    let t = setup();
    let cwd = t.jail.resolve_cwd(None).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket; s = socket.socket(); s.settimeout(2); s.connect(('127.0.0.1', {port}))"
    );
    let r = request(
        &cwd,
        "/usr/bin/python3",
        &["-c", &code],
        Profile::Strict,
        None,
    );
    let outcome = t.run_ahead(&r).await;
    assert_ne!(outcome.exit_code, Some(0), "{outcome:?}");
    assert!(
        outcome
            .sandbox
            .mechanisms
            .namespaces
            .contains(&"net".to_string()),
        "{outcome:?}"
    );
    assert!(
        matches!(listener.accept(), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the listener saw a connection"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_started_ahead_leaves_no_survivor() {
    let t = setup();
    let cwd = t.jail.resolve_cwd(None).unwrap();
    let marker = Marker::new();
    let script = format!("setsid sleep {} &", marker.sleep_arg());
    let r = request(&cwd, "/bin/sh", &["-c", &script], Profile::Standard, None);
    let outcome = t.run_ahead(&r).await;
    assert_eq!(marker.survivors(), Vec::<String>::new(), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_launcher_killed_while_idle_is_replaced_for_the_call() {
    let t = setup();
    assert!(t.executor.prepare_next_launcher().unwrap());
    // kill -9 the launcher that waits for the next call.
    let idle = t.executor.next_launcher_pid().expect("a launcher waits");
    // The parent of a `CLONE_VFORK` child resumes once the new program's memory is in
    // place, a moment before the kernel records its arguments: under load `cmdline` can
    // read empty for that moment (seen on CI). Wait for it, bounded.
    let mut cmdline = Vec::new();
    for _ in 0..200 {
        cmdline = std::fs::read(format!("/proc/{idle}/cmdline")).unwrap();
        if !cmdline.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        String::from_utf8_lossy(&cmdline).contains("__sandbox-warm"),
        "{:?}",
        String::from_utf8_lossy(&cmdline)
    );
    let pid = rustix::process::Pid::from_raw(idle).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let cwd = t.jail.resolve_cwd(None).unwrap();
    let r = request(&cwd, "/usr/bin/touch", &["marker"], Profile::Standard, None);
    let outcome = t.executor.run(&r, &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    assert!(
        !outcome.sandbox.mechanisms.launcher_started_ahead,
        "{outcome:?}"
    );
    assert!(outcome.sandbox.mechanisms.launcher, "{outcome:?}");
    assert!(t.root.join("marker").exists());
}

/// A Python program that forks children (each sleeps) until the kernel refuses, prints how
/// many processes it held (itself included), then kills them.
const HOLD_PROCESSES: &str = "import os, time\nn, kids = 1, []\nwhile n < 200:\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n    kids.append(pid)\n    n += 1\nprint(n)\nfor k in kids:\n    os.kill(k, 9)\n";

/// [`HOLD_PROCESSES`] under `profile`, in `cwd`.
fn hold_processes(cwd: &safety::jail::ContainedDir, profile: Profile) -> ExecRequest<'_> {
    request(
        cwd,
        "/usr/bin/python3",
        &["-c", HOLD_PROCESSES],
        profile,
        None,
    )
}

fn processes_held(outcome: &safety::exec::ExecOutcome) -> u64 {
    String::from_utf8_lossy(&outcome.stdout.head)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no count printed: {outcome:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_command_holds_exactly_its_process_limit() {
    // A launcher started ahead becomes the command, so pids.max is the profile's own number:
    // the command can hold exactly that many processes, itself included, not one more.
    let t = setup();
    let cwd = t.jail.resolve_cwd(None).unwrap();
    let r = hold_processes(&cwd, Profile::Strict);
    let limit = r.limits.processes;
    let outcome = t.run_ahead(&r).await;
    if no_process_limit(&outcome) {
        return;
    }
    assert_eq!(processes_held(&outcome), limit, "{outcome:?}");
    // The first launcher was limited ahead for another profile and limited again for this
    // call; the next one is limited ahead for this call's profile already.
    let outcome = t.run_ahead(&r).await;
    assert_eq!(processes_held(&outcome), limit, "{outcome:?}");

    // A launcher started for its call may stay beside the command (with namespaces on, as
    // the clone's parent), with a PID namespace's init where one is used: pids.max allows
    // for exactly those, so the command still holds exactly its number.
    for profile in [Profile::Strict, Profile::Standard] {
        let t = setup();
        let cwd = t.jail.resolve_cwd(None).unwrap();
        let r = hold_processes(&cwd, profile);
        let limit = r.limits.processes;
        let outcome = t.executor.run(&r, &CancellationToken::new()).await.unwrap();
        assert!(
            !outcome.sandbox.mechanisms.launcher_started_ahead,
            "{outcome:?}"
        );
        assert_eq!(processes_held(&outcome), limit, "{profile:?}: {outcome:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_launcher_limited_for_a_smaller_profile_is_limited_again_for_a_larger_one() {
    // The next launcher is limited ahead for the previous call's profile (strict: 128 MiB);
    // a standard call (512 MiB) raises its limits, memsw before RAM (v1 keeps memsw >= RAM),
    // and back down again for a strict one. The command reads its own v1 memory folder's
    // limits, so a limit left high (memsw not lowered) is seen, not only a refused write.
    let mut t = setup();
    t.executor = executor(
        &t.root,
        PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp-sandbox-exec")),
        &[PathBuf::from("/proc"), PathBuf::from("/sys/fs/cgroup")],
    );
    let cwd = t.jail.resolve_cwd(None).unwrap();
    for (i, profile) in [Profile::Strict, Profile::Standard, Profile::Strict]
        .into_iter()
        .enumerate()
    {
        let r = request(
            &cwd,
            "/usr/bin/python3",
            &["-c", READ_MEMORY_LIMITS],
            profile,
            None,
        );
        let outcome = t.run_ahead(&r).await;
        assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
        let memory = outcome.sandbox.mechanisms.cgroup.memory.as_deref();
        // Whether this host has a memory cgroup is decided once: after that a missing one is
        // a limit that could not be written.
        if i == 0 && memory.is_none() && std::env::var_os("STRICT_SANDBOX_TESTS").is_none() {
            eprintln!("skipped: no memory cgroup on this host");
            return;
        }
        assert!(memory.is_some(), "{profile:?}: {outcome:?}");
        assert!(
            !outcome
                .sandbox
                .downgrades
                .iter()
                .any(|d| d.contains("memory")),
            "{profile:?}: {outcome:?}"
        );
        if memory == Some("cgroup v1 memory.limit_in_bytes") {
            let printed = String::from_utf8_lossy(&outcome.stdout.head).to_string();
            let want = r.limits.memory_bytes.to_string();
            let mut limits = printed.split_whitespace();
            assert_eq!(
                limits.next(),
                Some(want.as_str()),
                "RAM, {profile:?}: {printed}"
            );
            match limits.next() {
                Some("none") => {}
                memsw => assert_eq!(memsw, Some(want.as_str()), "memsw, {profile:?}: {printed}"),
            }
        }
    }
}

/// Prints the calling process's v1 memory limits: RAM, then RAM+swap (`none` without swap
/// accounting).
const READ_MEMORY_LIMITS: &str = "import os\nrel = [l.split(':', 2)[2].strip() for l in open('/proc/self/cgroup') if 'memory' in l.split(':')[1].split(',')][0]\nd = '/sys/fs/cgroup/memory' + rel\nmemsw = d + '/memory.memsw.limit_in_bytes'\nprint(open(d + '/memory.limit_in_bytes').read().strip(), open(memsw).read().strip() if os.path.exists(memsw) else 'none')\n";

/// Runs the real launcher under a seccomp filter that makes namespace creation fail:
/// `clone3` answers ENOSYS (so the launcher falls back to `clone`), and `clone` with
/// `CLONE_NEWNET`, `CLONE_NEWPID` or `CLONE_NEWUSER` answers EPERM. Everything else is allowed.
const NO_NAMESPACES_WRAPPER: &str = r#"#!/usr/bin/python3
import ctypes, os, struct, sys
LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
NEW = 0x40000000 | 0x20000000 | 0x10000000
def op(code, k, jt=0, jf=0):
    return struct.pack("HBBI", code, jt, jf, k)
prog = b"".join([
    op(LD, 4), op(JEQ, 0xC000003E, 1, 0), op(RET, ALLOW),
    op(LD, 0),
    op(JEQ, 435, 0, 1), op(RET, ERRNO | 38),
    op(JEQ, 56, 0, 3), op(LD, 16), op(JSET, NEW, 0, 1), op(RET, ERRNO | 1),
    op(RET, ALLOW),
])
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
fprog = Fprog(len(prog) // 8, prog)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit("seccomp: errno %d" % ctypes.get_errno())
real = os.environ.get("REAL_LAUNCHER") or sys.argv[0] + ".real"
os.execv(real, [real] + sys.argv[1:])
"#;

/// A launcher started for its call whose namespaces cannot be made (here a seccomp filter
/// refuses them) becomes the command itself, and first gives back the process it had set
/// aside for itself: the command still holds exactly its limit, and the result says the
/// namespaces failed.
#[cfg(target_arch = "x86_64")]
#[tokio::test(flavor = "multi_thread")]
async fn a_launcher_whose_namespaces_fail_still_gives_the_command_exactly_its_limit() {
    use std::os::unix::fs::PermissionsExt;
    let mut t = setup();
    // The wrapper finds the real launcher beside itself, as `<name>.real`.
    let bin = t.dir.path().join("launcher");
    std::fs::copy(
        env!("CARGO_BIN_EXE_safe-mcp-sandbox-exec"),
        bin.with_extension("real"),
    )
    .unwrap();
    std::fs::write(&bin, NO_NAMESPACES_WRAPPER).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.executor = executor(&t.root, bin, &[]);
    let cwd = t.jail.resolve_cwd(None).unwrap();
    let r = hold_processes(&cwd, Profile::Strict);
    let limit = r.limits.processes;
    let outcome = t.executor.run(&r, &CancellationToken::new()).await.unwrap();
    if no_process_limit(&outcome) {
        return;
    }
    assert!(
        !outcome.sandbox.mechanisms.launcher_started_ahead,
        "{outcome:?}"
    );
    let downgrades = outcome.sandbox.downgrades.join("; ");
    assert!(
        downgrades.contains("namespace") && downgrades.contains("Operation not permitted"),
        "the namespaces did not fail as arranged: {downgrades}"
    );
    assert!(!downgrades.contains("keeps its slack"), "{downgrades}");
    assert_eq!(processes_held(&outcome), limit, "{outcome:?}");
}
