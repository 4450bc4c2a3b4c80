//! Signed checkpoints: a hash chain alone is rewritten by anyone who can write the file (edit a
//! record, recompute every hash after it, and `verify` says `ok`). With
//! `audit_checkpoint_key`, every `audit_checkpoint_every` records and when a writer closes the
//! log, a record is appended whose `checkpoint` member holds a note in the C2SP signed-note
//! form (<https://c2sp.org/signed-note>), signed with an Ed25519 key that the server reads
//! from outside every root:
//!
//! ```text
//! <key name>                  origin: the key's name
//! <size>                      records covered: seq 1 ..= size
//! <base64 of the head hash>   the `hash` of record `size` (the checkpoint's `prev`)
//! time <RFC 3339>
//! every <N>                   the interval, so a missing checkpoint shows
//!
//! — <key name> <base64 of key id || signature>
//! ```
//!
//! A chain recomputed without the key fails at the first checkpoint after the edit: its
//! signed head is the old one. Removing checkpoints shows too, as a stretch of more than
//! `every + 1` records that none covers. The head is the chain's own hash, not a Merkle root:
//! there are no inclusion or consistency proofs, and cutting records from the end back to a
//! checkpoint is seen only by comparing with a copy kept elsewhere.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use signed_note::{Note, Signer as _, StandardSigner, StandardVerifier, VerifierList};

/// A key file is a line of text: anything longer is not one.
const MAX_KEY_BYTES: u64 = 4096;

/// A checkpoint key could not be used or made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The file could not be read or written.
    #[error("checkpoint key '{path}': {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The private key file is not one only the server's user can read.
    #[error(
        "checkpoint key '{path}' is {what}: it must be a regular file owned by the server's user that no one else can read or write (chmod 600)"
    )]
    Exposed {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// The text is not a key of the expected kind.
    #[error("'{path}' is not {kind}: {reason}")]
    NotAKey {
        /// The key file (or `<argument>`).
        path: PathBuf,
        /// `a signer key (PRIVATE+KEY+<name>+<id>+<data>)` or the verifier form.
        kind: &'static str,
        /// The parser's reason.
        reason: String,
    },
    /// A key name with a space, a `+` or nothing in it.
    #[error("key name '{0}' is not valid: it must be non-empty, without spaces or '+'")]
    BadName(String),
}

/// The private half, loaded by a writer of the log.
pub struct CheckpointSigner {
    signer: StandardSigner,
}

impl std::fmt::Debug for CheckpointSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key itself.
        f.debug_struct("CheckpointSigner")
            .field("name", &self.signer.name())
            .finish_non_exhaustive()
    }
}

impl CheckpointSigner {
    /// Read the signer key at `path`: a regular file (a symlink is refused, not followed)
    /// owned by this process's effective user, with no permission for group or others.
    pub fn load(path: &Path) -> Result<CheckpointSigner, KeyError> {
        let text = crate::config::read_owner_only(path, MAX_KEY_BYTES).map_err(|e| match e {
            crate::config::OwnerOnlyError::Io(source) => KeyError::Io {
                path: path.to_path_buf(),
                source,
            },
            crate::config::OwnerOnlyError::Exposed(what) => KeyError::Exposed {
                path: path.to_path_buf(),
                what,
            },
        })?;
        let signer = StandardSigner::new(text.trim()).map_err(|e| KeyError::NotAKey {
            path: path.to_path_buf(),
            kind: "a signer key (PRIVATE+KEY+<name>+<id>+<data>)",
            reason: e.to_string(),
        })?;
        Ok(CheckpointSigner { signer })
    }

    /// The key's name, which is also the checkpoints' origin.
    pub fn name(&self) -> &str {
        self.signer.name()
    }

    /// The signed note of a checkpoint over `size` records whose last has hash `head`.
    pub(crate) fn sign(
        &self,
        size: u64,
        head: &str,
        ts: &str,
        every: u64,
    ) -> Result<String, String> {
        let text = note_text(self.name(), size, head, ts, every)?;
        let mut note = Note::new(text.as_bytes(), &[]).map_err(|e| e.to_string())?;
        note.add_sigs(&[&self.signer]).map_err(|e| e.to_string())?;
        String::from_utf8(note.to_bytes()).map_err(|e| e.to_string())
    }
}

