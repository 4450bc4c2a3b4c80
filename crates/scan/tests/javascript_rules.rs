//! JavaScript/TypeScript rules: a positive case per rule, every alias form of item 1 of the
//! issue, and the clean traps the peer scanner got wrong.

use crate::common::hits;
use std::path::Path;

fn rule_ids(file: &str, source: &str) -> Vec<&'static str> {
    let mut ids: Vec<_> = hits(file, source).into_iter().map(|(id, _)| id).collect();
    ids.sort();
    ids.dedup();
    ids
}

fn fires(file: &str, source: &str, rule: &str) -> bool {
    rule_ids(file, source).contains(&rule)
}

const CP: &str =
    "import { exec, execSync, execFile, execFileSync, spawn, spawnSync } from 'child_process';\n";

// ---- one positive per rule -------------------------------------------------------------

#[test]
fn exec_template_literal_with_input_fires_on_interpolated_command() {
    let src = format!("{CP}exec(`ls ${{dir}}`, {{ timeout: 1, maxBuffer: 1 }});");
    assert_eq!(rule_ids("a.ts", &src), ["exec_template_literal_with_input"]);
}

#[test]
fn exec_dynamic_string_fires_on_concatenation_and_variables() {
    let src = format!("{CP}exec('ls ' + dir);\nexec(cmd, {{ timeout: 5, maxBuffer: 1 }});");
    let found = hits("a.js", &src);
    assert!(found.contains(&("exec_dynamic_string", 2)));
    assert!(found.contains(&("exec_dynamic_string", 3)));
    assert!(found.contains(&("unbounded_buffer", 2)));
    assert!(found.contains(&("missing_timeout", 2)));
    assert!(!found.contains(&("missing_timeout", 3)));
}

#[test]
fn exec_sync_dynamic_string_fires_on_non_literal() {
    let src = format!("{CP}execSync(`git ${{x}}`, {{ timeout: 1, maxBuffer: 1 }});");
    assert_eq!(rule_ids("a.mjs", &src), ["exec_sync_dynamic_string"]);
}

#[test]
fn eval_and_function_constructor_fire() {
    let src = "eval(code);\nconst f = new Function('a', body);\nFunction(body)();\n(0, eval)(x);\nglobalThis.eval(y);";
    let found = hits("a.js", src);
    assert!(found.contains(&("eval_near_child_process", 1)));
    assert!(found.contains(&("function_constructor_near_child_process", 2)));
    assert!(found.contains(&("function_constructor_near_child_process", 3)));
    assert!(found.contains(&("eval_near_child_process", 4)));
    assert!(found.contains(&("eval_near_child_process", 5)));
}

#[test]
fn local_eval_is_not_the_global() {
    let src =
        "function evaluate(eval) { return eval(1); }\nconst Function = (x) => x;\nFunction(1);";
    assert!(hits("a.js", src).is_empty());
}

#[test]
fn spawn_dynamic_file_args_fires_even_with_literal_args() {
    let src = format!(
        "{CP}spawn(file, [], {{ timeout: 1 }});\nspawnSync(bin, ['--version'], {{ timeout: 1 }});"
    );
    let found = hits("a.ts", &src);
    assert_eq!(
        found,
        [
            ("spawn_dynamic_file_args", 2),
            ("spawn_dynamic_file_args", 3)
        ]
    );
}

#[test]
fn exec_file_dynamic_fires_for_both_variants() {
    let src = format!(
        "{CP}execFile(p, ['a'], {{ timeout: 1, maxBuffer: 9 }});\nexecFileSync(p, {{ timeout: 1, maxBuffer: 9 }});"
    );
    assert_eq!(
        hits("a.ts", &src),
        [("exec_file_dynamic", 2), ("exec_file_dynamic", 3)]
    );
}

#[test]
fn shell_true_option_catches_true_strings_dynamic_quoted_key_and_not_zero() {
    for options in [
        "{ shell: true }",
        "{ shell: '/bin/bash' }",
        "{ shell: useShell }",
        "{ \"shell\": true }",
        "{ shell: !0 }",
        "{ ['shell']: true }",
    ] {
        let src = format!(
            "{CP}spawn('ls', [dir], {{ ...{options}, timeout: 1 }});\nspawn('ls', [dir], {options});"
        );
        assert!(
            fires("a.ts", &src, "shell_true_option"),
            "{options} should fire"
        );
        // A shell that runs only constants has nothing to inject.
        let constant = format!("{CP}spawn('ls', ['-l'], {{ ...{options}, timeout: 1 }});");
        assert!(
            !fires("a.ts", &constant, "shell_true_option"),
            "{options} with a constant command should not fire"
        );
    }
}

