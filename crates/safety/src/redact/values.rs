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
    /// A made value whatever its key is called (a session cookie's `_session_id`).
    Made,
    /// A value under a key that only ends in `key` (`ENCRYPTION_KEY=`, `SERVICEBUS_KEY=`):
    /// as [`ValueCheck::Token`], at least 20 characters, and neither a public key nor under a
    /// key that names one (`public_key`, `ssh_key`) or an identifier (`primary_key`).
    Key,
}

impl ValueCheck {
    /// Whether `value` (the matched secret, quotes removed) passes under `key` (the name it
    /// is assigned to, as [`key_before`] finds it; empty where there is none).
    pub fn accepts(self, key: &str, value: &str) -> bool {
        let named = || !not_a_password(value) && !non_secret_key(key) && !names_itself(key, value);
        match self {
            ValueCheck::Any => true,
            ValueCheck::Password => named(),
            ValueCheck::Token => named() && looks_made(value),
            ValueCheck::Made => !not_a_password(value) && looks_made(value),
            ValueCheck::Key => {
                named()
                    && key_words(key).len() >= 2
                    && looks_made(value)
                    && trimmed(value.trim()).chars().count() >= 20
                    && !names_a_non_secret_key(key)
                    && !["ssh-", "ecdsa-", "sk-ssh", "-----BEGIN"]
                        .iter()
                        .any(|p| value.trim_start().starts_with(p))
            }
            ValueCheck::Base64PrivateKey => decodes_to_private_key(value),
            ValueCheck::Base64UserPassword => decodes_to_user_password(value),
        }
    }
}

/// The name a value at `start` of `text` is assigned to: from the start of the identifier
/// the rule's anchor at `at` lies in (`DB_PASSWORD` for an anchor at `PASSWORD`) up to the
/// value, separators and quotes left out.
pub fn key_before(text: &str, at: usize, start: usize) -> &str {
    let bytes = text.as_bytes();
    let mut from = at.min(bytes.len());
    while let Some(i) = from.checked_sub(1) {
        match bytes.get(i) {
            Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-') => from = i,
            _ => break,
        }
    }
    text.get(from..start.max(from))
        .unwrap_or_default()
        .trim_end_matches(|c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ':' | '=' | '>' | '%')
        })
        .trim_end_matches("%3D")
        .trim_end_matches("%3d")
        .trim_end_matches("%3A")
        .trim_end_matches("%3a")
}

/// The words of a key (`password_reset_url` → password, reset, url; `apiKeyHeader` → api,
/// key, header), lower-cased.
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Last words of a key that say its value describes a credential instead of being one
/// (`password_reset_url`, `access_token_lifetime`, `api_key_header`, `secret_ref`).
const DESCRIBING_WORDS: &[&str] = &[
    "url",
    "urls",
    "uri",
    "endpoint",
    "path",
    "paths",
    "ref",
    "reference",
    "file",
    "files",
    "header",
    "name",
    "names",
    "type",
    "lifetime",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "in",
    "length",
    "len",
    "min",
    "max",
    "size",
    "count",
    "policy",
    "required",
    "enabled",
    "disabled",
    "history",
    "id",
    "ids",
    "version",
    "rotation",
    "format",
    "algorithm",
    "algo",
    "hint",
    "prompt",
    "reset",
    "strength",
    "manager",
    "store",
    "provider",
    "backend",
    "env",
    "var",
    "field",
    "label",
    "dir",
    "location",
    "arn",
    "mode",
    "prefix",
    "suffix",
    "timeout",
    "age",
    "limit",
    "rounds",
    "attempts",
    "retries",
    "scope",
    "scopes",
    "audience",
    "issuer",
    "regex",
    "pattern",
    "validation",
    "complexity",
    "changed",
    "updated",
    "created",
    "at",
    "date",
    "time",
    "duration",
    "interval",
    "description",
    "help",
    "text",
    "message",
    "title",
    "placeholder",
    "tokenizer",
    "tokenizers",
    "tokenize",
    "tokenization",
    "tokens",
    "usage",
    "used",
    "remaining",
    "budget",
    "kind",
    "class",
    "method",
];

/// Whether the key's last word (or any word, for a tokenizer) says its value only describes
/// a credential.
fn non_secret_key(key: &str) -> bool {
    let words = key_words(key);
    words
        .last()
        .is_some_and(|w| DESCRIBING_WORDS.contains(&w.as_str()))
        || words.iter().any(|w| w.starts_with("tokeniz"))
}

/// Whether a `...key` name names a key that is no secret: a public key, an SSH or GPG key's
/// public half, or a database key.
fn names_a_non_secret_key(key: &str) -> bool {
    let words = key_words(key);
    words.iter().any(|w| {
        [
            "public",
            "pub",
            "primary",
            "foreign",
            "sort",
            "partition",
            "cache",
            "idempotency",
            "unique",
            "composite",
            "ssh",
            "gpg",
            "pgp",
            "host",
            "hotkey",
            "keyboard",
            "map",
        ]
        .contains(&w.as_str())
    })
}

