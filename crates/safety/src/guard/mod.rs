//! The guard's building blocks: what identifies a command, and the memory of the commands
//! already run.
//!
//! A guarded call names an operator-registered tool and an argv; before it runs, the guard
//! reduces what will really run (resolved executable, argv, resolved folder, environment) to
//! one canonical hash ([`canon`]), and asks a replay window ([`replay`]) whether that hash
//! ran recently. One window serves every guarded entry point of a process, is bounded by
//! size and by age on a monotonic clock, and is saved to a state file so a restart does not
//! forget it.
//!
//! The canonical form strips every invisible code point before hashing, so a variant of a
//! command with a word joiner or a variation selector in it is the same command, not a new
//! one that escapes the window.

pub mod canon;
pub mod replay;

pub use canon::{CanonicalCommand, CanonicalHash, canonical_str};
pub use replay::{Clock, ReplayLimits, ReplayStateError, ReplayWindow, SystemClock};
