//! The whole sandbox report of a `run_command`, read where it is kept: its audit record.
//! A result carries only the one-line summary (and the whole report when something was
//! downgraded), so the benchmark and the tests that judge a mechanism read the record, and
//! check on the way that the result agrees with it. The safety crate's sandbox tests use it
//! too (std and serde_json only, so it compiles in either crate).
#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value yields Null, it does not panic"
)]

use std::path::Path;

use serde_json::Value;

/// What went wrong, in words.
type Result<T> = std::result::Result<T, String>;

/// `Err(message)` unless `ok`.
fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<()> {
    if ok { Ok(()) } else { Err(message()) }
}

/// The `run_command` outcome records of the audit log at `log`, oldest first.
pub(crate) fn run_outcomes(log: &Path) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(log)
        .map_err(|e| format!("reading the audit log {}: {e}", log.display()))?;
    let mut out = Vec::new();
    for line in text.lines() {
        let record: Value =
            serde_json::from_str(line).map_err(|e| format!("an audit line is not JSON: {e}"))?;
        if record["tool"] == "run_command" && record["event"] == "outcome" {
            out.push(record);
        }
    }
    Ok(out)
}

/// The whole sandbox report of the last `run_command` recorded in `log`, checked against
/// `envelope` (that call's result): its summary names the same profile, and it carries the
/// whole report exactly when something was downgraded, then the same one.
pub(crate) fn recorded_report(log: &Path, envelope: &Value) -> Result<Value> {
    let outcomes = run_outcomes(log)?;
    let record = outcomes.last().ok_or("no run_command outcome recorded")?;
    ensure(
        record["code"] == envelope["code"] && record["reason"] == envelope["reason"],
        || format!("the last record is not this call's: {record} vs {envelope}"),
    )?;
    let report = record["sandbox"].clone();
    ensure(report.is_object(), || {
        format!("no sandbox report in the record {record}")
    })?;
    let detail = &envelope["detail"];
    let summary = detail["sandbox"].as_str().unwrap_or_default();
    let profile = report["profile"].as_str().unwrap_or_default();
    ensure(summary.starts_with(&format!("profile={profile} ")), || {
        format!("the summary '{summary}' is not of the recorded profile {profile}")
    })?;
    let downgraded = report["downgrades"]
        .as_array()
        .is_some_and(|d| !d.is_empty());
    if downgraded {
        ensure(detail["sandbox_report"] == report, || {
            format!(
                "a downgraded call's result must carry its whole report: {envelope} vs {report}"
            )
        })?;
    } else {
        ensure(detail.get("sandbox_report").is_none(), || {
            format!("a call without downgrades carries its whole report: {envelope}")
        })?;
    }
    Ok(report)
}
