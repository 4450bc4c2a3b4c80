//! Policy evaluation (docs/policy.md): allow or deny an argv. Deny always wins; whatever is not
//! explicitly allowed is denied.
//!
//! Evaluation has two stages so that examples can be checked at start-up without a file system:
//! [`TerminalPolicy::evaluate_argv`] (names and arguments only) and
//! `TerminalPolicy::resolve_program` (PATH resolution and pinned executables).

mod allow;
pub mod layers;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::config::{HookDecision, TerminalSettings};
use crate::exec::Profile;
use crate::parse::parse_command;
use crate::result::ResultCode;

/// A policy that cannot be built; start-up fails with it.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// An `args_patterns` regex does not compile.
    #[error(
        "terminal.rules[{index}] ('{command}'): args pattern '{pattern}' does not compile: {message}"
    )]
    BadPattern {
        /// Rule index (0-based).
        index: usize,
        /// The rule's command.
        command: String,
        /// The pattern.
        pattern: String,
        /// The compiler's message.
        message: String,
    },
    /// A rule does not behave as its examples claim.
    #[error(
        "terminal.rules[{index}] ('{command}'): example '{example}' should be {expected} but is {actual}"
    )]
    ExampleMismatch {
        /// Rule index (0-based).
        index: usize,
        /// The rule's command.
        command: String,
        /// The example command string.
        example: String,
        /// `allowed` or `denied`.
        expected: &'static str,
        /// What the engine said, with its reason.
        actual: String,
    },
    /// Any other invalid rule.
    #[error("terminal.rules[{index}] ('{command}'): {message}")]
    BadRule {
        /// Rule index (0-based).
        index: usize,
        /// The rule's command.
        command: String,
        /// Why.
        message: String,
    },
}

/// The answer for one argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allowed or not.
    pub allowed: bool,
    /// `OK` when allowed, else the refusal code (`POLICY_DENIED`, or `OPERATION_FAILED` for a
    /// program that is allowed but cannot be found).
    pub code: ResultCode,
    /// One sentence, exact (`'cat' is allowed`, `'rm' is on the denylist`, a rule's reason).
    pub reason: String,
    /// What decided: `allowlist`, `denylist`, `default-deny`, `rules[N]`, `executable`.
    pub decided_by: String,
    /// The program's basename.
    pub program: String,
    /// The sandbox profile a rule set for this program, if any.
    pub profile: Option<Profile>,
    /// The strictest `hook` decision of the rules that let the command through, with the
    /// index of the rule that said it (what `safe-mcp hook` answers; `None`: no decision).
    pub hook: Option<(HookDecision, usize)>,
}

impl Decision {
    fn deny(program: &str, decided_by: impl Into<String>, reason: impl Into<String>) -> Self {
        Decision {
            allowed: false,
            code: ResultCode::PolicyDenied,
            reason: reason.into(),
            decided_by: decided_by.into(),
            program: program.to_string(),
            profile: None,
            hook: None,
        }
    }
}

/// One token of a `deny_args` entry.
#[derive(Debug, Clone)]
enum TokenPattern {
    /// Matches a token exactly (case-sensitive: `-c` is not `-C`).
    Exact(String),
    /// `core.*`: matches any token starting with `core.`, ASCII case-insensitive (git config
    /// keys are case-insensitive, so `Core.Pager` must not slip past `core.*`).
    Prefix(String),
}

impl TokenPattern {
    fn parse(token: &str) -> Self {
        match token.strip_suffix('*') {
            Some(prefix) => TokenPattern::Prefix(prefix.to_ascii_lowercase()),
            None => TokenPattern::Exact(token.to_string()),
        }
    }

    fn matches(&self, forms: &[String]) -> bool {
        forms.iter().any(|form| match self {
            TokenPattern::Exact(want) => {
                form == want
                    // `git log --outp=/tmp/x`: git accepts unambiguous abbreviations of long
                    // options, so a prefix of a denied long option is the denied option.
                    || (form.len() > 3 && form.starts_with("--") && !form.contains('=')
                        && want.starts_with("--") && want.starts_with(form.as_str()))
            }
            TokenPattern::Prefix(prefix) => form.to_ascii_lowercase().starts_with(prefix),
        })
    }
}

