//! MCP wiring of the safe-mcp files server (`safe-mcp files --config FILE`).
//!
//! No rule lives here. This crate lists the six tools with their schemas and
//! annotations, hands each call's name and raw arguments to
//! [`safety::organizer::Organizer::dispatch`] on a blocking thread, forwards `apply_plan`
//! progress as MCP progress notifications, and returns the envelope as
//! `structuredContent` (described by `outputSchema`) plus the same JSON as one text
//! block, with `isError` exactly when `ok` is false. `clippy.toml` forbids this crate
//! the file system and processes, so it cannot reach around the core.
//!
//! Annotations (hints for clients; see docs/files.md):
//! - `list_files`, `plan_organize`: read-only (a plan changes nothing in the workspace).
//! - `apply_plan`, `move_file`, `undo_last_action`, `redo_last_action`: not read-only,
//!   **not destructive** (nothing is ever deleted or overwritten, and every move can be
//!   undone), **not idempotent** (each call is a new entry in the undo history; a repeat
//!   is refused or acts on a different action, so clients must not retry them blindly),
//!   closed world (only the workspace).
#![forbid(unsafe_code)]

use std::sync::Arc;

use rmcp::model::CallToolResponse;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use safety::config::Config;
use safety::organizer::{Organizer, input_schema, output_schema};
use safety::result::{Envelope, ResultCode};

/// What the server tells the model when it connects.
pub const INSTRUCTIONS: &str = "Organises files inside one workspace folder. It never deletes and never overwrites. \
Use list_files to look, plan_organize to get a proposal (it changes nothing) and apply_plan with its plan_id \
to carry it out (all or nothing; a plan id works once). move_file moves one named entry to a full destination \
path. undo_last_action and redo_last_action step through whole actions. The planner leaves dotfiles, installers, \
folders and uncategorised files alone (NEEDS_EXPLICIT_REQUEST): name them with move_file if the user wants them \
moved. Symlinks, devices, pipes and names with control or bidirectional characters are never moved \
(POLICY_DENIED), and paths outside the workspace are PATH_ESCAPE. Every result is an envelope \
{ok, code, action, reason, detail, duration_ms}.";

/// The server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum FilesServeError {
    /// The organiser could not open its workspace, journal or audit log.
    #[error("{0}")]
    Start(#[from] safety::organizer::OrganizerError),
    /// The MCP session failed.
    #[error("MCP session: {0}")]
    Session(String),
}

/// The files server: the organiser behind the MCP tool surface.
#[derive(Clone)]
pub struct FilesServer {
    organizer: Arc<Organizer>,
}

/// One tool, its input and output schemas from the core.
fn tool(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    read_only: bool,
) -> Tool {
    let input = Arc::new(input_schema(name).unwrap_or_default());
    let output = Arc::new(output_schema(name).unwrap_or_default());
    let annotations = ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(false)
        .idempotent(read_only)
        .open_world(false);
    Tool::new(name, description, input)
        .with_title(title)
        .with_raw_output_schema(output)
        .with_annotations(annotations)
}

/// The six tools, with input and output schemas and annotations.
pub fn tools() -> Vec<Tool> {
    vec![
        tool(
            "list_files",
            "List files",
            "Read-only. Lists the top level of the workspace (or of subdir): name, size, kind, category, \
             whether the organiser would move it and why not. Bounded by max_list_entries; never enters .git \
             or node_modules.",
            true,
        ),
        tool(
            "plan_organize",
            "Plan organising",
            "Proposes moves of top-level files into category folders and lists what it skips and why. Changes \
             nothing, not even folders. Returns a single-use plan_id.",
            true,
        ),
        tool(
            "apply_plan",
            "Apply a plan",
            "Carries out a plan from plan_organize. Every file is re-checked first (type, size, mtime, inode, \
             source present, destination free); if anything changed the whole plan is refused and nothing \
             moves. A plan id works once. Sends progress notifications when a progress token is given.",
            false,
        ),
        tool(
            "move_file",
            "Move one file",
            "Moves one named entry to dest, a full destination path (not a folder); missing parent folders \
             inside the workspace are created. An existing destination is refused, never overwritten. \
             Symlinks and special files are never moved.",
            false,
        ),
        tool(
            "undo_last_action",
            "Undo last action",
            "Reverts the most recent move or applied plan as one action. Refused whole if any original place \
             is taken or a file was replaced since; nothing is overwritten.",
            false,
        ),
        tool(
            "redo_last_action",
            "Redo last action",
            "Re-applies the most recently undone action, with the same checks as undo. New work clears the \
             redo stack.",
            false,
        ),
    ]
}

