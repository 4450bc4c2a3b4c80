//! The allow form of an argument rule (docs/policy.md): the options a program (or one of its
//! subcommands) may take, and how many operands. Anything else is refused with a reason
//! naming the argument. A list of bad options is always one short
//! (`sort --compress-program`, `git grep --open-files-in-pager`); a list of good ones is not.
//!
//! The walk models GNU getopt and git's parse-options, the stricter reading where they differ:
//! - every argument starting with `-` is an option, wherever it stands (GNU permutes), until `--`;
//! - `-rn` is `-r -n`; in a cluster, an option that takes a value takes the rest (`-ofile`);
//! - `--key=v` and `--key v` are the same; a value option takes the next argument whatever it is,
//!   as getopt does (`sort -k -o` gives `-o` to `-k`), but a detached value that starts with `-`
//!   is refused (unless a negative number): if the spec is wrong about the option taking a value,
//!   the program would read that `-o` as an option;
//! - a long option must be named exactly: getopt and git accept unambiguous abbreviations
//!   (`--outp` is `--output`), and only the program knows all its options, so a prefix of an
//!   allowed option is not taken for it and is refused with every other unknown name.

use std::collections::{BTreeMap, BTreeSet};

/// How a short option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShortKind {
    /// `-r`.
    Flag,
    /// `-k VALUE`: the rest of the cluster, or the next argument.
    Required,
    /// `-M[VALUE]`: the rest of the cluster, possibly empty; never the next argument.
    Optional,
}

/// What a long option may look like.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct LongSpec {
    /// `--name` alone, taking no value.
    flag: bool,
    /// `--name=VALUE` or `--name VALUE`.
    required: bool,
    /// `--name[=VALUE]`: `--name` or `--name=v`, never the next argument.
    optional: bool,
    /// `--name=literal`: exactly these values.
    literals: BTreeSet<String>,
}

/// The compiled `allow_options` of one rule.
#[derive(Debug, Clone, Default)]
pub(crate) struct OptionSpec {
    shorts: BTreeMap<char, ShortKind>,
    longs: BTreeMap<String, LongSpec>,
    /// `-NUM`: an argument of `-` and digits only (`head -5`, `git log -3`).
    numeric: bool,
}

const VALUE: &str = "VALUE";

/// An `allow_options` entry that cannot be read (a start-up error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("allow_options entry '{entry}': {problem}")]
pub(crate) struct SpecError {
    /// The entry as written.
    entry: String,
    /// What is wrong with it.
    problem: SpecProblem,
}

/// What is wrong with an `allow_options` entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum SpecProblem {
    #[error("an option starts with '-' or '--'")]
    NoDash,
    #[error("'-' alone is an operand, not an option")]
    LoneDash,
    #[error("'{0}' is not a short option letter")]
    ShortLetter(char),
    #[error("a short option is '-x', '-x VALUE' or '-x[VALUE]' (one letter each)")]
    ShortForm,
    #[error("'-{0}' is listed twice, differently")]
    ShortTwice(char),
    #[error("a fixed value is one word")]
    FixedValue,
    #[error("'--{0}' is not a long option name")]
    LongName(String),
    #[error("'--{0}' takes a value (VALUE) and is also listed without one or with a fixed one")]
    ValueAndNot(String),
}

/// Why an argv does not fit an allow form: the specific part of a refusal's reason (the
/// rule's own `reason` is added after it). `who` names the program (`'sort'`, `'git log'`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("'--' before the subcommand of {who} is not allowed")]
    DashDashBeforeSubcommand { who: String },
    #[error("option '{option}' of {who} needs a value")]
    NeedsValue { option: String, who: String },
    #[error(
        "option '{option}' of {who} is given '{value}' as its value, which looks like an option; \
         attach the value ('{option}=...' or '-x...') if that is meant"
    )]
    ValueLooksLikeOption {
        option: String,
        who: String,
        value: String,
    },
    /// `shown`: the long option as given, `--name` or `--name=value`.
    #[error("option '{shown}' is not allowed for {who}")]
    LongNotAllowed { shown: String, who: String },
    #[error(
        "option '--{name}' of {who} is allowed only as {}",
        only_as(name, literals)
    )]
    OnlyLiterals {
        name: String,
        who: String,
        literals: Vec<String>,
    },
    #[error("option '-{letter}'{} is not allowed for {who}", in_cluster(cluster))]
    ShortNotAllowed {
        letter: char,
        /// The whole cluster, when the letter stood in one with others (`-rx`).
        cluster: Option<String>,
        who: String,
    },
}

