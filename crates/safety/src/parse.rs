//! Command parsing: a command string becomes an argv list, or a refusal.
//!
//! What the rest of the core relies on:
//! - `parse_command(input) -> Result<Vec<String>, ParseError>`
//! - Quote-aware POSIX word splitting on a safe subset: single quotes, double quotes
//!   (with the backslash escapes POSIX allows inside them), backslash outside quotes.
//! - Unquoted shell syntax (`; | & > < ( ) $ \`` newline, here-docs, `$VAR`, `$(`, backticks,
//!   also `$` / backtick inside double quotes since a shell would expand them there)
//!   is `ParseError::ShellSyntax` → POLICY_DENIED with reason
//!   `shell operator ';' is not allowed: commands run without a shell`.
//! - Empty command, unbalanced quote, NUL byte, over-long input (> MAX_COMMAND_BYTES)
//!   is `ParseError::Malformed` → INVALID_REQUEST.
//! - No globbing, no tilde or variable expansion.
//!
//! # The accepted subset
//!
//! Every string this parser accepts is split exactly as `/bin/sh` (POSIX) would split
//! it with pathname expansion turned off (`set -f`); `tests/parse_differential.rs`
//! checks that against the real shell. Concretely:
//!
//! - space and tab separate words;
//! - `'...'` is literal up to the next `'`;
//! - `"..."` is literal except that `\` escapes `$`, `` ` ``, `"` and `\` (any other `\`
//!   stays as written); an unescaped `$` or `` ` `` inside is refused, because a shell
//!   would expand it there;
//! - outside quotes, `\` makes the next character literal;
//! - adjacent parts join into one word (`a"b c"'d'` is `ab cd`); `""` is an empty word.
//!
//! Choices where a shell and a shell-less executor could disagree:
//!
//! - glob characters `* ? [ ]` are passed literally: no pattern is expanded, which is
//!   what `sh` itself does when a pattern matches nothing;
//! - braces `{ }` are passed literally, as POSIX `sh` does (brace expansion is a bash
//!   extension);
//! - an unquoted `~` at the start of a word is refused: a shell would always replace it
//!   with a home folder, so a literal `~` is never what the author meant;
//! - an unquoted `#` at the start of a word is refused: a shell would drop the rest of
//!   the line as a comment.

use crate::result::ResultCode;

/// Longest command string accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// Longest variable name quoted back in a `$NAME` refusal, so that a reason stays one
/// short line however long the input is.
const MAX_QUOTED_NAME_CHARS: usize = 32;

/// Shell control and redirection operators, longest first so that the refusal names
/// the operator as the user wrote it (`>>`, not `>`). Every entry starts with one of
/// the characters in [`OPERATOR_START_CHARS`].
const OPERATORS: &[&str] = &[
    "<<<", "<<-", "&>>", ";;", "||", "|&", "&&", "&>", ">>", ">&", ">|", ">(", "<<", "<&", "<>",
    "<(", ";", "|", "&", ">", "<", "(", ")",
];

/// Characters that, unquoted, begin a control or redirection operator.
const OPERATOR_START_CHARS: &[char] = &[';', '|', '&', '>', '<', '(', ')'];

/// Why a command string was refused before it was interpreted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Shell syntax a shell would interpret; commands run without a shell.
    #[error("{}", shell_syntax_reason(.operator, *.grammar))]
    ShellSyntax {
        /// The operator as the user wrote it, e.g. `;`, `$(`, `>>`, `$VAR`; a newline is
        /// shown as `newline` and a carriage return as `carriage return`.
        operator: String,
        /// Who would have run the text: the reason says what to do instead.
        grammar: Grammar,
    },
    /// Malformed input (empty, unbalanced quote, NUL, too long, control character).
    #[error("{reason}")]
    Malformed {
        /// One human sentence.
        reason: String,
    },
}

