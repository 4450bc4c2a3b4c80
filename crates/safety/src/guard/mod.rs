//! The guard: named tools, each a pinned executable with argument rules, that a caller runs
//! by name and can only narrow.
//!
//! - [`registry`]: the operator's `[[guard.tools]]` entries, compiled and checked against
//!   their own examples at start-up, plus run-time entries that can only narrow them; every
//!   call is judged here into a typed decision the server turns into an envelope.
//! - [`tier`]: how far a tool can be trusted (`LOW` to `CRITICAL`), read from the real
//!   state: its patterns tested against probe arguments, its profile, the host's sandbox
//!   downgrades and whether the replay window is on.
//!
//! The guard reuses the terminal's executor and the one audited-call recorder; this module
//! decides, it does not run or record anything.

pub mod registry;
pub mod tier;

pub use registry::{Allowed, Refusal, Registration, Registry, RegistryError};
pub use tier::{TrustReport, TrustTier, trust_tier};
