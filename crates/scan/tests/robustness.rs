//! Hostile trees, performed for real in temporary folders: nesting meant to exhaust the stack,
//! inputs that were quadratic, `--output` pointed at links and sources, file names that forge
//! report lines, names that become URI schemes, links, FIFOs and devices in and as the tree,
//! and files whose syntax tree would not fit in memory.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use crate::common::{run_with, sarif_validator, write};

fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf8 path")
}

/// Run `work` on a thread with a 256 KiB stack: a recursion over a 100 000-level input on the
/// caller's stack would overflow it and abort the test binary.
fn on_small_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn_scoped(scope, work)
            .expect("spawn")
            .join()
            .expect("no panic")
    })
}

/// A scan to a JSON report file: (exit code, report).
fn json_scan(root: &Path, out: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut argv = vec![utf8(root), "--format", "json", "--output", utf8(out)];
    argv.extend_from_slice(extra);
    let code = run_with(&argv);
    let report = serde_json::from_str(&fs::read_to_string(out).expect("report written"))
        .expect("report is JSON");
    (code, report)
}

const VULNERABLE: &str =
    "import { exec } from 'child_process';\nexport function run(cmd) { exec(cmd); }\n";

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
}

// ---------------------------------------------------------------------------------------------
// Nesting depth

const LEVELS: usize = 100_000;

fn deep_files() -> Vec<(&'static str, String)> {
    vec![
        (
            "parens.js",
            format!("x = {}1{};\n", "(".repeat(LEVELS), ")".repeat(LEVELS)),
        ),
        ("not.js", format!("x = {}1;\n", "!".repeat(LEVELS))),
        ("member.ts", format!("x = a{};\n", "\n.b".repeat(LEVELS))),
        ("arrows.mjs", format!("f = {}1;\n", "a => ".repeat(LEVELS))),
        (
            "parens.py",
            format!("x = {}1{}\n", "(".repeat(LEVELS), ")".repeat(LEVELS)),
        ),
        ("attributes.py", format!("x = a{}\n", ".b".repeat(LEVELS))),
        ("sum.py", format!("x = 1{}\n", " + 1".repeat(LEVELS))),
        (
            "parens.rs",
            format!(
                "fn f() {{ let x = {}1{}; }}\n",
                "(".repeat(LEVELS),
                ")".repeat(LEVELS)
            ),
        ),
        (
            "references.rs",
            format!("fn f() {{ Command::new({}x); }}\n", "&".repeat(LEVELS)),
        ),
        (
            "blocks.rs",
            format!("fn f() {}{}\n", "{".repeat(LEVELS), "}".repeat(LEVELS)),
        ),
    ]
}

/// A JSON report of a scan that must exit 2: `ok.js` still reported, and each of `names` an
/// error for nesting past the bound.
fn assert_only_too_deep(code: i32, report: &serde_json::Value, names: &[String]) {
    assert_eq!(code, 2, "a too-deep file is an error");
    // The other file is scanned and reported.
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["file"]
                .as_str()
                .is_some_and(|file| file.ends_with("/ok.js") || file == "ok.js")),
        "{report:#}"
    );
    let errors = report["errors"].as_array().expect("errors");
    for name in names {
        assert!(
            errors.iter().any(|e| {
                e["file"]
                    .as_str()
                    .is_some_and(|f| f.ends_with(&format!("/{name}")))
                    && e["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("nesting deeper than the scanner's bound"))
            }),
            "{name}: {errors:#?}"
        );
    }
}

#[test]
fn hundred_thousand_nesting_levels_are_an_error_for_that_file_in_every_language() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    write(&src, "ok.js", VULNERABLE);
    let deep = deep_files();
    for (name, text) in &deep {
        write(&src, name, text);
    }
    let out = dir.path().join("report.json");
    let (code, report) = on_small_stack(|| json_scan(&src, &out, &[]));
    let names: Vec<String> = deep.iter().map(|(name, _)| name.to_string()).collect();
    assert_only_too_deep(code, &report, &names);
    // The in-memory entry point holds as well, on the same small stack.
    for (name, text) in &deep {
        let result = on_small_stack(|| scan::scan_text(Path::new(name), text));
        assert!(
            matches!(result, Err(scan::error::SourceError::TooDeep { .. })),
            "{name}: {result:?}"
        );
    }
}

