//! Placeholder for audit_source / audit_report (being written on branch guard-audit).

use std::path::Path;

use serde_json::{Map, Value};

use crate::result::{Envelope, ResultCode};

/// Tool name.
pub const AUDIT_SOURCE: &str = "audit_source";
/// Tool name.
pub const AUDIT_REPORT: &str = "audit_report";

/// Input schema.
pub fn input_schema(_tool: &str) -> Option<Map<String, Value>> {
    None
}
/// Output schema.
pub fn output_schema(_tool: &str) -> Option<Map<String, Value>> {
    None
}
pub(crate) fn audit_source(_root: Option<&Path>, _args: Option<&Map<String, Value>>) -> Envelope {
    Envelope::new(AUDIT_SOURCE, ResultCode::InternalError, "not yet")
}
pub(crate) fn audit_report(_args: Option<&Map<String, Value>>) -> Envelope {
    Envelope::new(AUDIT_REPORT, ResultCode::InternalError, "not yet")
}
