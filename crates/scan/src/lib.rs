//! `safe-mcp scan`: finds shell-injection patterns in MCP server source code.
//!
//! How a scan flows:
//! 1. `discover` walks the target and lists `.ts .tsx .mts .cts .js .jsx .mjs
//!    .cjs .py .rs` files, skipping `node_modules`, `.git` and `--ignore` globs (but not
//!    `dist/`/`build/`, where installed servers keep their code). Files over the size cap are
//!    reported as skipped.
//! 2. Files are analysed in parallel (rayon). Each language has its own real parser and binding
//!    resolver: `javascript` (oxc + oxc_semantic), `python` and `rust_lang` (tree-sitter).
//!    They return rule hits and the pragmas found in real comments.
//! 3. Hits become [`Finding`]s with position, snippet, fix and the MCP tool-input taint mark
//!    (which raises severity one step); pragmas and the severity floor filter them.
//! 4. [`report`] renders text, JSON, Markdown or SARIF 2.1.0; [`cli`] wires it to
//!    `safe-mcp scan` and its exit codes; [`import`] reads a report back from its JSON (or a
//!    bare findings array) so it can be rendered again in another format.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cli;
mod discover;
pub mod error;
pub mod finding;
pub mod import;
mod javascript;
mod python;
pub mod report;
pub mod rule;
mod rust_lang;
mod source;
mod syntax_tree;

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use crate::discover::{Candidate, IgnoreGlobs};
use crate::error::{ScanError, SourceError};
use crate::finding::{Analysis, Finding, Language};
use crate::report::{FileError, ScanReport, SkippedFile, Summary};
use crate::rule::Severity;
use crate::source::SourceText;

/// Default size cap: larger files are reported as skipped (generated bundles, minified code).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;

/// What to scan and how.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// A file or folder.
    pub root: PathBuf,
    /// Findings below this severity are dropped.
    pub severity_floor: Severity,
    /// Extra globs to skip, relative to `root`.
    pub ignore: Vec<String>,
    /// Files larger than this many bytes are skipped (and listed as skipped).
    pub max_file_size: u64,
}

impl ScanOptions {
    /// Options with the defaults: floor LOW, no extra ignores, the default size cap.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ScanOptions {
            root: root.into(),
            severity_floor: Severity::Low,
            ignore: Vec::new(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }
}

/// The outcome of one file.
enum FileOutcome {
    Scanned {
        findings: Vec<Finding>,
        lines: usize,
    },
    Skipped(SkippedFile),
    Failed(FileError),
}

/// Scan a file or folder. Per-file problems (unreadable, parse error, too large) are entries in
/// the report; only an unusable root or bad glob is an `Err`.
pub fn scan(options: &ScanOptions) -> Result<ScanReport, ScanError> {
    let started = Instant::now();
    std::fs::metadata(&options.root).map_err(|source| ScanError::Root {
        path: options.root.clone(),
        source,
    })?;
    let ignore = IgnoreGlobs::new(&options.ignore)?;
    let (candidates, walk_errors) = discover::discover(&options.root, &ignore);
    let outcomes: Vec<FileOutcome> = candidates
        .par_iter()
        .map(|candidate| scan_file(candidate, options))
        .collect();

    let mut report = ScanReport::default();
    report.errors.extend(
        walk_errors
            .into_iter()
            .map(|(file, message)| FileError { file, message }),
    );
    let mut lines = 0;
    for outcome in outcomes {
        match outcome {
            FileOutcome::Scanned {
                findings,
                lines: file_lines,
            } => {
                report.summary.files_scanned += 1;
                lines += file_lines;
                report.findings.extend(findings);
            }
            FileOutcome::Skipped(skipped) => report.skipped.push(skipped),
            FileOutcome::Failed(error) => report.errors.push(error),
        }
    }
    report.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.file.cmp(&b.file))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.column.cmp(&b.column))
    });
    report.summary = Summary {
        files_scanned: report.summary.files_scanned,
        files_skipped: report.skipped.len(),
        lines_scanned: lines,
        by_severity: report::SeverityCounts::count(&report.findings),
        duration_ms: started.elapsed().as_millis() as u64,
    };
    Ok(report)
}

