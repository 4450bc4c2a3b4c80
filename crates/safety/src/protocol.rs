//! Protocol and input bounds (docs/protocol.md): what a well-formed message on the stdio
//! channel is, how long each string argument may be, and how much of a value a reason or
//! an audit record may quote.
//!
//! The MCP SDK (`rmcp`) ignores a line that is not JSON and drops an over-long one without a
//! word, so a client that sent it waits forever on its id. [`guard`] puts a line-framing
//! front before the SDK: every line read from the client is checked by `check_line`; a bad
//! one is answered here (`-32700` or `-32600`), a good one is handed on unchanged. Answers
//! written here and the SDK's own go through one writer behind a mutex, whole lines at a time,
//! so they never interleave. Nothing here touches the file system.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, duplex,
};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// Longest line (one message) read from the client, in bytes, not counting its newline.
/// Well above any real request (a `command` is at most 16 KiB) and above the 1 MiB argument
/// an attacker sends, so such an argument reaches its own bound and its own envelope.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Deepest nesting of arrays and objects in a message. MCP messages nest a handful of
/// levels; serde_json would stop at 128 with an error the SDK ignores.
pub(crate) const MAX_JSON_DEPTH: usize = 64;
/// Longest `method` name; MCP's longest is 36 bytes. The SDK quotes an unknown method
/// in its `-32601` answer, so a 4 MiB name would come back whole.
pub(crate) const MAX_METHOD_BYTES: usize = 128;
/// Longest string `id`: every answer repeats the id, so a huge one would come back too.
pub(crate) const MAX_ID_BYTES: usize = 128;
/// Longest path-like argument (`cwd`, `subdir`, `src`, `dest`), in bytes: Linux `PATH_MAX`.
pub(crate) const MAX_PATH_ARG_BYTES: usize = 4096;
/// Longest `plan_id`, in bytes: plan ids are hyphenated UUIDs (36 characters).
pub(crate) const MAX_PLAN_ID_BYTES: usize = 36;
/// Longest argument name (key) of any tool; every real one is under 20.
pub(crate) const MAX_ARG_NAME_BYTES: usize = 64;
/// At most this many bytes (escapes included) of a client's value are quoted in a reason.
pub(crate) const MAX_QUOTE_BYTES: usize = 48;
/// Longest reason an envelope carries; a longer one is cut (with a note of how much).
pub const MAX_REASON_BYTES: usize = 1024;
/// A value the audit record keeps whole when no bound is named for it.
pub(crate) const MAX_AUDIT_VALUE_BYTES: usize = 256;
/// At most this many argument names are kept in an audit record.
pub(crate) const MAX_AUDIT_KEYS: usize = 16;

/// JSON-RPC "Parse error": the line is not one JSON value.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request": JSON, but not a JSON-RPC 2.0 message.
pub const INVALID_REQUEST: i64 = -32600;

/// What to do with one line from the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineVerdict {
    /// A well-formed JSON-RPC message: hand these bytes (without newline) to the SDK.
    Forward(Vec<u8>),
    /// A blank line: no message, no answer.
    Ignore,
    /// Malformed: write this answer line (newline included) and forward nothing.
    Reply(Vec<u8>),
}

/// The JSON-RPC error line for `code` with `id` (`Value::Null` when it cannot be read).
pub(crate) fn error_line(code: i64, id: &Value, message: &str) -> Vec<u8> {
    let reply = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    });
    let mut line = serde_json::to_vec(&reply).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The answer to a line longer than [`MAX_LINE_BYTES`] (its id is never read).
pub(crate) fn too_long_line() -> Vec<u8> {
    error_line(
        PARSE_ERROR,
        &Value::Null,
        &format!("Parse error: a message line is longer than {MAX_LINE_BYTES} bytes"),
    )
}

