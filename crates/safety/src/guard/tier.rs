//! Trust tiers: how far a guard tool can be trusted, read from the real state.
//!
//! - `LOW`: no tool of that name is registered.
//! - `MEDIUM`: it is, but its arguments are not really limited: no patterns, or patterns
//!   that accept anything. That is decided by running the compiled patterns against probe
//!   arguments (shell metacharacters, command substitution, path traversal, option
//!   injection, random text, Unicode), never by comparing their text: `.*`, `.+`,
//!   `[\s\S]*`, `(?s).*`, `\S+`, `(?:.|\n)*`, a length bound such as `(?s).{0,300}` and
//!   any spelling yet to be invented all accept every probe.
//! - `HIGH`: the patterns limit the arguments, but something else is weaker than it
//!   should be: a sandbox mechanism was downgraded on this host, the profile is
//!   `permissive`, or the replay window is off.
//! - `CRITICAL`: none of that: the tool may be trusted with critical work.
//!
//! Each tier comes with the reasons for it and a hint for each way to raise it. The peer
//! passed "sandbox active" unconditionally, so its `HIGH` never happened; here every input
//! is the state the server observed.

use serde::Serialize;

use crate::config::ReplayMode;
use crate::exec::Profile;

use super::registry::Registry;

/// A tool's trust tier, lowest first (the order compares).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TrustTier {
    /// Not registered.
    Low,
    /// Registered, but its arguments are not limited.
    Medium,
    /// Limited arguments, but a weaker sandbox, a permissive profile or no replay window.
    High,
    /// Limited arguments, the full sandbox, a profile no looser than `standard`, replay on.
    Critical,
}

impl TrustTier {
    /// The wire name, e.g. `CRITICAL`.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustTier::Low => "LOW",
            TrustTier::Medium => "MEDIUM",
            TrustTier::High => "HIGH",
            TrustTier::Critical => "CRITICAL",
        }
    }
}

/// A tool's tier with why, and what would raise it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TrustReport {
    /// The tool asked about.
    pub tool: String,
    /// Its tier.
    pub tier: TrustTier,
    /// Why it has this tier and no higher, in plain words (at least one).
    pub reasons: Vec<String>,
    /// What would raise it, one hint per reason that has a fix (empty at `CRITICAL`).
    pub hints: Vec<String>,
}

