//! Audit records are redacted by the same rules as output: a secret typed
//! into a command line, into a guarded tool's arguments or into an allowed environment value
//! never reaches the log file, while the record of the call is still there and the chain
//! verifies.
//!
//! The log file is read raw (what an operator, a log shipper or a backup sees); a leak is the
//! secret or any fragment of `min(len, 8)` bytes of it (the corpus's definition).

use std::path::Path;

use aho_corasick::AhoCorasick;
use safety::audit::verify;
use safety::redact::BUILTIN_RULES;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::audit_common::parse;
use crate::guard_core::Guard;
use crate::sandbox_common::{Options, Setup};

/// Every fragment of every rule's `example_secret`, each pattern tagged with its rule.
struct Fragments {
    searcher: AhoCorasick,
    /// The rule and secret of each pattern of `searcher`.
    owners: Vec<(&'static str, &'static str)>,
}

impl Fragments {
    fn of_every_rule() -> Fragments {
        let mut patterns: Vec<&[u8]> = Vec::new();
        let mut owners = Vec::new();
        for rule in BUILTIN_RULES {
            let secret = rule.example_secret.as_bytes();
            for window in secret.windows(secret.len().min(8)) {
                patterns.push(window);
                owners.push((rule.name, rule.example_secret));
            }
        }
        Fragments {
            searcher: AhoCorasick::new(patterns).unwrap(),
            owners,
        }
    }

    /// Each leak in `text`: the rule, the fragment and the line it is on.
    fn leaks(&self, text: &str) -> Vec<String> {
        self.searcher
            .find_iter(text)
            .map(|m| {
                let (rule, _) = self.owners[m.pattern().as_usize()];
                let line_start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
                let line_end = text[m.end()..]
                    .find('\n')
                    .map_or(text.len(), |i| m.end() + i);
                format!(
                    "{rule}: {:?} in {}",
                    &text[m.start()..m.end()],
                    &text[line_start..line_end]
                )
            })
            .collect()
    }
}