#[test]
fn nesting_that_fools_a_lexer_is_an_error_for_that_file() {
    // Each form hid 150 000 levels from the lexer's estimate and aborted the whole scan with
    // a stack overflow: a lone CR or U+2028 ends a `//` comment, a `/` after a postfix `++`
    // divides, a `/` after `if (..)` or after a block starts a regular expression (whose `'`
    // the lexer took for a string to the end of the line), and JSX text is not code.
    let n = 150_000;
    let parens = format!("{}1{}", "(".repeat(n), ")".repeat(n));
    let forms = [
        ("cr", format!("x = 1 // c\r x = {parens};\n")),
        ("ls", format!("x = 1 // c\u{2028} x = {parens};\n")),
        ("postfix", format!("x = a++ / {parens} / 1;\n")),
        ("condition", format!("if (a) /'/.test(b), {parens};\n")),
        (
            "block",
            format!("function f(){{}}\n/'/.test(b), {};\n", "(".repeat(n)),
        ),
        ("jsx", format!("x = {};\n", "<a>,".repeat(n))),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    write(&src, "ok.js", VULNERABLE);
    let mut names = Vec::new();
    for (form, text) in &forms {
        for extension in ["js", "ts", "tsx"] {
            // The JSX form is a type assertion in `.ts`; the others nest in every dialect.
            if *form == "jsx" && extension == "ts" {
                continue;
            }
            let name = format!("{form}.{extension}");
            write(&src, &name, text);
            names.push(name);
        }
    }
    let out = dir.path().join("report.json");
    let (code, report) = json_scan(&src, &out, &[]);
    assert_only_too_deep(code, &report, &names);
}

#[test]
fn flat_javascript_is_not_refused_as_deep() {
    // 13 000 top-level functions (262 KB) without a `;` between them added up in the lexer's
    // estimate and were refused as nested past the bound.
    let text: String = (0..13_000)
        .map(|i| format!("function f{i}() {{}}\n"))
        .chain(std::iter::once(
            "const cp = require('child_process');\nfunction run(x) { cp.exec(x); }\n".to_string(),
        ))
        .collect();
    let findings = scan::scan_text(Path::new("flat.js"), &text).expect("scans");
    assert!(findings.iter().any(|f| f.rule_id == "exec_dynamic_string"));
}

#[test]
fn nesting_within_the_bound_is_still_analysed() {
    // 2 000 nested parentheses (past the 1 500 that used to abort) around a real finding.
    let text = format!(
        "const cp = require('child_process');\ncp.exec({}cmd{});\n",
        "(".repeat(2000),
        ")".repeat(2000)
    );
    let findings = on_small_stack(|| scan::scan_text(Path::new("a.js"), &text)).expect("scans");
    assert!(findings.iter().any(|f| f.rule_id == "exec_dynamic_string"));
}

// ---------------------------------------------------------------------------------------------
// Linear time: each of these took minutes before (nested Rust functions: 4 000 levels 10 s in a
// debug build, growing with the square of the depth). No timing is asserted; each test
// finishing, with its finding, is the evidence.

/// `text`, scanned as `file`, has a finding of `rule` tainted by tool input.
fn assert_tainted(file: &str, text: &str, rule: &str) {
    let findings = scan::scan_text(Path::new(file), text).expect("scans");
    assert!(
        findings
            .iter()
            .any(|f| f.rule_id == rule && f.tainted_from_tool_input),
        "{findings:?}"
    );
}

/// `text`, scanned as `file`, is refused as nested past the bound.
fn assert_too_deep(file: &str, text: &str) {
    assert!(matches!(
        scan::scan_text(Path::new(file), text),
        Err(scan::error::SourceError::TooDeep { .. })
    ));
}

#[test]
fn nested_rust_functions_are_linear() {
    // 20 000 levels: analysed (a tree depth of 40 000, within the bound).
    let levels = 20_000;
    let text = format!(
        "{}#[tool]\nfn run(cmd: String) {{ let c = cmd; std::process::Command::new(c); }}\n{}",
        "fn f() {\n".repeat(levels),
        "}\n".repeat(levels)
    );
    assert_tainted("nested.rs", &text, "exec_file_dynamic");
    // 50 000 levels: past the depth bound, refused at once.
    let levels = 50_000;
    let text = format!("{}{}", "fn f() {\n".repeat(levels), "}\n".repeat(levels));
    assert_too_deep("nested.rs", &text);
}

#[test]
fn wide_rust_files_are_linear() {
    // 9 000 tool functions side by side, each with a let and a sink: every function used to
    // look back through its siblings, every sink through every scope.
    let function = "#[tool]\nfn run(cmd: String) {\n    let mut c = std::process::Command::new(\"sh\");\n    c.arg(\"-c\").arg(&cmd);\n}\n";
    let text = function.repeat(9_000);
    let findings = scan::scan_text(Path::new("wide.rs"), &text).expect("scans");
    assert_eq!(
        findings
            .iter()
            .filter(|f| f.rule_id == "shell_true_option" && f.tainted_from_tool_input)
            .count(),
        9_000
    );
}

#[test]
fn nested_javascript_calls_are_linear() {
    // Taint through 10 000 nested calls of a local function: each argument used to be walked
    // again for every call around it.
    let levels = 10_000;
    let text = format!(
        "import {{ exec }} from 'child_process';\nfunction f(x) {{ return x; }}\nserver.tool('run', async ({{ cmd }}) => {{\n  exec({}cmd{});\n}});\n",
        "f(".repeat(levels),
        ")".repeat(levels)
    );
    assert_tainted("nested.js", &text, "exec_dynamic_string");
    let levels = 50_000;
    let text = format!("x = {}1{};", "f(".repeat(levels), ")".repeat(levels));
    assert_too_deep("nested.js", &text);
}

#[test]
fn nested_python_calls_are_linear() {
    let levels = 15_000;
    let text = format!(
        "import os\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\ndef f(x):\n    return x\n@mcp.tool()\ndef run(cmd):\n    os.system({}cmd{})\n",
        "f(".repeat(levels),
        ")".repeat(levels)
    );
    assert_tainted("nested.py", &text, "exec_dynamic_string");
    let levels = 50_000;
    let text = format!("x = {}1{}\n", "f(".repeat(levels), ")".repeat(levels));
    assert_too_deep("nested.py", &text);
}

#[test]
fn python_2_statements_are_a_syntax_error_of_that_file() {
    // tree-sitter-python took `print "x"`; ruff's parser, as CPython 3, does not.
    let text = "import os\nprint \"x\"\nos.system(input())\n";
    assert!(matches!(
        scan::scan_text(Path::new("old.py"), text),
        Err(scan::error::SourceError::Syntax { line: 2 })
    ));
}

#[test]
fn python_gaps_and_comment_runs_are_linear() {
    // The Python tree is built from ruff's tokens: the parentheses around each of 10 000
    // nested attributes that start at one offset are looked for across a gap of 900 000
    // comment lines (or two million blanks), and the comment lines after 400 nested blocks
    // that end on one line are matched to each block. Each is a binary search or a run read
    // once; walking the gap for each node took minutes.
    let tool = "import os\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n@mcp.tool()\ndef run(cmd):\n";
    let chain = ".strip()".repeat(10_000);
    let comments = format!(
        "{tool}    x = (\n{}cmd{chain})\n    os.system(x)\n",
        // Each line is two tokens (a comment and a line end): within the 2 million bound.
        "#\n".repeat(900_000)
    );
    assert_tainted("gap.py", &comments, "exec_dynamic_string");
    let blanks = format!(
        "{tool}    x = ({}cmd{chain})\n    os.system(x)\n",
        " ".repeat(2_000_000)
    );
    assert_tainted("blanks.py", &blanks, "exec_dynamic_string");
    let depth = 400;
    let mut blocks = tool.to_string();
    for level in 1..=depth {
        blocks.push_str(&format!("{}if cmd:\n", "\t".repeat(level)));
    }
    blocks.push_str(&format!("{}os.system(cmd)\n", "\t".repeat(depth + 1)));
    blocks.push_str(&format!("{}#\n", "\t".repeat(depth + 1)).repeat(4_000));
    assert_tainted("blocks.py", &blocks, "exec_dynamic_string");
}

#[test]
fn python_taint_across_files_is_linear() {
    // A handler making 5 000 method calls into an imported class of 5 000 methods, through
    // 10 000 nested calls of an imported function and along a 10 000-link method chain: each
    // seed is one look-up, each callee a bounded walk.
    let dir = tempfile::tempdir().expect("tempdir");
    let methods = 5_000;
    let levels = 10_000;
    let mut server = String::from(
        "import os\nfrom mcp.server.fastmcp import FastMCP\nfrom .git import Git, g\nfrom . import sh\nmcp = FastMCP('x')\n@mcp.tool()\ndef run(cmd):\n",
    );
    for i in 0..methods {
        server.push_str(&format!("    Git().m{i}(cmd)\n"));
    }
    server.push_str(&format!(
        "    os.system({}cmd{})\n    sh.run(cmd){}\n",
        "g(".repeat(levels),
        ")".repeat(levels),
        ".a(cmd)".repeat(levels)
    ));
    let mut git = String::from("import os\ndef g(x):\n    return x\nclass Git:\n");
    for i in 0..methods {
        git.push_str(&format!("    def m{i}(self, c):\n        os.system(c)\n"));
    }
    write(dir.path(), "pkg/server.py", &server);
    write(dir.path(), "pkg/git.py", &git);
    write(
        dir.path(),
        "pkg/sh.py",
        "import os\ndef run(c):\n    os.system(c)\n",
    );
    let report = scan::scan(&scan::ScanOptions::new(dir.path())).expect("scan");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let tainted = |file: &str| {
        report
            .findings
            .iter()
            .filter(|f| f.file.ends_with(file) && f.tainted_from_tool_input)
            .count()
    };
    assert_eq!(tainted("git.py"), methods);
    assert_eq!(tainted("sh.py"), 1);
    assert_eq!(tainted("server.py"), 1);
}

#[test]
fn url_encoding_checks_are_linear() {
    // 3 000 shell calls quoting one parameter that 3 000 calls fill with encoded text: each
    // call would ask every caller again (9 M steps); the file's step budget ends that, and
    // what is left past it stays a finding.
    let n = 3_000;
    let mut text =
        String::from("const { execSync } = require('child_process');\nfunction open(u) {\n");
    for _ in 0..n {
        text.push_str(
            "  execSync(`open \"https://x.example/?q=${u}\"`, { timeout: 1, maxBuffer: 1 });\n",
        );
    }
    text.push_str("}\n");
    for i in 0..n {
        text.push_str(&format!("open(encodeURIComponent(process.argv[{i}]));\n"));
    }
    let findings = scan::scan_text(Path::new("open.js"), &text).expect("scans");
    let inert = n - findings.len();
    // The first calls are judged (URL-encoded text inside double quotes), the rest are
    // findings once the budget is spent; none is lost.
    assert!(inert > 0, "{} findings", findings.len());
    assert!(
        findings
            .iter()
            .all(|f| f.rule_id == "exec_sync_dynamic_string"),
        "{findings:?}"
    );
}

#[test]
fn python_attribute_taint_is_linear() {
    // A class of 3 000 methods, each storing tool input in an attribute of its own and
    // reading it back, and a module global written under `global`: every method gains each
    // new attribute of the class, but is queued once per visit, and a read of a global is
    // resolved a bounded number of times per sink.
    let methods = 3_000;
    let mut text = String::from(
        "import os\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\ng = 'ls'\nclass K:\n",
    );
    for i in 0..methods {
        text.push_str(&format!(
            "    def m{i}(self, c):\n        self.a{i} = c\n        os.system(self.a{i})\n"
        ));
    }
    text.push_str("@mcp.tool()\ndef run(cmd):\n    global g\n    g = cmd\n    k = K()\n");
    for i in 0..methods {
        text.push_str(&format!("    k.m{i}(cmd)\n"));
    }
    text.push_str(&format!(
        "def later():\n    os.system({})\n",
        "g + ".repeat(5_000) + "g"
    ));
    let findings = scan::scan_text(Path::new("k.py"), &text).expect("scans");
    let tainted = findings
        .iter()
        .filter(|f| f.rule_id == "exec_dynamic_string" && f.tainted_from_tool_input)
        .count();
    let untainted: Vec<_> = findings
        .iter()
        .filter(|f| !f.tainted_from_tool_input)
        .map(|f| (f.line, &f.rule_id))
        .take(5)
        .collect();
    assert_eq!(
        tainted,
        methods + 1,
        "{} findings, untainted {untainted:?}",
        findings.len()
    );
}

#[test]
fn long_python_functions_are_linear() {
    // One handler of 6 000 two-link assignment chains (a tainted one, a constant one) and
    // 6 000 sinks: each dropped constant used to cost a pass over every name, each tainted
    // check one look-up per tainted name, each sink a walk of the whole function for its
    // guards (minutes at this size).
    let links = 6_000;
    let mut text = String::from(
        "import os, subprocess\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n@mcp.tool()\ndef run(cmd):\n    c0 = cmd\n    k0 = 'ls'\n",
    );
    for i in 1..links {
        text.push_str(&format!(
            "    c{i} = c{} + 'x'\n    k{i} = k{} + ' -l'\n",
            i - 1,
            i - 1
        ));
    }
    text.push_str(&format!(
        "    os.system(c{last})\n    os.system(k{last})\n    p = os.path.realpath(cmd)\n",
        last = links - 1
    ));
    for _ in 0..links {
        text.push_str("    subprocess.run(['git', 'log', p], timeout=5)\n");
    }
    let findings = scan::scan_text(Path::new("long.py"), &text).expect("scans");
    let count = |rule: &str| findings.iter().filter(|f| f.rule_id == rule).count();
    // The tainted chain reaches its sink; the constant one is a constant.
    assert_eq!(count("exec_dynamic_string"), 1, "{findings:?}");
    assert!(
        findings
            .iter()
            .any(|f| f.rule_id == "exec_dynamic_string" && f.tainted_from_tool_input)
    );
    // An absolute path cannot start an option: argument injection, not flag injection.
    assert_eq!(count("spawn_literal_dynamic_args"), links);
    assert_eq!(count("argv_flag_injection"), 0);
}

#[test]
fn python_alias_chains_are_linear() {
    // 20 000 aliases of `os`, each of the one after it in the file (`a1 = a0` last): found
    // by rounds over every name, that is one round per link (400 M look-ups); the worklist
    // wakes only the name that reads the new alias. The sink is at the end of the chain.
    let links = 20_000;
    let mut text =
        String::from("import os\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n");
    for i in (1..links).rev() {
        text.push_str(&format!("a{i} = a{}\n", i - 1));
    }
    text.push_str(&format!(
        "a0 = os\n@mcp.tool()\ndef run(cmd):\n    a{}.system(cmd)\n",
        links - 1
    ));
    let findings = scan::scan_text(Path::new("chain.py"), &text).expect("scans");
    assert!(
        findings
            .iter()
            .any(|f| f.rule_id == "exec_dynamic_string" && f.tainted_from_tool_input),
        "{findings:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// --output

#[test]
fn output_never_follows_a_symlink_dangling_or_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("repo");
    write(&repo, "src/a.js", VULNERABLE);
    let victim = write(dir.path(), "home/.bashrc", "# my shell\n");
    symlink("../home/.bashrc", repo.join("scan-report.txt")).expect("symlink");
    symlink("../home/new-file", repo.join("dangling.txt")).expect("symlink");
    for name in ["scan-report.txt", "dangling.txt"] {
        let out = repo.join(name);
        let code = run_with(&[utf8(&repo), "--output", utf8(&out)]);
        assert_eq!(code, 2, "{name}");
        assert!(
            fs::symlink_metadata(&out)
                .expect("still there")
                .file_type()
                .is_symlink()
        );
    }
    assert_eq!(fs::read_to_string(&victim).expect("victim"), "# my shell\n");
    assert!(!dir.path().join("home/new-file").exists());
}

#[test]
fn output_refuses_a_scanned_file_by_name_or_by_inode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    let source = write(&src, "a.js", VULNERABLE);
    // The source itself, a new source name inside the tree, and a hard link to the source
    // from outside the tree.
    fs::hard_link(&source, dir.path().join("alias.txt")).expect("hard link");
    for out in [
        source.clone(),
        src.join("new.js"),
        dir.path().join("alias.txt"),
    ] {
        let code = run_with(&[utf8(&src), "--output", utf8(&out)]);
        assert_eq!(code, 2, "{}", out.display());
    }
    assert_eq!(fs::read_to_string(&source).expect("source"), VULNERABLE);
    assert!(!src.join("new.js").exists());
    // A FIFO or a folder is refused without blocking.
    let fifo = dir.path().join("fifo.txt");
    mkfifo(&fifo);
    assert_eq!(run_with(&[utf8(&src), "--output", utf8(&fifo)]), 2);
    assert_eq!(run_with(&[utf8(&src), "--output", utf8(dir.path())]), 2);
}

#[test]
fn output_refuses_a_config_the_scan_read() {
    // tsconfig.json is not a source file, but the scan reads it for its `paths` aliases:
    // `--output tsconfig.json` used to replace it with the report. A hard link to it from
    // outside the tree is the same file.
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    let config = r#"{ "compilerOptions": { "paths": { "@/*": ["lib/*"] } } }"#;
    let config_path = write(&src, "tsconfig.json", config);
    write(
        &src,
        "lib/exec.ts",
        "import { exec } from \"child_process\";\nexport function run(c: string) { exec(`git ${c}`); }\n",
    );
    write(
        &src,
        "main.ts",
        "import { run } from \"@/exec\";\nserver.tool(\"t\", {}, async ({ cmd }) => { run(cmd); });\n",
    );
    fs::hard_link(&config_path, dir.path().join("config-link.json")).expect("hard link");
    // The alias is followed, so the config was read: the sink is tainted.
    let (code, report) = json_scan(&src, &dir.path().join("report.json"), &[]);
    assert_eq!(code, 1);
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule_id"] == "exec_template_literal_with_input"
                && f["tainted_from_tool_input"] == true),
        "{report}"
    );
    for out in [config_path.clone(), dir.path().join("config-link.json")] {
        assert_eq!(
            run_with(&[utf8(&src), "--output", utf8(&out)]),
            2,
            "{}",
            out.display()
        );
    }
    assert_eq!(fs::read_to_string(&config_path).expect("config"), config);
}

