//! Audit log rotation (`audit_rotate_bytes`): the log is renamed `<log>.<n>` once
//! full and a new file continues the same hash chain; nothing is lost or deleted, several
//! writers follow each other's rotations, a rotation cut short by a crash is finished by the
//! next append, and `verify` checks the rotated files and the log as one chain.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::audit_common::{hashed_line, parse, redactor, tempdir};
use safety::audit::{AuditLog, verify};
use safety::config::MIN_ROTATE_BYTES;
use serde_json::{Map, Value, json};

const ROTATE: u64 = MIN_ROTATE_BYTES;

fn open(path: &Path, rotate: u64) -> AuditLog {
    AuditLog::open(path, redactor())
        .unwrap_or_else(|e| panic!("open failed: {e}"))
        .rotate_at(rotate)
}

fn record(writer: u64, n: u64) -> Map<String, Value> {
    match json!({"tool": "run_command", "writer": writer, "n": n,
                 "args": {"command": format!("echo {}", "x".repeat(100))}})
    {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn append(log: &AuditLog, writer: u64, n: u64) {
    log.append(record(writer, n))
        .unwrap_or_else(|e| panic!("append failed: {e}"));
}

fn lines(path: &Path) -> Vec<Map<String, Value>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(parse)
        .collect()
}

fn rotated(path: &Path, n: u64) -> PathBuf {
    PathBuf::from(format!("{}.{n}", path.display()))
}

/// The files of the chain, oldest first, checking the numbering has no gap.
fn chain_files(path: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut n = 1;
    while rotated(path, n).exists() {
        files.push(rotated(path, n));
        n += 1;
    }
    assert!(!rotated(path, n + 1).exists(), "gap in the rotated files");
    files.push(path.to_path_buf());
    files
}

/// Every caller record of the whole chain, as (writer, n), in chain order.
fn caller_records(path: &Path) -> Vec<(u64, u64)> {
    chain_files(path)
        .iter()
        .flat_map(|f| lines(f))
        .filter(|r| !r.contains_key("rotation"))
        .map(|r| {
            let get = |k: &str| r.get(k).and_then(Value::as_u64).unwrap_or(u64::MAX);
            (get("writer"), get("n"))
        })
        .collect()
}

fn assert_intact(path: &Path, records: u64) {
    let report = verify(path).unwrap_or_else(|e| panic!("verify: {e}"));
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.records, records, "{report:?}");
    assert_eq!(report.files, chain_files(path));
}

fn broken(path: &Path) -> (PathBuf, u64, String) {
    let report = verify(path).unwrap_or_else(|e| panic!("verify: {e}"));
    let (line, why) = report
        .broken
        .clone()
        .unwrap_or_else(|| panic!("not detected: {report:?}"));
    (report.file.clone().unwrap_or_default(), line, why)
}

/// Append until the first rotation happened; returns how many records were appended.
fn fill_until_rotated(log: &AuditLog, path: &Path) -> u64 {
    fill_until(&rotated(path, 1), 0, |n| append(log, 0, n))
}

/// Call `append` with `from`, `from + 1`, ... until `file` exists (bounded); returns the
/// number after the last one appended.
fn fill_until(file: &Path, from: u64, append: impl Fn(u64)) -> u64 {
    let mut n = from;
    while !file.exists() {
        append(n);
        n += 1;
        assert!(n < from + 1000, "never rotated");
    }
    n
}

#[test]
fn a_full_log_rotates_and_the_chain_goes_on_across_files() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path, ROTATE);
    for n in 0..200 {
        append(&log, 0, n);
    }
    let files = chain_files(&path);
    let rotations = files.len() as u64 - 1;
    assert!(rotations >= 5, "only {rotations} rotations for ~40 KB");
    // Nothing lost, nothing twice, in order.
    let expected: Vec<(u64, u64)> = (0..200).map(|n| (0, n)).collect();
    assert_eq!(caller_records(&path), expected);
    // Each rotated file ends with the record naming it and is about the size asked for;
    // the next file starts with the record naming the one before.
    for (i, file) in files.iter().enumerate() {
        let records = lines(file);
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        if i + 1 < files.len() {
            let last = records.last().cloned().unwrap_or_default();
            assert_eq!(last.get("rotation"), Some(&json!("end")));
            assert_eq!(last.get("rotated_to"), Some(&json!(name)));
            let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
            assert!(
                (ROTATE..ROTATE + 1024).contains(&size),
                "{name}: {size} bytes"
            );
        }
        if i > 0 {
            let previous = files[i - 1].file_name().unwrap_or_default();
            let first = records.first().cloned().unwrap_or_default();
            assert_eq!(first.get("rotation"), Some(&json!("start")));
            assert_eq!(
                first.get("previous_file"),
                Some(&json!(previous.to_string_lossy()))
            );
        }
    }
    assert_intact(&path, 200 + 2 * rotations);
    assert!(!dir.path().join("audit.jsonl.rotating").exists());
    // Reopened, it goes on in the newest file.
    drop(log);
    let log = open(&path, ROTATE);
    append(&log, 0, 200);
    assert_intact(&path, 201 + 2 * (chain_files(&path).len() as u64 - 1));
}

