//! Redaction, then truncation: head + tail kept, the marker says how much was dropped, and a
//! secret straddling any cut is removed whole (no fragment of it is ever emitted).

use proptest::prelude::*;
use safety::redact::{CAPTURE_MARGIN, Captured, RedactionSettings, Redactor, Truncated};

fn redactor() -> Redactor {
    match Redactor::new(&RedactionSettings::default()) {
        Ok(r) => r,
        Err(e) => panic!("redactor does not build: {e}"),
    }
}

/// What the executor captures from a stream of `stream.len()` bytes under `cap`.
pub fn capture(stream: &[u8], cap: usize) -> Captured {
    let head_len = stream.len().min(cap + CAPTURE_MARGIN);
    let (head, rest) = stream.split_at(head_len);
    let tail_len = rest.len().min(cap + CAPTURE_MARGIN);
    let tail = &rest[rest.len() - tail_len..];
    Captured {
        head: head.to_vec(),
        tail: tail.to_vec(),
        total: stream.len() as u64,
    }
}

fn truncate(stream: &[u8], cap: usize) -> Truncated {
    redactor().redact_then_truncate(&capture(stream, cap), cap)
}

/// Every `[REDACTED` in `text` starts a whole `[REDACTED:<name>]` marker.
pub fn markers_are_whole(text: &str) -> bool {
    text.match_indices("[REDACTED").all(|(i, _)| {
        let rest = &text[i + "[REDACTED".len()..];
        rest.strip_prefix(':')
            .and_then(|r| r.find(']').map(|end| &r[..end]))
            .is_some_and(|name| {
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
    })
}

#[test]
fn short_output_is_returned_whole() {
    let out = truncate(b"hello\nworld\n", 1024);
    assert_eq!(
        out,
        Truncated {
            text: "hello\nworld\n".to_string(),
            omitted_bytes: 0
        }
    );
}

#[test]
fn long_output_keeps_head_and_tail_with_exact_omitted_count() {
    let cap = 1000;
    let stream: Vec<u8> = (0..50_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let out = truncate(&stream, cap);
    let marker = format!("\n... [{} bytes omitted] ...\n", out.omitted_bytes);
    let (head, tail) = out
        .text
        .split_once(&marker)
        .unwrap_or_else(|| panic!("no marker in {:?}", out.text));
    assert_eq!(head.len(), cap / 2);
    assert_eq!(tail.len(), cap - cap / 2);
    assert_eq!(head.as_bytes(), &stream[..cap / 2]);
    assert_eq!(tail.as_bytes(), &stream[stream.len() - (cap - cap / 2)..]);
    assert_eq!(out.omitted_bytes, (stream.len() - cap) as u64);
}

#[test]
fn fully_captured_but_over_cap_is_cut_with_exact_count() {
    let cap = 100;
    let stream = vec![b'x'; 300];
    let out = truncate(&stream, cap);
    assert_eq!(out.omitted_bytes, 200);
    assert!(out.text.contains("... [200 bytes omitted] ..."));
}

#[test]
fn invalid_utf8_is_converted_lossily() {
    let out = truncate(b"ok \xff\xfe done", 1024);
    assert_eq!(out.text, "ok \u{FFFD}\u{FFFD} done");
    assert_eq!(out.omitted_bytes, 0);
}

#[test]
fn omitted_count_is_in_stream_bytes_even_with_invalid_utf8() {
    let cap = 100;
    let mut stream = vec![b'a'; 50];
    stream.extend(std::iter::repeat_n(0xffu8, 1000));
    stream.extend(vec![b'z'; 50]);
    let out = truncate(&stream, cap);
    assert!(out.text.starts_with(&"a".repeat(50)), "{:?}", out.text);
    assert!(out.text.ends_with(&"z".repeat(50)), "{:?}", out.text);
    assert_eq!(out.omitted_bytes, 1000);
}

#[test]
fn multibyte_characters_are_never_split() {
    let stream = "日本語のテキスト".repeat(5000);
    for cap in [97, 100, 101, 1000, 4097] {
        let out = truncate(stream.as_bytes(), cap);
        assert!(
            !out.text.contains('\u{FFFD}'),
            "cap {cap}: a character was split"
        );
    }
}

#[test]
fn markers_are_never_split_by_the_cut() {
    // Secrets back to back: every cut position falls near a marker.
    let token = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d";
    let stream = format!("{token} ").repeat(3000);
    for cap in [10, 33, 64, 100, 999, 4096] {
        let out = truncate(stream.as_bytes(), cap);
        assert!(markers_are_whole(&out.text), "cap {cap}: {:?}", out.text);
        assert!(!out.text.contains("ghp_u8jz"), "cap {cap}");
        assert!(!out.text.contains("IgxLd6Gn"), "cap {cap}");
    }
}

#[test]
fn secret_straddling_the_head_cut_is_removed_whole() {
    let cap = 200;
    let token = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d";
    // The token starts 10 bytes before the head budget ends.
    let mut stream = "a".repeat(cap / 2 - 10);
    stream.push(' ');
    stream.push_str(token);
    stream.push(' ');
    stream.push_str(&"b".repeat(100_000));
    let out = truncate(stream.as_bytes(), cap);
    assert!(
        out.text.contains("[REDACTED:github-personal-access-token]"),
        "{:?}",
        out.text
    );
    assert!(!out.text.contains("ghp_u8jz"));
}

#[test]
fn secret_straddling_the_tail_capture_start_leaves_no_fragment() {
    // Attack: the tail capture begins in the middle of a token, so the rules cannot recognise
    // its second half; that half lies in the margin, which is never shown.
    let cap = 200;
    let token = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d";
    let after = cap + CAPTURE_MARGIN - 20;
    let mut stream = "a".repeat(100_000);
    stream.push(' ');
    stream.push_str(token);
    stream.push_str(&"\n".repeat(after));
    let out = truncate(stream.as_bytes(), cap);
    for window in token.as_bytes().windows(8) {
        let piece = std::str::from_utf8(window).unwrap_or_default();
        assert!(
            !out.text.contains(piece),
            "fragment {piece:?} in {:?}",
            out.text
        );
    }
}

#[test]
fn pem_key_longer_than_the_margin_cut_in_the_middle_leaves_no_body() {
    // Attack: a key whose BEGIN line is in the omitted middle and whose body reaches into
    // the tail; the END line pulls the body before it into the redaction.
    let cap = 512;
    let line = "MIIEowIBAAKCAQEA7V21jxUdcfQm9seB1qRmUR8AK3R2GgLLTZQISApQyOMqlfZ\n";
    let mut stream = "log line\n".repeat(5000);
    stream.push_str("-----BEGIN RSA PRIVATE KEY-----\n");
    stream.push_str(&line.repeat(400));
    stream.push_str("-----END RSA PRIVATE KEY-----\n");
    stream.push_str("done\n");
    let out = truncate(stream.as_bytes(), cap);
    assert!(!out.text.contains("MIIEowIB"), "{:?}", out.text);
    assert!(!out.text.contains("QyOMqlfZ"), "{:?}", out.text);
    assert!(
        out.text.ends_with("[REDACTED:pem-private-key]\ndone\n"),
        "{:?}",
        out.text
    );
}

#[test]
fn disabled_redaction_still_truncates() {
    let r = match Redactor::new(&RedactionSettings {
        enabled: false,
        ..RedactionSettings::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let stream = vec![b'q'; 10_000];
    let out = r.redact_then_truncate(&capture(&stream, 100), 100);
    assert_eq!(out.omitted_bytes, 9_900);
}

/// A secret as it appears in output, and the part of it that must never be emitted.
#[derive(Debug, Clone)]
struct Secret {
    text: String,
    value: String,
}

fn alnum(len: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![b'A'..=b'Z', b'a'..=b'z', b'0'..=b'9'],
        len..=len,
    )
    .prop_map(|v| String::from_utf8(v).unwrap_or_default())
}

fn base64_line(len: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            b'A'..=b'Z',
            b'a'..=b'z',
            b'0'..=b'9',
            Just(b'+'),
            Just(b'/')
        ],
        len..=len,
    )
    .prop_map(|v| String::from_utf8(v).unwrap_or_default())
}

fn secret() -> impl Strategy<Value = Secret> {
    prop_oneof![
        alnum(36).prop_map(|s| {
            let t = format!("ghp_{s}");
            Secret {
                text: t.clone(),
                value: t,
            }
        }),
        alnum(16).prop_map(|s| {
            let t = format!("AKIA{}", s.to_ascii_uppercase());
            Secret {
                text: t.clone(),
                value: t,
            }
        }),
        (12usize..40).prop_flat_map(alnum).prop_map(|s| Secret {
            text: format!("DB_PASSWORD={s}"),
            value: s,
        }),
        (10usize..30).prop_flat_map(alnum).prop_map(|s| Secret {
            text: format!("postgres://app:{s}@db.internal:5432/app"),
            value: s,
        }),
        (alnum(20), alnum(40), alnum(43)).prop_map(|(a, b, c)| {
            let t = format!("eyJ{a}.eyJ{b}.{c}");
            Secret {
                text: t.clone(),
                value: t,
            }
        }),
        proptest::collection::vec(base64_line(64), 1..40).prop_map(|lines| {
            let body = lines.join("\n");
            Secret {
                text: format!(
                    "-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
                ),
                value: body,
            }
        }),
    ]
}

/// `len` bytes (about) of filler text: lower-case words, blanks, newlines and multibyte
/// characters, drawn from one random number (fast even unoptimised; proptest varies it).
pub fn filler(len: usize) -> impl Strategy<Value = String> {
    any::<u64>().prop_map(move |seed| {
        let mut state = seed | 1;
        let mut out = String::with_capacity(len + 4);
        while out.len() < len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let c = match state % 13 {
                0..=7 => char::from(b'a' + (state >> 8) as u8 % 26),
                8 | 9 => ' ',
                10 => '\n',
                11 => 'é',
                _ => '日',
            };
            if out.len() + c.len_utf8() > len {
                out.push(' ');
            } else {
                out.push(c);
            }
        }
        out
    })
}

/// (cap, stream, secret value): the secret placed just around one of the cut points.
fn straddling_case() -> impl Strategy<Value = (usize, String, String)> {
    (
        64usize..3000,
        secret(),
        0usize..6,
        0usize..4 * (3000 + CAPTURE_MARGIN),
        any::<prop::sample::Index>(),
    )
        .prop_flat_map(|(cap, secret, which, total_hint, jitter)| {
            let total = total_hint.max(cap / 2 + secret.text.len() + 2);
            let m = CAPTURE_MARGIN;
            let cuts = [
                cap / 2,
                cap,
                cap + m,
                total.saturating_sub(cap + m),
                total.saturating_sub(cap),
                total.saturating_sub(cap / 2),
            ];
            let cut = cuts[which];
            // Secret start somewhere from "ends right at the cut" to "starts just after".
            let span = secret.text.len() + 60;
            let offset = jitter.index(span);
            let start = (cut + 30)
                .saturating_sub(offset)
                .min(total.saturating_sub(secret.text.len() + 2));
            let before = start;
            let after = total.saturating_sub(start + secret.text.len() + 2);
            (Just(cap), filler(before), Just(secret), filler(after))
        })
        .prop_map(|(cap, before, secret, after)| {
            let stream = format!("{before} {} {after}", secret.text);
            (cap, stream, secret.value)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn no_fragment_of_a_secret_straddling_a_cut_is_emitted((cap, stream, value) in straddling_case()) {
        let out = truncate(stream.as_bytes(), cap);
        for line in value.lines() {
            for window in line.as_bytes().windows(8) {
                let piece = std::str::from_utf8(window).unwrap_or_default();
                prop_assert!(!out.text.contains(piece), "fragment {:?} emitted (cap {}, total {})", piece, cap, stream.len());
            }
        }
        prop_assert!(markers_are_whole(&out.text));
        // About `cap` bytes: the budget plus at most a marker on each side and the cut line.
        prop_assert!(out.text.len() <= cap + 2 * 64 + 48, "output {} bytes for cap {}", out.text.len(), cap);
        prop_assert_eq!(out.omitted_bytes == 0, !out.text.contains(" bytes omitted] ..."));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_stay_bounded(bytes in proptest::collection::vec(any::<u8>(), 0..40_000), cap in 0usize..5000) {
        let out = truncate(&bytes, cap);
        prop_assert!(out.omitted_bytes <= bytes.len() as u64);
        if out.omitted_bytes == 0 {
            // Nothing cut: the text is the whole (lossy, redacted) stream.
            prop_assert!(!out.text.contains(" bytes omitted] ..."));
        }
    }
}
