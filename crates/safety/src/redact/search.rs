//! Finding what to replace: each built-in rule tried at the anchor hits where it may
//! match, then the operator patterns over the whole text; the result is a list of spans.
//!
//! A rule's match is cut down to its `secret` groups, a value that is already a marker or
//! an operating system error message is left alone, and a PEM end line reaches back over
//! the key body before it.

use regex::Regex;

use super::Redactor;
use super::anchors::{AnchorCheck, Builtin};
use super::rules::LeftContext;
use super::spans::{Span, merge};

impl Builtin {
    /// Try the rule of `check` at an anchor hit `at`; push its span if it matches.
    pub(super) fn try_anchor<'s>(
        &'s self,
        text: &str,
        at: usize,
        check: &AnchorCheck,
        rule_end: &mut Vec<usize>,
        spans: &mut Vec<Span<'s>>,
    ) {
        let bytes = text.as_bytes();
        if rule_end.is_empty() {
            *rule_end = vec![0; self.rules.len()];
        }
        if at < rule_end.get(check.rule).copied().unwrap_or(0) {
            return;
        }
        let Some(rule) = self.rules.get(check.rule) else {
            return;
        };
        let Some(candidate) = bytes.get(at..at + check.bytes.len()) else {
            return;
        };
        let same = if check.ignore_case {
            candidate.eq_ignore_ascii_case(&check.bytes)
        } else {
            candidate == &*check.bytes
        };
        if !same {
            return;
        }
        let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
        let glued = before.is_some_and(|b| b.is_ascii_alphanumeric());
        // Anchors are ASCII, so `at` is a char boundary.
        let Some(hay) = text.get(at..) else { return };
        let Some(matcher) = rule.matcher() else {
            // A table pattern that does not compile (a unit test rules it out): the word
            // at the anchor goes, rather than a secret left in.
            let end = hay
                .find(|c: char| c.is_whitespace())
                .map_or(text.len(), |n| at + n);
            spans.push(Span {
                start: at,
                end,
                order: check.rule,
                marker: &rule.marker,
            });
            return;
        };
        let left_ok = match rule.left {
            LeftContext::Any => true,
            LeftContext::NotAlphanumeric => !glued,
            LeftContext::Digit => before.is_some_and(|b| b.is_ascii_digit()),
            // A key glued to a word (`keyghp_...`, what `grep -o` or a stripped colour
            // escape leaves) is still a key, when the match has a key's shape there.
            LeftContext::Delimited | LeftContext::Glued(_) => {
                !glued || matcher.glued.as_ref().is_some_and(|re| re.is_match(hay))
            }
        };
        if !left_ok {
            return;
        }
        let Some(found) = match_secret(&matcher.regex, &matcher.secret_groups, hay) else {
            return;
        };
        let (mut start, end) = (at + found.0, at + found.1);
        // A value that is already a marker (`password='[REDACTED:x]'`) stays as it is, so
        // redacting twice changes nothing; anything more than a bare marker is not.
        if text.get(start..end).is_some_and(is_marker) {
            return;
        }
        // A placeholder, a mask, a flag, a path... is not the secret its key names.
        let key = super::values::key_before(text, at, start);
        if !text
            .get(start..end)
            .is_some_and(|v| rule.check.accepts(key, v))
        {
            return;
        }
        // `cat: secret.txt: No such file or directory` names a file, it assigns nothing.
        if text
            .get(start..)
            .is_some_and(|rest| is_os_error_message(rest, end - start))
        {
            return;
        }
        if let Some(slot) = rule_end.get_mut(check.rule) {
            *slot = at + found.2;
        }
        if rule.extends_back {
            start = extend_back_over_pem_body(bytes, start);
        }
        spans.push(Span {
            start,
            end,
            order: check.rule,
            marker: &rule.marker,
        });
    }
}

/// The indexes of the capture groups whose name starts with `secret`: what a match of
/// the rule replaces (the whole match when there are none).
pub(super) fn secret_groups(regex: &Regex) -> Vec<usize> {
    regex
        .capture_names()
        .enumerate()
        .filter_map(|(i, name)| name.filter(|n| n.starts_with("secret")).map(|_| i))
        .collect()
}

/// Messages of the C library's `strerror` that follow `file: ` in a failing command's output.
/// A key/value rule's value that lies inside one of them, the message ending its line (or
/// followed by ` (os error N)`), is not a secret: `secret.txt: No such file or directory` is
/// a file name and an error. See [`is_os_error_message`].
pub const OS_ERROR_MESSAGES: &[&str] = &[
    "No such file or directory",
    "Permission denied",
    "Is a directory",
    "Not a directory",
    "File exists",
    "Operation not permitted",
    "Directory not empty",
    "Read-only file system",
    "Too many levels of symbolic links",
    "No space left on device",
    "File name too long",
    "Input/output error",
    "Invalid argument",
    "Text file busy",
    "Device or resource busy",
];

