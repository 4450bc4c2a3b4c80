//! The guard's source-audit tools: `audit_source` runs the project's scanner (the `scan`
//! crate) on a file or folder beneath the operator's `[guard] scan_root`, and
//! `audit_report` renders a scan result as Markdown, JSON or SARIF 2.1.0 (docs/guard.md).
//!
//! mcp-stdio-shellguard's `audit_source` reads any path on the host and returns its lines
//! as snippets. Here the path is resolved by the kernel beneath a handle on `scan_root`
//! (the jail's `openat2(RESOLVE_BENEATH)`): `..` that climbs out, an absolute path
//! elsewhere and a symlink that leads out are `PATH_ESCAPE`. The scanner is then handed the
//! opened handle's `/proc/self/fd/N` name, not the path, so a component swapped for a
//! symlink after the check changes nothing; the report's paths are rewritten back to paths
//! relative to `scan_root`. The scanner's walk follows no symlink: a symlinked file inside
//! the tree is never read.
//!
//! Both functions return an envelope for every input; the guard server records the call.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jail::{Jail, JailError};
use crate::protocol::{self, ArgKind, ArgSpec, MAX_PATH_ARG_BYTES, ShapeError, quote};
use crate::result::{self, Envelope, ResultCode};

/// The tool that scans source beneath `scan_root`.
pub const AUDIT_SOURCE: &str = "audit_source";
/// The tool that renders a scan result.
pub const AUDIT_REPORT: &str = "audit_report";

/// Most `ignoreGlobs` one call may give.
pub(crate) const MAX_IGNORE_GLOBS: usize = 256;
/// Longest glob of `ignoreGlobs`, in bytes.
pub(crate) const MAX_GLOB_BYTES: usize = 1024;
/// Most findings (and, apart, skipped files and errors) `audit_report` renders. A SARIF
/// result is about 1 KiB, so the report stays near 10 MiB; a message line is at most
/// 4 MiB (`MAX_LINE_BYTES`) anyway.
pub(crate) const MAX_REPORT_FINDINGS: usize = 10_000;

/// A severity as the guard's tools name it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AuditSeverity {
    /// Hygiene: a missing limit.
    Low,
    /// A literal program with caller-controlled arguments.
    Medium,
    /// A dynamic program, a shell switched on, or an OS-level process API.
    High,
    /// A shell command or code string built from data.
    Critical,
}

impl AuditSeverity {
    fn from_scan(severity: scan::rule::Severity) -> Self {
        match severity {
            scan::rule::Severity::Low => AuditSeverity::Low,
            scan::rule::Severity::Medium => AuditSeverity::Medium,
            scan::rule::Severity::High => AuditSeverity::High,
            scan::rule::Severity::Critical => AuditSeverity::Critical,
        }
    }

    fn to_scan(self) -> scan::rule::Severity {
        match self {
            AuditSeverity::Low => scan::rule::Severity::Low,
            AuditSeverity::Medium => scan::rule::Severity::Medium,
            AuditSeverity::High => scan::rule::Severity::High,
            AuditSeverity::Critical => scan::rule::Severity::Critical,
        }
    }
}

/// The language a file was analysed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuditLanguage {
    /// `.js .jsx .mjs .cjs .ts .tsx .mts .cts`
    JavaScript,
    /// `.py`
    Python,
    /// `.rs`
    Rust,
}

/// Where a finding's file sits: code that ships, or tests and development scripts (one
/// severity lower, since no MCP client reaches them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuditContext {
    /// Code that ships.
    Production,
    /// Tests, examples and development scripts.
    Test,
}

/// The arguments of `audit_source` as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
#[expect(
    dead_code,
    reason = "only its schema is used; audit_source reads the arguments"
)]
struct AuditSourceInput {
    /// The file or folder to scan, relative to the guard's scan_root (`.` for all of it) or
    /// absolute beneath it. It must stay inside scan_root. At most 4096 bytes.
    #[schemars(length(min = 1, max = MAX_PATH_ARG_BYTES))]
    path: String,
    /// Globs of paths to skip, relative to the scanned folder (a bare name such as `dist`
    /// skips everything below it). At most 256, each at most 1024 bytes.
    #[schemars(length(max = MAX_IGNORE_GLOBS), inner(length(max = MAX_GLOB_BYTES)))]
    ignore_globs: Option<Vec<String>>,
    /// Drop findings below this severity (default LOW: keep all).
    severity_floor: Option<AuditSeverity>,
}

