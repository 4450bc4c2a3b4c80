//! Every tool schema of the three servers (terminal, files, guard), as a client lists it, is
//! portable and true.
//!
//! Portable: no `format` key (the TypeScript SDK's validator warns on every non-standard
//! one, `uint64` and friends), no `type` array, no bare boolean schema, no schema without a
//! validation keyword, no remote `$ref`: the rules of MCP Inspector's `--strict` lint
//! (Inspector 2.12), walked over the same subschema positions it walks. True: a bound a
//! schema states is the bound the server enforces, probed at the bound and just past it.
//! `ts_client` uses this module's fixture for the official TypeScript SDK client.

use std::path::{Path, PathBuf};

use safe_mcp::client::{self, Session};
use serde_json::{Map, Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_safe-mcp");

/// A temporary jail, workspace and state folder with one policy for both servers.
pub struct Fixture {
    dir: tempfile::TempDir,
    pub policy: PathBuf,
}

impl Fixture {
    /// The jail has `notes.txt`; the workspace a PDF, a PNG and a symlink `link.pdf` that
    /// leads out of it. A root server runs commands as the jail's owner: nobody.
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["jail", "ws", "state"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("jail/notes.txt"), "demo file\n").unwrap();
        safe_mcp::demo::hand_jail_to_nobody(dir.path(), &dir.path().join("jail")).unwrap();
        std::fs::write(dir.path().join("ws/report.pdf"), "pdf").unwrap();
        std::fs::write(dir.path().join("ws/photo.png"), "png").unwrap();
        std::fs::write(dir.path().join("state/outside.pdf"), "outside").unwrap();
        std::os::unix::fs::symlink("../state/outside.pdf", dir.path().join("ws/link.pdf")).unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(
            &policy,
            r#"
audit_log = "state/audit.jsonl"

[terminal]
jail_root = "jail"

[terminal.limits]
timeout_seconds = 20
max_output_bytes = 4096

[terminal.allowlist]
commands = ["cat", "echo", "ls", "seq", "sleep", "true"]

[terminal.denylist]
commands = ["rm"]

[files]
workspace_root = "ws"
journal = "state/journal.json"

[files.categories]
Documents = [".pdf"]
Images = [".png"]
"#,
        )
        .unwrap();
        Fixture { dir, policy }
    }

    /// The server's command line: `safe-mcp SERVER --config POLICY`.
    pub fn args(&self, server: &str) -> Vec<String> {
        vec![
            server.to_string(),
            "--config".to_string(),
            self.policy.to_string_lossy().into_owned(),
        ]
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    async fn connect(&self, server: &str) -> Session {
        let args = self.args(server);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        client::connect(Path::new(BIN), &args, &[]).await.unwrap()
    }
}

/// Schema keywords whose value is one subschema, an array of them, or a map of them (the
/// positions Inspector's lint walks).
const ONE: &[&str] = &[
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
];
const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "$defs",
    "definitions",
];
/// Where `true`/`false` is a normal value rather than a schema.
const BOOLEAN_VALUED: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
];
/// Keywords that constrain a value (a schema with none accepts anything).
const CONSTRAINING: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "$ref",
];

/// Every finding in `schema` at `path`; `keyword` is where it stands in its parent.
fn lint(schema: &Value, path: &str, keyword: Option<&str>, findings: &mut Vec<String>) {
    let map = match schema {
        Value::Bool(_) if keyword.is_some_and(|k| BOOLEAN_VALUED.contains(&k)) => return,
        Value::Bool(b) => return findings.push(format!("{path}: bare `{b}` schema")),
        Value::Object(map) => map,
        _ => return,
    };
    if map.contains_key("format") {
        findings.push(format!("{path}: format {}", map["format"]));
    }
    if map.get("type").is_some_and(Value::is_array) {
        findings.push(format!("{path}: type array {}", map["type"]));
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str)
        && !r.starts_with('#')
    {
        findings.push(format!("{path}: remote $ref {r}"));
    }
    if keyword != Some("not") && !map.keys().any(|k| CONSTRAINING.contains(&k.as_str())) {
        findings.push(format!("{path}: no validation keyword"));
    }
    for (key, value) in map {
        let here = format!("{path}.{key}");
        if ONE.contains(&key.as_str()) {
            lint(value, &here, Some(key), findings);
        } else if MANY.contains(&key.as_str()) {
            for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                lint(sub, &format!("{here}[{i}]"), Some(key), findings);
            }
        } else if MAP.contains(&key.as_str()) {
            for (name, sub) in value.as_object().into_iter().flatten() {
                lint(sub, &format!("{here}.{name}"), Some(key), findings);
            }
        }
    }
}