#[test]
fn output_replaces_a_regular_report_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    write(&src, "a.js", VULNERABLE);
    let out = write(dir.path(), "reports/report.json", "old");
    let (code, report) = json_scan(&src, &out, &[]);
    assert_eq!(code, 1);
    assert_eq!(report["summary"]["files_scanned"], 1);
    let names: Vec<_> = fs::read_dir(dir.path().join("reports"))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["report.json"]);
    // A report inside the tree under a non-source name is fine.
    let inside = src.join("scan-report.txt");
    assert_eq!(run_with(&[utf8(&src), "--output", utf8(&inside)]), 1);
    assert!(
        fs::read_to_string(&inside)
            .expect("written")
            .contains("exec_dynamic_string")
    );
}

// ---------------------------------------------------------------------------------------------
// File names in reports

#[test]
fn a_file_name_cannot_forge_report_lines_or_cells() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    let names = [
        "x\necho PWNED\n.js",
        "y\r\u{1b}[2Jz.js",
        "a|b`c\t.js",
        "bidi\u{202e}sj.txt.js",
    ];
    for name in names {
        write(&src, name, VULNERABLE);
    }
    let report = scan::scan(&scan::ScanOptions::new(&src)).expect("scan");
    // Three findings per file (the command, and the missing timeout and maxBuffer).
    assert_eq!(report.findings.len(), 3 * names.len());

    let text = report.render(scan::report::Format::Text).expect("text");
    for forbidden in ['\r', '\u{1b}', '\t', '\u{202e}'] {
        assert!(!text.contains(forbidden), "{forbidden:?} in {text}");
    }
    assert!(
        !text
            .lines()
            .any(|line| line == "echo PWNED" || line.starts_with(".js"))
    );
    assert!(text.contains("x\\necho PWNED\\n.js:2:"), "{text}");
    // Every line is a finding, its indented detail, or a summary line.
    for line in text.lines() {
        assert!(
            line.starts_with("    ") || line.starts_with(utf8(&src)) || line.contains(" scanned ("),
            "forged line: {line:?}"
        );
    }

    let markdown = report.render(scan::report::Format::Markdown).expect("md");
    assert!(!markdown.contains('\u{1b}') && !markdown.contains('\r'));
    let rows: Vec<&str> = markdown.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 1 + 3 * names.len(), "{markdown}");
    for row in rows {
        // Seven cell borders in every row: no name opened a cell of its own; and code spans
        // come in pairs. (A backslash escapes the character after it.)
        let unescaped = |mark: char| {
            let mut count = 0;
            let mut escaped = false;
            for c in row.chars() {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == mark {
                    count += 1;
                }
            }
            count
        };
        assert_eq!(unescaped('|'), 7, "{row}");
        assert_eq!(unescaped('`') % 2, 0, "{row}");
    }

    // JSON keeps the exact names.
    let json: serde_json::Value =
        serde_json::from_str(&report.render(scan::report::Format::Json).expect("json"))
            .expect("parses");
    let files: Vec<String> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["file"].as_str().expect("file").to_string())
        .collect();
    for name in names {
        assert!(files.iter().any(|f| f.ends_with(name)), "{name:?}");
    }
}

