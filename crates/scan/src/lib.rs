//! `safe-mcp scan`: finds shell-injection patterns in MCP server source code.
//!
//! How a scan flows:
//! 1. `discover` walks the target and lists `.ts .tsx .mts .cts .js .jsx .mjs
//!    .cjs .py .rs` files, skipping `node_modules`, `.git` and `--ignore` globs (but not
//!    `dist/`/`build/`, where installed servers keep their code). Symbolic links are never
//!    followed and, like FIFOs and devices, are reported as skipped; so are files over the
//!    size cap or the token bound (`nesting` and `source` hold the bounds against hostile
//!    input).
//! 2. Files are analysed in parallel (rayon), on threads whose stack holds the nesting bound,
//!    in waves (`Waves`): tool input that crosses files has a file analysed again with what
//!    the others send it, until nothing new arrives. Each language has its own real parser and
//!    binding resolver: `javascript` (oxc + oxc_semantic), `python` (ruff's parser, into a
//!    tree of tree-sitter's shape; a quiet file is parsed but not analysed) and `rust_lang`
//!    (tree-sitter). They return rule hits and the pragmas found in real comments.
//! 3. Hits become [`Finding`]s with position, snippet, fix and the MCP tool-input taint mark
//!    (which raises severity one step); pragmas and the severity floor filter them.
//! 4. [`report`] renders text, JSON, Markdown or SARIF 2.1.0; [`cli`] wires it to
//!    `safe-mcp scan` and its exit codes; [`import`] reads a report back from its JSON (or a
//!    bare findings array) so it can be rendered again in another format.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cli;
mod discover;
pub mod error;
pub mod finding;
pub mod import;
mod javascript;
mod nesting;
mod output;
mod project;
mod python;
mod python_ruff;
mod python_scope;
mod python_tree;
pub mod report;
pub mod rule;
mod rust_lang;
mod source;
mod syntax_tree;
mod tsconfig;

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use crate::discover::{Candidate, IgnoreGlobs};
use crate::error::{ScanError, SourceError};
use crate::finding::{Analysis, Finding, Flow, Inbound, Language};
use crate::report::{FileError, FileIdentity, ScanReport, ScanRoot, SkippedFile, Summary};
use crate::rule::Severity;
use crate::source::SourceText;

/// Default size cap: larger files are reported as skipped (generated bundles, minified code).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;

/// No file larger than this is ever parsed, whatever `--max-file-size` says: a parsed file
/// costs several times its size in syntax tree, so a bigger one is refused with a message
/// instead of exhausting memory.
pub const HARD_MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// What to scan and how.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// A file or folder.
    pub root: PathBuf,
    /// Findings below this severity are dropped.
    pub severity_floor: Severity,
    /// Extra globs to skip, relative to `root`.
    pub ignore: Vec<String>,
    /// Files larger than this many bytes are skipped (and listed as skipped).
    pub max_file_size: u64,
    /// For code one does not trust: `ignore-file` and `ignore-next-line` pragmas count for
    /// nothing, and the CLI exits 2 when any file was skipped.
    pub strict: bool,
    /// Drop findings in tests and development scripts ([`finding::Context::Test`]).
    pub exclude_tests: bool,
}

impl ScanOptions {
    /// Options with the defaults: floor LOW, no extra ignores, the default size cap, not strict.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ScanOptions {
            root: root.into(),
            severity_floor: Severity::Low,
            ignore: Vec::new(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            strict: false,
            exclude_tests: false,
        }
    }
}

/// One file's outcome, the identity of the file read (if one was opened), and what it says
/// about its module boundary (for taint across files).
struct Scanned {
    outcome: FileOutcome,
    identity: Option<FileIdentity>,
    links: Links,
}

/// What a file's analysis says about its module boundary.
#[derive(Default)]
struct Links {
    outgoing: Vec<Flow>,
    reexports: Vec<finding::Reexport>,
    exports: Vec<String>,
    defines: Option<Vec<String>>,
    dash_free_returns: Vec<String>,
    /// Not looked for ([`Analysis::partial`]).
    partial: bool,
}