/// The tools a server lists, as JSON.
async fn list(f: &Fixture, server: &str) -> Vec<Value> {
    let s = f.connect(server).await;
    let tools = serde_json::to_value(s.peer().list_all_tools().await.unwrap()).unwrap();
    tools.as_array().unwrap().clone()
}

#[tokio::test]
async fn every_schema_of_every_tool_is_portable() {
    let f = Fixture::new();
    let mut seen = Vec::new();
    for (server, count) in [("terminal", 2), ("files", 6)] {
        let tools = list(&f, server).await;
        assert_eq!(tools.len(), count, "{server}: {tools:?}");
        for tool in tools {
            let name = tool["name"].as_str().unwrap().to_string();
            for which in ["inputSchema", "outputSchema"] {
                let schema = &tool[which];
                assert!(schema.is_object(), "{name} has no {which}");
                let mut findings = Vec::new();
                lint(schema, which, None, &mut findings);
                assert!(findings.is_empty(), "{name}: {findings:#?}\n{schema}");
            }
            seen.push(name);
        }
    }
    assert_eq!(seen.len(), 8, "{seen:?}");
}

#[tokio::test]
async fn every_schema_of_every_guard_tool_is_portable() {
    let f = crate::guard_e2e::Fixture::new();
    let args = f.args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let s = client::connect(Path::new(BIN), &args, &[]).await.unwrap();
    let tools = serde_json::to_value(s.peer().list_all_tools().await.unwrap()).unwrap();
    let tools = tools.as_array().unwrap();
    assert_eq!(tools.len(), 8, "{tools:?}");
    let mut linted = Vec::new();
    for tool in tools {
        let name = tool["name"].as_str().unwrap().to_string();
        for which in ["inputSchema", "outputSchema"] {
            let schema = &tool[which];
            assert!(schema.is_object(), "{name} has no {which}");
            let mut findings = Vec::new();
            lint(schema, which, None, &mut findings);
            assert!(findings.is_empty(), "{name}: {findings:#?}\n{schema}");
            linted.push(format!("{name}.{which}"));
        }
    }
    assert!(linted.len() >= 12, "{linted:?}");
}

#[test]
fn the_lint_finds_what_strict_clients_warn_about() {
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "n": {"type": "integer", "format": "uint64"},
            "cwd": {"type": ["string", "null"]},
            "any": {},
            "yes": true,
            "far": {"$ref": "https://example.com/s.json"},
            "ok": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": {"format": 1}},
        },
    });
    let mut findings = Vec::new();
    lint(&schema, "s", None, &mut findings);
    assert_eq!(
        findings,
        [
            "s.properties.any: no validation keyword",
            "s.properties.cwd: type array [\"string\",\"null\"]",
            "s.properties.far: remote $ref https://example.com/s.json",
            "s.properties.n: format \"uint64\"",
            "s.properties.yes: bare `true` schema",
        ],
        "{findings:#?}"
    );
}

/// The schema of argument `arg` of `tool`, its nullable branch unwrapped.
fn arg_schema<'a>(tools: &'a [Value], tool: &str, arg: &str) -> &'a Map<String, Value> {
    let t = tools.iter().find(|t| t["name"] == tool).unwrap();
    let schema = &t["inputSchema"]["properties"][arg];
    let typed = match schema.get("anyOf") {
        Some(branches) => branches
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] != "null")
            .unwrap(),
        None => schema,
    };
    typed.as_object().unwrap()
}

/// Call `tool` with `args` and check its schema and the server agree: `schema_accepts` is
/// what the tool's inputSchema says of the arguments, and the server refuses every call the
/// schema refuses. Returns the envelope.
async fn probe(
    s: &Session,
    tools: &[Value],
    tool: &str,
    args: Value,
    schema_accepts: bool,
) -> Value {
    let t = tools.iter().find(|t| t["name"] == tool).unwrap();
    let validator = jsonschema::validator_for(&t["inputSchema"]).unwrap();
    let shown: String = args.to_string().chars().take(120).collect();
    assert_eq!(validator.is_valid(&args), schema_accepts, "{tool} {shown}");
    let e = client::call(s, tool, args).await.unwrap();
    if !schema_accepts {
        assert_eq!(e["ok"], false, "{tool} {shown}: {e}");
    }
    e
}

/// The envelope's code.
fn code(e: &Value) -> &str {
    e["code"].as_str().unwrap()
}

/// Whether the envelope refuses an argument for its length ("...; the limit is N bytes").
fn too_long(e: &Value) -> bool {
    code(e) == "INVALID_REQUEST" && e["reason"].as_str().unwrap().contains("the limit is")
}

