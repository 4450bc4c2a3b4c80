//! How deep a file's syntax nests, measured before anything recursive looks at it.
//!
//! The JS/TS parser (oxc) and the AST visitors that follow it (oxc's semantic pass, our taint
//! probe and resolver) are recursive: a file of 1 500 nested parentheses used to overflow the
//! stack and abort the whole process, losing every other file's findings. tree-sitter parses
//! Python and Rust without recursion, but our own helpers over its tree recurse (string
//! literals, member chains, `&&&x`). So:
//!
//! - JS/TS: [`javascript_nesting`] over-estimates the parser's recursion depth from the raw
//!   text with a small iterative lexer, before oxc sees the file, for files up to
//!   [`LEXER_MEASURED_BYTES`]; larger files are measured on tree-sitter's tree (which parses
//!   without recursion), since a lexer without the parser's context can be fooled;
//! - Python/Rust: `syntax_tree::parse` measures the real tree depth with a cursor (no
//!   recursion) right after tree-sitter returns.
//!
//! A file past its bound is an error for that file; the analysis then runs on threads whose
//! stack ([`ANALYSIS_STACK_BYTES`]) holds the bound with a wide margin.

/// Stack of every thread that parses or analyses a file. The JS bound below costs at most
/// about 1.5 KB of stack per unit in a debug build (measured: nested parentheses, the most
/// expensive form), so 50 000 units need about 75 MB; 256 MiB leaves a margin of three. Only
/// the pages a file actually uses are ever touched.
pub(crate) const ANALYSIS_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Largest JS/TS file measured by [`javascript_nesting`]; a larger one is measured on its
/// tree-sitter tree (`syntax_tree::depth_check`). The lexer can be fooled (a lone CR ends a
/// `//` comment, a `/` after `)` may start a regular expression, JSX text is not code), but a
/// file of this size nests at most one level per byte, 65 536 levels, which the stack
/// ([`ANALYSIS_STACK_BYTES`]) holds with a margin of 2.7 at 1.5 KB per level.
pub(crate) const LEXER_MEASURED_BYTES: usize = 64 * 1024;

/// Bound of [`javascript_nesting`]'s estimate for a JS/TS file.
pub(crate) const MAX_JAVASCRIPT_NESTING: usize = 50_000;

/// Bound of a Python or Rust syntax tree's depth (tree-sitter nodes from the root).
pub(crate) const MAX_TREE_DEPTH: usize = 50_000;

/// One open bracket: the tokens counted at this level since the last `,` or `;`, and whether
/// it is a template literal's `${`, after whose `}` the template text resumes.
struct Frame {
    chain: usize,
    template: bool,
    /// Opened right after `if`, `while`, `for` or `with`: a `/` after its `)` starts a
    /// regular expression (`if (a) /'/.test(b)`), not a division.
    condition: bool,
}

/// Whether a token just seen ends an operand, so that a `/` after it divides (and does not
/// start a regular expression).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Previous {
    Operand,
    Operator,
}

/// Words after which a `/` starts a regular expression although they look like operands.
const REGEX_AFTER: [&str; 14] = [
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
];

