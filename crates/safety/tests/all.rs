//! The safety core's integration tests, one binary (one link, one start-up) with a module
//! per area; the shared set-ups (`audit_common`, `files_sandbox`, `redact_corpus_common`, `rsyslog_daemon`, `sandbox_common`) are
//! declared here once.
//!
//! Run one area: `cargo test -p safety --test all <module>::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap is a failed test"
)]
#![allow(unreachable_pub, reason = "test helpers are not an API")]

mod audit_common;
mod files_sandbox;
mod redact_corpus_common;
mod rsyslog_daemon;
mod sandbox_common;

mod audit_checkpoints;
mod audit_log;
mod audit_rotation;
mod audit_syslog;
mod docs;
mod exec_drain;
mod exec_gate;
mod files_attacks;
mod files_crash;
mod files_exchange_race;
mod files_race;
mod files_undo;
mod fuzz_replay;
mod guard_audit;
mod guard_core;
mod parse_differential;
mod policy_allow;
mod redact_audit;
mod redact_corpus;
mod redact_escapes;
mod redact_rules;
mod redact_search;
mod redact_straddle;
mod redact_truncate;
mod sandbox_attacks;
mod warm_launcher;