/// Deepest `[`/`{` nesting of `bytes`, strings skipped; stops counting past `limit`.
fn nesting_depth(bytes: &[u8], limit: usize) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    return deepest;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Judge one line (its newline and a trailing `\r` already removed).
///
/// - not UTF-8, not exactly one JSON value, or nested deeper than [`MAX_JSON_DEPTH`]:
///   `-32700` with `id: null` (no id can be trusted from such a line);
/// - JSON but not a JSON-RPC 2.0 message (not an object, a batch, `jsonrpc` not `"2.0"`, an
///   `id` that is not a string (of at most [`MAX_ID_BYTES`]) or integer, `method` not a
///   string of at most [`MAX_METHOD_BYTES`], `params` not an object,
///   a response without exactly one of `result`/`error`): `-32600` with the id when it
///   could be read, else `null`.
pub(crate) fn check_line(line: &[u8]) -> LineVerdict {
    // RFC 8259 §8.1 lets a parser ignore a byte order mark (the SDK does too).
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return LineVerdict::Ignore;
    }
    let parse_error = |why: &str| {
        LineVerdict::Reply(error_line(
            PARSE_ERROR,
            &Value::Null,
            &format!("Parse error: {why}"),
        ))
    };
    // A message nested thousands deep costs stack in every parser that reads it.
    if nesting_depth(line, MAX_JSON_DEPTH) > MAX_JSON_DEPTH {
        return parse_error(&format!(
            "the message is nested deeper than {MAX_JSON_DEPTH} levels"
        ));
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return parse_error("the line is not valid UTF-8");
    };
    // from_str refuses trailing data, so two values on one line are a parse error too.
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // serde_json's syntax messages give a line and column, never the input.
        Err(e) => return parse_error(&format!("not one JSON value ({e})")),
    };
    match shape_error(&value) {
        None => LineVerdict::Forward(line.to_vec()),
        Some((id, why)) => LineVerdict::Reply(error_line(
            INVALID_REQUEST,
            &id,
            &format!("Invalid Request: {why}"),
        )),
    }
}

/// Why `value` is not a JSON-RPC 2.0 message, with the id to answer (null if unreadable).
fn shape_error(value: &Value) -> Option<(Value, String)> {
    let object = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Some((
                Value::Null,
                "a batch (array); MCP sends one message per line".into(),
            ));
        }
        other => {
            return Some((
                Value::Null,
                format!("the message is {}, not an object", json_type(other)),
            ));
        }
    };
    // MCP ids are strings or integers; null, fractions and huge numbers are not ids.
    let id = match object.get("id") {
        None => None,
        Some(Value::String(s)) if s.len() > MAX_ID_BYTES => {
            return Some((
                Value::Null,
                format!(
                    "'id' is {} bytes; the limit is {MAX_ID_BYTES} bytes",
                    s.len()
                ),
            ));
        }
        Some(v @ Value::String(_)) => Some(v.clone()),
        Some(Value::Number(n)) if n.is_i64() => Some(Value::Number(n.clone())),
        Some(other) => {
            return Some((
                Value::Null,
                format!(
                    "'id' must be a string or an integer, got {}",
                    json_type(other)
                ),
            ));
        }
    };
    let answer_id = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some((answer_id, "'jsonrpc' must be \"2.0\"".into()));
    }
    match object.get("method") {
        Some(Value::String(m)) if m.len() > MAX_METHOD_BYTES => Some((
            answer_id,
            format!(
                "'method' is {} bytes; the limit is {MAX_METHOD_BYTES} bytes",
                m.len()
            ),
        )),
        Some(Value::String(_)) => {
            if let Some(params) = object.get("params")
                && !matches!(params, Value::Object(_) | Value::Null)
            {
                return Some((
                    answer_id,
                    format!("'params' must be an object, got {}", json_type(params)),
                ));
            }
            None
        }
        Some(other) => Some((
            answer_id,
            format!("'method' must be a string, got {}", json_type(other)),
        )),
        // A response (to a request of ours): an id and exactly one of result and error.
        None => {
            if id.is_none() {
                return Some((
                    Value::Null,
                    "neither 'method' (a request or notification) nor 'id' (a response)".into(),
                ));
            }
            let (result, error) = (object.contains_key("result"), object.contains_key("error"));
            if result == error {
                return Some((
                    answer_id,
                    "a response needs exactly one of 'result' and 'error'".into(),
                ));
            }
            None
        }
    }
}

/// `n` and the noun that agrees with it: `1 entry`, `2 entries`, `0 entries`.
pub fn count<N>(n: N, one: &str, many: &str) -> String
where
    N: std::fmt::Display + PartialEq + From<u8>,
{
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}

/// `a string`, `an array`, ... for reasons.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `s` as a reason may quote it: escaped (control, quote and bidi characters become
/// `\u{..}` escapes) and at most `MAX_QUOTE_BYTES` bytes of that, `…` when cut.
pub fn quote(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let escaped: String = c.escape_debug().collect();
        if out.len() + escaped.len() > MAX_QUOTE_BYTES {
            out.push('…');
            break;
        }
        out.push_str(&escaped);
    }
    out
}

