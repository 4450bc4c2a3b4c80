//! The result envelope: every tool of every server answers with the same shape,
//! `{ok, code, action, reason, detail, duration_ms}` (docs/protocol.md).
//!
//! A tool builds an [`Envelope<D>`] whose `detail` is its own struct; the audited-call
//! recorder turns it into the wire form ([`Envelope`], whose detail is a JSON object) once,
//! when the call is finished. Because the detail is a type, the tool's `outputSchema`
//! ([`output_schema`]) describes exactly what a client gets.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The closed set of result codes. A new code is a change of the protocol every client sees.
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
    /// Whether an envelope with this code reports `ok: true` (a command whose output was
    /// truncated still ran).
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

/// The answer of every tool. `ok` is derived from `code`, never set apart from it.
///
/// `D` is the tool's detail: a struct of its own inside the core, a JSON object
/// (the default) on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Envelope<D = Map<String, Value>> {
    /// `true` exactly when the operation happened (see [`ResultCode::is_ok`]).
    pub ok: bool,
    /// The typed outcome.
    pub code: ResultCode,
    /// The tool name.
    pub action: String,
    /// One human sentence.
    pub reason: String,
    /// Tool-specific detail; `{}` when nothing ran.
    pub detail: D,
    /// Wall time spent on the request, in milliseconds.
    pub duration_ms: u64,
}

impl<D> Envelope<D> {
    /// A new envelope with `detail`; `ok` follows `code`.
    pub fn with(action: &str, code: ResultCode, reason: impl Into<String>, detail: D) -> Self {
        Envelope {
            ok: code.is_ok(),
            code,
            action: action.to_string(),
            reason: reason.into(),
            detail,
            duration_ms: 0,
        }
    }

    /// The same envelope with its detail turned into another type.
    pub(crate) fn map_detail<E>(self, f: impl FnOnce(D) -> E) -> Envelope<E> {
        Envelope {
            ok: self.ok,
            code: self.code,
            action: self.action,
            reason: self.reason,
            detail: f(self.detail),
            duration_ms: self.duration_ms,
        }
    }
}

impl<D: Serialize> Envelope<D> {
    /// The wire form: the detail as a JSON object with its keys in sorted order (a detail
    /// that is not an object, which no tool's is, becomes `{}`).
    pub(crate) fn into_wire(self) -> Envelope {
        self.map_detail(|detail| match serde_json::to_value(detail) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        })
    }
}

impl Envelope {
    /// A new envelope with empty detail; `ok` follows `code`.
    pub fn new(action: &str, code: ResultCode, reason: impl Into<String>) -> Self {
        Envelope::with(action, code, reason, Map::new())
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
}

/// A tool's detail as it leaves: the tool's own fields and, when a record of the call
/// could not be written (`audit_fail_mode = "open"`), the recorder's note about it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Recorded<D> {
    /// The tool's fields.
    #[serde(flatten)]
    pub fields: D,
    /// `unavailable: <why>` when an audit record of this call is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<String>,
}

/// Detail of an answer that carries none: a refusal before anything ran, an unknown tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct NoDetail {}

/// The `outputSchema` of a tool whose detail is `D`: the envelope with that detail and the
/// recorder's note, for what `Serialize` writes (an `Option` field that is skipped when
/// empty is optional, one that is written as `null` is required and nullable). Every
/// object schema is closed (`additionalProperties: false`: a client can reject any field
/// the schema does not name) and carries no `format` keys (`uint64` and friends are not
/// JSON Schema formats; strict clients warn on them).
pub fn output_schema<D: JsonSchema>() -> Map<String, Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut schema = to_object(generator.into_root_schema_for::<Envelope<Recorded<D>>>());
    close_objects(&mut schema);
    schema
}

