//! The table of built-in redaction rules, [`BUILTIN_RULES`]: the only list of rules.
//!
//! Each rule names the literal anchors its secret starts with, what must stand before the
//! anchor, the pattern tried there and an example it must redact (the tests check every
//! example). Everything else (the anchor searchers, the rule names the policy checks
//! against) is derived from this table. docs/redaction.md explains the choices.

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
    /// The rule with its value check.
    const fn checked(self, check: ValueCheck) -> BuiltinRule {
        BuiltinRule { check, ..self }
    }

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
    /// What the matched value must look like to be replaced ([`ValueCheck`]).
    pub check: ValueCheck,
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
        check: ValueCheck::Any,
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

use super::values::ValueCheck;

/// Separator between a key and its value: `=`, `:`, `:=`, `=>`, with optional quotes around
/// the key's end and blanks (never a newline: a prompt `Password:` must not eat the next line).
macro_rules! assign {
    () => {
        r#"\\?["']?[ \t]{0,5}(?::=|=>|=|:|%3[DdAa])[ \t]{0,5}"#
    };
}

/// A value after a key: a double-quoted string (JSON escapes allowed), a single-quoted string,
/// or a bare word. Bare words stop at blanks, quotes, `&` and `;` (URL query, connection string).
macro_rules! value {
    () => {
        r#"(?:\\"(?P<secret_eq>(?:[^"\\\r\n]|\\[^"\r\n])+)\\"|"(?P<secret_dq>(?:[^"\\\r\n]|\\.)+)"?|'(?P<secret_sq>[^'\r\n]+)'?|(?P<secret>[^\s"'`{\[&;\\][^\s"'`&;]*))"#
    };
}

