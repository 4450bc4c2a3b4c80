//! Rust: tree-sitter-rust parses the file; `Command::new(..)` of `std::process` (or tokio,
//! async-process, smol) is the sink.
//!
//! - `Command::new(<non-literal>)` → `exec_file_dynamic`;
//! - `Command::new("sh" | "bash" | "cmd" | ...)` whose argv (the `.arg`/`.args` calls chained on
//!   it, or made later on the variable it was bound to) holds `-c`/`/C` followed by a
//!   non-literal → `shell_true_option` (the same id as `spawn('sh', ['-c', x])` in JS).
//!
//! A file that defines its own `struct Command`/`enum Command` makes a bare `Command::new`
//! not a sink. Functions marked `#[tool]` (rmcp) seed the taint.

use std::collections::HashSet;

use tree_sitter::Node;

use crate::error::SourceError;
use crate::finding::{Analysis, Hit};
use crate::javascript::is_command_flag;
use crate::rule::{Rule, is_shell_program};
use crate::source::SourceText;
use crate::syntax_tree::{Grammar, contains, named_children, parse, text_of, walk};

const QUALIFIED_COMMANDS: [&str; 5] = [
    "std::process::Command",
    "process::Command",
    "tokio::process::Command",
    "async_process::Command",
    "smol::process::Command",
];

/// One element of a command's argv as written in the source.
enum ArgvElement<'t> {
    Node(Node<'t>),
    /// `.args(some_vec)`: elements we cannot see.
    Opaque,
}

struct Analyzer<'t, 's> {
    source: &'s str,
    /// Tool functions and the names tainted inside them.
    tainted_scopes: Vec<(Node<'t>, HashSet<String>)>,
    hits: Vec<Hit>,
}

impl<'t, 's> Analyzer<'t, 's> {
    fn text(&self, node: Node<'_>) -> &'s str {
        text_of(node, self.source)
    }

    fn literal_text(&self, node: Node<'_>) -> Option<String> {
        match node.kind() {
            "string_literal" => Some(
                named_children(node)
                    .iter()
                    .map(|part| self.text(*part))
                    .collect(),
            ),
            "raw_string_literal" => {
                let raw = self.text(node);
                let inner = raw.trim_start_matches('r').trim_matches('#');
                Some(inner.trim_matches('"').to_string())
            }
            "reference_expression" => node
                .child_by_field_name("value")
                .and_then(|value| self.literal_text(value)),
            _ => None,
        }
    }

    fn mentions_taint(&self, call: Node<'_>, argument: Node<'_>) -> bool {
        self.tainted_scopes
            .iter()
            .filter(|(scope, _)| contains(*scope, call))
            .any(|(_, names)| mentions(argument, names, self.source))
    }

    /// The `.arg(..)`/`.args(..)` calls chained directly on `start`, in order; returns them and
    /// the last node of the chain.
    fn chained_argv(&self, start: Node<'t>, out: &mut Vec<ArgvElement<'t>>) -> Node<'t> {
        let mut node = start;
        loop {
            let Some(field) = node.parent().filter(|p| {
                p.kind() == "field_expression" && p.child_by_field_name("value") == Some(node)
            }) else {
                return node;
            };
            let Some(call) = field.parent().filter(|p| {
                p.kind() == "call_expression" && p.child_by_field_name("function") == Some(field)
            }) else {
                return node;
            };
            self.collect_argv_call(field, call, out);
            node = call;
        }
    }

    fn collect_argv_call(&self, field: Node<'t>, call: Node<'t>, out: &mut Vec<ArgvElement<'t>>) {
        let method = field.child_by_field_name("field").map(|f| self.text(f));
        let arguments = call
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        match method {
            Some("arg") => out.extend(arguments.first().copied().map(ArgvElement::Node)),
            Some("args") => match arguments.first() {
                Some(list) => self.flatten_list(*list, out),
                None => out.push(ArgvElement::Opaque),
            },
            _ => {}
        }
    }