/// What `audit_report` renders: a whole scan result or its findings alone.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(
    dead_code,
    reason = "only its schema is used; audit_report reads the arguments"
)]
enum FindingsInput {
    /// audit_source's detail (or `safe-mcp scan --format json`'s output).
    Report(Map<String, Value>),
    /// An array of findings (objects, as audit_source's detail lists them).
    Findings(Vec<Map<String, Value>>),
}

/// The format `audit_report` renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ReportFormat {
    /// `text/markdown`: a summary and a findings table.
    Markdown,
    /// `application/json`: the scanner's report object.
    Json,
    /// `application/sarif+json`: SARIF 2.1.0.
    Sarif,
}

/// The arguments of `audit_report` as its `inputSchema` describes them.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "only its schema is used; audit_report reads the arguments"
)]
struct AuditReportInput {
    /// A scan result as audit_source's detail returns it (or `safe-mcp scan --format json`
    /// writes it), or an array of its findings. At most 10000 findings.
    findings: FindingsInput,
    /// The rendering.
    format: ReportFormat,
}

/// The `inputSchema` of an audit tool (`None` for another name).
pub fn input_schema(tool: &str) -> Option<Map<String, Value>> {
    match tool {
        AUDIT_SOURCE => Some(result::input_schema::<AuditSourceInput>()),
        AUDIT_REPORT => Some(result::input_schema::<AuditReportInput>()),
        _ => None,
    }
}

/// The `outputSchema` of an audit tool (`None` for another name).
pub fn output_schema(tool: &str) -> Option<Map<String, Value>> {
    match tool {
        AUDIT_SOURCE => Some(result::output_schema::<AuditSourceDetail>()),
        AUDIT_REPORT => Some(result::output_schema::<AuditReportDetail>()),
        _ => None,
    }
}

/// One finding of `audit_source`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditFinding {
    /// The rule's stable id, e.g. `exec_template_literal_with_input`.
    pub id: String,
    /// Effective severity (the rule's, raised one step when tainted by tool input).
    pub severity: AuditSeverity,
    /// The file, relative to scan_root.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column in UTF-16 code units.
    pub column: u64,
    /// The source line, trimmed.
    pub snippet: String,
    /// What to do about it.
    pub suggested_fix: String,
    /// What the rule found.
    pub message: String,
    /// The rule's own severity before any raise.
    pub base_severity: AuditSeverity,
    /// The dangerous argument flows from an MCP tool handler's parameter.
    pub tainted_from_tool_input: bool,
    /// The language the file was analysed as.
    pub language: AuditLanguage,
    /// Production code, or tests and development scripts (reported one severity lower).
    pub context: AuditContext,
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AuditSeverityCounts {
    /// LOW findings.
    #[serde(rename = "LOW")]
    pub low: u64,
    /// MEDIUM findings.
    #[serde(rename = "MEDIUM")]
    pub medium: u64,
    /// HIGH findings.
    #[serde(rename = "HIGH")]
    pub high: u64,
    /// CRITICAL findings.
    #[serde(rename = "CRITICAL")]
    pub critical: u64,
}

/// The totals of one scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditSummary {
    /// Files parsed and analysed.
    pub files_scanned: u64,
    /// Files not analysed on purpose (size cap, ignore-file pragma).
    pub files_skipped: u64,
    /// Lines in the analysed files.
    pub lines_scanned: u64,
    /// Findings per severity, after the floor.
    pub by_severity: AuditSeverityCounts,
    /// Wall time of the scan, in milliseconds.
    pub duration_ms: u64,
}

/// A file that could not be read or parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AuditError {
    /// The file, relative to scan_root.
    pub file: String,
    /// What went wrong.
    pub message: String,
}

/// A file deliberately not analysed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AuditSkipped {
    /// The file, relative to scan_root.
    pub file: String,
    /// Why (size cap, pragma).
    pub reason: String,
}

/// `detail` of `audit_source`: the scan result, every path relative to scan_root. A
/// refused call has none of these fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditSourceDetail {
    /// Findings, most severe first, then by file, line and column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<AuditFinding>>,
    /// The totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<AuditSummary>,
    /// Files that could not be read or parsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<AuditError>>,
    /// Files skipped on purpose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Vec<AuditSkipped>>,
}

