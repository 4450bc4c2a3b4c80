//! The TOCTOU swap race: another thread flips a folder between a real
//! folder and a symlink to the outside while moves into and out of it run. With every
//! operation relative to a handle opened with RESOLVE_NO_SYMLINKS, nothing escapes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::files_sandbox::Sandbox;
use safety::result::ResultCode;

const MOVES: usize = 800;

#[test]
fn folder_flipped_to_a_symlink_during_moves_never_lets_a_file_escape() {
    let sb = Sandbox::new();
    let target = sb.outside.join("target");
    std::fs::create_dir(&target).unwrap();
    std::fs::create_dir(sb.ws.join("d")).unwrap();
    for i in 0..MOVES {
        sb.write(&format!("f{i}.txt"), &format!("file {i}"));
    }
    let outside_before = Sandbox::tree(&sb.outside);
    let org = sb.organizer();

    let stop = Arc::new(AtomicBool::new(false));
    let flips = Arc::new(AtomicU64::new(0));
    let flipper = {
        let (stop, flips) = (stop.clone(), flips.clone());
        let (d, d_real, target) = (sb.ws.join("d"), sb.ws.join("d_real"), target.clone());
        std::thread::spawn(move || {
            // Bounded: at most 200 000 flips even if the mover stalls.
            while !stop.load(Ordering::Relaxed) && flips.load(Ordering::Relaxed) < 200_000 {
                if std::fs::rename(&d, &d_real).is_ok() {
                    let _ = std::os::unix::fs::symlink(&target, &d);
                    let _ = std::fs::remove_file(&d);
                    let _ = std::fs::rename(&d_real, &d);
                }
                flips.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let (mut moved, mut refused) = (0usize, 0usize);
    for i in 0..MOVES {
        let env = org.move_file(&format!("f{i}.txt"), &format!("d/f{i}.txt"));
        match env.code {
            ResultCode::Ok => moved += 1,
            ResultCode::PathEscape | ResultCode::OperationFailed | ResultCode::PolicyDenied => {
                refused += 1
            }
            other => panic!("unexpected {other:?}: {env:?}"),
        }
        // The source side too: out of the flipping folder.
        if i % 3 == 0 {
            let env = org.move_file(&format!("d/f{i}.txt"), &format!("back/f{i}.txt"));
            assert_ne!(env.code, ResultCode::InternalError);
        }
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    // Put the folder back if the flipper stopped mid-flip.
    if !sb.ws.join("d").exists() && sb.ws.join("d_real").exists() {
        let _ = std::fs::remove_file(sb.ws.join("d"));
        std::fs::rename(sb.ws.join("d_real"), sb.ws.join("d")).unwrap();
    }

    eprintln!(
        "swap race: {moved} moves succeeded, {refused} refused, {} flips",
        flips.load(Ordering::Relaxed)
    );
    assert_eq!(
        Sandbox::tree(&sb.outside),
        outside_before,
        "a file escaped the workspace"
    );
    assert!(
        std::fs::read_dir(&target).unwrap().next().is_none(),
        "a file escaped into the target"
    );
    // Every file still exists exactly once, inside, with its content.
    let inside = Sandbox::tree(&sb.ws);
    for i in 0..MOVES {
        let content = format!("file {i}");
        let copies = inside
            .iter()
            .filter(|(k, _)| k.ends_with(&format!("/f{i}.txt")) || **k == format!("f{i}.txt"))
            .filter(|(_, v)| **v == content)
            .count();
        assert_eq!(copies, 1, "f{i}.txt");
    }
    assert!(moved > 0 && flips.load(Ordering::Relaxed) > 0);
}
