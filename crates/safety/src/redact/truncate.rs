//! Cutting a redacted stream to its size cap: head and tail kept, the middle replaced by
//! `... [N bytes omitted] ...`.
//!
//! The cut is chosen on the redacted text, never inside a marker nor a UTF-8 character, and
//! bytes captured only as a margin around an uncaptured middle are searched but never shown,
//! so a secret cut by the capture itself cannot leak a fragment.

use super::Redactor;
use super::spans::{Span, render, rendered_len};

/// Bytes captured past the cap on each side so a secret straddling a cut is seen whole.
pub const CAPTURE_MARGIN: usize = 8 * 1024;

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

impl Redactor {
    /// Redact the captured stream, then cut it to `cap` bytes keeping head and tail.
    ///
    /// - All bytes captured are redacted first; the cut is chosen on the redacted text, never
    ///   inside a `[REDACTED:..]` marker nor a UTF-8 character.
    /// - When the middle of the stream was never captured (`head + tail < total`), only the
    ///   first `head.len() - CAPTURE_MARGIN` bytes of `head` and the last
    ///   `tail.len() - CAPTURE_MARGIN` bytes of `tail` may be shown: the margins are seen by
    ///   the rules (so a secret straddling the cut is matched whole) but never emitted (a
    ///   secret cut by the capture itself could not be recognised there).
    /// - The head gets `cap / 2` bytes of output, the tail the rest; a marker that starts
    ///   inside the head budget (or ends inside the tail budget) is kept whole.
    /// - `omitted_bytes` counts the stream's bytes between the shown head and the shown tail.
    pub fn redact_then_truncate(&self, captured: &Captured, cap: usize) -> Truncated {
        let head_budget = cap / 2;
        let tail_budget = cap - head_budget;
        let captured_len = (captured.head.len() as u64).saturating_add(captured.tail.len() as u64);
        if captured_len >= captured.total {
            // Everything is here: one text, no artificial cut.
            let mut all = Vec::with_capacity(captured.head.len() + captured.tail.len());
            all.extend_from_slice(&captured.head);
            all.extend_from_slice(&captured.tail);
            let decoded = Decoded::new(&all);
            let spans = self.find_spans(&decoded.text);
            let rendered_len = rendered_len(&decoded.text, &spans);
            if rendered_len <= cap {
                return Truncated {
                    text: render(&decoded.text, &spans),
                    omitted_bytes: 0,
                };
            }
            let text_len = decoded.text.len();
            let head = take_head(&decoded.text, &spans, head_budget, text_len);
            let tail = take_tail(&decoded.text, &spans, tail_budget, head.end);
            if tail.start <= head.end {
                return Truncated {
                    text: render(&decoded.text, &spans),
                    omitted_bytes: 0,
                };
            }
            let omitted = decoded
                .to_raw(tail.start)
                .saturating_sub(decoded.to_raw(head.end)) as u64;
            return Truncated {
                text: join(head.out, omitted, tail.out),
                omitted_bytes: omitted,
            };
        }
        // The middle was never captured: head and tail are separate texts, each with a
        // margin at its cut that is searched but not shown.
        let head_dec = Decoded::new(&captured.head);
        let head_spans = self.find_spans(&head_dec.text);
        let head_safe_raw = captured.head.len().saturating_sub(CAPTURE_MARGIN);
        let head_limit = floor_char(&head_dec.text, head_dec.text_at_raw(head_safe_raw));
        let head = take_head(&head_dec.text, &head_spans, head_budget, head_limit);
        let head_raw_end = head_dec.to_raw(head.end) as u64;

        let tail_dec = Decoded::new(&captured.tail);
        let tail_spans = self.find_spans(&tail_dec.text);
        let tail_safe_raw = CAPTURE_MARGIN.min(captured.tail.len());
        let tail_limit = ceil_char(&tail_dec.text, tail_dec.text_at_raw_ceil(tail_safe_raw));
        let tail = take_tail(&tail_dec.text, &tail_spans, tail_budget, tail_limit);
        let tail_offset = captured.total.saturating_sub(captured.tail.len() as u64);
        let tail_raw_start = tail_offset.saturating_add(tail_dec.to_raw(tail.start) as u64);
        let omitted = tail_raw_start.saturating_sub(head_raw_end);
        Truncated {
            text: join(head.out, omitted, tail.out),
            omitted_bytes: omitted,
        }
    }
}

fn join(head: String, omitted: u64, tail: String) -> String {
    let mut text = head;
    text.push_str(&format!("\n... [{omitted} bytes omitted] ...\n"));
    text.push_str(&tail);
    text
}

