//! The guard's `audit_source` and `audit_report` on real folders: findings under
//! `scan_root`, the floor and ignore globs, every way out of `scan_root` (`..`, an absolute
//! path, a symlink, a folder swapped for a symlink while scans run), no `/proc/self/fd` in
//! any answer, malformed arguments, and reports rendered back in all three formats (the
//! SARIF validated against the official schema).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{CWD, RenameFlags, renameat_with};
use safety::guard::audit::{
    AUDIT_REPORT, AUDIT_SOURCE, AuditContext, AuditSeverity, AuditSourceDetail, audit_report,
    audit_source, input_schema, output_schema,
};
use safety::result::{Envelope, ResultCode};
use serde_json::{Map, Value, json};

/// A shell command built from a tool argument: CRITICAL `exec_template_literal_with_input`
/// (and LOW `missing_timeout`, `unbounded_buffer`).
const VULNERABLE_JS: &str = "const { exec } = require('child_process');\n\
function run(x) {\n  exec(`git ${x}`);\n}\nmodule.exports = { run };\n";

/// What the outside files hold: a marker no answer may quote.
const OUTSIDE_JS: &str =
    "const { exec } = require('child_process');\nexec(`OUTSIDE_MARKER ${process.argv[2]}`);\n";

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

/// `root/` with `src/server.js` (vulnerable), `lib/clean.py`, `vendor/gen.js` (vulnerable);
/// `outside/evil.js` and `root_evil/evil.js` beside it, each with the outside marker.
fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::create_dir_all(root.join("vendor")).unwrap();
    std::fs::write(root.join("src/server.js"), VULNERABLE_JS).unwrap();
    std::fs::write(root.join("lib/clean.py"), "print('hello')\n").unwrap();
    std::fs::write(root.join("vendor/gen.js"), VULNERABLE_JS).unwrap();
    let outside = base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("evil.js"), OUTSIDE_JS).unwrap();
    std::fs::create_dir_all(base.join("root_evil")).unwrap();
    std::fs::write(base.join("root_evil/evil.js"), OUTSIDE_JS).unwrap();
    Tree {
        _dir: dir,
        root,
        outside,
    }
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn source(root: &Path, value: Value) -> Envelope<AuditSourceDetail> {
    audit_source(Some(root), Some(&args(value)))
}

fn wire<D: serde::Serialize>(envelope: &Envelope<D>) -> Value {
    serde_json::to_value(envelope).unwrap()
}

fn finding_ids(envelope: &Envelope<AuditSourceDetail>) -> Vec<(String, String, String)> {
    envelope
        .detail
        .findings
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f.id.clone(),
                serde_json::to_value(f.severity)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
                f.file.clone(),
            )
        })
        .collect()
}

/// The answer quotes nothing of the outside files and no `/proc/self/fd` name.
fn assert_clean(envelope: &Value) {
    let text = envelope.to_string();
    assert!(!text.contains("OUTSIDE_MARKER"), "{text}");
    assert!(!text.contains("/proc/self/fd"), "{text}");
}

#[test]
fn a_template_literal_shell_command_under_scan_root_is_found_with_its_id() {
    let t = tree();
    let answer = source(&t.root, json!({"path": "."}));
    assert_eq!(answer.code, ResultCode::Ok, "{}", answer.reason);
    let ids = finding_ids(&answer);
    assert!(
        ids.contains(&(
            "exec_template_literal_with_input".into(),
            "CRITICAL".into(),
            "src/server.js".into()
        )),
        "{ids:?}"
    );
    let first = &answer.detail.findings.as_ref().unwrap()[0];
    assert_eq!(first.line, 3);
    assert_eq!(first.snippet, "exec(`git ${x}`);");
    let summary = answer.detail.summary.unwrap();
    assert_eq!(summary.files_scanned, 3);
    assert!(summary.by_severity.critical >= 2, "{summary:?}");
    assert!(
        answer.reason.starts_with("scanned '.': 3 files"),
        "{}",
        answer.reason
    );
    assert_clean(&wire(&answer));

    // The same file named as a folder, as a file, and absolutely: the same finding, its
    // path relative to scan_root each time.
    for path in [
        json!("src"),
        json!("src/server.js"),
        json!("./src/../src/server.js"),
        Value::from(t.root.join("src/server.js").to_str().unwrap()),
        Value::from(t.root.join("src").to_str().unwrap()),
    ] {
        let answer = source(&t.root, json!({"path": path}));
        assert_eq!(answer.code, ResultCode::Ok, "{path}: {}", answer.reason);
        let ids = finding_ids(&answer);
        assert!(
            ids.contains(&(
                "exec_template_literal_with_input".into(),
                "CRITICAL".into(),
                "src/server.js".into()
            )),
            "{path}: {ids:?}"
        );
        assert!(
            ids.iter().all(|(_, _, file)| file == "src/server.js"),
            "{ids:?}"
        );
        assert_eq!(answer.detail.summary.unwrap().files_scanned, 1, "{path}");
    }
    // The root by its absolute name.
    let answer = source(&t.root, json!({"path": t.root.to_str().unwrap()}));
    assert_eq!(answer.code, ResultCode::Ok, "{}", answer.reason);
    assert_eq!(answer.detail.summary.unwrap().files_scanned, 3);
}

