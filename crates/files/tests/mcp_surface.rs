//! The files server's MCP surface, in process over a duplex pipe with the rmcp client:
//! tool list (schemas, annotations), envelopes as structuredContent plus the same JSON as
//! text, `isError == !ok`, envelopes for unknown tools and bad arguments, and progress
//! notifications from apply_plan.

use std::sync::{Arc, Mutex};

use files::FilesServer;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use safety::organizer::Organizer;
use serde_json::{Value, json};

/// (progress, total) of each notification received.
type Seen = Arc<Mutex<Vec<(f64, Option<f64>)>>>;

#[derive(Clone, Default)]
struct Client {
    progress: Seen,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push((params.progress, params.total));
    }
}

struct Session {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    client: RunningService<RoleClient, Client>,
    handler: Client,
}

async fn session(files: &[(&str, &str)]) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ws = base.join("inbox");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(base.join("state")).unwrap();
    for (name, content) in files {
        std::fs::write(ws.join(name), content).unwrap();
    }
    let shipped =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy.example.toml");
    let policy = base.join("policy.toml");
    std::fs::copy(shipped, &policy).unwrap();
    let env = vec![
        (
            "SAFE_MCP_WORKSPACE_ROOT".to_string(),
            ws.display().to_string(),
        ),
        (
            "SAFE_MCP_JOURNAL".to_string(),
            base.join("state/j.json").display().to_string(),
        ),
        (
            "SAFE_MCP_AUDIT_LOG".to_string(),
            base.join("state/audit.jsonl").display().to_string(),
        ),
    ];
    let config = safety::config::load(&policy, safety::config::Server::Files, &env).unwrap();
    let server = FilesServer::new(Organizer::open(&config).unwrap());
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let handler = Client::default();
    let client = handler.clone().serve(client_io).await.unwrap();
    Session {
        _dir: dir,
        ws,
        client,
        handler,
    }
}

async fn call(s: &Session, tool: &str, args: Value) -> (CallToolResult, Value) {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = s.client.call_tool(params).await.unwrap();
    let structured = result.structured_content.clone().unwrap();
    (result, structured)
}

fn text_of(result: &CallToolResult) -> Value {
    let text = result.content[0].as_text().unwrap().text.clone();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn six_tools_with_output_schema_and_annotations() {
    let s = session(&[]).await;
    let info = s.client.peer_info().unwrap();
    assert!(
        info.instructions
            .as_deref()
            .unwrap_or("")
            .contains("never deletes")
    );
    let tools = s.client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "list_files",
            "plan_organize",
            "apply_plan",
            "move_file",
            "undo_last_action",
            "redo_last_action"
        ]
    );
    for t in &tools {
        let schema = t.output_schema.as_ref().expect("outputSchema");
        let props = schema.get("properties").unwrap();
        for key in ["ok", "code", "action", "reason", "detail", "duration_ms"] {
            assert!(
                props.get(key).is_some(),
                "{} outputSchema lacks {key}",
                t.name
            );
        }
        let a = t.annotations.as_ref().unwrap();
        let read_only = matches!(t.name.as_ref(), "list_files" | "plan_organize");
        assert_eq!(a.read_only_hint, Some(read_only), "{}", t.name);
        assert_eq!(a.destructive_hint, Some(false), "{}", t.name);
        assert_eq!(a.idempotent_hint, Some(read_only), "{}", t.name);
        assert_eq!(a.open_world_hint, Some(false), "{}", t.name);
    }
    let move_schema = &tools[3].input_schema;
    assert_eq!(move_schema.get("additionalProperties"), Some(&json!(false)));
}

