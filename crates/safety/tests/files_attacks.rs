//! Attack tests against the files organiser with real files in temporary folders.
//! Each test checks the refusal code and that nothing
//! outside the workspace was read, created or moved.

use std::sync::mpsc;
use std::time::Duration;

use crate::files_sandbox::Sandbox;
use safety::result::ResultCode;
use serde_json::json;

#[test]
fn demo_workspace_gives_the_documented_envelopes() {
    let sb = Sandbox::new();
    sb.demo();
    let org = sb.organizer();
    let plan = org.plan_organize();
    assert_eq!(plan.code, ResultCode::Ok);
    assert_eq!(plan.reason, "proposed 2 move(s), skipped 3");
    let d = &plan.detail;
    assert_eq!(
        d["moves"],
        json!([
            {"category": "Images", "dest": "Images/photo.png", "size": 41, "src": "photo.png"},
            {"category": "Documents", "dest": "Documents/report.pdf", "size": 16, "src": "report.pdf"}
        ])
    );
    assert_eq!(
        d["skips"],
        json!([
            {"code": "NEEDS_EXPLICIT_REQUEST", "name": ".bashrc",
             "reason": "dotfiles are configuration, not clutter to be filed", "rule": "organize"},
            {"code": "POLICY_DENIED", "name": "link.pdf",
             "reason": "'link.pdf' is a symlink; symlinks are never followed or moved, however they are named: no rule permits organizing it (deny by default)",
             "rule": null},
            {"code": "NEEDS_EXPLICIT_REQUEST", "name": "setup.exe",
             "reason": "installers, executables and application folders are left where the user put them",
             "rule": "organize"}
        ])
    );
    assert_eq!(d["move_count"], json!(2));
    assert_eq!(d["skip_count"], json!(3));
    assert_eq!(d["truncated"], json!(false));
    let id = d["plan_id"].as_str().unwrap().to_string();

    let applied = org.apply_plan(&id, &|_, _| {});
    assert_eq!(applied.code, ResultCode::Ok, "{applied:?}");
    assert_eq!(applied.reason, "moved 2 file(s)");
    assert_eq!(applied.detail["moved"], json!(2));
    assert_eq!(applied.detail["planned"], json!(2));
    assert_eq!(
        applied.detail["moves"],
        json!([{"dest": "Images/photo.png", "src": "photo.png"},
               {"dest": "Documents/report.pdf", "src": "report.pdf"}])
    );

    let link = org.move_file("link.pdf", "Documents/link.pdf");
    assert_eq!(link.code, ResultCode::PolicyDenied);
    assert!(!link.ok);
    assert_eq!(
        link.reason,
        "'link.pdf' is a symlink; symlinks are never followed or moved, however they are \
         named: no rule permits organizing it (deny by default)"
    );
    assert!(link.detail.is_empty());

    let setup = org.move_file("setup.exe", "Documents/setup.exe");
    assert_eq!(setup.code, ResultCode::Ok);
    assert_eq!(setup.reason, "moved setup.exe");
    assert_eq!(
        serde_json::Value::Object(setup.detail.clone()),
        json!({"dest": "Documents/setup.exe", "moved": 1, "src": "setup.exe"})
    );
    assert!(sb.ws.join("Documents/setup.exe").is_file());
    assert!(
        std::fs::symlink_metadata(sb.ws.join("link.pdf"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn plan_changes_nothing_not_even_destination_folders() {
    let sb = Sandbox::new();
    sb.demo();
    let before = Sandbox::tree(&sb.ws);
    let org = sb.organizer();
    assert!(org.plan_organize().ok);
    assert_eq!(Sandbox::tree(&sb.ws), before);
}

#[test]
fn dotdot_traversal_is_path_escape() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let outside = sb.outside_snapshot();
    let org = sb.organizer();
    for (src, dest) in [
        ("../inbox_evil/secret.txt", "stolen.txt"),
        ("sub/../../inbox_evil/secret.txt", "stolen.txt"),
        ("a.txt", "../inbox_evil/a.txt"),
        ("a.txt", "x/../../outside/a.txt"),
    ] {
        let env = org.move_file(src, dest);
        assert_eq!(env.code, ResultCode::PathEscape, "{src} -> {dest}: {env:?}");
        assert!(env.detail.is_empty());
    }
    assert_eq!(org.list_files(Some("..")).code, ResultCode::PathEscape);
    assert_eq!(sb.outside_snapshot(), outside);
    assert!(sb.ws.join("a.txt").is_file());
}

#[test]
fn absolute_paths_outside_are_path_escape_and_inside_are_resolved() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let org = sb.organizer();
    assert_eq!(
        org.move_file("/etc/passwd", "passwd").code,
        ResultCode::PathEscape
    );
    assert_eq!(
        org.move_file("a.txt", "/tmp/a.txt").code,
        ResultCode::PathEscape
    );
    let inside_src = format!("{}/a.txt", sb.ws.display());
    let inside_dest = format!("{}/Documents/a.txt", sb.ws.display());
    let env = org.move_file(&inside_src, &inside_dest);
    assert_eq!(env.code, ResultCode::Ok, "{env:?}");
    assert!(sb.ws.join("Documents/a.txt").is_file());
}

#[test]
fn sibling_whose_name_extends_the_workspace_name_is_path_escape() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let outside = sb.outside_snapshot();
    let org = sb.organizer();
    let evil = format!("{}/secret.txt", sb.evil.display());
    assert_eq!(
        org.move_file(&evil, "secret.txt").code,
        ResultCode::PathEscape
    );
    let evil_dest = format!("{}/a.txt", sb.evil.display());
    assert_eq!(
        org.move_file("a.txt", &evil_dest).code,
        ResultCode::PathEscape
    );
    assert_eq!(
        org.list_files(Some(&sb.evil.display().to_string())).code,
        ResultCode::PathEscape
    );
    assert_eq!(sb.outside_snapshot(), outside);
}

#[test]
fn symlinked_folder_in_the_middle_of_a_path_is_path_escape() {
    let sb = Sandbox::new();
    std::os::unix::fs::symlink(&sb.outside, sb.ws.join("linkdir")).unwrap();
    std::fs::create_dir(sb.ws.join("real")).unwrap();
    sb.write("real/inner.txt", "inner");
    std::os::unix::fs::symlink(sb.ws.join("real"), sb.ws.join("alias")).unwrap();
    let outside = sb.outside_snapshot();
    let org = sb.organizer();
    let env = org.move_file("linkdir/secret.pdf", "stolen.pdf");
    assert_eq!(env.code, ResultCode::PathEscape, "{env:?}");
    assert!(env.reason.contains("symlink"), "{}", env.reason);
    assert_eq!(org.list_files(Some("linkdir")).code, ResultCode::PathEscape);
    // Even a symlink that stays inside is never followed.
    assert_eq!(
        org.move_file("alias/inner.txt", "inner.txt").code,
        ResultCode::PathEscape
    );
    assert_eq!(sb.outside_snapshot(), outside);
    assert!(!sb.ws.join("stolen.pdf").exists());
}

#[test]
fn destination_inside_a_symlinked_folder_pointing_out_is_path_escape() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    std::os::unix::fs::symlink(&sb.outside, sb.ws.join("out")).unwrap();
    let outside = sb.outside_snapshot();
    let org = sb.organizer();
    assert_eq!(
        org.move_file("a.pdf", "out/a.pdf").code,
        ResultCode::PathEscape
    );
    assert_eq!(
        org.move_file("a.pdf", "out/new/deeper/a.pdf").code,
        ResultCode::PathEscape
    );
    assert_eq!(sb.outside_snapshot(), outside);
    assert!(sb.ws.join("a.pdf").is_file());
}

