//! The canonical form and hash of a command as it will really run: the resolved executable,
//! its arguments, the resolved working folder and the environment the command gets.
//!
//! Two calls that differ only in what a reader cannot see (an invisible character, a
//! fullwidth letter, a composed or decomposed accent) are one command, so they must hash the
//! same: otherwise `gi\u{2060}t` slips past a replay window that has seen `git`. Two calls
//! that differ in what the program receives (a different split of the arguments, another
//! variable) are two commands and must hash differently.
//!
//! # Each string
//!
//! [`canonical_str`]: Unicode NFKC, then every code point of the strip set removed, then NFKC
//! once more when something was removed (a removed character can have stood between two
//! that NFKC joins: `e`, U+200B, U+0301 becomes `é` only after the second pass). NFKC never
//! yields a stripped code point from a string that had none (a unit test walks every code
//! point), so the result is a fixed point: canonicalising it again changes nothing.
//!
//! The strip set is every `Default_Ignorable_Code_Point` of the Unicode Character Database
//! (`DerivedCoreProperties.txt`, the same ranges from Unicode 14.0 through 16.0): U+00AD,
//! U+034F, U+061C, U+115F–U+1160, U+17B4–U+17B5, U+180B–U+180F, U+200B–U+200F,
//! U+202A–U+202E, U+2060–U+206F, U+3164, U+FE00–U+FE0F, U+FEFF, U+FFA0, U+FFF0–U+FFF8,
//! U+1BCA0–U+1BCA3, U+1D173–U+1D17A and U+E0000–U+E0FFF; plus U+2028 and U+2029 (line and
//! paragraph separators), which shellguard strips too. It contains shellguard's whole strip
//! set and adds what that set misses: U+2060 WORD JOINER, U+00AD SOFT HYPHEN, U+034F, the
//! Hangul fillers, U+180E, the variation selectors and the tag characters.
//!
//! # The encoding
//!
//! [`CanonicalCommand::canonical_bytes`] is [`canonical_json`] (compact, object members
//! sorted by key) of
//! `{"args":[...],"cwd":"...","env":[["NAME","value"],...],"executable":"..."}`, every
//! string canonicalised, `env` sorted by name then value; [`CanonicalHash`] is SHA-256 over
//! those bytes.
//!
//! # Where it differs from shellguard's canonical hash, and why
//!
//! - **What is hashed.** Shellguard hashes the executable and cwd as the caller spelled them
//!   (`git`, a relative folder, no cwd at all as `null`) and only seven "semantic" variables
//!   of the caller's `env` (`PATH`, `LANG`, `LC_ALL`, `TZ`, `HOME`, `USER`, `NODE_ENV`). Here
//!   the executable and cwd are the resolved ones and the environment is the whole one the
//!   command gets: `LD_PRELOAD`, `TERM` or any other variable changes what runs, and two
//!   spellings of one program are one command.
//! - **More is stripped**: the whole `Default_Ignorable_Code_Point` property (above), where
//!   shellguard strips eleven code points; and variable names are canonicalised too.
//! - **The bytes**: members sorted by key (the one canonical JSON of this crate, the audit
//!   log's) where shellguard writes `executable, args, cwd, env` in that order.
//!
//! So a hash from here never equals shellguard's for the same call, and cannot: the inputs
//! differ. What still agrees are the relations between its test vectors: the invisible and
//! fullwidth variant of a call hashes as the plain call, a composed and a decomposed accent
//! hash the same, and the order of the variables does not matter (the unit tests check each).
//! Where shellguard ignores a variable (`TERM`, `PWD`), the hash here changes.

use std::fmt;

use serde_json::Value;
use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

use crate::audit::canonical_json;

