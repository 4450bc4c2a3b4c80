//! The literal search that finds rule candidates (SIMD prefilters over the text and over its
//! lower-cased copy, in chunks) misses nothing: `Redactor::redact` is compared with a naive
//! reference that tries every anchor of every rule at every position of the text.

use std::sync::LazyLock;

use proptest::prelude::*;
use regex::Regex;
use safety::redact::{
    BUILTIN_RULES, LeftContext, RedactionSettings, Redactor, is_os_error_message,
};

fn redactor() -> Redactor {
    match Redactor::new(&RedactionSettings::default()) {
        Ok(r) => r,
        Err(e) => panic!("redactor does not build: {e}"),
    }
}

struct Reference {
    regexes: Vec<Regex>,
    /// Each rule's `glued_pattern`, compiled.
    glued: Vec<Option<Regex>>,
    /// Bytes an anchor can start with (either case).
    first: [bool; 256],
}

static REFERENCE: LazyLock<Reference> = LazyLock::new(Reference::new);
static REDACTOR: LazyLock<Redactor> = LazyLock::new(redactor);

struct RefSpan {
    start: usize,
    end: usize,
    order: usize,
}

fn is_marker(s: &str) -> bool {
    s.strip_prefix("[REDACTED:")
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
}

fn is_pem_body(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(byte, b'+' | b'/' | b'=' | b'\\' | b':' | b',' | b'.')
        || byte.is_ascii_whitespace()
}

impl Reference {
    fn new() -> Self {
        let regexes = BUILTIN_RULES
            .iter()
            .map(|r| match Regex::new(&format!("^(?:{})", r.pattern)) {
                Ok(re) => re,
                Err(e) => panic!("{}: {e}", r.name),
            })
            .collect();
        let mut first = [false; 256];
        for anchor in BUILTIN_RULES.iter().flat_map(|r| r.anchors.iter()) {
            if let Some(&b) = anchor.as_bytes().first() {
                first[usize::from(b.to_ascii_lowercase())] = true;
                first[usize::from(b.to_ascii_uppercase())] = true;
            }
        }
        let glued = BUILTIN_RULES
            .iter()
            .map(|r| r.glued_pattern().map(|p| Regex::new(&p).unwrap()))
            .collect();
        Reference {
            regexes,
            glued,
            first,
        }
    }

