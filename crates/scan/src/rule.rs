//! The twelve rule ids (kept from mcp-stdio-shellguard), their severities and the fix we suggest.

use serde::Serialize;

/// How bad a finding is. Ordered: `Low < Medium < High < Critical`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[value(rename_all = "UPPER")]
pub enum Severity {
    /// Hygiene: a missing limit.
    Low,
    /// A literal program with caller-controlled arguments.
    Medium,
    /// A dynamic program, a shell switched on, or an OS-level process API.
    High,
    /// A shell command or code string built from data.
    Critical,
}

impl Severity {
    /// Upper-case name, as printed in reports.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Low => "LOW",
            Severity::Medium => "MEDIUM",
            Severity::High => "HIGH",
            Severity::Critical => "CRITICAL",
        }
    }

    /// One step up, capped at `Critical` (used for findings tainted by MCP tool input).
    /// One step down (a finding in test or development code), at least `LOW`.
    pub fn lowered(self) -> Severity {
        match self {
            Severity::Critical => Severity::High,
            Severity::High => Severity::Medium,
            Severity::Medium | Severity::Low => Severity::Low,
        }
    }

    /// One step up (a finding tainted by tool input), at most `CRITICAL`.
    pub fn raised(self) -> Severity {
        match self {
            Severity::Low => Severity::Medium,
            Severity::Medium => Severity::High,
            Severity::High | Severity::Critical => Severity::Critical,
        }
    }

    /// The severity named `name` (`LOW`, `MEDIUM`, `HIGH`, `CRITICAL`, exactly as
    /// [`Severity::name`] writes it).
    pub fn from_name(name: &str) -> Option<Severity> {
        [
            Severity::Low,
            Severity::Medium,
            Severity::High,
            Severity::Critical,
        ]
        .into_iter()
        .find(|severity| severity.name() == name)
    }

    /// SARIF `level` for this severity.
    pub fn sarif_level(self) -> &'static str {
        match self {
            Severity::Critical | Severity::High => "error",
            Severity::Medium => "warning",
            Severity::Low => "note",
        }
    }

    /// GitHub code scanning `security-severity` score (0.0–10.0) for this severity.
    pub fn security_severity(self) -> &'static str {
        match self {
            Severity::Critical => "9.5",
            Severity::High => "8.0",
            Severity::Medium => "5.5",
            Severity::Low => "3.0",
        }
    }
}

/// One of the twelve rules. The ids and base severities are the peer scanner's, so reports and
/// suppressions written for it keep working.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// A shell command built with interpolation (template literal, f-string, `format!`).
    ExecTemplateLiteralWithInput,
    /// A shell command that is any other non-literal.
    ExecDynamicString,
    /// `execSync` with a non-literal command.
    ExecSyncDynamicString,
    /// `eval` (JS) / `eval`/`exec` (Python).
    EvalNearChildProcess,
    /// `Function(...)` / `new Function(...)` (JS) / `compile(..., 'exec')` (Python).
    FunctionConstructorNearChildProcess,
    /// A process spawned with a non-literal executable.
    SpawnDynamicFileArgs,
    /// `execFile`-style call (or `Command::new`, `os.exec*`) with a non-literal program.
    ExecFileDynamic,
    /// A shell switched on: `shell: true`/string/dynamic, `shell=True`, or `sh -c <non-literal>`.
    ShellTrueOption,
    /// Runtime process APIs outside `child_process`: Deno and Bun.
    OsSystemEquivalent,
    /// A literal executable with a non-literal argument list.
    SpawnLiteralDynamicArgs,
    /// Tool input that can start with `-` reaches, without a `--` before it, the arguments
    /// of a program that runs code through its options (git, find, tar, ssh, ...).
    ArgvFlagInjection,
    /// An `exec*` call without `maxBuffer`.
    UnboundedBuffer,
    /// A child-process call without `timeout`.
    MissingTimeout,
}

impl Rule {
    /// Every rule, in report order for ties.
    pub const ALL: [Rule; 13] = [
        Rule::ExecTemplateLiteralWithInput,
        Rule::ExecDynamicString,
        Rule::ExecSyncDynamicString,
        Rule::EvalNearChildProcess,
        Rule::FunctionConstructorNearChildProcess,
        Rule::SpawnDynamicFileArgs,
        Rule::ExecFileDynamic,
        Rule::ShellTrueOption,
        Rule::OsSystemEquivalent,
        Rule::SpawnLiteralDynamicArgs,
        Rule::ArgvFlagInjection,
        Rule::UnboundedBuffer,
        Rule::MissingTimeout,
    ];

