//! The guard as a library: a small MCP server of its own, with one tool of its own
//! (`git_log`), whose command runs through the safety core's guard: the operator's registry
//! (a pinned `git` with argument patterns), the replay window, the trust tier, and the
//! terminal's executor (jail, sandbox, tree kill, redaction, audit record). The server
//! builds the guard call; it never spawns anything itself.
//!
//! ```sh
//! cargo run -p safety --example guarded_server -- POLICY.toml
//! ```
//!
//! `POLICY.toml` is a guard policy (docs/guard.md) with an entry named `git`, e.g.:
//!
//! ```toml
//! audit_log = "state/audit.jsonl"
//! [terminal]
//! jail_root = "jail"
//! [[guard.tools]]
//! name = "git"
//! executable = "/usr/bin/git"
//! args_patterns = ["log", "--oneline", "-n", "[0-9]{1,3}"]
//! ```
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "an example: a failure at start-up ends it with the message"
)]

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use safety::guard::GuardCore;
use serde_json::{Map, Value, json};

/// The server: its one tool and the guard it runs it through.
#[derive(Clone)]
struct GitLog {
    guard: Arc<GuardCore>,
}

impl GitLog {
    /// `git_log {count}`: the server's own tool, as the guard's `guard_exec` of the operator's
    /// `git` entry. What runs, and whether, is the guard's decision.
    async fn git_log(&self, count: u64, ctx: &RequestContext<RoleServer>) -> CallToolResult {
        let args = json!({
            "toolName": "git",
            "command": "git",
            "args": ["log", "--oneline", "-n", count.to_string()],
        });
        let envelope = self.guard.guard_exec(args.as_object(), &ctx.ct).await;
        // The guard's answer, reduced to this tool's own: the log, or why not.
        let text = if envelope.ok {
            let replay = if envelope.detail.get("isReplay") == Some(&Value::Bool(true)) {
                " (the same command already ran recently)"
            } else {
                ""
            };
            let log = envelope.detail.get("stdout").and_then(Value::as_str);
            format!("{}{replay}", log.unwrap_or_default())
        } else {
            format!("{}: {}", envelope.code.as_str(), envelope.reason)
        };
        if envelope.ok {
            CallToolResult::success(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    }
}

impl ServerHandler for GitLog {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("guarded-git-log", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let schema: Map<String, Value> = serde_json::from_value(json!({
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 999}},
            "required": ["count"],
            "additionalProperties": false,
        }))
        .unwrap_or_default();
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "git_log",
            "The last `count` commits of the repository, one line each.",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let count = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("count"))
            .and_then(Value::as_u64);
        let result = match (request.name.as_ref(), count) {
            ("git_log", Some(n)) => self.git_log(n, &context).await,
            ("git_log", None) => {
                CallToolResult::error(vec![ContentBlock::text("count must be a whole number")])
            }
            (other, _) => {
                CallToolResult::error(vec![ContentBlock::text(format!("unknown tool '{other}'"))])
            }
        };
        Ok(result.into())
    }
}

fn main() -> std::process::ExitCode {
    // The sandbox launcher mode of this binary: commands start through it.
    if let Some(code) = safety::exec::launcher_main() {
        return code;
    }
    let policy = std::env::args()
        .nth(1)
        .expect("usage: guarded_server POLICY.toml");
    let config = safety::config::load(policy.as_ref(), safety::config::Server::Guard, &[])
        .expect("loading the guard policy");
    let guard = GuardCore::start(config).expect("starting the guard");
    // What the registry and the tier say, before serving (logs go to stderr: stdout is MCP).
    let tier = guard.trust_tier(json!({"toolName": "git"}).as_object());
    eprintln!(
        "guarded_server: tools {:?}; git is {}",
        guard.registry().tool_names(),
        tier.detail.get("tier").cloned().unwrap_or_default()
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the async runtime");
    runtime.block_on(async {
        let service = GitLog {
            guard: Arc::new(guard),
        }
        .serve(rmcp::transport::stdio())
        .await
        .expect("the MCP handshake");
        let _ = service.waiting().await;
    });
    std::process::ExitCode::SUCCESS
}