    fn flatten_list(&self, list: Node<'t>, out: &mut Vec<ArgvElement<'t>>) {
        match list.kind() {
            "array_expression" => {
                out.extend(named_children(list).into_iter().map(ArgvElement::Node))
            }
            "reference_expression" => match list.child_by_field_name("value") {
                Some(value) => self.flatten_list(value, out),
                None => out.push(ArgvElement::Opaque),
            },
            "macro_invocation" => {
                let is_vec = list
                    .child_by_field_name("macro")
                    .is_some_and(|m| self.text(m) == "vec");
                let tokens = named_children(list)
                    .into_iter()
                    .find(|child| child.kind() == "token_tree");
                match tokens.filter(|_| is_vec) {
                    Some(tokens) => {
                        out.extend(named_children(tokens).into_iter().map(ArgvElement::Node))
                    }
                    None => out.push(ArgvElement::Opaque),
                }
            }
            _ => out.push(ArgvElement::Opaque),
        }
    }

    /// Calls on the variable a `let` bound the command to: `let mut c = Command::new("sh"); c.arg("-c").arg(x);`
    fn variable_argv(&self, top: Node<'t>, calls: &[Node<'t>], out: &mut Vec<ArgvElement<'t>>) {
        let Some(declaration) = top.parent().filter(|p| p.kind() == "let_declaration") else {
            return;
        };
        let Some(name) = declaration
            .child_by_field_name("pattern")
            .map(|p| self.text(p).trim_start_matches("mut ").trim())
        else {
            return;
        };
        let Some(block) = declaration.parent() else {
            return;
        };
        let mut found: Vec<(usize, Node<'t>, Node<'t>)> = Vec::new();
        for call in calls
            .iter()
            .filter(|c| contains(block, **c) && c.start_byte() > declaration.end_byte())
        {
            let Some(field) = call
                .child_by_field_name("function")
                .filter(|f| f.kind() == "field_expression")
            else {
                continue;
            };
            let mut root = field;
            while let Some(value) = root
                .child_by_field_name("value")
                .or_else(|| root.child_by_field_name("function"))
            {
                root = value;
            }
            if root.kind() == "identifier" && self.text(root) == name {
                let position = field
                    .child_by_field_name("field")
                    .map_or(call.start_byte(), |f| f.start_byte());
                found.push((position, field, *call));
            }
        }
        found.sort_by_key(|(position, _, _)| *position);
        for (_, field, call) in found {
            self.collect_argv_call(field, call, out);
        }
    }

    fn is_literal(&self, element: &ArgvElement<'_>) -> bool {
        matches!(element, ArgvElement::Node(node) if self.literal_text(*node).is_some())
    }
}

/// Whether `node` reads one of `names`, including inline format arguments (`format!("{cmd}")`).
fn mentions(node: Node<'_>, names: &HashSet<String>, source: &str) -> bool {
    let mut found = false;
    walk(node, |candidate| {
        if found {
            return;
        }
        match candidate.kind() {
            "identifier" => found = names.contains(text_of(candidate, source)),
            "string_content" => {
                let text = text_of(candidate, source);
                found = names.iter().any(|name| {
                    text.contains(&format!("{{{name}}}")) || text.contains(&format!("{{{name}:"))
                });
            }
            _ => {}
        }
    });
    found
}

/// Names bound by a pattern (`x`, `mut x`, `Parameters(Args { cmd, dir: d })`).
fn pattern_names(pattern: Node<'_>, source: &str, out: &mut HashSet<String>) {
    walk(pattern, |node| {
        let is_type = node
            .parent()
            .is_some_and(|parent| parent.child_by_field_name("type") == Some(node));
        match node.kind() {
            "identifier" | "shorthand_field_identifier" if !is_type => {
                let name = text_of(node, source);
                if name != "self" {
                    out.insert(name.to_string());
                }
            }
            _ => {}
        }
    });
}