/// `detail` of `audit_report`. A refused call has none of these fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditReportDetail {
    /// The rendered report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// `text/markdown`, `application/json` or `application/sarif+json`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// The arguments of `audit_source`.
const SOURCE_ARGUMENTS: &[ArgSpec] = &[
    ArgSpec {
        name: "path",
        required: true,
        kind: ArgKind::String,
        must_be: "a string: the file or folder to scan, relative to the guard's scan_root",
    },
    ArgSpec {
        name: "ignoreGlobs",
        required: false,
        kind: ArgKind::Array,
        must_be: "an array of strings: globs of paths to skip",
    },
    ArgSpec {
        name: "severityFloor",
        required: false,
        kind: ArgKind::String,
        must_be: "one of LOW, MEDIUM, HIGH, CRITICAL",
    },
];

/// The arguments of `audit_report`; `findings` is last, because it may be an array too.
const REPORT_ARGUMENTS: &[ArgSpec] = &[
    ArgSpec {
        name: "format",
        required: true,
        kind: ArgKind::String,
        must_be: "one of markdown, json, sarif",
    },
    ArgSpec {
        name: "findings",
        required: true,
        kind: ArgKind::Object,
        must_be: "a scan result (audit_source's detail) or an array of findings",
    },
];

/// Why `audit_source` scanned nothing. Each becomes an envelope in `AuditRefusal::envelope`,
/// the one place that picks its code.
#[derive(Debug, thiserror::Error)]
enum AuditRefusal {
    /// The arguments are malformed.
    #[error("{0}")]
    Invalid(String),
    /// No `[guard] scan_root`.
    #[error("this guard has no [guard] scan_root: source scans are off")]
    NoScanRoot,
    /// The path leads out of scan_root.
    #[error("'path' '{}' leads outside the guard's scan_root; nothing was read", quote(.0))]
    Escape(String),
    /// scan_root itself or the scan failed.
    #[error("{0}")]
    Failed(String),
}

impl AuditRefusal {
    fn envelope<D: Default>(&self, tool: &str) -> Envelope<D> {
        let code = match self {
            AuditRefusal::Invalid(_) => ResultCode::InvalidRequest,
            AuditRefusal::NoScanRoot => ResultCode::PolicyDenied,
            AuditRefusal::Escape(_) => ResultCode::PathEscape,
            AuditRefusal::Failed(_) => ResultCode::OperationFailed,
        };
        Envelope::with(tool, code, self.to_string(), D::default())
    }
}

impl From<ShapeError> for AuditRefusal {
    fn from(error: ShapeError) -> Self {
        AuditRefusal::Invalid(error.to_string())
    }
}

/// The checked arguments of `audit_source`.
#[derive(Debug)]
struct SourceArgs {
    path: String,
    ignore_globs: Vec<String>,
    floor: AuditSeverity,
}

impl SourceArgs {
    fn from_json(args: Option<&Map<String, Value>>) -> Result<Self, AuditRefusal> {
        protocol::check_shape(AUDIT_SOURCE, args, SOURCE_ARGUMENTS)?;
        let empty = Map::new();
        let args = args.unwrap_or(&empty);
        let path = match args.get("path") {
            Some(Value::String(path)) => path.clone(),
            _ => String::new(),
        };
        // A 1 MiB path would be quoted by every reason and kept by the audit record.
        if path.len() > MAX_PATH_ARG_BYTES {
            return Err(AuditRefusal::Invalid(format!(
                "'path' is {} bytes; the limit is {MAX_PATH_ARG_BYTES} bytes",
                path.len()
            )));
        }
        if path.is_empty() {
            return Err(AuditRefusal::Invalid(
                "'path' is empty: name a file or folder inside scan_root ('.' for all of it)"
                    .into(),
            ));
        }
        if path.contains('\0') {
            return Err(AuditRefusal::Invalid("'path' contains a NUL byte".into()));
        }
        let mut ignore_globs = Vec::new();
        if let Some(Value::Array(globs)) = args.get("ignoreGlobs") {
            // Each glob is compiled into one set: 10 000 of them cost time and memory.
            if globs.len() > MAX_IGNORE_GLOBS {
                return Err(AuditRefusal::Invalid(format!(
                    "'ignoreGlobs' has {} entries; at most {MAX_IGNORE_GLOBS} are accepted",
                    globs.len()
                )));
            }
            for (index, glob) in globs.iter().enumerate() {
                match glob {
                    Value::String(glob) if glob.len() > MAX_GLOB_BYTES => {
                        return Err(AuditRefusal::Invalid(format!(
                            "'ignoreGlobs'[{index}] is {} bytes; the limit is {MAX_GLOB_BYTES} \
                             bytes",
                            glob.len()
                        )));
                    }
                    Value::String(glob) => ignore_globs.push(glob.clone()),
                    other => {
                        return Err(AuditRefusal::Invalid(format!(
                            "'ignoreGlobs'[{index}] must be a string; got {}",
                            protocol::json_type(other)
                        )));
                    }
                }
            }
        }
        let floor = match args.get("severityFloor") {
            Some(Value::String(name)) => severity_named(name).ok_or_else(|| {
                AuditRefusal::Invalid(format!(
                    "'severityFloor' must be one of LOW, MEDIUM, HIGH, CRITICAL; got '{}'",
                    quote(name)
                ))
            })?,
            _ => AuditSeverity::Low,
        };
        Ok(SourceArgs {
            path,
            ignore_globs,
            floor,
        })
    }
}

