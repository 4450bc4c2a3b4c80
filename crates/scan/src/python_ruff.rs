//! A second way to build a [`PyTree`]: from ruff's Python parser (`ruff_python_parser`)
//! instead of tree-sitter-python.
//!
//! ruff parses several times faster than tree-sitter-python, but its AST is not
//! tree-sitter's tree: it drops parentheses, keeps `a and b and c` as one node, has no
//! `block`, `expression_statement`, `string_start` or `argument_list`, and tells targets
//! from loads by a context flag where tree-sitter has `pattern_list` and `tuple_pattern`.
//! [`tree_from_ruff`] walks ruff's AST together with its tokens and emits, in source order,
//! the nodes tree-sitter-python 0.25 would: same kinds, fields, byte ranges and nesting, so
//! the analysis reads the same tree whichever parser made it. Parentheses, keyword
//! positions and operators come from the tokens; the content of strings (escape sequences,
//! `{{`) and the trailing comment lines a block takes in are read from the text.
//!
//! Where tree-sitter's grammar reads Python otherwise than Python does, its reading is
//! reproduced: `list[str] | None` in an annotation is a `union_type` of a `generic_type`,
//! `type(x).a = b` a type alias statement, `^` binds tighter than `&`, `as` tighter than a
//! conditional expression, `*a.b()` in a bare tuple, a subscript or a lone list element is
//! the call of `(*a).b`, `print >> f, x` a print statement, `with (a as b):` a
//! parenthesized `as_pattern`, a raw string's closing run of `\\` belongs to its
//! `string_end`. Known remaining difference: `f"{x:=10}"` (tree-sitter: a named expression;
//! Python and ruff: `x` with the format spec `=10`). Python 2 code (`print "x"`, `exec`)
//! only tree-sitter accepts.
//!
//! Named nodes match; of the anonymous ones only those standing in a field (operators) are
//! emitted. Comments and line continuations are emitted as extras, each under the innermost
//! node open where it stands (tree-sitter may hang them one level higher or lower; the
//! analysis only reads their text).
//!
//! Depth: a file of 64 KiB or more is first bounded from its tokens
//! ([`nesting_lower_bound`]: brackets and prefix-operator runs, where ruff's recursive parser
//! costs most); ruff's parser grows its own stack; the conversion recurses once per AST level
//! (on a growing stack too) and stops at the [`Builder`]'s bound
//! ([`crate::nesting::MAX_TREE_DEPTH`]); ruff's AST, which can be deeper than any stack
//! (`x**x**...`), is taken apart bottom-up on a growing stack before it is dropped
//! ([`dismantle`]), unless the converted tree is shallow enough to drop it as it is.

use ruff_python_ast::token::{Token, TokenKind};
use ruff_python_ast::visitor::transformer::{self, Transformer};
use ruff_python_ast::visitor::{
    Visitor, walk_expr, walk_interpolated_string_element, walk_pattern, walk_stmt,
};
use ruff_python_ast::{self as ast, Expr, Pattern, PySourceType, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::error::SourceError;
use crate::nesting::MAX_TREE_DEPTH;
use crate::python_tree::{Builder, PyTree};

type Step = Result<(), SourceError>;
type Field = Option<&'static str>;

/// Where the parentheses around an expression may stand: a pair outside belongs to the
/// parent (the `(`...`)` of a call's arguments).
#[derive(Clone, Copy)]
struct Bound {
    lo: usize,
    hi: usize,
}

const ANY: Bound = Bound {
    lo: 0,
    hi: usize::MAX,
};

/// Stack kept free before the conversion recurses (as ruff's parser does).
const RED_ZONE: usize = 128 * 1024;
/// Stack added when less than [`RED_ZONE`] is left.
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// Parse `text` with ruff and build the tree tree-sitter-python would. A syntax error is
/// [`SourceError::Syntax`] (the first error's line); a tree deeper than
/// [`crate::nesting::MAX_TREE_DEPTH`] is [`SourceError::TooDeep`]. `lines` holds the offset of
/// each line's first byte ([`crate::source::line_starts`]), which the tree keeps.
pub(crate) fn tree_from_ruff(text: &str, lines: Vec<usize>) -> Result<PyTree, SourceError> {
    convert(text, lines, parse_ruff(text)?)
}

/// What a parse gives the analysis: the converted tree, or for a quiet file only its
/// comments.
pub(crate) enum Parse<'t> {
    Tree(PyTree),
    /// The file is quiet (see [`Quiet`]) and its AST at most [`QUIET_DEPTH`] deep: its
    /// comments, each with its 1-based line.
    Quiet(Vec<(usize, &'t str)>),
}

/// What makes a file loud, as the analysis defines it (`python::analyze_with`). Modules
/// the analysis knows are bits of a `u32`.
pub(crate) struct QuietRules {
    /// The known modules an import of this module (as written, without leading dots) could
    /// bind.
    pub(crate) binds_modules: fn(&str) -> u32,
    /// The known modules of which this name, read as an attribute or imported from the
    /// module, is a member the analysis knows.
    pub(crate) member_of: fn(&str) -> u32,
    /// Is this name bound to a known function in every file (a builtin)?
    pub(crate) builtin_function: fn(&str) -> bool,
    /// Does this name, called or read as an attribute, register tool handlers? `None` when
    /// the file's handlers do not matter (its flows are not read).
    pub(crate) registration: Option<fn(&str) -> bool>,
}

/// [`tree_from_ruff`], unless the file is quiet ([`Parse::Quiet`]) and so needs no tree.
/// The same errors as [`tree_from_ruff`].
pub(crate) fn parse_quiet<'t>(
    text: &'t str,
    lines: Vec<usize>,
    rules: &QuietRules,
) -> Result<Parse<'t>, SourceError> {
    let parsed = parse_ruff(text)?;
    let mut quiet = Quiet {
        bytes: text.as_bytes(),
        rules,
        depth: 0,
        deepest: 0,
        loud: false,
        imported: 0,
        members: 0,
    };
    quiet.visit_body(&parsed.syntax().body);
    if quiet.loud() || quiet.deepest + bracket_depth(parsed.tokens()) > QUIET_DEPTH {
        return convert(text, lines, parsed).map(Parse::Tree);
    }
    let comments = (parsed.tokens().iter())
        .filter(|token| token.kind() == TokenKind::Comment)
        .filter_map(|token| {
            let at = token.start().to_usize();
            let comment = text.get(at..token.end().to_usize())?;
            Some((lines.partition_point(|start| *start <= at), comment))
        })
        .collect();
    // ruff's AST is never deeper than the converted tree, so the plain drop's bound holds
    // for its own depth.
    drop_ast(parsed, quiet.deepest);
    Ok(Parse::Quiet(comments))
}

/// ruff's parse of `text`, after the nesting bound of a large file; a syntax error is
/// [`SourceError::Syntax`] (the first error's line).
fn parse_ruff(text: &str) -> Result<ruff_python_parser::Parsed<ast::ModModule>, SourceError> {
    if text.len() >= PRECHECK_BYTES {
        nesting_lower_bound(text, MAX_TREE_DEPTH).map_err(|line| SourceError::TooDeep {
            line,
            limit: MAX_TREE_DEPTH,
        })?;
    }
    // The newest Python: the target version only decides which syntax ruff reports as
    // unsupported, which the scan does not read, and below 3.12 ruff checks each f-string
    // replacement field for comments by searching the file's tokens from the end, quadratic
    // in nested f-strings (`f"{f"{f"{..}"}"}"`).
    let options = ruff_python_parser::ParseOptions::from(PySourceType::Python)
        .with_target_version(ruff_python_ast::PythonVersion::latest());
    let Some(parsed) = ruff_python_parser::parse_unchecked(text, options).try_into_module() else {
        return Err(SourceError::GaveUp);
    };
    match parsed.errors().first() {
        Some(error) => {
            let line = line_of(text, error.location.start().to_usize());
            dismantle(parsed.into_syntax());
            Err(SourceError::Syntax { line })
        }
        None => Ok(parsed),
    }
}

/// The tree tree-sitter-python would build from ruff's parse; ruff's AST is dropped.
fn convert(
    text: &str,
    lines: Vec<usize>,
    parsed: ruff_python_parser::Parsed<ast::ModModule>,
) -> Result<PyTree, SourceError> {
    let result = Converter::new(text, lines, parsed.tokens()).module(parsed.syntax());
    // Taking the AST apart node by node was 5 % of a scan: a tree known to be shallow is
    // dropped as it is. Each of ruff's nodes has a node of its own in the converted tree
    // (tree-sitter's trees are never shallower), so the converted depth bounds the drop's
    // recursion.
    drop_ast(parsed, result.as_ref().map_or(usize::MAX, PyTree::depth));
    result
}

/// Drop ruff's parse, at most `depth` deep: as it is when that is shallow enough
/// ([`PLAIN_DROP_DEPTH`]), else taken apart on a growing stack ([`dismantle`]).
fn drop_ast(parsed: ruff_python_parser::Parsed<ast::ModModule>, depth: usize) {
    if depth <= PLAIN_DROP_DEPTH {
        drop(parsed);
    } else {
        dismantle(parsed.into_syntax());
    }
}

/// The deepest ruff AST of a quiet file ([`parse_quiet`]), its brackets' nesting added:
/// the converted tree is at most [`CONVERTED_LEVELS`] times as deep as that sum (plus one),
/// so it stays within [`crate::nesting::MAX_TREE_DEPTH`]: the quiet path refuses no file the
/// full one would take, and takes none it would refuse.
const QUIET_DEPTH: usize = (MAX_TREE_DEPTH - 1) / CONVERTED_LEVELS;

/// Most levels of tree-sitter's tree per level of ruff's AST or of bracket nesting
/// (`f(a=f(a=..))`: `call`, `argument_list`, `keyword_argument` for one `Call`; a
/// `parenthesized_expression` for each `(`, which ruff drops). The test
/// `ruff_and_converted_depths_bound_each_other` holds the conversion to it.
const CONVERTED_LEVELS: usize = 8;

/// The deepest nesting of brackets (`(`, `[`, `{`, f-string braces included) among `tokens`.
fn bracket_depth(tokens: &ruff_python_ast::token::Tokens) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for token in tokens.iter() {
        match token.kind() {
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    deepest
}

/// A walk of ruff's AST for [`parse_quiet`]: its depth (as [`dismantle`] counts it:
/// statements, expressions, patterns, f-string elements), and whether the file is loud. A
/// file is loud when
/// - it imports a module the analysis knows (`os`, `subprocess`, ...) and names one of that
///   module's known members as an attribute or an imported name (`system`, `run`, ...), or
///   it reads a name bound to a known builtin (`eval`, `getattr`, `__import__`, ...):
///   without either, no name of the file is ever bound to a known function (a module's
///   functions are reached only through such member names, or `getattr`), so no call is a
///   sink;
/// - its handlers matter and it reads a name or attribute that registers them (`tool`,
///   `add_tool`, ...): without one, tool input enters the file nowhere, so it sends none;
/// - some call has a list or tuple argument (positional or keyword) whose first element
///   could be a shell or a program runner once constants are folded: the one rule left,
///   a shell command list handed to any call (`stream(.., command=["sh", "-c", x])`,
///   `Analyzer::check_other_call`).
///
/// A quiet file has no hit and sends no flow whatever its tree.
struct Quiet<'t, 'r> {
    bytes: &'t [u8],
    rules: &'r QuietRules,
    depth: usize,
    deepest: usize,
    loud: bool,
    /// The known modules the file's imports could bind.
    imported: u32,
    /// The known modules of which the file names a member.
    members: u32,
}

impl Quiet<'_, '_> {
    /// Whether the file is loud already (no later node can make it quiet again).
    fn loud(&self) -> bool {
        self.loud || self.imported & self.members != 0
    }

    /// `walk` one node down, which stands for `levels` levels of the converted tree where
    /// ruff keeps a flat list that tree-sitter nests (`a and b and c`, `a = b = c`).
    fn nested(&mut self, levels: usize, walk: impl FnOnce(&mut Self)) {
        let levels = levels.max(1);
        self.depth += levels;
        self.deepest = self.deepest.max(self.depth);
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || walk(self));
        self.depth -= levels;
    }

    /// Could `element`, first in an argument list, be a shell or a program runner to
    /// `Analyzer::const_strs`? A name (a constant), a conditional or a `+` (folded), an
    /// f-string, or a string literal whose text between the quotes names one; not a call,
    /// an attribute, a number, ...
    fn may_name_program(&self, element: &Expr) -> bool {
        // The text between the quotes of each part of an implicit concatenation, joined.
        let names = |parts: &mut dyn Iterator<Item = TextRange>| {
            let mut content = Vec::new();
            for range in parts {
                let (from, to) = quoted(self.bytes, range).content;
                content.extend_from_slice(self.bytes.get(from..to).unwrap_or_default());
            }
            let content = String::from_utf8_lossy(&content);
            crate::rule::is_shell_program(&content) || crate::rule::is_program_runner(&content)
        };
        match element {
            Expr::Name(_) | Expr::If(_) | Expr::FString(_) | Expr::TString(_) => true,
            Expr::BinOp(operation) => operation.op == ast::Operator::Add,
            Expr::StringLiteral(literal) => names(&mut literal.value.iter().map(|p| p.range)),
            Expr::BytesLiteral(literal) => names(&mut literal.value.iter().map(|p| p.range)),
            _ => false,
        }
    }
}

// Once the file is loud, the walk stops: its depth then does not matter.
impl<'a> Visitor<'a> for Quiet<'_, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.loud() {
            return;
        }
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    self.imported |= (self.rules.binds_modules)(alias.name.as_str());
                }
            }
            Stmt::ImportFrom(import) => {
                if let Some(module) = &import.module {
                    self.imported |= (self.rules.binds_modules)(module.as_str());
                }
                for alias in &import.names {
                    self.members |= (self.rules.member_of)(alias.name.as_str());
                }
            }
            _ => {}
        }
        let levels = match stmt {
            Stmt::Assign(assign) => assign.targets.len(),
            _ => 1,
        };
        self.nested(levels, |me| walk_stmt(me, stmt));
    }
    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.loud() {
            return;
        }
        let registration = |name: &str| self.rules.registration.is_some_and(|r| r(name));
        match expr {
            Expr::Name(name) => {
                self.loud |= (self.rules.builtin_function)(name.id.as_str())
                    || registration(name.id.as_str());
            }
            Expr::Attribute(attribute) => {
                self.loud |= registration(attribute.attr.as_str());
                self.members |= (self.rules.member_of)(attribute.attr.as_str());
            }
            _ => {}
        }
        if let Expr::Call(call) = expr {
            let arguments = &call.arguments;
            // A generator that is the call's only argument is the `arguments` field itself in
            // tree-sitter's tree, and its body one of the values there (`f([sh, "-c", x] for
            // ..)`); any generator's body is looked at.
            let bodies = (arguments.args.iter()).filter_map(|argument| match argument {
                Expr::Generator(generator) => Some(&*generator.elt),
                _ => None,
            });
            let values = (arguments.args.iter())
                .chain(arguments.keywords.iter().map(|k| &k.value))
                .chain(bodies);
            for value in values {
                let first = match value {
                    Expr::List(list) => list.elts.first(),
                    Expr::Tuple(tuple) => tuple.elts.first(),
                    _ => None,
                };
                if first.is_some_and(|first| self.may_name_program(first)) {
                    self.loud = true;
                }
            }
        }
        let levels = match expr {
            Expr::BoolOp(operation) => operation.values.len().saturating_sub(1),
            _ => 1,
        };
        self.nested(levels, |me| walk_expr(me, expr));
    }
    fn visit_pattern(&mut self, pattern: &'a Pattern) {
        self.nested(1, |me| walk_pattern(me, pattern));
    }
    fn visit_interpolated_string_element(&mut self, element: &'a ast::InterpolatedStringElement) {
        self.nested(1, |me| walk_interpolated_string_element(me, element));
    }
}

/// The deepest converted tree whose ruff AST is dropped by plain recursion: a few hundred
/// bytes of stack per level at most, well inside the 2 MiB of any thread.
const PLAIN_DROP_DEPTH: usize = 512;

/// From this size on, a file's nesting is bounded from its tokens before ruff parses it.
/// ruff's parser recurses once per bracket or prefix operator, on a stack it grows on the
/// heap, and keeps about 2 KB per level (measured: a million `(` take 2 GB, tree-sitter 0.6
/// GB); a smaller file cannot reach much (64 KiB of `(`: about 128 MB) and skips the extra
/// lexing.
const PRECHECK_BYTES: usize = 64 * 1024;

/// `Err(line)` when the tokens of `text` alone show a tree deeper than `limit`: open
/// brackets each nest at least one node (less one: the parentheses of `with (` and
/// `from x import (` make none), and of a run of prefix operators (`- - -`, `not not`,
/// `await`) all but two are nested unary nodes, inside the open brackets. A lower bound of
/// tree-sitter's depth, so a file refused here is one the tree-sitter path refuses too. The
/// line counts logical and non-logical newlines (not those inside strings).
fn nesting_lower_bound(text: &str, limit: usize) -> Result<(), usize> {
    let mut lexer = ruff_python_parser::lexer::lex(text, ruff_python_parser::Mode::Module);
    let (mut brackets, mut run, mut line) = (0usize, 0usize, 1usize);
    loop {
        match lexer.next_token() {
            TokenKind::EndOfFile => return Ok(()),
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => {
                brackets += 1;
                run = 0;
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                brackets = brackets.saturating_sub(1);
                run = 0;
            }
            TokenKind::Minus
            | TokenKind::Plus
            | TokenKind::Tilde
            | TokenKind::Not
            | TokenKind::Await => run += 1,
            TokenKind::Newline | TokenKind::NonLogicalNewline => {
                line += 1;
                run = 0;
            }
            TokenKind::Comment => {}
            _ => run = 0,
        }
        if brackets.saturating_sub(1) + run.saturating_sub(2) > limit {
            return Err(line);
        }
    }
}

/// The 1-based line of byte `offset`.
/// A string literal's text (one part of an implicit concatenation): the length of its
/// prefix (`rb`, `f`), its quote, and the byte range between its quotes.
struct Quoted {
    prefix: usize,
    quote: u8,
    content: (usize, usize),
}

