//! Undo and redo sequences of the files organiser, including every refusal.

use crate::files_sandbox::Sandbox;
use safety::result::ResultCode;
use serde_json::json;

fn plan_id(env: &safety::result::Envelope) -> String {
    env.detail["plan_id"].as_str().unwrap().to_string()
}

#[test]
fn undo_and_redo_with_nothing_to_do_are_invalid_requests() {
    let sb = Sandbox::new();
    let org = sb.organizer();
    let env = org.undo_last_action();
    assert_eq!(
        (env.code, env.reason.as_str()),
        (ResultCode::InvalidRequest, "nothing to undo")
    );
    let env = org.redo_last_action();
    assert_eq!(
        (env.code, env.reason.as_str()),
        (ResultCode::InvalidRequest, "nothing to redo")
    );
}

#[test]
fn undo_reverts_a_whole_plan_and_redo_reapplies_it() {
    let sb = Sandbox::new();
    sb.demo();
    let original = Sandbox::tree(&sb.ws);
    let org = sb.organizer();
    let id = plan_id(&org.plan_organize());
    assert!(org.apply_plan(&id, &|_, _| {}).ok);
    let applied = Sandbox::tree(&sb.ws);
    let undo = org.undo_last_action();
    assert_eq!(undo.code, ResultCode::Ok, "{undo:?}");
    assert_eq!(undo.detail["moved"], json!(2));
    let mut expected = original.clone();
    expected.insert("Images".into(), "<dir>".into());
    expected.insert("Documents".into(), "<dir>".into());
    assert_eq!(
        Sandbox::tree(&sb.ws),
        expected,
        "files back, created folders stay (nothing is deleted)"
    );
    let redo = org.redo_last_action();
    assert_eq!(redo.code, ResultCode::Ok, "{redo:?}");
    assert_eq!(Sandbox::tree(&sb.ws), applied);
    assert_eq!(org.redo_last_action().code, ResultCode::InvalidRequest);
}

#[test]
fn undo_steps_back_through_several_actions_in_order() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let org = sb.organizer();
    assert!(org.move_file("a.txt", "one/a.txt").ok);
    assert!(org.move_file("one/a.txt", "two/a.txt").ok);
    assert!(org.undo_last_action().ok);
    assert!(sb.ws.join("one/a.txt").is_file());
    assert!(org.undo_last_action().ok);
    assert!(sb.ws.join("a.txt").is_file());
    assert_eq!(org.undo_last_action().code, ResultCode::InvalidRequest);
    assert!(org.redo_last_action().ok);
    assert!(org.redo_last_action().ok);
    assert!(sb.ws.join("two/a.txt").is_file());
}

#[test]
fn new_work_clears_the_redo_stack() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    sb.write("b.txt", "b");
    let org = sb.organizer();
    assert!(org.move_file("a.txt", "x/a.txt").ok);
    assert!(org.undo_last_action().ok);
    assert!(org.move_file("b.txt", "x/b.txt").ok);
    assert_eq!(org.redo_last_action().code, ResultCode::InvalidRequest);
    assert!(sb.ws.join("a.txt").is_file());
}

#[test]
fn undo_is_refused_whole_when_an_original_place_is_taken() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    sb.write("b.pdf", "b");
    let org = sb.organizer();
    let id = plan_id(&org.plan_organize());
    assert!(org.apply_plan(&id, &|_, _| {}).ok);
    sb.write("b.pdf", "a newcomer");
    let env = org.undo_last_action();
    assert_eq!(env.code, ResultCode::OperationFailed, "{env:?}");
    assert_eq!(env.detail["taken"], json!(["b.pdf"]));
    // Refused whole: a.pdf did not go back either, and the newcomer is untouched.
    assert!(sb.ws.join("Documents/a.pdf").is_file());
    assert_eq!(
        std::fs::read_to_string(sb.ws.join("b.pdf")).unwrap(),
        "a newcomer"
    );
    // Once the place is free again, the undo works.
    std::fs::rename(sb.ws.join("b.pdf"), sb.ws.join("newcomer.txt")).unwrap();
    assert!(org.undo_last_action().ok);
    assert_eq!(std::fs::read_to_string(sb.ws.join("b.pdf")).unwrap(), "b");
}

#[test]
fn undo_never_carries_back_a_file_that_was_replaced() {
    let sb = Sandbox::new();
    sb.write("a.txt", "original");
    let org = sb.organizer();
    assert!(org.move_file("a.txt", "Documents/a.txt").ok);
    // Same name, different file (new inode).
    std::fs::remove_file(sb.ws.join("Documents/a.txt")).unwrap();
    sb.write("Documents/a.txt", "impostor");
    let env = org.undo_last_action();
    assert_eq!(env.code, ResultCode::OperationFailed);
    assert_eq!(env.detail["replaced"], json!(["Documents/a.txt"]));
    assert!(!sb.ws.join("a.txt").exists());
}

#[test]
fn undo_refuses_a_file_whose_content_changed() {
    let sb = Sandbox::new();
    sb.write("a.txt", "original");
    let org = sb.organizer();
    assert!(org.move_file("a.txt", "Documents/a.txt").ok);
    std::fs::write(sb.ws.join("Documents/a.txt"), "edited, longer content").unwrap();
    let env = org.undo_last_action();
    assert_eq!(env.code, ResultCode::OperationFailed);
    assert_eq!(env.detail["replaced"], json!(["Documents/a.txt"]));
}

