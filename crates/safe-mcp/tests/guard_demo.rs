//! The guard half of `safe-mcp demo`, run against the built binary: each step gives the
//! outcome its heading promises (granted, refused, flagged, blocked, the tiers).

use std::path::Path;

use serde_json::Value;

fn code(envelope: &Value) -> &str {
    envelope["code"].as_str().unwrap()
}

#[tokio::test]
async fn guard_demo_steps_give_the_outcomes_they_announce() {
    let dir = tempfile::tempdir().unwrap();
    let policy = safe_mcp::demo_guard::make_sandbox(dir.path()).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_safe-mcp"));
    let e = safe_mcp::demo_guard::run(bin, &policy, &safe_mcp::client::Via::Stdio)
        .await
        .unwrap();
    assert_eq!(e.len(), 12);
    // register_allowlist: the narrowing one granted, /bin/sh refused.
    assert_eq!(code(&e[0]), "OK", "{}", e[0]);
    assert_eq!(e[0]["detail"]["registered"], true);
    assert_eq!(code(&e[1]), "POLICY_DENIED", "{}", e[1]);
    // guard_exec: ran, ran flagged, blocked, ran flagged with a WORD JOINER in the argument.
    assert_eq!(code(&e[2]), "OK", "{}", e[2]);
    assert_eq!(e[2]["detail"]["stdout"], "hello\n");
    assert_eq!(e[2]["detail"]["isReplay"], false);
    assert_eq!(code(&e[3]), "OK", "{}", e[3]);
    assert_eq!(e[3]["detail"]["isReplay"], true);
    assert_eq!(code(&e[4]), "POLICY_DENIED", "{}", e[4]);
    assert_eq!(e[4]["detail"]["isReplay"], true);
    assert!(
        e[4]["detail"].get("stdout").is_none(),
        "a blocked call ran: {}",
        e[4]
    );
    assert_eq!(code(&e[5]), "OK", "{}", e[5]);
    assert_eq!(e[5]["detail"]["isReplay"], true);
    assert_eq!(e[5]["detail"]["stdout"], "hel\u{2060}lo\n");
    let hash = &e[2]["detail"]["canonicalHash"];
    assert!(hash.is_string());
    for later in &e[3..6] {
        assert_eq!(&later["detail"]["canonicalHash"], hash);
    }
    // trust_tier: LOW, MEDIUM, HIGH, then CRITICAL (HIGH where the host downgrades the sandbox).
    let tiers: Vec<&str> = e[6..10]
        .iter()
        .map(|t| t["detail"]["tier"].as_str().unwrap())
        .collect();
    assert_eq!(&tiers[..3], ["LOW", "MEDIUM", "HIGH"]);
    let downgraded = !e[10]["detail"]["downgrades"].as_array().unwrap().is_empty();
    assert_eq!(tiers[3], if downgraded { "HIGH" } else { "CRITICAL" });
    assert_eq!(code(&e[10]), "OK", "{}", e[10]);
    assert_eq!(e[10]["detail"]["profile"], "standard");
    // audit_source finds the template-literal exec in server.js.
    assert_eq!(code(&e[11]), "OK", "{}", e[11]);
    let text = e[11]["detail"]["findings"].to_string();
    assert!(
        text.contains("exec_template_literal_with_input"),
        "{}",
        e[11]
    );
    assert!(text.contains("server.js"), "{}", e[11]);
}
