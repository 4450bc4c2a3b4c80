//! End to end through `scan::cli::run`: exit codes, formats, the parse-error path, ignores,
//! the size cap, SARIF schema validation, and a self-scan of this repository.

use std::fs;
use std::path::Path;

use crate::common::{parse, run_with, sarif_validator, write};

const VULNERABLE: &str =
    "import { exec } from 'child_process';\nexport function run(cmd) { exec(cmd); }\n";
const SAFE: &str = "import { execFile } from 'child_process';\nexecFile('git', ['status'], { timeout: 5000, maxBuffer: 1 << 20 });\n";

fn json_report(dir: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = dir.join("report.json");
    let root = dir.join("src");
    let mut argv = vec![
        root.to_str().expect("utf8"),
        "--format",
        "json",
        "--output",
        out.to_str().expect("utf8"),
    ];
    argv.extend_from_slice(extra);
    let code = run_with(&argv);
    let report =
        serde_json::from_str(&fs::read_to_string(&out).expect("report written")).expect("json");
    (code, report)
}

#[test]
fn exit_zero_on_clean_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/ok.ts", SAFE);
    let (code, report) = json_report(dir.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(report["summary"]["files_scanned"], 1);
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(0));
}

#[test]
fn exit_one_on_findings_and_floor_filters() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/bad.ts", VULNERABLE);
    let (code, report) = json_report(dir.path(), &[]);
    assert_eq!(code, 1);
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|f| f["rule_id"].as_str())
        .collect();
    assert_eq!(
        ids,
        ["exec_dynamic_string", "unbounded_buffer", "missing_timeout"]
    );
    let first = &report["findings"][0];
    assert_eq!(first["severity"], "CRITICAL");
    assert_eq!(first["line"], 2);
    assert_eq!(first["column"], 28);
    assert_eq!(
        first["file"].as_str().map(|f| f.ends_with("src/bad.ts")),
        Some(true)
    );
    assert!(
        first["suggested_fix"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );

    let (code, report) = json_report(dir.path(), &["--severity-floor", "critical"]);
    assert_eq!(code, 1);
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(1));

    write(
        dir.path(),
        "src/bad.ts",
        "import { exec } from 'child_process';\nexec('ls');\n",
    );
    let (code, _) = json_report(dir.path(), &["--severity-floor", "MEDIUM"]);
    assert_eq!(
        code, 0,
        "LOW findings below a MEDIUM floor leave the exit code clean"
    );
}

#[test]
fn parse_error_exits_two_and_other_files_are_still_scanned() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/broken.ts", "const = ;\n");
    write(dir.path(), "src/bad.ts", VULNERABLE);
    write(dir.path(), "src/broken.py", "def f(:\n");
    let (code, report) = json_report(dir.path(), &[]);
    assert_eq!(code, 2);
    assert_eq!(report["summary"]["files_scanned"], 1);
    assert_eq!(report["errors"].as_array().map(Vec::len), Some(2));
    assert!(
        report["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("parse error"))
    );
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(3));
}

#[test]
fn usage_errors_are_clap_errors_which_exit_two() {
    for argv in [
        &["x", "--format", "xml"][..],
        &["x", "--severity-floor", "HUGE"],
        &[],
        &["x", "--bogus"],
    ] {
        let error = parse(argv).expect_err("rejected");
        assert_eq!(error.exit_code(), 2, "{argv:?}");
    }
}

#[test]
fn missing_path_exits_two() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope");
    assert_eq!(run_with(&[missing.to_str().expect("utf8")]), 2);
}

