//! Redaction, then truncation: every text that leaves a server (command output, file
//! contents, error messages, audit records) has each secret replaced by `[REDACTED:<rule>]`
//! first and is cut to size only then, so no fragment of a secret is ever emitted
//! (docs/redaction.md).
//!
//! - [`Redactor::new`] builds the built-in rules plus the operator's `extra_patterns`; a
//!   pattern that does not compile is a [`RedactError`] naming it.
//! - [`Redactor::redact`] replaces every secret in a text, [`Redactor::redact_json`] every
//!   string inside a JSON value (keys included).
//! - [`Redactor::redact_then_truncate`] keeps the head and tail of a [`Captured`] stream with
//!   an `... [N bytes omitted] ...` marker between; [`Redactor::strip_redact_then_truncate`]
//!   does the same for command output after every terminal control sequence is removed
//!   ([`strip_terminal_controls`]).
//! - [`Captured`] is what the executor fills while reading a pipe: the first
//!   `cap + CAPTURE_MARGIN` bytes, the last `cap + CAPTURE_MARGIN` bytes, and the total.
//!
//! # How a text is searched
//!
//! There is ONE table of built-in rules, [`BUILTIN_RULES`]. Every rule names the literal
//! *anchors* its secret starts with (`ghp_`, `AKIA`, `password`, `://`, ...). The anchors are
//! found by a few literal searches, each over a set of at most 64 patterns so that it runs as
//! Teddy (SIMD, from the aho-corasick crate): case-sensitive anchors over the text,
//! case-insensitive ones over the text lower-cased in 8 KiB chunks (overlapping by the longest
//! pattern), and, since Teddy's fingerprint is as long as the shortest pattern of its set,
//! 4+-byte, 3-byte and shorter anchors in separate sets (a single 2-byte anchor is a memmem
//! search). A text without any anchor is copied through untouched (the fast path). The hits
//! of all sets are merged in text order; at each only the rules owning an anchor that starts
//! there are tried, each as a regex *anchored at the hit*, so the cost of a rule is
//! proportional to the length of the candidate, never to the length of the text. Operator
//! patterns (`extra_patterns`) have no anchors and are searched over the whole text.
//!
//! Every match becomes a span; overlapping spans are merged (so a secret found by two rules is
//! removed whole) and each merged span is replaced by `[REDACTED:<rule>]` of its first rule.
//!
//! # The parts
//!
//! - `rules`: the table of built-in rules, each with an example it must redact.
//! - `anchors`: the table compiled, and the literal searchers that find the anchors.
//! - `search`: each rule tried at its anchor hits, and the operator patterns: the spans.
//! - `values`: what a matched value must look like (no placeholder, mask, flag or path for
//!   a keyword rule) and the bounded base64 decoding of two rules.
//! - `entropy`: the optional high-entropy token fallback.
//! - `spans`: overlapping spans merged, and the markers rendered in their place.
//! - `json`: every string of a JSON value, in one pass where nothing is found.
//! - `truncate`: the cut to head and tail, on the redacted text.
//! - `controls`: terminal control sequences removed from command output.

use std::borrow::Cow;
use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

mod anchors;
mod controls;
mod entropy;
mod json;
mod rules;
mod search;
mod spans;
mod truncate;
mod values;

pub use controls::{has_terminal_controls, strip_terminal_controls};
pub use entropy::ENTROPY_RULE;
pub use rules::{BUILTIN_RULES, BuiltinRule, LeftContext, builtin_rule_names};
pub use search::{OS_ERROR_MESSAGES, is_os_error_message};
pub use truncate::{CAPTURE_MARGIN, Captured, Truncated};
pub use values::{MAX_DECODED, ValueCheck, key_before};

use anchors::{BUILTIN, Builtin};
use search::secret_groups;
use spans::render;

/// Compiled-size limit for one operator pattern (a pathological pattern is refused at start-up
/// instead of eating memory on every call).
pub(crate) const EXTRA_PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// An operator-supplied pattern (`[redaction] extra_patterns`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtraPattern {
    /// Rule name used in `[REDACTED:<name>]`.
    pub name: String,
    /// Regular expression (Rust `regex` syntax).
    pub regex: String,
}

/// The `[redaction]` section of the policy.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedactionSettings {
    /// Redaction on or off (on by default).
    pub enabled: bool,
    /// High-entropy token fallback (off by default: it fires on SHAs and UUIDs).
    pub entropy_fallback: bool,
    /// Operator patterns added to the built-in rules.
    pub extra_patterns: Vec<ExtraPattern>,
}

