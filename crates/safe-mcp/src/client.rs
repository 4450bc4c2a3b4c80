//! A thin MCP client over a child process's stdio, built on the official `rmcp` client.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

/// A connected client session.
pub type Session = RunningService<RoleClient, ()>;

/// Start `bin ARGS...` with exactly `env` as its environment (plus `SAFE_MCP_LOG=warn`) and
/// complete the MCP handshake.
pub async fn connect(bin: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Session> {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args).env_clear().env("SAFE_MCP_LOG", "warn");
    if let Ok(path) = std::env::var("PATH") {
        cmd.env("PATH", path);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let transport = TokioChildProcess::new(cmd).context("starting the server")?;
    ().serve(transport)
        .await
        .map_err(|e| anyhow!("MCP handshake failed: {e}"))
}

/// The whole result of one `tools/call`, as JSON (content, structuredContent, isError).
pub async fn call_raw(session: &Session, tool: &str, args: Value) -> Result<Value> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = session
        .peer()
        .call_tool(params)
        .await
        .map_err(|e| anyhow!("tools/call {tool}: {e}"))?;
    Ok(serde_json::to_value(result)?)
}

/// Call a tool and return its envelope (`structuredContent`), checking that the text block
/// carries the same JSON and that `isError == !ok`.
pub async fn call(session: &Session, tool: &str, args: Value) -> Result<Value> {
    let raw = call_raw(session, tool, args).await?;
    let envelope = raw
        .get("structuredContent")
        .cloned()
        .ok_or_else(|| anyhow!("no structuredContent: {raw}"))?;
    let text = raw
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("no text block: {raw}"))?;
    let from_text: Value = serde_json::from_str(text).context("text block is not JSON")?;
    if from_text != envelope {
        return Err(anyhow!("text block differs from structuredContent"));
    }
    let ok = envelope
        .get("ok")
        .and_then(Value::as_bool)
        .ok_or_else(|| anyhow!("no ok field"))?;
    let is_error = raw.get("isError").and_then(Value::as_bool).unwrap_or(false);
    if is_error == ok {
        return Err(anyhow!("isError ({is_error}) must equal !ok ({ok})"));
    }
    Ok(envelope)
}

/// `{"a": 1, "b": "x"}`: arguments in Python's json.dumps spacing, as the demo prints them.
pub fn python_style(args: &Value) -> String {
    match args {
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), python_style(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items
                    .iter()
                    .map(python_style)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        other => other.to_string(),
    }
}

/// An arguments object from pairs.
pub fn args(pairs: &[(&str, Value)]) -> Value {
    let mut map = Map::new();
    for (k, v) in pairs {
        map.insert(k.to_string(), v.clone());
    }
    Value::Object(map)
}
