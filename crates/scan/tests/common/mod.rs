//! Shared by the rule tests: the findings of one fixture as (rule id, line).

use std::path::Path;

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
