//! Differential and robustness tests of the command parser.
//!
//! For every string `parse_command` ACCEPTS, the real `/bin/sh` is asked to split the
//! very same string (appended to `printf '%s\0' `) and the NUL-separated words it prints
//! must equal our argv. The shell runs in an empty temporary folder with a scrubbed
//! environment and `set -f` (no pathname expansion): the parser passes glob characters
//! literally, which is what `sh` does under `set -f`, so glob characters stay in the
//! alphabet instead of being excluded. Tilde expansion needs no switch: a word-initial
//! `~` is refused by the parser.
//!
//! For every string refused as `ShellSyntax`, an independent scanner below checks the
//! refusal is justified: the named operator occurs in the input, and its first
//! character stands unquoted (or, for `$` and backtick, inside double quotes; newline
//! and carriage return anywhere). An unbalanced-quote refusal is checked against
//! `sh -n`, which must report a syntax error too.
//!
//! Run: `cargo test -p safety --test all parse_differential::`.

use std::path::Path;
use std::process::{Command, Stdio};

use proptest::prelude::*;
use safety::parse::{MAX_COMMAND_BYTES, ParseError, parse_command};

/// Cases per differential property: each accepted case spawns one `sh`.
const DIFFERENTIAL_CASES: u32 = 384;

/// How `/bin/sh` splits `input` as the arguments of `printf`.
fn sh_words(input: &str, dir: &Path) -> Vec<String> {
    let output = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("set -f; printf '%s\\0' {input}"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("spawn /bin/sh");
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "sh failed on accepted input {input:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("sh output is UTF-8 like its input");
    let mut words: Vec<String> = stdout.split('\0').map(str::to_string).collect();
    // `printf` ends every word with a NUL, so the split leaves one empty tail.
    assert_eq!(
        words.pop().as_deref(),
        Some(""),
        "sh output not NUL-terminated: {stdout:?}"
    );
    words
}

/// True when `sh -n` (parse only, run nothing) reports a syntax error for `input`.
fn sh_reports_syntax_error(input: &str, dir: &Path) -> bool {
    let status = Command::new("/bin/sh")
        .arg("-n")
        .arg("-c")
        .arg(format!("printf '%s\\0' {input}"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn /bin/sh");
    !status.success()
}

/// Independent scanner: is the refusal of `operator` justified by `input`?
///
/// Deliberately simpler than the parser: it only tracks quote state and escapes.
fn refusal_is_justified(input: &str, operator: &str) -> bool {
    let target = match operator {
        "newline" => return input.contains('\n'),
        "carriage return" => return input.contains('\r'),
        op => match op.chars().next() {
            Some(c) => c,
            None => return false,
        },
    };
    if !input.contains(operator) {
        return false;
    }
    let word_initial_only = target == '#' || target == '~';
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut at_word_start = true;
    for c in input.chars() {
        if escaped {
            escaped = false;
            at_word_start = false;
            continue;
        }
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None;
                }
            }
            Some(_) => match c {
                '\\' => escaped = true,
                '"' => quote = None,
                '$' | '`' if c == target => return true,
                _ => {}
            },
            None => {
                if c == target && (!word_initial_only || at_word_start) {
                    return true;
                }
                match c {
                    '\\' => escaped = true,
                    '\'' | '"' => quote = Some(c),
                    _ => {}
                }
                at_word_start = c == ' ' || c == '\t';
            }
        }
    }
    false
}

/// Check one input: accepted ⇒ same words as `sh`; refused ⇒ refusal justified.
fn check_against_sh(input: &str, dir: &Path) -> Result<(), TestCaseError> {
    match parse_command(input) {
        Ok(ours) => {
            let theirs = sh_words(input, dir);
            prop_assert_eq!(&ours, &theirs, "input {:?}", input);
        }
        Err(ParseError::ShellSyntax { operator, .. }) => {
            prop_assert!(
                refusal_is_justified(input, &operator),
                "refused {:?} for operator {:?} without cause",
                input,
                operator
            );
        }
        Err(ParseError::Malformed { reason }) => {
            if reason.starts_with("unbalanced") {
                prop_assert!(
                    sh_reports_syntax_error(input, dir),
                    "refused {:?} as {:?} but sh parses it",
                    input,
                    reason
                );
            }
        }
    }
    Ok(())
}

/// Random strings over an alphabet with every quoting character and every operator
/// character (and a few non-ASCII ones) in it, weighted towards plain text so that a
/// good share of the strings is accepted and reaches the comparison with `sh`.
fn alphabet_string() -> impl Strategy<Value = String> {
    fn chars_of(text: &str) -> Vec<char> {
        text.chars().collect()
    }
    let plain = prop::sample::select(chars_of("abcxyZ09"));
    let blank = prop::sample::select(chars_of(" \t"));
    let quoting = prop::sample::select(chars_of("'\"\\"));
    let literal = prop::sample::select(chars_of("*?[]{}!=-._/,:@%+\u{e9}\u{a0}#~"));
    let operator = prop::sample::select(chars_of(";|&><()$`#~\n\r"));
    let one_char = prop_oneof![12 => plain, 4 => blank, 4 => quoting, 3 => literal, 1 => operator];
    prop::collection::vec(one_char, 1..24).prop_map(|chars| chars.into_iter().collect())
}

