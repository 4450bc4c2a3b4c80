//! The scan result and its four renderings: text, JSON, Markdown and SARIF 2.1.0.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

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
    /// Files not analysed (size cap, ignore-file pragma, symbolic link, not a regular file).
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
    /// Why (size cap, pragma, symbolic link not followed, not a regular file).
    pub reason: String,
}

/// Where a scan started. SARIF names files relative to it (`uriBaseId: SRCROOT`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ScanRoot {
    /// The path as given, spelled as file names are: every file of a folder scan begins with
    /// it and `/`; a file scan's one file is this path.
    pub path: String,
    /// The root is one file, not a folder.
    pub file: bool,
    /// The folder (a file root's parent) as an absolute `file://` URI ending in `/`, if it
    /// could be resolved.
    pub uri: Option<String>,
}

impl ScanRoot {
    /// The root of a scan of `root` (a file if `is_file`).
    pub(crate) fn of(root: &Path, is_file: bool) -> ScanRoot {
        let absolute = std::fs::canonicalize(root).ok();
        let folder = if is_file {
            absolute.and_then(|path| path.parent().map(Path::to_path_buf))
        } else {
            absolute
        };
        ScanRoot {
            path: crate::discover::display_path(root),
            file: is_file,
            uri: folder.map(|folder| folder_uri(&folder)),
        }
    }

    /// `file` relative to the root, `/`-separated, if it lies below it.
    fn relative_of<'f>(&self, file: &'f str) -> Option<&'f str> {
        if self.file {
            return (file == self.path).then(|| file.rsplit('/').next().unwrap_or(file));
        }
        let prefix = self.path.trim_end_matches('/');
        if prefix.is_empty() && self.path.starts_with('/') {
            return file.strip_prefix('/');
        }
        if prefix.is_empty() || prefix == "." {
            return Some(file);
        }
        file.strip_prefix(prefix)?.strip_prefix('/')
    }
}

/// A file a scan read, by device and inode: `--output` refuses to replace one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    pub(crate) device: u64,
    pub(crate) inode: u64,
}

/// Everything a scan found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScanReport {
    /// Where the scan started (absent in a report rebuilt from a bare findings list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<ScanRoot>,
    /// Findings, most severe first, then by file and line.
    pub findings: Vec<Finding>,
    /// Totals.
    pub summary: Summary,
    /// Files skipped on purpose.
    pub skipped: Vec<SkippedFile>,
    /// Files that could not be read or parsed.
    pub errors: Vec<FileError>,
    /// The files the scan read (not serialised).
    #[serde(skip)]
    pub(crate) read_files: Vec<FileIdentity>,
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

    /// Plain text: one block per finding, then the totals. File names, snippets and messages
    /// come from the scanned tree: their control characters are escaped, so a file named
    /// `x\necho PWNED\n.js` cannot print a line of its own, nor a terminal escape.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for finding in &self.findings {
            let taint = match (finding.tainted_from_tool_input, finding.context) {
                (true, crate::finding::Context::Test) => {
                    " [tainted from MCP tool input] [test or development code]"
                }
                (true, _) => " [tainted from MCP tool input]",
                (false, crate::finding::Context::Test) => " [test or development code]",
                (false, _) => "",
            };
            out.push_str(&format!(
                "{}:{}:{}: {} {}{}\n    {}\n    {}\n    fix: {}\n",
                escape_line(&finding.file),
                finding.line,
                finding.column,
                finding.severity.name(),
                finding.rule_id,
                taint,
                escape_controls(&finding.snippet, false),
                finding.message,
                finding.suggested_fix
            ));
        }
        for skipped in &self.skipped {
            out.push_str(&format!(
                "skipped: {}: {}\n",
                escape_line(&skipped.file),
                escape_line(&skipped.reason)
            ));
        }
        for error in &self.errors {
            out.push_str(&format!(
                "error: {}: {}\n",
                escape_line(&error.file),
                escape_line(&error.message)
            ));
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

    /// Markdown: summary, errors, skipped files, and a findings table. Names and messages are
    /// escaped as Markdown text (a `|` cannot open a table cell, a backtick cannot close a code
    /// span, a newline cannot start a line); snippets are code spans without backticks.
    pub fn to_markdown(&self) -> String {
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
                    "- {}: {}",
                    escape_markdown(&error.file),
                    escape_markdown(&error.message)
                ));
            }
        }
        if !self.skipped.is_empty() {
            lines.extend([String::new(), "## Skipped files".to_string(), String::new()]);
            for skipped in &self.skipped {
                lines.push(format!(
                    "- {}: {}",
                    escape_markdown(&skipped.file),
                    escape_markdown(&skipped.reason)
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
                    "| {} | `{}` | {}:{}:{} | {} | `{}` | {} |",
                    f.severity.name(),
                    f.rule_id,
                    escape_markdown(&f.file),
                    f.line,
                    f.column,
                    if f.tainted_from_tool_input {
                        "yes"
                    } else {
                        "no"
                    },
                    escape_controls(&f.snippet, false)
                        .replace('`', "'")
                        .replace('|', "\\|"),
                    escape_markdown(f.suggested_fix)
                ));
            }
        }
        lines.push(String::new());
        lines.join("\n")
    }

    /// Where `file` is, as a SARIF `artifactLocation`: a relative, percent-encoded URI against
    /// `SRCROOT` (the scanned root), never with a `..` segment; `None` for the root itself.
    fn artifact_location(&self, file: &str) -> Option<Value> {
        let relative = match self.root.as_ref() {
            Some(root) => root.relative_of(file),
            None if file.starts_with('/') => {
                return Some(json!({ "uri": format!("file://{}", encode_path(file.as_bytes())) }));
            }
            None => Some(file),
        };
        let Some(relative) = relative else {
            // Not below the root (a report assembled by hand): an absolute URI if it can be.
            return file
                .starts_with('/')
                .then(|| json!({ "uri": format!("file://{}", encode_path(file.as_bytes())) }));
        };
        let uri = relative_uri(relative);
        (!uri.is_empty()).then(|| json!({ "uri": uri, "uriBaseId": SRCROOT }))
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
                            "artifactLocation": self.artifact_location(&f.file),
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
                        "tainted_from_tool_input": f.tainted_from_tool_input,
                        "context": f.context.name(),
                        "tags": if f.context == crate::finding::Context::Test {
                            json!(["test"])
                        } else {
                            json!([])
                        }
                    }
                })
            })
            .collect();
        // Errors and skips alike: a code-scanning UI shows what was not looked at.
        let notify = |level: &str, file: &str, text: &str| {
            let mut notification = serde_json::Map::new();
            notification.insert("level".into(), json!(level));
            notification.insert(
                "message".into(),
                json!({ "text": format!("{file}: {text}") }),
            );
            if let Some(location) = self.artifact_location(file) {
                notification.insert(
                    "locations".into(),
                    json!([{ "physicalLocation": { "artifactLocation": location } }]),
                );
            }
            Value::Object(notification)
        };
        let notifications: Vec<Value> = self
            .errors
            .iter()
            .map(|error| notify("error", &error.file, &error.message))
            .chain(self.skipped.iter().map(|skipped| {
                notify(
                    "warning",
                    &skipped.file,
                    &format!("skipped: {}", skipped.reason),
                )
            }))
            .collect();
        let mut base_ids = serde_json::Map::new();
        if let Some(uri) = self.root.as_ref().and_then(|root| root.uri.as_ref()) {
            base_ids.insert(SRCROOT.to_string(), json!({ "uri": uri }));
        }
        let mut sarif = json!({
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
        });
        // Absent, not empty, when the report does not know its root (rebuilt from findings).
        if !base_ids.is_empty()
            && let Some(run) = sarif
                .get_mut("runs")
                .and_then(|runs| runs.get_mut(0))
                .and_then(Value::as_object_mut)
        {
            run.insert("originalUriBaseIds".to_string(), Value::Object(base_ids));
        }
        sarif
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

