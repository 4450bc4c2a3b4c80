//! The `request` fuzz target's check, shared by the fuzz binary
//! (`fuzz/fuzz_targets/request.rs`) and the stable replay test
//! (`crates/safety/tests/fuzz_replay.rs`), which both include this file with `#[path]`.
//!
//! The terminal request path, dispatched as the server dispatches a `tools/call`:
//! arbitrary bytes, read as a JSON arguments object where they parse, go to `run_command`,
//! `explain_command` or an unknown tool name (chosen by the first byte), in a core whose
//! policy allows only harmless programs (`echo`, `true`, `ls`, `cat`, `git` with its
//! option escapes denied) in a temporary jail, with the kernel sandbox off so each input
//! costs one process at most. It must never panic and must always answer with an envelope
//! whose `ok` follows its code and whose action is the tool that was called.

use std::sync::OnceLock;

use safety::config::{Server, load};
use safety::terminal::TerminalCore;

struct Fixture {
    _dir: tempfile::TempDir,
    core: TerminalCore,
    runtime: tokio::runtime::Runtime,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
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
             commands = [\"ls\", \"cat\", \"echo\", \"true\", \"git\"]\n[terminal.denylist]\ncommands = [\"rm\"]\n\
             [[terminal.rules]]\ncommand = \"git\"\ndeny_args = [\"-c\", \"--output\", \"config core.*\"]\n\
             [terminal.limits]\ntimeout_seconds = 2\nmax_output_bytes = 4096\n\
             [terminal.sandbox]\nenabled = false\n",
        )
        .expect("policy");
        // A root server runs commands as an unprivileged identity (never as root).
        let root = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
        };
        let env: Vec<(String, String)> = if root {
            vec![("SAFE_MCP_RUN_AS".into(), "65534:65534".into())]
        } else {
            Vec::new()
        };
        let config = load(&policy, Server::Terminal, &env).expect("config");
        let core = TerminalCore::start(config).expect("core");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Fixture {
            _dir: dir,
            core,
            runtime,
        }
    })
}

/// Checks one input: the first byte picks the tool, the rest are its arguments.
pub fn check(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let args = match serde_json::from_slice::<serde_json::Value>(rest) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        Ok(serde_json::Value::Null) => None,
        // Not an object: wrap the text as the command, so the parser sees raw strings too.
        _ => {
            let mut map = serde_json::Map::new();
            map.insert(
                "command".into(),
                String::from_utf8_lossy(rest).into_owned().into(),
            );
            Some(map)
        }
    };
    let f = fixture();
    let (envelope, tool) = match selector % 4 {
        // Running is the dearer path: a quarter of the inputs.
        0 => {
            let cancel = tokio_util::sync::CancellationToken::new();
            let envelope = f
                .runtime
                .block_on(f.core.run_command(args.as_ref(), &cancel));
            (envelope, "run_command".to_string())
        }
        1 => {
            let name = String::from_utf8_lossy(rest.get(..rest.len().min(40)).unwrap_or_default())
                .into_owned();
            // The envelope names the tool quoted and bounded, never raw.
            (f.core.unknown_tool(&name), safety::protocol::quote(&name))
        }
        _ => (
            f.core.explain_command(args.as_ref()),
            "explain_command".to_string(),
        ),
    };
    assert_eq!(envelope.ok, envelope.code.is_ok());
    assert!(!envelope.reason.is_empty());
    assert_eq!(envelope.action, tool);
}