#[derive(Debug, Clone)]
struct CompiledRule {
    index: usize,
    command: String,
    deny_sets: Vec<(String, Vec<TokenPattern>)>,
    args_patterns: Vec<Regex>,
    executables: Vec<PathBuf>,
    reason: Option<String>,
    profile: Option<Profile>,
    /// `subcommand`: the rule is consulted only for this subcommand.
    subcommand: Option<String>,
    /// The allow form (`allow_options`, `max_operands`), if the rule has one.
    allow: Option<AllowForm>,
    /// What an agent hook answers when this rule lets a command through.
    hook: Option<HookDecision>,
}

#[derive(Debug, Clone)]
struct AllowForm {
    options: allow::OptionSpec,
    max_operands: Option<usize>,
    operand_patterns: Vec<Regex>,
}

impl CompiledRule {
    /// A refusal by this rule: its specific reason, then the rule's own reason if it has one.
    fn refuse(&self, program: &str, what: impl std::fmt::Display) -> Decision {
        let reason = match &self.reason {
            Some(why) => format!("{what}: {why}"),
            None => what.to_string(),
        };
        Decision::deny(program, format!("rules[{}]", self.index), reason)
    }
}

/// The compiled terminal policy.
#[derive(Debug, Clone)]
pub struct TerminalPolicy {
    allow: BTreeSet<String>,
    deny: BTreeSet<String>,
    rules: Vec<CompiledRule>,
    path_dirs: Vec<PathBuf>,
}

