//! The benchmark: figures measured against a built `safe-mcp` binary, each beside its
//! baseline taken in the same run (docs/benchmarks.md). An example, not a subcommand, so the
//! server binary does not carry the harness and its clients.
//!
//! ```sh
//! cargo build --release -p safe-mcp
//! cargo run --release -p safe-mcp --example bench -- --iterations 200 --repeat 10
//! cargo run --release -p safe-mcp --example bench -- --sandbox --iterations 300
//! cargo run --release -p safe-mcp --example bench -- --guard --iterations 300
//! ```
//!
//! Cargo does not build a package's binaries for an example: build `safe-mcp` first (the
//! first line), or name the binary to measure with `--server`.

mod bench;
mod bench_guard;
mod bench_sandbox;
mod line_client;
mod recorded;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, ensure};
use clap::Parser;

/// Print benchmark figures, each beside its baseline measured in the same run.
#[derive(Parser)]
#[command(name = "bench")]
struct Args {
    /// Interleaved rounds per measurement.
    #[arg(long, default_value_t = 300)]
    iterations: usize,
    /// Compare run_command "true" with the full kernel sandbox against the sandbox off.
    #[arg(long)]
    sandbox: bool,
    /// Compare guard_exec "echo hi" with run_command "echo hi" (in process and over MCP),
    /// and one `safe-mcp exec` with a bare spawn.
    #[arg(long, conflicts_with_all = ["sandbox", "repeat"])]
    guard: bool,
    /// Repeat the whole benchmark this many times and end with how many runs met each
    /// target (the machine's noise, in one command).
    #[arg(long, default_value_t = 1, conflicts_with = "sandbox")]
    repeat: usize,
    /// The `safe-mcp` binary to measure [default: `safe-mcp` of the same build, beside
    /// this example's folder: target/<profile>/safe-mcp].
    #[arg(long, value_name = "FILE")]
    server: Option<PathBuf>,
}

/// `target/<profile>/safe-mcp` for this example at `target/<profile>/examples/bench`.
fn server_of_this_build() -> Result<PathBuf> {
    let me = std::env::current_exe().context("locating this example")?;
    let profile_dir = me
        .parent()
        .and_then(|examples| examples.parent())
        .context("this example is not in a target/<profile>/examples folder")?;
    Ok(profile_dir.join("safe-mcp"))
}

async fn run(args: Args) -> Result<()> {
    let server = match args.server {
        Some(path) => path,
        None => server_of_this_build()?,
    };
    ensure!(
        server.is_file(),
        "no safe-mcp binary at {}: build it first (`cargo build --release -p safe-mcp`) or name one with --server",
        server.display()
    );
    if args.guard {
        bench_guard::run(&server, args.iterations).await
    } else if args.sandbox {
        bench_sandbox::run(&server, args.iterations).await
    } else {
        bench::run(&server, args.iterations, args.repeat)
            .await
            .map(drop)
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    // One thread, as the terminal server runs: a request is sent and its answer read
    // without a hand-off between threads.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fatal: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fatal: {e:#}");
            ExitCode::from(1)
        }
    }
}