#[test]
fn node_modules_and_git_skipped_dist_scanned_ignore_globs_apply() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/node_modules/dep/index.js", VULNERABLE);
    write(dir.path(), "src/.git/hooks/x.js", VULNERABLE);
    write(dir.path(), "src/dist/index.js", VULNERABLE);
    write(dir.path(), "src/.hidden/tool.mjs", VULNERABLE);
    write(dir.path(), "src/vendor/x.cts", VULNERABLE);
    write(dir.path(), "src/notes.txt", VULNERABLE);
    let (_, report) = json_report(dir.path(), &["--ignore", "vendor/**"]);
    let mut files: Vec<String> = report["findings"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|f| {
            f["file"]
                .as_str()
                .map(|p| p.rsplit("src/").next().unwrap_or(p).to_string())
        })
        .collect();
    files.sort();
    files.dedup();
    assert_eq!(files, [".hidden/tool.mjs", "dist/index.js"]);
}

#[test]
fn oversized_files_are_listed_as_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "src/big.js",
        &format!("{VULNERABLE}{}", "// pad\n".repeat(100)),
    );
    let (code, report) = json_report(dir.path(), &["--max-file-size", "100"]);
    assert_eq!(code, 0);
    assert_eq!(report["summary"]["files_skipped"], 1);
    assert!(
        report["skipped"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("size cap"))
    );
}

#[test]
fn python_and_rust_pragmas_skip_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "src/a.py",
        "# safe-mcp: ignore-file\nimport os\nos.system(cmd)\n",
    );
    write(
        dir.path(),
        "src/b.js",
        "// shellguard:ignore-file\nrequire('child_process').exec(x);\n",
    );
    let (code, report) = json_report(dir.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(report["summary"]["files_skipped"], 2);
}

#[test]
fn markdown_and_text_render() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/bad.ts", VULNERABLE);
    let report = scan::scan(&scan::ScanOptions::new(dir.path().join("src"))).expect("scan");
    let markdown = report.render(scan::report::Format::Markdown).expect("md");
    assert!(markdown.contains("| CRITICAL | `exec_dynamic_string` |"));
    let text = report.render(scan::report::Format::Text).expect("text");
    assert!(text.contains("CRITICAL exec_dynamic_string"));
    // One file, no errors: the summary's counts agree with their nouns.
    assert!(text.contains("1 file scanned ("), "{text}");
    assert!(text.contains(", 0 errors,"), "{text}");
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/bad.ts", VULNERABLE);
    write(
        dir.path(),
        "src/with space/ü.py",
        "import subprocess\nsubprocess.run(f'ls {d}', shell=True)\n",
    );
    write(dir.path(), "src/broken.ts", "const = ;\n");
    let out = dir.path().join("out.sarif");
    let root = dir.path().join("src");
    let code = run_with(&[
        root.to_str().expect("utf8"),
        "--format",
        "sarif",
        "--output",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 2);
    let sarif: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&out).expect("written")).expect("json");
    let validator = sarif_validator();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    let run = &sarif["runs"][0];
    assert_eq!(
        run["tool"]["driver"]["rules"].as_array().map(Vec::len),
        Some(13)
    );
    assert_eq!(
        run["tool"]["driver"]["rules"][0]["properties"]["security-severity"],
        "9.5"
    );
    let result = &run["results"][0];
    assert_eq!(result["level"], "error");
    assert!(
        result["locations"][0]["physicalLocation"]["region"]["startColumn"]
            .as_u64()
            .is_some()
    );
    assert!(
        result["partialFingerprints"]["safeMcpFindingHash/v1"]
            .as_str()
            .is_some_and(|h| h.len() == 32)
    );
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
    let uris: Vec<&str> = run["results"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .collect();
    assert!(
        uris.iter().any(|u| u.contains("with%20space/%C3%BC.py")),
        "{uris:?}"
    );
}

