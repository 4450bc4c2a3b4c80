//! The Python syntax tree the analysis reads: a flat array of nodes in source order, each
//! with the kind and field names of tree-sitter-python's grammar, its byte range, its parent
//! and the end of its subtree.
//!
//! The analysis asks a tree for a node's parent, its field children and its descendants
//! millions of times on a large project. Over tree-sitter's own tree each of those is a call
//! into C that walks sibling lists (`Node::parent` searches down from the root); here each is
//! an index. A node's subtree is the contiguous run of slots after it, so a walk is a loop over
//! a range and a node's children are found by skipping whole subtrees.
//!
//! Two builders make it: `python_ruff::tree_from_ruff` from ruff's parser (the one the
//! analysis uses), and `PyTree::from_tree_sitter` (tests only), which copies a
//! tree-sitter-python tree node for node: the reference the first is tested against. Both
//! bound the tree's depth ([`MAX_TREE_DEPTH`], in [`Builder::open`]): every
//! recursive helper of the analysis may rely on it.

use std::fmt;

#[cfg(test)]
use tree_sitter::Tree;

use crate::error::SourceError;
use crate::nesting::MAX_TREE_DEPTH;
use crate::syntax_tree::Span;
#[cfg(test)]
use crate::syntax_tree::{python_field_name, python_kind_name};

/// No parent (the root's).
/// No node (the root's parent, a node still open).
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Slot {
    kind: &'static str,
    /// The field of the parent this node stands in (`function` of a `call`, ...).
    field: Option<&'static str>,
    // Offsets and indices as `u32` (a slot is 56 bytes, not 72): a file is at most 64 MiB
    // (`HARD_MAX_FILE_SIZE`) and has fewer nodes than that.
    start: u32,
    end: u32,
    parent: u32,
    /// One past the index of the node's last descendant.
    subtree_end: u32,
    named: bool,
    /// A comment, or the `\` of a line continuation: kept where it stands, skipped by
    /// [`named_children`] and [`PyNode::first_named`].
    extra: bool,
}

/// `value` as a slot's `u32` (saturating: no file the scanner parses comes near).
fn narrow(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(NONE - 1)
}

/// A Python file's syntax tree (see the module documentation).
pub(crate) struct PyTree {
    slots: Vec<Slot>,
    /// The byte offset where each line starts.
    lines: Vec<usize>,
    /// The number of nodes on the longest path from the root.
    depth: usize,
}

/// The 0-based line of byte `offset`, given the offsets where lines start.
fn row_of(lines: &[usize], offset: usize) -> usize {
    lines.partition_point(|start| *start <= offset).max(1) - 1
}

impl PyTree {
    /// Copy a tree-sitter-python tree of `text`. `Err` with [`SourceError::TooDeep`] at the
    /// first node deeper than [`MAX_TREE_DEPTH`].
    #[cfg(test)]
    pub(crate) fn from_tree_sitter(tree: &Tree, text: &str) -> Result<PyTree, SourceError> {
        let mut builder = Builder::new(crate::source::line_starts(text), text.len() / 4);
        let mut cursor = tree.walk();
        loop {
            let node = cursor.node();
            builder.open(
                python_kind_name(node),
                python_field_name(cursor.field_id()),
                node.start_byte(),
                node.is_named(),
                node.is_extra(),
            )?;
            if cursor.goto_first_child() {
                continue;
            }
            builder.close(node.end_byte());
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return Ok(builder.finish());
                }
                builder.close(cursor.node().end_byte());
            }
        }
    }

    /// The number of nodes on the longest path from the root.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The root node (the `module`).
    pub(crate) fn root(&self) -> PyNode<'_> {
        PyNode {
            tree: self,
            index: 0,
        }
    }

    fn node(&self, index: usize) -> PyNode<'_> {
        PyNode { tree: self, index }
    }
}

/// Builds a [`PyTree`] in source order: `open` a node, its children, then `close` it.
pub(crate) struct Builder {
    slots: Vec<Slot>,
    lines: Vec<usize>,
    open: Vec<usize>,
    /// The most nodes open at once so far.
    depth: usize,
}

impl Builder {
    /// A builder for a tree of about `nodes` nodes (room for that many is reserved up
    /// front: growing a large vector copies it, and the old and new copies together raised
    /// the peak memory of a dense file by half).
    /// `lines` holds the offset of each line's first byte ([`crate::source::line_starts`]).
    pub(crate) fn new(lines: Vec<usize>, nodes: usize) -> Builder {
        Builder {
            slots: Vec::with_capacity(nodes),
            lines,
            open: Vec::new(),
            depth: 0,
        }
    }

    /// Open a node at `start` under the innermost open one. `Err` when it would stand deeper
    /// than [`MAX_TREE_DEPTH`].
    pub(crate) fn open(
        &mut self,
        kind: &'static str,
        field: Option<&'static str>,
        start: usize,
        named: bool,
        extra: bool,
    ) -> Result<(), SourceError> {
        if self.open.len() > MAX_TREE_DEPTH {
            return Err(SourceError::TooDeep {
                line: row_of(&self.lines, start) + 1,
                limit: MAX_TREE_DEPTH,
            });
        }
        let parent = self.open.last().map_or(NONE, |index| narrow(*index));
        self.open.push(self.slots.len());
        self.depth = self.depth.max(self.open.len());
        self.slots.push(Slot {
            kind,
            field,
            start: narrow(start),
            end: narrow(start),
            parent,
            subtree_end: NONE,
            named,
            extra,
        });
        Ok(())
    }

