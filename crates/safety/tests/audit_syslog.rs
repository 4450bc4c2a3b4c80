//! `[audit.syslog]` against a real rsyslogd (Debian's package), started on a temporary Unix
//! socket and loopback ports and killed at the end: every record arrives as RFC 5424 with its
//! seq and hash over each transport; rsyslogd killed and restarted loses no local record and
//! the gap is recorded; `required = true` fails the append and keeps the local record.

use std::path::{Path, PathBuf};

use crate::audit_common::{lines, parse, redactor, tempdir};
use crate::rsyslog_daemon::{Rsyslog, free_port};
use safety::audit::{AuditError, AuditLog, verify};
use safety::config::{SyslogSettings, SyslogTransport};
use serde_json::json;

/// A datagram socket in `dir` that was bound and closed: every send to it is refused.
fn socket_nobody_reads(dir: &Path) -> PathBuf {
    let socket = dir.join("nobody.sock");
    std::os::unix::net::UnixDatagram::bind(&socket)
        .map(drop)
        .unwrap();
    socket
}

fn settings(transport: SyslogTransport, address: String, required: bool) -> SyslogSettings {
    SyslogSettings {
        transport,
        address,
        required,
        facility: "local3".to_string(),
    }
}

fn shipping_log(path: &Path, settings: &SyslogSettings) -> AuditLog {
    AuditLog::open(path, redactor())
        .unwrap()
        .with_syslog(settings)
        .unwrap()
}

fn record(text: &str) -> serde_json::Map<String, serde_json::Value> {
    json!({ "tool": "run_command", "command": text })
        .as_object()
        .unwrap()
        .clone()
}

/// `audit [safe-mcp@32473 seq="N" hash="H"] <line>` for the local line.
fn expected(local: &str) -> String {
    let r = parse(local);
    format!(
        "audit [safe-mcp@32473 seq=\"{}\" hash=\"{}\"] {local}",
        r["seq"],
        r["hash"].as_str().unwrap()
    )
}

#[test]
fn every_record_reaches_rsyslog_as_rfc_5424_over_unix_udp_and_tcp() {
    let dir = tempdir();
    let Some(rsyslog) = Rsyslog::start(dir.path(), None) else {
        return;
    };
    let mut shipped = Vec::new();
    for (transport, address) in [
        (
            SyslogTransport::Unix,
            dir.path().join("log.sock").display().to_string(),
        ),
        (SyslogTransport::Udp, format!("127.0.0.1:{}", rsyslog.udp)),
        (SyslogTransport::Tcp, format!("127.0.0.1:{}", rsyslog.tcp)),
    ] {
        let path = dir.path().join(format!("{transport:?}.jsonl"));
        let log = shipping_log(&path, &settings(transport, address, false));
        for n in 0..3 {
            log.append(record(&format!("echo {transport:?} {n}")))
                .unwrap();
        }
        assert_eq!(log.unshipped(), None, "{transport:?}");
        drop(log);
        shipped.extend(lines(&path).iter().map(|l| expected(l)));
    }
    let got = rsyslog.received(shipped.len());
    for line in &shipped {
        assert!(
            got.contains(line),
            "missing in rsyslog's file: {line}\n{got:#?}"
        );
    }
}

#[test]
fn rsyslog_killed_and_restarted_loses_no_local_record_and_the_gap_is_recorded() {
    let dir = tempdir();
    let Some(rsyslog) = Rsyslog::start(dir.path(), None) else {
        return;
    };
    let path = dir.path().join("audit.jsonl");
    let socket = dir.path().join("log.sock").display().to_string();
    let log = shipping_log(&path, &settings(SyslogTransport::Unix, socket, false));
    log.append(record("echo 1")).unwrap();
    log.append(record("echo 2")).unwrap();
    assert_eq!(rsyslog.received(2).len(), 2);
    let ports = rsyslog.kill();
    // The daemon is gone: the records go on into the local log, and the gap is said.
    for n in 3..=5 {
        log.append(record(&format!("echo {n}"))).unwrap();
    }
    let unshipped = log.unshipped().unwrap();
    assert!(unshipped.contains("records 3..=5"), "{unshipped}");
    let rsyslog = Rsyslog::start(dir.path(), Some(ports)).unwrap();
    log.append(record("echo 6")).unwrap();
    assert_eq!(log.unshipped(), None);
    drop(log);
    // Locally: all six, the gap record after the one that went through, one chain.
    let local = lines(&path);
    assert_eq!(local.len(), 7, "{local:#?}");
    let gap = parse(&local[6]);
    assert_eq!(
        (&gap["syslog"], &gap["from_seq"], &gap["to_seq"]),
        (&json!("gap"), &json!(3), &json!(5)),
        "{gap:?}"
    );
    assert_eq!(verify(&path).unwrap().broken, None);
    // In rsyslog: 1, 2, then 6 and the gap record; 3..=5 only locally.
    let got = rsyslog.received(4);
    for i in [0, 1, 5, 6] {
        assert!(got.contains(&expected(&local[i])), "{}\n{got:#?}", local[i]);
    }
    assert!(!got.contains(&expected(&local[2])));
}

