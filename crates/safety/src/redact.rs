//! Redaction, then truncation (SPEC §4.5).
//!
//! CONTRACT (other modules rely on it):
//! - `Redactor::new(&RedactionSettings) -> Result<Redactor, RedactError>` (operator regex that
//!   does not compile is an error naming the pattern).
//! - `Redactor::redact(&self, &str) -> String`: every secret replaced by `[REDACTED:<rule>]`.
//! - `Redactor::redact_json(&self, &mut serde_json::Value)`: every string inside redacted.
//! - `Redactor::redact_then_truncate(&self, &Captured, cap) -> Truncated`: head + tail kept,
//!   `... [N bytes omitted] ...` marker between, no fragment of a secret ever emitted.
//! - `Redactor::strip_redact_then_truncate(&self, &Captured, cap) -> Truncated`: the same for
//!   command output, after every terminal control sequence is removed
//!   ([`strip_terminal_controls`]; docs/redaction.md).
//! - `Captured` is what the executor fills while reading a pipe: the first
//!   `cap + CAPTURE_MARGIN` bytes, the last `cap + CAPTURE_MARGIN` bytes, and the total.
//!
//! # How a text is searched
//!
//! There is ONE table of built-in rules, [`BUILTIN_RULES`]. Every rule names the literal
//! *anchors* its secret starts with (`ghp_`, `AKIA`, `password`, `://`, ...). The anchors are
//! found by a few literal searches, each over a set of at most 64 patterns so that it runs as
//! Teddy (SIMD, from the aho-corasick crate): case-sensitive anchors over the text,
//! case-insensitive ones over the text lower-cased in 8 KiB chunks (overlapping by the longest
//! pattern), and, since Teddy's fingerprint is as long as the shortest pattern of its set,
//! 4+-byte, 3-byte and shorter anchors in separate sets (a single 2-byte anchor is a memmem
//! search). A text without any anchor is copied through untouched (the fast path). The hits
//! of all sets are merged in text order; at each only the rules owning an anchor that starts
//! there are tried, each as a regex *anchored at the hit*, so the cost of a rule is
//! proportional to the length of the candidate, never to the length of the text. Operator
//! patterns (`extra_patterns`) have no anchors and are searched over the whole text.
//!
//! Every match becomes a span; overlapping spans are merged (so a secret found by two rules is
//! removed whole) and each merged span is replaced by `[REDACTED:<rule>]` of its first rule.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind, Span as LitSpan, packed};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;

/// Bytes captured past the cap on each side so a secret straddling a cut is seen whole.
pub const CAPTURE_MARGIN: usize = 8 * 1024;

/// Compiled-size limit for one operator pattern (a pathological pattern is refused at start-up
/// instead of eating memory on every call).
pub const EXTRA_PATTERN_SIZE_LIMIT: usize = 1 << 20;

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
        RedactionSettings {
            enabled: true,
            entropy_fallback: false,
            extra_patterns: Vec::new(),
        }
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

/// What must stand just before an anchor for a rule to be tried.
///
/// A key glued to a word character (`keyghp_...` from `grep -o`, a key printed right after a
/// colour escape, `fooAKIA...`) is a key all the same: most rules are [`LeftContext::Delimited`]
/// or [`LeftContext::Glued`], which still find it there, only asking more of the match.
/// [`LeftContext::NotAlphanumeric`] is kept for the few rules whose anchor ends common words
/// (`task-` for `sk-`, `pallbearer` for `bearer`); docs/redaction.md lists each choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftContext {
    /// Anything (or the start of the text).
    Any,
    /// Not an ASCII letter or digit.
    NotAlphanumeric,
    /// An ASCII digit (the bot id before a Telegram token's `:AA`).
    Digit,
    /// Anything; but after an ASCII letter or digit the match must end at a delimiter (a
    /// character that is not a letter, digit, `+`, `/`, `=`, `_` or `-`, or the end of the
    /// text): `xAKIA...` glued to a word is a key, `AKIA...` inside a longer base64 blob is not.
    Delimited,
    /// Anything; but after an ASCII letter or digit this stricter pattern (anchored at the
    /// hit) must match too: the shape of a real key, where the rule's own pattern is loose.
    Glued(&'static str),
}

/// What ends a glued key ([`LeftContext::Delimited`]): a character that is not a base64 or
/// token character, or the end of the text.
macro_rules! delimiter {
    () => {
        r"(?:[^A-Za-z0-9+/=_-]|\z)"
    };
}

/// [`delimiter!`] as a constant.
const GLUED_DELIMITER: &str = delimiter!();

impl BuiltinRule {
    /// The pattern a match right after an ASCII letter or digit must also match (anchored
    /// at the anchor), for [`LeftContext::Delimited`] and [`LeftContext::Glued`] rules.
    pub fn glued_pattern(&self) -> Option<String> {
        match self.left {
            LeftContext::Delimited => Some(format!("^(?:{}){GLUED_DELIMITER}", self.pattern)),
            LeftContext::Glued(strict) => Some(format!("^(?:{strict})")),
            LeftContext::Any | LeftContext::NotAlphanumeric | LeftContext::Digit => None,
        }
    }
}

/// One built-in redaction rule. The table [`BUILTIN_RULES`] is the only list of rules.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinRule {
    /// Rule name, used in `[REDACTED:<name>]`.
    pub name: &'static str,
    /// Literals the pattern starts with; the text is only searched where one occurs.
    pub anchors: &'static [&'static str],
    /// Whether anchors match regardless of ASCII case.
    pub anchors_ignore_case: bool,
    /// What must precede the anchor.
    pub left: LeftContext,
    /// Regex tried at each anchor hit (implicitly anchored there). Groups whose name starts
    /// with `secret` mark what is replaced (the key in `password=...` stays readable); without
    /// them the whole match is replaced.
    pub pattern: &'static str,
    /// The replaced span also reaches back over PEM body characters before the anchor (a PEM
    /// `-----END ...` line whose `BEGIN` was cut off by truncation).
    pub extends_back: bool,
    /// A text this rule must redact (checked by the tests).
    pub example: &'static str,
    /// The part of `example` that must not survive redaction.
    pub example_secret: &'static str,
}

const fn rule(
    name: &'static str,
    anchors: &'static [&'static str],
    left: LeftContext,
    pattern: &'static str,
    example: &'static str,
    example_secret: &'static str,
) -> BuiltinRule {
    BuiltinRule {
        name,
        anchors,
        anchors_ignore_case: false,
        left,
        pattern,
        extends_back: false,
        example,
        example_secret,
    }
}

/// [`rule`] whose anchors match in any ASCII case.
const fn rule_ci(
    name: &'static str,
    anchors: &'static [&'static str],
    left: LeftContext,
    pattern: &'static str,
    example: &'static str,
    example_secret: &'static str,
) -> BuiltinRule {
    BuiltinRule {
        anchors_ignore_case: true,
        ..rule(name, anchors, left, pattern, example, example_secret)
    }
}

use LeftContext::{Any, Delimited as Word, Digit, Glued, NotAlphanumeric};

/// Separator between a key and its value: `=`, `:`, `:=`, `=>`, with optional quotes around
/// the key's end and blanks (never a newline: a prompt `Password:` must not eat the next line).
macro_rules! assign {
    () => {
        r#"["']?[ \t]{0,5}(?::=|=>|=|:)[ \t]{0,5}"#
    };
}

/// A value after a key: a double-quoted string (JSON escapes allowed), a single-quoted string,
/// or a bare word. Bare words stop at blanks, quotes, `&` and `;` (URL query, connection string).
macro_rules! value {
    () => {
        r#"(?:"(?P<secret_dq>(?:[^"\\\r\n]|\\.)+)"?|'(?P<secret_sq>[^'\r\n]+)'?|(?P<secret>[^\s"'`{\[&;][^\s"'`&;]*))"#
    };
}

