//! Python: tree-sitter-python parses the file; imports are resolved to the modules we track
//! (`import subprocess as sp`, `from subprocess import run as r`, `from os import system`),
//! module-level definitions shadow them, and each sink call is mapped onto one of the twelve
//! rule ids. Tool handlers (`@mcp.tool()`, `@server.call_tool()`) seed the taint.
//!
//! Mapping onto the rule ids:
//! - shell command strings (`os.system`, `os.popen`, `subprocess.getoutput/getstatusoutput`,
//!   `asyncio.create_subprocess_shell`, `subprocess.*(cmd, shell=<not a literal false>)`):
//!   f-string with `{}` → `exec_template_literal_with_input`; any other non-literal →
//!   `exec_dynamic_string`;
//! - `shell=` anything but `False`/`None`/`0`/`''` → `shell_true_option`, as is
//!   `[sh, '-c', <non-literal>]` in any argv;
//! - `subprocess.*([prog, ...])` / `pty.spawn` with a non-literal program or argv →
//!   `spawn_dynamic_file_args`; literal program with non-literal arguments →
//!   `spawn_literal_dynamic_args`;
//! - `os.exec*`, `os.spawn*`, `os.posix_spawn*`, `asyncio.create_subprocess_exec` with a
//!   non-literal program → `exec_file_dynamic`;
//! - `eval(...)`, `exec(...)` → `eval_near_child_process`; `compile(..., 'exec')` →
//!   `function_constructor_near_child_process`;
//! - `subprocess.run/call/check_call/check_output` without `timeout=` → `missing_timeout`.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::error::SourceError;
use crate::finding::{Analysis, Hit};
use crate::javascript::is_command_flag;
use crate::rule::Rule;
use crate::source::SourceText;
use crate::syntax_tree::{
    Grammar, Reads, Scopes, contains, inside, named_children, parse, text_of, walk_with_parent,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Module {
    Os,
    Subprocess,
    Asyncio,
    Pty,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Function {
    /// `os.system`, `os.popen`, `subprocess.getoutput/getstatusoutput`,
    /// `asyncio.create_subprocess_shell`: the first argument is a shell command.
    ShellCommand,
    /// `subprocess.run/call/check_call/check_output` (`takes_timeout`) and `Popen`.
    Subprocess { takes_timeout: bool },
    /// `os.exec*`, `os.spawn*`, `os.posix_spawn*`, `asyncio.create_subprocess_exec`.
    ExecProgram,
    /// `pty.spawn(argv)`.
    PtySpawn,
    /// Builtin `eval` / `exec`.
    Eval,
    /// Builtin `compile`.
    Compile,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Module(Module),
    Function(Function),
}

fn module_named(dotted: &str) -> Option<Module> {
    Some(match dotted {
        "os" | "posix" | "nt" => Module::Os,
        "subprocess" => Module::Subprocess,
        "asyncio" | "asyncio.subprocess" => Module::Asyncio,
        "pty" => Module::Pty,
        _ => return None,
    })
}

fn member(module: Module, name: &str) -> Option<Value> {
    let function = match (module, name) {
        (Module::Os, "system" | "popen") => Function::ShellCommand,
        (Module::Os, name)
            if name.starts_with("exec")
                || name.starts_with("spawn")
                || name.starts_with("posix_spawn") =>
        {
            Function::ExecProgram
        }
        (Module::Subprocess, "run" | "call" | "check_call" | "check_output") => {
            Function::Subprocess {
                takes_timeout: true,
            }
        }
        (Module::Subprocess, "Popen") => Function::Subprocess {
            takes_timeout: false,
        },
        (Module::Subprocess, "getoutput" | "getstatusoutput") => Function::ShellCommand,
        (Module::Asyncio, "create_subprocess_shell") => Function::ShellCommand,
        (Module::Asyncio, "create_subprocess_exec") => Function::ExecProgram,
        (Module::Asyncio, "subprocess") => return Some(Value::Module(Module::Asyncio)),
        (Module::Pty, "spawn") => Function::PtySpawn,
        _ => return None,
    };
    Some(Value::Function(function))
}

struct Call<'t> {
    node: Node<'t>,
    positional: Vec<Node<'t>>,
    keywords: HashMap<&'t str, Node<'t>>,
    has_splat: bool,
}

struct Analyzer<'s> {
    source: &'s str,
    bindings: HashMap<String, Value>,
    /// Per tool handler (or function reached from one): its tainted names.
    tainted_scopes: Scopes<HashSet<String>>,
    /// Where each name is read (attribute names and keyword names are not reads).
    reads: Reads<'s>,
    hits: Vec<Hit>,
}