/// A file name that is not UTF-8 is scanned like any other. JSON strings hold Unicode only,
/// so each byte that is not UTF-8 is U+FFFD in every report; the text report shows the same
/// name.
#[test]
fn a_file_name_that_is_not_utf8_is_scanned_and_its_bad_bytes_are_u_fffd() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let name = std::ffi::OsStr::from_bytes(b"bad\xff\xfe.js");
    fs::write(
        dir.path().join(name),
        "const { exec } = require('child_process');\nexec(process.argv[2]);\n",
    )
    .expect("write");
    let report = scan::scan(&scan::ScanOptions::new(dir.path())).expect("scan");
    assert_eq!(report.summary.files_scanned, 1, "{:?}", report.skipped);
    let json: serde_json::Value =
        serde_json::from_str(&report.render(scan::report::Format::Json).expect("json"))
            .expect("parses");
    let file = json["findings"][0]["file"].as_str().expect("a finding");
    assert!(file.ends_with("bad\u{FFFD}\u{FFFD}.js"), "{file:?}");
    let text = report.render(scan::report::Format::Text).expect("text");
    assert!(text.contains("bad\u{FFFD}\u{FFFD}.js:2:"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// SARIF URIs

#[test]
fn sarif_uris_are_relative_to_srcroot_and_never_a_scheme_or_a_climb() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    for name in [
        "javascript:alert(1).js",
        "C:evil.js",
        "odd/#?%ü &.js",
        "plain.js",
    ] {
        write(&src, name, VULNERABLE);
    }
    symlink("plain.js", src.join("link.js")).expect("symlink");
    fs::create_dir_all(src.join("sub")).expect("mkdir");
    // Scanned as `src/sub/..`: the files are reached through a `..`.
    let root = src.join("sub").join("..");
    let report = scan::scan(&scan::ScanOptions::new(&root)).expect("scan");
    let sarif = report.to_sarif();
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    let run = &sarif["runs"][0];
    let base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
        .as_str()
        .expect("SRCROOT");
    assert!(
        base.starts_with("file:///") && base.ends_with("/src/"),
        "{base}"
    );
    let mut locations: Vec<&serde_json::Value> = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| &r["locations"][0]["physicalLocation"]["artifactLocation"])
        .collect();
    assert_eq!(locations.len(), 3 * 4);
    let notifications = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notifications");
    locations.extend(
        notifications
            .iter()
            .map(|n| &n["locations"][0]["physicalLocation"]["artifactLocation"]),
    );
    let mut uris = Vec::new();
    for location in locations {
        assert_eq!(location["uriBaseId"], "SRCROOT", "{location}");
        let uri = location["uri"].as_str().expect("uri");
        assert!(!uri.contains(':'), "a scheme: {uri}");
        assert!(!uri.split('/').any(|segment| segment == ".."), "{uri}");
        uris.push(uri.to_string());
    }
    for expected in [
        "javascript%3Aalert%281%29.js",
        "C%3Aevil.js",
        "odd/%23%3F%25%C3%BC%20%26.js",
        "plain.js",
        "link.js",
    ] {
        assert!(uris.iter().any(|u| u == expected), "{expected}: {uris:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Skips

#[test]
fn every_skip_is_reported_in_every_format_and_strict_fails_on_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    write(&src, "clean.py", "print('hello')\n");
    write(dir.path(), "outside.js", VULNERABLE);
    fs::create_dir_all(dir.path().join("elsewhere")).expect("mkdir");
    symlink("../outside.js", src.join("link.js")).expect("symlink");
    symlink("../elsewhere", src.join("linked-folder")).expect("symlink");
    mkfifo(&src.join("pipe.js"));
    write(
        &src,
        "big.js",
        &format!("{VULNERABLE}{}", "// pad\n".repeat(200)),
    );
    write(
        &src,
        "pragma.js",
        "// safe-mcp: ignore-file\nrequire('child_process').exec(x);\n",
    );
    write(
        &src,
        "next-line.py",
        "import os\n# safe-mcp: ignore-next-line\nos.system(cmd)\n",
    );
    let skipped = [
        ("link.js", "symbolic link"),
        ("linked-folder", "symbolic link to a folder"),
        ("pipe.js", "not a regular file (FIFO)"),
        ("big.js", "size cap"),
        ("pragma.js", "ignore-file pragma"),
    ];

    // Not strict: listed, exit 0 (nothing else found; the FIFO did not block the scan).
    let out = dir.path().join("report.json");
    let (code, report) = json_scan(&src, &out, &["--max-file-size", "1000"]);
    assert_eq!(code, 0, "{report:#}");
    let listed = report["skipped"].as_array().expect("skipped");
    assert_eq!(listed.len(), skipped.len(), "{listed:#?}");
    assert_eq!(report["summary"]["files_skipped"], skipped.len());
    for (name, reason) in skipped {
        assert!(
            listed
                .iter()
                .any(|s| s["file"].as_str().is_some_and(|f| f.ends_with(name))
                    && s["reason"].as_str().is_some_and(|r| r.contains(reason))),
            "{name}: {listed:#?}"
        );
    }
    let mut options = scan::ScanOptions::new(&src);
    options.max_file_size = 1000;
    let scanned = scan::scan(&options).expect("scan");
    let text = scanned.render(scan::report::Format::Text).expect("text");
    let markdown = scanned.render(scan::report::Format::Markdown).expect("md");
    let sarif = serde_json::to_string(&scanned.to_sarif()).expect("sarif");
    for (name, _) in skipped {
        assert!(
            text.contains(&format!("skipped: {}/{name}: ", utf8(&src))),
            "{text}"
        );
        assert!(markdown.contains(name), "{markdown}");
        assert!(
            sarif.contains(&format!("\"uri\":\"{name}\"")),
            "{name}: {sarif}"
        );
    }

    // Strict: the same tree is exit 2, and the pragmas count for nothing.
    let (code, report) = json_scan(&src, &out, &["--max-file-size", "1000", "--strict"]);
    assert_eq!(code, 2);
    let findings = report["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .any(|f| f["file"].as_str().is_some_and(|f| f.ends_with("pragma.js")))
    );
    assert!(findings.iter().any(|f| {
        f["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("next-line.py"))
    }));
}

#[test]
fn a_fifo_or_device_given_as_the_path_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe.js");
    mkfifo(&fifo);
    for path in [fifo.as_path(), Path::new("/dev/null")] {
        assert_eq!(run_with(&[utf8(path)]), 2, "{}", path.display());
        let error = scan::scan(&scan::ScanOptions::new(path)).expect_err("refused");
        assert!(
            matches!(error, scan::error::ScanError::NotFileOrFolder { .. }),
            "{error}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Memory (peak figures: benches/scan/memory.sh)

#[test]
fn a_20_mb_file_scans_without_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let row = format!("  \"{}\",\n", "x".repeat(1000));
    let text = format!(
        "const rows = [\n{}];\nrequire('child_process').exec(rows[0]);\n",
        row.repeat(20 * 1024)
    );
    let file = write(dir.path(), "big.js", &text);
    assert!(text.len() > 20_000_000);
    let mut options = scan::ScanOptions::new(&file);
    options.max_file_size = 32 * 1024 * 1024;
    let report = scan::scan(&options).expect("scan");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.summary.files_scanned, 1);
    assert_eq!(
        report
            .findings
            .iter()
            .filter(|f| f.rule_id == "exec_dynamic_string")
            .count(),
        1
    );
}

#[test]
fn files_past_the_memory_bounds_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    // The densest code there is: 4 tokens in 4 bytes, 6 million tokens.
    write(&src, "dense.js", &"a=1;".repeat(1_500_000));
    // Past the hard size limit (sparse: nothing is written, nothing is read).
    let huge = fs::File::create(src.join("huge.py")).expect("create");
    huge.set_len(scan::HARD_MAX_FILE_SIZE + 1).expect("set_len");
    let mut options = scan::ScanOptions::new(&src);
    options.max_file_size = u64::MAX;
    let report = scan::scan(&options).expect("scan");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let reason = |name: &str| {
        report
            .skipped
            .iter()
            .find(|s| s.file.ends_with(name))
            .map(|s| s.reason.clone())
            .unwrap_or_default()
    };
    assert!(reason("dense.js").contains("more tokens than the scanner parses"));
    assert!(reason("huge.py").contains("hard size limit"));
    // Blank lines are tokens to Python's lexer: 3 MB of them once parsed (60 MB took 1.6 GB
    // and then aborted the process); past Python's bound of 2 million tokens they are refused
    // like dense code, in every line-end style.
    for (name, line_end) in [("blank.py", "\n"), ("crlf.py", "\r\n"), ("cr.py", "\r")] {
        let text = format!(
            "import os\n{}os.system(x)\n",
            line_end.repeat(2_000_000 + 1)
        );
        let file = write(&src, name, &text);
        let alone = scan::scan(&scan::ScanOptions::new(&file)).expect("scan");
        assert!(
            alone
                .skipped
                .iter()
                .any(|s| s.reason.contains("more tokens than the scanner parses")),
            "{name}: {:?}",
            alone.skipped
        );
    }
}

#[test]
fn a_one_line_file_of_many_findings_lists_a_bounded_number_and_says_so() {
    let text = format!(
        "const cp = require('child_process');{}",
        "cp.exec(x);".repeat(scan::MAX_FINDINGS_PER_FILE + 2_000)
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "hits.js", &text);
    let report = scan::scan(&scan::ScanOptions::new(&file)).expect("scan");
    assert_eq!(report.findings.len(), scan::MAX_FINDINGS_PER_FILE);
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.snippet.chars().count() <= 200)
    );
    assert!(
        report
            .errors
            .iter()
            .any(|e| e.message.contains("only the first")),
        "{:?}",
        report.errors
    );
}