/// The `inputSchema` of a tool whose arguments are `T` (what `Deserialize` accepts),
/// without the root's `title` and `description` (the Rust type's name and doc, noise to a
/// model) and without `format` keys.
pub fn input_schema<T: JsonSchema>() -> Map<String, Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = to_object(generator.into_root_schema_for::<T>());
    schema.remove("title");
    schema.remove("description");
    schema
}

/// A generated schema as a JSON object, the root's `title` and `description` removed,
/// `format` keys stripped.
fn to_object(schema: schemars::Schema) -> Map<String, Value> {
    let mut value = schema.to_value();
    strip_formats(&mut value);
    match value {
        Value::Object(mut map) => {
            map.remove("title");
            map.remove("description");
            map
        }
        _ => Map::new(),
    }
}

fn strip_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("format").is_some_and(Value::is_string) {
                map.remove("format");
            }
            map.values_mut().for_each(strip_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_formats),
        _ => {}
    }
}

/// `additionalProperties: false` on every object schema that lists its properties and
/// does not say otherwise: the details are structs, which write exactly their fields.
fn close_objects(schema: &mut Map<String, Value>) {
    if schema.contains_key("properties")
        && !schema.contains_key("additionalProperties")
        && !schema.contains_key("unevaluatedProperties")
    {
        schema.insert("additionalProperties".into(), Value::Bool(false));
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(map) => close_objects(map),
            Value::Array(items) => items.iter_mut().for_each(|item| {
                if let Value::Object(map) = item {
                    close_objects(map);
                }
            }),
            _ => {}
        }
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
        let detail = serde_json::json!({
            "argv": ["rm", "-rf", "/"],
            "sandbox": {"limits": {"processes": 128}, "profile": "standard"},
        });
        let Value::Object(detail) = detail else {
            unreachable!()
        };
        let mut e = Envelope::with(
            "explain_command",
            ResultCode::PolicyDenied,
            "'rm' is denied",
            detail,
        );
        e.duration_ms = 7;
        assert_eq!(e.clone().into_value(), e.to_value());
        let ok = Envelope::new("run_command", ResultCode::Ok, "ran");
        assert_eq!(ok.clone().into_value(), ok.to_value());
    }

    #[derive(Serialize, JsonSchema)]
    struct Example {
        count: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        category: Option<String>,
    }

    #[test]
    fn output_schema_is_closed_optional_where_skipped_and_has_no_formats() {
        let schema = Value::Object(output_schema::<Example>());
        let detail = &schema["properties"]["detail"];
        let detail = match detail.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.rsplit('/').next().unwrap();
                &schema["$defs"][name]
            }
            None => detail,
        };
        assert_eq!(detail["additionalProperties"], false, "{schema}");
        for key in ["count", "note", "category", "audit"] {
            assert!(detail["properties"].get(key).is_some(), "{key}: {schema}");
        }
        let required = detail["required"].as_array().unwrap();
        assert!(required.contains(&Value::from("count")), "{schema}");
        assert!(required.contains(&Value::from("category")), "{schema}");
        assert!(!required.contains(&Value::from("note")), "{schema}");
        assert!(!required.contains(&Value::from("audit")), "{schema}");
        assert!(!schema.to_string().contains("\"format\""), "{schema}");
    }

    #[test]
    fn into_wire_writes_the_typed_detail_with_sorted_keys() {
        let env = Envelope::with(
            "list_files",
            ResultCode::Ok,
            "listed",
            Recorded {
                fields: Example {
                    count: 2,
                    note: None,
                    category: None,
                },
                audit: Some("unavailable: x".into()),
            },
        )
        .into_wire();
        assert_eq!(
            serde_json::to_string(&env.detail).unwrap(),
            r#"{"audit":"unavailable: x","category":null,"count":2}"#
        );
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
        let text = serde_json::to_string_pretty(&env.to_value()).unwrap();
        let action = text.find("\"action\"").unwrap();
        let code = text.find("\"code\"").unwrap();
        let ok = text.find("\"ok\"").unwrap();
        assert!(action < code && code < ok);
    }
}