#[test]
fn writers_sharing_a_log_follow_each_others_rotations() {
    // Two opens are two open file descriptions, each with its own flock, exactly as two
    // server processes sharing one log; each is written from two threads, with all three
    // kinds of append. One of them never rotates itself, it only follows.
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let rotating = Arc::new(open(&path, ROTATE));
    let following = Arc::new(open(&path, 0));
    let mut threads = Vec::new();
    for writer in 0..4u64 {
        let log = if writer % 2 == 0 {
            rotating.clone()
        } else {
            following.clone()
        };
        threads.push(std::thread::spawn(move || {
            for n in 0..100 {
                let result = match n % 3 {
                    0 => log.append(record(writer, n)),
                    1 => log.append_sync_behind(record(writer, n)),
                    _ => {
                        let (tx, rx) = std::sync::mpsc::channel();
                        let r = log.append_then(record(writer, n), move |r| {
                            let _ = tx.send(r);
                        });
                        if r.is_ok() {
                            let durable = rx.recv_timeout(std::time::Duration::from_secs(10));
                            assert!(matches!(durable, Ok(Ok(()))), "{durable:?}");
                        }
                        r
                    }
                };
                result.unwrap_or_else(|e| panic!("writer {writer}, record {n}: {e}"));
            }
        }));
    }
    for t in threads {
        t.join().unwrap_or_else(|_| panic!("a writer panicked"));
    }
    drop((rotating, following));
    let mut records = caller_records(&path);
    records.sort_unstable();
    let expected: Vec<(u64, u64)> = (0..4).flat_map(|w| (0..100).map(move |n| (w, n))).collect();
    assert_eq!(records, expected, "lost or duplicated records");
    let rotations = chain_files(&path).len() as u64 - 1;
    assert!(rotations >= 5, "only {rotations} rotations");
    assert_intact(&path, 400 + 2 * rotations);
}

/// Rotate a fresh log once, then remove the new file at its path, as if the rotation had
/// stopped before its `rename`; the caller puts the ended file back. Returns the path and
/// how many records were appended.
fn rotate_once_and_undo_the_rename(dir: &Path) -> (PathBuf, u64) {
    let path = dir.join("audit.jsonl");
    let log = open(&path, ROTATE);
    let before = fill_until_rotated(&log, &path);
    drop(log);
    std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{e}"));
    (path, before)
}