impl<'s> Analyzer<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        text_of(node, self.source)
    }

    fn resolve(&self, node: Node<'_>) -> Option<Value> {
        match node.kind() {
            "identifier" => self.bindings.get(self.text(node)).copied(),
            "attribute" => {
                let object = node.child_by_field_name("object")?;
                let attribute = node.child_by_field_name("attribute")?;
                match self.resolve(object)? {
                    Value::Module(module) => member(module, self.text(attribute)),
                    Value::Function(_) => None,
                }
            }
            "parenthesized_expression" => node.named_child(0).and_then(|inner| self.resolve(inner)),
            _ => None,
        }
    }

    fn string_literal_text(&self, node: Node<'_>) -> Option<String> {
        match node.kind() {
            "string" if !has_interpolation(node) => {
                let mut content = String::new();
                for child in named_children(node) {
                    if child.kind() == "string_content" {
                        content.push_str(self.text(child));
                    }
                }
                Some(content)
            }
            "concatenated_string" => {
                let mut content = String::new();
                for child in named_children(node) {
                    content.push_str(&self.string_literal_text(child)?);
                }
                Some(content)
            }
            "parenthesized_expression" => node
                .named_child(0)
                .and_then(|inner| self.string_literal_text(inner)),
            _ => None,
        }
    }

    fn is_literal(&self, node: Node<'_>) -> bool {
        match node.kind() {
            "integer" | "float" | "true" | "false" | "none" => true,
            "binary_operator" => {
                let operator = node.child_by_field_name("operator").map(|op| self.text(op));
                operator == Some("+")
                    && node
                        .child_by_field_name("left")
                        .is_some_and(|left| self.is_literal(left))
                    && node
                        .child_by_field_name("right")
                        .is_some_and(|right| self.is_literal(right))
            }
            _ => self.string_literal_text(node).is_some(),
        }
    }

    /// `False`, `None`, `0`, `''`: the values of `shell=` that keep the shell off.
    fn is_falsy_literal(&self, node: Node<'_>) -> bool {
        match node.kind() {
            "false" | "none" => true,
            "integer" => self.text(node) == "0",
            _ => self
                .string_literal_text(node)
                .is_some_and(|text| text.is_empty()),
        }
    }

    fn mentions_taint(&self, call: Node<'_>, argument: Node<'_>) -> bool {
        self.tainted_scopes
            .containing(call)
            .any(|names| self.reads.any_within(names, argument))
    }

    fn any_tainted(&self, call: &Call<'_>) -> bool {
        call.positional
            .iter()
            .chain(call.keywords.values())
            .any(|arg| self.mentions_taint(call.node, *arg))
    }

    fn hit(&mut self, rule: Rule, call: &Call<'_>, tainted: bool) {
        self.hits
            .push(Hit::new(rule, call.node.start_byte(), tainted));
    }

    /// A shell command string: f-string with `{}`, or any other non-literal.
    fn check_shell_string(&mut self, call: &Call<'_>, command: Option<Node<'_>>) {
        let Some(command) = command else { return };
        let tainted = self.mentions_taint(call.node, command);
        if has_interpolation(command) {
            self.hit(Rule::ExecTemplateLiteralWithInput, call, tainted);
        } else if !self.is_literal(command) {
            self.hit(Rule::ExecDynamicString, call, tainted);
        }
    }

    /// `[sh, '-c', <non-literal>]` in a flattened argv.
    fn is_shell_wrapper(&self, program: Node<'_>, argv: &[Node<'_>]) -> bool {
        let Some(program) = self.string_literal_text(program) else {
            return false;
        };
        let base = program
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&program)
            .to_ascii_lowercase();
        let base = base.strip_suffix(".exe").unwrap_or(&base);
        if !matches!(
            base,
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "fish" | "cmd" | "powershell" | "pwsh"
        ) {
            return false;
        }
        let mut elements = argv.iter();
        while let Some(element) = elements.next() {
            if self
                .string_literal_text(*element)
                .is_some_and(|flag| is_command_flag(&flag))
            {
                return elements
                    .next()
                    .is_some_and(|script| !self.is_literal(*script));
            }
        }
        false
    }

    /// Rules for an argv given as a list/tuple (or anything else) whose first element is the program.
    fn check_argv(&mut self, call: &Call<'_>, argv: Node<'_>) {
        let tainted = self.mentions_taint(call.node, argv);
        if matches!(argv.kind(), "list" | "tuple") {
            let elements = named_children(argv);
            let Some(program) = elements.first().copied() else {
                return;
            };
            if !self.is_literal(program) {
                self.hit(Rule::SpawnDynamicFileArgs, call, tainted);
            } else if self.is_shell_wrapper(program, elements.get(1..).unwrap_or(&[])) {
                self.hit(Rule::ShellTrueOption, call, tainted);
            } else if elements
                .iter()
                .skip(1)
                .any(|element| !self.is_literal(*element))
            {
                self.hit(Rule::SpawnLiteralDynamicArgs, call, tainted);
            }
        } else if !self.is_literal(argv) {
            self.hit(Rule::SpawnDynamicFileArgs, call, tainted);
        }
    }

    fn evaluate(&mut self, function: Function, call: &Call<'_>) {
        let first = call.positional.first().copied();
        match function {
            Function::ShellCommand => {
                let command = first.or_else(|| {
                    call.keywords
                        .get("command")
                        .or(call.keywords.get("cmd"))
                        .copied()
                });
                self.check_shell_string(call, command);
            }
            Function::Subprocess { takes_timeout } => {
                let argv = first.or_else(|| call.keywords.get("args").copied());
                let shell = call
                    .keywords
                    .get("shell")
                    .is_some_and(|value| !self.is_falsy_literal(*value));
                if shell {
                    let tainted = self.any_tainted(call);
                    self.hit(Rule::ShellTrueOption, call, tainted);
                    // With a shell, a list's first element is the script.
                    let command = match argv {
                        Some(list) if matches!(list.kind(), "list" | "tuple") => {
                            named_children(list).first().copied()
                        }
                        other => other,
                    };
                    self.check_shell_string(call, command);
                } else if let Some(argv) = argv {
                    self.check_argv(call, argv);
                }
                if takes_timeout && !call.has_splat && !call.keywords.contains_key("timeout") {
                    self.hit(Rule::MissingTimeout, call, false);
                }
            }
            Function::ExecProgram => {
                let Some(program) = first else { return };
                let tainted = self.mentions_taint(call.node, program);
                if !self.is_literal(program) {
                    self.hit(Rule::ExecFileDynamic, call, tainted);
                    return;
                }
                let mut argv = Vec::new();
                for argument in call.positional.iter().skip(1) {
                    if matches!(argument.kind(), "list" | "tuple") {
                        argv.extend(named_children(*argument));
                    } else {
                        argv.push(*argument);
                    }
                }
                if self.is_shell_wrapper(program, &argv) {
                    let tainted = self.any_tainted(call);
                    self.hit(Rule::ShellTrueOption, call, tainted);
                }
            }
            Function::PtySpawn => {
                if let Some(argv) = first {
                    self.check_argv(call, argv);
                }
            }
            Function::Eval => {
                let tainted = self.any_tainted(call);
                self.hit(Rule::EvalNearChildProcess, call, tainted);
            }
            Function::Compile => {
                let mode = call
                    .positional
                    .get(2)
                    .copied()
                    .or_else(|| call.keywords.get("mode").copied());
                if mode
                    .and_then(|mode| self.string_literal_text(mode))
                    .is_some_and(|mode| mode == "exec")
                {
                    let tainted = self.any_tainted(call);
                    self.hit(Rule::FunctionConstructorNearChildProcess, call, tainted);
                }
            }
        }
    }
}

