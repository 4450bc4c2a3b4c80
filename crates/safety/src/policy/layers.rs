//! The two-layer skip model of the files server (docs/files.md).
//!
//! One built-in allow rule: `organize` is permitted for regular files and folders whose
//! names are UTF-8. Everything else (a symlink, FIFO, socket, device, a name that is not
//! UTF-8) matches no allow rule and falls to deny-by-default, which is classified as
//! PROTECTION on purpose: `POLICY_DENIED`, rule `null`, and a reason that says what the
//! entry is and what is never done with one (`deny_by_default_reason`).
//!
//! The operator's `[[files.skip]]` rules each declare a layer:
//! - PROTECTION is enforced by every tool, without override;
//! - RESTRAINT only by the automatic planner (`plan_organize`), reported as
//!   `NEEDS_EXPLICIT_REQUEST`; `move_file` moves such an entry when the user names it.
//!
//! The PROTECTION set is derived by filtering the one rule list by layer
//! (`SkipPolicy::rules_in`); there is no second list that could drift.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::config::{FilesSettings, Layer, Predicate, SkipRule};
use crate::jail::workspace::EntryKind;
use crate::result::ResultCode;

/// The closing words of every deny-by-default reason: no allow rule covers the entry.
pub(crate) const DENY_BY_DEFAULT: &str = "no rule permits organizing it (deny by default)";

/// Reason for an entry that matches no allow rule: its name, what it is, and what is never
/// done with such an entry, e.g. `'link.pdf' is a symlink; symlinks are never followed or
/// moved, however they are named: no rule permits organizing it (deny by default)`.
pub(crate) fn deny_by_default_reason(subject: &Subject<'_>) -> String {
    let name = crate::protocol::quote(subject.name);
    let what = if !subject.utf8 {
        "has a name that is not valid UTF-8; such entries are never moved, since no client \
         could name them back"
    } else {
        match subject.kind {
            EntryKind::Symlink => {
                "is a symlink; symlinks are never followed or moved, however they are named"
            }
            EntryKind::Fifo => "is a named pipe; pipes are never opened or moved",
            EntryKind::Socket => "is a socket; sockets are never moved",
            EntryKind::Device => "is a device; devices are never opened or moved",
            EntryKind::File | EntryKind::Directory | EntryKind::Unknown => {
                "is not a regular file or folder; only those are ever moved"
            }
        }
    };
    format!("'{name}' {what}: {DENY_BY_DEFAULT}")
}

/// The action every skip rule governs (reported as a skip's `rule`).
pub(crate) const RULE_ORGANIZE: &str = "organize";

/// Reason the planner gives for a file no category claims, when no rule said so first.
pub(crate) const NO_CATEGORY_REASON: &str = "no category matches this file's extension";

/// Which tool is asking: the planner enforces both layers, a named request only PROTECTION.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `plan_organize`: the automatic classifier.
    Planner,
    /// `move_file`, `list_files`' "would the organiser act": a user named the entry.
    Explicit,
}

impl Scope {
    /// Does this scope enforce rules of `layer`?
    pub(crate) fn enforces(self, layer: Layer) -> bool {
        match layer {
            Layer::Protection => true,
            Layer::Restraint => self == Scope::Planner,
        }
    }
}

/// What the rules look at for one entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Subject<'a> {
    /// The entry's name (its last component).
    pub name: &'a str,
    /// Whether the stored name is valid UTF-8.
    pub utf8: bool,
    /// What `lstat` saw.
    pub kind: EntryKind,
}

/// Why an entry is skipped or refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// Which layer decided.
    pub layer: Layer,
    /// `POLICY_DENIED` for PROTECTION, `NEEDS_EXPLICIT_REQUEST` for RESTRAINT.
    pub code: ResultCode,
    /// The rule's reason (or the deny-by-default reason).
    pub reason: String,
    /// `Some("organize")` for a matched rule, `None` for deny-by-default.
    pub rule: Option<&'static str>,
}

