//! Python: tree-sitter-python parses the file; imports are resolved to the modules we track
//! (`import subprocess as sp`, `from subprocess import run as r`, `from os import system`),
//! module-level definitions shadow them, and each sink call is mapped onto one of the twelve
//! rule ids. Tool handlers (`@mcp.tool()`, `@server.call_tool()`, `mcp.add_tool(f)`) seed the
//! taint, as do the functions and methods other files of the scan send tool input to (the
//! seeds); calls from tainted code into imported names leave the file as outgoing flows, and
//! module-level `from` imports are its re-exports.
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
//!   `spawn_literal_dynamic_args` (raised for taint only when the program runs code through
//!   options), or `argv_flag_injection` when they are tainted, the program runs code through
//!   options and no literal `--` precedes them; GitPython `repo.git.<cmd>(<tainted>)` →
//!   `argv_flag_injection`;
//! - `os.exec*`, `os.spawn*`, `os.posix_spawn*`, `asyncio.create_subprocess_exec` with a
//!   non-literal program → `exec_file_dynamic`;
//! - `eval(...)`, `exec(...)` → `eval_near_child_process`; `compile(..., 'exec')` →
//!   `function_constructor_near_child_process`;
//! - `subprocess.run/call/check_call/check_output` without `timeout=` → `missing_timeout`.

use std::collections::{BTreeMap, BTreeSet};

use hashbrown::{HashMap, HashSet};

use crate::python_tree::{PyNode, named_children, walk, walk_with_parent};

use crate::error::SourceError;
use crate::finding::{ALL_POSITIONS, Analysis, Flow, Hit, Positions, Reexport};
use crate::javascript::is_command_flag;
use crate::python_scope::{Binding, Namespaces, Place, ScopeId, opens_scope, pattern_captures};
use crate::rule::{
    Rule, reads_subcommand, runs_code_through_options, runs_code_through_options_at,
    shell_position, takes_value_in,
};
use crate::source::SourceText;
use crate::syntax_tree::{Reads, Scopes, Span, contains, inside, text_of};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Module {
    Os,
    Subprocess,
    Asyncio,
    Pty,
    Builtins,
    Importlib,
    Git,
    Functools,
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
    /// Builtin `getattr`: `getattr(module, "name")` resolves to the member.
    Getattr,
    /// `__import__("name")` / `importlib.import_module("name")`: the module.
    ImportModule,
    /// `git.Repo(...)` (GitPython).
    GitRepo,
    /// `functools.partial(f, ..)`: resolves to `f` (see `Analyzer::resolve_within`).
    Partial,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Module(Module),
    Function(Function),
}

/// The modules whose members the analysis knows, by the dotted name an import writes.
const MODULES: [(&str, Module); 11] = [
    ("os", Module::Os),
    ("posix", Module::Os),
    ("nt", Module::Os),
    ("subprocess", Module::Subprocess),
    ("asyncio", Module::Asyncio),
    ("asyncio.subprocess", Module::Asyncio),
    ("pty", Module::Pty),
    ("builtins", Module::Builtins),
    ("importlib", Module::Importlib),
    ("git", Module::Git),
    ("functools", Module::Functools),
];

/// The builtin functions the analysis knows (each file starts with these bound).
const BUILTINS: [(&str, Function); 5] = [
    ("eval", Function::Eval),
    ("exec", Function::Eval),
    ("compile", Function::Compile),
    ("getattr", Function::Getattr),
    ("__import__", Function::ImportModule),
];

/// The names by which tool handlers are registered: decorators and calls on a server
/// (`@mcp.tool()`, `@server.call_tool()`), resource templates and prompts included, and
/// `mcp.add_tool(f)`.
const TOOL_DECORATORS: [&str; 6] = [
    "tool",
    "call_tool",
    "resource",
    "read_resource",
    "prompt",
    "get_prompt",
];
const ADD_TOOL: &str = "add_tool";

/// Whether `text` may register a tool handler: a decorator or method of
/// [`TOOL_DECORATORS`] or [`ADD_TOOL`] (`@mcp.tool`, `server.call_tool(`, `mcp.add_tool(`),
/// by the text. For the order of analysis only.
pub(crate) fn may_register_handlers(text: &str) -> bool {
    crate::source::names_member(text, TOOL_DECORATORS.into_iter().chain([ADD_TOOL]))
}

fn module_named(dotted: &str) -> Option<Module> {
    MODULES
        .iter()
        .find(|(name, _)| *name == dotted)
        .map(|(_, module)| *module)
}

/// What makes a file loud (`python_ruff::Quiet`), from the tables above and [`member`]: a
/// module is bit `1 << (module as u32)`.
const QUIET_RULES: crate::python_ruff::QuietRules = crate::python_ruff::QuietRules {
    binds_modules: |module| {
        let root = module.split('.').next().unwrap_or_default();
        (MODULES.iter())
            .filter(|(name, _)| name.split('.').next() == Some(root))
            .fold(0, |bits, (_, module)| bits | 1 << (*module as u32))
    },
    member_of: |name| {
        (MODULES.iter())
            .filter(|(_, module)| member(*module, name).is_some())
            .fold(0, |bits, (_, module)| bits | 1 << (*module as u32))
    },
    builtin_function: |name| BUILTINS.iter().any(|(builtin, _)| *builtin == name),
    registration: Some(|name| TOOL_DECORATORS.contains(&name) || name == ADD_TOOL),
};

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
        (Module::Builtins, "eval" | "exec") => Function::Eval,
        (Module::Builtins, "compile") => Function::Compile,
        (Module::Builtins, "getattr") => Function::Getattr,
        (Module::Builtins, "__import__") | (Module::Importlib, "import_module") => {
            Function::ImportModule
        }
        (Module::Git, "Repo") => Function::GitRepo,
        (Module::Functools, "partial") => Function::Partial,
        _ => return None,
    };
    Some(Value::Function(function))
}

struct Call<'t> {
    node: PyNode<'t>,
    positional: Vec<PyNode<'t>>,
    keywords: HashMap<&'t str, PyNode<'t>>,
    has_splat: bool,
}

/// A call that grows a list: the method (`append`, `extend`, `insert`) and its arguments.
type Growth<'t> = (&'static str, Vec<PyNode<'t>>);

struct Analyzer<'s, 't> {
    source: &'s str,
    bindings: HashMap<String, Value>,
    /// The file's scopes and every binding in each (set once the imports are known).
    names: Option<Namespaces<'t>>,
    /// Names (in their scope) whose every binding is an assignment of a constant.
    constants: HashSet<(ScopeId, String)>,
    /// Names (in their scope) assigned a tracked module or function (`run = subprocess.run`,
    /// `o = os`, `P = o.popen`), whatever else they are assigned.
    aliases: HashMap<(ScopeId, String), Value>,
    /// The attribute names (`run` of `self.run = os.system`) some alias is filed under: an
    /// attribute read of another name is no alias, whatever its object.
    attribute_members: HashSet<String>,
    /// Each module class's family root ([`Locals::family`]): a receiver's attribute is filed
    /// under its class's family, since `self` in a base class's method may be an instance
    /// of a subclass.
    class_families: HashMap<&'s str, &'s str>,
    /// The string values a constant may hold (`SH = "/bin/sh"`; both sides of a conditional).
    constant_values: HashMap<(ScopeId, String), Vec<String>>,
    /// List literals assigned to a name that is only ever bound to lists (`args = ["git",
    /// "log"]`, maybe grown by `+=`), in source order.
    lists: HashMap<(ScopeId, String), Vec<PyNode<'t>>>,
    /// The list literals added to a list name with `+=`, by name.
    additions: HashMap<(ScopeId, String), Vec<PyNode<'t>>>,
    /// List names changed in a way not seen piece by piece (`cmd[1] = x`, `cmd = ["git"] +
    /// args`, `cmd += other`).
    opaque_growth: HashSet<(ScopeId, String)>,
    /// Dict literals or `dict(...)` calls assigned to a name only ever bound to those (for
    /// `**OPTS`), in source order.
    dicts: HashMap<(ScopeId, String), Vec<PyNode<'t>>>,
    /// `name.append(x)`, `.extend([..])`, `.insert(i, x)` calls: the method and arguments.
    growth: HashMap<(ScopeId, String), Vec<Growth<'t>>>,
    /// Per tool handler (or function reached from one): its tainted names.
    tainted_scopes: Scopes<HashSet<String>>,
    /// Module names a function assigns tool input to under `global` (`global c; c = cmd`):
    /// a read of one that refers to the module's binding is tainted in every function.
    tainted_globals: HashSet<String>,
    /// Where each name is read (attribute names and keyword names are not reads).
    reads: Reads<'s>,
    hits: Vec<Hit>,
    /// The values module-level functions return, by name (`None` for a bare `return`).
    returns: HashMap<&'s str, Vec<Option<PyNode<'t>>>>,
    /// Functions whose returns are being decided (a recursive one returns no constant).
    deciding: std::cell::RefCell<HashSet<&'s str>>,
    /// Calls that hand a name to a function of this module which refuses it when it starts
    /// with `-` (`self._validate_ref(ref)`): the call's offset and the name.
    dash_refusals: Vec<(usize, &'s str)>,
    /// Calls (by start byte) of names imported from files of the scan whose return values
    /// cannot start with `-` (see [`Inbound::dash_free`]).
    dash_free_calls: HashSet<usize>,
    /// Every `if` statement of the file, in source order (for [`Analyzer::guard_before`]).
    if_statements: Vec<PyNode<'t>>,
    /// Every `global` and `nonlocal` statement of the file, in source order.
    declaration_statements: Vec<PyNode<'t>>,
    /// The tool handlers of this file (by node id): the SDK checks their arguments against
    /// the parameters' annotations before the call.
    handlers: HashSet<usize>,
    /// The byte ranges of the statements of a function body's top level that assign a
    /// name, by (function, name), in source order (for [`Analyzer::name_dash_free`]).
    rebindings: std::cell::RefCell<HashMap<(usize, String), Vec<ByteRange>>>,
    /// [`Analyzer::bound_dash_free`]'s answers by (function, name, from byte); `false` while
    /// one is being decided, so a cycle of names ends there.
    dash_free_bindings: std::cell::RefCell<HashMap<(usize, String, usize), bool>>,
    /// Syntax nodes [`Analyzer::bound_dash_free`] may still visit in this file (the file's
    /// length at the start): past it, no name is taken as free of dashes, and the analysis
    /// stays linear in the file.
    dash_free_budget: std::cell::Cell<usize>,
    /// Names bound only to tuple, list or set literals of strings (`ALLOWED = {"ruff",
    /// "uv"}`), with those strings.
    collections: HashMap<(ScopeId, String), Vec<String>>,
    /// Statements that hand an argv name to a function of this module which raises unless
    /// its first element is one of some constants (`_validate_linter_command(cmd)`).
    program_pins: Vec<ProgramPin<'s>>,
}

/// A statement `check(name)` whose callee pins `name[0]`: the statement's end, the block it
/// is in, the name and the programs the callee lets through.
struct ProgramPin<'s> {
    after: usize,
    block: (usize, usize),
    name: &'s str,
    programs: Vec<String>,
}

impl<'s, 't> Analyzer<'s, 't> {
    fn text(&self, node: PyNode<'_>) -> &'s str {
        text_of(node, self.source)
    }

    /// The scope and name a read of an identifier refers to.
    fn key_of(&self, identifier: PyNode<'_>) -> (ScopeId, String) {
        let name = self.text(identifier);
        let scope = self
            .names
            .as_ref()
            .map_or(0, |names| names.scope_of_read(identifier, name));
        (scope, name.to_string())
    }

    /// The value under `key` of the dict literals (`{"sh": os.system}`, `dict(sh=os.system)`)
    /// a name `holder` is bound to, or under any key when `key` is not a constant.
    fn dict_value(
        &self,
        holder: PyNode<'_>,
        key: Option<PyNode<'_>>,
        steps: usize,
    ) -> Option<Value> {
        if holder.kind_name() != "identifier" || self.dicts.is_empty() {
            return None;
        }
        let keys = key.map(|key| self.const_strs(key)).unwrap_or_default();
        self.dicts
            .get(&self.key_of(holder))?
            .iter()
            .filter_map(|dict| dict_entries(*dict))
            .flatten()
            .filter(|(entry, _)| {
                keys.is_empty()
                    || match entry {
                        DictKey::Expression(key) => {
                            self.const_strs(*key).iter().any(|name| keys.contains(name))
                        }
                        DictKey::Keyword(name) => keys.iter().any(|key| key == self.text(*name)),
                    }
            })
            .find_map(|(_, value)| self.resolve_within(value, steps))
    }

    /// The root of a module class's family ([`Locals::family`]), or the class itself.
    fn family<'c>(&self, class: &'c str) -> &'c str
    where
        's: 'c,
    {
        self.class_families.get(class).copied().unwrap_or(class)
    }

    /// Where [`Analyzer::aliases`] files an attribute `name.member` (`name` an identifier):
    /// a method's receiver (`self.run`, `cls.run`) under its class's family, file-wide; a
    /// parameter's under its function; any other name's under the scope the name is read in
    /// (`box.run` at module level is not a local `box`'s).
    fn attribute_key(&self, attribute: PyNode<'_>) -> Option<(ScopeId, String)> {
        let object = attribute.field("object")?;
        if object.kind_name() != "identifier" {
            return None;
        }
        let name = self.text(object);
        let member = self.text(attribute.field("attribute")?);
        let mut up = attribute.parent();
        while let Some(node) = up {
            if node.kind_name() == "function_definition" {
                if receiver_name(node, self.source).as_deref() == Some(name) {
                    let class = self.text(method_class(node)?.field("name")?);
                    return Some((
                        ATTRIBUTE_ALIASES,
                        format!("{}.{member}", self.family(class)),
                    ));
                }
                if parameter_names(node, self.source)
                    .iter()
                    .flatten()
                    .any(|parameter| parameter == name)
                {
                    return Some((node.id(), format!("{name}.{member}")));
                }
            }
            up = node.parent();
        }
        // `Runner.run` of a module class: as its receiver's.
        if self.class_families.contains_key(name) {
            return Some((ATTRIBUTE_ALIASES, format!("{}.{member}", self.family(name))));
        }
        Some((self.key_of(object).0, format!("{name}.{member}")))
    }

    /// The module or function of the tracked modules `node` is (`os.system`,
    /// `getattr(subprocess, "run")`, `__import__("os").system`), within a bounded number of
    /// steps down the expression, so a long method chain costs no more per call than a short
    /// one.
    fn resolve(&self, node: PyNode<'_>) -> Option<Value> {
        self.resolve_within(node, MAX_PATH_STEPS)
    }

