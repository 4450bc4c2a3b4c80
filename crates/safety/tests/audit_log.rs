//! Audit log: chained, redacted, durable records; `verify` names the first broken record for
//! every kind of tampering; the log fails closed when it really cannot be written.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use crate::audit_common::{hashed_line, lines, parse, redactor, tempdir};
use safety::audit::{AuditError, AuditLog, GENESIS_PREV, verify};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

fn open(path: &Path) -> AuditLog {
    match AuditLog::open(path, redactor()) {
        Ok(log) => log,
        Err(e) => panic!("open failed: {e}"),
    }
}

fn record(n: u64) -> Map<String, Value> {
    match json!({"tool": "run_command", "args": {"command": format!("echo {n}")}, "code": "OK", "duration_ms": n})
    {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn append(log: &AuditLog, n: u64) {
    if let Err(e) = log.append(record(n)) {
        panic!("append failed: {e}");
    }
}

fn log_with(dir: &Path, records: u64) -> PathBuf {
    let path = dir.join("audit.jsonl");
    let log = open(&path);
    for n in 1..=records {
        append(&log, n);
    }
    path
}

fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn records_are_chained_with_seq_ts_prev_and_hash() {
    let dir = tempdir();
    let path = log_with(dir.path(), 3);
    let lines = lines(&path);
    assert_eq!(lines.len(), 3);
    let mut prev = GENESIS_PREV.to_string();
    for (i, line) in lines.iter().enumerate() {
        let rec = parse(line);
        assert_eq!(rec["seq"], (i + 1) as u64);
        assert_eq!(rec["prev"], prev.as_str());
        let ts = rec["ts"].as_str().unwrap_or_default();
        assert!(chrono::DateTime::parse_from_rfc3339(ts).is_ok(), "ts {ts}");
        assert!(ts.ends_with('Z'), "ts is UTC: {ts}");
        // hash == sha256(the line without its trailing `,"hash":"..."` member)
        let hash = rec["hash"].as_str().unwrap_or_default().to_string();
        let suffix = format!(",\"hash\":\"{hash}\"}}");
        let without = format!(
            "{}}}",
            line.strip_suffix(&suffix)
                .unwrap_or_else(|| panic!("hash not last: {line}"))
        );
        assert_eq!(hex::encode(Sha256::digest(without.as_bytes())), hash);
        prev = hash;
    }
    assert_eq!(
        verify(&path).ok(),
        Some(safety::audit::VerifyReport {
            records: 3,
            broken: None,
            files: vec![path.clone()],
            file: None,
            signed: None,
        })
    );
}

#[test]
fn reopening_continues_the_chain() {
    let dir = tempdir();
    let path = log_with(dir.path(), 2);
    let log = open(&path);
    append(&log, 3);
    let lines = lines(&path);
    assert_eq!(parse(&lines[2])["seq"], 3);
    assert_eq!(parse(&lines[2])["prev"], parse(&lines[1])["hash"]);
    assert_eq!(
        verify(&path).map(|r| (r.records, r.broken)).ok(),
        Some((3, None))
    );
}

#[test]
fn every_string_is_redacted_before_it_is_written() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path);
    let rec = match json!({
        "args": {"command": "curl -H 'Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c' x"},
        "env": {"GITHUB_TOKEN": "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"},
        "output": ["AKIAIOSFODNN7EXAMPLE"]
    }) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Err(e) = log.append(rec) {
        panic!("{e}");
    }
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(!text.contains("4f9a8b7c6d5e"), "{text}");
    assert!(!text.contains("ghp_u8jz"), "{text}");
    assert!(!text.contains("AKIAIOSF"), "{text}");
    assert!(text.contains("[REDACTED:"), "{text}");
    assert_eq!(verify(&path).map(|r| r.broken).ok(), Some(None));
}

#[test]
fn caller_fields_cannot_overwrite_chain_fields() {
    // Attack: a record that brings its own `seq`/`prev`/`hash` to splice a forged chain.
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path);
    let rec = match json!({"seq": 99, "prev": "forged", "hash": "forged", "ts": "yesterday", "tool": "x"})
    {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Err(e) = log.append(rec) {
        panic!("{e}");
    }
    let rec = parse(&lines(&path)[0]);
    assert_eq!(rec["seq"], 1);
    assert_eq!(rec["prev"], GENESIS_PREV);
    assert_eq!(rec["event_seq"], 99);
    assert_eq!(rec["event_hash"], "forged");
    assert_eq!(verify(&path).map(|r| r.broken).ok(), Some(None));
}