#[test]
fn shell_false_and_empty_string_stay_clean() {
    for options in [
        "{ shell: false }",
        "{ shell: '' }",
        "{ shell: 0 }",
        "{ shell: undefined }",
        "{ shell: null }",
        "{ shell: !1 }",
    ] {
        let src = format!(
            "{CP}spawn('ls', ['-l'], {{ timeout: 5, shell: {} }});",
            &options[9..options.len() - 2]
        );
        assert!(
            hits("a.ts", &src).is_empty(),
            "{options} should be clean: {:?}",
            hits("a.ts", &src)
        );
    }
}

#[test]
fn shell_option_through_a_const_options_object_is_seen() {
    let src =
        format!("{CP}const opts = {{ shell: true, timeout: 1 }};\nspawn('ls', ['-l', dir], opts);");
    assert_eq!(
        rule_ids("a.ts", &src),
        ["shell_true_option", "spawn_literal_dynamic_args"]
    );
}

#[test]
fn shell_wrappers_count_as_shell_true_option() {
    let src = format!(
        "{CP}spawn('sh', ['-c', x], {{ timeout: 1 }});\nexecFile('bash', ['-lc', cmd], {{ timeout: 1, maxBuffer: 1 }});\nspawn('cmd.exe', ['/C', x], {{ timeout: 1 }});"
    );
    assert_eq!(
        hits("a.ts", &src),
        [
            ("shell_true_option", 2),
            ("shell_true_option", 3),
            ("shell_true_option", 4)
        ]
    );
    let literal = format!("{CP}spawn('sh', ['-c', 'ls -l'], {{ timeout: 1 }});");
    assert!(hits("a.ts", &literal).is_empty());
}

#[test]
fn os_system_equivalent_covers_deno_and_bun() {
    let src = "Deno.run({ cmd: [x] });\nnew Deno.Command(x).spawn();\nBun.spawn([x]);\nBun.spawnSync([x]);\nBun.$`ls ${x}`;";
    let found = hits("a.ts", src);
    assert_eq!(
        found,
        [
            ("os_system_equivalent", 1),
            ("os_system_equivalent", 2),
            ("os_system_equivalent", 3),
            ("os_system_equivalent", 4),
            ("os_system_equivalent", 5)
        ]
    );
    let local = "const Deno = { run() {} };\nDeno.run({});";
    assert!(hits("a.ts", local).is_empty());
}

#[test]
fn spawn_literal_dynamic_args_fires_on_user_args() {
    let src = format!(
        "{CP}spawn('git', userArgs, {{ timeout: 1 }});\nspawn('git', ['log', ref], {{ timeout: 1 }});"
    );
    assert_eq!(
        hits("a.ts", &src),
        [
            ("spawn_literal_dynamic_args", 2),
            ("spawn_literal_dynamic_args", 3)
        ]
    );
}

#[test]
fn unbounded_buffer_and_missing_timeout_fire_on_literal_calls() {
    let src = format!("{CP}exec('ls');\nspawn('ls', ['-l']);");
    assert_eq!(
        hits("a.ts", &src),
        [
            ("missing_timeout", 2),
            ("missing_timeout", 3),
            ("unbounded_buffer", 2)
        ]
    );
}

#[test]
fn options_from_an_unknown_variable_do_not_claim_missing_limits() {
    let src = format!("{CP}exec('ls', options);\nspawn('ls', ['-l'], makeOptions());");
    assert!(hits("a.ts", &src).is_empty());
}

#[test]
fn const_command_string_is_literal() {
    let src = format!("{CP}const CMD = 'ls -l';\nexec(CMD, {{ timeout: 1, maxBuffer: 1 }});");
    assert!(hits("a.ts", &src).is_empty());
}

// ---- alias forms -----------------------------------------------------------------------

fn assert_exec_resolved(name: &str, src: &str) {
    assert!(
        fires("a.ts", src, "exec_dynamic_string"),
        "{name}: {:?}",
        hits("a.ts", src)
    );
}

#[test]
fn named_import_with_rename_and_node_prefix() {
    assert_exec_resolved(
        "named as",
        "import { exec as run } from 'node:child_process';\nrun(cmd);",
    );
}