#[test]
fn a_category_folder_that_is_a_symlink_is_never_used_by_the_planner() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    std::os::unix::fs::symlink(&sb.outside, sb.ws.join("Documents")).unwrap();
    let outside = sb.outside_snapshot();
    let org = sb.organizer();
    let plan = org.plan_organize();
    assert_eq!(plan.detail["move_count"], json!(0));
    assert_eq!(plan.detail["skips"][1]["code"], json!("POLICY_DENIED"));
    assert_eq!(sb.outside_snapshot(), outside);
}

#[test]
fn symlink_swapped_in_after_planning_refuses_the_whole_plan() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    sb.write("b.png", "b");
    let outside = sb.outside_snapshot();
    let org = sb.organizer();
    let plan = org.plan_organize();
    let id = plan.detail["plan_id"].as_str().unwrap().to_string();
    // The source is swapped for a symlink to an outside file.
    std::fs::rename(sb.ws.join("a.pdf"), sb.dir.path().join("a.pdf.moved-away")).unwrap();
    std::os::unix::fs::symlink(sb.outside.join("secret.pdf"), sb.ws.join("a.pdf")).unwrap();
    let env = org.apply_plan(&id, &|_, _| {});
    assert_eq!(env.code, ResultCode::OperationFailed, "{env:?}");
    assert_eq!(env.detail["changed"][0]["name"], json!("a.pdf"));
    assert!(sb.ws.join("b.png").is_file(), "the whole plan is refused");
    assert!(!sb.ws.join("Images").exists());
    assert_eq!(sb.outside_snapshot(), outside);
}