/// The MCP result for an envelope: structured content, the same JSON as text, and
/// `isError` exactly when `ok` is false.
pub fn envelope_result(envelope: Envelope) -> CallToolResult {
    let ok = envelope.ok;
    let value = envelope.into_value();
    if ok {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

impl FilesServer {
    /// Wrap an opened organiser.
    pub fn new(organizer: Organizer) -> Self {
        FilesServer {
            organizer: Arc::new(organizer),
        }
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
        caller: Option<safety::callers::Caller>,
    ) -> Envelope {
        let name = request.name.to_string();
        let args = request.arguments;
        let organizer = self.organizer.clone();
        let token = if name == "apply_plan" {
            ctx.meta.get_progress_token()
        } else {
            None
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, u64)>();
        let forward = token.map(|token| {
            let peer = ctx.peer.clone();
            tokio::spawn(async move {
                while let Some((done, total)) = rx.recv().await {
                    let param = ProgressNotificationParam::new(token.clone(), done as f64)
                        .with_total(total as f64)
                        .with_message(format!("moved {done} of {total}"));
                    if let Err(e) = peer.notify_progress(param).await {
                        tracing::debug!("progress notification not sent: {e}");
                    }
                }
            })
        });
        let tool = name.clone();
        let work = tokio::task::spawn_blocking(move || {
            let progress = |done: u64, total: u64| {
                let _ = tx.send((done, total));
            };
            // The blocking thread runs the call as the caller's (its records name it).
            safety::callers::on_thread(caller, || {
                organizer.dispatch(&tool, args.as_ref(), &progress)
            })
        });
        let envelope = match work.await {
            Ok(envelope) => envelope,
            Err(e) => {
                tracing::error!("tool {name} panicked: {e}");
                Envelope::new(
                    &name,
                    ResultCode::InternalError,
                    "the tool failed unexpectedly; nothing more was done",
                )
            }
        };
        // Progress notifications go out before the result.
        if let Some(forward) = forward {
            let _ = forward.await;
        }
        envelope
    }
}

impl ServerHandler for FilesServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "safe-mcp-files",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // An HTTP caller sees the tools it may call.
        let caller = caller_of(&context);
        let mut tools = tools();
        tools.retain(|t| safety::callers::may_use(caller.as_ref(), &t.name));
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = caller_of(&context);
        let organizer = self.organizer.clone();
        let name = request.name.to_string();
        let args = request.arguments.clone();
        let refuse = |refusal| organizer.refused(&name, args.as_ref(), refusal);
        let call = self.call(request, context, caller.clone());
        let envelope = safety::callers::run_as(caller, &name, call, refuse).await;
        Ok(envelope_result(envelope).into())
    }
}

impl FilesServer {
    /// Record a request the HTTP front refused before any tool saw it.
    pub fn record_http_refusal(&self, refusal: &safety::callers::HttpRefusal) {
        self.organizer.record_http_refusal(refusal);
    }
}

/// The caller an HTTP request was authenticated as (none over stdio).
fn caller_of(context: &RequestContext<RoleServer>) -> Option<safety::callers::Caller> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    parts.extensions.get::<safety::callers::Caller>().cloned()
}

/// Open the organiser for `config` (recovering an interrupted step) and serve MCP over
/// stdin/stdout until stdin closes. Logs go to stderr only.
pub async fn serve_stdio(config: Config) -> Result<(), FilesServeError> {
    let organizer = tokio::task::spawn_blocking(move || Organizer::open(&config))
        .await
        .map_err(|e| FilesServeError::Session(format!("start-up task failed: {e}")))??;
    tracing::info!(
        "files server ready on {}",
        organizer.workspace_root().display()
    );
    // Every line from the client is judged by the safety core's framing front first: a
    // malformed one gets its JSON-RPC error there (the SDK would ignore it silently).
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (reader, writer, flushed) = safety::protocol::guard(stdin, stdout);
    let running = match FilesServer::new(organizer).serve((reader, writer)).await {
        Ok(running) => running,
        // The client closed stdin before the handshake: nothing to serve, a clean exit
        // (as the terminal server does).
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(why)) => {
            tracing::info!("client closed the connection before initialize ({why})");
            return Ok(());
        }
        Err(e) => return Err(FilesServeError::Session(e.to_string())),
    };
    let stopped = running.waiting().await;
    // The last answers may still be on their way to stdout.
    flushed.wait().await;
    stopped.map_err(|e| FilesServeError::Session(e.to_string()))?;
    Ok(())
}