/// The built-in rules, in priority order (when two rules find the same span, the first names it).
pub static BUILTIN_RULES: &[BuiltinRule] = &[
    // --- Cloud providers -------------------------------------------------------------------
    rule(
        "aws-access-key-id",
        &["AKIA", "ASIA", "ABIA", "ACCA"],
        Word,
        r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "AKIAIOSFODNN7EXAMPLE",
    ),
    rule_ci(
        "aws-secret-access-key",
        &["secret_access_key", "secret-access-key", "secretaccesskey"],
        Any,
        concat!(
            r"(?i)secret[_-]?access[_-]?key",
            assign!(),
            r#"["']?(?P<secret>[A-Za-z0-9/+=]{40})"#
        ),
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    rule_ci(
        "aws-session-token",
        &["session_token", "session-token", "sessiontoken"],
        Any,
        concat!(
            r"(?i)session[_-]?token",
            assign!(),
            r#"["']?(?P<secret>[A-Za-z0-9/+=]{100,})"#
        ),
        "AWS_SESSION_TOKEN=7V21jxUdcfQm9/seB1qRmUR8AK3R2GgLLT+ZQISA+pQyOMqlfZZgZMnafy8hWskBf6wmxe1mbVrNHMx1eOc3g+fp1Z5ibXt80nk8Btb2abplBpq8cJF5xgUs",
        "7V21jxUdcfQm9/seB1qRmUR8AK3R2GgLLT+ZQISA+pQyOMqlfZZgZMnafy8hWskBf6wmxe1mbVrNHMx1eOc3g+fp1Z5ibXt80nk8Btb2abplBpq8cJF5xgUs",
    ),
    rule(
        "google-api-key",
        &["AIza"],
        Word,
        r"AIza[0-9A-Za-z_-]{35}",
        "key=AIzaqtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r",
        "AIzaqtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r",
    ),
    rule(
        "gcp-service-account-private-key",
        &["\"private_key\""],
        Any,
        r#""private_key"\s*:\s*"(?P<secret>(?:[^"\\]|\\.)*)"?"#,
        r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n", "client_email": "a@b.iam.gserviceaccount.com"}"#,
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    rule(
        "google-oauth-client-secret",
        &["GOCSPX-"],
        Word,
        r"GOCSPX-[A-Za-z0-9_-]{28}",
        "client_secret: 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",
        "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",
    ),
    rule(
        "google-oauth-access-token",
        &["ya29."],
        Word,
        r"ya29\.[0-9A-Za-z_-]{20,}",
        "token ya29.7CmY_uCu3ZR1zTOlUcR64cXQLioDnkHIfxIq2HZt",
        "ya29.7CmY_uCu3ZR1zTOlUcR64cXQLioDnkHIfxIq2HZt",
    ),
    rule_ci(
        "azure-storage-account-key",
        &["AccountKey="],
        Any,
        r"(?i)AccountKey=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=/PlJhx2jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F5n3/YNBDRzrZSgqbjG3uhkWKFLf6xuI5aHUQPFe==;EndpointSuffix=core.windows.net",
        "/PlJhx2jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F5n3/YNBDRzrZSgqbjG3uhkWKFLf6xuI5aHUQPFe==",
    ),
    rule_ci(
        "azure-shared-access-key",
        &["SharedAccessKey="],
        Any,
        r"(?i)SharedAccessKey=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "Endpoint=sb://demo.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=kL/6GgebhbkXNNv+hOV48vsoUu19X5IQLJhQbtN2=",
        "kL/6GgebhbkXNNv+hOV48vsoUu19X5IQLJhQbtN2",
    ),
    rule_ci(
        "azure-sas-token",
        &["sig="],
        Word,
        r"(?i)sig=(?P<secret>[A-Za-z0-9%+/]{30,}(?:=|%3D){0,2})",
        "https://demo.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=94tnwlavyfErGPmpGXafq0fjzLczbttOofL9H2WjQ5T%3D",
        "94tnwlavyfErGPmpGXafq0fjzLczbttOofL9H2WjQ5T",
    ),
    rule(
        "digitalocean-token",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        Word,
        r"do[por]_v1_[a-f0-9]{64}",
        "DIGITALOCEAN_TOKEN=dop_v1_1a3ce9d97dcbee500fe7ee5fc324bdb2e1142a21c402364f9572b85a8e48f687",
        "dop_v1_1a3ce9d97dcbee500fe7ee5fc324bdb2e1142a21c402364f9572b85a8e48f687",
    ),
    // --- Version control and package registries ---------------------------------------------
    rule(
        "github-personal-access-token",
        &["ghp_"],
        Word,
        r"ghp_[A-Za-z0-9]{36,251}",
        "GITHUB_TOKEN=ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
        "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
    ),
    rule(
        "github-oauth-token",
        &["gho_"],
        Word,
        r"gho_[A-Za-z0-9]{36,251}",
        "oauth: gho_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR",
        "gho_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR",
    ),
    rule(
        "github-user-to-server-token",
        &["ghu_"],
        Word,
        r"ghu_[A-Za-z0-9]{36,251}",
        "token ghu_IBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7 expires",
        "ghu_IBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7",
    ),
    rule(
        "github-server-to-server-token",
        &["ghs_"],
        Word,
        r"ghs_[A-Za-z0-9]{36,251}",
        "installation token ghs_FAc9QeWJKY40uvSwMFLZDe1f8rESQedUStPK",
        "ghs_FAc9QeWJKY40uvSwMFLZDe1f8rESQedUStPK",
    ),
    rule(
        "github-refresh-token",
        &["ghr_"],
        Word,
        r"ghr_[A-Za-z0-9]{36,251}",
        "refresh=ghr_R0CsTy4Qwb8DwkNhFdnXsiVpzz63FfkCzJr4",
        "ghr_R0CsTy4Qwb8DwkNhFdnXsiVpzz63FfkCzJr4",
    ),
    rule(
        "github-fine-grained-token",
        &["github_pat_"],
        Word,
        r"github_pat_[A-Za-z0-9_]{50,255}",
        "GH_TOKEN=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",
        "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",
    ),
    rule(
        "gitlab-personal-access-token",
        &["glpat-"],
        Word,
        r"glpat-[A-Za-z0-9_-]{20,}",
        "PRIVATE-TOKEN: glpat-xNbe3nNyjOq9wMxEhh2F",
        "glpat-xNbe3nNyjOq9wMxEhh2F",
    ),
    rule(
        "gitlab-runner-token",
        &["glrt-"],
        Word,
        r"glrt-[A-Za-z0-9_-]{20,}",
        "gitlab-runner register --token glrt-DEEtfjgVvVqE1SkHbn88",
        "glrt-DEEtfjgVvVqE1SkHbn88",
    ),
    rule(
        "gitlab-deploy-token",
        &["gldt-"],
        Word,
        r"gldt-[A-Za-z0-9_-]{20,}",
        "deploy token gldt-HxjSI6bWHtP3fS2qHx6k",
        "gldt-HxjSI6bWHtP3fS2qHx6k",
    ),
    rule(
        "npm-token",
        &["npm_"],
        Word,
        r"npm_[A-Za-z0-9]{36}",
        "//registry.npmjs.org/:_authToken=npm_wXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmS",
        "npm_wXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmS",
    ),
    rule(
        "pypi-token",
        &["pypi-AgEIcHlwaS5vcmc"],
        Word,
        r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        "password = pypi-AgEIcHlwaS5vcmcS5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61",
        "pypi-AgEIcHlwaS5vcmcS5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61",
    ),
    rule(
        "docker-hub-token",
        &["dckr_pat_"],
        Word,
        r"dckr_pat_[A-Za-z0-9_-]{27,}",
        "docker login -u me -p dckr_pat_aS_m_x-SHuKBD-vok_nPTmZYl2d",
        "dckr_pat_aS_m_x-SHuKBD-vok_nPTmZYl2d",
    ),
    // --- Chat and webhooks -------------------------------------------------------------------
    rule(
        "slack-token",
        &[
            "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-",
        ],
        Word,
        r"xox[abposre]-[0-9A-Za-z-]{10,}",
        "SLACK_BOT_TOKEN=xoxb-965724920868-2889093100251-y1CJdObOIRpFqaDZeV7G5IfQ",
        "xoxb-965724920868-2889093100251-y1CJdObOIRpFqaDZeV7G5IfQ",
    ),
    rule(
        "slack-app-token",
        &["xapp-"],
        Glued(r"xapp-[0-9]-[A-Z0-9]{8,}-[0-9]{6,}-[a-f0-9]{32,}"),
        r"xapp-[0-9A-Za-z-]{20,}",
        "SLACK_APP_TOKEN=xapp-1-A7E4QEQPNO3-7617409319254-940f1f836f99eee3692f09e2e8c662248b483b7ffc050fec94dbca3a0aac3609",
        "xapp-1-A7E4QEQPNO3-7617409319254-940f1f836f99eee3692f09e2e8c662248b483b7ffc050fec94dbca3a0aac3609",
    ),
    rule_ci(
        "slack-webhook",
        &["hooks.slack.com/"],
        Any,
        r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9+/_-]{20,})",
        "curl -X POST https://hooks.slack.com/services/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",
        "TQXEZYEX1/BRDRGDSJPR1/GumXxY9B4bZWOz648JJnUfd7",
    ),
    rule_ci(
        "discord-webhook",
        &["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"],
        Any,
        r"(?i)discord(?:app)?\.com/api/webhooks/(?P<secret>[0-9]{5,30}/[A-Za-z0-9_-]{20,})",
        "https://discord.com/api/webhooks/679247082276544446/EM9YpvujA-C5Q52ryFlwRlOEVHzc0X0AWIRh-JUqBlIFXZ53Ncqe28_ajY75FnCttn6k",
        "EM9YpvujA-C5Q52ryFlwRlOEVHzc0X0AWIRh-JUqBlIFXZ53Ncqe28_ajY75FnCttn6k",
    ),
    rule(
        "telegram-bot-token",
        &[":AA"],
        Digit,
        r":(?P<secret>AA[A-Za-z0-9_-]{33})",
        "https://api.telegram.org/bot123456789:AAGNOaeCtL31Ugq_DfcgaTMnTC0MrAU8urb/getMe",
        "AAGNOaeCtL31Ugq_DfcgaTMnTC0MrAU8urb",
    ),
    // --- Payment, messaging and SaaS --------------------------------------------------------
    rule(
        "stripe-secret-key",
        &["sk_live_", "sk_test_"],
        // `task_test_...`, `benchmark_live_...`: test names end in the anchor.
        NotAlphanumeric,
        r"sk_(?:live|test)_[0-9A-Za-z]{20,247}",
        "Stripe.api_key = 'sk_live_JXcaYioK6cPTt9iOqHOBSWhg'",
        "sk_live_JXcaYioK6cPTt9iOqHOBSWhg",
    ),
    rule(
        "stripe-restricted-key",
        &["rk_live_", "rk_test_"],
        NotAlphanumeric,
        r"rk_(?:live|test)_[0-9A-Za-z]{20,247}",
        "STRIPE_KEY=rk_live_etH8LmyqoYMaaItDr9uP14pE",
        "rk_live_etH8LmyqoYMaaItDr9uP14pE",
    ),
    rule(
        "stripe-webhook-secret",
        &["whsec_"],
        Word,
        r"whsec_[A-Za-z0-9+/=]{24,}",
        "STRIPE_WEBHOOK_SECRET=whsec_HpJpb9ATPtdbmF4RPAfqoQB7xoFcSvTA",
        "whsec_HpJpb9ATPtdbmF4RPAfqoQB7xoFcSvTA",
    ),
    rule(
        "twilio-api-key",
        &["SK"],
        Word,
        r"SK[0-9a-fA-F]{32}",
        "TWILIO_API_KEY=SKbc60926f6967e7893f57fd14c1604d11",
        "SKbc60926f6967e7893f57fd14c1604d11",
    ),
    rule(
        "sendgrid-api-key",
        &["SG."],
        Glued(concat!(
            r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
            delimiter!()
        )),
        r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
        "SENDGRID_API_KEY=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",
        "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",
    ),
    rule(
        "mailgun-api-key",
        &["key-"],
        Glued(concat!(r"key-[0-9a-f]{32}", delimiter!())),
        r"key-[0-9a-zA-Z]{32}",
        "curl --user 'api:key-073fec8df4f50947aaeb26c57d21fa5d'",
        "key-073fec8df4f50947aaeb26c57d21fa5d",
    ),
    rule(
        "shopify-token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        Word,
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "X-Shopify-Access-Token: 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",
        "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",
    ),
    rule(
        "square-token",
        &["sq0atp-", "sq0csp-"],
        Word,
        r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}",
        "SQUARE_TOKEN=sq0atp-opH1Dr8-h97s_F-vauP7-L",
        "sq0atp-opH1Dr8-h97s_F-vauP7-L",
    ),
    rule(
        "linear-api-key",
        &["lin_api_"],
        Word,
        r"lin_api_[A-Za-z0-9]{40}",
        "LINEAR_API_KEY=lin_api_GbOY1xHvAV8DnRlzGW7hUNwOdqryzdaeA6AOSRwL",
        "lin_api_GbOY1xHvAV8DnRlzGW7hUNwOdqryzdaeA6AOSRwL",
    ),
    rule(
        "postman-api-key",
        &["PMAK-"],
        Word,
        r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        "POSTMAN_API_KEY=PMAK-863386ce10cd79e048c07dd7-753eda83d7c58dfe0d5a0cf318656b3e6f",
        "PMAK-863386ce10cd79e048c07dd7-753eda83d7c58dfe0d5a0cf318656b3e6f",
    ),
    rule(
        "newrelic-user-key",
        &["NRAK-"],
        Word,
        r"NRAK-[A-Z0-9]{27}",
        "NEW_RELIC_API_KEY=NRAK-3P6MRTJJPU7WKPUMQGKGMYJJTT1",
        "NRAK-3P6MRTJJPU7WKPUMQGKGMYJJTT1",
    ),
    rule(
        "grafana-token",
        &["glsa_", "glc_"],
        Word,
        r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        "GRAFANA_TOKEN=glsa_xntqB5IGky4Oo8DiIMWSWMPcwLuHj31C_a5ee874a",
        "glsa_xntqB5IGky4Oo8DiIMWSWMPcwLuHj31C_a5ee874a",
    ),
    rule(
        "databricks-token",
        &["dapi"],
        Word,
        r"dapi[a-f0-9]{32}(?:-[0-9])?",
        "DATABRICKS_TOKEN=dapi8379c7ce65426f74bde94fb78c8d5f08",
        "dapi8379c7ce65426f74bde94fb78c8d5f08",
    ),
    rule(
        "pulumi-token",
        &["pul-"],
        Word,
        r"pul-[a-f0-9]{40}",
        "PULUMI_ACCESS_TOKEN=pul-b79affd2b49c12a4b0062983475eb46c5296f62e",
        "pul-b79affd2b49c12a4b0062983475eb46c5296f62e",
    ),
    rule(
        "vault-token",
        &["hvs.", "hvb."],
        Word,
        r"hv[sb]\.[A-Za-z0-9_-]{24,}",
        "VAULT_TOKEN=hvs.BkbvHEzuPyXQEW88ad3DNBYjvsedonuSsddfrfifiUziXnFAAoeelK9mqmALOR2HcSGKgVP8Kd0d3mS8gBlKv3azKg",
        "hvs.BkbvHEzuPyXQEW88ad3DNBYjvsedonuSsddfrfifiUziXnFAAoeelK9mqmALOR2HcSGKgVP8Kd0d3mS8gBlKv3azKg",
    ),
    // --- AI providers -------------------------------------------------------------------------
    // Anthropic before OpenAI: both match `sk-ant-...` with the same span; the first names it.
    rule(
        "anthropic-api-key",
        &["sk-ant-"],
        Glued(r"sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}"),
        r"sk-ant-[A-Za-z0-9_-]{32,}",
        "ANTHROPIC_API_KEY=sk-ant-api03-LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN1gNT11cUzYZAa3u2olZU6uqbgsYlVvsSKuvinX_zMqf9OgAA",
        "sk-ant-api03-LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN1gNT11cUzYZAa3u2olZU6uqbgsYlVvsSKuvinX_zMqf9OgAA",
    ),
    rule(
        "openai-api-key",
        &["sk-"],
        Glued(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{8,}T3BlbkFJ[A-Za-z0-9_-]{8,}"),
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        "OPENAI_API_KEY=sk-proj-njHkAm1-5wDr16EpLLJIVGHz4FxFEtKyPiYGFDm7ena8D5Vf",
        "sk-proj-njHkAm1-5wDr16EpLLJIVGHz4FxFEtKyPiYGFDm7ena8D5Vf",
    ),
    rule(
        "huggingface-token",
        &["hf_"],
        Word,
        r"hf_[A-Za-z0-9]{30,}",
        "HF_TOKEN=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",
        "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",
    ),
    // --- Generic structures ---------------------------------------------------------------------
    rule(
        "age-secret-key",
        &["AGE-SECRET-KEY-1"],
        Word,
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "# secret key: AGE-SECRET-KEY-10FUXYF3ESQRKUL02QZRPET02RXQVF6V6TNYNR7QCMA9UTWXSWZ84SR3MSJ",
        "AGE-SECRET-KEY-10FUXYF3ESQRKUL02QZRPET02RXQVF6V6TNYNR7QCMA9UTWXSWZ84SR3MSJ",
    ),
    rule(
        "jwt",
        &["eyJ"],
        Any,
        r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        "id_token: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0.FWXWD5KaPHI2ufKssJ-Sk_WzDNhY7AGbX6lTiDYHP9z",
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0",
    ),
    // The whole block, BEGIN to END; a block whose END was cut off is removed up to the end of
    // its body (a truncated key is still a key).
    rule(
        "pem-private-key",
        &["-----BEGIN"],
        Any,
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s\\:,.]|-[A-Za-z0-9])*(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7V21jxUdcfQm9seB1qRmUR8AK3R2GgLLT\nZQISApQyOMqlfZZgZMnafy8hWskBf6wmxe1mbVrNHMx1eOc3g\n-----END RSA PRIVATE KEY-----\n",
        "MIIEowIBAAKCAQEA7V21jxUdcfQm9seB1qRmUR8AK3R2GgLLT",
    ),
    // An END line whose BEGIN was cut off (the tail of a truncated output): the body before it
    // is removed too.
    BuiltinRule {
        name: "pem-private-key",
        anchors: &["-----END"],
        anchors_ignore_case: false,
        left: Any,
        pattern: r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        extends_back: true,
        example: "ZQISApQyOMqlfZZgZMnafy8hWskBf6wmxe1mbVrNHMx1eOc3g\n-----END OPENSSH PRIVATE KEY-----",
        example_secret: "ZQISApQyOMqlfZZgZMnafy8hWskBf6wmxe1mbVrNHMx1eOc3g",
    },
    // Connection strings before the generic URL rule: same span, more telling name.
    rule_ci(
        "postgres-connection-string",
        &["postgres://", "postgresql://"],
        Any,
        r"(?i)postgres(?:ql)?://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app",
        "s3cr3t-Pa55",
    ),
    rule_ci(
        "mysql-connection-string",
        &["mysql://", "mysqlx://", "mariadb://"],
        Any,
        r"(?i)(?:mysqlx?|mariadb)://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "mysql://root:hunter2hunter2@127.0.0.1:3306/shop",
        "hunter2hunter2",
    ),
    rule_ci(
        "mongodb-connection-string",
        &["mongodb://", "mongodb+srv://"],
        Any,
        r"(?i)mongodb(?:\+srv)?://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "mongodb+srv://admin:Zx9-qq_77rT@cluster0.abcde.mongodb.net/test?retryWrites=true",
        "Zx9-qq_77rT",
    ),
    rule_ci(
        "redis-connection-string",
        &["redis://", "rediss://"],
        Any,
        r"(?i)rediss?://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "REDIS_URL=rediss://:p4ssw0rd-redis@cache.internal:6380/0",
        "p4ssw0rd-redis",
    ),
    // scheme://user:pass@host: the password runs to the LAST `@` of the authority, so an
    // unencoded `@` in a password does not leave its second half behind.
    rule(
        "url-credentials",
        &["://"],
        Any,
        r"://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "git clone https://deploy:gh-pass-1234@git.example.com/repo.git",
        "gh-pass-1234",
    ),
    rule_ci(
        "authorization-header",
        &["authorization"],
        Any,
        r#"(?i)authorization["']?[ \t]{0,5}[:=][ \t]{0,5}["']?(?:(?:bearer|basic|token|digest|negotiate|bot|apikey)[ \t]+)?(?P<secret>[A-Za-z0-9._~+/=:-]{8,})"#,
        "curl -H 'Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l' https://api.example.com",
        "YWxhZGRpbjpvcGVuc2VzYW1l",
    ),
    rule_ci(
        "bearer-token",
        &["bearer"],
        NotAlphanumeric,
        r"(?i)bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)",
        "sending header Bearer 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
        "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    ),
    // key = value assignments. The key stays, the value goes. A key may carry a prefix or a
    // suffix (`DB_PASSWORD`, `password_hash`), quotes and `=`, `:`, `:=` or `=>`.
    rule_ci(
        "password-assignment",
        &["password", "passwd", "passphrase", "pwd"],
        Any,
        concat!(
            r"(?i)(?:password|passwd|passphrase|pwd)[A-Za-z0-9_.-]{0,30}",
            assign!(),
            value!()
        ),
        "export DB_PASSWORD='correct horse battery staple'",
        "correct horse battery staple",
    ),
    rule_ci(
        "secret-assignment",
        &[
            "secret",
            "api_key",
            "api-key",
            "apikey",
            "access_token",
            "access-token",
            "accesstoken",
            "auth_token",
            "auth-token",
            "authtoken",
            "refresh_token",
            "refresh-token",
            "refreshtoken",
            "private_token",
            "private-token",
            "privatetoken",
        ],
        Any,
        concat!(
            r"(?i)(?:secret|api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?token)[A-Za-z0-9_.-]{0,30}",
            assign!(),
            value!()
        ),
        r#"{"client_secret": "q8Zr-Tt5!long~value", "x": 1}"#,
        "q8Zr-Tt5!long~value",
    ),
];