    /// The stable rule id.
    pub fn id(self) -> &'static str {
        match self {
            Rule::ExecTemplateLiteralWithInput => "exec_template_literal_with_input",
            Rule::ExecDynamicString => "exec_dynamic_string",
            Rule::ExecSyncDynamicString => "exec_sync_dynamic_string",
            Rule::EvalNearChildProcess => "eval_near_child_process",
            Rule::FunctionConstructorNearChildProcess => "function_constructor_near_child_process",
            Rule::SpawnDynamicFileArgs => "spawn_dynamic_file_args",
            Rule::ExecFileDynamic => "exec_file_dynamic",
            Rule::ShellTrueOption => "shell_true_option",
            Rule::OsSystemEquivalent => "os_system_equivalent",
            Rule::SpawnLiteralDynamicArgs => "spawn_literal_dynamic_args",
            Rule::ArgvFlagInjection => "argv_flag_injection",
            Rule::UnboundedBuffer => "unbounded_buffer",
            Rule::MissingTimeout => "missing_timeout",
        }
    }

    /// The rule whose stable id is `id` (looked up in [`Rule::ALL`]).
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| rule.id() == id)
    }

    /// Base severity (before the tool-input taint raise).
    pub fn severity(self) -> Severity {
        match self {
            Rule::ExecTemplateLiteralWithInput
            | Rule::ExecDynamicString
            | Rule::ExecSyncDynamicString
            | Rule::EvalNearChildProcess
            | Rule::FunctionConstructorNearChildProcess => Severity::Critical,
            Rule::ShellTrueOption | Rule::OsSystemEquivalent | Rule::ArgvFlagInjection => {
                Severity::High
            }
            // A program that is not a literal is most often one found on disk (`shutil.which`,
            // a list of install paths) or passed down by a caller with a literal: without tool
            // input reaching it, it is a point to review, not an injection.
            Rule::SpawnDynamicFileArgs | Rule::ExecFileDynamic | Rule::SpawnLiteralDynamicArgs => {
                Severity::Medium
            }
            Rule::UnboundedBuffer | Rule::MissingTimeout => Severity::Low,
        }
    }

    /// One-line description of what the rule finds.
    pub fn description(self) -> &'static str {
        match self {
            Rule::ExecTemplateLiteralWithInput => {
                "A shell command string is built by interpolation (template literal, f-string, format!)."
            }
            Rule::ExecDynamicString => "A shell command string is not a literal.",
            Rule::ExecSyncDynamicString => {
                "execSync runs a non-literal command string through a shell."
            }
            Rule::EvalNearChildProcess => "Code is evaluated from a string (eval/exec).",
            Rule::FunctionConstructorNearChildProcess => {
                "Code is compiled from a string (Function constructor, compile(..., 'exec'))."
            }
            Rule::SpawnDynamicFileArgs => "A process is spawned with a non-literal executable.",
            Rule::ExecFileDynamic => "A program is run whose path is not a literal.",
            Rule::ShellTrueOption => {
                "A shell is switched on (shell option, shell=True, or sh -c with a non-literal script)."
            }
            Rule::OsSystemEquivalent => {
                "A runtime process API (Deno.run, Deno.Command, Bun.spawn, Bun.$) is used."
            }
            Rule::SpawnLiteralDynamicArgs => {
                "A literal program receives a non-literal argument list."
            }
            Rule::ArgvFlagInjection => {
                "Tool input that can start with '-' becomes an argument of a program that runs code through its options, with no '--' before it."
            }
            Rule::UnboundedBuffer => "An exec-style call buffers output without maxBuffer.",
            Rule::MissingTimeout => "A child process is started without a timeout.",
        }
    }

    /// Whether a finding of this rule is raised ([`Rule::tainted_severity`]) when its
    /// argument comes from tool input. `argv_flag_injection` is tool input by definition.
    /// Tool input in the argument list of a literal program is an operand, whatever the
    /// program: where it could become an option of one that runs code through its options
    /// (`runs_code_through_options`), the finding is `argv_flag_injection` instead.
    pub fn raised_by_taint(self) -> bool {
        !matches!(
            self,
            Rule::ArgvFlagInjection | Rule::SpawnLiteralDynamicArgs
        )
    }

    /// The severity of a finding raised for tool input ([`Rule::raised_by_taint`]): one step
    /// above [`Rule::severity`], except a program that tool input chooses, which runs
    /// anything the caller names and so is as bad as a shell command built from it.
    pub fn tainted_severity(self) -> Severity {
        match self {
            Rule::SpawnDynamicFileArgs | Rule::ExecFileDynamic => Severity::Critical,
            _ => self.severity().raised(),
        }
    }

    /// The fix we suggest, in this project's words.
    pub fn suggested_fix(self) -> &'static str {
        match self {
            Rule::ExecTemplateLiteralWithInput
            | Rule::ExecDynamicString
            | Rule::ExecSyncDynamicString => {
                "Do not hand a built string to a shell: run a fixed program with an argv array (execFile/spawn without shell, subprocess.run([...]), Command::new(prog).args(..)), check every argument against an allow-list, or route the command through the safe-mcp terminal server so its policy decides."
            }
            Rule::EvalNearChildProcess | Rule::FunctionConstructorNearChildProcess => {
                "Remove code evaluation from strings; parse data with JSON.parse/json.loads or dispatch to a fixed table of functions."
            }
            Rule::SpawnDynamicFileArgs | Rule::ExecFileDynamic => {
                "Choose the program from a fixed allow-list (a match over known names mapping to literal paths) instead of taking it from data; let the safe-mcp policy decide what may run."
            }
            Rule::ShellTrueOption => {
                "Drop the shell: pass shell: false (shell=False), give the program and an argv array, and never pass data as the script of sh -c / cmd /C."
            }
            Rule::OsSystemEquivalent => {
                "Run processes through one audited wrapper with a fixed program allow-list and literal argv (or the safe-mcp terminal server), not Deno/Bun process APIs fed from data."
            }
            Rule::SpawnLiteralDynamicArgs => {
                "Validate each argument (reject leading '-' or use '--' before operands) so data cannot become an option such as --upload-pack or -c core.pager=..."
            }
            Rule::ArgvFlagInjection => {
                "Put '--' before the operands that come from input (git diff -- <path>), pass a path operand as ./<name>, or refuse values that start with '-'; never let input choose an option."
            }
            Rule::UnboundedBuffer => "Set maxBuffer so a chatty child cannot exhaust memory.",
            Rule::MissingTimeout => {
                "Set a timeout (timeout: ms / timeout=seconds) and kill the process group when it expires."
            }
        }
    }
}