/// A crash after the end record was written, before anything was renamed: the log ends
/// with the end record and the rotated file does not exist yet.
#[test]
fn a_rotation_cut_short_before_the_rename_is_finished_by_the_next_append() {
    let dir = tempdir();
    let (path, before) = rotate_once_and_undo_the_rename(dir.path());
    // The old file is back at the path, and not yet linked.
    std::fs::rename(rotated(&path, 1), &path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(verify(&path).map(|r| r.broken).ok(), Some(None));

    let log = open(&path, ROTATE);
    append(&log, 1, 0);
    // Two `fdatasync`s of the log: the ended file first (its writer died before its own sync
    // returned, as far as this writer can tell), then the new record.
    assert_eq!(log.completed_syncs(), 2);
    assert_eq!(chain_files(&path).len(), 2);
    let first = lines(&path);
    assert_eq!(first.len(), 2, "start record, then the new record");
    assert_eq!(first[0].get("previous_file"), Some(&json!("audit.jsonl.1")));
    // The record that triggered the rotation (the last of `before`) was undone with the new
    // file, so the chain holds `before - 1` of the first writer's records.
    assert_intact(&path, (before - 1) + 1 + 2);
}

/// A crash after the hard link, before the new file was swapped in: the path and `<log>.1`
/// are the same file, which ends with the end record.
#[test]
fn a_rotation_cut_short_after_the_link_is_finished_by_the_next_append() {
    let dir = tempdir();
    let (path, before) = rotate_once_and_undo_the_rename(dir.path());
    std::fs::hard_link(rotated(&path, 1), &path).unwrap_or_else(|e| panic!("{e}"));
    // Untampered, so `verify` says so even before any writer finished the rotation.
    assert_eq!(verify(&path).map(|r| r.broken).ok(), Some(None));
    // A temporary file left half-written by the crash is simply replaced.
    std::fs::write(dir.path().join("audit.jsonl.rotating"), "garbage")
        .unwrap_or_else(|e| panic!("{e}"));

    let log = open(&path, ROTATE);
    append(&log, 1, 0);
    // Two `fdatasync`s of the log: the ended file first (its writer died before its own sync
    // returned, as far as this writer can tell), then the new record.
    assert_eq!(log.completed_syncs(), 2);
    assert!(!rotated(&path, 2).exists(), "linked a second time");
    assert!(!dir.path().join("audit.jsonl.rotating").exists());
    assert_intact(&path, (before - 1) + 1 + 2);
}

fn log_with_rotations(dir: &Path, rotations: usize) -> PathBuf {
    let path = dir.join("audit.jsonl");
    let log = open(&path, ROTATE);
    let mut n = 0;
    while chain_files(&path).len() <= rotations {
        append(&log, 0, n);
        n += 1;
    }
    path
}

#[test]
fn verify_reports_a_removed_rotated_file() {
    let dir = tempdir();
    let path = log_with_rotations(dir.path(), 3);
    std::fs::remove_file(rotated(&path, 2)).unwrap_or_else(|e| panic!("{e}"));
    // The chain names its files: `.3` continues `.2`, which is gone.
    let (file, line, why) = broken(&path);
    assert_eq!((file, line), (rotated(&path, 3), 1));
    assert!(
        why.contains("continues 'audit.jsonl.2', which is missing"),
        "{why}"
    );
}

#[test]
fn verify_reports_rotated_files_swapped_by_name() {
    let dir = tempdir();
    let path = log_with_rotations(dir.path(), 2);
    // Swapped: the chain reaches `.2` by name, but that file's end record names `.1`.
    let swap = dir.path().join("swap");
    std::fs::rename(rotated(&path, 1), &swap).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(rotated(&path, 2), rotated(&path, 1)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(&swap, rotated(&path, 2)).unwrap_or_else(|e| panic!("{e}"));
    let (file, _, why) = broken(&path);
    assert_eq!(file, rotated(&path, 2));
    assert!(
        why.contains("names 'audit.jsonl.1', not this file"),
        "{why}"
    );
}

#[test]
fn verify_reports_records_cut_from_the_end_of_a_rotated_file() {
    let dir = tempdir();
    let path = log_with_rotations(dir.path(), 2);
    let first = rotated(&path, 1);
    let text = std::fs::read_to_string(&first).unwrap_or_default();
    let kept: Vec<&str> = text.lines().collect();
    // Whole lines cut: the end record and the record before it.
    let cut = kept.get(..kept.len() - 2).unwrap_or_default().join("\n") + "\n";
    std::fs::write(&first, cut).unwrap_or_else(|e| panic!("{e}"));
    let (file, _, why) = broken(&path);
    assert_eq!(file, first);
    assert!(
        why.contains("must end with its rotation end record"),
        "{why}"
    );
}

#[test]
fn verify_reports_a_rotated_file_that_was_renamed() {
    let dir = tempdir();
    let path = log_with_rotations(dir.path(), 2);
    // `.2` becomes `.3`: the log's first record still names `.2`.
    std::fs::rename(rotated(&path, 2), rotated(&path, 3)).unwrap_or_else(|e| panic!("{e}"));
    let (file, line, why) = broken(&path);
    assert_eq!((file, line), (path.clone(), 1));
    assert!(
        why.contains("continues 'audit.jsonl.2', which is missing"),
        "{why}"
    );
}

#[test]
fn a_caller_cannot_write_a_rotation_marker() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path, ROTATE);
    append(&log, 0, 0);
    let mut forged = record(0, 1);
    forged.insert("rotation".into(), json!("end"));
    forged.insert("rotated_to".into(), json!("audit.jsonl.1"));
    log.append(forged)
        .unwrap_or_else(|e| panic!("append failed: {e}"));
    drop(log);
    // A writer opening the log now reads the forged record as the chain head: were it a
    // real end record, that writer would follow it and link the file to `.1`.
    let log = open(&path, ROTATE);
    append(&log, 0, 2);
    let records = lines(&path);
    assert_eq!(records[1].get("event_rotation"), Some(&json!("end")));
    assert_eq!(records[1].get("rotation"), None);
    assert!(!rotated(&path, 1).exists());
    assert_intact(&path, 3);
}