/// Whether a value of `value_len` bytes at the start of `rest` lies inside one of
/// [`OS_ERROR_MESSAGES`], and that message ends its line or the text, or is followed by
/// ` (os error ` (Rust's `(os error 2)`). A quoted value that merely starts with a message
/// (`"Permission denied (hunter2)"`) is longer than it, so it is not exempt.
pub fn is_os_error_message(rest: &str, value_len: usize) -> bool {
    OS_ERROR_MESSAGES.iter().any(|m| {
        value_len <= m.len()
            && rest.strip_prefix(m).is_some_and(|after| {
                after.is_empty()
                    || after.starts_with('\n')
                    || after.starts_with('\r')
                    || after.starts_with(" (os error ")
            })
    })
}

/// Exactly one `[REDACTED:<name>]` marker.
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

impl Redactor {
    /// Every secret span in `text`, sorted, overlaps merged.
    pub(super) fn find_spans<'s>(&'s self, text: &str) -> Vec<Span<'s>> {
        let mut spans: Vec<Span<'s>> = Vec::new();
        if !self.enabled || text.is_empty() {
            return spans;
        }
        self.push_builtin_spans(text, &mut spans);
        let base = self.builtin.rules.len();
        for (i, extra) in self.extras.iter().enumerate() {
            if extra.secret_groups.is_empty() {
                for m in extra.regex.find_iter(text) {
                    if !m.is_empty() {
                        spans.push(Span {
                            start: m.start(),
                            end: m.end(),
                            order: base + i,
                            marker: &extra.marker,
                        });
                    }
                }
            } else {
                for caps in extra.regex.captures_iter(text) {
                    let found = extra
                        .secret_groups
                        .iter()
                        .filter_map(|&g| caps.get(g))
                        .fold(None, |acc: Option<(usize, usize)>, m| {
                            Some(acc.map_or((m.start(), m.end()), |(s, e)| {
                                (s.min(m.start()), e.max(m.end()))
                            }))
                        });
                    if let Some((s, e)) = found.filter(|(s, e)| s < e) {
                        spans.push(Span {
                            start: s,
                            end: e,
                            order: base + i,
                            marker: &extra.marker,
                        });
                    }
                }
            }
        }
        merge(spans)
    }

    /// The spans of the built-in rules and of the entropy fallback in `text`, unmerged.
    pub(super) fn push_builtin_spans<'s>(&'s self, text: &str, spans: &mut Vec<Span<'s>>) {
        let builtin = &*self.builtin;
        // Per rule: end of its last match, so one rule never rescans its own match (keeps the
        // work linear on adversarial output full of anchors).
        let mut rule_end: Vec<usize> = Vec::new();
        // Hits in increasing order, so each rule sees its candidates in order (which
        // `rule_end` relies on).
        for hit in builtin.hits(text.as_bytes()) {
            let checks = builtin
                .sets
                .get(hit.set)
                .and_then(|(set, _)| set.checks.get(hit.pattern));
            for check in checks.into_iter().flatten() {
                builtin.try_anchor(text, hit.at, check, &mut rule_end, spans);
            }
        }
        if self.entropy_fallback {
            let order = builtin.rules.len() + self.extras.len();
            self.entropy_spans(text.as_bytes(), order, spans);
        }
    }
}

/// Run an anchored rule on `hay` (which starts at the anchor). Returns the span to replace
/// and the end of the whole match, relative to `hay`.
fn match_secret(regex: &Regex, groups: &[usize], hay: &str) -> Option<(usize, usize, usize)> {
    if groups.is_empty() {
        let m = regex.find(hay)?;
        return (!m.is_empty()).then_some((m.start(), m.end(), m.end()));
    }
    // Most candidates do not match: find that out without the cost of captures.
    regex.find(hay)?;
    let caps = regex.captures(hay)?;
    let whole = caps.get(0)?;
    let mut span: Option<(usize, usize)> = None;
    for m in groups.iter().filter_map(|&g| caps.get(g)) {
        span = Some(span.map_or((m.start(), m.end()), |(s, e)| {
            (s.min(m.start()), e.max(m.end()))
        }));
    }
    let (s, e) = span?;
    (s < e).then_some((s, e, whole.end()))
}

