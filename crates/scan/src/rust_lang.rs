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

use hashbrown::{HashMap, HashSet};

use tree_sitter::Node;

use crate::error::SourceError;
use crate::finding::{Analysis, Hit};
use crate::javascript::is_command_flag;
use crate::rule::{Rule, is_shell_program};
use crate::source::SourceText;
use crate::syntax_tree::{
    Grammar, Reads, Scopes, contains, inside, named_children, parse, text_of, walk,
    walk_with_parent,
};

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
    tainted_scopes: Scopes<HashSet<String>>,
    /// Where each name is read.
    reads: Reads<'s>,
    /// The parent of every call, field expression and `let` (tree-sitter's `parent()` is not
    /// constant time).
    parents: HashMap<usize, Node<'t>>,
    /// Method calls on a plain variable (`c.arg(..)`), by the variable's name: `(position of
    /// the method name, the field expression, the call)`, in source order of the calls.
    calls_on: HashMap<&'s str, Vec<(usize, Node<'t>, Node<'t>)>>,
    /// Start offsets of the `let`s of each block, by block and bound name, in source order.
    lets_in_block: HashMap<(usize, &'s str), Vec<usize>>,
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
            .containing(call)
            .any(|names| self.reads.any_within(names, argument))
    }

    fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        self.parents.get(&node.id()).copied()
    }

    /// The `.arg(..)`/`.args(..)` calls chained directly on `start`, in order; returns them and
    /// the last node of the chain.
    fn chained_argv(&self, start: Node<'t>, out: &mut Vec<ArgvElement<'t>>) -> Node<'t> {
        let mut node = start;
        loop {
            let Some(field) = self.parent(node).filter(|p| {
                p.kind() == "field_expression" && p.child_by_field_name("value") == Some(node)
            }) else {
                return node;
            };
            let Some(call) = self.parent(field).filter(|p| {
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

    /// Calls on the variable a `let` bound the command to: `let mut c = Command::new("sh"); c.arg("-c").arg(x);`,
    /// up to the end of the block or the next `let` of the same name, whichever comes first.
    fn variable_argv(&self, top: Node<'t>, out: &mut Vec<ArgvElement<'t>>) {
        let Some(declaration) = self.parent(top).filter(|p| p.kind() == "let_declaration") else {
            return;
        };
        let Some(name) = declaration
            .child_by_field_name("pattern")
            .map(|p| self.text(p).trim_start_matches("mut ").trim())
        else {
            return;
        };
        let Some(block) = self.parent(declaration) else {
            return;
        };
        let Some(calls) = self.calls_on.get(name) else {
            return;
        };
        let shadowed_at = self
            .lets_in_block
            .get(&(block.id(), name))
            .and_then(|starts| {
                let next = starts.partition_point(|start| *start <= declaration.start_byte());
                starts.get(next).copied()
            })
            .unwrap_or(block.end_byte());
        let first =
            calls.partition_point(|(_, _, call)| call.start_byte() <= declaration.end_byte());
        let mut found: Vec<(usize, Node<'t>, Node<'t>)> = calls
            .get(first..)
            .unwrap_or(&[])
            .iter()
            .take_while(|(_, _, call)| call.start_byte() < shadowed_at)
            .filter(|(_, _, call)| contains(block, *call))
            .copied()
            .collect();
        found.sort_by_key(|(position, _, _)| *position);
        for (_, field, call) in found {
            self.collect_argv_call(field, call, out);
        }
    }

    fn is_literal(&self, element: &ArgvElement<'_>) -> bool {
        matches!(element, ArgvElement::Node(node) if self.literal_text(*node).is_some())
    }
}

/// Record what `node` reads, if anything: an identifier, or the inline format arguments of a
/// string (`format!("{cmd}")`, `"{cmd:?}"`).
fn record_reads<'s>(node: Node<'_>, source: &'s str, reads: &mut Reads<'s>) {
    match node.kind() {
        "identifier" => reads.add(text_of(node, source), node.start_byte()),
        "string_content" => {
            let text = text_of(node, source);
            let mut rest = text;
            while let Some(open) = rest.find('{') {
                let after = rest.get(open + 1..).unwrap_or("");
                let name_length = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                let name = after.get(..name_length).unwrap_or("");
                let closes = after
                    .get(name_length..)
                    .is_some_and(|tail| tail.starts_with('}') || tail.starts_with(':'));
                if !name.is_empty() && closes {
                    reads.add(name, node.start_byte());
                }
                rest = after;
            }
        }
        _ => {}
    }
}

/// Names bound by a pattern (`x`, `mut x`, `Parameters(Args { cmd, dir: d })`), not the
/// names of its types.
fn pattern_names(pattern: Node<'_>, source: &str, out: &mut HashSet<String>) {
    let mut types = HashSet::new();
    walk(pattern, |node| {
        if let Some(type_node) = node.child_by_field_name("type") {
            types.insert(type_node.id());
        }
        match node.kind() {
            "identifier" | "shorthand_field_identifier" if !types.contains(&node.id()) => {
                let name = text_of(node, source);
                if name != "self" {
                    out.insert(name.to_string());
                }
            }
            _ => {}
        }
    });
}

/// Whether an `attribute_item` is `#[tool]`, `#[tool(description = "...")]`, `#[rmcp::tool(...)]`.
fn is_tool_attribute(item: Node<'_>, source: &str) -> bool {
    let attribute = named_children(item)
        .into_iter()
        .find(|c| c.kind() == "attribute");
    let path = attribute
        .and_then(|a| a.named_child(0))
        .map(|p| text_of(p, source));
    path.is_some_and(|p| p == "tool" || p.ends_with("::tool"))
}

/// The functions with a tool attribute right above them (other attributes and comments may
/// come between), found in one pass over each item list: looking back from every function
/// through `prev_named_sibling` was quadratic in the number of items.
fn tool_functions(lists: &[Node<'_>], source: &str) -> HashSet<usize> {
    let mut tools = HashSet::new();
    for list in lists {
        let mut cursor = list.walk();
        let mut attributed = false;
        for child in list.named_children(&mut cursor) {
            match child.kind() {
                "attribute_item" => attributed |= is_tool_attribute(child, source),
                "line_comment" | "block_comment" => {}
                "function_item" => {
                    if attributed {
                        tools.insert(child.id());
                    }
                    attributed = false;
                }
                _ => attributed = false,
            }
        }
    }
    tools
}

/// Rounds of taint propagation through `let`s inside one tool function.
const TAINT_ROUNDS: usize = 8;

/// Method calls whose receiver chain starts at a plain variable (`c.arg(x).arg(y)`: both calls
/// are on `c`), by that name. Each chain is followed once (a memo per node), not once per call
/// in it.
fn calls_on_variables<'t, 's>(
    calls: &[Node<'t>],
    source: &'s str,
) -> HashMap<&'s str, Vec<(usize, Node<'t>, Node<'t>)>> {
    let mut roots: HashMap<usize, Option<Node<'t>>> = HashMap::new();
    let mut by_name: HashMap<&'s str, Vec<(usize, Node<'t>, Node<'t>)>> = HashMap::new();
    for call in calls {
        let Some(field) = call
            .child_by_field_name("function")
            .filter(|f| f.kind() == "field_expression")
        else {
            continue;
        };
        let mut path = Vec::new();
        let mut node = field;
        let root = loop {
            if let Some(known) = roots.get(&node.id()) {
                break *known;
            }
            path.push(node.id());
            match node
                .child_by_field_name("value")
                .or_else(|| node.child_by_field_name("function"))
            {
                Some(inner) => node = inner,
                None => break Some(node),
            }
        };
        for id in path {
            roots.insert(id, root);
        }
        if let Some(root) = root.filter(|r| r.kind() == "identifier") {
            let position = field
                .child_by_field_name("field")
                .map_or(call.start_byte(), |f| f.start_byte());
            by_name
                .entry(text_of(root, source))
                .or_default()
                .push((position, field, *call));
        }
    }
    for list in by_name.values_mut() {
        list.sort_by_key(|(_, _, call)| call.start_byte());
    }
    by_name
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
    let mut item_lists = Vec::new();
    let mut parents: HashMap<usize, Node<'_>> = HashMap::new();
    let mut reads = Reads::default();
    walk_with_parent(root, |node, parent, _| {
        let kind = node.kind();
        if matches!(
            kind,
            "call_expression" | "field_expression" | "let_declaration"
        ) && let Some(parent) = parent
        {
            parents.insert(node.id(), parent);
        }
        record_reads(node, text, &mut reads);
        match kind {
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
            "source_file" | "declaration_list" | "block" => item_lists.push(node),
            "struct_item" | "enum_item"
                if node
                    .child_by_field_name("name")
                    .is_some_and(|name| text_of(name, text) == "Command") =>
            {
                local_command_type = true;
            }
            _ => {}
        }
    })?;
    // An ignore-file pragma is applied by the caller, after the analysis: `--strict` scans
    // the file anyway.

    let tools = tool_functions(&item_lists, text);
    let mut scopes = Vec::new();
    for function in functions.iter().filter(|f| tools.contains(&f.id())) {
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
        // Bounded rounds: a chain of lets written in reverse order would otherwise cost one
        // pass over the function per link.
        for _ in 0..TAINT_ROUNDS {
            let before = names.len();
            for declaration in inside(&lets, *function)
                .iter()
                .filter(|l| contains(*function, **l))
            {
                if let (Some(pattern), Some(value)) = (
                    declaration.child_by_field_name("pattern"),
                    declaration.child_by_field_name("value"),
                ) && reads.any_within(&names, value)
                {
                    pattern_names(pattern, text, &mut names);
                }
            }
            if names.len() == before {
                break;
            }
        }
        scopes.push((*function, names));
    }

    let mut lets_in_block: HashMap<(usize, &str), Vec<usize>> = HashMap::new();
    for declaration in &lets {
        if let (Some(block), Some(pattern)) = (
            parents.get(&declaration.id()),
            declaration.child_by_field_name("pattern"),
        ) {
            let name = text_of(pattern, text).trim_start_matches("mut ").trim();
            lets_in_block
                .entry((block.id(), name))
                .or_default()
                .push(declaration.start_byte());
        }
    }
    let mut analyzer = Analyzer {
        source: text,
        tainted_scopes: Scopes::new(scopes),
        reads,
        lets_in_block,
        calls_on: calls_on_variables(&calls, text),
        parents,
        hits: Vec::new(),
    };

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
            analyzer
                .hits
                .push(Hit::new(Rule::ExecFileDynamic, offset, tainted));
            continue;
        };
        if !is_shell_program(&program_text) {
            continue;
        }
        let mut argv = Vec::new();
        let top = analyzer.chained_argv(*call, &mut argv);
        analyzer.variable_argv(top, &mut argv);
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
                analyzer
                    .hits
                    .push(Hit::new(Rule::ShellTrueOption, offset, tainted));
            }
            break;
        }
    }
    analysis.hits = analyzer.hits;
    Ok(analysis)
}
