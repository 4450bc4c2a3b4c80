//! Errors that stop a scan before it starts (per-file problems are report entries instead).

use std::path::PathBuf;

/// Why a scan could not run or its report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The scan root does not exist or cannot be read.
    #[error("cannot read {path}: {source}")]
    Root {
        /// The path given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The scan root is neither a regular file nor a folder (a FIFO, socket or device).
    #[error("{path} is a {kind}, not a regular file or folder: nothing to scan")]
    NotFileOrFolder {
        /// The path given.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The analysis threads could not be started.
    #[error("cannot start the analysis threads: {0}")]
    Threads(String),
    /// `--output` names a file the scan read, or a source file inside the scanned tree.
    #[error("refusing to write the report to {path}: {reason}")]
    OutputRefused {
        /// The output path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An `--ignore` glob does not compile.
    #[error("bad --ignore glob {glob:?}: {source}")]
    BadGlob {
        /// The glob as given.
        glob: String,
        /// The compile error.
        source: globset::Error,
    },
    /// The report could not be written.
    #[error("cannot write report to {path}: {source}")]
    Output {
        /// The output path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The report could not be serialised.
    #[error("cannot serialise report: {0}")]
    Serialise(#[from] serde_json::Error),
}

/// Why one source text could not be analysed (a report entry for that file, or the error of
/// [`crate::scan_text`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The file's extension is not one of the scanned languages.
    #[error("unsupported file type")]
    UnsupportedFileType,
    /// The text does not parse; the first error is on this line (1-based).
    #[error("syntax error at line {line}")]
    Syntax {
        /// The line.
        line: usize,
    },
    /// The JavaScript/TypeScript parser's first diagnostic.
    #[error("{0}")]
    Diagnostic(String),
    /// The syntax nests deeper than the scanner's bound (a stack-exhaustion attempt, or
    /// generated code past any hand-written depth).
    #[error("nesting deeper than the scanner's bound ({limit}) at line {line}")]
    TooDeep {
        /// The line where the bound was passed (1-based).
        line: usize,
        /// The bound.
        limit: usize,
    },
    /// The file is larger than the scanner ever parses, whatever `--max-file-size` says.
    #[error("larger than the hard size limit ({size} > {limit} bytes)")]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The hard limit.
        limit: u64,
    },
    /// The file has more tokens than the scanner parses (its syntax tree would not fit the
    /// memory bound).
    #[error("more tokens than the scanner parses ({tokens} > {limit})")]
    TooManyTokens {
        /// The estimated token count.
        tokens: usize,
        /// The bound.
        limit: usize,
    },
    /// The thread that parses the file could not be started.
    #[error("cannot start an analysis thread: {0}")]
    Thread(String),
    /// The parser returned no tree.
    #[error("parser gave up")]
    GaveUp,
    /// The grammar could not be loaded into the parser (a tree-sitter version mismatch).
    #[error("{0}")]
    Grammar(String),
}
