//! Stand-alone runner for `safe-mcp scan` (used by the benchmark without the full binary):
//! `cargo run --release -p scan --example scan -- PATH [--format ...]`.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "benchmark harness: a failure aborts the measurement, and indices come from its own tables"
)]

use clap::Parser;

/// `scan` arguments, as the `safe-mcp scan` subcommand takes them.
#[derive(Parser)]
#[command(name = "scan")]
struct Cli {
    #[command(flatten)]
    args: scan::cli::ScanArgs,
}

/// The allocator of the safe-mcp binary, so the figures are the product's.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    std::process::exit(scan::cli::run(Cli::parse().args));
}
