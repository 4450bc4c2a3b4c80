//! Fuzz target for the terminal request path, dispatched as the server dispatches a
//! `tools/call`. The check and its fixture are in `fuzz/checks/request.rs`, which the
//! stable test `crates/safety/tests/fuzz_replay.rs` also compiles to replay
//! `fuzz/seeds/request/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/request.rs"]
mod request;

fuzz_target!(|data: &[u8]| request::check(data));
