//! JavaScript and TypeScript: oxc parses the file and its semantic pass resolves every identifier
//! to its declaration. On top of that a small abstract interpreter tracks which symbols hold
//! `child_process` (or one of its methods, or a library sink) however they got there, and the
//! thirteen rules are evaluated on every call, `new` and tagged template whose callee resolves to a
//! sink. A local function that merely happens to be called `exec` resolves to nothing and is
//! never a sink.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::AstKind;
use oxc_ast::ast::{
    Argument, ArrayExpression, ArrayExpressionElement, AssignmentOperator, AssignmentTarget,
    BinaryOperator, BindingPattern, CallExpression, ChainElement, Class, ClassElement, Declaration,
    ExportDefaultDeclarationKind, Expression, FormalParameters, Function, IdentifierReference,
    ImportDeclarationSpecifier, LogicalOperator, ModuleExportName, ObjectExpression,
    ObjectPropertyKind, Statement, TSModuleReference, TSType, TSTypeAnnotation, TSTypeName,
    UnaryOperator,
};

use crate::nesting::{
    LEXER_MEASURED_BYTES, MAX_JAVASCRIPT_NESTING, javascript_nesting, jsx_openings_over,
};
use crate::syntax_tree::{self, Grammar};
use oxc_parser::{Parser, ParserReturn};
use oxc_semantic::{AstNodes, Scoping, SemanticBuilder};
use oxc_span::{GetSpan, SourceType, Span};
use oxc_syntax::node::NodeId;
use oxc_syntax::symbol::SymbolId;

use crate::error::SourceError;
use crate::finding::{ALL_POSITIONS, Analysis, Flow, Hit, Positions, Reexport};
use crate::rule::{
    Rule, reads_subcommand, runs_code_through_options_at, shell_position, takes_value_in,
};
use crate::source::SourceText;

/// The longest string constant folding builds (program and module names are short).
const MAX_FOLDED_LENGTH: usize = 4096;

/// The seven `child_process` entry points (library sinks are mapped onto the closest one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Exec,
    ExecSync,
    ExecFile,
    ExecFileSync,
    Spawn,
    SpawnSync,
    /// `child_process.fork(modulePath)`: runs a Node module.
    Fork,
}

impl Method {
    fn from_name(name: &str) -> Option<Method> {
        Some(match name {
            "exec" => Method::Exec,
            "execSync" => Method::ExecSync,
            "execFile" => Method::ExecFile,
            "execFileSync" => Method::ExecFileSync,
            "spawn" => Method::Spawn,
            "spawnSync" => Method::SpawnSync,
            "fork" => Method::Fork,
            _ => return None,
        })
    }
}

/// A callable that starts a process. `library` sinks (execa, cross-spawn, shelljs) get the
/// injection rules but not the Node-specific `maxBuffer`/`timeout` hygiene rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sink {
    method: Method,
    library: bool,
}

/// What the resolver knows a symbol or expression evaluates to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    /// The `child_process` module object.
    ChildProcess,
    /// The `util` module object.
    Util,
    /// `util.promisify`.
    Promisify,
    /// The `execa` module object.
    Execa,
    /// The `shelljs` module object.
    Shelljs,
    /// The `zx` module object.
    Zx,
    /// zx's `$` tag.
    ZxShell,
    /// execa's `$` tag; `true` once it was given `{ shell: true }`.
    ExecaScript(bool),
    /// The `vm` module object.
    Vm,
    /// The `module` builtin (for `createRequire`).
    NodeModule,
    /// `createRequire`.
    CreateRequire,
    /// A `require` function.
    Require,
    /// The `Deno` global.
    Deno,
    /// The `Bun` global (or the `bun` module).
    Bun,
    /// `globalThis`, `global`, `window`, `self`.
    GlobalThis,
    /// The `process` global.
    Process,
    /// CommonJS `module` (or `process.mainModule`).
    CommonJsModule,
    /// `eval`.
    Eval,
    /// The `Function` constructor.
    FunctionConstructor,
    /// `Deno.run`, `Deno.Command`, `Bun.spawn`, `Bun.spawnSync`, `Bun.$`.
    RuntimeProcess,
    /// A process-starting function.
    Sink(Sink),
}

impl Value {
    fn is_callable_sink(self) -> bool {
        matches!(
            self,
            Value::Sink(_) | Value::Eval | Value::FunctionConstructor | Value::RuntimeProcess
        )
    }
}

/// The value a module specifier imports, if it is one we track. `node:` prefixes are accepted.
fn module_value(specifier: &str) -> Option<Value> {
    let name = specifier.strip_prefix("node:").unwrap_or(specifier);
    Some(match name {
        "child_process" => Value::ChildProcess,
        "util" => Value::Util,
        "execa" => Value::Execa,
        "cross-spawn" => Value::Sink(Sink {
            method: Method::Spawn,
            library: true,
        }),
        "shelljs" => Value::Shelljs,
        "zx" => Value::Zx,
        "module" => Value::NodeModule,
        "bun" => Value::Bun,
        "vm" => Value::Vm,
        _ => return None,
    })
}

/// Globals we track, used only when the identifier resolves to no local declaration.
fn global_value(name: &str) -> Option<Value> {
    Some(match name {
        "require" => Value::Require,
        "eval" => Value::Eval,
        "Function" => Value::FunctionConstructor,
        "Deno" => Value::Deno,
        "Bun" => Value::Bun,
        "globalThis" | "global" | "window" | "self" => Value::GlobalThis,
        "process" => Value::Process,
        "module" => Value::CommonJsModule,
        _ => return None,
    })
}

/// The value of `object.name` (or `object["name"]`).
fn member_value(object: Value, name: &str) -> Option<Value> {
    let library = |method| {
        Some(Value::Sink(Sink {
            method,
            library: true,
        }))
    };
    match (object, name) {
        (Value::ChildProcess, "default") => Some(Value::ChildProcess),
        (Value::ChildProcess, method) => Method::from_name(method).map(|method| {
            Value::Sink(Sink {
                method,
                library: false,
            })
        }),
        (Value::Util, "promisify") => Some(Value::Promisify),
        (Value::Util, "default") => Some(Value::Util),
        (Value::Execa, "execa" | "default") => library(Method::ExecFile),
        (Value::Execa, "execaSync") => library(Method::ExecFileSync),
        (Value::Execa, "execaCommand") => library(Method::Exec),
        (Value::Execa, "execaCommandSync") => library(Method::ExecSync),
        (Value::Execa, "$") => Some(Value::ExecaScript(false)),
        (
            Value::Vm,
            "runInNewContext" | "runInThisContext" | "runInContext" | "compileFunction" | "Script",
        ) => Some(Value::Eval),
        (Value::Vm, "default") => Some(Value::Vm),
        (Value::Shelljs, "exec") => library(Method::Exec),
        (Value::Shelljs, "default") => Some(Value::Shelljs),
        (Value::Zx, "$") => Some(Value::ZxShell),
        (Value::Zx, "default") => Some(Value::Zx),
        (Value::NodeModule, "createRequire") => Some(Value::CreateRequire),
        (Value::NodeModule, "default") => Some(Value::NodeModule),
        (Value::Deno, "run" | "Command") => Some(Value::RuntimeProcess),
        (Value::Bun, "spawn" | "spawnSync" | "$") => Some(Value::RuntimeProcess),
        (Value::Bun, "default") => Some(Value::Bun),
        (Value::GlobalThis, name) => global_value(name),
        (Value::Process, "mainModule") => Some(Value::CommonJsModule),
        (Value::CommonJsModule, "require") => Some(Value::Require),
        (Value::Sink(sink), "default") => Some(Value::Sink(sink)),
        (
            Value::Sink(Sink {
                method: Method::Spawn,
                library: true,
            }),
            "sync",
        ) => library(Method::SpawnSync),
        _ => None,
    }
}

/// One argument as the rules see it.
#[derive(Clone, Copy)]
enum Arg<'a> {
    /// A plain expression.
    Expr(&'a Expression<'a>),
    /// A spread, or an argument list we could not see (`fn.apply(this, list)`).
    Opaque,
}

impl<'a> Arg<'a> {
    fn from_argument(argument: &'a Argument<'a>) -> Arg<'a> {
        match argument.as_expression() {
            Some(expression) => Arg::Expr(expression),
            None => Arg::Opaque,
        }
    }
}

/// Whether an options object sets a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OptionState {
    Present,
    Absent,
    Unknown,
}

/// The string value of a literal string expression (string literal or template without `${}`).
fn literal_text<'a>(expression: &'a Expression<'a>) -> Option<&'a str> {
    match expression.get_inner_expression() {
        Expression::StringLiteral(literal) => Some(literal.value.as_str()),
        Expression::TemplateLiteral(template) if template.expressions.is_empty() => template
            .quasis
            .first()
            .and_then(|quasi| quasi.value.cooked)
            .map(|cooked| cooked.as_str()),
        _ => None,
    }
}

fn is_interpolated_template(expression: &Expression<'_>) -> bool {
    matches!(expression.get_inner_expression(), Expression::TemplateLiteral(t) if !t.expressions.is_empty())
}

fn is_function_like(expression: &Expression<'_>) -> bool {
    matches!(
        expression.get_inner_expression(),
        Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_)
    )
}

/// Every symbol a binding pattern declares.
fn pattern_symbols(pattern: &BindingPattern<'_>, out: &mut Vec<SymbolId>) {
    match pattern {
        BindingPattern::BindingIdentifier(identifier) => out.extend(identifier.symbol_id.get()),
        BindingPattern::ObjectPattern(object) => {
            for property in &object.properties {
                pattern_symbols(&property.value, out);
            }
            if let Some(rest) = &object.rest {
                pattern_symbols(&rest.argument, out);
            }
        }
        BindingPattern::ArrayPattern(array) => {
            for element in array.elements.iter().flatten() {
                pattern_symbols(element, out);
            }
            if let Some(rest) = &array.rest {
                pattern_symbols(&rest.argument, out);
            }
        }
        BindingPattern::AssignmentPattern(assignment) => pattern_symbols(&assignment.left, out),
    }
}

fn parameter_symbols(parameters: &FormalParameters<'_>) -> Vec<SymbolId> {
    let mut out = Vec::new();
    for item in &parameters.items {
        pattern_symbols(&item.pattern, &mut out);
    }
    if let Some(rest) = &parameters.rest {
        pattern_symbols(&rest.rest.argument, &mut out);
    }
    out
}

/// The parameters of a function or arrow expression.
fn function_parameters<'a>(expression: &'a Expression<'a>) -> Option<&'a FormalParameters<'a>> {
    match expression.get_inner_expression() {
        Expression::ArrowFunctionExpression(arrow) => Some(&arrow.params),
        Expression::FunctionExpression(function) => Some(&function.params),
        _ => None,
    }
}

/// The resolver and rule engine for one parsed file.
/// The values each function of a file returns, by the function's start offset.
type Returns<'a> = HashMap<u32, Vec<Option<&'a Expression<'a>>>>;

struct Analyzer<'a, 's> {
    scoping: &'s Scoping,
    nodes: &'s AstNodes<'a>,
    bindings: HashMap<SymbolId, Value>,
    tainted: HashSet<SymbolId>,
    /// The start offsets of every reference to a tainted symbol, kept up to date by
    /// [`Analyzer::taint`] (taint only grows). Rebuilding a sorted list whenever a symbol was
    /// added was quadratic in a chain of functions each tainting the next one's parameter.
    tainted_references: BTreeSet<u32>,
    hits: Vec<Hit>,
    /// Every assignment to a plain name (any operator), by the name's symbol.
    writes: HashMap<SymbolId, Vec<(AssignmentOperator, &'a Expression<'a>)>>,
    /// `name.push(..)`, `name.unshift(..)`, `name.splice(..)` calls, by the array's symbol.
    array_additions: HashMap<SymbolId, Vec<&'a CallExpression<'a>>>,
    /// What `this.name` holds (a class field or a `this.name = ..` assignment), by name.
    this_properties: HashMap<String, Value>,
    /// Every `this.name` field initialiser and `this.name = ..` assignment, by name.
    this_fields: Vec<(String, &'a Expression<'a>)>,
    /// Every class in the file (for `this.method(..)`).
    classes: Vec<&'a Class<'a>>,
    /// Symbols known to be constant or not (see [`Analyzer::is_constant`]), and the ones
    /// being decided (a cycle such as `cmd = cmd + " -v"` counts as not constant: a finding
    /// too many, never one too few).
    constants: RefCell<HashMap<SymbolId, bool>>,
    deciding: RefCell<HashSet<SymbolId>>,
    /// Names imported from another module: (module as written, imported name; `*` for a
    /// namespace import or a whole `require(..)`, `default` for a default import).
    imports: HashMap<SymbolId, (String, String)>,
    /// What this file exports, by exported name (`default` for the default export).
    exports: HashMap<String, Exported<'a>>,
    /// Whether its default export is `module.exports = x`: then any name another module
    /// takes from it may be a member of `x` (`module.exports = { run }`), an `export *` of it
    /// included.
    commonjs_default: bool,
    /// Tool handlers registered by a name that resolves to nothing local.
    registered_handlers: Vec<&'a Expression<'a>>,
    /// `if (x.startsWith("-")) throw ..` / `return ..`: where the statement ends, and `x`.
    dash_guards: Vec<(u32, SymbolId)>,
    /// The values every function of the file returns, by the function's start offset
    /// (`None` for a bare `return`), built the first time
    /// [`Analyzer::url_encoded`] asks.
    returns: RefCell<Option<Returns<'a>>>,
    /// Steps [`Analyzer::inert_command`] and [`Analyzer::url_encoded`] may still take in this
    /// file (its node count at the start): past it nothing more is taken as inert, so a file
    /// of many calls of many wrappers stays linear.
    inert_budget: std::cell::Cell<usize>,
    /// What each call returns ([`Analyzer::call_result`]), by the call's address, once the
    /// bindings are final (`None` before). Each call of a chain `f()()()..` or `a.b().b()..`
    /// resolves the whole chain below it: without this, every call of the file is resolved
    /// once per call above it.
    resolved_calls: RefCell<Option<HashMap<usize, Option<Value>>>>,
}

/// What [`Analyzer::scan_argv`] found first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ArgvScan {
    /// A literal `--`.
    Separated,
    /// A tainted element that can start an option.
    Injectable,
    /// Only tainted elements that cannot.
    Kept,
    /// No tainted element.
    Unseen,
}

/// Where tool input sent to an exported name goes.
enum Target<'a> {
    /// The parameters of a function or method of this file.
    Parameters(&'a FormalParameters<'a>),
    /// A name this file imported: (module, name there).
    Import(String, String),
}

/// What an exported name stands for in its file.
#[derive(Clone, Copy)]
enum Exported<'a> {
    Symbol(SymbolId),
    Function(&'a Function<'a>),
    Class(&'a Class<'a>),
    Expression(&'a Expression<'a>),
}

/// Most links followed from an exported name to its function (`export default x`, `x = y`).
const MAX_EXPORT_LINKS: usize = 8;

impl<'a, 's> Analyzer<'a, 's> {
    fn symbol_of(&self, identifier: &IdentifierReference<'_>) -> Option<SymbolId> {
        identifier
            .reference_id
            .get()
            .and_then(|reference| self.scoping.get_reference(reference).symbol_id())
    }

    /// What an expression evaluates to, as far as the tracked values go.
    fn resolve(&self, expression: &'a Expression<'a>) -> Option<Value> {
        match expression.get_inner_expression() {
            Expression::Identifier(identifier) => match self.symbol_of(identifier) {
                Some(symbol) => self.bindings.get(&symbol).copied(),
                None => global_value(identifier.name.as_str()),
            },
            Expression::StaticMemberExpression(member) => {
                if matches!(
                    member.object.get_inner_expression(),
                    Expression::ThisExpression(_)
                ) {
                    return self
                        .this_properties
                        .get(member.property.name.as_str())
                        .copied();
                }
                member_value(self.resolve(&member.object)?, member.property.name.as_str())
            }
            Expression::ComputedMemberExpression(member) => {
                let name = match member.static_property_name() {
                    Some(name) => name.as_str().to_string(),
                    None => self.fold(&member.expression)?,
                };
                member_value(self.resolve(&member.object)?, &name)
            }
            Expression::CallExpression(call) => self.call_result(call),
            Expression::AwaitExpression(awaited) => self.resolve(&awaited.argument),
            Expression::ImportExpression(import) => self
                .fold(&import.source)
                .and_then(|name| module_value(&name)),
            Expression::ChainExpression(chain) => match &chain.expression {
                ChainElement::CallExpression(call) => self.call_result(call),
                ChainElement::TSNonNullExpression(non_null) => self.resolve(&non_null.expression),
                element => {
                    let member = element.as_member_expression()?;
                    let name = member.static_property_name()?;
                    member_value(self.resolve(member.object())?, name)
                }
            },
            Expression::LogicalExpression(logical) => self
                .resolve(&logical.left)
                .or_else(|| self.resolve(&logical.right)),
            Expression::ConditionalExpression(conditional) => self
                .resolve(&conditional.consequent)
                .or_else(|| self.resolve(&conditional.alternate)),
            Expression::SequenceExpression(sequence) => sequence
                .expressions
                .last()
                .and_then(|last| self.resolve(last)),
            Expression::AssignmentExpression(assignment) => self.resolve(&assignment.right),
            _ => None,
        }
    }