fn scan_file(candidate: &Candidate, options: &ScanOptions) -> FileOutcome {
    let failed = |message: String| {
        FileOutcome::Failed(FileError {
            file: candidate.display.clone(),
            message,
        })
    };
    let size = match std::fs::metadata(&candidate.path) {
        Ok(metadata) => metadata.len(),
        Err(error) => return failed(error.to_string()),
    };
    // Oversized files are listed, never silently dropped (the peer skipped them with exit 0 and
    // no trace, so a payload padded past the cap went unseen).
    if size > options.max_file_size {
        return FileOutcome::Skipped(SkippedFile {
            file: candidate.display.clone(),
            reason: format!(
                "larger than the size cap ({size} > {} bytes)",
                options.max_file_size
            ),
        });
    }
    let bytes = match std::fs::read(&candidate.path) {
        Ok(bytes) => bytes,
        Err(error) => return failed(error.to_string()),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return failed("not valid UTF-8".to_string());
    };
    let source = SourceText::new(&text);
    let analysed = match candidate.language {
        Language::JavaScript => javascript::analyze(&candidate.path, &source),
        Language::Python => python::analyze(&source),
        Language::Rust => rust_lang::analyze(&source),
    };
    let analysis = match analysed {
        Ok(analysis) => analysis,
        // A type declaration file holds no runtime code, so nothing in it can reach a shell.
        // Some published ones are not valid TypeScript (`export = function f(): T;`); they are
        // listed as skipped with the parser's message instead of failing the whole scan.
        Err(message) if is_type_declaration(&candidate.path) => {
            return FileOutcome::Skipped(SkippedFile {
                file: candidate.display.clone(),
                reason: format!(
                    "type declaration file that does not parse ({message}); it holds no runtime code"
                ),
            });
        }
        Err(message) => return failed(format!("parse error: {message}")),
    };
    if analysis.pragmas.ignore_file {
        return FileOutcome::Skipped(SkippedFile {
            file: candidate.display.clone(),
            reason: "ignore-file pragma".to_string(),
        });
    }
    FileOutcome::Scanned {
        findings: findings_of(analysis, &source, candidate, options.severity_floor),
        lines: source.line_count(),
    }
}

/// `.d.ts`, `.d.mts`, `.d.cts`: TypeScript declarations, types only.
fn is_type_declaration(path: &std::path::Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

fn findings_of(
    analysis: Analysis,
    source: &SourceText<'_>,
    candidate: &Candidate,
    floor: Severity,
) -> Vec<Finding> {
    let mut hits = analysis.hits;
    hits.sort_by_key(|hit| (hit.offset, hit.rule));
    hits.dedup_by_key(|hit| (hit.offset, hit.rule));
    hits.into_iter()
        .filter_map(|hit| {
            let (line, column) = source.position(hit.offset);
            if analysis.pragmas.ignored_lines.contains(&line) {
                return None;
            }
            let base_severity = hit.rule.severity();
            let severity = if hit.tainted {
                base_severity.raised()
            } else {
                base_severity
            };
            (severity >= floor).then(|| Finding {
                rule_id: hit.rule.id(),
                severity,
                base_severity,
                file: candidate.display.clone(),
                line,
                column,
                snippet: source.snippet(line),
                message: hit.rule.description(),
                suggested_fix: hit.rule.suggested_fix(),
                tainted_from_tool_input: hit.tainted,
                language: candidate.language,
            })
        })
        .collect()
}

/// Whether the scanner reads a file of this name (by its extension: JavaScript/TypeScript,
/// Python, Rust).
pub fn is_scanned_file(path: &Path) -> bool {
    discover::language_of(path).is_some()
}

/// Scan source text held in memory as if it were a file at `path` (the extension picks the
/// language). Used by tests and by tools that scan an edit before writing it.
pub fn scan_text(path: &Path, text: &str) -> Result<Vec<Finding>, SourceError> {
    let language = discover::language_of(path).ok_or(SourceError::UnsupportedFileType)?;
    let source = SourceText::new(text);
    let analysis = match language {
        Language::JavaScript => javascript::analyze(path, &source)?,
        Language::Python => python::analyze(&source)?,
        Language::Rust => rust_lang::analyze(&source)?,
    };
    if analysis.pragmas.ignore_file {
        return Ok(Vec::new());
    }
    let candidate = Candidate {
        path: path.to_path_buf(),
        display: path.to_string_lossy().into_owned(),
        language,
    };
    Ok(findings_of(analysis, &source, &candidate, Severity::Low))
}
