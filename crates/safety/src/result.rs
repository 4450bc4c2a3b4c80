//! The result envelope: every tool of every server answers with the same shape,
//! `{ok, code, action, reason, detail, duration_ms}` (docs/protocol.md).
//!
//! A tool builds an [`Envelope<D>`] whose `detail` is its own struct; the audited-call
//! recorder turns it into the wire form ([`Envelope`], whose detail is a JSON object) once,
//! when the call is finished. Because the detail is a type, the tool's `outputSchema`
//! ([`output_schema`]) describes exactly what a client gets.

use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
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
/// the schema does not name). Portable as `tool_schema` makes every schema.
pub fn output_schema<D: JsonSchema>() -> Map<String, Value> {
    tool_schema::<Envelope<Recorded<D>>>(
        schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .with_transform(RecursiveTransform(close_object)),
    )
}

/// The `inputSchema` of a tool whose arguments are `T` (what `Deserialize` accepts).
/// Portable as `tool_schema` makes every schema.
pub fn input_schema<T: JsonSchema>() -> Map<String, Value> {
    tool_schema::<T>(schemars::generate::SchemaSettings::draft2020_12())
}

/// The one generator of every tool schema of both servers. On top of `settings` every
/// subschema is made portable ([`portable`]): no `format` keys (`uint64` and friends are
/// not JSON Schema formats; the TypeScript SDK's validator prints a warning for each) and
/// no `type` arrays (a nullable field is `anyOf` a typed branch and `{"type": "null"}`,
/// which single-type dialects and MCP Inspector's `--strict` lint accept). The root loses
/// its `title` and `description` (the Rust type's name and doc, noise to a model).
fn tool_schema<T: JsonSchema>(settings: schemars::generate::SchemaSettings) -> Map<String, Value> {
    let generator = settings
        .with_transform(RecursiveTransform(portable))
        .into_generator();
    match generator.into_root_schema_for::<T>().to_value() {
        Value::Object(mut map) => {
            map.remove("title");
            map.remove("description");
            map
        }
        _ => Map::new(),
    }
}

/// Keywords that say something about a value, never constrain it, and those that belong
/// to the document rather than to a value: they stay on a nullable schema when
/// [`portable`] splits its types into `anyOf` branches.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords that constrain only values of one JSON type (`number` covers `integer`):
/// a branch of another type does not carry them.
const TYPE_KEYWORDS: &[(&str, &[&str])] = &[
    (
        "string",
        &[
            "minLength",
            "maxLength",
            "pattern",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
        ],
    ),
    (
        "number",
        &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ],
    ),
    (
        "array",
        &[
            "items",
            "prefixItems",
            "contains",
            "minItems",
            "maxItems",
            "uniqueItems",
            "minContains",
            "maxContains",
            "additionalItems",
            "unevaluatedItems",
        ],
    ),
    (
        "object",
        &[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
            "unevaluatedProperties",
        ],
    ),
];

/// Whether `keyword` constrains values of JSON type `ty`.
fn applies_to(keyword: &str, ty: &str) -> bool {
    let ty = if ty == "integer" { "number" } else { ty };
    TYPE_KEYWORDS
        .iter()
        .find(|(_, keywords)| keywords.contains(&keyword))
        .is_none_or(|(owner, _)| *owner == ty)
}

/// One schema made portable (its subschemas are reached by [`RecursiveTransform`]): its
/// `format` removed; a `type` array such as `["string", "null"]` replaced by `anyOf` one
/// branch per type, each with the constraints that apply to its type, the annotations
/// kept outside. Exactly the same values are valid before and after.
fn portable(schema: &mut Schema) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if map.get("format").is_some_and(Value::is_string) {
        map.remove("format");
    }
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let types: Vec<String> = types
        .iter()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect();
    if let [only] = types.as_slice() {
        map.insert("type".into(), Value::from(only.as_str()));
        return;
    }
    // `anyOf` alongside the union would need merging; schemars writes none such.
    if types.is_empty() || map.contains_key("anyOf") {
        return;
    }
    map.remove("type");
    let constraints: Vec<(String, Value)> = map
        .iter()
        .filter(|(key, _)| !ANNOTATIONS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    map.retain(|key, _| ANNOTATIONS.contains(&key.as_str()));
    let branches = types
        .iter()
        .map(|ty| {
            let mut branch = Map::new();
            branch.insert("type".into(), Value::from(ty.as_str()));
            for (key, value) in &constraints {
                if applies_to(key, ty) {
                    branch.insert(key.clone(), value.clone());
                }
            }
            Value::Object(branch)
        })
        .collect();
    map.insert("anyOf".into(), Value::Array(branches));
}

/// `additionalProperties: false` on an object schema that lists its properties and does
/// not say otherwise: the details are structs, which write exactly their fields.
fn close_object(schema: &mut Schema) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if map.contains_key("properties")
        && !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
    {
        map.insert("additionalProperties".into(), Value::Bool(false));
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

    /// Every place in `value` where a schema has a `format` key or a `type` array.
    fn unportable(value: &Value, path: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if map.get("format").is_some_and(Value::is_string) {
                    found.push(format!("{path}.format"));
                }
                if map.get("type").is_some_and(Value::is_array) {
                    found.push(format!("{path}.type"));
                }
                for (key, v) in map {
                    unportable(v, &format!("{path}.{key}"), found);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    unportable(v, &format!("{path}[{i}]"), found);
                }
            }
            _ => {}
        }
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only its schema is used")]
    struct Args {
        /// A bounded nullable string.
        #[schemars(length(max = 8))]
        cwd: Option<String>,
        /// At least 1.
        #[schemars(range(min = 1))]
        seconds: Option<u64>,
        count: u32,
    }

    #[test]
    fn input_schema_splits_nullable_types_and_keeps_constraints_in_their_branch() {
        let schema = Value::Object(input_schema::<Args>());
        let mut found = Vec::new();
        unportable(&schema, "", &mut found);
        assert!(found.is_empty(), "{found:?}: {schema}");
        let cwd = &schema["properties"]["cwd"];
        assert_eq!(cwd["description"], "A bounded nullable string.", "{schema}");
        assert_eq!(
            cwd["anyOf"],
            serde_json::json!([{"type": "string", "maxLength": 8}, {"type": "null"}]),
            "{schema}"
        );
        assert_eq!(
            schema["properties"]["seconds"]["anyOf"],
            serde_json::json!([{"type": "integer", "minimum": 1}, {"type": "null"}]),
            "{schema}"
        );
        assert_eq!(
            schema["properties"]["count"],
            serde_json::json!({"type": "integer", "minimum": 0}),
            "{schema}"
        );
        assert!(schema.get("title").is_none(), "{schema}");
    }

    #[test]
    fn a_split_type_union_keeps_each_constraint_on_the_branches_it_applies_to() {
        // Constraints of several types and ones that apply to every type (`enum`).
        let mut schema = Schema::from(
            serde_json::json!({
                "description": "d",
                "type": ["string", "integer", "null"],
                "maxLength": 2,
                "minimum": 3,
                "enum": ["a", "abc", 2, 5, null],
                "format": "uint8",
            })
            .as_object()
            .cloned()
            .unwrap(),
        );
        portable(&mut schema);
        assert_eq!(
            schema.to_value(),
            serde_json::json!({
                "description": "d",
                "anyOf": [
                    {"type": "string", "maxLength": 2, "enum": ["a", "abc", 2, 5, null]},
                    {"type": "integer", "minimum": 3, "enum": ["a", "abc", 2, 5, null]},
                    {"type": "null", "enum": ["a", "abc", 2, 5, null]},
                ],
            })
        );
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
