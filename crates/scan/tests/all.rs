//! The scanner's integration tests, one binary with a module per area; `common` holds the
//! helper the rule tests share.
//!
//! Run one area: `cargo test -p scan --test all <module>::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap is a failed test"
)]
#![allow(unreachable_pub, reason = "test helpers are not an API")]

mod common;

mod cases;
mod cli_and_reports;
mod javascript_rules;
mod python_rules;
mod robustness;
mod rust_rules;
mod test_context;
