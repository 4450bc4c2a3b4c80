//! Built-in redaction rules: every rule's example is redacted to its own marker, common
//! non-secrets are left alone, operator patterns and the entropy fallback behave as documented.

use safety::redact::{
    BUILTIN_RULES, ExtraPattern, RedactError, RedactionSettings, Redactor, builtin_rule_names,
};

fn redactor(settings: &RedactionSettings) -> Redactor {
    match Redactor::new(settings) {
        Ok(r) => r,
        Err(e) => panic!("redactor does not build: {e}"),
    }
}

fn default_redactor() -> Redactor {
    redactor(&RedactionSettings::default())
}

#[test]
fn builtin_table_has_at_least_30_credential_kinds() {
    let names = builtin_rule_names();
    assert!(names.len() >= 30, "only {} kinds: {names:?}", names.len());
}

#[test]
fn every_builtin_rule_redacts_its_example_to_its_own_marker() {
    let r = default_redactor();
    for rule in BUILTIN_RULES {
        let out = r.redact(rule.example);
        let marker = format!("[REDACTED:{}]", rule.name);
        assert!(
            out.contains(&marker),
            "rule {}: expected {marker} in {out:?}",
            rule.name
        );
        assert!(
            !out.contains(rule.example_secret),
            "rule {}: secret survived in {out:?}",
            rule.name
        );
        // No 8-byte piece of the secret survives either.
        let secret = rule.example_secret.as_bytes();
        for window in secret.windows(8) {
            if let Ok(piece) = std::str::from_utf8(window) {
                assert!(
                    !out.contains(piece),
                    "rule {}: fragment {piece:?} survived in {out:?}",
                    rule.name
                );
            }
        }
    }
}

#[test]
fn every_builtin_example_is_a_substring_secret() {
    for rule in BUILTIN_RULES {
        assert!(
            rule.example.contains(rule.example_secret),
            "rule {}: example_secret is not inside example",
            rule.name
        );
        assert!(
            rule.example_secret.len() >= 8,
            "rule {}: example secret too short to test",
            rule.name
        );
    }
}

#[test]
fn redacted_text_keeps_surrounding_context() {
    let r = default_redactor();
    let out = r.redact("export DB_PASSWORD=hunter2hunter2 # local only");
    assert_eq!(
        out,
        "export DB_PASSWORD=[REDACTED:password-assignment] # local only"
    );
    let out = r.redact("postgres://app:s3cret@db:5432/app");
    assert_eq!(
        out,
        "postgres://app:[REDACTED:postgres-connection-string]@db:5432/app"
    );
}

#[test]
fn pem_block_is_removed_whole_including_begin_and_end_lines() {
    let r = default_redactor();
    let text = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nBG5vbmUAAAAEbm9uZQAAAAAAAAAB\n-----END OPENSSH PRIVATE KEY-----\nafter";
    let out = r.redact(text);
    assert_eq!(out, "before\n[REDACTED:pem-private-key]\nafter");
}

#[test]
fn pem_block_without_end_line_is_removed_to_the_end_of_its_body() {
    // Attack: the END line was cut off (truncation), so a BEGIN..END rule would miss it.
    let r = default_redactor();
    let text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7V21jxUdcfQm9\nZQISApQyOMqlfZZgZMnafy8hWskB";
    let out = r.redact(text);
    assert_eq!(out, "[REDACTED:pem-private-key]");
}

#[test]
fn pem_end_line_without_begin_takes_the_body_before_it() {
    // Attack: the BEGIN line fell into the omitted middle; the body must not be shown.
    let r = default_redactor();
    let text = "MIIEowIBAAKCAQEA7V21jxUdcfQm9\nZQISApQyOMqlfZZgZMnafy8hWskB\n-----END RSA PRIVATE KEY-----\n$ next";
    let out = r.redact(text);
    assert!(!out.contains("MIIEowIBAAKCAQEA"), "{out}");
    assert!(!out.contains("ZQISApQyOMql"), "{out}");
    assert!(out.contains("[REDACTED:pem-private-key]"), "{out}");
}

#[test]
fn password_in_url_with_unencoded_at_sign_is_removed_whole() {
    let r = default_redactor();
    let out = r.redact("https://bob:p@ss@w0rd@example.com/x");
    assert_eq!(out, "https://bob:[REDACTED:url-credentials]@example.com/x");
}