/// Over-estimate how deeply oxc and the AST visitors recurse on `text`; `Err(offset)` names
/// the byte where the estimate first passes `limit`.
///
/// The estimate is the number of open brackets plus, at each open level, the tokens seen since
/// that level's last `,` or `;`. Every way JS/TS syntax nests without brackets (`!!!x`,
/// `a ? b : c ? ..`, `x => y => ..`, `if (a) if (b) ..`, `else if` chains, `a.b.c..`,
/// `a + b + ..` whose tree is left-deep) adds at least one token per level within one such
/// segment, and a `,` or `;` only ever separates siblings. Strings, comments, template text
/// and regular expressions are skipped; a string or regular expression ends at a newline at the
/// latest, so a misread (a `'` in JSX text) cannot swallow the rest of the file. Newlines do
/// not end a segment: `a\n.b\n.c` chains as deeply as `a.b.c`.
///
/// `strict` (for a file whose tree-sitter tree is broken, so that nothing else measures it)
/// also counts every `(`, `[` and `{` inside what it skips as strings, comments, template text
/// and regular expressions, as a level that never closes: a misread (a `/` after a block's `}`
/// is a regular expression to oxc and a division here, so its `'` opens a string to the end
/// of the line) then hides no bracket.
pub(crate) fn javascript_nesting(text: &str, limit: usize, strict: bool) -> Result<usize, usize> {
    let opens_in = |from: usize, to: usize| {
        if strict {
            bytes_between(text.as_bytes(), from, to)
                .iter()
                .filter(|byte| matches!(byte, b'(' | b'[' | b'{'))
                .count()
        } else {
            0
        }
    };
    let bytes = text.as_bytes();
    let mut frames = vec![Frame {
        chain: 0,
        template: false,
        condition: false,
    }];
    // The last token was `if`, `while`, `for` or `with`.
    let mut after_condition_keyword = false;
    // frames.len() + the sum of every frame's chain, kept up to date.
    let mut total = 1usize;
    let mut deepest = total;
    let mut previous = Previous::Operator;
    let mut index = 0usize;
    let mut in_template = false;
    while index < bytes.len() {
        if in_template {
            // Template text: up to the closing backtick or a `${`.
            let from = index;
            let skipped = skip_template_text(bytes, index);
            // The text only, not the `${` that ends it.
            let text_end = if skipped.1 { skipped.0 } else { skipped.0 - 2 };
            total += opens_in(from, text_end);
            match skipped {
                (next, true) => {
                    index = next;
                    in_template = false;
                    previous = Previous::Operand;
                }
                (next, false) => {
                    // At `${`: a new level, closed by the matching `}`.
                    index = next;
                    in_template = false;
                    if let Some(top) = frames.last_mut() {
                        top.chain += 1;
                    }
                    frames.push(Frame {
                        chain: 0,
                        template: true,
                        condition: false,
                    });
                    total += 2;
                    previous = Previous::Operator;
                }
            }
            deepest = deepest.max(total);
            if deepest > limit {
                return Err(index);
            }
            continue;
        }
        let Some(&byte) = bytes.get(index) else {
            break;
        };
        let next = bytes.get(index + 1).copied();
        if byte.is_ascii_whitespace() {
            index += 1;
            continue;
        }
        if byte == b'/' && matches!(next, Some(b'/' | b'*')) {
            let from = index;
            index = if next == Some(b'/') {
                end_of_line(bytes, index)
            } else {
                find(bytes, index + 2, b"*/").map_or(bytes.len(), |end| end + 2)
            };
            total += opens_in(from, index);
            deepest = deepest.max(total);
            if deepest > limit {
                return Err(from);
            }
            continue;
        }
        let start = index;
        let condition = std::mem::take(&mut after_condition_keyword);
        // Every token counts one at the current level.
        if let Some(top) = frames.last_mut() {
            top.chain += 1;
        }
        total += 1;
        match byte {
            b'\'' | b'"' => {
                index = skip_quoted(bytes, index + 1, byte);
                total += opens_in(start, index);
                previous = Previous::Operand;
            }
            b'`' => {
                index += 1;
                in_template = true;
            }
            b'/' if previous == Previous::Operator => {
                index = skip_regex(bytes, index + 1);
                total += opens_in(start, index);
                previous = Previous::Operand;
            }
            b'(' | b'[' | b'{' => {
                frames.push(Frame {
                    chain: 0,
                    template: false,
                    condition: condition && byte == b'(',
                });
                total += 1;
                index += 1;
                previous = Previous::Operator;
            }
            b')' | b']' | b'}' => {
                index += 1;
                previous = Previous::Operand;
                if frames.len() > 1
                    && let Some(closed) = frames.pop()
                {
                    total = total.saturating_sub(1 + closed.chain);
                    if closed.template && byte == b'}' {
                        in_template = true;
                    }
                    if closed.condition {
                        previous = Previous::Operator;
                    }
                }
            }
            b',' | b';' => {
                index += 1;
                previous = Previous::Operator;
                if let Some(top) = frames.last_mut() {
                    total = total.saturating_sub(top.chain);
                    top.chain = 0;
                }
            }
            _ if is_word_byte(byte) => {
                while bytes.get(index).copied().is_some_and(is_word_byte) {
                    index += 1;
                }
                let word = text.get(start..index).unwrap_or("");
                after_condition_keyword = matches!(word, "if" | "while" | "for" | "with");
                previous = if REGEX_AFTER.contains(&word) {
                    Previous::Operator
                } else {
                    Previous::Operand
                };
            }
            // A postfix `++` or `--` ends an operand: `a++ / b` divides.
            b'+' | b'-' if next == Some(byte) && previous == Previous::Operand => {
                index += 2;
            }
            _ => {
                index += 1;
                previous = Previous::Operator;
            }
        }
        deepest = deepest.max(total);
        if deepest > limit {
            return Err(start);
        }
    }
    Ok(deepest)
}