/// The file name of `program`, lower-cased, without `.exe` (`/usr/bin/Git.exe` is `git`).
fn program_name(program: &str) -> String {
    let base = program
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    match base.strip_suffix(".exe") {
        Some(stem) => stem.to_string(),
        None => base,
    }
}

/// Is `program` a shell that runs a script given with `-c`/`/C`? (`sh`, `/bin/bash`,
/// `cmd.exe`, `powershell`, ...) Shared by the JS/TS and Rust rules.
pub(crate) fn is_shell_program(program: &str) -> bool {
    matches!(
        program_name(program).as_str(),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "fish" | "cmd" | "powershell" | "pwsh"
    )
}

/// Does `program` run the program named after it (and its own options)? `env`, `sudo`,
/// `timeout 5`, `nice -n 10`, `nohup`, ...: `["env", "sh", "-c", x]` is a shell.
pub(crate) fn is_program_runner(program: &str) -> bool {
    matches!(
        program_name(program).as_str(),
        "env"
            | "sudo"
            | "doas"
            | "nice"
            | "nohup"
            | "timeout"
            | "time"
            | "stdbuf"
            | "ionice"
            | "setsid"
            | "chrt"
            | "taskset"
            | "unbuffer"
            | "xargs"
            | "busybox"
            | "runuser"
            | "su"
            | "chroot"
    )
}

/// Where the shell is in a command line of `count` words: the first word, or the first after
/// programs that run the next one ([`is_program_runner`]) and their own options and values.
/// `word(i)` is the values word `i` may hold (empty when unknown).
pub(crate) fn shell_position(count: usize, word: impl Fn(usize) -> Vec<String>) -> Option<usize> {
    let mut position = 0;
    while position < count {
        let here = word(position);
        if here.iter().any(|value| is_shell_program(value)) {
            return Some(position);
        }
        if !here.iter().any(|value| is_program_runner(value)) {
            return None;
        }
        // The runner's own options and arguments, up to the next program.
        position += 1;
        while position < count {
            let next = word(position);
            if next.is_empty() {
                return None;
            }
            if next
                .iter()
                .any(|value| is_shell_program(value) || is_program_runner(value))
            {
                break;
            }
            position += 1;
        }
    }
    None
}

