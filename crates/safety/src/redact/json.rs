//! Redacting JSON values in place (tool arguments and audit records): every string, keys
//! included, and a value under a key that names a credential replaced whole.
//!
//! A record with no secret in it is the common case, so the strings are first searched
//! joined in one pass; only when that finds something is each string redacted on its own.

use std::borrow::Cow;

use super::{ExtraRule, Redactor};

impl Redactor {
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
    /// `$`; `\b` sees `\n` as it sees the end; a glued key's `\z`, the rules' `delimiter!`,
    /// has the `\n` as its delimiter instead), so text added on the right can only lengthen
    /// or add matches. A match that runs across a `\n` only sends the value to the
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

/// Replace `v` by its marker when it is a string under a credential `key` that is not a
/// placeholder, a mask, a flag or a path (the check of the keyword rules,
/// [`ValueCheck::Password`](super::ValueCheck)); whether it did.
fn replace_credential_value(key: &str, v: &mut serde_json::Value) -> bool {
    match (credential_key(key), &*v) {
        (Some(rule), serde_json::Value::String(s))
            if super::ValueCheck::Password.accepts(key, s) =>
        {
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
