//! Terminal control sequences removed from command output before it is redacted: colour,
//! cursor, title, hyperlink and clipboard sequences, and the C1 controls written in UTF-8.
//!
//! The model gains nothing from them, they split or glue keys so the rules miss them, and on
//! the client's terminal they are an injection vector (docs/redaction.md).

use std::borrow::Cow;

use super::Redactor;
use super::truncate::{Captured, Truncated};

/// Whether `bytes` may hold a terminal control sequence: an ESC (0x1b) or a C1 control
/// encoded in UTF-8 (U+0080..U+009F are `0xC2 0x80..0x9F`). Without either,
/// [`strip_terminal_controls`] changes nothing, so output without them skips it (two SIMD
/// byte searches, the fast path).
pub fn has_terminal_controls(bytes: &[u8]) -> bool {
    let mut from = 0;
    while let Some(i) = bytes
        .get(from..)
        .and_then(|b| memchr::memchr2(0x1b, 0xc2, b))
    {
        let at = from + i;
        if bytes.get(at) == Some(&0x1b)
            || bytes.get(at + 1).is_some_and(|c| (0x80..=0x9f).contains(c))
        {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Where [`strip_terminal_controls`] stands in the output, as a terminal's parser would
/// (the DEC/ECMA-48 state machine, <https://vt100.net/emu/dec_ansi_parser>).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Controls {
    /// Plain text: kept.
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (` ` to `/`), waiting for the final byte.
    EscapeIntermediate,
    /// A control sequence (ESC `[` or CSI U+009B): parameters and intermediates up to a
    /// final byte `@` to `~`.
    Csi,
    /// An operating system command (ESC `]` or OSC U+009D): up to BEL or ST.
    Osc,
    /// A device control string, SOS, PM or APC (ESC `P`/`X`/`^`/`_`, U+0090/98/9E/9F): up
    /// to ST.
    String,
}

/// Remove every terminal control sequence from command output: CSI sequences (colours,
/// cursor moves, `\x1b[01;31m`), OSC strings ended by BEL or ST (titles, OSC 8 hyperlinks,
/// OSC 52 clipboard writes), DCS, SOS, PM and APC strings, two- and three-byte ESC
/// sequences (`ESC 7`, `ESC ( B`), and the C1 controls U+0080..U+009F written in UTF-8
/// (U+009B is CSI, U+009D OSC, ...), which some terminals obey like their ESC forms.
///
/// Why: the model gains nothing from them, a key coloured by `grep --color=always` ends up
/// glued to the escape's final letter (and a key split by escapes is no longer one string),
/// and on the client's terminal they are an injection vector (a hyperlink that lies about
/// its target, a clipboard write, a title).
///
/// Kept: every other byte, including the C0 controls (tab, newline, carriage return, BEL
/// outside an OSC, ...); a C0 control inside a sequence is kept too, since a terminal
/// executes it there. CAN (0x18) and SUB (0x1a) cancel a sequence and are removed with it.
/// An unterminated sequence runs to the end of the text. Bytes that are not UTF-8 are left
/// as they are (they are shown as U+FFFD, never passed on raw), except a lone 0xC2, which
/// becomes U+FFFD here so that no removal can join it to a later byte into a C1 control.
/// So the result never holds a control sequence, whatever the input.
pub fn strip_terminal_controls(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !has_terminal_controls(bytes) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut state = Controls::Ground;
    let mut i = 0;
    while i < bytes.len() {
        if state == Controls::Ground {
            // Copy the plain run up to the next byte that may start a sequence.
            let rest = bytes.get(i..).unwrap_or_default();
            let run = memchr::memchr2(0x1b, 0xc2, rest).unwrap_or(rest.len());
            out.extend_from_slice(rest.get(..run).unwrap_or_default());
            i += run;
        }
        let Some(&b) = bytes.get(i) else { break };
        // A C1 control in UTF-8 acts in every state, as its ESC form does.
        if b == 0xc2
            && let Some(&c1 @ 0x80..=0x9f) = bytes.get(i + 1)
        {
            state = match c1 {
                0x9b => Controls::Csi,
                0x9d => Controls::Osc,
                0x90 | 0x98 | 0x9e | 0x9f => Controls::String,
                // ST (0x9c) ends a string; any other C1 control is removed on its own.
                _ => Controls::Ground,
            };
            i += 2;
            continue;
        }
        i += 1;
        // A 0xC2 that does not start a character here is shown as U+FFFD anyway; written
        // as U+FFFD at once, it cannot become a C1 control with a byte after a sequence
        // removed behind it (`C2 ESC c 9B` must not leave `C2 9B`, which is CSI).
        let lone_c2 = b == 0xc2 && !bytes.get(i).is_some_and(|n| (0x80..=0xbf).contains(n));
        let keep = |out: &mut Vec<u8>| {
            if lone_c2 {
                out.extend_from_slice("\u{FFFD}".as_bytes());
            } else {
                out.push(b);
            }
        };
        match (state, b) {
            (_, 0x1b) => state = Controls::Escape,
            (Controls::Ground, _) => keep(&mut out),
            (_, 0x18 | 0x1a) => state = Controls::Ground,
            (Controls::Osc, 0x07) => state = Controls::Ground,
            (Controls::Osc | Controls::String, _) => {}
            // DEL is ignored inside a sequence.
            (_, 0x7f) => {}
            // A C0 control is executed inside a sequence, which goes on.
            (_, 0x00..=0x1f) => out.push(b),
            (Controls::Escape, b'[') => state = Controls::Csi,
            (Controls::Escape, b']') => state = Controls::Osc,
            (Controls::Escape, b'P' | b'X' | b'^' | b'_') => state = Controls::String,
            (Controls::Escape | Controls::EscapeIntermediate, 0x20..=0x2f) => {
                state = Controls::EscapeIntermediate
            }
            (Controls::Escape | Controls::EscapeIntermediate, 0x30..=0x7e) => {
                state = Controls::Ground
            }
            (Controls::Csi, 0x20..=0x3f) => {}
            (Controls::Csi, 0x40..=0x7e) => state = Controls::Ground,
            // Anything else (a non-ASCII character) aborts the sequence and is text.
            (Controls::Escape | Controls::EscapeIntermediate | Controls::Csi, _) => {
                state = Controls::Ground;
                keep(&mut out);
            }
        }
    }
    Cow::Owned(out)
}

/// [`strip_terminal_controls`] of a captured stream. Everything captured is one text: it is
/// stripped whole (a sequence may straddle head and tail). Otherwise head and tail are
/// stripped each on its own, and the total loses what was removed from them (the middle
/// that was never captured is counted as it came).
fn strip_captured(captured: &Captured) -> Captured {
    let captured_len = (captured.head.len() as u64).saturating_add(captured.tail.len() as u64);
    if captured_len >= captured.total {
        let mut all = Vec::with_capacity(captured.head.len() + captured.tail.len());
        all.extend_from_slice(&captured.head);
        all.extend_from_slice(&captured.tail);
        let head = strip_terminal_controls(&all).into_owned();
        return Captured {
            total: head.len() as u64,
            head,
            tail: Vec::new(),
        };
    }
    let head = strip_terminal_controls(&captured.head).into_owned();
    let tail = strip_terminal_controls(&captured.tail).into_owned();
    let removed = (captured.head.len() - head.len()) + (captured.tail.len() - tail.len());
    Captured {
        total: captured.total.saturating_sub(removed as u64),
        head,
        tail,
    }
}

impl Redactor {
    /// A command's output as it may be shown to the model: terminal control sequences
    /// removed ([`strip_terminal_controls`]), then redacted, then cut to `cap` bytes
    /// ([`Redactor::redact_then_truncate`]). Removing comes first so the rules see the text
    /// the model gets: a key coloured by `grep --color=always` or split by escapes is one
    /// string again. Output without ESC or a C1 control is not copied (the fast path).
    /// Control sequences are removed even when redaction is off. `omitted_bytes` counts
    /// bytes of the stripped output (the uncaptured middle as it came).
    pub fn strip_redact_then_truncate(&self, captured: &Captured, cap: usize) -> Truncated {
        if has_terminal_controls(&captured.head) || has_terminal_controls(&captured.tail) {
            self.redact_then_truncate(&strip_captured(captured), cap)
        } else {
            self.redact_then_truncate(captured, cap)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(bytes: &[u8]) -> Vec<u8> {
        strip_terminal_controls(bytes).into_owned()
    }

    #[test]
    fn text_without_controls_is_borrowed_unchanged() {
        for text in [
            &b"plain text\twith tabs\r\nand CRLF, a bell \x07 and NUL \x00"[..],
            "caf\u{e9} \u{a0}\u{b0} \u{20ac} \u{1F600} \u{a9}".as_bytes(),
            b"\xff\xfe raw 8-bit \x9b31m (not UTF-8, shown as U+FFFD later)",
            b"",
        ] {
            assert!(!has_terminal_controls(text));
            assert!(matches!(strip_terminal_controls(text), Cow::Borrowed(b) if b == text));
        }
    }

    #[test]
    fn csi_sequences_are_removed() {
        assert_eq!(
            strip(b"\x1b[01;31m\x1b[Kghp_x\x1b[m\x1b[K rest"),
            b"ghp_x rest"
        );
        assert_eq!(
            strip(b"\x1b[?25l\x1b[2J\x1b[1;1H\x1b[38;5;196mA\x1b[0m"),
            b"A"
        );
        assert_eq!(strip(b"\x1b[38:2::255:0:0mB\x1b[>4;2m\x1b[ q"), b"B");
        // DEL inside is ignored; a C0 control inside is kept (a terminal executes it).
        assert_eq!(strip(b"a\x1b[3\x7f1mb\x1b[3\n1mc"), b"ab\nc");
    }

    #[test]
    fn osc_strings_end_at_bel_or_st() {
        assert_eq!(strip(b"\x1b]0;my title\x07after"), b"after");
        assert_eq!(
            strip(b"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ me"),
            b"click me"
        );
        assert_eq!(strip(b"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07x"), b"x");
        // Everything up to the terminator goes, newlines and UTF-8 included.
        assert_eq!(strip("\x1b]2;a\nb\u{e9}\x07c".as_bytes()), b"c");
        // Unterminated: to the end of the text.
        assert_eq!(strip(b"shown\x1b]0;never ends"), b"shown");
    }

    #[test]
    fn dcs_sos_pm_apc_strings_end_at_st() {
        assert_eq!(strip(b"\x1bPq#0;2;0;0;0#0!10~\x1b\\a"), b"a");
        assert_eq!(strip(b"\x1bXsos\x07still sos\x1b\\b"), b"b");
        assert_eq!(strip(b"\x1b^pm\x1b\\c"), b"c");
        assert_eq!(strip(b"\x1b_Gf=100;AAAA\x1b\\d"), b"d");
        assert_eq!(strip(b"\x1bP1$r0m\x1b\\e"), b"e");
    }

    #[test]
    fn short_escape_sequences_are_removed() {
        assert_eq!(strip(b"\x1b7a\x1b8\x1bc\x1bM\x1b=\x1b>"), b"a");
        assert_eq!(strip(b"\x1b(Bb\x1b)0\x1b#8\x1b%G"), b"b");
        // ESC ESC: the second starts over.
        assert_eq!(strip(b"\x1b\x1b[31mc"), b"c");
        // A lone ESC at the end goes too.
        assert_eq!(strip(b"d\x1b"), b"d");
    }

    #[test]
    fn c1_controls_in_utf8_act_like_their_esc_forms() {
        assert_eq!(strip("\u{9b}31mred\u{9b}0m".as_bytes()), b"red");
        assert_eq!(strip("\u{9d}0;title\u{9c}x".as_bytes()), b"x");
        assert_eq!(strip("\u{9d}8;;https://e/\u{7}y".as_bytes()), b"y");
        assert_eq!(strip("\u{90}q#1\u{9c}z".as_bytes()), b"z");
        assert_eq!(
            strip("\u{98}a\u{9c}\u{9e}b\u{9c}\u{9f}c\u{9c}w".as_bytes()),
            b"w"
        );
        // Other C1 controls (NEL, IND, RI, ...) are removed on their own.
        assert_eq!(strip("a\u{85}b\u{84}c\u{8d}d".as_bytes()), b"abcd");
        // ESC-introduced strings end at the C1 ST too, and the reverse.
        assert_eq!(strip("\x1b]0;t\u{9c}e\u{9d}0;t\x1b\\f".as_bytes()), b"ef");
    }

    #[test]
    fn can_and_sub_cancel_a_sequence() {
        assert_eq!(strip(b"\x1b[31\x18x"), b"x");
        assert_eq!(strip(b"\x1b]0;t\x1ay"), b"y");
        assert_eq!(strip(b"\x1bP1\x18z"), b"z");
        // Outside a sequence they are C0 controls like any other, and kept.
        assert_eq!(strip(b"\x18\x1b[mq"), b"\x18q");
    }

    #[test]
    fn non_ascii_aborts_a_sequence_and_stays() {
        assert_eq!(strip("\x1b[\u{e9}t".as_bytes()), "\u{e9}t".as_bytes());
        assert_eq!(strip("\x1b\u{a0}t".as_bytes()), "\u{a0}t".as_bytes());
        // A non-C1 character that starts with 0xC2 is text.
        assert_eq!(
            strip("\u{a0}\u{b0}\x1b[m\u{a9}".as_bytes()),
            "\u{a0}\u{b0}\u{a9}".as_bytes()
        );
    }

    #[test]
    fn removal_never_joins_bytes_into_a_c1_control() {
        // 0xC2, then a sequence, then 0x9B: without care the output would be U+009B (CSI).
        let out = strip(b"\xc2\x1bc\x9b31mX");
        assert!(!has_terminal_controls(&out), "{out:?}");
        assert_eq!(out, b"\xef\xbf\xbd\x9b31mX");
        let out = strip(b"\x1b[\xc2\x1bc\x9dX");
        assert!(!has_terminal_controls(&out), "{out:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]
        #[test]
        fn stripped_output_never_holds_a_control_sequence(
            input in proptest::collection::vec(proptest::sample::select(vec![
                0x1bu8, 0xc2, 0x9b, 0x9c, 0x9d, 0x90, 0x85, 0x80, 0xa0, 0xbf, 0xe2, 0xff,
                0x07, 0x18, 0x1a, 0x7f, b'\n', b'[', b']', b'P', b'_', b'\\', b'(', b'm',
                b'0', b';', b'a', b' ',
            ]), 0..64)
        ) {
            let out = strip(&input);
            proptest::prop_assert!(!has_terminal_controls(&out), "{:?} -> {:?}", input, out);
            // No ESC byte at all, and nothing longer than the input plus U+FFFDs.
            proptest::prop_assert!(!out.contains(&0x1b));
            proptest::prop_assert!(out.len() <= input.len() * 3);
        }
    }
}