/// The outcome of one file.
enum FileOutcome {
    Scanned {
        findings: Vec<Finding>,
        lines: usize,
    },
    /// Scanned, with more findings than are listed.
    Truncated {
        findings: Vec<Finding>,
        lines: usize,
        error: FileError,
    },
    Skipped(SkippedFile),
    Failed(FileError),
}

/// Scan a file or folder. Per-file problems (unreadable, parse error, too large, too deep) are
/// entries in the report; only an unusable root or bad glob is an `Err`.
pub fn scan(options: &ScanOptions) -> Result<ScanReport, ScanError> {
    let started = Instant::now();
    let metadata = std::fs::metadata(&options.root).map_err(|source| ScanError::Root {
        path: options.root.clone(),
        source,
    })?;
    // A FIFO given as PATH used to be "0 files scanned", exit 0: a scan that looked at nothing
    // must not pass for a clean one.
    if !metadata.is_file() && !metadata.is_dir() {
        return Err(ScanError::NotFileOrFolder {
            path: options.root.clone(),
            kind: discover::kind_of(metadata.file_type()),
        });
    }
    let ignore = IgnoreGlobs::new(&options.ignore)?;
    let found = discover::discover(&options.root, metadata.is_file(), &ignore);
    // The parsers and the visitors recurse up to the nesting bound: they run on threads whose
    // stack is sized for it, whatever the caller's thread has.
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(nesting::ANALYSIS_STACK_BYTES)
        .thread_name(|index| format!("scan-{index}"))
        .build()
        .map_err(|error| ScanError::Threads(error.to_string()))?;
    // TypeScript `paths` aliases, for imports such as `~/services/x.js`.
    let (configs, configs_read) = tsconfig::configs(&found.ts_configs);
    // Tool input that crosses files: a file is analysed again when it receives new seeds (or
    // learns that a function it calls returns no value that can start with `-`), until nothing
    // new arrives (or the chain is as long as the bound). The order saves most of those second
    // analyses: production files that may register a tool handler (the only source of tool
    // input before any seed) come first; other production files wait until a seed reaches
    // them, or until nothing else is left, so most are analysed once, with the seeds they end
    // with. Tests send no input to other files: they fill the threads meanwhile.
    let (mut waves, tests) = pool.install(|| {
        rayon::join(
            || {
                // The index of modules is built while the first files are analysed (it took a
                // thread 2 % of the scan on its own).
                let (outcomes, modules) = rayon::join(
                    || {
                        analyse_all(&found.candidates, options, |candidate| {
                            (candidate.context == finding::Context::Production)
                                .then_some(Pass::First)
                        })
                    },
                    || {
                        project::Modules::new(
                            found
                                .candidates
                                .iter()
                                .map(|candidate| (candidate.path.as_path(), candidate.language)),
                            &configs,
                        )
                    },
                );
                let mut waves = Waves::new(outcomes, modules);
                waves.run(&found.candidates, options, false);
                waves
            },
            || {
                analyse_all(&found.candidates, options, |candidate| {
                    (candidate.context == finding::Context::Test).then_some(Pass::Now)
                })
            },
        )
    });
    waves.merge(tests);
    pool.install(|| waves.run(&found.candidates, options, true));

    let mut report = ScanReport {
        root: Some(ScanRoot::of(&options.root, metadata.is_file())),
        ..ScanReport::default()
    };
    report.errors.extend(
        found
            .errors
            .into_iter()
            .map(|(file, message)| FileError { file, message }),
    );
    report.skipped.extend(
        found
            .skipped
            .into_iter()
            .map(|(file, reason)| SkippedFile { file, reason }),
    );
    report.read_files.extend(configs_read);
    for (barrel, why) in &waves.cut {
        if let Some(candidate) = found.candidates.get(*barrel) {
            let message = match why {
                project::Cut::OpenSeeds => format!(
                    "its `export *` re-exports modules that may take any name (a CommonJS default export of an imported value), and past {} seeds into such modules in one scan, the tool input it receives is not followed into them",
                    project::MAX_OPEN_SEEDS
                ),
                project::Cut::Walk => format!(
                    "its `export *` re-exports barrels of barrels, and past {} steps through them in one pass over the flows, the tool input it receives is not followed through them",
                    project::MAX_WALK_STEPS
                ),
                project::Cut::Shadowing => format!(
                    "its `export *` re-exports barrels of barrels, and past {} steps through them in one pass over the flows, the tool input it receives is followed to every module behind them that defines the name, even where a module on the way that exports the name itself keeps it from them: some findings may be tainted that no input reaches",
                    project::MAX_WALK_STEPS
                ),
            };
            report.errors.push(FileError {
                file: candidate.display.clone(),
                message,
            });
        }
    }
    let mut lines = 0;
    for Scanned {
        outcome, identity, ..
    } in waves.outcomes.into_iter().flatten()
    {
        report.read_files.extend(identity);
        match outcome {
            FileOutcome::Scanned {
                findings,
                lines: file_lines,
            } => {
                report.summary.files_scanned += 1;
                lines += file_lines;
                report.findings.extend(findings);
            }
            FileOutcome::Truncated {
                findings,
                lines: file_lines,
                error,
            } => {
                report.summary.files_scanned += 1;
                lines += file_lines;
                report.findings.extend(findings);
                report.errors.push(error);
            }
            FileOutcome::Skipped(skipped) => report.skipped.push(skipped),
            FileOutcome::Failed(error) => report.errors.push(error),
        }
    }
    report.skipped.sort_by(|a, b| a.file.cmp(&b.file));
    report.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.file.cmp(&b.file))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.column.cmp(&b.column))
    });
    report.summary = Summary {
        files_scanned: report.summary.files_scanned,
        files_skipped: report.skipped.len(),
        lines_scanned: lines,
        by_severity: report::SeverityCounts::count(&report.findings),
        duration_ms: started.elapsed().as_millis() as u64,
    };
    Ok(report)
}

