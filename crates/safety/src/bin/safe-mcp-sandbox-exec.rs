//! A binary that is nothing but the sandbox launcher mode, for the safety crate's own
//! integration tests (the `safe-mcp` binary is the launcher in production).
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    match safety::exec::launcher_main() {
        Some(code) => code,
        None => {
            eprintln!(
                "usage: safe-mcp-sandbox-exec {} LAUNCH_SPEC (started by the terminal server only)",
                safety::exec::LAUNCHER_ARG
            );
            std::process::ExitCode::from(2)
        }
    }
}
