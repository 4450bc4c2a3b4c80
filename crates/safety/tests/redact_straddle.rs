//! The straddle guarantee for every kind: every built-in rule's example
//! is placed in filler so that its secret straddles a cut at every byte offset (the head
//! cut, the end of the head capture, the start of the tail capture, the start of the shown
//! tail), captured the way the executor captures a pipe, redacted then truncated; no
//! fragment of the secret (any `min(len, 8)` bytes of it, the corpus's definition of a leak)
//! is emitted in the head, the tail or the marker.
//!
//! The offsets are exhaustive (a secret is at most a few hundred bytes); proptest draws the
//! cap, the filler and how long the stream is (an uncaptured middle, or all of it captured
//! but over the cap).

use aho_corasick::AhoCorasick;
use proptest::prelude::*;
use safety::redact::{BUILTIN_RULES, CAPTURE_MARGIN, RedactionSettings, Redactor};

use crate::redact_truncate::{capture, filler, markers_are_whole};

/// One rule's example, and what of it must never be emitted.
struct Kind {
    rule: &'static str,
    example: &'static str,
    secret: &'static str,
    /// Where `secret` starts in `example`.
    at: usize,
    /// Every substring of `min(len, 8)` bytes of `secret`.
    fragments: AhoCorasick,
}

fn kinds() -> Vec<Kind> {
    BUILTIN_RULES
        .iter()
        .map(|rule| {
            let at = rule
                .example
                .find(rule.example_secret)
                .unwrap_or_else(|| panic!("{}: example_secret is not in its example", rule.name));
            let secret = rule.example_secret.as_bytes();
            let width = secret.len().min(8);
            let fragments = AhoCorasick::new(secret.windows(width)).unwrap();
            Kind {
                rule: rule.name,
                example: rule.example,
                secret: rule.example_secret,
                at,
                fragments,
            }
        })
        .collect()
}

/// The longest stretch of an example up to the end of its secret (the room a placement
/// before a cut needs).
fn longest_through_secret() -> usize {
    kinds()
        .iter()
        .map(|k| k.at + k.secret.len())
        .max()
        .unwrap_or(0)
}

/// The longest example.
fn longest_example() -> usize {
    BUILTIN_RULES
        .iter()
        .map(|r| r.example.len())
        .max()
        .unwrap_or(0)
}

/// `len` bytes exactly: the first bytes of `filler` (cut at a character boundary), padded
/// with blanks.
fn exactly(filler: &str, len: usize) -> String {
    let mut end = len.min(filler.len());
    while !filler.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = filler[..end].to_string();
    out.extend(std::iter::repeat_n(' ', len - end));
    out
}

/// A stream of `total` bytes: filler, a blank, `kind`'s example with its secret starting at
/// byte `secret_at`, a blank, filler.
fn stream(kind: &Kind, secret_at: usize, total: usize, before: &str, after: &str) -> String {
    let example_at = secret_at - kind.at;
    let mut s = exactly(before, example_at - 1);
    s.push(' ');
    s.push_str(kind.example);
    s.push(' ');
    let rest = total - s.len();
    s.push_str(&exactly(after, rest));
    s
}

/// Every kind, every cut, every offset of its secret across that cut: the first leak (or
/// split marker), if any: the rule, the cut, the offset into the secret and the output.
fn first_leak(cap: usize, total: usize, before: &str, after: &str) -> Option<String> {
    let redactor = Redactor::new(&RedactionSettings::default()).unwrap();
    let tail_budget = cap - cap / 2;
    let captured_whole = total <= 2 * (cap + CAPTURE_MARGIN);
    let mut cuts = vec![("head cut", cap / 2), ("tail cut", total - tail_budget)];
    if !captured_whole {
        cuts.push(("head capture end", cap + CAPTURE_MARGIN));
        cuts.push(("tail capture start", total - (cap + CAPTURE_MARGIN)));
    }
    for kind in kinds() {
        for &(cut, cut_at) in &cuts {
            // The cut falls before byte `offset` of the secret: from "the secret starts at
            // the cut" to "it ends there".
            for offset in 0..=kind.secret.len() {
                let secret_at = cut_at - offset;
                let text = stream(&kind, secret_at, total, before, after);
                let out = redactor.redact_then_truncate(&capture(text.as_bytes(), cap), cap);
                if kind.fragments.is_match(&out.text) || !markers_are_whole(&out.text) {
                    return Some(format!(
                        "rule {}: cut {cut} at byte {cut_at}, secret offset {offset}, cap {cap}, \
                         total {total}: {:?}",
                        kind.rule, out.text
                    ));
                }
            }
        }
    }
    None
}

/// (cap, total): a stream whose middle is never captured, or one captured whole but longer
/// than the cap; either has room for any example on either side of any cut.
fn cap_and_total() -> impl Strategy<Value = (usize, usize)> {
    let room = longest_example() + 2;
    let min_cap = 2 * (longest_through_secret() + 2);
    (min_cap..4096usize, any::<bool>(), 0usize..4096).prop_map(move |(cap, whole, extra)| {
        let total = if whole {
            // Over the cap by enough that both cut regions hold an example, and captured whole.
            (cap + 2 * room + extra).min(2 * (cap + CAPTURE_MARGIN))
        } else {
            2 * (cap + CAPTURE_MARGIN) + 2 * room + extra
        };
        (cap, total)
    })
}

proptest! {
    // Each case runs every kind at every offset of every cut (thousands of redactions).
    #![proptest_config(ProptestConfig { cases: 3, ..ProptestConfig::default() })]

    #[test]
    fn no_fragment_of_any_kind_survives_a_cut_at_any_offset(
        (cap, total) in cap_and_total(),
        before in filler(3 * (4096 + CAPTURE_MARGIN)),
        after in filler(3 * (4096 + CAPTURE_MARGIN)),
    ) {
        let leak = first_leak(cap, total, &before, &after);
        prop_assert!(leak.is_none(), "{}", leak.unwrap_or_default());
    }
}

#[test]
fn every_rule_example_is_placed_at_every_cut() {
    // The property above is only as strong as its placements: each secret really lies
    // across the cut (checked here on the stream itself), for the smallest cap drawn.
    let cap = 2 * (longest_through_secret() + 2);
    let total = 2 * (cap + CAPTURE_MARGIN) + 2 * (longest_example() + 2);
    for kind in kinds() {
        for cut_at in [
            cap / 2,
            total - (cap - cap / 2),
            total - (cap + CAPTURE_MARGIN),
        ] {
            for offset in 0..=kind.secret.len() {
                let text = stream(&kind, cut_at - offset, total, "", "");
                assert_eq!(text.len(), total, "{}", kind.rule);
                assert_eq!(
                    &text[cut_at - offset..cut_at - offset + kind.secret.len()],
                    kind.secret,
                    "{}",
                    kind.rule
                );
            }
        }
    }
}
