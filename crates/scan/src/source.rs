//! A scanned file's text: byte offsets to 1-based lines/columns, snippets and pragmas.

use std::cell::Cell;
use std::collections::HashSet;

/// Longest snippet kept in a finding, in characters.
const SNIPPET_MAX_CHARS: usize = 200;

/// The byte offset of the first byte of each line of `text` (split on `\n`). The memchr
/// crate's SIMD search: the byte-by-byte filter this once was took 2 % of a scan, and the
/// standard library's `match_indices` 1.5 %.
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 32 + 1);
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1));
    starts
}

/// The text of one file with a line index.
pub(crate) struct SourceText<'s> {
    text: &'s str,
    /// Byte offset of the first byte of each line.
    line_starts: Vec<usize>,
    /// The last position computed: line, offset and UTF-16 units from the line start to it.
    last_position: Cell<(usize, usize, usize)>,
}

impl<'s> SourceText<'s> {
    /// Index `text` by lines (split on `\n`; a `\r` before it is part of the line ending).
    pub(crate) fn new(text: &'s str) -> Self {
        SourceText {
            text,
            line_starts: line_starts(text),
            last_position: Cell::new((0, 0, 0)),
        }
    }

    /// The text itself.
    pub(crate) fn text(&self) -> &'s str {
        self.text
    }

    /// The byte offset of the first byte of each line.
    pub(crate) fn line_starts(&self) -> &[usize] {
        &self.line_starts
    }

    /// Number of lines.
    pub(crate) fn line_count(&self) -> usize {
        if self.text.is_empty() {
            0
        } else if self.text.ends_with('\n') {
            self.line_starts.len() - 1
        } else {
            self.line_starts.len()
        }
    }

    /// 1-based line of a byte offset.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(index) => index + 1,
            Err(index) => index,
        }
    }

    /// 1-based line and 1-based column (in UTF-16 code units, SARIF's default `columnKind`).
    /// Offsets asked for in increasing order cost one pass over the line in all: the count
    /// resumes from the previous offset on the same line (a one-line file of a million hits
    /// used to be counted from the line start for each).
    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_of(offset);
        let start = self
            .line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        let (last_line, last_offset, last_units) = self.last_position.get();
        let (from, units) = if last_line == line && last_offset >= start && last_offset <= offset {
            (last_offset, last_units)
        } else {
            (start, 0)
        };
        let units = units
            + self
                .text
                .get(from..offset)
                .map_or(0, |t| t.encode_utf16().count());
        self.last_position.set((line, offset, units));
        (line, units + 1)
    }

    /// The source line (1-based), trimmed and cut to a readable length; the work is bounded by
    /// that length, not by the line's.
    pub(crate) fn snippet(&self, line: usize) -> String {
        let start = self
            .line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        let raw = self.text.get(start..end).unwrap_or("").trim();
        if raw.char_indices().nth(SNIPPET_MAX_CHARS).is_some() {
            let cut = raw
                .char_indices()
                .nth(SNIPPET_MAX_CHARS - 3)
                .map_or(raw, |(at, _)| raw.get(..at).unwrap_or(raw));
            format!("{cut}...")
        } else {
            raw.to_string()
        }
    }
}

/// `Some(count)` when `text` has more than `limit` tokens by [`estimated_tokens`]. A token
/// takes one byte at least, so a text of `limit` bytes or fewer is not counted (the count
/// was a twentieth of the scan of a large Python project).
pub(crate) fn tokens_over(text: &str, limit: usize) -> Option<usize> {
    if text.len() <= limit {
        return None;
    }
    Some(estimated_tokens(text)).filter(|tokens| *tokens > limit)
}

/// A cheap upper estimate of a text's token count: runs of word characters, every line end
/// (`\n`, `\r\n` or a lone `\r`) and every other non-space character. A syntax tree costs
/// roughly 100 to 300 bytes per token (measured), so the count bounds a file's memory where its
/// size does not (`a=1;` repeated is 4 tokens per 4 bytes). Line ends count because Python's
/// lexer makes a token of each, blank lines included, and every parser keeps a line table: a
/// 60 MB Python file of blank lines took 1.6 GB and more before they counted.
pub(crate) fn estimated_tokens(text: &str) -> usize {
    let mut tokens = 0;
    let mut in_word = false;
    let mut after_cr = false;
    for byte in text.bytes() {
        let word = byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80;
        if word {
            if !in_word {
                tokens += 1;
            }
        } else {
            let line_end = byte == b'\r' || (byte == b'\n' && !after_cr);
            if line_end || !byte.is_ascii_whitespace() {
                tokens += 1;
            }
        }
        in_word = word;
        after_cr = byte == b'\r';
    }
    tokens
}