#[test]
fn concurrent_appends_from_threads_keep_one_chain() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = Arc::new(open(&path));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for n in 0..25 {
                    append(&log, t * 100 + n);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap_or_else(|_| panic!("thread panicked"));
    }
    assert_eq!(
        verify(&path).map(|r| (r.records, r.broken)).ok(),
        Some((200, None))
    );
}

#[test]
fn two_writers_on_one_file_keep_one_chain() {
    // The terminal and files servers share the log: each append re-reads the chain head.
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let a = open(&path);
    let b = open(&path);
    for n in 0..10 {
        append(&a, n);
        append(&b, n);
        append(&b, n);
    }
    assert_eq!(
        verify(&path).map(|r| (r.records, r.broken)).ok(),
        Some((30, None))
    );
}

fn broken_at(path: &Path) -> (u64, String) {
    match verify(path) {
        Ok(report) => report
            .broken
            .clone()
            .unwrap_or_else(|| panic!("not detected: {report:?}")),
        Err(e) => panic!("verify failed: {e}"),
    }
}

#[test]
fn verify_reports_an_edited_record() {
    let dir = tempdir();
    let path = log_with(dir.path(), 5);
    let mut lines = lines(&path);
    lines[2] = lines[2].replace("echo 3", "echo 4");
    write_lines(&path, &lines);
    let (line, why) = broken_at(&path);
    assert_eq!(line, 3);
    assert!(why.contains("edited"), "{why}");
    assert_eq!(verify(&path).map(|r| r.records).ok(), Some(2));
}

#[test]
fn verify_reports_an_edited_record_whose_hash_was_recomputed() {
    // Attack: edit a record and fix its own hash; the next record's prev no longer matches.
    let dir = tempdir();
    let path = log_with(dir.path(), 4);
    let mut lines = lines(&path);
    let mut rec = parse(&lines[1]);
    rec.insert("code".to_string(), json!("POLICY_DENIED"));
    rec.remove("hash");
    lines[1] = hashed_line(rec);
    write_lines(&path, &lines);
    let (line, why) = broken_at(&path);
    assert_eq!(line, 3);
    assert!(why.contains("prev"), "{why}");
}

#[test]
fn verify_reports_a_reformatted_record() {
    let dir = tempdir();
    let path = log_with(dir.path(), 3);
    let mut lines = lines(&path);
    lines[1] = lines[1].replacen(',', ", ", 1);
    write_lines(&path, &lines);
    let (line, why) = broken_at(&path);
    assert_eq!(line, 2);
    assert!(why.contains("edited"), "{why}");
}

#[test]
fn verify_reports_a_deleted_record() {
    let dir = tempdir();
    let path = log_with(dir.path(), 5);
    let mut lines = lines(&path);
    lines.remove(2);
    write_lines(&path, &lines);
    let (line, why) = broken_at(&path);
    assert_eq!(line, 3);
    assert!(why.contains("deleted"), "{why}");
}

#[test]
fn verify_reports_a_deleted_first_record() {
    let dir = tempdir();
    let path = log_with(dir.path(), 3);
    let mut lines = lines(&path);
    lines.remove(0);
    write_lines(&path, &lines);
    let (line, why) = broken_at(&path);
    assert_eq!(line, 1);
    assert!(why.contains("deleted"), "{why}");
}

#[test]
fn verify_reports_reordered_records() {
    let dir = tempdir();
    let path = log_with(dir.path(), 5);
    let mut lines = lines(&path);
    lines.swap(1, 3);
    write_lines(&path, &lines);
    let (line, why) = broken_at(&path);
    assert_eq!(line, 2);
    assert!(why.contains("out of order"), "{why}");
    assert!(why.contains("seq 2 is at line 4"), "{why}");
}

#[test]
fn verify_reports_a_cut_off_tail() {
    let dir = tempdir();
    let path = log_with(dir.path(), 4);
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{e}"));
    file.set_len(len - 20).unwrap_or_else(|e| panic!("{e}"));
    let (line, why) = broken_at(&path);
    assert_eq!(line, 4);
    assert!(why.contains("cut-off"), "{why}");
    assert_eq!(verify(&path).map(|r| r.records).ok(), Some(3));
}

