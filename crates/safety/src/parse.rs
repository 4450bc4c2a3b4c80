//! Command parsing (SPEC §4.1): a command string becomes an argv list.
//!
//! CONTRACT (other modules rely on it):
//! - `parse_command(input) -> Result<Vec<String>, ParseError>`
//! - Quote-aware POSIX word splitting on a safe subset: single quotes, double quotes
//!   (with the backslash escapes POSIX allows inside them), backslash outside quotes.
//! - Unquoted shell syntax (`; | & > < ( ) $ \`` newline, here-docs, `$VAR`, `$(`, backticks,
//!   also `$` / backtick inside double quotes since a shell would expand them there)
//!   is `ParseError::ShellSyntax` → POLICY_DENIED with reason
//!   `shell operator ';' is not allowed: commands run without a shell`.
//! - Empty command, unbalanced quote, NUL byte, over-long input (> MAX_COMMAND_BYTES)
//!   is `ParseError::Malformed` → INVALID_REQUEST.
//! - No globbing, no tilde or variable expansion.

use crate::result::ResultCode;

/// Longest command string accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// Why a command string was refused before it was interpreted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Shell syntax a shell would interpret; commands run without a shell.
    #[error("shell operator '{operator}' is not allowed: commands run without a shell")]
    ShellSyntax {
        /// The operator as the user wrote it, e.g. `;`, `$(`, `>>`, `$VAR`.
        operator: String,
    },
    /// Malformed input (empty, unbalanced quote, NUL, too long).
    #[error("{reason}")]
    Malformed {
        /// One human sentence.
        reason: String,
    },
}

impl ParseError {
    /// The envelope code for this refusal.
    pub fn code(&self) -> ResultCode {
        match self {
            ParseError::ShellSyntax { .. } => ResultCode::PolicyDenied,
            ParseError::Malformed { .. } => ResultCode::InvalidRequest,
        }
    }
}

/// Split `input` into argv words, refusing anything a shell would interpret.
pub fn parse_command(input: &str) -> Result<Vec<String>, ParseError> {
    // Placeholder splitter; replaced by the quote-aware parser.
    if input.trim().is_empty() {
        return Err(ParseError::Malformed { reason: "command is empty".into() });
    }
    Ok(input.split_whitespace().map(str::to_string).collect())
}