#[test]
fn severity_floor_drops_the_findings_below_it() {
    let t = tree();
    let all = source(&t.root, json!({"path": "src"}));
    let severities: Vec<String> = finding_ids(&all).into_iter().map(|(_, s, _)| s).collect();
    assert!(severities.contains(&"LOW".to_string()), "{severities:?}");
    let critical = source(&t.root, json!({"path": "src", "severityFloor": "CRITICAL"}));
    assert_eq!(critical.code, ResultCode::Ok, "{}", critical.reason);
    let kept = finding_ids(&critical);
    assert!(!kept.is_empty());
    assert!(kept.iter().all(|(_, s, _)| s == "CRITICAL"), "{kept:?}");
    assert!(kept.len() < severities.len());
    let counts = critical.detail.summary.unwrap().by_severity;
    assert_eq!((counts.low, counts.medium, counts.high), (0, 0, 0));
    // A single file is filtered the same way.
    let file = source(
        &t.root,
        json!({"path": "src/server.js", "severityFloor": "CRITICAL"}),
    );
    assert_eq!(finding_ids(&file), kept);
}

#[test]
fn ignore_globs_skip_the_paths_they_match() {
    let t = tree();
    let all = source(&t.root, json!({"path": "."}));
    assert!(
        finding_ids(&all)
            .iter()
            .any(|(_, _, f)| f == "vendor/gen.js")
    );
    for globs in [
        json!(["vendor"]),
        json!(["vendor/**"]),
        json!(["**/gen.js"]),
    ] {
        let answer = source(&t.root, json!({"path": ".", "ignoreGlobs": globs}));
        assert_eq!(answer.code, ResultCode::Ok, "{}", answer.reason);
        let files: Vec<String> = finding_ids(&answer)
            .into_iter()
            .map(|(_, _, f)| f)
            .collect();
        assert!(
            !files.contains(&"vendor/gen.js".to_string()),
            "{globs}: {files:?}"
        );
        assert!(
            files.contains(&"src/server.js".to_string()),
            "{globs}: {files:?}"
        );
        assert_eq!(answer.detail.summary.unwrap().files_scanned, 2, "{globs}");
    }
}

#[test]
fn paths_that_lead_out_of_scan_root_are_path_escape_and_nothing_is_read() {
    let t = tree();
    symlink(&t.outside, t.root.join("src/out")).unwrap();
    symlink(t.outside.join("evil.js"), t.root.join("evil.js")).unwrap();
    symlink("../../outside/evil.js", t.root.join("src/rel.js")).unwrap();
    symlink("../outside", t.root.join("relout")).unwrap();
    let sibling = t.root.parent().unwrap().join("root_evil");
    for path in [
        "..".to_string(),
        "../outside".into(),
        "../outside/evil.js".into(),
        "src/../../outside/evil.js".into(),
        "src/../..".into(),
        "src/out".into(),
        "src/out/evil.js".into(),
        "evil.js".into(),
        "src/rel.js".into(),
        "relout".into(),
        "relout/evil.js".into(),
        t.outside.join("evil.js").to_str().unwrap().into(),
        t.outside.to_str().unwrap().into(),
        sibling.to_str().unwrap().into(),
        sibling.join("evil.js").to_str().unwrap().into(),
        "/".into(),
        "/etc/passwd".into(),
    ] {
        let answer = source(&t.root, json!({"path": path}));
        assert_eq!(
            answer.code,
            ResultCode::PathEscape,
            "{path}: {}",
            answer.reason
        );
        assert!(
            answer.reason.contains("outside the guard's scan_root"),
            "{}",
            answer.reason
        );
        assert_eq!(wire(&answer)["detail"], json!({}), "{path}");
        assert_clean(&wire(&answer));
    }
}