/// `#[tool]`, `#[tool(description = "...")]`, `#[rmcp::tool(...)]` right above the function.
fn has_tool_attribute(function: Node<'_>, source: &str) -> bool {
    let mut sibling = function.prev_named_sibling();
    while let Some(node) = sibling {
        match node.kind() {
            "attribute_item" => {
                let attribute = named_children(node)
                    .into_iter()
                    .find(|c| c.kind() == "attribute");
                let path = attribute
                    .and_then(|a| a.named_child(0))
                    .map(|p| text_of(p, source));
                if path.is_some_and(|p| p == "tool" || p.ends_with("::tool")) {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return false,
        }
        sibling = node.prev_named_sibling();
    }
    false
}

/// Analyse one Rust file. `Err` carries a parse error message.
pub(crate) fn analyze(source: &SourceText<'_>) -> Result<Analysis, SourceError> {
    let text = source.text();
    let tree = parse(Grammar::Rust, text)?;
    let root = tree.root_node();
    let mut analysis = Analysis::default();
    let mut calls = Vec::new();
    let mut lets = Vec::new();
    let mut functions = Vec::new();
    let mut local_command_type = false;
    walk(root, |node| match node.kind() {
        "line_comment" | "block_comment" => {
            let body = text_of(node, text);
            let body = body
                .strip_prefix("//")
                .or_else(|| body.strip_prefix("/*"))
                .unwrap_or(body);
            analysis
                .pragmas
                .record_comment(body.trim_end_matches("*/"), node.end_position().row + 1);
        }
        "call_expression" => calls.push(node),
        "let_declaration" => lets.push(node),
        "function_item" => functions.push(node),
        "struct_item" | "enum_item"
            if node
                .child_by_field_name("name")
                .is_some_and(|name| text_of(name, text) == "Command") =>
        {
            local_command_type = true;
        }
        _ => {}
    });
    if analysis.pragmas.ignore_file {
        return Ok(analysis);
    }

    let mut analyzer = Analyzer {
        source: text,
        tainted_scopes: Vec::new(),
        hits: Vec::new(),
    };
    for function in functions.iter().filter(|f| has_tool_attribute(**f, text)) {
        let mut names = HashSet::new();
        if let Some(parameters) = function.child_by_field_name("parameters") {
            for parameter in named_children(parameters)
                .into_iter()
                .filter(|p| p.kind() == "parameter")
            {
                if let Some(pattern) = parameter.child_by_field_name("pattern") {
                    pattern_names(pattern, text, &mut names);
                }
            }
        }
        loop {
            let before = names.len();
            for declaration in lets.iter().filter(|l| contains(*function, **l)) {
                if let (Some(pattern), Some(value)) = (
                    declaration.child_by_field_name("pattern"),
                    declaration.child_by_field_name("value"),
                ) && mentions(value, &names, text)
                {
                    pattern_names(pattern, text, &mut names);
                }
            }
            if names.len() == before {
                break;
            }
        }
        analyzer.tainted_scopes.push((*function, names));
    }

    for call in &calls {
        let Some(function) = call
            .child_by_field_name("function")
            .filter(|f| f.kind() == "scoped_identifier")
        else {
            continue;
        };
        if function
            .child_by_field_name("name")
            .map(|n| text_of(n, text))
            != Some("new")
        {
            continue;
        }
        let path: String = function
            .child_by_field_name("path")
            .map(|p| {
                text_of(p, text)
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect()
            })
            .unwrap_or_default();
        let path = path.trim_start_matches("::");
        let is_command =
            QUALIFIED_COMMANDS.contains(&path) || (path == "Command" && !local_command_type);
        if !is_command {
            continue;
        }
        let arguments = call
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let Some(program) = arguments.first().copied() else {
            continue;
        };
        let offset = call.start_byte();
        let Some(program_text) = analyzer.literal_text(program) else {
            let tainted = analyzer.mentions_taint(*call, program);
            analyzer.hits.push(Hit {
                rule: Rule::ExecFileDynamic,
                offset,
                tainted,
            });
            continue;
        };
        if !is_shell_program(&program_text) {
            continue;
        }
        let mut argv = Vec::new();
        let top = analyzer.chained_argv(*call, &mut argv);
        analyzer.variable_argv(top, &calls, &mut argv);
        let mut elements = argv.iter();
        while let Some(element) = elements.next() {
            let is_flag = match element {
                ArgvElement::Node(node) => analyzer
                    .literal_text(*node)
                    .is_some_and(|flag| is_command_flag(&flag)),
                ArgvElement::Opaque => false,
            };
            if !is_flag {
                continue;
            }
            if let Some(script) = elements
                .next()
                .filter(|script| !analyzer.is_literal(script))
            {
                let tainted = match script {
                    ArgvElement::Node(node) => analyzer.mentions_taint(*call, *node),
                    ArgvElement::Opaque => false,
                };
                analyzer.hits.push(Hit {
                    rule: Rule::ShellTrueOption,
                    offset,
                    tainted,
                });
            }
            break;
        }
    }
    analysis.hits = analyzer.hits;
    Ok(analysis)
}
