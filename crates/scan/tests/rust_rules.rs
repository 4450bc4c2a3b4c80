//! Rust: `Command::new` with a non-literal program, shells with a non-literal `-c` script,
//! the local-`Command` trap, `#[tool]` taint and pragmas.

use std::path::Path;

fn hits(source: &str) -> Vec<(&'static str, usize)> {
    crate::common::hits("main.rs", source)
}

#[test]
fn non_literal_program_is_exec_file_dynamic() {
    let src = "use std::process::Command;\nfn f(p: &str) {\n    Command::new(p).status();\n    std::process::Command::new(&cfg.bin).spawn();\n    Command::new(\"git\").arg(p).status();\n}\n";
    assert_eq!(
        hits(src),
        [("exec_file_dynamic", 3), ("exec_file_dynamic", 4)]
    );
}

#[test]
fn shell_with_non_literal_script_is_shell_true_option() {
    let src = r#"use std::process::Command;
fn f(x: String) {
    Command::new("sh").arg("-c").arg(&x).output();
    Command::new("bash").args(["-c", x.as_str()]).output();
    Command::new("cmd").args(&["/C", &x]).output();
    Command::new("sh").args(vec!["-c", x]).output();
    tokio::process::Command::new("/bin/sh").arg("-c").arg(format!("ls {x}")).spawn();
    Command::new("sh").arg("-c").arg("ls -l").output();
}
"#;
    assert_eq!(
        hits(src),
        [
            ("shell_true_option", 3),
            ("shell_true_option", 4),
            ("shell_true_option", 5),
            ("shell_true_option", 6),
            ("shell_true_option", 7)
        ]
    );
}

#[test]
fn shell_built_through_a_variable() {
    let src = "use std::process::Command;\nfn f(x: &str) {\n    let mut c = Command::new(\"sh\");\n    c.arg(\"-c\");\n    c.arg(x);\n    c.status();\n}\n";
    assert_eq!(hits(src), [("shell_true_option", 3)]);
}

#[test]
fn a_local_command_type_is_not_a_sink() {
    let src = "struct Command;\nimpl Command { fn new(_: &str) -> Self { Command } }\nfn f(x: &str) { Command::new(x); }\n";
    assert!(hits(src).is_empty());
}

#[test]
fn tool_parameters_taint_and_raise() {
    let src = r#"use std::process::Command;
#[tool_router]
impl Server {
    #[tool(description = "run")]
    async fn run(&self, Parameters(Args { cmd, .. }): Parameters<Args>) -> String {
        let line = format!("git {cmd}");
        Command::new("sh").arg("-c").arg(&line).output();
        Command::new(&self.bin).output();
        String::new()
    }
}
"#;
    let findings = scan::scan_text(Path::new("s.rs"), src).expect("parses");
    let shell = findings.iter().find(|f| f.line == 7).expect("line 7");
    assert!(shell.tainted_from_tool_input);
    assert_eq!(shell.severity, scan::rule::Severity::Critical);
    // A program that is not a literal but not tool input either: a point to review.
    let program = findings.iter().find(|f| f.line == 8).expect("line 8");
    assert!(!program.tainted_from_tool_input);
    assert_eq!(program.severity, scan::rule::Severity::Medium);
}

#[test]
fn rust_pragmas_and_strings() {
    let src = "use std::process::Command;\nfn f(x: &str) {\n    // safe-mcp: ignore-next-line\n    Command::new(x);\n    let s = \"// shellguard:ignore-file\";\n    Command::new(x);\n}\n";
    assert_eq!(hits(src), [("exec_file_dynamic", 6)]);
}

#[test]
fn rust_syntax_error_is_an_error() {
    assert!(scan::scan_text(Path::new("x.rs"), "fn f( {").is_err());
}