#[test]
fn destination_folder_swapped_for_a_symlink_after_planning_refuses_the_plan() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    let outside = sb.outside_snapshot();
    let org = sb.organizer();
    let id = org.plan_organize().detail["plan_id"]
        .as_str()
        .unwrap()
        .to_string();
    std::os::unix::fs::symlink(&sb.outside, sb.ws.join("Documents")).unwrap();
    let env = org.apply_plan(&id, &|_, _| {});
    assert_eq!(env.code, ResultCode::OperationFailed, "{env:?}");
    assert!(sb.ws.join("a.pdf").is_file());
    assert_eq!(sb.outside_snapshot(), outside);
}

#[test]
fn control_and_bidi_characters_are_refused_by_protection_everywhere() {
    let sb = Sandbox::new();
    let disguised = "invoice\u{202e}fdp.exe";
    sb.write(disguised, "MZ");
    sb.write("bell\u{7}.txt", "x");
    sb.write("a.txt", "a");
    let org = sb.organizer();
    let plan = org.plan_organize();
    let skips = plan.detail["skips"].as_array().unwrap();
    for name in [disguised, "bell\u{7}.txt"] {
        let skip = skips.iter().find(|s| s["name"] == json!(name)).unwrap();
        assert_eq!(skip["code"], json!("POLICY_DENIED"));
        assert_eq!(skip["rule"], json!("organize"));
    }
    let env = org.move_file(disguised, "Documents/invoice.exe");
    assert_eq!(env.code, ResultCode::PolicyDenied);
    assert_eq!(
        env.reason,
        "names with control or bidirectional characters can disguise what a file is"
    );
    // A move may not create such a name either.
    let env = org.move_file("a.txt", "Documents/a\u{202e}txt.exe");
    assert_eq!(env.code, ResultCode::PolicyDenied);
    let env = org.move_file("a.txt", "Docs\n/a.txt");
    assert_eq!(env.code, ResultCode::PolicyDenied);
    assert!(sb.ws.join("a.txt").is_file());
    assert!(!sb.ws.join("Documents").exists());
}

#[test]
fn overlong_names_and_nul_bytes_are_invalid_requests() {
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let org = sb.organizer();
    let long_leaf = "x".repeat(256);
    assert_eq!(
        org.move_file("a.txt", &long_leaf).code,
        ResultCode::InvalidRequest
    );
    assert_eq!(
        org.move_file(&"d/".repeat(2100), "a.txt").code,
        ResultCode::InvalidRequest
    );
    assert_eq!(
        org.move_file("a.txt\0../../etc/passwd", "b.txt").code,
        ResultCode::InvalidRequest
    );
    assert_eq!(org.move_file("", "b.txt").code, ResultCode::InvalidRequest);
    assert_eq!(org.move_file("a.txt", ".").code, ResultCode::InvalidRequest);
    assert_eq!(
        org.move_file("a.txt/", "b.txt").code,
        ResultCode::InvalidRequest
    );
    assert!(sb.ws.join("a.txt").is_file());
}

#[test]
fn counts_in_reasons_agree_with_their_nouns() {
    let sb = Sandbox::new();
    sb.write("a.pdf", "a");
    let org = sb.organizer();
    assert_eq!(org.list_files(None).reason, "listed 1 entry");
    let plan = org.plan_organize();
    // plan_organize and apply_plan keep the demo's documented "(s)" wording.
    assert_eq!(plan.reason, "proposed 1 move(s), skipped 0");
    let id = plan.detail["plan_id"].as_str().unwrap().to_string();
    assert_eq!(org.apply_plan(&id, &|_, _| {}).reason, "moved 1 file(s)");
    assert_eq!(
        org.undo_last_action().reason,
        "undo of apply_plan moved 1 file"
    );
    // a.pdf is back, beside the Documents folder the plan made.
    assert_eq!(org.list_files(None).reason, "listed 2 entries");
}