fn has_interpolation(node: Node<'_>) -> bool {
    match node.kind() {
        "string" => named_children(node)
            .iter()
            .any(|child| child.kind() == "interpolation"),
        "concatenated_string" => named_children(node)
            .iter()
            .any(|child| has_interpolation(*child)),
        "parenthesized_expression" => node.named_child(0).is_some_and(has_interpolation),
        _ => false,
    }
}

/// Names bound by an assignment target or parameter.
fn bound_names(node: Node<'_>, source: &str, out: &mut Vec<String>) {
    match node.kind() {
        "identifier" => out.push(text_of(node, source).to_string()),
        "attribute" | "subscript" => {}
        "default_parameter" | "typed_default_parameter" => {
            if let Some(name) = node.child_by_field_name("name") {
                bound_names(name, source, out);
            }
        }
        _ => {
            for child in named_children(node) {
                if child.kind() != "type" {
                    bound_names(child, source, out);
                }
            }
        }
    }
}

fn parameter_names(function: Node<'_>, source: &str) -> Vec<Vec<String>> {
    let Some(parameters) = function.child_by_field_name("parameters") else {
        return Vec::new();
    };
    named_children(parameters)
        .into_iter()
        .map(|parameter| {
            let mut names = Vec::new();
            bound_names(parameter, source, &mut names);
            names.retain(|name| name != "self" && name != "cls");
            names
        })
        .collect()
}

