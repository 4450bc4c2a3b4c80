//! The `safe-mcp` binary's end-to-end tests, one binary with a module per area: each starts
//! the built `safe-mcp` and talks to it as a client would.
//!
//! Run one area: `cargo test -p safe-mcp --test all <module>::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap is a failed test"
)]
#![allow(unreachable_pub, reason = "test helpers are not an API")]

// The benchmark's code, compiled here too so `sandbox_e2e` and `terminal_e2e` run it a few
// rounds against the built binary (and its unit tests run); `examples/bench/main.rs` is
// its command line.
#[path = "../examples/bench/bench.rs"]
mod bench;
#[path = "../examples/bench/bench_sandbox.rs"]
mod bench_sandbox;
#[path = "../examples/bench/line_client.rs"]
mod line_client;
#[path = "../examples/bench/recorded.rs"]
mod recorded;
// A real rsyslogd for the HTTP load test, the one the safety core's syslog tests start.
#[path = "../../safety/tests/rsyslog_daemon/mod.rs"]
#[allow(dead_code, reason = "the load test uses part of it")]
mod rsyslog_daemon;

mod audit_cli;
mod audit_tamper;
mod files_e2e;
mod guard_demo;
mod guard_e2e;
mod hook_e2e;
mod http_clients;
mod http_e2e;
mod http_load;
mod policy_e2e;
mod protocol_bounds;
mod py_client;
mod sandbox_e2e;
mod sandbox_escape;
mod startup;
mod terminal_e2e;
mod tool_schemas;
mod ts_client;
