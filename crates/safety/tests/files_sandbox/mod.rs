//! The files-server test sandbox: a temporary folder holding a workspace (`inbox`), a
//! sibling whose name extends the workspace's (`inbox_evil`), an unrelated outside folder
//! (`outside`), a state folder, and a copy of the shipped `policy.example.toml`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use safety::config::{self, Config, Server};
use safety::organizer::Organizer;

pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub evil: PathBuf,
    pub outside: PathBuf,
    pub state: PathBuf,
    pub policy: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("inbox");
        let evil = base.join("inbox_evil");
        let outside = base.join("outside");
        let state = base.join("state");
        for d in [&ws, &evil, &outside, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(evil.join("secret.txt"), "evil sibling secret\n").unwrap();
        std::fs::write(outside.join("secret.pdf"), "outside secret\n").unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy.example.toml");
        let policy = base.join("policy.toml");
        std::fs::copy(shipped, &policy).unwrap();
        let env = vec![
            (
                "SAFE_MCP_WORKSPACE_ROOT".to_string(),
                ws.display().to_string(),
            ),
            (
                "SAFE_MCP_JOURNAL".to_string(),
                state.join("journal.json").display().to_string(),
            ),
            (
                "SAFE_MCP_AUDIT_LOG".to_string(),
                state.join("audit.jsonl").display().to_string(),
            ),
        ];
        Sandbox {
            dir,
            ws,
            evil,
            outside,
            state,
            policy,
            env,
        }
    }

    pub fn with_env(mut self, name: &str, value: &str) -> Sandbox {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    pub fn config(&self) -> Config {
        config::load(&self.policy, Server::Files, &self.env).unwrap()
    }

    pub fn organizer(&self) -> Organizer {
        Organizer::open(&self.config()).unwrap()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.ws.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
    }

    /// The demo workspace (as scripts/make_demo_sandbox.sh lays it out).
    pub fn demo(&self) {
        self.write("photo.png", "PNG demo image bytes, not a real picture\n");
        self.write("report.pdf", "PDF demo report\n");
        self.write(".bashrc", "alias ll=\"ls -l\"\n");
        self.write("setup.exe", "MZ demo installer\n");
        std::os::unix::fs::symlink(self.outside.join("secret.pdf"), self.ws.join("link.pdf"))
            .unwrap();
    }

    /// Every path below `root` (relative) with its content (or `<dir>`/`-> target`).
    pub fn tree(root: &Path) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            for e in rd.flatten() {
                let p = e.path();
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                let meta = std::fs::symlink_metadata(&p).unwrap();
                if meta.file_type().is_symlink() {
                    out.insert(
                        rel,
                        format!("-> {}", std::fs::read_link(&p).unwrap().display()),
                    );
                } else if meta.is_dir() {
                    out.insert(rel.clone(), "<dir>".into());
                    walk(root, &p, out);
                } else if meta.is_file() {
                    out.insert(
                        rel,
                        String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned(),
                    );
                } else {
                    out.insert(rel, "<special>".into());
                }
            }
        }
        walk(root, root, &mut out);
        out
    }

    /// Everything outside the workspace that an escape could touch.
    pub fn outside_snapshot(&self) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        (Self::tree(&self.evil), Self::tree(&self.outside))
    }
}