#[test]
fn default_and_namespace_imports() {
    assert_exec_resolved("default", "import cp from 'child_process';\ncp.exec(cmd);");
    assert_exec_resolved(
        "namespace",
        "import * as proc from 'node:child_process';\nproc.exec(cmd);",
    );
    assert_exec_resolved(
        "default.member",
        "import * as m from 'child_process';\nm.default.exec(cmd);",
    );
}

#[test]
fn typescript_import_equals_require() {
    assert_exec_resolved(
        "import =",
        "import cp = require('child_process');\ncp.exec(cmd);",
    );
}

#[test]
fn require_forms() {
    assert_exec_resolved(
        "require ns",
        "const proc = require('child_process');\nproc.exec(cmd);",
    );
    assert_exec_resolved("inline", "require('child_process').exec(cmd);");
    assert_exec_resolved(
        "destructure rename",
        "const { exec: go } = require('node:child_process');\ngo(cmd);",
    );
    assert_exec_resolved(
        "destructure from local",
        "const cp = require('child_process');\nconst { exec: r } = cp;\nr(cmd);",
    );
    assert_exec_resolved(
        "module.require",
        "module.require('child_process').exec(cmd);",
    );
    assert_exec_resolved(
        "createRequire",
        "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq('child_process').exec(cmd);",
    );
}

#[test]
fn promisify_forms() {
    assert_exec_resolved(
        "util.promisify",
        "const util = require('util');\nconst cp = require('child_process');\nconst run = util.promisify(cp.exec);\nawait run(cmd);",
    );
    assert_exec_resolved(
        "bare promisify",
        "import { promisify } from 'node:util';\nimport { exec } from 'child_process';\nconst run = promisify(exec);\nrun(cmd);",
    );
    assert_exec_resolved(
        "promisify renamed",
        "const { promisify: p } = require('util');\nconst run = p(require('child_process').exec);\nrun(cmd);",
    );
}

#[test]
fn member_alias_computed_access_and_call_apply_bind() {
    assert_exec_resolved(
        "member alias",
        "import cp from 'child_process';\nconst run = cp.exec;\nrun(cmd);",
    );
    assert_exec_resolved(
        "computed",
        "import cp from 'child_process';\ncp['exec'](cmd);",
    );
    assert_exec_resolved(
        "call",
        "import { exec } from 'child_process';\nexec.call(null, cmd);",
    );
    assert_exec_resolved(
        "apply",
        "import { exec } from 'child_process';\nexec.apply(null, [cmd]);",
    );
    assert_exec_resolved(
        "bind",
        "import cp from 'child_process';\nconst run = cp.exec.bind(cp);\nrun(cmd);",
    );
    assert_exec_resolved(
        "bind inline",
        "import cp from 'child_process';\ncp.exec.bind(cp)(cmd);",
    );
    assert_exec_resolved(
        "fallback alias",
        "import { exec } from 'child_process';\nconst run = deps.exec ?? exec;\nrun(cmd);",
    );
}

#[test]
fn dynamic_import_forms() {
    assert_exec_resolved(
        "await import",
        "const cp = await import('node:child_process');\ncp.exec(cmd);",
    );
    assert_exec_resolved(
        "destructured import",
        "const { exec } = await import('child_process');\nexec(cmd);",
    );
    assert_exec_resolved(
        "default of import",
        "const cp = (await import('child_process')).default;\ncp.exec(cmd);",
    );
}

#[test]
fn bind_apply_arguments_are_positional() {
    let src = "import { exec } from 'child_process';\nexec.call(null, 'ls', { timeout: 1, maxBuffer: 2 });";
    assert!(hits("a.ts", src).is_empty());
}

// ---- clean traps -----------------------------------------------------------------------

#[test]
fn local_function_named_exec_is_not_a_sink() {
    let src = "function exec(q) { return db.query(q); }\nexec(userQuery);\nconst spawn = (x) => x;\nspawn(file);";
    assert!(hits("a.ts", src).is_empty());
}

#[test]
fn another_modules_exec_is_not_a_sink() {
    let src = "import { exec } from './db';\nimport { spawn as s } from 'other';\nconst { execSync } = require('./runner');\nexec(q);\ns(f);\nexecSync(c);";
    assert!(hits("a.ts", src).is_empty());
}

