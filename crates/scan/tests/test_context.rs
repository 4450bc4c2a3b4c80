//! Tests and development scripts: the same finding in `src/` and in `tests/`, `*.test.*`,
//! `scripts/`, `examples/`, `*_test.py`; the latter carry `context: "test"`, one severity
//! lower, a `test` tag in SARIF, and `--exclude-tests` drops them.

use std::fs;
use std::path::Path;

use scan::finding::Context;

use crate::common::{run_with, write};

const JS: &str = "const { exec } = require('child_process');\nexec(`ls ${process.argv[2]}`);\n";
const PY: &str = "import os\nimport sys\nos.system('ls ' + sys.argv[1])\n";

fn tree(dir: &Path) {
    for (path, text) in [
        ("src/app.js", JS),
        ("src/app.test.js", JS),
        ("tests/helper.js", JS),
        ("scripts/release.js", JS),
        ("examples/demo.js", JS),
        ("src/tool.py", PY),
        ("src/tool_test.py", PY),
        ("src/test_tool.py", PY),
    ] {
        write(dir, path, text);
    }
}

fn scan_json(dir: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = dir.join("report.json");
    let _ = fs::remove_file(&out);
    let root = dir.join("t");
    let mut argv = vec![
        root.to_str().unwrap(),
        "--format",
        "json",
        "--output",
        out.to_str().unwrap(),
    ];
    argv.extend_from_slice(extra);
    let code = run_with(&argv);
    (
        code,
        serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap(),
    )
}

#[test]
fn paths_decide_the_context() {
    for (path, want) in [
        ("src/app.js", Context::Production),
        ("src/app.test.ts", Context::Test),
        ("lib/app.spec.js", Context::Test),
        ("tests/x.py", Context::Test),
        ("a/__tests__/x.js", Context::Test),
        ("scripts/build.js", Context::Test),
        ("examples/x.rs", Context::Test),
        ("server/evals/core/validator.py", Context::Test),
        ("benchmarks/run.py", Context::Test),
        ("src/evaluate.py", Context::Production),
        ("pkg/test_x.py", Context::Test),
        ("pkg/x_test.py", Context::Test),
        ("pkg/conftest.py", Context::Test),
        ("pkg/contest.py", Context::Production),
        ("src/testing.js", Context::Production),
        ("src/latest.py", Context::Production),
    ] {
        assert_eq!(Context::of(Path::new(path)), want, "{path}");
    }
}

#[test]
fn test_code_is_one_severity_lower_and_can_be_excluded() {
    let dir = tempfile::tempdir().unwrap();
    tree(&dir.path().join("t"));
    let (code, report) = scan_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let findings = report["findings"].as_array().unwrap();
    let of = |file: &str| -> Vec<&serde_json::Value> {
        findings
            .iter()
            .filter(|f| f["file"].as_str().unwrap().ends_with(file))
            .collect()
    };
    let production = of("src/app.js");
    assert!(!production.is_empty());
    for f in &production {
        assert_eq!(f["context"], "production");
    }
    let sev = |f: &serde_json::Value| f["severity"].as_str().unwrap().to_string();
    let top = production
        .iter()
        .map(|f| sev(f))
        .max_by_key(|s| rank(s))
        .unwrap();
    for file in [
        "src/app.test.js",
        "tests/helper.js",
        "scripts/release.js",
        "examples/demo.js",
    ] {
        let found = of(file);
        assert_eq!(found.len(), production.len(), "{file}");
        for (t, p) in found.iter().zip(&production) {
            assert_eq!(t["context"], "test", "{file}");
            assert_eq!(t["rule_id"], p["rule_id"]);
            assert_eq!(
                rank(&sev(t)) + 1,
                rank(&sev(p)).max(1),
                "{file}: {t} vs {p}"
            );
        }
    }
    for file in ["src/tool_test.py", "src/test_tool.py"] {
        assert!(of(file).iter().all(|f| f["context"] == "test"), "{file}");
    }
    assert!(
        rank(&top) >= 2,
        "the production finding is at least HIGH: {top}"
    );

    // --exclude-tests: only production findings remain.
    let (_, report) = scan_json(dir.path(), &["--exclude-tests"]);
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert!(
        findings.iter().all(|f| f["context"] == "production"),
        "{findings:?}"
    );

    // SARIF tags them, so code scanning can filter.
    let out = dir.path().join("report.sarif");
    let root = dir.path().join("t");
    let argv = [
        root.to_str().unwrap(),
        "--format",
        "sarif",
        "--output",
        out.to_str().unwrap(),
    ];
    run_with(&argv);
    let sarif: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let tagged = results
        .iter()
        .filter(|r| r["properties"]["tags"] == serde_json::json!(["test"]))
        .count();
    let test_context = results
        .iter()
        .filter(|r| r["properties"]["context"] == "test")
        .count();
    assert!(tagged > 0 && tagged == test_context);
}

fn rank(severity: &str) -> usize {
    ["LOW", "MEDIUM", "HIGH", "CRITICAL"]
        .iter()
        .position(|s| *s == severity)
        .unwrap()
}
