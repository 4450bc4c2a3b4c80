//! MCP wiring of the terminal server. No rule lives here: arguments go to
//! [`safety::terminal::TerminalCore`] untouched and the envelope it returns goes back as
//! `structuredContent` plus the same JSON as a text block, with `isError == !ok`.
#![forbid(unsafe_code)]

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use safety::result::Envelope;
use safety::terminal::{EXPLAIN_COMMAND, RUN_COMMAND, TerminalCore};

/// The schemas of a tool, from the core: its input and its output (the envelope with the
/// tool's own detail).
fn schemas(tool: &str) -> (Arc<JsonObject>, Arc<JsonObject>) {
    let input = safety::terminal::input_schema(tool).unwrap_or_default();
    let output = safety::terminal::output_schema(tool).unwrap_or_default();
    (Arc::new(input), Arc::new(output))
}

/// The tool list: names, descriptions, schemas and annotations.
pub fn tools() -> Vec<Tool> {
    let (run_input, run_output) = schemas(RUN_COMMAND);
    let (explain_input, explain_output) = schemas(EXPLAIN_COMMAND);
    vec![
        Tool::new(
            RUN_COMMAND,
            "Run one allow-listed command inside the jail, without a shell, with a scrubbed \
             environment, a timeout and an output cap. Returns the result envelope: ok, code, \
             reason, detail {exit_code, stdout, stderr}. A non-zero exit is still ok:true.",
            run_input,
        )
        .with_raw_output_schema(run_output)
        .with_annotations(
            ToolAnnotations::with_title("Run a command")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        ),
        Tool::new(
            EXPLAIN_COMMAND,
            "Dry run: parse and judge a command exactly as run_command would, and say whether \
             it would run, which rule decided, the executable, limits and profile. Runs nothing.",
            explain_input,
        )
        .with_raw_output_schema(explain_output)
        .with_annotations(
            ToolAnnotations::with_title("Explain a command")
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
    ]
}

/// Convert an envelope into the MCP result: structured content, the same JSON as text,
/// `isError` exactly when `ok` is false.
pub fn to_call_result(envelope: Envelope) -> CallToolResult {
    let ok = envelope.ok;
    // One text block with the same JSON (structured() adds it).
    let value = envelope.into_value();
    if ok {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

/// The terminal MCP server.
#[derive(Clone)]
pub struct TerminalServer {
    core: Arc<TerminalCore>,
    tools: Vec<Tool>,
}

impl TerminalServer {
    /// Wrap a started core.
    pub fn new(core: TerminalCore) -> Self {
        TerminalServer {
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
        match request.name.as_ref() {
            RUN_COMMAND => self.core.run_command(args, &ctx.ct).await,
            EXPLAIN_COMMAND => self.core.explain_command(args),
            other => self.core.unknown_tool(other),
        }
    }
}

impl ServerHandler for TerminalServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "safe-mcp-terminal",
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

impl TerminalServer {
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
pub async fn serve_stdio(core: TerminalCore) -> Result<(), ServeError> {
    // Every line from the client is judged by the safety core's framing front first: a
    // malformed one gets its JSON-RPC error there (the SDK would ignore it silently).
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (reader, writer, flushed) = safety::protocol::guard(stdin, stdout);
    let service = match TerminalServer::new(core).serve((reader, writer)).await {
        Ok(service) => service,
        // The client closed stdin before the handshake: nothing to serve, a clean exit.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(why)) => {
            tracing::info!("client closed the connection before initialize ({why})");
            return Ok(());
        }
        Err(e) => return Err(ServeError(e.to_string())),
    };
    let stopped = service.waiting().await;
    // The last answers may still be on their way to stdout.
    flushed.wait().await;
    stopped.map_err(|e| ServeError(e.to_string()))?;
    Ok(())
}
