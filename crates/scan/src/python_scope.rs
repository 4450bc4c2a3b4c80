//! Python name scopes, for constant propagation: which scope a read of a name refers to, and
//! every binding of each name in each scope (assignments, and every other form that binds:
//! loops, comprehensions, `:=`, `as`, `case` captures, imports, parameters, `def`, `class`,
//! reflective writes). A name is a constant in a scope only when every binding there is an
//! assignment of a constant; a binding the analyser cannot see the value of makes it not one.
//!
//! Scopes follow Python's rules closely enough for that: functions and lambdas, class bodies
//! (not seen from the methods inside them), comprehensions (their loop variables; `:=` inside
//! one binds in the enclosing function), `global` (the binding is the module's) and `nonlocal`
//! (the enclosing functions' name is bound by something unseen).

use std::cell::RefCell;

use hashbrown::{HashMap, HashSet};

use crate::python_tree::{PyNode, named_children};

use crate::syntax_tree::{Scopes, text_of};

/// A scope: its node's id (the module's is the root's).
pub(crate) type ScopeId = usize;

#[derive(Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    Function,
    Class,
    Comprehension,
}

fn scope_kind(kind: &str) -> Option<ScopeKind> {
    match kind {
        "function_definition" | "lambda" => Some(ScopeKind::Function),
        "class_definition" => Some(ScopeKind::Class),
        "list_comprehension"
        | "set_comprehension"
        | "dictionary_comprehension"
        | "generator_expression" => Some(ScopeKind::Comprehension),
        _ => None,
    }
}

/// Whether a node opens a scope of its own.
pub(crate) fn opens_scope(kind: &str) -> bool {
    scope_kind(kind).is_some()
}

/// One binding of a name.
#[derive(Clone, Copy)]
pub(crate) enum Binding<'t> {
    /// `name = right`, or `name += right` when `plus`.
    Assign { right: PyNode<'t>, plus: bool },
    /// `for name in [..]`: each element of a list or tuple literal in turn.
    Each(PyNode<'t>),
    /// Any binding whose value the analyser does not follow.
    Other,
}

/// Where a binding lands, relative to the innermost scope around it.
#[derive(Clone, Copy)]
pub(crate) enum Place {
    /// The innermost scope (or the module, for a name declared `global` there).
    Here,
    /// The scope around a `def` or `class` (whose own node is the scope it opens).
    Around(usize),
    /// The innermost scope that is not a comprehension (`:=`).
    OutsideComprehensions,
}

/// Every scope of a file and every binding in each.
pub(crate) struct Namespaces<'t> {
    root: ScopeId,
    scopes: Scopes<(ScopeId, ScopeKind)>,
    /// `global name` in a function: (the function, name).
    globals: HashSet<(ScopeId, String)>,
    bindings: HashMap<ScopeId, HashMap<String, Vec<Binding<'t>>>>,
    /// `nonlocal name` in a function (by its index in `scopes`), applied by
    /// [`Namespaces::finish`].
    nonlocals: Vec<(usize, String)>,
    /// Where reads of each name refer to ([`ReadIndex`]), built at the first read after the
    /// last binding.
    reads: RefCell<Option<ReadIndex>>,
}

/// For each name, from which scope on (by index in [`Namespaces::scopes`], a preorder) a read
/// refers to which scope: the innermost scope around the read that binds the name or declares
/// it `global` (class bodies aside), found by one binary search: not a walk of every scope
/// around the read, nor a memo of such walks, which holds depth × names entries.
type ReadIndex = HashMap<String, Vec<(usize, ScopeId)>>;

