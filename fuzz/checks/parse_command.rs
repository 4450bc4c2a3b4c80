//! The `parse_command` fuzz target's check, shared by the fuzz binary
//! (`fuzz/fuzz_targets/parse_command.rs`) and the stable replay test
//! (`crates/safety/tests/fuzz_replay.rs`), which both include this file with `#[path]`.
//!
//! Feeds arbitrary UTF-8 to the parser and checks the invariants other modules rely
//! on: it never panics; an accepted argv is non-empty, its program name is non-empty,
//! no argument holds a NUL or a newline, and the input was within the size limit; a
//! refusal carries a non-empty, single-line reason.

use safety::parse::{MAX_COMMAND_BYTES, ParseError, parse_command};

/// Checks one input. Bytes that are not UTF-8 are cut at the first invalid byte, as
/// libfuzzer-sys's `&str` input type does, so a seed means the same in both places.
pub fn check(data: &[u8]) {
    let input = match std::str::from_utf8(data) {
        Ok(input) => input,
        Err(err) => data
            .get(..err.valid_up_to())
            .and_then(|valid| std::str::from_utf8(valid).ok())
            .unwrap_or_default(),
    };
    match parse_command(input) {
        Ok(argv) => {
            assert!(!argv.is_empty(), "accepted an empty argv for {input:?}");
            assert!(argv.first().is_some_and(|program| !program.is_empty()));
            assert!(
                argv.iter().all(|arg| !arg.contains('\0')),
                "NUL in argv for {input:?}"
            );
            assert!(
                argv.iter().all(|arg| !arg.contains('\n')),
                "newline in argv for {input:?}"
            );
            assert!(input.len() <= MAX_COMMAND_BYTES);
            // Every argument byte comes from the input: the argv is never longer.
            assert!(argv.iter().map(String::len).sum::<usize>() <= input.len());
        }
        Err(err) => {
            let reason = err.to_string();
            assert!(
                !reason.is_empty() && !reason.contains('\n'),
                "bad reason {reason:?}"
            );
            if let ParseError::ShellSyntax { operator, .. } = &err {
                assert!(!operator.is_empty());
            }
        }
    }
}