fn severity_named(name: &str) -> Option<AuditSeverity> {
    scan::rule::Severity::from_name(name).map(AuditSeverity::from_scan)
}

/// The scan target: an open handle beneath scan_root and its path relative to it.
#[derive(Debug)]
struct Target {
    handle: OwnedFd,
    relative: PathBuf,
    is_folder: bool,
}

impl Target {
    /// The kernel's name for the handle, for the scanner to open.
    fn fd_path(&self) -> String {
        format!("/proc/self/fd/{}", self.handle.as_raw_fd())
    }
}

/// Run the scanner on `path` beneath `scan_root` (the guard's `[guard] scan_root`; `None`
/// turns the tool off). Every input gets an envelope: `OK` with the scan result,
/// `INVALID_REQUEST` for malformed arguments, `PATH_ESCAPE` for a path that leads out of
/// `scan_root`, `POLICY_DENIED` without a `scan_root`. The scan runs on the calling
/// thread (and the scanner's thread pool): call it where blocking is allowed.
pub fn audit_source(
    scan_root: Option<&Path>,
    args: Option<&Map<String, Value>>,
) -> Envelope<AuditSourceDetail> {
    match run_audit_source(scan_root, args) {
        Ok((detail, reason)) => Envelope::with(AUDIT_SOURCE, ResultCode::Ok, reason, detail),
        Err(refusal) => refusal.envelope(AUDIT_SOURCE),
    }
}

fn run_audit_source(
    scan_root: Option<&Path>,
    args: Option<&Map<String, Value>>,
) -> Result<(AuditSourceDetail, String), AuditRefusal> {
    let args = SourceArgs::from_json(args)?;
    let scan_root = scan_root.ok_or(AuditRefusal::NoScanRoot)?;
    let root = std::fs::canonicalize(scan_root).map_err(|e| {
        AuditRefusal::Failed(format!(
            "the guard's scan_root '{}' cannot be opened: {e}",
            quote(&scan_root.to_string_lossy())
        ))
    })?;
    let jail = Jail::open(&root).map_err(|e| AuditRefusal::Failed(e.to_string()))?;
    let target = open_target(&jail, &args.path)?;
    let report = if target.is_folder {
        scan_folder(&target, &args)?
    } else {
        scan_file(&target, args.floor)?
    };
    let detail = detail_of(report, &target);
    let reason = summary_reason(&detail, &target.relative);
    Ok((detail, reason))
}

/// Scan the one file `path` names beneath `root`, opened as `audit_source` opens it (the
/// kernel resolves it beneath the root; the file itself is not followed if it is a
/// symlink), with findings of every severity; file names in the report are relative to
/// the root. For the agent hooks, which scan a file the agent just wrote. `Err` says why
/// nothing was scanned (outside the root, not a regular file, unreadable).
pub(crate) fn scan_file_beneath(
    root: &Path,
    path: &str,
) -> Result<scan::report::ScanReport, String> {
    let jail = Jail::open(root).map_err(|e| e.to_string())?;
    let target = open_target(&jail, path).map_err(|e| e.to_string())?;
    if target.is_folder {
        return Err(format!("'{}' is a folder, not a file", quote(path)));
    }
    scan_file(&target, AuditSeverity::Low).map_err(|e| e.to_string())
}