#[test]
fn with_required_a_record_not_shipped_fails_its_append_and_stays_in_the_local_log() {
    let dir = tempdir();
    let path = dir.path().join("audit.jsonl");
    let socket = socket_nobody_reads(dir.path());
    let log = shipping_log(
        &path,
        &settings(SyslogTransport::Unix, socket.display().to_string(), true),
    );
    let e = log.append(record("echo 1")).unwrap_err();
    assert!(matches!(e, AuditError::NotShipped { seq: 1, .. }), "{e}");
    assert_eq!(lines(&path).len(), 1, "the local record is kept");
    // And a TCP port nobody listens on.
    let port = free_port();
    let tcp = shipping_log(
        &dir.path().join("tcp.jsonl"),
        &settings(SyslogTransport::Tcp, format!("127.0.0.1:{port}"), true),
    );
    assert!(matches!(
        tcp.append(record("echo 1")),
        Err(AuditError::NotShipped { .. })
    ));
}

#[test]
fn signed_checkpoints_are_shipped_too_and_the_central_copy_verifies() {
    let dir = tempdir();
    let Some(rsyslog) = Rsyslog::start(dir.path(), None) else {
        return;
    };
    let private = dir.path().join("audit.key");
    safety::audit::generate_checkpoint_key("audit", &private, &dir.path().join("audit.pub"))
        .unwrap();
    let path = dir.path().join("audit.jsonl");
    let socket = dir.path().join("log.sock").display().to_string();
    let log = shipping_log(&path, &settings(SyslogTransport::Unix, socket, false))
        .with_checkpoints(safety::audit::CheckpointSigner::load(&private).unwrap(), 2);
    for n in 0..3 {
        log.append(record(&format!("echo {n}"))).unwrap();
    }
    drop(log);
    let local = lines(&path);
    let got = rsyslog.received(local.len());
    assert_eq!(got.len(), local.len(), "{got:#?}");
    let checkpoints: Vec<&String> = got
        .iter()
        .filter(|l| l.starts_with("checkpoint [safe-mcp@32473 "))
        .collect();
    // The opening one, after seq 2 and 4... and the closing one: each a signed note.
    assert!(checkpoints.len() >= 3, "{got:#?}");
    assert!(
        checkpoints
            .iter()
            .all(|l| l.contains("\"note\":\"audit\\n"))
    );
    // The central copy (`%msg%` per line) is the local log line for line, and the verifier
    // checks it there with the public key alone.
    let copy = dir.path().join("copy.jsonl");
    assert_eq!(lines(&copy), local);
    let key = safety::audit::CheckpointVerifier::load(&dir.path().join("audit.pub")).unwrap();
    let report = safety::audit::verify_signed(&copy, Some(&key)).unwrap();
    assert_eq!(report.broken, None);
    assert_eq!(report.signed.unwrap().covered, report.records);
}

#[test]
fn rotation_records_are_shipped_and_a_required_outage_during_rotation_keeps_the_chain() {
    let dir = tempdir();
    let Some(rsyslog) = Rsyslog::start(dir.path(), None) else {
        return;
    };
    let socket = dir.path().join("log.sock").display().to_string();
    let path = dir.path().join("audit.jsonl");
    let log = shipping_log(&path, &settings(SyslogTransport::Unix, socket, false)).rotate_at(4096);
    let long = "x".repeat(300);
    for n in 0..40 {
        log.append(record(&format!("echo {n} {long}"))).unwrap();
    }
    drop(log);
    let report = verify(&path).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert!(report.files.len() > 2, "{report:?}");
    // Every record of every file, the rotation records included, reached rsyslog.
    let got = rsyslog.received(usize::try_from(report.records).unwrap());
    assert_eq!(got.len() as u64, report.records, "{got:#?}");
    // `required`, nobody listening, the log rotating: each append fails, the chain holds.
    let quiet = dir.path().join("quiet");
    std::fs::create_dir(&quiet).unwrap();
    let nobody = socket_nobody_reads(&quiet);
    let path = quiet.join("audit.jsonl");
    let log = shipping_log(
        &path,
        &settings(SyslogTransport::Unix, nobody.display().to_string(), true),
    )
    .rotate_at(4096);
    for n in 0..40 {
        let e = log.append(record(&format!("echo {n} {long}"))).unwrap_err();
        assert!(matches!(e, AuditError::NotShipped { .. }), "{e}");
    }
    drop(log);
    let report = verify(&path).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
    assert!(report.files.len() > 2 && report.records >= 40, "{report:?}");
}