/// Name used for spans found by the entropy fallback.
pub const ENTROPY_RULE: &str = "high-entropy";

/// The names of the built-in rules, each once, in table order.
pub fn builtin_rule_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for rule in BUILTIN_RULES {
        if !names.contains(&rule.name) {
            names.push(rule.name);
        }
    }
    names
}

fn marker_for(name: &str) -> Box<str> {
    format!("[REDACTED:{name}]").into_boxed_str()
}

/// A built-in rule, compiled.
#[derive(Debug)]
struct CompiledRule {
    marker: Box<str>,
    left: LeftContext,
    /// `^(?:pattern)`: only ever run on `&text[hit..]`.
    regex: Regex,
    /// [`BuiltinRule::glued_pattern`], compiled: what a match right after a letter or digit
    /// must also match.
    glued: Option<Regex>,
    secret_groups: Vec<usize>,
    extends_back: bool,
}

/// One anchor of one rule, as checked at a literal hit.
#[derive(Debug)]
struct AnchorCheck {
    rule: usize,
    bytes: Box<[u8]>,
    ignore_case: bool,
}

/// Most patterns a packed (Teddy) searcher is given; above this it gives up on SIMD.
const PACKED_PATTERN_LIMIT: usize = 64;
/// Shortest pattern a packed searcher is given: shorter ones would weaken its fingerprints for
/// every other pattern, so they go to their own (memmem) search.
const PACKED_MIN_LEN: usize = 3;
/// Longest fingerprint Teddy uses.
const TEDDY_MASK_LEN: usize = 4;
/// Bytes lower-cased at a time for the case-insensitive search (stays in L1).
const FOLD_CHUNK: usize = 8 * 1024;

