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

/// How a client reaches a server it starts.
#[derive(Debug, Clone)]
pub enum Via {
    /// The server's stdin and stdout.
    Stdio,
    /// `--transport http` on a loopback port the kernel picks, with this caller's token.
    Http {
        /// The bearer token.
        token: String,
    },
}

/// A session with a server this process started, over stdio or HTTP.
pub struct Served {
    session: Session,
    /// The HTTP server's process (a stdio server is the session's own child).
    process: Option<tokio::process::Child>,
    /// The HTTP endpoint.
    url: Option<String>,
}

impl std::ops::Deref for Served {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl Served {
    /// The HTTP endpoint, when the server speaks HTTP.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// End the session; an HTTP server is stopped with SIGTERM (it drains and closes its
    /// audit log with the closing checkpoint) and waited for.
    pub async fn close(self) -> Result<()> {
        self.session.cancel().await.ok();
        if let Some(mut child) = self.process {
            let pid = (child.id())
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw);
            if let Some(pid) = pid {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
            let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
                .await
                .context("the HTTP server did not stop within 30 s of SIGTERM")??;
            if !status.success() {
                return Err(anyhow!("the HTTP server ended with {status}"));
            }
        }
        Ok(())
    }
}

/// Start `bin ARGS...` (a server subcommand and its `--config`) and connect to it `via`
/// stdio or HTTP. Over HTTP the server's log goes to this process's stderr, from the line
/// that names its URL on.
pub async fn start(bin: &Path, args: &[&str], via: &Via) -> Result<Served> {
    let token = match via {
        Via::Stdio => {
            return Ok(Served {
                session: connect(bin, args, &[]).await?,
                process: None,
                url: None,
            });
        }
        Via::Http { token } => token,
    };
    use tokio::io::AsyncBufReadExt;
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args)
        .args(["--transport", "http", "--listen", "127.0.0.1:0"])
        .env_clear()
        .env("SAFE_MCP_LOG", "warn,safe_mcp::http=info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Ok(path) = std::env::var("PATH") {
        cmd.env("PATH", path);
    }
    let mut child = cmd.spawn().context("starting the HTTP server")?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| anyhow!("no stderr pipe"))?;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let url = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .context("the HTTP server did not say where it listens within 30 s")??
            .ok_or_else(|| anyhow!("the HTTP server ended before it listened"))?;
        eprintln!("{line}");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split(' ').next().unwrap_or_default().to_string();
        }
    };
    // The rest of its log, as it comes.
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("{line}");
        }
    });
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.clone(),
        )
        .auth_header(token.clone());
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    let session = ()
        .serve(transport)
        .await
        .map_err(|e| anyhow!("MCP handshake over HTTP failed: {e}"))?;
    Ok(Served {
        session,
        process: Some(child),
        url: Some(url),
    })
}