/// Taint across files through hostile module graphs: a ring of 300 `export *` barrels, and a
/// chain of 40 modules each calling the next. Both end; the ring's sink, one hop from the
/// import, is tainted; the chain's first sinks within the round bound are tainted and the
/// scan reports no error for the rest.
#[test]
fn star_re_export_rings_and_long_call_chains_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    const RING: usize = 300;
    for i in 0..RING {
        let mut text = format!("export * from \"./barrel_{}\";\n", (i + 1) % RING);
        if i == 0 {
            text.push_str("export * from \"./sink\";\n");
        }
        write(root, &format!("ring/barrel_{i}.ts"), &text);
    }
    write(
        root,
        "ring/sink.ts",
        "import { exec } from \"child_process\";\n\
         export function run(c: string) { exec(c, { timeout: 1, maxBuffer: 1 }); }\n",
    );
    write(
        root,
        "ring/index.ts",
        "import { run } from \"./barrel_0\";\n\
         server.tool(\"x\", {}, async ({ c }) => run(c));\n",
    );
    const CHAIN: usize = 40;
    for i in 0..CHAIN {
        let text = if i + 1 < CHAIN {
            format!(
                "import {{ exec }} from \"child_process\";\n\
                 import {{ f{next} }} from \"./c{next}\";\n\
                 export function f{i}(x: string) {{ exec(x, {{ timeout: 1, maxBuffer: 1 }}); return f{next}(x); }}\n",
                next = i + 1
            )
        } else {
            format!(
                "import {{ exec }} from \"child_process\";\n\
                 export function f{i}(x: string) {{ exec(x, {{ timeout: 1, maxBuffer: 1 }}); }}\n"
            )
        };
        write(root, &format!("chain/c{i}.ts"), &text);
    }
    write(
        root,
        "chain/index.ts",
        "import { f0 } from \"./c0\";\nserver.tool(\"y\", {}, async ({ c }) => f0(c));\n",
    );
    let out = root.join("report.json");
    let (code, report) = json_scan(root, &out, &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        report["errors"].as_array().map(Vec::len),
        Some(0),
        "{report}"
    );
    let tainted = |file: &str| {
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| {
                f["file"].as_str().is_some_and(|n| n.ends_with(file))
                    && f["tainted_from_tool_input"] == true
            })
    };
    assert!(tainted("ring/sink.ts"), "{report}");
    for i in 0..5 {
        assert!(tainted(&format!("chain/c{i}.ts")), "c{i}: {report}");
    }
    // Every module of the chain is still reported (tainted or not).
    let findings = report["findings"].as_array().expect("findings");
    for i in 0..CHAIN {
        let name = format!("chain/c{i}.ts");
        assert!(
            findings
                .iter()
                .any(|f| f["file"].as_str().is_some_and(|n| n.ends_with(&name))),
            "{name}"
        );
    }
}