fn quoted(bytes: &[u8], range: TextRange) -> Quoted {
    let (from, to) = (range.start().to_usize(), range.end().to_usize());
    let literal = bytes.get(from..to).unwrap_or_default();
    let prefix = literal
        .iter()
        .take_while(|byte| !matches!(byte, b'\'' | b'"'))
        .count();
    let quote = literal.get(prefix).copied().unwrap_or(b'"');
    let triple = literal.get(prefix..prefix + 3) == Some(&[quote, quote, quote][..])
        && to - from >= prefix + 6;
    let quote_len = if triple { 3 } else { 1 };
    let content_start = from + prefix + quote_len;
    Quoted {
        prefix,
        quote,
        content: (
            content_start,
            to.saturating_sub(quote_len).max(content_start),
        ),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|byte| **byte == b'\n')
        .count()
        + 1
}

/// Drop ruff's AST without recursing deeper than the stack: every expression, statement and
/// pattern is replaced by a leaf, children first, on a stack that grows as needed (as ruff's
/// parser does), so the final drop only meets shallow nodes.
fn dismantle(mut module: ast::ModModule) {
    Dismantler.visit_body(&mut module.body);
    drop(module);
}

struct Dismantler;

impl Transformer for Dismantler {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            transformer::walk_stmt(self, stmt)
        });
        *stmt = Stmt::Pass(ast::StmtPass {
            node_index: ast::AtomicNodeIndex::default(),
            range: TextRange::default(),
        });
    }

    fn visit_expr(&self, expr: &mut Expr) {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            transformer::walk_expr(self, expr)
        });
        *expr = leaf_expr();
    }

    fn visit_pattern(&self, pattern: &mut Pattern) {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            transformer::walk_pattern(self, pattern);
        });
        *pattern = Pattern::MatchSingleton(ast::PatternMatchSingleton {
            node_index: ast::AtomicNodeIndex::default(),
            range: TextRange::default(),
            value: ast::Singleton::None,
        });
    }

    fn visit_interpolated_string_element(&self, element: &mut ast::InterpolatedStringElement) {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            transformer::walk_interpolated_string_element(self, element);
        });
        *element = ast::InterpolatedStringElement::Literal(ast::InterpolatedStringLiteralElement {
            node_index: ast::AtomicNodeIndex::default(),
            range: TextRange::default(),
            value: Box::from(""),
        });
    }
}

fn leaf_expr() -> Expr {
    Expr::NoneLiteral(ast::ExprNoneLiteral {
        node_index: ast::AtomicNodeIndex::default(),
        range: TextRange::default(),
    })
}

fn start(node: &impl Ranged) -> usize {
    node.range().start().to_usize()
}

fn end(node: &impl Ranged) -> usize {
    node.range().end().to_usize()
}

/// The end of a comment as tree-sitter reads it (`#.*`): with the `\r` of a `\r\n`.
fn comment_end(bytes: &[u8], token: &Token) -> usize {
    let to = end(token);
    let carriage_returns = bytes
        .get(to..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| **byte == b'\r')
        .count();
    match bytes.get(to + carriage_returns) {
        Some(b'\n') | None => to + carriage_returns,
        Some(_) => to,
    }
}

fn is_trivia(kind: TokenKind) -> bool {
    matches!(kind, TokenKind::Comment | TokenKind::NonLogicalNewline)
}

/// Comments and the tokens of line structure, which [`Converter::keyword_before`] and
/// [`Converter::keyword_after`] look past.
fn is_layout(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Comment
            | TokenKind::NonLogicalNewline
            | TokenKind::Newline
            | TokenKind::Indent
            | TokenKind::Dedent
    )
}

/// The comment lines from `line` on (blank lines skipped, up to the first other line): for
/// each, the smallest indentation width of the run so far and the comment's end.
fn comment_run(bytes: &[u8], mut line: usize) -> Vec<(usize, usize)> {
    let mut run = Vec::new();
    let mut smallest = usize::MAX;
    loop {
        let rest = bytes.get(line..).unwrap_or_default();
        let blank = rest
            .iter()
            .take_while(|byte| matches!(byte, b' ' | b'\t' | b'\x0c' | b'\r'))
            .count();
        match rest.get(blank) {
            Some(b'\n') => line += blank + 1,
            Some(b'#') => {
                smallest = smallest.min(indent_width(rest.get(..blank).unwrap_or_default()));
                let comment_end = rest
                    .iter()
                    .position(|byte| *byte == b'\n')
                    .map_or(bytes.len(), |newline| line + newline);
                run.push((smallest, comment_end));
                if comment_end >= bytes.len() {
                    return run;
                }
                line = comment_end + 1;
            }
            _ => return run,
        }
    }
}

/// The column of an indentation as tree-sitter-python's scanner counts it.
fn indent_width(indent: &[u8]) -> usize {
    indent.iter().fold(0, |width, byte| match byte {
        b'\t' => width + 8,
        b'\x0c' | b'\r' => 0,
        _ => width + 1,
    })
}

/// The length of the escape sequence after a `\` at `at` (tree-sitter-python's
/// `escape_sequence`), `None` when the `\` starts none.
fn escape_len(bytes: &[u8], at: usize, end: usize) -> Option<usize> {
    let get = |index: usize| bytes.get(index).copied().filter(|_| index < end);
    let hex = |from: usize, count: usize| {
        (from..from + count).all(|index| get(index).is_some_and(|byte| byte.is_ascii_hexdigit()))
    };
    let next = get(at + 1)?;
    match next {
        b'u' if hex(at + 2, 4) => Some(6),
        b'U' if hex(at + 2, 8) => Some(10),
        b'x' if hex(at + 2, 2) => Some(4),
        b'0'..=b'9' => {
            let digits = (at + 1..at + 4)
                .take_while(|index| get(*index).is_some_and(|byte| byte.is_ascii_digit()))
                .count();
            Some(1 + digits)
        }
        b'\r' if get(at + 2) == Some(b'\n') => Some(3),
        b'\n' => Some(2),
        b'\'' | b'"' | b'a' | b'b' | b'f' | b'r' | b'n' | b't' | b'v' | b'\\' => Some(2),
        b'N' if get(at + 2) == Some(b'{') => {
            let close = (at + 3..end).find(|index| get(*index) == Some(b'}'))?;
            (close > at + 3).then_some(close + 1 - at)
        }
        _ => None,
    }
}

/// One string of a (possibly implicitly concatenated) string expression.
enum Part<'p> {
    Plain(TextRange),
    Interpolated(TextRange, &'p ast::InterpolatedStringElements),
}

impl Part<'_> {
    fn range(&self) -> TextRange {
        match self {
            Part::Plain(range) | Part::Interpolated(range, _) => *range,
        }
    }
}

/// A node of a `^`/`&` run regrouped by tree-sitter's precedences: an operand, or an
/// operator over two groups (indexes into the arena).
enum Group<'e> {
    Operand(&'e Expr),
    Binary(usize, ast::Operator, usize),
}

/// A comprehension's body: one expression, or the key and value of a dict comprehension.
enum Body<'e> {
    One(&'e Expr),
    Pair(&'e Expr, &'e Expr),
}

struct Converter<'a> {
    text: &'a str,
    bytes: &'a [u8],
    tokens: &'a [Token],
    /// Comments and line continuations: start, end, kind; in source order.
    extras: Vec<(usize, usize, &'static str)>,
    next_extra: usize,
    /// The indices of the tokens that are not trivia ([`is_trivia`]), in order: the token
    /// searches are binary searches in it, not walks over runs of comments (a file of a
    /// million comment lines inside nested parentheses made them quadratic).
    significant: TokenList,
    /// The indices of the tokens other than comments, newlines, indents and dedents.
    structural: TokenList,
    /// One bit per byte offset: set where [`Converter::may_follow_paren`] holds. Every
    /// expression asks it, and the binary search it replaces was 5 % of a scan.
    after_paren: Vec<u64>,
    /// The comment lines after a line that ends a block, by the offset of the first line
    /// after it: each line's indentation width, as the smallest so far, and its end. Nested
    /// blocks that end on the same line share it, so the lines are read once.
    comment_runs: hashbrown::HashMap<usize, Vec<(usize, usize)>>,
    builder: Builder,
}

/// A subset of the tokens, in order, with their offsets side by side: a search is one binary
/// search over a dense array of offsets (the searches were 10 % of a scan when each went
/// through the whole token list first).
struct TokenList {
    /// Indices into the token list (fewer than the 64 MiB a file may hold).
    indices: Vec<u32>,
    /// Start offset of each token (a source is under 4 GiB: ruff's offsets are `u32`).
    starts: Vec<u32>,
    /// End offset of each token; tokens do not overlap, so these are in order too.
    ends: Vec<u32>,
}

impl TokenList {
    fn new(tokens: &[Token], keep: fn(TokenKind) -> bool) -> TokenList {
        let mut list = TokenList {
            indices: Vec::new(),
            starts: Vec::new(),
            ends: Vec::new(),
        };
        for (index, token) in tokens.iter().enumerate() {
            if keep(token.kind()) {
                list.indices.push(u32::try_from(index).unwrap_or(u32::MAX));
                list.starts.push(token.start().to_u32());
                list.ends.push(token.end().to_u32());
            }
        }
        list
    }
}

/// The offsets whose last token that is not trivia ending at or before them is a `(`, one bit
/// each (`len` + 1 bits): from the end of each `(` up to the end of the next such token, that
/// end excluded (there the next token is the last one itself).
fn after_paren(tokens: &[Token], significant: &TokenList, len: usize) -> Vec<u64> {
    let mut bits = vec![0u64; len / 64 + 1];
    let mut set = |at: usize| {
        if let Some(word) = bits.get_mut(at / 64) {
            *word |= 1 << (at % 64);
        }
    };
    let kinds = significant
        .indices
        .iter()
        .map(|index| tokens.get(*index as usize).map(Token::kind));
    for (place, kind) in kinds.enumerate() {
        if kind != Some(TokenKind::Lpar) {
            continue;
        }
        let Some(from) = significant.ends.get(place).map(|end| *end as usize) else {
            continue;
        };
        match significant.ends.get(place + 1) {
            Some(to) => (from..*to as usize).for_each(&mut set),
            None => (from..=len).for_each(&mut set),
        }
    }
    bits
}

