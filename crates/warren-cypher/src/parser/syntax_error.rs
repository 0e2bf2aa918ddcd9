//! The text of a syntax error, in Kùzu's form:
//! `Invalid input <PREFIX>: expected WHAT (line: L, offset: O)`, where PREFIX is the statement
//! up to and including the offending token, L is 1-based and O is the 0-based column; then the
//! statement on one line in quotes, and a caret line under the offending token.

use warren_common::error::Position;
use warren_common::Error;

use crate::token::{Token, TokenKind};

/// The error for `token`, found while reading the statement that starts at byte `start`.
pub(super) fn syntax_error(text: &str, start: usize, token: &Token, expected: &str) -> Error {
    let expected = match &token.kind {
        TokenKind::Invalid { expected } => expected.as_str(),
        _ => expected,
    };
    let prefix = quoted_prefix(text, start, blamed_end(token));
    let line = token.span.line;
    let offset = token.span.column.saturating_sub(1);
    let statement = crate::split_statements(text.get(start..).unwrap_or(""))
        .into_iter()
        .next()
        .map(|s| quoted_prefix(&s.text, 0, s.text.len()).trim().to_string())
        .unwrap_or_default();
    let blamed = quoted_prefix(text, token.span.start.max(start), blamed_end(token));
    let caret_at = prefix
        .chars()
        .count()
        .saturating_sub(blamed.chars().count())
        + 1;
    let carets = "^".repeat(blamed.chars().count().max(1));
    let message = format!(
        "Invalid input <{prefix}>: expected {expected} (line: {line}, offset: {offset})\n\"{statement}\"\n{}{carets}",
        " ".repeat(caret_at)
    );
    Error::Syntax {
        message,
        position: Position {
            line,
            column: token.span.column,
        },
    }
}

/// Where the blamed text ends. Kùzu's grammar reads `$` as a token of its own, so an
/// unexpected parameter is blamed on its `$` alone.
fn blamed_end(token: &Token) -> usize {
    match token.kind {
        TokenKind::Parameter(_) => token.span.start + 1,
        _ => token.span.end,
    }
}

/// The text from `start` to `end` on one line: line breaks become spaces.
fn quoted_prefix(text: &str, start: usize, end: usize) -> String {
    let end = end.min(text.len());
    let slice = text.get(start.min(end)..end).unwrap_or("");
    slice.replace("\r\n", " ").replace(['\n', '\r'], " ")
}
