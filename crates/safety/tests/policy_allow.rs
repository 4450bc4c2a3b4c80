//! The allow form of argument rules (`allow_options`, `subcommand`, `max_operands`,
//! `operand_patterns`) and the shipped policies that use it.

use std::path::Path;

use safety::config::{PolicyFile, TerminalSettings};
use safety::parse::parse_command;
use safety::policy::{Decision, PolicyError, TerminalPolicy};

fn terminal(toml_text: &str) -> TerminalSettings {
    let file: PolicyFile = toml::from_str(toml_text).unwrap();
    file.terminal
}

/// A policy with `rules` appended to an allowlist of the programs these tests use.
fn policy(rules: &str) -> Result<TerminalPolicy, PolicyError> {
    let text = format!(
        "[terminal.allowlist]\ncommands = [\"sort\", \"uniq\", \"git\", \"grep\", \"head\", \"date\"]\n{rules}"
    );
    TerminalPolicy::new(&terminal(&text))
}

fn judge(p: &TerminalPolicy, command: &str) -> Decision {
    p.evaluate_argv(&parse_command(command).unwrap())
}

#[track_caller]
fn allowed(p: &TerminalPolicy, command: &str) {
    let d = judge(p, command);
    assert!(d.allowed, "{command} should be allowed: {}", d.reason);
}

/// Denied, with a reason holding `names` (the offending argument).
#[track_caller]
fn denied(p: &TerminalPolicy, command: &str, names: &str) {
    let d = judge(p, command);
    assert!(!d.allowed, "{command} should be denied");
    assert!(
        d.reason.contains(names),
        "{command}: reason '{}' should name '{names}'",
        d.reason
    );
}

const SORT: &str = r#"
[[terminal.rules]]
command = "sort"
allow_options = ["-r", "--reverse", "-n", "-k VALUE", "--key=VALUE", "-t VALUE", "--check", "--check=quiet", "-M[VALUE]"]
examples_allow = ["sort x"]
"#;

#[test]
fn short_clusters_are_each_option() {
    let p = policy(SORT).unwrap();
    allowed(&p, "sort -rn f");
    allowed(&p, "sort -nr f");
    denied(
        &p,
        "sort -rno x f",
        "option '-o' (in '-rno') is not allowed for 'sort'",
    );
    // `-ofile` is `-o` with an attached value.
    denied(&p, "sort -ofile f", "option '-o' (in '-ofile')");
    // A value option takes the rest of the cluster: `-rk2` is `-r -k 2`, `-k2r` is `-k 2r`.
    allowed(&p, "sort -rk2 f");
    allowed(&p, "sort -k2o f");
    // An optional-value short takes only what is attached.
    allowed(&p, "sort -M f");
    allowed(&p, "sort -M50 f");
}

#[test]
fn long_values_attached_or_next() {
    let p = policy(SORT).unwrap();
    allowed(&p, "sort --key=2 f");
    allowed(&p, "sort --key 2 f");
    allowed(&p, "sort -k 2 f");
    allowed(&p, "sort -k2 f");
    denied(&p, "sort --key", "option '--key' of 'sort' needs a value");
    denied(
        &p,
        "sort --compress-program=sh -S 1K f",
        "option '--compress-program=sh' is not allowed for 'sort'",
    );
    // A flag given a value is not the flag.
    denied(&p, "sort --reverse=x f", "option '--reverse=x'");
    // Fixed values: `--check` and `--check=quiet` only.
    allowed(&p, "sort --check f");
    allowed(&p, "sort --check=quiet f");
    denied(&p, "sort --check=other f", "option '--check=other'");
}

#[test]
fn a_value_that_looks_like_an_option_is_refused() {
    let p = policy(SORT).unwrap();
    // getopt would give `-o` to `-k`; a spec wrong about `-k` would let `-o` through.
    denied(&p, "sort -k -o x", "is given '-o' as its value");
    denied(&p, "sort --key -o x", "is given '-o' as its value");
    // The value consumed is skipped: `-t` takes `o`, then `-o` stands alone and is refused.
    denied(&p, "sort -t o -o x", "option '-o'");
    // `-` (stdin) and negative numbers are values.
    allowed(&p, "sort -t - f");
    let head = policy(
        r#"
[[terminal.rules]]
command = "head"
allow_options = ["-n VALUE", "-NUM"]
examples_allow = ["head -n -5 f", "head -5 f"]
"#,
    )
    .unwrap();
    allowed(&head, "head -n -5 f");
    denied(&head, "head -n -q f", "is given '-q' as its value");
    denied(&p, "sort -5 f", "option '-5'");
}