impl<'a> Converter<'a> {
    fn new(text: &'a str, lines: Vec<usize>, tokens: &'a [Token]) -> Converter<'a> {
        let bytes = text.as_bytes();
        let mut extras = Vec::new();
        let mut gap_start = 0;
        let mut backslashes = memchr::memchr_iter(b'\\', bytes).peekable();
        for token in tokens {
            continuations(
                bytes,
                &mut backslashes,
                gap_start,
                start(token),
                &mut extras,
            );
            if token.kind() == TokenKind::Comment {
                extras.push((start(token), comment_end(bytes, token), "comment"));
            }
            gap_start = gap_start.max(end(token));
        }
        continuations(bytes, &mut backslashes, gap_start, bytes.len(), &mut extras);
        let significant = TokenList::new(tokens, |kind| !is_trivia(kind));
        Converter {
            text,
            bytes,
            tokens,
            extras,
            next_extra: 0,
            after_paren: after_paren(tokens, &significant, bytes.len()),
            significant,
            structural: TokenList::new(tokens, |kind| !is_layout(kind)),
            comment_runs: hashbrown::HashMap::new(),
            // A tree has about as many nodes as the file has tokens (0.98 on the real trees'
            // Python; up to 3 in a file of a few lines).
            builder: Builder::new(lines, tokens.len() + tokens.len() / 4 + 64),
        }
    }

    // --- building -------------------------------------------------------------------------

    /// Emit the extras that start before `before` under the innermost open node.
    fn flush(&mut self, before: usize) -> Step {
        while let Some(&(from, to, kind)) = self.extras.get(self.next_extra) {
            if from >= before {
                break;
            }
            self.next_extra += 1;
            self.builder.open(kind, None, from, true, true)?;
            self.builder.close(to);
        }
        Ok(())
    }

    fn open(&mut self, kind: &'static str, field: Field, at: usize) -> Step {
        self.flush(at)?;
        self.builder.open(kind, field, at, true, false)
    }

    fn close(&mut self, at: usize) -> Step {
        self.flush(at)?;
        self.builder.close(at);
        Ok(())
    }

    fn leaf(&mut self, kind: &'static str, field: Field, from: usize, to: usize) -> Step {
        self.open(kind, field, from)?;
        self.close(to)
    }

    fn anonymous(&mut self, kind: &'static str, field: Field, from: usize, to: usize) -> Step {
        self.flush(from)?;
        self.builder.open(kind, field, from, false, false)?;
        self.builder.close(to);
        Ok(())
    }

    // --- tokens ---------------------------------------------------------------------------

    /// The first token of `among` starting at or after `at`, and its place in `among`.
    fn first_from(&self, among: &TokenList, at: usize) -> Option<(usize, &'a Token)> {
        let place = among.starts.partition_point(|from| (*from as usize) < at);
        Some((place, self.tokens.get(*among.indices.get(place)? as usize)?))
    }

    /// The last token of `among` ending at or before `at`, and its place in `among`.
    fn last_before(&self, among: &TokenList, at: usize) -> Option<(usize, &'a Token)> {
        let place = among
            .ends
            .partition_point(|to| (*to as usize) <= at)
            .checked_sub(1)?;
        Some((place, self.tokens.get(*among.indices.get(place)? as usize)?))
    }

    /// The first token that is not trivia starting at or after `at`.
    fn next_token(&self, at: usize) -> Option<&'a Token> {
        self.first_from(&self.significant, at)
            .map(|(_, token)| token)
    }

    /// The last token that is not trivia ending at or before `at`.
    fn previous_token(&self, at: usize) -> Option<&'a Token> {
        self.last_before(&self.significant, at)
            .map(|(_, token)| token)
    }

    /// The keyword (or `:`) of `kind` that a block starting at `at` follows: the last token
    /// before `at` other than comments, newlines, indents and (unless looked for) `:`.
    fn keyword_before(&self, at: usize, kind: TokenKind) -> Option<&'a Token> {
        let (place, _) = self.last_before(&self.structural, at)?;
        self.structural
            .indices
            .get(..=place)?
            .iter()
            .rev()
            .filter_map(|index| self.tokens.get(*index as usize))
            .find(|token| kind == TokenKind::Colon || token.kind() != TokenKind::Colon)
            .filter(|token| token.kind() == kind)
    }

    /// The first token at or after `at` other than comments, newlines, indents (and `async`
    /// unless looked for), if it is one of `kinds`.
    fn keyword_after(&self, at: usize, kinds: &[TokenKind]) -> Option<&'a Token> {
        let (place, _) = self.first_from(&self.structural, at)?;
        self.structural
            .indices
            .get(place..)?
            .iter()
            .filter_map(|index| self.tokens.get(*index as usize))
            .find(|token| kinds.contains(&TokenKind::Async) || token.kind() != TokenKind::Async)
            .filter(|token| kinds.contains(&token.kind()))
    }

    /// The end of the comment right after `at` (on its line), else `at`.
    fn line_comment_end(&self, at: usize) -> usize {
        let index = self.tokens.partition_point(|token| start(token) < at);
        match self.tokens.get(index) {
            Some(token) if token.kind() == TokenKind::Comment => comment_end(self.bytes, token),
            _ => at,
        }
    }

    /// The end of a list of expressions ending at `last`, with its trailing comma if any.
    fn with_trailing_comma(&self, last: usize) -> usize {
        match self.next_token(last) {
            Some(token) if token.kind() == TokenKind::Comma => end(token),
            _ => last,
        }
    }

    /// Whether a `(` stands right before `from` (trivia skipped): the last token that is not
    /// trivia ending at or before `from` is a `(`.
    fn may_follow_paren(&self, from: usize) -> bool {
        self.after_paren
            .get(from / 64)
            .is_some_and(|word| word & (1 << (from % 64)) != 0)
    }

    /// The parentheses around `from..to` inside `bound`, innermost first.
    fn parentheses(&self, from: usize, to: usize, bound: Bound) -> Vec<(usize, usize)> {
        self.parenthesised(from, to, bound).collect()
    }

    /// The range of `expr` with its parentheses.
    fn outer(&self, expr: &Expr, bound: Bound) -> (usize, usize) {
        let (from, to) = (start(expr), end(expr));
        self.parenthesised(from, to, bound)
            .last()
            .unwrap_or((from, to))
    }

    /// [`Converter::parentheses`], one pair at a time (no list for [`Converter::outer`]).
    fn parenthesised(
        &self,
        from: usize,
        to: usize,
        bound: Bound,
    ) -> impl Iterator<Item = (usize, usize)> + use<'_, 'a> {
        let mut range = self.may_follow_paren(from).then_some((from, to));
        std::iter::from_fn(move || {
            let (from, to) = range?;
            let (open, close) = (self.previous_token(from)?, self.next_token(to)?);
            range = (open.kind() == TokenKind::Lpar
                && close.kind() == TokenKind::Rpar
                && start(open) >= bound.lo
                && end(close) <= bound.hi)
                .then(|| (start(open), end(close)));
            range
        })
    }

    // --- module and statements -----------------------------------------------------------

    fn module(mut self, module: &ast::ModModule) -> Result<PyTree, SourceError> {
        let first = self.tokens.iter().find(|token| {
            !matches!(
                token.kind(),
                TokenKind::NonLogicalNewline
                    | TokenKind::Newline
                    | TokenKind::Indent
                    | TokenKind::Dedent
                    | TokenKind::EndOfFile
            )
        });
        let module_start = first.map_or(self.text.len(), start);
        self.open("module", None, module_start)?;
        for stmt in &module.body {
            self.statement(stmt)?;
        }
        let text_end = self.text.len();
        self.close(text_end)?;
        Ok(self.builder.finish())
    }

    /// Emit a block (the body of a compound statement); returns its end.
    fn block(&mut self, body: &[Stmt], field: Field) -> Result<usize, SourceError> {
        let Some(first) = body.first() else {
            return Ok(0);
        };
        self.open("block", field, start(first))?;
        let mut last_end = start(first);
        for stmt in body {
            last_end = self.statement(stmt)?;
        }
        let block_end = self.block_end(start(first), last_end);
        self.close(block_end)?;
        Ok(block_end)
    }

    /// Where a block whose first statement starts at `first` and whose last statement ends
    /// at `last` ends: after a trailing `;`, a comment on the same line and, for an indented
    /// block, the comment lines after it indented at least as deep as the block.
    fn block_end(&mut self, first: usize, last: usize) -> usize {
        let bytes = self.bytes;
        let mut block_end = last;
        let mut at = last;
        // `;` and a comment on the line of the last statement.
        let next = self.tokens.partition_point(|token| start(token) < at);
        for token in self.tokens.get(next..).unwrap_or_default() {
            // (`last` may end inside a `\r\n` newline token: the next line is not this one.)
            if bytes
                .get(at..start(token))
                .is_some_and(|gap| gap.contains(&b'\n'))
            {
                break;
            }
            match token.kind() {
                TokenKind::Semi => block_end = end(token),
                // With the `\r` of a `\r\n`, inside the newline token.
                TokenKind::Comment => block_end = comment_end(bytes, token),
                _ => break,
            }
            at = end(token);
        }
        let line_start = bytes
            .get(..first)
            .and_then(|before| before.iter().rposition(|byte| *byte == b'\n'))
            .map_or(0, |newline| newline + 1);
        let indent = bytes.get(line_start..first).unwrap_or_default();
        if !indent
            .iter()
            .all(|byte| matches!(byte, b' ' | b'\t' | b'\x0c' | b'\r'))
        {
            return block_end;
        }
        let block_indent = indent_width(indent);
        // The comment lines after the block's last line, as deep as the block at least.
        let line = match bytes
            .get(at..)
            .and_then(|rest| rest.iter().position(|byte| *byte == b'\n'))
        {
            Some(newline) => at + newline + 1,
            None => return block_end,
        };
        let run = self
            .comment_runs
            .entry(line)
            .or_insert_with(|| comment_run(bytes, line));
        let taken = run.partition_point(|(indent, _)| *indent >= block_indent);
        match taken.checked_sub(1).and_then(|last| run.get(last)) {
            Some((_, comment_end)) => *comment_end,
            None => block_end,
        }
    }

    /// A `def` or `class` starting at `from`: with decorators, inside a
    /// `decorated_definition` whose field `definition` it is (starting at its keyword).
    fn decorated(
        &mut self,
        decorators: &[ast::Decorator],
        from: usize,
        definition: impl FnOnce(&mut Self, Field, usize) -> Result<usize, SourceError>,
    ) -> Result<usize, SourceError> {
        if decorators.is_empty() {
            return definition(self, None, from);
        }
        self.open("decorated_definition", None, from)?;
        self.decorators(decorators)?;
        let keyword = self.definition_start(decorators, from);
        let statement_end = definition(self, Some("definition"), keyword)?;
        self.close(statement_end)?;
        Ok(statement_end)
    }

    /// Emit one statement; returns its end.
    fn statement(&mut self, stmt: &Stmt) -> Result<usize, SourceError> {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.statement_inner(stmt))
    }

    fn statement_inner(&mut self, stmt: &Stmt) -> Result<usize, SourceError> {
        let (from, to) = (start(stmt), end(stmt));
        match stmt {
            Stmt::Expr(node) if self.print_chevron(&node.value, from).is_some() => {
                // `print >> f, x` is valid Python 3 (a tuple), but to tree-sitter a Python 2
                // print statement.
                let (elements, chevron): (&[Expr], _) = match &*node.value {
                    Expr::Tuple(tuple) => {
                        (tuple.elts.get(1..).unwrap_or_default(), tuple.elts.first())
                    }
                    value => (&[], Some(value)),
                };
                let Some(Expr::BinOp(chevron)) = chevron else {
                    return Ok(to);
                };
                let statement_end = match elements.last() {
                    Some(last) => self.with_trailing_comma(self.outer(last, ANY).1),
                    None => self.with_trailing_comma(self.outer(&chevron.right, ANY).1),
                };
                let operator = self.next_token(end(&*chevron.left)).map_or(from, start);
                self.open("print_statement", None, from)?;
                self.open("chevron", None, operator)?;
                self.expression(&chevron.right, None, ANY)?;
                self.close(self.outer(&chevron.right, ANY).1)?;
                for element in elements {
                    self.expression(element, Some("argument"), ANY)?;
                }
                self.close(statement_end)?;
                Ok(statement_end)
            }
            Stmt::Expr(node) => {
                let value = &*node.value;
                match value {
                    Expr::Tuple(tuple) if !tuple.parenthesized => {
                        let (list_start, list_end) = self.list_range(&tuple.elts, ANY);
                        self.open("expression_statement", None, list_start)?;
                        for element in &tuple.elts {
                            self.element(element, None)?;
                        }
                        self.close(list_end)?;
                        Ok(list_end)
                    }
                    _ => {
                        let (outer_start, outer_end) = self.outer(value, ANY);
                        self.open("expression_statement", None, outer_start)?;
                        self.expression(value, None, ANY)?;
                        self.close(outer_end)?;
                        Ok(outer_end)
                    }
                }
            }
            Stmt::Assign(node) if self.type_call_root(node).is_some() => {
                // `type(x).a = b`: tree-sitter reads a type alias statement, `type` then the
                // "type" `(x).a`.
                let (Some(target), Some(call)) = (node.targets.first(), self.type_call_root(node))
                else {
                    return Ok(to);
                };
                let value_end = self.outer(&node.value, ANY).1;
                self.open("type_alias_statement", None, from)?;
                self.open("type", Some("left"), start(&call.arguments))?;
                self.type_call_chain(target, None, call)?;
                self.close(self.outer(target, ANY).1)?;
                self.type_(&node.value, Some("right"))?;
                self.close(value_end)?;
                Ok(value_end)
            }
            Stmt::Assign(node) => {
                let first_start = node
                    .targets
                    .first()
                    .map_or(from, |target| self.outer(target, ANY).0);
                let value_end = self.expressions_end(&node.value);
                self.open("expression_statement", None, first_start)?;
                for (index, target) in node.targets.iter().enumerate() {
                    let field = if index == 0 { None } else { Some("right") };
                    self.open("assignment", field, self.outer(target, ANY).0)?;
                    self.target(target, Some("left"), ANY)?;
                }
                self.right_hand_side(&node.value, Some("right"))?;
                for _ in &node.targets {
                    self.close(value_end)?;
                }
                self.close(value_end)?;
                Ok(value_end)
            }
            Stmt::AugAssign(node) => {
                let target_start = self.outer(&node.target, ANY).0;
                let target_end = self.outer(&node.target, ANY).1;
                let value_end = self.expressions_end(&node.value);
                self.open("expression_statement", None, target_start)?;
                self.open("augmented_assignment", None, target_start)?;
                self.target(&node.target, Some("left"), ANY)?;
                if let Some(operator) = self.next_token(target_end) {
                    self.anonymous(
                        augmented_operator(node.op),
                        Some("operator"),
                        start(operator),
                        end(operator),
                    )?;
                }
                self.right_hand_side(&node.value, Some("right"))?;
                self.close(value_end)?;
                self.close(value_end)?;
                Ok(value_end)
            }
            Stmt::AnnAssign(node) => {
                let target_start = self.outer(&node.target, ANY).0;
                let statement_end = match &node.value {
                    Some(value) => self.expressions_end(value),
                    None => self.outer(&node.annotation, ANY).1,
                };
                self.open("expression_statement", None, target_start)?;
                self.open("assignment", None, target_start)?;
                self.target(&node.target, Some("left"), ANY)?;
                self.type_(&node.annotation, Some("type"))?;
                if let Some(value) = &node.value {
                    self.right_hand_side(value, Some("right"))?;
                }
                self.close(statement_end)?;
                self.close(statement_end)?;
                Ok(statement_end)
            }
            Stmt::Return(node) => {
                self.open("return_statement", None, from)?;
                if let Some(value) = &node.value {
                    self.expressions(value, None)?;
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::Delete(node) => {
                self.open("delete_statement", None, from)?;
                match node.targets.as_slice() {
                    [one]
                        if self
                            .next_token(self.outer(one, ANY).1)
                            .is_none_or(|token| token.kind() != TokenKind::Comma) =>
                    {
                        self.expressions(one, None)?;
                    }
                    targets => {
                        let (list_start, list_end) = self.list_range(targets, ANY);
                        self.open("expression_list", None, list_start)?;
                        for target in targets {
                            self.expression(target, None, ANY)?;
                        }
                        self.close(list_end)?;
                    }
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::Raise(node) => {
                self.open("raise_statement", None, from)?;
                if let Some(exception) = &node.exc {
                    self.expressions(exception, None)?;
                }
                if let Some(cause) = &node.cause {
                    self.expression(cause, Some("cause"), ANY)?;
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::Assert(node) => {
                self.open("assert_statement", None, from)?;
                self.expression(&node.test, None, ANY)?;
                if let Some(message) = &node.msg {
                    self.expression(message, None, ANY)?;
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::Pass(_) => self.leaf("pass_statement", None, from, to).map(|()| to),
            Stmt::Break(_) => self.leaf("break_statement", None, from, to).map(|()| to),
            Stmt::Continue(_) => self.leaf("continue_statement", None, from, to).map(|()| to),
            Stmt::Global(node) => {
                self.open("global_statement", None, from)?;
                for name in &node.names {
                    self.leaf("identifier", None, start(name), end(name))?;
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::Nonlocal(node) => {
                self.open("nonlocal_statement", None, from)?;
                for name in &node.names {
                    self.leaf("identifier", None, start(name), end(name))?;
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::Import(node) => {
                self.open("import_statement", None, from)?;
                for alias in &node.names {
                    self.alias(alias)?;
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::ImportFrom(node) => {
                let future = node.level == 0
                    && node
                        .module
                        .as_ref()
                        .is_some_and(|module| module.id.as_str() == "__future__");
                if future {
                    self.open("future_import_statement", None, from)?;
                } else {
                    self.open("import_from_statement", None, from)?;
                    self.import_module(node)?;
                }
                for alias in &node.names {
                    if alias.name.id.as_str() == "*" {
                        self.leaf("wildcard_import", None, start(alias), end(alias))?;
                    } else {
                        self.alias(alias)?;
                    }
                }
                self.close(to)?;
                Ok(to)
            }
            Stmt::TypeAlias(node) => {
                self.open("type_alias_statement", None, from)?;
                let left_end = node
                    .type_params
                    .as_ref()
                    .map_or(end(&*node.name), |p| end(&**p));
                self.open("type", Some("left"), start(&*node.name))?;
                if let Some(params) = &node.type_params {
                    self.open("generic_type", None, start(&*node.name))?;
                    self.expression(&node.name, None, ANY)?;
                    self.type_parameters(params, None)?;
                    self.close(left_end)?;
                } else {
                    self.expression(&node.name, None, ANY)?;
                }
                self.close(left_end)?;
                self.type_(&node.value, Some("right"))?;
                self.close(to)?;
                Ok(to)
            }
            Stmt::If(node) => {
                self.open("if_statement", None, from)?;
                self.expression(&node.test, Some("condition"), ANY)?;
                let mut statement_end = self.block(&node.body, Some("consequence"))?;
                for clause in &node.elif_else_clauses {
                    let clause_start = start(clause);
                    match &clause.test {
                        Some(test) => {
                            self.open("elif_clause", Some("alternative"), clause_start)?;
                            self.expression(test, Some("condition"), ANY)?;
                            statement_end = self.block(&clause.body, Some("consequence"))?;
                        }
                        None => {
                            self.open("else_clause", Some("alternative"), clause_start)?;
                            statement_end = self.block(&clause.body, Some("body"))?;
                        }
                    }
                    self.close(statement_end)?;
                }
                self.close(statement_end)?;
                Ok(statement_end)
            }
            Stmt::For(node) => {
                self.open("for_statement", None, from)?;
                self.target(&node.target, Some("left"), ANY)?;
                self.expressions(&node.iter, Some("right"))?;
                let mut statement_end = self.block(&node.body, Some("body"))?;
                if !node.orelse.is_empty() {
                    statement_end = self.else_clause(&node.orelse, Some("alternative"))?;
                }
                self.close(statement_end)?;
                Ok(statement_end)
            }
            Stmt::While(node) => {
                self.open("while_statement", None, from)?;
                self.expression(&node.test, Some("condition"), ANY)?;
                let mut statement_end = self.block(&node.body, Some("body"))?;
                if !node.orelse.is_empty() {
                    statement_end = self.else_clause(&node.orelse, Some("alternative"))?;
                }
                self.close(statement_end)?;
                Ok(statement_end)
            }
            Stmt::Try(node) => {
                self.open("try_statement", None, from)?;
                let mut statement_end = self.block(&node.body, Some("body"))?;
                for handler in &node.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    self.open("except_clause", None, start(handler))?;
                    match (&handler.type_, &handler.name) {
                        (Some(kind), Some(name)) => {
                            let kind_start = self.outer(kind, ANY).0;
                            self.open("as_pattern", Some("value"), kind_start)?;
                            self.expression(kind, None, ANY)?;
                            self.open("as_pattern_target", Some("alias"), start(name))?;
                            self.leaf("identifier", None, start(name), end(name))?;
                            self.close(end(name))?;
                            self.close(end(name))?;
                        }
                        (Some(kind), None) => match &**kind {
                            Expr::Tuple(tuple) if !tuple.parenthesized => {
                                for element in &tuple.elts {
                                    self.expression(element, Some("value"), ANY)?;
                                }
                            }
                            kind => self.expression(kind, Some("value"), ANY)?,
                        },
                        _ => {}
                    }
                    statement_end = self.block(&handler.body, None)?;
                    self.close(statement_end)?;
                }
                if !node.orelse.is_empty() {
                    statement_end = self.else_clause(&node.orelse, None)?;
                }
                if let Some(first) = node.finalbody.first() {
                    let keyword = self
                        .keyword_before(start(first), TokenKind::Finally)
                        .map_or(start(first), start);
                    self.open("finally_clause", None, keyword)?;
                    statement_end = self.block(&node.finalbody, None)?;
                    self.close(statement_end)?;
                }
                self.close(statement_end)?;
                Ok(statement_end)
            }
            Stmt::With(node) => {
                self.open("with_statement", None, from)?;
                let (clause_start, clause_end, parenthesized) = self.with_clause_range(node);
                self.open("with_clause", None, clause_start)?;
                if let (true, [item]) = (parenthesized, node.items.as_slice()) {
                    // `with (a as b):` is, to tree-sitter, one item: a parenthesized
                    // expression (a tuple with a trailing comma) around an `as_pattern`.
                    let comma = self
                        .previous_token(clause_end.saturating_sub(1))
                        .is_some_and(|token| token.kind() == TokenKind::Comma);
                    let kind = if comma {
                        "tuple"
                    } else {
                        "parenthesized_expression"
                    };
                    self.open("with_item", None, clause_start)?;
                    self.open(kind, Some("value"), clause_start)?;
                    self.with_item(item, None)?;
                    self.close(clause_end)?;
                    self.close(clause_end)?;
                } else {
                    for item in &node.items {
                        let (item_start, item_end) = self.with_item_range(item);
                        self.open("with_item", None, item_start)?;
                        self.with_item(item, Some("value"))?;
                        self.close(item_end)?;
                    }
                }
                self.close(clause_end)?;
                let statement_end = self.block(&node.body, Some("body"))?;
                self.close(statement_end)?;
                Ok(statement_end)
            }
            Stmt::FunctionDef(node) => {
                self.decorated(&node.decorator_list, from, |this, field, at| {
                    this.function(node, field, at)
                })
            }
            Stmt::ClassDef(node) => {
                self.decorated(&node.decorator_list, from, |this, field, at| {
                    this.class(node, field, at)
                })
            }
            Stmt::Match(node) => {
                self.open("match_statement", None, from)?;
                match &*node.subject {
                    Expr::Tuple(tuple) if !tuple.parenthesized => {
                        for element in &tuple.elts {
                            self.expression(element, Some("subject"), ANY)?;
                        }
                    }
                    subject => self.expression(subject, Some("subject"), ANY)?,
                }
                let first_case = node.cases.first().map_or(to, start);
                // The block starts with its indent, right after the `:` (or the comment
                // on its line).
                let block_start = self
                    .keyword_before(first_case, TokenKind::Colon)
                    .map_or(first_case, |colon| self.line_comment_end(end(colon)));
                self.open("block", Some("body"), block_start)?;
                let mut last_end = block_start;
                for case in &node.cases {
                    last_end = self.case(case)?;
                }
                let block_end = self.block_end(first_case, last_end);
                self.close(block_end)?;
                self.close(block_end)?;
                Ok(block_end)
            }
            Stmt::IpyEscapeCommand(_) => Ok(to),
        }
    }

    /// `print >> f` (alone or first of a bare tuple) at the start of an expression
    /// statement starting at `from`.
    fn print_chevron<'e>(&self, value: &'e Expr, from: usize) -> Option<&'e ast::ExprBinOp> {
        let first = match value {
            Expr::Tuple(tuple) if !tuple.parenthesized => tuple.elts.first()?,
            value => value,
        };
        match first {
            Expr::BinOp(binary)
                if binary.op == ast::Operator::RShift
                    && matches!(&*binary.left, Expr::Name(name) if name.id.as_str() == "print")
                    && start(&*binary.left) == from
                    && self.parentheses(start(first), end(first), ANY).is_empty() =>
            {
                Some(binary)
            }
            _ => None,
        }
    }

    /// The call `type(x)` at the root of the only target of `type(x).a = b`, which
    /// tree-sitter parses as a type alias statement.
    fn type_call_root<'n>(&self, node: &'n ast::StmtAssign) -> Option<&'n ast::ExprCall> {
        let [target] = node.targets.as_slice() else {
            return None;
        };
        if matches!(
            &*node.value,
            Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Starred(_)
        ) || matches!(&*node.value, Expr::Tuple(tuple) if !tuple.parenthesized)
        {
            return None;
        }
        let mut expr = match target {
            Expr::Attribute(attribute) => &*attribute.value,
            Expr::Subscript(subscript) => &*subscript.value,
            _ => return None,
        };
        loop {
            match expr {
                Expr::Attribute(attribute) => expr = &attribute.value,
                Expr::Subscript(subscript) => expr = &subscript.value,
                Expr::Call(call) => {
                    let simple = call.arguments.keywords.is_empty()
                        && matches!(&*call.arguments.args, [arg] if !matches!(arg, Expr::Starred(_)))
                        && matches!(&*call.func, Expr::Name(name) if name.id.as_str() == "type")
                        && start(&*call.func) == start(node)
                        && self
                            .previous_token(end(&call.arguments).saturating_sub(1))
                            .is_none_or(|token| token.kind() != TokenKind::Comma);
                    return simple.then_some(call);
                }
                _ => return None,
            }
        }
    }

    /// The target of `type(x).a = b` as tree-sitter reads it: `(x).a`.
    fn type_call_chain(&mut self, expr: &Expr, field: Field, root: &ast::ExprCall) -> Step {
        let from = start(&root.arguments);
        match expr {
            Expr::Attribute(attribute) => {
                self.open("attribute", field, from)?;
                self.type_call_chain(&attribute.value, Some("object"), root)?;
                self.leaf(
                    "identifier",
                    Some("attribute"),
                    start(&attribute.attr),
                    end(&attribute.attr),
                )?;
                self.close(end(expr))
            }
            Expr::Subscript(subscript) => {
                self.open("subscript", field, from)?;
                self.type_call_chain(&subscript.value, Some("value"), root)?;
                match &*subscript.slice {
                    Expr::Tuple(tuple) if !tuple.parenthesized => {
                        for element in &tuple.elts {
                            self.expression(element, Some("subscript"), ANY)?;
                        }
                    }
                    slice => self.expression(slice, Some("subscript"), ANY)?,
                }
                self.close(end(expr))
            }
            _ => {
                let to = end(&root.arguments);
                let inside = Bound {
                    lo: from + 1,
                    hi: to.saturating_sub(1),
                };
                self.open("parenthesized_expression", field, from)?;
                for arg in &root.arguments.args {
                    self.expression(arg, None, inside)?;
                }
                self.close(to)
            }
        }
    }

    fn else_clause(&mut self, body: &[Stmt], field: Field) -> Result<usize, SourceError> {
        let first = body.first().map_or(0, start);
        let keyword = self
            .keyword_before(first, TokenKind::Else)
            .map_or(first, start);
        self.open("else_clause", field, keyword)?;
        let clause_end = self.block(body, Some("body"))?;
        self.close(clause_end)?;
        Ok(clause_end)
    }

    fn with_item_range(&self, item: &ast::WithItem) -> (usize, usize) {
        let from = self.outer(&item.context_expr, ANY).0;
        let to = match &item.optional_vars {
            Some(vars) => self.outer(vars, ANY).1,
            None => self.outer(&item.context_expr, ANY).1,
        };
        (from, to)
    }

    /// A with item's expression: `a as b` is an `as_pattern`.
    fn with_item(&mut self, item: &ast::WithItem, field: Field) -> Step {
        match &item.optional_vars {
            Some(vars) => self.as_pattern(&item.context_expr, vars, field),
            None => self.expression(&item.context_expr, field, ANY),
        }
    }

    /// `expr as vars`. tree-sitter binds `as` tighter than a conditional expression or a
    /// lambda: `a if b else c as d` is `a if b else (c as d)`.
    fn as_pattern(&mut self, expr: &Expr, vars: &Expr, field: Field) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let bare = self.parentheses(start(expr), end(expr), ANY).is_empty();
            let (expr_start, _) = self.outer(expr, ANY);
            let (vars_start, vars_end) = self.outer(vars, ANY);
            match expr {
                Expr::If(if_) if bare => {
                    self.open("conditional_expression", field, expr_start)?;
                    self.expression(&if_.body, None, ANY)?;
                    self.expression(&if_.test, None, ANY)?;
                    self.as_pattern(&if_.orelse, vars, None)?;
                    self.close(vars_end)
                }
                Expr::Lambda(lambda) if bare => {
                    self.open("lambda", field, expr_start)?;
                    self.lambda_parameters(lambda)?;
                    self.as_pattern(&lambda.body, vars, Some("body"))?;
                    self.close(vars_end)
                }
                _ => {
                    self.open("as_pattern", field, expr_start)?;
                    self.expression(expr, None, ANY)?;
                    self.open("as_pattern_target", Some("alias"), vars_start)?;
                    self.expression(vars, None, ANY)?;
                    self.close(vars_end)?;
                    self.close(vars_end)
                }
            }
        })
    }

    fn lambda_parameters(&mut self, lambda: &ast::ExprLambda) -> Step {
        if let Some(params) = &lambda.parameters {
            self.open("lambda_parameters", Some("parameters"), start(&**params))?;
            self.parameters(params)?;
            self.close(end(&**params))?;
        }
        Ok(())
    }

    /// The range of a with statement's items, and whether parentheses of the statement
    /// (not of an item) enclose them.
    fn with_clause_range(&self, node: &ast::StmtWith) -> (usize, usize, bool) {
        let first = node
            .items
            .first()
            .map_or(start(node), |item| self.with_item_range(item).0);
        let last = node
            .items
            .last()
            .map_or(first, |item| self.with_item_range(item).1);
        let after_keyword = self
            .keyword_after(start(node), &[TokenKind::With])
            .map_or(first, end);
        match (self.next_token(after_keyword), self.next_token(last)) {
            (Some(open), Some(close))
                if open.kind() == TokenKind::Lpar
                    && start(open) < first
                    && close.kind() != TokenKind::Colon =>
            {
                let close = match close.kind() {
                    TokenKind::Comma => self.next_token(end(close)).unwrap_or(close),
                    _ => close,
                };
                (start(open), end(close), true)
            }
            _ => (first, last, false),
        }
    }

    fn definition_start(&self, decorators: &[ast::Decorator], fallback: usize) -> usize {
        let after = decorators.last().map_or(fallback, end);
        self.keyword_after(after, &[TokenKind::Def, TokenKind::Async, TokenKind::Class])
            .map_or(fallback, start)
    }

    fn decorators(&mut self, decorators: &[ast::Decorator]) -> Step {
        for decorator in decorators {
            // The decorator takes in a comment before its newline.
            let decorator_end = self.line_comment_end(self.outer(&decorator.expression, ANY).1);
            self.open("decorator", None, start(decorator))?;
            self.expression(&decorator.expression, None, ANY)?;
            self.close(decorator_end)?;
        }
        Ok(())
    }

    fn function(
        &mut self,
        node: &ast::StmtFunctionDef,
        field: Field,
        from: usize,
    ) -> Result<usize, SourceError> {
        self.open("function_definition", field, from)?;
        self.leaf(
            "identifier",
            Some("name"),
            start(&node.name),
            end(&node.name),
        )?;
        if let Some(params) = &node.type_params {
            self.type_parameters(params, Some("type_parameters"))?;
        }
        self.open("parameters", Some("parameters"), start(&*node.parameters))?;
        self.parameters(&node.parameters)?;
        self.close(end(&*node.parameters))?;
        if let Some(returns) = &node.returns {
            self.type_(returns, Some("return_type"))?;
        }
        let statement_end = self.block(&node.body, Some("body"))?;
        self.close(statement_end)?;
        Ok(statement_end)
    }

    fn class(
        &mut self,
        node: &ast::StmtClassDef,
        field: Field,
        from: usize,
    ) -> Result<usize, SourceError> {
        self.open("class_definition", field, from)?;
        self.leaf(
            "identifier",
            Some("name"),
            start(&node.name),
            end(&node.name),
        )?;
        if let Some(params) = &node.type_params {
            self.type_parameters(params, Some("type_parameters"))?;
        }
        if let Some(arguments) = &node.arguments {
            self.argument_list(arguments, Some("superclasses"))?;
        }
        let statement_end = self.block(&node.body, Some("body"))?;
        self.close(statement_end)?;
        Ok(statement_end)
    }

    fn type_parameters(&mut self, params: &ast::TypeParams, field: Field) -> Step {
        self.open("type_parameter", field, start(params))?;
        for param in &params.type_params {
            match param {
                ast::TypeParam::TypeVar(var) => match &var.bound {
                    Some(bound) => {
                        let bound_end = self.outer(bound, ANY).1;
                        self.open("type", None, start(&var.name))?;
                        self.open("constrained_type", None, start(&var.name))?;
                        self.open("type", None, start(&var.name))?;
                        self.leaf("identifier", None, start(&var.name), end(&var.name))?;
                        self.close(end(&var.name))?;
                        self.type_(bound, None)?;
                        self.close(bound_end)?;
                        self.close(bound_end)?;
                    }
                    None => {
                        self.open("type", None, start(&var.name))?;
                        self.leaf("identifier", None, start(&var.name), end(&var.name))?;
                        self.close(end(&var.name))?;
                    }
                },
                ast::TypeParam::TypeVarTuple(ast::TypeParamTypeVarTuple { name, .. })
                | ast::TypeParam::ParamSpec(ast::TypeParamParamSpec { name, .. }) => {
                    self.open("type", None, start(param))?;
                    self.open("splat_type", None, start(param))?;
                    self.leaf("identifier", None, start(name), end(name))?;
                    self.close(end(name))?;
                    self.close(end(name))?;
                }
            }
        }
        self.close(end(params))
    }

    /// An annotation: tree-sitter's `type` around the expression.
    fn type_(&mut self, expr: &Expr, field: Field) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let pairs = self.parentheses(start(expr), end(expr), ANY);
            let (from, to) = pairs.last().copied().unwrap_or((start(expr), end(expr)));
            self.open("type", field, from)?;
            if pairs.is_empty() {
                self.type_form(expr)?;
            } else {
                self.expression(expr, None, ANY)?;
            }
            self.close(to)
        })
    }

    /// Whether tree-sitter reads `expr` (in a `type`) as a `generic_type`: `list[str]`, not
    /// `typing.List[str]` nor `(list)[str]`.
    fn is_generic(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Subscript(subscript) => {
                matches!(&*subscript.value, Expr::Name(_))
                    && self.parentheses(start(expr), end(expr), ANY).is_empty()
                    && self
                        .parentheses(start(&*subscript.value), end(&*subscript.value), ANY)
                        .is_empty()
            }
            _ => false,
        }
    }

    /// The operands of a `|` chain, left to right (ruff nests it to the left; a
    /// parenthesized operand is one operand).
    fn union_operands<'e>(&self, expr: &'e Expr) -> Vec<&'e Expr> {
        let mut operands = Vec::new();
        let mut node = expr;
        loop {
            match node {
                Expr::BinOp(binary)
                    if binary.op == ast::Operator::BitOr
                        && (std::ptr::eq(node, expr)
                            || self.parentheses(start(node), end(node), ANY).is_empty()) =>
                {
                    operands.push(&*binary.right);
                    node = &binary.left;
                }
                _ => {
                    operands.push(node);
                    break;
                }
            }
        }
        operands.reverse();
        operands
    }

    /// `a | b | c` in a `type` whose first operand is a `generic_type`. tree-sitter nests
    /// the leading `generic_type`s in `union_type`s to the left; at the first operand that
    /// is not one, the rest is read as an expression (`binary_operator`s), the right side of
    /// a last `union_type`: `list[str] | set[str] | int | None` is
    /// `union_type(union_type(list[str], set[str]), int | None)`.
    fn union(&mut self, operands: &[&Expr]) -> Step {
        let generics = operands
            .iter()
            .take_while(|operand| self.is_generic(operand))
            .count();
        let (prefix, rest) = operands.split_at(generics.min(operands.len()));
        let (Some(first), Some(last)) = (operands.first(), operands.last()) else {
            return Ok(());
        };
        if rest.is_empty() {
            return self.union_prefix(prefix);
        }
        let from = self.outer(first, ANY).0;
        let to = self.outer(last, ANY).1;
        self.open("union_type", None, from)?;
        match prefix {
            [one] => self.type_(one, None)?,
            _ => {
                let prefix_end = prefix.last().map_or(to, |op| self.outer(op, ANY).1);
                self.open("type", None, from)?;
                self.union_prefix(prefix)?;
                self.close(prefix_end)?;
            }
        }
        match rest {
            [one] => self.type_(one, None)?,
            _ => {
                let rest_start = rest.first().map_or(to, |op| self.outer(op, ANY).0);
                self.open("type", None, rest_start)?;
                self.binary_chain(rest)?;
                self.close(to)?;
            }
        }
        self.close(to)
    }

    /// The inside of the `type` of `generic | generic | ...`: `union_type`s nested to the
    /// left.
    fn union_prefix(&mut self, operands: &[&Expr]) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let Some((last, init)) = operands.split_last() else {
                return Ok(());
            };
            let Some(first) = init.first() else {
                return self.type_form(last);
            };
            let from = self.outer(first, ANY).0;
            let to = self.outer(last, ANY).1;
            self.open("union_type", None, from)?;
            match init {
                [one] => self.type_(one, None)?,
                _ => {
                    let init_end = init.last().map_or(to, |op| self.outer(op, ANY).1);
                    self.open("type", None, from)?;
                    self.union_prefix(init)?;
                    self.close(init_end)?;
                }
            }
            self.type_(last, None)?;
            self.close(to)
        })
    }

    /// `a | b | c` as left-nested `binary_operator`s over `operands`.
    fn binary_chain(&mut self, operands: &[&Expr]) -> Step {
        let Some(first) = operands.first() else {
            return Ok(());
        };
        let from = self.outer(first, ANY).0;
        let ends: Vec<usize> = operands.iter().map(|op| self.outer(op, ANY).1).collect();
        let levels = operands.len().saturating_sub(1);
        for level in (0..levels).rev() {
            let field = if level + 1 == levels {
                None
            } else {
                Some("left")
            };
            self.open("binary_operator", field, from)?;
        }
        self.expression(first, Some("left"), ANY)?;
        for (index, operand) in operands.iter().enumerate().skip(1) {
            let previous_end = ends.get(index - 1).copied().unwrap_or(from);
            if let Some(token) = self.next_token(previous_end) {
                self.anonymous("|", Some("operator"), start(token), end(token))?;
            }
            self.expression(operand, Some("right"), ANY)?;
            self.close(ends.get(index).copied().unwrap_or(from))?;
        }
        Ok(())
    }

    /// The inside of a `type` (without parentheses).
    fn type_form(&mut self, expr: &Expr) -> Step {
        let (from, to) = (start(expr), end(expr));
        match expr {
            Expr::Subscript(subscript) if self.is_generic(expr) => {
                self.open("generic_type", None, from)?;
                self.leaf(
                    "identifier",
                    None,
                    start(&*subscript.value),
                    end(&*subscript.value),
                )?;
                let bracket = self
                    .next_token(end(&*subscript.value))
                    .map_or(end(&*subscript.value), start);
                self.open("type_parameter", None, bracket)?;
                match &*subscript.slice {
                    Expr::Tuple(tuple) if !tuple.parenthesized => {
                        for element in &tuple.elts {
                            self.type_(element, None)?;
                        }
                    }
                    slice => self.type_(slice, None)?,
                }
                self.close(to)?;
                self.close(to)
            }
            Expr::BinOp(binary) if binary.op == ast::Operator::BitOr => {
                let operands = self.union_operands(expr);
                if operands.first().is_some_and(|op| self.is_generic(op)) {
                    self.union(&operands)
                } else {
                    self.expression(expr, None, ANY)
                }
            }
            Expr::Starred(ast::ExprStarred { value, .. }) if !matches!(&**value, Expr::Name(_)) => {
                self.element(expr, None)
            }
            Expr::Starred(starred) if matches!(&*starred.value, Expr::Name(_)) => {
                self.open("splat_type", None, from)?;
                self.leaf("identifier", None, start(&*starred.value), to)?;
                self.close(to)
            }
            Expr::Slice(slice) => match (&slice.lower, &slice.upper, &slice.step) {
                (Some(lower), Some(upper), None) => {
                    self.open("constrained_type", None, from)?;
                    self.type_(lower, None)?;
                    self.type_(upper, None)?;
                    self.close(to)
                }
                _ => self.expression(expr, None, ANY),
            },
            _ => self.expression(expr, None, ANY),
        }
    }

    fn parameters(&mut self, params: &ast::Parameters) -> Step {
        for param in &params.posonlyargs {
            self.parameter(param)?;
        }
        if let Some(last) = params.posonlyargs.last() {
            let after = self.parameter_end(last);
            if let Some(slash) = self
                .next_token(after)
                .and_then(|comma| self.next_token(end(comma)))
                .filter(|token| token.kind() == TokenKind::Slash)
            {
                self.leaf("positional_separator", None, start(slash), end(slash))?;
            }
        }
        for param in &params.args {
            self.parameter(param)?;
        }
        match &params.vararg {
            Some(vararg) => self.variadic(vararg, "list_splat_pattern")?,
            None => {
                if let Some(first) = params.kwonlyargs.first() {
                    let star = self
                        .previous_token(start(first))
                        .and_then(|comma| self.previous_token(start(comma)))
                        .filter(|token| token.kind() == TokenKind::Star);
                    if let Some(star) = star {
                        self.leaf("keyword_separator", None, start(star), end(star))?;
                    }
                }
            }
        }
        for param in &params.kwonlyargs {
            self.parameter(param)?;
        }
        if let Some(kwarg) = &params.kwarg {
            self.variadic(kwarg, "dictionary_splat_pattern")?;
        }
        Ok(())
    }

    fn parameter_end(&self, param: &ast::ParameterWithDefault) -> usize {
        match (&param.default, &param.parameter.annotation) {
            (Some(default), _) => self.outer(default, ANY).1,
            (None, Some(annotation)) => self.outer(annotation, ANY).1,
            (None, None) => end(&param.parameter.name),
        }
    }

    fn parameter(&mut self, param: &ast::ParameterWithDefault) -> Step {
        let name = &param.parameter.name;
        let (from, to) = (start(name), self.parameter_end(param));
        match (&param.parameter.annotation, &param.default) {
            (None, None) => self.leaf("identifier", None, from, to),
            (Some(annotation), None) => {
                self.open("typed_parameter", None, from)?;
                self.leaf("identifier", None, from, end(name))?;
                self.type_(annotation, Some("type"))?;
                self.close(to)
            }
            (None, Some(default)) => {
                self.open("default_parameter", None, from)?;
                self.leaf("identifier", Some("name"), from, end(name))?;
                self.expression(default, Some("value"), ANY)?;
                self.close(to)
            }
            (Some(annotation), Some(default)) => {
                self.open("typed_default_parameter", None, from)?;
                self.leaf("identifier", Some("name"), from, end(name))?;
                self.type_(annotation, Some("type"))?;
                self.expression(default, Some("value"), ANY)?;
                self.close(to)
            }
        }
    }

    fn variadic(&mut self, param: &ast::Parameter, kind: &'static str) -> Step {
        let name = &param.name;
        let star = self
            .previous_token(start(name))
            .filter(|token| matches!(token.kind(), TokenKind::Star | TokenKind::DoubleStar))
            .map_or(start(param), start);
        match &param.annotation {
            None => {
                self.open(kind, None, star)?;
                self.leaf("identifier", None, start(name), end(name))?;
                self.close(end(name))
            }
            Some(annotation) => {
                let to = self.outer(annotation, ANY).1;
                self.open("typed_parameter", None, star)?;
                self.open(kind, None, star)?;
                self.leaf("identifier", None, start(name), end(name))?;
                self.close(end(name))?;
                self.type_(annotation, Some("type"))?;
                self.close(to)
            }
        }
    }

    fn alias(&mut self, alias: &ast::Alias) -> Step {
        match &alias.asname {
            Some(asname) => {
                self.open("aliased_import", Some("name"), start(alias))?;
                self.dotted_name(start(&alias.name), end(&alias.name), Some("name"))?;
                self.leaf("identifier", Some("alias"), start(asname), end(asname))?;
                self.close(end(asname))
            }
            None => self.dotted_name(start(&alias.name), end(&alias.name), Some("name")),
        }
    }

    /// `a.b.c` from its tokens.
    fn dotted_name(&mut self, from: usize, to: usize, field: Field) -> Step {
        self.open("dotted_name", field, from)?;
        let first = self.tokens.partition_point(|token| start(token) < from);
        for token in self.tokens.get(first..).unwrap_or_default() {
            if start(token) >= to {
                break;
            }
            if token.kind() == TokenKind::Name || token.kind().is_keyword() {
                self.leaf("identifier", None, start(token), end(token))?;
            }
        }
        self.close(to)
    }

    fn import_module(&mut self, node: &ast::StmtImportFrom) -> Step {
        if node.level == 0 {
            if let Some(module) = &node.module {
                self.dotted_name(start(module), end(module), Some("module_name"))?;
            }
            return Ok(());
        }
        let from_end = self
            .keyword_after(start(node), &[TokenKind::From])
            .map_or(start(node), end);
        let first = self.tokens.partition_point(|token| start(token) < from_end);
        let dots: Vec<&Token> = self
            .tokens
            .get(first..)
            .unwrap_or_default()
            .iter()
            .filter(|token| !is_trivia(token.kind()))
            .take_while(|token| matches!(token.kind(), TokenKind::Dot | TokenKind::Ellipsis))
            .collect();
        let (Some(first_dot), Some(last_dot)) = (dots.first(), dots.last()) else {
            return Ok(());
        };
        let relative_end = node.module.as_ref().map_or(end(*last_dot), end);
        self.open("relative_import", Some("module_name"), start(*first_dot))?;
        self.leaf("import_prefix", None, start(*first_dot), end(*last_dot))?;
        if let Some(module) = &node.module {
            self.dotted_name(start(module), end(module), None)?;
        }
        self.close(relative_end)
    }

    fn case(&mut self, case: &ast::MatchCase) -> Result<usize, SourceError> {
        self.open("case_clause", Some("alternative"), start(case))?;
        match &case.pattern {
            Pattern::MatchSequence(sequence) if !self.bracketed(sequence) => {
                for pattern in &sequence.patterns {
                    self.case_pattern(pattern, None)?;
                }
            }
            pattern => self.case_pattern(pattern, None)?,
        }
        if let Some(guard) = &case.guard {
            let (_, guard_end) = self.outer(guard, ANY);
            let keyword = self
                .previous_token(self.outer(guard, ANY).0)
                .map_or(start(&**guard), start);
            self.open("if_clause", Some("guard"), keyword)?;
            self.expression(guard, None, ANY)?;
            self.close(guard_end)?;
        }
        let case_end = self.block(&case.body, Some("consequence"))?;
        self.close(case_end)?;
        Ok(case_end)
    }

    /// Whether a sequence pattern has its own brackets (`case a, b:` has none, nor has
    /// `case (a), b:`).
    fn bracketed(&self, sequence: &ast::PatternMatchSequence) -> bool {
        match sequence.patterns.first() {
            None => true,
            Some(first) => {
                let first_start = self
                    .parentheses(start(first), end(first), ANY)
                    .last()
                    .map_or(start(first), |pair| pair.0);
                start(sequence) < first_start
            }
        }
    }

    /// A pattern as tree-sitter's `case_pattern` (parentheses make `tuple_pattern`s).
    fn case_pattern(&mut self, pattern: &Pattern, field: Field) -> Step {
        self.case_pattern_within(pattern, field, ANY)
    }

    fn case_pattern_within(&mut self, pattern: &Pattern, field: Field, bound: Bound) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let (from, to) = (start(pattern), end(pattern));
            // Innermost first.
            let pairs = self.parentheses(from, to, bound);
            let (outer_from, outer_to) = pairs.last().copied().unwrap_or((from, to));
            self.open("case_pattern", field, outer_from)?;
            self.parenthesized_pattern(pattern, &pairs)?;
            self.close(outer_to)
        })
    }

    /// A simple pattern in its parentheses (`pairs`, innermost first): each pair is a
    /// `tuple_pattern` around a `case_pattern`.
    fn parenthesized_pattern(&mut self, pattern: &Pattern, pairs: &[(usize, usize)]) -> Step {
        let (from, to) = (start(pattern), end(pattern));
        for index in (0..pairs.len()).rev() {
            let open = pairs.get(index).map_or(from, |pair| pair.0);
            let inner = index
                .checked_sub(1)
                .and_then(|inner| pairs.get(inner))
                .map_or(from, |pair| pair.0);
            self.open("tuple_pattern", None, open)?;
            self.open("case_pattern", None, inner)?;
        }
        self.simple_pattern(pattern)?;
        let mut inner_end = to;
        for &(_, close) in pairs {
            self.close(inner_end)?;
            self.close(close)?;
            inner_end = close;
        }
        Ok(())
    }

    fn simple_pattern(&mut self, pattern: &Pattern) -> Step {
        let (from, to) = (start(pattern), end(pattern));
        match pattern {
            Pattern::MatchValue(value) => self.pattern_value(&value.value, None),
            Pattern::MatchSingleton(singleton) => {
                let kind = match singleton.value {
                    ast::Singleton::None => "none",
                    ast::Singleton::True => "true",
                    ast::Singleton::False => "false",
                };
                self.leaf(kind, None, from, to)
            }
            Pattern::MatchSequence(sequence) => {
                let kind = if self.bytes.get(from) == Some(&b'[') {
                    "list_pattern"
                } else {
                    "tuple_pattern"
                };
                self.open(kind, None, from)?;
                for pattern in &sequence.patterns {
                    self.case_pattern(pattern, None)?;
                }
                self.close(to)
            }
            Pattern::MatchMapping(mapping) => {
                self.open("dict_pattern", None, from)?;
                for (key, value) in mapping.keys.iter().zip(mapping.patterns.iter()) {
                    self.pattern_value_field(key, Some("key"))?;
                    self.case_pattern(value, Some("value"))?;
                }
                if let Some(rest) = &mapping.rest {
                    let star = self.previous_token(start(rest)).map_or(start(rest), start);
                    self.open("splat_pattern", None, star)?;
                    self.leaf("identifier", None, start(rest), end(rest))?;
                    self.close(end(rest))?;
                }
                self.close(to)
            }
            Pattern::MatchClass(class) => {
                self.open("class_pattern", None, from)?;
                self.pattern_name(&class.cls)?;
                let inside = Bound {
                    lo: start(&class.arguments) + 1,
                    hi: end(&class.arguments).saturating_sub(1),
                };
                for pattern in &class.arguments.patterns {
                    self.case_pattern_within(pattern, None, inside)?;
                }
                for keyword in &class.arguments.keywords {
                    self.open("case_pattern", None, start(keyword))?;
                    self.open("keyword_pattern", None, start(keyword))?;
                    self.leaf("identifier", None, start(&keyword.attr), end(&keyword.attr))?;
                    self.simple_pattern(&keyword.pattern)?;
                    self.close(end(keyword))?;
                    self.close(end(keyword))?;
                }
                self.close(to)
            }
            Pattern::MatchStar(star) => {
                self.open("splat_pattern", None, from)?;
                if let Some(name) = &star.name {
                    self.leaf("identifier", None, start(name), end(name))?;
                }
                self.close(to)
            }
            Pattern::MatchAs(as_) => match (&as_.pattern, &as_.name) {
                (Some(inner), Some(name)) => {
                    self.open("as_pattern", None, from)?;
                    self.case_pattern(inner, None)?;
                    self.leaf("identifier", None, start(name), end(name))?;
                    self.close(to)
                }
                (None, Some(name)) => {
                    self.open("dotted_name", None, from)?;
                    self.leaf("identifier", None, start(name), end(name))?;
                    self.close(to)
                }
                _ => Ok(()),
            },
            Pattern::MatchOr(or) => {
                // The alternatives of a union are simple patterns, parentheses included.
                let pairs: Vec<Vec<(usize, usize)>> = or
                    .patterns
                    .iter()
                    .map(|pattern| self.parentheses(start(pattern), end(pattern), ANY))
                    .collect();
                let from = pairs
                    .first()
                    .and_then(|pairs| pairs.last())
                    .map_or(from, |pair| pair.0);
                let to = pairs
                    .last()
                    .and_then(|pairs| pairs.last())
                    .map_or(to, |pair| pair.1);
                self.open("union_pattern", None, from)?;
                for (pattern, pairs) in or.patterns.iter().zip(&pairs) {
                    self.parenthesized_pattern(pattern, pairs)?;
                }
                self.close(to)
            }
        }
    }

    fn pattern_value_field(&mut self, value: &Expr, field: Field) -> Step {
        match value {
            Expr::Attribute(_) | Expr::Name(_) => {
                self.open("dotted_name", field, start(value))?;
                self.pattern_name_parts(value)?;
                self.close(end(value))
            }
            Expr::UnaryOp(ast::ExprUnaryOp {
                op: ast::UnaryOp::USub,
                ..
            })
            | Expr::BinOp(_) => self.pattern_value(value, field),
            _ => self.bare(value, field),
        }
    }

    /// A literal pattern: `-1` is `-` and an `integer` (no `unary_operator`), `1 + 2j` a
    /// `complex_pattern`.
    fn pattern_value(&mut self, value: &Expr, field: Field) -> Step {
        match value {
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::USub => {
                self.bare(&unary.operand, field)
            }
            Expr::BinOp(binary) => {
                self.open("complex_pattern", field, start(value))?;
                self.pattern_value(&binary.left, None)?;
                self.pattern_value(&binary.right, None)?;
                self.close(end(value))
            }
            _ => self.pattern_value_field(value, field),
        }
    }

    fn pattern_name(&mut self, value: &Expr) -> Step {
        self.open("dotted_name", None, start(value))?;
        self.pattern_name_parts(value)?;
        self.close(end(value))
    }

    fn pattern_name_parts(&mut self, value: &Expr) -> Step {
        match value {
            Expr::Attribute(attribute) => {
                self.pattern_name_parts(&attribute.value)?;
                self.leaf(
                    "identifier",
                    None,
                    start(&attribute.attr),
                    end(&attribute.attr),
                )
            }
            _ => self.leaf("identifier", None, start(value), end(value)),
        }
    }

    // --- expressions ----------------------------------------------------------------------

    /// The range of a list of expressions (`a, b,`): first to last, with a trailing comma.
    fn list_range(&self, elements: &[Expr], bound: Bound) -> (usize, usize) {
        let from = elements
            .first()
            .map_or(0, |element| self.outer(element, bound).0);
        let last = elements
            .last()
            .map_or(from, |element| self.outer(element, bound).1);
        (from, self.with_trailing_comma(last))
    }

    /// The end of `expr` where a bare tuple stands for an `expression_list`.
    fn expressions_end(&self, expr: &Expr) -> usize {
        match expr {
            Expr::Tuple(tuple) if !tuple.parenthesized => self.list_range(&tuple.elts, ANY).1,
            _ => self.outer(expr, ANY).1,
        }
    }

    /// An expression where a bare tuple is an `expression_list`.
    fn expressions(&mut self, expr: &Expr, field: Field) -> Step {
        match expr {
            Expr::Tuple(tuple) if !tuple.parenthesized => {
                let (from, to) = self.list_range(&tuple.elts, ANY);
                self.open("expression_list", field, from)?;
                for element in &tuple.elts {
                    self.element(element, None)?;
                }
                self.close(to)
            }
            _ => self.expression(expr, field, ANY),
        }
    }

    /// The right-hand side of an assignment (`a = b = c` nests assignments).
    fn right_hand_side(&mut self, expr: &Expr, field: Field) -> Step {
        self.expressions(expr, field)
    }

    /// An assignment or `for` target: tree-sitter's patterns.
    fn target(&mut self, expr: &Expr, field: Field, bound: Bound) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let pairs = self.parentheses(start(expr), end(expr), bound);
            let count = pairs.len();
            for (index, &(open, _)) in pairs.iter().enumerate().rev() {
                self.open(
                    "tuple_pattern",
                    if index + 1 == count { field } else { None },
                    open,
                )?;
            }
            let field = if count == 0 { field } else { None };
            match expr {
                Expr::Tuple(tuple) => {
                    let (kind, from, to) = if tuple.parenthesized {
                        ("tuple_pattern", start(expr), end(expr))
                    } else {
                        let (from, to) = self.list_range(&tuple.elts, ANY);
                        ("pattern_list", from, to)
                    };
                    self.open(kind, field, from)?;
                    for element in &tuple.elts {
                        self.target(element, None, ANY)?;
                    }
                    self.close(to)?;
                }
                Expr::List(list) => {
                    self.open("list_pattern", field, start(expr))?;
                    for element in &list.elts {
                        self.target(element, None, ANY)?;
                    }
                    self.close(end(expr))?;
                }
                Expr::Starred(starred) => {
                    self.open("list_splat_pattern", field, start(expr))?;
                    self.expression(&starred.value, None, ANY)?;
                    self.close(end(expr))?;
                }
                _ => self.bare(expr, field)?,
            }
            for &(_, close) in &pairs {
                self.close(close)?;
            }
            Ok(())
        })
    }

    /// Whether a list or set ending at `to` has one element and no trailing comma (where
    /// tree-sitter reads a starred element as [`Converter::element`] does).
    fn lone_element(&self, elements: &[Expr], to: usize) -> bool {
        match elements {
            [one] => self
                .next_token(self.outer(one, ANY).1)
                .is_none_or(|token| token.kind() != TokenKind::Comma || end(token) > to),
            _ => false,
        }
    }

    /// A positional argument of `print` after the first: tree-sitter (which also knows
    /// Python 2's print statement) reads `*a.b()` as the call of `*a.b`.
    fn print_argument(&mut self, arg: &Expr, inside: Bound) -> Step {
        if let Expr::Starred(starred) = arg
            && let Expr::Call(call) = &*starred.value
            && matches!(&*call.func, Expr::Name(_) | Expr::Attribute(_))
            && self.splat_chain_root(&call.func)
            && self
                .parentheses(start(&*call.func), end(&*call.func), ANY)
                .is_empty()
            // `*(os.popen(cmd))` splats the whole call.
            && self
                .parentheses(start(&*starred.value), end(&*starred.value), ANY)
                .is_empty()
        {
            let (from, to) = (start(arg), end(arg));
            self.open("call", None, from)?;
            self.open("list_splat", Some("function"), from)?;
            self.expression(&call.func, None, ANY)?;
            self.close(end(&*call.func))?;
            self.argument_list(&call.arguments, Some("arguments"))?;
            return self.close(to);
        }
        self.expression(arg, None, inside)
    }

    /// An element of a bare tuple or subscript (or the lone element of a list or set).
    /// There tree-sitter reads `*a.b()` as the call of `(*a).b` (its `list_splat` of an
    /// identifier is a primary expression); in argument lists, parenthesized tuples and
    /// longer lists `*` takes the whole expression.
    fn element(&mut self, expr: &Expr, field: Field) -> Step {
        self.element_within(expr, field, ANY)
    }

    fn element_within(&mut self, expr: &Expr, field: Field, bound: Bound) -> Step {
        match expr {
            Expr::Starred(starred)
                if !matches!(&*starred.value, Expr::Name(_))
                    && self.splat_chain_root(&starred.value) =>
            {
                self.splat_chain(&starred.value, field, start(expr))
            }
            _ => self.expression(expr, field, bound),
        }
    }

    /// Whether `expr` is attributes, calls and subscripts on an identifier, no parentheses.
    fn splat_chain_root(&self, expr: &Expr) -> bool {
        let mut node = expr;
        loop {
            if !self.parentheses(start(node), end(node), ANY).is_empty() {
                return false;
            }
            node = match node {
                Expr::Attribute(attribute) => &attribute.value,
                Expr::Call(call) => &call.func,
                Expr::Subscript(subscript) => &subscript.value,
                Expr::Name(_) => return true,
                _ => return false,
            };
        }
    }

    /// `*a.b()` as tree-sitter reads it in [`Converter::element`]: every link starts at
    /// the `*`, the identifier is a `list_splat`.
    fn splat_chain(&mut self, expr: &Expr, field: Field, star: usize) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let to = end(expr);
            match expr {
                Expr::Attribute(attribute) => {
                    self.open("attribute", field, star)?;
                    self.splat_chain(&attribute.value, Some("object"), star)?;
                    self.leaf(
                        "identifier",
                        Some("attribute"),
                        start(&attribute.attr),
                        end(&attribute.attr),
                    )?;
                    self.close(to)
                }
                Expr::Call(call) => {
                    self.open("call", field, star)?;
                    self.splat_chain(&call.func, Some("function"), star)?;
                    self.call_arguments(&call.arguments, false)?;
                    self.close(to)
                }
                Expr::Subscript(subscript) => {
                    self.open("subscript", field, star)?;
                    self.splat_chain(&subscript.value, Some("value"), star)?;
                    match &*subscript.slice {
                        Expr::Tuple(tuple) if !tuple.parenthesized => {
                            for element in &tuple.elts {
                                self.element(element, Some("subscript"))?;
                            }
                        }
                        slice => self.element(slice, Some("subscript"))?,
                    }
                    self.close(to)
                }
                _ => {
                    self.open("list_splat", field, star)?;
                    self.expression(expr, None, ANY)?;
                    self.close(to)
                }
            }
        })
    }

    /// An expression with its parentheses (`parenthesized_expression`s).
    fn expression(&mut self, expr: &Expr, field: Field, bound: Bound) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let pairs = self.parentheses(start(expr), end(expr), bound);
            if pairs.is_empty() {
                return self.bare(expr, field);
            }
            let count = pairs.len();
            for (index, &(open, _)) in pairs.iter().enumerate().rev() {
                self.open(
                    "parenthesized_expression",
                    if index + 1 == count { field } else { None },
                    open,
                )?;
            }
            self.bare(expr, None)?;
            for &(_, close) in &pairs {
                self.close(close)?;
            }
            Ok(())
        })
    }

    /// An expression without its parentheses.
    fn bare(&mut self, expr: &Expr, field: Field) -> Step {
        let (from, to) = (start(expr), end(expr));
        match expr {
            Expr::Name(_) => self.leaf("identifier", field, from, to),
            Expr::NumberLiteral(_) => {
                let literal = self.text.get(from..to).unwrap_or_default();
                let float = !literal.starts_with("0x")
                    && !literal.starts_with("0X")
                    && literal.contains(['.', 'e', 'E']);
                self.leaf(if float { "float" } else { "integer" }, field, from, to)
            }
            Expr::BooleanLiteral(literal) => self.leaf(
                if literal.value { "true" } else { "false" },
                field,
                from,
                to,
            ),
            Expr::NoneLiteral(_) => self.leaf("none", field, from, to),
            Expr::EllipsisLiteral(_) => self.leaf("ellipsis", field, from, to),
            Expr::StringLiteral(string) => {
                let parts = string.value.iter().map(|part| Part::Plain(part.range));
                self.strings(parts, field, from, to)
            }
            Expr::BytesLiteral(bytes) => {
                let parts = bytes.value.iter().map(|part| Part::Plain(part.range));
                self.strings(parts, field, from, to)
            }
            Expr::FString(string) => {
                let parts = string.value.iter().map(|part| match part {
                    ast::FStringPart::Literal(literal) => Part::Plain(literal.range),
                    ast::FStringPart::FString(fstring) => {
                        Part::Interpolated(fstring.range, &fstring.elements)
                    }
                });
                self.strings(parts, field, from, to)
            }
            Expr::TString(string) => {
                let parts = string
                    .value
                    .iter()
                    .map(|tstring| Part::Interpolated(tstring.range, &tstring.elements));
                self.strings(parts, field, from, to)
            }
            Expr::Attribute(attribute) => {
                self.open("attribute", field, from)?;
                self.expression(&attribute.value, Some("object"), ANY)?;
                self.leaf(
                    "identifier",
                    Some("attribute"),
                    start(&attribute.attr),
                    end(&attribute.attr),
                )?;
                self.close(to)
            }
            Expr::Subscript(subscript) => {
                self.open("subscript", field, from)?;
                self.expression(&subscript.value, Some("value"), ANY)?;
                match &*subscript.slice {
                    Expr::Tuple(tuple) if !tuple.parenthesized => {
                        for element in &tuple.elts {
                            self.element(element, Some("subscript"))?;
                        }
                    }
                    slice => self.element(slice, Some("subscript"))?,
                }
                self.close(to)
            }
            Expr::Slice(slice) => {
                self.open("slice", field, from)?;
                for part in [&slice.lower, &slice.upper, &slice.step]
                    .into_iter()
                    .flatten()
                {
                    self.expression(part, None, ANY)?;
                }
                self.close(to)
            }
            Expr::Call(call) => {
                self.open("call", field, from)?;
                self.expression(&call.func, Some("function"), ANY)?;
                let print = matches!(&*call.func, Expr::Name(name) if name.id.as_str() == "print");
                self.call_arguments(&call.arguments, print)?;
                self.close(to)
            }
            Expr::Starred(starred) => {
                self.open("list_splat", field, from)?;
                self.expression(&starred.value, None, ANY)?;
                self.close(to)
            }
            Expr::List(list) => {
                self.open("list", field, from)?;
                let lone = self.lone_element(&list.elts, to);
                for element in &list.elts {
                    if lone {
                        self.element(element, None)?;
                    } else {
                        self.expression(element, None, ANY)?;
                    }
                }
                self.close(to)
            }
            Expr::Set(set) => {
                self.open("set", field, from)?;
                let lone = self.lone_element(&set.elts, to);
                for element in &set.elts {
                    if lone {
                        self.element(element, None)?;
                    } else {
                        self.expression(element, None, ANY)?;
                    }
                }
                self.close(to)
            }
            Expr::Tuple(tuple) => {
                let (kind, from, to) = if tuple.parenthesized {
                    ("tuple", from, to)
                } else {
                    let (from, to) = self.list_range(&tuple.elts, ANY);
                    ("expression_list", from, to)
                };
                self.open(kind, field, from)?;
                for element in &tuple.elts {
                    if tuple.parenthesized {
                        self.expression(element, None, ANY)?;
                    } else {
                        self.element(element, None)?;
                    }
                }
                self.close(to)
            }
            Expr::Dict(dict) => {
                self.open("dictionary", field, from)?;
                for item in &dict.items {
                    match &item.key {
                        Some(key) => {
                            let key_start = self.outer(key, ANY).0;
                            let value_end = self.outer(&item.value, ANY).1;
                            self.open("pair", None, key_start)?;
                            self.expression(key, Some("key"), ANY)?;
                            self.expression(&item.value, Some("value"), ANY)?;
                            self.close(value_end)?;
                        }
                        None => self.double_star(&item.value)?,
                    }
                }
                self.close(to)
            }
            Expr::ListComp(comp) => self.comprehension(
                "list_comprehension",
                field,
                from,
                to,
                Body::One(&comp.elt),
                &comp.generators,
            ),
            Expr::SetComp(comp) => self.comprehension(
                "set_comprehension",
                field,
                from,
                to,
                Body::One(&comp.elt),
                &comp.generators,
            ),
            Expr::Generator(comp) => self.comprehension(
                "generator_expression",
                field,
                from,
                to,
                Body::One(&comp.elt),
                &comp.generators,
            ),
            Expr::DictComp(comp) => match &comp.key {
                Some(key) => self.comprehension(
                    "dictionary_comprehension",
                    field,
                    from,
                    to,
                    Body::Pair(key, &comp.value),
                    &comp.generators,
                ),
                None => Ok(()),
            },
            Expr::BoolOp(bool_op) => {
                let values = &bool_op.values;
                let Some(first) = values.first() else {
                    return Ok(());
                };
                let left_start = self.outer(first, ANY).0;
                let ends: Vec<usize> = values
                    .iter()
                    .map(|value| self.outer(value, ANY).1)
                    .collect();
                let levels = values.len().saturating_sub(1);
                for level in (0..levels).rev() {
                    let level_field = if level + 1 == levels {
                        field
                    } else {
                        Some("left")
                    };
                    self.open("boolean_operator", level_field, left_start)?;
                }
                self.expression(first, Some("left"), ANY)?;
                let operator = match bool_op.op {
                    ast::BoolOp::And => "and",
                    ast::BoolOp::Or => "or",
                };
                for (index, value) in values.iter().enumerate().skip(1) {
                    let previous_end = ends.get(index - 1).copied().unwrap_or(from);
                    if let Some(token) = self.next_token(previous_end) {
                        self.anonymous(operator, Some("operator"), start(token), end(token))?;
                    }
                    self.expression(value, Some("right"), ANY)?;
                    self.close(ends.get(index).copied().unwrap_or(to))?;
                }
                Ok(())
            }
            Expr::Named(named) => {
                self.open("named_expression", field, from)?;
                self.expression(&named.target, Some("name"), ANY)?;
                self.expression(&named.value, Some("value"), ANY)?;
                self.close(to)
            }
            Expr::BinOp(binary)
                if matches!(binary.op, ast::Operator::BitXor | ast::Operator::BitAnd) =>
            {
                self.bitwise(expr, field)
            }
            Expr::BinOp(binary) => {
                self.open("binary_operator", field, from)?;
                self.expression(&binary.left, Some("left"), ANY)?;
                let left_end = self.outer(&binary.left, ANY).1;
                if let Some(token) = self.next_token(left_end) {
                    self.anonymous(
                        binary_operator(binary.op),
                        Some("operator"),
                        start(token),
                        end(token),
                    )?;
                }
                self.expression(&binary.right, Some("right"), ANY)?;
                self.close(to)
            }
            Expr::UnaryOp(unary) => {
                if unary.op == ast::UnaryOp::Not {
                    self.open("not_operator", field, from)?;
                    self.expression(&unary.operand, Some("argument"), ANY)?;
                    return self.close(to);
                }
                self.open("unary_operator", field, from)?;
                let operator = match unary.op {
                    ast::UnaryOp::Invert => "~",
                    ast::UnaryOp::UAdd => "+",
                    _ => "-",
                };
                self.anonymous(operator, Some("operator"), from, from + 1)?;
                self.expression(&unary.operand, Some("argument"), ANY)?;
                self.close(to)
            }
            Expr::Lambda(lambda) => {
                self.open("lambda", field, from)?;
                self.lambda_parameters(lambda)?;
                self.expression(&lambda.body, Some("body"), ANY)?;
                self.close(to)
            }
            Expr::If(if_) => {
                self.open("conditional_expression", field, from)?;
                self.expression(&if_.body, None, ANY)?;
                self.expression(&if_.test, None, ANY)?;
                self.expression(&if_.orelse, None, ANY)?;
                self.close(to)
            }
            Expr::Await(await_) => {
                self.open("await", field, from)?;
                self.expression(&await_.value, None, ANY)?;
                self.close(to)
            }
            Expr::Yield(yield_) => {
                self.open("yield", field, from)?;
                if let Some(value) = &yield_.value {
                    self.expressions(value, None)?;
                }
                self.close(to)
            }
            Expr::YieldFrom(yield_) => {
                self.open("yield", field, from)?;
                self.expression(&yield_.value, None, ANY)?;
                self.close(to)
            }
            Expr::Compare(compare) => {
                self.open("comparison_operator", field, from)?;
                self.expression(&compare.left, None, ANY)?;
                let mut previous_end = self.outer(&compare.left, ANY).1;
                for (op, comparator) in compare.ops.iter().zip(compare.comparators.iter()) {
                    if let Some(token) = self.next_token(previous_end) {
                        let (kind, token_end) = match op {
                            ast::CmpOp::NotIn | ast::CmpOp::IsNot => (
                                if *op == ast::CmpOp::NotIn {
                                    "not in"
                                } else {
                                    "is not"
                                },
                                self.next_token(end(token)).map_or(end(token), end),
                            ),
                            _ => (comparison_operator(*op), end(token)),
                        };
                        self.anonymous(kind, Some("operators"), start(token), token_end)?;
                    }
                    self.expression(comparator, None, ANY)?;
                    previous_end = self.outer(comparator, ANY).1;
                }
                self.close(to)
            }
            Expr::IpyEscapeCommand(_) => Ok(()),
        }
    }

    /// A run of `^` and `&`: tree-sitter-python gives `^` the higher precedence (Python
    /// gives it to `&`), so `a ^ b & c` is `(a ^ b) & c` in its tree. The run is flattened
    /// (without recursion) and grouped again by tree-sitter's precedences.
    fn bitwise(&mut self, expr: &Expr, field: Field) -> Step {
        // In-order operands and operators of the unparenthesized `^`/`&` nodes under `expr`.
        let mut operands: Vec<&Expr> = Vec::new();
        let mut operators: Vec<ast::Operator> = Vec::new();
        let mut pending: Vec<Result<&Expr, ast::Operator>> = vec![Ok(expr)];
        while let Some(item) = pending.pop() {
            match item {
                Err(op) => operators.push(op),
                Ok(node) => match node {
                    Expr::BinOp(binary)
                        if matches!(binary.op, ast::Operator::BitXor | ast::Operator::BitAnd)
                            && (std::ptr::eq(node, expr)
                                || self.parentheses(start(node), end(node), ANY).is_empty()) =>
                    {
                        pending.push(Ok(&binary.right));
                        pending.push(Err(binary.op));
                        pending.push(Ok(&binary.left));
                    }
                    _ => operands.push(node),
                },
            }
        }
        // Shunting-yard, both left-associative, `^` (16) above `&` (15).
        let precedence = |op: ast::Operator| if op == ast::Operator::BitXor { 16 } else { 15 };
        let mut arena: Vec<(Group<'_>, usize, usize)> = Vec::new();
        let mut values: Vec<usize> = Vec::new();
        let mut stack: Vec<ast::Operator> = Vec::new();
        let reduce = |arena: &mut Vec<(Group<'_>, usize, usize)>, values: &mut Vec<usize>, op| {
            if let (Some(right), Some(left)) = (values.pop(), values.pop()) {
                let from = arena.get(left).map_or(0, |group| group.1);
                let to = arena.get(right).map_or(0, |group| group.2);
                arena.push((Group::Binary(left, op, right), from, to));
                values.push(arena.len() - 1);
            }
        };
        for (index, operand) in operands.iter().enumerate() {
            let (from, to) = self.outer(operand, ANY);
            arena.push((Group::Operand(operand), from, to));
            values.push(arena.len() - 1);
            if let Some(&op) = operators.get(index) {
                while let Some(&top) = stack.last() {
                    if precedence(top) < precedence(op) {
                        break;
                    }
                    stack.pop();
                    reduce(&mut arena, &mut values, top);
                }
                stack.push(op);
            }
        }
        while let Some(top) = stack.pop() {
            reduce(&mut arena, &mut values, top);
        }
        match values.last() {
            Some(&root) => self.bitwise_group(&arena, root, field),
            None => Ok(()),
        }
    }

    /// Emit group `index` of [`Converter::bitwise`]'s arena (group, start, end).
    fn bitwise_group(
        &mut self,
        arena: &[(Group<'_>, usize, usize)],
        index: usize,
        field: Field,
    ) -> Step {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || match arena.get(index) {
            Some((Group::Operand(operand), _, _)) => self.expression(operand, field, ANY),
            Some(&(Group::Binary(left, op, right), from, to)) => {
                let left_end = arena.get(left).map_or(from, |group| group.2);
                self.open("binary_operator", field, from)?;
                self.bitwise_group(arena, left, Some("left"))?;
                if let Some(token) = self.next_token(left_end) {
                    self.anonymous(
                        binary_operator(op),
                        Some("operator"),
                        start(token),
                        end(token),
                    )?;
                }
                self.bitwise_group(arena, right, Some("right"))?;
                self.close(to)
            }
            None => Ok(()),
        })
    }

    fn double_star(&mut self, value: &Expr) -> Step {
        let (value_start, value_end) = self.outer(value, ANY);
        let star = self
            .previous_token(value_start)
            .filter(|token| token.kind() == TokenKind::DoubleStar)
            .map_or(value_start, start);
        self.open("dictionary_splat", None, star)?;
        self.expression(value, None, ANY)?;
        self.close(value_end)
    }

    /// The `arguments` of a call: a sole unparenthesized generator is the
    /// `generator_expression` itself, anything else an `argument_list` (`print`: of a call to
    /// `print`, see [`Converter::argument_list_of`]).
    fn call_arguments(&mut self, arguments: &ast::Arguments, print: bool) -> Step {
        match (&*arguments.args, arguments.keywords.is_empty()) {
            ([Expr::Generator(generator)], true) if !generator.parenthesized => self.comprehension(
                "generator_expression",
                Some("arguments"),
                start(arguments),
                end(arguments),
                Body::One(&generator.elt),
                &generator.generators,
            ),
            _ => self.argument_list_of(arguments, Some("arguments"), print),
        }
    }

    fn argument_list(&mut self, arguments: &ast::Arguments, field: Field) -> Step {
        self.argument_list_of(arguments, field, false)
    }

    /// `print`: whether the arguments are those of a call to `print` (tree-sitter reads them
    /// as a print statement's would be, [`Converter::element`]).
    fn argument_list_of(&mut self, arguments: &ast::Arguments, field: Field, print: bool) -> Step {
        let (from, to) = (start(arguments), end(arguments));
        let inside = Bound {
            lo: from + 1,
            hi: to.saturating_sub(1),
        };
        self.open("argument_list", field, from)?;
        // tree-sitter's print-statement reading holds for positional arguments after the
        // first, and only before any keyword (`print(k=1, *f(a))` splats the call).
        let mut keyword_seen = false;
        for (index, argument) in arguments.iter_source_order().enumerate() {
            let first = index == 0;
            keyword_seen |= matches!(argument, ast::ArgOrKeyword::Keyword(_));
            match argument {
                ast::ArgOrKeyword::Arg(arg) if print && !first && !keyword_seen => {
                    self.print_argument(arg, inside)?;
                }
                ast::ArgOrKeyword::Arg(arg) => self.expression(arg, None, inside)?,
                ast::ArgOrKeyword::Keyword(keyword) => match &keyword.arg {
                    Some(name) => {
                        let value_end = self.outer(&keyword.value, inside).1;
                        self.open("keyword_argument", None, start(name))?;
                        self.leaf("identifier", Some("name"), start(name), end(name))?;
                        self.expression(&keyword.value, Some("value"), inside)?;
                        self.close(value_end)?;
                    }
                    None => self.double_star(&keyword.value)?,
                },
            }
        }
        self.close(to)
    }

    fn comprehension(
        &mut self,
        kind: &'static str,
        field: Field,
        from: usize,
        to: usize,
        body: Body<'_>,
        generators: &[ast::Comprehension],
    ) -> Step {
        self.open(kind, field, from)?;
        match body {
            Body::One(element) => self.expression(element, Some("body"), ANY)?,
            Body::Pair(key, value) => {
                let key_start = self.outer(key, ANY).0;
                let value_end = self.outer(value, ANY).1;
                self.open("pair", Some("body"), key_start)?;
                self.expression(key, Some("key"), ANY)?;
                self.expression(value, Some("value"), ANY)?;
                self.close(value_end)?;
            }
        }
        for generator in generators {
            let iter_end = self.outer(&generator.iter, ANY).1;
            self.open("for_in_clause", None, start(generator))?;
            self.target(&generator.target, Some("left"), ANY)?;
            self.expression(&generator.iter, Some("right"), ANY)?;
            self.close(iter_end)?;
            for condition in &generator.ifs {
                let (condition_start, condition_end) = self.outer(condition, ANY);
                let keyword = self
                    .previous_token(condition_start)
                    .map_or(condition_start, start);
                self.open("if_clause", None, keyword)?;
                self.expression(condition, None, ANY)?;
                self.close(condition_end)?;
            }
        }
        self.close(to)
    }

    // --- strings --------------------------------------------------------------------------

    /// A string expression: one `string`, or a `concatenated_string` of several.
    fn strings<'p>(
        &mut self,
        mut parts: impl Iterator<Item = Part<'p>>,
        field: Field,
        from: usize,
        to: usize,
    ) -> Step {
        let Some(first) = parts.next() else {
            return Ok(());
        };
        let Some(second) = parts.next() else {
            return self.string(&first, field);
        };
        self.open("concatenated_string", field, from)?;
        self.string(&first, None)?;
        self.string(&second, None)?;
        for part in parts {
            self.string(&part, None)?;
        }
        self.close(to)
    }

    fn string(&mut self, part: &Part<'_>, field: Field) -> Step {
        let range = part.range();
        let (from, to) = (range.start().to_usize(), range.end().to_usize());
        let Quoted {
            prefix,
            quote,
            content: (content_start, content_end),
        } = quoted(self.bytes, range);
        let flags = self.bytes.get(from..from + prefix).unwrap_or_default();
        let raw = flags.iter().any(|byte| matches!(byte, b'r' | b'R'));
        let bytes_string = flags.iter().any(|byte| matches!(byte, b'b' | b'B'));
        let format = matches!(part, Part::Interpolated(..));
        self.open("string", field, from)?;
        self.leaf("string_start", None, from, content_start)?;
        let mut at = content_start;
        if let Part::Interpolated(_, elements) = part {
            for element in elements.iter() {
                if let ast::InterpolatedStringElement::Interpolation(interpolation) = element {
                    self.string_content(
                        (at, start(interpolation)),
                        (raw, bytes_string, format),
                        Some(quote),
                    )?;
                    self.interpolation(interpolation, "interpolation")?;
                    at = end(interpolation);
                }
            }
        }
        // tree-sitter-python's scanner takes a last run of a raw string that is only
        // backslashes and what they escape into the string's end.
        let end_start = if raw && self.only_raw_escapes(at, content_end, quote) {
            at
        } else {
            self.string_content((at, content_end), (raw, bytes_string, format), None)?;
            content_end
        };
        self.leaf("string_end", None, end_start, to)?;
        self.close(to)
    }

    /// Whether `from..to` (raw string content) is only `\\x` steps, which the scanner
    /// does not count as content.
    fn only_raw_escapes(&self, from: usize, to: usize, quote: u8) -> bool {
        let bytes = self.bytes;
        let mut at = from;
        while at < to {
            if bytes.get(at) != Some(&b'\\') {
                return false;
            }
            at += 1;
            if matches!(bytes.get(at), Some(byte) if *byte == quote || *byte == b'\\') {
                at += 1;
            }
            if bytes.get(at) == Some(&b'\r') {
                at += 1;
                if bytes.get(at) == Some(&b'\n') {
                    at += 1;
                }
            } else if bytes.get(at) == Some(&b'\n') {
                at += 1;
            }
        }
        from < to
    }

    /// The content `from..to` of a string (`raw`, `bytes_string`, `format`), up to an
    /// interpolation when `interpolation_quote` (the string's quote) is given.
    fn string_content(
        &mut self,
        (from, to): (usize, usize),
        (raw, bytes_string, format): (bool, bool, bool),
        interpolation_quote: Option<u8>,
    ) -> Step {
        if from >= to {
            return Ok(());
        }
        self.open("string_content", None, from)?;
        let bytes = self.bytes;
        let mut at = from;
        // In a raw f-string the scanner gives up on a run of backslash steps that a brace
        // ends; tree-sitter's lexer then reads them as escape sequences.
        let mut run_start = from;
        while at < to {
            let byte = bytes.get(at).copied().unwrap_or(0);
            if raw && format && matches!(byte, b'{' | b'}') {
                self.raw_run_escapes(run_start, at, interpolation_quote.unwrap_or(0))?;
            }
            if format && matches!(byte, b'{' | b'}') && bytes.get(at + 1) == Some(&byte) {
                self.leaf("escape_interpolation", None, at, at + 2)?;
                at += 2;
                run_start = at;
            } else if byte == b'\\' && raw {
                // The scanner steps over a backslash and an escaped quote or backslash.
                at += 1;
                if matches!(bytes.get(at), Some(b'\\' | b'\'' | b'"')) {
                    at += 1;
                }
            } else if byte == b'\\' {
                if bytes_string && matches!(bytes.get(at + 1), Some(b'N' | b'u' | b'U')) {
                    at += 2;
                } else if let Some(len) = escape_len(bytes, at, to) {
                    self.leaf("escape_sequence", None, at, at + len)?;
                    at += len;
                } else {
                    at += 1;
                }
            } else {
                at += 1;
            }
        }
        if let (true, true, Some(quote)) = (raw, format, interpolation_quote) {
            self.raw_run_escapes(run_start, to, quote)?;
        }
        self.close(to)
    }

    /// The escape sequences of `from..to` in a raw f-string when the run is only backslash
    /// steps (see [`Converter::string_content`]).
    fn raw_run_escapes(&mut self, from: usize, to: usize, quote: u8) -> Step {
        if from >= to || !self.only_raw_escapes(from, to, quote) {
            return Ok(());
        }
        let mut at = from;
        while at < to {
            match escape_len(self.bytes, at, to) {
                Some(len) if self.bytes.get(at) == Some(&b'\\') => {
                    self.leaf("escape_sequence", None, at, at + len)?;
                    at += len;
                }
                _ => at += 1,
            }
        }
        Ok(())
    }

    fn interpolation(&mut self, element: &ast::InterpolatedElement, kind: &'static str) -> Step {
        let (from, to) = (start(element), end(element));
        let inside = Bound {
            lo: from + 1,
            hi: to.saturating_sub(1),
        };
        self.open(kind, None, from)?;
        let expression = &*element.expression;
        let mut after = match expression {
            Expr::Tuple(tuple) if !tuple.parenthesized => {
                let (list_start, list_end) = self.list_range(&tuple.elts, inside);
                self.open("expression_list", Some("expression"), list_start)?;
                for element in &tuple.elts {
                    self.expression(element, None, inside)?;
                }
                self.close(list_end)?;
                list_end
            }
            _ => {
                self.expression(expression, Some("expression"), inside)?;
                self.outer(expression, inside).1
            }
        };
        if element.conversion != ast::ConversionFlag::None {
            let bang = (after..to).find(|index| self.bytes.get(*index) == Some(&b'!'));
            if let Some(bang) = bang {
                self.leaf("type_conversion", Some("type_conversion"), bang, bang + 2)?;
                after = bang + 2;
            }
        }
        if let Some(spec) = &element.format_spec {
            let colon = (after..to)
                .find(|index| self.bytes.get(*index) == Some(&b':'))
                .unwrap_or(after);
            self.open("format_specifier", Some("format_specifier"), colon)?;
            for part in spec.elements.iter() {
                if let ast::InterpolatedStringElement::Interpolation(nested) = part {
                    self.interpolation(nested, "format_expression")?;
                }
            }
            self.close(to.saturating_sub(1).max(colon + 1))?;
        }
        self.close(to)
    }
}

