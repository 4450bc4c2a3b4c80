//! What a matched value must look like for its rule to replace it.
//!
//! A keyword rule (`password=`, `secret:`, `token =`) finds a *key*; whether what follows is
//! a secret is a question about the value. A value that is a placeholder (`<your-api-key>`,
//! `${REDIS_PASSWORD}`, `{{ .Values.password }}`, `%PASSWORD%`, `changeme`), a mask
//! (`******`, `[hidden]`, Terraform's `(sensitive value)`), a boolean or `YES`/`NO` (MySQL's
//! `using password: YES`), a small number (`PASSWORD_MIN_LENGTH=12`), a path (`PWD=/srv/app`,
//! `password_file=/run/secrets/db`) or a reference to where the secret is kept
//! (`os.environ["DB_PASSWORD"]`, `process.env.TOKEN`, `get_secret()`) is no secret, and
//! replacing it only teaches a user to switch redaction off. A token key's value must also
//! look made, not written: a plain word (`token_type=bearer`) is not a token.
//!
//! Two rules decode what they matched, bounded: a base64 run that starts with the encoding
//! of `-----BEGIN` is a private key when its first bytes decode to a `PRIVATE KEY` header
//! (a kubeconfig's `client-key-data`; a certificate's `client-certificate-data` stays), and
//! an `auth` value is Docker's or npm's `user:password` when it decodes to one. At most
//! [`MAX_DECODED`] bytes are ever decoded per candidate, so a large blob costs its length
//! to find and nothing more.

/// Most bytes decoded from one base64 candidate.
pub const MAX_DECODED: usize = 512;

/// The check a rule's value must pass (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueCheck {
    /// Every match is a secret.
    Any,
    /// A password: anything but a placeholder, a mask, a boolean, a small number, a path or
    /// a reference.
    Password,
    /// A token or key: as [`ValueCheck::Password`], and made (not a plain word), at least 8
    /// characters.
    Token,
    /// Base64 whose first bytes decode to a PEM `PRIVATE KEY` header.
    Base64PrivateKey,
    /// Base64 that decodes to `user:password`.
    Base64UserPassword,
}

impl ValueCheck {
    /// Whether `value` (the matched secret, quotes removed) passes.
    pub fn accepts(self, value: &str) -> bool {
        match self {
            ValueCheck::Any => true,
            ValueCheck::Password => !not_a_password(value),
            ValueCheck::Token => !not_a_password(value) && looks_made(value),
            ValueCheck::Base64PrivateKey => decodes_to_private_key(value),
            ValueCheck::Base64UserPassword => decodes_to_user_password(value),
        }
    }
}

/// Words that stand in for a value, compared ignoring ASCII case.
const PLACEHOLDER_WORDS: &[&str] = &[
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "example",
    "placeholder",
    "dummy",
    "redacted",
    "hidden",
    "masked",
    "none",
    "null",
    "nil",
    "undefined",
    "empty",
    "n/a",
    "na",
    "todo",
    "tbd",
    "secret",
    "password",
    "passwd",
    "token",
    "required",
    "optional",
    "sensitive",
    "not_set",
    "notset",
    "unset",
    "default",
];

/// Values that are flags, not secrets, compared ignoring ASCII case.
const FLAG_WORDS: &[&str] = &[
    "true", "false", "yes", "no", "on", "off", "enabled", "disabled", "enable", "disable", "y",
    "n", "t", "f",
];

/// `value` with the punctuation a bare word picks up at its end removed (`YES)` of MySQL's
/// `(using password: YES)`, `x,` in a list).
fn trimmed(value: &str) -> &str {
    value.trim_end_matches([')', ',', '.', ';', ']', '}'])
}