/// One sentence: what was scanned and what was found.
fn summary_reason(detail: &AuditSourceDetail, relative: &Path) -> String {
    let summary = detail.summary.unwrap_or_default();
    let counts = summary.by_severity;
    let found = counts.critical + counts.high + counts.medium + counts.low;
    let shown = if relative.as_os_str().is_empty() {
        ".".to_string()
    } else {
        relative.to_string_lossy().into_owned()
    };
    format!(
        "scanned '{}': {} ({}), {}: CRITICAL={} HIGH={} MEDIUM={} LOW={}",
        quote(&shown),
        protocol::count(summary.files_scanned, "file", "files"),
        protocol::count(summary.lines_scanned, "line", "lines"),
        protocol::count(found, "finding", "findings"),
        counts.critical,
        counts.high,
        counts.medium,
        counts.low
    )
}

/// Open `path` beneath the jail's root. A folder (or the root) is opened by the kernel in
/// one walk that refuses every way out; a file is opened from its folder's handle with
/// `O_NOFOLLOW`, so the file itself cannot be a symlink swapped in after the check.
fn open_target(jail: &Jail, path: &str) -> Result<Target, AuditRefusal> {
    let escape = || AuditRefusal::Escape(path.to_string());
    // A folder, through the kernel: `..` above the root, an absolute path elsewhere, a
    // symlink (anywhere on the way, absolute or relative) that leads out: all refused.
    match jail.resolve_cwd(Some(path)) {
        Ok(folder) => {
            let handle = folder
                .handle_fd()
                .try_clone_to_owned()
                .map_err(|e| AuditRefusal::Failed(format!("the folder cannot be opened: {e}")))?;
            return Ok(Target {
                handle,
                relative: folder.relative().to_path_buf(),
                is_folder: true,
            });
        }
        Err(JailError::Escape { .. } | JailError::ArgEscape { .. }) => return Err(escape()),
        Err(JailError::Root { message, .. }) => {
            return Err(AuditRefusal::Failed(format!(
                "the guard's scan_root cannot be opened: {message}"
            )));
        }
        // Not a folder (or missing): perhaps a file.
        Err(JailError::Invalid { .. }) => {}
    }
    let given = Path::new(path);
    let Some(Component::Normal(name)) = given.components().next_back() else {
        return Err(AuditRefusal::Invalid(format!(
            "'path' '{}' does not name a file or folder inside scan_root",
            quote(path)
        )));
    };
    let parent = given
        .parent()
        .map(Path::to_string_lossy)
        .unwrap_or_default();
    // The folder holding the file, through the kernel as above.
    let folder = match jail.resolve_cwd(Some(&parent)) {
        Ok(folder) => folder,
        Err(JailError::Escape { .. } | JailError::ArgEscape { .. }) => return Err(escape()),
        Err(_) => {
            return Err(AuditRefusal::Invalid(format!(
                "'path' '{}' does not exist inside scan_root",
                quote(path)
            )));
        }
    };
    // One plain name from a handle beneath the root, not followed if it is a symlink: it
    // cannot name anything outside that folder.
    let handle = match rustix::fs::openat(
        folder.handle_fd(),
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(handle) => handle,
        Err(Errno::NOENT) => {
            return Err(AuditRefusal::Invalid(format!(
                "'path' '{}' does not exist inside scan_root",
                quote(path)
            )));
        }
        Err(e) => {
            return Err(AuditRefusal::Failed(format!(
                "'path' '{}' cannot be opened: {e}",
                quote(path)
            )));
        }
    };
    let stat = rustix::fs::fstat(&handle)
        .map_err(|e| AuditRefusal::Failed(format!("'path' cannot be examined: {e}")))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        // The resolve above refused it as a folder, so this symlink points at a file (or
        // nowhere) inside scan_root; the scanner reads no symlinked file.
        FileType::Symlink => {
            return Err(AuditRefusal::Invalid(format!(
                "'path' '{}' is a symlink to a file: the scanner reads no symlinked file; name \
                 the file it points to",
                quote(path)
            )));
        }
        // Swapped for a folder since the resolve: scan it from this handle.
        FileType::Directory => {}
        _ => {
            return Err(AuditRefusal::Invalid(format!(
                "'path' '{}' is neither a regular file nor a folder",
                quote(path)
            )));
        }
    }
    let is_folder = FileType::from_raw_mode(stat.st_mode) == FileType::Directory;
    let relative = jail.relative_name(&handle).ok_or_else(escape)?;
    Ok(Target {
        handle,
        relative,
        is_folder,
    })
}