#[test]
fn a_symlinked_file_inside_the_tree_that_points_outside_is_not_read() {
    let t = tree();
    symlink(t.outside.join("evil.js"), t.root.join("src/linked.js")).unwrap();
    symlink(&t.outside, t.root.join("lib/outdir")).unwrap();
    let answer = source(&t.root, json!({"path": "."}));
    assert_eq!(answer.code, ResultCode::Ok, "{}", answer.reason);
    assert_eq!(answer.detail.summary.unwrap().files_scanned, 3);
    let files: Vec<String> = finding_ids(&answer)
        .into_iter()
        .map(|(_, _, f)| f)
        .collect();
    assert!(
        !files
            .iter()
            .any(|f| f.contains("linked") || f.contains("outdir")),
        "{files:?}"
    );
    assert_clean(&wire(&answer));
    // A symlink to a file inside the tree, named directly, is refused too: the scanner
    // reads no symlinked file.
    symlink("server.js", t.root.join("src/alias.js")).unwrap();
    let alias = source(&t.root, json!({"path": "src/alias.js"}));
    assert_eq!(alias.code, ResultCode::InvalidRequest, "{}", alias.reason);
    assert!(alias.reason.contains("symlink"), "{}", alias.reason);
    // A symlink to a folder inside is followed, its paths as the kernel names them.
    symlink("src", t.root.join("alias")).unwrap();
    let folder = source(&t.root, json!({"path": "alias"}));
    assert_eq!(folder.code, ResultCode::Ok, "{}", folder.reason);
    assert!(
        finding_ids(&folder)
            .iter()
            .all(|(_, _, f)| f == "src/server.js")
    );
}

#[test]
fn no_answer_names_a_proc_self_fd_path() {
    let t = tree();
    std::fs::write(t.root.join("src/broken.js"), "function ( {\n").unwrap();
    std::fs::write(t.root.join("src/latin1.py"), b"x = '\xe9'\n").unwrap();
    std::fs::write(
        t.root.join("src/pragma.js"),
        "// shellguard:ignore-file\nrequire('child_process').exec(`a ${b}`);\n",
    )
    .unwrap();
    for path in [".", "src", "src/broken.js", "src/latin1.py"] {
        let answer = source(&t.root, json!({"path": path}));
        assert_eq!(answer.code, ResultCode::Ok, "{}", answer.reason);
        let value = wire(&answer);
        assert_clean(&value);
        let errors = answer.detail.errors.as_ref().unwrap();
        assert!(!errors.is_empty(), "{path}: {value}");
        for error in errors {
            assert!(error.file.starts_with("src/"), "{path}: {error:?}");
        }
    }
    let answer = source(&t.root, json!({"path": "src"}));
    let skipped = answer.detail.skipped.as_ref().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].file, "src/pragma.js");
}

