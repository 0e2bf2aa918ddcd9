//! `LOAD [WITH HEADERS (name TYPE, ...)] FROM 'file' [(options)] [WHERE p]`: reading a file
//! as rows inside a query.

use warren_common::Result;

use super::Parser;
use crate::ast::LoadFromClause;
use crate::token::TokenKind;

impl Parser<'_> {
    /// The next token is `LOAD`.
    pub(super) fn load_from(&mut self) -> Result<LoadFromClause> {
        let start = self.position;
        self.advance();
        let headers = if self.eat_keyword("WITH") {
            self.load_headers()?
        } else {
            Vec::new()
        };
        self.expect_keyword("FROM", "FROM and a file")?;
        let (files, parameter) = match self.table_parameter() {
            Some(name) => (Vec::new(), Some(name)),
            None => (self.file_list()?, None),
        };
        let options = self.optional_options()?;
        let where_clause = if self.eat_keyword("WHERE") {
            Some(self.expression()?)
        } else {
            None
        };
        Ok(LoadFromClause {
            files,
            parameter,
            headers,
            options,
            where_clause,
            span: self.span_from(start),
        })
    }

    /// A table given by name (`df`) or as a parameter (`$df`), consumed if present.
    pub(super) fn table_parameter(&mut self) -> Option<String> {
        let name = match self.kind() {
            TokenKind::Identifier(name) | TokenKind::Parameter(name) => name.clone(),
            _ => return None,
        };
        self.advance();
        Some(name)
    }

    /// After `WITH`: `HEADERS (name TYPE, ...)`.
    fn load_headers(&mut self) -> Result<Vec<(String, String)>> {
        self.expect_keyword("HEADERS", "HEADERS after LOAD WITH")?;
        self.expect(&TokenKind::LeftParen, "'(' and the column definitions")?;
        let mut headers = Vec::new();
        loop {
            let name = self.name("a column name")?;
            headers.push((name, self.type_text()?));
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(
            &TokenKind::RightParen,
            "',' or ')' to close the column definitions",
        )?;
        Ok(headers)
    }
}
