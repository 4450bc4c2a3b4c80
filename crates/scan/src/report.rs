//! The scan result and its four renderings: text, JSON, Markdown and SARIF 2.1.0.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::finding::Finding;
use crate::rule::{Rule, Severity};

/// Counts of kept findings per severity.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub struct SeverityCounts {
    /// CRITICAL findings.
    pub critical: usize,
    /// HIGH findings.
    pub high: usize,
    /// MEDIUM findings.
    pub medium: usize,
    /// LOW findings.
    pub low: usize,
}

impl SeverityCounts {
    /// Count findings by effective severity.
    pub fn count(findings: &[Finding]) -> Self {
        let mut counts = SeverityCounts::default();
        for finding in findings {
            match finding.severity {
                Severity::Critical => counts.critical += 1,
                Severity::High => counts.high += 1,
                Severity::Medium => counts.medium += 1,
                Severity::Low => counts.low += 1,
            }
        }
        counts
    }
}

/// Totals for a scan.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Files parsed and analysed.
    pub files_scanned: usize,
    /// Files not analysed on purpose (size cap, ignore-file pragma).
    pub files_skipped: usize,
    /// Lines in the analysed files.
    pub lines_scanned: usize,
    /// Findings per severity (after the floor).
    pub by_severity: SeverityCounts,
    /// Wall-clock time of the scan.
    pub duration_ms: u64,
}

/// A file that could not be scanned.
#[derive(Clone, Debug, Serialize)]
pub struct FileError {
    /// The file.
    pub file: String,
    /// What went wrong (`parse error: ...`, an I/O error).
    pub message: String,
}

/// A file deliberately not analysed.
#[derive(Clone, Debug, Serialize)]
pub struct SkippedFile {
    /// The file.
    pub file: String,
    /// Why (size cap, pragma).
    pub reason: String,
}

/// Everything a scan found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScanReport {
    /// Findings, most severe first, then by file and line.
    pub findings: Vec<Finding>,
    /// Totals.
    pub summary: Summary,
    /// Files skipped on purpose.
    pub skipped: Vec<SkippedFile>,
    /// Files that could not be read or parsed.
    pub errors: Vec<FileError>,
}

/// Output format of `safe-mcp scan`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human-readable lines.
    Text,
    /// The report object, pretty-printed.
    Json,
    /// A Markdown summary and table.
    Markdown,
    /// SARIF 2.1.0 for code-scanning UIs.
    Sarif,
}