#[test]
fn verify_reports_an_unparsable_last_line() {
    let dir = tempdir();
    let path = log_with(dir.path(), 2);
    let mut lines = lines(&path);
    let cut = lines[1].len() / 2;
    lines[1].truncate(cut);
    write_lines(&path, &lines);
    let (line, why) = broken_at(&path);
    assert_eq!(line, 2);
    assert!(why.contains("not a JSON record"), "{why}");
}

#[test]
fn verify_of_a_missing_file_is_an_io_error() {
    let dir = tempdir();
    assert!(verify(&dir.path().join("nope.jsonl")).is_err());
}

#[test]
fn open_refuses_a_log_with_a_cut_off_tail() {
    let dir = tempdir();
    let path = log_with(dir.path(), 3);
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{e}"));
    file.set_len(len - 1).unwrap_or_else(|e| panic!("{e}"));
    match AuditLog::open(&path, redactor()) {
        Err(AuditError::Broken { reason, .. }) => assert!(reason.contains("cut off"), "{reason}"),
        other => panic!("expected Broken, got {other:?}"),
    }
}

#[test]
fn open_refuses_a_log_whose_last_record_was_edited() {
    let dir = tempdir();
    let path = log_with(dir.path(), 3);
    let mut lines = lines(&path);
    lines[2] = lines[2].replace("echo 3", "echo 9");
    write_lines(&path, &lines);
    assert!(matches!(
        AuditLog::open(&path, redactor()),
        Err(AuditError::Broken { .. })
    ));
}

/// A test that cannot run here says so loudly, and fails under
/// `STRICT_SANDBOX_TESTS=1` (as in CI).
fn skip(why: &str) {
    let message = format!("SKIPPED: {why}");
    if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
        panic!("{message}");
    }
    eprintln!("\n!!!!!!!! {message} !!!!!!!!\n");
}

/// Removes the immutable flag however the test ends.
struct Immutable(PathBuf);

impl Immutable {
    fn set(path: &Path) -> Option<Self> {
        let ok = Command::new("chattr")
            .arg("+i")
            .arg(path)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Immutable(path.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).output();
    }
}

#[test]
fn an_immutable_log_cannot_be_opened_or_appended_to() {
    // Fail-closed: the log really cannot be written (as root, `chattr +i`).
    let dir = tempdir();
    let path = log_with(dir.path(), 1);
    let log = open(&path);
    let Some(_guard) = Immutable::set(&path) else {
        skip("chattr +i is not available here; the ENOTDIR test covers the unwritable case");
        return;
    };
    // Already open: the next append fails and says why.
    match log.append(record(2)) {
        Err(AuditError::Io { path: p, source }) => {
            assert_eq!(p, path);
            assert_eq!(
                source.kind(),
                std::io::ErrorKind::PermissionDenied,
                "{source}"
            );
        }
        other => panic!("append to an immutable log succeeded or failed oddly: {other:?}"),
    }
    // Not yet open: open fails.
    match AuditLog::open(&path, redactor()) {
        Err(AuditError::Io { .. }) => {}
        other => panic!("open of an immutable log: {other:?}"),
    }
    drop(_guard);
    // Nothing was half-written: the chain still verifies.
    assert_eq!(
        verify(&path).map(|r| (r.records, r.broken)).ok(),
        Some((1, None))
    );
}

#[test]
fn a_log_under_a_regular_file_cannot_be_opened() {
    // Fail-closed without root: `<tmp>/file/audit.jsonl` fails with ENOTDIR for everyone.
    let dir = tempdir();
    let file = dir.path().join("file");
    std::fs::write(&file, b"not a directory").unwrap_or_else(|e| panic!("{e}"));
    let path = file.join("audit.jsonl");
    match AuditLog::open(&path, redactor()) {
        Err(AuditError::Io { path: p, source }) => {
            assert_eq!(p, path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotADirectory, "{source}");
        }
        other => panic!("expected an Io error, got {other:?}"),
    }
}

#[test]
fn a_record_synced_behind_is_in_the_file_when_append_returns_and_chains() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path);
    log.append_sync_behind(record(1)).unwrap();
    // Written before the call returned: a crash of the process now would not lose it.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    log.append(record(2)).unwrap();
    log.append_sync_behind(record(3)).unwrap();
    drop(log); // joins the syncer after its last fdatasync
    let report = verify(&path).unwrap();
    assert_eq!(report.records, 3);
    assert!(report.broken.is_none(), "{:?}", report.broken);
}

