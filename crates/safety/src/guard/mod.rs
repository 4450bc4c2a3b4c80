//! The guard: named tools, each a pinned executable with argument rules, that a caller runs
//! by name and can only narrow, and the memory of the commands already run.
//!
//! - [`registry`]: the operator's `[[guard.tools]]` entries, compiled and checked against
//!   their own examples at start-up, plus run-time entries that can only narrow them; every
//!   call is judged here into a typed decision the server turns into an envelope.
//! - [`tier`]: how far a tool can be trusted (`LOW` to `CRITICAL`), read from the real
//!   state: its patterns tested against probe arguments, its profile, the host's sandbox
//!   downgrades and whether the replay window is on.
//! - [`canon`]: what will really run (resolved executable, argv, resolved folder,
//!   environment) reduced to one canonical hash. The canonical form strips every invisible
//!   code point before hashing, so a variant of a command with a word joiner or a variation
//!   selector in it is the same command, not a new one that escapes the window.
//! - [`replay`]: a window of recent hashes, bounded by size and by age on a monotonic
//!   clock, shared by every guarded entry point of a process and saved to a state file so
//!   a restart does not forget it.
//!
//! - [`audit`]: the `audit_source` and `audit_report` tools: the source scanner run on a
//!   path the kernel resolved beneath `[guard] scan_root`, and its report rendered as
//!   Markdown, JSON or SARIF.
//!
//! The guard reuses the terminal's executor and the one audited-call recorder; this module
//! decides, it does not run or record anything.

pub mod audit;
pub mod canon;
pub mod core;
pub mod registry;
pub mod replay;
pub mod tier;

pub use self::core::{GuardCore, GuardStartError, TOOLS};
pub use canon::{CanonicalCommand, CanonicalHash, canonical_str};
pub use registry::{Allowed, Refusal, Registration, Registry, RegistryError};
pub use replay::{Clock, ReplayLimits, ReplayStateError, ReplayWindow, SystemClock};
pub use tier::{TrustReport, TrustTier, trust_tier};