#[test]
fn long_options_must_be_named_exactly() {
    let p = policy(SORT).unwrap();
    allowed(&p, "sort --reverse f");
    // `--rev` is what getopt reads as `--reverse`, but only the program knows all its
    // options: a prefix is never taken for an allowed one.
    denied(&p, "sort --rev f", "option '--rev' is not allowed");
    // An abbreviation of a refused option is refused by name.
    denied(&p, "sort --out=x f", "option '--out=x'");
    denied(&p, "sort --comp=sh f", "option '--comp=sh'");
}

#[test]
fn double_dash_ends_options() {
    let p = policy(SORT).unwrap();
    // After `--` an operand may start with `-`: sort reads a file named `-o`.
    allowed(&p, "sort -r -- -o x");
    let uniq = policy(
        r#"
[[terminal.rules]]
command = "uniq"
allow_options = ["-c"]
max_operands = 1
examples_deny = ["uniq a b"]
"#,
    )
    .unwrap();
    allowed(&uniq, "uniq -c a");
    allowed(&uniq, "uniq");
    denied(&uniq, "uniq a .git/config", "'.git/config' is one too many");
    denied(&uniq, "uniq -- a b", "'b' is one too many");
    // Options anywhere are options (GNU permutes): `-x` after an operand is still checked.
    denied(&uniq, "uniq a -x", "option '-x'");
}

const GIT: &str = r#"
[[terminal.rules]]
command = "git"
allow_options = ["--no-pager", "--version"]
examples_allow = ["git --no-pager log"]

[[terminal.rules]]
command = "git"
subcommand = "log"
allow_options = ["--oneline", "-n VALUE", "-NUM", "--no-ext-diff", "--color=never"]
reason = "read only"
examples_allow = ["git log --oneline -n 5"]

[[terminal.rules]]
command = "git"
subcommand = "branch"
allow_options = ["-a", "-v"]
max_operands = 0
examples_deny = ["git branch x"]
"#;

#[test]
fn git_global_options_are_allow_listed() {
    let p = policy(GIT).unwrap();
    allowed(&p, "git --no-pager log --oneline");
    allowed(&p, "git --version");
    allowed(&p, "git log -3");
    for (attack, names) in [
        (
            "git -c core.pager=sh log",
            "option '-c' is not allowed for 'git'",
        ),
        ("git -C / log", "option '-C'"),
        ("git --git-dir=x log", "option '--git-dir=x'"),
        ("git --work-tree=x log", "option '--work-tree=x'"),
        ("git --exec-path=/tmp log", "option '--exec-path=/tmp'"),
        ("git -p log", "option '-p'"),
        ("git --paginate log", "option '--paginate'"),
        ("git --no-pag log", "option '--no-pag'"),
        ("git -- log", "'--' before the subcommand"),
    ] {
        denied(&p, attack, names);
    }
}

#[test]
fn git_subcommands_without_a_rule_are_refused() {
    let p = policy(GIT).unwrap();
    denied(
        &p,
        "git config core.fsmonitor x",
        "subcommand 'config' of 'git' is not allowed",
    );
    denied(&p, "git --no-pager push -f", "subcommand 'push'");
    // The subcommand's own options are its allow list, not the global one.
    denied(
        &p,
        "git log --no-pager",
        "option '--no-pager' is not allowed for 'git log'",
    );
    denied(
        &p,
        "git log --outp=/tmp/x",
        "option '--outp=/tmp/x' is not allowed for 'git log'",
    );
    denied(&p, "git log --ext-diff", "option '--ext-diff'");
    allowed(&p, "git log --no-ext-diff --color=never");
    denied(&p, "git log --color=always", "option '--color=always'");
    // The rule's reason follows the specific one.
    assert_eq!(
        judge(&p, "git log --ext-diff").reason,
        "option '--ext-diff' is not allowed for 'git log': read only"
    );
    allowed(&p, "git branch -av");
    denied(
        &p,
        "git branch evil",
        "'git branch' may take at most 0 operands; 'evil'",
    );
}