/// While scans of `sub` run, another thread keeps exchanging `sub` (a real folder) with a
/// symlink to the outside folder. Each scan either refuses the path or scans the real
/// folder whole: the scanner opens the handle the check opened, never the name again.
#[test]
fn a_folder_swapped_for_a_symlink_during_scans_never_leads_outside() {
    let t = tree();
    std::fs::create_dir_all(t.root.join("sub")).unwrap();
    std::fs::write(t.root.join("sub/inside.js"), VULNERABLE_JS).unwrap();
    symlink(&t.outside, t.root.join("swap")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        let (a, b) = (t.root.join("sub"), t.root.join("swap"));
        std::thread::spawn(move || {
            let mut exchanges = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).is_err() {
                    break;
                }
                exchanges += 1;
            }
            exchanges
        })
    };
    let (mut scanned, mut refused) = (0, 0);
    for _ in 0..300 {
        let answer = source(&t.root, json!({"path": "sub"}));
        assert_clean(&wire(&answer));
        match answer.code {
            ResultCode::Ok => {
                scanned += 1;
                let files: Vec<String> = finding_ids(&answer)
                    .into_iter()
                    .map(|(_, _, f)| f)
                    .collect();
                assert!(!files.is_empty());
                // The real folder, wherever it was renamed to.
                assert!(
                    files
                        .iter()
                        .all(|f| f == "sub/inside.js" || f == "swap/inside.js"),
                    "{files:?}"
                );
            }
            ResultCode::PathEscape => refused += 1,
            other => panic!("{other:?}: {}", answer.reason),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let exchanges = flipper.join().unwrap();
    assert!(exchanges > 0);
    assert_eq!(scanned + refused, 300);
}

#[test]
fn without_a_scan_root_audit_source_is_policy_denied() {
    let answer = audit_source(None, Some(&args(json!({"path": "."}))));
    assert_eq!(answer.code, ResultCode::PolicyDenied);
    assert!(!answer.ok);
    assert_eq!(
        answer.reason,
        "this guard has no [guard] scan_root: source scans are off"
    );
    assert_eq!(wire(&answer)["detail"], json!({}));
}

#[test]
fn malformed_audit_source_arguments_are_invalid_request_naming_the_argument() {
    let t = tree();
    let many_globs: Vec<String> = (0..10_000).map(|i| format!("g{i}")).collect();
    let cases: Vec<(Option<Value>, &str)> = vec![
        (None, "'path'"),
        (Some(json!({})), "'path'"),
        (Some(json!({"path": 7})), "'path'"),
        (Some(json!({"path": null})), "'path'"),
        (Some(json!({"path": ""})), "'path'"),
        (Some(json!({"path": "src\u{0}x"})), "'path'"),
        (Some(json!({"path": "a".repeat(1 << 20)})), "'path'"),
        (Some(json!({"path": "missing"})), "'path'"),
        (Some(json!({"path": "src/missing.js"})), "'path'"),
        (Some(json!({"path": "missing/x.js"})), "'path'"),
        (
            Some(json!({"path": ".", "ignoreGlobs": "vendor"})),
            "'ignoreGlobs'",
        ),
        (
            Some(json!({"path": ".", "ignoreGlobs": ["a", 3]})),
            "'ignoreGlobs'[1]",
        ),
        (
            Some(json!({"path": ".", "ignoreGlobs": many_globs})),
            "'ignoreGlobs'",
        ),
        (
            Some(json!({"path": ".", "ignoreGlobs": ["x".repeat(2000)]})),
            "'ignoreGlobs'[0]",
        ),
        (
            Some(json!({"path": ".", "ignoreGlobs": ["a[b"]})),
            "'ignoreGlobs'",
        ),
        (
            Some(json!({"path": ".", "severityFloor": "SEVERE"})),
            "'severityFloor'",
        ),
        (
            Some(json!({"path": ".", "severityFloor": "low"})),
            "'severityFloor'",
        ),
        (
            Some(json!({"path": ".", "severityFloor": 3})),
            "'severityFloor'",
        ),
        (Some(json!({"path": ".", "recursive": true})), "'recursive'"),
    ];
    for (value, names) in cases {
        let map = value.clone().map(args);
        let answer = audit_source(Some(&t.root), map.as_ref());
        assert_eq!(
            answer.code,
            ResultCode::InvalidRequest,
            "{value:?}: {}",
            answer.reason
        );
        assert!(answer.reason.contains(names), "{names}: {}", answer.reason);
        assert!(answer.reason.len() < 1024, "{}", answer.reason.len());
        assert_eq!(wire(&answer)["detail"], json!({}));
    }
    // A file of a language the scanner does not read is scanned with an error entry.
    std::fs::write(t.root.join("notes.txt"), "x").unwrap();
    let answer = source(&t.root, json!({"path": "notes.txt"}));
    assert_eq!(answer.code, ResultCode::Ok, "{}", answer.reason);
    assert_eq!(
        answer.detail.errors.as_ref().unwrap()[0].message,
        "unsupported file type"
    );
}

fn report(findings: Value, format: &str) -> Envelope<safety::guard::audit::AuditReportDetail> {
    audit_report(Some(&args(json!({"findings": findings, "format": format}))))
}

fn sarif_validator() -> jsonschema::Validator {
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scan/tests/data/sarif-schema-2.1.0.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

/// Render `findings` in all three formats and check each.
fn check_all_formats(findings: Value, expect_ids: &[&str], expect_file: &str) {
    let markdown = report(findings.clone(), "markdown");
    assert_eq!(markdown.code, ResultCode::Ok, "{}", markdown.reason);
    assert_eq!(markdown.detail.mime_type.as_deref(), Some("text/markdown"));
    let text = markdown.detail.report.unwrap();
    assert!(text.starts_with("# safe-mcp scan report"), "{text}");
    for id in expect_ids {
        assert!(text.contains(&format!("`{id}`")), "{id}: {text}");
    }
    assert!(text.contains(expect_file), "{text}");

    let as_json = report(findings.clone(), "json");
    assert_eq!(as_json.code, ResultCode::Ok, "{}", as_json.reason);
    assert_eq!(
        as_json.detail.mime_type.as_deref(),
        Some("application/json")
    );
    let parsed: Value = serde_json::from_str(&as_json.detail.report.unwrap()).unwrap();
    let ids: Vec<&str> = parsed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, expect_ids);
    // The scanner's own JSON reads back to the same JSON.
    let again = report(parsed.clone(), "json");
    assert_eq!(
        serde_json::from_str::<Value>(&again.detail.report.unwrap()).unwrap(),
        parsed
    );

    let sarif = report(findings, "sarif");
    assert_eq!(sarif.code, ResultCode::Ok, "{}", sarif.reason);
    assert_eq!(
        sarif.detail.mime_type.as_deref(),
        Some("application/sarif+json")
    );
    let sarif: Value = serde_json::from_str(&sarif.detail.report.unwrap()).unwrap();
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let sarif_ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(sarif_ids, expect_ids);
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        expect_file
    );
}