/// Extensions the `installer` predicate knows (lower case, with the dot).
const INSTALLER_EXTENSIONS: &[&str] = &[
    ".exe",
    ".msi",
    ".msix",
    ".msp",
    ".appx",
    ".dmg",
    ".pkg",
    ".mpkg",
    ".deb",
    ".rpm",
    ".apk",
    ".appimage",
    ".snap",
    ".flatpak",
    ".run",
    ".bin",
    ".bat",
    ".cmd",
    ".com",
    ".scr",
    ".jar",
    ".sh",
    ".command",
    ".app",
];

/// Names the `system-file` predicate knows (lower case).
const SYSTEM_NAMES: &[&str] = &[
    "desktop.ini",
    "thumbs.db",
    "ehthumbs.db",
    ".ds_store",
    ".localized",
    "icon\r",
    "$recycle.bin",
    ".spotlight-v100",
    ".trashes",
    ".fseventsd",
    ".directory",
    ".temporaryitems",
    "system volume information",
    "pagefile.sys",
    "hiberfil.sys",
    "swapfile.sys",
];

/// Does `c` hide or disguise what a name says? Control characters (Cc), format
/// characters (Cf) including every bidirectional control and zero-width character, and
/// the line/paragraph separators.
pub(crate) fn is_unsafe_char(c: char) -> bool {
    let u = u32::from(c);
    c.is_control()
        || matches!(
            u,
            0x00AD
                | 0x0600..=0x0605
                | 0x061C
                | 0x06DD
                | 0x070F
                | 0x0890..=0x0891
                | 0x08E2
                | 0x180E
                | 0x200B..=0x200F
                | 0x2028..=0x202E
                | 0x2060..=0x2064
                | 0x2066..=0x206F
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0x110BD
                | 0x110CD
                | 0x13430..=0x1343F
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0001
                | 0xE0020..=0xE007F
        )
}

/// The extension of `name`, lower case with the dot; a leading dot alone (`.bashrc`) is
/// not an extension.
pub fn extension(name: &str) -> Option<String> {
    extension_cow(name).map(Cow::into_owned)
}

/// [`extension`] without a copy when the stored extension is already lower-case ASCII
/// (the common case). Anything else goes through full Unicode lower-casing, so `.PDF`
/// and a Kelvin sign that lower-cases to `k` are treated exactly as before.
fn extension_cow(name: &str) -> Option<Cow<'_, str>> {
    let i = name.rfind('.')?;
    if i == 0 {
        return None;
    }
    let ext = name.get(i..)?;
    if ext.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
        Some(Cow::Borrowed(ext))
    } else {
        Some(Cow::Owned(ext.to_lowercase()))
    }
}

/// The compiled skip policy: categories plus the layered rules, in file order.
#[derive(Debug, Clone)]
pub(crate) struct SkipPolicy {
    rules: Vec<SkipRule>,
    by_extension: BTreeMap<String, String>,
}

impl SkipPolicy {
    /// Build from `[files]`. Categories are matched case-insensitively; when two categories
    /// list one extension, the first in name order wins.
    pub(crate) fn new(settings: &FilesSettings) -> Self {
        let mut by_extension = BTreeMap::new();
        for (category, extensions) in &settings.categories {
            for ext in extensions {
                let ext = ext.to_lowercase();
                let ext = if ext.starts_with('.') {
                    ext
                } else {
                    format!(".{ext}")
                };
                by_extension.entry(ext).or_insert_with(|| category.clone());
            }
        }
        SkipPolicy {
            rules: settings.skip.clone(),
            by_extension,
        }
    }

    /// The category a regular file falls into, by extension.
    pub(crate) fn category_of(&self, name: &str, kind: EntryKind) -> Option<&str> {
        if kind != EntryKind::File {
            return None;
        }
        let ext = extension_cow(name)?;
        self.by_extension.get(ext.as_ref()).map(String::as_str)
    }

    /// The rules of one layer, derived by filtering the full rule set.
    pub(crate) fn rules_in(&self, layer: Layer) -> impl Iterator<Item = &SkipRule> {
        self.rules.iter().filter(move |r| r.layer == layer)
    }

    /// The built-in allow rule: `organize` is permitted for regular files and folders with
    /// UTF-8 names. A symlink, FIFO, socket or device matches no allow rule.
    fn allowed(subject: &Subject<'_>) -> bool {
        subject.utf8 && matches!(subject.kind, EntryKind::File | EntryKind::Directory)
    }

