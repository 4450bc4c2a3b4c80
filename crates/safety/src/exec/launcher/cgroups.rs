//! Step 1, the launcher's place in the call's cgroups: joining them before anything
//! forks, the refusal when a required join failed, and the processes the launcher itself
//! keeps there beside the command (set aside when the folders are limited, given back when
//! the launcher becomes the command after all).

use std::path::{Path, PathBuf};

use super::namespaces::NamespaceError;
use super::report::{LaunchEvent, Refusal};
use super::spec::LaunchSpec;
use crate::exec::cgroup::Beside;

/// A folder whose `pids.max` keeps the slack set aside for the launcher.
#[derive(Debug, thiserror::Error)]
pub(super) enum SlackFailure {
    /// `pids.max` could not be read or written.
    #[error("{}: {source}", .file.display())]
    Io {
        /// The `pids.max` file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `pids.max` holds neither a number nor `max`.
    #[error("{}: '{text}': {source}", .file.display())]
    NotANumber {
        /// The `pids.max` file.
        file: PathBuf,
        /// What it holds.
        text: String,
        /// Why it is not a number.
        source: std::num::ParseIntError,
    },
}

/// Every folder that keeps its slack, each named (`; ` between them).
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub(super) struct SlackError(Vec<SlackFailure>);

/// Step 1 (v1 part, and v2 when no namespace child will be cloned into it).
/// Move this process (one thread) into the call's cgroups: v1 through `tasks` (no global
/// lock), v2 through `cgroup.procs` (the kernel's global threadgroup lock, which can wait
/// for an RCU grace period: callers on a call's path clone into v2 instead when they can).
pub(super) fn join_cgroups(v1_tasks: &[PathBuf], v2: Option<&Path>) -> LaunchEvent {
    let mut v1_failed = Vec::new();
    for tasks in v1_tasks {
        // `0` is the calling thread; the launcher has only one.
        if let Err(e) = std::fs::write(tasks, "0") {
            v1_failed.push(format!("{}: {e}", tasks.display()));
        }
    }
    let v2_failed = v2.and_then(|dir| {
        std::fs::write(dir.join("cgroup.procs"), "0")
            .err()
            .map(|e| format!("{}: {e}", dir.display()))
    });
    LaunchEvent::CgroupJoin {
        v2_failed,
        v1_failed,
    }
}

/// Why the call must not run: the kernel sandbox is required and a cgroup join failed.
pub(super) fn required_join_refusal(spec: &LaunchSpec, joined: &LaunchEvent) -> Option<Refusal> {
    let why = join_failed(joined).filter(|_| spec.require)?;
    Some(Refusal::CgroupJoin(why))
}

fn join_failed(event: &LaunchEvent) -> Option<String> {
    match event {
        LaunchEvent::CgroupJoin {
            v2_failed,
            v1_failed,
        } if v2_failed.is_some() || !v1_failed.is_empty() => Some(
            v2_failed
                .iter()
                .chain(v1_failed.iter())
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    }
}

/// How many processes of a launcher started for its call stay in the call's folders
/// beside the command (in `launch`): with namespaces on, the launcher joins the v1 folders,
/// clones, and stays as the clone's parent (the clone is born in the v2 folder, so it
/// counts only in v1); a PID namespace's init is in both. With namespaces off the launcher
/// becomes the command: none. (On a kernel without `clone3` into a cgroup, older than 5.7,
/// the launcher joins the v2 folder too, and the command can hold one process fewer there.)
pub fn beside_command(namespaces: bool, pid_namespace: bool) -> Beside {
    let init = u64::from(namespaces && pid_namespace);
    Beside {
        v1: u64::from(namespaces) + init,
        v2: init,
    }
}

/// The namespace failure's text, with why the slack could not be given back when it could
/// not (it reaches the result's downgrades as one).
pub(super) fn with_give_back(error: &NamespaceError, given_back: Result<(), SlackError>) -> String {
    match given_back {
        Ok(()) => error.to_string(),
        Err(e) => format!("{error}; the process limit keeps its slack: {e}"),
    }
}

/// A launcher started for its call whose namespaces could not be made becomes the command:
/// lower each `pids.max` of its folders by what [`beside_command`] allowed for the
/// processes that will not exist, so the command holds exactly its number. Folders without
/// `pids.max` (the v1 memory folder, a v2 folder without the controller) are left alone.
pub(super) fn give_back_slack(spec: &LaunchSpec) -> Result<(), SlackError> {
    let beside = beside_command(spec.namespaces, spec.pid_namespace);
    let v1 = spec
        .cgroup_v1_tasks
        .iter()
        .filter_map(|tasks| tasks.parent())
        .map(|dir| (dir, beside.v1));
    let v2 = spec.cgroup_v2.iter().map(|dir| (dir.as_path(), beside.v2));
    // Every folder is tried; each one that keeps its slack is named.
    let failed: Vec<SlackFailure> = v1
        .chain(v2)
        .filter(|(_, slack)| *slack > 0)
        .filter_map(|(dir, slack)| {
            let file = dir.join("pids.max");
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(source) => return Some(SlackFailure::Io { file, source }),
            };
            let text = text.trim();
            if text == "max" {
                // No limit was written here: nothing to give back.
                return None;
            }
            let lowered = match text.parse::<u64>() {
                Ok(max) => max.saturating_sub(slack).max(1),
                Err(source) => {
                    return Some(SlackFailure::NotANumber {
                        text: text.to_string(),
                        file,
                        source,
                    });
                }
            };
            std::fs::write(&file, lowered.to_string())
                .err()
                .map(|source| SlackFailure::Io { file, source })
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(SlackError(failed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::filesystem::FsRules;

    fn spec(dir: &Path, namespaces: bool, pid_namespace: bool) -> LaunchSpec {
        LaunchSpec {
            program: None,
            argv: Vec::new(),
            env: Vec::new(),
            fs: FsRules {
                write_root: dir.to_path_buf(),
                read_paths: Vec::new(),
                deny_network: false,
            },
            landlock_ruleset: None,
            open_files: 64,
            file_size_bytes: 1 << 20,
            cpu_seconds: 1,
            data_bytes: None,
            namespaces,
            pid_namespace,
            cgroup_v2: Some(dir.join("v2")),
            cgroup_v1_tasks: vec![dir.join("pids/tasks"), dir.join("memory/tasks")],
            report_fd: -1,
            gate_fd: None,
            parent_pid: 1,
            require: false,
            require_namespaces: false,
            view: None,
            cwd_relative: PathBuf::new(),
            view_known: Vec::new(),
            run_as: None,
            deny_metadata: false,
        }
    }

    /// When the namespaces could not be made, the launcher gives back exactly the slack
    /// `beside_command` allowed, per hierarchy; a folder without `pids.max` and a `max` are
    /// left alone. Plain folders stand in for cgroupfs.
    #[test]
    fn a_launcher_that_becomes_the_command_gives_back_its_slack() {
        for ((namespaces, pid_namespace), (v1, v2)) in [
            ((true, true), ("16", "16")),
            ((true, false), ("16", "16")),
            ((false, false), ("18", "17")),
        ] {
            let tmp = tempfile::tempdir().expect("temp dir");
            for folder in ["v2", "pids", "memory"] {
                std::fs::create_dir(tmp.path().join(folder)).expect("folder");
            }
            let s = spec(tmp.path(), namespaces, pid_namespace);
            let limited = crate::exec::cgroup::Beside {
                v1: 16 + beside_command(namespaces, pid_namespace).v1,
                v2: 16 + beside_command(namespaces, pid_namespace).v2,
            };
            // As `ReservedCall::limit` wrote them; for (false, false) pretend two more were
            // allowed, which must stay: with namespaces off nothing was set aside.
            let (w1, w2) = if namespaces {
                (limited.v1, limited.v2)
            } else {
                (18, 17)
            };
            // cgroupfs ends what it shows with a newline.
            std::fs::write(tmp.path().join("pids/pids.max"), format!("{w1}\n")).expect("v1");
            std::fs::write(tmp.path().join("v2/pids.max"), format!("{w2}\n")).expect("v2");
            give_back_slack(&s).expect("given back");
            let read = |f: &str| {
                let text = std::fs::read_to_string(tmp.path().join(f)).expect("read");
                text.trim().to_string()
            };
            assert_eq!(
                (read("pids/pids.max").as_str(), read("v2/pids.max").as_str()),
                (v1, v2),
                "namespaces {namespaces}, PID namespace {pid_namespace}"
            );
            assert!(!tmp.path().join("memory/pids.max").exists());
        }
        // The failure to give it back is part of the downgrade's text.
        let clone_failed = NamespaceError::Clone(std::io::Error::from_raw_os_error(libc::EPERM));
        let kept = SlackError(vec![SlackFailure::Io {
            file: "pids.max".into(),
            source: std::io::Error::from_raw_os_error(libc::EACCES),
        }]);
        assert_eq!(
            with_give_back(&clone_failed, Err(kept)),
            "clone: Operation not permitted (os error 1); the process limit keeps its slack: \
             pids.max: Permission denied (os error 13)"
        );
        assert_eq!(
            with_give_back(&clone_failed, Ok(())),
            "clone: Operation not permitted (os error 1)"
        );
        // No limit written ("max"): nothing to give back.
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(tmp.path().join("pids")).expect("folder");
        std::fs::write(tmp.path().join("pids/pids.max"), "max\n").expect("v1");
        give_back_slack(&spec(tmp.path(), true, true)).expect("given back");
        let max = std::fs::read_to_string(tmp.path().join("pids/pids.max")).expect("read");
        assert_eq!(max, "max\n");

        // A file that holds no number is named, and the other folders are still lowered.
        let tmp = tempfile::tempdir().expect("temp dir");
        for folder in ["v2", "pids"] {
            std::fs::create_dir(tmp.path().join(folder)).expect("folder");
        }
        std::fs::write(tmp.path().join("pids/pids.max"), "garbage\n").expect("v1");
        std::fs::write(tmp.path().join("v2/pids.max"), "17\n").expect("v2");
        let error = give_back_slack(&spec(tmp.path(), true, true))
            .expect_err("named")
            .to_string();
        assert!(
            error.contains("pids/pids.max") && error.contains("garbage"),
            "{error}"
        );
        let v2 = std::fs::read_to_string(tmp.path().join("v2/pids.max")).expect("read");
        assert_eq!(v2, "16");
    }
}
