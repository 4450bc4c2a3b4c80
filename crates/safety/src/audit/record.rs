//! One record's line: the canonical JSON the hash is taken over, the line written with
//! `hash` as its last member, and the check of a line on its own (well-formed chain fields,
//! hash right, bytes exactly what a writer writes).
//!
//! Both the writer and [`verify`](fn@super::verify) go through here, so a line the writer
//! writes is the line the check accepts.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// `prev` of the first record.
pub const GENESIS_PREV: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The record's line (canonical JSON with `seq`, `ts`, `prev`, then `hash` last, and a
/// newline) into `out`; returns the hash.
pub(super) fn chained_line(
    record: &Map<String, Value>,
    seq: u64,
    ts: &str,
    prev: &str,
    out: &mut Vec<u8>,
) -> String {
    canonical_record(record, seq, ts, prev, out);
    let hash = hex::encode(Sha256::digest(&*out));
    // The canonical text ends with the object's `}`: put `hash` before it, last.
    out.pop();
    out.extend_from_slice(b",\"hash\":\"");
    out.extend_from_slice(hash.as_bytes());
    out.extend_from_slice(b"\"}\n");
    hash
}

pub(super) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// The chain fields of a record that checked out on its own.
pub(super) struct CheckedRecord {
    pub(super) seq: u64,
    pub(super) prev: String,
    pub(super) hash: String,
    pub(super) rotation: Option<Rotation>,
    /// A record written by a writer that found the log replaced under it: what it found.
    pub(super) replaced: Option<String>,
    /// A checkpoint record (checked only with a key).
    pub(super) checkpoint: Option<CheckpointMembers>,
}

/// The members of a checkpoint record as written: the signed note, and the plain copies of
/// what it says (which must agree with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CheckpointMembers {
    pub(super) note: String,
    pub(super) size: Option<u64>,
    pub(super) head: Option<String>,
    pub(super) every: Option<u64>,
    /// The record's `ts`.
    pub(super) ts: String,
    /// Nothing else in the record or its `checkpoint` member: a checkpoint's note signs only
    /// what the note says, so anything added beside it would pass unsigned.
    pub(super) exact: bool,
}

/// A record the log writes when it rotates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Rotation {
    /// The last record of a file that was rotated: `rotated_to` is its new name.
    End(String),
    /// The first record of the file that follows: `previous_file` names the rotated one.
    Start(String),
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a line is not a record that checks out on its own (what `verify` reports for it).
#[derive(Debug, thiserror::Error)]
pub(super) enum RecordError {
    /// Nothing between two newlines.
    #[error("empty line")]
    Empty,
    /// Not JSON at all.
    #[error("not a JSON record ({0})")]
    NotJson(serde_json::Error),
    /// JSON, but not an object.
    #[error("not a JSON object")]
    NotObject,
    /// `hash` is not a SHA-256 in lower-case hex.
    #[error("field 'hash' is not 64 lower-case hex digits")]
    BadHash,
    /// No `hash`.
    #[error("field 'hash' is missing")]
    NoHash,
    /// No `seq`, or not a positive integer.
    #[error("field 'seq' is missing or not a positive integer")]
    BadSeq,
    /// No `prev`, or not a SHA-256 in lower-case hex.
    #[error("field 'prev' is missing or not 64 lower-case hex digits")]
    BadPrev,
    /// No `ts`, or not an RFC 3339 time.
    #[error("field 'ts' is missing or not an RFC 3339 time")]
    BadTs,
    /// A `rotation` field without the one name its kind needs.
    #[error("malformed rotation record")]
    BadRotation,
    /// A `replaced` field that is not a string with its `found` beside it.
    #[error("malformed replaced record")]
    BadReplaced,
    /// The content does not hash to the record's `hash`.
    #[error("record was edited: its hash is {hash} but its content hashes to {computed}")]
    Edited {
        /// The `hash` the line carries.
        hash: String,
        /// What its content hashes to.
        computed: String,
    },
    /// The content hashes right, but the bytes are not what a writer writes (reformatted,
    /// a key given twice).
    #[error("record was edited: its bytes are not the canonical form of its content")]
    NotCanonical,
}