#[test]
fn undo_refuses_when_a_file_went_missing() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let org = sb.organizer();
    assert!(org.move_file("a.txt", "Documents/a.txt").ok);
    std::fs::rename(sb.ws.join("Documents/a.txt"), sb.ws.join("elsewhere.txt")).unwrap();
    let env = org.undo_last_action();
    assert_eq!(env.code, ResultCode::OperationFailed);
    assert_eq!(env.detail["missing"], json!(["Documents/a.txt"]));
}

#[test]
fn redo_is_refused_whole_when_a_destination_is_taken() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let org = sb.organizer();
    assert!(org.move_file("a.txt", "Documents/a.txt").ok);
    assert!(org.undo_last_action().ok);
    sb.write("Documents/a.txt", "squatter");
    let env = org.redo_last_action();
    assert_eq!(env.code, ResultCode::OperationFailed);
    assert_eq!(env.detail["taken"], json!(["Documents/a.txt"]));
    assert_eq!(
        std::fs::read_to_string(sb.ws.join("Documents/a.txt")).unwrap(),
        "squatter"
    );
    assert_eq!(std::fs::read_to_string(sb.ws.join("a.txt")).unwrap(), "a");
}

#[test]
fn plan_ids_are_single_use() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    let org = sb.organizer();
    let id = plan_id(&org.plan_organize());
    assert!(org.apply_plan(&id, &|_, _| {}).ok);
    assert!(org.undo_last_action().ok);
    let env = org.apply_plan(&id, &|_, _| {});
    assert_eq!(env.code, ResultCode::InvalidRequest);
    assert!(env.reason.contains("single use"), "{}", env.reason);
    assert!(sb.ws.join("a.pdf").is_file());
    assert_eq!(
        org.apply_plan("no-such-plan", &|_, _| {}).code,
        ResultCode::InvalidRequest
    );
}

#[test]
fn apply_refuses_the_whole_plan_when_a_file_changed_or_vanished() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    sb.write("b.pdf", "b");
    sb.write("c.png", "c");
    let org = sb.organizer();
    let id = plan_id(&org.plan_organize());
    std::fs::write(sb.ws.join("a.pdf"), "grown since planning").unwrap();
    std::fs::rename(sb.ws.join("b.pdf"), sb.dir.path().join("b.pdf")).unwrap();
    sb.write("Images/c.png", "taken since planning");
    let env = org.apply_plan(&id, &|_, _| {});
    assert_eq!(env.code, ResultCode::OperationFailed);
    let changed: Vec<String> = env.detail["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(changed, vec!["a.pdf", "b.pdf", "Images/c.png"]);
    assert!(sb.ws.join("a.pdf").is_file() && sb.ws.join("c.png").is_file());
    assert!(!sb.ws.join("Documents").exists());
}

#[test]
fn apply_reports_progress() {
    let sb = Sandbox::new();
    for i in 0..250 {
        sb.write(&format!("f{i:03}.txt"), "x");
    }
    let sb = sb;
    let org = sb.organizer();
    let id = plan_id(&org.plan_organize());
    let seen = std::sync::Mutex::new(Vec::new());
    let env = org.apply_plan(&id, &|done, total| seen.lock().unwrap().push((done, total)));
    assert!(env.ok);
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.last(), Some(&(250, 250)));
    assert!(seen.len() >= 100);
}

#[test]
fn history_survives_a_restart() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    {
        let org = sb.organizer();
        assert!(org.move_file("a.txt", "Documents/a.txt").ok);
    }
    let org = sb.organizer();
    assert!(org.undo_last_action().ok);
    assert!(sb.ws.join("a.txt").is_file());
    drop(org);
    let org = sb.organizer();
    assert!(org.redo_last_action().ok);
    assert!(sb.ws.join("Documents/a.txt").is_file());
}

#[test]
fn fail_open_reports_the_missing_audit_record_and_fail_closed_refuses_to_start() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    // The audit log's path is a folder: it can be neither opened nor written.
    let bad = sb.state.join("audit-is-a-folder");
    std::fs::create_dir_all(&bad).unwrap();
    let sb = sb.with_env("SAFE_MCP_AUDIT_LOG", &bad.display().to_string());
    // Fail-closed: the organiser does not start without its audit log.
    assert!(
        safety::organizer::Organizer::open(&sb.config()).is_err(),
        "fail-closed organiser started without a writable audit log"
    );
    let sb = sb.with_env("SAFE_MCP_AUDIT_FAIL_MODE", "open");
    let org = sb.organizer();
    let env = org.move_file("a.txt", "Documents/a.txt");
    assert!(env.ok);
    assert!(
        env.detail["audit"]
            .as_str()
            .unwrap()
            .starts_with("unavailable: ")
    );
}

/// A log that becomes unwritable while the server runs (`chattr +i`, immutable even for
/// root): fail-closed answers AUDIT_UNAVAILABLE and nothing moves.
#[test]
fn fail_closed_refuses_a_move_when_the_log_becomes_unwritable() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let org = sb.organizer();
    let log = sb.state.join("audit.jsonl");
    assert!(org.list_files(None).ok);
    if !log.exists() {
        std::fs::write(&log, "").unwrap();
    }
    let immutable = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&log)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !immutable || std::fs::OpenOptions::new().append(true).open(&log).is_ok() {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&log)
            .status();
        panic!(
            "cannot make the audit log immutable here (chattr +i); this test needs root on ext4"
        );
    }
    let env = org.move_file("a.txt", "Documents/a.txt");
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(&log)
        .status();
    assert_eq!(env.code, ResultCode::AuditUnavailable, "{env:?}");
    assert!(
        sb.ws.join("a.txt").is_file(),
        "the file moved without its audit record"
    );
    assert!(!sb.ws.join("Documents/a.txt").exists());
}
