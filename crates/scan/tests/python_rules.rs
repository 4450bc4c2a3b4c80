//! Python: each mapped rule, alias resolution, shadowing traps, taint and pragmas.

use std::path::Path;

fn hits(source: &str) -> Vec<(&'static str, usize)> {
    crate::common::hits("server.py", source)
}

#[test]
fn os_system_f_string_is_template_rule_and_concat_is_dynamic() {
    let src =
        "import os\nos.system(f'ls {d}')\nos.system('ls ' + d)\nos.popen(cmd)\nos.system('ls')\n";
    assert_eq!(
        hits(src),
        [
            ("exec_dynamic_string", 3),
            ("exec_dynamic_string", 4),
            ("exec_template_literal_with_input", 2)
        ]
    );
}

#[test]
fn subprocess_shell_true_and_dynamic_shell_values() {
    let src = "import subprocess\nsubprocess.run('ls', shell=True, timeout=5)\nsubprocess.run(cmd, shell=flag, timeout=5)\nsubprocess.Popen(f'git {x}', shell=1)\n";
    assert_eq!(
        hits(src),
        [
            ("exec_dynamic_string", 3),
            ("exec_template_literal_with_input", 4),
            ("shell_true_option", 3),
            ("shell_true_option", 4)
        ]
    );
    // Line 2 runs only a constant through the shell: nothing to inject.
}

#[test]
fn literal_false_shell_values_stay_clean() {
    for value in ["False", "None", "0", "''"] {
        let src =
            format!("import subprocess\nsubprocess.run(['ls', '-l'], shell={value}, timeout=5)\n");
        assert!(hits(&src).is_empty(), "shell={value}");
    }
}

#[test]
fn getoutput_and_asyncio_shell() {
    let src = "import subprocess, asyncio\nsubprocess.getoutput(c)\nsubprocess.getstatusoutput(f'x {y}')\nasyncio.create_subprocess_shell(c)\n";
    assert_eq!(
        hits(src),
        [
            ("exec_dynamic_string", 2),
            ("exec_dynamic_string", 4),
            ("exec_template_literal_with_input", 3)
        ]
    );
}

#[test]
fn argv_lists_map_to_spawn_rules() {
    let src = "import subprocess\nsubprocess.run([prog, 'x'], timeout=1)\nsubprocess.run(['git', ref], timeout=1)\nsubprocess.run(['sh', '-c', script], timeout=1)\nsubprocess.run(['git', 'status'], timeout=1)\n";
    assert_eq!(
        hits(src),
        [
            ("shell_true_option", 4),
            ("spawn_dynamic_file_args", 2),
            ("spawn_literal_dynamic_args", 3)
        ]
    );
}

#[test]
fn os_exec_family_and_asyncio_exec_with_dynamic_program() {
    let src = "import os, asyncio\nos.execvp(prog, [prog])\nos.execl('/bin/sh', 'sh', '-c', cmd)\nasyncio.create_subprocess_exec(prog)\nos.spawnlp(os.P_WAIT, 'ls', 'ls')\n";
    assert_eq!(
        hits(src),
        [
            ("exec_file_dynamic", 2),
            ("exec_file_dynamic", 4),
            ("exec_file_dynamic", 5),
            ("shell_true_option", 3)
        ]
    );
}

#[test]
fn pty_spawn_eval_exec_compile() {
    let src = "import pty\npty.spawn(argv)\neval(expr)\nexec(code)\ncompile(src, '<x>', 'exec')\ncompile(src, '<x>', 'eval')\n";
    assert_eq!(
        hits(src),
        [
            ("eval_near_child_process", 3),
            ("eval_near_child_process", 4),
            ("function_constructor_near_child_process", 5),
            ("spawn_dynamic_file_args", 2)
        ]
    );
}

#[test]
fn missing_timeout_for_run_family_only() {
    let src = "import subprocess\nsubprocess.run(['ls'])\nsubprocess.Popen(['ls'])\nsubprocess.check_output(['ls'], **opts)\n";
    assert_eq!(hits(src), [("missing_timeout", 2)]);
}

#[test]
fn alias_forms_resolve() {
    let src = "from subprocess import run as r, Popen\nimport subprocess as sp\nfrom os import system as sh_run\nimport os.path\nfrom asyncio import subprocess as asp\nr(c, shell=True, timeout=1)\nsp.call(c, shell=True, timeout=1)\nsh_run(c)\nos.system(c)\nPopen(c, shell=True)\nasp.create_subprocess_shell(c)\n";
    let found = hits(src);
    for line in [6, 7, 8, 9, 10, 11] {
        assert!(
            found.iter().any(|(_, l)| *l == line),
            "line {line}: {found:?}"
        );
    }
}

#[test]
fn other_modules_and_local_definitions_are_not_sinks() {
    let src = "from db import exec, run\nimport mylib as subprocess\nexec(q)\nrun(cmd, shell=True)\nsubprocess.run(cmd, shell=True)\n";
    assert!(hits(src).is_empty(), "{:?}", hits(src));
    let shadow = "import os\nfrom os import system\ndef system(x):\n    return x\nsystem(cmd)\ndef eval(x):\n    return x\neval(y)\n";
    assert!(hits(shadow).is_empty(), "{:?}", hits(shadow));
}

