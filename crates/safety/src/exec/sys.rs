//! The one place in safe-mcp that holds `unsafe`: the child's steps between `clone` (vfork)
//! and `execve` for every process the core starts, and the few process primitives of the sandbox launcher (clone into
//! new namespaces, fork, execve, adopting an inherited descriptor) that no safe crate
//! offers. Each block says why it is sound.

use std::ffi::{CStr, CString};
use std::os::fd::{OwnedFd, RawFd};

/// Take ownership of a descriptor the launcher inherited by number (its report pipe), and
/// mark it close-on-exec so the command never sees it. `None` when `fd` is not open.
pub(crate) fn adopt_inherited_fd(fd: RawFd) -> Option<OwnedFd> {
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

/// Mark every descriptor from 3 up close-on-exec, so a command gets only its stdio and the
/// descriptors its starter keeps on purpose: any other descriptor the server (or the MCP
/// client that started it) holds without close-on-exec would otherwise reach the command.
/// `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)` (Linux 5.11); where that call is missing, each
/// number below the soft RLIMIT_NOFILE (at most 2^20) is marked one by one. Only raw system
/// calls on numbers: safe in the `vfork` child. Returns 0 or the errno.
pub(crate) fn cloexec_from_3() -> i32 {
    // SAFETY: close_range with the CLOEXEC flag closes nothing and reads no memory; it only
    // sets a flag on open descriptors in the range.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if ret == 0 {
        return 0;
    }
    // SAFETY: getrlimit writes only the local struct it is given.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } < 0 {
        return std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
    }
    let end = limit.rlim_cur.min(1 << 20) as RawFd;
    for fd in 3..end {
        // SAFETY: fcntl on a number that is not open fails with EBADF and touches nothing.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    0
}

/// Restore the default action of SIGPIPE, which the Rust runtime sets to "ignore" before
/// `main`. An ignored signal survives `execve`, so without this every command would get
/// EPIPE where it expects to die quietly (`yes` writing to a closed pipe).
pub(crate) fn restore_default_signals() {
    // SAFETY: `signal` with SIG_DFL installs no handler; the launcher is single-threaded.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
    }
}

