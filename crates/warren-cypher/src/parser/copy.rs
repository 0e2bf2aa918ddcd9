//! The COPY statements: `COPY t FROM 'file' [(options)]`, `COPY t FROM ['a', 'b']`,
//! `COPY t FROM (query)` and `COPY (query) TO 'file' [(options)]`.

use warren_common::Result;

use super::Parser;
use crate::ast::{CopyFrom, Statement};
use crate::token::TokenKind;

impl Parser<'_> {
    /// The next token is `COPY`.
    pub(super) fn copy(&mut self) -> Result<Statement> {
        let start = self.position;
        self.advance();
        if self.eat(&TokenKind::LeftParen) {
            return self.copy_to(start);
        }
        let table = self.name("a table name or a query in parentheses")?;
        self.expect_keyword("FROM", "FROM")?;
        if self.eat(&TokenKind::LeftParen) {
            let query = Box::new(self.query()?);
            self.expect(&TokenKind::RightParen, "')' to close the query")?;
            return Ok(Statement::CopyFromQuery {
                table,
                query,
                span: self.span_from(start),
            });
        }
        let files = self.file_list()?;
        let options = self.optional_options()?;
        Ok(Statement::Copy(CopyFrom {
            table,
            files,
            options,
            span: self.span_from(start),
        }))
    }

    /// After `COPY (`: `query) TO 'file' [(options)]`.
    fn copy_to(&mut self, start: usize) -> Result<Statement> {
        let query = Box::new(self.query()?);
        self.expect(&TokenKind::RightParen, "')' to close the query")?;
        self.expect_keyword("TO", "TO and a file")?;
        let file = self.string_literal("a file path in quotes")?;
        let options = self.optional_options()?;
        Ok(Statement::CopyTo {
            query,
            file,
            options,
            span: self.span_from(start),
        })
    }
}
