//! tree-sitter plumbing shared by the Python and Rust analysers: one parser per thread per
//! language, a pre-order walk, and the first syntax error. The JavaScript and TypeScript
//! grammars only measure how deep a large JS/TS file nests ([`depth_check`]), before oxc
//! (which recurses) parses it.

use hashbrown::HashSet;
use std::cell::RefCell;
#[cfg(test)]
use std::sync::LazyLock;

use tree_sitter::{Language, Node, Parser, Tree, TreeCursor};

use crate::error::SourceError;
use crate::nesting::MAX_TREE_DEPTH;

thread_local! {
    #[cfg(test)]
    static PYTHON: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static RUST: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static JAVASCRIPT: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static TYPESCRIPT: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static TSX: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// A tree-sitter grammar we parse with.
#[derive(Clone, Copy)]
pub(crate) enum Grammar {
    /// tree-sitter-python: the reference the ruff-built tree is tested against
    /// (`python_ruff`'s tests); the analysis parses Python with ruff.
    #[cfg(test)]
    Python,
    /// tree-sitter-rust.
    Rust,
    /// tree-sitter-javascript (JSX included): only for [`depth_check`].
    JavaScript,
    /// tree-sitter-typescript's TypeScript grammar: only for [`depth_check`].
    TypeScript,
    /// tree-sitter-typescript's TSX grammar: only for [`depth_check`].
    Tsx,
}

impl Grammar {
    fn language(self) -> Language {
        match self {
            #[cfg(test)]
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        }
    }

    fn parser(self) -> &'static std::thread::LocalKey<RefCell<Option<Parser>>> {
        match self {
            #[cfg(test)]
            Grammar::Python => &PYTHON,
            Grammar::Rust => &RUST,
            Grammar::JavaScript => &JAVASCRIPT,
            Grammar::TypeScript => &TYPESCRIPT,
            Grammar::Tsx => &TSX,
        }
    }
}

#[cfg(test)]
/// The kind and field names of the Python grammar, read once (`Node::kind` measures and
/// checks a C string on every call).
struct GrammarNames {
    /// Indexed by `Node::kind_id`.
    kinds: Vec<Box<str>>,
    /// Indexed by field id (0 is no field).
    fields: Vec<Box<str>>,
}

#[cfg(test)]
impl GrammarNames {
    fn of(language: &Language) -> GrammarNames {
        GrammarNames {
            kinds: (0..u16::try_from(language.node_kind_count()).unwrap_or(u16::MAX))
                .map(|id| language.node_kind_for_id(id).unwrap_or("").into())
                .collect(),
            fields: (0..=u16::try_from(language.field_count()).unwrap_or(u16::MAX))
                .map(|id| language.field_name_for_id(id).unwrap_or("").into())
                .collect(),
        }
    }
}

#[cfg(test)]
static PYTHON_NAMES: LazyLock<GrammarNames> =
    LazyLock::new(|| GrammarNames::of(&Grammar::Python.language()));

/// The kind of a node of a Python tree, as `Node::kind` names it. Only for Python nodes: the
/// ids of another grammar mean other names.
#[cfg(test)]
pub(crate) fn python_kind_name(node: Node<'_>) -> &'static str {
    PYTHON_NAMES
        .kinds
        .get(usize::from(node.kind_id()))
        .map_or("", |kind| kind)
}

/// The name of the Python grammar's field `id`, as `TreeCursor::field_id` gives it.
#[cfg(test)]
pub(crate) fn python_field_name(id: Option<std::num::NonZeroU16>) -> Option<&'static str> {
    let index = usize::from(id?.get());
    PYTHON_NAMES.fields.get(index).map(|name| &**name)
}

/// A node's byte range, for the helpers below that serve tree-sitter's nodes (Rust) and
/// [`crate::python_tree::PyNode`] (Python) alike.
pub(crate) trait Span {
    fn start_byte(&self) -> usize;
    fn end_byte(&self) -> usize;
}

impl Span for Node<'_> {
    fn start_byte(&self) -> usize {
        Node::start_byte(self)
    }

    fn end_byte(&self) -> usize {
        Node::end_byte(self)
    }
}