/// The JSON type a tool argument must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgKind {
    /// A JSON string.
    String,
    /// A JSON number (its range is checked by the tool).
    Number,
    /// `true` or `false`.
    Bool,
    /// A JSON array (its items are checked by the tool).
    Array,
    /// A JSON object (its members are checked by the tool).
    Object,
}

/// One argument a tool takes, as its refusals describe it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArgSpec {
    /// The argument's name.
    pub name: &'static str,
    /// Whether the call must give it (an optional one may also be `null`).
    pub required: bool,
    /// Its JSON type.
    pub kind: ArgKind,
    /// What it must be, in words, e.g. `a string: the path of the entry to move, relative
    /// to the workspace`.
    pub must_be: &'static str,
}

/// Why a tool's arguments do not have the shape it takes: the argument is named, with
/// what it must be (never a parser's words such as `expected u64`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ShapeError {
    /// A name the tool does not take (quoted as a short prefix).
    #[error("unknown argument '{}': '{tool}' {}", quote(.name), takes(.names))]
    Unknown {
        /// The tool.
        tool: String,
        /// The name given.
        name: String,
        /// The names the tool takes.
        names: Vec<&'static str>,
    },
    /// A required argument is missing.
    #[error("missing required argument '{name}': it must be {must_be}")]
    Missing {
        /// The argument.
        name: &'static str,
        /// What it must be.
        must_be: &'static str,
    },
    /// An argument of the wrong JSON type.
    #[error("'{name}' must be {must_be}; got {got}")]
    WrongType {
        /// The argument.
        name: &'static str,
        /// What it must be.
        must_be: &'static str,
        /// What it was (`a number`, `null`, ...).
        got: &'static str,
    },
}

/// `takes subdir`, `takes src, dest`, `takes no arguments`.
fn takes(names: &[&str]) -> String {
    match names {
        [] => "takes no arguments".to_string(),
        names => format!("takes only {}", names.join(", ")),
    }
}

/// Check that `args` has the shape `specs` describe: no unknown name, every required one
/// present, each of its JSON type. The first problem is the reason.
pub(crate) fn check_shape(
    tool: &str,
    args: Option<&Map<String, Value>>,
    specs: &[ArgSpec],
) -> Result<(), ShapeError> {
    let empty = Map::new();
    let args = args.unwrap_or(&empty);
    if let Some(unknown) = args.keys().find(|k| !specs.iter().any(|s| s.name == *k)) {
        return Err(ShapeError::Unknown {
            tool: quote(tool),
            name: unknown.clone(),
            names: specs.iter().map(|s| s.name).collect(),
        });
    }
    for spec in specs {
        let fits = match (args.get(spec.name), spec.kind) {
            (None, _) if spec.required => {
                return Err(ShapeError::Missing {
                    name: spec.name,
                    must_be: spec.must_be,
                });
            }
            (None, _) => true,
            (Some(Value::Null), _) => !spec.required,
            (Some(Value::String(_)), ArgKind::String) => true,
            (Some(Value::Number(_)), ArgKind::Number) => true,
            (Some(Value::Bool(_)), ArgKind::Bool) => true,
            (Some(Value::Array(_)), ArgKind::Array) => true,
            (Some(Value::Object(_)), ArgKind::Object) => true,
            (Some(_), _) => false,
        };
        if !fits {
            return Err(ShapeError::WrongType {
                name: spec.name,
                must_be: spec.must_be,
                got: args.get(spec.name).map(json_type).unwrap_or("nothing"),
            });
        }
    }
    Ok(())
}

/// An argument over its bound. `Display` is the refusal's reason: the length and the bound,
/// and only a short escaped prefix of the text (never the value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum TooLong {
    /// A string argument's value.
    #[error("'{name}' is {len} bytes; the limit is {max} bytes (it starts \"{start}\")")]
    Value {
        /// The argument's name.
        name: String,
        /// Its length in bytes.
        len: usize,
        /// The bound.
        max: usize,
        /// Its start, as [`quote`] shows it.
        start: String,
    },
    /// An argument's name.
    #[error(
        "an argument name is {len} bytes; the limit is {MAX_ARG_NAME_BYTES} bytes (it starts \"{start}\")"
    )]
    Name {
        /// Its length in bytes.
        len: usize,
        /// Its start, as [`quote`] shows it.
        start: String,
    },
}