/// Whether `value` is a placeholder, a mask, a flag, a small number, a path or a reference.
fn not_a_password(value: &str) -> bool {
    let v = trimmed(value.trim());
    if v.is_empty() {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if FLAG_WORDS.contains(&lower.as_str()) || PLACEHOLDER_WORDS.contains(&lower.as_str()) {
        return true;
    }
    is_template(value.trim())
        || is_template(v)
        || is_mask(v)
        || is_small_number(v)
        || is_path(v)
        || is_reference(v)
        || is_reference(value.trim())
        || (lower.contains("your")
            && ["key", "pass", "token", "secret"]
                .iter()
                .any(|w| lower.contains(w)))
        || lower.starts_with("(sensitive")
}

/// `<...>`, `${...}`, `$VAR`, `{{...}}`, `%VAR%`, `@VAR@`, `{VAR}`, `[VAR]`.
fn is_template(v: &str) -> bool {
    let enclosed = |open: &str, close: &str| {
        v.starts_with(open) && v.ends_with(close) && v.len() > open.len() + close.len()
    };
    let var = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    enclosed("<", ">")
        || enclosed("${", "}")
        || enclosed("{{", "}}")
        || enclosed("%", "%") && var(&v[1..v.len() - 1])
        || enclosed("@", "@") && var(&v[1..v.len() - 1])
        || enclosed("{", "}") && var(&v[1..v.len() - 1])
        || enclosed("[", "]") && var(&v[1..v.len() - 1])
        || v.strip_prefix('$').is_some_and(var)
        || v.starts_with("${{")
}

/// One character repeated (`******`, `xxxxxx`, `......`), mostly asterisks or bullets, or
/// a `[hidden]`-style word in brackets.
fn is_mask(v: &str) -> bool {
    let mut chars = v.chars();
    let Some(first) = chars.next() else {
        return true;
    };
    if v.chars().count() >= 3 && chars.all(|c| c == first) && !first.is_ascii_digit() {
        return true;
    }
    let masked = v.chars().filter(|c| matches!(c, '*' | '•' | '●')).count();
    masked * 2 >= v.chars().count()
}

/// A number of at most five digits (a length, a count, a port); a longer one may be a PIN.
fn is_small_number(v: &str) -> bool {
    v.len() <= 5 && v.bytes().all(|b| b.is_ascii_digit())
}

/// An absolute or home-relative path of plain segments (`/srv/app`, `~/.pgpass`,
/// `./secrets/db.txt`, `C:\Users\me`).
fn is_path(v: &str) -> bool {
    let rest = v
        .strip_prefix("~/")
        .or_else(|| v.strip_prefix("./"))
        .or_else(|| v.strip_prefix("../"))
        .or_else(|| v.strip_prefix('/'));
    let windows = v.len() > 3
        && v.as_bytes().get(1) == Some(&b':')
        && v.as_bytes().get(2) == Some(&b'\\')
        && v.as_bytes().first().is_some_and(u8::is_ascii_alphabetic);
    let plain = |s: &str| {
        s.split(['/', '\\']).all(|seg| {
            seg.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ' '))
        })
    };
    match rest {
        Some(r) => plain(r),
        None => windows && plain(&v[3..]),
    }
}

/// Where a secret is kept, not the secret: `os.environ["X"]`, `process.env.X`,
/// `get_secret()`, `env("X")`, `secrets.X`, `vault:path`.
fn is_reference(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    [
        "os.environ",
        "os.getenv",
        "process.env.",
        "env(",
        "env.",
        "secrets.",
        "vault:",
        "getenv(",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
        || (v.ends_with(')')
            && v.split('(').next().is_some_and(|f| {
                !f.is_empty()
                    && f.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
            }))
}

/// Whether a token value looks made: at least 8 characters and not a plain word or
/// identifier (`bearer`, `refresh_token`, `gpt-4o`): it has a digit and a letter, or mixed
/// case inside, or a symbol a name does not have.
fn looks_made(value: &str) -> bool {
    let v = trimmed(value.trim());
    if v.chars().count() < 8 {
        return false;
    }
    if v.starts_with("http://") || v.starts_with("https://") {
        return false;
    }
    let digit = v.bytes().any(|b| b.is_ascii_digit());
    let alpha = v.bytes().any(|b| b.is_ascii_alphabetic());
    let upper_inside = v.bytes().skip(1).any(|b| b.is_ascii_uppercase());
    let lower = v.bytes().any(|b| b.is_ascii_lowercase());
    let symbol = v
        .bytes()
        .any(|b| !b.is_ascii_alphanumeric() && !matches!(b, b'_' | b'-' | b'.'));
    (digit && alpha) || (upper_inside && lower) || symbol
}

/// Decode at most [`MAX_DECODED`] bytes of standard or URL-safe base64 (padding and an
/// incomplete last group allowed); `None` at a character outside the alphabet.
fn decode_prefix(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(MAX_DECODED.min(text.len()));
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in text.bytes() {
        let six = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(six);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
            if out.len() >= MAX_DECODED {
                break;
            }
        }
    }
    Some(out)
}