fn only_as(name: &str, literals: &[String]) -> String {
    literals
        .iter()
        .map(|l| format!("'--{name}={l}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn in_cluster(cluster: &Option<String>) -> String {
    cluster
        .as_ref()
        .map_or(String::new(), |arg| format!(" (in '{arg}')"))
}

fn valid_long_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn valid_short(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '@' || c == '?'
}

impl OptionSpec {
    /// Compile option specs; the error names the spec that cannot be read.
    pub(crate) fn parse(specs: &[String]) -> Result<Self, SpecError> {
        let mut spec = OptionSpec::default();
        for raw in specs {
            spec.add(raw).map_err(|problem| SpecError {
                entry: raw.clone(),
                problem,
            })?;
        }
        Ok(spec)
    }

    fn add(&mut self, raw: &str) -> Result<(), SpecProblem> {
        if raw == "-NUM" {
            self.numeric = true;
            return Ok(());
        }
        if let Some(long) = raw.strip_prefix("--") {
            return self.add_long(long);
        }
        let Some(short) = raw.strip_prefix('-') else {
            return Err(SpecProblem::NoDash);
        };
        let mut chars = short.chars();
        let (Some(c), rest) = (chars.next(), chars.as_str()) else {
            return Err(SpecProblem::LoneDash);
        };
        if !valid_short(c) {
            return Err(SpecProblem::ShortLetter(c));
        }
        let kind = match rest {
            "" => ShortKind::Flag,
            " VALUE" => ShortKind::Required,
            "[VALUE]" => ShortKind::Optional,
            _ => return Err(SpecProblem::ShortForm),
        };
        match self.shorts.insert(c, kind) {
            Some(old) if old != kind => Err(SpecProblem::ShortTwice(c)),
            _ => Ok(()),
        }
    }

    fn add_long(&mut self, long: &str) -> Result<(), SpecProblem> {
        let (name, how) = if let Some(name) = long.strip_suffix("[=VALUE]") {
            (name, "optional")
        } else if let Some((name, value)) = long.split_once('=') {
            if value == VALUE {
                (name, "required")
            } else if value.is_empty() || value.contains(char::is_whitespace) {
                return Err(SpecProblem::FixedValue);
            } else {
                let entry = self.longs.entry(name.to_string()).or_default();
                entry.literals.insert(value.to_string());
                (name, "literal")
            }
        } else if let Some(name) = long.strip_suffix(" VALUE") {
            (name, "required")
        } else {
            (long, "flag")
        };
        if !valid_long_name(name) {
            return Err(SpecProblem::LongName(name.to_string()));
        }
        let entry = self.longs.entry(name.to_string()).or_default();
        match how {
            "optional" => entry.optional = true,
            "required" => entry.required = true,
            "flag" => entry.flag = true,
            _ => {}
        }
        // `--name` would be read two ways: alone, or taking the next argument as its value.
        if entry.required && (entry.flag || entry.optional || !entry.literals.is_empty()) {
            return Err(SpecProblem::ValueAndNot(name.to_string()));
        }
        Ok(())
    }
}

/// The result of a walk over arguments.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// Indices (into the walked slice) of the operands.
    pub(crate) operands: Vec<usize>,
}

/// Walk `args` under `spec`. `who` names the program in reasons (`'sort'`, `'git log'`).
/// With `stop_at_operand`, the walk ends at the first operand (a subcommand): git stops reading
/// its global options there, and `--` before a subcommand is refused.
pub(crate) fn walk(
    spec: &OptionSpec,
    args: &[String],
    who: &str,
    stop_at_operand: bool,
) -> Result<Walk, Refusal> {
    let mut out = Walk::default();
    let mut i = 0;
    let mut options_end = false;
    while let Some(arg) = args.get(i) {
        if options_end || arg == "-" || !arg.starts_with('-') {
            out.operands.push(i);
            if stop_at_operand {
                return Ok(out);
            }
            i += 1;
            continue;
        }
        if arg == "--" {
            if stop_at_operand {
                return Err(Refusal::DashDashBeforeSubcommand {
                    who: who.to_string(),
                });
            }
            // `--` ends the options: what follows is operands only (`grep -- -o file`).
            options_end = true;
            i += 1;
            continue;
        }
        let consumed_next = if let Some(long) = arg.strip_prefix("--") {
            long_option(spec, long, args.get(i + 1), who)?
        } else if spec.numeric && arg.len() > 1 && arg.bytes().skip(1).all(|b| b.is_ascii_digit()) {
            false
        } else {
            short_cluster(spec, arg, args.get(i + 1), who)?
        };
        i += if consumed_next { 2 } else { 1 };
    }
    Ok(out)
}

/// A negative number (`head -n -5`) is a value, not an option.
fn is_negative_number(s: &str) -> bool {
    s.len() > 1
        && s.strip_prefix('-')
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
}

/// The next argument as an option's value. `sort -k -o x`: getopt gives `-o` to `-k`, but a
/// spec that wrongly says `-k` takes a value would then hide `-o`, so such a value is refused.
fn detached_value(option: &str, next: Option<&String>, who: &str) -> Result<(), Refusal> {
    match next {
        None => Err(Refusal::NeedsValue {
            option: option.to_string(),
            who: who.to_string(),
        }),
        Some(v) if v.starts_with('-') && v != "-" && !is_negative_number(v) => {
            Err(Refusal::ValueLooksLikeOption {
                option: option.to_string(),
                who: who.to_string(),
                value: v.clone(),
            })
        }
        Some(_) => Ok(()),
    }
}

fn long_option(
    spec: &OptionSpec,
    long: &str,
    next: Option<&String>,
    who: &str,
) -> Result<bool, Refusal> {
    let (name, value) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let not_allowed = || Refusal::LongNotAllowed {
        shown: format!("--{long}"),
        who: who.to_string(),
    };
    // Exact names only: `--outp` (git's and getopt's abbreviation of `--output`) is refused
    // here because no spec is named `outp`, even when an allowed option starts with it.
    let Some(entry) = spec.longs.get(name) else {
        return Err(not_allowed());
    };
    match value {
        None if entry.required => {
            detached_value(&format!("--{name}"), next, who)?;
            Ok(true)
        }
        None if entry.flag || entry.optional => Ok(false),
        None => Err(Refusal::OnlyLiterals {
            name: name.to_string(),
            who: who.to_string(),
            literals: entry.literals.iter().cloned().collect(),
        }),
        Some(_) if entry.required || entry.optional => Ok(false),
        Some(v) if entry.literals.contains(v) => Ok(false),
        Some(_) => Err(not_allowed()),
    }
}

fn short_cluster(
    spec: &OptionSpec,
    arg: &str,
    next: Option<&String>,
    who: &str,
) -> Result<bool, Refusal> {
    let cluster = arg.strip_prefix('-').unwrap_or(arg);
    for (at, c) in cluster.char_indices() {
        let Some(kind) = spec.shorts.get(&c) else {
            return Err(Refusal::ShortNotAllowed {
                letter: c,
                cluster: (cluster.chars().count() > 1).then(|| arg.to_string()),
                who: who.to_string(),
            });
        };
        let rest = cluster.get(at + c.len_utf8()..).unwrap_or("");
        match kind {
            ShortKind::Flag => {}
            // `-ofile`, `-k2`, `-M50%`: the rest of the cluster is the value.
            ShortKind::Optional => return Ok(false),
            ShortKind::Required if !rest.is_empty() => return Ok(false),
            ShortKind::Required => {
                detached_value(&format!("-{c}"), next, who)?;
                return Ok(true);
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(specs: &[&str]) -> OptionSpec {
        OptionSpec::parse(&specs.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn run(spec: &OptionSpec, line: &str) -> Result<usize, Refusal> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        walk(spec, &args, "'t'", false).map(|w| w.operands.len())
    }

    #[test]
    fn bad_specs_are_refused() {
        for bad in [
            "r",
            "-",
            "-ab",
            "-k FOO",
            "--",
            "--=VALUE",
            "--x=",
            "--a b c",
            "-k VALUE extra",
        ] {
            assert!(
                OptionSpec::parse(&[bad.to_string()]).is_err(),
                "{bad} should be refused"
            );
        }
        let both = ["--key=VALUE".to_string(), "--key".to_string()];
        assert!(OptionSpec::parse(&both).is_err());
    }

    #[test]
    fn operands_are_counted_and_dash_is_an_operand() {
        let s = spec(&["-r"]);
        assert_eq!(run(&s, "a - b"), Ok(3));
        assert_eq!(run(&s, "-r a -- -o"), Ok(2));
    }

    #[test]
    fn negative_numbers_are_values() {
        let s = spec(&["-n VALUE"]);
        assert!(run(&s, "-n -5 f").is_ok());
        assert!(run(&s, "-n -x f").is_err());
    }
}