#[test]
fn promisify_of_another_function_is_clean() {
    let src = "import { promisify } from 'util';\nimport { readFile } from 'fs';\nconst read = promisify(readFile);\nread(path);";
    assert!(hits("a.ts", src).is_empty());
}

#[test]
fn shadowed_child_process_binding_is_clean() {
    let src = "import { exec } from 'child_process';\nfunction f(exec) { exec(cmd); }";
    assert!(hits("a.ts", src).is_empty());
}

#[test]
fn cp_named_copy_utility_is_clean() {
    let src = "import cp from './copy';\ncp.exec(src);";
    assert!(hits("a.ts", src).is_empty());
}

// ---- library sinks ---------------------------------------------------------------------

#[test]
fn execa_cross_spawn_shelljs_sinks() {
    assert!(fires(
        "a.ts",
        "import { execa } from 'execa';\nawait execa(bin, ['x']);",
        "exec_file_dynamic"
    ));
    assert!(fires(
        "a.ts",
        "import { execaCommand } from 'execa';\nawait execaCommand(`git ${x}`);",
        "exec_template_literal_with_input"
    ));
    assert!(fires(
        "a.ts",
        "import { execa } from 'execa';\nawait execa('ls', [dir], { shell: true });",
        "shell_true_option"
    ));
    assert!(fires(
        "a.js",
        "const spawn = require('cross-spawn');\nspawn(cmd, args);",
        "spawn_dynamic_file_args"
    ));
    assert!(fires(
        "a.js",
        "const spawn = require('cross-spawn');\nspawn.sync('sh', ['-c', x]);",
        "shell_true_option"
    ));
    assert!(fires(
        "a.js",
        "const shell = require('shelljs');\nshell.exec('rm -rf ' + dir);",
        "exec_dynamic_string"
    ));
    // Library calls do not get Node's maxBuffer/timeout hygiene rules.
    assert!(
        hits(
            "a.ts",
            "import { execa } from 'execa';\nawait execa('ls', ['-l']);"
        )
        .is_empty()
    );
}

#[test]
fn zx_is_flagged_only_with_quoting_off() {
    let quoted = "import { $ } from 'zx';\nawait $`ls ${dir}`;";
    assert!(hits("a.mjs", quoted).is_empty());
    let unquoted = "import { $ } from 'zx';\n$.quote = (s) => s;\nawait $`ls ${dir}`;";
    assert_eq!(
        hits("a.mjs", unquoted),
        [("exec_template_literal_with_input", 3)]
    );
}

// ---- positions, taint, pragmas ----------------------------------------------------------

#[test]
fn finding_position_is_one_based_line_and_column() {
    let src = format!("{CP}function f() {{\n    exec(cmd);\n}}");
    let findings = scan::scan_text(Path::new("a.ts"), &src).expect("parses");
    let finding = findings
        .iter()
        .find(|f| f.rule_id == "exec_dynamic_string")
        .expect("found");
    assert_eq!((finding.line, finding.column), (3, 5));
    assert_eq!(finding.snippet, "exec(cmd);");
    assert!(!finding.suggested_fix.is_empty());
}

#[test]
fn tool_handler_input_taints_and_raises_severity() {
    let src = r#"import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { spawn, exec } from 'node:child_process';
const server = new McpServer({ name: 'x', version: '1' });
server.tool('run', { cmd: z.string() }, async ({ cmd }) => {
  const line = `git ${cmd}`;
  spawn('git', [line], { timeout: 5 });
  runIt(line);
  spawn('git', otherArgs, { timeout: 5 });
  return { content: [] };
});
function runIt(c) { exec(c, { timeout: 1, maxBuffer: 1 }); }
"#;
    let findings = scan::scan_text(Path::new("server.ts"), src).expect("parses");
    // Tool input reaches git's argv with no `--` before it.
    let flag = findings.iter().find(|f| f.line == 6).expect("line 6");
    assert_eq!(flag.rule_id, "argv_flag_injection");
    assert!(flag.tainted_from_tool_input);
    assert_eq!(flag.severity, scan::rule::Severity::High);
    let untainted = findings.iter().find(|f| f.line == 8).expect("line 8");
    assert!(!untainted.tainted_from_tool_input);
    assert_eq!(untainted.severity, scan::rule::Severity::Medium);
    let through_call = findings.iter().find(|f| f.line == 11).expect("line 11");
    assert_eq!(through_call.rule_id, "exec_dynamic_string");
    assert!(through_call.tainted_from_tool_input);
    assert_eq!(through_call.severity, scan::rule::Severity::Critical);
}

