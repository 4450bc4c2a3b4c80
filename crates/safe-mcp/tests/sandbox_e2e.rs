//! End-to-end tests of the kernel sandbox through the real binary and the rmcp client.

#[path = "../src/bench_sandbox.rs"]
#[allow(dead_code)]
mod bench_sandbox;
mod client {
    pub use safe_mcp::client::*;
}
mod demo {
    pub use safe_mcp::demo::*;
}

fn bin() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_safe-mcp"))
}

/// The benchmark's wiring works (a few rounds; figures are not asserted).
#[tokio::test(flavor = "multi_thread")]
async fn sandbox_benchmark_runs_both_servers() {
    let rounds = std::env::var("SANDBOX_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    bench_sandbox::run_with(&bin(), rounds).await.unwrap();
}
