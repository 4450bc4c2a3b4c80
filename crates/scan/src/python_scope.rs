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
    /// The scope a read of a name refers to from inside a scope (by its index in `scopes`)
    /// where the name is not bound, once asked: each read used to walk every scope around
    /// it, quadratic in a nest of lambdas (`lambda: a if b else lambda: ..`).
    enclosing_reads: RefCell<HashMap<usize, HashMap<String, ScopeId>>>,
}

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
            enclosing_reads: RefCell::new(HashMap::new()),
        };
        for declaration in declarations {
            let names: Vec<String> = named_children(*declaration)
                .into_iter()
                .filter(|n| n.kind_name() == "identifier")
                .map(|n| text_of(n, source).to_string())
                .collect();
            let functions: Vec<ScopeId> = namespaces
                .scopes
                .containing(*declaration)
                .filter(|(_, kind)| *kind == ScopeKind::Function)
                .map(|(id, _)| *id)
                .collect();
            if declaration.kind_name() == "global_statement" {
                if let Some(function) = functions.first() {
                    for name in &names {
                        namespaces.globals.insert((*function, name.clone()));
                    }
                }
            } else {
                // `nonlocal name`: an enclosing function's name is rebound where we do not
                // follow it.
                for function in functions.iter().skip(1) {
                    for name in &names {
                        namespaces.add(*function, name.clone(), Binding::Other);
                    }
                }
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
        if !self.enclosing_reads.get_mut().is_empty() {
            self.enclosing_reads.get_mut().clear();
        }
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

    /// The scope a read of `name` at `at` refers to.
    pub(crate) fn scope_of_read(&self, at: PyNode<'_>, name: &str) -> ScopeId {
        let Some(innermost) = self.scopes.innermost(at) else {
            return self.root;
        };
        // The innermost scope, a class body included.
        if let Some(found) = self.decides(innermost, name, true) {
            return found;
        }
        match self.scopes.parent(innermost) {
            Some(parent) => self.scope_of_read_from(parent, name),
            None => self.root,
        }
    }

    /// Whether the scope at `index` (of [`Namespaces::scopes`]) decides a read of `name`: the
    /// module for a `global` name, the scope itself for a name bound there. A class body
    /// decides only for a read directly inside it (`class_seen`): its names are not seen from
    /// the functions inside it.
    fn decides(&self, index: usize, name: &str, class_seen: bool) -> Option<ScopeId> {
        let &(id, kind) = self.scopes.value(index)?;
        if kind == ScopeKind::Class && !class_seen {
            return None;
        }
        if kind == ScopeKind::Function && self.is_global_in(id, name) {
            return Some(self.root);
        }
        self.bindings
            .get(&id)
            .is_some_and(|names| names.contains_key(name))
            .then_some(id)
    }

    /// [`Namespaces::scope_of_read`] from an enclosing scope (class bodies skipped), memoised
    /// for every scope it passes ([`Namespaces::enclosing_reads`]).
    fn scope_of_read_from(&self, index: usize, name: &str) -> ScopeId {
        let mut passed = Vec::new();
        let mut next = Some(index);
        let found = loop {
            let Some(index) = next else {
                break self.root;
            };
            if let Some(known) =
                (self.enclosing_reads.borrow().get(&index)).and_then(|names| names.get(name))
            {
                break *known;
            }
            if let Some(found) = self.decides(index, name, false) {
                break found;
            }
            passed.push(index);
            next = self.scopes.parent(index);
        };
        let mut memo = self.enclosing_reads.borrow_mut();
        for index in passed {
            memo.entry(index)
                .or_default()
                .insert(name.to_string(), found);
        }
        found
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