#[test]
fn register_tool_and_call_tool_request_handler_are_taint_sources() {
    let src = r#"import { execSync } from 'child_process';
server.registerTool('x', { inputSchema: {} }, async (args) => { execSync(args.cmd, { timeout: 1, maxBuffer: 1 }); });
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: a } = request.params;
  execSync(a.command, { timeout: 1, maxBuffer: 1 });
});
"#;
    let findings = scan::scan_text(Path::new("s.ts"), src).expect("parses");
    assert_eq!(findings.len(), 2);
    assert!(findings.iter().all(|f| f.tainted_from_tool_input));
}

#[test]
fn next_line_pragma_in_a_comment_suppresses_only_the_next_line() {
    let src = format!(
        "{CP}// shellguard:ignore-next-line\nexec(a, {{ timeout: 1, maxBuffer: 1 }});\nexec(b, {{ timeout: 1, maxBuffer: 1 }});"
    );
    assert_eq!(hits("a.ts", &src), [("exec_dynamic_string", 4)]);
}

#[test]
fn pragma_text_inside_a_string_does_not_count() {
    let src = format!(
        "{CP}const s = '// shellguard:ignore-file';\nconst t = `\n// shellguard:ignore-next-line`;\nexec(a, {{ timeout: 1, maxBuffer: 1 }});"
    );
    assert_eq!(hits("a.ts", &src), [("exec_dynamic_string", 5)]);
}

#[test]
fn file_pragma_in_a_comment_skips_the_file() {
    let src = format!("// shellguard:ignore-file\n{CP}exec(a);");
    assert!(hits("a.ts", &src).is_empty());
}

#[test]
fn jsx_in_plain_js_still_parses() {
    let src = "import { exec } from 'child_process';\nconst el = <div>{x}</div>;\nexec(cmd, { timeout: 1, maxBuffer: 1 });";
    assert_eq!(hits("a.js", src), [("exec_dynamic_string", 3)]);
}

#[test]
fn parse_error_is_an_error() {
    assert!(scan::scan_text(Path::new("a.ts"), "const = ;").is_err());
}

#[test]
fn commonjs_top_level_return_and_declaration_files_parse() {
    let script =
        "if (!x) { return; }\nrequire('child_process').exec(cmd, { timeout: 1, maxBuffer: 1 });";
    assert_eq!(hits("a.js", script), [("exec_dynamic_string", 2)]);
    let declarations = "declare function f(): void;\nexport declare function g(a: string): number;";
    assert!(hits("types.d.cts", declarations).is_empty());
}

// ---- argv rules, constant propagation and the newer sinks ------------------------------

const TOOL: &str = "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\nimport { spawn, exec, execFile } from 'node:child_process';\nconst server = new McpServer({ name: 'x', version: '1' });\n";

/// (rule id, severity, tainted) of the only finding of `body` inside a tool handler.
fn only_in_handler(body: &str) -> (&'static str, scan::rule::Severity, bool) {
    let src = format!("{TOOL}server.tool('t', {{}}, async ({{ x }}) => {{\n  {body}\n}});\n");
    let findings = scan::scan_text(Path::new("server.ts"), &src).expect("parses");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    (
        finding.rule_id,
        finding.severity,
        finding.tainted_from_tool_input,
    )
}

#[test]
fn tainted_args_of_a_plain_program_stay_medium() {
    use scan::rule::Severity;
    assert_eq!(
        only_in_handler("spawn('ls', [x], { timeout: 1 });"),
        ("spawn_literal_dynamic_args", Severity::Medium, true)
    );
}

#[test]
fn tainted_args_after_a_separator_of_git_are_operands() {
    use scan::rule::Severity;
    // Behind `--` the input cannot be one of git's options: an operand, not raised.
    assert_eq!(
        only_in_handler("spawn('git', ['--', x], { timeout: 1 });"),
        ("spawn_literal_dynamic_args", Severity::Medium, true)
    );
    // A separator only counts before the tainted element.
    assert_eq!(
        only_in_handler("spawn('git', [x, '--'], { timeout: 1 });"),
        ("argv_flag_injection", Severity::High, true)
    );
}