/// The line continuations (`\` before a newline) in the gaps between tokens, in order.
/// `backslashes` yields every `\` of the file in order (one memchr pass: the byte-by-byte walk
/// over every gap this replaces was 2 % of a scan); the gap `from..to` takes those before `to`,
/// and the ones before `from` stood inside a token (a string or a comment).
fn continuations(
    bytes: &[u8],
    backslashes: &mut std::iter::Peekable<memchr::Memchr<'_>>,
    from: usize,
    to: usize,
    extras: &mut Vec<(usize, usize, &'static str)>,
) {
    while let Some(at) = backslashes.next_if(|at| *at < to) {
        if at < from {
            continue;
        }
        let continuation_end = match (bytes.get(at + 1), bytes.get(at + 2)) {
            (Some(b'\n'), _) => at + 2,
            (Some(b'\r'), Some(b'\n')) => at + 3,
            (None, _) => at + 1,
            _ => continue,
        };
        // tree-sitter-python's scanner skips a continuation as whitespace when the next
        // token is a string.
        let next = bytes
            .get(continuation_end..)
            .unwrap_or_default()
            .iter()
            .skip_while(|byte| matches!(byte, b' ' | b'\t' | b'\x0c'))
            .find(|byte| {
                !matches!(
                    byte,
                    b'f' | b'F' | b't' | b'T' | b'r' | b'R' | b'b' | b'B' | b'u' | b'U'
                )
            });
        if matches!(next, Some(b'"' | b'\'' | b'`')) {
            continue;
        }
        extras.push((at, continuation_end, "line_continuation"));
    }
}

fn binary_operator(op: ast::Operator) -> &'static str {
    match op {
        ast::Operator::Add => "+",
        ast::Operator::Sub => "-",
        ast::Operator::Mult => "*",
        ast::Operator::MatMult => "@",
        ast::Operator::Div => "/",
        ast::Operator::Mod => "%",
        ast::Operator::Pow => "**",
        ast::Operator::LShift => "<<",
        ast::Operator::RShift => ">>",
        ast::Operator::BitOr => "|",
        ast::Operator::BitXor => "^",
        ast::Operator::BitAnd => "&",
        ast::Operator::FloorDiv => "//",
    }
}

