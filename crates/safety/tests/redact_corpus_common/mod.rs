//! The redaction corpus (crates/safety/tests/data/redaction/corpus.jsonl, written by
//! scripts/redaction_corpus.py) and how a redactor is scored on it; shared by the test
//! `redact_corpus` and the example `redact_corpus` (which includes this file by path).
//!
//! The definitions (docs/redaction.md, "The corpus and the measured figures"):
//! - a secret is LEAKED when the redacted text contains its value, or any fragment of it of
//!   `min(len, 8)` or more bytes;
//! - a keep item is a FALSE POSITIVE when it does not appear verbatim in the redacted text;
//! - recall = secrets not leaked / secrets; false-positive rate = altered keep items / keep items.

use std::collections::BTreeMap;
use std::path::PathBuf;

use safety::redact::Redactor;
use serde::Deserialize;

/// Fragments of this many bytes (or the whole secret, when shorter) must not survive.
pub const FRAGMENT: usize = 8;

/// One secret of a text: what must disappear.
#[derive(Debug, Clone, Deserialize)]
pub struct Secret {
    pub kind: String,
    pub value: String,
}

/// One text of the corpus.
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    pub id: String,
    pub source: String,
    pub text: String,
    pub secrets: Vec<Secret>,
    pub keep: Vec<String>,
}

/// The corpus file, relative to the crate.
pub fn corpus_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/redaction/corpus.jsonl")
}

/// The generator script.
pub fn script_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/redaction_corpus.py")
}

/// Parse a corpus (one JSON object a line).
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| format!("corpus line {}: {e}", n + 1))
        })
        .collect()
}

/// Load the corpus from its file.
pub fn load() -> Result<Vec<Entry>, String> {
    let path = corpus_path();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text)
}

/// Whether some fragment of `secret` of `min(len, FRAGMENT)` bytes occurs in `text`.
pub fn leaks(secret: &str, text: &str) -> bool {
    let secret = secret.as_bytes();
    let n = secret.len().min(FRAGMENT);
    if n == 0 {
        return false;
    }
    let finder_text = text.as_bytes();
    secret
        .windows(n)
        .any(|fragment| memchr::memmem::find(finder_text, fragment).is_some())
}

/// What a tool did to one text: for each secret whether it was leaked, for each keep item
/// whether it was altered, and (for the failure list) the output it produced.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub leaked: Vec<bool>,
    pub altered: Vec<bool>,
    pub output: String,
}

/// The verdict of `redactor` on `entry`, by the definitions above.
pub fn judge_redactor(redactor: &Redactor, entry: &Entry) -> Verdict {
    let output = redactor.redact(&entry.text);
    Verdict {
        leaked: entry
            .secrets
            .iter()
            .map(|s| leaks(&s.value, &output))
            .collect(),
        altered: entry
            .keep
            .iter()
            .map(|k| !output.contains(k.as_str()))
            .collect(),
        output,
    }
}

/// `found` of `total`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub good: usize,
    pub total: usize,
}

impl Tally {
    fn add(&mut self, good: bool) {
        self.total += 1;
        if good {
            self.good += 1;
        }
    }

    /// `good / total` in percent (100 when there is nothing to count).
    pub fn percent(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.good as f64 / self.total as f64
        }
    }

    /// `(total - good) / total` in percent.
    pub fn bad_percent(&self) -> f64 {
        100.0 - self.percent()
    }
}

/// One failure: a leaked secret or an altered keep item.
#[derive(Debug, Clone)]
pub struct Failure {
    pub id: String,
    pub source: String,
    /// `leak` or `false-positive`.
    pub what: &'static str,
    /// The secret's kind, or `keep`.
    pub kind: String,
    /// The secret's value or the keep item.
    pub item: String,
    /// The output lines holding (a fragment of) it, or where it should have been.
    pub context: String,
}

/// The scores over a corpus.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub texts: usize,
    /// Not-leaked secrets of all secrets.
    pub secrets: Tally,
    /// Unaltered keep items of all keep items.
    pub keep: Tally,
    pub per_kind: BTreeMap<String, Tally>,
    /// Per source: (secrets, keep items).
    pub per_source: BTreeMap<String, (Tally, Tally)>,
    pub failures: Vec<Failure>,
}

impl Report {
    /// Recall in percent.
    pub fn recall(&self) -> f64 {
        self.secrets.percent()
    }

    /// False-positive rate in percent.
    pub fn false_positive_rate(&self) -> f64 {
        self.keep.bad_percent()
    }

    /// The two figures on one line.
    pub fn summary(&self) -> String {
        format!(
            "recall {:.2} % ({} of {} secrets removed), false positives {:.2} % ({} of {} keep items altered), {} texts",
            self.recall(),
            self.secrets.good,
            self.secrets.total,
            self.false_positive_rate(),
            self.keep.total - self.keep.good,
            self.keep.total,
            self.texts
        )
    }