/// The reason for refused shell syntax: what it is (an operator, a variable, a command
/// substitution, a home-folder `~`, a comment `#`, an expansion) and why it cannot pass.
fn shell_syntax_reason(operator: &str, grammar: Grammar) -> String {
    let no_shell = match grammar {
        Grammar::Exec => "commands run without a shell",
        // The hook's text is run by the agent's shell: only a single program with its
        // arguments is judged, so the model is told to run each part on its own.
        Grammar::Shell => {
            "only one program with its arguments is judged, so nothing may be left for the \
             shell to interpret (run each command as a call of its own)"
        }
    };
    match operator {
        "~" if grammar == Grammar::Shell => format!(
            "unquoted '~' is not allowed: the shell would replace it with a home folder (at the \
             start of a word, and after '=' or ':'), and {no_shell} (write the path out)"
        ),
        "~" => format!(
            "'~' at the start of a word is not allowed: a shell would replace it with a home \
             folder, and {no_shell} (write the path out)"
        ),
        "#" => format!(
            "'#' at the start of a word is not allowed: a shell would drop the rest of the line \
             as a comment, and {no_shell} (quote it to pass it as written)"
        ),
        "*" | "?" | "[" | "]" => format!(
            "unquoted '{operator}' is not allowed: the shell would expand it into file names \
             nobody checked, and {no_shell} (quote it to pass it as written, or name the files)"
        ),
        "{" | "}" => format!(
            "unquoted '{operator}' is not allowed: the shell would expand braces into words \
             nobody checked, and {no_shell} (quote it to pass it as written)"
        ),
        "`" | "$(" => format!("command substitution '{operator}' is not allowed: {no_shell}"),
        op if op.starts_with("${")
            || op
                .strip_prefix('$')
                .and_then(|rest| rest.chars().next())
                .is_some_and(|c| c.is_ascii_alphanumeric() || "_@*#?-$!".contains(c)) =>
        {
            format!(
                "variable '{op}' is not allowed: {no_shell}, so nothing would expand it \
                 (single-quote it to pass it as written)"
            )
        }
        op => format!("shell operator '{op}' is not allowed: {no_shell}"),
    }
}

impl ParseError {
    /// The envelope code for this refusal.
    pub fn code(&self) -> ResultCode {
        match self {
            ParseError::ShellSyntax { .. } => ResultCode::PolicyDenied,
            ParseError::Malformed { .. } => ResultCode::InvalidRequest,
        }
    }

    fn shell_syntax(operator: impl Into<String>) -> Self {
        ParseError::ShellSyntax {
            operator: operator.into(),
            grammar: Grammar::Exec,
        }
    }

    /// The same refusal, worded for `grammar`.
    fn for_grammar(self, grammar: Grammar) -> Self {
        match self {
            ParseError::ShellSyntax { operator, .. } => {
                ParseError::ShellSyntax { operator, grammar }
            }
            other => other,
        }
    }

    fn malformed(reason: impl Into<String>) -> Self {
        ParseError::Malformed {
            reason: reason.into(),
        }
    }
}

/// Split `input` into argv words, refusing anything a shell would interpret.
///
/// On success the list is never empty and its first word (the program) is never empty.
/// Never panics, whatever the input.
pub fn parse_command(input: &str) -> Result<Vec<String>, ParseError> {
    parse(input, Grammar::Exec)
}

/// [`parse_command`] for a command that a real shell (bash) will run, not our executor:
/// the agent hooks judge the text an agent's own shell tool is about to run. On top of
/// everything [`parse_command`] refuses, unquoted `* ? [ ]` (pathname expansion), `{ }`
/// (brace expansion) and `~` anywhere in a word (bash expands `a=~/x` and `--prefix=~/x`)
/// are refused: the shell would turn them into words the policy never saw. Quoted or
/// backslash-escaped they are literal to bash as well, and accepted.
pub fn parse_shell_command(input: &str) -> Result<Vec<String>, ParseError> {
    parse(input, Grammar::Shell)
}

/// Who will split the accepted text again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grammar {
    /// Our executor: the argv is run as parsed, without a shell.
    Exec,
    /// A real shell: the text itself is what runs.
    Shell,
}