#[test]
fn quoted_password_with_spaces_is_removed_whole() {
    let r = default_redactor();
    let out = r.redact(r#"{"password": "correct horse \"battery\" staple"}"#);
    assert!(!out.contains("horse"), "{out}");
    assert!(!out.contains("staple"), "{out}");
}

#[test]
fn password_prompt_does_not_swallow_the_next_line() {
    let r = default_redactor();
    let text = "Password:\nLogin incorrect";
    assert_eq!(r.redact(text), text);
}

#[test]
fn common_non_secrets_are_untouched() {
    let r = default_redactor();
    let samples = [
        // git SHAs, abbreviated and full
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "a1b2c3d Fix the parser (#123)",
        // UUIDs
        "request-id: 550e8400-e29b-41d4-a716-446655440000",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        // ordinary prose, with words containing anchors (ask, task, disk, skip, secretary)
        "Ask the task runner to skip the disk check; the secretary keeps the minutes.",
        "The password policy requires twelve characters.",
        "Bearer of bad news: the build failed.",
        // paths and URLs without credentials
        "/usr/lib/x86_64-linux-gnu/libssl.so.3",
        "/home/user/projects/safe-mcp/crates/safety/src/redact.rs:120:5",
        "https://crates.io/crates/regex and http://localhost:8080/health",
        "ssh://git@github.com/owner/repo.git",
        // build output
        "   Compiling safety v0.1.0 (/work/main/crates/safety)",
        "    Finished `release` profile [optimized] target(s) in 12.34s",
        "drwxr-xr-x  2 root root 4096 Jan  1 12:00 sk-learn-models",
        // base64 of ordinary text, hashes
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "SGVsbG8gd29ybGQ=",
        "Content-Type: application/json",
        // errors about files whose names contain a credential word
        "cat: secret.txt: No such file or directory",
        "ls: cannot access 'api_key.json': No such file or directory",
        "cat: password.txt: Permission denied",
        "cat: tokens/access_token: Is a directory",
        "Error: secret.toml: No such file or directory (os error 2)\nnext line",
    ];
    for sample in samples {
        assert_eq!(r.redact(sample), sample, "changed: {sample}");
    }
}

#[test]
fn a_value_that_only_looks_like_an_os_error_is_still_redacted() {
    // The exception is for the exact error texts; anything else after the key is a value.
    let r = default_redactor();
    for (text, secret) in [
        (
            "secret.txt: Nosuchfile-but-a-secret",
            "Nosuchfile-but-a-secret",
        ),
        ("password: Permission-denied-42", "Permission-denied-42"),
        (
            "api_key=No_such_file_or_directory",
            "No_such_file_or_directory",
        ),
        // A quoted value that starts with the text and goes on (the exemption would have
        // let `hunter2` through).
        ("DB_PASSWORD=\"Permission denied (hunter2)\"", "hunter2"),
        ("api_key: 'No such file or directory (os error x7Q)'", "x7Q"),
        // The text, but not ending its line: a value that starts like an error.
        (
            "api_key: 'Invalid argumentXk29fQ'",
            "Invalid argumentXk29fQ",
        ),
        (
            "api_key: \"Permission denied-4f9a2\" more",
            "Permission denied-4f9a2",
        ),
    ] {
        let out = r.redact(text);
        assert!(!out.contains(secret), "{text} -> {out}");
        assert!(out.contains("[REDACTED:"), "{text} -> {out}");
    }
}

#[test]
fn disabled_redaction_changes_nothing() {
    let r = redactor(&RedactionSettings {
        enabled: false,
        ..RedactionSettings::default()
    });
    let text = "GITHUB_TOKEN=ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d";
    assert_eq!(r.redact(text), text);
}

#[test]
fn extra_pattern_redacts_with_its_name() {
    let settings = RedactionSettings {
        extra_patterns: vec![ExtraPattern {
            name: "internal-ticket-key".to_string(),
            regex: r"TCK-[0-9]{6}".to_string(),
        }],
        ..RedactionSettings::default()
    };
    let r = redactor(&settings);
    assert_eq!(
        r.redact("use TCK-123456 now"),
        "use [REDACTED:internal-ticket-key] now"
    );
}

#[test]
fn extra_pattern_secret_group_keeps_the_key() {
    let settings = RedactionSettings {
        extra_patterns: vec![ExtraPattern {
            name: "corp-pin".to_string(),
            regex: r"pin#(?P<secret>[0-9]{4,})".to_string(),
        }],
        ..RedactionSettings::default()
    };
    let r = redactor(&settings);
    assert_eq!(r.redact("pin#98765"), "pin#[REDACTED:corp-pin]");
}

#[test]
fn extra_pattern_that_does_not_compile_is_an_error_naming_it() {
    let settings = RedactionSettings {
        extra_patterns: vec![ExtraPattern {
            name: "broken".to_string(),
            regex: "(unclosed".to_string(),
        }],
        ..RedactionSettings::default()
    };
    match Redactor::new(&settings) {
        Err(RedactError::BadPattern { name, .. }) => assert_eq!(name, "broken"),
        Ok(_) => panic!("a bad pattern was accepted"),
    }
}

#[test]
fn extra_pattern_too_big_is_refused() {
    // Attack: a pattern that compiles to a huge automaton, paid on every output.
    let settings = RedactionSettings {
        extra_patterns: vec![ExtraPattern {
            name: "huge".to_string(),
            regex: r"\w{1000}{1000}".to_string(),
        }],
        ..RedactionSettings::default()
    };
    match Redactor::new(&settings) {
        Err(RedactError::BadPattern { name, message }) => {
            assert_eq!(name, "huge");
            assert!(!message.is_empty());
        }
        Ok(_) => panic!("a huge pattern was accepted"),
    }
}

#[test]
fn extra_pattern_name_that_could_forge_a_marker_is_refused() {
    let settings = RedactionSettings {
        extra_patterns: vec![ExtraPattern {
            name: "x] ok [y".to_string(),
            regex: "abc".to_string(),
        }],
        ..RedactionSettings::default()
    };
    assert!(matches!(
        Redactor::new(&settings),
        Err(RedactError::BadPattern { .. })
    ));
}

const RANDOM_TOKEN: &str = "Qm9vdHN0cmFwLTdYa2ZMcTJ2UjhzTnBXM3o";

#[test]
fn entropy_fallback_is_off_by_default() {
    let r = default_redactor();
    let text = format!("build={RANDOM_TOKEN}x end");
    // `build=` is not a credential key (`session=` is now: a session cookie), and the token
    // matches no rule.
    assert_eq!(r.redact(&text), text);
}

#[test]
fn entropy_fallback_when_on_redacts_random_tokens_but_not_shas_or_uuids() {
    let r = redactor(&RedactionSettings {
        entropy_fallback: true,
        ..RedactionSettings::default()
    });
    let out = r.redact(&format!("session {RANDOM_TOKEN} end"));
    assert_eq!(out, "session [REDACTED:high-entropy] end");
    for sample in [
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "id 550e8400-e29b-41d4-a716-446655440000",
        "/usr/lib/x86_64-linux-gnu/libssl.so.3",
    ] {
        assert_eq!(r.redact(sample), sample);
    }
}

#[test]
fn redact_json_redacts_every_string_and_credential_keys() {
    let r = default_redactor();
    let mut value = serde_json::json!({
        "tool": "run_command",
        "args": {"command": "echo ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", "cwd": "."},
        "env": {"DB_PASSWORD": "hunter2", "HOME": "/srv"},
        "list": ["xoxb-965724920868-2889093100251-y1CJdObOIRpFqaDZeV7G5IfQ", 3, null, true],
        "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d": 1
    });
    r.redact_json(&mut value);
    let text = value.to_string();
    assert!(!text.contains("ghp_u8jz"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!text.contains("xoxb-9657"), "{text}");
    assert_eq!(value["env"]["HOME"], "/srv");
    assert_eq!(
        value["env"]["DB_PASSWORD"],
        "[REDACTED:password-assignment]"
    );
    assert_eq!(
        value["args"]["command"],
        "echo [REDACTED:github-personal-access-token]"
    );
    assert_eq!(value["list"][1], 3);
}

#[test]
fn redaction_is_idempotent() {
    let r = default_redactor();
    for rule in BUILTIN_RULES {
        let once = r.redact(rule.example);
        assert_eq!(r.redact(&once), once, "rule {}", rule.name);
    }
}