/// Refuse a string argument longer than `max` bytes.
pub(crate) fn check_len(name: &str, value: &str, max: usize) -> Result<(), TooLong> {
    if value.len() <= max {
        return Ok(());
    }
    Err(TooLong::Value {
        name: name.to_string(),
        len: value.len(),
        max,
        start: quote(value),
    })
}

/// Check the named string arguments of `args` against their bounds, and every argument
/// name against [`MAX_ARG_NAME_BYTES`]; the first violation is the reason.
pub(crate) fn check_arguments(
    args: Option<&Map<String, Value>>,
    bounds: &[(&str, usize)],
) -> Result<(), TooLong> {
    let Some(args) = args else { return Ok(()) };
    for (key, value) in args {
        if key.len() > MAX_ARG_NAME_BYTES {
            return Err(TooLong::Name {
                len: key.len(),
                start: quote(key),
            });
        }
        if let (Some((_, max)), Value::String(s)) =
            (bounds.iter().find(|(name, _)| name == key), value)
        {
            check_len(key, s, *max)?;
        }
    }
    Ok(())
}

/// Cut a reason to [`MAX_REASON_BYTES`] (on a character boundary), saying how much went.
pub(crate) fn clip_reason(reason: String) -> String {
    clip(reason, MAX_REASON_BYTES)
}

/// Cut `text` to at most `max` bytes (plus a short note of how many were cut).
pub(crate) fn clip(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let total = text.len();
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("… [{} bytes cut]", total - end));
    text
}

/// The arguments as an audit record keeps them: a string within its bound (named in
/// `bounds`, else [`MAX_AUDIT_VALUE_BYTES`]) whole, any longer value as its size and a
/// short quoted prefix, argument names past [`MAX_ARG_NAME_BYTES`] or [`MAX_AUDIT_KEYS`]
/// only counted. A refused 1 MiB argument must not become a 1 MiB audit line.
pub(crate) fn audit_arguments(
    args: Option<&Map<String, Value>>,
    bounds: &[(&str, usize)],
) -> Value {
    let mut kept = Map::new();
    let mut omitted_keys = 0usize;
    for (key, value) in args.into_iter().flatten() {
        if key.len() > MAX_ARG_NAME_BYTES || kept.len() >= MAX_AUDIT_KEYS {
            omitted_keys += 1;
            continue;
        }
        let max = bounds
            .iter()
            .find(|(name, _)| name == key)
            .map_or(MAX_AUDIT_VALUE_BYTES, |(_, max)| *max);
        let summary = match value {
            Value::String(s) if s.len() > max => {
                json!({ "omitted_bytes": s.len(), "starts": quote(s) })
            }
            Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
            Value::Array(_) | Value::Object(_) => {
                let size = value.to_string().len();
                if size > MAX_AUDIT_VALUE_BYTES {
                    json!({ "omitted_bytes": size, "type": json_type(value) })
                } else {
                    value.clone()
                }
            }
        };
        kept.insert(key.clone(), summary);
    }
    if omitted_keys > 0 {
        kept.insert("omitted_arguments".into(), json!(omitted_keys));
    }
    Value::Object(kept)
}

/// The task copying the SDK's output to the client, to wait for before the process ends.
pub struct Flushed(JoinHandle<()>);

impl Flushed {
    /// Wait until everything the SDK wrote reached the client's writer (call once the
    /// SDK's service has stopped and dropped its transport).
    pub async fn wait(self) {
        if let Err(e) = self.0.await {
            tracing::warn!("the output pump stopped abnormally: {e}");
        }
    }
}

/// Put the line-framing front between the client (`reader`, `writer`) and the SDK: two
/// tasks start on the current runtime, one reading and judging the client's lines, one
/// copying the SDK's output lines to `writer`. Returns the SDK's reader (validated lines)
/// and writer (whole lines reach `writer` one at a time). Must be called inside a tokio
/// runtime.
pub fn guard<R, W>(reader: R, writer: W) -> (DuplexStream, DuplexStream, Flushed)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    const PIPE: usize = 64 * 1024;
    let (to_sdk, sdk_reader) = duplex(PIPE);
    let (sdk_writer, from_sdk) = duplex(PIPE);
    let out = Arc::new(Mutex::new(writer));
    tokio::spawn(pump_input(reader, to_sdk, out.clone()));
    let output = tokio::spawn(pump_output(from_sdk, out));
    (sdk_reader, sdk_writer, Flushed(output))
}

/// Write one whole line under the lock, so no other line can interleave with it.
async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut w = out.lock().await;
    w.write_all(line).await?;
    w.flush().await
}

