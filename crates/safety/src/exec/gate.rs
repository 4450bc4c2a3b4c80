//! The start gate: a command is fully prepared (spawned, confined) and then waits, just
//! before `execve`, until the server opens its gate. The terminal flow opens it once the
//! call's audit intent record is durable, so process creation and sandbox set-up overlap the
//! `fdatasync` while nothing the model asked for runs before its record is on disk (see
//! `docs/terminal.md`). The gate is a pipe: one byte, `g` to run, anything else (or nothing)
//! to exit without running.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use super::sys;

/// A gate the command waits at, after every other preparation and just before `execve`,
/// until the caller opens it ([`GateOpener::open`]).
#[derive(Debug)]
pub struct Gate {
    read: OwnedFd,
}

/// The other end of a [`Gate`]: [`GateOpener::open`] lets the command run; anything else
/// (refusing, or dropping the opener) makes it exit without running.
#[derive(Debug)]
pub struct GateOpener {
    write: Option<OwnedFd>,
}

impl Gate {
    /// A closed gate and its opener.
    pub fn new() -> std::io::Result<(Gate, GateOpener)> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        Ok((Gate { read }, GateOpener { write: Some(write) }))
    }

    /// The read end's descriptor number, for a child that inherits it.
    pub(super) fn raw(&self) -> i32 {
        self.read.as_raw_fd()
    }

    /// The read end, to pass to a launcher started ahead.
    pub(super) fn read_end(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }
}

impl GateOpener {
    /// Let the command run.
    pub fn open(mut self) {
        self.send(b'g');
    }

    /// Make the command exit without running.
    pub fn refuse(mut self) {
        self.send(b'n');
    }

    fn send(&mut self, byte: u8) {
        if let Some(write) = self.write.take() {
            // One byte into an empty pipe: it cannot block or be split.
            let _ = rustix::io::write(&write, &[byte]);
        }
    }
}

impl Drop for GateOpener {
    fn drop(&mut self) {
        // Forked children may hold copies of the write end, so EOF is not to be relied on:
        // an opener that was never opened says no explicitly.
        self.send(b'n');
    }
}

/// Wait at a gate (in the child, before `execve`): `true` only when it was opened.
pub(super) fn gate_opened(gate: &impl AsFd) -> bool {
    sys::read_byte(gate) == Some(b'g')
}
