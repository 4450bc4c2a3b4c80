//! MCP wiring of the guard server (`safe-mcp guard --config FILE`): the eight tools of
//! mcp-stdio-shellguard under their names and argument names. No rule lives here:
//! arguments go to [`safety::guard::GuardCore`] untouched, and the envelope it returns goes
//! back as `structuredContent` plus the same JSON as a text block, with `isError == !ok`.
//! `clippy.toml` forbids this crate the file system and processes.
//!
//! Annotations (hints for clients; see docs/guard.md):
//! - `guard_exec`, `guard_spawn`: not read-only, destructive (the program may change files
//!   in the jail), not idempotent, closed world.
//! - `register_allowlist`: not read-only (it adds an entry), not destructive (it can only
//!   narrow), not idempotent (a second registration of a name is refused).
//! - `replay_check`: not read-only, because `record: true` writes the window (without it,
//!   it only looks), not destructive, not idempotent.
//! - `audit_source`, `audit_report`, `sandbox_status`, `trust_tier`: read-only, idempotent.
#![forbid(unsafe_code)]

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use safety::guard::audit::{AUDIT_REPORT, AUDIT_SOURCE};
use safety::guard::core::{
    GUARD_EXEC, GUARD_SPAWN, REGISTER_ALLOWLIST, REPLAY_CHECK, SANDBOX_STATUS, TRUST_TIER,
};
use safety::guard::{GuardCore, TOOLS};
use safety::result::Envelope;

/// One tool's description and annotations: (title, read-only, destructive, idempotent).
fn describe(tool: &str) -> (&'static str, &'static str, bool, bool, bool) {
    match tool {
        GUARD_EXEC => (
            "Run a registered tool's program by name, without a shell, in the jail and the \
             kernel sandbox, with a scrubbed environment, a timeout and an output cap. Every \
             argument must match the tool's patterns. Returns the envelope: ok, code, reason, \
             detail {stdout, stderr, exitCode, durationMs, trustTier, canonicalHash, isReplay, \
             signal}. A non-zero exit is still ok:true.",
            "Run a registered tool",
            false,
            true,
            false,
        ),
        GUARD_SPAWN => (
            "As guard_exec, but the answer holds the SHA-256 of each output stream instead of \
             its text (stdoutHash, stderrHash), the pid and the effective fdBudget (the \
             command's RLIMIT_NOFILE, which a call may lower). shell: true is refused.",
            "Run a registered tool, hash its output",
            false,
            true,
            false,
        ),
        REGISTER_ALLOWLIST => (
            "Add a run-time tool that narrows an operator entry: its executable must be one the \
             operator listed, a call must pass its patterns and the operator entry's, its \
             profile is the same or stricter. It lives until the server stops.",
            "Register a narrower tool",
            false,
            false,
            false,
        ),
        AUDIT_SOURCE => (
            "Scan source code beneath the scan root for shell-injection patterns (exec with \
             built strings, shell: true, eval, ...). Returns findings with their fixes and a \
             summary.",
            "Scan source code",
            true,
            false,
            true,
        ),
        AUDIT_REPORT => (
            "Render a scan result (audit_source's detail, or its findings array) as markdown, \
             json or sarif.",
            "Render a scan report",
            true,
            false,
            true,
        ),
        REPLAY_CHECK => (
            "The canonical hash of a command and whether it ran recently (is in the replay \
             window). Only looks, unless record is true: then the hash is recorded.",
            "Check for a replay",
            false,
            false,
            false,
        ),
        SANDBOX_STATUS => (
            "The sandbox profile of a tool (or the default one), its concrete limits and the \
             kernel mechanisms active on this host.",
            "Sandbox status",
            true,
            false,
            true,
        ),
        _ => (
            "How far a tool can be trusted, from the real state: LOW (not registered), MEDIUM \
             (arguments not limited), HIGH (a weaker sandbox, a permissive profile or no \
             replay window), CRITICAL; with reasons and hints.",
            "Trust tier",
            true,
            false,
            true,
        ),
    }
}