#[test]
fn append_then_reports_once_the_line_is_durable() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = Arc::new(open(&path));
    let (tx, rx) = std::sync::mpsc::channel();
    for n in 0..20u64 {
        let tx = tx.clone();
        let path = path.clone();
        let seen = log.clone();
        // Every fdatasync that completed before the line was registered; the callback
        // must come after one more (the one that covers the line).
        let before = log.completed_syncs();
        log.append_then(record(n), move |result| {
            let after = seen.completed_syncs();
            let text = std::fs::read_to_string(&path).unwrap();
            let own_line = text.contains(&format!("\"echo {n}\""));
            tx.send((n, result, after > before, own_line)).unwrap();
        })
        .unwrap();
        if n % 5 == 0 {
            // A durable append in between covers the waiting lines too.
            log.append(record(100 + n)).unwrap();
        }
    }
    drop(tx);
    let mut told = Vec::new();
    while let Ok(msg) = rx.recv_timeout(std::time::Duration::from_secs(10)) {
        told.push(msg);
        if told.len() == 20 {
            break;
        }
    }
    assert_eq!(told.len(), 20, "every waiter is told exactly once");
    for (n, result, synced_since, own_line) in &told {
        assert!(result.is_ok(), "record {n}: {result:?}");
        assert!(
            synced_since,
            "record {n} told before an fdatasync after its line"
        );
        assert!(own_line, "record {n} told before its line was in the file");
    }
    let mut numbers: Vec<u64> = told.iter().map(|t| t.0).collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), 20, "a waiter was told twice or not at all");
    drop(log);
    assert!(verify(&path).unwrap().broken.is_none());
}

#[test]
fn append_then_on_a_log_that_cannot_be_written_fails_without_telling() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path);
    // Make the file unwritable for real: an immutable file refuses even root's writes.
    let Some(guard) = Immutable::set(&path) else {
        skip("chattr +i is not available here; the ENOTDIR test covers the unwritable case");
        return;
    };
    let told = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = told.clone();
    let result = log.append_then(record(1), move |_| {
        flag.store(true, std::sync::atomic::Ordering::SeqCst)
    });
    drop(guard);
    assert!(matches!(result, Err(AuditError::Io { .. })), "{result:?}");
    drop(log);
    assert!(
        !told.load(std::sync::atomic::Ordering::SeqCst),
        "the waiter of a line that was never written must not be called"
    );
}

// ---- The log replaced under a running writer . ----

/// How a test takes the log away from a writer that has it open.
#[derive(Debug, Clone, Copy)]
enum Tamper {
    Renamed,
    Deleted,
    Replaced,
    Truncated,
}

const TAMPERS: [Tamper; 4] = [
    Tamper::Renamed,
    Tamper::Deleted,
    Tamper::Replaced,
    Tamper::Truncated,
];

impl Tamper {
    fn apply(self, path: &Path) {
        match self {
            Tamper::Renamed => std::fs::rename(path, path.with_extension("moved")),
            Tamper::Deleted => std::fs::remove_file(path),
            Tamper::Replaced => std::fs::remove_file(path).and_then(|()| std::fs::write(path, "")),
            Tamper::Truncated => std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(0)),
        }
        .unwrap_or_else(|e| panic!("{self:?}: {e}"));
    }

    /// The `replaced` kind the writer must report.
    fn kind(self) -> &'static str {
        match self {
            Tamper::Renamed => "renamed",
            Tamper::Deleted => "deleted",
            Tamper::Replaced => "replaced",
            Tamper::Truncated => "truncated",
        }
    }
}

#[test]
fn a_log_taken_away_under_the_writer_fails_every_later_append() {
    for tamper in TAMPERS {
        let dir = tempdir();
        let path = dir.path().join("audit.jsonl");
        let log = open(&path);
        append(&log, 1);
        append(&log, 2);
        tamper.apply(&path);
        let before = std::fs::read(&path).ok();
        for n in 3..5 {
            match log.append(record(n)) {
                Err(AuditError::Replaced { found, .. }) => {
                    assert!(found.starts_with(tamper.kind()), "{tamper:?}: {found}")
                }
                other => panic!("{tamper:?}: append {n} should fail closed, got {other:?}"),
            }
        }
        // Nothing was written anywhere: not to the file at the path (nor one created there),
        // not to the file the writer still has open.
        assert_eq!(std::fs::read(&path).ok(), before, "{tamper:?}");
        if let Tamper::Renamed = tamper {
            let moved = std::fs::read_to_string(path.with_extension("moved")).unwrap();
            assert_eq!(moved.lines().count(), 2, "{tamper:?}");
        }
    }
}