/// Whether `c` is removed by [`canonical_str`]: a `Default_Ignorable_Code_Point`, or U+2028
/// LINE SEPARATOR or U+2029 PARAGRAPH SEPARATOR.
#[must_use]
pub fn is_stripped(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x2028..=0x2029
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// `s` in canonical form: NFKC, the strip set ([`is_stripped`]) removed, NFKC again when
/// something was removed (see the module documentation).
#[must_use]
pub fn canonical_str(s: &str) -> String {
    let nfkc: String = s.nfkc().collect();
    if !nfkc.chars().any(is_stripped) {
        return nfkc;
    }
    let kept: String = nfkc.chars().filter(|&c| !is_stripped(c)).collect();
    kept.nfkc().collect()
}

/// SHA-256 of a [`CanonicalCommand`]'s canonical bytes. Shown (and stored) as 64 lowercase
/// hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalHash([u8; 32]);

impl CanonicalHash {
    /// The hash of these canonical bytes.
    #[must_use]
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// The 32 bytes of the digest.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// 64 lowercase hex digits.
    #[must_use]
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The hash written as 64 hex digits, or `None` when `text` is not that.
    #[must_use]
    pub fn from_hex(text: &str) -> Option<Self> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).ok()?;
        Some(Self(bytes))
    }
}

impl fmt::Display for CanonicalHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for CanonicalHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CanonicalHash({})", self.to_hex())
    }
}

/// What will really run, in canonical form: build it from the resolved values (the
/// executable's absolute path after lookup, the argv after parsing, the folder after
/// resolution beneath the jail, the environment after scrubbing), never from the caller's
/// spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalCommand {
    executable: String,
    args: Vec<String>,
    cwd: String,
    env: Vec<(String, String)>,
}