/// Read the client's lines with a byte bound, judge each, answer the bad ones, forward the
/// good ones. Ends on EOF (closing the SDK's input, which ends the connection).
async fn pump_input<R, W>(reader: R, mut to_sdk: DuplexStream, out: Arc<Mutex<W>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line: Vec<u8> = Vec::new();
    // Dropping the rest of a line already answered as too long.
    let mut discarding = false;
    loop {
        let (taken, complete, overflow) = {
            let available = match reader.fill_buf().await {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!("reading the client's input failed: {e}");
                    break;
                }
            };
            if available.is_empty() {
                break;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let taken = newline.map_or(available.len(), |i| i + 1);
            let body = newline.unwrap_or(available.len());
            // A line without end would grow this buffer until memory runs out.
            let overflow = !discarding && line.len() + body > MAX_LINE_BYTES;
            if !discarding && !overflow {
                line.extend_from_slice(available.get(..body).unwrap_or_default());
            }
            (taken, newline.is_some(), overflow)
        };
        reader.consume(taken);
        if overflow {
            line.clear();
            discarding = !complete;
            if write_line(&out, &too_long_line()).await.is_err() {
                return;
            }
            continue;
        }
        if discarding {
            discarding = !complete;
            continue;
        }
        if complete {
            if !handle_line(&mut line, &mut to_sdk, &out).await {
                return;
            }
            line.clear();
        }
    }
    // A last line without its newline is still a message.
    if !discarding && !line.is_empty() {
        handle_line(&mut line, &mut to_sdk, &out).await;
    }
}

/// Judge and route one complete line; false when the connection is gone.
async fn handle_line<W: AsyncWrite + Unpin>(
    line: &mut Vec<u8>,
    to_sdk: &mut DuplexStream,
    out: &Mutex<W>,
) -> bool {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    match check_line(line) {
        LineVerdict::Ignore => true,
        LineVerdict::Reply(answer) => {
            tracing::debug!("answered a malformed message line ({} bytes)", line.len());
            write_line(out, &answer).await.is_ok()
        }
        LineVerdict::Forward(mut message) => {
            message.push(b'\n');
            to_sdk.write_all(&message).await.is_ok()
        }
    }
}