/// Does `option` of `program` (its literal name, if known) take the next argument as its
/// value, so that argument cannot be an option itself: `["log", "--since", since]`? Long
/// options of git and the like for any program; short ones only for the program they
/// belong to, whose parser (Go's `pflag`, for docker, podman and kubectl) hands the next
/// argument to the option even when it starts with `-` (`docker build -t "$image"`). `-c`
/// (a config assignment, itself a way to run code) is not listed.
pub(crate) fn takes_value(program: Option<&str>, option: &str) -> bool {
    let own = match program.map(program_name).as_deref() {
        Some("docker" | "podman") => matches!(
            option,
            "-t" | "--tag" | "--platform" | "-f" | "--file" | "--name" | "--label"
        ),
        Some("kubectl") => matches!(option, "-n" | "-o" | "-l" | "-c"),
        _ => false,
    };
    own || matches!(
        option,
        "--since"
            | "--until"
            | "--after"
            | "--before"
            | "--author"
            | "--committer"
            | "--grep"
            | "--contains"
            | "--no-contains"
            | "--merged"
            | "--no-merged"
            | "--points-at"
            | "--max-count"
            | "--skip"
            | "--message"
            | "--branch"
            | "--depth"
            | "--namespace"
            | "--context"
            | "--selector"
            | "--field-selector"
            | "--output"
            | "--tail"
            | "--container"
    )
}

/// Does what [`runs_code_through_options_at`] or [`takes_value_in`] answer for `program`
/// depend on its subcommand? (Callers skip finding the subcommand otherwise.)
pub(crate) fn reads_subcommand(program: &str) -> bool {
    matches!(program_name(program).as_str(), "docker" | "kubectl")
}

/// [`takes_value`], knowing the subcommand (the argument after the program, when it is a
/// literal): kubectl's `-f` is `--filename` (a value) everywhere but `kubectl logs`, where
/// it is `--follow` (no value).
pub(crate) fn takes_value_in(
    program: Option<&str>,
    subcommand: Option<&str>,
    option: &str,
) -> bool {
    takes_value(program, option)
        || (program.map(program_name).as_deref() == Some("kubectl")
            && option == "-f"
            && subcommand.is_some_and(|subcommand| subcommand != "logs"))
}

/// Does `program` run code (or write arbitrary files) through its options, so that an
/// argument that starts with `-` is a code-execution sink? `git -c core.pager=..`,
/// `--upload-pack`, `find -exec`, `tar --checkpoint-action=exec=`, `ssh -o ProxyCommand=`,
/// `rsync -e`, `kubectl exec`, `npx`, `zip -TT`, ... Shared by every language's rules.
pub(crate) fn runs_code_through_options(program: &str) -> bool {
    matches!(
        program_name(program).as_str(),
        "git"
            | "find"
            | "tar"
            | "ssh"
            | "scp"
            | "sftp"
            | "rsync"
            | "kubectl"
            | "docker"
            | "podman"
            | "npx"
            | "npm"
            | "pnpm"
            | "yarn"
            | "zip"
            | "unzip"
            | "xargs"
            | "env"
            | "awk"
            | "gawk"
            | "sed"
            | "perl"
            | "python"
            | "python3"
            | "node"
            | "curl"
            | "wget"
            | "make"
            | "man"
            | "less"
            | "vim"
            | "gh"
            | "hg"
            | "svn"
            | "pip"
            | "pip3"
            | "cargo"
            | "go"
            | "psql"
            | "mysql"
            | "sqlite3"
            | "ffmpeg"
            | "7z"
    )
}

/// [`runs_code_through_options`], knowing the argument that follows the program when it is
/// a literal (`subcommand`). docker's own options (`--config`, `-H`, `--tlscacert`, which
/// pick a configuration with credential helpers or another daemon) are read only before
/// the subcommand (`docker push --config x` is "unknown flag: --config"), and the
/// subcommands listed here have no option that runs code, picks a file to read or write,
/// or restores state (`docker start --checkpoint-dir` does, so `start` is not listed). An
/// option smuggled into one of them is argument injection, not a way to run code. Every
/// other subcommand (`run`, `exec`, `build`, `buildx`, `compose`, `cp`, `save`, ...) and
/// every other program is judged by the program alone. podman is not listed: its global
/// options (`--runtime`, `--conmon`) are read after the subcommand too.
pub(crate) fn runs_code_through_options_at(program: &str, subcommand: Option<&str>) -> bool {
    if !runs_code_through_options(program) {
        return false;
    }
    !(program_name(program) == "docker"
        && subcommand.is_some_and(|subcommand| {
            matches!(
                subcommand,
                "push"
                    | "pull"
                    | "tag"
                    | "inspect"
                    | "ps"
                    | "images"
                    | "logs"
                    | "stop"
                    | "restart"
                    | "kill"
                    | "rm"
                    | "rmi"
                    | "pause"
                    | "unpause"
                    | "port"
                    | "stats"
                    | "version"
                    | "info"
                    | "login"
                    | "logout"
                    | "search"
                    | "history"
                    | "diff"
                    | "wait"
                    | "rename"
                    | "events"
            )
        }))
}