/// Scan a folder through its handle's `/proc/self/fd/N` name.
fn scan_folder(
    target: &Target,
    args: &SourceArgs,
) -> Result<scan::report::ScanReport, AuditRefusal> {
    let mut options = scan::ScanOptions::new(target.fd_path());
    options.severity_floor = args.floor.to_scan();
    options.ignore = args.ignore_globs.clone();
    scan::scan(&options).map_err(|error| match error {
        scan::error::ScanError::BadGlob { glob, source } => AuditRefusal::Invalid(format!(
            "'ignoreGlobs' holds a glob that does not compile ('{}': {source})",
            quote(&glob)
        )),
        other => AuditRefusal::Failed(format!("the scan could not run: {other}")),
    })
}

/// Scan one file read through its handle. The scanner picks the language by the file's
/// name, which `/proc/self/fd/N` does not have, so the file is read here (as the scanner
/// would: size cap, UTF-8) and its text handed to `scan::scan_text` under its name.
fn scan_file(
    target: &Target,
    floor: AuditSeverity,
) -> Result<scan::report::ScanReport, AuditRefusal> {
    use std::io::Read;

    let started = std::time::Instant::now();
    let mut report = scan::report::ScanReport::default();
    let display = target.relative.to_string_lossy().into_owned();
    let fail = |message: String| scan::report::FileError {
        file: display.clone(),
        message,
    };
    // Reopening the O_PATH handle through /proc opens the same file, never a new name.
    let outcome = (|| -> Result<Option<String>, scan::report::FileError> {
        let file = std::fs::File::open(target.fd_path()).map_err(|e| fail(e.to_string()))?;
        let cap = scan::DEFAULT_MAX_FILE_SIZE;
        let mut bytes = Vec::new();
        file.take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| fail(e.to_string()))?;
        if bytes.len() as u64 > cap {
            return Ok(None);
        }
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| fail("not valid UTF-8".into()))
    })();
    match outcome {
        Err(error) => report.errors.push(error),
        Ok(None) => report.skipped.push(scan::report::SkippedFile {
            file: display.clone(),
            reason: format!(
                "larger than the size cap ({} bytes)",
                scan::DEFAULT_MAX_FILE_SIZE
            ),
        }),
        Ok(Some(text)) => match scan::scan_text(&target.relative, &text) {
            Ok(findings) => {
                report.summary.files_scanned = 1;
                report.summary.lines_scanned = text.lines().count();
                report.findings = findings
                    .into_iter()
                    .filter(|f| f.severity >= floor.to_scan())
                    .collect();
            }
            Err(scan::error::SourceError::UnsupportedFileType) => {
                report.errors.push(fail("unsupported file type".into()));
            }
            Err(error) => report.errors.push(fail(format!("parse error: {error}"))),
        },
    }
    report.summary.files_skipped = report.skipped.len();
    report.summary.by_severity = scan::report::SeverityCounts::count(&report.findings);
    report.summary.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(report)
}