    /// The first `limit` failures, one block each.
    pub fn failure_list(&self, limit: usize) -> String {
        let mut out = String::new();
        for f in self.failures.iter().take(limit) {
            out.push_str(&format!(
                "- {} [{}] {} {}: {:?}\n    {}\n",
                f.id,
                f.source,
                f.what,
                f.kind,
                shorten(&f.item, 100),
                shorten(&f.context, 300).replace('\n', "\n    ")
            ));
        }
        if self.failures.len() > limit {
            out.push_str(&format!("... and {} more\n", self.failures.len() - limit));
        }
        out
    }

    /// A table: kind, removed, total, recall.
    pub fn kind_table(&self) -> String {
        let mut out = format!(
            "{:<34} {:>8} {:>6} {:>8}\n",
            "kind", "removed", "of", "recall"
        );
        for (kind, t) in &self.per_kind {
            out.push_str(&format!(
                "{:<34} {:>8} {:>6} {:>7.1}%\n",
                kind,
                t.good,
                t.total,
                t.percent()
            ));
        }
        out
    }

    /// A table: source, secrets removed, keep items altered.
    pub fn source_table(&self) -> String {
        let mut out = format!(
            "{:<22} {:>8} {:>6} {:>8} {:>6}\n",
            "source", "removed", "of", "altered", "of"
        );
        for (source, (s, k)) in &self.per_source {
            out.push_str(&format!(
                "{:<22} {:>8} {:>6} {:>8} {:>6}\n",
                source,
                s.good,
                s.total,
                k.total - k.good,
                k.total
            ));
        }
        out
    }
}

/// `s` cut to about `max` bytes (on a character boundary), with `...` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", s.get(..end).unwrap_or_default())
}

/// The lines of `output` that hold a fragment of `secret` (or the first few lines).
fn leak_context(secret: &str, output: &str) -> String {
    let lines: Vec<&str> = output.lines().filter(|l| leaks(secret, l)).collect();
    if lines.is_empty() {
        shorten(output, 300)
    } else {
        lines.join("\n")
    }
}

/// The output lines that share the most with a keep item (its first word).
fn keep_context(keep: &str, output: &str) -> String {
    let trimmed = keep.trim();
    let probe = match trimmed.find(['=', ':']) {
        Some(at) if at > 0 => trimmed.get(..at).unwrap_or(trimmed),
        _ => trimmed.get(..trimmed.len().min(12)).unwrap_or(trimmed),
    };
    let lines: Vec<&str> = output
        .lines()
        .filter(|l| !probe.is_empty() && l.contains(probe))
        .take(3)
        .collect();
    if lines.is_empty() {
        "(no output line starts like it)".to_string()
    } else {
        lines.join("\n")
    }
}

/// Score `judge` over `entries`.
pub fn score(entries: &[Entry], mut judge: impl FnMut(&Entry) -> Verdict) -> Report {
    let mut report = Report {
        texts: entries.len(),
        ..Report::default()
    };
    for entry in entries {
        let verdict = judge(entry);
        let (source_secrets, source_keep) =
            report.per_source.entry(entry.source.clone()).or_default();
        for (secret, leaked) in entry.secrets.iter().zip(&verdict.leaked) {
            source_secrets.add(!leaked);
            report.secrets.add(!leaked);
            report
                .per_kind
                .entry(secret.kind.clone())
                .or_default()
                .add(!leaked);
            if *leaked {
                report.failures.push(Failure {
                    id: entry.id.clone(),
                    source: entry.source.clone(),
                    what: "leak",
                    kind: secret.kind.clone(),
                    item: secret.value.clone(),
                    context: leak_context(&secret.value, &verdict.output),
                });
            }
        }
        for (keep, altered) in entry.keep.iter().zip(&verdict.altered) {
            source_keep.add(!altered);
            report.keep.add(!altered);
            if *altered {
                report.failures.push(Failure {
                    id: entry.id.clone(),
                    source: entry.source.clone(),
                    what: "false-positive",
                    kind: "keep".to_string(),
                    item: keep.clone(),
                    context: keep_context(keep, &verdict.output),
                });
            }
        }
    }
    report
}

/// The 1-based line numbers `[first, last]` of each occurrence of `needle` in `text`.
pub fn line_spans(text: &str, needle: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    if needle.is_empty() {
        return spans;
    }
    let mut from = 0;
    while let Some(at) = text.get(from..).and_then(|rest| rest.find(needle)) {
        let start = from + at;
        let end = start + needle.len();
        let first = 1 + text.get(..start).unwrap_or_default().matches('\n').count();
        let last = first + needle.matches('\n').count();
        spans.push((first, last));
        from = end;
    }
    spans
}