/// A literal searcher over one set of anchors, leftmost-longest.
#[derive(Debug)]
enum Literals {
    /// Teddy: SIMD, for up to [`PACKED_PATTERN_LIMIT`] patterns of [`PACKED_MIN_LEN`]+ bytes.
    Packed(packed::Searcher),
    /// Aho-Corasick (a single pattern gets a memmem prefilter); also the fallback where
    /// Teddy is unavailable.
    Automaton(AhoCorasick),
}

impl Literals {
    fn build(patterns: &[Vec<u8>]) -> Result<Self, RedactError> {
        let packable = patterns.len() > 1
            && patterns.len() <= PACKED_PATTERN_LIMIT
            && patterns.iter().all(|p| p.len() >= PACKED_MIN_LEN);
        if packable {
            let searcher = packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostLongest)
                .builder()
                .extend(patterns)
                .build();
            if let Some(searcher) = searcher {
                return Ok(Literals::Packed(searcher));
            }
        }
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::DFA))
            .build(patterns)
            .map(Literals::Automaton)
            .map_err(|e| RedactError::BadPattern {
                name: "built-in anchors".to_string(),
                message: e.to_string(),
            })
    }

    /// The leftmost hit starting at or after `from`: its start and pattern index.
    fn find(&self, hay: &[u8], from: usize) -> Option<(usize, usize)> {
        if from >= hay.len() {
            return None;
        }
        match self {
            Literals::Packed(searcher) => searcher
                .find_in(hay, LitSpan::from(from..hay.len()))
                .map(|m| (m.start(), m.pattern().as_usize())),
            Literals::Automaton(ac) => ac
                .find(Input::new(hay).range(from..))
                .map(|m| (m.start(), m.pattern().as_usize())),
        }
    }
}