/// The offset of the first `<` past `limit` that may open a JSX element: followed by a letter,
/// `_`, `$` or `>`, and not after an operand (a word, a number, `)` or `]`, which make it a
/// comparison or type arguments). Closing tags are not subtracted: a `</a>` inside an
/// attribute string would cancel an element that stays open. For a large file whose
/// tree-sitter tree is broken (tree-sitter recovers from unclosed elements with a flat tree,
/// oxc recurses into each).
pub(crate) fn jsx_openings_over(text: &str, limit: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut openings = 0usize;
    let mut previous = b';';
    for (index, &byte) in bytes.iter().enumerate() {
        if byte == b'<'
            && !(is_word_byte(previous) || matches!(previous, b')' | b']'))
            && bytes.get(index + 1).is_some_and(|next| {
                next.is_ascii_alphabetic() || matches!(next, b'_' | b'$' | b'>')
            })
        {
            openings += 1;
            if openings > limit {
                return Some(index);
            }
        }
        if !byte.is_ascii_whitespace() {
            previous = byte;
        }
    }
    None
}

fn bytes_between(bytes: &[u8], from: usize, to: usize) -> &[u8] {
    bytes.get(from..to.min(bytes.len())).unwrap_or(&[])
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte == b'\\' || byte >= 0x80
}

/// The offset of the first line terminator at or after `from`: `\n`, `\r`, U+2028 or U+2029
/// (each ends a `//` comment in JavaScript).
fn end_of_line(bytes: &[u8], from: usize) -> usize {
    (from..bytes.len())
        .find(|&index| is_line_terminator(bytes, index))
        .unwrap_or(bytes.len())
}

/// Whether a line terminator starts at `index`: `\n`, `\r`, or U+2028/U+2029 (E2 80 A8/A9).
fn is_line_terminator(bytes: &[u8], index: usize) -> bool {
    match bytes.get(index) {
        Some(b'\n' | b'\r') => true,
        Some(0xE2) => {
            bytes.get(index + 1) == Some(&0x80) && matches!(bytes.get(index + 2), Some(0xA8 | 0xA9))
        }
        _ => false,
    }
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|at| from + at)
}

/// Past a `'..'` or `".."` string: the index after the closing quote, or of the line end
/// (`\n` or `\r`) that ends a misread one.
fn skip_quoted(bytes: &[u8], mut index: usize, quote: u8) -> usize {
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'\\' => index += 2,
            b'\n' | b'\r' => return index,
            _ if byte == quote => return index + 1,
            _ => index += 1,
        }
    }
    bytes.len()
}

/// Past a regular expression literal (its body, the closing `/` and its flags).
fn skip_regex(bytes: &[u8], mut index: usize) -> usize {
    let mut in_class = false;
    while let Some(&byte) = bytes.get(index) {
        if is_line_terminator(bytes, index) {
            return index;
        }
        match byte {
            b'\\' => index += 2,
            b'[' => {
                in_class = true;
                index += 1;
            }
            b']' => {
                in_class = false;
                index += 1;
            }
            b'/' if !in_class => {
                index += 1;
                while bytes.get(index).copied().is_some_and(is_word_byte) {
                    index += 1;
                }
                return index;
            }
            _ => index += 1,
        }
    }
    bytes.len()
}

