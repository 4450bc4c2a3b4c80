//! Fuzz target for `safety::parse::parse_command` (SPEC §4.1).
//!
//! Feeds arbitrary UTF-8 to the parser and checks the invariants other modules rely
//! on: it never panics; an accepted argv is non-empty, its program name is non-empty,
//! no argument holds a NUL or a newline, and the input was within the size limit; a
//! refusal carries a non-empty, single-line reason.
#![no_main]

use libfuzzer_sys::fuzz_target;
use safety::parse::{MAX_COMMAND_BYTES, ParseError, parse_command};

fuzz_target!(|input: &str| {
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
            if let ParseError::ShellSyntax { operator } = &err {
                assert!(!operator.is_empty());
            }
        }
    }
});