/// The `uriBaseId` of every location: the scanned root.
const SRCROOT: &str = "SRCROOT";

/// Percent-encode a path per RFC 3986: every byte but the unreserved ones and `/` (so `:`
/// never makes `javascript:alert(1).js` or `C:evil.js` a scheme, and `#`, `?`, `%`, spaces and
/// non-ASCII bytes are data).
fn encode_path(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &byte in bytes {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A relative URI for a `/`-separated relative path: empty and `.` segments dropped, a `..`
/// segment encoded (`%2E%2E`) so it can never climb out of `SRCROOT`.
fn relative_uri(relative: &str) -> String {
    relative
        .split('/')
        .filter(|segment| !segment.is_empty() && *segment != ".")
        .map(|segment| {
            if segment == ".." {
                "%2E%2E".to_string()
            } else {
                encode_path(segment.as_bytes())
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// An absolute folder as a `file://` URI ending in `/`.
fn folder_uri(folder: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = format!("file://{}", encode_path(folder.as_os_str().as_bytes()));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// Whether `c` must be escaped in a line of text: control characters (C0, DEL, C1, so ESC
/// too) and the invisible characters that reorder or hide text (bidirectional overrides and
/// isolates, zero-width characters, line and paragraph separators).
fn is_hidden_or_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// `text` with control and hidden characters escaped (`\n`, `\r`, `\t`, `\u{1b}`), and with
/// `\` doubled too if `backslash` (so the escapes cannot be forged).
fn escape_controls(text: &str, backslash: bool) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| is_hidden_or_control(c) || (backslash && c == '\\'))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' if backslash => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_hidden_or_control(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A file name or message from the scanned tree as one line of plain text: it cannot break the
/// line, move the cursor or send a terminal escape.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape_controls(text, true)
}

/// A file name or message as Markdown text: escaped as a line, then every character Markdown
/// or a GFM table gives a meaning to is backslash-escaped.
fn escape_markdown(text: &str) -> String {
    let line = escape_line(text);
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if "\\`*_[]<>|~&#!()".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `n` and the noun that agrees with it: `1 file`, `2 files`, `0 files`.
fn count<N: std::fmt::Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}