/// Template text from `index`: `(after the closing backtick, true)` or `(after "${", false)`.
fn skip_template_text(bytes: &[u8], mut index: usize) -> (usize, bool) {
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'\\' => index += 2,
            b'`' => return (index + 1, true),
            b'$' if bytes.get(index + 1) == Some(&b'{') => return (index + 2, false),
            _ => index += 1,
        }
    }
    (bytes.len(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(text: &str) -> usize {
        javascript_nesting(text, usize::MAX, false).unwrap_or(usize::MAX)
    }

    #[test]
    fn siblings_do_not_add_up_and_nesting_does() {
        let flat = "f(a);\n".repeat(10_000);
        assert!(estimate(&flat) < 10, "{}", estimate(&flat));
        let list = format!("x = [{}];", "1, ".repeat(10_000));
        assert!(estimate(&list) < 10);
        for nested in [
            format!("{}1{}", "(".repeat(1000), ")".repeat(1000)),
            format!("x = {}1;", "!".repeat(1000)),
            format!("x = a{};", "\n.b".repeat(1000)),
            format!("{}x;", "if (a)\n".repeat(1000)),
            format!("x = {}1;", "a => ".repeat(1000)),
            format!("x = `{}`;", "${`".repeat(1000)),
        ] {
            assert!(
                estimate(&nested) >= 1000,
                "{nested:.40}: {}",
                estimate(&nested)
            );
        }
    }

    #[test]
    fn strings_comments_and_regexes_hide_their_brackets() {
        let text = "a = '(((('; b = \"[[[\"; // ((((\n/* {{{{ */ c = /[(]{3}/g; d = `((${e}((`;\n";
        assert!(estimate(text) < 10, "{}", estimate(text));
        // A quote misread in JSX text ends at the newline: the next lines still count.
        let jsx = format!("x = <p>don't</p>;\n{}1{}", "(".repeat(50), ")".repeat(50));
        assert!(estimate(&jsx) >= 50);
    }

    #[test]
    fn line_terminators_postfix_operators_and_conditions_are_read_as_javascript_reads_them() {
        let parens = format!("{}1{}", "(".repeat(1000), ")".repeat(1000));
        for text in [
            format!("x = 1 // c\r x = {parens};"),
            format!("x = 1 // c\u{2028} x = {parens};"),
            format!("x = 1 // c\u{2029} x = {parens};"),
            format!("x = a++ / {parens} / 1;"),
            format!("x = a-- / {parens} / 1;"),
            format!("if (a) /'/.test(b), {parens};"),
            format!("while (a) /\"/.test(b), {parens};"),
            format!("x = '\r{parens};"),
        ] {
            assert!(
                estimate(&text) >= 1000,
                "{:?}: {}",
                text.get(..20),
                estimate(&text)
            );
        }
        // Still a division after an ordinary call (nothing skipped), a regex after `(`
        // (its brackets skipped).
        assert_eq!(
            estimate("x = f(a) / 2 / (1);"),
            estimate("x = f(a) * 2 * (1);")
        );
        assert_eq!(estimate("x = (/[(]{3}/g);"), estimate("x = (/a/g);"));
    }

    #[test]
    fn strict_counts_the_brackets_a_misread_skips() {
        // After a block's `}` a `/` starts a regular expression; the lexer reads a division
        // and its `'` as a string to the end of the line. Only strict mode sees the brackets.
        let text = format!("function f(){{}}\n/'/.test(b), {}1;", "(".repeat(1000));
        assert!(estimate(&text) < 100);
        let strict = javascript_nesting(&text, usize::MAX, true).unwrap_or(usize::MAX);
        assert!(strict >= 1000, "{strict}");
        // Strings, comments and regexes without brackets cost nothing more in strict mode.
        let plain = "a = 'x'; // y\nb = /z/g; c = `t${d}t`;";
        assert_eq!(
            javascript_nesting(plain, usize::MAX, true),
            javascript_nesting(plain, usize::MAX, false)
        );
    }

    #[test]
    fn jsx_openings_are_counted_and_comparisons_and_type_arguments_are_not() {
        assert_eq!(jsx_openings_over(&"<a>,".repeat(11), 10), Some(40));
        assert_eq!(jsx_openings_over(&"<>,".repeat(11), 10), Some(30));
        for text in [
            "a < b, ",
            "f(x)<y, ",
            "Array<string>; ",
            "a[0]<b; ",
            "1<2; ",
        ] {
            assert_eq!(jsx_openings_over(&text.repeat(100), 10), None, "{text}");
        }
    }

    #[test]
    fn the_offset_of_the_first_level_past_the_limit_is_returned() {
        let text = format!("x;\n{}", "(".repeat(100));
        assert_eq!(javascript_nesting(&text, 10, false), Err(7));
    }
}