/// Lines written behind (`append_sync_behind`, `append_then`) are made durable by the
/// background syncer: after a rotation it must sync the new file, not keep the old one.
/// Once a sync after the rotation completed, no descriptor of this process refers to the
/// rotated file any more.
#[test]
fn after_a_rotation_the_background_syncer_syncs_the_new_file() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path, ROTATE);
    let mut n = fill_until(&rotated(&path, 1), 0, |n| {
        log.append_sync_behind(record(0, n))
            .unwrap_or_else(|e| panic!("append failed: {e}"));
    });
    for _ in 0..2 {
        let (tx, rx) = std::sync::mpsc::channel();
        log.append_then(record(1, n), move |r| {
            let _ = tx.send(r);
        })
        .unwrap_or_else(|e| panic!("append failed: {e}"));
        let durable = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert!(matches!(durable, Ok(Ok(()))), "{durable:?}");
        n += 1;
    }
    // By inode: the descriptor was opened under the name the new file took over, so its
    // link text says "(deleted)" while the file lives on as `<log>.1`.
    use std::os::unix::fs::MetadataExt;
    let id = |m: std::fs::Metadata| (m.dev(), m.ino());
    let old = id(std::fs::metadata(rotated(&path, 1)).unwrap_or_else(|e| panic!("{e}")));
    let held: Vec<PathBuf> = std::fs::read_dir("/proc/self/fd")
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|fd| std::fs::metadata(fd).is_ok_and(|m| id(m) == old))
        .collect();
    assert!(held.is_empty(), "the rotated file is still open: {held:?}");
    assert_intact(&path, n + 2);
}

#[test]
fn backups_and_stray_files_beside_the_log_play_no_part() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    // Rotation off: a dated backup and a garbage `.1` do not change what `verify` says.
    let log = open(&path, 0);
    for n in 0..5 {
        append(&log, 0, n);
    }
    std::fs::copy(&path, dir.path().join("audit.jsonl.20261130")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(rotated(&path, 1), "not a log\n").unwrap_or_else(|e| panic!("{e}"));
    let report = verify(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((report.records, report.broken), (5, None));
    assert_eq!(report.files.len(), 1);
    drop(log);
    // Rotation on: the taken `.1` is skipped, the backup's number is not followed.
    let log = open(&path, ROTATE);
    let n = fill_until(&rotated(&path, 2), 5, |n| append(&log, 0, n));
    assert!(!dir.path().join("audit.jsonl.20261131").exists());
    assert_eq!(
        std::fs::read_to_string(rotated(&path, 1)).ok().as_deref(),
        Some("not a log\n")
    );
    let report = verify(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.files, vec![rotated(&path, 2), path.clone()]);
    assert_eq!(report.records, n + 2);
}

#[test]
fn a_log_reached_through_a_symlink_rotates_and_verifies_beside_its_file() {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("real")).unwrap_or_else(|e| panic!("{e}"));
    let real = dir.path().join("real/audit.jsonl");
    std::fs::write(&real, "").unwrap_or_else(|e| panic!("{e}"));
    let link = dir.path().join("audit.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap_or_else(|e| panic!("{e}"));
    let log = open(&link, ROTATE);
    let n = fill_until(&rotated(&real, 1), 0, |n| append(&log, 0, n));
    assert!(std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()));
    let report = verify(&link).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.records, n + 2);
}

#[test]
fn a_rotated_file_keeps_the_logs_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path, ROTATE);
    append(&log, 0, 0);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640))
        .unwrap_or_else(|e| panic!("{e}"));
    fill_until_rotated(&log, &path);
    let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777);
    assert_eq!(mode.ok(), Some(0o640));
}

/// The new file keeps the log's owner and group too (an operator's chown survives). Only
/// root may give a file away, so this runs as root and says so elsewhere.
#[test]
fn a_rotated_file_keeps_the_logs_owner() {
    use std::os::unix::fs::MetadataExt;
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED a_rotated_file_keeps_the_logs_owner: only root can chown the log");
        return;
    }
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path, ROTATE);
    append(&log, 0, 0);
    std::os::unix::fs::chown(&path, Some(4242), Some(4343)).unwrap_or_else(|e| panic!("{e}"));
    let before = std::fs::metadata(&path).map(|m| m.ino()).ok();
    fill_until_rotated(&log, &path);
    let meta = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(Some(meta.ino()), before, "the log did not rotate");
    assert_eq!((meta.uid(), meta.gid()), (4242, 4343));
}

