//! # safety — the safe-mcp safety core
//!
//! Every decision that could do harm lives in this crate; the server crates
//! (`terminal`, `files`) are wiring and cannot reach around it.
//!
//! A request flows through the modules in the order of the folder list:
//!
//! 1. [`config`] — load and validate `policy.toml` once at start-up (fatal on any doubt).
//! 2. [`parse`] — turn a command string into an argv list, refusing shell syntax.
//! 3. [`policy`] — allow or deny; deny always wins, nothing is allowed by default.
//! 4. [`jail`] — contain every path beneath the root through a directory handle.
//! 5. [`exec`] — run the argv with no shell, a scrubbed environment, limits and a
//!    whole-process-group kill.
//! 6. [`redact`] — remove secrets from everything that leaves, *then* truncate.
//! 7. [`audit`] — append a hash-chained, fsync'ed record before and after acting.
//! 8. [`result`] — the one envelope every tool answers with.
//!
//! [`protocol`] bounds what reaches step 1 at all: message framing on stdio and the
//! length of every string argument.
//!
//! [`terminal`] ties steps 2–8 together for the terminal server, and [`organizer`]
//! (with [`journal`], [`jail::workspace`] and [`policy::layers`]) does the same for the
//! files server, so that the MCP wiring only converts arguments and returns the envelope.
//!
//! Layers, lowest first; a module uses only modules of the layers before its own, so there
//! is no import circle (a unit test reads the sources and fails on one):
//! `result`, `parse`, `protocol`, `redact` → `jail` → `exec` → `config` → `policy`,
//! `audit`, `journal` → `terminal`, `organizer`. `config` validates the limits the lower
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
pub mod config;
pub mod exec;
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
