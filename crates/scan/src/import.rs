//! A report read back from JSON: what `safe-mcp scan --format json` writes (snake_case
//! names), the same result with camelCase names (the guard's `audit_source` detail,
//! mcp-stdio-shellguard's scan result), or a bare array of findings.
//!
//! A [`Finding`] carries its rule's texts as `&'static str`, so a finding is rebuilt by
//! looking its rule id up in the rule table ([`Rule::from_id`]): the message and the fix
//! come from the table, never from the input, and an id the table does not have is an
//! error naming the finding's index. Severity counts are recomputed from the findings.

use serde_json::{Map, Value};

use crate::discover::language_of;
use crate::finding::{Finding, Language};
use crate::report::{FileError, ScanReport, ScanRoot, SeverityCounts, SkippedFile, Summary};
use crate::rule::{Rule, Severity};

/// Longest `file` of an imported entry, in bytes (Linux `PATH_MAX`).
pub const MAX_IMPORTED_PATH_BYTES: usize = 4096;

/// Why a JSON value is not a scan report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The value is neither an object with a `findings` array nor an array.
    #[error("{0}")]
    Shape(String),
    /// More entries in one list than the caller allows.
    #[error("'{list}' has {count} entries; at most {max} are accepted")]
    TooMany {
        /// `findings`, `skipped` or `errors`.
        list: &'static str,
        /// How many were given.
        count: usize,
        /// The bound.
        max: usize,
    },
    /// One entry of a list is malformed.
    #[error("{list}[{index}]: {reason}")]
    Entry {
        /// `findings`, `skipped` or `errors`.
        list: &'static str,
        /// Its 0-based index.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A field of `summary` is malformed.
    #[error("summary.{field} must be a whole number, at least 0")]
    Summary {
        /// The field as first spelled (snake_case).
        field: &'static str,
    },
}

impl ScanReport {
    /// Rebuild a report from `value`: an object with a `findings` array (and optionally
    /// `summary`, `skipped`, `errors`), with snake_case or camelCase names, or a bare array
    /// of findings. A finding's rule id may be spelled `rule_id`, `ruleId` or `id`; it must
    /// be one of the rule table's. Each list may hold at most `max_entries` entries.
    /// Unknown keys are ignored; severity counts are recomputed from the findings.
    pub fn from_json(value: &Value, max_entries: usize) -> Result<ScanReport, ImportError> {
        let (findings, object) = match value {
            Value::Array(items) => (items, None),
            Value::Object(object) => match object.get("findings") {
                Some(Value::Array(items)) => (items, Some(object)),
                Some(_) => {
                    return Err(ImportError::Shape("'findings' must be an array".into()));
                }
                None => {
                    return Err(ImportError::Shape(
                        "an object without a 'findings' array is not a scan result".into(),
                    ));
                }
            },
            _ => {
                return Err(ImportError::Shape(
                    "a scan result is an object with a 'findings' array, or an array of findings"
                        .into(),
                ));
            }
        };
        let findings = entries(findings, "findings", max_entries, finding_from_json)?;
        let list = |name: &'static str| match object.and_then(|o| o.get(name)) {
            None | Some(Value::Null) => Ok(&[][..]),
            Some(Value::Array(items)) => Ok(items.as_slice()),
            Some(_) => Err(ImportError::Shape(format!("'{name}' must be an array"))),
        };
        let skipped = entries(list("skipped")?, "skipped", max_entries, |entry| {
            Ok(SkippedFile {
                file: file_of(entry)?,
                reason: text_of(entry, &["reason"])?,
            })
        })?;
        let errors = entries(list("errors")?, "errors", max_entries, |entry| {
            Ok(FileError {
                file: file_of(entry)?,
                message: text_of(entry, &["message"])?,
            })
        })?;
        let summary = match object.and_then(|o| o.get("summary")) {
            Some(Value::Object(summary)) => Some(summary),
            None | Some(Value::Null) => None,
            Some(_) => return Err(ImportError::Shape("'summary' must be an object".into())),
        };
        let number = |names: [&'static str; 2]| -> Result<u64, ImportError> {
            match summary.and_then(|s| lookup(s, &names)) {
                None | Some(Value::Null) => Ok(0),
                Some(v) => v.as_u64().ok_or(ImportError::Summary { field: names[0] }),
            }
        };
        let as_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let files_skipped =
            match summary.and_then(|s| lookup(s, &["files_skipped", "filesSkipped"])) {
                None | Some(Value::Null) => skipped.len(),
                Some(_) => as_usize(number(["files_skipped", "filesSkipped"])?),
            };
        let summary = Summary {
            files_scanned: as_usize(number(["files_scanned", "filesScanned"])?),
            files_skipped,
            lines_scanned: as_usize(number(["lines_scanned", "linesScanned"])?),
            by_severity: SeverityCounts::count(&findings),
            duration_ms: number(["duration_ms", "durationMs"])?,
        };
        let root = match object.and_then(|o| o.get("root")) {
            None | Some(Value::Null) => None,
            Some(Value::Object(root)) => Some(ScanRoot {
                path: text_of(root, &["path"])
                    .ok()
                    .filter(|path| path.len() <= MAX_IMPORTED_PATH_BYTES)
                    .ok_or_else(|| {
                        ImportError::Shape(format!(
                            "'root.path' must be a string of at most {MAX_IMPORTED_PATH_BYTES} bytes"
                        ))
                    })?,
                file: root.get("file").and_then(Value::as_bool).unwrap_or(false),
                uri: root
                    .get("uri")
                    .and_then(Value::as_str)
                    .filter(|uri| uri.starts_with("file:///") && uri.ends_with('/'))
                    .map(str::to_string),
            }),
            Some(_) => return Err(ImportError::Shape("'root' must be an object".into())),
        };
        Ok(ScanReport {
            root,
            findings,
            summary,
            skipped,
            errors,
            read_files: Vec::new(),
        })
    }
}