#[test]
fn deny_still_wins_over_an_allow_form() {
    let p = policy(
        r#"
[[terminal.rules]]
command = "sort"
allow_options = ["-r", "-n"]
args_patterns = ["-[a-z]+", "[a-z]+"]
examples_allow = ["sort -r x"]

[[terminal.rules]]
command = "sort"
deny_args = ["-n secret"]
reason = "no numeric sort of secret"
"#,
    )
    .unwrap();
    // The allow form would pass it; the deny entry refuses it, with its own reason.
    let d = judge(&p, "sort -rn secret");
    assert!(!d.allowed);
    assert_eq!(d.reason, "no numeric sort of secret");
    assert_eq!(d.decided_by, "rules[1]");
    // args_patterns still applies next to allow_options.
    denied(&p, "sort -r X1", "argument 'X1' of 'sort' matches none");
    // And the allow form refuses what no deny names.
    denied(&p, "sort -u x", "option '-u'");
    allowed(&p, "sort -rn other");
    // Also for a global option of a program with subcommands.
    let git = policy(&format!(
        "{GIT}\n[[terminal.rules]]\ncommand = \"git\"\ndeny_args = [\"-c\"]\nreason = \"git escape\"\n"
    ))
    .unwrap();
    assert_eq!(judge(&git, "git -c core.pager=sh log").reason, "git escape");
    denied(&git, "git -C / log", "option '-C' is not allowed for 'git'");
}

#[test]
fn operand_patterns_hold_every_operand() {
    let p = policy(
        r#"
[[terminal.rules]]
command = "date"
allow_options = ["-u", "-d VALUE"]
operand_patterns = ['\+.*']
examples_deny = ["date 0101"]
"#,
    )
    .unwrap();
    allowed(&p, "date -u -d tomorrow +%s");
    denied(
        &p,
        "date 010101012020",
        "operand '010101012020' of 'date' matches none of rules[0].operand_patterns",
    );
}

#[test]
fn allow_form_rules_are_checked_at_start_up() {
    let bad_rule = |rules: &str, want: &str| match policy(rules) {
        Err(e @ PolicyError::BadRule { .. }) => {
            assert!(e.to_string().contains(want), "{e} should say {want}")
        }
        other => panic!("{rules}: want BadRule '{want}', got {other:?}"),
    };
    bad_rule(
        "[[terminal.rules]]\ncommand = \"sort\"\nallow_options = [\"-r\"]\n",
        "terminal.rules[0] ('sort'): an allow form (allow_options) needs at least one",
    );
    bad_rule(
        "[[terminal.rules]]\ncommand = \"sort\"\nallow_options = [\"-k KEY\"]\nexamples_allow = [\"sort\"]\n",
        "terminal.rules[0] ('sort'): allow_options entry '-k KEY'",
    );
    bad_rule(
        "[[terminal.rules]]\ncommand = \"sort\"\nallow_options = [\"rn\"]\nexamples_allow = [\"sort\"]\n",
        "allow_options entry 'rn'",
    );
    bad_rule(
        "[[terminal.rules]]\ncommand = \"sort\"\nallow_options = [\"--key=VALUE\", \"--key\"]\nexamples_allow = [\"sort\"]\n",
        "'--key' takes a value",
    );
    bad_rule(
        "[[terminal.rules]]\ncommand = \"git\"\nsubcommand = \"log\"\ndeny_args = [\"-p\"]\n",
        "subcommand needs allow_options",
    );
    bad_rule(
        "[[terminal.rules]]\ncommand = \"uniq\"\nmax_operands = 1\n",
        "need allow_options",
    );
    bad_rule(
        "[[terminal.rules]]\ncommand = \"git\"\nsubcommand = \"-c\"\nallow_options = []\nexamples_allow = [\"git\"]\n",
        "subcommand '-c' is not a subcommand name",
    );
    bad_rule(
        &format!(
            "{GIT}\n[[terminal.rules]]\ncommand = \"git\"\nsubcommand = \"log\"\nallow_options = []\nexamples_allow = [\"git\"]\n"
        ),
        "terminal.rules[3] ('git'): a second allow form for the same subcommand 'log' (the first is rules[1])",
    );
    // Examples check allow forms too: an example the allow form refuses is fatal.
    let err = policy(
        "[[terminal.rules]]\ncommand = \"sort\"\nallow_options = [\"-r\"]\nexamples_allow = [\"sort -o x y\"]\n",
    )
    .unwrap_err();
    assert!(
        matches!(err, PolicyError::ExampleMismatch { .. })
            && err.to_string().contains("example 'sort -o x y' should be allowed but is denied (option '-o' is not allowed for 'sort')"),
        "{err}"
    );
    let err = policy(
        "[[terminal.rules]]\ncommand = \"sort\"\nallow_options = [\"-r\", \"-o VALUE\"]\nexamples_deny = [\"sort -o x y\"]\n",
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("should be denied but is allowed"),
        "{err}"
    );
}

