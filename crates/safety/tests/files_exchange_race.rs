//! The exchange race: between `apply_plan`'s re-check of a planned
//! file and its rename, another thread swaps the file with a symlink to an outside file by
//! `renameat2(RENAME_EXCHANGE)`, which is atomic, so no check before the rename can close the
//! window. The organiser checks what arrived at the destination (device and inode) and puts
//! back anything that is not the planned file: after every round no symlink sits at any
//! destination, the outside file is untouched, and the journal records as done only moves
//! whose destination holds the recorded inode.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::files_sandbox::Sandbox;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use safety::result::ResultCode;

const ROUNDS: usize = 150;
const FILES: usize = 4;
/// Bound on the attacker's exchanges in one round, even if the organiser stalls.
const MAX_EXCHANGES: u64 = 2_000_000;

/// Every symlink below `root`, relative.
fn symlinks(root: &Path) -> Vec<String> {
    Sandbox::tree(root)
        .into_iter()
        .filter(|(_, v)| v.starts_with("-> "))
        .map(|(k, _)| k)
        .collect()
}

#[test]
fn planned_file_exchanged_for_a_symlink_is_never_left_moved() {
    let sb = Sandbox::new();
    let outside_file = sb.outside.join("secret.pdf");
    let outside_meta = std::fs::symlink_metadata(&outside_file).unwrap();
    let outside_before = sb.outside_snapshot();
    let org = sb.organizer();
    let hide = sb.ws.join(".hide");

    let (mut applied, mut refused_changed, mut swapped) = (0usize, 0usize, 0usize);
    let mut exchanges = 0u64;
    for round in 0..ROUNDS {
        std::fs::create_dir_all(&hide).unwrap();
        let decoy = hide.join("decoy");
        std::os::unix::fs::symlink(&outside_file, &decoy).unwrap();
        for k in 0..FILES {
            sb.write(
                &format!("r{round}_{k}.pdf"),
                &format!("round {round} file {k}"),
            );
        }
        let plan = org.plan_organize();
        assert_eq!(plan.code, ResultCode::Ok, "{plan:?}");
        let id = plan.detail["plan_id"].as_str().unwrap().to_string();
        // The attacker's target: a file moved late in the plan, so the window between its
        // re-check and its rename holds the journal's begin (an fsync).
        let target = sb.ws.join(format!("r{round}_{}.pdf", FILES - 1));

        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicU64::new(0));
        let attacker = {
            let (stop, count) = (stop.clone(), count.clone());
            let (target, decoy) = (target.clone(), decoy.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) && count.load(Ordering::Relaxed) < MAX_EXCHANGES
                {
                    // Fails (ENOENT) once the target has been moved away: then keep trying,
                    // the file may be put back.
                    let _ = renameat_with(CWD, &target, CWD, &decoy, RenameFlags::EXCHANGE);
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let env = org.apply_plan(&id, &|_, _| {});
        stop.store(true, Ordering::Relaxed);
        attacker.join().unwrap();
        exchanges += count.load(Ordering::Relaxed);
        match env.code {
            ResultCode::Ok => applied += 1,
            ResultCode::OperationFailed if env.reason.contains("was exchanged") => swapped += 1,
            ResultCode::OperationFailed => refused_changed += 1,
            other => panic!("round {round}: unexpected {other:?}: {env:?}"),
        }

        // No symlink anywhere but where the attacker keeps it (its decoy name or the
        // target's own name in the workspace root).
        for link in symlinks(&sb.ws) {
            let allowed = [
                ".hide/decoy".to_string(),
                format!("r{round}_{}.pdf", FILES - 1),
            ];
            assert!(
                allowed.contains(&link),
                "round {round}: a symlink was moved to '{link}': {env:?}"
            );
        }
        assert!(
            !std::fs::symlink_metadata(sb.ws.join("Documents"))
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false),
            "round {round}: the destination folder became a symlink"
        );
        // The outside file: same content, inode, mode, times.
        let now = std::fs::symlink_metadata(&outside_file).unwrap();
        assert_eq!(
            (
                now.ino(),
                now.mode(),
                now.mtime(),
                now.mtime_nsec(),
                now.len()
            ),
            (
                outside_meta.ino(),
                outside_meta.mode(),
                outside_meta.mtime(),
                outside_meta.mtime_nsec(),
                outside_meta.len()
            ),
            "round {round}: the outside file changed"
        );
        assert_eq!(
            sb.outside_snapshot(),
            outside_before,
            "round {round}: outside changed"
        );
        // The journal: every move it holds as done has the recorded inode at its dest.
        let history = org.history().unwrap();
        for action in &history.undo {
            for m in &action.moves {
                let meta = std::fs::symlink_metadata(sb.ws.join(&m.dest)).unwrap_or_else(|e| {
                    panic!(
                        "round {round}: journal says '{}' is moved, but: {e}",
                        m.dest
                    )
                });
                assert!(
                    meta.file_type().is_file() && meta.ino() == m.identity.ino,
                    "round {round}: journal says '{}' holds inode {}, it holds {} ({:?})",
                    m.dest,
                    m.identity.ino,
                    meta.ino(),
                    meta.file_type()
                );
            }
        }
        // Clear the round's leftovers (the decoy, the file it was swapped with, the target
        // name if it is the symlink now) so the next plan starts clean.
        std::fs::remove_dir_all(&hide).unwrap();
        for entry in std::fs::read_dir(&sb.ws).unwrap().flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            if !meta.is_dir() {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
    }
    eprintln!(
        "exchange race: {ROUNDS} rounds, {applied} applied, {refused_changed} refused at the \
         re-check, {swapped} caught after the move, {exchanges} exchanges"
    );
    assert!(exchanges > 0);
    assert!(applied + swapped + refused_changed == ROUNDS);
}
