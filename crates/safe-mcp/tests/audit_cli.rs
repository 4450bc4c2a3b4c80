//! `safe-mcp audit verify FILE`: exit 0 and `ok: N records` when intact, exit 1 naming the
//! first broken record, exit 2 when the file cannot be read.

use std::process::Command;
use std::sync::Arc;

use safety::audit::AuditLog;
use safety::redact::{RedactionSettings, Redactor};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

fn write_log(path: &std::path::Path, records: usize) {
    let redactor = Arc::new(Redactor::new(&RedactionSettings::default()).unwrap());
    let log = AuditLog::open(path, redactor).unwrap();
    for n in 0..records {
        let mut map = serde_json::Map::new();
        map.insert("event".into(), json!("outcome"));
        map.insert("n".into(), json!(n));
        log.append(map).unwrap();
    }
}

fn verify(path: &std::path::Path) -> (i32, String) {
    let out = Command::new(BIN)
        .args(["audit", "verify"])
        .arg(path)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn intact_log_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 5);
    assert_eq!(verify(&path), (0, "ok: 5 records\n".to_string()));
    // The count agrees with its noun.
    let one = dir.path().join("one.jsonl");
    write_log(&one, 1);
    assert_eq!(verify(&one), (0, "ok: 1 record\n".to_string()));
}

#[test]
fn a_rotated_log_verifies_as_one_chain_and_a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let redactor = Arc::new(Redactor::new(&RedactionSettings::default()).unwrap());
    let log = AuditLog::open(&path, redactor).unwrap().rotate_at(4096);
    for n in 0..100 {
        let mut map = serde_json::Map::new();
        map.insert("event".into(), json!("outcome"));
        map.insert("n".into(), json!(n));
        log.append(map).unwrap();
    }
    drop(log);
    let (code, out) = verify(&path);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("ok: ") && out.contains(" files ("), "{out}");
    let second = dir.path().join("audit.jsonl.2");
    std::fs::remove_file(&second).unwrap();
    let (code, out) = verify(&path);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with(&format!("broken: {}.3 record 1: ", path.display())),
        "{out}"
    );
}

#[test]
fn edited_record_is_named_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 5);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen("\"n\":2", "\"n\":7", 1);
    assert_ne!(text, edited);
    std::fs::write(&path, edited).unwrap();
    let (code, out) = verify(&path);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("record 3"), "{out}");
}

#[test]
fn deleted_and_reordered_records_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 5);
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let deleted: Vec<&String> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, l)| l)
        .collect();
    std::fs::write(
        &path,
        deleted.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let (code, out) = verify(&path);
    assert_eq!(code, 1);
    assert!(out.contains("record 2"), "{out}");
    let mut swapped = lines.clone();
    swapped.swap(2, 3);
    std::fs::write(
        &path,
        swapped.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let (code, out) = verify(&path);
    assert_eq!(code, 1);
    assert!(out.contains("record 3"), "{out}");
}

#[test]
fn cut_off_tail_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 3);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 10]).unwrap();
    let (code, out) = verify(&path);
    assert_eq!(code, 1);
    assert!(out.contains("record 3"), "{out}");
}

#[test]
fn unreadable_file_exits_2() {
    let (code, _) = verify(std::path::Path::new("/nonexistent/audit.jsonl"));
    assert_eq!(code, 2);
}