/// A set of anchors searched together, with what to check at each hit.
#[derive(Debug)]
struct AnchorSet {
    literals: Literals,
    /// For each pattern: the anchors to check where it starts.
    checks: Vec<Vec<AnchorCheck>>,
    /// Longest pattern, in bytes.
    max_len: usize,
}

impl AnchorSet {
    /// The set of the table's anchors for which `wanted(rule, anchor)` holds, lower-cased
    /// when `folded` (it is then searched over the lower-cased text).
    ///
    /// Anchors with the same first [`TEDDY_MASK_LEN`] bytes share one pattern, their longest
    /// common prefix (`pass` for `password`, `passwd`, `passphrase`): fewer patterns keep
    /// Teddy in its faster (slim) form. A hit of a pattern checks every anchor whose pattern
    /// is a prefix of it, so a leftmost-longest hit also checks the anchors of the shorter
    /// patterns starting there.
    fn build(
        folded: bool,
        wanted: impl Fn(&BuiltinRule, &str) -> bool,
    ) -> Result<Self, RedactError> {
        let norm = |anchor: &str| -> Vec<u8> {
            if folded {
                anchor.to_ascii_lowercase().into_bytes()
            } else {
                anchor.as_bytes().to_vec()
            }
        };
        let key = |bytes: &[u8]| -> Vec<u8> {
            bytes
                .get(..bytes.len().min(TEDDY_MASK_LEN))
                .unwrap_or_default()
                .to_vec()
        };
        let mut anchors: Vec<(usize, &'static str, Vec<u8>)> = Vec::new();
        for (rule, spec) in BUILTIN_RULES.iter().enumerate() {
            for anchor in spec.anchors {
                if wanted(spec, anchor) {
                    anchors.push((rule, anchor, norm(anchor)));
                }
            }
        }
        // Each anchor's pattern: the longest common prefix of the anchors with its key.
        let pattern_of = |bytes: &[u8]| -> Vec<u8> {
            let k = key(bytes);
            let mut prefix = bytes.to_vec();
            for (_, _, other) in anchors.iter().filter(|(_, _, o)| key(o) == k) {
                let common = prefix
                    .iter()
                    .zip(other.iter())
                    .take_while(|(x, y)| x == y)
                    .count();
                prefix.truncate(common);
            }
            prefix
        };
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut anchor_patterns = Vec::with_capacity(anchors.len());
        for (_, _, bytes) in &anchors {
            let pattern = pattern_of(bytes);
            if !patterns.contains(&pattern) {
                patterns.push(pattern.clone());
            }
            anchor_patterns.push(pattern);
        }
        let checks = patterns
            .iter()
            .map(|pattern| {
                anchors
                    .iter()
                    .zip(&anchor_patterns)
                    .filter(|(_, own)| pattern.starts_with(own))
                    .map(|((rule, anchor, _), _)| AnchorCheck {
                        rule: *rule,
                        bytes: anchor.as_bytes().into(),
                        ignore_case: BUILTIN_RULES
                            .get(*rule)
                            .is_some_and(|r| r.anchors_ignore_case),
                    })
                    .collect()
            })
            .collect();
        let max_len = patterns.iter().map(Vec::len).max().unwrap_or(0);
        if max_len >= FOLD_CHUNK {
            return Err(RedactError::BadPattern {
                name: "built-in anchors".to_string(),
                message: format!("an anchor is longer than {FOLD_CHUNK} bytes"),
            });
        }
        Ok(AnchorSet {
            literals: Literals::build(&patterns)?,
            checks,
            max_len,
        })
    }

    /// Push `(start, set, pattern)` for every position of `hay` where a pattern starts
    /// below `report_below`, adding `base` to the start.
    fn collect(
        &self,
        set: usize,
        hay: &[u8],
        base: usize,
        report_below: usize,
        hits: &mut Vec<Hit>,
    ) {
        let mut pos = 0;
        while let Some((at, pattern)) = self.literals.find(hay, pos) {
            if at >= report_below {
                break;
            }
            hits.push(Hit {
                at: base + at,
                set,
                pattern,
            });
            pos = at + 1;
        }
    }
}

/// A position where a pattern of an anchor set starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Hit {
    at: usize,
    set: usize,
    pattern: usize,
}

/// The compiled built-in table (shared by every `Redactor`).
#[derive(Debug)]
struct Builtin {
    rules: Vec<CompiledRule>,
    /// Anchor sets searched over the text (case-sensitive anchors), then those searched over
    /// the lower-cased text (case-insensitive anchors); every anchor is in exactly one.
    sets: Vec<(AnchorSet, bool)>,
    /// Longest pattern of a folded set, minus one: the overlap of lower-cased chunks.
    fold_overlap: usize,
}

impl Builtin {
    /// Every anchor-set hit in `bytes`, sorted by position.
    fn hits(&self, bytes: &[u8]) -> Vec<Hit> {
        let mut hits = Vec::new();
        for (i, (set, folded)) in self.sets.iter().enumerate() {
            if !folded {
                set.collect(i, bytes, 0, bytes.len(), &mut hits);
            }
        }
        // Lower-case a chunk at a time and search that. Consecutive chunks overlap by
        // `fold_overlap` bytes, and a chunk only reports hits that start before the overlap
        // (unless it is the last), so every hit is seen whole exactly once.
        // Sized to the text (most redacted strings are short: zeroing a whole chunk per call
        // cost more than the search).
        let mut buf = Vec::with_capacity(bytes.len().min(FOLD_CHUNK));
        let mut base = 0;
        while base < bytes.len() {
            let src = bytes.get(base..).unwrap_or_default();
            let len = src.len().min(FOLD_CHUNK);
            let last = base + len >= bytes.len();
            buf.clear();
            buf.extend(src.iter().take(len).map(u8::to_ascii_lowercase));
            let chunk = buf.as_slice();
            let report_below = if last {
                len
            } else {
                len.saturating_sub(self.fold_overlap)
            };
            for (i, (set, folded)) in self.sets.iter().enumerate() {
                if *folded {
                    set.collect(i, chunk, base, report_below, &mut hits);
                }
            }
            if last || report_below == 0 {
                break;
            }
            base += report_below;
        }
        // Each set's hits are already in order: the stable sort merges those runs.
        hits.sort();
        hits
    }

    /// Try the rule of `check` at an anchor hit `at`; push its span if it matches.
    fn try_anchor<'s>(
        &'s self,
        text: &str,
        at: usize,
        check: &AnchorCheck,
        rule_end: &mut Vec<usize>,
        spans: &mut Vec<Span<'s>>,
    ) {
        let bytes = text.as_bytes();
        if rule_end.is_empty() {
            *rule_end = vec![0; self.rules.len()];
        }
        if at < rule_end.get(check.rule).copied().unwrap_or(0) {
            return;
        }
        let Some(rule) = self.rules.get(check.rule) else {
            return;
        };
        let Some(candidate) = bytes.get(at..at + check.bytes.len()) else {
            return;
        };
        let same = if check.ignore_case {
            candidate.eq_ignore_ascii_case(&check.bytes)
        } else {
            candidate == &*check.bytes
        };
        if !same {
            return;
        }
        let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
        let glued = before.is_some_and(|b| b.is_ascii_alphanumeric());
        // Anchors are ASCII, so `at` is a char boundary.
        let Some(hay) = text.get(at..) else { return };
        let left_ok = match rule.left {
            LeftContext::Any => true,
            LeftContext::NotAlphanumeric => !glued,
            LeftContext::Digit => before.is_some_and(|b| b.is_ascii_digit()),
            // A key glued to a word (`keyghp_...`, what `grep -o` or a stripped colour
            // escape leaves) is still a key, when the match has a key's shape there.
            LeftContext::Delimited | LeftContext::Glued(_) => {
                !glued || rule.glued.as_ref().is_some_and(|re| re.is_match(hay))
            }
        };
        if !left_ok {
            return;
        }
        let Some(found) = match_secret(&rule.regex, &rule.secret_groups, hay) else {
            return;
        };
        let (mut start, end) = (at + found.0, at + found.1);
        // A value that is already a marker (`password='[REDACTED:x]'`) stays as it is, so
        // redacting twice changes nothing; anything more than a bare marker is not.
        if text.get(start..end).is_some_and(is_marker) {
            return;
        }
        // `cat: secret.txt: No such file or directory` names a file, it assigns nothing.
        if text
            .get(start..)
            .is_some_and(|rest| is_os_error_message(rest, end - start))
        {
            return;
        }
        if let Some(slot) = rule_end.get_mut(check.rule) {
            *slot = at + found.2;
        }
        if rule.extends_back {
            start = extend_back_over_pem_body(bytes, start);
        }
        spans.push(Span {
            start,
            end,
            order: check.rule,
            marker: &rule.marker,
        });
    }
}