/// The public half, for `safe-mcp audit verify --key`.
#[derive(Clone)]
pub struct CheckpointVerifier {
    verifier: StandardVerifier,
}

impl std::fmt::Debug for CheckpointVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointVerifier")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

impl CheckpointVerifier {
    /// Parse a verifier key (`<name>+<id>+<data>`, as `safe-mcp audit keygen` writes it);
    /// `source` names where it came from, for the error.
    pub fn parse(text: &str, source: &Path) -> Result<CheckpointVerifier, KeyError> {
        let text = text.trim();
        let verifier = StandardVerifier::new(text).map_err(|e| KeyError::NotAKey {
            path: source.to_path_buf(),
            kind: "a verifier key (<name>+<id>+<data>)",
            reason: e.to_string(),
        })?;
        Ok(CheckpointVerifier { verifier })
    }

    /// Read a verifier key from `path`.
    pub fn load(path: &Path) -> Result<CheckpointVerifier, KeyError> {
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_KEY_BYTES).read_to_string(&mut text))
            .map_err(|source| KeyError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        CheckpointVerifier::parse(&text, path)
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        signed_note::Verifier::name(&self.verifier)
    }
}

/// What a checkpoint's note says, once its signature verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signed {
    /// Records covered: seq 1 ..= size.
    pub(crate) size: u64,
    /// Hex hash of record `size`.
    pub(crate) head: String,
    /// The writer's checkpoint interval.
    pub(crate) every: u64,
    /// The `time` line.
    pub(crate) time: String,
}

/// Check a checkpoint note against `key`: signed by it, its origin the key's name, and its
/// lines well formed.
pub(crate) fn verify_note(note: &str, key: &CheckpointVerifier) -> Result<Signed, String> {
    let note = Note::from_bytes(note.as_bytes()).map_err(|e| e.to_string())?;
    note.verify(&VerifierList::new(vec![Box::new(key.verifier.clone())]))
        .map_err(|e| match e {
            signed_note::NoteError::UnverifiedNote => {
                "it is not signed by this key (another key, or none)".to_string()
            }
            other => other.to_string(),
        })?;
    let text = std::str::from_utf8(note.text()).map_err(|e| e.to_string())?;
    let mut lines = text.lines();
    let origin = lines.next().unwrap_or_default();
    if origin != key.name() {
        return Err(format!(
            "its origin is '{origin}', not the key's name '{}'",
            key.name()
        ));
    }
    let size = lines
        .next()
        .and_then(|l| l.parse::<u64>().ok())
        .ok_or("its second line is not a record count")?;
    let head = lines
        .next()
        .and_then(|l| BASE64.decode(l).ok())
        .filter(|bytes| bytes.len() == 32)
        .map(hex::encode)
        .ok_or("its third line is not a base64 SHA-256 hash")?;
    let mut every = None;
    let mut time = None;
    for line in lines {
        if let Some(n) = line.strip_prefix("every ") {
            every = n.parse::<u64>().ok().filter(|n| *n > 0);
        } else if let Some(t) = line.strip_prefix("time ") {
            time = Some(t.to_string());
        }
    }
    let every = every.ok_or("it has no `every <N>` line")?;
    let time = time.ok_or("it has no `time <ts>` line")?;
    Ok(Signed {
        size,
        head,
        every,
        time,
    })
}

/// The note's text (before its signature line).
fn note_text(origin: &str, size: u64, head: &str, ts: &str, every: u64) -> Result<String, String> {
    let head = hex::decode(head).map_err(|e| format!("head hash: {e}"))?;
    Ok(format!(
        "{origin}\n{size}\n{}\ntime {ts}\nevery {every}\n",
        BASE64.encode(head)
    ))
}

/// Make a key pair named `name`: the signer key written to `private` (created, mode 0600,
/// never over an existing file), the verifier key to `public` (mode 0644). Returns the
/// verifier key.
pub fn generate(name: &str, private: &Path, public: &Path) -> Result<String, KeyError> {
    if !signed_note::is_key_name_valid(name) {
        return Err(KeyError::BadName(name.to_string()));
    }
    let (signer, verifier) = signed_note::generate_key(&mut rand_core::OsRng, name);
    write_new(private, &signer, 0o600)?;
    if let Err(e) = write_new(public, &verifier, 0o644) {
        // Nothing half-made: a private key whose public half is missing is removed.
        let _ = std::fs::remove_file(private);
        return Err(e);
    }
    Ok(verifier)
}

