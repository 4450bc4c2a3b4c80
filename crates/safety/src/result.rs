//! The result envelope (SPEC §2): every tool answers with the same shape.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The closed set of result codes. New codes need a reason in the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ResultCode {
    /// The operation happened (a command that exited non-zero still counts).
    Ok,
    /// The policy refused the request.
    PolicyDenied,
    /// The request was malformed and was not interpreted.
    InvalidRequest,
    /// A path left the jail or workspace root; nothing ran or moved.
    PathEscape,
    /// The command ran past its time limit and was killed.
    Timeout,
    /// The command ran; its output was cut to the cap.
    OutputTruncated,
    /// The operation was attempted and failed.
    OperationFailed,
    /// The audit record could not be written (fail-closed); nothing happened.
    AuditUnavailable,
    /// A bug in safe-mcp; nothing was done on the request's behalf.
    InternalError,
    /// Files server only: the planner leaves this entry for the user to name.
    NeedsExplicitRequest,
    /// Terminal server only: `[terminal] max_concurrent_commands` commands are already
    /// running, so nothing ran; unlike a refusal, the same call may succeed later.
    Busy,
}

impl ResultCode {
    /// Whether an envelope with this code reports `ok: true` (SPEC §2: a
    /// truncated output still ran).
    pub fn is_ok(self) -> bool {
        matches!(self, ResultCode::Ok | ResultCode::OutputTruncated)
    }

    /// The wire name, e.g. `POLICY_DENIED`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultCode::Ok => "OK",
            ResultCode::PolicyDenied => "POLICY_DENIED",
            ResultCode::InvalidRequest => "INVALID_REQUEST",
            ResultCode::PathEscape => "PATH_ESCAPE",
            ResultCode::Timeout => "TIMEOUT",
            ResultCode::OutputTruncated => "OUTPUT_TRUNCATED",
            ResultCode::OperationFailed => "OPERATION_FAILED",
            ResultCode::AuditUnavailable => "AUDIT_UNAVAILABLE",
            ResultCode::InternalError => "INTERNAL_ERROR",
            ResultCode::NeedsExplicitRequest => "NEEDS_EXPLICIT_REQUEST",
            ResultCode::Busy => "BUSY",
        }
    }
}

/// `OperationResult` of SPEC §2. `ok` is derived from `code`, never set apart from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Envelope {
    /// `true` exactly when the operation happened (see [`ResultCode::is_ok`]).
    pub ok: bool,
    /// The typed outcome.
    pub code: ResultCode,
    /// The tool name.
    pub action: String,
    /// One human sentence.
    pub reason: String,
    /// Tool-specific detail; `{}` when nothing ran.
    pub detail: Map<String, Value>,
    /// Wall time spent on the request, in milliseconds.
    pub duration_ms: u64,
}

impl Envelope {
    /// A new envelope with empty detail; `ok` follows `code`.
    pub fn new(action: &str, code: ResultCode, reason: impl Into<String>) -> Self {
        Envelope {
            ok: code.is_ok(),
            code,
            action: action.to_string(),
            reason: reason.into(),
            detail: Map::new(),
            duration_ms: 0,
        }
    }

    /// Replace the detail object.
    pub fn with_detail(mut self, detail: Map<String, Value>) -> Self {
        self.detail = detail;
        self
    }

    /// Set one detail field.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.detail.insert(key.to_string(), value.into());
    }

    /// The envelope as a JSON value with keys in sorted order.
    pub fn to_value(&self) -> Value {
        // serde_json's default Map is a BTreeMap, so keys come out sorted.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// [`Envelope::to_value`] without copying: the detail is moved into the value.
    pub fn into_value(self) -> Value {
        let mut map = Map::new();
        map.insert("action".into(), Value::String(self.action));
        map.insert("code".into(), Value::from(self.code.as_str()));
        map.insert("detail".into(), Value::Object(self.detail));
        map.insert("duration_ms".into(), Value::from(self.duration_ms));
        map.insert("ok".into(), Value::Bool(self.ok));
        map.insert("reason".into(), Value::String(self.reason));
        Value::Object(map)
    }

    /// Pretty JSON with sorted keys and two-space indentation (the demo's format).
    pub fn to_pretty_json(&self) -> String {
        serde_json::to_string_pretty(&self.to_value()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_follows_code_and_truncation_still_counts_as_ran() {
        assert!(Envelope::new("x", ResultCode::Ok, "r").ok);
        assert!(Envelope::new("x", ResultCode::OutputTruncated, "r").ok);
        assert!(!Envelope::new("x", ResultCode::Timeout, "r").ok);
        assert!(!Envelope::new("x", ResultCode::PolicyDenied, "r").ok);
    }

    #[test]
    fn into_value_is_to_value() {
        let mut e = Envelope::new(
            "explain_command",
            ResultCode::PolicyDenied,
            "'rm' is denied",
        );
        e.set("argv", serde_json::json!(["rm", "-rf", "/"]));
        e.set(
            "sandbox",
            serde_json::json!({"limits": {"processes": 128}, "profile": "standard"}),
        );
        e.duration_ms = 7;
        assert_eq!(e.clone().into_value(), e.to_value());
        let ok = Envelope::new("run_command", ResultCode::Ok, "ran");
        assert_eq!(ok.clone().into_value(), ok.to_value());
    }

    #[test]
    fn wire_names_match_serde() {
        for code in [
            ResultCode::Ok,
            ResultCode::PolicyDenied,
            ResultCode::InvalidRequest,
            ResultCode::PathEscape,
            ResultCode::Timeout,
            ResultCode::OutputTruncated,
            ResultCode::OperationFailed,
            ResultCode::AuditUnavailable,
            ResultCode::InternalError,
            ResultCode::NeedsExplicitRequest,
            ResultCode::Busy,
        ] {
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                Value::from(code.as_str())
            );
        }
    }

    #[test]
    fn pretty_json_has_sorted_keys() {
        let env = Envelope::new(
            "run_command",
            ResultCode::PolicyDenied,
            "'rm' is on the denylist",
        );
        let text = env.to_pretty_json();
        let action = text.find("\"action\"").unwrap();
        let code = text.find("\"code\"").unwrap();
        let ok = text.find("\"ok\"").unwrap();
        assert!(action < code && code < ok);
    }
}