/// The report as audit_source's detail: every `/proc/self/fd/N` name rewritten to the
/// path relative to scan_root.
fn detail_of(report: scan::report::ScanReport, target: &Target) -> AuditSourceDetail {
    let prefix = target.fd_path();
    let base = target.relative.to_string_lossy().into_owned();
    let file = |name: &str| -> String {
        match name.strip_prefix(&prefix) {
            Some(rest) => {
                let rest = rest.trim_start_matches('/');
                match (base.is_empty(), rest.is_empty()) {
                    (true, true) => ".".to_string(),
                    (true, false) => rest.to_string(),
                    (false, true) => base.clone(),
                    (false, false) => format!("{base}/{rest}"),
                }
            }
            None => name.to_string(),
        }
    };
    // Messages (an I/O error of the walk) may quote the name too.
    let shown_base = if base.is_empty() { "." } else { base.as_str() };
    let text = |message: &str| -> String {
        message
            .replace(&format!("{prefix}/"), &format!("{shown_base}/"))
            .replace(&prefix, shown_base)
    };
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    let summary = &report.summary;
    let counts = &summary.by_severity;
    AuditSourceDetail {
        summary: Some(AuditSummary {
            files_scanned: count(summary.files_scanned),
            files_skipped: count(summary.files_skipped),
            lines_scanned: count(summary.lines_scanned),
            by_severity: AuditSeverityCounts {
                low: count(counts.low),
                medium: count(counts.medium),
                high: count(counts.high),
                critical: count(counts.critical),
            },
            duration_ms: summary.duration_ms,
        }),
        findings: Some(
            report
                .findings
                .iter()
                .map(|f| AuditFinding {
                    id: f.rule_id.to_string(),
                    severity: AuditSeverity::from_scan(f.severity),
                    file: file(&f.file),
                    line: count(f.line),
                    column: count(f.column),
                    snippet: f.snippet.clone(),
                    suggested_fix: f.suggested_fix.to_string(),
                    message: f.message.to_string(),
                    base_severity: AuditSeverity::from_scan(f.base_severity),
                    tainted_from_tool_input: f.tainted_from_tool_input,
                    language: match f.language {
                        scan::finding::Language::JavaScript => AuditLanguage::JavaScript,
                        scan::finding::Language::Python => AuditLanguage::Python,
                        scan::finding::Language::Rust => AuditLanguage::Rust,
                    },
                    context: match f.context {
                        scan::finding::Context::Production => AuditContext::Production,
                        scan::finding::Context::Test => AuditContext::Test,
                    },
                })
                .collect(),
        ),
        errors: Some(
            report
                .errors
                .iter()
                .map(|e| AuditError {
                    file: file(&e.file),
                    message: text(&e.message),
                })
                .collect(),
        ),
        skipped: Some(
            report
                .skipped
                .iter()
                .map(|s| AuditSkipped {
                    file: file(&s.file),
                    reason: text(&s.reason),
                })
                .collect(),
        ),
    }
}

/// Render a scan result (audit_source's detail, the scanner's JSON, or a findings array)
/// as Markdown, JSON or SARIF. Malformed input, an unknown rule id (named by its index) or
/// more than 10000 findings is `INVALID_REQUEST`.
pub fn audit_report(args: Option<&Map<String, Value>>) -> Envelope<AuditReportDetail> {
    match run_audit_report(args) {
        Ok((detail, reason)) => Envelope::with(AUDIT_REPORT, ResultCode::Ok, reason, detail),
        Err(refusal) => refusal.envelope(AUDIT_REPORT),
    }
}

fn run_audit_report(
    args: Option<&Map<String, Value>>,
) -> Result<(AuditReportDetail, String), AuditRefusal> {
    match protocol::check_shape(AUDIT_REPORT, args, REPORT_ARGUMENTS) {
        Ok(()) => {}
        // `findings` may be an array too (mcp-stdio-shellguard throws on one).
        Err(ShapeError::WrongType {
            name: "findings", ..
        }) if args
            .and_then(|a| a.get("findings"))
            .is_some_and(Value::is_array) => {}
        Err(error) => return Err(error.into()),
    }
    let empty = Map::new();
    let args = args.unwrap_or(&empty);
    let (format, mime_type) = match args.get("format").and_then(Value::as_str) {
        Some("markdown") => (scan::report::Format::Markdown, "text/markdown"),
        Some("json") => (scan::report::Format::Json, "application/json"),
        Some("sarif") => (scan::report::Format::Sarif, "application/sarif+json"),
        other => {
            return Err(AuditRefusal::Invalid(format!(
                "'format' must be one of markdown, json, sarif; got '{}'",
                quote(other.unwrap_or(""))
            )));
        }
    };
    let findings = args.get("findings").unwrap_or(&Value::Null);
    // A whole envelope handed back: its detail is the scan result.
    let findings = match findings {
        Value::Object(object) if !object.contains_key("findings") => match object.get("detail") {
            Some(detail @ Value::Object(_)) => detail,
            _ => findings,
        },
        _ => findings,
    };
    let report = scan::report::ScanReport::from_json(findings, MAX_REPORT_FINDINGS)
        .map_err(|error| AuditRefusal::Invalid(format!("'findings': {error}")))?;
    let text = report
        .render(format)
        .map_err(|e| AuditRefusal::Failed(format!("the report could not be rendered: {e}")))?;
    let reason = format!(
        "rendered {} as {}",
        protocol::count(report.findings.len(), "finding", "findings"),
        mime_type
    );
    Ok((
        AuditReportDetail {
            report: Some(text),
            mime_type: Some(mime_type.to_string()),
        },
        reason,
    ))
}