fn secret_groups(regex: &Regex) -> Vec<usize> {
    regex
        .capture_names()
        .enumerate()
        .filter_map(|(i, name)| name.filter(|n| n.starts_with("secret")).map(|_| i))
        .collect()
}

fn compile_builtin() -> Result<Builtin, RedactError> {
    let mut rules = Vec::with_capacity(BUILTIN_RULES.len());
    for spec in BUILTIN_RULES {
        let regex =
            Regex::new(&format!("^(?:{})", spec.pattern)).map_err(|e| RedactError::BadPattern {
                name: spec.name.to_string(),
                message: e.to_string(),
            })?;
        let glued = spec
            .glued_pattern()
            .map(|p| Regex::new(&p))
            .transpose()
            .map_err(|e| RedactError::BadPattern {
                name: spec.name.to_string(),
                message: e.to_string(),
            })?;
        rules.push(CompiledRule {
            marker: marker_for(spec.name),
            left: spec.left,
            glued,
            secret_groups: secret_groups(&regex),
            regex,
            extends_back: spec.extends_back,
        });
    }
    // Teddy's fingerprint is as long as the shortest pattern (at most 4 bytes): one 3-byte
    // anchor in a set costs every other anchor of it a weaker fingerprint and several times
    // the false candidates. So anchors go, by case and by length, to sets of 4+-byte,
    // 3-byte and shorter anchors (a single-pattern set is a memmem search).
    let class = |anchor: &str| anchor.len().clamp(PACKED_MIN_LEN - 1, TEDDY_MASK_LEN);
    let mut sets = Vec::new();
    for folded in [false, true] {
        for len in (PACKED_MIN_LEN - 1..=TEDDY_MASK_LEN).rev() {
            let wanted =
                |r: &BuiltinRule, a: &str| r.anchors_ignore_case == folded && class(a) == len;
            let any = BUILTIN_RULES
                .iter()
                .any(|r| r.anchors.iter().any(|a| wanted(r, a)));
            if any {
                sets.push((AnchorSet::build(folded, wanted)?, folded));
            }
        }
    }
    let fold_overlap = sets
        .iter()
        .filter(|(_, folded)| *folded)
        .map(|(set, _)| set.max_len.saturating_sub(1))
        .max()
        .unwrap_or(0);
    Ok(Builtin {
        rules,
        sets,
        fold_overlap,
    })
}

static BUILTIN: LazyLock<Result<Arc<Builtin>, (String, String)>> = LazyLock::new(|| {
    compile_builtin().map(Arc::new).map_err(|e| match e {
        RedactError::BadPattern { name, message } => (name, message),
    })
});

/// An operator pattern, compiled.
#[derive(Debug, Clone)]
struct ExtraRule {
    marker: Box<str>,
    regex: Regex,
    secret_groups: Vec<usize>,
}

/// A compiled redaction rule set.
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
    entropy_fallback: bool,
    builtin: Arc<Builtin>,
    extras: Vec<ExtraRule>,
    entropy_marker: Box<str>,
}

/// A part of a text to replace.
#[derive(Debug, Clone, Copy)]
struct Span<'a> {
    start: usize,
    end: usize,
    /// Table position (built-ins first, then operator patterns, then entropy): ties go to the
    /// earlier rule.
    order: usize,
    marker: &'a str,
}

/// Messages of the C library's `strerror` that follow `file: ` in a failing command's output.
/// A key/value rule's value that lies inside one of them, the message ending its line (or
/// followed by ` (os error N)`), is not a secret: `secret.txt: No such file or directory` is
/// a file name and an error. See [`is_os_error_message`].
pub const OS_ERROR_MESSAGES: &[&str] = &[
    "No such file or directory",
    "Permission denied",
    "Is a directory",
    "Not a directory",
    "File exists",
    "Operation not permitted",
    "Directory not empty",
    "Read-only file system",
    "Too many levels of symbolic links",
    "No space left on device",
    "File name too long",
    "Input/output error",
    "Invalid argument",
    "Text file busy",
    "Device or resource busy",
];

/// Whether a value of `value_len` bytes at the start of `rest` lies inside one of
/// [`OS_ERROR_MESSAGES`], and that message ends its line or the text, or is followed by
/// ` (os error ` (Rust's `(os error 2)`). A quoted value that merely starts with a message
/// (`"Permission denied (hunter2)"`) is longer than it, so it is not exempt.
pub fn is_os_error_message(rest: &str, value_len: usize) -> bool {
    OS_ERROR_MESSAGES.iter().any(|m| {
        value_len <= m.len()
            && rest.strip_prefix(m).is_some_and(|after| {
                after.is_empty()
                    || after.starts_with('\n')
                    || after.starts_with('\r')
                    || after.starts_with(" (os error ")
            })
    })
}

/// Exactly one `[REDACTED:<name>]` marker.
fn is_marker(s: &str) -> bool {
    s.strip_prefix("[REDACTED:")
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
}