/// Each item of `items` through `read`, its error given the list name and index.
fn entries<T>(
    items: &[Value],
    list: &'static str,
    max: usize,
    read: impl Fn(&Map<String, Value>) -> Result<T, String>,
) -> Result<Vec<T>, ImportError> {
    if items.len() > max {
        return Err(ImportError::TooMany {
            list,
            count: items.len(),
            max,
        });
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let entry_error = |reason: String| ImportError::Entry {
                list,
                index,
                reason,
            };
            match item {
                Value::Object(entry) => read(entry).map_err(entry_error),
                _ => Err(entry_error("must be an object".into())),
            }
        })
        .collect()
}

/// The first of `names` present in `entry`.
fn lookup<'a>(entry: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|name| entry.get(*name))
}

/// A required string field.
fn text_of(entry: &Map<String, Value>, names: &[&str]) -> Result<String, String> {
    match lookup(entry, names) {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(format!("'{}' must be a string", names.join("' or '"))),
        None => Err(format!("'{}' is missing", names.join("' or '"))),
    }
}

/// The `file` field, bounded.
fn file_of(entry: &Map<String, Value>) -> Result<String, String> {
    let file = text_of(entry, &["file"])?;
    if file.len() > MAX_IMPORTED_PATH_BYTES {
        return Err(format!(
            "'file' is {} bytes; the limit is {MAX_IMPORTED_PATH_BYTES}",
            file.len()
        ));
    }
    Ok(file)
}

/// An optional severity field (`LOW` .. `CRITICAL`).
fn severity_of(entry: &Map<String, Value>, names: &[&str]) -> Result<Option<Severity>, String> {
    match lookup(entry, names) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(name)) => Severity::from_name(name).map(Some).ok_or_else(|| {
            format!(
                "'{}' must be LOW, MEDIUM, HIGH or CRITICAL",
                names.first().copied().unwrap_or("severity")
            )
        }),
        Some(_) => Err(format!(
            "'{}' must be a string",
            names.first().copied().unwrap_or("severity")
        )),
    }
}

/// A required position field (a whole number).
fn position_of(entry: &Map<String, Value>, name: &str) -> Result<usize, String> {
    match entry.get(name) {
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("'{name}' must be a whole number, at least 0")),
        None => Err(format!("'{name}' is missing")),
    }
}

