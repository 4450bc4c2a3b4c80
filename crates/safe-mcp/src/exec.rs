//! `safe-mcp exec --config FILE --tool NAME [--cwd DIR] [--timeout-ms MS] [--env N=V]... --
//! ARGV...`: one `guard_exec` call from the command line, for servers written in other
//! languages (one `execFile` guards a call). The envelope is printed on stdout as one JSON
//! line; the exit status says how it went, so a caller can branch without parsing:
//!
//! | status | meaning |
//! |---|---|
//! | the command's own (0–255) | it ran (`ok: true`, also with its output cut) |
//! | 128 + N | it ran and signal N ended it |
//! | [`TIMED_OUT`] (124) | it ran past its time limit and its tree was killed |
//! | [`REFUSED`] (125) | refused: `POLICY_DENIED`, `PATH_ESCAPE`, `INVALID_REQUEST`, `BUSY` |
//! | [`NOT_RUN`] (126) | not run: a bad policy, the audit log, the sandbox or the start failed |

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use safety::guard::GuardCore;
use safety::result::{Envelope, ResultCode};

/// Exit status of a command that ran past its time limit (as coreutils `timeout`).
pub const TIMED_OUT: u8 = 124;
/// Exit status of a refused call.
pub const REFUSED: u8 = 125;
/// Exit status of a call that did not run for another reason (start-up, audit, sandbox).
pub const NOT_RUN: u8 = 126;

/// One call as the command line gives it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `--tool`.
    pub tool: String,
    /// `--cwd`.
    pub cwd: Option<String>,
    /// `--timeout-ms`.
    pub timeout_ms: Option<u64>,
    /// `--env NAME=VALUE`, each.
    pub env: Vec<String>,
    /// The program and its arguments.
    pub argv: Vec<String>,
}

/// The `guard_exec` arguments of a request; `Err` names a malformed `--env`.
pub fn arguments(request: &Request) -> Result<Map<String, Value>, String> {
    let mut env = Map::new();
    for pair in &request.env {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(format!("--env '{pair}' is not NAME=VALUE"));
        };
        env.insert(name.to_string(), Value::from(value));
    }
    let (program, args) = match request.argv.split_first() {
        Some((p, rest)) => (p.clone(), rest.to_vec()),
        None => return Err("no command after --".into()),
    };
    let mut map = Map::new();
    map.insert("toolName".into(), json!(request.tool));
    map.insert("command".into(), json!(program));
    map.insert("args".into(), json!(args));
    if let Some(cwd) = &request.cwd {
        map.insert("cwd".into(), json!(cwd));
    }
    if let Some(ms) = request.timeout_ms {
        map.insert("timeoutMs".into(), json!(ms));
    }
    if !env.is_empty() {
        map.insert("env".into(), Value::Object(env));
    }
    Ok(map)
}

/// The exit status for an envelope (see the module documentation).
pub fn exit_status(envelope: &Envelope) -> u8 {
    if envelope.ok {
        if let Some(code) = envelope.detail.get("exitCode").and_then(Value::as_i64) {
            return u8::try_from(code).unwrap_or(NOT_RUN);
        }
        if let Some(signal) = envelope.detail.get("signal").and_then(Value::as_i64) {
            return u8::try_from(128 + signal).unwrap_or(255);
        }
        return 0;
    }
    match envelope.code {
        ResultCode::Timeout => TIMED_OUT,
        ResultCode::PolicyDenied
        | ResultCode::PathEscape
        | ResultCode::InvalidRequest
        | ResultCode::Busy => REFUSED,
        _ => NOT_RUN,
    }
}

/// Run the call, print its envelope, return the exit status.
pub async fn run(core: &GuardCore, request: Request) -> u8 {
    let args = match arguments(&request) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return REFUSED;
        }
    };
    let envelope = core
        .guard_exec(Some(&args), &CancellationToken::new())
        .await;
    println!("{}", envelope.to_value());
    exit_status(&envelope)
}
