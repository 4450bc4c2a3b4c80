//! The high-entropy fallback (`entropy_fallback`, off by default): a long token of letters
//! and digits whose characters look random enough is replaced as `[REDACTED:high-entropy]`.
//!
//! Off by default because it also fires on content hashes and identifiers that are not
//! secrets; hex (git SHAs) stays below its threshold, random base64 goes above it.

use super::Redactor;
use super::spans::Span;

/// Name used for spans found by the entropy fallback.
pub const ENTROPY_RULE: &str = "high-entropy";

fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=' | b'_' | b'-')
}

/// Shannon entropy in bits per byte.
fn entropy(bytes: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in bytes {
        if let Some(count) = counts.get_mut(usize::from(b)) {
            *count += 1;
        }
    }
    let len = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

/// Minimum length of a token the entropy fallback considers.
const ENTROPY_MIN_LEN: usize = 24;
/// Bits per character above which a token counts as random. Hex (git SHAs) cannot exceed 4.0
/// and a UUID stays near 4.0; random base64 of 24+ characters is typically above 4.3.
const ENTROPY_THRESHOLD: f64 = 4.2;

impl Redactor {
    pub(super) fn entropy_spans<'s>(
        &'s self,
        bytes: &[u8],
        order: usize,
        spans: &mut Vec<Span<'s>>,
    ) {
        let mut i = 0;
        while i < bytes.len() {
            if !bytes.get(i).copied().is_some_and(is_token_byte) {
                i += 1;
                continue;
            }
            let start = i;
            while bytes.get(i).copied().is_some_and(is_token_byte) {
                i += 1;
            }
            let token = bytes.get(start..i).unwrap_or_default();
            if token.len() >= ENTROPY_MIN_LEN
                && token.iter().any(u8::is_ascii_digit)
                && token.iter().any(u8::is_ascii_alphabetic)
                && entropy(token) >= ENTROPY_THRESHOLD
            {
                spans.push(Span {
                    start,
                    end: i,
                    order,
                    marker: &self.entropy_marker,
                });
            }
        }
    }
}