fn parse(input: &str, grammar: Grammar) -> Result<Vec<String>, ParseError> {
    // A multi-megabyte "command" is a resource attack on every later step (policy
    // matching, audit, redaction); refuse it before looking at a single character.
    if input.len() > MAX_COMMAND_BYTES {
        return Err(ParseError::malformed(format!(
            "command is {} bytes long; the limit is {MAX_COMMAND_BYTES} bytes",
            input.len()
        )));
    }
    // A NUL cannot be passed to execve: the C side would silently cut the argument
    // there (`cat safe\0../../etc/shadow`), so what was checked would differ from what
    // runs. Refused wherever it stands, quotes included.
    if input.contains('\0') {
        return Err(ParseError::malformed("command contains a NUL byte"));
    }
    if input.chars().all(|c| c == ' ' || c == '\t') {
        return Err(ParseError::malformed("command is empty"));
    }

    let chars: Vec<char> = input.chars().collect();
    let words = split_words(&chars, grammar).map_err(|e| e.for_grammar(grammar))?;

    match words.first() {
        None => Err(ParseError::malformed("command is empty")),
        // `"" ls` names a program with no name; there is nothing to judge or run.
        Some(program) if program.is_empty() => Err(ParseError::malformed(
            "the program name (the first word) is empty",
        )),
        Some(_) => Ok(words),
    }
}

