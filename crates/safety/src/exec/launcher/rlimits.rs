//! Step 2, the rlimits of the command: no core dump, and the profile's open files, file
//! size, CPU time and (where no memory cgroup holds the limit) heap; then the re-check that
//! the server is still the launcher's parent.

use std::process::ExitCode;

use super::REFUSED_EXIT;
use super::report::{LaunchEvent, Reporter};
use super::spec::LaunchSpec;

fn set_limit(
    resource: rustix::process::Resource,
    name: &str,
    value: u64,
    hard: u64,
    set: &mut Vec<String>,
    problems: &mut Vec<String>,
) {
    // Raising a hard limit is refused even to root (no CAP_SYS_RESOURCE): only ever lower.
    let current = rustix::process::getrlimit(resource);
    let cap = |v: u64| current.maximum.map_or(v, |m| v.min(m));
    let limit = rustix::process::Rlimit {
        current: Some(cap(value)),
        maximum: Some(cap(hard)),
    };
    match rustix::process::setrlimit(resource, limit) {
        Ok(()) => set.push(format!("{name}={}", cap(value))),
        Err(e) => problems.push(format!("RLIMIT_{name}: {e}")),
    }
}

/// Step 2: rlimits.
pub(super) fn prepare(spec: &LaunchSpec, reporter: &mut Reporter) -> Result<(), ExitCode> {
    use rustix::process::Resource;
    let mut problems = Vec::new();
    let mut rlimits = Vec::new();
    // A crashing command must not write a core file (it may hold secrets) into the jail.
    set_limit(Resource::Core, "CORE", 0, 0, &mut rlimits, &mut problems);
    // Descriptor exhaustion of the host: the profile's open-descriptor budget, enforced.
    set_limit(
        Resource::Nofile,
        "NOFILE",
        spec.open_files,
        spec.open_files,
        &mut rlimits,
        &mut problems,
    );
    // Filling the disk through the jail: no file may grow past this.
    set_limit(
        Resource::Fsize,
        "FSIZE",
        spec.file_size_bytes,
        spec.file_size_bytes,
        &mut rlimits,
        &mut problems,
    );
    // A CPU burner that outlives its server: SIGXCPU at the soft limit, SIGKILL a second later.
    set_limit(
        Resource::Cpu,
        "CPU",
        spec.cpu_seconds,
        spec.cpu_seconds.saturating_add(1),
        &mut rlimits,
        &mut problems,
    );
    if let Some(data) = spec.data_bytes {
        // No memory cgroup: cap each process's heap instead (RLIMIT_AS would break
        // runtimes that reserve address space, such as Go and the JVM).
        set_limit(
            Resource::Data,
            "DATA",
            data,
            data,
            &mut rlimits,
            &mut problems,
        );
    }
    // The server may have died between spawn and here; the parent-death signal set by its
    // spawn covers later deaths, this covers the window before it.
    let ppid = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get());
    if ppid != spec.parent_pid {
        return Err(ExitCode::from(REFUSED_EXIT));
    }
    reporter.send(&LaunchEvent::Prepared { rlimits, problems });
    Ok(())
}