#[test]
fn fifo_in_the_workspace_never_hangs_and_is_never_moved() {
    let sb = Sandbox::new();
    let status = std::process::Command::new("mkfifo")
        .arg(sb.ws.join("pipe.pdf"))
        .status()
        .unwrap();
    assert!(status.success());
    sb.write("a.pdf", "a");
    let org = sb.organizer();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let list = org.list_files(None);
        let plan = org.plan_organize();
        let mv = org.move_file("pipe.pdf", "Documents/pipe.pdf");
        let _ = tx.send((list, plan, mv));
    });
    let (list, plan, mv) = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("a FIFO made the server hang");
    let entry = list.detail["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == json!("pipe.pdf"))
        .unwrap()
        .clone();
    assert_eq!(entry["kind"], json!("fifo"));
    assert_eq!(entry["would_move"], json!(false));
    assert_eq!(entry["why_not"]["rule"], json!(null));
    let skip = plan.detail["skips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == json!("pipe.pdf"))
        .unwrap()
        .clone();
    assert_eq!(
        skip["reason"],
        json!(
            "'pipe.pdf' is a named pipe; pipes are never opened or moved: no rule permits organizing it (deny by default)"
        )
    );
    assert_eq!(mv.code, ResultCode::PolicyDenied);
    assert_eq!(
        mv.reason,
        "'pipe.pdf' is a named pipe; pipes are never opened or moved: no rule permits organizing it (deny by default)"
    );
}

#[test]
fn move_file_refuses_existing_destination() {
    let sb = Sandbox::new();
    sb.write("a.txt", "new");
    sb.write("Documents/a.txt", "old");
    let org = sb.organizer();
    let env = org.move_file("a.txt", "Documents/a.txt");
    assert_eq!(env.code, ResultCode::PolicyDenied);
    assert_eq!(
        env.reason,
        "destination 'Documents/a.txt' already exists; nothing is overwritten"
    );
    assert_eq!(
        std::fs::read_to_string(sb.ws.join("Documents/a.txt")).unwrap(),
        "old"
    );
    assert_eq!(std::fs::read_to_string(sb.ws.join("a.txt")).unwrap(), "new");
}

#[test]
fn names_are_compared_after_nfc() {
    let sb = Sandbox::new();
    sb.write("cafe\u{301}.pdf", "decomposed");
    sb.write("other.pdf", "x");
    sb.write("Documents/re\u{301}sume\u{301}.pdf", "taken");
    let org = sb.organizer();
    // Typed composed, stored decomposed: the same file.
    let env = org.move_file("caf\u{e9}.pdf", "Documents/caf\u{e9}.pdf");
    assert_eq!(env.code, ResultCode::Ok, "{env:?}");
    // A composed destination collides with a stored decomposed name.
    let env = org.move_file("other.pdf", "Documents/r\u{e9}sum\u{e9}.pdf");
    assert_eq!(env.code, ResultCode::PolicyDenied, "{env:?}");
}

#[test]
fn listing_is_bounded_and_never_enters_git_or_node_modules() {
    let sb = Sandbox::new().with_env("SAFE_MCP_MAX_LIST_ENTRIES", "3");
    for i in 0..5 {
        sb.write(&format!("f{i}.txt"), "x");
    }
    sb.write(".git/config", "x");
    sb.write("node_modules/x/index.js", "x");
    let org = sb.organizer();
    let list = org.list_files(None);
    assert_eq!(list.detail["count"], json!(3));
    assert_eq!(list.detail["truncated"], json!(true));
    assert_eq!(org.list_files(Some(".git")).code, ResultCode::PolicyDenied);
    assert_eq!(
        org.list_files(Some("node_modules/x")).code,
        ResultCode::PolicyDenied
    );
}

#[test]
fn explicit_move_of_a_restraint_entry_is_allowed_but_never_of_a_symlink() {
    let sb = Sandbox::new();
    sb.demo();
    let org = sb.organizer();
    assert_eq!(
        org.move_file(".bashrc", "config/.bashrc").code,
        ResultCode::Ok
    );
    let env = org.move_file("link.pdf", "elsewhere.pdf");
    assert_eq!(env.code, ResultCode::PolicyDenied);
    assert_eq!(
        std::fs::read_to_string(sb.outside.join("secret.pdf")).unwrap(),
        "outside secret\n"
    );
}

#[test]
fn unknown_tools_and_bad_arguments_are_invalid_request_envelopes() {
    let sb = Sandbox::new();
    let org = sb.organizer();
    let env = org.dispatch("delete_file", None, &|_, _| {});
    assert_eq!(env.code, ResultCode::InvalidRequest);
    let args = json!({"src": "a"});
    let env = org.dispatch("move_file", args.as_object(), &|_, _| {});
    assert_eq!(env.code, ResultCode::InvalidRequest);
    assert_eq!(
        env.reason,
        "invalid arguments for 'move_file': missing required argument 'dest': it must be a \
         string: the full destination path (not a folder), relative to the workspace"
    );
    let args = json!({"plan_id": "x", "force": true});
    let env = org.dispatch("apply_plan", args.as_object(), &|_, _| {});
    assert_eq!(env.code, ResultCode::InvalidRequest);
    assert_eq!(
        env.reason,
        "invalid arguments for 'apply_plan': unknown argument 'force': 'apply_plan' takes only \
         plan_id"
    );
    // A wrong type names the argument and what it must be, never serde's words.
    for (tool, args, reason) in [
        (
            "move_file",
            json!({"src": 5, "dest": "x"}),
            "invalid arguments for 'move_file': 'src' must be a string: the path of the entry \
             to move, relative to the workspace; got a number",
        ),
        (
            "list_files",
            json!({"subdir": ["a"]}),
            "invalid arguments for 'list_files': 'subdir' must be a string: a folder inside \
             the workspace, relative to it; got an array",
        ),
        (
            "apply_plan",
            json!({"plan_id": null}),
            "invalid arguments for 'apply_plan': 'plan_id' must be a string: the plan_id that \
             plan_organize returned; got null",
        ),
        (
            "undo_last_action",
            json!({"steps": 2}),
            "invalid arguments for 'undo_last_action': unknown argument 'steps': \
             'undo_last_action' takes no arguments",
        ),
    ] {
        let env = org.dispatch(tool, args.as_object(), &|_, _| {});
        assert_eq!(env.code, ResultCode::InvalidRequest);
        assert_eq!(env.reason, reason);
        assert!(!env.reason.contains("expected"), "{}", env.reason);
    }
    let env = org.apply_plan("", &|_, _| {});
    assert_eq!(env.code, ResultCode::InvalidRequest);
    assert_eq!(
        env.reason,
        "plan_id is empty or too long to be a plan id (plan_organize returns a 36-character \
         one); make a plan with plan_organize first"
    );
    // A missing source is named as given; a URL is named as one, not as a mangled path.
    let env = org.move_file("https://example.com/x.pdf", "Documents/x.pdf");
    assert_eq!(env.code, ResultCode::OperationFailed);
    assert_eq!(
        env.reason,
        "source 'https://example.com/x.pdf' is a URL; src must be the path of an entry inside \
         the workspace, relative to it, and no entry has this name"
    );
    let env = org.move_file("./missing.pdf", "Documents/x.pdf");
    assert_eq!(env.code, ResultCode::OperationFailed);
    assert_eq!(env.reason, "source './missing.pdf' does not exist");
    // An optional argument given as null is the same as leaving it out.
    let args = json!({"subdir": null});
    let env = org.dispatch("list_files", args.as_object(), &|_, _| {});
    assert_eq!(env.code, ResultCode::Ok, "{}", env.reason);
}

#[test]
fn journal_inside_the_workspace_is_a_start_up_error() {
    let sb = Sandbox::new();
    let sb = {
        let j = sb.ws.join("journal.json").display().to_string();
        sb.with_env("SAFE_MCP_JOURNAL", &j)
    };
    let err = safety::config::load(&sb.policy, safety::config::Server::Files, &sb.env).unwrap_err();
    assert!(err.to_string().contains("lies inside"), "{err}");
}
