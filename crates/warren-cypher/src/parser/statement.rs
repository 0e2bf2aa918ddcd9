//! Statements: the dispatch on the first keyword, queries with UNION, EXPLAIN/PROFILE,
//! transactions and `CALL name = value` settings.

use warren_common::Result;

use super::Parser;
use crate::ast::{Clause, Query, SingleQuery, Statement, TransactionCommand};
use crate::token::TokenKind;

impl Parser<'_> {
    pub(super) fn statement(&mut self) -> Result<Statement> {
        self.nested(|parser| parser.statement_at_depth())
    }

    fn statement_at_depth(&mut self) -> Result<Statement> {
        if self.eat_keyword("EXPLAIN") {
            return Ok(Statement::Explain(Box::new(self.statement()?)));
        }
        if self.eat_keyword("PROFILE") {
            return Ok(Statement::Profile(Box::new(self.statement()?)));
        }
        if self.at_create_table() {
            return self.create_table();
        }
        if self.at_keyword("DROP") {
            return self.drop_table();
        }
        if self.at_keyword("ALTER") {
            return self.alter_table();
        }
        if self.at_keyword("COPY") {
            return self.copy();
        }
        if self.at_call_setting() {
            return self.call_setting();
        }
        if let Some(command) = self.transaction()? {
            return Ok(Statement::Transaction(command));
        }
        Ok(Statement::Query(self.query()?))
    }

    /// `single [UNION [ALL] single]...`
    pub(super) fn query(&mut self) -> Result<Query> {
        let mut parts = vec![self.single_query()?];
        let mut union_all = Vec::new();
        while self.eat_keyword("UNION") {
            union_all.push(self.eat_keyword("ALL"));
            parts.push(self.single_query()?);
        }
        Ok(Query { parts, union_all })
    }

    /// Clauses up to and including RETURN, or up to the first token that starts none.
    fn single_query(&mut self) -> Result<SingleQuery> {
        let mut clauses = Vec::new();
        while let Some(clause) = self.clause()? {
            let is_return = matches!(clause, Clause::Return(_));
            clauses.push(clause);
            if is_return {
                break;
            }
        }
        if clauses.is_empty() {
            return Err(self.error("a statement such as MATCH, RETURN or CREATE"));
        }
        if !self.at_query_end() {
            return Err(self.error("a clause or the end of the statement"));
        }
        Ok(SingleQuery { clauses })
    }

    /// Whether the next token may follow a single query: the end, `;`, `)` or UNION.
    fn at_query_end(&self) -> bool {
        matches!(
            self.kind(),
            TokenKind::End | TokenKind::Semicolon | TokenKind::RightParen
        ) || self.at_keyword("UNION")
    }

    /// `CALL name = value` or `CALL name TO value`, as opposed to `CALL f(...)`.
    fn at_call_setting(&self) -> bool {
        self.at_keyword("CALL")
            && self.peek_nth(1).name().is_some()
            && (self.kind_nth(2) == &TokenKind::Equals || self.at_keyword_nth(2, "TO"))
    }

    fn call_setting(&mut self) -> Result<Statement> {
        let start = self.position;
        self.advance();
        let name = self.name("a setting name")?;
        self.advance();
        let value = self.expression()?;
        Ok(Statement::CallSetting {
            name,
            value,
            span: self.span_from(start),
        })
    }

    /// `BEGIN TRANSACTION [READ ONLY | READ WRITE]`, `COMMIT`, `ROLLBACK`; `None` otherwise.
    fn transaction(&mut self) -> Result<Option<TransactionCommand>> {
        if self.eat_keyword("COMMIT") {
            return Ok(Some(TransactionCommand::Commit));
        }
        if self.eat_keyword("ROLLBACK") {
            return Ok(Some(TransactionCommand::Rollback));
        }
        if self.eat_keyword("CHECKPOINT") {
            return Ok(Some(TransactionCommand::Checkpoint));
        }
        if !self.eat_keyword("BEGIN") {
            return Ok(None);
        }
        self.expect_keyword("TRANSACTION", "TRANSACTION after BEGIN")?;
        let mut read_only = false;
        if self.eat_keyword("READ") {
            read_only = self.eat_keyword("ONLY");
            if !read_only {
                self.expect_keyword("WRITE", "ONLY or WRITE after READ")?;
            }
        }
        Ok(Some(TransactionCommand::Begin { read_only }))
    }
}
