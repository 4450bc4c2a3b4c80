//! The files half of `safe-mcp demo`: start `safe-mcp files --config POLICY` as
//! a child process, drive it through the rmcp client, and print each call and its envelope
//! (`>>> tool: NAME  args: {...}`, then the envelope). Self-contained (rmcp, tokio, serde_json, anyhow) so it compiles
//! as a module of the binary or of the library.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};

/// `{"a": 1, "b": "x"}`: arguments printed in Python `json.dumps` spacing, keys in the
/// order given.
fn args_text(args: &[(&str, Value)]) -> String {
    let parts: Vec<String> = args
        .iter()
        .map(|(k, v)| format!("{}: {}", Value::from(*k), v))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Call one tool, print `>>> tool: NAME  args: {...}` and the envelope (pretty, sorted
/// keys), and return the envelope. Checks the MCP mapping on the way: the text block
/// carries the same JSON as `structuredContent`, and `isError == !ok`.
async fn call_and_print(
    session: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &str,
    args: &[(&str, Value)],
) -> Result<Value> {
    let map: Map<String, Value> = args
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map);
    let result = session
        .peer()
        .call_tool(params)
        .await
        .map_err(|e| anyhow!("tools/call {tool}: {e}"))?;
    let envelope = result
        .structured_content
        .clone()
        .ok_or_else(|| anyhow!("{tool}: no structuredContent"))?;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .ok_or_else(|| anyhow!("{tool}: no text block"))?;
    let from_text: Value = serde_json::from_str(&text).context("text block is not JSON")?;
    if from_text != envelope {
        bail!("{tool}: text block differs from structuredContent");
    }
    let ok = envelope.get("ok").and_then(Value::as_bool).unwrap_or(false);
    if result.is_error != Some(!ok) {
        bail!("{tool}: isError {:?} but ok {ok}", result.is_error);
    }
    println!(">>> tool: {tool}  args: {}", args_text(args));
    // serde_json's Map is ordered by key, so this prints sorted keys.
    println!("{}", serde_json::to_string_pretty(&envelope)?);
    println!();
    Ok(envelope)
}

/// Start `bin files --config policy` and run the demo sequence: plan_organize,
/// apply_plan, move_file on the symlink (refused by PROTECTION) and on the installer
/// (moved when named, although the planner held it back by RESTRAINT).
pub async fn run(bin: &Path, policy: &Path, via: &crate::client::Via) -> Result<()> {
    let policy = policy.to_string_lossy();
    let session = crate::client::start(bin, &["files", "--config", &policy], via)
        .await
        .context("starting safe-mcp files")?;
    println!("== files server{} ==\n", crate::demo::over(&session));

    let plan = call_and_print(&session, "plan_organize", &[]).await?;
    let plan_id = plan
        .pointer("/detail/plan_id")
        .cloned()
        .ok_or_else(|| anyhow!("plan_organize returned no plan_id: {plan}"))?;
    call_and_print(&session, "apply_plan", &[("plan_id", plan_id)]).await?;
    call_and_print(
        &session,
        "move_file",
        &[
            ("src", Value::from("link.pdf")),
            ("dest", Value::from("Documents/link.pdf")),
        ],
    )
    .await?;
    call_and_print(
        &session,
        "move_file",
        &[
            ("src", Value::from("setup.exe")),
            ("dest", Value::from("Documents/setup.exe")),
        ],
    )
    .await?;
    session.close().await?;
    Ok(())
}