/// Parse `text`. A tree with syntax errors is an `Err` naming the first error's line.
///
/// The depth of an error-free tree is not measured here: [`walk_with_parent`] measures it
/// while it visits, and it is the first thing each analyser runs over the tree. Nothing that
/// recurses may look at the tree before that walk has returned `Ok`.
pub(crate) fn parse(grammar: Grammar, text: &str) -> Result<Tree, SourceError> {
    let tree = parse_any(grammar, text)?;
    let root = tree.root_node();
    if root.has_error() {
        // Too deep is the answer for a tree that is also broken, as it is for one that is not.
        if let Err(node) = depth_within(root, MAX_TREE_DEPTH) {
            return Err(too_deep(node));
        }
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

/// `Err(TooDeep)` when the tree-sitter tree of `text` is deeper than `limit` nodes, broken or
/// not; otherwise whether the tree is broken. tree-sitter parses without recursion and its
/// concrete tree has at least one node per level that oxc and the visitors after it recurse
/// through, so an unbroken tree bounds their recursion whatever the text does to fool a lexer
/// (a lone CR ending a comment, a `/` that is a division to one reader and a regular
/// expression to another, JSX text). A broken tree may be flatter than oxc's reading (tree-sitter
/// recovers from 600 000 unclosed JSX elements with a tree 2 deep): the caller measures such a
/// file another way as well.
pub(crate) fn depth_check(grammar: Grammar, text: &str, limit: usize) -> Result<bool, SourceError> {
    let tree = parse_any(grammar, text)?;
    let root = tree.root_node();
    depth_within(root, limit).map_err(|node| SourceError::TooDeep {
        line: node.start_position().row + 1,
        limit,
    })?;
    Ok(root.has_error())
}

/// The tree-sitter tree of `text`, errors and all, with this thread's parser for `grammar`.
fn parse_any(grammar: Grammar, text: &str) -> Result<Tree, SourceError> {
    grammar.parser().with(|cell| {
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
    })
}

fn too_deep(node: Node<'_>) -> SourceError {
    SourceError::TooDeep {
        line: node.start_position().row + 1,
        limit: MAX_TREE_DEPTH,
    }
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

/// Visit every node below (and including) `root` in source order, with its parent (`None` for
/// `root`) and the cursor standing on it (for its field name). tree-sitter's own
/// `Node::parent` searches down from the tree's root through every sibling on the way, so
/// calling it per node was quadratic on wide or deep files; the walk keeps the ancestors on a
/// stack instead.
///
/// It also bounds the tree's depth (see [`parse`]): a node deeper than
/// [`MAX_TREE_DEPTH`] ends the walk with [`SourceError::TooDeep`] before it is visited. The
/// visitor must not recurse into a node's descendants, which the walk has not measured yet.
pub(crate) fn walk_with_parent<'t>(
    root: Node<'t>,
    mut visit: impl FnMut(Node<'t>, Option<Node<'t>>, &TreeCursor<'t>),
) -> Result<(), SourceError> {
    let mut cursor = root.walk();
    let mut ancestors: Vec<Node<'t>> = Vec::new();
    loop {
        let node = cursor.node();
        if ancestors.len() > MAX_TREE_DEPTH {
            return Err(too_deep(node));
        }
        visit(node, ancestors.last().copied(), &cursor);
        if cursor.goto_first_child() {
            ancestors.push(node);
            continue;
        }
        loop {
            if ancestors.is_empty() {
                return Ok(());
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(());
            }
            ancestors.pop();
        }
    }
}

/// Function scopes (byte ranges of nodes, which nest or are disjoint) with a value each; finds
/// the scopes that contain a node by walking up from the last scope that starts before it,
/// instead of testing every scope for every node.
pub(crate) struct Scopes<T> {
    /// `(start, end, parent index, value)`, sorted by start: the index is a preorder, and a
    /// scope's descendants follow it.
    scopes: Vec<(usize, usize, Option<usize>, T)>,
    /// From each byte offset on, the innermost scope that holds it (`None`: none), in order
    /// of offset: a walk up from the last scope that starts before a node would pass every
    /// closed scope in between (`d` of them after a closed nest of `d` lambdas).
    deepest: Vec<(usize, Option<usize>)>,
}

impl<T> Scopes<T> {
    /// Index `scopes` (in any order).
    pub(crate) fn new(mut items: Vec<(impl Span, T)>) -> Self {
        items.sort_by_key(|(node, _)| (node.start_byte(), std::cmp::Reverse(node.end_byte())));
        let mut scopes: Vec<(usize, usize, Option<usize>, T)> = Vec::with_capacity(items.len());
        let mut open: Vec<usize> = Vec::new();
        for (node, value) in items {
            let (start, end) = (node.start_byte(), node.end_byte());
            while let Some(&last) = open.last() {
                if scopes
                    .get(last)
                    .is_some_and(|scope| scope.1 >= end && scope.0 <= start)
                {
                    break;
                }
                open.pop();
            }
            scopes.push((start, end, open.last().copied(), value));
            open.push(scopes.len() - 1);
        }
        let mut deepest = Vec::with_capacity(scopes.len() * 2);
        let mut held: Vec<(usize, usize)> = Vec::new();
        for (index, (start, end, _, _)) in scopes.iter().enumerate() {
            while let Some(&(_, held_end)) = held.last() {
                if held_end > *start {
                    break;
                }
                held.pop();
                deepest.push((held_end, held.last().map(|(index, _)| *index)));
            }
            deepest.push((*start, Some(index)));
            held.push((index, *end));
        }
        while let Some((_, held_end)) = held.pop() {
            deepest.push((held_end, held.last().map(|(index, _)| *index)));
        }
        Scopes { scopes, deepest }
    }

    /// How many scopes there are.
    pub(crate) fn len(&self) -> usize {
        self.scopes.len()
    }

    /// The scope to walk up from for a node that starts at `start` and ends at `end`: the
    /// innermost scope holding the byte at `start` (a node of no width: the last scope that
    /// starts before it, as a scope may end where it is).
    fn first_to_try(&self, start: usize, end: usize) -> Option<usize> {
        if start == end {
            let after = self.scopes.partition_point(|scope| scope.0 <= start);
            return after.checked_sub(1);
        }
        let after = self.deepest.partition_point(|(offset, _)| *offset <= start);
        self.deepest.get(after.checked_sub(1)?)?.1
    }

    /// The index of the innermost scope that contains `node`, for [`Scopes::parent`] and
    /// [`Scopes::value`].
    pub(crate) fn innermost(&self, node: impl Span) -> Option<usize> {
        let (start, end) = (node.start_byte(), node.end_byte());
        let mut next = self.first_to_try(start, end);
        while let Some(index) = next {
            let scope = self.scopes.get(index)?;
            if scope.0 <= start && end <= scope.1 {
                return Some(index);
            }
            next = scope.2;
        }
        None
    }

    /// The index of the scope around the scope at `index`.
    pub(crate) fn parent(&self, index: usize) -> Option<usize> {
        self.scopes.get(index).and_then(|scope| scope.2)
    }

    /// The value of the scope at `index`.
    pub(crate) fn value(&self, index: usize) -> Option<&T> {
        self.scopes.get(index).map(|scope| &scope.3)
    }

    /// The values of the scopes that contain `node`, innermost first.
    pub(crate) fn containing(&self, node: impl Span) -> impl Iterator<Item = &T> {
        let (start, end) = (node.start_byte(), node.end_byte());
        let mut next = self.first_to_try(start, end);
        std::iter::from_fn(move || {
            while let Some(index) = next {
                let scope = self.scopes.get(index)?;
                next = scope.2;
                if scope.0 <= start && end <= scope.1 {
                    return Some(&scope.3);
                }
            }
            None
        })
    }
}

/// Where each name is read in a file: one walk builds it, and "does this node read one of
/// these names" is then a binary search per name, or a look-up per read inside the node,
/// whichever is fewer, instead of a walk of the node (which was quadratic for nested calls
/// and nested `let`s).
#[derive(Default)]
pub(crate) struct Reads<'s> {
    offsets: hashbrown::HashMap<&'s str, Vec<usize>>,
    /// Every read, in increasing order of offset.
    all: Vec<(usize, &'s str)>,
}

impl<'s> Reads<'s> {
    /// Record a read of `name` at byte `offset` (in increasing order of offset).
    pub(crate) fn add(&mut self, name: &'s str, offset: usize) {
        self.offsets.entry(name).or_default().push(offset);
        self.all.push((offset, name));
    }

    /// Add reads that were not in order (`extra` in any order), keeping every list sorted.
    pub(crate) fn merge(&mut self, mut extra: Vec<(usize, &'s str)>) {
        if extra.is_empty() {
            return;
        }
        extra.sort_unstable();
        for (offset, name) in &extra {
            let offsets = self.offsets.entry(name).or_default();
            // In order already unless the name was read before the merge.
            if offsets.last().is_none_or(|last| last <= offset) {
                offsets.push(*offset);
            } else {
                let at = offsets.partition_point(|o| o <= offset);
                offsets.insert(at, *offset);
            }
        }
        let all = std::mem::take(&mut self.all);
        let mut merged = Vec::with_capacity(all.len() + extra.len());
        let (mut a, mut b) = (all.into_iter().peekable(), extra.into_iter().peekable());
        loop {
            let take_a = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x.0 <= y.0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            merged.extend(if take_a { a.next() } else { b.next() });
        }
        self.all = merged;
    }

    /// The offsets where `name` is read, in increasing order.
    pub(crate) fn offsets_of(&self, name: &str) -> &[usize] {
        self.offsets.get(name).map_or(&[], Vec::as_slice)
    }

    /// Whether `node` reads one of `names`.
    pub(crate) fn any_within(&self, names: &HashSet<String>, node: impl Span) -> bool {
        let (start, end) = (node.start_byte(), node.end_byte());
        // Many names (a function whose every local is tainted) and a small node: the reads
        // inside the node are fewer, and each is one look-up.
        let first = self.all.partition_point(|(offset, _)| *offset < start);
        let within = self.all.get(first..).unwrap_or(&[]);
        if within
            .get(names.len())
            .is_none_or(|(offset, _)| *offset >= end)
        {
            return within
                .iter()
                .take_while(|(offset, _)| *offset < end)
                .any(|(_, name)| names.contains(*name));
        }
        names.iter().any(|name| {
            self.offsets.get(name.as_str()).is_some_and(|offsets| {
                let first = offsets.partition_point(|offset| *offset < start);
                offsets.get(first).is_some_and(|offset| *offset < end)
            })
        })
    }
}

/// The items of `sorted` (in source order) that start inside `outer`, found by binary search
/// (filter with [`contains`] for the ones that also end inside it).
pub(crate) fn inside<N: Span>(sorted: &[N], outer: impl Span) -> &[N] {
    let first = sorted.partition_point(|node| node.start_byte() < outer.start_byte());
    let last = sorted.partition_point(|node| node.start_byte() < outer.end_byte());
    sorted.get(first..last.max(first)).unwrap_or(&[])
}

/// `Err` with the first node deeper than `limit` below `root` (iteratively: a cursor, no
/// recursion).
fn depth_within(root: Node<'_>, limit: usize) -> Result<(), Node<'_>> {
    let mut cursor = root.walk();
    let mut depth = 0usize;
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            if depth > limit {
                return Err(cursor.node());
            }
            continue;
        }
        loop {
            if depth == 0 {
                return Ok(());
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(());
            }
            depth -= 1;
        }
    }
}

/// The source text of a node (empty if the range is somehow not on a char boundary).
pub(crate) fn text_of(node: impl Span, source: &str) -> &str {
    source.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// Named children, skipping extras: comments, and the `\` of a Python line continuation.
pub(crate) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|child| !child.is_extra())
        .collect()
}

/// Whether `node` lies inside `outer` (inclusive).
pub(crate) fn contains(outer: impl Span, node: impl Span) -> bool {
    outer.start_byte() <= node.start_byte() && node.end_byte() <= outer.end_byte()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_fools_a_lexer_does_not_flatten_the_tree_and_a_broken_tree_says_so() {
        let n = 2_000;
        let parens = format!("{}1{}", "(".repeat(n), ")".repeat(n));
        for text in [
            format!("x = 1 // c\r x = {parens};\n"),
            format!("x = 1 // c\u{2028} x = {parens};\n"),
            format!("x = a++ / {parens} / 1;\n"),
            format!("if (a) /'/.test(b), {parens};\n"),
            format!("function f(){{}}\n/'/.test(b), {parens};\n"),
            format!("x = {}{};\n", "<a>,".repeat(n), "</a>".repeat(n)),
        ] {
            for grammar in [Grammar::JavaScript, Grammar::Tsx] {
                assert!(
                    matches!(
                        depth_check(grammar, &text, n),
                        Err(SourceError::TooDeep { .. })
                    ),
                    "{:?}",
                    text.get(..30)
                );
                let wide = depth_check(grammar, &text, 3 * n);
                assert!(wide.is_ok(), "{:?} {wide:?}", text.get(..30));
            }
        }
        // Unclosed elements: tree-sitter recovers with a flat tree, so the caller must measure
        // a broken tree another way (oxc recurses into every one).
        let unclosed = format!("x = {};\n", "<a>,".repeat(n));
        assert!(matches!(
            depth_check(Grammar::JavaScript, &unclosed, 100),
            Ok(true)
        ));
    }
}