/// Each file's outcome (`None`: not analysed yet) and the inbound it was analysed with,
/// as the waves of analysis go.
///
/// A file's links are *unknown* while it is not analysed in full (not analysed yet, or only
/// parsed as a quiet Python file); they count as empty. A wave analyses, in this order of
/// preference:
/// 1. the files with unknown links that a flow now reaches, or that were only read ahead
///    (their first full analysis, with what reaches them), and those an `export *` would
///    send a name into (in full, quiet or not: [`project::Seeds::unread`]): at most
///    [`MAX_WAVES`] such waves, and as many that only read files ahead;
/// 2. else, with `all`, the files not analysed yet (in full once the bound of 1. is spent);
/// 3. else, with `all` and the bound of 1. spent, the files whose links are still unknown,
///    in full;
/// 4. else, with `all`, the files analysed in full whose inbound changed, in full: a round,
///    at most [`project::MAX_ROUNDS`].
///
/// Before any round, then, every file is analysed once and no flow reaches a file whose
/// links are unknown (or none is unknown), so what the rounds see is at least what an
/// analysis of every file followed by rounds would see: after as many rounds, every file's
/// inbound holds at least as much (the analyses are monotone in their inbound), and the order
/// loses nothing the plain order found.
struct Waves<'a> {
    outcomes: Vec<Option<Scanned>>,
    given: Vec<Inbound>,
    modules: project::Modules<'a>,
    /// Waves of first full analyses so far, against [`MAX_WAVES`].
    first_waves: usize,
    /// Waves that only read files ahead ([`project::Seeds::unread`]) so far, against
    /// [`MAX_WAVES`] on their own: they do not spend the first bound, or a chain of calls
    /// through `export *` barrels (a wave for the barrel, one to read the module ahead, one
    /// for its seed) would stop at two thirds of the files a chain of plain imports reaches.
    ahead_waves: usize,
    /// Rounds so far, against [`project::MAX_ROUNDS`].
    rounds: usize,
    /// The barrels whose names the last resolution of the seeds did not all follow
    /// ([`project::Seeds::cut`]).
    cut: Vec<(usize, project::Cut)>,
    /// Files analysed in full only for their links, before any inbound reached them
    /// ([`project::Seeds::unread`]): the first inbound that reaches one still takes a wave
    /// of first analyses, not a round (in rounds, a chain of 13 `export *` hops, each to a
    /// file read ahead, would run out of them and lose its taint).
    read_ahead: Vec<bool>,
}

