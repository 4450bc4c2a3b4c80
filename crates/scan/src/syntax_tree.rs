//! tree-sitter plumbing shared by the Python and Rust analysers: one parser per thread per
//! language, a pre-order walk, and the first syntax error.

use std::cell::RefCell;

use tree_sitter::{Language, Node, Parser, Tree};

use crate::error::SourceError;

thread_local! {
    static PYTHON: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static RUST: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// A tree-sitter grammar we parse with.
#[derive(Clone, Copy)]
pub(crate) enum Grammar {
    /// tree-sitter-python.
    Python,
    /// tree-sitter-rust.
    Rust,
}

impl Grammar {
    fn language(self) -> Language {
        match self {
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }
}

/// Parse `text`. A tree with syntax errors is an `Err` naming the first error's line.
pub(crate) fn parse(grammar: Grammar, text: &str) -> Result<Tree, SourceError> {
    let slot = match grammar {
        Grammar::Python => &PYTHON,
        Grammar::Rust => &RUST,
    };
    let tree = slot.with(|cell| {
        let mut parser = cell.borrow_mut();
        if parser.is_none() {
            let mut fresh = Parser::new();
            fresh
                .set_language(&grammar.language())
                .map_err(|error| SourceError::Grammar(error.to_string()))?;
            *parser = Some(fresh);
        }
        (parser.as_mut())
            .and_then(|parser| parser.parse(text, None))
            .ok_or(SourceError::GaveUp)
    })?;
    let root = tree.root_node();
    if root.has_error() {
        let mut line = None;
        walk(root, |node| {
            if line.is_none() && (node.is_error() || node.is_missing()) {
                line = Some(node.start_position().row + 1);
            }
        });
        return Err(SourceError::Syntax {
            line: line.unwrap_or(1),
        });
    }
    Ok(tree)
}

/// Visit every node below (and including) `root` in source order.
pub(crate) fn walk<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>)) {
    let mut cursor = root.walk();
    loop {
        visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// The source text of a node (empty if the range is somehow not on a char boundary).
pub(crate) fn text_of<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or("")
}

/// Named children, skipping comments.
pub(crate) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|child| !child.kind().contains("comment"))
        .collect()
}

/// Whether `node` lies inside `outer` (inclusive).
pub(crate) fn contains(outer: Node<'_>, node: Node<'_>) -> bool {
    outer.start_byte() <= node.start_byte() && node.end_byte() <= outer.end_byte()
}