/// Walk back from a PEM END line over the key body (base64, blanks, `\n` escapes, header
/// lines such as `Proc-Type: 4,ENCRYPTED`), stopping at the dashes of a BEGIN line or at any
/// other character.
fn extend_back_over_pem_body(bytes: &[u8], mut start: usize) -> usize {
    let end_line = start;
    while let Some(i) = start.checked_sub(1) {
        let Some(&b) = bytes.get(i) else { break };
        let single_dash = b == b'-'
            && start < end_line
            && bytes.get(start).is_some_and(|n| n.is_ascii_alphanumeric());
        if is_pem_body(b) || single_dash {
            start = i;
        } else {
            break;
        }
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::RedactionSettings;

    fn redactor() -> Redactor {
        match Redactor::new(&RedactionSettings::default()) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn spans_overlapping_are_merged_whole() {
        let r = redactor();
        // A JWT inside an Authorization header: found by two rules, removed once.
        let text = "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop rest";
        let out = r.redact(text);
        assert_eq!(out.matches("[REDACTED:").count(), 1, "{out}");
        assert!(out.ends_with(" rest"), "{out}");
    }

    #[test]
    fn anchor_inside_a_base64_blob_is_not_a_key() {
        let r = redactor();
        // Glued on both sides: a stretch of a longer blob, not a key.
        for text in [
            "xAKIAIOSFODNN7EXAMPLEq8Zr",
            "MIIBxAKIAIOSFODNN7EXAMPLE/Zr+",
            "9ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d+Qk=",
        ] {
            assert_eq!(r.redact(text), text);
        }
    }

    #[test]
    fn glued_keys_are_still_found() {
        let r = redactor();
        let openai = "sk-proj-Xq9fL2mN7pR4sT8vW1yZ3aB6T3BlbkFJc5dE0gH2jK4lM6nP8qR1sT3u";
        let glued = [
            (
                "keyghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            (
                "xghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d rest",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            (
                "token=ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            (
                "1mghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            ("fooAKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
            ("7AKIAIOSFODNN7EXAMPLE:", "AKIAIOSFODNN7EXAMPLE"),
            (
                "foosk-ant-api03-LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN1gNT11cUzYZAa3u2olZU6uqbgsYlVvsSKuvinX_zMqf9OgAA",
                "LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe",
            ),
            (&*format!("key{openai}"), openai),
            (
                "valueeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            ),
            (
                "jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            ),
            (
                "Authorization:Bearer 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
                "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
            ),
            (
                "tokxoxb-965724920868-2889093100251-y1CJdObOIRpFqaDZeV7G5IfQ",
                "y1CJdObOIRpFqaDZeV7G5IfQ",
            ),
            (
                "keySG.xY5OokvQyx7eNWVQ4vnakJ.kS1pAWTN3lg8zV5yPU8d0FZfWe7ihGyiRUIQfHOJMai",
                "kS1pAWTN3lg8zV5yPU8d0FZfWe7ihGyiRUIQfHOJMai",
            ),
            (
                "apikey-073fec8df4f50947aaeb26c57d21fa5d",
                "073fec8df4f50947aaeb26c57d21fa5d",
            ),
            (
                "appxapp-1-A7E4QEQPNO3-7617409319254-940f1f836f99eee3692f09e2e8c662248b483b7ffc050fec94dbca3a0aac3609",
                "940f1f836f99eee3692f09e2e8c66224",
            ),
            ("urlpostgres://app:s3cr3t-Pa55@db", "s3cr3t-Pa55"),
            (
                "tokenglpat-xNbe3nNyjOq9wMxEhh2F",
                "glpat-xNbe3nNyjOq9wMxEhh2F",
            ),
            (
                "HFhf_MOyfTNSkOYoNzNmElKnczHkywhjpUmcJWR",
                "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",
            ),
        ];
        for (text, secret) in glued {
            let out = r.redact(text);
            assert!(!out.contains(secret), "{text} -> {out}");
            assert!(out.contains("[REDACTED:"), "{text} -> {out}");
        }
    }

    #[test]
    fn words_that_end_in_an_anchor_are_not_keys() {
        let r = redactor();
        for text in [
            // `sk-` ends task-, disk-, risk-, kiosk-: only a real OpenAI key's shape counts.
            "running task-scheduler-worker-pool-production-2 now",
            "mounted disk-by-uuid-9f8e7d6c5b4a39281706 ok",
            // Stripe test keys glued to a word are test names, not keys.
            "test framework_test_ParsesLargeDocumentsCorrectly ... ok",
            "test benchmark_live_StreamingThroughputIsStable ... ok",
            // `SG.` ends MSG., `key-` ends monkey-, `xapp-` ends boxapp-.
            "ERROR_MSG.applicationSettings.defaultConfigurationFileIsMissing",
            "the turnkey-installationProcedureForNewHosts is done",
            "deploying boxapp-production-eu-west-1-cluster",
            // `bearer` ends pallbearer, torchbearer.
            "the torchbearer   carriedTheFlameAcrossTheCity",
            // Anchors inside longer blobs and identifiers.
            "SLOVAKIAREPUBLICCODE2024ABCDEF",
            "rapidapi0123456789abcdef0123456789abcdefg",
        ] {
            assert_eq!(r.redact(text), text);
        }
        // The price of the Stripe rule: a live key glued to a word is missed; after `=`,
        // a blank, a quote or a stripped colour escape it is found.
        let glued = "STRIPEsk_live_JXcaYioK6cPTt9iOqHOBSWhg1234";
        assert_eq!(r.redact(glued), glued);
        assert!(
            !r.redact("k=sk_live_JXcaYioK6cPTt9iOqHOBSWhg1234")
                .contains("JXca")
        );
    }
}