/// Arguments each pattern list is tried on. A list that accepts every one of them limits
/// nothing that matters: each is a different kind of hostile argument, and none holds a
/// space or a newline (so `\S+` and `.*` count as open: an argv needs neither to do harm).
fn probes() -> Vec<String> {
    let mut probes: Vec<String> = [
        ";id",
        "|sh",
        "&&reboot",
        "$(id)",
        "`id`",
        "${IFS}",
        ">/etc/passwd",
        "../../../../etc/shadow",
        "/etc/passwd",
        "--exec=/bin/sh",
        "-oProxyCommand=sh",
        "*?[]{}~!#%^=+",
        "'\"\\",
        "ünïcödé日本語🙂",
        "g\u{2060}it\u{00ad}",
        "\u{202e}txt.exe",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Short enough that a length bound (`(?s).{0,300}`, `\S{1,64}`) does not pass for a limit:
    // an argument that does harm needs no more than a few dozen characters.
    probes.push(random_text(0x5eed_cafe, 24));
    probes
}

/// Probes an open list may also accept or not; only reported.
const EXTRA_PROBES: &[(&str, &str)] = &[
    ("", "an empty argument"),
    ("a\nb", "a newline"),
    ("a b", "a space"),
    ("\u{0}", "a NUL"),
];

/// `len` characters of non-space text drawn from ASCII punctuation and letters, Latin-1,
/// Cyrillic, CJK and emoji, deterministically from `seed` (xorshift), so a run is
/// repeatable.
fn random_text(mut seed: u64, len: usize) -> String {
    const RANGES: &[(u32, u32)] = &[
        (0x21, 0x7e),
        (0xa1, 0xff),
        (0x400, 0x4ff),
        (0x4e00, 0x9fff),
        (0x1f600, 0x1f64f),
    ];
    let mut out = String::with_capacity(len * 2);
    for _ in 0..len {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let range = RANGES
            .get((seed % RANGES.len() as u64) as usize)
            .copied()
            .unwrap_or((0x21, 0x7e));
        let span = u64::from(range.1 - range.0 + 1);
        let code = range.0 + ((seed >> 8) % span) as u32;
        out.push(char::from_u32(code).unwrap_or('x'));
    }
    out
}

/// The tier of `tool` in `registry`. `downgrades` are the sandbox mechanisms this host could
/// not provide (the terminal probe's `SandboxReport::downgrades`, empty when all are
/// active); the replay mode is the registry's policy.
pub fn trust_tier(registry: &Registry, tool: &str, downgrades: &[String]) -> TrustReport {
    let report = |tier, reasons, hints| TrustReport {
        tool: tool.to_string(),
        tier,
        reasons,
        hints,
    };
    let Some(view) = registry.tier_view(tool) else {
        return report(
            TrustTier::Low,
            vec![format!("no tool named '{tool}' is registered")],
            vec!["add a [[guard.tools]] entry for it to the policy".to_string()],
        );
    };
    let probes = probes();
    // A call passes the run-time layer (if any) AND one operator entry: the arguments are
    // open when the run-time layer is and at least one operator entry is.
    let accepts = |probe: &str| {
        let passes = |l: &Vec<regex::Regex>| l.is_empty() || l.iter().any(|re| re.is_match(probe));
        view.runtime_layer.as_ref().is_none_or(passes) && view.operator_layers.iter().any(passes)
    };
    let open = probes.iter().all(|p| accepts(p));
    if open {
        let no_patterns = view.runtime_layer.as_ref().is_none_or(Vec::is_empty)
            && view.operator_layers.iter().any(Vec::is_empty);
        let mut reason = if no_patterns {
            "it has no args_patterns: any argument is accepted".to_string()
        } else {
            "its args_patterns accept any argument (every probe: shell metacharacters, command substitution, path traversal, option injection, random text, Unicode)".to_string()
        };
        let also: Vec<&str> = (EXTRA_PROBES.iter())
            .filter(|(p, _)| accepts(p))
            .map(|(_, what)| *what)
            .collect();
        if !also.is_empty() {
            reason.push_str(&format!(", even {}", also.join(", ")));
        }
        return report(
            TrustTier::Medium,
            vec![reason],
            vec!["give args_patterns that name the arguments the tool needs (e.g. -l, [a-z0-9._-]+), never .* or .+".to_string()],
        );
    }
    let mut reasons = Vec::new();
    let mut hints = Vec::new();
    if !downgrades.is_empty() {
        reasons.push(format!(
            "the sandbox is downgraded on this host: {}",
            downgrades.join("; ")
        ));
        hints.push("run on a host where every sandbox mechanism is available (see sandbox_status), or set [terminal.sandbox] require_kernel_sandbox = true".to_string());
    }
    if view.profile == Profile::Permissive {
        reasons.push("its profile is permissive (long runs, large outputs)".to_string());
        hints.push(if view.runtime_layer.is_some() {
            "register it with profile strict or standard".to_string()
        } else {
            "give the entry profile = \"standard\" or \"strict\"".to_string()
        });
    }
    if registry.replay_mode() == ReplayMode::Off {
        reasons.push("the replay window is off: a repeated call is not noticed".to_string());
        hints.push("set [guard] replay = \"flag\" or \"block\"".to_string());
    }
    if reasons.is_empty() {
        return report(
            TrustTier::Critical,
            vec![format!(
                "its arguments are limited by patterns, the {} profile runs it in the full sandbox, and replays are {}",
                view.profile.name(),
                match registry.replay_mode() {
                    ReplayMode::Block => "blocked",
                    _ => "flagged",
                }
            )],
            Vec::new(),
        );
    }
    report(TrustTier::High, reasons, hints)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::config::{GuardSettings, GuardTool};

    fn ls() -> PathBuf {
        Path::new("/bin/ls").canonicalize().unwrap()
    }

    fn registry(patterns: &[&str], profile: Profile, replay: ReplayMode) -> Registry {
        let settings = GuardSettings {
            replay,
            tools: vec![GuardTool {
                name: "ls".into(),
                executable: ls(),
                args_patterns: patterns.iter().map(|p| p.to_string()).collect(),
                cwd: None,
                profile: Some(profile),
                env_allow: vec![],
                examples_allow: vec![],
                examples_deny: vec![],
                written_executable: None,
            }],
            ..GuardSettings::default()
        };
        Registry::new(&settings, Profile::Standard).unwrap()
    }

    fn tier(patterns: &[&str]) -> TrustReport {
        trust_tier(
            &registry(patterns, Profile::Standard, ReplayMode::Flag),
            "ls",
            &[],
        )
    }

    #[test]
    fn an_unregistered_tool_is_low() {
        let r = registry(&["-l"], Profile::Standard, ReplayMode::Flag);
        let t = trust_tier(&r, "rm", &[]);
        assert_eq!(t.tier, TrustTier::Low);
        assert_eq!(t.tier.as_str(), "LOW");
        assert!(t.reasons.iter().any(|r| r.contains("'rm'")));
        assert_eq!(t.hints.len(), 1);
    }

    #[test]
    fn patterns_that_accept_anything_are_medium_however_they_are_spelled() {
        for open in [
            &[][..],
            &[".*"],
            &[".+"],
            &["[\\s\\S]*"],
            &["(?s).*"],
            &["\\S+"],
            &["(?:.|\\n)*"],
            &["-l", "[^\\n]*"],
            // A length bound is not a limit.
            &["(?s).{0,300}"],
            &["\\S{1,64}"],
        ] {
            let t = tier(open);
            assert_eq!(t.tier, TrustTier::Medium, "{open:?}: {t:?}");
            assert_eq!(t.hints.len(), 1);
        }
        // What the open ones also take is said, and only what they take.
        assert!(tier(&["[\\s\\S]*"]).reasons[0].contains("a newline"));
        assert!(!tier(&[".+"]).reasons[0].contains("an empty argument"));
        assert!(tier(&[]).reasons[0].contains("no args_patterns"));
    }

    #[test]
    fn patterns_that_limit_the_arguments_are_critical_with_everything_else_in_place() {
        for limited in [
            &["-l"][..],
            &["[a-z0-9._-]+"],
            &["[^;|&$`]*"],
            &["-l", "[[:alnum:]/]+"],
            // Almost open: refuses only command substitution.
            &["[^$]*"],
        ] {
            let t = tier(limited);
            assert_eq!(t.tier, TrustTier::Critical, "{limited:?}: {t:?}");
            assert!(t.hints.is_empty());
        }
    }

    #[test]
    fn a_downgrade_a_permissive_profile_or_replay_off_is_high() {
        let limited = ["-l"];
        let down = vec!["seccomp: not available on this kernel".to_string()];
        let t = trust_tier(
            &registry(&limited, Profile::Standard, ReplayMode::Flag),
            "ls",
            &down,
        );
        assert_eq!(t.tier, TrustTier::High);
        assert!(t.reasons[0].contains("seccomp"), "{t:?}");
        let t = trust_tier(
            &registry(&limited, Profile::Permissive, ReplayMode::Block),
            "ls",
            &[],
        );
        assert_eq!(t.tier, TrustTier::High);
        assert!(t.reasons[0].contains("permissive"));
        let t = trust_tier(
            &registry(&limited, Profile::Strict, ReplayMode::Off),
            "ls",
            &[],
        );
        assert_eq!(t.tier, TrustTier::High);
        assert!(t.reasons[0].contains("replay"));
        // All three at once: three reasons, three hints.
        let t = trust_tier(
            &registry(&limited, Profile::Permissive, ReplayMode::Off),
            "ls",
            &down,
        );
        assert_eq!(
            (t.tier, t.reasons.len(), t.hints.len()),
            (TrustTier::High, 3, 3)
        );
        assert!(TrustTier::Low < TrustTier::Medium && TrustTier::High < TrustTier::Critical);
    }

    #[test]
    fn a_runtime_entry_is_judged_with_the_operator_layer_it_must_also_pass() {
        // An open operator entry narrowed by a limited run-time one: limited.
        let r = registry(&[".*"], Profile::Standard, ReplayMode::Flag);
        assert_eq!(trust_tier(&r, "ls", &[]).tier, TrustTier::Medium);
        r.register("ls-l", &ls(), &["-l".to_string()], None, None)
            .unwrap();
        assert_eq!(trust_tier(&r, "ls-l", &[]).tier, TrustTier::Critical);
        // An open run-time entry over a limited operator entry: still limited by it.
        let r = registry(&["-l"], Profile::Standard, ReplayMode::Flag);
        r.register("any", &ls(), &[".*".to_string()], None, None)
            .unwrap();
        assert_eq!(trust_tier(&r, "any", &[]).tier, TrustTier::Critical);
        r.register("strict", &ls(), &[], None, Some(Profile::Strict))
            .unwrap();
        assert_eq!(trust_tier(&r, "strict", &[]).tier, TrustTier::Critical);
        // Two operator entries for one program, one of them open: a call need pass only
        // that one, so an open run-time entry over both is open, however many patterns
        // the limited entry has.
        let tool = |name: &str, patterns: &[&str]| GuardTool {
            name: name.into(),
            executable: ls(),
            args_patterns: patterns.iter().map(|p| p.to_string()).collect(),
            cwd: None,
            profile: None,
            env_allow: vec![],
            examples_allow: vec![],
            examples_deny: vec![],
            written_executable: None,
        };
        let settings = GuardSettings {
            tools: vec![tool("limited", &["-l"]), tool("open", &[".+", "x", "y"])],
            ..GuardSettings::default()
        };
        let r = Registry::new(&settings, Profile::Standard).unwrap();
        r.register("both", &ls(), &[], None, None).unwrap();
        let t = trust_tier(&r, "both", &[]);
        assert_eq!(t.tier, TrustTier::Medium, "{t:?}");
        r.register("narrow", &ls(), &["-l".to_string()], None, None)
            .unwrap();
        assert_eq!(trust_tier(&r, "narrow", &[]).tier, TrustTier::Critical);
    }

    #[test]
    fn the_random_probe_is_long_varied_and_free_of_spaces() {
        let text = random_text(1, 4096);
        assert_eq!(text.chars().count(), 4096);
        assert!(!text.chars().any(char::is_whitespace));
        assert!(text.chars().any(|c| c.is_ascii_punctuation()));
        assert!(text.chars().any(|c| (c as u32) > 0x4e00));
        assert_eq!(text, random_text(1, 4096));
    }
}