#[test]
fn audit_report_renders_audit_sources_detail_in_every_format() {
    let t = tree();
    let answer = source(&t.root, json!({"path": "src"}));
    let detail = wire(&answer)["detail"].clone();
    let ids: Vec<String> = finding_ids(&answer)
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert!(ids.contains(&"exec_template_literal_with_input"));
    check_all_formats(detail.clone(), &ids, "src/server.js");
    // The whole envelope handed back works too.
    check_all_formats(wire(&answer), &ids, "src/server.js");
    // The counts are the detail's.
    let markdown = report(detail, "markdown").detail.report.unwrap();
    assert!(markdown.contains("- Files scanned: 1"), "{markdown}");
}

#[test]
fn audit_report_renders_a_bare_findings_array_in_every_format() {
    // mcp-stdio-shellguard's finding shape: `id`, camelCase, no language.
    let findings = json!([
        {"id": "exec_dynamic_string", "severity": "CRITICAL", "file": "dist/server.js",
         "line": 12, "column": 3, "snippet": "exec(cmd)", "message": "m", "suggestedFix": "f"},
        {"id": "missing_timeout", "severity": "LOW", "file": "dist/server.js",
         "line": 12, "column": 3, "snippet": "exec(cmd)"},
    ]);
    check_all_formats(
        findings,
        &["exec_dynamic_string", "missing_timeout"],
        "dist/server.js",
    );
    let empty = report(json!([]), "sarif");
    assert_eq!(empty.code, ResultCode::Ok);
    let sarif: Value = serde_json::from_str(&empty.detail.report.unwrap()).unwrap();
    assert!(sarif_validator().is_valid(&sarif));
}