/// `@mcp.tool()`, `@mcp.tool`, `@server.call_tool()`, `@app.tool(name=...)`.
fn is_tool_decorator(decorator: Node<'_>, source: &str) -> bool {
    let Some(mut expression) = decorator.named_child(0) else {
        return false;
    };
    if expression.kind() == "call" {
        match expression.child_by_field_name("function") {
            Some(function) => expression = function,
            None => return false,
        }
    }
    let name = match expression.kind() {
        "attribute" => expression
            .child_by_field_name("attribute")
            .map(|a| text_of(a, source)),
        "identifier" => Some(text_of(expression, source)),
        _ => None,
    };
    matches!(name, Some("tool" | "call_tool"))
}

/// Analyse one Python file. `Err` carries a parse error message.
pub(crate) fn analyze(source: &SourceText<'_>) -> Result<Analysis, SourceError> {
    let text = source.text();
    let tree = parse(Grammar::Python, text)?;
    let root = tree.root_node();
    let mut analysis = Analysis::default();

    let mut calls = Vec::new();
    let mut imports = Vec::new();
    let mut functions = Vec::new();
    let mut assignments = Vec::new();
    // Functions defined at module level or under decorators (`by_name` candidates), and the
    // decorated ones with their decorated_definition.
    let mut named_functions = Vec::new();
    let mut decorated = Vec::new();
    let mut reads = Reads::default();
    // The `.attr` of an attribute and the `name=` of a keyword argument are not reads.
    let mut not_reads = HashSet::new();
    walk_with_parent(root, |node, parent| match node.kind() {
        "attribute" => not_reads.extend(node.child_by_field_name("attribute").map(|n| n.id())),
        "keyword_argument" => not_reads.extend(node.child_by_field_name("name").map(|n| n.id())),
        "identifier" if !not_reads.contains(&node.id()) => {
            reads.add(text_of(node, text), node.start_byte());
        }
        "comment" => {
            let body = text_of(node, text).trim_start_matches('#');
            analysis
                .pragmas
                .record_comment(body, node.end_position().row + 1);
        }
        "call" => calls.push(node),
        "import_statement" | "import_from_statement" => imports.push(node),
        "function_definition" => {
            functions.push(node);
            if let Some(parent) = parent {
                if parent == root || parent.kind() == "decorated_definition" {
                    named_functions.push(node);
                }
                if parent.kind() == "decorated_definition" {
                    decorated.push((node, parent));
                }
            }
        }
        "assignment" => assignments.push(node),
        _ => {}
    });
    // An ignore-file pragma is applied by the caller, after the analysis: `--strict` scans
    // the file anyway.

    let mut bindings: HashMap<String, Value> = HashMap::from([
        ("eval".to_string(), Value::Function(Function::Eval)),
        ("exec".to_string(), Value::Function(Function::Eval)),
        ("compile".to_string(), Value::Function(Function::Compile)),
    ]);
    for import in &imports {
        let from = import
            .child_by_field_name("module_name")
            .map(|module| text_of(module, text));
        let mut cursor = import.walk();
        for name in import.children_by_field_name("name", &mut cursor) {
            let (imported, local) = match name.kind() {
                "aliased_import" => {
                    let imported = name
                        .child_by_field_name("name")
                        .map(|n| text_of(n, text))
                        .unwrap_or("");
                    let alias = name
                        .child_by_field_name("alias")
                        .map(|n| text_of(n, text))
                        .unwrap_or("");
                    (imported, alias.to_string())
                }
                _ => {
                    let imported = text_of(name, text);
                    let local = match from {
                        Some(_) => imported.to_string(),
                        // `import os.path` binds `os`.
                        None => imported.split('.').next().unwrap_or(imported).to_string(),
                    };
                    (imported, local)
                }
            };
            let value = match from {
                Some(module) => module_named(module).and_then(|module| member(module, imported)),
                None if name.kind() == "aliased_import" => {
                    module_named(imported).map(Value::Module)
                }
                None => module_named(&local).map(Value::Module),
            };
            match value {
                Some(value) => {
                    bindings.insert(local, value);
                }
                // `from db import exec`: the name now means something else.
                None => {
                    bindings.remove(&local);
                }
            }
        }
    }
    // Module-level definitions shadow imports and builtins of the same name.
    for child in named_children(root) {
        let definition = match child.kind() {
            "decorated_definition" => child.child_by_field_name("definition"),
            "function_definition" | "class_definition" => Some(child),
            _ => None,
        };
        if let Some(name) = definition.and_then(|d| d.child_by_field_name("name")) {
            bindings.remove(text_of(name, text));
        }
        if child.kind() == "expression_statement"
            && let Some(assignment) = child.named_child(0).filter(|n| n.kind() == "assignment")
            && let Some(left) = assignment.child_by_field_name("left")
        {
            let mut names = Vec::new();
            bound_names(left, text, &mut names);
            for name in names {
                bindings.remove(&name);
            }
        }
    }

    let mut analyzer = Analyzer {
        source: text,
        bindings,
        tainted_scopes: Scopes::new(Vec::new()),
        reads,
        hits: Vec::new(),
    };
    seed_taint(
        &mut analyzer,
        &named_functions,
        &decorated,
        &assignments,
        &calls,
    );

    for call_node in &calls {
        let Some(callee) = call_node.child_by_field_name("function") else {
            continue;
        };
        let Some(Value::Function(function)) = analyzer.resolve(callee) else {
            continue;
        };
        let Some(arguments) = call_node.child_by_field_name("arguments") else {
            continue;
        };
        let mut call = Call {
            node: *call_node,
            positional: Vec::new(),
            keywords: HashMap::new(),
            has_splat: false,
        };
        for argument in named_children(arguments) {
            match argument.kind() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) = (
                        argument.child_by_field_name("name"),
                        argument.child_by_field_name("value"),
                    ) {
                        call.keywords.insert(text_of(name, text), value);
                    }
                }
                "dictionary_splat" => call.has_splat = true,
                _ => call.positional.push(argument),
            }
        }
        analyzer.evaluate(function, &call);
    }
    analysis.hits = analyzer.hits;
    Ok(analysis)
}

