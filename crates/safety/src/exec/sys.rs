//! The one place in safe-mcp that holds `unsafe`: hooks that run in the forked child between
//! `fork` and `execve`, and the few process primitives of the sandbox launcher (clone into
//! new namespaces, fork, execve, adopting an inherited descriptor) that no safe crate
//! offers. Each block says why it is sound.

use std::ffi::{CStr, CString};
use std::os::fd::{OwnedFd, RawFd};

/// Make the child the leader of a new session (and so of a new process group) with no
/// controlling terminal: a password prompt fails at once instead of waiting forever, and
/// the whole group can be killed with one signal. Also ask the kernel to SIGKILL the child
/// if the server dies, then re-check that the server is still there (the race the
/// `prctl` man page warns about). Optionally change into an already-opened folder by
/// handle, so the working folder cannot be swapped between check and use, and let up to
/// two descriptors (the launcher's go and report pipes) survive `execve`.
pub fn isolate_child(
    cmd: &mut std::process::Command,
    parent_pid: i32,
    cwd_fd: Option<RawFd>,
    inherit: [Option<RawFd>; 2],
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child after fork and before execve. It only calls
    // async-signal-safe system calls (setsid, prctl, getppid, fchdir, fcntl) through rustix,
    // which does not allocate, and touches no lock or shared state of the parent. The raw
    // descriptors are owned by the parent, which keeps them open until spawn returns.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::setsid().map_err(std::io::Error::from)?;
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)?;
            let ppid = rustix::process::getppid()
                .map(|p| p.as_raw_nonzero().get())
                .unwrap_or(0);
            if ppid != parent_pid {
                return Err(std::io::Error::other(
                    "server exited before the command started",
                ));
            }
            if let Some(fd) = cwd_fd {
                let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                rustix::process::fchdir(fd).map_err(std::io::Error::from)?;
            }
            for fd in inherit.into_iter().flatten() {
                let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())
                    .map_err(std::io::Error::from)?;
            }
            Ok(())
        });
    }
}

/// Take ownership of a descriptor the launcher inherited by number (its report pipe), and
/// mark it close-on-exec so the command never sees it. `None` when `fd` is not open.
pub fn adopt_inherited_fd(fd: RawFd) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    if fd < 3 {
        return None;
    }
    // SAFETY: borrowing only to ask the kernel whether the number is an open descriptor;
    // fcntl on a closed number fails with EBADF and touches nothing.
    let open = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    rustix::io::fcntl_setfd(open, rustix::io::FdFlags::CLOEXEC).ok()?;
    // SAFETY: the descriptor is open (checked above), was handed to this process by the
    // server for exactly this purpose, and nothing else in the launcher refers to it, so
    // owning (and eventually closing) it is sound.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Restore the default action of SIGPIPE, which the Rust runtime sets to "ignore" before
/// `main`. An ignored signal survives `execve`, so without this every command would get
/// EPIPE where it expects to die quietly (`yes` writing to a closed pipe).
pub fn restore_default_signals() {
    // SAFETY: `signal` with SIG_DFL installs no handler; the launcher is single-threaded.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
    }
}

/// `clone(flags | SIGCHLD)` without a new stack: like `fork`, but the child starts in the
/// namespaces `flags` asks for (it is PID 1 of a new PID namespace). Returns 0 in the child
/// and the child's pid in the parent.
pub fn clone_into_namespaces(flags: libc::c_int) -> std::io::Result<libc::pid_t> {
    // SAFETY: a raw clone with a null stack pointer duplicates the calling process like
    // fork(2). The launcher is single-threaded when it calls this (it is called before any
    // thread exists, straight from `main`), so no lock can be held by a thread that does
    // not exist in the child, and glibc no longer caches the pid.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::c_long::from(flags | libc::SIGCHLD),
            0 as libc::c_long,
            0 as libc::c_long,
            0 as libc::c_long,
            0 as libc::c_long,
        )
    };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    libc::pid_t::try_from(ret).map_err(|_| std::io::Error::other("clone returned a bad pid"))
}

/// `clone3` with `CLONE_INTO_CGROUP` semantics: like [`clone_into_namespaces`], and the
/// child is born inside the cgroup v2 folder `cgroup_fd` (no migration, so no wait for the
/// kernel's global cgroup lock). Returns 0 in the child and the child's pid in the parent.
pub fn clone3_into_cgroup(
    flags: libc::c_int,
    cgroup_fd: std::os::fd::BorrowedFd<'_>,
) -> std::io::Result<libc::pid_t> {
    use std::os::fd::AsRawFd;
    /// `struct clone_args` up to `cgroup` (CLONE_ARGS_SIZE_VER2, 88 bytes).
    #[repr(C)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
        set_tid: u64,
        set_tid_size: u64,
        cgroup: u64,
    }
    /// The literal value: libc's constant is a truncated `c_int` on some targets.
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    let args = CloneArgs {
        flags: u64::from(flags as u32) | CLONE_INTO_CGROUP,
        pidfd: 0,
        child_tid: 0,
        parent_tid: 0,
        exit_signal: libc::SIGCHLD as u64,
        stack: 0,
        stack_size: 0,
        tls: 0,
        set_tid: 0,
        set_tid_size: 0,
        cgroup: u64::try_from(cgroup_fd.as_raw_fd()).unwrap_or(0),
    };
    // SAFETY: `args` is a fully initialised clone_args of the size passed; a zero stack
    // makes clone3 duplicate the caller like fork(2). The launcher is single-threaded when
    // it calls this (see `clone_into_namespaces`), and the descriptor outlives the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    libc::pid_t::try_from(ret).map_err(|_| std::io::Error::other("clone3 returned a bad pid"))
}

/// `fork(2)`. Returns 0 in the child and the child's pid in the parent.
pub fn fork() -> std::io::Result<libc::pid_t> {
    // SAFETY: only called by the single-threaded launcher (see `clone_into_namespaces`).
    let ret = unsafe { libc::fork() };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ret)
}

/// `execve(2)`. Returns only on failure.
pub fn execve(program: &CStr, argv: &[CString], env: &[CString]) -> std::io::Error {
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    // SAFETY: every pointer refers to a NUL-terminated string owned by `argv`/`env`, which
    // outlive the call; both arrays end with a null pointer as execve requires.
    unsafe {
        libc::execve(program.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
    }
    std::io::Error::last_os_error()
}

/// End this process the way the command ended: by the same signal (default action), or with
/// `128 + signal` if the signal does not kill.
pub fn die_by_signal(signal: i32) -> ! {
    // SAFETY: restores the default action and raises the signal on ourselves; no handler
    // runs, no memory is touched.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    std::process::exit(128 + signal)
}

/// The kernel's Landlock ABI version (`landlock_create_ruleset(NULL, 0, VERSION)`); 0 or
/// less when Landlock is unavailable.
pub fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the kernel reads no
    // memory and creates no descriptor; it only returns the ABI version (or an error).
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0 as libc::size_t,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    }
}

/// `landlock_restrict_self(ruleset_fd, 0)`: confine the calling thread (the launcher has
/// only one) with an already-built ruleset. `no_new_privs` must be set first.
pub fn landlock_restrict_self(ruleset: std::os::fd::BorrowedFd<'_>) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is borrowed, so it stays open for the call; the system call
    // reads no user memory and takes only the descriptor and a zero flags word.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            libc::c_long::from(ruleset.as_raw_fd()),
            0 as libc::c_long,
        )
    };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
