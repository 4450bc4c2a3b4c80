//! `safe-mcp`: one binary, thin; every subcommand dispatches to a crate of its own.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use safety::config::{self, Server};
use safety::protocol::count;

/// jemalloc instead of the system allocator: a scan builds and frees a syntax tree per file on
/// every thread (docs/dependencies.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// MCP servers that let an AI model run commands and organise files without being able to
/// hurt the person who runs them, and a scanner for the shell-injection patterns that make
/// other MCP servers dangerous.
#[derive(Parser)]
#[command(name = "safe-mcp", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the terminal MCP server (stdio, or --transport http): runs allow-listed commands without a shell.
    Terminal {
        /// Policy file (TOML). Wins over SAFE_MCP_POLICY_FILE; with neither, start-up fails.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        transport: TransportArgs,
    },
    /// Serve the files MCP server (stdio, or --transport http): organises one workspace; never deletes, never overwrites.
    Files {
        /// Policy file (TOML). Wins over SAFE_MCP_POLICY_FILE; with neither, start-up fails.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        transport: TransportArgs,
    },
    /// Serve the guard MCP server (stdio, or --transport http): mcp-stdio-shellguard's eight tools over the operator's registry.
    Guard {
        /// Policy file (TOML). Wins over SAFE_MCP_POLICY_FILE; with neither, start-up fails.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        transport: TransportArgs,
    },
    /// Make a bearer token for an HTTP caller: the token on the first line (give it to the caller; it is not kept), then the [[caller]] entry for [http] tokens_file, which holds only its SHA-256.
    Token {
        /// The caller's name, as every audit record of its calls will carry it (1 to 64 of A-Z a-z 0-9 . _ @ -).
        #[arg(long)]
        name: String,
    },
    /// Run one command through the guard (as guard_exec) and print its envelope. Exit status: the command's (128+N for signal N), 124 timeout, 125 refused, 126 not run (start-up, audit or sandbox failure).
    Exec {
        /// Policy file (TOML). Wins over SAFE_MCP_POLICY_FILE; with neither, start-up fails.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The registered tool to run.
        #[arg(long, value_name = "NAME")]
        tool: String,
        /// Working folder, relative to the jail.
        #[arg(long, value_name = "DIR")]
        cwd: Option<String>,
        /// Lower the time limit (milliseconds).
        #[arg(long, value_name = "MS")]
        timeout_ms: Option<u64>,
        /// A variable for the command (the tool's env_allow must list it); repeatable.
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// The program (its path or file name) and its arguments.
        #[arg(last = true, required = true, value_name = "ARGV")]
        argv: Vec<String>,
    },
    /// Answer one agent hook event read on stdin (Claude Code or Codex PreToolUse/PostToolUse) with the policy: exit 0 answered, 2 refused (never 1).
    Hook {
        /// The agent whose format the event and the answer are in.
        #[arg(value_enum)]
        agent: HookAgent,
        /// Policy file (TOML). Wins over SAFE_MCP_POLICY_FILE; with neither, the call is refused.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Show what the agent hooks decide for one command: exit 0 allowed, 1 denied, 2 error.
    Check {
        /// Policy file (TOML). Wins over SAFE_MCP_POLICY_FILE.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print the decision as one JSON object.
        #[arg(long)]
        json: bool,
        /// The folder the command would run in (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The command: one string as the agent's shell tool gets it ('git push -f'), or its words after `--`.
        #[arg(
            required = true,
            value_name = "COMMAND",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        command: Vec<String>,
    },
    /// Check an audit log's hash chain.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Build a throw-away sandbox, drive the servers through a real MCP client, print every envelope.
    Demo {
        /// Keep the sandbox folder instead of deleting it.
        #[arg(long)]
        keep: bool,
        /// Reach every server over loopback Streamable HTTP, with two callers, instead of stdio.
        #[arg(long)]
        http: bool,
    },
    /// Scan MCP server source code for shell-injection patterns.
    Scan(scan::cli::ScanArgs),
}