    /// Close the innermost open node at `end`.
    pub(crate) fn close(&mut self, end: usize) {
        let after = narrow(self.slots.len());
        if let Some(slot) = self.open.pop().and_then(|index| self.slots.get_mut(index)) {
            slot.end = narrow(end);
            slot.subtree_end = after;
        }
    }

    /// The tree (every node still open is closed where its last descendant ends).
    pub(crate) fn finish(mut self) -> PyTree {
        while let Some(&index) = self.open.last() {
            let end = self
                .slots
                .get(index..)
                .and_then(|run| run.iter().map(|slot| slot.end as usize).max())
                .unwrap_or(0);
            self.close(end);
        }
        PyTree {
            slots: self.slots,
            lines: self.lines,
            depth: self.depth,
        }
    }
}

/// A node of a [`PyTree`].
#[derive(Clone, Copy)]
pub(crate) struct PyNode<'t> {
    tree: &'t PyTree,
    index: usize,
}

impl PartialEq for PyNode<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && std::ptr::eq(self.tree, other.tree)
    }
}

impl Eq for PyNode<'_> {}

impl fmt::Debug for PyNode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}..{}]",
            self.kind_name(),
            self.start_byte(),
            self.end_byte()
        )
    }
}

impl Span for PyNode<'_> {
    fn start_byte(&self) -> usize {
        self.slot().start as usize
    }

    fn end_byte(&self) -> usize {
        self.slot().end as usize
    }
}

impl<'t> PyNode<'t> {
    fn slot(&self) -> &'t Slot {
        // Every PyNode is made from an index of its tree.
        static EMPTY: Slot = Slot {
            kind: "",
            field: None,
            start: 0,
            end: 0,
            parent: NONE,
            subtree_end: 0,
            named: false,
            extra: false,
        };
        self.tree.slots.get(self.index).unwrap_or(&EMPTY)
    }

    /// The node's kind, as tree-sitter-python names it.
    pub(crate) fn kind_name(&self) -> &'static str {
        self.slot().kind
    }

    /// The field of its parent the node stands in.
    pub(crate) fn field_name(&self) -> Option<&'static str> {
        self.slot().field
    }

    /// A number that tells this node from every other node of its tree.
    pub(crate) fn id(&self) -> usize {
        self.index
    }

    /// Whether the node is named in the grammar (not punctuation or a keyword).
    pub(crate) fn is_named(&self) -> bool {
        self.slot().named
    }

    /// Whether the node is a comment or a line continuation.
    pub(crate) fn is_extra(&self) -> bool {
        self.slot().extra
    }

    /// The 0-based line the node ends on.
    pub(crate) fn end_row(&self) -> usize {
        row_of(&self.tree.lines, self.end_byte())
    }

    pub(crate) fn parent(&self) -> Option<PyNode<'t>> {
        let parent = self.slot().parent;
        (parent != NONE).then(|| self.tree.node(parent as usize))
    }

    /// Every child, in source order.
    pub(crate) fn children(&self) -> impl Iterator<Item = PyNode<'t>> + use<'t> {
        let tree = self.tree;
        let end = self.slot().subtree_end as usize;
        let mut next = self.index + 1;
        std::iter::from_fn(move || {
            if next >= end {
                return None;
            }
            let child = tree.node(next);
            next = (child.slot().subtree_end as usize).max(next + 1);
            Some(child)
        })
    }

    /// The children in field `name`.
    pub(crate) fn children_by_field_name<'n>(
        &self,
        name: &'n str,
    ) -> impl Iterator<Item = PyNode<'t>> + use<'t, 'n> {
        self.children()
            .filter(move |child| child.field_name() == Some(name))
    }

    /// The (first) child in field `name`.
    pub(crate) fn field(&self, name: &str) -> Option<PyNode<'t>> {
        self.children_by_field_name(name).next()
    }

    /// The first named child that is not an extra (a comment, or the `\` of a line
    /// continuation, which tree-sitter keeps as a child wherever it stands: `f(\<newline> x)`
    /// would otherwise make the continuation the first argument).
    pub(crate) fn first_named(&self) -> Option<PyNode<'t>> {
        self.children()
            .find(|child| child.is_named() && !child.is_extra())
    }

    /// The smallest node at or below this one whose range holds `start..end`, as
    /// tree-sitter's `Node::descendant_for_byte_range` finds it.
    pub(crate) fn descendant_for_byte_range(&self, start: usize, end: usize) -> Option<PyNode<'t>> {
        let mut node = *self;
        'down: loop {
            for child in node.children() {
                let child_end = child.end_byte();
                if child_end < end {
                    continue;
                }
                let empty = child.start_byte() == child_end;
                if if empty {
                    child_end < start
                } else {
                    child_end <= start
                } {
                    continue;
                }
                if start < child.start_byte() {
                    break;
                }
                node = child;
                continue 'down;
            }
            return Some(node);
        }
    }
}

/// Named children, skipping extras: comments, and the `\` of a Python line continuation.
pub(crate) fn named_children<'t>(node: PyNode<'t>) -> Vec<PyNode<'t>> {
    node.children()
        .filter(|child| child.is_named() && !child.is_extra())
        .collect()
}

/// Visit every node below (and including) `root` in source order.
pub(crate) fn walk<'t>(root: PyNode<'t>, mut visit: impl FnMut(PyNode<'t>)) {
    for index in root.index..root.slot().subtree_end as usize {
        visit(root.tree.node(index));
    }
}

/// Visit every node below (and including) `root` in source order, with its parent (`None` for
/// the tree's root).
pub(crate) fn walk_with_parent<'t>(
    root: PyNode<'t>,
    mut visit: impl FnMut(PyNode<'t>, Option<PyNode<'t>>),
) {
    walk(root, |node| visit(node, node.parent()));
}