/// An end record naming a path outside the log's folder was not written by the log (only
/// someone with write access to the file can put it there): it is refused, nothing is linked.
#[test]
fn an_end_record_naming_another_folder_is_refused() {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("logs")).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("logs/audit.jsonl");
    let log = open(&path, ROTATE);
    append(&log, 0, 0);
    drop(log);
    let last = lines(&path).pop().unwrap_or_default();
    let forged = json!({
        "rotation": "end",
        "rotated_to": "../escaped",
        "seq": 2,
        "prev": last.get("hash").cloned().unwrap_or_default(),
        "ts": "2026-11-30T10:00:00.000000Z",
    });
    let Value::Object(forged) = forged else {
        unreachable!("a JSON object")
    };
    let mut text = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
    text.extend_from_slice(format!("{}\n", hashed_line(forged)).as_bytes());
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    // The forged record is a well-formed link of the chain: only its target is wrong.
    assert_eq!(verify(&path).map(|r| r.broken).ok(), Some(None));

    let log = open(&path, ROTATE);
    let err = log.append(record(0, 1)).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("names '../escaped', not a rotated file")),
        "{err:?}"
    );
    assert!(!dir.path().join("escaped").exists());
}

/// `verify` while a writer keeps rotating: never a false "broken" (it reads the log through
/// one handle, up to the length it had under a shared `flock`).
#[test]
fn verify_during_rotations_sees_an_intact_chain() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = Arc::new(open(&path, ROTATE));
    append(&log, 0, 0);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (log, stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 1;
            // A bounded writer: enough rotations to race with, not thousands of files.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 600 {
                log.append_sync_behind(record(0, n))
                    .unwrap_or_else(|e| panic!("append failed: {e}"));
                n += 1;
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        })
    };
    let mut runs = 0;
    while runs < 40 || chain_files(&path).len() < 6 {
        let report = verify(&path).unwrap_or_else(|e| panic!("verify: {e}"));
        assert_eq!(report.broken, None, "run {runs}: {report:?}");
        runs += 1;
        assert!(runs < 5000, "the writer never rotated");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer
        .join()
        .unwrap_or_else(|_| panic!("the writer panicked"));
}

/// Deleting (or emptying) the live log starts a fresh chain at its path; the rotated files
/// it leaves behind would then go unchecked. `verify` reports them.
#[test]
fn verify_reports_rotated_files_the_chain_no_longer_reaches() {
    let dir = tempdir();
    let path = log_with_rotations(dir.path(), 2);
    std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let log = open(&path, ROTATE);
    append(&log, 1, 0);
    let (file, _, why) = broken(&path);
    assert!(
        file == rotated(&path, 1) || file == rotated(&path, 2),
        "{file:?}"
    );
    assert!(why.contains("its chain does not reach"), "{why}");
}

/// A symlink planted at the temporary name is removed, not written through.
#[test]
fn a_symlink_at_the_temporary_name_is_not_followed() {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("logs")).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("logs/audit.jsonl");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "untouched\n").unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&victim, dir.path().join("logs/audit.jsonl.rotating"))
        .unwrap_or_else(|e| panic!("{e}"));
    let log = open(&path, ROTATE);
    fill_until_rotated(&log, &path);
    assert_eq!(
        std::fs::read_to_string(&victim).ok().as_deref(),
        Some("untouched\n")
    );
    assert!(std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file()));
    assert_eq!(verify(&path).map(|r| r.broken).ok(), Some(None));
}

/// A rotation step that fails fails the append, with an error naming the step; every later
/// append retries it, and once the obstacle is gone the rotation completes, chain intact.
#[test]
fn a_failed_rotation_step_fails_the_append_and_the_next_one_retries_it() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    // A folder where the new file is prepared: it cannot be removed as a leftover file.
    let obstacle = dir.path().join("audit.jsonl.rotating");
    std::fs::create_dir(&obstacle).unwrap_or_else(|e| panic!("{e}"));
    let log = open(&path, ROTATE);
    let mut n = 0;
    let error = loop {
        match log.append(record(0, n)) {
            Ok(()) => n += 1,
            Err(e) => break e.to_string(),
        }
        assert!(n < 1000, "never rotated");
    };
    assert!(error.contains("rotating it to 'audit.jsonl.1'"), "{error}");
    let again = log.append(record(0, n)).map_err(|e| e.to_string());
    assert!(
        again
            .as_ref()
            .is_err_and(|e| e.contains("rotating it to 'audit.jsonl.1'")),
        "{again:?}"
    );
    std::fs::remove_dir(&obstacle).unwrap_or_else(|e| panic!("{e}"));
    append(&log, 0, n);
    assert!(rotated(&path, 1).exists());
    // The records before the failure, the end and start records, and the last one.
    assert_intact(&path, n + 3);
}