fn floor_char(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The head of a redacted text: `out` is what is shown, `end` where it stops in `text`.
struct Head {
    out: String,
    end: usize,
}

/// At most `budget` bytes of output from the start of `text`, taking plain text only below
/// `limit`; a marker whose secret starts below `limit` is kept whole.
fn take_head(text: &str, spans: &[Span<'_>], budget: usize, limit: usize) -> Head {
    let mut out = String::new();
    let mut at = 0;
    let plain_until = |out: &mut String, at: &mut usize, stop: usize| -> bool {
        let room = budget.saturating_sub(out.len());
        let end = floor_char(text, stop.min(limit).min(at.saturating_add(room)));
        if end > *at {
            out.push_str(text.get(*at..end).unwrap_or_default());
            *at = end;
        }
        end >= stop
    };
    for span in spans {
        if !plain_until(&mut out, &mut at, span.start) {
            return Head { out, end: at };
        }
        if span.start >= limit || out.len() >= budget {
            return Head { out, end: at };
        }
        out.push_str(span.marker);
        at = span.end;
    }
    plain_until(&mut out, &mut at, text.len());
    Head { out, end: at }
}

/// The tail of a redacted text: `out` is what is shown, `start` where it begins in `text`.
struct Tail {
    out: String,
    start: usize,
}

/// At most `budget` bytes of output from the end of `text`, taking plain text only at or
/// above `limit`; a marker whose secret ends above `limit` is kept whole.
fn take_tail<'a>(text: &'a str, spans: &[Span<'a>], budget: usize, limit: usize) -> Tail {
    // Pieces collected back to front, then reversed.
    let mut pieces: Vec<&'a str> = Vec::new();
    let mut used = 0usize;
    let mut at = text.len();
    let plain_from =
        |pieces: &mut Vec<&'a str>, used: &mut usize, at: &mut usize, stop: usize| -> bool {
            let room = budget.saturating_sub(*used);
            let start = ceil_char(text, stop.max(limit).max(at.saturating_sub(room)));
            if start < *at {
                pieces.push(text.get(start..*at).unwrap_or_default());
                *used += *at - start;
                *at = start;
            }
            start <= stop
        };
    for span in spans.iter().rev() {
        if !plain_from(&mut pieces, &mut used, &mut at, span.end) {
            return Tail {
                out: pieces.iter().rev().copied().collect(),
                start: at,
            };
        }
        if span.end <= limit || used >= budget {
            return Tail {
                out: pieces.iter().rev().copied().collect(),
                start: at,
            };
        }
        pieces.push(span.marker);
        used += span.marker.len();
        at = span.start;
    }
    plain_from(&mut pieces, &mut used, &mut at, 0);
    Tail {
        out: pieces.iter().rev().copied().collect(),
        start: at,
    }
}

/// Bytes decoded to text, invalid UTF-8 replaced by U+FFFD, with the way back to byte offsets.
struct Decoded {
    text: String,
    /// `(text offset, byte offset)` just after each replacement character.
    breaks: Vec<(usize, usize)>,
}

impl Decoded {
    fn new(bytes: &[u8]) -> Self {
        if let Ok(text) = std::str::from_utf8(bytes) {
            return Decoded {
                text: text.to_owned(),
                breaks: Vec::new(),
            };
        }
        let mut text = String::with_capacity(bytes.len() + 16);
        let mut breaks = Vec::new();
        let mut raw = 0;
        for chunk in bytes.utf8_chunks() {
            text.push_str(chunk.valid());
            raw += chunk.valid().len();
            if !chunk.invalid().is_empty() {
                text.push(char::REPLACEMENT_CHARACTER);
                raw += chunk.invalid().len();
                breaks.push((text.len(), raw));
            }
        }
        Decoded { text, breaks }
    }

    /// Byte offset of a text offset that lies on a character boundary.
    fn to_raw(&self, at: usize) -> usize {
        let i = self.breaks.partition_point(|&(t, _)| t <= at);
        match i.checked_sub(1).and_then(|i| self.breaks.get(i)) {
            Some(&(t, r)) => r + (at - t),
            None => at,
        }
    }

    /// Text offset of the last character starting at or before byte offset `raw`.
    fn text_at_raw(&self, raw: usize) -> usize {
        let i = self.breaks.partition_point(|&(_, r)| r <= raw);
        match i.checked_sub(1).and_then(|i| self.breaks.get(i)) {
            Some(&(t, r)) => t + (raw - r),
            None => raw,
        }
    }

    /// Text offset of the first character that starts at or after byte offset `raw` (a
    /// replacement character covering `raw` is excluded).
    fn text_at_raw_ceil(&self, raw: usize) -> usize {
        let floor = self.text_at_raw(raw);
        let floor = floor_char(&self.text, floor);
        if self.to_raw(floor) < raw {
            ceil_char(&self.text, floor + 1)
        } else {
            floor
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoded_maps_offsets_across_invalid_bytes() {
        let d = Decoded::new(b"ab\xffcd\xe2\x82");
        assert_eq!(d.text, "ab\u{FFFD}cd\u{FFFD}");
        assert_eq!(d.to_raw(2), 2);
        assert_eq!(d.to_raw(5), 3);
        assert_eq!(d.to_raw(7), 5);
        assert_eq!(d.to_raw(d.text.len()), 7);
        assert_eq!(d.text_at_raw(3), 5);
        assert_eq!(floor_char(&d.text, d.text_at_raw(6)), 7);
        assert_eq!(d.text_at_raw_ceil(6), d.text.len());
    }
}