/// Rounds of taint propagation through assignments inside one function.
const TAINT_ROUNDS: usize = 8;

/// Taint the parameters of tool handlers, then follow assignments inside each function and
/// calls into module-level functions (one set of tainted names per function).
fn seed_taint<'t>(
    analyzer: &mut Analyzer<'_>,
    named_functions: &[Node<'t>],
    decorated: &[(Node<'t>, Node<'t>)],
    assignments: &[Node<'t>],
    calls: &[Node<'t>],
) {
    let text = analyzer.source;
    let mut by_name: HashMap<&str, Node<'t>> = HashMap::new();
    for function in named_functions {
        if let Some(name) = function.child_by_field_name("name") {
            by_name.insert(text_of(name, text), *function);
        }
    }
    let mut tainted: HashMap<usize, (Node<'t>, HashSet<String>)> = HashMap::new();
    let mut queue = Vec::new();
    for (function, parent) in decorated {
        let is_handler = named_children(*parent)
            .into_iter()
            .any(|child| child.kind() == "decorator" && is_tool_decorator(child, text));
        if is_handler {
            let names: HashSet<String> = parameter_names(*function, text)
                .into_iter()
                .flatten()
                .collect();
            tainted.insert(function.id(), (*function, names));
            queue.push(*function);
        }
    }
    let mut rounds = 0;
    while let Some(function) = queue.pop() {
        rounds += 1;
        if rounds > 256 {
            break;
        }
        let Some((_, mut names)) = tainted.get(&function.id()).cloned() else {
            continue;
        };
        // Bounded rounds: a chain of assignments written in reverse order would otherwise cost
        // one pass over the function per link.
        for _ in 0..TAINT_ROUNDS {
            let before = names.len();
            for assignment in inside(assignments, function)
                .iter()
                .filter(|a| contains(function, **a))
            {
                let (Some(left), Some(right)) = (
                    assignment.child_by_field_name("left"),
                    assignment.child_by_field_name("right"),
                ) else {
                    continue;
                };
                if analyzer.reads.any_within(&names, right) {
                    let mut bound = Vec::new();
                    bound_names(left, text, &mut bound);
                    names.extend(bound);
                }
            }
            if names.len() == before {
                break;
            }
        }
        for call in inside(calls, function)
            .iter()
            .filter(|c| contains(function, **c))
        {
            let Some(callee) = call
                .child_by_field_name("function")
                .filter(|f| f.kind() == "identifier")
            else {
                continue;
            };
            let Some(target) = by_name.get(text_of(callee, text)).copied() else {
                continue;
            };
            let Some(arguments) = call.child_by_field_name("arguments") else {
                continue;
            };
            let parameters = parameter_names(target, text);
            let mut new_names = HashSet::new();
            for (argument, parameter) in named_children(arguments).into_iter().zip(parameters) {
                if argument.kind() != "keyword_argument"
                    && analyzer.reads.any_within(&names, argument)
                {
                    new_names.extend(parameter);
                }
            }
            if new_names.is_empty() {
                continue;
            }
            let entry = tainted
                .entry(target.id())
                .or_insert_with(|| (target, HashSet::new()));
            let before = entry.1.len();
            entry.1.extend(new_names);
            if entry.1.len() != before {
                queue.push(target);
            }
        }
        if let Some(entry) = tainted.get_mut(&function.id()) {
            entry.1 = names;
        }
    }
    analyzer.tainted_scopes = Scopes::new(tainted.into_values().collect());
}
