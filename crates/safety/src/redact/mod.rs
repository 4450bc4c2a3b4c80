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
pub use values::{MAX_DECODED, ValueCheck};

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