/// Create `path` (never over an existing file, never through a symlink) with `mode`, write
/// `line` and a newline, and fsync it.
fn write_new(path: &Path, line: &str, mode: u32) -> Result<(), KeyError> {
    let io = |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io)?;
    file.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signer and verifier of Go's `golang.org/x/mod/sumdb/note` documentation, so the
    /// format here is the one other tools read.
    const GO_SIGNER: &str =
        "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
    const GO_VERIFIER: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

    fn signer() -> CheckpointSigner {
        CheckpointSigner {
            signer: StandardSigner::new(GO_SIGNER).unwrap(),
        }
    }

    fn verifier() -> CheckpointVerifier {
        CheckpointVerifier::parse(GO_VERIFIER, Path::new("<test>")).unwrap()
    }

    #[test]
    fn a_signed_checkpoint_verifies_and_reads_back() {
        let head = "ab".repeat(32);
        let note = signer()
            .sign(41, &head, "2026-12-04T00:00:00.000000Z", 100)
            .unwrap();
        assert!(
            note.starts_with("PeterNeumann\n41\n"),
            "the body lines come first: {note}"
        );
        assert!(note.contains("\n\n— PeterNeumann "), "{note}");
        let signed = verify_note(&note, &verifier()).unwrap();
        assert_eq!(
            signed,
            Signed {
                size: 41,
                head,
                every: 100,
                time: "2026-12-04T00:00:00.000000Z".to_string(),
            }
        );
    }

    #[test]
    fn an_edited_note_a_foreign_key_or_a_foreign_origin_is_refused() {
        let head = "cd".repeat(32);
        let note = signer()
            .sign(7, &head, "2026-12-04T00:00:00.000000Z", 10)
            .unwrap();
        let edited = note.replacen("\n7\n", "\n8\n", 1);
        assert!(verify_note(&edited, &verifier()).is_err());
        let dir = tempfile::tempdir().unwrap();
        let other = generate("other", &dir.path().join("k"), &dir.path().join("k.pub")).unwrap();
        let other = CheckpointVerifier::parse(&other, Path::new("<test>")).unwrap();
        let refused = verify_note(&note, &other).unwrap_err();
        assert!(refused.contains("not signed by this key"), "{refused}");
    }

    #[test]
    fn keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (private, public) = (dir.path().join("audit.key"), dir.path().join("audit.pub"));
        let vkey = generate("host-1/audit", &private, &public).unwrap();
        let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let loaded = CheckpointSigner::load(&private).unwrap();
        assert_eq!(loaded.name(), "host-1/audit");
        let note = loaded
            .sign(1, &"00".repeat(32), "2026-12-04T00:00:00.000000Z", 5)
            .unwrap();
        let key = CheckpointVerifier::load(&public).unwrap();
        assert_eq!(verify_note(&note, &key).unwrap().size, 1);
        assert!(vkey.starts_with("host-1/audit+"));
        // A second keygen to the same names fails and leaves the first pair alone.
        let again = generate("host-1/audit", &private, &public);
        assert!(matches!(again, Err(KeyError::Io { .. })), "{again:?}");
        assert!(CheckpointSigner::load(&private).is_ok());
        assert!(matches!(
            generate(
                "two words",
                &dir.path().join("x"),
                &dir.path().join("x.pub")
            ),
            Err(KeyError::BadName(_))
        ));
    }

    #[test]
    fn a_private_key_others_can_read_or_a_symlink_to_one_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (private, public) = (dir.path().join("audit.key"), dir.path().join("audit.pub"));
        generate("audit", &private, &public).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o640)).unwrap();
        let open = CheckpointSigner::load(&private).unwrap_err();
        assert!(matches!(open, KeyError::Exposed { .. }), "{open}");
        assert!(open.to_string().contains("mode 640"), "{open}");
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.key");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        let linked = CheckpointSigner::load(&link).unwrap_err();
        assert!(linked.to_string().contains("symbolic link"), "{linked}");
        // The public key is not a signer key.
        let wrong = CheckpointSigner::load(&public);
        assert!(wrong.is_err());
    }
}