    /// What a call returns: `require(m)`, `promisify(sink)`, `sink.bind(..)`, `createRequire(..)`.
    /// Remembered once the bindings are final ([`Analyzer::resolved_calls`]).
    fn call_result(&self, call: &'a CallExpression<'a>) -> Option<Value> {
        let key = std::ptr::from_ref(call) as usize;
        if let Some(known) = (self.resolved_calls.borrow().as_ref()).and_then(|c| c.get(&key)) {
            return *known;
        }
        let value = self.call_result_of(call);
        if let Some(cache) = self.resolved_calls.borrow_mut().as_mut() {
            cache.insert(key, value);
        }
        value
    }

    fn call_result_of(&self, call: &'a CallExpression<'a>) -> Option<Value> {
        match self.resolve(&call.callee) {
            Some(Value::Require) => {
                let first = call.arguments.first()?.as_expression()?;
                return self.fold(first).and_then(|name| module_value(&name));
            }
            Some(Value::ExecaScript(shell)) => {
                let shell = shell
                    || call
                        .arguments
                        .first()
                        .and_then(Argument::as_expression)
                        .is_some_and(|options| self.has_shell_option(&[Arg::Expr(options)]));
                return Some(Value::ExecaScript(shell));
            }
            Some(Value::CreateRequire) => return Some(Value::Require),
            Some(Value::Promisify) => {
                let first = call.arguments.first()?.as_expression()?;
                return self
                    .resolve(first)
                    .filter(|value| matches!(value, Value::Sink(_)));
            }
            _ => {}
        }
        let member = call.callee.get_inner_expression().as_member_expression()?;
        if member.static_property_name() == Some("bind") {
            return self
                .resolve(member.object())
                .filter(|value| value.is_callable_sink());
        }
        None
    }

    /// Bind a destructuring pattern (or a plain name) to a value. Returns whether anything changed.
    fn bind_pattern(&mut self, pattern: &'a BindingPattern<'a>, value: Value) -> bool {
        match pattern {
            BindingPattern::BindingIdentifier(identifier) => match identifier.symbol_id.get() {
                Some(symbol) => self.bindings.insert(symbol, value) != Some(value),
                None => false,
            },
            BindingPattern::ObjectPattern(object) => {
                let mut changed = false;
                for property in &object.properties {
                    let Some(key) = property.key.static_name() else {
                        continue;
                    };
                    if let Some(member) = member_value(value, &key) {
                        changed |= self.bind_pattern(&property.value, member);
                    }
                }
                changed
            }
            BindingPattern::AssignmentPattern(assignment) => {
                self.bind_pattern(&assignment.left, value)
            }
            BindingPattern::ArrayPattern(_) => false,
        }
    }

    fn bind_symbol(&mut self, symbol: Option<SymbolId>, value: Option<Value>) {
        if let (Some(symbol), Some(value)) = (symbol, value) {
            self.bindings.insert(symbol, value);
        }
    }

    /// Whether `expression` reads a tainted symbol: a reference to one lies inside its span.
    /// A binary search over the references' offsets, not a walk of the expression: walking
    /// each argument of nested calls `f(f(f(..)))` (or each initialiser of nested functions)
    /// was quadratic in the nesting.
    fn mentions_taint(&self, expression: &Expression<'a>) -> bool {
        let span = expression.span();
        self.tainted_references
            .range(span.start..span.end)
            .next()
            .is_some()
    }

    /// Taint a symbol, and index its references for [`Analyzer::mentions_taint`]. Returns
    /// whether it is new.
    fn taint(&mut self, symbol: SymbolId) -> bool {
        if !self.tainted.insert(symbol) {
            return false;
        }
        for reference in self.scoping.get_resolved_reference_ids(symbol) {
            let node = self.scoping.get_reference(*reference).node_id();
            self.tainted_references
                .insert(self.nodes.kind(node).span().start);
        }
        true
    }

    fn arg_tainted(&self, arg: Option<&Arg<'a>>) -> bool {
        matches!(arg, Some(Arg::Expr(expression)) if self.mentions_taint(expression))
    }