/// How a server is reached.
#[derive(clap::Args)]
struct TransportArgs {
    /// `stdio` (the default: the client that started the server) or `http` (Streamable HTTP for named callers, [http] in the policy).
    #[arg(long, value_enum, default_value = "stdio")]
    transport: Transport,
    /// With --transport http: the address and port to listen on (port 0: any free one, named in the log).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:8080")]
    listen: std::net::SocketAddr,
    /// With --transport http: the TLS certificate chain (PEM). Required for an address other than loopback, unless --behind-proxy.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// With --transport http: the TLS private key (PEM, mode 0600).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// With --transport http: listen without TLS on an address other than loopback, for a reverse proxy on this host that terminates TLS (docs/http.md).
    #[arg(long)]
    behind_proxy: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Transport {
    /// Standard input and output.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl TransportArgs {
    /// The HTTP options, or `None` for stdio.
    fn http(&self) -> Option<safe_mcp::http::Options> {
        (self.transport == Transport::Http).then(|| safe_mcp::http::Options {
            listen: self.listen,
            tls: self.tls_cert.clone().zip(self.tls_key.clone()),
            behind_proxy: self.behind_proxy,
        })
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum HookAgent {
    /// Claude Code's hook format.
    ClaudeCode,
    /// OpenAI Codex's hook format.
    Codex,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Verify FILE and the rotated files its chain names (FILE.1, FILE.2, ...) as one chain: exit 0 and `ok: N records` when intact, 1 naming the first broken record, 2 when unreadable.
    Verify {
        /// The audit log (JSONL).
        file: PathBuf,
        /// A verifier key (`safe-mcp audit keygen` wrote it to OUT.pub): every checkpoint must be signed by it and name the chain before it; prints which records the checkpoints cover.
        #[arg(long, value_name = "PUB")]
        key: Option<PathBuf>,
        /// With --key: exit 1 when the last records are not covered by a checkpoint (for a log whose writers have stopped: a live log always has a few).
        #[arg(long, requires = "key")]
        require_covered: bool,
    },
    /// Make an Ed25519 key pair for signed checkpoints: the signer key to OUT (mode 0600, for `audit_checkpoint_key`, kept outside every root) and the verifier key to OUT.pub (for `audit verify --key`). Never overwrites a file.
    Keygen {
        /// The key's name, also the checkpoints' origin (no spaces or '+'), e.g. `host-1.example/safe-mcp`.
        #[arg(long)]
        name: String,
        /// Where the signer key goes; the verifier key goes to the same path with `.pub` added.
        #[arg(long, value_name = "OUT")]
        out: PathBuf,
    },
}

/// Our own messages at `info`; the MCP SDK's only from `warn` up: at `info` it keeps a span
/// open around every request and logs each session's handshake (with the client's whole
/// `initialize` parameters), work on every call that tells an operator nothing the audit log
/// does not. `SAFE_MCP_LOG` replaces the whole filter.
const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn";

fn init_logging() {
    init_logging_at(DEFAULT_LOG_FILTER);
}

/// Logging with `default` as the filter when `SAFE_MCP_LOG` is not set (the hooks: `warn`,
/// since an agent shows their stderr to the model).
fn init_logging_at(default: &str) {
    // stdout is the protocol channel: logs go to stderr only.
    let filter = tracing_subscriber::EnvFilter::try_from_env("SAFE_MCP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(false)
        .init();
}

fn fatal(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("fatal: {message}");
    ExitCode::from(1)
}

fn env_pairs() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

fn load(flag: Option<PathBuf>, server: Server) -> Result<config::Config, config::ConfigError> {
    let env = env_pairs();
    let from_env = env
        .iter()
        .find(|(k, _)| k == "SAFE_MCP_POLICY_FILE")
        .map(|(_, v)| v.as_str());
    let file = config::choose_policy_file(flag.as_deref(), from_env)?;
    config::load(&file, server, &env)
}

/// The multi-threaded runtime (files server, demo).
fn runtime() -> tokio::runtime::Runtime {
    build_runtime(tokio::runtime::Builder::new_multi_thread())
}

/// One thread for the terminal server: a request is read, judged and answered without a
/// hand-off between threads (the blocking parts, fsync and spawn, take well under a
/// millisecond, and the syncer and child processes run beside it).
fn single_thread_runtime() -> tokio::runtime::Runtime {
    build_runtime(tokio::runtime::Builder::new_current_thread())
}

fn build_runtime(mut builder: tokio::runtime::Builder) -> tokio::runtime::Runtime {
    match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fatal: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    }
}

/// The callers of `[http] tokens_file`. A `tools` subset may name the tools of every
/// server (one file can serve a host's servers); a name no server has is an error.
fn load_callers(
    config: &config::Config,
    options: &safe_mcp::http::Options,
) -> Result<safety::callers::Callers, String> {
    // The TLS key is a secret the policy does not name: it too must lie outside every root.
    if let Some((cert, key)) = &options.tls {
        config.outside_every_root("--tls-key", key)?;
        config.outside_every_root("--tls-cert", cert)?;
    }
    let tools = [terminal::tools(), files::tools(), guard::tools()].concat();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    safety::callers::Callers::load(&config.http, &names).map_err(|e| e.to_string())
}

/// Serve over HTTP on the multi-threaded runtime (callers run side by side) until SIGTERM
/// or SIGINT; the server (and with it the core, which writes the closing checkpoint) is
/// dropped before this returns.
fn serve_http<S>(
    server: S,
    settings: config::HttpSettings,
    callers: safety::callers::Callers,
    record: safe_mcp::http::RefusalSink,
    options: safe_mcp::http::Options,
    name: &str,
) -> ExitCode
where
    S: rmcp::ServerHandler + Clone + Send + Sync + 'static,
{
    // More workers than cores: an audit append waits for its fdatasync on the worker that
    // runs the call, and under a slow disk two workers could then both be waiting while the
    // pipes of other callers' finished commands go unread past their drain deadline.
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads((cores * 4).max(8));
    let served = build_runtime(builder).block_on(safe_mcp::http::serve(
        server, settings, callers, record, options, name,
    ));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

/// Load a guard policy and start its core.
fn start_guard(flag: Option<PathBuf>) -> Result<safety::guard::GuardCore, String> {
    let config = load(flag, Server::Guard).map_err(|e| e.to_string())?;
    safety::guard::GuardCore::start(config).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    // Sandbox launcher mode: must run before clap, logging or any thread exists.
    if let Some(code) = safety::exec::launcher_main() {
        return code;
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Hook { agent, config } => {
            init_logging_at("warn");
            let agent = match agent {
                HookAgent::ClaudeCode => safety::hook::Agent::ClaudeCode,
                HookAgent::Codex => safety::hook::Agent::Codex,
            };
            // A panic is exit 101, which the agents take as "go ahead": caught, it is a
            // refusal like every other failure.
            let answer = std::panic::catch_unwind(|| {
                safe_mcp::hook::run_hook(
                    agent,
                    || load(config, Server::Hook).map_err(|e| e.to_string()),
                    std::io::stdin().lock(),
                )
            })
            .unwrap_or_else(|_| {
                safety::hook::HookAnswer::refuse("safe-mcp hook refused the call: internal error")
            });
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let mut err = std::io::stderr().lock();
            let printed = out
                .write_all(answer.stdout.as_bytes())
                .and_then(|()| out.flush());
            let _ = err.write_all(answer.stderr.as_bytes());
            if printed.is_err() {
                let _ = err.write_all(b"safe-mcp hook: the answer could not be written\n");
                return ExitCode::from(2);
            }
            ExitCode::from(answer.exit_code)
        }
        Command::Check {
            config,
            json,
            cwd,
            command,
        } => {
            init_logging_at("warn");
            let (text, status) = safe_mcp::hook::run_check(
                || load(config, Server::Hook).map_err(|e| e.to_string()),
                cwd,
                &command,
                json,
            );
            if status == safe_mcp::hook::CHECK_ERROR {
                eprint!("{text}");
            } else {
                print!("{text}");
            }
            ExitCode::from(status)
        }
        Command::Terminal { config, transport } => {
            init_logging();
            let config = match load(config, Server::Terminal) {
                Ok(c) => c,
                Err(e) => return fatal(e),
            };
            let http = transport.http();
            let callers = match http.as_ref().map(|o| load_callers(&config, o)) {
                Some(Err(e)) => return fatal(e),
                Some(Ok(c)) => Some(c),
                None => None,
            };
            let settings = config.http.clone();
            let core = match safety::terminal::TerminalCore::start(config) {
                Ok(c) => c,
                Err(e) => return fatal(e),
            };
            match (http, callers) {
                (Some(options), Some(callers)) => {
                    let server = terminal::TerminalServer::new(core);
                    let sink = server.clone();
                    let record = Arc::new(move |r| sink.record_http_refusal(r));
                    serve_http(server, settings, callers, record, options, "terminal")
                }
                _ => {
                    tracing::info!("terminal server ready on stdio");
                    match single_thread_runtime().block_on(terminal::serve_stdio(core)) {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => fatal(e),
                    }
                }
            }
        }
        Command::Files { config, transport } => {
            init_logging();
            let config = match load(config, Server::Files) {
                Ok(c) => c,
                Err(e) => return fatal(e),
            };
            let Some(options) = transport.http() else {
                return match runtime().block_on(files::serve_stdio(config)) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => fatal(e),
                };
            };
            let callers = match load_callers(&config, &options) {
                Ok(c) => c,
                Err(e) => return fatal(e),
            };
            let organizer = match safety::Organizer::open(&config) {
                Ok(o) => o,
                Err(e) => return fatal(e),
            };
            let server = files::FilesServer::new(organizer);
            let sink = server.clone();
            let record = Arc::new(move |r| sink.record_http_refusal(r));
            serve_http(
                server,
                config.http.clone(),
                callers,
                record,
                options,
                "files",
            )
        }
        Command::Guard { config, transport } => {
            init_logging();
            let config = match load(config, Server::Guard) {
                Ok(c) => c,
                Err(e) => return fatal(e),
            };
            let http = transport.http();
            let callers = match http.as_ref().map(|o| load_callers(&config, o)) {
                Some(Err(e)) => return fatal(e),
                Some(Ok(c)) => Some(c),
                None => None,
            };
            let settings = config.http.clone();
            let core = match safety::guard::GuardCore::start(config) {
                Ok(c) => c,
                Err(e) => return fatal(e),
            };
            match (http, callers) {
                (Some(options), Some(callers)) => {
                    let server = guard::GuardServer::new(core);
                    let sink = server.clone();
                    let record = Arc::new(move |r| sink.record_http_refusal(r));
                    serve_http(server, settings, callers, record, options, "guard")
                }
                _ => {
                    tracing::info!("guard server ready on stdio");
                    match single_thread_runtime().block_on(guard::serve_stdio(core)) {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => fatal(e),
                    }
                }
            }
        }
        Command::Token { name } => {
            if !safety::callers::valid_caller_name(&name) {
                eprintln!("error: caller name '{name}' must be 1 to 64 of A-Z a-z 0-9 . _ @ -");
                return ExitCode::from(2);
            }
            match safety::callers::new_token() {
                Ok(token) => {
                    use std::io::Write;
                    let stanza = safety::callers::caller_stanza(&name, &token);
                    let mut out = std::io::stdout().lock();
                    match write!(out, "{token}\n\n{stanza}").and_then(|()| out.flush()) {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => {
                            eprintln!("error: the token could not be written: {e}");
                            ExitCode::from(2)
                        }
                    }
                }
                Err(e) => {
                    eprintln!("error: no random bytes from the OS: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Exec {
            config,
            tool,
            cwd,
            timeout_ms,
            env,
            argv,
        } => {
            init_logging();
            let core = match start_guard(config) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("fatal: {e}");
                    return ExitCode::from(safe_mcp::exec::NOT_RUN);
                }
            };
            let request = safe_mcp::exec::Request {
                tool,
                cwd,
                timeout_ms,
                env,
                argv,
            };
            let code = single_thread_runtime().block_on(safe_mcp::exec::run(&core, request));
            ExitCode::from(code)
        }
        Command::Audit {
            command: AuditCommand::Keygen { name, out },
        } => {
            let mut public = out.clone().into_os_string();
            public.push(".pub");
            let public = PathBuf::from(public);
            match safety::audit::generate_checkpoint_key(&name, &out, &public) {
                Ok(verifier) => {
                    println!("signer key: {} (mode 0600)", out.display());
                    println!("verifier key: {}: {verifier}", public.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Audit {
            command:
                AuditCommand::Verify {
                    file,
                    key,
                    require_covered,
                },
        } => {
            let key = match key
                .as_deref()
                .map(safety::audit::CheckpointVerifier::load)
                .transpose()
            {
                Ok(key) => key,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            audit_verify(&file, key.as_ref(), require_covered)
        }
        Command::Demo { keep, http } => match runtime().block_on(safe_mcp::demo::run(keep, http)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fatal(format!("{e:#}")),
        },
        Command::Scan(args) => ExitCode::from(u8::try_from(scan::cli::run(args)).unwrap_or(2)),
    }
}

/// `safe-mcp audit verify`: the chain (and, with a key, its checkpoints), as exit 0 / 1 / 2.
fn audit_verify(
    file: &Path,
    key: Option<&safety::audit::CheckpointVerifier>,
    require_covered: bool,
) -> ExitCode {
    match safety::audit::verify_signed(file, key) {
        Ok(report) => {
            // Rotated files are named only when there are any: the plain case reads
            // as it always did.
            let rotated = report.files.len() > 1;
            match report.broken {
                None => {
                    let names: Vec<String> = report
                        .files
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect();
                    let files = match rotated {
                        true => format!(" in {} files ({})", names.len(), names.join(", ")),
                        false => String::new(),
                    };
                    let records = count(report.records, "record", "records");
                    println!("ok: {records}{files}");
                    if let Some(signed) = report.signed {
                        let tail = report.records - signed.covered;
                        println!(
                            "signed: {} valid; records 1..={} covered{}",
                            count(signed.checkpoints, "checkpoint", "checkpoints"),
                            signed.covered,
                            match tail {
                                0 => String::new(),
                                n => format!(
                                    ", the last {} NOT covered (no checkpoint after them: a \
                                     live writer's newest, or rewritten by someone who removed \
                                     the checkpoints after them)",
                                    count(n, "record", "records")
                                ),
                            }
                        );
                        if tail > 0 && require_covered {
                            return ExitCode::from(1);
                        }
                    }
                    ExitCode::SUCCESS
                }
                Some((line, what)) => {
                    let place = match report.file.filter(|_| rotated) {
                        Some(f) => format!("{} record {line}", f.display()),
                        None => format!("record {line}"),
                    };
                    println!(
                        "broken: {place}: {what} ({} verified before it)",
                        count(report.records, "record", "records")
                    );
                    ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            eprintln!("error: cannot read '{}': {e}", file.display());
            ExitCode::from(2)
        }
    }
}