fn shipped(name: &str) -> TerminalSettings {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    terminal(&std::fs::read_to_string(path).unwrap())
}

/// Options that run code or write a named file, and the option each reason must name.
const ATTACKS: &[(&str, &str)] = &[
    (
        "git grep --no-index '--open-files-in-pager=id;' x",
        "option '--open-files-in-pager=id;' is not allowed for 'git grep'",
    ),
    (
        "git grep --no-index --open-files-in-pager=id x",
        "'--open-files-in-pager=id'",
    ),
    ("git grep -Oid x", "option '-O' (in '-Oid')"),
    (
        "sort --compress-program=sh -S 1K x",
        "option '--compress-program=sh' is not allowed for 'sort'",
    ),
    (
        "sort -o .git/config x",
        "option '-o' is not allowed for 'sort'",
    ),
    ("uniq a .git/config", "'.git/config' is one too many"),
    (
        "git -c core.pager=sh log",
        "option '-c' is not allowed for 'git'",
    ),
    ("git --exec-path=/tmp log", "option '--exec-path=/tmp'"),
    ("git -C / status", "option '-C'"),
    ("git --git-dir=x log", "option '--git-dir=x'"),
    ("git --work-tree=x status", "option '--work-tree=x'"),
    ("git -p log", "option '-p'"),
    (
        "git config core.fsmonitor x",
        "subcommand 'config' of 'git'",
    ),
    (
        "git log --output=/tmp/x",
        "option '--output=/tmp/x' is not allowed for 'git log'",
    ),
    ("git log --outp=/tmp/x", "option '--outp=/tmp/x'"),
    (
        "git diff --ext-diff",
        "option '--ext-diff' is not allowed for 'git diff'",
    ),
    ("git diff --textconv", "option '--textconv'"),
    (
        "git diff --no-index --word-diff=color a b",
        "option '--word-diff=color'",
    ),
    (
        "grep --color=always key x",
        "option '--color=always' is not allowed for 'grep'",
    ),
    ("grep -D read x /dev/zero", "option '-D'"),
    (
        "date -s 2020-01-01",
        "option '-s' is not allowed for 'date'",
    ),
    ("date 010101012020", "operand '010101012020'"),
    ("diff -l a b", "option '-l' is not allowed for 'diff'"),
];

#[test]
fn shipped_policies_refuse_the_attacks_by_name() {
    for name in ["policy.example.toml", "policy.toml"] {
        let p = TerminalPolicy::new(&shipped(name)).unwrap();
        for (attack, names) in ATTACKS {
            denied(&p, attack, names);
        }
    }
}

#[test]
fn shipped_policies_allow_normal_read_only_use() {
    let p = TerminalPolicy::new(&shipped("policy.example.toml")).unwrap();
    for command in [
        "git status",
        "git log --oneline -n 5",
        "git diff HEAD~1",
        "git show --stat HEAD",
        "git branch -a",
        "git rev-parse --show-toplevel",
        "git ls-files",
        "git blame notes.txt",
        "git grep -n TODO",
        "git shortlog -sn HEAD",
        "git describe --tags --always",
        "git tag",
        "ls -la",
        "cat notes.txt",
        "wc -l notes.txt",
        "grep -n demo notes.txt",
        "sort notes.txt",
        "sort -rn -k2 notes.txt",
        "uniq -c notes.txt",
        "diff -u a b",
        "date +%Y",
        "du -sh .",
        "head -n 3 notes.txt",
        "echo hi",
    ] {
        let d = judge(&p, command);
        assert!(d.allowed, "{command}: {}", d.reason);
        // An allowed command keeps its exact documented reason (the demo prints it).
        assert_eq!(d.reason, format!("'{}' is allowed", d.program));
    }
}

#[test]
fn shipped_policies_have_the_same_terminal_rules() {
    let example = shipped("policy.example.toml");
    let production = shipped("policy.toml");
    assert_eq!(example.rules, production.rules);
    assert_eq!(example.allowlist, production.allowlist);
    assert_eq!(example.denylist, production.denylist);
    // Every program the shipped policies name in a rule is on their allowlist.
    for rule in &example.rules {
        assert!(
            example.allowlist.commands.contains(&rule.command),
            "{}",
            rule.command
        );
    }
}