    /// Every anchor of every rule tried at every position, in table order.
    fn redact(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut rule_end = vec![0usize; BUILTIN_RULES.len()];
        let mut spans = Vec::new();
        for at in 0..bytes.len() {
            if !self.first[usize::from(bytes[at])] {
                continue;
            }
            for (i, rule) in BUILTIN_RULES.iter().enumerate() {
                for anchor in rule.anchors {
                    if at < rule_end[i] {
                        continue;
                    }
                    let Some(cand) = bytes.get(at..at + anchor.len()) else {
                        continue;
                    };
                    let same = if rule.anchors_ignore_case {
                        cand.eq_ignore_ascii_case(anchor.as_bytes())
                    } else {
                        cand == anchor.as_bytes()
                    };
                    let before = at.checked_sub(1).map(|j| bytes[j]);
                    let left_ok = match rule.left {
                        LeftContext::Any => true,
                        LeftContext::NotAlphanumeric => {
                            !before.is_some_and(|b| b.is_ascii_alphanumeric())
                        }
                        LeftContext::Digit => before.is_some_and(|b| b.is_ascii_digit()),
                        // A key glued to a letter or digit must also have a key's shape.
                        LeftContext::Delimited | LeftContext::Glued(_) => {
                            !before.is_some_and(|b| b.is_ascii_alphanumeric())
                                || (same
                                    && self.glued[i]
                                        .as_ref()
                                        .is_some_and(|re| re.is_match(&text[at..])))
                        }
                    };
                    if !same || !left_ok {
                        continue;
                    }
                    let hay = &text[at..];
                    let re = &self.regexes[i];
                    let Some(caps) = re.captures(hay) else {
                        continue;
                    };
                    let whole = caps.get(0).map_or(0..0, |m| m.range());
                    let groups: Vec<_> = re
                        .capture_names()
                        .enumerate()
                        .filter(|(_, n)| n.is_some_and(|n| n.starts_with("secret")))
                        .filter_map(|(g, _)| caps.get(g))
                        .collect();
                    let (s, e) = if re
                        .capture_names()
                        .any(|n| n.is_some_and(|n| n.starts_with("secret")))
                    {
                        let Some(s) = groups.iter().map(|m| m.start()).min() else {
                            continue;
                        };
                        let e = groups.iter().map(|m| m.end()).max().unwrap_or(s);
                        (s, e)
                    } else {
                        (whole.start, whole.end)
                    };
                    if s >= e {
                        continue;
                    }
                    let (mut start, end) = (at + s, at + e);
                    if is_marker(&text[start..end]) {
                        continue;
                    }
                    // The value check is the engine's own function: the reference checks
                    // where it is applied, not what it decides.
                    let key = safety::redact::key_before(text, at, start);
                    if !rule.check.accepts(key, &text[start..end]) {
                        continue;
                    }
                    let error_text = is_os_error_message(&text[start..], end - start);
                    if error_text {
                        continue;
                    }
                    rule_end[i] = at + whole.end;
                    if rule.extends_back {
                        let end_line = start;
                        while start > 0 {
                            let b = bytes[start - 1];
                            let single_dash = b == b'-'
                                && start < end_line
                                && bytes[start].is_ascii_alphanumeric();
                            if is_pem_body(b) || single_dash {
                                start -= 1;
                            } else {
                                break;
                            }
                        }
                    }
                    spans.push(RefSpan {
                        start,
                        end,
                        order: i,
                    });
                }
            }
        }
        spans.sort_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then(b.end.cmp(&a.end))
                .then(a.order.cmp(&b.order))
        });
        let mut merged: Vec<RefSpan> = Vec::new();
        for span in spans {
            match merged.last_mut() {
                Some(last) if span.start < last.end => last.end = last.end.max(span.end),
                _ => merged.push(span),
            }
        }
        let mut out = String::new();
        let mut at = 0;
        for span in merged {
            out.push_str(&text[at..span.start]);
            out.push_str(&format!("[REDACTED:{}]", BUILTIN_RULES[span.order].name));
            at = span.end;
        }
        out.push_str(&text[at..]);
        out
    }
}

/// `s` with the case of its ASCII letters flipped where `mask` has a bit set.
fn mangle_case(s: &str, mask: u64) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| {
            if mask >> (i % 64) & 1 == 1 {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            } else {
                c
            }
        })
        .collect()
}

/// Pieces of text: rule examples and anchors (case mangled), separators, noise.
fn piece() -> impl Strategy<Value = String> {
    let examples: Vec<&'static str> = BUILTIN_RULES.iter().map(|r| r.example).collect();
    let anchors: Vec<&'static str> = BUILTIN_RULES
        .iter()
        .flat_map(|r| r.anchors.iter().copied())
        .collect();
    prop_oneof![
        (
            proptest::sample::select(examples),
            any::<u64>(),
            any::<bool>()
        )
            .prop_map(|(e, m, mangle)| if mangle {
                mangle_case(e, m)
            } else {
                e.to_string()
            }),
        (
            proptest::sample::select(anchors),
            any::<u64>(),
            "[A-Za-z0-9_=: '\"/@.-]{0,40}"
        )
            .prop_map(|(a, m, rest)| format!("{}{rest}", mangle_case(a, m & 0xff))),
        "[ \n\t=:;&@/#'\"]{1,3}".prop_map(|s| s),
        "[a-zA-Z0-9 ]{0,60}".prop_map(|s| s),
        "[é€😀\u{a0}\u{2003}a-z]{0,8}".prop_map(|s| s),
        (0usize..9000, 0u8..4)
            .prop_filter_map("rare", |(n, k)| (k == 0).then_some(n))
            .prop_map(|n| "ab cd-ef_gh.ij:kl/".repeat(n / 18 + 1)[..n].to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn redact_matches_the_naive_reference(pieces in proptest::collection::vec(piece(), 0..16)) {
        let text = pieces.concat();
        prop_assert_eq!(REDACTOR.redact(&text), REFERENCE.redact(&text));
    }
}

#[test]
fn every_example_is_found_at_every_offset_around_a_chunk_boundary() {
    // Case-insensitive anchors are searched over the text lower-cased a chunk (8 KiB) at a
    // time; an anchor straddling a chunk boundary must still be found.
    let (r, reference) = (&*REDACTOR, &*REFERENCE);
    for rule in BUILTIN_RULES.iter().filter(|r| r.anchors_ignore_case) {
        let upper = rule.example.to_ascii_uppercase();
        for example in [rule.example, upper.as_str()] {
            for offset in 8192 - 32..8192 + 2 {
                let text = format!("{}{example}\n", "#".repeat(offset));
                let out = r.redact(&text);
                assert_eq!(
                    out,
                    reference.redact(&text),
                    "rule {} at {offset}",
                    rule.name
                );
                // A value check may look at the value's case (base64 does): only the
                // example itself must be found, the mangled one agree with the reference.
                if example == rule.example {
                    assert!(
                        !out.contains(rule.example_secret),
                        "rule {} at {offset}: {out}",
                        rule.name
                    );
                }
            }
        }
    }
}

/// A string of a JSON value: a few pieces (examples, anchors with tails, noise) joined.
fn json_string() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..4).prop_map(|p| p.concat())
}