/// Most waves of first full analyses. Such a wave follows one hop of a flow, through a file
/// whose links were unknown; an analysis of every file would have known them, followed a
/// chain of files one file a round and re-exports at once (up to 16 re-exporting files,
/// `project::MAX_REEXPORT_HOPS`): 17 hops for each of [`project::MAX_ROUNDS`] rounds, plus
/// one, cover it. The bound keeps a tree built as one long chain of files (each first reached
/// in a wave of its own) to a bounded number of passes over the flows.
const MAX_WAVES: usize = project::MAX_ROUNDS * 17 + 1;

impl<'a> Waves<'a> {
    fn new(outcomes: Vec<Option<Scanned>>, modules: project::Modules<'a>) -> Waves<'a> {
        let outcomes_len = outcomes.len();
        Waves {
            given: vec![Inbound::default(); outcomes.len()],
            outcomes,
            modules,
            first_waves: 0,
            ahead_waves: 0,
            rounds: 0,
            cut: Vec::new(),
            read_ahead: vec![false; outcomes_len],
        }
    }

    /// Outcomes analysed elsewhere, with no inbound, where no wave has put one.
    fn merge(&mut self, outcomes: Vec<Option<Scanned>>) {
        for (slot, scanned) in self.outcomes.iter_mut().zip(outcomes) {
            if slot.is_none() {
                *slot = scanned;
            }
        }
    }

    /// Whether file `i` is analysed in full: its links are known.
    fn known(&self, i: usize) -> bool {
        matches!(self.outcomes.get(i), Some(Some(scanned)) if !scanned.links.partial)
    }

    /// Waves until none is left to run (see [`Waves`]); without `all`, only waves of first
    /// full analyses.
    fn run(&mut self, candidates: &[Candidate], options: &ScanOptions, all: bool) {
        loop {
            let links: Vec<project::ModuleLinks<'_>> = candidates
                .iter()
                .zip(&self.outcomes)
                .map(|(candidate, scanned)| match scanned {
                    Some(Scanned { links, .. }) if !links.partial => project::ModuleLinks {
                        known: true,
                        // A handler in a test registers nothing a client reaches: its input
                        // taints only the test file itself.
                        outgoing: match candidate.context {
                            finding::Context::Test => &[],
                            finding::Context::Production => &links.outgoing,
                        },
                        reexports: &links.reexports,
                        exports: &links.exports,
                        defines: links.defines.as_deref(),
                        dash_free_returns: &links.dash_free_returns,
                    },
                    _ => project::ModuleLinks::default(),
                })
                .collect();
            let seeds = project::seeds(&self.modules, &links);
            self.cut = seeds.cut;
            let inbound: Vec<Inbound> = (seeds.by_file.into_iter())
                .zip(project::dash_free_imports(&self.modules, &links))
                .map(|(seeds, dash_free)| Inbound { seeds, dash_free })
                .collect();
            let changed: Vec<usize> = (inbound.iter().zip(&self.given).enumerate())
                .filter(|(_, (now, before))| now != before)
                .map(|(i, _)| i)
                .collect();
            let reached: Vec<usize> = (changed.iter().copied())
                .filter(|i| !self.known(*i) || self.read_ahead.get(*i) == Some(&true))
                .collect();
            let capped = self.first_waves >= MAX_WAVES;
            let all_in = |files: Vec<usize>, pass: Pass| -> Vec<(usize, Pass)> {
                files.into_iter().map(|i| (i, pass)).collect()
            };
            let ahead_only = reached.is_empty() && !seeds.unread.is_empty();
            let first = if ahead_only {
                self.ahead_waves < MAX_WAVES
            } else {
                !reached.is_empty()
            };
            let mut read_ahead: HashSet<usize> = HashSet::new();
            let todo = if first && !capped {
                if ahead_only {
                    self.ahead_waves += 1;
                } else {
                    self.first_waves += 1;
                }
                // The files an `export *` would send names into are analysed in full (a quiet
                // Python file too: its names are what is wanted).
                let mut passes: HashMap<usize, Pass> = (seeds.unread.into_iter())
                    .map(|i| (i, Pass::Full))
                    .collect();
                // The others are only read ahead: analysed with no new inbound.
                read_ahead = passes.keys().copied().collect();
                for i in &reached {
                    passes.entry(*i).or_insert(Pass::Now);
                    read_ahead.remove(i);
                }
                let mut todo: Vec<(usize, Pass)> = passes.into_iter().collect();
                todo.sort_unstable_by_key(|(i, _)| *i);
                todo
            } else if !all {
                return;
            } else if self.outcomes.iter().any(Option::is_none) {
                let waiting = (self.outcomes.iter().enumerate())
                    .filter(|(_, scanned)| scanned.is_none())
                    .map(|(i, _)| i)
                    .collect();
                all_in(waiting, if capped { Pass::Full } else { Pass::Now })
            } else if capped && (0..self.outcomes.len()).any(|i| !self.known(i)) {
                // Past the bound on first analyses, every file's links are made known at
                // once, as the plain order knows them, before the rounds.
                let unknown = (0..self.outcomes.len())
                    .filter(|i| !self.known(*i))
                    .collect();
                all_in(unknown, Pass::Full)
            } else {
                let again: Vec<usize> = (changed.into_iter()).filter(|i| self.known(*i)).collect();
                if again.is_empty() || self.rounds >= project::MAX_ROUNDS {
                    return;
                }
                self.rounds += 1;
                // In full: a file analysed in full stays so, whatever reaches it.
                all_in(again, Pass::Full)
            };
            let analysed: Vec<(usize, Option<Scanned>)> = todo
                .par_iter()
                .with_max_len(1)
                .filter_map(|(i, pass)| {
                    let candidate = candidates.get(*i)?;
                    let inbound = inbound.get(*i)?;
                    Some((*i, scan_file(candidate, options, inbound, *pass)))
                })
                .collect();
            for (i, scanned) in analysed {
                if let Some(slot) = self.outcomes.get_mut(i) {
                    *slot = scanned;
                }
            }
            for (i, _) in todo {
                if let (Some(given), Some(now)) = (self.given.get_mut(i), inbound.get(i)) {
                    given.clone_from(now);
                }
                if let Some(flag) = self.read_ahead.get_mut(i) {
                    *flag = read_ahead.contains(&i);
                }
            }
        }
    }
}

/// Analyse, in parallel with no inbound, the candidates `pick` gives a [`Pass`] (the others,
/// and those that wait, are `None`).
fn analyse_all(
    candidates: &[Candidate],
    options: &ScanOptions,
    pick: impl Fn(&Candidate) -> Option<Pass> + Sync,
) -> Vec<Option<Scanned>> {
    candidates
        .par_iter()
        // One file per task: rayon's default split left runs of hundreds of files to one
        // thread, and on the real trees the other thread idled for a third of the scan.
        .with_max_len(1)
        .map(|candidate| {
            let pass = pick(candidate)?;
            scan_file(candidate, options, &Inbound::default(), pass)
        })
        .collect()
}

/// Open a candidate for reading: never through a symbolic link met inside the tree (one may
/// have replaced the file since the walk), never blocking on a FIFO, and only if it is a
/// regular file. `Ok(Err(reason))` is a skip.
fn open_candidate(
    candidate: &Candidate,
) -> std::io::Result<Result<(std::fs::File, rustix::fs::Stat), String>> {
    use rustix::fs::{Mode, OFlags};
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    if !candidate.named_root {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = match rustix::fs::open(&candidate.path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::LOOP) => {
            return Ok(Err("symbolic link, not followed".to_string()));
        }
        Err(error) => return Err(error.into()),
    };
    let stat = rustix::fs::fstat(&fd)?;
    let file_type = rustix::fs::FileType::from_raw_mode(stat.st_mode);
    if file_type != rustix::fs::FileType::RegularFile {
        return Ok(Err(format!("not a regular file ({file_type:?})")));
    }
    Ok(Ok((std::fs::File::from(fd), stat)))
}

/// How a file is taken in a wave.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The first wave: a production file that cannot register a tool handler waits.
    First,
    /// Analysed now; a quiet Python file told nothing by other files is only parsed.
    Now,
    /// Analysed now and in full, quiet or not.
    Full,
}

