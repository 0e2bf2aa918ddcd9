//! Type names as written: `INT64`, `STRING[]`, `INT64[4]`, `INT64[][]`, `DECIMAL(38, 4)`,
//! `STRUCT(a INT64, b STRUCT(c STRING[]))`, `MAP(STRING, INT64)`, `UNION(a INT64, b STRING)`.
//! The parser keeps the source text; the binder reads it. Parentheses are matched by counting,
//! not by recursion, so no type nests the stack.

use warren_common::Result;

use super::Parser;
use crate::token::TokenKind;

impl Parser<'_> {
    /// Reads a type and gives its source text, trimmed.
    pub(super) fn type_text(&mut self) -> Result<String> {
        let start = self.position;
        self.name("a type name")?;
        if self.at(&TokenKind::LeftParen) {
            self.skip_type_arguments()?;
        }
        while self.eat(&TokenKind::LeftBracket) {
            if matches!(self.kind(), TokenKind::Integer(_)) {
                self.advance();
            }
            self.expect(&TokenKind::RightBracket, "']' to close the list type")?;
        }
        Ok(self.text_from(start))
    }

    /// Skips `( ... )` with everything nested in it; the next token is `(`.
    fn skip_type_arguments(&mut self) -> Result<()> {
        let mut depth = 0usize;
        loop {
            match self.kind() {
                TokenKind::LeftParen => depth += 1,
                TokenKind::RightParen => depth -= 1,
                TokenKind::End | TokenKind::Semicolon | TokenKind::Invalid { .. } => {
                    return Err(self.error("')' to close the type"));
                }
                _ => {}
            }
            self.advance();
            if depth == 0 {
                return Ok(());
            }
        }
    }
}