#[test]
fn audit_report_refuses_unknown_rules_and_malformed_input_naming_them() {
    let good = json!({"id": "missing_timeout", "file": "a.js", "line": 1, "column": 1});
    let too_many: Vec<Value> = (0..10_001).map(|_| good.clone()).collect();
    let cases: Vec<(Option<Value>, &str)> = vec![
        (
            Some(
                json!({"findings": [good, {"id": "rm_rf", "file": "a.js", "line": 1, "column": 1}], "format": "json"}),
            ),
            "findings[1]: unknown rule id \"rm_rf\"",
        ),
        (
            Some(
                json!({"findings": {"findings": [good, good, {"file": "a.js"}]}, "format": "sarif"}),
            ),
            "findings[2]",
        ),
        (
            Some(
                json!({"findings": [{"id": "missing_timeout", "file": "a.js", "line": "1", "column": 1}], "format": "json"}),
            ),
            "'line'",
        ),
        (
            Some(
                json!({"findings": [{"id": "missing_timeout", "severity": "SEVERE", "file": "a.js", "line": 1, "column": 1}], "format": "json"}),
            ),
            "'severity'",
        ),
        (
            Some(json!({"findings": [7], "format": "json"})),
            "findings[0]: must be an object",
        ),
        (
            Some(json!({"findings": too_many, "format": "json"})),
            "at most 10000",
        ),
        (
            Some(json!({"findings": "x", "format": "json"})),
            "'findings'",
        ),
        (
            Some(json!({"findings": {"summary": {}}, "format": "json"})),
            "'findings'",
        ),
        (Some(json!({"findings": [], "format": "pdf"})), "'format'"),
        (Some(json!({"findings": [], "format": 1})), "'format'"),
        (Some(json!({"findings": []})), "'format'"),
        (Some(json!({"format": "json"})), "'findings'"),
        (
            Some(json!({"findings": [], "format": "json", "x": 1})),
            "'x'",
        ),
        (None, "'format'"),
    ];
    for (value, names) in cases {
        let map = value.clone().map(args);
        let answer = audit_report(map.as_ref());
        assert_eq!(
            answer.code,
            ResultCode::InvalidRequest,
            "{names}: {}",
            answer.reason
        );
        assert!(answer.reason.contains(names), "{names}: {}", answer.reason);
        assert_eq!(wire(&answer)["detail"], json!({}));
    }
}

#[test]
fn the_schemas_name_shellguards_arguments_and_are_closed() {
    let source = Value::Object(input_schema(AUDIT_SOURCE).unwrap());
    assert_eq!(source["required"], json!(["path"]), "{source}");
    assert_eq!(source["additionalProperties"], false, "{source}");
    for key in ["path", "ignoreGlobs", "severityFloor"] {
        assert!(source["properties"].get(key).is_some(), "{key}: {source}");
    }
    assert_eq!(
        source["properties"]["ignoreGlobs"]["anyOf"][0]["maxItems"], 256,
        "{source}"
    );
    let report = Value::Object(input_schema(AUDIT_REPORT).unwrap());
    let mut required: Vec<&str> = report["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["findings", "format"], "{report}");
    let text = report.to_string();
    for format in ["markdown", "json", "sarif"] {
        assert!(text.contains(format), "{text}");
    }
    for tool in [AUDIT_SOURCE, AUDIT_REPORT] {
        let schema = output_schema(tool).unwrap();
        assert!(!Value::Object(schema).to_string().contains("\"format\":\""));
    }
    assert!(input_schema("guard_exec").is_none() && output_schema("guard_exec").is_none());
}

#[test]
fn findings_in_tests_say_so_and_are_one_severity_lower() {
    let t = tree();
    std::fs::create_dir_all(t.root.join("tests")).unwrap();
    std::fs::write(t.root.join("tests/server.js"), VULNERABLE_JS).unwrap();
    let answer = source(&t.root, json!({"path": "."}));
    assert_eq!(answer.code, ResultCode::Ok, "{}", answer.reason);
    let findings = answer.detail.findings.as_ref().unwrap();
    let of = |file: &str| {
        findings
            .iter()
            .find(|f| f.file == file && f.id == "exec_template_literal_with_input")
            .unwrap_or_else(|| panic!("no finding in {file}: {findings:?}"))
    };
    let (shipped, test) = (of("src/server.js"), of("tests/server.js"));
    assert_eq!(shipped.context, AuditContext::Production);
    assert_eq!(test.context, AuditContext::Test);
    assert_eq!(shipped.severity, AuditSeverity::Critical);
    assert_eq!(test.severity, AuditSeverity::High);
    assert_eq!(
        wire(&answer)["detail"]["findings"][0]["context"],
        "production"
    );
}
