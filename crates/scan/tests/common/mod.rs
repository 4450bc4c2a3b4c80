//! Shared by the tests: the findings of one fixture as (rule id, line), the command line
//! run as `safe-mcp scan` runs it, files written into a tree, and the SARIF schema.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;
use scan::cli::{ScanArgs, run};

/// Stand-in for the binary's `safe-mcp scan` subcommand.
#[derive(Parser)]
struct Wrapper {
    #[command(flatten)]
    args: ScanArgs,
}

/// `safe-mcp scan ARGV...` parsed.
pub fn parse(argv: &[&str]) -> Result<ScanArgs, clap::Error> {
    let mut full = vec!["scan"];
    full.extend_from_slice(argv);
    Wrapper::try_parse_from(full).map(|w| w.args)
}

/// `safe-mcp scan ARGV...` run: its exit code.
pub fn run_with(argv: &[&str]) -> i32 {
    run(parse(argv).expect("arguments parse"))
}

/// Write `text` at `relative` beneath `dir`, folders made.
pub fn write(dir: &Path, relative: &str, text: &str) -> PathBuf {
    let path = dir.join(relative);
    fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
    fs::write(&path, text).expect("write");
    path
}

/// The official SARIF 2.1.0 schema, compiled.
pub fn sarif_validator() -> jsonschema::Validator {
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(schema_path).expect("schema")).expect("json");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("schema compiles")
}

/// (rule id, line) of every finding of `source` scanned as `file`, sorted.
pub fn hits(file: &str, source: &str) -> Vec<(&'static str, usize)> {
    let mut found: Vec<_> = scan::scan_text(Path::new(file), source)
        .expect("fixture parses")
        .into_iter()
        .map(|f| (f.rule_id, f.line))
        .collect();
    found.sort();
    found
}
