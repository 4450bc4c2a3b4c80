//! Fuzz target for `safety::parse::parse_command`. The check itself is in
//! `fuzz/checks/parse_command.rs`, which the stable test
//! `crates/safety/tests/fuzz_replay.rs` also compiles to replay `fuzz/seeds/parse_command/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/parse_command.rs"]
mod parse_command;

fuzz_target!(|data: &[u8]| parse_command::check(data));