/// A key: a credential word now and then, else like any string.
fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "command",
            "cwd",
            "password",
            "DB_Passwd",
            "pwd",
            "authorization",
            "api-key",
            "token_file",
            "private_key",
        ])
        .prop_map(str::to_string),
        json_string(),
    ]
}

/// Records like the audit log's: objects of strings, numbers and nested values.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        json_string().prop_map(serde_json::Value::String),
        any::<i64>().prop_map(serde_json::Value::from),
        Just(serde_json::Value::Null),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::vec((json_key(), inner), 0..6)
                .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Redactors whose one-pass JSON check is compared with the string-by-string path: the
/// defaults, the entropy fallback on, and operator patterns anchored with `^`/`$` (which the
/// one-pass check must not run over the joined text) and with a secret group.
static JSON_REDACTORS: LazyLock<Vec<Redactor>> = LazyLock::new(|| {
    let extra = |name: &str, regex: &str| safety::redact::ExtraPattern {
        name: name.to_string(),
        regex: regex.to_string(),
    };
    [
        RedactionSettings::default(),
        RedactionSettings {
            entropy_fallback: true,
            ..RedactionSettings::default()
        },
        RedactionSettings {
            extra_patterns: vec![
                extra("whole-ticket", r"^[a-z]{2}[0-9]{2}$"),
                extra("internal", r"corp=(?P<secret>[0-9]{3,})"),
            ],
            ..RedactionSettings::default()
        },
    ]
    .iter()
    .map(|s| match Redactor::new(s) {
        Ok(r) => r,
        Err(e) => panic!("redactor does not build: {e}"),
    })
    .collect()
});

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn redact_json_in_one_pass_equals_string_by_string(value in json_value()) {
        for r in JSON_REDACTORS.iter() {
            let (mut fast, mut each) = (value.clone(), value.clone());
            r.redact_json(&mut fast);
            r.redact_json_each(&mut each);
            prop_assert_eq!(fast, each);
        }
    }
}

#[test]
fn redact_json_finds_every_example_and_anchored_operator_pattern_in_a_record() {
    // Each built-in example alone as one value among harmless ones, and a value an operator
    // pattern anchored at both ends matches only as a whole string.
    for r in JSON_REDACTORS.iter() {
        for rule in BUILTIN_RULES {
            let mut value = serde_json::json!({
                "event": "outcome",
                "arguments": {"command": rule.example, "cwd": "."},
                "code": "OK",
            });
            r.redact_json(&mut value);
            let text = value.to_string();
            assert!(
                !text.contains(rule.example_secret),
                "{}: secret survived in {text}",
                rule.name
            );
        }
    }
    let Some(anchored) = JSON_REDACTORS.get(2) else {
        panic!("no redactor with operator patterns")
    };
    let mut value = serde_json::json!({"a": "ok", "ticket": "ab12", "b": "ab12 and more"});
    anchored.redact_json(&mut value);
    assert_eq!(
        value,
        serde_json::json!({"a": "ok", "ticket": "[REDACTED:whole-ticket]", "b": "ab12 and more"})
    );
}