impl CanonicalCommand {
    /// Canonicalise every string; `args` are the arguments after the program (order kept,
    /// each one a separate element), `env` the variables the command gets, in any order.
    pub fn new<A, E, K, V>(executable: &str, args: A, cwd: &str, env: E) -> Self
    where
        A: IntoIterator,
        A::Item: AsRef<str>,
        E: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut env: Vec<(String, String)> = env
            .into_iter()
            .map(|(k, v)| (canonical_str(k.as_ref()), canonical_str(v.as_ref())))
            .collect();
        env.sort_unstable();
        Self {
            executable: canonical_str(executable),
            args: args
                .into_iter()
                .map(|a| canonical_str(a.as_ref()))
                .collect(),
            cwd: canonical_str(cwd),
            env,
        }
    }

    /// The canonical executable.
    #[must_use]
    pub fn executable(&self) -> &str {
        &self.executable
    }

    /// The canonical arguments.
    #[must_use]
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// The canonical working folder.
    #[must_use]
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The canonical environment, sorted.
    #[must_use]
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// The bytes that are hashed (see the module documentation for their shape).
    #[must_use]
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let strings = |items: &[String]| items.iter().cloned().map(Value::String).collect();
        let env = self
            .env
            .iter()
            .map(|(k, v)| Value::Array(vec![Value::String(k.clone()), Value::String(v.clone())]))
            .collect();
        let mut map = serde_json::Map::new();
        map.insert("args".into(), Value::Array(strings(&self.args)));
        map.insert("cwd".into(), Value::String(self.cwd.clone()));
        map.insert("env".into(), Value::Array(env));
        map.insert("executable".into(), Value::String(self.executable.clone()));
        let mut out = Vec::new();
        canonical_json(&Value::Object(map), &mut out);
        out
    }

    /// SHA-256 of [`canonical_bytes`](Self::canonical_bytes).
    #[must_use]
    pub fn hash(&self) -> CanonicalHash {
        CanonicalHash::of_bytes(&self.canonical_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_ENV: [(&str, &str); 0] = [];

    fn hash(exe: &str, args: &[&str], cwd: &str, env: &[(&str, &str)]) -> CanonicalHash {
        CanonicalCommand::new(exe, args, cwd, env.iter().copied()).hash()
    }

    fn git_log(arg: &str) -> CanonicalHash {
        hash("/usr/bin/git", &[arg, "--oneline"], "/srv/app", &[])
    }

    #[test]
    fn invisible_and_compatibility_variants_hash_as_the_plain_form() {
        let plain = git_log("log");
        let variants = [
            ("word joiner", "l\u{2060}og"),
            ("soft hyphen", "l\u{AD}og"),
            ("variation selectors", "l\u{FE0F}o\u{E0100}g"),
            ("tag characters", "\u{E0001}lo\u{E0067}\u{E007F}g"),
            ("fullwidth letters", "\u{FF4C}\u{FF4F}\u{FF47}"),
            ("zero width joiner", "lo\u{200D}g"),
            ("bidi overrides", "\u{202E}log\u{202C}"),
            ("bidi isolates", "\u{2066}log\u{2069}"),
            ("zero width space and BOM", "l\u{200B}o\u{FEFF}g"),
            ("line and paragraph separators", "lo\u{2028}g\u{2029}"),
            ("hangul filler, mongolian separator", "\u{3164}lo\u{180E}g"),
        ];
        for (what, arg) in variants {
            assert_eq!(git_log(arg), plain, "{what}: {arg:?}");
        }
        assert_ne!(git_log("lag"), plain, "a visible change still counts");
    }

    #[test]
    fn the_executable_cwd_and_env_are_canonicalised_too() {
        let plain = hash("/usr/bin/git", &["status"], "/srv/app", &[("LANG", "C")]);
        assert_eq!(
            hash(
                "/usr/bin/gi\u{2060}t",
                &["status"],
                "/srv/\u{AD}app",
                &[("LA\u{200B}NG", "\u{FF23}")]
            ),
            plain
        );
    }

    #[test]
    fn the_argument_split_counts() {
        let cwd = "/";
        assert_ne!(
            hash("/bin/echo", &["a b"], cwd, &[]),
            hash("/bin/echo", &["a", "b"], cwd, &[])
        );
        assert_ne!(
            hash("/bin/echo", &["ab"], cwd, &[]),
            hash("/bin/echo", &["a", "b"], cwd, &[])
        );
        assert_ne!(
            hash("/bin/echo", &[], cwd, &[]),
            hash("/bin/echo", &[""], cwd, &[])
        );
    }

    #[test]
    fn env_order_does_not_matter_but_its_content_does() {
        let a = [("PATH", "/usr/bin"), ("LANG", "C"), ("TZ", "UTC")];
        let b = [("TZ", "UTC"), ("PATH", "/usr/bin"), ("LANG", "C")];
        assert_eq!(hash("/x", &[], "/", &a), hash("/x", &[], "/", &b));
        let c = [
            ("TZ", "UTC"),
            ("PATH", "/usr/bin"),
            ("LANG", "C"),
            ("TERM", "xterm"),
        ];
        assert_ne!(hash("/x", &[], "/", &a), hash("/x", &[], "/", &c));
        // A variable's value never migrates into another's name.
        assert_ne!(
            hash("/x", &[], "/", &[("A", "B=C")]),
            hash("/x", &[], "/", &[("A=B", "C")])
        );
    }

    #[test]
    fn the_cwd_and_executable_count() {
        assert_ne!(
            hash("/usr/bin/git", &[], "/a", &[]),
            hash("/usr/bin/git", &[], "/b", &[])
        );
        assert_ne!(
            hash("/usr/bin/git", &[], "/a", &[]),
            hash("/usr/local/bin/git", &[], "/a", &[])
        );
    }

    #[test]
    fn the_canonical_bytes_are_pinned() {
        let cmd = CanonicalCommand::new(
            "/usr/bin/git",
            ["l\u{200B}o\u{FEFF}g", "\u{FF0D}\u{FF0D}oneline"],
            "/srv/app",
            [("PATH", "/usr/bin"), ("LANG", "C")],
        );
        let expected = r#"{"args":["log","--oneline"],"cwd":"/srv/app","env":[["LANG","C"],["PATH","/usr/bin"]],"executable":"/usr/bin/git"}"#;
        assert_eq!(String::from_utf8(cmd.canonical_bytes()).unwrap(), expected);
        // Computed apart from this code: printf '%s' "$expected" | sha256sum
        assert_eq!(
            cmd.hash().to_hex(),
            "4a355b30860926e56ccf4569a9cc0a6acd9bb08695b44c5bbea2dab36778b426"
        );
    }

    #[test]
    fn shellguard_vector_relations_still_hold() {
        // Its vectors 1 and 2: the zero-width and fullwidth variant is the plain call.
        assert_eq!(
            hash("/usr/bin/git", &["log", "--oneline"], "/", &[]),
            hash(
                "/usr/bin/git",
                &["l\u{200B}o\u{FEFF}g", "\u{FF0D}\u{FF0D}oneline"],
                "/",
                &[]
            )
        );
        // Its vector 5: JSON escapes survive, and a composed and decomposed accent agree.
        let v5 = CanonicalCommand::new(
            "echo",
            ["a\"b\\c\n\u{1}", "\u{E9}", "e\u{301}"],
            "/",
            NO_ENV,
        );
        let bytes = String::from_utf8(v5.canonical_bytes()).unwrap();
        assert!(
            bytes.contains(r#""args":["a\"b\\c\n\u0001","é","é"]"#),
            "{bytes}"
        );
        // Its vector 6: the seven variables in scrambled order give one hash.
        let sorted = [
            ("HOME", "/h"),
            ("LANG", "en"),
            ("LC_ALL", "C.UTF-8"),
            ("NODE_ENV", "test"),
            ("PATH", "/b"),
            ("TZ", "UTC"),
            ("USER", "u"),
        ];
        let mut scrambled = sorted;
        scrambled.reverse();
        scrambled.swap(1, 4);
        assert_eq!(
            hash("x", &[], "/", &sorted),
            hash("x", &[], "/", &scrambled)
        );
        // Its vectors 3 and 4 differ here for another reason too: TERM and PWD reach the
        // command, so they count (shellguard ignores them).
        assert_ne!(
            hash(
                "git",
                &[],
                "/srv/app",
                &[("LANG", "C"), ("PATH", "/usr/bin")]
            ),
            hash(
                "git",
                &[],
                "/srv/app",
                &[
                    ("TERM", "xterm"),
                    ("PATH", "/usr/bin"),
                    ("LANG", "C"),
                    ("PWD", "/x")
                ]
            )
        );
    }

    #[test]
    fn a_stripped_character_between_a_letter_and_its_accent_still_composes() {
        assert_eq!(canonical_str("e\u{200B}\u{301}"), "\u{E9}");
        assert_eq!(canonical_str("e\u{301}"), "\u{E9}");
    }

    #[test]
    fn canonical_form_is_a_fixed_point_and_nfkc_never_makes_a_stripped_character() {
        for cp in 0..=0x10FFFF_u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            if is_stripped(c) {
                continue;
            }
            let mut buf = [0u8; 4];
            let nfkc: String = c.encode_utf8(&mut buf).nfkc().collect();
            assert!(
                !nfkc.chars().any(is_stripped),
                "NFKC of U+{cp:04X} yields a stripped code point"
            );
        }
        for s in [
            "gi\u{2060}t",
            "\u{FF47}it",
            "e\u{200B}\u{301}",
            "a\u{3164}b",
            "ﬁ",
        ] {
            let once = canonical_str(s);
            assert_eq!(canonical_str(&once), once, "{s:?}");
        }
    }

    #[test]
    fn the_strip_set_holds_shellguards_and_the_ranges_it_misses() {
        let shellguard = [
            0x200B, 0x200C, 0x200D, 0xFEFF, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
            0x2066, 0x2067, 0x2068, 0x2069, 0x2061, 0x2062, 0x2063, 0x2064,
        ];
        let missed = [
            0x2060, 0xAD, 0x34F, 0x115F, 0x1160, 0x3164, 0x180E, 0xFE00, 0xFE0F, 0xE0000, 0xE007F,
            0xE0100, 0xE0FFF,
        ];
        for cp in shellguard.into_iter().chain(missed) {
            let c = char::from_u32(cp).unwrap();
            assert!(is_stripped(c), "U+{cp:04X}");
        }
        for c in [
            'a',
            ' ',
            '\u{A0}',
            '\u{3000}',
            '\u{E1000}',
            '\u{1D172}',
            '\u{1D17B}',
        ] {
            assert!(!is_stripped(c), "{c:?}");
        }
    }

    #[test]
    fn hex_round_trips() {
        let h = git_log("log");
        assert_eq!(CanonicalHash::from_hex(&h.to_hex()), Some(h));
        assert_eq!(CanonicalHash::from_hex("zz"), None);
        assert_eq!(h.to_string().len(), 64);
    }
}