/// Whether the first bytes of `value` decode to `-----BEGIN ... PRIVATE KEY`.
fn decodes_to_private_key(value: &str) -> bool {
    // 64 base64 characters are 48 bytes: more than the longest PEM private-key header.
    let head: String = value
        .chars()
        .filter(|c| !c.is_whitespace())
        .take(64)
        .collect();
    decode_prefix(&head).is_some_and(|bytes| {
        let text = String::from_utf8_lossy(&bytes);
        text.starts_with("-----BEGIN") && text.contains("PRIVATE KEY")
    })
}

/// Whether `value` decodes to `user:password`: printable, no blank, one `:` with a name of
/// name characters before it and at least one character after.
fn decodes_to_user_password(value: &str) -> bool {
    let v = value.trim();
    if v.len() < 8 || v.len() > MAX_DECODED {
        return false;
    }
    let Some(bytes) = decode_prefix(v) else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return false;
    };
    let Some((user, password)) = text.split_once(':') else {
        return false;
    };
    !user.is_empty()
        && user.len() <= 128
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '@' | '-' | '+'))
        && !password.is_empty()
        && password.chars().all(|c| c.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_masks_flags_numbers_paths_and_references_are_not_passwords() {
        for v in [
            "<your-api-key-here>",
            "${REDIS_PASSWORD}",
            "$DB_PASSWORD",
            "{{ .Values.password }}",
            "%PASSWORD%",
            "@DB_PASS@",
            "******",
            "xxxxxxxx",
            "(sensitive",
            "YES)",
            "no",
            "true",
            "12",
            "/srv/app",
            "~/.pgpass",
            "./secrets/db.txt",
            "os.environ[\"DB_PASSWORD\"]",
            "process.env.DB_PASSWORD",
            "get_secret()",
            "changeme",
            "${{ secrets.NPM_TOKEN }}",
        ] {
            assert!(!ValueCheck::Password.accepts(v), "{v}");
        }
        for v in [
            "correct horse battery staple",
            "hunter2",
            "s3cr3t-Pa55",
            "Zm9vYmFyYmF6cXV4=",
            "839201774",
            "/x9$Fq+",
        ] {
            assert!(ValueCheck::Password.accepts(v), "{v}");
        }
    }

    #[test]
    fn a_token_must_look_made() {
        for v in [
            "bearer",
            "Bearer",
            "refresh_token",
            "gpt-4o",
            "https://oauth2.example.com/token",
        ] {
            assert!(!ValueCheck::Token.accepts(v), "{v}");
        }
        for v in [
            "8f2c1e9d7b6a5f4e3d2c1b0a9f8e7d6c",
            "eyJhbGciOiJIUzI1NiJ9",
            "AbCdEfGhIjKl",
        ] {
            assert!(ValueCheck::Token.accepts(v), "{v}");
        }
    }

    #[test]
    fn base64_is_decoded_bounded_and_only_what_it_claims_is_found() {
        // base64 of "-----BEGIN RSA PRIVATE KEY-----\n..." and of a certificate header.
        assert!(
            ValueCheck::Base64PrivateKey
                .accepts("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB")
        );
        assert!(
            !ValueCheck::Base64PrivateKey
                .accepts("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURCVENDQWUyZ0F3SUJBZ0lV")
        );
        // "deploy:s3cret-Pass2026" and "hello world, plain text".
        assert!(ValueCheck::Base64UserPassword.accepts("ZGVwbG95OnMzY3JldC1QYXNzMjAyNg=="));
        assert!(!ValueCheck::Base64UserPassword.accepts("aGVsbG8gd29ybGQsIHBsYWluIHRleHQ="));
        // A huge blob decodes at most MAX_DECODED bytes.
        let blob = "QUJD".repeat(1 << 20);
        assert_eq!(decode_prefix(&blob).map(|b| b.len()), Some(MAX_DECODED));
        assert!(!ValueCheck::Base64UserPassword.accepts(&blob));
    }
}