#[tokio::test]
async fn terminal_bounds_in_the_schema_are_the_servers() {
    let f = Fixture::new();
    let tools = list(&f, "terminal").await;
    let s = f.connect("terminal").await;
    let timeout = arg_schema(&tools, "run_command", "timeout_seconds");
    assert_eq!(timeout["type"], "integer");
    assert_eq!(timeout["minimum"], 1, "{timeout:?}");
    let cases = [
        (
            json!({"command": "true", "timeout_seconds": 0}),
            false,
            "INVALID_REQUEST",
        ),
        (json!({"command": "true", "timeout_seconds": 1}), true, "OK"),
        (
            json!({"command": "true", "timeout_seconds": 1.5}),
            false,
            "INVALID_REQUEST",
        ),
        (
            json!({"command": "true", "timeout_seconds": null, "cwd": null}),
            true,
            "OK",
        ),
    ];
    for (args, accepts, want) in cases {
        let e = probe(&s, &tools, "run_command", args, accepts).await;
        assert_eq!(code(&e), want, "{e}");
    }
    for tool in ["run_command", "explain_command"] {
        let command = arg_schema(&tools, tool, "command");
        assert_eq!(command["minLength"], 1, "{tool}");
        let max = command["maxLength"].as_u64().unwrap() as usize;
        assert_eq!(max, 16384, "{tool}");
        let at = json!({"command": format!("echo {}", "a".repeat(max - 5))});
        let e = probe(&s, &tools, tool, at, true).await;
        assert!(e["ok"] == true, "{tool} at the bound: {}", e["reason"]);
        let over = json!({"command": format!("echo {}", "a".repeat(max - 4))});
        assert!(
            too_long(&probe(&s, &tools, tool, over, false).await),
            "{tool}"
        );
        let empty = probe(&s, &tools, tool, json!({"command": ""}), false).await;
        assert_eq!(code(&empty), "INVALID_REQUEST", "{empty}");

        let cwd = arg_schema(&tools, tool, "cwd");
        let max = cwd["maxLength"].as_u64().unwrap() as usize;
        assert_eq!(max, 4096, "{tool}");
        // At the bound the path is looked up (it does not exist); past it, the length
        // refuses it.
        let at = json!({"command": "ls", "cwd": "d/".repeat(max / 2)});
        assert!(
            !too_long(&probe(&s, &tools, tool, at, true).await),
            "{tool}"
        );
        let over = json!({"command": "ls", "cwd": "d".repeat(max + 1)});
        assert!(
            too_long(&probe(&s, &tools, tool, over, false).await),
            "{tool}"
        );
    }
}

#[tokio::test]
async fn files_bounds_in_the_schema_are_the_servers() {
    let f = Fixture::new();
    let tools = list(&f, "files").await;
    let s = f.connect("files").await;
    let plan_id = arg_schema(&tools, "apply_plan", "plan_id");
    assert_eq!(
        (&plan_id["minLength"], &plan_id["maxLength"]),
        (&json!(1), &json!(36))
    );
    let unknown = probe(
        &s,
        &tools,
        "apply_plan",
        json!({"plan_id": "0".repeat(36)}),
        true,
    )
    .await;
    assert!(!too_long(&unknown), "{unknown}");
    let over = json!({"plan_id": "0".repeat(37)});
    assert!(too_long(
        &probe(&s, &tools, "apply_plan", over, false).await
    ));
    probe(&s, &tools, "apply_plan", json!({"plan_id": ""}), false).await;
    for arg in ["src", "dest"] {
        let bound = arg_schema(&tools, "move_file", arg);
        assert_eq!(
            (&bound["minLength"], &bound["maxLength"]),
            (&json!(1), &json!(4096)),
            "{arg}"
        );
        let other = if arg == "src" { "dest" } else { "src" };
        let mut empty = json!({other: "docs/a.pdf"});
        empty[arg] = json!("");
        probe(&s, &tools, "move_file", empty, false).await;
        let mut at = json!({other: "report.pdf"});
        at[arg] = json!("n/".repeat(2048));
        assert!(
            !too_long(&probe(&s, &tools, "move_file", at, true).await),
            "{arg}"
        );
        let mut over = json!({other: "report.pdf"});
        over[arg] = json!("n".repeat(4097));
        assert!(
            too_long(&probe(&s, &tools, "move_file", over, false).await),
            "{arg}"
        );
    }
    let subdir = arg_schema(&tools, "list_files", "subdir");
    assert_eq!(subdir["maxLength"], 4096);
    let over = json!({"subdir": "n".repeat(4097)});
    assert!(too_long(
        &probe(&s, &tools, "list_files", over, false).await
    ));
    let null = probe(&s, &tools, "list_files", json!({"subdir": null}), true).await;
    assert_eq!(code(&null), "OK", "{null}");
    // Nothing above moved anything.
    assert!(f.root().join("ws/report.pdf").exists());
}