    fn predicate_matches(&self, predicate: Predicate, s: &Subject<'_>) -> bool {
        match predicate {
            Predicate::UnsafeName => s.name.chars().any(is_unsafe_char),
            Predicate::Dotfile => s.name.starts_with('.'),
            Predicate::Installer => {
                s.kind == EntryKind::File
                    && extension_cow(s.name)
                        .is_some_and(|e| INSTALLER_EXTENSIONS.contains(&e.as_ref()))
            }
            Predicate::AppFolder => {
                s.kind == EntryKind::Directory && s.name.to_lowercase().ends_with(".app")
            }
            Predicate::SystemFile => SYSTEM_NAMES.iter().any(|n| n.eq_ignore_ascii_case(s.name)),
            Predicate::Directory => s.kind == EntryKind::Directory,
            Predicate::Uncategorized => self.category_of(s.name, s.kind).is_none(),
        }
    }

    /// The first refusal for `subject` in `scope`, or `None` when the tool may act.
    /// Order: deny-by-default, then PROTECTION rules, then (planner only) RESTRAINT rules,
    /// each in file order; a rule matches when ANY of its predicates does.
    pub(crate) fn evaluate(&self, subject: &Subject<'_>, scope: Scope) -> Option<Refusal> {
        // A symlink (or FIFO, socket, device) is never followed, opened or moved, however
        // explicitly it is named: it matches no allow rule (CVE-2025-53109 shape).
        if !Self::allowed(subject) {
            return Some(Refusal {
                layer: Layer::Protection,
                code: ResultCode::PolicyDenied,
                reason: deny_by_default_reason(subject),
                rule: None,
            });
        }
        for layer in [Layer::Protection, Layer::Restraint] {
            if !scope.enforces(layer) {
                continue;
            }
            for rule in self.rules_in(layer) {
                if rule
                    .when
                    .iter()
                    .any(|p| self.predicate_matches(*p, subject))
                {
                    return Some(Refusal {
                        layer,
                        code: match layer {
                            Layer::Protection => ResultCode::PolicyDenied,
                            Layer::Restraint => ResultCode::NeedsExplicitRequest,
                        },
                        reason: rule.reason.clone(),
                        rule: Some(RULE_ORGANIZE),
                    });
                }
            }
        }
        None
    }

