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
    /// The parser returned no tree.
    #[error("parser gave up")]
    GaveUp,
    /// The grammar could not be loaded into the parser (a tree-sitter version mismatch).
    #[error("{0}")]
    Grammar(String),
}
