//! The one place in safe-mcp that holds `unsafe`: hooks that run in the forked child between
//! `fork` and `execve`, which no safe API offers. Each block says why it is sound.

use std::os::fd::RawFd;

/// Make the child the leader of a new session (and so of a new process group) with no
/// controlling terminal: a password prompt fails at once instead of waiting forever, and
/// the whole group can be killed with one signal. Also ask the kernel to SIGKILL the child
/// if the server dies, then re-check that the server is still there (the race the
/// `prctl` man page warns about). Optionally change into an already-opened folder by
/// handle, so the working folder cannot be swapped between check and use.
pub fn isolate_child(cmd: &mut tokio::process::Command, parent_pid: i32, cwd_fd: Option<RawFd>) {
    // SAFETY: the closure runs in the child after fork and before execve. It only calls
    // async-signal-safe system calls (setsid, prctl, getppid, fchdir) through rustix, which
    // does not allocate, and touches no lock or shared state of the parent.
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
            Ok(())
        });
    }
}