/// One finding, its texts from the rule table.
fn finding_from_json(entry: &Map<String, Value>) -> Result<Finding, String> {
    let id = text_of(entry, &["rule_id", "ruleId", "id"])?;
    let rule = Rule::from_id(&id).ok_or_else(|| {
        let shown: String = id.chars().take(64).collect();
        format!("unknown rule id {shown:?}: the scanner has no such rule")
    })?;
    let file = file_of(entry)?;
    let base_severity =
        severity_of(entry, &["base_severity", "baseSeverity"])?.unwrap_or(rule.severity());
    let severity = severity_of(entry, &["severity"])?.unwrap_or(base_severity);
    let snippet = match entry.get("snippet") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(snippet)) => snippet.clone(),
        Some(_) => return Err("'snippet' must be a string".into()),
    };
    let tainted_from_tool_input =
        match lookup(entry, &["tainted_from_tool_input", "taintedFromToolInput"]) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(tainted)) => *tainted,
            Some(_) => return Err("'tainted_from_tool_input' must be true or false".into()),
        };
    let language = match entry.get("language") {
        None | Some(Value::Null) => {
            // mcp-stdio-shellguard's findings carry no language; it scans only JavaScript
            // and TypeScript.
            language_of(std::path::Path::new(&file)).unwrap_or(Language::JavaScript)
        }
        Some(Value::String(name)) => match name.as_str() {
            "javascript" => Language::JavaScript,
            "python" => Language::Python,
            "rust" => Language::Rust,
            _ => return Err("'language' must be javascript, python or rust".into()),
        },
        Some(_) => return Err("'language' must be a string".into()),
    };
    let context = match entry.get("context") {
        None | Some(Value::Null) => crate::finding::Context::of(std::path::Path::new(&file)),
        Some(Value::String(name)) if name == "production" => crate::finding::Context::Production,
        Some(Value::String(name)) if name == "test" => crate::finding::Context::Test,
        Some(_) => return Err("'context' must be production or test".into()),
    };
    Ok(Finding {
        rule_id: rule.id(),
        severity,
        base_severity,
        file,
        line: position_of(entry, "line")?,
        column: position_of(entry, "column")?,
        snippet,
        message: rule.description(),
        suggested_fix: rule.suggested_fix(),
        tainted_from_tool_input,
        language,
        context,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_scanners_own_json_reads_back_to_the_same_report() {
        let findings = crate::scan_text(
            std::path::Path::new("server.js"),
            "const { exec } = require('child_process');\nexec(`git ${process.argv[2]}`);\n",
        )
        .unwrap();
        assert!(!findings.is_empty());
        let mut report = ScanReport {
            findings,
            ..ScanReport::default()
        };
        report.summary.files_scanned = 1;
        report.summary.lines_scanned = 2;
        report.summary.by_severity = SeverityCounts::count(&report.findings);
        report.errors.push(FileError {
            file: "bad.js".into(),
            message: "parse error: x".into(),
        });
        let written: Value =
            serde_json::from_str(&report.render(crate::report::Format::Json).unwrap()).unwrap();
        let read = ScanReport::from_json(&written, 100).unwrap();
        let rewritten: Value =
            serde_json::from_str(&read.render(crate::report::Format::Json).unwrap()).unwrap();
        assert_eq!(written, rewritten);
    }

    #[test]
    fn camel_case_and_bare_arrays_are_read_and_unknown_rules_refused() {
        let finding = json!({"id": "exec_dynamic_string", "severity": "CRITICAL", "file": "a.ts",
            "line": 3, "column": 5, "snippet": "exec(x)", "suggestedFix": "ignored",
            "taintedFromToolInput": true});
        let report = ScanReport::from_json(&json!([finding]), 10).unwrap();
        let only = &report.findings[0];
        assert_eq!(only.rule_id, "exec_dynamic_string");
        assert_eq!(only.suggested_fix, Rule::ExecDynamicString.suggested_fix());
        assert!(only.tainted_from_tool_input);
        assert_eq!(report.summary.by_severity.critical, 1);

        let unknown = json!([finding, {"id": "rm_rf", "file": "a.js", "line": 1, "column": 1}]);
        let error = ScanReport::from_json(&unknown, 10).unwrap_err();
        assert!(
            matches!(error, ImportError::Entry { index: 1, .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains("findings[1]: unknown rule id"),
            "{error}"
        );
        assert!(matches!(
            ScanReport::from_json(&json!([finding, finding]), 1),
            Err(ImportError::TooMany {
                count: 2,
                max: 1,
                ..
            })
        ));
        for bad in [json!("x"), json!({"summary": {}}), json!({"findings": {}})] {
            assert!(matches!(
                ScanReport::from_json(&bad, 10),
                Err(ImportError::Shape(_))
            ));
        }
        let bad_line = json!([{"id": "missing_timeout", "file": "a.js", "line": -1, "column": 1}]);
        assert!(ScanReport::from_json(&bad_line, 10).is_err());
    }
}