/// The forms under which an argument can match a deny token: itself, the name part of
/// `--flag=value`, and every flag of a short-flag cluster (`-fu` holds `-f` and `-u`).
pub(crate) fn token_forms(arg: &str) -> Vec<String> {
    let mut forms = vec![arg.to_string()];
    if let Some(long) = arg.strip_prefix("--") {
        if let Some((name, _value)) = long.split_once('=') {
            forms.push(format!("--{name}"));
        }
    } else if let Some(cluster) = arg.strip_prefix('-') {
        let cluster = cluster.split_once('=').map_or(cluster, |(name, _)| name);
        if cluster.chars().count() > 1 {
            for c in cluster.chars() {
                if c.is_ascii_alphanumeric() {
                    forms.push(format!("-{c}"));
                }
            }
        }
        if arg.contains('=') {
            forms.push(format!("-{cluster}"));
        }
    }
    forms
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

impl TerminalPolicy {
    /// Compile the `[terminal]` section and check every rule against its own examples.
    pub fn new(settings: &TerminalSettings) -> Result<Self, PolicyError> {
        let mut rules = Vec::new();
        for (index, rule) in settings.rules.iter().enumerate() {
            if rule.command.is_empty() || rule.command.contains('/') {
                return Err(PolicyError::BadRule {
                    index,
                    command: rule.command.clone(),
                    message: "command must be a bare program name".into(),
                });
            }
            let mut deny_sets = Vec::new();
            for entry in &rule.deny_args {
                let tokens: Vec<TokenPattern> =
                    entry.split_whitespace().map(TokenPattern::parse).collect();
                if tokens.is_empty() {
                    return Err(PolicyError::BadRule {
                        index,
                        command: rule.command.clone(),
                        message: "deny_args holds an empty entry".into(),
                    });
                }
                deny_sets.push((entry.clone(), tokens));
            }
            let mut args_patterns = Vec::new();
            for pattern in &rule.args_patterns {
                let re = whole_match(pattern).map_err(|e| PolicyError::BadPattern {
                    index,
                    command: rule.command.clone(),
                    pattern: pattern.clone(),
                    message: e.to_string(),
                })?;
                args_patterns.push(re);
            }
            let executables = rule
                .executable
                .as_ref()
                .map(|e| e.to_vec())
                .unwrap_or_default();
            let mut pinned = Vec::new();
            for exe in executables {
                let path = PathBuf::from(&exe);
                if !path.is_absolute() {
                    return Err(PolicyError::BadRule {
                        index,
                        command: rule.command.clone(),
                        message: format!("executable '{exe}' must be an absolute path"),
                    });
                }
                pinned.push(path);
            }
            let allow = compile_allow_form(index, rule, &rules)?;
            rules.push(CompiledRule {
                index,
                command: rule.command.clone(),
                deny_sets,
                args_patterns,
                executables: pinned,
                reason: rule.reason.clone(),
                profile: rule.profile,
                subcommand: rule.subcommand.clone(),
                allow,
                hook: rule.hook,
            });
        }
        let policy = TerminalPolicy {
            allow: settings.allowlist.commands.iter().cloned().collect(),
            deny: settings.denylist.commands.iter().cloned().collect(),
            rules,
            path_dirs: settings.path().split(':').map(PathBuf::from).collect(),
        };
        policy.check_examples(settings)?;
        Ok(policy)
    }

    /// Policies test themselves: every `examples_allow` must be allowed and every
    /// `examples_deny` denied by the same engine that enforces them.
    fn check_examples(&self, settings: &TerminalSettings) -> Result<(), PolicyError> {
        for (index, rule) in settings.rules.iter().enumerate() {
            let cases = rule
                .examples_allow
                .iter()
                .map(|e| (e, true))
                .chain(rule.examples_deny.iter().map(|e| (e, false)));
            for (example, want_allowed) in cases {
                let actual = match parse_command(example) {
                    Ok(argv) => {
                        let d = self.evaluate_argv(&argv);
                        (d.allowed, d.reason)
                    }
                    Err(e) => (false, e.to_string()),
                };
                if actual.0 != want_allowed {
                    return Err(PolicyError::ExampleMismatch {
                        index,
                        command: rule.command.clone(),
                        example: example.clone(),
                        expected: if want_allowed { "allowed" } else { "denied" },
                        actual: format!(
                            "{} ({})",
                            if actual.0 { "allowed" } else { "denied" },
                            actual.1
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Stage one: judge the program name and the arguments. Deny wins over allow.
    pub fn evaluate_argv(&self, argv: &[String]) -> Decision {
        let Some(first) = argv.first() else {
            return Decision::deny("", "default-deny", "command is empty");
        };
        let program = basename(first);
        // `/bin/rm`, `./rm` and `rm` are the same program to the denylist.
        if program.is_empty() || program == "." || program == ".." {
            return Decision::deny(
                program,
                "default-deny",
                format!("'{first}' is not a program name"),
            );
        }
        if self.deny.contains(program) {
            return Decision::deny(
                program,
                "denylist",
                format!("'{program}' is on the denylist"),
            );
        }
        if !self.allow.contains(program) {
            return Decision::deny(
                program,
                "default-deny",
                format!("'{program}' is not on the allowlist"),
            );
        }
        let args = argv.get(1..).unwrap_or_default();
        let forms: Vec<String> = args.iter().flat_map(|a| token_forms(a)).collect();
        let mine: Vec<&CompiledRule> = self.rules.iter().filter(|r| r.command == program).collect();
        // A program with subcommand rules (`git`): its global options come first, and the
        // first operand is the subcommand. `git -c core.pager=sh log` is refused here.
        let with_subcommands = mine.iter().any(|r| r.subcommand.is_some());
        let global = mine
            .iter()
            .find(|r| r.subcommand.is_none() && r.allow.is_some());
        let mut subcommand: Option<(usize, &str)> = None;
        // Reported after the deny entries, so that a deny still reports its own reason.
        let mut global_refusal = None;
        if with_subcommands {
            let empty = allow::OptionSpec::default();
            let spec = global
                .and_then(|r| r.allow.as_ref())
                .map_or(&empty, |a| &a.options);
            let judge = global
                .or_else(|| mine.iter().find(|r| r.subcommand.is_some()))
                .copied();
            match allow::walk(spec, args, &format!("'{program}'"), true) {
                Ok(walk) => {
                    subcommand = walk
                        .operands
                        .first()
                        .and_then(|&i| args.get(i).map(|s| (i, s.as_str())));
                }
                Err(what) => {
                    global_refusal = Some(match judge {
                        Some(rule) => rule.refuse(program, what),
                        None => Decision::deny(program, "default-deny", what.to_string()),
                    });
                }
            }
        }
        let applies = |r: &&&CompiledRule| match &r.subcommand {
            None => true,
            Some(sub) => subcommand.is_some_and(|(_, s)| s == sub),
        };
        let mut profile = None;
        let mut hook: Option<(HookDecision, usize)> = None;
        for rule in mine.iter().filter(applies) {
            if let Some(said) = rule.hook
                && hook.is_none_or(|(strictest, _)| said > strictest)
            {
                hook = Some((said, rule.index));
            }
            for (entry, tokens) in &rule.deny_sets {
                // Order-free: every token of the entry present anywhere in argv.
                if tokens.iter().all(|t| t.matches(&forms)) {
                    let reason = rule
                        .reason
                        .clone()
                        .unwrap_or_else(|| format!("'{program}' with '{entry}' is denied"));
                    return Decision::deny(program, format!("rules[{}]", rule.index), reason);
                }
            }
            if !rule.args_patterns.is_empty() {
                for arg in args {
                    if !rule.args_patterns.iter().any(|re| re.is_match(arg)) {
                        let reason = format!(
                            "argument '{arg}' of '{program}' matches none of rules[{}].args_patterns",
                            rule.index
                        );
                        return Decision::deny(program, format!("rules[{}]", rule.index), reason);
                    }
                }
            }
            if rule.profile.is_some() {
                profile = rule.profile;
            }
        }
        if let Some(refusal) = global_refusal {
            return refusal;
        }
        // The allow form, after every deny: deny wins and reports its own reason.
        let judged = if with_subcommands {
            match subcommand {
                Some((at, sub)) => {
                    let Some(rule) = mine.iter().find(|r| r.subcommand.as_deref() == Some(sub))
                    else {
                        let what = format!("subcommand '{sub}' of '{program}' is not allowed");
                        return match global.or_else(|| mine.first()) {
                            Some(rule) => rule.refuse(program, what),
                            None => Decision::deny(program, "default-deny", what.to_string()),
                        };
                    };
                    Some((
                        *rule,
                        args.get(at + 1..).unwrap_or_default(),
                        format!("'{program} {sub}'"),
                    ))
                }
                None => None,
            }
        } else {
            global.map(|r| (*r, args, format!("'{program}'")))
        };
        if let Some((rule, rest, who)) = judged
            && let Some(form) = &rule.allow
        {
            match allow::walk(&form.options, rest, &who, false) {
                Err(what) => return rule.refuse(program, what),
                Ok(walk) => {
                    if let Some(max) = form.max_operands
                        && let Some(&extra) = walk.operands.get(max)
                    {
                        let extra = rest.get(extra).map_or("", String::as_str);
                        let what = format!(
                            "{who} may take at most {max} operand{}; '{extra}' is one too many",
                            if max == 1 { "" } else { "s" }
                        );
                        return rule.refuse(program, what);
                    }
                    if !form.operand_patterns.is_empty()
                        && let Some(bad) = walk
                            .operands
                            .iter()
                            .filter_map(|&i| rest.get(i))
                            .find(|op| !form.operand_patterns.iter().any(|re| re.is_match(op)))
                    {
                        let what = format!(
                            "operand '{bad}' of {who} matches none of rules[{}].operand_patterns",
                            rule.index
                        );
                        return rule.refuse(program, what);
                    }
                }
            }
        }
        Decision {
            allowed: true,
            code: ResultCode::Ok,
            reason: format!("'{program}' is allowed"),
            decided_by: "allowlist".into(),
            program: program.to_string(),
            profile,
            hook,
        }
    }

    /// Look `name` up on the policy's PATH, as `execve` through that PATH would.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        self.path_dirs
            .iter()
            .map(|d| d.join(name))
            .find(|p| is_executable_file(p))
    }

    /// Stage two: find the file that would run. A path form (`/bin/ls`, `./ls`) must be the
    /// same file as the bare name on PATH: a look-alike `./ls` in the jail is not `ls`.
    /// A pinned `executable` must match. `cwd` is the folder a relative path form is taken from.
    pub(crate) fn resolve_program(&self, argv0: &str, cwd: &Path) -> Result<PathBuf, Decision> {
        let program = basename(argv0);
        let on_path = self.which(program).ok_or_else(|| Decision {
            allowed: false,
            code: ResultCode::OperationFailed,
            reason: format!(
                "'{program}' is allowed but was not found in any folder of the command PATH \
                 ([terminal] path)"
            ),
            decided_by: "executable".into(),
            program: program.to_string(),
            profile: None,
            hook: None,
        })?;
        let on_path_real = on_path.canonicalize().unwrap_or_else(|_| on_path.clone());
        let chosen = if argv0.contains('/') {
            let given = if Path::new(argv0).is_absolute() {
                PathBuf::from(argv0)
            } else {
                cwd.join(argv0)
            };
            let given_real = given.canonicalize().ok();
            if given_real.as_deref() != Some(on_path_real.as_path()) {
                return Err(Decision::deny(
                    program,
                    "executable",
                    format!(
                        "'{argv0}' is not the '{program}' found on PATH ({}): a program named \
                         by a path must be the very file its name finds on PATH, so a \
                         look-alike cannot stand in for an allowed program",
                        on_path.display()
                    ),
                ));
            }
            on_path_real.clone()
        } else {
            on_path_real.clone()
        };
        for rule in self.rules.iter().filter(|r| r.command == program) {
            if rule.executables.is_empty() {
                continue;
            }
            let pinned = rule
                .executables
                .iter()
                .any(|p| p.canonicalize().ok().as_deref() == Some(chosen.as_path()));
            if !pinned {
                return Err(Decision::deny(
                    program,
                    format!("rules[{}]", rule.index),
                    format!(
                        "'{program}' resolves to '{}', which is not one of the executables \
                         rules[{}] pins it to, so it is not run",
                        chosen.display(),
                        rule.index
                    ),
                ));
            }
        }
        Ok(chosen)
    }
}

/// Compile a rule's allow form and check it is well formed; `earlier` are the rules before it.
fn compile_allow_form(
    index: usize,
    rule: &crate::config::CommandRule,
    earlier: &[CompiledRule],
) -> Result<Option<AllowForm>, PolicyError> {
    let bad = |message: String| PolicyError::BadRule {
        index,
        command: rule.command.clone(),
        message,
    };
    let Some(options) = &rule.allow_options else {
        if rule.subcommand.is_some() {
            return Err(bad(
                "subcommand needs allow_options (use [] for none)".into()
            ));
        }
        if rule.max_operands.is_some() || !rule.operand_patterns.is_empty() {
            return Err(bad(
                "max_operands and operand_patterns need allow_options (use [] for none)".into(),
            ));
        }
        return Ok(None);
    };
    if let Some(sub) = &rule.subcommand
        && (sub.is_empty() || sub.starts_with('-') || sub.contains(char::is_whitespace))
    {
        return Err(bad(format!("subcommand '{sub}' is not a subcommand name")));
    }
    // One allow form per program and subcommand: two would leave open which one holds.
    if let Some(twin) = earlier
        .iter()
        .find(|r| r.command == rule.command && r.subcommand == rule.subcommand && r.allow.is_some())
    {
        return Err(bad(format!(
            "a second allow form for the same {}(the first is rules[{}])",
            rule.subcommand
                .as_ref()
                .map_or(String::new(), |s| format!("subcommand '{s}' ")),
            twin.index
        )));
    }
    // A rule that says what it allows proves it: an allow form without examples is unchecked.
    if rule.examples_allow.is_empty() && rule.examples_deny.is_empty() {
        return Err(bad(
            "an allow form (allow_options) needs at least one examples_allow or examples_deny"
                .into(),
        ));
    }
    let options = allow::OptionSpec::parse(options).map_err(|e| bad(e.to_string()))?;
    let mut operand_patterns = Vec::new();
    for pattern in &rule.operand_patterns {
        let re = whole_match(pattern).map_err(|e| PolicyError::BadPattern {
            index,
            command: rule.command.clone(),
            pattern: pattern.clone(),
            message: e.to_string(),
        })?;
        operand_patterns.push(re);
    }
    Ok(Some(AllowForm {
        options,
        max_operands: rule.max_operands,
        operand_patterns,
    }))
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The compiled size limit of one operator pattern: a pattern that needs more is refused,
/// so no entry can make matching slow or large (Rust `regex` never backtracks).
pub(crate) const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// An operator's argument pattern, anchored: an argument must match the whole pattern, not
/// merely contain a match. Shared by `args_patterns`, `operand_patterns` and the guard's
/// tool entries.
pub(crate) fn whole_match(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandList, CommandRule, OneOrMany};

    fn settings(rules: Vec<CommandRule>) -> TerminalSettings {
        TerminalSettings {
            allowlist: CommandList {
                commands: vec!["ls".into(), "cat".into(), "git".into(), "echo".into()],
            },
            denylist: CommandList {
                commands: vec!["rm".into()],
            },
            rules,
            ..Default::default()
        }
    }

    fn rule(command: &str, deny: &[&str]) -> CommandRule {
        CommandRule {
            command: command.into(),
            deny_args: deny.iter().map(|s| s.to_string()).collect(),
            args_patterns: vec![],
            executable: None,
            reason: Some("nope".into()),
            examples_allow: vec![],
            examples_deny: vec![],
            profile: None,
            subcommand: None,
            allow_options: None,
            max_operands: None,
            operand_patterns: vec![],
            hook: None,
        }
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn reasons_are_exact() {
        let p = TerminalPolicy::new(&settings(vec![])).unwrap();
        assert_eq!(p.evaluate_argv(&argv("cat x")).reason, "'cat' is allowed");
        assert_eq!(
            p.evaluate_argv(&argv("rm -rf /")).reason,
            "'rm' is on the denylist"
        );
        assert_eq!(
            p.evaluate_argv(&argv("python x")).reason,
            "'python' is not on the allowlist"
        );
    }

    #[test]
    fn path_form_is_judged_by_basename() {
        let p = TerminalPolicy::new(&settings(vec![])).unwrap();
        assert_eq!(
            p.evaluate_argv(&argv("/bin/rm -rf /")).reason,
            "'rm' is on the denylist"
        );
        assert_eq!(
            p.evaluate_argv(&argv("../x/rm a")).reason,
            "'rm' is on the denylist"
        );
    }

    #[test]
    fn deny_rule_matches_reordered_flags() {
        let p = TerminalPolicy::new(&settings(vec![rule("git", &["push --force"])])).unwrap();
        assert!(!p.evaluate_argv(&argv("git push --force")).allowed);
        assert!(!p.evaluate_argv(&argv("git --force push")).allowed);
        assert!(
            !p.evaluate_argv(&argv("git push origin main --force"))
                .allowed
        );
        assert!(p.evaluate_argv(&argv("git push origin main")).allowed);
        assert_eq!(p.evaluate_argv(&argv("git --force push")).reason, "nope");
    }

    #[test]
    fn deny_rule_matches_short_flag_clusters_and_flag_values() {
        let p =
            TerminalPolicy::new(&settings(vec![rule("git", &["push -f", "--output"])])).unwrap();
        assert!(!p.evaluate_argv(&argv("git push -fu origin")).allowed);
        assert!(!p.evaluate_argv(&argv("git log --output=/tmp/x")).allowed);
        // Abbreviated long option that git would accept.
        assert!(!p.evaluate_argv(&argv("git log --outp=/tmp/x")).allowed);
        assert!(p.evaluate_argv(&argv("git log --oneline")).allowed);
    }

    #[test]
    fn prefix_tokens_are_case_insensitive() {
        let p = TerminalPolicy::new(&settings(vec![rule("git", &["config core.*"])])).unwrap();
        assert!(!p.evaluate_argv(&argv("git config Core.Pager sh")).allowed);
        assert!(
            !p.evaluate_argv(&argv("git config core.fsmonitor x"))
                .allowed
        );
        assert!(p.evaluate_argv(&argv("git config user.name x")).allowed);
    }

    #[test]
    fn deny_wins_over_allow() {
        let mut s = settings(vec![]);
        s.denylist.commands.push("cat".into());
        let p = TerminalPolicy::new(&s).unwrap();
        assert_eq!(
            p.evaluate_argv(&argv("cat x")).reason,
            "'cat' is on the denylist"
        );
    }

    #[test]
    fn args_patterns_must_match_every_argument() {
        let mut r = rule("ls", &[]);
        r.args_patterns = vec!["-[la]+".into(), "[a-z]+".into()];
        let p = TerminalPolicy::new(&settings(vec![r])).unwrap();
        assert!(p.evaluate_argv(&argv("ls -la src")).allowed);
        assert!(!p.evaluate_argv(&argv("ls -R src")).allowed);
        // Anchored: a pattern contained in the argument is not enough.
        assert!(!p.evaluate_argv(&argv("ls src/../x")).allowed);
    }

    #[test]
    fn examples_that_disagree_are_fatal() {
        let mut r = rule("git", &["push --force"]);
        r.examples_deny = vec!["git push origin".into()];
        let err = TerminalPolicy::new(&settings(vec![r])).unwrap_err();
        assert!(
            err.to_string()
                .contains("example 'git push origin' should be denied"),
            "{err}"
        );
        let mut r = rule("git", &["push --force"]);
        r.examples_allow = vec!["git push --force".into()];
        assert!(TerminalPolicy::new(&settings(vec![r])).is_err());
    }

    #[test]
    fn path_form_must_resolve_to_the_path_program() {
        let p = TerminalPolicy::new(&settings(vec![])).unwrap();
        let ls = p.which("ls").expect("ls on PATH");
        assert!(
            p.resolve_program(ls.to_str().unwrap(), Path::new("/"))
                .is_ok()
        );
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("ls");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let d = p.resolve_program("./ls", dir.path()).unwrap_err();
        assert_eq!(d.code, ResultCode::PolicyDenied);
        assert!(
            d.reason
                .starts_with("'./ls' is not the 'ls' found on PATH (")
                && d.reason.ends_with(
                    "): a program named by a path must be the very file its name finds on \
                     PATH, so a look-alike cannot stand in for an allowed program"
                ),
            "{}",
            d.reason
        );
    }

    #[test]
    fn pinned_executable_refuses_other_files() {
        let mut r = rule("ls", &[]);
        r.executable = Some(OneOrMany::One("/nonexistent/ls".into()));
        let p = TerminalPolicy::new(&settings(vec![r])).unwrap();
        let d = p.resolve_program("ls", Path::new("/")).unwrap_err();
        assert!(
            d.reason.ends_with(
                "which is not one of the executables rules[0] pins it to, so it is not run"
            ),
            "{}",
            d.reason
        );
        let mut r = rule("ls", &[]);
        let real = p.which("ls").unwrap();
        r.executable = Some(OneOrMany::Many(vec![real.to_string_lossy().into()]));
        let p = TerminalPolicy::new(&settings(vec![r])).unwrap();
        assert!(p.resolve_program("ls", Path::new("/")).is_ok());
    }
}
