//! The `safe-mcp` binary's library half: the MCP client used by `safe-mcp demo`, the
//! benchmark (`examples/bench`) and the end-to-end tests. The subcommands themselves
//! dispatch to the crates `safety`, `terminal`, `files`, `guard` and `scan`; `exec` is
//! `safe-mcp exec`, one guarded call from the command line; `hook` is `safe-mcp hook` and
//! `safe-mcp check`, the agent hooks.
#![forbid(unsafe_code)]

pub mod client;
pub mod demo;
pub mod demo_files;
pub mod demo_guard;
pub mod demo_hook;
pub mod exec;
pub mod hook;
pub mod http;