/// A command-line argument's value: single- or double-quoted, or a bare word.
macro_rules! cli_value {
    () => {
        r#"(?:'(?P<secret_sq>[^'\r\n]+)'|"(?P<secret_dq>[^"\r\n]+)"|(?P<secret>[^\s'"-][^\s'"]*))"#
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
        check: ValueCheck::Any,
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
    )
    .checked(ValueCheck::Password),
    rule_ci(
        "mysql-connection-string",
        &["mysql://", "mysqlx://", "mariadb://"],
        Any,
        r"(?i)(?:mysqlx?|mariadb)://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "mysql://root:hunter2hunter2@127.0.0.1:3306/shop",
        "hunter2hunter2",
    )
    .checked(ValueCheck::Password),
    rule_ci(
        "mongodb-connection-string",
        &["mongodb://", "mongodb+srv://"],
        Any,
        r"(?i)mongodb(?:\+srv)?://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "mongodb+srv://admin:Zx9-qq_77rT@cluster0.abcde.mongodb.net/test?retryWrites=true",
        "Zx9-qq_77rT",
    )
    .checked(ValueCheck::Password),
    rule_ci(
        "redis-connection-string",
        &["redis://", "rediss://"],
        Any,
        r"(?i)rediss?://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "REDIS_URL=rediss://:p4ssw0rd-redis@cache.internal:6380/0",
        "p4ssw0rd-redis",
    )
    .checked(ValueCheck::Password),
    // scheme://user:pass@host: the password runs to the LAST `@` of the authority, so an
    // unencoded `@` in a password does not leave its second half behind.
    rule(
        "url-credentials",
        &["://"],
        Any,
        r"://[^\s:/?#@]{0,128}:(?P<secret>[^\s/?#]+)@",
        "git clone https://deploy:gh-pass-1234@git.example.com/repo.git",
        "gh-pass-1234",
    )
    .checked(ValueCheck::Password),
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
    )
    .checked(ValueCheck::Password),
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
    )
    .checked(ValueCheck::Password),
    // A key whose name ends in `pass` (`smtp_pass`, `RABBITMQ_DEFAULT_PASS`, INI `pass =`).
    rule_ci(
        "password-assignment",
        &["pass"],
        NotAlphanumeric,
        concat!(r"(?i)pass", assign!(), value!()),
        "export RABBITMQ_DEFAULT_PASS=Summer7474!",
        "Summer7474!",
    )
    .checked(ValueCheck::Password),
    // A key whose name ends in `key` (`ENCRYPTION_KEY=`, `SERVICEBUS_KEY=`,
    // `azure_storage_key =`): only a long made value, and never a public or database key.
    rule_ci(
        "key-assignment",
        &["key"],
        NotAlphanumeric,
        concat!(r"(?i)key", assign!(), value!()),
        "SERVICEBUS_KEY=SraZ0WuPO28mI4n4ifQAvIeB9jfHNNlPQLQjCXabqVV=",
        "SraZ0WuPO28mI4n4ifQAvIeB9jfHNNlPQLQjCXabqVV=",
    )
    .checked(ValueCheck::Key),
    // Password hashes of /etc/shadow and of applications: bcrypt and SHA-crypt (a hash is
    // cracked offline, so it is a credential).
    rule(
        "password-hash",
        &["$2a$", "$2b$", "$2y$", "$5$", "$6$"],
        Any,
        r"\$(?:2[aby]\$\d{2}\$[./A-Za-z0-9]{53}|[56]\$(?:rounds=\d{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86})",
        "alice:$2b$12$RTShtiahhxPT50jH4stXw5ZF3ApzaIWp4kv/VP/K2MyVfmCvTA5U2:19800:0:99999:7:::",
        "$2b$12$RTShtiahhxPT50jH4stXw5ZF3ApzaIWp4kv/VP/K2MyVfmCvTA5U2",
    ),
    // A session cookie (`Cookie: _session_id=...`, `set-cookie: __Host-session=...`).
    rule_ci(
        "session-cookie",
        &["session", "sessid", "sid="],
        Any,
        r"(?i)(?:session[A-Za-z0-9_.-]{0,20}|sessid|sid)=(?P<secret>[A-Za-z0-9_%./+~-]{16,}={0,2})",
        "> Cookie: _session_id=T9nwr0lvA_dQibski5RREQ2A3Puyx9m-; theme=dark",
        "T9nwr0lvA_dQibski5RREQ2A3Puyx9m-",
    )
    .checked(ValueCheck::Made),
    // Passwords on a command line: `sshpass -p`, `mysql -p'...'`, `curl -u user:pass`,
    // `gh secret set NAME --body '...'`.
    rule(
        "command-line-password",
        &["sshpass"],
        Any,
        concat!(r"sshpass[ \t]+-p[ \t]*", cli_value!()),
        "$ sshpass -p 'rocket-maple-staple91' ssh deploy@10.229.31.157",
        "rocket-maple-staple91",
    )
    .checked(ValueCheck::Password),
    rule_ci(
        "command-line-password",
        &["mysql", "mariadb"],
        NotAlphanumeric,
        concat!(
            r"(?i)(?:mysql(?:dump|admin)?|mariadb)(?:[ \t][^\r\n|;&]{0,200}?)?[ \t]-p",
            cli_value!()
        ),
        "$ mysql -u root -p'iLYpBFh1CXuqPpyEfPjPiD' -h db.internal users",
        "iLYpBFh1CXuqPpyEfPjPiD",
    )
    .checked(ValueCheck::Password),
    rule(
        "command-line-password",
        &["curl"],
        NotAlphanumeric,
        r#"curl(?:[ \t][^\r\n|;&]{0,300}?)?[ \t](?:-u|--user)(?:[ \t]+|=)?(?:'[^':\r\n]*:(?P<secret_sq>[^'\r\n]+)'|"[^":\r\n]*:(?P<secret_dq>[^"\r\n]+)"|[^\s:'"]+:(?P<secret>[^\s'"]+))"#,
        "$ curl -u bob:19Yz6MMemsNKOSZm https://api.acme.com/v1/status",
        "19Yz6MMemsNKOSZm",
    )
    .checked(ValueCheck::Password),
    rule_ci(
        "command-line-password",
        &["secret set"],
        Any,
        concat!(
            r"(?i)secret set[ \t]+[^\s]+[^\r\n]{0,100}?[ \t](?:--body|-b)(?:[ \t]+|=)",
            cli_value!()
        ),
        "$ gh secret set ENCRYPTION_KEY --body 'cd1037b1fd633d763699bb8677e367a0'",
        "cd1037b1fd633d763699bb8677e367a0",
    )
    .checked(ValueCheck::Password),
    // `.netrc`: `machine api.example.com login deploy password s3cret` (blanks, not `=`).
    rule_ci(
        "netrc-password",
        &["login"],
        NotAlphanumeric,
        r"(?i)login[ \t]+[^\s]+[ \t\r\n]+password[ \t]+(?P<secret>[^\s]+)",
        "machine api.heroku.com login me@example.com password 01234567-89ab-cdef-0123-456789abcdef",
        "01234567-89ab-cdef-0123-456789abcdef",
    )
    .checked(ValueCheck::Password),
    // `token: ...` (a kubeconfig's user token, `GITHUB_TOKEN=`): the noisiest key word
    // (`token_type=bearer`, `max_tokens=4096`), so its value must look made.
    rule_ci(
        "token-assignment",
        &["token"],
        NotAlphanumeric,
        concat!(r"(?i)token[A-Za-z0-9_.-]{0,30}", assign!(), value!()),
        "    token: 8f2c1e9d7b6a5f4e3d2c1b0a9f8e7d6c",
        "8f2c1e9d7b6a5f4e3d2c1b0a9f8e7d6c",
    )
    .checked(ValueCheck::Token),
    // A PEM private key in base64 (a kubeconfig's `client-key-data`): the run starts with
    // the encoding of `-----BEGIN`; its first bytes are decoded to tell a key from a
    // certificate.
    rule(
        "base64-private-key",
        &["LS0tLS1CRUdJTi"],
        Any,
        r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}",
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
        "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
    )
    .checked(ValueCheck::Base64PrivateKey),
    // Docker's `config.json` `"auth"` and npm's `_auth`: base64 of `user:password`.
    rule_ci(
        "basic-auth-base64",
        &["auth"],
        NotAlphanumeric,
        r#"(?i)auth["']?[ \t]{0,5}[:=][ \t]{0,5}["']?(?P<secret>[A-Za-z0-9+/]{8,}={0,2})"#,
        r#"{"auths": {"registry.example.com": {"auth": "ZGVwbG95OnMzY3JldC1QYXNzMjAyNg=="}}}"#,
        "ZGVwbG95OnMzY3JldC1QYXNzMjAyNg==",
    )
    .checked(ValueCheck::Base64UserPassword),
];

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