    fn resolve_within(&self, node: PyNode<'_>, steps: usize) -> Option<Value> {
        let steps = steps.checked_sub(1)?;
        match node.kind_name() {
            "identifier" => self
                .bindings
                .get(self.text(node))
                .or_else(|| {
                    // (Most files have no alias: no scope lookup for them.)
                    (!self.aliases.is_empty())
                        .then(|| self.aliases.get(&self.key_of(node)))
                        .flatten()
                })
                .copied(),
            "attribute" => {
                // `self.run = subprocess.run` in a method of the class (or of its family),
                // `box.run = os.system` of the same `box`.
                if !self.attribute_members.is_empty()
                    && node
                        .field("attribute")
                        .is_some_and(|member| self.attribute_members.contains(self.text(member)))
                    && let Some(key) = self.attribute_key(node)
                    && let Some(value) = self.aliases.get(&key)
                {
                    return Some(*value);
                }
                let object = node.field("object")?;
                let attribute = node.field("attribute")?;
                match self.resolve_within(object, steps)? {
                    Value::Module(module) => member(module, self.text(attribute)),
                    Value::Function(_) => None,
                }
            }
            // `RUNNERS["sh"]` of `RUNNERS = {"sh": os.system}`.
            "subscript" => self.dict_value(node.field("value")?, node.field("subscript"), steps),
            // `*os.popen(cmd)` in a bare tuple, a subscript, a lone list element or a print
            // argument: the tree (tree-sitter's reading) calls `(*os).popen` or `*os.popen`,
            // Python calls `os.popen` and splats the result.
            "parenthesized_expression" | "list_splat" => node
                .first_named()
                .and_then(|inner| self.resolve_within(inner, steps)),
            // `(p := os.popen)(cmd)`
            "named_expression" => self.resolve_within(node.field("value")?, steps),
            "call" => {
                let function = node.field("function")?;
                // `RUNNERS.get("sh")`, `RUNNERS.get(kind, print)`.
                if function.kind_name() == "attribute"
                    && function
                        .field("attribute")
                        .is_some_and(|member| self.text(member) == "get")
                    && let Some(holder) = function.field("object")
                    && let Some(value) = self.dict_value(
                        holder,
                        node.field("arguments")
                            .and_then(|arguments| named_children(arguments).first().copied()),
                        steps,
                    )
                {
                    return Some(value);
                }
                let resolved = self.resolve_within(function, steps)?;
                let arguments = named_children(node.field("arguments")?);
                match resolved {
                    Value::Function(Function::Getattr) => {
                        let Value::Module(module) =
                            self.resolve_within(*arguments.first()?, steps)?
                        else {
                            return None;
                        };
                        let names = self.const_strs(*arguments.get(1)?);
                        if names.is_empty() && matches!(module, Module::Os | Module::Subprocess) {
                            // `getattr(os, name)` with a name we cannot know: as bad as the
                            // worst member, a shell command.
                            return Some(Value::Function(Function::ShellCommand));
                        }
                        names.iter().find_map(|name| member(module, name))
                    }
                    Value::Function(Function::ImportModule) => {
                        (self.const_strs(*arguments.first()?).iter())
                            .find_map(|name| module_named(name))
                            .map(Value::Module)
                    }
                    // `functools.partial(subprocess.run, shell=True)`: the function, whose
                    // first argument is a shell command when `shell` is bound true. Only with
                    // keywords bound: a bound positional argument would shift every argument
                    // of the calls (not followed).
                    Value::Function(Function::Partial) => {
                        let (keywords, positional): (Vec<_>, Vec<_>) = arguments
                            .iter()
                            .partition(|argument| argument.kind_name() == "keyword_argument");
                        let [function] = positional.as_slice() else {
                            return None;
                        };
                        let resolved = self.resolve_within(*function, steps)?;
                        let shell = keywords.iter().any(|keyword| {
                            keyword
                                .field("name")
                                .is_some_and(|name| self.text(name) == "shell")
                                && keyword
                                    .field("value")
                                    .is_some_and(|value| !self.is_falsy_literal(value))
                        });
                        match resolved {
                            Value::Function(Function::Subprocess { .. }) if shell => {
                                Some(Value::Function(Function::ShellCommand))
                            }
                            other => Some(other),
                        }
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A string known at analysis time: [`Analyzer::const_strs`] with a single value.
    fn const_str(&self, node: PyNode<'_>) -> Option<String> {
        let mut values = self.const_strs(node);
        if values.len() == 1 {
            values.pop()
        } else {
            None
        }
    }

    /// The strings an expression may be at analysis time: a literal, a constant name, both
    /// sides of a conditional, a `+` of those (at most [`MAX_CONSTANT_VALUES`] values, each
    /// at most [`CONSTANT_LENGTH`] long). Empty when unknown.
    fn const_strs(&self, node: PyNode<'_>) -> Vec<String> {
        match node.kind_name() {
            "identifier" => self
                .constant_values
                .get(&self.key_of(node))
                .cloned()
                .unwrap_or_default(),
            "conditional_expression" => {
                let parts = named_children(node);
                let (Some(then), Some(other)) = (parts.first(), parts.get(2)) else {
                    return Vec::new();
                };
                let (mut values, others) = (self.const_strs(*then), self.const_strs(*other));
                if values.is_empty() || others.is_empty() {
                    return Vec::new();
                }
                for value in others {
                    if !values.contains(&value) && values.len() < MAX_CONSTANT_VALUES {
                        values.push(value);
                    }
                }
                values
            }
            "binary_operator" => {
                let operator = node.field("operator").map(|op| self.text(op));
                let (Some("+"), Some(left), Some(right)) =
                    (operator, node.field("left"), node.field("right"))
                else {
                    return Vec::new();
                };
                let (lefts, rights) = (self.const_strs(left), self.const_strs(right));
                let mut values = Vec::new();
                for left in &lefts {
                    for right in &rights {
                        if values.len() < MAX_CONSTANT_VALUES
                            && left.len() + right.len() <= CONSTANT_LENGTH
                        {
                            values.push(format!("{left}{right}"));
                        }
                    }
                }
                values
            }
            "parenthesized_expression" => node
                .first_named()
                .map(|inner| self.const_strs(inner))
                .unwrap_or_default(),
            _ => self.string_literal_text(node).into_iter().collect(),
        }
    }

    fn string_literal_text(&self, node: PyNode<'_>) -> Option<String> {
        match node.kind_name() {
            "string" if !has_interpolation(node) => {
                let mut content = String::new();
                for child in named_children(node) {
                    if child.kind_name() == "string_content" {
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
                .first_named()
                .and_then(|inner| self.string_literal_text(inner)),
            _ => None,
        }
    }

    fn is_literal(&self, node: PyNode<'_>) -> bool {
        match node.kind_name() {
            "integer" | "float" | "true" | "false" | "none" => true,
            "identifier" => self.constants.contains(&self.key_of(node)),
            "conditional_expression" => {
                let parts = named_children(node);
                parts.len() == 3
                    && parts.first().is_some_and(|then| self.is_literal(*then))
                    && parts.get(2).is_some_and(|other| self.is_literal(*other))
            }
            // Every `{}` a constant, and no `{}` inside a format spec (`f"{c:{width}}"`).
            "string" if has_interpolation(node) => named_children(node)
                .iter()
                .filter(|child| child.kind_name() == "interpolation")
                .all(|child| {
                    child
                        .field("expression")
                        .is_some_and(|inner| self.is_literal(inner))
                        && child.field("format_specifier").is_none_or(|spec| {
                            named_children(spec)
                                .iter()
                                .all(|part| part.kind_name() != "format_expression")
                        })
                }),
            // `+` of strings, `/` of paths.
            "binary_operator" => {
                let operator = node.field("operator").map(|op| self.text(op));
                matches!(operator, Some("+" | "/"))
                    && node.field("left").is_some_and(|left| self.is_literal(left))
                    && node
                        .field("right")
                        .is_some_and(|right| self.is_literal(right))
            }
            // `shutil.which("soffice") or "/usr/bin/soffice"`.
            "boolean_operator" => {
                node.field("left").is_some_and(|left| self.is_literal(left))
                    && node
                        .field("right")
                        .is_some_and(|right| self.is_literal(right))
            }
            // The running interpreter.
            "attribute" => self.text(node) == "sys.executable",
            "call" => self.is_literal_call(node),
            _ => self.string_literal_text(node).is_some(),
        }
    }

    /// A call whose value is fixed by the program, not by its input: `shutil.which("git")`,
    /// `Path.home()`, `str(..)`, `Path(..)`, `os.path.join(..)`, `os.path.expanduser(..)` of
    /// constants, and a module-level function whose every `return` is a constant
    /// (`_get_npx_command()` returning `"npx"` or `None`).
    fn is_literal_call(&self, call: PyNode<'_>) -> bool {
        let (Some(callee), Some(arguments)) = (call.field("function"), call.field("arguments"))
        else {
            return false;
        };
        let arguments = named_children(arguments);
        let constant_arguments = || {
            arguments
                .iter()
                .all(|a| a.kind_name() != "keyword_argument" && self.is_literal(*a))
        };
        let name = self.text(callee);
        let last = name.rsplit('.').next().unwrap_or(name);
        match name {
            "Path.home" | "pathlib.Path.home" | "os.getcwd" | "Path.cwd" => {
                return arguments.is_empty();
            }
            "shutil.which" | "which" | "str" | "os.fspath" | "Path" | "pathlib.Path"
            | "PurePath" | "os.path.join" | "os.path.expanduser" | "os.path.abspath"
            | "os.path.realpath" | "os.path.normpath" => return constant_arguments(),
            _ => {}
        }
        // `Path.home().joinpath("x")`, `p.resolve()` of a constant path.
        if callee.kind_name() == "attribute"
            && matches!(last, "joinpath" | "resolve" | "expanduser" | "absolute")
        {
            return callee
                .field("object")
                .is_some_and(|object| self.is_literal(object))
                && constant_arguments();
        }
        if callee.kind_name() != "identifier" {
            return false;
        }
        let Some(returns) = self.returns.get(name) else {
            return false;
        };
        if returns.is_empty() || !self.deciding.borrow_mut().insert(name) {
            return false;
        }
        let constant = returns.iter().all(|value| {
            value.is_none_or(|value| self.is_literal(value) && self.const_like(value))
        });
        self.deciding.borrow_mut().remove(name);
        constant
    }

    /// `False`, `None`, `0`, `''`: the values of `shell=` that keep the shell off.
    fn is_falsy_literal(&self, node: PyNode<'_>) -> bool {
        match node.kind_name() {
            "false" | "none" => true,
            "integer" => self.text(node) == "0",
            _ => self
                .string_literal_text(node)
                .is_some_and(|text| text.is_empty()),
        }
    }

    fn mentions_taint(&self, call: PyNode<'_>, argument: PyNode<'_>) -> bool {
        self.tainted_scopes
            .containing(call)
            .any(|names| self.reads.any_within(names, argument))
            || self.reads_tainted_global(argument)
    }

    /// Where `name` is read inside `node`: the first [`MAX_GLOBAL_READS`] of them, so a
    /// check per sink stays linear.
    fn reads_within(&self, node: PyNode<'_>, name: &str) -> impl Iterator<Item = usize> + '_ {
        let offsets = self.reads.offsets_of(name);
        let first = offsets.partition_point(|offset| *offset < node.start_byte());
        let end = node.end_byte();
        offsets
            .get(first..)
            .unwrap_or(&[])
            .iter()
            .copied()
            .take_while(move |offset| *offset < end)
            .take(MAX_GLOBAL_READS)
    }

    /// Does `function` itself (not a function nested in it) read the module's `name`?
    fn reads_module_name(&self, function: PyNode<'_>, name: &str) -> bool {
        let Some(names) = self.names.as_ref() else {
            return false;
        };
        self.reads_within(function, name).any(|offset| {
            function
                .descendant_for_byte_range(offset, offset + name.len())
                .is_some_and(|read| {
                    enclosing_function(read) == Some(function)
                        && names.scope_of_read(read, name) == names.root()
                })
        })
    }

    /// Does `node` read a module name that holds tool input ([`Analyzer::tainted_globals`]),
    /// where the read refers to the module's binding (not a local of the same name)?
    fn reads_tainted_global(&self, node: PyNode<'_>) -> bool {
        let Some(names) = self.names.as_ref() else {
            return false;
        };
        self.tainted_globals.iter().any(|name| {
            self.reads_within(node, name).any(|offset| {
                node.descendant_for_byte_range(offset, offset + name.len())
                    .is_some_and(|read| names.scope_of_read(read, name) == names.root())
            })
        })
    }

    /// Can tool input become an option among `arguments` (in order)? No once a literal
    /// `--` comes first; not for an element that starts with literal text which is not an
    /// option of its own (`f"--unified={n}"`, `f"refs/{x}"`; `f"-{x}"` still can); not for a
    /// name the enclosing function refuses when it starts with `-` before the call
    /// (`if x.startswith("-"): raise ...`).
    /// `program` is the program's literal name, when known, for its short options
    /// ([`takes_value`]).
    fn can_inject_flag(
        &self,
        call: PyNode<'_>,
        program: Option<&str>,
        subcommand: Option<&str>,
        arguments: &[PyNode<'_>],
    ) -> bool {
        let takes_value = |program, option: &str| takes_value_in(program, subcommand, option);
        let mut value_next = false;
        for &argument in arguments {
            let literal = self.string_literal_text(argument);
            if literal.as_deref() == Some("--") {
                return false;
            }
            // `["--since", since]`: the value of an option that takes one.
            let is_value = std::mem::replace(
                &mut value_next,
                literal.as_deref().is_some_and(|o| takes_value(program, o)),
            );
            if is_value {
                continue;
            }
            // `repo.git.log(*args)`: each element the list was built from.
            if argument.kind_name() == "list_splat"
                && let Some(elements) = argument.first_named().and_then(|n| self.list_elements(n))
            {
                let mut value_next = false;
                for element in elements {
                    let option = self.string_literal_text(element);
                    let is_value = std::mem::replace(
                        &mut value_next,
                        option.as_deref().is_some_and(|o| takes_value(program, o)),
                    );
                    if !is_value && self.injectable(call, element) {
                        return true;
                    }
                }
                continue;
            }
            if self.injectable(call, argument) {
                return true;
            }
        }
        false
    }

    /// Is the argv name `name` bound to one list only, never grown, and read only at `call`
    /// within its function?
    fn read_once_here(&self, name: PyNode<'_>, call: PyNode<'_>) -> bool {
        let key = self.key_of(name);
        let Some(&[list]) = self.lists.get(&key).map(Vec::as_slice) else {
            return false;
        };
        if self.grown(name) {
            return false;
        }
        // The name where the list is bound to it is the other read the walk counts.
        let bound_at = list
            .parent()
            .filter(|assignment| assignment.kind_name() == "assignment")
            .and_then(|assignment| assignment.field("left"))
            .map(|left| left.start_byte());
        let (start, end) = enclosing_function(call).map_or((0, usize::MAX), |function| {
            (function.start_byte(), function.end_byte())
        });
        let reads = self.reads.offsets_of(self.text(name));
        let first = reads.partition_point(|offset| *offset < start);
        let within = reads
            .get(first..)
            .unwrap_or(&[])
            .iter()
            .take_while(|offset| **offset < end)
            .filter(|offset| Some(**offset) != bound_at)
            .take(2)
            .count();
        within == 1 && call.start_byte() <= name.start_byte() && name.end_byte() <= call.end_byte()
    }

    /// Does `element` start with an `int` parameter of a tool handler that the handler never
    /// rebinds (`f"{local_port}:{pod_port}"` with `local_port: int`)? The SDK validates
    /// the argument against the annotation, so the text is digits with at most a leading
    /// `-`: an option made of digits, which runs no code.
    fn starts_with_int_parameter(&self, element: PyNode<'_>) -> bool {
        let first = match element.kind_name() {
            "identifier" => Some(element),
            "string" => named_children(element)
                .into_iter()
                .find(|part| part.kind_name() != "string_start")
                .filter(|part| part.kind_name() == "interpolation")
                .and_then(|part| part.first_named()),
            "call"
                if element
                    .field("function")
                    .is_some_and(|f| self.text(f) == "str") =>
            {
                element
                    .field("arguments")
                    .and_then(|arguments| named_children(arguments).first().copied())
            }
            _ => None,
        };
        let Some(first) = first.filter(|first| first.kind_name() == "identifier") else {
            return false;
        };
        let name = self.text(first);
        let Some(function) = enclosing_function(first).filter(|f| self.handlers.contains(&f.id()))
        else {
            return false;
        };
        let annotated_int = function
            .field("parameters")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .any(|parameter| {
                let declared = match parameter.kind_name() {
                    "typed_parameter" => parameter.first_named(),
                    "typed_default_parameter" => parameter.field("name"),
                    _ => None,
                };
                declared.is_some_and(|declared| self.text(declared) == name)
                    && parameter
                        .field("type")
                        .is_some_and(|t| self.text(t) == "int")
            });
        let (scope, _) = self.key_of(first);
        annotated_int
            && self
                .names
                .as_ref()
                .is_some_and(|names| names.bindings_of(scope, name).len() == 1)
    }

    /// The program of `[prog, ..] + rest` when it is a literal that is neither a shell nor a
    /// program that runs the next argument (`["sh", "-c"] + [cmd]` stays a dynamic argv).
    fn literal_program_of_sum(&self, argv: PyNode<'_>) -> Option<String> {
        if argv.kind_name() != "binary_operator"
            || argv.field("operator").map(|o| self.text(o)) != Some("+")
        {
            return None;
        }
        let left = argv.field("left")?;
        if !matches!(left.kind_name(), "list" | "tuple") {
            return None;
        }
        let program = self.const_str(*named_children(left).first()?)?;
        (!crate::rule::is_shell_program(&program) && !crate::rule::is_program_runner(&program))
            .then_some(program)
    }

    /// Can input become an option among the elements after the program of any list literal
    /// the name `key` is bound to?
    fn bound_list_injectable(
        &self,
        call: PyNode<'_>,
        key: &(ScopeId, String),
        program: Option<&str>,
        subcommand: Option<&str>,
    ) -> bool {
        self.lists.get(key).into_iter().flatten().any(|bound| {
            let elements = named_children(*bound);
            let rest = elements.get(1..).unwrap_or(&[]);
            self.can_inject_flag(call, program, subcommand, rest)
        })
    }

    /// The pieces added to the list `key` names after it is bound, each in its order:
    /// `+= [..]` and `.extend([..])` literals, `.append(x)`; `None` when some addition is not
    /// one of these (`.insert`, `.extend(other)`).
    fn growth_pieces(&self, key: &(ScopeId, String)) -> Option<Vec<Vec<PyNode<'t>>>> {
        let mut pieces: Vec<Vec<PyNode<'t>>> = self
            .additions
            .get(key)
            .into_iter()
            .flatten()
            .map(|right| named_children(*right))
            .collect();
        for (method, arguments) in self.growth.get(key).into_iter().flatten() {
            match (*method, arguments.as_slice()) {
                ("append", [value]) => pieces.push(vec![*value]),
                ("extend", [value]) if matches!(value.kind_name(), "list" | "tuple") => {
                    pieces.push(named_children(*value));
                }
                _ => return None,
            }
        }
        Some(pieces)
    }

    /// Is the list `name` is bound to grown after it is bound (`append`, `extend`,
    /// `insert`, `+=`, a literal added to something)?
    fn grown(&self, name: PyNode<'_>) -> bool {
        let key = self.key_of(name);
        self.opaque_growth.contains(&key)
            || self.additions.contains_key(&key)
            || self.growth.get(&key).is_some_and(|g| !g.is_empty())
    }

    /// A tainted element that input can start.
    fn injectable(&self, call: PyNode<'_>, element: PyNode<'_>) -> bool {
        !self.starts_with_int_parameter(element)
            && self.mentions_taint(call, element)
            && !self.literal_prefix_keeps_input_inside(element)
            && !self.refused_when_dashed(call, element)
            && !self.untainted_first(call, element)
            && !self.name_dash_free(element, 0)
    }

    /// Can no value of `node` start with `-`? `os.path.realpath(..)`, `os.path.abspath(..)`
    /// (absolute paths), `os.path.join` of one first, `Path(..).resolve()` and `str()` of it,
    /// a string with literal text first (not dashes), a call of a module function (or of an
    /// imported one, [`Inbound::dash_free`]) none of whose returns can, and a local name
    /// bound in its function only to such values. `depth` bounds the chain of names.
    fn dash_free(&self, node: PyNode<'_>, depth: usize) -> bool {
        if depth > DASH_FREE_DEPTH {
            return false;
        }
        match node.kind_name() {
            "parenthesized_expression" => node
                .first_named()
                .is_some_and(|inner| self.dash_free(inner, depth + 1)),
            "string" | "binary_operator" => self.literal_prefix_keeps_input_inside(node),
            "identifier" => self.name_dash_free(node, depth + 1),
            "call" => {
                if self.dash_free_calls.contains(&node.start_byte()) {
                    return true;
                }
                let Some(callee) = node.field("function") else {
                    return false;
                };
                let arguments = node
                    .field("arguments")
                    .map(named_children)
                    .unwrap_or_default();
                let first = arguments.first().copied();
                match self.text(callee) {
                    "os.path.realpath" | "os.path.abspath" | "posixpath.realpath"
                    | "posixpath.abspath" => return true,
                    "os.path.join" | "posixpath.join" | "str" => {
                        return first.is_some_and(|first| {
                            first.kind_name() != "list_splat" && self.dash_free(first, depth + 1)
                        });
                    }
                    _ => {}
                }
                // `Path(p).resolve()`, `pathlib.Path(p).expanduser().absolute()`.
                if callee.kind_name() == "attribute"
                    && callee
                        .field("attribute")
                        .is_some_and(|a| matches!(self.text(a), "resolve" | "absolute"))
                    && callee.field("object").is_some_and(|o| self.path_object(o))
                {
                    return true;
                }
                callee.kind_name() == "identifier"
                    && self.returns_dash_free(self.text(callee), depth + 1)
            }
            _ => false,
        }
    }

    /// `Path(p)`, `pathlib.Path(p)`, and a chain of `Path` methods on one
    /// (`Path(p).expanduser()`): a `pathlib` path object.
    fn path_object(&self, node: PyNode<'_>) -> bool {
        let mut node = node;
        for _ in 0..DASH_FREE_DEPTH {
            let Some(callee) = (node.kind_name() == "call")
                .then(|| node.field("function"))
                .flatten()
            else {
                return false;
            };
            if matches!(self.text(callee), "Path" | "pathlib.Path") {
                return true;
            }
            let method = callee.field("attribute").map(|a| self.text(a));
            match (callee.field("object"), method) {
                (
                    Some(object),
                    Some("expanduser" | "resolve" | "absolute" | "joinpath" | "with_name"),
                ) => node = object,
                _ => return false,
            }
        }
        false
    }

    /// Can no return value of the module function `name` start with `-`?
    fn returns_dash_free(&self, name: &str, depth: usize) -> bool {
        let Some((key, returns)) = self.returns.get_key_value(name) else {
            return false;
        };
        if returns.is_empty() || !self.deciding.borrow_mut().insert(key) {
            return false;
        }
        // A bare `return` is `None`, which no argv takes for an option.
        let free = returns
            .iter()
            .all(|value| value.is_none_or(|value| self.dash_free(value, depth)));
        self.deciding.borrow_mut().remove(key);
        free
    }

    /// Is `name` bound in `function`, from byte `after` on, only by plain assignments of
    /// values that cannot start with `-` (no `+=`, loop, `:=`, `with .. as`, unpacking or
    /// `global`)?
    fn bound_dash_free(
        &self,
        function: PyNode<'_>,
        name: &str,
        after: usize,
        depth: usize,
    ) -> bool {
        let key = (function.id(), name.to_string(), after);
        if let Some(known) = self.dash_free_bindings.borrow().get(&key) {
            return *known;
        }
        self.dash_free_bindings
            .borrow_mut()
            .insert(key.clone(), false);
        let free = self.bound_dash_free_walk(function, name, after, depth);
        self.dash_free_bindings.borrow_mut().insert(key, free);
        free
    }

    /// [`Analyzer::bound_dash_free`], walking the function.
    fn bound_dash_free_walk(
        &self,
        function: PyNode<'_>,
        name: &str,
        after: usize,
        depth: usize,
    ) -> bool {
        // A nested function that writes the name through `nonlocal` (or the function,
        // through `global`) may run at any point, wherever it is written.
        if inside(&self.declaration_statements, function)
            .iter()
            .any(|statement| {
                named_children(*statement)
                    .into_iter()
                    .any(|declared| self.text(declared) == name)
            })
        {
            return false;
        }
        let mut assigned = false;
        let mut stack = vec![function];
        while let Some(node) = stack.pop() {
            if node.end_byte() <= after {
                continue;
            }
            let Some(budget) = self.dash_free_budget.get().checked_sub(1) else {
                return false;
            };
            self.dash_free_budget.set(budget);
            let binds = |target: Option<PyNode<'_>>| {
                target.is_some_and(|target| {
                    let mut names = Vec::new();
                    bound_names(target, self.source, &mut names);
                    names.iter().any(|bound| bound == name)
                })
            };
            if node.start_byte() >= after {
                match node.kind_name() {
                    "assignment" => {
                        let left = node.field("left");
                        if left
                            .is_some_and(|l| l.kind_name() == "identifier" && self.text(l) == name)
                        {
                            if !node
                                .field("right")
                                .is_some_and(|r| self.dash_free(r, depth))
                            {
                                return false;
                            }
                            assigned = true;
                        } else if binds(left) {
                            return false;
                        }
                    }
                    "augmented_assignment" | "for_statement" | "for_in_clause"
                        if binds(node.field("left")) =>
                    {
                        return false;
                    }
                    "named_expression"
                        if node.field("name").is_some_and(|n| self.text(n) == name) =>
                    {
                        return false;
                    }
                    // `case {"path": path}:` captures a new value.
                    "case_pattern" => {
                        let mut captured = Vec::new();
                        pattern_captures(node, self.source, &mut captured);
                        if captured.iter().any(|bound| bound == name) {
                            return false;
                        }
                    }
                    // `with open(p) as name`, `except E as name`.
                    "as_pattern_target" | "global_statement" | "nonlocal_statement"
                        if self
                            .text(node)
                            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .any(|word| word == name) =>
                    {
                        return false;
                    }
                    _ => {}
                }
            }
            stack.extend(named_children(node));
        }
        assigned
    }

    /// A plain name (in a function) no value of which can start with `-` where `at` reads
    /// it: bound in its function only to such values (and no parameter), or re-bound to
    /// one by a statement of the function body's top level before `at` and after that only
    /// to such values (`app_path = validate_path(app_path)`, where `validate_path` returns
    /// `os.path.realpath(..)`).
    fn name_dash_free(&self, at: PyNode<'_>, depth: usize) -> bool {
        if at.kind_name() != "identifier" {
            return false;
        }
        let name = self.text(at);
        let Some(function) = enclosing_function(at) else {
            return false;
        };
        let parameter = parameter_names(function, self.source)
            .iter()
            .flatten()
            .any(|parameter| parameter == name);
        if !parameter && self.bound_dash_free(function, name, function.start_byte(), depth) {
            return true;
        }
        let key = (function.id(), name.to_string());
        let rebinding = {
            let mut rebindings = self.rebindings.borrow_mut();
            let statements = rebindings.entry(key).or_insert_with(|| {
                let body = function
                    .field("body")
                    .map(named_children)
                    .unwrap_or_default();
                body.into_iter()
                    .filter(|statement| {
                        statement.kind_name() == "expression_statement"
                            && statement.first_named().is_some_and(|assignment| {
                                assignment.kind_name() == "assignment"
                                    && assignment.field("left").is_some_and(|l| {
                                        l.kind_name() == "identifier" && self.text(l) == name
                                    })
                            })
                    })
                    .map(|statement| (statement.start_byte(), statement.end_byte()))
                    .collect()
            });
            let before = statements.partition_point(|(_, end)| *end <= at.start_byte());
            before
                .checked_sub(1)
                .and_then(|last| statements.get(last).copied())
        };
        rebinding.is_some_and(|(start, _)| self.bound_dash_free(function, name, start, depth))
    }

    /// `f"{repository_uri}:{tag}"` with an untainted first `{}`: the input comes after it.
    fn untainted_first(&self, call: PyNode<'_>, element: PyNode<'_>) -> bool {
        element.kind_name() == "string"
            && named_children(element)
                .into_iter()
                .find(|part| part.kind_name() != "string_start")
                .is_some_and(|first| {
                    first.kind_name() == "interpolation" && !self.mentions_taint(call, first)
                })
    }

    /// Every element a name bound only to list and tuple literals may hold: theirs, and what
    /// `append`/`extend`/`insert` add to it. `None` for a name not known to be such a list.
    fn list_elements(&self, name: PyNode<'_>) -> Option<Vec<PyNode<'t>>> {
        if name.kind_name() != "identifier" {
            return None;
        }
        let key = self.key_of(name);
        let mut elements: Vec<PyNode<'t>> = self
            .lists
            .get(&key)?
            .iter()
            .flat_map(|list| named_children(*list))
            .collect();
        for (method, arguments) in self.growth.get(&key).into_iter().flatten() {
            let added = match *method {
                "insert" => arguments.get(1..).unwrap_or(&[]),
                _ => arguments.as_slice(),
            };
            for value in added {
                match (*method, value.kind_name()) {
                    ("extend", "list" | "tuple") => elements.extend(named_children(*value)),
                    _ => elements.push(*value),
                }
            }
        }
        Some(elements)
    }

    /// `f"--unified={n}"`, `"refs/" + x`: the element starts with literal text, so input
    /// cannot start it; unless that text is only dashes (`f"-{x}"` is `-c...`).
    fn literal_prefix_keeps_input_inside(&self, argument: PyNode<'_>) -> bool {
        let prefix = match argument.kind_name() {
            "string" => {
                let mut prefix = String::new();
                for part in named_children(argument) {
                    match part.kind_name() {
                        "string_start" => {}
                        "string_content" => prefix.push_str(self.text(part)),
                        _ => break,
                    }
                }
                prefix
            }
            "binary_operator" => {
                let left = argument
                    .field("left")
                    .and_then(|left| self.string_literal_text(left))
                    .unwrap_or_default();
                match argument.field("operator").map(|o| self.text(o)) {
                    Some("+") => left,
                    // `"%s..%s" % (a, b)`: only the text before the first conversion.
                    Some("%") => format_prefix(&left),
                    _ => String::new(),
                }
            }
            _ => String::new(),
        };
        !prefix.is_empty() && (prefix.contains('=') || !prefix.starts_with('-'))
    }

    /// A plain name that an `if name.startswith("-")` (or `'-'`) with a `raise` or `return`
    /// in its body refuses, earlier in the function that makes the call; or that an earlier
    /// call there hands to a function of this module that refuses it so
    /// (`self._validate_ref(ref)`, see [`Analyzer::dash_refusals`]).
    fn refused_when_dashed(&self, call: PyNode<'_>, argument: PyNode<'_>) -> bool {
        if argument.kind_name() != "identifier" {
            return false;
        }
        let name = self.text(argument);
        let Some(function) = enclosing_function(call) else {
            return false;
        };
        self.dash_guarded_in(function, name, call.start_byte())
            || self.dash_refusals.iter().any(|(offset, refused)| {
                *refused == name && function.start_byte() <= *offset && *offset < call.start_byte()
            })
    }

    /// Whether an `if name.startswith("-")` (also after `.strip()`/`.lstrip()`) whose body
    /// raises or returns comes in `function` before byte `before`.
    fn dash_guarded_in(&self, function: PyNode<'_>, name: &str, before: usize) -> bool {
        let guards = [
            format!("{name}.startswith(\"-\")"),
            format!("{name}.startswith('-')"),
            format!("{name}.strip().startswith(\"-\")"),
            format!("{name}.strip().startswith('-')"),
            format!("{name}.lstrip().startswith(\"-\")"),
            format!("{name}.lstrip().startswith('-')"),
        ];
        self.guard_before(function, before, |condition| {
            let text = self.text(condition);
            guards.iter().any(|guard| text.contains(guard.as_str()))
        })
    }

    /// Whether `function` has, before byte `before`, an `if` whose condition satisfies
    /// `refuses` and whose body raises or returns.
    fn guard_before(
        &self,
        function: PyNode<'_>,
        before: usize,
        mut refuses: impl FnMut(PyNode<'_>) -> bool,
    ) -> bool {
        inside(&self.if_statements, function)
            .iter()
            .take_while(|node| node.start_byte() < before)
            .any(|node| {
                if let (Some(condition), Some(body)) =
                    (node.field("condition"), node.field("consequence"))
                    && refuses(condition)
                {
                    named_children(body)
                        .iter()
                        .any(|s| matches!(s.kind_name(), "raise_statement" | "return_statement"))
                } else {
                    false
                }
            })
    }

    /// The programs an argv name is pinned to before the call: an `if` that raises or
    /// returns unless `name[0]` is one constant (`if not cmd or cmd[0] != "finch": raise`)
    /// or one of a literal collection of constants (`if cmd[0] not in ("git", "gh"):`).
    fn pinned_programs(&self, call: PyNode<'_>, argv: PyNode<'_>) -> Option<Vec<String>> {
        if argv.kind_name() != "identifier" {
            return None;
        }
        let name = self.text(argv);
        let function = enclosing_function(call)?;
        let mut programs = None;
        self.guard_before(function, call.start_byte(), |condition| {
            programs = disjuncts(condition)
                .into_iter()
                .find_map(|test| self.other_programs_refused(test, name));
            programs.is_some()
        });
        programs.or_else(|| {
            self.program_pins
                .iter()
                .filter(|pin| {
                    pin.name == name
                        && pin.block.0 <= call.start_byte()
                        && call.end_byte() <= pin.block.1
                        && pin.after <= call.start_byte()
                        && function.start_byte() <= pin.after
                        && !self.touched_between(function, name, pin.after, call.start_byte())
                })
                .map(|pin| pin.programs.clone())
                .next()
        })
    }

    /// Whether code in `function` between bytes `from` and `to` may change what `name`
    /// holds: binds it (`cmd = ..`, `for cmd in ..`), assigns into it (`cmd[0] = ..`),
    /// calls a method on it (`cmd.insert(0, "sh")`), hands it to a call or deletes from it.
    fn touched_between(&self, function: PyNode<'_>, name: &str, from: usize, to: usize) -> bool {
        let names_it = |node: PyNode<'_>| {
            let mut found = false;
            walk(node, |n| {
                found |= n.kind_name() == "identifier" && self.text(n) == name;
            });
            found
        };
        let mut stack = vec![function];
        while let Some(node) = stack.pop() {
            if node.end_byte() <= from || node.start_byte() >= to {
                continue;
            }
            let inside = from <= node.start_byte() && node.end_byte() <= to;
            if inside {
                let touched = match node.kind_name() {
                    "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                        node.field("left").is_some_and(names_it)
                    }
                    "named_expression" => node.field("name").is_some_and(names_it),
                    "as_pattern" | "delete_statement" | "global_statement"
                    | "nonlocal_statement" => names_it(node),
                    "attribute" => node.field("object").is_some_and(|object| {
                        object.kind_name() == "identifier" && self.text(object) == name
                    }),
                    // `fill(cmd)`: a call may change the list it is handed.
                    "argument_list" => named_children(node).iter().any(|argument| {
                        let value = match argument.kind_name() {
                            "keyword_argument" => argument.field("value"),
                            _ => Some(*argument),
                        };
                        value.is_some_and(|v| v.kind_name() == "identifier" && self.text(v) == name)
                    }),
                    _ => false,
                };
                if touched {
                    return true;
                }
            }
            stack.extend(named_children(node));
        }
        false
    }

    /// The programs a function of this module lets `parameter[0]` be: a statement of its
    /// body, with no `return` before it, that is `if <test> or ..: raise ..` where the test
    /// refuses every other program (`if cmd[0] not in ("ruff", "uv")`, also on a name bound
    /// only to `cmd[0]` or its `os.path.basename`, maybe with a literal suffix cut after
    /// `endswith`). A `return` in the guard would only leave the check, so it must raise;
    /// and the parameter must not be rebound in the function.
    fn helper_pinned_programs(&self, function: PyNode<'_>, parameter: &str) -> Option<Vec<String>> {
        let body = function.field("body")?;
        for statement in named_children(body) {
            let mut returns = false;
            walk(statement, |n| {
                returns |= n.kind_name() == "return_statement"
            });
            if statement.kind_name() == "if_statement"
                && let (Some(condition), Some(consequence)) =
                    (statement.field("condition"), statement.field("consequence"))
                && named_children(consequence)
                    .iter()
                    .any(|s| s.kind_name() == "raise_statement")
                && let Some(programs) = disjuncts(condition)
                    .into_iter()
                    .find_map(|test| self.programs_let_through(test, parameter, function))
            {
                return Some(programs);
            }
            if returns {
                return None;
            }
        }
        None
    }

    /// `p[0] != "x"`, `p[0] not in ("x", "y")` or `not in ALLOWED` (a name bound only to
    /// literals of strings, read nowhere but on the right of `in`/`not in`), also with an
    /// alias of `p[0]` on the left (see [`Analyzer::program_alias`]): the programs it lets
    /// through, for a parameter `p` of `function` that nothing in it rebinds.
    fn programs_let_through(
        &self,
        test: PyNode<'_>,
        parameter: &str,
        function: PyNode<'_>,
    ) -> Option<Vec<String>> {
        if test.kind_name() != "comparison_operator" {
            return None;
        }
        let (Some(operator), [left, right]) = (test.field("operators"), &named_children(test)[..])
        else {
            return None;
        };
        let mut arms = Vec::new();
        let first = match left.kind_name() {
            "subscript" => self.first_of(*left, parameter, function),
            "identifier" => self.program_alias(*left, parameter, function, &mut arms),
            _ => false,
        };
        if !first {
            return None;
        }
        let programs = match operator.kind_name() {
            "!=" => vec![self.string_literal_text(*right)?],
            "not in" => match right.kind_name() {
                "tuple" | "list" | "set" => named_children(*right)
                    .iter()
                    .map(|element| self.string_literal_text(*element))
                    .collect::<Option<Vec<_>>>()?,
                "identifier" => self.membership_only_collection(*right)?,
                _ => return None,
            },
            _ => return None,
        };
        // `b = cmd[0] if strict else "ruff"`: the literal arm passes the check whatever
        // program runs.
        if arms.iter().any(|arm| programs.contains(arm)) {
            return None;
        }
        Some(programs)
    }

    /// `p[0]` for the parameter `p` of `function`, bound there once (by the parameter).
    fn first_of(&self, subscript: PyNode<'_>, parameter: &str, function: PyNode<'_>) -> bool {
        let (Some(value), Some(index)) = (subscript.field("value"), subscript.field("subscript"))
        else {
            return false;
        };
        value.kind_name() == "identifier"
            && self.text(value) == parameter
            && self.text(index) == "0"
            && contains(function, value)
            && self.bound_once_in_function(value)
    }

    /// Whether the name read at `identifier` belongs to a function scope and has one
    /// binding there.
    fn bound_once_in_function(&self, identifier: PyNode<'_>) -> bool {
        let Some(names) = self.names.as_ref() else {
            return false;
        };
        let (scope, name) = self.key_of(identifier);
        scope != names.root() && names.bindings_of(scope, &name).len() == 1
    }

    /// A local name of `function` whose every binding is an assignment of `p[0]`,
    /// `os.path.basename(p[0])`, either of those with a string literal as the other arm of a
    /// conditional (the literals go to `arms`), or `name[:-N]` inside `if
    /// name.endswith("<N characters>")` (a literal suffix cut: `ruff.exe` is `ruff`).
    fn program_alias(
        &self,
        alias: PyNode<'_>,
        parameter: &str,
        function: PyNode<'_>,
        arms: &mut Vec<String>,
    ) -> bool {
        let Some(names) = self.names.as_ref() else {
            return false;
        };
        let (scope, name) = self.key_of(alias);
        if scope == names.root() {
            return false;
        }
        let bindings = names.bindings_of(scope, &name);
        !bindings.is_empty()
            && bindings.iter().all(|binding| match binding {
                Binding::Assign { right, plus: false } => {
                    contains(function, *right)
                        && (self.first_element(*right, parameter, function, arms)
                            || self.suffix_cut(*right, &name))
                }
                _ => false,
            })
    }

    /// `p[0]`, `os.path.basename(p[0])`, or a conditional of one of those and a literal.
    fn first_element(
        &self,
        value: PyNode<'_>,
        parameter: &str,
        function: PyNode<'_>,
        arms: &mut Vec<String>,
    ) -> bool {
        match value.kind_name() {
            "subscript" => self.first_of(value, parameter, function),
            "call" => {
                let callee = value.field("function").map(|f| self.text(f));
                let arguments = value.field("arguments").map(named_children);
                matches!(callee, Some("os.path.basename" | "posixpath.basename"))
                    && arguments.is_some_and(|arguments| match arguments[..] {
                        [argument] => self.first_of(argument, parameter, function),
                        _ => false,
                    })
            }
            "conditional_expression" => {
                let parts = named_children(value);
                let (Some(then), Some(other)) = (parts.first(), parts.get(2)) else {
                    return false;
                };
                match (
                    self.string_literal_text(*then),
                    self.string_literal_text(*other),
                ) {
                    (None, Some(literal)) => {
                        arms.push(literal);
                        self.first_element(*then, parameter, function, arms)
                    }
                    (Some(literal), None) => {
                        arms.push(literal);
                        self.first_element(*other, parameter, function, arms)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// `name[:-N]` as the only statement's value inside `if name.endswith("<N chars>")`.
    fn suffix_cut(&self, value: PyNode<'_>, name: &str) -> bool {
        let cut = (value.kind_name() == "subscript")
            .then(|| (value.field("value"), value.field("subscript")))
            .and_then(|(object, slice)| Some((object?, slice?)));
        let Some((object, slice)) = cut else {
            return false;
        };
        let length = self
            .text(slice)
            .strip_prefix(":-")
            .and_then(|n| n.parse::<usize>().ok());
        let Some(length) = length.filter(|_| self.text(object) == name) else {
            return false;
        };
        let mut node = value.parent();
        while let Some(current) = node {
            if current.kind_name() == "if_statement" {
                // In the branch taken when the name ends with the suffix, not an `else`.
                let in_consequence = current
                    .field("consequence")
                    .is_some_and(|consequence| contains(consequence, value));
                return in_consequence
                    && current
                        .field("condition")
                        .filter(|condition| condition.kind_name() == "call")
                        .is_some_and(|condition| {
                            let callee = condition.field("function");
                            let suffix = condition.field("arguments").map(named_children).and_then(
                                |arguments| match arguments[..] {
                                    [suffix] => self.string_literal_text(suffix),
                                    _ => None,
                                },
                            );
                            callee.is_some_and(|c| self.text(c) == format!("{name}.endswith"))
                                && suffix.is_some_and(|suffix| suffix.chars().count() == length)
                        });
            }
            if current.kind_name() == "function_definition" {
                return false;
            }
            node = current.parent();
        }
        false
    }

    /// The strings of a name bound only to literals of strings, when the file reads it
    /// nowhere but where it is bound and on the right of `in`/`not in` (so no `.add(..)`,
    /// no alias and no call can change it).
    fn membership_only_collection(&self, name: PyNode<'_>) -> Option<Vec<String>> {
        let programs = self.collections.get(&self.key_of(name))?.clone();
        let mut root = name;
        while let Some(parent) = root.parent() {
            root = parent;
        }
        let text = self.text(name);
        let only_tested = self.reads.offsets_of(text).iter().all(|offset| {
            let Some(read) = root.descendant_for_byte_range(*offset, offset + text.len()) else {
                return false;
            };
            let Some(parent) = read.parent() else {
                return false;
            };
            match parent.kind_name() {
                "assignment" => parent.field("left").is_some_and(|l| l.id() == read.id()),
                "comparison_operator" => {
                    named_children(parent)
                        .get(1)
                        .is_some_and(|r| r.id() == read.id())
                        && parent
                            .field("operators")
                            .is_some_and(|op| matches!(op.kind_name(), "in" | "not in"))
                }
                _ => false,
            }
        });
        only_tested.then_some(programs)
    }

    /// `name[0] != "lit"` or `name[0] not in (<literals>)`: the programs it lets through.
    fn other_programs_refused(&self, test: PyNode<'_>, name: &str) -> Option<Vec<String>> {
        if test.kind_name() != "comparison_operator" {
            return None;
        }
        let (Some(operator), [left, right]) = (test.field("operators"), &named_children(test)[..])
        else {
            return None;
        };
        let program = left.kind_name() == "subscript"
            && left
                .field("value")
                .is_some_and(|value| value.kind_name() == "identifier" && self.text(value) == name)
            && left
                .field("subscript")
                .is_some_and(|index| self.text(index) == "0");
        if !program {
            return None;
        }
        match operator.kind_name() {
            "!=" => Some(vec![self.string_literal_text(*right)?]),
            "not in" if matches!(right.kind_name(), "tuple" | "list" | "set") => {
                named_children(*right)
                    .iter()
                    .map(|element| self.string_literal_text(*element))
                    .collect()
            }
            _ => None,
        }
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
    fn check_shell_string(&mut self, call: &Call<'_>, command: Option<PyNode<'_>>) {
        let Some(command) = command else { return };
        let tainted = self.mentions_taint(call.node, command);
        if self.is_literal(command) {
            return;
        }
        if has_interpolation(command) {
            self.hit(Rule::ExecTemplateLiteralWithInput, call, tainted);
        } else if !self.is_literal(command) {
            self.hit(Rule::ExecDynamicString, call, tainted);
        }
    }

    /// `[sh, '-c', <non-literal>]` in a flattened argv, maybe behind programs that run the
    /// next one (`["env", "sh", "-c", x]`, `["timeout", "5", "bash", "-c", x]`); a program
    /// or flag may be a constant name, or one of a constant's values.
    fn is_shell_wrapper(&self, program: PyNode<'_>, argv: &[PyNode<'_>]) -> bool {
        let elements: Vec<PyNode<'_>> = std::iter::once(program)
            .chain(argv.iter().copied())
            .collect();
        let Some(shell) = shell_position(elements.len(), |i| {
            elements
                .get(i)
                .map(|e| self.const_strs(*e))
                .unwrap_or_default()
        }) else {
            return false;
        };
        let mut rest = elements.iter().skip(shell + 1);
        while let Some(element) = rest.next() {
            if self
                .const_strs(*element)
                .iter()
                .any(|flag| is_command_flag(flag))
            {
                return rest.next().is_some_and(|script| !self.is_literal(*script));
            }
        }
        false
    }

    /// Rules for an argv given as a list/tuple (or a name bound to one, maybe appended to),
    /// or anything else, whose first element is the program.
    fn check_argv(&mut self, call: &Call<'_>, argv: PyNode<'_>) {
        let tainted = self.mentions_taint(call.node, argv);
        let (list, named) = if matches!(argv.kind_name(), "list" | "tuple") {
            (Some(argv), false)
        } else if argv.kind_name() == "identifier" {
            let list = self.lists.get(&self.key_of(argv)).and_then(|lists| {
                lists
                    .iter()
                    .rev()
                    .find(|list| list.start_byte() < call.node.start_byte())
                    .copied()
            });
            (list, true)
        } else {
            (None, false)
        };
        let Some(list) = list else {
            if self.is_literal(argv) {
                return;
            }
            // `["kubectl"] + args`: a literal program, arguments not known.
            if let Some(program) = self.literal_program_of_sum(argv) {
                let separated = argv
                    .field("left")
                    .map(named_children)
                    .unwrap_or_default()
                    .iter()
                    .any(|element| self.string_literal_text(*element).as_deref() == Some("--"));
                if tainted && !separated && runs_code_through_options(&program) {
                    self.hit(Rule::ArgvFlagInjection, call, tainted);
                } else {
                    self.hit(Rule::SpawnLiteralDynamicArgs, call, tainted);
                }
                return;
            }
            match self.pinned_programs(call.node, argv) {
                // The program is one of the constants the guard lets through; the rest of
                // the list is not known.
                Some(programs) => {
                    if tainted && programs.iter().any(|p| runs_code_through_options(p)) {
                        self.hit(Rule::ArgvFlagInjection, call, tainted);
                    } else {
                        self.hit(Rule::SpawnLiteralDynamicArgs, call, tainted);
                    }
                }
                None => self.hit(Rule::SpawnDynamicFileArgs, call, tainted),
            }
            return;
        };
        let elements = named_children(list);
        let Some(program) = elements.first().copied() else {
            return;
        };
        let rest = elements.get(1..).unwrap_or(&[]);
        if !self.is_literal(program) {
            self.hit(Rule::SpawnDynamicFileArgs, call, tainted);
            return;
        }
        if self.is_shell_wrapper(program, rest) {
            self.hit(Rule::ShellTrueOption, call, tainted);
            return;
        }
        let dynamic = rest.iter().any(|element| !self.is_literal(*element)) || (named && tainted);
        if !dynamic {
            return;
        }
        let program = self.const_str(program);
        // The subcommand is known for a list written at the call, or for a name bound to
        // one list only and read nowhere else in its function (not grown, aliased, indexed,
        // sliced, `insert`ed into or handed to a helper that could put an option first). It
        // is looked for only for a program whose options depend on it.
        let subcommand = program
            .as_deref()
            .filter(|p| reads_subcommand(p))
            .filter(|_| !named || self.read_once_here(argv, call.node))
            .and_then(|_| rest.first().and_then(|e| self.string_literal_text(*e)));
        let options = program
            .as_deref()
            .is_some_and(|p| runs_code_through_options_at(p, subcommand.as_deref()));
        let program = program.as_deref();
        // A list name grown by `append`/`extend`/`+=`: only a literal `--` in what the list
        // was first bound to ends the options; else that list and each piece added later
        // (`cmd += ["-n", ns]`, `cmd.append(x)`) are read on their own, and a change not seen
        // piece by piece can always inject. A name bound once and never grown holds its
        // literal's elements (each list it may hold: `if`/`else` may bind two).
        let injectable = || {
            if !named {
                return self.can_inject_flag(call.node, program, subcommand.as_deref(), rest);
            }
            let key = self.key_of(argv);
            if !self.grown(argv) {
                return self.bound_list_injectable(call.node, &key, program, subcommand.as_deref());
            }
            let separated = rest
                .iter()
                .any(|element| self.string_literal_text(*element).as_deref() == Some("--"));
            !separated
                && (self.opaque_growth.contains(&key)
                    || self.bound_list_injectable(call.node, &key, program, None)
                    || self.growth_pieces(&key).is_none_or(|pieces| {
                        pieces
                            .iter()
                            .any(|piece| self.can_inject_flag(call.node, program, None, piece))
                    }))
        };
        if tainted && options && injectable() {
            self.hit(Rule::ArgvFlagInjection, call, tainted);
        } else {
            self.hits.push(Hit::new(
                Rule::SpawnLiteralDynamicArgs,
                call.node.start_byte(),
                tainted,
            ));
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
                // A shell that runs only constants (`subprocess.run("kubectl config view",
                // shell=True)`) injects nothing, as a constant command does not.
                if shell {
                    let constant = argv.is_some_and(|argv| {
                        self.is_literal(argv)
                            || (matches!(argv.kind_name(), "list" | "tuple")
                                && named_children(argv).into_iter().all(|e| self.is_literal(e)))
                    });
                    if !constant {
                        let tainted = self.any_tainted(call);
                        self.hit(Rule::ShellTrueOption, call, tainted);
                    }
                    // With a shell, a list's first element is the script.
                    let command = match argv {
                        Some(list) if matches!(list.kind_name(), "list" | "tuple") => {
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
                    if matches!(argument.kind_name(), "list" | "tuple") {
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
            Function::Getattr | Function::ImportModule | Function::GitRepo | Function::Partial => {}
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

/// The literal text a `%` format string starts with, before its first conversion (`%%` is
/// a literal `%`).
fn format_prefix(format: &str) -> String {
    let mut prefix = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '%' {
            if chars.peek() == Some(&'%') {
                chars.next();
            } else {
                break;
            }
        }
        prefix.push(c);
    }
    prefix
}

fn has_interpolation(node: PyNode<'_>) -> bool {
    match node.kind_name() {
        "string" => named_children(node)
            .iter()
            .any(|child| child.kind_name() == "interpolation"),
        "concatenated_string" => named_children(node)
            .iter()
            .any(|child| has_interpolation(*child)),
        "parenthesized_expression" => node.first_named().is_some_and(has_interpolation),
        _ => false,
    }
}

/// Names bound by an assignment target or parameter.
fn bound_names(node: PyNode<'_>, source: &str, out: &mut Vec<String>) {
    match node.kind_name() {
        "identifier" => out.push(text_of(node, source).to_string()),
        "attribute" | "subscript" => {}
        "default_parameter" | "typed_default_parameter" => {
            if let Some(name) = node.field("name") {
                bound_names(name, source, out);
            }
        }
        _ => {
            for child in named_children(node) {
                if child.kind_name() != "type" {
                    bound_names(child, source, out);
                }
            }
        }
    }
}

/// The names each parameter a call's arguments go to binds, in order: not the receiver
/// ([`call_parameters`]), nor the `/` of positional-only parameters (positions count from the
/// first parameter after it).
fn parameter_names(function: PyNode<'_>, source: &str) -> Vec<Vec<String>> {
    call_parameters(function, source)
        .into_iter()
        .filter(|parameter| parameter.kind_name() != "positional_separator")
        .map(|parameter| {
            let mut names = Vec::new();
            bound_names(parameter, source, &mut names);
            names
        })
        .collect()
}

/// The parameter nodes of `function` a call's arguments go to: all but the receiver, which
/// takes none.
fn call_parameters<'t>(function: PyNode<'t>, source: &str) -> Vec<PyNode<'t>> {
    let receiver = usize::from(has_receiver(function, source));
    function
        .field("parameters")
        .map(named_children)
        .unwrap_or_default()
        .into_iter()
        .skip(receiver)
        .collect()
}

/// `@mcp.tool()`, `@mcp.tool`, `@server.call_tool()`, `@app.tool(name=...)`.
fn is_tool_decorator(decorator: PyNode<'_>, source: &str) -> bool {
    decorator
        .first_named()
        .is_some_and(|expression| is_tool_expression(expression, source))
}

/// `mcp.tool()`, `mcp.tool`, `server.call_tool()`, `app.tool(name=...)`: what decorates (or
/// is called on) a tool handler.
fn is_tool_expression(mut expression: PyNode<'_>, source: &str) -> bool {
    if expression.kind_name() == "call" {
        match expression.field("function") {
            Some(function) => expression = function,
            None => return false,
        }
    }
    let name = match expression.kind_name() {
        "attribute" => expression.field("attribute").map(|a| text_of(a, source)),
        "identifier" => Some(text_of(expression, source)),
        _ => None,
    };
    // Resource templates and prompts take their arguments from the client too.
    name.is_some_and(|name| TOOL_DECORATORS.contains(&name))
}

/// The function a call registers as a tool handler: `mcp.tool()(f)`, `mcp.add_tool(f)`.
fn registered_handler<'t>(call: PyNode<'t>, source: &str) -> Option<PyNode<'t>> {
    let callee = call.field("function")?;
    let registers = is_tool_expression(callee, source)
        || (callee.kind_name() == "attribute"
            && callee
                .field("attribute")
                .is_some_and(|a| text_of(a, source) == ADD_TOOL));
    if !registers {
        return None;
    }
    named_children(call.field("arguments")?)
        .into_iter()
        .next()
        .filter(|f| matches!(f.kind_name(), "identifier" | "attribute"))
}

/// `analyze_with`, knowing nothing of other files' functions.
#[cfg(test)]
pub(crate) fn analyze(source: &SourceText<'_>, seeds: &[Flow]) -> Result<Analysis, SourceError> {
    let wanted = Wanted {
        quiet_links: true,
        sends: true,
    };
    analyze_with(source, seeds, &[], wanted)
}

/// What the caller reads of a file beyond its hits ([`analyze_with`]).
#[derive(Clone, Copy)]
pub(crate) struct Wanted {
    /// Its links to other files even when it is quiet (`python_ruff::Quiet`); if not, a
    /// quiet file is not analysed ([`Analysis::partial`]).
    pub(crate) quiet_links: bool,
    /// The flows it sends (not for tests): then a handler registration makes it loud.
    pub(crate) sends: bool,
}

/// Analyse one Python file, with the exported functions other files send tool input to
/// (`seeds`) and the imported functions no return value of which can start with `-`
/// (`dash_free`: module as written, name there). `Err` carries a parse error message.
pub(crate) fn analyze_with(
    source: &SourceText<'_>,
    seeds: &[Flow],
    dash_free: &[(String, String)],
    wanted: Wanted,
) -> Result<Analysis, SourceError> {
    let text = source.text();
    // ruff's parser, ten times faster than tree-sitter's, whose tree `python_ruff` reproduces
    // node for node. A file ruff rejects is a syntax error, Python 2's `print "x"` included:
    // tree-sitter-python would take that one, but its parse is superlinear in the
    // indentation depth (a 7.5 MB file of 1 000 nested blocks ran past 200 s), and CPython 3
    // runs no such file.
    let lines = source.line_starts().to_vec();
    // A quiet file told nothing by other files has no hit and sends nothing: it is not
    // analysed, and its links are left for later (`Analysis::partial`).
    let tree = if !wanted.quiet_links && seeds.is_empty() && dash_free.is_empty() {
        let rules = crate::python_ruff::QuietRules {
            registration: QUIET_RULES.registration.filter(|_| wanted.sends),
            ..QUIET_RULES
        };
        match crate::python_ruff::parse_quiet(text, lines, &rules)? {
            crate::python_ruff::Parse::Tree(tree) => tree,
            crate::python_ruff::Parse::Quiet(comments) => {
                let mut analysis = Analysis {
                    partial: true,
                    ..Analysis::default()
                };
                for (line, comment) in comments {
                    (analysis.pragmas).record_comment(comment.trim_start_matches('#'), line);
                }
                return Ok(analysis);
            }
        }
    } else {
        crate::python_ruff::tree_from_ruff(text, lines)?
    };
    let root = tree.root();
    let mut analysis = Analysis::default();

    let mut calls = Vec::new();
    let mut imports = Vec::new();
    let mut functions = Vec::new();
    let mut assignments = Vec::new();
    // Functions defined at module level or under decorators (`by_name` candidates), and the
    // decorated ones with their decorated_definition.
    let mut named_functions = Vec::new();
    let mut decorated = Vec::new();
    let mut classes = Vec::new();
    let mut reads = Reads::default();
    // Bindings other than `name = value`: loops, comprehensions, `:=`, `as`, `case`.
    let mut flows = Vec::new();
    // Functions, lambdas, classes, comprehensions; `global` and `nonlocal` statements.
    let mut scope_nodes = Vec::new();
    let mut declarations = Vec::new();
    let mut return_statements = Vec::new();
    let mut if_statements = Vec::new();
    // Every attribute node, for the reads of assigned attributes below (`box.c`).
    let mut attributes = Vec::new();
    // The `.attr` of an attribute and the `name=` of a keyword argument are not reads.
    walk_with_parent(root, |node, parent| {
        let kind = node.kind_name();
        if opens_scope(kind) {
            scope_nodes.push(node);
        }
        match kind {
            "identifier" => {
                let field = node.field_name();
                let not_read = match parent.map(|parent| parent.kind_name()) {
                    Some("attribute") => field == Some("attribute"),
                    Some("keyword_argument") => field == Some("name"),
                    _ => false,
                };
                if !not_read {
                    reads.add(text_of(node, text), node.start_byte());
                }
            }
            "for_statement" | "for_in_clause" | "named_expression" | "as_pattern"
            | "except_clause" | "match_statement" | "lambda" => flows.push(node),
            "global_statement" | "nonlocal_statement" => declarations.push(node),
            "return_statement" => return_statements.push(node),
            "if_statement" => if_statements.push(node),
            "comment" => {
                let body = text_of(node, text).trim_start_matches('#');
                analysis.pragmas.record_comment(body, node.end_row() + 1);
            }
            "class_definition" => classes.push(node),
            "call" => {
                calls.push(node);
                if called_lambda(node).is_some() {
                    flows.push(node);
                }
            }
            "import_statement" | "import_from_statement" => imports.push(node),
            "function_definition" => {
                functions.push(node);
                if let Some(parent) = parent {
                    if parent == root || parent.kind_name() == "decorated_definition" {
                        named_functions.push(node);
                    }
                    if parent.kind_name() == "decorated_definition" {
                        decorated.push((node, parent));
                    }
                }
            }
            "assignment" | "augmented_assignment" => assignments.push(node),
            // `box.c`, `self.cmd`: read as one name where such a name is assigned
            // (see `attribute_names` below).
            "attribute" => attributes.push(node),
            _ => {}
        }
    });
    // Attributes of a name assigned somewhere in the file (`box.c = cmd`, `self.cmd = cmd`)
    // are names of their own for taint: each read of one is a read of that name.
    let attribute_names: HashSet<&str> = assignments
        .iter()
        .filter_map(|assignment| assignment.field("left"))
        .filter(|left| {
            left.kind_name() == "attribute"
                && left
                    .field("object")
                    .is_some_and(|object| object.kind_name() == "identifier")
        })
        .map(|left| text_of(left, text))
        .collect();
    if !attribute_names.is_empty() {
        reads.merge(
            attributes
                .iter()
                .map(|node| (node.start_byte(), text_of(*node, text)))
                .filter(|(_, name)| attribute_names.contains(name))
                .collect(),
        );
    }
    // An ignore-file pragma is applied by the caller, after the analysis: `--strict` scans
    // the file anyway.

    let mut bindings: HashMap<String, Value> = BUILTINS
        .iter()
        .map(|(name, function)| (name.to_string(), Value::Function(*function)))
        .collect();
    // Every name an import binds, with its statement.
    let mut import_names = Vec::new();
    // `from m import *` of a module that may define anything.
    let mut star_import = false;
    // Names bound to modules of the project, and what this module re-exports (module-level
    // `from` imports).
    let mut linked = Imports::default();
    let nested = Scopes::new(
        functions
            .iter()
            .chain(&classes)
            .map(|node| (*node, ()))
            .collect(),
    );
    for import in &imports {
        star_import |= named_children(*import)
            .iter()
            .any(|child| child.kind_name() == "wildcard_import")
            && import
                .field("module_name")
                .is_none_or(|module| !harmless_star_module(text_of(module, text)));
        let from = import
            .field("module_name")
            .map(|module| text_of(module, text));
        let reexports = from.filter(|_| nested.containing(*import).next().is_none());
        if let Some(module) = reexports
            && named_children(*import)
                .iter()
                .any(|n| n.kind_name() == "wildcard_import")
        {
            analysis.reexports.push(Reexport {
                exported: "*".to_string(),
                module: module.to_string(),
                imported: "*".to_string(),
            });
        }
        for name in import.children_by_field_name("name") {
            let (imported, local) = match name.kind_name() {
                "aliased_import" => {
                    let imported = name.field("name").map(|n| text_of(n, text)).unwrap_or("");
                    let alias = name.field("alias").map(|n| text_of(n, text)).unwrap_or("");
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
            import_names.push((*import, local.clone()));
            if let Some(module) = reexports {
                analysis.reexports.push(Reexport {
                    exported: local.clone(),
                    module: module.to_string(),
                    imported: imported.to_string(),
                });
            }
            linked.bind(&local, from, imported, name.kind_name() == "aliased_import");
            let value = match from {
                Some(module) => module_named(module).and_then(|module| member(module, imported)),
                None if name.kind_name() == "aliased_import" => {
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
    // Module-level definitions shadow imports and builtins of the same name; they and the
    // methods of module-level classes are what a seed can name.
    let mut definitions: HashMap<&str, PyNode<'_>> = HashMap::new();
    let mut locals = Locals {
        functions: HashMap::new(),
        methods: HashMap::new(),
        class_of: HashMap::new(),
        classes: HashSet::new(),
        instances: HashMap::new(),
        nested: HashMap::new(),
        lambdas: HashMap::new(),
        attribute_instances: HashMap::new(),
        rebound: HashSet::new(),
        rebound_in: HashSet::new(),
        families: HashMap::new(),
        bases: HashMap::new(),
    };
    for function in &functions {
        if let Some(scope) = binding_function(*function)
            && let Some(name) = function.field("name")
        {
            locals
                .nested
                .entry((scope.id(), text_of(name, text)))
                .or_default()
                .push(*function);
        }
    }
    let lambdas: Vec<(&str, PyNode<'_>)> = (assignments.iter())
        .filter_map(|assignment| {
            let (left, right) = (assignment.field("left")?, assignment.field("right")?);
            (left.kind_name() == "identifier" && right.kind_name() == "lambda")
                .then(|| (text_of(left, text), right))
        })
        .collect();
    // (Counted only in a file that assigns a lambda.)
    if !lambdas.is_empty() {
        let mut assigned_names: HashMap<&str, usize> = HashMap::new();
        for assignment in &assignments {
            if let Some(left) = assignment
                .field("left")
                .filter(|left| left.kind_name() == "identifier")
            {
                *assigned_names.entry(text_of(left, text)).or_default() += 1;
            }
        }
        locals.lambdas = lambdas
            .into_iter()
            .filter(|(name, _)| assigned_names.get(name) == Some(&1))
            .collect();
    }
    // A decorated method is no module function: a bare `run(x)` never calls it.
    for function in named_functions
        .iter()
        .filter(|f| !is_method_definition(**f))
    {
        if let Some(name) = function.field("name") {
            locals.functions.insert(text_of(name, text), *function);
        }
    }
    for child in named_children(root) {
        let definition = match child.kind_name() {
            "decorated_definition" => child.field("definition"),
            "function_definition" | "class_definition" => Some(child),
            _ => None,
        };
        if let Some(definition) = definition
            && let Some(name) = definition.field("name")
        {
            bindings.remove(text_of(name, text));
            linked.names.remove(text_of(name, text));
            definitions.insert(text_of(name, text), definition);
            if definition.kind_name() == "class_definition" {
                locals.classes.insert(text_of(name, text));
                let bases = definition
                    .field("superclasses")
                    .map(named_children)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|base| base.kind_name() == "identifier")
                    .map(|base| text_of(base, text))
                    .collect();
                locals.bases.insert(text_of(name, text), bases);
                for method in definition
                    .field("body")
                    .map(named_children)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|child| match child.kind_name() {
                        "decorated_definition" => child.field("definition"),
                        _ => Some(child),
                    })
                    .filter(|child| child.kind_name() == "function_definition")
                {
                    if let Some(method_name) = method.field("name") {
                        let class = text_of(name, text);
                        locals
                            .methods
                            .insert((class, text_of(method_name, text)), method);
                        locals.class_of.insert(method.id(), class);
                    }
                }
            }
        }
        if child.kind_name() == "expression_statement"
            && let Some(assignment) = child
                .first_named()
                .filter(|n| n.kind_name() == "assignment")
            && let Some(left) = assignment.field("left")
        {
            let mut names = Vec::new();
            bound_names(left, text, &mut names);
            for name in names {
                bindings.remove(&name);
                linked.names.remove(name.as_str());
            }
        }
    }

    locals.find_families();
    // `Runner = print` at module level (or in a function): `Runner(x)` (there) may not make
    // a `Runner`.
    for assignment in &assignments {
        if let Some(left) = assignment
            .field("left")
            .filter(|left| left.kind_name() == "identifier")
            && locals.classes.contains(text_of(left, text))
        {
            match enclosing_function(*assignment) {
                None => locals.rebound.insert(text_of(left, text)),
                Some(function) => locals
                    .rebound_in
                    .insert((function.id(), text_of(left, text))),
            };
        }
    }
    // `g = Git()`: an instance of a class of this module or imported from another one.
    for assignment in &assignments {
        let (Some(left), Some(class)) = (
            assignment
                .field("left")
                .filter(|left| left.kind_name() == "identifier"),
            assignment
                .field("right")
                .filter(|right| right.kind_name() == "call")
                .and_then(|right| right.field("function")),
        ) else {
            continue;
        };
        if let Some(imported) = linked.instance_of(class, text) {
            linked
                .names
                .insert(text_of(left, text).to_string(), imported);
        } else if let Some(local) = locals.class_named(class, text) {
            locals.instances.insert(text_of(left, text), local);
        }
    }
    // `self.runner = Runner()` in a method: `self.runner.run(x)` in the class's methods is
    // `Runner.run`, when no assignment of `self.runner` in the class makes an instance of
    // another class (`self.runner = None` first does not count).
    for assignment in &assignments {
        let Some(left) = assignment.field("left").filter(|left| {
            left.kind_name() == "attribute"
                && left
                    .field("object")
                    .is_some_and(|object| matches!(text_of(object, text), "self" | "cls"))
        }) else {
            continue;
        };
        let (Some(attribute), Some(class)) = (
            left.field("attribute"),
            enclosing_function(*assignment).and_then(|method| locals.class_of.get(&method.id())),
        ) else {
            continue;
        };
        let class_called = assignment
            .field("right")
            .filter(|right| right.kind_name() == "call")
            .and_then(|right| right.field("function"));
        let local = class_called.and_then(|function| locals.class_named(function, text));
        let imported = class_called.and_then(|function| linked.instance_of(function, text));
        if local.is_some() || imported.is_some() {
            let family = locals.family(class);
            let key = (family, text_of(attribute, text));
            let entry = locals.attribute_instances.entry(key).or_insert(local);
            if *entry != local {
                *entry = None;
            }
            let entry = linked
                .self_instances
                .entry((family.to_string(), text_of(attribute, text).to_string()))
                .or_insert_with(|| imported.clone());
            if *entry != imported {
                *entry = None;
            }
        }
    }
    let mut analyzer = Analyzer {
        source: text,
        bindings,
        names: None,
        constants: HashSet::new(),
        aliases: HashMap::new(),
        attribute_members: HashSet::new(),
        class_families: locals.families.clone(),
        constant_values: HashMap::new(),
        lists: HashMap::new(),
        dicts: HashMap::new(),
        growth: HashMap::new(),
        additions: HashMap::new(),
        opaque_growth: HashSet::new(),
        tainted_scopes: Scopes::new(Vec::<(PyNode<'_>, _)>::new()),
        tainted_globals: HashSet::new(),
        reads,
        hits: Vec::new(),
        returns: HashMap::new(),
        deciding: std::cell::RefCell::new(HashSet::new()),
        dash_refusals: Vec::new(),
        dash_free_calls: HashSet::new(),
        if_statements: Vec::new(),
        declaration_statements: Vec::new(),
        handlers: HashSet::new(),
        rebindings: std::cell::RefCell::new(HashMap::new()),
        dash_free_bindings: std::cell::RefCell::new(HashMap::new()),
        dash_free_budget: std::cell::Cell::new(0),
        collections: HashMap::new(),
        program_pins: Vec::new(),
    };
    // What each module-level function returns (its own returns, not a nested function's).
    let functions_by_node: HashMap<usize, &str> = named_functions
        .iter()
        .filter_map(|f| Some((f.id(), text_of(f.field("name")?, text))))
        .collect();
    let function_scopes = Scopes::new(
        scope_nodes
            .iter()
            .filter(|n| matches!(n.kind_name(), "function_definition" | "lambda"))
            .map(|n| (*n, n.id()))
            .collect(),
    );
    for statement in &return_statements {
        if let Some(name) = function_scopes
            .containing(*statement)
            .next()
            .and_then(|id| functions_by_node.get(id))
        {
            analyzer
                .returns
                .entry(name)
                .or_default()
                .push(statement.first_named());
        }
    }
    let mut names = Namespaces::new(root, &scope_nodes, &declarations, text);
    record_bindings(
        &mut names,
        &Bound {
            assignments: &assignments,
            flows: &flows,
            scope_nodes: &scope_nodes,
            imports: &import_names,
        },
        text,
    );
    let module_written =
        record_reflective_writes(&analyzer, &mut names, &assignments, &calls) || star_import;
    names.finish();
    analyzer.names = Some(names);
    let alias_candidates = bind_values(&mut analyzer, module_written);
    bind_aliases(
        &mut analyzer,
        alias_candidates,
        &[&flows, &assignments],
        &scope_nodes,
    );
    for call in &calls {
        if let Some(callee) = call.field("function")
            && callee.kind_name() == "attribute"
            && let (Some(object), Some(method)) =
                (callee.field("object"), callee.field("attribute"))
            && object.kind_name() == "identifier"
        {
            let method = match text_of(method, text) {
                "append" => "append",
                "extend" => "extend",
                "insert" => "insert",
                _ => continue,
            };
            let arguments = call
                .field("arguments")
                .map(named_children)
                .unwrap_or_default();
            let key = analyzer.key_of(object);
            analyzer
                .growth
                .entry(key)
                .or_default()
                .push((method, arguments));
        }
    }
    // `cmd[2] = x`, `cmd[1:] = xs`: the list is changed after it is bound.
    for assignment in &assignments {
        if let Some(list) = assignment.field("left").and_then(subscripted_name) {
            let key = analyzer.key_of(list);
            analyzer.opaque_growth.insert(key);
        }
    }
    // Taint starts at the tool handlers (decorated, or registered by a call) and at the
    // functions other files send tool input to.
    let mut roots = Vec::new();
    let handlers = decorated
        .iter()
        .filter(|(_, parent)| {
            named_children(*parent)
                .into_iter()
                .any(|child| child.kind_name() == "decorator" && is_tool_decorator(child, text))
        })
        .map(|(function, _)| *function)
        .chain(calls.iter().filter_map(|call| {
            let handler =
                registered_handler(*call, text).filter(|f| f.kind_name() == "identifier")?;
            let name = text_of(handler, text);
            // `def register(): async def kubectl(..): ..; mcp.tool()(kubectl)`: a function
            // defined in the same body as the registration comes first.
            enclosing_function(*call)
                .and_then(|setup| locals.local_def(setup, name, call.start_byte()))
                .or_else(|| definitions.get(name).copied())
                .filter(|f| f.kind_name() == "function_definition")
        }));
    for function in handlers {
        let names = parameter_names(function, text)
            .into_iter()
            .flatten()
            .collect();
        analyzer.handlers.insert(function.id());
        roots.push((function, names));
    }
    analysis.defines = Some(definitions.keys().map(|name| name.to_string()).collect());
    for seed in seeds {
        if let Some(function) = seeded_function(&definitions, &locals.methods, &seed.name) {
            roots.push((function, seeded_parameters(function, text, seed)));
        }
    }
    analyzer.dash_free_budget.set(text.len());
    analyzer.if_statements = if_statements;
    analyzer.declaration_statements = declarations.clone();
    if !dash_free.is_empty() {
        for call in &calls {
            if let Some(path) = call
                .field("function")
                .and_then(|f| linked.path(f, text, &locals.families))
                && dash_free.contains(&path)
            {
                analyzer.dash_free_calls.insert(call.start_byte());
            }
        }
    }
    let taint_nodes = TaintNodes {
        assignments: &assignments,
        flows: &flows,
        calls: &calls,
        declarations: &declarations,
        functions: &functions,
    };
    seed_taint(&mut analyzer, &locals, roots, &taint_nodes);
    analyzer.dash_refusals = dash_refusals(&analyzer, &locals, &calls);
    analyzer.program_pins = program_pins(&analyzer, &locals, &calls);
    analysis.outgoing = outgoing(&analyzer, &linked, &locals.families, &calls);
    analysis.dash_free_returns = (analyzer.returns.keys())
        .filter(|name| analyzer.returns_dash_free(name, 0))
        .map(|name| name.to_string())
        .collect();
    analysis.dash_free_returns.sort();

    // Names bound to a `git.Repo(...)`.
    let mut repos = HashSet::new();
    for assignment in &assignments {
        if let (Some(left), Some(right)) = (assignment.field("left"), assignment.field("right"))
            && left.kind_name() == "identifier"
            && right.kind_name() == "call"
            && right.field("function").and_then(|f| analyzer.resolve(f))
                == Some(Value::Function(Function::GitRepo))
        {
            repos.insert(text_of(left, text));
        }
    }
    for call_node in &calls {
        let Some(callee) = call_node.field("function") else {
            continue;
        };
        let Some(Value::Function(function)) = analyzer.resolve(callee) else {
            analyzer.check_other_call(*call_node, callee, &repos);
            continue;
        };
        let Some(arguments) = call_node.field("arguments") else {
            continue;
        };
        let mut call = Call {
            node: *call_node,
            positional: Vec::new(),
            keywords: HashMap::new(),
            has_splat: false,
        };
        for argument in named_children(arguments) {
            match argument.kind_name() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) =
                        (argument.field("name"), argument.field("value"))
                    {
                        call.keywords.insert(text_of(name, text), value);
                    }
                }
                "dictionary_splat" => {
                    call.has_splat = true;
                    if let Some(options) = argument
                        .first_named()
                        .and_then(|name| analyzer.splat_options(name))
                    {
                        for (name, value) in options {
                            call.keywords.entry(name).or_insert(value);
                        }
                    }
                }
                _ => call.positional.push(argument),
            }
        }
        analyzer.evaluate(function, &call);
    }
    analysis.hits = analyzer.hits;
    Ok(analysis)
}

/// Names bound to other modules, for the flows that leave the file: each local name's module
/// as written and its name there (empty for the module itself: `import pkg.git as g`).
#[derive(Default)]
struct Imports {
    names: HashMap<String, (String, String)>,
    /// `self.x` attributes bound to instances of imported classes (`self.git = Git()`), by
    /// class family and attribute name; `None` when another assignment of that `self.x` in
    /// the family binds an instance of another class.
    self_instances: HashMap<(String, String), Option<(String, String)>>,
}

/// Most attributes and calls followed down one callee (`a.b.c(x)`, `Git().diff(x)`,
/// `__import__("os").system`), so a long method chain costs no more per call than a short one.
const MAX_PATH_STEPS: usize = 8;

impl Imports {
    /// `import a.b` (binds `a`), `import a.b as g`, `from m import n` (or `n as local`).
    fn bind(&mut self, local: &str, from: Option<&str>, imported: &str, aliased: bool) {
        let target = match from {
            Some(module) => (module.to_string(), imported.to_string()),
            None if aliased => (imported.to_string(), String::new()),
            None => (local.to_string(), String::new()),
        };
        self.names.insert(local.to_string(), target);
    }

    /// The module and the name there that `node` denotes: a bound name, `g.run` (`import
    /// pkg.git as g`), `git.run` (`from . import git`), `Git().diff` (a method of an imported
    /// class), `self.git.diff` in a method of a class whose family (`families`, as
    /// [`Locals::families`]) binds `self.git` to an imported class; the name is empty for a
    /// module itself.
    fn path(
        &self,
        node: PyNode<'_>,
        source: &str,
        families: &HashMap<&str, &str>,
    ) -> Option<(String, String)> {
        self.path_through(node, source, Some(families))
    }

    /// The imported class a call of `callee` makes an instance of (`Git()`, `git.Git()`):
    /// a name whose last part is capitalised.
    fn instance_of(&self, callee: PyNode<'_>, source: &str) -> Option<(String, String)> {
        self.path_through(callee, source, None).filter(|(_, name)| {
            name.rsplit('.')
                .next()
                .is_some_and(|last| last.starts_with(|c: char| c.is_ascii_uppercase()))
        })
    }

    /// [`Imports::path`]; through an instance (`Git().diff`, `self.git.diff`) only when
    /// `families` is given.
    fn path_through(
        &self,
        mut node: PyNode<'_>,
        source: &str,
        families: Option<&HashMap<&str, &str>>,
    ) -> Option<(String, String)> {
        let mut attributes = Vec::new();
        let mut steps = 0;
        let (module, mut name) = loop {
            steps += 1;
            if steps > MAX_PATH_STEPS {
                return None;
            }
            match node.kind_name() {
                // `self.git.diff` in a method: the instance `self.git` holds (not `self.git(x)`,
                // which is its `__call__`).
                "identifier" if matches!(text_of(node, source), "self" | "cls") => {
                    let attribute: &str = attributes.pop()?;
                    if attributes.is_empty() {
                        return None;
                    }
                    let class = enclosing_method_class(node, source)?;
                    let family = families?.get(class).copied().unwrap_or(class);
                    break self
                        .self_instances
                        .get(&(family.to_string(), attribute.to_string()))?
                        .clone()?;
                }
                "identifier" => break self.names.get(text_of(node, source))?.clone(),
                "attribute" => {
                    attributes.push(text_of(node.field("attribute")?, source));
                    node = node.field("object")?;
                }
                "list_splat" => node = unsplat(node),
                "call" if families.is_some() && !attributes.is_empty() => {
                    break self.instance_of(node.field("function")?, source)?;
                }
                _ => return None,
            }
        };
        for attribute in attributes.iter().rev() {
            if !name.is_empty() {
                name.push('.');
            }
            name.push_str(attribute);
        }
        Some((module, name))
    }
}

/// The function a seed names: a module-level function, `Class.method`, or a class (its
/// `__init__`).
fn seeded_function<'t>(
    definitions: &HashMap<&str, PyNode<'t>>,
    methods: &HashMap<(&str, &str), PyNode<'t>>,
    name: &str,
) -> Option<PyNode<'t>> {
    let (class, method) = match name.split_once('.') {
        Some((class, method)) => (class, method),
        None => {
            let definition = *definitions.get(name)?;
            if definition.kind_name() == "function_definition" {
                return Some(definition);
            }
            (name, "__init__")
        }
    };
    methods.get(&(class, method)).copied()
}

/// The calls that hand a plain name to a function or method of this module whose body
/// refuses that parameter when it starts with `-` (`if ref.startswith("-"): raise`), as
/// (offset of the call, name).
fn dash_refusals<'s>(
    analyzer: &Analyzer<'s, '_>,
    locals: &Locals<'s, '_>,
    calls: &[PyNode<'_>],
) -> Vec<(usize, &'s str)> {
    let text = analyzer.source;
    let mut out = Vec::new();
    // Only functions that test a prefix at all can refuse one; the names they go by.
    let candidates: HashSet<&str> = locals
        .functions
        .values()
        .chain(locals.methods.values())
        .filter(|function| text_of(**function, text).contains(".startswith("))
        .filter_map(|function| Some(text_of(function.field("name")?, text)))
        .collect();
    if candidates.is_empty() {
        return out;
    }
    for call in calls {
        let (Some(callee), Some(arguments)) = (call.field("function"), call.field("arguments"))
        else {
            continue;
        };
        let called = match callee.kind_name() {
            "attribute" => callee.field("attribute"),
            _ => Some(callee),
        };
        if !called.is_some_and(|name| candidates.contains(text_of(name, text))) {
            continue;
        }
        let Some(function) =
            enclosing_function(*call).and_then(|caller| locals.callee(caller, callee, text))
        else {
            continue;
        };
        let parameters = parameter_names(function, text);
        let mut position = 0;
        for argument in named_children(arguments) {
            let (parameter, value) = match argument.kind_name() {
                "keyword_argument" => (
                    argument.field("name").map(|n| text_of(n, text)),
                    argument.field("value"),
                ),
                "list_splat" | "dictionary_splat" => break,
                _ => {
                    position += 1;
                    (
                        parameters
                            .get(position - 1)
                            .and_then(|names| names.first())
                            .map(String::as_str),
                        Some(argument),
                    )
                }
            };
            if let (Some(parameter), Some(value)) = (parameter, value)
                && value.kind_name() == "identifier"
                && analyzer.dash_guarded_in(function, parameter, function.end_byte())
            {
                out.push((call.start_byte(), text_of(value, text)));
            }
        }
    }
    out
}

/// The statements `check(name)` (also awaited) that hand a plain name to a function or
/// method of this module whose body pins that parameter's first element
/// ([`Analyzer::helper_pinned_programs`]).
fn program_pins<'s>(
    analyzer: &Analyzer<'s, '_>,
    locals: &Locals<'s, '_>,
    calls: &[PyNode<'_>],
) -> Vec<ProgramPin<'s>> {
    let text = analyzer.source;
    let mut out = Vec::new();
    // Only functions that index a first element can pin one; the names they go by.
    let candidates: HashSet<&str> = locals
        .functions
        .values()
        .chain(locals.methods.values())
        .filter(|function| text_of(**function, text).contains("[0]"))
        .filter_map(|function| Some(text_of(function.field("name")?, text)))
        .collect();
    if candidates.is_empty() {
        return out;
    }
    for call in calls {
        let Some(callee) = call.field("function") else {
            continue;
        };
        let called = match callee.kind_name() {
            "attribute" => callee.field("attribute"),
            _ => Some(callee),
        };
        if !called.is_some_and(|name| candidates.contains(text_of(name, text))) {
            continue;
        }
        // The call is a statement of its own, so every later statement of its block runs
        // after it.
        let mut statement = call.parent();
        if statement.is_some_and(|s| s.kind_name() == "await") {
            statement = statement.and_then(|s| s.parent());
        }
        let Some(statement) = statement.filter(|s| s.kind_name() == "expression_statement") else {
            continue;
        };
        let Some(block) = statement.parent() else {
            continue;
        };
        let Some(function) =
            enclosing_function(*call).and_then(|caller| locals.callee(caller, callee, text))
        else {
            continue;
        };
        for (parameter, value) in helper_arguments(*call, function, text) {
            if let Some(programs) = analyzer.helper_pinned_programs(function, parameter) {
                out.push(ProgramPin {
                    after: statement.end_byte(),
                    block: (block.start_byte(), block.end_byte()),
                    name: text_of(value, text),
                    programs,
                });
            }
        }
    }
    out
}

/// The plain names a call hands to the parameters of `function`, by position or keyword,
/// as (parameter, argument); none past a `*args` or `**kwargs`.
fn helper_arguments<'s, 't>(
    call: PyNode<'t>,
    function: PyNode<'_>,
    text: &'s str,
) -> Vec<(&'s str, PyNode<'t>)> {
    let mut out = Vec::new();
    let Some(arguments) = call.field("arguments") else {
        return out;
    };
    let parameters = parameter_names(function, text);
    let parameter_text = |name: &str| {
        function.field("parameters").and_then(|list| {
            let mut found = None;
            walk(list, |n| {
                if found.is_none() && n.kind_name() == "identifier" && text_of(n, text) == name {
                    found = Some(text_of(n, text));
                }
            });
            found
        })
    };
    let mut position = 0;
    for argument in named_children(arguments) {
        let (parameter, value) = match argument.kind_name() {
            "keyword_argument" => (
                argument.field("name").map(|n| text_of(n, text)),
                argument.field("value"),
            ),
            "list_splat" | "dictionary_splat" => break,
            _ => {
                position += 1;
                (
                    parameters
                        .get(position - 1)
                        .and_then(|names| names.first())
                        .and_then(|name| parameter_text(name)),
                    Some(argument),
                )
            }
        };
        if let (Some(parameter), Some(value)) = (parameter, value)
            && value.kind_name() == "identifier"
        {
            out.push((parameter, value));
        }
    }
    out
}

/// Whether `function`'s first parameter is its receiver: the first parameter of a method
/// (defined in a class body, not a `@staticmethod`), whatever its name (`self`, `cls`, a
/// classmethod's `klass`, `this`), unless it is `*args`. Elsewhere a parameter named `self`
/// is an ordinary one: a tool handler `def run(self: str)` receives tool input in it.
fn has_receiver(function: PyNode<'_>, source: &str) -> bool {
    is_method_definition(function)
        && !is_static_method(function, source)
        && function
            .field("parameters")
            .and_then(|parameters| parameters.first_named())
            .is_some_and(|first| {
                let inner = match first.kind_name() {
                    "typed_parameter" => first.first_named().unwrap_or(first),
                    _ => first,
                };
                matches!(
                    inner.kind_name(),
                    "identifier" | "default_parameter" | "typed_default_parameter"
                )
            })
}

/// `x` for the `*x` the tree makes of the start of `*x.run(c)` in a bare tuple, a subscript, a
/// lone list element or a later `print` argument (tree-sitter's reading, kept in the tree:
/// Python calls `x.run` and splats the result); any other node as it is.
fn unsplat(node: PyNode<'_>) -> PyNode<'_> {
    match node.kind_name() {
        "list_splat" => node.first_named().unwrap_or(node),
        _ => node,
    }
}

/// Whether `function` is decorated `@staticmethod` (or `@builtins.staticmethod`).
fn is_static_method(function: PyNode<'_>, source: &str) -> bool {
    decorated_as(function, source, "staticmethod")
}

/// Whether `function` has the decorator `@name` or `@builtins.name`.
fn decorated_as(function: PyNode<'_>, source: &str, name: &str) -> bool {
    function
        .parent()
        .filter(|parent| parent.kind_name() == "decorated_definition")
        .is_some_and(|decorated| {
            decorated.children().any(|decorator| {
                decorator.kind_name() == "decorator"
                    && decorator.first_named().is_some_and(|written| {
                        let written = text_of(written, source);
                        written == name || written.strip_prefix("builtins.") == Some(name)
                    })
            })
        })
}

/// Whether `function` is defined in a class body (also under decorators).
fn is_method_definition(function: PyNode<'_>) -> bool {
    let mut parent = function.parent();
    if parent.is_some_and(|p| p.kind_name() == "decorated_definition") {
        parent = parent.and_then(|p| p.parent());
    }
    parent.is_some_and(|block| {
        block.kind_name() == "block"
            && block
                .parent()
                .is_some_and(|class| class.kind_name() == "class_definition")
    })
}

/// How an entry of a dict is keyed: an expression in a literal (`{"sh": f}`), a keyword's name
/// in a `dict(..)` call (`dict(sh=f)`).
enum DictKey<'t> {
    Expression(PyNode<'t>),
    Keyword(PyNode<'t>),
}

/// The entries of a dict literal or a `dict(..)` call, each key with its value; `None` for
/// anything else.
fn dict_entries(dict: PyNode<'_>) -> Option<Vec<(DictKey<'_>, PyNode<'_>)>> {
    match dict.kind_name() {
        "dictionary" => Some(
            named_children(dict)
                .into_iter()
                .filter(|pair| pair.kind_name() == "pair")
                .filter_map(|pair| {
                    Some((
                        DictKey::Expression(pair.field("key")?),
                        pair.field("value")?,
                    ))
                })
                .collect(),
        ),
        "call" => Some(
            named_children(dict.field("arguments")?)
                .into_iter()
                .filter(|argument| argument.kind_name() == "keyword_argument")
                .filter_map(|argument| {
                    Some((
                        DictKey::Keyword(argument.field("name")?),
                        argument.field("value")?,
                    ))
                })
                .collect(),
        ),
        _ => None,
    }
}

/// The name of the class whose body binds `name` directly (`class R: run = os.system`).
fn class_of_body_statement(name: PyNode<'_>) -> Option<PyNode<'_>> {
    let assignment = name.parent()?;
    if assignment.kind_name() != "assignment" || assignment.field("left") != Some(name) {
        return None;
    }
    let statement = assignment.parent()?;
    let block = statement.parent()?;
    let class = block.parent()?;
    (statement.kind_name() == "expression_statement"
        && block.kind_name() == "block"
        && class.kind_name() == "class_definition")
        .then(|| class.field("name"))
        .flatten()
}

/// The class a method is defined in.
fn method_class(function: PyNode<'_>) -> Option<PyNode<'_>> {
    let mut parent = function.parent()?;
    if parent.kind_name() == "decorated_definition" {
        parent = parent.parent()?;
    }
    let class = parent.parent()?;
    (parent.kind_name() == "block" && class.kind_name() == "class_definition").then_some(class)
}

/// The name of a method's receiver ([`has_receiver`]); `None` for a function without one.
fn receiver_name(function: PyNode<'_>, source: &str) -> Option<String> {
    if !has_receiver(function, source) {
        return None;
    }
    let first = function.field("parameters")?.first_named()?;
    let mut names = Vec::new();
    bound_names(first, source, &mut names);
    names.into_iter().next()
}

/// The class whose method `node` is in (also inside a function nested in the method), or
/// `None` outside every method.
fn enclosing_method_class<'s>(node: PyNode<'_>, source: &'s str) -> Option<&'s str> {
    let mut in_function = false;
    let mut scope = node.parent();
    while let Some(node) = scope {
        match node.kind_name() {
            "function_definition" | "lambda" => in_function = true,
            "class_definition" => {
                return if in_function {
                    node.field("name").map(|name| text_of(name, source))
                } else {
                    None
                };
            }
            _ => {}
        }
        scope = node.parent();
    }
    None
}

/// Most classes [`Locals::method_of`] looks at for one method.
const MAX_BASES_SEARCHED: usize = 64;

/// The module's own functions a call can reach: module-level (and decorated) functions by
/// name, the methods of module-level classes, and the class each of those methods is in.
struct Locals<'s, 't> {
    functions: HashMap<&'s str, PyNode<'t>>,
    /// The `def`s that bind a name in a function's scope (in its body, also under `if` or
    /// `try`, not in a class or lambda inside it), by that function's id and the name, in
    /// source order: `def go(cmd): def run(c): ..; run(cmd)`.
    nested: HashMap<(usize, &'s str), Vec<PyNode<'t>>>,
    /// Names assigned a lambda (`run = lambda c: os.system(c)`), when that is the name's only
    /// assignment in the file.
    lambdas: HashMap<&'s str, PyNode<'t>>,
    methods: HashMap<(&'s str, &'s str), PyNode<'t>>,
    class_of: HashMap<usize, &'s str>,
    /// The module-level classes.
    classes: HashSet<&'s str>,
    /// Names bound to an instance of a module-level class (`shell = Shell()`).
    instances: HashMap<&'s str, &'s str>,
    /// `self.x` attributes of a class family ([`Locals::family`], `x`) bound to instances of
    /// a module-level class (`self.shell = Shell()`); `None` when another assignment binds an
    /// instance of another class.
    attribute_instances: HashMap<(&'s str, &'s str), Option<&'s str>>,
    /// Module classes whose name is also bound by a module-level assignment (`Runner =
    /// print`): a call of that name may not make an instance.
    rebound: HashSet<&'s str>,
    /// The same in a function (its node id): `Runner = print` in a handler.
    rebound_in: HashSet<(usize, &'s str)>,
    /// Each module class's family root ([`Locals::family`]); a class that derives from no
    /// module class is its own root.
    families: HashMap<&'s str, &'s str>,
    /// The module-level base classes each module-level class names (`class Git(Base)`).
    bases: HashMap<&'s str, Vec<&'s str>>,
}

impl<'s, 't> Locals<'s, 't> {
    /// The function `callee`, called from `caller`, is: `f(x)` a function of the module,
    /// `Shell(x)` the `__init__` of a module-level class, `self.run(x)` / `cls.run(x)` a
    /// method of the caller's class, `super().run(x)` one of its module bases,
    /// `Shell().run(x)`, `shell.run(x)` (`shell = Shell()`) or `self.shell.run(x)`
    /// (`self.shell = Shell()` in the caller's class) a method of a module-level class; a
    /// method a class does not define is looked for in its module bases.
    fn callee(
        &self,
        caller: PyNode<'_>,
        callee: PyNode<'_>,
        source: &'s str,
    ) -> Option<PyNode<'t>> {
        match callee.kind_name() {
            // `*run(cmd)` read as the call of `*run` (see `Analyzer::resolve_within`).
            "list_splat" => self.callee(caller, callee.first_named()?, source),
            "identifier" => {
                let name = text_of(callee, source);
                // A `def` in the caller or in a function around it, innermost first.
                let mut scope = Some(caller);
                for _ in 0..MAX_ENCLOSING_LOOKUP {
                    let Some(function) = scope else {
                        break;
                    };
                    if let Some(nested) = self.local_def(function, name, callee.start_byte()) {
                        return Some(nested);
                    }
                    scope = enclosing_function(function);
                }
                match self.functions.get(name) {
                    Some(function) => Some(*function),
                    None => self
                        .constructed(caller, callee, source)
                        .and_then(|class| self.method_of(class, "__init__", false))
                        .or_else(|| self.lambdas.get(name).copied()),
                }
            }
            "attribute" => {
                let object = unsplat(callee.field("object")?);
                let method = text_of(callee.field("attribute")?, source);
                let class = match (object.kind_name(), text_of(object, source)) {
                    // (Not in a static method, nor in a function, where `self` is a parameter
                    // like any other.)
                    ("identifier", "self" | "cls") if has_receiver(caller, source) => {
                        *self.class_of.get(&caller.id())?
                    }
                    ("identifier", name) => match self.instances.get(name) {
                        Some(class) => *class,
                        // `Git.log(x)`: a static or class method called on its class (a
                        // plain method called so takes its receiver as the first argument).
                        None => {
                            let class = self.constructed(caller, object, source)?;
                            let target = self.method_of(class, method, false)?;
                            return (is_static_method(target, source)
                                || decorated_as(target, source, "classmethod"))
                            .then_some(target);
                        }
                    },
                    // `super().__init__(cmd)` in a method: a base's.
                    ("call", _)
                        if object
                            .field("function")
                            .is_some_and(|f| text_of(unsplat(f), source) == "super") =>
                    {
                        let class = self.class_of.get(&caller.id())?;
                        return self.method_of(class, method, true);
                    }
                    ("call", _) => {
                        self.constructed(caller, unsplat(object.field("function")?), source)?
                    }
                    ("attribute", _) => {
                        let receiver = unsplat(object.field("object")?);
                        if !matches!(text_of(receiver, source), "self" | "cls") {
                            return None;
                        }
                        let class = self.family(self.class_of.get(&caller.id())?);
                        let attribute = text_of(object.field("attribute")?, source);
                        (*self.attribute_instances.get(&(class, attribute))?)?
                    }
                    _ => return None,
                };
                self.method_of(class, method, false)
            }
            _ => None,
        }
    }

    /// The function named `name` that a `def` in `function` binds there (Python binds it in
    /// the whole function): the last such `def` before `at`, else the first.
    fn local_def(&self, function: PyNode<'_>, name: &str, at: usize) -> Option<PyNode<'t>> {
        let found = self.nested.get(&(function.id(), name))?;
        found
            .iter()
            .rev()
            .find(|definition| definition.start_byte() < at)
            .or(found.first())
            .copied()
    }

    /// The method `name` of `class` or, when it does not define it (or `bases_only`), of
    /// the first of its module bases that does, depth first, left to right (Python's order
    /// for single inheritance).
    /// At most [`MAX_BASES_SEARCHED`] classes are looked at, so a call costs the same in a
    /// hierarchy of any depth.
    fn method_of(&self, class: &'s str, name: &'s str, bases_only: bool) -> Option<PyNode<'t>> {
        let mut stack = vec![(class, bases_only)];
        let mut seen = HashSet::new();
        while let Some((class, skip)) = stack.pop() {
            if seen.len() >= MAX_BASES_SEARCHED || !seen.insert(class) {
                continue;
            }
            if !skip && let Some(method) = self.methods.get(&(class, name)) {
                return Some(*method);
            }
            for base in self.bases.get(class).into_iter().flatten().rev() {
                if self.classes.contains(base) {
                    stack.push((base, false));
                }
            }
        }
        None
    }

    /// The module-level class `node` names (not one whose name a module-level assignment
    /// also binds).
    fn class_named(&self, node: PyNode<'_>, source: &'s str) -> Option<&'s str> {
        let name = text_of(node, source);
        (node.kind_name() == "identifier"
            && self.classes.contains(name)
            && !self.rebound.contains(name))
        .then_some(name)
    }

    /// The module class a call of `callee` in `caller` makes an instance of (`Runner(x)`),
    /// unless `caller` binds that name itself (a parameter, an assignment).
    fn constructed(
        &self,
        caller: PyNode<'_>,
        callee: PyNode<'_>,
        source: &'s str,
    ) -> Option<&'s str> {
        let class = self.class_named(callee, source)?;
        let shadowed = self.rebound_in.contains(&(caller.id(), class))
            || parameter_names(caller, source)
                .iter()
                .flatten()
                .any(|parameter| parameter == class);
        (!shadowed).then_some(class)
    }

    /// A class and the module's classes it derives from, or that derive from it, share one
    /// family, named by its root base of the module: `self` in a base class's method may be
    /// an instance of the subclass. Computed once for every class ([`Locals::find_families`]).
    fn family<'c>(&self, class: &'c str) -> &'c str
    where
        's: 'c,
    {
        self.families.get(class).copied().unwrap_or(class)
    }

    /// Every module class's family root, each chain of bases walked once (a class whose
    /// root is known ends a walk), so a deep hierarchy costs linear time.
    fn find_families(&mut self) {
        let mut families: HashMap<&'s str, &'s str> = HashMap::new();
        for class in &self.classes {
            let mut path = Vec::new();
            let mut on_path = HashSet::new();
            let mut current = *class;
            let root = loop {
                if let Some(root) = families.get(current) {
                    break *root;
                }
                if !on_path.insert(current) {
                    break current;
                }
                path.push(current);
                match self.bases.get(current).and_then(|bases| {
                    bases
                        .iter()
                        .find(|base| self.classes.contains(**base))
                        .copied()
                }) {
                    Some(base) => current = base,
                    None => break current,
                }
            };
            for class in path {
                families.insert(class, root);
            }
        }
        self.families = families;
    }
}

/// The parameters of `function` that `seed` taints: those at its positions (counted after
/// the `self` or `cls` of a method; `*args` when a position at or past it is tainted), those
/// named in its keywords (`**kwargs` for a keyword no other parameter has), or all of them.
fn seeded_parameters(function: PyNode<'_>, source: &str, seed: &Flow) -> HashSet<String> {
    let all = seed.positions == ALL_POSITIONS;
    let parameters = call_parameters(function, source);
    let named: HashSet<String> = parameter_names(function, source)
        .into_iter()
        .flatten()
        .collect();
    let at = |position: usize| {
        u32::try_from(position)
            .ok()
            .and_then(|p| seed.positions.checked_shr(p))
            .unwrap_or(0)
    };
    let mut tainted = HashSet::new();
    let mut position = 0usize;
    let mut keyword_only = false;
    for parameter in parameters {
        let kind = match parameter.kind_name() {
            "typed_parameter" => parameter
                .first_named()
                .map_or("", |inner| inner.kind_name()),
            kind => kind,
        };
        let mut names = Vec::new();
        bound_names(parameter, source, &mut names);
        let hit = match kind {
            "keyword_separator" => {
                keyword_only = true;
                false
            }
            "positional_separator" => false,
            "list_splat_pattern" => {
                keyword_only = true;
                at(position) != 0
            }
            "dictionary_splat_pattern" => seed.keywords.iter().any(|k| !named.contains(k)),
            _ => {
                let by_position = !keyword_only && at(position) & 1 == 1;
                if !keyword_only {
                    position += 1;
                }
                by_position || names.iter().any(|n| seed.keywords.contains(n))
            }
        };
        if all || hit {
            tainted.extend(names);
        }
    }
    tainted
}

/// Tool input leaving the file: calls from tainted code into names imported from other
/// modules (the tainted argument positions and keywords), and tool handlers registered from
/// another module (`mcp.add_tool(imported)`), every parameter of which is input. One flow per
/// imported name.
fn outgoing(
    analyzer: &Analyzer<'_, '_>,
    linked: &Imports,
    families: &HashMap<&str, &str>,
    calls: &[PyNode<'_>],
) -> Vec<Flow> {
    let text = analyzer.source;
    let mut merged: BTreeMap<(String, String), (Positions, BTreeSet<String>)> = BTreeMap::new();
    for call in calls {
        if let Some(path) = registered_handler(*call, text)
            .and_then(|handler| linked.path(handler, text, families))
            .filter(|(_, name)| !name.is_empty())
        {
            merged.entry(path).or_default().0 = ALL_POSITIONS;
        }
        let Some(callee) = call
            .field("function")
            .map(unsplat)
            .filter(|c| matches!(c.kind_name(), "identifier" | "attribute"))
        else {
            continue;
        };
        if analyzer.tainted_scopes.containing(*call).next().is_none()
            || analyzer.resolve(callee).is_some()
        {
            continue;
        }
        let (Some(path), Some(arguments)) = (
            linked
                .path(callee, text, families)
                .filter(|(_, name)| !name.is_empty()),
            call.field("arguments"),
        ) else {
            continue;
        };
        let tainted = |node: PyNode<'_>| analyzer.mentions_taint(*call, node);
        let mut positions: Positions = 0;
        let mut keywords = BTreeSet::new();
        // Past a `*args`, a positional argument's position is unknown: it may be any later one.
        let mut position = 0u32;
        let mut after_splat = false;
        for argument in named_children(arguments) {
            let bits = match position {
                0..64 if after_splat => ALL_POSITIONS << position,
                0..64 => 1 << position,
                _ => 0,
            };
            match argument.kind_name() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) =
                        (argument.field("name"), argument.field("value"))
                        && tainted(value)
                    {
                        keywords.insert(text_of(name, text).to_string());
                    }
                }
                "dictionary_splat" if tainted(argument) => positions = ALL_POSITIONS,
                "dictionary_splat" => {}
                kind => {
                    if tainted(argument) {
                        positions |= if kind == "list_splat" {
                            ALL_POSITIONS << position.min(63)
                        } else {
                            bits
                        };
                    }
                    after_splat |= kind == "list_splat";
                    position = position.saturating_add(1);
                }
            }
        }
        if positions != 0 || !keywords.is_empty() {
            let entry = merged.entry(path).or_default();
            entry.0 |= positions;
            entry.1.extend(keywords);
        }
    }
    merged
        .into_iter()
        .map(|((module, name), (positions, keywords))| Flow {
            module,
            name,
            positions,
            keywords: keywords.into_iter().collect(),
        })
        .collect()
}

/// The start and end byte of a statement.
type ByteRange = (usize, usize);

/// How long a chain of names and calls [`Analyzer::dash_free`] follows.
const DASH_FREE_DEPTH: usize = 8;

/// Rounds of taint propagation through assignments inside one function.
const TAINT_ROUNDS: usize = 8;

/// How many times [`seed_taint`] visits one function at most (its first visit, and the
/// ones after its tainted names grew).
const MAX_VISITS: usize = 8;

/// How many reads of one tainted module global [`Analyzer::reads_tainted_global`] resolves
/// inside one node.
const MAX_GLOBAL_READS: usize = 64;

/// Taint the `roots` (tool handlers and the functions other files send tool input to, with
/// their tainted parameters), then follow assignments inside each function and calls into
/// module-level functions (one set of tainted names per function).
/// The nodes [`seed_taint`] follows taint through, in source order.
struct TaintNodes<'a, 't> {
    assignments: &'a [PyNode<'t>],
    flows: &'a [PyNode<'t>],
    calls: &'a [PyNode<'t>],
    /// `global` and `nonlocal` statements.
    declarations: &'a [PyNode<'t>],
    /// Every function definition.
    functions: &'a [PyNode<'t>],
}

fn seed_taint<'t>(
    analyzer: &mut Analyzer<'_, '_>,
    locals: &Locals<'_, 't>,
    roots: Vec<(PyNode<'t>, HashSet<String>)>,
    nodes: &TaintNodes<'_, 't>,
) {
    let TaintNodes {
        assignments,
        flows,
        calls,
        declarations,
        functions,
    } = *nodes;
    let text = analyzer.source;
    let mut tainted: HashMap<usize, (PyNode<'t>, HashSet<String>)> = HashMap::new();
    let mut queue = Vec::new();
    for (function, names) in roots {
        let entry = tainted
            .entry(function.id())
            .or_insert_with(|| (function, HashSet::new()));
        if entry.1.is_empty() {
            queue.push(function);
        }
        entry.1.extend(names);
    }
    // The methods of each class, and the `self.x` attributes tool input reaches in any of
    // them: every method of the class reads them tainted.
    // A class and the module's classes it derives from, or that derive from it, share
    // one family: `self` in a base class's method may be an instance of the subclass.
    let mut class_methods: HashMap<&str, Vec<PyNode<'t>>> = HashMap::new();
    for ((class, _), method) in &locals.methods {
        class_methods
            .entry(locals.family(class))
            .or_default()
            .push(*method);
    }
    let mut class_attributes: HashMap<&str, HashSet<String>> = HashMap::new();
    // Every function a bounded number of times (each visit costs a pass over it, so the
    // whole stays linear in the file), and the whole a bounded number of visits.
    let most_rounds =
        queue.len() + MAX_VISITS * (locals.functions.len() + locals.methods.len()) + 256;
    // Two phases: the second visits once more every method of a class whose attributes
    // the first found tainted (`self.cmd = cmd` in `set`, read in `run`).
    for phase in 0..2 {
        let mut rounds = 0;
        let mut visits: HashMap<usize, usize> = HashMap::new();
        while let Some(function) = queue.pop() {
            rounds += 1;
            if rounds > most_rounds {
                break;
            }
            let seen = visits.entry(function.id()).or_default();
            *seen += 1;
            if *seen > MAX_VISITS {
                continue;
            }
            let Some((_, mut names)) = tainted.get(&function.id()).cloned() else {
                continue;
            };
            let class = locals
                .class_of
                .get(&function.id())
                .map(|class| locals.family(class));
            if let Some(attributes) = class.and_then(|class| class_attributes.get(class)) {
                names.extend(attributes.iter().cloned());
            }
            // Bounded rounds: a chain of assignments written in reverse order would otherwise cost
            // one pass over the function per link.
            for _ in 0..TAINT_ROUNDS {
                let before = names.len();
                for assignment in inside(assignments, function)
                    .iter()
                    .filter(|a| contains(function, **a))
                {
                    let (Some(left), Some(right)) =
                        (assignment.field("left"), assignment.field("right"))
                    else {
                        continue;
                    };
                    if analyzer.reads.any_within(&names, right) {
                        let mut bound = Vec::new();
                        bound_names(left, text, &mut bound);
                        names.extend(bound);
                        // `box.c = cmd`, `self.cmd = cmd`: that attribute carries the taint.
                        if left.kind_name() == "attribute"
                            && left
                                .field("object")
                                .is_some_and(|object| object.kind_name() == "identifier")
                        {
                            names.insert(text_of(left, text).to_string());
                        }
                        // `cmd[2] = x`: the list carries the taint of `x`.
                        if let Some(list) = subscripted_name(left) {
                            names.insert(text_of(list, text).to_string());
                        }
                    }
                }
                // `for c in cmds`, `[.. for c in cmds]`, `c := cmd`, `with open(p) as c`,
                // `match request: case {"cmd": c}`.
                for flow in inside(flows, function)
                    .iter()
                    .filter(|f| contains(function, **f))
                {
                    for (target, source) in flow_parts(*flow) {
                        if analyzer.reads.any_within(&names, source) {
                            names.extend(flow_targets(target, text));
                        }
                    }
                }
                // `args.append(x)`, `.extend`, `.insert`: the list carries the taint of `x`.
                for call in inside(calls, function)
                    .iter()
                    .filter(|c| contains(function, **c))
                {
                    if let Some(callee) = call
                        .field("function")
                        .filter(|f| f.kind_name() == "attribute")
                        && let (Some(object), Some(method)) =
                            (callee.field("object"), callee.field("attribute"))
                        && object.kind_name() == "identifier"
                        && matches!(text_of(method, text), "append" | "extend" | "insert")
                        && call
                            .field("arguments")
                            .is_some_and(|a| analyzer.reads.any_within(&names, a))
                    {
                        names.insert(text_of(object, text).to_string());
                    }
                }
                if names.len() == before {
                    break;
                }
            }
            // `global c; c = cmd`: the module's `c` holds tool input.
            for statement in inside(declarations, function).iter().filter(|d| {
                d.kind_name() == "global_statement" && enclosing_function(**d) == Some(function)
            }) {
                for name in named_children(*statement) {
                    let name = text_of(name, text);
                    if names.contains(name) {
                        analyzer.tainted_globals.insert(name.to_string());
                    }
                }
            }
            // `self.cmd = cmd` in one method: the other methods of the class read it tainted.
            if let Some(class) = class {
                class_attributes
                    .entry(class)
                    .or_default()
                    .extend(names.iter().filter(|n| n.starts_with("self.")).cloned());
            }
            for call in inside(calls, function)
                .iter()
                .filter(|c| contains(function, **c))
            {
                let Some(callee) = call.field("function") else {
                    continue;
                };
                let Some(target) = locals.callee(function, callee, text) else {
                    continue;
                };
                let Some(arguments) = call.field("arguments") else {
                    continue;
                };
                // `self.run(x)`, `Shell(x)` into `__init__`: `x` is the parameter after `self`.
                let parameters = parameter_names(target, text);
                let mut new_names = HashSet::new();
                let (keywords, positional): (Vec<_>, Vec<_>) = named_children(arguments)
                    .into_iter()
                    .partition(|argument| argument.kind_name() == "keyword_argument");
                for (argument, parameter) in positional.into_iter().zip(&parameters) {
                    if analyzer.reads.any_within(&names, argument) {
                        new_names.extend(parameter.iter().cloned());
                    }
                }
                // `helper(c=cmd)`: the parameter of that name.
                for keyword in keywords {
                    if let (Some(name), Some(value)) =
                        (keyword.field("name"), keyword.field("value"))
                        && analyzer.reads.any_within(&names, value)
                    {
                        let name = text_of(name, text);
                        if parameters.iter().flatten().any(|p| p == name) {
                            new_names.insert(name.to_string());
                        }
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
        if phase == 0 {
            for (class, attributes) in &class_attributes {
                if attributes.is_empty() {
                    continue;
                }
                for method in class_methods.get(class).into_iter().flatten() {
                    tainted
                        .entry(method.id())
                        .or_insert_with(|| (*method, HashSet::new()));
                    queue.push(*method);
                }
            }
            // `global c; c = cmd` in a handler: every function that reads the module's `c`
            // starts with it tainted, so it follows `command = f"echo {c}"` and `helper(c)`.
            for function in functions {
                let read: Vec<String> = analyzer
                    .tainted_globals
                    .iter()
                    .filter(|name| analyzer.reads_module_name(*function, name))
                    .cloned()
                    .collect();
                if read.is_empty() {
                    continue;
                }
                tainted
                    .entry(function.id())
                    .or_insert_with(|| (*function, HashSet::new()))
                    .1
                    .extend(read);
                queue.push(*function);
            }
            if queue.is_empty() {
                break;
            }
        }
    }
    analyzer.tainted_scopes = Scopes::new(tainted.into_values().collect());
}

/// The nodes that bind names, for [`record_bindings`].
struct Bound<'a, 't> {
    assignments: &'a [PyNode<'t>],
    flows: &'a [PyNode<'t>],
    scope_nodes: &'a [PyNode<'t>],
    /// Every name an import statement binds, with the statement.
    imports: &'a [(PyNode<'t>, String)],
}

/// Record every binding of every name in its scope.
fn record_bindings<'t>(names: &mut Namespaces<'t>, bound: &Bound<'_, 't>, text: &str) {
    // `a = b = "x"`: the value is the innermost right side. Found once per chain, not once
    // per link: walking down from every link of `a = a = .. = a` was quadratic in its length.
    let mut innermost: HashMap<usize, Option<PyNode<'t>>> = HashMap::new();
    for assignment in bound.assignments {
        let Some(left) = assignment.field("left") else {
            continue;
        };
        let mut links = Vec::new();
        let mut right = assignment.field("right");
        while let Some(inner) = right.filter(|r| r.kind_name() == "assignment") {
            if let Some(known) = innermost.get(&inner.id()) {
                right = *known;
                break;
            }
            links.push(inner.id());
            right = inner.field("right");
        }
        for link in links {
            innermost.insert(link, right);
        }
        let plus = assignment.kind_name() == "augmented_assignment";
        let followed = !plus
            || assignment
                .field("operator")
                .is_some_and(|op| text_of(op, text) == "+=");
        match right {
            Some(right) if left.kind_name() == "identifier" && followed => {
                let name = text_of(left, text).to_string();
                names.bind(left, name, Binding::Assign { right, plus }, Place::Here);
            }
            _ => {
                let mut bound_here = Vec::new();
                bound_names(left, text, &mut bound_here);
                for name in bound_here {
                    names.bind(left, name, Binding::Other, Place::Here);
                }
            }
        }
    }
    for flow in bound.flows {
        let place = match flow.kind_name() {
            "named_expression" => Place::OutsideComprehensions,
            _ => Place::Here,
        };
        for (target, source) in flow_parts(*flow) {
            // `for cmd in ["npx.cmd", "npx"]`: the name takes each element.
            if flow.kind_name() == "for_statement"
                && target.kind_name() == "identifier"
                && matches!(source.kind_name(), "list" | "tuple")
            {
                let name = text_of(target, text).to_string();
                names.bind(target, name, Binding::Each(source), place);
                continue;
            }
            for name in flow_targets(target, text) {
                names.bind(target, name, Binding::Other, place);
            }
        }
    }
    for scope in bound.scope_nodes {
        if let Some(name) = scope.field("name") {
            let place = Place::Around(scope.id());
            names.bind(
                *scope,
                text_of(name, text).to_string(),
                Binding::Other,
                place,
            );
        }
        if let Some(parameters) = scope.field("parameters") {
            let mut bound_here = Vec::new();
            bound_names(parameters, text, &mut bound_here);
            for name in bound_here {
                names.bind(parameters, name, Binding::Other, Place::Here);
            }
        }
    }
    for (import, name) in bound.imports {
        names.bind(*import, name.clone(), Binding::Other, Place::Here);
    }
}

/// Text that reaches the module namespace reflectively.
const REFLECTIVE: [&str; 8] = [
    "globals",
    "vars",
    "locals",
    "__dict__",
    "f_globals",
    "modules",
    "builtins",
    "__builtins__",
];

/// Writes to module-level names the analyser cannot follow, recorded as bindings of those
/// names: `X.name = ..` (a module object: `sys.modules[__name__]`, `import me`, `builtins`),
/// `globals()["name"] = ..` (any subscript with that literal key), `setattr(X, "name", ..)`,
/// `globals().update(name=..)`. `true` when a write's name is not known (a computed key on a
/// reflective object, `exec`/`eval`/`compile` of code): then no module-level name is a
/// constant.
fn record_reflective_writes(
    analyzer: &Analyzer<'_, '_>,
    names: &mut Namespaces<'_>,
    assignments: &[PyNode<'_>],
    calls: &[PyNode<'_>],
) -> bool {
    let text = analyzer.source;
    let reflective = |node: PyNode<'_>| {
        let written = text_of(node, text);
        !(written.starts_with("self.") || written.starts_with("cls."))
            && REFLECTIVE.iter().any(|word| written.contains(word))
    };
    let is_self = |node: PyNode<'_>| matches!(text_of(node, text), "self" | "cls");
    let mut unknown = false;
    for assignment in assignments {
        let Some(left) = assignment.field("left") else {
            continue;
        };
        let targets = match left.kind_name() {
            "pattern_list" | "tuple_pattern" | "list_pattern" => named_children(left),
            _ => vec![left],
        };
        for target in targets {
            let object = target.field(match target.kind_name() {
                "attribute" => "object",
                _ => "value",
            });
            match target.kind_name() {
                "attribute" if !object.is_some_and(is_self) => {
                    if let Some(name) = target.field("attribute") {
                        names.bind_in_module(text_of(name, text).to_string());
                    }
                }
                "subscript" => {
                    match target
                        .field("subscript")
                        .and_then(|key| analyzer.string_literal_text(key))
                    {
                        Some(key) => names.bind_in_module(key),
                        None => unknown |= object.is_some_and(reflective),
                    }
                }
                _ => {}
            }
        }
    }
    for call in calls {
        let Some(callee) = call.field("function") else {
            continue;
        };
        let arguments = call
            .field("arguments")
            .map(named_children)
            .unwrap_or_default();
        if matches!(
            analyzer.resolve(callee),
            Some(Value::Function(Function::Eval | Function::Compile))
        ) {
            unknown = true;
            continue;
        }
        if callee.kind_name() == "identifier" && text_of(callee, text) == "setattr" {
            if let Some(target) = arguments.first().filter(|t| !is_self(**t)) {
                match arguments
                    .get(1)
                    .and_then(|name| analyzer.string_literal_text(*name))
                {
                    Some(name) => names.bind_in_module(name),
                    None => unknown |= reflective(*target) || target.kind_name() != "identifier",
                }
            }
            continue;
        }
        let (Some(object), Some(method)) = (callee.field("object"), callee.field("attribute"))
        else {
            continue;
        };
        let method = text_of(method, text);
        if !matches!(method, "update" | "setdefault" | "__setitem__") || !reflective(object) {
            continue;
        }
        let keys = match method {
            "update" => arguments.as_slice(),
            _ => arguments.get(..1).unwrap_or(&[]),
        };
        for key in keys {
            match key.kind_name() {
                "keyword_argument" => {
                    if let Some(name) = key.field("name") {
                        names.bind_in_module(text_of(name, text).to_string());
                    }
                }
                "dictionary" => {
                    for pair in named_children(*key) {
                        match pair
                            .field("key")
                            .and_then(|k| analyzer.string_literal_text(k))
                        {
                            Some(name) => names.bind_in_module(name),
                            None => unknown = true,
                        }
                    }
                }
                _ => match analyzer.string_literal_text(*key) {
                    Some(name) => names.bind_in_module(name),
                    None => unknown = true,
                },
            }
        }
    }
    unknown
}

/// Standard modules whose `*` defines only their own helpers, never a command: a star
/// import of anything else may rebind any module-level name.
fn harmless_star_module(module: &str) -> bool {
    matches!(
        module,
        "typing"
            | "typing_extensions"
            | "dataclasses"
            | "enum"
            | "abc"
            | "collections"
            | "collections.abc"
            | "math"
            | "cmath"
            | "decimal"
            | "fractions"
            | "functools"
            | "itertools"
            | "operator"
            | "numbers"
            | "statistics"
            | "struct"
            | "tkinter"
            | "tkinter.ttk"
            | "ctypes"
    )
}

/// The innermost function definition around `node`.
fn enclosing_function(node: PyNode<'_>) -> Option<PyNode<'_>> {
    let mut scope = node.parent();
    while let Some(node) = scope {
        if node.kind_name() == "function_definition" {
            return Some(node);
        }
        scope = node.parent();
    }
    None
}

/// The function in whose scope a `def` binds its name: the innermost scope around it when
/// that is a function (a class body or a lambda binds in its own scope; a module-level `def`
/// in none here).
fn binding_function(definition: PyNode<'_>) -> Option<PyNode<'_>> {
    let mut scope = definition.parent();
    while let Some(node) = scope {
        match node.kind_name() {
            "function_definition" => return Some(node),
            "class_definition" | "lambda" => return None,
            _ => scope = node.parent(),
        }
    }
    None
}

/// The tests of a condition joined by `or` (through parentheses): `if a or (b or c)` is
/// taken when any of `a`, `b`, `c` holds.
fn disjuncts(condition: PyNode<'_>) -> Vec<PyNode<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![condition];
    while let Some(node) = stack.pop() {
        match node.kind_name() {
            "parenthesized_expression" => stack.extend(node.first_named()),
            "boolean_operator"
                if node
                    .field("operator")
                    .is_some_and(|op| op.kind_name() == "or") =>
            {
                stack.extend(node.field("left"));
                stack.extend(node.field("right"));
            }
            _ => out.push(node),
        }
    }
    out
}

/// The lambda a call calls right where it is written: `(lambda c: os.system(c))(cmd)`.
fn called_lambda(call: PyNode<'_>) -> Option<PyNode<'_>> {
    let mut function = call.field("function")?;
    while function.kind_name() == "parenthesized_expression" {
        function = function.first_named()?;
    }
    Some(function).filter(|f| f.kind_name() == "lambda")
}

/// The names a flow target binds: the captures of a `case` pattern, else the names of an
/// assignment target.
fn flow_targets(target: PyNode<'_>, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if target.kind_name() == "case_pattern" {
        pattern_captures(target, text, &mut out);
    } else {
        bound_names(target, text, &mut out);
    }
    out
}

/// The name of `cmd[2]` or `cmd[1:]` as an assignment target.
fn subscripted_name(left: PyNode<'_>) -> Option<PyNode<'_>> {
    (left.kind_name() == "subscript")
        .then(|| left.field("value"))
        .flatten()
        .filter(|value| value.kind_name() == "identifier")
}

/// The list literal an assignment's right side starts with: `["git", "log"]`, or the
/// leftmost list of `["git"] + extra` (which holds the program).
fn list_literal_of(right: PyNode<'_>) -> Option<PyNode<'_>> {
    let mut left = right;
    while left.kind_name() == "binary_operator" {
        left = left.field("left")?;
    }
    Some(left).filter(|l| matches!(l.kind_name(), "list" | "tuple"))
}

/// A name that may be a constant (in its scope), with the values assigned to it and whether
/// each is a `+=`.
type Candidate<'t> = ((ScopeId, String), Vec<(PyNode<'t>, bool)>);

/// Drop from `analyzer.constants` every candidate one of whose assignments is not a constant
/// given the others, until none is left to drop. A name dropped sends the candidates that read
/// it back to be checked (a chain `a1 = a0 + "x"`, `a2 = a1 + "x"`, .. costs one check per
/// link, not one pass over the file per link); then whole passes catch what depends on a
/// name some other way (through a function's return), at most [`CONSTANT_ROUNDS`] of them.
/// If they do not settle, no name of the file is a constant: fewer constants mean more
/// findings, never fewer.
fn drop_non_constants(analyzer: &mut Analyzer<'_, '_>, candidates: &[Candidate<'_>]) {
    let mut readers: HashMap<(ScopeId, String), Vec<usize>> = HashMap::new();
    for (index, (_, assigned)) in candidates.iter().enumerate() {
        for (right, _) in assigned {
            let mut stack = vec![*right];
            while let Some(node) = stack.pop() {
                if node.kind_name() == "identifier" {
                    readers
                        .entry(analyzer.key_of(node))
                        .or_default()
                        .push(index);
                }
                stack.extend(named_children(node));
            }
        }
    }
    let fails = |analyzer: &Analyzer<'_, '_>, index: usize| {
        candidates.get(index).is_some_and(|(key, assigned)| {
            analyzer.constants.contains(key)
                && assigned
                    .iter()
                    .any(|(right, _)| !(analyzer.is_literal(*right) && analyzer.const_like(*right)))
        })
    };
    let mut pending: Vec<usize> = (0..candidates.len()).collect();
    for _ in 0..CONSTANT_ROUNDS {
        while let Some(index) = pending.pop() {
            if fails(analyzer, index)
                && let Some((key, _)) = candidates.get(index)
            {
                analyzer.constants.remove(key);
                pending.extend(readers.get(key).into_iter().flatten());
            }
        }
        pending = (0..candidates.len())
            .filter(|index| fails(analyzer, *index))
            .collect();
        if pending.is_empty() {
            return;
        }
    }
    analyzer.constants.clear();
}

/// Constants, lists and dicts from the bindings: a name (in its scope) bound only by
/// assignments of constants is a constant; only by list literals (or `+=`), a list; only by
/// dicts, a dict. With `module_written`, no module-level name is a constant.
fn bind_values<'t>(
    analyzer: &mut Analyzer<'_, 't>,
    module_written: bool,
) -> Vec<AliasCandidate<'t>> {
    let text = analyzer.source;
    let mut alias_candidates = Vec::new();
    let Some(names) = analyzer.names.take() else {
        return alias_candidates;
    };
    let root = names.root();
    let mut candidates = Vec::new();
    let mut collections = Vec::new();
    for (scope, name, bindings) in names.all() {
        let mut assigned: Vec<(PyNode<'_>, bool)> = Vec::new();
        let mut looped = false;
        let mut followed = true;
        for binding in bindings {
            match binding {
                Binding::Assign { right, plus } => assigned.push((*right, *plus)),
                // Each element is one value the name takes.
                Binding::Each(list) => {
                    looped = true;
                    assigned.extend(named_children(*list).into_iter().map(|e| (e, false)));
                }
                Binding::Other => followed = false,
            }
        }
        if !assigned.is_empty() {
            alias_candidates.push((
                (scope, name.to_string()),
                assigned.iter().map(|(right, _)| *right).collect(),
            ));
        }
        if !followed {
            continue;
        }
        let key = (scope, name.to_string());
        if !looped
            && assigned
                .iter()
                .all(|(right, plus)| *plus || list_literal_of(*right).is_some())
        {
            let lists = (assigned.iter())
                .filter(|(_, plus)| !plus)
                .filter_map(|(right, _)| list_literal_of(*right))
                .collect();
            analyzer.lists.insert(key.clone(), lists);
            for (right, plus) in &assigned {
                if *plus && matches!(right.kind_name(), "list" | "tuple") {
                    analyzer
                        .additions
                        .entry(key.clone())
                        .or_default()
                        .push(*right);
                } else if *plus || !matches!(right.kind_name(), "list" | "tuple") {
                    analyzer.opaque_growth.insert(key.clone());
                }
            }
        }
        let is_dict = |right: PyNode<'_>| {
            right.kind_name() == "dictionary"
                || (right.kind_name() == "call"
                    && right
                        .field("function")
                        .is_some_and(|f| text_of(f, text) == "dict"))
        };
        if !looped
            && assigned
                .iter()
                .all(|(right, plus)| !plus && is_dict(*right))
        {
            let dicts = assigned.iter().map(|(right, _)| *right).collect();
            analyzer.dicts.insert(key.clone(), dicts);
        }
        if !(module_written && scope == root) {
            // `ALLOWED = {"ruff", "uv"}`: a collection of strings.
            let strings: Option<Vec<Vec<String>>> = (!looped && !assigned.is_empty())
                .then(|| {
                    assigned
                        .iter()
                        .map(|(right, plus)| {
                            (!plus && matches!(right.kind_name(), "tuple" | "list" | "set"))
                                .then(|| {
                                    named_children(*right)
                                        .iter()
                                        .map(|element| analyzer.string_literal_text(*element))
                                        .collect::<Option<Vec<_>>>()
                                })
                                .flatten()
                        })
                        .collect()
                })
                .flatten();
            if let Some(strings) = strings {
                collections.push((key.clone(), strings.concat()));
            }
            candidates.push((key, assigned));
        }
    }
    analyzer.names = Some(names);
    analyzer.collections = collections.into_iter().collect();
    analyzer.constants = candidates.iter().map(|(key, _)| key.clone()).collect();
    drop_non_constants(analyzer, &candidates);
    // Values through chains of names (`CMD = BASE + FLAGS`), in bounded rounds; a name
    // grown by `+=` has none (it is still a constant).
    for _ in 0..CONSTANT_ROUNDS {
        let mut changed = false;
        for (key, assigned) in &candidates {
            if !analyzer.constants.contains(key)
                || analyzer.constant_values.contains_key(key)
                || assigned.iter().any(|(_, plus)| *plus)
            {
                continue;
            }
            let mut values: Vec<String> = Vec::new();
            for (right, _) in assigned {
                let these = analyzer.const_strs(*right);
                if these.is_empty() {
                    values.clear();
                    break;
                }
                for value in these {
                    if !values.contains(&value) && values.len() < MAX_CONSTANT_VALUES {
                        values.push(value);
                    }
                }
            }
            if !values.is_empty() {
                analyzer.constant_values.insert(key.clone(), values);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    alias_candidates
}

/// A name in its scope and the values it is given: the right sides of its assignments, the
/// elements of a list it loops over, a `:=` value, a parameter default.
type AliasCandidate<'t> = ((ScopeId, String), Vec<PyNode<'t>>);

/// [`Analyzer::aliases`]: a name one of whose values (or a branch of a conditional or
/// boolean one) is a tracked module or function is an alias of it, flow-insensitively, so
/// `p = print; p = os.popen; p(cmd)` cannot hide the sink (and `p = os.popen; p = shout;
/// p(cmd)` is reported). Values come from `candidates` (assignments, loops over literals),
/// `:=` and tuple assignments (`a, b = os.system, print`) among `bindings`, and parameter
/// defaults (`def go(cmd, run=os.system)`). Aliases of aliases
/// (`o = os; P = o.popen`) are found by a worklist: a name is looked at again only when a
/// name its values read became an alias, so a chain of any length costs its length.
fn bind_aliases<'t>(
    analyzer: &mut Analyzer<'_, 't>,
    mut candidates: Vec<AliasCandidate<'t>>,
    bindings: &[&[PyNode<'t>]],
    scope_nodes: &[PyNode<'t>],
) {
    let text = analyzer.source;
    let mut add = |analyzer: &Analyzer<'_, 't>, name: PyNode<'t>, value: PyNode<'t>| {
        match name.kind_name() {
            "identifier" => {
                candidates.push((analyzer.key_of(name), vec![value]));
                // `run = os.system` in a class body is also `self.run` in its methods.
                if let Some(class) = class_of_body_statement(name) {
                    let family = analyzer.family(text_of(class, text));
                    candidates.push((
                        (
                            ATTRIBUTE_ALIASES,
                            format!("{family}.{}", text_of(name, text)),
                        ),
                        vec![value],
                    ));
                }
            }
            // `self.run = subprocess.run`, `box.run = os.system`.
            "attribute" => {
                if let Some(key) = analyzer.attribute_key(name) {
                    candidates.push((key, vec![value]));
                }
            }
            _ => {}
        }
    };
    for binding in bindings.iter().copied().flatten() {
        match binding.kind_name() {
            "named_expression" => {
                if let (Some(name), Some(value)) = (binding.field("name"), binding.field("value")) {
                    add(analyzer, name, value);
                }
            }
            // `a, b = os.system, print`: element by element.
            "assignment" => {
                let (Some(left), Some(right)) = (binding.field("left"), binding.field("right"))
                else {
                    continue;
                };
                if left.kind_name() == "attribute"
                    || (left.kind_name() == "identifier" && class_of_body_statement(left).is_some())
                {
                    add(analyzer, left, right);
                    continue;
                }
                if !matches!(
                    left.kind_name(),
                    "pattern_list" | "tuple_pattern" | "list_pattern"
                ) || !matches!(right.kind_name(), "expression_list" | "tuple" | "list")
                {
                    continue;
                }
                let (names, values) = (named_children(left), named_children(right));
                if names.len() == values.len() {
                    for (name, value) in names.into_iter().zip(values) {
                        add(analyzer, name, value);
                    }
                }
            }
            _ => {}
        }
    }
    for function in scope_nodes
        .iter()
        .filter(|n| n.kind_name() == "function_definition")
    {
        let parameters = function.field("parameters").map(named_children);
        for parameter in parameters.unwrap_or_default() {
            if matches!(
                parameter.kind_name(),
                "default_parameter" | "typed_default_parameter"
            ) && let (Some(name), Some(value)) =
                (parameter.field("name"), parameter.field("value"))
            {
                add(analyzer, name, value);
            }
        }
    }
    // The attribute names assigned (`self.run = ..`, also in a tuple): only reads of these
    // are looked up as attribute aliases. (A name's key has no `.`; an attribute's ends in
    // `.member`.)
    analyzer.attribute_members = candidates
        .iter()
        .filter_map(|((_, name), _)| name.rsplit_once('.').map(|(_, member)| member.to_string()))
        .collect();
    // The names each candidate's values read, to wake it when one becomes an alias (built
    // once the first round found one: most files have none).
    let mut readers: Option<HashMap<&str, Vec<usize>>> = None;
    let mut pending: Vec<usize> = (0..candidates.len()).collect();
    while !pending.is_empty() {
        let mut found: Vec<usize> = Vec::new();
        for index in pending {
            let Some((key, values)) = candidates.get(index) else {
                continue;
            };
            if analyzer.aliases.contains_key(key) {
                continue;
            }
            let value = values
                .iter()
                .flat_map(|value| match value.kind_name() {
                    // `a if c else b`, `a or b`: either may be the value.
                    "conditional_expression" => {
                        let parts = named_children(*value);
                        [parts.first().copied(), parts.get(2).copied()]
                    }
                    "boolean_operator" => [value.field("left"), value.field("right")],
                    _ => [Some(*value), None],
                })
                .flatten()
                .find_map(|value| analyzer.resolve(value));
            if let Some(value) = value {
                analyzer.aliases.insert(key.clone(), value);
                found.push(index);
            }
        }
        if found.is_empty() {
            break;
        }
        let readers = readers.get_or_insert_with(|| {
            let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
            for (index, (_, values)) in candidates.iter().enumerate() {
                for value in values {
                    walk(*value, |node| {
                        match node.kind_name() {
                            "identifier" => {
                                readers.entry(text_of(node, text)).or_default().push(index);
                            }
                            // An attribute read (`x = self.run`) is woken by its member.
                            "attribute" => {
                                if let Some(member) = node.field("attribute") {
                                    readers
                                        .entry(text_of(member, text))
                                        .or_default()
                                        .push(index);
                                }
                            }
                            _ => {}
                        }
                    });
                }
            }
            readers
        });
        let mut next: Vec<usize> = found
            .iter()
            .filter_map(|index| candidates.get(*index))
            // An attribute's key ends in its member (`Runner.run`, `box.run`).
            .filter_map(|((_, name), _)| {
                readers.get(name.rsplit('.').next().unwrap_or(name.as_str()))
            })
            .flatten()
            .copied()
            .filter(|index| {
                candidates
                    .get(*index)
                    .is_some_and(|(key, _)| !analyzer.aliases.contains_key(key))
            })
            .collect();
        next.sort_unstable();
        next.dedup();
        pending = next;
    }
}

/// Rounds of constant-value folding through names (`A = B + C`).
const CONSTANT_ROUNDS: usize = 8;
/// The scope [`Analyzer::aliases`] files a receiver's attribute under (`self.run` as
/// `Runner.run`, by the class's family), file-wide and flow-insensitively (no scope has this
/// id: scope ids are node indices).
const ATTRIBUTE_ALIASES: ScopeId = ScopeId::MAX;
/// How many functions around a call are searched for a local `def` of the name it calls
/// (a bound, so deeply nested hostile code costs the same per call).
const MAX_ENCLOSING_LOOKUP: usize = 16;

/// Most values kept for one constant (`"a" if x else "b"` has two).
const MAX_CONSTANT_VALUES: usize = 8;
/// The longest folded constant kept.
const CONSTANT_LENGTH: usize = 4096;

/// The (target, source) pairs of a binding that is not an assignment: `for t in s`,
/// `[.. for t in s]`, `t := s`, `s as t` (`with`, `except`, `case`), and every capture of a
/// `match s:` case pattern.
fn flow_parts(node: PyNode<'_>) -> Vec<(PyNode<'_>, PyNode<'_>)> {
    let field = |name| node.field(name);
    match node.kind_name() {
        "for_statement" | "for_in_clause" => {
            field("left").zip(field("right")).into_iter().collect()
        }
        "named_expression" => field("name").zip(field("value")).into_iter().collect(),
        "as_pattern" => field("alias").zip(node.first_named()).into_iter().collect(),
        "except_clause" => field("alias").zip(field("value")).into_iter().collect(),
        // `lambda c=cmd: ..`: the default flows into the parameter.
        "lambda" => field("parameters")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.kind_name() == "default_parameter")
            .filter_map(|p| p.field("name").zip(p.field("value")))
            .collect(),
        // `(lambda c: os.system(c))(cmd)`: each argument flows into its parameter.
        "call" => {
            let Some(parameters) = called_lambda(node).and_then(|f| f.field("parameters")) else {
                return Vec::new();
            };
            let arguments = field("arguments").map(named_children).unwrap_or_default();
            named_children(parameters)
                .into_iter()
                .zip(
                    arguments
                        .into_iter()
                        .filter(|a| a.kind_name() != "keyword_argument"),
                )
                .collect()
        }
        "match_statement" => {
            let Some(subject) = field("subject") else {
                return Vec::new();
            };
            let mut parts = Vec::new();
            for clause in field("body").map(named_children).unwrap_or_default() {
                for pattern in named_children(clause) {
                    if pattern.kind_name() == "case_pattern" {
                        parts.push((pattern, subject));
                    }
                }
            }
            parts
        }
        _ => Vec::new(),
    }
}

impl<'s, 't> Analyzer<'s, 't> {
    /// A value a constant name may hold: strings, numbers and conditionals of them (a
    /// literal list is not a command string).
    fn const_like(&self, node: PyNode<'_>) -> bool {
        !matches!(node.kind_name(), "list" | "tuple" | "dictionary")
    }

    /// `**OPTS` (a dict literal or `dict(...)` bound to the name, or written inline): its
    /// string keys and values.
    fn splat_options(&self, node: PyNode<'t>) -> Option<Vec<(&'s str, PyNode<'t>)>> {
        let dict = match node.kind_name() {
            "identifier" => *self
                .dicts
                .get(&self.key_of(node))?
                .iter()
                .rev()
                .find(|dict| dict.start_byte() < node.start_byte())?,
            _ => node,
        };
        let options = dict_entries(dict)?
            .into_iter()
            .filter_map(|(key, value)| match key {
                DictKey::Expression(key) => named_children(key)
                    .into_iter()
                    .find(|c| c.kind_name() == "string_content")
                    .map(|content| (self.text(content), value)),
                DictKey::Keyword(name) => Some((self.text(name), value)),
            })
            .collect();
        Some(options)
    }

    /// A call that is no sink itself: `[sh, "-c", <non-literal>]` among its arguments
    /// (kubernetes `stream(..., command=[...])`), or `repo.git.<command>(<tainted>)` on a
    /// GitPython repository (`git.Repo(...)`), whose arguments become options.
    fn check_other_call(&mut self, node: PyNode<'_>, callee: PyNode<'_>, repos: &HashSet<&str>) {
        let Some(arguments) = node.field("arguments") else {
            return;
        };
        let call = Call {
            node,
            positional: Vec::new(),
            keywords: HashMap::new(),
            has_splat: false,
        };
        let mut values = Vec::new();
        for argument in named_children(arguments) {
            match argument.kind_name() {
                "keyword_argument" => values.extend(argument.field("value")),
                _ => values.push(argument),
            }
        }
        let on_repo = callee.kind_name() == "attribute"
            && callee
                .field("object")
                .filter(|o| o.kind_name() == "attribute")
                .is_some_and(|git| {
                    git.field("attribute")
                        .is_some_and(|a| self.text(a) == "git")
                        && git.field("object").is_some_and(|repo| {
                            (repo.kind_name() == "identifier" && repos.contains(self.text(repo)))
                                || (repo.kind_name() == "call"
                                    && repo.field("function").and_then(|f| self.resolve(f))
                                        == Some(Value::Function(Function::GitRepo)))
                        })
                });
        if on_repo {
            if self.can_inject_flag(node, Some("git"), None, &values) {
                self.hit(Rule::ArgvFlagInjection, &call, true);
            }
            return;
        }
        for value in values {
            if !matches!(value.kind_name(), "list" | "tuple") {
                continue;
            }
            let elements = named_children(value);
            if let Some(program) = elements.first().copied()
                && self.is_shell_wrapper(program, elements.get(1..).unwrap_or(&[]))
            {
                let tainted = self.mentions_taint(node, value);
                self.hit(Rule::ShellTrueOption, &call, tainted);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysed(text: &str, seeds: &[Flow]) -> Analysis {
        analyze(&SourceText::new(text), seeds).expect("parses")
    }

    fn flow(module: &str, name: &str, positions: Positions, keywords: &[&str]) -> Flow {
        Flow {
            module: module.to_string(),
            name: name.to_string(),
            positions,
            keywords: keywords.iter().map(|k| k.to_string()).collect(),
        }
    }

    const HEADER: &str = "from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n";

    /// The analysis of `text` as the scan runs it: `None` when the file is quiet (not
    /// analysed, its links unknown), else its analysis.
    fn scanned(text: &str, sends: bool) -> Option<Analysis> {
        let wanted = Wanted {
            quiet_links: false,
            sends,
        };
        let analysis = analyze_with(&SourceText::new(text), &[], &[], wanted).expect("parses");
        (!analysis.partial).then_some(analysis)
    }

    /// What makes a file quiet, form by form: each text is quiet or loud as said, for a
    /// production file (its flows read) and for a test.
    #[test]
    fn quiet_and_loud_files() {
        // (text, quiet in production, quiet in a test)
        let forms: &[(&str, bool, bool)] = &[
            ("import json\nprint(json.dumps({}))\n", true, true),
            // Known modules used for what they hold but cannot run.
            (
                "import os\np = os.path.join(os.environ['HOME'], 'x')\n",
                true,
                true,
            ),
            ("import asyncio\nasyncio.run(main())\n", true, true),
            ("import re\nr = re.compile('x')\n", true, true),
            ("from functools import lru_cache\n", true, true),
            // A known member of an imported known module, however reached.
            ("import subprocess\nsubprocess.run(x)\n", false, false),
            ("import os\nos.system(x)\n", false, false),
            ("from os import system\n", false, false),
            (
                "import asyncio\nasyncio.create_subprocess_shell(x)\n",
                false,
                false,
            ),
            ("from asyncio import subprocess\n", false, false),
            ("import functools\nfunctools.partial(f)\n", false, false),
            (
                "import importlib\nimportlib.import_module(x)\n",
                false,
                false,
            ),
            ("import git\ng = git.Repo('.')\n", false, false),
            ("import os as o\ndef f():\n    o.popen(x)\n", false, false),
            ("def f():\n    import os\nx.system(1)\n", false, false),
            ("import os.path\nos.execvp(x, [x])\n", false, false),
            // A builtin the analysis knows, read anywhere.
            ("eval(x)\n", false, false),
            ("f = getattr\n", false, false),
            ("m = __import__(name)\n", false, false),
            ("def f(compile):\n    return compile\n", false, false),
            // ... but not a method of something else, nor a word in a string or a comment.
            ("r = re.compile('x')\ncursor.execute(q)\n", true, true),
            (
                "'''eval, os.system and subprocess'''\n# exec(x)\n",
                true,
                true,
            ),
            // A handler registration makes a production file loud, not a test.
            ("@mcp.tool()\ndef f(x):\n    g(x)\n", false, true),
            ("mcp.add_tool(f)\n", false, true),
            (
                "@server.call_tool()\nasync def f(name, arguments):\n    pass\n",
                false,
                true,
            ),
            ("'''the tool runs'''\n", true, true),
            // A list or tuple argument whose first element may be a shell or a runner.
            ("stream(api, command=['sh', '-c', x])\n", false, false),
            ("f(('/usr/bin/env', 'bash', '-c', x))\n", false, false),
            ("f(['ba' 'sh', '-c', x])\n", false, false),
            ("f([SHELL, '-c', x])\n", false, false),
            ("f(['ba' + 'sh', '-c', x])\n", false, false),
            ("f([a if b else c, '-c', x])\n", false, false),
            ("f([f'{s}', '-c', x])\n", false, false),
            ("f([b'sh', '-c', x])\n", false, false),
            ("f(['echo', '-c', x])\n", true, true),
            // A generator's body, which tree-sitter makes an argument when it is the only one.
            ("stream(['sh', '-c', x] for _ in range(1))\n", false, false),
            ("run_all(('bash', '-c', x) for x in y)\n", false, false),
            ("f(a, (['sh', '-c', x] for _ in y))\n", false, false),
            ("f(['echo', x] for x in y)\n", true, true),
            ("f([1, 2, 3], ('a', 'b'))\n", true, true),
            ("f([shlex.quote(x), '-c', x])\n", true, true),
            ("x = ['sh', '-c', y]\n", true, true),
        ];
        for (text, production, test) in forms {
            assert_eq!(
                scanned(text, true).is_none(),
                *production,
                "production: {text:?}"
            );
            assert_eq!(scanned(text, false).is_none(), *test, "test: {text:?}");
        }
        // Too deep for the quiet path's bound (`x = 1 + 1 + ...`: ruff's AST is as deep as
        // the tree): converted, and refused there as too deep.
        let deep = format!("x = 1{}\n", " + 1".repeat(crate::nesting::MAX_TREE_DEPTH));
        let wanted = Wanted {
            quiet_links: false,
            sends: true,
        };
        let analysed = analyze_with(&SourceText::new(&deep), &[], &[], wanted);
        assert!(matches!(analysed, Err(SourceError::TooDeep { .. })));
    }

    /// On every Python file of the test data (the case set, with its evasions, and the
    /// projects): a file the scan leaves quiet has, analysed in full, no hit and (in
    /// production) no flow leaving it, and the same pragmas.
    #[test]
    fn quiet_files_have_no_hits_and_send_nothing() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let (quiet, loud) = check_quiet(&crate::python_ruff::tests::python_files(&root));
        assert!(quiet > 50 && loud > 200, "quiet {quiet}, loud {loud}");
    }

    /// `QUIET_DIRS=dir:dir cargo test -p scan --lib quiet_files_in_dirs -- --ignored
    /// --nocapture`: the same check over the Python files of other trees.
    #[test]
    #[ignore = "reads the directories in QUIET_DIRS"]
    fn quiet_files_in_dirs() {
        let dirs = std::env::var("QUIET_DIRS").unwrap_or_default();
        let files: Vec<std::path::PathBuf> = (dirs.split(':'))
            .filter(|dir| !dir.is_empty())
            .flat_map(|dir| crate::python_ruff::tests::python_files(std::path::Path::new(dir)))
            .collect();
        assert!(
            !files.is_empty(),
            "no Python file under QUIET_DIRS={dirs:?}"
        );
        check_quiet(&files);
    }

    /// Each file that is quiet (as production and as a test) checked against its full
    /// analysis; how many were quiet and loud.
    fn check_quiet(files: &[std::path::PathBuf]) -> (usize, usize) {
        let (mut quiet, mut loud) = (0, 0);
        for path in files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let source = SourceText::new(&text);
            for sends in [true, false] {
                let wanted = Wanted {
                    quiet_links: false,
                    sends,
                };
                let Ok(scan) = analyze_with(&source, &[], &[], wanted) else {
                    continue;
                };
                if !scan.partial {
                    loud += 1;
                    continue;
                }
                quiet += 1;
                let full = analysed(&text, &[]);
                let at = path.display();
                assert!(full.hits.is_empty(), "{at}: {:?}", full.hits);
                assert!(
                    !sends || full.outgoing.is_empty(),
                    "{at}: {:?}",
                    full.outgoing
                );
                assert_eq!(scan.pragmas.ignore_file, full.pragmas.ignore_file, "{at}");
                assert_eq!(
                    scan.pragmas.ignored_lines, full.pragmas.ignored_lines,
                    "{at}"
                );
            }
        }
        println!("quiet {quiet}, loud {loud} (files x {{production, test}})");
        (quiet, loud)
    }

    #[test]
    fn tainted_calls_into_imported_names_leave_the_file() {
        let text = format!(
            "{HEADER}from .git import run_git\nfrom pkg.git import run_git as rg\n\
             import pkg.shell as sh\nimport pkg.other\nfrom . import tools\nfrom .git import Git\n\
             @mcp.tool()\ndef handler(x, y):\n    run_git(x)\n    rg('a', y, mode=x, quiet=True)\n\
             \x20   sh.run(x)\n    pkg.other.go(x)\n    tools.run(x)\n    Git().diff(x)\n    g = Git()\n\
             \x20   g.log(1, x)\n    run_git('constant')\n    helper(x)\n    os_like.system(x)\n\
             def helper(z):\n    sh.later(z)\ndef untainted(x):\n    sh.never(x)\n"
        );
        let outgoing = analysed(&text, &[]).outgoing;
        assert_eq!(
            outgoing,
            vec![
                flow(".", "tools.run", 1, &[]),
                flow(".git", "Git.diff", 1, &[]),
                flow(".git", "Git.log", 2, &[]),
                flow(".git", "run_git", 1, &[]),
                flow("pkg", "other.go", 1, &[]),
                flow("pkg.git", "run_git", 2, &["mode"]),
                flow("pkg.shell", "later", 1, &[]),
                flow("pkg.shell", "run", 1, &[]),
            ]
        );
    }

    #[test]
    fn imported_tool_registrations_send_every_parameter() {
        let text = format!(
            "{HEADER}from .tools import run\nfrom . import more\nmcp.add_tool(run)\nmcp.tool()(more.go)\n"
        );
        assert_eq!(
            analysed(&text, &[]).outgoing,
            vec![
                flow(".", "more.go", ALL_POSITIONS, &[]),
                flow(".tools", "run", ALL_POSITIONS, &[]),
            ]
        );
    }

    #[test]
    fn module_level_from_imports_are_re_exports() {
        let text = "from .git import run_git as rg, diff\nfrom .all import *\nimport os\n\
                    def f():\n    from .inner import hidden\n";
        let reexports = analysed(text, &[]).reexports;
        let pairs: Vec<(&str, &str, &str)> = reexports
            .iter()
            .map(|r| (r.exported.as_str(), r.module.as_str(), r.imported.as_str()))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("rg", ".git", "run_git"),
                ("diff", ".git", "diff"),
                ("*", ".all", "*")
            ]
        );
    }

    fn tainted_hits(text: &str, seeds: &[Flow]) -> Vec<bool> {
        analysed(text, seeds)
            .hits
            .iter()
            .filter(|hit| hit.rule == Rule::ExecDynamicString)
            .map(|hit| hit.tainted)
            .collect()
    }

    #[test]
    fn seeds_taint_the_parameters_at_their_positions_and_keywords() {
        let text = "import os\n\
                    def run(a, b, *rest, c=None, **more):\n    os.system(a)\n    os.system(b)\n\
                    \x20   os.system(rest)\n    os.system(c)\n    os.system(more)\n\
                    class Git:\n    def diff(self, ref, other):\n        os.system(ref)\n        os.system(other)\n\
                    \x20   def __init__(self, path):\n        os.system(path)\n";
        assert_eq!(
            tainted_hits(text, &[flow("", "run", 0b10, &["c"])]),
            [false, true, false, true, false, false, false, false]
        );
        assert_eq!(
            tainted_hits(text, &[flow("", "run", 0b100, &["zzz"])]),
            [false, false, true, false, true, false, false, false]
        );
        assert_eq!(
            tainted_hits(
                text,
                &[flow("", "Git.diff", 1, &["other"]), flow("", "Git", 1, &[])]
            ),
            [false, false, false, false, false, true, true, true]
        );
        assert_eq!(
            tainted_hits(text, &[flow("", "run", ALL_POSITIONS, &[])]),
            [true, true, true, true, true, false, false, false]
        );
        assert_eq!(
            tainted_hits(text, &[flow("", "missing", ALL_POSITIONS, &[])]),
            [false; 8]
        );
    }

    #[test]
    fn a_seeded_function_sends_its_input_on() {
        let text = "from .b import g\ndef f(x, y):\n    return g(y)\n";
        assert!(analysed(text, &[]).outgoing.is_empty());
        assert_eq!(
            analysed(text, &[flow("", "f", 0b10, &[])]).outgoing,
            vec![flow(".b", "g", 1, &[])]
        );
    }
}