/// Copy the SDK's output to the client's writer, one whole line per lock.
async fn pump_output<W: AsyncWrite + Unpin>(from_sdk: DuplexStream, out: Arc<Mutex<W>>) {
    let mut from_sdk = BufReader::new(from_sdk);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from_sdk.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {
                if let Err(e) = write_line(&out, &line).await {
                    tracing::warn!("writing to the client failed: {e}");
                    break;
                }
            }
            Err(e) => {
                tracing::warn!("reading the server's output failed: {e}");
                break;
            }
        }
    }
    let _ = out.lock().await.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(v: LineVerdict) -> Value {
        match v {
            LineVerdict::Reply(line) => serde_json::from_slice(&line).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    fn code_and_id(line: &[u8]) -> (i64, Value) {
        let r = reply(check_line(line));
        (r["error"]["code"].as_i64().unwrap(), r["id"].clone())
    }

    #[test]
    fn malformed_lines_are_parse_errors_with_null_id() {
        assert_eq!(code_and_id(b"garbage"), (PARSE_ERROR, Value::Null));
        assert_eq!(code_and_id(b"{\"a\":\xff}"), (PARSE_ERROR, Value::Null));
        assert_eq!(
            code_and_id(br#"{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}"#),
            (PARSE_ERROR, Value::Null)
        );
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert_eq!(code_and_id(deep.as_bytes()), (PARSE_ERROR, Value::Null));
        let ok_depth = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"a\":{}{}}}}}",
            "[".repeat(62),
            "]".repeat(62)
        );
        assert!(matches!(
            check_line(ok_depth.as_bytes()),
            LineVerdict::Forward(_)
        ));
        // Brackets inside strings are not nesting.
        let in_string = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"a\":\"{}\\\"\"}}}}",
            "[".repeat(200)
        );
        assert!(matches!(
            check_line(in_string.as_bytes()),
            LineVerdict::Forward(_)
        ));
    }

    #[test]
    fn json_that_is_not_json_rpc_is_invalid_request_with_its_id() {
        assert_eq!(code_and_id(b"42"), (INVALID_REQUEST, Value::Null));
        assert_eq!(code_and_id(b"[]"), (INVALID_REQUEST, Value::Null));
        assert_eq!(
            code_and_id(br#"{"id":7,"method":"ping"}"#),
            (INVALID_REQUEST, json!(7))
        );
        assert_eq!(
            code_and_id(br#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#),
            (INVALID_REQUEST, json!("a"))
        );
        assert_eq!(
            code_and_id(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            (INVALID_REQUEST, Value::Null)
        );
        assert_eq!(
            code_and_id(br#"{"jsonrpc":"2.0","id":3,"method":4}"#),
            (INVALID_REQUEST, json!(3))
        );
        assert_eq!(
            code_and_id(br#"{"jsonrpc":"2.0","id":3,"method":"x","params":[1]}"#),
            (INVALID_REQUEST, json!(3))
        );
        assert_eq!(
            code_and_id(br#"{"jsonrpc":"2.0","id":3}"#),
            (INVALID_REQUEST, json!(3))
        );
        let long_method = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"{}"}}"#,
            "m".repeat(129)
        );
        assert_eq!(
            code_and_id(long_method.as_bytes()),
            (INVALID_REQUEST, json!(4))
        );
        let long_id = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
            "i".repeat(129)
        );
        assert_eq!(
            code_and_id(long_id.as_bytes()),
            (INVALID_REQUEST, Value::Null)
        );
    }

    #[test]
    fn good_and_blank_lines() {
        assert_eq!(check_line(b""), LineVerdict::Ignore);
        assert_eq!(check_line(b"  \r"), LineVerdict::Ignore);
        let good = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(check_line(good), LineVerdict::Forward(good.to_vec()));
        let response = br#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#;
        assert!(matches!(check_line(response), LineVerdict::Forward(_)));
    }

    #[test]
    fn reasons_quote_a_short_escaped_prefix() {
        let long = "a\u{202e}\n".repeat(10_000);
        let e = check_len("cwd", &long, MAX_PATH_ARG_BYTES)
            .unwrap_err()
            .to_string();
        assert!(e.len() < 60 + MAX_QUOTE_BYTES + 10, "{e}");
        assert_eq!(quote("ok"), "ok");
        assert!(e.contains("50000 bytes") && e.contains("4096"), "{e}");
        assert!(!e.contains('\u{202e}') && !e.contains('\n'), "{e}");
        assert!(check_len("cwd", "src", MAX_PATH_ARG_BYTES).is_ok());
        let clipped = clip_reason("é".repeat(5000));
        assert!(clipped.len() < MAX_REASON_BYTES + 40, "{}", clipped.len());
    }

    #[test]
    fn audit_arguments_keep_sizes_not_values() {
        let mut args = Map::new();
        args.insert("cwd".into(), json!("x".repeat(1 << 20)));
        args.insert("command".into(), json!("ls"));
        args.insert("k".repeat(1000), json!(1));
        let v = audit_arguments(Some(&args), &[("cwd", MAX_PATH_ARG_BYTES)]);
        assert!(v.to_string().len() < 400, "{v}");
        assert_eq!(v["cwd"]["omitted_bytes"], json!(1 << 20));
        assert_eq!(v["command"], json!("ls"));
        assert_eq!(v["omitted_arguments"], json!(1));
    }

    #[tokio::test]
    async fn the_front_answers_bad_lines_and_forwards_good_ones() {
        use tokio::io::AsyncReadExt;
        let (mut client, server_in) = duplex(1 << 16);
        let (server_out, mut client_out) = duplex(1 << 16);
        let (mut sdk_in, mut sdk_out, flushed) = guard(server_in, server_out);
        let input = b"nope\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n".to_vec();
        client.write_all(&input).await.unwrap();
        let mut long = vec![b'x'; MAX_LINE_BYTES + 10];
        long.push(b'\n');
        client.write_all(&long).await.unwrap();
        client.write_all(b"[1]").await.unwrap();
        drop(client);
        let mut forwarded = Vec::new();
        sdk_in.read_to_end(&mut forwarded).await.unwrap();
        assert_eq!(
            forwarded,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        sdk_out.write_all(b"{\"sdk\":1}\n").await.unwrap();
        drop(sdk_out);
        flushed.wait().await;
        let mut answers = String::new();
        client_out.read_to_string(&mut answers).await.unwrap();
        let lines: Vec<Value> = answers
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4, "{answers}");
        assert_eq!(lines[0]["error"]["code"], json!(PARSE_ERROR));
        assert!(
            lines[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than")
        );
        assert_eq!(lines[2]["error"]["code"], json!(INVALID_REQUEST));
        assert_eq!(lines[3], json!({"sdk": 1}));
    }
}