/// A barrel re-exporting every module with `export *` (`from .m import *`), imported by each
/// of them: a ring of 2 000 handlers, each calling the next one's function through the
/// barrel, the last of which runs its input. Sending each name the barrel receives on to
/// every module it re-exports would be 4 M seeds, past 4 GB at 2 000 files. A name goes only
/// to the module it can land in, and the sink is still tainted.
#[test]
fn star_re_export_barrels_are_linear() {
    const FILES: usize = 2_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let js_barrel: String = (0..FILES)
        .map(|i| format!("export * from \"./m{i}.js\";\n"))
        .collect();
    write(root, "js/index.js", &js_barrel);
    let py_barrel: String = (0..FILES)
        .map(|i| format!("from .m{i} import *\n"))
        .collect();
    write(root, "py/pkg/__init__.py", &py_barrel);
    for i in 0..FILES {
        let next = (i + 1) % FILES;
        let last = i + 1 == FILES;
        let (js_head, js_body) = if last {
            ("import { exec } from \"child_process\";\n", "exec(v);")
        } else {
            ("", "return v;")
        };
        write(
            root,
            &format!("js/m{i}.js"),
            &format!(
                "{js_head}import {{ h{next} }} from \"./index.js\";\nconst server = {{}};\n\
                 server.tool(\"t{i}\", {{}}, async ({{ x }}) => {{ h{next}(x); }});\n\
                 export function h{i}(v) {{ {js_body} }}\n"
            ),
        );
        let py_body = if last { "os.system(v)" } else { "return v" };
        write(
            root,
            &format!("py/pkg/m{i}.py"),
            &format!(
                "import os\nfrom mcp.server.fastmcp import FastMCP\nfrom pkg import h{next}\n\
                 mcp = FastMCP(\"x\")\n@mcp.tool()\ndef t{i}(x: str):\n    h{next}(x)\n\
                 def h{i}(v):\n    {py_body}\n"
            ),
        );
    }
    let report = scan::scan(&scan::ScanOptions::new(root)).expect("scan");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let tainted: Vec<(&str, &str)> = report
        .findings
        .iter()
        .filter(|f| f.tainted_from_tool_input)
        .map(|f| (f.file.as_str(), f.rule_id))
        .collect();
    let last = FILES - 1;
    let js_sink = format!("js/m{last}.js");
    let py_sink = format!("py/pkg/m{last}.py");
    assert_eq!(tainted.len(), 2, "{tainted:?}");
    assert!(
        tainted.iter().any(|(file, _)| file.ends_with(&js_sink)),
        "{tainted:?}"
    );
    assert!(
        tainted.iter().any(|(file, _)| file.ends_with(&py_sink)),
        "{tainted:?}"
    );
}

/// Barrels of barrels in six shapes, each of 600 modules with a handler per name: modules
/// that each re-export one shared module and one of their own (`diamond`), two shared
/// modules that define the same names (`twice`), a hub re-exported by a barrel of its own
/// per handler (`hub`), modules that reach the shared module through one more barrel each
/// (`chain`), a barrel per handler (`fan`), and a shared module behind a module that defines
/// the same names itself, which keeps them from it (`shadow`). Every sink the names reach is
/// tainted, and no other (the walk through them is linear:
/// `project::tests::nested_barrels_of_different_files_cost_each_name_its_definitions`).
#[test]
fn barrels_of_barrels_reach_every_sink_in_every_shape() {
    const FILES: usize = 600;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let sinks = |prefix: &str| -> String {
        let mut text = String::from("import { execSync } from \"child_process\";\n");
        for i in 0..FILES {
            text.push_str(&format!(
                "export function {prefix}{i}(v) {{ execSync(\"ls \" + v); }}\n"
            ));
        }
        text
    };
    let handler = |names: &[String], from: &str| {
        let calls: String = names.iter().map(|name| format!("{name}(x); ")).collect();
        format!(
            "import {{ {} }} from \"./{from}\";\nconst server = {{}};\n\
             server.tool(\"t\", {{}}, async ({{ x }}) => {{ {calls}}});\n",
            names.join(", ")
        )
    };
    let barrel: String = (0..FILES)
        .map(|i| format!("export * from \"./w{i}.js\";\n"))
        .collect();
    for shape in ["diamond", "twice", "chain", "shadow"] {
        write(root, &format!("{shape}/index.js"), &barrel);
        write(root, &format!("{shape}/shared.js"), &sinks("s"));
    }
    write(root, "twice/shared2.js", &sinks("s"));
    write(root, "fan/shared.js", &sinks("s"));
    write(
        root,
        "shadow/q.js",
        &format!("{}export * from \"./shared.js\";\n", sinks("s")),
    );
    let hub: String = (0..FILES)
        .map(|i| format!("export * from \"./g{i}.js\";\n"))
        .collect();
    write(root, "hub/hub.js", &hub);
    for i in 0..FILES {
        let own = format!(
            "import {{ execSync }} from \"child_process\";\nexport function h{i}(v) {{ execSync(\"ls \" + v); }}\n"
        );
        let names = [format!("s{i}"), format!("h{i}")];
        for (shape, nested) in [
            ("diamond", "export * from \"./shared.js\";\n".to_string()),
            (
                "twice",
                "export * from \"./shared.js\";\nexport * from \"./shared2.js\";\n".to_string(),
            ),
            ("chain", format!("export * from \"./x{i}.js\";\n")),
            ("shadow", "export * from \"./q.js\";\n".to_string()),
            ("fan", "export * from \"./shared.js\";\n".to_string()),
        ] {
            write(
                root,
                &format!("{shape}/w{i}.js"),
                &format!("{nested}export * from \"./v{i}.js\";\n"),
            );
            write(root, &format!("{shape}/v{i}.js"), &own);
            let from = if shape == "fan" {
                write(
                    root,
                    &format!("fan/t{i}.js"),
                    &format!("export * from \"./w{i}.js\";\n"),
                );
                format!("t{i}.js")
            } else {
                "index.js".to_string()
            };
            write(root, &format!("{shape}/m{i}.js"), &handler(&names, &from));
        }
        write(
            root,
            &format!("chain/x{i}.js"),
            "export * from \"./shared.js\";\n",
        );
        write(
            root,
            &format!("hub/g{i}.js"),
            &own.replace(&format!("h{i}"), &format!("g{i}")),
        );
        write(
            root,
            &format!("hub/t{i}.js"),
            "export * from \"./hub.js\";\n",
        );
        write(
            root,
            &format!("hub/m{i}.js"),
            &handler(&[format!("g{i}")], &format!("t{i}.js")),
        );
    }
    let report = scan::scan(&scan::ScanOptions::new(root)).expect("scan");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let tainted = |file: &str| {
        (report.findings.iter())
            .filter(|f| f.tainted_from_tool_input && f.file.ends_with(file))
            .filter(|f| f.rule_id == "exec_sync_dynamic_string")
            .count()
    };
    let own = |shape: &str, prefix: &str| {
        (0..FILES)
            .filter(|i| tainted(&format!("{shape}/{prefix}{i}.js")) == 1)
            .count()
    };
    for shape in ["diamond", "twice", "chain", "fan"] {
        assert_eq!(tainted(&format!("{shape}/shared.js")), FILES, "{shape}");
        assert_eq!(own(shape, "v"), FILES, "{shape}");
    }
    assert_eq!(tainted("twice/shared2.js"), FILES);
    assert_eq!(own("hub", "g"), FILES);
    assert_eq!(tainted("shadow/q.js"), FILES);
    assert_eq!(own("shadow", "v"), FILES);
    assert_eq!(tainted("shadow/shared.js"), 0);
    assert!(
        (report.findings.iter()).any(|f| f.file.ends_with("shadow/shared.js")),
        "shadow/shared.js is scanned"
    );
}