impl Default for RedactionSettings {
    fn default() -> Self {
        RedactionSettings {
            enabled: true,
            entropy_fallback: false,
            extra_patterns: Vec::new(),
        }
    }
}

/// A redaction rule set could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RedactError {
    /// An operator pattern failed to compile.
    #[error("redaction pattern '{name}' does not compile: {message}")]
    BadPattern {
        /// The pattern's name.
        name: String,
        /// The compiler's message.
        message: String,
    },
}

/// The text that stands in place of a span found by the rule `name`.
fn marker_for(name: &str) -> Box<str> {
    format!("[REDACTED:{name}]").into_boxed_str()
}

/// An operator pattern, compiled.
#[derive(Debug, Clone)]
struct ExtraRule {
    marker: Box<str>,
    regex: Regex,
    secret_groups: Vec<usize>,
}

/// A compiled redaction rule set.
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
    entropy_fallback: bool,
    builtin: Arc<Builtin>,
    extras: Vec<ExtraRule>,
    entropy_marker: Box<str>,
}

impl Redactor {
    /// Build the built-in rules plus the operator's patterns.
    pub fn new(settings: &RedactionSettings) -> Result<Self, RedactError> {
        let builtin = match &*BUILTIN {
            Ok(builtin) => Arc::clone(builtin),
            Err(e) => return Err(e.clone()),
        };
        let mut extras = Vec::with_capacity(settings.extra_patterns.len());
        for pattern in &settings.extra_patterns {
            // A name with `]` or a newline would let a pattern forge or break the marker that
            // tells a reader where something was removed.
            let name_ok = !pattern.name.is_empty()
                && pattern.name.len() <= 64
                && pattern
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            if !name_ok {
                return Err(RedactError::BadPattern {
                    name: pattern.name.clone(),
                    message: "the name must be 1-64 characters of A-Z, a-z, 0-9, '-', '_', '.'"
                        .to_string(),
                });
            }
            // A pathological operator regex (huge counted repetition) is refused here instead
            // of costing memory and time on every output.
            let regex = RegexBuilder::new(&pattern.regex)
                .size_limit(EXTRA_PATTERN_SIZE_LIMIT)
                .dfa_size_limit(2 * EXTRA_PATTERN_SIZE_LIMIT)
                .build()
                .map_err(|e| RedactError::BadPattern {
                    name: pattern.name.clone(),
                    message: e.to_string(),
                })?;
            extras.push(ExtraRule {
                marker: marker_for(&pattern.name),
                secret_groups: secret_groups(&regex),
                regex,
            });
        }
        Ok(Redactor {
            enabled: settings.enabled,
            entropy_fallback: settings.entropy_fallback,
            builtin,
            extras,
            entropy_marker: marker_for(ENTROPY_RULE),
        })
    }

    /// Replace every secret in `text` with `[REDACTED:<rule>]`.
    pub fn redact(&self, text: &str) -> String {
        let spans = self.find_spans(text);
        if spans.is_empty() {
            return text.to_owned();
        }
        render(text, &spans)
    }

    /// The secrets in `text`: the text of each span [`Redactor::redact`] would replace, with
    /// the marker it would put there.
    pub fn secrets_in(&self, text: &str) -> Vec<(String, String)> {
        (self.find_spans(text).iter())
            .filter_map(|s| {
                text.get(s.start..s.end)
                    .map(|t| (t.to_owned(), s.marker.to_owned()))
            })
            .collect()
    }

