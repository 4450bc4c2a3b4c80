//! Step 8, the end of the launcher: wait at the start gate, then `execve` the command (or,
//! for the start-up probe, which runs nothing, exit). Whatever fails here is reported.

use std::os::fd::OwnedFd;
use std::process::ExitCode;

use super::REFUSED_EXIT;
use super::report::{LaunchEvent, Refusal, Reporter};
use super::spec::LaunchSpec;
use crate::exec::gate::gate_opened;
use crate::exec::spawn::ExecStrings;
use crate::exec::sys;

pub(super) struct Exec {
    strings: ExecStrings,
    /// Waited on just before `execve` (see [`LaunchSpec::gate_fd`]).
    gate: Option<OwnedFd>,
}

/// The command as `execve` arguments, and its gate; `None` for the probe (nothing to run).
pub(super) fn exec_parts(spec: &LaunchSpec) -> Result<Option<Exec>, Refusal> {
    let Some(program) = &spec.program else {
        return Ok(None);
    };
    Ok(Some(Exec {
        strings: ExecStrings::new(program, &spec.argv, &spec.env).map_err(Refusal::Command)?,
        // Close-on-exec from here on: the command never holds the gate.
        gate: spec.gate_fd.and_then(sys::adopt_inherited_fd),
    }))
}

/// Step 6. Only returns on failure (or for the probe, which runs nothing).
pub(super) fn exec_or_report(exec: Option<&Exec>, reporter: &mut Reporter) -> ExitCode {
    let Some(exec) = exec else {
        reporter.close();
        return ExitCode::SUCCESS;
    };
    if let Some(gate) = &exec.gate
        && !gate_opened(gate)
    {
        // The server could not make its intent record durable: nothing runs. The server
        // knows why and says so; this line only keeps the report whole.
        reporter.send(&LaunchEvent::Refused {
            reason: Refusal::GateRefused.to_string(),
        });
        return ExitCode::from(REFUSED_EXIT);
    }
    reporter.flush();
    // The command gets its stdio and nothing else: whatever the launcher inherited or
    // opened (its report pipe, the Landlock ruleset, a descriptor leaked to the server)
    // closes at execve.
    let failed = sys::cloexec_from_3();
    if failed != 0 {
        reporter.send(&LaunchEvent::ExecFailed {
            reason: format!(
                "could not mark the launcher's descriptors close-on-exec: {}",
                std::io::Error::from_raw_os_error(failed)
            ),
        });
        return ExitCode::from(127);
    }
    let error = sys::execve(&exec.strings.program, &exec.strings.argv, &exec.strings.env);
    reporter.send(&LaunchEvent::ExecFailed {
        reason: error.to_string(),
    });
    ExitCode::from(127)
}
