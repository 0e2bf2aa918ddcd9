//! The COPY statements: `COPY t FROM 'file' [(options)]`, `COPY t FROM ['a', 'b']`,
//! `COPY t FROM (query)`, `COPY t FROM ('a.npy', 'b.npy') BY COLUMN` and
//! `COPY (query) TO 'file' [(options)]`.

use warren_common::Result;

use super::Parser;
use crate::ast::{
    Clause, CopyFrom, Expr, LoadFromClause, ProjectionClause, Query, SingleQuery, Span, Statement,
};
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
            if matches!(self.kind(), TokenKind::String(_)) {
                return self.copy_by_column(start, table);
            }
            let query = Box::new(self.query()?);
            self.expect(&TokenKind::RightParen, "')' to close the query")?;
            return Ok(Statement::CopyFromQuery {
                table,
                query,
                options: Vec::new(),
                span: self.span_from(start),
            });
        }
        if let Some(parameter) = self.table_parameter() {
            let options = self.optional_options()?;
            return Ok(copy_from_parameter(
                table,
                parameter,
                options,
                self.span_from(start),
            ));
        }
        let files = self.file_list()?;
        let options = self.optional_options()?;
        Ok(Statement::Copy(CopyFrom {
            table,
            files,
            options,
            by_column: false,
            span: self.span_from(start),
        }))
    }

    /// After `COPY t FROM (`: `'file', ...) BY COLUMN`, one file per column (NumPy `.npy`).
    fn copy_by_column(&mut self, start: usize, table: String) -> Result<Statement> {
        let mut files = vec![self.string_literal("a file path in quotes")?];
        while self.eat(&TokenKind::Comma) {
            files.push(self.string_literal("a file path in quotes")?);
        }
        self.expect(&TokenKind::RightParen, "',' or ')' to close the file list")?;
        self.expect_keyword("BY", "BY COLUMN")?;
        self.expect_keyword("COLUMN", "COLUMN")?;
        Ok(Statement::Copy(CopyFrom {
            table,
            files,
            options: Vec::new(),
            by_column: true,
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

/// The options of `COPY t FROM df (options)` that are COPY's rather than the scan's.
const COPY_OPTIONS: [&str; 3] = ["FROM", "TO", "IGNORE_ERRORS"];

/// `COPY t FROM df (options)` is `COPY t FROM (LOAD FROM df (options) RETURN *)`, with COPY's
/// own options (`FROM`, `TO`, `IGNORE_ERRORS`) kept on the COPY.
fn copy_from_parameter(
    table: String,
    parameter: String,
    options: Vec<(String, Expr)>,
    span: Span,
) -> Statement {
    let (copy_options, options): (Vec<_>, Vec<_>) = options.into_iter().partition(|(name, _)| {
        COPY_OPTIONS
            .iter()
            .any(|option| name.eq_ignore_ascii_case(option))
    });
    let load = Clause::LoadFrom(LoadFromClause {
        files: Vec::new(),
        parameter: Some(parameter),
        headers: Vec::new(),
        options,
        where_clause: None,
        span,
    });
    let all = Clause::Return(ProjectionClause {
        distinct: false,
        star: true,
        items: Vec::new(),
        order_by: Vec::new(),
        skip: None,
        limit: None,
        where_clause: None,
        span,
    });
    Statement::CopyFromQuery {
        table,
        query: Box::new(Query {
            parts: vec![SingleQuery {
                clauses: vec![load, all],
            }],
            union_all: Vec::new(),
        }),
        options: copy_options,
        span,
    }
}