fn is_pem_body(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(byte, b'+' | b'/' | b'=' | b'\\' | b':' | b',' | b'.')
        || byte.is_ascii_whitespace()
}

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
    /// Build the built-in rules plus the operator's patterns.
    pub fn new(settings: &RedactionSettings) -> Result<Self, RedactError> {
        let builtin = match &*BUILTIN {
            Ok(builtin) => Arc::clone(builtin),
            Err((name, message)) => {
                return Err(RedactError::BadPattern {
                    name: name.clone(),
                    message: message.clone(),
                });
            }
        };
        let mut extras = Vec::with_capacity(settings.extra_patterns.len());
        for pattern in &settings.extra_patterns {
            // A name with `]` or a newline would let a pattern forge or break the marker that
            // tells a reader where something was removed.
            let name_ok = !pattern.name.is_empty()
                && pattern.name.len() <= 64
                && pattern
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            if !name_ok {
                return Err(RedactError::BadPattern {
                    name: pattern.name.clone(),
                    message: "the name must be 1-64 characters of A-Z, a-z, 0-9, '-', '_', '.'"
                        .to_string(),
                });
            }
            // A pathological operator regex (huge counted repetition) is refused here instead
            // of costing memory and time on every output.
            let regex = RegexBuilder::new(&pattern.regex)
                .size_limit(EXTRA_PATTERN_SIZE_LIMIT)
                .dfa_size_limit(2 * EXTRA_PATTERN_SIZE_LIMIT)
                .build()
                .map_err(|e| RedactError::BadPattern {
                    name: pattern.name.clone(),
                    message: e.to_string(),
                })?;
            extras.push(ExtraRule {
                marker: marker_for(&pattern.name),
                secret_groups: secret_groups(&regex),
                regex,
            });
        }
        Ok(Redactor {
            enabled: settings.enabled,
            entropy_fallback: settings.entropy_fallback,
            builtin,
            extras,
            entropy_marker: marker_for(ENTROPY_RULE),
        })
    }

    /// Replace every secret in `text` with `[REDACTED:<rule>]`.
    pub fn redact(&self, text: &str) -> String {
        let spans = self.find_spans(text);
        if spans.is_empty() {
            return text.to_owned();
        }
        render(text, &spans)
    }

    /// Redact every string inside a JSON value, in place.
    ///
    /// Object keys are redacted too. A string value under a key that names a credential
    /// (`password`, `token`, `secret`, `api_key`, `authorization`, ...) is replaced whole: in
    /// `{"password": "hunter2"}` the value alone looks like nothing.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        if !self.enabled {
            return;
        }
        if self.json_may_hold_secret(value) {
            self.redact_json_each(value);
        } else {
            replace_credential_values(value);
        }
    }

    /// Whether any string of `value` (key or value) may hold a secret, in one pass: the
    /// strings are joined with `\n` between them and the built-in rules (and the entropy
    /// fallback) search the joined text once, instead of once per string; operator patterns,
    /// which may use `^`/`$`, see each string on its own.
    ///
    /// Never `false` where a string alone would have a span: a built-in rule is tried at the
    /// same anchor with the same left context (`\n`, like the edge of a text, is neither
    /// alphanumeric nor a digit) and no built-in pattern looks at the end of its text (no
    /// `$`; `\b` sees `\n` as it sees the end; a glued key's `\z` in [`delimiter!`] has the
    /// `\n` as its delimiter instead), so text added on the right can only lengthen or add
    /// matches. A match that runs across a `\n` only sends the value to the
    /// thorough path. `tests/redact_search.rs` compares both paths on generated records.
    fn json_may_hold_secret(&self, value: &serde_json::Value) -> bool {
        /// The joined text, and whether an operator pattern (which may be anchored, so it
        /// sees each string on its own) already matched one of the strings.
        struct Join<'r> {
            out: String,
            extras: &'r [ExtraRule],
            extra_hit: bool,
        }
        impl Join<'_> {
            fn push(&mut self, s: &str) {
                self.out.push_str(s);
                self.out.push('\n');
                if !self.extra_hit {
                    self.extra_hit = self
                        .extras
                        .iter()
                        .any(|extra| extra.regex.find_iter(s).any(|m| !m.is_empty()));
                }
            }
            fn join(&mut self, value: &serde_json::Value) {
                match value {
                    serde_json::Value::String(s) => self.push(s),
                    serde_json::Value::Array(items) => items.iter().for_each(|v| self.join(v)),
                    serde_json::Value::Object(map) => {
                        for (k, v) in map {
                            self.push(k);
                            self.join(v);
                        }
                    }
                    serde_json::Value::Null
                    | serde_json::Value::Bool(_)
                    | serde_json::Value::Number(_) => {}
                }
            }
        }
        let mut join = Join {
            out: String::with_capacity(512),
            extras: &self.extras,
            extra_hit: false,
        };
        join.join(value);
        if join.extra_hit {
            return true;
        }
        let mut spans = Vec::new();
        self.push_builtin_spans(&join.out, &mut spans);
        !spans.is_empty()
    }

    /// [`Redactor::redact_json`] done string by string (what it falls back to whenever its
    /// one-pass check finds anything). Public so tests can compare the two.
    pub fn redact_json_each(&self, value: &mut serde_json::Value) {
        if !self.enabled {
            return;
        }
        match value {
            serde_json::Value::String(s) => {
                if let Cow::Owned(red) = self.redact_cow(s) {
                    *s = red;
                }
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    self.redact_json_each(item);
                }
            }
            serde_json::Value::Object(map) => {
                let needs_rekey = map
                    .keys()
                    .any(|k| matches!(self.redact_cow(k), Cow::Owned(_)));
                if needs_rekey {
                    let old = std::mem::take(map);
                    for (key, v) in old {
                        let mut new_key = self.redact(&key);
                        // Two keys redacted to the same text must not overwrite each other.
                        let mut n = 2;
                        while map.contains_key(&new_key) {
                            new_key = format!("{}#{n}", self.redact(&key));
                            n += 1;
                        }
                        map.insert(new_key, v);
                    }
                }
                for (key, v) in map.iter_mut() {
                    if !replace_credential_value(key, v) {
                        self.redact_json_each(v);
                    }
                }
            }
            serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {
            }
        }
    }

    fn redact_cow<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let spans = self.find_spans(text);
        if spans.is_empty() {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(render(text, &spans))
        }
    }

    /// Every secret span in `text`, sorted, overlaps merged.
    fn find_spans<'s>(&'s self, text: &str) -> Vec<Span<'s>> {
        let mut spans: Vec<Span<'s>> = Vec::new();
        if !self.enabled || text.is_empty() {
            return spans;
        }
        self.push_builtin_spans(text, &mut spans);
        let base = self.builtin.rules.len();
        for (i, extra) in self.extras.iter().enumerate() {
            if extra.secret_groups.is_empty() {
                for m in extra.regex.find_iter(text) {
                    if !m.is_empty() {
                        spans.push(Span {
                            start: m.start(),
                            end: m.end(),
                            order: base + i,
                            marker: &extra.marker,
                        });
                    }
                }
            } else {
                for caps in extra.regex.captures_iter(text) {
                    let found = extra
                        .secret_groups
                        .iter()
                        .filter_map(|&g| caps.get(g))
                        .fold(None, |acc: Option<(usize, usize)>, m| {
                            Some(acc.map_or((m.start(), m.end()), |(s, e)| {
                                (s.min(m.start()), e.max(m.end()))
                            }))
                        });
                    if let Some((s, e)) = found.filter(|(s, e)| s < e) {
                        spans.push(Span {
                            start: s,
                            end: e,
                            order: base + i,
                            marker: &extra.marker,
                        });
                    }
                }
            }
        }
        merge(spans)
    }

    /// The spans of the built-in rules and of the entropy fallback in `text`, unmerged.
    fn push_builtin_spans<'s>(&'s self, text: &str, spans: &mut Vec<Span<'s>>) {
        let builtin = &*self.builtin;
        // Per rule: end of its last match, so one rule never rescans its own match (keeps the
        // work linear on adversarial output full of anchors).
        let mut rule_end: Vec<usize> = Vec::new();
        // Hits in increasing order, so each rule sees its candidates in order (which
        // `rule_end` relies on).
        for hit in builtin.hits(text.as_bytes()) {
            let checks = builtin
                .sets
                .get(hit.set)
                .and_then(|(set, _)| set.checks.get(hit.pattern));
            for check in checks.into_iter().flatten() {
                builtin.try_anchor(text, hit.at, check, &mut rule_end, spans);
            }
        }
        if self.entropy_fallback {
            let order = builtin.rules.len() + self.extras.len();
            self.entropy_spans(text.as_bytes(), order, spans);
        }
    }

    fn entropy_spans<'s>(&'s self, bytes: &[u8], order: usize, spans: &mut Vec<Span<'s>>) {
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

/// What [`Redactor::redact_json_each`] does to a value no rule finds anything in: a non-empty
/// string under a credential key is replaced by the key rule's marker, everything else stays.
fn replace_credential_values(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Array(items) => items.iter_mut().for_each(replace_credential_values),
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if !replace_credential_value(key, v) {
                    replace_credential_values(v);
                }
            }
        }
        serde_json::Value::String(_)
        | serde_json::Value::Null
        | serde_json::Value::Bool(_)
        | serde_json::Value::Number(_) => {}
    }
}

/// Replace `v` by its marker when it is a non-empty string under a credential `key`;
/// whether it did.
fn replace_credential_value(key: &str, v: &mut serde_json::Value) -> bool {
    match (credential_key(key), &*v) {
        (Some(rule), serde_json::Value::String(s)) if !s.is_empty() => {
            *v = serde_json::Value::String(format!("[REDACTED:{rule}]"));
            true
        }
        _ => false,
    }
}

/// A string value under one of these keys is a credential whatever it looks like.
fn credential_key(key: &str) -> Option<&'static str> {
    if key.eq_ignore_ascii_case("pwd") {
        return Some("password-assignment");
    }
    // The earliest word in the list that occurs anywhere in the key decides.
    let key = key.as_bytes();
    CREDENTIAL_KEY_WORDS
        .iter()
        .find(|(word, _)| {
            key.windows(word.len())
                .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
        })
        .map(|(_, rule)| *rule)
}

