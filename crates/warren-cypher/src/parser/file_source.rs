//! What COPY and LOAD FROM read: a file path or a list of them, and the option list
//! `(HEADER=true, DELIM='|', ...)` whose names any word may be and whose values are expressions.

use warren_common::Result;

use super::Parser;
use crate::ast::Expr;
use crate::token::TokenKind;

impl Parser<'_> {
    /// `'path'`, `"path"` or `['a', 'b', ...]`.
    pub(super) fn file_list(&mut self) -> Result<Vec<String>> {
        if !self.eat(&TokenKind::LeftBracket) {
            return Ok(vec![
                self.string_literal("a file path in quotes or a list of them")?
            ]);
        }
        let mut files = vec![self.string_literal("a file path in quotes")?];
        while self.eat(&TokenKind::Comma) {
            files.push(self.string_literal("a file path in quotes")?);
        }
        self.expect(
            &TokenKind::RightBracket,
            "',' or ']' to close the file list",
        )?;
        Ok(files)
    }

    /// `(name = value, ...)` if the next token is `(`; otherwise no options.
    pub(super) fn optional_options(&mut self) -> Result<Vec<(String, Expr)>> {
        if !self.eat(&TokenKind::LeftParen) {
            return Ok(Vec::new());
        }
        let mut options = Vec::new();
        loop {
            let name = self.name("an option name")?;
            self.expect(&TokenKind::Equals, "'=' and the option's value")?;
            options.push((name, self.expression()?));
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RightParen, "',' or ')' to close the options")?;
        Ok(options)
    }
}