/// Scan one file, with what other files told it; `None` when it waits.
fn scan_file(
    candidate: &Candidate,
    options: &ScanOptions,
    seeds: &Inbound,
    pass: Pass,
) -> Option<Scanned> {
    // A file skipped or failed takes no name another file sends (as a module of a barrel
    // that takes every name, it would receive each); an analysis replaces these links.
    let mut links = Links {
        defines: Some(Vec::new()),
        ..Links::default()
    };
    let (outcome, identity) = scan_file_links(candidate, options, seeds, pass, &mut links)?;
    Some(Scanned {
        outcome,
        identity,
        links,
    })
}

/// [`scan_file`], with the file's outgoing flows and re-exports written to `links`.
fn scan_file_links(
    candidate: &Candidate,
    options: &ScanOptions,
    seeds: &Inbound,
    pass: Pass,
    links: &mut Links,
) -> Option<(FileOutcome, Option<FileIdentity>)> {
    let failed = |message: String| {
        FileOutcome::Failed(FileError {
            file: candidate.display.clone(),
            message,
        })
    };
    let skipped = |reason: String| {
        FileOutcome::Skipped(SkippedFile {
            file: candidate.display.clone(),
            reason,
        })
    };
    let (file, stat) = match open_candidate(candidate) {
        Ok(Ok(opened)) => opened,
        Ok(Err(reason)) => return Some((skipped(reason), None)),
        Err(error) => return Some((failed(error.to_string()), None)),
    };
    let identity = Some(FileIdentity {
        device: stat.st_dev,
        inode: stat.st_ino,
    });
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    let cap = options.max_file_size.min(HARD_MAX_FILE_SIZE);
    // Oversized files are listed, never silently dropped (the peer skipped them with exit 0 and
    // no trace, so a payload padded past the cap went unseen).
    if size > cap {
        return Some((skipped(size_reason(size, options.max_file_size)), identity));
    }
    // At most cap + 1 bytes, even if the file grows after the fstat.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    if let Err(error) = file.take(cap.saturating_add(1)).read_to_end(&mut bytes) {
        return Some((failed(error.to_string()), identity));
    }
    if bytes.len() as u64 > cap {
        return Some((
            skipped(size_reason(bytes.len() as u64, options.max_file_size)),
            identity,
        ));
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return Some((failed("not valid UTF-8".to_string()), identity));
    };
    if pass == Pass::First && !may_register_handler(candidate.language, &text) {
        return None;
    }
    let token_limit = token_limit(candidate.language);
    if let Some(tokens) = source::tokens_over(&text, token_limit) {
        return Some((
            skipped(format!(
                "more tokens than the scanner parses ({tokens} > {token_limit}); its syntax tree would not fit the memory bound"
            )),
            identity,
        ));
    }
    let source = SourceText::new(&text);
    let wanted = python::Wanted {
        quiet_links: pass == Pass::Full,
        sends: candidate.context == finding::Context::Production,
    };
    let analysed = analyze(candidate.language, &candidate.path, &source, seeds, wanted);
    let mut analysis = match analysed {
        Ok(analysis) => analysis,
        // A type declaration file holds no runtime code, so nothing in it can reach a shell.
        // Some published ones are not valid TypeScript (`export = function f(): T;`); they are
        // listed as skipped with the parser's message instead of failing the whole scan.
        Err(message) if is_type_declaration(&candidate.path) => {
            return Some((
                skipped(format!(
                    "type declaration file that does not parse ({message}); it holds no runtime code"
                )),
                identity,
            ));
        }
        Err(message) => return Some((failed(format!("parse error: {message}")), identity)),
    };
    if analysis.pragmas.ignore_file && !options.strict {
        return Some((skipped("ignore-file pragma".to_string()), identity));
    }
    *links = Links {
        outgoing: std::mem::take(&mut analysis.outgoing),
        reexports: std::mem::take(&mut analysis.reexports),
        exports: std::mem::take(&mut analysis.exports),
        defines: analysis.defines.take(),
        dash_free_returns: std::mem::take(&mut analysis.dash_free_returns),
        partial: analysis.partial,
    };
    let (findings, complete) = findings_of(
        analysis,
        &source,
        candidate,
        options.severity_floor,
        options.strict,
        options.exclude_tests,
    );
    if !complete {
        return Some((
            FileOutcome::Truncated {
                findings,
                lines: source.line_count(),
                error: FileError {
                    file: candidate.display.clone(),
                    message: format!(
                        "more than {MAX_FINDINGS_PER_FILE} findings; only the first {MAX_FINDINGS_PER_FILE} are listed"
                    ),
                },
            },
            identity,
        ));
    }
    Some((
        FileOutcome::Scanned {
            findings,
            lines: source.line_count(),
        },
        identity,
    ))
}

