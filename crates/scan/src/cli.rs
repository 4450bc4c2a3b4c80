//! The `safe-mcp scan` subcommand: arguments and exit codes.
//!
//! Exit codes: 0 nothing at or above the floor and every file read; 1 findings at or above the
//! floor; 2 a file could not be read or parsed (too deep a nesting included), the root is
//! missing or not a file or folder, the report could not be written safely, `--strict` is on
//! and a file was skipped, or the arguments are bad (clap's usage errors are 2 as well). A
//! parse error wins over findings: an incomplete scan must not look like an ordinary
//! "findings" result, and the report still lists what the other files produced.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::report::{Format, escape_line};
use crate::rule::Severity;
use crate::{DEFAULT_MAX_FILE_SIZE, ScanOptions};

/// Exit code: clean.
pub const EXIT_CLEAN: i32 = 0;
/// Exit code: findings at or above the floor.
pub const EXIT_FINDINGS: i32 = 1;
/// Exit code: parse/IO error or bad arguments.
pub const EXIT_ERROR: i32 = 2;

/// Arguments of `safe-mcp scan`.
#[derive(Args, Debug, Clone)]
pub struct ScanArgs {
    /// File or folder to scan.
    pub path: PathBuf,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to this file instead of stdout. Never through a symbolic link (the
    /// file is created anew and renamed into place), and never over a file the scan read or a
    /// source file inside the scanned folder.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Drop findings below this severity (exit 1 only for findings at or above it).
    #[arg(long, value_enum, ignore_case = true, default_value = "LOW")]
    pub severity_floor: Severity,
    /// Skip paths matching this glob (relative to PATH); repeatable.
    #[arg(long = "ignore", value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Skip (and list as skipped) files larger than this many bytes. Files over 64 MiB are
    /// never parsed, whatever this says.
    #[arg(long, default_value_t = DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
    /// For third-party code: ignore-file and ignore-next-line pragmas count for nothing, and
    /// any skipped file (size cap, symbolic link, not a regular file) makes the exit code 2.
    #[arg(long)]
    pub strict: bool,
    /// Drop findings in tests and development scripts (test folders, `*.test.*`, `*_test.py`,
    /// `scripts/`, `examples/`), which are otherwise reported one severity lower.
    #[arg(long)]
    pub exclude_tests: bool,
}

/// Run the scan, print or write the report, and return the exit code.
pub fn run(args: ScanArgs) -> i32 {
    let options = ScanOptions {
        root: args.path.clone(),
        severity_floor: args.severity_floor,
        ignore: args.ignore.clone(),
        max_file_size: args.max_file_size,
        strict: args.strict,
        exclude_tests: args.exclude_tests,
    };
    let report = match crate::scan(&options) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("error: {}", escape_line(&error.to_string()));
            return EXIT_ERROR;
        }
    };
    // Names and messages come from the scanned tree: escaped, they cannot forge a line.
    for error in &report.errors {
        eprintln!(
            "warn: {}: {}",
            escape_line(&error.file),
            escape_line(&error.message)
        );
    }
    if args.strict {
        for skipped in &report.skipped {
            eprintln!(
                "warn: {}: skipped: {}",
                escape_line(&skipped.file),
                escape_line(&skipped.reason)
            );
        }
    }
    let rendered = match report.render(args.format) {
        Ok(rendered) => rendered,
        Err(error) => {
            eprintln!("error: cannot serialise report: {error}");
            return EXIT_ERROR;
        }
    };
    match &args.output {
        Some(path) => {
            if let Err(error) =
                crate::output::write_report(path, rendered.as_bytes(), &report, &args.path)
            {
                eprintln!("error: {}", escape_line(&error.to_string()));
                return EXIT_ERROR;
            }
            eprintln!("wrote {}", escape_line(&path.to_string_lossy()));
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            if stdout
                .write_all(rendered.as_bytes())
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return EXIT_ERROR;
            }
        }
    }
    if !report.errors.is_empty() || (args.strict && !report.skipped.is_empty()) {
        EXIT_ERROR
    } else if report.findings.is_empty() {
        EXIT_CLEAN
    } else {
        EXIT_FINDINGS
    }
}
