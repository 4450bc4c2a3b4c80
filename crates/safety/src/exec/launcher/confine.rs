//! Steps 4 to 7, what confines the command: the read-only view's refusal rule, then the
//! capabilities and identity ([`super::identity`]), Landlock, and seccomp last, using what
//! a launcher started ahead already did.

use super::identity::drop_capabilities;
use super::report::{LaunchEvent, Refusal, Reporter};
use super::spec::LaunchSpec;
use crate::exec::filesystem;
use crate::exec::seccomp::{self, FilterChoice};

/// What a launcher started ahead did before its call came.
#[derive(Default)]
pub(super) struct Ahead {
    /// seccomp filters compiled ahead.
    pub(super) filters: Vec<(FilterChoice, Vec<seccompiler::BpfProgram>)>,
    /// The filter already installed (the standard one: every profile's rules).
    pub(super) installed: Option<FilterChoice>,
    /// The bounding set already holds nothing but this capability.
    pub(super) bounding_left: Option<u32>,
}

/// [`super::cold::confine`] after what a launcher started ahead already did: filters compiled ahead
/// are used, one already installed is not installed again (a stricter one is stacked on
/// top), and only what is left of the bounding set is dropped.
pub(super) fn confine_with(
    spec: &LaunchSpec,
    ruleset: Option<&filesystem::Prepared>,
    reporter: &mut Reporter,
    ahead: &Ahead,
    deny_metadata: bool,
) -> Result<(), Refusal> {
    use std::os::fd::AsFd;
    let (identity, capabilities) = drop_capabilities(ahead.bounding_left, spec.run_as);
    let capabilities_error = match (&identity, &capabilities) {
        (Some(LaunchEvent::Identity { error: Some(e), .. }), _) => Some(format!("identity: {e}")),
        (_, LaunchEvent::Capabilities { error, .. }) => error.clone(),
        _ => None,
    };
    if let Some(identity) = &identity {
        reporter.send(identity);
    }
    reporter.send(&capabilities);
    // A command must never run as root, whatever `require` says.
    if let Some(LaunchEvent::Identity { error: Some(e), .. }) = &identity {
        return Err(Refusal::Identity(e.clone()));
    }
    let applied = match ruleset {
        Some(prepared) => filesystem::restrict_with(prepared.fd.as_fd(), &prepared.report),
        None => filesystem::restrict_self(&spec.fs),
    };
    let (landlock, landlock_error) = match applied {
        Ok(r) if r.confines_writes() => (Some(r), None),
        Ok(r) => {
            let why = format!(
                "Landlock is {} at ABI {} (ABI {} is needed to confine writes)",
                r.status.replace('_', " "),
                r.abi,
                filesystem::MINIMUM_ABI
            );
            (Some(r), Some(why))
        }
        Err(e) => (None, Some(e.to_string())),
    };
    let choice = FilterChoice {
        deny_network: spec.fs.deny_network,
        deny_user_namespaces: spec.fs.deny_network,
        deny_metadata,
    };
    let installed = if ahead.installed == Some(choice) {
        Ok(())
    } else {
        match ahead.filters.iter().find(|(c, _)| *c == choice) {
            Some((_, programs)) => seccomp::install(programs),
            None => seccomp::build(choice).and_then(|p| seccomp::install(&p)),
        }
    };
    let (seccomp, seccomp_error) = match installed {
        Ok(()) => (Some(choice.describe().to_string()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let missing: Vec<String> = [
        capabilities_error.map(|e| format!("capabilities: {e}")),
        landlock_error.as_ref().map(|e| format!("Landlock: {e}")),
        seccomp_error.as_ref().map(|e| format!("seccomp: {e}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    reporter.send(&LaunchEvent::Confined {
        landlock,
        landlock_error,
        seccomp,
        seccomp_error,
    });
    if spec.require && !missing.is_empty() {
        return Err(Refusal::Missing(missing));
    }
    Ok(())
}

/// Why the call must not run: the kernel sandbox is required and the view is missing, or
/// its scan for `.git` stopped early (a repository past it would be writable).
pub(super) fn view_refusal(spec: &LaunchSpec, event: &LaunchEvent) -> Option<Refusal> {
    match event {
        LaunchEvent::View { error: Some(e), .. } if spec.require => {
            Some(Refusal::NoView(e.clone()))
        }
        LaunchEvent::View {
            report: Some(r), ..
        } if spec.require && r.scan_truncated => Some(Refusal::ScanTruncated),
        _ => None,
    }
}
