//! # safety — the safe-mcp safety core
//!
//! Every decision that could do harm lives in this crate; the server crates
//! (`terminal`, `files`) are wiring and cannot reach around it.
//!
//! Every tool call of every server goes through the same six steps, each a module:
//!
//! 1. **Parse** ([`parse`]): the command string becomes an argv list; shell syntax
//!    (pipes, redirection, `;`, `$VAR`, `$(...)`, ...) is refused, never interpreted.
//! 2. **Evaluate** ([`policy`]): allow or deny; deny always wins, nothing is allowed by
//!    default, and an allowed program takes only the options listed for it.
//! 3. **Contain** ([`jail`]): every path resolves beneath the root through a directory
//!    handle (`openat2` with `RESOLVE_BENEATH`); a path that leaves is `PATH_ESCAPE`.
//! 4. **Act** ([`exec`]): no shell, a scrubbed environment, never as root, a read-only view
//!    of everything but the jail, Landlock, seccomp, per-call cgroup limits, a timeout and
//!    a whole-tree kill.
//! 5. **Strip terminal escapes, redact, then truncate** ([`redact`]): in that order, on
//!    everything that leaves.
//! 6. **Record** ([`audit`]): an intent record before acting and an outcome record after,
//!    hash-chained and fsync'ed; a record that cannot be written stops the call
//!    (fail-closed).
//!
//! Around them: [`config`] loads and validates the policy once at start-up (fatal on any
//! doubt); [`protocol`] bounds what reaches step 1 at all (message framing on stdio and the
//! length of every string argument); [`result`] is the one envelope every tool answers
//! with, each tool's `detail` a typed struct whose JSON Schema is its `outputSchema`.
//!
//! [`terminal`] ties the six steps together for the terminal server, and [`organizer`]
//! (with [`journal`], [`jail::workspace`] and [`policy::layers`]) does the same for the
//! files server; one audited-call recorder (intent record, act, outcome record, envelope)
//! serves all three servers. The MCP wiring crates (`terminal`, `files`, `guard`) only
//! convert arguments and return the envelope, and a lint list keeps them from the file
//! system, processes and sockets. The architecture in full: `docs/architecture.md`.
//!
//! [`guard`] is the guard server's core: the registry of named tools (operator entries
//! from the policy, run-time entries that can only narrow them), each tool's trust tier,
//! the canonical hash of what will really run, the replay window of recent hashes, the
//! source audits, and [`guard::GuardCore`], which runs a call through the terminal's own
//! flow.
//!
//! [`hook`] judges what an agent's own tools (Claude Code's and Codex's shell and file
//! tools, MCP tools by name) are about to do, with the same parser, policy, containment
//! and audit log, for `safe-mcp hook` and `safe-mcp check`; it runs nothing.
//!
//! Layers, lowest first; a module uses only modules of the layers before its own, so there
//! is no import circle (a unit test reads the sources and fails on one):
//! `result`, `parse`, `protocol`, `redact` → `jail` → `exec` → `config` → `policy`,
//! `audit`, `journal` → `terminal`, `organizer` → `guard` → `hook`. `config` validates the limits the lower
//! layers enforce (it owns them, e.g. the smallest audit rotation size); the containment
//! test `jail::is_within` belongs to the jail.
//!
//! ## The surface
//!
//! A server loads its [`Config`] once, starts the core of its server ([`TerminalCore`] or
//! [`Organizer`]) from it, and hands each tool call's raw JSON arguments to that core,
//! which answers with an [`Envelope`]: everything else is internal. The items below are
//! re-exported here; the modules stay public for library users who need a single step
//! (for example [`parse_command`] or [`Redactor`] alone).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use safety::{Server, TerminalCore, load_config};
//! let config = load_config(std::path::Path::new("policy.toml"), Server::Terminal, &[])?;
//! let core = TerminalCore::start(config)?;
//! let args = serde_json::json!({ "command": "git status" });
//! let envelope = core.explain_command(args.as_object());
//! println!("{} {}", envelope.code.as_str(), envelope.reason);
//! # Ok(())
//! # }
//! ```
// `unsafe` is denied everywhere but `exec::sys`, the one module that wraps the
// fork-to-exec hook no safe API offers.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod audit;
pub mod callers;
pub mod config;
pub mod exec;
pub mod guard;
pub mod hook;
#[cfg(test)]
mod import_graph;
pub mod jail;
pub mod journal;
pub mod organizer;
pub mod parse;
pub mod policy;
pub mod protocol;
mod recorder;
pub mod redact;
pub mod result;
pub mod terminal;

pub use audit::{AuditLog, VerifyReport, verify as verify_audit_log};
pub use config::{Config, Server, load as load_config};
pub use organizer::{Organizer, OrganizerError};
pub use parse::{ParseError, parse_command};
pub use redact::{RedactionSettings, Redactor};
pub use result::{Envelope, ResultCode};
pub use terminal::{StartError, TerminalCore};