#[test]
fn mcp_tool_parameters_taint_and_raise() {
    let src = r#"import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

@mcp.tool()
def run(command: str, cwd: str = ".") -> str:
    full = f"git {command}"
    helper(full)
    subprocess.run(["git", "log", other], timeout=5)
    return subprocess.run(full, shell=True, timeout=5).stdout

def helper(line):
    subprocess.run(["git", line], timeout=5)

@server.call_tool()
async def call(name, arguments):
    import os
    os.system(arguments["cmd"])
"#;
    let findings = scan::scan_text(Path::new("s.py"), src).expect("parses");
    let at = |line: usize, rule: &str| {
        findings
            .iter()
            .find(|f| f.line == line && f.rule_id == rule)
            .unwrap_or_else(|| panic!("{line} {rule}: {findings:#?}"))
    };
    let shell = at(10, "shell_true_option");
    assert!(shell.tainted_from_tool_input);
    assert_eq!(shell.severity, scan::rule::Severity::Critical);
    assert!(at(10, "exec_dynamic_string").tainted_from_tool_input);
    assert!(!at(9, "spawn_literal_dynamic_args").tainted_from_tool_input);
    // `git` runs code through options and no `--` precedes the tainted argument.
    let helper = at(13, "argv_flag_injection");
    assert!(helper.tainted_from_tool_input);
    assert_eq!(helper.severity, scan::rule::Severity::High);
    assert!(at(18, "exec_dynamic_string").tainted_from_tool_input);
}

#[test]
fn python_pragmas_are_real_comments() {
    let src = "import os\n# safe-mcp: ignore-next-line\nos.system(a)\ns = '# safe-mcp: ignore-file'\nos.system(b)  # shellguard:ignore-next-line\nos.system(c)\n";
    assert_eq!(hits(src), [("exec_dynamic_string", 5)]);
}

#[test]
fn python_syntax_error_is_an_error() {
    let error = scan::scan_text(Path::new("x.py"), "def f(:\n  pass\n").expect_err("syntax error");
    assert_eq!(
        error,
        scan::error::SourceError::Syntax { line: 1 },
        "{error}"
    );
}

fn tool_findings(body: &str) -> Vec<scan::finding::Finding> {
    let src = format!(
        "import subprocess\nfrom mcp.server.fastmcp import FastMCP\nmcp = FastMCP(\"x\")\n@mcp.tool()\ndef t(x: str):\n    {body}\n"
    );
    scan::scan_text(Path::new("t.py"), &src).expect("parses")
}

#[test]
fn argv_severities_follow_the_program() {
    use scan::rule::Severity;
    let one = |body: &str| {
        let findings = tool_findings(body);
        assert_eq!(findings.len(), 1, "{body}: {findings:#?}");
        let finding = findings.into_iter().next().expect("one");
        assert!(finding.tainted_from_tool_input, "{body}");
        (finding.rule_id, finding.severity)
    };
    // A benign program: tainted arguments stay MEDIUM.
    assert_eq!(
        one(r#"subprocess.run(["ls", x], timeout=5)"#),
        ("spawn_literal_dynamic_args", Severity::Medium)
    );
    // A program that runs code through options, behind `--`: the input is an operand, so
    // it is not raised.
    assert_eq!(
        one(r#"subprocess.run(["git", "--", x], timeout=5)"#),
        ("spawn_literal_dynamic_args", Severity::Medium)
    );
    // Without `--`: the argument can be an option.
    assert_eq!(
        one(r#"subprocess.run(["git", "log", x], timeout=5)"#),
        ("argv_flag_injection", Severity::High)
    );
    assert_eq!(
        one(r#"args = ["kubectl", "get"]; args += [x]; subprocess.run(args, timeout=5)"#),
        ("argv_flag_injection", Severity::High)
    );
    // `--` after the tainted element does not separate it.
    assert_eq!(
        one(r#"subprocess.run(["git", x, "--"], timeout=5)"#),
        ("argv_flag_injection", Severity::High)
    );
}

#[test]
fn constant_and_literal_argv_are_clean() {
    for body in [
        r#"subprocess.run(["ls", "-la"], timeout=5)"#,
        r#"C = "ls " + "-la"; subprocess.run(C, shell=True, timeout=5)"#,
    ] {
        let findings = tool_findings(body);
        let rules: Vec<_> = findings.iter().map(|f| f.rule_id).collect();
        assert!(
            rules.iter().all(|r| *r == "shell_true_option"),
            "{body}: {rules:?}"
        );
    }
}

#[test]
fn a_program_chosen_by_tool_input_is_critical_and_a_parameter_medium() {
    use scan::rule::Severity;
    let tainted = tool_findings(r#"subprocess.run([x, "--version"], timeout=5)"#);
    assert_eq!(tainted.len(), 1, "{tainted:#?}");
    assert_eq!(tainted[0].rule_id, "spawn_dynamic_file_args");
    assert!(tainted[0].tainted_from_tool_input);
    assert_eq!(tainted[0].severity, Severity::Critical);
    // A wrapper's parameter, no tool handler in sight.
    let src = "import subprocess\ndef version(path):\n    subprocess.run([path, \"--version\"], timeout=5)\n";
    let findings = scan::scan_text(Path::new("find.py"), src).expect("parses");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].rule_id, "spawn_dynamic_file_args");
    assert!(!findings[0].tainted_from_tool_input);
    assert_eq!(findings[0].severity, Severity::Medium);
}