/// Strings matching a regular expression (the pattern is a constant of this file).
fn matching(pattern: &str) -> BoxedStrategy<String> {
    prop::string::string_regex(pattern)
        .expect("valid test regex")
        .boxed()
}

/// Mostly well-formed commands: words made of bare, single-quoted, double-quoted and
/// backslash-escaped parts, with operator characters inside the quotes. Most of these
/// are accepted, so they exercise the comparison rather than the refusals.
fn structured_command() -> impl Strategy<Value = String> {
    let printable = "[a-zA-Z0-9 ;|&<>()$`#~*?{}!=\\\\\"-]";
    let bare = matching("[a-zA-Z0-9._/=,:@%+*?{}!\\[\\]-]{1,6}");
    let single = matching(&format!("{printable}{{0,6}}"))
        .prop_map(|s| format!("'{s}'"))
        .boxed();
    let double_plain = "[a-zA-Z0-9 ;|&<>()#~*?{}!=-]{0,4}";
    let double_escape = prop::sample::select(vec!["\\$", "\\`", "\\\"", "\\\\", "\\a", "\\;", "'"]);
    let double = prop::collection::vec(
        prop_oneof![
            matching(double_plain),
            double_escape.prop_map(str::to_string)
        ],
        0..4,
    )
    .prop_map(|parts| format!("\"{}\"", parts.concat()))
    .boxed();
    let escaped = matching("[a-zA-Z ;|&<>()$`#~*?'\"\\\\\t]")
        .prop_map(|s| format!("\\{s}"))
        .boxed();
    let part = prop_oneof![3 => bare, 2 => single, 2 => double, 1 => escaped];
    let word = prop::collection::vec(part, 1..4).prop_map(|parts| parts.concat());
    let separator = prop::sample::select(vec![" ", "  ", "\t", " \t "]);
    prop::collection::vec((separator, word), 1..6).prop_map(|words| {
        let mut command = String::from("echo");
        for (separator, word) in words {
            command.push_str(separator);
            command.push_str(&word);
        }
        command
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(DIFFERENTIAL_CASES))]

    /// Random strings: accepted ones split like `sh`, refused ones refused for cause.
    #[test]
    fn accepted_random_strings_split_like_sh(input in alphabet_string()) {
        let dir = tempfile::tempdir().expect("temporary folder");
        check_against_sh(&input, dir.path())?;
    }

    /// Well-formed quoted commands: the quoted operators reach argv as literal text,
    /// exactly as `sh` would pass them.
    #[test]
    fn accepted_quoted_commands_split_like_sh(input in structured_command()) {
        let dir = tempfile::tempdir().expect("temporary folder");
        check_against_sh(&input, dir.path())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Arbitrary Unicode never panics; an accepted argv is non-empty, names a program,
    /// and no argument carries a NUL.
    #[test]
    fn parse_never_panics_on_arbitrary_strings(input in any::<String>()) {
        if let Ok(argv) = parse_command(&input) {
            prop_assert!(argv.first().is_some_and(|program| !program.is_empty()));
            prop_assert!(argv.iter().all(|arg| !arg.contains('\0')));
            prop_assert!(input.len() <= MAX_COMMAND_BYTES);
        }
    }
}

/// Hand-picked cases that must split exactly like `sh` (and be accepted).
#[test]
fn hand_picked_commands_split_like_sh() {
    let dir = tempfile::tempdir().expect("temporary folder");
    for input in [
        r#"echo a"b c"'d'"#,
        r#"echo "" '' x"#,
        r#"echo "a;b" 'a|b' a\;b"#,
        r#"echo "\$ \` \" \\ \a \n""#,
        r"echo a\ b \' \\",
        "echo *.rs '?' [ab] --include=*.txt",
        "echo {a,b} stash@{0} {}",
        "echo a#b a~b --x=~/y = ! é",
        "echo\ta\t\tb",
        r#"echo 'it'\''s' "a'b" 'a"b'"#,
        r"echo \~ \#",
    ] {
        let ours = parse_command(input).unwrap_or_else(|err| panic!("{input:?} refused: {err}"));
        assert_eq!(ours, sh_words(input, dir.path()), "input {input:?}");
    }
}

/// The scanner that judges refusals must itself tell quoted from unquoted.
#[test]
fn refusal_scanner_tells_quoted_from_unquoted() {
    assert!(refusal_is_justified("ls ; x", ";"));
    assert!(!refusal_is_justified("ls ';' x", ";"));
    assert!(!refusal_is_justified(r"ls \; x", ";"));
    assert!(refusal_is_justified(r#"ls "$HOME""#, "$HOME"));
    assert!(!refusal_is_justified(r#"ls "\$HOME""#, "$"));
    assert!(refusal_is_justified("ls #x", "#"));
    assert!(!refusal_is_justified("ls a#x", "#"));
    assert!(!refusal_is_justified("ls a ;", "&"));
}