/// The tool list: names, descriptions, schemas and annotations.
pub fn tools() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|&name| {
            let (description, title, read_only, destructive, idempotent) = describe(name);
            let input: JsonObject = safety::guard::core::input_schema(name).unwrap_or_default();
            let output: JsonObject = safety::guard::core::output_schema(name).unwrap_or_default();
            Tool::new(name, description, Arc::new(input))
                .with_raw_output_schema(Arc::new(output))
                .with_annotations(
                    ToolAnnotations::with_title(title)
                        .read_only(read_only)
                        .destructive(destructive)
                        .idempotent(idempotent)
                        .open_world(false),
                )
        })
        .collect()
}

/// Convert an envelope into the MCP result: structured content, the same JSON as text,
/// `isError` exactly when `ok` is false.
pub fn to_call_result(envelope: Envelope) -> CallToolResult {
    let ok = envelope.ok;
    let value = envelope.into_value();
    if ok {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

/// The guard MCP server.
#[derive(Clone)]
pub struct GuardServer {
    core: Arc<GuardCore>,
    tools: Vec<Tool>,
}

impl GuardServer {
    /// Wrap a started core.
    pub fn new(core: GuardCore) -> Self {
        GuardServer {
            core: Arc::new(core),
            tools: tools(),
        }
    }

    async fn dispatch(
        &self,
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Envelope {
        let args = request.arguments.as_ref();
        let core = &self.core;
        match request.name.as_ref() {
            GUARD_EXEC => core.guard_exec(args, &ctx.ct).await,
            GUARD_SPAWN => core.guard_spawn(args, &ctx.ct).await,
            REGISTER_ALLOWLIST => core.register_allowlist(args),
            REPLAY_CHECK => core.replay_check(args).await,
            SANDBOX_STATUS => core.sandbox_status(args),
            TRUST_TIER => core.trust_tier(args),
            // A scan reads and parses files: off the runtime's thread.
            AUDIT_SOURCE | AUDIT_REPORT => {
                let scanner = core.clone();
                let name = request.name.to_string();
                let args = request.arguments.clone();
                let scanned = tokio::task::spawn_blocking(move || match name.as_str() {
                    AUDIT_SOURCE => scanner.audit_source(args.as_ref()),
                    _ => scanner.audit_report(args.as_ref()),
                })
                .await;
                match scanned {
                    Ok(envelope) => envelope,
                    Err(e) => core.internal_error(request.name.as_ref(), &e.to_string()),
                }
            }
            other => core.unknown_tool(other),
        }
    }
}

impl ServerHandler for GuardServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "safe-mcp-guard",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.core.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // An HTTP caller sees the tools it may call.
        let caller = caller_of(&context);
        let tools = (self.tools.iter())
            .filter(|t| safety::callers::may_use(caller.as_ref(), &t.name))
            .cloned()
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let refuse = |refusal| {
            self.core
                .refused(&request.name, request.arguments.as_ref(), refusal)
        };
        let call = self.dispatch(&request, &context);
        let envelope =
            safety::callers::run_as(caller_of(&context), &request.name, call, refuse).await;
        tracing::debug!(tool = %envelope.action, code = envelope.code.as_str(), ms = envelope.duration_ms, "call");
        Ok(to_call_result(envelope).into())
    }
}

impl GuardServer {
    /// Record a request the HTTP front refused before any tool saw it.
    pub fn record_http_refusal(&self, refusal: &safety::callers::HttpRefusal) {
        self.core.record_http_refusal(refusal);
    }
}

/// The caller an HTTP request was authenticated as (none over stdio).
fn caller_of(context: &RequestContext<RoleServer>) -> Option<safety::callers::Caller> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    parts.extensions.get::<safety::callers::Caller>().cloned()
}

/// Errors while serving.
#[derive(Debug)]
pub struct ServeError(pub String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

/// Serve MCP over stdin/stdout until the client closes the stream.
pub async fn serve_stdio(core: GuardCore) -> Result<(), ServeError> {
    // Every line from the client is judged by the safety core's framing front first.
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (reader, writer, flushed) = safety::protocol::guard(stdin, stdout);
    let service = match GuardServer::new(core).serve((reader, writer)).await {
        Ok(service) => service,
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(why)) => {
            tracing::info!("client closed the connection before initialize ({why})");
            return Ok(());
        }
        Err(e) => return Err(ServeError(e.to_string())),
    };
    let stopped = service.waiting().await;
    flushed.wait().await;
    stopped.map_err(|e| ServeError(e.to_string()))?;
    Ok(())
}