#[test]
fn with_reopen_the_new_file_starts_with_a_record_explaining_the_gap() {
    for tamper in TAMPERS {
        let dir = tempdir();
        let path = dir.path().join("audit.jsonl");
        let log = open(&path).reopen_when_replaced(true);
        append(&log, 1);
        append(&log, 2);
        tamper.apply(&path);
        append(&log, 3);
        append(&log, 4);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<_> = text.lines().map(parse).collect();
        assert_eq!(lines.len(), 3, "{tamper:?}: {text}");
        let event = &lines[0];
        assert_eq!(event["replaced"], tamper.kind(), "{tamper:?}: {text}");
        assert_eq!(event["previous_seq"], 2, "{tamper:?}");
        assert_eq!(event["old_size_left"].as_u64().map(|n| n > 0), Some(true));
        // Chained to the last record written before: seq goes on, so the gap shows.
        assert_eq!(event["seq"], 3, "{tamper:?}");
        assert_eq!(lines[1]["duration_ms"], 3);
        assert_eq!(lines[2]["seq"], 5);
        let report = verify(&path).unwrap();
        let (line, why) = report
            .broken
            .unwrap_or_else(|| panic!("{tamper:?}: verify said ok"));
        assert_eq!(line, 1, "{tamper:?}");
        assert!(
            why.contains(&format!("the log was {}", tamper.kind()))
                && why.contains("while a server wrote it"),
            "{tamper:?}: {why}"
        );
    }
}

#[test]
fn with_reopen_a_log_cut_mid_line_gets_its_explanation_on_a_line_of_its_own() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path).reopen_when_replaced(true);
    append(&log, 1);
    append(&log, 2);
    let first_len = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .len()
        + 1;
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(first_len as u64 + 10).unwrap();
    append(&log, 3);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[1].len(), 10, "the cut line stays as it was: {text}");
    assert_eq!(parse(lines[2])["replaced"], "truncated");
    // The cut line is the first break verify reports (records were lost there).
    let (line, _) = verify(&path).unwrap().broken.unwrap();
    assert_eq!(line, 2);
}

#[test]
fn two_writers_sharing_a_replaced_log_explain_it_once() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let a = open(&path).reopen_when_replaced(true);
    let b = open(&path).reopen_when_replaced(true);
    append(&a, 1);
    append(&b, 2);
    Tamper::Deleted.apply(&path);
    append(&a, 3);
    append(&b, 4);
    let text = std::fs::read_to_string(&path).unwrap();
    let events = text.lines().filter(|l| l.contains("\"replaced\"")).count();
    assert_eq!(events, 1, "{text}");
    assert_eq!(text.lines().count(), 3, "{text}");
    // After the explained break, the chain is whole: b continued a's.
    let lines: Vec<_> = text.lines().map(parse).collect();
    assert_eq!(lines[2]["prev"], lines[1]["hash"]);
    assert_eq!(lines[2]["seq"], 5);
}

#[test]
fn a_caller_field_named_replaced_cannot_forge_the_explanation() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let log = open(&path);
    let mut forged = record(1);
    forged.insert("replaced".into(), json!("deleted"));
    forged.insert("found".into(), json!("nothing"));
    log.append(forged).unwrap();
    let line = parse(
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    );
    assert!(line.get("replaced").is_none());
    assert_eq!(line["event_replaced"], "deleted");
    assert_eq!(verify(&path).unwrap().broken, None);
}

#[test]
fn a_log_whose_folder_is_missing_says_so() {
    let dir = tempdir();
    let path = dir.path().join("no-such-folder/audit.jsonl");
    match AuditLog::open(&path, redactor()) {
        Err(e @ AuditError::NoFolder { .. }) => {
            assert!(
                e.to_string().contains("no-such-folder' does not exist"),
                "{e}"
            )
        }
        other => panic!("expected NoFolder, got {other:?}"),
    }
}