    fn any_arg_tainted(&self, args: &[Arg<'a>]) -> bool {
        args.iter().any(|arg| self.arg_tainted(Some(arg)))
    }

    fn taint_all(&mut self, symbols: Vec<SymbolId>) -> bool {
        let mut changed = false;
        for symbol in symbols {
            changed |= self.taint(symbol);
        }
        changed
    }

    /// The declaration initialiser of a symbol that is never reassigned.
    fn constant_initializer(&self, symbol: SymbolId) -> Option<&'a Expression<'a>> {
        if self.scoping.symbol_is_mutated(symbol) || self.redeclared(symbol) {
            return None;
        }
        let declaration = self.scoping.symbol_declaration(symbol);
        match self.nodes.kind(declaration) {
            AstKind::VariableDeclarator(declarator) => match &declarator.id {
                BindingPattern::BindingIdentifier(_) => declarator.init.as_ref(),
                _ => None,
            },
            _ => None,
        }
    }

    /// A name declared more than once (`var x = a; .. var x = b`, two `function f`): its
    /// first declaration is not all it holds.
    fn redeclared(&self, symbol: SymbolId) -> bool {
        !self.scoping.symbol_redeclarations(symbol).is_empty()
    }

    /// Parameters of the local function a callee names (`function f(..)` or `const f = (..) =>`).
    fn local_function_parameters(
        &self,
        callee: &'a Expression<'a>,
    ) -> Option<&'a FormalParameters<'a>> {
        if let Some(member) = callee.get_inner_expression().as_member_expression() {
            return self.method_parameters(member.object(), member.static_property_name()?);
        }
        let Expression::Identifier(identifier) = callee.get_inner_expression() else {
            return None;
        };
        let symbol = self.symbol_of(identifier)?;
        match self.nodes.kind(self.scoping.symbol_declaration(symbol)) {
            AstKind::Function(function) => Some(&function.params),
            AstKind::VariableDeclarator(declarator) => {
                declarator.init.as_ref().and_then(function_parameters)
            }
            _ => None,
        }
    }

    /// The array literals an argument may be: itself, or the initialiser and the assigned
    /// arrays of the name it reads (`commandArr = [shell, "-c", input.command]`).
    fn arrays_of(&self, argument: &'a Expression<'a>) -> Vec<&'a ArrayExpression<'a>> {
        match argument.get_inner_expression() {
            Expression::ArrayExpression(array) => vec![array],
            Expression::Identifier(identifier) => {
                let Some(symbol) = self.symbol_of(identifier) else {
                    return Vec::new();
                };
                let mut arrays = Vec::new();
                if let AstKind::VariableDeclarator(declarator) =
                    self.nodes.kind(self.scoping.symbol_declaration(symbol))
                    && let Some(Expression::ArrayExpression(array)) = declarator
                        .init
                        .as_ref()
                        .map(Expression::get_inner_expression)
                {
                    arrays.push(&**array);
                }
                for (operator, value) in self.writes.get(&symbol).into_iter().flatten() {
                    if *operator == AssignmentOperator::Assign
                        && let Expression::ArrayExpression(array) = value.get_inner_expression()
                    {
                        arrays.push(array);
                    }
                }
                arrays
            }
            _ => Vec::new(),
        }
    }

    /// The values a word of a command line may have: its folded constant, or for
    /// `input.shell || "/bin/sh"`, `a ?? "sh"` and `c ? "bash" : "sh"` the constants among
    /// its alternatives.
    fn word_values(&self, expression: &'a Expression<'a>) -> Vec<String> {
        self.word_values_within(expression, 0)
    }

    fn word_values_within(&self, expression: &'a Expression<'a>, depth: usize) -> Vec<String> {
        if let Some(value) = self.fold(expression) {
            return vec![value];
        }
        if depth > MAX_EXPORT_LINKS {
            return Vec::new();
        }
        let next = |e| self.word_values_within(e, depth + 1);
        match expression.get_inner_expression() {
            Expression::LogicalExpression(logical) => {
                let mut values = next(&logical.left);
                values.extend(next(&logical.right));
                values
            }
            Expression::ConditionalExpression(conditional) => {
                let mut values = next(&conditional.consequent);
                values.extend(next(&conditional.alternate));
                values
            }
            Expression::Identifier(identifier) => self
                .symbol_of(identifier)
                .and_then(|symbol| self.constant_initializer(symbol))
                .map(next)
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The functions a call through a map of functions may reach: `handlers[name](..)`, or
    /// `const handler = handlers[name]; handler(..)`, with `handlers` an object literal.
    fn dispatched(&self, callee: &'a Expression<'a>) -> Vec<&'a Expression<'a>> {
        let mut target = callee.get_inner_expression();
        if let Expression::Identifier(identifier) = target
            && let Some(init) = self
                .symbol_of(identifier)
                .and_then(|symbol| self.constant_initializer(symbol))
        {
            target = init.get_inner_expression();
        }
        let Expression::ComputedMemberExpression(member) = target else {
            return Vec::new();
        };
        let Expression::Identifier(map) = member.object.get_inner_expression() else {
            return Vec::new();
        };
        let Some(Expression::ObjectExpression(object)) = self
            .symbol_of(map)
            .and_then(|symbol| self.constant_initializer(symbol))
            .map(Expression::get_inner_expression)
        else {
            return Vec::new();
        };
        object
            .properties
            .iter()
            .filter_map(|property| match property {
                ObjectPropertyKind::ObjectProperty(property) => Some(&property.value),
                ObjectPropertyKind::SpreadProperty(_) => None,
            })
            .collect()
    }

    /// A handler `t.handler` read from a loop variable over an array of tool objects:
    /// `for (const t of tools)`, `tools.forEach((t) => ..)`, `tools.map((t) => ..)`, with
    /// `tools` an array literal here. The handler of each element.
    fn looped_handlers(&self, handler: &'a Expression<'a>) -> Vec<Target<'a>> {
        let Some(member) = handler.get_inner_expression().as_member_expression() else {
            return Vec::new();
        };
        let (Some(property), Expression::Identifier(variable)) = (
            member.static_property_name(),
            member.object().get_inner_expression(),
        ) else {
            return Vec::new();
        };
        let Some(symbol) = self.symbol_of(variable) else {
            return Vec::new();
        };
        let declaration = self.scoping.symbol_declaration(symbol);
        let array = self
            .nodes
            .ancestor_kinds(declaration)
            .take(6)
            .find_map(|kind| match kind {
                AstKind::ForOfStatement(statement) => Some(&statement.right),
                AstKind::CallExpression(call) => {
                    let member = call.callee.get_inner_expression().as_member_expression()?;
                    matches!(
                        member.static_property_name(),
                        Some("forEach" | "map" | "flatMap")
                    )
                    .then(|| member.object())
                }
                _ => None,
            });
        let Some(array) = array else {
            return Vec::new();
        };
        let elements = match array.get_inner_expression() {
            Expression::ArrayExpression(array) => array_elements(array),
            Expression::Identifier(name) => match self
                .symbol_of(name)
                .and_then(|symbol| self.constant_initializer(symbol))
                .map(Expression::get_inner_expression)
            {
                Some(Expression::ArrayExpression(array)) => array_elements(array),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        elements
            .into_iter()
            .filter_map(|element| {
                self.exported_target(Exported::Expression(element), Some(property), 0)
            })
            .collect()
    }

    /// The innermost class around a span.
    fn enclosing_class(&self, span: Span) -> Option<&'a Class<'a>> {
        self.classes
            .iter()
            .filter(|class| class.span.start <= span.start && span.end <= class.span.end)
            .min_by_key(|class| class.span.end - class.span.start)
            .copied()
    }

    /// What `this.name` may hold at `span`: the field initialisers and `this.name = ..`
    /// assignments of the class around it (not of another class of the file).
    fn fields_at(&self, span: Span, name: &str) -> impl Iterator<Item = &'a Expression<'a>> {
        let class = self.enclosing_class(span).map(|class| class.span);
        self.this_fields
            .iter()
            .filter(move |(field, init)| {
                field.as_str() == name && self.enclosing_class(init.span()).map(|c| c.span) == class
            })
            .map(|(_, init)| *init)
    }

    /// The parameters of method `name` of the local class an object is an instance of:
    /// `this.name(..)` inside a class, or `obj.name(..)` where `obj` is `new LocalClass(..)`.
    fn method_parameters(
        &self,
        object: &'a Expression<'a>,
        name: &str,
    ) -> Option<&'a FormalParameters<'a>> {
        match object.get_inner_expression() {
            Expression::ThisExpression(this) => {
                class_method_parameters(self.enclosing_class(this.span)?, name)
            }
            Expression::Identifier(identifier) => {
                let init = self.constant_initializer(self.symbol_of(identifier)?)?;
                self.constructed_method_parameters(init, name)
            }
            // `this.git.diff(rev)` with a field `git = new Git()`.
            Expression::StaticMemberExpression(member)
                if matches!(
                    member.object.get_inner_expression(),
                    Expression::ThisExpression(_)
                ) =>
            {
                self.fields_at(member.span, &member.property.name)
                    .find_map(|init| self.constructed_method_parameters(init, name))
            }
            _ => None,
        }
    }

    /// The parameters of method `name` when `init` is `new LocalClass(..)`.
    fn constructed_method_parameters(
        &self,
        init: &'a Expression<'a>,
        name: &str,
    ) -> Option<&'a FormalParameters<'a>> {
        let Expression::NewExpression(construction) = init.get_inner_expression() else {
            return None;
        };
        let Expression::Identifier(class_name) = construction.callee.get_inner_expression() else {
            return None;
        };
        let symbol = self.symbol_of(class_name)?;
        match self.nodes.kind(self.scoping.symbol_declaration(symbol)) {
            AstKind::Class(class) => class_method_parameters(class, name),
            _ => None,
        }
    }

    /// What an exported name (`runGit`, `default`, `Git.diff`, `default.run`) stands for, when
    /// another file calls it with tool input: a function's parameters here, or a name this
    /// file imported from a further module (`export default run` of an imported `run`, an
    /// instance of an imported class, a method inherited from one).
    fn exported_parameters(&self, name: &str) -> Option<Target<'a>> {
        let (head, member) = match name.split_once('.') {
            Some((head, member)) => (head, Some(member)),
            None => (name, None),
        };
        if let Some(exported) = self.exports.get(head) {
            return self.exported_target(*exported, member, 0);
        }
        // `module.exports = { runGit: run }` and `require('./git').runGit`.
        if let Some(default) = self.exports.get("default")
            && let Some(target) = self.exported_target(*default, Some(name), 0)
        {
            return Some(target);
        }
        // A file with no export we recognise (an unusual export form): its top-level name.
        // Never when it has exports, where a private helper of the same name would be a
        // false seed.
        if self.exports.is_empty() {
            let symbol = self.scoping.get_root_binding(head.into())?;
            return self.exported_target(Exported::Symbol(symbol), member, 0);
        }
        None
    }

    /// The names a seed from another file can land on here ([`Analysis::defines`], as
    /// [`Analyzer::exported_parameters`] finds them): the named exports, the top-level names
    /// of a file with no export we recognise, and the keys of a CommonJS default export;
    /// `None` (any name) when those keys are not all literal.
    fn takeable_names(&self) -> Option<Vec<String>> {
        let mut names: Vec<String> = if self.exports.is_empty() {
            let root = self.scoping.get_bindings(self.scoping.root_scope_id());
            root.keys().map(ToString::to_string).collect()
        } else {
            (self.exports.keys())
                .filter(|name| *name != "default")
                .cloned()
                .collect()
        };
        if self.commonjs_default
            && self.default_namespace().is_none()
            && let Some(default) = self.exports.get("default")
        {
            self.members(*default, &mut names, 0)?;
        }
        names.sort_unstable();
        names.dedup();
        Some(names)
    }

    /// `const lib = require('./lib'); module.exports = lib`: the module whose names the
    /// default export hands on, all of them (an `export *` of it, as `module.exports =
    /// require('./lib')` is).
    fn default_namespace(&self) -> Option<&str> {
        let Some(Exported::Expression(expression)) = self.exports.get("default").copied() else {
            return None;
        };
        let Expression::Identifier(identifier) = expression.get_inner_expression() else {
            return None;
        };
        match self.imports.get(&self.symbol_of(identifier)?)? {
            (module, imported) if imported == "*" => Some(module),
            _ => None,
        }
    }

    /// Push the names `exported_target` can find as a member of `exported` (`module.exports
    /// = { run }`, a class's methods); `None` when any name may be one (a member of an
    /// imported value, of an inherited class).
    fn members(&self, exported: Exported<'a>, out: &mut Vec<String>, depth: usize) -> Option<()> {
        if depth > MAX_EXPORT_LINKS {
            return Some(());
        }
        let next = |exported, out: &mut Vec<String>| self.members(exported, out, depth + 1);
        match exported {
            Exported::Function(_) => Some(()),
            Exported::Class(class) => {
                for element in &class.body.body {
                    let key = match element {
                        ClassElement::MethodDefinition(method) => method.key.static_name(),
                        ClassElement::PropertyDefinition(property) => property.key.static_name(),
                        _ => None,
                    };
                    out.extend(key.map(|key| key.to_string()));
                }
                match &class.heritage {
                    Some(heritage) => next(Exported::Expression(&heritage.expression), out),
                    None => Some(()),
                }
            }
            Exported::Symbol(symbol) => {
                if self.imports.contains_key(&symbol) {
                    return None;
                }
                match self.nodes.kind(self.scoping.symbol_declaration(symbol)) {
                    AstKind::Function(function) => next(Exported::Function(function), out),
                    AstKind::Class(class) => next(Exported::Class(class), out),
                    AstKind::VariableDeclarator(declarator) => match &declarator.init {
                        Some(init) => next(Exported::Expression(init), out),
                        None => Some(()),
                    },
                    _ => Some(()),
                }
            }
            Exported::Expression(expression) => match expression.get_inner_expression() {
                Expression::Identifier(identifier) => match self.symbol_of(identifier) {
                    Some(symbol) => next(Exported::Symbol(symbol), out),
                    None => Some(()),
                },
                Expression::ClassExpression(class) => next(Exported::Class(class), out),
                Expression::ObjectExpression(object) => {
                    for property in &object.properties {
                        if let ObjectPropertyKind::ObjectProperty(property) = property {
                            out.extend(property.key.static_name().map(|key| key.to_string()));
                        }
                    }
                    Some(())
                }
                Expression::NewExpression(construction) => {
                    next(Exported::Expression(&construction.callee), out)
                }
                _ => Some(()),
            },
        }
    }

    fn exported_target(
        &self,
        exported: Exported<'a>,
        member: Option<&str>,
        depth: usize,
    ) -> Option<Target<'a>> {
        if depth > MAX_EXPORT_LINKS {
            return None;
        }
        let next = |exported, member| self.exported_target(exported, member, depth + 1);
        match exported {
            Exported::Function(function) => match member {
                None => Some(Target::Parameters(&function.params)),
                Some(_) => None,
            },
            Exported::Class(class) => {
                let method = member?;
                if let Some(parameters) = class_method_parameters(class, method) {
                    return Some(Target::Parameters(parameters));
                }
                // Inherited: `class GitClient extends BaseClient`.
                next(
                    Exported::Expression(&class.heritage.as_ref()?.expression),
                    Some(method),
                )
            }
            Exported::Symbol(symbol) => {
                if let Some((module, imported)) = self.imports.get(&symbol) {
                    let name = match (imported.as_str(), member) {
                        ("*", Some(member)) => member.to_string(),
                        ("*", None) => "default".to_string(),
                        (imported, Some(member)) => format!("{imported}.{member}"),
                        (imported, None) => imported.to_string(),
                    };
                    return Some(Target::Import(module.clone(), name));
                }
                match self.nodes.kind(self.scoping.symbol_declaration(symbol)) {
                    AstKind::Function(function) => next(Exported::Function(function), member),
                    AstKind::Class(class) => next(Exported::Class(class), member),
                    AstKind::VariableDeclarator(declarator) => {
                        next(Exported::Expression(declarator.init.as_ref()?), member)
                    }
                    _ => None,
                }
            }
            Exported::Expression(expression) => match expression.get_inner_expression() {
                Expression::Identifier(identifier) => {
                    next(Exported::Symbol(self.symbol_of(identifier)?), member)
                }
                Expression::ClassExpression(class) => next(Exported::Class(class), member),
                Expression::ObjectExpression(object) => {
                    let (key, rest) = match member?.split_once('.') {
                        Some((key, rest)) => (key, Some(rest)),
                        None => (member?, None),
                    };
                    object
                        .properties
                        .iter()
                        .find_map(|property| match property {
                            ObjectPropertyKind::ObjectProperty(property)
                                if property.key.static_name().is_some_and(|k| k == key) =>
                            {
                                next(Exported::Expression(&property.value), rest)
                            }
                            _ => None,
                        })
                }
                // `export default new Git()`: its methods.
                Expression::NewExpression(construction) if member.is_some() => {
                    next(Exported::Expression(&construction.callee), member)
                }
                other => match member {
                    None => function_parameters(other).map(Target::Parameters),
                    Some(_) => None,
                },
            },
        }
    }

    /// Taint the parameters at `positions` (a rest parameter counts from its position on).
    fn taint_parameters(&mut self, parameters: &'a FormalParameters<'a>, positions: Positions) {
        let mut symbols = Vec::new();
        for (i, item) in parameters.items.iter().enumerate() {
            if positions_include(positions, i) {
                pattern_symbols(&item.pattern, &mut symbols);
            }
        }
        if let Some(rest) = &parameters.rest
            && positions
                .checked_shr(u32::try_from(parameters.items.len()).unwrap_or(u32::MAX))
                .unwrap_or(0)
                != 0
        {
            pattern_symbols(&rest.rest.argument, &mut symbols);
        }
        self.taint_all(symbols);
    }

    /// The module and exported name a callee was imported as: `runGit` (named import),
    /// `git.runGit` (namespace or `require`), `client.diff` with `client = new Git()` of an
    /// imported `Git` (`Git.diff`), `this.git.diff` with a field `git = new Git()`.
    fn imported_callee(&self, callee: &'a Expression<'a>) -> Option<(String, String)> {
        let inner = callee.get_inner_expression();
        if let Expression::Identifier(identifier) = inner {
            return self.imported_as(identifier);
        }
        // `require('./d').runD(x)`.
        if let Some((module, name)) = required_member(inner) {
            return Some((module.to_string(), name.to_string()));
        }
        let member = inner.as_member_expression()?;
        let method = member.static_property_name()?;
        let object = member.object().get_inner_expression();
        let (module, class) = match object {
            Expression::Identifier(identifier) => {
                let symbol = self.symbol_of(identifier)?;
                if let Some((module, name)) = self.imports.get(&symbol) {
                    let name = if name == "*" {
                        method.to_string()
                    } else {
                        format!("{name}.{method}")
                    };
                    return Some((module.clone(), name));
                }
                match self.constant_initializer(symbol) {
                    Some(init) => self.imported_class_of(init)?,
                    // `svc: FigmaService`, a parameter typed with an imported class.
                    None => self.imported_as(self.annotated_class(symbol)?)?,
                }
            }
            Expression::StaticMemberExpression(field)
                if matches!(
                    field.object.get_inner_expression(),
                    Expression::ThisExpression(_)
                ) =>
            {
                let name = &field.property.name;
                match self
                    .fields_at(field.span, name)
                    .find_map(|init| self.imported_class_of(init))
                {
                    Some(class) => class,
                    // `private client: ShellClient`, `constructor(private client: ShellClient)`.
                    None => self.imported_as(self.typed_field_at(field.span, name)?)?,
                }
            }
            other => self.imported_class_of(other)?,
        };
        Some((module, format!("{class}.{method}")))
    }

    /// An imported binding by a reference to it: its module and exported name (`default` for
    /// a namespace or a whole `require`, called or constructed itself).
    fn imported_as(&self, reference: &IdentifierReference<'_>) -> Option<(String, String)> {
        let (module, name) = self.imports.get(&self.symbol_of(reference)?)?;
        let name = if name == "*" {
            "default"
        } else {
            name.as_str()
        };
        Some((module.clone(), name.to_string()))
    }

    /// The class a parameter's type annotation names (`svc: FigmaService`).
    fn annotated_class(&self, symbol: SymbolId) -> Option<&'a IdentifierReference<'a>> {
        let declaration = self.scoping.symbol_declaration(symbol);
        let mut kinds = std::iter::once(self.nodes.kind(declaration))
            .chain(self.nodes.ancestor_kinds(declaration))
            .take(3);
        kinds.find_map(|kind| match kind {
            AstKind::FormalParameter(parameter) => {
                named_type(parameter.type_annotation.as_deref()?)
            }
            _ => None,
        })
    }

    /// The class a typed field of the class around `span` names: `private client:
    /// ShellClient;` or a constructor parameter property.
    fn typed_field_at(&self, span: Span, name: &str) -> Option<&'a IdentifierReference<'a>> {
        let class = self.enclosing_class(span)?;
        class.body.body.iter().find_map(|element| match element {
            ClassElement::PropertyDefinition(property)
                if property.key.static_name().is_some_and(|key| key == name) =>
            {
                named_type(property.type_annotation.as_deref()?)
            }
            ClassElement::MethodDefinition(method)
                if method
                    .key
                    .static_name()
                    .is_some_and(|key| key == "constructor") =>
            {
                method.value.params.items.iter().find_map(|parameter| {
                    let BindingPattern::BindingIdentifier(id) = &parameter.pattern else {
                        return None;
                    };
                    let property = parameter.accessibility.is_some() || parameter.readonly;
                    (property && id.name == name)
                        .then(|| named_type(parameter.type_annotation.as_deref()?))
                        .flatten()
                })
            }
            _ => None,
        })
    }

    /// `new Git(..)` of an imported class: its module and exported name.
    fn imported_class_of(&self, init: &'a Expression<'a>) -> Option<(String, String)> {
        let Expression::NewExpression(construction) = init.get_inner_expression() else {
            return None;
        };
        let Expression::Identifier(class) = construction.callee.get_inner_expression() else {
            return None;
        };
        self.imported_as(class)
    }

    /// The string a constant expression folds to: literals, templates and `+` of constants,
    /// and never-reassigned names initialised with one (`"child_" + "process"`). Bounded in
    /// steps and length: `const a1 = a0 + a0; const a2 = a1 + a1; ..` would double each time.
    fn fold(&self, expression: &'a Expression<'a>) -> Option<String> {
        let mut budget = 512;
        self.fold_within(expression, 0, &mut budget)
            .filter(|text| text.len() <= MAX_FOLDED_LENGTH)
    }

    fn fold_within(
        &self,
        expression: &'a Expression<'a>,
        depth: usize,
        budget: &mut usize,
    ) -> Option<String> {
        if depth > 32 || *budget == 0 {
            return None;
        }
        *budget -= 1;
        match expression.get_inner_expression() {
            Expression::StringLiteral(literal) => Some(literal.value.as_str().to_string()),
            Expression::TemplateLiteral(template) => {
                let mut out = String::new();
                for (index, quasi) in template.quasis.iter().enumerate() {
                    out.push_str(quasi.value.cooked?.as_str());
                    if let Some(part) = template.expressions.get(index) {
                        out.push_str(&self.fold_within(part, depth + 1, budget)?);
                    }
                    if out.len() > MAX_FOLDED_LENGTH {
                        return None;
                    }
                }
                Some(out)
            }
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Addition => {
                let mut left = self.fold_within(&binary.left, depth + 1, budget)?;
                left.push_str(&self.fold_within(&binary.right, depth + 1, budget)?);
                (left.len() <= MAX_FOLDED_LENGTH).then_some(left)
            }
            Expression::Identifier(identifier) => {
                let init = self.constant_initializer(self.symbol_of(identifier)?)?;
                self.fold_within(init, depth + 1, budget)
            }
            _ => None,
        }
    }

    /// Whether an expression is built only from constants, so it is not a finding: string and
    /// number literals, templates whose every `${}` is constant, `+` of constants, both arms
    /// of `c ? a : b` (and of `a || b`) constant, and names whose every assignment in scope is
    /// a constant or a `+=` of one (`let cmd = "pod repo update"; if (v) cmd += " -v"`).
    /// Numbers count too, whatever they are computed from (`process.ppid`, `a - b`, `-x`,
    /// `Number(x)`, `parseInt(x)`, `Math.*(..)`, `Date.now()`): none can carry shell syntax.
    /// (`exec(CONST_COMMAND)` is not dynamic; the peer flagged it.)
    fn is_constant(&self, expression: &'a Expression<'a>) -> bool {
        self.is_constant_within(expression, 0)
    }

    fn is_constant_within(&self, expression: &'a Expression<'a>, depth: usize) -> bool {
        if depth > 32 {
            return false;
        }
        let constant = |e| self.is_constant_within(e, depth + 1);
        match expression.get_inner_expression() {
            Expression::StringLiteral(_)
            | Expression::NumericLiteral(_)
            | Expression::BooleanLiteral(_) => true,
            Expression::TemplateLiteral(template) => template.expressions.iter().all(constant),
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Addition => {
                constant(&binary.left) && constant(&binary.right)
            }
            Expression::ConditionalExpression(conditional) => {
                constant(&conditional.consequent) && constant(&conditional.alternate)
            }
            Expression::LogicalExpression(logical)
                if matches!(
                    logical.operator,
                    LogicalOperator::Or | LogicalOperator::Coalesce
                ) =>
            {
                constant(&logical.left) && constant(&logical.right)
            }
            Expression::Identifier(identifier) => self
                .symbol_of(identifier)
                .is_some_and(|symbol| self.symbol_is_constant(symbol, depth + 1)),
            // The running node binary, and the process's own ids.
            Expression::StaticMemberExpression(member) => {
                matches!(member.property.name.as_str(), "execPath" | "pid" | "ppid")
                    && self.is_global(&member.object, "process")
            }
            // Numbers: whatever goes in, what comes out is digits, a sign, a point or `NaN`,
            // never shell syntax or an option of the caller's choosing.
            Expression::UnaryExpression(unary) => matches!(
                unary.operator,
                UnaryOperator::UnaryNegation | UnaryOperator::UnaryPlus | UnaryOperator::BitwiseNot
            ),
            Expression::BinaryExpression(binary) => {
                binary.operator != BinaryOperator::Addition
                    && binary.operator.is_numeric_or_string_binary_operator()
            }
            Expression::CallExpression(call) => match call.callee.get_inner_expression() {
                Expression::Identifier(function) => {
                    matches!(function.name.as_str(), "Number" | "parseInt" | "parseFloat")
                        && self.symbol_of(function).is_none()
                }
                Expression::StaticMemberExpression(member) => {
                    self.is_global(&member.object, "Math")
                        || (member.property.name == "now" && self.is_global(&member.object, "Date"))
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether `expression` is the global `name` (not a local of that name).
    fn is_global(&self, expression: &Expression<'_>, name: &str) -> bool {
        matches!(expression.get_inner_expression(),
            Expression::Identifier(global) if global.name == name && self.symbol_of(global).is_none())
    }

    /// A `const`/`let`/`var` whose initialiser and every assignment is constant (`=` or `+=`).
    fn symbol_is_constant(&self, symbol: SymbolId, depth: usize) -> bool {
        if let Some(known) = self.constants.borrow().get(&symbol) {
            return *known;
        }
        if !self.deciding.borrow_mut().insert(symbol) {
            return false;
        }
        let answer = self.decide_symbol_constant(symbol, depth);
        self.deciding.borrow_mut().remove(&symbol);
        self.constants.borrow_mut().insert(symbol, answer);
        answer
    }

    fn decide_symbol_constant(&self, symbol: SymbolId, depth: usize) -> bool {
        if self.redeclared(symbol) {
            return false;
        }
        let declaration = self.scoping.symbol_declaration(symbol);
        let AstKind::VariableDeclarator(declarator) = self.nodes.kind(declaration) else {
            return self.parameter_is_constant(symbol, depth);
        };
        if !matches!(declarator.id, BindingPattern::BindingIdentifier(_)) {
            return false;
        }
        let Some(init) = &declarator.init else {
            // `for (const cmd of ["python3", "python"])`: each value is a constant.
            let declaration = self.scoping.symbol_declaration(symbol);
            return !self.scoping.symbol_is_mutated(symbol)
                && self
                    .nodes
                    .ancestor_kinds(declaration)
                    .nth(1)
                    .is_some_and(|kind| {
                        matches!(kind, AstKind::ForOfStatement(statement)
                        if self.constant_array(&statement.right, depth + 1))
                    });
        };
        if !self.is_constant_within(init, depth) {
            return false;
        }
        if !self.scoping.symbol_is_mutated(symbol) {
            return true;
        }
        self.seen_writes(symbol).is_some_and(|writes| {
            writes.iter().all(|(operator, value)| {
                matches!(
                    operator,
                    AssignmentOperator::Assign | AssignmentOperator::Addition
                ) && self.is_constant_within(value, depth)
            })
        })
    }

    /// Every assignment to `symbol` (operator and value), when each of its writes is a plain
    /// assignment the collector saw (not a destructuring, a `for` target or an update).
    fn seen_writes(&self, symbol: SymbolId) -> Option<&[(AssignmentOperator, &'a Expression<'a>)]> {
        let written = self
            .scoping
            .get_resolved_reference_ids(symbol)
            .iter()
            .filter(|reference| self.scoping.get_reference(**reference).is_write())
            .count();
        let writes = self.writes.get(&symbol).map_or(&[][..], Vec::as_slice);
        (written == writes.len()).then_some(writes)
    }

    /// An array of constants: a literal, a conditional of such arrays, or a never-reassigned
    /// name bound to one (`const pythonCommands = isWin ? ['python', 'py'] : ['python3']`).
    fn constant_array(&self, expression: &'a Expression<'a>, depth: usize) -> bool {
        if depth > 32 {
            return false;
        }
        match expression.get_inner_expression() {
            Expression::ArrayExpression(array) => {
                let elements = array_elements(array);
                elements.len() == array.elements.len()
                    && elements
                        .into_iter()
                        .all(|e| self.is_constant_within(e, depth + 1))
            }
            Expression::ConditionalExpression(conditional) => {
                self.constant_array(&conditional.consequent, depth + 1)
                    && self.constant_array(&conditional.alternate, depth + 1)
            }
            Expression::Identifier(identifier) => self
                .symbol_of(identifier)
                .and_then(|symbol| self.constant_initializer(symbol))
                .is_some_and(|init| self.constant_array(init, depth + 1)),
            _ => false,
        }
    }

    /// A parameter of a local function that is only ever called directly, never exported,
    /// never reassigned, and given a constant at that position by every call: `function
    /// execAsync(command) { exec(command) }` called only as `execAsync('killall "Claude"')`.
    fn parameter_is_constant(&self, symbol: SymbolId, depth: usize) -> bool {
        self.parameter_always(symbol, &|argument| {
            self.is_constant_within(argument, depth + 1)
        })
    }

    /// A parameter of a local function that is only ever called directly, never exported,
    /// never reassigned, and given a value that passes `given` by every call.
    fn parameter_always(
        &self,
        symbol: SymbolId,
        given: &dyn Fn(&'a Expression<'a>) -> bool,
    ) -> bool {
        if self.scoping.symbol_is_mutated(symbol) {
            return false;
        }
        let declaration = self.scoping.symbol_declaration(symbol);
        let mut ancestors = std::iter::once(self.nodes.kind(declaration))
            .chain(self.nodes.ancestor_kinds(declaration))
            .take(6);
        let Some(AstKind::FormalParameter(parameter)) = ancestors
            .by_ref()
            .find(|kind| matches!(kind, AstKind::FormalParameter(_)))
        else {
            return false;
        };
        if !matches!(parameter.pattern, BindingPattern::BindingIdentifier(_)) {
            return false;
        }
        let Some(AstKind::FormalParameters(parameters)) = ancestors.next() else {
            return false;
        };
        let Some(position) = parameters
            .items
            .iter()
            .position(|item| item.span == parameter.span)
        else {
            return false;
        };
        let function = match ancestors.next() {
            Some(AstKind::Function(function)) => {
                function.id.as_ref().and_then(|id| id.symbol_id.get())
            }
            Some(AstKind::ArrowFunctionExpression(_)) => match ancestors.next() {
                Some(AstKind::VariableDeclarator(declarator)) => match &declarator.id {
                    BindingPattern::BindingIdentifier(id) => id.symbol_id.get(),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let Some(function) = function else {
            return false;
        };
        if self.scoping.symbol_is_mutated(function)
            || self
                .exports
                .values()
                .any(|exported| matches!(exported, Exported::Symbol(s) if *s == function))
        {
            return false;
        }
        let references = self.scoping.get_resolved_reference_ids(function);
        !references.is_empty()
            && references.iter().all(|reference| {
                let node = self.scoping.get_reference(*reference).node_id();
                let span = self.nodes.kind(node).span();
                match self.nodes.parent_kind(node) {
                    AstKind::CallExpression(call) if call.callee.span() == span => call
                        .arguments
                        .get(position)
                        .and_then(Argument::as_expression)
                        .is_some_and(given),
                    _ => false,
                }
            })
    }

    /// A shell command whose every part that is not a constant is URL-encoded text inside
    /// double quotes (`` `open "${url}"` `` with `url` built by `URLSearchParams` or
    /// `encodeURIComponent`): such text holds only letters, digits and `%-_.!~*'()+=&`,
    /// none of which ends a double-quoted word or expands inside one (`$`, `` ` ``, `\`,
    /// `"`), in sh or in cmd.exe. See [`Analyzer::url_encoded`].
    fn shell_inert(&self, arg: Option<&Arg<'a>>) -> bool {
        matches!(arg, Some(Arg::Expr(command)) if self.inert_command(command, 0))
    }

    /// Take one step of [`Analyzer::inert_budget`]; `false` once it is spent.
    fn inert_step(&self) -> bool {
        let left = self.inert_budget.get();
        self.inert_budget.set(left.saturating_sub(1));
        left > 0
    }

    fn inert_command(&self, command: &'a Expression<'a>, depth: usize) -> bool {
        if depth > 16 || !self.inert_step() {
            return false;
        }
        match command.get_inner_expression() {
            Expression::TemplateLiteral(template) => {
                let mut quoted = false;
                for (i, quasi) in template.quasis.iter().enumerate() {
                    let raw = quasi.value.raw.as_str();
                    // Single quotes and escapes would need a real shell lexer: not judged.
                    if raw.contains(['\\', '\'', '`', '$']) {
                        return false;
                    }
                    quoted ^= raw.matches('"').count() % 2 == 1;
                    let Some(part) = template.expressions.get(i) else {
                        continue;
                    };
                    // A part that starts a quoted word is a whole argument of its own,
                    // which encoded text may start with `-` (`"${encodeURIComponent(r)}"`
                    // to `git fetch`): only one whose first text is fixed is inert there.
                    let word_start = raw.ends_with('"');
                    let inert = match self.fold(part) {
                        Some(text) => !text.contains(['\\', '\'', '`', '$', '"']),
                        None => {
                            quoted
                                && self.url_encoded(part, depth + 1)
                                && (!word_start || self.starts_fixed(part, depth + 1))
                        }
                    };
                    if !inert {
                        return false;
                    }
                }
                !quoted
            }
            Expression::Identifier(identifier) => {
                let Some(symbol) = self.symbol_of(identifier) else {
                    return false;
                };
                if self.redeclared(symbol) {
                    return false;
                }
                let AstKind::VariableDeclarator(declarator) =
                    self.nodes.kind(self.scoping.symbol_declaration(symbol))
                else {
                    return false;
                };
                if !matches!(declarator.id, BindingPattern::BindingIdentifier(_)) {
                    return false;
                }
                // Every value the name is given: its initialiser and each `=` to it.
                let Some(writes) = self.seen_writes(symbol) else {
                    return false;
                };
                (declarator.init.is_some() || !writes.is_empty())
                    && declarator.init.as_ref().is_none_or(|init| {
                        self.is_constant_within(init, depth + 1)
                            || self.inert_command(init, depth + 1)
                    })
                    && writes.iter().all(|(operator, value)| {
                        *operator == AssignmentOperator::Assign
                            && (self.is_constant_within(value, depth + 1)
                                || self.inert_command(value, depth + 1))
                    })
            }
            _ => false,
        }
    }

    /// Text made only of URL-encoding's output and constants without shell syntax:
    /// `encodeURIComponent(x)`, `p.toString()` or `String(p)` of a `new URLSearchParams(..)`,
    /// templates and `+` of such parts, a name bound once to one, a parameter of a local
    /// function every call gives one, and a call of a local function every `return` of
    /// which gives one. (`encodeURI` is not one: it leaves `$`.)
    fn url_encoded(&self, expression: &'a Expression<'a>, depth: usize) -> bool {
        if depth > 16 || !self.inert_step() {
            return false;
        }
        let part = |e| self.url_encoded(e, depth + 1);
        match expression.get_inner_expression() {
            Expression::StringLiteral(literal) => !literal
                .value
                .contains(['\\', '\'', '`', '$', '"', ' ', ';', '|', '<', '>']),
            Expression::TemplateLiteral(template) => {
                template.quasis.iter().all(|quasi| {
                    !quasi
                        .value
                        .raw
                        .contains(['\\', '\'', '`', '$', '"', ' ', ';', '|', '<', '>'])
                }) && template.expressions.iter().all(part)
            }
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Addition => {
                part(&binary.left) && part(&binary.right)
            }
            Expression::CallExpression(call) => {
                let callee = call.callee.get_inner_expression();
                if self.is_global(callee, "encodeURIComponent") {
                    return true;
                }
                if self.is_global(callee, "String") {
                    return call
                        .arguments
                        .first()
                        .and_then(Argument::as_expression)
                        .is_some_and(|argument| self.url_search_params(argument));
                }
                if let Some(member) = callee.as_member_expression()
                    && member.static_property_name() == Some("toString")
                    && call.arguments.is_empty()
                {
                    return self.url_search_params(member.object());
                }
                self.every_source(expression, &part).unwrap_or(false)
            }
            _ => self.every_source(expression, &part).unwrap_or(false),
        }
    }

    /// For a name, an `await`, or a call of a local function: whether every value it may
    /// hold passes `test` (the initialiser of a name bound once, what every call gives a
    /// parameter, every `return` of the function). `None` for any other expression.
    fn every_source(
        &self,
        expression: &'a Expression<'a>,
        test: &dyn Fn(&'a Expression<'a>) -> bool,
    ) -> Option<bool> {
        match expression.get_inner_expression() {
            Expression::AwaitExpression(awaited) => Some(test(&awaited.argument)),
            Expression::Identifier(identifier) => {
                let Some(symbol) = self.symbol_of(identifier) else {
                    return Some(false);
                };
                Some(match self.constant_initializer(symbol) {
                    Some(init) => test(init),
                    None => self.parameter_always(symbol, test),
                })
            }
            Expression::CallExpression(call) => Some(
                self.local_function_start(&call.callee)
                    .is_some_and(|start| {
                        let returns = self.function_returns(start);
                        !returns.is_empty() && returns.iter().all(|value| value.is_some_and(test))
                    }),
            ),
            _ => None,
        }
    }

    /// Does every value of `expression` start with fixed text that is not `-`
    /// (`` `${base}?${q}` `` with `base = "https://x"`)? Through the same names, parameters
    /// and local functions as [`Analyzer::url_encoded`].
    fn starts_fixed(&self, expression: &'a Expression<'a>, depth: usize) -> bool {
        if depth > 16 || !self.inert_step() {
            return false;
        }
        let fixed = |text: &str| !text.is_empty() && !text.starts_with('-');
        if let Some(text) = self.fold(expression) {
            return fixed(&text);
        }
        let next = |e| self.starts_fixed(e, depth + 1);
        match expression.get_inner_expression() {
            Expression::TemplateLiteral(template) => match template.quasis.first() {
                Some(first) if !first.value.raw.is_empty() => fixed(first.value.raw.as_str()),
                _ => template.expressions.first().is_some_and(next),
            },
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Addition => {
                next(&binary.left)
            }
            _ => self.every_source(expression, &next).unwrap_or(false),
        }
    }

    /// The program of `const [cmd, ...args] = command.split(" ")` when every value `command`
    /// can hold starts with the same fixed word and a space (`command` a parameter every
    /// call fills with `` `kubectl port-forward ${..}` ``).
    fn program_from_split(&self, arg: Option<&Arg<'a>>) -> Option<String> {
        let Some(Arg::Expr(expression)) = arg else {
            return None;
        };
        let Expression::Identifier(identifier) = expression.get_inner_expression() else {
            return None;
        };
        let symbol = self.symbol_of(identifier)?;
        if self.scoping.symbol_is_mutated(symbol) || self.redeclared(symbol) {
            return None;
        }
        let AstKind::VariableDeclarator(declarator) =
            self.nodes.kind(self.scoping.symbol_declaration(symbol))
        else {
            return None;
        };
        let BindingPattern::ArrayPattern(pattern) = &declarator.id else {
            return None;
        };
        let Some(Some(BindingPattern::BindingIdentifier(first))) = pattern.elements.first() else {
            return None;
        };
        if first.symbol_id.get() != Some(symbol) {
            return None;
        }
        let Expression::CallExpression(call) = declarator.init.as_ref()?.get_inner_expression()
        else {
            return None;
        };
        let member = call.callee.get_inner_expression().as_member_expression()?;
        let separator = call.arguments.first()?.as_expression()?;
        if member.static_property_name() != Some("split")
            || call.arguments.len() != 1
            || self.fold(separator).as_deref() != Some(" ")
        {
            return None;
        }
        self.first_word(member.object(), 0)
    }

    /// The fixed first word of every value of `expression`, when it is followed by a space
    /// in the same fixed text (`` `kubectl port-forward ${x}` `` gives `kubectl`).
    fn first_word(&self, expression: &'a Expression<'a>, depth: usize) -> Option<String> {
        if depth > 16 || !self.inert_step() {
            return None;
        }
        let word = |text: &str| {
            let (word, _) = text.split_once(' ')?;
            (!word.is_empty()).then(|| word.to_string())
        };
        if let Some(text) = self.fold(expression) {
            return word(&text);
        }
        match expression.get_inner_expression() {
            Expression::TemplateLiteral(template) => {
                word(template.quasis.first()?.value.raw.as_str())
            }
            Expression::Identifier(identifier) => {
                let symbol = self.symbol_of(identifier)?;
                if let Some(init) = self.constant_initializer(symbol) {
                    return self.first_word(init, depth + 1);
                }
                // `let command = `kubectl port-forward`; command += ..`: appending keeps the
                // first word.
                if let AstKind::VariableDeclarator(declarator) =
                    self.nodes.kind(self.scoping.symbol_declaration(symbol))
                    && matches!(declarator.id, BindingPattern::BindingIdentifier(_))
                    && !self.redeclared(symbol)
                    && let Some(init) = &declarator.init
                    && self.seen_writes(symbol).is_some_and(|writes| {
                        writes
                            .iter()
                            .all(|(operator, _)| *operator == AssignmentOperator::Addition)
                    })
                {
                    return self.first_word(init, depth + 1);
                }
                // A parameter: the same word from every call.
                let found: RefCell<Option<String>> = RefCell::new(None);
                let same = self.parameter_always(symbol, &|argument| {
                    let Some(word) = self.first_word(argument, depth + 1) else {
                        return false;
                    };
                    let mut found = found.borrow_mut();
                    match found.as_deref() {
                        Some(seen) => seen == word,
                        None => {
                            *found = Some(word);
                            true
                        }
                    }
                });
                if same { found.into_inner() } else { None }
            }
            _ => None,
        }
    }

    /// A `new URLSearchParams(..)`, itself or a name bound once to one that is used only
    /// through its own methods (`p.set(..)`, `p.toString()`) or `String(p)`: handed to
    /// anything else, or given a property (`p.toString = () => q`), it may say anything.
    fn url_search_params(&self, expression: &'a Expression<'a>) -> bool {
        let expression = match expression.get_inner_expression() {
            Expression::Identifier(identifier) => {
                let Some(symbol) = self.symbol_of(identifier) else {
                    return false;
                };
                if !self.used_only_as_search_params(symbol) {
                    return false;
                }
                match self.constant_initializer(symbol) {
                    Some(init) => init.get_inner_expression(),
                    None => return false,
                }
            }
            other => other,
        };
        matches!(expression, Expression::NewExpression(new)
            if self.is_global(&new.callee, "URLSearchParams"))
    }

    /// Is every reference to `symbol` a call of one of `URLSearchParams`'s own methods on
    /// it, or `String(symbol)`?
    fn used_only_as_search_params(&self, symbol: SymbolId) -> bool {
        self.scoping
            .get_resolved_reference_ids(symbol)
            .iter()
            .all(|reference| {
                let node = self.scoping.get_reference(*reference).node_id();
                let span = self.nodes.kind(node).span();
                match self.nodes.parent_kind(node) {
                    AstKind::StaticMemberExpression(member)
                        if member.object.span() == span
                            && matches!(
                                member.property.name.as_str(),
                                "set"
                                    | "append"
                                    | "delete"
                                    | "sort"
                                    | "toString"
                                    | "get"
                                    | "getAll"
                                    | "has"
                            ) =>
                    {
                        let member_node = self.nodes.parent_id(node);
                        matches!(self.nodes.parent_kind(member_node),
                            AstKind::CallExpression(call) if call.callee.span() == member.span)
                    }
                    AstKind::CallExpression(call) => {
                        self.is_global(&call.callee, "String")
                            && call.arguments.len() == 1
                            && call.arguments.first().is_some_and(|a| a.span() == span)
                    }
                    _ => false,
                }
            })
    }

    /// The start offset of the local function a callee names (`function f`, `const f = () =>`
    /// or `= function`), which no assignment replaces.
    fn local_function_start(&self, callee: &Expression<'_>) -> Option<u32> {
        let Expression::Identifier(identifier) = callee.get_inner_expression() else {
            return None;
        };
        let symbol = self.symbol_of(identifier)?;
        if self.scoping.symbol_is_mutated(symbol) || self.redeclared(symbol) {
            return None;
        }
        match self.nodes.kind(self.scoping.symbol_declaration(symbol)) {
            AstKind::Function(function) => Some(function.span.start),
            AstKind::VariableDeclarator(declarator) => match declarator.init.as_ref()? {
                Expression::ArrowFunctionExpression(arrow) => Some(arrow.span.start),
                Expression::FunctionExpression(function) => Some(function.span.start),
                _ => None,
            },
            _ => None,
        }
    }

    /// What the function starting at `start` returns: each `return`'s value (`None` for a
    /// bare one), or the body of an expression-bodied arrow. A function with no `return`
    /// gives an empty list.
    fn function_returns(&self, start: u32) -> Vec<Option<&'a Expression<'a>>> {
        let mut cache = self.returns.borrow_mut();
        let index = cache.get_or_insert_with(|| {
            let mut index: Returns<'a> = HashMap::new();
            for node in self.nodes.iter() {
                match node.kind() {
                    AstKind::ReturnStatement(statement) => {
                        let owner =
                            self.nodes
                                .ancestor_kinds(node.id())
                                .find_map(|kind| match kind {
                                    AstKind::Function(function) => Some(function.span.start),
                                    AstKind::ArrowFunctionExpression(arrow) => {
                                        Some(arrow.span.start)
                                    }
                                    _ => None,
                                });
                        if let Some(owner) = owner {
                            index
                                .entry(owner)
                                .or_default()
                                .push(statement.argument.as_ref());
                        }
                    }
                    AstKind::ArrowFunctionExpression(arrow) => {
                        if let Some(body) = arrow.body.as_expression() {
                            index.entry(arrow.span.start).or_default().push(Some(body));
                        }
                    }
                    _ => {}
                }
            }
            index
        });
        index.get(&start).cloned().unwrap_or_default()
    }

    /// A name read at a sink whose reaching assignments are all constants, though others
    /// elsewhere in its function are not (`let command; .. command = "kubectl config
    /// get-contexts"; if (o) command += " -o name"; execSync(command)`, and later in another
    /// branch `command = `..${name}..``). The last plain `=` (or the declaration) in a
    /// statement list that holds the read, before it, reaches it on every path; after that,
    /// the writes written between it and the read, and the writes inside any loop around the
    /// read that does not hold that `=`, may too. Every write of the name must lie in the
    /// read's own function (none in a callback).
    fn constant_where_read(&self, arg: Option<&Arg<'a>>) -> bool {
        let Some(Arg::Expr(expression)) = arg else {
            return false;
        };
        let Expression::Identifier(identifier) = expression.get_inner_expression() else {
            return false;
        };
        let Some(symbol) = self.symbol_of(identifier) else {
            return false;
        };
        if self.redeclared(symbol) {
            return false;
        }
        let Some(reference) = identifier.reference_id.get() else {
            return false;
        };
        let read = self.scoping.get_reference(reference).node_id();
        let function_of = |node: NodeId| {
            self.nodes.ancestor_ids(node).find(|id| {
                matches!(
                    self.nodes.kind(*id),
                    AstKind::Function(_) | AstKind::ArrowFunctionExpression(_)
                )
            })
        };
        let home = function_of(read);
        // The statement lists that hold the read, with where the read's statement starts.
        let mut lists: Vec<(NodeId, u32)> = Vec::new();
        let mut loops: Vec<Span> = Vec::new();
        let mut child = read;
        for ancestor in self.nodes.ancestor_ids(read) {
            match self.nodes.kind(ancestor) {
                AstKind::BlockStatement(_)
                | AstKind::FunctionBody(_)
                | AstKind::SwitchCase(_)
                | AstKind::StaticBlock(_)
                | AstKind::Program(_) => {
                    lists.push((ancestor, self.nodes.kind(child).span().start));
                }
                AstKind::ForStatement(_)
                | AstKind::ForInStatement(_)
                | AstKind::ForOfStatement(_)
                | AstKind::WhileStatement(_)
                | AstKind::DoWhileStatement(_) => loops.push(self.nodes.kind(ancestor).span()),
                _ => {}
            }
            if Some(ancestor) == home {
                break;
            }
            child = ancestor;
        }
        let read_start = identifier.span.start;
        // Each write: its span, whether it is a plain `=` statement of a list above, and
        // its operator and value.
        struct Write<'a> {
            span: Span,
            kills: bool,
            operator: AssignmentOperator,
            value: Option<&'a Expression<'a>>,
        }
        let statement_in_lists = |node: NodeId| {
            let parent = self.nodes.parent_id(node);
            lists
                .iter()
                .any(|(list, at)| *list == parent && self.nodes.kind(node).span().end <= *at)
        };
        let mut writes: Vec<Write<'a>> = Vec::new();
        let declaration = self.scoping.symbol_declaration(symbol);
        if let AstKind::VariableDeclarator(declarator) = self.nodes.kind(declaration) {
            if !matches!(declarator.id, BindingPattern::BindingIdentifier(_)) {
                return false;
            }
            if function_of(declaration) != home {
                return false;
            }
            let statement = self.nodes.parent_id(declaration);
            writes.push(Write {
                span: declarator.span,
                kills: statement_in_lists(statement),
                operator: AssignmentOperator::Assign,
                value: declarator.init.as_ref(),
            });
        } else {
            return false;
        }
        for reference in self.scoping.get_resolved_reference_ids(symbol) {
            let reference = self.scoping.get_reference(*reference);
            if !reference.is_write() {
                continue;
            }
            let node = reference.node_id();
            if function_of(node) != home {
                return false;
            }
            let Some((assignment_id, assignment)) =
                self.nodes
                    .ancestor_ids(node)
                    .find_map(|id| match self.nodes.kind(id) {
                        AstKind::AssignmentExpression(assignment) => Some((id, assignment)),
                        _ => None,
                    })
            else {
                return false;
            };
            let plain_target = matches!(&assignment.left,
                AssignmentTarget::AssignmentTargetIdentifier(target) if target.span == self.nodes.kind(node).span());
            if !plain_target {
                return false;
            }
            let statement = self.nodes.parent_id(assignment_id);
            let kills = matches!(self.nodes.kind(statement), AstKind::ExpressionStatement(_))
                && assignment.operator == AssignmentOperator::Assign
                && statement_in_lists(statement);
            writes.push(Write {
                span: assignment.span,
                kills,
                operator: assignment.operator,
                value: Some(&assignment.right),
            });
        }
        let Some(last) = writes
            .iter()
            .filter(|write| write.kills && write.span.end <= read_start)
            .max_by_key(|write| write.span.start)
        else {
            return false;
        };
        let reaching = writes.iter().filter(|write| {
            std::ptr::eq(*write, last)
                || (write.span.start > last.span.end && write.span.end <= read_start)
                || loops.iter().any(|body| {
                    !(body.start <= last.span.start && last.span.end <= body.end)
                        && body.start <= write.span.start
                        && write.span.end <= body.end
                })
        });
        let mut reaching = reaching.peekable();
        reaching.peek().is_some()
            && reaching.all(|write| {
                matches!(
                    write.operator,
                    AssignmentOperator::Assign | AssignmentOperator::Addition
                ) && write.value.is_some_and(|value| self.is_constant(value))
            })
    }

    fn is_literal_string(&self, expression: &'a Expression<'a>) -> bool {
        self.is_constant(expression)
    }

    fn arg_is_literal(&self, arg: Option<&Arg<'a>>) -> bool {
        matches!(arg, Some(Arg::Expr(expression)) if self.is_literal_string(expression))
    }

    /// An object literal, directly or through a never-reassigned name.
    fn object_of(&self, expression: &'a Expression<'a>) -> Option<&'a ObjectExpression<'a>> {
        match expression.get_inner_expression() {
            Expression::ObjectExpression(object) => Some(object),
            Expression::Identifier(identifier) => {
                let init = self.constant_initializer(self.symbol_of(identifier)?)?;
                match init.get_inner_expression() {
                    Expression::ObjectExpression(object) => Some(object),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Truthiness of a constant expression; `None` when it depends on run-time data.
    fn constant_truthiness(&self, expression: &'a Expression<'a>) -> Option<bool> {
        match expression.get_inner_expression() {
            Expression::BooleanLiteral(boolean) => Some(boolean.value),
            Expression::NullLiteral(_) => Some(false),
            Expression::NumericLiteral(number) => {
                Some(number.value != 0.0 && !number.value.is_nan())
            }
            Expression::Identifier(identifier)
                if identifier.name == "undefined" && self.symbol_of(identifier).is_none() =>
            {
                Some(false)
            }
            Expression::UnaryExpression(unary) => match unary.operator {
                UnaryOperator::LogicalNot => self.constant_truthiness(&unary.argument).map(|b| !b),
                UnaryOperator::Void => Some(false),
                _ => None,
            },
            inner => literal_text(inner).map(|text| !text.is_empty()),
        }
    }

    /// Some object argument sets `shell` to something that is not a constant falsy value
    /// (`true`, `!0`, `"/bin/sh"`, a variable, `"shell": true` with a quoted key).
    fn has_shell_option(&self, args: &[Arg<'a>]) -> bool {
        args.iter().any(|arg| {
            let Arg::Expr(expression) = arg else {
                return false;
            };
            let Some(object) = self.object_of(expression) else {
                return false;
            };
            self.object_sets_shell(object, 0)
        })
    }

    /// `{ shell: <not constant falsy> }`, directly or in an object spread into it.
    fn object_sets_shell(&self, object: &'a ObjectExpression<'a>, depth: usize) -> bool {
        object.properties.iter().any(|property| match property {
            ObjectPropertyKind::ObjectProperty(property) => {
                property.key.static_name().is_some_and(|key| key == "shell")
                    && self.constant_truthiness(&property.value) != Some(false)
            }
            ObjectPropertyKind::SpreadProperty(spread) => {
                depth < 8
                    && self
                        .object_of(&spread.argument)
                        .is_some_and(|inner| self.object_sets_shell(inner, depth + 1))
            }
        })
    }

    /// Whether the options argument (the last non-callback argument after the first) sets `key`.
    fn option_state(&self, args: &[Arg<'a>], key: &str) -> OptionState {
        let candidate = args.iter().skip(1).rev().find(|arg| match arg {
            Arg::Expr(expression) => !is_function_like(expression),
            Arg::Opaque => true,
        });
        let Some(candidate) = candidate else {
            return OptionState::Absent;
        };
        let Arg::Expr(expression) = candidate else {
            return OptionState::Unknown;
        };
        if let Some(object) = self.object_of(expression) {
            return self.object_option(object, key, 0);
        }
        match expression.get_inner_expression() {
            Expression::ArrayExpression(_) | Expression::NullLiteral(_) => OptionState::Absent,
            inner if literal_text(inner).is_some() => OptionState::Absent,
            Expression::Identifier(identifier) if identifier.name == "undefined" => {
                OptionState::Absent
            }
            // Options passed through a variable or a call: we cannot see them, so we stay quiet
            // rather than claim a missing limit (the peer fired here).
            _ => OptionState::Unknown,
        }
    }

    /// Whether an options object sets `key`, seeing into spreads of known objects.
    fn object_option(
        &self,
        object: &'a ObjectExpression<'a>,
        key: &str,
        depth: usize,
    ) -> OptionState {
        let mut state = OptionState::Absent;
        for property in &object.properties {
            match property {
                ObjectPropertyKind::ObjectProperty(property) => {
                    if property.key.static_name().is_some_and(|name| name == key) {
                        return OptionState::Present;
                    }
                }
                ObjectPropertyKind::SpreadProperty(spread) => {
                    let inner = match self.object_of(&spread.argument) {
                        Some(inner) if depth < 8 => self.object_option(inner, key, depth + 1),
                        _ => OptionState::Unknown,
                    };
                    match inner {
                        OptionState::Present => return OptionState::Present,
                        OptionState::Unknown => state = OptionState::Unknown,
                        OptionState::Absent => {}
                    }
                }
            }
        }
        state
    }

    /// `spawn('sh', ['-c', x])`, `execFile('bash', ['-lc', x])`, `spawn('cmd', ['/C', x])`:
    /// a shell whose script is not a literal.
    fn is_shell_wrapper(&self, program: Option<&Arg<'a>>, argv: Option<&Arg<'a>>) -> bool {
        let Some(Arg::Expr(program)) = program else {
            return false;
        };
        let Some(Arg::Expr(argv)) = argv else {
            return false;
        };
        let Expression::ArrayExpression(array) = argv.get_inner_expression() else {
            return false;
        };
        let mut elements: Vec<Option<&'a Expression<'a>>> = vec![Some(program)];
        elements.extend(
            array
                .elements
                .iter()
                .map(ArrayExpressionElement::as_expression),
        );
        self.shell_script(&elements).is_some()
    }

    /// The script of a command line `[program, ..]` that runs a shell with `-c` (maybe
    /// behind `env`, `sudo`, `timeout 5`, ..), when it is not a constant: `Some(None)` for a
    /// hole or a spread there.
    fn shell_script(
        &self,
        elements: &[Option<&'a Expression<'a>>],
    ) -> Option<Option<&'a Expression<'a>>> {
        let word = |i: usize| -> Vec<String> {
            (elements.get(i).copied().flatten())
                .map(|e| self.word_values(e))
                .unwrap_or_default()
        };
        let shell = shell_position(elements.len(), word)?;
        let mut rest = elements.iter().skip(shell + 1);
        while let Some(element) = rest.next() {
            let flag = element.and_then(|e| self.fold(e));
            if flag.as_deref().is_some_and(is_command_flag) {
                return match rest.next() {
                    None => None,
                    Some(None) => Some(None),
                    Some(Some(script)) => (!self.is_constant(script)).then_some(Some(script)),
                };
            }
        }
        None
    }

    /// An argv array that is not made only of literal strings.
    fn is_dynamic_array(&self, arg: Option<&Arg<'a>>) -> bool {
        let Some(arg) = arg else { return false };
        let Arg::Expr(expression) = arg else {
            return true;
        };
        match expression.get_inner_expression() {
            Expression::ArrayExpression(array) => array.elements.iter().any(|element| {
                element
                    .as_expression()
                    .is_none_or(|element| !self.is_literal_string(element))
            }),
            Expression::ObjectExpression(_)
            | Expression::NullLiteral(_)
            | Expression::ArrowFunctionExpression(_)
            | Expression::FunctionExpression(_) => false,
            Expression::Identifier(identifier) if identifier.name == "undefined" => false,
            inner => literal_text(inner).is_none() && self.object_of(inner).is_none(),
        }
    }

    fn hit(&mut self, rule: Rule, offset: u32, tainted: bool) {
        self.hits.push(Hit::new(rule, offset as usize, tainted));
    }

    /// The callee's value and the argument list it really receives, seeing through
    /// `f.call(this, ..)`, `f.apply(this, [..])` and `f.bind(this, ..)(..)`.
    fn effective_call(
        &self,
        callee: &'a Expression<'a>,
        arguments: &'a [Argument<'a>],
    ) -> Option<(Value, Vec<Arg<'a>>)> {
        let direct = || arguments.iter().map(Arg::from_argument);
        let inner = callee.get_inner_expression();
        if let Some(member) = inner.as_member_expression() {
            let target = || {
                self.resolve(member.object())
                    .filter(|value| value.is_callable_sink())
            };
            match member.static_property_name() {
                Some("call") => {
                    if let Some(value) = target() {
                        return Some((value, direct().skip(1).collect()));
                    }
                }
                Some("apply") => {
                    if let Some(value) = target() {
                        let list = arguments.get(1).and_then(Argument::as_expression);
                        let args = match list.map(Expression::get_inner_expression) {
                            Some(Expression::ArrayExpression(array)) => array
                                .elements
                                .iter()
                                .map(|element| match element.as_expression() {
                                    Some(expression) => Arg::Expr(expression),
                                    None => Arg::Opaque,
                                })
                                .collect(),
                            _ => vec![Arg::Opaque],
                        };
                        return Some((value, args));
                    }
                }
                _ => {}
            }
        }
        if let Expression::CallExpression(bind_call) = inner
            && let Some(member) = bind_call
                .callee
                .get_inner_expression()
                .as_member_expression()
            && member.static_property_name() == Some("bind")
            && let Some(value) = self
                .resolve(member.object())
                .filter(|value| value.is_callable_sink())
        {
            let bound = bind_call.arguments.iter().skip(1).map(Arg::from_argument);
            return Some((value, bound.chain(direct()).collect()));
        }
        let value = self.resolve(callee)?;
        Some((value, direct().collect()))
    }

    /// A literal program with a non-literal argv: `spawn_literal_dynamic_args`, raised for tool
    /// input only when the program runs code through its options; `argv_flag_injection`
    /// instead when tool input reaches such a program's argv with no literal `--` before it.
    fn argv_rules(&mut self, program: Option<&Arg<'a>>, argv: Option<&Arg<'a>>, offset: u32) {
        let program = match program {
            Some(Arg::Expr(program)) => self.fold(program),
            _ => None,
        };
        self.argv_rules_for(program, argv, offset);
    }

    /// [`Analyzer::argv_rules`] for a program known by name.
    fn argv_rules_for(&mut self, program: Option<String>, argv: Option<&Arg<'a>>, offset: u32) {
        if !self.is_dynamic_array(argv) {
            return;
        }
        let tainted = self.arg_tainted(argv);
        let subcommand = program
            .as_deref()
            .filter(|p| reads_subcommand(p))
            .and_then(|_| self.first_argument(argv));
        let dangerous = program
            .as_deref()
            .is_some_and(|p| runs_code_through_options_at(p, subcommand.as_deref()));
        if tainted
            && dangerous
            && self.flag_injectable(program.as_deref(), subcommand.as_deref(), argv, offset)
        {
            self.hit(Rule::ArgvFlagInjection, offset, true);
        } else {
            self.hit(Rule::SpawnLiteralDynamicArgs, offset, tainted);
        }
    }

    /// The first element of an argv, when it is a constant: of an array literal, or of the
    /// array a name is bound to once and only ever `push`ed to afterwards.
    fn first_argument(&self, argv: Option<&Arg<'a>>) -> Option<String> {
        let Some(Arg::Expr(argv)) = argv else {
            return None;
        };
        let array = match argv.get_inner_expression() {
            Expression::ArrayExpression(array) => array,
            Expression::Identifier(identifier) => {
                let symbol = self.symbol_of(identifier)?;
                // Read only here and by `name.push(..)`: aliased, indexed, sorted, handed
                // to a helper or added to at its front, its first element is not known.
                let only_pushed = self
                    .scoping
                    .get_resolved_reference_ids(symbol)
                    .iter()
                    .all(|reference| {
                        let node = self.scoping.get_reference(*reference).node_id();
                        let span = self.nodes.kind(node).span();
                        if span == identifier.span {
                            return true;
                        }
                        match self.nodes.parent_kind(node) {
                            AstKind::StaticMemberExpression(member)
                                if member.object.span() == span
                                    && member.property.name == "push" =>
                            {
                                let member_node = self.nodes.parent_id(node);
                                matches!(self.nodes.parent_kind(member_node),
                                    AstKind::CallExpression(call) if call.callee.span() == member.span)
                            }
                            _ => false,
                        }
                    });
                if !only_pushed || self.redeclared(symbol) {
                    return None;
                }
                match self.constant_initializer(symbol)?.get_inner_expression() {
                    Expression::ArrayExpression(array) => array,
                    _ => return None,
                }
            }
            _ => return None,
        };
        let first = array.elements.first()?.as_expression()?;
        self.fold(first)
    }

    /// Whether tool input can become an option of an argv: unless a literal `--` comes
    /// before every tainted element, or each tainted element is one the input cannot start
    /// (a literal prefix such as `` `--unified=${n}` `` or `"refs/" + x`; a name refused by
    /// an earlier `if (x.startsWith("-")) throw/return`). For an array literal, or for a named
    /// array its initialiser, the `push`/`unshift`/`splice` calls on it and the arrays
    /// assigned to it, in source order. An argv seen no further is injectable.
    fn flag_injectable(
        &self,
        program: Option<&str>,
        subcommand: Option<&str>,
        argv: Option<&Arg<'a>>,
        offset: u32,
    ) -> bool {
        let Some(Arg::Expr(argv)) = argv else {
            return true;
        };
        match argv.get_inner_expression() {
            Expression::ArrayExpression(array) => !matches!(
                self.scan_argv(program, subcommand, array_elements(array), offset),
                ArgvScan::Separated | ArgvScan::Kept
            ),
            Expression::Identifier(identifier) => {
                let Some(symbol) = self.symbol_of(identifier) else {
                    return false;
                };
                let mut parts: Vec<(u32, Vec<&'a Expression<'a>>)> = Vec::new();
                if let AstKind::VariableDeclarator(declarator) =
                    self.nodes.kind(self.scoping.symbol_declaration(symbol))
                    && let Some(init) = &declarator.init
                    && let Expression::ArrayExpression(array) = init.get_inner_expression()
                {
                    parts.push((array.span.start, array_elements(array)));
                }
                for call in self.array_additions.get(&symbol).into_iter().flatten() {
                    let elements = call.arguments.iter().filter_map(Argument::as_expression);
                    parts.push((call.span.start, elements.collect()));
                }
                for (_, value) in self.writes.get(&symbol).into_iter().flatten() {
                    if let Expression::ArrayExpression(array) = value.get_inner_expression() {
                        parts.push((array.span.start, array_elements(array)));
                    }
                }
                parts.sort_by_key(|(start, _)| *start);
                let elements = parts.into_iter().flat_map(|(_, elements)| elements);
                // Taint that came some other way (`args = args.concat(x)`) is not seen here.
                !matches!(
                    self.scan_argv(program, subcommand, elements.collect(), offset),
                    ArgvScan::Separated | ArgvScan::Kept
                )
            }
            _ => true,
        }
    }

    /// The elements of an argv in order: a literal `--` first, a tainted element that can
    /// start an option first, or neither.
    /// `program` is the program's literal name, when known, for its short options
    /// ([`takes_value`]).
    fn scan_argv(
        &self,
        program: Option<&str>,
        subcommand: Option<&str>,
        elements: Vec<&'a Expression<'a>>,
        offset: u32,
    ) -> ArgvScan {
        let mut seen = ArgvScan::Unseen;
        let mut value_next = false;
        for element in elements {
            let literal = self.fold(element);
            if literal.as_deref() == Some("--") {
                return ArgvScan::Separated;
            }
            // `["log", "--since", since]`: the value of an option that takes one.
            let takes = literal
                .as_deref()
                .is_some_and(|o| takes_value_in(program, subcommand, o));
            if std::mem::replace(&mut value_next, takes) {
                if self.mentions_taint(element) {
                    seen = ArgvScan::Kept;
                }
                continue;
            }
            if self.mentions_taint(element) {
                if self.keeps_input_inside(element) || self.refused_when_dashed(element, offset) {
                    seen = ArgvScan::Kept;
                    continue;
                }
                return ArgvScan::Injectable;
            }
        }
        seen
    }

    /// `` `--unified=${n}` ``, `"refs/" + x`: literal text first, so input cannot start the
    /// element; unless that text is only dashes (`` `-${x}` `` is `-c..`).
    fn keeps_input_inside(&self, element: &'a Expression<'a>) -> bool {
        let prefix = match element.get_inner_expression() {
            Expression::TemplateLiteral(template) => template
                .quasis
                .first()
                .map(|quasi| quasi.value.raw.to_string())
                .unwrap_or_default(),
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Addition => {
                self.fold(&binary.left).unwrap_or_default()
            }
            _ => String::new(),
        };
        !prefix.is_empty() && (prefix.contains('=') || !prefix.starts_with('-'))
    }

    /// A name refused by an `if (name.startsWith("-"))` that throws or returns, before
    /// `offset`.
    fn refused_when_dashed(&self, element: &'a Expression<'a>, offset: u32) -> bool {
        let Expression::Identifier(identifier) = element.get_inner_expression() else {
            return false;
        };
        let Some(symbol) = self.symbol_of(identifier) else {
            return false;
        };
        self.dash_guards
            .iter()
            .any(|(end, guarded)| *guarded == symbol && *end <= offset)
    }

    /// `["/bin/sh", "-c", script]` with a non-constant script, passed to any call (a
    /// Kubernetes `Exec.exec(ns, pod, container, command, ..)`, a remote runner): the script
    /// if there is one.
    fn shell_array_script(&self, array: &'a ArrayExpression<'a>) -> Option<&'a Expression<'a>> {
        let elements: Vec<_> = (array.elements.iter())
            .map(ArrayExpressionElement::as_expression)
            .collect();
        self.shell_script(&elements).flatten()
    }

    /// Apply the rules to one call (or `new`) of a resolved callee.
    fn evaluate(&mut self, value: Value, args: &[Arg<'a>], offset: u32) {
        match value {
            Value::Eval => {
                let tainted = self.any_arg_tainted(args);
                self.hit(Rule::EvalNearChildProcess, offset, tainted);
            }
            Value::FunctionConstructor => {
                let tainted = self.any_arg_tainted(args);
                self.hit(Rule::FunctionConstructorNearChildProcess, offset, tainted);
            }
            Value::RuntimeProcess => {
                let tainted = self.any_arg_tainted(args);
                // `Bun.spawn(["git", ...args])`: an argv whose program is a constant, as
                // `spawn("git", args)` (`Bun.spawn({ cmd: [..] })` likewise).
                let argv =
                    match args.first() {
                        Some(Arg::Expr(first)) => match first.get_inner_expression() {
                            Expression::ArrayExpression(array) => Some(&**array),
                            Expression::ObjectExpression(object) => object
                                .properties
                                .iter()
                                .find_map(|property| match property {
                                    ObjectPropertyKind::ObjectProperty(property)
                                        if property
                                            .key
                                            .static_name()
                                            .is_some_and(|k| k == "cmd") =>
                                    {
                                        match property.value.get_inner_expression() {
                                            Expression::ArrayExpression(array) => Some(&**array),
                                            _ => None,
                                        }
                                    }
                                    _ => None,
                                }),
                            _ => None,
                        },
                        _ => None,
                    };
                let elements = argv.map(|array| array_elements(array)).unwrap_or_default();
                let literal_program = argv.is_some_and(|array| {
                    array
                        .elements
                        .first()
                        .and_then(ArrayExpressionElement::as_expression)
                        .is_some_and(|program| self.is_constant(program))
                });
                if !literal_program {
                    self.hit(Rule::OsSystemEquivalent, offset, tainted);
                } else if elements.iter().any(|e| !self.is_constant(e))
                    || elements.len() != argv.map_or(0, |a| a.elements.len())
                {
                    let program = elements.first().and_then(|p| self.fold(p));
                    // A spread before it may hold docker's own options.
                    let subcommand = argv
                        .and_then(|array| array.elements.get(1))
                        .and_then(ArrayExpressionElement::as_expression)
                        .and_then(|s| self.fold(s));
                    let dangerous = program
                        .as_deref()
                        .is_some_and(|p| runs_code_through_options_at(p, subcommand.as_deref()));
                    let injectable = self.scan_argv(
                        program.as_deref(),
                        subcommand.as_deref(),
                        elements.clone(),
                        offset,
                    ) == ArgvScan::Injectable
                        || elements.len() != argv.map_or(0, |a| a.elements.len());
                    if tainted && dangerous && injectable {
                        self.hit(Rule::ArgvFlagInjection, offset, true);
                    } else {
                        self.hit(Rule::SpawnLiteralDynamicArgs, offset, tainted);
                    }
                }
            }
            Value::Sink(sink) => self.evaluate_sink(sink, args, offset),
            _ => {}
        }
    }

    fn evaluate_sink(&mut self, sink: Sink, args: &[Arg<'a>], offset: u32) {
        let first = args.first();
        let first_dynamic =
            first.is_some() && !self.arg_is_literal(first) && !self.constant_where_read(first);
        let first_tainted = self.arg_tainted(first);
        let wrapper = matches!(
            sink.method,
            Method::Spawn | Method::SpawnSync | Method::ExecFile | Method::ExecFileSync
        ) && self.is_shell_wrapper(first, args.get(1));
        match sink.method {
            Method::Exec => {
                if !first_dynamic || self.shell_inert(first) {
                } else if matches!(first, Some(Arg::Expr(e)) if is_interpolated_template(e)) {
                    self.hit(Rule::ExecTemplateLiteralWithInput, offset, first_tainted);
                } else {
                    self.hit(Rule::ExecDynamicString, offset, first_tainted);
                }
            }
            Method::ExecSync => {
                if first_dynamic && !self.shell_inert(first) {
                    self.hit(Rule::ExecSyncDynamicString, offset, first_tainted);
                }
            }
            Method::Spawn | Method::SpawnSync => {
                if first_dynamic {
                    match self.program_from_split(first) {
                        // `const [cmd, ...args] = command.split(" ")`, every `command` a
                        // `kubectl ..` text: a literal program, its arguments not known.
                        Some(program) => self.argv_rules_for(Some(program), args.get(1), offset),
                        None => self.hit(Rule::SpawnDynamicFileArgs, offset, first_tainted),
                    }
                } else if !wrapper {
                    self.argv_rules(first, args.get(1), offset);
                }
            }
            Method::ExecFile | Method::ExecFileSync => {
                if first_dynamic {
                    self.hit(Rule::ExecFileDynamic, offset, first_tainted);
                } else if !wrapper {
                    self.argv_rules(first, args.get(1), offset);
                }
            }
            Method::Fork => {
                if first_dynamic {
                    self.hit(Rule::ExecFileDynamic, offset, first_tainted);
                }
                // fork runs a Node module: no shell, no buffered output.
                return;
            }
        }
        // A shell that runs only constants (`spawn("ls", ["-la"], { shell: true })`) injects
        // nothing, as a constant command does not.
        let constant = || {
            args.iter().all(|arg| match arg {
                Arg::Expr(expression) => {
                    self.is_constant(expression)
                        || self.constant_array(expression, 0)
                        || self.object_of(expression).is_some()
                }
                _ => false,
            })
        };
        if (wrapper || self.has_shell_option(args)) && !constant() {
            let tainted = self.any_arg_tainted(args);
            self.hit(Rule::ShellTrueOption, offset, tainted);
        }
        if sink.library {
            return;
        }
        if matches!(
            sink.method,
            Method::Exec | Method::ExecSync | Method::ExecFile | Method::ExecFileSync
        ) && self.option_state(args, "maxBuffer") == OptionState::Absent
        {
            self.hit(Rule::UnboundedBuffer, offset, false);
        }
        if self.option_state(args, "timeout") == OptionState::Absent {
            self.hit(Rule::MissingTimeout, offset, false);
        }
    }
}

/// The plain expressions of an array literal (spreads and holes left out).
fn array_elements<'a>(array: &'a ArrayExpression<'a>) -> Vec<&'a Expression<'a>> {
    array
        .elements
        .iter()
        .filter_map(ArrayExpressionElement::as_expression)
        .collect()
}

/// The class a type annotation names: `ShellClient` in `x: ShellClient`.
fn named_type<'a>(annotation: &'a TSTypeAnnotation<'a>) -> Option<&'a IdentifierReference<'a>> {
    match &annotation.type_annotation {
        TSType::TSTypeReference(reference) => match &reference.type_name {
            TSTypeName::IdentifierReference(identifier) => Some(identifier),
            _ => None,
        },
        _ => None,
    }
}

/// A statement that leaves the function: `throw`, `return`, or a block that ends in one.
fn exits(statement: &Statement<'_>) -> bool {
    match statement {
        Statement::ThrowStatement(_) | Statement::ReturnStatement(_) => true,
        Statement::BlockStatement(block) => block.body.last().is_some_and(exits),
        _ => false,
    }
}

/// The names an `if` test refuses when they start with a dash: `x.startsWith("-")`, joined by
/// `||`.
fn dash_tests<'a>(test: &'a Expression<'a>, out: &mut Vec<&'a IdentifierReference<'a>>) {
    match test.get_inner_expression() {
        Expression::LogicalExpression(logical) if logical.operator == LogicalOperator::Or => {
            dash_tests(&logical.left, out);
            dash_tests(&logical.right, out);
        }
        Expression::CallExpression(call) => {
            if let Some(member) = call.callee.get_inner_expression().as_member_expression()
                && member.static_property_name() == Some("startsWith")
                && let Expression::Identifier(name) = member.object().get_inner_expression()
                && call
                    .arguments
                    .first()
                    .and_then(Argument::as_expression)
                    .and_then(literal_text)
                    .is_some_and(|prefix| prefix == "-")
            {
                out.push(name);
            }
        }
        _ => {}
    }
}

/// Whether `positions` holds position `i`.
fn positions_include(positions: Positions, i: usize) -> bool {
    u32::try_from(i)
        .ok()
        .and_then(|i| positions.checked_shr(i))
        .is_some_and(|rest| rest & 1 == 1)
}

/// The bit of position `i` (none past 63).
fn position_bit(i: usize) -> Positions {
    u32::try_from(i)
        .ok()
        .and_then(|i| 1u64.checked_shl(i))
        .unwrap_or(0)
}

/// `require("x")`: the module name.
fn required_module<'a>(expression: &'a Expression<'a>) -> Option<&'a str> {
    match expression.get_inner_expression() {
        Expression::CallExpression(call) => {
            let Expression::Identifier(callee) = call.callee.get_inner_expression() else {
                return None;
            };
            if callee.name != "require" {
                return None;
            }
            literal_text(call.arguments.first()?.as_expression()?)
        }
        // `await import("./x.js")`, `import("./x.js")`.
        Expression::AwaitExpression(awaited) => required_module(&awaited.argument),
        Expression::ImportExpression(import) => literal_text(&import.source),
        _ => None,
    }
}

/// `require("./x").name`: the module and the name.
fn required_member<'a>(expression: &'a Expression<'a>) -> Option<(&'a str, &'a str)> {
    let member = expression.get_inner_expression().as_member_expression()?;
    Some((
        required_module(member.object())?,
        member.static_property_name()?,
    ))
}

/// The parameters of a class's method (or arrow-function field) called `name`.
fn class_method_parameters<'a>(
    class: &'a Class<'a>,
    name: &str,
) -> Option<&'a FormalParameters<'a>> {
    class.body.body.iter().find_map(|element| match element {
        ClassElement::MethodDefinition(method)
            if method.key.static_name().is_some_and(|key| key == name) =>
        {
            Some(&*method.value.params)
        }
        ClassElement::PropertyDefinition(property)
            if property.key.static_name().is_some_and(|key| key == name) =>
        {
            property.value.as_ref().and_then(function_parameters)
        }
        _ => None,
    })
}

/// `-c`, `-lc`, `-ec`, `/c`, `/C`, `/k`, `-Command`.
pub(crate) fn is_command_flag(flag: &str) -> bool {
    if matches!(
        flag,
        "/c" | "/C" | "/k" | "/K" | "-Command" | "-command" | "-EncodedCommand"
    ) {
        return true;
    }
    flag.strip_prefix('-').is_some_and(|letters| {
        !letters.is_empty()
            && letters.len() <= 4
            && letters.contains('c')
            && letters.chars().all(|c| c.is_ascii_alphabetic())
    })
}

/// Names of MCP SDK methods that register a tool handler.
const TOOL_REGISTRATIONS: [&str; 4] = ["tool", "registerTool", "setRequestHandler", "addTool"];

fn is_tool_registration(name: &str) -> bool {
    TOOL_REGISTRATIONS.contains(&name)
}

/// Whether `text` may register a tool handler: it calls a method of [`TOOL_REGISTRATIONS`]
/// (`server.tool(`, `.registerTool(`), by the text. For the order of analysis only.
pub(crate) fn may_register_handlers(text: &str) -> bool {
    crate::source::names_member(text, TOOL_REGISTRATIONS)
}

fn parse_failed(parsed: &ParserReturn<'_>) -> bool {
    parsed.panicked || parsed.diagnostics.has_errors()
}

/// Analyse one JavaScript/TypeScript file. `Err` says why it does not parse.
pub(crate) fn analyze(
    path: &Path,
    source: &SourceText<'_>,
    seeds: &[Flow],
) -> Result<Analysis, SourceError> {
    let mut source_type = SourceType::from_path(path).unwrap_or_else(|_| SourceType::mjs());
    let file_name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|suffix| file_name.ends_with(suffix))
    {
        source_type = source_type.with_typescript_definition(true);
    }
    // oxc and the visitors after it recurse: refuse a file nested past the bound before any
    // of them runs (1 500 nested parentheses used to abort the whole scan). A small file is
    // measured by a lexer's estimate: a misread can fool it, but no file that small can nest
    // deeper than the stack holds. A larger one is measured on tree-sitter's tree, which no
    // misread fools; where that tree is broken, by the lexer's estimate and a count of the
    // places a JSX element may open as well.
    let too_deep = |offset: usize| SourceError::TooDeep {
        line: source.line_of(offset),
        limit: MAX_JAVASCRIPT_NESTING,
    };
    if source.text().len() <= LEXER_MEASURED_BYTES {
        javascript_nesting(source.text(), MAX_JAVASCRIPT_NESTING, false).map_err(too_deep)?;
    } else if crate::source::estimated_tokens(source.text()) > MAX_JAVASCRIPT_NESTING {
        // Every level takes a token at least, so a file of fewer tokens than the bound is
        // within it, however large (most large files are data: long strings, few tokens).
        let grammar = if source_type.is_typescript() {
            if source_type.is_jsx() {
                Grammar::Tsx
            } else {
                Grammar::TypeScript
            }
        } else {
            Grammar::JavaScript
        };
        if syntax_tree::depth_check(grammar, source.text(), MAX_JAVASCRIPT_NESTING)? {
            javascript_nesting(source.text(), MAX_JAVASCRIPT_NESTING, true).map_err(too_deep)?;
            if let Some(offset) = jsx_openings_over(source.text(), MAX_JAVASCRIPT_NESTING) {
                return Err(too_deep(offset));
            }
        }
    }
    let mut allocator = Allocator::default();
    let first = Parser::new(&allocator, source.text(), source_type).parse();
    if !parse_failed(&first) {
        return analyze_program(&first.program, source, seeds);
    }
    let error = (first.diagnostics.errors().next()).map_or(SourceError::GaveUp, |e| {
        SourceError::Diagnostic(e.to_string())
    });
    drop(first);
    if source_type.is_javascript() {
        // Published `.js` files sometimes still contain JSX, or are CommonJS scripts with a
        // top-level `return`: retry those readings before calling it a parse error. The arena
        // is emptied before each attempt, so failed readings do not pile up in memory.
        let retries = [
            source_type.with_jsx(true),
            source_type.with_commonjs(true),
            source_type.with_commonjs(true).with_jsx(true),
        ];
        for retry_type in retries {
            allocator.reset();
            let retry = Parser::new(&allocator, source.text(), retry_type).parse();
            if !parse_failed(&retry) {
                return analyze_program(&retry.program, source, seeds);
            }
        }
    }
    Err(error)
}

/// The rules over one parsed program.
fn analyze_program<'a>(
    program: &'a oxc_ast::ast::Program<'a>,
    source: &SourceText<'_>,
    seeds: &[Flow],
) -> Result<Analysis, SourceError> {
    let semantic = SemanticBuilder::new()
        .with_build_nodes(true)
        .build(program)
        .semantic;
    let mut analysis = Analysis::default();
    for comment in program.comments.iter() {
        let body_span = comment.content_span();
        let body = source
            .text()
            .get(body_span.start as usize..body_span.end as usize)
            .unwrap_or("");
        let end_line = source.line_of(comment.span.end.saturating_sub(1) as usize);
        analysis.pragmas.record_comment(body, end_line);
    }
    // An ignore-file pragma is applied by the caller, after the analysis: `--strict` scans
    // the file anyway.

    let mut analyzer = Analyzer {
        scoping: semantic.scoping(),
        nodes: semantic.nodes(),
        bindings: HashMap::new(),
        tainted: HashSet::new(),
        tainted_references: BTreeSet::new(),
        hits: Vec::new(),
        writes: HashMap::new(),
        array_additions: HashMap::new(),
        returns: RefCell::new(None),
        inert_budget: std::cell::Cell::new(semantic.nodes().len()),
        resolved_calls: RefCell::new(None),
        this_properties: HashMap::new(),
        this_fields: Vec::new(),
        classes: Vec::new(),
        constants: RefCell::new(HashMap::new()),
        deciding: RefCell::new(HashSet::new()),
        imports: HashMap::new(),
        exports: HashMap::new(),
        commonjs_default: false,
        registered_handlers: Vec::new(),
        dash_guards: Vec::new(),
    };

    // Collect the nodes the resolver iterates over, and seed imports and taint sources.
    let mut declarations = Vec::new();
    let mut assignments = Vec::new();
    let mut calls = Vec::new();
    let mut constructions = Vec::new();
    let mut tagged_templates = Vec::new();
    let mut quote_overrides = Vec::new();
    let mut this_assignments: Vec<(String, &Expression<'_>)> = Vec::new();
    // `export { name }` of a local or imported binding, decided after every import is seen.
    let mut local_exports: Vec<(String, SymbolId)> = Vec::new();
    for node in analyzer.nodes.iter() {
        record_module_boundary(
            &mut analyzer,
            node.kind(),
            &mut local_exports,
            &mut analysis,
        );
        if let AstKind::AssignmentExpression(assignment) = node.kind()
            && let AssignmentTarget::AssignmentTargetIdentifier(identifier) = &assignment.left
            && let Some(symbol) = analyzer.symbol_of(identifier)
        {
            let write = (assignment.operator, &assignment.right);
            analyzer.writes.entry(symbol).or_default().push(write);
        }
        match node.kind() {
            AstKind::VariableDeclarator(declarator) => {
                if let Some(init) = &declarator.init {
                    declarations.push((&declarator.id, init));
                }
            }
            AstKind::AssignmentExpression(assignment)
                if assignment.operator == AssignmentOperator::Assign =>
            {
                match &assignment.left {
                    AssignmentTarget::AssignmentTargetIdentifier(identifier) => {
                        if let Some(symbol) = analyzer.symbol_of(identifier) {
                            assignments.push((symbol, &assignment.right));
                        }
                    }
                    AssignmentTarget::StaticMemberExpression(member)
                        if member.property.name == "quote" =>
                    {
                        quote_overrides.push(&member.object);
                    }
                    AssignmentTarget::StaticMemberExpression(member)
                        if matches!(member.object, Expression::ThisExpression(_)) =>
                    {
                        this_assignments
                            .push((member.property.name.to_string(), &assignment.right));
                    }
                    _ => {}
                }
            }
            AstKind::ImportDeclaration(import) if !import.import_kind.is_type() => {
                for specifier in import.specifiers.iter().flatten() {
                    let (local, imported) = match specifier {
                        ImportDeclarationSpecifier::ImportSpecifier(named) => {
                            (&named.local, named.imported.name().to_string())
                        }
                        ImportDeclarationSpecifier::ImportDefaultSpecifier(default) => {
                            (&default.local, "default".to_string())
                        }
                        ImportDeclarationSpecifier::ImportNamespaceSpecifier(namespace) => {
                            (&namespace.local, "*".to_string())
                        }
                    };
                    if let Some(symbol) = local.symbol_id.get() {
                        let module = import.source.value.to_string();
                        analyzer.imports.insert(symbol, (module, imported));
                    }
                }
                let Some(module) = module_value(import.source.value.as_str()) else {
                    continue;
                };
                for specifier in import.specifiers.iter().flatten() {
                    let (local, value) = match specifier {
                        ImportDeclarationSpecifier::ImportSpecifier(named) => (
                            &named.local,
                            member_value(module, named.imported.name().as_str()),
                        ),
                        ImportDeclarationSpecifier::ImportDefaultSpecifier(default) => {
                            (&default.local, member_value(module, "default"))
                        }
                        ImportDeclarationSpecifier::ImportNamespaceSpecifier(namespace) => {
                            (&namespace.local, Some(module))
                        }
                    };
                    analyzer.bind_symbol(local.symbol_id.get(), value);
                }
            }
            AstKind::TSImportEqualsDeclaration(import) => {
                if let TSModuleReference::ExternalModuleReference(reference) =
                    &import.module_reference
                {
                    let value = module_value(reference.expression.value.as_str());
                    analyzer.bind_symbol(import.id.symbol_id.get(), value);
                }
            }
            AstKind::CallExpression(call) => {
                calls.push(call);
                seed_tool_handler(&mut analyzer, call);
                if let Some(member) = call.callee.get_inner_expression().as_member_expression()
                    && matches!(
                        member.static_property_name(),
                        Some("push" | "unshift" | "splice")
                    )
                    && let Expression::Identifier(array) = member.object().get_inner_expression()
                    && let Some(symbol) = analyzer.symbol_of(array)
                {
                    analyzer
                        .array_additions
                        .entry(symbol)
                        .or_default()
                        .push(call);
                }
            }
            AstKind::PropertyDefinition(property) if !property.r#static => {
                if let (Some(name), Some(value)) = (property.key.static_name(), &property.value) {
                    this_assignments.push((name.to_string(), value));
                }
            }
            AstKind::Class(class) => analyzer.classes.push(class),
            AstKind::IfStatement(statement) if exits(&statement.consequent) => {
                let mut guarded = Vec::new();
                dash_tests(&statement.test, &mut guarded);
                for identifier in guarded {
                    if let Some(symbol) = analyzer.symbol_of(identifier) {
                        analyzer.dash_guards.push((statement.span.end, symbol));
                    }
                }
            }
            AstKind::NewExpression(construction) => constructions.push(construction),
            AstKind::TaggedTemplateExpression(tagged) => tagged_templates.push(tagged),
            _ => {}
        }
    }

    analyzer.this_fields.clone_from(&this_assignments);
    for (exported, symbol) in local_exports {
        if let Some((module, imported)) = analyzer.imports.get(&symbol) {
            analysis.reexports.push(Reexport {
                exported: exported.clone(),
                module: module.clone(),
                imported: imported.clone(),
            });
        }
        analyzer
            .exports
            .entry(exported)
            .or_insert(Exported::Symbol(symbol));
    }
    // Tool input sent here by another file of the project.
    for seed in seeds {
        match analyzer.exported_parameters(&seed.name) {
            Some(Target::Parameters(parameters)) => {
                analyzer.taint_parameters(parameters, seed.positions);
            }
            Some(Target::Import(module, name)) => analysis.outgoing.push(Flow {
                module,
                name,
                positions: seed.positions,
                keywords: Vec::new(),
            }),
            None => {}
        }
    }

    // Handlers registered by a name, a member or a loop variable (`for (const t of tools)
    // server.tool(t.name, t.schema, t.handler)`): local ones are tainted, imported ones
    // leave for their file.
    for handler in std::mem::take(&mut analyzer.registered_handlers) {
        let mut targets = Vec::new();
        match analyzer.imported_callee(handler) {
            Some((module, name)) => targets.push(Target::Import(module, name)),
            None => {
                targets.extend(analyzer.exported_target(Exported::Expression(handler), None, 0))
            }
        }
        targets.extend(analyzer.looped_handlers(handler));
        for target in targets {
            match target {
                Target::Parameters(parameters) => {
                    analyzer.taint_parameters(parameters, ALL_POSITIONS);
                }
                Target::Import(module, name) => analysis.outgoing.push(Flow {
                    module,
                    name,
                    positions: ALL_POSITIONS,
                    keywords: Vec::new(),
                }),
            }
        }
    }

    // The local functions each call may reach (its callee, or every function of a map of
    // handlers, `handlers[name](args)`): fixed by the code, so found once, not per round.
    let local_calls: Vec<(&CallExpression<'_>, Vec<&FormalParameters<'_>>)> = calls
        .iter()
        .map(|call| {
            let mut targets: Vec<_> = analyzer
                .local_function_parameters(&call.callee)
                .into_iter()
                .collect();
            for value in analyzer.dispatched(&call.callee) {
                if let Some(Target::Parameters(parameters)) =
                    analyzer.exported_target(Exported::Expression(value), None, 0)
                {
                    targets.push(parameters);
                }
            }
            (*call, targets)
        })
        .filter(|(_, targets)| !targets.is_empty())
        .collect();

    // Fixpoint: aliases of aliases, and taint through assignments and local calls.
    let mut additions_tainted = Vec::new();
    for _ in 0..8 {
        let mut changed = false;
        for (pattern, init) in &declarations {
            if let Some(value) = analyzer.resolve(init) {
                changed |= analyzer.bind_pattern(pattern, value);
            }
            if analyzer.mentions_taint(init) {
                let mut symbols = Vec::new();
                pattern_symbols(pattern, &mut symbols);
                changed |= analyzer.taint_all(symbols);
            }
        }
        for (name, value) in &this_assignments {
            if let Some(resolved) = analyzer.resolve(value) {
                changed |=
                    analyzer.this_properties.insert(name.clone(), resolved) != Some(resolved);
            }
        }
        for (symbol, calls) in &analyzer.array_additions {
            let taints = calls.iter().any(|call| {
                call.arguments
                    .iter()
                    .filter_map(Argument::as_expression)
                    .any(|e| analyzer.mentions_taint(e))
            });
            if taints && !analyzer.tainted.contains(symbol) {
                additions_tainted.push(*symbol);
            }
        }
        // `cmd += input` taints `cmd` too (`=` is handled with the aliases below).
        for (symbol, writes) in &analyzer.writes {
            if !analyzer.tainted.contains(symbol)
                && writes.iter().any(|(operator, value)| {
                    *operator != AssignmentOperator::Assign && analyzer.mentions_taint(value)
                })
            {
                additions_tainted.push(*symbol);
            }
        }
        changed |= analyzer.taint_all(std::mem::take(&mut additions_tainted));
        for (symbol, value) in &assignments {
            if let Some(resolved) = analyzer.resolve(value) {
                changed |= analyzer.bindings.insert(*symbol, resolved) != Some(resolved);
            }
            if analyzer.mentions_taint(value) {
                changed |= analyzer.taint(*symbol);
            }
        }
        if !analyzer.tainted.is_empty() {
            for (call, targets) in &local_calls {
                for parameters in targets {
                    for (argument, parameter) in call.arguments.iter().zip(&parameters.items) {
                        if argument
                            .as_expression()
                            .is_some_and(|e| analyzer.mentions_taint(e))
                        {
                            let mut symbols = Vec::new();
                            pattern_symbols(&parameter.pattern, &mut symbols);
                            changed |= analyzer.taint_all(symbols);
                        }
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    // The bindings are final from here on.
    *analyzer.resolved_calls.get_mut() = Some(HashMap::new());

    for call in &calls {
        if let Some((value, args)) = analyzer.effective_call(&call.callee, &call.arguments) {
            analyzer.evaluate(value, &args, call.span.start);
            if value.is_callable_sink() {
                continue;
            }
        }
        let scripts: Vec<_> = call
            .arguments
            .iter()
            .filter_map(Argument::as_expression)
            .flat_map(|argument| analyzer.arrays_of(argument))
            .filter_map(|array| analyzer.shell_array_script(array))
            .collect();
        for script in scripts {
            let tainted = analyzer.mentions_taint(script);
            analyzer.hit(Rule::ShellTrueOption, call.span.start, tainted);
        }
    }
    // Tool input leaving for another file: calls of imported names with tainted arguments,
    // and tool handlers imported from elsewhere.
    for call in &calls {
        let positions = call
            .arguments
            .iter()
            .enumerate()
            .fold(0, |bits, (i, argument)| match argument {
                // `runIn("/tmp", ...argv)`: every position from here on.
                Argument::SpreadElement(spread) if analyzer.mentions_taint(&spread.argument) => {
                    bits | ALL_POSITIONS
                        .checked_shl(u32::try_from(i).unwrap_or(u32::MAX))
                        .unwrap_or(0)
                }
                _ if argument
                    .as_expression()
                    .is_some_and(|e| analyzer.mentions_taint(e)) =>
                {
                    bits | position_bit(i)
                }
                _ => bits,
            });
        if positions == 0 {
            continue;
        }
        let mut leaving: Vec<_> = analyzer.imported_callee(&call.callee).into_iter().collect();
        for value in analyzer.dispatched(&call.callee) {
            if let Some(Target::Import(module, name)) =
                analyzer.exported_target(Exported::Expression(value), None, 0)
            {
                leaving.push((module, name));
            }
        }
        for (module, name) in leaving {
            analysis.outgoing.push(Flow {
                module,
                name,
                positions,
                keywords: Vec::new(),
            });
        }
    }
    analysis.exports = analyzer.exports.keys().cloned().collect();
    analysis.defines = analyzer.takeable_names();
    if analyzer.commonjs_default
        && let Some(module) = analyzer.default_namespace()
    {
        analysis.reexports.push(Reexport {
            exported: "*".to_string(),
            module: module.to_string(),
            imported: "*".to_string(),
        });
    }
    analysis.exports.extend(
        (analysis.reexports.iter())
            .filter(|r| r.exported != "*")
            .map(|r| r.exported.clone()),
    );
    for construction in &constructions {
        if let Some(value) = analyzer.resolve(&construction.callee) {
            let args: Vec<Arg<'_>> = construction
                .arguments
                .iter()
                .map(Arg::from_argument)
                .collect();
            analyzer.evaluate(value, &args, construction.span.start);
        }
    }
    let quoting_off = quote_overrides
        .iter()
        .any(|object| analyzer.resolve(object) == Some(Value::ZxShell));
    for tagged in &tagged_templates {
        let tainted = tagged
            .quasi
            .expressions
            .iter()
            .any(|e| analyzer.mentions_taint(e));
        match analyzer.resolve(&tagged.tag) {
            Some(Value::RuntimeProcess) => {
                analyzer.hit(Rule::OsSystemEquivalent, tagged.span.start, tainted);
            }
            // execa's `$` quotes every `${}`, except when it was told to use a shell.
            Some(Value::ExecaScript(true)) => {
                analyzer.hit(Rule::ShellTrueOption, tagged.span.start, tainted);
            }
            // zx quotes every `${}` unless `$.quote` was replaced; then it is string building.
            Some(Value::ZxShell) if quoting_off && !tagged.quasi.expressions.is_empty() => {
                analyzer.hit(
                    Rule::ExecTemplateLiteralWithInput,
                    tagged.span.start,
                    tainted,
                );
            }
            _ => {}
        }
    }
    analysis.hits = analyzer.hits;
    Ok(analysis)
}

/// `server.tool(name, .., handler)`, `server.registerTool(name, config, handler)`,
/// `server.setRequestHandler(CallToolRequestSchema, handler)`, `server.addTool({ execute })`:
/// the handler's parameters carry tool input chosen by the model (and whoever steers it).
fn seed_tool_handler<'a>(analyzer: &mut Analyzer<'a, '_>, call: &'a CallExpression<'a>) {
    let Some(member) = call.callee.get_inner_expression().as_member_expression() else {
        return;
    };
    let Some(name) = member.static_property_name() else {
        return;
    };
    if !is_tool_registration(name) {
        return;
    }
    if name == "setRequestHandler" {
        let schema = call.arguments.first().and_then(Argument::as_expression);
        let names_call_tool = match schema.map(Expression::get_inner_expression) {
            Some(Expression::Identifier(identifier)) => identifier.name.contains("CallTool"),
            Some(other) => other
                .as_member_expression()
                .and_then(|member| member.static_property_name())
                .is_some_and(|property| property.contains("CallTool")),
            None => false,
        };
        if !names_call_tool {
            return;
        }
    }
    let mut handlers = Vec::new();
    // `withTelemetry(async (request) => ..)`, `withErrors(handler)`: the wrapped handler,
    // through a few such calls.
    let mut last = call.arguments.last().and_then(Argument::as_expression);
    for _ in 0..MAX_EXPORT_LINKS {
        let Some(Expression::CallExpression(wrapper)) = last.map(Expression::get_inner_expression)
        else {
            break;
        };
        let arguments = || wrapper.arguments.iter().filter_map(Argument::as_expression);
        last = arguments()
            .find(|argument| is_function_like(argument))
            .or_else(|| {
                arguments().rfind(|argument| {
                    matches!(
                        argument.get_inner_expression(),
                        Expression::Identifier(_) | Expression::CallExpression(_)
                    )
                })
            });
    }
    if let Some(last) = last {
        if let Some(parameters) = function_parameters(last) {
            handlers.push(parameters);
        } else if let Some(parameters) = analyzer.local_function_parameters(last) {
            handlers.push(parameters);
        } else if let Expression::ObjectExpression(object) = last.get_inner_expression() {
            for property in &object.properties {
                if let ObjectPropertyKind::ObjectProperty(property) = property
                    && property
                        .key
                        .static_name()
                        .is_some_and(|key| key == "execute" || key == "handler")
                {
                    match function_parameters(&property.value) {
                        Some(parameters) => handlers.push(parameters),
                        None => analyzer.registered_handlers.push(&property.value),
                    }
                }
            }
        } else {
            // Maybe imported from another file: followed there by the project pass.
            analyzer.registered_handlers.push(last);
        }
    }
    for parameters in handlers {
        analyzer.taint_all(parameter_symbols(parameters));
    }
}

/// Imports by `require`, exports (ESM and CommonJS) and re-exports: what the project pass
/// needs to follow tool input across files.
fn record_module_boundary<'a>(
    analyzer: &mut Analyzer<'a, '_>,
    kind: AstKind<'a>,
    local_exports: &mut Vec<(String, SymbolId)>,
    analysis: &mut Analysis,
) {
    match kind {
        // `const git = require('./git')`, `const { runGit } = require('./git')`.
        AstKind::VariableDeclarator(declarator) => {
            // `const runB = require('./b').runB`.
            if let (Some((module, name)), BindingPattern::BindingIdentifier(identifier)) = (
                declarator.init.as_ref().and_then(required_member),
                &declarator.id,
            ) && let Some(symbol) = identifier.symbol_id.get()
            {
                let imported = (module.to_string(), name.to_string());
                analyzer.imports.insert(symbol, imported);
                return;
            }
            let Some(module) = declarator.init.as_ref().and_then(required_module) else {
                return;
            };
            match &declarator.id {
                BindingPattern::BindingIdentifier(identifier) => {
                    if let Some(symbol) = identifier.symbol_id.get() {
                        (analyzer.imports).insert(symbol, (module.to_string(), "*".to_string()));
                    }
                }
                BindingPattern::ObjectPattern(object) => {
                    for property in &object.properties {
                        if let (Some(key), BindingPattern::BindingIdentifier(identifier)) =
                            (property.key.static_name(), &property.value)
                            && let Some(symbol) = identifier.symbol_id.get()
                        {
                            let imported = (module.to_string(), key.to_string());
                            analyzer.imports.insert(symbol, imported);
                        }
                    }
                }
                _ => {}
            }
        }
        AstKind::ExportDeclaration(export) => match &export.declaration {
            Declaration::FunctionDeclaration(function) => {
                if let Some(id) = &function.id {
                    let exported = Exported::Function(function);
                    analyzer.exports.insert(id.name.to_string(), exported);
                }
            }
            Declaration::ClassDeclaration(class) => {
                if let Some(id) = &class.id {
                    analyzer
                        .exports
                        .insert(id.name.to_string(), Exported::Class(class));
                }
            }
            Declaration::VariableDeclaration(variables) => {
                for declarator in &variables.declarations {
                    if let (BindingPattern::BindingIdentifier(id), Some(init)) =
                        (&declarator.id, &declarator.init)
                    {
                        let exported = Exported::Expression(init);
                        analyzer.exports.insert(id.name.to_string(), exported);
                    }
                }
            }
            _ => {}
        },
        AstKind::ExportNamedDeclaration(export) => {
            for specifier in &export.specifiers {
                if let ModuleExportName::IdentifierReference(local) = &specifier.local
                    && let Some(symbol) = analyzer.symbol_of(local)
                {
                    local_exports.push((specifier.exported.name().to_string(), symbol));
                }
            }
        }
        AstKind::ExportFromDeclaration(export) => {
            for specifier in &export.specifiers {
                analysis.reexports.push(Reexport {
                    exported: specifier.exported.name().to_string(),
                    module: export.source.value.to_string(),
                    imported: specifier.local.name().to_string(),
                });
            }
        }
        AstKind::ExportAllDeclaration(export) => {
            let exported = export
                .exported
                .as_ref()
                .map_or("*".to_string(), |name| name.name().to_string());
            analysis.reexports.push(Reexport {
                exported,
                module: export.source.value.to_string(),
                imported: "*".to_string(),
            });
        }
        AstKind::ExportDefaultDeclaration(export) => {
            let exported = match &export.declaration {
                ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                    Exported::Function(function)
                }
                ExportDefaultDeclarationKind::ClassDeclaration(class) => Exported::Class(class),
                other => match other.as_expression() {
                    Some(expression) => Exported::Expression(expression),
                    None => return,
                },
            };
            analyzer.exports.insert("default".to_string(), exported);
        }
        // `module.exports = x`, `module.exports.name = x`, `exports.name = x`.
        AstKind::AssignmentExpression(assignment)
            if assignment.operator == AssignmentOperator::Assign =>
        {
            let AssignmentTarget::StaticMemberExpression(target) = &assignment.left else {
                return;
            };
            let is_module_exports = |expression: &Expression<'_>| {
                matches!(expression.get_inner_expression(),
                    Expression::StaticMemberExpression(member)
                        if member.property.name == "exports"
                            && matches!(member.object.get_inner_expression(),
                                Expression::Identifier(object) if object.name == "module"))
            };
            let property = target.property.name.as_str();
            let name = if property == "exports"
                && matches!(target.object.get_inner_expression(),
                    Expression::Identifier(object) if object.name == "module")
            {
                "default"
            } else if is_module_exports(&target.object)
                || matches!(target.object.get_inner_expression(),
                    Expression::Identifier(object) if object.name == "exports")
            {
                property
            } else {
                return;
            };
            if name == "default" {
                analyzer.commonjs_default = true;
            }
            if name == "default"
                && let Some(module) = required_module(&assignment.right)
            {
                analysis.reexports.push(Reexport {
                    exported: "*".to_string(),
                    module: module.to_string(),
                    imported: "*".to_string(),
                });
            }
            analyzer
                .exports
                .insert(name.to_string(), Exported::Expression(&assignment.right));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names an `export *` of each file may send a seed into (`Analysis::defines`): what
    /// `Analyzer::exported_parameters` can find, so a barrel sends each module only those.
    #[test]
    fn the_names_a_module_takes_are_what_its_exports_resolve() {
        let cases: [(&str, Option<&[&str]>); 11] = [
            // The members of an ESM default export are not carried by an `export *`.
            ("function h(v) {}\nexport default { g: h };", Some(&[])),
            (
                "export function g(v) {}\nexport default { g };",
                Some(&["g"]),
            ),
            ("export const a = 1, b = () => 0;", Some(&["a", "b"])),
            ("function g(v) {}\nconst h = 1;", Some(&["g", "h"])),
            (
                "function g(v) {}\nmodule.exports = { g, run: g };",
                Some(&["g", "run"]),
            ),
            (
                "const api = { g() {} };\nmodule.exports = api;",
                Some(&["g"]),
            ),
            (
                "class Git { diff(v) {} log(v) {} }\nmodule.exports = Git;",
                Some(&["diff", "log"]),
            ),
            ("module.exports = make({ g });", Some(&[])),
            ("exports.g = function (v) {};", Some(&["g"])),
            // A required module handed on whole: an `export *` of it.
            (
                "const lib = require('./lib');\nmodule.exports = lib;",
                Some(&[]),
            ),
            // A member of an imported value may be any name.
            (
                "const { Git } = require('./git');\nmodule.exports = Git;",
                None,
            ),
        ];
        for (text, expected) in cases {
            let source = SourceText::new(text);
            let analysis = analyze(Path::new("m.js"), &source, &[]).expect("parses");
            let expected = expected.map(|names| names.iter().map(ToString::to_string).collect());
            assert_eq!(analysis.defines, expected, "{text}");
        }
        let source = SourceText::new("const lib = require('./lib');\nmodule.exports = lib;");
        let analysis = analyze(Path::new("m.js"), &source, &[]).expect("parses");
        assert!(
            (analysis.reexports.iter()).any(|r| r.exported == "*" && r.module == "./lib"),
            "{:?}",
            analysis
                .reexports
                .iter()
                .map(|r| &r.module)
                .collect::<Vec<_>>()
        );
    }
}