/// `clone(flags | SIGCHLD)` without a new stack: like `fork`, but the child starts in the
/// namespaces `flags` asks for (it is PID 1 of a new PID namespace). Returns 0 in the child
/// and the child's pid in the parent.
pub(crate) fn clone_into_namespaces(flags: libc::c_int) -> std::io::Result<libc::pid_t> {
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
pub(crate) fn clone3_into_cgroup(
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
pub(crate) fn fork() -> std::io::Result<libc::pid_t> {
    // SAFETY: only called by the single-threaded launcher (see `clone_into_namespaces`).
    let ret = unsafe { libc::fork() };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ret)
}

/// `execve(2)`. Returns only on failure.
pub(crate) fn execve(program: &CStr, argv: &[CString], env: &[CString]) -> std::io::Error {
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
pub(crate) fn die_by_signal(signal: i32) -> ! {
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
pub(crate) fn landlock_abi() -> i64 {
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
pub(crate) fn landlock_restrict_self(ruleset: std::os::fd::BorrowedFd<'_>) -> std::io::Result<()> {
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

/// Everything the child of [`spawn_vfork`] needs, prepared by the parent: no allocation,
/// lock or Rust runtime service may be used between `clone` and `execve`.
pub(crate) struct VforkPlan<'a> {
    /// The executable.
    pub program: &'a CStr,
    /// argv, ending with a null pointer.
    pub argv: &'a [*const libc::c_char],
    /// The whole environment, ending with a null pointer.
    pub envp: &'a [*const libc::c_char],
    /// Becomes descriptor 0, 1 and 2.
    pub stdio: [RawFd; 3],
    /// Folder to enter by handle.
    pub cwd: Option<RawFd>,
    /// Descriptors that must survive `execve` (close-on-exec cleared).
    pub keep: &'a [RawFd],
    /// Wait here before `execve` (see [`super::Gate`]).
    pub gate: Option<RawFd>,
    /// Become this uid and gid, with no supplementary groups (a root server starting a
    /// command without the launcher), before the parent-death signal is set (a change of
    /// credentials clears it).
    pub identity: Option<(u32, u32)>,
    /// The server's pid (the parent-death re-check).
    pub parent_pid: i32,
    /// Where the child writes its errno when a step fails.
    pub error_pipe: RawFd,
}

/// Start a process the way `posix_spawn` does: `clone(CLONE_VM | CLONE_VFORK)`, so the
/// server's memory is neither copied nor marked copy-on-write (a `fork` of the server costs
/// a page-table copy and then a page fault per page it writes). The child makes itself a
/// session leader with a parent-death signal, takes its stdio, enters its folder by handle,
/// waits at the gate and `execve`s. The server thread is suspended until then.
/// Returns the child's pid, or the errno of the step that failed (the child is reaped).
pub(crate) fn spawn_vfork(plan: &VforkPlan<'_>) -> std::io::Result<libc::pid_t> {
    const STACK: usize = 64 * 1024;
    // The child runs on its own stack inside our address space; 16-byte aligned top.
    let mut stack = vec![0u128; STACK / 16];
    let top = stack.as_mut_ptr_range().end.cast::<libc::c_void>();
    // SAFETY: sigset_t is plain data; sigfillset/pthread_sigmask only touch it and this
    // thread's mask. Blocking every signal keeps a handler of the parent from running on
    // the child's stack with the parent's memory before the child reset the handlers.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `all` and `old` are live locals of this frame.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // SAFETY: `child_main` only reads `plan` (alive until clone returns, because
    // CLONE_VFORK suspends this thread until the child execs or exits) and calls
    // async-signal-safe system calls; it never returns into Rust code of the parent,
    // allocates, or takes a lock. `top` is the end of a live, writable 64 KiB buffer that
    // outlives the child's use of it for the same reason.
    let pid = unsafe {
        libc::clone(
            child_main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (plan as *const VforkPlan<'_>)
                .cast_mut()
                .cast::<libc::c_void>(),
        )
    };
    let clone_error = std::io::Error::last_os_error();
    // SAFETY: restores this thread's own mask saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    drop(stack);
    if pid < 0 {
        return Err(clone_error);
    }
    Ok(pid)
}

/// The child of [`spawn_vfork`]. Never returns: `execve` or `_exit(127)`.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `VforkPlan` the parent passed, alive while it is suspended.
    let plan = unsafe { &*arg.cast::<VforkPlan<'_>>() };
    let errno = child_steps(plan);
    let bytes = errno.to_ne_bytes();
    // SAFETY: a write of 4 bytes from a live buffer, then _exit: both async-signal-safe.
    unsafe {
        libc::write(plan.error_pipe, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(127);
    }
}

/// The child's steps; returns the errno of the one that failed (or of `execve`).
fn child_steps(plan: &VforkPlan<'_>) -> i32 {
    let errno = || {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    // SAFETY: (whole block) raw system calls on plain data and descriptor numbers the
    // parent keeps open; no memory is allocated and no lock is taken. Signal handlers are
    // per process here (no CLONE_SIGHAND), so resetting them does not touch the parent's.
    unsafe {
        // A fresh command starts with every signal at its default action and none blocked
        // (an ignored SIGPIPE would otherwise survive execve).
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..=libc::SIGRTMAX() {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());

        if libc::setsid() < 0 {
            return errno();
        }
        if let Some((uid, gid)) = plan.identity {
            // Raw system calls: glibc's setuid wrappers signal every thread of the process,
            // and this child shares the parent's memory but is not one of its threads.
            if libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()) < 0
                || libc::syscall(libc::SYS_setresgid, gid, gid, gid) < 0
                || libc::syscall(libc::SYS_setresuid, uid, uid, uid) < 0
            {
                return errno();
            }
        }
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) < 0
        {
            return errno();
        }
        if libc::getppid() != plan.parent_pid {
            return libc::ESRCH;
        }
        for (target, &fd) in plan.stdio.iter().enumerate() {
            let target = target as RawFd;
            if fd == target {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return errno();
                }
            } else if libc::dup2(fd, target) < 0 {
                return errno();
            }
        }
        if let Some(fd) = plan.cwd
            && libc::fchdir(fd) < 0
        {
            return errno();
        }
        // Nothing the server holds reaches the child but what it keeps on purpose.
        let failed = cloexec_from_3();
        if failed != 0 {
            return failed;
        }
        for &fd in plan.keep {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return errno();
            }
        }
        if let Some(fd) = plan.gate
            && read_byte(std::os::fd::BorrowedFd::borrow_raw(fd)) != Some(b'g')
        {
            return GATE_REFUSED;
        }
        libc::execve(
            plan.program.as_ptr(),
            plan.argv.as_ptr(),
            plan.envp.as_ptr(),
        );
    }
    errno()
}

/// The "errno" a child reports when the gate was not opened (no real errno is negative).
pub(crate) const GATE_REFUSED: i32 = -1;

/// Read until `buf` is full, end of file or an error, retrying when a signal interrupts;
/// returns how many bytes were read. Plain `read(2)` calls (rustix, no allocation, no lock,
/// no `errno`), so it is also safe in the `vfork` child.
pub(crate) fn read_full(fd: impl std::os::fd::AsFd, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match rustix::io::read(&fd, buf.get_mut(got..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
    }
    got
}

/// Read one byte ([`read_full`]): `None` on end of file or an error.
pub(crate) fn read_byte(fd: impl std::os::fd::AsFd) -> Option<u8> {
    let mut byte = [0u8; 1];
    (read_full(fd, &mut byte) == 1).then_some(byte[0])
}

/// Register a pidfd with the runtime's reactor, so the supervisor can await the child's
/// exit. `None` outside a runtime or when registration fails.
pub(crate) fn register_pidfd(fd: OwnedFd) -> Option<tokio::io::unix::AsyncFd<OwnedFd>> {
    tokio::runtime::Handle::try_current().ok()?;
    // SAFETY: the AsyncFd takes ownership of the OwnedFd, so the descriptor stays open and
    // names the same pidfd for the AsyncFd's whole life, and `as_raw_fd` of an OwnedFd
    // always returns that descriptor.
    unsafe { tokio::io::unix::AsyncFd::register(fd).ok() }
}

/// `unshare(flags)`: move the calling process into new namespaces.
pub(crate) fn unshare(flags: libc::c_int) -> std::io::Result<()> {
    // SAFETY: only the single-threaded command-to-be of a launcher calls this (a user
    // namespace cannot be entered by a multi-threaded process); the call takes no pointers.
    if unsafe { libc::unshare(flags) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `mount_setattr(dirfd, path, flags, {attr_set, attr_clr})`: change the flags of a mount
/// (with `AT_RECURSIVE`, of every mount beneath it, all or nothing). No safe crate wraps it.
pub(crate) fn mount_setattr(
    dirfd: std::os::fd::BorrowedFd<'_>,
    path: &CStr,
    flags: libc::c_uint,
    attr_set: u64,
    attr_clr: u64,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    /// `struct mount_attr` (MOUNT_ATTR_SIZE_VER0, 32 bytes).
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        attr_set,
        attr_clr,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `path` is a NUL-terminated string and `attr` a fully initialised mount_attr of
    // the size passed, both alive for the call; the descriptor is borrowed, so it stays open.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::c_long::from(dirfd.as_raw_fd()),
            path.as_ptr(),
            libc::c_long::from(flags as libc::c_int),
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