/// `api_key=api_key`: a value that is the key's own name (or its last word) is a variable.
fn names_itself(key: &str, value: &str) -> bool {
    let v = trimmed(value.trim()).to_ascii_lowercase();
    let k = key.to_ascii_lowercase();
    !v.is_empty() && (v == k || key_words(key).last().is_some_and(|w| *w == v))
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
    "replace_me",
    "replaceme",
    "replace-me",
    "fill_me_in",
    "your_password_here",
    // Type annotations (`db_password: str = Field(...)`, `password: SecretStr`).
    "str",
    "string",
    "secretstr",
    "secretbytes",
    "int",
    "integer",
    "bool",
    "boolean",
    "bytes",
    "any",
    "object",
    "number",
    "varchar",
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
        || is_duration(v)
        || is_plain_url(v)
        || ["replace", "insert_", "fill_in", "fill-in"]
            .iter()
            .any(|w| lower.starts_with(w))
        || (lower.contains("your")
            && ["key", "pass", "token", "secret"]
                .iter()
                .any(|w| lower.contains(w)))
        || lower.starts_with("(sensitive")
}

/// A small number with a unit of time (`15m`, `3600s`, `30d`).
fn is_duration(v: &str) -> bool {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let unit = v.get(digits..).unwrap_or_default();
    (1..=5).contains(&digits)
        && [
            "ms", "s", "m", "h", "d", "w", "min", "mins", "sec", "secs", "y",
        ]
        .contains(&unit)
}

/// A URL without credentials in it (`https://app.example.com/reset`), or a URN.
fn is_plain_url(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    lower.starts_with("urn:")
        || ["http://", "https://"].iter().any(|s| {
            lower.strip_prefix(s).is_some_and(|rest| {
                let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
                !authority.contains('@')
            })
        })
}

/// `<...>`, `${...}`, `$VAR`, `{{...}}`, `%VAR%`, `@VAR@`, `{VAR}`, `[VAR]`, `#{VAR}#`.
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
        || enclosed("#{", "}#")
        || enclosed("$(", ")")
        || (v.starts_with("%(") && v.ends_with(")s"))
        || enclosed("#{", "}")
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
        || v.split_once('(').is_some_and(|(f, _)| {
            // A call: `get_secret()`, `Field(default=...`, `request.headers.get(`.
            !f.is_empty()
                && f.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && f.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':'))
        })
        || v.split_once('<').is_some_and(|(t, rest)| {
            // A type: `Option<String>`, `Vec<u8>`.
            !t.is_empty()
                && t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':'))
                && rest.ends_with('>')
        })
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
            "%(LDAP_PASSWORD)s",
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
            assert!(!ValueCheck::Password.accepts("password", v), "{v}");
        }
        for v in [
            "correct horse battery staple",
            "hunter2",
            "s3cr3t-Pa55",
            "Zm9vYmFyYmF6cXV4=",
            "839201774",
            "/x9$Fq+",
        ] {
            assert!(ValueCheck::Password.accepts("password", v), "{v}");
        }
    }

    #[test]
    fn a_key_that_describes_a_credential_holds_no_secret() {
        for (key, value) in [
            ("password_reset_url", "https://app.example.com/reset"),
            ("access_token_lifetime", "15m"),
            ("api_key_header", "X-API-Key"),
            ("secret_ref", "projects/acme/secrets/db/versions/latest"),
            ("tokenizer", "cl100k_base"),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:jwt"),
            ("api_key", "api_key"),
            ("password_confirmation", "Option<String>"),
            ("db_password", "Field(default=..."),
        ] {
            assert!(!ValueCheck::Password.accepts(key, value), "{key}={value}");
        }
        assert!(ValueCheck::Password.accepts("DB_PASSWORD", "s3cr3t-Pa55"));
        assert!(ValueCheck::Key.accepts("ENCRYPTION_KEY", "eI4M8eNw2XelBQlKQPbIRtiaFaGM4id7hmQ"));
        assert!(!ValueCheck::Key.accepts("public_key", "eI4M8eNw2XelBQlKQPbIRtiaFaGM4id7hmQ"));
        assert!(!ValueCheck::Key.accepts("KEY", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA"));
        assert!(!ValueCheck::Key.accepts("cache_key", "user:42:profile"));
        assert_eq!(key_before("export DB_PASSWORD=x", 10, 19), "DB_PASSWORD");
        assert_eq!(key_before(r#""smtp_pass": "y""#, 6, 14), "smtp_pass");
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
            assert!(!ValueCheck::Token.accepts("token", v), "{v}");
        }
        for v in [
            "8f2c1e9d7b6a5f4e3d2c1b0a9f8e7d6c",
            "eyJhbGciOiJIUzI1NiJ9",
            "AbCdEfGhIjKl",
        ] {
            assert!(ValueCheck::Token.accepts("token", v), "{v}");
        }
    }

    #[test]
    fn base64_is_decoded_bounded_and_only_what_it_claims_is_found() {
        // base64 of "-----BEGIN RSA PRIVATE KEY-----\n..." and of a certificate header.
        assert!(ValueCheck::Base64PrivateKey.accepts(
            "",
            "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB"
        ));
        assert!(!ValueCheck::Base64PrivateKey.accepts(
            "",
            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURCVENDQWUyZ0F3SUJBZ0lV"
        ));
        // "deploy:s3cret-Pass2026" and "hello world, plain text".
        assert!(ValueCheck::Base64UserPassword.accepts("", "ZGVwbG95OnMzY3JldC1QYXNzMjAyNg=="));
        assert!(!ValueCheck::Base64UserPassword.accepts("", "aGVsbG8gd29ybGQsIHBsYWluIHRleHQ="));
        // A huge blob decodes at most MAX_DECODED bytes.
        let blob = "QUJD".repeat(1 << 20);
        assert_eq!(decode_prefix(&blob).map(|b| b.len()), Some(MAX_DECODED));
        assert!(!ValueCheck::Base64UserPassword.accepts("", &blob));
    }
}
