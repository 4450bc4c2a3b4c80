//! Spans of a text to replace: overlapping ones merged (a secret found in part by two rules
//! leaves nothing), then each rendered as its rule's `[REDACTED:<rule>]` marker.

/// A part of a text to replace.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span<'a> {
    pub(super) start: usize,
    pub(super) end: usize,
    /// Table position (built-ins first, then operator patterns, then entropy): ties go to the
    /// earlier rule.
    pub(super) order: usize,
    pub(super) marker: &'a str,
}

/// Sort spans and merge overlapping ones: a secret found in part by two rules leaves nothing.
pub(super) fn merge(mut spans: Vec<Span<'_>>) -> Vec<Span<'_>> {
    if spans.len() < 2 {
        return spans;
    }
    spans.sort_unstable_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(a.order.cmp(&b.order))
    });
    let mut merged: Vec<Span<'_>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

/// The length of `text` once its spans are replaced by their markers.
pub(super) fn rendered_len(text: &str, spans: &[Span<'_>]) -> usize {
    spans.iter().fold(text.len(), |len, s| {
        len - (s.end - s.start) + s.marker.len()
    })
}

/// `text` with each span replaced by its marker.
pub(super) fn render(text: &str, spans: &[Span<'_>]) -> String {
    let mut out = String::with_capacity(rendered_len(text, spans));
    let mut at = 0;
    for span in spans {
        out.push_str(text.get(at..span.start).unwrap_or_default());
        out.push_str(span.marker);
        at = span.end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}
