//! A minimal MCP stdio client for the benchmarks: one JSON-RPC line out, one line back, on
//! blocking pipes. It measures the server's round trip without the `rmcp` client's own task
//! hand-offs and untagged-enum decoding, which on a 2-vCPU VM cost more than the server's
//! work does. The end-to-end tests and the demo use the real `rmcp` client
//! (`safe_mcp::client`); the benchmarks print figures from both.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{Context, Result, anyhow, ensure};
use serde_json::{Value, json};

/// A server started as a child process, spoken to line by line.
pub(crate) struct LineClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl LineClient {
    /// Start `bin ARGS...` with exactly `env` (plus `PATH`) and complete the MCP handshake.
    /// The server logs at its default level, as it would for a user; its stderr is
    /// discarded so the bench's output stays readable.
    pub(crate) fn start(bin: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<LineClient> {
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Ok(path) = std::env::var("PATH") {
            cmd.env("PATH", path);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().context("starting the server")?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut client = LineClient {
            child,
            stdin: Some(stdin),
            stdout,
            next_id: 0,
            line: String::new(),
        };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "safe-mcp-bench", "version": env!("CARGO_PKG_VERSION") }
            }),
        )?;
        ensure!(
            init.get("serverInfo").is_some(),
            "no serverInfo in the initialize result: {init}"
        );
        client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(client)
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        let stdin = self.stdin.as_mut().context("stdin already closed")?;
        stdin.write_all(&bytes)?;
        stdin.flush()?;
        Ok(())
    }

    /// One request; returns its `result` (an error response is an error).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            self.line.clear();
            let n = self.stdout.read_line(&mut self.line)?;
            ensure!(
                n > 0,
                "the server closed its output (its stderr is discarded here: start it by hand to see why)"
            );
            let mut message: Value = serde_json::from_str(&self.line)
                .with_context(|| format!("not JSON: {}", self.line.trim_end()))?;
            if message.get("id") != Some(&json!(id)) {
                continue; // a notification (or a stale reply): not ours
            }
            if let Some(error) = message.get("error") {
                return Err(anyhow!("{method}: {error}"));
            }
            return message
                .get_mut("result")
                .map(Value::take)
                .ok_or_else(|| anyhow!("{method}: a reply with neither result nor error"));
        }
    }

    /// `tools/call`; returns the envelope (`structuredContent`), checking `isError == !ok`.
    pub(crate) fn call(&mut self, tool: &str, arguments: &Value) -> Result<Value> {
        let mut result = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )?;
        let envelope = result
            .get_mut("structuredContent")
            .map(Value::take)
            .ok_or_else(|| anyhow!("no structuredContent"))?;
        let ok = envelope.get("ok").and_then(Value::as_bool);
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        ensure!(ok == Some(!is_error), "isError must equal !ok: {envelope}");
        Ok(envelope)
    }
}

impl Drop for LineClient {
    fn drop(&mut self) {
        // Closing stdin ends a stdio server; give it a moment, then make sure.
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
