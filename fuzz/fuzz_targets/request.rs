//! Fuzz target for the terminal request path: arbitrary bytes, read as a JSON arguments
//! object where they parse, go through `TerminalCore::explain_command` (argument checks,
//! parser, policy, jail; everything but the executor). It must never panic and must always
//! answer with an envelope whose `ok` follows its code.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use safety::config::{Server, load};
use safety::terminal::TerminalCore;

fn core() -> &'static TerminalCore {
    static CORE: OnceLock<(tempfile::TempDir, TerminalCore)> = OnceLock::new();
    &CORE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            std::fs::create_dir_all(dir.path().join("jail/sub")).expect("jail");
            std::fs::write(dir.path().join("jail/notes.txt"), "x").expect("file");
            let _ = std::os::unix::fs::symlink("/etc", dir.path().join("jail/etc"));
            // Fail-open audit into a folder that does not exist: no fsync per input.
            let policy = dir.path().join("policy.toml");
            std::fs::write(
                &policy,
                "audit_log = \"missing/audit.jsonl\"\naudit_fail_mode = \"open\"\n\
                 [terminal]\njail_root = \"jail\"\n[terminal.allowlist]\n\
                 commands = [\"ls\", \"cat\", \"echo\", \"git\"]\n[terminal.denylist]\ncommands = [\"rm\"]\n\
                 [[terminal.rules]]\ncommand = \"git\"\ndeny_args = [\"-c\", \"--output\", \"config core.*\"]\n",
            )
            .expect("policy");
            let config = load(&policy, Server::Terminal, &[]).expect("config");
            let core = TerminalCore::start(config).expect("core");
            (dir, core)
        })
        .1
}

fuzz_target!(|data: &[u8]| {
    let args = match serde_json::from_slice::<serde_json::Value>(data) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        // Not an object: wrap the text as the command, so the parser sees raw strings too.
        _ => {
            let mut map = serde_json::Map::new();
            map.insert("command".into(), String::from_utf8_lossy(data).into_owned().into());
            Some(map)
        }
    };
    let envelope = core().explain_command(args.as_ref());
    assert_eq!(envelope.ok, envelope.code.is_ok());
    assert!(!envelope.reason.is_empty());
    assert_eq!(envelope.action, "explain_command");
});
