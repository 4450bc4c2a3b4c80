//! The files server's integration tests, one binary with a module per area.
//!
//! Run one area: `cargo test -p files --test all <module>::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap is a failed test"
)]
#![allow(unreachable_pub, reason = "test helpers are not an API")]
// The fixture builds a sandbox with std::fs; the crate itself may not (clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod mcp_surface;