/// Barrels of every kind of module, each with 1 500 modules that each hold the sink for one
/// handler file: modules that wait for a seed (no handler of
/// their own, so their links are unknown when names reach the barrel), quiet Python files, ESM
/// modules with a default export too, CommonJS modules (`module.exports = { g }`), modules
/// with no export (their top-level names), `module.exports = lib` of a required module, and
/// barrels of barrels. Each takes only its own names (sending each every name would be n²
/// seeds, over 2 GB at 1 000 modules), and every sink is still tainted.
#[test]
fn star_re_export_barrels_of_every_module_kind_are_linear() {
    const FILES: usize = 1_500;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let esm = |i: usize| {
        format!(
            "import {{ execSync }} from \"child_process\";\nexport function g{i}(v) {{ execSync(\"ls \" + v); }}\n"
        )
    };
    let cjs = |i: usize| {
        format!(
            "const {{ execSync }} = require(\"child_process\");\nfunction g{i}(v) {{ execSync(\"ls \" + v); }}\n"
        )
    };
    type Modules<'f> = &'f dyn Fn(usize) -> Vec<(String, String)>;
    let kinds: [(&str, Modules<'_>); 6] = [
        ("waiting", &|i| vec![(format!("w{i}.js"), esm(i))]),
        ("default", &|i| {
            vec![(
                format!("w{i}.js"),
                format!("{}export default {{ g{i} }};\n", esm(i)),
            )]
        }),
        ("commonjs", &|i| {
            vec![(
                format!("w{i}.js"),
                format!("{}module.exports = {{ g{i} }};\n", cjs(i)),
            )]
        }),
        ("no_export", &|i| vec![(format!("w{i}.js"), cjs(i))]),
        ("namespace", &|i| {
            vec![
                (
                    format!("w{i}.js"),
                    format!("const lib = require(\"./v{i}.js\");\nmodule.exports = lib;\n"),
                ),
                (
                    format!("v{i}.js"),
                    format!("{}exports.g{i} = g{i};\n", cjs(i)),
                ),
            ]
        }),
        ("nested", &|i| {
            vec![
                (
                    format!("w{i}.js"),
                    format!("export * from \"./v{i}.js\";\n"),
                ),
                (format!("v{i}.js"), esm(i)),
            ]
        }),
    ];
    for (kind, modules) in kinds {
        let barrel: String = (0..FILES)
            .map(|i| format!("export * from \"./w{i}.js\";\n"))
            .collect();
        write(root, &format!("{kind}/index.js"), &barrel);
        for i in 0..FILES {
            write(
                root,
                &format!("{kind}/m{i}.js"),
                &format!(
                    "import {{ g{i} }} from \"./index.js\";\nconst server = {{}};\n\
                     server.tool(\"t{i}\", {{}}, async ({{ x }}) => {{ g{i}(x); }});\n"
                ),
            );
            for (name, text) in modules(i) {
                write(root, &format!("{kind}/{name}"), &text);
            }
        }
    }
    let py_barrel: String = (0..FILES)
        .map(|i| format!("from .w{i} import *\n"))
        .collect();
    write(root, "quiet/pkg/__init__.py", &py_barrel);
    for i in 0..FILES {
        write(
            root,
            &format!("quiet/pkg/m{i}.py"),
            &format!(
                "from mcp.server.fastmcp import FastMCP\nfrom pkg import g{i}\nmcp = FastMCP(\"x\")\n\
                 @mcp.tool()\ndef t{i}(x: str):\n    g{i}(x)\n"
            ),
        );
        write(
            root,
            &format!("quiet/pkg/w{i}.py"),
            &format!("import os\ndef g{i}(v):\n    os.system(\"ls \" + v)\n"),
        );
    }
    let report = scan::scan(&scan::ScanOptions::new(root)).expect("scan");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    for kind in [
        "waiting",
        "default",
        "commonjs",
        "no_export",
        "nested",
        "quiet",
    ] {
        let sinks: std::collections::BTreeSet<&str> = (report.findings.iter())
            .filter(|f| f.tainted_from_tool_input && f.file.contains(&format!("{kind}/")))
            .filter(|f| ["exec_sync_dynamic_string", "exec_dynamic_string"].contains(&f.rule_id))
            .map(|f| f.file.as_str())
            .collect();
        assert_eq!(sinks.len(), FILES, "{kind}: {} tainted sinks", sinks.len());
    }
}

/// A call chain through 100 barrels, each an `export *` of the module that calls through the
/// next: the handler calls `g1` through `b1`, `w1.g1` calls `g2` through `b2`, .., and `w100`
/// runs its input. Each `w` is analysed ahead (for its names) before its seed arrives. A file
/// read ahead takes its first seed in a wave of first analyses, not one of the 12 rounds
/// (which would lose the taint from the 13th hop on, with no error), and the waves that only
/// read ahead do not spend that bound (100 hops take 300 waves with them, past the 205).
#[test]
fn taint_follows_a_long_chain_through_export_star_barrels() {
    const HOPS: usize = 100;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "js/h.js",
        "import { g1 } from \"./b1.js\";\nconst server = {};\n\
         server.tool(\"t\", {}, async ({ x }) => { g1(x); });\n",
    );
    write(
        root,
        "py/srv.py",
        "from mcp.server.fastmcp import FastMCP\nfrom b1 import g1\nmcp = FastMCP(\"x\")\n\
         @mcp.tool()\ndef t(x: str):\n    g1(x)\n",
    );
    for i in 1..=HOPS {
        let next = i + 1;
        write(
            root,
            &format!("js/b{i}.js"),
            &format!("export * from \"./w{i}.js\";\n"),
        );
        write(root, &format!("py/b{i}/__init__.py"), "from .w import *\n");
        let (js, py) = if i < HOPS {
            (
                format!(
                    "import {{ g{next} }} from \"./b{next}.js\";\nexport function g{i}(v) {{ g{next}(v); }}\n"
                ),
                format!("from b{next} import g{next}\ndef g{i}(v):\n    g{next}(v)\n"),
            )
        } else {
            (
                format!(
                    "import {{ execSync }} from \"child_process\";\nexport function g{i}(v) {{ execSync(\"ls \" + v); }}\n"
                ),
                format!("import os\ndef g{i}(v):\n    os.system(\"ls \" + v)\n"),
            )
        };
        write(root, &format!("js/w{i}.js"), &js);
        write(root, &format!("py/b{i}/w.py"), &py);
    }
    let report = scan::scan(&scan::ScanOptions::new(root)).expect("scan");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let tainted: Vec<&str> = (report.findings.iter())
        .filter(|f| f.tainted_from_tool_input)
        .map(|f| f.file.as_str())
        .collect();
    assert_eq!(tainted.len(), 2, "{tainted:?}");
    assert!(
        tainted
            .iter()
            .any(|f| f.ends_with(&format!("js/w{HOPS}.js"))),
        "{tainted:?}"
    );
    assert!(
        tainted
            .iter()
            .any(|f| f.ends_with(&format!("py/b{HOPS}/w.py"))),
        "{tainted:?}"
    );
}

