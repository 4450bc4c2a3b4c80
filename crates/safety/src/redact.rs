//! Redaction, then truncation (SPEC §4.5).
//!
//! CONTRACT (other modules rely on it):
//! - `Redactor::new(&RedactionSettings) -> Result<Redactor, RedactError>` (operator regex that
//!   does not compile is an error naming the pattern).
//! - `Redactor::redact(&self, &str) -> String`: every secret replaced by `[REDACTED:<rule>]`.
//! - `Redactor::redact_json(&self, &mut serde_json::Value)`: every string inside redacted.
//! - `Redactor::redact_then_truncate(&self, &Captured, cap) -> Truncated`: head + tail kept,
//!   `... [N bytes omitted] ...` marker between, no fragment of a secret ever emitted.
//! - `Captured` is what the executor fills while reading a pipe: the first
//!   `cap + CAPTURE_MARGIN` bytes, the last `cap + CAPTURE_MARGIN` bytes, and the total.

use serde::Deserialize;

/// Bytes captured past the cap on each side so a secret straddling a cut is seen whole.
pub const CAPTURE_MARGIN: usize = 8 * 1024;

/// An operator-supplied pattern (`[redaction] extra_patterns`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraPattern {
    /// Rule name used in `[REDACTED:<name>]`.
    pub name: String,
    /// Regular expression (Rust `regex` syntax).
    pub regex: String,
}

/// The `[redaction]` section of the policy.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
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
        RedactionSettings { enabled: true, entropy_fallback: false, extra_patterns: Vec::new() }
    }
}

/// A redaction rule set could not be built.
#[derive(Debug, thiserror::Error)]
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

/// Bytes read from one output stream, bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first `min(total, cap + CAPTURE_MARGIN)` bytes.
    pub head: Vec<u8>,
    /// The last bytes after `head` (at most `cap + CAPTURE_MARGIN`), empty if all fit in `head`.
    pub tail: Vec<u8>,
    /// How many bytes the stream produced in all.
    pub total: u64,
}

/// The text that leaves, after redaction then truncation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// Redacted text, head + marker + tail when cut.
    pub text: String,
    /// Bytes dropped between head and tail (0 when nothing was cut).
    pub omitted_bytes: u64,
}

/// A compiled redaction rule set.
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
}

impl Redactor {
    /// Build the built-in rules plus the operator's patterns.
    pub fn new(settings: &RedactionSettings) -> Result<Self, RedactError> {
        Ok(Redactor { enabled: settings.enabled })
    }

    /// Replace every secret in `text` with `[REDACTED:<rule>]`.
    pub fn redact(&self, text: &str) -> String {
        let _ = self.enabled;
        text.to_string()
    }

    /// Redact every string inside a JSON value, in place.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        let _ = value;
    }

    /// Redact the captured stream, then cut it to `cap` bytes keeping head and tail.
    pub fn redact_then_truncate(&self, captured: &Captured, cap: usize) -> Truncated {
        let _ = cap;
        let mut bytes = captured.head.clone();
        bytes.extend_from_slice(&captured.tail);
        Truncated { text: self.redact(&String::from_utf8_lossy(&bytes)), omitted_bytes: 0 }
    }
}