#[test]
fn sarif_fingerprint_survives_lines_moving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("src");
    write(dir.path(), "src/bad.ts", VULNERABLE);
    let before = scan::scan(&scan::ScanOptions::new(&root))
        .expect("scan")
        .to_sarif();
    write(
        dir.path(),
        "src/bad.ts",
        &format!("// a new header comment\n\n{VULNERABLE}"),
    );
    let after = scan::scan(&scan::ScanOptions::new(&root))
        .expect("scan")
        .to_sarif();
    let fingerprint =
        |s: &serde_json::Value| s["runs"][0]["results"][0]["partialFingerprints"].clone();
    assert_eq!(fingerprint(&before), fingerprint(&after));
    assert_ne!(
        before["runs"][0]["results"][0]["locations"],
        after["runs"][0]["results"][0]["locations"]
    );
}

#[test]
fn empty_sarif_validates() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/ok.ts", SAFE);
    let sarif = scan::scan(&scan::ScanOptions::new(dir.path().join("src")))
        .expect("scan")
        .to_sarif();
    assert!(sarif_validator().is_valid(&sarif));
}

/// Findings the self-scan is expected to produce, each with the reason it is acceptable.
const EXPLAINED: [(&str, &str, &str); 8] = [
    (
        "crates/safety/src/exec/",
        "exec_file_dynamic",
        "the terminal server's executor runs the program the policy approved, argv only, no shell",
    ),
    (
        "crates/safe-mcp/src/client.rs",
        "exec_file_dynamic",
        "the black-box client starts the server binary it was given",
    ),
    (
        "crates/safe-mcp/src/demo",
        "exec_file_dynamic",
        "the demo starts the server binary it was given",
    ),
    (
        "crates/safe-mcp/examples/bench/line_client",
        "exec_file_dynamic",
        "the benchmarks' line client starts the server binary it was given",
    ),
    (
        "crates/safety/examples/redact_corpus",
        "exec_file_dynamic",
        "the corpus measurement runs the detect-secrets executable it was given",
    ),
    (
        "crates/safe-mcp/examples/bench/bench_guard",
        "exec_file_dynamic",
        "the guard benchmark times `safe-mcp exec` of the server binary it was given",
    ),
    (
        "crates/safe-mcp/examples/hook_bench",
        "exec_file_dynamic",
        "the hook benchmark times the server binary and the Python interpreter it found",
    ),
    (
        "/tests/",
        "",
        "tests start the built binary, or run /bin/sh -c on purpose (the parser's differential test)",
    ),
];

/// The self-scan: this repository's own code. This crate's test fixtures are deliberately
/// vulnerable and are ignored. Every other finding must be one of `EXPLAINED`, nothing may be
/// CRITICAL, and every file must parse.
#[test]
fn self_scan_of_this_repository_is_clean_or_explained() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut options = scan::ScanOptions::new(&repository);
    options.ignore = vec!["crates/scan/tests/**".to_string(), "target/**".to_string()];
    let report = scan::scan(&options).expect("scan");
    assert!(report.errors.is_empty(), "{:#?}", report.errors);
    let unexplained: Vec<_> = report
        .findings
        .iter()
        .filter(|f| {
            f.severity == scan::rule::Severity::Critical
                || !EXPLAINED.iter().any(|(place, rule, _)| {
                    f.file.contains(place) && (rule.is_empty() || f.rule_id == *rule)
                })
        })
        .collect();
    assert!(unexplained.is_empty(), "{unexplained:#?}");
}

/// A published declaration file that oxc (rightly) refuses does not fail the scan: it holds no
/// runtime code, so it is listed as skipped with the reason; a broken `.ts` file still fails.
#[test]
fn unparsable_type_declarations_are_skipped_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("sort.d.cts"),
        "export = function maybeSort(m: number[][], owned: boolean): number[][];\n",
    )
    .unwrap();
    std::fs::write(
        src.join("broken.ts"),
        "export = function maybeSort(m: number[][]): number[][];\n",
    )
    .unwrap();
    let report = scan::scan(&scan::ScanOptions::new(&src)).expect("scan");
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.file.ends_with("sort.d.cts") && s.reason.contains("no runtime code")),
        "{:?}",
        report.skipped
    );
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    assert!(report.errors[0].file.ends_with("broken.ts"));
}