/// A module whose CommonJS default export is a value imported by name (`module.exports = X`
/// of `const { X } = require(..)`) may hand on any member of it, so a barrel sends it every
/// name it receives: n such modules, each importing from the barrel, are n² seeds (1 000
/// unbounded: 15 s and 1.4 GB). Within `MAX_OPEN_SEEDS` (200 000) every sink is
/// followed; past it the barrel is an error of the scan (exit 2, as every error is), and the
/// scan ends.
#[test]
fn modules_that_take_any_name_are_followed_within_a_bound_then_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for (tree, files) in [("within", 400), ("past", 500)] {
        let barrel: String = (0..files)
            .map(|i| format!("export * from \"./w{i}.js\";\n"))
            .collect();
        write(root, &format!("{tree}/index.js"), &barrel);
        for i in 0..files {
            write(
                root,
                &format!("{tree}/m{i}.js"),
                &format!(
                    "import {{ g{i} }} from \"./index.js\";\nconst server = {{}};\n\
                     server.tool(\"t{i}\", {{}}, async ({{ x }}) => {{ g{i}(x); }});\n"
                ),
            );
            write(
                root,
                &format!("{tree}/w{i}.js"),
                &format!("const {{ X }} = require(\"./v{i}.js\");\nmodule.exports = X;\n"),
            );
            write(
                root,
                &format!("{tree}/v{i}.js"),
                &format!(
                    "const {{ execSync }} = require(\"child_process\");\n\
                     class X {{ static g{i}(v) {{ execSync(\"ls \" + v); }} }}\nmodule.exports = {{ X }};\n"
                ),
            );
        }
    }
    let within = scan::scan(&scan::ScanOptions::new(root.join("within"))).expect("scan");
    assert!(within.errors.is_empty(), "{:?}", within.errors);
    let tainted = (within.findings.iter())
        .filter(|f| f.tainted_from_tool_input && f.file.contains("/v"))
        .count();
    assert_eq!(tainted, 400);
    let past = scan::scan(&scan::ScanOptions::new(root.join("past"))).expect("scan");
    assert_eq!(past.errors.len(), 1, "{:?}", past.errors);
    let error = &past.errors[0];
    assert!(error.file.ends_with("past/index.js"), "{error:?}");
    assert!(error.message.contains("not followed"), "{error:?}");
}

#[test]
fn python_class_hierarchies_are_linear() {
    // 3 000 classes, each deriving from the one before, and 3 000 calls into the last one:
    // each class's family is computed once per module and a method is looked for in at most
    // 64 classes, so a call costs the same at any depth (it used to walk the whole chain).
    let n = 3_000;
    let mut classes = String::from(
        "import os\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\nclass C0:\n    def __init__(self, c):\n        self.c = c\n    def m(self, x):\n        return os.system(x)\n",
    );
    for i in 1..n {
        classes.push_str(&format!(
            "class C{i}(C{}):\n    def k{i}(self):\n        return self.c\n",
            i - 1
        ));
    }
    let last = n - 1;
    let calls = format!("    C{last}(x).k{last}()\n").repeat(n);
    let tainted = |tool_body: &str| {
        let text = format!("{classes}@mcp.tool()\ndef go(x: str):\n{calls}{tool_body}");
        let findings = scan::scan_text(Path::new("deep.py"), &text).expect("scans");
        assert_eq!(findings.len(), 1, "{findings:?}");
        findings[0].tainted_from_tool_input
    };
    // `m` inherited ten classes up is found; 2 999 classes up is past the search bound.
    assert!(tainted("    C10(x).m(x)\n"));
    assert!(!tainted(&format!("    C{last}(x).m(x)\n")));
}

/// A FastMCP module's first lines, and a tool `run(cmd)` after them.
const PY_MODULE: &str = "import os\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n";
const PY_TOOL: &str = "import os\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n@mcp.tool()\ndef run(cmd):\n";

#[test]
fn javascript_call_chains_are_linear() {
    // `$(opts)()()..()` of execa, 20 000 calls long, then a template: each call of the chain
    // resolved the whole chain below it (400 M steps in all); the value of each call is now
    // remembered once the bindings are final. The shell option set at the bottom of the chain
    // still reaches the template at its top.
    let calls = 20_000;
    let text = format!(
        "import {{ $ }} from 'execa';\nserver.tool('run', async ({{ cmd }}) => {{\n  await $({{ shell: true }}){}`ls ${{cmd}}`;\n}});\n",
        "()".repeat(calls)
    );
    assert_tainted("chain.js", &text, "shell_true_option");
}

#[test]
fn javascript_member_call_chains_are_linear() {
    // `cp.exec.bind(cp).bind(cp)..(cmd)`, plain and with `?.`: each `.bind(..)` resolved the
    // chain below it, once for every call above it.
    let links = 10_000;
    for link in [".bind(cp)", "?.bind(cp)"] {
        let text = format!(
            "import cp from 'child_process';\nserver.tool('run', async ({{ cmd }}) => {{\n  cp.exec{}(cmd);\n}});\n",
            link.repeat(links)
        );
        assert_tainted("chain.js", &text, "exec_dynamic_string");
    }
}

#[test]
fn javascript_function_chains_are_linear() {
    // The handler calls `f0`, each `fi` calls `f{i+1}` with its parameter, declared in call
    // order, and the last runs `cp.exec`: each parameter tainted used to rebuild the index of
    // tainted references from every tainted symbol (20 000 rebuilds of up to 20 000 symbols).
    let functions = 20_000;
    let mut text = String::from(
        "const cp = require('child_process');\nserver.tool('t', {}, async ({ x }) => { f0(x); });\n",
    );
    for i in 0..functions {
        text.push_str(&format!("function f{i}(v) {{ f{}(v); }};\n", i + 1));
    }
    text.push_str(&format!("function f{functions}(v) {{ cp.exec(v); }}\n"));
    assert_tainted("chain.js", &text, "exec_dynamic_string");
}

#[test]
fn python_chained_assignments_are_linear() {
    // `a = a = .. = a = cmd`, 20 000 targets: the value of each link used to be found by
    // walking down every link below it.
    let targets = 20_000;
    let text = format!(
        "{PY_TOOL}    a = {}cmd\n    os.system(a)\n",
        "a = ".repeat(targets - 1)
    );
    assert_tainted("chain.py", &text, "exec_dynamic_string");
}

#[test]
fn python_nested_lambdas_are_linear() {
    // `lambda: c if b else lambda: ..`, 12 000 lambdas deep, reading `c` and `b` in each:
    // each read used to look for its scope in every lambda around it. `c` is a constant of
    // the module, so the innermost command is one, and `cmd` of the tool is not.
    let lambdas = 12_000;
    let text = format!(
        "{PY_MODULE}c = 'ls'\nb = True\nf = {}os.system(c)\n@mcp.tool()\ndef run(cmd):\n    g = {}os.system(cmd)\n",
        "lambda: c if b else ".repeat(lambdas),
        "lambda: c if b else ".repeat(lambdas),
    );
    let findings = scan::scan_text(Path::new("lambdas.py"), &text).expect("scans");
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(findings[0].rule_id == "exec_dynamic_string" && findings[0].tainted_from_tool_input);
}

#[test]
fn python_many_names_in_deep_lambda_nests_are_linear() {
    // 4 000 different names read inside 4 000 lambdas: remembering each name's scope in every
    // lambda around the read would be depth × names entries. Then 20 000 reads after a closed
    // nest of 20 000 lambdas, which a walk up from the last scope before each read would
    // cross whole. `c` is a constant of
    // the module, so `os.system(c)` is not a finding, and the tool's `cmd` is.
    let (depth, names) = (4_000, 4_000);
    let reads: Vec<String> = (0..names).map(|i| format!("a{i}")).collect();
    let text = format!(
        "{PY_MODULE}c = 'ls'\nf = {}({})\ng = {}0\nh = ({})\nos.system(c)\n\
         @mcp.tool()\ndef run(cmd):\n    os.system(cmd)\n",
        "lambda: ".repeat(depth),
        reads.join(", "),
        "lambda: ".repeat(20_000),
        "c, ".repeat(20_000),
    );
    let findings = scan::scan_text(Path::new("names.py"), &text).expect("scans");
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(findings[0].rule_id == "exec_dynamic_string" && findings[0].tainted_from_tool_input);
}

#[test]
fn python_nested_f_strings_are_linear() {
    // `f"{f"{..{cmd}..}"}"`, 20 000 deep: below Python 3.12 ruff checks each replacement
    // field for comments by a search of the file's tokens, quadratic in the nesting; the
    // scan parses as the newest Python, which has no such check.
    let levels = 20_000;
    let text = format!(
        "{PY_TOOL}    os.system({}cmd{})\n",
        "f\"{".repeat(levels),
        "}\"".repeat(levels)
    );
    assert_tainted("fstrings.py", &text, "exec_template_literal_with_input");
}