#[tokio::test]
async fn envelopes_are_structured_content_and_text_and_is_error_follows_ok() {
    let s = session(&[("a.pdf", "a"), ("b.pdf", "b")]).await;
    let (r, env) = call(&s, "plan_organize", json!({})).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(text_of(&r), env);
    assert_eq!(env["code"], json!("OK"));
    let id = env["detail"]["plan_id"].clone();
    let (r, env) = call(&s, "apply_plan", json!({"plan_id": id})).await;
    assert_eq!((r.is_error, env["ok"].clone()), (Some(false), json!(true)));
    let (r, env) = call(&s, "apply_plan", json!({"plan_id": id})).await;
    assert_eq!(
        (r.is_error, env["code"].clone()),
        (Some(true), json!("INVALID_REQUEST"))
    );
    assert_eq!(text_of(&r), env);
    let (r, env) = call(&s, "move_file", json!({"src": "../x", "dest": "y"})).await;
    assert_eq!(
        (r.is_error, env["code"].clone()),
        (Some(true), json!("PATH_ESCAPE"))
    );
    assert!(s.ws.join("Documents/a.pdf").is_file());
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_get_invalid_request_envelopes() {
    let s = session(&[]).await;
    let (r, env) = call(&s, "delete_everything", json!({})).await;
    assert_eq!(
        (r.is_error, env["code"].clone()),
        (Some(true), json!("INVALID_REQUEST"))
    );
    let (r, env) = call(&s, "move_file", json!({"src": 5, "dest": "x"})).await;
    assert_eq!(
        (r.is_error, env["code"].clone()),
        (Some(true), json!("INVALID_REQUEST"))
    );
    let (_, env) = call(&s, "list_files", json!({"subdir": ".", "recursive": true})).await;
    assert_eq!(env["code"], json!("INVALID_REQUEST"));
    let (_, env) = call(&s, "undo_last_action", json!({})).await;
    assert_eq!(
        (env["code"].clone(), env["reason"].clone()),
        (json!("INVALID_REQUEST"), json!("nothing to undo"))
    );
}

#[tokio::test]
async fn apply_plan_sends_progress_notifications() {
    let files: Vec<(String, String)> = (0..300)
        .map(|i| (format!("f{i}.txt"), "x".to_string()))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let s = session(&refs).await;
    let (_, env) = call(&s, "plan_organize", json!({})).await;
    assert_eq!(env["detail"]["move_count"], json!(300));
    let id = env["detail"]["plan_id"].clone();
    let (_, env) = call(&s, "apply_plan", json!({"plan_id": id})).await;
    assert_eq!(env["code"], json!("OK"));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let seen = s.handler.progress.lock().unwrap().clone();
    assert!(seen.len() >= 50, "{} progress notifications", seen.len());
    assert_eq!(seen.last(), Some(&(300.0, Some(300.0))));
}

/// Every envelope a files tool answers with, refusals included, fits that tool's published
/// `outputSchema`, whose objects are closed: a field the schema does not name fails.
#[tokio::test]
async fn every_envelope_fits_its_tools_output_schema_exactly() {
    let s = session(&[
        ("a.pdf", "a"),
        ("b.png", "bb"),
        ("c.txt", "c"),
        (".bashrc", "x"),
    ])
    .await;
    std::os::unix::fs::symlink("/etc/passwd", s.ws.join("link.pdf")).unwrap();
    let tools = s.client.list_all_tools().await.unwrap();
    let validators: std::collections::HashMap<String, jsonschema::Validator> = tools
        .iter()
        .map(|t| {
            let schema = Value::Object(t.output_schema.as_deref().cloned().unwrap());
            assert!(!schema.to_string().contains("\"format\""), "{schema}");
            (
                t.name.to_string(),
                jsonschema::validator_for(&schema).unwrap(),
            )
        })
        .collect();
    assert_eq!(validators.len(), 6);
    let mut seen = std::collections::BTreeSet::new();
    let mut check = |e: &Value| {
        let tool = e["action"].as_str().unwrap();
        let errors: Vec<String> = validators[tool]
            .iter_errors(e)
            .map(|err| format!("{err} at {}", err.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{tool}: {errors:?}\n{e}");
        seen.insert(format!("{tool} {}", e["code"].as_str().unwrap()));
    };
    let calls = [
        ("list_files", json!({})),
        ("list_files", json!({"subdir": ".git"})),
        ("list_files", json!({"subdir": "../x"})),
        ("list_files", json!({"subdir": "missing"})),
        ("list_files", json!({"bogus": 1})),
        ("plan_organize", json!({"x": 1})),
        ("apply_plan", json!({"plan_id": ""})),
        ("apply_plan", json!({"plan_id": "no-such-plan"})),
        (
            "move_file",
            json!({"src": "link.pdf", "dest": "Documents/link.pdf"}),
        ),
        (
            "move_file",
            json!({"src": "missing.pdf", "dest": "Documents/m.pdf"}),
        ),
        ("move_file", json!({"src": "a.pdf", "dest": "b.png"})),
        ("move_file", json!({"src": "../a.pdf", "dest": "x.pdf"})),
        ("move_file", json!({"src": "a.pdf"})),
        ("undo_last_action", json!({})),
        ("redo_last_action", json!({})),
    ];
    for (tool, args) in calls {
        check(&call(&s, tool, args).await.1);
    }
    // A plan applied, then replayed; a plan refused because a file changed.
    let plan = call(&s, "plan_organize", json!({})).await.1;
    check(&plan);
    let id = plan["detail"]["plan_id"].clone();
    check(&call(&s, "apply_plan", json!({"plan_id": id})).await.1);
    check(&call(&s, "apply_plan", json!({"plan_id": id})).await.1);
    check(&call(&s, "undo_last_action", json!({})).await.1);
    check(&call(&s, "redo_last_action", json!({})).await.1);
    check(&call(&s, "undo_last_action", json!({})).await.1);
    let plan = call(&s, "plan_organize", json!({})).await.1;
    std::fs::write(s.ws.join("a.pdf"), "changed").unwrap();
    let changed = call(
        &s,
        "apply_plan",
        json!({"plan_id": plan["detail"]["plan_id"]}),
    )
    .await
    .1;
    assert!(changed["detail"]["changed"].is_array(), "{changed}");
    check(&changed);
    // A move, then its original place taken: the undo is refused whole, with detail.
    check(
        &call(
            &s,
            "move_file",
            json!({"src": "c.txt", "dest": "Notes/c.txt"}),
        )
        .await
        .1,
    );
    std::fs::write(s.ws.join("c.txt"), "new").unwrap();
    let refused = call(&s, "undo_last_action", json!({})).await.1;
    assert_eq!(refused["detail"]["taken"], json!(["c.txt"]), "{refused}");
    check(&refused);
    for want in [
        "list_files OK",
        "list_files POLICY_DENIED",
        "list_files PATH_ESCAPE",
        "list_files INVALID_REQUEST",
        "plan_organize OK",
        "apply_plan OK",
        "apply_plan INVALID_REQUEST",
        "apply_plan OPERATION_FAILED",
        "move_file OK",
        "move_file POLICY_DENIED",
        "move_file OPERATION_FAILED",
        "undo_last_action OK",
        "undo_last_action INVALID_REQUEST",
        "undo_last_action OPERATION_FAILED",
        "redo_last_action OK",
    ] {
        assert!(
            seen.contains(want),
            "no '{want}' envelope was checked: {seen:?}"
        );
    }
    // The check can fail: an unnamed field, at the top, in detail or deeper, is refused.
    let list = call(&s, "list_files", json!({})).await.1;
    for pointer in ["", "/detail", "/detail/entries/0"] {
        let mut bad = list.clone();
        bad.pointer_mut(pointer).unwrap()["surprise"] = json!(1);
        assert!(!validators["list_files"].is_valid(&bad), "{pointer}");
    }
}