/// Words that make a key name a credential (ASCII case ignored), in priority order, with the
/// rule their value is redacted under.
const CREDENTIAL_KEY_WORDS: &[(&str, &str)] = &[
    ("password", "password-assignment"),
    ("passwd", "password-assignment"),
    ("passphrase", "password-assignment"),
    ("authorization", "authorization-header"),
    ("secret", "secret-assignment"),
    ("api_key", "secret-assignment"),
    ("apikey", "secret-assignment"),
    ("api-key", "secret-assignment"),
    ("token", "secret-assignment"),
    ("private_key", "secret-assignment"),
    ("credential", "secret-assignment"),
];

/// Run an anchored rule on `hay` (which starts at the anchor). Returns the span to replace
/// and the end of the whole match, relative to `hay`.
fn match_secret(regex: &Regex, groups: &[usize], hay: &str) -> Option<(usize, usize, usize)> {
    if groups.is_empty() {
        let m = regex.find(hay)?;
        return (!m.is_empty()).then_some((m.start(), m.end(), m.end()));
    }
    // Most candidates do not match: find that out without the cost of captures.
    regex.find(hay)?;
    let caps = regex.captures(hay)?;
    let whole = caps.get(0)?;
    let mut span: Option<(usize, usize)> = None;
    for m in groups.iter().filter_map(|&g| caps.get(g)) {
        span = Some(span.map_or((m.start(), m.end()), |(s, e)| {
            (s.min(m.start()), e.max(m.end()))
        }));
    }
    let (s, e) = span?;
    (s < e).then_some((s, e, whole.end()))
}

/// Walk back from a PEM END line over the key body (base64, blanks, `\n` escapes, header
/// lines such as `Proc-Type: 4,ENCRYPTED`), stopping at the dashes of a BEGIN line or at any
/// other character.
fn extend_back_over_pem_body(bytes: &[u8], mut start: usize) -> usize {
    let end_line = start;
    while let Some(i) = start.checked_sub(1) {
        let Some(&b) = bytes.get(i) else { break };
        let single_dash = b == b'-'
            && start < end_line
            && bytes.get(start).is_some_and(|n| n.is_ascii_alphanumeric());
        if is_pem_body(b) || single_dash {
            start = i;
        } else {
            break;
        }
    }
    start
}

/// Sort spans and merge overlapping ones: a secret found in part by two rules leaves nothing.
fn merge(mut spans: Vec<Span<'_>>) -> Vec<Span<'_>> {
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

fn rendered_len(text: &str, spans: &[Span<'_>]) -> usize {
    spans.iter().fold(text.len(), |len, s| {
        len - (s.end - s.start) + s.marker.len()
    })
}

fn render(text: &str, spans: &[Span<'_>]) -> String {
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

    fn redactor() -> Redactor {
        match Redactor::new(&RedactionSettings::default()) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

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

    #[test]
    fn spans_overlapping_are_merged_whole() {
        let r = redactor();
        // A JWT inside an Authorization header: found by two rules, removed once.
        let text = "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop rest";
        let out = r.redact(text);
        assert_eq!(out.matches("[REDACTED:").count(), 1, "{out}");
        assert!(out.ends_with(" rest"), "{out}");
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn anchor_sets_of_several_patterns_get_the_simd_searcher() {
        // A rule added to the table must not silently push a set past Teddy's limits (the
        // fallback automaton is several times slower).
        if !std::arch::is_x86_feature_detected!("ssse3") {
            return;
        }
        let r = redactor();
        for (set, folded) in &r.builtin.sets {
            if set.checks.len() > 1 {
                assert!(
                    matches!(set.literals, Literals::Packed(_)),
                    "a set of {} patterns (folded: {folded}) is not packed",
                    set.checks.len()
                );
            }
        }
    }

    #[test]
    fn anchor_inside_a_base64_blob_is_not_a_key() {
        let r = redactor();
        // Glued on both sides: a stretch of a longer blob, not a key.
        for text in [
            "xAKIAIOSFODNN7EXAMPLEq8Zr",
            "MIIBxAKIAIOSFODNN7EXAMPLE/Zr+",
            "9ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d+Qk=",
        ] {
            assert_eq!(r.redact(text), text);
        }
    }

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

    #[test]
    fn glued_keys_are_still_found() {
        let r = redactor();
        let openai = "sk-proj-Xq9fL2mN7pR4sT8vW1yZ3aB6T3BlbkFJc5dE0gH2jK4lM6nP8qR1sT3u";
        let glued = [
            (
                "keyghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            (
                "xghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d rest",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            (
                "token=ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            (
                "1mghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
                "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
            ),
            ("fooAKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
            ("7AKIAIOSFODNN7EXAMPLE:", "AKIAIOSFODNN7EXAMPLE"),
            (
                "foosk-ant-api03-LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN1gNT11cUzYZAa3u2olZU6uqbgsYlVvsSKuvinX_zMqf9OgAA",
                "LDpgyyjVw5HanSBeVRsfAGeAbP0VxNjAe",
            ),
            (&*format!("key{openai}"), openai),
            (
                "valueeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            ),
            (
                "jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            ),
            (
                "Authorization:Bearer 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
                "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
            ),
            (
                "tokxoxb-965724920868-2889093100251-y1CJdObOIRpFqaDZeV7G5IfQ",
                "y1CJdObOIRpFqaDZeV7G5IfQ",
            ),
            (
                "keySG.xY5OokvQyx7eNWVQ4vnakJ.kS1pAWTN3lg8zV5yPU8d0FZfWe7ihGyiRUIQfHOJMai",
                "kS1pAWTN3lg8zV5yPU8d0FZfWe7ihGyiRUIQfHOJMai",
            ),
            (
                "apikey-073fec8df4f50947aaeb26c57d21fa5d",
                "073fec8df4f50947aaeb26c57d21fa5d",
            ),
            (
                "appxapp-1-A7E4QEQPNO3-7617409319254-940f1f836f99eee3692f09e2e8c662248b483b7ffc050fec94dbca3a0aac3609",
                "940f1f836f99eee3692f09e2e8c66224",
            ),
            ("urlpostgres://app:s3cr3t-Pa55@db", "s3cr3t-Pa55"),
            (
                "tokenglpat-xNbe3nNyjOq9wMxEhh2F",
                "glpat-xNbe3nNyjOq9wMxEhh2F",
            ),
            (
                "HFhf_MOyfTNSkOYoNzNmElKnczHkywhjpUmcJWR",
                "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",
            ),
        ];
        for (text, secret) in glued {
            let out = r.redact(text);
            assert!(!out.contains(secret), "{text} -> {out}");
            assert!(out.contains("[REDACTED:"), "{text} -> {out}");
        }
    }

    #[test]
    fn words_that_end_in_an_anchor_are_not_keys() {
        let r = redactor();
        for text in [
            // `sk-` ends task-, disk-, risk-, kiosk-: only a real OpenAI key's shape counts.
            "running task-scheduler-worker-pool-production-2 now",
            "mounted disk-by-uuid-9f8e7d6c5b4a39281706 ok",
            // Stripe test keys glued to a word are test names, not keys.
            "test framework_test_ParsesLargeDocumentsCorrectly ... ok",
            "test benchmark_live_StreamingThroughputIsStable ... ok",
            // `SG.` ends MSG., `key-` ends monkey-, `xapp-` ends boxapp-.
            "ERROR_MSG.applicationSettings.defaultConfigurationFileIsMissing",
            "the turnkey-installationProcedureForNewHosts is done",
            "deploying boxapp-production-eu-west-1-cluster",
            // `bearer` ends pallbearer, torchbearer.
            "the torchbearer   carriedTheFlameAcrossTheCity",
            // Anchors inside longer blobs and identifiers.
            "SLOVAKIAREPUBLICCODE2024ABCDEF",
            "rapidapi0123456789abcdef0123456789abcdefg",
        ] {
            assert_eq!(r.redact(text), text);
        }
        // The price of the Stripe rule: a live key glued to a word is missed; after `=`,
        // a blank, a quote or a stripped colour escape it is found.
        let glued = "STRIPEsk_live_JXcaYioK6cPTt9iOqHOBSWhg1234";
        assert_eq!(r.redact(glued), glued);
        assert!(
            !r.redact("k=sk_live_JXcaYioK6cPTt9iOqHOBSWhg1234")
                .contains("JXca")
        );
    }
}