    /// An argv as a record may keep it: each element redacted, and also in the context of
    /// its neighbours. The shell took away the quotes and blanks the rules key on
    /// (`aws_secret_access_key = KEY` is three elements, `DB_PASSWORD='a b c'` one element
    /// without its quotes), so the elements are joined into a command line again (a value
    /// with a blank quoted after its `=` or `:`, else the whole element) and every secret
    /// found there is replaced in each element it touches.
    pub fn redact_argv(&self, argv: &[String]) -> Vec<String> {
        let mut line = String::new();
        // For each byte of `line`: the element and the byte of it that it shows.
        let mut origin: Vec<Option<(usize, usize)>> = Vec::new();
        let mut push = |line: &mut String, text: &str, from: Option<(usize, usize)>| {
            for (k, _) in text.bytes().enumerate() {
                origin.push(from.map(|(i, at)| (i, at + k)));
            }
            line.push_str(text);
        };
        for (i, arg) in argv.iter().enumerate() {
            if !line.is_empty() {
                push(&mut line, " ", None);
            }
            let blank = arg.contains(char::is_whitespace) && !arg.contains('\'');
            let split = arg.find(['=', ':']).filter(|&k| {
                blank
                    && !arg
                        .get(..k)
                        .is_some_and(|p| p.contains(char::is_whitespace))
            });
            match split {
                Some(k) => {
                    push(&mut line, arg.get(..=k).unwrap_or_default(), Some((i, 0)));
                    push(&mut line, "'", None);
                    push(
                        &mut line,
                        arg.get(k + 1..).unwrap_or_default(),
                        Some((i, k + 1)),
                    );
                    push(&mut line, "'", None);
                }
                None if blank => {
                    push(&mut line, "'", None);
                    push(&mut line, arg, Some((i, 0)));
                    push(&mut line, "'", None);
                }
                None => push(&mut line, arg, Some((i, 0))),
            }
        }
        // For each element, which of its bytes a span covers (the span's index).
        let mut covered: Vec<Vec<Option<usize>>> =
            argv.iter().map(|a| vec![None; a.len()]).collect();
        let spans = self.find_spans(&line);
        for (n, span) in spans.iter().enumerate() {
            for (i, at) in (span.start..span.end).filter_map(|b| origin.get(b).copied().flatten()) {
                if let Some(slot) = covered.get_mut(i).and_then(|c| c.get_mut(at)) {
                    *slot = Some(n);
                }
            }
        }
        argv.iter()
            .zip(covered)
            .map(|(arg, covered)| {
                let mut out = String::with_capacity(arg.len());
                let mut last = None;
                for (at, c) in arg.char_indices() {
                    match covered.get(at).copied().flatten() {
                        Some(n) => {
                            if last != Some(n) {
                                out.push_str(spans.get(n).map_or("", |s| s.marker));
                            }
                            last = Some(n);
                        }
                        None => {
                            out.push(c);
                            last = None;
                        }
                    }
                }
                self.redact(&out)
            })
            .collect()
    }

    /// [`Redactor::redact`], borrowing `text` when nothing in it is replaced.
    fn redact_cow<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let spans = self.find_spans(text);
        if spans.is_empty() {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(render(text, &spans))
        }
    }
}

/// `text` with every fragment of each of `secrets` (a run of `min(len, 8)` bytes or more of
/// it, anywhere) replaced by the secret's marker. A text built from a request's arguments
/// before they were redacted (a refusal's reason quotes an argument, cut to a short prefix,
/// which no rule recognises any more) is made safe with the secrets found in the whole
/// arguments.
pub fn scrub_fragments(text: &str, secrets: &[(String, String)]) -> String {
    let mut out = text.as_bytes().to_vec();
    for (secret, marker) in secrets {
        let secret = secret.as_bytes();
        let min = secret.len().min(8);
        if min == 0 {
            continue;
        }
        'again: loop {
            for i in 0..=secret.len() - min {
                let Some(fragment) = secret.get(i..i + min) else {
                    continue;
                };
                let Some(p) = out.windows(min).position(|w| w == fragment) else {
                    continue;
                };
                let (mut j, mut q) = (i + min, p + min);
                while secret.get(j).is_some_and(|b| out.get(q) == Some(b)) {
                    j += 1;
                    q += 1;
                }
                out.splice(p..q, marker.bytes());
                continue 'again;
            }
            break;
        }
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod argv_tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new(&RedactionSettings::default()).unwrap()
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_argv_is_redacted_in_the_context_the_shell_took_away() {
        let r = redactor();
        let key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let out = r.redact_argv(&strings(&["echo", "aws_secret_access_key", "=", key]));
        assert_eq!(
            out[..3],
            strings(&["echo", "aws_secret_access_key", "="])[..]
        );
        assert_eq!(out[3], "[REDACTED:aws-secret-access-key]");
        let out = r.redact_argv(&strings(&[
            "env",
            "DB_PASSWORD=correct horse battery staple",
        ]));
        assert_eq!(out[1], "DB_PASSWORD=[REDACTED:password-assignment]");
        let plain = strings(&["git", "log", "--oneline", "-n", "5"]);
        assert_eq!(r.redact_argv(&plain), plain);
    }

    #[test]
    fn a_fragment_of_a_known_secret_is_scrubbed_wherever_it_stands() {
        let r = redactor();
        let secrets =
            r.secrets_in("curl -H 'Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c'");
        assert!(!secrets.is_empty());
        let reason = "'curl' is not allowed (argument '4f9a8b7c6d5e4f3a2b1c…')";
        let scrubbed = scrub_fragments(reason, &secrets);
        assert!(!scrubbed.contains("4f9a8b7c"), "{scrubbed}");
        assert!(
            scrubbed.starts_with("'curl' is not allowed (argument '[REDACTED:"),
            "{scrubbed}"
        );
        assert_eq!(scrub_fragments("nothing here", &secrets), "nothing here");
    }
}