/// Whether `text` may register a tool handler (a file that does not cannot be a source of
/// tool input before other files seed it): a heuristic for the order of analysis only.
fn may_register_handler(language: Language, text: &str) -> bool {
    match language {
        Language::Python => python::may_register_handlers(text),
        Language::JavaScript => javascript::may_register_handlers(text),
        Language::Rust => true,
    }
}

/// Why a file over the cap is skipped; past the hard limit, say that raising the cap won't do.
fn size_reason(size: u64, max_file_size: u64) -> String {
    if size > HARD_MAX_FILE_SIZE && max_file_size > HARD_MAX_FILE_SIZE {
        format!(
            "larger than the hard size limit ({size} > {HARD_MAX_FILE_SIZE} bytes; --max-file-size cannot raise it)"
        )
    } else {
        format!(
            "larger than the size cap ({size} > {} bytes)",
            max_file_size.min(HARD_MAX_FILE_SIZE)
        )
    }
}

/// The language's analyser over one text; `inbound.seeds` are the exported functions whose
/// parameters receive tool input from other files of the project; `wanted`: what is read of
/// a Python file beyond its hits.
fn analyze(
    language: Language,
    path: &Path,
    source: &SourceText<'_>,
    inbound: &Inbound,
    wanted: python::Wanted,
) -> Result<Analysis, SourceError> {
    match language {
        Language::JavaScript => javascript::analyze(path, source, &inbound.seeds),
        Language::Python => {
            python::analyze_with(source, &inbound.seeds, &inbound.dash_free, wanted)
        }
        Language::Rust => rust_lang::analyze(source),
    }
}