/// The word splitter proper: one pass over the characters, no backtracking.
fn split_words(chars: &[char], grammar: Grammar) -> Result<Vec<String>, ParseError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // True once the current word has begun, even if it is still empty (`''`).
    let mut in_word = false;
    let mut i = 0;

    while let Some(&c) = chars.get(i) {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                i += 1;
            }
            '\'' => {
                in_word = true;
                i = read_single_quoted(chars, i + 1, &mut word)?;
            }
            '"' => {
                in_word = true;
                i = read_double_quoted(chars, i + 1, &mut word)?;
            }
            '\\' => match chars.get(i + 1) {
                // `ls \` would make a shell wait for a continuation line.
                None => {
                    return Err(ParseError::malformed(
                        "command ends with a lone backslash (nothing to escape)",
                    ));
                }
                Some(&next) => {
                    check_literal_char(next)?;
                    word.push(next);
                    in_word = true;
                    i += 2;
                }
            },
            // `$VAR`, `${VAR}`, `$(cmd)`, `$((1+1))`: variable expansion and command
            // substitution would run or leak something the policy never saw.
            '$' => return Err(ParseError::shell_syntax(dollar_operator(chars, i))),
            // `` `cmd` ``: command substitution, the old spelling of `$(cmd)`.
            '`' => return Err(ParseError::shell_syntax("`")),
            // `ls; rm -rf ~`, `cat x | sh`, `a && b`, `sleep 1 &`, `> ~/.bashrc`,
            // `< /etc/shadow`, `<<EOF`, `(subshell)`: chaining, piping, backgrounding,
            // redirection and here-docs would all smuggle a second action past the policy.
            c if OPERATOR_START_CHARS.contains(&c) => {
                return Err(ParseError::shell_syntax(operator_at(chars, i)));
            }
            // `ls # rm -rf /`: a shell drops everything after a word-initial `#`; we would
            // pass it on as arguments, so what the author sees is not what runs.
            '#' if !in_word => return Err(ParseError::shell_syntax("#")),
            // `cat ~/.ssh/id_rsa`: a shell replaces a word-initial `~` with a home folder;
            // we never do, so the command would silently name a different file.
            '~' if !in_word => return Err(ParseError::shell_syntax("~")),
            // `cat *`, `rm {a,b}`, `make prefix=~/x`: bash would expand these into file
            // names, words or a home folder after the check, so an argv nobody judged runs.
            '~' if grammar == Grammar::Shell => return Err(ParseError::shell_syntax("~")),
            '*' | '?' | '[' | ']' | '{' | '}' if grammar == Grammar::Shell => {
                return Err(ParseError::shell_syntax(c.to_string()));
            }
            other => {
                check_literal_char(other)?;
                word.push(other);
                in_word = true;
                i += 1;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Read a single-quoted part starting just after the opening `'`; returns the index
/// just after the closing `'`.
fn read_single_quoted(
    chars: &[char],
    mut i: usize,
    word: &mut String,
) -> Result<usize, ParseError> {
    loop {
        match chars.get(i) {
            // `echo 'abc` would make a shell wait for more input.
            None => return Err(ParseError::malformed("unbalanced single quote (')")),
            Some('\'') => return Ok(i + 1),
            Some(&c) => {
                check_literal_char(c)?;
                word.push(c);
                i += 1;
            }
        }
    }
}

/// Read a double-quoted part starting just after the opening `"`; returns the index
/// just after the closing `"`.
fn read_double_quoted(
    chars: &[char],
    mut i: usize,
    word: &mut String,
) -> Result<usize, ParseError> {
    loop {
        match chars.get(i) {
            // `echo "abc` would make a shell wait for more input.
            None => return Err(ParseError::malformed("unbalanced double quote (\")")),
            Some('"') => return Ok(i + 1),
            Some('\\') => match chars.get(i + 1) {
                // POSIX: inside double quotes `\` escapes only `$ ` " \` and newline.
                Some(&escaped @ ('$' | '`' | '"' | '\\')) => {
                    word.push(escaped);
                    i += 2;
                }
                // Any other `\` is an ordinary character; what follows is read normally
                // (a newline there is refused by `check_literal_char`).
                Some(_) => {
                    word.push('\\');
                    i += 1;
                }
                None => return Err(ParseError::malformed("unbalanced double quote (\")")),
            },
            // `echo "$HOME"`, `echo "$(id)"`: double quotes do not stop expansion or
            // command substitution in a shell, so they are refused here too.
            Some('$') => return Err(ParseError::shell_syntax(dollar_operator(chars, i))),
            Some('`') => return Err(ParseError::shell_syntax("`")),
            Some(&c) => {
                check_literal_char(c)?;
                word.push(c);
                i += 1;
            }
        }
    }
}

/// Refuse characters that may not appear in a command even as literal text.
fn check_literal_char(c: char) -> Result<(), ParseError> {
    match c {
        // `ls\nrm -rf /`: a newline ends a shell command, so a second command could hide
        // on the next line. Refused even inside quotes: a multi-line argument is never
        // needed for a one-line command and would be misread in logs and prompts.
        '\n' => Err(ParseError::shell_syntax("newline")),
        // `ls\r...`: a carriage return makes a terminal or log viewer overwrite the
        // start of the line, hiding what really runs (and CRLF pastes from Windows).
        '\r' => Err(ParseError::shell_syntax("carriage return")),
        '\0' => Err(ParseError::malformed("command contains a NUL byte")),
        '\t' => Ok(()),
        // ESC and the other C0/C1 controls and DEL: terminal escape sequences in an
        // argument can rewrite what a human approving or auditing the command sees.
        c if c.is_control() => Err(ParseError::malformed(format!(
            "command contains the control character U+{:04X}",
            u32::from(c)
        ))),
        // "Trojan Source" (CVE-2021-42574): bidirectional overrides, isolates and marks,
        // and the Unicode line/paragraph separators, make the displayed text differ from
        // the bytes that run.
        '\u{061C}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{2028}'
        | '\u{2029}' => Err(ParseError::malformed(format!(
            "command contains the invisible formatting character U+{:04X}",
            u32::from(c)
        ))),
        _ => Ok(()),
    }
}

/// Name a `$` construct as written: `$(`, `${`, `$'`, `$"`, `$NAME`, `$1`, `$?`, or `$`.
fn dollar_operator(chars: &[char], i: usize) -> String {
    match chars.get(i + 1) {
        Some('(') => "$(".to_string(),
        Some('{') => "${".to_string(),
        Some('\'') => "$'".to_string(),
        Some('"') => "$\"".to_string(),
        Some(&c) if c.is_ascii_alphabetic() || c == '_' => {
            let name: String = chars
                .iter()
                .skip(i + 1)
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .take(MAX_QUOTED_NAME_CHARS)
                .collect();
            format!("${name}")
        }
        Some(&c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => format!("${c}"),
        _ => "$".to_string(),
    }
}

/// Name the control or redirection operator starting at `i`, longest match first.
fn operator_at(chars: &[char], i: usize) -> String {
    let rest = chars.get(i..).unwrap_or(&[]);
    OPERATORS
        .iter()
        .find(|op| {
            let mut op_chars = op.chars();
            let mut rest_chars = rest.iter();
            loop {
                match (op_chars.next(), rest_chars.next()) {
                    (None, _) => return true,
                    (Some(a), Some(&b)) if a == b => {}
                    _ => return false,
                }
            }
        })
        .map(|op| (*op).to_string())
        // Unreachable for callers (every operator start char is a one-char entry), but a
        // fallback keeps this total.
        .unwrap_or_else(|| rest.first().map(char::to_string).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_grammar_refuses_what_bash_would_expand() {
        for (input, op) in [
            ("cat *", "*"),
            ("ls src/?.rs", "?"),
            ("cat [ab]", "["),
            ("echo {a,b}", "{"),
            ("make prefix=~/x", "~"),
            ("ls; id", ";"),
        ] {
            match parse_shell_command(input) {
                Err(ParseError::ShellSyntax { operator, grammar }) => {
                    assert_eq!(
                        (operator.as_str(), grammar),
                        (op, Grammar::Shell),
                        "{input}"
                    );
                }
                other => panic!("{input}: {other:?}"),
            }
        }
        // Quoted or escaped they are literal to bash as well.
        assert_eq!(
            parse_shell_command(r#"echo '*' "{a,b}" \? 'a=~/x'"#).unwrap(),
            vec!["echo", "*", "{a,b}", "?", "a=~/x"]
        );
        // The exec grammar passes them on literally, as it always did.
        assert_eq!(parse_command("cat *").unwrap(), vec!["cat", "*"]);
        // The reason speaks of the shell that will run it.
        let reason = parse_shell_command("a && b").unwrap_err().to_string();
        assert!(
            reason.contains("run each command as a call of its own"),
            "{reason}"
        );
    }

    fn words(input: &str) -> Vec<String> {
        match parse_command(input) {
            Ok(words) => words,
            Err(err) => panic!("{input:?} was refused: {err}"),
        }
    }

    fn refused_operator(input: &str) -> String {
        match parse_command(input) {
            Err(ParseError::ShellSyntax { operator, .. }) => operator,
            other => panic!("{input:?}: expected ShellSyntax, got {other:?}"),
        }
    }

    fn malformed_reason(input: &str) -> String {
        match parse_command(input) {
            Err(ParseError::Malformed { reason }) => reason,
            other => panic!("{input:?}: expected Malformed, got {other:?}"),
        }
    }

    // ---- accepted: word splitting ----

    #[test]
    fn splits_on_spaces_and_tabs() {
        assert_eq!(words("ls  -la \t src"), ["ls", "-la", "src"]);
    }

    #[test]
    fn leading_and_trailing_whitespace_is_ignored() {
        assert_eq!(words("  \tls -l  \t"), ["ls", "-l"]);
    }

    #[test]
    fn adjacent_quoted_and_unquoted_parts_join() {
        assert_eq!(words(r#"echo a"b c"'d'"#), ["echo", "ab cd"]);
    }

    #[test]
    fn empty_double_quotes_are_an_empty_argument() {
        assert_eq!(words(r#"echo "" x"#), ["echo", "", "x"]);
    }

    #[test]
    fn empty_single_quotes_are_an_empty_argument() {
        assert_eq!(words("echo ''"), ["echo", ""]);
    }

    #[test]
    fn single_quotes_keep_everything_literal() {
        assert_eq!(
            words(r#"echo '$HOME `id` \ "x" ; | &'"#),
            ["echo", r#"$HOME `id` \ "x" ; | &"#]
        );
    }

    #[test]
    fn double_quotes_unescape_only_posix_characters() {
        assert_eq!(
            words(r#"echo "\$ \` \" \\ \a \n""#),
            ["echo", r#"$ ` " \ \a \n"#]
        );
    }

    #[test]
    fn backslash_outside_quotes_escapes_next_char() {
        assert_eq!(
            words(r#"echo a\ b \' \"x\\"#),
            ["echo", "a b", "'", r#""x\"#]
        );
    }

    #[test]
    fn escaped_tab_is_literal() {
        assert_eq!(words("echo a\\\tb"), ["echo", "a\tb"]);
    }

    #[test]
    fn quoted_semicolon_is_literal() {
        assert_eq!(words(r#"echo "a;b""#), ["echo", "a;b"]);
    }

    #[test]
    fn single_quoted_pipe_is_literal() {
        assert_eq!(words("echo 'a|b'"), ["echo", "a|b"]);
    }

    #[test]
    fn escaped_semicolon_is_literal() {
        assert_eq!(words(r"echo a\;b"), ["echo", "a;b"]);
    }

    #[test]
    fn every_operator_is_literal_inside_quotes() {
        for op in OPERATORS {
            assert_eq!(words(&format!("echo '{op}'")), ["echo", *op]);
            assert_eq!(words(&format!("echo \"{op}\"")), ["echo", *op]);
        }
    }

    #[test]
    fn escaped_dollar_and_backtick_are_literal() {
        assert_eq!(
            words(r#"echo \$HOME "\$(id)" \`id\`"#),
            ["echo", "$HOME", "$(id)", "`id`"]
        );
    }

    #[test]
    fn glob_characters_are_passed_literally() {
        assert_eq!(
            words("grep -r x --include=*.rs src/?/[ab]"),
            ["grep", "-r", "x", "--include=*.rs", "src/?/[ab]"]
        );
    }

    #[test]
    fn braces_are_passed_literally() {
        assert_eq!(
            words("git show stash@{0} {a,b} {}"),
            ["git", "show", "stash@{0}", "{a,b}", "{}"]
        );
    }

    #[test]
    fn hash_and_tilde_inside_a_word_are_literal() {
        assert_eq!(
            words("echo a#b a~b --x=~/y"),
            ["echo", "a#b", "a~b", "--x=~/y"]
        );
    }

    #[test]
    fn quoted_or_escaped_hash_and_tilde_are_literal() {
        assert_eq!(
            words(r"echo '#' \# '~' \~/x"),
            ["echo", "#", "#", "~", "~/x"]
        );
    }

    #[test]
    fn equals_bang_and_unicode_are_literal() {
        assert_eq!(words("env a=b ! é\u{a0}x"), ["env", "a=b", "!", "é\u{a0}x"]);
    }

    // ---- refused: shell syntax, one test per operator ----

    #[test]
    fn refuses_semicolon() {
        assert_eq!(refused_operator("ls; rm -rf /"), ";");
    }

    #[test]
    fn refuses_double_semicolon() {
        assert_eq!(refused_operator("ls ;; x"), ";;");
    }

    #[test]
    fn refuses_pipe() {
        assert_eq!(refused_operator("cat x | sh"), "|");
    }

    #[test]
    fn refuses_or() {
        assert_eq!(refused_operator("false || rm x"), "||");
    }

    #[test]
    fn refuses_pipe_ampersand() {
        assert_eq!(refused_operator("ls |& cat"), "|&");
    }

    #[test]
    fn refuses_background_ampersand() {
        assert_eq!(refused_operator("sleep 100 &"), "&");
    }

    #[test]
    fn refuses_and() {
        assert_eq!(refused_operator("true && rm x"), "&&");
    }

    #[test]
    fn refuses_ampersand_redirection() {
        assert_eq!(refused_operator("ls &> out"), "&>");
        assert_eq!(refused_operator("ls &>> out"), "&>>");
    }

    #[test]
    fn refuses_output_redirection() {
        assert_eq!(refused_operator("echo x > ~/.bashrc"), ">");
    }

    #[test]
    fn refuses_append_redirection() {
        assert_eq!(refused_operator("echo x >> ~/.bashrc"), ">>");
    }

    #[test]
    fn refuses_fd_duplication() {
        assert_eq!(refused_operator("ls 2>&1"), ">&");
        assert_eq!(refused_operator("ls <&3"), "<&");
    }

    #[test]
    fn refuses_clobber_redirection() {
        assert_eq!(refused_operator("ls >| f"), ">|");
    }

    #[test]
    fn refuses_input_redirection() {
        assert_eq!(refused_operator("cat < /etc/shadow"), "<");
    }

    #[test]
    fn refuses_read_write_redirection() {
        assert_eq!(refused_operator("cat <> f"), "<>");
    }

    #[test]
    fn refuses_here_doc() {
        assert_eq!(refused_operator("cat <<EOF"), "<<");
        assert_eq!(refused_operator("cat <<-EOF"), "<<-");
    }

    #[test]
    fn refuses_here_string() {
        assert_eq!(refused_operator("cat <<< hi"), "<<<");
    }

    #[test]
    fn refuses_process_substitution() {
        assert_eq!(refused_operator("diff <(ls) x"), "<(");
        assert_eq!(refused_operator("tee >(sh)"), ">(");
    }

    #[test]
    fn refuses_open_parenthesis() {
        assert_eq!(refused_operator("(ls)"), "(");
    }

    #[test]
    fn refuses_close_parenthesis() {
        assert_eq!(refused_operator("echo a)"), ")");
    }

    #[test]
    fn refuses_variable() {
        assert_eq!(refused_operator("echo $HOME"), "$HOME");
    }

    #[test]
    fn refuses_braced_variable() {
        assert_eq!(refused_operator("echo ${HOME}"), "${");
    }

    #[test]
    fn refuses_command_substitution() {
        assert_eq!(refused_operator("echo $(id)"), "$(");
        assert_eq!(refused_operator("echo $((1+1))"), "$(");
    }

    #[test]
    fn refuses_special_parameters() {
        assert_eq!(refused_operator("echo $1"), "$1");
        assert_eq!(refused_operator("echo $?"), "$?");
        assert_eq!(refused_operator("echo $$"), "$$");
        assert_eq!(refused_operator("echo $@"), "$@");
    }

    #[test]
    fn refuses_ansi_c_and_locale_quoting() {
        assert_eq!(refused_operator("echo $'\\x41'"), "$'");
        assert_eq!(refused_operator("echo $\"x\""), "$\"");
    }

    #[test]
    fn refuses_lone_dollar() {
        assert_eq!(refused_operator("echo $"), "$");
        assert_eq!(refused_operator("echo a$ b"), "$");
    }

    #[test]
    fn long_variable_name_is_cut_in_the_reason() {
        let operator = refused_operator(&format!("echo ${}", "A".repeat(1000)));
        assert_eq!(operator.chars().count(), 1 + MAX_QUOTED_NAME_CHARS);
    }

    #[test]
    fn refuses_backtick() {
        assert_eq!(refused_operator("echo `id`"), "`");
    }

    #[test]
    fn refuses_dollar_inside_double_quotes() {
        assert_eq!(refused_operator(r#"echo "$HOME""#), "$HOME");
        assert_eq!(refused_operator(r#"echo "x$(id)""#), "$(");
    }

    #[test]
    fn refuses_backtick_inside_double_quotes() {
        assert_eq!(refused_operator(r#"echo "`id`""#), "`");
    }

    #[test]
    fn refuses_newline() {
        assert_eq!(refused_operator("ls\nrm -rf /"), "newline");
    }

    #[test]
    fn refuses_newline_even_quoted_or_escaped() {
        assert_eq!(refused_operator("echo 'a\nb'"), "newline");
        assert_eq!(refused_operator("echo \"a\nb\""), "newline");
        assert_eq!(refused_operator("echo \"a\\\nb\""), "newline");
        assert_eq!(refused_operator("echo a\\\nb"), "newline");
    }

    #[test]
    fn refuses_carriage_return() {
        assert_eq!(refused_operator("ls\r"), "carriage return");
    }

    #[test]
    fn refuses_comment() {
        assert_eq!(refused_operator("ls # rm -rf /"), "#");
        assert_eq!(refused_operator("#ls"), "#");
    }

    #[test]
    fn refuses_word_initial_tilde() {
        assert_eq!(refused_operator("cat ~/.ssh/id_rsa"), "~");
        assert_eq!(refused_operator("ls ~"), "~");
    }

    #[test]
    fn first_refusal_from_the_left_is_reported() {
        assert_eq!(refused_operator("a | b ; c"), "|");
    }

    #[test]
    fn shell_syntax_reason_and_code() {
        let err = ParseError::shell_syntax("&&");
        assert_eq!(
            err.to_string(),
            "shell operator '&&' is not allowed: commands run without a shell"
        );
        assert_eq!(err.code(), ResultCode::PolicyDenied);
        let err = parse_command("ls\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "shell operator 'newline' is not allowed: commands run without a shell"
        );
        // What is not an operator is named for what it is.
        let reason = |input: &str| parse_command(input).unwrap_err().to_string();
        assert_eq!(
            reason("ls ~"),
            "'~' at the start of a word is not allowed: a shell would replace it with a home \
             folder, and commands run without a shell (write the path out)"
        );
        assert!(reason("echo #x").starts_with("'#' at the start of a word is not allowed: "));
        assert_eq!(
            reason("echo $HOME"),
            "variable '$HOME' is not allowed: commands run without a shell, so nothing would \
             expand it (single-quote it to pass it as written)"
        );
        assert!(reason("echo \"${X}\"").starts_with("variable '${' is not allowed: "));
        assert!(reason("echo $1").starts_with("variable '$1' is not allowed: "));
        assert_eq!(
            reason("echo $(id)"),
            "command substitution '$(' is not allowed: commands run without a shell"
        );
        assert!(reason("echo `id`").starts_with("command substitution '`' is not allowed"));
        assert!(reason("echo $'x'").starts_with("shell operator '$'' is not allowed"));
    }

    // ---- refused: malformed ----

    #[test]
    fn refuses_empty_command() {
        assert_eq!(malformed_reason(""), "command is empty");
    }

    #[test]
    fn refuses_whitespace_only_command() {
        assert_eq!(malformed_reason(" \t  "), "command is empty");
    }

    #[test]
    fn refuses_empty_program_name() {
        assert!(malformed_reason(r#""" ls"#).contains("program name"));
        assert!(malformed_reason("''").contains("program name"));
    }

    #[test]
    fn refuses_unbalanced_single_quote() {
        assert!(malformed_reason("echo 'a; b").contains("single quote"));
    }

    #[test]
    fn refuses_unbalanced_double_quote() {
        assert!(malformed_reason("echo \"a b").contains("double quote"));
        assert!(malformed_reason(r#"echo "a\""#).contains("double quote"));
        assert!(malformed_reason(r#"echo "\"#).contains("double quote"));
    }

    #[test]
    fn refuses_trailing_backslash() {
        assert!(malformed_reason(r"echo a\").contains("backslash"));
    }

    #[test]
    fn refuses_nul_byte_anywhere() {
        assert!(malformed_reason("cat safe\0../../etc/shadow").contains("NUL"));
        assert!(malformed_reason("echo 'a\0b'").contains("NUL"));
        assert!(malformed_reason("ls; \0").contains("NUL"));
    }

    #[test]
    fn refuses_over_long_command() {
        let long = format!("echo {}", "a".repeat(MAX_COMMAND_BYTES));
        assert!(malformed_reason(&long).contains("limit"));
        assert_eq!(
            parse_command(&long).unwrap_err().code(),
            ResultCode::InvalidRequest
        );
    }

    #[test]
    fn accepts_command_of_exactly_the_limit() {
        let exact = format!("echo {}", "a".repeat(MAX_COMMAND_BYTES - 5));
        assert_eq!(exact.len(), MAX_COMMAND_BYTES);
        assert_eq!(words(&exact).len(), 2);
    }

    #[test]
    fn refuses_escape_and_other_control_characters() {
        assert!(malformed_reason("echo \u{1b}[2Jhidden").contains("U+001B"));
        assert!(malformed_reason("echo 'a\u{7f}'").contains("U+007F"));
        assert!(malformed_reason("echo \u{9b}").contains("U+009B"));
        assert!(malformed_reason("echo a\\\u{0b}").contains("U+000B"));
    }

    #[test]
    fn refuses_bidirectional_overrides() {
        assert!(malformed_reason("echo \"\u{202e}txt.exe\"").contains("U+202E"));
        assert!(malformed_reason("echo \u{2066}x").contains("U+2066"));
        assert!(malformed_reason("echo \u{2028}").contains("U+2028"));
    }

    #[test]
    fn malformed_code_is_invalid_request() {
        assert_eq!(
            parse_command("").unwrap_err().code(),
            ResultCode::InvalidRequest
        );
    }

    #[test]
    fn operator_table_entries_start_with_an_operator_char() {
        for op in OPERATORS {
            let first = op.chars().next().unwrap_or(' ');
            assert!(OPERATOR_START_CHARS.contains(&first), "{op}");
        }
        for c in OPERATOR_START_CHARS {
            assert!(OPERATORS.contains(&c.to_string().as_str()), "{c}");
        }
    }
}