impl ScanReport {
    /// Render in the chosen format (always ends with a newline).
    pub fn render(&self, format: Format) -> Result<String, serde_json::Error> {
        let mut text = match format {
            Format::Text => self.to_text(),
            Format::Json => serde_json::to_string_pretty(self)?,
            Format::Markdown => self.to_markdown(),
            Format::Sarif => serde_json::to_string_pretty(&self.to_sarif())?,
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Ok(text)
    }

    fn counts_line(&self) -> String {
        let c = &self.summary.by_severity;
        format!(
            "CRITICAL={} HIGH={} MEDIUM={} LOW={}",
            c.critical, c.high, c.medium, c.low
        )
    }

    /// Plain text: one block per finding, then the totals.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for finding in &self.findings {
            let taint = if finding.tainted_from_tool_input {
                " [tainted from MCP tool input]"
            } else {
                ""
            };
            out.push_str(&format!(
                "{}:{}:{}: {} {}{}\n    {}\n    {}\n    fix: {}\n",
                finding.file,
                finding.line,
                finding.column,
                finding.severity.name(),
                finding.rule_id,
                taint,
                finding.snippet,
                finding.message,
                finding.suggested_fix
            ));
        }
        for skipped in &self.skipped {
            out.push_str(&format!("skipped: {}: {}\n", skipped.file, skipped.reason));
        }
        for error in &self.errors {
            out.push_str(&format!("error: {}: {}\n", error.file, error.message));
        }
        out.push_str(&format!(
            "{} scanned ({}), {} skipped, {}, {} ms; findings: {}\n",
            count(self.summary.files_scanned, "file", "files"),
            count(self.summary.lines_scanned, "line", "lines"),
            self.summary.files_skipped,
            count(self.errors.len(), "error", "errors"),
            self.summary.duration_ms,
            self.counts_line()
        ));
        out
    }

    /// Markdown: summary, errors, skipped files, and a findings table.
    pub fn to_markdown(&self) -> String {
        let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
        let mut lines = vec![
            "# safe-mcp scan report".to_string(),
            String::new(),
            "## Summary".to_string(),
            String::new(),
            format!("- Files scanned: {}", self.summary.files_scanned),
            format!("- Lines scanned: {}", self.summary.lines_scanned),
            format!("- Files skipped: {}", self.summary.files_skipped),
            format!("- Duration: {} ms", self.summary.duration_ms),
            format!("- Findings: {}", self.counts_line()),
        ];
        if !self.errors.is_empty() {
            lines.extend([
                String::new(),
                "## Parse / IO errors".to_string(),
                String::new(),
            ]);
            for error in &self.errors {
                lines.push(format!(
                    "- `{}`: {}",
                    cell(&error.file),
                    cell(&error.message)
                ));
            }
        }
        if !self.skipped.is_empty() {
            lines.extend([String::new(), "## Skipped files".to_string(), String::new()]);
            for skipped in &self.skipped {
                lines.push(format!(
                    "- `{}`: {}",
                    cell(&skipped.file),
                    cell(&skipped.reason)
                ));
            }
        }
        lines.extend([String::new(), "## Findings".to_string(), String::new()]);
        if self.findings.is_empty() {
            lines.push("(none)".to_string());
        } else {
            lines.push(
                "| Severity | Rule | Location | Tool input | Code | Suggested fix |".to_string(),
            );
            lines.push("|---|---|---|---|---|---|".to_string());
            for f in &self.findings {
                lines.push(format!(
                    "| {} | `{}` | `{}:{}:{}` | {} | `{}` | {} |",
                    f.severity.name(),
                    f.rule_id,
                    cell(&f.file),
                    f.line,
                    f.column,
                    if f.tainted_from_tool_input {
                        "yes"
                    } else {
                        "no"
                    },
                    cell(&f.snippet).replace('`', "'"),
                    cell(f.suggested_fix)
                ));
            }
        }
        lines.push(String::new());
        lines.join("\n")
    }

    /// SARIF 2.1.0: every rule's metadata (with `security-severity` for GitHub), one result per
    /// finding with a physical location, and a `partialFingerprints` entry that does not include
    /// the line number, so a finding keeps its identity when code above it moves.
    pub fn to_sarif(&self) -> Value {
        let rules: Vec<Value> = Rule::ALL
            .iter()
            .map(|rule| {
                json!({
                    "id": rule.id(),
                    "name": rule.id(),
                    "shortDescription": { "text": rule.description() },
                    "fullDescription": { "text": format!("{} {}", rule.description(), rule.suggested_fix()) },
                    "help": {
                        "text": rule.suggested_fix(),
                        "markdown": format!("**{}**\n\n{}", rule.id(), rule.suggested_fix())
                    },
                    "defaultConfiguration": { "level": rule.severity().sarif_level() },
                    "properties": {
                        "tags": ["security", "external/cwe/cwe-78"],
                        "precision": "high",
                        "problem.severity": rule.severity().sarif_level(),
                        "security-severity": rule.severity().security_severity(),
                        "severity": rule.severity().name()
                    }
                })
            })
            .collect();
        let mut occurrences: HashMap<(String, &str, String), usize> = HashMap::new();
        let results: Vec<Value> = self
            .findings
            .iter()
            .map(|f| {
                let rule_index = Rule::ALL.iter().position(|rule| rule.id() == f.rule_id).unwrap_or(0);
                let key = (f.file.clone(), f.rule_id, f.snippet.clone());
                let occurrence = occurrences.entry(key).or_insert(0);
                *occurrence += 1;
                let fingerprint = fingerprint(f, *occurrence);
                let taint = if f.tainted_from_tool_input {
                    " The dangerous argument comes from MCP tool input."
                } else {
                    ""
                };
                json!({
                    "ruleId": f.rule_id,
                    "ruleIndex": rule_index,
                    "level": f.severity.sarif_level(),
                    "message": { "text": format!("{}{} Fix: {}", f.message, taint, f.suggested_fix) },
                    "locations": [{
                        "physicalLocation": {
                            "artifactLocation": { "uri": uri_of(&f.file) },
                            "region": {
                                "startLine": f.line,
                                "startColumn": f.column,
                                "snippet": { "text": f.snippet }
                            }
                        }
                    }],
                    "partialFingerprints": { "safeMcpFindingHash/v1": fingerprint },
                    "properties": {
                        "severity": f.severity.name(),
                        "baseSeverity": f.base_severity.name(),
                        "tainted_from_tool_input": f.tainted_from_tool_input
                    }
                })
            })
            .collect();
        let notifications: Vec<Value> = self
            .errors
            .iter()
            .map(|error| {
                json!({
                    "level": "error",
                    "message": { "text": error.message },
                    "locations": [{ "physicalLocation": { "artifactLocation": { "uri": uri_of(&error.file) } } }]
                })
            })
            .collect();
        json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {
                    "driver": {
                        "name": "safe-mcp scan",
                        "semanticVersion": env!("CARGO_PKG_VERSION"),
                        "rules": rules
                    }
                },
                "columnKind": "utf16CodeUnits",
                "invocations": [{
                    "executionSuccessful": self.errors.is_empty(),
                    "toolExecutionNotifications": notifications
                }],
                "results": results
            }]
        })
    }
}

/// Stable identity of a finding: rule, file, the trimmed source line and which occurrence of
/// that line it is, but not the line number.
fn fingerprint(finding: &Finding, occurrence: usize) -> String {
    let mut hasher = Sha256::new();
    for part in [
        finding.rule_id,
        finding.file.as_str(),
        finding.snippet.as_str(),
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.update(occurrence.to_le_bytes());
    let digest = hasher.finalize();
    hex::encode(digest.get(..16).unwrap_or(&[]))
}

/// A relative URI reference for a file path: forward slashes, and percent-encoding for anything
/// outside the unreserved and path characters.
fn uri_of(path: &str) -> String {
    let normalised = path.replace('\\', "/");
    let mut out = String::with_capacity(normalised.len());
    for byte in normalised.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    if normalised.starts_with('/') {
        format!("file://{out}")
    } else {
        out
    }
}

/// `n` and the noun that agrees with it: `1 file`, `2 files`, `0 files`.
fn count<N: std::fmt::Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}