    /// PROTECTION for a name that is about to be created (a move's destination and the
    /// folders made for it): a move must not produce a name the rules would protect
    /// against, such as one with bidi characters that disguise its extension.
    pub(crate) fn check_new_name(&self, name: &str, kind: EntryKind) -> Option<Refusal> {
        let subject = Subject {
            name,
            utf8: true,
            kind,
        };
        for rule in self.rules_in(Layer::Protection) {
            if rule
                .when
                .iter()
                .any(|p| self.predicate_matches(*p, &subject))
            {
                return Some(Refusal {
                    layer: Layer::Protection,
                    code: ResultCode::PolicyDenied,
                    reason: rule.reason.clone(),
                    rule: Some(RULE_ORGANIZE),
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> SkipPolicy {
        let mut settings = FilesSettings::default();
        settings
            .categories
            .insert("Documents".into(), vec![".pdf".into()]);
        settings
            .categories
            .insert("Images".into(), vec![".png".into()]);
        let rule = |layer, when: Vec<Predicate>, reason: &str| SkipRule {
            layer,
            when,
            reason: reason.into(),
        };
        settings.skip = vec![
            rule(Layer::Protection, vec![Predicate::UnsafeName], "unsafe"),
            rule(Layer::Restraint, vec![Predicate::Dotfile], "dot"),
            rule(
                Layer::Restraint,
                vec![Predicate::Installer, Predicate::AppFolder],
                "inst",
            ),
            rule(Layer::Restraint, vec![Predicate::Directory], "dir"),
            rule(Layer::Restraint, vec![Predicate::Uncategorized], "uncat"),
        ];
        SkipPolicy::new(&settings)
    }

    fn file(name: &str) -> Subject<'_> {
        Subject {
            name,
            utf8: true,
            kind: EntryKind::File,
        }
    }

    #[test]
    fn symlink_and_fifo_fall_to_deny_by_default_in_every_scope() {
        let p = policy();
        for kind in [
            EntryKind::Symlink,
            EntryKind::Fifo,
            EntryKind::Socket,
            EntryKind::Device,
        ] {
            for scope in [Scope::Planner, Scope::Explicit] {
                let r = p
                    .evaluate(
                        &Subject {
                            name: "link.pdf",
                            utf8: true,
                            kind,
                        },
                        scope,
                    )
                    .unwrap();
                assert_eq!(r.code, ResultCode::PolicyDenied);
                assert!(r.reason.starts_with("'link.pdf' is a "), "{}", r.reason);
                assert!(r.reason.ends_with(DENY_BY_DEFAULT), "{}", r.reason);
                assert_eq!(r.rule, None);
                assert_eq!(r.layer, Layer::Protection);
            }
        }
    }

    #[test]
    fn deny_by_default_names_the_entry_and_what_it_is() {
        let p = policy();
        let reason = |name, utf8, kind| {
            p.evaluate(&Subject { name, utf8, kind }, Scope::Explicit)
                .map(|r| r.reason)
                .unwrap_or_default()
        };
        assert_eq!(
            reason("link.pdf", true, EntryKind::Symlink),
            "'link.pdf' is a symlink; symlinks are never followed or moved, however they are \
             named: no rule permits organizing it (deny by default)"
        );
        assert!(reason("p", true, EntryKind::Fifo).starts_with("'p' is a named pipe; "));
        assert!(reason("s", true, EntryKind::Socket).starts_with("'s' is a socket; "));
        assert!(reason("d", true, EntryKind::Device).starts_with("'d' is a device; "));
        assert!(
            reason("x\u{fffd}.pdf", false, EntryKind::File)
                .starts_with("'x\u{fffd}.pdf' has a name that is not valid UTF-8; ")
        );
        // A control character in the name is escaped, never written raw into the reason.
        assert!(reason("a\nb", true, EntryKind::Symlink).starts_with("'a\\nb' is a symlink"));
    }

    #[test]
    fn restraint_applies_only_to_the_planner() {
        let p = policy();
        let r = p.evaluate(&file("setup.exe"), Scope::Planner).unwrap();
        assert_eq!(r.code, ResultCode::NeedsExplicitRequest);
        assert_eq!(r.rule, Some("organize"));
        assert!(p.evaluate(&file("setup.exe"), Scope::Explicit).is_none());
        assert!(p.evaluate(&file(".bashrc"), Scope::Explicit).is_none());
    }

    #[test]
    fn protection_wins_over_restraint_and_applies_everywhere() {
        let p = policy();
        for scope in [Scope::Planner, Scope::Explicit] {
            let r = p.evaluate(&file(".evil\u{202e}fdp.exe"), scope).unwrap();
            assert_eq!(r.code, ResultCode::PolicyDenied);
            assert_eq!(r.reason, "unsafe");
        }
    }

    #[test]
    fn protection_set_is_the_filtered_rule_list() {
        let p = policy();
        let protection: Vec<_> = p.rules_in(Layer::Protection).collect();
        assert_eq!(protection.len(), 1);
        assert_eq!(p.rules_in(Layer::Restraint).count(), 4);
    }

    #[test]
    fn categories_match_extension_case_insensitively() {
        let p = policy();
        assert_eq!(p.category_of("A.PDF", EntryKind::File), Some("Documents"));
        assert_eq!(p.category_of(".pdf", EntryKind::File), None);
        assert_eq!(p.category_of("x.pdf", EntryKind::Directory), None);
    }

    #[test]
    fn unsafe_chars_cover_control_bidi_and_zero_width() {
        for c in [
            '\n', '\u{1b}', '\u{202e}', '\u{2066}', '\u{200b}', '\u{feff}', '\u{7f}',
        ] {
            assert!(is_unsafe_char(c), "{c:?}");
        }
        for c in ['a', 'é', ' ', '-', '日'] {
            assert!(!is_unsafe_char(c), "{c:?}");
        }
    }
}