/// Whether one of `words` follows a `.` or an `@` in `text` as a whole word (no identifier
/// character after it): a method called or a decorator applied (`server.tool(`,
/// `@mcp.tool`).
pub(crate) fn names_member<'w>(text: &str, words: impl IntoIterator<Item = &'w str>) -> bool {
    let bytes = text.as_bytes();
    let identifier = |byte: Option<&u8>| {
        byte.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$') || *b >= 0x80)
    };
    words.into_iter().any(|word| {
        memchr::memmem::find_iter(bytes, word.as_bytes()).any(|at| {
            matches!(
                at.checked_sub(1).and_then(|i| bytes.get(i)),
                Some(b'.' | b'@')
            ) && !identifier(bytes.get(at + word.len()))
        })
    })
}

/// What the real comments of a file ask for.
#[derive(Default)]
pub(crate) struct Pragmas {
    /// The whole file is excluded.
    pub(crate) ignore_file: bool,
    /// 1-based lines whose findings are suppressed (the line after an ignore-next-line comment).
    pub(crate) ignored_lines: HashSet<usize>,
}

impl Pragmas {
    /// Record one comment. `body` is the comment text without its `//`, `#` or `/*` marker;
    /// `end_line` is the 1-based line the comment ends on.
    ///
    /// Only real comments reach here (the parser found them), so the pragma text inside a string
    /// literal cannot switch the scanner off; the peer matched raw lines and could be disabled that way.
    pub(crate) fn record_comment(&mut self, body: &str, end_line: usize) {
        let body = body.trim_start_matches(['/', '*', '#', '!']).trim();
        let directive = body
            .strip_prefix("shellguard:")
            .or_else(|| body.strip_prefix("safe-mcp:"))
            .map(str::trim_start);
        match directive {
            Some(rest) if rest.starts_with("ignore-next-line") => {
                self.ignored_lines.insert(end_line + 1);
            }
            Some(rest) if rest.starts_with("ignore-file") => self.ignore_file = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_no_longer_than_the_limit_is_never_over_it() {
        // The densest texts: one token per byte.
        for text in ["a=1;", ";;;;", "(((()))", "x y z", "é=é;", ""] {
            assert!(estimated_tokens(text) <= text.len(), "{text:?}");
            assert_eq!(tokens_over(text, text.len()), None, "{text:?}");
        }
        assert_eq!(tokens_over(";;;;", 3), Some(4));
        assert_eq!(tokens_over("abcd", 3), None, "four bytes but one token");
        // Every line end is one token, `\r\n` too.
        assert_eq!(estimated_tokens("\n\n\n"), 3);
        assert_eq!(estimated_tokens("a\r\nb\r\n"), 4);
        assert_eq!(estimated_tokens("\r\r \t"), 2);
    }

    #[test]
    fn names_member_wants_a_dot_or_an_at_before_a_whole_word() {
        let words = ["tool", "add_tool"];
        for text in [
            "server.tool(",
            "@mcp.tool\n",
            "@tool()",
            "mcp.add_tool(f)",
            "x.tool",
        ] {
            assert!(names_member(text, words), "{text:?}");
        }
        for text in [
            "tool(run)",
            "the tool",
            "x.tools",
            "x.tool_name",
            "x.toolé",
            "add_tool",
        ] {
            assert!(!names_member(text, words), "{text:?}");
        }
    }

    #[test]
    fn position_counts_utf16_columns_and_one_based_lines() {
        let source = SourceText::new("a\n😀x\nlast");
        assert_eq!(source.position(0), (1, 1));
        assert_eq!(source.position(2), (2, 1));
        assert_eq!(source.position(6), (2, 3));
        assert_eq!(source.position(8), (3, 1));
        assert_eq!(source.line_count(), 3);
        assert_eq!(source.snippet(2), "😀x");
    }

    #[test]
    fn pragmas_accept_both_spellings() {
        let mut pragmas = Pragmas::default();
        pragmas.record_comment(" shellguard:ignore-next-line", 3);
        pragmas.record_comment(" safe-mcp: ignore-next-line", 7);
        pragmas.record_comment(" not a pragma shellguard:ignore-file", 9);
        assert!(pragmas.ignored_lines.contains(&4));
        assert!(pragmas.ignored_lines.contains(&8));
        assert!(!pragmas.ignore_file);
        pragmas.record_comment(" safe-mcp:ignore-file", 1);
        assert!(pragmas.ignore_file);
    }
}