/// `.d.ts`, `.d.mts`, `.d.cts`: TypeScript declarations, types only.
fn is_type_declaration(path: &std::path::Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

fn findings_of(
    analysis: Analysis,
    source: &SourceText<'_>,
    candidate: &Candidate,
    floor: Severity,
    strict: bool,
    exclude_tests: bool,
) -> (Vec<Finding>, bool) {
    let mut hits = analysis.hits;
    hits.sort_by_key(|hit| (hit.offset, hit.rule));
    hits.dedup_by_key(|hit| (hit.offset, hit.rule));
    let mut findings = Vec::new();
    for hit in hits {
        let (line, column) = source.position(hit.offset);
        if !strict && analysis.pragmas.ignored_lines.contains(&line) {
            continue;
        }
        let severity = if hit.raise {
            hit.rule.tainted_severity()
        } else {
            hit.rule.severity()
        };
        // Tests and development scripts: no MCP client reaches them.
        let severity = match candidate.context {
            finding::Context::Test => severity.lowered(),
            finding::Context::Production => severity,
        };
        if exclude_tests && candidate.context == finding::Context::Test {
            continue;
        }
        if severity < floor {
            continue;
        }
        if findings.len() == MAX_FINDINGS_PER_FILE {
            return (findings, false);
        }
        findings.push(Finding {
            rule_id: hit.rule.id(),
            severity,
            base_severity: hit.rule.severity(),
            file: candidate.display.clone(),
            line,
            column,
            snippet: source.snippet(line),
            message: hit.rule.description(),
            suggested_fix: hit.rule.suggested_fix(),
            tainted_from_tool_input: hit.tainted,
            language: candidate.language,
            context: candidate.context,
        });
    }
    (findings, true)
}

/// Whether the scanner reads a file of this name (by its extension: JavaScript/TypeScript,
/// Python, Rust).
pub fn is_scanned_file(path: &Path) -> bool {
    discover::language_of(path).is_some()
}

/// Scan source text held in memory as if it were a file at `path` (the extension picks the
/// language). Used by tests and by tools that scan an edit before writing it.
pub fn scan_text(path: &Path, text: &str) -> Result<Vec<Finding>, SourceError> {
    let language = discover::language_of(path).ok_or(SourceError::UnsupportedFileType)?;
    if text.len() as u64 > HARD_MAX_FILE_SIZE {
        return Err(SourceError::TooLarge {
            size: text.len() as u64,
            limit: HARD_MAX_FILE_SIZE,
        });
    }
    let token_limit = token_limit(language);
    if let Some(tokens) = source::tokens_over(text, token_limit) {
        return Err(SourceError::TooManyTokens {
            tokens,
            limit: token_limit,
        });
    }
    let candidate = Candidate {
        path: path.to_path_buf(),
        display: path.to_string_lossy().into_owned(),
        language,
        named_root: true,
        context: finding::Context::of(path),
    };
    // On a thread of its own, whose stack holds the nesting bound (the caller's may be small).
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("scan-text".to_string())
            .stack_size(nesting::ANALYSIS_STACK_BYTES)
            .spawn_scoped(scope, || {
                let source = SourceText::new(text);
                let wanted = python::Wanted {
                    quiet_links: false,
                    sends: true,
                };
                let analysis = analyze(language, path, &source, &Inbound::default(), wanted)?;
                if analysis.pragmas.ignore_file {
                    return Ok(Vec::new());
                }
                Ok(findings_of(analysis, &source, &candidate, Severity::Low, false, false).0)
            })
            .map_err(|error| SourceError::Thread(error.to_string()))?;
        worker
            .join()
            .unwrap_or_else(|_| Err(SourceError::Thread("the analysis panicked".to_string())))
    })
}

/// Most tokens (as `source::estimated_tokens` counts them) a file may have to be parsed: a syntax tree
/// costs about 100 bytes per token with oxc, 165 with ruff and the Python tree, and 250 to 300
/// with tree-sitter (measured), so
/// either bound keeps one file's tree near 500 MB at worst. Real code averages four bytes or
/// more per token: an 8 MiB bundle is about 2 million.
pub const fn token_limit(language: Language) -> usize {
    match language {
        Language::JavaScript => 5_000_000,
        Language::Python | Language::Rust => 2_000_000,
    }
}

/// Most findings listed for one file; a file with more (generated or hostile) also gets an
/// error saying the rest were not listed.
pub const MAX_FINDINGS_PER_FILE: usize = 10_000;