/// `text` with the SHA-256 digests the log computes itself (`prev`, `hash`,
/// `canonical_hash`) emptied: they are not copies of anything typed, and left in, their random
/// hex matched an 8-character window of a hex secret now and then.
fn without_digests(text: &str) -> String {
    let digests = regex::Regex::new(r#""(prev|hash|canonical_hash)":"[0-9a-f]{64}""#).unwrap();
    digests.replace_all(text, r#""$1":"""#).into_owned()
}

/// The records of `path`, checked: the chain verifies and nothing in the file is a fragment
/// of a rule's secret.
fn records_without_secrets(path: &Path) -> Vec<Map<String, Value>> {
    let text = std::fs::read_to_string(path).unwrap();
    let leaks = Fragments::of_every_rule().leaks(&without_digests(&text));
    assert!(
        leaks.is_empty(),
        "{} secret fragments in the audit log:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
    let report = verify(path).unwrap();
    assert_eq!(report.broken, None, "the chain is broken: {report:?}");
    text.lines().map(parse).collect()
}

/// The records of `tool` with event `event`.
fn count(records: &[Map<String, Value>], tool: &str, event: &str) -> usize {
    records
        .iter()
        .filter(|r| r.get("tool") == Some(&json!(tool)) && r.get("event") == Some(&json!(event)))
        .count()
}

/// A command line holding `rule`'s example as `echo` arguments (allowed), and one holding
/// it in a form the policy refuses (`curl` is not allowed): the secret as a bearer token in
/// a header when it has a bearer token's characters (RFC 7235 token68), else the example.
fn command_lines(example: &str, secret: &str) -> [String; 2] {
    let token68 = secret
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
    let refused = if token68 {
        format!("curl -H 'Authorization: Bearer {secret}' https://api.example.com")
    } else {
        format!("curl {example}")
    };
    [format!("echo {example}"), refused]
}

#[tokio::test]
async fn no_secret_typed_into_a_command_line_reaches_the_audit_log() {
    let t = Setup::new(&Options::default());
    let mut calls = 0;
    for rule in BUILTIN_RULES {
        for command in command_lines(rule.example, rule.example_secret) {
            let args = json!({ "command": command });
            let run = t
                .core
                .run_command(args.as_object(), &CancellationToken::new())
                .await
                .to_value();
            assert!(run["code"].is_string(), "{}: {run}", rule.name);
            let explain = t.core.explain_command(args.as_object()).to_value();
            assert!(explain["code"].is_string(), "{}: {explain}", rule.name);
            // What goes back to the client (its argv, its reason) is redacted too.
            let leaks = Fragments::of_every_rule().leaks(&without_digests(&explain.to_string()));
            assert!(leaks.is_empty(), "{}: {leaks:?}", rule.name);
            calls += 1;
        }
    }
    let records = records_without_secrets(&t.dir.path().join("state/audit.jsonl"));
    // Every call is on record (redacted, not dropped).
    assert_eq!(count(&records, "run_command", "outcome"), calls);
    assert_eq!(count(&records, "explain_command", "outcome"), calls);
    let redacted = records
        .iter()
        .filter(|r| {
            Value::Object((*r).clone())
                .to_string()
                .contains("[REDACTED:")
        })
        .count();
    assert!(redacted >= 2 * calls, "{redacted} redacted records");
}

/// A guarded `echo` that takes any printable argument, and `env` with caller variables.
const TOOLS: &str = r#"
[[guard.tools]]
name = "echo"
executable = "/bin/echo"
args_patterns = ["[ -~\n]{1,600}"]
examples_allow = [["hello"]]
examples_deny = [["é"]]

[[guard.tools]]
name = "env"
executable = "/usr/bin/env"
args_patterns = ["-0"]
env_allow = ["GREETING", "DB_PASSWORD"]
examples_deny = [["sh"]]
"#;

#[tokio::test]
async fn no_secret_in_guarded_arguments_or_environment_reaches_the_audit_log() {
    let g = Guard::new("", TOOLS);
    let mut calls = 0;
    for rule in BUILTIN_RULES {
        // The example as one argument, and as the value of an allowed variable; the bare
        // secret under a variable whose name says it is a password.
        let exec = json!({ "toolName": "echo", "command": "/bin/echo", "args": [rule.example] });
        let env = json!({
            "toolName": "env",
            "command": "/usr/bin/env",
            "args": ["-0"],
            "env": { "GREETING": rule.example, "DB_PASSWORD": rule.example_secret },
        });
        for call in [exec, env] {
            let reply = g.exec(call).await;
            assert!(reply["code"].is_string(), "{}: {reply}", rule.name);
            calls += 1;
        }
    }
    let records = records_without_secrets(&g.audit_log());
    assert_eq!(count(&records, "guard_exec", "outcome"), calls);
}

/// The corpus's secrets as a model would type them: each secret's line of
/// its text (with the line before it), as `echo` arguments, through explain_command (and every fiftieth through
/// run_command, which runs it): no fragment of any of them reaches the log.
#[tokio::test]
async fn no_secret_of_the_corpus_typed_into_a_command_line_reaches_the_audit_log() {
    let t = Setup::new(&Options::default());
    let entries = crate::redact_corpus_common::load().unwrap();
    let mut secrets = Vec::new();
    let mut calls = 0usize;
    for entry in &entries {
        for secret in &entry.secrets {
            // The secret's line with the line before it (a `.netrc` names its login on the
            // line above the password), joined by a blank.
            let lines: Vec<&str> = entry.text.lines().collect();
            let Some(i) = lines.iter().position(|l| l.contains(secret.value.as_str())) else {
                continue;
            };
            let before = i
                .checked_sub(1)
                .and_then(|j| lines.get(j))
                .map_or("", |l| l.trim());
            let line = format!("{before} {}", lines[i].trim());
            let args = json!({ "command": format!("echo {}", line.trim()) });
            let explain = t.core.explain_command(args.as_object()).to_value();
            assert!(explain["code"].is_string(), "{explain}");
            if calls.is_multiple_of(50) {
                let run = t
                    .core
                    .run_command(args.as_object(), &CancellationToken::new())
                    .await
                    .to_value();
                assert!(run["code"].is_string(), "{run}");
            }
            calls += 1;
            secrets.push((secret.kind.clone(), secret.value.clone()));
        }
    }
    assert!(calls > 1000, "{calls} corpus secrets typed");
    let path = t.dir.path().join("state/audit.jsonl");
    let log = without_digests(&std::fs::read_to_string(&path).unwrap());
    // Every fragment of every secret, found in one pass over the log.
    let mut patterns: Vec<&[u8]> = Vec::new();
    let mut owners = Vec::new();
    for (kind, value) in &secrets {
        let bytes = value.as_bytes();
        for window in bytes.windows(bytes.len().min(8)) {
            patterns.push(window);
            owners.push((kind.as_str(), value.as_str()));
        }
    }
    let searcher = AhoCorasick::new(patterns).unwrap();
    let mut leaked: Vec<String> = searcher
        .find_iter(&log)
        .map(|m| {
            let (kind, value) = owners[m.pattern().as_usize()];
            let start = log[..m.start()].rfind('\n').map_or(0, |i| i + 1);
            let end = log[m.end()..].find('\n').map_or(log.len(), |i| m.end() + i);
            format!("{kind}: {value} in {}", &log[start..end])
        })
        .collect();
    leaked.dedup();
    assert!(
        leaked.is_empty(),
        "{} fragments of the {} corpus secrets reached the audit log:\n{}",
        leaked.len(),
        secrets.len(),
        leaked.join("\n")
    );
    let report = verify(&path).unwrap();
    assert_eq!(report.broken, None, "{report:?}");
}