fn augmented_operator(op: ast::Operator) -> &'static str {
    match op {
        ast::Operator::Add => "+=",
        ast::Operator::Sub => "-=",
        ast::Operator::Mult => "*=",
        ast::Operator::MatMult => "@=",
        ast::Operator::Div => "/=",
        ast::Operator::Mod => "%=",
        ast::Operator::Pow => "**=",
        ast::Operator::LShift => "<<=",
        ast::Operator::RShift => ">>=",
        ast::Operator::BitOr => "|=",
        ast::Operator::BitXor => "^=",
        ast::Operator::BitAnd => "&=",
        ast::Operator::FloorDiv => "//=",
    }
}

fn comparison_operator(op: ast::CmpOp) -> &'static str {
    match op {
        ast::CmpOp::Eq => "==",
        ast::CmpOp::NotEq => "!=",
        ast::CmpOp::Lt => "<",
        ast::CmpOp::LtE => "<=",
        ast::CmpOp::Gt => ">",
        ast::CmpOp::GtE => ">=",
        ast::CmpOp::Is => "is",
        ast::CmpOp::IsNot => "is not",
        ast::CmpOp::In => "in",
        ast::CmpOp::NotIn => "not in",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap};
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use super::{CONVERTED_LEVELS, Quiet, QuietRules, tree_from_ruff};
    use crate::error::SourceError;
    use crate::python_tree::{PyNode, PyTree, walk};
    use crate::syntax_tree::{Grammar, Span, parse};
    use ruff_python_ast::visitor::Visitor;

    /// A node as the comparison sees it: kind, field, range, and its parent's kind and
    /// range.
    type Item = (
        &'static str,
        &'static str,
        usize,
        usize,
        &'static str,
        usize,
        usize,
    );

    struct Shape {
        nodes: Vec<Item>,
        /// Comments and line continuations: wherever they hang, only their ranges count.
        extras: BTreeSet<(&'static str, usize, usize)>,
    }

    fn shape(tree: &PyTree) -> Shape {
        let mut nodes = Vec::new();
        let mut extras = BTreeSet::new();
        walk(tree.root(), |node: PyNode<'_>| {
            if node.is_extra() {
                extras.insert((node.kind_name(), node.start_byte(), node.end_byte()));
                return;
            }
            if !node.is_named() && node.field_name().is_none() {
                return;
            }
            let parent = node.parent();
            nodes.push((
                node.kind_name(),
                node.field_name().unwrap_or(""),
                node.start_byte(),
                node.end_byte(),
                parent.map_or("", |parent| parent.kind_name()),
                parent.map_or(0, |parent| parent.start_byte()),
                parent.map_or(0, |parent| parent.end_byte()),
            ));
        });
        Shape { nodes, extras }
    }

    enum Outcome {
        Equal,
        /// Differences: the nodes only one side has (`-` tree-sitter, `+` ruff).
        Different(Vec<(char, Item)>),
        TreeSitterOnly(SourceError),
        RuffOnly(SourceError),
        Neither,
    }

    fn compare(text: &str) -> Outcome {
        let sitter =
            parse(Grammar::Python, text).and_then(|tree| PyTree::from_tree_sitter(&tree, text));
        let ruff = tree_from_ruff(text, crate::source::line_starts(text));
        match (sitter, ruff) {
            (Ok(sitter), Ok(ruff)) => {
                let (sitter, ruff) = (shape(&sitter), shape(&ruff));
                if sitter.nodes == ruff.nodes && sitter.extras == ruff.extras {
                    return Outcome::Equal;
                }
                let mut differences = Vec::new();
                let mut counts: HashMap<Item, isize> = HashMap::new();
                for item in &sitter.nodes {
                    *counts.entry(*item).or_default() += 1;
                }
                for item in &ruff.nodes {
                    *counts.entry(*item).or_default() -= 1;
                }
                for item in &sitter.nodes {
                    if counts.get(item).copied().unwrap_or(0) > 0 {
                        differences.push(('-', *item));
                    }
                }
                for item in &ruff.nodes {
                    if counts.get(item).copied().unwrap_or(0) < 0 {
                        differences.push(('+', *item));
                    }
                }
                for extra in sitter.extras.symmetric_difference(&ruff.extras) {
                    let side = if sitter.extras.contains(extra) {
                        '-'
                    } else {
                        '+'
                    };
                    differences.push((side, (extra.0, "", extra.1, extra.2, "", 0, 0)));
                }
                if differences.is_empty() {
                    // Same nodes in another order.
                    differences.push(('~', ("order", "", 0, 0, "", 0, 0)));
                }
                differences.sort_by_key(|(side, item)| (item.2, item.3, *side));
                Outcome::Different(differences)
            }
            (Ok(_), Err(error)) => Outcome::TreeSitterOnly(error),
            (Err(error), Ok(_)) => Outcome::RuffOnly(error),
            (Err(_), Err(_)) => Outcome::Neither,
        }
    }

    pub(crate) fn python_files(root: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| entry.into_path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "py"))
            .collect();
        files.sort();
        files
    }

    fn describe(text: &str, (side, item): &(char, Item)) -> String {
        let (kind, field, from, to, parent, parent_from, parent_to) = *item;
        let snippet: String = text
            .get(from..to)
            .unwrap_or("")
            .chars()
            .take(40)
            .collect::<String>()
            .replace('\n', "\\n");
        format!(
            "{side} {kind}{}{field} [{from}..{to}] under {parent} [{parent_from}..{parent_to}]  {snippet:?}",
            if field.is_empty() { "" } else { " field " },
        )
    }

    #[derive(Default)]
    struct Summary {
        compared: usize,
        equal: usize,
        sitter_only: Vec<(PathBuf, String)>,
        ruff_only: Vec<(PathBuf, String)>,
        neither: usize,
        different: Vec<(PathBuf, Vec<String>)>,
        kinds: BTreeMap<String, usize>,
    }

    fn run(files: &[PathBuf]) -> Summary {
        let mut summary = Summary::default();
        for path in files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            match compare(&text) {
                Outcome::Equal => {
                    summary.compared += 1;
                    summary.equal += 1;
                }
                Outcome::Different(differences) => {
                    summary.compared += 1;
                    let mut kinds = BTreeSet::new();
                    for (side, item) in &differences {
                        kinds.insert(format!("{side}{}", item.0));
                    }
                    for kind in kinds {
                        *summary.kinds.entry(kind).or_default() += 1;
                    }
                    summary.different.push((
                        path.clone(),
                        differences
                            .iter()
                            .take(8)
                            .map(|difference| describe(&text, difference))
                            .collect(),
                    ));
                }
                Outcome::TreeSitterOnly(error) => {
                    summary.sitter_only.push((path.clone(), error.to_string()));
                }
                Outcome::RuffOnly(error) => {
                    summary.ruff_only.push((path.clone(), error.to_string()));
                }
                Outcome::Neither => summary.neither += 1,
            }
        }
        summary
    }

    fn report(summary: &Summary, shown: usize) {
        println!(
            "compared {} (both parsers accept), equal {}, different {}; tree-sitter only {}, ruff only {}, neither {}",
            summary.compared,
            summary.equal,
            summary.different.len(),
            summary.sitter_only.len(),
            summary.ruff_only.len(),
            summary.neither,
        );
        let mut kinds: Vec<_> = summary.kinds.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        println!("files per differing kind (- tree-sitter only, + ruff only):");
        for (kind, count) in kinds.iter().take(40) {
            println!("  {count:5} {kind}");
        }
        for (path, differences) in summary.different.iter().take(shown) {
            println!("{}:", path.display());
            for line in differences {
                println!("    {line}");
            }
        }
        for (path, error) in summary.sitter_only.iter().take(shown) {
            println!("tree-sitter only: {} (ruff: {error})", path.display());
        }
        for (path, error) in summary.ruff_only.iter().take(shown) {
            println!("ruff only: {} (tree-sitter: {error})", path.display());
        }
    }

    /// The texts the two checks below read: every Python file of the test data, and
    /// [`deep_forms`].
    fn nesting_texts() -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut texts: Vec<String> = python_files(&root)
            .iter()
            .filter_map(|path| std::fs::read_to_string(path).ok())
            .collect();
        texts.extend(deep_forms());
        texts
    }

    /// Each construct that nests, 300 levels deep (every one valid Python).
    fn deep_forms() -> Vec<String> {
        const N: usize = 300;
        let repeat = |text: &str| text.repeat(N);
        let indented = |open: &str, last: &str| {
            let mut text = String::new();
            for level in 0..N {
                text.push_str(&" ".repeat(level));
                text.push_str(open);
                text.push('\n');
            }
            text.push_str(&" ".repeat(N));
            text.push_str(last);
            text.push('\n');
            text
        };
        vec![
            format!("x = {}1{}\n", repeat("("), repeat(")")),
            format!("x = {}1{}\n", repeat("["), repeat("]")),
            format!("x = {}1{}\n", repeat("{1: "), repeat("}")),
            format!("x = {}1\n", repeat("-")),
            format!("x = {}1\n", repeat("not ")),
            format!(
                "async def f():\n    x = {}y{}\n",
                repeat("await ("),
                repeat(")")
            ),
            format!("x = {}1\n", repeat("lambda: ")),
            format!("x = a{}\n", repeat(".b")),
            format!("x = f{}\n", repeat("()")),
            format!("x = a{}\n", repeat("[0]")),
            format!("x = {}a{}\n", repeat("a["), repeat("]")),
            format!("x = {}1{}\n", repeat("f("), repeat(")")),
            format!("x = {}1{}\n", repeat("f(x="), repeat(")")),
            format!("x = {}1{}\n", repeat("f(*"), repeat(")")),
            format!("x = a{}\n", repeat(" + a")),
            format!("x = a{}\n", repeat(" and a")),
            format!("x = a{}\n", repeat(" or a")),
            format!("{}1\n", repeat("a = ")),
            format!("{}1\n", repeat("a.b = ")),
            format!("x = {}\n", repeat("a, ")),
            format!("x = f({})\n", repeat("a, ")),
            format!("x = {{{}}}\n", repeat("a: a, ")),
            format!("import a{}\n", repeat(".b")),
            format!("from a import b{}\n", repeat(", b")),
            format!("global a{}\n", repeat(", a")),
            format!("del a{}\n", repeat(", a")),
            format!("match x:\n    case 1{}:\n        pass\n", repeat(" | 1")),
            format!(
                "match x:\n    case {{{}}}:\n        pass\n",
                repeat("'a': 1, ")
            ),
            format!("x = [a {}]\n", repeat("for a in b ")),
            format!("x = [a for a in b {}]\n", repeat("if a ")),
            format!("with {}:\n    pass\n", repeat("a, ").trim_end_matches(", ")),
            format!("if a:\n    pass\n{}", repeat("elif a:\n    pass\n")),
            format!("try:\n    pass\n{}", repeat("except E:\n    pass\n")),
            format!("match x:\n{}", repeat("    case 1:\n        pass\n")),
            format!("class C({}):\n    pass\n", repeat("a, ")),
            format!("x = lambda {}: 1\n", repeat("a, ").trim_end_matches(", ")),
            format!("x = a{}\n", repeat(" @ a ** a")),
            format!("x = a{}\n", repeat(" < a")),
            format!("x = a{}\n", repeat(" if a else a")),
            format!("x = {}a{}\n", repeat("[a for a in "), repeat("]")),
            format!("x = {}a{}\n", repeat("(y := "), repeat(")")),
            format!("x = {}1{}\n", repeat("f'{"), repeat("}'")),
            format!("x: {}int{} = 1\n", repeat("list["), repeat("]")),
            format!("def f(x={}1{}): pass\n", repeat("g("), repeat(")")),
            format!("{}def f(): pass\n", repeat("@d\n")),
            indented("if x:", "pass"),
            indented("def f():", "pass"),
            indented("class C:", "pass"),
            indented("with a as b:", "pass"),
            indented("for a in b:", "pass"),
            indented("while a:", "pass"),
            {
                let mut text = indented("try:", "pass");
                for level in (0..N).rev() {
                    text.push_str(&format!(
                        "{}except E:\n{} pass\n",
                        " ".repeat(level),
                        " ".repeat(level)
                    ));
                }
                text
            },
            format!(
                "match x:\n    case {}y{}:\n        pass\n",
                repeat("["),
                repeat("]")
            ),
            format!(
                "match x:\n    case {}y{}:\n        pass\n",
                repeat("C("),
                repeat(")")
            ),
            format!("x = {}\n", repeat("'a' ")),
            format!("def f():\n    x = {}1{}\n", repeat("(yield "), repeat(")")),
            format!(
                "def f():\n    x = {}1{}\n",
                repeat("(yield from "),
                repeat(")")
            ),
            format!("x = {}1{}\n", repeat("a[1:"), repeat("]")),
            format!("x = {}1{}\n", repeat("(1, "), repeat(")")),
            format!("x = {}1{}\n", repeat("{a for a in "), repeat("}")),
            format!("x = {}1{}\n", repeat("{a: a for a in "), repeat("}")),
            format!("{}a{} = 1\n", repeat("[*"), repeat("]")),
            format!("type X = {}int{}\n", repeat("list["), repeat("]")),
            format!("assert {}1{}\n", repeat("f("), repeat(")")),
        ]
    }

    /// [`super::Converter::may_follow_paren`] (one bit per offset) answers at every offset of
    /// every text as the token search it replaced does.
    #[test]
    fn after_paren_bits_agree_with_the_token_search() {
        let mut checked = 0;
        for text in nesting_texts() {
            let parsed = ruff_python_parser::parse_unchecked_source(
                &text,
                ruff_python_ast::PySourceType::Python,
            );
            let converter =
                super::Converter::new(&text, crate::source::line_starts(&text), parsed.tokens());
            for at in 0..=text.len() {
                let searched = converter
                    .previous_token(at)
                    .is_some_and(|token| token.kind() == super::TokenKind::Lpar);
                assert_eq!(
                    converter.may_follow_paren(at),
                    searched,
                    "offset {at} of {:?}",
                    text.chars().take(60).collect::<String>()
                );
                checked += usize::from(searched);
            }
        }
        assert!(checked > 1000, "{checked} offsets after a `(`");
    }

    /// The depth of ruff's AST as [`Quiet`] counts it (statements, expressions, patterns,
    /// f-string elements: what dropping the AST recurses through).
    fn ruff_depth(syntax: &ruff_python_ast::ModModule) -> usize {
        let rules = QuietRules {
            binds_modules: |_| 0,
            member_of: |_| 0,
            builtin_function: |_| false,
            registration: None,
        };
        let mut quiet = Quiet {
            bytes: &[],
            rules: &rules,
            depth: 0,
            deepest: 0,
            loud: false,
            imported: 0,
            members: 0,
        };
        quiet.visit_body(&syntax.body);
        quiet.deepest
    }

    /// ruff's AST and the converted tree bound each other's depth: ruff's is never deeper
    /// (`tree_from_ruff` drops it by plain recursion when the converted tree is at most
    /// `PLAIN_DROP_DEPTH` deep, `parse_quiet` when its own depth is), and the converted tree
    /// is at most `CONVERTED_LEVELS` times as deep, plus one (`parse_quiet` converts no tree
    /// for a quiet file at most `QUIET_DEPTH` deep: it would fit the depth bound). On the
    /// test data and on deep forms of every construct that nests.
    #[test]
    fn ruff_and_converted_depths_bound_each_other() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let data = python_files(&root)
            .into_iter()
            .filter_map(|path| std::fs::read_to_string(path).ok())
            .map(|text| (text, false));
        let (mut compared, mut widest) = (0, (0, 1, String::new()));
        // The deep forms all count: none may be a syntax error or past the depth bound.
        for (text, deep) in data.chain(deep_forms().into_iter().map(|text| (text, true))) {
            let parsed = ruff_python_parser::parse_unchecked_source(
                &text,
                ruff_python_ast::PySourceType::Python,
            );
            let preview = text.chars().take(60).collect::<String>();
            let tree = tree_from_ruff(&text, crate::source::line_starts(&text));
            let tree = match tree {
                Ok(tree) if parsed.errors().is_empty() => tree,
                _ => {
                    assert!(!deep, "{preview:?} does not parse or convert");
                    continue;
                }
            };
            let ruff = ruff_depth(parsed.syntax());
            assert!(
                ruff <= tree.depth(),
                "ruff {ruff} > tree {} in {preview:?}",
                tree.depth()
            );
            let nesting = ruff + super::bracket_depth(parsed.tokens());
            assert!(
                tree.depth() <= CONVERTED_LEVELS * nesting + 1,
                "tree {} > {CONVERTED_LEVELS} x (ruff + brackets) {nesting} + 1 in {preview:?}",
                tree.depth(),
            );
            if tree.depth() * widest.1 > widest.0 * nesting.max(1) {
                widest = (tree.depth(), nesting.max(1), preview);
            }
            compared += 1;
        }
        println!(
            "widest: tree {} for ruff + brackets {} in {:?}",
            widest.0, widest.1, widest.2
        );
        assert!(compared > 100, "{compared} texts");
    }

    /// Every Python file of the case set and the projects both parsers accept gives the same
    /// tree.
    #[test]
    fn ruff_tree_matches_tree_sitter_on_test_data() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let files = python_files(&root);
        assert!(files.len() > 100, "{} files", files.len());
        let summary = run(&files);
        report(&summary, 20);
        assert!(
            summary.different.is_empty(),
            "{} files differ",
            summary.different.len()
        );
    }

    /// `PYTREE_DIFF_DIRS=dir:dir cargo test -p scan --lib ruff_tree_diff_dirs -- --ignored
    /// --nocapture`: the comparison over other trees, with a summary.
    #[test]
    #[ignore = "reads the directories in PYTREE_DIFF_DIRS"]
    fn ruff_tree_diff_dirs() {
        let dirs = std::env::var("PYTREE_DIFF_DIRS").unwrap_or_default();
        let files: Vec<PathBuf> = dirs
            .split(':')
            .filter(|dir| !dir.is_empty())
            .flat_map(|dir| python_files(Path::new(dir)))
            .collect();
        let shown = std::env::var("PYTREE_DIFF_SHOWN")
            .ok()
            .and_then(|shown| shown.parse().ok())
            .unwrap_or(30);
        let summary = run(&files);
        report(&summary, shown);
    }

    /// `PYTREE_DUMP=file.py`: both trees, side by side in a list.
    #[test]
    #[ignore = "prints the trees of PYTREE_DUMP"]
    fn ruff_tree_dump() {
        let path = std::env::var("PYTREE_DUMP").unwrap_or_default();
        let text = std::fs::read_to_string(&path).unwrap();
        let sitter = PyTree::from_tree_sitter(&parse(Grammar::Python, &text).unwrap(), &text);
        let ruff = tree_from_ruff(&text, crate::source::line_starts(&text));
        for (name, tree) in [("tree-sitter", sitter), ("ruff", ruff)] {
            println!("== {name}");
            match tree {
                Ok(tree) => {
                    walk(tree.root(), |node| {
                        let mut depth = 0;
                        let mut up = node.parent();
                        while let Some(parent) = up {
                            depth += 1;
                            up = parent.parent();
                        }
                        if node.is_named() || node.field_name().is_some() {
                            println!(
                                "{}{}{} [{}..{}] {:?}",
                                "  ".repeat(depth),
                                node.field_name()
                                    .map(|f| format!("{f}: "))
                                    .unwrap_or_default(),
                                node.kind_name(),
                                node.start_byte(),
                                node.end_byte(),
                                text.get(node.start_byte()..node.end_byte())
                                    .unwrap_or("")
                                    .chars()
                                    .take(30)
                                    .collect::<String>()
                            );
                        }
                    });
                }
                Err(error) => println!("error: {error}"),
            }
        }
    }

    /// Parse and convert on a thread with the scanner's stack.
    fn on_analysis_stack(text: String) -> Result<(), SourceError> {
        std::thread::Builder::new()
            .stack_size(crate::nesting::ANALYSIS_STACK_BYTES)
            .spawn(move || tree_from_ruff(&text, crate::source::line_starts(&text)).map(|_| ()))
            .unwrap()
            .join()
            .unwrap()
    }

    /// Deep nesting is an error for the file, never a crash.
    #[test]
    fn ruff_tree_refuses_deep_nesting() {
        const DEPTH: usize = 100_000;
        let cases = [
            (
                "parentheses",
                format!("{}x{}\n", "(".repeat(DEPTH), ")".repeat(DEPTH)),
            ),
            ("not", format!("{}x\n", "not ".repeat(DEPTH))),
            ("minus", format!("{}x\n", "- ".repeat(DEPTH))),
            (
                "lists",
                format!("{}x{}\n", "[".repeat(DEPTH), "]".repeat(DEPTH)),
            ),
            // The same, broken at the end.
            ("not, broken", format!("{}x)\n", "not ".repeat(DEPTH))),
            // Forms the token pre-check does not count: ruff builds the deep AST, the
            // conversion stops at the bound, the AST is taken apart before it is dropped.
            ("powers", format!("{}x\n", "x**".repeat(DEPTH))),
            ("lambdas", format!("{}x\n", "lambda:".repeat(DEPTH))),
            (
                "conditionals",
                format!("{}x\n", "x if x else ".repeat(DEPTH)),
            ),
            ("powers, broken", format!("{}x)\n", "x**".repeat(DEPTH))),
        ];
        for (name, text) in cases {
            let started = Instant::now();
            let result = on_analysis_stack(text);
            println!("{name}: {result:?} in {:?}", started.elapsed());
            assert!(
                matches!(
                    result,
                    Err(SourceError::TooDeep { .. } | SourceError::Syntax { .. })
                ),
                "{name}: {result:?}"
            );
        }
    }

    /// `PYTREE_DEEP=depth PYTREE_DEEP_FORM=-`: one deep file (`-` chains, `not` chains,
    /// `(`, `[`), for measuring time and memory past the bound.
    #[test]
    #[ignore = "one deep file of PYTREE_DEEP levels"]
    fn ruff_tree_deep_file() {
        let depth: usize = std::env::var("PYTREE_DEEP")
            .ok()
            .and_then(|depth| depth.parse().ok())
            .unwrap_or(1_000_000);
        let form = std::env::var("PYTREE_DEEP_FORM").unwrap_or_else(|_| "-".into());
        let text = match form.as_str() {
            "(" => format!("{}x{}\n", "(".repeat(depth), ")".repeat(depth)),
            "[" => format!("{}x{}\n", "[".repeat(depth), "]".repeat(depth)),
            "not" => format!("{}x\n", "not ".repeat(depth)),
            other => format!("{}x\n", other.repeat(depth)),
        };
        let started = Instant::now();
        let result = if std::env::var("PYTREE_DEEP_PARSER").is_ok_and(|parser| parser == "ts") {
            std::thread::Builder::new()
                .stack_size(crate::nesting::ANALYSIS_STACK_BYTES)
                .spawn(move || {
                    parse(Grammar::Python, &text)
                        .and_then(|tree| PyTree::from_tree_sitter(&tree, &text))
                        .map(|_| ())
                })
                .unwrap()
                .join()
                .unwrap()
        } else {
            on_analysis_stack(text)
        };
        println!("{form} x {depth}: {result:?} in {:?}", started.elapsed());
        assert!(result.is_err());
    }

    /// `PYTREE_DIFF_DIRS=... cargo test --release -p scan --lib ruff_tree_speed -- --ignored
    /// --nocapture`: parse + conversion time of both parsers, single-threaded.
    #[test]
    #[ignore = "times the parsers over PYTREE_DIFF_DIRS"]
    fn ruff_tree_speed() {
        let dirs = std::env::var("PYTREE_DIFF_DIRS").unwrap_or_default();
        let texts: Vec<String> = dirs
            .split(':')
            .filter(|dir| !dir.is_empty())
            .flat_map(|dir| python_files(Path::new(dir)))
            .filter_map(|path| std::fs::read_to_string(path).ok())
            .collect();
        let bytes: usize = texts.iter().map(String::len).sum();
        for round in 0..3 {
            let mut sitter = Duration::ZERO;
            let mut ruff = Duration::ZERO;
            let mut ruff_parse = Duration::ZERO;
            let mut sitter_parse = Duration::ZERO;
            let mut ruff_dismantle = Duration::ZERO;
            let (mut sitter_nodes, mut ruff_nodes) = (0usize, 0usize);
            for text in &texts {
                let started = Instant::now();
                if let Ok(tree) = parse(Grammar::Python, text)
                    .and_then(|tree| PyTree::from_tree_sitter(&tree, text))
                {
                    walk(tree.root(), |_| sitter_nodes += 1);
                }
                sitter += started.elapsed();
                let started = Instant::now();
                drop(parse(Grammar::Python, text));
                sitter_parse += started.elapsed();
                let started = Instant::now();
                if let Ok(tree) = tree_from_ruff(text, crate::source::line_starts(text)) {
                    walk(tree.root(), |_| ruff_nodes += 1);
                }
                ruff += started.elapsed();
                let started = Instant::now();
                let parsed = ruff_python_parser::parse_unchecked_source(
                    text,
                    ruff_python_ast::PySourceType::Python,
                );
                drop(parsed);
                ruff_parse += started.elapsed();
                let started = Instant::now();
                let parsed = ruff_python_parser::parse_unchecked_source(
                    text,
                    ruff_python_ast::PySourceType::Python,
                );
                super::dismantle(parsed.into_syntax());
                ruff_dismantle += started.elapsed();
            }
            println!(
                "round {round}: {} files, {} MB: tree-sitter + from_tree_sitter {sitter:?} ({sitter_nodes} nodes; tree-sitter's parse alone {sitter_parse:?}), ruff + tree_from_ruff {ruff:?} ({ruff_nodes} nodes; ruff's parse alone {ruff_parse:?}, parse and dismantle {ruff_dismantle:?})",
                texts.len(),
                bytes / 1_000_000,
            );
        }
    }
}