/// Check one line (without its newline) on its own: JSON object, chain fields present and
/// well-formed, `hash` right, and the bytes exactly what the writer would have written.
pub(super) fn check_line(line: &[u8]) -> Result<CheckedRecord, RecordError> {
    if line.is_empty() {
        return Err(RecordError::Empty);
    }
    let value: Value = serde_json::from_slice(line).map_err(RecordError::NotJson)?;
    let Value::Object(mut map) = value else {
        return Err(RecordError::NotObject);
    };
    let hash = match map.remove("hash") {
        Some(Value::String(h)) if is_hex64(&h) => h,
        Some(_) => return Err(RecordError::BadHash),
        None => return Err(RecordError::NoHash),
    };
    let seq = match map.get("seq").and_then(Value::as_u64) {
        Some(seq) if seq > 0 => seq,
        _ => return Err(RecordError::BadSeq),
    };
    let prev = match map.get("prev") {
        Some(Value::String(p)) if is_hex64(p) => p.clone(),
        _ => return Err(RecordError::BadPrev),
    };
    match map.get("ts").and_then(Value::as_str) {
        Some(ts) if chrono::DateTime::parse_from_rfc3339(ts).is_ok() => {}
        _ => return Err(RecordError::BadTs),
    }
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
    let rotation = match map.get("rotation") {
        None => None,
        Some(kind) => match (kind.as_str(), text("rotated_to"), text("previous_file")) {
            (Some("end"), Some(name), None) => Some(Rotation::End(name)),
            (Some("start"), None, Some(name)) => Some(Rotation::Start(name)),
            _ => return Err(RecordError::BadRotation),
        },
    };
    let replaced = match (map.get("replaced"), text("found")) {
        (None, _) => None,
        (Some(Value::String(_)), Some(found)) => Some(found),
        _ => return Err(RecordError::BadReplaced),
    };
    let exact = |object: &Map<String, Value>, keys: &[&str]| {
        object.len() == keys.len() && keys.iter().all(|k| object.contains_key(*k))
    };
    let checkpoint = map.get("checkpoint").map(|c| CheckpointMembers {
        ts: text("ts").unwrap_or_default(),
        exact: exact(&map, &["seq", "ts", "prev", "checkpoint"])
            && c.as_object()
                .is_some_and(|c| exact(c, &["size", "head", "every", "note"])),
        note: c
            .get("note")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        size: c.get("size").and_then(Value::as_u64),
        head: c.get("head").and_then(Value::as_str).map(str::to_string),
        every: c.get("every").and_then(Value::as_u64),
    });
    let mut canonical = Vec::with_capacity(line.len());
    canonical_json(&Value::Object(map), &mut canonical);
    let computed = hex::encode(Sha256::digest(&canonical));
    if computed != hash {
        return Err(RecordError::Edited { hash, computed });
    }
    // Same content, different bytes (reformatted, a duplicate key added): still an edit.
    canonical.pop();
    canonical.extend_from_slice(b",\"hash\":\"");
    canonical.extend_from_slice(hash.as_bytes());
    canonical.extend_from_slice(b"\"}");
    if canonical != line {
        return Err(RecordError::NotCanonical);
    }
    Ok(CheckedRecord {
        seq,
        prev,
        hash,
        rotation,
        replaced,
        checkpoint,
    })
}

/// The canonical JSON of `record` with the chain fields `seq`, `ts` and `prev` added: the
/// same bytes as [`canonical_json`] of the record with those three keys inserted (a caller's
/// field of those names was renamed before), without building that record.
fn canonical_record(
    record: &Map<String, Value>,
    seq: u64,
    ts: &str,
    prev: &str,
    out: &mut Vec<u8>,
) {
    let mut members: Vec<(&str, Member<'_>)> = record
        .iter()
        .map(|(k, v)| (k.as_str(), Member::Value(v)))
        .collect();
    members.push(("seq", Member::Seq(seq)));
    members.push(("ts", Member::Text(ts)));
    members.push(("prev", Member::Text(prev)));
    write_object(members, out);
}

/// A member of an object being written canonically.
enum Member<'a> {
    Value(&'a Value),
    Seq(u64),
    Text(&'a str),
}

/// Write an object's members sorted by the bytes of their keys, without blanks.
fn write_object(mut members: Vec<(&str, Member<'_>)>, out: &mut Vec<u8>) {
    members.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out.push(b'{');
    for (i, (key, member)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_json_string(key, out);
        out.push(b':');
        match member {
            Member::Value(v) => canonical_json(v, out),
            Member::Seq(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Member::Text(t) => write_json_string(t, out),
        }
    }
    out.push(b'}');
}

/// Append the canonical serialisation of `value` to `out` (see the module documentation).
pub fn canonical_json(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(
            map.iter()
                .map(|(k, v)| (k.as_str(), Member::Value(v)))
                .collect(),
            out,
        ),
    }
}

fn write_json_string(s: &str, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail, and a &str always serialises.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_level_and_has_no_blanks() {
        let value = serde_json::json!({"b": 1, "a": {"z": [true, null, "x\"y"], "c": 2.5}});
        let mut out = Vec::new();
        canonical_json(&value, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            r#"{"a":{"c":2.5,"z":[true,null,"x\"y"]},"b":1}"#
        );
    }

    #[test]
    fn canonical_record_is_canonical_json_of_the_record_with_the_chain_fields() {
        // Keys that sort before, between and after `prev`, `seq` and `ts`, a renamed caller
        // field, nesting, escapes and a large sequence number.
        let record = serde_json::json!({
            "zeta": [1, {"b": 2, "a": "\u{1}\"x"}], "tool": "run_command", "a": null,
            "event_seq": 7, "q": "é", "sequence": true, "p": 1.5, "prevalent": "x", "u": {}
        });
        let Value::Object(record) = record else {
            panic!("not an object")
        };
        let (seq, ts, prev) = (u64::MAX, "2026-11-30T07:00:00.000001Z", GENESIS_PREV);
        let mut ours = Vec::new();
        canonical_record(&record, seq, ts, prev, &mut ours);
        let mut merged = record.clone();
        merged.insert("seq".into(), Value::from(seq));
        merged.insert("ts".into(), Value::from(ts));
        merged.insert("prev".into(), Value::from(prev));
        let mut expected = Vec::new();
        canonical_json(&Value::Object(merged), &mut expected);
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&expected)
        );
    }

    #[test]
    fn genesis_is_64_zeros() {
        assert!(is_hex64(GENESIS_PREV));
        assert!(GENESIS_PREV.bytes().all(|b| b == b'0'));
    }
}
