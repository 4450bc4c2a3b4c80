//! What a language analyser reports (`Hit`) and what the scanner hands to reports (`Finding`).

use serde::Serialize;

use crate::rule::{Rule, Severity};
use crate::source::Pragmas;

/// One rule firing at one place, as found by a language analyser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The rule that fired.
    pub(crate) rule: Rule,
    /// Byte offset of the start of the call.
    pub(crate) offset: usize,
    /// The dangerous argument flows from a parameter of an MCP tool handler.
    pub(crate) tainted: bool,
    /// The severity is raised for the taint (see [`Hit::new`]).
    pub(crate) raise: bool,
}

impl Hit {
    /// `rule` at `offset`; a tainted hit is raised ([`Rule::tainted_severity`]) when its rule is
    /// ([`Rule::raised_by_taint`]).
    pub(crate) fn new(rule: Rule, offset: usize, tainted: bool) -> Hit {
        Hit {
            rule,
            offset,
            tainted,
            raise: tainted && rule.raised_by_taint(),
        }
    }
}

/// A language analyser's result for one file.
#[derive(Default)]
pub(crate) struct Analysis {
    /// Every rule hit, in source order.
    pub(crate) hits: Vec<Hit>,
    /// Pragmas found in real comments.
    pub(crate) pragmas: Pragmas,
    /// Tool input leaving this file for another module of the project.
    pub(crate) outgoing: Vec<Flow>,
    /// Names this file re-exports from another module.
    pub(crate) reexports: Vec<Reexport>,
    /// Names this file exports of its own (JS/TS): an `export *` of another module does not
    /// carry these (nor `default`).
    pub(crate) exports: Vec<String>,
    /// The names a seed can land on here (Python: its module-level functions and classes),
    /// when the analyser lists them; `None`: any name. An `export *` of this module sends
    /// another file's seed on only if it can land here or go further.
    pub(crate) defines: Option<Vec<String>>,
    /// Module-level functions (Python) no return value of which can start with `-`: an
    /// absolute path (`os.path.realpath(..)`), a string that starts with literal text.
    pub(crate) dash_free_returns: Vec<String>,
    /// The file was not analysed in full, as it can have no hit and send no flow (Python:
    /// `python_ruff::parse_quiet`): its re-exports and dash-free returns were not looked for,
    /// so the scan reads its links as unknown and analyses it in full once a flow reaches it.
    pub(crate) partial: bool,
}

/// What the other files of the project tell one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Inbound {
    /// Its exported functions whose parameters receive tool input.
    pub(crate) seeds: Vec<Flow>,
    /// The names it calls from other modules (module as written, name there) whose return
    /// values cannot start with `-` (their files' [`Analysis::dash_free_returns`]).
    pub(crate) dash_free: Vec<(String, String)>,
}

/// Argument positions, one bit each (bit `i` is argument `i`); positions past 63 are not
/// tracked.
pub(crate) type Positions = u64;

/// Every argument and parameter (a tool handler's).
pub(crate) const ALL_POSITIONS: Positions = u64::MAX;

/// Tool input crossing a module boundary: the arguments at `positions` (and, in Python, the
/// keyword arguments named in `keywords`) of a call to `name` carry tool input.
///
/// Outgoing (in [`Analysis::outgoing`]), `module` is the module as the importing file wrote
/// it: `./git`, `../lib/git.js` (JS/TS); `.git`, `..pkg.mod`, `pkg.git` (Python, leading
/// dots relative to the file's package). `name` is what that module exports: `runGit`,
/// `default` (a default export or `module.exports` itself), `Class.method` (a method of an
/// exported class), or in Python also `sub.function` (`from . import sub; sub.function(x)`,
/// which the linker tries as the submodule first).
///
/// Incoming (a seed given to the analyser), `module` is empty and `name` is what this file
/// exports: the parameters at `positions` (or named in `keywords`) of that function or
/// method are tainted, as a tool handler's are.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Flow {
    /// The module the name is imported from (empty for a seed).
    pub(crate) module: String,
    /// The exported name.
    pub(crate) name: String,
    /// The tainted argument positions.
    pub(crate) positions: Positions,
    /// The tainted keyword arguments (Python).
    pub(crate) keywords: Vec<String>,
}

/// A name this module exports from another one: `export { a as b } from './x'`, `export *
/// from './x'` (`exported` and `imported` are `*`), `import { a } from './x'; export { a }`;
/// in Python, a module-level `from .x import a as b`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reexport {
    /// The name other modules import from this one (`*`: every name of `module`).
    pub(crate) exported: String,
    /// The module it comes from, as written.
    pub(crate) module: String,
    /// Its name there.
    pub(crate) imported: String,
}

/// The language a file was analysed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.js .jsx .mjs .cjs .ts .tsx .mts .cts`
    JavaScript,
    /// `.py`
    Python,
    /// `.rs`
    Rust,
}

/// Where a finding's file sits: production code, or tests and development scripts, which
/// no MCP client reaches (folders `test`, `tests`, `__tests__`, `spec`, `e2e`, `fixtures`,
/// `scripts`, `examples`, `evals`, `benchmarks`; names `*.test.*`, `*.spec.*`, `test_*.py`, `*_test.py`,
/// `conftest.py`). A finding in the latter is reported one severity lower.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Context {
    /// Code that ships.
    #[default]
    Production,
    /// Tests, examples and development scripts.
    Test,
}

impl Context {
    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Context::Production => "production",
            Context::Test => "test",
        }
    }

    /// The context of a file at `relative` (its path from the scan root).
    pub fn of(relative: &std::path::Path) -> Context {
        const FOLDERS: [&str; 12] = [
            "test",
            "tests",
            "__tests__",
            "spec",
            "specs",
            "e2e",
            "fixtures",
            "scripts",
            "examples",
            "example",
            "evals",
            "benchmarks",
        ];
        let names: Vec<String> = relative
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(n) => Some(n.to_string_lossy().to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        let Some((file, folders)) = names.split_last() else {
            return Context::Production;
        };
        let test_file = file.contains(".test.")
            || file.contains(".spec.")
            || file == "conftest.py"
            || (file.ends_with(".py") && (file.starts_with("test_") || file.ends_with("_test.py")));
        if test_file || folders.iter().any(|f| FOLDERS.contains(&f.as_str())) {
            Context::Test
        } else {
            Context::Production
        }
    }
}

/// One reported finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Stable rule id, e.g. `exec_dynamic_string`.
    pub rule_id: &'static str,
    /// Effective severity (the rule's, raised one step when tainted by tool input).
    pub severity: Severity,
    /// The rule's own severity before any raise.
    pub base_severity: Severity,
    /// File path as discovered from the scan root.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column in UTF-16 code units.
    pub column: usize,
    /// The source line, trimmed.
    pub snippet: String,
    /// What the rule found.
    pub message: &'static str,
    /// What to do about it.
    pub suggested_fix: &'static str,
    /// The dangerous argument flows from an MCP tool handler's parameter.
    pub tainted_from_tool_input: bool,
    /// Language of the file.
    pub language: Language,
    /// Production code, or tests and development scripts (one severity lower).
    pub context: Context,
}
