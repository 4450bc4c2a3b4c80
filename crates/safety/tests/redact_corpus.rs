//! The redaction quality gate on fixed data: over the generated corpus
//! (crates/safety/tests/data/redaction/corpus.jsonl) the shipped rules remove at least
//! 99.5 % of the secrets and alter at most 0.5 % of the look-alikes that must stay. The
//! corpus itself is checked too: it is what scripts/redaction_corpus.py writes, it is large
//! and varied, and every text is scoreable (a perfect redactor would score perfectly on it).

use std::collections::BTreeSet;
use std::process::Command;

use safety::redact::{RedactionSettings, Redactor};

use crate::redact_corpus_common::{self as corpus, Entry};

/// The gate: recall at least this (percent).
const MIN_RECALL: f64 = 99.5;
/// The gate: false positives at most this (percent).
const MAX_FALSE_POSITIVES: f64 = 0.5;

fn entries() -> Vec<Entry> {
    corpus::load().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn corpus_recall_and_false_positives_meet_the_gate() {
    let redactor = Redactor::new(&RedactionSettings::default()).unwrap();
    let entries = entries();
    let report = corpus::score(&entries, |e| corpus::judge_redactor(&redactor, e));
    eprintln!("{}", report.summary());
    let ok = report.recall() >= MIN_RECALL && report.false_positive_rate() <= MAX_FALSE_POSITIVES;
    assert!(
        ok,
        "the redaction gate (recall >= {MIN_RECALL} %, false positives <= {MAX_FALSE_POSITIVES} %) \
         is not met: {}\nper kind:\n{}\nper source:\n{}\nfirst failures ({} in all):\n{}",
        report.summary(),
        report.kind_table(),
        report.source_table(),
        report.failures.len(),
        report.failure_list(40)
    );
}

#[test]
fn corpus_is_large_varied_and_mostly_benign() {
    let entries = entries();
    assert!(entries.len() >= 1500, "{} texts", entries.len());
    let kinds: BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| e.secrets.iter().map(|s| s.kind.as_str()))
        .collect();
    assert!(kinds.len() >= 40, "{} kinds: {kinds:?}", kinds.len());
    let with_secrets = entries.iter().filter(|e| !e.secrets.is_empty()).count();
    let benign = entries.len() - with_secrets;
    assert!(
        benign >= with_secrets,
        "{benign} benign texts, {with_secrets} with secrets"
    );
    let sources: BTreeSet<&str> = entries.iter().map(|e| e.source.as_str()).collect();
    assert!(sources.len() >= 20, "{} sources", sources.len());
    let ids: BTreeSet<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), entries.len(), "ids are unique");
}

/// The scoring is fair: every secret and keep item is in its text, no keep item holds a
/// fragment of a secret, and no fragment of a secret appears outside the secrets, so a
/// redactor that removed exactly the secrets would score 100 % and 0 %. The identity
/// (nothing removed) leaks every secret and alters nothing.
#[test]
fn corpus_texts_are_scoreable() {
    let entries = entries();
    for e in &entries {
        let mut masked = e.text.clone();
        let mut secrets: Vec<&str> = e.secrets.iter().map(|s| s.value.as_str()).collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for s in &secrets {
            assert!(e.text.contains(s), "{}: secret not in its text", e.id);
            masked = masked.replace(s, "\u{0}");
        }
        for s in &secrets {
            assert!(
                !corpus::leaks(s, &masked),
                "{}: a fragment of a secret outside it",
                e.id
            );
            for k in &e.keep {
                assert!(
                    !corpus::leaks(s, k),
                    "{}: keep item {k:?} holds a secret",
                    e.id
                );
            }
        }
        for k in &e.keep {
            assert!(
                masked.contains(k.as_str()),
                "{}: keep item {k:?} not in the text",
                e.id
            );
        }
    }
    let identity = corpus::score(&entries, |e| corpus::Verdict {
        leaked: e
            .secrets
            .iter()
            .map(|s| corpus::leaks(&s.value, &e.text))
            .collect(),
        altered: e
            .keep
            .iter()
            .map(|k| !e.text.contains(k.as_str()))
            .collect(),
        output: e.text.clone(),
    });
    assert_eq!(identity.secrets.good, 0);
    assert_eq!(identity.keep.good, identity.keep.total);
}

#[test]
fn leak_counts_any_fragment_of_eight_bytes() {
    assert!(corpus::leaks("ghp_abcdefghijkl", "x ghp_abcd y"));
    assert!(corpus::leaks("ghp_abcdefghijkl", "efghijkl"));
    assert!(!corpus::leaks(
        "ghp_abcdefghijkl",
        "[REDACTED:x] ghp_abc defghij"
    ));
    assert!(corpus::leaks("short", "a short one"));
    assert!(!corpus::leaks("short", "shor t"));
}

#[test]
fn line_spans_number_each_occurrence_from_one() {
    let text = "a\nkey=x\nb\n-----\nAAAA\nBBBB\nkey=x";
    assert_eq!(corpus::line_spans(text, "key=x"), vec![(2, 2), (7, 7)]);
    assert_eq!(corpus::line_spans(text, "AAAA\nBBBB"), vec![(5, 6)]);
    assert!(corpus::line_spans(text, "zzz").is_empty());
}

/// A test that cannot run here says so loudly, and fails under `STRICT_SANDBOX_TESTS=1`.
fn skip(why: &str) {
    let message = format!("SKIPPED: {why}");
    if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
        panic!("{message}");
    }
    eprintln!("\n!!!!!!!! {message} !!!!!!!!\n");
}

#[test]
fn corpus_file_is_what_the_script_generates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("corpus.jsonl");
    let run = Command::new("python3")
        .arg(corpus::script_path())
        .arg(&out)
        .output();
    let run = match run {
        Ok(run) => run,
        Err(e) => {
            return skip(&format!(
                "python3 cannot be run ({e}): the corpus is not re-generated"
            ));
        }
    };
    assert!(
        run.status.success(),
        "the generator failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let generated = std::fs::read(&out).unwrap();
    let committed = std::fs::read(corpus::corpus_path()).unwrap();
    assert!(
        generated == committed,
        "crates/safety/tests/data/redaction/corpus.jsonl is not what scripts/redaction_corpus.py \
         writes: re-run the script and commit its output"
    );
}