#[test]
fn argv_flag_injection_is_high_and_follows_pushes() {
    use scan::rule::Severity;
    assert_eq!(
        only_in_handler("spawn('git', ['diff', x], { timeout: 1 });"),
        ("argv_flag_injection", Severity::High, true)
    );
    assert_eq!(
        only_in_handler("const a = ['log']; a.unshift(x); spawn('git', a, { timeout: 1 });"),
        ("argv_flag_injection", Severity::High, true)
    );
    assert_eq!(
        only_in_handler(
            "execFile('/usr/bin/find', ['.', '-name', x], { timeout: 1, maxBuffer: 1 });"
        ),
        ("argv_flag_injection", Severity::High, true)
    );
}

#[test]
fn untainted_args_of_git_are_medium() {
    let src = format!("{CP}spawn('git', ['log', ref], {{ timeout: 1 }});");
    let findings = scan::scan_text(Path::new("a.ts"), &src).expect("parses");
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].rule_id, "spawn_literal_dynamic_args");
    assert_eq!(findings[0].severity, scan::rule::Severity::Medium);
}

#[test]
fn commands_built_from_constants_are_not_findings() {
    let src = format!(
        "{CP}const c = isWin ? 'tasklist' : 'ps aux';\nexec(c, {{ timeout: 1, maxBuffer: 1 }});\n\
         function f(v) {{ let cmd = 'pod repo update'; if (v) cmd += ' --verbose'; exec(cmd, {{ timeout: 1, maxBuffer: 1 }}); }}\n\
         const base = 'git';\nexec(`${{base}} status`, {{ timeout: 1, maxBuffer: 1 }});\n\
         const prog = 'gi' + 't';\nspawn(prog, ['status'], {{ timeout: 1 }});"
    );
    assert!(hits("a.js", &src).is_empty(), "{:?}", hits("a.js", &src));
}

#[test]
fn a_let_reassigned_from_data_stays_dynamic() {
    let src = format!(
        "{CP}function f(input) {{ const x = 'a'; let y = x; y = input; exec(y, {{ timeout: 1, maxBuffer: 1 }}); }}\n\
         function g(input) {{ let z = 'ls'; z = z + input; exec(z, {{ timeout: 1, maxBuffer: 1 }}); }}\n\
         function h(list) {{ let w = 'ls'; for (w of list) {{}} exec(w, {{ timeout: 1, maxBuffer: 1 }}); }}"
    );
    assert_eq!(
        hits("a.js", &src),
        [
            ("exec_dynamic_string", 2),
            ("exec_dynamic_string", 3),
            ("exec_dynamic_string", 4)
        ]
    );
}

#[test]
fn newer_sinks_fire() {
    let src = "import { fork } from 'child_process';\nimport vm from 'vm';\nimport { $ } from 'execa';\n\
               fork(mod);\nvm.runInThisContext(code);\nvm.compileFunction(body);\n\
               await $({ shell: true })`${cmd}`;\nremote.run(['bash', '-lc', script]);";
    assert_eq!(
        hits("a.mjs", src),
        [
            ("eval_near_child_process", 5),
            ("eval_near_child_process", 6),
            ("exec_file_dynamic", 4),
            ("shell_true_option", 7),
            ("shell_true_option", 8)
        ]
    );
}

#[test]
fn folded_names_resolve_to_child_process() {
    let src = "const m = 'child_' + 'process';\nconst name = `ex${'ec'}`;\n\
               const cp = require(m);\ncp[name](cmd, { timeout: 1, maxBuffer: 1 });\n\
               (await import(m)).execSync(cmd2, { timeout: 1, maxBuffer: 1 });";
    assert_eq!(
        hits("a.mjs", src),
        [("exec_dynamic_string", 4), ("exec_sync_dynamic_string", 5)]
    );
}

#[test]
fn a_program_chosen_by_tool_input_is_critical_and_a_parameter_medium() {
    use scan::rule::Severity;
    assert_eq!(
        only_in_handler("spawn(x, ['--version'], { timeout: 1 });"),
        ("spawn_dynamic_file_args", Severity::Critical, true)
    );
    let src = "import { spawn } from 'child_process';\nexport function version(bin: string) {\n  spawn(bin, ['--version'], { timeout: 1 });\n}\n";
    let findings = scan::scan_text(Path::new("bin.ts"), src).expect("parses");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].rule_id, "spawn_dynamic_file_args");
    assert_eq!(findings[0].severity, Severity::Medium);
}