impl<'t> Namespaces<'t> {
    /// The scopes of a file (`scope_nodes`: every node that [`opens_scope`]), with the
    /// `global` and `nonlocal` statements applied.
    pub(crate) fn new(
        root: PyNode<'t>,
        scope_nodes: &[PyNode<'t>],
        declarations: &[PyNode<'t>],
        source: &str,
    ) -> Self {
        let scopes = Scopes::new(
            scope_nodes
                .iter()
                .filter_map(|node| Some((*node, (node.id(), scope_kind(node.kind_name())?))))
                .collect(),
        );
        let mut namespaces = Namespaces {
            root: root.id(),
            scopes,
            globals: HashSet::new(),
            bindings: HashMap::new(),
            nonlocals: Vec::new(),
            reads: RefCell::new(None),
        };
        for declaration in declarations {
            let names: Vec<String> = named_children(*declaration)
                .into_iter()
                .filter(|n| n.kind_name() == "identifier")
                .map(|n| text_of(n, source).to_string())
                .collect();
            // The innermost function around the statement.
            let mut next = namespaces.scopes.innermost(*declaration);
            let function = loop {
                let Some(index) = next else {
                    break None;
                };
                if let Some(&(id, ScopeKind::Function)) = namespaces.scopes.value(index) {
                    break Some((index, id));
                }
                next = namespaces.scopes.parent(index);
            };
            let Some((index, id)) = function else {
                continue;
            };
            if declaration.kind_name() == "global_statement" {
                for name in names {
                    namespaces.globals.insert((id, name));
                }
            } else {
                (namespaces.nonlocals).extend(names.into_iter().map(|name| (index, name)));
            }
        }
        namespaces
    }

    /// Whether function `scope` declares `name` global. (Asked for every binding and read
    /// inside a function: with no `global` statement in the file it builds no key.)
    fn is_global_in(&self, scope: ScopeId, name: &str) -> bool {
        !self.globals.is_empty() && self.globals.contains(&(scope, name.to_string()))
    }

    /// The module's scope.
    pub(crate) fn root(&self) -> ScopeId {
        self.root
    }

    fn add(&mut self, scope: ScopeId, name: String, binding: Binding<'t>) {
        // A new binding can change where a read refers to.
        *self.reads.get_mut() = None;
        self.bindings
            .entry(scope)
            .or_default()
            .entry(name)
            .or_default()
            .push(binding);
    }

    /// Record a binding of `name` made by the node `at`.
    pub(crate) fn bind(
        &mut self,
        at: PyNode<'_>,
        name: String,
        binding: Binding<'t>,
        place: Place,
    ) {
        let mut target = self.root;
        for &(id, kind) in self.scopes.containing(at) {
            match place {
                Place::Around(own) if id == own => continue,
                Place::OutsideComprehensions if kind == ScopeKind::Comprehension => continue,
                _ => {}
            }
            if kind != ScopeKind::Function || !self.is_global_in(id, &name) {
                target = id;
            }
            break;
        }
        self.add(target, name, binding);
    }

    /// Record a binding of a module-level name (a reflective write such as
    /// `globals()["name"] = ..`).
    pub(crate) fn bind_in_module(&mut self, name: String) {
        self.add(self.root, name, Binding::Other);
    }

    /// Apply the `nonlocal` statements, once every other binding is recorded: `nonlocal name`
    /// rebinds, where we do not follow it, the name of the function around that binds it
    /// (not every function around: a nest of `d` functions each declaring the name
    /// `nonlocal` would make d²/2 bindings).
    pub(crate) fn finish(&mut self) {
        let owners: Vec<(ScopeId, String)> = std::mem::take(&mut self.nonlocals)
            .into_iter()
            .filter_map(|(function, name)| {
                let around = self.scopes.parent(function)?;
                let owner = self.enclosing_scope(around, &name);
                (owner != self.root).then_some((owner, name))
            })
            .collect();
        for (owner, name) in owners {
            self.add(owner, name, Binding::Other);
        }
    }

    /// The scope a read of `name` at `at` refers to.
    pub(crate) fn scope_of_read(&self, at: PyNode<'_>, name: &str) -> ScopeId {
        let Some(innermost) = self.scopes.innermost(at) else {
            return self.root;
        };
        // A class body decides a read directly inside it, not one in a function inside it.
        if let Some(&(id, ScopeKind::Class)) = self.scopes.value(innermost)
            && (self.bindings.get(&id)).is_some_and(|names| names.contains_key(name))
        {
            return id;
        }
        self.enclosing_scope(innermost, name)
    }

    /// The scope a read of `name` refers to from the scope at `index` (of
    /// [`Namespaces::scopes`]) or one inside it, class bodies aside ([`ReadIndex`]).
    fn enclosing_scope(&self, index: usize, name: &str) -> ScopeId {
        let mut reads = self.reads.borrow_mut();
        let reads = reads.get_or_insert_with(|| self.read_index());
        let Some(from) = reads.get(name) else {
            return self.root;
        };
        let after = from.partition_point(|(first, _)| *first <= index);
        after
            .checked_sub(1)
            .and_then(|at| from.get(at))
            .map_or(self.root, |(_, scope)| *scope)
    }

    /// The [`ReadIndex`] of the bindings and `global` statements recorded.
    fn read_index(&self) -> ReadIndex {
        let count = self.scopes.len();
        // The last scope inside each (the scopes inside one follow it).
        let mut last: Vec<usize> = (0..count).collect();
        for index in (0..count).rev() {
            if let Some(parent) = self.scopes.parent(index)
                && let (Some(&inner), Some(outer)) = (last.get(index), last.get(parent))
                && inner > *outer
                && let Some(outer) = last.get_mut(parent)
            {
                *outer = inner;
            }
        }
        // Each scope that decides a name: (first index, global, last index, the scope a read
        // refers to). A `global` statement decides before a binding of the same scope.
        let mut deciding: HashMap<&str, Vec<(usize, bool, usize, ScopeId)>> = HashMap::new();
        let mut index_of: HashMap<ScopeId, usize> = HashMap::new();
        for index in 0..count {
            let Some(&(id, kind)) = self.scopes.value(index) else {
                continue;
            };
            index_of.insert(id, index);
            if kind == ScopeKind::Class {
                continue;
            }
            let end = last.get(index).copied().unwrap_or(index);
            for name in self.bindings.get(&id).into_iter().flat_map(HashMap::keys) {
                (deciding.entry(name))
                    .or_default()
                    .push((index, false, end, id));
            }
        }
        for (function, name) in &self.globals {
            if let Some(&index) = index_of.get(function) {
                let end = last.get(index).copied().unwrap_or(index);
                (deciding.entry(name))
                    .or_default()
                    .push((index, true, end, self.root));
            }
        }
        deciding
            .into_iter()
            .map(|(name, mut scopes)| {
                scopes.sort_unstable_by_key(|(first, global, _, _)| (*first, *global));
                // The scopes nest or are apart: a sweep with the open ones on a stack.
                let mut from = Vec::with_capacity(scopes.len() * 2);
                let mut open: Vec<(usize, ScopeId)> = Vec::new();
                for (first, _, end, scope) in scopes {
                    while let Some(&(open_end, _)) = open.last() {
                        if open_end >= first {
                            break;
                        }
                        open.pop();
                        let around = open.last().map_or(self.root, |(_, scope)| *scope);
                        from.push((open_end + 1, around));
                    }
                    from.push((first, scope));
                    open.push((end, scope));
                }
                while let Some((open_end, _)) = open.pop() {
                    let around = open.last().map_or(self.root, |(_, scope)| *scope);
                    from.push((open_end + 1, around));
                }
                (name.to_string(), from)
            })
            .collect()
    }

    /// The bindings of `name` in `scope` (empty when it has none there).
    pub(crate) fn bindings_of(&self, scope: ScopeId, name: &str) -> &[Binding<'t>] {
        self.bindings
            .get(&scope)
            .and_then(|names| names.get(name))
            .map_or(&[], Vec::as_slice)
    }

    /// Every (scope, name) with its bindings.
    pub(crate) fn all(&self) -> impl Iterator<Item = (ScopeId, &str, &[Binding<'t>])> {
        self.bindings.iter().flat_map(|(scope, names)| {
            names
                .iter()
                .map(move |(name, bindings)| (*scope, name.as_str(), bindings.as_slice()))
        })
    }
}

/// The names a `case` pattern captures: bare names and `as` targets, not the class of a
/// class pattern (`Point(..)`), the keyword of a keyword pattern (`x=..`), a dotted value
/// pattern (`Color.RED`) or the wildcard `_`.
pub(crate) fn pattern_captures(node: PyNode<'_>, source: &str, out: &mut Vec<String>) {
    match node.kind_name() {
        "dotted_name" => {
            let parts = named_children(node);
            if let [only] = parts.as_slice() {
                pattern_captures(*only, source, out);
            }
        }
        "identifier" => {
            let name = text_of(node, source);
            if name != "_" {
                out.push(name.to_string());
            }
        }
        "class_pattern" | "keyword_pattern" => {
            for child in named_children(node).into_iter().skip(1) {
                pattern_captures(child, source, out);
            }
        }
        _ => {
            for child in named_children(node) {
                pattern_captures(child, source, out);
            }
        }
    }
}
